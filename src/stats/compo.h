/*
 * stats/compo.h - composition-based statistics, as BLAST+ computes them
 * (compo.c; tables in compo_data.c; SEG in seg.c): the amino-acid
 * composition of a sequence, its low-complexity segments, and the score matrix of a query-subject pair adjusted to the two
 * compositions at BLAST's finer scale.  Pure functions; nothing to free.
 */
#ifndef SWGPU_STATS_COMPO_H
#define SWGPU_STATS_COMPO_H

#include "stats/stats.h"

/** NCBIstdaa, the alphabet of BLAST's tables: -ABCDEFGHIKLMNPQRSTVWXYZU*OJ */
#define SWGPU__STDAA 28
/** Scores of an adjusted matrix are in 1/32 of the matrix's units (BLAST's
 *  SCALING_FACTOR), and so are the gap costs that go with it. */
#define SWGPU__CBS_SCALE 32

extern const double swgpu__b62_freq_ratios[SWGPU__STDAA][SWGPU__STDAA];
extern const double swgpu__b62_joint[SWGPU__N_STD_AA][SWGPU__N_STD_AA];
extern const double swgpu__b62_bg[SWGPU__N_STD_AA];

/** swgpu protein code (ARNDCQEGHILKMFPSTWYVBZX*JUO) -> NCBIstdaa */
extern const int swgpu__to_ncbistdaa[27];

/** SEG as BLAST+ runs it on a subject before rescoring it with an adjusted
 *  matrix (seg.c: window 10, locut 1.8, hicut 2.1): out[0..len) is res with
 *  the residues of its low-complexity segments replaced by X (out may be
 *  res).  SWGPU_ENOMEM. */
int swgpu__seg_mask(const uint8_t *res, size_t len, uint8_t *out);

/** A sequence's composition: prob[c] (NCBIstdaa c) the share of true amino
 *  acid c among its true amino acids (U counted as C), n_true their count. */
typedef struct {
    double prob[SWGPU__STDAA];
    size_t n_true;
} swgpu__compo_t;

/** The composition of res[0..len) (swgpu protein codes). */
void swgpu__compo_read(swgpu__compo_t *c, const uint8_t *res, size_t len);

/** What every pair's adjustment needs of the matrix, set up once. */
typedef struct {
    const swgpu_matrix_t *m;
    double lambda;                                /* m's ideal ungapped lambda / 32 */
    int32_t start[SWGPU__STDAA][SWGPU__STDAA];    /* m at 32x: round(ln ratio / lambda) */
    double joint_rows[SWGPU__N_STD_AA];           /* the joint probabilities' marginals */
    double joint_cols[SWGPU__N_STD_AA];
} swgpu__cbs_basis_t;

/** The basis of matrix m; SWGPU_EINVAL (message naming m) for a matrix
 *  without the published frequency ratios (BLOSUM62 only for now). */
int swgpu__cbs_basis_init(swgpu__cbs_basis_t *b, const swgpu_matrix_t *m);

/** How a pair's matrix was made (BLAST's EMatrixAdjustRule, as used). */
typedef enum {
    SWGPU__CBS_NONE = 0,      /* none (no true amino acid in a sequence) */
    SWGPU__CBS_SCALED = 1,    /* m's ratios scaled to the pair's lambda (mode 1) */
    SWGPU__CBS_ADJUSTED = 2,  /* target frequencies optimised (modes 2, 3) */
} swgpu__cbs_rule_t;

/**
 * The matrix of a query (composition q, qlen residues) and a subject
 * (composition s, slen) under comp-based-stats mode (1, 2, 3) into *out:
 * a protein matrix in swgpu codes at 32 times m's scale, to be used with gap
 * costs times 32.  *rule (may be NULL) says how it was made.  Returns 1
 * (nothing made) when a sequence has no true amino acid: BLAST then drops
 * the pair.  Mode 2 adjusts the matrix when BLAST's rule says so, 3
 * always; where the adjustment's optimisation does not converge, or mode
 * 2's rule says not to, the matrix is mode 1's.
 */
int swgpu__cbs_matrix(const swgpu__cbs_basis_t *b, int mode, const swgpu__compo_t *q,
                      size_t qlen, const swgpu__compo_t *s, size_t slen, swgpu_matrix_t *out,
                      swgpu__cbs_rule_t *rule);

/** Compositional matrix adjustment's target frequencies (compo_opt.c): x
 *  (20 x 20, ARNDCQEGHILKMFPSTWYV) closest to q in relative entropy with row
 *  sums row, column sums col and, when target_re > 0, relative entropy
 *  target_re against them; Newton's method to a residual <= tol in at most
 *  maxits steps.  0 when found, 1 otherwise (x then unusable). */
int swgpu__cbs_optimize(double *x, const double *q, const double *row, const double *col,
                        double target_re, double tol, int maxits);

/** BLAST's Newton-Raphson lambda (Blast_KarlinLambdaNR) of integer scores
 *  lo..hi (lo < 0 < hi) with probabilities p[s - lo] summing to 1, from
 *  lambda0; -1 when the mean score is not negative. */
double swgpu__cbs_lambda_nr(const double *p, int lo, int hi, double lambda0);

#endif /* SWGPU_STATS_COMPO_H */
