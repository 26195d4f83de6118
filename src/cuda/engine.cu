/*
 * engine.cu - the CUDA scan engine: create (the kernel family and scoring
 * checks, the environment, the devices, then the database, engine_layout.cu),
 * the engine's operations table, and the set-up thread that readies the
 * driver and the GPUs' contexts while the caller reads its inputs.  The
 * engine's other files: engine.cuh.
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
 * SWGPU_CUDA_QP_PACK=0 (query lanes by the least-loaded rule alone, lanes.h),
 * SWGPU_GPU_MEMORY (when swgpu_opts_t.max_gpu_memory is 0), and, for tests,
 * SWGPU_CUDA_FAIL_ALLOC=N (the Nth allocation of an engine fails) and
 * SWGPU_CUDA_CHUNK_WORDS=N (a chunk's packed words at most N, below the
 * limit of its 32-bit offsets, CHUNK_WORDS_MAX), and SWGPU_CUDA_DEVICES=0,0,0
 * (the CUDA device of each GPU the engine sees; one given twice is shared,
 * each share with its part of the memory: the several-GPU paths on one).
 */
#include "engine.cuh"

/* ---------------------------------------------------- the set-up thread */

enum { PREP_NONE, PREP_STARTED, PREP_COUNTED, PREP_DONE };

/* The engine's GPUs: gpu_dev[i] is GPU i's CUDA device (SWGPU_CUDA_DEVICES,
 * swgpu__gpu_map), read once; gpu_n < 0: the variable's error status, with
 * its message in gpu_msg. */
#define MAX_GPUS 64
static pthread_once_t gpu_once = PTHREAD_ONCE_INIT;
static int gpu_n, gpu_dev[MAX_GPUS];
static char gpu_msg[256];

static void gpu_map_read(void)
{
    int phys = 0;
    if (cudaGetDeviceCount(&phys) != cudaSuccess) {
        cudaGetLastError();
        phys = 0;
    }
    gpu_n = swgpu__gpu_map(getenv("SWGPU_CUDA_DEVICES"), phys, gpu_dev, MAX_GPUS);
    if (gpu_n < 0)
        snprintf(gpu_msg, sizeof gpu_msg, "%s", swgpu_last_error());
}

/* the most of the first n GPUs on one device (1: each its own) */
static int gpu_share(int n)
{
    int most = 1;
    for (int i = 0; i < n && i < gpu_n; i++) {
        int k = 0;
        for (int j = 0; j < n && j < gpu_n; j++)
            k += gpu_dev[j] == gpu_dev[i];
        if (k > most)
            most = k;
    }
    return most;
}

/* the GPU count (an error status for a bad SWGPU_CUDA_DEVICES, reported) */
static int gpu_count(void)
{
    pthread_once(&gpu_once, gpu_map_read);
    if (gpu_n < 0)
        return swgpu__fail(gpu_n, "%s", gpu_msg);
    return gpu_n;
}

extern "C" int swgpu__cuda_device_of(int gpu)
{
    pthread_once(&gpu_once, gpu_map_read);
    return gpu >= 0 && gpu < gpu_n ? gpu_dev[gpu] : 0;
}

/* swgpu__cuda_prepare: the driver and the contexts of the GPUs a search
 * will use, set up on a background thread while the caller reads its
 * inputs (about 0.25 s on an H100 machine; on four H200s the driver took
 * ~0.5 s and the four contexts, made one after the other, ~0.5 s more: they
 * are made at once now).  The device count is known
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

/* one device's context (a thread of its own: on several GPUs the contexts
 * are made at once, not one after the other) */
static void *prep_context(void *arg)
{
    const int i = (int)(intptr_t)arg;
    if (cudaSetDevice(swgpu__cuda_device_of(i)) == cudaSuccess)
        cudaFree(0);
    cudaGetLastError();
    return NULL;
}

#define PREP_MAX_THREADS 16 /* devices whose contexts are made in parallel */

static void *prep_thread(void *arg)
{
    (void)arg;
    int n = 0, started = 0;
    pthread_t th[PREP_MAX_THREADS];
    pthread_once(&gpu_once, gpu_map_read);
    n = gpu_n > 0 ? gpu_n : 0;
    prep_set(PREP_COUNTED);
    if (prep_gpus > 0 && prep_gpus < n)
        n = prep_gpus;
    /* GPU 0's device here, the others' on threads (any a thread cannot
     * take, here; a device shared with an earlier GPU once) */
    for (int i = 1; i < n; i++) {
        int seen = 0;
        for (int j = 0; j < i; j++)
            seen |= gpu_dev[j] == gpu_dev[i];
        if (seen)
            continue;
        if (started >= PREP_MAX_THREADS ||
            pthread_create(&th[started], NULL, prep_context, (void *)(intptr_t)i) != 0)
            prep_context((void *)(intptr_t)i);
        else
            started++;
    }
    if (n > 0)
        prep_context((void *)(intptr_t)0);
    for (int k = 0; k < started; k++)
        pthread_join(th[k], NULL);
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
    prep_wait_for(PREP_COUNTED);
    return gpu_count();
}

/* ----------------------------------------------------------------- create */

namespace swgpu_cuda {

static const char *fam_names[] = {"default", "intra", "simt", "vector", "scan"};


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

static int dev_setup(cuda_state_t *S, gpu_t *d)
{
    CU_CHECK(cudaSetDevice(d->id));
    /* one attribute (cudaGetDeviceProperties reads them all) */
    CU_CHECK(cudaDeviceGetAttribute(&d->sms, cudaDevAttrMultiProcessorCount, d->id));
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

/* the device count; the contexts may still be in the making on the set-up
 * thread (the runtime waits for them where needed) while the database
 * layout starts */
static int device_count(int *count)
{
    prep_wait_for(PREP_COUNTED);
    if ((*count = gpu_count()) < 0)
        return *count;
    if (*count == 0)
        return swgpu__fail(SWGPU_ENODEV, "backend cuda: no CUDA device available");
    return SWGPU_OK;
}

/* the kernel family of o->kernel */
static int pick_family(cuda_state_t *S, const swgpu_opts_t *o)
{
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
    else
        return swgpu__fail(SWGPU_EINVAL, "--kernel %s: unknown GPU kernel (expected default, "
                                         "dpx, simt, intra, vector or scan)", o->kernel);
    return SWGPU_OK;
}

/* the scoring scheme: the ranges the kernels hold (the default family
 * falls back to the 32-bit intra kernel), the matrix as they read it */
static int set_scoring(cuda_state_t *S, const swgpu_matrix_t *m, const swgpu_opts_t *o)
{
    S->oe = o->gap_open + o->gap_extend;
    S->ext = o->gap_extend;
    int smin = 0, smax = 0;
    for (int a = 0; a < 32; a++)
        for (int r = 0; r < 32; r++) {
            int v = m->s[a][r];
            if (v < smin) smin = v;
            if (v > smax) smax = v;
        }
    if (smin < -16384 || smax > 16383)
        return swgpu__fail(SWGPU_ERANGE, "backend cuda: matrix %s scores outside "
                                         "[-16384, 16383]", m->name);
    if (o->gap_open < 0 || o->gap_extend < 0 || S->oe > (1 << 28))
        return swgpu__fail(SWGPU_ERANGE, "backend cuda: gap penalties %d/%d out of range",
                           o->gap_open, o->gap_extend);
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
    if (S->fam == FAM_DPX && !S->use16)
        S->fam = FAM_INTRA; /* 32-bit throughout */
    if (S->fam == FAM_SIMT) {
        for (int a = 0; a < 32; a++)
            for (int r = 0; r < 32; r++)
                if (m->s[a][r] < -127 || m->s[a][r] > 127)
                    return swgpu__fail(SWGPU_ERANGE, "--kernel simt: matrix %s scores outside "
                                                     "[-127, 127] (8-bit profile)", m->name);
    }
    return SWGPU_OK;
}

/* the environment's overrides (engine.cu's top comment) */
static int read_env(cuda_state_t *S)
{
    const char *env;
    S->long_len = S->fam == FAM_INTRA ? 0 : 2048;
    if ((env = getenv("SWGPU_CUDA_LONG")) && *env)
        S->long_len = (uint32_t)strtoul(env, NULL, 10);
    S->no_split = (env = getenv("SWGPU_CUDA_SPLIT")) && !strcmp(env, "0");
    S->no_many = (env = getenv("SWGPU_CUDA_MANY")) && !strcmp(env, "0");
    S->solo = (env = getenv("SWGPU_CUDA_SOLO")) && *env ? (strcmp(env, "0") != 0) : -1;
    S->no_qp = (env = getenv("SWGPU_CUDA_QP")) && !strcmp(env, "0");
    S->qp_greedy = (env = getenv("SWGPU_CUDA_QP_PACK")) && !strcmp(env, "0");
    if ((env = getenv("SWGPU_CUDA_QP_UNITS")) && *env)
        S->qp_units = (uint32_t)strtoul(env, NULL, 10);
    S->pair = -1;
    if ((env = getenv("SWGPU_CUDA_PAIR")) && *env) {
        char *end;
        long v = strtol(env, &end, 10);
        if (*end || v < 0 || v > 4)
            return swgpu__fail(SWGPU_EINVAL, "SWGPU_CUDA_PAIR=%s: expected 0..4", env);
        S->pair = (int)v;
    }
    S->chunk_words = CHUNK_WORDS_MAX;
    if ((env = getenv("SWGPU_CUDA_CHUNK_WORDS")) && *env) {
        char *end;
        unsigned long long v = strtoull(env, &end, 10);
        if (*end || v < 1024 || v > CHUNK_WORDS_MAX)
            return swgpu__fail(SWGPU_EINVAL, "SWGPU_CUDA_CHUNK_WORDS=%s: expected 1024..%llu", env,
                               (unsigned long long)CHUNK_WORDS_MAX);
        S->chunk_words = v;
    }
    if ((env = getenv("SWGPU_CUDA_CFG")) && *env) {
        if (sscanf(env, "%d,%d,%d", &S->cfg_env.G, &S->cfg_env.R, &S->cfg_env.P) < 2)
            return swgpu__fail(SWGPU_EINVAL, "SWGPU_CUDA_CFG=%s: expected G,R[,P]", env);
    }
    return SWGPU_OK;
}

/* the first o->gpus devices (all when 0) */
static int setup_devices(cuda_state_t *S, const swgpu_opts_t *o, int count)
{
    int rc;
    S->ndev = o->gpus > 0 && o->gpus < count ? o->gpus : count;
    S->dev = (gpu_t *)calloc(S->ndev, sizeof *S->dev);
    if (!S->dev)
        return swgpu__fail(SWGPU_ENOMEM, "cuda engine: out of memory");
    for (int i = 0; i < S->ndev; i++) {
        S->dev[i].S = S;
        S->dev[i].id = swgpu__cuda_device_of(i);
        S->dev[i].own = -1;
        if ((rc = dev_setup(S, &S->dev[i])))
            return rc;
    }
    return SWGPU_OK;
}

/* memory: what one GPU may use (7/8 of the first GPU's free memory, or
 * less: o->max_gpu_memory, SWGPU_GPU_MEMORY; a share of it where GPUs share
 * a device, SWGPU_CUDA_DEVICES) */
static int memory_budget(cuda_state_t *S, const swgpu_opts_t *o)
{
    const char *env;
    size_t freeb = 0, totalb = 0;
    CU_CHECK(cudaSetDevice(S->dev[0].id));
    CU_CHECK(cudaMemGetInfo(&freeb, &totalb));
    S->budget = (freeb - freeb / 8) / (size_t)gpu_share(S->ndev);
    if (o->max_gpu_memory) {
        if (o->max_gpu_memory < S->budget)
            S->budget = (size_t)o->max_gpu_memory;
    } else if ((env = getenv("SWGPU_GPU_MEMORY")) && *env) {
        size_t b = parse_bytes(env);
        if (!b)
            return swgpu__fail(SWGPU_EINVAL, "SWGPU_GPU_MEMORY=%s: expected bytes, e.g. 512M",
                               env);
        if (b < S->budget)
            S->budget = b;
    }
    return SWGPU_OK;
}

/* the engine; force_stream: stream the database even if it seems to fit;
 * *resident_oom (may be NULL) set when the device buffers of a resident
 * database could not be allocated */
static int create_engine(const swgpu_db_t *db, const swgpu_matrix_t *m, const swgpu_opts_t *o,
                         int force_stream, int *resident_oom, void **state)
{
    int rc = SWGPU_OK, count = 0;
    uint64_t *wstart = NULL;
    cuda_state_t *S = NULL;

    const double t_start = swgpu__now();
    *state = NULL;
    S = (cuda_state_t *)calloc(1, sizeof *S);
    if (!S)
        return swgpu__fail(SWGPU_ENOMEM, "cuda engine: out of memory");
    pthread_mutex_init(&S->lock, NULL);
    S->db = db;
    if ((rc = pick_family(S, o)) || (rc = set_scoring(S, m, o)))
        goto fail;
    /* the pair layout and the subjects' word offsets (host memory only)
     * while the driver counts the GPUs and makes their contexts: ~0.25 s of
     * a cold start on the two-H200 host, where the layout of a 2.07
     * G-residue database ended 0.1 s after the GPUs were ready
     * (bench/NOTES-gpu.md v32) */
    if (S->fam == FAM_DPX)
        layout_start(S);
    if ((rc = layout_words(S, &wstart)) || (rc = device_count(&count)) || (rc = read_env(S)) ||
        (rc = setup_devices(S, o, count)))
        goto fail;
    swgpu__log(SWGPU_LOG_INFO, "cuda: %d device(s) ready (%.3f s)%s", S->ndev,
               swgpu__now() - t_start,
               gpu_share(S->ndev) > 1 ? " (some sharing a device: SWGPU_CUDA_DEVICES)" : "");
    if ((rc = memory_budget(S, o)) ||
        (rc = layout_chunks(S, wstart, force_stream)) || (rc = layout_pack(S, wstart)))
        goto fail;
    swgpu__log(SWGPU_LOG_INFO, "cuda: database packed (%.3f s)", swgpu__now() - t_start);
    if ((S->fam == FAM_DPX && (rc = make_pairs(S, S->streaming))) ||
        (rc = dev_buffers(S, resident_oom)))
        goto fail;
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
    alloc_inject(env && *env ? atoi(env) : 0);
    int rc = create_engine(db, m, o, 0, &resident_oom, state);
    if (rc == SWGPU_ENOMEM && resident_oom) {
        swgpu__log(SWGPU_LOG_WARN, "%s: streaming the database instead", swgpu_last_error());
        rc = create_engine(db, m, o, 1, NULL, state);
    }
    return rc;
}

} /* namespace swgpu_cuda */

extern "C" const swgpu_engine_ops_t swgpu__engine_cuda = {
    "cuda", swgpu_cuda::cuda_create, swgpu_cuda::cuda_scan, swgpu_cuda::cuda_destroy,
    swgpu_cuda::cuda_scan_many, SWGPU__CAP_GPU};
