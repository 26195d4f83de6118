/*
 * aln_simd.h - SIMD kernels for the alignment of one pair after its end is
 * known (src/ref/sw_ref.c: the reverse pass of swgpu__ref_start and the
 * Myers-Miller passes and base blocks of swgpu__ref_path).  The kernels live
 * in aln_sse41.c and aln_avx2.c (one template, aln_template.h, each built
 * with its own -m flags); aln_dispatch.c picks one at run time.
 *
 * Every kernel computes the same global (anchored) Gotoh recurrence as the
 * scalar code in sw_ref.c, with the same 32-bit integer arithmetic, in
 * Farrar's striped layout with a lazy-F sweep: each value it hands back
 * (H, E, M, F of a cell) is the exact value of the scalar code, so every
 * decision taken from them (the begin, the Myers-Miller split, the
 * traceback bits) is the same.
 *
 * The recurrence, x along the striped dimension (columns i = 1..w), y along
 * the rows (r = 1..h), s = st[y code * 32 + x code], or with per-column
 * score rows (a PSSM query) s = xrows[(i-1) * 32 + y code]:
 *   E(i,r) = max(E(i,r-1) - ge, H(i,r-1) - oe)
 *   M(i,r) = H(i-1,r-1) + s(x[i-1], y[r-1])
 *   F(i,r) = max(F(i-1,r) - ge, H(i-1,r) - oe)
 *   H(i,r) = max(M, E, F)
 * with the borders H(i,0) = -(go + i*ge), E(i,0) = NEG; column 0:
 *   E(0,r) = max(E(0,r-1) - ge, H(0,r-1) - oe), H(0,r) = E(0,r), H(0,0) = 0,
 *   E(0,0) = e0 (the job's seed), F(1,r) = H(0,r) - oe.
 */
#ifndef SWGPU_ALN_SIMD_H
#define SWGPU_ALN_SIMD_H

#include "internal.h"

#include <stddef.h>
#include <stdint.h>

/** "Minus infinity" of the alignment kernels, the same as sw_ref.c's NEG. */
#define SWGPU__ALN_NEG (-(1 << 30))

enum {
    SWGPU__ALN_PASS = 0,  /* all rows; CC[i] = H(i,h), DD[i] = E(i,h), i = 0..w */
    SWGPU__ALN_START = 1, /* stop at the first row whose max over i of M(i,r) >= score */
    SWGPU__ALN_BASE = 2,  /* all rows, with a traceback byte per cell into dir */
    SWGPU__ALN_LOCAL = 3  /* local score (H also floored at 0, H(i,0) = H(0,r) = 0)
                           * and its end by swgpu__ref_score's tie rule */
};

/* traceback byte (as sw_ref.c's mm_base): bits 0-1 the state H came from
 * (0 M, 1 I = F, 2 D = E), bit 2 F extended, bit 3 E extended */
enum { SWGPU__TB_M = 0, SWGPU__TB_I = 1, SWGPU__TB_D = 2, SWGPU__TB_IEXT = 4, SWGPU__TB_DEXT = 8 };

/**
 * One job.  Inputs: x (w >= 1), y (h >= 1), st, or xrows (NULL: st scores;
 * else w rows of SWGPU_NCODES scores, row i-1 for column i, and x is not
 * read), go, ge, e0, mode, score (START), CC/DD (PASS), dir (BASE), work
 * (swgpu__aln_work_bytes bytes, 64-byte aligned).  Outputs as the mode
 * says:
 *  PASS   CC, DD (w+1 each, plain order)
 *  START  found_i, found_r: the first row r (smallest) with max M == score
 *         and in it the smallest column i with M(i,r) == score; 0, 0 when
 *         no row reaches score; over: the row maximum when a row's maximum
 *         exceeds score first (then found_* are 0), else 0
 *  LOCAL  best: the best local score; found_i, found_r: the end of the
 *         first cell reaching it in row-major order (smallest r, then i),
 *         0, 0 when best is 0.  (e0 unused.)
 *  BASE   dir: (h+1) rows of stride S*L + 1 bytes; the byte of cell (i,r)
 *         is dir[r*(S*L+1) + (i ? 1 + ((i-1)%S)*L + (i-1)/S : 0)]; row 0
 *         and column 0 as mm_base writes them.  lastM, lastI, lastD: M, F,
 *         E of cell (w,h).  S, L: the stripe (S = ceil(w/L), L lanes).
 */
typedef struct {
    const uint8_t *x, *y;
    size_t w, h;
    const int32_t *st;
    const int32_t *xrows;
    int32_t go, ge, e0;
    int mode;
    int32_t score;
    int32_t *CC, *DD;
    uint8_t *dir;
    void *work;
    size_t S, L;
    int64_t found_i, found_r;
    int32_t over;
    int32_t lastM, lastI, lastD;
    int32_t best;
} swgpu__aln_job_t;

typedef void (*swgpu__aln_fn)(swgpu__aln_job_t *job);

/** The kernels of one instruction set. */
typedef struct {
    const char *name;
    int isa;        /* swgpu__isa_t */
    size_t lanes;   /* 32-bit lanes */
    swgpu__aln_fn run;
    size_t lanes16; /* 16-bit lanes (saturating), exact when swgpu__aln_fits16 */
    swgpu__aln_fn run16;
} swgpu__aln_kernels_t;

/** Scores at or below this are "forbidden" for swgpu__aln_fits16: they
 *  are left out of smin (see there); they must fit int16. */
#define SWGPU__ALN_FORBID16 (-32000)

/**
 * 1 when the 16-bit kernel is exact for a job: every value it computes
 * then lies within +-12000.  The bounds: H >= -(2*go + (w+h)*ge) (an I gap
 * then a D gap; the column-0 seed is at most go), E, F >= H - oe,
 * M >= H + min s, the padding rows' top values >= -(go + (w+lanes)*ge);
 * H <= min(w,h) * max s in a pass, <= score in the reverse pass.  Values
 * derived from INT16_MIN then stay below -20000: no real value can be
 * confused with one, and saturation never changes a real value.  smin is
 * the least score above SWGPU__ALN_FORBID16: a score at or below it gives
 * M = H + s <= 12000 - 32000 (saturating at INT16_MIN), below every real H,
 * E, F and score, as its exact value is, so it decides nothing either way.
 */
static inline int swgpu__aln_fits16(size_t w, size_t h, size_t lanes16, int32_t go, int32_t ge,
                                    int smin, int smax, int32_t score)
{
    int64_t amin = smin < 0 ? -(int64_t)smin : smin, amax = smax < 0 ? -(int64_t)smax : smax;
    int64_t lo, hi;
    if (w > 100000 || h > 100000)
        return 0;
    lo = 2 * (int64_t)go + ((int64_t)w + (int64_t)h + 2 * (int64_t)lanes16) * ge +
         2 * ((int64_t)go + ge) + 2 * amin + 2 * amax;
    hi = (int64_t)(w < h ? w : h) * amax + amax;
    return lo < 12000 && hi < 12000 && score < 12000;
}

extern const swgpu__aln_kernels_t swgpu__aln_sse41;
extern const swgpu__aln_kernels_t swgpu__aln_avx2;

/**
 * 1 when the 16-bit kernel's LOCAL mode is exact: H <= min(w,h) * max s
 * stays below 30000 (negative E and F never raise an H floored at 0, so
 * their saturation does not matter) and the gap costs fit the lanes.
 */
static inline int swgpu__aln_local_fits16(size_t w, size_t h, int32_t go, int32_t ge, int smax)
{
    int64_t amax = smax < 0 ? 0 : smax;
    size_t n = w < h ? w : h;
    return n < 30000 && (int64_t)n * amax + amax < 30000 && (int64_t)go + ge < 16000;
}

/** Work bytes a job of width w needs with these kernels. */
static inline size_t swgpu__aln_work_bytes(const swgpu__aln_kernels_t *k, size_t w)
{
    size_t S = (w + k->lanes - 1) / k->lanes;
    return (5 + 32) * S * k->lanes * sizeof(int32_t) + S * k->lanes + 64;
}

/**
 * The kernels for isa (a swgpu__isa_t; avx512 uses the avx2 kernels), or
 * for isa < 0 the default: the best this CPU supports, or the one named by
 * SWGPU_CPU_ISA (scalar|sse41|avx2|avx512; an unknown or unsupported name
 * gives the best supported).  NULL means scalar (no SSE4.1, or asked for).
 */
const swgpu__aln_kernels_t *swgpu__aln_kernels(int isa);

/** A 64-byte aligned scratch buffer of at least bytes, owned by the calling
 *  thread and reused by its next call (freed when the thread exits), or
 *  for more than 8 MiB a buffer of its own; NULL when out of memory.  Hand
 *  it back with swgpu__aln_thread_work_done (same bytes) after use. */
void *swgpu__aln_thread_work(size_t bytes);
void swgpu__aln_thread_work_done(void *work, size_t bytes);

/**
 * Local score of q (residues with m's rows, or a PSSM) against t and its
 * end by swgpu__ref_score's tie rule
 * (smallest target end, then smallest query end), with the 16-bit LOCAL
 * kernel of isa (a swgpu__isa_t, < 0 the default) on the calling thread.
 * The caller checked the arguments (as swgpu__ref_score does).  Returns
 * SWGPU_OK, or 1 (nothing written) when the kernel does not apply: no
 * SIMD, an empty sequence, swgpu__aln_local_fits16 false, a query whose
 * scratch would exceed 8 MiB (about 110,000 residues), no memory.
 */
int swgpu__aln_local_score(const swgpu__query_t *q, const uint8_t *t, size_t tlen,
                           const swgpu_matrix_t *m, int gap_open, int gap_extend, int isa,
                           int32_t *score, int64_t *qend, int64_t *tend);

#endif /* SWGPU_ALN_SIMD_H */
