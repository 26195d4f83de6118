/*
 * simd/simd.h - the CPU kernels (never installed), shared between their
 * callers (src/cpu: the scan engine; src/align: one pair; src/long: the
 * strips) and the per-instruction-set files sw_avx512.c, sw_avx2.c,
 * sw_sse41.c, aln_avx2.c, aln_sse41.c (each compiled with its own -m flags;
 * never call one without checking the CPU: isa.c).  Kernels write only
 * into buffers their caller owns; nothing here fails but isa.c's reading
 * of SWGPU_CPU_ISA.
 *
 * Layout (SWIPE-style, inter-sequence): a "batch" is as many database
 * sequences as a vector has lanes.  Its residues are interleaved column by
 * column: cols[j * lanes + l] is residue j of lane l's sequence, or
 * SWGPU__PAD past its end.  A kernel scores one query against one batch and
 * returns each lane's best local score.
 */
#ifndef SWGPU_SIMD_H
#define SWGPU_SIMD_H

#include "score/score.h"

#include <stddef.h>
#include <stdint.h>

/** Residue code filling lanes past the end of their sequence (and empty
 *  lanes).  Its score against every query letter is the most negative value
 *  of the lane width, so nothing past a sequence's end can raise its score. */
#define SWGPU__PAD 31

/** Sequences are padded to a multiple of this many columns; kernels
 *  process this many database columns per pass over the query. */
#define SWGPU__COLS 4

typedef enum {
    SWGPU__ISA_SCALAR = 0,
    SWGPU__ISA_SSE41 = 1,
    SWGPU__ISA_AVX2 = 2,
    SWGPU__ISA_AVX512 = 3
} swgpu__isa_t;

/**
 * One query as the kernels see it (read-only, shared by all threads).
 *  q        query codes (< 32), qlen of them
 *  letters  the distinct codes in q, n_letters of them: profiles are built
 *           only for these
 *  row8     32 rows of 32 int8: row8[a*32 + b] = score(a, b) clamped to
 *           int8, row8[a*32 + SWGPU__PAD] = -128
 *  row16    the same with int16, pad -32768
 *  row16b   row16 split in byte planes, 32 rows of 64 bytes: bytes 0-31
 *           the low bytes of row16[a*32 + b], bytes 32-63 the high bytes
 *  gap_oe   gap_open + gap_extend: the cost of a gap's first residue
 *  gap_e    gap_extend
 * A PSSM query (the batch8p / batch16p kernels) has a row per position
 * instead (q and letters unused):
 *  prow8    qlen rows of 32 int8: prow8[i*32 + b] = score of position i
 *           against code b, clamped to int8, prow8[i*32 + SWGPU__PAD] = -128
 *  prow16   the same with int16, pad -32768
 *  prow16b  prow16 in byte planes, qlen rows of 64 bytes (as row16b)
 */
typedef struct {
    const uint8_t *q;
    size_t qlen;
    const uint8_t *letters;
    int n_letters;
    const int8_t *row8;
    const int16_t *row16;
    const uint8_t *row16b;
    const int8_t *prow8;
    const int16_t *prow16;
    const uint8_t *prow16b;
    int gap_oe, gap_e;
} swgpu__sw_query_t;

/** Lane refill: at column col (a multiple of SWGPU__COLS) the lanes whose
 *  bits are set in lanes start a new sequence. */
typedef struct {
    uint64_t col;
    uint64_t lanes;
} swgpu__sw_event_t;

/**
 * A batch kernel: scores the query against the sequences whose residues
 * are interleaved in cols (ncols columns, a multiple of SWGPU__COLS; lanes
 * as the kernel's width).
 *  events  nev refill events in ascending column order (NULL, 0: one
 *          sequence per lane)
 *  work    scratch of at least swgpu__sw_work_size(qlen, bytes) bytes,
 *          64-byte aligned, owned by the calling thread
 *  best    the best score of every sequence: first, event by event, one per
 *          set lane bit in ascending lane order (the sequences that ended
 *          before the event), then one per lane (the last sequences).
 *          Exact when below the width's ceiling (255 for 8 bits, 65535 for
 *          16 bits); equal to the ceiling when the sequence saturated (the
 *          caller rescores it wider).
 * Needs gap_oe <= 127 (8 bits) or 32767 (16 bits).
 */
typedef void (*swgpu__sw_batch_fn)(const swgpu__sw_query_t *qp, const uint8_t *cols,
                                   size_t ncols, const swgpu__sw_event_t *events, size_t nev,
                                   void *work, int32_t *best);

/* ------------------------------------------------------- long pairs */

/** "Minus infinity" of the 32-bit pair kernels: far below any score, far
 *  enough above INT32_MIN that subtracting a gap penalty cannot wrap. */
#define SWGPU__PAIR_NEG (-(1 << 29))

/**
 * One band of query rows for the striped pair kernel (pair_template.h):
 * rows r < S * lanes32, row r in lane r / S of vector r % S.
 *  prof    32 codes x S vectors: prof[(c * S + k) * lanes + l] = score of
 *          the band row l*S + k against target code c (SWGPU__PAIR_NEG for
 *          rows past the band's end)
 *  hp, hc  S vectors each: H of the previous column (in: the last column
 *          done; the kernel swaps the two as it goes), scratch
 *  e       S vectors: E entering the next column
 *  last_l, last_k  lane and vector of the band's last real row
 *  corner  H of the row above the band in the column before the first
 *          (0, unless the columns are a part of a split pass)
 */
typedef struct {
    const int32_t *prof;
    size_t S;
    int32_t *hp, *hc, *e;
    int gap_oe, gap_e;
    size_t last_k;
    int last_l;
    int32_t corner;
} swgpu__pair_band_t;

/** Best cell so far: score, column j, band row r (first column reaching the
 *  score, topmost row in it). */
typedef struct {
    int32_t score;
    int64_t j, r;
} swgpu__pair_best_t;

/**
 * Columns [j0, j1) of target t for one band.  top_h[j] / top_f[j]: H of the
 * row above the band and F entering its first row, column j (NULL for the
 * first band: 0 and minus infinity).  out_h / out_f: the same for the band
 * below, written for every column (NULL for the last band).  best is raised
 * on a strictly higher column maximum.
 */
typedef void (*swgpu__pair_cols_fn)(swgpu__pair_band_t *b, const uint8_t *t, size_t j0, size_t j1,
                                    const int32_t *top_h, const int32_t *top_f, int32_t *out_h,
                                    int32_t *out_f, swgpu__pair_best_t *best);

/**
 * One strip of the long aligner's CPU engine (strip_template.h): rows
 * r < S * lanes32, row r in lane r / S of vector r % S.
 *  prof    32 codes x S vectors as the pair band's (SWGPU__STRIP_PAD for
 *          rows past the strip's end)
 *  hp, hc  S vectors each: H of the column before the next one (the
 *          kernel swaps the two as it goes), scratch
 *  e       S vectors: E entering the next column
 *  last_k, last_l  vector and lane of the strip's last real row
 *  corner  H of the row above in the column before the next one
 *  local   1: zero floor (local region); 0: anchored (floor SWGPU__LONG_NEG)
 *  track   1: keep the best cell
 */
typedef struct {
    const int32_t *prof;
    size_t S;
    int32_t *hp, *hc, *e;
    int32_t gap_oe, gap_e;
    size_t last_k;
    int last_l;
    int32_t corner;
    int local, track;
} swgpu__strip_t;

/** Score of padding rows in a strip's profile: low enough to never win,
 *  high enough that H + it cannot wrap. */
/** Minus infinity of a strip's anchored region (survives subtractions);
 *  the long aligner's SWGPU__LONG_NEG is this value. */
#define SWGPU__STRIP_NEG (-(1 << 30))
#define SWGPU__STRIP_PAD (-(1 << 29))

/**
 * Columns [j0, j1) of t for one strip.  top_h[j] / top_f[j]: H and F of the
 * row above the strip at column j; out_h / out_f: H and F of the strip's
 * last row (may not alias top_h / top_f).  best (track) is raised on a
 * strictly higher column maximum: (score, column j, strip row r).
 */
typedef void (*swgpu__strip_cols_fn)(swgpu__strip_t *b, const uint8_t *t, size_t j0, size_t j1,
                                     const int32_t *top_h, const int32_t *top_f, int32_t *out_h,
                                     int32_t *out_f, swgpu__pair_best_t *best);

/** The kernels of one instruction set. */
typedef struct {
    const char *name;     /* "avx512", "avx2", "sse41" */
    swgpu__isa_t isa;
    int bytes;            /* vector width in bytes */
    int lanes8, lanes16;  /* lanes of the 8-bit and 16-bit kernels */
    swgpu__sw_batch_fn batch8, batch16;
    int lanes32;          /* lanes of the 32-bit pair kernel */
    swgpu__pair_cols_fn pair_cols;
    swgpu__sw_batch_fn batch8p, batch16p; /* the same for a PSSM query (prow8, prow16(b)) */
    swgpu__strip_cols_fn strip_cols; /* 32-bit lanes (lanes32) */
} swgpu__sw_kernels_t;

/** Scratch bytes a batch kernel needs for a query of qlen residues with
 *  vectors of vbytes bytes: H and E per query row plus the column profiles. */
static inline size_t swgpu__sw_work_size(size_t qlen, int vbytes)
{
    return (2 * (qlen + 1) + (size_t)SWGPU__COLS * SWGPU_NCODES) * (size_t)vbytes + 64;
}

extern const swgpu__sw_kernels_t swgpu__sw_avx512;
extern const swgpu__sw_kernels_t swgpu__sw_avx2;
extern const swgpu__sw_kernels_t swgpu__sw_sse41;

/** 1 if this CPU (and this build) can run the instruction set. */
int swgpu__cpu_isa_supported(swgpu__isa_t isa);
/** The best instruction set this CPU supports. */
swgpu__isa_t swgpu__cpu_isa_best(void);
/** "scalar", "sse41", "avx2", "avx512". */
const char *swgpu__cpu_isa_name(swgpu__isa_t isa);
/** The kernels of isa (NULL for scalar); the caller checked the CPU. */
const swgpu__sw_kernels_t *swgpu__cpu_kernels(swgpu__isa_t isa);
/** The instruction set SWGPU_CPU_ISA names (scalar|sse41|avx2|avx512), or
 *  the best one when it is unset or empty.  The one reader of the variable:
 *  SWGPU_EINVAL for an unknown name, SWGPU_ENODEV for a set this CPU
 *  lacks (*isa then holds the best). */
int swgpu__cpu_isa_env(swgpu__isa_t *isa);

/* ---------------------------------------------------- alignment kernels */
/*
 * The alignment kernels: SIMD rows for the alignment of one pair after its
 * end is known (src/align/begin.c: the reverse pass of swgpu__ref_start;
 * src/align/path.c: the Myers-Miller passes and base blocks of
 * swgpu__ref_path).  The kernels live
 * in aln_sse41.c and aln_avx2.c (one template, aln_template.h, each built
 * with its own -m flags); simd/isa.c picks one at run time.
 *
 * Every kernel computes the same global (anchored) Gotoh recurrence as the
 * scalar code in src/align, with the same 32-bit integer arithmetic, in
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
#include <stddef.h>
#include <stdint.h>

/** "Minus infinity" of the alignment kernels, the same as ref/ref.h's SWGPU__REF_NEG. */
#define SWGPU__ALN_NEG (-(1 << 30))

enum {
    SWGPU__ALN_PASS = 0,  /* all rows; CC[i] = H(i,h), DD[i] = E(i,h), i = 0..w */
    SWGPU__ALN_START = 1, /* stop at the first row whose max over i of M(i,r) >= score */
    SWGPU__ALN_BASE = 2,  /* all rows, with a traceback byte per cell into dir */
    SWGPU__ALN_LOCAL = 3  /* local score (H also floored at 0, H(i,0) = H(0,r) = 0)
                           * and its end by swgpu__ref_score's tie rule */
};

/* traceback byte (as src/align/path.c's mm_base): bits 0-1 the state H came from
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
/* (buffers up to this size stay with the thread) */
#define SWGPU__ALN_THREAD_KEEP ((size_t)8 << 20)
void *swgpu__aln_thread_work(size_t bytes);
void swgpu__aln_thread_work_done(void *work, size_t bytes);

#endif /* SWGPU_SIMD_H */
