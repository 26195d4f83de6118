/*
 * engine/engine.h - database-scan engines (never installed): the interface
 * every engine implements (swgpu_engine_ops_t, its capabilities), the CPU
 * engine (src/cpu) and the declarations of the CUDA engine (src/cuda)
 * and of the GPU pair feeder.
 *
 * An engine's state is made by create() and freed by destroy(); scores it
 * writes go to buffers the caller owns.
 */
#ifndef SWGPU_ENGINE_H
#define SWGPU_ENGINE_H

#include "score/score.h"
#include "io/io.h"

/** Counters an engine fills during a scan (added to, not reset). */
typedef struct {
    uint64_t cells;      /* qlen * residues scanned */
    uint64_t overflows;  /* targets recomputed at a wider precision */
    double gpu_seconds;  /* CUDA-event time of the scan's kernels (the slowest GPU), added
                            up over scans; 0 where not measured (CPU, streamed database) */
} swgpu_scan_stats_t;

/**
 * Receives the scores of one query of a scan_many() call: i is the query's
 * index in the call's arrays, scores[k] its exact score against sorted
 * database sequence k (valid only during the call).  The engine calls it
 * once per query, in any query order, never from two threads at once.  A
 * negative return (a status, last_error set) stops the scan; scan_many()
 * then returns that status.
 */
typedef int (*swgpu_scan_sink_t)(void *user, size_t i, const int32_t *scores);

/**
 * A sink's optional companion: the engine is about to hand queries idx[0]
 * .. idx[n-1] to the sink, in that order, with rows[j] the scores of
 * idx[j], valid until the sink has had each of them.  The receiver may
 * prepare from them (on threads of its own, done before it returns); it
 * must not depend on being called (an engine that has no batch at hand
 * does not call it).  Called from the thread that calls the sink, never
 * during a sink call; a negative return stops the scan as the sink's does.
 * An engine with SWGPU__CAP_AHEAD_THREADS calls it instead from its scanning
 * threads, several at once: each call for one query (n = 1) just before
 * that query's sink call, on the same thread, and during other queries'
 * sink calls; the receiver must then work on distinct queries at once.
 */
typedef int (*swgpu_scan_ahead_t)(void *user, size_t n, const size_t *idx,
                                  const int32_t *const *rows);

/**
 * A database-scan engine.  create() prepares per-database state (for a GPU:
 * the uploaded database); scan() scores one query (its residues with m's
 * rows, or a PSSM: swgpu__query_t) against every database sequence and
 * writes exact 32-bit scores indexed by SORTED position.
 * scan_many() (optional, NULL: the caller loops over scan()) scores nq
 * queries, batching them as the engine sees fit (many short queries share
 * one pass over a small database), and hands each query's scores to sink
 * (a batch's first to ahead, when not NULL and the engine has them);
 * st gets the cells and overflows of all of them.  Scores are identical to
 * scan()'s for every query.
 */
/* What an engine offers beyond scanning (swgpu_engine_ops_t.caps): callers
 * ask for these, never for an engine's name. */
enum {
    SWGPU__CAP_GPU = 1,          /* it scans on GPUs: a host core is kept to feed them, and
                                    hits' ends and stretch scores may go to a GPU too */
    SWGPU__CAP_AHEAD_THREADS = 2 /* it calls ahead from several threads at once (above) */
};

typedef struct swgpu_engine_ops {
    const char *name;   /* for messages and the result's backend field */
    int (*create)(const swgpu_db_t *db, const swgpu_matrix_t *m,
                  const swgpu_opts_t *o, void **state);
    int (*scan)(void *state, const swgpu__query_t *q, int32_t *scores, swgpu_scan_stats_t *st);
    void (*destroy)(void *state);
    int (*scan_many)(void *state, size_t nq, const swgpu__query_t *q, swgpu_scan_sink_t sink,
                     swgpu_scan_ahead_t ahead, void *user, swgpu_scan_stats_t *st);
    unsigned caps;      /* SWGPU__CAP_* */
} swgpu_engine_ops_t;


/* engines (each defined where it is implemented) */
extern const swgpu_engine_ops_t swgpu__engine_ref;
extern const swgpu_engine_ops_t swgpu__engine_cpu; /* src/cpu/engine.c */
/**
 * Best local scores and ends of many pairs on the GPU (src/cuda/pairs.cu):
 * positions [qoff, qoff + qlen) of query q against subject t, scored as
 * swgpu__cpu_score_pair_q scores that stretch, with the same end by the
 * same tie rule (qend relative to qoff; 0 and 0 for a score of 0).  known
 * > 0: the pair's best score, checked (SWGPU_ERANGE, internal error, when
 * the GPU's differs).  done: 1 when computed; 0 when the pair does not
 * fit the kernel's 32-bit cells (the caller computes it).  begin: the
 * begin of the alignment too, by the reference's reverse pass and tie rule
 * (swgpu__ref_start), or -1 when the GPU did not have it.  Defined in
 * builds with CUDA (SWGPU_HAVE_CUDA) only.  One context per
 * user; swgpu__cu_pairs_run may be called from any thread (calls take
 * turns).  Profiles are kept between calls, keyed by the query's res, rows
 * and len, which must not change while the context lives.
 */
typedef struct {
    const swgpu__query_t *q;
    size_t qoff, qlen;
    const uint8_t *t;
    size_t tlen;
    int32_t known;
    int begin;            /* with known > 0 and qoff 0: the begin as well */
    int32_t score;
    int64_t qend, tend;
    int64_t qbeg, tbeg;   /* begin: swgpu__ref_start's begin, -1 when not had */
    int done;
} swgpu__cu_pair_t;
typedef struct swgpu__cu_pairs swgpu__cu_pairs_t;
int swgpu__cu_pairs_create(const swgpu_matrix_t *m, int gap_open, int gap_extend,
                           swgpu__cu_pairs_t **out);
int swgpu__cu_pairs_run(swgpu__cu_pairs_t *P, swgpu__cu_pair_t *jobs, size_t n);
/** Forget the profiles kept (their queries may be freed from now on). */
void swgpu__cu_pairs_forget(swgpu__cu_pairs_t *P);
void swgpu__cu_pairs_destroy(swgpu__cu_pairs_t *P);

/** Host bytes the CUDA engine gives a batch's scores when it streams its
 *  database's chunks (each query of a batch holds a score for every database
 *  sequence, and every batch streams every chunk again): 256 MB, or a
 *  quarter of a byte per residue of the database when that is more, so that
 *  a database of tens of millions of sequences is not streamed once per
 *  query (the UniRef50-size database, 57 M sequences: 229 MB a query).
 *  search/stream.c counts what passes 256 MB in its parts' memory. */
#define SWGPU__GPU_SCORE_BYTES_MIN ((uint64_t)256 << 20)
static inline uint64_t swgpu__gpu_score_bytes(uint64_t residues)
{
    return residues / 4 > SWGPU__GPU_SCORE_BYTES_MIN ? residues / 4 : SWGPU__GPU_SCORE_BYTES_MIN;
}

#if SWGPU_HAVE_CUDA
extern const swgpu_engine_ops_t swgpu__engine_cuda; /* src/cuda/engine.cu */
/** The CUDA engine's GPUs: the visible CUDA devices (0 when none or no
 *  driver), or as SWGPU_CUDA_DEVICES lists them (swgpu__gpu_map: a device
 *  may serve several); a bad value of it: its error status, reported. */
int swgpu__cuda_device_count(void);
/** GPU gpu's CUDA device (0 past the GPUs). */
int swgpu__cuda_device_of(int gpu);
/** Set up the driver and the first `gpus` GPUs' contexts (0: all) on a
 *  background thread; the engine and swgpu__cuda_device_count wait for it. */
void swgpu__cuda_prepare(int gpus);
/** Wait until a set-up started by swgpu__cuda_prepare is complete. */
void swgpu__cuda_prepare_wait(void);
#endif

#endif /* SWGPU_ENGINE_H */
