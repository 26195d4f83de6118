/*
 * align_long.c - exact local alignment of two long sequences in bounded
 * memory: swgpu_align_long().
 *
 * Phase 1, score: one local pass over the whole matrix gives the best score
 *   S and its end vertex (ie, je) (max H; ties: smallest j, then smallest i).
 * Phase 2, reverse: one local pass over the reversed prefixes a[0,ie) x
 *   b[0,je) gives the begin (ib, jb): its best is S again, and its tie rule
 *   in reversed coordinates picks the largest tbeg, then the largest qbeg.
 *   Every local alignment of score S inside that rectangle ends at (ie, je)
 *   (an earlier end would have won phase 1's tie rule), so the reversed
 *   values are also "best score from here to the end".  The pass saves its
 *   values at rows ie - k*L1, L1 as small as the memory budget allows.
 * Phase 3, traceback: divide and conquer.  A sub-problem is a global
 *   alignment from vertex (i0,j0) in state s0 to (i1,j1) in state s1 with a
 *   known score T (states H, or E/F: inside a horizontal/vertical gap that
 *   continues across the vertex).  With reverse values Hr, Fr saved at split
 *   rows r_k = i1 - k*L (reverse pass anchored at the end), forward passes
 *   anchored at the last crossing point go from split row to split row; at
 *   row r the path crosses where
 *       Hf(c) + Hr(c) == T'            (state H), or
 *       Ff(c) + Fr(c) + open == T'     (state F: one vertical gap, open counted once)
 *   (T' = T minus the score up to the last crossing; the smallest such c
 *   wins, H before F).  Each crossing is chosen given the previous one, so
 *   the pieces always join into one optimal path.  A forward pass only
 *   needs the columns c whose best conceivable score from the last crossing
 *   still reaches T' - max(Hr(c), Fr(c) + open).  Pieces are split again
 *   (along their longer side, by transposing) until they fit a full
 *   dynamic-programming matrix, traced back on the CPU in parallel.
 *
 * All passes are batches of regions (long.h) run by the CPU engine
 * (long_cpu.c) or the CUDA engine (cuda/long_kernels.cu), which compute
 * identical values; the split layout depends only on the sequence lengths,
 * the scores and the memory budget, so both backends give the same
 * alignment.
 */
#define _POSIX_C_SOURCE 200809L
#include "long/long.h"
#include "long/long.h"
#include "simd/simd.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#define SH SWGPU__LONG_SH
#define NEG SWGPU__LONG_NEG
#define PAD SWGPU__LONG_PAD
/* largest piece traced back with a full matrix (tests lower it) */
static int64_t BASE_CELLS = (int64_t)1 << 22;
#define DEFAULT_BUDGET ((uint64_t)4 << 30)
#define SLACK ((uint64_t)1 << 20) /* engine bookkeeping beyond rows and rings */

enum { ST_H = 0, ST_E = 1, ST_F = 2 };

/* A piece of the optimal path: global alignment between two vertices. */
typedef struct {
    int64_t i0, j0, i1, j1;
    int s0, s1;  /* states at the begin / end vertex */
    int64_t T;   /* its score */
} sub_t;

typedef struct {
    sub_t *v;
    size_t n, cap;
} subvec_t;

typedef struct {
    const uint8_t *a, *b;
    int64_t alen, blen;
    swgpu__lscore_t sc;
    swgpu__lseqs_t q;        /* host sequences, padded */
    uint8_t *qbuf;           /* owns q's storage */
    int use_gpu;
    swgpu__lgpu_t *gpu;
    int threads;
    uint64_t host_budget, dev_budget;
    uint64_t layout_cap;     /* bytes for saved rows and engine rings (same for both backends) */
    uint64_t host_fixed, host_peak;
    swgpu_long_stats_t *st;
    const swgpu_long_opts_t *o;
    double t0;
    /* progress: the phase, its cells in all (an estimate when phase_est) and
     * done (computed or pruned), its start; cells computed in all phases */
    const char *phase;
    uint64_t phase_cells, phase_done, computed;
    int phase_est;
    double phase_t0, phase_frac, last_report;
    uint64_t last_pruned;    /* cells the last batch pruned */
    const swgpu_comm_t *comm; /* passes split across parts (NULL: alone) */
    int dead;                /* a split call failed on every part: no more collectives */
    /* checkpoints (long_ckpt.c): the file, its interval, the last write;
     * what to write (phase and results so far) and what was read back */
    const char *ck_path;
    double ck_every, ck_last;
    swgpu__ck_t ck_out, ck_in;
    int lane_rows[3];        /* CUDA engine: rows per lane of the score pass's, the reverse
                                pass's and the traceback's strips (swgpu__lreg_t.lane_rows) */
} ctx_t;

/* ------------------------------------------------------------ helpers */

static int64_t imin64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

static int64_t imax64(int64_t a, int64_t b)
{
    return a > b ? a : b;
}

void swgpu__long_set_base(int64_t cells)
{
    BASE_CELLS = cells > 0 ? cells : (int64_t)1 << 22;
    if (BASE_CELLS < (int64_t)(SH + 1) * (SH + 1))
        BASE_CELLS = (int64_t)(SH + 1) * (SH + 1);
}

static void host_use(ctx_t *C, uint64_t extra)
{
    if (C->host_fixed + extra > C->host_peak)
        C->host_peak = C->host_fixed + extra;
}

/* A progress report: `done` cells of the running batch done, `computed` of
 * them computed; `end`: the phase is over (its total becomes what was done). */
static void report(ctx_t *C, uint64_t done, uint64_t computed, int end)
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
static void prog_cb(void *user, uint64_t done, uint64_t pruned)
{
    ctx_t *C = user;
    if (C->o->progress && swgpu__now() - C->last_report >= 0.2)
        report(C, done, done - pruned, 0);
}

/* A phase of `cells` cells begins (est: that is an estimate). */
static void phase_begin(ctx_t *C, const char *name, uint64_t cells, int est)
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

static void phase_end(ctx_t *C)
{
    if (C->o->progress)
        report(C, 0, 0, 1);
}

/* Book a finished pass: its cells, of which `pruned` were skipped. */
static void batch_done(ctx_t *C, uint64_t cells, uint64_t pruned)
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
    ctx_t *C = user;
    C->ck_last = swgpu__now();
    return swgpu__ck_write(C->ck_path, &C->ck_out, g, st, C->sc.wide);
}

/* A checkpoint between passes, when one is due. */
static int ck_between(ctx_t *C, const swgpu__lreg_t *g)
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
static int run_batch_ck(ctx_t *C, swgpu__lreg_t *r, size_t n, int ck, const swgpu__lck_state_t *resume,
                        int spread)
{
    swgpu__lprog_t p = { C->o->progress ? prog_cb : NULL, C };
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
        uint64_t need;
        for (size_t k = 0; k < n; k++)
            r[k].lane_rows = rows;
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
        rc = swgpu__lsplit_run(C->comm, &C->q, &C->sc, r, n, C->threads, &p, &bytes, &pruned);
        C->dead |= rc != 0;
        host_use(C, bytes);
    } else {
        rc = swgpu__lcpu_run(&C->q, &C->sc, r, n, C->threads, &p, &bytes, &pruned,
                             ck && C->ck_path && n == 1 ? &K : NULL);
        host_use(C, bytes);
    }
    if (rc)
        return rc;
    swgpu__log(SWGPU_LOG_DEBUG, "long alignment: %s pass, %zu region%s, %.3g cells, %.3g computed, %.3f s",
               C->phase, n, n == 1 ? "" : "s", (double)cells, (double)(cells - pruned), swgpu__now() - t0);
    batch_done(C, cells, pruned);
    prog_cb(C, 0, 0); /* batches shorter than the engine's reports */
    return SWGPU_OK;
}

static int run_batch(ctx_t *C, swgpu__lreg_t *r, size_t n)
{
    return run_batch_ck(C, r, n, 0, NULL, 1);
}

static int64_t balanced_spacing(int64_t Lmem, int64_t wv);

/* The reverse pass's saved-row spacing for an end (ie, je). */
static int64_t rev_spacing(const ctx_t *C, int64_t ie, int64_t je)
{
    const uint64_t rowb = (uint64_t)(je + 1) * 8;
    int64_t P1 = (int64_t)((C->layout_cap - 3 * rowb) / rowb); /* the rest: the engine's ring */
    if (P1 > ie / SH)
        P1 = ie / SH;
    if (P1 < 1)
        P1 = 1;
    return balanced_spacing(SH * ((ie + SH * (P1 + 1) - 1) / (SH * (P1 + 1))), je);
}

/* The highest local score of a region of h x w. */
static int64_t ck_max(const ctx_t *C, int64_t h, int64_t w)
{
    return C->sc.smax > 0 ? (int64_t)C->sc.smax * imin64(h, w) : 0;
}

/* The checkpoint read, against the inputs, before anything is computed or
 * written: the phase, the scores and ends found, and a pass's state or the
 * saved rows against the region they belong to (the reverse pass's laid
 * out as below, from the checkpoint's end). */
static int ck_check(const ctx_t *C)
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
        /* the reverse pass's region and the rows it saves (as laid out below) */
        swgpu__lreg_t g;
        memset(&g, 0, sizeof g);
        g.h = k->ie;
        g.w = k->je;
        g.save_every = C->o->score_only ? 0 : rev_spacing(C, k->ie, k->je);
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
static const swgpu__lck_state_t *ck_resume(const ctx_t *C, int phase)
{
    return C->ck_in.phase == phase && C->ck_in.st.next > 0 ? &C->ck_in.st : NULL;
}

/*
 * Phase 1, the forward score pass over the whole matrix, pruned (long.h).
 * A block is skipped when it cannot reach the best score found so far, so
 * the sooner a high score is known, the more is skipped.  The seed chain
 * (long_seed.c) finds one first, on every backend: the score of an
 * alignment joined from exact matches.  When that is weak (below X, a
 * strip's worth of score and a gap of G columns), the CPU runs a cheap
 * pre-pass: the same pass with an X-drop rule as well (a block whose inputs
 * lie more than X below the best so far is skipped) and a cap on the cells
 * it computes, which follows the strongest alignment it meets in a band a
 * few thousand columns wide.  Either is the score of a real alignment, so
 * a lower bound of the final best: the exact pass starts with the larger
 * as prune_best.  Blocks skipped because of it still cannot reach the
 * final best, so the result is the same as without it; only the share of
 * pruned cells grows (to 95-99 % on pairs of related genomes, where the
 * exact pass then computes little more than a band around the optimal
 * path and the corner from which the score can still be reached).
 */
static int score_pass(ctx_t *C, swgpu__lreg_t *g)
{
    int rc;
    int64_t seed = 0;
    const char *env = getenv("SWGPU_LONG_SEED"); /* 0: no seed bound (measurements) */
    if (g->prune && C->ck_in.phase < SWGPU__CK_SCORE && !(env && !strcmp(env, "0"))) {
        uint64_t bytes = 0;
        const double t = swgpu__now();
        if ((rc = swgpu__long_seed_bound(C->a, C->alen, C->b, C->blen, &C->sc, &seed, &bytes)))
            return rc;
        host_use(C, bytes);
        C->st->seed_bound = seed;
        swgpu__log(SWGPU_LOG_DEBUG, "long alignment: seed chain bound %lld (%.3f s)", (long long)seed,
                   swgpu__now() - t);
        g->prune_best = seed;
    }
    /* X: a strip's worth of score (the pipeline's lag) and a gap of G
     * columns (indels the band bridges) */
    const int64_t G0 = imin64(C->alen, C->blen) / 256, G = G0 < 64 ? 64 : G0 > 8192 ? 8192 : G0;
    const int64_t smax = C->sc.smax > 0 ? C->sc.smax : 0, X = SH * smax + C->sc.open + G * C->sc.ext;
    if (g->prune && C->ck_in.phase >= SWGPU__CK_SCORE) {
        g->prune_best = C->ck_in.prune_best; /* the seed chain (and the pre-pass) was done */
    } else if (g->prune && !C->use_gpu && seed < X) {
        /* the seed chain found no strong alignment: the pre-pass looks for
         * one (from no bound: its X-drop rule is relative to its best) */
        swgpu__lreg_t x = *g;
        /* The cap: a 32nd of the cells, and what the pre-pass needs on a
         * collinear pair: the rows until the path's score passes X, then a
         * band of about 2X/ext columns; never more than a quarter of the
         * cells */
        const uint64_t cells = (uint64_t)C->alen * (uint64_t)C->blen;
        phase_begin(C, "prepass", (uint64_t)C->alen * (uint64_t)C->blen, 0);
        x.prune_best = 0;
        uint64_t cap = cells / 32 + (uint64_t)(X / (smax ? smax : 1) + 2 * SH) * (uint64_t)C->blen +
                       (uint64_t)C->alen * (uint64_t)(2 * X / (C->sc.ext ? C->sc.ext : 1) + 2 * SH);
        x.xdrop = X;
        x.max_cells = cap < cells / 4 ? cap : cells / 4 + 1;
        C->ck_out.phase = SWGPU__CK_PREPASS;
        if ((rc = run_batch_ck(C, &x, 1, 1, ck_resume(C, SWGPU__CK_PREPASS), 1)))
            return rc;
        /* the cells the pre-pass skipped are not pruned ones: only its
         * computed cells count */
        C->st->cells_pruned -= C->last_pruned;
        g->prune_best = x.best > seed ? x.best : seed;
        swgpu__log(SWGPU_LOG_DEBUG, "long alignment: the pre-pass found a score of %lld (X-drop %lld)",
                   (long long)x.best, (long long)x.xdrop);
        phase_end(C);
    }
    phase_begin(C, "score", (uint64_t)C->alen * (uint64_t)C->blen, 0);
    C->ck_out.phase = SWGPU__CK_SCORE;
    C->ck_out.prune_best = g->prune_best;
    if ((rc = ck_between(C, NULL)))
        return rc;
    return run_batch_ck(C, g, 1, 1, ck_resume(C, SWGPU__CK_SCORE), 1);
}

static int subvec_push(subvec_t *v, const sub_t *s)
{
    if (v->n == v->cap) {
        size_t cap = v->cap ? 2 * v->cap : 64;
        sub_t *p = realloc(v->v, cap * sizeof *p);
        if (!p)
            return swgpu__fail(SWGPU_ENOMEM, "long alignment: out of memory for %zu pieces", cap);
        v->v = p;
        v->cap = cap;
    }
    v->v[v->n++] = *s;
    return SWGPU_OK;
}


/* Upper bound of any path score from a vertex to one dr rows and dc columns away. */
static int64_t path_ub(const swgpu__lscore_t *sc, int64_t dr, int64_t dc)
{
    int64_t d = imin64(dr, dc), g = dr > dc ? dr - dc : dc - dr;
    return d * (sc->smax > 0 ? sc->smax : 0) - g * sc->ext;
}

/* Anchored start values (h0, e0, f0) for a begin state. */
static void start_init(int s, int64_t *h0, int64_t *e0, int64_t *f0)
{
    *h0 = 0;
    *e0 = s == ST_E ? 0 : NEG;
    *f0 = s == ST_F ? 0 : NEG;
}

/* Anchored start values of a reverse pass from an end state. */
static void end_init(const swgpu__lscore_t *sc, int s, int64_t *h0, int64_t *e0, int64_t *f0)
{
    *h0 = s == ST_H ? 0 : NEG;
    *e0 = s == ST_E ? -sc->open : NEG;
    *f0 = s == ST_F ? -sc->open : NEG;
}

/* ---------------------------------------------------------- splitting */

/*
 * A split in progress, in "view" coordinates: the piece itself, or its
 * transpose (rows = b) when it is wider than tall.  In the view, F is the
 * gap along the rows; transposing swaps E and F.
 */
typedef struct {
    sub_t u;                /* the piece, forward coordinates */
    int tr;                 /* 1: view rows are b */
    int64_t vi0, vj0, vi1, vj1;
    int vs0, vs1;
    int64_t L, P;           /* split rows vi1 - k*L, k = 1..P */
    int32_t *rev;           /* P rows of `stride` {H,F} pairs; entry x <-> view column vj1 - x */
    int64_t *rev_base;      /* wide scores: P rows of swgpu__lreg_nbase(stride - 1) bases */
    int64_t stride;
    int owns_rev;
    int dev_rows;           /* 1: rev stays in GPU memory (swgpu__lgpu_saved_read) */
    size_t reg;             /* dev_rows: the reverse pass's region in its batch */
    int32_t *win;           /* dev_rows: the columns of row k the walk reads */
    int64_t *win_base;      /* and their bases (wide scores) */
    size_t win_cap;
    /* row k's entries as the walk reads them: entry x at row[2 * (x - row_x0)]
     * (row_x0 is 0 whenever row_base is set) */
    const int32_t *row;
    const int64_t *row_base;
    int64_t row_x0;
    /* walk state */
    int64_t k;              /* next split row index (P down to 1); 0: done */
    int64_t xr, xc;         /* last crossing (view) */
    int xs;
    int64_t acc;            /* score up to it */
    int64_t cmax;           /* columns of the current forward pass: [xc, cmax] */
    int32_t *fwd;           /* its last row */
    int64_t *fwd_base;      /* wide scores: its bases */
    subvec_t kids;
} split_t;

static int swap_ef(int s)
{
    return s == ST_E ? ST_F : s == ST_F ? ST_E : s;
}

static void split_view(split_t *p, const sub_t *u, int tr)
{
    memset(p, 0, sizeof *p);
    p->u = *u;
    p->tr = tr;
    p->vi0 = tr ? u->j0 : u->i0;
    p->vj0 = tr ? u->i0 : u->j0;
    p->vi1 = tr ? u->j1 : u->i1;
    p->vj1 = tr ? u->i1 : u->j1;
    p->vs0 = tr ? swap_ef(u->s0) : u->s0;
    p->vs1 = tr ? swap_ef(u->s1) : u->s1;
}

/*
 * Saved rows cost (hv/L) * wv * 8 bytes; the pieces they leave, about
 * hv x L along a diagonal path, cost about hv * L / 64 when split again at
 * the strip height.  L near sqrt(512 * wv) balances the two; never below
 * what the memory budget allows (Lmem).  Depends on sizes and budget only.
 */
static int64_t balanced_spacing(int64_t Lmem, int64_t wv)
{
    int64_t L = SH * (int64_t)(sqrt(512.0 * (double)wv) / SH + 0.5);
    return L > Lmem ? L : Lmem;
}

/* Row spacing of a split of hv x wv view cells within `cap` bytes of saved rows. */
static int64_t split_spacing(int64_t hv, int64_t wv, uint64_t cap)
{
    uint64_t row = (uint64_t)(wv + 1) * 8, ring = (uint64_t)(wv + 128) * 16;
    int64_t pmax = cap > ring ? (int64_t)((cap - ring) / row) : 0;
    if (pmax > hv / SH)
        pmax = hv / SH;
    if (pmax < 1)
        pmax = 1;
    return balanced_spacing(SH * ((hv + SH * (pmax + 1) - 1) / (SH * (pmax + 1))), wv);
}

/* Bytes a split holds: its saved reverse rows and the engine's ring for them. */
static uint64_t split_bytes(int64_t hv, int64_t wv, int64_t L)
{
    return (uint64_t)((hv - 1) / L) * (uint64_t)(wv + 1) * 8 + (uint64_t)(wv + 128) * 16 +
           (uint64_t)((hv + SH - 1) / SH) * 16 + 256;
}

/* Bytes of the bases of n saved rows of w columns (wide scores only). */
static uint64_t base_bytes(const ctx_t *C, int64_t n, int64_t w)
{
    return C->sc.wide ? (uint64_t)n * (uint64_t)swgpu__lreg_nbase(w) * 8 : 0;
}

/* The reverse pass of a split: anchored at the view end, saving rows every L. */
static void split_rev_region(const ctx_t *C, const split_t *p, swgpu__lreg_t *g)
{
    memset(g, 0, sizeof *g);
    g->h = p->vi1 - p->vi0;
    g->w = p->vj1 - p->vj0;
    g->rseq = p->tr ? SWGPU__LSEQ_RB : SWGPU__LSEQ_RA;
    g->cseq = p->tr ? SWGPU__LSEQ_RA : SWGPU__LSEQ_RB;
    g->roff = (p->tr ? C->blen : C->alen) - p->vi1;
    g->coff = (p->tr ? C->alen : C->blen) - p->vj1;
    g->local = 0;
    end_init(&C->sc, p->vs1, &g->h0, &g->e0, &g->f0);
    g->save_every = p->L;
    g->saved = p->rev;
    g->saved_base = p->rev_base;
    /* every optimal path of the piece ends (reversed) at its begin vertex;
     * one that begins inside a gap was charged that gap's open here */
    g->prune = C->o->prune;
    g->prune_best = p->u.T - (p->vs0 == ST_H ? 0 : C->sc.open);
    g->prune_i = g->h;
    g->prune_j = g->w;
}

/* Whether reverse passes leave their saved rows in GPU memory (saved_keep):
 * on the GPU, unless a checkpoint must hold them or the passes are split
 * across processes (wide scores: their bases stay beside them, and a
 * window read moves to the host's format, swgpu__lgpu_saved_read). */
static int rows_stay_on_gpu(const ctx_t *C)
{
    return C->use_gpu && !C->ck_path && !C->comm;
}

/* Set up the walk once the reverse rows are there. */
static void split_walk_begin(split_t *p)
{
    p->k = p->P;
    p->xr = p->vi0;
    p->xc = p->vj0;
    p->xs = p->vs0;
    p->acc = 0;
}

/* Saved entry x (vertex column vj1 - x; which: 0 H, 1 F) of row k, as
 * split_cmax made it readable. */
static int64_t rev_at(const split_t *p, int64_t x, int which)
{
    return swgpu__lsaved(p->row, p->row_base, x - p->row_x0, which);
}

/*
 * The last column c that split_cmax need look at.  A saved value at (r, c)
 * is at most the best score of any path from there to the view's end, so
 * at most smax * min(R2, vj1 - c) (R2 = vi1 - r; a path of diagonal steps
 * alone scores no more, gaps only cost), and a column can only be a
 * crossing when  path_ub(dr, c - xc) + smax * min(R2, vj1 - c) >= Tp.
 * Beyond c = xc + dr that bound falls as c grows, so its last column is
 * found by bisection.  On a pair of genomes this is the band of the walk
 * (tens of thousands of columns) instead of the whole row (millions).
 */
static int64_t split_chi(const ctx_t *C, const split_t *p, int64_t r, int64_t Tp)
{
    const int64_t dr = r - p->xr, R2 = p->vi1 - r, smax = C->sc.smax > 0 ? C->sc.smax : 0;
    int64_t lo = p->xc + dr, hi = p->vj1;
#define CHI_UB(c) (path_ub(&C->sc, dr, (c) - p->xc) + smax * imin64(R2, p->vj1 - (c)))
    if (lo >= hi || C->sc.ext < 0)
        return hi;
    if (CHI_UB(lo) < Tp) /* every column beyond lo bounds no more */
        return lo;
    while (lo < hi) { /* the last c in [lo, hi] whose bound reaches Tp */
        const int64_t mid = lo + (hi - lo + 1) / 2;
        if (CHI_UB(mid) >= Tp)
            lo = mid;
        else
            hi = mid - 1;
    }
#undef CHI_UB
    return lo;
}

/* Columns the next forward pass needs: p->cmax (-1 if no column can be a
 * crossing), the pass's columns [xc, cmax]; row k made readable at the
 * columns xc .. split_chi (fetched from the GPU when it is there). */
static int split_cmax(ctx_t *C, split_t *p)
{
    const int64_t r = p->vi1 - p->k * p->L, dr = r - p->xr;
    const int64_t Tp = (int64_t)p->u.T - p->acc;
    const int64_t chi = split_chi(C, p, r, Tp);
    if (p->dev_rows) {
#ifdef SWGPU_HAVE_CUDA
        const size_t n = (size_t)(chi - p->xc + 1);
        int rc;
        if (n > p->win_cap) {
            int32_t *w = realloc(p->win, n * 2 * sizeof *w);
            int64_t *wb = C->sc.wide ? realloc(p->win_base, (size_t)swgpu__lreg_nbase((int64_t)n) * sizeof *wb) : NULL;
            if (w)
                p->win = w;
            if (wb)
                p->win_base = wb;
            if (!w || (C->sc.wide && !wb))
                return swgpu__fail(SWGPU_ENOMEM, "long alignment: out of memory");
            p->win_cap = n;
        }
        if ((rc = swgpu__lgpu_saved_read(C->gpu, p->reg, p->k - 1, p->vj1 - chi, (int64_t)n, p->win,
                                         C->sc.wide ? p->win_base : NULL)))
            return rc;
        p->row = p->win;
        p->row_base = C->sc.wide ? p->win_base : NULL;
        p->row_x0 = p->vj1 - chi;
#else
        return swgpu__fail(SWGPU_EINVAL, "long alignment: internal error: rows on a GPU without CUDA");
#endif
    } else {
        p->row = p->rev + (size_t)(p->k - 1) * (size_t)p->stride * 2;
        p->row_base = p->rev_base ? p->rev_base + (size_t)(p->k - 1) * (size_t)swgpu__lreg_nbase(p->stride - 1)
                                  : NULL;
        p->row_x0 = 0;
    }
    p->cmax = -1;
    for (int64_t c = chi; c >= p->xc; c--) {
        const int64_t x = p->vj1 - c;
        int64_t rv = imax64(rev_at(p, x, 0), rev_at(p, x, 1) + C->sc.open);
        if (path_ub(&C->sc, dr, c - p->xc) >= Tp - rv) {
            p->cmax = c;
            break;
        }
    }
    return SWGPU_OK;
}

/* The forward pass from the last crossing to split row k (w >= 1). */
static void split_fwd_region(const ctx_t *C, const split_t *p, swgpu__lreg_t *g)
{
    memset(g, 0, sizeof *g);
    g->h = p->vi1 - p->k * p->L - p->xr;
    g->w = p->cmax - p->xc;
    g->rseq = p->tr ? SWGPU__LSEQ_B : SWGPU__LSEQ_A;
    g->cseq = p->tr ? SWGPU__LSEQ_A : SWGPU__LSEQ_B;
    g->roff = p->xr;
    g->coff = p->xc;
    g->local = 0;
    start_init(p->xs, &g->h0, &g->e0, &g->f0);
    g->save_last = 1;
    g->saved = p->fwd;
    g->saved_base = p->fwd_base;
    /* the optimal paths from the crossing go on to the piece's end */
    g->prune = C->o->prune;
    g->prune_best = p->u.T - p->acc;
    g->prune_i = p->vi1 - p->xr;
    g->prune_j = p->vj1 - p->xc;
}

/* Add the piece from the last crossing to view vertex (r, c) in state s. */
static int split_kid(split_t *p, int64_t r, int64_t c, int s, int64_t T)
{
    sub_t u;
    if (p->tr) {
        u.i0 = p->xc; u.j0 = p->xr; u.i1 = c; u.j1 = r;
        u.s0 = swap_ef(p->xs); u.s1 = swap_ef(s);
    } else {
        u.i0 = p->xr; u.j0 = p->xc; u.i1 = r; u.j1 = c;
        u.s0 = p->xs; u.s1 = s;
    }
    u.T = T;
    return subvec_push(&p->kids, &u);
}

/* Find the crossing of split row k from the forward row (p->fwd, columns xc..cmax). */
static int split_cross(const ctx_t *C, split_t *p)
{
    const int64_t r = p->vi1 - p->k * p->L, dr = r - p->xr;
    const int64_t Tp = (int64_t)p->u.T - p->acc;
    int rc;
    for (int64_t c = p->xc; c <= p->cmax; c++) {
        const int64_t xh = rev_at(p, p->vj1 - c, 0), xf = rev_at(p, p->vj1 - c, 1);
        int64_t hf, ff;
        if (c == p->xc && p->cmax == p->xc) { /* no pass: the column below the crossing */
            int64_t h0, e0, f0;
            start_init(p->xs, &h0, &e0, &f0);
            hf = ff = swgpu__lreg_top64(0, h0, f0, C->sc.open, C->sc.ext, dr);
        } else {
            hf = swgpu__lsaved(p->fwd, p->fwd_base, c - p->xc, 0);
            ff = swgpu__lsaved(p->fwd, p->fwd_base, c - p->xc, 1);
        }
        if (hf + xh == Tp || ff + xf + C->sc.open == Tp) {
            int s = hf + xh == Tp ? ST_H : ST_F;
            int64_t v = s == ST_H ? hf : ff;
            if ((rc = split_kid(p, r, c, s, v)))
                return rc;
            p->acc += v;
            p->xr = r;
            p->xc = c;
            p->xs = s;
            p->k--;
            return SWGPU_OK;
        }
    }
    return swgpu__fail(SWGPU_EINVAL, "long alignment: internal error: no crossing at row %lld of a "
                       "%lld x %lld piece", (long long)r, (long long)(p->vi1 - p->vi0),
                       (long long)(p->vj1 - p->vj0));
}

/*
 * Walk a set of splits whose reverse rows are ready: forward pass by forward
 * pass, all splits advancing together (one batch per round).
 */
static int split_walk(ctx_t *C, split_t *sp, size_t n)
{
    swgpu__lreg_t *g = NULL;
    size_t *who = NULL;
    int rc = SWGPU_OK;
    g = malloc((n ? n : 1) * sizeof *g);
    who = malloc((n ? n : 1) * sizeof *who);
    if (!g || !who) {
        rc = swgpu__fail(SWGPU_ENOMEM, "long alignment: out of memory");
        goto done;
    }
    for (size_t k = 0; k < n; k++)
        split_walk_begin(&sp[k]);
    for (;;) {
        size_t m = 0;
        uint64_t bytes = 0;
        for (size_t k = 0; k < n; k++) {
            split_t *p = &sp[k];
            /* rows whose only candidate is the column below the crossing need no pass */
            while (p->k > 0) {
                if ((rc = split_cmax(C, p)))
                    goto done;
                if (p->cmax != p->xc)
                    break;
                if ((rc = split_cross(C, p)))
                    goto done;
            }
            if (p->k == 0)
                continue;
            if (p->cmax < 0) {
                rc = swgpu__fail(SWGPU_EINVAL, "long alignment: internal error: no column can cross "
                                 "row %lld", (long long)(p->vi1 - p->k * p->L));
                goto done;
            }
            free(p->fwd);
            free(p->fwd_base);
            p->fwd_base = NULL;
            p->fwd = malloc((size_t)(p->cmax - p->xc + 1) * 2 * sizeof *p->fwd);
            if (C->sc.wide)
                p->fwd_base = malloc((size_t)swgpu__lreg_nbase(p->cmax - p->xc) * sizeof *p->fwd_base);
            if (!p->fwd || (C->sc.wide && !p->fwd_base)) {
                rc = swgpu__fail(SWGPU_ENOMEM, "long alignment: out of memory");
                goto done;
            }
            bytes += (uint64_t)(p->cmax - p->xc + 1) * 24 + base_bytes(C, 1, p->cmax - p->xc);
            split_fwd_region(C, p, &g[m]);
            who[m++] = k;
        }
        if (m == 0)
            break;
        host_use(C, bytes);
        if ((rc = run_batch(C, g, m)))
            goto done;
        for (size_t x = 0; x < m; x++)
            if ((rc = split_cross(C, &sp[who[x]])))
                goto done;
    }
    /* the last piece, to the end of each split */
    for (size_t k = 0; k < n; k++) {
        split_t *p = &sp[k];
        if ((rc = split_kid(p, p->vi1, p->vj1, p->vs1, (int64_t)p->u.T - p->acc)))
            goto done;
    }
done:
    for (size_t k = 0; k < n; k++) {
        free(sp[k].fwd);
        free(sp[k].fwd_base);
        sp[k].fwd = NULL;
        sp[k].fwd_base = NULL;
    }
    free(g);
    free(who);
    return rc;
}

static void split_free(split_t *p)
{
    if (p->owns_rev) {
        free(p->rev);
        free(p->rev_base);
    }
    free(p->fwd);
    free(p->fwd_base);
    free(p->win);
    free(p->win_base);
    free(p->kids.v);
    memset(p, 0, sizeof *p);
}

static int is_base(const sub_t *u)
{
    return (u->i1 - u->i0 + 1) * (u->j1 - u->j0 + 1) <= BASE_CELLS;
}

/*
 * The model of the traceback's cells, for progress reports only.  A walk
 * over hv x wv view cells with split rows every L: forward passes from
 * crossing to crossing, about L rows by L * wv / hv columns each along a
 * straight path (wv * L in all), leaving hv / L children of that size.  A
 * child small enough costs its full matrix; a larger one its reverse pass
 * (all its cells) and a walk of its own.
 */
static double tb_piece(const ctx_t *C, double h, double w, int depth);

static double tb_walk(const ctx_t *C, double hv, double wv, double L, int depth)
{
    double kh, kw;
    if (hv < 1 || wv < 1)
        return 0;
    if (L >= hv)
        L = hv / 2 > 1 ? hv / 2 : 1;
    kh = L;
    kw = wv * L / hv > 1 ? wv * L / hv : 1;
    return wv * L + hv / L * tb_piece(C, kh > kw ? kh : kw, kh > kw ? kw : kh, depth + 1);
}

static double tb_piece(const ctx_t *C, double h, double w, int depth)
{
    if ((h + 1) * (w + 1) <= (double)BASE_CELLS || depth > 16)
        return h * w;
    return h * w + tb_walk(C, h, w, (double)split_spacing((int64_t)h, (int64_t)w, C->layout_cap), depth);
}

/* The traceback's total from what is done and the pieces left. */
static void tb_estimate(ctx_t *C, const subvec_t *list)
{
    double rest = 0;
    for (size_t k = 0; k < list->n; k++) {
        const double h = (double)(list->v[k].i1 - list->v[k].i0), w = (double)(list->v[k].j1 - list->v[k].j0);
        rest += tb_piece(C, h > w ? h : w, h > w ? w : h, 0);
    }
    C->phase_cells = C->phase_done + (uint64_t)rest;
}

/*
 * Replace every piece that is too large by its children, level by level,
 * until all pieces are small.  Splits are done in groups whose saved rows
 * fit the layout budget.
 */
static int refine(ctx_t *C, subvec_t *list)
{
    int rc = SWGPU_OK;
    for (;;) {
        subvec_t next = { 0 };
        size_t nbig = 0;
        for (size_t k = 0; k < list->n; k++)
            nbig += !is_base(&list->v[k]);
        tb_estimate(C, list);
        if (nbig == 0)
            return SWGPU_OK;
        if (C->st)
            C->st->levels++;
        for (size_t k = 0; k < list->n;) {
            split_t *sp;
            swgpu__lreg_t *g;
            size_t m = 0, k2 = k;
            uint64_t used = 0;
            if (is_base(&list->v[k])) {
                if ((rc = subvec_push(&next, &list->v[k])))
                    break;
                k++;
                continue;
            }
            /* a group: consecutive large pieces within the budget */
            while (k2 < list->n && !is_base(&list->v[k2])) {
                const sub_t *u = &list->v[k2];
                int64_t h = u->i1 - u->i0, w = u->j1 - u->j0;
                int64_t hv = w > h ? w : h, wv = w > h ? h : w;
                int64_t Lx = split_spacing(hv, wv, C->layout_cap);
                uint64_t b = split_bytes(hv, wv, Lx) + base_bytes(C, (hv - 1) / Lx, wv);
                if (m > 0 && used + b > C->layout_cap)
                    break;
                used += b;
                m++;
                k2++;
            }
            sp = calloc(m, sizeof *sp);
            g = calloc(m, sizeof *g);
            if (!sp || !g) {
                free(sp);
                free(g);
                rc = swgpu__fail(SWGPU_ENOMEM, "long alignment: out of memory");
                break;
            }
            for (size_t x = 0; x < m && !rc; x++) {
                const sub_t *u = &list->v[k + x];
                int64_t h = u->i1 - u->i0, w = u->j1 - u->j0;
                split_t *p = &sp[x];
                split_view(p, u, w > h);
                p->L = split_spacing(p->vi1 - p->vi0, p->vj1 - p->vj0, C->layout_cap);
                p->P = (p->vi1 - p->vi0 - 1) / p->L;
                p->stride = p->vj1 - p->vj0 + 1;
                p->rev = malloc((size_t)p->P * (size_t)p->stride * 2 * sizeof *p->rev);
                if (C->sc.wide)
                    p->rev_base = malloc((size_t)p->P * (size_t)swgpu__lreg_nbase(p->stride - 1) *
                                         sizeof *p->rev_base);
                p->owns_rev = 1;
                if (!p->rev || (C->sc.wide && !p->rev_base))
                    rc = swgpu__fail(SWGPU_ENOMEM, "long alignment: out of memory for %lld saved rows",
                                     (long long)p->P);
                else
                    split_rev_region(C, p, &g[x]);
                g[x].saved_keep = rows_stay_on_gpu(C);
            }
            if (!rc)
                rc = run_batch(C, g, m);
            for (size_t x = 0; x < m && !rc; x++) {
                sp[x].dev_rows = g[x].saved_kept;
                sp[x].reg = x;
                if (g[x].saved_kept) { /* the host buffers were never written */
                    free(sp[x].rev);
                    sp[x].rev = NULL;
                    used -= (uint64_t)sp[x].P * (uint64_t)sp[x].stride * 8;
                }
            }
            host_use(C, used);
            if (!rc)
                rc = split_walk(C, sp, m);
#ifdef SWGPU_HAVE_CUDA
            if (C->use_gpu)
                swgpu__lgpu_saved_drop(C->gpu);
#endif
            for (size_t x = 0; x < m && !rc; x++)
                for (size_t y = 0; y < sp[x].kids.n && !rc; y++)
                    rc = subvec_push(&next, &sp[x].kids.v[y]);
            for (size_t x = 0; x < m; x++)
                split_free(&sp[x]);
            free(sp);
            free(g);
            if (rc)
                break;
            k = k2;
        }
        if (rc) {
            free(next.v);
            return rc;
        }
        free(list->v);
        *list = next;
    }
}

/* ------------------------------------------------- base-case traceback */

typedef struct {
    uint32_t *v;
    size_t n, cap;
} cig_t;

static int cig_push(cig_t *c, int op, int64_t len)
{
    if (len <= 0)
        return SWGPU_OK;
    if (c->n && SWGPU_CIGAR_OP(c->v[c->n - 1]) == (uint32_t)op &&
        SWGPU_CIGAR_LEN(c->v[c->n - 1]) + (uint64_t)len < (1u << 27)) {
        c->v[c->n - 1] += (uint32_t)len << 4;
        return SWGPU_OK;
    }
    if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 16;
        uint32_t *p = realloc(c->v, cap * sizeof *p);
        if (!p)
            return SWGPU_ENOMEM;
        c->v = p;
        c->cap = cap;
    }
    while (len >= (1 << 27)) { /* keep lengths within 28 bits */
        c->v[c->n++] = ((uint32_t)((1 << 27) - 1) << 4) | (uint32_t)op;
        len -= (1 << 27) - 1;
        if (c->n == c->cap)
            return cig_push(c, op, len);
    }
    c->v[c->n++] = ((uint32_t)len << 4) | (uint32_t)op;
    return SWGPU_OK;
}

/*
 * The best score any path from vertex (i, j) of an h x w piece can have
 * to its start plus to its end, from the lengths alone: min(di, dj) * smax
 * - |di - dj| * ext each way.  A cell where this is below the piece's score
 * lies on no optimal path.  It is concave in j, so for a row the cells that
 * reach the score form one interval.
 */
static int64_t piece_ub(const swgpu__lscore_t *sc, int64_t h, int64_t w, int64_t i, int64_t j)
{
    const int64_t a = sc->smax > 0 ? sc->smax : 0, e = sc->ext;
    int64_t di = h - i, dj = w - j;
    return imin64(i, j) * a - (i > j ? i - j : j - i) * e + imin64(di, dj) * a -
           (di > dj ? di - dj : dj - di) * e;
}

/* Columns [*lo, *hi] (within 1..w) of row i that may lie on an optimal path
 * of score T; *lo > *hi when none does. */
static void piece_window(const swgpu__lscore_t *sc, int64_t h, int64_t w, int64_t i, int64_t T,
                         int64_t *lo, int64_t *hi)
{
    const int64_t cand[4] = { 1, w, imax64(1, imin64(w, i)), imax64(1, imin64(w, w - h + i)) };
    int64_t jm = 1, best = INT64_MIN, a, b;
    for (int k = 0; k < 4; k++) {
        int64_t v = piece_ub(sc, h, w, i, cand[k]);
        if (v > best) {
            best = v;
            jm = cand[k];
        }
    }
    if (best < T) {
        *lo = 1;
        *hi = 0;
        return;
    }
    a = 1; /* smallest j in [1, jm] that reaches T (nondecreasing there) */
    b = jm;
    while (a < b) {
        int64_t m = a + (b - a) / 2;
        if (piece_ub(sc, h, w, i, m) >= T)
            b = m;
        else
            a = m + 1;
    }
    *lo = a;
    a = jm; /* largest j in [jm, w] that does (nonincreasing there) */
    b = w;
    while (a < b) {
        int64_t m = a + (b - a + 1) / 2;
        if (piece_ub(sc, h, w, i, m) >= T)
            a = m;
        else
            b = m - 1;
    }
    *hi = a;
}

/*
 * Full-matrix global alignment of one piece with its begin/end states.
 * dir per vertex: bits 0-1 where H came from (0 diagonal, 1 E, 2 F; ties in
 * that order), bit 2 E extended E(i,j-1) (ties: opened from H), bit 3 F
 * extended F(i-1,j).  The piece's CIGAR is appended to *out.  Rows 1..h
 * compute only the columns that may lie on an optimal path (piece_window);
 * the others hold minus infinity, a lower bound, which changes no value on
 * an optimal path and so no decision of the traceback (a tie between two
 * sources means both lie on optimal paths).
 */
static int base_trace(const ctx_t *C, const sub_t *u, uint8_t *dir, int64_t *H, int64_t *F,
                      cig_t *out)
{
    const int64_t h = u->i1 - u->i0, w = u->j1 - u->j0, W = w + 1;
    const int64_t ext = C->sc.ext, oe = C->sc.open + C->sc.ext, NEGB = C->sc.wide ? SWGPU__LONG_NEG64 : NEG;
    const uint8_t *A = C->a + u->i0 - 1, *B = C->b + u->j0 - 1;
    int64_t h0, e0, f0, e, endv;
    int64_t i, j, plo = 1, phi = w;
    int state;
    uint32_t *rev = NULL;
    size_t nrev = 0, caprev = 0;
    int rc = SWGPU_OK;

    start_init(u->s0, &h0, &e0, &f0);
    if (h0 <= NEG)
        h0 = NEGB;
    if (e0 <= NEG)
        e0 = NEGB;
    if (f0 <= NEG)
        f0 = NEGB;
    /* row 0 */
    H[0] = h0;
    F[0] = f0;
    e = e0;
    dir[0] = 0;
    for (j = 1; j <= w; j++) {
        int64_t ee = e - ext, eo = H[j - 1] - oe;
        e = ee > eo ? ee : eo;
        H[j] = e;
        F[j] = NEGB;
        dir[j] = (uint8_t)(1 | (ee > eo ? 4 : 0));
    }
    endv = u->s1 == ST_E ? e : u->s1 == ST_F ? F[w] : H[w];
    for (i = 1; i <= h; i++) {
        const int32_t *prow = C->sc.s[A[i]];
        uint8_t *d = dir + i * W;
        int64_t lo, hi;
        int64_t prev0 = H[0], diag, fe = F[0] - ext, fo = H[0] - oe;
        piece_window(&C->sc, h, w, i, u->T, &lo, &hi);
        F[0] = fe > fo ? fe : fo;
        H[0] = F[0];
        d[0] = (uint8_t)(2 | (fe > fo ? 8 : 0));
        diag = lo == 1 ? prev0 : lo <= w ? H[lo - 1] : NEGB;
        /* the previous row's values outside this row's window become minus infinity */
        for (j = plo; j <= phi && j < lo; j++)
            H[j] = F[j] = NEGB;
        for (j = imax64(plo, hi + 1); j <= phi; j++)
            H[j] = F[j] = NEGB;
        plo = lo;
        phi = hi;
        e = NEGB;
        for (j = lo; j <= hi; j++) {
            int64_t ee = e - ext, eo = H[j - 1] - oe;
            int64_t fe2 = F[j] - ext, fo2 = H[j] - oe;
            int64_t hh = diag + prow[B[j]];
            uint8_t bits = (uint8_t)((ee > eo ? 4 : 0) | (fe2 > fo2 ? 8 : 0));
            e = ee > eo ? ee : eo;
            diag = H[j];
            F[j] = fe2 > fo2 ? fe2 : fo2;
            if (e > hh) {
                hh = e;
                bits |= 1;
            }
            if (F[j] > hh) {
                hh = F[j];
                bits = (uint8_t)((bits & ~3) | 2);
            }
            H[j] = hh;
            d[j] = bits;
        }
        endv = u->s1 == ST_E ? e : u->s1 == ST_F ? F[w] : H[w];
    }
    if (endv != u->T)
        return swgpu__fail(SWGPU_EINVAL, "long alignment: internal error: piece [%lld,%lld)x[%lld,%lld) "
                           "scores %lld, expected %lld", (long long)u->i0, (long long)u->i1,
                           (long long)u->j0, (long long)u->j1, (long long)endv, (long long)u->T);
    /* trace back from (h, w) in state s1; runs collected in reverse */
    i = h;
    j = w;
    state = u->s1;
    while (i > 0 || j > 0) {
        uint8_t d = dir[i * W + j];
        int op;
        if (state == ST_H) {
            int src = d & 3;
            if (src == 0) {
                op = SWGPU_CIGAR_M;
                i--;
                j--;
            } else {
                state = src == 1 ? ST_E : ST_F;
                continue;
            }
        } else if (state == ST_E) {
            op = SWGPU_CIGAR_D;
            state = (d & 4) ? ST_E : ST_H;
            j--;
        } else {
            op = SWGPU_CIGAR_I;
            state = (d & 8) ? ST_F : ST_H;
            i--;
        }
        if (nrev && SWGPU_CIGAR_OP(rev[nrev - 1]) == (uint32_t)op) {
            rev[nrev - 1] += 1u << 4;
            continue;
        }
        if (nrev == caprev) {
            size_t cap = caprev ? 2 * caprev : 64;
            uint32_t *p = realloc(rev, cap * sizeof *p);
            if (!p) {
                free(rev);
                return swgpu__fail(SWGPU_ENOMEM, "long alignment: out of memory in traceback");
            }
            rev = p;
            caprev = cap;
        }
        rev[nrev++] = (1u << 4) | (uint32_t)op;
    }
    for (size_t k = nrev; k-- > 0 && !rc;)
        if (cig_push(out, (int)SWGPU_CIGAR_OP(rev[k]), SWGPU_CIGAR_LEN(rev[k])))
            rc = swgpu__fail(SWGPU_ENOMEM, "long alignment: out of memory in traceback");
    free(rev);
    return rc;
}

typedef struct {
    const ctx_t *C;
    const subvec_t *list;
    cig_t *cig;               /* one per piece */
    _Atomic size_t next;
    _Atomic int rc;
    _Atomic uint64_t done;    /* cells of the pieces traced back (progress) */
    _Atomic int running;      /* workers not finished */
    char err[1024];
    pthread_mutex_t lock;
} basejob_t;

static void base_run(basejob_t *J);

static void *base_worker(void *arg)
{
    basejob_t *J = arg;
    base_run(J);
    atomic_fetch_sub(&J->running, 1);
    return NULL;
}

static void base_run(basejob_t *J)
{
    uint8_t *dir = NULL;
    int64_t *H = NULL, *F = NULL;
    size_t wmax = 0;
    for (;;) {
        size_t k = atomic_fetch_add(&J->next, 1);
        const sub_t *u;
        int64_t w;
        int rc;
        if (k >= J->list->n || atomic_load(&J->rc))
            break;
        u = &J->list->v[k];
        w = u->j1 - u->j0;
        if (!dir) {
            dir = malloc((size_t)BASE_CELLS);
            if (!dir)
                goto nomem;
        }
        if ((size_t)w + 1 > wmax) {
            int64_t *h2 = realloc(H, ((size_t)w + 1) * sizeof *H);
            int64_t *f2;
            if (!h2)
                goto nomem;
            H = h2;
            f2 = realloc(F, ((size_t)w + 1) * sizeof *F);
            if (!f2)
                goto nomem;
            F = f2;
            wmax = (size_t)w + 1;
        }
        rc = base_trace(J->C, u, dir, H, F, &J->cig[k]);
        atomic_fetch_add(&J->done, (uint64_t)(u->i1 - u->i0) * (uint64_t)w);
        if (rc) {
            int zero = 0;
            pthread_mutex_lock(&J->lock);
            if (atomic_compare_exchange_strong(&J->rc, &zero, rc))
                snprintf(J->err, sizeof J->err, "%s", swgpu_last_error());
            pthread_mutex_unlock(&J->lock);
            break;
        }
    }
    free(dir);
    free(H);
    free(F);
    return;
nomem:
    {
        int zero = 0;
        pthread_mutex_lock(&J->lock);
        if (atomic_compare_exchange_strong(&J->rc, &zero, SWGPU_ENOMEM))
            snprintf(J->err, sizeof J->err, "long alignment: out of memory in traceback");
        pthread_mutex_unlock(&J->lock);
    }
    free(dir);
    free(H);
    free(F);
    return;
}

/* Trace back every (small) piece in parallel and join the CIGARs into out. */
static int trace_pieces(ctx_t *C, const subvec_t *list, cig_t *all)
{
    basejob_t J;
    pthread_t *tid = NULL;
    int nt = C->threads, started = 0, rc;
    memset(&J, 0, sizeof J);
    J.C = C;
    J.list = list;
    J.cig = calloc(list->n ? list->n : 1, sizeof *J.cig);
    if (!J.cig)
        return swgpu__fail(SWGPU_ENOMEM, "long alignment: out of memory");
    atomic_init(&J.next, 0);
    atomic_init(&J.rc, 0);
    atomic_init(&J.done, 0);
    pthread_mutex_init(&J.lock, NULL);
    if ((size_t)nt > list->n)
        nt = (int)list->n;
    if (nt < 1)
        nt = 1;
    host_use(C, (uint64_t)nt * (uint64_t)(BASE_CELLS + 16 * SH * 4));
    if (nt > 1)
        tid = malloc((size_t)nt * sizeof *tid);
    atomic_init(&J.running, nt);
    if (tid)
        for (; started < nt; started++)
            if (pthread_create(&tid[started], NULL, base_worker, &J) != 0)
                break;
    if (started == 0) {
        base_run(&J);
    } else {
        atomic_fetch_sub(&J.running, nt - started);
        while (C->o->progress && atomic_load(&J.running) > 0) { /* report while they work */
            struct timespec ts = { 0, 20 * 1000 * 1000 };
            nanosleep(&ts, NULL);
            prog_cb(C, atomic_load(&J.done), atomic_load(&J.done)); /* not counted as computed */
        }
    }
    for (int k = 0; k < started; k++)
        pthread_join(tid[k], NULL);
    free(tid);
    C->phase_done += atomic_load(&J.done);
    rc = atomic_load(&J.rc);
    if (rc)
        swgpu__fail(rc, "%s", J.err);
    for (size_t k = 0; k < list->n && !rc; k++)
        for (size_t x = 0; x < J.cig[k].n && !rc; x++)
            if (cig_push(all, (int)SWGPU_CIGAR_OP(J.cig[k].v[x]), SWGPU_CIGAR_LEN(J.cig[k].v[x])))
                rc = swgpu__fail(SWGPU_ENOMEM, "long alignment: out of memory for the CIGAR");
    for (size_t k = 0; k < list->n; k++)
        free(J.cig[k].v);
    free(J.cig);
    pthread_mutex_destroy(&J.lock);
    return rc;
}

/*
 * The pieces traced back by the parts together: part p takes the pieces
 * whose cells begin in the p-th of P equal shares of all the pieces' cells
 * (consecutive pieces), joins their CIGARs, and every part joins the parts'
 * CIGARs in order - the same CIGAR as one process joining every piece.
 */
static int trace_pieces_split(ctx_t *C, const subvec_t *list, cig_t *all)
{
    const swgpu_comm_t *cm = C->comm;
    uint64_t total = 0, acc = 0;
    size_t k0 = list->n, k1 = list->n, off[SWGPU__LONG_MAX_PARTS + 1];
    cig_t mine = { 0 };
    char *got = NULL;
    int rc;
    for (size_t k = 0; k < list->n; k++)
        total += (uint64_t)(list->v[k].i1 - list->v[k].i0 + 1) * (uint64_t)(list->v[k].j1 - list->v[k].j0 + 1);
    for (size_t k = 0; k < list->n; k++) {
        const sub_t *u = &list->v[k];
        int p = total ? (int)((double)acc / (double)total * cm->size) : 0;
        if (p >= cm->size)
            p = cm->size - 1;
        if (p == cm->rank && k0 == list->n)
            k0 = k;
        if (p > cm->rank && k1 == list->n)
            k1 = k;
        acc += (uint64_t)(u->i1 - u->i0 + 1) * (uint64_t)(u->j1 - u->j0 + 1);
    }
    if (k0 > k1)
        k0 = k1;
    subvec_t part = { list->v + k0, k1 - k0, k1 - k0 };
    rc = part.n ? trace_pieces(C, &part, &mine) : SWGPU_OK;
    if ((rc = swgpu__lsplit_gather(cm, rc, mine.v, mine.n * sizeof *mine.v, &got, off))) {
        C->dead = 1;
        free(mine.v);
        return rc;
    }
    for (int p = 0; p < cm->size && !rc; p++)
        for (size_t x = off[p]; x < off[p + 1] && !rc; x += sizeof(uint32_t)) {
            uint32_t c;
            memcpy(&c, got + x, sizeof c);
            if (cig_push(all, (int)SWGPU_CIGAR_OP(c), SWGPU_CIGAR_LEN(c)))
                rc = swgpu__fail(SWGPU_ENOMEM, "long alignment: out of memory for the CIGAR");
        }
    free(got);
    free(mine.v);
    return rc;
}

/* ------------------------------------------------------------- public */

void swgpu_long_opts_init(swgpu_long_opts_t *o, swgpu_alphabet_t alphabet)
{
    memset(o, 0, sizeof *o);
    o->gap_open = alphabet == SWGPU_DNA ? 5 : 11;
    o->gap_extend = alphabet == SWGPU_DNA ? 2 : 1;
    o->max_host_memory = DEFAULT_BUDGET;
    o->max_device_memory = DEFAULT_BUDGET;
    o->backend = SWGPU_BACKEND_AUTO;
    o->prune = 1;
    o->checkpoint_every = 600;
    o->gpus = 0; /* all visible */
}

void swgpu_dna_revcomp(const uint8_t *in, size_t n, uint8_t *out)
{
    /* A C G T N R Y K M S W B D H V -> T G C A N Y R M K S W V H D B */
    static const uint8_t comp[15] = { 3, 2, 1, 0, 4, 6, 5, 8, 7, 9, 10, 14, 13, 12, 11 };
    for (size_t i = 0, k = n; i < k--; i++) {
        uint8_t x = in[i], y = in[k];
        out[i] = y < 15 ? comp[y] : y;
        out[k] = x < 15 ? comp[x] : x;
    }
}

static void aln_clear(swgpu_aln_t *out)
{
    out->score = 0;
    out->qbeg = out->qend = out->tbeg = out->tend = 0;
    out->n_cigar = 0;
    out->length = out->n_ident = out->n_mismatch = out->n_gapopen = out->n_gaps = 0;
}

/* Fill the alignment's statistics from its CIGAR; return its score. */
static int64_t aln_finish(const ctx_t *C, swgpu_aln_t *out)
{
    int64_t i = out->qbeg, j = out->tbeg, score = 0;
    for (size_t k = 0; k < out->n_cigar; k++) {
        uint32_t op = SWGPU_CIGAR_OP(out->cigar[k]);
        int64_t len = SWGPU_CIGAR_LEN(out->cigar[k]);
        out->length += len;
        if (op == SWGPU_CIGAR_M) {
            for (int64_t x = 0; x < len; x++, i++, j++) {
                score += C->sc.s[C->a[i]][C->b[j]];
                if (C->a[i] == C->b[j])
                    out->n_ident++;
                else
                    out->n_mismatch++;
            }
        } else {
            out->n_gapopen++;
            out->n_gaps += len;
            score -= C->sc.open + len * C->sc.ext;
            if (op == SWGPU_CIGAR_I)
                i += len;
            else
                j += len;
        }
    }
    if (i != out->qend || j != out->tend)
        return INT64_MIN;
    return score;
}

void swgpu__long_scoring(swgpu__lscore_t *sc, const swgpu_matrix_t *m, int open, int ext)
{
    memset(sc, 0, sizeof *sc);
    memcpy(sc->s, m->s, sizeof sc->s);
    sc->open = open;
    sc->ext = ext;
    sc->smax = m->s[0][0];
    for (int x = 0; x < 32; x++)
        for (int y = 0; y < 32; y++)
            if (m->s[x][y] > sc->smax)
                sc->smax = m->s[x][y];
    if (m->alphabet == SWGPU_DNA) {
        int ok = 1;
        sc->match = m->s[0][0];
        sc->mismatch = m->s[0][1];
        for (int x = 0; x < 32 && ok; x++)
            for (int y = 0; y < 32 && ok; y++)
                ok = m->s[x][y] == ((x == y && x < 4) ? sc->match : sc->mismatch);
        sc->dna = ok;
    }
}

static int setup_seqs(ctx_t *C)
{
    const int64_t la = C->alen, lb = C->blen;
    size_t tot = (size_t)(2 * (la + lb) + 4 * PAD);
    uint8_t *p = malloc(tot);
    if (!p)
        return swgpu__fail(SWGPU_ENOMEM, "long alignment: out of memory for %zu bytes of sequences", tot);
    C->qbuf = p;
    memcpy(p, C->a, (size_t)la);
    memset(p + la, 31, PAD);
    C->q.seq[SWGPU__LSEQ_A] = p;
    p += la + PAD;
    memcpy(p, C->b, (size_t)lb);
    memset(p + lb, 31, PAD);
    C->q.seq[SWGPU__LSEQ_B] = p;
    p += lb + PAD;
    for (int64_t k = 0; k < la; k++)
        p[k] = C->a[la - 1 - k];
    memset(p + la, 31, PAD);
    C->q.seq[SWGPU__LSEQ_RA] = p;
    p += la + PAD;
    for (int64_t k = 0; k < lb; k++)
        p[k] = C->b[lb - 1 - k];
    memset(p + lb, 31, PAD);
    C->q.seq[SWGPU__LSEQ_RB] = p;
    C->q.len[0] = C->q.len[2] = la;
    C->q.len[1] = C->q.len[3] = lb;
    return SWGPU_OK;
}

static int pick_backend(ctx_t *C, swgpu_backend_t b)
{
    const char *env = getenv("SWGPU_BACKEND");
    if (b == SWGPU_BACKEND_AUTO && env && *env) {
        if (!strcmp(env, "ref"))
            b = SWGPU_BACKEND_REF;
        else if (!strcmp(env, "cpu"))
            b = SWGPU_BACKEND_CPU;
        else if (!strcmp(env, "cuda"))
            b = SWGPU_BACKEND_CUDA;
        else if (strcmp(env, "auto"))
            return swgpu__fail(SWGPU_EINVAL, "SWGPU_BACKEND=%s: expected ref, cpu, cuda or auto", env);
    }
    if (b == SWGPU_BACKEND_REF)
        return 1;
#ifdef SWGPU_HAVE_CUDA
    if (b == SWGPU_BACKEND_CUDA || b == SWGPU_BACKEND_AUTO) {
        if (swgpu__lgpu_available()) {
            C->use_gpu = 1;
            return 0;
        }
        if (b == SWGPU_BACKEND_CUDA)
            return swgpu__fail(SWGPU_ENODEV, "backend cuda: no usable CUDA device");
    }
#else
    if (b == SWGPU_BACKEND_CUDA)
        return swgpu__fail(SWGPU_ENODEV, "backend cuda: this build has no CUDA support");
#endif
    C->use_gpu = 0;
    return 0;
}

int swgpu_align_long(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen,
                     const swgpu_matrix_t *m, const swgpu_long_opts_t *o, swgpu_aln_t *out,
                     swgpu_long_stats_t *st)
{
    swgpu_long_opts_t defo;
    swgpu_long_stats_t st0;
    ctx_t C;
    swgpu__lreg_t g;
    int32_t *saved = NULL;
    int64_t *saved_base = NULL;
    subvec_t list = { 0 };
    cig_t cig = { 0 };
    int rc, isref;
    int64_t ie, je, ib, jb, L1, maxabs, S;
    uint64_t fixed, rowb, cap;
    double t;

    if (!out || !m || (alen && !a) || (blen && !b))
        return swgpu__fail(SWGPU_EINVAL, "swgpu_align_long: NULL argument");
    if (!o) {
        swgpu_long_opts_init(&defo, m->alphabet);
        o = &defo;
    }
    {
        swgpu__isa_t isa; /* a bad SWGPU_CPU_ISA is refused before any work */
        if ((rc = swgpu__cpu_isa_env(&isa)))
            return rc;
    }
    if (!st)
        st = &st0;
    memset(st, 0, sizeof *st);
    memset(&C, 0, sizeof C);
    C.t0 = swgpu__now();
    C.o = o;
    C.st = st;
    C.a = a;
    C.b = b;
    C.alen = (int64_t)alen;
    C.blen = (int64_t)blen;
    C.threads = o->threads > 0 ? o->threads : swgpu__ncores();
    {
        /* SWGPU_LONG_ROWS=S,R,T: the CUDA engine's rows per lane (16, 8 or 4) of
         * the score pass, the reverse pass and the traceback (measurements;
         * the values are the same whatever they are) */
        const char *env = getenv("SWGPU_LONG_ROWS");
        C.lane_rows[0] = C.lane_rows[1] = C.lane_rows[2] = 16;
        if (env && sscanf(env, "%d,%d,%d", &C.lane_rows[0], &C.lane_rows[1], &C.lane_rows[2]) != 3)
            return swgpu__fail(SWGPU_EINVAL, "SWGPU_LONG_ROWS=%s: three of 16, 8 or 4, e.g. 16,4,4", env);
        for (int k = 0; k < 3; k++)
            if (C.lane_rows[k] != 16 && C.lane_rows[k] != 8 && C.lane_rows[k] != 4)
                return swgpu__fail(SWGPU_EINVAL, "SWGPU_LONG_ROWS=%s: three of 16, 8 or 4, e.g. 16,4,4", env);
    }
    C.host_budget = o->max_host_memory ? o->max_host_memory : DEFAULT_BUDGET;
    C.dev_budget = o->max_device_memory ? o->max_device_memory : DEFAULT_BUDGET;
    if (o->gap_open < 0 || o->gap_extend < 0 || o->gap_open > 1000000 || o->gap_extend > 1000000)
        return swgpu__fail(SWGPU_EINVAL, "long alignment: gap penalties must be in 0..1000000 "
                           "(open %d, extend %d)", o->gap_open, o->gap_extend);
    if (o->gap_open + o->gap_extend == 0)
        return swgpu__fail(SWGPU_EINVAL, "long alignment: gap open + extend must be positive");
    if (o->gpus < 0 || o->gpu_parts < 0)
        return swgpu__fail(SWGPU_EINVAL, "long alignment: gpus %d, gpu_parts %d: must be >= 0", o->gpus,
                           o->gpu_parts);
    if (o->gpu_parts > SWGPU__LGPU_MAX_SLICES)
        return swgpu__fail(SWGPU_EINVAL, "long alignment: gpu_parts %d: at most %d column slices", o->gpu_parts,
                           SWGPU__LGPU_MAX_SLICES);

    if (o->comm && o->comm->size > 1) {
        /* split across parts: the CPU engines (the reference computes alone) */
        if (o->comm->size > SWGPU__LONG_MAX_PARTS || o->comm->rank < 0 || o->comm->rank >= o->comm->size ||
            !o->comm->send || !o->comm->recv || !o->comm->allgather)
            return swgpu__fail(SWGPU_EINVAL, "long alignment: invalid transport (part %d of %d)",
                               o->comm->rank, o->comm->size);
        if (o->backend == SWGPU_BACKEND_CUDA)
            return swgpu__fail(SWGPU_ENODEV, "long alignment: passes split across processes run "
                               "on the CPU (backend cpu or auto)");
        C.comm = o->backend == SWGPU_BACKEND_REF ? NULL : o->comm;
    }
    isref = C.comm ? 0 : pick_backend(&C, o->backend);
    if (isref < 0)
        return isref;
    st->backend = isref ? "ref" : C.use_gpu ? "cuda" : "cpu";
    st->score_cells = (uint64_t)alen * (uint64_t)blen;
    aln_clear(out);
    if (isref && o->checkpoint && *o->checkpoint)
        return swgpu__fail(SWGPU_EINVAL, "long alignment: checkpoints (%s) are not supported with the ref "
                           "backend (use backend cpu or cuda)", o->checkpoint);
    if (isref) {
        t = swgpu__now();
        rc = swgpu_align(a, alen, b, blen, m, o->gap_open, o->gap_extend, o->score_only, out);
        st->score_seconds = st->total_seconds = swgpu__now() - t;
        st->cells = st->score_cells;
        st->score_gcups = st->score_seconds > 0 ? (double)st->score_cells / st->score_seconds / 1e9 : 0;
        return rc;
    }
    if (alen == 0 || blen == 0) {
        st->total_seconds = swgpu__now() - C.t0;
        return SWGPU_OK;
    }
    swgpu__long_scoring(&C.sc, m, o->gap_open, o->gap_extend);
    /* values within +-2^29 (every vertex of the matrix): 32 bits as they
     * are; beyond, 32-bit values relative to 64-bit bases per block
     * (long.h: wide scores), on either engine */
    maxabs = imax64(imax64(C.sc.smax, -(int64_t)m->min), (int64_t)o->gap_open + o->gap_extend);
    if (alen > (size_t)INT32_MAX || blen > (size_t)INT32_MAX)
        return swgpu__fail(SWGPU_ERANGE, "long alignment: sequences of %zu and %zu residues: at most "
                           "2^31 - 1 = %d each", alen, blen, INT32_MAX);
    if ((int64_t)(alen + blen) * maxabs >= ((int64_t)1 << 29)) {
        /* (SH + CHUNK + 2) * K + open + ext < 2^28 (long.h) */
        const int64_t K = (int64_t)(C.sc.smax > 0 ? C.sc.smax : 0) + o->gap_open + o->gap_extend,
                      KMAX = (((int64_t)1 << 28) - 1) / (SH + SWGPU__LONG_CHUNK + 3);
        if (K > KMAX)
            return swgpu__fail(SWGPU_ERANGE, "long alignment: sequences of %zu and %zu residues need scores "
                               "beyond 32 bits, for which the largest score plus the gap costs (%lld) must "
                               "keep below %lld", alen, blen, (long long)K, (long long)KMAX + 1);
        C.sc.wide = 1;
    }

    /* memory: the layout (saved-row spacing) depends on the smaller budget only */
    fixed = (uint64_t)(2 * (alen + blen) + 4 * PAD) + (uint64_t)BASE_CELLS * 2 +
            (uint64_t)((alen + SH - 1) / SH) * 64;
    cap = C.host_budget < C.dev_budget ? C.host_budget : C.dev_budget;
    fixed += SLACK;
    rowb = (uint64_t)(blen + 1) * 8;
    if (cap < fixed + 4 * rowb)
        return swgpu__fail(SWGPU_EBUDGET, "long alignment: --max-memory %llu MiB is too small for "
                           "%zu x %zu residues: at least %llu MiB are needed",
                           (unsigned long long)(cap >> 20), alen, blen,
                           (unsigned long long)((fixed + 4 * rowb + (1 << 20) - 1) >> 20));
    C.layout_cap = cap - fixed;
    C.host_fixed = (uint64_t)(2 * (alen + blen) + 4 * PAD);
    C.host_peak = C.host_fixed;

    if ((rc = setup_seqs(&C)))
        goto done;
    if (o->checkpoint && *o->checkpoint) {
        /* the fingerprint: everything the output depends on */
        uint64_t h = 0xcbf29ce484222325ull;
        int64_t v[8] = { 1, C.alen, C.blen, C.sc.open, C.sc.ext, o->score_only, o->prune, (int64_t)cap };
        if (C.comm) {
            rc = swgpu__fail(SWGPU_EINVAL, "long alignment: checkpoints are not available for passes "
                             "split across processes");
            goto done;
        }
        h = swgpu__ck_hash(h, v, sizeof v);
        h = swgpu__ck_hash(h, C.sc.s, sizeof C.sc.s);
        h = swgpu__ck_hash(h, a, alen);
        h = swgpu__ck_hash(h, b, blen);
        C.ck_path = o->checkpoint;
        C.ck_every = o->checkpoint_every > 0 ? o->checkpoint_every : 600;
        C.ck_last = swgpu__now();
        C.ck_out.fp = h;
        if ((rc = swgpu__ck_read(C.ck_path, h, C.sc.wide, &C.ck_in)) < 0)
            goto done;
        if (rc == 1 && (rc = ck_check(&C)))
            goto done;
        rc = SWGPU_OK;
    }
#ifdef SWGPU_HAVE_CUDA
    if (C.use_gpu) {
        int ndev = swgpu__lgpu_devices(), use, devs[SWGPU__LONG_MAX_PARTS];
        use = o->gpus > 0 && o->gpus < ndev ? o->gpus : ndev;
        if (use < 1) {
            rc = swgpu__fail(SWGPU_ENODEV, "backend cuda: no usable CUDA device");
            goto done;
        }
        if (use > SWGPU__LONG_MAX_PARTS)
            use = SWGPU__LONG_MAX_PARTS;
        for (int p = 0; p < use; p++)
            devs[p] = p;
        if ((rc = swgpu__lgpu_create(&C.q, &C.sc, devs, use, o->gpu_parts, &C.gpu)))
            goto done;
        st->gpus = use;
        if (o->gpu_parts > 0)
            swgpu__log(SWGPU_LOG_DEBUG, "long alignment: %d GPU%s, passes over few regions cut into %d "
                       "column slices", use, use == 1 ? "" : "s", o->gpu_parts);
        else if (use == 1)
            swgpu__log(SWGPU_LOG_DEBUG, "long alignment: 1 GPU, no column slices");
        else
            swgpu__log(SWGPU_LOG_DEBUG, "long alignment: %d GPUs, passes over few regions cut into "
                       "up to %d column slices per GPU", use, SWGPU__LGPU_AUTO_SLICES);
    }
#endif

    /* phase 1: score */
    t = swgpu__now();
    memset(&g, 0, sizeof g);
    g.h = C.alen;
    g.w = C.blen;
    g.rseq = SWGPU__LSEQ_A;
    g.cseq = SWGPU__LSEQ_B;
    g.local = 1;
    g.track = 1;
    g.prune = o->prune;
    if (C.ck_in.phase >= SWGPU__CK_REVERSE) { /* done before the checkpoint */
        phase_begin(&C, "score", st->score_cells, 0);
        g.best = C.ck_in.S;
        g.bi = C.ck_in.ie;
        g.bj = C.ck_in.je;
    } else if ((rc = score_pass(&C, &g)))
        goto done;
    st->score_pruned = C.last_pruned;
    phase_end(&C);
    st->score_seconds = swgpu__now() - t;
    st->resumed = C.ck_in.phase;
    /* a rate only for a score pass run whole here (a resumed one's time is part) */
    st->score_gcups = st->score_seconds > 0 && C.ck_in.phase < SWGPU__CK_SCORE
                          ? (double)st->score_cells / st->score_seconds / 1e9 : 0;
    S = g.best;
    if (C.ck_in.phase >= SWGPU__CK_SCORE && C.ck_in.prune_best > S) {
        /* the pruning score is a real alignment's: never above the best */
        rc = swgpu__fail(SWGPU_EFORMAT, "checkpoint %s does not fit this alignment: its pruning score %lld is "
                         "above the best score %lld: remove it to start afresh", C.ck_path,
                         (long long)C.ck_in.prune_best, (long long)S);
        goto done;
    }
    if (S <= 0)
        goto done;
    ie = g.bi;
    je = g.bj;
    out->score = S;
    out->qend = ie;
    out->tend = je;
    C.ck_out.phase = SWGPU__CK_REVERSE;
    C.ck_out.S = S;
    C.ck_out.ie = ie;
    C.ck_out.je = je;
    if ((rc = ck_between(&C, NULL)))
        goto done;

    /* phase 2: reverse pass from the end, saving rows ie - k*L1 */
    t = swgpu__now();
    rowb = (uint64_t)(je + 1) * 8;
    L1 = rev_spacing(&C, ie, je);
    memset(&g, 0, sizeof g);
    g.h = ie;
    g.w = je;
    g.rseq = SWGPU__LSEQ_RA;
    g.cseq = SWGPU__LSEQ_RB;
    g.roff = C.alen - ie;
    g.coff = C.blen - je;
    g.local = 1;
    g.track = 1;
    g.prune = o->prune;
    g.prune_best = S;
    g.save_every = o->score_only ? 0 : L1;
    /* rows kept on the GPU leave the host buffer unwritten: its pages cost nothing */
    g.saved_keep = rows_stay_on_gpu(&C);
    if (swgpu__lreg_nsaved(&g) > 0) {
        saved = malloc((size_t)swgpu__lreg_nsaved(&g) * (size_t)rowb);
        if (C.sc.wide)
            saved_base = malloc((size_t)base_bytes(&C, swgpu__lreg_nsaved(&g), je));
        if (!saved || (C.sc.wide && !saved_base)) {
            rc = swgpu__fail(SWGPU_ENOMEM, "long alignment: out of memory for %lld saved rows",
                             (long long)swgpu__lreg_nsaved(&g));
            goto done;
        }
    }
    g.saved = saved;
    g.saved_base = saved_base;
    phase_begin(&C, "reverse", (uint64_t)ie * (uint64_t)je, 0);
    if (C.ck_in.phase == SWGPU__CK_TRACE || ck_resume(&C, SWGPU__CK_REVERSE)) {
        /* the checkpoint's rows (all of them, or the strips done) */
        const int64_t nr = C.ck_in.phase == SWGPU__CK_TRACE ? swgpu__lreg_nsaved(&g)
                                                             : swgpu__lck_rows(&g, C.ck_in.st.next);
        /* (checked when read: ck_check) */
        if (C.ck_in.w != je || C.ck_in.nrows != nr || (nr > 0 && !saved)) {
            rc = swgpu__fail(SWGPU_EFORMAT, "checkpoint %s does not fit this alignment: remove it to "
                             "start afresh", C.ck_path);
            goto done;
        }
        if (nr > 0) {
            memcpy(saved, C.ck_in.saved, (size_t)nr * (size_t)rowb);
            if (C.sc.wide)
                memcpy(saved_base, C.ck_in.saved_base, (size_t)base_bytes(&C, nr, je));
        }
    }
    if (C.ck_in.phase == SWGPU__CK_TRACE) {
        g.best = S;
        g.bi = ie - C.ck_in.ib;
        g.bj = je - C.ck_in.jb;
    } else if ((rc = run_batch_ck(&C, &g, 1, 1, ck_resume(&C, SWGPU__CK_REVERSE), 0)))
        goto done;
    phase_end(&C);
    if (g.saved_kept) {
        free(saved);
        saved = NULL;
    } else if (saved) {
        host_use(&C, (uint64_t)swgpu__lreg_nsaved(&g) * rowb + base_bytes(&C, swgpu__lreg_nsaved(&g), je));
    }
    if (g.best != S) {
        if (C.ck_in.phase)
            rc = swgpu__fail(SWGPU_EFORMAT, "checkpoint %s does not fit this alignment: the reverse pass "
                             "scores %lld, the checkpoint's forward pass %lld: remove it to start afresh",
                             C.ck_path, (long long)g.best, (long long)S);
        else
            rc = swgpu__fail(SWGPU_EINVAL, "long alignment: internal error: reverse pass scores %lld, "
                             "forward %lld", (long long)g.best, (long long)S);
        goto done;
    }
    ib = ie - g.bi;
    jb = je - g.bj;
    out->qbeg = ib;
    out->tbeg = jb;
    C.ck_out.phase = SWGPU__CK_TRACE;
    C.ck_out.ib = ib;
    C.ck_out.jb = jb;
    if (!o->score_only && (rc = ck_between(&C, &g)))
        goto done;
    st->reverse_seconds = swgpu__now() - t;
    if (o->score_only)
        goto done;

    /* phase 3: traceback */
    t = swgpu__now();
    {
        sub_t top = { ib, jb, ie, je, ST_H, ST_H, S };
        const double h = (double)(ie - ib), w = (double)(je - jb);
        if (is_base(&top) || (ie - ib - 1) / L1 < 1) {
            phase_begin(&C, "traceback", (uint64_t)tb_piece(&C, h > w ? h : w, h > w ? w : h, 0), 1);
            rc = subvec_push(&list, &top);
        } else {
            phase_begin(&C, "traceback", (uint64_t)tb_walk(&C, h, w, (double)L1, 0), 1);
            split_t sp;
            split_view(&sp, &top, 0);
            sp.L = L1;
            sp.P = (ie - ib - 1) / L1;
            sp.rev = saved;
            sp.rev_base = saved_base;
            sp.dev_rows = g.saved_kept;
            sp.stride = je + 1;
            rc = split_walk(&C, &sp, 1);
            for (size_t k = 0; k < sp.kids.n && !rc; k++)
                rc = subvec_push(&list, &sp.kids.v[k]);
            split_free(&sp);
            st->levels = 1;
        }
        free(saved);
        free(saved_base);
        saved = NULL;
        saved_base = NULL;
#ifdef SWGPU_HAVE_CUDA
        if (g.saved_kept)
            swgpu__lgpu_saved_drop(C.gpu);
#endif
        if (rc)
            goto done;
    }
    if ((rc = refine(&C, &list)))
        goto done;
    st->subproblems = list.n;
    if ((rc = C.comm ? trace_pieces_split(&C, &list, &cig) : trace_pieces(&C, &list, &cig)))
        goto done;
    phase_end(&C);
    if (out->m_cigar < cig.n) {
        uint32_t *p = realloc(out->cigar, cig.n * sizeof *p);
        if (!p) {
            rc = swgpu__fail(SWGPU_ENOMEM, "long alignment: out of memory for the CIGAR");
            goto done;
        }
        out->cigar = p;
        out->m_cigar = cig.n;
    }
    memcpy(out->cigar, cig.v, cig.n * sizeof *cig.v);
    out->n_cigar = cig.n;
    if (aln_finish(&C, out) != S) {
        if (C.ck_in.phase)
            rc = swgpu__fail(SWGPU_EFORMAT, "checkpoint %s does not fit this alignment: the alignment "
                             "traced from it does not score %lld: remove it to start afresh", C.ck_path,
                             (long long)S);
        else
            rc = swgpu__fail(SWGPU_EINVAL, "long alignment: internal error: the CIGAR does not rescore to "
                             "%lld", (long long)S);
        goto done;
    }
    st->traceback_seconds = swgpu__now() - t;

done:
    if (rc == SWGPU_OK && C.ck_path)
        remove(C.ck_path); /* done: the checkpoint is no longer needed */
    swgpu__ck_free(&C.ck_in);
    /* the last checkpoint of a split alignment: a part that failed on its
     * own meets the others here, or at their next one */
    if (C.comm && !C.dead)
        rc = swgpu__lsplit_agree(C.comm, rc);
    free(saved);
    free(saved_base);
    free(list.v);
    free(cig.v);
#ifdef SWGPU_HAVE_CUDA
    if (C.gpu) {
        st->peak_device_bytes = swgpu__lgpu_peak(C.gpu);
        swgpu__lgpu_destroy(C.gpu);
    }
#endif
    free(C.qbuf);
    st->peak_host_bytes = C.host_peak;
    st->total_seconds = swgpu__now() - C.t0;
    if (rc)
        aln_clear(out);
    return rc;
}
