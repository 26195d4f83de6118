/*
 * cpu/cpu.h - the CPU scan engine (never installed): the database laid
 * out in lanes of 8 or 16 bits (layout.c), scanned by the striped SIMD
 * kernels of src/simd with exact 32-bit recomputation of overflows, on all
 * cores (engine.c).  swgpu__engine_cpu (engine/engine.h) is its interface; what is
 * here is for tests and benchmarks.
 */
#ifndef SWGPU_CPU_H
#define SWGPU_CPU_H

#include "align/align.h"
#include "engine/engine.h"

/**
 * Create the CPU engine's state for one instruction set (the engine's
 * create() calls this with the best supported one, or the one named by the
 * environment variable SWGPU_CPU_ISA=scalar|sse41|avx2|avx512).
 * SWGPU_ENODEV if the CPU lacks isa.  Destroy with swgpu__engine_cpu.destroy.
 */
int swgpu__cpu_engine_create_isa(const swgpu_db_t *db, const swgpu_matrix_t *m,
                                 const swgpu_opts_t *o, swgpu__isa_t isa, void **state);

/**
 * Exact local alignment score of q (residues with m's rows, or a PSSM)
 * against t, 32-bit scalar (Gotoh, linear memory).  work holds at least
 * 2 * (q->len + 1) int32.  Used for the scalar "instruction set".
 */
int32_t swgpu__cpu_score32(const swgpu__query_t *q, const uint8_t *t, size_t tlen,
                           const swgpu_matrix_t *m, int gap_open, int gap_extend,
                           int32_t *work);

/* ---- shared by the files of cpu/: the engine's state (layout.c makes it,
 *      engine.c scans with it) ---- */

#define SWGPU__NO_SEQ UINT32_MAX /* the output slot of an empty lane */

/* The CPU engine's state for one database, matrix, gaps and instruction set. */
typedef struct {
    const swgpu_db_t *db;       /* borrowed: must outlive the engine */
    swgpu_matrix_t m;           /* copy */
    int gap_open, gap_extend;
    int threads;
    swgpu__isa_t isa;
    const swgpu__sw_kernels_t *k; /* NULL for the scalar instruction set */
    int use8, use16;            /* the 8-bit / 16-bit phases are exact for m and gaps */
    int32_t smax;               /* the highest score in m */
    int8_t row8[SWGPU_NCODES * SWGPU_NCODES];
    int16_t row16[SWGPU_NCODES * SWGPU_NCODES];
    uint8_t row16b[SWGPU_NCODES * 2 * SWGPU_NCODES];
    /* the 8-bit layout: units of k->lanes8 lanes, longest first (see layout_db) */
    size_t nunit;
    uint64_t *ucol;             /* nunit+1: unit u is columns [ucol[u], ucol[u+1]) of cols */
    uint8_t *cols;              /* interleaved residues, ucol[nunit] * lanes8 bytes */
    size_t *uev;                /* nunit+1: unit u's refill events are events[uev[u] ...] */
    swgpu__sw_event_t *events;
    size_t *uslot;              /* nunit+1: unit u's kernel outputs map to slot_k[uslot[u] ...] */
    uint32_t *slot_k;           /* sorted index of each output, SWGPU__NO_SEQ for an empty lane */
    size_t max_slots;           /* most outputs of one unit */
    /* sequences of sparse units (see layout_db), scored one by one with the
     * 32-bit striped pair kernel instead */
    uint32_t *pair_k;
    size_t npair;
    uint8_t *is_pair;           /* per sorted index: 1 for the sequences in pair_k */
    uint32_t *codes;            /* per sorted index: bit c set if code c occurs (8-bit layout) */
    swgpu_matrix_t mt;          /* m transposed: scores with query and target swapped */
} swgpu__cpu_state_t;

/** The engine's create() (the instruction set: SWGPU_CPU_ISA or the best
 *  supported) and destroy(). */
int swgpu__cpu_create(const swgpu_db_t *db, const swgpu_matrix_t *m, const swgpu_opts_t *o,
                      void **state);
void swgpu__cpu_destroy(void *state);

#endif /* SWGPU_CPU_H */
