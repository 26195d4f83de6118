/*
 * test_simd.c - the CPU engine (every instruction set this CPU has, forced
 * one at a time, plus the scalar path) against the scalar reference
 * swgpu__ref_score, on seeded random protein and DNA databases, every
 * built-in matrix, several gap pairs, queries of length 1, sequences around
 * every lane/column boundary, saturation-forcing pairs (8-bit and 16-bit),
 * thread counts 1 and 2.
 */
#include "cpu/cpu.h"
#include "tap.h"
#include "testlib.h"

#include <stdlib.h>
#include <string.h>

/* The oracle: the scalar reference engine. */
static int64_t oracle(const uint8_t *q, size_t m, const uint8_t *t, size_t n,
                      const swgpu_matrix_t *mx, int o, int e)
{
    int32_t score = -1;
    if (swgpu__ref_score(q, m, t, n, mx, o, e, &score, NULL, NULL)) {
        fprintf(stderr, "reference failed: %s\n", swgpu_last_error());
        return -1;
    }
    return score;
}

/* ------------------------------------------------------------- fixtures */

static void matrix_random(swgpu_matrix_t *m, swgpu_alphabet_t alpha, int lo, int hi, uint64_t *rng)
{
    int n = alpha == SWGPU_DNA ? 15 : 27;
    memset(m, 0, sizeof *m);
    snprintf(m->name, sizeof m->name, "random%d_%d", lo, hi);
    m->alphabet = alpha;
    for (int a = 0; a < SWGPU_NCODES; a++)
        for (int b = 0; b < SWGPU_NCODES; b++) m->s[a][b] = lo;
    for (int a = 0; a < n; a++)
        for (int b = 0; b <= a; b++) {
            int v = a == b ? hi / 2 + (int)(tap_rand(rng) % (uint64_t)(hi - hi / 2 + 1))
                           : lo + (int)(tap_rand(rng) % (uint64_t)(hi / 2 - lo + 1));
            m->s[a][b] = m->s[b][a] = v;
        }
    m->min = lo;
    m->max = hi;
}

/* ----------------------------------------------------------- the checks */

static const swgpu__isa_t isas[] = {SWGPU__ISA_SCALAR, SWGPU__ISA_SSE41, SWGPU__ISA_AVX2,
                                    SWGPU__ISA_AVX512};
#define N_ISAS 4

/* Scan every query with every available instruction set at 1 and 2
 * threads (quick runs: 2); compare each score with the oracle.  Returns the
 * overflow count of the last scan (for callers that pin it). */
static uint64_t check_engine(const char *what, const tl_tdb_t *d, const swgpu_matrix_t *m,
                             int go, int ge, uint8_t **qs, const size_t *qlens, size_t nq)
{
    size_t n = d->db.n;
    int64_t *want = malloc(nq * n * sizeof *want);
    int32_t *got = malloc(n * sizeof *got);
    uint64_t last_ov = 0;
    for (size_t qi = 0; qi < nq; qi++)
        for (size_t k = 0; k < n; k++)
            want[qi * n + k] = oracle(qs[qi], qlens[qi], d->db.res + d->db.off[k],
                                      (size_t)(d->db.off[k + 1] - d->db.off[k]), m, go, ge);
    for (int ii = 0; ii < N_ISAS; ii++) {
        if (!swgpu__cpu_isa_supported(isas[ii])) {
            char why[160];
            snprintf(why, sizeof why, "%s: this CPU lacks %s", what, swgpu__cpu_isa_name(isas[ii]));
            SKIP(tap_quick() ? 1 : 2, why);
            continue;
        }
        for (int threads = tap_quick() ? 2 : 1; threads <= 2; threads++) {
            swgpu_opts_t o;
            void *st = NULL;
            long bad = 0;
            memset(&o, 0, sizeof o);
            o.gap_open = go;
            o.gap_extend = ge;
            o.threads = threads;
            int rc = swgpu__cpu_engine_create_isa(&d->db, m, &o, isas[ii], &st);
            CHECK(rc == 0, "%s %s: create: %s", what, swgpu__cpu_isa_name(isas[ii]), swgpu_last_error());
            if (rc) continue;
            for (size_t qi = 0; qi < nq; qi++) {
                swgpu_scan_stats_t ss = {0, 0, 0};
                for (size_t k = 0; k < n; k++) got[k] = -7;
                swgpu__query_t Q = swgpu__query_plain(qs[qi], qlens[qi]);
                rc = swgpu__engine_cpu.scan(st, &Q, got, &ss);
                if (rc) {
                    bad++;
                    fprintf(stderr, "%s: scan failed: %s\n", what, swgpu_last_error());
                    continue;
                }
                if (ss.cells != (uint64_t)qlens[qi] * d->db.total_res) bad++;
                last_ov = ss.overflows;
                for (size_t k = 0; k < n; k++)
                    if (got[k] != want[qi * n + k]) {
                        if (bad < 5)
                            fprintf(stderr, "%s %s threads %d: query %zu (len %zu) target %zu (len %llu): "
                                    "%d, expected %lld\n", what, swgpu__cpu_isa_name(isas[ii]), threads,
                                    qi, qlens[qi], k,
                                    (unsigned long long)(d->db.off[k + 1] - d->db.off[k]),
                                    got[k], (long long)want[qi * n + k]);
                        bad++;
                    }
            }
            CHECK(bad == 0, "%s: %s threads %d: %ld wrong scores", what,
                  swgpu__cpu_isa_name(isas[ii]), threads, bad);
            swgpu__engine_cpu.destroy(st);
        }
    }
    free(want);
    free(got);
    return last_ov;
}

/* Lengths that straddle the lane counts (16, 32, 64) and column blocks (4). */
static size_t db_len(size_t i, uint64_t *rng, size_t maxlen)
{
    static const size_t edge[] = {1, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129};
    size_t ne = sizeof edge / sizeof edge[0];
    if (i < ne) return edge[i];
    return 1 + (size_t)(tap_rand(rng) % maxlen);
}

static void test_random(swgpu_alphabet_t alpha, const swgpu_matrix_t *mats, int nmats,
                        const int (*gaps)[2], int ngaps, size_t nseq, uint64_t seed)
{
    uint64_t rng = seed;
    int ncodes = alpha == SWGPU_DNA ? 15 : 27;
    uint8_t *seqs[1024], *qs[8];
    size_t lens[1024], qlens[8] = {1, 2, 5, 33, 64, 150, 301, 4};
    size_t nq = sizeof qlens / sizeof qlens[0];
    tl_tdb_t d;
    char what[160];

    for (size_t i = 0; i < nseq; i++) {
        lens[i] = db_len(i, &rng, 400);
        seqs[i] = malloc(lens[i]);
        /* DNA: mostly ACGT, some IUPAC */
        for (size_t j = 0; j < lens[i]; j++)
            seqs[i][j] = (uint8_t)(alpha == SWGPU_DNA && tap_rand(&rng) % 16 ? tap_rand(&rng) % 4
                                                                                : tap_rand(&rng) % (uint64_t)ncodes);
    }
    /* a few database sequences share stretches with the first queries */
    for (size_t qi = 0; qi < nq; qi++) {
        qs[qi] = malloc(qlens[qi]);
        tl_rand_codes(&rng, qs[qi], qlens[qi], alpha == SWGPU_DNA ? 4 : ncodes);
    }
    for (size_t i = 40; i < nseq; i += 37) {
        size_t qi = 5 + i % 3, l = lens[i] < qlens[qi] ? lens[i] : qlens[qi];
        memcpy(seqs[i], qs[qi], l / 2 + 1 <= lens[i] ? l / 2 + 1 : l);
    }
    tl_tdb_build(&d, alpha, seqs, lens, nseq);
    for (int mi = 0; mi < nmats; mi++)
        for (int gi = 0; gi < ngaps; gi++) {
            snprintf(what, sizeof what, "%s %s gaps %d/%d", alpha == SWGPU_DNA ? "dna" : "protein",
                     mats[mi].name, gaps[gi][0], gaps[gi][1]);
            check_engine(what, &d, &mats[mi], gaps[gi][0], gaps[gi][1], qs, qlens, nq);
        }
    tl_tdb_free(&d);
    for (size_t i = 0; i < nseq; i++) free(seqs[i]);
    for (size_t qi = 0; qi < nq; qi++) free(qs[qi]);
}

/* Identical pairs force 8-bit and 16-bit saturation; the overflow counter
 * must count each recomputation. */
static void test_saturation(void)
{
    uint64_t rng = 99;
    swgpu_matrix_t m;
    uint8_t *seqs[100], *q[1];
    size_t lens[100], ql[1], i, nseq = 100;
    tl_tdb_t d;
    const int top = 7;

    /* a matrix where code top scores 127 against itself and -4 against
     * every other code: a homopolymer query of top scores 0 against
     * sequences without it, and 600 x 127 > 65535 against its own copy */
    matrix_random(&m, SWGPU_PROTEIN, -4, 11, &rng);
    for (int a = 0; a < SWGPU_NCODES; a++) m.s[top][a] = m.s[a][top] = -4;
    m.s[top][top] = 127;
    m.max = 127;
    ql[0] = 600;
    q[0] = malloc(ql[0]);
    for (i = 0; i < ql[0]; i++) q[0][i] = (uint8_t)(i % 50 ? (uint64_t)top : tap_rand(&rng) % 27);
    /* 60 short and 35 longer unrelated sequences (8-bit exact; the longer
     * ones keep the unit of the 600-residue copy dense, so it stays on the
     * 8-bit path), 3 copies of the query's first 300 residues (8-bit
     * saturates, 16-bit exact), 1 full copy (16-bit saturates too) and a
     * lone residue */
    for (i = 0; i < nseq; i++) {
        if (i < 95) {
            lens[i] = i < 60 ? 1 + (size_t)(tap_rand(&rng) % 90) : 400 + (size_t)(tap_rand(&rng) % 200);
            seqs[i] = malloc(lens[i]);
            tl_rand_codes(&rng, seqs[i], lens[i], 27);
            for (size_t j = 0; j < lens[i]; j++)
                if (seqs[i][j] == top) seqs[i][j] = (uint8_t)(top + 1);
        } else if (i < 98) {
            lens[i] = 300 + i;
            seqs[i] = malloc(lens[i]);
            memcpy(seqs[i], q[0], lens[i]);
        } else if (i == 98) {
            lens[i] = ql[0];
            seqs[i] = malloc(lens[i]);
            memcpy(seqs[i], q[0], lens[i]);
        } else {
            lens[i] = 1;
            seqs[i] = malloc(1);
            seqs[i][0] = (uint8_t)(top + 2);
        }
    }
    tl_tdb_build(&d, SWGPU_PROTEIN, seqs, lens, nseq);
    int64_t self = oracle(q[0], ql[0], q[0], ql[0], &m, 11, 1);
    CHECK(self > 65535, "the saturation test needs a self score above 65535, got %lld", (long long)self);
    uint64_t ov = check_engine("saturation 11/1", &d, &m, 11, 1, q, ql, 1);
    /* 4 rescored at 16 bits, 1 of them again at 32 bits */
    if (swgpu__cpu_isa_supported(SWGPU__ISA_SSE41))
        CHECK_EQ_INT(ov, 5);
    else
        SKIP(1, "overflow count: no SIMD instruction set");
    tl_tdb_free(&d);
    for (i = 0; i < nseq; i++) free(seqs[i]);
    free(q[0]);
}

/* Lane refill: one long sequence and many short ones (which the engine
 * packs into the long one's unit, several per lane; enough of them that the
 * unit is not sparse), some of them copies of query stretches that saturate
 * 8 bits, so saturated and exact sequences follow each other in the same
 * lane. */
static void test_refill(void)
{
    uint64_t rng = 77;
    swgpu_matrix_t *mp = NULL;
    uint8_t *seqs[1200], *q[3];
    size_t lens[1200], ql[3] = {150, 1, 61}, i, nseq = 1200;
    tl_tdb_t d;

    if (swgpu_matrix_builtin("BLOSUM62", &mp)) {
        CHECK(0, "BLOSUM62: %s", swgpu_last_error());
        return;
    }
    for (i = 0; i < 3; i++) {
        q[i] = malloc(ql[i]);
        tl_rand_codes(&rng, q[i], ql[i], 20);
    }
    for (i = 0; i < nseq; i++) {
        lens[i] = i == 7 ? 2000 : 1 + (size_t)(tap_rand(&rng) % 100);
        if (i % 23 == 5) lens[i] = 100 + i % 50; /* q[0] stretches: 8-bit saturates */
        seqs[i] = malloc(lens[i]);
        tl_rand_codes(&rng, seqs[i], lens[i], 24);
        if (i % 23 == 5) memcpy(seqs[i], q[0], lens[i] < ql[0] ? lens[i] : ql[0]);
    }
    tl_tdb_build(&d, SWGPU_PROTEIN, seqs, lens, nseq);
    check_engine("refill", &d, mp, 11, 1, q, ql, 3);
    tl_tdb_free(&d);
    for (i = 0; i < nseq; i++) free(seqs[i]);
    for (i = 0; i < 3; i++) free(q[i]);
    swgpu_matrix_destroy(mp);
}

/* Sparse databases: a few long sequences fill a few lanes only; the
 * engine scores them with the 32-bit pair kernel (query and target swapped
 * when the query is shorter), so scores beyond 16 bits come out directly. */
static void test_sparse(void)
{
    uint64_t rng = 31;
    swgpu_matrix_t *mp = NULL;
    uint8_t *seqs[3], *q[4];
    size_t lens[3] = {3000, 2500, 700}, ql[4] = {1, 50, 400, 2600}, i;
    tl_tdb_t d;

    if (swgpu_matrix_builtin("PAM70", &mp)) {
        CHECK(0, "PAM70: %s", swgpu_last_error());
        return;
    }
    for (i = 0; i < 4; i++) {
        q[i] = malloc(ql[i]);
        tl_rand_codes(&rng, q[i], ql[i], 20);
    }
    for (i = 0; i < 3; i++) {
        seqs[i] = malloc(lens[i]);
        tl_rand_codes(&rng, seqs[i], lens[i], 24);
    }
    memcpy(seqs[0] + 100, q[3], 2600); /* a 2600-residue exact copy: beyond 8 bits */
    memcpy(seqs[1] + 2000, q[2], 400);
    tl_tdb_build(&d, SWGPU_PROTEIN, seqs, lens, 3);
    check_engine("sparse 3 sequences", &d, mp, 10, 2, q, ql, 4);
    if (!tap_quick()) {
        /* an asymmetric matrix: the swap must transpose it */
        swgpu_matrix_t am = *mp;
        for (int a = 0; a < 27; a++)
            for (int b = 0; b < 27; b++) am.s[a][b] = (int32_t)(tap_rand(&rng) % 13) - 6;
        am.min = -6;
        am.max = 6;
        check_engine("sparse 3 sequences, asymmetric matrix", &d, &am, 10, 2, q, ql, 4);
    }
    tl_tdb_free(&d);
    for (i = 0; i < 3; i++) free(seqs[i]);
    for (i = 0; i < 4; i++) free(q[i]);
    swgpu_matrix_destroy(mp);
}

/* Empty query: every score 0; a database of one sequence of length 1. */
static void test_edges(void)
{
    uint64_t rng = 5;
    swgpu_matrix_t m;
    uint8_t one[1] = {3}, none[1] = {0}, *seqs[2] = {one, none}, *q[2];
    uint8_t qa[1] = {3}, qb[3] = {1, 3, 2};
    size_t lens[2] = {1, 0}, ql[2] = {1, 3};
    tl_tdb_t d;
    matrix_random(&m, SWGPU_PROTEIN, -4, 11, &rng);
    q[0] = qa;
    q[1] = qb;
    tl_tdb_build(&d, SWGPU_PROTEIN, seqs, lens, 2);
    check_engine("one residue and an empty sequence", &d, &m, 11, 1, q, ql, 2);

    swgpu_opts_t o;
    void *st = NULL;
    int32_t sc[2] = {-1, -1};
    memset(&o, 0, sizeof o);
    o.gap_open = 11;
    o.gap_extend = 1;
    CHECK_EQ_INT(swgpu__engine_cpu.create(&d.db, &m, &o, &st), 0);
    if (st) {
        swgpu__query_t Q = swgpu__query_plain(qa, 0);
        CHECK_EQ_INT(swgpu__engine_cpu.scan(st, &Q, sc, NULL), 0);
        CHECK_EQ_INT(sc[0], 0);
        CHECK_EQ_INT(sc[1], 0);
        swgpu__engine_cpu.destroy(st);
    }
    swgpu__engine_cpu.destroy(NULL);
    tl_tdb_free(&d);
}

int main(void)
{
    uint64_t rng = 12345;
    static const int gaps[][2] = {{11, 1}, {10, 2}, {5, 2}, {0, 1}, {3, 3}};
    static const char *names[] = {"BLOSUM62", "BLOSUM45", "BLOSUM50", "BLOSUM80",
                                  "BLOSUM90", "PAM30", "PAM70", "PAM250"};
    swgpu_matrix_t prot[9], dna[2], *mp;
    int i;

    for (i = 0; i < 8; i++) {
        mp = NULL;
        CHECK(swgpu_matrix_builtin(names[i], &mp) == 0, "matrix %s: %s", names[i], swgpu_last_error());
        if (!mp) return tap_done();
        prot[i] = *mp;
        swgpu_matrix_destroy(mp);
    }
    matrix_random(&prot[8], SWGPU_PROTEIN, -300, 400, &rng); /* beyond 8 bits: 16-bit path first */
    CHECK(swgpu_matrix_dna(2, -3, &mp) == 0, "dna matrix: %s", swgpu_last_error());
    dna[0] = *mp;
    swgpu_matrix_destroy(mp);
    CHECK(swgpu_matrix_dna(5, -4, &mp) == 0, "dna matrix: %s", swgpu_last_error());
    dna[1] = *mp;
    swgpu_matrix_destroy(mp);

    test_edges();
    test_refill();
    test_sparse();
    /* BLOSUM62 with every gap pair; each other matrix with one pair (quick
     * runs: two gap pairs, the matrix beyond 8 bits, one DNA scoring) */
    if (!tap_quick()) {
        test_random(SWGPU_PROTEIN, prot, 1, gaps, 5, 300, 1);
        for (i = 1; i < 9; i++)
            test_random(SWGPU_PROTEIN, prot + i, 1, gaps + i % 5, 1, 120, 10 + (uint64_t)i);
        test_random(SWGPU_DNA, dna, 2, gaps + 2, 2, 250, 3);
    } else {
        test_random(SWGPU_PROTEIN, prot, 1, gaps, 2, 100, 1);
        test_random(SWGPU_PROTEIN, prot + 8, 1, gaps, 1, 60, 18);
        test_random(SWGPU_DNA, dna, 1, gaps + 2, 1, 100, 3);
    }
    test_saturation();
    return tap_done();
}
