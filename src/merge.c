/*
 * merge.c - the last step of a search split over database parts:
 * swgpu_search_merge().
 *
 * Each part's search (opts->candidates) kept its best top_n candidates by
 * (score desc, database index asc); the whole search's best top_n are the
 * best top_n of their union, since every part ranks by the same key.  What
 * follows selection in search.c's sink() then happens here once, for the
 * whole database: the Karlin-Altschul parameters (published, else fitted
 * to the query's scores against every database sequence, else the
 * fallback), the E-value filter, bit scores and E-values with the whole
 * database's size.  The two must agree: tests/test_part.c compares this
 * path with swgpu_search() on the whole database, hit for hit and bit for
 * bit, in the published, fitted and fallback cases.
 */
#include "internal.h"

#include <string.h>

static int rank_cmp(const void *a, const void *b)
{
    const swgpu_hit_t *x = a, *y = b;
    if (x->score != y->score)
        return x->score > y->score ? -1 : 1;
    return (x->target > y->target) - (x->target < y->target);
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

        /* the union of the parts' candidates, best first */
        for (size_t p = 0; p < nparts; p++)
            n += parts[p]->q[i].n_hits;
        if (n > pool_cap) {
            swgpu_hit_t *x = realloc(pool, n * sizeof *x);
            if (!x) {
                rc = swgpu__fail(SWGPU_ENOMEM, "search_merge: out of memory for %zu hits", n);
                goto fail;
            }
            pool = x;
            pool_cap = n;
        }
        n = 0;
        for (size_t p = 0; p < nparts; p++)
            for (size_t h = 0; h < parts[p]->q[i].n_hits; h++) {
                memset(&pool[n], 0, sizeof pool[n]);
                pool[n].target = parts[p]->q[i].hits[h].target;
                pool[n].score = parts[p]->q[i].hits[h].score;
                n++;
            }
        qsort(pool, n, sizeof *pool, rank_cmp);
        if (n > cap)
            n = cap;

        /* the E-value filter and the statistics, with the whole database's size */
        size_t kept = 0;
        for (size_t h = 0; h < n; h++) {
            double e = swgpu_evalue(&qr->karlin, pool[h].score, q.len, src->db_residues,
                                    src->db_sequences);
            if (e <= opts->evalue)
                pool[kept++] = pool[h];
        }
        if (kept && !(qr->hits = calloc(kept, sizeof *qr->hits))) {
            rc = swgpu__fail(SWGPU_ENOMEM, "search_merge: out of memory for %zu hits", kept);
            goto fail;
        }
        for (size_t h = 0; h < kept; h++) {
            swgpu_hit_t *hit = &qr->hits[h];
            hit->target = pool[h].target;
            hit->score = pool[h].score;
            hit->bits = swgpu_bitscore(&qr->karlin, hit->score);
            hit->evalue = swgpu_evalue(&qr->karlin, hit->score, q.len, src->db_residues,
                                       src->db_sequences);
            hit->aln.score = hit->score;
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
