/*
 * ref.h - the scalar reference engine (src/ref/sw_ref.c): the oracle every
 * other backend is tested against.  Internal to libswgpu.
 *
 * Scoring used everywhere here: aligning query code a with target code b
 * scores m->s[a][b] (the *_q functions: or a PSSM's row of the query
 * position); a gap of length k costs gap_open + k*gap_extend.
 */
#ifndef SWGPU_REF_H
#define SWGPU_REF_H

#include "internal.h"

/*
 * Smith-Waterman (Gotoh) local alignment score of q against t in O(qlen)
 * memory, 32-bit.  *score gets the best local score (0 when either length
 * is 0 or nothing scores above 0).  *qend / *tend get the EXCLUSIVE end of
 * the best alignment (last aligned index + 1) chosen by the tie rule: among
 * cells of maximal score, the smallest target end, then the smallest query
 * end.  Score 0 gives ends 0.  qend/tend may be NULL.
 * Returns SWGPU_EINVAL for negative or huge gaps, SWGPU_ERANGE when the
 * score could exceed 32 bits.  Thread-safe (allocates its own rows).
 */
int swgpu__ref_score(const uint8_t *q, size_t qlen, const uint8_t *t, size_t tlen,
                     const swgpu_matrix_t *m, int gap_open, int gap_extend,
                     int32_t *score, int64_t *qend, int64_t *tend);

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
 * functions above run the SIMD kernels of simd/aln_simd.h when the CPU has
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
 * a PSSM: internal.h): swgpu__ref_score's score and end, and the start and
 * path of swgpu__align_from_end_isa (isa as there, -1 the default).  The
 * alignment statistics compare q->res with the target's residues.
 */
int swgpu__ref_score_q(const swgpu__query_t *q, const uint8_t *t, size_t tlen,
                       const swgpu_matrix_t *m, int gap_open, int gap_extend, int32_t *score,
                       int64_t *qend, int64_t *tend);
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

#endif /* SWGPU_REF_H */
