/*
 * cpu/cpu.h - the CPU scan engine (cpu/engine.c, never installed): the
 * database laid out in lanes of 8 or 16 bits, scanned by the striped SIMD
 * kernels of src/simd with exact 32-bit recomputation of overflows, on all
 * cores.  swgpu__engine_cpu (engine/engine.h) is its interface; what is
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

#endif /* SWGPU_CPU_H */
