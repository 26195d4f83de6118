/*
 * batch.c - how the long aligner (align_long.c) runs its passes: a batch
 * of regions on the chosen engine (CPU, CUDA or split across parts), the
 * progress reports of its phases, and the checkpoint glue: the file
 * opened, checked against the inputs, and written between and during
 * passes (the format: ckpt.c).
 */
#define _POSIX_C_SOURCE 200809L
#include "long/long.h"

#include <string.h>

static int64_t imin64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

void swgpu__la_host_use(swgpu__la_t *C, uint64_t extra)
{
    if (C->host_fixed + extra > C->host_peak)
        C->host_peak = C->host_fixed + extra;
}

/* A progress report: `done` cells of the running batch done, `computed` of
 * them computed; `end`: the phase is over (its total becomes what was done). */
static void report(swgpu__la_t *C, uint64_t done, uint64_t computed, int end)
{
    swgpu_long_progress_t p;
    const double now = swgpu__now();
    double f;
    done += C->phase_done;
    if (end)
        C->phase_cells = done;
    else if (C->phase_est && done >= C->phase_cells) /* an estimate that fell short grows, */
        C->phase_cells = done + done / 64 + 1;       /* and only the end says fraction 1 */
    else if (done > C->phase_cells)
        C->phase_cells = done;
    f = end ? 1.0 : C->phase_cells ? (double)done / (double)C->phase_cells : 0.0;
    if (f < C->phase_frac)
        f = C->phase_frac;
    C->phase_frac = f;
    p.phase = C->phase;
    p.fraction = f;
    p.cells = C->computed + computed;
    p.seconds = now - C->t0;
    p.phase_done = done;
    p.phase_total = C->phase_cells;
    p.phase_estimated = C->phase_est && !end;
    p.phase_seconds = now - C->phase_t0;
    C->last_report = now;
    C->o->progress(&p, C->o->progress_user);
}

/* The engines' reports, a few a second at most. */
void swgpu__la_progress(void *user, uint64_t done, uint64_t pruned)
{
    swgpu__la_t *C = user;
    if (C->o->progress && swgpu__now() - C->last_report >= 0.2)
        report(C, done, done - pruned, 0);
}

/* A phase of `cells` cells begins (est: that is an estimate). */
void swgpu__la_phase_begin(swgpu__la_t *C, const char *name, uint64_t cells, int est)
{
    C->phase = name;
    C->phase_cells = cells;
    C->phase_est = est;
    C->phase_done = 0;
    C->phase_frac = 0;
    C->phase_t0 = swgpu__now();
    if (C->o->progress)
        report(C, 0, 0, 0);
}

void swgpu__la_phase_end(swgpu__la_t *C)
{
    if (C->o->progress)
        report(C, 0, 0, 1);
}

/* Book a finished pass: its cells, of which `pruned` were skipped. */
static void batch_done(swgpu__la_t *C, uint64_t cells, uint64_t pruned)
{
    C->computed += cells - pruned;
    C->phase_done += cells;
    if (C->st) {
        C->st->cells += cells - pruned;
        C->st->cells_pruned += pruned;
    }
    C->last_pruned = pruned;
}

/* The engine's checkpoint call: the pass's state with the results so far. */
static int ck_save(void *user, const swgpu__lreg_t *g, const swgpu__lck_state_t *st)
{
    swgpu__la_t *C = user;
    C->ck_last = swgpu__now();
    return swgpu__ck_write(C->ck_path, &C->ck_out, g, st, C->sc.wide);
}

/* A checkpoint between passes, when one is due. */
int swgpu__la_ck_between(swgpu__la_t *C, const swgpu__lreg_t *g)
{
    if (!C->ck_path || swgpu__now() - C->ck_last < C->ck_every)
        return SWGPU_OK;
    C->ck_last = swgpu__now();
    return swgpu__ck_write(C->ck_path, &C->ck_out, g, NULL, C->sc.wide);
}

/* Run a batch of regions on the chosen engine; a one-region pass saves
 * checkpoints (ck) and may start from one (resume), on either engine (on
 * the GPU such a pass runs whole on the first device); on several GPUs,
 * spread 0 keeps the batch on the first (swgpu__lgpu_run). */
int swgpu__la_run_ck(swgpu__la_t *C, swgpu__lreg_t *r, size_t n, int ck, const swgpu__lck_state_t *resume,
                     int spread)
{
    swgpu__lprog_t p = { C->o->progress ? swgpu__la_progress : NULL, C };
    swgpu__lck_t K = { C->ck_every, ck_save, C, resume && resume->next > 0 ? resume : NULL };
    uint64_t cells = 0, bytes = 0, pruned = 0;
    const double t0 = swgpu__now();
    int rc;
    (void)spread; /* GPUs only */
    if (n == 0)
        return SWGPU_OK;
    for (size_t k = 0; k < n; k++)
        cells += (uint64_t)r[k].h * (uint64_t)r[k].w;
#ifdef SWGPU_HAVE_CUDA
    if (C->use_gpu) {
        const int rows = C->lane_rows[!strcmp(C->phase, "reverse") ? 1 : !strcmp(C->phase, "traceback") ? 2 : 0];
        for (size_t k = 0; k < n; k++)
            r[k].lane_rows = rows;
    }
    if (C->use_gpu && !C->comm) {
        uint64_t need;
        /* a checkpointed pass runs whole on the first GPU (swgpu__lgpu_run_ck) */
        const int inpass = ck && C->ck_path && n == 1;
        need = swgpu__lgpu_bytes(C->gpu, r, n, inpass ? -1 : spread);
        if (need > C->dev_budget)
            return swgpu__fail(SWGPU_EBUDGET,
                               "long alignment: a pass needs %llu MiB of GPU memory, the budget is %llu MiB "
                               "(raise --max-memory)",
                               (unsigned long long)(need >> 20), (unsigned long long)(C->dev_budget >> 20));
        rc = inpass ? swgpu__lgpu_run_ck(C->gpu, r, &p, &pruned, &K) : swgpu__lgpu_run(C->gpu, r, n, spread, &p, &pruned);
    } else
#endif
    if (C->comm) {
        rc = swgpu__lsplit_run(C->comm, &C->q, &C->sc, r, n, C->threads, C->use_gpu ? C->gpu : NULL,
                               C->dev_budget, C->o->gpu_parts, &p, &bytes, &pruned);
        C->dead |= rc != 0;
        swgpu__la_host_use(C, bytes);
    } else {
        rc = swgpu__lcpu_run(&C->q, &C->sc, r, n, C->threads, &p, &bytes, &pruned,
                             ck && C->ck_path && n == 1 ? &K : NULL);
        swgpu__la_host_use(C, bytes);
    }
    if (rc)
        return rc;
    swgpu__log(SWGPU_LOG_DEBUG, "long alignment: %s pass, %zu region%s, %.3g cells, %.3g computed, %.3f s",
               C->phase, n, n == 1 ? "" : "s", (double)cells, (double)(cells - pruned), swgpu__now() - t0);
    batch_done(C, cells, pruned);
    swgpu__la_progress(C, 0, 0); /* batches shorter than the engine's reports */
    return SWGPU_OK;
}

int swgpu__la_run(swgpu__la_t *C, swgpu__lreg_t *r, size_t n)
{
    return swgpu__la_run_ck(C, r, n, 0, NULL, 1);
}

int swgpu__la_rows_stay_on_gpu(const swgpu__la_t *C)
{
    return C->use_gpu && !C->ck_path && !C->comm;
}

/* The highest local score of a region of h x w. */
static int64_t ck_max(const swgpu__la_t *C, int64_t h, int64_t w)
{
    return C->sc.smax > 0 ? (int64_t)C->sc.smax * imin64(h, w) : 0;
}

/* The checkpoint read, against the inputs, before anything is computed or
 * written: the phase, the scores and ends found, and a pass's state or the
 * saved rows against the region they belong to (the reverse pass's, laid
 * out as align_long.c lays them out, from the checkpoint's end). */
static int ck_check(const swgpu__la_t *C)
{
    const swgpu__ck_t *k = &C->ck_in;
    const char *p = C->ck_path;
    const int64_t maxS = ck_max(C, C->alen, C->blen);
#define UNFIT(...) swgpu__fail(SWGPU_EFORMAT, "checkpoint %s does not fit this alignment: " __VA_ARGS__)
    if (k->phase < SWGPU__CK_PREPASS || k->phase > SWGPU__CK_TRACE)
        return UNFIT("phase %d is unknown: remove it to start afresh", p, k->phase);
    if (k->phase >= SWGPU__CK_SCORE && (k->prune_best < 0 || k->prune_best > maxS))
        return UNFIT("pruning score %lld is out of range 0 .. %lld: remove it to start afresh", p,
                     (long long)k->prune_best, (long long)maxS);
    if (k->phase >= SWGPU__CK_REVERSE) {
        if (k->ie < 1 || k->ie > C->alen || k->je < 1 || k->je > C->blen)
            return UNFIT("the best score's end (%lld, %lld) lies outside the %lld x %lld matrix: remove it to "
                         "start afresh", p, (long long)k->ie, (long long)k->je, (long long)C->alen,
                         (long long)C->blen);
        if (k->S < 1 || k->S > ck_max(C, k->ie, k->je))
            return UNFIT("best score %lld is out of range 1 .. %lld: remove it to start afresh", p,
                         (long long)k->S, (long long)ck_max(C, k->ie, k->je));
    }
    if (k->phase == SWGPU__CK_TRACE) {
        if (k->ib < 0 || k->ib >= k->ie || k->jb < 0 || k->jb >= k->je)
            return UNFIT("the begin (%lld, %lld) does not lie before the end (%lld, %lld): remove it to start "
                         "afresh", p, (long long)k->ib, (long long)k->jb, (long long)k->ie, (long long)k->je);
        if (k->S > ck_max(C, k->ie - k->ib, k->je - k->jb))
            return UNFIT("best score %lld is above what (%lld, %lld) .. (%lld, %lld) can score: remove it to "
                         "start afresh", p, (long long)k->S, (long long)k->ib, (long long)k->jb,
                         (long long)k->ie, (long long)k->je);
        if (k->st.next != 0)
            return UNFIT("a traceback checkpoint with a pass state: remove it to start afresh", p);
    }
    if (k->phase >= SWGPU__CK_REVERSE && (k->phase == SWGPU__CK_TRACE || k->st.next > 0)) {
        /* the reverse pass's region and the rows it saves (as align_long.c lays them out) */
        swgpu__lreg_t g;
        memset(&g, 0, sizeof g);
        g.h = k->ie;
        g.w = k->je;
        g.save_every = C->o->score_only ? 0 : swgpu__la_rev_spacing(C, k->ie, k->je);
        if (k->phase == SWGPU__CK_REVERSE)
            return swgpu__ck_check_state(p, k, k->ie, k->je, swgpu__lck_rows(&g, k->st.next),
                                         ck_max(C, k->ie, k->je), &C->sc);
        if (k->w != k->je || k->nrows != swgpu__lreg_nsaved(&g))
            return UNFIT("%lld saved rows of %lld columns, not %lld of %lld: remove it to start afresh", p,
                         (long long)k->nrows, (long long)k->w, (long long)swgpu__lreg_nsaved(&g), (long long)k->je);
        return swgpu__ck_check_rows(p, k, ck_max(C, k->ie, k->je), &C->sc);
    }
    if (k->st.next == 0) {
        if (k->w != 0 || k->nrows != 0)
            return UNFIT("saved rows without a pass state: remove it to start afresh", p);
        return SWGPU_OK;
    }
    /* the pre-pass's and the score pass's region: the whole matrix, no rows saved */
    return swgpu__ck_check_state(p, k, C->alen, C->blen, 0, maxS, &C->sc);
#undef UNFIT
}

/* A pass's state to resume from, if the checkpoint read stands in that pass. */
const swgpu__lck_state_t *swgpu__la_ck_resume(const swgpu__la_t *C, int phase)
{
    return C->ck_in.phase == phase && C->ck_in.st.next > 0 ? &C->ck_in.st : NULL;
}

int swgpu__la_ck_open(swgpu__la_t *C, uint64_t cap)
{
    const swgpu_long_opts_t *o = C->o;
    /* the fingerprint: everything the output depends on */
    uint64_t h = 0xcbf29ce484222325ull;
    int64_t v[8] = { 1, C->alen, C->blen, C->sc.open, C->sc.ext, o->score_only, o->prune, (int64_t)cap };
    int rc;
    if (!o->checkpoint || !*o->checkpoint)
        return SWGPU_OK;
    if (C->comm)
        return swgpu__fail(SWGPU_EINVAL, "long alignment: checkpoints are not available for passes "
                           "split across processes");
    h = swgpu__ck_hash(h, v, sizeof v);
    h = swgpu__ck_hash(h, C->sc.s, sizeof C->sc.s);
    h = swgpu__ck_hash(h, C->a, (size_t)C->alen);
    h = swgpu__ck_hash(h, C->b, (size_t)C->blen);
    C->ck_path = o->checkpoint;
    C->ck_every = o->checkpoint_every > 0 ? o->checkpoint_every : 600;
    C->ck_last = swgpu__now();
    C->ck_out.fp = h;
    if ((rc = swgpu__ck_read(C->ck_path, h, C->sc.wide, &C->ck_in)) < 0)
        return rc;
    if (rc == 1 && (rc = ck_check(C)))
        return rc;
    return SWGPU_OK;
}
