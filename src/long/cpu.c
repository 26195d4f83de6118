/*
 * long_cpu.c - the CPU engine of the long aligner: computes a batch of
 * regions (see long.h) with a pool of threads.
 *
 * Work is cut into strips of SWGPU__LONG_SH rows, numbered in batch order
 * (region 0's strips first).  Each thread takes the next strip from an
 * atomic ticket and sweeps it left to right in chunks of CHUNK columns with
 * the SIMD strip kernel (simd/strip_template.h: striped 32-bit lanes; the
 * scalar tile below where the CPU has no SIMD kernels).  Strip s reads the
 * bottom row of strip s-1 from a two-slot ring (slot (s-1)&1) and writes
 * its own bottom row into slot s&1; before a chunk it waits until strip s-1
 * has published at least that chunk.  Strip s+2 overwrites slot s&1 only
 * after strip s+1 has published those columns, and strip s+1 keeps the one
 * value of the row above it still needs (the diagonal of its next chunk's
 * first column) in its state; tickets are taken in order, so a strip only
 * ever waits for a strip that a running thread holds: no deadlock.
 *
 * Pruning (long.h): before a chunk, the block's inputs (the strip's left
 * column, the row above the chunk and the corner) bound everything the
 * block leads to: in a local region by smax times the rows or columns
 * left, in an anchored one by the best path to its target vertex
 * (path_ub); a block that cannot reach the threshold is not computed and
 * hands on lower bounds.
 *
 * A region split by columns across processes (w_all > 0, long.h): the
 * strip's left boundary column arrives from the part on the left before
 * the strip starts, and its right boundary column leaves for the part on
 * the right once the strip is done, so the parts work as a pipeline of
 * strips.  A part that cannot set up still passes every boundary on (a
 * message of lower bounds), so that no other part waits forever; it then
 * reports its failure.
 */
#define _POSIX_C_SOURCE 200809L
#include "long/long.h"
#include "long/long.h"
#include "simd/simd.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#define SH SWGPU__LONG_SH
#define NEG SWGPU__LONG_NEG
#define CHUNK SWGPU__LONG_CHUNK /* columns of a block: the pruning and hand-over unit */
#define DROP SWGPU__LONG_DROP
#define INF32 SWGPU__LONG_INF32
#define NEG64 SWGPU__LONG_NEG64

typedef struct {
    int64_t best;
    int64_t bi, bj;
} sbest_t;

/* a worker's buffers: the scalar tile's column, or the SIMD strip state */
typedef struct {
    int32_t *colH, *colE;     /* SH + 1 each: left column, H then E entering */
    int32_t *prof;            /* SIMD: 32 codes x SH rows */
    int32_t *hp, *hc, *e;     /* SIMD: SH each */
    int32_t *tH, *tF;         /* wide scores: the row above a block, rebased (CHUNK each) */
} wbuf_t;

typedef struct {
    const swgpu__lseqs_t *q;
    const swgpu__lscore_t *sc;
    swgpu__lreg_t *regs;
    size_t n;
    const swgpu__sw_kernels_t *k; /* SIMD kernels, or NULL: the scalar tile */
    int64_t *first;          /* n+1: first ticket of each region */
    int32_t **ring;          /* per region: H slot 0, H slot 1, F slot 0, F slot 1, each w+1 */
    uint32_t *codes;         /* per region: the residue codes of its columns (bit mask) */
    uint8_t **low;           /* per region: per ring slot and chunk, 1 if skipped (not stored) */
    int64_t **rbase;         /* wide scores, per region: per ring slot and chunk, the base */
    int64_t *nchunks;        /* per region */
    _Atomic int64_t *progress; /* per ticket: bottom-row columns published */
    sbest_t *sb;             /* per ticket */
    _Atomic int64_t ticket;
    _Atomic uint64_t cells;
    _Atomic uint64_t pruned;
    _Atomic int64_t gbest;   /* best score found so far by pruned local regions */
    _Atomic int running;
    wbuf_t *wb;              /* per worker */
    /* checkpoints: workers park between strips while pause is set */
    _Atomic int pause;
    int parked;
    pthread_mutex_t plock;
    pthread_cond_t pcv;
    int locks;               /* plock and pcv initialised */
    _Atomic int wnext;       /* next worker slot */
    _Atomic int comm_rc;     /* first failed send or receive */
} job_t;

static int force_isa = -1;

void swgpu__long_set_isa(int isa)
{
    force_isa = isa;
}

/* The strip kernels: the best this CPU has, or SWGPU_CPU_ISA's choice
 * (scalar|sse41|avx2|avx512), or the test hook's; NULL: the scalar tile. */
static const swgpu__sw_kernels_t *strip_kernels(void)
{
    int isa = force_isa;
    if (isa < 0) {
        swgpu__isa_t e;
        /* a bad SWGPU_CPU_ISA was refused before the run (swgpu_align_long) */
        isa = swgpu__cpu_isa_env(&e) == SWGPU_OK ? (int)e : (int)swgpu__cpu_isa_best();
    }
    if (isa == SWGPU__ISA_SCALAR || !swgpu__cpu_isa_supported((swgpu__isa_t)isa))
        return NULL;
    return swgpu__cpu_kernels((swgpu__isa_t)isa);
}

static void fill32(int32_t *p, int32_t v, int64_t n)
{
    for (int64_t k = 0; k < n; k++)
        p[k] = v;
}

static inline int32_t max32(int32_t a, int32_t b)
{
    return a > b ? a : b;
}

static inline int64_t min64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

static inline int64_t max64(int64_t a, int64_t b)
{
    return a > b ? a : b;
}

/* Wide scores (long.h): a 64-bit value relative to base B (NEG: minus
 * infinity, or too far below the base to be exact), and back. */
static inline int32_t rel32(int64_t v, int64_t B)
{
    int64_t r = v - B;
    return v <= NEG64 / 2 || r < -DROP ? NEG : (int32_t)r;
}

static inline int64_t abs64(int32_t r, int64_t B)
{
    return r < INF32 ? NEG64 : (int64_t)r + B;
}

/* The base of a block whose inputs reach M at most. */
static inline int64_t pick_base(int64_t M)
{
    return M <= NEG64 / 2 || (M >= -DROP && M <= DROP) ? 0 : M;
}

/* n relative values from base `from` to base `to`, in place. */
static void rebase(int32_t *v, size_t n, int64_t from, int64_t to)
{
    const int64_t d = from - to;
    for (size_t k = 0; k < n; k++) {
        int64_t r = (int64_t)v[k] + d;
        v[k] = v[k] < INF32 || r < -DROP ? NEG : (int32_t)r;
    }
}

/* The largest real value of n relative values, as a 64-bit value. */
static int64_t max_abs(const int32_t *v, size_t n, int64_t B)
{
    int32_t m = NEG;
    for (size_t k = 0; k < n; k++)
        m = max32(m, v[k]);
    return abs64(m, B);
}

/* Better cell under the tie rule (long.h). */
static inline int better(int64_t s, int64_t i, int64_t j, const sbest_t *b)
{
    return swgpu__lbest_better(s, i, j, b->best, b->bi, b->bj);
}

/*
 * The scalar tile (the plain-C form of the SIMD strip kernel): rows
 * top+1..top+rows, columns j0+1..j1.  rowH/rowF hold the row above the
 * tile on entry (vertex row top) and the tile's bottom row on exit;
 * colH[k]/colE[k] the column j0 on entry (colH[0]: the corner H(top, j0);
 * colE[k]: E entering column j0+1) and column j1 on exit (colE: entering
 * j1+1; colH[0] is the caller's).  The floor is 0 (local) or NEG (anchored:
 * a value derived from a minus-infinity boundary stays at or above it and
 * below every real value, as in the SIMD kernel).
 */
static inline __attribute__((always_inline)) void tile(const uint8_t *A, const uint8_t *B,
                                                       const swgpu__lscore_t *sc, int64_t top,
                                                       int rows, int64_t j0, int64_t j1,
                                                       int32_t *rowH, int32_t *rowF,
                                                       int32_t *colH, int32_t *colE,
                                                       const int local, const int track,
                                                       sbest_t *sb)
{
    const int32_t ext = sc->ext, oe = sc->open + sc->ext, floor = local ? 0 : NEG;
    int32_t prevold = colH[0]; /* H(i-1, j0) for the next row, before it was overwritten */
    for (int k = 1; k <= rows; k++) {
        const int64_t i = top + k;
        const int32_t *prow = sc->s[A[i]];
        int32_t diag = prevold; /* H(i-1, j-1) */
        int32_t hl = colH[k];   /* H(i, j-1) */
        int32_t e = colE[k];    /* E(i, j) */
        prevold = hl;
        for (int64_t j = j0 + 1; j <= j1; j++) {
            int32_t hu = rowH[j];                        /* H(i-1, j) */
            int32_t f = max32(rowF[j] - ext, hu - oe);   /* F(i, j) */
            int32_t hh = max32(max32(diag + prow[B[j]], max32(e, f)), floor);
            diag = hu;
            rowH[j] = hh;
            rowF[j] = f;
            hl = hh;
            if (track && hh >= sb->best && better(hh, i, j, sb)) {
                sb->best = hh;
                sb->bi = i;
                sb->bj = j;
            }
            e = max32(e - ext, hh - oe);                 /* E(i, j+1) */
        }
        colH[k] = hl;
        colE[k] = e;
    }
}

static void wait_for(_Atomic int64_t *p, int64_t need)
{
    unsigned spins = 0;
    while (atomic_load_explicit(p, memory_order_acquire) < need) {
        if (++spins < 64)
            continue;
        sched_yield();
    }
}

/* message of a strip's boundary column: H of rows 0..rows (row 0: the
 * corner above), then E entering the next column for rows 1..rows, then
 * (wide scores) their base, 64 bits in two int32 */
static size_t edge_bytes(int rows, int wide)
{
    return (size_t)(2 * rows + 1 + (wide ? 2 : 0)) * sizeof(int32_t);
}

static void edge_fail(job_t *J, int rc)
{
    int zero = 0;
    atomic_compare_exchange_strong(&J->comm_rc, &zero, rc);
}

static void edge_recv(job_t *J, const swgpu__lreg_t *g, int64_t s, int rows, int32_t *colH,
                      int32_t *colE, int64_t *base)
{
    int32_t msg[2 * SH + 3];
    const int wide = J->sc->wide;
    int rc = g->comm->recv(g->comm->user, g->edge_left, (int)((g->tag0 + s) % SWGPU__LONG_TAGS),
                           msg, edge_bytes(rows, wide));
    if (rc) {
        edge_fail(J, rc);
        memset(msg, 0, sizeof msg);
    }
    memcpy(colH, msg, (size_t)(rows + 1) * sizeof *msg);
    memcpy(colE + 1, msg + rows + 1, (size_t)rows * sizeof *msg);
    *base = 0;
    if (wide)
        memcpy(base, msg + 2 * rows + 1, sizeof *base);
}

static void edge_send(job_t *J, const swgpu__lreg_t *g, int64_t s, int rows, const int32_t *colH,
                      const int32_t *colE, int64_t base)
{
    int32_t msg[2 * SH + 3];
    const int wide = J->sc->wide;
    memcpy(msg, colH, (size_t)(rows + 1) * sizeof *msg);
    memcpy(msg + rows + 1, colE + 1, (size_t)rows * sizeof *msg);
    if (wide)
        memcpy(msg + 2 * rows + 1, &base, sizeof base);
    int rc = g->comm->send(g->comm->user, g->edge_right, (int)((g->tag0 + s) % SWGPU__LONG_TAGS),
                           msg, edge_bytes(rows, wide));
    if (rc)
        edge_fail(J, rc);
}

/*
 * Upper bound of the best score from any vertex of a block to a region's
 * target vertex (rows dr in [dr_lo, dr_hi], columns dc in [dc_lo, dc_hi]
 * away): min(dr, dc) * smax - |dr - dc| * ext over the box.  -1 flags a
 * block that lies wholly past the target (no path reaches it).
 */
static int64_t box_ub(const swgpu__lscore_t *sc, int64_t dr_lo, int64_t dr_hi, int64_t dc_lo,
                      int64_t dc_hi, int *beyond)
{
    int64_t gap = 0;
    *beyond = dr_hi < 0 || dc_hi < 0;
    if (dr_lo < 0)
        dr_lo = 0;
    if (dc_lo < 0)
        dc_lo = 0;
    if (dr_lo > dc_hi)
        gap = dr_lo - dc_hi;
    else if (dc_lo > dr_hi)
        gap = dc_lo - dr_hi;
    return min64(dr_hi, dc_hi) * (sc->smax > 0 ? sc->smax : 0) - gap * sc->ext;
}

/* Striped index of strip row r (0-based) with S vectors of L lanes. */
static inline size_t sidx(size_t r, size_t S, size_t L)
{
    return (r % S) * L + r / S;
}

/* One strip of do_strip: what its phases share (inlined: the compiler
 * keeps it in registers). */
typedef struct {
    job_t *J;
    swgpu__lreg_t *g;
    const swgpu__lscore_t *sc;
    const swgpu__sw_kernels_t *K;
    const uint8_t *A, *B;            /* A[i]: row i; B[j]: column j */
    int wide, local, track, split, rows;
    int32_t oe, lowH;
    int64_t lowH64, s, t, w, top, bottom, col0, wall;
    int32_t *inH, *inF, *outH, *outF; /* the row above, this strip's bottom row */
    int32_t *colH, *colE;            /* the left column state (the scalar tile's) */
    int32_t *save;                   /* the saved row this strip fills, or NULL */
    int64_t *savebase;               /* and its bases (wide scores) */
    uint8_t *lowin, *lowout;         /* per chunk of the row above / this strip: skipped */
    int64_t *basein, *baseout;       /* wide scores: their chunks' bases */
    size_t S, L;                     /* SIMD: vectors and lanes of the striped column */
    /* carried from block to block */
    int left_low;                    /* the left column state is all lower bounds */
    int64_t Bl;                      /* wide scores: the left column state's base */
    int64_t corner;                  /* H(top, j0) in 64 bits */
    sbest_t sb;
} strip_t;

#define STRIP_INLINE static inline __attribute__((always_inline))

/* The strip's constants, ring slots and saved row (rows.h). */
STRIP_INLINE void strip_begin(strip_t *x, job_t *J, size_t r, int64_t s, int64_t t, wbuf_t *wb)
{
    swgpu__lreg_t *g = &J->regs[r];
    const int64_t nch = J->nchunks[r], w = g->w;
    int32_t *ring = J->ring[r];
    x->J = J;
    x->g = g;
    x->sc = J->sc;
    x->K = J->k;
    x->wide = J->sc->wide;
    x->local = g->local;
    x->track = g->track;
    x->oe = J->sc->open + J->sc->ext;
    x->lowH = x->local ? 0 : NEG;
    x->lowH64 = x->local ? 0 : NEG64;
    x->A = J->q->seq[g->rseq] + g->roff - 1;
    x->B = J->q->seq[g->cseq] + g->coff - 1;
    x->s = s;
    x->t = t;
    x->w = w;
    x->top = s * SH;
    x->rows = (int)(g->h - x->top < SH ? g->h - x->top : SH);
    x->bottom = x->top + x->rows;
    x->split = g->w_all > 0;
    x->col0 = x->split ? g->col0 : 0;
    x->wall = x->split ? g->w_all : w;
    x->inH = ring + (size_t)((s + 1) & 1) * (size_t)(w + 1);
    x->inF = ring + (size_t)(2 + ((s + 1) & 1)) * (size_t)(w + 1);
    x->outH = ring + (size_t)(s & 1) * (size_t)(w + 1);
    x->outF = ring + (size_t)(2 + (s & 1)) * (size_t)(w + 1);
    x->colH = wb->colH;
    x->colE = wb->colE;
    x->lowin = J->low[r] + (size_t)((s + 1) & 1) * (size_t)nch;
    x->lowout = J->low[r] + (size_t)(s & 1) * (size_t)nch;
    x->basein = x->wide ? J->rbase[r] + (size_t)((s + 1) & 1) * (size_t)nch : NULL;
    x->baseout = x->wide ? J->rbase[r] + (size_t)(s & 1) * (size_t)nch : NULL;
    x->S = x->L = 0;
    x->left_low = 0;
    x->Bl = 0;
    x->sb = (sbest_t){ x->local ? 0 : NEG64, 0, 0 };
    const int64_t row = swgpu__lrows_slot(g->h, g->save_every, g->save_last, x->bottom);
    x->save = row >= 0 ? g->saved + (size_t)row * (size_t)(w + 1) * 2 : NULL;
    x->savebase = row >= 0 && x->wide ? g->saved_base + (size_t)row * (size_t)(nch + 1) : NULL;
}

/* The left boundary column (H of rows top..bottom, E entering column 1):
 * the part on the left's last one, or the region's column 0; into the
 * saved row's column 0. */
STRIP_INLINE void left_column(strip_t *x)
{
    const swgpu__lreg_t *g = x->g;
    const swgpu__lscore_t *sc = x->sc;
    const int64_t top = x->top;
    const int local = x->local, rows = x->rows;
    int32_t *colH = x->colH, *colE = x->colE;
    if (x->split && g->edge_left >= 0) {
        /* the part on the left's last column (wide scores: relative to its base) */
        edge_recv(x->J, g, x->s, rows, colH, colE, &x->Bl);
        x->corner = x->wide ? abs64(colH[0], x->Bl) : colH[0];
    } else if (!x->wide) {
        colH[0] = top == 0 ? swgpu__lreg_top(local, g->h0, g->e0, sc->open, sc->ext, 0)
                           : swgpu__lreg_left(local, g->h0, g->f0, sc->open, sc->ext, top);
        for (int k = 1; k <= rows; k++) {
            colH[k] = swgpu__lreg_left(local, g->h0, g->f0, sc->open, sc->ext, top + k);
            colE[k] = max32(NEG - sc->ext, colH[k] - x->oe);
        }
        x->corner = colH[0];
    } else {
        /* column 0 changes by ext a row: its base is its largest value */
        x->corner = swgpu__lreg_top64(local, g->h0, top == 0 ? g->e0 : g->f0, sc->open, sc->ext, top);
        x->Bl = pick_base(swgpu__lreg_top64(local, g->h0, g->f0, sc->open, sc->ext, top + 1));
        for (int k = 1; k <= rows; k++) {
            colH[k] = rel32(swgpu__lreg_top64(local, g->h0, g->f0, sc->open, sc->ext, top + k), x->Bl);
            colE[k] = max32(NEG - sc->ext, colH[k] - x->oe);
        }
    }
    if (x->save) {
        x->save[0] = colH[rows];
        x->save[1] = local ? NEG : colH[rows];
        if (x->split && g->edge_left >= 0)
            x->save[1] = NEG; /* the left part's column: its F is not known here (nor used) */
        if (x->savebase)
            x->savebase[0] = x->Bl;
    }
}

/* SIMD: the strip's profile (the codes of the region's columns) and its
 * striped left column state. */
STRIP_INLINE void simd_begin(strip_t *x, uint32_t codes, wbuf_t *wb, swgpu__strip_t *st)
{
    const size_t L = (size_t)x->K->lanes32, S = (size_t)SH / L;
    const int rows = x->rows;
    x->L = L;
    x->S = S;
    for (int c = 0; c < SWGPU_NCODES; c++) {
        int32_t *pc = wb->prof + (size_t)c * SH;
        if (!(codes >> c & 1))
            continue;
        for (size_t k = 0; k < (size_t)SH; k++)
            pc[sidx(k, S, L)] = (int)k < rows ? x->sc->s[x->A[x->top + 1 + (int64_t)k]][c] : SWGPU__STRIP_PAD;
    }
    for (size_t k = 0; k < (size_t)SH; k++) {
        wb->hp[sidx(k, S, L)] = (int)k < rows ? x->colH[k + 1] : x->lowH;
        wb->e[sidx(k, S, L)] = (int)k < rows ? x->colE[k + 1] : NEG;
    }
    st->prof = wb->prof;
    st->S = S;
    st->hp = wb->hp;
    st->hc = wb->hc;
    st->e = wb->e;
    st->gap_oe = x->oe;
    st->gap_e = x->sc->ext;
    st->last_k = (size_t)(rows - 1) % S;
    st->last_l = (rows - 1) / (int)S;
    st->local = x->local;
    st->track = x->track;
}

/* The row above block c (columns j0+1..j1): the strip above's, once it has
 * published them (*above_low: skipped there, lower bounds not stored), or
 * the region's row 0.  Its base (wide scores) into *Bin. */
STRIP_INLINE void row_above(strip_t *x, int64_t c, int64_t j0, int64_t j1, int *above_low, int64_t *Bin)
{
    const swgpu__lreg_t *g = x->g;
    const swgpu__lscore_t *sc = x->sc;
    *above_low = 0;
    *Bin = 0;
    if (x->s > 0) {
        wait_for(&x->J->progress[x->t - 1], j1);
        *above_low = x->lowin[c];
        if (x->wide && !*above_low)
            *Bin = x->basein[c];
    } else if (!x->wide) {
        for (int64_t j = j0 + 1; j <= j1; j++) {
            x->inH[j] = swgpu__lreg_top(x->local, g->h0, g->e0, sc->open, sc->ext, x->col0 + j);
            x->inF[j] = NEG;
        }
    } else {
        /* row 0 changes by ext a column: its base is its largest value */
        *Bin = pick_base(swgpu__lreg_top64(x->local, g->h0, g->e0, sc->open, sc->ext, x->col0 + j0 + 1));
        for (int64_t j = j0 + 1; j <= j1; j++) {
            x->inH[j] = rel32(swgpu__lreg_top64(x->local, g->h0, g->e0, sc->open, sc->ext, x->col0 + j), *Bin);
            x->inF[j] = NEG;
        }
    }
}

/* The largest H on a block's inputs (the left column, the row above, the
 * corner): it bounds the block, and sets its base. */
STRIP_INLINE int64_t block_max(const strip_t *x, const swgpu__strip_t *st, int above_low, int64_t Bin,
                               const int32_t *topH, int64_t n)
{
    int64_t mx = x->corner;
    if (!x->wide) {
        if (x->g->prune) {
            if (x->left_low)
                mx = max64(mx, x->lowH);
            else if (x->K)
                mx = max64(mx, max_abs(st->hp, SH, 0)); /* padding rows too: at most the real ones */
            else
                mx = max64(mx, max_abs(x->colH + 1, (size_t)x->rows, 0));
            mx = max64(mx, above_low ? x->lowH : max_abs(topH, (size_t)n, 0));
        }
    } else {
        if (x->left_low)
            mx = max64(mx, x->lowH64);
        else
            mx = max64(mx, x->K ? max_abs(st->hp, SH, x->Bl) : max_abs(x->colH + 1, (size_t)x->rows, x->Bl));
        mx = max64(mx, above_low ? x->lowH64 : max_abs(topH, (size_t)n, Bin));
    }
    return mx;
}

/* Pruning (long.h): 1 when the block of columns j0+1..j1, its inputs at
 * most mx, cannot matter. */
STRIP_INLINE int block_skips(const strip_t *x, int64_t mx, int64_t j0, int64_t j1)
{
    const swgpu__lreg_t *g = x->g;
    int64_t bound;
    int beyond = 0;
    if (x->local) {
        int64_t left = min64(g->h - x->top, x->wall - x->col0 - j0);
        bound = max64(mx, 0) + (int64_t)(x->sc->smax > 0 ? x->sc->smax : 0) * left;
    } else {
        bound = mx + box_ub(x->sc, g->prune_i - x->bottom, g->prune_i - x->top, g->prune_j - (x->col0 + j1),
                            g->prune_j - (x->col0 + j0), &beyond);
    }
    const int64_t gb = x->local ? atomic_load_explicit(&x->J->gbest, memory_order_relaxed) : 0;
    return beyond || bound < (x->local ? gb : g->prune_best) || (g->xdrop > 0 && mx + g->xdrop < gb) ||
           (g->max_cells > 0 && atomic_load_explicit(&x->J->cells, memory_order_relaxed) >= g->max_cells);
}

/* A skipped block: its outputs are lower bounds (H lowH, E = F = NEG),
 * flagged instead of stored. */
STRIP_INLINE void skip_block(strip_t *x, swgpu__strip_t *st, int64_t c, int64_t j0, int64_t j1, int above_low,
                             int64_t Bin)
{
    x->lowout[c] = 1;
    if (!x->left_low) {
        if (x->K) {
            fill32(st->hp, x->lowH, SH);
            fill32(st->e, NEG, SH);
        } else {
            fill32(x->colH + 1, x->lowH, x->rows);
            fill32(x->colE + 1, NEG, x->rows);
        }
        x->left_low = 1;
        x->Bl = 0;
    }
    x->corner = above_low ? x->lowH64 : x->wide ? abs64(x->inH[j1], Bin) : x->inH[j1];
    if (x->save) {
        for (int64_t j = j0 + 1; j <= j1; j++) {
            x->save[2 * j] = x->lowH;
            x->save[2 * j + 1] = NEG;
        }
        if (x->savebase)
            x->savebase[1 + c] = 0;
    }
    atomic_store_explicit(&x->J->progress[x->t], j1, memory_order_release);
    atomic_fetch_add_explicit(&x->J->pruned, (uint64_t)x->rows * (uint64_t)(j1 - j0), memory_order_relaxed);
}

/* Wide scores: one base for the block (returned), the left column and the
 * row above (*topH, *topF: then a rebased copy) moved to it. */
STRIP_INLINE int64_t block_base(strip_t *x, swgpu__strip_t *st, wbuf_t *wb, int64_t c, int64_t mx, int64_t n,
                                int64_t Bin, const int32_t **topH, const int32_t **topF)
{
    const int64_t Bk = pick_base(mx);
    if (Bk != x->Bl) {
        if (x->K) {
            rebase(st->hp, SH, x->Bl, Bk);
            rebase(st->e, SH, x->Bl, Bk);
        } else {
            rebase(x->colH + 1, (size_t)x->rows, x->Bl, Bk);
            rebase(x->colE + 1, (size_t)x->rows, x->Bl, Bk);
        }
    }
    if (Bin != Bk) {
        memcpy(wb->tH, *topH, (size_t)n * sizeof **topH);
        memcpy(wb->tF, *topF, (size_t)n * sizeof **topF);
        rebase(wb->tH, (size_t)n, Bin, Bk);
        rebase(wb->tF, (size_t)n, Bin, Bk);
        *topH = wb->tH;
        *topF = wb->tF;
    }
    x->baseout[c] = Bk;
    return Bk;
}

/* A block with the SIMD strip kernel, relative to base Bk. */
STRIP_INLINE void simd_block(strip_t *x, swgpu__strip_t *st, int64_t j0, int64_t n, const int32_t *topH,
                             const int32_t *topF, int64_t Bk)
{
    /* the zero floor of a local block whose base is not 0 goes (long.h) */
    swgpu__pair_best_t pb = { 0, 0, 0 };
    const int64_t pr = x->sb.best - Bk;
    pb.score = x->sb.best <= NEG64 / 2 || pr < NEG ? NEG : pr > (1 << 30) ? (1 << 30) : (int32_t)pr;
    st->local = x->local && Bk == 0;
    st->corner = x->wide ? rel32(x->corner, Bk) : (int32_t)x->corner;
    x->K->strip_cols(st, x->B + 1 + j0, 0, (size_t)n, topH, topF, x->outH + 1 + j0, x->outF + 1 + j0, &pb);
    x->corner = x->wide ? abs64(st->corner, Bk) : st->corner;
    if (x->track && pb.score >= INF32 && (int64_t)pb.score + Bk > x->sb.best) {
        x->sb.best = (int64_t)pb.score + Bk;
        x->sb.bi = x->top + pb.r + 1;
        x->sb.bj = j0 + pb.j + 1;
    }
}

/* A block with the scalar tile (one instance per local and track), relative
 * to base Bk. */
STRIP_INLINE void tile_block(strip_t *x, int64_t j0, int64_t j1, const int32_t *topH, const int32_t *topF,
                             int above_low, int64_t Bin, int64_t Bk)
{
    const swgpu__lscore_t *sc = x->sc;
    const int64_t n = j1 - j0, top = x->top;
    const int rows = x->rows;
    int32_t *outH = x->outH, *outF = x->outF, *colH = x->colH, *colE = x->colE;
    const int64_t cn = above_low ? x->lowH64 : x->wide ? abs64(x->inH[j1], Bin) : x->inH[j1]; /* the next
                          chunk's corner, before the strip below takes the slot */
    const int lf = x->local && Bk == 0;
    memcpy(outH + j0 + 1, topH, (size_t)n * sizeof *outH);
    memcpy(outF + j0 + 1, topF, (size_t)n * sizeof *outF);
    colH[0] = x->wide ? rel32(x->corner, Bk) : (int32_t)x->corner;
    if (x->wide) {
        /* the tile compares with the best in its own frame */
        const int64_t pr = x->sb.best - Bk;
        sbest_t b = { x->sb.best <= NEG64 / 2 || pr < NEG ? NEG : pr > (1 << 30) ? (1 << 30) : pr,
                      x->sb.bi, x->sb.bj };
        tile(x->A, x->B, sc, top, rows, j0, j1, outH, outF, colH, colE, lf, x->track, &b);
        if (x->track && b.best >= INF32 && b.best + Bk > x->sb.best) {
            x->sb.best = b.best + Bk;
            x->sb.bi = b.bi;
            x->sb.bj = b.bj;
        }
    } else if (x->local && x->track)
        tile(x->A, x->B, sc, top, rows, j0, j1, outH, outF, colH, colE, 1, 1, &x->sb);
    else if (x->local)
        tile(x->A, x->B, sc, top, rows, j0, j1, outH, outF, colH, colE, 1, 0, &x->sb);
    else if (x->track)
        tile(x->A, x->B, sc, top, rows, j0, j1, outH, outF, colH, colE, 0, 1, &x->sb);
    else
        tile(x->A, x->B, sc, top, rows, j0, j1, outH, outF, colH, colE, 0, 0, &x->sb);
    x->corner = cn;
}

/* A computed block's outputs: the best handed to the pruning, the saved
 * row's columns, the progress the strip below waits for. */
STRIP_INLINE void block_done(strip_t *x, int64_t c, int64_t j0, int64_t j1, int64_t Bk)
{
    job_t *J = x->J;
    if (x->g->prune && x->track) {
        int64_t cur = atomic_load_explicit(&J->gbest, memory_order_relaxed);
        while (x->sb.best > cur &&
               !atomic_compare_exchange_weak_explicit(&J->gbest, &cur, x->sb.best,
                                                      memory_order_relaxed, memory_order_relaxed))
            ;
    }
    if (x->save) {
        for (int64_t j = j0 + 1; j <= j1; j++) {
            x->save[2 * j] = x->outH[j];
            x->save[2 * j + 1] = x->outF[j];
        }
        if (x->savebase)
            x->savebase[1 + c] = Bk;
    }
    atomic_store_explicit(&J->progress[x->t], j1, memory_order_release);
    atomic_fetch_add_explicit(&J->cells, (uint64_t)x->rows * (uint64_t)(j1 - j0), memory_order_relaxed);
}

/* The strip's end: its right column handed to the part on the right (a
 * split region), its best recorded. */
STRIP_INLINE void strip_end(strip_t *x, const swgpu__strip_t *st)
{
    const int rows = x->rows;
    int32_t *colH = x->colH, *colE = x->colE;
    if (x->K) {
        /* the right column back in row order: H (corner: the row above) and E */
        for (size_t k = 0; k < (size_t)rows; k++) {
            colH[k + 1] = st->hp[sidx(k, x->S, x->L)];
            colE[k + 1] = st->e[sidx(k, x->S, x->L)];
        }
    }
    if (x->split && x->g->edge_right >= 0) {
        /* colH[0]: H(top, col0 + w); wide scores: the column relative to the
         * last block's base (after a skipped block its lower bounds are
         * absolute: they move to the corner's base) */
        int64_t Bm = x->Bl;
        if (x->wide && x->left_low) {
            Bm = pick_base(x->corner);
            rebase(colH + 1, (size_t)rows, 0, Bm);
            rebase(colE + 1, (size_t)rows, 0, Bm);
        }
        colH[0] = x->wide ? rel32(x->corner, Bm) : (int32_t)x->corner;
        edge_send(x->J, x->g, x->s, rows, colH, colE, x->wide ? Bm : 0);
    }
    x->sb.bj += x->col0;
    x->J->sb[x->t] = x->sb;
}

/* Strip s of region r, as ticket t: block after block of CHUNK columns,
 * each computed or skipped (pruning). */
static void do_strip(job_t *J, size_t r, int64_t s, int64_t t, wbuf_t *wb)
{
    strip_t x;
    swgpu__strip_t st;
    strip_begin(&x, J, r, s, t, wb);
    left_column(&x);
    if (x.K)
        simd_begin(&x, J->codes[r], wb, &st);
    for (int64_t j0 = 0, c = 0; j0 < x.w; j0 += CHUNK, c++) {
        const int64_t j1 = j0 + CHUNK < x.w ? j0 + CHUNK : x.w, n = j1 - j0;
        int above_low;
        int64_t Bin, Bk = 0;
        const int32_t *topH = x.inH + j0 + 1, *topF = x.inF + j0 + 1;
        row_above(&x, c, j0, j1, &above_low, &Bin);
        const int64_t mx = block_max(&x, &st, above_low, Bin, topH, n);
        if (x.g->prune && block_skips(&x, mx, j0, j1)) {
            skip_block(&x, &st, c, j0, j1, above_low, Bin);
            continue;
        }
        if (above_low) { /* the row above's lower bounds, stored now */
            fill32(x.inH + j0 + 1, x.lowH, n);
            fill32(x.inF + j0 + 1, NEG, n);
        }
        x.lowout[c] = 0;
        x.left_low = 0;
        if (x.wide)
            Bk = block_base(&x, &st, wb, c, mx, n, Bin, &topH, &topF);
        if (x.K)
            simd_block(&x, &st, j0, n, topH, topF, Bk);
        else
            tile_block(&x, j0, j1, topH, topF, above_low, Bin, Bk);
        x.Bl = Bk;
        block_done(&x, c, j0, j1, Bk);
    }
    strip_end(&x, &st);
}

/* A part that could not set up still passes every boundary column on:
 * lower bounds (H 0, E minus infinity), which cannot raise any score. */
static void drain(swgpu__lreg_t *regs, size_t n, int wide)
{
    int32_t msg[2 * SH + 3];
    for (size_t r = 0; r < n; r++) {
        const swgpu__lreg_t *g = &regs[r];
        if (g->w_all <= 0 || g->h < 1)
            continue;
        for (int64_t s = 0; s * SH < g->h; s++) {
            int rows = (int)(g->h - s * SH < SH ? g->h - s * SH : SH);
            int tag = (int)((g->tag0 + s) % SWGPU__LONG_TAGS);
            if (g->edge_left >= 0)
                g->comm->recv(g->comm->user, g->edge_left, tag, msg, edge_bytes(rows, wide));
            for (int k = 0; k <= rows; k++)
                msg[k] = g->local ? 0 : NEG;
            for (int k = 0; k < rows; k++)
                msg[rows + 1 + k] = NEG;
            msg[2 * rows + 1] = msg[2 * rows + 2] = 0; /* wide scores: base 0 */
            if (g->edge_right >= 0)
                g->comm->send(g->comm->user, g->edge_right, tag, msg, edge_bytes(rows, wide));
        }
    }
}

static void *worker(void *arg)
{
    job_t *J = arg;
    const int64_t total = J->first[J->n];
    wbuf_t *wb = &J->wb[atomic_fetch_add(&J->wnext, 1)];
    for (;;) {
        int64_t t;
        if (atomic_load(&J->pause)) {
            pthread_mutex_lock(&J->plock);
            J->parked++;
            pthread_cond_broadcast(&J->pcv);
            while (atomic_load(&J->pause))
                pthread_cond_wait(&J->pcv, &J->plock);
            J->parked--;
            pthread_mutex_unlock(&J->plock);
            continue;
        }
        t = atomic_fetch_add(&J->ticket, 1);
        size_t lo = 0, hi = J->n - 1;
        if (t >= total)
            break;
        while (lo < hi) { /* last region with first <= t */
            size_t mid = (lo + hi + 1) / 2;
            if (J->first[mid] <= t)
                lo = mid;
            else
                hi = mid - 1;
        }
        do_strip(J, lo, t - J->first[lo], t, wb);
    }
    atomic_fetch_sub(&J->running, 1);
    return NULL;
}

static void wbuf_free(wbuf_t *b)
{
    free(b->colH);
    free(b->prof);
    memset(b, 0, sizeof *b);
}

static int wbuf_alloc(wbuf_t *b, int simd)
{
    memset(b, 0, sizeof *b);
    if (!(b->colH = malloc((2 * (SH + 1) + 2 * CHUNK) * sizeof(int32_t))))
        return -1;
    b->colE = b->colH + SH + 1;
    b->tH = b->colE + SH + 1;
    b->tF = b->tH + CHUNK;
    if (simd) {
        b->prof = aligned_alloc(64, (size_t)(SWGPU_NCODES + 3) * SH * sizeof(int32_t));
        if (!b->prof)
            return -1;
        b->hp = b->prof + (size_t)SWGPU_NCODES * SH;
        b->hc = b->hp + SH;
        b->e = b->hc + SH;
    }
    return 0;
}

/* The pass's state once every worker is parked (checkpoints): strips
 * 0 .. ticket-1 done; 0 when there is nothing to save. */
static int take_state(job_t *J, swgpu__lck_state_t *st)
{
    const swgpu__lreg_t *g = &J->regs[0];
    const int64_t next = atomic_load(&J->ticket), nch = J->nchunks[0], slot = (next - 1) & 1;
    sbest_t b = { NEG64, 0, 0 };
    if (next <= 0 || next >= J->first[1])
        return 0;
    for (int64_t t = 0; t < next; t++)
        if (better(J->sb[t].best, J->sb[t].bi, J->sb[t].bj, &b))
            b = J->sb[t];
    memset(st, 0, sizeof *st);
    st->next = next;
    st->best = b.best;
    st->bi = b.bi;
    st->bj = b.bj;
    st->gbest = atomic_load(&J->gbest);
    st->cells = atomic_load(&J->cells);
    st->pruned = atomic_load(&J->pruned);
    st->rowH = J->ring[0] + (size_t)slot * (size_t)(g->w + 1);
    st->rowF = J->ring[0] + (size_t)(2 + slot) * (size_t)(g->w + 1);
    st->low = J->low[0] + (size_t)slot * (size_t)nch;
    st->base = J->sc->wide ? J->rbase[0] + (size_t)slot * (size_t)nch : NULL;
    return 1;
}

/* Start from a checkpoint's state (one region). */
static void put_state(job_t *J, const swgpu__lck_state_t *st)
{
    const swgpu__lreg_t *g = &J->regs[0];
    const int64_t next = st->next, nch = J->nchunks[0], slot = (next - 1) & 1;
    atomic_store(&J->ticket, next);
    for (int64_t t = 0; t < next; t++) {
        atomic_store(&J->progress[t], g->w);
        J->sb[t].best = NEG64;
        J->sb[t].bi = J->sb[t].bj = 0;
    }
    J->sb[next - 1].best = st->best;
    J->sb[next - 1].bi = st->bi;
    J->sb[next - 1].bj = st->bj;
    if (st->gbest > atomic_load(&J->gbest))
        atomic_store(&J->gbest, st->gbest);
    atomic_store(&J->cells, st->cells);
    atomic_store(&J->pruned, st->pruned);
    memcpy(J->ring[0] + (size_t)slot * (size_t)(g->w + 1), st->rowH, (size_t)(g->w + 1) * sizeof(int32_t));
    memcpy(J->ring[0] + (size_t)(2 + slot) * (size_t)(g->w + 1), st->rowF, (size_t)(g->w + 1) * sizeof(int32_t));
    memcpy(J->low[0] + (size_t)slot * (size_t)nch, st->low, (size_t)nch);
    if (J->sc->wide && st->base)
        memcpy(J->rbase[0] + (size_t)slot * (size_t)nch, st->base, (size_t)nch * sizeof(int64_t));
}

/* Park every worker still running, save, let them go on. */
static int checkpoint(job_t *J, const swgpu__lck_t *ck)
{
    swgpu__lck_state_t st;
    int rc = 0;
    atomic_store(&J->pause, 1);
    pthread_mutex_lock(&J->plock);
    while (J->parked < atomic_load(&J->running)) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 1000000;
        if (ts.tv_nsec >= 1000000000) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000;
        }
        pthread_cond_timedwait(&J->pcv, &J->plock, &ts);
    }
    if (take_state(J, &st))
        rc = ck->save(ck->user, &J->regs[0], &st);
    atomic_store(&J->pause, 0);
    pthread_cond_broadcast(&J->pcv);
    pthread_mutex_unlock(&J->plock);
    return rc;
}

int swgpu__lcpu_run(const swgpu__lseqs_t *q, const swgpu__lscore_t *sc, swgpu__lreg_t *regs,
                    size_t n, int threads, const swgpu__lprog_t *prog, uint64_t *bytes_used,
                    uint64_t *pruned, const swgpu__lck_t *ck)
{
    job_t J;
    pthread_t *tid = NULL;
    int nt = 0, rc = SWGPU_OK, ran = 0;
    int64_t total;
    uint64_t bytes = 0;

    if (n == 0)
        return SWGPU_OK;
    memset(&J, 0, sizeof J);
    J.q = q;
    J.sc = sc;
    J.regs = regs;
    J.n = n;
    J.k = strip_kernels();
    J.first = malloc((n + 1) * sizeof *J.first);
    J.ring = calloc(n, sizeof *J.ring);
    J.codes = calloc(n, sizeof *J.codes);
    J.low = calloc(n, sizeof *J.low);
    J.nchunks = calloc(n, sizeof *J.nchunks);
    J.rbase = calloc(n, sizeof *J.rbase);
    if (!J.first || !J.ring || !J.codes || !J.low || !J.nchunks || !J.rbase) {
        rc = swgpu__fail(SWGPU_ENOMEM, "long alignment: out of memory for %zu regions", n);
        goto fail;
    }
    J.first[0] = 0;
    for (size_t r = 0; r < n; r++) {
        const uint8_t *B;
        if (regs[r].h < 1 || regs[r].w < 1) {
            rc = swgpu__fail(SWGPU_EINVAL, "long alignment: empty region %zu", r);
            goto fail;
        }
        J.first[r + 1] = J.first[r] + (regs[r].h + SH - 1) / SH;
        J.ring[r] = malloc((size_t)4 * (size_t)(regs[r].w + 1) * sizeof(int32_t));
        if (!J.ring[r]) {
            rc = swgpu__fail(SWGPU_ENOMEM, "long alignment: out of memory for a %lld-column region",
                             (long long)regs[r].w);
            goto fail;
        }
        bytes += (uint64_t)4 * (uint64_t)(regs[r].w + 1) * sizeof(int32_t);
        J.nchunks[r] = (regs[r].w + CHUNK - 1) / CHUNK;
        if (!(J.low[r] = calloc(2 * (size_t)J.nchunks[r], 1))) {
            rc = swgpu__fail(SWGPU_ENOMEM, "long alignment: out of memory for a %lld-column region",
                             (long long)regs[r].w);
            goto fail;
        }
        bytes += 2 * (uint64_t)J.nchunks[r];
        if (sc->wide) {
            if ((regs[r].saved && !regs[r].saved_base) ||
                (regs[r].w_all > 0 && regs[r].col0 % CHUNK != 0)) {
                rc = swgpu__fail(SWGPU_EINVAL, "long alignment: wide scores without saved bases, or "
                                 "in a split region's part that does not start at a multiple of %d "
                                 "columns", CHUNK);
                goto fail;
            }
            if (!(J.rbase[r] = calloc(2 * (size_t)J.nchunks[r], sizeof **J.rbase))) {
                rc = swgpu__fail(SWGPU_ENOMEM, "long alignment: out of memory for a %lld-column region",
                                 (long long)regs[r].w);
                goto fail;
            }
            bytes += 16 * (uint64_t)J.nchunks[r];
        }
        B = q->seq[regs[r].cseq] + regs[r].coff;
        for (int64_t j = 0; j < regs[r].w; j++)
            J.codes[r] |= 1u << (B[j] & (SWGPU_NCODES - 1));
    }
    total = J.first[n];
    J.progress = malloc((size_t)total * sizeof *J.progress);
    J.sb = malloc((size_t)total * sizeof *J.sb);
    if (!J.progress || !J.sb) {
        rc = swgpu__fail(SWGPU_ENOMEM, "long alignment: out of memory for %lld strips", (long long)total);
        goto fail;
    }
    bytes += (uint64_t)total * (sizeof *J.progress + sizeof *J.sb);
    for (int64_t t = 0; t < total; t++)
        atomic_init(&J.progress[t], 0);
    atomic_init(&J.ticket, 0);
    atomic_init(&J.cells, 0);
    atomic_init(&J.pruned, 0);
    {
        int64_t b0 = 0;
        for (size_t r = 0; r < n; r++)
            if (regs[r].prune && regs[r].local && regs[r].prune_best > b0)
                b0 = regs[r].prune_best;
        atomic_init(&J.gbest, b0);
    }

    if (threads < 1)
        threads = swgpu__ncores();
    if (threads > total)
        threads = (int)total;
    J.wb = calloc((size_t)threads, sizeof *J.wb);
    if (!J.wb) {
        rc = swgpu__fail(SWGPU_ENOMEM, "long alignment: out of memory for threads");
        goto fail;
    }
    for (int k = 0; k < threads; k++)
        if (wbuf_alloc(&J.wb[k], J.k != NULL)) {
            rc = swgpu__fail(SWGPU_ENOMEM, "long alignment: out of memory for threads");
            goto fail;
        }
    bytes += (uint64_t)threads * ((J.k ? (SWGPU_NCODES + 3) * SH * 4 : 0) + (2 * (SH + 1) + 2 * CHUNK) * 4);
    if (bytes_used)
        *bytes_used = bytes;
    atomic_init(&J.wnext, 0);
    atomic_init(&J.comm_rc, 0);
    atomic_init(&J.pause, 0);
    pthread_mutex_init(&J.plock, NULL);
    pthread_cond_init(&J.pcv, NULL);
    J.locks = 1;
    if (ck && n != 1)
        ck = NULL;
    if (ck && ck->resume && ck->resume->next > 0 && ck->resume->next < total)
        put_state(&J, ck->resume);
    if (!(threads == 1 && !(prog && prog->report) && !(ck && ck->save)) &&
        !(tid = malloc((size_t)threads * sizeof *tid))) {
        rc = swgpu__fail(SWGPU_ENOMEM, "long alignment: out of memory for threads");
        goto fail;
    }
    ran = 1;
    if (!tid) {
        atomic_init(&J.running, 1);
        worker(&J);
    } else {
        atomic_init(&J.running, threads);
        for (nt = 0; nt < threads; nt++)
            if (pthread_create(&tid[nt], NULL, worker, &J) != 0)
                break;
        atomic_fetch_sub(&J.running, threads - nt);
        if (nt == 0) {
            atomic_init(&J.running, 1);
            worker(&J); /* no thread could start: do it here */
        }
        double last = swgpu__now();
        for (int tick = 0; ((prog && prog->report) || (ck && ck->save)) && atomic_load(&J.running) > 0;
             tick++) {
            struct timespec ts = { 0, 10 * 1000 * 1000 };
            nanosleep(&ts, NULL);
            if (tick % 10 == 9 && prog && prog->report) {
                uint64_t pr = atomic_load(&J.pruned);
                prog->report(prog->user, atomic_load(&J.cells) + pr, pr);
            }
            if (ck && ck->save && nt > 0 && swgpu__now() - last >= ck->every) {
                int crc = checkpoint(&J, ck);
                last = swgpu__now();
                if (crc && !rc)
                    rc = crc;
            }
        }
        for (int k = 0; k < nt; k++)
            pthread_join(tid[k], NULL);
    }
    if (rc)
        goto fail;
    if (atomic_load(&J.comm_rc)) {
        rc = swgpu__fail(atomic_load(&J.comm_rc), "long alignment: a boundary column could not "
                         "be sent or received");
        goto fail;
    }
    if (pruned)
        *pruned = atomic_load(&J.pruned);
    for (size_t r = 0; r < n; r++) {
        sbest_t b = { NEG64, 0, 0 };
        if (!regs[r].track)
            continue;
        for (int64_t t = J.first[r]; t < J.first[r + 1]; t++)
            if (better(J.sb[t].best, J.sb[t].bi, J.sb[t].bj, &b))
                b = J.sb[t];
        regs[r].best = b.best;
        regs[r].bi = b.bi;
        regs[r].bj = b.bj;
    }
fail:
    if (rc && !ran)
        drain(regs, n, sc->wide);
    free(tid);
    if (J.wb)
        for (int k = 0; k < threads; k++)
            wbuf_free(&J.wb[k]);
    free(J.wb);
    if (J.ring)
        for (size_t r = 0; r < n; r++)
            free(J.ring[r]);
    free(J.ring);
    if (J.low)
        for (size_t r = 0; r < n; r++)
            free(J.low[r]);
    free(J.low);
    if (J.rbase)
        for (size_t r = 0; r < n; r++)
            free(J.rbase[r]);
    free(J.rbase);
    free(J.nchunks);
    free(J.codes);
    if (J.locks) {
        pthread_mutex_destroy(&J.plock);
        pthread_cond_destroy(&J.pcv);
    }
    free(J.first);
    free(J.progress);
    free(J.sb);
    return rc;
}
