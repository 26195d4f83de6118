/*
 * search/pipeline.c - the alignments of a search's hits: a pool of threads
 * aligns the hits the sink queues (swgpu__push_jobs) while the scan goes
 * on, each hit in its own slot; with the cuda backend a feeder thread has
 * batches of their ends computed on the GPU.  swgpu_search_align() aligns
 * a part's share of a merged search's hits with the same pool.
 */
#include "search/search.h"
#include "align/align.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------ alignments */
/*
 * The pipeline: the engine hands each query's scores to sink() (one query
 * at a time, in the engine's order); sink() picks the query's hits and
 * queues their alignments, which a pool of threads computes while the scan
 * goes on.  Every hit has its own slot, so nothing depends on the order or
 * the thread count; the error reported is the one of the first failing
 * hit in (query, hit) order, as a sequential run would report it.
 */

/* GPU ends (cuda backend): a feeder thread takes batches of queued jobs from
 * the back of the queue, has their ends computed on the GPU (the end pass
 * is half of an alignment's host work) and queues them as ready, which the
 * workers take first.  A reserve stays queued for the workers meanwhile.
 * While the scan runs the GPU is the scan's: a pair kernel beside the scan's
 * gets few issue slots (36 pairs took 0.63 s of kernel time) and takes some
 * from it, so the reserve is then FEED_HOLD_S seconds of the workers' work,
 * by their measured time per job, and nothing is fed before FEED_TIMED jobs
 * are timed.  Once the scan has ended the reserve is half of what is queued
 * (a job per worker at least): a GPU batch comes back after a round trip
 * (~20 ms plus ~17 us a pair on an H200) and its hits still need their
 * tracebacks, so workers left a job or two each idled meanwhile (2,000 UniProt
 * queries: the 5,021 jobs left all sent at once came back after 0.106 s, the
 * alignments ended 0.153 s after the scan; bench/NOTES-gpu.md v30), and the
 * halves that follow keep both busy.  (2,000 UniProt queries x uniprot20k
 * on one H200, runs alternated: with GPU ends made at the start and fed
 * during the scan 2.23, 2.23 s wall against 2.11, 2.06 s without; with this
 * and the state made lazily (feeder_start) 2.15-2.23 s against 2.16-2.18 s,
 * on another host.) */
#define FEED_MIN 32     /* jobs, at least, for a GPU batch */
#define FEED_MAX 16384  /* jobs, at most */
#define FEED_HOLD_S 0.5 /* seconds of host work kept from the GPU during the scan */
#define FEED_TIMED 16   /* jobs timed, at least, before the GPU is fed during the scan */

/* 1 if (a) comes before (b) */
static int job_before(const swgpu__job_t *a, const swgpu__job_t *b)
{
    return a->query < b->query || (a->query == b->query && a->hit < b->hit);
}

/* Align one hit and verify its score; 0 or a status with last_error set.
 * A minus-strand hit aligns the query with the subject's reverse
 * complement; its target interval is then turned to the subject as stored. */
static int align_one(swgpu__pipe_t *c, const swgpu__job_t *j)
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

static void record_failure(swgpu__pipe_t *c, const swgpu__job_t *j, int rc)
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
static int jobs_room(swgpu__job_t **q, size_t *cap, size_t need)
{
    if (need <= *cap)
        return 0;
    size_t c = *cap ? 2 * *cap : 1024;
    while (c < need)
        c *= 2;
    swgpu__job_t *p = realloc(*q, c * sizeof *p);
    if (!p)
        return -1;
    *q = p;
    *cap = c;
    return 0;
}

void *swgpu__align_worker(void *arg)
{
    swgpu__pipe_t *c = arg;
    double cpu0 = swgpu__thread_cpu();
    double took = 0; /* the last job's seconds (a host job: ends not from the GPU) */
    for (;;) {
        pthread_mutex_lock(&c->lock);
        if (took > 0) {
            c->job_s += took;
            c->job_n++;
            took = 0;
        }
        while (c->rnext == c->n_ready && c->next == c->n_jobs && !(c->closed && !c->feeding))
            pthread_cond_wait(&c->cv, &c->lock);
        if (c->rnext == c->n_ready && c->next == c->n_jobs) {
            c->align_cpu += swgpu__thread_cpu() - cpu0;
            pthread_mutex_unlock(&c->lock);
            return NULL;
        }
        swgpu__job_t j = c->rnext < c->n_ready ? c->ready[c->rnext++] : c->jobs[c->next++];
        /* a failure earlier in (query, hit) order makes this one moot */
        int skip = c->status != SWGPU_OK && job_before(&c->bad, &j);
        pthread_mutex_unlock(&c->lock);
        if (!skip) {
            double t0 = j.ended ? 0 : swgpu__now();
            int rc = align_one(c, &j);
            if (rc == SWGPU_OK && c->more && c->more[j.query])
                rc = swgpu__hsps_of_hit(&c->qs[j.query], &c->r->q[j.query], j.hit, c->db, c->m,
                                        c->o, &c->more[j.query][j.hit]);
            if (rc < 0)
                record_failure(c, &j, rc);
            else if (!j.ended)
                took = swgpu__now() - t0 + 1e-9;
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
static int jobs_append(swgpu__job_t **q, size_t *n, size_t *cap, const swgpu__job_t *j,
                       size_t k)
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
    swgpu__pipe_t *c = arg;
    swgpu__job_t *b = NULL;
    swgpu__cu_pair_t *pj = NULL;
    uint8_t *rcbuf = NULL;
    size_t cap = 0, rc_cap = 0;
    pthread_mutex_lock(&c->lock);
    for (;;) {
        size_t avail = c->n_jobs - c->next;
        size_t reserve = (c->closed ? 1 : 2) * c->n_workers;
        if (c->closed && avail / 2 > reserve)
            reserve = avail / 2; /* (see FEED_HOLD_S) */
        if (!c->closed) { /* the scan runs: FEED_HOLD_S of host work (see FEED_HOLD_S) */
            double hold = c->job_n < FEED_TIMED ? (double)SIZE_MAX
                                                : FEED_HOLD_S * (double)c->n_workers *
                                                      (double)c->job_n / c->job_s;
            if (hold > (double)reserve)
                reserve = hold >= (double)avail ? avail : (size_t)hold;
        }
        if (c->status != SWGPU_OK)
            break;
        if (avail > reserve && avail - reserve >= FEED_MIN) {
            if (!c->pairs) { /* our own, made at the first batch (see feeder_start) */
                pthread_mutex_unlock(&c->lock);
                swgpu__cu_pairs_t *p = NULL;
                int crc = swgpu__cu_pairs_create(c->m, c->o->gap_open, c->o->gap_extend, &p);
                if (crc < 0)
                    swgpu__log(SWGPU_LOG_DEBUG, "hit ends on the host: %s", swgpu_last_error());
                pthread_mutex_lock(&c->lock);
                if (crc < 0)
                    break;
                c->pairs = p;
                continue;
            }
            size_t k = avail - reserve;
            if (k > FEED_MAX)
                k = FEED_MAX;
            if (k > cap) {
                swgpu__job_t *nb = realloc(b, k * sizeof *nb);
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
            const int after_scan = c->closed;
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
            const double tr = swgpu__now();
            if (rc == SWGPU_OK)
                rc = swgpu__cu_pairs_run(c->pairs, pj, k);
            swgpu__log(SWGPU_LOG_DEBUG, "hit ends: %zu jobs to the GPU from %.3f s (the scan's "
                       "clock, %s), back after %.3f s; %zu left to the host", k, tr - c->t0,
                       after_scan ? "after the scan" : "during it", swgpu__now() - tr, reserve);
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
                    swgpu__job_t tmp = b[nr];
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
static int selected(const swgpu__pipe_t *c, const swgpu_query_result_t *qr, size_t h,
                    int first_only)
{
    const swgpu__align_sel_t *s = c->sel;
    if (!s)
        return 1;
    const size_t first = s->first_only && !first_only ? s->first_go_on : s->first;
    return h < first || (!first_only && h < s->upto && qr->hits[h].evalue <= s->evalue);
}

/* queue the alignments of query i's hits */
int swgpu__push_jobs(swgpu__pipe_t *c, size_t i)
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
    int rc = swgpu__hsps_lists_query(c, i);
    if (rc < 0)
        return rc;
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
            c->jobs[c->n_jobs++] = (swgpu__job_t){.query = i, .hit = h};
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->lock);
    return SWGPU_OK;
}

/* ------------------------------------------------------ the threads */

#if SWGPU_HAVE_CUDA
/* The feeder of the hits' ends on the GPU, beside c->started alignment
 * threads (SWGPU_CUDA_PAIRS=0: the host computes them) */
static void feeder_start(swgpu__pipe_t *c, const swgpu_engine_ops_t *ops)
{
    if (!c->started || !(ops->caps & SWGPU__CAP_GPU) || !swgpu__env_gpu_pairs())
        return;
    /* our own pairs state is made by the feeder when it first has a batch:
     * a search whose hosts keep up never makes it (its pinned buffers and
     * stream were made beside the engine's set-up, and slowed it) */
    c->own_pairs = !(c->sel && c->sel->pairs);
    c->pairs = c->own_pairs ? NULL : c->sel->pairs;
    c->n_workers = c->started;
    c->feeding = 1;
    if (pthread_create(&c->feeder_th, NULL, feeder, c) != 0)
        c->feeding = 0;
    else
        c->have_feeder = 1;
}
#endif

void swgpu__aligners_start(swgpu__pipe_t *c, const swgpu_engine_ops_t *ops)
{
    const swgpu_opts_t *o = c->o;
    size_t nt = o->threads > 0 ? (size_t)o->threads : (size_t)swgpu__ncores();
    /* a GPU scan needs one core of its own to feed the GPU (batches, the
     * hand-over of scores); the others align */
    if (o->threads == 0 && nt > 1 && (ops->caps & SWGPU__CAP_GPU))
        nt--;
    c->tid = malloc(nt * sizeof *c->tid);
    if (c->tid)
        for (; c->started < nt; c->started++)
            if (pthread_create(&c->tid[c->started], NULL, swgpu__align_worker, c) != 0)
                break;
#if SWGPU_HAVE_CUDA
    feeder_start(c, ops);
#endif
}

size_t swgpu__aligners_close(swgpu__pipe_t *c, int failed)
{
    pthread_mutex_lock(&c->lock);
    c->closed = 1;
    if (failed) { /* drop what is queued */
        c->next = c->n_jobs;
        c->rnext = c->n_ready;
    }
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->lock);
    if (!failed && c->started == 0 && !c->o->no_align)
        swgpu__align_worker(c); /* no thread could be started: align here */
    for (size_t i = 0; i < c->started; i++)
        pthread_join(c->tid[i], NULL);
#if SWGPU_HAVE_CUDA
    if (c->have_feeder)
        pthread_join(c->feeder_th, NULL);
    c->have_feeder = 0;
    if (c->own_pairs)
        swgpu__cu_pairs_destroy(c->pairs);
    c->own_pairs = 0;
    c->pairs = NULL;
#endif
    size_t n = c->started ? c->started : 1;
    c->started = 0;
    return n;
}

void swgpu__pipe_free(swgpu__pipe_t *c)
{
    pthread_cond_destroy(&c->cv);
    pthread_mutex_destroy(&c->lock);
    free(c->jobs);
    free(c->ready);
    free(c->left);
    free(c->heap);
    free(c->pre);
    free(c->pre_ok);
    free(c->tid);
}

/* ---------------------------------------------------- alignments of a part */

int swgpu_search_align(swgpu_search_result_t *r, const swgpu_seqset_t *queries,
                       const swgpu_db_t *db, const swgpu_matrix_t *m, const swgpu_opts_t *opts)
{
    swgpu__pipe_t c;
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
    if ((rc = swgpu__seqset_queries(queries, db, m, opts, &qs, &ids)) < 0)
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
                c.jobs[c.n_jobs++] = (swgpu__job_t){.query = i, .hit = h};
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
    if ((rc = swgpu__hsps_lists(&c, r->n_queries)) < 0)
        goto done;
    for (size_t i = 0; i < r->n_queries && rc == SWGPU_OK; i++)
        rc = swgpu__hsps_lists_query(&c, i);
    if (rc < 0)
        goto done;
    size_t nt = opts->threads > 0 ? (size_t)opts->threads : (size_t)swgpu__ncores();
    if (nt > c.n_jobs)
        nt = c.n_jobs;
    if (nt > 1 && (tid = malloc(nt * sizeof *tid)))
        for (; started < nt; started++)
            if (pthread_create(&tid[started], NULL, swgpu__align_worker, &c) != 0)
                break;
    if (started == 0)
        swgpu__align_worker(&c);
    for (size_t i = 0; i < started; i++)
        pthread_join(tid[i], NULL);
    rc = c.status < 0 ? swgpu__fail(c.status, "%s", c.msg) : SWGPU_OK;
    if (rc == SWGPU_OK)
        rc = swgpu__hsps_splice_all(&c, r->n_queries);
done:
    swgpu__hsps_lists_free(&c, r->n_queries);
    pthread_cond_destroy(&c.cv);
    pthread_mutex_destroy(&c.lock);
    free(c.jobs);
    free(tid);
    free(qs);
    free(ids);
    return rc;
}

