/*
 * util.c - status strings, the thread-local error message, the logger,
 * clocks, a parallel loop, the reading of sizes.
 */
#define _POSIX_C_SOURCE 200809L
#include "base/base.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static _Thread_local char last_error[1024];

static swgpu_log_fn log_fn;
static void *log_user;
static swgpu_log_level_t log_max = SWGPU_LOG_WARN;

const char *swgpu_strerror(int status)
{
    switch (status) {
    case SWGPU_OK: return "success";
    case SWGPU_ENOMEM: return "out of memory";
    case SWGPU_EIO: return "input/output error";
    case SWGPU_EFORMAT: return "malformed input";
    case SWGPU_EEMPTY: return "no sequences";
    case SWGPU_EINVAL: return "invalid argument";
    case SWGPU_EMATRIX: return "invalid scoring matrix";
    case SWGPU_EALPHABET: return "alphabet mismatch";
    case SWGPU_ENODEV: return "backend or device not available";
    case SWGPU_EDEVICE: return "GPU error";
    case SWGPU_EDB: return "invalid database file";
    case SWGPU_EBUDGET: return "memory budget too small";
    case SWGPU_ERANGE: return "value out of range";
    case SWGPU_ENOTFOUND: return "not found";
    case SWGPU_EPART: return "another part failed";
    default: return "unknown status";
    }
}

const char *swgpu_last_error(void)
{
    return last_error;
}

int swgpu__fail(int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return status;
}

void swgpu_set_logger(swgpu_log_fn fn, void *user, swgpu_log_level_t max_level)
{
    log_fn = fn;
    log_user = user;
    log_max = max_level;
}

/* 1 when a message of this level would be logged */
int swgpu__log_on(swgpu_log_level_t level)
{
    return log_fn && level <= log_max;
}

void swgpu__log(swgpu_log_level_t level, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    if (!log_fn || level > log_max)
        return;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    log_fn(level, buf, log_user);
}

double swgpu__now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

double swgpu__thread_cpu(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
        return 0;
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int swgpu__ncores(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : (int)n;
}

int swgpu__open_input(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd >= 0)
        return fd;
    int e = errno;
    struct stat sb;
    if (e == ENXIO && stat(path, &sb) == 0 && S_ISSOCK(sb.st_mode))
        return swgpu__fail(SWGPU_EIO, "file %s: is a socket, which cannot be opened for "
                           "reading (give a file, a FIFO or standard input)", path);
    return swgpu__fail(SWGPU_EIO, "file %s: %s", path, strerror(e));
}

int swgpu_parse_size(const char *s, uint64_t *out)
{
    char *end;
    double v, mul = 1;
    if (!s || !out)
        return SWGPU_EINVAL;
    errno = 0;
    v = strtod(s, &end);
    if (end == s || isnan(v) || v < 0)
        return SWGPU_EINVAL;
    if (*end) {
        switch (*end) {
        case 'k': case 'K': mul = 1024.0; break;
        case 'm': case 'M': mul = 1024.0 * 1024; break;
        case 'g': case 'G': mul = 1024.0 * 1024 * 1024; break;
        case 't': case 'T': mul = 1024.0 * 1024 * 1024 * 1024; break;
        default: return SWGPU_EINVAL;
        }
        end++;
        if ((*end == 'b' || *end == 'B') && end[1] == 0)
            end++;
        else if (*end == 'i' && end[1] == 'B' && end[2] == 0)
            end += 2;
        if (*end)
            return SWGPU_EINVAL;
    }
    if ((errno == ERANGE && v > 1) || !isfinite(v) || v * mul > 1.8e19)
        return SWGPU_ERANGE;
    *out = (uint64_t)(v * mul);
    return SWGPU_OK;
}

/* swgpu__par_for's shared state: the next index to take */
typedef struct {
    size_t n;
    atomic_size_t next;
    void (*fn)(void *, size_t);
    void *ctx;
} par_t;

static void *par_worker(void *arg)
{
    par_t *P = arg;
    for (size_t i; (i = atomic_fetch_add(&P->next, 1)) < P->n;)
        P->fn(P->ctx, i);
    return NULL;
}

void swgpu__par_for(size_t n, int threads, void (*fn)(void *ctx, size_t i), void *ctx)
{
    enum { MAXT = 256 };
    pthread_t th[MAXT];
    par_t P;
    size_t T = threads > 0 ? (size_t)threads : (size_t)swgpu__ncores(), started = 0;
    P.n = n;
    atomic_init(&P.next, 0);
    P.fn = fn;
    P.ctx = ctx;
    if (T > n)
        T = n;
    if (T > MAXT)
        T = MAXT;
    for (size_t t = 1; t < T; t++) /* a thread that cannot start leaves its work to the others */
        if (pthread_create(&th[started], NULL, par_worker, &P) == 0)
            started++;
    par_worker(&P);
    for (size_t t = 0; t < started; t++)
        pthread_join(th[t], NULL);
}

/* swgpu__par_first's blocks: each its first bad index and why (0: none);
 * first: the lowest bad index found so far, so that later blocks stop */
typedef struct {
    size_t n, blk;
    int (*bad)(void *, size_t);
    void *ctx;
    size_t *at;
    int *why;
    atomic_size_t first;
} first_t;

static void first_block(void *arg, size_t b)
{
    first_t *F = arg;
    const size_t i0 = b * F->blk, i1 = F->n - i0 < F->blk ? F->n : i0 + F->blk;
    F->why[b] = 0;
    for (size_t i = i0; i < i1 && i < atomic_load(&F->first); i++) {
        const int w = F->bad(F->ctx, i);
        if (w) {
            F->why[b] = w;
            F->at[b] = i;
            size_t cur = atomic_load(&F->first);
            while (i < cur && !atomic_compare_exchange_weak(&F->first, &cur, i))
                ;
            return;
        }
    }
}

size_t swgpu__par_first(size_t n, size_t blk, int threads, int (*bad)(void *ctx, size_t i),
                        void *ctx, int *why)
{
    if (blk == 0)
        blk = 1;
    const size_t nb = n / blk + (n % blk != 0);
    first_t F;
    F.n = n;
    F.blk = blk;
    F.bad = bad;
    F.ctx = ctx;
    F.at = malloc((nb ? nb : 1) * sizeof(size_t));
    F.why = malloc((nb ? nb : 1) * sizeof(int));
    size_t at = n;
    if (!F.at || !F.why) {
        free(F.at);
        free(F.why);
        return SIZE_MAX;
    }
    atomic_init(&F.first, n);
    swgpu__par_for(nb, threads, first_block, &F);
    for (size_t b = 0; b < nb; b++)
        if (F.why[b]) {
            at = F.at[b];
            *why = F.why[b];
            break;
        }
    free(F.at);
    free(F.why);
    return at;
}
