/*
 * test_long.c - swgpu_align_long() against the reference swgpu_align():
 * same score, same begin and end coordinates (tie rules), a CIGAR that
 * rescores to the score with matching statistics.  Random and related
 * (mutated: substitutions and indels) pairs, DNA and protein, several gap
 * pairs, thread counts and memory budgets (which change the split layout),
 * with the full-matrix base case made small so that paths cross many
 * strips and the divide and conquer goes several levels deep.  Edge cases:
 * empty, length 1, identical, all-mismatch, reverse complement, N runs,
 * a budget too small.  With a CUDA device: the GPU path gives the very
 * same alignments as the CPU path (skipped without one).
 */
#include "long/long.h"
#include "align/align.h"
#include "tap.h"
#include "testlib.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

static swgpu_matrix_t *dna, *blosum;

static swgpu_long_opts_t opts(int open, int ext, int threads, uint64_t budget, swgpu_backend_t b)
{
    swgpu_long_opts_t o;
    swgpu_long_opts_init(&o, SWGPU_DNA);
    o.gap_open = open;
    o.gap_extend = ext;
    o.threads = threads;
    o.backend = b;
    if (budget)
        o.max_host_memory = o.max_device_memory = budget;
    return o;
}

/* Align with the long aligner and the reference; check they agree. */
static void check_pair(const char *what, const uint8_t *a, size_t m, const uint8_t *b, size_t n,
                       const swgpu_matrix_t *mat, const swgpu_long_opts_t *o)
{
    swgpu_aln_t L = { 0 }, R = { 0 }, X = { 0 };
    swgpu_long_stats_t st;
    int64_t rescored = 0;
    int rc = swgpu_align_long(a, m, b, n, mat, o, &L, &st);
    int rr = swgpu_align(a, m, b, n, mat, o->gap_open, o->gap_extend, o->score_only, &R);
    CHECK(rc == 0 && rr == 0, "%s: rc %d / ref %d: %s", what, rc, rr, swgpu_last_error());
    CHECK(L.score == R.score && L.qbeg == R.qbeg && L.qend == R.qend && L.tbeg == R.tbeg &&
              L.tend == R.tend,
          "%s (%zu x %zu): long %d [%lld,%lld)x[%lld,%lld), ref %d [%lld,%lld)x[%lld,%lld)", what, m,
          n, (int)L.score, (long long)L.qbeg, (long long)L.qend, (long long)L.tbeg, (long long)L.tend,
          (int)R.score, (long long)R.qbeg, (long long)R.qend, (long long)R.tbeg, (long long)R.tend);
    if (o->score_only || L.score == 0) {
        CHECK_EQ_INT(L.n_cigar, 0);
    } else {
        CHECK(swgpu_cigar_score(&L, a, m, b, n, mat, o->gap_open, o->gap_extend, &rescored) == 0 &&
                  rescored == L.score,
              "%s: CIGAR rescores to %lld, score %d", what, (long long)rescored, (int)L.score);
        /* statistics recounted by the reference's helper */
        X = L;
        X.cigar = malloc(L.n_cigar * sizeof *X.cigar);
        if (X.cigar) {
            memcpy(X.cigar, L.cigar, L.n_cigar * sizeof *X.cigar);
            X.m_cigar = L.n_cigar;
            swgpu__aln_stats(&X, a, b);
            CHECK(X.length == L.length && X.n_ident == L.n_ident && X.n_mismatch == L.n_mismatch &&
                      X.n_gapopen == L.n_gapopen && X.n_gaps == L.n_gaps,
                  "%s: statistics differ", what);
        }
        swgpu_aln_free(&X);
    }
    swgpu_aln_free(&L);
    swgpu_aln_free(&R);
}

static void test_random(void)
{
    uint64_t s = 42;
    const int gaps[][2] = { { 5, 2 }, { 0, 1 }, { 3, 1 }, { 11, 1 }, { 1, 3 } };
    uint8_t *a = malloc(4000), *b = malloc(8000);
    int iters = tap_quick() ? 24 : 80;
    size_t maxlen = tap_quick() ? 800 : 3000;
    for (int it = 0; it < iters; it++) {
        size_t m = 1 + tap_rand(&s) % maxlen, n;
        int prot = it % 4 == 3, alpha = prot ? 24 : 2 + (int)(tap_rand(&s) % 3);
        const int *g = gaps[it % 5];
        uint64_t budget = it % 3 == 0 ? 0 : (uint64_t)(5 + tap_rand(&s) % 20) << 20;
        swgpu_long_opts_t o = opts(g[0], g[1], 1 + it % 3, budget, SWGPU_BACKEND_CPU);
        char what[64];
        tl_rand_codes(&s, a, m, alpha);
        if (it % 2) {
            n = tl_mutate_codes(&s, a, m, b, 8000, alpha, 30 + it, 10, 10);
            if (n == 0)
                b[n++] = 0;
        } else {
            n = 1 + tap_rand(&s) % maxlen;
            tl_rand_codes(&s, b, n, alpha);
        }
        if (it % 7 == 0) /* N runs and IUPAC codes: always mismatches */
            for (size_t i = 0; i < n; i++)
                if (!prot && tap_rand(&s) % 16 == 0)
                    b[i] = (uint8_t)(4 + tap_rand(&s) % 11);
        o.score_only = it % 11 == 5;
        snprintf(what, sizeof what, "random %d", it);
        check_pair(what, a, m, b, n, prot ? blosum : dna, &o);
    }
    free(a);
    free(b);
}

/* Longer related pairs: the path crosses many strips and split rows. */
static void test_related(void)
{
    uint64_t s = 7;
    size_t m = tap_quick() ? 3000 : 12000;
    uint8_t *a = malloc(m), *b = malloc(2 * m);
    for (int it = 0; it < 3; it++) {
        size_t n;
        swgpu_long_opts_t o = opts(5, 2, 2, it == 1 ? (uint64_t)3 << 20 : 0, SWGPU_BACKEND_CPU);
        char what[64];
        tl_rand_codes(&s, a, m, 4);
        n = tl_mutate_codes(&s, a, m, b, 2 * m, 4, 40, 8, 8);
        if (it == 2) { /* an unrelated flank on each side */
            size_t f = m / 4;
            memmove(b + f, b, n - 2 * f);
            tl_rand_codes(&s, b, f, 4);
            tl_rand_codes(&s, b + n - f, f, 4);
        }
        snprintf(what, sizeof what, "related %d", it);
        check_pair(what, a, m, b, n, dna, &o);
    }
    free(a);
    free(b);
}

static int64_t seed_bound(const uint8_t *a, size_t m, const uint8_t *b, size_t n, const swgpu_matrix_t *mat, int open,
                          int ext)
{
    swgpu__lscore_t sc;
    int64_t v = -1;
    uint64_t bytes = 0;
    swgpu__long_scoring(&sc, mat, open, ext);
    if (swgpu__long_seed_bound(a, (int64_t)m, b, (int64_t)n, &sc, &v, &bytes) != 0)
        return -1;
    return v;
}

/*
 * The seed-chain bound the score pass prunes with (long_seed.c): the score
 * of a real alignment, so never above the optimum; the optimum itself on
 * pairs whose optimal alignment is the chain (substitutions, one gap between
 * two exact matches); close to it on related pairs.
 */
static void test_seed_bound(void)
{
    uint64_t s = 31;
    const size_t m = 5000;
    uint8_t *a = malloc(3 * m), *b = malloc(3 * m);
    int64_t v, r;
    if (tap_tsan()) { /* single-threaded code */
        free(a);
        free(b);
        return;
    }
    tl_rand_codes(&s, a, m, 4);
    memcpy(b, a, m);
    b[1000] = (uint8_t)((a[1000] + 1) % 4);
    b[3000] = (uint8_t)((a[3000] + 2) % 4);
    v = seed_bound(a, m, b, m, dna, 5, 2);
    r = tl_align_score(a, m, b, m, dna, 5, 2);
    CHECK(v == 9990 && r == 9990, "seed bound, two substitutions: %lld, optimum %lld (9990)", (long long)v,
          (long long)r);
    /* 10 residues of a missing from b: one gap of 10, 5 + 2 * 10 */
    memcpy(b, a, 2500);
    memcpy(b + 2500, a + 2510, m - 2510);
    v = seed_bound(a, m, b, m - 10, dna, 5, 2);
    r = tl_align_score(a, m, b, m - 10, dna, 5, 2);
    CHECK(v == 2 * 4990 - 25 && r == v, "seed bound, a deletion of 10: %lld, optimum %lld (9955)", (long long)v,
          (long long)r);
    /* and in b: the gap the other way */
    v = seed_bound(b, m - 10, a, m, dna, 5, 2);
    CHECK(v == 9955, "seed bound, an insertion of 10: %lld (9955)", (long long)v);
    /* too short for a seed, unrelated, no usable residue: 0 */
    CHECK_EQ_INT(seed_bound(a, 11, a, 11, dna, 5, 2), 0); /* k is 12 at least */
    CHECK_EQ_INT(seed_bound(a, 12, a, 12, dna, 5, 2), 24);
    tl_rand_codes(&s, b, m, 4);
    v = seed_bound(a, m, b, m, dna, 5, 2);
    CHECK(v >= 0 && v <= tl_align_score(a, m, b, m, dna, 5, 2), "seed bound, unrelated: %lld", (long long)v);
    memset(b, 4, m);
    CHECK_EQ_INT(seed_bound(b, m, b, m, dna, 5, 2), 0);
    /* related pairs: substitutions, indels, N runs, a moved block, protein */
    for (int it = 0; it < 12; it++) {
        const int prot = it % 4 == 3, alpha = prot ? 20 : 4;
        const size_t len = 1500 + tap_rand(&s) % 2500;
        const swgpu_matrix_t *mat = prot ? blosum : dna;
        const int open = it % 3 == 0 ? 3 : 5, ext = it % 3 == 0 ? 2 : 1;
        size_t n;
        tl_rand_codes(&s, a, len, alpha);
        n = tl_mutate_codes(&s, a, len, b, 3 * m, alpha, 5 + 10 * (it % 3), 2 + it % 4, 2 + it % 5);
        if (it % 5 == 1) /* N runs */
            for (size_t i = 0; i + 40 < n; i += 700)
                memset(b + i, 4, 20 + it);
        if (it % 5 == 2 && n > 1200) { /* a block moved to the end */
            uint8_t t[400];
            memcpy(t, b + 300, 400);
            memmove(b + 300, b + 700, n - 700);
            memcpy(b + n - 400, t, 400);
        }
        v = seed_bound(a, len, b, n, mat, open, ext);
        r = tl_align_score(a, len, b, n, mat, open, ext);
        CHECK(v >= 0 && v <= r && (prot || 10 * v >= 9 * r), "seed bound, related %d (%s, %zu x %zu): %lld, optimum %lld",
              it, prot ? "protein" : "DNA", len, n, (long long)v, (long long)r);
    }
    free(a);
    free(b);
}

static void test_edges(void)
{
    uint64_t s = 99;
    uint8_t a[1200], b[1200], rc[1200];
    swgpu_long_opts_t o = opts(5, 2, 2, 0, SWGPU_BACKEND_CPU);
    swgpu_aln_t L = { 0 };
    int r;

    tl_rand_codes(&s, a, sizeof a, 4);
    /* empty sequences */
    r = swgpu_align_long(a, 0, a, 10, dna, &o, &L, NULL);
    CHECK(r == 0 && L.score == 0 && L.n_cigar == 0 && L.qend == 0 && L.tend == 0, "empty query");
    r = swgpu_align_long(a, 10, a, 0, dna, &o, &L, NULL);
    CHECK(r == 0 && L.score == 0 && L.n_cigar == 0, "empty target");
    r = swgpu_align_long(NULL, 0, NULL, 0, dna, &o, &L, NULL);
    CHECK(r == 0 && L.score == 0, "both empty");
    o.gpus = -1;
    r = swgpu_align_long(a, 10, a, 10, dna, &o, &L, NULL);
    CHECK(r == SWGPU_EINVAL && strstr(swgpu_last_error(), "gpus -1"), "gpus -1: %d %s", r, swgpu_last_error());
    o.gpus = 0;
    o.gpu_parts = -2;
    r = swgpu_align_long(a, 10, a, 10, dna, &o, &L, NULL);
    CHECK(r == SWGPU_EINVAL && strstr(swgpu_last_error(), "gpu_parts -2"), "gpu_parts -2: %d %s", r,
          swgpu_last_error());
    o.gpu_parts = 257;
    r = swgpu_align_long(a, 10, a, 10, dna, &o, &L, NULL);
    CHECK(r == SWGPU_EINVAL && strstr(swgpu_last_error(), "gpu_parts 257: at most 256"), "gpu_parts 257: %d %s",
          r, swgpu_last_error());
    o.gpu_parts = 0;
    /* length 1 */
    check_pair("1x1 match", a, 1, a, 1, dna, &o);
    b[0] = (uint8_t)((a[0] + 1) % 4);
    check_pair("1x1 mismatch", a, 1, b, 1, dna, &o);
    check_pair("1 x 1200", a + 600, 1, a, 1200, dna, &o);
    check_pair("1200 x 1", a, 1200, a + 17, 1, dna, &o);
    /* identical: the whole diagonal */
    r = swgpu_align_long(a, 1200, a, 1200, dna, &o, &L, NULL);
    CHECK(r == 0 && L.score == 2400 && L.qbeg == 0 && L.qend == 1200 && L.tbeg == 0 &&
              L.tend == 1200 && L.n_cigar == 1 && L.n_ident == 1200,
          "identical: score %d", (int)L.score);
    check_pair("identical", a, 1200, a, 1200, dna, &o);
    /* all mismatch: score 0, no alignment */
    for (size_t i = 0; i < sizeof b; i++)
        b[i] = (uint8_t)(4 + i % 11);
    r = swgpu_align_long(a, 1200, b, 1200, dna, &o, &L, NULL);
    CHECK(r == 0 && L.score == 0 && L.n_cigar == 0 && L.qbeg == 0 && L.tend == 0, "all mismatch");
    /* a sequence against its reverse complement */
    swgpu_dna_revcomp(a, sizeof a, rc);
    check_pair("reverse complement", a, sizeof a, rc, sizeof rc, dna, &o);
    swgpu_dna_revcomp(rc, sizeof rc, b);
    CHECK(memcmp(a, b, sizeof a) == 0, "revcomp twice is the identity");
    {
        const uint8_t x[] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14 };
        const uint8_t want[] = { 11, 12, 13, 14, 10, 9, 7, 8, 5, 6, 4, 0, 1, 2, 3 };
        uint8_t y[15];
        swgpu_dna_revcomp(x, 15, y);
        CHECK(memcmp(y, want, 15) == 0, "revcomp of every code");
        memcpy(y, x, 15);
        swgpu_dna_revcomp(y, 15, y);
        CHECK(memcmp(y, want, 15) == 0, "revcomp in place");
    }
    /* a budget too small fails early with a clear message */
    o.max_host_memory = o.max_device_memory = 1000;
    r = swgpu_align_long(a, 1200, a, 1200, dna, &o, &L, NULL);
    CHECK(r == SWGPU_EBUDGET && strstr(swgpu_last_error(), "at least"), "tiny budget: %d %s", r,
          swgpu_last_error());
    swgpu_aln_free(&L);
}

/* The score pass prunes: a short query in a wide target within a small
 * budget, and a related pair, where the pre-pass finds the best score
 * early and the exact pass skips all but a band around the path (one
 * thread: the amount pruned does not depend on timing).  Pruning changes
 * nothing: the same alignment as without it, and as the reference. */
/* Checkpoints (long_ckpt.c) are checked before use: a file of a run
 * stopped before the reverse pass (phase 3) and one stopped before the
 * traceback (phase 4, the saved rows), caught by the progress callback
 * when their phase begins, resume to the uninterrupted alignment; one
 * changed byte anywhere is a damaged file (the CRC), a field out of range
 * (with the CRC made right again) an unfit one, each with its message,
 * no crash, and the file kept as it was. */
typedef struct {
    const char *path;
    uint8_t *copy[2]; /* the file when "reverse", "traceback" began */
    size_t len[2];
} ckcopy_t;

static void spill(const char *path, const uint8_t *p, size_t len)
{
    if (tl_spit(path, p, len))
        CHECK(0, "cannot write %s", path);
}

static void ck_copy(const swgpu_long_progress_t *r, void *user)
{
    ckcopy_t *c = user;
    const int k = !strcmp(r->phase, "reverse") ? 0 : !strcmp(r->phase, "traceback") ? 1 : -1;
    if (k >= 0 && !c->copy[k])
        c->copy[k] = tl_slurp(c->path, &c->len[k]);
}

/* the file's CRC-32 (its last 4 bytes) made right after an edit */
static void ck_fix(uint8_t *p, size_t len)
{
    uint32_t crc = (uint32_t)crc32(0, Z_NULL, 0);
    crc = (uint32_t)crc32(crc, p, (uInt)(len - 4));
    memcpy(p + len - 4, &crc, 4);
}

static int64_t get64(const uint8_t *p, size_t off)
{
    int64_t v;
    memcpy(&v, p + off, 8);
    return v;
}

static void set64(uint8_t *p, size_t off, int64_t v)
{
    memcpy(p + off, &v, 8);
}

/* resume from bytes p (len): rc and the message, the file kept as written */
static int ck_try(const char *what, const char *path, const uint8_t *p, size_t len, const uint8_t *a, size_t m,
                  const uint8_t *b, size_t n, const swgpu_long_opts_t *o, swgpu_aln_t *out, const char *want)
{
    swgpu_long_stats_t st;
    size_t len2;
    uint8_t *back;
    int rc;
    spill(path, p, len);
    rc = swgpu_align_long(a, m, b, n, dna, o, out, &st);
    back = tl_slurp(path, &len2);
    if (want) {
        CHECK(rc < 0 && !strcmp(swgpu_last_error(), want), "%s: rc %d, message\n#   %s\n# wanted\n#   %s", what, rc,
              rc < 0 ? swgpu_last_error() : "(none)", want);
        CHECK(back && len2 == len && !memcmp(back, p, len), "%s: the checkpoint was not kept as it was", what);
    }
    free(back);
    return rc;
}

/* Checkpoints of a x b (cc: copies of phases 3 and 4) with a field out of
 * range, the CRC right: each refused with its message; another width of
 * scores: made for other options. */
static void ck_bad_fields(const char *path, const ckcopy_t *cc, const uint8_t *a, size_t m, const uint8_t *b,
                          size_t n, const swgpu_long_opts_t *o, swgpu_aln_t *X)
{
    char want[512];
    const size_t len0 = cc->len[0], len1 = cc->len[1];
    uint8_t *p = malloc(len1);
    const int64_t je = get64(cc->copy[0], 48), ie = get64(cc->copy[0], 40);
    const int64_t maxS = 2 * (int64_t)(m < n ? m : n);
    struct {
        int file;
        size_t off;
        int64_t v;
        char want[300];
    } F[10];
    int nf = 0;
#define FIELD(f, o_, v_, ...)                                                                         \
    do {                                                                                              \
        F[nf].file = f;                                                                               \
        F[nf].off = o_;                                                                               \
        F[nf].v = v_;                                                                                 \
        snprintf(F[nf].want, sizeof F[nf].want, "checkpoint %s does not fit this alignment: " __VA_ARGS__); \
        nf++;                                                                                         \
    } while (0)
    /* the query end beyond the query (the reverse pass read past it) */
    FIELD(0, 40, (int64_t)m + 1000, "the best score's end (%lld, %lld) lies outside the %zu x %zu matrix: "
          "remove it to start afresh", path, (long long)m + 1000, (long long)je, m, n);
    /* (5,000,000: far enough that the old reader's reverse pass crashed) */
    FIELD(0, 40, 5000000, "the best score's end (5000000, %lld) lies outside the %zu x %zu matrix: remove it "
          "to start afresh", path, (long long)je, m, n);
    FIELD(0, 48, -5, "the best score's end (%lld, -5) lies outside the %zu x %zu matrix: remove it to start "
          "afresh", path, (long long)ie, m, n);
    /* a best score of 0 (the run said "score 0", "alignment none") */
    FIELD(0, 32, 0, "best score 0 is out of range 1 .. %lld: remove it to start afresh", path,
          (long long)(2 * (ie < je ? ie : je)));
    FIELD(0, 16, 9, "phase 9 is unknown: remove it to start afresh", path);
    FIELD(0, 24, maxS + 1, "pruning score %lld is out of range 0 .. %lld: remove it to start afresh", path,
          (long long)maxS + 1, (long long)maxS);
    FIELD(1, 56, ie, "the begin (%lld, %lld) does not lie before the end (%lld, %lld): remove it to start "
          "afresh", path, (long long)ie, (long long)get64(cc->copy[1], 64), (long long)ie, (long long)je);
    /* a saved row's H at column 7 (the first row's 8th pair) */
    FIELD(1, 112 + 7 * 8, (int64_t)0x7fffffff, "a saved row's value at column 7 is out of range: remove it "
          "to start afresh", path);
    for (int f = 0; f < nf; f++) {
        const size_t len = F[f].file ? len1 : len0;
        memcpy(p, cc->copy[F[f].file], len);
        if (F[f].off >= 112)
            memcpy(p + F[f].off, &(int32_t){ (int32_t)F[f].v }, 4);
        else
            set64(p, F[f].off, F[f].v);
        ck_fix(p, len);
        ck_try(F[f].want, path, p, len, a, m, b, n, o, X, F[f].want);
    }
#undef FIELD
    /* another width of scores: made for other options */
    memcpy(p, cc->copy[0], len0);
    set64(p, 96, 1);
    ck_fix(p, len0);
    snprintf(want, sizeof want, "checkpoint %s was made for other inputs or options: remove it to start "
             "afresh, or give the inputs and options it was made with", path);
    CHECK(ck_try("wide", path, p, len0, a, m, b, n, o, X, want) == SWGPU_EINVAL, "wide flag: not EINVAL");
    free(p);
}

static void test_ckpt(void)
{
    uint64_t s = 4242;
    const size_t m = 3000;
    uint8_t *a = malloc(m), *b = malloc(2 * m);
    size_t n = 0;
    char dir[] = "/tmp/swgpu_ckpt_XXXXXX", path[64], want[512];
    swgpu_long_opts_t o = opts(5, 2, 1, 0, SWGPU_BACKEND_CPU);
    swgpu_aln_t R = { 0 }, X = { 0 };
    swgpu_long_stats_t st;
    ckcopy_t cc = { path, { NULL, NULL }, { 0, 0 } };
    tl_rand_codes(&s, a, m, 4);
    n = tl_mutate_codes(&s, a, m, b, 2 * m, 4, 20, 2, 2);
    if (!mkdtemp(dir)) {
        CHECK(0, "mkdtemp: cannot make %s", dir);
        goto out;
    }
    snprintf(path, sizeof path, "%s/ck", dir);
    CHECK(swgpu_align_long(a, m, b, n, dna, &o, &R, &st) == 0 && R.score > 0 && R.n_cigar > 0,
          "checkpoints: the uninterrupted run: %s", swgpu_last_error());
    o.checkpoint = path;
    o.checkpoint_every = 1e-9; /* every chance between passes */
    o.progress = ck_copy;
    o.progress_user = &cc;
    CHECK(swgpu_align_long(a, m, b, n, dna, &o, &X, &st) == 0 && X.score == R.score, "checkpoints: a run saving them");
    CHECK(cc.copy[0] && cc.copy[1] && cc.len[0] == 116 && cc.len[1] > cc.len[0] && get64(cc.copy[0], 16) == 3 &&
              get64(cc.copy[1], 16) == 4 && get64(cc.copy[1], 72) == (int64_t)R.tend,
          "checkpoints: caught phases %lld and %lld (%zu, %zu bytes)", cc.copy[0] ? (long long)get64(cc.copy[0], 16) : -1,
          cc.copy[1] ? (long long)get64(cc.copy[1], 16) : -1, cc.len[0], cc.len[1]);
    CHECK(access(path, F_OK) != 0, "checkpoints: %s left after a complete run", path);
    o.progress = NULL;
    if (!cc.copy[0] || !cc.copy[1])
        goto out;
    for (int k = 0; k < 2; k++) {
        /* each resumes to the uninterrupted alignment, then is removed */
        swgpu_aln_free(&X);
        int rc = ck_try("resume", path, cc.copy[k], cc.len[k], a, m, b, n, &o, &X, NULL);
        CHECK(rc == 0 && X.score == R.score && X.qbeg == R.qbeg && X.qend == R.qend && X.tbeg == R.tbeg &&
                  X.tend == R.tend && X.n_cigar == R.n_cigar &&
                  !memcmp(X.cigar, R.cigar, R.n_cigar * sizeof *R.cigar) && access(path, F_OK) != 0,
              "checkpoints: phase %d resumed: rc %d (%s), score %lld of %lld", k + 3, rc, swgpu_last_error(),
              (long long)X.score, (long long)R.score);
    }
    for (int k = 0; k < 2; k++) {
        /* one byte changed: header words, the middle, the CRC */
        const size_t len = cc.len[k], offs[] = { 20, 33, 40, 64, 100, len / 2, len - 5, len - 1 };
        uint8_t *p = malloc(len);
        for (size_t x = 0; x < sizeof offs / sizeof *offs; x++) {
            char what[64];
            memcpy(p, cc.copy[k], len);
            p[offs[x]] ^= 0x10;
            snprintf(what, sizeof what, "phase %d, byte %zu of %zu changed", k + 3, offs[x], len);
            snprintf(want, sizeof want, "checkpoint %s is damaged (its checksum does not match its contents): it "
                     "cannot be resumed; remove it to start afresh", path);
            ck_try(what, path, p, len, a, m, b, n, &o, &X, want);
        }
        memcpy(p, cc.copy[k], len);
        p[3] = 'x';
        snprintf(want, sizeof want, "checkpoint %s is not a swgpu checkpoint", path);
        ck_try("magic", path, p, len, a, m, b, n, &o, &X, want);
        p[3] = 'P';
        p[7] = 1;
        snprintf(want, sizeof want, "checkpoint %s was written by an older swgpu (checkpoint format 1, this one "
                 "reads format 2): it cannot be resumed; remove it to start afresh", path);
        ck_try("format 1", path, p, len, a, m, b, n, &o, &X, want);
        p[7] = 2;
        if (k == 0) /* shorter than a header */
            snprintf(want, sizeof want, "checkpoint %s is damaged (truncated): it cannot be resumed; remove it "
                     "to start afresh", path);
        else
            snprintf(want, sizeof want, "checkpoint %s is damaged (%zu bytes where its header describes %zu: "
                     "truncated or damaged): it cannot be resumed; remove it to start afresh", path, len - 9, len);
        ck_try("truncated", path, p, len - 9, a, m, b, n, &o, &X, want);
        free(p);
    }
    ck_bad_fields(path, &cc, a, m, b, n, &o, &X);
    /* what is not a checkpoint file, never opened as one (a FIFO would block) */
    {
        char fifo[80];
        snprintf(fifo, sizeof fifo, "%s/fifo", dir);
        if (mkfifo(fifo, 0600) == 0) {
            swgpu_long_opts_t o2 = o;
            o2.checkpoint = fifo;
            snprintf(want, sizeof want, "checkpoint %s is a FIFO (named pipe), not a checkpoint file", fifo);
            CHECK(swgpu_align_long(a, m, b, n, dna, &o2, &X, &st) == SWGPU_EINVAL && !strcmp(swgpu_last_error(), want),
                  "FIFO: %s", swgpu_last_error());
            o2.checkpoint = dir;
            snprintf(want, sizeof want, "checkpoint %s is a directory, not a checkpoint file", dir);
            CHECK(swgpu_align_long(a, m, b, n, dna, &o2, &X, &st) == SWGPU_EINVAL && !strcmp(swgpu_last_error(), want),
                  "directory: %s", swgpu_last_error());
            o2.backend = SWGPU_BACKEND_REF;
            o2.checkpoint = path;
            snprintf(want, sizeof want, "long alignment: checkpoints (%s) are not supported with the ref backend "
                     "(use backend cpu or cuda)", path);
            CHECK(swgpu_align_long(a, m, b, n, dna, &o2, &X, &st) == SWGPU_EINVAL && !strcmp(swgpu_last_error(), want),
                  "ref backend: %s", swgpu_last_error());
            unlink(fifo);
        }
    }
    unlink(path);
    rmdir(dir);
out:
    free(cc.copy[0]);
    free(cc.copy[1]);
    swgpu_aln_free(&R);
    swgpu_aln_free(&X);
    free(a);
    free(b);
}

static void test_score_pass_pruned(void)
{
    uint64_t s = 77;
    const size_t m = 300, n = 400000, r = 20000;
    uint8_t *a = malloc(m), *b = malloc(n), *c = malloc(r), *d = malloc(2 * r);
    swgpu_long_stats_t st;
    swgpu_aln_t x = { 0 }, y = { 0 };
    size_t dn;
    tl_rand_codes(&s, b, n, 4);
    tl_rand_codes(&s, a, m, 4);
    /* a mutated copy of a in the middle of b */
    tl_mutate_codes(&s, a, m, b + 200000, m, 4, 40, 5, 5);
    {
        swgpu_long_opts_t o = opts(5, 2, 8, 24 << 20, SWGPU_BACKEND_CPU);
        if (!tap_quick()) /* the reference is slow here */
            check_pair("wide pair, 24 MiB", a, m, b, n, dna, &o);
        CHECK(swgpu_align_long(a, m, b, n, dna, &o, &x, &st) == 0 && st.peak_host_bytes <= (24u << 20) &&
                  x.score > 100,
              "24 MiB budget kept: peak %llu, score %d", (unsigned long long)st.peak_host_bytes, (int)x.score);
        o.prune = 0;
        CHECK(swgpu_align_long(a, m, b, n, dna, &o, &y, &st) == 0 && st.score_pruned == 0 &&
                  st.cells_pruned == 0,
              "no pruning: %llu pruned", (unsigned long long)st.cells_pruned);
        CHECK(x.score == y.score && x.qbeg == y.qbeg && x.qend == y.qend && x.tbeg == y.tbeg &&
                  x.tend == y.tend && x.n_cigar == y.n_cigar &&
                  !memcmp(x.cigar, y.cigar, x.n_cigar * sizeof *x.cigar),
              "pruned and unpruned: score %d and %d", (int)x.score, (int)y.score);
    }
    tl_rand_codes(&s, c, r, 4);
    dn = tl_mutate_codes(&s, c, r, d, 2 * r, 4, 10, 2, 2);
    {
        swgpu_long_opts_t o = opts(5, 2, tap_tsan() ? 2 : 1, 0, SWGPU_BACKEND_CPU);
        CHECK(swgpu_align_long(c, r, d, dn, dna, &o, &x, &st) == 0 &&
                  st.score_pruned > st.score_cells / 10 * 9,
              "related pair: %.1f%% of the score pass pruned",
              100.0 * (double)st.score_pruned / (double)st.score_cells);
        o.prune = 0;
        CHECK(swgpu_align_long(c, r, d, dn, dna, &o, &y, &st) == 0 && x.score == y.score &&
                  x.n_cigar == y.n_cigar && !memcmp(x.cigar, y.cigar, x.n_cigar * sizeof *x.cigar),
              "related pair, pruned and unpruned: score %d and %d", (int)x.score, (int)y.score);
        if (!tap_quick())
            check_pair("related 20 kbp pair", c, r, d, dn, dna, &o);
    }
    swgpu_aln_free(&x);
    swgpu_aln_free(&y);
    free(a);
    free(b);
    free(c);
    free(d);
}

/* DNA +2/-3 and BLOSUM62, every value times 10,000 (free with
 * swgpu_matrix_destroy and free); non-zero when out of memory. */
static int scaled_matrices(swgpu_matrix_t **big, swgpu_matrix_t **bigp)
{
    *bigp = malloc(sizeof **bigp);
    if (swgpu_matrix_dna(20000, -30000, big) || !*bigp)
        return 1;
    **bigp = *blosum;
    for (int i = 0; i < SWGPU_NCODES; i++)
        for (int j = 0; j < SWGPU_NCODES; j++)
            (*bigp)->s[i][j] *= 10000;
    (*bigp)->min *= 10000;
    (*bigp)->max *= 10000;
    return 0;
}

/* Align a x b as is and with every scoring value times 10,000: the score
 * is exactly 10,000 times, the coordinates and the CIGAR the same. */
static void check_scaled(const char *what, const uint8_t *a, size_t m, const uint8_t *b, size_t n,
                         const swgpu_matrix_t *mat, const swgpu_matrix_t *big, swgpu_long_opts_t o,
                         int64_t at_least)
{
    swgpu_aln_t x = { 0 }, y = { 0 };
    const double t0 = swgpu__now();
    int r1 = swgpu_align_long(a, m, b, n, mat, &o, &x, NULL), r2;
    o.gap_open *= 10000;
    o.gap_extend *= 10000;
    r2 = swgpu_align_long(a, m, b, n, big, &o, &y, NULL);
    printf("# %s %.2fs\n", what, swgpu__now() - t0);
    CHECK(r1 == 0 && r2 == 0 && y.score == 10000 * x.score && y.score >= at_least && x.qbeg == y.qbeg &&
              x.qend == y.qend && x.tbeg == y.tbeg && x.tend == y.tend && x.n_cigar == y.n_cigar &&
              !memcmp(x.cigar, y.cigar, x.n_cigar * sizeof *x.cigar),
          "%s: score %lld, scaled %lld (rc %d %d: %s)", what, (long long)x.score, (long long)y.score, r1,
          r2, swgpu_last_error());
    swgpu_aln_free(&x);
    swgpu_aln_free(&y);
}

/* Scores beyond 32 bits (long.h, wide scores): every scoring value times
 * 10,000, on related pairs whose scaled score passes 2^31, a pair with a
 * strong local alignment between random flanks (values near 0 and far
 * above 2^29 side by side), unrelated and protein pairs; SIMD and scalar
 * strip kernels, pruned and not, small budgets.  Scales beyond what the
 * 32-bit blocks allow are refused with the limit named. */
static void test_wide(void)
{
    uint64_t s = 1212;
    /* ThreadSanitizer: one pair, on 2 threads, whose scaled values pass 2^29 */
    const size_t N = tap_tsan() ? 60000 : 120000, R = 20000, P = 12000;
    uint8_t *a = malloc(N), *b = malloc(2 * N), *c = malloc(4 * R), *d = malloc(6 * R);
    swgpu_matrix_t *big = NULL, *bigp = NULL;
    size_t bn, dn;
    swgpu_aln_t x = { 0 };
    if (scaled_matrices(&big, &bigp)) {
        CHECK(0, "scaled matrices: %s", swgpu_last_error());
        return;
    }
    tl_rand_codes(&s, a, N, 4);
    bn = tl_mutate_codes(&s, a, N, b, 2 * N, 4, 10, 1, 1);
    check_scaled(tap_tsan() ? "related 60 kbp, 2 threads" : "related 120 kbp, 2 threads", a, N, b, bn, dna, big,
                 opts(5, 2, 2, 0, SWGPU_BACKEND_CPU), (int64_t)1 << (tap_tsan() ? 29 : 31));
    if (tap_tsan())
        goto out;
    if (!tap_quick()) /* quick (sanitizers, ~20x slower): the cases below the first are trimmed */
        check_scaled("related 120 kbp, 1 thread, 12 MiB", a, N, b, bn, dna, big,
                     opts(5, 2, 1, 12 << 20, SWGPU_BACKEND_CPU), (int64_t)1 << 31);
    /* random flanks around a related core: c = r1 X r2, d = r3 X' r4 */
    tl_rand_codes(&s, c, 4 * R, 4);
    tl_rand_codes(&s, d, R, 4);
    dn = R / 2 + tl_mutate_codes(&s, c + R / 2, 3 * R / 2, d + R / 2, 3 * R, 4, 10, 1, 1);
    tl_rand_codes(&s, d + dn, 6 * R - dn, 4);
    check_scaled("flanked 30 kbp core", c, 5 * R / 2, d, dn + R, dna, big,
                 opts(5, 2, 2, 0, SWGPU_BACKEND_CPU), (int64_t)1 << 29);
    if (!tap_quick()) {
        swgpu_long_opts_t o = opts(5, 2, 2, 0, SWGPU_BACKEND_CPU);
        o.prune = 0;
        check_scaled("flanked core, no pruning", c, 5 * R / 2, d, dn + R, dna, big, o, (int64_t)1 << 29);
        {
            o.prune = 1;
            swgpu__long_set_isa(0); /* the scalar tile */
            check_scaled("related 30 kbp, scalar tile", a, 3 * R / 2, b, 3 * R / 2, dna, big, o,
                         (int64_t)1 << 29);
            swgpu__long_set_isa(-1);
        }
    }
    check_scaled("unrelated 20 kbp", c, R, d + 5 * R, R, dna, big, opts(5, 2, 2, 0, SWGPU_BACKEND_CPU), 1);
    {
        swgpu_long_opts_t o = opts(11, 1, 2, 0, SWGPU_BACKEND_CPU);
        tl_rand_codes(&s, c, P, 20);
        dn = tl_mutate_codes(&s, c, P, d, 2 * P, 20, 100, 5, 5);
        check_scaled("protein 12 kaa", c, P, d, dn, blosum, bigp, o, (int64_t)1 << 29);
    }
    {
        swgpu_long_opts_t o = opts(1000000, 2, 1, 0, SWGPU_BACKEND_CPU);
        int rc = swgpu_align_long(a, 700, b, 700, dna, &o, &x, NULL);
        CHECK(rc == SWGPU_ERANGE && strstr(swgpu_last_error(), "must keep below"),
              "gap open 10^6 on 700 bp: rc %d (%s)", rc, swgpu_last_error());
    }
out:
    swgpu_aln_free(&x);
    swgpu_matrix_destroy(big);
    free(bigp);
    free(a);
    free(b);
    free(c);
    free(d);
}

/* What the progress reports showed, and the first broken rule. */
typedef struct {
    int calls, phase;             /* index in PHASES of the current phase, -1 before */
    int ended[4];                 /* phases that ended with a final report */
    uint64_t first_total[4], total[4], cells;
    double fraction;
    char bad[200];
} prog_t;

static const char *const PHASES[4] = { "prepass", "score", "reverse", "traceback" };

static void on_progress(const swgpu_long_progress_t *r, void *user)
{
    prog_t *p = user;
    int k = 0;
    const int fin = r->fraction == 1.0 && r->phase_done == r->phase_total && !r->phase_estimated;
    while (k < 4 && strcmp(r->phase, PHASES[k]))
        k++;
    p->calls++;
    if (p->bad[0])
        return;
    if (k == 4 || k < p->phase || (k > p->phase && p->phase >= 0 && !p->ended[p->phase]) ||
        (k == p->phase && p->ended[k] && !fin))
        snprintf(p->bad, sizeof p->bad, "phase %s out of order", r->phase);
    else if (!(r->fraction >= 0 && r->fraction <= 1) || (k == p->phase && r->fraction < p->fraction))
        snprintf(p->bad, sizeof p->bad, "%s: fraction %g after %g", r->phase, r->fraction, p->fraction);
    else if (r->phase_done > r->phase_total || r->cells < p->cells || r->phase_seconds > r->seconds + 1e-3)
        snprintf(p->bad, sizeof p->bad, "%s: %llu of %llu cells, %llu computed, %.3f of %.3f s", r->phase,
                 (unsigned long long)r->phase_done, (unsigned long long)r->phase_total,
                 (unsigned long long)r->cells, r->phase_seconds, r->seconds);
    else if (r->phase_estimated != (k == 3 && r->fraction < 1))
        snprintf(p->bad, sizeof p->bad, "%s: estimated %d at %g", r->phase, r->phase_estimated, r->fraction);
    if (p->bad[0])
        return;
    if (k != p->phase)
        p->first_total[k] = r->phase_total;
    p->phase = k;
    p->fraction = r->fraction;
    p->cells = r->cells;
    p->total[k] = r->phase_total;
    p->ended[k] |= fin;
}

static void test_progress_and_threads(void)
{
    uint64_t s = 5;
    size_t m = tap_quick() ? 3000 : 6000, n;
    uint8_t *a = malloc(m), *b = malloc(2 * m);
    swgpu_aln_t x = { 0 }, y = { 0 };
    swgpu_long_stats_t st;
    swgpu_long_opts_t o = opts(5, 2, 1, 4 << 20, SWGPU_BACKEND_CPU);
    tl_rand_codes(&s, a, m, 4);
    n = tl_mutate_codes(&s, a, m, b, 2 * m, 4, 50, 10, 10);
    /* 1 thread without the seed bound (so with the pre-pass), then 4 with
     * it (the seed chain finds a strong alignment: no pre-pass; the
     * full-matrix pieces traced back by threads while the calling thread
     * reports) */
    for (int k = 0; k < 2; k++) {
        swgpu_aln_t *z = k ? &y : &x;
        prog_t pg = { .phase = -1 };
        int rc;
        o.threads = k ? 4 : 1;
        o.progress = on_progress;
        o.progress_user = &pg;
        if (!k)
            setenv("SWGPU_LONG_SEED", "0", 1);
        rc = swgpu_align_long(a, m, b, n, dna, &o, z, &st);
        unsetenv("SWGPU_LONG_SEED");
        CHECK(rc == 0, "%d threads", o.threads);
        CHECK(pg.calls >= (k ? 6 : 8) && !pg.bad[0] && pg.ended[0] == !k && pg.ended[1] && pg.ended[2] && pg.ended[3] &&
                  pg.cells == st.cells && (k ? st.seed_bound > 0 : st.seed_bound == 0),
              "progress: %d calls, %s; phases ended %d %d %d %d, %llu cells of %llu, seed bound %lld", pg.calls,
              pg.bad[0] ? pg.bad : "in order", pg.ended[0], pg.ended[1], pg.ended[2], pg.ended[3],
              (unsigned long long)pg.cells, (unsigned long long)st.cells, (long long)st.seed_bound);
        CHECK(pg.total[0] == (k ? 0 : (uint64_t)m * n) && pg.total[1] == (uint64_t)m * n &&
                  pg.total[2] == (uint64_t)z->qend * (uint64_t)z->tend,
              "progress totals: the matrix, then the rectangle up to the end");
        /* the traceback's first estimate, from the model alone, within 2x of what it did */
        CHECK(pg.first_total[3] * 2 >= pg.total[3] && pg.first_total[3] <= 2 * pg.total[3],
              "traceback estimate %llu, done %llu", (unsigned long long)pg.first_total[3],
              (unsigned long long)pg.total[3]);
        printf("# traceback: estimated %llu cells, did %llu\n", (unsigned long long)pg.first_total[3],
               (unsigned long long)pg.total[3]);
        CHECK(st.cells + st.cells_pruned >= st.score_cells && st.score_cells == (uint64_t)m * n && st.levels >= 1 &&
                  st.subproblems > 1 && st.peak_host_bytes > 0 && !strcmp(st.backend, "cpu"),
              "stats: cells %llu (%llu pruned) levels %d pieces %llu", (unsigned long long)st.cells,
              (unsigned long long)st.cells_pruned, st.levels, (unsigned long long)st.subproblems);
    }
    CHECK(x.n_cigar == y.n_cigar && x.n_cigar > 0 &&
              !memcmp(x.cigar, y.cigar, x.n_cigar * sizeof *x.cigar),
          "thread count changes nothing");
    swgpu_aln_free(&x);
    swgpu_aln_free(&y);
    free(a);
    free(b);
}

/* The CUDA path gives the same alignments as the CPU path. */
#ifdef SWGPU_HAVE_CUDA
/*
 * The CUDA engine's saved rows kept in device memory (saved_keep): a batch
 * of two local passes (reversed and forward sequences), whose rows read
 * back with swgpu__lgpu_saved_read equal the CPU engine's (unpruned: every
 * value exact), whole or in part, after a later batch too; reads outside
 * them fail; regions cut into column slices copy their rows to the host.
 */
static void test_gpu_kept(void)
{
    uint64_t s = 77;
    const size_t m = 20000;
    size_t n;
    uint8_t *a = malloc(m), *b = malloc(2 * m), *buf = malloc(4 * (2 * m + SWGPU__LONG_PAD));
    swgpu__lscore_t sc;
    swgpu__lseqs_t q;
    swgpu__lgpu_t *g = NULL, *g2 = NULL;
    swgpu__lreg_t r[2], r1[2], r2[2], f;
    uint64_t bytes = 0, pruned = 0;
    int32_t *cpu[2], *gpu[2], *row;
    int64_t ns[2], w1;
    int bad = 0;
    tl_rand_codes(&s, a, m, 4);
    n = tl_mutate_codes(&s, a, m, b, 2 * m, 4, 60, 10, 10);
    {
        const uint8_t *src[4] = { a, b, a, b };
        const size_t len[4] = { m, n, m, n };
        uint8_t *p = buf;
        for (int k = 0; k < 4; k++) {
            for (size_t i = 0; i < len[k]; i++)
                p[i] = k < 2 ? src[k][i] : src[k][len[k] - 1 - i];
            memset(p + len[k], 31, SWGPU__LONG_PAD);
            q.seq[k] = p;
            q.len[k] = (int64_t)len[k];
            p += len[k] + SWGPU__LONG_PAD;
        }
    }
    swgpu__long_scoring(&sc, dna, 5, 2);
    w1 = (int64_t)n + 1;
    row = malloc((size_t)w1 * 8);
    for (int x = 0; x < 2; x++) {
        memset(&r[x], 0, sizeof r[x]);
        r[x].h = (int64_t)m - 1000 * x;
        r[x].w = (int64_t)n;
        r[x].rseq = x ? SWGPU__LSEQ_A : SWGPU__LSEQ_RA;
        r[x].cseq = x ? SWGPU__LSEQ_B : SWGPU__LSEQ_RB;
        r[x].roff = 1000 * x;
        r[x].local = 1;
        r[x].track = 1;
        r[x].save_every = (2 - x) * SWGPU__LONG_SH;
        ns[x] = swgpu__lreg_nsaved(&r[x]);
        cpu[x] = malloc((size_t)(ns[x] * w1) * 8);
        gpu[x] = calloc((size_t)(ns[x] * w1), 8);
        r1[x] = r2[x] = r[x];
        r1[x].saved = cpu[x];
        r2[x].saved = gpu[x];
        r2[x].saved_keep = 1;
    }
    CHECK(swgpu__lcpu_run(&q, &sc, r1, 2, 2, NULL, &bytes, &pruned, NULL) == 0 &&
              swgpu__lgpu_create(&q, &sc, NULL, 1, 0, &g) == 0 && swgpu__lgpu_run(g, r2, 2, 0, NULL, &pruned) == 0,
          "kept rows: the passes ran: %s", swgpu_last_error());
    for (int x = 0; x < 2; x++) {
        CHECK(r2[x].saved_kept == 1 && r2[x].best == r1[x].best && r2[x].bi == r1[x].bi && r2[x].bj == r1[x].bj &&
                  r1[x].best > 0,
              "kept rows, region %d: kept %d, best %lld at (%lld,%lld), the CPU's %lld at (%lld,%lld)", x,
              r2[x].saved_kept, (long long)r2[x].best, (long long)r2[x].bi, (long long)r2[x].bj,
              (long long)r1[x].best, (long long)r1[x].bi, (long long)r1[x].bj);
        for (int64_t k = 0; k < ns[x] * w1 * 2; k++)
            bad += gpu[x][k] != 0; /* the host buffers were not written */
    }
    /* a later batch that saves a row of its own leaves them alone */
    memset(&f, 0, sizeof f);
    f.h = 1000;
    f.w = 3000;
    f.rseq = SWGPU__LSEQ_A;
    f.cseq = SWGPU__LSEQ_B;
    f.save_last = 1;
    f.h0 = 0;
    f.e0 = f.f0 = SWGPU__LONG_NEG;
    f.saved = row;
    CHECK(g && swgpu__lgpu_run(g, &f, 1, 1, NULL, &pruned) == 0 && f.saved_kept == 0, "kept rows: a later batch: %s",
          swgpu_last_error());
    for (int x = 0; x < 2; x++)
        for (int64_t k = 0; k < ns[x] && g; k++) {
            if (swgpu__lgpu_saved_read(g, (size_t)x, k, 0, w1, row, NULL)) {
                bad++;
                break;
            }
            bad += memcmp(row, cpu[x] + k * w1 * 2, (size_t)w1 * 8) != 0;
        }
    CHECK(bad == 0, "kept rows: %d rows differ from the CPU engine's (or the host buffers were written)", bad);
    CHECK(g && swgpu__lgpu_saved_read(g, 1, ns[1] - 1, 1234, 77, row, NULL) == 0 &&
              !memcmp(row, cpu[1] + ((ns[1] - 1) * w1 + 1234) * 2, 77 * 8),
          "kept rows: part of the second region's last row");
    CHECK(g && swgpu__lgpu_saved_read(g, 0, ns[0], 0, 1, row, NULL) != 0 &&
              swgpu__lgpu_saved_read(g, 0, 0, w1 - 1, 2, row, NULL) != 0 && swgpu__lgpu_saved_read(g, 0, -1, 0, 1, row, NULL) != 0 &&
              swgpu__lgpu_saved_read(g, 2, 0, 0, 1, row, NULL) != 0,
          "kept rows: reads outside them fail");
    if (g)
        swgpu__lgpu_saved_drop(g);
    CHECK(g && swgpu__lgpu_saved_read(g, 0, 0, 0, 1, row, NULL) != 0, "kept rows: none after the drop");
    /* column slices on one device: the rows come to the host */
    r2[0] = r[0];
    r2[0].saved = gpu[0];
    r2[0].saved_keep = 1;
    {
        int devs[1] = { 0 };
        CHECK(swgpu__lgpu_create(&q, &sc, devs, 1, 2, &g2) == 0 &&
                  swgpu__lgpu_run(g2, r2, 1, 0, NULL, &pruned) == 0 && r2[0].saved_kept == 0 &&
                  r2[0].best == r1[0].best && !memcmp(gpu[0], cpu[0], (size_t)(ns[0] * w1) * 8),
              "kept rows: two slices copy their rows to the host: kept %d, best %lld: %s", r2[0].saved_kept,
              (long long)r2[0].best, swgpu_last_error());
    }
    swgpu__lgpu_destroy(g);
    swgpu__lgpu_destroy(g2);
    for (int x = 0; x < 2; x++) {
        free(cpu[x]);
        free(gpu[x]);
    }
    free(row);
    free(a);
    free(b);
    free(buf);
}

/* In-pass checkpoints on the GPU (swgpu__lgpu_run_ck): a pass stopped at
 * every chance (every = 0: at the first poll of each launch, ~1 ms) and
 * resumed from the state it saved gives the uninterrupted pass's best and
 * saved rows, byte for byte (no pruning: the values do not depend on
 * timing), with 32-bit and with wide scores; then a pass resumed from one
 * of those states, as a run started again from its checkpoint file is. */
typedef struct {
    int calls, bad;
    int64_t last, strips;
    swgpu__lck_state_t keep; /* a copy of the first state past a tenth of the strips */
    int32_t *rows;           /* and of the rows saved up to it */
    int64_t *bases;
} ckseen_t;

static int ck_seen(void *user, const swgpu__lreg_t *g, const swgpu__lck_state_t *st)
{
    ckseen_t *c = user;
    c->calls++;
    c->bad += st->next <= c->last || st->next >= c->strips;
    c->last = st->next;
    if (!c->keep.rowH && st->next > c->strips / 10) {
        const size_t w1 = (size_t)g->w + 1, nch = (size_t)(g->w + SWGPU__LONG_CHUNK - 1) / SWGPU__LONG_CHUNK;
        const size_t nr = (size_t)swgpu__lck_rows(g, st->next), nb = (size_t)swgpu__lreg_nbase(g->w);
        c->keep = *st;
        c->keep.rowH = malloc(w1 * 4);
        c->keep.rowF = malloc(w1 * 4);
        c->keep.low = malloc(nch);
        c->keep.base = st->base ? malloc(nch * 8) : NULL;
        c->rows = malloc(nr * w1 * 8 + 8);
        c->bases = g->saved_base ? malloc(nr * nb * 8 + 8) : NULL;
        memcpy(c->keep.rowH, st->rowH, w1 * 4);
        memcpy(c->keep.rowF, st->rowF, w1 * 4);
        memcpy(c->keep.low, st->low, nch);
        if (st->base)
            memcpy(c->keep.base, st->base, nch * 8);
        memcpy(c->rows, g->saved, nr * w1 * 8);
        if (g->saved_base)
            memcpy(c->bases, g->saved_base, nr * nb * 8);
    }
    return 0;
}

static void test_gpu_ck(void)
{
    uint64_t s = 99;
    const size_t m = 120000;
    size_t n;
    uint8_t *a = malloc(m), *b = malloc(2 * m), *buf = malloc(2 * (2 * m + SWGPU__LONG_PAD) + 2 * m);
    swgpu_matrix_t *big = NULL;
    tl_rand_codes(&s, a, m, 4);
    n = tl_mutate_codes(&s, a, m, b, 2 * m, 4, 10, 1, 1);
    if (swgpu_matrix_dna(20000, -30000, &big)) {
        CHECK(0, "scaled matrix: %s", swgpu_last_error());
        goto out;
    }
    for (int wide = 0; wide < 2; wide++) {
        swgpu__lscore_t sc;
        swgpu__lseqs_t q;
        swgpu__lgpu_t *g = NULL;
        swgpu__lreg_t r, r1, r2, r3;
        ckseen_t cs;
        uint64_t pr1 = 0, pr2 = 0, pr3 = 0;
        int64_t ns, nb;
        size_t rowb, baseb;
        int32_t *s1, *s2, *s3;
        int64_t *b1 = NULL, *b2 = NULL, *b3 = NULL;
        {
            const uint8_t *src[2] = { a, b };
            const size_t len[2] = { m, n };
            uint8_t *p = buf;
            for (int k = 0; k < 2; k++) {
                memcpy(p, src[k], len[k]);
                memset(p + len[k], 31, SWGPU__LONG_PAD);
                q.seq[k] = q.seq[k + 2] = p;
                q.len[k] = q.len[k + 2] = (int64_t)len[k];
                p += len[k] + SWGPU__LONG_PAD;
            }
        }
        swgpu__long_scoring(&sc, wide ? big : dna, wide ? 50000 : 5, wide ? 20000 : 2);
        sc.wide = wide;
        memset(&r, 0, sizeof r);
        r.h = (int64_t)m;
        r.w = (int64_t)n;
        r.rseq = SWGPU__LSEQ_A;
        r.cseq = SWGPU__LSEQ_B;
        r.local = 1;
        r.track = 1;
        r.save_every = 4 * SWGPU__LONG_SH;
        ns = swgpu__lreg_nsaved(&r);
        nb = swgpu__lreg_nbase(r.w);
        rowb = (size_t)ns * (size_t)(r.w + 1) * 8;
        baseb = wide ? (size_t)ns * (size_t)nb * 8 : 0;
        s1 = calloc(1, rowb);
        s2 = calloc(1, rowb);
        s3 = calloc(1, rowb);
        if (wide) {
            b1 = calloc(1, baseb);
            b2 = calloc(1, baseb);
            b3 = calloc(1, baseb);
        }
        r1 = r2 = r3 = r;
        r1.saved = s1;
        r2.saved = s2;
        r3.saved = s3;
        r1.saved_base = b1;
        r2.saved_base = b2;
        r3.saved_base = b3;
        memset(&cs, 0, sizeof cs);
        cs.last = 0;
        cs.strips = (r.h + SWGPU__LONG_SH - 1) / SWGPU__LONG_SH;
        {
            swgpu__lck_t K = { 0, ck_seen, &cs, NULL };
            CHECK(swgpu__lgpu_create(&q, &sc, NULL, 1, 0, &g) == 0 && swgpu__lgpu_run(g, &r1, 1, 0, NULL, &pr1) == 0 &&
                      swgpu__lgpu_run_ck(g, &r2, NULL, &pr2, &K) == 0,
                  "gpu checkpoints (%s scores): the passes ran: %s", wide ? "wide" : "32-bit", swgpu_last_error());
        }
        CHECK(cs.calls >= 2 && cs.bad == 0 && cs.keep.rowH && r2.best == r1.best && r2.bi == r1.bi &&
                  r2.bj == r1.bj && r1.best > (wide ? (int64_t)1 << 31 : 0) && pr1 == 0 && pr2 == 0 &&
                  !memcmp(s1, s2, rowb) && (!wide || !memcmp(b1, b2, baseb)),
              "gpu checkpoints (%s scores): %d stops (%d out of order), best %lld at (%lld,%lld), uninterrupted "
              "%lld at (%lld,%lld), rows %s", wide ? "wide" : "32-bit", cs.calls, cs.bad, (long long)r2.best,
              (long long)r2.bi, (long long)r2.bj, (long long)r1.best, (long long)r1.bi, (long long)r1.bj,
              memcmp(s1, s2, rowb) ? "differ" : "equal");
        if (cs.keep.rowH && g) {
            /* started again from a kept state, its rows in place */
            swgpu__lck_t K = { 1e9, ck_seen, &cs, &cs.keep };
            const size_t nr = (size_t)swgpu__lck_rows(&r, cs.keep.next);
            memcpy(s3, cs.rows, nr * (size_t)(r.w + 1) * 8);
            if (wide)
                memcpy(b3, cs.bases, nr * (size_t)nb * 8);
            CHECK(swgpu__lgpu_run_ck(g, &r3, NULL, &pr3, &K) == 0 && r3.best == r1.best && r3.bi == r1.bi &&
                      r3.bj == r1.bj && !memcmp(s1, s3, rowb) && (!wide || !memcmp(b1, b3, baseb)),
                  "gpu checkpoints (%s scores): resumed at strip %lld of %lld: best %lld at (%lld,%lld), rows %s: %s",
                  wide ? "wide" : "32-bit", (long long)cs.keep.next, (long long)cs.strips, (long long)r3.best,
                  (long long)r3.bi, (long long)r3.bj, memcmp(s1, s3, rowb) ? "differ" : "equal", swgpu_last_error());
        }
        printf("# gpu checkpoints (%s scores): %d stops\n", wide ? "wide" : "32-bit", cs.calls);
        swgpu__lgpu_destroy(g);
        free(cs.keep.rowH);
        free(cs.keep.rowF);
        free(cs.keep.low);
        free(cs.keep.base);
        free(cs.rows);
        free(cs.bases);
        free(s1);
        free(s2);
        free(s3);
        free(b1);
        free(b2);
        free(b3);
    }
out:
    swgpu_matrix_destroy(big);
    free(a);
    free(b);
    free(buf);
}
#endif

#ifdef SWGPU_HAVE_CUDA
/* One pair on the GPU with wide scores: every scoring value times 10,000
 * gives the CPU engine's alignment (score, coordinates, CIGAR) and 10,000
 * times the GPU's unscaled score, computed by the CUDA engine. */
static void gpu_wide_case(const char *what, const uint8_t *a, size_t m, const uint8_t *b, size_t n,
                          const swgpu_matrix_t *mat, const swgpu_matrix_t *big, swgpu_long_opts_t o, int64_t at_least)
{
    swgpu_aln_t x = { 0 }, y = { 0 }, z = { 0 };
    swgpu_long_stats_t st;
    int r1, r2, r3;
    const double t0 = swgpu__now();
    o.backend = SWGPU_BACKEND_CUDA;
    r3 = swgpu_align_long(a, m, b, n, mat, &o, &z, NULL);
    o.gap_open *= 10000;
    o.gap_extend *= 10000;
    r2 = swgpu_align_long(a, m, b, n, big, &o, &y, &st);
    o.backend = SWGPU_BACKEND_CPU;
    o.gpu_parts = 0;
    r1 = swgpu_align_long(a, m, b, n, big, &o, &x, NULL);
    printf("# gpu, wide scores, %s %.2fs\n", what, swgpu__now() - t0);
    CHECK(r1 == 0 && r2 == 0 && r3 == 0 && x.score == y.score && y.score == 10000 * z.score &&
              y.score >= at_least && x.qbeg == y.qbeg && x.qend == y.qend && x.tbeg == y.tbeg &&
              x.tend == y.tend && x.n_cigar == y.n_cigar && !memcmp(x.cigar, y.cigar, x.n_cigar * sizeof *x.cigar) &&
              z.qbeg == y.qbeg && z.qend == y.qend && z.tbeg == y.tbeg && z.tend == y.tend &&
              z.n_cigar == y.n_cigar && !memcmp(z.cigar, y.cigar, z.n_cigar * sizeof *z.cigar) &&
              !strcmp(st.backend, "cuda"),
          "gpu, wide scores, %s: cpu %lld [%lld,%lld)x[%lld,%lld), gpu %lld [%lld,%lld)x[%lld,%lld) on %s, "
          "unscaled %lld (rc %d %d %d: %s)", what, (long long)x.score, (long long)x.qbeg, (long long)x.qend,
          (long long)x.tbeg, (long long)x.tend, (long long)y.score, (long long)y.qbeg, (long long)y.qend,
          (long long)y.tbeg, (long long)y.tend, r2 == 0 ? st.backend : "-", (long long)z.score, r1, r2, r3,
          swgpu_last_error());
    swgpu_aln_free(&x);
    swgpu_aln_free(&y);
    swgpu_aln_free(&z);
}

/* Wide scores on the GPU (long.h, cuda/long_kernels.cu run_strip_wide):
 * related pairs whose scaled score passes 2^31, pruned and not, a small
 * budget (deep traceback levels, anchored regions whose corners pass 2^31),
 * two and three partitions on one GPU (column slices handing on boundary
 * columns with a base per strip), random flanks around a related core (values
 * near 0 and far above 2^29 side by side), unrelated and protein pairs. */
static void test_gpu_wide(void)
{
    uint64_t s = 4242;
    const size_t N = 120000, R = 20000, P = 12000;
    uint8_t *a = malloc(N), *b = malloc(2 * N), *c = malloc(4 * R), *d = malloc(6 * R);
    swgpu_matrix_t *big = NULL, *bigp = NULL;
    size_t bn, dn;
    if (scaled_matrices(&big, &bigp) || !a || !b || !c || !d) {
        CHECK(0, "scaled matrices: %s", swgpu_last_error());
        goto out;
    }
    tl_rand_codes(&s, a, N, 4);
    bn = tl_mutate_codes(&s, a, N, b, 2 * N, 4, 10, 1, 1);
    gpu_wide_case("related 120 kbp", a, N, b, bn, dna, big, opts(5, 2, 0, 0, SWGPU_BACKEND_CUDA),
                  (int64_t)1 << 31);
    {
        swgpu_long_opts_t o = opts(5, 2, 0, 0, SWGPU_BACKEND_CUDA);
        o.prune = 0;
        gpu_wide_case("related 120 kbp, no pruning", a, N, b, bn, dna, big, o, (int64_t)1 << 31);
        o.prune = 1;
        o.gpu_parts = 2; /* the score pass in 2 column slices (batches that save rows stay whole: long_gpu.c, whole_regions) */
        gpu_wide_case("related 120 kbp, 2 partitions", a, N, b, bn, dna, big, o, (int64_t)1 << 31);
        o.gpu_parts = 3; /* score only: the reverse pass in slices too */
        o.prune = 0;
        o.score_only = 1;
        gpu_wide_case("related 120 kbp, 3 partitions, no pruning, score only", a, N, b, bn, dna, big, o,
                      (int64_t)1 << 31);
    }
    gpu_wide_case("related 120 kbp, 12 MiB", a, N, b, bn, dna, big, opts(5, 2, 0, 12 << 20, SWGPU_BACKEND_CUDA),
                  (int64_t)1 << 31);
    gpu_wide_case("related 30 kbp, offset", a + 1000, 3 * R / 2, b + 1000, 3 * R / 2, dna, big,
                  opts(5, 2, 0, 0, SWGPU_BACKEND_CUDA), (int64_t)1 << 29);
    tl_rand_codes(&s, c, 4 * R, 4);
    tl_rand_codes(&s, d, R, 4);
    dn = R / 2 + tl_mutate_codes(&s, c + R / 2, 3 * R / 2, d + R / 2, 3 * R, 4, 10, 1, 1);
    tl_rand_codes(&s, d + dn, 6 * R - dn, 4);
    gpu_wide_case("flanked 30 kbp core", c, 5 * R / 2, d, dn + R, dna, big, opts(5, 2, 0, 0, SWGPU_BACKEND_CUDA),
                  (int64_t)1 << 29);
    gpu_wide_case("unrelated 20 kbp", c, R, d + 5 * R, R, dna, big, opts(5, 2, 0, 0, SWGPU_BACKEND_CUDA), 1);
    tl_rand_codes(&s, c, P, 20);
    dn = tl_mutate_codes(&s, c, P, d, 2 * P, 20, 100, 5, 5);
    gpu_wide_case("protein 12 kaa", c, P, d, dn, blosum, bigp, opts(11, 1, 0, 0, SWGPU_BACKEND_CUDA),
                  (int64_t)1 << 29);
out:
    swgpu_matrix_destroy(big);
    free(bigp);
    free(a);
    free(b);
    free(c);
    free(d);
}
#endif

static void test_gpu(void)
{
    uint64_t s = 11;
    int n_ok = 0;
    swgpu_aln_t x = { 0 }, y = { 0 };
    size_t cap = 150000;
    uint8_t *a = malloc(cap), *b = malloc(2 * cap);
    swgpu_long_opts_t oc = opts(5, 2, 0, 0, SWGPU_BACKEND_CUDA);
    if (swgpu_align_long(a, 1, a, 1, dna, &oc, &x, NULL) == SWGPU_ENODEV) {
        SKIP(1, "no CUDA device");
        free(a);
        free(b);
        return;
    }
#ifdef SWGPU_HAVE_CUDA
    test_gpu_kept();
    test_gpu_ck();
#endif
    for (int it = 0; it < 40; it++) {
        size_t m = it < 30 ? 1 + tap_rand(&s) % 5000 : 20000 + tap_rand(&s) % (cap - 20000), n;
        swgpu_aln_t z = { 0 };
        swgpu_long_stats_t zs;
        int prot = it % 5 == 4;
        uint64_t budget = it % 2 ? (uint64_t)((it < 30 ? 3 : 12) + tap_rand(&s) % 12) << 20 : 0;
        swgpu_long_opts_t o1 = opts(it % 3 ? 5 : 11, it % 3 ? 2 : 1, 0, budget, SWGPU_BACKEND_CPU);
        swgpu_long_opts_t o2 = o1;
        int r1, r2, same;
        o2.backend = SWGPU_BACKEND_CUDA;
        tl_rand_codes(&s, a, m, prot ? 24 : 4);
        n = it % 3 ? tl_mutate_codes(&s, a, m, b, 2 * cap, prot ? 24 : 4, 60, 10, 10) : 1 + tap_rand(&s) % 5000;
        if (!(it % 3))
            tl_rand_codes(&s, b, n, prot ? 24 : 4);
        if (n == 0)
            b[n++] = 1;
        r1 = swgpu_align_long(a, m, b, n, prot ? blosum : dna, &o1, &x, NULL);
        r2 = swgpu_align_long(a, m, b, n, prot ? blosum : dna, &o2, &y, NULL);
        same = r1 == 0 && r2 == 0 && x.score == y.score && x.qbeg == y.qbeg && x.qend == y.qend &&
               x.tbeg == y.tbeg && x.tend == y.tend && x.n_cigar == y.n_cigar &&
               !memcmp(x.cigar, y.cigar, x.n_cigar * sizeof *x.cigar);
        CHECK(same, "gpu %d (%zu x %zu): cpu rc %d %d [%lld,%lld)x[%lld,%lld) gpu rc %d %d "
              "[%lld,%lld)x[%lld,%lld) %s", it, m, n, r1, (int)x.score, (long long)x.qbeg, (long long)x.qend,
              (long long)x.tbeg, (long long)x.tend, r2, (int)y.score, (long long)y.qbeg, (long long)y.qend,
              (long long)y.tbeg, (long long)y.tend, swgpu_last_error());
        n_ok += same;
        if (it < 10)
            check_pair("gpu vs ref", a, m, b, n, prot ? blosum : dna, &o2);
        /* the passes cut into 2 to 4 column slices, on one GPU or (odd
         * pairs) dealt round all of them: the very same alignment */
        o2.gpu_parts = 2 + it % 3;
        o2.gpus = it % 2 ? 0 : 1;
        r2 = swgpu_align_long(a, m, b, n, prot ? blosum : dna, &o2, &z, &zs);
        CHECK(r1 == 0 && r2 == 0 && x.score == z.score && x.qbeg == z.qbeg && x.qend == z.qend &&
                  x.tbeg == z.tbeg && x.tend == z.tend && x.n_cigar == z.n_cigar &&
                  !memcmp(x.cigar, z.cigar, x.n_cigar * sizeof *x.cigar) && !strcmp(zs.backend, "cuda"),
              "gpu %d (%zu x %zu), %d slices: rc %d score %lld [%lld,%lld)x[%lld,%lld), the CPU's %lld "
              "[%lld,%lld)x[%lld,%lld) %s", it, m, n, o2.gpu_parts, r2, (long long)z.score, (long long)z.qbeg,
              (long long)z.qend, (long long)z.tbeg, (long long)z.tend, (long long)x.score, (long long)x.qbeg,
              (long long)x.qend, (long long)x.tbeg, (long long)x.tend, swgpu_last_error());
        swgpu_aln_free(&z);
        {
            /* strips of 8 or 4 rows per lane in some passes: the same alignment */
            static const char *const rows[3] = { "8,4,4", "4,8,8", "16,4,8" };
            o2.gpu_parts = 0;
            o2.gpus = 1;
            setenv("SWGPU_LONG_ROWS", rows[it % 3], 1);
            r2 = swgpu_align_long(a, m, b, n, prot ? blosum : dna, &o2, &z, &zs);
            unsetenv("SWGPU_LONG_ROWS");
            CHECK(r1 == 0 && r2 == 0 && x.score == z.score && x.qbeg == z.qbeg && x.qend == z.qend &&
                      x.tbeg == z.tbeg && x.tend == z.tend && x.n_cigar == z.n_cigar &&
                      !memcmp(x.cigar, z.cigar, x.n_cigar * sizeof *x.cigar) && !strcmp(zs.backend, "cuda"),
                  "gpu %d (%zu x %zu), rows per lane %s: rc %d score %lld [%lld,%lld)x[%lld,%lld), the CPU's "
                  "%lld %s", it, m, n, rows[it % 3], r2, (long long)z.score, (long long)z.qbeg, (long long)z.qend,
                  (long long)z.tbeg, (long long)z.tend, (long long)x.score, swgpu_last_error());
            swgpu_aln_free(&z);
        }
    }
    printf("# gpu: %d of 40 pairs identical to the CPU path\n", n_ok);
    {
        /* automatic split over every GPU (one GPU: none): a score pass big
         * enough to be spread, a reverse pass that stays on the first GPU;
         * the same result, the same cells in all, and about as many computed
         * (pruning differs a little with the split; a partition left idle
         * once counted its last batch's pruned cells again) */
        size_t m = 270000, n;
        uint8_t *la = malloc(m), *lb = malloc(2 * m);
        swgpu_long_opts_t o1 = opts(5, 2, 0, 0, SWGPU_BACKEND_CUDA), o2;
        swgpu_long_stats_t s1, s2;
        swgpu_aln_t u = { 0 }, v = { 0 };
        int r1, r2;
        o1.score_only = 1;
        o2 = o1;
        o2.gpus = 0;
        tl_rand_codes(&s, la, m, 4);
        n = tl_mutate_codes(&s, la, m, lb, 2 * m, 4, 60, 10, 10);
        swgpu__long_set_base(0);
        r1 = swgpu_align_long(la, m, lb, n, dna, &o1, &u, &s1);
        r2 = swgpu_align_long(la, m, lb, n, dna, &o2, &v, &s2);
        swgpu__long_set_base(1);
        CHECK(r1 == 0 && r2 == 0 && u.score == v.score && u.qbeg == v.qbeg && u.qend == v.qend &&
                  u.tbeg == v.tbeg && u.tend == v.tend && s1.cells + s1.cells_pruned == s2.cells + s2.cells_pruned &&
                  s2.score_pruned <= s2.score_cells && s2.cells >= s1.cells / 2 && s2.cells <= 2 * s1.cells,
              "gpu, automatic split over %d GPU(s): rc %d %d, score %lld %lld, cells %llu + %llu pruned and "
              "%llu + %llu", s2.gpus, r1, r2, (long long)u.score, (long long)v.score, (unsigned long long)s1.cells,
              (unsigned long long)s1.cells_pruned, (unsigned long long)s2.cells, (unsigned long long)s2.cells_pruned);
        printf("# gpu: automatic split over %d GPU(s), %zu x %zu\n", s2.gpus, m, n);
        swgpu_aln_free(&u);
        swgpu_aln_free(&v);
        free(la);
        free(lb);
    }
#ifdef SWGPU_HAVE_CUDA
    test_gpu_wide();
#endif
    swgpu_aln_free(&x);
    swgpu_aln_free(&y);
    free(a);
    free(b);
}

int main(void)
{
    if (swgpu_matrix_dna(2, -3, &dna) || swgpu_matrix_builtin("BLOSUM62", &blosum)) {
        printf("cannot build matrices: %s\n", swgpu_last_error());
        return 1;
    }
    swgpu__long_set_base(1); /* the smallest base case: deep splits */
    {
        double t = swgpu__now();
        test_seed_bound();
        printf("# seed bound %.2fs\n", swgpu__now() - t); t = swgpu__now();
        test_edges();
        printf("# edges %.2fs\n", swgpu__now() - t); t = swgpu__now();
        test_random();
        printf("# random %.2fs\n", swgpu__now() - t); t = swgpu__now();
        test_related();
        printf("# related %.2fs\n", swgpu__now() - t); t = swgpu__now();
        test_progress_and_threads();
        printf("# progress %.2fs\n", swgpu__now() - t); t = swgpu__now();
        test_score_pass_pruned();
        printf("# score-pass pruning %.2fs\n", swgpu__now() - t); t = swgpu__now();
        test_wide();
        printf("# wide scores %.2fs\n", swgpu__now() - t); t = swgpu__now();
        test_ckpt();
        printf("# checkpoints %.2fs\n", swgpu__now() - t); t = swgpu__now();
        test_gpu();
        printf("# gpu %.2fs\n", swgpu__now() - t);
    }
    swgpu__long_set_base(0);
    swgpu_matrix_destroy(dna);
    swgpu_matrix_destroy(blosum);
    return tap_done();
}
