/*
 * gpu_relay.c - the CUDA engine as one part of a pass split across
 * processes (split.c; swgpu-mpi's ranks): the part's share of a batch runs
 * on its engine's first device.  A column slice's boundary columns go
 * between the kernel and the transport through host memory the device maps
 * (the kernel's lin / rout, as between devices without peer access), moved
 * by two host threads: one receives the left column strip by strip
 * (comm->recv) and flags it for the kernel, the other waits for the
 * kernel's flag on each strip of the right column and sends it (comm->send).
 * Each thread takes its strips in the order of the batch's regions, then of
 * their strips, as the kernels' tickets do, so no part waits on a column
 * that waits on it.
 *
 * On the wire a column has the CPU engine's layout (cpu_strip.c): H of rows
 * 0 .. rows (row 0: the corner above the strip), then E entering the next
 * column for rows 1 .. rows, then (wide scores) the values' base.  The
 * kernel's column holds E at the column itself; it computes E entering the
 * next one as max(E - ext, H - open - ext), so a column received with E' =
 * E entering the next column goes in as E' + ext, which gives it E' again.
 * Values below SWGPU__LONG_INF32 are minus infinity either way.
 *
 * Memory: every buffer of a batch, on the device and the relay's pinned
 * one, is allocated before the batch's kernels start on any part
 * (swgpu__lgpu_prepare_part, then a checkpoint of every part in split.c):
 * freeing device memory waits for every kernel of the process on the
 * device, and when parts of one process share a device (threads as parts)
 * one of them may be waiting for this part's columns.
 *
 * Nothing waits forever: every strip of a left column is received and
 * flagged (zeros when the receive failed) and every strip of a right column
 * is sent (zeros when the kernel ended without it), so a part that fails
 * while its kernel runs still drains, and the batch then fails on every
 * part (split.c).
 */
#define _POSIX_C_SOURCE 200809L
#include "long/long.h"

#ifdef SWGPU_HAVE_CUDA

#include "long/gpu.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#define SH SWGPU__LONG_SH
#define NEG SWGPU__LONG_NEG
#define INF32 SWGPU__LONG_INF32

/* ------------------------------------- engines of split parts, per device */

/* This process's engines that run split parts, per device: parts of one
 * split in one process (threads, as test_long_split runs them) share a
 * device, and a kernel waiting for a column must not hold every
 * multiprocessor while the kernel that makes it waits for room
 * (swgpu__lg_sharers, launch_blocks). */
#define MAX_DEVS 64
static int sharers[MAX_DEVS];

void swgpu__lgpu_split_part(swgpu__lgpu_t *g)
{
    if (g->split_part)
        return;
    g->split_part = 1;
    if (g->P > 0 && g->part[0].dev >= 0 && g->part[0].dev < MAX_DEVS)
        __atomic_add_fetch(&sharers[g->part[0].dev], 1, __ATOMIC_SEQ_CST);
}

void swgpu__lg_split_part_end(swgpu__lgpu_t *g)
{
    if (g->split_part && g->P > 0 && g->part[0].dev >= 0 && g->part[0].dev < MAX_DEVS)
        __atomic_sub_fetch(&sharers[g->part[0].dev], 1, __ATOMIC_SEQ_CST);
    g->split_part = 0;
}

int swgpu__lg_sharers(int dev)
{
    const int n = dev >= 0 && dev < MAX_DEVS ? __atomic_load_n(&sharers[dev], __ATOMIC_SEQ_CST) : 1;
    return n > 1 ? n : 1;
}

/* ------------------------------------------------------- the wire format */

static int64_t nstrips(const swgpu__lreg_t *r)
{
    return (r->h + SH - 1) / SH;
}

static int strip_rows(const swgpu__lreg_t *r, int64_t s)
{
    const int64_t left = r->h - s * SH;
    return (int)(left < SH ? left : SH);
}

static size_t wire_bytes(int rows, int wide)
{
    return (size_t)(2 * rows + 1 + (wide ? 2 : 0)) * sizeof(int32_t);
}

static int32_t clamp_neg(int64_t v)
{
    return v < INF32 ? NEG : (int32_t)v;
}

/* A received column (msg) into the kernel's pairs {H, E} of strip s (col)
 * and its base. */
static void wire_to_kernel(const int32_t *msg, int rows, int wide, int32_t ext, int32_t *col, long long *base)
{
    col[0] = msg[0];
    col[1] = NEG;
    for (int k = 1; k <= rows; k++) {
        const int32_t e = msg[rows + k];
        col[2 * k] = msg[k];
        col[2 * k + 1] = e < INF32 ? NEG : clamp_neg((int64_t)e + ext);
    }
    if (wide)
        memcpy(base, msg + 2 * rows + 1, sizeof *base);
}

/* The kernel's right column of a strip (col, base) into a message. */
static void kernel_to_wire(const int32_t *col, int rows, int wide, int32_t ext, int32_t oe, long long base,
                           int32_t *msg)
{
    msg[0] = col[0];
    for (int k = 1; k <= rows; k++) {
        const int32_t h = col[2 * k], e = col[2 * k + 1];
        const int64_t a = e < INF32 ? INT64_MIN / 2 : (int64_t)e - ext;
        const int64_t b = h < INF32 ? INT64_MIN / 2 : (int64_t)h - oe;
        msg[k] = h;
        msg[rows + k] = clamp_neg(a > b ? a : b);
    }
    if (wide)
        memcpy(msg + 2 * rows + 1, &base, sizeof base);
}

/* ------------------------------------------------------------ the relay */

typedef struct {
    const swgpu__lreg_t *regs;   /* the share (the caller's: comm, edges, tags) */
    size_t n;
    int wide;
    int32_t ext, oe;
    char **in, **out;            /* per region: its columns in the host buffer (NULL: none) */
    atomic_int done;             /* the kernel ended, or never began */
    int rc_in, rc_out;           /* the first transport failure of each thread */
    int broken;                  /* right columns sent as zeros */
    pthread_t t_in, t_out;
    int have_in, have_out;       /* the threads run */
} relay_t;

static int has_left(const swgpu__lreg_t *r)
{
    return r->w_all > 0 && r->comm && r->edge_left >= 0;
}

static int has_right(const swgpu__lreg_t *r)
{
    return r->w_all > 0 && r->comm && r->edge_right >= 0;
}

static int tag_of(const swgpu__lreg_t *r, int64_t s)
{
    return (int)((r->tag0 + s) % SWGPU__LONG_TAGS);
}

/* every strip of every left column received, flagged for the kernel */
static void *relay_in(void *arg)
{
    relay_t *R = arg;
    int32_t msg[2 * SH + 3];
    for (size_t k = 0; k < R->n; k++) {
        const swgpu__lreg_t *r = &R->regs[k];
        if (!has_left(r))
            continue;
        const int64_t S = nstrips(r);
        char *e = R->in ? R->in[k] : NULL;
        for (int64_t s = 0; s < S; s++) {
            const int rows = strip_rows(r, s);
            int rc = r->comm->recv(r->comm->user, r->edge_left, tag_of(r, s), msg, wire_bytes(rows, R->wide));
            if (rc) {
                if (!R->rc_in)
                    R->rc_in = rc;
                memset(msg, 0, sizeof msg);
            }
            if (!e)
                continue;
            wire_to_kernel(msg, rows, R->wide, R->ext, (int32_t *)(void *)(e + SWGPU__LK_EDGE_PAIRS(s)),
                           (long long *)(void *)(e + SWGPU__LK_EDGE_BASES(S)) + s);
            __atomic_store_n((int32_t *)(void *)(e + SWGPU__LK_EDGE_PAIRS(S)) + s, 1, __ATOMIC_RELEASE);
        }
    }
    return NULL;
}

/* 1 once the kernel flags a strip, 0 when it ended without it */
static int wait_flag(relay_t *R, const int32_t *flag)
{
    unsigned spins = 0;
    for (;;) {
        if (__atomic_load_n(flag, __ATOMIC_ACQUIRE))
            return 1;
        if (atomic_load(&R->done))
            return __atomic_load_n(flag, __ATOMIC_ACQUIRE) != 0;
        if (++spins < 64) {
            sched_yield();
        } else {
            struct timespec ts = { 0, 20 * 1000 };
            nanosleep(&ts, NULL);
        }
    }
}

/* every strip of every right column sent, as the kernel flags it */
static void *relay_out(void *arg)
{
    relay_t *R = arg;
    int32_t msg[2 * SH + 3];
    for (size_t k = 0; k < R->n; k++) {
        const swgpu__lreg_t *r = &R->regs[k];
        if (!has_right(r))
            continue;
        const int64_t S = nstrips(r);
        char *e = R->out ? R->out[k] : NULL;
        for (int64_t s = 0; s < S; s++) {
            const int rows = strip_rows(r, s);
            if (e && wait_flag(R, (const int32_t *)(void *)(e + SWGPU__LK_EDGE_PAIRS(S)) + s)) {
                long long base = 0;
                if (R->wide)
                    memcpy(&base, e + SWGPU__LK_EDGE_BASES(S) + (uint64_t)s * 8, sizeof base);
                kernel_to_wire((const int32_t *)(void *)(e + SWGPU__LK_EDGE_PAIRS(s)), rows, R->wide, R->ext,
                               R->oe, base, msg);
            } else {
                memset(msg, 0, sizeof msg);
                R->broken = 1;
            }
            int rc = r->comm->send(r->comm->user, r->edge_right, tag_of(r, s), msg, wire_bytes(rows, R->wide));
            if (rc && !R->rc_out)
                R->rc_out = rc;
        }
    }
    return NULL;
}

/* Bytes of the host buffer of a share's columns. */
static uint64_t relay_bytes(const swgpu__lreg_t *regs, size_t n)
{
    uint64_t need = 0;
    for (size_t k = 0; k < n; k++)
        need += (uint64_t)(has_left(&regs[k]) + has_right(&regs[k])) * swgpu__lg_edge_bytes(nstrips(&regs[k]));
    return need;
}

/* The relay of a share: its columns in g->ext_mem (prepared), every flag
 * cleared, and its threads.  Not 0: the kernel must not run (a thread
 * could not start); relay_end drains then. */
static int relay_begin(swgpu__lgpu_t *g, relay_t *R, const swgpu__lreg_t *regs, size_t n)
{
    uint64_t at = 0;
    memset(R, 0, sizeof *R);
    atomic_init(&R->done, 0);
    R->regs = regs;
    R->n = n;
    R->wide = g->sc.wide;
    R->ext = g->sc.ext;
    R->oe = g->sc.open + g->sc.ext;
    R->in = calloc(n ? n : 1, sizeof *R->in);
    R->out = calloc(n ? n : 1, sizeof *R->out);
    if (!R->in || !R->out) {
        free(R->in);
        free(R->out);
        R->in = R->out = NULL;
        return swgpu__fail(SWGPU_ENOMEM, "long alignment: out of memory");
    }
    if (relay_bytes(regs, n) > g->ext_cap) /* swgpu__lgpu_prepare_part was not called */
        return swgpu__fail(SWGPU_EINVAL, "long alignment: internal error: a split part's columns unprepared");
    for (size_t k = 0; k < n; k++) {
        const swgpu__lreg_t *r = &regs[k];
        const int64_t S = nstrips(r);
        for (int side = 0; side < 2; side++) {
            if (!(side ? has_right(r) : has_left(r)))
                continue;
            char *e = g->ext_mem + at;
            memset(e + SWGPU__LK_EDGE_PAIRS(S), 0, (size_t)S * 4); /* flags */
            (side ? R->out : R->in)[k] = e;
            at += swgpu__lg_edge_bytes(S);
        }
    }
    R->have_in = pthread_create(&R->t_in, NULL, relay_in, R) == 0;
    if (R->have_in)
        R->have_out = pthread_create(&R->t_out, NULL, relay_out, R) == 0;
    if (!R->have_in || !R->have_out) {
        /* no kernel: the columns received are dropped, zeros sent */
        memset(R->in, 0, n * sizeof *R->in);
        memset(R->out, 0, n * sizeof *R->out);
        return swgpu__fail(SWGPU_ENOMEM, "long alignment: cannot start the threads of a split pass's "
                           "boundary columns");
    }
    return SWGPU_OK;
}

/* The kernel is done (or never ran): the threads finish, those that could
 * not start run here; the first transport failure, or SWGPU_EDEVICE when
 * columns went out as zeros although the kernel succeeded (failed 0). */
static int relay_end(relay_t *R, int failed)
{
    atomic_store(&R->done, 1);
    if (R->have_in)
        pthread_join(R->t_in, NULL);
    else if (R->in)
        relay_in(R);
    if (R->have_out)
        pthread_join(R->t_out, NULL);
    else if (R->out)
        relay_out(R);
    free(R->in);
    free(R->out);
    if (R->rc_in)
        return R->rc_in;
    if (R->rc_out)
        return R->rc_out;
    if (R->broken && !failed)
        return swgpu__fail(SWGPU_EDEVICE, "long alignment: the kernel ended without a boundary column");
    return SWGPU_OK;
}

int swgpu__lgpu_prepare_part(swgpu__lgpu_t *g, swgpu__lreg_t *regs, size_t n, uint64_t dev_budget,
                             uint64_t *host_bytes)
{
    int rc;
    const uint64_t hb = relay_bytes(regs, n);
    *host_bytes = 0;
    for (size_t k = 0; k < n; k++)
        regs[k].saved_keep = 0; /* the rows go to the other parts from the host */
    /* whole, on the first device (spread -1): slices keep their columns and
     * edges, the relay's columns in place of a neighbour's */
    const uint64_t need = swgpu__lgpu_bytes(g, regs, n, -1);
    if (need > dev_budget)
        return swgpu__fail(SWGPU_EBUDGET, "long alignment: a part of a pass needs %llu MiB of GPU memory, the "
                           "budget is %llu MiB (raise --max-memory)", (unsigned long long)(need >> 20),
                           (unsigned long long)(dev_budget >> 20));
    if ((rc = swgpu__lg_plan(g, regs, n, -1)))
        return rc;
    for (int p = 0; p < g->P; p++)
        if ((rc = swgpu__lg_buffers(g, &g->part[p])))
            return rc;
    if ((rc = swgpu__lg_pinned(&g->ext_mem, &g->ext_cap, hb)))
        return rc;
    *host_bytes = hb;
    return SWGPU_OK;
}

int swgpu__lgpu_run_part(swgpu__lgpu_t *g, swgpu__lreg_t *regs, size_t n, const swgpu__lprog_t *prog,
                         uint64_t *pruned)
{
    relay_t R;
    int rc, erc;
    if (pruned)
        *pruned = 0;
    if (!(rc = relay_begin(g, &R, regs, n))) {
        g->ext_in = R.in;
        g->ext_out = R.out;
        rc = swgpu__lgpu_run(g, regs, n, -1, prog, pruned);
        g->ext_in = g->ext_out = NULL;
    }
    erc = relay_end(&R, rc);
    return rc ? rc : erc;
}

#else
typedef int swgpu__long_gpu_relay_unused; /* ISO C wants a declaration */
#endif
