/*
 * search/search.c - the database search's driver (swgpu_search,
 * swgpu_search_pssm and the statistics of PSSM queries, swgpu_scan_scores):
 * the phases below, each done by its own file: options and checks
 * (opts.c), the engine (backend.c), the strands of a DNA search
 * (strands.c), hit selection (hits.c), the alignments (pipeline.c).
 *
 * For every query:
 *   1. the engine (backend.c picks it once per search) scores the query
 *      against every database sequence: scores[k] for sorted index k;
 *   2. Karlin-Altschul parameters: the published ones for the matrix and gap
 *      pair, else a fit to this query's own score distribution;
 *   3. the top_n hits with score > 0 and E-value <= opts->evalue are chosen
 *      by opts->rank (BLAST's: E-value asc, score desc, database index
 *      desc; or score desc, database index asc) - deterministic whatever
 *      the engine.  Under Spouge's model the E-value depends on the
 *      subject's length too, so the filter comes first: only scores from
 *      swgpu__evalue_min_score up can pass, and of those the E-value is
 *      computed for the candidates that could enter the top_n (hits.c).
 * Then the alignments of all kept hits are computed on opts->threads
 * threads: the end by the SIMD pair engine (swgpu__cpu_score_pair_q, one
 * thread, the reference's tie rule), the begin and the path by the
 * reference engine (swgpu__align_from_end_q), each hit in its own slot
 * (so the result does not depend on the thread count), and each alignment
 * score is checked against the score the engine reported: a mismatch is an
 * internal error, never a silently different result.
 *
 * Queries are sequences (swgpu_search) or PSSMs (swgpu_search_pssm): both
 * become an array of swgpu__query_t (score/score.h) with their ids, and every
 * step above is the same for both.
 *
 * A search split over database parts (swgpu-mpi): each part's search with
 * opts->candidates stops after the scan with the hits of its own that may
 * be among the whole search's (hits.c's candidates()), swgpu_search_merge()
 * (merge.c) repeats steps 2 and 3 for the whole database, and
 * swgpu_search_align() aligns each part's share of the kept hits.
 */
#include "search/search.h"
#include "simd/simd.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

/* ---------------------------------------------------------------- search */

void swgpu_search_result_destroy(swgpu_search_result_t *r)
{
    if (!r)
        return;
    if (r->q) {
        for (size_t i = 0; i < r->n_queries; i++) {
            for (size_t h = 0; h < r->q[i].n_hits; h++)
                swgpu_aln_free(&r->q[i].hits[h].aln);
            free(r->q[i].hits);
        }
        free(r->q);
    }
    free(r);
}

static int search_run(const swgpu__query_t *qs, const char *const *ids, size_t nq,
                      swgpu_alphabet_t qa, const swgpu_db_t *db, const swgpu_matrix_t *m,
                      const swgpu_opts_t *opts, const swgpu_karlin_t *qfixed,
                      const swgpu__align_sel_t *sel, swgpu_search_result_t **out);

int swgpu__search_sel(const swgpu_seqset_t *queries, const swgpu_db_t *db,
                      const swgpu_matrix_t *m, const swgpu_opts_t *opts,
                      const swgpu__align_sel_t *sel, swgpu_search_result_t **out)
{
    swgpu__query_t *qs = NULL;
    const char **ids = NULL;
    int rc;

    if (!out)
        return swgpu__fail(SWGPU_EINVAL, "search: NULL result pointer");
    *out = NULL;
    if (!queries || !db || !m || !opts)
        return swgpu__fail(SWGPU_EINVAL, "search: NULL argument");
    if (opts->comp_based_stats) /* swgpu_search() takes it (cbs.c) */
        return swgpu__fail(SWGPU_EINVAL, "comp-based-stats %d: not yet with an iterated "
                           "search", opts->comp_based_stats);
    if ((rc = swgpu__seqset_queries(queries, db, m, opts, &qs, &ids)) == SWGPU_OK)
        rc = search_run(qs, ids, swgpu_seqset_size(queries), swgpu_seqset_alphabet(queries), db,
                        m, opts, NULL, sel, out);
    free(qs);
    free(ids);
    return rc;
}

/* psiblast's parameters of each PSSM (swgpu_pssm_karlin: its ungapped K, a
 * few milliseconds each), on opts->threads threads; the matrix's (fixed) for
 * a PSSM whose cannot be had, with a warning. */
typedef struct {
    const swgpu_pssm_t *const *pssms;
    const swgpu_matrix_t *m;
    const swgpu_opts_t *o;
    swgpu_karlin_t *k;
    const double *m_K; /* m's ideal ungapped K, computed once (NULL: by each job) */
    int *failed;
    char (*msg)[256];
    atomic_ullong cpu_us; /* CPU microseconds of the jobs (phase timings) */
    atomic_ullong max_us; /* the longest job's wall microseconds */
} karlin_jobs_t;

static void karlin_one(void *arg, size_t i)
{
    karlin_jobs_t *J = arg;
    const double cpu0 = swgpu__thread_cpu(), t0 = swgpu__now();
    if ((J->failed[i] = swgpu__pssm_karlin_km(J->pssms[i], J->m, J->o->gap_open,
                                              J->o->gap_extend, J->m_K, &J->k[i]) < 0))
        snprintf(J->msg[i], sizeof J->msg[i], "%s", swgpu_last_error());
    unsigned long long us = (unsigned long long)(1e6 * (swgpu__now() - t0)),
                       was = atomic_load(&J->max_us);
    while (us > was && !atomic_compare_exchange_weak(&J->max_us, &was, us))
        ;
    atomic_fetch_add(&J->cpu_us, (unsigned long long)(1e6 * (swgpu__thread_cpu() - cpu0)));
}

static int pssm_karlins(const swgpu_pssm_t *const *pssms, size_t n, const swgpu_matrix_t *m,
                        const swgpu_opts_t *opts, const swgpu_karlin_t *fixed, swgpu_karlin_t *k)
{
    karlin_jobs_t J;
    memset(&J, 0, sizeof J);
    J.pssms = pssms;
    J.m = m;
    J.o = opts;
    J.k = k;
    double lm, km, hm; /* the matrix's part of every PSSM's K: once */
    if (n && swgpu__matrix_ideal_karlin(m, &lm, &km, &hm) == SWGPU_OK)
        J.m_K = &km;
    J.failed = calloc(n ? n : 1, sizeof *J.failed);
    J.msg = calloc(n ? n : 1, sizeof *J.msg);
    size_t nt = opts->threads > 0 ? (size_t)opts->threads : (size_t)swgpu__ncores();
    if (!J.failed || !J.msg) {
        free(J.failed);
        free(J.msg);
        return swgpu__fail(SWGPU_ENOMEM, "search: out of memory for %zu PSSMs", n);
    }
    atomic_init(&J.cpu_us, 0);
    atomic_init(&J.max_us, 0);
    if (nt > n)
        nt = n;
    double t0 = swgpu__now();
    swgpu__par_for(n, (int)nt, karlin_one, &J);
    swgpu__log(SWGPU_LOG_DEBUG, "statistics of %zu PSSMs: %.3f s on up to %zu threads, %.3f CPU s "
               "(the longest %.3f s)", n, swgpu__now() - t0, nt ? nt : 1,
               atomic_load(&J.cpu_us) * 1e-6, atomic_load(&J.max_us) * 1e-6);
    for (size_t i = 0; i < n; i++)
        if (J.failed[i]) {
            swgpu__log(SWGPU_LOG_WARN, "%s: the E-values use the parameters of matrix %s "
                       "unchanged", J.msg[i], swgpu_matrix_name(m));
            k[i] = *fixed;
        }
    free(J.failed);
    free(J.msg);
    return SWGPU_OK;
}

int swgpu_search_pssm(const swgpu_pssm_t *const *pssms, size_t n, const swgpu_db_t *db,
                      const swgpu_matrix_t *m, const swgpu_opts_t *opts,
                      swgpu_search_result_t **out)
{
    return swgpu__search_pssm_sel(pssms, n, db, m, opts, NULL, NULL, out);
}

int swgpu__search_pssm_sel(const swgpu_pssm_t *const *pssms, size_t n, const swgpu_db_t *db,
                           const swgpu_matrix_t *m, const swgpu_opts_t *opts,
                           const swgpu__align_sel_t *sel, const swgpu__pssm_stat_t *stats,
                           swgpu_search_result_t **out)
{
    swgpu__query_t *qs = NULL;
    const char **ids = NULL;
    swgpu_karlin_t *kq = NULL, fixed;
    int rc;

    if (!out)
        return swgpu__fail(SWGPU_EINVAL, "search: NULL result pointer");
    *out = NULL;
    if ((!pssms && n) || !db || !m || !opts)
        return swgpu__fail(SWGPU_EINVAL, "search: NULL argument");
    if (opts->comp_based_stats)
        return swgpu__fail(SWGPU_EINVAL, "comp-based-stats %d: not with PSSM queries (their "
                           "scores are already position-specific); use 0",
                           opts->comp_based_stats);
    if ((rc = swgpu__search_check(SWGPU_PROTEIN, db, m, opts)) < 0)
        return rc;
    int have_fixed = swgpu_karlin_lookup(m, opts->gap_open, opts->gap_extend, &fixed) == SWGPU_OK;
    qs = malloc((n ? n : 1) * sizeof *qs);
    ids = malloc((n ? n : 1) * sizeof *ids);
    kq = malloc((n ? n : 1) * sizeof *kq);
    if (!qs || !ids || !kq) {
        rc = swgpu__fail(SWGPU_ENOMEM, "search: out of memory for %zu PSSMs", n);
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        if (!pssms[i]) {
            rc = swgpu__fail(SWGPU_EINVAL, "search: PSSM %zu is NULL", i + 1);
            goto done;
        }
        swgpu__pssm_query(pssms[i], &qs[i]);
        ids[i] = swgpu_pssm_id(pssms[i]);
        if ((rc = swgpu__query_range_check(&qs[i], ids[i], i, qs[i].smax)) < 0)
            goto done;
    }
    if (have_fixed && stats) { /* computed ahead: as pssm_karlins would have */
        for (size_t i = 0; i < n; i++) {
            if (stats[i].failed)
                swgpu__log(SWGPU_LOG_WARN, "%s: the E-values use the parameters of matrix %s "
                           "unchanged", stats[i].msg, swgpu_matrix_name(m));
            kq[i] = stats[i].failed ? fixed : stats[i].k;
        }
    } else if (have_fixed && (rc = pssm_karlins(pssms, n, m, opts, &fixed, kq)) < 0) {
        goto done;
    }
    rc = search_run(qs, ids, n, SWGPU_PROTEIN, db, m, opts, have_fixed ? kq : NULL, sel, out);
done:
    free(qs);
    free(ids);
    free(kq);
    return rc;
}

/* ------------------------------------------------------------ the driver */

/* The search's result (c->r, its queries numbered), the heap of c->cap
 * hits, the per-query counts of sel->query_done, the database's lengths
 * (*tlen) and, for --no-self, its id order (*id_ord); c->o and c->sel set.
 * On failure the caller frees what was made. */
static int search_alloc(swgpu__pipe_t *c, size_t nq, const swgpu_db_t *db,
                        const swgpu_engine_ops_t *ops, uint64_t **tlen, uint32_t **id_ord)
{
    const swgpu_opts_t *opts = c->o;
    swgpu_search_result_t *r;
    int rc;
    c->cap = (uint64_t)opts->top_n < db->n ? (size_t)opts->top_n : (size_t)db->n;
    c->r = r = calloc(1, sizeof *r);
    if (!r || !(r->q = calloc(nq ? nq : 1, sizeof *r->q)) ||
        !(*tlen = malloc((db->n ? db->n : 1) * sizeof **tlen)) ||
        !(c->heap = malloc((c->cap + 8 ? c->cap + 8 : 1) * sizeof *c->heap)))
        return swgpu__fail(SWGPU_ENOMEM, "search: out of memory for %llu database scores",
                           (unsigned long long)db->n);
    r->n_queries = nq;
    r->backend = ops->name;
    if (c->sel && c->sel->query_done && !(c->left = calloc(nq ? nq : 1, sizeof *c->left)))
        return swgpu__fail(SWGPU_ENOMEM, "search: out of memory for %zu queries", nq);
    for (size_t i = 0; i < nq; i++)
        r->q[i].query = i;
    for (uint64_t k = 0; k < db->n; k++)
        (*tlen)[k] = db->off[k + 1] - db->off[k];
    if (opts->no_self && db->n && (rc = swgpu__id_order(db, id_ord)) < 0)
        return rc;
    c->tlen = *tlen;
    c->id_ord = *id_ord;
    return SWGPU_OK;
}

/* The scan of every query (each strand asked for) by ops (state) into the
 * sink, which selects the hits and queues their alignments; the counters
 * into c->r. */
static int search_scan(swgpu__pipe_t *c, size_t nq, const swgpu_engine_ops_t *ops, void *state)
{
    const swgpu_db_t *db = c->db;
    int rc = swgpu__strands_init(&c->strands, c->qs, nq, c->alphabet, c->o, db->n,
                                 swgpu__search_sink, c, &c->minus);
    /* fits ahead only where the sink would fit (no published parameters) */
    c->strands.inner_ahead = swgpu__search_ahead_init(c) ? swgpu__search_ahead : NULL;
    const swgpu__query_t *eq = c->strands.eq ? c->strands.eq : c->qs;
    for (size_t i = 0; i < c->strands.neq; i++)
        c->cells_total += (uint64_t)eq[i].len * db->total_res;
    if (rc == SWGPU_OK) {
        swgpu_scan_stats_t st = {0, 0, 0};
        rc = swgpu__strands_scan(ops, state, &c->strands, c->qs, db->n, &st, "search");
        c->r->cells = st.cells;
        c->r->overflows = st.overflows;
    }
    swgpu__strands_free(&c->strands, nq);
    return rc;
}

/* The warning of a search some of whose queries took the fallback
 * parameters. */
static void warn_fallback(const swgpu__pipe_t *c, size_t nq)
{
    if (c->n_fallback)
        swgpu__log(SWGPU_LOG_WARN,
                   "no published Karlin-Altschul parameters for matrix %s with gap open %d "
                   "extend %d, and %zu of %zu queries had too few database scores to fit them "
                   "(%llu sequences): their E-values use the %s parameters and are approximate",
                   swgpu_matrix_name(c->m), c->o->gap_open, c->o->gap_extend, c->n_fallback, nq,
                   (unsigned long long)c->db->n,
                   c->alphabet == SWGPU_DNA ? "DNA +2/-3 open 5 extend 2"
                                            : "BLOSUM62 open 11 extend 1");
}

/* An engine released on its own thread (search_run), and how long it took. */
typedef struct {
    const swgpu_engine_ops_t *ops;
    void *state;
    double seconds;
} release_t;

static void *release_engine(void *arg)
{
    release_t *r = arg;
    double t = swgpu__now();
    r->ops->destroy(r->state);
    r->seconds = swgpu__now() - t;
    return NULL;
}

/* The search of nq queries (checked), their ids for messages and --no-self;
 * qa their alphabet.  The phases: the engine's set-up, the alignment
 * threads, the scan (hits selected and queued as each query's scores
 * come), the engine's release, the alignments still queued. */
static int search_run(const swgpu__query_t *qs, const char *const *ids, size_t nq,
                      swgpu_alphabet_t qa, const swgpu_db_t *db, const swgpu_matrix_t *m,
                      const swgpu_opts_t *opts, const swgpu_karlin_t *qfixed,
                      const swgpu__align_sel_t *sel, swgpu_search_result_t **out)
{
    const swgpu_engine_ops_t *ops = NULL;
    void *state = NULL;
    uint64_t *tlen = NULL;
    uint32_t *id_ord = NULL;
    swgpu__pipe_t c;
    int rc;

    swgpu__isa_t isa; /* a bad SWGPU_CPU_ISA is refused before any work */
    if ((rc = swgpu__cpu_isa_env(&isa)))
        return rc;
    memset(&c, 0, sizeof c);
    pthread_mutex_init(&c.lock, NULL);
    pthread_cond_init(&c.cv, NULL);
    c.sel = sel;
    c.have_fixed =
        swgpu_karlin_lookup(m, opts->gap_open, opts->gap_extend, &c.fixed) == SWGPU_OK;
    c.qfixed = c.have_fixed ? qfixed : NULL;
    swgpu_opts_t cand_opts; /* candidates: no alignments */
    if (opts->candidates) {
        cand_opts = *opts;
        cand_opts.no_align = 1;
        opts = &cand_opts;
    }
    c.qs = qs;
    c.ids = ids;
    c.db = db;
    c.m = m;
    c.o = opts;
    c.alphabet = qa;

    if ((rc = swgpu__engine_select(opts, &ops)) < 0 ||
        (rc = search_alloc(&c, nq, db, ops, &tlen, &id_ord)) < 0 ||
        (rc = swgpu__hsps_lists(&c, nq)) < 0)
        goto done;
    double t_create = swgpu__now();
    if ((rc = ops->create(db, m, opts, &state)) < 0)
        goto done;
    t_create = swgpu__now() - t_create;
    double t0 = swgpu__now(); /* the scan's clock, before the threads that read it */
    c.t0 = c.t_report = t0;
    if (!opts->no_align)
        swgpu__aligners_start(&c, ops);

    rc = search_scan(&c, nq, ops, state);
    double t1 = swgpu__now();
    c.r->scan_seconds = t1 - t0;
    /* the engine is released (a GPU's buffers: tens of ms) while the last
     * alignments finish */
    release_t rel = {ops, state, 0.0};
    pthread_t rel_tid;
    const int rel_thread = pthread_create(&rel_tid, NULL, release_engine, &rel) == 0;
    if (!rel_thread)
        release_engine(&rel);
    state = NULL;

    size_t n_align_threads = swgpu__aligners_close(&c, rc < 0);
    if (rel_thread)
        pthread_join(rel_tid, NULL);
    double t_destroy = rel.seconds;
    c.r->align_seconds = opts->no_align ? 0.0 : swgpu__now() - t1;
    swgpu__log(SWGPU_LOG_DEBUG, "search of %zu queries: engine %s set up in %.3f s, scan %.3f s, "
               "engine released in %.3f s; %zu alignments (%zu ends on the GPU), %.3f s after "
               "the scan, %.3f CPU s on %zu threads", nq, ops->name, t_create, c.r->scan_seconds,
               t_destroy, c.n_jobs + c.n_ready, c.n_gpu_ends, c.r->align_seconds, c.align_cpu,
               n_align_threads);
    if (rc == SWGPU_OK && c.status < 0)
        rc = swgpu__fail(c.status, "%s", c.msg);
    if (rc == SWGPU_OK)
        rc = swgpu__hsps_splice_all(&c, nq);
    if (rc == SWGPU_OK)
        warn_fallback(&c, nq);

done:
    if (rc < 0)
        swgpu__aligners_close(&c, 1);
    if (state)
        ops->destroy(state);
    swgpu__hsps_lists_free(&c, nq);
    swgpu__pipe_free(&c);
    free(tlen);
    free(id_ord);
    if (rc < 0)
        swgpu_search_result_destroy(c.r);
    else
        *out = c.r;
    return rc;
}

/* ------------------------------------------------------------ all scores */

typedef struct {
    const swgpu_db_t *db;
    int32_t *out; /* nq rows of db->n scores, database order */
} all_scores_t;

/* one query's scores, sorted order, into its row in database order */
static int scatter_scores(void *user, size_t i, const int32_t *scores)
{
    all_scores_t *a = user;
    int32_t *row = a->out + i * (size_t)a->db->n;
    for (uint64_t k = 0; k < a->db->n; k++)
        row[a->db->orig[k]] = scores[k];
    return SWGPU_OK;
}

int swgpu_scan_scores(const swgpu_seqset_t *queries, const swgpu_db_t *db,
                      const swgpu_matrix_t *m, const swgpu_opts_t *opts, int32_t *out)
{
    const swgpu_engine_ops_t *ops = NULL;
    void *state = NULL;
    swgpu__query_t *qs = NULL;
    const char **ids = NULL;
    int rc;

    if (!queries || !db || !m || !opts || !out)
        return swgpu__fail(SWGPU_EINVAL, "scan scores: NULL argument");
    if (db->whole_n) /* its database order is the whole database's */
        return swgpu__fail(SWGPU_EINVAL, "scan scores: the database is a part of a database "
                           "(swgpu_opts_t.on_scores gives a part's scores)");
    if ((rc = swgpu__seqset_queries(queries, db, m, opts, &qs, &ids)) < 0)
        return rc;
    size_t nq = swgpu_seqset_size(queries);
    all_scores_t a = {db, out};
    swgpu__strands_t str;
    if ((rc = swgpu__strands_init(&str, qs, nq, swgpu_seqset_alphabet(queries), opts, db->n,
                                  scatter_scores, &a, NULL)) < 0)
        goto done;
    if ((rc = swgpu__engine_select(opts, &ops)) < 0 ||
        (rc = ops->create(db, m, opts, &state)) < 0)
        goto done;
    swgpu_scan_stats_t st = {0, 0, 0};
    rc = swgpu__strands_scan(ops, state, &str, qs, db->n, &st, "scan scores");
done:
    swgpu__strands_free(&str, nq);
    if (state)
        ops->destroy(state);
    free(qs);
    free(ids);
    return rc;
}

