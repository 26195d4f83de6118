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
 * (cpu.c) or the CUDA engine (gpu.c, gpu_kernels.cu), which compute
 * identical values; the split layout depends only on the sequence lengths,
 * the scores and the memory budget (layout.c), so both backends give the
 * same alignment.
 *
 * This file holds the driver, swgpu_align_long, as its phases: setup
 * (options, backend, scoring, budget, sequences, checkpoint, GPUs), score
 * (with its seed bound and pre-pass), reverse, traceback, output.  The
 * passes run through batch.c, the traceback's walk is walk.c, its small
 * pieces basetrace.c, the CIGAR cigar.c.
 */
#define _POSIX_C_SOURCE 200809L
#include "long/long.h"
#include "simd/simd.h"

#include <stdio.h>
#include <string.h>

#define SH SWGPU__LONG_SH
#define PAD SWGPU__LONG_PAD
#define DEFAULT_BUDGET ((uint64_t)4 << 30)

static int64_t imin64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

static int64_t imax64(int64_t a, int64_t b)
{
    return a > b ? a : b;
}

/* What the phases find and hand on, and what the driver frees. */
typedef struct {
    int64_t S, ie, je, ib, jb; /* the best score, its end and its begin */
    swgpu__lreg_t g;           /* the reverse pass's region */
    int64_t L1;                /* its saved-row spacing */
    int32_t *saved;            /* its saved rows (NULL when kept on the GPU) */
    int64_t *saved_base;       /* and their bases (wide scores) */
    swgpu__la_pieces_t list;   /* the traceback's pieces */
    swgpu__la_cig_t cig;       /* their CIGAR */
    double t;                  /* the traceback's start */
} found_t;

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

/* ------------------------------------------------------------- setup */

/* The context of one alignment: inputs, threads, budgets, and the CUDA
 * engine's rows per lane from SWGPU_LONG_ROWS. */
static int ctx_init(swgpu__la_t *C, const uint8_t *a, size_t alen, const uint8_t *b, size_t blen,
                    const swgpu_long_opts_t *o, swgpu_long_stats_t *st)
{
    /* SWGPU_LONG_ROWS=S,R,T: the CUDA engine's rows per lane (16, 8 or 4) of
     * the score pass, the reverse pass and the traceback (measurements;
     * the values are the same whatever they are) */
    const char *env = getenv("SWGPU_LONG_ROWS");
    memset(C, 0, sizeof *C);
    C->t0 = swgpu__now();
    C->o = o;
    C->st = st;
    C->a = a;
    C->b = b;
    C->alen = (int64_t)alen;
    C->blen = (int64_t)blen;
    C->threads = o->threads > 0 ? o->threads : swgpu__ncores();
    C->lane_rows[0] = C->lane_rows[1] = C->lane_rows[2] = 16;
    if (env && sscanf(env, "%d,%d,%d", &C->lane_rows[0], &C->lane_rows[1], &C->lane_rows[2]) != 3)
        return swgpu__fail(SWGPU_EINVAL, "SWGPU_LONG_ROWS=%s: three of 16, 8 or 4, e.g. 16,4,4", env);
    for (int k = 0; k < 3; k++)
        if (C->lane_rows[k] != 16 && C->lane_rows[k] != 8 && C->lane_rows[k] != 4)
            return swgpu__fail(SWGPU_EINVAL, "SWGPU_LONG_ROWS=%s: three of 16, 8 or 4, e.g. 16,4,4", env);
    C->host_budget = o->max_host_memory ? o->max_host_memory : DEFAULT_BUDGET;
    C->dev_budget = o->max_device_memory ? o->max_device_memory : DEFAULT_BUDGET;
    return SWGPU_OK;
}

static int check_opts(const swgpu_long_opts_t *o)
{
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
    return SWGPU_OK;
}

/* The backend asked for (SWGPU_BACKEND applied to auto): 1 for the
 * reference, 0 for the engines (C->use_gpu set for CUDA's), < 0 on error. */
static int pick_backend(swgpu__la_t *C, swgpu_backend_t b)
{
    int rc;
    if ((rc = swgpu__env_backend(&b)))
        return rc;
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

/* Passes split across parts (o->comm; the engine: split_engine) or the
 * backend: as pick_backend. */
static int pick_engine(swgpu__la_t *C)
{
    const swgpu_long_opts_t *o = C->o;
    if (o->comm && o->comm->size > 1) {
        /* split across parts (the reference computes alone) */
        if (o->comm->size > SWGPU__LONG_MAX_PARTS || o->comm->rank < 0 || o->comm->rank >= o->comm->size ||
            !o->comm->send || !o->comm->recv || !o->comm->allgather)
            return swgpu__fail(SWGPU_EINVAL, "long alignment: invalid transport (part %d of %d)",
                               o->comm->rank, o->comm->size);
        C->comm = o->backend == SWGPU_BACKEND_REF ? NULL : o->comm;
    }
    return C->comm ? 0 : pick_backend(C, o->backend);
}

/* The engine of passes split across parts, the same on every part (their
 * orchestration depends on it: the CPU's pre-pass, rows per lane): CUDA
 * when every part asks for it or for auto and has a device, else the CPU
 * (auto); a part asking for cuda without a device fails (the others with
 * SWGPU_EPART).  The first collective of a split alignment. */
#define SPLIT_GPU 1  /* wants the GPU and has one */
#define SPLIT_NEED 2 /* backend cuda: must have one */
static int split_engine(swgpu__la_t *C)
{
    const swgpu_comm_t *cm = C->comm;
    swgpu_backend_t b = C->o->backend;
    int32_t mine = 0;
    char *all = NULL;
    size_t off[SWGPU__LONG_MAX_PARTS + 1];
    int rc = swgpu__env_backend(&b), have = 0, need = 0, lack = -1;
    if (!rc && b == SWGPU_BACKEND_CUDA)
        mine |= SPLIT_NEED;
#ifdef SWGPU_HAVE_CUDA
    if (!rc && (b == SWGPU_BACKEND_CUDA || b == SWGPU_BACKEND_AUTO) && swgpu__lgpu_available())
        mine |= SPLIT_GPU;
#endif
    if ((rc = swgpu__lsplit_gather(cm, rc, &mine, sizeof mine, &all, off))) {
        C->dead = 1; /* every part failed here (or met a part failed before it) */
        return rc;
    }
    have = 1;
    for (int p = 0; p < cm->size; p++) {
        int32_t v;
        memcpy(&v, all + off[p], sizeof v);
        need |= (v & SPLIT_NEED) != 0;
        if (!(v & SPLIT_GPU)) {
            have = 0;
            lack = lack < 0 ? p : lack;
        }
    }
    free(all);
    if (need && !have) {
        if ((mine & SPLIT_NEED) && !(mine & SPLIT_GPU))
#ifdef SWGPU_HAVE_CUDA
            return swgpu__fail(SWGPU_ENODEV, "backend cuda: no usable CUDA device (part %d of %d)", cm->rank,
                               cm->size);
#else
            return swgpu__fail(SWGPU_ENODEV, "backend cuda: this build has no CUDA support (part %d of %d)",
                               cm->rank, cm->size);
#endif
        return swgpu__fail(SWGPU_EPART, "long alignment: backend cuda was asked for, but part %d of %d does "
                           "not run on a GPU (no usable device, or another backend): split passes run on "
                           "the CUDA engine on every part or on none", lack, cm->size);
    }
    C->use_gpu = have;
    C->st->backend = have ? "cuda" : "cpu";
    return SWGPU_OK;
}

/* The reference backend: the whole alignment in one call (swgpu_align). */
static int align_ref(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen, const swgpu_matrix_t *m,
                     const swgpu_long_opts_t *o, swgpu_aln_t *out, swgpu_long_stats_t *st)
{
    double t;
    int rc;
    if (o->checkpoint && *o->checkpoint)
        return swgpu__fail(SWGPU_EINVAL, "long alignment: checkpoints (%s) are not supported with the ref "
                           "backend (use backend cpu or cuda)", o->checkpoint);
    t = swgpu__now();
    rc = swgpu_align(a, alen, b, blen, m, o->gap_open, o->gap_extend, o->score_only, out);
    st->score_seconds = st->total_seconds = swgpu__now() - t;
    st->cells = st->score_cells;
    st->score_gcups = st->score_seconds > 0 ? (double)st->score_cells / st->score_seconds / 1e9 : 0;
    return rc;
}

/* The engines' scoring, wide (long.h: Wide scores) when the values may
 * pass 32 bits. */
static int setup_scoring(swgpu__la_t *C, const swgpu_matrix_t *m)
{
    const swgpu_long_opts_t *o = C->o;
    const size_t alen = (size_t)C->alen, blen = (size_t)C->blen;
    int64_t maxabs;
    swgpu__long_scoring(&C->sc, m, o->gap_open, o->gap_extend);
    /* values within +-2^29 (every vertex of the matrix): 32 bits as they
     * are; beyond, 32-bit values relative to 64-bit bases per block
     * (long.h: wide scores), on either engine */
    maxabs = imax64(imax64(C->sc.smax, -(int64_t)m->min), (int64_t)o->gap_open + o->gap_extend);
    if (alen > (size_t)INT32_MAX || blen > (size_t)INT32_MAX)
        return swgpu__fail(SWGPU_ERANGE, "long alignment: sequences of %zu and %zu residues: at most "
                           "2^31 - 1 = %d each", alen, blen, INT32_MAX);
    if ((int64_t)(alen + blen) * maxabs >= ((int64_t)1 << 29)) {
        /* (SH + CHUNK + 2) * K + open + ext < 2^28 (long.h) */
        const int64_t K = (int64_t)(C->sc.smax > 0 ? C->sc.smax : 0) + o->gap_open + o->gap_extend,
                      KMAX = (((int64_t)1 << 28) - 1) / (SH + SWGPU__LONG_CHUNK + 3);
        if (K > KMAX)
            return swgpu__fail(SWGPU_ERANGE, "long alignment: sequences of %zu and %zu residues need scores "
                               "beyond 32 bits, for which the largest score plus the gap costs (%lld) must "
                               "keep below %lld", alen, blen, (long long)K, (long long)KMAX + 1);
        C->sc.wide = 1;
    }
    return SWGPU_OK;
}

/* The four sequences the engines read (a, b, reversed a, reversed b), each
 * followed by PAD sentinel codes. */
static int setup_seqs(swgpu__la_t *C)
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

/* The CUDA engine on the devices asked for (C->use_gpu only). */
static int open_gpus(swgpu__la_t *C)
{
#ifdef SWGPU_HAVE_CUDA
    const swgpu_long_opts_t *o = C->o;
    int ndev, use, devs[SWGPU__LONG_MAX_PARTS], rc;
    if (!C->use_gpu)
        return SWGPU_OK;
    ndev = swgpu__lgpu_devices();
    use = o->gpus > 0 && o->gpus < ndev ? o->gpus : ndev;
    if (C->comm)
        use = ndev > 0 ? 1 : 0; /* a part of a split pass: its first device (one GPU a rank) */
    if (use < 1)
        return swgpu__fail(SWGPU_ENODEV, "backend cuda: no usable CUDA device");
    if (use > SWGPU__LONG_MAX_PARTS)
        use = SWGPU__LONG_MAX_PARTS;
    for (int p = 0; p < use; p++)
        devs[p] = p;
    if ((rc = swgpu__lgpu_create(&C->q, &C->sc, devs, use, C->comm ? 0 : o->gpu_parts, &C->gpu)))
        return rc;
    if (C->comm)
        swgpu__lgpu_split_part(C->gpu);
    C->st->gpus = use;
    if (o->gpu_parts > 0)
        swgpu__log(SWGPU_LOG_DEBUG, "long alignment: %d GPU%s, passes over few regions cut into %d "
                   "column slices", use, use == 1 ? "" : "s", o->gpu_parts);
    else if (use == 1)
        swgpu__log(SWGPU_LOG_DEBUG, "long alignment: 1 GPU, no column slices");
    else
        swgpu__log(SWGPU_LOG_DEBUG, "long alignment: %d GPUs, passes over few regions cut into "
                   "up to %d column slices per GPU", use, SWGPU__LGPU_AUTO_SLICES);
#else
    (void)C;
#endif
    return SWGPU_OK;
}

/* ------------------------------------------------------ phase 1: score */

/*
 * The forward score pass over the whole matrix, pruned (long.h).  A block
 * is skipped when it cannot reach the best score found so far, so the
 * sooner a high score is known, the more is skipped.  The seed chain
 * (seed.c) finds one first, on every backend: the score of an alignment
 * joined from exact matches.  When that is weak (below X, a strip's worth
 * of score and a gap of G columns), the CPU runs a cheap pre-pass: the
 * same pass with an X-drop rule as well (a block whose inputs lie more
 * than X below the best so far is skipped) and a cap on the cells it
 * computes, which follows the strongest alignment it meets in a band a
 * few thousand columns wide.  Either is the score of a real alignment, so
 * a lower bound of the final best: the exact pass starts with the larger
 * as prune_best.  Blocks skipped because of it still cannot reach the
 * final best, so the result is the same as without it; only the share of
 * pruned cells grows (to 95-99 % on pairs of related genomes, where the
 * exact pass then computes little more than a band around the optimal
 * path and the corner from which the score can still be reached).
 */

/* The seed chain's bound as g's prune_best (unless the checkpoint is past
 * it, or SWGPU_LONG_SEED=0 for measurements); *seed: the bound, 0 if none. */
static int seed_bound(swgpu__la_t *C, swgpu__lreg_t *g, int64_t *seed)
{
    const char *env = getenv("SWGPU_LONG_SEED"); /* 0: no seed bound (measurements) */
    uint64_t bytes = 0;
    double t;
    int rc;
    *seed = 0;
    if (!g->prune || C->ck_in.phase >= SWGPU__CK_SCORE || (env && !strcmp(env, "0")))
        return SWGPU_OK;
    t = swgpu__now();
    if ((rc = swgpu__long_seed_bound(C->a, C->alen, C->b, C->blen, &C->sc, seed, &bytes)))
        return rc;
    swgpu__la_host_use(C, bytes);
    C->st->seed_bound = *seed;
    swgpu__log(SWGPU_LOG_DEBUG, "long alignment: seed chain bound %lld (%.3f s)", (long long)*seed,
               swgpu__now() - t);
    g->prune_best = *seed;
    return SWGPU_OK;
}

/* The pre-pass, from no bound (its X-drop rule is relative to its best):
 * g's prune_best becomes the larger of its best and the seed's. */
static int prepass(swgpu__la_t *C, swgpu__lreg_t *g, int64_t seed, int64_t X, int64_t smax)
{
    swgpu__lreg_t x = *g;
    /* The cap: a 32nd of the cells, and what the pre-pass needs on a
     * collinear pair: the rows until the path's score passes X, then a
     * band of about 2X/ext columns; never more than a quarter of the
     * cells */
    const uint64_t cells = (uint64_t)C->alen * (uint64_t)C->blen;
    const uint64_t cap = cells / 32 + (uint64_t)(X / (smax ? smax : 1) + 2 * SH) * (uint64_t)C->blen +
                         (uint64_t)C->alen * (uint64_t)(2 * X / (C->sc.ext ? C->sc.ext : 1) + 2 * SH);
    int rc;
    swgpu__la_phase_begin(C, "prepass", cells, 0);
    x.prune_best = 0;
    x.xdrop = X;
    x.max_cells = cap < cells / 4 ? cap : cells / 4 + 1;
    C->ck_out.phase = SWGPU__CK_PREPASS;
    if ((rc = swgpu__la_run_ck(C, &x, 1, 1, swgpu__la_ck_resume(C, SWGPU__CK_PREPASS), 1)))
        return rc;
    /* the cells the pre-pass skipped are not pruned ones: only its
     * computed cells count */
    C->st->cells_pruned -= C->last_pruned;
    g->prune_best = x.best > seed ? x.best : seed;
    swgpu__log(SWGPU_LOG_DEBUG, "long alignment: the pre-pass found a score of %lld (X-drop %lld)",
               (long long)x.best, (long long)x.xdrop);
    swgpu__la_phase_end(C);
    return SWGPU_OK;
}

static int score_pass(swgpu__la_t *C, swgpu__lreg_t *g)
{
    int rc;
    int64_t seed;
    if ((rc = seed_bound(C, g, &seed)))
        return rc;
    /* X: a strip's worth of score (the pipeline's lag) and a gap of G
     * columns (indels the band bridges) */
    const int64_t G0 = imin64(C->alen, C->blen) / 256, G = G0 < 64 ? 64 : G0 > 8192 ? 8192 : G0;
    const int64_t smax = C->sc.smax > 0 ? C->sc.smax : 0, X = SH * smax + C->sc.open + G * C->sc.ext;
    if (g->prune && C->ck_in.phase >= SWGPU__CK_SCORE)
        g->prune_best = C->ck_in.prune_best; /* the seed chain (and the pre-pass) was done */
    else if (g->prune && !C->use_gpu && seed < X && (rc = prepass(C, g, seed, X, smax)))
        return rc; /* the seed chain found no strong alignment: the pre-pass looks for one */
    swgpu__la_phase_begin(C, "score", (uint64_t)C->alen * (uint64_t)C->blen, 0);
    C->ck_out.phase = SWGPU__CK_SCORE;
    C->ck_out.prune_best = g->prune_best;
    if ((rc = swgpu__la_ck_between(C, NULL)))
        return rc;
    return swgpu__la_run_ck(C, g, 1, 1, swgpu__la_ck_resume(C, SWGPU__CK_SCORE), 1);
}

/* Phase 1: the best score S and its end (ie, je), from the score pass or
 * from the checkpoint when it is past it; S <= 0: no alignment. */
static int phase_score(swgpu__la_t *C, found_t *F, swgpu_aln_t *out)
{
    swgpu_long_stats_t *st = C->st;
    const double t = swgpu__now();
    swgpu__lreg_t g;
    int rc;
    memset(&g, 0, sizeof g);
    g.h = C->alen;
    g.w = C->blen;
    g.rseq = SWGPU__LSEQ_A;
    g.cseq = SWGPU__LSEQ_B;
    g.local = 1;
    g.track = 1;
    g.prune = C->o->prune;
    if (C->ck_in.phase >= SWGPU__CK_REVERSE) { /* done before the checkpoint */
        swgpu__la_phase_begin(C, "score", st->score_cells, 0);
        g.best = C->ck_in.S;
        g.bi = C->ck_in.ie;
        g.bj = C->ck_in.je;
    } else if ((rc = score_pass(C, &g)))
        return rc;
    st->score_pruned = C->last_pruned;
    swgpu__la_phase_end(C);
    st->score_seconds = swgpu__now() - t;
    st->resumed = C->ck_in.phase;
    /* a rate only for a score pass run whole here (a resumed one's time is part) */
    st->score_gcups = st->score_seconds > 0 && C->ck_in.phase < SWGPU__CK_SCORE
                          ? (double)st->score_cells / st->score_seconds / 1e9 : 0;
    F->S = g.best;
    if (C->ck_in.phase >= SWGPU__CK_SCORE && C->ck_in.prune_best > F->S)
        /* the pruning score is a real alignment's: never above the best */
        return swgpu__fail(SWGPU_EFORMAT, "checkpoint %s does not fit this alignment: its pruning score %lld is "
                           "above the best score %lld: remove it to start afresh", C->ck_path,
                           (long long)C->ck_in.prune_best, (long long)F->S);
    if (F->S <= 0)
        return SWGPU_OK;
    F->ie = g.bi;
    F->je = g.bj;
    out->score = F->S;
    out->qend = F->ie;
    out->tend = F->je;
    C->ck_out.phase = SWGPU__CK_REVERSE;
    C->ck_out.S = F->S;
    C->ck_out.ie = F->ie;
    C->ck_out.je = F->je;
    return swgpu__la_ck_between(C, NULL);
}

/* ---------------------------------------------------- phase 2: reverse */

/* The reverse pass's region from the end (ie, je), local and tracking its
 * best, saving rows ie - k*L1 (none for a score only) into new buffers. */
static int reverse_setup(swgpu__la_t *C, found_t *F)
{
    swgpu__lreg_t *g = &F->g;
    const uint64_t rowb = (uint64_t)(F->je + 1) * 8;
    F->L1 = swgpu__la_rev_spacing(C, F->ie, F->je);
    memset(g, 0, sizeof *g);
    g->h = F->ie;
    g->w = F->je;
    g->rseq = SWGPU__LSEQ_RA;
    g->cseq = SWGPU__LSEQ_RB;
    g->roff = C->alen - F->ie;
    g->coff = C->blen - F->je;
    g->local = 1;
    g->track = 1;
    g->prune = C->o->prune;
    g->prune_best = F->S;
    g->save_every = C->o->score_only ? 0 : F->L1;
    /* rows kept on the GPU leave the host buffer unwritten: its pages cost nothing */
    g->saved_keep = swgpu__la_rows_stay_on_gpu(C);
    if (swgpu__lreg_nsaved(g) > 0) {
        F->saved = malloc((size_t)swgpu__lreg_nsaved(g) * (size_t)rowb);
        if (C->sc.wide)
            F->saved_base = malloc((size_t)swgpu__la_base_bytes(C, swgpu__lreg_nsaved(g), F->je));
        if (!F->saved || (C->sc.wide && !F->saved_base))
            return swgpu__fail(SWGPU_ENOMEM, "long alignment: out of memory for %lld saved rows",
                               (long long)swgpu__lreg_nsaved(g));
    }
    g->saved = F->saved;
    g->saved_base = F->saved_base;
    return SWGPU_OK;
}

/* The checkpoint's rows (all of them, or the strips done) into the reverse
 * pass's buffers. */
static int reverse_restore(swgpu__la_t *C, found_t *F)
{
    const uint64_t rowb = (uint64_t)(F->je + 1) * 8;
    const int64_t nr = C->ck_in.phase == SWGPU__CK_TRACE ? swgpu__lreg_nsaved(&F->g)
                                                          : swgpu__lck_rows(&F->g, C->ck_in.st.next);
    /* (checked when read: batch.c's ck_check) */
    if (C->ck_in.w != F->je || C->ck_in.nrows != nr || (nr > 0 && !F->saved))
        return swgpu__fail(SWGPU_EFORMAT, "checkpoint %s does not fit this alignment: remove it to "
                           "start afresh", C->ck_path);
    if (nr > 0) {
        memcpy(F->saved, C->ck_in.saved, (size_t)nr * (size_t)rowb);
        if (C->sc.wide)
            memcpy(F->saved_base, C->ck_in.saved_base, (size_t)swgpu__la_base_bytes(C, nr, F->je));
    }
    return SWGPU_OK;
}

/* Phase 2: the begin (ib, jb), from the reverse pass (or the checkpoint
 * when it is past it), which saves the rows the traceback splits at. */
static int phase_reverse(swgpu__la_t *C, found_t *F, swgpu_aln_t *out)
{
    swgpu__lreg_t *g = &F->g;
    const double t = swgpu__now();
    int rc;
    if ((rc = reverse_setup(C, F)))
        return rc;
    swgpu__la_phase_begin(C, "reverse", (uint64_t)F->ie * (uint64_t)F->je, 0);
    if ((C->ck_in.phase == SWGPU__CK_TRACE || swgpu__la_ck_resume(C, SWGPU__CK_REVERSE)) &&
        (rc = reverse_restore(C, F)))
        return rc;
    if (C->ck_in.phase == SWGPU__CK_TRACE) {
        g->best = F->S;
        g->bi = F->ie - C->ck_in.ib;
        g->bj = F->je - C->ck_in.jb;
    } else if ((rc = swgpu__la_run_ck(C, g, 1, 1, swgpu__la_ck_resume(C, SWGPU__CK_REVERSE), 1)))
        return rc;
    swgpu__la_phase_end(C);
    if (g->saved_kept) {
        free(F->saved);
        F->saved = NULL;
    } else if (F->saved) {
        swgpu__la_host_use(C, (uint64_t)swgpu__lreg_nsaved(g) * (uint64_t)(F->je + 1) * 8 +
                              swgpu__la_base_bytes(C, swgpu__lreg_nsaved(g), F->je));
    }
    if (g->best != F->S) {
        if (C->ck_in.phase)
            return swgpu__fail(SWGPU_EFORMAT, "checkpoint %s does not fit this alignment: the reverse pass "
                               "scores %lld, the checkpoint's forward pass %lld: remove it to start afresh",
                               C->ck_path, (long long)g->best, (long long)F->S);
        return swgpu__fail(SWGPU_EINVAL, "long alignment: internal error: reverse pass scores %lld, "
                           "forward %lld", (long long)g->best, (long long)F->S);
    }
    F->ib = F->ie - g->bi;
    F->jb = F->je - g->bj;
    out->qbeg = F->ib;
    out->tbeg = F->jb;
    C->ck_out.phase = SWGPU__CK_TRACE;
    C->ck_out.ib = F->ib;
    C->ck_out.jb = F->jb;
    if (!C->o->score_only && (rc = swgpu__la_ck_between(C, g)))
        return rc;
    C->st->reverse_seconds = swgpu__now() - t;
    return SWGPU_OK;
}

/* ------------------------------------------ phase 3: traceback, output */

/* Phase 3: the optimal path from (ib, jb) to (ie, je) cut into pieces small
 * enough for a full matrix (walk.c), each traced back (basetrace.c): its
 * CIGAR in F->cig. */
static int phase_traceback(swgpu__la_t *C, found_t *F)
{
    const swgpu__la_piece_t top = { F->ib, F->jb, F->ie, F->je, SWGPU__LA_H, SWGPU__LA_H, F->S };
    int rc;
    F->t = swgpu__now();
    rc = swgpu__la_walk_top(C, &top, F->L1, F->saved, F->saved_base, F->g.saved_kept, &F->list);
    free(F->saved);
    free(F->saved_base);
    F->saved = NULL;
    F->saved_base = NULL;
#ifdef SWGPU_HAVE_CUDA
    if (F->g.saved_kept)
        swgpu__lgpu_saved_drop(C->gpu);
#endif
    if (rc || (rc = swgpu__la_refine(C, &F->list)))
        return rc;
    C->st->subproblems = F->list.n;
    if ((rc = swgpu__la_trace(C, &F->list, &F->cig)))
        return rc;
    swgpu__la_phase_end(C);
    return SWGPU_OK;
}

/* The CIGAR into out, which must rescore to S. */
static int phase_output(swgpu__la_t *C, found_t *F, swgpu_aln_t *out)
{
    int64_t score;
    int rc;
    if ((rc = swgpu__la_aln_store(C, &F->cig, out, &score)))
        return rc;
    if (score != F->S) {
        if (C->ck_in.phase)
            return swgpu__fail(SWGPU_EFORMAT, "checkpoint %s does not fit this alignment: the alignment "
                               "traced from it does not score %lld: remove it to start afresh", C->ck_path,
                               (long long)F->S);
        return swgpu__fail(SWGPU_EINVAL, "long alignment: internal error: the CIGAR does not rescore to "
                           "%lld", (long long)F->S);
    }
    C->st->traceback_seconds = swgpu__now() - F->t;
    return SWGPU_OK;
}

/* -------------------------------------------------------------- driver */

/* Everything from the sequences on; the driver frees what it leaves. */
static int run_phases(swgpu__la_t *C, found_t *F, uint64_t cap, swgpu_aln_t *out)
{
    int rc;
    if ((C->comm && (rc = split_engine(C))) || (rc = setup_seqs(C)) || (rc = swgpu__la_ck_open(C, cap)) ||
        (rc = open_gpus(C)))
        return rc;
    if ((rc = phase_score(C, F, out)) || F->S <= 0)
        return rc;
    if ((rc = phase_reverse(C, F, out)) || C->o->score_only)
        return rc;
    if ((rc = phase_traceback(C, F)))
        return rc;
    return phase_output(C, F, out);
}

/* The end of an alignment that ran its phases, whatever rc: the checkpoint
 * removed when done, the parts agreeing, everything freed, the stats. */
static int finish(swgpu__la_t *C, found_t *F, int rc, swgpu_aln_t *out)
{
    swgpu_long_stats_t *st = C->st;
    if (rc == SWGPU_OK && C->ck_path)
        remove(C->ck_path); /* done: the checkpoint is no longer needed */
    swgpu__ck_free(&C->ck_in);
    /* the last checkpoint of a split alignment: a part that failed on its
     * own meets the others here, or at their next one */
    if (C->comm && !C->dead)
        rc = swgpu__lsplit_agree(C->comm, rc);
    free(F->saved);
    free(F->saved_base);
    free(F->list.v);
    free(F->cig.v);
#ifdef SWGPU_HAVE_CUDA
    if (C->gpu) {
        st->peak_device_bytes = swgpu__lgpu_peak(C->gpu);
        swgpu__lgpu_destroy(C->gpu);
    }
#endif
    free(C->qbuf);
    st->peak_host_bytes = C->host_peak;
    st->total_seconds = swgpu__now() - C->t0;
    if (rc)
        swgpu__la_aln_clear(out);
    return rc;
}

int swgpu_align_long(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen,
                     const swgpu_matrix_t *m, const swgpu_long_opts_t *o, swgpu_aln_t *out,
                     swgpu_long_stats_t *st)
{
    swgpu_long_opts_t defo;
    swgpu_long_stats_t st0;
    swgpu__la_t C;
    found_t F;
    swgpu__isa_t isa;
    uint64_t cap;
    int rc, isref;

    if (!out || !m || (alen && !a) || (blen && !b))
        return swgpu__fail(SWGPU_EINVAL, "swgpu_align_long: NULL argument");
    if (!o) {
        swgpu_long_opts_init(&defo, m->alphabet);
        o = &defo;
    }
    if ((rc = swgpu__cpu_isa_env(&isa))) /* a bad SWGPU_CPU_ISA is refused before any work */
        return rc;
    if (!st)
        st = &st0;
    memset(st, 0, sizeof *st);
    if ((rc = ctx_init(&C, a, alen, b, blen, o, st)) || (rc = check_opts(o)))
        return rc;
    if ((isref = pick_engine(&C)) < 0)
        return isref;
    st->backend = isref ? "ref" : C.use_gpu ? "cuda" : "cpu";
    st->score_cells = (uint64_t)alen * (uint64_t)blen;
    swgpu__la_aln_clear(out);
    if (isref)
        return align_ref(a, alen, b, blen, m, o, out, st);
    if (alen == 0 || blen == 0) {
        st->total_seconds = swgpu__now() - C.t0;
        return SWGPU_OK;
    }
    if ((rc = setup_scoring(&C, m)) || (rc = swgpu__la_budget(&C, &cap)))
        return rc;
    memset(&F, 0, sizeof F);
    rc = run_phases(&C, &F, cap, out);
    return finish(&C, &F, rc, out);
}
