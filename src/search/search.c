/*
 * search.c - database search orchestration: options, engine dispatch, top-N
 * selection, statistics, alignments of the kept hits.
 *
 * For every query:
 *   1. the engine (backend.c picks it once per search) scores the query
 *      against every database sequence: scores[k] for sorted index k;
 *   2. Karlin-Altschul parameters: the published ones for the matrix and gap
 *      pair, else a fit to this query's own score distribution;
 *   3. the top_n hits with score > 0 and E-value <= opts->evalue are chosen
 *      by (score desc, database index asc) - deterministic whatever the
 *      engine.  Under Spouge's model the E-value depends on the subject's
 *      length too, so the filter comes first: only scores from
 *      swgpu__evalue_min_score up can pass, and of those the E-value is
 *      computed for the candidates that would enter the top_n.
 * Then the alignments of all kept hits are computed on opts->threads
 * threads: the end by the SIMD pair engine (swgpu__cpu_score_pair_q, one
 * thread, the reference's tie rule), the begin and the path by the
 * reference engine (swgpu__align_from_end_q), each hit in its own slot
 * (so the result does not depend on the thread count), and each alignment
 * score is checked against the score the engine reported: a mismatch is an
 * internal error, never a silently different result.
 *
 * Queries are sequences (swgpu_search) or PSSMs (swgpu_search_pssm): both
 * become an array of swgpu__query_t (internal.h) with their ids, and every
 * step above is the same for both.
 *
 * A search split over database parts (swgpu-mpi): each part's search with
 * opts->candidates stops after the scan with the hits of its own that may
 * be among the whole search's (candidates()), swgpu_search_merge()
 * (merge.c) repeats steps 2 and 3 for the whole database, and
 * swgpu_search_align() aligns each part's share of the kept hits.
 */
#include "search/search.h"
#include "align/align.h"

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
    o->no_self = 0;
    o->evalue_model = SWGPU_EVALUE_SPOUGE;
    o->strand = SWGPU_STRAND_BOTH;
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

/* ----------------------------------------------------------------- top-N */

/* Candidate hit while scanning: score, database index, E-value. */
typedef struct {
    int32_t score;
    uint32_t target;
    double evalue;
    int minus;      /* the score is the subject's minus strand's */
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

/* The best (up to) cap candidates with score > 0 and, when filter is set,
 * E-value <= max_e, best first; returns the count.  heap has room for cap
 * entries.  Scores below min_score cannot reach max_e
 * (swgpu__evalue_min_score) or are not wanted; the others get their E-value
 * under ev (none: 0) computed when they would enter the heap. */
static size_t top_hits(const swgpu_db_t *db, const int32_t *scores, const uint8_t *minus,
                       const uint64_t *tlen, const swgpu__evalue_ctx_t *ev, int32_t min_score,
                       double max_e, int filter, size_t cap, cand_t *heap)
{
    size_t n = 0;
    if (min_score < 1)
        min_score = 1;
    for (uint64_t k = 0; k < db->n && cap > 0; k++) {
        if (scores[k] < min_score)
            continue;
        cand_t c = {scores[k], db->orig[k], 0.0, minus ? minus[k] : 0};
        if (n == cap && !better(&c, &heap[0]))
            continue;
        if (ev)
            c.evalue = swgpu__evalue_of(ev, c.score, tlen[k]);
        if (filter && !(c.evalue <= max_e))
            continue;
        if (n < cap) {
            heap[n] = c;
            heap_up(heap, n++);
        } else {
            heap[0] = c;
            heap_down(heap, n, 0);
        }
    }
    qsort(heap, n, sizeof *heap, cmp_rank);
    return n;
}

/* ------------------------------------------------------------ alignments */
/*
 * The pipeline: the engine hands each query's scores to sink() (one query
 * at a time, in the engine's order); sink() picks the query's hits and
 * queues their alignments, which a pool of threads computes while the scan
 * goes on.  Every hit has its own slot, so nothing depends on the order or
 * the thread count; the error reported is the one of the first failing
 * hit in (query, hit) order, as a sequential run would report it.
 */

typedef struct {
    size_t query;
    size_t hit;
    int ended;          /* 1: qend, tend hold the hit's end (computed on the GPU) */
    int64_t qend, tend;
    int begun;          /* 1: qbeg, tbeg hold its begin as well */
    int64_t qbeg, tbeg;
} job_t;

/* GPU ends (cuda backend): a feeder thread takes batches of queued jobs from
 * the back of the queue, has their ends computed on the GPU (the end pass
 * is half of an alignment's host work) and queues them as ready, which the
 * workers take first.  A reserve stays queued for the workers meanwhile. */
#define FEED_MIN 32     /* jobs, at least, for a GPU batch */
#define FEED_MAX 16384  /* jobs, at most */

/*
 * The strands of a DNA search.  The engines scan the queries' reverse
 * complements against the subjects as stored: the score of a query's
 * reverse complement against a subject is the score of the query against the
 * subject's reverse complement, since a DNA matrix (swgpu_matrix_dna: match
 * and mismatch) scores two codes as it scores their complements.  With both strands, engine query 2i is query i and 2i+1
 * its reverse complement; strands_sink() keeps the first of the two score
 * arrays to come until the other one does, then hands the query's sink the
 * better of each subject's two scores (plus on a tie) and which one it was.
 */
typedef struct {
    swgpu_scan_sink_t inner;   /* the sink of the queries */
    void *user;
    int both, minus;           /* two engine queries per query / the minus strand only */
    uint64_t n;                /* scores per query (database sequences) */
    int32_t **pending;         /* both: per query, the first strand's scores, until the other */
    uint8_t *pending_minus;    /* ... and which strand they are */
    int32_t *merged;           /* both: the query's best of two */
    uint8_t *flags;            /* per scan position, 1: the minus strand's score */
    const uint8_t **flags_out; /* set before each call of inner: flags, or NULL (all plus) */
    uint8_t *res;              /* the reverse complements' residues */
    swgpu__query_t *eq;        /* the engine queries (NULL: the queries themselves) */
    size_t neq;
} strands_t;

typedef struct {
    const swgpu__query_t *qs; /* the queries, nq of them, and their ids */
    const char *const *ids;
    const swgpu_db_t *db;
    const swgpu_matrix_t *m;
    const swgpu_opts_t *o;
    const swgpu__align_sel_t *sel; /* which hits to align (NULL: all) */
    swgpu_search_result_t *r;
    /* per-query selection (sink) */
    swgpu_alphabet_t alphabet;
    int have_fixed, have_fallback;
    swgpu_karlin_t fixed, fallback;
    const swgpu_karlin_t *qfixed; /* PSSM queries: each one's own (swgpu_pssm_karlin) */
    size_t n_fallback;
    const uint64_t *tlen;
    size_t cap;
    cand_t *heap;
    const uint32_t *id_ord;  /* --no-self: database indices sorted by id */
    const uint8_t *minus;    /* the query in sink(): per scan position, 1 where the score is
                                the minus strand's (NULL: all plus) */
    strands_t strands;
    /* progress (opts->progress): queries and cells done, when the scan began
     * and when progress was last reported */
    size_t n_done;
    uint64_t cells_done, cells_total;
    double t0, t_report;
    /* the alignment queue */
    pthread_mutex_t lock;
    pthread_cond_t cv;
    job_t *jobs;
    size_t n_jobs, cap_jobs, next;
    int closed;
    double align_cpu; /* CPU seconds the alignment threads used (phase timings) */
    /* GPU ends (see FEED_MIN) */
#if SWGPU_HAVE_CUDA
    swgpu__cu_pairs_t *pairs;
#endif
    int feeding;            /* the feeder thread runs */
    size_t n_workers;
    job_t *ready;
    size_t n_ready, cap_ready, rnext;
    size_t n_gpu_ends;
    size_t *left; /* sel->query_done: per query, its alignments not done yet */
    /* the first failure in (query, hit) order */
    int status;
    job_t bad;
    char msg[1024];
} pipe_t;

/* 1 if (a) comes before (b) */
static int job_before(const job_t *a, const job_t *b)
{
    return a->query < b->query || (a->query == b->query && a->hit < b->hit);
}

/* Align one hit and verify its score; 0 or a status with last_error set.
 * A minus-strand hit aligns the query with the subject's reverse
 * complement; its target interval is then turned to the subject as stored. */
static int align_one(pipe_t *c, const job_t *j)
{
    const swgpu__query_t *q = &c->qs[j->query];
    swgpu_seq_t t;
    swgpu_hit_t *h = &c->r->q[j->query].hits[j->hit];
    uint8_t *rc_res = NULL;
    int rc = swgpu_db_get(c->db, h->target, &t);
    if (rc < 0)
        return rc;
    if (h->minus) {
        if (!(rc_res = malloc(t.len ? t.len : 1)))
            return swgpu__fail(SWGPU_ENOMEM, "search: out of memory for the reverse complement "
                               "of database sequence %zu (%zu residues)", h->target + 1, t.len);
        swgpu_dna_revcomp(t.res, t.len, rc_res);
        t.res = rc_res;
    }
    {
        int32_t score = h->score;
        int64_t qend = j->qend, tend = j->tend;
        if (!j->ended &&
            (rc = swgpu__cpu_score_pair_q(q, t.res, t.len, c->m, c->o->gap_open,
                                          c->o->gap_extend, 1, swgpu__cpu_isa_best(), 0, NULL,
                                          NULL, &score, &qend, &tend)) < 0)
            goto done;
        rc = j->begun ? swgpu__align_from_begin_q(q, t.res, t.len, c->m, c->o->gap_open,
                                                  c->o->gap_extend, score, j->qbeg, j->tbeg,
                                                  qend, tend, &h->aln, -1)
                      : swgpu__align_from_end_q(q, t.res, t.len, c->m, c->o->gap_open,
                                                c->o->gap_extend, score, qend, tend, 0, &h->aln,
                                                -1);
        if (rc < 0)
            goto done;
    }
    if (h->minus) { /* the interval on the subject as stored */
        int64_t tb = h->aln.tbeg;
        h->aln.tbeg = (int64_t)t.len - h->aln.tend;
        h->aln.tend = (int64_t)t.len - tb;
    }
    if (h->aln.score != h->score)
        rc = swgpu__fail(SWGPU_ERANGE,
                         "internal error: query %zu (id %s) vs database sequence %zu (id %s%s): "
                         "backend %s scored %d but the reference alignment scores %d",
                         j->query + 1, c->ids[j->query], h->target + 1, t.id,
                         h->minus ? ", minus strand" : "", c->r->backend, (int)h->score,
                         (int)h->aln.score);
    else
        rc = SWGPU_OK;
done:
    free(rc_res);
    return rc;
}

static void record_failure(pipe_t *c, const job_t *j, int rc)
{
    pthread_mutex_lock(&c->lock);
    if (c->status == SWGPU_OK || job_before(j, &c->bad)) {
        c->status = rc;
        c->bad = *j;
        snprintf(c->msg, sizeof c->msg, "%s", swgpu_last_error());
    }
    pthread_mutex_unlock(&c->lock);
}

/* Room for need jobs in (*q, *cap), doubling; 0 or -1 (no memory). */
static int jobs_room(job_t **q, size_t *cap, size_t need)
{
    if (need <= *cap)
        return 0;
    size_t c = *cap ? 2 * *cap : 1024;
    while (c < need)
        c *= 2;
    job_t *p = realloc(*q, c * sizeof *p);
    if (!p)
        return -1;
    *q = p;
    *cap = c;
    return 0;
}

static void *align_worker(void *arg)
{
    pipe_t *c = arg;
    double cpu0 = swgpu__thread_cpu();
    for (;;) {
        pthread_mutex_lock(&c->lock);
        while (c->rnext == c->n_ready && c->next == c->n_jobs && !(c->closed && !c->feeding))
            pthread_cond_wait(&c->cv, &c->lock);
        if (c->rnext == c->n_ready && c->next == c->n_jobs) {
            c->align_cpu += swgpu__thread_cpu() - cpu0;
            pthread_mutex_unlock(&c->lock);
            return NULL;
        }
        job_t j = c->rnext < c->n_ready ? c->ready[c->rnext++] : c->jobs[c->next++];
        /* a failure earlier in (query, hit) order makes this one moot */
        int skip = c->status != SWGPU_OK && job_before(&c->bad, &j);
        pthread_mutex_unlock(&c->lock);
        if (!skip) {
            int rc = align_one(c, &j);
            if (rc < 0)
                record_failure(c, &j, rc);
        }
        if (c->left) {
            pthread_mutex_lock(&c->lock);
            int last = --c->left[j.query] == 0;
            pthread_mutex_unlock(&c->lock);
            if (last)
                c->sel->query_done(c->sel->done_user, j.query, &c->r->q[j.query]);
        }
    }
}

#if SWGPU_HAVE_CUDA
/* Append k jobs to (*q, *n, *cap); 0 or -1 (no memory). */
static int jobs_append(job_t **q, size_t *n, size_t *cap, const job_t *j, size_t k)
{
    if (jobs_room(q, cap, *n + k) < 0)
        return -1;
    memcpy(*q + *n, j, k * sizeof *j);
    *n += k;
    return 0;
}

/* The GPU ends' feeder (see FEED_MIN).  A failure of the GPU leaves the
 * jobs to the workers (the host computes their ends) and stops feeding. */
static void *feeder(void *arg)
{
    pipe_t *c = arg;
    job_t *b = NULL;
    swgpu__cu_pair_t *pj = NULL;
    uint8_t *rcbuf = NULL;
    size_t cap = 0, rc_cap = 0;
    pthread_mutex_lock(&c->lock);
    for (;;) {
        size_t avail = c->n_jobs - c->next;
        size_t reserve = (c->closed ? 1 : 2) * c->n_workers;
        if (c->status != SWGPU_OK)
            break;
        if (avail > reserve && avail - reserve >= FEED_MIN) {
            size_t k = avail - reserve;
            if (k > FEED_MAX)
                k = FEED_MAX;
            if (k > cap) {
                job_t *nb = realloc(b, k * sizeof *nb);
                if (nb)
                    b = nb;
                swgpu__cu_pair_t *np = realloc(pj, k * sizeof *np);
                if (np)
                    pj = np;
                if (!nb || !np)
                    break;
                cap = k;
            }
            c->n_jobs -= k; /* the newest k */
            memcpy(b, c->jobs + c->n_jobs, k * sizeof *b);
            pthread_mutex_unlock(&c->lock);
            int rc = SWGPU_OK;
            size_t rc_len = 0, rc_at = 0; /* minus-strand subjects, reverse complemented */
            for (size_t x = 0; x < k && rc == SWGPU_OK; x++) {
                const swgpu_hit_t *h = &c->r->q[b[x].query].hits[b[x].hit];
                swgpu_seq_t t;
                if (h->minus && (rc = swgpu_db_get(c->db, h->target, &t)) == SWGPU_OK)
                    rc_len += t.len;
            }
            if (rc == SWGPU_OK && rc_len > rc_cap) {
                uint8_t *nb = realloc(rcbuf, rc_len);
                if (nb) {
                    rcbuf = nb;
                    rc_cap = rc_len;
                } else {
                    rc = swgpu__fail(SWGPU_ENOMEM, "search: out of memory for %zu residues",
                                     rc_len);
                }
            }
            for (size_t x = 0; x < k && rc == SWGPU_OK; x++) {
                const swgpu__query_t *q = &c->qs[b[x].query];
                const swgpu_hit_t *h = &c->r->q[b[x].query].hits[b[x].hit];
                swgpu_seq_t t;
                rc = swgpu_db_get(c->db, h->target, &t);
                if (rc == SWGPU_OK && h->minus) {
                    swgpu_dna_revcomp(t.res, t.len, rcbuf + rc_at);
                    t.res = rcbuf + rc_at;
                    rc_at += t.len;
                }
                pj[x] = (swgpu__cu_pair_t){.q = q, .qlen = q->len, .t = t.res, .tlen = t.len,
                                           .known = h->score, .begin = 1};
            }
            if (rc == SWGPU_OK)
                rc = swgpu__cu_pairs_run(c->pairs, pj, k);
            if (rc < 0)
                swgpu__log(SWGPU_LOG_WARN, "hit ends on the GPU failed, the host computes them: "
                           "%s", swgpu_last_error());
            size_t nr = 0;
            for (size_t x = 0; x < k; x++)
                if (rc == SWGPU_OK && pj[x].done) {
                    b[x].ended = 1;
                    b[x].qend = pj[x].qend;
                    b[x].tend = pj[x].tend;
                    b[x].begun = pj[x].qbeg >= 0;
                    b[x].qbeg = pj[x].qbeg;
                    b[x].tbeg = pj[x].tbeg;
                    job_t tmp = b[nr];
                    b[nr++] = b[x];
                    b[x] = tmp;
                }
            pthread_mutex_lock(&c->lock);
            if (jobs_append(&c->ready, &c->n_ready, &c->cap_ready, b, nr) < 0 ||
                jobs_append(&c->jobs, &c->n_jobs, &c->cap_jobs, b + nr, k - nr) < 0) {
                if (c->status == SWGPU_OK || job_before(&b[0], &c->bad)) {
                    c->status = SWGPU_ENOMEM;
                    c->bad = b[0];
                    snprintf(c->msg, sizeof c->msg, "search: out of memory for %zu alignments",
                             c->n_jobs + k);
                }
                rc = -1;
            }
            c->n_gpu_ends += nr;
            pthread_cond_broadcast(&c->cv);
            if (rc < 0)
                break;
            continue;
        }
        if (c->closed)
            break;
        pthread_cond_wait(&c->cv, &c->lock);
    }
    c->feeding = 0;
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->lock);
    free(b);
    free(pj);
    free(rcbuf);
    return NULL;
}
#endif

/* 1 if hit h of query result qr is to be aligned (c->sel; first_only: the
 * query needs its first sel->first only) */
static int selected(const pipe_t *c, const swgpu_query_result_t *qr, size_t h, int first_only)
{
    const swgpu__align_sel_t *s = c->sel;
    if (!s)
        return 1;
    const size_t first = s->first_only && !first_only ? s->first_go_on : s->first;
    return h < first || (!first_only && h < s->upto && qr->hits[h].evalue <= s->evalue);
}

/* queue the alignments of query i's hits */
static int push_jobs(pipe_t *c, size_t i)
{
    const swgpu_query_result_t *qr = &c->r->q[i];
    size_t n = 0;
    int fo = !c->o->no_align && c->sel && c->sel->first_only &&
             c->sel->first_only(c->sel->user, i, qr);
    for (size_t h = 0; !c->o->no_align && h < qr->n_hits; h++)
        n += selected(c, qr, h, fo);
    if (n == 0) {
        if (c->left)
            c->sel->query_done(c->sel->done_user, i, qr);
        return SWGPU_OK;
    }
    pthread_mutex_lock(&c->lock);
    if (jobs_room(&c->jobs, &c->cap_jobs, c->n_jobs + n) < 0) {
        pthread_mutex_unlock(&c->lock);
        return swgpu__fail(SWGPU_ENOMEM, "search: out of memory for %zu alignments",
                           c->n_jobs + n);
    }
    if (c->left)
        c->left[i] = n;
    for (size_t h = 0; h < qr->n_hits; h++)
        if (selected(c, qr, h, fo))
            c->jobs[c->n_jobs++] = (job_t){.query = i, .hit = h};
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->lock);
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

/* --no-self: the database sequences with the same id as query q (id) and
 * the same residues, as sorted indices into ex (at most cap); returns the
 * count */
static size_t self_hits(const pipe_t *c, const char *id, const swgpu__query_t *q, uint64_t *ex,
                        size_t cap)
{
    const swgpu_db_t *db = c->db;
    size_t lo = 0, hi = (size_t)db->n, n = 0;
    while (lo < hi) { /* first id >= id */
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(db->names + db->name_off[c->id_ord[mid]], id) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (; lo < db->n && n < cap; lo++) {
        uint32_t x = c->id_ord[lo];
        if (strcmp(db->names + db->name_off[x], id) != 0)
            break;
        uint64_t k = db->rank[x] - db->part_first; /* x is one of the part's */
        uint64_t len = db->off[k + 1] - db->off[k];
        if (len == q->len && !memcmp(db->res + db->off[k], q->res, q->len))
            ex[n++] = k;
    }
    return n;
}

static const swgpu_db_t *cmp_db; /* set while id_ord is sorted (under a lock) */
static pthread_mutex_t cmp_lock = PTHREAD_MUTEX_INITIALIZER;

static int cmp_ids(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    int c = strcmp(cmp_db->names + cmp_db->name_off[x], cmp_db->names + cmp_db->name_off[y]);
    return c ? c : (x > y) - (x < y);
}

/* one more query scanned (cells of it): tell opts->progress, at most about
 * five times a second and once for the last query */
static void report_progress(pipe_t *c, uint64_t cells)
{
    c->n_done++;
    c->cells_done += cells * (c->strands.both ? 2 : 1);
    if (!c->o->progress)
        return;
    double now = swgpu__now();
    if (c->n_done < c->r->n_queries && now - c->t_report < 0.2)
        return;
    c->t_report = now;
    c->o->progress(c->n_done, c->r->n_queries, c->cells_done, c->cells_total, now - c->t0,
                   c->o->progress_user);
}

/* the fallback parameters (fallback_karlin), looked up once */
static int get_fallback(pipe_t *c)
{
    int rc;
    if (!c->have_fallback) {
        if ((rc = swgpu__fallback_karlin(c->alphabet, &c->fallback)) < 0)
            return rc;
        c->have_fallback = 1;
    }
    return SWGPU_OK;
}

/* The best (up to) c->cap hits of query i in c->heap, best first, --no-self
 * applied: top_hits() with ev, min_score, max_e and filter; returns the
 * count. */
static size_t select_top(pipe_t *c, size_t i, const int32_t *scores,
                         const swgpu__evalue_ctx_t *ev, int32_t min_score, int filter)
{
    const swgpu_db_t *db = c->db;
    uint64_t ex[8];
    size_t nex = c->id_ord ? self_hits(c, c->ids[i], &c->qs[i], ex, 8) : 0;
    size_t want = c->cap + nex < (size_t)db->n ? c->cap + nex : (size_t)db->n;
    size_t n = top_hits(db, scores, c->minus, c->tlen, ev, min_score, c->o->evalue, filter, want,
                        c->heap);
    if (nex) { /* drop the self hits: the rest are the best of the others */
        size_t w = 0;
        for (size_t h = 0; h < n; h++) {
            int self = 0;
            for (size_t e = 0; e < nex; e++)
                self |= c->heap[h].target == db->orig[ex[e]];
            if (!self)
                c->heap[w++] = c->heap[h];
        }
        n = w;
    }
    return n < c->cap ? n : c->cap;
}

/*
 * opts->candidates: query i's candidates, nothing else (see swgpu.h).  The
 * whole search picks its top_n among the hits with E-value <= opts->evalue,
 * so every part must send each hit of its own that could be among them:
 *  - published parameters: the part's best top_n of the hits that pass, as
 *    sink() chooses them (the E-values with the whole database's size);
 *  - parameters fitted to the whole database's scores (swgpu_search_merge):
 *    unknown here.  Fitted parameters give E-values that depend on the
 *    score alone, so the part's best top_n by score hold the best that
 *    pass; if the fit fails, the fallback parameters apply, whose E-values
 *    under Spouge's model depend on the subject's length too: then the
 *    best top_n of those that pass under the fallback are added.
 * Each candidate's evalue is its E-value under the published parameters,
 * else under the fallback ones (the merge takes it where it depends on the
 * subject's length, which the merge does not know).
 */
static int candidates(pipe_t *c, size_t i, const int32_t *scores)
{
    const swgpu_db_t *db = c->db;
    const swgpu__query_t *q = &c->qs[i];
    swgpu_query_result_t *qr = &c->r->q[i];
    swgpu__evalue_ctx_t ev;
    cand_t *more = NULL;
    size_t n, nb = 0;
    int rc;

    if (c->have_fixed) {
        swgpu__evalue_init(&ev, c->qfixed ? &c->qfixed[i] : &c->fixed, c->o->evalue_model,
                           q->len, swgpu__db_whole_res(db), swgpu__db_whole_n(db));
        n = select_top(c, i, scores, &ev, swgpu__evalue_min_score(&ev, c->o->evalue), 1);
    } else {
        if ((rc = get_fallback(c)) < 0)
            return rc;
        swgpu__evalue_init(&ev, &c->fallback, c->o->evalue_model, q->len,
                           swgpu__db_whole_res(db), swgpu__db_whole_n(db));
        if (ev.spouge) { /* the best that pass should the fit fail */
            nb = select_top(c, i, scores, &ev, swgpu__evalue_min_score(&ev, c->o->evalue), 1);
            if (nb && !(more = malloc(nb * sizeof *more)))
                return swgpu__fail(SWGPU_ENOMEM, "search: out of memory for %zu hits", nb);
            if (nb)
                memcpy(more, c->heap, nb * sizeof *more);
        }
        n = select_top(c, i, scores, &ev, 1, 0); /* the best by score */
    }
    if (n + nb && !(qr->hits = calloc(n + nb, sizeof *qr->hits))) {
        free(more);
        return swgpu__fail(SWGPU_ENOMEM, "search: out of memory for %zu hits", n + nb);
    }
    size_t a = 0, b = 0, k = 0; /* both lists best first: their union, best first */
    while (a < n || b < nb) {
        const cand_t *x;
        if (b == nb || (a < n && !better(&more[b], &c->heap[a])))
            x = &c->heap[a++];
        else
            x = &more[b++];
        if (k && qr->hits[k - 1].target == x->target)
            continue; /* in both */
        qr->hits[k].target = x->target;
        qr->hits[k].score = x->score;
        qr->hits[k].evalue = x->evalue;
        qr->hits[k].aln.score = x->score;
        qr->hits[k].minus = x->minus;
        k++;
    }
    qr->n_hits = k;
    free(more);
    return SWGPU_OK;
}

/* the engine's scores of query i: statistics, the top hits, their queued
 * alignments */
static int sink(void *user, size_t i, const int32_t *scores)
{
    pipe_t *c = user;
    const swgpu_db_t *db = c->db;
    swgpu_query_result_t *qr = &c->r->q[i];
    const swgpu__query_t *q = &c->qs[i];
    const char *id = c->ids[i];
    int rc;
    qr->query = i;

    if (c->o->on_scores &&
        (rc = c->o->on_scores(c->o->on_scores_user, i, scores, (size_t)db->n)) < 0)
        return swgpu__fail(rc, "search: the on_scores callback failed for query %zu (id %s)",
                           i + 1, id);
    if (c->o->candidates) {
        if ((rc = candidates(c, i, scores)) < 0)
            return rc;
        report_progress(c, (uint64_t)q->len * db->total_res);
        return SWGPU_OK;
    }

    if (c->have_fixed) {
        qr->karlin = c->qfixed ? c->qfixed[i] : c->fixed;
    } else if (swgpu_karlin_fit(scores, c->tlen, (size_t)db->n, q->len, &qr->karlin) < 0) {
        swgpu__log(SWGPU_LOG_DEBUG, "query %zu (id %s): %s", i + 1, id, swgpu_last_error());
        if ((rc = get_fallback(c)) < 0)
            return rc;
        qr->karlin = c->fallback;
        c->n_fallback++;
    }

    /* E-values with the whole database's size (a part's too) */
    swgpu__evalue_ctx_t ev;
    swgpu__evalue_init(&ev, &qr->karlin, c->o->evalue_model, q->len, swgpu__db_whole_res(db),
                       swgpu__db_whole_n(db));
    size_t kept = select_top(c, i, scores, &ev, swgpu__evalue_min_score(&ev, c->o->evalue), 1);
    if (kept && !(qr->hits = calloc(kept, sizeof *qr->hits)))
        return swgpu__fail(SWGPU_ENOMEM, "search: out of memory for %zu hits", kept);
    for (size_t h = 0; h < kept; h++) {
        swgpu_hit_t *hit = &qr->hits[h];
        hit->target = c->heap[h].target;
        hit->score = c->heap[h].score;
        hit->bits = swgpu_bitscore(&qr->karlin, hit->score);
        hit->evalue = c->heap[h].evalue;
        hit->aln.score = hit->score;
        hit->minus = c->heap[h].minus;
    }
    qr->n_hits = kept;
    swgpu__log(SWGPU_LOG_DEBUG, "query %zu (id %s, %zu residues): %zu hits, best score %d",
               i + 1, id, q->len, kept, kept ? (int)qr->hits[0].score : 0);
    if ((rc = push_jobs(c, i)) < 0)
        return rc;
    report_progress(c, (uint64_t)q->len * db->total_res);
    return SWGPU_OK;
}

/* ------------------------------------------------------------- strands */

static void strands_free(strands_t *st, size_t nq)
{
    if (st->pending)
        for (size_t i = 0; i < nq; i++)
            free(st->pending[i]);
    free(st->pending);
    free(st->pending_minus);
    free(st->merged);
    free(st->flags);
    free(st->res);
    free(st->eq);
    memset(st, 0, sizeof *st);
}

/* The engine queries of nq queries qs (st->eq, st->neq) for opts->strand,
 * and the state of strands_sink() passing scores on to inner(user, ...);
 * st->eq NULL: the queries themselves.  n: the database's sequences. */
static int strands_init(strands_t *st, const swgpu__query_t *qs, size_t nq, swgpu_alphabet_t qa,
                        const swgpu_opts_t *opts, uint64_t n, swgpu_scan_sink_t inner,
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
        strands_free(st, 0);
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

/* the engine's scores of engine query k (a swgpu_scan_sink_t on a strands_t) */
static int strands_sink(void *user, size_t k, const int32_t *scores)
{
    strands_t *st = user;
    if (!st->both) {
        if (st->flags_out)
            *st->flags_out = st->minus ? st->flags : NULL;
        return st->inner(st->user, k, scores);
    }
    size_t i = k / 2;
    int minus = (int)(k % 2);
    if (!st->pending[i]) { /* the first of the two: kept until the other comes */
        if (!(st->pending[i] = malloc((st->n ? st->n : 1) * sizeof *scores)))
            return swgpu__fail(SWGPU_ENOMEM, "search: out of memory for %llu scores",
                               (unsigned long long)st->n);
        memcpy(st->pending[i], scores, st->n * sizeof *scores);
        st->pending_minus[i] = (uint8_t)minus;
        return SWGPU_OK;
    }
    const int32_t *plus = minus ? st->pending[i] : scores, *mn = minus ? scores : st->pending[i];
    for (uint64_t t = 0; t < st->n; t++) {
        int m = mn[t] > plus[t];
        st->merged[t] = m ? mn[t] : plus[t];
        st->flags[t] = (uint8_t)m;
    }
    free(st->pending[i]);
    st->pending[i] = NULL;
    if (st->flags_out)
        *st->flags_out = st->flags;
    return st->inner(st->user, i, st->merged);
}

/* Common checks of a search's database, matrix and options; the queries'
 * alphabet qa must be the database's and the matrix's. */
static int check_search(swgpu_alphabet_t qa, const swgpu_db_t *db, const swgpu_matrix_t *m,
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
    if (db->n > UINT32_MAX)
        return swgpu__fail(SWGPU_ERANGE, "search: %llu database sequences, at most %u supported",
                           (unsigned long long)db->n, UINT32_MAX);
    return SWGPU_OK;
}

/* Scores are 32-bit: the best possible score of query i is max * qlen. */
static int check_query_range(const swgpu__query_t *q, const char *id, size_t i, int32_t smax)
{
    if (smax > 0 && (uint64_t)q->len > (uint64_t)INT32_MAX / (uint64_t)smax)
        return swgpu__fail(SWGPU_ERANGE,
                           "query %zu (id %s): %zu residues with %s maximum %d may exceed a "
                           "32-bit score", i + 1, id, q->len, q->rows ? "PSSM" : "matrix",
                           (int)smax);
    return SWGPU_OK;
}

static int search_run(const swgpu__query_t *qs, const char *const *ids, size_t nq,
                      swgpu_alphabet_t qa, const swgpu_db_t *db, const swgpu_matrix_t *m,
                      const swgpu_opts_t *opts, const swgpu_karlin_t *qfixed,
                      const swgpu__align_sel_t *sel, swgpu_search_result_t **out);

/* The sequences of a query set as the engines' queries, checked against
 * the database, matrix and options (*qs and *ids: the caller frees them) */
static int seqset_queries(const swgpu_seqset_t *queries, const swgpu_db_t *db,
                          const swgpu_matrix_t *m, const swgpu_opts_t *opts,
                          swgpu__query_t **qs, const char ***ids)
{
    swgpu_alphabet_t qa = swgpu_seqset_alphabet(queries);
    int rc;
    *qs = NULL;
    *ids = NULL;
    if ((rc = check_search(qa, db, m, opts)) < 0)
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
        if ((rc = check_query_range(&q[i], sq.id, i, swgpu_matrix_max(m))) < 0)
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

int swgpu_search(const swgpu_seqset_t *queries, const swgpu_db_t *db,
                 const swgpu_matrix_t *m, const swgpu_opts_t *opts,
                 swgpu_search_result_t **out)
{
    return swgpu__search_sel(queries, db, m, opts, NULL, out);
}

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
    if ((rc = seqset_queries(queries, db, m, opts, &qs, &ids)) == SWGPU_OK)
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
    size_t n;
    const swgpu_matrix_t *m;
    const swgpu_opts_t *o;
    swgpu_karlin_t *k;
    const double *m_K; /* m's ideal ungapped K, computed once (NULL: by each job) */
    int *failed;
    char (*msg)[256];
    atomic_size_t next;
    atomic_ullong cpu_us; /* CPU microseconds of the workers (phase timings) */
    atomic_ullong max_us; /* the longest job's wall microseconds */
} karlin_jobs_t;

static void *karlin_worker(void *arg)
{
    karlin_jobs_t *J = arg;
    double cpu0 = swgpu__thread_cpu();
    for (size_t i; (i = atomic_fetch_add(&J->next, 1)) < J->n;) {
        double t0 = swgpu__now();
        if ((J->failed[i] = swgpu__pssm_karlin_km(J->pssms[i], J->m, J->o->gap_open,
                                                  J->o->gap_extend, J->m_K, &J->k[i]) < 0))
            snprintf(J->msg[i], sizeof J->msg[i], "%s", swgpu_last_error());
        unsigned long long us = (unsigned long long)(1e6 * (swgpu__now() - t0)),
                           was = atomic_load(&J->max_us);
        while (us > was && !atomic_compare_exchange_weak(&J->max_us, &was, us))
            ;
    }
    atomic_fetch_add(&J->cpu_us, (unsigned long long)(1e6 * (swgpu__thread_cpu() - cpu0)));
    return NULL;
}

static int pssm_karlins(const swgpu_pssm_t *const *pssms, size_t n, const swgpu_matrix_t *m,
                        const swgpu_opts_t *opts, const swgpu_karlin_t *fixed, swgpu_karlin_t *k)
{
    karlin_jobs_t J;
    memset(&J, 0, sizeof J);
    J.pssms = pssms;
    J.n = n;
    J.m = m;
    J.o = opts;
    J.k = k;
    double lm, km, hm; /* the matrix's part of every PSSM's K: once */
    if (n && swgpu__matrix_ideal_karlin(m, &lm, &km, &hm) == SWGPU_OK)
        J.m_K = &km;
    J.failed = calloc(n ? n : 1, sizeof *J.failed);
    J.msg = calloc(n ? n : 1, sizeof *J.msg);
    pthread_t tid[64];
    size_t nt = opts->threads > 0 ? (size_t)opts->threads : (size_t)swgpu__ncores(), started = 0;
    if (!J.failed || !J.msg) {
        free(J.failed);
        free(J.msg);
        return swgpu__fail(SWGPU_ENOMEM, "search: out of memory for %zu PSSMs", n);
    }
    atomic_init(&J.next, 0);
    atomic_init(&J.cpu_us, 0);
    atomic_init(&J.max_us, 0);
    if (nt > 64)
        nt = 64;
    if (nt > n)
        nt = n;
    double t0 = swgpu__now();
    for (; nt > 1 && started < nt; started++)
        if (pthread_create(&tid[started], NULL, karlin_worker, &J) != 0)
            break;
    if (!started)
        karlin_worker(&J);
    for (size_t t = 0; t < started; t++)
        pthread_join(tid[t], NULL);
    swgpu__log(SWGPU_LOG_DEBUG, "statistics of %zu PSSMs: %.3f s on %zu threads, %.3f CPU s (the "
               "longest %.3f s)", n, swgpu__now() - t0, started ? started : 1,
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
    if ((rc = check_search(SWGPU_PROTEIN, db, m, opts)) < 0)
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
        if ((rc = check_query_range(&qs[i], ids[i], i, qs[i].smax)) < 0)
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

/* The search of nq queries (checked), their ids for messages and --no-self;
 * qa their alphabet. */
static int search_run(const swgpu__query_t *qs, const char *const *ids, size_t nq,
                      swgpu_alphabet_t qa, const swgpu_db_t *db, const swgpu_matrix_t *m,
                      const swgpu_opts_t *opts, const swgpu_karlin_t *qfixed,
                      const swgpu__align_sel_t *sel, swgpu_search_result_t **out)
{
    const swgpu_engine_ops_t *ops = NULL;
    void *state = NULL;
    swgpu_search_result_t *r = NULL;
    int32_t *scores = NULL;
    uint64_t *tlen = NULL;
    uint32_t *id_ord = NULL;
    pthread_t *tid = NULL;
    size_t started = 0;
    pipe_t c;
    int rc;
#if SWGPU_HAVE_CUDA
    pthread_t feeder_th;
    int have_feeder = 0, own_pairs = 0;
#endif

    swgpu__isa_t isa; /* a bad SWGPU_CPU_ISA is refused before any work */
    if ((rc = swgpu__cpu_isa_env(&isa)))
        return rc;
    memset(&c, 0, sizeof c);
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

    if ((rc = swgpu__engine_select(opts, &ops)) < 0)
        goto fail;

    size_t cap = (uint64_t)opts->top_n < db->n ? (size_t)opts->top_n : (size_t)db->n;
    r = calloc(1, sizeof *r);
    if (!r || !(r->q = calloc(nq ? nq : 1, sizeof *r->q)) ||
        !(tlen = malloc((db->n ? db->n : 1) * sizeof *tlen)) ||
        !(c.heap = malloc((cap + 8 ? cap + 8 : 1) * sizeof *c.heap))) {
        rc = swgpu__fail(SWGPU_ENOMEM, "search: out of memory for %llu database scores",
                         (unsigned long long)db->n);
        goto fail;
    }
    r->n_queries = nq;
    r->backend = ops->name;
    if (sel && sel->query_done && !(c.left = calloc(nq ? nq : 1, sizeof *c.left))) {
        rc = swgpu__fail(SWGPU_ENOMEM, "search: out of memory for %zu queries", nq);
        goto fail;
    }
    for (size_t i = 0; i < nq; i++)
        r->q[i].query = i;
    for (uint64_t k = 0; k < db->n; k++)
        tlen[k] = db->off[k + 1] - db->off[k];
    if (opts->no_self && db->n) {
        if (!(id_ord = malloc(db->n * sizeof *id_ord))) {
            rc = swgpu__fail(SWGPU_ENOMEM, "search: out of memory for %llu ids",
                             (unsigned long long)db->n);
            goto fail;
        }
        for (uint64_t x = 0; x < db->n; x++)
            id_ord[x] = db->orig[x];
        pthread_mutex_lock(&cmp_lock);
        cmp_db = db;
        qsort(id_ord, (size_t)db->n, sizeof *id_ord, cmp_ids);
        cmp_db = NULL;
        pthread_mutex_unlock(&cmp_lock);
    }

    c.qs = qs;
    c.ids = ids;
    c.db = db;
    c.m = m;
    c.o = opts;
    c.r = r;
    c.alphabet = qa;
    c.tlen = tlen;
    c.cap = cap;
    c.id_ord = id_ord;
    pthread_mutex_init(&c.lock, NULL);
    pthread_cond_init(&c.cv, NULL);

    double t_create = swgpu__now();
    if ((rc = ops->create(db, m, opts, &state)) < 0)
        goto fail_pipe;
    t_create = swgpu__now() - t_create;

    /* the alignment threads, waiting for the first hits */
    if (!opts->no_align) {
        size_t nt = opts->threads > 0 ? (size_t)opts->threads : (size_t)swgpu__ncores();
        /* a GPU scan needs one core of its own to feed the GPU (batches,
         * the hand-over of scores); the others align */
        if (opts->threads == 0 && nt > 1 && (ops->caps & SWGPU__CAP_GPU))
            nt--;
        tid = malloc(nt * sizeof *tid);
        if (tid)
            for (; started < nt; started++)
                if (pthread_create(&tid[started], NULL, align_worker, &c) != 0)
                    break;
#if SWGPU_HAVE_CUDA
        /* the hits' ends on the GPU (SWGPU_CUDA_PAIRS=0: on the host) */
        const char *pe = getenv("SWGPU_CUDA_PAIRS");
        if (started && (ops->caps & SWGPU__CAP_GPU) && !(pe && !strcmp(pe, "0"))) {
            own_pairs = !(sel && sel->pairs);
            if (!own_pairs) {
                c.pairs = sel->pairs;
            } else if (swgpu__cu_pairs_create(m, opts->gap_open, opts->gap_extend, &c.pairs) < 0) {
                swgpu__log(SWGPU_LOG_DEBUG, "hit ends on the host: %s", swgpu_last_error());
                c.pairs = NULL;
                own_pairs = 0;
            }
            if (c.pairs) {
                c.n_workers = started;
                c.feeding = 1;
                if (pthread_create(&feeder_th, NULL, feeder, &c) != 0)
                    c.feeding = 0;
                else
                    have_feeder = 1;
            }
        }
#endif
    }

    double t0 = swgpu__now();
    c.t0 = c.t_report = t0;
    rc = strands_init(&c.strands, qs, nq, qa, opts, db->n, sink, &c, &c.minus);
    const swgpu__query_t *eq = c.strands.eq ? c.strands.eq : qs;
    for (size_t i = 0; i < c.strands.neq; i++)
        c.cells_total += (uint64_t)eq[i].len * db->total_res;
    if (rc == SWGPU_OK) {
        swgpu_scan_stats_t st = {0, 0, 0};
        if (ops->scan_many) {
            rc = ops->scan_many(state, c.strands.neq, eq, strands_sink, &c.strands, &st);
        } else {
            if (!(scores = malloc((db->n ? db->n : 1) * sizeof *scores)))
                rc = swgpu__fail(SWGPU_ENOMEM, "search: out of memory for %llu database scores",
                                 (unsigned long long)db->n);
            for (size_t i = 0; i < c.strands.neq && rc == SWGPU_OK; i++) {
                rc = ops->scan(state, &eq[i], scores, &st);
                if (rc == SWGPU_OK)
                    rc = strands_sink(&c.strands, i, scores);
            }
        }
        r->cells = st.cells;
        r->overflows = st.overflows;
    }
    strands_free(&c.strands, nq);
    double t1 = swgpu__now();
    r->scan_seconds = t1 - t0;
    ops->destroy(state);
    state = NULL;
    double t_destroy = swgpu__now() - t1;

    /* the alignments still queued */
    pthread_mutex_lock(&c.lock);
    c.closed = 1;
    if (rc < 0) { /* a failed scan: drop what is queued */
        c.next = c.n_jobs;
        c.rnext = c.n_ready;
    }
    pthread_cond_broadcast(&c.cv);
    pthread_mutex_unlock(&c.lock);
    if (!opts->no_align && started == 0 && rc == SWGPU_OK)
        align_worker(&c); /* no thread could be started: align here */
    for (size_t i = 0; i < started; i++)
        pthread_join(tid[i], NULL);
#if SWGPU_HAVE_CUDA
    if (have_feeder)
        pthread_join(feeder_th, NULL);
    have_feeder = 0;
    if (own_pairs)
        swgpu__cu_pairs_destroy(c.pairs);
    c.pairs = NULL;
#endif
    size_t n_align_threads = started ? started : 1;
    started = 0;
    r->align_seconds = opts->no_align ? 0.0 : swgpu__now() - t1;
    swgpu__log(SWGPU_LOG_DEBUG, "search of %zu queries: engine %s set up in %.3f s, scan %.3f s, "
               "engine released in %.3f s; %zu alignments (%zu ends on the GPU), %.3f s after "
               "the scan, %.3f CPU s on %zu threads", nq, ops->name, t_create, r->scan_seconds,
               t_destroy, c.n_jobs + c.n_ready, c.n_gpu_ends, r->align_seconds, c.align_cpu,
               n_align_threads);
    if (rc < 0)
        goto fail_pipe;
    if (c.status < 0) {
        rc = swgpu__fail(c.status, "%s", c.msg);
        goto fail_pipe;
    }

    if (c.n_fallback)
        swgpu__log(SWGPU_LOG_WARN,
                   "no published Karlin-Altschul parameters for matrix %s with gap open %d "
                   "extend %d, and %zu of %zu queries had too few database scores to fit them "
                   "(%llu sequences): their E-values use the %s parameters and are approximate",
                   swgpu_matrix_name(m), opts->gap_open, opts->gap_extend, c.n_fallback, nq,
                   (unsigned long long)db->n,
                   qa == SWGPU_DNA ? "DNA +2/-3 open 5 extend 2" : "BLOSUM62 open 11 extend 1");

    pthread_cond_destroy(&c.cv);
    pthread_mutex_destroy(&c.lock);
    free(c.jobs);
    free(c.ready);
    free(c.left);
    free(c.heap);
    free(scores);
    free(tlen);
    free(id_ord);
    free(tid);
    *out = r;
    return SWGPU_OK;

fail_pipe:
    if (started) {
        pthread_mutex_lock(&c.lock);
        c.closed = 1;
        c.next = c.n_jobs;
        c.rnext = c.n_ready;
        pthread_cond_broadcast(&c.cv);
        pthread_mutex_unlock(&c.lock);
        for (size_t i = 0; i < started; i++)
            pthread_join(tid[i], NULL);
    }
#if SWGPU_HAVE_CUDA
    if (have_feeder)
        pthread_join(feeder_th, NULL);
    if (own_pairs)
        swgpu__cu_pairs_destroy(c.pairs);
#endif
    pthread_cond_destroy(&c.cv);
    pthread_mutex_destroy(&c.lock);
fail:
    if (state)
        ops->destroy(state);
    strands_free(&c.strands, nq);
    free(c.jobs);
    free(c.ready);
    free(c.left);
    free(c.heap);
    free(scores);
    free(tlen);
    free(id_ord);
    free(tid);
    swgpu_search_result_destroy(r);
    return rc;
}

/* ---------------------------------------------------- alignments of a part */

int swgpu_search_align(swgpu_search_result_t *r, const swgpu_seqset_t *queries,
                       const swgpu_db_t *db, const swgpu_matrix_t *m, const swgpu_opts_t *opts)
{
    pipe_t c;
    pthread_t *tid = NULL;
    swgpu__query_t *qs = NULL;
    const char **ids = NULL;
    size_t started = 0, total = 0;
    int rc;

    if (!r || !queries || !db || !m || !opts)
        return swgpu__fail(SWGPU_EINVAL, "search_align: NULL argument");
    memset(&c, 0, sizeof c);
    for (size_t i = 0; i < r->n_queries; i++) {
        if (r->q[i].query != i || i >= swgpu_seqset_size(queries))
            return swgpu__fail(SWGPU_EINVAL, "search_align: result %zu names query %zu (%zu "
                               "queries); result i must be query i", i, r->q[i].query,
                               swgpu_seqset_size(queries));
        total += r->q[i].n_hits;
    }
    if ((rc = seqset_queries(queries, db, m, opts, &qs, &ids)) < 0)
        return rc;
    if (!(c.jobs = malloc((total ? total : 1) * sizeof *c.jobs))) {
        free(qs);
        free(ids);
        return swgpu__fail(SWGPU_ENOMEM, "search_align: out of memory for %zu alignments", total);
    }
    /* the hits whose target this handle holds; job (i, h) is result i's hit h */
    for (size_t i = 0; i < r->n_queries; i++)
        for (size_t h = 0; h < r->q[i].n_hits; h++) {
            uint64_t t = r->q[i].hits[h].target, k;
            if (t >= swgpu__db_whole_n(db))
                continue;
            k = db->rank[t];
            if (k >= db->part_first && k - db->part_first < db->n)
                c.jobs[c.n_jobs++] = (job_t){.query = i, .hit = h};
        }
    if (!r->backend)
        r->backend = "unknown";
    c.qs = qs;
    c.ids = ids;
    c.db = db;
    c.m = m;
    c.o = opts;
    c.r = r;
    c.closed = 1;
    pthread_mutex_init(&c.lock, NULL);
    pthread_cond_init(&c.cv, NULL);
    size_t nt = opts->threads > 0 ? (size_t)opts->threads : (size_t)swgpu__ncores();
    if (nt > c.n_jobs)
        nt = c.n_jobs;
    if (nt > 1 && (tid = malloc(nt * sizeof *tid)))
        for (; started < nt; started++)
            if (pthread_create(&tid[started], NULL, align_worker, &c) != 0)
                break;
    if (started == 0)
        align_worker(&c);
    for (size_t i = 0; i < started; i++)
        pthread_join(tid[i], NULL);
    rc = c.status < 0 ? swgpu__fail(c.status, "%s", c.msg) : SWGPU_OK;
    pthread_cond_destroy(&c.cv);
    pthread_mutex_destroy(&c.lock);
    free(c.jobs);
    free(tid);
    free(qs);
    free(ids);
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
    int32_t *scores = NULL;
    int rc;

    if (!queries || !db || !m || !opts || !out)
        return swgpu__fail(SWGPU_EINVAL, "scan scores: NULL argument");
    if (db->whole_n) /* its database order is the whole database's */
        return swgpu__fail(SWGPU_EINVAL, "scan scores: the database is a part of a database "
                           "(swgpu_opts_t.on_scores gives a part's scores)");
    if ((rc = seqset_queries(queries, db, m, opts, &qs, &ids)) < 0)
        return rc;
    size_t nq = swgpu_seqset_size(queries);
    all_scores_t a = {db, out};
    strands_t str;
    if ((rc = strands_init(&str, qs, nq, swgpu_seqset_alphabet(queries), opts, db->n,
                           scatter_scores, &a, NULL)) < 0)
        goto done;
    const swgpu__query_t *eq = str.eq ? str.eq : qs;
    if ((rc = swgpu__engine_select(opts, &ops)) < 0 ||
        (rc = ops->create(db, m, opts, &state)) < 0)
        goto done;
    swgpu_scan_stats_t st = {0, 0, 0};
    if (ops->scan_many) {
        rc = ops->scan_many(state, str.neq, eq, strands_sink, &str, &st);
    } else {
        if (!(scores = malloc((db->n ? db->n : 1) * sizeof *scores)))
            rc = swgpu__fail(SWGPU_ENOMEM, "scan scores: out of memory for %llu database scores",
                             (unsigned long long)db->n);
        for (size_t i = 0; i < str.neq && rc == SWGPU_OK; i++) {
            rc = ops->scan(state, &eq[i], scores, &st);
            if (rc == SWGPU_OK)
                rc = strands_sink(&str, i, scores);
        }
    }
done:
    strands_free(&str, nq);
    if (state)
        ops->destroy(state);
    free(scores);
    free(qs);
    free(ids);
    return rc;
}
