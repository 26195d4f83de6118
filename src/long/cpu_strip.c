/*
 * cpu_strip.c - one strip of the CPU engine (cpu.c): SWGPU__LONG_SH rows of
 * a region swept left to right in blocks of CHUNK columns with the SIMD
 * strip kernel (simd/strip_template.h: striped 32-bit lanes; the scalar
 * tile below where the CPU has no SIMD kernels).  Strip s reads the bottom
 * row of strip s-1 from a two-slot ring (slot (s-1)&1) and writes its own
 * bottom row into slot s&1; before a chunk it waits until strip s-1 has
 * published at least that chunk.  Strip s+2 overwrites slot s&1 only after
 * strip s+1 has published those columns, and strip s+1 keeps the one value
 * of the row above it still needs (the diagonal of its next chunk's first
 * column) in its state.
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
 * message of lower bounds, swgpu__lc_drain), so that no other part waits
 * forever; it then reports its failure.
 */
#include "long/cpu.h"

#include <sched.h>
#include <stdatomic.h>
#include <string.h>

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

/* One strip of swgpu__lc_strip: what its phases share (inlined: the compiler
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
void swgpu__lc_strip(job_t *J, size_t r, int64_t s, int64_t t, wbuf_t *wb)
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
void swgpu__lc_drain(swgpu__lreg_t *regs, size_t n, int wide)
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
