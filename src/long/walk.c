/*
 * walk.c - the traceback of a long alignment, divide and conquer
 * (align_long.c, phase 3): a piece too large for a full matrix is split
 * at rows where the optimal path crosses them, found from a reverse pass
 * anchored at the piece's end that saves every L-th row, and forward passes
 * from crossing to crossing; its children are split again, level by level
 * and in groups whose saved rows fit the budget, until every piece is
 * small enough for basetrace.c.  Also the model of the traceback's cells
 * that its progress reports use.
 */
#include "long/long.h"

#include <string.h>

#define NEG SWGPU__LONG_NEG

static int64_t imin64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

static int64_t imax64(int64_t a, int64_t b)
{
    return a > b ? a : b;
}

int swgpu__la_pieces_push(swgpu__la_pieces_t *v, const swgpu__la_piece_t *s)
{
    if (v->n == v->cap) {
        size_t cap = v->cap ? 2 * v->cap : 64;
        swgpu__la_piece_t *p = realloc(v->v, cap * sizeof *p);
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

/* Anchored start values of a reverse pass from an end state. */
static void end_init(const swgpu__lscore_t *sc, int s, int64_t *h0, int64_t *e0, int64_t *f0)
{
    *h0 = s == SWGPU__LA_H ? 0 : NEG;
    *e0 = s == SWGPU__LA_E ? -sc->open : NEG;
    *f0 = s == SWGPU__LA_F ? -sc->open : NEG;
}

/* ---------------------------------------------------------- splitting */

/*
 * A split in progress, in "view" coordinates: the piece itself, or its
 * transpose (rows = b) when it is wider than tall.  In the view, F is the
 * gap along the rows; transposing swaps E and F.
 */
typedef struct {
    swgpu__la_piece_t u;                /* the piece, forward coordinates */
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
    swgpu__la_pieces_t kids;
} split_t;

static int swap_ef(int s)
{
    return s == SWGPU__LA_E ? SWGPU__LA_F : s == SWGPU__LA_F ? SWGPU__LA_E : s;
}

static void split_view(split_t *p, const swgpu__la_piece_t *u, int tr)
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

/* The reverse pass of a split: anchored at the view end, saving rows every L. */
static void split_rev_region(const swgpu__la_t *C, const split_t *p, swgpu__lreg_t *g)
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
    g->prune_best = p->u.T - (p->vs0 == SWGPU__LA_H ? 0 : C->sc.open);
    g->prune_i = g->h;
    g->prune_j = g->w;
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
static int64_t split_chi(const swgpu__la_t *C, const split_t *p, int64_t r, int64_t Tp)
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
static int split_cmax(swgpu__la_t *C, split_t *p)
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
static void split_fwd_region(const swgpu__la_t *C, const split_t *p, swgpu__lreg_t *g)
{
    memset(g, 0, sizeof *g);
    g->h = p->vi1 - p->k * p->L - p->xr;
    g->w = p->cmax - p->xc;
    g->rseq = p->tr ? SWGPU__LSEQ_B : SWGPU__LSEQ_A;
    g->cseq = p->tr ? SWGPU__LSEQ_A : SWGPU__LSEQ_B;
    g->roff = p->xr;
    g->coff = p->xc;
    g->local = 0;
    swgpu__la_start_init(p->xs, &g->h0, &g->e0, &g->f0);
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
    swgpu__la_piece_t u;
    if (p->tr) {
        u.i0 = p->xc; u.j0 = p->xr; u.i1 = c; u.j1 = r;
        u.s0 = swap_ef(p->xs); u.s1 = swap_ef(s);
    } else {
        u.i0 = p->xr; u.j0 = p->xc; u.i1 = r; u.j1 = c;
        u.s0 = p->xs; u.s1 = s;
    }
    u.T = T;
    return swgpu__la_pieces_push(&p->kids, &u);
}

/* Find the crossing of split row k from the forward row (p->fwd, columns xc..cmax). */
static int split_cross(const swgpu__la_t *C, split_t *p)
{
    const int64_t r = p->vi1 - p->k * p->L, dr = r - p->xr;
    const int64_t Tp = (int64_t)p->u.T - p->acc;
    int rc;
    for (int64_t c = p->xc; c <= p->cmax; c++) {
        const int64_t xh = rev_at(p, p->vj1 - c, 0), xf = rev_at(p, p->vj1 - c, 1);
        int64_t hf, ff;
        if (c == p->xc && p->cmax == p->xc) { /* no pass: the column below the crossing */
            int64_t h0, e0, f0;
            swgpu__la_start_init(p->xs, &h0, &e0, &f0);
            hf = ff = swgpu__lreg_top64(0, h0, f0, C->sc.open, C->sc.ext, dr);
        } else {
            hf = swgpu__lsaved(p->fwd, p->fwd_base, c - p->xc, 0);
            ff = swgpu__lsaved(p->fwd, p->fwd_base, c - p->xc, 1);
        }
        if (hf + xh == Tp || ff + xf + C->sc.open == Tp) {
            int s = hf + xh == Tp ? SWGPU__LA_H : SWGPU__LA_F;
            int64_t v = s == SWGPU__LA_H ? hf : ff;
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

/* Advance split p over the rows whose only candidate is the column below
 * the crossing (they need no pass); at a row that needs one, its forward
 * pass in *g, *pass set and the bytes it holds added to *bytes. */
static int split_next(swgpu__la_t *C, split_t *p, swgpu__lreg_t *g, int *pass, uint64_t *bytes)
{
    int rc;
    *pass = 0;
    while (p->k > 0) {
        if ((rc = split_cmax(C, p)))
            return rc;
        if (p->cmax != p->xc)
            break;
        if ((rc = split_cross(C, p)))
            return rc;
    }
    if (p->k == 0)
        return SWGPU_OK;
    if (p->cmax < 0)
        return swgpu__fail(SWGPU_EINVAL, "long alignment: internal error: no column can cross "
                           "row %lld", (long long)(p->vi1 - p->k * p->L));
    free(p->fwd);
    free(p->fwd_base);
    p->fwd_base = NULL;
    p->fwd = malloc((size_t)(p->cmax - p->xc + 1) * 2 * sizeof *p->fwd);
    if (C->sc.wide)
        p->fwd_base = malloc((size_t)swgpu__lreg_nbase(p->cmax - p->xc) * sizeof *p->fwd_base);
    if (!p->fwd || (C->sc.wide && !p->fwd_base))
        return swgpu__fail(SWGPU_ENOMEM, "long alignment: out of memory");
    *bytes += (uint64_t)(p->cmax - p->xc + 1) * 24 + swgpu__la_base_bytes(C, 1, p->cmax - p->xc);
    split_fwd_region(C, p, g);
    *pass = 1;
    return SWGPU_OK;
}

/*
 * Walk a set of splits whose reverse rows are ready: forward pass by forward
 * pass, all splits advancing together (one batch per round).
 */
static int split_walk(swgpu__la_t *C, split_t *sp, size_t n)
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
            int pass;
            if ((rc = split_next(C, &sp[k], &g[m], &pass, &bytes)))
                goto done;
            if (pass)
                who[m++] = k;
        }
        if (m == 0)
            break;
        swgpu__la_host_use(C, bytes);
        if ((rc = swgpu__la_run(C, g, m)))
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

static int is_base(const swgpu__la_piece_t *u)
{
    return (u->i1 - u->i0 + 1) * (u->j1 - u->j0 + 1) <= swgpu__la_base_cells();
}

/*
 * The model of the traceback's cells, for progress reports only.  A walk
 * over hv x wv view cells with split rows every L: forward passes from
 * crossing to crossing, about L rows by L * wv / hv columns each along a
 * straight path (wv * L in all), leaving hv / L children of that size.  A
 * child small enough costs its full matrix; a larger one its reverse pass
 * (all its cells) and a walk of its own.
 */
static double tb_piece(const swgpu__la_t *C, double h, double w, int depth);

static double tb_walk(const swgpu__la_t *C, double hv, double wv, double L, int depth)
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

static double tb_piece(const swgpu__la_t *C, double h, double w, int depth)
{
    if ((h + 1) * (w + 1) <= (double)swgpu__la_base_cells() || depth > 16)
        return h * w;
    return h * w + tb_walk(C, h, w, (double)swgpu__la_split_spacing((int64_t)h, (int64_t)w, C->layout_cap), depth);
}

/* The traceback's total from what is done and the pieces left. */
static void tb_estimate(swgpu__la_t *C, const swgpu__la_pieces_t *list)
{
    double rest = 0;
    for (size_t k = 0; k < list->n; k++) {
        const double h = (double)(list->v[k].i1 - list->v[k].i0), w = (double)(list->v[k].j1 - list->v[k].j0);
        rest += tb_piece(C, h > w ? h : w, h > w ? w : h, 0);
    }
    C->phase_cells = C->phase_done + (uint64_t)rest;
}

/* The consecutive large pieces from list->v[k] on whose splits' saved rows
 * fit the layout budget together (at least one), and in *used their bytes. */
static size_t group_size(const swgpu__la_t *C, const swgpu__la_pieces_t *list, size_t k, uint64_t *used)
{
    size_t m = 0;
    *used = 0;
    for (size_t k2 = k; k2 < list->n && !is_base(&list->v[k2]); k2++) {
        const swgpu__la_piece_t *u = &list->v[k2];
        int64_t h = u->i1 - u->i0, w = u->j1 - u->j0;
        int64_t hv = w > h ? w : h, wv = w > h ? h : w;
        int64_t Lx = swgpu__la_split_spacing(hv, wv, C->layout_cap);
        uint64_t b = swgpu__la_split_bytes(hv, wv, Lx) + swgpu__la_base_bytes(C, (hv - 1) / Lx, wv);
        if (m > 0 && *used + b > C->layout_cap)
            break;
        *used += b;
        m++;
    }
    return m;
}

/* Split p of piece u (along its longer side), its reverse rows' buffers and
 * its reverse pass g. */
static int split_setup(const swgpu__la_t *C, split_t *p, const swgpu__la_piece_t *u, swgpu__lreg_t *g)
{
    int64_t h = u->i1 - u->i0, w = u->j1 - u->j0;
    int rc = SWGPU_OK;
    split_view(p, u, w > h);
    p->L = swgpu__la_split_spacing(p->vi1 - p->vi0, p->vj1 - p->vj0, C->layout_cap);
    p->P = (p->vi1 - p->vi0 - 1) / p->L;
    p->stride = p->vj1 - p->vj0 + 1;
    p->rev = malloc((size_t)p->P * (size_t)p->stride * 2 * sizeof *p->rev);
    if (C->sc.wide)
        p->rev_base = malloc((size_t)p->P * (size_t)swgpu__lreg_nbase(p->stride - 1) * sizeof *p->rev_base);
    p->owns_rev = 1;
    if (!p->rev || (C->sc.wide && !p->rev_base))
        rc = swgpu__fail(SWGPU_ENOMEM, "long alignment: out of memory for %lld saved rows", (long long)p->P);
    else
        split_rev_region(C, p, g);
    g->saved_keep = swgpu__la_rows_stay_on_gpu(C);
    return rc;
}

/* Split a group of m large pieces u (their saved rows `used` bytes): their
 * reverse passes in one batch, then their walks together; their children
 * appended to *next. */
static int split_group(swgpu__la_t *C, const swgpu__la_piece_t *u, size_t m, uint64_t used,
                       swgpu__la_pieces_t *next)
{
    split_t *sp = calloc(m, sizeof *sp);
    swgpu__lreg_t *g = calloc(m, sizeof *g);
    int rc = SWGPU_OK;
    if (!sp || !g) {
        free(sp);
        free(g);
        return swgpu__fail(SWGPU_ENOMEM, "long alignment: out of memory");
    }
    for (size_t x = 0; x < m && !rc; x++)
        rc = split_setup(C, &sp[x], &u[x], &g[x]);
    if (!rc)
        rc = swgpu__la_run(C, g, m);
    for (size_t x = 0; x < m && !rc; x++) {
        sp[x].dev_rows = g[x].saved_kept;
        sp[x].reg = x;
        if (g[x].saved_kept) { /* the host buffers were never written */
            free(sp[x].rev);
            sp[x].rev = NULL;
            used -= (uint64_t)sp[x].P * (uint64_t)sp[x].stride * 8;
        }
    }
    swgpu__la_host_use(C, used);
    if (!rc)
        rc = split_walk(C, sp, m);
#ifdef SWGPU_HAVE_CUDA
    if (C->use_gpu)
        swgpu__lgpu_saved_drop(C->gpu);
#endif
    for (size_t x = 0; x < m && !rc; x++)
        for (size_t y = 0; y < sp[x].kids.n && !rc; y++)
            rc = swgpu__la_pieces_push(next, &sp[x].kids.v[y]);
    for (size_t x = 0; x < m; x++)
        split_free(&sp[x]);
    free(sp);
    free(g);
    return rc;
}

/* One level: every large piece of *list replaced by its children, split in
 * groups whose saved rows fit the layout budget. */
static int refine_level(swgpu__la_t *C, swgpu__la_pieces_t *list)
{
    swgpu__la_pieces_t next = { 0 };
    int rc = SWGPU_OK;
    for (size_t k = 0; k < list->n && !rc;) {
        uint64_t used;
        size_t m;
        if (is_base(&list->v[k])) {
            rc = swgpu__la_pieces_push(&next, &list->v[k]);
            k++;
            continue;
        }
        m = group_size(C, list, k, &used);
        rc = split_group(C, list->v + k, m, used, &next);
        k += m;
    }
    if (rc) {
        free(next.v);
        return rc;
    }
    free(list->v);
    *list = next;
    return SWGPU_OK;
}

int swgpu__la_refine(swgpu__la_t *C, swgpu__la_pieces_t *list)
{
    for (;;) {
        size_t nbig = 0;
        int rc;
        for (size_t k = 0; k < list->n; k++)
            nbig += !is_base(&list->v[k]);
        tb_estimate(C, list);
        if (nbig == 0)
            return SWGPU_OK;
        if (C->st)
            C->st->levels++;
        if ((rc = refine_level(C, list)))
            return rc;
    }
}

int swgpu__la_walk_top(swgpu__la_t *C, const swgpu__la_piece_t *top, int64_t L, int32_t *rev,
                       int64_t *rev_base, int dev_rows, swgpu__la_pieces_t *list)
{
    const double h = (double)(top->i1 - top->i0), w = (double)(top->j1 - top->j0);
    split_t sp;
    int rc;
    if (is_base(top) || (top->i1 - top->i0 - 1) / L < 1) {
        swgpu__la_phase_begin(C, "traceback", (uint64_t)tb_piece(C, h > w ? h : w, h > w ? w : h, 0), 1);
        return swgpu__la_pieces_push(list, top);
    }
    swgpu__la_phase_begin(C, "traceback", (uint64_t)tb_walk(C, h, w, (double)L, 0), 1);
    split_view(&sp, top, 0);
    sp.L = L;
    sp.P = (top->i1 - top->i0 - 1) / L;
    sp.rev = rev;
    sp.rev_base = rev_base;
    sp.dev_rows = dev_rows;
    sp.stride = top->j1 + 1;
    rc = split_walk(C, &sp, 1);
    for (size_t k = 0; k < sp.kids.n && !rc; k++)
        rc = swgpu__la_pieces_push(list, &sp.kids.v[k]);
    split_free(&sp);
    C->st->levels = 1;
    return rc;
}
