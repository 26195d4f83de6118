/*
 * search/strands.c - the strands of a DNA search: the engine queries (the
 * queries, their reverse complements, or both) and the sink that hands
 * each query's sink the better strand's scores; the scan of them all
 * (swgpu__strands_scan).
 */
#include "search/search.h"

#include <string.h>

void swgpu__strands_free(swgpu__strands_t *st, size_t nq)
{
    if (st->pending)
        for (size_t i = 0; i < nq; i++)
            free(st->pending[i]);
    free(st->pending);
    free(st->pending_minus);
    free(st->merged);
    free(st->ahead_rows);
    free(st->ahead_pos);
    free(st->flags);
    free(st->res);
    free(st->eq);
    memset(st, 0, sizeof *st);
}

/* The engine queries of nq queries qs (st->eq, st->neq) for opts->strand,
 * and the state of swgpu__strands_sink() passing scores on to inner(user, ...);
 * st->eq NULL: the queries themselves.  n: the database's sequences. */
int swgpu__strands_init(swgpu__strands_t *st, const swgpu__query_t *qs, size_t nq,
                        swgpu_alphabet_t qa, const swgpu_opts_t *opts, uint64_t n, swgpu_scan_sink_t inner,
                        void *user, const uint8_t **flags_out)
{
    memset(st, 0, sizeof *st);
    st->inner = inner;
    st->user = user;
    st->n = n;
    st->neq = nq;
    st->flags_out = flags_out;
    if (qa != SWGPU_DNA || opts->strand == SWGPU_STRAND_PLUS)
        return SWGPU_OK;
    st->both = opts->strand == SWGPU_STRAND_BOTH;
    st->minus = !st->both;
    st->neq = st->both ? 2 * nq : nq;
    size_t total = 0;
    for (size_t i = 0; i < nq; i++)
        total += qs[i].len;
    if (!(st->res = malloc(total ? total : 1)) ||
        !(st->eq = malloc((st->neq ? st->neq : 1) * sizeof *st->eq)) ||
        !(st->flags = malloc(n ? n : 1)) ||
        (st->both && (!(st->pending = calloc(nq ? nq : 1, sizeof *st->pending)) ||
                      !(st->pending_minus = calloc(nq ? nq : 1, 1)) ||
                      !(st->merged = malloc((n ? n : 1) * sizeof *st->merged))))) {
        swgpu__strands_free(st, 0);
        return swgpu__fail(SWGPU_ENOMEM, "search: out of memory for the minus strand of %zu "
                           "queries", nq);
    }
    if (st->minus)
        memset(st->flags, 1, n);
    for (size_t i = 0, at = 0; i < nq; at += qs[i].len, i++) {
        swgpu_dna_revcomp(qs[i].res, qs[i].len, st->res + at);
        swgpu__query_t rq = swgpu__query_plain(st->res + at, qs[i].len);
        if (st->both) {
            st->eq[2 * i] = qs[i];
            st->eq[2 * i + 1] = rq;
        } else {
            st->eq[i] = rq;
        }
    }
    return SWGPU_OK;
}

/* the engine's scores of engine query k (a swgpu_scan_sink_t on a swgpu__strands_t) */
int swgpu__strands_sink(void *user, size_t k, const int32_t *scores)
{
    swgpu__strands_t *st = user;
    if (!st->both) {
        if (st->flags_out)
            *st->flags_out = st->minus ? st->flags : NULL;
        return st->inner(st->user, k, scores);
    }
    size_t i = k / 2;
    int minus = (int)(k % 2);
    if (!st->pending[i]) { /* the first of the two: kept until the other comes */
        int32_t *p = malloc((st->n ? st->n : 1) * sizeof *scores);
        if (!p)
            return swgpu__fail(SWGPU_ENOMEM, "search: out of memory for %llu scores",
                               (unsigned long long)st->n);
        memcpy(p, scores, st->n * sizeof *scores);
        st->pending_minus[i] = (uint8_t)minus;
        /* published whole: the other strand's thread may read it (ahead_threads) */
        __atomic_store_n(&st->pending[i], p, __ATOMIC_RELEASE);
        return SWGPU_OK;
    }
    const int32_t *plus = minus ? st->pending[i] : scores, *mn = minus ? scores : st->pending[i];
    for (uint64_t t = 0; t < st->n; t++) {
        int m = mn[t] > plus[t];
        st->merged[t] = m ? mn[t] : plus[t];
        st->flags[t] = (uint8_t)m;
    }
    free(st->pending[i]);
    __atomic_store_n(&st->pending[i], NULL, __ATOMIC_RELAXED);
    if (st->flags_out)
        *st->flags_out = st->flags;
    return st->inner(st->user, i, st->merged);
}

/* the two strands' best of each subject, as the sink merges them */
static void merge_rows(uint64_t n, const int32_t *plus, const int32_t *mn, int32_t *out)
{
    for (uint64_t t = 0; t < n; t++)
        out[t] = mn[t] > plus[t] ? mn[t] : plus[t];
}

/* engine query k's row and its other strand's, merged (k odd: the minus
 * strand's) */
static void merge_strands(uint64_t n, size_t k, const int32_t *row, const int32_t *other,
                          int32_t *out)
{
    if (k % 2)
        merge_rows(n, other, row, out);
    else
        merge_rows(n, row, other, out);
}

/* ahead_both: the other strand's row of batch entry j, earlier in the batch
 * or pending from an earlier one; NULL when it comes after j */
static const int32_t *other_strand(const swgpu__strands_t *st, const size_t *idx,
                                   const int32_t *const *rows, size_t j)
{
    const size_t p = st->ahead_pos[idx[j] ^ 1];
    if (p)
        return p - 1 < j ? rows[p - 1] : NULL;
    return st->pending[idx[j] / 2];
}

/* both strands: the batch's queries whose sink call it makes (their second
 * strand in it), their merged rows in st->ahead_rows, to inner_ahead */
static int ahead_both(swgpu__strands_t *st, size_t n, const size_t *idx,
                      const int32_t *const *rows)
{
    size_t m = 0;
    int rc = SWGPU_OK;
    if (!st->ahead_pos && !(st->ahead_pos = calloc(st->neq ? st->neq : 1, sizeof *st->ahead_pos)))
        return SWGPU_OK; /* the sink fits them itself */
    for (size_t j = 0; j < n; j++)
        st->ahead_pos[idx[j]] = j + 1;
    for (size_t j = 0; j < n; j++) /* the queries completed here */
        m += other_strand(st, idx, rows, j) != NULL;
    size_t *qi = malloc((m ? m : 1) * sizeof *qi);
    const int32_t **qr = malloc((m ? m : 1) * sizeof *qr);
    if (m > st->ahead_cap) {
        free(st->ahead_rows);
        st->ahead_cap = 0;
        if ((st->ahead_rows = malloc(m * (st->n ? st->n : 1) * sizeof *st->ahead_rows)))
            st->ahead_cap = m;
    }
    if (!qi || !qr || m > st->ahead_cap)
        m = 0; /* the sink fits them itself */
    for (size_t j = 0, k = 0; j < n && k < m; j++) {
        const int32_t *other = other_strand(st, idx, rows, j);
        if (!other)
            continue;
        int32_t *out = st->ahead_rows + k * st->n;
        merge_strands(st->n, idx[j], rows[j], other, out);
        qi[k] = idx[j] / 2;
        qr[k++] = out;
    }
    for (size_t j = 0; j < n; j++)
        st->ahead_pos[idx[j]] = 0;
    if (m)
        rc = st->inner_ahead(st->user, m, qi, qr);
    free(qi);
    free(qr);
    return rc;
}

/*
 * Both strands, an engine that offers each engine query from its scanning
 * thread just before that query's sink call (SWGPU__CAP_AHEAD_THREADS):
 * when the other strand's scores are already pending, this sink call
 * completes query k / 2, so its merged row is made here and offered, off
 * the engine's lock (the pending row stays until this thread's own sink
 * call frees it).  Otherwise nothing: the other strand's thread offers the
 * query if its sink call comes second, or (both offers before either sink
 * call) the sink fits the query itself.
 */
static int ahead_threads(void *user, size_t n, const size_t *idx, const int32_t *const *rows)
{
    swgpu__strands_t *st = user;
    int rc = SWGPU_OK;
    for (size_t j = 0; j < n && rc == SWGPU_OK; j++) {
        const size_t k = idx[j], i = k / 2;
        const int32_t *other = __atomic_load_n(&st->pending[i], __ATOMIC_ACQUIRE);
        int32_t *out = other ? malloc((st->n ? st->n : 1) * sizeof *out) : NULL;
        if (!out)
            continue; /* the sink fits it */
        merge_strands(st->n, k, rows[j], other, out);
        const int32_t *row = out;
        rc = st->inner_ahead(st->user, 1, &i, &row);
        free(out);
    }
    return rc;
}

/* a batch's rows to inner_ahead: the queries' own when the engine's queries
 * are the queries; both strands: each query's merged row (ahead_both) */
int swgpu__strands_ahead(void *user, size_t n, const size_t *idx, const int32_t *const *rows)
{
    swgpu__strands_t *st = user;
    if (!st->inner_ahead)
        return SWGPU_OK;
    if (st->both)
        return ahead_both(st, n, idx, rows);
    return st->inner_ahead(st->user, n, idx, rows);
}

int swgpu__strands_scan(const swgpu_engine_ops_t *ops, void *state, swgpu__strands_t *st,
                        const swgpu__query_t *qs, uint64_t n, swgpu_scan_stats_t *stats,
                        const char *what)
{
    const swgpu__query_t *eq = st->eq ? st->eq : qs;
    if (ops->scan_many)
        return ops->scan_many(state, st->neq, eq, swgpu__strands_sink,
                              !st->inner_ahead ? NULL
                              : st->both && (ops->caps & SWGPU__CAP_AHEAD_THREADS)
                                  ? ahead_threads
                                  : swgpu__strands_ahead,
                              st, stats);
    int32_t *scores = malloc((n ? n : 1) * sizeof *scores);
    if (!scores)
        return swgpu__fail(SWGPU_ENOMEM, "%s: out of memory for %llu database scores", what,
                           (unsigned long long)n);
    int rc = SWGPU_OK;
    for (size_t i = 0; i < st->neq && rc == SWGPU_OK; i++) {
        rc = ops->scan(state, &eq[i], scores, stats);
        if (rc == SWGPU_OK)
            rc = swgpu__strands_sink(st, i, scores);
    }
    free(scores);
    return rc;
}
