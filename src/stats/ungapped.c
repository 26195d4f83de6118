/*
 * stats/ungapped.c - ungapped Karlin-Altschul parameters of i.i.d. scores
 * (swgpu__ungapped_karlin) and a matrix's "ideal" ones
 * (swgpu__matrix_ideal_karlin), which the statistics of PSSMs build on.
 */
#include "stats/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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
            d = swgpu__gcd(d, s);
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
    for (int i = 0; i < SWGPU__N_STD_AA; i++)
        for (int j = 0; j < SWGPU__N_STD_AA; j++) {
            if (m->s[i][j] < lo) lo = m->s[i][j];
            if (m->s[i][j] > hi) hi = m->s[i][j];
        }
    double *prob = calloc((size_t)(hi - lo + 1), sizeof *prob);
    if (!prob)
        return swgpu__fail(SWGPU_ENOMEM, "ungapped statistics: out of memory");
    for (int i = 0; i < SWGPU__N_STD_AA; i++)
        for (int j = 0; j < SWGPU__N_STD_AA; j++)
            prob[m->s[i][j] - lo] += swgpu__robinson[i] * swgpu__robinson[j];
    int rc = swgpu__ungapped_karlin(prob, lo, hi, lambda, K, H);
    free(prob);
    return rc;
}
