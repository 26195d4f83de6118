/*
 * search/cbs.c - a protein search with composition-based statistics
 * (opts->comp_based_stats, stats/compo.h), as phases:
 *  1. preliminary: the ordinary search (any engine), without alignments,
 *     keeping BLAST's preliminary hit list: per query the best 1050 (2 top_n
 *     + 50 when top_n > 500) with E-value <= evalue (5 evalue in modes 2, 3:
 *     BLAST's prelim_evalue);
 *  2. rescore: each of those pairs' exact Smith-Waterman score under its own
 *     matrix (the query's and the subject's compositions) at 32 times the
 *     matrix's scale, gap costs times 32, on opts->threads threads, against
 *     the subject with its low-complexity segments (SEG) as X, as blastp
 *     rescores it (unless the pair is near-identical: near_identical()); its
 *     score round(S / 32), its E-value BLAST's of the real score S / 32, its
 *     bit score that of the rounded score (as blastp 2.12 reports them);
 *  3. rank: those with E-value <= evalue and score > 0, in opts->rank's
 *     order of their adjusted scores and E-values, the best top_n kept;
 *  4. align: each kept hit's alignment under its pair's matrix.
 * Subjects outside the preliminary list keep no hit (BLAST adjusts only the
 * candidates of its preliminary pass too).  swgpu_search() is here: it
 * takes this path when opts->comp_based_stats is set, search.c's otherwise.
 */
#include "search/search.h"
#include "align/align.h"
#include "simd/simd.h"
#include "stats/compo.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* one preliminary hit being rescored */
typedef struct {
    size_t q, h;        /* query, hit index in the preliminary result */
    int32_t scaled;     /* score at 32x */
    int64_t qend, tend; /* its end */
    int drop;           /* 1: no true amino acid in the subject (BLAST drops it) */
    int no_seg;         /* 1: near-identical, the subject not SEG-masked */
    swgpu_rank_t rank;  /* phase 3: the search's order (opts->rank) */
    swgpu_hit_t hit;    /* phase 3: the rescored hit */
} cbs_job_t;

typedef struct {
    const swgpu__query_t *qs;
    const char *const *ids;
    const swgpu_db_t *db;
    const swgpu_matrix_t *m;
    const swgpu_opts_t *o;
    const swgpu__cbs_basis_t *basis;
    const swgpu__compo_t *qc; /* per query */
    swgpu_search_result_t *r;
    cbs_job_t *jobs;
    size_t n;
    int align;                /* 0: phase 2 (scores); 1: phase 4 (alignments of r's hits) */
    atomic_int failed;
    pthread_mutex_t lock;
    int status;
    char msg[1024];
} cbs_run_t;

static int32_t nint_div(int32_t s)
{
    double x = (double)s / SWGPU__CBS_SCALE;
    return (int32_t)(x + (x >= 0 ? 0.5 : -0.5));
}

/* job j's subject as BLAST rescores it: *t the stored one, *masked its
 * residues with SEG's segments as X (the caller frees it); its matrix into
 * adj: 1 when there is nothing to adjust to (the pair is dropped) */
static int pair_setup(cbs_run_t *R, const cbs_job_t *j, swgpu_seq_t *t, uint8_t **masked,
                      swgpu_matrix_t *adj)
{
    swgpu__compo_t sc;
    const swgpu_hit_t *h = &R->r->q[j->q].hits[j->h];
    int rc = swgpu_db_get(R->db, h->target, t);
    *masked = NULL;
    if (rc < 0)
        return rc;
    if (!(*masked = malloc(t->len ? t->len : 1)))
        return swgpu__fail(SWGPU_ENOMEM, "search: out of memory for database sequence %zu "
                           "(%zu residues)", h->target + 1, t->len);
    if (j->no_seg)
        memcpy(*masked, t->res, t->len);
    else if ((rc = swgpu__seg_mask(t->res, t->len, *masked)) < 0)
        return rc;
    swgpu__compo_read(&sc, *masked, t->len);
    return swgpu__cbs_matrix(R->basis, R->o->comp_based_stats, &R->qc[j->q], R->qs[j->q].len,
                             &sc, t->len, adj, NULL);
}

/*
 * BLAST leaves a subject unmasked when its alignment with the query is
 * near-identical (blast_kappa.c, redo_alignment.c): the preliminary
 * alignment spans at least min(query length, 50) subject residues, scores
 * at least 1.74 bits per position of the shorter of its two spans, and more
 * than 95% of those positions are identical.  BLAST tests its preliminary
 * (x-drop) alignment by word matches; here the pair's optimal alignment
 * under the matrix (only for scores that can reach the bound) and its
 * identities.  *near gets the verdict.
 */
static int near_identical(cbs_run_t *R, const cbs_job_t *j, const swgpu_seq_t *t, int *near)
{
    const swgpu_query_result_t *qr = &R->r->q[j->q];
    const swgpu_hit_t *h = &qr->hits[j->h];
    const swgpu__query_t *q = &R->qs[j->q];
    double cutoff = 1.74 * log(2.0) / qr->karlin.lambda; /* score per position */
    size_t minspan = q->len < 50 ? q->len : 50;
    *near = 0;
    if (minspan < 1 || h->score < cutoff * (double)(minspan - 1))
        return SWGPU_OK;
    int32_t score;
    int64_t qend, tend;
    swgpu_aln_t a;
    memset(&a, 0, sizeof a);
    int rc = swgpu__cpu_score_pair_q(q, t->res, t->len, R->m, R->o->gap_open, R->o->gap_extend,
                                     1, swgpu__cpu_isa_best(), 0, NULL, NULL, &score, &qend,
                                     &tend);
    if (rc == SWGPU_OK)
        rc = swgpu__align_from_end_q(q, t->res, t->len, R->m, R->o->gap_open,
                                     R->o->gap_extend, score, qend, tend, 0, &a, -1);
    if (rc < 0) {
        swgpu_aln_free(&a);
        return rc;
    }
    int64_t qs = a.qend - a.qbeg, ts = a.tend - a.tbeg, len = qs < ts ? qs : ts;
    *near = ts + 1 >= (int64_t)minspan && len > 0 && score >= cutoff * (double)len &&
            (double)a.n_ident / (double)len > 0.95;
    swgpu_aln_free(&a);
    return SWGPU_OK;
}

/* phase 2: job j's scaled score and end */
static int rescore_one(cbs_run_t *R, cbs_job_t *j, swgpu_matrix_t *adj)
{
    swgpu_seq_t t;
    uint8_t *masked;
    int rc = swgpu_db_get(R->db, R->r->q[j->q].hits[j->h].target, &t);
    if (rc < 0 || (rc = near_identical(R, j, &t, &j->no_seg)) < 0)
        return rc;
    rc = pair_setup(R, j, &t, &masked, adj);
    if (rc == 1)
        j->drop = 1;
    else if (rc == SWGPU_OK)
        rc = swgpu__cpu_score_pair_q(&R->qs[j->q], masked, t.len, adj,
                                     R->o->gap_open * SWGPU__CBS_SCALE,
                                     R->o->gap_extend * SWGPU__CBS_SCALE, 1,
                                     swgpu__cpu_isa_best(), 0, NULL, NULL, &j->scaled, &j->qend,
                                     &j->tend);
    free(masked);
    return rc < 0 ? rc : SWGPU_OK;
}

/* phase 4: the alignment of job j's hit (its scaled score and end known);
 * its counts against the subject as stored, as blastp counts them */
static int align_one(cbs_run_t *R, const cbs_job_t *j, swgpu_matrix_t *adj)
{
    swgpu_hit_t *h = &R->r->q[j->q].hits[j->h];
    swgpu_seq_t t;
    uint8_t *masked;
    int rc = pair_setup(R, j, &t, &masked, adj);
    if (rc == SWGPU_OK)
        rc = swgpu__align_from_end_q(&R->qs[j->q], masked, t.len, adj,
                                     R->o->gap_open * SWGPU__CBS_SCALE,
                                     R->o->gap_extend * SWGPU__CBS_SCALE, j->scaled, j->qend,
                                     j->tend, 0, &h->aln, -1);
    free(masked);
    if (rc < 0)
        return rc;
    if (rc == 1 || h->aln.score != j->scaled)
        return swgpu__fail(SWGPU_ERANGE,
                           "internal error: query %zu (id %s) vs database sequence %zu (id %s): "
                           "adjusted score %d but its alignment scores %lld",
                           j->q + 1, R->ids[j->q], h->target + 1, t.id, (int)j->scaled,
                           (long long)h->aln.score);
    swgpu__aln_stats(&h->aln, R->qs[j->q].res, t.res);
    h->aln.score = h->score;
    return SWGPU_OK;
}

/* job k of R (a swgpu__par_for body): its failure recorded, the jobs after
 * the first failure skipped */
static void job_one(void *arg, size_t k)
{
    cbs_run_t *R = arg;
    swgpu_matrix_t adj; /* the job's adjusted matrix */
    if (atomic_load(&R->failed))
        return;
    int rc = R->align ? align_one(R, &R->jobs[k], &adj) : rescore_one(R, &R->jobs[k], &adj);
    if (rc < 0) {
        pthread_mutex_lock(&R->lock);
        if (!R->status) {
            R->status = rc;
            snprintf(R->msg, sizeof R->msg, "%s", swgpu_last_error());
        }
        pthread_mutex_unlock(&R->lock);
        atomic_store(&R->failed, 1);
    }
}

/* R->jobs on opts->threads threads */
static int run_jobs(cbs_run_t *R, int align)
{
    R->align = align;
    swgpu__par_for(R->n, R->o->threads, job_one, R);
    return R->status < 0 ? swgpu__fail(R->status, "%s", R->msg) : SWGPU_OK;
}

/* jobs by their hits' rank (opts->rank: swgpu__rank_before) */
static int cmp_job(const void *a, const void *b)
{
    const cbs_job_t *ja = a, *jb = b;
    const swgpu_hit_t *x = &ja->hit, *y = &jb->hit;
    if (swgpu__rank_before(ja->rank, x->score, x->evalue, x->target, y->score, y->evalue,
                           y->target))
        return -1;
    return swgpu__rank_before(ja->rank, y->score, y->evalue, y->target, x->score, x->evalue,
                              x->target);
}

/* phase 3 for query i: scores, E-values and bit scores from its jobs
 * jobs[0..n) (in hit order), the rank, the cut; the kept hits' jobs (their
 * new hit indices) packed at the front of jobs, their count in *kept */
static void rank_query(cbs_run_t *R, size_t i, cbs_job_t *jobs, size_t n, size_t *kept)
{
    swgpu_query_result_t *qr = &R->r->q[i];
    swgpu__evalue_ctx_t ev;
    swgpu__evalue_init(&ev, &qr->karlin, R->o->evalue_model, R->qs[i].len,
                       swgpu__db_whole_res(R->db), swgpu__db_whole_n(R->db));
    size_t w = 0;
    for (size_t k = 0; k < n; k++) {
        cbs_job_t *j = &jobs[k];
        swgpu_hit_t h = qr->hits[j->h];
        swgpu_seq_t t;
        if (j->drop || j->scaled <= 0 || swgpu_db_get(R->db, h.target, &t) < 0)
            continue;
        h.score = nint_div(j->scaled);
        h.evalue = swgpu__evalue_of_real(&ev, (double)j->scaled / SWGPU__CBS_SCALE, t.len);
        h.bits = swgpu_bitscore(&qr->karlin, h.score);
        h.aln.score = h.score;
        if (!(h.evalue <= R->o->evalue) || h.score <= 0)
            continue;
        j->hit = h;
        j->rank = R->o->rank;
        jobs[w++] = *j;
    }
    qsort(jobs, w, sizeof *jobs, cmp_job);
    if (w > (size_t)R->o->top_n)
        w = (size_t)R->o->top_n;
    for (size_t k = 0; k < w; k++) {
        qr->hits[k] = jobs[k].hit;
        jobs[k].h = k;
    }
    qr->n_hits = w;
    *kept = w;
}

/* phases 2 to 4 on the preliminary result r */
static int cbs_rescore(cbs_run_t *R)
{
    swgpu_search_result_t *r = R->r;
    size_t n = 0, w = 0;
    for (size_t i = 0; i < r->n_queries; i++)
        n += r->q[i].n_hits;
    if (!(R->jobs = calloc(n ? n : 1, sizeof *R->jobs)))
        return swgpu__fail(SWGPU_ENOMEM, "search: out of memory for %zu hits", n);
    for (size_t i = 0; i < r->n_queries; i++)
        for (size_t h = 0; h < r->q[i].n_hits; h++, w++) {
            R->jobs[w].q = i;
            R->jobs[w].h = h;
        }
    R->n = n;
    double t0 = swgpu__now();
    int rc = run_jobs(R, 0);
    if (rc < 0)
        return rc;
    double t1 = swgpu__now();
    size_t at = 0, kept_all = 0;
    for (size_t i = 0; i < r->n_queries; i++) {
        size_t nh = r->q[i].n_hits, kept;
        rank_query(R, i, R->jobs + at, nh, &kept);
        memmove(R->jobs + kept_all, R->jobs + at, kept * sizeof *R->jobs);
        at += nh;
        kept_all += kept;
    }
    swgpu__log(SWGPU_LOG_DEBUG, "comp-based-stats %d: %zu preliminary hits rescored in %.3f s, "
               "%zu kept", R->o->comp_based_stats, n, t1 - t0, kept_all);
    R->n = kept_all;
    if (!R->o->no_align)
        rc = run_jobs(R, 1);
    r->align_seconds += swgpu__now() - t0; /* the rescoring is the adjusted hits' alignment */
    return rc;
}

static int cbs_search(const swgpu_seqset_t *queries, const swgpu_db_t *db,
                      const swgpu_matrix_t *m, const swgpu_opts_t *opts,
                      swgpu_search_result_t **out)
{
    swgpu__cbs_basis_t basis;
    swgpu__query_t *qs = NULL;
    const char **ids = NULL;
    swgpu__compo_t *qc = NULL;
    cbs_run_t R;
    int rc;
    memset(&R, 0, sizeof R);
    if ((rc = swgpu_opts_check(opts, m)) < 0 || (rc = swgpu__cbs_basis_init(&basis, m)) < 0 ||
        (rc = swgpu__seqset_queries(queries, db, m, opts, &qs, &ids)) < 0)
        goto done;
    size_t nq = swgpu_seqset_size(queries);
    if (!(qc = calloc(nq ? nq : 1, sizeof *qc))) {
        rc = swgpu__fail(SWGPU_ENOMEM, "search: out of memory for %zu queries", nq);
        goto done;
    }
    for (size_t i = 0; i < nq; i++)
        swgpu__compo_read(&qc[i], qs[i].res, qs[i].len);
    swgpu_opts_t pre = *opts; /* phase 1 */
    pre.comp_based_stats = 0;
    pre.no_align = 1;
    pre.top_n = opts->top_n <= 500 ? 1050 : 2 * opts->top_n + 50;
    pre.evalue = opts->comp_based_stats > 1 ? 5 * opts->evalue : opts->evalue;
    if ((rc = swgpu__search_sel(queries, db, m, &pre, NULL, &R.r)) < 0)
        goto done;
    R.qs = qs;
    R.ids = ids;
    R.db = db;
    R.m = m;
    R.o = opts;
    R.basis = &basis;
    R.qc = qc;
    pthread_mutex_init(&R.lock, NULL);
    atomic_init(&R.failed, 0);
    rc = cbs_rescore(&R);
    pthread_mutex_destroy(&R.lock);
done:
    free(R.jobs);
    free(qc);
    free(qs);
    free(ids);
    if (rc < 0)
        swgpu_search_result_destroy(R.r);
    else
        *out = R.r;
    return rc;
}

int swgpu_search(const swgpu_seqset_t *queries, const swgpu_db_t *db,
                 const swgpu_matrix_t *m, const swgpu_opts_t *opts,
                 swgpu_search_result_t **out)
{
    if (out && queries && db && m && opts && opts->comp_based_stats) {
        *out = NULL;
        return cbs_search(queries, db, m, opts, out);
    }
    return swgpu__search_sel(queries, db, m, opts, NULL, out);
}
