/*
 * engine_layout.cu - the database of the CUDA engine, on the host and on
 * the devices.
 *
 * Layout (made once on the host at create): residues in sorted order,
 * packed 4 per 32-bit word, every subject padded to a word with
 * SWGPU_CU_PAD; per subject a word offset (relative to its chunk) and a
 * length.  The default (DPX) family reads the pair layout instead: rows of
 * (code of subject 2p | code of 2p+1 << 8), built on a thread while the
 * GPUs are set up.
 *
 * Chunks: contiguous ranges of the sorted database, each starting on an
 * even subject.  When everything fits (SWGPU_GPU_MEMORY, if set, caps the
 * bytes used per GPU), each GPU holds one chunk for good, sized by its
 * share of the multiprocessors.  Otherwise chunks sized to half of what is
 * left after fixed buffers are streamed: the packed database sits in
 * pinned host memory, a copy stream fills one device buffer while the
 * kernels work on the other, and the GPUs take the next chunk from a
 * shared counter (dynamic load balancing).
 */
#include "engine.cuh"

namespace swgpu_cuda {

/* The host layout of a large database (hundreds of MB to pack at start-up)
 * is made on all cores, by swgpu__par_for over blocks of BLK items: block
 * i is items [i BLK, min(n, (i + 1) BLK)). */
static inline uint64_t blocks_of(uint64_t n, uint64_t blk) { return (n + blk - 1) / blk; }

/* ---------------------------------------------------- DPX configuration */

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
int upload_chunk(cuda_state_t *S, dbuf_t *b, int c, cudaStream_t s, int big_later)
{
    const chunk_t *ch = &S->chunks[c];
    if (S->h_res && !big_later)
        CU_CHECK(cudaMemcpyAsync(b->res, S->h_res + ch->w0, ch->nw * sizeof(uint32_t),
                                 cudaMemcpyHostToDevice, s));
    CU_CHECK(cudaMemcpyAsync(b->woff, S->h_woff + ch->k0, ch->n * sizeof(uint32_t),
                             cudaMemcpyHostToDevice, s));
    CU_CHECK(cudaMemcpyAsync(b->len, S->h_len + ch->k0, ch->n * sizeof(uint32_t),
                             cudaMemcpyHostToDevice, s));
    if (S->h_pres) {
        if (!big_later)
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

enum { PAIR_BLK = 2048, PACK_BLK = 1024 };

/* the rows of block i of the global pairs (offsets already in h_gpoff) */
static void fill_pairs(void *arg, size_t i)
{
    cuda_state_t *S = (cuda_state_t *)arg;
    const swgpu_db_t *db = S->db;
    const uint64_t np = (db->n + 1) / 2, p0 = (uint64_t)i * PAIR_BLK;
    const uint64_t p1 = p0 + PAIR_BLK < np ? p0 + PAIR_BLK : np;
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
        swgpu__par_for(blocks_of(np, PAIR_BLK), 0, fill_pairs, S);
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
int make_pairs(cuda_state_t *S, int pinned)
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

/* the subjects of block i packed 4 residues per word */
static void pack_res(void *arg, size_t i)
{
    const pack_ctx_t *pk = (const pack_ctx_t *)arg;
    const uint64_t n = pk->db->n, k0 = (uint64_t)i * PACK_BLK;
    const uint64_t k1 = k0 + PACK_BLK < n ? k0 + PACK_BLK : n;
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

void layout_start(cuda_state_t *S)
{
    if (pthread_create(&S->layout_th, NULL, layout_thread, S) == 0)
        S->layout_running = 1;
    else
        layout_thread(S); /* here, then */
}

int layout_words(cuda_state_t *S, uint64_t **wstart)
{
    const swgpu_db_t *db = S->db;
    uint64_t n = db->n, w = 0;
    int rc = swgpu__check_db_seqs(n, "backend cuda", NULL); /* the chunks' subjects are 32-bit */
    *wstart = NULL;
    if (rc)
        return rc;
    uint64_t *ws = (uint64_t *)malloc((n + 1) * sizeof *ws);
    *wstart = ws;
    S->h_woff = (uint32_t *)malloc((n ? n : 1) * sizeof(uint32_t));
    S->h_len = (uint32_t *)malloc((n ? n : 1) * sizeof(uint32_t));
    if (!ws || !S->h_woff || !S->h_len)
        return swgpu__fail(SWGPU_ENOMEM, "cuda engine: out of memory for %llu subjects",
                           (unsigned long long)n);
    for (uint64_t k = 0; k < n; k++) {
        uint64_t l = db->off[k + 1] - db->off[k];
        if (l > 0xffffffffull)
            return swgpu__fail(SWGPU_ERANGE, "backend cuda: subject of %llu residues",
                               (unsigned long long)l);
        ws[k] = w;
        S->h_len[k] = (uint32_t)l;
        w += (l + 3) / 4;
    }
    ws[n] = w;
    return SWGPU_OK;
}

/* resident: one chunk per GPU, sized by multiprocessors */
static int chunks_resident(cuda_state_t *S, const uint64_t *wstart, int *cap)
{
    const uint64_t n = S->db->n, w = wstart[n];
    int rc, totsm = 0;
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
        if ((rc = make_chunks(S, wstart, k, e2, ~0ull, cap)))
            return rc;
        if (S->nchunks > before)
            S->dev[i].own = before;
        k = e2;
    }
    S->streaming = 0;
    return SWGPU_OK;
}

/* streaming: chunks of half the budget left after the fixed buffers */
static int chunks_streamed(cuda_state_t *S, const uint64_t *wstart, size_t fixed,
                           size_t per_word, size_t per_seq, int *cap)
{
    const uint64_t n = S->db->n;
    int rc;
    if (S->budget < fixed + ((size_t)256 << 10))
        return swgpu__fail(SWGPU_EBUDGET, "backend cuda: GPU memory budget of %zu bytes "
                                          "is below the %zu bytes needed (raise --max-memory)",
                           S->budget, fixed + ((size_t)256 << 10));
    /* two slots of a batch's scores beside the two chunk buffers: up to
     * 16 MB each within the fixed 64 MB, the rest here */
    {
        const size_t sb = stream_score_bytes(S), in_fixed = (size_t)16 << 20;
        fixed += sb > in_fixed ? 2 * (sb - in_fixed) : 0;
    }
    uint64_t maxw = S->budget > fixed ? (S->budget - fixed) / 2 / (per_word + per_seq) : 0;
    if (maxw < 1024)
        maxw = 1024;
    if (maxw > S->chunk_words)
        maxw = S->chunk_words;
    uint64_t longest = 0;
    for (uint64_t k = 0; k < n; k++)
        if (wstart[k + 1] - wstart[k] > longest)
            longest = wstart[k + 1] - wstart[k];
    if (longest > maxw)
        return swgpu__fail(SWGPU_EBUDGET, "backend cuda: GPU memory budget too small for "
                                          "a subject of %llu residues",
                           (unsigned long long)longest * 4);
    if ((rc = make_chunks(S, wstart, 0, (uint32_t)n, maxw, cap)))
        return rc;
    S->streaming = 1;
    return SWGPU_OK;
}

int layout_chunks(cuda_state_t *S, const uint64_t *wstart, int force_stream)
{
    const uint64_t n = S->db->n, w = wstart[n];
    int cap = 0;
    /* fixed per-GPU costs: scratch for the longest subjects, profiles */
    size_t fixed = (size_t)64 << 20;
    size_t per_word = 4 + (S->fam == FAM_SIMT ? 32 : 0) + (S->fam == FAM_DPX ? 4 : 0);
    size_t per_seq = 16 + (S->fam == FAM_DPX ? 2 : 0);
    size_t need = (size_t)w * per_word + (size_t)n * per_seq;
    /* resident: one chunk per GPU, which its 32-bit offsets must reach */
    if (!force_stream && fixed + need / S->ndev + need / 64 <= S->budget) {
        int rc = chunks_resident(S, wstart, &cap);
        if (rc)
            return rc;
        int fits = 1;
        for (int c = 0; c < S->nchunks; c++)
            fits &= S->chunks[c].nw <= S->chunk_words;
        if (fits)
            return SWGPU_OK;
        swgpu__log(SWGPU_LOG_INFO, "backend cuda: a GPU's share of the database is over %llu "
                                   "words (32-bit offsets): streamed in chunks",
                   (unsigned long long)S->chunk_words);
        S->nchunks = 0;
        for (int i = 0; i < S->ndev; i++)
            S->dev[i].own = -1;
    }
    return chunks_streamed(S, wstart, fixed, per_word, per_seq, &cap);
}

/* the packed residues (the default family reads the pair layout only, its
 * 32-bit recomputes too) */
int layout_pack(cuda_state_t *S, const uint64_t *wstart)
{
    const uint64_t n = S->db->n, w = wstart[n];
    size_t bytes = (size_t)(w ? w : 1) * sizeof(uint32_t);
    if (S->fam == FAM_DPX) {
        /* nothing to pack */
    } else if (S->streaming && cudaMallocHost((void **)&S->h_res, bytes) == cudaSuccess) {
        S->h_res_pinned = 1;
    } else {
        cudaGetLastError();
        S->h_res = (uint32_t *)malloc(bytes);
        if (!S->h_res)
            return swgpu__fail(SWGPU_ENOMEM, "cuda engine: out of memory for %zu bytes", bytes);
    }
    if (S->h_res) {
        pack_ctx_t pk = {S->db, wstart, S->h_res};
        swgpu__par_for(blocks_of(n, PACK_BLK), 0, pack_res, &pk);
    }
    return SWGPU_OK;
}

/*
 * A large upload from pageable host memory (a resident chunk's pair rows
 * or packed residues), staged: the copy of pageable memory runs at ~6-7
 * GB/s on the H200 machines (0.3 s of a 2.07 G-residue database's start,
 * bench/NOTES-gpu.md v33), so STG_WORKERS threads each copy pieces of
 * STG_PIECE bytes into two pinned buffers of their own and send them from
 * there, one piece's memcpy beside the other's transfer.  A worker whose
 * pinned buffers cannot be had sends its pieces from pageable memory.
 */
enum { STG_WORKERS = 4, STG_PIECE = 8 << 20 };

typedef struct {
    int dev;
    char *dst;
    const char *src;
    size_t n, piece;
    size_t next; /* atomic: the next piece's offset */
    int rc[STG_WORKERS];
    char msg[STG_WORKERS][256];
} stage_t;

/* the pieces a worker takes, through its buffers buf (NULL: from pageable
 * memory) on its stream st */
static int stage_pieces(stage_t *g, cudaStream_t st, cudaEvent_t ev[2], void *buf[2])
{
    int used[2] = {0, 0};
    for (int k = 0;; k ^= 1) {
        const size_t off = __atomic_fetch_add(&g->next, g->piece, __ATOMIC_RELAXED);
        if (off >= g->n)
            break;
        const size_t len = g->n - off < g->piece ? g->n - off : g->piece;
        const void *from = g->src + off;
        if (buf[k]) {
            if (used[k])
                CU_CHECK(cudaEventSynchronize(ev[k])); /* its last piece has left */
            memcpy(buf[k], from, len);
            from = buf[k];
        }
        CU_CHECK(cudaMemcpyAsync(g->dst + off, from, len, cudaMemcpyHostToDevice, st));
        CU_CHECK(cudaEventRecord(ev[k], st));
        used[k] = 1;
    }
    CU_CHECK(cudaStreamSynchronize(st));
    return SWGPU_OK;
}

static void stage_worker(void *arg, size_t w)
{
    stage_t *g = (stage_t *)arg;
    cudaStream_t st = NULL;
    cudaEvent_t ev[2] = {NULL, NULL};
    void *buf[2] = {NULL, NULL};
    int rc = SWGPU_OK;
    if (cudaSetDevice(g->dev) != cudaSuccess ||
        cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking) != cudaSuccess ||
        cudaEventCreateWithFlags(&ev[0], cudaEventDisableTiming) != cudaSuccess ||
        cudaEventCreateWithFlags(&ev[1], cudaEventDisableTiming) != cudaSuccess) {
        rc = swgpu__cu_fail(cudaGetLastError(), "staged upload: stream", __FILE__, __LINE__);
    } else {
        for (int k = 0; k < 2; k++) /* injected failures (tests) count here too */
            if (alloc_injected() != cudaSuccess || cudaMallocHost(&buf[k], g->piece) != cudaSuccess) {
                cudaGetLastError();
                cudaFreeHost(buf[0]); /* both or none: from pageable memory then */
                buf[0] = buf[1] = NULL;
                break;
            }
        rc = stage_pieces(g, st, ev, buf);
    }
    if (st)
        cudaStreamSynchronize(st);
    cudaFreeHost(buf[0]);
    cudaFreeHost(buf[1]);
    if (ev[0]) cudaEventDestroy(ev[0]);
    if (ev[1]) cudaEventDestroy(ev[1]);
    if (st) cudaStreamDestroy(st);
    g->rc[w] = rc;
    if (rc)
        snprintf(g->msg[w], sizeof g->msg[w], "%s", swgpu_last_error());
}

static int upload_staged(gpu_t *d, void *dst, const void *src, size_t n)
{
    if (n == 0)
        return SWGPU_OK;
    stage_t g;
    memset(&g, 0, sizeof g);
    g.dev = d->id;
    g.dst = (char *)dst;
    g.src = (const char *)src;
    g.n = n;
    /* small arrays: one piece, one worker's pinned buffers of its size */
    g.piece = n < (size_t)STG_PIECE ? n : (size_t)STG_PIECE;
    const size_t pieces = (n + g.piece - 1) / g.piece;
    const int T = pieces < STG_WORKERS ? (int)pieces : STG_WORKERS;
    swgpu__par_for((size_t)T, T, stage_worker, &g);
    for (int w = 0; w < T; w++)
        if (g.rc[w])
            return swgpu__fail(g.rc[w], "%s", g.msg[w]);
    return SWGPU_OK;
}

/* GPU d's buffer of its resident chunk, uploaded (its largest array staged) */
static int dev_buffer_resident(cuda_state_t *S, gpu_t *d, int *resident_oom)
{
    int rc;
    const chunk_t *ch = &S->chunks[d->own];
    if ((rc = dev_alloc_buf(d, &d->buf[0], S->h_res ? ch->nw : 0, ch->n,
                            S->h_pres ? ch->npr + 1 : 0, ch->np))) {
        if (rc == SWGPU_ENOMEM && resident_oom)
            *resident_oom = 1;
        return rc;
    }
    d->nbuf_used = 1;
    if ((rc = upload_chunk(S, &d->buf[0], d->own, d->cst, 1)))
        return rc;
    if (S->h_res && (rc = upload_staged(d, d->buf[0].res, S->h_res + ch->w0,
                                        ch->nw * sizeof(uint32_t))))
        return rc;
    if (S->h_pres && (rc = upload_staged(d, d->buf[0].pres, S->h_pres + ch->pr0,
                                         ch->npr * sizeof(uint16_t))))
        return rc;
    CU_CHECK(cudaStreamSynchronize(d->cst));
    return SWGPU_OK;
}

/* GPU d's streaming buffers, each for the largest chunk */
static int dev_buffers_streamed(cuda_state_t *S, gpu_t *d)
{
    int rc;
    uint64_t mw = 0, mr = 0;
    uint32_t mn = 0, mp = 0;
    for (int c = 0; c < S->nchunks; c++) {
        if (S->chunks[c].nw > mw) mw = S->chunks[c].nw;
        if (S->chunks[c].n > mn) mn = S->chunks[c].n;
        if (S->chunks[c].npr > mr) mr = S->chunks[c].npr;
        if (S->chunks[c].np > mp) mp = S->chunks[c].np;
    }
    for (int b = 0; b < NBUF; b++)
        if ((rc = dev_alloc_buf(d, &d->buf[b], S->h_res ? mw : 0, mn, S->h_pres ? mr + 1 : 0,
                                mp)))
            return rc;
    d->nbuf_used = NBUF;
    return SWGPU_OK;
}

/* one GPU's resident buffer (a swgpu__par_for body): its status, its
 * message, whether it ran out of memory */
typedef struct {
    cuda_state_t *S;
    int rc, oom;
    char msg[512];
} upload_arg_t;

static void upload_one(void *arg, size_t i)
{
    upload_arg_t *a = (upload_arg_t *)arg + i;
    if (a->S->dev[i].own < 0)
        return;
    a->rc = dev_buffer_resident(a->S, &a->S->dev[i], &a->oom);
    if (a->rc)
        snprintf(a->msg, sizeof a->msg, "%s", swgpu_last_error());
}

/* Resident on several GPUs: every GPU's chunk allocated and uploaded at
 * once, a thread each.  The copies come from pageable memory, each at about
 * 6-7 GB/s on the H200 machines, so one after another they took 0.37 s of a
 * 2.07 G-residue database's start on two GPUs (bench/NOTES-gpu.md v32). */
static int dev_buffers_resident(cuda_state_t *S, int *resident_oom)
{
    upload_arg_t *a = (upload_arg_t *)calloc(S->ndev, sizeof *a);
    int rc = SWGPU_OK;
    if (!a)
        return swgpu__fail(SWGPU_ENOMEM, "cuda engine: out of memory for %d GPU threads",
                           S->ndev);
    for (int i = 0; i < S->ndev; i++)
        a[i].S = S;
    swgpu__par_for((size_t)S->ndev, S->ndev, upload_one, a);
    for (int i = 0; i < S->ndev; i++) {
        if (a[i].oom && resident_oom)
            *resident_oom = 1;
        if (a[i].rc && !rc)
            rc = swgpu__fail(a[i].rc, "%s", a[i].msg);
    }
    free(a);
    return rc;
}

int dev_buffers(cuda_state_t *S, int *resident_oom)
{
    int rc;
    if (!S->streaming)
        return dev_buffers_resident(S, resident_oom);
    for (int i = 0; i < S->ndev; i++)
        if ((rc = dev_buffers_streamed(S, &S->dev[i])))
            return rc;
    return SWGPU_OK;
}

} /* namespace swgpu_cuda */
