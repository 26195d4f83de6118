/*
 * engine.cu - the CUDA scan engine: database upload (resident, or streamed
 * in chunks when it does not fit the memory budget), per-query profiles,
 * kernel dispatch per family, overflow recompute, several GPUs.
 *
 * Database layout on the device (made once on the host at create):
 * residues in sorted order, packed 4 per 32-bit word, every subject padded
 * to a word with SWGPU_CU_PAD; per subject a word offset (relative to its
 * chunk) and a length.
 *
 * Chunks: contiguous ranges of the sorted database.  When everything fits
 * (SWGPU_GPU_MEMORY, if set, caps the bytes used per GPU), each GPU holds
 * one chunk for good, sized by its share of the multiprocessors.  Otherwise
 * chunks sized to half of what is left after fixed buffers are streamed:
 * the packed database sits in pinned host memory, a copy stream fills one
 * device buffer while the kernels work on the other, and the GPUs take the
 * next chunk from a shared counter (dynamic load balancing).
 *
 * Kernel families (opts->kernel):
 *   NULL, "default", "dpx"  16-bit pairs with DPX (group.cu); subjects above
 *                           a length threshold with one warp per pair;
 *                           saturated subjects recomputed by the intra kernel
 *   "intra"                 the intra-task kernel for every subject
 *   "simt", "vector", "scan" their kernel for subjects up to the threshold,
 *                           the intra kernel above it
 *
 * Environment overrides for experiments: SWGPU_CUDA_CFG="G,R" (DPX
 * configuration G,R[,P]), SWGPU_CUDA_PAIR (one configuration family for the
 * automatic choice, P of kernels.cuh: 0 byte permute, 1 multiply-add, 2 fp16
 * maximum, 3 the shifted form, 4 the carried form; unset: the default mix),
 * SWGPU_CUDA_LONG (length threshold), SWGPU_CUDA_SPLIT=0 (no split scans),
 * SWGPU_CUDA_MANY=0 (scan_many scans one query at a time, for comparisons),
 * SWGPU_CUDA_SOLO=0/1 (batches of one query on large databases: never/always),
 * SWGPU_CUDA_QP=0 (no query lanes: the many-query kernel for every batch),
 * SWGPU_CUDA_QP_UNITS (work units a query-lane batch aims at),
 * SWGPU_GPU_MEMORY (when swgpu_opts_t.max_gpu_memory is 0), and, for tests,
 * SWGPU_CUDA_FAIL_ALLOC=N (the Nth allocation of an engine fails).
 */
#include "common.cuh"

#include <pthread.h>

#include <atomic>

enum { FAM_DPX, FAM_INTRA, FAM_SIMT, FAM_VECTOR, FAM_SCAN };
static const char *fam_names[] = {"default", "intra", "simt", "vector", "scan"};

/* Device and pinned host allocations: out of memory is SWGPU_ENOMEM with a
 * message that says what to do (other errors SWGPU_EDEVICE, as CU_CHECK).
 * SWGPU_CUDA_FAIL_ALLOC=N (for tests) makes the Nth allocation counted from
 * the start of each engine creation fail as out of memory, as when another
 * process takes the GPU's memory meanwhile. */
static std::atomic<int> alloc_fail_at(0), alloc_count(0);

static cudaError_t alloc_injected(void)
{
    int at = alloc_fail_at.load();
    return at > 0 && alloc_count.fetch_add(1) + 1 == at ? cudaErrorMemoryAllocation : cudaSuccess;
}

static int alloc_fail(cudaError_t e, int pinned, size_t bytes, const char *what, const char *file,
                      int line)
{
    if (e != cudaErrorMemoryAllocation)
        return swgpu__cu_fail(e, what, file, line);
    cudaGetLastError();
    if (pinned)
        return swgpu__fail(SWGPU_ENOMEM, "backend cuda: out of pinned host memory (%zu bytes)",
                           bytes);
    return swgpu__fail(SWGPU_ENOMEM, "backend cuda: out of GPU memory (%zu bytes more were "
                                     "needed); --max-memory SIZE, below the GPU's free memory, "
                                     "streams the database in smaller chunks", bytes);
}

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

/* one batch slot of scan_many on one GPU (NMB slots: one batch computes
 * while the host finishes the previous one) */
#define NMB 2
typedef struct {
    cudaStream_t st, stl;       /* main and long-subject kernels of the slot */
    cudaEvent_t ev_long, ev_done;
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
    void *retired[64];         /* pinned buffers outgrown during a scan (freed after it) */
    int nretired;
    /* the largest batch's buffer sizes of the current scan_many (slot_alloc) */
    size_t sz_scr, sz_scrl, sz_q, sz_prof, sz_profl, sz_qpt, sz_qprof, sz_nq, sz_n;
    /* results of the current scan */
    int rc;
    uint64_t overflows;
    pthread_t th;
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

enum { PREP_NONE, PREP_STARTED, PREP_COUNTED, PREP_DONE };
static void prep_wait_for(int state);

/* ------------------------------------------------------------- helpers */

static size_t parse_bytes(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || v <= 0)
        return 0;
    switch (*end) {
    case 'k': case 'K': v *= 1024.0; break;
    case 'm': case 'M': v *= 1024.0 * 1024.0; break;
    case 'g': case 'G': v *= 1024.0 * 1024.0 * 1024.0; break;
    default: break;
    }
    return (size_t)v;
}

/* grow a device allocation to at least n bytes */
static int dgrow(void **p, size_t *cap, size_t n)
{
    if (n <= *cap)
        return SWGPU_OK;
    if (*p)
        CU_CHECK(cudaFree(*p));
    *p = NULL;
    *cap = 0;
    size_t want = n + n / 4;
    DEV_ALLOC(p, want);
    *cap = want;
    return SWGPU_OK;
}

/* grow a pinned host allocation */
static int hgrow(void **p, size_t *cap, size_t n)
{
    if (n <= *cap)
        return SWGPU_OK;
    if (*p)
        CU_CHECK(cudaFreeHost(*p));
    *p = NULL;
    *cap = 0;
    size_t want = n + n / 4;
    HOST_ALLOC(p, want);
    *cap = want;
    return SWGPU_OK;
}

/*
 * Grow a pinned host allocation while kernels run: cudaFreeHost would wait
 * for the whole device, so an outgrown buffer is set aside in d->retired
 * (freed by retire_free once the device is idle; freed at once when the
 * list is full).  scan_many allocates each slot's score rows for its first
 * batch only and grows them here, so that the first kernels need not wait
 * for pinned memory the later batches need (a few hundred MB take 0.1 s).
 */
static int hgrow_keep(gpu_t *d, void **p, size_t *cap, size_t n)
{
    if (n <= *cap)
        return SWGPU_OK;
    if (*p && d->nretired < (int)(sizeof d->retired / sizeof d->retired[0])) {
        d->retired[d->nretired++] = *p;
        *p = NULL;
        *cap = 0;
    }
    return hgrow(p, cap, n);
}

static void retire_free(gpu_t *d)
{
    for (int i = 0; i < d->nretired; i++)
        cudaFreeHost(d->retired[i]);
    d->nretired = 0;
}

/* words of the simt / vector / scan profile */
static size_t prof_words(int fam, int qlen)
{
    switch (fam) {
    case FAM_SIMT: return swgpu__cu_simt_prof_words(qlen);
    case FAM_VECTOR: return swgpu__cu_vector_prof_words(qlen);
    case FAM_SCAN: return (size_t)SWGPU_CU_NRES * swgpu__cu_scan_qpad(qlen);
    default: return 0;
    }
}

/*
 * A query on the GPU: its residue codes, or a PSSM's rows as int16 (32 per
 * position), which the profile builders take as a matrix of qlen rows with
 * no codes (kernels.cuh).  blob_q / blob_mat: what the builders take for a
 * blob at d_blob on GPU d.
 */
static size_t qblob_bytes(const swgpu__query_t *q)
{
    return q->rows ? q->len * SWGPU_CU_NRES * sizeof(int16_t) : q->len;
}

static void qblob_fill(const swgpu__query_t *q, void *dst)
{
    if (!q->rows) {
        memcpy(dst, q->res, q->len);
        return;
    }
    int16_t *d = (int16_t *)dst;
    for (size_t k = 0; k < q->len * SWGPU_CU_NRES; k++)
        d[k] = (int16_t)q->rows[k]; /* in range: check_query */
}

static const uint8_t *blob_q(const swgpu__query_t *q, const void *d_blob)
{
    return q->rows ? NULL : (const uint8_t *)d_blob;
}

static const int16_t *blob_mat(const swgpu__query_t *q, const void *d_blob, const int16_t *d_mat)
{
    return q->rows ? (const int16_t *)d_blob : d_mat;
}

/* A PSSM's scores must fit the int16 profiles (the matrix's are checked
 * at create). */
static int check_query(const swgpu__query_t *q, size_t i)
{
    if (q->rows && q->len && (q->smin < -32768 || q->smax > 16383))
        return swgpu__fail(SWGPU_ERANGE, "backend cuda: query %zu: PSSM scores %d..%d outside "
                                         "[-32768, 16383]", i + 1, (int)q->smin, (int)q->smax);
    return SWGPU_OK;
}

/* The DPX kernel's threshold for q: a subject scoring this or more may
 * have saturated its 16-bit lane (cells.cuh: every H stays exact below
 * 32767 - smax - 2oe). */
static int32_t qsat_of(const cuda_state_t *S, const swgpu__query_t *q)
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
static int q_use16(const cuda_state_t *S, const swgpu__query_t *q)
{
    if (!q->rows)
        return S->use16;
    return 2 * S->oe + S->ext < 16000 && q->smax < 8000;
}

/* fn(ctx, a, b) over [0, n) in ranges of grain items on all cores (the
 * host layout of a large database: hundreds of MB to pack at start-up) */
typedef struct {
    void (*fn)(void *, uint64_t, uint64_t);
    void *ctx;
    uint64_t n, grain;
    uint64_t next; /* atomic */
} pfor_t;

static void *pfor_run(void *arg)
{
    pfor_t *p = (pfor_t *)arg;
    for (;;) {
        uint64_t a = __atomic_fetch_add(&p->next, p->grain, __ATOMIC_RELAXED);
        if (a >= p->n)
            return NULL;
        p->fn(p->ctx, a, a + p->grain < p->n ? a + p->grain : p->n);
    }
}

static void par_for(uint64_t n, uint64_t grain, void (*fn)(void *, uint64_t, uint64_t), void *ctx)
{
    pfor_t p = {fn, ctx, n, grain ? grain : 1, 0};
    int T = swgpu__ncores();
    if (T > 64)
        T = 64;
    if ((uint64_t)T > n / p.grain + 1)
        T = (int)(n / p.grain + 1);
    pthread_t th[64];
    int started = 0;
    for (; started < T - 1; started++)
        if (pthread_create(&th[started], NULL, pfor_run, &p))
            break; /* fewer threads: the calling thread does the rest */
    pfor_run(&p);
    for (int i = 0; i < started; i++)
        pthread_join(th[i], NULL);
}

/* ---------------------------------------------------- DPX configuration */

/*
 * The default family: per R, the cell form measured fastest on an H100
 * (bench/NOTES-gpu.md v14, v17): the carried form (P=4) at R = 24, 28 and
 * 32, the shifted form (P=3) below (P=4 is slower at R <= 20).
 */
static int default_pair(int R)
{
    return R >= 24 ? 4 : 3;
}

/*
 * Pick (G, R) for a query: fewest estimated instructions.  A tile pass over
 * a subject of L rows costs (L + G - 1) steps of R cell pairs plus a fixed
 * per-step overhead (worth about 4 cell pairs); columns past the query are
 * wasted work.  pair: the family P, or -1 for the default family.  The
 * carried form at R = 24 computes a cell pair for less than this model
 * says: per computed cell on long queries it is 0.6% slower than R = 32,
 * where the model charges it 3.7% more for its step overhead; its cost is
 * weighted 0.970 (bench/NOTES-gpu.md v16, v17).
 */
static swgpu_cu_cfg_t pick_cfg(int qlen, double avglen, int pair)
{
    int n;
    const swgpu_cu_cfg_t *c = swgpu__cu_dpx_configs(&n);
    swgpu_cu_cfg_t best = c[0];
    double bestc = 1e300;
    for (int i = 0; i < n; i++) {
        if (c[i].G == 32 || c[i].P != (pair >= 0 ? pair : default_pair(c[i].R)))
            continue; /* the long-subject configuration; another family */
        int W = c[i].G * c[i].R, nt = (qlen + W - 1) / W;
        double w = c[i].P == 4 && c[i].R == 24 ? 0.970 : 1.0;
        double cost = (double)nt * c[i].G * (avglen + c[i].G - 1) * (c[i].R + 4.0) * w;
        if (cost < bestc * 0.999) {
            bestc = cost;
            best = c[i];
        }
    }
    return best;
}

/*
 * The query-lane configuration (k_qp): one for every query, since a lane
 * wastes less than R columns per query whatever the tile width; groups of
 * 8 at R = 32 in the carried form, measured fastest on whole searches
 * (bench/NOTES-gpu.md v21).  SWGPU_CUDA_CFG forces
 * another (none when it names a configuration without a lane instance).
 */
static int qp_cfg(const cuda_state_t *S, swgpu_cu_cfg_t *c)
{
    const swgpu_cu_cfg_t def = {SWGPU_CU_QP_G, 32, 4};
    *c = S->cfg_env.G ? S->cfg_env : def;
    return swgpu__cu_qp_has(*c);
}

/* ------------------------------------------------------------- create */

static void cuda_destroy(void *state);

static int dev_alloc_buf(gpu_t *d, dbuf_t *b, uint64_t words, uint32_t n, uint64_t npr,
                         uint32_t np)
{
    CU_CHECK(cudaSetDevice(d->id));
    if (npr) {
        DEV_ALLOC((void **)&b->pres, npr * sizeof(uint16_t));
        DEV_ALLOC((void **)&b->poff, (np ? np : 1) * sizeof(uint32_t));
    }
    b->res = NULL; /* words 0: the kernels read residues from the pair layout */
    if (words)
        DEV_ALLOC((void **)&b->res, words * sizeof(uint32_t));
    DEV_ALLOC((void **)&b->woff, (n ? n : 1) * sizeof(uint32_t));
    DEV_ALLOC((void **)&b->len, (n ? n : 1) * sizeof(uint32_t));
    DEV_ALLOC((void **)&b->scores, (n ? n : 1) * sizeof(int32_t));
    HOST_ALLOC((void **)&b->h_scores, (n ? n : 1) * sizeof(int32_t));
    b->cap_w = words;
    b->cap_n = n;
    b->chunk = -1;
    return SWGPU_OK;
}

/* enqueue the upload of chunk c into buffer b on stream s */
static int upload_chunk(cuda_state_t *S, dbuf_t *b, int c, cudaStream_t s)
{
    const chunk_t *ch = &S->chunks[c];
    if (S->h_res)
        CU_CHECK(cudaMemcpyAsync(b->res, S->h_res + ch->w0, ch->nw * sizeof(uint32_t),
                                 cudaMemcpyHostToDevice, s));
    CU_CHECK(cudaMemcpyAsync(b->woff, S->h_woff + ch->k0, ch->n * sizeof(uint32_t),
                             cudaMemcpyHostToDevice, s));
    CU_CHECK(cudaMemcpyAsync(b->len, S->h_len + ch->k0, ch->n * sizeof(uint32_t),
                             cudaMemcpyHostToDevice, s));
    if (S->h_pres) {
        CU_CHECK(cudaMemcpyAsync(b->pres, S->h_pres + ch->pr0, ch->npr * sizeof(uint16_t),
                                 cudaMemcpyHostToDevice, s));
        CU_CHECK(cudaMemcpyAsync(b->poff, S->h_poff + ch->pp0, ch->np * sizeof(uint32_t),
                                 cudaMemcpyHostToDevice, s));
    }
    b->chunk = c;
    return SWGPU_OK;
}

/* split sorted subjects [k0, k1) into chunks of at most maxw words */
static int make_chunks(cuda_state_t *S, const uint64_t *wstart, uint32_t k0, uint32_t k1,
                       uint64_t maxw, int *cap)
{
    uint32_t k = k0;
    while (k < k1) {
        uint32_t e = k;
        while (e < k1 && (e == k || wstart[e + 1] - wstart[k] <= maxw))
            e++;
        if (e < k1 && (e & 1)) /* chunks start on an even subject: the pair layout */
            e = e - 1 > k ? e - 1 : e + 1;
        if (S->nchunks == *cap) {
            int nc = *cap ? 2 * *cap : 16;
            chunk_t *p = (chunk_t *)realloc(S->chunks, nc * sizeof *p);
            if (!p)
                return swgpu__fail(SWGPU_ENOMEM, "cuda engine: out of memory for chunk list");
            S->chunks = p;
            *cap = nc;
        }
        chunk_t *ch = &S->chunks[S->nchunks++];
        ch->k0 = k;
        ch->n = e - k;
        ch->w0 = wstart[k];
        ch->nw = wstart[e] - wstart[k];
        ch->maxlen = 0;
        ch->nshort = 0;
        for (uint32_t i = k; i < e; i++) {
            uint32_t l = (uint32_t)(S->db->off[i + 1] - S->db->off[i]);
            if (l > ch->maxlen)
                ch->maxlen = l;
            if (l <= S->long_len)
                ch->nshort = i - k + 1;
            S->h_woff[i] = (uint32_t)(wstart[i] - ch->w0);
        }
        ch->nshort &= ~1u; /* pairs of the long path start on an even subject */
        k = e;
    }
    return SWGPU_OK;
}

/* the rows of global pairs [p0, p1) (offsets already in h_gpoff) */
static void fill_pairs(void *arg, uint64_t p0, uint64_t p1)
{
    cuda_state_t *S = (cuda_state_t *)arg;
    const swgpu_db_t *db = S->db;
    for (uint64_t p = p0; p < p1; p++) {
        const uint64_t a = 2 * p;
        const uint32_t la = (uint32_t)(db->off[a + 1] - db->off[a]);
        const uint32_t lb = a + 1 < db->n ? (uint32_t)(db->off[a + 2] - db->off[a + 1]) : 0;
        const uint32_t L = la > lb ? la : lb, m = la < lb ? la : lb;
        const uint8_t *ra = db->res + db->off[a];
        const uint8_t *rb = lb ? db->res + db->off[a + 1] : NULL;
        uint16_t *row = S->h_pres + S->h_gpoff[p];
        uint32_t j = 0;
        for (; j < m; j++)
            row[j] = (uint16_t)((ra[j] & 31u) | (rb[j] & 31u) << 8);
        for (; j < L; j++) {
            uint32_t x = j < la ? (ra[j] & 31u) : (uint32_t)SWGPU_CU_PAD;
            uint32_t y = j < lb ? (rb[j] & 31u) : (uint32_t)SWGPU_CU_PAD;
            row[j] = (uint16_t)(x | y << 8);
        }
    }
}

/* The DPX pair layout of the whole sorted database: rows of (code 2p |
 * code 2p+1 << 8).  It needs no GPU, so it is built on a thread while the
 * GPUs are set up (make_chunks starts every chunk on an even subject, so a
 * chunk's pairs are a range of these). */
static void *layout_thread(void *arg)
{
    cuda_state_t *S = (cuda_state_t *)arg;
    const swgpu_db_t *db = S->db;
    const uint64_t np = (db->n + 1) / 2;
    S->h_gpoff = (uint64_t *)malloc((np + 1) * sizeof(uint64_t));
    if (!S->h_gpoff)
        goto nomem;
    {
        uint64_t rows = 0;
        for (uint64_t p = 0; p < np; p++) {
            const uint64_t a = 2 * p;
            const uint64_t la = db->off[a + 1] - db->off[a];
            const uint64_t lb = a + 1 < db->n ? db->off[a + 2] - db->off[a + 1] : 0;
            S->h_gpoff[p] = rows;
            rows += la > lb ? la : lb;
        }
        S->h_gpoff[np] = rows;
        S->h_pres = (uint16_t *)malloc((size_t)(rows ? rows : 1) * sizeof(uint16_t));
        if (!S->h_pres)
            goto nomem;
        par_for(np, 2048, fill_pairs, S);
    }
    return NULL;
nomem:
    S->layout_rc = SWGPU_ENOMEM;
    snprintf(S->layout_msg, sizeof S->layout_msg,
             "cuda engine: out of memory for the pair layout of %llu sequences",
             (unsigned long long)db->n);
    return NULL;
}

static int layout_join(cuda_state_t *S)
{
    if (S->layout_running) {
        pthread_join(S->layout_th, NULL);
        S->layout_running = 0;
    }
    return S->layout_rc ? swgpu__fail(S->layout_rc, "%s", S->layout_msg) : SWGPU_OK;
}

/* each chunk's share of the pair layout; pinned (registered) when streaming */
static int make_pairs(cuda_state_t *S, int pinned)
{
    int rc = layout_join(S);
    if (rc)
        return rc;
    const uint64_t np = (S->db->n + 1) / 2;
    S->h_poff = (uint32_t *)malloc((np ? np : 1) * sizeof(uint32_t));
    if (!S->h_poff)
        return swgpu__fail(SWGPU_ENOMEM, "cuda engine: out of memory for %llu pairs",
                           (unsigned long long)np);
    for (int c = 0; c < S->nchunks; c++) {
        chunk_t *ch = &S->chunks[c];
        if (ch->k0 & 1)
            return swgpu__fail(SWGPU_EINVAL, "cuda engine: chunk %d starts on an odd subject", c);
        ch->pp0 = ch->k0 / 2;
        ch->np = (ch->n + 1) / 2;
        ch->pr0 = S->h_gpoff[ch->pp0];
        ch->npr = S->h_gpoff[ch->pp0 + ch->np] - ch->pr0;
        if (ch->npr > 0xffffffffull)
            return swgpu__fail(SWGPU_ERANGE, "cuda engine: chunk of %llu pair rows",
                               (unsigned long long)ch->npr);
        for (uint32_t p = 0; p < ch->np; p++)
            S->h_poff[ch->pp0 + p] = (uint32_t)(S->h_gpoff[ch->pp0 + p] - ch->pr0);
    }
    if (pinned) {
        size_t bytes = (size_t)(S->h_gpoff[np] ? S->h_gpoff[np] : 1) * sizeof(uint16_t);
        if (cudaHostRegister(S->h_pres, bytes, cudaHostRegisterDefault) == cudaSuccess)
            S->h_pres_pinned = 1;
        else
            cudaGetLastError(); /* streamed from pageable memory: slower, still correct */
    }
    return SWGPU_OK;
}

typedef struct {
    const swgpu_db_t *db;
    const uint64_t *wstart;
    uint32_t *h_res;
} pack_ctx_t;

/* subjects [k0, k1) packed 4 residues per word */
static void pack_res(void *arg, uint64_t k0, uint64_t k1)
{
    const pack_ctx_t *pk = (const pack_ctx_t *)arg;
    for (uint64_t k = k0; k < k1; k++) {
        uint64_t l = pk->db->off[k + 1] - pk->db->off[k], nw = (l + 3) / 4;
        const uint8_t *r = pk->db->res + pk->db->off[k];
        uint32_t *dst = pk->h_res + pk->wstart[k];
        for (uint64_t i = 0; i < nw; i++) {
            uint32_t word = 0;
            for (int b = 0; b < 4; b++) {
                uint64_t j = 4 * i + b;
                uint32_t c = j < l ? (r[j] & 31u) : (uint32_t)SWGPU_CU_PAD;
                word |= c << (8 * b);
            }
            dst[i] = word;
        }
    }
}

static int dev_setup(cuda_state_t *S, gpu_t *d)
{
    cudaDeviceProp p;
    CU_CHECK(cudaSetDevice(d->id));
    CU_CHECK(cudaGetDeviceProperties(&p, d->id));
    d->sms = p.multiProcessorCount;
    CU_CHECK(cudaStreamCreateWithFlags(&d->st, cudaStreamNonBlocking));
    CU_CHECK(cudaStreamCreateWithFlags(&d->stl, cudaStreamNonBlocking));
    CU_CHECK(cudaStreamCreateWithFlags(&d->st2, cudaStreamNonBlocking));
    CU_CHECK(cudaEventCreateWithFlags(&d->ev_part, cudaEventDisableTiming));
    CU_CHECK(cudaEventCreateWithFlags(&d->ev_b, cudaEventDisableTiming));
    CU_CHECK(cudaStreamCreateWithFlags(&d->cst, cudaStreamNonBlocking));
    for (int b = 0; b < NBUF; b++) {
        CU_CHECK(cudaEventCreateWithFlags(&d->ev_copied[b], cudaEventDisableTiming));
        CU_CHECK(cudaEventCreateWithFlags(&d->ev_long[b], cudaEventDisableTiming));
        CU_CHECK(cudaEventCreateWithFlags(&d->ev_scored[b], cudaEventDisableTiming));
        CU_CHECK(cudaEventCreateWithFlags(&d->ev_free[b], cudaEventDisableTiming));
        d->buf[b].chunk = -1;
    }
    CU_CHECK(cudaEventCreate(&d->ev_k0));
    CU_CHECK(cudaEventCreate(&d->ev_k1));
    DEV_ALLOC((void **)&d->d_ctr, NCTR * NBUF * sizeof(int));
    DEV_ALLOC((void **)&d->d_mat, sizeof S->mat);
    CU_CHECK(cudaMemcpy(d->d_mat, S->mat, sizeof S->mat, cudaMemcpyHostToDevice));
    int per = 0;
    int rc = swgpu__cu_intra_occupancy(&per);
    if (rc)
        return rc;
    d->blocks_intra = (per > 0 ? per : 1) * d->sms;
    return SWGPU_OK;
}

/* the engine; force_stream: stream the database even if it seems to fit;
 * *resident_oom (may be NULL) set when the device buffers of a resident
 * database could not be allocated */
static int create_engine(const swgpu_db_t *db, const swgpu_matrix_t *m, const swgpu_opts_t *o,
                         int force_stream, int *resident_oom, void **state)
{
    int rc = SWGPU_OK, count = 0, cap = 0;
    uint64_t *wstart = NULL;
    cuda_state_t *S = NULL;
    const char *env;
    cudaError_t e;

    const double t_start = swgpu__now();
    *state = NULL;
    /* the count; the contexts may still be in the making on the set-up
     * thread (the runtime waits for them where needed) while the database
     * layout starts below */
    prep_wait_for(PREP_COUNTED);
    e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count <= 0) {
        cudaGetLastError();
        return swgpu__fail(SWGPU_ENODEV, "backend cuda: no CUDA device available (%s)",
                           e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
    }
    S = (cuda_state_t *)calloc(1, sizeof *S);
    if (!S)
        return swgpu__fail(SWGPU_ENOMEM, "cuda engine: out of memory");
    pthread_mutex_init(&S->lock, NULL);
    S->db = db;

    /* kernel family */
    if (!o->kernel || !strcmp(o->kernel, "default") || !strcmp(o->kernel, "dpx"))
        S->fam = FAM_DPX;
    else if (!strcmp(o->kernel, "intra"))
        S->fam = FAM_INTRA;
    else if (!strcmp(o->kernel, "simt"))
        S->fam = FAM_SIMT;
    else if (!strcmp(o->kernel, "vector"))
        S->fam = FAM_VECTOR;
    else if (!strcmp(o->kernel, "scan"))
        S->fam = FAM_SCAN;
    else {
        rc = swgpu__fail(SWGPU_EINVAL, "--kernel %s: unknown GPU kernel (expected default, dpx, "
                                       "simt, intra, vector or scan)", o->kernel);
        goto fail;
    }

    /* scoring */
    S->oe = o->gap_open + o->gap_extend;
    S->ext = o->gap_extend;
    {
        int smin = 0, smax = 0;
        for (int a = 0; a < 32; a++)
            for (int r = 0; r < 32; r++) {
                int v = m->s[a][r];
                if (v < smin) smin = v;
                if (v > smax) smax = v;
            }
        if (smin < -16384 || smax > 16383) {
            rc = swgpu__fail(SWGPU_ERANGE, "backend cuda: matrix %s scores outside "
                                           "[-16384, 16383]", m->name);
            goto fail;
        }
        if (o->gap_open < 0 || o->gap_extend < 0 || S->oe > (1 << 28)) {
            rc = swgpu__fail(SWGPU_ERANGE, "backend cuda: gap penalties %d/%d out of range",
                             o->gap_open, o->gap_extend);
            goto fail;
        }
        S->smax = smax;
        /* minus 2oe: the carried form (P=4) holds H + 2oe */
        S->sat = SWGPU_CU_SAT16 - (smax > 0 ? smax : 0) - 2 * S->oe;
        /* 16-bit lanes: values stay above -(2*oe+ext) and below sat + smax */
        S->use16 = 2 * S->oe + S->ext < 16000 && smin > -8000;
        for (int a = 0; a < 32; a++)
            for (int r = 0; r < 32; r++) {
                S->mat[32 * a + r] = (int16_t)m->s[a][r];
                S->mat32[a][r] = m->s[a][r];
            }
    }
    if (S->fam == FAM_DPX && !S->use16)
        S->fam = FAM_INTRA; /* 32-bit throughout */
    if (S->fam == FAM_DPX) {
        if (pthread_create(&S->layout_th, NULL, layout_thread, S) == 0)
            S->layout_running = 1;
        else
            layout_thread(S); /* here, then */
    }
    if (S->fam == FAM_SIMT) {
        for (int a = 0; a < 32; a++)
            for (int r = 0; r < 32; r++)
                if (m->s[a][r] < -127 || m->s[a][r] > 127) {
                    rc = swgpu__fail(SWGPU_ERANGE, "--kernel simt: matrix %s scores outside "
                                                   "[-127, 127] (8-bit profile)", m->name);
                    goto fail;
                }
    }
    S->long_len = S->fam == FAM_INTRA ? 0 : 2048;
    if ((env = getenv("SWGPU_CUDA_LONG")) && *env)
        S->long_len = (uint32_t)strtoul(env, NULL, 10);
    S->no_split = (env = getenv("SWGPU_CUDA_SPLIT")) && !strcmp(env, "0");
    S->no_many = (env = getenv("SWGPU_CUDA_MANY")) && !strcmp(env, "0");
    S->solo = (env = getenv("SWGPU_CUDA_SOLO")) && *env ? (strcmp(env, "0") != 0) : -1;
    S->no_qp = (env = getenv("SWGPU_CUDA_QP")) && !strcmp(env, "0");
    if ((env = getenv("SWGPU_CUDA_QP_UNITS")) && *env)
        S->qp_units = (uint32_t)strtoul(env, NULL, 10);
    S->pair = -1;
    if ((env = getenv("SWGPU_CUDA_PAIR")) && *env) {
        char *end;
        long v = strtol(env, &end, 10);
        if (*end || v < 0 || v > 4) {
            rc = swgpu__fail(SWGPU_EINVAL, "SWGPU_CUDA_PAIR=%s: expected 0..4", env);
            goto fail;
        }
        S->pair = (int)v;
    }
    if ((env = getenv("SWGPU_CUDA_CFG")) && *env) {
        if (sscanf(env, "%d,%d,%d", &S->cfg_env.G, &S->cfg_env.R, &S->cfg_env.P) < 2) {
            rc = swgpu__fail(SWGPU_EINVAL, "SWGPU_CUDA_CFG=%s: expected G,R[,P]", env);
            goto fail;
        }
    }

    /* devices */
    S->ndev = o->gpus > 0 && o->gpus < count ? o->gpus : count;
    S->dev = (gpu_t *)calloc(S->ndev, sizeof *S->dev);
    if (!S->dev) {
        rc = swgpu__fail(SWGPU_ENOMEM, "cuda engine: out of memory");
        goto fail;
    }
    for (int i = 0; i < S->ndev; i++) {
        S->dev[i].S = S;
        S->dev[i].id = i;
        S->dev[i].own = -1;
        if ((rc = dev_setup(S, &S->dev[i])))
            goto fail;
    }

    swgpu__log(SWGPU_LOG_INFO, "cuda: %d device(s) ready (%.3f s)", S->ndev,
               swgpu__now() - t_start);
    /* host layout: word starts of the sorted subjects */
    {
        uint64_t n = db->n, w = 0;
        wstart = (uint64_t *)malloc((n + 1) * sizeof *wstart);
        S->h_woff = (uint32_t *)malloc((n ? n : 1) * sizeof(uint32_t));
        S->h_len = (uint32_t *)malloc((n ? n : 1) * sizeof(uint32_t));
        if (!wstart || !S->h_woff || !S->h_len) {
            rc = swgpu__fail(SWGPU_ENOMEM, "cuda engine: out of memory for %llu subjects",
                             (unsigned long long)n);
            goto fail;
        }
        for (uint64_t k = 0; k < n; k++) {
            uint64_t l = db->off[k + 1] - db->off[k];
            if (l > 0xffffffffull) {
                rc = swgpu__fail(SWGPU_ERANGE, "backend cuda: subject of %llu residues",
                                 (unsigned long long)l);
                goto fail;
            }
            wstart[k] = w;
            S->h_len[k] = (uint32_t)l;
            w += (l + 3) / 4;
        }
        wstart[n] = w;

        /* memory: what one GPU may use */
        size_t freeb = 0, totalb = 0;
        CU_GO(cudaSetDevice(0));
        CU_GO(cudaMemGetInfo(&freeb, &totalb));
        S->budget = freeb - freeb / 8;
        if (o->max_gpu_memory) {
            if (o->max_gpu_memory < S->budget)
                S->budget = (size_t)o->max_gpu_memory;
        } else if ((env = getenv("SWGPU_GPU_MEMORY")) && *env) {
            size_t b = parse_bytes(env);
            if (!b) {
                rc = swgpu__fail(SWGPU_EINVAL, "SWGPU_GPU_MEMORY=%s: expected bytes, e.g. 512M",
                                 env);
                goto fail;
            }
            if (b < S->budget)
                S->budget = b;
        }
        /* fixed per-GPU costs: scratch for the longest subjects, profiles */
        size_t fixed = (size_t)64 << 20;
        size_t per_word = 4 + (S->fam == FAM_SIMT ? 32 : 0) + (S->fam == FAM_DPX ? 4 : 0);
        size_t per_seq = 16 + (S->fam == FAM_DPX ? 2 : 0);
        size_t need = (size_t)w * per_word + (size_t)n * per_seq;
        if (!force_stream && fixed + need / S->ndev + need / 64 <= S->budget) {
            /* resident: one chunk per GPU, sized by multiprocessors */
            int totsm = 0;
            for (int i = 0; i < S->ndev; i++)
                totsm += S->dev[i].sms;
            uint32_t k = 0;
            for (int i = 0; i < S->ndev; i++) {
                uint64_t target = (uint64_t)((double)w * S->dev[i].sms / totsm) + 1;
                uint32_t e2 = k;
                if (i == S->ndev - 1)
                    e2 = (uint32_t)n;
                else
                    while (e2 < n && wstart[e2] - wstart[k] < target)
                        e2++;
                if (e2 < n && (e2 & 1))
                    e2++; /* chunks start on an even subject */
                int before = S->nchunks;
                if ((rc = make_chunks(S, wstart, k, e2, ~0ull, &cap)))
                    goto fail;
                if (S->nchunks > before)
                    S->dev[i].own = before;
                k = e2;
            }
            S->streaming = 0;
        } else {
            if (S->budget < fixed + ((size_t)256 << 10)) {
                rc = swgpu__fail(SWGPU_EBUDGET, "backend cuda: GPU memory budget of %zu bytes "
                                                "is below the %zu bytes needed (raise --max-memory)",
                                 S->budget, fixed + ((size_t)256 << 10));
                goto fail;
            }
            uint64_t maxw = (S->budget - fixed) / 2 / (per_word + per_seq);
            if (maxw < 1024)
                maxw = 1024;
            uint64_t longest = 0;
            for (uint64_t k = 0; k < n; k++)
                if (wstart[k + 1] - wstart[k] > longest)
                    longest = wstart[k + 1] - wstart[k];
            if (longest > maxw) {
                rc = swgpu__fail(SWGPU_EBUDGET, "backend cuda: GPU memory budget too small for "
                                                "a subject of %llu residues",
                                 (unsigned long long)longest * 4);
                goto fail;
            }
            if ((rc = make_chunks(S, wstart, 0, (uint32_t)n, maxw, &cap)))
                goto fail;
            S->streaming = 1;
        }
        /* the packed residues (the default family reads the pair layout only,
         * its 32-bit recomputes too) */
        size_t bytes = (size_t)(w ? w : 1) * sizeof(uint32_t);
        if (S->fam == FAM_DPX) {
            /* nothing to pack */
        } else if (S->streaming && cudaMallocHost((void **)&S->h_res, bytes) == cudaSuccess) {
            S->h_res_pinned = 1;
        } else {
            cudaGetLastError();
            S->h_res = (uint32_t *)malloc(bytes);
            if (!S->h_res) {
                rc = swgpu__fail(SWGPU_ENOMEM, "cuda engine: out of memory for %zu bytes", bytes);
                goto fail;
            }
        }
        if (S->h_res) {
            pack_ctx_t pk = {db, wstart, S->h_res};
            par_for(n, 1024, pack_res, &pk);
        }
    }
    swgpu__log(SWGPU_LOG_INFO, "cuda: database packed (%.3f s)", swgpu__now() - t_start);

    if (S->fam == FAM_DPX && (rc = make_pairs(S, S->streaming)))
        goto fail;

    /* device buffers */
    for (int i = 0; i < S->ndev; i++) {
        gpu_t *d = &S->dev[i];
        if (!S->streaming) {
            if (d->own < 0)
                continue;
            const chunk_t *ch = &S->chunks[d->own];
            if ((rc = dev_alloc_buf(d, &d->buf[0], S->h_res ? ch->nw : 0, ch->n,
                                    S->h_pres ? ch->npr + 1 : 0,
                                    ch->np))) {
                if (rc == SWGPU_ENOMEM && resident_oom)
                    *resident_oom = 1;
                goto fail;
            }
            d->nbuf_used = 1;
            if ((rc = upload_chunk(S, &d->buf[0], d->own, d->cst)))
                goto fail;
            CU_GO(cudaStreamSynchronize(d->cst));
        } else {
            uint64_t mw = 0, mr = 0;
            uint32_t mn = 0, mp = 0;
            for (int c = 0; c < S->nchunks; c++) {
                if (S->chunks[c].nw > mw) mw = S->chunks[c].nw;
                if (S->chunks[c].n > mn) mn = S->chunks[c].n;
                if (S->chunks[c].npr > mr) mr = S->chunks[c].npr;
                if (S->chunks[c].np > mp) mp = S->chunks[c].np;
            }
            for (int b = 0; b < NBUF; b++)
                if ((rc = dev_alloc_buf(d, &d->buf[b], S->h_res ? mw : 0, mn,
                                        S->h_pres ? mr + 1 : 0, mp)))
                    goto fail;
            d->nbuf_used = NBUF;
        }
    }
    swgpu__log(SWGPU_LOG_INFO, "cuda: %d GPU(s), kernel %s, %s, %d chunk(s) (%.3f s)", S->ndev,
               fam_names[S->fam], S->streaming ? "streaming" : "resident", S->nchunks,
               swgpu__now() - t_start);
    free(wstart);
    *state = S;
    return SWGPU_OK;
fail:
    free(wstart);
    cuda_destroy(S);
    return rc;
}

/* A resident database whose buffers do not fit after all (the free memory
 * measured at the start was taken meanwhile, by another process or another
 * search of this one) is streamed instead, under a budget measured anew. */
static int cuda_create(const swgpu_db_t *db, const swgpu_matrix_t *m, const swgpu_opts_t *o,
                       void **state)
{
    const char *env = getenv("SWGPU_CUDA_FAIL_ALLOC");
    int resident_oom = 0;
    alloc_fail_at.store(env && *env ? atoi(env) : 0);
    alloc_count.store(0);
    int rc = create_engine(db, m, o, 0, &resident_oom, state);
    if (rc == SWGPU_ENOMEM && resident_oom) {
        swgpu__log(SWGPU_LOG_WARN, "%s: streaming the database instead", swgpu_last_error());
        rc = create_engine(db, m, o, 1, NULL, state);
    }
    return rc;
}

/* --------------------------------------------------------------- scan */

/* the intra kernel's profile for the current query, built on first use */
/* the intra kernel's profile of the current query, built on this GPU when
 * first needed (long subjects, 32-bit recomputes) */
static int intra_prof(cuda_state_t *S, gpu_t *d)
{
    int rc;
    const swgpu_cu_cfg_t cfg = {SWGPU_CU_INTRA_THREADS, SWGPU_CU_INTRA_R, 0};
    if (d->intra_up)
        return SWGPU_OK;
    const size_t n = swgpu__cu_dpx_prof_bytes(cfg, S->qlen);
    if ((rc = dgrow((void **)&d->d_tp_intra, &d->cap_intra, n)) ||
        (rc = swgpu__cu_prof_dev(cfg, blob_q(S->Q, d->d_q), S->qlen,
                                 blob_mat(S->Q, d->d_q, d->d_mat), d->d_tp_intra, d->st)))
        return rc;
    d->intra_up = 1;
    return SWGPU_OK;
}

/* per-query device data and kernel sizes on one GPU */
static int dev_query(cuda_state_t *S, gpu_t *d)
{
    int rc, qlen = S->qlen;
    CU_CHECK(cudaSetDevice(d->id));
    /* the query (codes or PSSM rows) through a pinned buffer: an
     * asynchronous copy (from the caller's pageable memory the driver
     * stages it and waits) */
    const size_t qb = qblob_bytes(S->Q);
    const uint8_t *dq = NULL;
    const int16_t *dmat = NULL;
    if ((rc = dgrow((void **)&d->d_q, &d->cap_q, qb)) ||
        (rc = hgrow((void **)&d->h_q, &d->cap_hq, qb)))
        return rc;
    qblob_fill(S->Q, d->h_q);
    CU_CHECK(cudaMemcpyAsync(d->d_q, d->h_q, qb, cudaMemcpyHostToDevice, d->st));
    dq = blob_q(S->Q, d->d_q);
    dmat = blob_mat(S->Q, d->d_q, d->d_mat);
    size_t n;
    d->intra_up = 0;
    if (S->scan_fam != FAM_DPX && (rc = intra_prof(S, d)))
        return rc;
    uint32_t maxshort = 0, maxall = 0;
    for (int c = 0; c < S->nchunks; c++) {
        const chunk_t *ch = &S->chunks[c];
        if (ch->maxlen > maxall)
            maxall = ch->maxlen;
        if (ch->nshort) {
            uint32_t l = S->h_len[ch->k0 + ch->nshort - 1];
            if (l > maxshort)
                maxshort = l;
        }
    }
    if (S->scan_fam == FAM_DPX) {
        n = swgpu__cu_dpx_prof_bytes(S->cfg_main, qlen);
        if ((rc = dgrow((void **)&d->d_tp_main, &d->cap_main, n)) ||
            (rc = swgpu__cu_prof_dev(S->cfg_main, dq, qlen, dmat, d->d_tp_main, d->st)))
            return rc;
        int per = 0;
        if ((rc = swgpu__cu_dpx_occupancy(S->cfg_main, &per)))
            return rc;
        d->blocks_main = (per > 0 ? per : 1) * d->sms;
        size_t sb = swgpu__cu_dpx_scratch(S->cfg_main, qlen, S->use_long ? maxshort : maxall,
                                          d->blocks_main);
        if ((rc = dgrow(&d->scr_main, &d->cap_scr_main, sb)))
            return rc;
        /* a resident chunk of many subjects is scored in two parts: the
         * longest 7/8 (persistent blocks, longest first), then on st2 the
         * shortest eighth, whose blocks take the SMs as the first part's
         * finish; the first part's scores are downloaded and copied out
         * meanwhile, so only the eighth's copy-out follows the kernels */
        d->split = d->split_end = 0;
        if (!S->streaming && !S->no_split && d->own >= 0) {
            const chunk_t *ch = &S->chunks[d->own];
            uint32_t ns = S->use_long ? ch->nshort : ch->n;
            if (ns >= SPLIT_MIN) {
                d->split = (ns / 8) & ~1u;
                d->split_end = ns;
                sb = swgpu__cu_dpx_scratch(S->cfg_main, qlen, S->h_len[ch->k0 + d->split - 1],
                                           d->blocks_main);
                if ((rc = dgrow(&d->scr_b, &d->cap_scr_b, sb)))
                    return rc;
            }
        }
        if (S->use_long) {
            n = swgpu__cu_dpx_prof_bytes(S->cfg_long, qlen);
            if ((rc = dgrow((void **)&d->d_tp_long, &d->cap_long, n)) ||
                (rc = swgpu__cu_prof_dev(S->cfg_long, dq, qlen, dmat, d->d_tp_long, d->st)))
                return rc;
            if ((rc = swgpu__cu_dpx_occupancy(S->cfg_long, &per)))
                return rc;
            d->blocks_long = (per > 0 ? per : 1) * d->sms;
            sb = swgpu__cu_dpx_scratch(S->cfg_long, qlen, maxall, d->blocks_long);
            if ((rc = dgrow(&d->scr_long, &d->cap_scr_long, sb)))
                return rc;
        }
    } else if (S->scan_fam != FAM_INTRA) {
        n = prof_words(S->scan_fam, qlen) * 4;
        if ((rc = dgrow((void **)&d->d_prof, &d->cap_prof, n)))
            return rc;
        CU_CHECK(cudaMemcpyAsync(d->d_prof, S->h_prof, n, cudaMemcpyHostToDevice, d->st));
        if (S->fam == FAM_SIMT) {
            uint64_t mw = 0;
            for (int c = 0; c < S->nchunks; c++)
                if (S->chunks[c].nw > mw)
                    mw = S->chunks[c].nw;
            if ((rc = dgrow(&d->scr_main, &d->cap_scr_main, swgpu__cu_simt_scratch(mw))))
                return rc;
        } else if (S->fam == FAM_VECTOR) {
            int per = 0;
            if ((rc = swgpu__cu_vector_warps_per_sm(&per)))
                return rc;
            d->warps_vec = (per > 0 ? per : 1) * d->sms;
            if ((rc = dgrow(&d->scr_main, &d->cap_scr_main,
                            swgpu__cu_vector_scratch(maxshort, d->warps_vec))))
                return rc;
        }
    }
    /* the intra kernel: long subjects (simt/vector/scan/intra) and overflows */
    if ((rc = dgrow(&d->scr_intra, &d->cap_scr_intra,
                    swgpu__cu_intra_scratch(qlen, maxall, d->blocks_intra))))
        return rc;
    return SWGPU_OK;
}

/* persistent blocks of the main DPX configuration for n subjects */
static int dpx_blocks(const cuda_state_t *S, const gpu_t *d, uint32_t n)
{
    uint32_t per = SWGPU_CU_DPX_THREADS / S->cfg_main.G;
    uint32_t units = ((n + 1) / 2 + per - 1) / per;
    return (int)(units < (uint32_t)d->blocks_main ? units : (uint32_t)d->blocks_main);
}

/* enqueue the kernels of the chunk in buffer b */
static int launch_chunk(cuda_state_t *S, gpu_t *d, int b)
{
    dbuf_t *B = &d->buf[b];
    const chunk_t *ch = &S->chunks[B->chunk];
    swgpu_cu_batch_t bt = {B->res, B->woff, B->len, ch->n, B->pres, B->poff};
    swgpu_cu_query_t q = {d->d_q, S->qlen, S->oe, S->ext};
    int *ctr = d->d_ctr + NCTR * b;
    uint32_t nshort = ch->nshort, nlong = ch->n - ch->nshort;
    int rc;

    if (S->scan_fam == FAM_DPX && !S->use_long) {
        nshort = ch->n;
        nlong = 0;
    }
    if (S->scan_fam == FAM_INTRA) {
        nshort = 0;
        nlong = ch->n;
    }
    /* long subjects on their own stream, concurrently with the rest */
    if (nlong) {
        CU_CHECK(cudaEventRecord(d->ev_long[b], d->st));
        CU_CHECK(cudaStreamWaitEvent(d->stl, d->ev_long[b], 0));
        if (S->scan_fam == FAM_DPX) {
            uint32_t units = ((nlong + 1) / 2 + SWGPU_CU_DPX_THREADS / S->cfg_long.G - 1) /
                             (SWGPU_CU_DPX_THREADS / S->cfg_long.G);
            int blocks = (int)(units < (uint32_t)d->blocks_long ? units : (uint32_t)d->blocks_long);
            rc = swgpu__cu_dpx(&bt, nshort, nlong, &q, d->d_tp_long, S->cfg_long, blocks,
                               d->scr_long, ch->maxlen, ctr + 1, B->scores, d->stl);
        } else {
            int blocks = (int)(nlong < (uint32_t)d->blocks_intra ? nlong : (uint32_t)d->blocks_intra);
            rc = swgpu__cu_intra(&bt, NULL, nshort, nlong, &q, d->d_tp_intra, blocks,
                                 d->scr_intra, ch->maxlen, ctr + 1, B->scores, d->stl);
        }
        if (rc)
            return rc;
        CU_CHECK(cudaEventRecord(d->ev_long[b], d->stl));
    }
    if (nshort) {
        uint32_t maxshort = S->h_len[ch->k0 + nshort - 1];
        switch (S->scan_fam) {
        case FAM_DPX: {
            const uint32_t m = S->streaming ? 0 : d->split; /* first subject of part 1 */
            if (m) {
                CU_CHECK(cudaEventRecord(d->ev_b, d->st)); /* part 2 starts after the profile */
                CU_CHECK(cudaStreamWaitEvent(d->st2, d->ev_b, 0));
            }
            rc = swgpu__cu_dpx(&bt, m, nshort - m, &q, d->d_tp_main, S->cfg_main,
                               dpx_blocks(S, d, nshort - m), d->scr_main, maxshort, ctr,
                               B->scores, d->st);
            if (rc || !m)
                break;
            CU_CHECK(cudaMemcpyAsync(B->h_scores + m, B->scores + m, (nshort - m) * sizeof(int32_t),
                                     cudaMemcpyDeviceToHost, d->st));
            CU_CHECK(cudaEventRecord(d->ev_part, d->st));
            rc = swgpu__cu_dpx(&bt, 0, m, &q, d->d_tp_main, S->cfg_main, dpx_blocks(S, d, m),
                               d->scr_b, S->h_len[ch->k0 + m - 1], ctr + 3, B->scores, d->st2);
            if (rc)
                break;
            CU_CHECK(cudaEventRecord(d->ev_b, d->st2));
            CU_CHECK(cudaStreamWaitEvent(d->st, d->ev_b, 0));
            break;
        }
        case FAM_SIMT:
            rc = swgpu__cu_simt(&bt, 0, nshort, &q, d->d_prof, d->scr_main, B->scores, d->st);
            break;
        case FAM_VECTOR: {
            int warps = (int)(nshort < (uint32_t)d->warps_vec ? nshort : (uint32_t)d->warps_vec);
            rc = swgpu__cu_vector(&bt, 0, nshort, &q, d->d_prof, warps, d->scr_main, maxshort, ctr,
                                  B->scores, d->st);
            break;
        }
        case FAM_SCAN: {
            int blocks = 4 * d->sms;
            rc = swgpu__cu_scan(&bt, 0, nshort, &q, d->d_prof, blocks, ctr, B->scores, d->st);
            break;
        }
        default:
            rc = SWGPU_OK;
        }
        if (rc)
            return rc;
    }
    if (nlong)
        CU_CHECK(cudaStreamWaitEvent(d->st, d->ev_long[b], 0));
    if (!S->streaming)
        CU_CHECK(cudaEventRecord(d->ev_k1, d->st));
    if (S->scan_fam == FAM_DPX && !S->streaming && d->split) {
        /* the rest: [0, split) and the long subjects [split_end, n) */
        CU_CHECK(cudaMemcpyAsync(B->h_scores, B->scores, d->split * sizeof(int32_t),
                                 cudaMemcpyDeviceToHost, d->st));
        if (ch->n > d->split_end)
            CU_CHECK(cudaMemcpyAsync(B->h_scores + d->split_end, B->scores + d->split_end,
                                     (ch->n - d->split_end) * sizeof(int32_t),
                                     cudaMemcpyDeviceToHost, d->st));
    } else {
        CU_CHECK(cudaMemcpyAsync(B->h_scores, B->scores, ch->n * sizeof(int32_t),
                                 cudaMemcpyDeviceToHost, d->st));
    }
    CU_CHECK(cudaEventRecord(d->ev_scored[b], d->st));
    return SWGPU_OK;
}

/* scores [a, b) to out, counting those >= sat (restrict: through the
 * structs every store could alias the bounds and the loop ran scalar) */
static uint32_t copy_out(int32_t *__restrict__ out, const int32_t *__restrict__ src, uint32_t a,
                         uint32_t b, int32_t sat)
{
    uint32_t nov = 0;
    for (uint32_t i = a; i < b; i++) {
        const int32_t v = src[i];
        out[i] = v;
        nov += v >= sat;
    }
    return nov;
}

/* wait for the chunk in buffer b, recompute saturated subjects, copy out */
static int finish_chunk(cuda_state_t *S, gpu_t *d, int b)
{
    dbuf_t *B = &d->buf[b];
    const chunk_t *ch = &S->chunks[B->chunk];
    int rc;
    int32_t *out = S->out + ch->k0;
    const int32_t sat = S->qsat;
    uint32_t nov = 0;
    if (S->scan_fam == FAM_DPX && !S->streaming && d->split) {
        /* the first part, while the rest computes */
        CU_CHECK(cudaEventSynchronize(d->ev_part));
        nov += copy_out(out, B->h_scores, d->split, d->split_end, sat);
        CU_CHECK(cudaEventSynchronize(d->ev_scored[b]));
        nov += copy_out(out, B->h_scores, 0, d->split, sat);
        nov += copy_out(out, B->h_scores, d->split_end, ch->n, sat);
    } else {
        CU_CHECK(cudaEventSynchronize(d->ev_scored[b]));
        nov += copy_out(out, B->h_scores, 0, ch->n, sat);
    }
    {
        if (nov) {
            if ((rc = intra_prof(S, d)))
                return rc;
            if (nov > d->cap_idx) {
                if (d->d_idx)
                    CU_CHECK(cudaFree(d->d_idx));
                if (d->h_idx)
                    CU_CHECK(cudaFreeHost(d->h_idx));
                d->d_idx = NULL;
                d->h_idx = NULL;
                d->cap_idx = 0;
                DEV_ALLOC((void **)&d->d_idx, nov * sizeof(uint32_t));
                HOST_ALLOC((void **)&d->h_idx, nov * sizeof(uint32_t));
                d->cap_idx = nov;
            }
            uint32_t j = 0;
            for (uint32_t i = 0; i < ch->n; i++)
                if (B->h_scores[i] >= sat)
                    d->h_idx[j++] = i;
            swgpu_cu_batch_t bt = {B->res, B->woff, B->len, ch->n, B->pres, B->poff};
            swgpu_cu_query_t q = {d->d_q, S->qlen, S->oe, S->ext};
            CU_CHECK(cudaMemcpyAsync(d->d_idx, d->h_idx, nov * sizeof(uint32_t),
                                     cudaMemcpyHostToDevice, d->st));
            int blocks = (int)(nov < (uint32_t)d->blocks_intra ? nov : (uint32_t)d->blocks_intra);
            if ((rc = swgpu__cu_intra(&bt, d->d_idx, 0, nov, &q, d->d_tp_intra, blocks,
                                      d->scr_intra, ch->maxlen, d->d_ctr + NCTR * b + 2,
                                      B->scores, d->st)))
                return rc;
            CU_CHECK(cudaMemcpyAsync(B->h_scores, B->scores, ch->n * sizeof(int32_t),
                                     cudaMemcpyDeviceToHost, d->st));
            CU_CHECK(cudaStreamSynchronize(d->st));
            d->overflows += nov;
            memcpy(out, B->h_scores, ch->n * sizeof(int32_t));
        }
    }
    return SWGPU_OK;
}

static int next_chunk(cuda_state_t *S)
{
    pthread_mutex_lock(&S->lock);
    int c = S->next_chunk < S->nchunks ? S->next_chunk++ : -1;
    pthread_mutex_unlock(&S->lock);
    return c;
}


static int dev_scan(cuda_state_t *S, gpu_t *d)
{
    int rc;
    d->overflows = 0;
    if (!S->streaming && d->own < 0)
        return SWGPU_OK;
    if ((rc = dev_query(S, d)))
        return rc;
    if (!S->streaming) {
        /* kernel time: ev_k0 before the first kernel, ev_k1 after the last
         * (launch_chunk; the long-subject stream joins before it) */
        CU_CHECK(cudaEventRecord(d->ev_k0, d->st));
        if ((rc = launch_chunk(S, d, 0)) || (rc = finish_chunk(S, d, 0)))
            return rc;
        CU_CHECK(cudaEventElapsedTime(&d->kern_ms, d->ev_k0, d->ev_k1));
        return SWGPU_OK;
    }
    /* streaming: copy chunk i+1 while chunk i computes */
    int pending[NBUF] = {0, 0};
    for (int i = 0;; i++) {
        int b = i % NBUF;
        if (pending[b]) {
            if ((rc = finish_chunk(S, d, b)))
                return rc;
            pending[b] = 0;
        }
        int c = next_chunk(S);
        if (c < 0)
            break;
        /* the buffer's last reader was the previous chunk in it (finished) */
        if ((rc = upload_chunk(S, &d->buf[b], c, d->cst)))
            return rc;
        CU_CHECK(cudaEventRecord(d->ev_copied[b], d->cst));
        CU_CHECK(cudaStreamWaitEvent(d->st, d->ev_copied[b], 0));
        if ((rc = launch_chunk(S, d, b)))
            return rc;
        pending[b] = 1;
    }
    for (int b = 0; b < NBUF; b++)
        if (pending[b] && (rc = finish_chunk(S, d, b)))
            return rc;
    return SWGPU_OK;
}

static void *dev_thread(void *arg)
{
    gpu_t *d = (gpu_t *)arg;
    d->rc = dev_scan(d->S, d);
    return NULL;
}

/* 1 if the simt kernel's 8-bit profile holds q's scores (a matrix's are
 * checked at create) */
static int simt_fits(const swgpu__query_t *q)
{
    return !q->rows || (q->smin >= -127 && q->smax <= 127);
}

static int cuda_scan(void *state, const swgpu__query_t *Q, int32_t *scores,
                     swgpu_scan_stats_t *st)
{
    cuda_state_t *S = (cuda_state_t *)state;
    int rc = SWGPU_OK;
    if (!Q)
        return swgpu__fail(SWGPU_EINVAL, "backend cuda: NULL query");
    const size_t qlen = Q->len;
    if (qlen == 0 || S->db->n == 0) {
        for (uint64_t k = 0; k < S->db->n; k++)
            scores[k] = 0;
        return SWGPU_OK;
    }
    if (qlen > (size_t)1 << 30)
        return swgpu__fail(SWGPU_ERANGE, "backend cuda: query of %zu residues", qlen);
    if ((rc = check_query(Q, 0)))
        return rc;
    S->Q = Q;
    S->q = Q->res;
    S->qlen = (int)qlen;
    /* the family for this query: scan has a query-length limit; a PSSM the
     * 16-bit DPX kernel or simt's 8-bit profile cannot hold goes to the
     * 32-bit intra kernel */
    S->scan_fam = S->fam;
    if (S->fam == FAM_SCAN &&
        (S->qlen > swgpu__cu_scan_max_qlen() ||
         (int64_t)swgpu__cu_scan_qpad(S->qlen) * S->ext > ((int64_t)1 << 29)))
        S->scan_fam = FAM_INTRA;
    if ((S->fam == FAM_DPX && !q_use16(S, Q)) || (S->fam == FAM_SIMT && !simt_fits(Q)))
        S->scan_fam = FAM_INTRA;
    S->qsat = S->scan_fam == FAM_DPX ? qsat_of(S, Q) : INT32_MAX;
    S->out = scores;
    S->next_chunk = 0;

    /* the DPX and intra profiles are built on each GPU (dev_query); the
     * others here */
    if (S->scan_fam == FAM_DPX) {
        double avg = S->db->n ? (double)S->db->total_res / S->db->n : 1.0;
        S->cfg_main = S->cfg_env.G ? S->cfg_env : pick_cfg(S->qlen, avg, S->pair);
        S->cfg_long.G = 32;
        S->cfg_long.R = 32;
        S->cfg_long.P = 0;
        S->use_long = S->qlen > 1024;
    } else if (S->scan_fam != FAM_INTRA) {
        size_t n = prof_words(S->scan_fam, S->qlen) * 4;
        if ((rc = hgrow((void **)&S->h_prof, &S->cap_h_prof, n)))
            return rc;
        /* the matrix and the codes, or a PSSM's rows and no codes */
        const uint8_t *pq = Q->rows ? NULL : Q->res;
        const int32_t(*ps)[32] = Q->rows ? (const int32_t(*)[32])Q->rows : S->mat32;
        if (S->scan_fam == FAM_SIMT)
            swgpu__cu_simt_prof(pq, S->qlen, ps, S->h_prof);
        else if (S->scan_fam == FAM_VECTOR)
            swgpu__cu_vector_prof(pq, S->qlen, ps, S->h_prof);
        else
            swgpu__cu_scan_prof(pq, S->qlen, ps, S->h_prof);
    }

    if (S->ndev == 1) {
        rc = dev_scan(S, &S->dev[0]);
        S->dev[0].rc = rc;
    } else {
        int started = 0;
        for (int i = 0; i < S->ndev; i++) {
            if (pthread_create(&S->dev[i].th, NULL, dev_thread, &S->dev[i])) {
                rc = swgpu__fail(SWGPU_ENOMEM, "cuda engine: cannot start a thread for GPU %d", i);
                break;
            }
            started++;
        }
        for (int i = 0; i < started; i++)
            pthread_join(S->dev[i].th, NULL);
        for (int i = 0; i < started && !rc; i++)
            if (S->dev[i].rc)
                rc = S->dev[i].rc;
    }
    if (rc)
        return rc;
    if (st) {
        st->cells += (uint64_t)qlen * S->db->total_res;
        double gs = 0;
        for (int i = 0; i < S->ndev; i++) {
            st->overflows += S->dev[i].overflows;
            if (!S->streaming && S->dev[i].own >= 0 && S->dev[i].kern_ms / 1e3 > gs)
                gs = S->dev[i].kern_ms / 1e3;
        }
        st->gpu_seconds += gs;
    }
    return SWGPU_OK;
}

/* ---------------------------------------------------------- scan_many */
/*
 * Many queries (resident database, default family): the queries are sorted
 * by (configuration, length) and cut into batches of one configuration;
 * a batch is one launch of the many-query kernel per GPU (work units =
 * subject unit x query: one query no longer has to fill the GPU, and the
 * per-query host work is done once per batch).  Batch i+1 is enqueued on
 * the other slot's streams before batch i is finished on the host (the
 * overflow recompute, the hand-over of every query's scores), so the GPU
 * stays busy and the tail of one launch overlaps the next.
 */

/* at most this many cells per batch (about 0.1 s on one H100): batches
 * short enough to pipeline, long enough to fill the GPU */
#define MQ_CELLS 5e11
/* at most this many bytes of scores per batch slot */
#define MQ_SCORE_BYTES ((size_t)256 << 20)
/* databases of at least this many subjects are scanned one query per batch:
 * 16 waves of work units of 64 subjects on 2 blocks of each of 132 SMs */
#define MQ_SOLO_SUBJECTS 270000

typedef struct {
    size_t first, n;            /* queries ord[first .. first + n) */
    swgpu_cu_cfg_t cfg, cfgl;
    int use_long, maxtiles, maxtilesl, maxqlen;
    int qp;                     /* the short subjects by the query-lane kernel */
    uint32_t qp_njobs, qp_npass; /* its plan's jobs and passes (qp_plan) */
} mbatch_t;

typedef struct {
    const swgpu__query_t *q;
    size_t *ord;
} mq_in_t;

static size_t align16(size_t x)
{
    return (x + 15) & ~(size_t)15;
}

static int mslot_setup(gpu_t *d, mslot_t *m)
{
    if (m->st)
        return SWGPU_OK;
    CU_CHECK(cudaSetDevice(d->id));
    CU_CHECK(cudaStreamCreateWithFlags(&m->st, cudaStreamNonBlocking));
    CU_CHECK(cudaStreamCreateWithFlags(&m->stl, cudaStreamNonBlocking));
    CU_CHECK(cudaEventCreateWithFlags(&m->ev_long, cudaEventDisableTiming));
    CU_CHECK(cudaEventCreateWithFlags(&m->ev_done, cudaEventDisableTiming));
    DEV_ALLOC((void **)&m->d_ctr, 2 * sizeof(int));
    if (!d->sto)
        CU_CHECK(cudaStreamCreateWithFlags(&d->sto, cudaStreamNonBlocking));
    return SWGPU_OK;
}

/*
 * The jobs of a query-lane batch (kernels.cuh): its queries in 2J lanes,
 * longest first into the lane with the fewest slots so far, lanes 2j and
 * 2j+1 the two halves of job j.  J gives the GPU at least QP_UNITS work
 * units (a unit is one job over 256 / G subjects of the nsub a GPU holds).
 * With jobs NULL only the counts (cuda_scan_many keeps them in the batch);
 * else the jobs, passes, table builds and query table for slot m (query
 * blobs in m->d_q in batch order, tables in m->d_qprof).
 */
#define QP_UNITS 16384

typedef struct {
    uint32_t q, slots; /* batch query, its slots */
    uint32_t lane;
} qp_item_t;

static int cmp_qp_item(const void *a, const void *b)
{
    const qp_item_t *x = (const qp_item_t *)a, *y = (const qp_item_t *)b;
    if (x->slots != y->slots)
        return x->slots > y->slots ? -1 : 1;
    return x->q < y->q ? -1 : x->q > y->q;
}

static int qp_plan(const cuda_state_t *S, const gpu_t *d, const mslot_t *m, const mbatch_t *bt,
                   const mq_in_t *in, uint32_t *njobs, uint32_t *npass, swgpu_cu_job_t *jobs,
                   swgpu_cu_pass_t *pass, swgpu_cu_pbuild_t *pb, swgpu_cu_qpq_t *qt)
{
    const int G = bt->cfg.G, R = bt->cfg.R, NG = SWGPU_CU_DPX_THREADS / G;
    const size_t n = bt->n;
    const uint64_t nsub = (S->db->n + (uint64_t)S->ndev - 1) / (uint64_t)S->ndev;
    const uint64_t per_job = (nsub + NG - 1) / NG;
    const uint64_t want = S->qp_units ? S->qp_units : QP_UNITS;
    uint64_t J = per_job ? (want + per_job - 1) / per_job : 1;
    if (J > n / 2)
        J = n / 2;
    if (J < 1)
        J = 1;
    qp_item_t *it = (qp_item_t *)malloc(n * sizeof *it);
    uint64_t *load = (uint64_t *)calloc(2 * J, sizeof *load);
    if (!it || !load) {
        free(it);
        free(load);
        return swgpu__fail(SWGPU_ENOMEM, "cuda engine: out of memory for a plan of %zu queries", n);
    }
    for (size_t i = 0; i < n; i++) {
        const size_t ql = in->q[in->ord[bt->first + i]].len;
        it[i].q = (uint32_t)i;
        it[i].slots = (uint32_t)((ql + R - 1) / R);
    }
    qsort(it, n, sizeof *it, cmp_qp_item);
    for (size_t i = 0; i < n; i++) {
        uint32_t best = 0;
        for (uint32_t l = 1; l < 2 * J; l++)
            if (load[l] < load[best])
                best = l;
        it[i].lane = best;
        load[best] += it[i].slots;
    }
    uint32_t np = 0;
    for (uint64_t j = 0; j < J; j++) {
        const uint64_t mx = load[2 * j] > load[2 * j + 1] ? load[2 * j] : load[2 * j + 1];
        const uint32_t pj = (uint32_t)((mx + G - 1) / G);
        if (jobs) {
            jobs[j].first = np;
            jobs[j].n = pj;
        }
        np += pj;
    }
    *njobs = (uint32_t)J;
    *npass = np;
    if (jobs) {
        uint64_t used = 0;
        for (uint64_t l = 0; l < 2 * J; l++)
            used += load[l];
        swgpu__log(SWGPU_LOG_DEBUG, "cuda: lanes of %zu queries: %llu job(s), %u passes, %.1f%% "
                   "of the slots used", n, (unsigned long long)J, np,
                   np ? 100.0 * (double)used / (2.0 * G * np) : 0.0);
        const size_t pbytes = swgpu__cu_qp_pass_bytes(bt->cfg);
        size_t qoff = 0;
        for (size_t i = 0; i < n; i++) { /* the query table, in batch order */
            const swgpu__query_t *Q = &in->q[in->ord[bt->first + i]];
            qt[i].q = blob_q(Q, m->d_q + qoff);
            qt[i].mat = blob_mat(Q, m->d_q + qoff, d->d_mat);
            qt[i].qlen = (int32_t)Q->len;
            qt[i].pad = 0;
            qoff += align16(qblob_bytes(Q));
        }
        for (uint32_t p = 0; p < np; p++) { /* every slot idle first */
            pass[p].prof = (const uint32_t *)((char *)m->d_qprof + (size_t)p * pbytes);
            pass[p].starts = 0xffffffffu;
            pass[p].pad = 0;
            for (int h = 0; h < 2; h++)
                for (int t = 0; t < SWGPU_CU_QP_G; t++) {
                    pass[p].qi[h][t] = 0xffffu;
                    pb[p].qi[h][t] = -1;
                    pb[p].c0[h][t] = 0;
                }
        }
        /* the lanes' slots: each lane's queries in the order they were placed */
        memset(load, 0, 2 * J * sizeof *load);
        for (size_t i = 0; i < n; i++) {
            const uint32_t l = it[i].lane, j = l / 2, h = l % 2;
            for (uint32_t x = 0; x < it[i].slots; x++) {
                const uint64_t sl = load[l] + x;
                const uint32_t p = jobs[j].first + (uint32_t)(sl / G), t = (uint32_t)(sl % G);
                pass[p].qi[h][t] = (uint16_t)it[i].q;
                if (x > 0)
                    pass[p].starts &= ~(1u << (2 * t + h));
                pb[p].qi[h][t] = (int32_t)it[i].q;
                pb[p].c0[h][t] = (int32_t)(x * R);
            }
            load[l] += it[i].slots;
        }
    }
    free(it);
    free(load);
    return SWGPU_OK;
}

/* bytes of a query-lane batch's jobs, passes, builds and query table
 * (h_qpt / d_qpt), and where the last three start */
static size_t qp_bytes(uint32_t njobs, uint32_t npass, size_t nq, size_t off[3])
{
    const size_t a = align16(njobs * sizeof(swgpu_cu_job_t));
    const size_t b = align16(npass * sizeof(swgpu_cu_pass_t));
    const size_t c = align16(npass * sizeof(swgpu_cu_pbuild_t));
    if (off) {
        off[0] = a;
        off[1] = a + b;
        off[2] = a + b + c;
    }
    return a + b + c + nq * sizeof(swgpu_cu_qpq_t);
}

/* resident blocks per SM of the kernel that takes bt's short subjects */
static int short_occupancy(const mbatch_t *bt, int *per)
{
    return bt->qp ? swgpu__cu_qp_occupancy(bt->cfg, per) : swgpu__cu_dpx_occupancy(bt->cfg, per);
}

/* the batch's queries, their profiles and the query tables of slot m on
 * stream st; query j's scores go to row j of m->d_sc (stride rows) */
static int mq_prepare(cuda_state_t *S, gpu_t *d, mslot_t *m, const mbatch_t *bt,
                      const mq_in_t *in, size_t stride, cudaStream_t st)
{
    const size_t nq = bt->n;
    int rc;
    size_t qbytes = 0, pbytes = 0, plbytes = 0;
    for (size_t j = 0; j < nq; j++) {
        const swgpu__query_t *Q = &in->q[in->ord[bt->first + j]];
        const int ql = (int)Q->len;
        qbytes += align16(qblob_bytes(Q));
        if (!bt->qp)
            pbytes += align16(swgpu__cu_dpx_prof_bytes(bt->cfg, ql));
        if (bt->use_long)
            plbytes += align16(swgpu__cu_dpx_prof_bytes(bt->cfgl, ql));
    }
    if ((rc = hgrow((void **)&m->h_q, &m->cap_hq, qbytes)) ||
        (rc = dgrow((void **)&m->d_q, &m->cap_q, qbytes)) ||
        (pbytes && (rc = dgrow(&m->d_prof, &m->cap_prof, pbytes))) ||
        (plbytes && (rc = dgrow(&m->d_profl, &m->cap_profl, plbytes))) ||
        (rc = hgrow((void **)&m->h_mq, &m->cap_hmq, 2 * nq * sizeof(swgpu_cu_mq_t))) ||
        (rc = dgrow((void **)&m->d_mq, &m->cap_mq, 2 * nq * sizeof(swgpu_cu_mq_t))) ||
        (rc = hgrow_keep(d, (void **)&m->h_sc, &m->cap_hsc, nq * stride * sizeof(int32_t))) ||
        (rc = dgrow((void **)&m->d_sc, &m->cap_sc, nq * stride * sizeof(int32_t))))
        return rc;
    size_t qo = 0;
    for (size_t j = 0; j < nq; j++) {
        const swgpu__query_t *Q = &in->q[in->ord[bt->first + j]];
        qblob_fill(Q, m->h_q + qo);
        qo += align16(qblob_bytes(Q));
    }
    CU_CHECK(cudaMemcpyAsync(m->d_q, m->h_q, qbytes, cudaMemcpyHostToDevice, st));
    qo = 0;
    size_t po = 0, plo = 0;
    for (size_t j = 0; j < nq; j++) {
        const swgpu__query_t *Q = &in->q[in->ord[bt->first + j]];
        const int ql = (int)Q->len;
        const int W = bt->cfg.G * bt->cfg.R;
        const uint8_t *dq = blob_q(Q, m->d_q + qo);
        const int16_t *dmat = blob_mat(Q, m->d_q + qo, d->d_mat);
        m->h_mq[j].tprof = NULL; /* a query-lane batch: the passes' tables below */
        m->h_mq[j].scores = m->d_sc + j * stride;
        m->h_mq[j].ntiles = (ql + W - 1) / W;
        m->h_mq[j].pad = 0;
        if (!bt->qp) {
            char *prof = (char *)m->d_prof + po;
            if ((rc = swgpu__cu_prof_dev(bt->cfg, dq, ql, dmat, prof, st)))
                return rc;
            m->h_mq[j].tprof = (const int16_t *)prof;
            po += align16(swgpu__cu_dpx_prof_bytes(bt->cfg, ql));
        }
        if (bt->use_long) {
            const int Wl = bt->cfgl.G * bt->cfgl.R;
            char *pl = (char *)m->d_profl + plo;
            if ((rc = swgpu__cu_prof_dev(bt->cfgl, dq, ql, dmat, pl, st)))
                return rc;
            m->h_mq[nq + j].tprof = (const int16_t *)pl;
            m->h_mq[nq + j].scores = m->d_sc + j * stride;
            m->h_mq[nq + j].ntiles = (ql + Wl - 1) / Wl;
            m->h_mq[nq + j].pad = 0;
            plo += align16(swgpu__cu_dpx_prof_bytes(bt->cfgl, ql));
        }
        qo += align16(qblob_bytes(Q));
    }
    CU_CHECK(cudaMemcpyAsync(m->d_mq, m->h_mq, (bt->use_long ? 2 : 1) * nq * sizeof(swgpu_cu_mq_t),
                             cudaMemcpyHostToDevice, st));
    if (bt->qp) {
        uint32_t nj = bt->qp_njobs, np = bt->qp_npass;
        size_t off[3];
        const size_t tb = qp_bytes(nj, np, nq, off);
        if ((rc = hgrow((void **)&m->h_qpt, &m->cap_hqpt, tb)) ||
            (rc = dgrow((void **)&m->d_qpt, &m->cap_qpt, tb)) ||
            (rc = dgrow(&m->d_qprof, &m->cap_qprof, np * swgpu__cu_qp_pass_bytes(bt->cfg))) ||
            (rc = qp_plan(S, d, m, bt, in, &nj, &np, (swgpu_cu_job_t *)m->h_qpt,
                          (swgpu_cu_pass_t *)(m->h_qpt + off[0]),
                          (swgpu_cu_pbuild_t *)(m->h_qpt + off[1]),
                          (swgpu_cu_qpq_t *)(m->h_qpt + off[2]))))
            return rc;
        CU_CHECK(cudaMemcpyAsync(m->d_qpt, m->h_qpt, tb, cudaMemcpyHostToDevice, st));
        if ((rc = swgpu__cu_qp_prof_dev(bt->cfg, (const swgpu_cu_qpq_t *)(m->d_qpt + off[2]),
                                        (const swgpu_cu_pbuild_t *)(m->d_qpt + off[1]), np,
                                        m->d_qprof, st)))
            return rc;
        m->qp_njobs = nj;
        m->qp_pass_off = off[0];
        m->qp_stride = stride;
    }
    return SWGPU_OK;
}

/* the kernels of batch bt over chunk ch (in buffer B) with the tables of
 * slot m: main configuration on st, long subjects on stl (joined into st
 * through ev_long); ctr: two work counters */
static int mq_launch(cuda_state_t *S, gpu_t *d, const mslot_t *m, const mbatch_t *bt,
                     const dbuf_t *B, const chunk_t *ch, cudaStream_t st, cudaStream_t stl,
                     cudaEvent_t ev_long, void *scr, void *scrl, int *ctr)
{
    const size_t nq = bt->n;
    swgpu_cu_batch_t b = {B->res, B->woff, B->len, ch->n, B->pres, B->poff};
    const uint32_t nshort = bt->use_long ? ch->nshort : ch->n, nlong = ch->n - nshort;
    int per = 0, rc;
    if (nlong) {
        CU_CHECK(cudaEventRecord(ev_long, st));
        CU_CHECK(cudaStreamWaitEvent(stl, ev_long, 0));
        if ((rc = swgpu__cu_dpx_occupancy(bt->cfgl, &per)))
            return rc;
        const int NG = SWGPU_CU_DPX_THREADS / bt->cfgl.G;
        const uint64_t units = ((uint64_t)(nlong + 1) / 2 + NG - 1) / NG * nq;
        const int maxb = (per > 0 ? per : 1) * d->sms;
        const int blocks = (int)(units < (uint64_t)maxb ? units : (uint64_t)maxb);
        if (nq == 1) { /* the one-query kernel: no table, fewer registers */
            swgpu_cu_query_t q1 = {m->d_q, bt->maxqlen, S->oe, S->ext};
            rc = swgpu__cu_dpx(&b, nshort, nlong, &q1, m->h_mq[1].tprof, bt->cfgl, blocks, scrl,
                               ch->maxlen, ctr + 1, m->h_mq[1].scores, stl);
        } else {
            rc = swgpu__cu_dpx_mq(&b, nshort, nlong, m->d_mq + nq, (uint32_t)nq, bt->maxtilesl,
                                  S->oe, S->ext, bt->cfgl, blocks, scrl, ch->maxlen, ctr + 1,
                                  stl);
        }
        if (rc)
            return rc;
        CU_CHECK(cudaEventRecord(ev_long, stl));
    }
    if (nshort) {
        if ((rc = short_occupancy(bt, &per)))
            return rc;
        const int NG = SWGPU_CU_DPX_THREADS / bt->cfg.G;
        const uint64_t units = bt->qp ? ((uint64_t)nshort + NG - 1) / NG * m->qp_njobs
                                      : ((uint64_t)(nshort + 1) / 2 + NG - 1) / NG * nq;
        const int maxb = (per > 0 ? per : 1) * d->sms;
        const int blocks = (int)(units < (uint64_t)maxb ? units : (uint64_t)maxb);
        const uint32_t maxshort = S->h_len[ch->k0 + nshort - 1];
        if (bt->qp) {
            /* the lanes' maxima go to the short subjects' scores by atomicMax */
            CU_CHECK(cudaMemset2DAsync(m->d_sc, m->qp_stride * sizeof(int32_t), 0,
                                       nshort * sizeof(int32_t), nq, st));
            rc = swgpu__cu_qp(&b, 0, nshort, (const swgpu_cu_job_t *)m->d_qpt, m->qp_njobs,
                              (const swgpu_cu_pass_t *)(m->d_qpt + m->qp_pass_off), m->d_sc,
                              m->qp_stride,
                              S->oe, S->ext, bt->cfg, blocks, scr, maxshort, ctr, st);
        } else if (nq == 1) {
            swgpu_cu_query_t q1 = {m->d_q, bt->maxqlen, S->oe, S->ext};
            rc = swgpu__cu_dpx(&b, 0, nshort, &q1, m->h_mq[0].tprof, bt->cfg, blocks, scr,
                               maxshort, ctr, m->h_mq[0].scores, st);
        } else {
            rc = swgpu__cu_dpx_mq(&b, 0, nshort, m->d_mq, (uint32_t)nq, bt->maxtiles, S->oe,
                                  S->ext, bt->cfg, blocks, scr, maxshort, ctr, st);
        }
        if (rc)
            return rc;
    }
    if (nlong)
        CU_CHECK(cudaStreamWaitEvent(st, ev_long, 0));
    return SWGPU_OK;
}

/* slot m's buffers at the current scan's largest sizes (d->sz_*), its score
 * rows for a first batch of first_n queries (grown later by hgrow_keep) */
static int slot_alloc(gpu_t *d, mslot_t *m, size_t first_n)
{
    int rc;
    CU_CHECK(cudaSetDevice(d->id));
    if ((rc = mslot_setup(d, m)) || (rc = dgrow(&m->scr, &m->cap_scr, d->sz_scr)) ||
        (rc = dgrow(&m->scrl, &m->cap_scrl, d->sz_scrl)) ||
        (rc = hgrow((void **)&m->h_q, &m->cap_hq, d->sz_q)) ||
        (rc = dgrow((void **)&m->d_q, &m->cap_q, d->sz_q)) ||
        (d->sz_prof && (rc = dgrow(&m->d_prof, &m->cap_prof, d->sz_prof))) ||
        (d->sz_profl && (rc = dgrow(&m->d_profl, &m->cap_profl, d->sz_profl))) ||
        (d->sz_qpt && (rc = hgrow((void **)&m->h_qpt, &m->cap_hqpt, d->sz_qpt))) ||
        (d->sz_qpt && (rc = dgrow((void **)&m->d_qpt, &m->cap_qpt, d->sz_qpt))) ||
        (d->sz_qprof && (rc = dgrow(&m->d_qprof, &m->cap_qprof, d->sz_qprof))) ||
        (rc = hgrow((void **)&m->h_mq, &m->cap_hmq, 2 * d->sz_nq * sizeof(swgpu_cu_mq_t))) ||
        (rc = dgrow((void **)&m->d_mq, &m->cap_mq, 2 * d->sz_nq * sizeof(swgpu_cu_mq_t))) ||
        (rc = hgrow_keep(d, (void **)&m->h_sc, &m->cap_hsc, first_n * d->sz_n * sizeof(int32_t))) ||
        (rc = dgrow((void **)&m->d_sc, &m->cap_sc, d->sz_nq * d->sz_n * sizeof(int32_t))))
        return rc;
    m->sized = 1;
    return SWGPU_OK;
}

/* enqueue batch bt on GPU d in slot m (resident chunk) */
static int mq_enqueue(cuda_state_t *S, gpu_t *d, mslot_t *m, const mbatch_t *bt,
                      const mq_in_t *in)
{
    const chunk_t *ch = &S->chunks[d->own];
    int rc;
    CU_CHECK(cudaSetDevice(d->id));
    if ((rc = mslot_setup(d, m)) || (rc = mq_prepare(S, d, m, bt, in, ch->n, m->st)) ||
        (rc = mq_launch(S, d, m, bt, &d->buf[0], ch, m->st, m->stl, m->ev_long, m->scr, m->scrl,
                        m->d_ctr)))
        return rc;
    CU_CHECK(cudaMemcpyAsync(m->h_sc, m->d_sc, bt->n * ch->n * sizeof(int32_t),
                             cudaMemcpyDeviceToHost, m->st));
    CU_CHECK(cudaEventRecord(m->ev_done, m->st));
    return SWGPU_OK;
}

/* the scores of batch bt over chunk ch (in buffer B) are in m's h_sc (row
 * j at j * stride, downloaded) and d_sc; recompute the saturated subjects
 * in 32 bits (stream sto; the next batch goes on computing) with the
 * queries of slot mq */
static int mq_overflows(cuda_state_t *S, gpu_t *d, mslot_t *m, const mslot_t *mq,
                        const mbatch_t *bt, const mq_in_t *in, const chunk_t *ch,
                        const dbuf_t *B, size_t stride)
{
    const size_t n = ch->n;
    int rc;
    size_t qo = 0;
    for (size_t j = 0; j < bt->n; j++) {
        const swgpu__query_t *Q = &in->q[in->ord[bt->first + j]];
        const int ql = (int)Q->len;
        const int32_t sat = qsat_of(S, Q);
        int32_t *row = m->h_sc + j * stride;
        uint32_t nov = 0;
        for (size_t k = 0; k < n; k++)
            nov += row[k] >= sat;
        if (nov) {
            const swgpu_cu_cfg_t icfg = {SWGPU_CU_INTRA_THREADS, SWGPU_CU_INTRA_R, 0};
            if ((rc = dgrow((void **)&d->d_tp_intra, &d->cap_intra,
                            swgpu__cu_dpx_prof_bytes(icfg, ql))) ||
                (rc = swgpu__cu_prof_dev(icfg, blob_q(Q, mq->d_q + qo), ql,
                                         blob_mat(Q, mq->d_q + qo, d->d_mat), d->d_tp_intra,
                                         d->sto)) ||
                (rc = dgrow(&d->scr_intra, &d->cap_scr_intra,
                            swgpu__cu_intra_scratch(ql, ch->maxlen, d->blocks_intra))))
                return rc;
            if (nov > d->cap_idx) {
                if (d->d_idx)
                    CU_CHECK(cudaFree(d->d_idx));
                if (d->h_idx)
                    CU_CHECK(cudaFreeHost(d->h_idx));
                d->d_idx = NULL;
                d->h_idx = NULL;
                d->cap_idx = 0;
                DEV_ALLOC((void **)&d->d_idx, nov * sizeof(uint32_t));
                HOST_ALLOC((void **)&d->h_idx, nov * sizeof(uint32_t));
                d->cap_idx = nov;
            }
            uint32_t c = 0;
            for (uint32_t k = 0; k < (uint32_t)n; k++)
                if (row[k] >= sat)
                    d->h_idx[c++] = k;
            swgpu_cu_batch_t b = {B->res, B->woff, B->len, ch->n, B->pres, B->poff};
            swgpu_cu_query_t q = {mq->d_q + qo, ql, S->oe, S->ext};
            CU_CHECK(cudaMemcpyAsync(d->d_idx, d->h_idx, nov * sizeof(uint32_t),
                                     cudaMemcpyHostToDevice, d->sto));
            int blocks = (int)(nov < (uint32_t)d->blocks_intra ? nov : (uint32_t)d->blocks_intra);
            if ((rc = swgpu__cu_intra(&b, d->d_idx, 0, nov, &q, d->d_tp_intra, blocks,
                                      d->scr_intra, ch->maxlen, d->d_ctr + 2,
                                      m->d_sc + j * stride, d->sto)))
                return rc;
            CU_CHECK(cudaMemcpyAsync(row, m->d_sc + j * stride, n * sizeof(int32_t),
                                     cudaMemcpyDeviceToHost, d->sto));
            CU_CHECK(cudaStreamSynchronize(d->sto));
            d->overflows += nov;
        }
        qo += align16(qblob_bytes(Q));
    }
    return SWGPU_OK;
}

/* wait for batch bt in slot m of GPU d (resident), then its overflows */
static int mq_finish(cuda_state_t *S, gpu_t *d, mslot_t *m, const mbatch_t *bt,
                     const mq_in_t *in)
{
    const chunk_t *ch = &S->chunks[d->own];
    CU_CHECK(cudaSetDevice(d->id));
    CU_CHECK(cudaEventSynchronize(m->ev_done));
    return mq_overflows(S, d, m, m, bt, in, ch, &d->buf[0], ch->n);
}

/* streaming: batch bt against every chunk this GPU takes from the shared
 * counter (as dev_scan: the next chunk uploads while one computes), the
 * scores of chunk c copied to asmb[j * db->n + c's first subject ...];
 * the profiles are built once in slot 0, slot b holds buffer b's scores */
static int mq_stream_dev(cuda_state_t *S, gpu_t *d, const mbatch_t *bt, const mq_in_t *in,
                         int32_t *asmb, size_t maxn)
{
    const size_t nq = bt->n, ntab = (bt->use_long ? 2 : 1) * nq;
    mslot_t *m0 = &d->ms[0], *m1 = &d->ms[1];
    int rc, pending[NBUF] = {-1, -1};
    CU_CHECK(cudaSetDevice(d->id));
    if ((rc = mslot_setup(d, m0)) || (rc = mslot_setup(d, m1)) ||
        (rc = mq_prepare(S, d, m0, bt, in, maxn, d->st)) ||
        (rc = hgrow((void **)&m1->h_mq, &m1->cap_hmq, 2 * nq * sizeof(swgpu_cu_mq_t))) ||
        (rc = dgrow((void **)&m1->d_mq, &m1->cap_mq, 2 * nq * sizeof(swgpu_cu_mq_t))) ||
        (rc = hgrow((void **)&m1->h_sc, &m1->cap_hsc, nq * maxn * sizeof(int32_t))) ||
        (rc = dgrow((void **)&m1->d_sc, &m1->cap_sc, nq * maxn * sizeof(int32_t))))
        return rc;
    for (size_t j = 0; j < ntab; j++) {
        m1->h_mq[j] = m0->h_mq[j];
        m1->h_mq[j].scores = m1->d_sc + (j % nq) * maxn;
    }
    CU_CHECK(cudaMemcpyAsync(m1->d_mq, m1->h_mq, ntab * sizeof(swgpu_cu_mq_t),
                             cudaMemcpyHostToDevice, d->st));
    for (int i = 0;; i++) {
        const int b = i % NBUF;
        mslot_t *m = b ? m1 : m0;
        if (pending[b] >= 0) {
            const chunk_t *ch = &S->chunks[pending[b]];
            CU_CHECK(cudaEventSynchronize(d->ev_scored[b]));
            if ((rc = mq_overflows(S, d, m, m0, bt, in, ch, &d->buf[b], maxn)))
                return rc;
            for (size_t j = 0; j < nq; j++)
                memcpy(asmb + j * S->db->n + ch->k0, m->h_sc + j * maxn,
                       ch->n * sizeof(int32_t));
            pending[b] = -1;
        }
        const int c = next_chunk(S);
        if (c < 0) {
            if (pending[(i + 1) % NBUF] < 0)
                break;
            continue; /* finish the other buffer */
        }
        if ((rc = upload_chunk(S, &d->buf[b], c, d->cst)))
            return rc;
        CU_CHECK(cudaEventRecord(d->ev_copied[b], d->cst));
        CU_CHECK(cudaStreamWaitEvent(d->st, d->ev_copied[b], 0));
        if ((rc = mq_launch(S, d, m, bt, &d->buf[b], &S->chunks[c], d->st, d->stl,
                            d->ev_long[b], m0->scr, m0->scrl, d->d_ctr + NCTR * b)))
            return rc;
        CU_CHECK(cudaMemcpyAsync(m->h_sc, m->d_sc, nq * maxn * sizeof(int32_t),
                                 cudaMemcpyDeviceToHost, d->st));
        CU_CHECK(cudaEventRecord(d->ev_scored[b], d->st));
        pending[b] = c;
    }
    return SWGPU_OK;
}

typedef struct {
    cuda_state_t *S;
    gpu_t *d;
    const mbatch_t *bt;
    const mq_in_t *in;
    int32_t *asmb;
    size_t maxn;
    int rc;
    char msg[512];
} mqs_arg_t;

static void *mq_stream_thread(void *arg)
{
    mqs_arg_t *a = (mqs_arg_t *)arg;
    a->rc = mq_stream_dev(a->S, a->d, a->bt, a->in, a->asmb, a->maxn);
    if (a->rc) /* last_error is per thread */
        snprintf(a->msg, sizeof a->msg, "%s", swgpu_last_error());
    return NULL;
}

/* the key of the query-lane batches: QP_KEY + long; below, 2 x (index in
 * the DPX list) + long */
#define QP_KEY 100000
/* a query-lane batch: at least QP_MINQ queries (the lanes of few queries
 * cannot be balanced; a batch would rather take the rest of its key than
 * leave fewer than that behind) and QP_CELLS cells (a bigger batch wastes
 * less at its lanes' ends, its hits wait longer for their alignments); at
 * most QP_MAXQ queries (16-bit indices in the passes) */
#define QP_CELLS 2e12
#define QP_MINQ 16
#define QP_MAXQ 65535

/* sort key of a query: its configuration, then its length */
typedef struct {
    int key;
    size_t len, i;
} mkey_t;

static int cmp_mkey(const void *a, const void *b)
{
    const mkey_t *x = (const mkey_t *)a, *y = (const mkey_t *)b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    if (x->len != y->len)
        return x->len < y->len ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

/* batches by their longest query, descending; then as built */
static int cmp_batch(const void *a, const void *b)
{
    const mbatch_t *x = (const mbatch_t *)a, *y = (const mbatch_t *)b;
    if (x->maxqlen != y->maxqlen)
        return x->maxqlen > y->maxqlen ? -1 : 1;
    return x->first < y->first ? -1 : x->first > y->first;
}

static int cfg_index(swgpu_cu_cfg_t c)
{
    int n;
    const swgpu_cu_cfg_t *t = swgpu__cu_dpx_configs(&n);
    for (int i = 0; i < n; i++)
        if (t[i].G == c.G && t[i].R == c.R && t[i].P == c.P)
            return i;
    return -1;
}

/* the configuration the one-query scan would take for a query of qlen */
static swgpu_cu_cfg_t main_cfg(const cuda_state_t *S, size_t qlen)
{
    double avg = S->db->n ? (double)S->db->total_res / S->db->n : 1.0;
    return S->cfg_env.G ? S->cfg_env : pick_cfg((int)qlen, avg, S->pair);
}

static int cuda_scan_many(void *state, size_t nq, const swgpu__query_t *q, swgpu_scan_sink_t sink,
                          void *user, swgpu_scan_stats_t *st)
{
    cuda_state_t *S = (cuda_state_t *)state;
    int rc = SWGPU_OK;
    int32_t *row = NULL, *asmb = NULL;
    mkey_t *keys = NULL;
    size_t *ord = NULL;
    mbatch_t *bts = NULL;
    size_t nb = 0, nmq = 0;
    const swgpu_cu_cfg_t lcfg = {32, 32, 0};
    const int many = S->fam == FAM_DPX && !S->no_many;
    swgpu_cu_cfg_t qpc;
    const int qp_on = many && !S->streaming && !S->no_qp && qp_cfg(S, &qpc);
    /* the chunks a GPU scans: its own (resident), or any (streaming) */
    size_t maxn = 0;
    for (int c = 0; c < S->nchunks; c++)
        if (S->chunks[c].n > maxn)
            maxn = S->chunks[c].n;

    keys = (mkey_t *)malloc((nq ? nq : 1) * sizeof *keys);
    ord = (size_t *)malloc((nq ? nq : 1) * sizeof *ord);
    row = (int32_t *)malloc((S->db->n ? S->db->n : 1) * sizeof *row);
    if (!keys || !ord || !row) {
        rc = swgpu__fail(SWGPU_ENOMEM, "cuda engine: out of memory for %zu queries", nq);
        goto done;
    }
    /* every query's checks before the first is scored */
    for (size_t i = 0; i < nq; i++) {
        if (q[i].len > (size_t)1 << 30) {
            rc = swgpu__fail(SWGPU_ERANGE, "backend cuda: query %zu of %zu residues", i + 1,
                             q[i].len);
            goto done;
        }
        if ((rc = check_query(&q[i], i)))
            goto done;
    }
    /* queries the many-query kernel takes, sorted by configuration; the
     * others (empty, other kernel families, streaming, a configuration
     * without a many-query instance, a PSSM for the 32-bit kernel) one at a
     * time through cuda_scan */
    for (size_t i = 0; i < nq; i++) {
        const size_t ql = q[i].len;
        swgpu_cu_cfg_t c = main_cfg(S, ql);
        int ok = many && ql > 0 && S->db->n > 0 && swgpu__cu_dpx_has_mq(c) &&
                 swgpu__cu_dpx_has_mq(lcfg) && q_use16(S, &q[i]);
        if (ok) {
            keys[nmq].key = (qp_on ? QP_KEY : cfg_index(c) * 2) + (ql > 1024);
            keys[nmq].len = ql;
            keys[nmq].i = i;
            nmq++;
        } else {
            rc = cuda_scan(state, &q[i], row, st);
            if (rc == SWGPU_OK)
                rc = sink(user, i, row);
            if (rc < 0)
                goto done;
        }
    }
    if (nmq == 0)
        goto done;
    for (int i = 0; i < S->ndev; i++)
        S->dev[i].overflows = 0; /* cuda_scan above counted its own into st */
    qsort(keys, nmq, sizeof *keys, cmp_mkey);
    for (size_t j = 0; j < nmq; j++)
        ord[j] = keys[j].i;

    /* batches: one configuration each, bounded in cells and score bytes
     * (streaming: the GPU's score rows stay small beside the chunks, and
     * the host holds the whole database's scores of every query) */
    {
        size_t qcap = MQ_SCORE_BYTES / ((maxn ? maxn : 1) * sizeof(int32_t));
        if (S->streaming) {
            size_t dev_bytes = S->budget / 16 < ((size_t)16 << 20) ? S->budget / 16
                                                                   : ((size_t)16 << 20);
            size_t c1 = dev_bytes / ((maxn ? maxn : 1) * sizeof(int32_t));
            size_t c2 = MQ_SCORE_BYTES / ((S->db->n ? S->db->n : 1) * sizeof(int32_t));
            qcap = c1 < c2 ? c1 : c2;
        }
        /* a resident database of many subjects fills the GPU with one
         * query many times over: batches of one query, which take the
         * one-query kernel (2.5% faster per cell than the many-query kernel
         * on the synthetic database, bench/NOTES-gpu.md v18), still
         * pipelined over the two slots */
        /* (lanes: batches of two queries only when asked for, for tests) */
        if (S->solo == 1)
            qcap = qp_on ? 2 : 1;
        else if (S->solo < 0 && !qp_on && !S->streaming && S->db->n >= MQ_SOLO_SUBJECTS)
            qcap = 1;
        if (qp_on && qcap > QP_MAXQ)
            qcap = QP_MAXQ;
        if (qcap < 1)
            qcap = 1;
        bts = (mbatch_t *)calloc(nmq, sizeof *bts);
        if (!bts) {
            rc = swgpu__fail(SWGPU_ENOMEM, "cuda engine: out of memory for %zu batches", nmq);
            goto done;
        }
        for (size_t j = 0; j < nmq;) {
            mbatch_t *bt = &bts[nb++];
            bt->first = j;
            bt->qp = keys[j].key >= QP_KEY;
            bt->cfg = bt->qp ? qpc : main_cfg(S, keys[j].len);
            bt->cfgl = lcfg;
            bt->use_long = keys[j].len > 1024;
            double cells = 0;
            size_t e = j;
            if (bt->qp) {
                size_t kend = j; /* the end of this key's queries */
                while (kend < nmq && keys[kend].key == keys[j].key)
                    kend++;
                while (e < kend && e - j < qcap &&
                       (e - j < QP_MINQ || cells < QP_CELLS || kend - e < QP_MINQ)) {
                    cells += (double)keys[e].len * S->db->total_res;
                    e++;
                }
            } else {
                while (e < nmq && keys[e].key == keys[j].key && e - j < qcap &&
                       (e == j || cells + (double)keys[e].len * S->db->total_res <= MQ_CELLS)) {
                    cells += (double)keys[e].len * S->db->total_res;
                    e++;
                }
            }
            bt->n = e - j;
            for (size_t x = j; x < e; x++) {
                const int ql = (int)keys[x].len;
                const int t = (ql + bt->cfg.G * bt->cfg.R - 1) / (bt->cfg.G * bt->cfg.R);
                const int tl = (ql + 1023) / 1024;
                if (t > bt->maxtiles) bt->maxtiles = t;
                if (tl > bt->maxtilesl) bt->maxtilesl = tl;
                if (ql > bt->maxqlen) bt->maxqlen = ql;
            }
            j = e;
        }
        /* the batches with the longest queries first: their hits take the
         * longest to align, and they get the rest of the scan to do it in
         * (cudasw20: 5,478 residues first, 144 last); the output does not
         * depend on the order */
        qsort(bts, nb, sizeof *bts, cmp_batch);
        /* ... except that the batch with the least work after its scan goes
         * last, since that work is the run's tail: handing each query's
         * scores to the sink (a pass over the database's scores per query)
         * and its hits' alignments (about 10 per query, on the alignment
         * threads); q250synth's last batch had been its 71 shortest queries */
        if (nb > 2) {
            const double avg = S->db->n ? (double)S->db->total_res / S->db->n : 1.0;
            size_t last = nb - 1;
            double best = 1e300;
            for (size_t b = 1; b < nb; b++) { /* the first batch stays first */
                double cost = 0;
                for (size_t x = 0; x < bts[b].n; x++)
                    cost += (double)S->db->n + (double)keys[bts[b].first + x].len * avg * 10 / 15;
                if (cost < best) {
                    best = cost;
                    last = b;
                }
            }
            const mbatch_t t = bts[last];
            memmove(&bts[last], &bts[last + 1], (nb - 1 - last) * sizeof *bts);
            bts[nb - 1] = t;
        }
    }
    swgpu__log(SWGPU_LOG_DEBUG, "cuda: %zu queries in %zu batch(es)", nmq, nb);
    /* the largest batch's buffer sizes; the slots are allocated at them
     * (slot_alloc) except their pinned score rows, sized for each slot's
     * first batch and grown with hgrow_keep: pinned memory is slow to
     * allocate and cudaFree / cudaFreeHost would wait for the kernels */
    {
        size_t mq_ = 0, mp = 0, mpl = 0, mnq = 0, mqpt = 0, mqprof = 0;
        for (size_t b = 0; b < nb; b++) {
            size_t q_ = 0, p_ = 0, pl = 0;
            for (size_t j = 0; j < bts[b].n; j++) {
                const swgpu__query_t *Q = &q[ord[bts[b].first + j]];
                const int ql = (int)Q->len;
                q_ += align16(qblob_bytes(Q));
                if (!bts[b].qp)
                    p_ += align16(swgpu__cu_dpx_prof_bytes(bts[b].cfg, ql));
                if (bts[b].use_long)
                    pl += align16(swgpu__cu_dpx_prof_bytes(bts[b].cfgl, ql));
            }
            if (bts[b].qp) {
                const mq_in_t in0 = {q, ord};
                uint32_t nj = 0, np = 0;
                if ((rc = qp_plan(S, NULL, NULL, &bts[b], &in0, &nj, &np, NULL, NULL, NULL, NULL)))
                    goto done;
                bts[b].qp_njobs = nj;
                bts[b].qp_npass = np;
                const size_t tb = qp_bytes(nj, np, bts[b].n, NULL);
                const size_t pb = np * swgpu__cu_qp_pass_bytes(bts[b].cfg);
                if (tb > mqpt) mqpt = tb;
                if (pb > mqprof) mqprof = pb;
            }
            if (q_ > mq_) mq_ = q_;
            if (p_ > mp) mp = p_;
            if (pl > mpl) mpl = pl;
            if (bts[b].n > mnq) mnq = bts[b].n;
        }
        for (int g = 0; g < S->ndev && !rc; g++) {
            gpu_t *d = &S->dev[g];
            if (!S->streaming && d->own < 0)
                continue;
            const size_t n = S->streaming ? maxn : S->chunks[d->own].n;
            if ((rc = cudaSetDevice(d->id) == cudaSuccess ? SWGPU_OK
                                                          : swgpu__fail(SWGPU_EDEVICE, "cudaSetDevice")))
                break;
            /* boundary scratch (cudaFree inside the loop would wait for the GPU) */
            size_t sb = 0, sbl = 0;
            for (int c = 0; c < S->nchunks && !rc; c++) {
                if (!S->streaming && c != d->own)
                    continue;
                const chunk_t *ch = &S->chunks[c];
                for (size_t b = 0; b < nb && !rc; b++) {
                    int per = 0;
                    const uint32_t nshort = bts[b].use_long ? ch->nshort : ch->n;
                    if (nshort && !(rc = short_occupancy(&bts[b], &per))) {
                        size_t x = bts[b].qp ? swgpu__cu_qp_scratch(bts[b].cfg,
                                                   S->h_len[ch->k0 + nshort - 1],
                                                   (per > 0 ? per : 1) * d->sms) :
                                   swgpu__cu_dpx_scratch(bts[b].cfg, bts[b].maxqlen,
                                                         S->h_len[ch->k0 + nshort - 1],
                                                         (per > 0 ? per : 1) * d->sms);
                        if (x > sb) sb = x;
                    }
                    if (!rc && bts[b].use_long && nshort < ch->n &&
                        !(rc = swgpu__cu_dpx_occupancy(bts[b].cfgl, &per))) {
                        size_t x = swgpu__cu_dpx_scratch(bts[b].cfgl, bts[b].maxqlen, ch->maxlen,
                                                         (per > 0 ? per : 1) * d->sms);
                        if (x > sbl) sbl = x;
                    }
                }
            }
            d->sz_scr = sb;
            d->sz_scrl = sbl;
            d->sz_q = mq_;
            d->sz_prof = mp;
            d->sz_profl = mpl;
            d->sz_qpt = mqpt;
            d->sz_qprof = mqprof;
            d->sz_nq = mnq;
            d->sz_n = n;
            /* resident: slot 0 now, the others when their first batch is
             * enqueued (the GPU computes the first batch meanwhile);
             * streaming: both now, their score rows for every batch */
            for (int k = 0; k < NMB && !rc; k++) {
                d->ms[k].sized = 0;
                if (k == 0 || S->streaming)
                    rc = slot_alloc(d, &d->ms[k], S->streaming ? mnq : bts[0].n);
            }
        }
        if (rc)
            goto done;
    }
    swgpu__log(SWGPU_LOG_DEBUG, "cuda: batch buffers allocated");
    if (S->streaming) {
        /* one batch at a time: every GPU takes chunks until none is left */
        size_t mnq = 0;
        for (size_t b = 0; b < nb; b++)
            if (bts[b].n > mnq)
                mnq = bts[b].n;
        if (!(asmb = (int32_t *)malloc(mnq * S->db->n * sizeof *asmb))) {
            rc = swgpu__fail(SWGPU_ENOMEM, "cuda engine: out of memory for %zu x %llu scores",
                             mnq, (unsigned long long)S->db->n);
            goto done;
        }
        mq_in_t in = {q, ord};
        mqs_arg_t *args = (mqs_arg_t *)calloc(S->ndev, sizeof *args);
        pthread_t *th = (pthread_t *)calloc(S->ndev, sizeof *th);
        if (!args || !th) {
            free(args);
            free(th);
            rc = swgpu__fail(SWGPU_ENOMEM, "cuda engine: out of memory for %d GPU threads",
                             S->ndev);
            goto done;
        }
        for (size_t i = 0; i < nb && !rc; i++) {
            S->next_chunk = 0;
            int started = 0;
            for (int g = 0; g < S->ndev; g++) {
                args[g] = (mqs_arg_t){S, &S->dev[g], &bts[i], &in, asmb, maxn, 0, {0}};
                if (S->ndev == 1)
                    mq_stream_thread(&args[g]);
                else if (pthread_create(&th[g], NULL, mq_stream_thread, &args[g]) == 0)
                    started = g + 1;
                else
                    mq_stream_thread(&args[g]);
            }
            for (int g = 0; g < started; g++)
                pthread_join(th[g], NULL);
            for (int g = 0; g < S->ndev && !rc; g++)
                if (args[g].rc)
                    rc = swgpu__fail(args[g].rc, "%s", args[g].msg);
            for (size_t j = 0; j < bts[i].n && !rc; j++) {
                const size_t qi = ord[bts[i].first + j];
                if (st)
                    st->cells += (uint64_t)q[qi].len * S->db->total_res;
                rc = sink(user, qi, asmb + j * S->db->n);
            }
        }
        free(args);
        free(th);
        if (!rc && st)
            for (int g = 0; g < S->ndev; g++)
                st->overflows += S->dev[g].overflows;
        goto done;
    }
    if (S->ndev > 1 && !(asmb = (int32_t *)malloc(S->db->n * sizeof *asmb))) {
        rc = swgpu__fail(SWGPU_ENOMEM, "cuda engine: out of memory for %llu scores",
                         (unsigned long long)S->db->n);
        goto done;
    }
    {
        mq_in_t in = {q, ord};
        for (size_t i = 0; i <= nb; i++) {
            if (i < nb)
                for (int g = 0; g < S->ndev; g++)
                    if (S->dev[g].own >= 0 &&
                        ((!S->dev[g].ms[i % NMB].sized &&
                          (rc = slot_alloc(&S->dev[g], &S->dev[g].ms[i % NMB], bts[i].n))) ||
                         (rc = mq_enqueue(S, &S->dev[g], &S->dev[g].ms[i % NMB], &bts[i], &in))))
                        goto done;
            if (i == 0)
                continue;
            const mbatch_t *bt = &bts[i - 1];
            for (int g = 0; g < S->ndev; g++)
                if (S->dev[g].own >= 0 &&
                    (rc = mq_finish(S, &S->dev[g], &S->dev[g].ms[(i - 1) % NMB], bt, &in)))
                    goto done;
            for (size_t j = 0; j < bt->n; j++) {
                const int32_t *sc;
                if (S->ndev == 1) {
                    sc = S->dev[0].ms[(i - 1) % NMB].h_sc + j * S->chunks[S->dev[0].own].n;
                } else {
                    for (int g = 0; g < S->ndev; g++) {
                        const gpu_t *d = &S->dev[g];
                        if (d->own < 0)
                            continue;
                        const chunk_t *ch = &S->chunks[d->own];
                        memcpy(asmb + ch->k0, d->ms[(i - 1) % NMB].h_sc + j * ch->n,
                               ch->n * sizeof(int32_t));
                    }
                    sc = asmb;
                }
                const size_t qi = ord[bt->first + j];
                if (st)
                    st->cells += (uint64_t)q[qi].len * S->db->total_res;
                if ((rc = sink(user, qi, sc)) < 0)
                    goto done;
            }
        }
        if (st)
            for (int g = 0; g < S->ndev; g++)
                st->overflows += S->dev[g].overflows;
    }
done:
    if (rc)
        for (int g = 0; g < S->ndev; g++)
            if (cudaSetDevice(S->dev[g].id) == cudaSuccess)
                cudaDeviceSynchronize(); /* nothing in flight once we return */
    for (int g = 0; g < S->ndev; g++)
        if (S->dev[g].nretired && cudaSetDevice(S->dev[g].id) == cudaSuccess)
            retire_free(&S->dev[g]); /* the scan's last batch is done (or failed) */
    free(keys);
    free(ord);
    free(row);
    free(asmb);
    free(bts);
    return rc;
}

/* ------------------------------------------------------------ destroy */

/* free() of a large buffer returns its pages to the system (about 10 ms
 * for the 207 MB pair layout of a Swiss-Prot-size database), which the
 * search would wait for between its scan and its output: a detached
 * thread does it (inline when no thread can be started) */
static void *free_thread(void *p)
{
    free(p);
    return NULL;
}

static void free_later(void *p)
{
    pthread_t th;
    if (!p)
        return;
    if (pthread_create(&th, NULL, free_thread, p) == 0)
        pthread_detach(th);
    else
        free(p);
}

static void cuda_destroy(void *state)
{
    cuda_state_t *S = (cuda_state_t *)state;
    if (!S)
        return;
    for (int i = 0; S->dev && i < S->ndev; i++) {
        gpu_t *d = &S->dev[i];
        if (cudaSetDevice(d->id) != cudaSuccess)
            continue;
        cudaDeviceSynchronize();
        for (int b = 0; b < NBUF; b++) {
            cudaFree(d->buf[b].res);
            cudaFree(d->buf[b].woff);
            cudaFree(d->buf[b].len);
            cudaFree(d->buf[b].pres);
            cudaFree(d->buf[b].poff);
            cudaFree(d->buf[b].scores);
            cudaFreeHost(d->buf[b].h_scores);
            if (d->ev_copied[b]) cudaEventDestroy(d->ev_copied[b]);
            if (d->ev_long[b]) cudaEventDestroy(d->ev_long[b]);
            if (d->ev_scored[b]) cudaEventDestroy(d->ev_scored[b]);
            if (d->ev_free[b]) cudaEventDestroy(d->ev_free[b]);
        }
        for (int k = 0; k < NMB; k++) {
            mslot_t *m = &d->ms[k];
            cudaFree(m->d_q);
            cudaFreeHost(m->h_q);
            cudaFree(m->d_prof);
            cudaFree(m->d_profl);
            cudaFree(m->d_mq);
            cudaFreeHost(m->h_mq);
            cudaFree(m->d_sc);
            cudaFreeHost(m->h_sc);
            cudaFree(m->scr);
            cudaFree(m->scrl);
            cudaFree(m->d_qpt);
            cudaFreeHost(m->h_qpt);
            cudaFree(m->d_qprof);
            cudaFree(m->d_ctr);
            if (m->st) cudaStreamDestroy(m->st);
            if (m->stl) cudaStreamDestroy(m->stl);
            if (m->ev_long) cudaEventDestroy(m->ev_long);
            if (m->ev_done) cudaEventDestroy(m->ev_done);
        }
        if (d->sto) cudaStreamDestroy(d->sto);
        if (d->ev_k0) cudaEventDestroy(d->ev_k0);
        if (d->ev_k1) cudaEventDestroy(d->ev_k1);
        cudaFree(d->d_q);
        cudaFreeHost(d->h_q);
        cudaFree(d->d_mat);
        cudaFree(d->d_tp_main);
        cudaFree(d->d_tp_long);
        cudaFree(d->d_tp_intra);
        cudaFree(d->d_prof);
        cudaFree(d->d_idx);
        cudaFreeHost(d->h_idx);
        retire_free(d);
        cudaFree(d->d_ctr);
        cudaFree(d->scr_main);
        cudaFree(d->scr_b);
        if (d->st2) cudaStreamDestroy(d->st2);
        if (d->ev_part) cudaEventDestroy(d->ev_part);
        if (d->ev_b) cudaEventDestroy(d->ev_b);
        cudaFree(d->scr_long);
        cudaFree(d->scr_intra);
        if (d->st) cudaStreamDestroy(d->st);
        if (d->stl) cudaStreamDestroy(d->stl);
        if (d->cst) cudaStreamDestroy(d->cst);
    }
    cudaGetLastError();
    free(S->dev);
    if (S->h_res_pinned)
        cudaFreeHost(S->h_res);
    else
        free(S->h_res);
    free(S->h_woff);
    free(S->h_len);
    if (S->layout_running)
        pthread_join(S->layout_th, NULL);
    if (S->h_pres_pinned)
        cudaHostUnregister(S->h_pres);
    free_later(S->h_pres);
    free(S->h_gpoff);
    free(S->h_poff);
    free(S->chunks);
    cudaFreeHost(S->h_prof);
    cudaGetLastError();
    pthread_mutex_destroy(&S->lock);
    free(S);
}

extern "C" const swgpu_engine_ops_t swgpu__engine_cuda = {"cuda", cuda_create, cuda_scan,
                                                          cuda_destroy, cuda_scan_many,
                                                          SWGPU__CAP_GPU};

/* swgpu__cuda_prepare: the driver and the contexts of the GPUs a search
 * will use, set up on a background thread while the caller reads its
 * inputs (about 0.25 s on an H100 machine).  The device count is known
 * first (prep_wait(PREP_COUNTED)); the engine waits for the contexts
 * (PREP_DONE) only after it started laying out the database. */
static pthread_mutex_t prep_mx = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t prep_cv = PTHREAD_COND_INITIALIZER;
static int prep_state = PREP_NONE, prep_gpus;

static void prep_set(int state)
{
    pthread_mutex_lock(&prep_mx);
    prep_state = state;
    pthread_cond_broadcast(&prep_cv);
    pthread_mutex_unlock(&prep_mx);
}

static void *prep_thread(void *arg)
{
    (void)arg;
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess)
        n = 0;
    prep_set(PREP_COUNTED);
    if (prep_gpus > 0 && prep_gpus < n)
        n = prep_gpus;
    for (int i = 0; i < n; i++)
        if (cudaSetDevice(i) == cudaSuccess)
            cudaFree(0);
    cudaGetLastError();
    prep_set(PREP_DONE);
    return NULL;
}

extern "C" void swgpu__cuda_prepare(int gpus)
{
    pthread_t th;
    pthread_mutex_lock(&prep_mx);
    if (prep_state == PREP_NONE) {
        prep_gpus = gpus;
        if (pthread_create(&th, NULL, prep_thread, NULL) == 0) {
            pthread_detach(th);
            prep_state = PREP_STARTED;
        }
    }
    pthread_mutex_unlock(&prep_mx);
}

/* wait until a set-up in progress has reached state */
static void prep_wait_for(int state)
{
    pthread_mutex_lock(&prep_mx);
    while (prep_state != PREP_NONE && prep_state < state)
        pthread_cond_wait(&prep_cv, &prep_mx);
    pthread_mutex_unlock(&prep_mx);
}

extern "C" void swgpu__cuda_prepare_wait(void)
{
    prep_wait_for(PREP_DONE);
}

extern "C" int swgpu__cuda_device_count(void)
{
    int n = 0;
    prep_wait_for(PREP_COUNTED);
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return n;
}
