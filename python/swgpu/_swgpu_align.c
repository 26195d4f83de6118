/*
 * _swgpu_align.c - the extension module's pairwise calls: align (the
 * scalar reference), align_long (bounded memory, either strand),
 * long_format (a long alignment written as `swgpu align` writes it,
 * through swgpu_long_write_*) and detect (the alphabet of letters).
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

/* ------------------------------------------------------------- alignment */

/* One sequence encoded in a set of its own (alphabet a, or detected). */
static swgpu_seqset_t *encode_one(PyObject *seq, const char *what, int a)
{
    PyObject *keep = NULL;
    const char *p;
    Py_ssize_t n;
    swgpu_seqset_t *s = NULL;
    if (swpy_letters(seq, what, &keep, &p, &n) < 0)
        return NULL;
    int rc = swgpu_seqset_create((swgpu_alphabet_t)a, &s);
    if (rc == SWGPU_OK)
        rc = swgpu_seqset_add(s, what, "", p, (size_t)n);
    Py_DECREF(keep);
    if (rc < 0) {
        swgpu_seqset_destroy(s);
        swpy_raise_msg(rc, swgpu_last_error());
        return NULL;
    }
    return s;
}

/* Both sequences encoded, their alphabets agreeing; 0 or -1. */
static int encode_pair(PyObject *q, PyObject *t, int a, swgpu_seqset_t **qs, swgpu_seqset_t **ts)
{
    *qs = *ts = NULL;
    if (swpy_check_alphabet(a) < 0 || !(*qs = encode_one(q, "query", a)) ||
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
        swpy_raise_fmt(SWGPU_EALPHABET, "the query is a %s sequence and the target a %s sequence%s",
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
PyObject *py_align(PyObject *self, PyObject *args)
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
    if (swpy_int_arg(go, "gap_open", &o.gap_open) < 0 ||
        swpy_int_arg(ge, "gap_extend", &o.gap_extend) < 0 ||
        swpy_make_matrix(al, matrix, match, mismatch, &m) < 0)
        goto done;
    int rc = swgpu_opts_check(&o, m);
    if (rc < 0) {
        swpy_raise_msg(rc, swgpu_last_error());
        goto done;
    }
    swgpu_seq_t sq, st;
    swgpu_seqset_get(qs, 0, &sq);
    swgpu_seqset_get(ts, 0, &st);
    swpy_log_begin();
    Py_BEGIN_ALLOW_THREADS
    rc = swgpu_align(sq.res, sq.len, st.res, st.len, m, o.gap_open, o.gap_extend, score_only,
                     &aln);
    Py_END_ALLOW_THREADS
    if (swpy_finish(rc) == 0)
        ret = Py_BuildValue("(innN)", (int)al, (Py_ssize_t)sq.len, (Py_ssize_t)st.len,
                            swpy_aln_tuple(&aln));
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
    swpy_progress_call(user, "(sdKd)", p->phase, p->fraction, (unsigned long long)p->cells,
                       p->seconds);
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
PyObject *py_align_long(PyObject *self, PyObject *args)
{
    PyObject *q, *t, *matrix, *match, *mismatch, *opts, *progress;
    int a, strand;
    (void)self;
    if (!PyArg_ParseTuple(args, "OOiOOOiOO:align_long", &q, &t, &a, &matrix, &match, &mismatch,
                          &strand, &opts, &progress))
        return NULL;
    if (strand < 0 || strand > 2)
        return swpy_raise_fmt(SWGPU_EINVAL, "strand %d: expected 0 (plus), 1 (minus) or 2 (both)",
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
        swpy_raise_fmt(SWGPU_EINVAL, "strand %s applies to DNA only",
                       strand == 1 ? "minus" : "both");
        goto done;
    }
    swgpu_long_opts_t o;
    swgpu_long_opts_init(&o, al);
    if (!(keep = PyList_New(0)) ||
        swpy_fill_opts("align_long", swpy_long_fields, swpy_n_long_fields, &o, opts,
                       keep) < 0 ||
        swpy_make_matrix(al, matrix, match, mismatch, &m) < 0)
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
    swpy_log_begin();
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
    if (swpy_finish(rc) < 0 || swpy_progress_finish(&prog) < 0)
        goto done;
    PyObject *list = PyList_New(n);
    for (int k = 0, s = strand == 1 ? 1 : 0; list && k < n; k++, s++) {
        PyObject *row = Py_BuildValue("(ONN)", s == 1 ? Py_True : Py_False, swpy_aln_tuple(&aln[k]),
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
    swpy_progress_clear(&prog);
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
            swpy_raise_fmt(SWGPU_EINVAL, "cigar %s: not a CIGAR of M, I and D elements", s);
            return -1;
        }
        a->cigar[k++] = (uint32_t)len << 4 | (uint32_t)(op - ops);
        i++;
    }
    a->n_cigar = a->m_cigar = k;
    return 0;
}

/* The alignment of an aln tuple (as swpy_aln_tuple() makes it); 0 or -1. */
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
PyObject *py_long_format(PyObject *self, PyObject *args)
{
    PyObject *q, *t, *matrix, *match, *mismatch, *alnt, *other, *qid, *tid, *cl;
    const char *fmt;
    int a, minus, score_only;
    (void)self;
    if (!PyArg_ParseTuple(args, "sOOiOOOpOOpOOO:long_format", &fmt, &q, &t, &a, &matrix, &match,
                          &mismatch, &minus, &alnt, &other, &score_only, &qid, &tid, &cl))
        return NULL;
    if (strcmp(fmt, "summary") && strcmp(fmt, "sam") && strcmp(fmt, "pair") && strcmp(fmt, "svg"))
        return swpy_raise_fmt(SWGPU_EINVAL, "format %s: expected summary, sam, pair or svg", fmt);
    if (a != SWGPU_PROTEIN && a != SWGPU_DNA)
        return swpy_raise_fmt(SWGPU_EINVAL, "alphabet %d: expected 1 (protein) or 2 (dna)", a);
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
        swpy_make_matrix((swgpu_alphabet_t)a, matrix, match, mismatch, &m) < 0)
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
    swpy_log_begin();
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
    if (swpy_finish(rc) == 0) {
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
PyObject *py_detect(PyObject *self, PyObject *arg)
{
    (void)self;
    swgpu_seqset_t *s = encode_one(arg, "sequences", SWGPU_AUTO);
    if (!s)
        return NULL;
    int a = swgpu_seqset_alphabet(s);
    swgpu_seqset_destroy(s);
    return PyLong_FromLong(a);
}
