/*
 * _swgpu.c - the CPython extension under the swgpu package: libswgpu's
 * sequence sets, databases, PSSMs and search results (plain and iterated) as
 * Python types, its compute calls as functions.  The pure-Python layer (swgpu/__init__.py) builds the
 * public API on it; nothing here is meant to be called directly.
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
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "swgpu.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
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
static PyObject *raise_msg(int rc, const char *msg)
{
    PyObject *cls = Error;
    for (size_t i = 0; i < N_ERRORS; i++)
        if (errors[i].status == rc)
            cls = errors[i].cls;
    if (!msg || !*msg)
        msg = swgpu_strerror(rc);
    PyObject *text = PyUnicode_DecodeUTF8(msg, (Py_ssize_t)strlen(msg), "replace");
    PyObject *exc = text ? PyObject_CallFunctionObjArgs(cls, text, NULL) : NULL;
    Py_XDECREF(text);
    if (!exc)
        return NULL;
    PyObject *code = PyLong_FromLong(rc);
    if (code && PyObject_SetAttrString(exc, "status", code) == 0)
        PyErr_SetObject(cls, exc);
    Py_XDECREF(code);
    Py_DECREF(exc);
    return NULL;
}

static PyObject *raise_fmt(int rc, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return raise_msg(rc, buf);
}

/* ---------------------------------------------------------------- logging */

typedef struct logmsg {
    struct logmsg *next;
    int level;
    char text[];
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
        memcpy(m->text, msg, len + 1);
        *log_tail = m;
        log_tail = &m->next;
        log_count++;
    }
    pthread_mutex_unlock(&log_lock);
}

/* Before a call (GIL held): ask the Python side which levels it wants. */
static void log_begin(void)
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
                PyUnicode_DecodeUTF8(m->text, (Py_ssize_t)strlen(m->text), "replace"));
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
static int finish(int rc)
{
    char msg[1024];
    if (rc < 0)
        snprintf(msg, sizeof msg, "%s", swgpu_last_error());
    log_flush();
    if (rc < 0) {
        raise_msg(rc, msg);
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
static PyObject *path_bytes(PyObject *o)
{
    PyObject *b = NULL;
    if (!PyUnicode_FSConverter(o, &b))
        return NULL;
    return b;
}

/* Residue letters from str or bytes: *p points into keep (a new reference
 * the caller releases).  Only ASCII is accepted. */
static int letters(PyObject *o, const char *what, PyObject **keep, const char **p, Py_ssize_t *n)
{
    if (PyUnicode_Check(o)) {
        if (!PyUnicode_IS_ASCII(o)) {
            Py_ssize_t len = PyUnicode_GET_LENGTH(o);
            for (Py_ssize_t i = 0; i < len; i++) {
                Py_UCS4 c = PyUnicode_READ_CHAR(o, i);
                if (c >= 0x80) {
                    raise_fmt(SWGPU_EFORMAT,
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
                raise_fmt(SWGPU_EFORMAT, "%s: byte 0x%02x at position %zd is not a residue letter",
                          what, (unsigned char)(*p)[i], i + 1);
                return -1;
            }
        Py_INCREF(o);
        *keep = o;
        return 0;
    }
    PyErr_Format(PyExc_TypeError, "%s: expected str or bytes, got %s", what, Py_TYPE(o)->tp_name);
    return -1;
}

static int check_alphabet(int a)
{
    if (a != SWGPU_AUTO && a != SWGPU_PROTEIN && a != SWGPU_DNA) {
        raise_fmt(SWGPU_EINVAL, "alphabet %d: expected 0 (auto), 1 (protein) or 2 (dna)", a);
        return -1;
    }
    return 0;
}

/* A C string from the library (ids, descriptions) as a str; bytes that are
 * not UTF-8 are kept as surrogate escapes, as Python does for file names. */
static PyObject *text(const char *s)
{
    return PyUnicode_DecodeUTF8(s ? s : "", (Py_ssize_t)strlen(s ? s : ""), "surrogateescape");
}

/* Decoded residues as a str. */
static PyObject *decode_seq(swgpu_alphabet_t a, const uint8_t *res, size_t len)
{
    PyObject *s = PyUnicode_New((Py_ssize_t)len, 127);
    if (!s)
        return NULL;
    Py_UCS1 *d = PyUnicode_1BYTE_DATA(s);
    for (size_t i = 0; i < len; i++)
        d[i] = (Py_UCS1)swgpu_decode(a, res[i]);
    return s;
}

static PyObject *read_info(const swgpu_read_info_t *i)
{
    return Py_BuildValue("{s:K,s:K,s:K,s:K,s:K}", "records", (unsigned long long)i->n_records,
                         "empty", (unsigned long long)i->n_empty, "unknown",
                         (unsigned long long)i->n_unknown, "residues",
                         (unsigned long long)i->n_residues, "max_length",
                         (unsigned long long)i->max_len);
}

/* ---------------------------------------------------------- option tables */

typedef enum { OPT_INT, OPT_BOOL, OPT_DOUBLE, OPT_SIZE, OPT_ENUM, OPT_STRING } opt_kind_t;

/* One keyword of an options struct.  OPT_ENUM: names[v] is the keyword value
 * for the field value v (an int-sized enum); OPT_STRING keeps a pointer into
 * the Python str, which stays referenced for the call. */
typedef struct {
    const char *name;
    opt_kind_t kind;
    size_t offset;
    const char *const *names;
    const char *doc;
} opt_field_t;

static const char *const backend_names[] = {"auto", "ref", "cpu", "cuda", NULL};
_Static_assert(sizeof(swgpu_backend_t) == sizeof(int), "enums are int-sized");
_Static_assert(SWGPU_BACKEND_AUTO == 0 && SWGPU_BACKEND_REF == 1 && SWGPU_BACKEND_CPU == 2 &&
               SWGPU_BACKEND_CUDA == 3, "backend_names follows swgpu_backend_t");

static const char *const evalue_model_names[] = {"spouge", "old-fsc", NULL};
static const char *const strand_names[] = {"both", "plus", "minus", NULL};
_Static_assert(sizeof(swgpu_strand_t) == sizeof(int), "enums are int-sized");
_Static_assert(SWGPU_STRAND_BOTH == 0 && SWGPU_STRAND_PLUS == 1 && SWGPU_STRAND_MINUS == 2,
               "strand_names follows swgpu_strand_t");
_Static_assert(sizeof(swgpu_evalue_model_t) == sizeof(int), "enums are int-sized");
_Static_assert(SWGPU_EVALUE_SPOUGE == 0 && SWGPU_EVALUE_OLD_FSC == 1,
               "evalue_model_names follows swgpu_evalue_model_t");

#define SOPT(name, kind, field, names, doc) {name, kind, offsetof(swgpu_opts_t, field), names, doc}
/* swgpu_opts_t: db.search() and db.scores() (the command line's search options) */
static const opt_field_t search_fields[] = {
    SOPT("gap_open", OPT_INT, gap_open, NULL,
         "gap open penalty; a gap of length k costs gap_open + k*gap_extend (11 protein, 5 DNA)"),
    SOPT("gap_extend", OPT_INT, gap_extend, NULL, "gap extension penalty (1 protein, 2 DNA)"),
    SOPT("top", OPT_INT, top_n, NULL, "hits reported per query (10)"),
    SOPT("evalue", OPT_DOUBLE, evalue, NULL, "report hits with E-value <= this (10)"),
    SOPT("threads", OPT_INT, threads, NULL,
         "CPU threads (0 = all cores; more than the cores is clamped to them, with a warning)"),
    SOPT("backend", OPT_ENUM, backend, backend_names,
         "'auto' (cuda if a GPU is present, else cpu), 'ref', 'cpu' or 'cuda'"),
    SOPT("kernel", OPT_STRING, kernel, NULL, "GPU kernel name (None: the backend's choice)"),
    SOPT("gpus", OPT_INT, gpus, NULL, "GPUs to use (0 = all visible)"),
    SOPT("max_gpu_memory", OPT_SIZE, max_gpu_memory, NULL,
         "bytes (or a size such as '2G') each GPU may use (0: 7/8 of its free memory); "
         "a larger database is streamed in batches"),
    SOPT("no_align", OPT_BOOL, no_align, NULL,
         "scores and E-values only: hits have no alignment (False)"),
    SOPT("no_self", OPT_BOOL, no_self, NULL,
         "do not report a query's own sequence (same id, same residues) as its hit (False)"),
    SOPT("evalue_model", OPT_ENUM, evalue_model, evalue_model_names,
         "'spouge' (BLAST+'s default: Spouge's finite-size correction) or 'old-fsc' (BLAST+ "
         "with OLD_FSC=1: the length adjustment)"),
    SOPT("strand", OPT_ENUM, strand, strand_names,
         "DNA: 'both' (each subject's better strand), 'plus' or 'minus' (the subjects' "
         "reverse complements)"),
};

#define POPT(name, kind, field, doc) {name, kind, offsetof(swgpu_psi_opts_t, field), NULL, doc}
/* swgpu_psi_opts_t: db.search()'s iterated search (the command line's --iterations...) */
static const opt_field_t psi_fields[] = {
    POPT("iterations", OPT_INT, iterations,
         "rounds at most (>= 1); after each, every query's hits with E-value <= "
         "inclusion_evalue among its best 500 make the PSSM the next round searches with"),
    POPT("inclusion_evalue", OPT_DOUBLE, inclusion_evalue,
         "E-value for inclusion in the PSSM (0.002, psiblast's)"),
    POPT("final_pssm", OPT_BOOL, final_pssm,
         "make each query's PSSM of its last round's hits (QueryResult.pssm) (True)"),
};

#define LOPT(name, kind, field, names, doc) \
    {name, kind, offsetof(swgpu_long_opts_t, field), names, doc}
/* swgpu_long_opts_t: align_long() (the command line's align options) */
static const opt_field_t long_fields[] = {
    LOPT("gap_open", OPT_INT, gap_open, NULL,
         "gap open penalty; a gap of length k costs gap_open + k*gap_extend (11 protein, 5 DNA)"),
    LOPT("gap_extend", OPT_INT, gap_extend, NULL, "gap extension penalty (1 protein, 2 DNA)"),
    LOPT("max_host_memory", OPT_SIZE, max_host_memory, NULL,
         "bytes (or a size such as '512M') the alignment may hold on the host (4G)"),
    LOPT("max_device_memory", OPT_SIZE, max_device_memory, NULL,
         "bytes (or a size) it may hold on the GPU (4G)"),
    LOPT("score_only", OPT_BOOL, score_only, NULL,
         "score and coordinates only: no traceback, no CIGAR (False)"),
    LOPT("backend", OPT_ENUM, backend, backend_names,
         "'auto' (cuda if a GPU is present, else cpu), 'cpu', 'cuda' or 'ref' (the scalar "
         "reference, for checks)"),
    LOPT("threads", OPT_INT, threads, NULL,
         "CPU threads (0 = all cores; more than the cores is clamped to them, with a warning)"),
    LOPT("prune", OPT_BOOL, prune, NULL,
         "skip blocks that provably cannot reach the best score; exact (True)"),
    LOPT("checkpoint", OPT_STRING, checkpoint, NULL,
         "a file where the alignment saves where it stands (written atomically); a call "
         "with the same file resumes from it with an identical result; removed when done "
         "(None)"),
    LOPT("checkpoint_every", OPT_DOUBLE, checkpoint_every, NULL,
         "seconds between checkpoints (600)"),
    LOPT("gpus", OPT_INT, gpus, NULL,
         "cuda: GPUs each pass is split across by target columns, identical result "
         "(0 = all visible, the default)"),
    LOPT("gpu_parts", OPT_INT, gpu_parts, NULL,
         "cuda: column slices a pass over few regions is cut into, dealt round the GPUs "
         "(0 = automatic: none on one GPU, up to 8 per GPU on several)"),
};

/* "123", "512K", "1.5G", "4GiB" -> bytes (binary multiples), as the command
 * line's --max-memory reads them. */
static int parse_size(const char *s, uint64_t *out)
{
    char *end;
    double mul = 1;
    errno = 0;
    double v = strtod(s, &end);
    if (end != s && *end) {
        switch (*end) {
        case 'k': case 'K': mul = 1024.0; break;
        case 'm': case 'M': mul = 1024.0 * 1024; break;
        case 'g': case 'G': mul = 1024.0 * 1024 * 1024; break;
        case 't': case 'T': mul = 1024.0 * 1024 * 1024 * 1024; break;
        default: mul = 0; break;
        }
        if (mul > 0 && (end[1] == 0 || ((end[1] == 'b' || end[1] == 'B') && end[2] == 0) ||
                        (end[1] == 'i' && end[2] == 'B' && end[3] == 0)))
            end = (char *)"";
    }
    if (end == s || *end || errno || !isfinite(v) || v < 0 || v * mul > 1.8e19)
        return -1;
    *out = (uint64_t)(v * mul);
    return 0;
}

static int set_field(const opt_field_t *f, void *base, PyObject *v, PyObject *keep)
{
    char *p = (char *)base + f->offset;
    switch (f->kind) {
    case OPT_INT: {
        if (!PyLong_Check(v)) {
            PyErr_Format(PyExc_TypeError, "option %s: expected an int, got %s", f->name,
                         Py_TYPE(v)->tp_name);
            return -1;
        }
        int overflow = 0;
        long x = PyLong_AsLongAndOverflow(v, &overflow);
        if (overflow || x < INT_MIN || x > INT_MAX) {
            raise_fmt(SWGPU_EINVAL, "option %s: out of range", f->name);
            return -1;
        }
        *(int *)p = (int)x;
        return 0;
    }
    case OPT_BOOL: {
        int b = PyObject_IsTrue(v);
        if (b < 0)
            return -1;
        *(int *)p = b;
        return 0;
    }
    case OPT_DOUBLE: {
        if (!PyFloat_Check(v) && !PyLong_Check(v)) {
            PyErr_Format(PyExc_TypeError, "option %s: expected a number, got %s", f->name,
                         Py_TYPE(v)->tp_name);
            return -1;
        }
        double x = PyFloat_AsDouble(v);
        if (x == -1.0 && PyErr_Occurred())
            return -1;
        if (!isfinite(x)) {
            raise_fmt(SWGPU_EINVAL, "option %s: %g is not a finite number", f->name, x);
            return -1;
        }
        *(double *)p = x;
        return 0;
    }
    case OPT_SIZE: {
        uint64_t x = 0;
        if (PyLong_Check(v)) {
            int overflow = 0;
            long long y = PyLong_AsLongLongAndOverflow(v, &overflow);
            if (overflow || y < 0) {
                raise_fmt(SWGPU_EINVAL, "option %s: a size must be >= 0 and fit 63 bits",
                          f->name);
                return -1;
            }
            x = (uint64_t)y;
        } else if (PyUnicode_Check(v)) {
            const char *s = PyUnicode_AsUTF8(v);
            if (!s)
                return -1;
            if (parse_size(s, &x) < 0) {
                raise_fmt(SWGPU_EINVAL, "option %s: '%s' is not a size (examples: 512M, 4G)",
                          f->name, s);
                return -1;
            }
        } else {
            PyErr_Format(PyExc_TypeError,
                         "option %s: expected an int or a str such as '4G', got %s", f->name,
                         Py_TYPE(v)->tp_name);
            return -1;
        }
        *(uint64_t *)p = x;
        return 0;
    }
    case OPT_ENUM: {
        const char *s = PyUnicode_Check(v) ? PyUnicode_AsUTF8(v) : NULL;
        if (!s) {
            if (!PyErr_Occurred())
                PyErr_Format(PyExc_TypeError, "option %s: expected a str, got %s", f->name,
                             Py_TYPE(v)->tp_name);
            return -1;
        }
        char choices[256] = "";
        for (int i = 0; f->names[i]; i++) {
            if (!strcmp(s, f->names[i])) {
                *(int *)p = i;
                return 0;
            }
            size_t l = strlen(choices);
            snprintf(choices + l, sizeof choices - l, "%s'%s'", i ? ", " : "", f->names[i]);
        }
        raise_fmt(SWGPU_EINVAL, "option %s: '%s' is not one of %s", f->name, s, choices);
        return -1;
    }
    case OPT_STRING: {
        if (!PyUnicode_Check(v)) {
            PyErr_Format(PyExc_TypeError, "option %s: expected a str, got %s", f->name,
                         Py_TYPE(v)->tp_name);
            return -1;
        }
        const char *s = PyUnicode_AsUTF8(v);
        if (!s || PyList_Append(keep, v) < 0)
            return -1;
        *(const char **)p = s;
        return 0;
    }
    }
    return 0;
}

/* Fill the struct at base from dict opts (None values keep the default);
 * keep (a list) receives the objects that must outlive the call. */
static int fill_opts(const char *what, const opt_field_t *tab, size_t n, void *base,
                     PyObject *opts, PyObject *keep)
{
    if (!opts || opts == Py_None)
        return 0;
    if (!PyDict_Check(opts)) {
        PyErr_Format(PyExc_TypeError, "%s: options must be a dict", what);
        return -1;
    }
    PyObject *key, *val;
    Py_ssize_t pos = 0;
    while (PyDict_Next(opts, &pos, &key, &val)) {
        const char *k = PyUnicode_Check(key) ? PyUnicode_AsUTF8(key) : NULL;
        if (!k) {
            if (!PyErr_Occurred())
                PyErr_Format(PyExc_TypeError, "%s: option names are str", what);
            return -1;
        }
        size_t i;
        for (i = 0; i < n; i++)
            if (!strcmp(k, tab[i].name))
                break;
        if (i == n) {
            char names[1024] = "";
            for (size_t j = 0; j < n; j++) {
                size_t l = strlen(names);
                snprintf(names + l, sizeof names - l, "%s%s", j ? ", " : "", tab[j].name);
            }
            PyErr_Format(PyExc_TypeError,
                         "%s() got an unexpected keyword argument '%s' (options: %s)", what, k,
                         names);
            return -1;
        }
        if (val != Py_None && set_field(&tab[i], base, val, keep) < 0)
            return -1;
    }
    return 0;
}

/* The table as a tuple of (name, kind, doc) for the Python side's docs. */
static PyObject *describe(const opt_field_t *tab, size_t n)
{
    static const char *const kinds[] = {"int", "bool", "float", "size", "str", "str"};
    PyObject *t = PyTuple_New((Py_ssize_t)n);
    for (size_t i = 0; t && i < n; i++) {
        PyObject *row = Py_BuildValue("(sss)", tab[i].name, kinds[tab[i].kind], tab[i].doc);
        if (!row) {
            Py_DECREF(t);
            return NULL;
        }
        PyTuple_SET_ITEM(t, (Py_ssize_t)i, row);
    }
    return t;
}

/* An int argument that may be None (then *out keeps its default). */
static int int_arg(PyObject *v, const char *name, int *out)
{
    if (v == Py_None)
        return 0;
    if (!PyLong_Check(v)) {
        PyErr_Format(PyExc_TypeError, "%s: expected an int, got %s", name, Py_TYPE(v)->tp_name);
        return -1;
    }
    int overflow = 0;
    long x = PyLong_AsLongAndOverflow(v, &overflow);
    if (x == -1 && PyErr_Occurred())
        return -1;
    if (overflow || x < INT_MIN || x > INT_MAX) {
        raise_fmt(SWGPU_EINVAL, "%s: out of range", name);
        return -1;
    }
    *out = (int)x;
    return 0;
}

/* The scoring system of an alphabet: matrix (a name or file; protein), or
 * match and mismatch (DNA), each None for the default. */
static int make_matrix(swgpu_alphabet_t a, PyObject *matrix, PyObject *match, PyObject *mismatch,
                       swgpu_matrix_t **m)
{
    int rc;
    *m = NULL;
    if (a == SWGPU_DNA) {
        int ma = 2, mi = -3;
        if (matrix != Py_None) {
            raise_msg(SWGPU_EINVAL,
                      "matrix applies to protein only; DNA is scored with match and mismatch");
            return -1;
        }
        if (int_arg(match, "match", &ma) < 0 || int_arg(mismatch, "mismatch", &mi) < 0)
            return -1;
        rc = swgpu_matrix_dna(ma, mi, m);
    } else {
        if (match != Py_None || mismatch != Py_None) {
            raise_fmt(SWGPU_EINVAL, "%s applies to DNA only; protein is scored with matrix",
                      match != Py_None ? "match" : "mismatch");
            return -1;
        }
        if (matrix == Py_None) {
            rc = swgpu_matrix_builtin("BLOSUM62", m);
        } else {
            PyObject *b = path_bytes(matrix);
            if (!b)
                return -1;
            rc = swgpu_matrix_get(PyBytes_AS_STRING(b), m);
            Py_DECREF(b);
        }
    }
    if (rc < 0) {
        raise_msg(rc, swgpu_last_error());
        return -1;
    }
    return 0;
}

/* --------------------------------------------------------------- SeqSet */

typedef struct {
    PyObject_HEAD
    swgpu_seqset_t *set;
    swgpu_read_info_t info;
    int have_info;
} SeqSetObject;

static PyTypeObject SeqSetType;

static void seqset_dealloc(SeqSetObject *self)
{
    swgpu_seqset_destroy(self->set);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *seqset_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"alphabet", NULL};
    int a = SWGPU_AUTO;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|i:SeqSet", kwlist, &a) || check_alphabet(a) < 0)
        return NULL;
    SeqSetObject *self = (SeqSetObject *)type->tp_alloc(type, 0);
    if (!self)
        return NULL;
    int rc = swgpu_seqset_create((swgpu_alphabet_t)a, &self->set);
    if (rc < 0) {
        Py_DECREF(self);
        return raise_msg(rc, swgpu_last_error());
    }
    return (PyObject *)self;
}

static PyObject *seqset_read(PyObject *cls, PyObject *args)
{
    PyObject *path;
    int a = SWGPU_AUTO;
    if (!PyArg_ParseTuple(args, "O|i:read", &path, &a) || check_alphabet(a) < 0)
        return NULL;
    PyObject *b = path_bytes(path);
    if (!b)
        return NULL;
    SeqSetObject *self = (SeqSetObject *)SeqSetType.tp_alloc(&SeqSetType, 0);
    if (!self) {
        Py_DECREF(b);
        return NULL;
    }
    (void)cls;
    const char *p = PyBytes_AS_STRING(b);
    int rc;
    log_begin();
    Py_BEGIN_ALLOW_THREADS
    rc = swgpu_seqset_read(p, (swgpu_alphabet_t)a, &self->set, &self->info);
    Py_END_ALLOW_THREADS
    Py_DECREF(b);
    if (finish(rc) < 0) {
        Py_DECREF(self);
        return NULL;
    }
    self->have_info = 1;
    return (PyObject *)self;
}

static PyObject *seqset_add(SeqSetObject *self, PyObject *args)
{
    const char *id, *desc;
    PyObject *seq, *keep = NULL;
    const char *p;
    Py_ssize_t n;
    if (!PyArg_ParseTuple(args, "ssO:add", &id, &desc, &seq))
        return NULL;
    char what[128];
    snprintf(what, sizeof what, "sequence %.100s", *id ? id : "(no id)");
    if (letters(seq, what, &keep, &p, &n) < 0)
        return NULL;
    int rc = swgpu_seqset_add(self->set, id, desc, p, (size_t)n);
    Py_DECREF(keep);
    if (rc < 0)
        return raise_msg(rc, swgpu_last_error());
    Py_RETURN_NONE;
}

static Py_ssize_t seqset_len(SeqSetObject *self)
{
    return (Py_ssize_t)swgpu_seqset_size(self->set);
}

static int seqset_at(SeqSetObject *self, PyObject *args, swgpu_seq_t *s)
{
    Py_ssize_t i;
    if (!PyArg_ParseTuple(args, "n", &i))
        return -1;
    if (i < 0 || (size_t)i >= swgpu_seqset_size(self->set)) {
        PyErr_SetString(PyExc_IndexError, "sequence index out of range");
        return -1;
    }
    swgpu_seqset_get(self->set, (size_t)i, s);
    return 0;
}

static PyObject *seqset_get(SeqSetObject *self, PyObject *args)
{
    swgpu_seq_t s;
    if (seqset_at(self, args, &s) < 0)
        return NULL;
    PyObject *res = decode_seq(swgpu_seqset_alphabet(self->set), s.res, s.len);
    return res ? Py_BuildValue("(NNN)", text(s.id), text(s.desc), res) : NULL;
}

static PyObject *seqset_meta(SeqSetObject *self, PyObject *args)
{
    swgpu_seq_t s;
    if (seqset_at(self, args, &s) < 0)
        return NULL;
    return Py_BuildValue("(NNn)", text(s.id), text(s.desc), (Py_ssize_t)s.len);
}

static PyObject *seqset_alphabet(SeqSetObject *self, void *closure)
{
    (void)closure;
    return PyLong_FromLong(swgpu_seqset_alphabet(self->set));
}

static PyObject *seqset_residues(SeqSetObject *self, void *closure)
{
    (void)closure;
    return PyLong_FromUnsignedLongLong(swgpu_seqset_residues(self->set));
}

static PyObject *seqset_info(SeqSetObject *self, void *closure)
{
    (void)closure;
    if (!self->have_info)
        Py_RETURN_NONE;
    return read_info(&self->info);
}

static PyMethodDef seqset_methods[] = {
    {"read", (PyCFunction)seqset_read, METH_VARARGS | METH_STATIC,
     "read(path, alphabet=0) -> SeqSet: a FASTA/FASTQ file (plain or gzip) or a makedb file"},
    {"add", (PyCFunction)seqset_add, METH_VARARGS, "add(id, desc, letters)"},
    {"get", (PyCFunction)seqset_get, METH_VARARGS, "get(i) -> (id, desc, residues)"},
    {"meta", (PyCFunction)seqset_meta, METH_VARARGS, "meta(i) -> (id, desc, length)"},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef seqset_getset[] = {
    {"alphabet", (getter)seqset_alphabet, NULL, "1 protein, 2 dna (0 while empty and auto)", NULL},
    {"residues", (getter)seqset_residues, NULL, "residues in all", NULL},
    {"info", (getter)seqset_info, NULL, "what reading the file found (None if not read)", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PySequenceMethods seqset_seq = {.sq_length = (lenfunc)seqset_len};

static PyTypeObject SeqSetType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "swgpu._swgpu.SeqSet",
    .tp_basicsize = sizeof(SeqSetObject),
    .tp_dealloc = (destructor)seqset_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A set of sequences (swgpu_seqset_t).",
    .tp_new = seqset_new,
    .tp_methods = seqset_methods,
    .tp_getset = seqset_getset,
    .tp_as_sequence = &seqset_seq,
};

/* ------------------------------------------------------------- Database */

typedef struct {
    PyObject_HEAD
    swgpu_db_t *db;
    swgpu_read_info_t info;
    int have_info;
} DatabaseObject;

static PyTypeObject DatabaseType;

static void database_dealloc(DatabaseObject *self)
{
    swgpu_db_destroy(self->db);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *database_open(PyObject *cls, PyObject *args)
{
    PyObject *path;
    int a = SWGPU_AUTO;
    (void)cls;
    if (!PyArg_ParseTuple(args, "O|i:open", &path, &a) || check_alphabet(a) < 0)
        return NULL;
    PyObject *b = path_bytes(path);
    if (!b)
        return NULL;
    DatabaseObject *self = (DatabaseObject *)DatabaseType.tp_alloc(&DatabaseType, 0);
    if (!self) {
        Py_DECREF(b);
        return NULL;
    }
    const char *p = PyBytes_AS_STRING(b);
    int rc;
    log_begin();
    Py_BEGIN_ALLOW_THREADS
    rc = swgpu_db_open(p, (swgpu_alphabet_t)a, &self->db, &self->info);
    Py_END_ALLOW_THREADS
    Py_DECREF(b);
    if (finish(rc) < 0) {
        Py_DECREF(self);
        return NULL;
    }
    self->have_info = 1;
    return (PyObject *)self;
}

static PyObject *database_from_seqset(PyObject *cls, PyObject *args)
{
    SeqSetObject *set;
    (void)cls;
    if (!PyArg_ParseTuple(args, "O!:from_seqset", &SeqSetType, &set))
        return NULL;
    DatabaseObject *self = (DatabaseObject *)DatabaseType.tp_alloc(&DatabaseType, 0);
    if (!self)
        return NULL;
    int rc;
    log_begin();
    Py_BEGIN_ALLOW_THREADS
    rc = swgpu_db_from_seqset(set->set, &self->db);
    Py_END_ALLOW_THREADS
    if (finish(rc) < 0) {
        Py_DECREF(self);
        return NULL;
    }
    return (PyObject *)self;
}

static Py_ssize_t database_len(DatabaseObject *self)
{
    return (Py_ssize_t)swgpu_db_size(self->db);
}

static int database_at(DatabaseObject *self, PyObject *args, swgpu_seq_t *s)
{
    Py_ssize_t i;
    if (!PyArg_ParseTuple(args, "n", &i))
        return -1;
    if (i < 0 || (size_t)i >= swgpu_db_size(self->db)) {
        PyErr_SetString(PyExc_IndexError, "database index out of range");
        return -1;
    }
    swgpu_db_get(self->db, (size_t)i, s);
    return 0;
}

static PyObject *database_get(DatabaseObject *self, PyObject *args)
{
    swgpu_seq_t s;
    if (database_at(self, args, &s) < 0)
        return NULL;
    PyObject *res = decode_seq(swgpu_db_alphabet(self->db), s.res, s.len);
    return res ? Py_BuildValue("(NNN)", text(s.id), text(s.desc), res) : NULL;
}

static PyObject *database_meta(DatabaseObject *self, PyObject *args)
{
    swgpu_seq_t s;
    if (database_at(self, args, &s) < 0)
        return NULL;
    return Py_BuildValue("(NNn)", text(s.id), text(s.desc), (Py_ssize_t)s.len);
}

static PyObject *database_write(DatabaseObject *self, PyObject *args)
{
    PyObject *path;
    if (!PyArg_ParseTuple(args, "O:write", &path))
        return NULL;
    PyObject *b = path_bytes(path);
    if (!b)
        return NULL;
    const char *p = PyBytes_AS_STRING(b);
    int rc;
    log_begin();
    Py_BEGIN_ALLOW_THREADS
    rc = swgpu_db_write(self->db, p);
    Py_END_ALLOW_THREADS
    Py_DECREF(b);
    if (finish(rc) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *database_alphabet(DatabaseObject *self, void *closure)
{
    (void)closure;
    return PyLong_FromLong(swgpu_db_alphabet(self->db));
}

static PyObject *database_residues(DatabaseObject *self, void *closure)
{
    (void)closure;
    return PyLong_FromUnsignedLongLong(swgpu_db_residues(self->db));
}

static PyObject *database_max_len(DatabaseObject *self, void *closure)
{
    (void)closure;
    return PyLong_FromUnsignedLongLong(swgpu_db_max_len(self->db));
}

static PyObject *database_info(DatabaseObject *self, void *closure)
{
    (void)closure;
    if (!self->have_info)
        Py_RETURN_NONE;
    return read_info(&self->info);
}

static PyMethodDef database_methods[] = {
    {"open", (PyCFunction)database_open, METH_VARARGS | METH_STATIC,
     "open(path, alphabet=0) -> Database: a makedb file, or FASTA/FASTQ built in memory"},
    {"from_seqset", (PyCFunction)database_from_seqset, METH_VARARGS | METH_STATIC,
     "from_seqset(seqset) -> Database (copied)"},
    {"get", (PyCFunction)database_get, METH_VARARGS, "get(i) -> (id, desc, residues)"},
    {"meta", (PyCFunction)database_meta, METH_VARARGS, "meta(i) -> (id, desc, length)"},
    {"write", (PyCFunction)database_write, METH_VARARGS, "write(path): a makedb file"},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef database_getset[] = {
    {"alphabet", (getter)database_alphabet, NULL, "1 protein, 2 dna", NULL},
    {"residues", (getter)database_residues, NULL, "residues in all", NULL},
    {"max_len", (getter)database_max_len, NULL, "longest sequence", NULL},
    {"info", (getter)database_info, NULL, "what opening found (None if built in memory)", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PySequenceMethods database_seq = {.sq_length = (lenfunc)database_len};

static PyTypeObject DatabaseType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "swgpu._swgpu.Database",
    .tp_basicsize = sizeof(DatabaseObject),
    .tp_dealloc = (destructor)database_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A sequence database (swgpu_db_t).",
    .tp_methods = database_methods,
    .tp_getset = database_getset,
    .tp_as_sequence = &database_seq,
};

/* ------------------------------------------------------------------ Pssm */

typedef struct {
    PyObject_HEAD
    swgpu_pssm_t *p;
    PyObject *owner; /* NULL: p is this object's; else the object p belongs to (referenced) */
} PssmObject;

static PyTypeObject PssmType;

static void pssm_dealloc(PssmObject *self)
{
    if (self->owner)
        Py_DECREF(self->owner);
    else
        swgpu_pssm_destroy(self->p);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* A Pssm object for p: its own (owner NULL, p destroyed on failure) or
 * borrowed from owner. */
static PyObject *pssm_wrap(swgpu_pssm_t *p, PyObject *owner)
{
    PssmObject *self = (PssmObject *)PssmType.tp_alloc(&PssmType, 0);
    if (!self) {
        if (!owner)
            swgpu_pssm_destroy(p);
        return NULL;
    }
    self->p = p;
    Py_XINCREF(owner);
    self->owner = owner;
    return (PyObject *)self;
}

static PyObject *pssm_read(PyObject *cls, PyObject *args)
{
    PyObject *path;
    (void)cls;
    if (!PyArg_ParseTuple(args, "O:read", &path))
        return NULL;
    PyObject *b = path_bytes(path);
    if (!b)
        return NULL;
    const char *s = PyBytes_AS_STRING(b);
    swgpu_pssm_t *p = NULL;
    int rc;
    log_begin();
    Py_BEGIN_ALLOW_THREADS
    rc = swgpu_pssm_read(s, &p);
    Py_END_ALLOW_THREADS
    Py_DECREF(b);
    if (finish(rc) < 0)
        return NULL;
    return pssm_wrap(p, NULL);
}

/* create(id, residues or None, scores, n): scores a buffer of n * 20 native
 * int32 (row by row, columns ARNDCQEGHILKMFPSTWYV) */
static PyObject *pssm_create(PyObject *cls, PyObject *args)
{
    const char *id;
    PyObject *residues, *keep = NULL;
    Py_buffer scores;
    Py_ssize_t n;
    const char *letters_p = NULL;
    (void)cls;
    if (!PyArg_ParseTuple(args, "sOy*n:create", &id, &residues, &scores, &n))
        return NULL;
    PyObject *ret = NULL;
    if (n < 0 || (size_t)scores.len != (size_t)n * 20 * sizeof(int32_t)) {
        raise_fmt(SWGPU_EINVAL, "PSSM %s: %zd bytes of scores for %zd positions (expected %zd)",
                  id, scores.len, n, n * 20 * (Py_ssize_t)sizeof(int32_t));
        goto done;
    }
    if (residues != Py_None) {
        Py_ssize_t len;
        if (letters(residues, "residues", &keep, &letters_p, &len) < 0)
            goto done;
        if (len != n) {
            raise_fmt(SWGPU_EINVAL, "PSSM %s: %zd residues for %zd positions", id, len, n);
            goto done;
        }
    }
    swgpu_pssm_t *p = NULL;
    int rc = swgpu_pssm_create(id, letters_p, (const int32_t *)scores.buf, (size_t)n, &p);
    if (rc < 0) {
        raise_msg(rc, swgpu_last_error());
        goto done;
    }
    ret = pssm_wrap(p, NULL);
done:
    Py_XDECREF(keep);
    PyBuffer_Release(&scores);
    return ret;
}

/* rows() -> [[20 scores], ...]: each position's scores against
 * ARNDCQEGHILKMFPSTWYV */
static PyObject *pssm_rows(PssmObject *self, PyObject *unused)
{
    (void)unused;
    size_t n = swgpu_pssm_length(self->p);
    PyObject *list = PyList_New((Py_ssize_t)n);
    for (size_t i = 0; list && i < n; i++) {
        PyObject *row = PyList_New(20);
        for (int c = 0; row && c < 20; c++) {
            PyObject *v = PyLong_FromLong(swgpu_pssm_score(self->p, i, (uint8_t)c));
            if (!v)
                Py_CLEAR(row);
            else
                PyList_SET_ITEM(row, c, v);
        }
        if (!row)
            Py_CLEAR(list);
        else
            PyList_SET_ITEM(list, (Py_ssize_t)i, row);
    }
    return list;
}

/* score(position, letter) -> the score of a position against any protein
 * letter (the rule of swgpu_pssm_score for those without a column) */
static PyObject *pssm_score(PssmObject *self, PyObject *args)
{
    Py_ssize_t pos;
    int letter;
    if (!PyArg_ParseTuple(args, "nC:score", &pos, &letter))
        return NULL;
    size_t n = swgpu_pssm_length(self->p);
    if (pos < 0 || (size_t)pos >= n) {
        PyErr_Format(PyExc_IndexError, "position %zd out of range (%zu positions)", pos, n);
        return NULL;
    }
    int code = letter < 128 ? swgpu_encode(SWGPU_PROTEIN, letter) : -1;
    if (code < 0)
        return raise_fmt(SWGPU_EINVAL, "'%c' is not a protein letter", letter < 128 ? letter : '?');
    return PyLong_FromLong(swgpu_pssm_score(self->p, (size_t)pos, (uint8_t)code));
}

/* The protein matrix and gaps of a PSSM's statistics (matrix None:
 * BLOSUM62; gaps None: the protein defaults); *m is the caller's. */
static int pssm_scoring(PyObject *matrix, PyObject *go, PyObject *ge, swgpu_matrix_t **m,
                        swgpu_opts_t *o)
{
    swgpu_opts_init(o, SWGPU_PROTEIN);
    if (int_arg(go, "gap_open", &o->gap_open) < 0 ||
        int_arg(ge, "gap_extend", &o->gap_extend) < 0 ||
        make_matrix(SWGPU_PROTEIN, matrix, Py_None, Py_None, m) < 0)
        return -1;
    int rc = swgpu_opts_check(o, *m);
    if (rc < 0) {
        raise_msg(rc, swgpu_last_error());
        return -1;
    }
    return 0;
}

/* format(matrix, gap_open, gap_extend) -> str: psiblast's ASCII format */
static PyObject *pssm_format(PssmObject *self, PyObject *args)
{
    PyObject *matrix, *go, *ge;
    if (!PyArg_ParseTuple(args, "OOO:format", &matrix, &go, &ge))
        return NULL;
    swgpu_matrix_t *m = NULL;
    swgpu_opts_t o;
    if (pssm_scoring(matrix, go, ge, &m, &o) < 0) {
        swgpu_matrix_destroy(m);
        return NULL;
    }
    char *buf = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&buf, &len);
    if (!fp) {
        swgpu_matrix_destroy(m);
        return PyErr_NoMemory();
    }
    int rc;
    log_begin();
    Py_BEGIN_ALLOW_THREADS
    rc = swgpu_pssm_write(self->p, m, o.gap_open, o.gap_extend, fp);
    if (fclose(fp) != 0 && rc == SWGPU_OK)
        rc = SWGPU_ENOMEM;
    Py_END_ALLOW_THREADS
    swgpu_matrix_destroy(m);
    PyObject *s = NULL;
    if (finish(rc) == 0)
        s = PyUnicode_DecodeUTF8(buf ? buf : "", (Py_ssize_t)len, "strict");
    free(buf);
    return s;
}

static PyObject *karlin_tuple(const swgpu_karlin_t *k)
{
    return Py_BuildValue("(dddddOO)", k->lambda, k->K, k->H, k->alpha, k->beta,
                         k->estimated ? Py_True : Py_False, k->round_down ? Py_True : Py_False);
}

/* karlin(matrix, gap_open, gap_extend) -> the parameters of a search with it */
static PyObject *pssm_karlin(PssmObject *self, PyObject *args)
{
    PyObject *matrix, *go, *ge;
    if (!PyArg_ParseTuple(args, "OOO:karlin", &matrix, &go, &ge))
        return NULL;
    swgpu_matrix_t *m = NULL;
    swgpu_opts_t o;
    swgpu_karlin_t k;
    PyObject *ret = NULL;
    if (pssm_scoring(matrix, go, ge, &m, &o) == 0) {
        int rc;
        log_begin();
        Py_BEGIN_ALLOW_THREADS
        rc = swgpu_pssm_karlin(self->p, m, o.gap_open, o.gap_extend, &k);
        Py_END_ALLOW_THREADS
        if (finish(rc) == 0)
            ret = karlin_tuple(&k);
    }
    swgpu_matrix_destroy(m);
    return ret;
}

static PyObject *pssm_id(PssmObject *self, void *c)
{
    (void)c;
    return text(swgpu_pssm_id(self->p));
}
static PyObject *pssm_length(PssmObject *self, void *c)
{
    (void)c;
    return PyLong_FromSize_t(swgpu_pssm_length(self->p));
}
static PyObject *pssm_residues(PssmObject *self, void *c)
{
    (void)c;
    return PyUnicode_FromString(swgpu_pssm_residues(self->p));
}
static PyObject *pssm_min(PssmObject *self, void *c)
{
    (void)c;
    return PyLong_FromLong(swgpu_pssm_min(self->p));
}
static PyObject *pssm_max(PssmObject *self, void *c)
{
    (void)c;
    return PyLong_FromLong(swgpu_pssm_max(self->p));
}

static PyMethodDef pssm_methods[] = {
    {"read", (PyCFunction)pssm_read, METH_VARARGS | METH_STATIC,
     "read(path) -> Pssm: psiblast's ASCII format (plain or gzip)"},
    {"create", (PyCFunction)pssm_create, METH_VARARGS | METH_STATIC,
     "create(id, residues or None, scores, n) -> Pssm: scores n * 20 native int32"},
    {"rows", (PyCFunction)pssm_rows, METH_NOARGS,
     "rows() -> [[20 scores (ARNDCQEGHILKMFPSTWYV)], ...]"},
    {"score", (PyCFunction)pssm_score, METH_VARARGS, "score(position, letter) -> int"},
    {"format", (PyCFunction)pssm_format, METH_VARARGS,
     "format(matrix, gap_open, gap_extend) -> str in psiblast's ASCII format"},
    {"karlin", (PyCFunction)pssm_karlin, METH_VARARGS,
     "karlin(matrix, gap_open, gap_extend) -> (lambda, K, H, alpha, beta, estimated, "
     "round_down)"},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef pssm_getset[] = {
    {"id", (getter)pssm_id, NULL, "the query's id", NULL},
    {"length", (getter)pssm_length, NULL, "positions", NULL},
    {"residues", (getter)pssm_residues, NULL, "the query residues", NULL},
    {"min", (getter)pssm_min, NULL, "least score (any position, any code)", NULL},
    {"max", (getter)pssm_max, NULL, "greatest score", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject PssmType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "swgpu._swgpu.Pssm",
    .tp_basicsize = sizeof(PssmObject),
    .tp_dealloc = (destructor)pssm_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A position-specific score matrix (swgpu_pssm_t).",
    .tp_methods = pssm_methods,
    .tp_getset = pssm_getset,
};

/* The C PSSMs of a tuple of Pssm objects (malloc'd, the caller's); NULL
 * with an exception set on failure. */
static const swgpu_pssm_t **pssm_array(PyObject *tuple)
{
    if (!PyTuple_Check(tuple)) {
        PyErr_SetString(PyExc_TypeError, "PSSMs: expected a tuple of Pssm objects");
        return NULL;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(tuple);
    const swgpu_pssm_t **a = malloc((size_t)(n ? n : 1) * sizeof *a);
    if (!a)
        return (const swgpu_pssm_t **)PyErr_NoMemory();
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *o = PyTuple_GET_ITEM(tuple, i);
        if (!PyObject_TypeCheck(o, &PssmType)) {
            free(a);
            PyErr_Format(PyExc_TypeError, "PSSM %zd: expected a Pssm, got %s", i + 1,
                         Py_TYPE(o)->tp_name);
            return NULL;
        }
        a[i] = ((PssmObject *)o)->p;
    }
    return a;
}

/* --------------------------------------------------------- SearchResult */

typedef struct {
    PyObject_HEAD
    swgpu_search_result_t *r;
    SeqSetObject *queries;     /* referenced: the result points into them and db; */
    PyObject *pssms;           /* or, for PSSM queries, a tuple of Pssm objects, */
    const swgpu_pssm_t **parr; /* their C PSSMs (ours) */
    DatabaseObject *db;
    swgpu_matrix_t *m;
    swgpu_opts_t o;
} SearchResultObject;

static PyTypeObject SearchResultType;

static void result_dealloc(SearchResultObject *self)
{
    swgpu_search_result_destroy(self->r);
    swgpu_matrix_destroy(self->m);
    free(self->parr);
    Py_XDECREF(self->queries);
    Py_XDECREF(self->pssms);
    Py_XDECREF(self->db);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static Py_ssize_t result_len(SearchResultObject *self)
{
    return (Py_ssize_t)self->r->n_queries;
}

static int result_query(SearchResultObject *self, PyObject *args, const swgpu_query_result_t **q)
{
    Py_ssize_t i;
    if (!PyArg_ParseTuple(args, "n", &i))
        return -1;
    if (i < 0 || (size_t)i >= self->r->n_queries) {
        PyErr_SetString(PyExc_IndexError, "query index out of range");
        return -1;
    }
    *q = &self->r->q[i];
    return 0;
}

static PyObject *cigar_str(const swgpu_aln_t *a)
{
    if (a->n_cigar == 0)
        Py_RETURN_NONE;
    size_t need = swgpu_cigar_string(a, NULL, 0);
    char *buf = malloc(need + 1);
    if (!buf)
        return PyErr_NoMemory();
    swgpu_cigar_string(a, buf, need + 1);
    PyObject *s = PyUnicode_FromStringAndSize(buf, (Py_ssize_t)need);
    free(buf);
    return s;
}

/* (score, qbeg, qend, tbeg, tend, cigar or None, length, nident, mismatch,
 *  gapopen, gaps) */
static PyObject *aln_tuple(const swgpu_aln_t *a)
{
    PyObject *c = cigar_str(a);
    if (!c)
        return NULL;
    return Py_BuildValue("(LLLLLNLLLLL)", (long long)a->score, (long long)a->qbeg, (long long)a->qend,
                         (long long)a->tbeg, (long long)a->tend, c, (long long)a->length,
                         (long long)a->n_ident, (long long)a->n_mismatch,
                         (long long)a->n_gapopen, (long long)a->n_gaps);
}

/* [(target, score, bits, evalue, aln tuple, minus), ...] of a query's hits */
static PyObject *hits_list(const swgpu_query_result_t *q)
{
    PyObject *list = PyList_New((Py_ssize_t)q->n_hits);
    for (size_t h = 0; list && h < q->n_hits; h++) {
        const swgpu_hit_t *hit = &q->hits[h];
        PyObject *t = Py_BuildValue("(niddNO)", (Py_ssize_t)hit->target, (int)hit->score,
                                    hit->bits, hit->evalue, aln_tuple(&hit->aln),
                                    hit->minus ? Py_True : Py_False);
        if (!t) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, (Py_ssize_t)h, t);
    }
    return list;
}

/* hits(i) -> [(target, score, bits, evalue, aln tuple), ...] */
static PyObject *result_hits(SearchResultObject *self, PyObject *args)
{
    const swgpu_query_result_t *q;
    if (result_query(self, args, &q) < 0)
        return NULL;
    return hits_list(q);
}

static PyObject *result_karlin(SearchResultObject *self, PyObject *args)
{
    const swgpu_query_result_t *q;
    if (result_query(self, args, &q) < 0)
        return NULL;
    return karlin_tuple(&q->karlin);
}

/* (id, description, length) of query i: sequence i of queries, or PSSM i */
static PyObject *query_meta(const SeqSetObject *queries, const swgpu_pssm_t *const *pssms,
                            size_t i)
{
    if (pssms)
        return Py_BuildValue("(Nsn)", text(swgpu_pssm_id(pssms[i])), "",
                             (Py_ssize_t)swgpu_pssm_length(pssms[i]));
    swgpu_seq_t s;
    swgpu_seqset_get(queries->set, i, &s);
    return Py_BuildValue("(NNn)", text(s.id), text(s.desc), (Py_ssize_t)s.len);
}

/* meta(i) -> (id, description, length) of query i */
static PyObject *result_meta(SearchResultObject *self, PyObject *args)
{
    const swgpu_query_result_t *q;
    if (result_query(self, args, &q) < 0)
        return NULL;
    return query_meta(self->queries, self->parr, (size_t)(q - self->r->q));
}

/* Writes results in format f to fp (GIL released); flag: the writer's own. */
typedef int (*writer_fn)(const swgpu_outfmt_t *f, FILE *fp, void *self, int flag);

/* The text a writer writes in output format spec, with format 7's and
 * pair's database name (None: the default) */
static PyObject *format_text(const char *spec, PyObject *name, writer_fn write, void *self,
                             int flag)
{
    PyObject *dbname = NULL;
    if (name != Py_None && !(dbname = path_bytes(name)))
        return NULL;
    swgpu_outfmt_t *f = NULL;
    int rc = swgpu_outfmt_parse(spec, &f);
    if (rc == SWGPU_OK && dbname)
        rc = swgpu_outfmt_set_dbname(f, PyBytes_AS_STRING(dbname));
    Py_XDECREF(dbname);
    if (rc < 0) {
        swgpu_outfmt_destroy(f);
        return raise_msg(rc, swgpu_last_error());
    }
    char *buf = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&buf, &len);
    if (!fp) {
        swgpu_outfmt_destroy(f);
        return PyErr_NoMemory();
    }
    log_begin();
    Py_BEGIN_ALLOW_THREADS
    rc = write(f, fp, self, flag);
    fclose(fp);
    Py_END_ALLOW_THREADS
    swgpu_outfmt_destroy(f);
    PyObject *s = NULL;
    if (finish(rc) == 0)
        s = PyUnicode_DecodeUTF8(buf ? buf : "", (Py_ssize_t)len, "surrogateescape");
    free(buf);
    return s;
}

static int write_result(const swgpu_outfmt_t *f, FILE *fp, void *obj, int flag)
{
    SearchResultObject *self = obj;
    (void)flag;
    if (self->parr)
        return swgpu_outfmt_write_pssm(f, fp, self->r, self->parr, self->r->n_queries,
                                       self->db->db, self->m, &self->o);
    return swgpu_outfmt_write(f, fp, self->r, self->queries->set, self->db->db, self->m,
                              &self->o);
}

/* format(spec, dbname=None) -> str: the command line's output formats */
static PyObject *result_format(SearchResultObject *self, PyObject *args)
{
    const char *spec;
    PyObject *name = Py_None;
    if (!PyArg_ParseTuple(args, "s|O:format", &spec, &name))
        return NULL;
    return format_text(spec, name, write_result, self, 0);
}

static PyObject *result_backend(SearchResultObject *self, void *c)
{
    (void)c;
    return PyUnicode_FromString(self->r->backend ? self->r->backend : "");
}
static PyObject *result_cells(SearchResultObject *self, void *c)
{
    (void)c;
    return PyLong_FromUnsignedLongLong(self->r->cells);
}
static PyObject *result_overflows(SearchResultObject *self, void *c)
{
    (void)c;
    return PyLong_FromUnsignedLongLong(self->r->overflows);
}
static PyObject *result_scan_seconds(SearchResultObject *self, void *c)
{
    (void)c;
    return PyFloat_FromDouble(self->r->scan_seconds);
}
static PyObject *result_align_seconds(SearchResultObject *self, void *c)
{
    (void)c;
    return PyFloat_FromDouble(self->r->align_seconds);
}

static PyMethodDef result_methods[] = {
    {"hits", (PyCFunction)result_hits, METH_VARARGS,
     "hits(i) -> [(target, score, bits, evalue, (score, qbeg, qend, tbeg, tend, cigar, length, "
     "nident, mismatch, gapopen, gaps), minus), ...]"},
    {"karlin", (PyCFunction)result_karlin, METH_VARARGS,
     "karlin(i) -> (lambda, K, H, alpha, beta, estimated, round_down)"},
    {"meta", (PyCFunction)result_meta, METH_VARARGS,
     "meta(i) -> (id, description, length) of query i"},
    {"format", (PyCFunction)result_format, METH_VARARGS,
     "format(spec, dbname=None) -> str in an output format of the command line"},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef result_getset[] = {
    {"backend", (getter)result_backend, NULL, "the engine that scanned", NULL},
    {"cells", (getter)result_cells, NULL, "query length times database residues, summed", NULL},
    {"overflows", (getter)result_overflows, NULL, "targets rescored at a wider precision", NULL},
    {"scan_seconds", (getter)result_scan_seconds, NULL, "wall time of the scan", NULL},
    {"align_seconds", (getter)result_align_seconds, NULL,
     "wall time the alignments went on after the scan", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PySequenceMethods result_seq = {.sq_length = (lenfunc)result_len};

static PyTypeObject SearchResultType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "swgpu._swgpu.SearchResult",
    .tp_basicsize = sizeof(SearchResultObject),
    .tp_dealloc = (destructor)result_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "The result of a search (swgpu_search_result_t).",
    .tp_methods = result_methods,
    .tp_getset = result_getset,
    .tp_as_sequence = &result_seq,
};

/* -------------------------------------------------------- IterateResult */

typedef struct {
    PyObject_HEAD
    swgpu_iterate_result_t *it;
    SeqSetObject *queries;     /* referenced, as in SearchResultObject: the queries */
    PyObject *pssms;           /* or the PSSMs of round 1, */
    const swgpu_pssm_t **parr; /* their C PSSMs (ours) */
    DatabaseObject *db;
    swgpu_matrix_t *m;
    swgpu_opts_t o;
} IterateResultObject;

static PyTypeObject IterateResultType;

static void iterate_dealloc(IterateResultObject *self)
{
    swgpu_iterate_result_destroy(self->it);
    swgpu_matrix_destroy(self->m);
    free(self->parr);
    Py_XDECREF(self->queries);
    Py_XDECREF(self->pssms);
    Py_XDECREF(self->db);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static Py_ssize_t iterate_len(IterateResultObject *self)
{
    return (Py_ssize_t)self->it->n_queries;
}

/* query i of args; -1 with IndexError when out of range */
static int iterate_index(IterateResultObject *self, PyObject *args, size_t *i)
{
    Py_ssize_t k;
    if (!PyArg_ParseTuple(args, "n", &k))
        return -1;
    if (k < 0 || (size_t)k >= self->it->n_queries) {
        PyErr_SetString(PyExc_IndexError, "query index out of range");
        return -1;
    }
    *i = (size_t)k;
    return 0;
}

/* query i's results in its last round */
static const swgpu_query_result_t *iterate_last(const IterateResultObject *self, size_t i)
{
    return &self->it->round[self->it->last_round[i] - 1]->q[i];
}

static PyObject *iterate_meta(IterateResultObject *self, PyObject *args)
{
    size_t i;
    if (iterate_index(self, args, &i) < 0)
        return NULL;
    return query_meta(self->queries, self->parr, i);
}

static PyObject *iterate_hits(IterateResultObject *self, PyObject *args)
{
    size_t i;
    if (iterate_index(self, args, &i) < 0)
        return NULL;
    return hits_list(iterate_last(self, i));
}

static PyObject *iterate_karlin(IterateResultObject *self, PyObject *args)
{
    size_t i;
    if (iterate_index(self, args, &i) < 0)
        return NULL;
    return karlin_tuple(&iterate_last(self, i)->karlin);
}

/* rounds(i) -> (last round, converged, (hits included in round 1, 2, ...)) */
static PyObject *iterate_rounds(IterateResultObject *self, PyObject *args)
{
    size_t i;
    if (iterate_index(self, args, &i) < 0)
        return NULL;
    const swgpu_iterate_result_t *it = self->it;
    size_t last = it->last_round[i];
    PyObject *inc = PyTuple_New((Py_ssize_t)last);
    for (size_t k = 0; inc && k < last; k++) {
        PyObject *v = PyLong_FromSize_t(it->included[k * it->n_queries + i]);
        if (!v)
            Py_CLEAR(inc);
        else
            PyTuple_SET_ITEM(inc, (Py_ssize_t)k, v);
    }
    if (!inc)
        return NULL;
    return Py_BuildValue("(nON)", (Py_ssize_t)last, it->converged[i] ? Py_True : Py_False, inc);
}

/* final_pssm(i) -> Pssm (borrowed from this result) or None */
static PyObject *iterate_final_pssm(IterateResultObject *self, PyObject *args)
{
    size_t i;
    if (iterate_index(self, args, &i) < 0)
        return NULL;
    if (!self->it->final_pssm || !self->it->final_pssm[i])
        Py_RETURN_NONE;
    return pssm_wrap(self->it->final_pssm[i], (PyObject *)self);
}

static int write_iterate(const swgpu_outfmt_t *f, FILE *fp, void *obj, int all_rounds)
{
    IterateResultObject *self = obj;
    return swgpu_outfmt_write_iterate(f, fp, self->it, self->queries ? self->queries->set : NULL,
                                      self->parr, all_rounds, self->db->db, self->m, &self->o);
}

/* format(spec, dbname=None, all_rounds=False) -> str */
static PyObject *iterate_format(IterateResultObject *self, PyObject *args)
{
    const char *spec;
    PyObject *name = Py_None;
    int all_rounds = 0;
    if (!PyArg_ParseTuple(args, "s|Op:format", &spec, &name, &all_rounds))
        return NULL;
    return format_text(spec, name, write_iterate, self, all_rounds);
}

/* What the rounds did together, as the command line's summary adds it up */
static PyObject *iterate_backend(IterateResultObject *self, void *c)
{
    (void)c;
    const swgpu_iterate_result_t *it = self->it;
    const char *b = it->n_rounds ? it->round[it->n_rounds - 1]->backend : NULL;
    return PyUnicode_FromString(b ? b : "");
}
static PyObject *iterate_cells(IterateResultObject *self, void *c)
{
    (void)c;
    uint64_t n = 0;
    for (size_t k = 0; k < self->it->n_rounds; k++)
        n += self->it->round[k]->cells;
    return PyLong_FromUnsignedLongLong(n);
}
static PyObject *iterate_overflows(IterateResultObject *self, void *c)
{
    (void)c;
    uint64_t n = 0;
    for (size_t k = 0; k < self->it->n_rounds; k++)
        n += self->it->round[k]->overflows;
    return PyLong_FromUnsignedLongLong(n);
}
static PyObject *iterate_scan_seconds(IterateResultObject *self, void *c)
{
    (void)c;
    double t = 0;
    for (size_t k = 0; k < self->it->n_rounds; k++)
        t += self->it->round[k]->scan_seconds;
    return PyFloat_FromDouble(t);
}
static PyObject *iterate_align_seconds(IterateResultObject *self, void *c)
{
    (void)c;
    double t = 0;
    for (size_t k = 0; k < self->it->n_rounds; k++)
        t += self->it->round[k]->align_seconds;
    return PyFloat_FromDouble(t);
}
static PyObject *iterate_n_rounds(IterateResultObject *self, void *c)
{
    (void)c;
    return PyLong_FromSize_t(self->it->n_rounds);
}

static PyMethodDef iterate_methods[] = {
    {"meta", (PyCFunction)iterate_meta, METH_VARARGS,
     "meta(i) -> (id, description, length) of query i"},
    {"hits", (PyCFunction)iterate_hits, METH_VARARGS,
     "hits(i) -> query i's hits in its last round, as SearchResult.hits"},
    {"karlin", (PyCFunction)iterate_karlin, METH_VARARGS,
     "karlin(i) -> the parameters of query i's last round"},
    {"rounds", (PyCFunction)iterate_rounds, METH_VARARGS,
     "rounds(i) -> (last round, converged, (hits included per round))"},
    {"final_pssm", (PyCFunction)iterate_final_pssm, METH_VARARGS,
     "final_pssm(i) -> the Pssm of query i's last round's hits, or None"},
    {"format", (PyCFunction)iterate_format, METH_VARARGS,
     "format(spec, dbname=None, all_rounds=False) -> str in an output format of the command "
     "line: each query's last round, or every round"},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef iterate_getset[] = {
    {"n_rounds", (getter)iterate_n_rounds, NULL, "rounds run (the most any query ran)", NULL},
    {"backend", (getter)iterate_backend, NULL, "the engine that scanned", NULL},
    {"cells", (getter)iterate_cells, NULL, "cells of every round", NULL},
    {"overflows", (getter)iterate_overflows, NULL, "targets rescored, every round", NULL},
    {"scan_seconds", (getter)iterate_scan_seconds, NULL, "scan time, every round", NULL},
    {"align_seconds", (getter)iterate_align_seconds, NULL,
     "alignment time after the scans, every round", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PySequenceMethods iterate_seq = {.sq_length = (lenfunc)iterate_len};

static PyTypeObject IterateResultType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "swgpu._swgpu.IterateResult",
    .tp_basicsize = sizeof(IterateResultObject),
    .tp_dealloc = (destructor)iterate_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "The result of an iterated search (swgpu_iterate_result_t).",
    .tp_methods = iterate_methods,
    .tp_getset = iterate_getset,
    .tp_as_sequence = &iterate_seq,
};

/* ------------------------------------------------------- search and scan */

/* The checks and options both need (q NULL: PSSM queries, protein); *m
 * and keep are the caller's. */
static int search_setup(const char *what, SeqSetObject *q, DatabaseObject *db, PyObject *matrix,
                        PyObject *match, PyObject *mismatch, PyObject *opts, swgpu_opts_t *o,
                        swgpu_matrix_t **m, PyObject *keep)
{
    swgpu_alphabet_t qa = q ? swgpu_seqset_alphabet(q->set) : SWGPU_PROTEIN;
    swgpu_alphabet_t da = swgpu_db_alphabet(db->db);
    *m = NULL;
    if (qa != da) {
        raise_fmt(SWGPU_EALPHABET,
                  "the queries are %s %s but the database holds %s sequences",
                  swgpu_alphabet_name(qa), q ? "sequences" : "PSSMs", swgpu_alphabet_name(da));
        return -1;
    }
    swgpu_opts_init(o, da);
    if (fill_opts(what, search_fields, sizeof search_fields / sizeof search_fields[0], o, opts,
                  keep) < 0 ||
        make_matrix(da, matrix, match, mismatch, m) < 0)
        return -1;
    int rc = swgpu_opts_check(o, *m);
    if (rc < 0) {
        raise_msg(rc, swgpu_last_error());
        return -1;
    }
    return 0;
}

/* A Python progress callable called from the library (any thread, the GIL
 * released by the caller of the library); its first exception is kept and
 * raised when the call returns, and silences it from then on. */
typedef struct {
    PyObject *fn;
    int failed;
    PyObject *et, *ev, *tb; /* the callback's exception */
} progress_t;

static void progress_call(progress_t *p, const char *fmt, ...)
{
    if (p->failed)
        return;
    PyGILState_STATE g = PyGILState_Ensure();
    va_list ap;
    va_start(ap, fmt);
    PyObject *a = Py_VaBuildValue(fmt, ap);
    va_end(ap);
    PyObject *r = a ? PyObject_CallObject(p->fn, a) : NULL;
    if (!r) {
        p->failed = 1;
        PyErr_Fetch(&p->et, &p->ev, &p->tb);
    }
    Py_XDECREF(a);
    Py_XDECREF(r);
    PyGILState_Release(g);
}

/* after the library call: raise the callback's exception, if any (-1) */
static int progress_finish(progress_t *p)
{
    if (!p->failed)
        return 0;
    PyErr_Restore(p->et, p->ev, p->tb);
    p->et = p->ev = p->tb = NULL;
    return -1;
}

static void progress_clear(progress_t *p)
{
    Py_XDECREF(p->et);
    Py_XDECREF(p->ev);
    Py_XDECREF(p->tb);
    p->et = p->ev = p->tb = NULL;
}

/* search's progress: (done, total, cells_done, cells_total, seconds) */
static void on_search_progress(size_t done, size_t total, uint64_t cells_done,
                               uint64_t cells_total, double seconds, void *user)
{
    progress_call(user, "(nnKKd)", (Py_ssize_t)done, (Py_ssize_t)total,
                  (unsigned long long)cells_done, (unsigned long long)cells_total, seconds);
}

static PyObject *py_search(PyObject *self, PyObject *args)
{
    SeqSetObject *q;
    DatabaseObject *db;
    PyObject *matrix, *match, *mismatch, *opts, *progress = Py_None;
    (void)self;
    if (!PyArg_ParseTuple(args, "O!O!OOOO|O:search", &SeqSetType, &q, &DatabaseType, &db, &matrix,
                          &match, &mismatch, &opts, &progress))
        return NULL;
    if (progress != Py_None && !PyCallable_Check(progress))
        return PyErr_Format(PyExc_TypeError, "progress: expected a callable or None");
    progress_t prog = {progress, 0, NULL, NULL, NULL};
    PyObject *keep = PyList_New(0);
    if (!keep)
        return NULL;
    SearchResultObject *res =
        (SearchResultObject *)SearchResultType.tp_alloc(&SearchResultType, 0);
    if (!res) {
        Py_DECREF(keep);
        return NULL;
    }
    if (search_setup("search", q, db, matrix, match, mismatch, opts, &res->o, &res->m, keep) < 0)
        goto fail;
    if (progress != Py_None) {
        res->o.progress = on_search_progress;
        res->o.progress_user = &prog;
    }
    int rc;
    log_begin();
    Py_BEGIN_ALLOW_THREADS
    rc = swgpu_search(q->set, db->db, res->m, &res->o, &res->r);
    Py_END_ALLOW_THREADS
    res->o.progress = NULL;
    res->o.progress_user = NULL;
    if (finish(rc) < 0 || progress_finish(&prog) < 0)
        goto fail;
    /* the options' strings are not needed after the call: the writer ignores
     * them, and the struct keeps no pointer the result uses */
    res->o.kernel = NULL;
    Py_INCREF(q);
    Py_INCREF(db);
    res->queries = q;
    res->db = db;
    Py_DECREF(keep);
    return (PyObject *)res;
fail:
    progress_clear(&prog);
    Py_DECREF(keep);
    Py_DECREF(res);
    return NULL;
}

/* search_pssm(pssms, db, matrix, options, progress=None) -> SearchResult:
 * pssms a tuple of Pssm objects */
static PyObject *py_search_pssm(PyObject *self, PyObject *args)
{
    DatabaseObject *db;
    PyObject *pssms, *matrix, *opts, *progress = Py_None;
    (void)self;
    if (!PyArg_ParseTuple(args, "O!O!OO|O:search_pssm", &PyTuple_Type, &pssms, &DatabaseType,
                          &db, &matrix, &opts, &progress))
        return NULL;
    if (progress != Py_None && !PyCallable_Check(progress))
        return PyErr_Format(PyExc_TypeError, "progress: expected a callable or None");
    progress_t prog = {progress, 0, NULL, NULL, NULL};
    PyObject *keep = PyList_New(0);
    if (!keep)
        return NULL;
    SearchResultObject *res =
        (SearchResultObject *)SearchResultType.tp_alloc(&SearchResultType, 0);
    if (!res) {
        Py_DECREF(keep);
        return NULL;
    }
    if (!(res->parr = pssm_array(pssms)))
        goto fail;
    Py_INCREF(pssms);
    res->pssms = pssms;
    if (search_setup("search", NULL, db, matrix, Py_None, Py_None, opts, &res->o, &res->m,
                     keep) < 0)
        goto fail;
    if (progress != Py_None) {
        res->o.progress = on_search_progress;
        res->o.progress_user = &prog;
    }
    size_t n = (size_t)PyTuple_GET_SIZE(pssms);
    int rc;
    log_begin();
    Py_BEGIN_ALLOW_THREADS
    rc = swgpu_search_pssm(res->parr, n, db->db, res->m, &res->o, &res->r);
    Py_END_ALLOW_THREADS
    res->o.progress = NULL;
    res->o.progress_user = NULL;
    if (finish(rc) < 0 || progress_finish(&prog) < 0)
        goto fail;
    res->o.kernel = NULL; /* as in py_search */
    Py_INCREF(db);
    res->db = db;
    Py_DECREF(keep);
    return (PyObject *)res;
fail:
    progress_clear(&prog);
    Py_DECREF(keep);
    Py_DECREF(res);
    return NULL;
}

/* search_iterate(queries, pssms, db, matrix, match, mismatch, options,
 * psi_options, progress=None) -> IterateResult: queries a SeqSet or None,
 * pssms a tuple of Pssm objects or None (exactly one of them) */
static PyObject *py_search_iterate(PyObject *self, PyObject *args)
{
    DatabaseObject *db;
    PyObject *queries, *pssms, *matrix, *match, *mismatch, *opts, *psi_opts;
    PyObject *progress = Py_None;
    (void)self;
    if (!PyArg_ParseTuple(args, "OOO!OOOOO|O:search_iterate", &queries, &pssms, &DatabaseType,
                          &db, &matrix, &match, &mismatch, &opts, &psi_opts, &progress))
        return NULL;
    if ((queries == Py_None) == (pssms == Py_None))
        return PyErr_Format(PyExc_TypeError, "search_iterate: give queries or PSSMs");
    if (queries != Py_None && !PyObject_TypeCheck(queries, &SeqSetType))
        return PyErr_Format(PyExc_TypeError, "search_iterate: queries: expected a SeqSet");
    if (progress != Py_None && !PyCallable_Check(progress))
        return PyErr_Format(PyExc_TypeError, "progress: expected a callable or None");
    progress_t prog = {progress, 0, NULL, NULL, NULL};
    PyObject *keep = PyList_New(0);
    if (!keep)
        return NULL;
    IterateResultObject *res =
        (IterateResultObject *)IterateResultType.tp_alloc(&IterateResultType, 0);
    if (!res) {
        Py_DECREF(keep);
        return NULL;
    }
    SeqSetObject *q = queries != Py_None ? (SeqSetObject *)queries : NULL;
    if (pssms != Py_None) {
        if (!(res->parr = pssm_array(pssms)))
            goto fail;
        Py_INCREF(pssms);
        res->pssms = pssms;
    }
    swgpu_psi_opts_t psi;
    swgpu_psi_opts_init(&psi);
    if (search_setup("search", q, db, matrix, match, mismatch, opts, &res->o, &res->m, keep) < 0 ||
        fill_opts("search", psi_fields, sizeof psi_fields / sizeof psi_fields[0], &psi, psi_opts,
                  keep) < 0)
        goto fail;
    if (progress != Py_None) {
        res->o.progress = on_search_progress;
        res->o.progress_user = &prog;
    }
    size_t n = res->parr ? (size_t)PyTuple_GET_SIZE(pssms) : 0;
    int rc;
    log_begin();
    Py_BEGIN_ALLOW_THREADS
    rc = swgpu_search_iterate(q ? q->set : NULL, res->parr, n, db->db, res->m, &res->o, &psi,
                              &res->it);
    Py_END_ALLOW_THREADS
    res->o.progress = NULL;
    res->o.progress_user = NULL;
    if (finish(rc) < 0 || progress_finish(&prog) < 0)
        goto fail;
    res->o.kernel = NULL; /* as in py_search */
    Py_XINCREF(q);
    res->queries = q;
    Py_INCREF(db);
    res->db = db;
    Py_DECREF(keep);
    return (PyObject *)res;
fail:
    progress_clear(&prog);
    Py_DECREF(keep);
    Py_DECREF(res);
    return NULL;
}

/* scan_scores(...) -> bytearray of len(queries) * len(db) native int32 */
static PyObject *py_scan_scores(PyObject *self, PyObject *args)
{
    SeqSetObject *q;
    DatabaseObject *db;
    PyObject *matrix, *match, *mismatch, *opts;
    swgpu_opts_t o;
    swgpu_matrix_t *m = NULL;
    PyObject *out = NULL;
    (void)self;
    if (!PyArg_ParseTuple(args, "O!O!OOOO:scan_scores", &SeqSetType, &q, &DatabaseType, &db,
                          &matrix, &match, &mismatch, &opts))
        return NULL;
    PyObject *keep = PyList_New(0);
    if (!keep)
        return NULL;
    if (search_setup("scores", q, db, matrix, match, mismatch, opts, &o, &m, keep) < 0)
        goto done;
    size_t nq = swgpu_seqset_size(q->set), nd = swgpu_db_size(db->db);
    if (nd && nq > (size_t)PY_SSIZE_T_MAX / 4 / nd) {
        PyErr_NoMemory();
        goto done;
    }
    out = PyByteArray_FromStringAndSize(NULL, (Py_ssize_t)(nq * nd * 4));
    if (!out)
        goto done;
    int32_t *buf = (int32_t *)PyByteArray_AS_STRING(out);
    int rc;
    log_begin();
    Py_BEGIN_ALLOW_THREADS
    rc = swgpu_scan_scores(q->set, db->db, m, &o, buf);
    Py_END_ALLOW_THREADS
    if (finish(rc) < 0)
        Py_CLEAR(out);
done:
    swgpu_matrix_destroy(m);
    Py_DECREF(keep);
    return out;
}

/* ------------------------------------------------------------- alignment */

/* One sequence encoded in a set of its own (alphabet a, or detected). */
static swgpu_seqset_t *encode_one(PyObject *seq, const char *what, int a)
{
    PyObject *keep = NULL;
    const char *p;
    Py_ssize_t n;
    swgpu_seqset_t *s = NULL;
    if (letters(seq, what, &keep, &p, &n) < 0)
        return NULL;
    int rc = swgpu_seqset_create((swgpu_alphabet_t)a, &s);
    if (rc == SWGPU_OK)
        rc = swgpu_seqset_add(s, what, "", p, (size_t)n);
    Py_DECREF(keep);
    if (rc < 0) {
        swgpu_seqset_destroy(s);
        raise_msg(rc, swgpu_last_error());
        return NULL;
    }
    return s;
}

/* Both sequences encoded, their alphabets agreeing; 0 or -1. */
static int encode_pair(PyObject *q, PyObject *t, int a, swgpu_seqset_t **qs, swgpu_seqset_t **ts)
{
    *qs = *ts = NULL;
    if (check_alphabet(a) < 0 || !(*qs = encode_one(q, "query", a)) ||
        !(*ts = encode_one(t, "target", a)))
        goto fail;
    swgpu_alphabet_t qa = swgpu_seqset_alphabet(*qs), ta = swgpu_seqset_alphabet(*ts);
    if (qa != ta && a == SWGPU_AUTO) {
        /* an empty sequence has no type of its own: it takes the other's */
        int q_empty = swgpu_seqset_residues(*qs) == 0;
        if (q_empty || swgpu_seqset_residues(*ts) == 0) {
            swgpu_seqset_t **e = q_empty ? qs : ts;
            swgpu_seqset_destroy(*e);
            if (!(*e = encode_one(q_empty ? q : t, q_empty ? "query" : "target",
                                  q_empty ? ta : qa)))
                goto fail;
            qa = ta = swgpu_seqset_alphabet(*qs);
        }
    }
    if (qa != ta) {
        raise_fmt(SWGPU_EALPHABET, "the query is a %s sequence and the target a %s sequence%s",
                  swgpu_alphabet_name(qa), swgpu_alphabet_name(ta),
                  a == SWGPU_AUTO ? " (detected; type= sets the type)" : "");
        goto fail;
    }
    return 0;
fail:
    swgpu_seqset_destroy(*qs);
    swgpu_seqset_destroy(*ts);
    *qs = *ts = NULL;
    return -1;
}

/* align(query, target, alphabet, matrix, match, mismatch, gap_open,
 *       gap_extend, score_only) -> (alphabet, qlen, tlen, aln tuple) */
static PyObject *py_align(PyObject *self, PyObject *args)
{
    PyObject *q, *t, *matrix, *match, *mismatch, *go, *ge;
    int a, score_only;
    (void)self;
    if (!PyArg_ParseTuple(args, "OOiOOOOOp:align", &q, &t, &a, &matrix, &match, &mismatch, &go,
                          &ge, &score_only))
        return NULL;
    swgpu_seqset_t *qs = NULL, *ts = NULL;
    swgpu_matrix_t *m = NULL;
    swgpu_aln_t aln;
    PyObject *ret = NULL;
    memset(&aln, 0, sizeof aln);
    if (encode_pair(q, t, a, &qs, &ts) < 0)
        return NULL;
    swgpu_alphabet_t al = swgpu_seqset_alphabet(qs);
    swgpu_opts_t o;
    swgpu_opts_init(&o, al);
    if (int_arg(go, "gap_open", &o.gap_open) < 0 || int_arg(ge, "gap_extend", &o.gap_extend) < 0 ||
        make_matrix(al, matrix, match, mismatch, &m) < 0)
        goto done;
    int rc = swgpu_opts_check(&o, m);
    if (rc < 0) {
        raise_msg(rc, swgpu_last_error());
        goto done;
    }
    swgpu_seq_t sq, st;
    swgpu_seqset_get(qs, 0, &sq);
    swgpu_seqset_get(ts, 0, &st);
    log_begin();
    Py_BEGIN_ALLOW_THREADS
    rc = swgpu_align(sq.res, sq.len, st.res, st.len, m, o.gap_open, o.gap_extend, score_only,
                     &aln);
    Py_END_ALLOW_THREADS
    if (finish(rc) == 0)
        ret = Py_BuildValue("(innN)", (int)al, (Py_ssize_t)sq.len, (Py_ssize_t)st.len,
                            aln_tuple(&aln));
done:
    swgpu_aln_free(&aln);
    swgpu_matrix_destroy(m);
    swgpu_seqset_destroy(qs);
    swgpu_seqset_destroy(ts);
    return ret;
}

/* align_long's progress: (phase, fraction, cells, seconds) */
static void on_progress(const swgpu_long_progress_t *p, void *user)
{
    progress_call(user, "(sdKd)", p->phase, p->fraction, (unsigned long long)p->cells, p->seconds);
}

static PyObject *long_stats(const swgpu_long_stats_t *s)
{
    return Py_BuildValue(
        "{s:s,s:K,s:K,s:K,s:K,s:d,s:d,s:d,s:d,s:d,s:K,s:K,s:i,s:K,s:i,s:L}", "backend",
        s->backend ? s->backend : "", "cells", (unsigned long long)s->cells, "cells_pruned",
        (unsigned long long)s->cells_pruned, "score_cells", (unsigned long long)s->score_cells,
        "score_pruned", (unsigned long long)s->score_pruned, "score_seconds", s->score_seconds,
        "reverse_seconds", s->reverse_seconds, "traceback_seconds", s->traceback_seconds,
        "total_seconds", s->total_seconds, "score_gcups", s->score_gcups, "peak_host_bytes",
        (unsigned long long)s->peak_host_bytes, "peak_device_bytes",
        (unsigned long long)s->peak_device_bytes, "levels", s->levels, "subproblems",
        (unsigned long long)s->subproblems, "gpus", s->gpus, "seed_bound", (long long)s->seed_bound);
}

/* align_long(query, target, alphabet, matrix, match, mismatch, strand,
 *            options, progress) -> (alphabet, qlen, tlen,
 *            [(minus, aln tuple, stats dict), ...]) with strand 0 plus,
 *            1 minus, 2 both (plus first) */
static PyObject *py_align_long(PyObject *self, PyObject *args)
{
    PyObject *q, *t, *matrix, *match, *mismatch, *opts, *progress;
    int a, strand;
    (void)self;
    if (!PyArg_ParseTuple(args, "OOiOOOiOO:align_long", &q, &t, &a, &matrix, &match, &mismatch,
                          &strand, &opts, &progress))
        return NULL;
    if (strand < 0 || strand > 2)
        return raise_fmt(SWGPU_EINVAL, "strand %d: expected 0 (plus), 1 (minus) or 2 (both)",
                         strand);
    if (progress != Py_None && !PyCallable_Check(progress))
        return PyErr_Format(PyExc_TypeError, "progress: expected a callable or None");
    swgpu_seqset_t *qs = NULL, *ts = NULL;
    swgpu_matrix_t *m = NULL;
    swgpu_aln_t aln[2];
    swgpu_long_stats_t st[2];
    uint8_t *rc_buf = NULL;
    PyObject *ret = NULL, *keep = NULL;
    progress_t prog = {progress, 0, NULL, NULL, NULL};
    memset(aln, 0, sizeof aln);
    memset(st, 0, sizeof st);
    if (encode_pair(q, t, a, &qs, &ts) < 0)
        return NULL;
    swgpu_alphabet_t al = swgpu_seqset_alphabet(qs);
    if (al != SWGPU_DNA && strand != 0) {
        raise_fmt(SWGPU_EINVAL, "strand %s applies to DNA only", strand == 1 ? "minus" : "both");
        goto done;
    }
    swgpu_long_opts_t o;
    swgpu_long_opts_init(&o, al);
    if (!(keep = PyList_New(0)) ||
        fill_opts("align_long", long_fields, sizeof long_fields / sizeof long_fields[0], &o, opts,
                  keep) < 0 ||
        make_matrix(al, matrix, match, mismatch, &m) < 0)
        goto done;
    if (progress != Py_None) {
        o.progress = on_progress;
        o.progress_user = &prog;
    }
    swgpu_seq_t sq, stg;
    swgpu_seqset_get(qs, 0, &sq);
    swgpu_seqset_get(ts, 0, &stg);
    if (strand != 0 && !(rc_buf = malloc(stg.len ? stg.len : 1))) {
        PyErr_NoMemory();
        goto done;
    }
    int rc = SWGPU_OK, n = 0;
    log_begin();
    Py_BEGIN_ALLOW_THREADS
    for (int s = 0; s < 2 && rc == SWGPU_OK; s++) {
        int minus = s == 1;
        if ((minus && strand == 0) || (!minus && strand == 1))
            continue;
        const uint8_t *target = stg.res;
        if (minus) {
            swgpu_dna_revcomp(stg.res, stg.len, rc_buf);
            target = rc_buf;
        }
        rc = swgpu_align_long(sq.res, sq.len, target, stg.len, m, &o, &aln[n], &st[n]);
        if (rc == SWGPU_OK)
            n++;
    }
    Py_END_ALLOW_THREADS
    if (finish(rc) < 0 || progress_finish(&prog) < 0)
        goto done;
    PyObject *list = PyList_New(n);
    for (int k = 0, s = strand == 1 ? 1 : 0; list && k < n; k++, s++) {
        PyObject *row = Py_BuildValue("(ONN)", s == 1 ? Py_True : Py_False, aln_tuple(&aln[k]),
                                      long_stats(&st[k]));
        if (!row) {
            Py_CLEAR(list);
            break;
        }
        PyList_SET_ITEM(list, k, row);
    }
    if (list)
        ret = Py_BuildValue("(innN)", (int)al, (Py_ssize_t)sq.len, (Py_ssize_t)stg.len, list);
done:
    progress_clear(&prog);
    Py_XDECREF(keep);
    for (int k = 0; k < 2; k++)
        swgpu_aln_free(&aln[k]);
    free(rc_buf);
    swgpu_matrix_destroy(m);
    swgpu_seqset_destroy(qs);
    swgpu_seqset_destroy(ts);
    return ret;
}

/* A CIGAR string ("12M2I30M", the form cigar_str() gives) as elements in
 * a->cigar (malloc'ed); 0 or -1 with a Python error. */
static int parse_cigar(PyObject *cigar, swgpu_aln_t *a)
{
    static const char ops[] = "MID"; /* SWGPU_CIGAR_M, _I, _D */
    Py_ssize_t n;
    const char *s = PyUnicode_AsUTF8AndSize(cigar, &n);
    size_t k = 0, cap = 0;
    if (!s)
        return -1;
    for (Py_ssize_t i = 0; i < n; i++)
        cap += s[i] == 'M' || s[i] == 'I' || s[i] == 'D';
    if (!(a->cigar = malloc((cap ? cap : 1) * sizeof *a->cigar))) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < n;) {
        uint64_t len = 0;
        Py_ssize_t d = i;
        while (i < n && s[i] >= '0' && s[i] <= '9' && len <= 0xfffffff)
            len = 10 * len + (uint64_t)(s[i++] - '0');
        const char *op = i < n && s[i] ? strchr(ops, s[i]) : NULL;
        if (i == d || !op || len == 0 || len > 0xfffffff || k == cap) {
            raise_fmt(SWGPU_EINVAL, "cigar %s: not a CIGAR of M, I and D elements", s);
            return -1;
        }
        a->cigar[k++] = (uint32_t)len << 4 | (uint32_t)(op - ops);
        i++;
    }
    a->n_cigar = a->m_cigar = k;
    return 0;
}

/* The alignment of an aln tuple (as aln_tuple() makes it); 0 or -1. */
static int parse_aln(PyObject *t, swgpu_aln_t *a)
{
    long long v[10];
    PyObject *cigar;
    memset(a, 0, sizeof *a);
    if (!PyArg_ParseTuple(t, "LLLLLOLLLLL;aln: expected an alignment tuple", &v[0], &v[1], &v[2],
                          &v[3], &v[4], &cigar, &v[5], &v[6], &v[7], &v[8], &v[9]))
        return -1;
    a->score = v[0], a->qbeg = v[1], a->qend = v[2], a->tbeg = v[3], a->tend = v[4];
    a->length = v[5], a->n_ident = v[6], a->n_mismatch = v[7], a->n_gapopen = v[8];
    a->n_gaps = v[9];
    if (cigar == Py_None)
        return 0;
    if (!PyUnicode_Check(cigar)) {
        PyErr_Format(PyExc_TypeError, "cigar: expected a str or None, got %s",
                     Py_TYPE(cigar)->tp_name);
        return -1;
    }
    return parse_cigar(cigar, a);
}

/* A str as UTF-8 bytes (surrogate escapes back to the bytes they stand
 * for), a new reference; None: NULL without an error. */
static PyObject *utf8_bytes(PyObject *o, const char *what)
{
    if (o == Py_None)
        return NULL;
    if (!PyUnicode_Check(o))
        return PyErr_Format(PyExc_TypeError, "%s: expected a str, got %s", what,
                            Py_TYPE(o)->tp_name);
    return PyUnicode_AsEncodedString(o, "utf-8", "surrogateescape");
}

/* the words of a command line (a list or tuple of str) as C strings, kept
 * in *keep (a new list); 0 or -1 */
static int argv_words(PyObject *cl, PyObject **keep, const char ***argv, int *argc)
{
    PyObject *seq = PySequence_Fast(cl, "command_line: expected a list of str");
    *argv = NULL;
    *argc = 0;
    if (!seq || !(*keep = PyList_New(0))) {
        Py_XDECREF(seq);
        return -1;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    if (n > INT_MAX - 1 || !(*argv = malloc(((size_t)n + 1) * sizeof **argv))) {
        Py_DECREF(seq);
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *b = utf8_bytes(PySequence_Fast_GET_ITEM(seq, i), "command_line word");
        if (!b || PyList_Append(*keep, b) < 0) {
            Py_XDECREF(b);
            Py_DECREF(seq);
            return -1;
        }
        Py_DECREF(b);
        (*argv)[i] = PyBytes_AS_STRING(b);
    }
    *argc = (int)n;
    Py_DECREF(seq);
    return 0;
}

/* long_format(fmt, query, target, alphabet, matrix, match, mismatch, minus,
 *             aln, other, score_only, query_id, target_id, command_line)
 *   -> str: swgpu_long_write_<fmt> ("summary", "sam", "pair" or "svg") of
 * an alignment of query with target (their letters, the target's forward
 * strand; aln's target interval on the strand aligned), other None or the
 * other strand's (minus, score), command_line None or SAM's CL words */
static PyObject *py_long_format(PyObject *self, PyObject *args)
{
    PyObject *q, *t, *matrix, *match, *mismatch, *alnt, *other, *qid, *tid, *cl;
    const char *fmt;
    int a, minus, score_only;
    (void)self;
    if (!PyArg_ParseTuple(args, "sOOiOOOpOOpOOO:long_format", &fmt, &q, &t, &a, &matrix, &match,
                          &mismatch, &minus, &alnt, &other, &score_only, &qid, &tid, &cl))
        return NULL;
    if (strcmp(fmt, "summary") && strcmp(fmt, "sam") && strcmp(fmt, "pair") && strcmp(fmt, "svg"))
        return raise_fmt(SWGPU_EINVAL, "format %s: expected summary, sam, pair or svg", fmt);
    if (a != SWGPU_PROTEIN && a != SWGPU_DNA)
        return raise_fmt(SWGPU_EINVAL, "alphabet %d: expected 1 (protein) or 2 (dna)", a);
    swgpu_seqset_t *qs = NULL, *ts = NULL;
    swgpu_matrix_t *m = NULL;
    swgpu_aln_t aln, oaln;
    uint8_t *trc = NULL;
    PyObject *ret = NULL, *qb = NULL, *tb = NULL, *keep = NULL;
    const char **argv = NULL;
    int argc = 0, ominus = 0;
    long long oscore = 0;
    char *buf = NULL;
    size_t len = 0;
    memset(&oaln, 0, sizeof oaln);
    if (parse_aln(alnt, &aln) < 0)
        return NULL;
    if ((other != Py_None && !PyArg_ParseTuple(other, "pL;other: expected (minus, score)",
                                               &ominus, &oscore)) ||
        (!(qb = utf8_bytes(qid, "query_id")) && PyErr_Occurred()) ||
        (!(tb = utf8_bytes(tid, "target_id")) && PyErr_Occurred()) ||
        (cl != Py_None && argv_words(cl, &keep, &argv, &argc) < 0) ||
        !(qs = encode_one(q, "query", a)) || !(ts = encode_one(t, "target", a)) ||
        make_matrix((swgpu_alphabet_t)a, matrix, match, mismatch, &m) < 0)
        goto done;
    oaln.score = oscore;
    swgpu_seq_t sq, st;
    swgpu_seqset_get(qs, 0, &sq);
    swgpu_seqset_get(ts, 0, &st);
    if (minus) {
        if (!(trc = malloc(st.len ? st.len : 1))) {
            PyErr_NoMemory();
            goto done;
        }
        swgpu_dna_revcomp(st.res, st.len, trc);
    }
    swgpu_long_record_t r = {qb ? PyBytes_AS_STRING(qb) : NULL, tb ? PyBytes_AS_STRING(tb) : NULL,
                             sq.res, minus ? trc : st.res, sq.len, st.len, (swgpu_alphabet_t)a,
                             minus, &aln};
    swgpu_long_record_t o = r;
    o.minus = ominus;
    o.aln = &oaln;
    FILE *fp = open_memstream(&buf, &len);
    if (!fp) {
        PyErr_NoMemory();
        goto done;
    }
    int rc, closed;
    log_begin();
    Py_BEGIN_ALLOW_THREADS
    if (!strcmp(fmt, "sam"))
        rc = swgpu_long_write_sam(fp, &r, argc, argv);
    else if (!strcmp(fmt, "pair"))
        rc = swgpu_long_write_pair(fp, &r, m);
    else if (!strcmp(fmt, "svg"))
        rc = swgpu_long_write_svg(fp, &r);
    else
        rc = swgpu_long_write_summary(fp, &r, other != Py_None ? &o : NULL, score_only);
    closed = fclose(fp);
    Py_END_ALLOW_THREADS
    if (finish(rc) == 0) {
        if (closed != 0) /* a memory stream fails only for want of memory */
            PyErr_NoMemory();
        else
            ret = PyUnicode_DecodeUTF8(buf ? buf : "", (Py_ssize_t)len, "surrogateescape");
    }
done:
    free(buf);
    free(argv);
    free(trc);
    swgpu_aln_free(&aln);
    Py_XDECREF(keep);
    Py_XDECREF(qb);
    Py_XDECREF(tb);
    swgpu_matrix_destroy(m);
    swgpu_seqset_destroy(qs);
    swgpu_seqset_destroy(ts);
    return ret;
}

/* detect(letters) -> alphabet: the library's rule (DNA if >= 90% of the
 * letters other than N are A, C, G, T or U) */
static PyObject *py_detect(PyObject *self, PyObject *arg)
{
    (void)self;
    swgpu_seqset_t *s = encode_one(arg, "sequences", SWGPU_AUTO);
    if (!s)
        return NULL;
    int a = swgpu_seqset_alphabet(s);
    swgpu_seqset_destroy(s);
    return PyLong_FromLong(a);
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
                describe(search_fields, sizeof search_fields / sizeof search_fields[0])) < 0 ||
        add_new(mod, "psi_options",
                describe(psi_fields, sizeof psi_fields / sizeof psi_fields[0])) < 0 ||
        add_new(mod, "long_options",
                describe(long_fields, sizeof long_fields / sizeof long_fields[0])) < 0)
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
