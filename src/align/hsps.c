/*
 * align/hsps.c - the further alignments of one pair (swgpu_opts_t.max_hsps):
 * Waterman-Eggert's k best non-intersecting local alignments as Huang &
 * Miller's SIM defines them (lalign36): after the first alignments, the
 * next is the best local alignment that aligns no pair (i, j) any of them
 * aligns.  A forbidden pair may still be crossed by a gap: only the
 * diagonal step into it is barred, as in SIM.
 *
 * The next best score and end come from a 16-bit striped pass in linear
 * memory (hsps_bound.c) wherever the scores fit its lanes.  Elsewhere the
 * pass that finds the next best end keeps the whole matrix (H and F)
 * when the pair is small enough (HSPS_FULL_CELLS) and, after each
 * alignment, recomputes only the cells whose values its pairs change (they
 * can only fall): SIM's idea.  Larger pairs take a full pass in linear
 * memory per alignment.  Ends are chosen as swgpu__ref_score chooses them
 * (smallest target end, then smallest query end); the begin by a pass back
 * from the end (the largest target begin, then the largest query begin),
 * pruned where an alignment's suffix scores <= 0 (no suffix of an
 * alignment that ends at the chosen end does: a prefix of it would score
 * as much and end first); the path between begin and end by path.c (linear
 * memory, the first alignment's tie rules) when no forbidden pair lies in
 * their rectangle, else by a full traceback of the rectangle
 * (HSPS_PATH_CELLS at most).
 */
#include "align/align.h"

#include <pthread.h>
#include <string.h>

#define NEG (-(1 << 29))
/* cells of a pair whose whole matrix is kept (H and F: 8 bytes each) */
#define HSPS_FULL_CELLS ((size_t)4 << 20)
/* cells of a rectangle traced back in full (1 byte each) */
#define HSPS_PATH_CELLS ((size_t)1 << 28)

static inline int32_t max2(int32_t a, int32_t b)
{
    return a > b ? a : b;
}

static inline int32_t sc(const swgpu__hsps_t *S, size_t i, uint8_t c)
{
    return S->q.rows ? S->q.rows[i * SWGPU_NCODES + c] : S->m->s[S->q.res[i]][c];
}

/* 1 if query position i may be aligned with target position j */
static inline int allowed(const swgpu__hsps_t *S, size_t i, int64_t j)
{
    const int32_t *f = S->fcol + i * S->fcap;
    for (uint32_t k = 0; k < S->fn[i]; k++)
        if (f[k] == j)
            return 0;
    return 1;
}

/* Each thread keeps the block of its last whole matrix (up to
 * HSPS_FULL_CELLS cells) for the next pair: no fresh pages per pair. */
static pthread_key_t mat_key;
static pthread_once_t mat_once = PTHREAD_ONCE_INIT;
static int mat_key_ok;

typedef struct {
    int32_t *p;
    size_t cells;
} mat_cache_t;

static void mat_free(void *arg)
{
    mat_cache_t *c = arg;
    if (c) {
        free(c->p);
        free(c);
    }
}

static void mat_init(void)
{
    mat_key_ok = pthread_key_create(&mat_key, mat_free) == 0;
}

/* n * cells int32 (H, F), the thread's kept block when it is large enough */
static int32_t *mat_get(size_t cells, size_t n)
{
    cells *= n;
    pthread_once(&mat_once, mat_init);
    mat_cache_t *c = mat_key_ok ? pthread_getspecific(mat_key) : NULL;
    if (c && c->p && c->cells >= cells) {
        int32_t *p = c->p;
        c->p = NULL;
        return p;
    }
    if (c) { /* too small: one block a thread at most */
        free(c->p);
        c->p = NULL;
        c->cells = 0;
    }
    return malloc(cells * sizeof(int32_t));
}

/* p (of cells cells) back to the thread, or freed */
static void mat_put(int32_t *p, size_t cells)
{
    mat_cache_t *c = mat_key_ok ? pthread_getspecific(mat_key) : NULL;
    if (p && mat_key_ok && !c && (c = calloc(1, sizeof *c)) &&
        pthread_setspecific(mat_key, c) != 0) {
        free(c);
        c = NULL;
    }
    if (c && (!c->p || c->cells < cells)) {
        free(c->p);
        c->p = p;
        c->cells = cells;
    } else {
        free(p);
    }
}

void swgpu__hsps_free(swgpu__hsps_t *S)
{
    free(S->fcol);
    free(S->fn);
    mat_put(S->H, 2 * S->cells);
    free(S->prof);
    free(S->prow);
    free(S->rmax);
    free(S->rcol);
    free(S->chg);
    free(S->row);
    free(S->dir);
    free(S->ops);
    memset(S, 0, sizeof *S);
}

int swgpu__hsps_init(swgpu__hsps_t *S, const swgpu__query_t *q, const uint8_t *t, size_t tlen,
                     const swgpu_matrix_t *m, int gap_open, int gap_extend)
{
    memset(S, 0, sizeof *S);
    S->q = *q;
    S->t = t;
    S->tlen = tlen;
    S->m = m;
    S->go = gap_open;
    S->ge = gap_extend;
    size_t ql = q->len ? q->len : 1, W = tlen + 1;
    S->full = (q->len + 1) <= HSPS_FULL_CELLS / W;
    S->fcap = 2;
    if (!(S->fcol = malloc(ql * S->fcap * sizeof *S->fcol)) ||
        !(S->fn = calloc(ql, sizeof *S->fn)) || !(S->row = malloc(4 * W * sizeof *S->row)) ||
        !(S->chg = calloc(2 * W, 1)) ||
        (S->full && (!(S->H = mat_get((S->cells = (q->len + 1) * W), 2)) ||
                     !(S->rmax = malloc((q->len + 1) * sizeof *S->rmax)) ||
                     !(S->rcol = malloc((q->len + 1) * sizeof *S->rcol))))) {
        swgpu__hsps_free(S);
        return swgpu__fail(SWGPU_ENOMEM, "further alignments: out of memory for a pair of "
                           "%zu x %zu residues", q->len, tlen);
    }
    if (S->full)
        S->F = S->H + S->cells;
    /* the target's scores by query code (a PSSM: one row's, made per row) */
    size_t np = q->rows ? (tlen ? tlen : 1) : (size_t)SWGPU_NCODES * (tlen ? tlen : 1);
    int32_t *p = malloc(np * sizeof *p);
    if (!p) {
        swgpu__hsps_free(S);
        return swgpu__fail(SWGPU_ENOMEM, "further alignments: out of memory for a pair of "
                           "%zu x %zu residues", q->len, tlen);
    }
    if (q->rows) {
        S->prow = p;
    } else {
        S->prof = p;
        for (size_t c = 0; c < SWGPU_NCODES; c++)
            for (size_t j = 0; j < tlen; j++)
                p[c * tlen + j] = m->s[c][t[j]];
    }
    return SWGPU_OK;
}

/* ------------------------------------------------------ the ends' pass */

/* The row's values but E (no dependence along the row: vectorised, with
 * AVX2 where the compiler can make a copy for it): F, and H without the
 * gaps along the row; prow[j - 1] the score of the query position against
 * target position j - 1. */
SWGPU_CLONES_AVX2
static void row_open(const int32_t *restrict hp, const int32_t *restrict fp,
                     const int32_t *restrict prow, int32_t *restrict hc, int32_t *restrict fc,
                     size_t tlen, int32_t goe, int32_t ge)
{
    for (size_t j = 1; j <= tlen; j++) {
        int32_t f = max2(fp[j] - ge, hp[j] - goe);
        int32_t d = hp[j - 1] + prow[j - 1];
        fc[j] = f;
        hc[j] = max2(max2(0, f), d);
    }
}

/*
 * One row of the recurrence: hp, fp the row above (H and F, index j for
 * column j, 0 the border), into hc, ec (NULL: not kept) and fc; query
 * position i, forb[0..nf) its forbidden target positions.  Returns the
 * row's best H, its first column in *col.  E is computed from H as it
 * stands before E enters it, which gives Gotoh's E since a gap that opens
 * from an E pays the opening twice (gap_open >= 0).
 */
static int32_t row_pass(const swgpu__hsps_t *S, size_t i, const int32_t *restrict hp,
                        const int32_t *restrict fp, int32_t *restrict hc, int32_t *restrict ec,
                        int32_t *restrict fc, int64_t *col)
{
    const size_t tlen = S->tlen;
    const int32_t ge = S->ge, goe = S->go + S->ge;
    const int32_t *prow = S->prof;
    if (S->q.rows) { /* a PSSM: the row's scores in target order */
        const int32_t *mrow = S->q.rows + i * SWGPU_NCODES;
        for (size_t j = 0; j < tlen; j++)
            S->prow[j] = mrow[S->t[j]];
        prow = S->prow;
    } else {
        prow += (size_t)S->q.res[i] * tlen;
    }
    hc[0] = 0;
    fc[0] = NEG;
    row_open(hp, fp, prow, hc, fc, tlen, goe, ge);
    const int32_t *forb = S->fcol + i * S->fcap;
    for (uint32_t k = 0; k < S->fn[i]; k++) /* no diagonal step into a forbidden pair */
        hc[forb[k] + 1] = max2(0, fc[forb[k] + 1]);
    int32_t e = NEG, best = 0;
    int64_t bc = 0;
    if (ec)
        ec[0] = NEG;
    for (size_t j = 1; j <= tlen; j++) {
        e = max2(e - ge, hc[j - 1] - goe);
        int32_t h = max2(hc[j], e);
        hc[j] = h;
        if (ec)
            ec[j] = e;
        if (h > best) {
            best = h;
            bc = (int64_t)j;
        }
    }
    *col = bc;
    return best;
}

/* Cell (i, j) of the whole matrix (1-based; row 0 and column 0 the border)
 * from its neighbours above and e, its E; returns H and sets *f. */
static inline int32_t cell(const swgpu__hsps_t *S, size_t i, size_t j, int32_t e, int32_t *f)
{
    const size_t W = S->tlen + 1, at = i * W + j;
    int32_t fv = max2(S->F[at - W] - S->ge, S->H[at - W] - (S->go + S->ge));
    int32_t h = max2(0, max2(e, fv));
    if (allowed(S, i - 1, (int64_t)j - 1))
        h = max2(h, S->H[at - W - 1] + sc(S, i - 1, S->t[j - 1]));
    *f = fv;
    return h;
}

/* row i's best H and its first column */
static void row_max(swgpu__hsps_t *S, size_t i)
{
    const int32_t *h = S->H + i * (S->tlen + 1);
    int32_t b = 0;
    int64_t c = 0;
    for (size_t j = 1; j <= S->tlen; j++)
        if (h[j] > b) {
            b = h[j];
            c = (int64_t)j;
        }
    S->rmax[i] = b;
    S->rcol[i] = c;
}

/* the whole matrix, with the pairs forbidden so far */
static void full_pass(swgpu__hsps_t *S)
{
    const size_t W = S->tlen + 1;
    for (size_t j = 0; j < W; j++) {
        S->H[j] = 0;
        S->F[j] = NEG;
    }
    S->rmax[0] = 0;
    S->rcol[0] = 0;
    for (size_t i = 1; i <= S->q.len; i++) {
        size_t at = i * W;
        S->rmax[i] = row_pass(S, i - 1, S->H + at - W, S->F + at - W, S->H + at, NULL,
                              S->F + at, &S->rcol[i]);
    }
    S->valid = 1;
}

/*
 * After pairs (i, nc[i - r0]) were forbidden (nc -1: none in that row), the
 * cells whose values change: a cell is recomputed when one of its inputs
 * changed (the row above: H or F at j, H at j - 1; this row: E, which is
 * kept along the row from H, old and new) or it is a newly forbidden pair;
 * rows end when nothing changes.
 */
static void update(swgpu__hsps_t *S, size_t r0, size_t r1, const int64_t *nc)
{
    const size_t W = S->tlen + 1;
    uint8_t *prev = S->chg, *cur = S->chg + W;
    int64_t plo = 1, phi = 0; /* the previous row's changed columns */
    for (size_t i = r0 + 1; i <= S->q.len; i++) {
        int64_t seed = i - 1 < r1 && nc[i - 1 - r0] >= 0 ? nc[i - 1 - r0] + 1 : -1;
        if (phi < plo && seed < 0) {
            if (i - 1 >= r1)
                break;
            continue;
        }
        int64_t lo = phi >= plo ? plo : seed, hi = phi >= plo ? phi + 1 : seed;
        if (seed >= 0 && seed < lo)
            lo = seed;
        if (seed > hi)
            hi = seed;
        int64_t clo = (int64_t)W, chi = -1;
        int rescan = 0;
        size_t at = i * W;
        const int32_t ge = S->ge, goe = S->go + S->ge;
        int32_t eo = NEG; /* E(i, lo - 1), from the row's H before lo (unchanged) */
        for (int64_t j = 1; j < lo; j++)
            eo = max2(eo - ge, S->H[at + j - 1] - goe);
        int32_t en = eo, ho = S->H[at + lo - 1], hn = ho; /* old and new, at j - 1 */
        for (int64_t j = lo; j < (int64_t)W; j++) {
            eo = max2(eo - ge, ho - goe);
            en = max2(en - ge, hn - goe);
            int echg = eo != en;
            if (j > hi && !echg)
                break;
            int32_t hold = S->H[at + j];
            if (!(echg || prev[j] || prev[j - 1] || j == seed)) {
                ho = hn = hold;
                continue;
            }
            int32_t f, h = cell(S, i, (size_t)j, en, &f);
            int ch = h != hold, cf = f != S->F[at + j];
            if (ch && hold == S->rmax[i])
                rescan = 1;
            S->H[at + j] = h;
            S->F[at + j] = f;
            ho = hold;
            hn = h;
            if (ch || cf) {
                cur[j] = 1;
                if (j < clo)
                    clo = j;
                chi = j;
            }
        }
        if (phi >= plo)
            memset(prev + plo, 0, (size_t)(phi - plo + 1));
        uint8_t *x = prev;
        prev = cur;
        cur = x;
        plo = clo;
        phi = chi;
        if (rescan)
            row_max(S, i);
    }
    if (phi >= plo)
        memset(prev + plo, 0, (size_t)(phi - plo + 1));
}

/* The best end in the whole matrix: score and exclusive ends (tie rule of
 * swgpu__ref_score) */
static int32_t best_full(const swgpu__hsps_t *S, int64_t *qe, int64_t *te)
{
    int32_t b = 0;
    int64_t bi = 0, bj = 0;
    for (size_t i = 1; i <= S->q.len; i++)
        if (S->rmax[i] > b || (S->rmax[i] == b && b > 0 && S->rcol[i] < bj)) {
            b = S->rmax[i];
            bi = (int64_t)i;
            bj = S->rcol[i];
        }
    *qe = bi;
    *te = bj;
    return b;
}

/* The same in linear memory: one pass over the matrix */
static int32_t best_linear(swgpu__hsps_t *S, int64_t *qe, int64_t *te)
{
    const size_t W = S->tlen + 1;
    int32_t *hp = S->row, *fp = S->row + W, *hc = S->row + 2 * W, *fc = S->row + 3 * W, b = 0;
    int64_t bi = 0, bj = 0;
    for (size_t j = 0; j < W; j++) {
        hp[j] = 0;
        fp[j] = NEG;
    }
    for (size_t i = 1; i <= S->q.len; i++) {
        int64_t c;
        int32_t r = row_pass(S, i - 1, hp, fp, hc, NULL, fc, &c);
        if (r > b || (r == b && b > 0 && c < bj)) {
            b = r;
            bi = (int64_t)i;
            bj = c;
        }
        int32_t *x = hp;
        hp = hc;
        hc = x;
        x = fp;
        fp = fc;
        fc = x;
    }
    *qe = bi;
    *te = bj;
    return b;
}

/* ------------------------------------------------------ the begin's pass */

/*
 * The begin of an alignment scoring s that ends with pair (qe-1, te-1):
 * the anchored recurrence run backwards from the end (rows of query
 * positions qe-1 down, columns of target positions te-1 down, index k =
 * te - j), values <= 0 dropped.  Among the cells where an alignment that
 * opens with the pair reaches s: the largest target begin, then the
 * largest query begin.
 */
static int begin_pass(swgpu__hsps_t *S, int32_t s, int64_t qe, int64_t te, int64_t *qb,
                      int64_t *tb)
{
    const size_t W = (size_t)te + 1;
    const int32_t goe = S->go + S->ge;
    int32_t *Hp = S->row, *Fp = S->row + W, *Hc = S->row + 2 * W, *Fc = S->row + 3 * W;
    int64_t plo = 0, phi = 0, btb = -1, bqb = -1;
    Hp[0] = 0;
    Fp[0] = NEG;
    for (int64_t qi = qe - 1; qi >= 0; qi--) {
        int64_t lo = plo > 1 ? plo : 1, clo = (int64_t)W, chi = -1;
        int32_t e = NEG;
        Hc[lo - 1] = NEG;
        for (int64_t k = lo; k < (int64_t)W; k++) {
            e = max2(e - S->ge, Hc[k - 1] - goe);
            if (e <= 0)
                e = NEG;
            if (k > phi + 1 && e == NEG)
                break;
            int64_t tj = te - k;
            int32_t d = NEG, f = NEG;
            if (k - 1 >= plo && k - 1 <= phi && Hp[k - 1] > NEG && allowed(S, (size_t)qi, tj))
                d = Hp[k - 1] + sc(S, (size_t)qi, S->t[tj]);
            if (k >= plo && k <= phi)
                f = max2(Fp[k] - S->ge, Hp[k] - goe);
            if (f <= 0)
                f = NEG;
            if (d == s && (tj > btb || (tj == btb && qi > bqb))) {
                btb = tj;
                bqb = qi;
            }
            int32_t h = max2(d, max2(e, f));
            if (h <= 0)
                h = NEG;
            Hc[k] = h;
            Fc[k] = f;
            if (h > NEG || f > NEG) {
                if (k < clo)
                    clo = k;
                chi = k;
            }
        }
        if (chi < 0)
            break;
        int32_t *x = Hp;
        Hp = Hc;
        Hc = x;
        x = Fp;
        Fp = Fc;
        Fc = x;
        plo = clo;
        phi = chi;
    }
    if (btb < 0)
        return swgpu__fail(SWGPU_EINVAL, "further alignments: internal error: no begin reaches "
                           "score %d at end (%lld, %lld)", (int)s, (long long)qe, (long long)te);
    *qb = bqb;
    *tb = btb;
    return SWGPU_OK;
}

/* ------------------------------------------------------ the path */

/* 1 if a forbidden pair lies in [qb, qe) x [tb, te) */
static int forbidden_in(const swgpu__hsps_t *S, int64_t qb, int64_t qe, int64_t tb, int64_t te)
{
    for (int64_t i = qb; i < qe; i++)
        for (uint32_t k = 0; k < S->fn[i]; k++) {
            int32_t j = S->fcol[(size_t)i * S->fcap + k];
            if (j >= tb && j < te)
                return 1;
        }
    return 0;
}

enum { FROM_M = 0, FROM_I = 1, FROM_D = 2, I_EXT = 4, D_EXT = 8 };

/* Append op (n of them, in reverse order) to S->ops */
static int push_op(swgpu__hsps_t *S, uint8_t op)
{
    if (S->n_ops == S->cap_ops) {
        size_t c = S->cap_ops ? 2 * S->cap_ops : 1024;
        uint8_t *p = realloc(S->ops, c);
        if (!p)
            return swgpu__fail(SWGPU_ENOMEM, "further alignments: out of memory for a path");
        S->ops = p;
        S->cap_ops = c;
    }
    S->ops[S->n_ops++] = op;
    return SWGPU_OK;
}

/* S->ops (reversed) as a CIGAR in a */
static int ops_cigar(swgpu__hsps_t *S, swgpu_aln_t *a)
{
    a->n_cigar = 0;
    for (size_t k = S->n_ops; k-- > 0;) {
        uint32_t op = S->ops[k];
        if (a->n_cigar && SWGPU_CIGAR_OP(a->cigar[a->n_cigar - 1]) == op) {
            a->cigar[a->n_cigar - 1] += 1u << 4;
            continue;
        }
        if (a->n_cigar == a->m_cigar) {
            size_t c = a->m_cigar ? 2 * a->m_cigar : 16;
            uint32_t *p = realloc(a->cigar, c * sizeof *p);
            if (!p)
                return swgpu__fail(SWGPU_ENOMEM, "further alignments: out of memory for a CIGAR");
            a->cigar = p;
            a->m_cigar = c;
        }
        a->cigar[a->n_cigar++] = (1u << 4) | op;
    }
    return SWGPU_OK;
}

/*
 * The path of a->score from pair (qbeg, tbeg) to pair (qend-1, tend-1),
 * both aligned, avoiding the forbidden pairs: the anchored recurrence over
 * the rectangle with one byte of directions per cell, then the traceback.
 * Ties as path.c's blocks: H prefers M, then I, then D; a gap state
 * prefers opening over extending.
 */
static int path_full(swgpu__hsps_t *S, swgpu_aln_t *a)
{
    const size_t R = (size_t)(a->qend - a->qbeg), C = (size_t)(a->tend - a->tbeg);
    const int32_t goe = S->go + S->ge;
    if (R * C > S->cap_dir) {
        uint8_t *p = realloc(S->dir, R * C);
        if (!p)
            return swgpu__fail(SWGPU_ENOMEM, "further alignments: out of memory for a path of "
                               "%zu x %zu cells", R, C);
        S->dir = p;
        S->cap_dir = R * C;
    }
    /* rows: H and F of the row above (index c + 1; index 0 the border) */
    int32_t *Hp = S->row, *Fp = S->row + (C + 1), *Hc = S->row + 2 * (C + 1);
    for (size_t c = 0; c <= C; c++) {
        Hp[c] = NEG;
        Fp[c] = NEG;
    }
    Hp[0] = 0; /* the origin: only the first pair leaves it */
    int32_t last = NEG;
    for (size_t r = 0; r < R; r++) {
        size_t qi = (size_t)a->qbeg + r;
        int32_t e = NEG;
        Hc[0] = NEG;
        for (size_t c = 0; c < C; c++) {
            size_t tj = (size_t)a->tbeg + c;
            uint8_t d = 0;
            int32_t m = NEG;
            if (Hp[c] > NEG && allowed(S, qi, (int64_t)tj))
                m = Hp[c] + sc(S, qi, S->t[tj]);
            int32_t eo = Hc[c] - goe, ee = e - S->ge;
            e = eo >= ee ? eo : ee;
            if (eo < ee)
                d |= D_EXT;
            int32_t fo = Hp[c + 1] - goe, fe = Fp[c + 1] - S->ge;
            int32_t f = fo >= fe ? fo : fe;
            if (fo < fe)
                d |= I_EXT;
            if (e < NEG)
                e = NEG;
            if (f < NEG)
                f = NEG;
            int32_t h = m;
            if (f > h) {
                h = f;
                d |= FROM_I;
            }
            if (e > h) {
                h = e;
                d = (uint8_t)((d & ~3) | FROM_D);
            }
            if (r == 0 && c == 0)
                Hp[0] = NEG; /* the origin feeds (0, 0) only */
            Fp[c + 1] = f;
            Hc[c + 1] = h;
            S->dir[r * C + c] = d;
            if (r == R - 1 && c == C - 1)
                last = m;
        }
        int32_t *x = Hp;
        Hp = Hc;
        Hc = x;
    }
    if (last != a->score)
        return swgpu__fail(SWGPU_EINVAL, "further alignments: internal error: the path of "
                           "[%lld,%lld) x [%lld,%lld) scores %d, not %d", (long long)a->qbeg,
                           (long long)a->qend, (long long)a->tbeg, (long long)a->tend, (int)last,
                           (int)a->score);
    /* the traceback: state 0 M, 1 I (F), 2 D (E), 3 H */
    S->n_ops = 0;
    int64_t r = (int64_t)R - 1, c = (int64_t)C - 1;
    int st = 0, rc;
    while (r >= 0 && c >= 0) {
        uint8_t d = S->dir[(size_t)r * C + (size_t)c];
        if (st == 3)
            st = (d & 3) == FROM_M ? 0 : (d & 3) == FROM_I ? 1 : 2;
        if (st == 0) {
            if ((rc = push_op(S, SWGPU_CIGAR_M)) < 0)
                return rc;
            r--;
            c--;
            st = 3;
        } else if (st == 1) {
            if ((rc = push_op(S, SWGPU_CIGAR_I)) < 0)
                return rc;
            st = d & I_EXT ? 1 : 3;
            r--;
        } else {
            if ((rc = push_op(S, SWGPU_CIGAR_D)) < 0)
                return rc;
            st = d & D_EXT ? 2 : 3;
            c--;
        }
    }
    if (r != -1 || c != -1)
        return swgpu__fail(SWGPU_EINVAL, "further alignments: internal error: the traceback of "
                           "[%lld,%lld) x [%lld,%lld) leaves its rectangle", (long long)a->qbeg,
                           (long long)a->qend, (long long)a->tbeg, (long long)a->tend);
    return ops_cigar(S, a);
}

/* ------------------------------------------------------ the interface */

int swgpu__hsps_forbid(swgpu__hsps_t *S, const swgpu_aln_t *a)
{
    int64_t qi = a->qbeg, tj = a->tbeg, r0 = a->qbeg, r1 = a->qend;
    int64_t *nc = NULL;
    if (a->qbeg < 0 || a->qend > (int64_t)S->q.len || a->tbeg < 0 || a->tend > (int64_t)S->tlen)
        return swgpu__fail(SWGPU_EINVAL, "further alignments: an alignment [%lld,%lld) x "
                           "[%lld,%lld) runs off its %zu x %zu pair", (long long)a->qbeg,
                           (long long)a->qend, (long long)a->tbeg, (long long)a->tend, S->q.len,
                           S->tlen);
    if (S->valid && r1 > r0 && !(nc = malloc((size_t)(r1 - r0) * sizeof *nc)))
        return swgpu__fail(SWGPU_ENOMEM, "further alignments: out of memory");
    for (int64_t i = r0; nc && i < r1; i++)
        nc[i - r0] = -1;
    for (size_t k = 0; k < a->n_cigar; k++) {
        unsigned op = SWGPU_CIGAR_OP(a->cigar[k]);
        int64_t len = SWGPU_CIGAR_LEN(a->cigar[k]);
        if (op == SWGPU_CIGAR_I) {
            qi += len;
            continue;
        }
        if (op == SWGPU_CIGAR_D) {
            tj += len;
            continue;
        }
        for (int64_t x = 0; x < len; x++, qi++, tj++) {
            if (qi >= r1 || tj >= a->tend) {
                free(nc);
                return swgpu__fail(SWGPU_EINVAL, "further alignments: a CIGAR runs off its "
                                   "alignment");
            }
            if (S->fn[qi] == S->fcap) { /* every row gets room for one more */
                size_t cap = 2 * S->fcap, ql = S->q.len;
                int32_t *p = malloc(ql * cap * sizeof *p);
                if (!p) {
                    free(nc);
                    return swgpu__fail(SWGPU_ENOMEM, "further alignments: out of memory");
                }
                for (size_t i = 0; i < ql; i++)
                    memcpy(p + i * cap, S->fcol + i * S->fcap, S->fn[i] * sizeof *p);
                free(S->fcol);
                S->fcol = p;
                S->fcap = cap;
            }
            int32_t *row = S->fcol + (size_t)qi * S->fcap; /* kept in ascending order */
            uint32_t at = S->fn[qi]++;
            for (; at > 0 && row[at - 1] > tj; at--)
                row[at] = row[at - 1];
            row[at] = (int32_t)tj;
            if (nc)
                nc[qi - r0] = tj;
        }
    }
    if (nc)
        update(S, (size_t)r0, (size_t)r1, nc);
    free(nc);
    return SWGPU_OK;
}

int swgpu__hsps_next(swgpu__hsps_t *S, int32_t min_score, swgpu_aln_t *out)
{
    int64_t qe, te, qb = 0, tb = 0;
    int32_t s;
    int rc;
    out->n_cigar = 0;
    /* the 16-bit pass when its lanes hold the scores, else the kept matrix
     * (computed once, then updated) or a linear pass */
    if ((S->full && S->valid) || S->no16)
        rc = 0;
    else if ((rc = swgpu__hsps_bound(S, &s, &qe, &te)) < 0)
        return rc;
    if (rc == 0) {
        if (S->full && !S->valid)
            full_pass(S);
        s = S->full ? best_full(S, &qe, &te) : best_linear(S, &qe, &te);
    }
    out->score = s;
    out->qbeg = out->qend = out->tbeg = out->tend = 0;
    out->length = out->n_ident = out->n_mismatch = out->n_gapopen = out->n_gaps = 0;
    if (s <= 0 || s < min_score)
        return SWGPU_OK;
    if ((rc = begin_pass(S, s, qe, te, &qb, &tb)) < 0)
        return rc;
    out->qbeg = qb;
    out->qend = qe;
    out->tbeg = tb;
    out->tend = te;
    if (!forbidden_in(S, qb, qe, tb, te)) { /* path.c's path in linear memory */
        swgpu__query_t sub = S->q;
        sub.res += qb;
        sub.len = (size_t)(qe - qb);
        if (sub.rows)
            sub.rows += (size_t)qb * SWGPU_NCODES;
        rc = swgpu__align_from_begin_q(&sub, S->t + tb, (size_t)(te - tb), S->m, S->go, S->ge,
                                       s, 0, 0, qe - qb, te - tb, out, -1);
        out->qbeg += qb;
        out->qend += qb;
        out->tbeg += tb;
        out->tend += tb;
    } else if ((size_t)(qe - qb) <= HSPS_PATH_CELLS / (size_t)(te - tb)) {
        rc = path_full(S, out);
    } else {
        return swgpu__fail(SWGPU_ERANGE, "further alignments: an alignment of %lld x %lld "
                           "residues crosses an earlier one: more than the %zu cells its path "
                           "may take", (long long)(qe - qb), (long long)(te - tb),
                           HSPS_PATH_CELLS);
    }
    if (rc < 0)
        return rc;
    swgpu__aln_stats(out, S->q.res, S->t);
    return SWGPU_OK;
}
