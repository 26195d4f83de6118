/*
 * _swgpu_search.c - the extension module's searches: search (sequence
 * queries), search_pssm, search_iterate (PSI-BLAST rounds) and scan_scores
 * (every target's score), with the GIL released; the progress callback that
 * reports from the library's threads.
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

/* ------------------------------------------------------- search and scan */

/* A search's result made: it keeps its queries (NULL: none, PSSMs) and its
 * database; the options' strings are not needed after the call (the writer
 * ignores them, and the struct keeps no pointer the result uses) */
static void result_own(SearchResultObject *res, SeqSetObject *q, DatabaseObject *db)
{
    res->o.kernel = NULL;
    Py_XINCREF(q);
    res->queries = q;
    Py_INCREF(db);
    res->db = db;
}

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
        swpy_raise_fmt(SWGPU_EALPHABET,
                       "the queries are %s %s but the database holds %s sequences",
                       swgpu_alphabet_name(qa), q ? "sequences" : "PSSMs", swgpu_alphabet_name(da));
        return -1;
    }
    swgpu_opts_init(o, da);
    if (swpy_fill_opts(what, swpy_search_fields, swpy_n_search_fields, o, opts,
                       keep) < 0 ||
        swpy_make_matrix(da, matrix, match, mismatch, m) < 0)
        return -1;
    int rc = swgpu_opts_check(o, *m);
    if (rc < 0) {
        swpy_raise_msg(rc, swgpu_last_error());
        return -1;
    }
    return 0;
}

void swpy_progress_call(progress_t *p, const char *fmt, ...)
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
int swpy_progress_finish(progress_t *p)
{
    if (!p->failed)
        return 0;
    PyErr_Restore(p->et, p->ev, p->tb);
    p->et = p->ev = p->tb = NULL;
    return -1;
}

void swpy_progress_clear(progress_t *p)
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
    swpy_progress_call(user, "(nnKKd)", (Py_ssize_t)done, (Py_ssize_t)total,
                       (unsigned long long)cells_done, (unsigned long long)cells_total, seconds);
}

PyObject *py_search(PyObject *self, PyObject *args)
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
    swpy_log_begin();
    Py_BEGIN_ALLOW_THREADS
    rc = swgpu_search(q->set, db->db, res->m, &res->o, &res->r);
    Py_END_ALLOW_THREADS
    res->o.progress = NULL;
    res->o.progress_user = NULL;
    if (swpy_finish(rc) < 0 || swpy_progress_finish(&prog) < 0)
        goto fail;
    result_own(res, q, db);
    Py_DECREF(keep);
    return (PyObject *)res;
fail:
    swpy_progress_clear(&prog);
    Py_DECREF(keep);
    Py_DECREF(res);
    return NULL;
}

/* search_pssm(pssms, db, matrix, options, progress=None) -> SearchResult:
 * pssms a tuple of Pssm objects */
PyObject *py_search_pssm(PyObject *self, PyObject *args)
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
    if (!(res->parr = swpy_pssm_array(pssms)))
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
    swpy_log_begin();
    Py_BEGIN_ALLOW_THREADS
    rc = swgpu_search_pssm(res->parr, n, db->db, res->m, &res->o, &res->r);
    Py_END_ALLOW_THREADS
    res->o.progress = NULL;
    res->o.progress_user = NULL;
    if (swpy_finish(rc) < 0 || swpy_progress_finish(&prog) < 0)
        goto fail;
    result_own(res, NULL, db);
    Py_DECREF(keep);
    return (PyObject *)res;
fail:
    swpy_progress_clear(&prog);
    Py_DECREF(keep);
    Py_DECREF(res);
    return NULL;
}

/* search_iterate(queries, pssms, db, matrix, match, mismatch, options,
 * psi_options, progress=None) -> IterateResult: queries a SeqSet or None,
 * pssms a tuple of Pssm objects or None (exactly one of them) */
PyObject *py_search_iterate(PyObject *self, PyObject *args)
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
        if (!(res->parr = swpy_pssm_array(pssms)))
            goto fail;
        Py_INCREF(pssms);
        res->pssms = pssms;
    }
    swgpu_psi_opts_t psi;
    swgpu_psi_opts_init(&psi);
    if (search_setup("search", q, db, matrix, match, mismatch, opts, &res->o, &res->m, keep) < 0 ||
        swpy_fill_opts("search", swpy_psi_fields, swpy_n_psi_fields, &psi, psi_opts,
                       keep) < 0)
        goto fail;
    if (progress != Py_None) {
        res->o.progress = on_search_progress;
        res->o.progress_user = &prog;
    }
    size_t n = res->parr ? (size_t)PyTuple_GET_SIZE(pssms) : 0;
    int rc;
    swpy_log_begin();
    Py_BEGIN_ALLOW_THREADS
    rc = swgpu_search_iterate(q ? q->set : NULL, res->parr, n, db->db, res->m, &res->o, &psi,
                              &res->it);
    Py_END_ALLOW_THREADS
    res->o.progress = NULL;
    res->o.progress_user = NULL;
    if (swpy_finish(rc) < 0 || swpy_progress_finish(&prog) < 0)
        goto fail;
    res->o.kernel = NULL; /* as in py_search */
    Py_XINCREF(q);
    res->queries = q;
    Py_INCREF(db);
    res->db = db;
    Py_DECREF(keep);
    return (PyObject *)res;
fail:
    swpy_progress_clear(&prog);
    Py_DECREF(keep);
    Py_DECREF(res);
    return NULL;
}

/* scan_scores(...) -> bytearray of len(queries) * len(db) native int32 */
PyObject *py_scan_scores(PyObject *self, PyObject *args)
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
    swpy_log_begin();
    Py_BEGIN_ALLOW_THREADS
    rc = swgpu_scan_scores(q->set, db->db, m, &o, buf);
    Py_END_ALLOW_THREADS
    if (swpy_finish(rc) < 0)
        Py_CLEAR(out);
done:
    swgpu_matrix_destroy(m);
    Py_DECREF(keep);
    return out;
}

/* ------------------------------------------------------ streamed search */

/* a budget as Python gives it: an int of bytes or a size string ("512M") */
static int size_arg(PyObject *v, uint64_t *out)
{
    if (PyLong_Check(v) && !PyBool_Check(v)) {
        unsigned long long x = PyLong_AsUnsignedLongLong(v);
        if (PyErr_Occurred()) {
            PyErr_Clear();
            swpy_raise_fmt(SWGPU_EINVAL, "max_memory: a number of bytes >= 0 is expected");
            return -1;
        }
        *out = x;
        return 0;
    }
    if (PyUnicode_Check(v)) {
        const char *s = PyUnicode_AsUTF8(v);
        if (!s)
            return -1;
        if (swgpu_parse_size(s, out) != SWGPU_OK) {
            swpy_raise_fmt(SWGPU_EINVAL, "max_memory: '%s' is not a size (examples: 512M, 4G)", s);
            return -1;
        }
        return 0;
    }
    PyErr_Format(PyExc_TypeError, "max_memory: expected an int or a str such as '4G', got %s",
                 Py_TYPE(v)->tp_name);
    return -1;
}

/* stream_parts(path, max_memory, options) -> (parts, file bytes) */
PyObject *py_stream_parts(PyObject *self, PyObject *args)
{
    PyObject *path, *mm, *opts;
    uint64_t budget, bytes = 0;
    size_t parts = 1;
    swgpu_opts_t o;
    (void)self;
    if (!PyArg_ParseTuple(args, "OOO:stream_parts", &path, &mm, &opts) || size_arg(mm, &budget) < 0)
        return NULL;
    PyObject *keep = PyList_New(0), *b = keep ? swpy_path_bytes(path) : NULL;
    swgpu_opts_init(&o, SWGPU_PROTEIN);
    if (!b || swpy_fill_opts("search", swpy_search_fields, swpy_n_search_fields, &o, opts,
                             keep) < 0) {
        Py_XDECREF(b);
        Py_XDECREF(keep);
        return NULL;
    }
    int rc;
    swpy_log_begin();
    Py_BEGIN_ALLOW_THREADS
    rc = swgpu_stream_parts(PyBytes_AS_STRING(b), &o, budget, &parts, &bytes);
    Py_END_ALLOW_THREADS
    Py_DECREF(b);
    Py_DECREF(keep);
    if (swpy_finish(rc) < 0)
        return NULL;
    return Py_BuildValue("(nK)", (Py_ssize_t)parts, (unsigned long long)bytes);
}

/* search_stream(queries, index, path, parts, matrix, match, mismatch,
 * options, progress=None) -> (SearchResult, Database of the hits) */
PyObject *py_search_stream(PyObject *self, PyObject *args)
{
    SeqSetObject *q;
    DatabaseObject *index, *hits = NULL;
    PyObject *path, *matrix, *match, *mismatch, *opts, *progress = Py_None, *b = NULL;
    Py_ssize_t parts;
    (void)self;
    if (!PyArg_ParseTuple(args, "O!O!OnOOOO|O:search_stream", &SeqSetType, &q, &DatabaseType,
                          &index, &path, &parts, &matrix, &match, &mismatch, &opts, &progress))
        return NULL;
    if (parts < 1)
        return swpy_raise_fmt(SWGPU_EINVAL, "search_stream: %zd parts (at least 1)", parts);
    if (progress != Py_None)
        return swpy_raise_fmt(SWGPU_EINVAL, "progress: not available with a database streamed "
                              "from disk");
    PyObject *keep = PyList_New(0);
    if (!keep)
        return NULL;
    SearchResultObject *res =
        (SearchResultObject *)SearchResultType.tp_alloc(&SearchResultType, 0);
    if (!res || !(b = swpy_path_bytes(path)) ||
        !(hits = (DatabaseObject *)DatabaseType.tp_alloc(&DatabaseType, 0)))
        goto fail;
    if (search_setup("search", q, index, matrix, match, mismatch, opts, &res->o, &res->m,
                     keep) < 0)
        goto fail;
    int rc;
    swpy_log_begin();
    Py_BEGIN_ALLOW_THREADS
    rc = swgpu_search_stream(q->set, PyBytes_AS_STRING(b), (size_t)parts, res->m, &res->o,
                             &res->r, &hits->db);
    Py_END_ALLOW_THREADS
    if (swpy_finish(rc) < 0)
        goto fail;
    result_own(res, q, hits);
    Py_DECREF(keep);
    Py_DECREF(b);
    return Py_BuildValue("(NN)", (PyObject *)res, (PyObject *)hits);
fail:
    Py_XDECREF(hits);
    Py_XDECREF(b);
    Py_DECREF(keep);
    Py_XDECREF(res);
    return NULL;
}
