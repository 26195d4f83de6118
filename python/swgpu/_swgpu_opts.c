/*
 * _swgpu_opts.c - the option tables of the extension module: each keyword
 * of search(), search_iterate() and align_long() as (name, kind, struct
 * offset, doc), filled into swgpu_opts_t, swgpu_psi_opts_t and
 * swgpu_long_opts_t from a keyword dictionary (a new option field is one
 * table row); the scoring system of an alphabet from its arguments.
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

/* ---------------------------------------------------------- option tables */

static const char *const backend_names[] = {"auto", "ref", "cpu", "cuda", NULL};
_Static_assert(sizeof(swgpu_backend_t) == sizeof(int), "enums are int-sized");
_Static_assert(SWGPU_BACKEND_AUTO == 0 && SWGPU_BACKEND_REF == 1 && SWGPU_BACKEND_CPU == 2 &&
               SWGPU_BACKEND_CUDA == 3, "backend_names follows swgpu_backend_t");

static const char *const evalue_model_names[] = {"spouge", "old-fsc", NULL};
static const char *const strand_names[] = {"both", "plus", "minus", NULL};
_Static_assert(sizeof(swgpu_strand_t) == sizeof(int), "enums are int-sized");
_Static_assert(SWGPU_STRAND_BOTH == 0 && SWGPU_STRAND_PLUS == 1 && SWGPU_STRAND_MINUS == 2,
               "strand_names follows swgpu_strand_t");
static const char *const rank_names[] = {"evalue", "score", NULL};
_Static_assert(sizeof(swgpu_rank_t) == sizeof(int), "enums are int-sized");
_Static_assert(SWGPU_RANK_EVALUE == 0 && SWGPU_RANK_SCORE == 1, "rank_names follows swgpu_rank_t");
_Static_assert(sizeof(swgpu_evalue_model_t) == sizeof(int), "enums are int-sized");
_Static_assert(SWGPU_EVALUE_SPOUGE == 0 && SWGPU_EVALUE_OLD_FSC == 1,
               "evalue_model_names follows swgpu_evalue_model_t");

#define SOPT(name, kind, field, names, doc) {name, kind, offsetof(swgpu_opts_t, field), names, doc}
/* swgpu_opts_t: db.search() and db.scores() (the command line's search options) */
const opt_field_t swpy_search_fields[] = {
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
    SOPT("rank", OPT_ENUM, rank, rank_names,
         "'evalue' (BLAST+'s order: top keeps the best hits by E-value, then score, equal "
         "hits the last in the database first) or 'score' (by score, then the first in the "
         "database)"),
    SOPT("comp_based_stats", OPT_INT, comp_based_stats, NULL,
         "protein, as blastp -comp_based_stats: 0 (default) the matrix's exact scores; 1 "
         "BLOSUM62 scaled to each pair's compositions; 2 (blastp's default) adjusted to them "
         "where BLAST's rule says so, else scaled; 3 always adjusted (BLAST's preliminary "
         "hits rescored exactly, BLAST's E-values)"),
    SOPT("max_hsps", OPT_INT, max_hsps, NULL,
         "alignments (HSPs) per query, subject and strand (1): a subject's next best local "
         "alignments that share no aligned pair with the earlier ones (Waterman-Eggert, as "
         "lalign36), each with its own E-value (<= evalue), as further Hits after the "
         "subject's first (Hit.hsp); top counts subjects; not with no_align or iterations"),
};
const size_t swpy_n_search_fields = sizeof swpy_search_fields / sizeof swpy_search_fields[0];

#define POPT(name, kind, field, doc) {name, kind, offsetof(swgpu_psi_opts_t, field), NULL, doc}
/* swgpu_psi_opts_t: db.search()'s iterated search (the command line's --iterations...) */
const opt_field_t swpy_psi_fields[] = {
    POPT("iterations", OPT_INT, iterations,
         "rounds at most (>= 1); after each, every query's hits with E-value <= "
         "inclusion_evalue among its best 500 make the PSSM the next round searches with"),
    POPT("inclusion_evalue", OPT_DOUBLE, inclusion_evalue,
         "E-value for inclusion in the PSSM (0.002, psiblast's)"),
    POPT("final_pssm", OPT_BOOL, final_pssm,
         "make each query's PSSM of its last round's hits (QueryResult.pssm) (True)"),
};
const size_t swpy_n_psi_fields = sizeof swpy_psi_fields / sizeof swpy_psi_fields[0];

#define LOPT(name, kind, field, names, doc) \
    {name, kind, offsetof(swgpu_long_opts_t, field), names, doc}
/* swgpu_long_opts_t: align_long() (the command line's align options) */
const opt_field_t swpy_long_fields[] = {
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
const size_t swpy_n_long_fields = sizeof swpy_long_fields / sizeof swpy_long_fields[0];

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
            swpy_raise_fmt(SWGPU_EINVAL, "option %s: out of range", f->name);
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
            swpy_raise_fmt(SWGPU_EINVAL, "option %s: %g is not a finite number", f->name, x);
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
                swpy_raise_fmt(SWGPU_EINVAL, "option %s: a size must be >= 0 and fit 63 bits",
                               f->name);
                return -1;
            }
            x = (uint64_t)y;
        } else if (PyUnicode_Check(v)) {
            const char *s = PyUnicode_AsUTF8(v);
            if (!s)
                return -1;
            if (swgpu_parse_size(s, &x) != SWGPU_OK) {
                swpy_raise_fmt(SWGPU_EINVAL, "option %s: '%s' is not a size (examples: 512M, 4G)",
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
        swpy_raise_fmt(SWGPU_EINVAL, "option %s: '%s' is not one of %s", f->name, s, choices);
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
int swpy_fill_opts(const char *what, const opt_field_t *tab, size_t n, void *base,
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
PyObject *swpy_describe(const opt_field_t *tab, size_t n)
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
int swpy_int_arg(PyObject *v, const char *name, int *out)
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
        swpy_raise_fmt(SWGPU_EINVAL, "%s: out of range", name);
        return -1;
    }
    *out = (int)x;
    return 0;
}

/* The scoring system of an alphabet: matrix (a name or file; protein), or
 * match and mismatch (DNA), each None for the default. */
int swpy_make_matrix(swgpu_alphabet_t a, PyObject *matrix, PyObject *match, PyObject *mismatch,
                     swgpu_matrix_t **m)
{
    int rc;
    *m = NULL;
    if (a == SWGPU_DNA) {
        int ma = 2, mi = -3;
        if (matrix != Py_None) {
            swpy_raise_msg(SWGPU_EINVAL,
                           "matrix applies to protein only; DNA is scored with match and mismatch");
            return -1;
        }
        if (swpy_int_arg(match, "match", &ma) < 0 || swpy_int_arg(mismatch, "mismatch", &mi) < 0)
            return -1;
        rc = swgpu_matrix_dna(ma, mi, m);
    } else {
        if (match != Py_None || mismatch != Py_None) {
            swpy_raise_fmt(SWGPU_EINVAL, "%s applies to DNA only; protein is scored with matrix",
                           match != Py_None ? "match" : "mismatch");
            return -1;
        }
        if (matrix == Py_None) {
            rc = swgpu_matrix_builtin("BLOSUM62", m);
        } else {
            PyObject *b = swpy_path_bytes(matrix);
            if (!b)
                return -1;
            rc = swgpu_matrix_get(PyBytes_AS_STRING(b), m);
            Py_DECREF(b);
        }
    }
    if (rc < 0) {
        swpy_raise_msg(rc, swgpu_last_error());
        return -1;
    }
    return 0;
}
