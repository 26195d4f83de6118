/*
 * stats/fit.c - Karlin-Altschul parameters fitted to a search's own scores
 * (swgpu_karlin_fit), for scoring systems without published ones.
 */
#include "stats/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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
