/*
 * test_hsps.c - the further alignments of a pair (src/align/hsps.c,
 * swgpu_opts_t.max_hsps): on seeded random pairs with repeats (protein and
 * DNA), each next alignment's score equals the best local score that a
 * brute-force full-matrix Gotoh DP written here finds with the pairs of the
 * earlier alignments forbidden; the alignments share no aligned pair; each
 * CIGAR rescores (swgpu_cigar_score) to its score; the kept-matrix pass and
 * the linear-memory pass give identical alignments; the same with PSSM
 * queries (random position-specific rows).  lalign36's scores, the search's
 * order, numbering, E-values and refusals: tests/cli/hsps.sh.
 */
#include "align/align.h"
#include "tap.h"
#include "testlib.h"

#include <stdlib.h>
#include <string.h>

#define NEGV (-(1 << 28))

static int32_t mx(int32_t a, int32_t b)
{
    return a > b ? a : b;
}

/* query position i against code c: rows (a PSSM) or m */
static const int32_t *g_rows;
static int32_t score_of(const swgpu_matrix_t *m, const uint8_t *q, size_t i, uint8_t c)
{
    return g_rows ? g_rows[i * SWGPU_NCODES + c] : m->s[q[i]][c];
}

/* a's score recomputed from its CIGAR with score_of */
static int64_t rescore(const swgpu_aln_t *a, const uint8_t *q, const uint8_t *t,
                       const swgpu_matrix_t *m, int go, int ge)
{
    int64_t qi = a->qbeg, tj = a->tbeg, sc = 0;
    for (size_t k = 0; k < a->n_cigar; k++) {
        unsigned op = SWGPU_CIGAR_OP(a->cigar[k]);
        int64_t len = SWGPU_CIGAR_LEN(a->cigar[k]);
        if (op == SWGPU_CIGAR_M) {
            for (int64_t x = 0; x < len; x++)
                sc += score_of(m, q, (size_t)(qi + x), t[tj + x]);
            qi += len;
            tj += len;
        } else {
            sc -= go + len * ge;
            if (op == SWGPU_CIGAR_I)
                qi += len;
            else
                tj += len;
        }
    }
    return qi == a->qend && tj == a->tend ? sc : INT64_MIN;
}

/* The best local score of q x t with the pairs of used[i * tl + j] barred
 * from the diagonal step (three full matrices, plain loops). */
static int32_t brute(const uint8_t *q, size_t ql, const uint8_t *t, size_t tl,
                     const swgpu_matrix_t *m, int go, int ge, const uint8_t *used)
{
    size_t W = tl + 1;
    int32_t *H = calloc((ql + 1) * W, sizeof *H), *E = malloc((ql + 1) * W * sizeof *E),
            *F = malloc((ql + 1) * W * sizeof *F), best = 0;
    for (size_t k = 0; k < (ql + 1) * W; k++)
        E[k] = F[k] = NEGV;
    for (size_t i = 1; i <= ql; i++)
        for (size_t j = 1; j <= tl; j++) {
            size_t at = i * W + j;
            E[at] = mx(E[at - 1] - ge, H[at - 1] - go - ge);
            F[at] = mx(F[at - W] - ge, H[at - W] - go - ge);
            int32_t h = mx(0, mx(E[at], F[at]));
            if (!used[(i - 1) * tl + (j - 1)])
                h = mx(h, H[at - W - 1] + score_of(m, q, i - 1, t[j - 1]));
            H[at] = h;
            best = mx(best, h);
        }
    free(H);
    free(E);
    free(F);
    return best;
}

/* Mark a's pairs in used; 1 if one was marked already. */
static int mark(const swgpu_aln_t *a, size_t tl, uint8_t *used)
{
    int64_t qi = a->qbeg, tj = a->tbeg;
    int clash = 0;
    for (size_t k = 0; k < a->n_cigar; k++) {
        unsigned op = SWGPU_CIGAR_OP(a->cigar[k]);
        int64_t len = SWGPU_CIGAR_LEN(a->cigar[k]);
        if (op == SWGPU_CIGAR_I) {
            qi += len;
        } else if (op == SWGPU_CIGAR_D) {
            tj += len;
        } else {
            for (int64_t x = 0; x < len; x++, qi++, tj++) {
                clash |= used[(size_t)qi * tl + (size_t)tj];
                used[(size_t)qi * tl + (size_t)tj] = 1;
            }
        }
    }
    return clash;
}

/* t: pieces of q mutated, in shuffled order, with random residues between */
static size_t repeats(uint64_t *rng, const uint8_t *q, size_t ql, uint8_t *t, size_t cap,
                      int ncodes)
{
    size_t n = 0;
    for (int p = 0; p < 5 && n + 40 < cap; p++) {
        size_t gap = tap_rand(rng) % 20;
        tl_rand_codes(rng, t + n, gap, ncodes);
        n += gap;
        size_t a = tap_rand(rng) % ql, len = 5 + tap_rand(rng) % (ql / 2 + 1);
        if (a + len > ql)
            len = ql - a;
        n += tl_mutate_codes(rng, q + a, len, t + n, cap - n, ncodes, 150, 30, 30);
    }
    return n;
}

static void check_pair(const uint8_t *q, size_t ql, const uint8_t *t, size_t tl,
                       const swgpu_matrix_t *m, int go, int ge, int k, const char *what)
{
    swgpu__query_t Q = swgpu__query_plain(q, ql);
    Q.rows = g_rows;
    swgpu__hsps_t A, B;
    uint8_t *used = calloc(ql * tl + 1, 1);
    CHECK_EQ_INT(swgpu__hsps_init(&A, &Q, t, tl, m, go, ge), SWGPU_OK);
    CHECK_EQ_INT(swgpu__hsps_init(&B, &Q, t, tl, m, go, ge), SWGPU_OK);
    B.full = 0; /* the linear-memory pass */
    for (int n = 0; n < k; n++) {
        swgpu_aln_t a = {0}, b = {0};
        CHECK_EQ_INT(swgpu__hsps_next(&A, 0, &a), SWGPU_OK);
        CHECK_EQ_INT(swgpu__hsps_next(&B, 0, &b), SWGPU_OK);
        int32_t want = brute(q, ql, t, tl, m, go, ge, used);
        CHECK(a.score == want, "%s: alignment %d scores %lld, brute force %d", what, n + 1,
              (long long)a.score, (int)want);
        CHECK(a.score == b.score && a.qbeg == b.qbeg && a.qend == b.qend && a.tbeg == b.tbeg &&
                  a.tend == b.tend && a.n_cigar == b.n_cigar &&
                  (!a.n_cigar || !memcmp(a.cigar, b.cigar, a.n_cigar * sizeof *a.cigar)),
              "%s: alignment %d: the kept matrix and the linear pass differ", what, n + 1);
        if (a.score <= 0) {
            CHECK_EQ_INT(a.n_cigar, 0);
            swgpu_aln_free(&a);
            swgpu_aln_free(&b);
            break;
        }
        int64_t rescored = -1;
        if (g_rows)
            rescored = rescore(&a, q, t, m, go, ge);
        else
            CHECK_EQ_INT(swgpu_cigar_score(&a, q, ql, t, tl, m, go, ge, &rescored), SWGPU_OK);
        CHECK(rescored == a.score, "%s: alignment %d rescores to %lld, not %lld", what, n + 1,
              (long long)rescored, (long long)a.score);
        CHECK(!mark(&a, tl, used), "%s: alignment %d shares a pair with an earlier one", what,
              n + 1);
        CHECK_EQ_INT(swgpu__hsps_forbid(&A, &a), SWGPU_OK);
        CHECK_EQ_INT(swgpu__hsps_forbid(&B, &b), SWGPU_OK);
        swgpu_aln_free(&a);
        swgpu_aln_free(&b);
    }
    swgpu__hsps_free(&A);
    swgpu__hsps_free(&B);
    free(used);
}

static void test_random(void)
{
    uint64_t rng = 20261128;
    swgpu_matrix_t *b62 = NULL, *dna = NULL;
    CHECK_EQ_INT(swgpu_matrix_builtin("BLOSUM62", &b62), SWGPU_OK);
    CHECK_EQ_INT(swgpu_matrix_dna(2, -3, &dna), SWGPU_OK);
    uint8_t q[400], t[1200];
    for (int r = 0; r < 60; r++) {
        int prot = r % 2 == 0;
        size_t ql = 10 + tap_rand(&rng) % (r < 50 ? 120 : 390);
        tl_rand_codes(&rng, q, ql, prot ? 20 : 4);
        size_t tl = repeats(&rng, q, ql, t, sizeof t, prot ? 20 : 4);
        char what[64];
        snprintf(what, sizeof what, "pair %d (%s %zu x %zu)", r, prot ? "protein" : "DNA", ql, tl);
        check_pair(q, ql, t, tl, prot ? b62 : dna, prot ? 11 : 5, prot ? 1 : 2, 8, what);
    }
    /* PSSM queries: rows of random position-specific scores */
    int32_t *rows = malloc(400 * SWGPU_NCODES * sizeof *rows);
    for (int r = 0; r < 8; r++) {
        size_t ql = 20 + tap_rand(&rng) % 200;
        tl_rand_codes(&rng, q, ql, 20);
        for (size_t i = 0; i < ql * SWGPU_NCODES; i++)
            rows[i] = (int32_t)(tap_rand(&rng) % 14) - 5;
        for (size_t i = 0; i < ql; i++)
            rows[i * SWGPU_NCODES + q[i]] = 6 + (int32_t)(tap_rand(&rng) % 5);
        size_t tl = repeats(&rng, q, ql, t, sizeof t, 20);
        char what[64];
        snprintf(what, sizeof what, "PSSM pair %d (%zu x %zu)", r, ql, tl);
        g_rows = rows;
        check_pair(q, ql, t, tl, b62, 11, 1, 8, what);
        g_rows = NULL;
    }
    free(rows);
    /* gap costs with open 0 and extend 0 */
    tl_rand_codes(&rng, q, 80, 20);
    size_t tl = repeats(&rng, q, 80, t, sizeof t, 20);
    check_pair(q, 80, t, tl, b62, 0, 3, 8, "open 0");
    check_pair(q, 80, t, tl, b62, 9, 0, 8, "extend 0");
    /* an empty subject, a query of one residue */
    check_pair(q, 80, t, 0, b62, 11, 1, 3, "empty subject");
    check_pair(q, 1, t, tl, b62, 11, 1, 3, "one residue");
    swgpu_matrix_destroy(b62);
    swgpu_matrix_destroy(dna);
}

/* A CIGAR that runs off its pair is refused. */
static void test_refusals(void)
{
    swgpu_matrix_t *b62 = NULL;
    CHECK_EQ_INT(swgpu_matrix_builtin("BLOSUM62", &b62), SWGPU_OK);
    uint8_t q[10] = {0}, t[10] = {0};
    swgpu__query_t Q = swgpu__query_plain(q, 10);
    swgpu__hsps_t S;
    CHECK_EQ_INT(swgpu__hsps_init(&S, &Q, t, 10, b62, 11, 1), SWGPU_OK);
    uint32_t cig = (12u << 4) | SWGPU_CIGAR_M;
    swgpu_aln_t a = {.score = 1, .qbeg = 0, .qend = 10, .tbeg = 0, .tend = 10, .cigar = &cig,
                     .n_cigar = 1};
    CHECK_EQ_INT(swgpu__hsps_forbid(&S, &a), SWGPU_EINVAL);
    a.qend = 11;
    CHECK_EQ_INT(swgpu__hsps_forbid(&S, &a), SWGPU_EINVAL);
    swgpu__hsps_free(&S);
    swgpu_matrix_destroy(b62);
}

int main(void)
{
    test_random();
    test_refusals();
    return tap_done();
}
