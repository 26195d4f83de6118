/*
 * stats.c - Karlin-Altschul statistics: published gapped parameters, a
 * maximum-likelihood fit for other scoring systems, bit scores, E-values.
 *
 * Model.  For a local alignment score S of a query of m residues against an
 * unrelated target of n residues,
 *
 *     P(S >= x) ~ 1 - exp(-K m n e^{-lambda x}),
 *
 * so the expected number of chance hits scoring >= x is E = K m n e^{-lambda x}
 * and the bit score is S' = (lambda S - ln K) / ln 2.
 *
 * Published parameters (swgpu_karlin_lookup).  The gapped lambda, K, H and
 * the length-correction parameters alpha, beta are those NCBI BLAST publishes
 * for each standard matrix and gap pair (Altschul, Bundschuh, Olsen & Hwa,
 * Nucleic Acids Res. 29:351, 2001; the tables in BLAST's blast_stat.c).  The
 * values are typed in below as data; the gap pair (open, extend) uses the
 * same convention as swgpu (a gap of length k costs open + k*extend).
 *
 * Two E-value models (swgpu_hit_evalue), both BLAST+'s.
 *
 * SWGPU_EVALUE_OLD_FSC, length correction.  Alignments cannot start near the
 * end of a sequence, so BLAST shortens every sequence by a length
 * adjustment L, the largest integer not above the fixed point of
 *
 *     f(L) = beta + (alpha / lambda) * ( ln K + ln((m - L)(n - N L)) )
 *
 * (n: database residues, N: database sequences), limited so that
 * K (m - L)(n - N L) > max(m, n).  Then E = K (m - L)(n - N L) e^{-lambda S},
 * the same for every target.  Fitted parameters (swgpu_karlin_fit) have no
 * alpha/beta; for them no length correction is applied (L = 0), see the
 * comment at swgpu_karlin_fit.
 *
 * SWGPU_EVALUE_SPOUGE, finite-size correction (Sheetlin, Park & Spouge
 * 2005; Park, Sheetlin, Ma, Mott & Spouge 2012, "Approximate p-values for
 * local sequence alignments: numerical studies").  An alignment of score S covers a stretch of
 * the query and one of the target whose lengths are taken as normal with
 * mean a S + b, variance alpha_v S + beta_v and covariance sigma S + tau; the
 * chance that a pair of m and n residues holds one scoring >= S is then
 * K e^{-lambda S} E[(m - L_q)^+ (n - L_t)^+], approximated by
 * p_q p_t + cov Phi_q Phi_t (see swgpu.h), and BLAST+ scales it by
 * (database residues / n) to an E-value over the database.  So the E-value
 * depends on each hit's target length, and short sequences, which leave
 * little room for an alignment, get much smaller E-values than under the
 * length correction.  BLAST+ tabulates a, alpha_v and sigma per protein
 * matrix and gap pair (the same source as lambda and K; a is the table's
 * alpha) and has none for blastn, whose default stays the length
 * correction.  Parameters without them use the length correction here too.
 *
 * Checked against NCBI blastp/blastn 2.12.0+ (tests/test_stats.c,
 * bench/evalue_compare.sh): the tabular E-values and bit scores agree digit
 * for digit with BLAST+'s default (Spouge) output and, for the length
 * correction, with its output under OLD_FSC=1.  Like BLAST, DNA tables
 * marked round_down give an odd score the E-value of the even score below
 * it (bit scores unchanged).
 */
#include "stats/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ------------------------------------------------------ published tables */

typedef struct {
    int open, extend;
    double lambda, K, H, alpha, beta;
} karlin_row_t;

/* A protein row adds Spouge's variance and covariance slopes. */
typedef struct {
    karlin_row_t k;
    double alpha_v, sigma;
} protein_row_t;

typedef struct {
    const char *name;
    const protein_row_t *rows;
    size_t n;
    double alpha_un, alpha_v_un; /* the ungapped row's alpha and alpha_v */
} karlin_table_t;

#define NROWS(a) (sizeof(a) / sizeof((a)[0]))

/* Protein matrices: gap open, gap extend, lambda, K, H, alpha, beta, and
 * Spouge's alpha_v (variance) and sigma (covariance) slopes. */
static const protein_row_t blosum45[] = {
    {{13, 3, 0.207, 0.049, 0.14, 1.5, -22}, 35.8559, 35.9639},
    {{12, 3, 0.199, 0.039, 0.11, 1.8, -34}, 45.6936, 45.8517},
    {{11, 3, 0.190, 0.031, 0.095, 2.0, -38}, 62.8741, 63.1037},
    {{10, 3, 0.179, 0.023, 0.075, 2.4, -51}, 88.2868, 88.6391},
    {{16, 2, 0.210, 0.051, 0.14, 1.5, -24}, 36.2798, 36.4524},
    {{15, 2, 0.203, 0.041, 0.12, 1.7, -31}, 44.8257, 45.0604},
    {{14, 2, 0.195, 0.032, 0.10, 1.9, -36}, 60.7362, 61.1023},
    {{13, 2, 0.185, 0.024, 0.084, 2.2, -45}, 85.1481, 85.6894},
    {{12, 2, 0.171, 0.016, 0.061, 2.8, -65}, 127.758, 128.582},
    {{19, 1, 0.205, 0.040, 0.11, 1.9, -43}, 53.0714, 53.8282},
    {{18, 1, 0.198, 0.032, 0.10, 2.0, -43}, 72.3424, 73.4039},
    {{17, 1, 0.189, 0.024, 0.079, 2.4, -57}, 103.055, 104.721},
    {{16, 1, 0.176, 0.016, 0.063, 2.8, -67}, 170.1, 173.003},
};
static const protein_row_t blosum50[] = {
    {{13, 3, 0.212, 0.063, 0.19, 1.1, -16}, 18.1138, 18.2028},
    {{12, 3, 0.206, 0.055, 0.17, 1.2, -18}, 22.6546, 22.7777},
    {{11, 3, 0.197, 0.042, 0.14, 1.4, -25}, 29.8611, 30.0457},
    {{10, 3, 0.186, 0.031, 0.11, 1.7, -34}, 42.3938, 42.674},
    {{9, 3, 0.172, 0.022, 0.082, 2.1, -48}, 66.0696, 66.5164},
    {{16, 2, 0.215, 0.066, 0.20, 1.05, -15}, 17.9518, 18.0921},
    {{15, 2, 0.210, 0.058, 0.17, 1.2, -20}, 21.9401, 22.1418},
    {{14, 2, 0.202, 0.045, 0.14, 1.4, -27}, 28.6812, 28.9619},
    {{13, 2, 0.193, 0.035, 0.12, 1.6, -32}, 42.0595, 42.4716},
    {{12, 2, 0.181, 0.025, 0.095, 1.9, -41}, 63.7476, 64.3973},
    {{19, 1, 0.212, 0.057, 0.18, 1.2, -21}, 26.3112, 26.9233},
    {{18, 1, 0.207, 0.050, 0.15, 1.4, -28}, 34.9037, 35.7348},
    {{17, 1, 0.198, 0.037, 0.12, 1.6, -33}, 48.8958, 50.1486},
    {{16, 1, 0.186, 0.025, 0.10, 1.9, -42}, 76.4691, 78.443},
    {{15, 1, 0.171, 0.015, 0.063, 2.7, -76}, 140.053, 144.16},
};
static const protein_row_t blosum62[] = {
    {{11, 2, 0.297, 0.082, 0.27, 1.1, -10}, 12.6738, 12.7576},
    {{10, 2, 0.291, 0.075, 0.23, 1.3, -15}, 16.474, 16.6026},
    {{9, 2, 0.279, 0.058, 0.19, 1.5, -19}, 22.7519, 22.95},
    {{8, 2, 0.264, 0.045, 0.15, 1.8, -26}, 35.4838, 35.8213},
    {{7, 2, 0.239, 0.027, 0.10, 2.5, -46}, 61.2383, 61.886},
    {{6, 2, 0.201, 0.012, 0.061, 3.3, -58}, 140.417, 141.882},
    {{13, 1, 0.292, 0.071, 0.23, 1.2, -11}, 19.5063, 19.8931},
    {{12, 1, 0.283, 0.059, 0.19, 1.5, -19}, 27.8562, 28.4699},
    {{11, 1, 0.267, 0.041, 0.14, 1.9, -30}, 42.6028, 43.6362},
    {{10, 1, 0.243, 0.024, 0.10, 2.5, -44}, 83.1787, 85.0656},
    {{9, 1, 0.206, 0.010, 0.052, 4.0, -87}, 210.333, 214.842},
};
static const protein_row_t blosum80[] = {
    {{25, 2, 0.342, 0.17, 0.66, 0.52, -1.6}, 1.731, 1.7313},
    {{13, 2, 0.336, 0.15, 0.57, 0.59, -3}, 2.67347, 2.6923},
    {{9, 2, 0.319, 0.11, 0.42, 0.76, -6}, 5.57609, 5.66786},
    {{8, 2, 0.308, 0.090, 0.35, 0.89, -9}, 7.53695, 7.68623},
    {{7, 2, 0.293, 0.070, 0.27, 1.1, -14}, 11.5866, 11.8404},
    {{6, 2, 0.268, 0.045, 0.19, 1.4, -19}, 19.9581, 20.4412},
    {{11, 1, 0.314, 0.095, 0.35, 0.90, -9}, 8.80861, 9.22332},
    {{10, 1, 0.299, 0.071, 0.27, 1.1, -14}, 13.8338, 14.5334},
    {{9, 1, 0.279, 0.048, 0.20, 1.4, -19}, 24.252, 25.4904},
};
static const protein_row_t blosum90[] = {
    {{9, 2, 0.310, 0.12, 0.46, 0.67, -6}, 4.23229, 4.33417},
    {{8, 2, 0.300, 0.099, 0.39, 0.76, -7}, 5.79702, 5.96142},
    {{7, 2, 0.283, 0.072, 0.30, 0.93, -11}, 9.04088, 9.3216},
    {{6, 2, 0.259, 0.048, 0.22, 1.2, -16}, 16.0244, 16.5316},
    {{11, 1, 0.302, 0.093, 0.39, 0.78, -8}, 7.14325, 7.61919},
    {{10, 1, 0.290, 0.075, 0.28, 1.04, -15}, 11.4839, 12.2698},
    {{9, 1, 0.265, 0.044, 0.20, 1.3, -19}, 21.4083, 22.8409},
};
static const protein_row_t pam30[] = {
    {{7, 2, 0.305, 0.15, 0.87, 0.35, -3}, 1.01401, 1.16273},
    {{6, 2, 0.287, 0.11, 0.68, 0.42, -4}, 1.68806, 1.95143},
    {{5, 2, 0.264, 0.079, 0.45, 0.59, -7}, 3.37701, 3.87195},
    {{10, 1, 0.309, 0.15, 0.88, 0.35, -3}, 1.37205, 1.78877},
    {{9, 1, 0.294, 0.11, 0.61, 0.48, -6}, 2.46392, 3.18615},
    {{8, 1, 0.270, 0.072, 0.40, 0.68, -10}, 5.36813, 6.76348},
};
static const protein_row_t pam70[] = {
    {{8, 2, 0.301, 0.12, 0.54, 0.56, -5}, 2.88165, 3.02571},
    {{7, 2, 0.286, 0.093, 0.43, 0.67, -7}, 4.53454, 4.78578},
    {{6, 2, 0.264, 0.064, 0.29, 0.90, -12}, 7.94263, 8.40272},
    {{11, 1, 0.305, 0.12, 0.52, 0.59, -6}, 3.6814, 4.10802},
    {{10, 1, 0.291, 0.091, 0.41, 0.71, -9}, 6.00297, 6.71657},
    {{9, 1, 0.270, 0.060, 0.28, 0.97, -14}, 11.3608, 12.6367},
};
static const protein_row_t pam250[] = {
    {{15, 3, 0.205, 0.049, 0.13, 1.6, -23}, 34.5784, 34.928},
    {{14, 3, 0.200, 0.043, 0.12, 1.7, -26}, 43.353, 43.4438},
    {{13, 3, 0.194, 0.036, 0.10, 1.9, -31}, 50.9485, 51.0817},
    {{12, 3, 0.186, 0.029, 0.085, 2.2, -41}, 69.6065, 69.7936},
    {{11, 3, 0.174, 0.020, 0.070, 2.5, -48}, 98.6535, 98.9271},
    {{17, 2, 0.204, 0.047, 0.12, 1.7, -28}, 41.5838, 41.7358},
    {{16, 2, 0.198, 0.038, 0.11, 1.8, -29}, 51.6352, 51.8439},
    {{15, 2, 0.191, 0.031, 0.087, 2.2, -44}, 67.2567, 67.5585},
    {{14, 2, 0.182, 0.024, 0.073, 2.5, -53}, 96.3151, 96.7568},
    {{13, 2, 0.171, 0.017, 0.059, 2.9, -64}, 135.653, 136.339},
    {{21, 1, 0.205, 0.045, 0.11, 1.8, -34}, 48.7282, 49.2188},
    {{20, 1, 0.199, 0.037, 0.10, 1.9, -35}, 60.832, 61.5141},
    {{19, 1, 0.192, 0.029, 0.083, 2.3, -52}, 84.0197, 84.9856},
    {{18, 1, 0.183, 0.021, 0.070, 2.6, -60}, 113.829, 115.184},
    {{17, 1, 0.171, 0.014, 0.052, 3.3, -86}, 175.071, 177.196},
};

static const karlin_table_t protein_tables[] = {
    {"BLOSUM45", blosum45, NROWS(blosum45), 0.9113, 9.61106},
    {"BLOSUM50", blosum50, NROWS(blosum50), 0.6895, 5.38831},
    {"BLOSUM62", blosum62, NROWS(blosum62), 0.7916, 4.96466},
    {"BLOSUM80", blosum80, NROWS(blosum80), 0.5222, 1.91813},
    {"BLOSUM90", blosum90, NROWS(blosum90), 0.4434, 1.37776},
    {"PAM30", pam30, NROWS(pam30), 0.1938, 0.161818},
    {"PAM70", pam70, NROWS(pam70), 0.3250, 0.633439},
    {"PAM250", pam250, NROWS(pam250), 0.98, 11.7543},
};

/* DNA match/mismatch pairs (BLASTN), in lowest terms.  The greedy
 * (non-affine, 0/0) rows BLAST also lists are left out: swgpu scores affine
 * gaps only. */
static const karlin_row_t dna_1_5[] = {
    {3, 3, 1.39, 0.747, 1.38, 1.00, 0},
};
static const karlin_row_t dna_1_4[] = {
    {1, 2, 1.36, 0.67, 1.2, 1.1, 0},   {0, 2, 1.26, 0.43, 0.90, 1.4, -1},
    {2, 1, 1.35, 0.61, 1.1, 1.2, -1},  {1, 1, 1.22, 0.35, 0.72, 1.7, -3},
};
static const karlin_row_t dna_2_7[] = {
    {2, 4, 0.68, 0.67, 1.2, 0.55, 0},  {0, 4, 0.63, 0.43, 0.90, 0.7, -1},
    {4, 2, 0.675, 0.62, 1.1, 0.6, -1}, {2, 2, 0.61, 0.35, 0.72, 1.7, -3},
};
static const karlin_row_t dna_1_3[] = {
    {2, 2, 1.37, 0.70, 1.2, 1.1, 0},   {1, 2, 1.35, 0.64, 1.1, 1.2, -1},
    {0, 2, 1.25, 0.42, 0.83, 1.5, -2}, {2, 1, 1.34, 0.60, 1.1, 1.2, -1},
    {1, 1, 1.21, 0.34, 0.71, 1.7, -2},
};
static const karlin_row_t dna_2_5[] = {
    {2, 4, 0.67, 0.59, 1.1, 0.6, -1},  {0, 4, 0.62, 0.39, 0.78, 0.8, -2},
    {4, 2, 0.67, 0.61, 1.0, 0.65, -2}, {2, 2, 0.56, 0.32, 0.59, 0.95, -4},
};
static const karlin_row_t dna_1_2[] = {
    {2, 2, 1.33, 0.62, 1.1, 1.2, 0},   {1, 2, 1.30, 0.52, 0.93, 1.4, -2},
    {0, 2, 1.19, 0.34, 0.66, 1.8, -3}, {3, 1, 1.32, 0.57, 1.0, 1.3, -1},
    {2, 1, 1.29, 0.49, 0.92, 1.4, -1}, {1, 1, 1.14, 0.26, 0.52, 2.2, -5},
};
static const karlin_row_t dna_2_3[] = {
    {4, 4, 0.63, 0.42, 0.84, 0.75, -2},  {2, 4, 0.615, 0.37, 0.72, 0.85, -3},
    {0, 4, 0.55, 0.21, 0.46, 1.2, -5},   {3, 3, 0.615, 0.37, 0.68, 0.9, -3},
    {6, 2, 0.63, 0.42, 0.84, 0.75, -2},  {5, 2, 0.625, 0.41, 0.78, 0.8, -2},
    {4, 2, 0.61, 0.35, 0.68, 0.9, -3},   {2, 2, 0.515, 0.14, 0.33, 1.55, -9},
};
static const karlin_row_t dna_3_4[] = {
    {6, 3, 0.389, 0.25, 0.56, 0.7, -5},  {5, 3, 0.375, 0.21, 0.47, 0.8, -6},
    {4, 3, 0.351, 0.14, 0.35, 1.0, -9},  {6, 2, 0.362, 0.16, 0.45, 0.8, -4},
    {5, 2, 0.330, 0.092, 0.28, 1.2, -13}, {4, 2, 0.281, 0.046, 0.16, 1.8, -23},
};
static const karlin_row_t dna_4_5[] = {
    {6, 5, 0.28, 0.21, 0.47, 0.6, -7},   {5, 5, 0.27, 0.17, 0.39, 0.7, -9},
    {4, 5, 0.25, 0.10, 0.31, 0.8, -10},  {3, 5, 0.23, 0.065, 0.25, 0.9, -11},
};
static const karlin_row_t dna_1_1[] = {
    {3, 2, 1.09, 0.31, 0.55, 2.0, -2},   {2, 2, 1.07, 0.27, 0.49, 2.2, -3},
    {1, 2, 1.02, 0.21, 0.36, 2.8, -6},   {0, 2, 0.80, 0.064, 0.17, 4.8, -16},
    {4, 1, 1.08, 0.28, 0.54, 2.0, -2},   {3, 1, 1.06, 0.25, 0.46, 2.3, -4},
    {2, 1, 0.99, 0.17, 0.30, 3.3, -10},
};
static const karlin_row_t dna_3_2[] = {
    {5, 5, 0.208, 0.030, 0.072, 2.9, -47},
};
static const karlin_row_t dna_5_4[] = {
    {10, 6, 0.163, 0.068, 0.16, 1.0, -19}, {8, 6, 0.146, 0.039, 0.11, 1.3, -29},
};

typedef struct {
    int match, mismatch; /* reward and penalty in lowest terms */
    int round_down;      /* the parameters hold for even scores only */
    const karlin_row_t *rows;
    size_t n;
} dna_table_t;

static const dna_table_t dna_tables[] = {
    {1, -5, 0, dna_1_5, NROWS(dna_1_5)}, {1, -4, 0, dna_1_4, NROWS(dna_1_4)},
    {2, -7, 1, dna_2_7, NROWS(dna_2_7)}, {1, -3, 0, dna_1_3, NROWS(dna_1_3)},
    {2, -5, 1, dna_2_5, NROWS(dna_2_5)}, {1, -2, 0, dna_1_2, NROWS(dna_1_2)},
    {2, -3, 1, dna_2_3, NROWS(dna_2_3)}, {3, -4, 1, dna_3_4, NROWS(dna_3_4)},
    {4, -5, 0, dna_4_5, NROWS(dna_4_5)}, {1, -1, 0, dna_1_1, NROWS(dna_1_1)},
    {3, -2, 0, dna_3_2, NROWS(dna_3_2)}, {5, -4, 0, dna_5_4, NROWS(dna_5_4)},
};

static int gcd(int a, int b)
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

static void set_from_row(swgpu_karlin_t *out, const karlin_row_t *r, int scale)
{
    /* Multiplying every score by `scale` divides lambda by it; K, H (per
     * aligned pair, in nats) and alpha/lambda (a length) do not change. */
    out->lambda = r->lambda / scale;
    out->K = r->K;
    out->H = r->H;
    out->alpha = r->alpha / scale;
    out->beta = r->beta;
    out->estimated = 0;
    out->round_down = 0;
    out->has_spouge = 0;
    memset(&out->spouge, 0, sizeof out->spouge);
}

/*
 * Spouge's parameters of a protein row.  The slopes a (= the row's alpha),
 * alpha_v and sigma are tabulated; the intercepts are not: BLAST+ derives
 * them from the slopes, the ungapped row's slopes and G = open + extend, the
 * cost of a one-residue gap, as
 *     b = 2 G (a_un - a),  beta = 2 G (alpha_v_un - alpha_v),
 *     tau = 2 G (alpha_v_un - sigma),
 * and so does swgpu (the E-values then agree with blastp's, see
 * tests/test_stats.c).
 */
static void set_spouge(swgpu_karlin_t *out, const karlin_table_t *tb, const protein_row_t *r)
{
    double G = r->k.open + r->k.extend;
    out->has_spouge = 1;
    out->spouge.a = r->k.alpha;
    out->spouge.b = 2 * G * (tb->alpha_un - r->k.alpha);
    out->spouge.alpha = r->alpha_v;
    out->spouge.beta = 2 * G * (tb->alpha_v_un - r->alpha_v);
    out->spouge.sigma = r->sigma;
    out->spouge.tau = 2 * G * (tb->alpha_v_un - r->sigma);
}

/* The 20 standard amino acids are codes 0..19 (ARNDCQEGHILKMFPSTWYV). */
#define N_STD_AA 20

static int same_standard_block(const swgpu_matrix_t *a, const swgpu_matrix_t *b)
{
    for (int i = 0; i < N_STD_AA; i++)
        for (int j = 0; j < N_STD_AA; j++)
            if (a->s[i][j] != b->s[i][j])
                return 0;
    return 1;
}

/*
 * Which built-in table the matrix scores like.  The statistics depend only on
 * the scores of the 20 standard amino acids, so a matrix is taken for a
 * built-in one when that 20x20 block is equal, whatever its name or origin.
 * Returns the index into protein_tables, -1 if none, or a negative status
 * (below -1) on failure.
 */
static int identify_protein(const swgpu_matrix_t *m, int *which)
{
    size_t nt = NROWS(protein_tables);
    /* try the table named like the matrix first: the common case */
    size_t order[NROWS(protein_tables)];
    size_t k = 0;
    const char *name = swgpu_matrix_name(m);
    for (size_t i = 0; i < nt; i++)
        if (name && !strcasecmp(name, protein_tables[i].name))
            order[k++] = i;
    for (size_t i = 0; i < nt; i++)
        if (!(name && !strcasecmp(name, protein_tables[i].name)))
            order[k++] = i;

    *which = -1;
    for (size_t i = 0; i < nt; i++) {
        swgpu_matrix_t *b = NULL;
        int rc = swgpu_matrix_builtin(protein_tables[order[i]].name, &b);
        if (rc < 0)
            return rc;
        int same = same_standard_block(m, b);
        swgpu_matrix_destroy(b);
        if (same) {
            *which = (int)order[i];
            return SWGPU_OK;
        }
    }
    return SWGPU_OK;
}

/* Reward and penalty of a DNA matrix, read from its A/C/G/T block; 0 if the
 * block is not a plain match/mismatch scheme. */
static int dna_scores(const swgpu_matrix_t *m, int *match, int *mismatch)
{
    int ma = m->s[0][0], mi = m->s[0][1];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
            if (m->s[i][j] != (i == j ? ma : mi))
                return 0;
    if (ma <= 0 || mi >= 0)
        return 0;
    *match = ma;
    *mismatch = mi;
    return 1;
}

int swgpu_karlin_lookup(const swgpu_matrix_t *m, int gap_open, int gap_extend,
                        swgpu_karlin_t *out)
{
    if (!m || !out)
        return swgpu__fail(SWGPU_EINVAL, "karlin lookup: NULL argument");
    memset(out, 0, sizeof *out);

    if (m->alphabet == SWGPU_DNA) {
        int match, mismatch;
        if (!dna_scores(m, &match, &mismatch))
            return swgpu__fail(SWGPU_ENOTFOUND,
                               "karlin lookup: matrix %s is not a match/mismatch scheme",
                               swgpu_matrix_name(m));
        /* BLAST's tables are in lowest terms: +2/-4 uses the +1/-2 table with
         * its gap costs doubled and lambda halved. */
        int d = gcd(match, mismatch);
        for (size_t t = 0; t < NROWS(dna_tables); t++) {
            const dna_table_t *tb = &dna_tables[t];
            if (tb->match * d != match || tb->mismatch * d != mismatch)
                continue;
            for (size_t r = 0; r < tb->n; r++) {
                if (tb->rows[r].open * d == gap_open && tb->rows[r].extend * d == gap_extend) {
                    set_from_row(out, &tb->rows[r], d);
                    out->round_down = tb->round_down;
                    return SWGPU_OK;
                }
            }
            return swgpu__fail(SWGPU_ENOTFOUND,
                               "karlin lookup: no published parameters for DNA +%d/%d with gap open %d extend %d",
                               match, mismatch, gap_open, gap_extend);
        }
        return swgpu__fail(SWGPU_ENOTFOUND,
                           "karlin lookup: no published parameters for DNA scores +%d/%d",
                           match, mismatch);
    }

    if (m->alphabet != SWGPU_PROTEIN)
        return swgpu__fail(SWGPU_EINVAL, "karlin lookup: matrix %s has no alphabet",
                           swgpu_matrix_name(m));
    int which;
    int rc = identify_protein(m, &which);
    if (rc < 0)
        return rc;
    if (which < 0)
        return swgpu__fail(SWGPU_ENOTFOUND,
                           "karlin lookup: matrix %s scores unlike every built-in matrix",
                           swgpu_matrix_name(m));
    const karlin_table_t *tb = &protein_tables[which];
    for (size_t r = 0; r < tb->n; r++) {
        if (tb->rows[r].k.open == gap_open && tb->rows[r].k.extend == gap_extend) {
            set_from_row(out, &tb->rows[r].k, 1);
            set_spouge(out, tb, &tb->rows[r]);
            return SWGPU_OK;
        }
    }
    return swgpu__fail(SWGPU_ENOTFOUND,
                       "karlin lookup: no published parameters for %s with gap open %d extend %d",
                       tb->name, gap_open, gap_extend);
}

/* -------------------------------------------------- bit score, E-value */

double swgpu_bitscore(const swgpu_karlin_t *k, int32_t score)
{
    return (k->lambda * (double)score - log(k->K)) / log(2.0);
}

/*
 * BLAST's length adjustment: the largest integer L in [0, L_max] with
 * f(L) >= L, where f(L) = beta + (alpha/lambda)(ln K + ln((m-L)(n-N L))) is
 * decreasing in L, and L_max is the largest L with K (m-L)(n-N L) >= max(m,n)
 * (the root of the quadratic N L^2 - (mN + n) L + (mn - max(m,n)/K) = 0
 * below both m and n/N).  f(L) - L is decreasing, so the fixed point is found
 * by bisection and then rounded down to an integer.
 */
static double length_adjustment(const swgpu_karlin_t *k, double m, double n, double N)
{
    double adl = k->alpha / k->lambda, logK = log(k->K);
    double a = N, mb = m * N + n, c = m * n - (m > n ? m : n) / k->K;
    if (c < 0)
        return 0; /* search space too small for any adjustment */
    /* smaller root of a L^2 - mb L + c, written to avoid cancellation */
    double lmax = 2 * c / (mb + sqrt(mb * mb - 4 * a * c));
#define G(L) (k->beta + adl * (logK + log((m - (L)) * (n - N * (L)))) - (L))
    double lo, hi;
    if (G(0.0) < 0)
        return 0;
    if (G(lmax) >= 0) {
        lo = lmax;
    } else {
        lo = 0;
        hi = lmax; /* G(lo) >= 0 > G(hi) */
        for (int it = 0; it < 200 && hi - lo > 1e-9 * (1 + hi); it++) {
            double mid = 0.5 * (lo + hi);
            if (G(mid) >= 0)
                lo = mid;
            else
                hi = mid;
        }
    }
    double L = floor(lo);
    /* settle the integer exactly: largest integer <= lmax with G >= 0 */
    if (L + 1 <= lmax && G(L + 1) >= 0)
        L += 1;
    while (L > 0 && G(L) < 0)
        L -= 1;
#undef G
    return L;
}

void swgpu__evalue_init(swgpu__evalue_ctx_t *c, const swgpu_karlin_t *k,
                        swgpu_evalue_model_t model, uint64_t qlen, uint64_t db_residues,
                        uint64_t db_nseq)
{
    memset(c, 0, sizeof *c);
    c->k = *k;
    c->spouge = model == SWGPU_EVALUE_SPOUGE && k->has_spouge;
    c->m = (double)qlen;
    c->db = (double)db_residues;
    if (c->spouge)
        return;
    double m = (double)qlen, n = (double)db_residues, N = (double)db_nseq;
    double L = 0;
    if (!k->estimated && k->alpha > 0 && qlen > 0 && db_residues > 0 && db_nseq > 0)
        L = length_adjustment(k, m, n, N);
    double m_eff = m - L, n_eff = n - N * L;
    if (m_eff < 1)
        m_eff = 1;
    if (n_eff < 1)
        n_eff = 1;
    c->space = k->K * m_eff * n_eff;
}

#define INV_SQRT_2PI 0.39894228040143267794
#define SQRT_HALF 0.70710678118654752440

/* Standard normal distribution function, through erfc for its lower tail. */
static double norm_cdf(double u)
{
    return 0.5 * erfc(-u * SQRT_HALF);
}

/*
 * E[(n - X)^+] for X normal with mean `mean` and standard deviation sd: the
 * expected length of a sequence of n residues that an alignment leaves over
 * (l Phi(l/sd) + sd phi(l/sd), l = n - mean).  *cdf gets Phi(l/sd), the
 * probability that the alignment fits at all.
 */
static double left_over(double n, double mean, double sd, double *cdf)
{
    double l = n - mean, u = l / sd;
    *cdf = norm_cdf(u);
    return l * *cdf + sd * INV_SQRT_2PI * exp(-0.5 * u * u);
}

/* Spouge's mean, standard deviation and covariance of the aligned lengths
 * at score S, with BLAST+'s floors. */
static void spouge_moments(const swgpu__evalue_ctx_t *c, double S, double *mean, double *sd,
                           double *cov)
{
    const swgpu_spouge_t *p = &c->k.spouge;
    double lambda = c->k.lambda;
    *mean = p->a * S + p->b;
    *sd = sqrt(fmax(2 * p->alpha / lambda, p->alpha * S + p->beta));
    *cov = fmax(2 * p->sigma / lambda, p->sigma * S + p->tau);
}

double swgpu__evalue_of(const swgpu__evalue_ctx_t *c, int32_t score, uint64_t tlen)
{
    if (c->k.round_down)
        score &= ~(int32_t)1; /* as BLAST: the lattice of these tables is even */
    double S = (double)score;
    if (!c->spouge)
        return c->space * exp(-c->k.lambda * S);
    double n = tlen ? (double)tlen : 1.0;
    double mean, sd, cov, Pq, Pt;
    spouge_moments(c, S, &mean, &sd, &cov);
    double lq = left_over(c->m, mean, sd, &Pq);
    double lt = left_over(n, mean, sd, &Pt);
    double area = lq * lt + cov * Pq * Pt;
    double per_db = c->db > 0 ? c->db / n : 1.0; /* the pair's E-value over the database */
    return area * c->k.K * exp(-c->k.lambda * S) * per_db;
}

/*
 * A lower bound of the Spouge E-value at score S over every subject length
 * n > 0 (0 when none is known).  With t(n) = left_over(n, ...), the database
 * factor makes the E-value proportional to t(n) / n plus a positive
 * covariance term, which the bound drops.  t is convex with slope
 * Phi((n - mean)/sd), so its tangent at x = mean + sd u gives, for all n > 0,
 *     t(n) / n >= Phi(u) + (sd phi(u) - mean Phi(u)) / n >= Phi(u)
 * for any u with sd phi(u) >= mean Phi(u).  Such u are those below the root
 * of that difference; u = -mean/sd is one (Mills' inequality), and bisection
 * moves u up towards the root, tightening the bound (only done when the
 * first bound is not already above `enough`).  For mean <= 0,
 * t(n) >= n - mean >= n: the bound is 1.
 */
static double spouge_bound(const swgpu__evalue_ctx_t *c, int32_t score, double enough)
{
    if (c->k.round_down)
        score &= ~(int32_t)1;
    if (!(c->db > 0))
        return 0;
    double S = (double)score, mean, sd, cov, Pq;
    spouge_moments(c, S, &mean, &sd, &cov);
    double scale = left_over(c->m, mean, sd, &Pq) * c->k.K * exp(-c->k.lambda * S) * c->db;
    if (!(mean > 0))
        return scale;
#define GAP(u) (sd * INV_SQRT_2PI * exp(-0.5 * (u) * (u)) - mean * norm_cdf(u))
    double lo = -mean / sd, hi = 40;
    if (!(GAP(lo) >= 0))
        return 0;
    if (scale * norm_cdf(lo) > enough)
        return scale * norm_cdf(lo);
    for (int it = 0; it < 12; it++) {
        double mid = 0.5 * (lo + hi);
        if (GAP(mid) >= 0)
            lo = mid;
        else
            hi = mid;
    }
#undef GAP
    return scale * norm_cdf(lo);
}

int32_t swgpu__evalue_min_score(const swgpu__evalue_ctx_t *c, double max_e)
{
    const int32_t limit = 1 << 24; /* far above any E-value's range */
    if (!c->spouge) {
        /* E is non-increasing in S: start from the solution of E(S) = max_e
         * and settle the integer with the function itself */
        double x = log(c->space / max_e) / c->k.lambda;
        if (!(x < limit))
            return INT32_MAX;
        int32_t s = x < 1 ? 1 : (int32_t)ceil(x);
        while (s > 1 && swgpu__evalue_of(c, s - 1, 0) <= max_e)
            s--;
        while (s < limit && !(swgpu__evalue_of(c, s, 0) <= max_e))
            s++;
        return s < limit ? s : INT32_MAX;
    }
    /* every score below the result is checked on its own: the bound need
     * not be monotonic (a small margin covers rounding) */
    double enough = max_e * (1 + 1e-6);
    for (int32_t s = 1; s < limit; s++)
        if (!(spouge_bound(c, s, enough) > enough))
            return s;
    return INT32_MAX;
}

double swgpu_hit_evalue(const swgpu_karlin_t *k, swgpu_evalue_model_t model, int32_t score,
                        uint64_t qlen, uint64_t tlen, uint64_t db_residues, uint64_t db_nseq)
{
    swgpu__evalue_ctx_t c;
    swgpu__evalue_init(&c, k, model, qlen, db_residues, db_nseq);
    return swgpu__evalue_of(&c, score, tlen);
}

double swgpu_evalue(const swgpu_karlin_t *k, int32_t score, uint64_t qlen,
                    uint64_t db_residues, uint64_t db_nseq)
{
    return swgpu_hit_evalue(k, SWGPU_EVALUE_OLD_FSC, score, qlen, 0, db_residues, db_nseq);
}

/* ------------------------------------------------ maximum-likelihood fit */

/*
 * swgpu_karlin_fit: lambda and K from the scores of one query against many
 * (mostly unrelated) targets, by maximum likelihood, in the spirit of
 * ssearch36, which estimates its statistics from the search's own scores.
 *
 * Model.  For target i of length n_i the score is S_i = floor(X_i) with
 *     P(X_i >= x) = 1 - exp(-K m n_i e^{-lambda x}) =: G_i(x),
 * so that P(S_i >= s) = G_i(s) is the Karlin-Altschul formula at integer s.
 * The likelihood is the exact one of these integer scores:
 *     P(S_i = s) = G_i(s) - G_i(s+1)
 *                = exp(-a q) (1 - exp(-a (1-q))),  a = K m n_i e^{-lambda s},
 *                                                  q = e^{-lambda};
 * a score of 0 (Smith-Waterman never reports less) stands for X_i < 1:
 *     P(S_i <= 0) = 1 - G_i(1) = exp(-a q).
 * (With a continuous density instead, lambda comes out 10% low for DNA
 * scoring systems, whose lambda near 1 makes the integer lattice coarse.)
 *
 * Homologs.  True relatives score far above the chance distribution and
 * would pull lambda down, so the top tail is cut off and the likelihood is
 * truncated there: a score kept because S_i <= c_i contributes
 *     ln P(S_i = s | S_i <= c_i) = ln P(S_i = s) - ln(1 - G_i(c_i + 1)),
 * and scores above c_i are left out, however many homologs they are.
 *   pass 1: c_i = the 90th percentile of all scores, for every target (so
 *           that up to ~10% of homologs cannot spoil the first estimate;
 *           with more than ~15% of the scores from homologs the fit is
 *           biased or fails);
 *   pass 2: c_i is where a chance alignment with a target of this length
 *           reaches a 1% exceedance probability under the pass-1 fit
 *           (lambda (c_i + 1) ~ ln(K m n_i) + 4.6).  Its fit is the result.
 *
 * Maximisation.  For fixed lambda, kappa = ln K solves d ll / d kappa = 0
 * (safeguarded Newton steps inside a bracket).  The resulting profile
 * likelihood of lambda is scanned on a log grid over [0.01, 5] and refined
 * by Brent's method (the second pass first searches within a factor 1.5
 * of the first pass's lambda).  At most FIT_MAX scores are used (an evenly
 * strided sample of larger inputs), which keeps the fit cheap beside the
 * database scan.
 *
 * Output: estimated = 1, alpha = beta = 0, H = 0 (not estimated).  E-values
 * from fitted parameters get no length correction: the fit used the raw
 * lengths m and n_i, so the fitted K already absorbs the average edge effect
 * of this query against this database.
 */

#define FIT_MIN 50
#define FIT_MAX 10000
#define LAMBDA_LO 0.01
#define LAMBDA_HI 5.0
#define TAIL_FRACTION 0.01 /* chance exceedance at the final cut-off */
#define FIRST_CUT 0.90     /* quantile of the first cut-off */
#define FIT_KEEP_MIN 25 /* positive scores below the cut-off */

typedef struct {
    double s;     /* score */
    double logmn; /* ln(m n_i) */
} fit_point_t;

typedef struct {
    size_t n;            /* points kept (below their threshold) */
    double *s;           /* their scores */
    double *logmn;       /* ln(m n_i) */
    double *t;           /* truncation point c_i + 1 */
    double *e;           /* scratch: m n_i e^{-lambda s_i} */
    double T;            /* scratch: sum_i m n_i e^{-lambda t_i} */
    double kappa;        /* warm start for the next profile evaluation */
} fit_data_t;

/* h(y) = y / (e^y - 1) and y h'(y), with care at both ends */
static double fit_h(double y)
{
    if (y < 1e-8)
        return 1 - 0.5 * y;
    if (y > 700)
        return 0;
    return y / expm1(y);
}

static double fit_yhp(double y)
{
    if (y < 1e-4)
        return y * (-0.5 + y / 6);
    if (y > 700)
        return 0;
    double em = expm1(y);
    return y * (em - y * (em + 1)) / (em * em);
}

/*
 * Per point, with a = K e_i:
 *   s_i > 0:  ln P = -a q + ln(1 - e^{-y}),  y = a (1-q)
 *             d/dk = -a q + h(y),            d2/dk2 = -a q + y h'(y)
 *   s_i = 0:  ln P = -a q,                   both derivatives -a q
 * plus the truncation term + K T (all derivatives K T).
 */
static void fit_deriv(const fit_data_t *d, double q, double K, double *D, double *H)
{
    double d1 = K * d->T, d2 = K * d->T;
    for (size_t i = 0; i < d->n; i++) {
        double a = K * d->e[i];
        d1 -= a * q;
        d2 -= a * q;
        if (d->s[i] > 0) {
            double y = a * (1 - q);
            d1 += fit_h(y);
            d2 += fit_yhp(y);
        }
    }
    *D = d1;
    *H = d2;
}

static double fit_loglik(const fit_data_t *d, double q, double K)
{
    double ll = K * d->T;
    for (size_t i = 0; i < d->n; i++) {
        double a = K * d->e[i];
        ll -= a * q;
        if (d->s[i] > 0)
            ll += log(-expm1(-a * (1 - q)));
    }
    return ll;
}

/* The profile log-likelihood at lambda (maximised over kappa -> *kappa). */
static double fit_profile(fit_data_t *d, double lambda, double *kappa)
{
    double q = exp(-lambda);
    d->T = 0;
    for (size_t i = 0; i < d->n; i++) {
        d->e[i] = exp(d->logmn[i] - lambda * d->s[i]);
        d->T += exp(d->logmn[i] - lambda * d->t[i]);
    }
    /* Newton steps from the last solution, at most 1 in kappa at a time
     * (K changes by e), keeping a bracket [lo, hi] of the root of D */
    double k = d->kappa, lo = -INFINITY, hi = INFINITY, D, H;
    for (int it = 0; it < 100; it++) {
        fit_deriv(d, q, exp(k), &D, &H);
        if (!isfinite(D) || k < -700 || k > 700)
            return -INFINITY;
        if (D > 0)
            lo = k;
        else
            hi = k;
        double step = H < 0 ? -D / H : (D > 0 ? 1 : -1);
        if (step > 1)
            step = 1;
        if (step < -1)
            step = -1;
        if (fabs(step) < 1e-7) {
            k += step; /* converged quadratically: no need to look again */
            break;
        }
        /* step points away from the bracket end just set, so it can only
         * overshoot the other end, and then both ends are finite */
        double next = k + step;
        if (!(next > lo && next < hi))
            next = 0.5 * (lo + hi);
        k = next;
    }
    d->kappa = k;
    *kappa = k;
    double ll = fit_loglik(d, q, exp(k));
    return isfinite(ll) ? ll : -INFINITY;
}

/* a rough start for kappa at lambda: the mean of K m n e^{-lambda s} is 1 */
static void fit_kappa_start(fit_data_t *d, double lambda)
{
    double sum = 0;
    for (size_t j = 0; j < d->n; j++)
        sum += exp(d->logmn[j] - lambda * d->s[j]);
    d->kappa = sum > 0 && isfinite(sum) ? log((double)d->n / sum) : 0;
}

/*
 * Maximise the profile likelihood over lambda in [lo, hi], starting from x0
 * (0: scan NGRID log-spaced points first and start from the best).  The
 * refinement is Brent's method: parabolic steps through the three best
 * points, golden-section steps when a parabola is not trustworthy.
 */
static int fit_lambda(fit_data_t *d, double lo, double hi, double x0,
                      double *lambda_out, double *kappa_out)
{
    enum { NGRID = 16 };
    const double cgold = 0.381966011250105, rel = 1e-5;
    double kap, a = lo, b = hi;
    if (x0 <= 0) {
        double grid[NGRID], val[NGRID];
        int best = 0;
        for (int i = 0; i < NGRID; i++) {
            grid[i] = lo * pow(hi / lo, (double)i / (NGRID - 1));
            fit_kappa_start(d, grid[i]);
            val[i] = fit_profile(d, grid[i], &kap);
            if (val[i] > val[best])
                best = i;
        }
        if (!(val[best] > -INFINITY))
            return swgpu__fail(SWGPU_ERANGE,
                               "karlin fit: the likelihood is zero for every lambda");
        a = grid[best > 0 ? best - 1 : 0];
        b = grid[best < NGRID - 1 ? best + 1 : NGRID - 1];
        x0 = grid[best];
    }
    fit_kappa_start(d, x0);
    /* x: best so far, w: second best, v: previous w; f* = -log-likelihood */
    double x = x0, w = x0, v = x0, fx = -fit_profile(d, x0, &kap), fw = fx, fv = fx;
    double step = 0, prev = 0; /* last step and the one before */
    for (int it = 0; it < 100; it++) {
        double mid = 0.5 * (a + b), tol = rel * x + 1e-12;
        if (fabs(x - mid) <= 2 * tol - 0.5 * (b - a))
            break;
        int golden = 1;
        if (fabs(prev) > tol) {
            /* vertex of the parabola through (v, fv), (w, fw), (x, fx) */
            double r = (x - w) * (fx - fv), q = (x - v) * (fx - fw);
            double p = (x - v) * q - (x - w) * r;
            q = 2 * (q - r);
            if (q > 0)
                p = -p;
            q = fabs(q);
            if (fabs(p) < fabs(0.5 * q * prev) && p > q * (a - x) && p < q * (b - x)) {
                prev = step;
                step = p / q;
                double u = x + step;
                if (u - a < 2 * tol || b - u < 2 * tol)
                    step = x < mid ? tol : -tol;
                golden = 0;
            }
        }
        if (golden) {
            prev = (x < mid ? b : a) - x;
            step = cgold * prev;
        }
        double u = x + (fabs(step) >= tol ? step : (step > 0 ? tol : -tol));
        double fu = -fit_profile(d, u, &kap);
        if (!(fu < INFINITY))
            fu = INFINITY;
        if (fu <= fx) {
            if (u < x)
                b = x;
            else
                a = x;
            v = w, fv = fw;
            w = x, fw = fx;
            x = u, fx = fu;
        } else {
            if (u < x)
                a = u;
            else
                b = u;
            if (fu <= fw || w == x) {
                v = w, fv = fw;
                w = u, fw = fu;
            } else if (fu <= fv || v == x || v == w) {
                v = u, fv = fu;
            }
        }
    }
    if (x <= LAMBDA_LO * 1.01 || x >= LAMBDA_HI * 0.99)
        return swgpu__fail(SWGPU_ERANGE,
                           "karlin fit: lambda %.4g at the bound of [%g, %g]; "
                           "the scores do not follow an extreme-value distribution",
                           x, LAMBDA_LO, LAMBDA_HI);
    if (!(fit_profile(d, x, &kap) > -INFINITY))
        return swgpu__fail(SWGPU_ERANGE, "karlin fit: the likelihood is zero at lambda %.4g",
                           x);
    *lambda_out = x;
    *kappa_out = kap;
    return SWGPU_OK;
}

static int cmp_point(const void *pa, const void *pb)
{
    const fit_point_t *a = pa, *b = pb;
    return (a->s > b->s) - (a->s < b->s);
}

/* Keep the points at or below their threshold (thr[i], or `cut` for all
 * when thr is NULL); returns how many have a positive score. */
static size_t fit_keep(fit_data_t *d, const fit_point_t *p, size_t np, const double *thr,
                       double cut)
{
    size_t positive = 0;
    d->n = 0;
    for (size_t i = 0; i < np; i++) {
        double c = thr ? thr[i] : cut;
        if (p[i].s > c)
            continue;
        d->s[d->n] = p[i].s;
        d->logmn[d->n] = p[i].logmn;
        d->t[d->n] = c + 1; /* S <= c  <=>  X < c + 1 */
        d->n++;
        positive += p[i].s > 0;
    }
    return positive;
}

int swgpu_karlin_fit(const int32_t *scores, const uint64_t *tlen, size_t n,
                     uint64_t qlen, swgpu_karlin_t *out)
{
    fit_point_t *p = NULL;
    double *buf = NULL;
    int rc = SWGPU_OK;
    if (!out || (n && (!scores || !tlen)))
        return swgpu__fail(SWGPU_EINVAL, "karlin fit: NULL argument");
    if (n < FIT_MIN)
        return swgpu__fail(SWGPU_EINVAL, "karlin fit: %zu scores, at least %d needed",
                           n, FIT_MIN);
    if (qlen == 0)
        return swgpu__fail(SWGPU_EINVAL, "karlin fit: query length 0");

    size_t np = n > FIT_MAX ? FIT_MAX : n;
    p = malloc(np * sizeof *p);
    buf = malloc(5 * np * sizeof *buf);
    if (!p || !buf) {
        rc = swgpu__fail(SWGPU_ENOMEM, "karlin fit: out of memory for %zu scores", np);
        goto fail;
    }
    for (size_t i = 0; i < np; i++) {
        size_t src = n > FIT_MAX ? (size_t)((double)i * (double)n / (double)np) : i;
        double len = tlen[src] ? (double)tlen[src] : 1.0;
        p[i].s = scores[src] > 0 ? scores[src] : 0;
        p[i].logmn = log((double)qlen) + log(len);
    }
    qsort(p, np, sizeof *p, cmp_point);

    fit_data_t d = {0};
    d.s = buf;
    d.logmn = buf + np;
    d.t = buf + 2 * np;
    d.e = buf + 3 * np;
    double *thr = buf + 4 * np;

    /* pass 1: cut above the 90th percentile */
    double cut = p[(size_t)((double)(np - 1) * FIRST_CUT)].s;
    size_t positive = fit_keep(&d, p, np, NULL, cut);
    if (positive < FIT_KEEP_MIN || p[0].s == cut) {
        rc = swgpu__fail(SWGPU_EINVAL,
                         "karlin fit: too little spread in the scores (%zu of %zu positive "
                         "below the top %g%%, at least %d needed, not all equal)",
                         positive, np, 100 * (1 - FIRST_CUT), FIT_KEEP_MIN);
        goto fail;
    }
    double lambda, kappa;
    rc = fit_lambda(&d, LAMBDA_LO, LAMBDA_HI, 0, &lambda, &kappa);
    if (rc < 0)
        goto fail;

    /* pass 2: per-target thresholds at 1% chance exceedance */
    double uc = -log(-log1p(-TAIL_FRACTION));
    for (size_t i = 0; i < np; i++)
        thr[i] = ceil((kappa + p[i].logmn + uc) / lambda) - 1;
    positive = fit_keep(&d, p, np, thr, 0);
    if (positive < FIT_KEEP_MIN) {
        rc = swgpu__fail(SWGPU_EINVAL,
                         "karlin fit: only %zu positive scores below the cut-off, at least %d "
                         "needed", positive, FIT_KEEP_MIN);
        goto fail;
    }
    /* the first fit already ignores the top 10%, so lambda usually moves
     * little: search near it, and the whole range if it ends at an edge */
    double lo = fmax(lambda / 1.5, LAMBDA_LO), hi = fmin(lambda * 1.5, LAMBDA_HI);
    double lambda1 = lambda;
    rc = fit_lambda(&d, lo, hi, lambda1, &lambda, &kappa);
    if (rc < 0 || lambda < lo * 1.01 || lambda > hi * 0.99)
        rc = fit_lambda(&d, LAMBDA_LO, LAMBDA_HI, 0, &lambda, &kappa);
    if (rc < 0)
        goto fail;

    memset(out, 0, sizeof *out);
    out->lambda = lambda;
    out->K = exp(kappa);
    out->estimated = 1;
fail:
    free(p);
    free(buf);
    return rc;
}

/* -------------------------------------------- ungapped parameters (PSSMs) */

/*
 * Robinson & Robinson (1991, PNAS 88:8880) amino-acid frequencies, the
 * background BLAST uses for its "ideal" ungapped parameters and for the
 * statistics of position-specific matrices; codes 0..19 (ARNDCQEGHILKMFPSTWYV).
 */
const double swgpu__robinson[20] = {
    0.07805, 0.05129, 0.04487, 0.05364, 0.01925, 0.04264, 0.06295, 0.07377, 0.02199, 0.05142,
    0.09019, 0.05744, 0.02243, 0.03856, 0.05203, 0.07120, 0.05841, 0.01330, 0.03216, 0.06441,
};

/*
 * One step of the convolution in swgpu__ungapped_karlin: nxt[i] = sum_j
 * cur[j] p[i - j] for i < nlen (nxt has room for 16 more), p padded with
 * KPAD zeros either side in pad.  Each sum adds its terms in increasing j
 * from 0.0 with a multiply and an add (never a fused multiply-add), so that
 * every form gives the same doubles on every machine.  A form may add
 * terms outside a sum's range: they are cur[j] * 0.0 = +0.0 (cur >= 0),
 * which leave a sum of non-negative terms unchanged.
 */
#define KPAD 16
static void conv4_scalar(const double *cur, size_t len, const double *pad, size_t tn,
                         double *nxt, size_t nlen)
{
    for (size_t i = 0; i < nlen; i += 4) {
        double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
        size_t jlo = i >= tn - 1 ? i - (tn - 1) : 0;
        size_t jhi = i + 3 < len - 1 ? i + 3 : len - 1;
        const double *pz = pad + KPAD + i; /* pz[l - j] = p[i + l - j], 0 off p */
        for (size_t j = jlo; j <= jhi; j++) {
            double c = cur[j];
            s0 += c * pz[0 - (ptrdiff_t)j];
            s1 += c * pz[1 - (ptrdiff_t)j];
            s2 += c * pz[2 - (ptrdiff_t)j];
            s3 += c * pz[3 - (ptrdiff_t)j];
        }
        nxt[i] = s0;
        nxt[i + 1] = s1;
        nxt[i + 2] = s2;
        nxt[i + 3] = s3;
    }
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
/* the same with sixteen sums in four AVX registers, independent chains of
 * additions (target "avx" only: no FMA, the compiler cannot fuse the
 * multiply and the add) */
__attribute__((target("avx"))) static void conv4_avx(const double *cur, size_t len,
                                                     const double *pad, size_t tn, double *nxt,
                                                     size_t nlen)
{
    for (size_t i = 0; i < nlen; i += 16) {
        __m256d a0 = _mm256_setzero_pd(), a1 = a0, a2 = a0, a3 = a0;
        size_t jlo = i >= tn - 1 ? i - (tn - 1) : 0;
        size_t jhi = i + 15 < len - 1 ? i + 15 : len - 1;
        const double *pz = pad + KPAD + i;
        for (size_t j = jlo; j <= jhi; j++) {
            const __m256d c = _mm256_set1_pd(cur[j]);
            const double *q = pz - (ptrdiff_t)j;
            a0 = _mm256_add_pd(a0, _mm256_mul_pd(c, _mm256_loadu_pd(q)));
            a1 = _mm256_add_pd(a1, _mm256_mul_pd(c, _mm256_loadu_pd(q + 4)));
            a2 = _mm256_add_pd(a2, _mm256_mul_pd(c, _mm256_loadu_pd(q + 8)));
            a3 = _mm256_add_pd(a3, _mm256_mul_pd(c, _mm256_loadu_pd(q + 12)));
        }
        _mm256_storeu_pd(nxt + i, a0);
        _mm256_storeu_pd(nxt + i + 4, a1);
        _mm256_storeu_pd(nxt + i + 8, a2);
        _mm256_storeu_pd(nxt + i + 12, a3);
    }
}
#endif

int swgpu__stats_scalar;

static void conv4(const double *cur, size_t len, const double *pad, size_t tn, double *nxt,
                  size_t nlen)
{
#if defined(__x86_64__) && defined(__GNUC__)
    if (!swgpu__stats_scalar && __builtin_cpu_supports("avx")) {
        conv4_avx(cur, len, pad, tn, nxt, nlen);
        return;
    }
#endif
    conv4_scalar(cur, len, pad, tn, nxt, nlen);
}

/*
 * Ungapped Karlin-Altschul parameters of i.i.d. scores with probabilities
 * prob[s - lo], s = lo..hi (Karlin & Altschul 1990, PNAS 87:2264; Karlin,
 * Dembo & Kawabata 1990).  With the scores divided by their greatest common
 * divisor d (a lattice of span 1):
 *   lambda: the positive root of  sum_s p_s e^{lambda s} = 1,
 *   H = lambda sum_s s p_s e^{lambda s},
 *   K = e^{-2 sigma} / ((H / lambda) (1 - e^{-lambda})),
 *   sigma = sum_{k >= 1} (1/k) [ E(e^{lambda S_k}; S_k < 0) + P(S_k >= 0) ],
 * S_k the sum of k scores (its distribution by repeated convolution; the
 * terms fall geometrically, the sum stops when they no longer count).
 * lambda is then divided by d; K and H are in nats per pair.
 * SWGPU_EINVAL when the mean is not negative or no score is positive.
 */
int swgpu__ungapped_karlin(const double *prob, int lo, int hi, double *lambda_out,
                           double *K_out, double *H_out)
{
    int d = 0, n = hi - lo + 1;
    double mean = 0, total = 0;
    if (!prob || hi < lo)
        return swgpu__fail(SWGPU_EINVAL, "ungapped statistics: no scores");
    for (int s = lo; s <= hi; s++)
        if (prob[s - lo] > 0) {
            d = gcd(d, s);
            mean += s * prob[s - lo];
            total += prob[s - lo];
        }
    if (!(total > 0) || hi <= 0 || !(mean < 0) || d == 0)
        return swgpu__fail(SWGPU_EINVAL, "ungapped statistics: the expected score %g is not "
                           "negative or no score is positive", mean);
    /* lattice units: t = s / d, t in [tlo, thi] */
    int tlo = lo / d - (lo % d != 0 && lo < 0), thi = hi / d;
    int tn = thi - tlo + 1;
    double *p = calloc((size_t)tn, sizeof *p);
    if (!p)
        return swgpu__fail(SWGPU_ENOMEM, "ungapped statistics: out of memory");
    for (int s = lo; s <= hi; s++)
        if (prob[s - lo] > 0)
            p[s / d - tlo] += prob[s - lo] / total;
    (void)n;

    /* lambda: f(x) = sum p e^{x t} - 1 is convex, f(0) = 0, f'(0) < 0 */
    double a = 0, b = 0.5, lam;
    for (;;) {
        double f = -1;
        for (int t = 0; t < tn; t++)
            f += p[t] * exp(b * (t + tlo));
        if (f > 0)
            break;
        a = b;
        b *= 2;
        if (b > 1e3) {
            free(p);
            return swgpu__fail(SWGPU_ERANGE, "ungapped statistics: no lambda found");
        }
    }
    for (int it = 0; it < 200 && b - a > 1e-15 * b; it++) {
        double x = 0.5 * (a + b), f = -1;
        for (int t = 0; t < tn; t++)
            f += p[t] * exp(x * (t + tlo));
        if (f > 0)
            b = x;
        else
            a = x;
    }
    lam = 0.5 * (a + b);
    double H = 0;
    for (int t = 0; t < tn; t++)
        H += (t + tlo) * p[t] * exp(lam * (t + tlo));
    H *= lam;
    if (!K_out) { /* lambda and H only */
        free(p);
        *lambda_out = lam / d;
        if (H_out)
            *H_out = H;
        return SWGPU_OK;
    }

    /* sigma over the distributions of S_k */
    enum { KMAX = 400 };
    size_t cap = (size_t)KMAX * (size_t)(tn - 1) + 1 + 16; /* + 16: conv4's last sums */
    double *cur = calloc(cap, sizeof *cur), *nxt = calloc(cap, sizeof *nxt);
    double *pad = calloc((size_t)tn + 2 * KPAD, sizeof *pad); /* p, KPAD zeros either side */
    if (!cur || !nxt || !pad) {
        free(p);
        free(cur);
        free(nxt);
        free(pad);
        return swgpu__fail(SWGPU_ENOMEM, "ungapped statistics: out of memory");
    }
    /* e^{lam v} of the negative sums v met so far: etab[-v], v = -1 ..
     * -etab_n (filled as the support of S_k grows: each computed once) */
    size_t etab_n = 0, etab_cap = tlo < 0 ? (size_t)KMAX * (size_t)(-tlo) : 0;
    double *etab = malloc((etab_cap + 1) * sizeof *etab);
    if (!etab) {
        free(p);
        free(cur);
        free(nxt);
        free(pad);
        return swgpu__fail(SWGPU_ENOMEM, "ungapped statistics: out of memory");
    }
    memcpy(cur, p, (size_t)tn * sizeof *cur);
    memcpy(pad + KPAD, p, (size_t)tn * sizeof *pad);
    size_t len = (size_t)tn;  /* support of S_k: k*tlo .. k*tlo + len - 1 */
    double sigma = 0;
    for (int k = 1; k <= KMAX; k++) {
        long base = (long)k * tlo;
        double term = 0;
        for (; base < 0 && etab_n < (size_t)-base; etab_n++)
            etab[etab_n + 1] = exp(lam * (double)(-(long)etab_n - 1));
        for (size_t j = 0; j < len; j++) {
            long v = base + (long)j;
            if (cur[j] > 0)
                term += v < 0 ? cur[j] * etab[-v] : cur[j];
        }
        sigma += term / k;
        if (term / k < 1e-12 * sigma || k == KMAX)
            break;
        /* S_{k+1} = S_k + one more score: nxt[i] = sum_j cur[j] p[i - j],
         * four sums at a time, each adding its terms in increasing j from
         * 0.0 (as nxt[j + t] += cur[j] p[t] over j would: the same
         * doubles; a zero term changes none of these non-negative sums) */
        size_t nlen = len + (size_t)tn - 1;
        conv4(cur, len, pad, (size_t)tn, nxt, nlen);
        double *sw = cur;
        cur = nxt;
        nxt = sw;
        len = nlen;
    }
    free(etab);
    free(pad);
    free(cur);
    free(nxt);
    free(p);
    *lambda_out = lam / d;
    *K_out = exp(-2 * sigma) / ((H / lam) * -expm1(-lam));
    if (H_out)
        *H_out = H;
    return SWGPU_OK;
}

/* The ungapped parameters of a matrix's 20 standard amino acids with
 * Robinson & Robinson's frequencies (BLAST's "ideal" parameters). */
int swgpu__matrix_ideal_karlin(const swgpu_matrix_t *m, double *lambda, double *K, double *H)
{
    int lo = 0, hi = 0;
    for (int i = 0; i < N_STD_AA; i++)
        for (int j = 0; j < N_STD_AA; j++) {
            if (m->s[i][j] < lo) lo = m->s[i][j];
            if (m->s[i][j] > hi) hi = m->s[i][j];
        }
    double *prob = calloc((size_t)(hi - lo + 1), sizeof *prob);
    if (!prob)
        return swgpu__fail(SWGPU_ENOMEM, "ungapped statistics: out of memory");
    for (int i = 0; i < N_STD_AA; i++)
        for (int j = 0; j < N_STD_AA; j++)
            prob[m->s[i][j] - lo] += swgpu__robinson[i] * swgpu__robinson[j];
    int rc = swgpu__ungapped_karlin(prob, lo, hi, lambda, K, H);
    free(prob);
    return rc;
}
