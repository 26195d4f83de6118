/*
 * base/base.h - what every part of libswgpu uses (never installed): the
 * failure and logging calls, clocks, the core count, file identities, the
 * one reading of SWGPU_BACKEND.
 *
 * Errors: a function that fails returns a negative SWGPU_E* status and has
 * recorded its message with swgpu__fail (swgpu_last_error() gives it to the
 * caller); nothing here allocates what a caller must free.
 */
#ifndef SWGPU_BASE_H
#define SWGPU_BASE_H

#include "swgpu.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>

/** Record a detailed message for swgpu_last_error() and return status. */
int swgpu__fail(int status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/** 1 when a message of this level reaches a logger. */
int swgpu__log_on(swgpu_log_level_t level);
/** Log through the installed logger (no-op when none). */
void swgpu__log(swgpu_log_level_t level, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/** Monotonic wall-clock seconds. */
double swgpu__now(void);
/** CPU seconds the calling thread has used (for phase timings; 0 if unknown). */
double swgpu__thread_cpu(void);
/** Number of online CPU cores (>= 1). */
int swgpu__ncores(void);
/** fn(ctx, i) for i in [0, n) on up to `threads` threads (0: all cores; at
 *  most 256), the calling thread one of them, each i once, in no set order;
 *  returns when all are done.  A thread that cannot be started leaves its
 *  share to the others.  fn must not fail the loop: it records its own
 *  failures (and may skip the rest once one is recorded). */
void swgpu__par_for(size_t n, int threads, void (*fn)(void *ctx, size_t i), void *ctx);
/** The lowest i in [0, n) for which bad(ctx, i) is nonzero (*why: that
 *  value), found in blocks of blk on `threads` threads (0: all cores): the
 *  answer of one pass in order.  n when none is; SIZE_MAX when out of
 *  memory (nothing checked). */
size_t swgpu__par_first(size_t n, size_t blk, int threads, int (*bad)(void *ctx, size_t i),
                        void *ctx, int *why);

/** A file's identity (device and inode), to recognise it under any name. */
typedef struct {
    uint64_t dev, ino;
} swgpu__file_id_t;

/** lround(v) for |v| < 2^31 without the library call (PSSM scaling, psi.c):
 *  v - trunc(v) is exact there, so halfway cases round away from zero as
 *  lround does. */
static inline int32_t swgpu__round_away(double v)
{
    long long t = (long long)v;
    double d = v - (double)t;
    return (int32_t)(t + (d >= 0.5) - (d <= -0.5));
}

/* ---------------------------------------- environment (env.c) */

/** SWGPU_BACKEND applied to *b: when *b is SWGPU_BACKEND_AUTO and the
 *  variable is set, *b becomes the backend it names (ref, cpu or cuda;
 *  auto or empty: unchanged).  Another value: SWGPU_EINVAL, "SWGPU_BACKEND=X:
 *  expected ref, cpu, cuda or auto", *b unchanged.  A backend asked for
 *  explicitly stays (the variable is not read). */
/** 0 when SWGPU_CUDA_PAIRS=0 keeps the hits' ends and stretch scores on the
 *  host, else 1 (env.c). */
int swgpu__env_gpu_pairs(void);
int swgpu__env_backend(swgpu_backend_t *b);
/** The most sequences a database may hold: 2^32 - 1, for its sorted and
 *  database indices are 32-bit (the file's orig and rank arrays, the
 *  engines' subjects, the search's candidates); offsets, residue counts
 *  and sizes are 64-bit everywhere.  SWGPU_DB_MAX_SEQS=N (1 <= N < 2^32)
 *  lowers it, for the tests (another value: ignored). */
uint64_t swgpu__db_max_seqs(void);
/** SWGPU_ERANGE, "KIND NAME: N sequences, more than the M a database may
 *  hold (32-bit sequence indices)" (name NULL: "KIND: ..."), when n >
 *  swgpu__db_max_seqs(); else 0. */
int swgpu__check_db_seqs(uint64_t n, const char *kind, const char *name);
/** The CUDA engine's GPUs: map[i] = the CUDA device of GPU i, from s (the
 *  value of SWGPU_CUDA_DEVICES): NULL or empty, each of the phys devices
 *  once (at most max); else a list of device numbers separated by commas,
 *  a number given twice making two GPUs share one device (so that tests and
 *  checks run the several-GPU paths on a machine with one).  Returns the
 *  GPU count, or SWGPU_EINVAL (not such a list, more than max entries) /
 *  SWGPU_ENODEV (a device >= phys), naming the variable and its value. */
int swgpu__gpu_map(const char *s, int phys, int *map, int max);

/* A function compiled twice, for AVX2 and for any x86-64, the copy chosen
 * when the program is loaded (GCC's target_clones; the integer results are
 * the same either way).  Not under ThreadSanitizer, whose runtime is not yet
 * set up when the loader runs the chooser (the program would crash at
 * start-up), nor with other compilers. */
#if defined(__GNUC__) && defined(__x86_64__) && !defined(__clang__) && !defined(__SANITIZE_THREAD__)
#define SWGPU_CLONES_AVX2 __attribute__((target_clones("avx2", "default")))
#else
#define SWGPU_CLONES_AVX2
#endif

#endif /* SWGPU_BASE_H */
