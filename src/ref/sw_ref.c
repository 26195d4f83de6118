/*
 * sw_ref.c - the scalar reference engine: Smith-Waterman local alignment
 * with affine gaps (Gotoh), exact 32-bit scores, end and start by the tie
 * rule, and the alignment path in linear memory (Myers-Miller).  This is
 * the oracle every other backend is checked against: it stays plain C.
 * The begin and path passes (src/align: begin.c, path.c) build on the
 * scalar blocks here and can hand their rows to the SIMD kernels of
 * src/simd, which compute the same values; swgpu__ref_start_scalar /
 * swgpu__ref_path_scalar / swgpu__align_from_end_scalar run plain C only.
 *
 * Notation.  Query q (length M) runs along i, target t (length N) along j;
 * s(a,b) = m->s[a][b] scores query code a against target code b; a gap of
 * length k costs go + k*ge (go = gap_open, ge = gap_extend), and oe = go+ge
 * is the cost of a gap's first column.  Cell (i,j) is the node after q[i-1]
 * and t[j-1].  Three states per cell:
 *
 *   M(i,j) = H(i-1,j-1) + s(q[i-1], t[j-1])      last column aligns q[i-1], t[j-1]
 *   E(i,j) = max(E(i,j-1) - ge, H(i,j-1) - oe)   last column is a D (target only)
 *   F(i,j) = max(F(i-1,j) - ge, H(i-1,j) - oe)   last column is an I (query only)
 *   H(i,j) = max(0, M(i,j), E(i,j), F(i,j))      (local: the 0 restarts)
 *
 * with H(i,0) = H(0,j) = 0 and E, F = -inf on the borders.  The best local
 * score is max H; its end cell is the first one in target-major order
 * (smallest j, then smallest i), reported as exclusive ends (i, j).
 *
 * The start comes from a reverse pass anchored at the end cell, the path
 * from a global alignment of the rectangle [qbeg,qend) x [tbeg,tend) (see
 * swgpu__ref_start and swgpu__ref_path below).
 */
#include "ref/ref.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Limits that keep every intermediate value well inside int32: real DP
 * values stay within +-VAL_BOUND, SWGPU__REF_NEG ("minus infinity") lies below them
 * and can still lose a few gap costs without wrapping. */
#define GAP_MAX (1 << 24)
#define SCORE_MAX (1 << 24)
#define VAL_BOUND (1 << 29)

/* Query profiles above this size are replaced by a per-row score fill. */
#define PROFILE_MAX_BYTES ((size_t)32 << 20)

/* ------------------------------------------------------------ arguments */

/* Gap and matrix sanity shared by every entry point. */
int swgpu__ref_check_scoring(const swgpu_matrix_t *m, const swgpu__ref_range_t *r, int go, int ge)
{
    if (!m)
        return swgpu__fail(SWGPU_EINVAL, "reference alignment: no scoring matrix");
    if (go < 0 || ge < 0 || go > GAP_MAX || ge > GAP_MAX)
        return swgpu__fail(SWGPU_EINVAL,
                           "reference alignment: gap open %d / extend %d: each must be in 0..%d",
                           go, ge, GAP_MAX);
    if (r->min < -SCORE_MAX || r->max > SCORE_MAX || r->min > r->max)
        return swgpu__fail(SWGPU_EMATRIX,
                           "reference alignment: matrix %s: scores %d..%d out of range", m->name,
                           (int)r->min, (int)r->max);
    return SWGPU_OK;
}

/* The best local score is at most max(s) * min(M, N): it must fit. */
int swgpu__ref_check_local(const swgpu__ref_range_t *r, size_t qlen, size_t tlen)
{
    uint64_t shorter = qlen < tlen ? qlen : tlen;
    int64_t best = (int64_t)(r->max > 0 ? r->max : 0) * (int64_t)shorter;
    if (shorter > (uint64_t)VAL_BOUND || best > VAL_BOUND)
        return swgpu__fail(SWGPU_ERANGE,
                           "reference alignment: lengths %zu x %zu with matrix maximum %d may "
                           "exceed the 32-bit score range", qlen, tlen, (int)r->max);
    return SWGPU_OK;
}

/* Global (anchored) passes: every H is at least the pure-gap path's
 * -(2*go + (M + N)*ge) (an I gap along the first row, then a D gap; the
 * borders start there), every M at least that plus min s: that must fit
 * too. */
int swgpu__ref_check_global(const swgpu__ref_range_t *r, int go, int ge, size_t qlen, size_t tlen)
{
    uint64_t sum = (uint64_t)qlen + tlen;
    if (sum > (uint64_t)VAL_BOUND ||
        2 * (int64_t)go + (int64_t)sum * ge + (r->min < 0 ? -(int64_t)r->min : 0) > VAL_BOUND)
        return swgpu__fail(SWGPU_ERANGE,
                           "reference alignment: lengths %zu x %zu with these scores exceed the "
                           "32-bit range of the traceback", qlen, tlen);
    return swgpu__ref_check_local(r, qlen, tlen);
}

/* -------------------------------------------------------- query profile */

int swgpu__ref_prof_init(swgpu__ref_prof_t *p, const uint8_t *q, const int32_t *rows, size_t qlen,
                      const swgpu_matrix_t *m)
{
    p->q = q;
    p->rows = rows;
    p->qlen = qlen;
    p->m = m;
    p->prof = NULL;
    if (qlen == 0 || qlen > PROFILE_MAX_BYTES / (SWGPU_NCODES * sizeof(int32_t)))
        return SWGPU_OK;
    p->prof = malloc((size_t)SWGPU_NCODES * qlen * sizeof(int32_t));
    if (!p->prof)
        return SWGPU_OK; /* fall back to per-row fills */
    for (int c = 0; c < SWGPU_NCODES; c++) {
        int32_t *row = p->prof + (size_t)c * qlen;
        for (size_t i = 0; i < qlen; i++)
            row[i] = swgpu__ref_qscore(p, i, c);
    }
    return SWGPU_OK;
}

void swgpu__ref_prof_free(swgpu__ref_prof_t *p)
{
    free(p->prof);
    p->prof = NULL;
}

/* A PSSM's rows of positions [0, n) in reverse order (NULL for a plain
 * query; *rc set on failure). */
int32_t *swgpu__ref_rows_reversed(const int32_t *rows, size_t n, int *rc)
{
    int32_t *r;
    *rc = SWGPU_OK;
    if (!rows || n == 0)
        return NULL;
    if (!(r = malloc(n * SWGPU_NCODES * sizeof *r))) {
        *rc = swgpu__fail(SWGPU_ENOMEM, "alignment: no memory for %zu PSSM rows", n);
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        memcpy(r + i * SWGPU_NCODES, rows + (n - 1 - i) * SWGPU_NCODES,
               SWGPU_NCODES * sizeof *r);
    return r;
}

/* ------------------------------------------------------ forward scoring */

/*
 * The local score pass, one target residue (row j) at a time.  Arrays over
 * the query: H[i] holds H(i+1, j-1) before and H(i+1, j) after the row,
 * E[i] likewise E(i+1, .).  Scalars in the inner loop: diag = H(i, j-1),
 * f = F(i+1, j), x = max(0, M, E) of the cell.  Since H = max(x, F) and
 * oe >= ge,
 *   F(i+1,j) = max(F(i,j) - ge, H(i,j) - oe) = max(F(i,j) - ge, x(i,j) - oe),
 * which keeps the loop-carried chain through F down to one subtract and
 * one max.  The row maximum is taken with max only;
 * the (rare) rows that raise the best score are rescanned for the first
 * cell, which gives the tie rule (smallest j, then smallest i).
 * H, E, scratch: qlen int32 each.
 */
void swgpu__ref_sw_fwd(const swgpu__ref_prof_t *p, const uint8_t *t, size_t tlen, int32_t go, int32_t ge,
                   int32_t *H, int32_t *E, int32_t *scratch, int32_t *score, int64_t *qend,
                   int64_t *tend)
{
    const size_t qlen = p->qlen;
    const int32_t oe = go + ge;
    int32_t best = 0;
    int64_t bi = 0, bj = 0;

    for (size_t i = 0; i < qlen; i++) {
        H[i] = 0;
        E[i] = SWGPU__REF_NEG;
    }
    for (size_t j = 0; j < tlen; j++) {
        const int32_t *sc = swgpu__ref_prof_row(p, t[j], scratch);
        int32_t diag = 0, f = -oe, rowmax = 0; /* F(1,j) = H(0,j) - oe */
        for (size_t i = 0; i < qlen; i++) {
            int32_t e = swgpu__ref_max32(E[i] - ge, H[i] - oe);       /* E(i+1,j) */
            int32_t x = swgpu__ref_max32(swgpu__ref_max32(diag + sc[i], e), 0); /* max(0, M, E) */
            int32_t h = swgpu__ref_max32(x, f);                       /* H(i+1,j) */
            f = swgpu__ref_max32(f - ge, x - oe);                     /* F(i+2,j) */
            diag = H[i];
            H[i] = h;
            E[i] = e;
            rowmax = swgpu__ref_max32(rowmax, h);
        }
        if (rowmax > best) {
            size_t i = 0;
            while (H[i] != rowmax)
                i++;
            best = rowmax;
            bi = (int64_t)i + 1;
            bj = (int64_t)j + 1;
        }
    }
    *score = best;
    if (qend)
        *qend = best ? bi : 0;
    if (tend)
        *tend = best ? bj : 0;
}

int swgpu__ref_score_q(const swgpu__query_t *Q, const uint8_t *t, size_t tlen,
                       const swgpu_matrix_t *m, int gap_open, int gap_extend, int32_t *score,
                       int64_t *qend, int64_t *tend)
{
    swgpu__ref_prof_t p;
    int32_t *buf = NULL;
    swgpu__ref_range_t r;
    int rc;
    if (!m || !Q)
        return swgpu__fail(SWGPU_EINVAL, "reference score: no scoring matrix or query");
    r = swgpu__ref_range(Q, m);
    if ((rc = swgpu__ref_check_scoring(m, &r, gap_open, gap_extend)))
        return rc;
    const size_t qlen = Q->len;
    const uint8_t *q = Q->res;
    if (!score || (qlen && !q) || (tlen && !t))
        return swgpu__fail(SWGPU_EINVAL, "reference score: NULL sequence or result pointer");
    *score = 0;
    if (qend)
        *qend = 0;
    if (tend)
        *tend = 0;
    if (qlen == 0 || tlen == 0)
        return SWGPU_OK;
    if ((rc = swgpu__ref_check_local(&r, qlen, tlen)))
        return rc;
    swgpu__ref_prof_init(&p, q, Q->rows, qlen, m);
    buf = malloc(3 * qlen * sizeof *buf);
    if (!buf) {
        swgpu__ref_prof_free(&p);
        return swgpu__fail(SWGPU_ENOMEM, "reference score: no memory for %zu query rows", qlen);
    }
    swgpu__ref_sw_fwd(&p, t, tlen, gap_open, gap_extend, buf, buf + qlen, buf + 2 * qlen, score, qend, tend);
    swgpu__ref_prof_free(&p);
    free(buf);
    return SWGPU_OK;
}


/* ------------------------------------------------------ the ref engine */

typedef struct {
    const swgpu_db_t *db;
    const swgpu_matrix_t *m;
    int go, ge;
    int threads;
} ref_engine_t;

/* One worker's share of a scan: chunks tid, tid+nth, tid+2*nth, ... */
typedef struct {
    const ref_engine_t *e;
    const swgpu__ref_prof_t *p;
    int32_t *scores;
    int32_t *rows; /* 3 * qlen */
    int tid, nth;
} ref_worker_t;

#define SCAN_CHUNK 64

static void *ref_worker(void *arg)
{
    ref_worker_t *w = arg;
    const swgpu_db_t *db = w->e->db;
    const size_t qlen = w->p->qlen;
    for (uint64_t c = (uint64_t)w->tid * SCAN_CHUNK; c < db->n; c += (uint64_t)w->nth * SCAN_CHUNK) {
        uint64_t end = c + SCAN_CHUNK < db->n ? c + SCAN_CHUNK : db->n;
        for (uint64_t k = c; k < end; k++)
            swgpu__ref_sw_fwd(w->p, db->res + db->off[k], (size_t)(db->off[k + 1] - db->off[k]), w->e->go,
                   w->e->ge, w->rows, w->rows + qlen, w->rows + 2 * qlen, &w->scores[k], NULL,
                   NULL);
    }
    return NULL;
}

static int ref_create(const swgpu_db_t *db, const swgpu_matrix_t *m, const swgpu_opts_t *o,
                      void **state)
{
    ref_engine_t *e;
    int rc;
    if (!db || !o || !state || !m)
        return swgpu__fail(SWGPU_EINVAL, "ref engine: NULL database, matrix, options or state");
    {
        swgpu__ref_range_t r = {m->min, m->max, m->min};
        if ((rc = swgpu__ref_check_scoring(m, &r, o->gap_open, o->gap_extend)))
            return rc;
    }
    e = calloc(1, sizeof *e);
    if (!e)
        return swgpu__fail(SWGPU_ENOMEM, "ref engine: no memory");
    e->db = db;
    e->m = m;
    e->go = o->gap_open;
    e->ge = o->gap_extend;
    e->threads = o->threads > 0 ? o->threads : swgpu__ncores();
    *state = e;
    return SWGPU_OK;
}

static int ref_scan(void *state, const swgpu__query_t *Q, int32_t *scores,
                    swgpu_scan_stats_t *st)
{
    const ref_engine_t *e = state;
    const swgpu_db_t *db = e->db;
    const uint8_t *q = Q ? Q->res : NULL;
    const size_t qlen = Q ? Q->len : 0;
    swgpu__ref_range_t r;
    swgpu__ref_prof_t p;
    ref_worker_t *w = NULL;
    pthread_t *th = NULL;
    char *started = NULL;
    int32_t *rows = NULL;
    uint64_t nchunks;
    int nth, rc = SWGPU_OK;

    if (!scores || !Q || (qlen && !q))
        return swgpu__fail(SWGPU_EINVAL, "ref engine: NULL query or scores");
    if (qlen == 0 || db->n == 0) {
        for (uint64_t k = 0; k < db->n; k++)
            scores[k] = 0;
        return SWGPU_OK;
    }
    r = swgpu__ref_range(Q, e->m);
    if ((rc = swgpu__ref_check_scoring(e->m, &r, e->go, e->ge)) ||
        (rc = swgpu__ref_check_local(&r, qlen, (size_t)db->max_len)))
        return rc;
    nchunks = (db->n + SCAN_CHUNK - 1) / SCAN_CHUNK;
    nth = e->threads;
    if ((uint64_t)nth > nchunks)
        nth = (int)nchunks;
    swgpu__ref_prof_init(&p, q, Q->rows, qlen, e->m);
    w = calloc((size_t)nth, sizeof *w);
    th = calloc((size_t)nth, sizeof *th);
    started = calloc((size_t)nth, 1);
    rows = malloc((size_t)nth * 3 * qlen * sizeof *rows);
    if (!w || !th || !started || !rows) {
        rc = swgpu__fail(SWGPU_ENOMEM, "ref engine: no memory for %d threads x query %zu", nth,
                         qlen);
        goto done;
    }
    for (int k = 0; k < nth; k++) {
        w[k].e = e;
        w[k].p = &p;
        w[k].scores = scores;
        w[k].rows = rows + (size_t)k * 3 * qlen;
        w[k].tid = k;
        w[k].nth = nth;
    }
    /* worker 0 runs here; one that cannot be started runs here afterwards */
    for (int k = 1; k < nth; k++)
        started[k] = pthread_create(&th[k], NULL, ref_worker, &w[k]) == 0;
    ref_worker(&w[0]);
    for (int k = 1; k < nth; k++) {
        if (started[k])
            pthread_join(th[k], NULL);
        else
            ref_worker(&w[k]);
    }
    if (st)
        st->cells += (uint64_t)qlen * db->total_res;
done:
    swgpu__ref_prof_free(&p);
    free(w);
    free(th);
    free(started);
    free(rows);
    return rc;
}

static void ref_destroy(void *state)
{
    free(state);
}

const swgpu_engine_ops_t swgpu__engine_ref = {
    .name = "ref",
    .create = ref_create,
    .scan = ref_scan,
    .destroy = ref_destroy,
};

