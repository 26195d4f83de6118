/*
 * engine_batch.cu - the plan of the CUDA engine's scan_many: the queries
 * sorted by (configuration, length) and cut into batches of one
 * configuration, bounded in cells and score bytes; the jobs and passes of
 * a query-lane batch (k_qp); the buffer sizes of the largest batch.
 */
#include "engine.cuh"
#include "cuda/lanes.h"

namespace swgpu_cuda {

/* at most this many cells per batch (about 0.1 s on one H100): batches
 * short enough to pipeline, long enough to fill the GPU */
#define MQ_CELLS 5e11
/* at most this many bytes of scores per batch slot */
#define MQ_SCORE_BYTES ((size_t)256 << 20)
/* databases of at least this many subjects are scanned one query per batch:
 * 16 waves of work units of 64 subjects on 2 blocks of each of 132 SMs */
#define MQ_SOLO_SUBJECTS 270000

/*
 * The query-lane configuration (k_qp): one for every query, since a lane
 * wastes less than R columns per query whatever the tile width; groups of
 * 8 at R = 32 in the carried form, measured fastest on whole searches
 * (bench/NOTES-gpu.md v21).  SWGPU_CUDA_CFG forces
 * another (none when it names a configuration without a lane instance).
 */
int qp_cfg(const cuda_state_t *S, swgpu_cu_cfg_t *c)
{
    const swgpu_cu_cfg_t def = {SWGPU_CU_QP_G, 32, 4};
    *c = S->cfg_env.G ? S->cfg_env : def;
    return swgpu__cu_qp_has(*c);
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

void sort_keys(mkey_t *keys, size_t nmq, size_t *ord)
{
    qsort(keys, nmq, sizeof *keys, cmp_mkey);
    for (size_t j = 0; j < nmq; j++)
        ord[j] = keys[j].i;
}

int batch_key(swgpu_cu_cfg_t c, int qp_on, size_t qlen)
{
    return (qp_on ? QP_KEY : cfg_index(c) * 2) + (qlen > 1024);
}

/* most queries in a batch (streaming: the GPU's score rows stay small
 * beside the chunks, and the host holds the whole database's scores of
 * every query) */
static size_t batch_cap(const cuda_state_t *S, size_t maxn, int qp_on)
{
    size_t qcap = MQ_SCORE_BYTES / ((maxn ? maxn : 1) * sizeof(int32_t));
    if (S->streaming) {
        size_t c1 = stream_score_bytes(S) / ((maxn ? maxn : 1) * sizeof(int32_t));
        size_t c2 = (size_t)swgpu__gpu_score_bytes(S->db->total_res) /
                    ((S->db->n ? S->db->n : 1) * sizeof(int32_t));
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
    return qcap;
}

/* the sorted keys [j, nmq) cut into batches of one key each, at most qcap
 * queries: the next batch at bt (returns where it ends) */
static size_t cut_batch(const cuda_state_t *S, const mkey_t *keys, size_t j, size_t nmq,
                        size_t qcap, swgpu_cu_cfg_t qpc, mbatch_t *bt)
{
    const swgpu_cu_cfg_t lcfg = {32, 32, 0};
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
    return e;
}

/*
 * The batches with the longest queries first: their hits take the longest
 * to align, and they get the rest of the scan to do it in (cudasw20: 5,478
 * residues first, 144 last); the output does not depend on the order ...
 * except that the batch with the least work after its scan goes last,
 * since that work is the run's tail: handing each query's scores to the
 * sink (a pass over the database's scores per query) and its hits'
 * alignments (about 10 per query, on the alignment threads); q250synth's
 * last batch had been its 71 shortest queries.
 */
static void order_batches(const cuda_state_t *S, const mkey_t *keys, mbatch_t *bts, size_t nb)
{
    qsort(bts, nb, sizeof *bts, cmp_batch);
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

int make_batches(const cuda_state_t *S, const mkey_t *keys, size_t nmq, size_t maxn, int qp_on,
                 swgpu_cu_cfg_t qpc, mbatch_t **bts, size_t *nb)
{
    const size_t qcap = batch_cap(S, maxn, qp_on);
    *bts = (mbatch_t *)calloc(nmq, sizeof **bts);
    if (!*bts)
        return swgpu__fail(SWGPU_ENOMEM, "cuda engine: out of memory for %zu batches", nmq);
    for (size_t j = 0; j < nmq;)
        j = cut_batch(S, keys, j, nmq, qcap, qpc, &(*bts)[(*nb)++]);
    order_batches(S, keys, *bts, *nb);
    return SWGPU_OK;
}

int batch_sizes(const cuda_state_t *S, const mq_in_t *in, mbatch_t *bts, size_t nb,
                msizes_t *z)
{
    int rc;
    memset(z, 0, sizeof *z);
    for (size_t b = 0; b < nb; b++) {
        size_t q_ = 0, p_ = 0, pl = 0;
        for (size_t j = 0; j < bts[b].n; j++) {
            const swgpu__query_t *Q = &in->q[in->ord[bts[b].first + j]];
            const int ql = (int)Q->len;
            q_ += align16(qblob_bytes(Q));
            if (!bts[b].qp)
                p_ += align16(swgpu__cu_dpx_prof_bytes(bts[b].cfg, ql));
            if (bts[b].use_long)
                pl += align16(swgpu__cu_dpx_prof_bytes(bts[b].cfgl, ql));
        }
        if (bts[b].qp) {
            uint32_t nj = 0, np = 0;
            if ((rc = qp_plan(S, NULL, NULL, &bts[b], in, &nj, &np, NULL, NULL, NULL, NULL)))
                return rc;
            bts[b].qp_njobs = nj;
            bts[b].qp_npass = np;
            const size_t tb = qp_bytes(nj, np, bts[b].n, NULL);
            const size_t pb = np * swgpu__cu_qp_pass_bytes(bts[b].cfg);
            if (tb > z->qpt) z->qpt = tb;
            if (pb > z->qprof) z->qprof = pb;
        }
        if (q_ > z->q) z->q = q_;
        if (p_ > z->prof) z->prof = p_;
        if (pl > z->profl) z->profl = pl;
        if (bts[b].n > z->nq) z->nq = bts[b].n;
    }
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

int qp_plan(const cuda_state_t *S, const gpu_t *d, const mslot_t *m, const mbatch_t *bt,
                   const mq_in_t *in, uint32_t *njobs, uint32_t *npass, swgpu_cu_job_t *jobs,
                   swgpu_cu_pass_t *pass, swgpu_cu_pbuild_t *pb, swgpu_cu_qpq_t *qt)
{
    const int G = bt->cfg.G, R = bt->cfg.R, NG = SWGPU_CU_DPX_THREADS / G;
    const size_t n = bt->n;
    /* the subjects a GPU scans at once: its share, or a streamed chunk */
    uint64_t nsub = (S->db->n + (uint64_t)S->ndev - 1) / (uint64_t)S->ndev;
    if (S->streaming) {
        nsub = 0;
        for (int c = 0; c < S->nchunks; c++)
            if (S->chunks[c].n > nsub)
                nsub = S->chunks[c].n;
    }
    const uint64_t per_job = (nsub + NG - 1) / NG;
    const uint64_t want = S->qp_units ? S->qp_units : QP_UNITS;
    uint64_t J = per_job ? (want + per_job - 1) / per_job : 1;
    if (J > n / 2)
        J = n / 2;
    if (J < 1)
        J = 1;
    qp_item_t *it = (qp_item_t *)malloc(n * sizeof *it);
    uint64_t *load = (uint64_t *)calloc(2 * J, sizeof *load);
    uint32_t *sl = (uint32_t *)malloc(2 * n * sizeof *sl); /* slots, then lanes */
    if (!it || !load || !sl) {
        free(it);
        free(load);
        free(sl);
        return swgpu__fail(SWGPU_ENOMEM, "cuda engine: out of memory for a plan of %zu queries", n);
    }
    for (size_t i = 0; i < n; i++) {
        const size_t ql = in->q[in->ord[bt->first + i]].len;
        it[i].q = (uint32_t)i;
        it[i].slots = (uint32_t)((ql + R - 1) / R);
    }
    qsort(it, n, sizeof *it, cmp_qp_item);
    for (size_t i = 0; i < n; i++)
        sl[i] = it[i].slots;
    uint64_t np_all = 0;
    /* SWGPU_CUDA_QP_PACK=0: the least-loaded rule alone */
    const int rc = swgpu__qp_pack(sl, n, (uint32_t)J, (uint32_t)G, !S->qp_greedy, sl + n, &np_all);
    if (rc) {
        free(it);
        free(load);
        free(sl);
        return rc;
    }
    for (size_t i = 0; i < n; i++) {
        it[i].lane = sl[n + i];
        load[it[i].lane] += it[i].slots;
    }
    free(sl);
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
size_t qp_bytes(uint32_t njobs, uint32_t npass, size_t nq, size_t off[3])
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
int short_occupancy(const mbatch_t *bt, int *per)
{
    return bt->qp ? swgpu__cu_qp_occupancy(bt->cfg, per) : swgpu__cu_dpx_occupancy(bt->cfg, per);
}

} /* namespace swgpu_cuda */
