/*
 * search.c - database search orchestration: options, engine dispatch, top-N
 * selection, statistics, alignments of the kept hits.
 *
 * For every query:
 *   1. the engine (backend.c picks it once per search) scores the query
 *      against every database sequence: scores[k] for sorted index k;
 *   2. the top_n hits with score > 0 are chosen by (score desc, database
 *      index asc) - deterministic whatever the engine;
 *   3. Karlin-Altschul parameters: the published ones for the matrix and gap
 *      pair, else a fit to this query's own score distribution;
 *   4. hits with E-value > opts->evalue are dropped.
 * Then the alignments of all kept hits are computed on opts->threads
 * threads: the end by the SIMD pair engine (swgpu__cpu_score_pair, one
 * thread, the reference's tie rule), the begin and the path by the
 * reference engine (swgpu__align_from_end), each hit in its own slot
 * (so the result does not depend on the thread count), and each alignment
 * score is checked against the score the engine reported: a mismatch is an
 * internal error, never a silently different result.
 */
#include "internal.h"
#include "ref/ref.h"
#include "simd/simd.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
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
    if (m) {
        swgpu_alphabet_t a = swgpu_matrix_alphabet(m);
        if (a != SWGPU_PROTEIN && a != SWGPU_DNA)
            return swgpu__fail(SWGPU_EMATRIX, "matrix %s: no alphabet", swgpu_matrix_name(m));
        if (swgpu_matrix_max(m) <= 0)
            return swgpu__fail(SWGPU_EMATRIX,
                               "matrix %s: no positive score, every local alignment is empty",
                               swgpu_matrix_name(m));
        if (swgpu_matrix_max(m) > GAP_MAX || swgpu_matrix_min(m) < -GAP_MAX)
            return swgpu__fail(SWGPU_EMATRIX, "matrix %s: scores beyond +-%d are absurd",
                               swgpu_matrix_name(m), GAP_MAX);
    }
    return SWGPU_OK;
}

/* ----------------------------------------------------------------- top-N */

/* Candidate hit while scanning: score and database index. */
typedef struct {
    int32_t score;
    uint32_t target;
} cand_t;

/* 1 if a ranks better than b: higher score, then smaller database index. */
static int better(const cand_t *a, const cand_t *b)
{
    return a->score > b->score || (a->score == b->score && a->target < b->target);
}

/* Min-heap on rank: h[0] is the worst of the kept candidates. */
static void heap_down(cand_t *h, size_t n, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, w = i;
        if (l < n && better(&h[w], &h[l])) w = l;
        if (r < n && better(&h[w], &h[r])) w = r;
        if (w == i)
            return;
        cand_t t = h[i];
        h[i] = h[w];
        h[w] = t;
        i = w;
    }
}

static void heap_up(cand_t *h, size_t i)
{
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!better(&h[p], &h[i]))
            return;
        cand_t t = h[i];
        h[i] = h[p];
        h[p] = t;
        i = p;
    }
}

static int cmp_rank(const void *a, const void *b)
{
    const cand_t *x = a, *y = b;
    return better(x, y) ? -1 : better(y, x) ? 1 : 0;
}

/* The best (up to) cap candidates with score > 0, best first; returns the
 * count.  heap has room for cap entries. */
static size_t top_hits(const swgpu_db_t *db, const int32_t *scores, size_t cap, cand_t *heap)
{
    size_t n = 0;
    for (uint64_t k = 0; k < db->n; k++) {
        if (scores[k] <= 0)
            continue;
        cand_t c = {scores[k], db->orig[k]};
        if (n < cap) {
            heap[n] = c;
            heap_up(heap, n++);
        } else if (better(&c, &heap[0])) {
            heap[0] = c;
            heap_down(heap, n, 0);
        }
    }
    qsort(heap, n, sizeof *heap, cmp_rank);
    return n;
}

/* ------------------------------------------------------------ alignments */

typedef struct {
    size_t query;
    size_t hit;
} job_t;

typedef struct {
    const swgpu_seqset_t *queries;
    const swgpu_db_t *db;
    const swgpu_matrix_t *m;
    const swgpu_opts_t *o;
    swgpu_search_result_t *r;
    const job_t *jobs;
    size_t n_jobs;
    atomic_size_t next;
    atomic_size_t first_bad; /* smallest failing job index, n_jobs if none */
    pthread_mutex_t lock;
    int status;              /* status of first_bad */
    char msg[1024];          /* its message (last_error is thread-local) */
} align_ctx_t;

/* Align one hit and verify its score; 0 or a status with last_error set. */
static int align_one(align_ctx_t *c, const job_t *j)
{
    swgpu_seq_t q, t;
    swgpu_hit_t *h = &c->r->q[j->query].hits[j->hit];
    int rc = swgpu_seqset_get(c->queries, j->query, &q);
    if (rc < 0)
        return rc;
    rc = swgpu_db_get(c->db, h->target, &t);
    if (rc < 0)
        return rc;
    {
        int32_t score = 0;
        int64_t qend = 0, tend = 0;
        rc = swgpu__cpu_score_pair(q.res, q.len, t.res, t.len, c->m, c->o->gap_open,
                                   c->o->gap_extend, 1, &score, &qend, &tend);
        if (rc < 0)
            return rc;
        rc = swgpu__align_from_end(q.res, q.len, t.res, t.len, c->m, c->o->gap_open,
                                   c->o->gap_extend, score, qend, tend, 0, &h->aln);
        if (rc < 0)
            return rc;
    }
    if (h->aln.score != h->score)
        return swgpu__fail(SWGPU_ERANGE,
                           "internal error: query %zu (id %s) vs database sequence %zu (id %s): "
                           "backend %s scored %d but the reference alignment scores %d",
                           j->query + 1, q.id, h->target + 1, t.id, c->r->backend,
                           (int)h->score, (int)h->aln.score);
    return SWGPU_OK;
}

static void *align_worker(void *arg)
{
    align_ctx_t *c = arg;
    for (;;) {
        size_t i = atomic_fetch_add(&c->next, 1);
        if (i >= c->n_jobs || i > atomic_load(&c->first_bad))
            break;
        int rc = align_one(c, &c->jobs[i]);
        if (rc < 0) {
            pthread_mutex_lock(&c->lock);
            if (i < atomic_load(&c->first_bad)) {
                atomic_store(&c->first_bad, i);
                c->status = rc;
                snprintf(c->msg, sizeof c->msg, "%s", swgpu_last_error());
            }
            pthread_mutex_unlock(&c->lock);
        }
    }
    return NULL;
}

static int align_hits(const swgpu_seqset_t *queries, const swgpu_db_t *db,
                      const swgpu_matrix_t *m, const swgpu_opts_t *o,
                      swgpu_search_result_t *r)
{
    size_t n_jobs = 0;
    for (size_t i = 0; i < r->n_queries; i++)
        n_jobs += r->q[i].n_hits;
    if (n_jobs == 0)
        return SWGPU_OK;

    job_t *jobs = malloc(n_jobs * sizeof *jobs);
    if (!jobs)
        return swgpu__fail(SWGPU_ENOMEM, "search: out of memory for %zu alignments", n_jobs);
    size_t k = 0;
    for (size_t i = 0; i < r->n_queries; i++)
        for (size_t h = 0; h < r->q[i].n_hits; h++)
            jobs[k++] = (job_t){i, h};

    align_ctx_t c = {.queries = queries, .db = db, .m = m, .o = o, .r = r, .jobs = jobs,
                     .n_jobs = n_jobs, .status = SWGPU_OK};
    atomic_init(&c.next, 0);
    atomic_init(&c.first_bad, n_jobs);
    pthread_mutex_init(&c.lock, NULL);

    size_t nt = o->threads > 0 ? (size_t)o->threads : (size_t)swgpu__ncores();
    if (nt > n_jobs)
        nt = n_jobs;
    pthread_t *tid = nt > 1 ? malloc((nt - 1) * sizeof *tid) : NULL;
    size_t started = 0;
    if (tid)
        for (; started < nt - 1; started++)
            if (pthread_create(&tid[started], NULL, align_worker, &c) != 0)
                break; /* fewer threads; the calling thread still does the rest */
    align_worker(&c);
    for (size_t i = 0; i < started; i++)
        pthread_join(tid[i], NULL);
    free(tid);
    free(jobs);
    pthread_mutex_destroy(&c.lock);

    if (c.status < 0)
        return swgpu__fail(c.status, "%s", c.msg);
    return SWGPU_OK;
}

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

/* Parameters used when neither the table nor a fit gives any: the published
 * ones of the alphabet's default scoring system (warned about). */
static int fallback_karlin(swgpu_alphabet_t a, swgpu_karlin_t *k)
{
    swgpu_matrix_t *dm = NULL;
    int rc = a == SWGPU_DNA ? swgpu_matrix_dna(2, -3, &dm) : swgpu_matrix_builtin("BLOSUM62", &dm);
    if (rc == SWGPU_OK)
        rc = a == SWGPU_DNA ? swgpu_karlin_lookup(dm, 5, 2, k) : swgpu_karlin_lookup(dm, 11, 1, k);
    swgpu_matrix_destroy(dm);
    return rc;
}

int swgpu_search(const swgpu_seqset_t *queries, const swgpu_db_t *db,
                 const swgpu_matrix_t *m, const swgpu_opts_t *opts,
                 swgpu_search_result_t **out)
{
    const swgpu_engine_ops_t *ops = NULL;
    void *state = NULL;
    swgpu_search_result_t *r = NULL;
    int32_t *scores = NULL;
    uint64_t *tlen = NULL;
    cand_t *heap = NULL;
    swgpu_karlin_t fixed = {0}, fallback = {0};
    size_t n_fallback = 0;
    int have_fixed, have_fallback = 0;
    int rc;

    if (!out)
        return swgpu__fail(SWGPU_EINVAL, "search: NULL result pointer");
    *out = NULL;
    if (!queries || !db || !m || !opts)
        return swgpu__fail(SWGPU_EINVAL, "search: NULL argument");
    if ((rc = swgpu_opts_check(opts, m)) < 0)
        return rc;

    swgpu_alphabet_t qa = swgpu_seqset_alphabet(queries), da = swgpu_db_alphabet(db),
                     ma = swgpu_matrix_alphabet(m);
    if (qa != da)
        return swgpu__fail(SWGPU_EALPHABET,
                           "the queries are %s sequences but the database holds %s sequences",
                           swgpu_alphabet_name(qa), swgpu_alphabet_name(da));
    if (ma != qa)
        return swgpu__fail(SWGPU_EALPHABET, "matrix %s scores %s sequences but the queries are %s",
                           swgpu_matrix_name(m), swgpu_alphabet_name(ma), swgpu_alphabet_name(qa));
    if (db->n > UINT32_MAX)
        return swgpu__fail(SWGPU_ERANGE, "search: %llu database sequences, at most %u supported",
                           (unsigned long long)db->n, UINT32_MAX);

    /* Scores are 32-bit: the best possible score is max * qlen. */
    int mmax = swgpu_matrix_max(m);
    for (size_t i = 0; i < swgpu_seqset_size(queries); i++) {
        swgpu_seq_t q;
        if ((rc = swgpu_seqset_get(queries, i, &q)) < 0)
            return rc;
        if ((uint64_t)q.len > (uint64_t)INT32_MAX / (uint64_t)mmax)
            return swgpu__fail(SWGPU_ERANGE,
                               "query %zu (id %s): %zu residues with matrix maximum %d may "
                               "exceed a 32-bit score",
                               i + 1, q.id, q.len, mmax);
    }

    have_fixed = swgpu_karlin_lookup(m, opts->gap_open, opts->gap_extend, &fixed) == SWGPU_OK;

    if ((rc = swgpu__engine_select(opts, &ops)) < 0)
        return rc;

    size_t nq = swgpu_seqset_size(queries);
    size_t cap = (uint64_t)opts->top_n < db->n ? (size_t)opts->top_n : (size_t)db->n;
    r = calloc(1, sizeof *r);
    if (!r || !(r->q = calloc(nq ? nq : 1, sizeof *r->q)) ||
        !(scores = malloc((db->n ? db->n : 1) * sizeof *scores)) ||
        !(tlen = malloc((db->n ? db->n : 1) * sizeof *tlen)) ||
        !(heap = malloc((cap ? cap : 1) * sizeof *heap))) {
        rc = swgpu__fail(SWGPU_ENOMEM, "search: out of memory for %llu database scores",
                         (unsigned long long)db->n);
        goto fail;
    }
    r->n_queries = nq;
    r->backend = ops->name;
    for (uint64_t k = 0; k < db->n; k++)
        tlen[k] = db->off[k + 1] - db->off[k];

    if ((rc = ops->create(db, m, opts, &state)) < 0)
        goto fail;

    for (size_t i = 0; i < nq; i++) {
        swgpu_query_result_t *qr = &r->q[i];
        swgpu_scan_stats_t st = {0, 0, 0};
        swgpu_seq_t q;
        qr->query = i;
        if ((rc = swgpu_seqset_get(queries, i, &q)) < 0)
            goto fail;

        double t0 = swgpu__now();
        rc = ops->scan(state, q.res, q.len, scores, &st);
        r->scan_seconds += swgpu__now() - t0;
        if (rc < 0)
            goto fail;
        r->cells += (uint64_t)q.len * db->total_res;
        r->overflows += st.overflows;

        if (have_fixed) {
            qr->karlin = fixed;
        } else if (swgpu_karlin_fit(scores, tlen, (size_t)db->n, q.len, &qr->karlin) < 0) {
            swgpu__log(SWGPU_LOG_DEBUG, "query %zu (id %s): %s", i + 1, q.id,
                       swgpu_last_error());
            if (!have_fallback) {
                if ((rc = fallback_karlin(qa, &fallback)) < 0)
                    goto fail;
                have_fallback = 1;
            }
            qr->karlin = fallback;
            n_fallback++;
        }

        size_t n = top_hits(db, scores, cap, heap);
        size_t kept = 0;
        for (size_t h = 0; h < n; h++) {
            double e = swgpu_evalue(&qr->karlin, heap[h].score, q.len, db->total_res, db->n);
            if (e <= opts->evalue)
                heap[kept++] = heap[h];
        }
        if (kept) {
            qr->hits = calloc(kept, sizeof *qr->hits);
            if (!qr->hits) {
                rc = swgpu__fail(SWGPU_ENOMEM, "search: out of memory for %zu hits", kept);
                goto fail;
            }
        }
        for (size_t h = 0; h < kept; h++) {
            swgpu_hit_t *hit = &qr->hits[h];
            hit->target = heap[h].target;
            hit->score = heap[h].score;
            hit->bits = swgpu_bitscore(&qr->karlin, hit->score);
            hit->evalue = swgpu_evalue(&qr->karlin, hit->score, q.len, db->total_res, db->n);
            hit->aln.score = hit->score;
        }
        qr->n_hits = kept;
        swgpu__log(SWGPU_LOG_DEBUG, "query %zu (id %s, %zu residues): %zu hits, best score %d",
                   i + 1, q.id, q.len, kept, kept ? (int)qr->hits[0].score : 0);
    }
    ops->destroy(state);
    state = NULL;

    if (n_fallback)
        swgpu__log(SWGPU_LOG_WARN,
                   "no published Karlin-Altschul parameters for matrix %s with gap open %d "
                   "extend %d, and %zu of %zu queries had too few database scores to fit them "
                   "(%llu sequences): their E-values use the %s parameters and are approximate",
                   swgpu_matrix_name(m), opts->gap_open, opts->gap_extend, n_fallback, nq,
                   (unsigned long long)db->n,
                   qa == SWGPU_DNA ? "DNA +2/-3 open 5 extend 2" : "BLOSUM62 open 11 extend 1");

    if (!opts->no_align) {
        double t0 = swgpu__now();
        rc = align_hits(queries, db, m, opts, r);
        r->align_seconds = swgpu__now() - t0;
        if (rc < 0)
            goto fail;
    }

    free(scores);
    free(tlen);
    free(heap);
    *out = r;
    return SWGPU_OK;

fail:
    if (state)
        ops->destroy(state);
    free(scores);
    free(tlen);
    free(heap);
    swgpu_search_result_destroy(r);
    return rc;
}
