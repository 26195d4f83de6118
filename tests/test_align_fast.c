/*
 * test_align_fast.c - the SIMD alignment kernels (simd/aln_simd.h) against
 * the scalar code they replace: for every instruction set this CPU has,
 * swgpu__align_from_end_isa must give the same begin, end, CIGAR and
 * statistics as swgpu__align_from_end_scalar (and the same status on bad
 * input), and swgpu__cpu_score_pair_isa (one thread: the 16-bit LOCAL
 * kernel) the same score and end as swgpu__ref_score, on random, related,
 * tie-heavy and edge-case pairs under several matrices and gap costs.
 */
#include "cpu/cpu.h"
#include "tap.h"
#include "testlib.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *name; /* matrix name, or NULL for DNA */
    int match, mismatch;
    int go, ge;
    int ncodes; /* residues drawn from codes 0..ncodes-1 */
} scoring_t;

static const scoring_t scorings[] = {
    {"BLOSUM62", 0, 0, 11, 1, 24},
    {"BLOSUM62", 0, 0, 0, 1, 20},  /* gap open 0 */
    {"BLOSUM45", 0, 0, 15, 2, 23},
    {"PAM30", 0, 0, 9, 1, 20},
    {"BLOSUM80", 0, 0, 3, 3, 20},
    {NULL, 2, -3, 5, 2, 4},
    {NULL, 1, -4, 1, 1, 5},        /* gaps cheaper than mismatches */
    {NULL, 5, -4, 0, 2, 4},
    {NULL, 1, -1, 2, 0, 4},        /* free extension */
    {"BLOSUM62", 0, 0, 20000, 1, 20}, /* too wide for the 16-bit kernels */
};

static size_t rnd(uint64_t *s, size_t n)
{
    return n ? (size_t)(tap_rand(s) % n) : 0;
}

/* y = x with substitutions, insertions and deletions (rates in 1/1000).
 * Not testlib's tl_mutate_codes: deletions here are of 1..8 residues and
 * the substitution is a second draw per residue, so this test keeps its own
 * to keep its pairs. */
static size_t mutate(uint64_t *s, const uint8_t *x, size_t n, uint8_t *y, size_t cap,
                     int ncodes, int sub, int indel)
{
    size_t k = 0;
    for (size_t i = 0; i < n && k < cap; i++) {
        size_t r = rnd(s, 1000);
        if (r < (size_t)indel) { /* deletion of 1..8 */
            i += rnd(s, 8);
            continue;
        }
        if (r < 2 * (size_t)indel) { /* insertion of 1..8 */
            size_t len = 1 + rnd(s, 8);
            for (size_t j = 0; j < len && k < cap; j++)
                y[k++] = (uint8_t)rnd(s, (size_t)ncodes);
        }
        if (k < cap)
            y[k++] = rnd(s, 1000) < (size_t)sub ? (uint8_t)rnd(s, (size_t)ncodes) : x[i];
    }
    return k;
}

static long n_pairs, n_cells;

/* one pair under every supported isa: end from the scalar oracle, then
 * the rest scalar vs SIMD; also start-only and a wrong score */
static void check_pair(const uint8_t *q, size_t ql, const uint8_t *t, size_t tl,
                       const swgpu_matrix_t *m, const scoring_t *sc, const int *isas, int nisa,
                       const char *what)
{
    int32_t score = 0;
    int64_t qend = 0, tend = 0;
    swgpu_aln_t ref = {0};
    int rc0, rc;
    if (swgpu__ref_score(q, ql, t, tl, m, sc->go, sc->ge, &score, &qend, &tend)) {
        CHECK(0, "%s: ref_score failed: %s", what, swgpu_last_error());
        return;
    }
    rc0 = swgpu__align_from_end_scalar(q, ql, t, tl, m, sc->go, sc->ge, score, qend, tend, 0,
                                       &ref);
    CHECK(rc0 == 0, "%s: scalar alignment failed: %s", what, swgpu_last_error());
    n_pairs++;
    n_cells += (long)(ql * tl);
    /* the score and end of the pair engine (one thread: the 16-bit LOCAL
     * kernel where it applies) */
    for (int k = 0; k < nisa; k++) {
        int32_t s2 = -1;
        int64_t qe2 = -1, te2 = -1;
        if (isas[k] < 0 || (isas[k] & SWGPU__ALN_ONLY32))
            continue;
        rc = swgpu__cpu_score_pair_isa(q, ql, t, tl, m, sc->go, sc->ge, 1, (swgpu__isa_t)isas[k],
                                       0, &s2, &qe2, &te2);
        CHECK(rc == 0 && s2 == score && qe2 == qend && te2 == tend,
              "%s (%s %d/%d, isa %d, %zu x %zu): pair score %d end (%lld,%lld), reference %d "
              "(%lld,%lld)", what, sc->name ? sc->name : "dna", sc->go, sc->ge, isas[k], ql, tl,
              (int)s2, (long long)qe2, (long long)te2, (int)score, (long long)qend,
              (long long)tend);
    }
    for (int k = 0; k < nisa; k++) {
        swgpu_aln_t a = {0};
        int64_t qb = -1, tb = -1, qb0 = -1, tb0 = -1;
        rc = swgpu__align_from_end_isa(q, ql, t, tl, m, sc->go, sc->ge, score, qend, tend, 0,
                                       &a, isas[k]);
        CHECK(rc == rc0 && tl_same_aln(&a, &ref),
              "%s (%s %d/%d, isa %d, %zu x %zu, score %d): rc %d/%d, begin (%lld,%lld) vs "
              "(%lld,%lld), %zu vs %zu cigar ops", what, sc->name ? sc->name : "dna", sc->go,
              sc->ge, isas[k], ql, tl, (int)score, rc, rc0, (long long)a.qbeg,
              (long long)a.tbeg, (long long)ref.qbeg, (long long)ref.tbeg, a.n_cigar,
              ref.n_cigar);
        swgpu_aln_free(&a);
        if (score > 0) {
            /* a score one too high: no begin reaches it */
            int rs0 = swgpu__ref_start_scalar(q, ql, t, tl, m, sc->go, sc->ge, score + 1, qend,
                                              tend, &qb0, &tb0);
            rc = swgpu__ref_start_isa(q, ql, t, tl, m, sc->go, sc->ge, score + 1, qend, tend,
                                      &qb, &tb, isas[k]);
            CHECK(rc == rs0 && rc != 0, "%s: score+1: rc %d vs %d", what, rc, rs0);
            if (score > 1) {
                /* too low: some alignment exceeds it (or reaches it first) */
                rs0 = swgpu__ref_start_scalar(q, ql, t, tl, m, sc->go, sc->ge, score - 1, qend,
                                              tend, &qb0, &tb0);
                rc = swgpu__ref_start_isa(q, ql, t, tl, m, sc->go, sc->ge, score - 1, qend,
                                          tend, &qb, &tb, isas[k]);
                CHECK(rc == rs0 && (rc || (qb == qb0 && tb == tb0)),
                      "%s: score-1: rc %d vs %d, (%lld,%lld) vs (%lld,%lld)", what, rc, rs0,
                      (long long)qb, (long long)tb, (long long)qb0, (long long)tb0);
            }
        }
    }
    swgpu_aln_free(&ref);
}

int main(void)
{
    const swgpu__isa_t all[] = {SWGPU__ISA_SSE41, SWGPU__ISA_AVX2, SWGPU__ISA_AVX512};
    int isas[8], nisa = 0;
    uint64_t seed = 20240611;
    const size_t cap = 2100;
    uint8_t *q = malloc(cap), *t = malloc(cap);

    /* each isa with its 16-bit kernels where exact, and with 32-bit only */
    for (int k = 0; k < 3; k++)
        if (swgpu__cpu_isa_supported(all[k])) {
            isas[nisa++] = (int)all[k];
            isas[nisa++] = (int)all[k] | SWGPU__ALN_ONLY32;
        }
    /* -1 (the default) too, and scalar against itself through the _isa path */
    isas[nisa++] = -1;
    if (nisa == 1)
        SKIP(1, "no SSE4.1 on this CPU: only the default (scalar) path is compared");

    for (size_t si = 0; si < sizeof scorings / sizeof *scorings; si++) {
        const scoring_t *sc = &scorings[si];
        swgpu_matrix_t *m = NULL;
        int rc = sc->name ? swgpu_matrix_builtin(sc->name, &m)
                          : swgpu_matrix_dna(sc->match, sc->mismatch, &m);
        CHECK(rc == 0, "matrix %s: %s", sc->name ? sc->name : "dna", swgpu_last_error());
        if (rc)
            continue;
        /* edge cases: empty, single residues, homopolymers, all-X */
        for (int c = 0; c < sc->ncodes; c++) {
            uint8_t a = (uint8_t)c, b = (uint8_t)((c + 1) % sc->ncodes);
            check_pair(&a, 1, &a, 1, m, sc, isas, nisa, "single same");
            check_pair(&a, 1, &b, 1, m, sc, isas, nisa, "single other");
            check_pair(&a, 0, &b, 1, m, sc, isas, nisa, "empty");
        }
        for (size_t n = 1; n < 40; n += 3) {
            memset(q, 0, n);
            memset(t, 0, n + n / 3);
            check_pair(q, n, t, n + n / 3, m, sc, isas, nisa, "homopolymer");
            memset(q, sc->ncodes - 1, n); /* X for the protein sets with 24 codes */
            check_pair(q, n, q, n, m, sc, isas, nisa, "all last code");
            check_pair(q, n, t, n + n / 3, m, sc, isas, nisa, "last code vs homopolymer");
        }
        /* random pairs of all sizes; related pairs; low complexity */
        for (int it = 0; it < 260; it += tap_quick() ? 2 : 1) { /* quick: every other */
            size_t ql, tl;
            int kind = (int)rnd(&seed, 4);
            size_t maxlen = it < 200 ? 80 : it < 250 ? 600 : 2000;
            ql = rnd(&seed, maxlen + 1);
            /* low complexity (kind 3): 1 to 3 codes */
            tl_rand_codes(&seed, q, ql, kind == 3 ? 1 + (int)rnd(&seed, 3) : sc->ncodes);
            if (kind == 0) {
                tl = rnd(&seed, maxlen + 1);
                tl_rand_codes(&seed, t, tl, sc->ncodes);
            } else {
                tl = mutate(&seed, q, ql, t, cap, sc->ncodes, kind == 1 ? 100 : 300,
                            kind == 1 ? 10 : 40);
            }
            check_pair(q, ql, t, tl, m, sc, isas, nisa, kind == 0 ? "random" : "related");
        }
        if (si == 0) {
            /* a wide query (its kernel scratch is more than a thread keeps) */
            size_t wl = 150000, tl = 60;
            uint8_t *wq = malloc(wl);
            tl_rand_codes(&seed, wq, wl, sc->ncodes);
            tl_rand_codes(&seed, t, tl, sc->ncodes);
            memcpy(wq + wl / 2, t, tl);
            wq[wl / 2 + 7] = 3;
            check_pair(wq, wl, t, tl, m, sc, isas, nisa, "wide query");
            check_pair(t, tl, wq, wl, m, sc, isas, nisa, "wide target");
            free(wq);
        }
        swgpu_matrix_destroy(m);
    }
    printf("# %ld pairs, %ld cells, %d instruction sets\n", n_pairs, n_cells, nisa);
    free(q);
    free(t);
    return tap_done();
}
