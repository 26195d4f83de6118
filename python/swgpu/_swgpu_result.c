/*
 * _swgpu_result.c - the extension module's result types: SearchResult (the
 * hits of a search, formatted as the command line's outputs) and
 * IterateResult (an iterated search's rounds and last PSSMs).
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

/* --------------------------------------------------------- SearchResult */

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
PyObject *swpy_aln_tuple(const swgpu_aln_t *a)
{
    PyObject *c = cigar_str(a);
    if (!c)
        return NULL;
    return Py_BuildValue("(LLLLLNLLLLL)", (long long)a->score, (long long)a->qbeg, (long long)a->qend,
                         (long long)a->tbeg, (long long)a->tend, c, (long long)a->length,
                         (long long)a->n_ident, (long long)a->n_mismatch,
                         (long long)a->n_gapopen, (long long)a->n_gaps);
}

/* [(target, score, bits, evalue, aln tuple, minus, hsp), ...] of a query's hits */
static PyObject *hits_list(const swgpu_query_result_t *q)
{
    PyObject *list = PyList_New((Py_ssize_t)q->n_hits);
    for (size_t h = 0; list && h < q->n_hits; h++) {
        const swgpu_hit_t *hit = &q->hits[h];
        PyObject *t = Py_BuildValue("(niddNOi)", (Py_ssize_t)hit->target, (int)hit->score,
                                    hit->bits, hit->evalue, swpy_aln_tuple(&hit->aln),
                                    hit->minus ? Py_True : Py_False, hit->hsp);
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
    return swpy_karlin_tuple(&q->karlin);
}

/* (id, description, length) of query i: sequence i of queries, or PSSM i */
static PyObject *query_meta(const SeqSetObject *queries, const swgpu_pssm_t *const *pssms,
                            size_t i)
{
    if (pssms)
        return Py_BuildValue("(Nsn)", swpy_text(swgpu_pssm_id(pssms[i])), "",
                             (Py_ssize_t)swgpu_pssm_length(pssms[i]));
    swgpu_seq_t s;
    swgpu_seqset_get(queries->set, i, &s);
    return Py_BuildValue("(NNn)", swpy_text(s.id), swpy_text(s.desc), (Py_ssize_t)s.len);
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
    if (name != Py_None && !(dbname = swpy_path_bytes(name)))
        return NULL;
    swgpu_outfmt_t *f = NULL;
    int rc = swgpu_outfmt_parse(spec, &f);
    if (rc == SWGPU_OK && dbname)
        rc = swgpu_outfmt_set_dbname(f, PyBytes_AS_STRING(dbname));
    Py_XDECREF(dbname);
    if (rc < 0) {
        swgpu_outfmt_destroy(f);
        return swpy_raise_msg(rc, swgpu_last_error());
    }
    char *buf = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&buf, &len);
    if (!fp) {
        swgpu_outfmt_destroy(f);
        return PyErr_NoMemory();
    }
    swpy_log_begin();
    Py_BEGIN_ALLOW_THREADS
    rc = write(f, fp, self, flag);
    fclose(fp);
    Py_END_ALLOW_THREADS
    swgpu_outfmt_destroy(f);
    PyObject *s = NULL;
    if (swpy_finish(rc) == 0)
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
     "nident, mismatch, gapopen, gaps), minus, hsp), ...]"},
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

PyTypeObject SearchResultType = {
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
    return swpy_karlin_tuple(&iterate_last(self, i)->karlin);
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
    return swpy_pssm_wrap(self->it->final_pssm[i], (PyObject *)self);
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

PyTypeObject IterateResultType = {
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
