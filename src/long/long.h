/*
 * long.h - internal pieces of the long pairwise aligner (align_long.c), its
 * CPU region engine (cpu.c, cpu_strip.c) and its CUDA engine (gpu*.c, gpu_kernels.cu).
 *
 * Everything the aligner computes is a batch of "regions": rectangles of the
 * dynamic-programming matrix over row residues x column residues, taken
 * from one of four sequences (a, b, reversed a, reversed b) at an offset.
 *
 * Vertex (i, j) of a region (0 <= i <= h, 0 <= j <= w) is the state after
 * i row residues and j column residues.  Cell (i, j), i, j >= 1, scores
 * row residue i against column residue j.  With oe = open + ext:
 *
 *   E(i,j) = max(E(i,j-1) - ext, H(i,j-1) - oe)      horizontal gap (D)
 *   F(i,j) = max(F(i-1,j) - ext, H(i-1,j) - oe)      vertical gap (I)
 *   H(i,j) = max(H(i-1,j-1) + s(r_i, c_j), E(i,j), F(i,j) [, 0 if local])
 *
 * Boundaries.  Local regions: H = 0, E = F = NEG on row 0 and column 0.
 * Anchored regions start at vertex (0,0) with H = h0, E = e0, F = f0:
 *   row 0:    E(0,j) = max(e0 - j*ext, h0 - open - j*ext), H(0,j) = E(0,j), F = NEG
 *   column 0: F(i,0) = max(f0 - i*ext, h0 - open - i*ext), H(i,0) = F(i,0), E = NEG
 * (no zero floor).  Both engines compute exactly these values, so any mix
 * of engines gives identical results.
 *
 * Pruning (regions with prune set; exact).  A block of a strip whose
 * inputs (its left column and the row above it) hold at most M can lead to
 * no cell above  max(M, 0) + smax * min(rows left, columns left)  in a
 * local region; when that is below the best score found so far (or
 * prune_best), the block is not computed and its outputs are replaced by
 * lower bounds (H 0, E = F = NEG).  Every cell of value >= the final best
 * lies on a path whose blocks all bound at least that value, so the best,
 * its tie-rule cell, and every value on an optimal path stay exact; other
 * saved values may be lower.  In an anchored region whose optimal paths
 * of interest all end at a known vertex (prune_i, prune_j) with a known
 * score (prune_best), a block is skipped when M plus the best score of any
 * path from the block to that vertex (min(dr, dc) * smax - |dr - dc| * ext
 * over the block's inputs, dr and dc the rows and columns to the vertex)
 * is below that score (outputs H = E = F = NEG): values on an optimal path
 * to the vertex stay exact, others may be lower.  The CUDA engine prunes
 * local regions only.
 *
 * Wide scores (sc->wide).  When values may pass 32
 * bits, the engines still compute in 32-bit lanes, relative to a 64-bit
 * base per block (CPU: SH rows x SWGPU__LONG_CHUNK columns; CUDA: a strip's
 * 32-column chunk, gpu_kernels.cu): the largest H of
 * the block's inputs, or 0 while that lies within +-SWGPU__LONG_DROP.
 * Exact values of neighbouring vertices differ by at most
 * K = smax + open + ext, so the exact values around a block lie within
 * (SH + CHUNK + 2) * K of each other; an input more than SWGPU__LONG_DROP
 * below the base is therefore a lower bound already (pruned), and becomes
 * minus infinity; and when the base is above SWGPU__LONG_DROP no exact value
 * of a local block is at the zero floor, so the floor goes too.  The
 * aligner allows wide scores only while (SH + CHUNK + 2) * K + open + ext
 * stays below 2^28, which keeps every relative value far from the 32-bit
 * limits.  Rows handed on and saved hold 32-bit values relative to a base
 * per CHUNK columns: saved_base[row * nbase + 0] for vertex column 0,
 * [row * nbase + 1 + (j - 1) / CHUNK] for vertex column j >= 1; a value
 * below SWGPU__LONG_INF32 is minus infinity whatever its base.
 *
 * Strips.  Both engines cut a region into strips of SWGPU__LONG_SH rows
 * (the last one may be shorter) computed left to right, each strip handing
 * its bottom row (H and F per column) to the next.  Rows are saved only at
 * strip bottoms: at the multiples of save_every below h (save_every is a
 * multiple of SWGPU__LONG_SH) and, with save_last, at row h.
 */
#ifndef SWGPU_LONG_H
#define SWGPU_LONG_H

#include <stdint.h>

#include "long/rows.h"
#include "score/score.h"
#include "simd/simd.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SWGPU__LONG_SH 512          /* strip height of both engines */
/* wide scores: values more than this below a block's base are minus infinity */
#define SWGPU__LONG_DROP ((int64_t)1 << 29)
#define SWGPU__LONG_NEG SWGPU__STRIP_NEG /* minus infinity that survives subtractions */
#define SWGPU__LONG_PAD 128         /* sentinel residues after each sequence */

enum { SWGPU__LSEQ_A = 0, SWGPU__LSEQ_B = 1, SWGPU__LSEQ_RA = 2, SWGPU__LSEQ_RB = 3 };

/** Scoring shared by the engines. */
typedef struct {
    int32_t s[32][32];   /* s[row code][column code] */
    int32_t open, ext;   /* gap of length k: open + k*ext */
    int32_t smax;        /* largest entry of s */
    int dna;             /* 1: s is match/mismatch on codes 0..3, mismatch otherwise */
    int32_t match, mismatch;
    int wide;            /* 1: values may pass 32 bits (see Wide scores) */
} swgpu__lscore_t;

/** One region of a batch (see the top of this file). */
typedef struct {
    int64_t h, w;        /* rows, columns (both >= 1) */
    int32_t rseq, cseq;  /* SWGPU__LSEQ_* of the row / column residues */
    int64_t roff, coff;  /* index of row 1's / column 1's residue in its sequence */
    int32_t local;       /* 1: local (zero floor, zero boundaries); 0: anchored */
    int64_t h0, e0, f0;  /* anchored: H, E, F at vertex (0,0) */
    int32_t track;       /* 1: report the best cell */
    int64_t save_every;  /* 0 or a multiple of SWGPU__LONG_SH */
    int32_t save_last;   /* 1: also save row h */
    int32_t *saved;      /* host: nsaved rows of (w+1) pairs {H, F}; vertex columns 0..w */
    int64_t *saved_base; /* wide scores (see Wide scores): nsaved rows of swgpu__lreg_nbase(w)
                            bases; NULL otherwise */
    int32_t saved_keep;  /* CUDA engine: a batch whose regions all ask for it and stay whole
                            (no column slices) leaves their saved rows in device memory rather
                            than copy them into `saved` (swgpu__lgpu_saved_read) */
    int32_t saved_kept;  /* output: 1 when the engine kept them (`saved` untouched) */
    int32_t lane_rows;   /* CUDA engine: rows per lane of its strips, 16 (0: the same), 8 or 4
                            (strips of 512, 256 or 128 rows; see gpu_kernels.cu); a
                            batch uses 16 unless all its regions ask for the same, and column
                            slices always; the values do not depend on it */
    int32_t prune;       /* skip blocks that cannot matter (see Pruning above) */
    int64_t prune_best;  /* local: a best score known in advance (0 if none); anchored: the
                            score of the optimal path from vertex (0,0) to (prune_i, prune_j) */
    int64_t prune_i, prune_j; /* anchored: the vertex every optimal path of interest ends at
                                 (region coordinates; may lie below or right of the region) */
    /* A heuristic pass (local regions with prune and track; CPU engine only):
     * also skip blocks whose inputs lie more than xdrop below the best so far
     * (xdrop > 0), and every block once max_cells cells were computed
     * (max_cells > 0).  Its best is then a lower bound of the region's. */
    int64_t xdrop;
    uint64_t max_cells;
    /* A column part of a region split across processes (CPU engine;
     * CUDA engine: swgpu__lgpu_run_part):
     * this part computes vertex columns col0 .. col0 + w of a region of
     * w_all columns (w_all 0: the whole region).  Strip s's left boundary
     * column (colH[0..SH], colE[1..SH], as the tile function holds them) is
     * received from part edge_left with tag (tag0 + s) % SWGPU__LONG_TAGS
     * when edge_left >= 0, its right one sent to edge_right likewise.  Saved
     * rows hold the part's columns only (local vertex columns 0..w), j and
     * bj are whole-region columns, and pruning bounds use w_all. */
    int64_t col0, w_all;
    int32_t edge_left, edge_right, tag0;
    const swgpu_comm_t *comm;
    /* outputs */
    int64_t best;        /* track: max H, ties to the smallest j, then the smallest i */
    int64_t bi, bj;      /* its vertex */
} swgpu__lreg_t;

#define SWGPU__LONG_TAGS 16384     /* boundary-column tags of a pass: 0 .. this - 1 */
#define SWGPU__LONG_MAX_PARTS 4096 /* parts a pass may be split across */

/** H at vertex (0, j) of a region (F there is NEG). */
static inline SWGPU__HD int32_t swgpu__lreg_top(int local, int32_t h0, int32_t e0, int32_t open,
                                                int32_t ext, int64_t j)
{
    int64_t x, y;
    if (local)
        return 0;
    if (j == 0)
        return h0;
    x = (int64_t)e0 - j * ext;
    y = (int64_t)h0 - open - j * ext;
    x = x > y ? x : y;
    return (int32_t)(x < 2 * (int64_t)SWGPU__LONG_NEG ? 2 * (int64_t)SWGPU__LONG_NEG : x);
}

/** The same without the clamp (wide scores; NEG for minus infinity). */
static inline SWGPU__HD int64_t swgpu__lreg_top64(int local, int64_t h0, int64_t e0, int64_t open, int64_t ext,
                                        int64_t j)
{
    int64_t x, y;
    if (local)
        return 0;
    if (j == 0)
        return h0 <= SWGPU__LONG_NEG ? SWGPU__LONG_NEG64 : h0;
    x = e0 <= SWGPU__LONG_NEG ? SWGPU__LONG_NEG64 : e0 - j * ext;
    y = h0 <= SWGPU__LONG_NEG ? SWGPU__LONG_NEG64 : h0 - open - j * ext;
    return x > y ? x : y;
}

/** H (= F) at vertex (i, 0) of a region (E there is NEG). */
static inline SWGPU__HD int32_t swgpu__lreg_left(int local, int32_t h0, int32_t f0, int32_t open,
                                                 int32_t ext, int64_t i)
{
    return swgpu__lreg_top(local, h0, f0, open, ext, i);
}

/** The tie rule of a region's best cell: score s at vertex (i, j) beats the
 *  best (bs, bi, bj) when higher, or equal at a smaller column, or at the
 *  same column a smaller row. */
static inline int swgpu__lbest_better(int64_t s, int64_t i, int64_t j, int64_t bs, int64_t bi, int64_t bj)
{
    if (s != bs)
        return s > bs;
    if (j != bj)
        return j < bj;
    return i < bi;
}
/** Rows a region saves (rows.h). */
static inline int64_t swgpu__lreg_nsaved(const swgpu__lreg_t *r)
{
    return swgpu__lrows_upto(r->h, r->save_every, r->save_last, r->h);
}

/** The four sequences (host or device pointers), each followed by
 *  SWGPU__LONG_PAD sentinel codes. */
typedef struct {
    const uint8_t *seq[4];
    int64_t len[4];
} swgpu__lseqs_t;

/** Progress shared between an engine and the orchestration. */
typedef struct {
    /* called now and then, may be NULL: cells of the batch done so far
     * (computed or skipped), of which `pruned` were skipped */
    void (*report)(void *user, uint64_t cells_done, uint64_t pruned);
    void *user;
} swgpu__lprog_t;

/** Test hook: pieces of at most `cells` vertices are traced back with a full
 *  matrix (default 4M; at least 513*513; 0 restores the default).  Not
 *  thread-safe; for tests only. */
void swgpu__long_set_base(int64_t cells);

/** The engines' scoring for matrix m and gaps open + k * ext. */
void swgpu__long_scoring(swgpu__lscore_t *sc, const swgpu_matrix_t *m, int open, int ext);

/** A lower bound of the best local score of a x b (seed.c): the score
 *  of a real alignment chained from exact seed matches, 0 when none is
 *  found; *bytes: the most memory it used.  SWGPU_ENOMEM when out of it. */
int swgpu__long_seed_bound(const uint8_t *a, int64_t alen, const uint8_t *b, int64_t blen,
                           const swgpu__lscore_t *sc, int64_t *bound, uint64_t *bytes);

/** Test hook: the CPU engine's strip kernels (a swgpu__isa_t; 0: the scalar
 *  tile; -1: the default).  Not thread-safe; for tests only. */
void swgpu__long_set_isa(int isa);

/**
 * The state of a one-region pass between strips (checkpoints): strips
 * 0 .. next-1 are done, the rest not begun.  Whatever engine ran the strips,
 * this is all the rest needs: the bottom row of strip next-1 (vertex
 * columns 0..w, H and F; low[c]: chunk c was skipped, its values are the
 * lower bounds; base[c]: wide scores, the chunk's base), the best cell of
 * the strips done, the best score the pruning had reached, the counts, and
 * the rows the region saved so far (in its own saved buffers: the first
 * swgpu__lck_rows() rows).
 */
typedef struct {
    int64_t next;
    int64_t best, bi, bj;
    int64_t gbest;
    uint64_t cells, pruned;
    int32_t *rowH, *rowF;   /* w + 1 each */
    uint8_t *low;           /* ceil(w / CHUNK) */
    int64_t *base;          /* ceil(w / CHUNK), wide scores only (else NULL) */
} swgpu__lck_state_t;

/** Checkpoints of a one-region CPU pass: every `every` seconds the engine
 *  lets the strips in flight finish, starts no other, calls save (0: go
 *  on; else the pass fails with that status) and goes on.  resume: start
 *  from that state instead of strip 0 (its saved rows already in place). */
typedef struct {
    double every;
    int (*save)(void *user, const swgpu__lreg_t *g, const swgpu__lck_state_t *st);
    void *user;
    const swgpu__lck_state_t *resume;
} swgpu__lck_t;

/** Saved rows of g complete once strips 0..next-1 are done. */
static inline int64_t swgpu__lck_rows(const swgpu__lreg_t *g, int64_t next)
{
    return swgpu__lrows_upto(g->h, g->save_every, g->save_last, next * SWGPU__LONG_SH);
}

/* CPU engine (cpu.c): run every region of the batch with threads;
 * ck (one region only; NULL: none) for checkpoints. */
int swgpu__lcpu_run(const swgpu__lseqs_t *q, const swgpu__lscore_t *sc,
                    swgpu__lreg_t *regs, size_t n, int threads,
                    const swgpu__lprog_t *prog, uint64_t *bytes_used, uint64_t *pruned,
                    const swgpu__lck_t *ck);

/* Split across parts (split.c): run a batch of regions with the
 * parts of comm, every part calling with the same batch; on return every
 * part holds every region's saved rows and best (pruned: all parts').  The
 * CPU engine computes each part's share (a column slice of each region
 * when the regions are few), or the CUDA engine gpu (not NULL: every part
 * has one, swgpu__lgpu_run_part) within dev_budget bytes, several slices a
 * part (want in all, 0: automatic). */
typedef struct swgpu__lgpu swgpu__lgpu_t;
int swgpu__lsplit_run(const swgpu_comm_t *comm, const swgpu__lseqs_t *q,
                      const swgpu__lscore_t *sc, swgpu__lreg_t *regs, size_t n, int threads,
                      swgpu__lgpu_t *gpu, uint64_t dev_budget, int64_t want,
                      const swgpu__lprog_t *prog, uint64_t *bytes_used, uint64_t *pruned);
/** Every part's checkpoint: SWGPU_OK when no part's rc is an error; else
 *  this part's own rc, or SWGPU_EPART naming the failed part. */
int swgpu__lsplit_agree(const swgpu_comm_t *comm, int rc);
/** Every part's bytes, gathered: each part contributes len bytes of mine;
 *  *all (malloc'ed) holds part p's at off[p], off having size + 1 entries.
 *  A part's rc != 0 makes the call fail on every part. */
int swgpu__lsplit_gather(const swgpu_comm_t *comm, int rc, const void *mine, size_t len,
                         char **all, size_t *off);

/* ---------------------------------------- the partitioner (partition.c)
 * One split of a batch over partitions (the CUDA engine's devices, the
 * parts of a split pass): many regions (swgpu__lpart_whole) are dealt out
 * whole; few are each cut by columns into slices. */
#define SWGPU__LPART_MIN_COLS 256 /* narrowest column slice of a split region */
/** 1 when a batch of n regions over `parts` partitions goes out as whole
 *  regions (at least twice the partitions), 0 when its regions are cut. */
static inline int swgpu__lpart_whole(size_t n, int parts)
{
    return n >= 2 * (size_t)parts;
}
/** Whole regions: largest first (h * w cells; ties: the lower index), each
 *  to the partition with the fewest cells so far (ties: the lower one), into
 *  owner[0 .. n-1].  SWGPU_ENOMEM when out of memory. */
int swgpu__lpart_deal(const swgpu__lreg_t *regs, size_t n, int parts, int64_t *owner);
/** Slices of a region of w columns: want, at most w / SWGPU__LPART_MIN_COLS,
 *  at least 1. */
int64_t swgpu__lpart_slices(int64_t w, int64_t want);
/** Slice k of a: vertex columns c0 .. c1 (its own from c0 + 1 on). */
void swgpu__lpart_cols(int64_t w, int64_t a, int64_t k, int64_t *c0, int64_t *c1);

/* CUDA engine (gpu.c; gpu.h lists its files), present when SWGPU_HAVE_CUDA. */
/** 1 if a CUDA device can be used. */
int swgpu__lgpu_available(void);
/** Visible CUDA devices (0 when none can be used). */
int swgpu__lgpu_devices(void);
/** Upload the sequences (host q) and scoring to `ndev` partitions, one per
 *  device, part p on device devs[p] (distinct devices; devs NULL: device
 *  0 alone); *out owned by the caller.  Every batch is split across the
 *  partitions: many regions (at least twice the partitions) are dealt out
 *  whole, largest first to the partition with the least work; fewer are
 *  each cut by columns into `slices` slices (0: automatic, up to
 *  SWGPU__LGPU_AUTO_SLICES per device, one with one device), at least 256
 *  columns a slice, slice k on partition k mod ndev.  Slice k's strip s
 *  starts once slice k-1 has handed over its right boundary column for
 *  that strip, written into the receiving partition's memory (peer access;
 *  host memory that every device maps without it).  A partition computes
 *  its slices in order, so the devices hand a strip's boundary on to each
 *  other ndev at a time and every device computes after the first few
 *  slices' first strips.  Results are those of one partition: exact bests
 *  under the tie rule, saved rows exact on optimal paths. */
int swgpu__lgpu_create(const swgpu__lseqs_t *q, const swgpu__lscore_t *sc, const int *devs,
                       int ndev, int slices, swgpu__lgpu_t **out);
#define SWGPU__LGPU_MAX_SLICES 256 /* column slices of a split region */
#define SWGPU__LGPU_AUTO_SLICES 8  /* per device, automatic */
/** Run a batch; saved rows are copied into the regions' host buffers.
 *  spread 0: on the first device alone unless slices were asked for (a
 *  pass that a column split does not speed up); with automatic slices a
 *  small batch stays there too; spread < 0: whole regions on the first
 *  device, whatever was asked for (swgpu__lgpu_run_ck). */
int swgpu__lgpu_run(swgpu__lgpu_t *g, swgpu__lreg_t *regs, size_t n, int spread,
                    const swgpu__lprog_t *prog, uint64_t *pruned);
/** One region's pass with in-pass checkpoints (ck: every ck->every seconds
 *  the pass stops at a strip boundary, ck->save gets its state, and it goes
 *  on; ck->resume: start from that state, its saved rows in place): the
 *  region whole, on the first device. */
int swgpu__lgpu_run_ck(swgpu__lgpu_t *g, swgpu__lreg_t *r, const swgpu__lprog_t *prog, uint64_t *pruned,
                       const swgpu__lck_t *ck);
/** Bytes the engine would hold on the device to run the batch (the most
 *  any one partition holds), spread as in swgpu__lgpu_run (-1 for
 *  swgpu__lgpu_run_ck). */
uint64_t swgpu__lgpu_bytes(const swgpu__lgpu_t *g, const swgpu__lreg_t *regs, size_t n, int spread);
/** The engine as one part of a pass split across processes (split.c; g
 *  marked by swgpu__lgpu_split_part): the part's share of a batch, whole
 *  regions or column slices (w_all > 0) whose boundary columns come from
 *  and go to the neighbouring parts through their comm, on the first
 *  device; saved rows into each region's own buffer (a slice's: its
 *  columns).  First prepare: every buffer allocated, on the device within
 *  dev_budget bytes and the relay's pinned host memory (*host_bytes); then,
 *  once every part has prepared, run. */
int swgpu__lgpu_prepare_part(swgpu__lgpu_t *g, swgpu__lreg_t *regs, size_t n, uint64_t dev_budget,
                             uint64_t *host_bytes);
int swgpu__lgpu_run_part(swgpu__lgpu_t *g, swgpu__lreg_t *regs, size_t n, const swgpu__lprog_t *prog,
                         uint64_t *pruned);
/** Mark g as a part of split passes: parts of one split in one process
 *  (threads) that share a device then share its multiprocessors. */
void swgpu__lgpu_split_part(swgpu__lgpu_t *g);
/** Saved rows a batch kept in device memory (swgpu__lreg_t.saved_keep): n
 *  entries {H, F} of saved row `row` of the batch's region `reg` (its index
 *  in the batch) from vertex column x0 on, into out (2n values); wide scores:
 *  relative to base, swgpu__lreg_nbase(n - 1) bases, as if the n entries
 *  were a saved row of their own (NULL otherwise).  The engine keeps one
 *  batch's rows at a time: until swgpu__lgpu_saved_drop or the next batch
 *  that keeps rows. */
int swgpu__lgpu_saved_read(swgpu__lgpu_t *g, size_t reg, int64_t row, int64_t x0, int64_t n, int32_t *out,
                           int64_t *base);
/** Free the kept rows (none: nothing to do). */
void swgpu__lgpu_saved_drop(swgpu__lgpu_t *g);
/** Largest device memory held so far. */
uint64_t swgpu__lgpu_peak(const swgpu__lgpu_t *g);
void swgpu__lgpu_destroy(swgpu__lgpu_t *g);

#ifdef __cplusplus
}
#endif
/* ---------------------------------------- checkpoints (ckpt.c) */

#include <stddef.h>
#include <sys/types.h>

/* where a checkpoint stands: the pass running, or the traceback to start */
enum { SWGPU__CK_PREPASS = 1, SWGPU__CK_SCORE = 2, SWGPU__CK_REVERSE = 3, SWGPU__CK_TRACE = 4 };

/** A checkpoint read back (or to write: phase and the results so far). */
typedef struct {
    uint64_t fp;            /* fingerprint of the inputs and options */
    int phase;
    int64_t prune_best;     /* SCORE and later: the pre-pass's score */
    int64_t S, ie, je;      /* REVERSE and later: the best score and its end */
    int64_t ib, jb;         /* TRACE: the begin */
    int64_t w;              /* the pass's region width (TRACE: the saved rows') */
    swgpu__lck_state_t st;  /* a pass's state (st.next 0: from its start) */
    int64_t nrows;          /* saved rows read */
    int32_t *saved;         /* nrows x (w + 1) pairs */
    int64_t *saved_base;    /* wide scores: nrows x swgpu__lreg_nbase(w) */
    int32_t *row;           /* storage of st.rowH, st.rowF */
    uint8_t *low;
    int64_t *base;
} swgpu__ck_t;

/** FNV-1a over n bytes, from h (start: 0xcbf29ce484222325). */
uint64_t swgpu__ck_hash(uint64_t h, const void *p, size_t n);
/** Write c's phase and results, the pass state st (NULL: none) of region g
 *  with the rows it saved so far (g without st: every row g saves); atomic. */
int swgpu__ck_write(const char *path, const swgpu__ck_t *c, const swgpu__lreg_t *g,
                    const swgpu__lck_state_t *st, int wide);
/** Read path: 0 when it does not exist, 1 when read into c (free with
 *  swgpu__ck_free), or an error: not a regular file (never opened as
 *  anything else: a FIFO does not block) or another fingerprint:
 *  SWGPU_EINVAL; not a checkpoint, another format, a size other than the
 *  header's or a CRC that does not match: SWGPU_EFORMAT.  The fields are
 *  the caller's to check against the inputs (swgpu__ck_check_*). */
int swgpu__ck_read(const char *path, uint64_t fp, int wide, swgpu__ck_t *c);
/** The pass state c->st of a local region of h x w (the checkpoint's w,
 *  its saved rows c->saved) against what such a pass can hold: strips
 *  done 1 .. strips - 1, nrows the rows saved by then (nsaved), the best
 *  cell within the strips done, scores 0 .. maxS, values relative to
 *  their bases within the engines' range.  SWGPU_EFORMAT naming path and
 *  the field otherwise. */
int swgpu__ck_check_state(const char *path, const swgpu__ck_t *c, int64_t h, int64_t w, int64_t nsaved,
                          int64_t maxS, const swgpu__lscore_t *sc);
/** The saved rows c->saved (c->nrows of c->w + 1 pairs, wide: their
 *  bases) against the same ranges. */
int swgpu__ck_check_rows(const char *path, const swgpu__ck_t *c, int64_t maxS, const swgpu__lscore_t *sc);
/** The temporary a checkpoint is written to before its rename:
 *  PATH.tmp.<pid> (as the tool's outputs: tools/outfile.c). */
void swgpu__ck_tmpname(char *buf, size_t size, const char *path);
/** What a file of that mode is, in words ("a directory", ...). */
const char *swgpu__ck_kind(mode_t mode);
void swgpu__ck_free(swgpu__ck_t *c);

/* ------------------------------------------------------------------------
 * The aligner (swgpu_align_long) across its files: align_long.c (the
 * driver, its phases), batch.c (batches on the engines, progress,
 * checkpoint glue), layout.c (memory budget, saved-row spacing), walk.c
 * (the traceback's divide and conquer), basetrace.c (full-matrix
 * traceback of the small pieces), cigar.c (CIGAR building and rescoring).
 * Layers, each calling only those below: align_long.c; walk.c,
 * basetrace.c; batch.c; layout.c, cigar.c.
 */

/* the states of a vertex of a path: H, or inside a horizontal (E) or
 * vertical (F) gap that continues across it */
enum { SWGPU__LA_H = 0, SWGPU__LA_E = 1, SWGPU__LA_F = 2 };

/** A piece of the optimal path: global alignment between two vertices. */
typedef struct {
    int64_t i0, j0, i1, j1;
    int s0, s1;  /* states at the begin / end vertex */
    int64_t T;   /* its score */
} swgpu__la_piece_t;

/** A growing list of pieces (free v). */
typedef struct {
    swgpu__la_piece_t *v;
    size_t n, cap;
} swgpu__la_pieces_t;

/** A growing CIGAR (free v). */
typedef struct {
    uint32_t *v;
    size_t n, cap;
} swgpu__la_cig_t;

/** One alignment's context, the driver's, shared by its phases. */
typedef struct {
    const uint8_t *a, *b;
    int64_t alen, blen;
    swgpu__lscore_t sc;
    swgpu__lseqs_t q;        /* host sequences, padded */
    uint8_t *qbuf;           /* owns q's storage */
    int use_gpu;
    swgpu__lgpu_t *gpu;
    int threads;
    uint64_t host_budget, dev_budget;
    uint64_t layout_cap;     /* bytes for saved rows and engine rings (same for both backends) */
    uint64_t host_fixed, host_peak;
    swgpu_long_stats_t *st;
    const swgpu_long_opts_t *o;
    double t0;
    /* progress: the phase, its cells in all (an estimate when phase_est) and
     * done (computed or pruned), its start; cells computed in all phases */
    const char *phase;
    uint64_t phase_cells, phase_done, computed;
    int phase_est;
    double phase_t0, phase_frac, last_report;
    uint64_t last_pruned;    /* cells the last batch pruned */
    const swgpu_comm_t *comm; /* passes split across parts (NULL: alone) */
    int dead;                /* a split call failed on every part: no more collectives */
    /* checkpoints (ckpt.c): the file, its interval, the last write;
     * what to write (phase and results so far) and what was read back */
    const char *ck_path;
    double ck_every, ck_last;
    swgpu__ck_t ck_out, ck_in;
    int lane_rows[3];        /* CUDA engine: rows per lane of the score pass's, the reverse
                                pass's and the traceback's strips (swgpu__lreg_t.lane_rows) */
} swgpu__la_t;

/** Anchored start values (h0, e0, f0) of a pass from a begin state. */
static inline void swgpu__la_start_init(int s, int64_t *h0, int64_t *e0, int64_t *f0)
{
    *h0 = 0;
    *e0 = s == SWGPU__LA_E ? 0 : SWGPU__LONG_NEG;
    *f0 = s == SWGPU__LA_F ? 0 : SWGPU__LONG_NEG;
}

/* batch.c: running batches, progress, checkpoint glue */
/** Book `extra` bytes held beyond the fixed ones (the peak). */
void swgpu__la_host_use(swgpu__la_t *C, uint64_t extra);
/** The engines' progress call (a few reports a second at most). */
void swgpu__la_progress(void *user, uint64_t done, uint64_t pruned);
/** A phase of `cells` cells begins (est: that is an estimate); it ends. */
void swgpu__la_phase_begin(swgpu__la_t *C, const char *name, uint64_t cells, int est);
void swgpu__la_phase_end(swgpu__la_t *C);
/** Run a batch of regions on the chosen engine; a one-region pass saves
 *  checkpoints (ck) and may start from one (resume); on several GPUs,
 *  spread 0 keeps the batch on the first (swgpu__lgpu_run). */
int swgpu__la_run_ck(swgpu__la_t *C, swgpu__lreg_t *r, size_t n, int ck, const swgpu__lck_state_t *resume,
                     int spread);
/** The same without checkpoints, spread over the GPUs. */
int swgpu__la_run(swgpu__la_t *C, swgpu__lreg_t *r, size_t n);
/** Whether reverse passes leave their saved rows in GPU memory (saved_keep):
 *  on the GPU, unless a checkpoint must hold them or the passes are split
 *  across processes (wide scores: their bases stay beside them, and a
 *  window read moves to the host's format, swgpu__lgpu_saved_read). */
int swgpu__la_rows_stay_on_gpu(const swgpu__la_t *C);
/** A checkpoint between passes (of C->ck_out and g's saved rows), when one is due. */
int swgpu__la_ck_between(swgpu__la_t *C, const swgpu__lreg_t *g);
/** A pass's state to resume from, if the checkpoint read stands in that pass. */
const swgpu__lck_state_t *swgpu__la_ck_resume(const swgpu__la_t *C, int phase);
/** Open checkpoints at C->o->checkpoint: the inputs' fingerprint, the
 *  file read back into C->ck_in (if there) and checked against the inputs. */
int swgpu__la_ck_open(swgpu__la_t *C, uint64_t cap);

/* layout.c: what memory the alignment holds and how rows are spaced */
/** Largest piece traced back with a full matrix, in vertices. */
int64_t swgpu__la_base_cells(void);
/** The layout budget (C->layout_cap) and the fixed host bytes, from the
 *  budgets; SWGPU_EBUDGET when too small.  *cap: the smaller budget. */
int swgpu__la_budget(swgpu__la_t *C, uint64_t *cap);
/** The reverse pass's saved-row spacing for an end (ie, je). */
int64_t swgpu__la_rev_spacing(const swgpu__la_t *C, int64_t ie, int64_t je);
/** Row spacing of a split of hv x wv view cells within `cap` bytes of saved rows. */
int64_t swgpu__la_split_spacing(int64_t hv, int64_t wv, uint64_t cap);
/** Bytes a split holds: its saved reverse rows and the engine's ring for them. */
uint64_t swgpu__la_split_bytes(int64_t hv, int64_t wv, int64_t L);
/** Bytes of the bases of n saved rows of w columns (wide scores only). */
uint64_t swgpu__la_base_bytes(const swgpu__la_t *C, int64_t n, int64_t w);

/* walk.c: the traceback's divide and conquer */
int swgpu__la_pieces_push(swgpu__la_pieces_t *v, const swgpu__la_piece_t *s);
/** The traceback's first level: the walk of piece top over the reverse
 *  pass's rows (saved every L rows, in rev or, dev_rows, on the GPU) into
 *  *list, or top itself when small; begins the traceback phase. */
int swgpu__la_walk_top(swgpu__la_t *C, const swgpu__la_piece_t *top, int64_t L, int32_t *rev,
                       int64_t *rev_base, int dev_rows, swgpu__la_pieces_t *list);
/** Replace every piece of *list too large for a full matrix by its
 *  children, level by level. */
int swgpu__la_refine(swgpu__la_t *C, swgpu__la_pieces_t *list);

/* basetrace.c: the small pieces traced back, in parallel (and across parts) */
/** Trace back every piece of list and join their CIGARs into *all. */
int swgpu__la_trace(swgpu__la_t *C, const swgpu__la_pieces_t *list, swgpu__la_cig_t *all);

/* cigar.c: CIGAR building and the alignment's statistics */
/** Append len operations op (merged with the last run; lengths kept
 *  within 28 bits); SWGPU_ENOMEM (not recorded) when out of memory. */
int swgpu__la_cig_push(swgpu__la_cig_t *c, int op, int64_t len);
/** An empty alignment (its CIGAR buffer kept). */
void swgpu__la_aln_clear(swgpu_aln_t *out);
/** Copy cig into out and fill its statistics; *score: what the CIGAR
 *  scores (INT64_MIN when it does not span out's ranges). */
int swgpu__la_aln_store(const swgpu__la_t *C, const swgpu__la_cig_t *cig, swgpu_aln_t *out, int64_t *score);

#endif
