/*
 * psi/pool.c - the PSSMs of one round, built on several threads while its
 * search goes on (swgpu__psi_build_open).  A worker takes a query (in the
 * order they come, ready: its first stretches scored on the GPU, or, when
 * none is, the newest one on the host) and sets up its rows
 * (swgpu__psi_hits_setup); their further alignments, most of the work of a
 * query with hundreds of included hits, go to a queue that every worker
 * takes from; the query's worker helps with the queue until its own rows
 * are done, then purges and builds (swgpu__psi_hits_finish).  So a query of
 * 500 long rows no longer keeps one thread busy while the others wait.  At
 * most one query per worker is set up at a time (its alignment in memory).
 * With CUDA a thread scores the rows' first further stretches on the GPU
 * ahead of the workers (stretches_ahead).
 */
#include "psi/psi.h"

#include <string.h>

/* One queued row (called without the lock). */
static void run_row(swgpu__psi_jobs_t *J, swgpu__psi_row_task_t tk)
{
    int rc = swgpu__psi_hits_more(tk.H, tk.r);
    pthread_mutex_lock(&J->lock);
    if (rc < 0)
        swgpu__psi_hits_failed(tk.H, tk.r, rc);
    if (--tk.H->pending == 0)
        pthread_cond_broadcast(&J->cv);
    pthread_mutex_unlock(&J->lock);
}

/* Job k, start to end (called without the lock; J->setting_up counts it). */
static void run_job(swgpu__psi_jobs_t *J, size_t k, int use_pre)
{
    swgpu__psi_rescan_t S = {0};
    swgpu__psi_hits_t H;
    int set = 0, queued = 0, rc;
    double t0 = swgpu__now();
    int more = J->qr[k]->n_hits > 0, ahead = use_pre && J->pre && J->pre[k];
    rc = more && !ahead ? swgpu__psi_rescan_init(&S, &J->q[k], J->searched[k], J->qr[k], J->db,
                                                 J->m, J->o, J->thr)
                        : SWGPU_OK;
    if (rc == SWGPU_OK)
        set = (rc = swgpu__psi_hits_setup(&H, &J->q[k], J->qr[k], J->db,
                                          more ? (ahead ? &J->S[k] : &S) : NULL, J->thr)) ==
              SWGPU_OK;
    if (set && ahead)
        H.pre = J->pre[k];
    pthread_mutex_lock(&J->lock);
    if (set && H.nset > 1) {
        size_t need = J->ntasks + H.nset - 1;
        if (need > J->task_cap) {
            size_t cap = J->task_cap ? 2 * J->task_cap : 1024;
            while (cap < need)
                cap *= 2;
            swgpu__psi_row_task_t *t = realloc(J->tasks, cap * sizeof *t);
            if (t) {
                J->tasks = t;
                J->task_cap = cap;
            }
        }
        if (need <= J->task_cap) { /* else (no memory for the queue): the rows here */
            for (size_t r = 1; r < H.nset; r++)
                J->tasks[J->ntasks++] = (swgpu__psi_row_task_t){&H, r};
            H.pending = H.nset - 1;
            queued = 1;
        }
    }
    J->setting_up--;
    pthread_cond_broadcast(&J->cv);
    if (set && !queued) {
        pthread_mutex_unlock(&J->lock);
        for (size_t r = 1; r < H.nset; r++)
            if ((rc = swgpu__psi_hits_more(&H, r)) < 0) {
                swgpu__psi_hits_failed(&H, r, rc);
                break;
            }
        pthread_mutex_lock(&J->lock);
    }
    while (queued && H.pending > 0) { /* help with the queue until our rows are done */
        if (J->task_head < J->ntasks) {
            swgpu__psi_row_task_t tk = J->tasks[J->task_head++];
            pthread_mutex_unlock(&J->lock);
            run_row(J, tk);
            pthread_mutex_lock(&J->lock);
        } else {
            pthread_cond_wait(&J->cv, &J->lock);
        }
    }
    pthread_mutex_unlock(&J->lock);
    if (set) {
        rc = H.rc < 0 ? swgpu__fail(H.rc, "%s", H.msg)
                      : swgpu__psi_hits_finish(J->B, &H, &J->out[k]);
        swgpu__psi_hits_free(&H);
    }
    if (rc == SWGPU_OK && J->stats && J->want_stat[k]) { /* what the next search needs of it */
        swgpu__pssm_stat_t *st = &J->stat[k];
        st->failed = swgpu__pssm_karlin_km(J->out[k], J->m, J->o->gap_open, J->o->gap_extend,
                                           &J->B->K, &st->k) < 0;
        if (st->failed)
            snprintf(st->msg, sizeof st->msg, "%s", swgpu_last_error());
    }
    free(S.best);
    J->rc[k] = rc;
    if (rc < 0)
        snprintf(J->msg[k], sizeof J->msg[k], "%s", swgpu_last_error());
    swgpu__log(SWGPU_LOG_DEBUG, "PSSM of query %s (%zu residues) from %zu hits: %.3f s",
               J->q[k].id, J->q[k].len, J->qr[k]->n_hits, swgpu__now() - t0);
    unsigned long long us = (unsigned long long)(1e6 * (swgpu__now() - t0)),
                       was = atomic_load(&J->max_us);
    while (us > was && !atomic_compare_exchange_weak(&J->max_us, &was, us))
        ;
}

static void *build_worker(void *arg)
{
    swgpu__psi_jobs_t *J = arg;
    double cpu0 = swgpu__thread_cpu();
    pthread_mutex_lock(&J->lock);
    for (;;) {
        if (J->task_head < J->ntasks) {
            swgpu__psi_row_task_t tk = J->tasks[J->task_head++];
            pthread_mutex_unlock(&J->lock);
            run_row(J, tk);
            pthread_mutex_lock(&J->lock);
            continue;
        }
        while (J->next_job < J->n_ready && J->claimed[J->next_job])
            J->next_job++;
        size_t k = J->next_job, pre = 1;
        if (k == J->n_ready) { /* none ready: the newest waiting for the GPU, on the host */
            for (k = J->n; k > J->n_ready && J->claimed[k - 1]; k--)
                ;
            k = k > J->n_ready ? k - 1 : J->n;
            pre = 0;
        }
        if (k < J->n) {
            J->claimed[k] = 1;
            J->setting_up++;
            pthread_mutex_unlock(&J->lock);
            run_job(J, k, (int)pre);
            pthread_mutex_lock(&J->lock);
        } else if (J->closed && J->next_job == J->n && J->setting_up == 0) {
            break; /* no row will be queued any more */
        } else {
            pthread_cond_wait(&J->cv, &J->lock);
        }
    }
    pthread_mutex_unlock(&J->lock);
    atomic_fetch_add(&J->cpu_us, (unsigned long long)(1e6 * (swgpu__thread_cpu() - cpu0)));
    return NULL;
}

/*
 * The first further stretches of every row of jobs[0, nj), scored on the
 * GPU in one call (J->pairs; the stretch thread calls it for each new group
 * of jobs): a row's first stretches are the query positions before and
 * after its hit's alignment.  A stretch the GPU did not take keeps score -1
 * and is scored by swgpu__psi_add_more on the host; a GPU failure leaves
 * them all there (warned).  SWGPU_ENOMEM or SWGPU_OK.
 */
#if SWGPU_HAVE_CUDA
static int stretches_ahead(swgpu__psi_jobs_t *J, const size_t *jobs, size_t nj)
{
    swgpu__cu_pair_t *pj = NULL;
    swgpu__psi_stretch_t **where = NULL;
    size_t np = 0, cap = 0;
    int rc = SWGPU_OK;
    for (size_t jx = 0; jx < nj; jx++) {
        const size_t k = jobs[jx];
        const swgpu_query_result_t *qr = J->qr[k];
        size_t nh = 0, o = 0;
        if (qr->n_hits == 0)
            continue;
        if (swgpu__psi_rescan_init(&J->S[k], &J->q[k], J->searched[k], qr, J->db, J->m, J->o,
                                   J->thr) < 0) {
            free(J->S[k].best); /* run_job sets it up again and reports it */
            J->S[k].best = NULL;
            continue;
        }
        for (size_t h = 0; h < qr->n_hits; h++)
            nh += qr->hits[h].evalue <= J->thr && qr->hits[h].score > 0;
        if (!(J->pre[k] = malloc((nh ? 2 * nh : 1) * sizeof *J->pre[k])))
            return swgpu__fail(SWGPU_ENOMEM, "iterated search: out of memory");
        if (np + 2 * nh > cap) {
            size_t c = cap ? 2 * cap : 4096;
            while (c < np + 2 * nh)
                c *= 2;
            swgpu__cu_pair_t *a = realloc(pj, c * sizeof *a);
            if (a)
                pj = a;
            swgpu__psi_stretch_t **b = realloc(where, c * sizeof *b);
            if (b)
                where = b;
            if (!a || !b) {
                free(pj);
                free(where);
                return swgpu__fail(SWGPU_ENOMEM, "iterated search: out of memory");
            }
            cap = c;
        }
        const swgpu__psi_rescan_t *S = &J->S[k];
        const size_t L = J->q[k].len;
        for (size_t h = 0; h < qr->n_hits; h++) {
            const swgpu_hit_t *hit = &qr->hits[h];
            if (!(hit->evalue <= J->thr && hit->score > 0))
                continue;
            swgpu__psi_stretch_t *x = &J->pre[k][2 * o++];
            swgpu_seq_t t;
            const int ok = hit->aln.n_cigar > 0 && hit->aln.qbeg >= 0 &&
                           hit->aln.qbeg <= hit->aln.qend && (uint64_t)hit->aln.qend <= L &&
                           swgpu_db_get(J->db, hit->target, &t) == SWGPU_OK;
            x[0] = (swgpu__psi_stretch_t){0, ok ? (size_t)hit->aln.qbeg : 0, -1, 0, 0};
            x[1] = (swgpu__psi_stretch_t){ok ? (size_t)hit->aln.qend : 0, L, -1, 0, 0};
            if (!ok)
                continue; /* swgpu__psi_hits_setup fails there */
            for (int e = 0; e < 2; e++) { /* score_stretch's bound, then the GPU */
                int64_t bound = 0;
                for (size_t i = x[e].a; i < x[e].b; i++)
                    bound += S->best[i];
                if (x[e].b <= x[e].a || bound < S->min_score) {
                    x[e].score = 0;
                    continue;
                }
                pj[np] = (swgpu__cu_pair_t){.q = &S->q, .qoff = x[e].a, .qlen = x[e].b - x[e].a,
                                            .t = t.res, .tlen = t.len};
                where[np++] = &x[e];
            }
        }
    }
    double t0 = swgpu__now();
    if (np && (rc = swgpu__cu_pairs_run(J->pairs, pj, np)) < 0) {
        swgpu__log(SWGPU_LOG_WARN, "stretch scores on the GPU failed, the host computes them: %s",
                   swgpu_last_error());
        rc = SWGPU_OK;
        np = 0;
    }
    for (size_t x = 0; x < np; x++)
        if (pj[x].done) {
            where[x]->score = pj[x].score;
            where[x]->qend = pj[x].qend;
            where[x]->tend = pj[x].tend;
            J->n_ahead++;
        }
    J->gpu_s += swgpu__now() - t0;
    free(pj);
    free(where);
    return rc;
}
#endif

static void ahead_free(swgpu__psi_jobs_t *J)
{
    if (J->S)
        for (size_t k = 0; k < J->n; k++)
            free(J->S[k].best);
    if (J->pre)
        for (size_t k = 0; k < J->n; k++)
            free(J->pre[k]);
    free(J->S);
    free(J->pre);
    J->S = NULL;
    J->pre = NULL;
}

/*
 * The builds of a round run while its search goes on:
 * swgpu__psi_build_open starts the workers, the search hands over each
 * query whose alignments are done (psi.c's round_done adds its job),
 * swgpu__psi_build_close waits for the last.  Jobs are taken in the order
 * they come.  With the GPU a thread scores the first
 * further stretches of each new group of jobs (stretches_ahead) before the
 * workers take them.
 */
#if SWGPU_HAVE_CUDA
static void *stretch_thread(void *arg)
{
    swgpu__psi_jobs_t *J = arg;
    pthread_mutex_lock(&J->lock);
    for (;;) {
        if (J->n_ready < J->n) {
            size_t a = J->n_ready, b = J->n, nj = 0;
            for (size_t j = a; j < b; j++) /* those no worker took meanwhile */
                if (!J->claimed[j])
                    J->order[a + nj++] = j;
            pthread_mutex_unlock(&J->lock);
            if (J->rc_ahead == SWGPU_OK)
                J->rc_ahead = stretches_ahead(J, J->order + a, nj);
            pthread_mutex_lock(&J->lock);
            J->n_ready = b;
            pthread_cond_broadcast(&J->cv);
            continue;
        }
        if (J->closed)
            break;
        pthread_cond_wait(&J->cv, &J->lock);
    }
    pthread_mutex_unlock(&J->lock);
    return NULL;
}
#endif

/* Start the workers of up to cap jobs (every per-job array of J holds cap). */
int swgpu__psi_build_open(swgpu__psi_jobs_t *J, swgpu__psi_pool_t *P, size_t cap, int threads)
{
    size_t nt = threads > 0 ? (size_t)threads : (size_t)swgpu__ncores();
    memset(P, 0, sizeof *P);
    J->n = J->n_ready = J->next_job = J->setting_up = 0;
    J->task_head = J->ntasks = 0;
    J->closed = 0;
    J->rc_ahead = SWGPU_OK;
    J->n_ahead = 0;
    J->gpu_s = 0;
    atomic_store(&J->cpu_us, 0);
    atomic_store(&J->max_us, 0);
    if (!(J->order = malloc((cap ? cap : 1) * sizeof *J->order)) ||
        !(J->claimed = calloc(cap ? cap : 1, 1))) {
        free(J->order);
        J->order = NULL;
        return swgpu__fail(SWGPU_ENOMEM, "iterated search: out of memory for %zu PSSMs", cap);
    }
    if (nt > 64)
        nt = 64;
#if SWGPU_HAVE_CUDA
    if (J->pairs && nt > 1 &&
        (!(J->S = calloc(cap ? cap : 1, sizeof *J->S)) ||
         !(J->pre = calloc(cap ? cap : 1, sizeof *J->pre)))) {
        ahead_free(J);
        free(J->order);
        free(J->claimed);
        J->order = NULL;
        J->claimed = NULL;
        return swgpu__fail(SWGPU_ENOMEM, "iterated search: out of memory");
    }
#endif
    pthread_mutex_init(&J->lock, NULL);
    pthread_cond_init(&J->cv, NULL);
    for (; nt > 1 && P->started < nt; P->started++)
        if (pthread_create(&P->tid[P->started], NULL, build_worker, J) != 0)
            break;
#if SWGPU_HAVE_CUDA
    if (J->pre && P->started && pthread_create(&P->ahead_tid, NULL, stretch_thread, J) == 0)
        P->ahead = 1;
#endif
    return SWGPU_OK;
}

/* The job of query a of the round's search (under no lock; J->n < cap). */
void swgpu__psi_build_add(swgpu__psi_jobs_t *J, const swgpu__psi_pool_t *P, size_t a,
                          const swgpu_seq_t *q, const swgpu_query_result_t *best,
                          const swgpu_pssm_t *searched, int want_stat)
{
    pthread_mutex_lock(&J->lock);
    size_t j = J->n;
    J->q[j] = *q;
    J->best[j] = *best;
    J->qr[j] = &J->best[j];
    J->searched[j] = searched;
    J->want_stat[j] = want_stat;
    J->out[j] = NULL;
    J->rc[j] = SWGPU_OK;
    J->jq[j] = a;
    J->n = j + 1;
    if (!P->ahead)
        J->n_ready = J->n;
    pthread_cond_broadcast(&J->cv);
    pthread_mutex_unlock(&J->lock);
}

/* No more jobs: wait for the builds (in this thread when no worker runs). */
int swgpu__psi_build_close(swgpu__psi_jobs_t *J, swgpu__psi_pool_t *P)
{
    pthread_mutex_lock(&J->lock);
    J->closed = 1;
    if (!P->ahead)
        J->n_ready = J->n;
    pthread_cond_broadcast(&J->cv);
    pthread_mutex_unlock(&J->lock);
#if SWGPU_HAVE_CUDA
    if (P->ahead)
        pthread_join(P->ahead_tid, NULL);
    if (J->pre)
        swgpu__log(SWGPU_LOG_DEBUG, "%zu stretches scored on the GPU (%.3f s in its calls)",
                   J->n_ahead, J->gpu_s);
#endif
    if (!P->started)
        build_worker(J);
    for (size_t t = 0; t < P->started; t++)
        pthread_join(P->tid[t], NULL);
    P->started = 0;
    P->ahead = 0;
    pthread_cond_destroy(&J->cv);
    pthread_mutex_destroy(&J->lock);
    ahead_free(J);
    free(J->order);
    free(J->claimed);
    J->order = NULL;
    J->claimed = NULL;
    if (J->rc_ahead < 0)
        return J->rc_ahead;
    for (size_t k = 0; k < J->n; k++)
        if (J->rc[k] < 0)
            return swgpu__fail(J->rc[k], "%s", J->msg[k]);
    return SWGPU_OK;
}
