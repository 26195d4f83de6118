/*
 * test_stats.c - Karlin-Altschul statistics: the published parameter table,
 * bit scores and E-values with BLAST's length adjustment (expected values
 * computed independently, by brute force over the integer length
 * adjustment), and the maximum-likelihood fit on seeded synthetic
 * extreme-value samples.
 */
#include "stats/stats.h"
#include "tap.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int near(double a, double b, double rel)
{
    return fabs(a - b) <= rel * fabs(b);
}

#define CHECK_NEAR(a, b, rel) \
    CHECK(near((a), (b), (rel)), "%s = %.17g, expected %.17g (rel %g)", #a, (double)(a), (double)(b), (double)(rel))

/* one published row: matrix, gaps, lambda, K, H, alpha, beta */
typedef struct {
    const char *matrix;
    int open, extend;
    double lambda, K, H, alpha, beta;
} row_t;

static void check_row(const swgpu_matrix_t *m, const row_t *r)
{
    swgpu_karlin_t k;
    memset(&k, 0x55, sizeof k);
    int rc = swgpu_karlin_lookup(m, r->open, r->extend, &k);
    CHECK(rc == 0, "lookup %s %d/%d: %s", r->matrix, r->open, r->extend, swgpu_last_error());
    if (rc)
        return;
    CHECK(k.lambda == r->lambda && k.K == r->K && k.H == r->H && k.alpha == r->alpha &&
              k.beta == r->beta && k.estimated == 0 && k.round_down == 0,
          "%s %d/%d: got %g %g %g %g %g est %d", r->matrix, r->open, r->extend, k.lambda, k.K,
          k.H, k.alpha, k.beta, k.estimated);
}

static void test_protein_table(void)
{
    static const row_t rows[] = {
        {"BLOSUM62", 11, 1, 0.267, 0.041, 0.14, 1.9, -30},
        {"BLOSUM62", 11, 2, 0.297, 0.082, 0.27, 1.1, -10},
        {"BLOSUM62", 9, 1, 0.206, 0.010, 0.052, 4.0, -87},
        {"BLOSUM45", 15, 2, 0.203, 0.041, 0.12, 1.7, -31},
        {"BLOSUM45", 14, 2, 0.195, 0.032, 0.10, 1.9, -36},
        {"BLOSUM50", 10, 3, 0.186, 0.031, 0.11, 1.7, -34},
        {"BLOSUM50", 13, 2, 0.193, 0.035, 0.12, 1.6, -32},
        {"BLOSUM80", 10, 1, 0.299, 0.071, 0.27, 1.1, -14},
        {"BLOSUM80", 25, 2, 0.342, 0.17, 0.66, 0.52, -1.6},
        {"BLOSUM90", 10, 1, 0.290, 0.075, 0.28, 1.04, -15},
        {"PAM30", 9, 1, 0.294, 0.11, 0.61, 0.48, -6},
        {"PAM70", 10, 1, 0.291, 0.091, 0.41, 0.71, -9},
        {"PAM250", 14, 2, 0.182, 0.024, 0.073, 2.5, -53},
        {"pam250", 21, 1, 0.205, 0.045, 0.11, 1.8, -34},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        swgpu_matrix_t *m = NULL;
        int rc = swgpu_matrix_builtin(rows[i].matrix, &m);
        CHECK(rc == 0, "builtin %s: %s", rows[i].matrix, swgpu_last_error());
        if (rc == 0)
            check_row(m, &rows[i]);
        swgpu_matrix_destroy(m);
    }

    /* gap pairs BLAST does not tabulate */
    swgpu_matrix_t *b62 = NULL;
    CHECK_EQ_INT(swgpu_matrix_builtin("BLOSUM62", &b62), 0);
    swgpu_karlin_t k;
    CHECK_EQ_INT(swgpu_karlin_lookup(b62, 11, 3, &k), SWGPU_ENOTFOUND);
    CHECK(strstr(swgpu_last_error(), "BLOSUM62") && strstr(swgpu_last_error(), "11"),
          "message: %s", swgpu_last_error());
    CHECK_EQ_INT(swgpu_karlin_lookup(b62, 12, 2, &k), SWGPU_ENOTFOUND);
    CHECK_EQ_INT(swgpu_karlin_lookup(b62, 0, 0, &k), SWGPU_ENOTFOUND);
    swgpu_matrix_destroy(b62);
}

/* A matrix is recognised by its scores, not its name. */
static void test_identify_by_table(void)
{
    swgpu_matrix_t *m = NULL, *b80 = NULL;
    swgpu_karlin_t k;
    CHECK_EQ_INT(swgpu_matrix_builtin("BLOSUM62", &m), 0);
    CHECK_EQ_INT(swgpu_matrix_builtin("BLOSUM80", &b80), 0);
    if (!m || !b80)
        goto out;

    /* BLOSUM62's scores under another name, not flagged built-in */
    snprintf(m->name, sizeof m->name, "%s", "my_matrix.txt");
    m->builtin = 0;
    CHECK_EQ_INT(swgpu_karlin_lookup(m, 11, 1, &k), 0);
    CHECK(k.lambda == 0.267 && k.K == 0.041, "renamed BLOSUM62: %g %g", k.lambda, k.K);

    /* BLOSUM80's scores called BLOSUM62: the BLOSUM80 parameters */
    snprintf(b80->name, sizeof b80->name, "%s", "BLOSUM62");
    b80->builtin = 0;
    CHECK_EQ_INT(swgpu_karlin_lookup(b80, 10, 1, &k), 0);
    CHECK(k.lambda == 0.299 && k.K == 0.071, "BLOSUM80 named BLOSUM62: %g %g", k.lambda, k.K);
    /* 11/1 exists for both; it must be BLOSUM80's row */
    CHECK_EQ_INT(swgpu_karlin_lookup(b80, 11, 1, &k), 0);
    CHECK(k.lambda == 0.314 && k.K == 0.095, "BLOSUM80 named BLOSUM62 11/1: %g %g", k.lambda, k.K);

    /* BLOSUM62 with one changed standard score: unknown */
    m->s[0][0] += 1;
    snprintf(m->name, sizeof m->name, "%s", "BLOSUM62");
    CHECK_EQ_INT(swgpu_karlin_lookup(m, 11, 1, &k), SWGPU_ENOTFOUND);
    m->s[0][0] -= 1;
    m->s[4][18] -= 1; /* C/Y, off the diagonal */
    CHECK_EQ_INT(swgpu_karlin_lookup(m, 11, 1, &k), SWGPU_ENOTFOUND);
out:
    swgpu_matrix_destroy(m);
    swgpu_matrix_destroy(b80);
}

typedef struct {
    int match, mismatch, open, extend;
    double lambda, K, H, alpha, beta;
    int round_down;
} dna_row_t;

static void test_dna_table(void)
{
    static const dna_row_t rows[] = {
        {2, -3, 5, 2, 0.625, 0.41, 0.78, 0.8, -2, 1},
        {2, -3, 4, 4, 0.63, 0.42, 0.84, 0.75, -2, 1},
        {1, -2, 2, 2, 1.33, 0.62, 1.1, 1.2, 0, 0},
        {1, -3, 2, 2, 1.37, 0.70, 1.2, 1.1, 0, 0},
        {1, -1, 4, 1, 1.08, 0.28, 0.54, 2.0, -2, 0},
        {2, -5, 4, 2, 0.67, 0.61, 1.0, 0.65, -2, 1},
        {2, -7, 2, 4, 0.68, 0.67, 1.2, 0.55, 0, 1},
        {4, -5, 6, 5, 0.28, 0.21, 0.47, 0.6, -7, 0},
        {1, -4, 1, 1, 1.22, 0.35, 0.72, 1.7, -3, 0},
        {1, -5, 3, 3, 1.39, 0.747, 1.38, 1.00, 0, 0},
        {3, -4, 5, 2, 0.330, 0.092, 0.28, 1.2, -13, 1},
        {3, -2, 5, 5, 0.208, 0.030, 0.072, 2.9, -47, 0},
        {5, -4, 10, 6, 0.163, 0.068, 0.16, 1.0, -19, 0},
        /* not in lowest terms: the reduced table, gaps scaled, lambda and
         * alpha divided by the common factor */
        {4, -6, 10, 4, 0.3125, 0.41, 0.78, 0.4, -2, 1},
        {2, -4, 4, 4, 0.665, 0.62, 1.1, 0.6, 0, 0},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const dna_row_t *r = &rows[i];
        swgpu_matrix_t *m = NULL;
        swgpu_karlin_t k;
        int rc = swgpu_matrix_dna(r->match, r->mismatch, &m);
        CHECK(rc == 0, "dna %d/%d: %s", r->match, r->mismatch, swgpu_last_error());
        if (rc)
            continue;
        rc = swgpu_karlin_lookup(m, r->open, r->extend, &k);
        CHECK(rc == 0, "lookup dna %d/%d %d/%d: %s", r->match, r->mismatch, r->open, r->extend,
              swgpu_last_error());
        if (rc == 0)
            CHECK(near(k.lambda, r->lambda, 1e-12) && k.K == r->K && k.H == r->H &&
                      near(k.alpha, r->alpha, 1e-12) && k.beta == r->beta && k.estimated == 0 &&
                      k.round_down == r->round_down,
                  "dna %d/%d %d/%d: got %g %g %g %g %g", r->match, r->mismatch, r->open,
                  r->extend, k.lambda, k.K, k.H, k.alpha, k.beta);
        swgpu_matrix_destroy(m);
    }

    swgpu_matrix_t *m = NULL;
    swgpu_karlin_t k;
    CHECK_EQ_INT(swgpu_matrix_dna(2, -3, &m), 0);
    CHECK_EQ_INT(swgpu_karlin_lookup(m, 7, 3, &k), SWGPU_ENOTFOUND);
    CHECK_EQ_INT(swgpu_karlin_lookup(m, 0, 0, &k), SWGPU_ENOTFOUND); /* greedy row left out */
    swgpu_matrix_destroy(m);
    m = NULL;
    CHECK_EQ_INT(swgpu_matrix_dna(3, -1, &m), 0);
    CHECK_EQ_INT(swgpu_karlin_lookup(m, 5, 2, &k), SWGPU_ENOTFOUND);
    CHECK(strstr(swgpu_last_error(), "+3/-1") != NULL, "message: %s", swgpu_last_error());
    swgpu_matrix_destroy(m);
}

/*
 * Bit scores and E-values.  Expected numbers were computed independently:
 * L = the largest integer l with K (m-l)(n-N l) > max(m, n) and
 * beta + alpha/lambda (ln K + ln((m-l)(n-N l))) >= l, found by trying every
 * l from 0 up; E = K (m-L)(n-N L) exp(-lambda S).
 */
static void test_bitscore_evalue(void)
{
    swgpu_karlin_t b62 = {.lambda = 0.267, .K = 0.041, .H = 0.14, .alpha = 1.9, .beta = -30};
    CHECK_NEAR(swgpu_bitscore(&b62, 100), 43.12818987177933, 1e-12);
    CHECK_NEAR(swgpu_bitscore(&b62, 50), 23.868211075911667, 1e-12);

    /* BLOSUM62 11/1, score 100, query 300, 1e7 residues in 30000 sequences:
     * L = 97, E = 0.041 * 203 * (1e7 - 30000*97) * e^{-26.7} */
    CHECK_NEAR(swgpu_evalue(&b62, 100, 300, 10000000, 30000), 0.00014971436168096026, 1e-9);
    /* L = 66 */
    CHECK_NEAR(swgpu_evalue(&b62, 50, 120, 500000, 2000), 1.2977591565829538, 1e-9);
    /* search space too small for any adjustment: L = 0 */
    CHECK_NEAR(swgpu_evalue(&b62, 30, 20, 1000, 10), 0.2723422695668316, 1e-9);

    swgpu_karlin_t b62_10 = {.lambda = 0.243, .K = 0.024, .H = 0.10, .alpha = 2.5, .beta = -44};
    /* L = 175 */
    CHECK_NEAR(swgpu_evalue(&b62_10, 60, 1000, 200000000, 600000), 875.7401261387986, 1e-9);
    CHECK_NEAR(swgpu_bitscore(&b62_10, 60), 26.41531548010202, 1e-12);

    swgpu_karlin_t dna = {.lambda = 0.625, .K = 0.41, .H = 0.78, .alpha = 0.8, .beta = -2};
    CHECK_NEAR(swgpu_evalue(&dna, 40, 500, 1000000, 100), 0.0027157713683306065, 1e-9); /* L = 22 */
    CHECK_NEAR(swgpu_bitscore(&dna, 40), 37.35368020738073, 1e-12);

    /* fitted parameters: no length adjustment, E = K m n e^{-lambda S} */
    swgpu_karlin_t est = {.lambda = 0.267, .K = 0.041, .estimated = 1};
    CHECK_NEAR(swgpu_evalue(&est, 100, 300, 10000000, 30000),
               0.041 * 300 * 1e7 * exp(-26.7), 1e-12);

    /* E-value falls by e^{-lambda} per score unit (same L) and grows with
     * the database */
    double e1 = swgpu_evalue(&b62, 101, 300, 10000000, 30000);
    CHECK_NEAR(e1 / swgpu_evalue(&b62, 100, 300, 10000000, 30000), exp(-0.267), 1e-9);
    CHECK(swgpu_evalue(&b62, 100, 300, 20000000, 60000) > e1, "bigger database");
}

/*
 * Against NCBI BLAST itself: blastp 2.12.0+ (BLOSUM62 11/1, -comp_based_stats
 * 0, with OLD_FSC=1 for the classic Karlin-Altschul E-values rather than
 * Spouge's finite-size correction) searching the first 4000 sequences of
 * uniprot20k (1,842,118 residues) printed these raw scores, query lengths,
 * E-values and bit scores.  Ours, printed by BLAST's tabular rules, agree.
 */
static void blast_tabular(char *e, char *b, size_t size, double ev, double bits)
{
    if (ev < 1.0e-180) snprintf(e, size, "0.0");
    else if (ev < 0.0009) snprintf(e, size, "%.2e", ev);
    else if (ev < 0.1) snprintf(e, size, "%.3f", ev);
    else if (ev < 1.0) snprintf(e, size, "%.2f", ev);
    else if (ev < 10.0) snprintf(e, size, "%.1f", ev);
    else snprintf(e, size, "%.0f", ev);
    if (bits > 99999) snprintf(b, size, "%5.3e", bits);
    else if (bits > 99.9) snprintf(b, size, "%3ld", (long)bits);
    else snprintf(b, size, "%4.1f", bits);
}

static void test_against_blast(void)
{
    static const struct {
        int32_t score;
        uint64_t qlen;
        const char *evalue, *bits;
    } rows[] = {
        {39, 57, "57", "19.6"},         {50, 57, "3.0", "23.9"},
        {56, 635, "10", "26.2"},        {64, 1489, "3.1", "29.3"},
        {75, 635, "0.066", "33.5"},     {91, 686, "0.001", "39.7"},
        {121, 1489, "7.68e-07", "51.2"}, {241, 1489, "9.34e-21", "97.4"},
        {395, 152, "7.19e-40", "156"},  {482, 237, "1.21e-49", "190"},
        {1067, 361, "3.14e-117", "415"}, {3539, 921, "0.0", "1367"},
        {7702, 1489, "0.0", "2971"},
    };
    swgpu_karlin_t k = {.lambda = 0.267, .K = 0.041, .H = 0.14, .alpha = 1.9, .beta = -30};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        char e[64], b[64];
        blast_tabular(e, b, sizeof e, swgpu_evalue(&k, rows[i].score, rows[i].qlen, 1842118, 4000),
                      swgpu_bitscore(&k, rows[i].score));
        CHECK(!strcmp(e, rows[i].evalue) && !strcmp(b, rows[i].bits),
              "score %d qlen %llu: E %s bits %s, BLAST %s %s", (int)rows[i].score,
              (unsigned long long)rows[i].qlen, e, b, rows[i].evalue, rows[i].bits);
    }

    /* blastn -task blastn -reward 2 -penalty -3 -gapopen 5 -gapextend 2
     * (OLD_FSC=1), a 734 bp query against 300 sequences of 997 bp: an odd
     * score gets the E-value of the even score below, not its bit score */
    static const struct {
        int32_t score;
        const char *evalue, *bits;
    } dna[] = {
        {22, "91", "21.1"}, {25, "26", "23.8"},   {27, "7.5", "25.6"},  {29, "2.1", "27.4"},
        {30, "0.62", "28.3"}, {31, "0.62", "29.2"}, {33, "0.18", "31.0"},
    };
    swgpu_matrix_t *m = NULL;
    swgpu_karlin_t kd;
    CHECK_EQ_INT(swgpu_matrix_dna(2, -3, &m), 0);
    CHECK_EQ_INT(m ? swgpu_karlin_lookup(m, 5, 2, &kd) : -1, 0);
    swgpu_matrix_destroy(m);
    for (size_t i = 0; i < sizeof dna / sizeof dna[0]; i++) {
        char e[64], b[64];
        blast_tabular(e, b, sizeof e, swgpu_evalue(&kd, dna[i].score, 734, 299100, 300),
                      swgpu_bitscore(&kd, dna[i].score));
        CHECK(!strcmp(e, dna[i].evalue) && !strcmp(b, dna[i].bits),
              "DNA score %d: E %s bits %s, BLAST %s %s", (int)dna[i].score, e, b,
              dna[i].evalue, dna[i].bits);
    }
}

/*
 * Spouge's parameters: the slopes as BLAST+ 2.12.0 tabulates them, the
 * intercepts from the gap cost G = open + extend and the ungapped row
 * (b = 2G(a_un - a), beta = 2G(alpha_un - alpha), tau = 2G(alpha_un - sigma)).
 */
static void test_spouge_table(void)
{
    static const struct {
        const char *matrix;
        int open, extend;
        double a, alpha, sigma, a_un, alpha_un;
    } rows[] = {
        {"BLOSUM62", 11, 1, 1.9, 42.6028, 43.6362, 0.7916, 4.96466},
        {"BLOSUM62", 9, 2, 1.5, 22.7519, 22.95, 0.7916, 4.96466},
        {"BLOSUM45", 15, 2, 1.7, 44.8257, 45.0604, 0.9113, 9.61106},
        {"BLOSUM50", 13, 2, 1.6, 42.0595, 42.4716, 0.6895, 5.38831},
        {"BLOSUM80", 10, 1, 1.1, 13.8338, 14.5334, 0.5222, 1.91813},
        {"BLOSUM90", 10, 1, 1.04, 11.4839, 12.2698, 0.4434, 1.37776},
        {"PAM30", 9, 1, 0.48, 2.46392, 3.18615, 0.1938, 0.161818},
        {"PAM70", 10, 1, 0.71, 6.00297, 6.71657, 0.3250, 0.633439},
        {"PAM250", 14, 2, 2.5, 96.3151, 96.7568, 0.98, 11.7543},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        swgpu_matrix_t *m = NULL;
        swgpu_karlin_t k;
        CHECK_EQ_INT(swgpu_matrix_builtin(rows[i].matrix, &m), 0);
        if (!m)
            continue;
        CHECK_EQ_INT(swgpu_karlin_lookup(m, rows[i].open, rows[i].extend, &k), 0);
        double G = rows[i].open + rows[i].extend;
        CHECK(k.has_spouge == 1 && k.spouge.a == rows[i].a && k.spouge.alpha == rows[i].alpha &&
                  k.spouge.sigma == rows[i].sigma &&
                  near(k.spouge.b, 2 * G * (rows[i].a_un - rows[i].a), 1e-12) &&
                  near(k.spouge.beta, 2 * G * (rows[i].alpha_un - rows[i].alpha), 1e-12) &&
                  near(k.spouge.tau, 2 * G * (rows[i].alpha_un - rows[i].sigma), 1e-12),
              "%s %d/%d: spouge %d a %g b %g alpha %g beta %g sigma %g tau %g", rows[i].matrix,
              rows[i].open, rows[i].extend, k.has_spouge, k.spouge.a, k.spouge.b, k.spouge.alpha,
              k.spouge.beta, k.spouge.sigma, k.spouge.tau);
        swgpu_matrix_destroy(m);
    }
    /* BLOSUM62 11/1 in numbers: b = 24 (0.7916 - 1.9), beta = 24 (4.96466 - 42.6028),
     * tau = 24 (4.96466 - 43.6362) */
    swgpu_matrix_t *m = NULL;
    swgpu_karlin_t k;
    CHECK_EQ_INT(swgpu_matrix_builtin("BLOSUM62", &m), 0);
    CHECK_EQ_INT(m ? swgpu_karlin_lookup(m, 11, 1, &k) : -1, 0);
    CHECK_NEAR(k.spouge.b, -26.6016, 1e-12);
    CHECK_NEAR(k.spouge.beta, -903.31536, 1e-12);
    CHECK_NEAR(k.spouge.tau, -928.11696, 1e-12);
    swgpu_matrix_destroy(m);
    /* DNA: BLAST+ has no Spouge parameters for blastn */
    m = NULL;
    CHECK_EQ_INT(swgpu_matrix_dna(2, -3, &m), 0);
    CHECK_EQ_INT(m ? swgpu_karlin_lookup(m, 5, 2, &k) : -1, 0);
    CHECK(k.has_spouge == 0, "DNA +2/-3 5/2: no Spouge parameters");
    swgpu_matrix_destroy(m);
}

/*
 * Spouge E-values against blastp 2.12.0+ (Debian ncbi-blast+), which applies
 * Spouge's finite-size correction by default: queries250 x uniprot20k
 * (20,000 sequences, 9,055,569 residues), BLOSUM62 11/1, -comp_based_stats 0
 * -seg no -max_target_seqs 500 -evalue 10, -outfmt '6 qseqid sseqid score
 * evalue bitscore qlen slen' (bench/evalue_compare.sh keeps these files).
 * Each row: raw score, query and subject lengths, blastp's E-value and bit
 * score, and the E-value to 17 digits as the formula of swgpu.h gives it,
 * evaluated independently in Python (math.erfc) from the table's numbers.
 * The first row is issue 14's 57-residue self hit (old model: 1.81e-29).
 */
static void test_spouge_against_blast(void)
{
    static const struct {
        int32_t score;
        uint64_t qlen, tlen;
        const char *evalue, *bits;
        double exact;
    } rows[] = {
        /* tr|A7TBS3|A7TBS3_NEMVE against itself */
        {308, 57, 57, "1.32e-39", "123", 1.3204777123241599e-39},
        {65, 646, 1528, "5.6", "29.6", 5.5561252128143375},
        {56, 143, 923, "7.2", "26.2", 7.154042969280284},
        {55, 356, 78, "9.9", "25.8", 9.89935628519576},
        {50, 57, 2886, "5.3", "23.9", 5.296374044064584},
        {48, 57, 93, "7.7", "23.1", 7.656154153138079},
        {77, 1489, 1947, "0.56", "34.3", 0.5628655141937636},
        {67, 639, 61, "0.29", "30.4", 0.28602982463855386},
        {56, 57, 423, "0.75", "26.2", 0.7541536851459116},
        {85, 850, 1423, "0.034", "37.4", 0.03355896086332992},
        {84, 1280, 60, "0.003", "37.0", 0.002630705945407776},
        {74, 67, 63, "0.001", "33.1", 0.0010206259616279839},
        {118, 1826, 2918, "1.17e-05", "50.1", 1.1709558507286854e-05},
        {210, 108, 83, "1.77e-23", "85.5", 1.7661400819683464e-23},
        {100, 80, 2934, "1.81e-06", "43.1", 1.8143916968359337e-06},
        {83, 57, 657, "1.47e-04", "36.6", 0.00014726721260432377},
        {191, 67, 66, "1.82e-21", "78.2", 1.8191465646188485e-21},
        {1602, 465, 468, "0.0", "621", 1.7077605374611383e-223},
    };
    swgpu_matrix_t *m = NULL;
    swgpu_karlin_t k;
    CHECK_EQ_INT(swgpu_matrix_builtin("BLOSUM62", &m), 0);
    CHECK_EQ_INT(m ? swgpu_karlin_lookup(m, 11, 1, &k) : -1, 0);
    swgpu_matrix_destroy(m);
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        char e[64], b[64];
        double ev = swgpu_hit_evalue(&k, SWGPU_EVALUE_SPOUGE, rows[i].score, rows[i].qlen,
                                     rows[i].tlen, 9055569, 20000);
        CHECK_NEAR(ev, rows[i].exact, 1e-12);
        blast_tabular(e, b, sizeof e, ev, swgpu_bitscore(&k, rows[i].score));
        CHECK(!strcmp(e, rows[i].evalue) && !strcmp(b, rows[i].bits),
              "score %d qlen %llu slen %llu: E %s bits %s, blastp %s %s", (int)rows[i].score,
              (unsigned long long)rows[i].qlen, (unsigned long long)rows[i].tlen, e, b,
              rows[i].evalue, rows[i].bits);
    }
    /* the self hit under the old model, as issue 14 quotes it */
    char e[64], b[64];
    blast_tabular(e, b, sizeof e, swgpu_hit_evalue(&k, SWGPU_EVALUE_OLD_FSC, 308, 57, 57,
                                                   9055569, 20000), 0);
    CHECK(!strcmp(e, "1.81e-29"), "old model, self hit: %s", e);

    /* no database: the pair's own E-value; tlen 0 counts as 1 */
    CHECK_NEAR(swgpu_hit_evalue(&k, SWGPU_EVALUE_SPOUGE, 308, 57, 57, 0, 0),
               1.3204777123241599e-39 * 57 / 9055569, 1e-12);
    CHECK(swgpu_hit_evalue(&k, SWGPU_EVALUE_SPOUGE, 40, 100, 0, 9055569, 20000) ==
              swgpu_hit_evalue(&k, SWGPU_EVALUE_SPOUGE, 40, 100, 1, 9055569, 20000),
          "tlen 0 as 1");
    /* parameters without Spouge's set: the OLD_FSC value, whatever tlen */
    swgpu_karlin_t plain = k;
    plain.has_spouge = 0;
    CHECK(swgpu_hit_evalue(&plain, SWGPU_EVALUE_SPOUGE, 100, 300, 77, 10000000, 30000) ==
              swgpu_evalue(&k, 100, 300, 10000000, 30000),
          "no Spouge parameters: OLD_FSC");
    CHECK_NEAR(swgpu_hit_evalue(&k, SWGPU_EVALUE_OLD_FSC, 100, 300, 77, 10000000, 30000),
               0.00014971436168096026, 1e-9);
}

/*
 * swgpu__evalue_min_score: no score below it reaches the threshold for any
 * subject length (checked over lengths 1..2000 and a few longer), and under
 * OLD_FSC it is exact.
 */
static void test_min_score(void)
{
    swgpu_matrix_t *m = NULL;
    swgpu_karlin_t k, kd;
    CHECK_EQ_INT(swgpu_matrix_builtin("BLOSUM62", &m), 0);
    CHECK_EQ_INT(m ? swgpu_karlin_lookup(m, 11, 1, &k) : -1, 0);
    swgpu_matrix_destroy(m);
    m = NULL;
    CHECK_EQ_INT(swgpu_matrix_dna(2, -3, &m), 0);
    CHECK_EQ_INT(m ? swgpu_karlin_lookup(m, 5, 2, &kd) : -1, 0);
    swgpu_matrix_destroy(m);
    static const uint64_t qlens[] = {8, 57, 300, 4000};
    static const double max_e[] = {1e-30, 1e-3, 10, 1e5};
    static const uint64_t longer[] = {3000, 8081, 50000, 1000000};
    long bad = 0, loose = 0;
    for (size_t qi = 0; qi < 4; qi++)
        for (size_t xi = 0; xi < 4; xi++) {
            swgpu__evalue_ctx_t c;
            swgpu__evalue_init(&c, &k, SWGPU_EVALUE_SPOUGE, qlens[qi], 9055569, 20000);
            int32_t s0 = swgpu__evalue_min_score(&c, max_e[xi]);
            CHECK(s0 >= 1 && s0 < 100000, "qlen %llu E %g: min score %d",
                  (unsigned long long)qlens[qi], max_e[xi], (int)s0);
            for (int32_t s = s0 > 30 ? s0 - 30 : 1; s < s0; s++) {
                for (uint64_t n = 1; n <= 2000; n++)
                    bad += !(swgpu__evalue_of(&c, s, n) > max_e[xi]);
                for (size_t j = 0; j < 4; j++)
                    bad += !(swgpu__evalue_of(&c, s, longer[j]) > max_e[xi]);
            }
            /* and it is not far below the scores that do pass */
            int pass = 0;
            for (uint64_t n = 1; n <= 2000 && !pass; n++)
                pass = swgpu__evalue_of(&c, s0 + 12, n) <= max_e[xi];
            loose += !pass;

            /* OLD_FSC (and DNA, which has no Spouge set): exact */
            for (int d = 0; d < 2; d++) {
                swgpu__evalue_init(&c, d ? &kd : &k, d ? SWGPU_EVALUE_SPOUGE : SWGPU_EVALUE_OLD_FSC,
                                   qlens[qi], 9055569, 20000);
                int32_t s1 = swgpu__evalue_min_score(&c, max_e[xi]);
                CHECK(swgpu__evalue_of(&c, s1, 0) <= max_e[xi] &&
                          (s1 == 1 || swgpu__evalue_of(&c, s1 - 1, 0) > max_e[xi]),
                      "%s qlen %llu E %g: min score %d", d ? "DNA" : "OLD_FSC",
                      (unsigned long long)qlens[qi], max_e[xi], (int)s1);
            }
        }
    CHECK_EQ_INT(bad, 0);
    CHECK_EQ_INT(loose, 0);
    /* nothing passes: a threshold below every E-value there is */
    swgpu__evalue_ctx_t c;
    swgpu__evalue_init(&c, &k, SWGPU_EVALUE_OLD_FSC, 300, 9055569, 20000);
    CHECK(swgpu__evalue_min_score(&c, 1e-300) > 2000, "E 1e-300: %d",
          (int)swgpu__evalue_min_score(&c, 1e-300));
}

/* ------------------------------------------------------------- the fit */

static double unif(uint64_t *s)
{
    return ((double)(tap_rand(s) >> 11) + 0.5) / 9007199254740992.0;
}

/* Scores S = floor(X), P(X >= x) = 1 - exp(-K m n e^{-lambda x}), target
 * lengths uniform in [50, 1000]; the first n_homologs get large scores. */
static void draw(uint64_t seed, size_t n, size_t n_homologs, double lambda, double K,
                 uint64_t m, int32_t *scores, uint64_t *tlen)
{
    uint64_t s = seed;
    for (size_t i = 0; i < n; i++) {
        tlen[i] = 50 + tap_rand(&s) % 951;
        double x = (log(K * (double)m * (double)tlen[i]) - log(-log(unif(&s)))) / lambda;
        scores[i] = (int32_t)floor(x);
        if (i < n_homologs)
            scores[i] = (int32_t)(x + 30.0 / lambda + (double)(tap_rand(&s) % 200) / lambda);
    }
}

typedef struct {
    double lambda, K;
    uint64_t m;
    size_t n, n_homologs;
} fit_case_t;

static void test_fit(void)
{
    /* Over 30 seeds the estimator's bias is below 0.4% for lambda and 4%
     * for K; its spread is about 1% (lambda) and 0.08..0.13 (ln K) at
     * n = 5000.  Tolerances: lambda 4%, K 40%. */
    static const fit_case_t cases[] = {
        {0.267, 0.041, 300, 5000, 0},   /* BLOSUM62 11/1 */
        {0.267, 0.041, 300, 5000, 50},  /* with 1% homologs */
        {0.267, 0.041, 300, 5000, 500}, /* with 10% homologs */
        {0.625, 0.41, 500, 5000, 100},  /* DNA 2/-3 5/2, 2% homologs */
        {1.37, 0.70, 1000, 5000, 0},    /* DNA 1/-3 2/2: coarse lattice */
        {0.10, 0.01, 300, 20000, 200},
    };
    int32_t *scores = malloc(20000 * sizeof *scores);
    uint64_t *tlen = malloc(20000 * sizeof *tlen);
    if (!scores || !tlen) {
        CHECK(0, "out of memory");
        goto out;
    }
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const fit_case_t *fc = &cases[c];
        for (uint64_t seed = 1; seed <= 2; seed++) {
            draw(seed * 7919 + c, fc->n, fc->n_homologs, fc->lambda, fc->K, fc->m, scores, tlen);
            swgpu_karlin_t k;
            int rc = swgpu_karlin_fit(scores, tlen, fc->n, fc->m, &k);
            CHECK(rc == 0, "fit case %zu seed %llu: %s", c, (unsigned long long)seed,
                  swgpu_last_error());
            if (rc)
                continue;
            CHECK(near(k.lambda, fc->lambda, 0.04) && near(k.K, fc->K, 0.40),
                  "case %zu seed %llu: lambda %.4f K %.4f, true %.4f %.4f", c,
                  (unsigned long long)seed, k.lambda, k.K, fc->lambda, fc->K);
            CHECK(k.estimated == 1 && k.alpha == 0 && k.beta == 0, "estimated flags");
        }
    }

    /* too few scores, degenerate input */
    swgpu_karlin_t k;
    draw(5, 49, 0, 0.267, 0.041, 300, scores, tlen);
    CHECK_EQ_INT(swgpu_karlin_fit(scores, tlen, 49, 300, &k), SWGPU_EINVAL);
    CHECK(strstr(swgpu_last_error(), "49") != NULL, "message: %s", swgpu_last_error());
    CHECK_EQ_INT(swgpu_karlin_fit(scores, tlen, 50, 300, &k), 0);
    for (size_t i = 0; i < 100; i++)
        scores[i] = 7;
    CHECK_EQ_INT(swgpu_karlin_fit(scores, tlen, 100, 300, &k), SWGPU_EINVAL);
    CHECK_EQ_INT(swgpu_karlin_fit(NULL, NULL, 0, 300, &k), SWGPU_EINVAL);
out:
    free(scores);
    free(tlen);
}

/* The ungapped K as swgpu__ungapped_karlin computed it before its
 * convolution gathered four sums at a time and its e^{lambda v} came from a
 * table: the same doubles are required (E-values printed from them). */
static double ref_sigma_K(const double *prob, int lo, int hi, double lam_lattice, int d)
{
    double total = 0;
    for (int s = lo; s <= hi; s++)
        total += prob[s - lo] > 0 ? prob[s - lo] : 0;
    int tlo = lo / d - (lo % d != 0 && lo < 0), thi = hi / d, tn = thi - tlo + 1;
    double *p = calloc((size_t)tn, sizeof *p);
    for (int s = lo; s <= hi; s++)
        if (prob[s - lo] > 0)
            p[s / d - tlo] += prob[s - lo] / total;
    double lam = lam_lattice, H = 0;
    for (int t = 0; t < tn; t++)
        H += (t + tlo) * p[t] * exp(lam * (t + tlo));
    H *= lam;
    enum { KMAX = 400 };
    size_t cap = (size_t)KMAX * (size_t)(tn - 1) + 1;
    double *cur = calloc(cap, sizeof *cur), *nxt = calloc(cap, sizeof *nxt);
    memcpy(cur, p, (size_t)tn * sizeof *cur);
    size_t len = (size_t)tn;
    double sigma = 0;
    for (int k = 1; k <= KMAX; k++) {
        long base = (long)k * tlo;
        double term = 0;
        for (size_t j = 0; j < len; j++) {
            long v = base + (long)j;
            if (cur[j] > 0)
                term += v < 0 ? cur[j] * exp(lam * (double)v) : cur[j];
        }
        sigma += term / k;
        if (term / k < 1e-12 * sigma || k == KMAX)
            break;
        size_t nlen = len + (size_t)tn - 1;
        memset(nxt, 0, nlen * sizeof *nxt);
        for (size_t j = 0; j < len; j++)
            if (cur[j] > 0)
                for (int t = 0; t < tn; t++)
                    nxt[j + (size_t)t] += cur[j] * p[t];
        double *sw = cur;
        cur = nxt;
        nxt = sw;
        len = nlen;
    }
    free(cur);
    free(nxt);
    free(p);
    return exp(-2 * sigma) / ((H / lam) * -expm1(-lam));
}

static int gcd_of(int a, int b)
{
    a = a < 0 ? -a : a;
    b = b < 0 ? -b : b;
    while (b) {
        int t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* swgpu__ungapped_karlin's K against the reference above, bit for bit, on
 * random score distributions (PSSM-like ranges, zeros, a common divisor) */
static void test_ungapped_K(void)
{
    uint64_t rng = 5;
    int trials = tap_quick() ? 40 : 200, bad = 0;
    for (int t = 0; t < trials && !bad; t++) {
        int d = t % 5 == 0 ? 2 : t % 7 == 0 ? 4 : 1; /* powers of 2: lambda * d exact */
        int lo = -(int)(1 + tap_rand(&rng) % 20) * d, hi = (int)(1 + tap_rand(&rng) % 16) * d;
        double *prob = calloc((size_t)(hi - lo + 1), sizeof *prob), mean = 0, sum = 0;
        for (int s = lo; s <= hi; s++)
            if (s % d == 0 && tap_rand(&rng) % 4 != 0)
                prob[s - lo] = (double)(1 + tap_rand(&rng) % 1000) * (s > 0 ? 0.2 : 1);
        prob[hi - lo] += 1;
        prob[0] += 1;
        for (int s = lo; s <= hi; s++) {
            sum += prob[s - lo];
            mean += s * prob[s - lo];
        }
        if (mean >= 0) /* make the mean negative */
            prob[0] += (mean + 1) / -lo;
        sum = 0;
        for (int s = lo; s <= hi; s++)
            sum += prob[s - lo];
        for (int s = lo; s <= hi; s++)
            prob[s - lo] /= sum;
        double lambda = 0, K = 0, H = 0;
        int rc = swgpu__ungapped_karlin(prob, lo, hi, &lambda, &K, &H);
        int g = 0;
        for (int s = lo; s <= hi; s++)
            if (prob[s - lo] > 0)
                g = gcd_of(g, s);
        double Kr = rc == 0 ? ref_sigma_K(prob, lo, hi, lambda * g, g) : 0;
        double Ks = 0, ls = 0;
        swgpu__stats_scalar = 1; /* the scalar convolution: the same doubles */
        int rcs = swgpu__ungapped_karlin(prob, lo, hi, &ls, &Ks, NULL);
        swgpu__stats_scalar = 0;
        bad = rc != 0 || K != Kr || rcs != 0 || Ks != K || ls != lambda;
        CHECK(!bad, "ungapped K, scores %d..%d (divisor %d): %.17g, scalar %.17g, the reference "
              "%.17g (%s)", lo, hi, g, K, Ks, Kr, rc ? swgpu_last_error() : "");
        free(prob);
    }
}

int main(void)
{
    test_protein_table();
    test_identify_by_table();
    test_dna_table();
    test_bitscore_evalue();
    test_against_blast();
    test_spouge_table();
    test_spouge_against_blast();
    test_min_score();
    test_fit();
    test_ungapped_K();
    return tap_done();
}
