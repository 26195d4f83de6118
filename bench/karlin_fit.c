/*
 * karlin_fit.c - accuracy and speed of swgpu_karlin_fit on synthetic
 * extreme-value scores with known lambda and K.
 *
 *   build/bench/karlin_fit [replicates]      (default 30)
 *
 * Each case draws n scores S = floor(X), P(X >= x) = 1 - exp(-K m n_i
 * e^{-lambda x}), target lengths n_i uniform in [50, 1000], and gives a
 * fraction of them homolog-like scores far above the chance distribution.
 * The table shows the mean relative error (bias) and spread of lambda, the
 * bias of K (geometric mean) and the spread of ln K, and the time per fit.
 */
#include "swgpu.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "splitmix64.h"

static double unif(uint64_t *s)
{
    return ((double)(splitmix64(s) >> 11) + 0.5) / 9007199254740992.0;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    static const struct {
        const char *what;
        double lambda, K;
        uint64_t m;
        size_t n;
        double homologs;
    } cases[] = {
        {"BLOSUM62 11/1", 0.267, 0.041, 300, 5000, 0},
        {"BLOSUM62 11/1, 1% homologs", 0.267, 0.041, 300, 5000, 0.01},
        {"BLOSUM62 11/1, 10% homologs", 0.267, 0.041, 300, 5000, 0.10},
        {"BLOSUM62 11/1, n=500", 0.267, 0.041, 300, 500, 0},
        {"BLOSUM62 11/1, n=100000", 0.267, 0.041, 300, 100000, 0.01},
        {"DNA +2/-3 5/2, 2% homologs", 0.625, 0.41, 500, 5000, 0.02},
        {"DNA +1/-3 2/2", 1.37, 0.70, 1000, 5000, 0},
        {"lambda 0.1", 0.10, 0.01, 300, 20000, 0.01},
    };
    int reps = argc > 1 ? atoi(argv[1]) : 30;
    if (reps < 2)
        reps = 2;
    printf("%-30s %7s %7s | %9s %8s | %8s %8s | %5s | %9s\n", "case", "lambda", "K", "lam bias",
           "lam sd", "K bias", "sd lnK", "fails", "ms/fit");
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        size_t n = cases[c].n, nh = (size_t)(cases[c].homologs * (double)n);
        double lam = cases[c].lambda, K = cases[c].K;
        int32_t *sc = malloc(n * sizeof *sc);
        uint64_t *tl = malloc(n * sizeof *tl);
        if (!sc || !tl)
            return 1;
        double sl = 0, sl2 = 0, sk = 0, sk2 = 0, t = 0;
        int ok = 0, fails = 0;
        for (int r = 0; r < reps; r++) {
            uint64_t s = 1000 * (uint64_t)r + c + 1;
            for (size_t i = 0; i < n; i++) {
                tl[i] = 50 + splitmix64(&s) % 951;
                double x = (log(K * (double)cases[c].m * (double)tl[i]) - log(-log(unif(&s)))) / lam;
                sc[i] = (int32_t)floor(x);
                if (i < nh)
                    sc[i] = (int32_t)(x + 30.0 / lam + (double)(splitmix64(&s) % 200) / lam);
            }
            swgpu_karlin_t k;
            double t0 = now();
            int rc = swgpu_karlin_fit(sc, tl, n, cases[c].m, &k);
            t += now() - t0;
            if (rc < 0) {
                fails++;
                continue;
            }
            ok++;
            sl += k.lambda / lam - 1;
            sl2 += (k.lambda / lam - 1) * (k.lambda / lam - 1);
            sk += log(k.K / K);
            sk2 += log(k.K / K) * log(k.K / K);
        }
        double ml = ok ? sl / ok : NAN, mk = ok ? sk / ok : NAN;
        printf("%-30s %7.3f %7.3f | %+8.2f%% %7.2f%% | %+7.1f%% %8.3f | %5d | %9.2f\n",
               cases[c].what, lam, K, 100 * ml, 100 * sqrt(fmax(0, sl2 / ok - ml * ml)),
               100 * (exp(mk) - 1), sqrt(fmax(0, sk2 / ok - mk * mk)), fails, 1e3 * t / reps);
        free(sc);
        free(tl);
    }
    return 0;
}
