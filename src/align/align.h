/*
 * align/align.h - aligning one pair (never installed): the best score and
 * end of a pair of any length (striped SIMD over bands of query rows,
 * threads pipelined: cpu_pair.c), the begin by a reverse pass (begin.c),
 * and the path in linear memory (Myers-Miller: path.c), with CIGAR and
 * alignment statistics; swgpu_align and the CIGAR helpers of the public
 * API.  The rows of the begin and path passes go to the SIMD kernels of
 * src/simd when the CPU has them, else to the scalar building blocks of
 * src/ref (the same values).
 *
 * An alignment's CIGAR is owned by its swgpu_aln_t (swgpu_aln_free).
 * Errors return a negative status with the message recorded.
 */
#ifndef SWGPU_ALIGN_H
#define SWGPU_ALIGN_H

#include "ref/ref.h"
#include "simd/simd.h"

/*
 * Start of the best local alignment that ends at (qend, tend) (exclusive)
 * with the given score > 0: the reverse pass.  Among all begin cells
 * (qbeg, tbeg) from which an alignment of q[qbeg,qend) x t[tbeg,tend) that
 * opens with a match/mismatch column reaches exactly `score`, it picks the
 * largest tbeg, then the largest qbeg (the shortest alignment).
 * SWGPU_EINVAL if no begin reaches the score (wrong inputs).
 */
int swgpu__ref_start(const uint8_t *q, size_t qlen, const uint8_t *t, size_t tlen,
                     const swgpu_matrix_t *m, int gap_open, int gap_extend,
                     int32_t score, int64_t qend, int64_t tend,
                     int64_t *qbeg, int64_t *tbeg);

/*
 * Optimal GLOBAL affine alignment path of the rectangle
 * q[a->qbeg, a->qend) x t[a->tbeg, a->tend) in linear memory (Myers-Miller),
 * written into a->cigar (grown with realloc), with the statistics filled
 * (length, n_ident, n_mismatch, n_gapopen, n_gaps).  The path's score must
 * equal a->score (true when the rectangle comes from swgpu__ref_score +
 * swgpu__ref_start); otherwise SWGPU_EINVAL ("internal error").
 * The path is deterministic: each split takes the first best query column
 * (crossing at a node before crossing inside a D gap); in the small
 * full-matrix blocks H prefers M, then I, then D, and a gap state prefers
 * opening over extending.  Other engines may pick another optimal path:
 * compare CIGARs by rescoring (swgpu_cigar_score), not as text.
 * Memory: O(M + N) for an M x N rectangle (rows, reversed copies) plus
 * small traceback blocks (at most 64 K cells, or two rows); never M x N.
 */
int swgpu__ref_path(const uint8_t *q, size_t qlen, const uint8_t *t, size_t tlen,
                    const swgpu_matrix_t *m, int gap_open, int gap_extend,
                    swgpu_aln_t *a);

/*
 * swgpu_align's steps after the end: given the best score and its end (as
 * swgpu__ref_score gives them, or any engine with the same tie rule), the
 * begin (swgpu__ref_start) and, unless score_only, the path into out.
 */
int swgpu__align_from_end(const uint8_t *q, size_t qlen, const uint8_t *t, size_t tlen,
                          const swgpu_matrix_t *m, int gap_open, int gap_extend, int32_t score,
                          int64_t qend, int64_t tend, int score_only, swgpu_aln_t *out);

/*
 * The same three with the instruction set chosen by the caller.  The plain
 * functions above run the SIMD kernels of simd/simd.h when the CPU has
 * them (the best one, or the one SWGPU_CPU_ISA names); *_scalar run the
 * plain C code; *_isa take isa, a swgpu__isa_t (simd/simd.h: 0 scalar,
 * 1 sse41, 2 avx2, 3 avx512 (the avx2 kernels); one this CPU lacks runs the
 * scalar code), or -1 for the default; isa | SWGPU__ALN_ONLY32 never uses
 * the 16-bit kernels (tests).  All give identical results: the kernels
 * compute the same values as the scalar passes.
 */
#define SWGPU__ALN_ONLY32 0x100
int swgpu__ref_start_scalar(const uint8_t *q, size_t qlen, const uint8_t *t, size_t tlen,
                            const swgpu_matrix_t *m, int gap_open, int gap_extend,
                            int32_t score, int64_t qend, int64_t tend,
                            int64_t *qbeg, int64_t *tbeg);
int swgpu__ref_start_isa(const uint8_t *q, size_t qlen, const uint8_t *t, size_t tlen,
                         const swgpu_matrix_t *m, int gap_open, int gap_extend,
                         int32_t score, int64_t qend, int64_t tend,
                         int64_t *qbeg, int64_t *tbeg, int isa);
int swgpu__ref_path_scalar(const uint8_t *q, size_t qlen, const uint8_t *t, size_t tlen,
                           const swgpu_matrix_t *m, int gap_open, int gap_extend,
                           swgpu_aln_t *a);
int swgpu__ref_path_isa(const uint8_t *q, size_t qlen, const uint8_t *t, size_t tlen,
                        const swgpu_matrix_t *m, int gap_open, int gap_extend, swgpu_aln_t *a,
                        int isa);
int swgpu__align_from_end_scalar(const uint8_t *q, size_t qlen, const uint8_t *t, size_t tlen,
                                 const swgpu_matrix_t *m, int gap_open, int gap_extend,
                                 int32_t score, int64_t qend, int64_t tend, int score_only,
                                 swgpu_aln_t *out);
int swgpu__align_from_end_isa(const uint8_t *q, size_t qlen, const uint8_t *t, size_t tlen,
                              const swgpu_matrix_t *m, int gap_open, int gap_extend,
                              int32_t score, int64_t qend, int64_t tend, int score_only,
                              swgpu_aln_t *out, int isa);

/*
 * The same for a query given as swgpu__query_t (residues with m's rows, or
 * a PSSM: score/score.h): the start and path of swgpu__align_from_end_isa
 * (isa as there, -1 the default).  The alignment statistics compare q->res
 * with the target's residues.
 */
int swgpu__align_from_end_q(const swgpu__query_t *q, const uint8_t *t, size_t tlen,
                            const swgpu_matrix_t *m, int gap_open, int gap_extend, int32_t score,
                            int64_t qend, int64_t tend, int score_only, swgpu_aln_t *out,
                            int isa);

/* swgpu__align_from_end_q's path given the begin as well (as the reverse
 * pass gives it: the GPU's pair ends), never score-only. */
int swgpu__align_from_begin_q(const swgpu__query_t *q, const uint8_t *t, size_t tlen,
                              const swgpu_matrix_t *m, int gap_open, int gap_extend,
                              int32_t score, int64_t qbeg, int64_t tbeg, int64_t qend,
                              int64_t tend, swgpu_aln_t *out, int isa);

/* Recompute length, n_ident, n_mismatch, n_gapopen, n_gaps of a from its
 * cigar, qbeg and tbeg (the cigar is assumed to fit the sequences). */
void swgpu__aln_stats(swgpu_aln_t *a, const uint8_t *q, const uint8_t *t);


/**
 * Exact local alignment score of one pair, however long, with the end of
 * the best alignment chosen by the tie rule (smallest target end, then
 * smallest query end): the same results as swgpu__ref_score, including its
 * argument checks (SWGPU_EINVAL, SWGPU_EMATRIX, SWGPU_ERANGE).  *qend and
 * *tend are exclusive ends (0 when the score is 0); either may be NULL.
 * 32-bit SIMD (Farrar striped over bands of query rows, the bands pipelined
 * over threads; 0 = all cores) in O(qlen + tlen) memory plus one row pair
 * per thread and band in flight; small pairs go to the scalar reference.
 * Thread-safe.
 */
int swgpu__cpu_score_pair(const uint8_t *q, size_t qlen, const uint8_t *t, size_t tlen,
                          const swgpu_matrix_t *m, int gap_open, int gap_extend, int threads,
                          int32_t *score, int64_t *qend, int64_t *tend);

/** The same with the instruction set and the band height forced (tests,
 *  benchmarks); band_rows 0 picks the default. */
int swgpu__cpu_score_pair_isa(const uint8_t *q, size_t qlen, const uint8_t *t, size_t tlen,
                              const swgpu_matrix_t *m, int gap_open, int gap_extend, int threads,
                              swgpu__isa_t isa, size_t band_rows, int32_t *score, int64_t *qend,
                              int64_t *tend);

/** Progress of swgpu__cpu_score_pair_ex: cells finished so far, called
 *  from the calling thread only (after each of its chunks). */
typedef void (*swgpu__pair_prog_fn)(void *user, uint64_t cells);

/** The same with a progress callback (NULL: none); isa and band_rows as
 *  in swgpu__cpu_score_pair_isa. */
int swgpu__cpu_score_pair_ex(const uint8_t *q, size_t qlen, const uint8_t *t, size_t tlen,
                             const swgpu_matrix_t *m, int gap_open, int gap_extend, int threads,
                             swgpu__isa_t isa, size_t band_rows, swgpu__pair_prog_fn prog,
                             void *prog_user, int32_t *score, int64_t *qend, int64_t *tend);

/** The same for a query given as swgpu__query_t (residues with m's rows, or
 *  a PSSM: score/score.h). */
int swgpu__cpu_score_pair_q(const swgpu__query_t *q, const uint8_t *t, size_t tlen,
                            const swgpu_matrix_t *m, int gap_open, int gap_extend, int threads,
                            swgpu__isa_t isa, size_t band_rows, swgpu__pair_prog_fn prog,
                            void *prog_user, int32_t *score, int64_t *qend, int64_t *tend);


/**
 * Local score of q (residues with m's rows, or a PSSM) against t and its
 * end by swgpu__ref_score's tie rule
 * (smallest target end, then smallest query end), with the 16-bit LOCAL
 * kernel of isa (a swgpu__isa_t, < 0 the default) on the calling thread.
 * The caller checked the arguments (as swgpu__ref_score does).  Returns
 * SWGPU_OK, or 1 (nothing written) when the kernel does not apply: no
 * SIMD, an empty sequence, swgpu__aln_local_fits16 false, a query whose
 * scratch would exceed 8 MiB (about 110,000 residues), no memory.
 */
int swgpu__aln_local_score(const swgpu__query_t *q, const uint8_t *t, size_t tlen,
                           const swgpu_matrix_t *m, int gap_open, int gap_extend, int isa,
                           int32_t *score, int64_t *qend, int64_t *tend);

/* swgpu__ref_start's pass for a swgpu__query_t with the kernels k (NULL:
 * scalar); only32: never the 16-bit kernels (begin.c). */
int swgpu__align_start_k(const swgpu__query_t *Q, const uint8_t *t, size_t tlen,
                         const swgpu_matrix_t *m, int gap_open, int gap_extend, int32_t score,
                         int64_t qend, int64_t tend, int64_t *qbeg, int64_t *tbeg,
                         const swgpu__aln_kernels_t *k, int only32);

/*
 * The further alignments of one pair (hsps.c; swgpu_opts_t.max_hsps):
 * Waterman-Eggert / SIM's best local alignments that align no pair (i, j)
 * of the alignments forbidden before.  q and t (tlen residues) must
 * outlive the state.  swgpu__hsps_forbid() takes an alignment of q with t
 * (its CIGAR; coordinates in q and t) whose pairs no later alignment may
 * align; swgpu__hsps_next() writes the best alignment that aligns none of
 * the forbidden pairs into out (score 0 and no CIGAR when none scores > 0;
 * only its score, no CIGAR, when it scores below min_score), its end by
 * swgpu__ref_score's tie rule, its begin the largest target begin, then
 * query begin, that reaches the score.  It does not forbid the alignment it
 * returns: the caller does, when it keeps it.
 */
typedef struct {
    swgpu__query_t q;
    const uint8_t *t;
    size_t tlen;
    const swgpu_matrix_t *m;
    int go, ge;
    int32_t *fcol;       /* query position i's forbidden target positions: fcol[i * fcap ..] */
    uint32_t *fn;        /* ... fn[i] of them */
    size_t fcap;
    int full, valid;     /* the whole matrix is kept / computed */
    int32_t *H, *F;      /* (q.len + 1) x (tlen + 1) = cells each, one block */
    size_t cells;
    int32_t *rmax;       /* per row, the best H ... */
    int64_t *rcol;       /* ... and its first column */
    uint8_t *chg;        /* two rows of changed-cell flags */
    int32_t *row;        /* four rows of scratch */
    int32_t *prof;       /* the target's scores by query code: prof[c * tlen + j] */
    int32_t *prow;       /* a PSSM: one query position's scores in target order */
    uint8_t *dir, *ops;  /* the traceback's directions and operations */
    size_t cap_dir, n_ops, cap_ops;
    int no16;            /* never the 16-bit pass (hsps_bound.c): the tests set it */
} swgpu__hsps_t;

int swgpu__hsps_init(swgpu__hsps_t *S, const swgpu__query_t *q, const uint8_t *t, size_t tlen,
                     const swgpu_matrix_t *m, int gap_open, int gap_extend);
int swgpu__hsps_forbid(swgpu__hsps_t *S, const swgpu_aln_t *a);
int swgpu__hsps_next(swgpu__hsps_t *S, int32_t min_score, swgpu_aln_t *out);
void swgpu__hsps_free(swgpu__hsps_t *S);
/* The best score hsps_next would find and its end (exclusive, its tie
 * rule), in 16-bit lanes and linear memory (hsps_bound.c): 1 and *best,
 * *qe, *te when known exactly, 0 when the pair's scores or gaps do not fit
 * the lanes, < 0 out of memory. */
int swgpu__hsps_bound(const swgpu__hsps_t *S, int32_t *best, int64_t *qe, int64_t *te);

#endif /* SWGPU_ALIGN_H */
