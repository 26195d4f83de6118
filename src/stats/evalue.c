/*
 * stats/evalue.c - bit scores and E-values from Karlin-Altschul parameters
 * (the published ones: tables.c; fitted ones: fit.c).
 *
 * Model.  For a local alignment score S of a query of m residues against an
 * unrelated target of n residues,
 *
 *     P(S >= x) ~ 1 - exp(-K m n e^{-lambda x}),
 *
 * so the expected number of chance hits scoring >= x is E = K m n e^{-lambda x}
 * and the bit score is S' = (lambda S - ln K) / ln 2.
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
#include <string.h>

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

int64_t swgpu__length_adjustment(const swgpu_karlin_t *k, uint64_t qlen, uint64_t db_residues,
                                 uint64_t db_nseq)
{
    if (k->estimated || k->alpha <= 0 || qlen == 0 || db_residues == 0 || db_nseq == 0)
        return 0;
    return (int64_t)length_adjustment(k, (double)qlen, (double)db_residues, (double)db_nseq);
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
    return swgpu__evalue_of_real(c, (double)score, tlen);
}

double swgpu__evalue_of_real(const swgpu__evalue_ctx_t *c, double S, uint64_t tlen)
{
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

int swgpu__evalue_may_reach(const swgpu__evalue_ctx_t *c, int32_t score, double max_e)
{
    if (!c->spouge)
        return swgpu__evalue_of(c, score, 0) <= max_e;
    /* a small margin covers rounding */
    const double enough = max_e * (1 + 1e-6);
    return !(spouge_bound(c, score, enough) > enough);
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
        return s >= limit ? INT32_MAX : s;
    }
    /* every score below the result is checked on its own: the bound need
     * not be monotonic */
    for (int32_t s = 1; s < limit; s++)
        if (swgpu__evalue_may_reach(c, s, max_e))
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
