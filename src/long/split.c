/*
 * split.c - the long aligner's passes split across parts (processes
 * joined by a swgpu_comm_t): its one partitioning layer.
 *
 * Every part runs the aligner's orchestration (align_long.c) the same way,
 * with the same data, so every part reaches the same batches of regions in
 * the same order.  Each batch is split here:
 *
 *  - a few regions (fewer than twice the parts): each region is cut by
 *    columns into slices dealt round the parts, one a part, or several on
 *    the CUDA engine's parts (split_slices; at least SWGPU__LPART_MIN_COLS
 *    columns a slice; partition.c, the partitioner the GPUs share).
 *    A part's engine computes a slice strip by strip, receiving each
 *    strip's left boundary column from the part on the left and sending
 *    its right one on, so the parts work as a pipeline: part p starts
 *    strip s as soon as part p-1 has finished it.  The engine is the CPU
 *    one, or on every part the CUDA one (gpu_relay.c: the kernel's columns
 *    relayed by host threads, in the CPU engine's layout on the wire);
 *  - many regions: whole regions are dealt out, largest first to the part
 *    with the least work so far.
 *
 * Then every part gets every other part's outputs - the rows the regions
 * save and their best cells (merged under the tie rule: highest score,
 * smallest column, smallest row) - through comm->allgather, and goes on
 * with exactly the data a single process would have.  Pruned cells are
 * counted over all parts.
 *
 * Failures: swgpu__lsplit_agree() is every part's checkpoint (an allgather
 * of statuses); a batch always completes its collectives, a part that fails
 * inside one still passes boundary columns on (the engine drains) and
 * reports at the batch's end, so that no part waits forever.  The parts
 * that did not fail themselves return SWGPU_EPART.
 *
 * The transport is comm's; the split (partition.c) depends only on sizes
 * and the number of parts.
 */
#include "long/long.h"

#include <string.h>

#define MAX_PARTS SWGPU__LONG_MAX_PARTS

int swgpu__lsplit_agree(const swgpu_comm_t *comm, int rc)
{
    int32_t all[MAX_PARTS];
    size_t len[MAX_PARTS];
    int32_t mine = rc;
    if (comm->size > MAX_PARTS)
        return swgpu__fail(SWGPU_EINVAL, "long alignment: %d parts, at most %d", comm->size,
                           MAX_PARTS);
    for (int p = 0; p < comm->size; p++)
        len[p] = sizeof(int32_t);
    all[comm->rank] = mine;
    int crc = comm->allgather(comm->user, all, len);
    if (crc)
        return swgpu__fail(crc, "long alignment: the parts cannot agree (transport error)");
    if (rc)
        return rc;
    for (int p = 0; p < comm->size; p++)
        if (all[p])
            return swgpu__fail(SWGPU_EPART, "long alignment: part %d of %d failed", p, comm->size);
    return SWGPU_OK;
}

/* The first steps of an exchange of every part's bytes: every part's
 * checkpoint (a part that failed on its own meets the others at their
 * next one), then every part's length (sz[p][0]; 0 from a part whose rc is
 * not 0) and status (sz[p][1]).  Returns a transport failure (the call
 * ends), else *fail is the call's status so far: rc, or SWGPU_EPART naming
 * a failed part. */
static int exchange_sizes(const swgpu_comm_t *comm, int rc, size_t len, uint64_t (*sz)[2], int *fail)
{
    size_t lens[MAX_PARTS];
    const int P = comm->size;
    int crc;
    if ((crc = swgpu__lsplit_agree(comm, rc)))
        return crc;
    for (int p = 0; p < P; p++)
        lens[p] = sizeof sz[0];
    sz[comm->rank][0] = rc ? 0 : len;
    sz[comm->rank][1] = (uint64_t)(int64_t)rc;
    if ((crc = comm->allgather(comm->user, sz, lens)))
        return swgpu__fail(crc, "long alignment: transport error");
    *fail = rc;
    for (int p = 0; p < P && !*fail; p++)
        if (sz[p][1])
            *fail = swgpu__fail(SWGPU_EPART, "long alignment: part %d of %d failed", p, P);
    return SWGPU_OK;
}

/*
 * Every part's bytes (see long.h).  A part whose rc is not 0 contributes
 * nothing and makes the call fail everywhere, after the same collectives.
 */
int swgpu__lsplit_gather(const swgpu_comm_t *comm, int rc, const void *mine, size_t len,
                         char **all, size_t *off)
{
    uint64_t sz[MAX_PARTS][2];
    size_t lens[MAX_PARTS];
    int P = comm->size, crc, fail;
    *all = NULL;
    if ((crc = exchange_sizes(comm, rc, len, sz, &fail)))
        return crc;
    off[0] = 0;
    for (int p = 0; p < P; p++) {
        off[p + 1] = off[p] + sz[p][0];
        lens[p] = sz[p][0];
    }
    if (!fail && !(*all = malloc(off[P] ? off[P] : 1)))
        fail = swgpu__fail(SWGPU_ENOMEM, "long alignment: out of memory for %zu bytes from the "
                           "other parts", off[P]);
    /* everyone learns whether everyone has a buffer before the data moves */
    if ((crc = swgpu__lsplit_agree(comm, fail))) {
        free(*all);
        *all = NULL;
        return crc;
    }
    if (len)
        memcpy(*all + off[comm->rank], mine, len);
    if ((crc = comm->allgather(comm->user, *all, lens))) {
        free(*all);
        *all = NULL;
        return swgpu__fail(crc, "long alignment: transport error");
    }
    return SWGPU_OK;
}

/* one part's outputs for one region */
typedef struct {
    int64_t region;
    int64_t c_lo, c_hi;   /* saved vertex columns [c_lo, c_hi] of the region */
    int64_t track;        /* 1: best, bi, bj are the part's best cell */
    int64_t best, bi, bj;
    int64_t col0, nb;     /* wide scores: the part's first column (a multiple of
                             SWGPU__LONG_CHUNK) and bases per saved row (its own
                             swgpu__lreg_nbase: entry 0 for its column 0, 1 + c for
                             its chunk c, the region's chunk col0 / CHUNK + c) */
} contrib_t;

/* This part's share of a batch: nm regions or slices (mine), idx[x] the
 * batch's index of mine[x], lo[x] .. hi[x] the saved vertex columns of its
 * region it computes and, for a slice, its own saved rows (local[x],
 * lbase[x]); whole: mine holds whole regions (their rows in place). */
typedef struct {
    swgpu__lreg_t *mine;
    size_t *idx, nm, cap;
    int32_t **local;
    int64_t **lbase;
    int64_t *lo, *hi;
    int whole;
    uint64_t bytes;       /* the slices' saved rows */
} share_t;

static int share_alloc(share_t *sh, size_t cap)
{
    const size_t m = cap ? cap : 1;
    memset(sh, 0, sizeof *sh);
    sh->cap = m;
    sh->mine = calloc(m, sizeof *sh->mine);
    sh->idx = calloc(m, sizeof *sh->idx);
    sh->local = calloc(m, sizeof *sh->local);
    sh->lbase = calloc(m, sizeof *sh->lbase);
    sh->lo = calloc(m, sizeof *sh->lo);
    sh->hi = calloc(m, sizeof *sh->hi);
    if (!sh->mine || !sh->idx || !sh->local || !sh->lbase || !sh->lo || !sh->hi)
        return swgpu__fail(SWGPU_ENOMEM, "long alignment: out of memory for %zu regions", cap);
    return SWGPU_OK;
}

static void share_free(share_t *sh)
{
    for (size_t x = 0; sh->local && x < sh->cap; x++)
        free(sh->local[x]);
    for (size_t x = 0; sh->lbase && x < sh->cap; x++)
        free(sh->lbase[x]);
    free(sh->local);
    free(sh->lbase);
    free(sh->mine);
    free(sh->idx);
    free(sh->lo);
    free(sh->hi);
}

/* Many regions: the whole ones the partitioner deals to this part. */
static int share_whole(share_t *sh, const swgpu_comm_t *comm, const swgpu__lreg_t *regs, size_t n)
{
    const int me = comm->rank;
    int64_t *owner = malloc((n ? n : 1) * sizeof *owner);
    int rc;
    if (!owner)
        return swgpu__fail(SWGPU_ENOMEM, "long alignment: out of memory for %zu regions", n);
    sh->whole = 1;
    if (!(rc = swgpu__lpart_deal(regs, n, comm->size, owner)))
        for (size_t k = 0; k < n; k++)
            if (owner[k] == me) {
                sh->mine[sh->nm] = regs[k];
                sh->lo[sh->nm] = 0;
                sh->hi[sh->nm] = regs[k].w;
                sh->idx[sh->nm++] = k;
            }
    free(owner);
    return rc;
}

/* Column slices of a region of w columns over P parts, slice pp on part pp
 * mod P.  The CPU engine's parts: one a part.  Its worker threads send and
 * receive the columns themselves, and a send may block until the other
 * part receives (MPI's rendezvous): with several slices a part, columns
 * would go both ways between two parts, and every thread of each could
 * block sending to the other.  The CUDA engine's parts (gpu: their relay
 * threads always receive, whatever the kernel and the sends do): as many
 * as asked for (want: slices in all, as swgpu_long_opts_t.gpu_parts) or,
 * automatic, up to SPLIT_AUTO_SLICES a part of at least SPLIT_AUTO_COLS
 * columns, at least one a part: a part then waits a slice's crossing at the
 * pipeline's start and end, not a P-th of the region's (as the GPU engine's
 * own slices, gpu_plan.c). */
#define SPLIT_AUTO_COLS 65536
#define SPLIT_AUTO_SLICES 8
static int64_t split_slices(int64_t w, int P, int gpu, int64_t want)
{
    int64_t a = P;
    if (gpu && want > 0) {
        a = want;
    } else if (gpu) {
        const int64_t m = w / ((int64_t)P * SPLIT_AUTO_COLS);
        a = (int64_t)P * (m < 1 ? 1 : m > SPLIT_AUTO_SLICES ? SPLIT_AUTO_SLICES : m);
    }
    return swgpu__lpart_slices(w, a);
}

/* The share's size: the slices of this part over the batch's regions. */
static size_t slices_of_part(const swgpu__lreg_t *regs, size_t n, int P, int me, int gpu, int64_t want)
{
    size_t c = 0;
    for (size_t k = 0; k < n; k++) {
        const int64_t a = split_slices(regs[k].w, P, gpu, want);
        c += a > me ? (size_t)((a - me + P - 1) / P) : 0;
    }
    return c;
}

/* Few regions: this part's column slices of each (split_slices; wide
 * scores: slices start at multiples of CHUNK, so that their row bases are
 * the region's), with saved rows of their own; tags count strips over the
 * batch (a region's slices share its tags: a part's several slices of a
 * region send to the next part in the order that part receives).  Out of
 * memory for a slice's rows: it is computed unsaved (its boundary columns
 * still go on) and the batch fails. */
static int share_slices(share_t *sh, const swgpu_comm_t *comm, const swgpu__lreg_t *regs, size_t n, int wide,
                        int gpu, int64_t want)
{
    const int P = comm->size, me = comm->rank;
    int64_t tag = 0;
    int rc = SWGPU_OK;
    for (size_t k = 0; k < n; k++) {
        const swgpu__lreg_t *g = &regs[k];
        const int64_t a = split_slices(g->w, P, gpu, want);
        const int64_t strips = (g->h + SWGPU__LONG_SH - 1) / SWGPU__LONG_SH;
        for (int64_t pp = me; pp < a; pp += P) {
            int64_t c0, c1;
            swgpu__lpart_cols(g->w, a, pp, &c0, &c1);
            if (wide) {
                c0 -= c0 % SWGPU__LONG_CHUNK;
                c1 = pp + 1 < a ? c1 - c1 % SWGPU__LONG_CHUNK : c1;
            }
            if (c1 <= c0)
                continue;
            const size_t x = sh->nm++;
            swgpu__lreg_t *s = &sh->mine[x];
            *s = *g;
            s->w = c1 - c0;
            s->coff = g->coff + c0;
            s->col0 = c0;
            s->w_all = g->w;
            s->edge_left = pp > 0 ? (int32_t)((pp - 1) % P) : -1;
            s->edge_right = pp + 1 < a ? (int32_t)((pp + 1) % P) : -1;
            s->tag0 = (int32_t)(tag % SWGPU__LONG_TAGS); /* the region's: both ends of a column */
            s->comm = comm;
            int64_t ns = swgpu__lreg_nsaved(g);
            if (ns > 0) {
                sh->local[x] = malloc((size_t)ns * (size_t)(s->w + 1) * 2 * sizeof(int32_t));
                if (wide)
                    sh->lbase[x] = malloc((size_t)ns * (size_t)swgpu__lreg_nbase(s->w) * sizeof(int64_t));
                if (!sh->local[x] || (wide && !sh->lbase[x])) {
                    rc = swgpu__fail(SWGPU_ENOMEM, "long alignment: out of memory for "
                                     "%lld saved rows", (long long)ns);
                    s->save_every = 0; /* computed, not saved: the batch fails */
                    s->save_last = 0;
                }
            }
            s->saved = sh->local[x];
            s->saved_base = sh->lbase[x];
            sh->bytes += sh->local[x] ? (uint64_t)ns * (uint64_t)(s->w + 1) * 8 : 0;
            sh->bytes += sh->lbase[x] ? (uint64_t)ns * (uint64_t)swgpu__lreg_nbase(s->w) * 8 : 0;
            sh->lo[x] = pp == 0 ? 0 : c0 + 1; /* vertex column c0 is the slice on the left's */
            sh->hi[x] = c1;
            sh->idx[x] = k;
        }
        tag += strips;
    }
    return rc;
}

/* This part's outputs, for the others: its pruned cells, then per region
 * a contrib_t, its saved columns and (wide scores) its bases. */
static int pack_outputs(const share_t *sh, const swgpu__lreg_t *regs, int wide, uint64_t my_pruned,
                        char **out, size_t *outlen)
{
    size_t need = 0;
    for (size_t x = 0; x < sh->nm; x++) {
        size_t k = sh->idx[x];
        need += sizeof(contrib_t);
        if (regs[k].saved)
            need += (size_t)swgpu__lreg_nsaved(&regs[k]) *
                    ((size_t)(sh->hi[x] - sh->lo[x] + 1) * 8 + (wide ? (size_t)swgpu__lreg_nbase(sh->mine[x].w) * 8 : 0));
    }
    need += sizeof(uint64_t);
    if (!(*out = malloc(need)))
        return swgpu__fail(SWGPU_ENOMEM, "long alignment: out of memory for %zu bytes", need);
    char *p = *out;
    memcpy(p, &my_pruned, sizeof my_pruned);
    p += sizeof my_pruned;
    for (size_t x = 0; x < sh->nm; x++) {
        size_t k = sh->idx[x];
        const swgpu__lreg_t *s = &sh->mine[x];
        contrib_t c = {(int64_t)k, sh->lo[x], sh->hi[x], regs[k].track, s->best, s->bi, s->bj,
                       s->w_all > 0 ? s->col0 : 0, wide ? swgpu__lreg_nbase(s->w) : 0};
        memcpy(p, &c, sizeof c);
        p += sizeof c;
        if (!regs[k].saved)
            continue;
        int64_t ns = swgpu__lreg_nsaved(&regs[k]), cols = sh->hi[x] - sh->lo[x] + 1;
        int64_t first = sh->lo[x] - s->col0; /* local vertex column of lo[x] */
        for (int64_t row = 0; row < ns; row++) {
            const int32_t *src = s->saved + ((size_t)row * (size_t)(s->w + 1) + (size_t)first) * 2;
            memcpy(p, src, (size_t)cols * 8);
            p += cols * 8;
        }
        if (wide) {
            memcpy(p, s->saved_base, (size_t)ns * (size_t)c.nb * 8);
            p += ns * c.nb * 8;
        }
    }
    *outlen = (size_t)(p - *out);
    return SWGPU_OK;
}

/* One part's contribution to region g: its saved columns and bases (the
 * part's own whole regions are in place already); returns the end of it. */
static const char *unpack_rows(swgpu__lreg_t *g, const contrib_t *c, const char *x, int in_place)
{
    int64_t ns = swgpu__lreg_nsaved(g), cols = c->c_hi - c->c_lo + 1;
    if (in_place)
        return x + ns * cols * 8 + ns * c->nb * 8;
    for (int64_t row = 0; row < ns; row++) {
        memcpy(g->saved + ((size_t)row * (size_t)(g->w + 1) + (size_t)c->c_lo) * 2, x, (size_t)cols * 8);
        x += cols * 8;
    }
    for (int64_t row = 0; c->nb > 0 && row < ns; row++) {
        /* the part's bases: its column 0's (the region's when col0 is 0),
         * its chunks' (the region's from chunk col0 / CHUNK on) */
        int64_t *rb = g->saved_base + (size_t)row * (size_t)swgpu__lreg_nbase(g->w), b0;
        memcpy(&b0, x, sizeof b0);
        if (c->col0 == 0)
            rb[0] = b0;
        memcpy(rb + 1 + c->col0 / SWGPU__LONG_CHUNK, x + 8, (size_t)(c->nb - 1) * 8);
        x += c->nb * 8;
    }
    return x;
}

/* Part p's outputs (x .. end) into the batch's regions: its bests merged
 * under the tie rule, its saved columns, its pruned cells added. */
static void unpack_part(const swgpu_comm_t *comm, const share_t *sh, swgpu__lreg_t *regs, int p, const char *x,
                        const char *end, uint64_t *pruned)
{
    uint64_t pp;
    memcpy(&pp, x, sizeof pp);
    x += sizeof pp;
    *pruned += pp;
    while (x < end) {
        contrib_t c;
        memcpy(&c, x, sizeof c);
        x += sizeof c;
        swgpu__lreg_t *g = &regs[c.region];
        if (c.track && swgpu__lbest_better(c.best, c.bi, c.bj, g->best, g->bi, g->bj)) {
            g->best = c.best;
            g->bi = c.bi;
            g->bj = c.bj;
        }
        if (g->saved) /* a whole region of ours: in place already */
            x = unpack_rows(g, &c, x, p == comm->rank && sh->whole);
    }
}

/*
 * Every part's outputs (this part's: out, outlen bytes) into the batch's
 * regions, one part's at a time: part p's bytes go to every part
 * (comm->allgather with the others' lengths 0), which unpack them before
 * the next part's, so that a part holds its own outputs and one other
 * part's at most, not every part's at once (the reverse pass's saved rows
 * are most of them: E. coli's 3.5 GB).  rc: this part's status so far; a
 * failure anywhere fails the call on every part, after the same
 * collectives.  *held: the bytes of the buffer for the others' outputs.
 */
static int exchange(const swgpu_comm_t *comm, int rc, const share_t *sh, swgpu__lreg_t *regs, size_t n,
                    char *out, size_t outlen, uint64_t *pruned, uint64_t *held)
{
    uint64_t sz[MAX_PARTS][2], most = 0, sum = 0;
    size_t lens[MAX_PARTS];
    const int P = comm->size, me = comm->rank;
    char *buf = NULL;
    int crc, fail;
    *held = 0;
    if ((crc = exchange_sizes(comm, rc, outlen, sz, &fail)))
        return crc;
    for (int p = 0; p < P; p++)
        if (p != me && sz[p][0] > most)
            most = sz[p][0];
    if (!fail && !(buf = malloc(most ? most : 1)))
        fail = swgpu__fail(SWGPU_ENOMEM, "long alignment: out of memory for %llu bytes from the other parts",
                           (unsigned long long)most);
    /* everyone learns whether everyone has a buffer before the data moves */
    if ((crc = swgpu__lsplit_agree(comm, fail))) {
        free(buf);
        return crc;
    }
    *held = most;
    for (size_t k = 0; k < n; k++)
        if (regs[k].track) {
            regs[k].best = SWGPU__LONG_NEG;
            regs[k].bi = regs[k].bj = 0;
        }
    for (int p = 0; p < P; p++) {
        char *at = p == me ? out : buf;
        for (int q = 0; q < P; q++)
            lens[q] = q == p ? sz[p][0] : 0;
        if ((crc = comm->allgather(comm->user, at, lens))) {
            free(buf);
            return swgpu__fail(crc, "long alignment: transport error");
        }
        unpack_part(comm, sh, regs, p, at, at + sz[p][0], &sum);
    }
    free(buf);
    if (pruned)
        *pruned = sum;
    return SWGPU_OK;
}

int swgpu__lsplit_run(const swgpu_comm_t *comm, const swgpu__lseqs_t *q,
                      const swgpu__lscore_t *sc, swgpu__lreg_t *regs, size_t n, int threads,
                      swgpu__lgpu_t *gpu, uint64_t dev_budget, int64_t want,
                      const swgpu__lprog_t *prog, uint64_t *bytes_used, uint64_t *pruned)
{
    share_t sh;
    uint64_t my_pruned = 0, bytes = 0, held = 0;
    char *out = NULL;
    size_t outlen = 0;
    int rc;

    if ((rc = swgpu__lsplit_agree(comm, SWGPU_OK)))
        return rc;
    const int whole = swgpu__lpart_whole(n, comm->size);
    if (!(rc = share_alloc(&sh, whole ? n : slices_of_part(regs, n, comm->size, comm->rank, gpu != NULL, want)))) {
        if (whole)
            rc = share_whole(&sh, comm, regs, n);
        else
            rc = share_slices(&sh, comm, regs, n, sc->wide, gpu != NULL, want);
    }
    bytes = sh.bytes;
#ifdef SWGPU_HAVE_CUDA
    if (gpu) {
        /* every part's buffers before any part's kernel (gpu_relay.c), and
         * a part that cannot have them stops the batch on every part before
         * any column moves: nothing to drain */
        uint64_t b = 0, pr = 0;
        if (!rc && sh.nm > 0)
            rc = swgpu__lgpu_prepare_part(gpu, sh.mine, sh.nm, dev_budget, &b);
        bytes += b;
        if (!(rc = swgpu__lsplit_agree(comm, rc)) && sh.nm > 0) {
            rc = swgpu__lgpu_run_part(gpu, sh.mine, sh.nm, prog, &pr);
            my_pruned = pr;
        }
    } else
#else
    (void)gpu;
    (void)dev_budget;
#endif
    if (sh.nm > 0) { /* even after a failure: the boundary columns go on */
        uint64_t b = 0, pr = 0;
        int erc = swgpu__lcpu_run(q, sc, sh.mine, sh.nm, threads, prog, &b, &pr, NULL);
        if (erc && !rc)
            rc = erc;
        my_pruned = pr;
        bytes += b;
    }
    if (!rc)
        rc = pack_outputs(&sh, regs, sc->wide, my_pruned, &out, &outlen);
    if (!(rc = exchange(comm, rc, &sh, regs, n, out, outlen, pruned, &held)) && bytes_used)
        *bytes_used = bytes + outlen + held; /* the slices' rows, this part's outputs, one other's */
    share_free(&sh);
    free(out);
    return rc;
}
