/*
 * stats/compo.c - composition-based statistics as BLAST+ 2.12 computes
 * them (Schaffer et al. 2001, "Improving the accuracy of PSI-BLAST protein
 * database searches with composition-based statistics and other
 * refinements", NAR 29:2994-3005; Altschul et al. 2005, "Protein database
 * searches using compositionally adjusted substitution matrices", FEBS J
 * 272:5101-5109; Yu & Altschul 2005, Bioinformatics 21:902-911).
 *
 * Everything is in 1/32 of the matrix's units (BLAST's scaling factor), in
 * NCBIstdaa order, from the matrix's published frequency ratios r_ij:
 *  - lambda_u: the matrix's ideal ungapped lambda (Robinson & Robinson's
 *    frequencies), divided by 32; the start matrix round(ln r_ij / lambda_u);
 *  - mode 1: lambda_p, the ungapped lambda of the start matrix under the
 *    query's and the subject's compositions; the ratio
 *    rho = lambda_p / lambda_u, kept within [0.5, 1]; the pair's matrix
 *    ln r_ij / (lambda_u / rho), with the scores against X (and B, Z, J's
 *    against X) the composition-weighted mean of the row or column, at most
 *    -1, U scored as C, O as X, the stop codon's scores the start matrix's;
 *    then rounded.
 * Lambdas are found by BLAST's Newton-Raphson (swgpu__cbs_lambda_nr), with
 * its tolerances, so that the rounding of a score lands where BLAST's does.
 */
#include "stats/compo.h"

#include <math.h>
#include <string.h>

/* NCBIstdaa codes */
enum { S_GAP = 0, S_A = 1, S_B = 2, S_C = 3, S_X = 21, S_Z = 23, S_U = 24, S_STOP = 25,
       S_O = 26, S_J = 27 };

const int swgpu__to_ncbistdaa[27] = {1,  16, 13, 4,  3,  15, 5,  7,  8,  9,  11, 10, 12, 6,
                                     14, 17, 18, 20, 22, 19, 2,  23, 21, 25, 27, 24, 26};

/* NCBIstdaa -> index in ARNDCQEGHILKMFPSTWYV, -1 for the others */
static const int to_true[SWGPU__STDAA] = {-1, 0,  -1, 4,  3,  6,  13, 7,  8,  9,
                                          11, 10, 12, 2,  14, 5,  1,  15, 16, 19,
                                          17, -1, 18, -1, -1, -1, -1, -1};

#define MAX_X_SCORE (-1.0) /* BLAST's kMaximumXscore */
#define LAMBDA_RATIO_MIN 0.5
#define NR_TOL 1e-5        /* BLAST_KARLIN_LAMBDA_ACCURACY_DEFAULT */
#define NR_ITER 20
#define NR_NEWTON (20 + 17)

void swgpu__compo_read(swgpu__compo_t *c, const uint8_t *res, size_t len)
{
    memset(c, 0, sizeof *c);
    for (size_t i = 0; i < len; i++) {
        int k = res[i] < 27 ? swgpu__to_ncbistdaa[res[i]] : S_GAP;
        if (to_true[k] >= 0 || k == S_U) {
            c->prob[k == S_U ? S_C : k] += 1;
            c->n_true++;
        }
    }
    if (c->n_true)
        for (int k = 0; k < SWGPU__STDAA; k++)
            c->prob[k] /= (double)c->n_true;
}

static int gcd_int(int a, int b)
{
    while (b) {
        int t = a % b;
        a = b;
        b = t;
    }
    return a < 0 ? -a : a;
}

/* NlmKarlinLambdaNR: the root x = e^{-lambda d} in (0, 1) of the polynomial
 * sum_s p_s x^{-s/d} - 1 (times x^{hi/d}), safeguarded Newton steps. */
static double lambda_nr(const double *p, int d, int lo, int hi, double lambda0)
{
    double x0 = exp(-lambda0), x = (0 < x0 && x0 < 1) ? x0 : .5, a = 0, b = 1, f = 4;
    int newton = 0;
    for (int k = 0; k < NR_ITER + NR_NEWTON; k++) {
        double g = 0, fold = f;
        int was_newton = newton;
        newton = 0;
        f = p[0];
        for (int i = lo + d; i < 0; i += d) {
            g = x * g + f;
            f = f * x + p[i - lo];
        }
        g = x * g + f;
        f = f * x + p[-lo] - 1;
        for (int i = d; i <= hi; i += d) {
            g = x * g + f;
            f = f * x + p[i - lo];
        }
        if (f > 0)
            a = x;
        else if (f < 0)
            b = x;
        else
            break;
        if (b - a < 2 * a * (1 - b) * NR_TOL) {
            x = (a + b) / 2;
            break;
        }
        if (k >= NR_NEWTON || (was_newton && fabs(f) > .9 * fabs(fold)) || g >= 0) {
            x = (a + b) / 2;
        } else {
            double step = -f / g, y = x + step;
            if (y <= a || y >= b) {
                x = (a + b) / 2;
            } else {
                newton = 1;
                x = y;
                if (fabs(step) < NR_TOL * x * (1 - x))
                    break;
            }
        }
    }
    return -log(x) / d;
}

double swgpu__cbs_lambda_nr(const double *p, int lo, int hi, double lambda0)
{
    double mean = 0;
    for (int s = lo; s <= hi; s++)
        mean += s * p[s - lo];
    if (!(mean < 0) || lo >= 0 || hi <= 0)
        return -1.0;
    int d = -lo;
    for (int i = 1; i <= hi - lo && d > 1; i++)
        if (p[i] != 0.0)
            d = gcd_int(d, i);
    return lambda_nr(p, d, lo, hi, lambda0);
}

/* BLAST's Nint: halves away from zero */
static int32_t nint(double x)
{
    return (int32_t)(x + (x >= 0 ? 0.5 : -0.5));
}

/* the matrix's ideal ungapped lambda (Blast_ScoreBlkKbpIdealCalc): its
 * scores of the true amino acids under Robinson & Robinson's frequencies,
 * normalised, BLAST's Newton-Raphson from 0.5 */
static int ideal_lambda(const swgpu_matrix_t *m, double *lambda)
{
    int lo = 0, hi = 0;
    for (int i = 0; i < SWGPU__N_STD_AA; i++)
        for (int j = 0; j < SWGPU__N_STD_AA; j++) {
            lo = m->s[i][j] < lo ? m->s[i][j] : lo;
            hi = m->s[i][j] > hi ? m->s[i][j] : hi;
        }
    double p[256] = {0}, sum = 0;
    if (hi - lo >= 256)
        return swgpu__fail(SWGPU_EINVAL, "matrix %s: scores span too wide", m->name);
    for (int i = 0; i < SWGPU__N_STD_AA; i++)
        for (int j = 0; j < SWGPU__N_STD_AA; j++)
            p[m->s[i][j] - lo] += swgpu__robinson[i] * swgpu__robinson[j];
    for (int s = 0; s <= hi - lo; s++)
        sum += p[s];
    for (int s = 0; s <= hi - lo; s++)
        p[s] /= sum;
    *lambda = swgpu__cbs_lambda_nr(p, lo, hi, 0.5);
    if (!(*lambda > 0))
        return swgpu__fail(SWGPU_EINVAL, "matrix %s: no ungapped lambda", m->name);
    return SWGPU_OK;
}

/* ln r / lambda, BLAST's Blast_FreqRatioToScore (INT32_MIN for r = 0) */
static double ratio_score(double r, double lambda)
{
    return r == 0.0 ? (double)INT32_MIN : log(r) / lambda;
}

int swgpu__cbs_basis_init(swgpu__cbs_basis_t *b, const swgpu_matrix_t *m)
{
    memset(b, 0, sizeof *b);
    if (m->alphabet != SWGPU_PROTEIN || !m->builtin || strcmp(m->name, "BLOSUM62"))
        return swgpu__fail(SWGPU_EINVAL,
                           "composition-based statistics: matrix %s is not supported "
                           "(BLOSUM62 only: the adjustment needs the matrix's published "
                           "frequency ratios)",
                           m->name);
    int rc = ideal_lambda(m, &b->lambda);
    if (rc < 0)
        return rc;
    b->m = m;
    b->lambda /= SWGPU__CBS_SCALE;
    for (int i = 0; i < SWGPU__N_STD_AA; i++)
        for (int j = 0; j < SWGPU__N_STD_AA; j++) {
            b->joint_rows[i] += swgpu__b62_joint[i][j];
            b->joint_cols[j] += swgpu__b62_joint[i][j];
        }
    for (int i = 0; i < SWGPU__STDAA; i++)
        for (int j = 0; j < SWGPU__STDAA; j++)
            b->start[i][j] = nint(ratio_score(swgpu__b62_freq_ratios[i][j], b->lambda));
    return SWGPU_OK;
}

/* the mean of M's row (or column, stride 'inc') over the true amino acids
 * weighted by prob */
static double avg_score(const double *M, int inc, const double *prob)
{
    double s = 0;
    for (int j = 0; j < SWGPU__STDAA; j++)
        if (to_true[j] >= 0)
            s += M[j * inc] * prob[j];
    return s;
}

static double x_score(const double *M, int inc, const double *prob)
{
    double s = avg_score(M, inc, prob);
    return s < MAX_X_SCORE ? s : MAX_X_SCORE;
}

/* BLAST's s_SetXUOScores: the scores against X from the compositions, U as
 * C, O as X */
static void set_xuo(double M[SWGPU__STDAA][SWGPU__STDAA], const double *rp, const double *cp)
{
    const int n = SWGPU__STDAA;
    double xx = 0;
    for (int i = 0; i < n; i++)
        if (to_true[i] >= 0) {
            double avg = avg_score(M[i], 1, cp);
            M[i][S_X] = avg < MAX_X_SCORE ? avg : MAX_X_SCORE;
            xx += avg * rp[i];
            M[S_X][i] = x_score(&M[0][i], n, rp);
        }
    M[S_X][S_X] = xx < MAX_X_SCORE ? xx : MAX_X_SCORE;
    const int amb[3] = {S_B, S_Z, S_J};
    for (int k = 0; k < 3; k++) {
        M[amb[k]][S_X] = x_score(M[amb[k]], 1, cp);
        M[S_X][amb[k]] = x_score(&M[0][amb[k]], n, rp);
    }
    memcpy(M[S_U], M[3], sizeof M[S_U]);
    for (int i = 0; i < n; i++)
        M[i][S_U] = M[i][3];
    memcpy(M[S_O], M[S_X], sizeof M[S_O]);
    for (int i = 0; i < n; i++)
        M[i][S_O] = M[i][S_X];
}

/* the pair's matrix from scores ln r / lambda at NCBIstdaa (rounded, the
 * stop codon's from the start matrix) into out in swgpu codes */
static void to_matrix(const swgpu__cbs_basis_t *b, double M[SWGPU__STDAA][SWGPU__STDAA],
                      swgpu_matrix_t *out)
{
    int32_t R[SWGPU__STDAA][SWGPU__STDAA];
    for (int i = 0; i < SWGPU__STDAA; i++)
        for (int j = 0; j < SWGPU__STDAA; j++)
            R[i][j] = M[i][j] <= (double)INT32_MIN ? INT32_MIN : nint(M[i][j]);
    for (int i = 0; i < SWGPU__STDAA; i++) {
        R[i][S_STOP] = b->start[i][S_STOP];
        R[S_STOP][i] = b->start[S_STOP][i];
    }
    *out = *b->m;
    out->builtin = 0;
    out->min = INT32_MAX;
    out->max = INT32_MIN;
    for (int a = 0; a < 27; a++)
        for (int c = 0; c < 27; c++) {
            int32_t v = R[swgpu__to_ncbistdaa[a]][swgpu__to_ncbistdaa[c]];
            out->s[a][c] = v;
            out->min = v < out->min ? v : out->min;
            out->max = v > out->max ? v : out->max;
        }
    for (int a = 0; a < SWGPU_NCODES; a++)
        for (int c = 0; c < SWGPU_NCODES; c++)
            if (a >= 27 || c >= 27)
                out->s[a][c] = out->min;
}

/* mode 1 (Blast_CompositionBasedStats): the start matrix's lambda under the
 * pair's compositions, its ratio to lambda_u within [0.5, 1], the ratios
 * rescaled */
static int scaled_matrix(const swgpu__cbs_basis_t *b, const swgpu__compo_t *q,
                         const swgpu__compo_t *s, swgpu_matrix_t *out)
{
    int lo = 0, hi = 0;
    for (int i = 0; i < SWGPU__STDAA; i++)
        for (int j = 0; j < SWGPU__STDAA; j++) {
            int32_t v = b->start[i][j];
            if (to_true[j] < 0)
                continue;
            if (v < lo && v > INT32_MIN)
                lo = v;
            if (v > hi)
                hi = v;
        }
    static _Thread_local double p[4096];
    if (hi - lo >= 4096)
        return swgpu__fail(SWGPU_EINVAL, "composition-based statistics: scores span too wide");
    memset(p, 0, (size_t)(hi - lo + 1) * sizeof *p);
    for (int i = 0; i < SWGPU__STDAA; i++)
        for (int j = 0; j < SWGPU__STDAA; j++)
            if (to_true[j] >= 0 && b->start[i][j] >= lo)
                p[b->start[i][j] - lo] += q->prob[i] * s->prob[j];
    double rho = swgpu__cbs_lambda_nr(p, lo, hi, b->lambda) / b->lambda;
    if (rho > 1)
        rho = 1;
    if (rho < LAMBDA_RATIO_MIN)
        rho = LAMBDA_RATIO_MIN;
    double M[SWGPU__STDAA][SWGPU__STDAA];
    for (int i = 0; i < SWGPU__STDAA; i++)
        for (int j = 0; j < SWGPU__STDAA; j++)
            M[i][j] = ratio_score(swgpu__b62_freq_ratios[i][j], b->lambda / rho);
    set_xuo(M, q->prob, s->prob);
    to_matrix(b, M, out);
    return SWGPU_OK;
}

/* probabilities in NCBIstdaa -> ARNDCQEGHILKMFPSTWYV */
static void gather(double *out, const double *std)
{
    for (int c = 0; c < SWGPU__STDAA; c++)
        if (to_true[c] >= 0)
            out[to_true[c]] = std[c];
}

/* BLAST's Blast_GetRelativeEntropy: the square root of the Jensen-Shannon
 * divergence of two compositions */
static double js_distance(const double *a, const double *b)
{
    double v = 0;
    for (int i = 0; i < SWGPU__N_STD_AA; i++) {
        double t = (a[i] + b[i]) / 2;
        if (t > 0) {
            if (a[i] > 0)
                v += a[i] * log(a[i] / t) / 2;
            if (b[i] > 0)
                v += b[i] * log(b[i] / t) / 2;
        }
    }
    return sqrt(v < 0 ? 0 : v);
}

/* the two most frequent residues make up more than 40% of a sequence of more
 * than 50 residues */
static int high_pair(const double *p, size_t len)
{
    double max = 0, second = 0;
    if (len <= 50)
        return 0;
    for (int i = 0; i < SWGPU__N_STD_AA; i++)
        if (p[i] > second) {
            second = p[i];
            if (p[i] > max) {
                second = max;
                max = p[i];
            }
        }
    return max + second > 0.4;
}

/* mode 2's rule (Altschul et al. 2005; BLAST's
 * s_TestToApplyREAdjustmentConditional): 1 to adjust the matrix, 0 to scale
 * it as mode 1 does - when neither sequence is dominated by two residues,
 * the compositions are far apart (distance > 0.16), the lengths differ more
 * than threefold and the angle at the matrix's background between the two
 * compositions exceeds 70 degrees */
static int adjust_rule(size_t qlen, size_t slen, const double *pq, const double *ps)
{
    if (high_pair(pq, qlen) || high_pair(ps, slen))
        return 1;
    double dm = js_distance(ps, swgpu__b62_bg), dq = js_distance(pq, swgpu__b62_bg),
           dmq = js_distance(ps, pq);
    double angle = acos((dm * dm + dq * dq - dmq * dmq) / 2.0 / dm / dq) * 180 / 3.1415926543;
    double large = (double)(qlen > slen ? qlen : slen), small = (double)(qlen > slen ? slen : qlen);
    return !(dmq > 0.16 && large / small > 3.0 && angle > 70.0);
}

/* BLAST's pseudocounts: p mixed with the background bg by weight
 * 20 / (n + 20) */
static void pseudocounts(double *p, size_t n, const double *bg)
{
    double sum = 0, w = 20.0 / ((double)n + 20.0);
    for (int i = 0; i < SWGPU__N_STD_AA; i++)
        sum += p[i];
    if (sum == 0.0)
        sum = 1.0;
    for (int i = 0; i < SWGPU__N_STD_AA; i++)
        p[i] = (1.0 - w) * p[i] / sum + w * bg[i];
}

/* NCBIstdaa probabilities of the 20-letter p, B Z J their pairs' sums */
static void unpack(double *std, const double *p)
{
    for (int c = 0; c < SWGPU__STDAA; c++)
        std[c] = to_true[c] >= 0 ? p[to_true[c]] : 0.0;
    std[S_B] = std[4] + std[13];
    std[S_Z] = std[5] + std[15];
    std[S_J] = std[9] + std[11];
}

/* the matrix of target frequencies x (20 x 20) and compositions row, col
 * (BLAST's s_ScoresStdAlphabet): ln(x_ij / (r_i c_j)) / lambda_u, with B, Z,
 * J as their pairs' sums, then the X, U, O and stop codon scores */
static void matrix_from_freqs(const swgpu__cbs_basis_t *b, const double *x, const double *row,
                              const double *col, swgpu_matrix_t *out)
{
    double R[SWGPU__STDAA], C[SWGPU__STDAA], M[SWGPU__STDAA][SWGPU__STDAA], sum = 0;
    unpack(R, row);
    unpack(C, col);
    for (int k = 0; k < SWGPU__N_STD_AA * SWGPU__N_STD_AA; k++)
        sum += x[k];
    memset(M, 0, sizeof M);
    for (int i = 0; i < SWGPU__STDAA; i++) {
        if (to_true[i] < 0)
            continue;
        for (int j = 0; j < SWGPU__STDAA; j++)
            if (to_true[j] >= 0)
                M[i][j] = x[to_true[i] * SWGPU__N_STD_AA + to_true[j]] / sum;
        M[i][S_B] = M[i][4] + M[i][13];
        M[i][S_Z] = M[i][5] + M[i][15];
        M[i][S_J] = M[i][9] + M[i][11];
    }
    for (int j = 0; j < SWGPU__STDAA; j++) {
        M[S_B][j] = M[4][j] + M[13][j];
        M[S_Z][j] = M[5][j] + M[15][j];
        M[S_J][j] = M[9][j] + M[11][j];
    }
    for (int i = 0; i < SWGPU__STDAA; i++)
        for (int j = 0; j < SWGPU__STDAA; j++) {
            if (R[i] > 0 && C[j] > 0)
                M[i][j] /= R[i] * C[j];
            M[i][j] = ratio_score(M[i][j], b->lambda);
        }
    set_xuo(M, R, C);
    to_matrix(b, M, out);
}

/* modes 2 and 3 (Blast_CompositionMatrixAdj): the target frequencies
 * closest to the matrix's joint probabilities with the pair's compositions
 * (20 pseudocounts of the matrix's background) as marginals and relative
 * entropy 0.44 (BLOSUM62's); 1 when they are not found (then mode 1) */
static int adjusted_matrix(const swgpu__cbs_basis_t *b, const swgpu__compo_t *q,
                           const swgpu__compo_t *s, swgpu_matrix_t *out)
{
    double row[SWGPU__N_STD_AA], col[SWGPU__N_STD_AA];
    double x[SWGPU__N_STD_AA * SWGPU__N_STD_AA];
    gather(row, q->prob);
    gather(col, s->prob);
    pseudocounts(row, q->n_true, b->joint_rows);
    pseudocounts(col, s->n_true, b->joint_cols);
    if (swgpu__cbs_optimize(x, &swgpu__b62_joint[0][0], row, col, 0.44, 1e-8, 2000))
        return 1;
    matrix_from_freqs(b, x, row, col, out);
    return 0;
}

int swgpu__cbs_matrix(const swgpu__cbs_basis_t *b, int mode, const swgpu__compo_t *q,
                      size_t qlen, const swgpu__compo_t *s, size_t slen, swgpu_matrix_t *out,
                      swgpu__cbs_rule_t *rule)
{
    if (rule)
        *rule = SWGPU__CBS_NONE;
    if (!q->n_true || !s->n_true)
        return 1; /* nothing to adjust to: BLAST drops the pair */
    if (mode < 1 || mode > 3)
        return swgpu__fail(SWGPU_EINVAL, "composition-based statistics mode %d: unknown", mode);
    if (mode > 1) {
        double pq[SWGPU__N_STD_AA], ps[SWGPU__N_STD_AA];
        gather(pq, q->prob);
        gather(ps, s->prob);
        if ((mode == 3 || adjust_rule(qlen, slen, pq, ps)) && !adjusted_matrix(b, q, s, out)) {
            if (rule)
                *rule = SWGPU__CBS_ADJUSTED;
            return SWGPU_OK;
        }
    }
    if (rule)
        *rule = SWGPU__CBS_SCALED;
    return scaled_matrix(b, q, s, out);
}
