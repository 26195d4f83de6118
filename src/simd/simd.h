/*
 * simd.h - the CPU engine's kernels, shared between cpu_engine.c (dispatch,
 * threads, overflow handling) and the per-instruction-set files
 * sw_avx512.c, sw_avx2.c, sw_sse41.c (each compiled with its own -m flags;
 * never call one without checking the CPU at run time).
 *
 * Layout (SWIPE-style, inter-sequence): a "batch" is as many database
 * sequences as a vector has lanes.  Its residues are interleaved column by
 * column: cols[j * lanes + l] is residue j of lane l's sequence, or
 * SWGPU__PAD past its end.  A kernel scores one query against one batch and
 * returns each lane's best local score.
 */
#ifndef SWGPU_SIMD_H
#define SWGPU_SIMD_H

#include "internal.h"

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

/**
 * Create the CPU engine's state for one instruction set (the engine's
 * create() calls this with the best supported one, or the one named by the
 * environment variable SWGPU_CPU_ISA=scalar|sse41|avx2|avx512).
 * SWGPU_ENODEV if the CPU lacks isa.  Destroy with swgpu__engine_cpu.destroy.
 */
int swgpu__cpu_engine_create_isa(const swgpu_db_t *db, const swgpu_matrix_t *m,
                                 const swgpu_opts_t *o, swgpu__isa_t isa, void **state);

/**
 * Exact local alignment score of q (residues with m's rows, or a PSSM)
 * against t, 32-bit scalar (Gotoh, linear memory).  work holds at least
 * 2 * (q->len + 1) int32.  Used for the scalar "instruction set".
 */
int32_t swgpu__cpu_score32(const swgpu__query_t *q, const uint8_t *t, size_t tlen,
                           const swgpu_matrix_t *m, int gap_open, int gap_extend,
                           int32_t *work);

/**
 * Exact local alignment score of one pair, however long, with the end of
 * the best alignment chosen by the tie rule (smallest target end, then
 * smallest query end): the same results as swgpu__ref_score, including its
 * argument checks (SWGPU_EINVAL, SWGPU_EMATRIX, SWGPU_ERANGE).  *qend and
 * *tend are exclusive ends (0 when the score is 0); either may be NULL.
 * 32-bit SIMD (Farrar striped over bands of query rows, the bands pipelined
 * over threads; 0 = all cores) in O(qlen + tlen) memory plus one row pair
 * per thread and band in flight; small pairs go to the scalar reference.
 * Thread-safe.
 */
int swgpu__cpu_score_pair(const uint8_t *q, size_t qlen, const uint8_t *t, size_t tlen,
                          const swgpu_matrix_t *m, int gap_open, int gap_extend, int threads,
                          int32_t *score, int64_t *qend, int64_t *tend);

/** The same with the instruction set and the band height forced (tests,
 *  benchmarks); band_rows 0 picks the default. */
int swgpu__cpu_score_pair_isa(const uint8_t *q, size_t qlen, const uint8_t *t, size_t tlen,
                              const swgpu_matrix_t *m, int gap_open, int gap_extend, int threads,
                              swgpu__isa_t isa, size_t band_rows, int32_t *score, int64_t *qend,
                              int64_t *tend);

/** Progress of swgpu__cpu_score_pair_ex: cells finished so far, called
 *  from the calling thread only (after each of its chunks). */
typedef void (*swgpu__pair_prog_fn)(void *user, uint64_t cells);

/** The same with a progress callback (NULL: none); isa and band_rows as
 *  in swgpu__cpu_score_pair_isa. */
int swgpu__cpu_score_pair_ex(const uint8_t *q, size_t qlen, const uint8_t *t, size_t tlen,
                             const swgpu_matrix_t *m, int gap_open, int gap_extend, int threads,
                             swgpu__isa_t isa, size_t band_rows, swgpu__pair_prog_fn prog,
                             void *prog_user, int32_t *score, int64_t *qend, int64_t *tend);

/** The same for a query given as swgpu__query_t (residues with m's rows, or
 *  a PSSM: internal.h). */
int swgpu__cpu_score_pair_q(const swgpu__query_t *q, const uint8_t *t, size_t tlen,
                            const swgpu_matrix_t *m, int gap_open, int gap_extend, int threads,
                            swgpu__isa_t isa, size_t band_rows, swgpu__pair_prog_fn prog,
                            void *prog_user, int32_t *score, int64_t *qend, int64_t *tend);

#endif /* SWGPU_SIMD_H */
