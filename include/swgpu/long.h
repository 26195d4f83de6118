/*
 * swgpu/long.h - long pairwise alignment (two sequences of any
 * length, bounded memory, CPU or GPUs, split over processes) and its
 * outputs (summary, SAM, pairwise text, SVG).
 * Included by swgpu.h: include <swgpu.h>, not this file.
 */
#ifndef SWGPU_LONG_API_H
#define SWGPU_LONG_API_H

#include "swgpu/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------- long pairwise alignment */

/**
 * A progress report of swgpu_align_long().  The phases, in order:
 * "prepass" (the CPU engine's pruned score pass only, when the seed chain
 * found no strong alignment: a cheap pass that finds a score to prune
 * with), "score", "reverse" and "traceback" (not
 * with score_only).  A phase's cells are those of the passes it runs (all
 * of the matrix for "prepass" and "score", the rectangle up to the end for
 * "reverse"); a cell is done once computed or skipped by pruning, so that
 * phase_done / phase_seconds is the phase's rate with pruned cells counted
 * as done (as the score pass's GCUPS in swgpu_long_stats_t) and
 * phase_seconds * (phase_total - phase_done) / phase_done an estimate of
 * the time left (pruned cells cost little, so it is only an estimate).
 * The traceback's total is not known in advance: phase_estimated is 1 and
 * phase_total a model of it (its first level's forward passes, then for
 * every piece a reverse pass, forward passes and the full-matrix traceback
 * of the smallest pieces, along a straight path), revised with the actual
 * pieces after each level (an estimate that falls short grows beyond the
 * cells done, so that only the phase's last report has fraction 1).  Each
 * phase begins with a report where phase_done is 0 and ends with one where
 * fraction is 1 and phase_total == phase_done.
 */
typedef struct {
    const char *phase;      /* "prepass", "score", "reverse" or "traceback" (static string) */
    double fraction;        /* of the phase done, 0..1: phase_done / phase_total, never
                               decreasing within a phase (an estimate revised upwards
                               does not set it back) */
    uint64_t cells;         /* cells computed so far, all phases (pruned ones not counted) */
    double seconds;         /* since the call began */
    uint64_t phase_done;    /* cells of the phase done: computed or pruned */
    uint64_t phase_total;   /* cells of the phase in all: exact, or an estimate (below) */
    int phase_estimated;    /* 1: phase_total is an estimate (the traceback) */
    double phase_seconds;   /* since the phase began */
} swgpu_long_progress_t;

/**
 * Progress callback of swgpu_align_long(): p is valid during the call only.
 * Called from the calling thread, at most a few times a second, and at the
 * start and the end of each phase; it must not call back into the library
 * for the same alignment.
 */
typedef void (*swgpu_progress_fn)(const swgpu_long_progress_t *p, void *user);

/**
 * A transport between the parts of a computation split across processes
 * (swgpu-mpi implements it with MPI; threads of one process can too).
 * Every part calls the same library function with the same arguments and
 * its own transport; the library moves data through these callbacks, each
 * returning 0 or a negative status.
 */
typedef struct {
    int rank;   /* this part, 0 .. size-1 */
    int size;   /* number of parts */
    void *user;
    /* Point to point (boundary columns): len bytes to part `to`, from part
     * `from`.  tag < 32768; messages with the same sender and tag arrive in
     * the order they were sent.  Called from several threads at once.  A
     * send may return before or after the message is received (MPI's
     * eager or rendezvous sends); the library needs neither.  A send that
     * fails must make the matching receive fail too, or end every part
     * (MPI's default error handler aborts the job): the call then fails on
     * every part, those whose transfers failed with their own status, the
     * others with SWGPU_EPART, and no part waits forever. */
    int (*send)(void *user, int to, int tag, const void *buf, size_t len);
    int (*recv)(void *user, int from, int tag, void *buf, size_t len);
    /* Collective, called by every part in the same order from the thread
     * that called the library: part p's len[p] bytes lie in buf at offset
     * len[0] + ... + len[p-1]; on return buf holds every part's bytes. */
    int (*allgather)(void *user, void *buf, const size_t *len);
} swgpu_comm_t;

/** Options of swgpu_align_long(); fill with swgpu_long_opts_init(). */
typedef struct {
    int gap_open;               /* gap of length k costs gap_open + k*gap_extend */
    int gap_extend;
    uint64_t max_host_memory;   /* bytes the call may hold on the host (0: 4 GiB) */
    uint64_t max_device_memory; /* bytes it may hold on the GPU (0: 4 GiB) */
    int score_only;             /* 1: score and coordinates, no CIGAR (no traceback) */
    swgpu_backend_t backend;    /* auto: cuda when a device is present, else cpu;
                                   ref: swgpu_align() (for checks) */
    int threads;                /* CPU threads; 0 = all cores */
    int prune;                  /* 1 (default): skip blocks that provably cannot
                                   reach the best score (exact) */
    swgpu_progress_fn progress; /* NULL: no reports */
    void *progress_user;
    const swgpu_comm_t *comm;   /* NULL: this process alone.  Otherwise every part of
                                   comm calls swgpu_align_long() with the same arguments and
                                   the passes are split across the parts by target columns
                                   (see swgpu_align_long); part 0 gets the CIGAR */
    const char *checkpoint;     /* NULL: none.  A file holding where the call stands (see
                                   swgpu_align_long: Checkpoints) */
    double checkpoint_every;    /* seconds between checkpoints (default 600) */
    int gpus;                   /* cuda: GPUs each pass is split across, the first N visible
                                   (0, the default: all) */
    int gpu_parts;              /* cuda: column slices a pass over few regions is cut into,
                                   dealt round the GPUs (0: automatic, none on one GPU and up
                                   to 8 per GPU on several; at most 256); more than one on
                                   one GPU checks the split there */
} swgpu_long_opts_t;

/** What a swgpu_align_long() call did. */
typedef struct {
    const char *backend;        /* "cpu", "cuda" or "ref" (static string) */
    uint64_t cells;             /* DP cells computed, all phases */
    uint64_t cells_pruned;      /* cells skipped by pruning, all phases */
    uint64_t score_cells;       /* alen * blen: the score-pass matrix */
    uint64_t score_pruned;      /* of which skipped by pruning */
    double score_seconds;       /* phase 1: best score and its end */
    double reverse_seconds;     /* phase 2: reverse pass (start, split rows) */
    double traceback_seconds;   /* phase 3: crossing points, sub-problems, CIGAR */
    double total_seconds;
    double score_gcups;         /* score_cells / score_seconds / 1e9; 0 when the score
                                   pass was not run whole in this call (resumed) */
    uint64_t peak_host_bytes;   /* largest working memory held on the host */
    uint64_t peak_device_bytes; /* ... and on the GPU (0 on the CPU) */
    int levels;                 /* depth of the split recursion */
    uint64_t subproblems;       /* pieces traced back on the CPU */
    int gpus;                   /* GPUs the passes ran on (0 on the CPU) */
    int64_t seed_bound;         /* the score of an alignment chained from exact seed
                                   matches, which the score pass prunes with from its
                                   start (0: none found, or no pruning) */
    int resumed;                /* the phase the call resumed in from a checkpoint (1
                                   pre-pass, 2 score pass, 3 reverse pass, 4 traceback),
                                   0 none: the work before it is in no count or time */
} swgpu_long_stats_t;

/** Defaults: gaps as swgpu_opts_init() for the alphabet, 4 GiB budgets,
 *  backend auto, threads 0, prune 1, no progress, no checkpoint (every 600
 *  seconds when one is given), one GPU, one partition per GPU. */
void swgpu_long_opts_init(swgpu_long_opts_t *o, swgpu_alphabet_t alphabet);

/**
 * Optimal local alignment (affine gaps) of two long sequences, exactly as
 * swgpu_align() defines it (same score, same end and begin coordinates, same
 * tie rule) but in memory bounded by the budgets, multithreaded on the CPU
 * or on an NVIDIA GPU.  a is the query (I in the CIGAR), b the target (D).
 * Three phases: a score pass (best score and its end), a reverse pass from
 * the end (the begin, and rows saved at a spacing the budget allows), then a
 * divide-and-conquer traceback that recomputes only the pieces the path
 * crosses.  The CPU and the GPU paths give identical alignments for the same
 * options; the alignment chosen among co-optimal ones may depend on the
 * memory budget.  out is the caller's (see swgpu_aln_t); st may be NULL.
 * SWGPU_EBUDGET if the budget cannot hold the minimum (the message says how
 * much is needed), SWGPU_ENODEV if backend cuda is asked for and absent,
 * SWGPU_ERANGE if a sequence is longer than 2^31 - 1.  Scores are exact
 * whatever their size (out->score is 64-bit).  Pairs whose values may pass
 * +-2^29 (the sum of the lengths times the largest score or gap cost) run,
 * on either engine, in 32-bit lanes rebased per block, which needs the
 * largest score plus gap open plus gap extend at most 348,165 (SWGPU_ERANGE
 * otherwise).
 * Thread safety: concurrent calls on different outputs are safe (sequences,
 * matrix and options shared); progress is called on the calling thread.
 *
 * Split across parts (o->comm with size > 1, every part calling with the
 * same arguments): the engines of all parts compute each pass together
 * - the score pass, the reverse pass and the traceback's forward passes
 * cut by target columns, one slice per part, the boundary columns passed
 * from part to part strip by strip through comm->send/recv so that the
 * parts work as a pipeline; batches of many regions and the traceback's
 * pieces dealt out whole - and every part gets the alignment, identical to
 * the single-process one (same options, same budget).  Each part uses
 * o->threads threads and holds what one process would (the saved rows are
 * shared out through comm->allgather).  The engine is the same on every
 * part: the CUDA one (each part on its first visible device, o->gpus and
 * o->gpu_parts unused) when every part asks for cuda or auto and has a
 * device, else the CPU one (auto); backend cuda on a part without a device
 * gives it SWGPU_ENODEV (the others SWGPU_EPART).  ref: each part computes
 * alone.  When one part fails, every part returns an
 * error: that part its own, the others SWGPU_EPART.
 *
 * Checkpoints (o->checkpoint, a file path): every o->checkpoint_every
 * seconds the call saves where it stands - the state of the pass running
 * (the score pass, its pre-pass or the reverse pass: the strips done, the
 * last one's bottom row, the rows saved so far) or, once the reverse pass
 * is done, what the traceback starts from - into a temporary file beside
 * it, then renamed over it, so that the file always holds a whole
 * checkpoint.  A call that finds the file resumes from it and returns
 * exactly what an uninterrupted call would have; a checkpoint made for
 * other sequences or options (scoring, memory budgets, score_only, prune)
 * is refused with SWGPU_EINVAL, a damaged one with SWGPU_EFORMAT, both
 * naming the file.  The call removes the file when it succeeds.  The CPU
 * engine saves inside a pass (it lets the strips in flight finish, then
 * writes); the GPU engine saves between passes and starts a pass that was
 * interrupted from its beginning (the state is the same: a GPU engine
 * that runs strips from a given one could start from it).  Not with
 * o->comm (SWGPU_EINVAL).  Only one call at a time may use a file.
 */
int swgpu_align_long(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen,
                     const swgpu_matrix_t *m, const swgpu_long_opts_t *o,
                     swgpu_aln_t *out, swgpu_long_stats_t *st);

/** Reverse complement of DNA codes (A<->T, C<->G, N and IUPAC codes mapped
 *  to their complements); out may equal in. */
void swgpu_dna_revcomp(const uint8_t *in, size_t n, uint8_t *out);

/* ------------------------------------------------ long alignment output */

/**
 * A long alignment as its writers read it: the two sequences as aligned
 * and what swgpu_align_long() returned for them.  Everything is the
 * caller's; the writers only read it.  On the minus strand (DNA) target is
 * the target's reverse complement, the sequence aln's target interval is
 * in, while the outputs give target positions on the forward strand.
 */
typedef struct {
    const char *query_id, *target_id; /* names, written as swgpu_put_name() does (NULL: none) */
    const uint8_t *query, *target;    /* residue codes, query_len and target_len of them */
    size_t query_len, target_len;
    swgpu_alphabet_t alphabet;        /* SWGPU_PROTEIN or SWGPU_DNA */
    int minus;                        /* 1: aligned with the target's reverse complement */
    const swgpu_aln_t *aln;           /* without a CIGAR (n_cigar 0) when score-only */
} swgpu_long_record_t;

/*
 * The outputs of `swgpu align`, byte for byte, written to fp (the caller's
 * stream, neither flushed nor closed).  Each checks r first: SWGPU_EINVAL
 * (nothing written) for a NULL argument, an alphabet other than protein or
 * DNA, a protein on the minus strand, an alignment outside its sequences or
 * a CIGAR that does not span its intervals.  SWGPU_EIO when fp's error
 * state is set once written (the caller reports what a later flush or
 * close finds).  Thread safety: concurrent calls on different streams are
 * safe.
 */
/** The summary: names and lengths, the strand (DNA), the score, with other
 *  (the other strand's alignment, of which only minus and aln->score are
 *  read; NULL: one strand) an "other_strand" line, the 1-based ranges
 *  (the target's high to low on minus), and unless score_only the
 *  length, identity, mismatches, gaps and the CIGAR; "alignment none" for
 *  a score of 0. */
int swgpu_long_write_summary(FILE *fp, const swgpu_long_record_t *r,
                             const swgpu_long_record_t *other, int score_only);
/** SAM 1.6: @HD, @SQ (the target), @PG with VN and, when argc > 0, CL (the
 *  argc words of argv joined by spaces, each written as swgpu_put_name()
 *  does), then one record: soft clips for the unaligned ends, mapping
 *  quality 255, AS (score) and NM (mismatches and gap columns); on the
 *  minus strand flag 16 with the query reverse-complemented and the CIGAR
 *  reversed; an unmapped record (flag 4) for a score of 0 or no CIGAR.
 *  SWGPU_EINVAL for a query id over SAM's 254 characters. */
int swgpu_long_write_sam(FILE *fp, const swgpu_long_record_t *r, int argc,
                         const char *const *argv);
/** Wrapped pairwise text: a header (names, lengths, strand, score,
 *  identities and gaps) and blocks of 60 columns, query, match line ('|'
 *  identical, '+' a pair m scores > 0) and target, with their 1-based
 *  positions (the target's on its forward strand).  m: the matrix the
 *  alignment was scored with (required). */
int swgpu_long_write_pair(FILE *fp, const swgpu_long_record_t *r, const swgpu_matrix_t *m);
/** An SVG picture (800 x 800 plot) of the alignment path, target on x
 *  (forward strand), query on y, with the names, score and identity. */
int swgpu_long_write_svg(FILE *fp, const swgpu_long_record_t *r);

#ifdef __cplusplus
}
#endif
#endif /* SWGPU_LONG_API_H */
