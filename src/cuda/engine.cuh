/*
 * engine.cuh - what the files of the CUDA scan engine share (private to
 * src/cuda): the engine's state (database chunks and their device buffers,
 * per-GPU streams and buffers, scan_many's batch slots and batches), the
 * allocation checks, the query on the GPU, and the functions one file of
 * the engine calls in another, in namespace swgpu_cuda.
 *
 * The files, in layers (each calls only files listed above it):
 *   engine_mem.cu     device and pinned allocations: growth, out-of-memory
 *                     messages, SWGPU_CUDA_FAIL_ALLOC
 *   engine_layout.cu  the database on the host (packed words, chunks, the
 *                     DPX pair layout) and on the devices (buffers, upload)
 *   engine_scan.cu    the one-query scan (cuda_scan), the DPX configuration
 *   engine_batch.cu   scan_many's plan: query keys, batches, query lanes,
 *                     the batches' buffer sizes
 *   engine_many.cu    scan_many on the GPUs (cuda_scan_many)
 *   engine_free.cu    teardown (cuda_destroy)
 *   engine.cu         create: the environment, the devices, the set-up
 *                     thread; the engine's operations table
 */
#ifndef SWGPU_CUDA_ENGINE_CUH
#define SWGPU_CUDA_ENGINE_CUH

#include "common.cuh"

#include <pthread.h>

namespace swgpu_cuda {

enum { FAM_DPX, FAM_INTRA, FAM_SIMT, FAM_VECTOR, FAM_SCAN };

/* ------------------------------------------- allocations (engine_mem.cu) */

/* Device and pinned host allocations: out of memory is SWGPU_ENOMEM with a
 * message that says what to do (other errors SWGPU_EDEVICE, as CU_CHECK).
 * alloc_inject(N) (SWGPU_CUDA_FAIL_ALLOC=N, for tests) makes the Nth
 * allocation from then on fail as out of memory, as when another process
 * takes the GPU's memory meanwhile. */
void alloc_inject(int at);
cudaError_t alloc_injected(void);
int alloc_fail(cudaError_t e, int pinned, size_t bytes, const char *what, const char *file,
               int line);

#define CU_ALLOC(fn, pinned, p, bytes)                                             \
    do {                                                                           \
        size_t cu_n_ = (bytes);                                                    \
        cudaError_t cu_e_ = alloc_injected();                                      \
        if (cu_e_ == cudaSuccess)                                                  \
            cu_e_ = fn((p), cu_n_);                                                \
        if (cu_e_ != cudaSuccess)                                                  \
            return alloc_fail(cu_e_, pinned, cu_n_, #fn, __FILE__, __LINE__);      \
    } while (0)
#define DEV_ALLOC(p, bytes) CU_ALLOC(cudaMalloc, 0, p, bytes)
#define HOST_ALLOC(p, bytes) CU_ALLOC(cudaMallocHost, 1, p, bytes)

#define NBUF 2 /* streaming buffers per GPU */
/* A chunk's packed words at most this: its word offsets (h_woff) and pair
 * rows (h_poff; at most its residues, 4 per word) are 32-bit */
#define CHUNK_WORDS_MAX ((1ull << 30) - 1)
#define NCTR 8 /* work counters per GPU */
#define SPLIT_MIN 8192 /* subjects for a split scan (see dev_query) */

typedef struct {
    uint32_t k0, n;     /* sorted subjects k0 .. k0+n-1 */
    uint64_t w0, nw;    /* their words in the packed database */
    uint32_t maxlen;    /* longest subject */
    uint32_t nshort;    /* subjects up to the long threshold (an even prefix) */
    uint64_t pr0, npr;  /* DPX pair layout: its rows in h_pres */
    uint32_t pp0, np;   /* its pairs in h_poff */
} chunk_t;

typedef struct {
    uint32_t *res, *woff, *len;
    uint16_t *pres;     /* DPX pair layout (NULL for other kernels) */
    uint32_t *poff;
    int32_t *scores;
    uint64_t cap_w;
    uint32_t cap_n;
    int32_t *h_scores;  /* pinned */
    int chunk;          /* chunk held (resident or last streamed), -1 none */
} dbuf_t;

struct cuda_state;

/* one batch slot of scan_many on one GPU: a resident scan takes the first
 * free one for each batch (one batch computes while the host finishes the
 * one before; a slot stays held while its batch's recompute of saturated
 * scores runs: up to NMB), a streamed scan uses the first two */
#define NMB 4
typedef struct {
    cudaStream_t st, stl;       /* main and long-subject kernels of the slot */
    cudaEvent_t ev_long, ev_done;
    /* the batch's recompute of saturated scores (mq_overflows): launched
     * (ovf_pending), ev_ovf after it; its queries' intra profiles, their
     * table and the (subject, query) pairs staged in h_ovf (pinned) and
     * uploaded to d_ovf; ovf_n pairs */
    cudaEvent_t ev_ovf;
    int ovf_pending;
    uint32_t ovf_n;
    uint8_t *h_ovf, *d_ovf;
    size_t cap_hovf, cap_dovf;
    /* the trace of a batch at debug level (timed): queued, kernels begin,
     * kernels end, scores downloaded; host seconds when it was queued */
    cudaEvent_t ev_tq, ev_tk, ev_tk1, ev_tdl;
    double tq_host;
    uint8_t *d_q, *h_q;         /* the batch's queries, concatenated (h_q pinned) */
    void *d_prof, *d_profl;     /* their profiles: main and long configuration */
    swgpu_cu_mq_t *d_mq, *h_mq; /* query tables: main at 0, long at nq (h_mq pinned) */
    int32_t *d_sc, *h_sc;       /* scores, one row of the chunk's subjects per query */
    void *scr, *scrl;           /* boundary scratch of multi-tile queries */
    int *d_ctr;                 /* 2 work counters */
    /* a query-lane batch: its jobs, then its passes (at qp_pass_off), then
     * the passes' table builds (h_qpt pinned), and the passes' tables */
    uint8_t *d_qpt, *h_qpt;
    void *d_qprof;
    uint32_t qp_njobs;
    size_t qp_pass_off, qp_stride;
    int sized;                  /* allocated for the current scan_many (slot_alloc) */
    size_t cap_q, cap_hq, cap_prof, cap_profl, cap_mq, cap_hmq, cap_sc, cap_hsc, cap_scr,
        cap_scrl, cap_qpt, cap_hqpt, cap_qprof;
} mslot_t;

typedef struct {
    struct cuda_state *S;
    int id, sms;
    cudaStream_t st, stl, cst;  /* compute, long-subject compute, copies */
    cudaStream_t st2;           /* the shortest subjects of a split scan */
    cudaEvent_t ev_copied[NBUF], ev_long[NBUF], ev_scored[NBUF], ev_free[NBUF];
    cudaEvent_t ev_part, ev_b;  /* split scan: first part downloaded; hand-overs */
    /* split scan (resident DPX): subjects [split, split_end) of the chunk are
     * scored, downloaded and copied out while [0, split) still computes */
    uint32_t split, split_end;
    cudaEvent_t ev_k0, ev_k1;   /* around the kernels of a resident scan (timing) */
    float kern_ms;              /* their elapsed time, last scan */
    dbuf_t buf[NBUF];
    int nbuf_used;
    /* per-query device data */
    uint8_t *d_q, *h_q;    /* the query (h_q pinned) */
    int16_t *d_mat;        /* the matrix, mat[32*qcode + rcode] (profiles built here) */
    int16_t *d_tp_main, *d_tp_long, *d_tp_intra;
    int32_t *d_prof;       /* simt or vector profile */
    size_t cap_q, cap_hq, cap_main, cap_long, cap_intra, cap_prof;
    uint32_t *d_idx;       /* overflow list */
    uint32_t *h_idx;
    uint32_t cap_idx;
    int *d_ctr;
    void *scr_main, *scr_long, *scr_intra, *scr_b;
    size_t cap_scr_main, cap_scr_long, cap_scr_intra, cap_scr_b;
    int blocks_main, blocks_long, blocks_intra, warps_vec;
    int intra_up;           /* d_tp_intra holds the current query's profile */
    /* resident: the chunk this GPU owns (-1 none) */
    int own;
    /* scan_many */
    mslot_t ms[NMB];
    cudaStream_t sto;          /* overflow recompute of a finished batch */
    cudaEvent_t ev_t0;         /* the trace's origin: the scan's first batch queued */
    double t0_host;            /* the same on the host (0: not yet this scan) */
    void *retired[64];         /* pinned buffers outgrown during a scan (freed after it) */
    int nretired;
    /* the largest batch's buffer sizes of the current scan_many (slot_alloc) */
    size_t sz_scr, sz_scrl, sz_q, sz_prof, sz_profl, sz_qpt, sz_qprof, sz_nq, sz_n;
    /* results of the current scan */
    int rc;
    char msg[512]; /* rc's message (the error state is per thread) */
    uint64_t overflows;
} gpu_t;

typedef struct cuda_state {
    const swgpu_db_t *db;
    int fam;
    int scan_fam;           /* family used for the current query */
    int oe, ext, smax, sat;
    int use16;              /* scores fit the 16-bit kernels */
    int16_t mat[32 * 32];   /* mat[32*qcode + rcode] */
    int32_t mat32[32][32];
    uint32_t long_len;      /* subjects longer go to the long path */
    swgpu_cu_cfg_t cfg_env; /* SWGPU_CUDA_CFG, G = 0 if unset */
    int pair;               /* SWGPU_CUDA_PAIR: one DPX family P; -1 the default mix */
    int no_split;           /* SWGPU_CUDA_SPLIT=0 */
    int no_many;            /* SWGPU_CUDA_MANY=0: scan_many scans one query at a time */
    int solo;               /* SWGPU_CUDA_SOLO: 0 never, 1 always, -1 by the database's size */
    int no_qp;              /* SWGPU_CUDA_QP=0: no query lanes (the many-query kernel instead) */
    int qp_greedy;          /* SWGPU_CUDA_QP_PACK=0: lanes by the least-loaded rule alone */
    uint32_t qp_units;      /* SWGPU_CUDA_QP_UNITS: work units a lane batch aims at (0: QP_UNITS) */
    /* packed database (host) */
    uint32_t *h_res;        /* pinned when streaming */
    int h_res_pinned;
    uint32_t *h_woff;       /* relative to the chunk */
    uint32_t *h_len;
    uint16_t *h_pres;       /* DPX pair layout: pairs (2p, 2p+1) of the sorted database
                               (registered as pinned memory when streaming) */
    int h_pres_pinned;
    uint64_t *h_gpoff;      /* first row of every pair, and the total (np + 1) */
    uint32_t *h_poff;       /* pair offsets, relative to the chunk's rows */
    pthread_t layout_th;    /* builds h_gpoff and h_pres during the GPUs' set-up */
    int layout_running, layout_rc;
    char layout_msg[256];
    chunk_t *chunks;
    int nchunks;
    int streaming;
    uint64_t chunk_words;   /* a chunk's words at most (CHUNK_WORDS_MAX, SWGPU_CUDA_CHUNK_WORDS) */
    size_t budget;
    /* devices */
    int ndev;
    gpu_t *dev;
    /* current scan */
    const swgpu__query_t *Q; /* the query: its codes, or a PSSM's rows */
    const uint8_t *q;
    int qlen;
    int32_t qsat;           /* DPX scores >= this are recomputed (INT32_MAX: other kernels) */
    swgpu_cu_cfg_t cfg_main, cfg_long;
    int use_long;
    int32_t *h_prof;        /* simt / vector / scan profile (DPX and intra: built on the GPU) */
    size_t cap_h_prof;
    int32_t *out;
    int next_chunk;         /* streaming work queue */
    pthread_mutex_t lock;
} cuda_state_t;

/* grow a device / pinned host allocation to at least n bytes */
int dgrow(void **p, size_t *cap, size_t n);
int hgrow(void **p, size_t *cap, size_t n);
/* hgrow while kernels run: the outgrown buffer waits in d->retired */
int hgrow_keep(gpu_t *d, void **p, size_t *cap, size_t n);
/* free d->retired (the device idle) */
void retire_free(gpu_t *d);
/* grow d's overflow index lists (d_idx, h_idx) to n entries */
int idx_grow(gpu_t *d, uint32_t n);

/* ------------------------------------------------------ the query on the GPU */

static inline size_t align16(size_t x)
{
    return (x + 15) & ~(size_t)15;
}

/*
 * A query on the GPU: its residue codes, or a PSSM's rows as int16 (32 per
 * position), which the profile builders take as a matrix of qlen rows with
 * no codes (kernels.cuh).  blob_q / blob_mat: what the builders take for a
 * blob at d_blob on GPU d.
 */
static inline size_t qblob_bytes(const swgpu__query_t *q)
{
    return q->rows ? q->len * SWGPU_CU_NRES * sizeof(int16_t) : q->len;
}

static inline void qblob_fill(const swgpu__query_t *q, void *dst)
{
    if (!q->rows) {
        memcpy(dst, q->res, q->len);
        return;
    }
    int16_t *d = (int16_t *)dst;
    for (size_t k = 0; k < q->len * SWGPU_CU_NRES; k++)
        d[k] = (int16_t)q->rows[k]; /* in range: check_query */
}

static inline const uint8_t *blob_q(const swgpu__query_t *q, const void *d_blob)
{
    return q->rows ? NULL : (const uint8_t *)d_blob;
}

static inline const int16_t *blob_mat(const swgpu__query_t *q, const void *d_blob,
                                      const int16_t *d_mat)
{
    return q->rows ? (const int16_t *)d_blob : d_mat;
}

/* A PSSM's scores must fit the int16 profiles (the matrix's are checked
 * at create). */
static inline int check_query(const swgpu__query_t *q, size_t i)
{
    if (q->rows && q->len && (q->smin < -32768 || q->smax > 16383))
        return swgpu__fail(SWGPU_ERANGE, "backend cuda: query %zu: PSSM scores %d..%d outside "
                                         "[-32768, 16383]", i + 1, (int)q->smin, (int)q->smax);
    return SWGPU_OK;
}

/* The DPX kernel's threshold for q: a subject scoring this or more may
 * have saturated its 16-bit lane (cells.cuh: every H stays exact below
 * 32767 - smax - 2oe). */
static inline int32_t qsat_of(const cuda_state_t *S, const swgpu__query_t *q)
{
    if (!q->rows)
        return S->sat;
    return SWGPU_CU_SAT16 - (q->smax > 0 ? q->smax : 0) - 2 * S->oe;
}

/* 1 if q may run on the 16-bit DPX kernel: the matrix's condition, or for
 * a PSSM the gap costs and its greatest score (its least score does not
 * matter: the kernel adds a score to an H held >= 0 and takes the maximum
 * with F >= -oe, so a score down to -32768 neither wraps a lane nor raises
 * a cell, kernels.cuh) */
static inline int q_use16(const cuda_state_t *S, const swgpu__query_t *q)
{
    if (!q->rows)
        return S->use16;
    return 2 * S->oe + S->ext < 16000 && q->smax < 8000;
}

/* ---------------------------------------------- database (engine_layout.cu) */

/* start building the DPX pair layout on a thread (here when none starts) */
void layout_start(cuda_state_t *S);
/* h_len and the word starts of the sorted subjects (*wstart: n + 1, malloc'd) */
int layout_words(cuda_state_t *S, uint64_t **wstart);
/* device bytes of a streaming batch's scores in each of its two slots: a
 * sixteenth of the budget (the chunks are cut from what is left) */
static inline size_t stream_score_bytes(const cuda_state_t *S)
{
    return S->budget / 16;
}
/* the chunks: resident (one per GPU) if the database fits S->budget and
 * !force_stream, else streamed; sets S->streaming */
int layout_chunks(cuda_state_t *S, const uint64_t *wstart, int force_stream);
/* the packed residues (families other than DPX) */
int layout_pack(cuda_state_t *S, const uint64_t *wstart);
/* each chunk's share of the pair layout (joins the layout thread) */
int make_pairs(cuda_state_t *S, int pinned);
/* every GPU's buffers; a resident chunk uploaded (*resident_oom, may be
 * NULL: set when a resident chunk's buffers did not fit) */
int dev_buffers(cuda_state_t *S, int *resident_oom);
/* enqueue the upload of chunk c into buffer b on stream s; big_later: all
 * but its packed residues and pair rows (the resident upload stages those) */
int upload_chunk(cuda_state_t *S, dbuf_t *b, int c, cudaStream_t s, int big_later);

/* ---------------------------------------------- one query (engine_scan.cu) */

int cuda_scan(void *state, const swgpu__query_t *Q, int32_t *scores, swgpu_scan_stats_t *st);
/* the DPX configuration for a query of qlen (SWGPU_CUDA_CFG, or the cost model) */
swgpu_cu_cfg_t main_cfg(const cuda_state_t *S, size_t qlen);
/* the next chunk of the streaming work queue, -1 when none is left */
int next_chunk(cuda_state_t *S);

/* ------------------------------------------ scan_many's plan (engine_batch.cu) */

/* one batch of scan_many: queries of one configuration */
typedef struct {
    size_t first, n;            /* queries ord[first .. first + n) */
    swgpu_cu_cfg_t cfg, cfgl;
    int use_long, maxtiles, maxtilesl, maxqlen;
    int qp;                     /* the short subjects by the query-lane kernel */
    uint32_t qp_njobs, qp_npass; /* its plan's jobs and passes (qp_plan) */
} mbatch_t;

/* the queries of a scan_many, in batch order */
typedef struct {
    const swgpu__query_t *q;
    size_t *ord;
} mq_in_t;

/* sort key of a query: its configuration, then its length */
typedef struct {
    int key;
    size_t len, i;
} mkey_t;

/* the largest batch's buffers (bytes; mnq queries) */
typedef struct {
    size_t q, prof, profl, qpt, qprof, nq;
} msizes_t;

/* the query-lane configuration (0: none, SWGPU_CUDA_CFG names one without) */
int qp_cfg(const cuda_state_t *S, swgpu_cu_cfg_t *c);
/* the key of a query the many-query kernels take (qp_on: query lanes) */
int batch_key(swgpu_cu_cfg_t c, int qp_on, size_t qlen);
/* keys sorted by (key, length, index), ord[j] the query of keys[j] */
void sort_keys(mkey_t *keys, size_t nmq, size_t *ord);
/* cut the sorted keys into batches (*bts, *nb; calloc'd), in scan order */
int make_batches(const cuda_state_t *S, const mkey_t *keys, size_t nmq, size_t maxn, int qp_on,
                 swgpu_cu_cfg_t qpc, mbatch_t **bts, size_t *nb);
/* the largest batch's sizes; each query-lane batch's plan counts */
int batch_sizes(const cuda_state_t *S, const mq_in_t *in, mbatch_t *bts, size_t nb,
                msizes_t *z);
/* the jobs of a query-lane batch (counts only when jobs is NULL) */
int qp_plan(const cuda_state_t *S, const gpu_t *d, const mslot_t *m, const mbatch_t *bt,
            const mq_in_t *in, uint32_t *njobs, uint32_t *npass, swgpu_cu_job_t *jobs,
            swgpu_cu_pass_t *pass, swgpu_cu_pbuild_t *pb, swgpu_cu_qpq_t *qt);
/* bytes of a query-lane batch's tables, and where the last three start */
size_t qp_bytes(uint32_t njobs, uint32_t npass, size_t nq, size_t off[3]);
/* resident blocks per SM of the kernel that takes bt's short subjects */
int short_occupancy(const mbatch_t *bt, int *per);

/* ------------------------------------------ many queries (engine_many.cu) */

int cuda_scan_many(void *state, size_t nq, const swgpu__query_t *q, swgpu_scan_sink_t sink,
                   swgpu_scan_ahead_t ahead, void *user, swgpu_scan_stats_t *st);

/* ---------------------------------------------------- teardown (engine_free.cu) */

void cuda_destroy(void *state);

} /* namespace swgpu_cuda */

#endif
