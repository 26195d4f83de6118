/*
 * test_simd_pair.c - swgpu__cpu_score_pair (one long pair, 32-bit SIMD,
 * bands over threads) against swgpu__ref_score: score and tie-rule ends, on
 * random, related (mutated, with indels) and repetitive pairs (many tied
 * cells), every available instruction set, band heights that cut the query
 * at odd places, 1 to 3 threads.
 */
#include "cpu/cpu.h"
#include "tap.h"
#include "testlib.h"

#include <stdlib.h>
#include <string.h>

static const swgpu__isa_t isas[] = {SWGPU__ISA_SSE41, SWGPU__ISA_AVX2, SWGPU__ISA_AVX512};

/* t = q mutated at rate 1/rate: substitutions, and insertions and
 * deletions of 1 to 8 residues (long ones make gap chains that cross the
 * bands' edges).  Not testlib's tl_mutate_codes: the run length is
 * drawn for every residue and the events differ, so this test keeps its own
 * to keep its pairs. */
static size_t mutate(const uint8_t *q, size_t qlen, uint8_t *t, size_t cap, int ncodes, int rate,
                     uint64_t *rng)
{
    size_t n = 0;
    for (size_t i = 0; i < qlen && n < cap; i++) {
        uint64_t r = tap_rand(rng) % (uint64_t)(rate * 3);
        size_t run = 1 + (size_t)(tap_rand(rng) % 8);
        if (r == 0) { /* deletion: skip run query residues */
            i += run - 1;
            continue;
        }
        if (r == 1) /* insertion of run random residues */
            for (size_t k = 0; k < run && n < cap; k++) t[n++] = (uint8_t)(tap_rand(rng) % (uint64_t)ncodes);
        if (n < cap) t[n++] = r == 2 ? (uint8_t)(tap_rand(rng) % (uint64_t)ncodes) : q[i];
    }
    return n;
}

/* Every instruction set x band heights x threads on one pair. */
static void check_pair(const char *what, const uint8_t *q, size_t qlen, const uint8_t *t,
                       size_t tlen, const swgpu_matrix_t *m, int go, int ge)
{
    static const size_t bands[] = {0, 37, 64, 129};
    int32_t want = -1;
    int64_t wq = -1, wt = -1;
    CHECK(swgpu__ref_score(q, qlen, t, tlen, m, go, ge, &want, &wq, &wt) == 0, "%s: reference: %s",
          what, swgpu_last_error());
    for (int ii = 0; ii < 3; ii++) {
        if (!swgpu__cpu_isa_supported(isas[ii])) {
            char why[160];
            snprintf(why, sizeof why, "%s: this CPU lacks %s", what, swgpu__cpu_isa_name(isas[ii]));
            SKIP(1, why);
            continue;
        }
        long bad = 0;
        for (size_t bi = 0; bi < sizeof bands / sizeof bands[0]; bi++)
            for (int th = 1; th <= 3; th++) {
                int32_t sc = -1;
                int64_t qe = -1, te = -1;
                int rc = swgpu__cpu_score_pair_isa(q, qlen, t, tlen, m, go, ge, th, isas[ii], bands[bi],
                                                   &sc, &qe, &te);
                if (rc || sc != want || qe != wq || te != wt) {
                    if (bad++ < 3)
                        fprintf(stderr, "%s %s band %zu threads %d: rc %d score %d end (%lld, %lld), "
                                "expected %d (%lld, %lld)\n", what, swgpu__cpu_isa_name(isas[ii]),
                                bands[bi], th, rc, sc, (long long)qe, (long long)te, want,
                                (long long)wq, (long long)wt);
                }
            }
        CHECK(bad == 0, "%s: %s: %ld runs differ from the reference", what,
              swgpu__cpu_isa_name(isas[ii]), bad);
    }
}

int main(void)
{
    uint64_t rng = 2024;
    static const int gaps[][2] = {{11, 1}, {10, 2}, {5, 2}, {0, 1}, {3, 3}};
    swgpu_matrix_t *b62 = NULL, *pam30 = NULL, *dna = NULL;
    uint8_t *q = malloc(3000), *t = malloc(4000);
    char what[128];

    if (swgpu_matrix_builtin("BLOSUM62", &b62) || swgpu_matrix_builtin("PAM30", &pam30) ||
        swgpu_matrix_dna(2, -3, &dna)) {
        CHECK(0, "matrices: %s", swgpu_last_error());
        return tap_done();
    }
    /* unrelated protein pairs, every gap pair */
    for (int g = 0; g < 5; g++) {
        size_t ql = 300 + (size_t)g * 97, tl = 500 - (size_t)g * 31;
        tl_rand_codes(&rng, q, ql, 24);
        tl_rand_codes(&rng, t, tl, 24);
        snprintf(what, sizeof what, "random %zux%zu gaps %d/%d", ql, tl, gaps[g][0], gaps[g][1]);
        check_pair(what, q, ql, t, tl, b62, gaps[g][0], gaps[g][1]);
    }
    /* related pairs: long gapped alignments (the lazy-F loop and band edges
     * carry real gaps) */
    for (int g = 0; g < 5; g++) {
        size_t ql = 700 + (size_t)g * 211, tl;
        tl_rand_codes(&rng, q, ql, 20);
        tl = mutate(q, ql, t, 4000, 20, 12, &rng);
        snprintf(what, sizeof what, "related %zux%zu gaps %d/%d", ql, tl, gaps[g][0], gaps[g][1]);
        check_pair(what, q, ql, t, tl, g % 2 ? pam30 : b62, gaps[g][0], gaps[g][1]);
    }
    /* DNA: related, and periodic sequences with many tied best cells */
    {
        size_t ql = 1500, tl;
        tl_rand_codes(&rng, q, ql, 4);
        tl = mutate(q, ql, t, 4000, 4, 20, &rng);
        check_pair("dna related 5/2", q, ql, t, tl, dna, 5, 2);
        for (size_t i = 0; i < 600; i++) q[i] = (uint8_t)(i % 4);
        for (size_t i = 0; i < 900; i++) t[i] = (uint8_t)(i % 8 < 4 ? i % 4 : 3 - i % 4);
        check_pair("dna periodic 5/2", q, 600, t, 900, dna, 5, 2);
        check_pair("dna periodic 0/1", q, 600, t, 900, dna, 0, 1);
        memset(q, 0, 400);
        memset(t, 0, 300);
        check_pair("dna homopolymers", q, 400, t, 300, dna, 5, 2);
        tl_rand_codes(&rng, q, 300, 4);
        memcpy(t, q, 300);
        memcpy(t + 300, q, 300);
        memcpy(t + 600, q, 300);
        check_pair("dna tandem copies", q, 300, t, 900, dna, 3, 3);
    }
    /* a short query against a long target, and the reverse */
    tl_rand_codes(&rng, q, 40, 24);
    tl_rand_codes(&rng, t, 3900, 24);
    memcpy(t + 3000, q, 40);
    check_pair("40 x 3900", q, 40, t, 3900, b62, 11, 1);
    check_pair("3900 x 40", t, 3900, q, 40, b62, 11, 1);
    /* argument checks as the reference */
    {
        int32_t sc;
        CHECK_EQ_INT(swgpu__cpu_score_pair(q, 10, t, 10, b62, -1, 1, 1, &sc, NULL, NULL), SWGPU_EINVAL);
        CHECK_EQ_INT(swgpu__cpu_score_pair(q, 0, t, 10, b62, 11, 1, 1, &sc, NULL, NULL), 0);
        CHECK_EQ_INT(sc, 0);
    }
    free(q);
    free(t);
    swgpu_matrix_destroy(b62);
    swgpu_matrix_destroy(pam30);
    swgpu_matrix_destroy(dna);
    return tap_done();
}
