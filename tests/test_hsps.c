/*
 * test_hsps.c - the further alignments of a pair (src/align/hsps.c,
 * swgpu_opts_t.max_hsps): on seeded random pairs with repeats (protein and
 * DNA), each next alignment's score equals the best local score that a
 * brute-force full-matrix Gotoh DP written here finds with the pairs of the
 * earlier alignments forbidden; the alignments share no aligned pair; each
 * CIGAR rescores (swgpu_cigar_score) to its score; the kept-matrix pass and
 * the linear-memory pass give identical alignments; the same with PSSM
 * queries (random position-specific rows).  swgpu_search with max_hsps on
 * random queries against subjects of their mutated pieces (protein; DNA on
 * both strands): each subject's HSPs adjacent, numbered and best first,
 * rescoring to their scores, sharing no pair on a strand; the ref and cpu
 * backends agree; max_hsps 0 and 1 the same; the refusals.  lalign36's
 * scores and blastp's rows: tests/cli/hsps.sh.
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
    swgpu__hsps_t A, B, C, D;
    uint8_t *used = calloc(ql * tl + 1, 1);
    CHECK_EQ_INT(swgpu__hsps_init(&A, &Q, t, tl, m, go, ge), SWGPU_OK);
    CHECK_EQ_INT(swgpu__hsps_init(&B, &Q, t, tl, m, go, ge), SWGPU_OK);
    CHECK_EQ_INT(swgpu__hsps_init(&C, &Q, t, tl, m, go, ge), SWGPU_OK);
    CHECK_EQ_INT(swgpu__hsps_init(&D, &Q, t, tl, m, go, ge), SWGPU_OK);
    B.full = D.full = 0; /* the linear-memory pass */
    B.no16 = C.no16 = 1; /* B and C: the 32-bit passes; A, D: the 16-bit one where it fits */
    for (int n = 0; n < k; n++) {
        swgpu_aln_t a = {0}, b = {0}, c = {0}, d = {0};
        CHECK_EQ_INT(swgpu__hsps_next(&A, 0, &a), SWGPU_OK);
        CHECK_EQ_INT(swgpu__hsps_next(&B, 0, &b), SWGPU_OK);
        CHECK_EQ_INT(swgpu__hsps_next(&C, 0, &c), SWGPU_OK);
        CHECK_EQ_INT(swgpu__hsps_next(&D, 0, &d), SWGPU_OK);
        CHECK(a.score == d.score && a.qbeg == d.qbeg && a.qend == d.qend && a.tbeg == d.tbeg &&
                  a.tend == d.tend && a.n_cigar == d.n_cigar &&
                  (!a.n_cigar || !memcmp(a.cigar, d.cigar, a.n_cigar * sizeof *a.cigar)),
              "%s: alignment %d: the 16-bit pass kept and linear differ", what, n + 1);
        CHECK(a.score == c.score && a.qbeg == c.qbeg && a.qend == c.qend && a.tbeg == c.tbeg &&
                  a.tend == c.tend && a.n_cigar == c.n_cigar &&
                  (!a.n_cigar || !memcmp(a.cigar, c.cigar, a.n_cigar * sizeof *a.cigar)),
              "%s: alignment %d: the 16-bit pass and the kept matrix differ", what, n + 1);
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
            swgpu_aln_free(&c);
            swgpu_aln_free(&d);
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
        CHECK_EQ_INT(swgpu__hsps_forbid(&C, &c), SWGPU_OK);
        CHECK_EQ_INT(swgpu__hsps_forbid(&D, &d), SWGPU_OK);
        swgpu_aln_free(&a);
        swgpu_aln_free(&b);
        swgpu_aln_free(&c);
        swgpu_aln_free(&d);
    }
    swgpu__hsps_free(&A);
    swgpu__hsps_free(&B);
    swgpu__hsps_free(&C);
    swgpu__hsps_free(&D);
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
    /* scores past the 16-bit lanes (the first alignments; the later ones
     * fit), a pair score past their limit, gaps past it */
    swgpu_matrix_t *big = NULL, *huge = NULL;
    CHECK_EQ_INT(swgpu_matrix_dna(200, -300, &big), SWGPU_OK);
    CHECK_EQ_INT(swgpu_matrix_dna(1500, -300, &huge), SWGPU_OK);
    for (int r = 0; r < 4; r++) {
        size_t ql = 250 + tap_rand(&rng) % 150;
        tl_rand_codes(&rng, q, ql, 4);
        memcpy(t, q, ql); /* a copy of the query scores ql * 200 */
        tl = ql + repeats(&rng, q, ql, t + ql, sizeof t - ql, 4);
        char what[64];
        snprintf(what, sizeof what, "large scores %d (%zu x %zu)", r, ql, tl);
        check_pair(q, ql, t, tl, big, 500, 200, 8, what);
    }
    /* mismatches far below a gap's cost: a gap that opens from the other
     * gap's cell scores best */
    swgpu_matrix_t *steep = NULL;
    CHECK_EQ_INT(swgpu_matrix_dna(2, -30, &steep), SWGPU_OK);
    for (int r = 0; r < 6; r++) {
        size_t ql = 30 + tap_rand(&rng) % 150;
        tl_rand_codes(&rng, q, ql, 4);
        tl = repeats(&rng, q, ql, t, sizeof t, 4);
        char what[64];
        snprintf(what, sizeof what, "steep mismatch %d (%zu x %zu)", r, ql, tl);
        check_pair(q, ql, t, tl, steep, 1, 1, 8, what);
    }
    swgpu_matrix_destroy(steep);
    check_pair(q, 120, t, tl, huge, 500, 200, 4, "pair score 1500");
    check_pair(q, 120, t, tl, dna, 1200, 2, 4, "gap open 1200");
    swgpu_matrix_destroy(big);
    swgpu_matrix_destroy(huge);
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

/* One search's hits, checked: each subject's HSPs adjacent after its first,
 * numbered, best first, each CIGAR rescoring to its score, no two on a
 * strand sharing an aligned pair; top subjects at most. */
static void check_result(const swgpu_search_result_t *r, const swgpu_seqset_t *qs,
                         const swgpu_db_t *db, const swgpu_matrix_t *m, const swgpu_opts_t *o,
                         const char *what)
{
    for (size_t i = 0; i < r->n_queries; i++) {
        const swgpu_query_result_t *qr = &r->q[i];
        swgpu_seq_t q;
        swgpu_seqset_get(qs, i, &q);
        size_t subjects = 0;
        for (size_t h = 0; h < qr->n_hits; h++) {
            const swgpu_hit_t *x = &qr->hits[h];
            swgpu_seq_t t;
            CHECK_EQ_INT(swgpu_db_get(db, x->target, &t), SWGPU_OK);
            if (x->hsp == 0) {
                subjects++;
            } else {
                CHECK(h > 0 && qr->hits[h - 1].target == x->target &&
                          qr->hits[h - 1].hsp == x->hsp - 1,
                      "%s: query %zu hit %zu (hsp %d) does not follow its subject's", what, i, h,
                      x->hsp);
                CHECK(x->score <= qr->hits[h - 1].score || qr->hits[h - 1].hsp == 0,
                      "%s: query %zu hit %zu: not best first", what, i, h);
                CHECK(x->evalue <= o->evalue, "%s: E-value %g", what, x->evalue);
            }
            uint8_t *res = malloc(t.len + 1);
            memcpy(res, t.res, t.len);
            swgpu_aln_t a = x->aln;
            if (x->minus) {
                swgpu_dna_revcomp(t.res, t.len, res);
                a.tbeg = (int64_t)t.len - x->aln.tend;
                a.tend = (int64_t)t.len - x->aln.tbeg;
            }
            int64_t sc = -1;
            CHECK_EQ_INT(swgpu_cigar_score(&a, q.res, q.len, res, t.len, m, o->gap_open,
                                           o->gap_extend, &sc), SWGPU_OK);
            CHECK(sc == x->score, "%s: query %zu hit %zu rescores to %lld, not %d", what, i, h,
                  (long long)sc, (int)x->score);
            /* no pair shared with an earlier HSP of the subject on its strand */
            uint8_t *used = calloc(q.len * t.len + 1, 1);
            for (size_t k = h - (size_t)x->hsp; k <= h; k++) {
                const swgpu_hit_t *y = &qr->hits[k];
                if (y->minus != x->minus)
                    continue;
                swgpu_aln_t b = y->aln;
                if (y->minus) {
                    b.tbeg = (int64_t)t.len - y->aln.tend;
                    b.tend = (int64_t)t.len - y->aln.tbeg;
                }
                CHECK(!mark(&b, t.len, used), "%s: query %zu hit %zu shares a pair", what, i, k);
            }
            free(used);
            free(res);
        }
        CHECK(subjects <= (size_t)o->top_n, "%s: %zu subjects", what, subjects);
    }
}

/* swgpu_search with max_hsps: random queries against subjects holding
 * mutated pieces of them, ref and cpu backends, 1 and 3 threads */
static void test_search(swgpu_alphabet_t al)
{
    uint64_t rng = al == SWGPU_DNA ? 77 : 78;
    const char *alpha = al == SWGPU_DNA ? TL_NUC : TL_AMINO;
    char qs[3][201], ts[8][1001], *qp[3], *tp[8];
    for (int i = 0; i < 3; i++) {
        tl_rand_letters(&rng, qs[i], 120 + 40 * (size_t)i, alpha);
        qp[i] = qs[i];
    }
    for (int k = 0; k < 8; k++) { /* pieces of the queries, random between */
        size_t n = 0;
        for (int p = 0; p < 4; p++) {
            char piece[201], mut[300];
            const char *src = qs[tap_rand(&rng) % 3];
            size_t a = tap_rand(&rng) % 80, len = 20 + tap_rand(&rng) % 60;
            memcpy(piece, src + a, len);
            piece[len] = 0;
            size_t ml = tl_mutate_letters(&rng, piece, mut, sizeof mut, 8, alpha);
            if (al == SWGPU_DNA && p % 2) { /* the other strand */
                for (size_t x = 0; x < ml / 2; x++) {
                    char c = mut[x];
                    mut[x] = mut[ml - 1 - x];
                    mut[ml - 1 - x] = c;
                }
                for (size_t x = 0; x < ml; x++)
                    mut[x] = "TGCA"[strchr(TL_NUC, mut[x]) - TL_NUC];
            }
            size_t gap = 5 + tap_rand(&rng) % 30;
            tl_rand_letters(&rng, ts[k] + n, gap, alpha);
            n += gap;
            memcpy(ts[k] + n, mut, ml);
            n += ml;
        }
        ts[k][n] = 0;
        tp[k] = ts[k];
    }
    swgpu_seqset_t *q = tl_set_of(al, (const char *const *)qp, 3, "q");
    swgpu_db_t *db = tl_db_of(al, (const char *const *)tp, 8, "t");
    swgpu_matrix_t *m = NULL;
    if (al == SWGPU_DNA)
        swgpu_matrix_dna(2, -3, &m);
    else
        swgpu_matrix_builtin("BLOSUM62", &m);
    swgpu_opts_t o;
    swgpu_opts_init(&o, al);
    o.max_hsps = 5;
    o.evalue = 1e6;
    o.top_n = 6;
    o.backend = SWGPU_BACKEND_REF;
    o.threads = 1;
    swgpu_search_result_t *ref = NULL, *cpu = NULL, *one = NULL, *zero = NULL;
    CHECK_EQ_INT(swgpu_search(q, db, m, &o, &ref), SWGPU_OK);
    check_result(ref, q, db, m, &o, al == SWGPU_DNA ? "DNA search" : "protein search");
    size_t more = 0;
    for (size_t i = 0; i < ref->n_queries; i++)
        for (size_t h = 0; h < ref->q[i].n_hits; h++)
            more += ref->q[i].hits[h].hsp > 0;
    CHECK(more > 20, "only %zu further HSPs", more);
    o.backend = SWGPU_BACKEND_CPU;
    o.threads = 3;
    CHECK_EQ_INT(swgpu_search(q, db, m, &o, &cpu), SWGPU_OK);
    CHECK(tl_same_hits(ref, cpu), "ref and cpu (3 threads) differ");
    o.max_hsps = 1;
    CHECK_EQ_INT(swgpu_search(q, db, m, &o, &one), SWGPU_OK);
    o.max_hsps = 0;
    CHECK_EQ_INT(swgpu_search(q, db, m, &o, &zero), SWGPU_OK);
    CHECK(tl_same_hits(one, zero), "max_hsps 1 and 0 differ");
    for (size_t i = 0; i < one->n_queries; i++)
        for (size_t h = 0; h < one->q[i].n_hits; h++)
            CHECK_EQ_INT(one->q[i].hits[h].hsp, 0);
    /* refusals */
    o.max_hsps = -1;
    CHECK_EQ_INT(swgpu_opts_check(&o, m), SWGPU_EINVAL);
    CHECK_EQ_STR(swgpu_last_error(), "max HSPs -1: must be >= 1 (alignments per query, "
                                     "subject and strand)");
    o.max_hsps = 2;
    o.no_align = 1;
    swgpu_search_result_t *none = NULL;
    CHECK_EQ_INT(swgpu_search(q, db, m, &o, &none), SWGPU_EINVAL);
    CHECK(none == NULL, "a refused search made a result");
    swgpu_search_result_destroy(one);
    swgpu_search_result_destroy(ref);
    swgpu_search_result_destroy(cpu);
    swgpu_search_result_destroy(zero);
    swgpu_matrix_destroy(m);
    swgpu_db_destroy(db);
    swgpu_seqset_destroy(q);
}

int main(void)
{
    test_random();
    test_refusals();
    test_search(SWGPU_PROTEIN);
    test_search(SWGPU_DNA);
    return tap_done();
}
