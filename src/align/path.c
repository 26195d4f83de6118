/*
 * path.c - the path of a local alignment: a global alignment of the
 * rectangle [qbeg,qend) x [tbeg,tend) in linear memory (Myers-Miller, small
 * blocks by full traceback), its CIGAR and statistics; swgpu_align,
 * swgpu__align_from_end/_begin (begin and path after an engine's end), and
 * the public CIGAR helpers.  Notation: src/ref/sw_ref.c.
 */
#include "align/align.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Myers-Miller sub-rectangles with at most this many nodes are solved with
 * a full-matrix traceback (one byte per node). */
#define BASE_CELLS ((size_t)1 << 16)

/* The SIMD kernels are used when their scratch stays below this; wider
 * rectangles run the scalar code (same results). */
#define SIMD_WORK_MAX ((size_t)64 << 20)

/* CIGAR element lengths must fit in 28 bits. */
#define CIGAR_LEN_MAX ((UINT64_C(1) << 28) - 1)

/* ------------------------------------------------------------ the path */

static int cigar_push(swgpu_aln_t *a, unsigned op, uint64_t len)
{
    if (len == 0)
        return SWGPU_OK;
    if (a->n_cigar && SWGPU_CIGAR_OP(a->cigar[a->n_cigar - 1]) == op) {
        uint64_t sum = SWGPU_CIGAR_LEN(a->cigar[a->n_cigar - 1]) + len;
        if (sum > CIGAR_LEN_MAX)
            return swgpu__fail(SWGPU_ERANGE, "alignment: a CIGAR run of %llu columns is too long",
                               (unsigned long long)sum);
        a->cigar[a->n_cigar - 1] = (uint32_t)(sum << 4 | op);
        return SWGPU_OK;
    }
    if (len > CIGAR_LEN_MAX)
        return swgpu__fail(SWGPU_ERANGE, "alignment: a CIGAR run of %llu columns is too long",
                           (unsigned long long)len);
    if (a->n_cigar == a->m_cigar) {
        size_t cap = a->m_cigar ? 2 * a->m_cigar : 16;
        uint32_t *c = realloc(a->cigar, cap * sizeof *c);
        if (!c)
            return swgpu__fail(SWGPU_ENOMEM, "alignment: no memory for %zu CIGAR elements", cap);
        a->cigar = c;
        a->m_cigar = cap;
    }
    a->cigar[a->n_cigar++] = (uint32_t)(len << 4 | op);
    return SWGPU_OK;
}

/*
 * Myers-Miller: the optimal global path of a rectangle in linear space.
 * Sub-problems are q[i0,i1) x t[j0,j1) (rectangle-relative) with two
 * boundary prices: tb, what a D gap (target only) that starts the
 * sub-path pays instead of go, and te, the same for a D gap that ends it
 * (0 where the gap continues one already paid for across a split row).
 * A sub-path that is one D gap from corner to corner pays min(tb, te).
 *
 * Split at the middle target row mid.  A forward pass gives, for every
 * query column i, CC[i] = best score of q[i0,i) x t[j0,mid) and DD[i] =
 * the best of those ending with a D column; a backward pass over the
 * reversed sequences gives RR[i] / SS[i], the same for q[i,i1) x t[mid,j1)
 * (SS: starting with a D column).  The path crosses row mid either
 *   type 1: at node (i, mid):                value CC[i] + RR[i], or
 *   type 2: inside a D gap that consumes t[mid-1] and t[mid] at column i:
 *                                            value DD[i] + SS[i] + go
 * (both halves paid the gap's opening; it is one gap).  The first best
 * column, type 1 before type 2, wins: the path is deterministic.
 * Small sub-problems are solved with a full matrix and a traceback.
 */
typedef struct {
    const uint8_t *q, *t;   /* the rectangle: q[0,M) x t[0,N) */
    uint8_t *qr, *tr;       /* the same, reversed */
    const int32_t *rows;    /* a PSSM query: the rows of q[0,M) (else NULL) */
    int32_t *rrows;         /* ... and of qr */
    size_t M, N;
    int32_t go, ge, oe;
    int32_t st[SWGPU_NCODES][SWGPU_NCODES]; /* st[target code][query code] */
    int32_t *CC, *DD, *RR, *SS;             /* M+1 each */
    uint8_t *dir;                           /* base case traceback, dir_cap bytes */
    size_t dir_cap;
    uint8_t *ops;                           /* base case ops (reversed), M+N bytes */
    swgpu_aln_t *a;
    int err;
    const swgpu__aln_kernels_t *k;          /* SIMD kernels, or NULL: scalar */
    int smin, smax;                         /* the score range (smin above
                                               SWGPU__ALN_FORBID16: fits16) */
    int only32;                             /* never the 16-bit kernels */
    void *work;                             /* their scratch (per thread) */
    size_t work_bytes;
} mm_t;

/* Global pass: x[0,w) along columns (xr: their PSSM rows, or NULL), rows
 * y[0,h), h >= 1.  A D gap that opens at the start node pays open0 instead
 * of go.  Out: CC[i] = best score of x[0,i) x y[0,h), DD[i] = best ending
 * with a D column. */
static void mm_pass(const mm_t *c, const uint8_t *x, const int32_t *xr, size_t w,
                    const uint8_t *y, size_t h, int32_t open0, int32_t *CC, int32_t *DD)
{
    const int32_t ge = c->ge, oe = c->oe;
    if (c->k) {
        swgpu__aln_job_t jb = {0};
        jb.x = x;
        jb.w = w;
        jb.y = y;
        jb.h = h;
        jb.st = &c->st[0][0];
        jb.xrows = xr;
        jb.go = c->go;
        jb.ge = ge;
        jb.e0 = -open0;
        jb.mode = SWGPU__ALN_PASS;
        jb.CC = CC;
        jb.DD = DD;
        jb.work = c->work;
        if (!c->only32 && swgpu__aln_fits16(w, h, c->k->lanes16, c->go, ge, c->smin, c->smax, 0))
            c->k->run16(&jb);
        else
            c->k->run(&jb);
        return;
    }
    CC[0] = 0;
    DD[0] = -open0; /* so that DD(0,1) = -open0 - ge */
    for (size_t i = 1; i <= w; i++) {
        CC[i] = -(c->go + (int32_t)i * ge);
        DD[i] = SWGPU__REF_NEG;
    }
    for (size_t r = 0; r < h; r++) {
        const int yc = y[r] & (SWGPU_NCODES - 1);
        const int32_t *sr = c->st[yc];
        int32_t diag = CC[0], f;
        DD[0] = swgpu__ref_max32(DD[0] - ge, CC[0] - oe);
        CC[0] = DD[0];
        f = CC[0] - oe; /* the I state of column 1; then as in swgpu__ref_sw_fwd */
        for (size_t i = 1; i <= w; i++) {
            int32_t d = swgpu__ref_max32(DD[i] - ge, CC[i] - oe);
            int32_t s = xr ? xr[(i - 1) * SWGPU_NCODES + yc] : sr[x[i - 1] & (SWGPU_NCODES - 1)];
            int32_t v = swgpu__ref_max32(diag + s, d);
            int32_t h = swgpu__ref_max32(v, f);
            f = swgpu__ref_max32(f - ge, v - oe);
            diag = CC[i];
            CC[i] = h;
            DD[i] = d;
        }
    }
}

/* traceback byte: bits 0-1 the state H came from, bit 2 F extended, bit 3
 * E extended */
enum { TB_M = 0, TB_I = 1, TB_D = 2, TB_IEXT = 4, TB_DEXT = 8 };

/* Full-matrix Gotoh with traceback for a small sub-problem (w, h >= 1). */
/* mm_base's traceback: the path from the end node (w, h), whose last
 * scores are lastM, lastI and lastD (the end's gap price included), back
 * to (0, 0) through c->dir (rows of R bytes, columns striped S by L;
 * plain order: S = w, L = 1), appended to c->a; returns the best score. */
static int32_t mm_base_trace(mm_t *c, size_t w, size_t h, size_t S, size_t L, size_t R,
                             int32_t lastM, int32_t lastI, int32_t lastD)
{
    size_t nops = 0, i, j;
    int32_t val;
    unsigned state;

    if (lastM >= lastI && lastM >= lastD) {
        val = lastM;
        state = TB_M;
    } else if (lastI >= lastD) {
        val = lastI;
        state = TB_I;
    } else {
        val = lastD;
        state = TB_D;
    }
    /* walk back from (w, h) to (0, 0), recording ops in reverse */
    i = w;
    j = h;
    /* the byte of node (i, j): column i >= 1 at 1 + ((i-1) % S) * L + (i-1) / S
     * of row j (plain order for the scalar fill: S = w, L = 1) */
#define DIR(i, j) c->dir[(j) * R + ((i) ? 1 + ((i) - 1) % S * L + ((i) - 1) / S : 0)]
    while (i > 0 || j > 0) {
        uint8_t d = DIR(i, j);
        c->ops[nops++] = (uint8_t)state;
        if (state == TB_M) {
            i--;
            j--;
            state = DIR(i, j) & 3;
        } else if (state == TB_I) {
            i--;
            state = (d & TB_IEXT) ? TB_I : (DIR(i, j) & 3u);
        } else {
            j--;
            state = (d & TB_DEXT) ? TB_D : (DIR(i, j) & 3u);
        }
    }
#undef DIR
    while (nops > 0 && !c->err) {
        size_t k = nops;
        uint8_t op = c->ops[k - 1];
        while (k > 0 && c->ops[k - 1] == op)
            k--;
        c->err = cigar_push(c->a, op, nops - k);
        nops = k;
    }
    return val;
}

static int32_t mm_base(mm_t *c, size_t i0, size_t i1, size_t j0, size_t j1, int32_t tb,
                       int32_t te)
{
    const size_t w = i1 - i0, h = j1 - j0, W = w + 1;
    const uint8_t *x = c->q + i0, *y = c->t + j0;
    const int32_t *xr = c->rows ? c->rows + i0 * SWGPU_NCODES : NULL;
    const int32_t go = c->go, ge = c->ge, oe = c->oe;
    int32_t *Hr = c->CC, *Er = c->DD; /* row arrays, free to reuse here */
    int32_t lastM = 0, lastI = 0, lastD = 0;
    size_t need = W * (h + 1), i, j, S = w, L = 1, R = W;

    int use16 = c->k && !c->only32 && swgpu__aln_fits16(w, h, c->k->lanes16, go, ge, c->smin, c->smax, 0);
    if (c->k) { /* the striped layout: rows of S*L + 1 bytes */
        L = use16 ? c->k->lanes16 : c->k->lanes;
        S = (w + L - 1) / L;
        R = S * L + 1;
        need = R * (h + 1);
    }
    if (need > c->dir_cap) {
        uint8_t *d = realloc(c->dir, need);
        if (!d) {
            c->err = swgpu__fail(SWGPU_ENOMEM, "alignment: no memory for a %zu-cell traceback",
                                 need);
            return 0;
        }
        c->dir = d;
        c->dir_cap = need;
    }
    if (c->k) {
        swgpu__aln_job_t jb = {0};
        jb.x = x;
        jb.w = w;
        jb.y = y;
        jb.h = h;
        jb.st = &c->st[0][0];
        jb.xrows = xr;
        jb.go = go;
        jb.ge = ge;
        jb.e0 = -tb;
        jb.mode = SWGPU__ALN_BASE;
        jb.dir = c->dir;
        jb.work = c->work;
        if (use16)
            c->k->run16(&jb);
        else
            c->k->run(&jb);
        lastM = jb.lastM;
        lastI = jb.lastI;
        lastD = jb.lastD;
        goto traceback;
    }
    /* row 0: only I columns from the start node */
    Hr[0] = 0;
    Er[0] = -tb;
    c->dir[0] = TB_M;
    for (i = 1; i <= w; i++) {
        Hr[i] = -(go + (int32_t)i * ge);
        Er[i] = SWGPU__REF_NEG;
        c->dir[i] = TB_I | (i >= 2 ? TB_IEXT : 0);
    }
    for (j = 1; j <= h; j++) {
        const int yc = y[j - 1] & (SWGPU_NCODES - 1);
        const int32_t *sr = c->st[yc];
        uint8_t *dr = c->dir + j * W;
        int32_t diag = Hr[0], f = SWGPU__REF_NEG, hleft;
        int32_t de = Er[0] - ge, dop = Hr[0] - oe;
        /* column 0: only D columns (the seed Er[0] = -tb prices the first) */
        Er[0] = dop >= de ? dop : de;
        dr[0] = TB_D | (dop >= de ? 0 : TB_DEXT);
        Hr[0] = Er[0];
        hleft = Hr[0];
        for (i = 1; i <= w; i++) {
            uint8_t bits = 0;
            int32_t e, mm, v;
            de = Er[i] - ge;
            dop = Hr[i] - oe;
            if (dop >= de) {
                e = dop;
            } else {
                e = de;
                bits |= TB_DEXT;
            }
            if (hleft - oe >= f - ge) {
                f = hleft - oe;
            } else {
                f = f - ge;
                bits |= TB_IEXT;
            }
            mm = diag + (xr ? xr[(i - 1) * SWGPU_NCODES + yc] : sr[x[i - 1] & (SWGPU_NCODES - 1)]);
            /* H prefers M, then I, then D */
            if (mm >= f && mm >= e) {
                v = mm;
                bits |= TB_M;
            } else if (f >= e) {
                v = f;
                bits |= TB_I;
            } else {
                v = e;
                bits |= TB_D;
            }
            dr[i] = bits;
            diag = Hr[i];
            Hr[i] = v;
            Er[i] = e;
            hleft = v;
            lastM = mm;
            lastI = f;
            lastD = e;
        }
    }
traceback: /* the end node: a D gap ending here pays te instead of go */
    return mm_base_trace(c, w, h, S, L, R, lastM, lastI, lastD + go - te);
}

/* Solve q[i0,i1) x t[j0,j1) with boundary prices tb, te; append its path
 * to the CIGAR and return its score (errors go to c->err). */
static int32_t mm_solve(mm_t *c, size_t i0, size_t i1, size_t j0, size_t j1, int32_t tb,
                        int32_t te)
{
    const size_t w = i1 - i0, h = j1 - j0;
    size_t mid, split = 0;
    int32_t best = SWGPU__REF_NEG, v, left, right;
    int type2 = 0;

    if (c->err)
        return 0;
    if (h == 0) { /* one I gap, or nothing */
        c->err = cigar_push(c->a, SWGPU_CIGAR_I, w);
        return w ? -(c->go + (int32_t)w * c->ge) : 0;
    }
    if (w == 0) { /* one D gap from corner to corner */
        c->err = cigar_push(c->a, SWGPU_CIGAR_D, h);
        return -((tb < te ? tb : te) + (int32_t)h * c->ge);
    }
    if (h < 2 || (w + 1) * (h + 1) <= BASE_CELLS)
        return mm_base(c, i0, i1, j0, j1, tb, te);

    mid = j0 + h / 2;
    mm_pass(c, c->q + i0, c->rows ? c->rows + i0 * SWGPU_NCODES : NULL, w, c->t + j0, mid - j0,
            tb, c->CC, c->DD);
    mm_pass(c, c->qr + (c->M - i1), c->rrows ? c->rrows + (c->M - i1) * SWGPU_NCODES : NULL, w,
            c->tr + (c->N - j1), j1 - mid, te, c->RR, c->SS);
    /* RR[w - i] / SS[w - i] belong to query column i (reversed indexing) */
    for (size_t i = 0; i <= w; i++) {
        int32_t v1 = c->CC[i] + c->RR[w - i];
        int32_t v2 = c->DD[i] + c->SS[w - i] + c->go;
        if (v1 > best) {
            best = v1;
            split = i;
            type2 = 0;
        }
        if (v2 > best) {
            best = v2;
            split = i;
            type2 = 1;
        }
    }
    if (!type2) {
        left = mm_solve(c, i0, i0 + split, j0, mid, tb, c->go);
        right = mm_solve(c, i0 + split, i1, mid, j1, c->go, te);
        v = left + right;
    } else {
        /* the crossing gap opens here, unless it goes on from a gap that
         * a boundary price of 0 says is already open (then the half on
         * that side is an empty-width D run continuing it) */
        int32_t open = (split == 0 && tb == 0) || (split == w && te == 0) ? 0 : c->go;
        left = mm_solve(c, i0, i0 + split, j0, mid - 1, tb, 0);
        if (!c->err)
            c->err = cigar_push(c->a, SWGPU_CIGAR_D, 2);
        right = mm_solve(c, i0 + split, i1, mid + 1, j1, 0, te);
        v = left - (open + 2 * c->ge) + right;
    }
    if (!c->err && v != best)
        c->err = swgpu__fail(SWGPU_EINVAL,
                             "alignment: internal error: split of rows %zu..%zu scores %d, "
                             "halves %d", j0, j1, (int)best, (int)v);
    return v;
}

void swgpu__aln_stats(swgpu_aln_t *a, const uint8_t *q, const uint8_t *t)
{
    int64_t qi = a->qbeg, ti = a->tbeg;
    a->length = a->n_ident = a->n_mismatch = a->n_gapopen = a->n_gaps = 0;
    for (size_t k = 0; k < a->n_cigar; k++) {
        unsigned op = SWGPU_CIGAR_OP(a->cigar[k]);
        int64_t len = SWGPU_CIGAR_LEN(a->cigar[k]);
        a->length += len;
        if (op == SWGPU_CIGAR_M) {
            for (int64_t x = 0; x < len; x++)
                a->n_ident += q[qi + x] == t[ti + x];
            qi += len;
            ti += len;
        } else {
            a->n_gapopen++;
            a->n_gaps += len;
            if (op == SWGPU_CIGAR_I)
                qi += len;
            else
                ti += len;
        }
    }
    a->n_mismatch = a->length - a->n_gaps - a->n_ident;
}

static int cigar_score_q(const swgpu_aln_t *a, const swgpu__query_t *Q, const uint8_t *t,
                         size_t tlen, const swgpu_matrix_t *m, int gap_open, int gap_extend,
                         int64_t *score);

static int ref_path_k(const swgpu__query_t *Q, const uint8_t *t, size_t tlen,
                      const swgpu_matrix_t *m, int gap_open, int gap_extend, swgpu_aln_t *a,
                      const swgpu__aln_kernels_t *k, int only32)
{
    mm_t c;
    int64_t rescored = 0;
    int32_t v;
    size_t w;
    const uint8_t *q = Q->res;
    const size_t qlen = Q->len;
    swgpu__ref_range_t r = swgpu__ref_range(Q, m);
    int rc = swgpu__ref_check_scoring(m, &r, gap_open, gap_extend);
    if (rc)
        return rc;
    if (!a || !q || !t || a->qbeg < 0 || a->tbeg < 0 || a->qbeg > a->qend ||
        a->tbeg > a->tend || (uint64_t)a->qend > qlen || (uint64_t)a->tend > tlen)
        return swgpu__fail(SWGPU_EINVAL, "alignment path: bad rectangle or NULL argument");
    a->n_cigar = 0;
    memset(&c, 0, sizeof c);
    c.M = (size_t)(a->qend - a->qbeg);
    c.N = (size_t)(a->tend - a->tbeg);
    if ((rc = swgpu__ref_check_global(&r, gap_open, gap_extend, c.M, c.N)))
        return rc;
    c.q = q + a->qbeg;
    c.t = t + a->tbeg;
    c.go = gap_open;
    c.ge = gap_extend;
    c.oe = gap_open + gap_extend;
    c.a = a;
    c.smin = r.min16;
    c.smax = r.max;
    c.only32 = only32;
    if (Q->rows) {
        c.rows = Q->rows + (size_t)a->qbeg * SWGPU_NCODES;
        if (!(c.rrows = swgpu__ref_rows_reversed(c.rows, c.M, &rc)) && rc)
            return rc;
    } else {
        for (int x = 0; x < SWGPU_NCODES; x++)
            for (int y = 0; y < SWGPU_NCODES; y++)
                c.st[y][x] = m->s[x][y];
    }
    w = c.M + 1;
    c.qr = malloc(c.M + c.N + 1);
    c.ops = malloc(c.M + c.N + 1);
    c.CC = malloc(4 * w * sizeof(int32_t));
    if (!c.qr || !c.ops || !c.CC) {
        rc = swgpu__fail(SWGPU_ENOMEM, "alignment path: no memory for a %zu x %zu rectangle",
                         c.M, c.N);
        goto done;
    }
    if (k && c.M > 0) {
        c.work_bytes = swgpu__aln_work_bytes(k, c.M);
        c.work = c.work_bytes <= SIMD_WORK_MAX ? swgpu__aln_thread_work(c.work_bytes) : NULL;
        c.k = c.work ? k : NULL;
    }
    c.tr = c.qr + c.M;
    c.DD = c.CC + w;
    c.RR = c.DD + w;
    c.SS = c.RR + w;
    for (size_t i = 0; i < c.M; i++)
        c.qr[i] = c.q[c.M - 1 - i];
    for (size_t j = 0; j < c.N; j++)
        c.tr[j] = c.t[c.N - 1 - j];

    v = mm_solve(&c, 0, c.M, 0, c.N, c.go, c.go);
    if ((rc = c.err))
        goto done;
    swgpu__aln_stats(a, q, t);
    if ((rc = cigar_score_q(a, Q, t, tlen, m, gap_open, gap_extend, &rescored)))
        goto done;
    if (v != a->score || rescored != a->score)
        rc = swgpu__fail(SWGPU_EINVAL,
                         "alignment path: internal error: path of [%lld,%lld) x [%lld,%lld) "
                         "scores %d (rescored %lld), local score %d", (long long)a->qbeg,
                         (long long)a->qend, (long long)a->tbeg, (long long)a->tend, (int)v,
                         (long long)rescored, (int)a->score);
done:
    if (rc)
        a->n_cigar = 0;
    free(c.qr);
    free(c.rrows);
    free(c.ops);
    free(c.CC);
    free(c.dir);
    swgpu__aln_thread_work_done(c.work, c.work_bytes);
    return rc;
}

int swgpu__ref_path(const uint8_t *q, size_t qlen, const uint8_t *t, size_t tlen,
                    const swgpu_matrix_t *m, int gap_open, int gap_extend, swgpu_aln_t *a)
{
    swgpu__query_t Q = swgpu__query_plain(q, qlen);
    return ref_path_k(&Q, t, tlen, m, gap_open, gap_extend, a, swgpu__aln_kernels(-1), 0);
}

int swgpu__ref_path_scalar(const uint8_t *q, size_t qlen, const uint8_t *t, size_t tlen,
                           const swgpu_matrix_t *m, int gap_open, int gap_extend, swgpu_aln_t *a)
{
    swgpu__query_t Q = swgpu__query_plain(q, qlen);
    return ref_path_k(&Q, t, tlen, m, gap_open, gap_extend, a, NULL, 0);
}

int swgpu__ref_path_isa(const uint8_t *q, size_t qlen, const uint8_t *t, size_t tlen,
                        const swgpu_matrix_t *m, int gap_open, int gap_extend, swgpu_aln_t *a,
                        int isa)
{
    swgpu__query_t Q = swgpu__query_plain(q, qlen);
    return ref_path_k(&Q, t, tlen, m, gap_open, gap_extend, a,
                      swgpu__aln_kernels(isa < 0 ? isa : isa & 0xff),
                      isa >= 0 && (isa & SWGPU__ALN_ONLY32));
}

/* ------------------------------------------------------- public helpers */

static void aln_reset(swgpu_aln_t *a)
{
    a->score = 0;
    a->qbeg = a->qend = a->tbeg = a->tend = 0;
    a->n_cigar = 0;
    a->length = a->n_ident = a->n_mismatch = a->n_gapopen = a->n_gaps = 0;
}

int swgpu_align(const uint8_t *q, size_t qlen, const uint8_t *t, size_t tlen,
                const swgpu_matrix_t *m, int gap_open, int gap_extend,
                int score_only, swgpu_aln_t *out)
{
    int32_t score = 0;
    int64_t qend = 0, tend = 0;
    int rc;
    if (!out)
        return swgpu__fail(SWGPU_EINVAL, "align: NULL result");
    aln_reset(out);
    if ((rc = swgpu__ref_score(q, qlen, t, tlen, m, gap_open, gap_extend, &score, &qend, &tend)))
        return rc;
    return swgpu__align_from_end(q, qlen, t, tlen, m, gap_open, gap_extend, score, qend, tend,
                                 score_only, out);
}

int swgpu__align_from_end(const uint8_t *q, size_t qlen, const uint8_t *t, size_t tlen,
                          const swgpu_matrix_t *m, int gap_open, int gap_extend, int32_t score,
                          int64_t qend, int64_t tend, int score_only, swgpu_aln_t *out)
{
    return swgpu__align_from_end_isa(q, qlen, t, tlen, m, gap_open, gap_extend, score, qend,
                                     tend, score_only, out, -1);
}

int swgpu__align_from_end_scalar(const uint8_t *q, size_t qlen, const uint8_t *t, size_t tlen,
                                 const swgpu_matrix_t *m, int gap_open, int gap_extend,
                                 int32_t score, int64_t qend, int64_t tend, int score_only,
                                 swgpu_aln_t *out)
{
    return swgpu__align_from_end_isa(q, qlen, t, tlen, m, gap_open, gap_extend, score, qend,
                                     tend, score_only, out, 0 /* SWGPU__ISA_SCALAR */);
}

int swgpu__align_from_end_isa(const uint8_t *q, size_t qlen, const uint8_t *t, size_t tlen,
                              const swgpu_matrix_t *m, int gap_open, int gap_extend,
                              int32_t score, int64_t qend, int64_t tend, int score_only,
                              swgpu_aln_t *out, int isa)
{
    swgpu__query_t Q = swgpu__query_plain(q, qlen);
    return swgpu__align_from_end_q(&Q, t, tlen, m, gap_open, gap_extend, score, qend, tend,
                                   score_only, out, isa);
}

int swgpu__align_from_end_q(const swgpu__query_t *Q, const uint8_t *t, size_t tlen,
                            const swgpu_matrix_t *m, int gap_open, int gap_extend, int32_t score,
                            int64_t qend, int64_t tend, int score_only, swgpu_aln_t *out, int isa)
{
    const swgpu__aln_kernels_t *k = swgpu__aln_kernels(isa < 0 ? isa : isa & 0xff);
    int only32 = isa >= 0 && (isa & SWGPU__ALN_ONLY32);
    int64_t qbeg = 0, tbeg = 0;
    int rc;
    if (!out)
        return swgpu__fail(SWGPU_EINVAL, "align: NULL result");
    aln_reset(out);
    if (score == 0)
        return SWGPU_OK;
    if (!Q)
        return swgpu__fail(SWGPU_EINVAL, "align: NULL query");
    if ((rc = swgpu__align_start_k(Q, t, tlen, m, gap_open, gap_extend, score, qend, tend, &qbeg,
                          &tbeg, k, only32)))
        return rc;
    if (!score_only)
        return swgpu__align_from_begin_q(Q, t, tlen, m, gap_open, gap_extend, score, qbeg, tbeg,
                                         qend, tend, out, isa);
    out->score = score;
    out->qbeg = qbeg;
    out->qend = qend;
    out->tbeg = tbeg;
    out->tend = tend;
    return SWGPU_OK;
}

int swgpu__align_from_begin_q(const swgpu__query_t *Q, const uint8_t *t, size_t tlen,
                              const swgpu_matrix_t *m, int gap_open, int gap_extend,
                              int32_t score, int64_t qbeg, int64_t tbeg, int64_t qend,
                              int64_t tend, swgpu_aln_t *out, int isa)
{
    const swgpu__aln_kernels_t *k = swgpu__aln_kernels(isa < 0 ? isa : isa & 0xff);
    int only32 = isa >= 0 && (isa & SWGPU__ALN_ONLY32);
    int rc;
    if (!out)
        return swgpu__fail(SWGPU_EINVAL, "align: NULL result");
    aln_reset(out);
    if (score == 0)
        return SWGPU_OK;
    if (!Q || qbeg < 0 || tbeg < 0 || qbeg >= qend || tbeg >= tend || (uint64_t)qend > Q->len ||
        (uint64_t)tend > tlen)
        return swgpu__fail(SWGPU_EINVAL, "align: bad rectangle [%lld, %lld) x [%lld, %lld) for "
                           "lengths %zu x %zu", (long long)qbeg, (long long)qend,
                           (long long)tbeg, (long long)tend, Q ? Q->len : (size_t)0, tlen);
    out->score = score;
    out->qbeg = qbeg;
    out->qend = qend;
    out->tbeg = tbeg;
    out->tend = tend;
    if ((rc = ref_path_k(Q, t, tlen, m, gap_open, gap_extend, out, k, only32))) {
        aln_reset(out);
        return rc;
    }
    return SWGPU_OK;
}

void swgpu_aln_free(swgpu_aln_t *a)
{
    if (!a)
        return;
    free(a->cigar);
    memset(a, 0, sizeof *a);
}

/* Each M column scores s(q, t) (the matrix, or a PSSM's row); each I or D
 * element is one gap costing gap_open + len * gap_extend (so CIGARs must
 * merge adjacent equal ops). */
static int cigar_score_q(const swgpu_aln_t *a, const swgpu__query_t *Q, const uint8_t *t,
                         size_t tlen, const swgpu_matrix_t *m, int gap_open, int gap_extend,
                         int64_t *score)
{
    const uint8_t *q = Q->res;
    const size_t qlen = Q->len;
    int64_t qi, ti, sum = 0;
    if (!a || !m || !score || (a->n_cigar && !a->cigar))
        return swgpu__fail(SWGPU_EINVAL, "cigar score: NULL argument");
    qi = a->qbeg;
    ti = a->tbeg;
    if (qi < 0 || ti < 0 || (uint64_t)qi > qlen || (uint64_t)ti > tlen)
        return swgpu__fail(SWGPU_EINVAL, "cigar score: begin (%lld, %lld) outside %zu x %zu",
                           (long long)qi, (long long)ti, qlen, tlen);
    for (size_t k = 0; k < a->n_cigar; k++) {
        unsigned op = SWGPU_CIGAR_OP(a->cigar[k]);
        int64_t len = SWGPU_CIGAR_LEN(a->cigar[k]);
        int64_t dq = op == SWGPU_CIGAR_D ? 0 : len, dt = op == SWGPU_CIGAR_I ? 0 : len;
        if (op > SWGPU_CIGAR_D || len == 0)
            return swgpu__fail(SWGPU_EINVAL, "cigar score: element %zu (op %u, length %lld) "
                               "is invalid", k, op, (long long)len);
        if ((uint64_t)(qi + dq) > qlen || (uint64_t)(ti + dt) > tlen)
            return swgpu__fail(SWGPU_EINVAL, "cigar score: element %zu runs off the %s (%zu "
                               "residues)", k, (uint64_t)(qi + dq) > qlen ? "query" : "target",
                               (uint64_t)(qi + dq) > qlen ? qlen : tlen);
        if (op == SWGPU_CIGAR_M) {
            if ((q == NULL && !Q->rows) || t == NULL)
                return swgpu__fail(SWGPU_EINVAL, "cigar score: NULL sequence");
            for (int64_t x = 0; x < len; x++) {
                const int c = t[ti + x] & (SWGPU_NCODES - 1);
                sum += Q->rows ? Q->rows[(size_t)(qi + x) * SWGPU_NCODES + c]
                               : m->s[q[qi + x] & (SWGPU_NCODES - 1)][c];
            }
        } else {
            sum -= (int64_t)gap_open + len * (int64_t)gap_extend;
        }
        qi += dq;
        ti += dt;
    }
    *score = sum;
    return SWGPU_OK;
}

int swgpu_cigar_score(const swgpu_aln_t *a, const uint8_t *q, size_t qlen,
                      const uint8_t *t, size_t tlen, const swgpu_matrix_t *m,
                      int gap_open, int gap_extend, int64_t *score)
{
    swgpu__query_t Q = swgpu__query_plain(q, qlen);
    return cigar_score_q(a, &Q, t, tlen, m, gap_open, gap_extend, score);
}

size_t swgpu_cigar_string(const swgpu_aln_t *a, char *buf, size_t size)
{
    static const char opc[] = "MID?";
    size_t need = 0;
    char tmp[32];
    if (buf && size)
        buf[0] = '\0';
    if (!a)
        return 0;
    for (size_t k = 0; k < a->n_cigar; k++) {
        unsigned op = SWGPU_CIGAR_OP(a->cigar[k]);
        int n = snprintf(tmp, sizeof tmp, "%u%c", (unsigned)SWGPU_CIGAR_LEN(a->cigar[k]),
                         opc[op < 3 ? op : 3]);
        if (buf && need + (size_t)n < size)
            memcpy(buf + need, tmp, (size_t)n + 1);
        else if (buf && need < size)
            buf[need] = '\0';
        need += (size_t)n;
    }
    return need;
}
