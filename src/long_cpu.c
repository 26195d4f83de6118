/*
 * long_cpu.c - the CPU engine of the long aligner: computes a batch of
 * regions (see long.h) with a pool of threads.
 *
 * Work is cut into strips of SWGPU__LONG_SH rows, numbered in batch order
 * (region 0's strips first).  Each thread takes the next strip from an
 * atomic ticket and sweeps it left to right in chunks of CHUNK columns.
 * Strip s of a region reads the bottom row of strip s-1 from a two-slot
 * ring (slot (s-1)&1) and computes in its own slot (s&1) in place; before a
 * chunk it waits until strip s-1 has published at least that chunk.  Strip
 * s+2 cannot overwrite slot s&1 before strip s+1 is done with those columns,
 * since it waits for s+1 in turn; tickets are taken in order, so a strip
 * only ever waits for a strip that a running thread holds: no deadlock.
 *
 * A region split by columns across processes (w_all > 0, long.h): the
 * strip's left boundary column arrives from the part on the left before
 * the strip starts, and its right boundary column leaves for the part on
 * the right once the strip is done, so the parts work as a pipeline of
 * strips.  A part that cannot set up still passes every boundary on (a
 * message of lower bounds), so that no other part waits forever; it then
 * reports its failure.
 */
#define _POSIX_C_SOURCE 200809L
#include "internal.h"
#include "long.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#define SH SWGPU__LONG_SH
#define NEG SWGPU__LONG_NEG
#define CHUNK 1024

typedef struct {
    int32_t best;
    int64_t bi, bj;
} sbest_t;

typedef struct {
    const swgpu__lseqs_t *q;
    const swgpu__lscore_t *sc;
    swgpu__lreg_t *regs;
    size_t n;
    int64_t *first;          /* n+1: first ticket of each region */
    int32_t **ring;          /* per region: H slot 0, H slot 1, F slot 0, F slot 1, each w+1 */
    _Atomic int64_t *progress; /* per ticket: bottom-row columns published */
    sbest_t *sb;             /* per ticket */
    _Atomic int64_t ticket;
    _Atomic uint64_t cells;
    _Atomic uint64_t pruned;
    _Atomic int32_t gbest;   /* best score found so far by pruned regions */
    _Atomic int running;
    int32_t **wcol;          /* per worker: colH then colE, SH + 1 each */
    _Atomic int wnext;       /* next worker slot */
    _Atomic int comm_rc;     /* first failed send or receive */
} job_t;

static inline int32_t max32(int32_t a, int32_t b)
{
    return a > b ? a : b;
}

/* Better cell under the tie rule: larger score, then smaller j, then smaller i. */
static inline int better(int32_t s, int64_t i, int64_t j, const sbest_t *b)
{
    if (s != b->best)
        return s > b->best;
    if (j != b->bj)
        return j < b->bj;
    return i < b->bi;
}

/*
 * One tile: rows top+1..top+rows, columns j0+1..j1.  rowH/rowF hold the
 * row above the tile on entry (vertex row top) and the tile's bottom row on
 * exit; colH[k]/colE[k] the column j0 on entry (colH[0]: the corner
 * H(top, j0)) and column j1 on exit (but colH[0], which the caller sets).
 */
static inline __attribute__((always_inline)) void tile(const uint8_t *A, const uint8_t *B,
                                                       const swgpu__lscore_t *sc, int64_t top,
                                                       int rows, int64_t j0, int64_t j1,
                                                       int32_t *rowH, int32_t *rowF,
                                                       int32_t *colH, int32_t *colE,
                                                       const int local, const int track,
                                                       sbest_t *sb)
{
    const int32_t ext = sc->ext, oe = sc->open + sc->ext;
    int32_t prevold = colH[0]; /* H(i-1, j0) for the next row, before it was overwritten */
    int k = 1;
    /* rows in pairs: row b runs one column behind row a, two independent chains */
    for (; k + 1 <= rows && j1 - j0 >= 2; k += 2) {
        const int64_t ia = top + k, ib = ia + 1;
        const int32_t *pa = sc->s[A[ia]], *pb = sc->s[A[ib]];
        int32_t da = prevold, ha = colH[k], ea = colE[k];     /* row a: diagonal, left H, E */
        int32_t db = colH[k], hb = colH[k + 1], eb = colE[k + 1]; /* row b */
        int32_t hu, f, hh;
        int64_t j = j0 + 1;
        prevold = colH[k + 1];
        /* row a, first column */
        hu = rowH[j];
        f = max32(rowF[j] - ext, hu - oe);
        ea = max32(ea - ext, ha - oe);
        hh = max32(da + pa[B[j]], max32(ea, f));
        if (local)
            hh = max32(hh, 0);
        da = hu;
        rowH[j] = hh;
        rowF[j] = f;
        ha = hh;
        if (track && hh >= sb->best && better(hh, ia, j, sb)) {
            sb->best = hh;
            sb->bi = ia;
            sb->bj = j;
        }
        for (j = j0 + 2; j <= j1; j++) {
            /* row a at column j */
            int32_t hua = rowH[j];
            int32_t fa = max32(rowF[j] - ext, hua - oe);
            int32_t hha, hub, fb, hhb;
            ea = max32(ea - ext, ha - oe);
            hha = max32(da + pa[B[j]], max32(ea, fa));
            /* row b at column j-1: above it row a's values there */
            hub = rowH[j - 1];
            fb = max32(rowF[j - 1] - ext, hub - oe);
            eb = max32(eb - ext, hb - oe);
            hhb = max32(db + pb[B[j - 1]], max32(eb, fb));
            if (local) {
                hha = max32(hha, 0);
                hhb = max32(hhb, 0);
            }
            da = hua;
            db = hub;
            rowH[j] = hha;
            rowF[j] = fa;
            ha = hha;
            rowH[j - 1] = hhb;
            rowF[j - 1] = fb;
            hb = hhb;
            if (track && hha >= sb->best && better(hha, ia, j, sb)) {
                sb->best = hha;
                sb->bi = ia;
                sb->bj = j;
            }
            if (track && hhb >= sb->best && better(hhb, ib, j - 1, sb)) {
                sb->best = hhb;
                sb->bi = ib;
                sb->bj = j - 1;
            }
        }
        /* row b, last column */
        j = j1;
        hu = rowH[j];
        f = max32(rowF[j] - ext, hu - oe);
        eb = max32(eb - ext, hb - oe);
        hh = max32(db + pb[B[j]], max32(eb, f));
        if (local)
            hh = max32(hh, 0);
        rowH[j] = hh;
        rowF[j] = f;
        hb = hh;
        if (track && hh >= sb->best && better(hh, ib, j, sb)) {
            sb->best = hh;
            sb->bi = ib;
            sb->bj = j;
        }
        colH[k] = ha;
        colE[k] = ea;
        colH[k + 1] = hb;
        colE[k + 1] = eb;
    }
    for (; k <= rows; k++) {
        const int64_t i = top + k;
        const int32_t *prow = sc->s[A[i]];
        int32_t diag = prevold; /* H(i-1, j-1) */
        int32_t hl = colH[k];   /* H(i, j-1) */
        int32_t e = colE[k];    /* E(i, j-1) */
        prevold = hl;
        for (int64_t j = j0 + 1; j <= j1; j++) {
            int32_t hu = rowH[j];                        /* H(i-1, j) */
            int32_t f = max32(rowF[j] - ext, hu - oe);   /* F(i, j) */
            int32_t hh;
            e = max32(e - ext, hl - oe);                 /* E(i, j) */
            hh = max32(diag + prow[B[j]], max32(e, f));
            if (local)
                hh = max32(hh, 0);
            diag = hu;
            rowH[j] = hh;
            rowF[j] = f;
            hl = hh;
            if (track && hh >= sb->best && better(hh, i, j, sb)) {
                sb->best = hh;
                sb->bi = i;
                sb->bj = j;
            }
        }
        colH[k] = hl;
        colE[k] = e;
    }
}

static void wait_for(_Atomic int64_t *p, int64_t need)
{
    unsigned spins = 0;
    while (atomic_load_explicit(p, memory_order_acquire) < need) {
        if (++spins < 64)
            continue;
        sched_yield();
    }
}

/* message of a strip's boundary column: colH[0..rows], colE[1..rows] */
static size_t edge_bytes(int rows)
{
    return (size_t)(2 * rows + 1) * sizeof(int32_t);
}

static void edge_fail(job_t *J, int rc)
{
    int zero = 0;
    atomic_compare_exchange_strong(&J->comm_rc, &zero, rc);
}

static void edge_recv(job_t *J, const swgpu__lreg_t *g, int64_t s, int rows, int32_t *colH,
                      int32_t *colE)
{
    int32_t msg[2 * SH + 1];
    int rc = g->comm->recv(g->comm->user, g->edge_left, (int)((g->tag0 + s) % SWGPU__LONG_TAGS),
                           msg, edge_bytes(rows));
    if (rc) {
        edge_fail(J, rc);
        memset(msg, 0, sizeof msg);
    }
    memcpy(colH, msg, (size_t)(rows + 1) * sizeof *msg);
    memcpy(colE + 1, msg + rows + 1, (size_t)rows * sizeof *msg);
}

static void edge_send(job_t *J, const swgpu__lreg_t *g, int64_t s, int rows, const int32_t *colH,
                      const int32_t *colE)
{
    int32_t msg[2 * SH + 1];
    memcpy(msg, colH, (size_t)(rows + 1) * sizeof *msg);
    memcpy(msg + rows + 1, colE + 1, (size_t)rows * sizeof *msg);
    int rc = g->comm->send(g->comm->user, g->edge_right, (int)((g->tag0 + s) % SWGPU__LONG_TAGS),
                           msg, edge_bytes(rows));
    if (rc)
        edge_fail(J, rc);
}

static void do_strip(job_t *J, size_t r, int64_t s, int64_t t, int32_t *colH, int32_t *colE)
{
    swgpu__lreg_t *g = &J->regs[r];
    const swgpu__lscore_t *sc = J->sc;
    const int64_t w = g->w, top = s * SH;
    const int rows = (int)(g->h - top < SH ? g->h - top : SH);
    const int local = g->local;
    const uint8_t *A = J->q->seq[g->rseq] + g->roff - 1; /* A[i]: row i */
    const uint8_t *B = J->q->seq[g->cseq] + g->coff - 1; /* B[j]: column j */
    int32_t *ring = J->ring[r];
    int32_t *inH = ring + (size_t)((s + 1) & 1) * (size_t)(w + 1);
    int32_t *inF = ring + (size_t)(2 + ((s + 1) & 1)) * (size_t)(w + 1);
    int32_t *outH = ring + (size_t)(s & 1) * (size_t)(w + 1);
    int32_t *outF = ring + (size_t)(2 + (s & 1)) * (size_t)(w + 1);
    int32_t *save = NULL;
    sbest_t sb = { NEG, 0, 0 };
    const int64_t bottom = top + rows;
    const int split = g->w_all > 0;
    const int64_t col0 = split ? g->col0 : 0, wall = split ? g->w_all : w;

    /* where this strip's bottom row is saved, if it is */
    if (bottom < g->h && g->save_every > 0 && bottom % g->save_every == 0)
        save = g->saved + (size_t)(bottom / g->save_every - 1) * (size_t)(w + 1) * 2;
    else if (bottom == g->h && g->save_last)
        save = g->saved + (size_t)(swgpu__lreg_nsaved(g) - 1) * (size_t)(w + 1) * 2;

    if (split && g->edge_left >= 0) {
        edge_recv(J, g, s, rows, colH, colE); /* the part on the left's last column */
    } else {
        colH[0] = top == 0 ? swgpu__lreg_top(local, g->h0, g->e0, sc->open, sc->ext, 0)
                           : swgpu__lreg_left(local, g->h0, g->f0, sc->open, sc->ext, top);
        for (int k = 1; k <= rows; k++) {
            colH[k] = swgpu__lreg_left(local, g->h0, g->f0, sc->open, sc->ext, top + k);
            colE[k] = NEG;
        }
        if (save) {
            save[0] = colH[rows];
            save[1] = local ? NEG : colH[rows];
        }
    }
    for (int64_t j0 = 0; j0 < w; j0 += CHUNK) {
        const int64_t j1 = j0 + CHUNK < w ? j0 + CHUNK : w;
        int32_t corner;
        if (s > 0) {
            wait_for(&J->progress[t - 1], j1);
            memcpy(outH + j0 + 1, inH + j0 + 1, (size_t)(j1 - j0) * sizeof *outH);
            memcpy(outF + j0 + 1, inF + j0 + 1, (size_t)(j1 - j0) * sizeof *outF);
        } else {
            for (int64_t j = j0 + 1; j <= j1; j++) {
                outH[j] = swgpu__lreg_top(local, g->h0, g->e0, sc->open, sc->ext, col0 + j);
                outF[j] = NEG;
            }
        }
        corner = outH[j1];
        if (g->prune) {
            /* the block's inputs bound everything it leads to */
            int32_t mx = 0;
            int64_t left = g->h - top < wall - col0 - j0 ? g->h - top : wall - col0 - j0;
            for (int k = 0; k <= rows; k++)
                mx = max32(mx, colH[k]);
            for (int64_t j = j0 + 1; j <= j1; j++)
                mx = max32(mx, outH[j]);
            if ((int64_t)mx + (int64_t)(sc->smax > 0 ? sc->smax : 0) * left <
                (int64_t)atomic_load_explicit(&J->gbest, memory_order_relaxed)) {
                for (int64_t j = j0 + 1; j <= j1; j++) {
                    outH[j] = 0;
                    outF[j] = NEG;
                }
                for (int k = 1; k <= rows; k++) {
                    colH[k] = 0;
                    colE[k] = NEG;
                }
                colH[0] = corner;
                if (save)
                    for (int64_t j = j0 + 1; j <= j1; j++) {
                        save[2 * j] = 0;
                        save[2 * j + 1] = NEG;
                    }
                atomic_store_explicit(&J->progress[t], j1, memory_order_release);
                atomic_fetch_add_explicit(&J->pruned, (uint64_t)rows * (uint64_t)(j1 - j0),
                                          memory_order_relaxed);
                continue;
            }
        }
        if (local && g->track)
            tile(A, B, sc, top, rows, j0, j1, outH, outF, colH, colE, 1, 1, &sb);
        else if (local)
            tile(A, B, sc, top, rows, j0, j1, outH, outF, colH, colE, 1, 0, &sb);
        else if (g->track)
            tile(A, B, sc, top, rows, j0, j1, outH, outF, colH, colE, 0, 1, &sb);
        else
            tile(A, B, sc, top, rows, j0, j1, outH, outF, colH, colE, 0, 0, &sb);
        colH[0] = corner;
        if (g->prune && g->track) {
            int32_t cur = atomic_load_explicit(&J->gbest, memory_order_relaxed);
            while (sb.best > cur &&
                   !atomic_compare_exchange_weak_explicit(&J->gbest, &cur, sb.best,
                                                          memory_order_relaxed, memory_order_relaxed))
                ;
        }
        if (save)
            for (int64_t j = j0 + 1; j <= j1; j++) {
                save[2 * j] = outH[j];
                save[2 * j + 1] = outF[j];
            }
        atomic_store_explicit(&J->progress[t], j1, memory_order_release);
        atomic_fetch_add_explicit(&J->cells, (uint64_t)rows * (uint64_t)(j1 - j0),
                                  memory_order_relaxed);
    }
    if (split && g->edge_right >= 0)
        edge_send(J, g, s, rows, colH, colE); /* colH[0]: H(top, col0 + w) */
    sb.bj += col0;
    J->sb[t] = sb;
}

/* A part that could not set up still passes every boundary column on:
 * lower bounds (H 0, E minus infinity), which cannot raise any score. */
static void drain(swgpu__lreg_t *regs, size_t n)
{
    int32_t msg[2 * SH + 1];
    for (size_t r = 0; r < n; r++) {
        const swgpu__lreg_t *g = &regs[r];
        if (g->w_all <= 0 || g->h < 1)
            continue;
        for (int64_t s = 0; s * SH < g->h; s++) {
            int rows = (int)(g->h - s * SH < SH ? g->h - s * SH : SH);
            int tag = (int)((g->tag0 + s) % SWGPU__LONG_TAGS);
            if (g->edge_left >= 0)
                g->comm->recv(g->comm->user, g->edge_left, tag, msg, edge_bytes(rows));
            for (int k = 0; k <= rows; k++)
                msg[k] = 0;
            for (int k = 0; k < rows; k++)
                msg[rows + 1 + k] = NEG;
            if (g->edge_right >= 0)
                g->comm->send(g->comm->user, g->edge_right, tag, msg, edge_bytes(rows));
        }
    }
}

static void *worker(void *arg)
{
    job_t *J = arg;
    const int64_t total = J->first[J->n];
    int32_t *colH = J->wcol[atomic_fetch_add(&J->wnext, 1)];
    int32_t *colE = colH + SH + 1;
    for (;;) {
        int64_t t = atomic_fetch_add(&J->ticket, 1);
        size_t lo = 0, hi = J->n - 1;
        if (t >= total)
            break;
        while (lo < hi) { /* last region with first <= t */
            size_t mid = (lo + hi + 1) / 2;
            if (J->first[mid] <= t)
                lo = mid;
            else
                hi = mid - 1;
        }
        do_strip(J, lo, t - J->first[lo], t, colH, colE);
    }
    atomic_fetch_sub(&J->running, 1);
    return NULL;
}

int swgpu__lcpu_run(const swgpu__lseqs_t *q, const swgpu__lscore_t *sc, swgpu__lreg_t *regs,
                    size_t n, int threads, const swgpu__lprog_t *prog, uint64_t *bytes_used,
                    uint64_t *pruned)
{
    job_t J;
    pthread_t *tid = NULL;
    int nt = 0, rc = SWGPU_OK, ran = 0;
    int64_t total;
    uint64_t bytes = 0;

    if (n == 0)
        return SWGPU_OK;
    memset(&J, 0, sizeof J);
    J.q = q;
    J.sc = sc;
    J.regs = regs;
    J.n = n;
    J.first = malloc((n + 1) * sizeof *J.first);
    J.ring = calloc(n, sizeof *J.ring);
    if (!J.first || !J.ring) {
        rc = swgpu__fail(SWGPU_ENOMEM, "long alignment: out of memory for %zu regions", n);
        goto fail;
    }
    J.first[0] = 0;
    for (size_t r = 0; r < n; r++) {
        if (regs[r].h < 1 || regs[r].w < 1) {
            rc = swgpu__fail(SWGPU_EINVAL, "long alignment: empty region %zu", r);
            goto fail;
        }
        J.first[r + 1] = J.first[r] + (regs[r].h + SH - 1) / SH;
        J.ring[r] = malloc((size_t)4 * (size_t)(regs[r].w + 1) * sizeof(int32_t));
        if (!J.ring[r]) {
            rc = swgpu__fail(SWGPU_ENOMEM, "long alignment: out of memory for a %lld-column region",
                             (long long)regs[r].w);
            goto fail;
        }
        bytes += (uint64_t)4 * (uint64_t)(regs[r].w + 1) * sizeof(int32_t);
    }
    total = J.first[n];
    J.progress = malloc((size_t)total * sizeof *J.progress);
    J.sb = malloc((size_t)total * sizeof *J.sb);
    if (!J.progress || !J.sb) {
        rc = swgpu__fail(SWGPU_ENOMEM, "long alignment: out of memory for %lld strips", (long long)total);
        goto fail;
    }
    bytes += (uint64_t)total * (sizeof *J.progress + sizeof *J.sb);
    if (bytes_used)
        *bytes_used = bytes;
    for (int64_t t = 0; t < total; t++)
        atomic_init(&J.progress[t], 0);
    atomic_init(&J.ticket, 0);
    atomic_init(&J.cells, 0);
    atomic_init(&J.pruned, 0);
    {
        int32_t b0 = 0;
        for (size_t r = 0; r < n; r++)
            if (regs[r].prune && regs[r].prune_best > b0)
                b0 = regs[r].prune_best;
        atomic_init(&J.gbest, b0);
    }

    if (threads < 1)
        threads = swgpu__ncores();
    if (threads > total)
        threads = (int)total;
    J.wcol = calloc((size_t)threads, sizeof *J.wcol);
    if (!J.wcol) {
        rc = swgpu__fail(SWGPU_ENOMEM, "long alignment: out of memory for threads");
        goto fail;
    }
    for (int k = 0; k < threads; k++)
        if (!(J.wcol[k] = malloc(2 * (SH + 1) * sizeof(int32_t)))) {
            rc = swgpu__fail(SWGPU_ENOMEM, "long alignment: out of memory for threads");
            goto fail;
        }
    atomic_init(&J.wnext, 0);
    atomic_init(&J.comm_rc, 0);
    if (!(threads == 1 && !(prog && prog->report)) &&
        !(tid = malloc((size_t)threads * sizeof *tid))) {
        rc = swgpu__fail(SWGPU_ENOMEM, "long alignment: out of memory for threads");
        goto fail;
    }
    ran = 1;
    if (!tid) {
        atomic_init(&J.running, 1);
        worker(&J);
    } else {
        atomic_init(&J.running, threads);
        for (nt = 0; nt < threads; nt++)
            if (pthread_create(&tid[nt], NULL, worker, &J) != 0)
                break;
        atomic_fetch_sub(&J.running, threads - nt);
        if (nt == 0) {
            atomic_init(&J.running, 1);
            worker(&J); /* no thread could start: do it here */
        }
        for (int tick = 0; prog && prog->report && atomic_load(&J.running) > 0; tick++) {
            struct timespec ts = { 0, 10 * 1000 * 1000 };
            nanosleep(&ts, NULL);
            if (tick % 10 == 9)
                prog->report(prog->user, atomic_load(&J.cells));
        }
        for (int k = 0; k < nt; k++)
            pthread_join(tid[k], NULL);
    }
    if (atomic_load(&J.comm_rc)) {
        rc = swgpu__fail(atomic_load(&J.comm_rc), "long alignment: a boundary column could not "
                         "be sent or received");
        goto fail;
    }
    if (pruned)
        *pruned = atomic_load(&J.pruned);
    for (size_t r = 0; r < n; r++) {
        sbest_t b = { NEG, 0, 0 };
        if (!regs[r].track)
            continue;
        for (int64_t t = J.first[r]; t < J.first[r + 1]; t++)
            if (better(J.sb[t].best, J.sb[t].bi, J.sb[t].bj, &b))
                b = J.sb[t];
        regs[r].best = b.best;
        regs[r].bi = b.bi;
        regs[r].bj = b.bj;
    }
fail:
    if (rc && !ran)
        drain(regs, n);
    free(tid);
    if (J.wcol)
        for (int k = 0; k < threads; k++)
            free(J.wcol[k]);
    free(J.wcol);
    if (J.ring)
        for (size_t r = 0; r < n; r++)
            free(J.ring[r]);
    free(J.ring);
    free(J.first);
    free(J.progress);
    free(J.sb);
    return rc;
}
