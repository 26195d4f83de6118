/*
 * ref/ref.h - the scalar reference (src/ref/sw_ref.c): Smith-Waterman
 * scores and ends in plain C, the oracle every other backend is tested
 * against, the "ref" scan engine, and the scalar building blocks (query
 * profile, argument checks, the forward pass) that the begin and path
 * passes of src/align share.  Internal to libswgpu; nothing here keeps
 * state between calls (a swgpu__ref_prof_t is freed by its maker).
 *
 * Scoring used everywhere here: aligning query code a with target code b
 * scores m->s[a][b] (the *_q functions: or a PSSM's row of the query
 * position); a gap of length k costs gap_open + k*gap_extend.
 */
#ifndef SWGPU_REF_H
#define SWGPU_REF_H

#include "engine/engine.h"

/*
 * Smith-Waterman (Gotoh) local alignment score of q against t in O(qlen)
 * memory, 32-bit.  *score gets the best local score (0 when either length
 * is 0 or nothing scores above 0).  *qend / *tend get the EXCLUSIVE end of
 * the best alignment (last aligned index + 1) chosen by the tie rule: among
 * cells of maximal score, the smallest target end, then the smallest query
 * end.  Score 0 gives ends 0.  qend/tend may be NULL.
 * Returns SWGPU_EINVAL for negative or huge gaps, SWGPU_ERANGE when the
 * score could exceed 32 bits.  Thread-safe (allocates its own rows).
 */
int swgpu__ref_score(const uint8_t *q, size_t qlen, const uint8_t *t, size_t tlen,
                     const swgpu_matrix_t *m, int gap_open, int gap_extend,
                     int32_t *score, int64_t *qend, int64_t *tend);

/* The same for a query given as swgpu__query_t (residues with m's rows, or
 * a PSSM: score/score.h). */
int swgpu__ref_score_q(const swgpu__query_t *q, const uint8_t *t, size_t tlen,
                       const swgpu_matrix_t *m, int gap_open, int gap_extend, int32_t *score,
                       int64_t *qend, int64_t *tend);

/* ------------------------------------------------ scalar building blocks */

/* Minus infinity of the passes: below every real value (|v| < 2^29) and
 * still negative after a few gap costs. */
#define SWGPU__REF_NEG (-(1 << 30))

static inline int32_t swgpu__ref_max32(int32_t a, int32_t b)
{
    return a > b ? a : b;
}

/* The scores a query uses: the matrix's range, or its PSSM rows' (min16:
 * the least score above SWGPU__ALN_FORBID16, for swgpu__aln_fits16). */
typedef struct {
    int32_t min, max, min16;
} swgpu__ref_range_t;

/*
 * Scores of every query position against one target code.  With a profile
 * (prof[c*M + i] = s(q[i], c), built once per query) a row is a pointer;
 * without one (queries too long for a 32-row profile) the row is filled
 * into scratch on demand.  rows: a PSSM's score rows (row i for position
 * i), used instead of the matrix when set.
 */
typedef struct {
    const uint8_t *q;
    const int32_t *rows;
    size_t qlen;
    const swgpu_matrix_t *m;
    int32_t *prof; /* SWGPU_NCODES rows of qlen, or NULL */
} swgpu__ref_prof_t;

/* s(q[i], c): the matrix, or row i of a PSSM */
static inline int32_t swgpu__ref_qscore(const swgpu__ref_prof_t *p, size_t i, int c)
{
    return p->rows ? p->rows[i * SWGPU_NCODES + c] : p->m->s[p->q[i] & (SWGPU_NCODES - 1)][c];
}

/* Row of s(q[i], c) for all i; scratch holds qlen values. */
static inline const int32_t *swgpu__ref_prof_row(const swgpu__ref_prof_t *p, uint8_t c, int32_t *scratch)
{
    c &= SWGPU_NCODES - 1;
    if (p->prof)
        return p->prof + (size_t)c * p->qlen;
    for (size_t i = 0; i < p->qlen; i++)
        scratch[i] = swgpu__ref_qscore(p, i, c);
    return scratch;
}

static inline swgpu__ref_range_t swgpu__ref_range(const swgpu__query_t *Q, const swgpu_matrix_t *m)
{
    swgpu__ref_range_t r;
    swgpu__query_range(Q, m, &r.min, &r.max);
    /* a PSSM's: known ahead (each alignment used to scan its rows for it,
     * several times: 7 % of an iterated search's host time) */
    r.min16 = Q->rows ? Q->smin16 : r.min;
    return r;
}

/* Gap and matrix sanity shared by every entry point (SWGPU_EINVAL,
 * SWGPU_EMATRIX); the local and global passes' 32-bit range (SWGPU_ERANGE). */
int swgpu__ref_check_scoring(const swgpu_matrix_t *m, const swgpu__ref_range_t *r, int go, int ge);
int swgpu__ref_check_local(const swgpu__ref_range_t *r, size_t qlen, size_t tlen);
int swgpu__ref_check_global(const swgpu__ref_range_t *r, int go, int ge, size_t qlen, size_t tlen);
/* A query profile (no memory for it: rows filled on demand; SWGPU_OK). */
int swgpu__ref_prof_init(swgpu__ref_prof_t *p, const uint8_t *q, const int32_t *rows, size_t qlen,
                         const swgpu_matrix_t *m);
void swgpu__ref_prof_free(swgpu__ref_prof_t *p);
/* A PSSM's rows of positions [0, n) in reverse order (NULL for a plain
 * query; *rc set on failure). */
int32_t *swgpu__ref_rows_reversed(const int32_t *rows, size_t n, int *rc);
/* The local score pass (sw_ref.c): best score and its end by the tie rule;
 * H, E, scratch: qlen int32 each. */
void swgpu__ref_sw_fwd(const swgpu__ref_prof_t *p, const uint8_t *t, size_t tlen, int32_t go,
                       int32_t ge, int32_t *H, int32_t *E, int32_t *scratch, int32_t *score,
                       int64_t *qend, int64_t *tend);

#endif /* SWGPU_REF_H */
