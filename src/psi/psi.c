/*
 * psi/psi.c - the rounds of an iterated search (swgpu_search_iterate):
 * each round searches the active queries (their residues, then the PSSMs
 * the round before made) while pool.c builds their next PSSMs, then
 * decides which queries go on (their included set grew) and which
 * converged.  The driver reads as its phases: check_args, plan_alignments,
 * iter_alloc, get_queries, jobs_setup, then per round round_search,
 * round_all_queries, round_inclusion and round_advance.
 */
#include "psi/psi.h"

#include <string.h>

void swgpu_psi_opts_init(swgpu_psi_opts_t *o)
{
    if (!o)
        return;
    o->iterations = 1;
    o->inclusion_evalue = 0.002;
    o->max_hits = 500;
    o->final_pssm = 1;
    o->align_rounds = 1;
}

void swgpu_iterate_result_destroy(swgpu_iterate_result_t *r)
{
    if (!r)
        return;
    if (r->round)
        for (size_t k = 0; k < r->n_rounds; k++)
            swgpu_search_result_destroy(r->round[k]);
    if (r->pssm)
        for (size_t k = 0; k < r->n_rounds * r->n_queries; k++)
            swgpu_pssm_destroy(r->pssm[k]);
    if (r->final_pssm)
        for (size_t i = 0; i < r->n_queries; i++)
            swgpu_pssm_destroy(r->final_pssm[i]);
    free(r->round);
    free(r->pssm);
    free(r->final_pssm);
    free(r->last_round);
    free(r->included);
    free(r->converged);
    free(r);
}

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return (x > y) - (x < y);
}

/* The sorted targets of qr's hits with E-value <= thr, into *out (n). */
static int included_set(const swgpu_query_result_t *qr, double thr, size_t **out, size_t *n)
{
    size_t k = 0;
    *out = malloc((qr->n_hits ? qr->n_hits : 1) * sizeof **out);
    if (!*out)
        return swgpu__fail(SWGPU_ENOMEM, "iterated search: out of memory");
    for (size_t h = 0; h < qr->n_hits; h++)
        if (qr->hits[h].evalue <= thr && qr->hits[h].score > 0)
            (*out)[k++] = qr->hits[h].target;
    qsort(*out, k, sizeof **out, cmp_size);
    *n = k;
    return SWGPU_OK;
}

/* 1 if every element of a (sorted, na) is in b (sorted, nb) */
static int subset(const size_t *a, size_t na, const size_t *b, size_t nb)
{
    size_t j = 0;
    for (size_t i = 0; i < na; i++) {
        while (j < nb && b[j] < a[i])
            j++;
        if (j == nb || b[j] != a[i])
            return 0;
    }
    return 1;
}

/* What first_only (swgpu__align_sel_t) needs to tell, while a round's
 * search runs, which queries converge in it. */
typedef struct {
    const size_t *act;       /* the round's query a is query act[a] */
    size_t *const *prev_set; /* per query: the round before's included set */
    const size_t *prev_n;
    size_t max_hits;
    double thr;
} conv_t;

/* 1 if the round converges for query act[a] (its included set, as the
 * round computes it after the search, holds no hit the round before did
 * not include): no PSSM is made of its hits unless final_pssm, so they need
 * no alignment beyond those reported.  0 when unsure (out of memory). */
static int converges(void *user, size_t a, const swgpu_query_result_t *qr)
{
    const conv_t *C = user;
    size_t i = C->act[a], *set = NULL, ns = 0;
    swgpu_query_result_t best = *qr;
    if (best.n_hits > C->max_hits)
        best.n_hits = C->max_hits;
    if (included_set(&best, C->thr, &set, &ns) < 0)
        return 0;
    int conv = subset(set, ns, C->prev_set[i], C->prev_n[i]);
    free(set);
    return conv;
}

/* Keep the best top_n hits of every query of r. */
static void truncate_hits(swgpu_search_result_t *r, size_t top_n)
{
    for (size_t i = 0; i < r->n_queries; i++)
        while (r->q[i].n_hits > top_n)
            swgpu_aln_free(&r->q[i].hits[--r->q[i].n_hits].aln);
}

/* A round's builds while its search goes on (round_done, the search's
 * query_done): a query whose round is not its last, or whose final PSSM is
 * wanted, gets its job as soon as its alignments are done. */
typedef struct {
    swgpu__psi_jobs_t *J;
    const swgpu__psi_pool_t *P;
    conv_t conv;
    const swgpu_seq_t *qv;
    const swgpu_pssm_t *const *searched; /* per query of the search: its PSSM, or NULL */
    int last_round, final_pssm;
} round_ctx_t;

static void round_done(void *user, size_t a, const swgpu_query_result_t *qr)
{
    const round_ctx_t *X = user;
    size_t i = X->conv.act[a];
    swgpu_query_result_t best = *qr;
    if (best.n_hits > X->conv.max_hits)
        best.n_hits = X->conv.max_hits;
    /* as the round's end decides it (an allocation failure there fails the
     * round; here it only costs a PSSM that is not used) */
    int last = converges((void *)&X->conv, a, qr) || X->last_round;
    if (last && !X->final_pssm)
        return;
    swgpu__psi_build_add(X->J, X->P, a, &X->qv[i], &best, X->searched[a], !last);
}


/* ------------------------------------------------------------ the driver */

/* An iterated search between its phases. */
typedef struct {
    const swgpu_seqset_t *queries;      /* the queries, or NULL: */
    const swgpu_pssm_t *const *pssms;   /* the PSSMs of the first round */
    const swgpu_db_t *db;
    const swgpu_matrix_t *m;
    const swgpu_opts_t *opts;           /* the caller's options */
    const swgpu_psi_opts_t *psi;
    swgpu_opts_t o;                     /* the rounds' search options */
    swgpu__psi_basis_t B;
    size_t n, N1, I;                    /* queries, n or 1 (allocations), rounds at most */
    swgpu__align_sel_t sel, sel_last;   /* the alignments of a round, of the last round */
    conv_t conv;
    swgpu_iterate_result_t *R;
    size_t **prev_set, *prev_n;         /* per query: the round before's included set */
    size_t *act, nact;                  /* the active queries */
    swgpu_seq_t *qv;                    /* per query: its residues */
    const swgpu_pssm_t **cur;           /* per active query: its PSSM (NULL: residues) */
    swgpu__pssm_stat_t *stat_of, *given; /* per query / per round's query */
    size_t *job_of;                     /* per round's query: its build job */
    swgpu__psi_jobs_t J;
} iter_t;

static int check_args(const swgpu_seqset_t *queries, const swgpu_pssm_t *const *pssms,
                      const swgpu_db_t *db, const swgpu_matrix_t *m, const swgpu_opts_t *opts,
                      const swgpu_psi_opts_t *psi)
{
    int rc;
    if (!db || !m || !opts || !psi || (!queries) == (!pssms))
        return swgpu__fail(SWGPU_EINVAL, "iterated search: NULL argument (give either "
                           "queries or PSSMs)");
    if (psi->iterations < 1)
        return swgpu__fail(SWGPU_EINVAL, "iterations %d: must be >= 1", psi->iterations);
    if (!(psi->inclusion_evalue > 0))
        return swgpu__fail(SWGPU_EINVAL, "inclusion E-value %g: must be > 0",
                           psi->inclusion_evalue);
    if (psi->max_hits < 1)
        return swgpu__fail(SWGPU_EINVAL, "max_hits %d: must be >= 1", psi->max_hits);
    if ((rc = swgpu_opts_check(opts, m)) < 0)
        return rc;
    if (opts->max_hsps > 1)
        return swgpu__fail(SWGPU_EINVAL, "iterated search: max HSPs %d: an iterated search "
                           "reports one alignment per subject (its PSSMs take every HSP of "
                           "an included subject, as psiblast's do)", opts->max_hsps);
    if (swgpu_matrix_alphabet(m) != SWGPU_PROTEIN || swgpu_db_alphabet(db) != SWGPU_PROTEIN ||
        (queries && swgpu_seqset_alphabet(queries) != SWGPU_PROTEIN))
        return swgpu__fail(SWGPU_EALPHABET, "iterated search: PSSMs need protein queries, "
                           "a protein database and a protein matrix");
    return SWGPU_OK;
}

/* The rounds' search options and which of their hits they align. */
static void plan_alignments(iter_t *It)
{
    const swgpu_opts_t *opts = It->opts;
    const swgpu_psi_opts_t *psi = It->psi;
    It->o = *opts;
    It->o.no_align = 0; /* the PSSMs need the alignments */
    It->o.candidates = 0;
    if (It->o.top_n < psi->max_hits)
        It->o.top_n = psi->max_hits;
    /* alignments: of the hits a round reports (the best opts->top_n) and of
     * those it includes; the others' would be thrown away */
    It->sel = (swgpu__align_sel_t){opts->no_align ? 0 : (size_t)opts->top_n,
                                   (size_t)psi->max_hits, psi->inclusion_evalue, NULL, NULL, 0,
                                   NULL, NULL, NULL};
    /* a query that goes on to another round reports this round's hits
     * only when every round is reported */
    It->sel.first_go_on = psi->align_rounds ? It->sel.first : 0;
    /* the last round builds no PSSM unless psi->final_pssm: its included
     * hits need no alignment beyond those it reports (the inclusion counts
     * and the convergence take the E-values only) */
    It->sel_last = It->sel;
    if (!psi->final_pssm)
        It->sel_last.upto = 0;
    /* nor does a query that converges in its round */
    It->conv = (conv_t){NULL, NULL, NULL, (size_t)psi->max_hits, psi->inclusion_evalue};
    if (!psi->final_pssm) {
        It->sel.first_only = converges;
        It->sel.user = &It->conv;
    }
}

static int iter_alloc(iter_t *It)
{
    const size_t N1 = It->N1, I = It->I;
    swgpu_iterate_result_t *R;
    swgpu__psi_jobs_t *J = &It->J;
    if (!(R = It->R = calloc(1, sizeof *R)) || !(R->round = calloc(I, sizeof *R->round)) ||
        !(R->pssm = calloc(I * N1, sizeof *R->pssm)) ||
        !(R->final_pssm = calloc(N1, sizeof *R->final_pssm)) ||
        !(R->last_round = calloc(N1, sizeof *R->last_round)) ||
        !(R->included = calloc(I * N1, sizeof *R->included)) ||
        !(R->converged = calloc(N1, sizeof *R->converged)) ||
        !(It->prev_set = calloc(N1, sizeof *It->prev_set)) ||
        !(It->prev_n = calloc(N1, sizeof *It->prev_n)) ||
        !(It->act = malloc(N1 * sizeof *It->act)) || !(It->qv = calloc(N1, sizeof *It->qv)) ||
        !(It->cur = calloc(N1, sizeof *It->cur)) || !(J->q = calloc(N1, sizeof *J->q)) ||
        !(J->qr = calloc(N1, sizeof *J->qr)) || !(J->out = calloc(N1, sizeof *J->out)) ||
        !(J->searched = calloc(N1, sizeof *J->searched)) ||
        !(J->best = calloc(N1, sizeof *J->best)) || !(J->rc = calloc(N1, sizeof *J->rc)) ||
        !(J->msg = calloc(N1, sizeof *J->msg)) ||
        !(J->want_stat = calloc(N1, sizeof *J->want_stat)) ||
        !(J->stat = calloc(N1, sizeof *J->stat)) ||
        !(It->stat_of = calloc(N1, sizeof *It->stat_of)) ||
        !(It->given = calloc(N1, sizeof *It->given)) ||
        !(It->job_of = malloc(N1 * sizeof *It->job_of)) ||
        !(J->jq = malloc(N1 * sizeof *J->jq)))
        return swgpu__fail(SWGPU_ENOMEM, "iterated search: out of memory for %zu queries",
                           It->n);
    R->n_queries = It->n;
    return SWGPU_OK;
}

/* Every query's residues, all of them active. */
static int get_queries(iter_t *It)
{
    for (size_t i = 0; i < It->n; i++) {
        int rc = It->queries ? swgpu_seqset_get(It->queries, i, &It->qv[i])
                 : It->pssms[i] ? swgpu_pssm_get(It->pssms[i], &It->qv[i])
                                : swgpu__fail(SWGPU_EINVAL, "iterated search: PSSM %zu is NULL",
                                              i + 1);
        if (rc < 0)
            return rc;
    }
    It->nact = It->n;
    for (size_t i = 0; i < It->n; i++)
        It->act[i] = i;
    It->conv.act = It->act;
    It->conv.prev_set = It->prev_set;
    It->conv.prev_n = It->prev_n;
    return SWGPU_OK;
}

/* What the builds of every round share. */
static void jobs_setup(iter_t *It)
{
    swgpu__psi_jobs_t *J = &It->J;
    J->B = &It->B;
    J->db = It->db;
    J->m = It->m;
    J->o = &It->o;
    J->thr = It->psi->inclusion_evalue;
#if SWGPU_HAVE_CUDA
    {   /* the builds' stretch scores on the GPU (SWGPU_CUDA_PAIRS=0: on the host) */
        const swgpu_engine_ops_t *eo = NULL;
        if (swgpu__env_gpu_pairs() && swgpu__engine_select(&It->o, &eo) == SWGPU_OK &&
            (eo->caps & SWGPU__CAP_GPU) &&
            swgpu__cu_pairs_create(It->m, It->o.gap_open, It->o.gap_extend, &J->pairs) < 0) {
            swgpu__log(SWGPU_LOG_DEBUG, "stretch scores on the host: %s", swgpu_last_error());
            J->pairs = NULL;
        }
    }
#endif
    {   /* the PSSMs' search parameters as they are built (when the search takes any) */
        swgpu_karlin_t fixed;
        J->stats = swgpu_karlin_lookup(It->m, It->o.gap_open, It->o.gap_extend, &fixed) ==
                   SWGPU_OK;
    }
}

/* The PSSMs the round's jobs made, on a failure. */
static void jobs_discard(swgpu__psi_jobs_t *J)
{
    for (size_t j = 0; j < J->n; j++)
        swgpu_pssm_destroy(J->out[j]);
}

/* Round k's search of the active queries, their next PSSMs built while it
 * goes on; on a failure nothing is left of it. */
static int round_search(iter_t *It, size_t k, swgpu_search_result_t **out)
{
    swgpu__psi_jobs_t *J = &It->J;
    swgpu_search_result_t *r = NULL;
    double t_round = swgpu__now();
    swgpu__psi_pool_t pool;
    int rc;
    *out = NULL;
    for (size_t a = 0; a < It->nact; a++) {
        It->cur[a] = k == 0 ? (It->queries ? NULL : It->pssms[It->act[a]])
                            : It->R->pssm[k * It->n + It->act[a]];
        if (k > 0 && J->stats)
            It->given[a] = It->stat_of[It->act[a]];
    }
    /* the round's builds go on with its search */
    round_ctx_t X = {J, &pool, It->conv, It->qv, It->cur, k + 1 == It->I,
                     It->psi->final_pssm};
    swgpu__align_sel_t sk = k + 1 == It->I ? It->sel_last : It->sel;
    sk.query_done = round_done;
    sk.done_user = &X;
#if SWGPU_HAVE_CUDA
    sk.pairs = J->pairs;
    swgpu__cu_pairs_forget(J->pairs); /* a round's queries are new PSSMs */
#endif
    if ((rc = swgpu__psi_build_open(J, &pool, It->nact, It->opts->threads)) < 0)
        return rc;
    /* the round's search: the active queries */
    if (k == 0 && It->queries)
        rc = swgpu__search_sel(It->queries, It->db, It->m, &It->o, &sk, &r);
    else
        rc = swgpu__search_pssm_sel(It->cur, It->nact, It->db, It->m, &It->o, &sk,
                                    k > 0 && J->stats ? It->given : NULL, &r);
    double t_build = swgpu__now();
    int rcb = swgpu__psi_build_close(J, &pool);
    if (rc == SWGPU_OK && rcb < 0)
        rc = rcb;
    if (rc < 0) {
        jobs_discard(J);
        swgpu_search_result_destroy(r);
        return rc;
    }
    swgpu__log(SWGPU_LOG_INFO, "round %zu: %zu queries searched, %zu PSSMs built (%.3f s "
               "after the search)", k + 1, It->nact, J->n, swgpu__now() - t_build);
    swgpu__log(SWGPU_LOG_DEBUG, "round %zu: search %.3f s (scan %.3f s, alignments after "
               "it %.3f s), PSSM builds and statistics %.3f CPU s (the longest %.3f s)", k + 1,
               t_build - t_round, r->scan_seconds, r->align_seconds,
               atomic_load(&J->cpu_us) * 1e-6, atomic_load(&J->max_us) * 1e-6);
    /* each query's job (SIZE_MAX: none) */
    for (size_t a = 0; a < It->nact; a++)
        It->job_of[a] = SIZE_MAX;
    for (size_t j = 0; j < J->n; j++)
        It->job_of[J->jq[j]] = j;
    *out = r;
    return SWGPU_OK;
}

/* Round k's result r as a result of every query, inactive ones without
 * hits (r unchanged on a failure). */
static int round_all_queries(const iter_t *It, size_t k, swgpu_search_result_t *r)
{
    const size_t n = It->n;
    if (It->nact == n && k == 0)
        return SWGPU_OK;
    swgpu_query_result_t *q = calloc(It->N1, sizeof *q);
    if (!q)
        return swgpu__fail(SWGPU_ENOMEM, "iterated search: out of memory");
    for (size_t i = 0; i < n; i++)
        q[i].query = i;
    for (size_t a = 0; a < It->nact; a++) {
        q[It->act[a]] = r->q[a];
        q[It->act[a]].query = It->act[a];
    }
    free(r->q);
    r->q = q;
    r->n_queries = n;
    return SWGPU_OK;
}

/* Round k's included sets (r: its result, of every query) and which
 * queries converged. */
static int round_inclusion(iter_t *It, size_t k, const swgpu_search_result_t *r)
{
    const swgpu_psi_opts_t *psi = It->psi;
    swgpu_iterate_result_t *R = It->R;
    int rc = SWGPU_OK;
    for (size_t a = 0; a < It->nact && rc == SWGPU_OK; a++) {
        size_t i = It->act[a], *set = NULL, ns = 0;
        /* inclusion looks at the best max_hits only, as psiblast at its
         * -max_target_seqs, whatever top_n reports */
        swgpu_query_result_t best = r->q[i];
        if (best.n_hits > (size_t)psi->max_hits)
            best.n_hits = (size_t)psi->max_hits;
        if ((rc = included_set(&best, psi->inclusion_evalue, &set, &ns)) < 0)
            break;
        R->included[k * It->n + i] = ns;
        R->converged[i] = subset(set, ns, It->prev_set[i], It->prev_n[i]);
        free(It->prev_set[i]);
        It->prev_set[i] = set;
        It->prev_n[i] = ns;
        int last = R->converged[i] || k + 1 == It->I;
        if ((It->job_of[a] == SIZE_MAX) != (last && !psi->final_pssm))
            rc = swgpu__fail(SWGPU_EINVAL, "internal error: iterated search: query %zu's "
                             "PSSM was %s", i + 1, It->job_of[a] == SIZE_MAX ? "not built"
                                                                             : "built unasked");
    }
    return rc;
}

/* The queries that go on to round k + 1 with their new PSSMs; the others'
 * last round is k; r's hits cut to what the caller asked for. */
static void round_advance(iter_t *It, size_t k, swgpu_search_result_t *r)
{
    swgpu_iterate_result_t *R = It->R;
    const swgpu_opts_t *opts = It->opts;
    size_t still = 0;
    for (size_t a = 0; a < It->nact; a++) {
        size_t i = It->act[a], jk = It->job_of[a];
        int last = R->converged[i] || k + 1 == It->I;
        swgpu_pssm_t *p = jk == SIZE_MAX ? NULL : It->J.out[jk];
        if (last) {
            R->last_round[i] = k + 1;
            R->final_pssm[i] = p;
        } else {
            R->pssm[(k + 1) * It->n + i] = p;
            It->stat_of[i] = It->J.stat[jk];
            It->act[still++] = i;
        }
    }
    It->nact = still;
    truncate_hits(r, (size_t)opts->top_n);
    if (opts->no_align) /* the caller asked for none: drop them */
        for (size_t i = 0; i < It->n; i++)
            for (size_t h = 0; h < r->q[i].n_hits; h++) {
                swgpu_aln_free(&r->q[i].hits[h].aln);
                r->q[i].hits[h].aln.score = r->q[i].hits[h].score;
            }
}

/* Round k: its search and builds, its result in R, the queries that go
 * on. */
static int run_round(iter_t *It, size_t k)
{
    swgpu_search_result_t *r;
    int rc;
    if ((rc = round_search(It, k, &r)) < 0)
        return rc;
    if ((rc = round_all_queries(It, k, r)) < 0) {
        jobs_discard(&It->J);
        swgpu_search_result_destroy(r);
        return rc;
    }
    It->R->round[k] = r;
    It->R->n_rounds = k + 1;
    if ((rc = round_inclusion(It, k, r)) < 0) {
        jobs_discard(&It->J);
        return rc;
    }
    round_advance(It, k, r);
    return SWGPU_OK;
}

static void iter_free(iter_t *It)
{
    swgpu__psi_jobs_t *J = &It->J;
    swgpu_iterate_result_t *R = It->R;
    if (It->prev_set)
        for (size_t i = 0; i < It->n; i++)
            free(It->prev_set[i]);
    free(It->prev_set);
    free(It->prev_n);
    free(It->act);
    free(It->qv);
    free(It->cur);
    free(J->q);
    free(J->qr);
    free(J->searched);
    free(J->best);
    free(J->out);
    free(J->rc);
    free(J->msg);
    free(J->tasks);
    free(J->want_stat);
    free(J->stat);
    free(It->stat_of);
    free(It->given);
    free(It->job_of);
    free(J->jq);
#if SWGPU_HAVE_CUDA
    swgpu__cu_pairs_destroy(J->pairs);
#endif
    if (R && R->pssm && R->n_rounds < It->I) /* a failed round: the PSSMs made for it */
        for (size_t i = 0; i < It->n; i++)
            swgpu_pssm_destroy(R->pssm[R->n_rounds * It->n + i]);
    swgpu_iterate_result_destroy(R);
}

int swgpu_search_iterate(const swgpu_seqset_t *queries, const swgpu_pssm_t *const *pssms,
                         size_t npssm, const swgpu_db_t *db, const swgpu_matrix_t *m,
                         const swgpu_opts_t *opts, const swgpu_psi_opts_t *psi,
                         swgpu_iterate_result_t **out)
{
    iter_t It;
    int rc;

    memset(&It, 0, sizeof It);
    if (!out)
        return swgpu__fail(SWGPU_EINVAL, "iterated search: NULL result pointer");
    *out = NULL;
    if ((rc = check_args(queries, pssms, db, m, opts, psi)) < 0 ||
        (rc = swgpu__psi_basis_init(&It.B, m)) < 0)
        return rc;
    It.queries = queries;
    It.pssms = pssms;
    It.db = db;
    It.m = m;
    It.opts = opts;
    It.psi = psi;
    It.n = queries ? swgpu_seqset_size(queries) : npssm;
    It.N1 = It.n ? It.n : 1;
    It.I = (size_t)psi->iterations;
    plan_alignments(&It);
    if ((rc = iter_alloc(&It)) < 0 || (rc = get_queries(&It)) < 0)
        goto done;
    jobs_setup(&It);
    for (size_t k = 0; k < It.I && (It.nact || k == 0); k++)
        if ((rc = run_round(&It, k)) < 0)
            goto done;
    rc = SWGPU_OK;
    *out = It.R;
    It.R = NULL;
done:
    iter_free(&It);
    return rc;
}
