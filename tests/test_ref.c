/*
 * test_ref.c - the scalar reference engine against a brute-force
 * full-matrix Gotoh DP written independently here (three full matrices,
 * plain loops, query-major order; the start found by a backward DP over
 * full matrices), on thousands of seeded random pairs: protein and DNA,
 * several matrices and gap pairs, lengths 0..2000, identical, all-mismatch
 * and related (mutated) pairs.  Every CIGAR is rescored and its statistics
 * recounted.  Also: hand-made tie cases, CIGAR helpers and their errors,
 * the `ref` scan engine at several thread counts, and a long pair aligned
 * in bounded memory.
 */
#include "align/align.h"
#include "tap.h"

#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

/* ------------------------------------------------------------ matrices */

/* DNA: match for identical A/C/G/T, mismatch for everything else (built
 * here, independently of swgpu_matrix_dna, for the hand-made cases). */
static void mat_dna(swgpu_matrix_t *m, int match, int mismatch)
{
    memset(m, 0, sizeof *m);
    snprintf(m->name, sizeof m->name, "dna%+d%+d", match, mismatch);
    m->alphabet = SWGPU_DNA;
    for (int a = 0; a < SWGPU_NCODES; a++)
        for (int b = 0; b < SWGPU_NCODES; b++)
            m->s[a][b] = (a == b && a < 4) ? match : mismatch;
    m->min = mismatch;
    m->max = match;
    m->match = match;
    m->mismatch = mismatch;
}

/* A random protein-like matrix over 27 codes: diagonal lo_d..hi_d, off
 * diagonal lo..hi, symmetric unless asym; codes beyond 27 score min. */
static void mat_random(swgpu_matrix_t *m, uint64_t seed, int lo_d, int hi_d, int lo, int hi,
                       int asym)
{
    uint64_t s = seed;
    memset(m, 0, sizeof *m);
    snprintf(m->name, sizeof m->name, "random%llu", (unsigned long long)seed);
    m->alphabet = SWGPU_PROTEIN;
    m->min = lo;
    m->max = hi_d > hi ? hi_d : hi;
    for (int a = 0; a < SWGPU_NCODES; a++)
        for (int b = 0; b < SWGPU_NCODES; b++)
            m->s[a][b] = lo;
    for (int a = 0; a < 27; a++)
        for (int b = asym ? 0 : a; b < 27; b++) {
            int v = a == b ? lo_d + (int)(tap_rand(&s) % (uint64_t)(hi_d - lo_d + 1))
                           : lo + (int)(tap_rand(&s) % (uint64_t)(hi - lo + 1));
            m->s[a][b] = v;
            if (!asym)
                m->s[b][a] = v;
        }
}

/* ----------------------------------------------------------- sequences */

/* A residue code: a standard one, or (about 1 in 20 or 25) an ambiguity
 * code with a second draw.  This test's sequences and mutants draw through
 * it, not testlib's uniform tl_rand_codes and tl_mutate_codes (whose events
 * and lengths differ too), so that its pairs stay as they are. */
static uint8_t rand_code(uint64_t *s, int dna)
{
    uint64_t r = tap_rand(s) % 100;
    if (dna)
        return r < 95 ? (uint8_t)(r % 4) : (uint8_t)(4 + tap_rand(s) % 11);
    return r < 96 ? (uint8_t)(r % 20) : (uint8_t)(20 + tap_rand(s) % 7);
}

static void rand_seq(uint64_t *s, uint8_t *x, size_t n, int dna)
{
    for (size_t i = 0; i < n; i++)
        x[i] = rand_code(s, dna);
}

/* A mutated copy of x (substitutions, short insertions and deletions at
 * rate pct %) into y (room for cap); returns its length. */
static size_t mutate(uint64_t *s, const uint8_t *x, size_t n, uint8_t *y, size_t cap, int dna,
                     int pct)
{
    size_t k = 0;
    for (size_t i = 0; i < n && k < cap; i++) {
        uint64_t r = tap_rand(s) % 1000;
        if (r < (uint64_t)pct * 6) { /* substitution */
            y[k++] = rand_code(s, dna);
        } else if (r < (uint64_t)pct * 8) { /* deletion of 1..4 */
            i += tap_rand(s) % 4;
        } else if (r < (uint64_t)pct * 10) { /* insertion of 1..4 */
            int len = 1 + (int)(tap_rand(s) % 4);
            for (int j = 0; j < len && k < cap; j++)
                y[k++] = rand_code(s, dna);
            if (k < cap)
                y[k++] = x[i];
        } else {
            y[k++] = x[i];
        }
    }
    return k;
}

/* --------------------------------------------------------- brute force */

typedef struct {
    int32_t score;
    int64_t qb, qe, tb, te;
} bf_t;

#define BF_NEG (-(1 << 28))
#define IX(i, j) ((size_t)(i) * (size_t)(N + 1) + (size_t)(j))

static int64_t imax(int64_t a, int64_t b)
{
    return a > b ? a : b;
}

/*
 * Full matrices, query-major: H[i][j] best local score of an alignment
 * ending at node (i, j); E ends with a D column (target only), F with an
 * I column (query only).  End: over all nodes of maximal H, the smallest
 * j, then the smallest i.  Start: a backward DP anchored at the end node,
 * BM[i][j] = best score of a path from node (i, j) to the end whose first
 * column is M; the start is the node with BM == best of largest j, then
 * largest i.
 */
static void bf_local(const uint8_t *q, int M, const uint8_t *t, int N, const swgpu_matrix_t *m,
                     int go, int ge, bf_t *r)
{
    size_t cells = (size_t)(M + 1) * (size_t)(N + 1);
    int32_t *H = malloc(cells * sizeof *H), *E = malloc(cells * sizeof *E),
            *F = malloc(cells * sizeof *F);
    int64_t best = 0;
    memset(r, 0, sizeof *r);
    for (int i = 0; i <= M; i++)
        for (int j = 0; j <= N; j++) {
            if (i == 0 || j == 0) {
                H[IX(i, j)] = 0;
                E[IX(i, j)] = F[IX(i, j)] = BF_NEG;
                continue;
            }
            int64_t e = imax(E[IX(i, j - 1)] - ge, H[IX(i, j - 1)] - go - ge);
            int64_t f = imax(F[IX(i - 1, j)] - ge, H[IX(i - 1, j)] - go - ge);
            int64_t h = H[IX(i - 1, j - 1)] + m->s[q[i - 1]][t[j - 1]];
            h = imax(imax(h, 0), imax(e, f));
            E[IX(i, j)] = (int32_t)imax(e, BF_NEG);
            F[IX(i, j)] = (int32_t)imax(f, BF_NEG);
            H[IX(i, j)] = (int32_t)h;
            best = imax(best, h);
        }
    if (best > 0) {
        int found = 0;
        for (int j = 0; j <= N && !found; j++)
            for (int i = 0; i <= M && !found; i++)
                if (H[IX(i, j)] == best) {
                    r->qe = i;
                    r->te = j;
                    found = 1;
                }
        /* backward, anchored at (qe, te): reuse H as BH, E as BD, F as BI;
         * BD/BI hold the run WITHOUT its opening (a continuing gap). */
        int ie = (int)r->qe, je = (int)r->te;
        int32_t *BM = malloc(cells * sizeof *BM);
        for (int i = ie; i >= 0; i--)
            for (int j = je; j >= 0; j--) {
                if (i == ie && j == je) {
                    H[IX(i, j)] = 0;
                    E[IX(i, j)] = F[IX(i, j)] = BM[IX(i, j)] = BF_NEG;
                    continue;
                }
                int64_t bm = BF_NEG, bd = BF_NEG, bi = BF_NEG;
                if (i < ie && j < je)
                    bm = H[IX(i + 1, j + 1)] + m->s[q[i]][t[j]];
                if (j < je) /* D column consuming t[j] */
                    bd = imax(E[IX(i, j + 1)], H[IX(i, j + 1)]) - ge;
                if (i < ie) /* I column consuming q[i] */
                    bi = imax(F[IX(i + 1, j)], H[IX(i + 1, j)]) - ge;
                BM[IX(i, j)] = (int32_t)imax(bm, BF_NEG);
                E[IX(i, j)] = (int32_t)imax(bd, BF_NEG);
                F[IX(i, j)] = (int32_t)imax(bi, BF_NEG);
                H[IX(i, j)] = (int32_t)imax(bm, imax(bd - go, bi - go));
            }
        found = 0;
        for (int j = je; j >= 0 && !found; j--)
            for (int i = ie; i >= 0 && !found; i--)
                if (BM[IX(i, j)] == best) {
                    r->qb = i;
                    r->tb = j;
                    found = 1;
                }
        free(BM);
    }
    r->score = (int32_t)best;
    free(H);
    free(E);
    free(F);
}

/* ------------------------------------------------------------- checks */

static long n_pairs, n_bad;
static char last_cfg[128];

/* Everything about one alignment that does not need the brute force:
 * CIGAR shape, extent, rescoring (ours and swgpu_cigar_score), stats. */
static int check_cigar(const swgpu_aln_t *a, const uint8_t *q, size_t M, const uint8_t *t,
                       size_t N, const swgpu_matrix_t *m, int go, int ge)
{
    int64_t qi = a->qbeg, ti = a->tbeg, sc = 0, len = 0, id = 0, mis = 0, opens = 0, gaps = 0;
    int64_t lib = 0;
    int ok = 1;
    if (a->score == 0)
        return a->n_cigar == 0 && a->qbeg == 0 && a->qend == 0 && a->tbeg == 0 && a->tend == 0;
    if (a->n_cigar == 0 || SWGPU_CIGAR_OP(a->cigar[0]) != SWGPU_CIGAR_M ||
        SWGPU_CIGAR_OP(a->cigar[a->n_cigar - 1]) != SWGPU_CIGAR_M)
        return 0;
    for (size_t k = 0; k < a->n_cigar; k++) {
        unsigned op = SWGPU_CIGAR_OP(a->cigar[k]);
        int64_t l = SWGPU_CIGAR_LEN(a->cigar[k]);
        if (l == 0 || op > 2 || (k && SWGPU_CIGAR_OP(a->cigar[k - 1]) == op))
            return 0;
        len += l;
        if (op == SWGPU_CIGAR_M) {
            if (qi + l > (int64_t)M || ti + l > (int64_t)N)
                return 0;
            for (int64_t x = 0; x < l; x++) {
                sc += m->s[q[qi + x]][t[ti + x]];
                if (q[qi + x] == t[ti + x])
                    id++;
                else
                    mis++;
            }
            qi += l;
            ti += l;
        } else {
            sc -= go + l * ge;
            opens++;
            gaps += l;
            if (op == SWGPU_CIGAR_I)
                qi += l;
            else
                ti += l;
        }
    }
    ok &= qi == a->qend && ti == a->tend && sc == a->score;
    ok &= swgpu_cigar_score(a, q, M, t, N, m, go, ge, &lib) == 0 && lib == a->score;
    ok &= a->length == len && a->n_ident == id && a->n_mismatch == mis &&
          a->n_gapopen == opens && a->n_gaps == gaps;
    return ok;
}

/* One pair: brute force vs swgpu__ref_score and swgpu_align (both modes). */
static void check_pair(const uint8_t *q, size_t M, const uint8_t *t, size_t N,
                       const swgpu_matrix_t *m, int go, int ge, swgpu_aln_t *a)
{
    bf_t b;
    int32_t sc = -1;
    int64_t qe = -1, te = -1;
    int ok_score, ok_so, ok_full, rc1, rc2, rc3;
    swgpu_aln_t so = {0};

    bf_local(q, (int)M, t, (int)N, m, go, ge, &b);
    rc1 = swgpu__ref_score(q, M, t, N, m, go, ge, &sc, &qe, &te);
    ok_score = rc1 == 0 && sc == b.score && qe == b.qe && te == b.te;
    rc2 = swgpu_align(q, M, t, N, m, go, ge, 1, &so);
    ok_so = rc2 == 0 && so.score == b.score && so.qbeg == b.qb && so.qend == b.qe &&
            so.tbeg == b.tb && so.tend == b.te && so.n_cigar == 0;
    rc3 = swgpu_align(q, M, t, N, m, go, ge, 0, a);
    ok_full = rc3 == 0 && a->score == b.score && a->qbeg == b.qb && a->qend == b.qe &&
              a->tbeg == b.tb && a->tend == b.te && check_cigar(a, q, M, t, N, m, go, ge);
    n_pairs++;
    if (!ok_score || !ok_so || !ok_full) {
        n_bad++;
        if (n_bad <= 10) {
            char cig[256];
            swgpu_cigar_string(a, cig, sizeof cig);
            fprintf(stderr,
                    "pair %ld (%s, %zu x %zu, gaps %d/%d): brute %d [%lld,%lld)x[%lld,%lld); "
                    "score rc %d %d (%lld,%lld); score-only rc %d %d [%lld,%lld)x[%lld,%lld); "
                    "align rc %d %d [%lld,%lld)x[%lld,%lld) %s %s\n",
                    n_pairs, last_cfg, M, N, go, ge, b.score, (long long)b.qb, (long long)b.qe,
                    (long long)b.tb, (long long)b.te, rc1, sc, (long long)qe, (long long)te,
                    rc2, (int)so.score, (long long)so.qbeg, (long long)so.qend, (long long)so.tbeg,
                    (long long)so.tend, rc3, (int)a->score, (long long)a->qbeg, (long long)a->qend,
                    (long long)a->tbeg, (long long)a->tend, cig, swgpu_last_error());
        }
    }
    CHECK(ok_score, "ref_score vs brute force (%s %zux%zu %d/%d)", last_cfg, M, N, go, ge);
    CHECK(ok_so, "score-only align vs brute force (%s %zux%zu %d/%d)", last_cfg, M, N, go, ge);
    CHECK(ok_full, "align vs brute force (%s %zux%zu %d/%d)", last_cfg, M, N, go, ge);
    swgpu_aln_free(&so);
}

/* Pair lengths: mostly short, some medium; long ones (1000..2000) only
 * where asked. */
static size_t pick_len(uint64_t *s, int is_long)
{
    uint64_t r = tap_rand(s) % 1000;
    if (is_long)
        return 1000 + (size_t)(tap_rand(s) % 1001);
    if (r < 40)
        return r % 3; /* 0, 1, 2 */
    if (r < 800)
        return (size_t)(tap_rand(s) % 60);
    return (size_t)(tap_rand(s) % 400);
}

static void random_pairs(const swgpu_matrix_t *m, int dna, int go, int ge, int npairs,
                         uint64_t seed, int n_long)
{
    enum { CAP = 2600 };
    static uint8_t q[CAP], t[CAP];
    swgpu_aln_t a = {0};
    uint64_t s = seed;
    snprintf(last_cfg, sizeof last_cfg, "%.60s", m->name);
    for (int k = 0; k < npairs; k++) {
        int kind = (int)(tap_rand(&s) % 10);
        int is_long = k < n_long;
        size_t M = pick_len(&s, is_long), N;
        rand_seq(&s, q, M, dna);
        if (kind < 4) { /* unrelated */
            N = pick_len(&s, is_long);
            rand_seq(&s, t, N, dna);
        } else if (kind < 8) { /* related: mutated copy, maybe inside flanks */
            size_t pre = tap_rand(&s) % 3 ? 0 : tap_rand(&s) % 30;
            rand_seq(&s, t, pre, dna);
            N = pre + mutate(&s, q, M, t + pre, CAP - pre - 40, dna, 1 + (int)(tap_rand(&s) % 30));
            size_t post = tap_rand(&s) % 3 ? 0 : tap_rand(&s) % 30;
            rand_seq(&s, t + N, post, dna);
            N += post;
        } else if (kind == 8) { /* identical */
            N = M;
            memcpy(t, q, M);
        } else { /* all mismatch: a residue that differs from every query residue */
            N = pick_len(&s, is_long);
            for (size_t j = 0; j < N; j++)
                t[j] = dna ? (uint8_t)(q[0 % (M ? M : 1)] == 0 ? 1 : 0) : 0;
            if (dna) { /* query all one base, target another */
                for (size_t i = 0; i < M; i++)
                    q[i] = 2;
            } else {
                for (size_t i = 0; i < M; i++)
                    q[i] = (uint8_t)(1 + i % 19);
            }
        }
        check_pair(q, M, t, N, m, go, ge, &a);
        if ((k & 1) == 0) /* the swapped pair too */
            check_pair(t, N, q, M, m, go, ge, &a);
    }
    swgpu_aln_free(&a);
}

/* -------------------------------------------------------- hand-made ties */

static void encode(const char *s, uint8_t *x, size_t *n)
{
    const char *dna = "ACGT";
    *n = strlen(s);
    for (size_t i = 0; i < *n; i++)
        x[i] = (uint8_t)(strchr(dna, s[i]) - dna);
}

static void test_ties(void)
{
    swgpu_matrix_t m;
    swgpu_aln_t a = {0};
    uint8_t q[64], t[64];
    size_t M, N;
    char cig[64];
    mat_dna(&m, 2, -2);

    /* ACAA/AGAA and AA/AA both score 4 ending at (4,4): the shorter wins */
    encode("ACAA", q, &M);
    encode("AGAA", t, &N);
    CHECK_EQ_INT(swgpu_align(q, M, t, N, &m, 5, 2, 0, &a), 0);
    CHECK_EQ_INT(a.score, 4);
    CHECK_EQ_INT(a.qbeg, 2);
    CHECK_EQ_INT(a.tbeg, 2);
    CHECK_EQ_INT(a.qend, 4);
    CHECK_EQ_INT(a.tend, 4);
    swgpu_cigar_string(&a, cig, sizeof cig);
    CHECK_EQ_STR(cig, "2M");

    /* two equal best cells, AA ending at (2,6) and GG at (6,2): the
     * smallest target end wins even though its query end is larger */
    encode("AATTGG", q, &M);
    encode("GGCCAA", t, &N);
    CHECK_EQ_INT(swgpu_align(q, M, t, N, &m, 5, 2, 0, &a), 0);
    CHECK_EQ_INT(a.score, 4);
    CHECK_EQ_INT(a.qend, 6);
    CHECK_EQ_INT(a.tend, 2);
    CHECK_EQ_INT(a.qbeg, 4);
    CHECK_EQ_INT(a.tbeg, 0);

    /* same target end, two query ends: the smaller query end wins */
    encode("CACAC", q, &M);
    encode("AC", t, &N);
    CHECK_EQ_INT(swgpu_align(q, M, t, N, &m, 5, 2, 0, &a), 0);
    CHECK_EQ_INT(a.score, 4);
    CHECK_EQ_INT(a.qend, 3);
    CHECK_EQ_INT(a.tend, 2);
    CHECK_EQ_INT(a.qbeg, 1);

    /* a gapped alignment: ACGTACGT vs ACGTTTACGT, gap 1/1: 16 - (1+2) */
    encode("ACGTACGT", q, &M);
    encode("ACGTTTACGT", t, &N);
    CHECK_EQ_INT(swgpu_align(q, M, t, N, &m, 1, 1, 0, &a), 0);
    CHECK_EQ_INT(a.score, 13);
    swgpu_cigar_string(&a, cig, sizeof cig);
    CHECK(strcmp(cig, "4M2D4M") == 0 || strcmp(cig, "3M2D5M") == 0 ||
              strcmp(cig, "5M2D3M") == 0, "cigar %s", cig);
    CHECK_EQ_INT(a.n_gapopen, 1);
    CHECK_EQ_INT(a.n_gaps, 2);
    CHECK_EQ_INT(a.n_ident, 8);
    CHECK_EQ_INT(a.n_mismatch, 0);
    CHECK_EQ_INT(a.length, 10);

    /* empty and all-negative inputs: score 0, everything 0 */
    CHECK_EQ_INT(swgpu_align(q, 0, t, N, &m, 1, 1, 0, &a), 0);
    CHECK_EQ_INT(a.score, 0);
    CHECK_EQ_INT(a.n_cigar, 0);
    encode("AAAA", q, &M);
    encode("CCC", t, &N);
    CHECK_EQ_INT(swgpu_align(q, M, t, N, &m, 1, 1, 0, &a), 0);
    CHECK_EQ_INT(a.score, 0);
    CHECK_EQ_INT(a.qend + a.tend + a.qbeg + a.tbeg + (int64_t)a.n_cigar, 0);
    swgpu_aln_free(&a);
    CHECK(a.cigar == NULL && a.m_cigar == 0, "aln_free resets");
    swgpu_aln_free(NULL);
}

/* ------------------------------------------------------- cigar helpers */

static void test_cigar_helpers(void)
{
    swgpu_matrix_t m;
    uint8_t q[16], t[16];
    size_t M, N;
    uint32_t cig[4];
    swgpu_aln_t a = {0};
    int64_t sc = 0;
    char buf[64];
    mat_dna(&m, 2, -3);
    encode("ACGTACGT", q, &M);
    encode("ACGAACGTT", t, &N);
    a.cigar = cig;
    a.n_cigar = 3;
    a.m_cigar = 4;
    cig[0] = 3u << 4 | SWGPU_CIGAR_M;
    cig[1] = 1u << 4 | SWGPU_CIGAR_D;
    cig[2] = 4u << 4 | SWGPU_CIGAR_M;
    /* ACG/ACG, D A, TACG vs ACGT: 6 - (5+2) + (-3-3-3-3) */
    CHECK_EQ_INT(swgpu_cigar_score(&a, q, M, t, N, &m, 5, 2, &sc), 0);
    CHECK_EQ_INT(sc, 6 - 7 - 12);
    a.qbeg = 1;
    a.tbeg = 1; /* CGT/CGA, D A, ACGT/CGTT -> runs off the query (1+3+4 = 8 ok) */
    CHECK_EQ_INT(swgpu_cigar_score(&a, q, M, t, N, &m, 5, 2, &sc), 0);
    a.qbeg = 2; /* 2+3+4 = 9 > 8: off the query */
    CHECK_EQ_INT(swgpu_cigar_score(&a, q, M, t, N, &m, 5, 2, &sc), SWGPU_EINVAL);
    a.qbeg = 0;
    a.tbeg = 2; /* target: 2+3+1+4 = 10 > 9 */
    CHECK_EQ_INT(swgpu_cigar_score(&a, q, M, t, N, &m, 5, 2, &sc), SWGPU_EINVAL);
    a.tbeg = 0;
    cig[1] = 0u << 4 | SWGPU_CIGAR_D; /* zero-length element */
    CHECK_EQ_INT(swgpu_cigar_score(&a, q, M, t, N, &m, 5, 2, &sc), SWGPU_EINVAL);
    cig[1] = 1u << 4 | 7u; /* unknown op */
    CHECK_EQ_INT(swgpu_cigar_score(&a, q, M, t, N, &m, 5, 2, &sc), SWGPU_EINVAL);
    cig[1] = 12u << 4 | SWGPU_CIGAR_I;
    CHECK_EQ_INT(swgpu_cigar_string(&a, buf, sizeof buf), 7);
    CHECK_EQ_STR(buf, "3M12I4M");
    CHECK_EQ_INT(swgpu_cigar_string(&a, buf, 5), 7); /* truncated, still terminated */
    CHECK_EQ_STR(buf, "3M");
    CHECK_EQ_INT(swgpu_cigar_string(&a, NULL, 0), 7);
    a.n_cigar = 0;
    CHECK_EQ_INT(swgpu_cigar_string(&a, buf, sizeof buf), 0);
    CHECK_EQ_STR(buf, "");
}

/* -------------------------------------------------------- bad arguments */

static void test_bad_args(void)
{
    swgpu_matrix_t m;
    swgpu_aln_t a = {0};
    uint8_t q[4] = {0, 1, 2, 3};
    int32_t sc;
    mat_dna(&m, 2, -3);
    CHECK_EQ_INT(swgpu_align(q, 4, q, 4, &m, -1, 1, 0, &a), SWGPU_EINVAL);
    CHECK(strstr(swgpu_last_error(), "gap") != NULL, "message: %s", swgpu_last_error());
    CHECK_EQ_INT(swgpu_align(q, 4, q, 4, &m, 1, -2, 0, &a), SWGPU_EINVAL);
    CHECK_EQ_INT(swgpu_align(q, 4, q, 4, NULL, 1, 1, 0, &a), SWGPU_EINVAL);
    CHECK_EQ_INT(swgpu_align(q, 4, q, 4, &m, 1, 1, 0, NULL), SWGPU_EINVAL);
    CHECK_EQ_INT(swgpu__ref_score(q, 4, q, 4, &m, 1 << 30, 1, &sc, NULL, NULL), SWGPU_EINVAL);
    CHECK_EQ_INT(swgpu__ref_score(NULL, 4, q, 4, &m, 1, 1, &sc, NULL, NULL), SWGPU_EINVAL);
    /* a matrix whose maximum could overflow 32 bits over these lengths */
    m.max = 1 << 24;
    m.s[0][0] = 1 << 24;
    {
        size_t n = 200;
        uint8_t *z = calloc(n, 1);
        CHECK_EQ_INT(swgpu__ref_score(z, n, z, n, &m, 1, 1, &sc, NULL, NULL), SWGPU_ERANGE);
        free(z);
    }
    swgpu_aln_free(&a);
}

/* ----------------------------------------------------------- scan engine */

static void test_engine(void)
{
    enum { NSEQ = 300 };
    swgpu_matrix_t m;
    uint64_t s = 99, off[NSEQ + 1];
    uint32_t orig[NSEQ], rank[NSEQ];
    uint8_t *res, q[300];
    int32_t want[NSEQ], got[NSEQ];
    size_t qlen = 150;
    swgpu_db_t db;
    swgpu_opts_t o;
    mat_random(&m, 7, 4, 11, -4, 3, 0);

    /* database of increasing lengths 0..NSEQ-1 (sorted already) */
    off[0] = 0;
    for (int k = 0; k < NSEQ; k++)
        off[k + 1] = off[k] + (uint64_t)k;
    res = malloc(off[NSEQ] + 1);
    rand_seq(&s, q, qlen, 0);
    for (int k = 0; k < NSEQ; k++) {
        rand_seq(&s, res + off[k], (size_t)k, 0);
        if (k % 3 == 0 && k > 20) /* some related: a mutated piece of the query */
            mutate(&s, q + 10, (size_t)k < qlen - 10 ? (size_t)k : qlen - 10, res + off[k],
                   (size_t)k, 0, 10);
        orig[k] = rank[k] = (uint32_t)k;
        int64_t qe, te;
        swgpu__ref_score(q, qlen, res + off[k], (size_t)k, &m, 11, 1, &want[k], &qe, &te);
    }
    memset(&db, 0, sizeof db);
    db.alphabet = SWGPU_PROTEIN;
    db.n = NSEQ;
    db.total_res = off[NSEQ];
    db.max_len = NSEQ - 1;
    db.res = res;
    db.off = off;
    db.orig = orig;
    db.rank = rank;
    memset(&o, 0, sizeof o);
    o.gap_open = 11;
    o.gap_extend = 1;
    for (int th = 0; th <= 5; th += (th ? 2 : 1)) { /* 0 (all cores), 1, 3, 5 */
        void *st = NULL;
        swgpu_scan_stats_t stats = {0, 0, 0};
        o.threads = th;
        CHECK_EQ_INT(swgpu__engine_ref.create(&db, &m, &o, &st), 0);
        memset(got, 0x7f, sizeof got);
        swgpu__query_t Q = swgpu__query_plain(q, qlen), Q0 = swgpu__query_plain(q, 0);
        CHECK_EQ_INT(swgpu__engine_ref.scan(st, &Q, got, &stats), 0);
        CHECK(memcmp(got, want, sizeof got) == 0, "engine scores with %d threads", th);
        CHECK_EQ_INT(stats.cells, (uint64_t)qlen * off[NSEQ]);
        /* an empty query scores 0 everywhere */
        CHECK_EQ_INT(swgpu__engine_ref.scan(st, &Q0, got, &stats), 0);
        CHECK_EQ_INT(got[NSEQ - 1] + got[NSEQ / 2], 0);
        swgpu__engine_ref.destroy(st);
    }
    swgpu__engine_ref.destroy(NULL);
    CHECK_EQ_STR(swgpu__engine_ref.name, "ref");
    int related = 0;
    for (int k = 0; k < NSEQ; k++)
        related += want[k] > 60;
    CHECK(related > 10, "related targets score high (%d)", related);
    free(res);
}

/* ------------------------------------------------------------ long pair */

static long peak_rss_kb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

/* 20k x ~20k related protein pair: a full traceback matrix would need at
 * least 400 MB; the linear-memory path must stay far below. */
static void test_long(void)
{
    const size_t n = 20000;
    swgpu_matrix_t m;
    uint64_t s = 4242;
    uint8_t *q = malloc(n), *t = malloc(n + n / 4);
    swgpu_aln_t a = {0};
    int64_t sc = 0;
    int32_t score;
    long before = peak_rss_kb();
    mat_random(&m, 62, 4, 11, -4, 3, 0);
    rand_seq(&s, q, n, 0);
    size_t N = mutate(&s, q, n, t, n + n / 4, 0, 8);
    CHECK_EQ_INT(swgpu_align(q, n, t, N, &m, 11, 1, 0, &a), 0);
    CHECK(a.score > 20000, "long related pair scores %d", (int)a.score);
    CHECK(check_cigar(&a, q, n, t, N, &m, 11, 1), "long pair CIGAR rescores and counts");
    CHECK_EQ_INT(swgpu_cigar_score(&a, q, n, t, N, &m, 11, 1, &sc), 0);
    CHECK_EQ_INT(sc, a.score);
    long grew = peak_rss_kb() - before;
    CHECK(grew < 64 * 1024, "long pair peak memory grew by %ld kB", grew);
    /* reversing both sequences gives the same score */
    for (size_t i = 0; i < n / 2; i++) {
        uint8_t x = q[i];
        q[i] = q[n - 1 - i];
        q[n - 1 - i] = x;
    }
    for (size_t j = 0; j < N / 2; j++) {
        uint8_t x = t[j];
        t[j] = t[N - 1 - j];
        t[N - 1 - j] = x;
    }
    CHECK_EQ_INT(swgpu__ref_score(q, n, t, N, &m, 11, 1, &score, NULL, NULL), 0);
    CHECK_EQ_INT(score, a.score);
    swgpu_aln_free(&a);
    free(q);
    free(t);
}

/* ----------------------------------------------------------------- main */

int main(void)
{
    static const int gaps[][2] = {{11, 1}, {10, 2}, {5, 2}, {0, 1}, {3, 3},
                                  {20, 5}, {8, 0},  {1, 1}, {0, 0}};
    static const char *builtins[] = {"BLOSUM45", "BLOSUM50", "BLOSUM62", "BLOSUM80",
                                     "BLOSUM90", "PAM30",    "PAM70",    "PAM250"};
    static const int dna_scores[][2] = {{2, -3}, {1, -2}, {5, -4}};
    const int ngaps = (int)(sizeof gaps / sizeof gaps[0]);
    /* random pairs per matrix and gap costs (SWGPU_TEST_QUICK, the sanitizers: 10) */
    const int npairs = tap_quick() ? 10 : 28;
    enum { NB = 8, ND = 3, NMAT = NB + ND + 1 };
    swgpu_matrix_t *mats[NMAT] = {0}, asym;
    int dna[NMAT] = {0};

    test_long(); /* first, so the peak-memory reading is its own */
    test_ties();
    test_cigar_helpers();
    test_bad_args();
    test_engine();

    for (int k = 0; k < NB; k++)
        CHECK_EQ_INT(swgpu_matrix_builtin(builtins[k], &mats[k]), 0);
    for (int k = 0; k < ND; k++) {
        CHECK_EQ_INT(swgpu_matrix_dna(dna_scores[k][0], dna_scores[k][1], &mats[NB + k]), 0);
        dna[NB + k] = 1;
    }
    /* an asymmetric matrix pins the convention s[query code][target code] */
    mat_random(&asym, 13, 1, 9, -6, 5, 1);
    mats[NMAT - 1] = &asym;
    for (int mi = 0; mi < NMAT; mi++) {
        if (!mats[mi])
            continue;
        for (int g = 0; g < ngaps; g++)
            random_pairs(mats[mi], dna[mi], gaps[g][0], gaps[g][1], npairs,
                         1000u * (uint64_t)mi + (uint64_t)g, g < 2 ? 1 : 0);
    }
    printf("# %ld random pairs, %ld disagreed with the brute force\n", n_pairs, n_bad);
    CHECK(n_pairs > (tap_quick() ? 1400 : 4000), "pairs checked: %ld", n_pairs);
    CHECK_EQ_INT(n_bad, 0);
    for (int k = 0; k < NB + ND; k++)
        swgpu_matrix_destroy(mats[k]);
    return tap_done();
}
