/*
 * stats/stats.h - Karlin-Altschul statistics (never installed): lambda, K
 * and H of a scoring system, the tables of gapped parameters, E-values
 * with the length adjustment or Spouge's finite-size correction.  Files:
 * tables.c (the published parameters), evalue.c (bit scores, E-values),
 * fit.c (parameters fitted to a search's scores), ungapped.c (ungapped
 * parameters, for PSSMs).
 *
 * Pure functions of their arguments; nothing to free.  Failures return a
 * negative status with the message recorded (base/base.h).
 */
#ifndef SWGPU_STATS_H
#define SWGPU_STATS_H

#include "score/score.h"

/** The published parameters of the alphabet's default scoring system
 *  (BLOSUM62 11/1, DNA +2/-3 5/2): the search's E-values when neither a
 *  table nor a fit gives any (tables.c). */
int swgpu__fallback_karlin(swgpu_alphabet_t a, swgpu_karlin_t *k);


/** One query's E-values (evalue.c): the parameters, the model and what
 *  depends only on the query and the database, set up once. */
typedef struct {
    swgpu_karlin_t k;
    int spouge;   /* 1: Spouge's model (asked for, and k has its parameters) */
    double m;     /* query residues */
    double db;    /* database residues (0: none, the pair's own E-value) */
    double space; /* otherwise: the length-adjusted search space K m' n' */
} swgpu__evalue_ctx_t;

void swgpu__evalue_init(swgpu__evalue_ctx_t *c, const swgpu_karlin_t *k,
                        swgpu_evalue_model_t model, uint64_t qlen, uint64_t db_residues,
                        uint64_t db_nseq);
/** BLAST's length adjustment L of a query of qlen residues against a
 *  database of db_residues in db_nseq sequences (0 for fitted parameters or
 *  parameters without alpha, as the E-values use it): the effective search
 *  space is (qlen - L) (db_residues - db_nseq L), as BLAST+ reports it. */
int64_t swgpu__length_adjustment(const swgpu_karlin_t *k, uint64_t qlen, uint64_t db_residues,
                                 uint64_t db_nseq);
/** swgpu_hit_evalue() for a subject of tlen residues. */
double swgpu__evalue_of(const swgpu__evalue_ctx_t *c, int32_t score, uint64_t tlen);
/** The same for a score S that need not be an integer (a composition-adjusted
 *  score at BLAST's finer scale, divided back; no rounding down). */
double swgpu__evalue_of_real(const swgpu__evalue_ctx_t *c, double S, uint64_t tlen);
/** A score (>= 1) below which no subject, whatever its length, gets an
 *  E-value <= max_e; INT32_MAX when no score reaches it.  Exact for the
 *  length-adjusted model (E <= max_e iff score >= it), a lower bound for
 *  Spouge's (scores from it up still need their E-values checked). */
int32_t swgpu__evalue_min_score(const swgpu__evalue_ctx_t *c, double max_e);
/** 0 when no subject, whatever its length, gets an E-value <= max_e at this
 *  score (under Spouge's model, by the bound that swgpu__evalue_min_score
 *  steps through); else 1.  Each score on its own: the answer at one score
 *  says nothing of the others.  A search ranking by E-value tests its
 *  candidates' scores with it as its kept hits improve. */
int swgpu__evalue_may_reach(const swgpu__evalue_ctx_t *c, int32_t score, double max_e);

/** Robinson & Robinson (1991) frequencies of the 20 standard amino acids. */
extern const double swgpu__robinson[20];
/** Tests: nonzero makes swgpu__ungapped_karlin's convolution take its scalar
 *  form (the AVX one must give the same doubles). */
extern int swgpu__stats_scalar;
/** Ungapped Karlin-Altschul lambda, K and H of i.i.d. scores s = lo..hi with
 *  probabilities prob[s - lo] (negative mean, some positive score); K (the
 *  costly part) and H may be NULL. */
int swgpu__ungapped_karlin(const double *prob, int lo, int hi, double *lambda, double *K,
                           double *H);
/** The same for a matrix's 20 standard amino acids under swgpu__robinson
 *  (BLAST's "ideal" parameters of the matrix). */
int swgpu__matrix_ideal_karlin(const swgpu_matrix_t *m, double *lambda, double *K, double *H);

/* ---- shared by the files of stats/ (tables.c, ungapped.c) ---- */
/** The standard amino acids: codes 0..19 of a protein matrix. */
#define SWGPU__N_STD_AA 20
/** The greatest common divisor of |a| and |b| (0 with 0). */
static inline int swgpu__gcd(int a, int b)
{
    if (a < 0) a = -a;
    if (b < 0) b = -b;
    while (b) {
        int t = a % b;
        a = b;
        b = t;
    }
    return a;
}

#endif /* SWGPU_STATS_H */
