/*
 * kernels.cuh - host launchers of the CUDA scan kernels (C-compatible).
 *
 * Every launcher takes device pointers, sizes and a stream, enqueues its
 * kernel(s) and returns 0 or SWGPU_EDEVICE (the launch error, file:line).
 * Orchestration (upload, batching, streams, overflow recompute, several
 * GPUs) lives in engine.cu and the engine_*.cu files (engine.cuh); the
 * kernels themselves in group.cu (default DPX kernel, query-lane kernel and
 * intra-task kernel; their host model in model.cu), simt.cu, vector.cu and
 * scan.cu.
 *
 * Conventions shared by all kernels
 *  - Subjects of one batch are a range of the database in sorted (ascending
 *    length) order.  Residues are packed 4 per 32-bit word, first residue in
 *    the low byte; each subject starts on a word and is padded with
 *    SWGPU_CU_PAD to a multiple of 4.
 *  - Scores: int32 per subject of the batch, exact (the DPX kernel writes a
 *    value >= SWGPU_CU_SAT16 - smax - oe for a subject whose 16-bit lane may have
 *    saturated; the engine recomputes those with the 32-bit intra kernel).
 *  - The query profile used by the kernels holds S[q[c]][r] for subject
 *    residue r and query column c; columns past the query and the pad
 *    residue score SWGPU_CU_NEG, which can never raise a real cell.
 *  - Every profile builder takes the query as codes q and a matrix of 32
 *    rows (mat[32*code + r], or s[code][r]), or, for a PSSM query, q NULL
 *    and a matrix of qlen rows, row c for query column c: the profile is
 *    then the PSSM's.  A PSSM's scores may be as low as -32768 (psiblast's
 *    forbidden pairs): like the padding, such a score can never raise a
 *    cell (the 16-bit kernels add it to an H held >= 0, no lane wraps).
 */
#ifndef SWGPU_CUDA_KERNELS_CUH
#define SWGPU_CUDA_KERNELS_CUH

#include <stddef.h>
#include <stdint.h>
#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SWGPU_CU_PAD 31      /* residue code of padding (unused by both alphabets) */
#define SWGPU_CU_NEG (-32768) /* profile score of padding rows and columns */
#define SWGPU_CU_NRES 32     /* residue codes covered by every profile */
#define SWGPU_CU_SAT16 0x7c01 /* DPX kernel: scores >= this - smax are recomputed */

/** One batch of subjects resident on the device. */
typedef struct {
    const uint32_t *res;  /* packed residues; NULL: the intra kernel reads the pair layout */
    const uint32_t *woff; /* word offset of each subject in res */
    const uint32_t *len;  /* residues of each subject */
    uint32_t n;           /* subjects in the batch */
    /* DPX kernel: subjects 2p and 2p+1 interleaved, one uint16 per row
     * (code of 2p | code of 2p+1 << 8, SWGPU_CU_PAD past a subject's end),
     * max(len[2p], len[2p+1]) rows from pres + poff[p] */
    const uint16_t *pres;
    const uint32_t *poff;
} swgpu_cu_batch_t;

/** The query and scoring scheme, on the device. */
typedef struct {
    const uint8_t *q;     /* query codes (qlen bytes) */
    int qlen;
    int oe;               /* gap open + gap extend (cost of a gap of length 1) */
    int ext;              /* gap extend */
} swgpu_cu_query_t;

/**
 * Group kernel configuration: G threads per group, R query columns per
 * thread; P (DPX kernel only) 0: the score pairs are assembled from the
 * 16-bit profile with byte permutes, 1: from two 32-bit tables (low and
 * high half) with an integer multiply-add, off the ALU pipe; 2: as 1, and
 * the running maximum on the half-precision pipe (max.f16x2); 3: as 1, the
 * shifted form of cells.cuh (row_sh); 4: as 1, the carried form (row_sh2).
 */
typedef struct {
    int G, R, P;
} swgpu_cu_cfg_t;

/** Block size of the DPX kernel and of the intra kernel; the intra tile. */
#define SWGPU_CU_DPX_THREADS 256
#define SWGPU_CU_INTRA_THREADS 128
#define SWGPU_CU_INTRA_R 8

/**
 * Tile profile of a group kernel with G threads of R columns (W = G*R
 * columns per tile): ntiles = ceil(qlen/W) tiles of 32 rows (residue codes)
 * of W int16 scores, positions permuted as described in cells.cuh.
 * mat[32*qcode + rcode] is the score (q NULL: mat[32*column + rcode], a
 * PSSM).  swgpu__cu_tile_prof_len gives the number of int16 elements.
 */
size_t swgpu__cu_tile_prof_len(int G, int R, int qlen);
void swgpu__cu_tile_prof(int G, int R, const uint8_t *q, int qlen, const int16_t *mat,
                         int16_t *out);

/** The profile of the DPX kernel with cfg: for P=0 the tile profile above;
 *  for P>=1 per tile two tables of 32 x W words (score in the low half, in
 *  the high half) in the order the kernel's threads read them.  Bytes, and
 *  the builder. */
size_t swgpu__cu_dpx_prof_bytes(swgpu_cu_cfg_t cfg, int qlen);
void swgpu__cu_dpx_prof(swgpu_cu_cfg_t cfg, const uint8_t *q, int qlen, const int16_t *mat,
                        void *out);

/** The same profile built on the GPU (stream st) from the query codes and
 *  the matrix in device memory (d_q NULL: d_mat holds the qlen rows of a
 *  PSSM): swgpu__cu_dpx_prof_bytes(cfg, qlen) bytes to d_out; cfg.P = 0
 *  gives the tile profile of (G, R), as for the intra kernel. */
int swgpu__cu_prof_dev(swgpu_cu_cfg_t cfg, const uint8_t *d_q, int qlen, const int16_t *d_mat,
                       void *d_out, cudaStream_t st);

/** The configurations compiled into the default (DPX) kernel; *n set to their count. */
const swgpu_cu_cfg_t *swgpu__cu_dpx_configs(int *n);

/** Resident blocks per SM of the DPX kernel with cfg (occupancy query). */
int swgpu__cu_dpx_occupancy(swgpu_cu_cfg_t cfg, int *blocks_per_sm);

/**
 * Scratch bytes of the DPX kernel with cfg: the boundary column of each
 * group (8 bytes per row of subjects up to maxlen), for `blocks` persistent
 * blocks; 0 when the query fits one tile.
 */
size_t swgpu__cu_dpx_scratch(swgpu_cu_cfg_t cfg, int qlen, uint32_t maxlen, int blocks);

/**
 * Default kernel: subjects [first, first+count) of the batch in pairs
 * (first+2i, first+2i+1) (first even; residues from b->pres), two per
 * 32-bit register (s16x2, Hopper DPX),
 * groups of cfg.G threads with cfg.R columns each, longest pairs first.
 * tprof: the tile profile for cfg; blocks: persistent blocks (>= 1);
 * scratch: swgpu__cu_dpx_scratch() bytes (NULL when 0); ctr: one device
 * int (zeroed here).  Scores go to scores[first .. first+count).
 */
int swgpu__cu_dpx(const swgpu_cu_batch_t *b, uint32_t first, uint32_t count,
                  const swgpu_cu_query_t *q, const int16_t *tprof, swgpu_cu_cfg_t cfg,
                  int blocks, void *scratch, uint32_t maxlen, int *ctr, int32_t *scores,
                  cudaStream_t st);

/** One query of a many-query launch of the default kernel (device memory). */
typedef struct {
    const int16_t *tprof; /* the query's profile for the launch's configuration */
    int32_t *scores;      /* its scores: scores[k] for subject k of the batch */
    int32_t ntiles;       /* its tiles of G*R columns */
    int32_t pad;
} swgpu_cu_mq_t;

/** 1 if the default kernel has a many-query instance for cfg. */
int swgpu__cu_dpx_has_mq(swgpu_cu_cfg_t cfg);

/**
 * The default kernel for nq queries at once (all with configuration cfg):
 * subjects [first, first+count) of the batch against every query of
 * d_mq[0..nq); work units are (subject unit, query) pairs, longest subjects
 * first.  maxtiles: the most tiles of any of the queries (scratch as
 * swgpu__cu_dpx_scratch for that query length, NULL when 1).  Scores of
 * query i go to d_mq[i].scores[first .. first+count).
 */
int swgpu__cu_dpx_mq(const swgpu_cu_batch_t *b, uint32_t first, uint32_t count,
                     const swgpu_cu_mq_t *d_mq, uint32_t nq, int maxtiles, int oe, int ext,
                     swgpu_cu_cfg_t cfg, int blocks, void *scratch, uint32_t maxlen, int *ctr,
                     cudaStream_t st);

/**
 * Query lanes (the default kernel's many-query form without the pair
 * assembly): one subject per group, the low 16-bit half of every register
 * computing one lane of queries, the high half another, so that a table row
 * holds both lanes' scores for one residue and a cell pair costs no
 * multiply-add to assemble (bench/NOTES-gpu.md v21).  A lane is a sequence
 * of slots of R query columns, one per thread: its queries one after
 * another, each starting on a slot of its own; a pass covers G slots of
 * both lanes (a tile), and a job is the passes of two lanes.  Every group
 * of a work unit runs all passes of its job over its subject; a thread whose
 * slot begins a query takes the start boundary instead of its left
 * neighbour's, and after each pass every thread adds its maximum to its
 * slot's query's score (atomicMax: the score rows start at 0).
 */
#define SWGPU_CU_QP_G 8 /* threads per group of the query-lane kernel */

typedef struct {
    const uint32_t *prof; /* 32 x G*R words: lane 0's scores (low) | lane 1's (high) << 16 */
    uint32_t starts;      /* bit 2t + h: thread t's slot of lane h begins a query */
    uint32_t pad;
    uint16_t qi[2][SWGPU_CU_QP_G]; /* lane h, thread t: the slot's query in the batch, 0xffff idle */
} swgpu_cu_pass_t;

/** A job: passes [first, first + n) of the launch's pass list. */
typedef struct {
    uint32_t first, n;
} swgpu_cu_job_t;

/** A query of a query-lane launch (device memory; q NULL: a PSSM's rows in mat). */
typedef struct {
    const uint8_t *q;
    const int16_t *mat;
    int32_t qlen, pad;
} swgpu_cu_qpq_t;

/** What k_prof_qp needs for one pass's table: per lane and thread the
 *  slot's query (index into the launch's query table, -1 idle) and the
 *  query column of the slot's first column. */
typedef struct {
    int32_t qi[2][SWGPU_CU_QP_G];
    int32_t c0[2][SWGPU_CU_QP_G];
} swgpu_cu_pbuild_t;

/** 1 if cfg has a query-lane instance. */
int swgpu__cu_qp_has(swgpu_cu_cfg_t cfg);

/** The query-lane configurations; *n set to their count. */
const swgpu_cu_cfg_t *swgpu__cu_qp_configs(int *n);

/** Bytes of one pass's table for cfg (32 x G*R words). */
size_t swgpu__cu_qp_pass_bytes(swgpu_cu_cfg_t cfg);

/** Builds the tables of npass passes from d_pb[0..npass) (queries in
 *  d_qt) into d_out (pass p at p * swgpu__cu_qp_pass_bytes(cfg)), stream st. */
int swgpu__cu_qp_prof_dev(swgpu_cu_cfg_t cfg, const swgpu_cu_qpq_t *d_qt,
                          const swgpu_cu_pbuild_t *d_pb, uint32_t npass, void *d_out,
                          cudaStream_t st);

/** Resident blocks per SM of the query-lane kernel with cfg. */
int swgpu__cu_qp_occupancy(swgpu_cu_cfg_t cfg, int *blocks_per_sm);

/** Boundary scratch of the query-lane kernel (jobs of more than one pass). */
size_t swgpu__cu_qp_scratch(swgpu_cu_cfg_t cfg, uint32_t maxlen, int blocks);

/**
 * The query-lane kernel: subjects [first, first+count) of the batch (longest
 * last, taken longest first) against every job of d_jobs[0..njobs); work
 * units are (subject unit, job), ceil(count / (256 / G)) subject units.  The
 * score of query i for subject k goes to scores[i * stride + k] by
 * atomicMax: the caller zeroes those entries first.  scratch:
 * swgpu__cu_qp_scratch bytes (NULL when every job has one pass).
 */
int swgpu__cu_qp(const swgpu_cu_batch_t *b, uint32_t first, uint32_t count,
                 const swgpu_cu_job_t *d_jobs, uint32_t njobs, const swgpu_cu_pass_t *d_pass,
                 int32_t *scores, size_t stride, int oe, int ext, swgpu_cu_cfg_t cfg, int blocks,
                 void *scratch, uint32_t maxlen, int *ctr, cudaStream_t st);

/**
 * Host model of the query-lane kernel: subjects [0, n) against the jobs
 * (host pointers: the passes' tables, scores as above).
 */
int swgpu__cu_emulate_qp(swgpu_cu_cfg_t cfg, const uint32_t *res, const uint32_t *woff,
                         const uint32_t *len, uint32_t n, const swgpu_cu_job_t *jobs,
                         uint32_t njobs, const swgpu_cu_pass_t *pass, int32_t *scores,
                         size_t stride, int oe, int ext);

/** The table of one pass built on the host (host pointers in qt). */
void swgpu__cu_qp_prof(swgpu_cu_cfg_t cfg, const swgpu_cu_qpq_t *qt, const swgpu_cu_pbuild_t *pb,
                       uint32_t *out);

/**
 * Intra-task kernel (32-bit): one thread block per subject, the query
 * split over its SWGPU_CU_INTRA_THREADS threads (SWGPU_CU_INTRA_R columns
 * each) in a wavefront, the boundary column of each query tile in global
 * memory.  Scores subjects idx[0..count) of the batch (idx sorted
 * ascending; NULL: subjects first..first+count-1) into scores[subject].
 * tprof: tile profile for G = SWGPU_CU_INTRA_THREADS, R = SWGPU_CU_INTRA_R.
 */
size_t swgpu__cu_intra_scratch(int qlen, uint32_t maxlen, int blocks);
int swgpu__cu_intra_occupancy(int *blocks_per_sm);
int swgpu__cu_intra(const swgpu_cu_batch_t *b, const uint32_t *idx, uint32_t first,
                    uint32_t count, const swgpu_cu_query_t *q, const int16_t *tprof,
                    int blocks, void *scratch, uint32_t maxlen, int *ctr, int32_t *scores,
                    cudaStream_t st);
/**
 * The intra kernel over count (subject, query) pairs of several queries in
 * one launch: pair i is (pairs[i].x, pairs[i].y), query e's tile profile,
 * tiles and score row in qt[e] (device memory; scores[subject]).  scratch
 * as swgpu__cu_intra_scratch for the longest query (NULL when every query
 * is one tile).  One launch, so that it runs as soon as the multiprocessors
 * are free (scan_many's recompute of a batch's saturated scores).
 */
int swgpu__cu_intra_pairs(const swgpu_cu_batch_t *b, const uint2 *pairs, uint32_t count,
                          const swgpu_cu_mq_t *qt, int oe, int ext, int blocks, void *scratch,
                          uint32_t maxlen, int *ctr, cudaStream_t st);

/**
 * SIMT inter-task kernel (32-bit): one thread per subject, the query in
 * register blocks of 16 columns, the packed profile prof4 (4 int8 scores
 * per word; swgpu__cu_simt_prof fills swgpu__cu_simt_prof_words(qlen)
 * words).  scratch: swgpu__cu_simt_scratch(words of the batch) bytes.
 */
size_t swgpu__cu_simt_prof_words(int qlen);
void swgpu__cu_simt_prof(const uint8_t *q, int qlen, const int32_t (*s)[32], int32_t *out);
size_t swgpu__cu_simt_scratch(uint64_t words);
int swgpu__cu_simt(const swgpu_cu_batch_t *b, uint32_t first, uint32_t count,
                   const swgpu_cu_query_t *q, const int32_t *prof4, void *scratch,
                   int32_t *scores, cudaStream_t st);

/**
 * Vectorized kernel (32-bit): a warp per subject as a 32-lane SIMD vector,
 * striped query profile vprof per partition (swgpu__cu_vector_prof), lazy-F
 * loop with warp votes, F-carry between partitions in scratch
 * (swgpu__cu_vector_scratch bytes for `warps` persistent warps).
 */
size_t swgpu__cu_vector_prof_words(int qlen);
void swgpu__cu_vector_prof(const uint8_t *q, int qlen, const int32_t (*s)[32], int32_t *out);
size_t swgpu__cu_vector_scratch(uint32_t maxlen, int warps);
int swgpu__cu_vector_warps_per_sm(int *n);
int swgpu__cu_vector(const swgpu_cu_batch_t *b, uint32_t first, uint32_t count,
                     const swgpu_cu_query_t *q, const int32_t *vprof, int warps,
                     void *scratch, uint32_t maxlen, int *ctr, int32_t *scores,
                     cudaStream_t st);

/**
 * Row-parallel kernel (32-bit): one block per subject, each row computed in
 * parallel, horizontal gaps by a block-wide prefix-max scan.  prof: plain
 * profile [32][swgpu__cu_scan_qpad(qlen)] from swgpu__cu_scan_prof.  Queries
 * longer than swgpu__cu_scan_max_qlen() are refused (the engine then uses
 * the intra kernel).
 */
int swgpu__cu_scan_max_qlen(void);
int swgpu__cu_scan_qpad(int qlen);
void swgpu__cu_scan_prof(const uint8_t *q, int qlen, const int32_t (*s)[32], int32_t *out);
int swgpu__cu_scan(const swgpu_cu_batch_t *b, uint32_t first, uint32_t count,
                   const swgpu_cu_query_t *q, const int32_t *prof, int blocks, int *ctr,
                   int32_t *scores, cudaStream_t st);

/**
 * Host model of the DPX and intra kernels: runs the same per-thread code
 * (cells.cuh) lane by lane on the CPU, for tests on machines without a GPU.
 * Host pointers; kind 0: DPX with cfg, 1: intra (32-bit); q and mat as
 * for swgpu__cu_tile_prof (q NULL: a PSSM's rows).  Scores as the kernels
 * write them.  Returns 0, or SWGPU_EINVAL for an unknown cfg.
 */
int swgpu__cu_emulate(int kind, swgpu_cu_cfg_t cfg, const uint32_t *res,
                      const uint32_t *woff, const uint32_t *len, uint32_t n,
                      const uint8_t *q, int qlen, const int16_t *mat, int oe,
                      int ext, int32_t *scores);

#ifdef __cplusplus
}
#endif
#endif
