/*
 * pairs.cu - best local score and end of many (query stretch, subject)
 * pairs on the GPU, by the tie rule of the reference (sw_ref.c): the end is
 * the first cell in target-major order (smallest subject position j, then
 * smallest query position i) whose H equals the best score.
 *
 * The searches use it for the ends of their hits (scores known from the
 * scan: the GPU's best must equal them) and the iterated search for the
 * scores of the included subjects against the query stretches their hit
 * leaves uncovered (psi.c), work the host did with one striped pass per
 * pair.  The GPU idles while the host aligns and builds PSSMs, and has the
 * cores for both.
 *
 * One warp per pair, 32-bit cells.  Lane l holds C = 8 query columns in
 * registers; the subject's residues stream down the lanes, lane l working
 * on subject row s - l at step s (a wavefront), the last column's H and F
 * of each row handed to the next lane with a shuffle.  A stretch longer
 * than 256 columns runs in segments of 256, the last lane writing each
 * row's boundary to global scratch for the next segment's first lane.
 * The profile is transposed, prof[r * stride + i] for subject residue r and
 * query position i (int16), so a lane loads its 8 scores of a row with one
 * 16-byte load; segments start at a multiple of 8, the columns before the
 * stretch act as the border (H 0, F -oe) and those after it are not
 * tracked.
 */
#include "common.cuh"

#include <pthread.h>

extern "C" int swgpu__cuda_device_count(void); /* engine.cu */
extern "C" int swgpu__cuda_device_of(int gpu);

#define PC 8             /* query columns per lane */
#define PSEG (32 * PC)   /* columns per segment */
#define PNEG (-(1 << 30))
#define PAIRS_WARPS 4    /* warps (pairs) per block */
/* profiles kept on the device between calls, at most (a call needing more
 * still gets them) */
#define PROF_KEEP ((size_t)256 << 20)
/* subject residues per launch, at most */
#define PAIRS_RES_MAX ((size_t)64 << 20)

typedef struct {
    uint64_t prof;   /* first int16 of the query's profile */
    uint64_t rprof;  /* its reversed profile (begin jobs) */
    uint64_t toff;   /* first residue of the subject */
    uint64_t boff;   /* boundary scratch (2 * tlen int32), segments > 1 only */
    uint32_t stride; /* profile row stride (int16) */
    uint32_t qoff, qlen, tlen;
    uint32_t qfull;  /* the query's length (begin jobs) */
    int32_t known;   /* begin jobs: the pair's best score */
    int32_t begin;   /* 1: the begin too, by the reverse pass */
    int32_t pad_;
} pjob_t;

#define POUT 5 /* int32 out per job: score, qend, tend, qbeg, tbeg */

__device__ __forceinline__ int imax(int a, int b)
{
    return a > b ? a : b;
}

/*
 * One pass of a warp over stretch [qo, qe) of profile P (stride) against
 * subject rows 0..tl-1 (T[j], or T[tl - 1 - j] when REV): the first cell in
 * target-major order holding the greatest tracked value, as (best, bj, bi),
 * bi an absolute column, the same in every lane.
 *   ANCH 0: the local pass of sw_fwd (tracks H, 0 floor, border 0).
 *   ANCH 1: the anchored reverse pass of ref_start_k (tracks M' = diag +
 *           score, no floor, borders -(go + k ge)); its greatest M' is the
 *           best score, and the first cell holding it the begin.
 */
template <int ANCH>
__device__ __forceinline__ void pass(const int16_t *__restrict__ P, uint32_t stride, int qo,
                                     int qe, const uint8_t *__restrict__ T, int tl, int rev,
                                     int32_t *__restrict__ bh, int32_t *__restrict__ bf, int oe,
                                     int ge, int lane, int &best, int &bj, int &bi)
{
    const int go = oe - ge;
    const int a0 = qo & ~7;
    const int nseg = (qe - a0 + PSEG - 1) / PSEG;
    best = ANCH ? PNEG : 0;
    bj = 0;
    bi = 0;
    for (int g = 0; g < nseg; g++) {
        const int cbase = a0 + PSEG * g + PC * lane;
        const int lo = min(max(qo - cbase, 0), PC), hi = min(max(qe - cbase, 0), PC);
        const int pa = cbase < (int)stride ? cbase : 0;
        const int first = g == 0, more = g + 1 < nseg;
        int H[PC], E[PC];
#pragma unroll
        for (int c = 0; c < PC; c++) { /* the border row */
            const int col = cbase + c;
            H[c] = ANCH && col >= qo ? -(go + (col - qo + 1) * ge) : 0;
            E[c] = PNEG;
        }
        int hout = 0, fout = -oe;
        int dprev = ANCH && cbase - 1 >= qo ? -(go + (cbase - qo) * ge) : 0;
        /* one row ahead: the profile of the lane's next row (v) and the
         * residue after it (r1), and lane 0's boundary of its next row */
#define TRES(x) ((x) < tl ? (int)T[rev ? tl - 1 - (x) : (x)] : 0)
        int4 v = *(const int4 *)(P + (size_t)TRES(0) * stride + pa);
        int r1 = TRES(1);
        int nbh = 0, nbf = 0;
        if (!first && lane == 0 && tl > 0) {
            nbh = bh[0];
            nbf = bf[0];
        }
        const int nsteps = tl + 31;
        for (int s = 0; s < nsteps; s++) {
            int hin = __shfl_up_sync(FULL_MASK, hout, 1);
            int fin = __shfl_up_sync(FULL_MASK, fout, 1);
            const int j = s - lane;
            /* the left border of row j (column 0) */
            const int b0 = ANCH ? -(go + (j + 1) * ge) : 0;
            if (lane == 0) {
                if (first) {
                    hin = b0;
                    fin = b0 - oe;
                } else if (j < tl) {
                    hin = nbh;
                    fin = nbf;
                    if (j + 1 < tl) {
                        nbh = bh[j + 1];
                        nbf = bf[j + 1];
                    }
                }
            }
            if (j >= 0 && j < tl) {
                int sc[PC];
                sc[0] = (int)(int16_t)(v.x & 0xffff);
                sc[1] = v.x >> 16;
                sc[2] = (int)(int16_t)(v.y & 0xffff);
                sc[3] = v.y >> 16;
                sc[4] = (int)(int16_t)(v.z & 0xffff);
                sc[5] = v.z >> 16;
                sc[6] = (int)(int16_t)(v.w & 0xffff);
                sc[7] = v.w >> 16;
                v = *(const int4 *)(P + (size_t)r1 * stride + pa); /* row j + 1 */
                r1 = TRES(j + 2);
                int diag = dprev, f = fin, rowmax = ANCH ? PNEG : 0, tr[PC];
#pragma unroll
                for (int c = 0; c < PC; c++) {
                    const int e = imax(E[c] - ge, H[c] - oe);
                    const int mm = diag + sc[c];
                    const int x = ANCH ? imax(mm, e) : imax(imax(mm, e), 0);
                    int h = imax(x, f);
                    f = imax(f - ge, x - oe);
                    diag = H[c];
                    if (c < lo) { /* before the stretch: the border column */
                        h = b0;
                        f = b0 - oe;
                    }
                    H[c] = h;
                    E[c] = e;
                    tr[c] = ANCH ? mm : h;
                    if (c >= lo && c < hi)
                        rowmax = imax(rowmax, tr[c]);
                }
                dprev = hin;
                hout = H[PC - 1];
                fout = f;
                if (rowmax > best || (rowmax == best && (ANCH || rowmax > 0) && j < bj)) {
                    int c = 0;
#pragma unroll
                    for (int k = PC - 1; k >= 0; k--)
                        if (k >= lo && k < hi && tr[k] == rowmax)
                            c = k;
                    best = rowmax;
                    bj = j;
                    bi = cbase + c;
                }
                if (more && lane == 31) {
                    bh[j] = hout;
                    bf[j] = fout;
                }
            }
        }
        __syncwarp();
#undef TRES
    }
    /* the warp's best: the greatest value, then the smallest j, then i */
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) {
        const int ob = __shfl_xor_sync(FULL_MASK, best, off);
        const int oj = __shfl_xor_sync(FULL_MASK, bj, off);
        const int oi = __shfl_xor_sync(FULL_MASK, bi, off);
        if (ob > best || (ob == best && (oj < bj || (oj == bj && oi < bi)))) {
            best = ob;
            bj = oj;
            bi = oi;
        }
    }
}

__global__ void __launch_bounds__(32 * PAIRS_WARPS)
k_pair_ends(const pjob_t *__restrict__ jobs, uint32_t n, const int16_t *__restrict__ prof,
            const uint8_t *__restrict__ tres, int32_t *__restrict__ scr,
            int32_t *__restrict__ out, int oe, int ge)
{
    const uint32_t w = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const int lane = threadIdx.x & 31;
    if (w >= n)
        return; /* the whole warp */
    const pjob_t jb = jobs[w];
    const uint8_t *T = tres + jb.toff;
    int32_t *bh = scr + jb.boff, *bf = bh + jb.tlen;
    const int qo = (int)jb.qoff;
    int best, bj, bi;
    pass<0>(prof + jb.prof, jb.stride, qo, qo + (int)jb.qlen, T, (int)jb.tlen, 0, bh, bf, oe, ge,
            lane, best, bj, bi);
    const int qend = best ? bi - qo + 1 : 0, tend = best ? bj + 1 : 0;
    int qbeg = -1, tbeg = -1;
    if (jb.begin && best > 0 && best == jb.known) {
        /* the begin: q[0, qend) and t[0, tend) reversed, anchored at the end;
         * in the reversed profile q[0, qend) is [qfull - qend, qfull) */
        int b2, j2, i2;
        const int ro = (int)jb.qfull - (qo + qend);
        pass<1>(prof + jb.rprof, jb.stride, ro, (int)jb.qfull, T, tend, 1, bh, bf, oe, ge, lane,
                b2, j2, i2);
        if (b2 == best) {
            qbeg = qo + qend - (i2 - ro + 1);
            tbeg = tend - (j2 + 1);
        }
    }
    if (lane == 0) {
        int32_t *o = out + POUT * (size_t)w;
        o[0] = best;
        o[1] = qend;
        o[2] = tend;
        o[3] = qbeg;
        o[4] = tbeg;
    }
}

/* ------------------------------------------------------------------ host */

typedef struct {
    const void *res, *rows; /* the query's identity */
    size_t len;
    int rev;                /* 1: the reversed query's */
    uint64_t off;           /* its profile in the device arena */
} pentry_t;

struct swgpu__cu_pairs {
    pthread_mutex_t lock;
    int dev;
    int oe, ge;
    int16_t mat[SWGPU_NCODES][SWGPU_NCODES];
    int smax;               /* the matrix's greatest score */
    cudaStream_t st;
    cudaEvent_t ev;
    /* profiles on the device: d_prof[0, used) holds those of ent[0, nent) */
    int16_t *d_prof;
    size_t cap_prof, used;
    pentry_t *ent;
    size_t nent, cap_ent, last;
    /* staging (pinned) and device buffers */
    int16_t *h_stage;
    size_t cap_stage;
    pjob_t *h_jobs, *d_jobs;
    size_t cap_hjobs, cap_djobs;
    uint8_t *h_t, *d_t;
    size_t cap_ht, cap_dt;
    int32_t *h_out, *d_out;
    size_t cap_hout, cap_dout;
    int32_t *d_scr;
    size_t cap_scr;
    cudaEvent_t ev0, ev1;   /* around the kernels of a call (timing) */
    double last_gpu;        /* their time in the last call */
    /* totals for the log (swgpu__cu_pairs_destroy) */
    size_t calls, pairs;
    uint64_t cells;
    double seconds, gpu_seconds;
};

typedef struct {
    uint64_t cost;
    size_t k;
} pcost_t;

static int cmp_cost_desc(const void *a, const void *b)
{
    const pcost_t *x = (const pcost_t *)a, *y = (const pcost_t *)b;
    if (x->cost != y->cost)
        return x->cost > y->cost ? -1 : 1;
    return (x->k > y->k) - (x->k < y->k);
}

/* device buffer of at least bytes, allocated and freed in stream order
 * (cudaFree would wait for the whole device: the scan's kernels) */
static int dgrow(void **p, size_t *cap, size_t bytes, cudaStream_t st)
{
    if (bytes <= *cap)
        return SWGPU_OK;
    size_t c = *cap ? *cap : 4096;
    while (c < bytes)
        c *= 2;
    if (*p)
        cudaFreeAsync(*p, st);
    *p = NULL;
    *cap = 0;
    CU_CHECK(cudaMallocAsync(p, c, st));
    *cap = c;
    return SWGPU_OK;
}

/* pinned host buffer of at least bytes; keep: bytes of the old content to
 * keep */
static int hgrow_keep(void **p, size_t *cap, size_t bytes, size_t keep)
{
    if (bytes <= *cap)
        return SWGPU_OK;
    size_t c = *cap ? *cap : 4096;
    void *n = NULL;
    while (c < bytes)
        c *= 2;
    CU_CHECK(cudaMallocHost(&n, c));
    if (*p) {
        if (keep)
            memcpy(n, *p, keep);
        cudaFreeHost(*p);
    }
    *p = n;
    *cap = c;
    return SWGPU_OK;
}

static int hgrow(void **p, size_t *cap, size_t bytes)
{
    return hgrow_keep(p, cap, bytes, 0);
}

extern "C" void swgpu__cu_pairs_destroy(swgpu__cu_pairs_t *P)
{
    if (!P)
        return;
    if (P->calls)
        swgpu__log(SWGPU_LOG_DEBUG, "GPU pair ends: %zu calls, %zu pairs, %.3g cells, %.3f s "
                   "(kernels %.3f s)", P->calls, P->pairs, (double)P->cells, P->seconds,
                   P->gpu_seconds);
    if (cudaSetDevice(P->dev) == cudaSuccess) {
        if (P->st) {
            void *d[] = {P->d_prof, P->d_jobs, P->d_t, P->d_out, P->d_scr};
            for (size_t k = 0; k < sizeof d / sizeof *d; k++)
                if (d[k])
                    cudaFreeAsync(d[k], P->st);
            cudaStreamSynchronize(P->st);
        }
        cudaFreeHost(P->h_stage);
        cudaFreeHost(P->h_jobs);
        cudaFreeHost(P->h_t);
        cudaFreeHost(P->h_out);
        if (P->ev)
            cudaEventDestroy(P->ev);
        if (P->ev0)
            cudaEventDestroy(P->ev0);
        if (P->ev1)
            cudaEventDestroy(P->ev1);
        if (P->st)
            cudaStreamDestroy(P->st);
    }
    cudaGetLastError();
    pthread_mutex_destroy(&P->lock);
    free(P->ent);
    free(P);
}

extern "C" int swgpu__cu_pairs_create(const swgpu_matrix_t *m, int gap_open, int gap_extend,
                                      swgpu__cu_pairs_t **out)
{
    *out = NULL;
    if (!m || gap_open < 0 || gap_extend < 0 || gap_open > (1 << 20) || gap_extend > (1 << 20))
        return swgpu__fail(SWGPU_EINVAL, "GPU pair ends: no matrix or gap costs out of range");
    if (m->min < -32768 || m->max > 32767)
        return swgpu__fail(SWGPU_ERANGE, "GPU pair ends: matrix %s scores %d..%d outside int16",
                           m->name, (int)m->min, (int)m->max);
    int n = swgpu__cuda_device_count();
    if (n < 0)
        return n;
    if (n < 1)
        return swgpu__fail(SWGPU_EDEVICE, "GPU pair ends: no CUDA device");
    swgpu__cu_pairs_t *P = (swgpu__cu_pairs_t *)calloc(1, sizeof *P);
    if (!P)
        return swgpu__fail(SWGPU_ENOMEM, "GPU pair ends: out of memory");
    pthread_mutex_init(&P->lock, NULL);
    P->dev = swgpu__cuda_device_of(0);
    P->oe = gap_open + gap_extend;
    P->ge = gap_extend;
    P->smax = m->max;
    for (int a = 0; a < SWGPU_NCODES; a++)
        for (int b = 0; b < SWGPU_NCODES; b++)
            P->mat[a][b] = (int16_t)m->s[a][b];
    int rc = SWGPU_OK, lo = 0, hi = 0;
    CU_GO(cudaSetDevice(P->dev));
    CU_GO(cudaDeviceGetStreamPriorityRange(&lo, &hi));
    /* ahead of the scan's kernels when both wait for the GPU */
    CU_GO(cudaStreamCreateWithPriority(&P->st, cudaStreamNonBlocking, hi));
    CU_GO(cudaEventCreateWithFlags(&P->ev, cudaEventBlockingSync | cudaEventDisableTiming));
    CU_GO(cudaEventCreate(&P->ev0));
    CU_GO(cudaEventCreate(&P->ev1));
    /* room for a typical call: growing a pinned buffer later may wait for
     * the device */
    if ((rc = hgrow((void **)&P->h_t, &P->cap_ht, (size_t)16 << 20)) < 0 ||
        (rc = hgrow((void **)&P->h_jobs, &P->cap_hjobs, 32768 * sizeof(pjob_t))) < 0 ||
        (rc = hgrow((void **)&P->h_out, &P->cap_hout, 32768 * POUT * sizeof(int32_t))) < 0 ||
        (rc = hgrow((void **)&P->h_stage, &P->cap_stage, (size_t)4 << 20)) < 0)
        goto fail;
    *out = P;
    return SWGPU_OK;
fail:
    swgpu__cu_pairs_destroy(P);
    return rc;
}

/* profile stride of a query of len positions: a whole number of 8-column
 * loads past the last position */
static size_t prof_stride(size_t len)
{
    return (len + 7) / 8 * 8 + 8;
}

/* the profile of q in the arena (added to the staging area at stage[*nst]
 * when new); UINT64_MAX when out of memory */
static uint64_t prof_of(swgpu__cu_pairs_t *P, const swgpu__query_t *q, int rev, size_t *nst,
                        int *rc)
{
    const void *res = q->res, *rows = q->rows;
    if (P->last < P->nent && P->ent[P->last].res == res && P->ent[P->last].rows == rows &&
        P->ent[P->last].len == q->len && P->ent[P->last].rev == rev)
        return P->ent[P->last].off;
    for (size_t k = 0; k < P->nent; k++)
        if (P->ent[k].res == res && P->ent[k].rows == rows && P->ent[k].len == q->len &&
            P->ent[k].rev == rev) {
            P->last = k;
            return P->ent[k].off;
        }
    const size_t stride = prof_stride(q->len), words = SWGPU_NCODES * stride;
    if (P->nent == P->cap_ent) {
        size_t c = P->cap_ent ? 2 * P->cap_ent : 64;
        pentry_t *e = (pentry_t *)realloc(P->ent, c * sizeof *e);
        if (!e) {
            *rc = swgpu__fail(SWGPU_ENOMEM, "GPU pair ends: out of memory");
            return UINT64_MAX;
        }
        P->ent = e;
        P->cap_ent = c;
    }
    if ((*rc = hgrow_keep((void **)&P->h_stage, &P->cap_stage, (*nst + words) * sizeof(int16_t),
                          *nst * sizeof(int16_t))) < 0)
        return UINT64_MAX;
    int16_t *d = P->h_stage + *nst;
    for (int r = 0; r < SWGPU_NCODES; r++) {
        int16_t *row = d + (size_t)r * stride;
        const size_t L = q->len;
        if (q->rows)
            for (size_t i = 0; i < L; i++)
                row[i] = (int16_t)q->rows[(rev ? L - 1 - i : i) * SWGPU_NCODES + r];
        else
            for (size_t i = 0; i < L; i++)
                row[i] = P->mat[q->res[rev ? L - 1 - i : i] & (SWGPU_NCODES - 1)][r];
        for (size_t i = q->len; i < stride; i++)
            row[i] = 0;
    }
    uint64_t off = P->used + *nst;
    *nst += words;
    P->ent[P->nent] = (pentry_t){res, rows, q->len, rev, off};
    P->last = P->nent++;
    return off;
}

/* 1 if the pair fits the kernel's 32-bit cells (as the CPU pair engine's
 * bound: every H stays below 2^29) */
static int pair_fits(const swgpu__cu_pairs_t *P, const swgpu__cu_pair_t *j)
{
    int32_t smax = j->q->rows ? j->q->smax : P->smax;
    if (j->q->rows && (j->q->smin < -32768 || smax > 32767))
        return 0;
    uint64_t shorter = j->qlen < j->tlen ? j->qlen : j->tlen;
    return j->qoff + j->qlen <= j->q->len && j->tlen < ((size_t)1 << 30) &&
           j->q->len < ((size_t)1 << 30) && (uint64_t)(smax > 0 ? smax : 0) * shorter < (1u << 29);
}

static uint64_t pair_cost(const swgpu__cu_pair_t *j)
{
    uint64_t segs = ((j->qoff & 7) + j->qlen + PSEG - 1) / PSEG;
    return segs * (j->tlen + 31);
}

/* one launch: jobs J[ord[0..n).k], all fitting, profiles uploaded */
static int run_batch(swgpu__cu_pairs_t *P, swgpu__cu_pair_t *J, const pcost_t *ord, size_t n,
                     const uint64_t *poff, const uint64_t *rpoff)
{
    size_t tres = 0, scr = 0;
    int rc;
    if ((rc = hgrow((void **)&P->h_jobs, &P->cap_hjobs, n * sizeof(pjob_t))) < 0)
        return rc;
    for (size_t k = 0; k < n; k++) {
        const swgpu__cu_pair_t *j = &J[ord[k].k];
        pjob_t *p = &P->h_jobs[k];
        p->prof = poff[ord[k].k];
        p->rprof = rpoff[ord[k].k];
        p->qfull = (uint32_t)j->q->len;
        p->known = j->known;
        p->begin = rpoff[ord[k].k] != UINT64_MAX;
        p->pad_ = 0;
        p->stride = (uint32_t)prof_stride(j->q->len);
        p->qoff = (uint32_t)j->qoff;
        p->qlen = (uint32_t)j->qlen;
        p->tlen = (uint32_t)j->tlen;
        p->toff = tres;
        tres += j->tlen;
        p->boff = scr;
        if ((j->qoff & 7) + j->qlen > PSEG)
            scr += 2 * j->tlen;
    }
    if ((rc = hgrow((void **)&P->h_t, &P->cap_ht, tres ? tres : 1)) < 0 ||
        (rc = hgrow((void **)&P->h_out, &P->cap_hout, POUT * n * sizeof(int32_t))) < 0 ||
        (rc = dgrow((void **)&P->d_jobs, &P->cap_djobs, n * sizeof(pjob_t), P->st)) < 0 ||
        (rc = dgrow((void **)&P->d_t, &P->cap_dt, tres ? tres : 1, P->st)) < 0 ||
        (rc = dgrow((void **)&P->d_out, &P->cap_dout, POUT * n * sizeof(int32_t), P->st)) < 0 ||
        (rc = dgrow((void **)&P->d_scr, &P->cap_scr, (scr ? scr : 1) * sizeof(int32_t), P->st)) <
            0)
        return rc;
    for (size_t k = 0; k < n; k++) {
        const swgpu__cu_pair_t *j = &J[ord[k].k];
        memcpy(P->h_t + P->h_jobs[k].toff, j->t, j->tlen);
    }
    CU_CHECK(cudaMemcpyAsync(P->d_jobs, P->h_jobs, n * sizeof(pjob_t), cudaMemcpyHostToDevice,
                             P->st));
    if (tres)
        CU_CHECK(cudaMemcpyAsync(P->d_t, P->h_t, tres, cudaMemcpyHostToDevice, P->st));
    const unsigned blocks = (unsigned)((n + PAIRS_WARPS - 1) / PAIRS_WARPS);
    CU_CHECK(cudaEventRecord(P->ev0, P->st));
    k_pair_ends<<<blocks, 32 * PAIRS_WARPS, 0, P->st>>>(P->d_jobs, (uint32_t)n, P->d_prof, P->d_t,
                                                        P->d_scr, P->d_out, P->oe, P->ge);
    CU_LAUNCHED("k_pair_ends");
    CU_CHECK(cudaEventRecord(P->ev1, P->st));
    CU_CHECK(cudaMemcpyAsync(P->h_out, P->d_out, POUT * n * sizeof(int32_t),
                             cudaMemcpyDeviceToHost, P->st));
    CU_CHECK(cudaEventRecord(P->ev, P->st));
    CU_CHECK(cudaEventSynchronize(P->ev));
    float ms = 0;
    CU_CHECK(cudaEventElapsedTime(&ms, P->ev0, P->ev1));
    P->last_gpu += ms * 1e-3;
    for (size_t k = 0; k < n; k++) {
        swgpu__cu_pair_t *j = &J[ord[k].k];
        const int32_t *o = P->h_out + POUT * k;
        if (j->known > 0 && o[0] != j->known)
            return swgpu__fail(SWGPU_ERANGE, "internal error: GPU pair ends: the pair scored %d "
                               "on the GPU, %d by the scan", (int)o[0], (int)j->known);
        j->score = o[0];
        j->qend = o[1];
        j->tend = o[2];
        j->qbeg = o[3];
        j->tbeg = o[4];
        j->done = 1;
    }
    return SWGPU_OK;
}

static int pairs_run(swgpu__cu_pairs_t *P, swgpu__cu_pair_t *J, size_t n)
{
    int rc = SWGPU_OK;
    size_t nst = 0, nfit = 0;
    uint64_t *poff = NULL, *rpoff = NULL;
    pcost_t *ord = NULL;
    CU_CHECK(cudaSetDevice(P->dev));
    P->last_gpu = 0;
    if (P->used > PROF_KEEP) { /* forget the profiles of earlier calls */
        P->used = 0;
        P->nent = 0;
        P->last = 0;
    }
    const size_t nent0 = P->nent; /* the profiles staged here count once uploaded */
    poff = (uint64_t *)malloc((n ? n : 1) * sizeof *poff);
    rpoff = (uint64_t *)malloc((n ? n : 1) * sizeof *rpoff);
    ord = (pcost_t *)malloc((n ? n : 1) * sizeof *ord);
    if (!poff || !rpoff || !ord) {
        free(poff);
        free(rpoff);
        free(ord);
        return swgpu__fail(SWGPU_ENOMEM, "GPU pair ends: out of memory for %zu pairs", n);
    }
    for (size_t k = 0; k < n; k++) {
        J[k].done = 0;
        J[k].qbeg = J[k].tbeg = -1;
        rpoff[k] = UINT64_MAX;
        if (J[k].qlen == 0 || J[k].tlen == 0) {
            J[k].score = 0;
            J[k].qend = J[k].tend = 0;
            J[k].done = J[k].known <= 0;
            continue;
        }
        if (!pair_fits(P, &J[k]))
            continue; /* left to the caller */
        if ((poff[k] = prof_of(P, J[k].q, 0, &nst, &rc)) == UINT64_MAX)
            goto done;
        if (J[k].begin && J[k].known > 0 && J[k].qoff == 0 &&
            (rpoff[k] = prof_of(P, J[k].q, 1, &nst, &rc)) == UINT64_MAX)
            goto done;
        ord[nfit++] = (pcost_t){pair_cost(&J[k]), k};
        P->cells += (uint64_t)J[k].qlen * J[k].tlen;
    }
    if (nst) { /* the new profiles, after those on the device */
        size_t need = (P->used + nst) * sizeof(int16_t);
        if (need > P->cap_prof) {
            int16_t *d = NULL;
            size_t c = P->cap_prof ? P->cap_prof : ((size_t)1 << 20);
            while (c < need)
                c *= 2;
            if (cudaMallocAsync((void **)&d, c, P->st) != cudaSuccess) {
                cudaGetLastError();
                rc = swgpu__fail(SWGPU_EDEVICE, "GPU pair ends: no device memory for %zu "
                                 "bytes of profiles", c);
                goto done;
            }
            if (P->used &&
                cudaMemcpyAsync(d, P->d_prof, P->used * sizeof(int16_t),
                                cudaMemcpyDeviceToDevice, P->st) != cudaSuccess) {
                cudaFreeAsync(d, P->st);
                rc = swgpu__fail(SWGPU_EDEVICE, "GPU pair ends: profile copy failed");
                goto done;
            }
            if (P->d_prof)
                cudaFreeAsync(P->d_prof, P->st);
            P->d_prof = d;
            P->cap_prof = c;
        }
        if (cudaMemcpyAsync(P->d_prof + P->used, P->h_stage, nst * sizeof(int16_t),
                            cudaMemcpyHostToDevice, P->st) != cudaSuccess) {
            rc = swgpu__fail(SWGPU_EDEVICE, "GPU pair ends: profile upload failed");
            goto done;
        }
        P->used += nst;
        nst = 0;
    }
    /* the costliest pairs first: no long pair starts last */
    qsort(ord, nfit, sizeof *ord, cmp_cost_desc);
    for (size_t a = 0; a < nfit;) { /* launches of at most PAIRS_RES_MAX residues */
        size_t b = a, res = 0;
        while (b < nfit && (b == a || res + J[ord[b].k].tlen <= PAIRS_RES_MAX))
            res += J[ord[b++].k].tlen;
        if ((rc = run_batch(P, J, ord + a, b - a, poff, rpoff)) < 0)
            goto done;
        a = b;
    }
done:
    if (rc < 0) {
        if (nst) { /* staged, not uploaded: a later call must not find them */
            P->nent = nent0;
            P->last = 0;
        }
        cudaStreamSynchronize(P->st); /* no copy still reads the staging area */
        cudaGetLastError();
    }
    free(poff);
    free(rpoff);
    free(ord);
    return rc;
}

extern "C" void swgpu__cu_pairs_forget(swgpu__cu_pairs_t *P)
{
    if (!P)
        return;
    pthread_mutex_lock(&P->lock);
    P->used = P->nent = P->last = 0;
    pthread_mutex_unlock(&P->lock);
}

extern "C" int swgpu__cu_pairs_run(swgpu__cu_pairs_t *P, swgpu__cu_pair_t *J, size_t n)
{
    if (!P || (n && !J))
        return swgpu__fail(SWGPU_EINVAL, "GPU pair ends: NULL argument");
    pthread_mutex_lock(&P->lock);
    double t0 = swgpu__now();
    int rc = pairs_run(P, J, n);
    double t1 = swgpu__now();
    P->calls++;
    P->pairs += n;
    P->seconds += t1 - t0;
    P->gpu_seconds += P->last_gpu;
    pthread_mutex_unlock(&P->lock);
    return rc;
}
