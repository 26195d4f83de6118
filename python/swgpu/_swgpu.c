/*
 * _swgpu.c - the CPython extension under the swgpu package: libswgpu's
 * sequence sets, databases, PSSMs and search results (plain and iterated) as
 * Python types, its compute calls as functions.  The pure-Python layer
 * (swgpu/__init__.py) builds the public API on it; nothing here is meant
 * to be called directly.  This file holds the exceptions, the logging,
 * the conversions and the module's init; _swgpu.h lists the others.
 *
 *  - Every compute call (reading, opening, aligning, searching, scanning,
 *    formatting, writing) runs with the GIL released.  align_long's progress
 *    callback takes the GIL back for the Python call.
 *  - A failed library call raises the exception class of its status
 *    (Error and its subclasses, created here), with swgpu_last_error() as
 *    the message and the status in the exception's `status` attribute.
 *  - The library's log messages may come from its worker threads, which hold
 *    no GIL: the logger queues them under a mutex, and after each call they
 *    are handed to a Python hook (the package's `logging` logger).
 *  - Options structs are filled from keyword dictionaries through tables of
 *    (name, kind, struct offset, doc): a new option field is one table row.
 */
#include "_swgpu.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ exceptions */

static PyObject *Error; /* swgpu.Error, the base of all */

static struct {
    int status;
    const char *name;
    PyObject **base; /* the built-in exception it also derives from */
    const char *doc;
    PyObject *cls;
} errors[] = {
    {SWGPU_ENOMEM, "OutOfMemoryError", &PyExc_MemoryError, "out of memory", NULL},
    {SWGPU_EIO, "FileError", &PyExc_OSError,
     "a file cannot be opened, read or written", NULL},
    {SWGPU_EFORMAT, "FormatError", &PyExc_ValueError,
     "malformed input: not FASTA/FASTQ, truncated gzip, bad record", NULL},
    {SWGPU_EEMPTY, "EmptyInputError", &PyExc_ValueError,
     "the input holds no (non-empty) sequence", NULL},
    {SWGPU_EINVAL, "InvalidArgumentError", &PyExc_ValueError,
     "invalid argument or option value", NULL},
    {SWGPU_EMATRIX, "MatrixError", &PyExc_ValueError, "invalid or unknown scoring matrix", NULL},
    {SWGPU_EALPHABET, "AlphabetError", &PyExc_ValueError,
     "the alphabets of the inputs do not agree", NULL},
    {SWGPU_ENODEV, "NoDeviceError", &PyExc_RuntimeError,
     "the requested backend or device is not available", NULL},
    {SWGPU_EDEVICE, "DeviceError", &PyExc_RuntimeError, "a GPU runtime call failed", NULL},
    {SWGPU_EDB, "DatabaseError", &PyExc_ValueError,
     "a database file is invalid, truncated or foreign", NULL},
    {SWGPU_EBUDGET, "BudgetError", &PyExc_ValueError,
     "the memory budget cannot hold the minimum needed", NULL},
    {SWGPU_ERANGE, "RangeError", &PyExc_ValueError,
     "a value exceeds what can be represented", NULL},
    {SWGPU_ENOTFOUND, "NotFoundError", &PyExc_LookupError, "a looked-up item does not exist",
     NULL},
};
#define N_ERRORS (sizeof errors / sizeof errors[0])

/* Raise the exception of status rc with message msg; returns NULL. */
PyObject *swpy_raise_msg(int rc, const char *msg)
{
    PyObject *cls = Error;
    for (size_t i = 0; i < N_ERRORS; i++)
        if (errors[i].status == rc)
            cls = errors[i].cls;
    if (!msg || !*msg)
        msg = swgpu_strerror(rc);
    PyObject *swpy_text = PyUnicode_DecodeUTF8(msg, (Py_ssize_t)strlen(msg), "replace");
    PyObject *exc = swpy_text ? PyObject_CallFunctionObjArgs(cls, swpy_text, NULL) : NULL;
    Py_XDECREF(swpy_text);
    if (!exc)
        return NULL;
    PyObject *code = PyLong_FromLong(rc);
    if (code && PyObject_SetAttrString(exc, "status", code) == 0)
        PyErr_SetObject(cls, exc);
    Py_XDECREF(code);
    Py_DECREF(exc);
    return NULL;
}

PyObject *swpy_raise_fmt(int rc, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return swpy_raise_msg(rc, buf);
}

/* ---------------------------------------------------------------- logging */

typedef struct logmsg {
    struct logmsg *next;
    int level;
    char swpy_text[];
} logmsg_t;

enum { LOG_QUEUE_MAX = 10000 };

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static logmsg_t *log_head, **log_tail = &log_head;
static size_t log_count, log_dropped;
static atomic_int log_max = SWGPU_LOG_WARN; /* the most detailed level wanted */
static PyObject *log_level_hook;            /* () -> the level the Python logger wants */
static PyObject *log_emit_hook;             /* (level, message) */

/* The library's logger: any thread, no GIL. */
static void on_log(swgpu_log_level_t level, const char *msg, void *user)
{
    (void)user;
    if ((int)level > atomic_load(&log_max))
        return;
    size_t len = strlen(msg);
    logmsg_t *m = malloc(sizeof *m + len + 1);
    pthread_mutex_lock(&log_lock);
    if (!m || log_count >= LOG_QUEUE_MAX) {
        log_dropped++;
        free(m);
    } else {
        m->next = NULL;
        m->level = (int)level;
        memcpy(m->swpy_text, msg, len + 1);
        *log_tail = m;
        log_tail = &m->next;
        log_count++;
    }
    pthread_mutex_unlock(&log_lock);
}

/* Before a call (GIL held): ask the Python side which levels it wants. */
void swpy_log_begin(void)
{
    if (!log_level_hook)
        return;
    PyObject *r = PyObject_CallObject(log_level_hook, NULL);
    long v = r ? PyLong_AsLong(r) : -1;
    Py_XDECREF(r);
    if (v < 0 || PyErr_Occurred()) {
        PyErr_Clear();
        return;
    }
    atomic_store(&log_max, (int)v);
}

/* After a call (GIL held): hand the queued messages to the Python hook,
 * keeping any exception being raised. */
static void log_flush(void)
{
    pthread_mutex_lock(&log_lock);
    logmsg_t *m = log_head;
    size_t dropped = log_dropped;
    log_head = NULL;
    log_tail = &log_head;
    log_count = 0;
    log_dropped = 0;
    pthread_mutex_unlock(&log_lock);
    if (!m && !dropped)
        return;
    PyObject *et, *ev, *tb;
    PyErr_Fetch(&et, &ev, &tb);
    while (m) {
        logmsg_t *next = m->next;
        if (log_emit_hook) {
            PyObject *r = PyObject_CallFunction(
                log_emit_hook, "iN", m->level,
                PyUnicode_DecodeUTF8(m->swpy_text, (Py_ssize_t)strlen(m->swpy_text), "replace"));
            if (!r)
                PyErr_WriteUnraisable(log_emit_hook);
            Py_XDECREF(r);
        }
        free(m);
        m = next;
    }
    if (dropped && log_emit_hook) {
        char buf[128];
        snprintf(buf, sizeof buf, "%zu more log messages were dropped (queue full)", dropped);
        PyObject *r = PyObject_CallFunction(log_emit_hook, "is", (int)SWGPU_LOG_WARN, buf);
        if (!r)
            PyErr_WriteUnraisable(log_emit_hook);
        Py_XDECREF(r);
    }
    PyErr_Restore(et, ev, tb);
}

/* End of a library call made with the GIL released (and now held again):
 * the error message first (thread-local, before any Python code runs),
 * then the log, then the exception if rc < 0.  Returns 0 or -1. */
int swpy_finish(int rc)
{
    char msg[1024];
    if (rc < 0)
        snprintf(msg, sizeof msg, "%s", swgpu_last_error());
    log_flush();
    if (rc < 0) {
        swpy_raise_msg(rc, msg);
        return -1;
    }
    return 0;
}

static PyObject *set_log_hooks(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *level, *emit;
    if (!PyArg_ParseTuple(args, "OO:_set_log_hooks", &level, &emit))
        return NULL;
    if (!PyCallable_Check(level) || !PyCallable_Check(emit))
        return PyErr_Format(PyExc_TypeError, "_set_log_hooks: two callables expected");
    Py_INCREF(level);
    Py_INCREF(emit);
    Py_XSETREF(log_level_hook, level);
    Py_XSETREF(log_emit_hook, emit);
    Py_RETURN_NONE;
}

/* ------------------------------------------------------------ conversions */

/* A path argument (str, bytes or os.PathLike) as a new bytes object. */
PyObject *swpy_path_bytes(PyObject *o)
{
    PyObject *b = NULL;
    if (!PyUnicode_FSConverter(o, &b))
        return NULL;
    return b;
}

/* Residue letters from str or bytes: *p points into keep (a new reference
 * the caller releases).  Only ASCII is accepted. */
int swpy_letters(PyObject *o, const char *what, PyObject **keep, const char **p, Py_ssize_t *n)
{
    if (PyUnicode_Check(o)) {
        if (!PyUnicode_IS_ASCII(o)) {
            Py_ssize_t len = PyUnicode_GET_LENGTH(o);
            for (Py_ssize_t i = 0; i < len; i++) {
                Py_UCS4 c = PyUnicode_READ_CHAR(o, i);
                if (c >= 0x80) {
                    swpy_raise_fmt(SWGPU_EFORMAT,
                                   "%s: character U+%04X at position %zd is not a residue letter",
                                   what, (unsigned)c, i + 1);
                    return -1;
                }
            }
        }
        *p = PyUnicode_AsUTF8AndSize(o, n);
        if (!*p)
            return -1;
        Py_INCREF(o);
        *keep = o;
        return 0;
    }
    if (PyBytes_Check(o)) {
        *p = PyBytes_AS_STRING(o);
        *n = PyBytes_GET_SIZE(o);
        for (Py_ssize_t i = 0; i < *n; i++)
            if ((unsigned char)(*p)[i] >= 0x80) {
                swpy_raise_fmt(SWGPU_EFORMAT,
                               "%s: byte 0x%02x at position %zd is not a residue letter", what,
                               (unsigned char)(*p)[i], i + 1);
                return -1;
            }
        Py_INCREF(o);
        *keep = o;
        return 0;
    }
    PyErr_Format(PyExc_TypeError, "%s: expected str or bytes, got %s", what, Py_TYPE(o)->tp_name);
    return -1;
}

int swpy_check_alphabet(int a)
{
    if (a != SWGPU_AUTO && a != SWGPU_PROTEIN && a != SWGPU_DNA) {
        swpy_raise_fmt(SWGPU_EINVAL, "alphabet %d: expected 0 (auto), 1 (protein) or 2 (dna)", a);
        return -1;
    }
    return 0;
}

/* A C string from the library (ids, descriptions) as a str; bytes that are
 * not UTF-8 are kept as surrogate escapes, as Python does for file names. */
PyObject *swpy_text(const char *s)
{
    return PyUnicode_DecodeUTF8(s ? s : "", (Py_ssize_t)strlen(s ? s : ""), "surrogateescape");
}

/* Decoded residues as a str. */
PyObject *swpy_decode_seq(swgpu_alphabet_t a, const uint8_t *res, size_t len)
{
    PyObject *s = PyUnicode_New((Py_ssize_t)len, 127);
    if (!s)
        return NULL;
    Py_UCS1 *d = PyUnicode_1BYTE_DATA(s);
    for (size_t i = 0; i < len; i++)
        d[i] = (Py_UCS1)swgpu_decode(a, res[i]);
    return s;
}

PyObject *swpy_read_info(const swgpu_read_info_t *i)
{
    return Py_BuildValue("{s:K,s:K,s:K,s:K,s:K}", "records", (unsigned long long)i->n_records,
                         "empty", (unsigned long long)i->n_empty, "unknown",
                         (unsigned long long)i->n_unknown, "residues",
                         (unsigned long long)i->n_residues, "max_length",
                         (unsigned long long)i->max_len);
}

/* ---------------------------------------------------------------- module */

/* PyModule_AddObject with a new reference of its own (as 3.10's
 * PyModule_AddObjectRef). */
static int add_ref(PyObject *mod, const char *name, PyObject *o)
{
    Py_INCREF(o);
    if (PyModule_AddObject(mod, name, o) < 0) {
        Py_DECREF(o);
        return -1;
    }
    return 0;
}

static PyMethodDef module_methods[] = {
    {"search", py_search, METH_VARARGS,
     "search(queries, db, matrix, match, mismatch, options) -> SearchResult"},
    {"search_pssm", py_search_pssm, METH_VARARGS,
     "search_pssm(pssms, db, matrix, options, progress=None) -> SearchResult"},
    {"search_iterate", py_search_iterate, METH_VARARGS,
     "search_iterate(queries, pssms, db, matrix, match, mismatch, options, psi_options, "
     "progress=None) -> IterateResult"},
    {"stream_parts", py_stream_parts, METH_VARARGS,
     "stream_parts(path, max_memory, options) -> (parts, file bytes): swgpu_stream_parts "
     "(SWGPU_STREAM_PARTS=N forces N parts of a makedb file)"},
    {"search_stream", py_search_stream, METH_VARARGS,
     "search_stream(queries, index, path, parts, matrix, match, mismatch, options, "
     "progress=None) -> (SearchResult, Database of the hits)"},
    {"scan_scores", py_scan_scores, METH_VARARGS,
     "scan_scores(queries, db, matrix, match, mismatch, options) -> bytearray of int32"},
    {"align", py_align, METH_VARARGS,
     "align(query, target, alphabet, matrix, match, mismatch, gap_open, gap_extend, "
     "score_only) -> (alphabet, qlen, tlen, aln)"},
    {"align_long", py_align_long, METH_VARARGS,
     "align_long(query, target, alphabet, matrix, match, mismatch, strand, options, progress) "
     "-> (alphabet, qlen, tlen, [(minus, aln, stats), ...])"},
    {"long_format", py_long_format, METH_VARARGS,
     "long_format(fmt, query, target, alphabet, matrix, match, mismatch, minus, aln, other, "
     "score_only, query_id, target_id, command_line) -> str"},
    {"detect", py_detect, METH_O, "detect(letters) -> 1 (protein) or 2 (dna)"},
    {"taxdb_names", py_taxdb_names, METH_O,
     "taxdb_names(taxids) -> {taxid: (sciname, comname, blastname, kingdom)} from NCBI's taxdb "
     "in the current directory or $BLASTDB ({} without one)"},
    {"_set_log_hooks", set_log_hooks, METH_VARARGS,
     "_set_log_hooks(level, emit): level() -> the most detailed swgpu level wanted (0-4), "
     "emit(level, message)"},
    {NULL, NULL, 0, NULL},
};

/* PyModule_AddObject of a new reference o (NULL: the error that made it
 * fail), which the module takes or which is released. */
static int add_new(PyObject *mod, const char *name, PyObject *o)
{
    if (!o)
        return -1;
    if (PyModule_AddObject(mod, name, o) < 0) {
        Py_DECREF(o);
        return -1;
    }
    return 0;
}

static int module_exec(PyObject *mod)
{
    if (PyType_Ready(&SeqSetType) < 0 || PyType_Ready(&DatabaseType) < 0 ||
        PyType_Ready(&PssmType) < 0 || PyType_Ready(&SearchResultType) < 0 ||
        PyType_Ready(&IterateResultType) < 0)
        return -1;
    Error = PyErr_NewExceptionWithDoc(
        "swgpu.Error",
        "A libswgpu call failed.  The message is the library's (swgpu_last_error()); "
        "`status` is the negative swgpu_status_t.",
        NULL, NULL);
    if (!Error || add_ref(mod, "Error", Error) < 0)
        return -1;
    for (size_t i = 0; i < N_ERRORS; i++) {
        char name[64];
        snprintf(name, sizeof name, "swgpu.%s", errors[i].name);
        PyObject *bases = PyTuple_Pack(2, Error, *errors[i].base);
        if (!bases)
            return -1;
        errors[i].cls = PyErr_NewExceptionWithDoc(name, errors[i].doc, bases, NULL);
        Py_DECREF(bases);
        if (!errors[i].cls || add_ref(mod, errors[i].name, errors[i].cls) < 0)
            return -1;
    }
    PyObject *codes = PyDict_New();
    for (size_t i = 0; codes && i < N_ERRORS; i++) {
        PyObject *k = PyLong_FromLong(errors[i].status);
        if (!k || PyDict_SetItem(codes, k, errors[i].cls) < 0) {
            Py_XDECREF(k);
            Py_CLEAR(codes);
            break;
        }
        Py_DECREF(k);
    }
    if (add_new(mod, "errors_by_status", codes) < 0)
        return -1;
    if (add_ref(mod, "SeqSet", (PyObject *)&SeqSetType) < 0 ||
        add_ref(mod, "Database", (PyObject *)&DatabaseType) < 0 ||
        add_ref(mod, "Pssm", (PyObject *)&PssmType) < 0 ||
        add_ref(mod, "SearchResult", (PyObject *)&SearchResultType) < 0 ||
        add_ref(mod, "IterateResult", (PyObject *)&IterateResultType) < 0 ||
        PyModule_AddStringConstant(mod, "version", SWGPU_VERSION) < 0 ||
#if SWGPU_HAVE_CUDA
        PyModule_AddIntConstant(mod, "has_cuda", 1) < 0 ||
#else
        PyModule_AddIntConstant(mod, "has_cuda", 0) < 0 ||
#endif
        add_new(mod, "search_options",
                swpy_describe(swpy_search_fields, swpy_n_search_fields)) < 0 ||
        add_new(mod, "psi_options",
                swpy_describe(swpy_psi_fields, swpy_n_psi_fields)) < 0 ||
        add_new(mod, "long_options",
                swpy_describe(swpy_long_fields, swpy_n_long_fields)) < 0)
        return -1;
    swgpu_set_logger(on_log, NULL, SWGPU_LOG_DEBUG);
    return 0;
}

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "swgpu._swgpu",
    .m_doc = "libswgpu's C API for the swgpu package (use the package, not this module).",
    .m_size = -1,
    .m_methods = module_methods,
};

PyMODINIT_FUNC PyInit__swgpu(void)
{
    PyObject *mod = PyModule_Create(&module_def);
    if (mod && module_exec(mod) < 0)
        Py_CLEAR(mod);
    return mod;
}
