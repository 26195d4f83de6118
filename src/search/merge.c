/*
 * search/merge.c - the last step of a search split over database parts:
 * swgpu_search_merge().
 *
 * The search's sink (hits.c: swgpu__search_sink) picks a query's hits as
 * the best top_n, by opts->rank, of those with E-value <= opts->evalue
 * (under Spouge's model the E-value depends on the subject's length too,
 * so a weaker hit may pass where a stronger one fails: the filter comes
 * first).
 * Each part's search (opts->candidates) sent every hit of its own that may
 * be among them (see hits.c's candidates()): a hit that passes and is
 * not among its part's candidates has top_n better passing hits in its own
 * part, so the whole search's hits are the best top_n of the candidates
 * that pass.  What follows the scan in sink() then happens here once, for
 * the whole database: the Karlin-Altschul parameters (published, else
 * fitted to the query's scores against every database sequence, else the
 * fallback), the E-value filter with the whole database's size, top_n, bit
 * scores and E-values.  Where the E-value depends on the subject's length
 * (Spouge's model with parameters that have its correction: published or
 * the fallback, never fitted ones) the merge, which knows no lengths, takes
 * the candidate's own E-value, which its part computed with the same
 * parameters and the same function.  The two must agree: tests/test_part.c
 * compares this path with swgpu_search() on the whole database, hit for hit
 * and bit for bit, in the published, fitted and fallback cases, under both
 * E-value models and both ranks.
 */
#include "search/search.h"

#include <string.h>

/* the order of passing()'s sort, as hits.c's top_hits() ranks (per thread:
 * concurrent merges may rank differently) */
static _Thread_local swgpu_rank_t sort_rank;

static int rank_cmp(const void *a, const void *b)
{
    const swgpu_hit_t *x = a, *y = b;
    if (swgpu__rank_before(sort_rank, x->score, x->evalue, x->target, y->score, y->evalue,
                           y->target))
        return -1;
    return swgpu__rank_before(sort_rank, y->score, y->evalue, y->target, x->score, x->evalue,
                              x->target);
}

/* Query i's candidates of the parts that pass: score >= min_score and
 * E-value (under ev) <= max_e, best first under rank, into (*pool,
 * *pool_cap, *n); qid names the query in messages. */
static int passing(const swgpu_search_result_t *const *parts, size_t nparts, size_t i,
                   const char *qid, const swgpu__evalue_ctx_t *ev, int32_t min_score,
                   double max_e, swgpu_rank_t rank, swgpu_hit_t **pool, size_t *pool_cap,
                   size_t *out)
{
    size_t n = 0;
    for (size_t p = 0; p < nparts; p++)
        n += parts[p]->q[i].n_hits;
    if (n > *pool_cap) {
        swgpu_hit_t *x = realloc(*pool, n * sizeof *x);
        if (!x)
            return swgpu__fail(SWGPU_ENOMEM, "search_merge: out of memory for %zu hits", n);
        *pool = x;
        *pool_cap = n;
    }
    swgpu_hit_t *pl = *pool;
    n = 0;
    for (size_t p = 0; p < nparts; p++)
        for (size_t h = 0; h < parts[p]->q[i].n_hits; h++) {
            const swgpu_hit_t *c = &parts[p]->q[i].hits[h];
            if (c->score < min_score)
                continue;
            /* the subject's length only matters under Spouge's model, where the
             * candidate's part computed its E-value with these parameters */
            double e = ev->spouge ? c->evalue : swgpu__evalue_of(ev, c->score, 0);
            if (!(e <= max_e))
                continue;
            memset(&pl[n], 0, sizeof pl[n]);
            pl[n].target = c->target;
            pl[n].score = c->score;
            pl[n].evalue = e;
            pl[n].minus = c->minus;
            n++;
        }
    /* E-values that fall with the score alone: BLAST's order without them,
     * as top_hits() takes it */
    sort_rank = rank == SWGPU_RANK_EVALUE && !ev->spouge ? SWGPU__RANK_BY_SCORE_LAST : rank;
    qsort(pl, n, sizeof *pl, rank_cmp);
    for (size_t h = 1; h < n; h++)
        if (pl[h].target == pl[h - 1].target)
            return swgpu__fail(SWGPU_EINVAL, "search_merge: query %zu (id %s): database "
                               "sequence %zu is a candidate of two parts", i + 1, qid,
                               pl[h].target + 1);
    *out = n;
    return SWGPU_OK;
}

int swgpu_search_merge(const swgpu_seqset_t *queries, const swgpu_matrix_t *m,
                       const swgpu_opts_t *opts, const swgpu_search_result_t *const *parts,
                       size_t nparts, const swgpu_merge_src_t *src, swgpu_search_result_t **out)
{
    swgpu_search_result_t *r = NULL;
    swgpu_hit_t *pool = NULL;
    int32_t *scores = NULL;
    swgpu_karlin_t fixed, fallback;
    int have_fixed, have_fallback = 0, rc;
    size_t n_fallback = 0, pool_cap = 0;

    if (!out)
        return swgpu__fail(SWGPU_EINVAL, "search_merge: NULL result pointer");
    *out = NULL;
    if (!queries || !m || !opts || !src || (nparts && !parts))
        return swgpu__fail(SWGPU_EINVAL, "search_merge: NULL argument");
    if ((rc = swgpu_opts_check(opts, m)) < 0)
        return rc;
    size_t nq = swgpu_seqset_size(queries);
    for (size_t p = 0; p < nparts; p++) {
        if (!parts[p] || parts[p]->n_queries != nq)
            return swgpu__fail(SWGPU_EINVAL, "search_merge: part %zu holds %zu queries, %zu expected",
                               p, parts[p] ? parts[p]->n_queries : 0, nq);
        for (size_t i = 0; i < nq; i++)
            if (parts[p]->q[i].query != i)
                return swgpu__fail(SWGPU_EINVAL, "search_merge: part %zu: result %zu is query %zu",
                                   p, i, parts[p]->q[i].query);
    }
    have_fixed = swgpu_karlin_lookup(m, opts->gap_open, opts->gap_extend, &fixed) == SWGPU_OK;
    if (!have_fixed && nq && (!src->scores || (src->db_sequences && !src->tlen)))
        return swgpu__fail(SWGPU_EINVAL, "search_merge: matrix %s with gap open %d extend %d has "
                           "no published parameters: the merge needs every score to fit them",
                           swgpu_matrix_name(m), opts->gap_open, opts->gap_extend);

    r = calloc(1, sizeof *r);
    if (!r || !(r->q = calloc(nq ? nq : 1, sizeof *r->q)) ||
        (!have_fixed && !(scores = malloc((src->db_sequences ? src->db_sequences : 1) * sizeof *scores)))) {
        rc = swgpu__fail(SWGPU_ENOMEM, "search_merge: out of memory for %zu queries", nq);
        goto fail;
    }
    r->n_queries = nq;
    r->backend = nparts ? parts[0]->backend : "none";
    for (size_t p = 0; p < nparts; p++) {
        r->cells += parts[p]->cells;
        r->overflows += parts[p]->overflows;
        if (parts[p]->scan_seconds > r->scan_seconds)
            r->scan_seconds = parts[p]->scan_seconds;
    }

    size_t cap = (uint64_t)opts->top_n < src->db_sequences ? (size_t)opts->top_n
                                                           : (size_t)src->db_sequences;
    for (size_t i = 0; i < nq; i++) {
        swgpu_query_result_t *qr = &r->q[i];
        swgpu_seq_t q;
        size_t n = 0;
        qr->query = i;
        if ((rc = swgpu_seqset_get(queries, i, &q)) < 0)
            goto fail;

        /* the parameters, as sink() chooses them */
        if (have_fixed) {
            qr->karlin = fixed;
        } else {
            if ((rc = src->scores(src->user, i, scores)) < 0) {
                rc = swgpu__fail(rc, "search_merge: the scores of query %zu (id %s) are missing",
                                 i + 1, q.id);
                goto fail;
            }
            if (swgpu_karlin_fit(scores, src->tlen, (size_t)src->db_sequences, q.len,
                                 &qr->karlin) < 0) {
                swgpu__log(SWGPU_LOG_DEBUG, "query %zu (id %s): %s", i + 1, q.id,
                           swgpu_last_error());
                if (!have_fallback) {
                    if ((rc = swgpu__fallback_karlin(swgpu_seqset_alphabet(queries), &fallback)) < 0)
                        goto fail;
                    have_fallback = 1;
                }
                qr->karlin = fallback;
                n_fallback++;
            }
        }

        /* the E-values, with the whole database's size, as sink() computes them */
        swgpu__evalue_ctx_t ev;
        swgpu__evalue_init(&ev, &qr->karlin, opts->evalue_model, q.len, src->db_residues,
                           src->db_sequences);
        int32_t min_score = swgpu__evalue_min_score(&ev, opts->evalue);
        if (min_score < 1)
            min_score = 1;

        /* the parts' candidates that pass, best first */
        if ((rc = passing(parts, nparts, i, q.id, &ev, min_score, opts->evalue, opts->rank,
                          &pool, &pool_cap, &n)) < 0)
            goto fail;
        size_t kept = n < cap ? n : cap;
        if (kept && !(qr->hits = calloc(kept, sizeof *qr->hits))) {
            rc = swgpu__fail(SWGPU_ENOMEM, "search_merge: out of memory for %zu hits", kept);
            goto fail;
        }
        for (size_t h = 0; h < kept; h++) {
            swgpu_hit_t *hit = &qr->hits[h];
            hit->target = pool[h].target;
            hit->score = pool[h].score;
            hit->bits = swgpu_bitscore(&qr->karlin, hit->score);
            hit->evalue = pool[h].evalue;
            hit->aln.score = hit->score;
            hit->minus = pool[h].minus;
        }
        qr->n_hits = kept;
    }
    if (n_fallback)
        swgpu__log(SWGPU_LOG_WARN,
                   "no published Karlin-Altschul parameters for matrix %s with gap open %d "
                   "extend %d, and %zu of %zu queries had too few database scores to fit them "
                   "(%llu sequences): their E-values use the %s parameters and are approximate",
                   swgpu_matrix_name(m), opts->gap_open, opts->gap_extend, n_fallback, nq,
                   (unsigned long long)src->db_sequences,
                   swgpu_seqset_alphabet(queries) == SWGPU_DNA ? "DNA +2/-3 open 5 extend 2"
                                                               : "BLOSUM62 open 11 extend 1");
    free(pool);
    free(scores);
    *out = r;
    return SWGPU_OK;

fail:
    free(pool);
    free(scores);
    swgpu_search_result_destroy(r);
    return rc;
}
