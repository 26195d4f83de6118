/*
 * align/hsps_bound.c - the best score of a pair's next further alignment
 * (swgpu__hsps_t's recurrence with its forbidden pairs) in 16-bit lanes and
 * linear memory, without its ends: Farrar's striped layout along the
 * target (one vector of 16 lanes per segment), rows along the query, the
 * gaps along the target by the lazy loop.  A forbidden pair's diagonal
 * step scores far below any reachable H.  hsps.c asks it first and skips
 * the exact pass (the kept matrix or its linear pass) when the score
 * cannot reach the caller's minimum.
 *
 * Exactness: H >= 0 and E, F >= -(gap_open + gap_extend) by construction;
 * values <= 0 of E and F never raise an H, so the recurrence's positive
 * values are Gotoh's.  A score above BOUND_MAX - (the best pair score) is
 * reported as not known (the first overflow would follow such an H, which
 * the row maxima see), as is a pair whose scores or gaps do not fit.
 */
#include "align/align.h"

#include <stdint.h>
#include <string.h>

#define LANES 16
#define FORB ((int16_t)-30000)     /* a forbidden or padded pair's score */
#define BOUND_MAX 30000           /* H above this minus the best pair score: not known */

typedef int16_t v16 __attribute__((vector_size(2 * LANES)));
typedef uint16_t u16v __attribute__((vector_size(2 * LANES)));

/* a + b wrapping, as the lanes do: a score past 32,767 wraps (the result is
 * then thrown away: swgpu__hsps_bound's limit sends such pairs to the 32-bit
 * passes); computed unsigned, where wrapping is defined */
#define VADD(a, b) ((v16)((u16v)(a) + (u16v)(b)))

/* macros, not functions: no vector crosses a call (its ABI differs between
 * the clones) */
#define VMAX(a, b) __extension__({ v16 a_ = (a), b_ = (b), m_ = a_ > b_; (a_ & m_) | (b_ & ~m_); })
/* lanes moved up one, lane 0 set to x */
#define VSHIFT(v, x) __extension__({                                                         \
    v16 v_ = (v);                                                                           \
    v16 r_ = __builtin_shufflevector(v_, v_, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14); \
    r_[0] = (x);                                                                            \
    r_; })

/* 1 if a lane of *m is set */
static inline int vany(const v16 *m)
{
    uint64_t w[4];
    memcpy(w, m, sizeof w);
    return (w[0] | w[1] | w[2] | w[3]) != 0;
}

#define VANY(m) __extension__({ v16 t_ = (m); vany(&t_); })

static inline int16_t vhmax(const v16 *v)
{
    int16_t b = (*v)[0];
    for (int l = 1; l < LANES; l++)
        b = (*v)[l] > b ? (*v)[l] : b;
    return b;
}

/* The first target position of row h (seg vectors) whose H is r */
static size_t first_col(const v16 *h, size_t seg, int16_t r)
{
    size_t best = SIZE_MAX;
    for (size_t k = 0; k < seg; k++)
        for (size_t l = 0; l < LANES; l++)
            if (h[k][l] == r && l * seg + k < best)
                best = l * seg + k;
    return best;
}

/* Row by row over the query: prof[i] the row's striped scores, its
 * forbidden positions set to FORB while the row runs; returns the best H and its end as best_full
 * chooses it (smallest target end, then smallest query end; 1-based). */
SWGPU_CLONES_AVX2
static int32_t striped(v16 *restrict vH, v16 *restrict vHn, v16 *restrict vF,
                       v16 *const *prof, const swgpu__hsps_t *S, int16_t *save, size_t seg,
                       int16_t goe, int16_t ge, int64_t *qe, int64_t *te)
{
    const size_t qlen = S->q.len;
    const v16 zero = {0}, vgoe = zero + goe, vge = zero + ge;
    int16_t b = 0;
    size_t bi = 0, bj = 0;
    for (size_t k = 0; k < seg; k++) {
        vH[k] = zero;
        vF[k] = (zero - goe);
    }
    for (size_t i = 0; i < qlen; i++) {
        const v16 *p = prof[i];
        const int32_t *fc = S->fcol + i * S->fcap;
        for (uint32_t f = 0; f < S->fn[i]; f++) { /* the row's forbidden pairs, till its end */
            int16_t *x = (int16_t *)prof[i] + ((size_t)fc[f] % seg) * LANES + (size_t)fc[f] / seg;
            save[f] = *x;
            *x = FORB;
        }
        v16 e = (zero - goe), h = VSHIFT(vH[seg - 1], 0), rm = zero;
        for (size_t k = 0; k < seg; k++) {
            h = VMAX(VMAX(VADD(h, p[k]), zero), VMAX(vF[k], e));
            rm = VMAX(rm, h);
            vHn[k] = h;
            v16 g = h - vgoe;
            vF[k] = VMAX(vF[k] - vge, g);
            e = VMAX(e - vge, g);
            h = vH[k];
        }
        /* the lazy loop: E carried across the segments' lanes */
        e = VSHIFT(e, (int16_t)-goe);
        for (size_t k = 0; VANY(e > vHn[k] - vgoe);) {
            v16 hn = VMAX(vHn[k], e);
            vHn[k] = hn;
            rm = VMAX(rm, hn);
            vF[k] = VMAX(vF[k], hn - vgoe);
            e = e - vge;
            if (++k == seg) {
                k = 0;
                e = VSHIFT(e, (int16_t)-goe);
            }
        }
        for (uint32_t f = S->fn[i]; f-- > 0;) {
            int16_t *x = (int16_t *)prof[i] + ((size_t)fc[f] % seg) * LANES + (size_t)fc[f] / seg;
            *x = save[f];
        }
        int16_t r = vhmax(&rm);
        if (r > 0 && r >= b) {
            size_t j = first_col(vHn, seg, r);
            if (r > b || j < bj) {
                b = r;
                bi = i;
                bj = j;
            }
        }
        v16 *x = vH;
        vH = vHn;
        vHn = x;
    }
    *qe = b > 0 ? (int64_t)bi + 1 : 0;
    *te = b > 0 ? (int64_t)bj + 1 : 0;
    return b;
}

int swgpu__hsps_bound(const swgpu__hsps_t *S, int32_t *best, int64_t *qe, int64_t *te)
{
    const size_t tlen = S->tlen, qlen = S->q.len, seg = (tlen + LANES - 1) / LANES;
    const int32_t goe = S->go + S->ge;
    if (!tlen || !qlen) {
        *best = 0;
        *qe = *te = 0;
        return 1;
    }
    if (S->go < 0 || S->ge < 0 || goe > 1000)
        return 0;
    /* profiles: non-PSSM, one per code of the query; else one per row */
    int pssm = S->q.rows != NULL;
    size_t nprof = pssm ? qlen : SWGPU_NCODES;
    int16_t ix[SWGPU_NCODES];
    uint8_t used[SWGPU_NCODES] = {0};
    if (!pssm)
        for (size_t i = 0; i < qlen; i++)
            used[S->q.res[i] & (SWGPU_NCODES - 1)] = 1;
    size_t nused = 0;
    for (size_t c = 0; !pssm && c < SWGPU_NCODES; c++)
        ix[c] = used[c] ? (int16_t)nused++ : -1;
    if (!pssm)
        nprof = nused;
    uint32_t maxf = 0;
    for (size_t i = 0; i < qlen; i++)
        maxf = S->fn[i] > maxf ? S->fn[i] : maxf;
    size_t nvec = 3 * seg + nprof * seg;
    v16 *mem = NULL;
    v16 **prof = malloc(qlen * sizeof *prof);
    int16_t *save = malloc((maxf + 1) * sizeof *save);
    if (!prof || !save || posix_memalign((void **)&mem, 64, nvec * sizeof(v16)) != 0) {
        free(prof);
        free(save);
        return swgpu__fail(SWGPU_ENOMEM, "further alignments: out of memory for a pair of "
                           "%zu x %zu residues", qlen, tlen);
    }
    v16 *vH = mem, *vHn = mem + seg, *vF = mem + 2 * seg, *P = mem + 3 * seg;
    int32_t smax = 0;
    int ok = 1;
    for (size_t r = 0; r < nprof; r++) {
        int16_t *d = (int16_t *)(P + r * seg);
        const int32_t *row = NULL, *mrow = NULL;
        if (pssm) {
            mrow = S->q.rows + r * SWGPU_NCODES;
        } else {
            size_t c = 0;
            while (ix[c] != (int16_t)r)
                c++;
            row = S->m->s[c];
        }
        for (size_t k = 0; k < seg; k++)
            for (size_t l = 0; l < LANES; l++) {
                size_t j = l * seg + k;
                int32_t v = FORB;
                if (j < tlen)
                    v = pssm ? mrow[S->t[j]] : row[S->t[j]];
                if (v < FORB)
                    v = FORB;
                if (v > smax)
                    smax = v;
                d[k * LANES + l] = (int16_t)(v > 1000 ? 1000 : v);
                ok &= v <= 1000;
            }
    }
    for (size_t i = 0; i < qlen; i++)
        prof[i] = P + (pssm ? i : (size_t)ix[S->q.res[i] & (SWGPU_NCODES - 1)]) * seg;
    int32_t b = ok ? striped(vH, vHn, vF, prof, S, save, seg, (int16_t)goe,
                                (int16_t)S->ge, qe, te) : 0;
    free(mem);
    free(prof);
    free(save);
    if (!ok || b > BOUND_MAX - smax)
        return 0;
    *best = b;
    return 1;
}
