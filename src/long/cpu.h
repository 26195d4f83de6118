/*
 * cpu.h - the CPU engine's internals, shared by cpu.c (the batch, its
 * threads and checkpoints) and cpu_strip.c (one strip); its interface is
 * long.h's swgpu__lcpu_run.
 */
#ifndef SWGPU_LONG_CPU_H
#define SWGPU_LONG_CPU_H

#include "long/long.h"
#include "simd/simd.h"

#include <pthread.h>
#include <stdatomic.h>

#define SH SWGPU__LONG_SH
#define NEG SWGPU__LONG_NEG
#define CHUNK SWGPU__LONG_CHUNK /* columns of a block: the pruning and hand-over unit */
#define DROP SWGPU__LONG_DROP
#define INF32 SWGPU__LONG_INF32
#define NEG64 SWGPU__LONG_NEG64

typedef struct {
    int64_t best;
    int64_t bi, bj;
} sbest_t;

/* a worker's buffers: the scalar tile's column, or the SIMD strip state */
typedef struct {
    int32_t *colH, *colE;     /* SH + 1 each: left column, H then E entering */
    int32_t *prof;            /* SIMD: 32 codes x SH rows */
    int32_t *hp, *hc, *e;     /* SIMD: SH each */
    int32_t *tH, *tF;         /* wide scores: the row above a block, rebased (CHUNK each) */
} wbuf_t;

typedef struct {
    const swgpu__lseqs_t *q;
    const swgpu__lscore_t *sc;
    swgpu__lreg_t *regs;
    size_t n;
    const swgpu__sw_kernels_t *k; /* SIMD kernels, or NULL: the scalar tile */
    int64_t *first;          /* n+1: first ticket of each region */
    int32_t **ring;          /* per region: H slot 0, H slot 1, F slot 0, F slot 1, each w+1 */
    uint32_t *codes;         /* per region: the residue codes of its columns (bit mask) */
    uint8_t **low;           /* per region: per ring slot and chunk, 1 if skipped (not stored) */
    int64_t **rbase;         /* wide scores, per region: per ring slot and chunk, the base */
    int64_t *nchunks;        /* per region */
    _Atomic int64_t *progress; /* per ticket: bottom-row columns published */
    sbest_t *sb;             /* per ticket */
    _Atomic int64_t ticket;
    _Atomic uint64_t cells;
    _Atomic uint64_t pruned;
    _Atomic int64_t gbest;   /* best score found so far by pruned local regions */
    _Atomic int running;
    wbuf_t *wb;              /* per worker */
    /* checkpoints: workers park between strips while pause is set */
    _Atomic int pause;
    int parked;
    pthread_mutex_t plock;
    pthread_cond_t pcv;
    int locks;               /* plock and pcv initialised */
    _Atomic int wnext;       /* next worker slot */
    _Atomic int comm_rc;     /* first failed send or receive */
} job_t;

/* Better cell under the tie rule (long.h). */
static inline int better(int64_t s, int64_t i, int64_t j, const sbest_t *b)
{
    return swgpu__lbest_better(s, i, j, b->best, b->bi, b->bj);
}

/** Strip s of region r of the batch, as ticket t, with a worker's buffers. */
void swgpu__lc_strip(job_t *J, size_t r, int64_t s, int64_t t, wbuf_t *wb);
/** A part that could not set up: every boundary column of the batch's
 *  split regions passed on as lower bounds. */
void swgpu__lc_drain(swgpu__lreg_t *regs, size_t n, int wide);

#endif
