/*
 * engine_many.cu - scan_many of the CUDA engine (cuda_scan_many): many
 * queries against a database, by the many-query kernels.
 *
 * Many queries (default family): the queries are sorted by (configuration,
 * length) and cut into batches of one configuration (engine_batch.cu); a
 * batch is one launch of the many-query kernel per GPU (work units =
 * subject unit x query: one query no longer has to fill the GPU, and the
 * per-query host work is done once per batch).  Resident database: batch
 * i+1 is enqueued on another slot's streams before batch i is finished
 * on the host (the overflow recompute, the hand-over of every query's
 * scores), so the GPU stays busy and the tail of one launch overlaps the
 * next.  Streaming: one batch at a time against every chunk, the GPUs
 * taking chunks from the shared counter.  The queries the many-query
 * kernels do not take are scanned one at a time by cuda_scan.
 */
#include "engine.cuh"

namespace swgpu_cuda {

static int mslot_setup(gpu_t *d, mslot_t *m)
{
    if (m->st)
        return SWGPU_OK;
    CU_CHECK(cudaSetDevice(d->id));
    CU_CHECK(cudaStreamCreateWithFlags(&m->st, cudaStreamNonBlocking));
    CU_CHECK(cudaStreamCreateWithFlags(&m->stl, cudaStreamNonBlocking));
    CU_CHECK(cudaEventCreateWithFlags(&m->ev_long, cudaEventDisableTiming));
    CU_CHECK(cudaEventCreateWithFlags(&m->ev_done, cudaEventDisableTiming));
    CU_CHECK(cudaEventCreateWithFlags(&m->ev_ovf, cudaEventDisableTiming));
    CU_CHECK(cudaEventCreate(&m->ev_tq));
    CU_CHECK(cudaEventCreate(&m->ev_tk));
    CU_CHECK(cudaEventCreate(&m->ev_tk1));
    CU_CHECK(cudaEventCreate(&m->ev_tdl));
    if (!d->ev_t0)
        CU_CHECK(cudaEventCreate(&d->ev_t0));
    DEV_ALLOC((void **)&m->d_ctr, 2 * sizeof(int));
    if (!d->sto) { /* recomputes first when a scan's kernels leave room */
        int least = 0, greatest = 0;
        CU_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
        CU_CHECK(cudaStreamCreateWithPriority(&d->sto, cudaStreamNonBlocking, greatest));
    }
    return SWGPU_OK;
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

/* the kernels of batch bt over chunk ch (in buffer B) into the scores of
 * slot m, with the query-lane tables of slot mt (streaming: slot 0's, made
 * once for every chunk): main configuration on st, long subjects on stl
 * (joined into st through ev_long); ctr: two work counters */
static int mq_launch(cuda_state_t *S, gpu_t *d, const mslot_t *m, const mslot_t *mt,
                     const mbatch_t *bt, const dbuf_t *B, const chunk_t *ch, cudaStream_t st,
                     cudaStream_t stl, cudaEvent_t ev_long, void *scr, void *scrl, int *ctr)
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
        const uint64_t units = bt->qp ? ((uint64_t)nshort + NG - 1) / NG * mt->qp_njobs
                                      : ((uint64_t)(nshort + 1) / 2 + NG - 1) / NG * nq;
        const int maxb = (per > 0 ? per : 1) * d->sms;
        const int blocks = (int)(units < (uint64_t)maxb ? units : (uint64_t)maxb);
        const uint32_t maxshort = S->h_len[ch->k0 + nshort - 1];
        if (bt->qp) {
            /* the lanes' maxima go to the short subjects' scores by atomicMax */
            CU_CHECK(cudaMemset2DAsync(m->d_sc, mt->qp_stride * sizeof(int32_t), 0,
                                       nshort * sizeof(int32_t), nq, st));
            rc = swgpu__cu_qp(&b, 0, nshort, (const swgpu_cu_job_t *)mt->d_qpt, mt->qp_njobs,
                              (const swgpu_cu_pass_t *)(mt->d_qpt + mt->qp_pass_off), m->d_sc,
                              mt->qp_stride,
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

/* slot m's buffers at the current scan's largest sizes (d->sz_*), and
 * pinned score rows for host_n queries (streaming: the largest batch;
 * resident: none, mq_download grows them once the batch's kernels run) */
static int slot_alloc(gpu_t *d, mslot_t *m, size_t host_n)
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
        (rc = hgrow_keep(d, (void **)&m->h_sc, &m->cap_hsc, host_n * d->sz_n * sizeof(int32_t))) ||
        (rc = dgrow((void **)&m->d_sc, &m->cap_sc, d->sz_nq * d->sz_n * sizeof(int32_t))))
        return rc;
    m->sized = 1;
    return SWGPU_OK;
}

/* enqueue batch bt's kernels on GPU d in slot m (resident chunk);
 * mq_download then queues its scores' copy */
static int mq_enqueue(cuda_state_t *S, gpu_t *d, mslot_t *m, const mbatch_t *bt,
                      const mq_in_t *in)
{
    const chunk_t *ch = &S->chunks[d->own];
    const int tr = swgpu__log_on(SWGPU_LOG_DEBUG); /* the batch's trace (mq_finish) */
    int rc;
    CU_CHECK(cudaSetDevice(d->id));
    if ((rc = mslot_setup(d, m)))
        return rc;
    if (tr) {
        if (d->t0_host == 0) {
            CU_CHECK(cudaEventRecord(d->ev_t0, m->st));
            d->t0_host = swgpu__now();
        }
        CU_CHECK(cudaEventRecord(m->ev_tq, m->st));
        m->tq_host = swgpu__now();
    }
    if ((rc = mq_prepare(S, d, m, bt, in, ch->n, m->st)))
        return rc;
    if (tr)
        CU_CHECK(cudaEventRecord(m->ev_tk, m->st));
    if ((rc = mq_launch(S, d, m, m, bt, &d->buf[0], ch, m->st, m->stl, m->ev_long, m->scr,
                        m->scrl, m->d_ctr)))
        return rc;
    if (tr)
        CU_CHECK(cudaEventRecord(m->ev_tk1, m->st));
    return SWGPU_OK;
}

/* the copy of batch bt's scores (mq_enqueue queued its kernels) into slot
 * m's pinned rows, grown here, while the kernels run: pinned memory is slow
 * to allocate (the 20 CUDASW++ queries x the 2.07 G-residue database: ten
 * rows of 5.7 M scores, 229 MB, ~0.1 s before the first kernel when it was
 * allocated first, bench/NOTES-gpu.md v33) */
static int mq_download(cuda_state_t *S, gpu_t *d, mslot_t *m, const mbatch_t *bt)
{
    const chunk_t *ch = &S->chunks[d->own];
    const size_t bytes = bt->n * ch->n * sizeof(int32_t);
    int rc;
    CU_CHECK(cudaSetDevice(d->id));
    if ((rc = hgrow_keep(d, (void **)&m->h_sc, &m->cap_hsc, bytes)))
        return rc;
    CU_CHECK(cudaMemcpyAsync(m->h_sc, m->d_sc, bytes, cudaMemcpyDeviceToHost, m->st));
    if (swgpu__log_on(SWGPU_LOG_DEBUG))
        CU_CHECK(cudaEventRecord(m->ev_tdl, m->st));
    CU_CHECK(cudaEventRecord(m->ev_done, m->st));
    return SWGPU_OK;
}

/* the trace of a finished batch in slot m (mq_enqueue recorded it): seconds
 * from the scan's first batch queued, on the GPU and on the host */
static int mq_trace(gpu_t *d, const mslot_t *m, const mbatch_t *bt)
{
    float q = 0, k = 0, k1 = 0, dl = 0;
    CU_CHECK(cudaEventElapsedTime(&q, d->ev_t0, m->ev_tq));
    CU_CHECK(cudaEventElapsedTime(&k, d->ev_t0, m->ev_tk));
    CU_CHECK(cudaEventElapsedTime(&k1, d->ev_t0, m->ev_tk1));
    CU_CHECK(cudaEventElapsedTime(&dl, d->ev_t0, m->ev_tdl));
    swgpu__log(SWGPU_LOG_DEBUG,
               "cuda: GPU %d batch of %zu queries (longest %d%s) in slot %d: queued %.3f s "
               "(host %.3f), kernels %.3f-%.3f (%.3f s), scores down %.3f, done on the host "
               "%.3f, %u saturated scores' recompute launched",
               (int)(d - d->S->dev), bt->n, bt->maxqlen, bt->qp ? ", lanes" : "", (int)(m - d->ms),
               q / 1e3,
               m->tq_host - d->t0_host, k / 1e3, k1 / 1e3, (k1 - k) / 1e3, dl / 1e3,
               swgpu__now() - d->t0_host, m->ovf_n);
    return SWGPU_OK;
}

/*
 * The scores of batch bt over chunk ch (in buffer B) are in m's h_sc (row
 * j at j * stride, downloaded) and d_sc: the saturated subjects of every
 * query are recomputed in 32 bits by ONE launch of the intra kernel on
 * stream sto (swgpu__cu_intra_pairs), their rows downloaded again into
 * h_sc, and m->ev_ovf recorded after them (m->ovf_pending; nothing is
 * launched when no score saturated).  Nothing waits for them here.  The
 * queries' intra profiles are built on the host from the blobs of slot mq
 * (h_q) and uploaded with the pairs: a recompute is then a single kernel
 * (with a profile kernel before it, the next batch's blocks, already
 * queued, took the multiprocessors between the two, bench/NOTES-gpu.md
 * v29), and sto has the highest priority, so that it runs as soon as the
 * kernels running when it was launched end.
 */
static int mq_overflows(cuda_state_t *S, gpu_t *d, mslot_t *m, const mslot_t *mq,
                        const mbatch_t *bt, const mq_in_t *in, const chunk_t *ch,
                        const dbuf_t *B, size_t stride)
{
    const size_t n = ch->n;
    const swgpu_cu_cfg_t icfg = {SWGPU_CU_INTRA_THREADS, SWGPU_CU_INTRA_R, 0};
    const int IW = SWGPU_CU_INTRA_THREADS * SWGPU_CU_INTRA_R;
    int rc, maxql = 0;
    uint64_t tot = 0;
    size_t nqo = 0, pbytes = 0;
    m->ovf_pending = 0;
    m->ovf_n = 0;
    /* each query's saturated scores (the pairs below visit only its rows) */
    uint32_t *cnt = (uint32_t *)malloc((bt->n ? bt->n : 1) * sizeof *cnt);
    if (!cnt)
        return swgpu__fail(SWGPU_ENOMEM, "cuda engine: out of memory for %zu queries", bt->n);
    for (size_t j = 0; j < bt->n; j++) {
        const swgpu__query_t *Q = &in->q[in->ord[bt->first + j]];
        const int32_t sat = qsat_of(S, Q), *row = m->h_sc + j * stride;
        uint32_t nov = 0;
        for (size_t k = 0; k < n; k++)
            nov += row[k] >= sat;
        cnt[j] = nov;
        if (nov) {
            tot += nov;
            nqo++;
            pbytes += align16(swgpu__cu_dpx_prof_bytes(icfg, (int)Q->len));
            if ((int)Q->len > maxql)
                maxql = (int)Q->len;
        }
    }
    if (tot == 0 || tot > UINT32_MAX) {
        free(cnt);
        return tot == 0 ? SWGPU_OK
                        : swgpu__fail(SWGPU_ERANGE, "cuda engine: %llu saturated scores in one "
                                      "batch", (unsigned long long)tot);
    }
    /* staging: the profiles, the query table, the pairs */
    const size_t toff = pbytes, poff = toff + align16(nqo * sizeof(swgpu_cu_mq_t));
    const size_t bytes = poff + tot * sizeof(uint2);
    const int blocks = (int)(tot < (uint64_t)d->blocks_intra ? tot : (uint64_t)d->blocks_intra);
    if ((rc = hgrow_keep(d, (void **)&m->h_ovf, &m->cap_hovf, bytes)) ||
        (rc = dgrow((void **)&m->d_ovf, &m->cap_dovf, bytes)) ||
        (maxql > IW &&
         (rc = dgrow(&d->scr_intra, &d->cap_scr_intra,
                     swgpu__cu_intra_scratch(maxql, ch->maxlen, blocks))))) {
        free(cnt);
        return rc;
    }
    swgpu_cu_mq_t *qt = (swgpu_cu_mq_t *)(m->h_ovf + toff);
    uint2 *pairs = (uint2 *)(m->h_ovf + poff);
    size_t qo = 0, po = 0;
    uint32_t e = 0, c = 0;
    for (size_t j = 0; j < bt->n; j++) {
        const swgpu__query_t *Q = &in->q[in->ord[bt->first + j]];
        const int ql = (int)Q->len;
        const int32_t sat = qsat_of(S, Q), *row = m->h_sc + j * stride;
        if (cnt[j]) {
            for (uint32_t k = 0; k < (uint32_t)n; k++)
                if (row[k] >= sat)
                    pairs[c++] = make_uint2(k, e);
            swgpu__cu_dpx_prof(icfg, blob_q(Q, mq->h_q + qo), ql,
                               blob_mat(Q, mq->h_q + qo, S->mat), m->h_ovf + po);
            qt[e].tprof = (const int16_t *)(m->d_ovf + po);
            qt[e].scores = m->d_sc + j * stride;
            qt[e].ntiles = (ql + IW - 1) / IW;
            qt[e].pad = 0;
            po += align16(swgpu__cu_dpx_prof_bytes(icfg, ql));
            e++;
        }
        qo += align16(qblob_bytes(Q));
    }
    free(cnt);
    CU_CHECK(cudaMemcpyAsync(m->d_ovf, m->h_ovf, bytes, cudaMemcpyHostToDevice, d->sto));
    swgpu_cu_batch_t b = {B->res, B->woff, B->len, ch->n, B->pres, B->poff};
    if ((rc = swgpu__cu_intra_pairs(&b, (const uint2 *)(m->d_ovf + poff), (uint32_t)tot,
                                    (const swgpu_cu_mq_t *)(m->d_ovf + toff), S->oe, S->ext,
                                    blocks, maxql > IW ? d->scr_intra : NULL, ch->maxlen,
                                    d->d_ctr + 2, d->sto)))
        return rc;
    for (uint32_t x = 0; x < e; x++) { /* the recomputed rows back */
        const size_t at = (size_t)(qt[x].scores - m->d_sc);
        CU_CHECK(cudaMemcpyAsync(m->h_sc + at, m->d_sc + at, n * sizeof(int32_t),
                                 cudaMemcpyDeviceToHost, d->sto));
    }
    CU_CHECK(cudaEventRecord(m->ev_ovf, d->sto));
    m->ovf_pending = 1;
    m->ovf_n = (uint32_t)tot;
    d->overflows += tot;
    return SWGPU_OK;
}

/* wait for batch bt in slot m of GPU d (resident), then its overflows */
static int mq_finish(cuda_state_t *S, gpu_t *d, mslot_t *m, const mbatch_t *bt,
                     const mq_in_t *in)
{
    const chunk_t *ch = &S->chunks[d->own];
    CU_CHECK(cudaSetDevice(d->id));
    CU_CHECK(cudaEventSynchronize(m->ev_done));
    int rc = mq_overflows(S, d, m, m, bt, in, ch, &d->buf[0], ch->n);
    if (rc == SWGPU_OK && d->t0_host != 0 && swgpu__log_on(SWGPU_LOG_DEBUG))
        rc = mq_trace(d, m, bt);
    return rc;
}

/* streaming: batch bt against every chunk this GPU takes from the shared
 * counter (as dev_scan: the next chunk uploads while one computes), the
 * scores of chunk c copied to asmb[j * db->n + c's first subject ...];
 * the profiles (a query-lane batch: its plan and tables) are built once in
 * slot 0, slot b holds buffer b's scores */
static int mq_stream_dev(cuda_state_t *S, gpu_t *d, const mbatch_t *bt, const mq_in_t *in,
                         int32_t *asmb, size_t maxn)
{
    const size_t nq = bt->n, ntab = (bt->use_long ? 2 : 1) * nq;
    mslot_t *m0 = &d->ms[0], *m1 = &d->ms[1];
    int rc, pending[NBUF] = {-1, -1};
    CU_CHECK(cudaSetDevice(d->id));
    if ((rc = mslot_setup(d, m0)) || (rc = mslot_setup(d, m1)) ||
        (rc = mq_prepare(S, d, m0, bt, in, maxn, d->st)) ||
        (rc = hgrow((void **)&m0->h_sc, &m0->cap_hsc, nq * maxn * sizeof(int32_t))) ||
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
            if (m->ovf_pending)
                CU_CHECK(cudaEventSynchronize(m->ev_ovf));
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
        if ((rc = upload_chunk(S, &d->buf[b], c, d->cst, 0)))
            return rc;
        CU_CHECK(cudaEventRecord(d->ev_copied[b], d->cst));
        CU_CHECK(cudaStreamWaitEvent(d->st, d->ev_copied[b], 0));
        if ((rc = mq_launch(S, d, m, m0, bt, &d->buf[b], &S->chunks[c], d->st, d->stl,
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

/* GPU i's share of a streamed batch (a swgpu__par_for body) */
static void mq_stream_one(void *arg, size_t i)
{
    mqs_arg_t *a = (mqs_arg_t *)arg + i;
    a->rc = mq_stream_dev(a->S, a->d, a->bt, a->in, a->asmb, a->maxn);
    if (a->rc) /* last_error is per thread */
        snprintf(a->msg, sizeof a->msg, "%s", swgpu_last_error());
}

/* every query's checks before the first is scored */
static int check_queries(size_t nq, const swgpu__query_t *q)
{
    int rc;
    for (size_t i = 0; i < nq; i++) {
        if (q[i].len > (size_t)1 << 30)
            return swgpu__fail(SWGPU_ERANGE, "backend cuda: query %zu of %zu residues", i + 1,
                               q[i].len);
        if ((rc = check_query(&q[i], i)))
            return rc;
    }
    return SWGPU_OK;
}

/* the queries the many-query kernel takes, with their keys in keys[0 ..
 * *nmq); the others (empty, other kernel families, a configuration without
 * a many-query instance, a PSSM for the 32-bit kernel) scanned one at a
 * time through cuda_scan, their scores in row */
static int scan_singles(cuda_state_t *S, size_t nq, const swgpu__query_t *q, int qp_on,
                        mkey_t *keys, size_t *nmq, int32_t *row, swgpu_scan_sink_t sink,
                        void *user, swgpu_scan_stats_t *st)
{
    const swgpu_cu_cfg_t lcfg = {32, 32, 0};
    const int many = S->fam == FAM_DPX && !S->no_many;
    int rc = SWGPU_OK;
    for (size_t i = 0; i < nq; i++) {
        const size_t ql = q[i].len;
        swgpu_cu_cfg_t c = main_cfg(S, ql);
        int ok = many && ql > 0 && S->db->n > 0 && swgpu__cu_dpx_has_mq(c) &&
                 swgpu__cu_dpx_has_mq(lcfg) && q_use16(S, &q[i]);
        if (ok) {
            keys[*nmq].key = batch_key(c, qp_on, ql);
            keys[*nmq].len = ql;
            keys[*nmq].i = i;
            (*nmq)++;
        } else {
            rc = cuda_scan(S, &q[i], row, st);
            if (rc == SWGPU_OK)
                rc = sink(user, i, row);
            if (rc < 0)
                return rc;
        }
    }
    return rc;
}

/* the boundary scratch GPU d needs for the batches (main and long
 * configuration; cudaFree inside the scan would wait for the GPU) */
static int gpu_scratch(const cuda_state_t *S, const gpu_t *d, const mbatch_t *bts, size_t nb,
                       size_t *sb, size_t *sbl)
{
    int rc;
    *sb = *sbl = 0;
    for (int c = 0; c < S->nchunks; c++) {
        if (!S->streaming && c != d->own)
            continue;
        const chunk_t *ch = &S->chunks[c];
        for (size_t b = 0; b < nb; b++) {
            int per = 0;
            const uint32_t nshort = bts[b].use_long ? ch->nshort : ch->n;
            if (nshort) {
                if ((rc = short_occupancy(&bts[b], &per)))
                    return rc;
                size_t x = bts[b].qp ? swgpu__cu_qp_scratch(bts[b].cfg,
                                           S->h_len[ch->k0 + nshort - 1],
                                           (per > 0 ? per : 1) * d->sms) :
                           swgpu__cu_dpx_scratch(bts[b].cfg, bts[b].maxqlen,
                                                 S->h_len[ch->k0 + nshort - 1],
                                                 (per > 0 ? per : 1) * d->sms);
                if (x > *sb) *sb = x;
            }
            if (bts[b].use_long && nshort < ch->n) {
                if ((rc = swgpu__cu_dpx_occupancy(bts[b].cfgl, &per)))
                    return rc;
                size_t x = swgpu__cu_dpx_scratch(bts[b].cfgl, bts[b].maxqlen, ch->maxlen,
                                                 (per > 0 ? per : 1) * d->sms);
                if (x > *sbl) *sbl = x;
            }
        }
    }
    return SWGPU_OK;
}

/* the slots' buffers at the largest batch's sizes z (slot_alloc), except
 * their pinned score rows, which are slow to allocate: resident, they are
 * grown with hgrow_keep once each batch's kernels are queued (mq_download;
 * cudaFree / cudaFreeHost would wait for the kernels).  Resident: slot 0
 * now, the others when their first batch is enqueued (the GPU computes the
 * first batch meanwhile); streaming: both now, their score rows for every
 * batch */
static int size_slots(cuda_state_t *S, const mbatch_t *bts, size_t nb, size_t maxn,
                      const msizes_t *z)
{
    int rc;
    for (int g = 0; g < S->ndev; g++) {
        gpu_t *d = &S->dev[g];
        if (!S->streaming && d->own < 0)
            continue;
        const size_t n = S->streaming ? maxn : S->chunks[d->own].n;
        if (cudaSetDevice(d->id) != cudaSuccess)
            return swgpu__fail(SWGPU_EDEVICE, "cudaSetDevice");
        if ((rc = gpu_scratch(S, d, bts, nb, &d->sz_scr, &d->sz_scrl)))
            return rc;
        d->sz_q = z->q;
        d->sz_prof = z->prof;
        d->sz_profl = z->profl;
        d->sz_qpt = z->qpt;
        d->sz_qprof = z->qprof;
        d->sz_nq = z->nq;
        d->sz_n = n;
        for (int k = 0; k < NMB; k++) {
            d->ms[k].sized = 0;
            if ((k == 0 || (S->streaming && k < 2)) &&
                (rc = slot_alloc(d, &d->ms[k], S->streaming ? z->nq : 0)))
                return rc;
        }
    }
    return SWGPU_OK;
}

/* batch bt's rows (row j of query in->ord[bt->first + j] at rows0 + j *
 * stride) to ahead, when there is one and the batch has several queries */
static int offer_ahead(const mq_in_t *in, const mbatch_t *bt, const int32_t *rows0,
                       size_t stride, swgpu_scan_ahead_t ahead, void *user)
{
    if (!ahead || bt->n < 2)
        return SWGPU_OK;
    size_t *idx = (size_t *)malloc(bt->n * sizeof *idx);
    const int32_t **rows = (const int32_t **)malloc(bt->n * sizeof *rows);
    int rc = SWGPU_OK;
    if (!idx || !rows) {
        rc = swgpu__fail(SWGPU_ENOMEM, "cuda engine: out of memory for %zu queries", bt->n);
    } else {
        for (size_t j = 0; j < bt->n; j++) {
            idx[j] = in->ord[bt->first + j];
            rows[j] = rows0 + j * stride;
        }
        rc = ahead(user, bt->n, idx, rows);
    }
    free(idx);
    free(rows);
    return rc;
}

/* streaming: one batch at a time, every GPU takes chunks until none is
 * left; asmb holds the batch's scores of the whole database */
static int run_streamed(cuda_state_t *S, const mq_in_t *in, const mbatch_t *bts, size_t nb,
                        size_t maxn, size_t mnq, swgpu_scan_sink_t sink,
                        swgpu_scan_ahead_t ahead, void *user, swgpu_scan_stats_t *st)
{
    int rc = SWGPU_OK;
    int32_t *asmb = (int32_t *)malloc(mnq * S->db->n * sizeof *asmb);
    if (!asmb)
        return swgpu__fail(SWGPU_ENOMEM, "cuda engine: out of memory for %zu x %llu scores",
                           mnq, (unsigned long long)S->db->n);
    mqs_arg_t *args = (mqs_arg_t *)calloc(S->ndev, sizeof *args);
    if (!args) {
        free(asmb);
        return swgpu__fail(SWGPU_ENOMEM, "cuda engine: out of memory for %d GPU threads",
                           S->ndev);
    }
    for (size_t i = 0; i < nb && !rc; i++) {
        S->next_chunk = 0;
        for (int g = 0; g < S->ndev; g++)
            args[g] = (mqs_arg_t){S, &S->dev[g], &bts[i], in, asmb, maxn, 0, {0}};
        swgpu__par_for((size_t)S->ndev, S->ndev, mq_stream_one, args);
        for (int g = 0; g < S->ndev && !rc; g++)
            if (args[g].rc)
                rc = swgpu__fail(args[g].rc, "%s", args[g].msg);
        if (!rc)
            rc = offer_ahead(in, &bts[i], asmb, S->db->n, ahead, user);
        for (size_t j = 0; j < bts[i].n && !rc; j++) {
            const size_t qi = in->ord[bts[i].first + j];
            if (st)
                st->cells += (uint64_t)in->q[qi].len * S->db->total_res;
            rc = sink(user, qi, asmb + j * S->db->n);
        }
    }
    free(args);
    free(asmb);
    if (!rc && st)
        for (int g = 0; g < S->ndev; g++)
            st->overflows += S->dev[g].overflows;
    return rc;
}

/* the first GPU that holds a part of the database (resident) */
static int first_gpu(const cuda_state_t *S)
{
    for (int g = 0; g < S->ndev; g++)
        if (S->dev[g].own >= 0)
            return g;
    return 0;
}

/* resident, several GPUs: the scores of batch bt's query j (slot k of every
 * GPU holding a part of the database) into row, the whole database's */
static void assemble_row(const cuda_state_t *S, int k, size_t j, int32_t *row)
{
    for (int g = 0; g < S->ndev; g++) {
        const gpu_t *d = &S->dev[g];
        if (d->own < 0)
            continue;
        const chunk_t *ch = &S->chunks[d->own];
        memcpy(row + ch->k0, d->ms[k].h_sc + j * ch->n, ch->n * sizeof(int32_t));
    }
}

/* resident: batch bt (finished, in slot k of every GPU) to the sink, query
 * by query, its rows to ahead first.  Several GPUs' scores are assembled:
 * the whole batch's in bsc (bsc_n queries' room) when there is an ahead to
 * offer them to, else each query's in asmb as its turn comes */
static int hand_over(cuda_state_t *S, const mq_in_t *in, const mbatch_t *bt, int k,
                     int32_t *asmb, int32_t *bsc, size_t bsc_n, swgpu_scan_sink_t sink,
                     swgpu_scan_ahead_t ahead, void *user, swgpu_scan_stats_t *st)
{
    int rc;
    const double t = swgpu__now();
    const size_t n = S->db->n;
    const int whole = S->ndev > 1 && ahead && bt->n >= 2 && bt->n <= bsc_n;
    if (S->ndev == 1 && (rc = offer_ahead(in, bt, S->dev[0].ms[k].h_sc,
                                          S->chunks[S->dev[0].own].n, ahead, user)))
        return rc;
    if (whole) {
        for (size_t j = 0; j < bt->n; j++)
            assemble_row(S, k, j, bsc + j * n);
        if ((rc = offer_ahead(in, bt, bsc, n, ahead, user)))
            return rc;
    }
    for (size_t j = 0; j < bt->n; j++) {
        const int32_t *sc;
        if (S->ndev == 1) {
            sc = S->dev[0].ms[k].h_sc + j * S->chunks[S->dev[0].own].n;
        } else if (whole) {
            sc = bsc + j * n;
        } else {
            assemble_row(S, k, j, asmb);
            sc = asmb;
        }
        const size_t qi = in->ord[bt->first + j];
        if (st)
            st->cells += (uint64_t)in->q[qi].len * S->db->total_res;
        if ((rc = sink(user, qi, sc)) < 0)
            return rc;
    }
    const double t0 = S->dev[first_gpu(S)].t0_host;
    if (t0 != 0 && swgpu__log_on(SWGPU_LOG_DEBUG))
        swgpu__log(SWGPU_LOG_DEBUG, "cuda: batch of %zu queries (longest %d) handed over "
                   "%.3f-%.3f s", bt->n, bt->maxqlen, t - t0, swgpu__now() - t0);
    return SWGPU_OK;
}

/* 1 when slot k's recompute (if any) has passed on every GPU; wait: wait
 * for it; < 0 a device error */
static int ovf_passed(cuda_state_t *S, int k, int wait)
{
    for (int g = 0; g < S->ndev; g++) {
        gpu_t *d = &S->dev[g];
        if (d->own < 0 || !d->ms[k].ovf_pending)
            continue;
        CU_CHECK(cudaSetDevice(d->id));
        if (wait) {
            CU_CHECK(cudaEventSynchronize(d->ms[k].ev_ovf));
        } else {
            const cudaError_t e = cudaEventQuery(d->ms[k].ev_ovf);
            if (e == cudaErrorNotReady)
                return 0;
            CU_CHECK(e);
        }
    }
    return 1;
}

/* *k: a free slot (holder -1) that every GPU has, or could allocate, for
 * batch bt; -1 when none.  Slots 0 and 1 serve every scan; the others only
 * while batches wait for their recomputes, and one that cannot be
 * allocated is not offered again (*nslots shrinks) */
static int free_slot(cuda_state_t *S, const mbatch_t *bt, const long *holder, int *nslots, int *k)
{
    *k = -1;
    for (int x = 0; x < *nslots; x++) {
        if (holder[x] >= 0)
            continue;
        for (int g = 0; g < S->ndev; g++) {
            gpu_t *d = &S->dev[g];
            if (d->own < 0 || d->ms[x].sized)
                continue;
            const int rc = slot_alloc(d, &d->ms[x], 0);
            if (rc == SWGPU_ENOMEM && x >= 2) {
                cudaGetLastError();
                *nslots = x;
                return SWGPU_OK;
            }
            if (rc)
                return rc;
        }
        *k = x;
        return SWGPU_OK;
    }
    return SWGPU_OK;
}

/*
 * Resident: every batch is enqueued on every GPU before the one before it
 * is finished (its kernels waited for, its saturated scores' recompute
 * launched), so that the GPU always holds the next batch.  A batch whose
 * recompute was launched keeps its slot until the recompute has passed and
 * is handed over then (the recompute waits for the kernels that were
 * running when it was launched: a whole batch); the others are handed over
 * at once.  With two slots and the hand-over waiting for the recompute,
 * the next batch's enqueue waited too, and the GPU idled for the
 * recompute, the hand-over and the next batch's set-up: 0.15 s of the
 * 2,000 UniProt queries' 1.8 s scan (bench/NOTES-gpu.md v29).
 */
static int run_resident(cuda_state_t *S, const mq_in_t *in, const mbatch_t *bts, size_t nb,
                        swgpu_scan_sink_t sink, swgpu_scan_ahead_t ahead, void *user,
                        swgpu_scan_stats_t *st)
{
    int rc = SWGPU_OK, nslots = NMB;
    long holder[NMB];
    int32_t *asmb = NULL, *bsc = NULL;
    size_t bsc_n = 0;
    int *slot_of = (int *)malloc((nb ? nb : 1) * sizeof *slot_of);
    size_t *wait = (size_t *)malloc((nb ? nb : 1) * sizeof *wait); /* batches waiting, in order */
    size_t nwait = 0;
    for (int k = 0; k < NMB; k++)
        holder[k] = -1;
    if (!slot_of || !wait || (S->ndev > 1 && !(asmb = (int32_t *)malloc(S->db->n * sizeof *asmb)))) {
        rc = swgpu__fail(SWGPU_ENOMEM, "cuda engine: out of memory for %llu scores",
                         (unsigned long long)S->db->n);
        goto done;
    }
    /* several GPUs with an ahead: room for the largest batch's rows (at most
     * MQ_SCORE_BYTES a GPU); without it each query is assembled in turn and
     * none is offered ahead */
    if (S->ndev > 1 && ahead) {
        for (size_t i = 0; i < nb; i++)
            if (bts[i].n > bsc_n)
                bsc_n = bts[i].n;
        if (bsc_n >= 2 && !(bsc = (int32_t *)malloc(bsc_n * S->db->n * sizeof *bsc))) {
            swgpu__log(SWGPU_LOG_DEBUG, "cuda engine: no room for a batch of %zu x %llu scores: "
                       "its queries' rows are not offered ahead", bsc_n,
                       (unsigned long long)S->db->n);
            bsc_n = 0;
        }
    }
    for (size_t i = 0; i <= nb; i++) {
        if (i < nb) {
            int k = -1;
            /* a free slot; else the longest-waiting batch is handed over first */
            for (;;) {
                if ((rc = free_slot(S, &bts[i], holder, &nslots, &k)))
                    goto done;
                if (k >= 0)
                    break;
                if (nwait == 0) {
                    rc = swgpu__fail(SWGPU_EDEVICE, "cuda engine: no batch slot free");
                    goto done;
                }
                const size_t p = wait[0];
                memmove(wait, wait + 1, --nwait * sizeof *wait);
                if ((rc = ovf_passed(S, slot_of[p], 1)) < 0 ||
                    (rc = hand_over(S, in, &bts[p], slot_of[p], asmb, bsc, bsc_n, sink, ahead,
                                    user, st)))
                    goto done;
                holder[slot_of[p]] = -1;
            }
            /* every GPU's kernels first, then their copies */
            for (int g = 0; g < S->ndev; g++)
                if (S->dev[g].own >= 0 &&
                    (rc = mq_enqueue(S, &S->dev[g], &S->dev[g].ms[k], &bts[i], in)))
                    goto done;
            for (int g = 0; g < S->ndev; g++)
                if (S->dev[g].own >= 0 &&
                    (rc = mq_download(S, &S->dev[g], &S->dev[g].ms[k], &bts[i])))
                    goto done;
            holder[k] = (long)i;
            slot_of[i] = k;
        }
        if (i >= 1) {
            const size_t p = i - 1;
            const int k = slot_of[p];
            int pending = 0;
            for (int g = 0; g < S->ndev; g++) {
                if (S->dev[g].own < 0)
                    continue;
                if ((rc = mq_finish(S, &S->dev[g], &S->dev[g].ms[k], &bts[p], in)))
                    goto done;
                pending |= S->dev[g].ms[k].ovf_pending;
            }
            if (pending) {
                wait[nwait++] = p;
            } else {
                if ((rc = hand_over(S, in, &bts[p], k, asmb, bsc, bsc_n, sink, ahead, user, st)))
                    goto done;
                holder[k] = -1;
            }
        }
        /* the waiting batches whose recomputes have passed (the last step:
         * all of them, waited for) */
        for (size_t w = 0; w < nwait;) {
            const size_t p = wait[w];
            if ((rc = ovf_passed(S, slot_of[p], i == nb)) < 0)
                goto done;
            if (rc == 0) {
                w++;
                continue;
            }
            if ((rc = hand_over(S, in, &bts[p], slot_of[p], asmb, bsc, bsc_n, sink, ahead, user,
                                st)))
                goto done;
            holder[slot_of[p]] = -1;
            memmove(wait + w, wait + w + 1, (--nwait - w) * sizeof *wait);
        }
    }
    if (st)
        for (int g = 0; g < S->ndev; g++)
            st->overflows += S->dev[g].overflows;
done:
    free(asmb);
    free(bsc);
    free(slot_of);
    free(wait);
    return rc;
}

int cuda_scan_many(void *state, size_t nq, const swgpu__query_t *q, swgpu_scan_sink_t sink,
                   swgpu_scan_ahead_t ahead, void *user, swgpu_scan_stats_t *st)
{
    cuda_state_t *S = (cuda_state_t *)state;
    int rc = SWGPU_OK;
    int32_t *row = NULL;
    mkey_t *keys = NULL;
    size_t *ord = NULL;
    mbatch_t *bts = NULL;
    size_t nb = 0, nmq = 0;
    msizes_t z;
    swgpu_cu_cfg_t qpc = {0, 0, 0};
    const int qp_on = S->fam == FAM_DPX && !S->no_many && !S->no_qp && qp_cfg(S, &qpc);
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
    if ((rc = check_queries(nq, q)) ||
        (rc = scan_singles(S, nq, q, qp_on, keys, &nmq, row, sink, user, st)) || nmq == 0)
        goto done;
    for (int i = 0; i < S->ndev; i++)
        S->dev[i].overflows = 0; /* cuda_scan above counted its own into st */
    sort_keys(keys, nmq, ord);
    {
        const mq_in_t in = {q, ord};
        if ((rc = make_batches(S, keys, nmq, maxn, qp_on, qpc, &bts, &nb)))
            goto done;
        swgpu__log(SWGPU_LOG_DEBUG, "cuda: %zu queries in %zu batch(es)", nmq, nb);
        if ((rc = batch_sizes(S, &in, bts, nb, &z)) || (rc = size_slots(S, bts, nb, maxn, &z)))
            goto done;
        swgpu__log(SWGPU_LOG_DEBUG, "cuda: batch buffers allocated");
        for (int g = 0; g < S->ndev; g++)
            S->dev[g].t0_host = 0; /* the trace starts again (mq_enqueue) */
        rc = S->streaming ? run_streamed(S, &in, bts, nb, maxn, z.nq, sink, ahead, user, st)
                          : run_resident(S, &in, bts, nb, sink, ahead, user, st);
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
    free(bts);
    return rc;
}

} /* namespace swgpu_cuda */
