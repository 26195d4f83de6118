/*
 * gpu_kernels.cuh - host launchers of the long aligner's GPU pass (the
 * kernel lives in gpu_kernels.cu; memory and batching in gpu*.c, gpu.h).
 * Plain C declarations: included from C and from CUDA.
 */
#ifndef SWGPU_LONG_KERNELS_CUH
#define SWGPU_LONG_KERNELS_CUH

#include <cuda_runtime_api.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One region as the kernel sees it (see long.h for the recurrences). */
typedef struct {
    int32_t h, w;            /* rows, columns */
    int32_t rseq, cseq;      /* which of the four device sequences */
    int64_t roff, coff;      /* index of row 1's / column 1's residue */
    int32_t local, track;
    int32_t prune;           /* local: skip chunks that cannot reach *gbest */
    int64_t h0, e0, f0;      /* anchored corner (32-bit values unless the batch is wide) */
    int32_t save_every;      /* 0 or a multiple of SWGPU__LONG_SH (so of every strip height) */
    int32_t save_last;
    int32_t nstrips;
    int64_t first;           /* ticket of its first strip */
    int64_t saved_off;       /* first int32 of its saved rows ({H,F} pairs, w+1 per row) */
    int64_t ring_off;        /* first int32 of its ring: 2 slots of SWGPU__LK_RING(w) pairs */
    /* wide scores (swgpu__lkargs_t.wide): the bases of its ring's values, 2
     * slots of SWGPU__LK_RBASE(w), and of its saved rows, SWGPU__LK_SBASE(w)
     * a row (first int64 of each in rbase / sbase) */
    int64_t rbase_off, sbase_off;
    /* A column slice of a region split across partitions (gpu_plan.c):
     * vertex columns col0 .. col0 + w of the region, wrem columns of the
     * region right of it (pruning bounds).  Boundary columns, in memory every
     * partition can reach, SWGPU__LK_EDGE pairs {H, E} per strip s: index 0
     * is vertex row s*SH (H only), 1 .. SH the strip's rows; flag[s] != 0
     * once strip s is complete.  lin / lflag: the column col0 from the slice
     * on the left (NULL: the region's own left boundary); rout / rflag: the
     * column col0 + w for the slice on the right (NULL: none). */
    int64_t col0, wrem;
    const int32_t *lin, *lflag;
    int32_t *rout, *rflag;
    /* wide scores: a boundary column's values are relative to a base per
     * strip (SWGPU__LK_EDGE_BASES) */
    const long long *lin_base;
    long long *rout_base;
} swgpu__lkreg_t;

/* pairs per strip of a boundary column */
#define SWGPU__LK_EDGE (SWGPU__LONG_SH + 1)
/* a boundary column of `strips` strips: the pairs (8 bytes each; strip s's
 * from byte SWGPU__LK_EDGE_PAIRS(s) on), the flags (int32 each) from byte
 * SWGPU__LK_EDGE_PAIRS(strips) on, then (wide scores) a base per strip
 * (int64) from byte SWGPU__LK_EDGE_BASES(strips) on */
#define SWGPU__LK_EDGE_PAIRS(strips) ((uint64_t)(strips) * SWGPU__LK_EDGE * 8)
#define SWGPU__LK_EDGE_BASES(strips) \
    ((SWGPU__LK_EDGE_PAIRS(strips) + (uint64_t)(strips) * 4 + 7) & ~(uint64_t)7)

/* pairs per ring slot of a region of w columns (reads run up to column w+63) */
#define SWGPU__LK_RING(w) ((int64_t)(w) + 128)

/* Wide scores: the ring's and the saved rows' values are 32-bit, relative
 * to a 64-bit base per SWGPU__LK_GROUP columns (group q: vertex columns
 * 32q+1 .. 32q+32; a saved row's entry 0 is column 0's base, 1 + q group
 * q's); a value below SWGPU__LONG_INF32 is minus infinity. */
#define SWGPU__LK_GROUP 32
#define SWGPU__LK_RBASE(w) (((int64_t)(w) + 31) / 32 + 2)
#define SWGPU__LK_SBASE(w) (((int64_t)(w) + 31) / 32 + 1)

/* Best cell of one strip. */
typedef struct {
    int64_t best;
    int32_t bi, bj;
} swgpu__lkbest_t;

typedef struct {
    const swgpu__lkreg_t *regs;  /* device */
    int32_t nregs;
    int64_t total;               /* strips in the batch */
    const uint8_t *seq[4];       /* device sequences, padded */
    int32_t *ring;               /* device ring buffers */
    int32_t *saved;              /* device saved rows */
    int32_t *progress;           /* per strip: bottom-row columns published (zeroed) */
    int32_t *zrun;               /* per strip: the first bottom-row column of its current run
                                    of skipped chunks, whose outputs up to its progress are
                                    all {0, NEG}; 0 none (zeroed) */
    swgpu__lkbest_t *best;       /* per strip */
    unsigned long long *ticket;  /* zeroed */
    unsigned long long *done;    /* cells of finished strips (progress reports) */
    unsigned long long *pruned;  /* cells skipped by pruning */
    int32_t *gbest;              /* best score found so far (pruning) */
    const int32_t *rbest;        /* the other partitions' best so far (pruning; host-updated) */
    const int32_t *abort;        /* != 0: a partition failed, waiting slices give up */
    int32_t sysfence;            /* 1: boundary columns cross devices (system-scope fences) */
    int32_t smax;                /* largest substitution score, >= 0 */
    const int32_t *mat;          /* device 32x32: mat[col*32 + row] = s[row][col] */
    int32_t open, ext;
    int32_t dna, match, mismatch;
    int32_t rows;                /* rows per lane of the strips: 16 (SWGPU__LONG_SH rows a
                                    strip; column slices always), 8 or 4 */
    /* Wide scores (long.h): 16 rows per lane; the bases
     * of the ring and of the saved rows (SWGPU__LK_GROUP), and the bests
     * in 64 bits (pruning; gbest and rbest unused) */
    int32_t wide;
    long long *rbase, *sbase;
    long long *gbest64;
    const long long *rbest64;    /* wide scores: the other partitions' best (host-updated) */
    /* In-pass checkpoints (one region; NULL: none): once *stop != 0, a
     * warp that takes ticket t, or whose strip t still waits for its first
     * chunk, lowers *stop_at to t, and no strip from *stop_at on gets past
     * its first chunk; the pass then ends with strips 0 .. *stop_at - 1
     * done (*stop_at: ULLONG_MAX until then) */
    const int32_t *stop;
    unsigned long long *stop_at;
} swgpu__lkargs_t;

/** Threads per block and resident blocks per multiprocessor of the kernel
 *  (slice: the kernel for batches of column slices; rows: per lane, 16, 8
 *  or 4, 16 for slices; wide: wide scores, 16 rows per lane). */
cudaError_t swgpu__long_occupancy(int dna, int slice, int rows, int wide, int *threads, int *blocks_per_sm);
/** Launch one pass over a batch with `blocks` blocks of `threads` threads:
 *  the grid must fit on the device at once (blocks <= blocks_per_sm * SMs);
 *  slice: the batch holds column slices (lin / rout may be set). */
cudaError_t swgpu__long_launch(const swgpu__lkargs_t *args, int slice, int blocks, int threads,
                               cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
