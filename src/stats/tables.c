/*
 * stats/tables.c - the published gapped Karlin-Altschul parameters
 * (swgpu_karlin_lookup) and the search's fallback (swgpu__fallback_karlin).
 *
 * The gapped lambda, K, H and the length-correction parameters alpha, beta
 * are those NCBI BLAST publishes for each standard matrix and gap pair
 * (Altschul, Bundschuh, Olsen & Hwa, Nucleic Acids Res. 29:351, 2001; the
 * tables in BLAST's blast_stat.c).  The values are typed in below as data;
 * the gap pair (open, extend) uses the same convention as swgpu (a gap of
 * length k costs open + k*extend).  The E-value models that use them:
 * evalue.c.
 */
#include "stats/stats.h"

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

static int same_standard_block(const swgpu_matrix_t *a, const swgpu_matrix_t *b)
{
    for (int i = 0; i < SWGPU__N_STD_AA; i++)
        for (int j = 0; j < SWGPU__N_STD_AA; j++)
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
        int d = swgpu__gcd(match, mismatch);
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

/* Parameters used when neither the table nor a fit gives any: the published
 * ones of the alphabet's default scoring system (warned about). */
int swgpu__fallback_karlin(swgpu_alphabet_t a, swgpu_karlin_t *k)
{
    swgpu_matrix_t *dm = NULL;
    int rc = a == SWGPU_DNA ? swgpu_matrix_dna(2, -3, &dm) : swgpu_matrix_builtin("BLOSUM62", &dm);
    if (rc == SWGPU_OK)
        rc = a == SWGPU_DNA ? swgpu_karlin_lookup(dm, 5, 2, k) : swgpu_karlin_lookup(dm, 11, 1, k);
    swgpu_matrix_destroy(dm);
    return rc;
}
