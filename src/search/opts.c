/*
 * search/opts.c - a search's options (swgpu_opts_init, swgpu_opts_check)
 * and the checks of its inputs: the database, matrix and queries agree,
 * and no query's score can overflow 32 bits.
 */
#include "search/search.h"

#include <string.h>

/* Larger penalties than this are almost certainly a typing error (and
 * would let qlen * penalty overflow 32-bit scores sooner). */
#define GAP_MAX 1000

/* ---------------------------------------------------------------- options */

void swgpu_opts_init(swgpu_opts_t *o, swgpu_alphabet_t alphabet)
{
    if (!o)
        return;
    memset(o, 0, sizeof *o);
    if (alphabet == SWGPU_DNA) {
        o->gap_open = 5;
        o->gap_extend = 2;
    } else {
        o->gap_open = 11;
        o->gap_extend = 1;
    }
    o->top_n = 10;
    o->evalue = 10.0;
    o->threads = 0;
    o->backend = SWGPU_BACKEND_AUTO;
    o->kernel = NULL;
    o->gpus = 0;
    o->max_gpu_memory = 0;
    o->no_align = 0;
    o->no_self = 0;
    o->evalue_model = SWGPU_EVALUE_SPOUGE;
    o->strand = SWGPU_STRAND_BOTH;
    o->rank = SWGPU_RANK_EVALUE;
}

int swgpu_opts_check(const swgpu_opts_t *o, const swgpu_matrix_t *m)
{
    if (!o)
        return swgpu__fail(SWGPU_EINVAL, "options: NULL argument");
    if (o->gap_open < 0)
        return swgpu__fail(SWGPU_EINVAL,
                           "gap open %d is negative: give penalties as positive numbers "
                           "(a gap of length k costs open + k*extend)", o->gap_open);
    if (o->gap_extend < 0)
        return swgpu__fail(SWGPU_EINVAL,
                           "gap extend %d is negative: give penalties as positive numbers "
                           "(a gap of length k costs open + k*extend)", o->gap_extend);
    if (o->gap_open > GAP_MAX)
        return swgpu__fail(SWGPU_EINVAL, "gap open %d is absurd (at most %d)",
                           o->gap_open, GAP_MAX);
    if (o->gap_extend > GAP_MAX)
        return swgpu__fail(SWGPU_EINVAL, "gap extend %d is absurd (at most %d)",
                           o->gap_extend, GAP_MAX);
    if (o->gap_open == 0 && o->gap_extend == 0)
        return swgpu__fail(SWGPU_EINVAL,
                           "gap open and gap extend are both 0: gaps would be free");
    if (o->top_n < 1)
        return swgpu__fail(SWGPU_EINVAL, "top hits %d: -n must be >= 1", o->top_n);
    if (!(o->evalue > 0.0))
        return swgpu__fail(SWGPU_EINVAL, "E-value threshold %g: must be > 0", o->evalue);
    if (o->threads < 0)
        return swgpu__fail(SWGPU_EINVAL, "threads %d: must be >= 0 (0 = all cores)",
                           o->threads);
    if (o->gpus < 0)
        return swgpu__fail(SWGPU_EINVAL, "gpus %d: must be >= 0 (0 = all visible)", o->gpus);
    if (o->backend < SWGPU_BACKEND_AUTO || o->backend > SWGPU_BACKEND_CUDA)
        return swgpu__fail(SWGPU_EINVAL, "backend %d: unknown", (int)o->backend);
    if (o->evalue_model != SWGPU_EVALUE_SPOUGE && o->evalue_model != SWGPU_EVALUE_OLD_FSC)
        return swgpu__fail(SWGPU_EINVAL, "E-value model %d: unknown", (int)o->evalue_model);
    if (o->strand != SWGPU_STRAND_BOTH && o->strand != SWGPU_STRAND_PLUS &&
        o->strand != SWGPU_STRAND_MINUS)
        return swgpu__fail(SWGPU_EINVAL, "strand %d: unknown", (int)o->strand);
    if (o->rank != SWGPU_RANK_EVALUE && o->rank != SWGPU_RANK_SCORE)
        return swgpu__fail(SWGPU_EINVAL, "rank %d: unknown (evalue or score)", (int)o->rank);
    if (o->comp_based_stats < 0 || o->comp_based_stats > 3)
        return swgpu__fail(SWGPU_EINVAL, "comp-based-stats %d: must be 0, 1, 2 or 3",
                           o->comp_based_stats);
    if (o->comp_based_stats && o->candidates)
        return swgpu__fail(SWGPU_EINVAL, "comp-based-stats %d: not with a search split over "
                           "database parts (candidates)", o->comp_based_stats);
    if (m && o->comp_based_stats && swgpu_matrix_alphabet(m) != SWGPU_PROTEIN)
        return swgpu__fail(SWGPU_EINVAL, "comp-based-stats %d: composition-based statistics "
                           "are for protein searches; matrix %s is not a protein matrix",
                           o->comp_based_stats, swgpu_matrix_name(m));
    if (o->max_hsps < 0)
        return swgpu__fail(SWGPU_EINVAL, "max HSPs %d: must be >= 1 (alignments per query, "
                           "subject and strand)", o->max_hsps);
    if (o->max_hsps > 1 && o->comp_based_stats)
        return swgpu__fail(SWGPU_EINVAL, "max HSPs %d: not yet with comp-based-stats %d (one "
                           "alignment per subject under the adjusted matrices)", o->max_hsps,
                           o->comp_based_stats);
    if (o->max_hsps > 1 && o->no_align)
        return swgpu__fail(SWGPU_EINVAL, "max HSPs %d: the further alignments need the "
                           "alignments (not with no_align)", o->max_hsps);
    if (m) {
        swgpu_alphabet_t a = swgpu_matrix_alphabet(m);
        if (a != SWGPU_PROTEIN && a != SWGPU_DNA)
            return swgpu__fail(SWGPU_EMATRIX, "matrix %s: no alphabet", swgpu_matrix_name(m));
        if (swgpu_matrix_max(m) <= 0)
            return swgpu__fail(SWGPU_EMATRIX,
                               "matrix %s: no positive score, every local alignment is empty",
                               swgpu_matrix_name(m));
        if (swgpu_matrix_max(m) > GAP_MAX || swgpu_matrix_min(m) < -GAP_MAX)
            return swgpu__fail(SWGPU_EMATRIX, "matrix %s: scores beyond +-%d are absurd for a search",
                               swgpu_matrix_name(m), GAP_MAX);
    }
    return SWGPU_OK;
}

/* Common checks of a search's database, matrix and options; the queries'
 * alphabet qa must be the database's and the matrix's. */
int swgpu__search_check(swgpu_alphabet_t qa, const swgpu_db_t *db, const swgpu_matrix_t *m,
                        const swgpu_opts_t *opts)
{
    int rc;
    if ((rc = swgpu_opts_check(opts, m)) < 0)
        return rc;
    swgpu_alphabet_t da = swgpu_db_alphabet(db), ma = swgpu_matrix_alphabet(m);
    if (qa != da)
        return swgpu__fail(SWGPU_EALPHABET,
                           "the queries are %s sequences but the database holds %s sequences",
                           swgpu_alphabet_name(qa), swgpu_alphabet_name(da));
    if (ma != qa)
        return swgpu__fail(SWGPU_EALPHABET, "matrix %s scores %s sequences but the queries are %s",
                           swgpu_matrix_name(m), swgpu_alphabet_name(ma), swgpu_alphabet_name(qa));
    return swgpu__check_db_seqs(db->n, "search", NULL);
}

/* Scores are 32-bit: the best possible score of query i is max * qlen. */
int swgpu__query_range_check(const swgpu__query_t *q, const char *id, size_t i, int32_t smax)
{
    if (smax > 0 && (uint64_t)q->len > (uint64_t)INT32_MAX / (uint64_t)smax)
        return swgpu__fail(SWGPU_ERANGE,
                           "query %zu (id %s): %zu residues with %s maximum %d may exceed a "
                           "32-bit score", i + 1, id, q->len, q->rows ? "PSSM" : "matrix",
                           (int)smax);
    return SWGPU_OK;
}

/* The sequences of a query set as the engines' queries, checked against
 * the database, matrix and options (*qs and *ids: the caller frees them) */
int swgpu__seqset_queries(const swgpu_seqset_t *queries, const swgpu_db_t *db,
                          const swgpu_matrix_t *m, const swgpu_opts_t *opts,
                          swgpu__query_t **qs, const char ***ids)
{
    swgpu_alphabet_t qa = swgpu_seqset_alphabet(queries);
    int rc;
    *qs = NULL;
    *ids = NULL;
    if ((rc = swgpu__search_check(qa, db, m, opts)) < 0)
        return rc;
    size_t nq = swgpu_seqset_size(queries);
    swgpu__query_t *q = malloc((nq ? nq : 1) * sizeof *q);
    const char **id = malloc((nq ? nq : 1) * sizeof *id);
    if (!q || !id) {
        rc = swgpu__fail(SWGPU_ENOMEM, "search: out of memory for %zu queries", nq);
        goto fail;
    }
    for (size_t i = 0; i < nq; i++) {
        swgpu_seq_t sq;
        if ((rc = swgpu_seqset_get(queries, i, &sq)) < 0)
            goto fail;
        q[i] = swgpu__query_plain(sq.res, sq.len);
        id[i] = sq.id;
        if ((rc = swgpu__query_range_check(&q[i], sq.id, i, swgpu_matrix_max(m))) < 0)
            goto fail;
    }
    *qs = q;
    *ids = id;
    return SWGPU_OK;
fail:
    free(q);
    free(id);
    return rc;
}

