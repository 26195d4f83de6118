/*
 * search/search.h - the database search (never installed): the driver
 * (scan every subject with the chosen engine, select hits, align them,
 * E-values), the engine choice (backend.c), merging part results
 * (merge.c) and the output formats (format.c).
 *
 * A result is owned by the caller (swgpu_search_result_destroy).
 */
#ifndef SWGPU_SEARCH_H
#define SWGPU_SEARCH_H

#include "engine/engine.h"
#include "pssm/pssm.h"
#include "io/io.h"

/** Which hits of each query a search aligns: the first `first`, and those
 *  among the first `upto` whose E-value is <= evalue (unless first_only says
 *  otherwise for the query); the others keep no
 *  alignment (aln.score = score, no CIGAR), as with opts->no_align.  An
 *  iterated search (psi.c) needs the alignments of the hits it includes and
 *  of those it reports only. */
typedef struct {
    size_t first, upto;
    double evalue;
    /* optional: first_only(user, i, qr) nonzero when query i's result qr
     * needs its first `first` alignments only (an iterated search's query
     * that converged: its included hits make no PSSM).  Called once per
     * query, from the thread that hands out the query's hits. */
    int (*first_only)(void *user, size_t i, const swgpu_query_result_t *qr);
    void *user;
    /* with first_only: how many first hits a query that does not converge
     * needs aligned besides those the upto rule takes (an iterated search
     * whose earlier rounds are not reported: 0, as such a query's hits are
     * reported only in a later round) */
    size_t first_go_on;
    /* optional: query_done(done_user, i, qr) once query i's hits are final
     * (its alignments done), from an alignment thread or the thread that
     * hands out its hits: an iterated search builds its next PSSM while
     * the search goes on */
    void (*query_done)(void *done_user, size_t i, const swgpu_query_result_t *qr);
    void *done_user;
    /* optional: the GPU pair context (swgpu__cu_pairs_t) a cuda search uses
     * for its hits' ends instead of making its own (an iterated search's,
     * made once for all its rounds) */
    void *pairs;
} swgpu__align_sel_t;

/** swgpu_search() and swgpu_search_pssm() aligning the hits sel selects
 *  (NULL: all of them). */
int swgpu__search_sel(const swgpu_seqset_t *queries, const swgpu_db_t *db,
                      const swgpu_matrix_t *m, const swgpu_opts_t *opts,
                      const swgpu__align_sel_t *sel, swgpu_search_result_t **out);
/** A PSSM's Karlin-Altschul parameters for a search with it
 *  (swgpu__pssm_karlin_km), computed ahead: failed nonzero (msg: why) when
 *  they could not be had; the search then warns and uses the matrix's. */
typedef struct {
    swgpu_karlin_t k;
    int failed;
    char msg[256];
} swgpu__pssm_stat_t;

/** stats: each PSSM's parameters computed ahead (an iterated search
 *  computes them as it builds the PSSMs), or NULL: computed here. */
int swgpu__search_pssm_sel(const swgpu_pssm_t *const *pssms, size_t n, const swgpu_db_t *db,
                           const swgpu_matrix_t *m, const swgpu_opts_t *opts,
                           const swgpu__align_sel_t *sel, const swgpu__pssm_stat_t *stats,
                           swgpu_search_result_t **out);


/** The one dispatch point (backend.c): the engine for o->backend. */
int swgpu__engine_select(const swgpu_opts_t *o, const swgpu_engine_ops_t **ops);

#endif /* SWGPU_SEARCH_H */
