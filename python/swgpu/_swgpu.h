/*
 * _swgpu.h - what the files of the extension module share (private to
 * them, never installed): the exception helpers, the log queue's call
 * brackets, conversions, the option tables, the Python types' structs and
 * the module's functions.  _swgpu.c says how the module works.
 *
 *   _swgpu.c         exceptions, logging, conversions, the module's init
 *   _swgpu_opts.c    option tables (keyword dictionaries to options structs)
 *   _swgpu_data.c    SeqSet, Database and Pssm
 *   _swgpu_result.c  SearchResult and IterateResult
 *   _swgpu_search.c  search, search_pssm, search_iterate, scan_scores
 *   _swgpu_align.c   align, align_long, long_format, detect
 */
#ifndef SWGPU_PY_SWGPU_H
#define SWGPU_PY_SWGPU_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "swgpu.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ---------------------------------------------- exceptions and logging */

/* Raise the exception of status rc with message msg; returns NULL. */
PyObject *swpy_raise_msg(int rc, const char *msg);
PyObject *swpy_raise_fmt(int rc, const char *fmt, ...);

/* Before a call (GIL held): ask the Python side which levels it wants. */
void swpy_log_begin(void);
/* End of a library call made with the GIL released (and now held again):
 * the error message first (thread-local, before any Python code runs),
 * then the log, then the exception if rc < 0.  Returns 0 or -1. */
int swpy_finish(int rc);

/* ------------------------------------------------------------ conversions */

/* A path argument (str, bytes or os.PathLike) as a new bytes object. */
PyObject *swpy_path_bytes(PyObject *o);
/* Residue letters from str or bytes: *p points into keep (a new reference
 * the caller releases).  Only ASCII is accepted. */
int swpy_letters(PyObject *o, const char *what, PyObject **keep, const char **p, Py_ssize_t *n);
int swpy_check_alphabet(int a);
/* A C string from the library (ids, descriptions) as a str; bytes that are
 * not UTF-8 are kept as surrogate escapes, as Python does for file names. */
PyObject *swpy_text(const char *s);
/* Decoded residues as a str. */
PyObject *swpy_decode_seq(swgpu_alphabet_t a, const uint8_t *res, size_t len);
PyObject *swpy_read_info(const swgpu_read_info_t *i);

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

/* the options of swgpu_opts_t, swgpu_psi_opts_t and swgpu_long_opts_t */
extern const opt_field_t swpy_search_fields[], swpy_psi_fields[], swpy_long_fields[];
extern const size_t swpy_n_search_fields, swpy_n_psi_fields, swpy_n_long_fields;

/* Fill the struct at base from dict opts (None values keep the default);
 * keep (a list) receives the objects that must outlive the call. */
int swpy_fill_opts(const char *what, const opt_field_t *tab, size_t n, void *base,
                   PyObject *opts, PyObject *keep);
/* The table as a tuple of (name, kind, doc) for the Python side's docs. */
PyObject *swpy_describe(const opt_field_t *tab, size_t n);
/* An int argument that may be None (then *out keeps its default). */
int swpy_int_arg(PyObject *v, const char *name, int *out);
/* The scoring system of an alphabet: matrix (a name or file; protein), or
 * match and mismatch (DNA), each None for the default. */
int swpy_make_matrix(swgpu_alphabet_t a, PyObject *matrix, PyObject *match, PyObject *mismatch,
                     swgpu_matrix_t **m);

/* ------------------------------------------------------------------ types */

typedef struct {
    PyObject_HEAD
    swgpu_seqset_t *set;
    swgpu_read_info_t info;
    int have_info;
} SeqSetObject;

typedef struct {
    PyObject_HEAD
    swgpu_db_t *db;
    swgpu_read_info_t info;
    int have_info;
} DatabaseObject;

typedef struct {
    PyObject_HEAD
    swgpu_pssm_t *p;
    PyObject *owner; /* NULL: p is this object's; else the object p belongs to (referenced) */
} PssmObject;

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

extern PyTypeObject SeqSetType, DatabaseType, PssmType, SearchResultType, IterateResultType;

/* A Pssm object for p: its own (owner NULL, p destroyed on failure) or
 * borrowed from owner. */
PyObject *swpy_pssm_wrap(swgpu_pssm_t *p, PyObject *owner);
/* The C PSSMs of a tuple of Pssm objects (malloc'd, the caller's); NULL
 * with an exception set on failure. */
const swgpu_pssm_t **swpy_pssm_array(PyObject *tuple);
PyObject *swpy_karlin_tuple(const swgpu_karlin_t *k);
/* (score, qbeg, qend, tbeg, tend, cigar or None, length, nident, mismatch,
 *  gapopen, gaps) */
PyObject *swpy_aln_tuple(const swgpu_aln_t *a);

/* --------------------------------------------------------------- progress */

/* A Python progress callable called from the library (any thread, the GIL
 * released by the caller of the library); its first exception is kept and
 * raised when the call returns, and silences it from then on. */
typedef struct {
    PyObject *fn;
    int failed;
    PyObject *et, *ev, *tb; /* the callback's exception */
} progress_t;

void swpy_progress_call(progress_t *p, const char *fmt, ...);
/* after the library call: raise the callback's exception, if any (-1) */
int swpy_progress_finish(progress_t *p);
void swpy_progress_clear(progress_t *p);

/* ------------------------------------------------------ module functions */

PyObject *py_search(PyObject *self, PyObject *args);
PyObject *py_search_pssm(PyObject *self, PyObject *args);
PyObject *py_search_iterate(PyObject *self, PyObject *args);
PyObject *py_scan_scores(PyObject *self, PyObject *args);
PyObject *py_stream_parts(PyObject *self, PyObject *args);
PyObject *py_search_stream(PyObject *self, PyObject *args);
PyObject *py_align(PyObject *self, PyObject *args);
PyObject *py_align_long(PyObject *self, PyObject *args);
PyObject *py_long_format(PyObject *self, PyObject *args);
PyObject *py_taxdb_names(PyObject *self, PyObject *arg);
PyObject *py_detect(PyObject *self, PyObject *arg);

#endif
