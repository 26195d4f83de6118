/*
 * engine_scan.cu - the one-query scan of the CUDA engine (cuda_scan): the
 * kernel family and DPX configuration for the query, its profiles on every
 * GPU, the kernels of each chunk (long subjects on their own stream; a
 * resident chunk of many subjects in two parts, see dev_query), the
 * recompute of saturated subjects by the 32-bit intra kernel, and the
 * streaming loop (the next chunk uploads while one computes).
 */
#include "engine.cuh"

namespace swgpu_cuda {

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

/* the configuration the one-query scan would take for a query of qlen */
swgpu_cu_cfg_t main_cfg(const cuda_state_t *S, size_t qlen)
{
    double avg = S->db->n ? (double)S->db->total_res / S->db->n : 1.0;
    return S->cfg_env.G ? S->cfg_env : pick_cfg((int)qlen, avg, S->pair);
}

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

/* recompute the nov subjects of the chunk in buffer b that scored >= sat
 * with the 32-bit intra kernel; all the chunk's scores to out */
static int recompute(cuda_state_t *S, gpu_t *d, int b, uint32_t nov, int32_t sat, int32_t *out)
{
    dbuf_t *B = &d->buf[b];
    const chunk_t *ch = &S->chunks[B->chunk];
    int rc;
    if ((rc = intra_prof(S, d)) || (rc = idx_grow(d, nov)))
        return rc;
    uint32_t j = 0;
    for (uint32_t i = 0; i < ch->n; i++)
        if (B->h_scores[i] >= sat)
            d->h_idx[j++] = i;
    swgpu_cu_batch_t bt = {B->res, B->woff, B->len, ch->n, B->pres, B->poff};
    swgpu_cu_query_t q = {d->d_q, S->qlen, S->oe, S->ext};
    CU_CHECK(cudaMemcpyAsync(d->d_idx, d->h_idx, nov * sizeof(uint32_t),
                             cudaMemcpyHostToDevice, d->st));
    int blocks = (int)(nov < (uint32_t)d->blocks_intra ? nov : (uint32_t)d->blocks_intra);
    if ((rc = swgpu__cu_intra(&bt, d->d_idx, 0, nov, &q, d->d_tp_intra, blocks, d->scr_intra,
                              ch->maxlen, d->d_ctr + NCTR * b + 2, B->scores, d->st)))
        return rc;
    CU_CHECK(cudaMemcpyAsync(B->h_scores, B->scores, ch->n * sizeof(int32_t),
                             cudaMemcpyDeviceToHost, d->st));
    CU_CHECK(cudaStreamSynchronize(d->st));
    d->overflows += nov;
    memcpy(out, B->h_scores, ch->n * sizeof(int32_t));
    return SWGPU_OK;
}

/* wait for the chunk in buffer b, recompute saturated subjects, copy out */
static int finish_chunk(cuda_state_t *S, gpu_t *d, int b)
{
    dbuf_t *B = &d->buf[b];
    const chunk_t *ch = &S->chunks[B->chunk];
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
    return nov ? recompute(S, d, b, nov, sat, out) : SWGPU_OK;
}

int next_chunk(cuda_state_t *S)
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
        if ((rc = upload_chunk(S, &d->buf[b], c, d->cst, 0)))
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

/* GPU i's scan (a swgpu__par_for body) */
static void dev_scan_one(void *arg, size_t i)
{
    gpu_t *d = &((cuda_state_t *)arg)->dev[i];
    d->rc = dev_scan(d->S, d);
    if (d->rc)
        snprintf(d->msg, sizeof d->msg, "%s", swgpu_last_error());
}

/* 1 if the simt kernel's 8-bit profile holds q's scores (a matrix's are
 * checked at create) */
static int simt_fits(const swgpu__query_t *q)
{
    return !q->rows || (q->smin >= -127 && q->smax <= 127);
}

/* the family for query Q: scan has a query-length limit; a PSSM the
 * 16-bit DPX kernel or simt's 8-bit profile cannot hold goes to the
 * 32-bit intra kernel */
static int scan_family(const cuda_state_t *S, const swgpu__query_t *Q)
{
    if (S->fam == FAM_SCAN &&
        (S->qlen > swgpu__cu_scan_max_qlen() ||
         (int64_t)swgpu__cu_scan_qpad(S->qlen) * S->ext > ((int64_t)1 << 29)))
        return FAM_INTRA;
    if ((S->fam == FAM_DPX && !q_use16(S, Q)) || (S->fam == FAM_SIMT && !simt_fits(Q)))
        return FAM_INTRA;
    return S->fam;
}

/* the DPX configurations of the query; the simt, vector or scan profile
 * (the DPX and intra profiles are built on each GPU, dev_query) */
static int scan_profiles(cuda_state_t *S, const swgpu__query_t *Q)
{
    int rc;
    if (S->scan_fam == FAM_DPX) {
        S->cfg_main = main_cfg(S, S->qlen);
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
    return SWGPU_OK;
}

/* dev_scan on every GPU, a thread each when there are several */
static int scan_gpus(cuda_state_t *S)
{
    swgpu__par_for((size_t)S->ndev, S->ndev, dev_scan_one, S);
    for (int i = 0; i < S->ndev; i++)
        if (S->dev[i].rc)
            return S->ndev > 1 ? swgpu__fail(S->dev[i].rc, "%s", S->dev[i].msg) : S->dev[i].rc;
    return SWGPU_OK;
}

int cuda_scan(void *state, const swgpu__query_t *Q, int32_t *scores, swgpu_scan_stats_t *st)
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
    S->scan_fam = scan_family(S, Q);
    S->qsat = S->scan_fam == FAM_DPX ? qsat_of(S, Q) : INT32_MAX;
    S->out = scores;
    S->next_chunk = 0;
    if ((rc = scan_profiles(S, Q)) || (rc = scan_gpus(S)))
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

} /* namespace swgpu_cuda */
