/*
 * test_scan_many.c - the CPU engine's scan_many (many queries per call,
 * scores handed to a sink) against its own scan() and the reference engine:
 * every instruction set this CPU has, thread counts 1, 2, 3 and 7, protein
 * and DNA, queries of 0 to 3000 residues, saturating ones (16- and 32-bit
 * recomputation), sparse databases (pair kernel), an empty database, one
 * query, no query, the sink's abort path and invalid queries.
 */
#include "cpu/cpu.h"
#include "tap.h"
#include "testlib.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------- fixtures */

/* A set of queries, owned. */
typedef struct {
    size_t n;
    uint8_t *q[512];
    size_t len[512];
} qset_t;

static void qset_free(qset_t *qs)
{
    for (size_t i = 0; i < qs->n; i++) free(qs->q[i]);
    qs->n = 0;
}

static void qset_add(qset_t *qs, size_t len, int ncodes, uint64_t *rng)
{
    qs->q[qs->n] = malloc(len + 1);
    tl_rand_codes(rng, qs->q[qs->n], len, ncodes);
    qs->len[qs->n++] = len;
}

/* ------------------------------------------------------------- the sink */

typedef struct {
    size_t nq, n;
    int32_t *got;          /* nq * n */
    int *seen;             /* calls per query */
    atomic_int inside;     /* sink calls running now */
    long calls, overlap, bad_index;
    long abort_at;         /* the call (1-based) that fails; 0: none */
    /* the companion (ahead_fn), called from the engine's threads at once */
    const int32_t *want;   /* nq * n: what each row offered must be */
    atomic_int *offered;   /* per query, calls that offered it */
    pthread_t *by;         /* per query, the thread that offered it */
    atomic_long ahead_bad; /* offers not of one query, or of a wrong row */
    atomic_long ahead_calls;
    long not_before;       /* sink calls of an offered query on another thread */
    long unoffered;        /* sink calls of a query not offered (yet) */
    int ahead_fail;        /* the companion's status from its first call on (0: none) */
} sink_t;

static int ahead_fn(void *user, size_t n, const size_t *idx, const int32_t *const *rows)
{
    sink_t *k = user;
    atomic_fetch_add(&k->ahead_calls, 1);
    if (k->ahead_fail)
        return swgpu__fail(k->ahead_fail, "companion stops");
    if (n != 1 || idx[0] >= k->nq ||
        (k->n && memcmp(rows[0], k->want + idx[0] * k->n, k->n * sizeof **rows))) {
        atomic_fetch_add(&k->ahead_bad, 1);
        return SWGPU_OK;
    }
    k->by[idx[0]] = pthread_self();
    atomic_fetch_add(&k->offered[idx[0]], 1);
    return SWGPU_OK;
}

static int sink_fn(void *user, size_t i, const int32_t *scores)
{
    sink_t *k = user;
    int rc = 0;
    if (atomic_fetch_add(&k->inside, 1) != 0) k->overlap++;
    k->calls++;
    if (i >= k->nq) {
        k->bad_index++;
    } else {
        if (k->offered && atomic_load(&k->offered[i]) && !pthread_equal(k->by[i], pthread_self()))
            k->not_before++;
        if (k->offered && !atomic_load(&k->offered[i]))
            k->unoffered++;
        k->seen[i]++;
        if (k->n) memcpy(k->got + i * k->n, scores, k->n * sizeof *scores);
    }
    if (k->abort_at && k->calls == k->abort_at)
        rc = swgpu__fail(SWGPU_ENOTFOUND, "sink stops at call %ld (query %zu)", k->calls, i);
    atomic_fetch_sub(&k->inside, 1);
    return rc;
}

static void sink_init(sink_t *k, size_t nq, size_t n, long abort_at)
{
    memset(k, 0, sizeof *k);
    k->nq = nq;
    k->n = n;
    k->got = malloc(nq * n * sizeof *k->got + 1);
    k->seen = calloc(nq + 1, sizeof *k->seen);
    atomic_init(&k->inside, 0);
    k->abort_at = abort_at;
    for (size_t j = 0; j < nq * n; j++) k->got[j] = -7;
    atomic_init(&k->ahead_bad, 0);
    atomic_init(&k->ahead_calls, 0);
}

/* k takes offers too, each row checked against want (nq * n) */
static void sink_ahead(sink_t *k, const int32_t *want)
{
    k->want = want;
    k->offered = calloc(k->nq + 1, sizeof *k->offered);
    k->by = calloc(k->nq + 1, sizeof *k->by);
    for (size_t i = 0; i < k->nq; i++) atomic_init(&k->offered[i], 0);
}

static void sink_free(sink_t *k)
{
    free(k->got);
    free(k->seen);
    free(k->offered);
    free(k->by);
}

/* ----------------------------------------------------------- the checks */

static const swgpu__isa_t isas[] = {SWGPU__ISA_SCALAR, SWGPU__ISA_SSE41, SWGPU__ISA_AVX2,
                                    SWGPU__ISA_AVX512};
#define N_ISAS 4
static const int thread_counts[] = {1, 2, 3, 7};
#define N_THREADS 4

static swgpu_opts_t opts(int go, int ge, int threads)
{
    swgpu_opts_t o;
    memset(&o, 0, sizeof o);
    o.gap_open = go;
    o.gap_extend = ge;
    o.threads = threads;
    return o;
}

/* The reference engine's scores of every query (nq * n), NULL on failure. */
static int32_t *ref_scores(const tl_tdb_t *d, const swgpu_matrix_t *m, int go, int ge,
                           const qset_t *qs)
{
    size_t n = d->db.n;
    swgpu_opts_t o = opts(go, ge, 1);
    void *st = NULL;
    int32_t *want = malloc(qs->n * n * sizeof *want + 1);
    if (!want || swgpu__engine_ref.create(&d->db, m, &o, &st)) {
        CHECK(0, "reference engine: %s", swgpu_last_error());
        free(want);
        return NULL;
    }
    for (size_t qi = 0; qi < qs->n; qi++) {
        swgpu__query_t Q = swgpu__query_plain(qs->q[qi], qs->len[qi]);
        if (swgpu__engine_ref.scan(st, &Q, want + qi * n, NULL)) {
            CHECK(0, "reference scan: %s", swgpu_last_error());
            free(want);
            want = NULL;
            break;
        }
    }
    swgpu__engine_ref.destroy(st);
    return want;
}

/* Count the scores of got that differ from want (nq * n), printing the first few. */
static long diff_scores(const char *what, const char *vs, const int32_t *got, const int32_t *want,
                        const qset_t *qs, size_t n)
{
    long bad = 0;
    for (size_t qi = 0; qi < qs->n; qi++)
        for (size_t k = 0; k < n; k++)
            if (got[qi * n + k] != want[qi * n + k]) {
                if (bad < 5)
                    fprintf(stderr, "%s: query %zu (len %zu) target %zu: %d, %s says %d\n", what, qi,
                            qs->len[qi], k, got[qi * n + k], vs, want[qi * n + k]);
                bad++;
            }
    return bad;
}

/*
 * For each instruction set: every query with scan() (compared with the
 * reference when use_ref), then all of them with scan_many() at each
 * thread count, compared with scan() and the reference, each query handed
 * over exactly once, the sink never entered twice at once, the statistics
 * those of the scans.  Without the reference, the scalar instruction set
 * is left out (too slow for the larger sets); quick runs take the best
 * instruction set only (the threads' code is the same for all).
 */
static void check_many(const char *what, const tl_tdb_t *d, const swgpu_matrix_t *m, int go,
                       int ge, const qset_t *qs, int use_ref)
{
    size_t n = d->db.n, nq = qs->n;
    int32_t *want = use_ref ? ref_scores(d, m, go, ge, qs) : NULL;
    int32_t *base = malloc(nq * n * sizeof *base + 1);
    swgpu__query_t qp[512];
    uint64_t cells = 0;

    if (use_ref && !want) goto out;
    for (size_t qi = 0; qi < nq; qi++) {
        qp[qi] = swgpu__query_plain(qs->q[qi], qs->len[qi]);
        cells += (uint64_t)qs->len[qi] * d->db.total_res;
    }
    for (int ii = 0; ii < N_ISAS; ii++) {
        const char *iname = swgpu__cpu_isa_name(isas[ii]);
        swgpu_scan_stats_t base_st = {0, 0, 0};
        char w[200];
        void *st = NULL;
        int rc;

        if (!use_ref && isas[ii] == SWGPU__ISA_SCALAR) continue; /* slow: the small sets cover it */
        if (tap_quick() && isas[ii] != swgpu__cpu_isa_best()) continue;
        if (!swgpu__cpu_isa_supported(isas[ii])) {
            snprintf(w, sizeof w, "%s: this CPU lacks %s", what, iname);
            SKIP(1 + (use_ref ? 1 : 0) + 3 * N_THREADS, w);
            continue;
        }
        /* scan(), one query at a time */
        swgpu_opts_t o = opts(go, ge, 2);
        rc = swgpu__cpu_engine_create_isa(&d->db, m, &o, isas[ii], &st);
        CHECK(rc == 0, "%s %s: create: %s", what, iname, swgpu_last_error());
        if (rc) continue;
        rc = 0;
        for (size_t qi = 0; qi < nq && !rc; qi++) rc = swgpu__engine_cpu.scan(st, &qp[qi], base + qi * n, &base_st);
        swgpu__engine_cpu.destroy(st);
        CHECK(rc == 0, "%s %s: scan: %s", what, iname, swgpu_last_error());
        if (rc) continue;
        if (use_ref) {
            snprintf(w, sizeof w, "%s %s scan", what, iname);
            CHECK(diff_scores(w, "ref", base, want, qs, n) == 0, "%s: scan() differs from the reference", w);
        }
        for (int ti = 0; ti < N_THREADS; ti++) {
            int threads = thread_counts[ti];
            swgpu_scan_stats_t ss = {0, 0, 0};
            sink_t k;
            long bad = 0, missed = 0;

            snprintf(w, sizeof w, "%s %s threads %d", what, iname, threads);
            o = opts(go, ge, threads);
            rc = swgpu__cpu_engine_create_isa(&d->db, m, &o, isas[ii], &st);
            CHECK(rc == 0, "%s: create: %s", w, swgpu_last_error());
            if (rc) continue;
            sink_init(&k, nq, n, 0);
            sink_ahead(&k, base);
            rc = swgpu__engine_cpu.scan_many(st, nq, qp, sink_fn, ahead_fn, &k, &ss);
            swgpu__engine_cpu.destroy(st);
            CHECK(rc == 0, "%s: scan_many: %s", w, swgpu_last_error());
            for (size_t qi = 0; qi < nq; qi++) missed += k.seen[qi] != 1;
            CHECK(missed == 0 && k.bad_index == 0 && k.overlap == 0 && k.calls == (long)nq,
                  "%s: %ld calls for %zu queries, %ld not once, %ld bad indexes, %ld overlapping", w,
                  k.calls, nq, missed, k.bad_index, k.overlap);
            /* offered: every query that is not empty, once, by the thread
             * that then sinks it (thread 0 for the queries all threads
             * share); the empty ones never */
            long once = 0, twice = 0, nonempty = 0;
            for (size_t qi = 0; qi < nq; qi++) {
                once += atomic_load(&k.offered[qi]) == 1;
                twice += atomic_load(&k.offered[qi]) > 1;
                nonempty += qs->len[qi] > 0;
            }
            CHECK(atomic_load(&k.ahead_bad) == 0 && twice == 0 && k.not_before == 0 &&
                      k.unoffered == (long)nq - once &&
                      once == nonempty,
                  "%s: ahead: %ld wrong offers, %ld queries offered once, %ld more often, %ld "
                  "sunk on another thread, %ld sunk before their offer or without one", w,
                  atomic_load(&k.ahead_bad), once, twice, k.not_before, k.unoffered);
            bad = diff_scores(w, "scan", k.got, base, qs, n);
            if (want) bad += diff_scores(w, "ref", k.got, want, qs, n);
            CHECK(bad == 0, "%s: %ld scores differ from scan() or the reference", w, bad);
            CHECK(ss.cells == cells && ss.overflows == base_st.overflows,
                  "%s: stats cells %llu overflows %llu, scan() made %llu and %llu", w,
                  (unsigned long long)ss.cells, (unsigned long long)ss.overflows,
                  (unsigned long long)cells, (unsigned long long)base_st.overflows);
            sink_free(&k);
        }
    }
out:
    free(want);
    free(base);
}

/* Database lengths: lane and column-block edges first, then random, some empty. */
static size_t db_len(size_t i, uint64_t *rng, size_t maxlen)
{
    static const size_t edge[] = {1, 0, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 0, 127, 128, 129};
    size_t ne = sizeof edge / sizeof edge[0];
    if (i < ne) return edge[i];
    return 1 + (size_t)(tap_rand(rng) % maxlen);
}

/* A database of nseq random sequences, every 9th holding a stretch of one
 * of the queries (scores beyond 8 bits, and 16 with a big matrix). */
static void build_db(tl_tdb_t *d, swgpu_alphabet_t alpha, size_t nseq, size_t maxlen,
                     const qset_t *qs, uint64_t *rng)
{
    int ncodes = alpha == SWGPU_DNA ? 4 : 20;
    uint8_t **seqs = malloc(nseq * sizeof *seqs);
    size_t *lens = malloc(nseq * sizeof *lens);
    for (size_t i = 0; i < nseq; i++) {
        lens[i] = db_len(i, rng, maxlen);
        seqs[i] = malloc(lens[i] + 1);
        tl_rand_codes(rng, seqs[i], lens[i], ncodes);
        if (i % 9 == 4 && qs->n) {
            const qset_t *s = qs;
            size_t qi = (size_t)(tap_rand(rng) % s->n), l = s->len[qi] < lens[i] ? s->len[qi] : lens[i];
            memcpy(seqs[i], s->q[qi], l);
        }
    }
    tl_tdb_build(d, alpha, seqs, lens, nseq);
    for (size_t i = 0; i < nseq; i++) free(seqs[i]);
    free(seqs);
    free(lens);
}

/* Queries of varied lengths: a few long ones (3000, 1500, 800), some
 * empty, short ones, the rest random up to maxlen. */
static void varied_queries(qset_t *qs, size_t nq, size_t maxlen, int ncodes, uint64_t *rng)
{
    static const size_t fixed[] = {0, 1, 3000, 2, 3, 1500, 0, 5, 17, 64, 800, 65};
    qs->n = 0;
    for (size_t i = 0; i < nq; i++) {
        size_t len = i < sizeof fixed / sizeof fixed[0] ? fixed[i] : 1 + (size_t)(tap_rand(rng) % maxlen);
        qset_add(qs, len, ncodes, rng);
    }
}

static void test_protein(void)
{
    uint64_t rng = 101;
    swgpu_matrix_t *mp = NULL;
    qset_t qs;
    tl_tdb_t d;

    if (swgpu_matrix_builtin("BLOSUM62", &mp)) {
        CHECK(0, "BLOSUM62: %s", swgpu_last_error());
        return;
    }
    varied_queries(&qs, tap_quick() ? 16 : 40, 200, 20, &rng);
    build_db(&d, SWGPU_PROTEIN, tap_quick() ? 40 : 100, 250, &qs, &rng);
    check_many("protein 40 queries x 100 (quick: 16 x 40)", &d, mp, 11, 1, &qs, 1);
    tl_tdb_free(&d);
    qset_free(&qs);

    /* one query; then many short ones against a larger database (scan()
     * only: the reference would take too long) */
    qset_add(&qs, 250, 20, &rng);
    build_db(&d, SWGPU_PROTEIN, 150, 300, &qs, &rng);
    check_many("protein 1 query", &d, mp, 11, 1, &qs, 1);
    tl_tdb_free(&d);
    qset_free(&qs);

    for (int i = 0; i < (tap_quick() ? 60 : 300); i++)
        qset_add(&qs, 1 + (size_t)(tap_rand(&rng) % 40), 20, &rng);
    build_db(&d, SWGPU_PROTEIN, tap_quick() ? 300 : 1200, 300, &qs, &rng);
    check_many("protein 300 short queries x 1200 (quick: 60 x 300)", &d, mp, 10, 2, &qs, 0);
    tl_tdb_free(&d);
    qset_free(&qs);
    swgpu_matrix_destroy(mp);
}

/* A matrix with scores beyond 8 bits: 16-bit first, copies of 200+
 * residues beyond 16 bits (32-bit recomputation). */
static void test_wide(void)
{
    uint64_t rng = 202;
    swgpu_matrix_t m;
    qset_t qs;
    tl_tdb_t d;

    memset(&m, 0, sizeof m);
    snprintf(m.name, sizeof m.name, "wide");
    m.alphabet = SWGPU_PROTEIN;
    for (int a = 0; a < SWGPU_NCODES; a++)
        for (int b = 0; b < SWGPU_NCODES; b++) m.s[a][b] = a == b ? 300 + 7 * a : -200 + (a * 31 + b * 17) % 150;
    m.min = -200;
    m.max = 300 + 7 * 31;
    varied_queries(&qs, tap_quick() ? 13 : 24, 300, 20, &rng);
    build_db(&d, SWGPU_PROTEIN, tap_quick() ? 40 : 80, 400, &qs, &rng);
    check_many("wide matrix", &d, &m, 20, 5, &qs, 1);
    tl_tdb_free(&d);
    qset_free(&qs);
}

static void test_dna(void)
{
    uint64_t rng = 303;
    swgpu_matrix_t *mp = NULL;
    qset_t qs;
    tl_tdb_t d;

    if (swgpu_matrix_dna(5, -4, &mp)) {
        CHECK(0, "dna matrix: %s", swgpu_last_error());
        return;
    }
    varied_queries(&qs, tap_quick() ? 14 : 36, 300, 4, &rng);
    build_db(&d, SWGPU_DNA, tap_quick() ? 40 : 100, 300, &qs, &rng);
    check_many("dna 36 queries x 100 (quick: 14 x 40)", &d, mp, 5, 2, &qs, 1);
    tl_tdb_free(&d);
    qset_free(&qs);
    swgpu_matrix_destroy(mp);
}

/* Sparse database: three long sequences scored with the pair kernel. */
static void test_sparse(void)
{
    uint64_t rng = 404;
    swgpu_matrix_t *mp = NULL;
    uint8_t *seqs[3];
    size_t lens[3] = {3000, 2500, 700};
    qset_t qs;
    tl_tdb_t d;

    if (swgpu_matrix_builtin("PAM70", &mp)) {
        CHECK(0, "PAM70: %s", swgpu_last_error());
        return;
    }
    qs.n = 0;
    for (int i = 0; i < (tap_quick() ? 8 : 20); i++)
        qset_add(&qs, i == 3 ? 2600 : 1 + (size_t)(tap_rand(&rng) % 300), 20, &rng);
    for (int i = 0; i < 3; i++) {
        seqs[i] = malloc(lens[i]);
        tl_rand_codes(&rng, seqs[i], lens[i], 20);
    }
    memcpy(seqs[0] + 100, qs.q[3], 2600);
    memcpy(seqs[1] + 2000, qs.q[5], qs.len[5]);
    tl_tdb_build(&d, SWGPU_PROTEIN, seqs, lens, 3);
    check_many("sparse 3 sequences", &d, mp, 10, 2, &qs, 1);
    tl_tdb_free(&d);
    for (int i = 0; i < 3; i++) free(seqs[i]);
    qset_free(&qs);
    swgpu_matrix_destroy(mp);
}

/* No query, empty queries only, an empty database. */
static void test_edges(void)
{
    uint64_t rng = 505;
    swgpu_matrix_t *mp = NULL;
    swgpu_opts_t o = opts(11, 1, 3);
    qset_t qs;
    tl_tdb_t d;
    void *st = NULL;
    sink_t k;

    if (swgpu_matrix_builtin("BLOSUM62", &mp)) {
        CHECK(0, "BLOSUM62: %s", swgpu_last_error());
        return;
    }
    qs.n = 0;
    for (int i = 0; i < 9; i++) qset_add(&qs, 0, 20, &rng);
    build_db(&d, SWGPU_PROTEIN, 40, 100, &qs, &rng);
    check_many("empty queries", &d, mp, 11, 1, &qs, 1);

    CHECK_EQ_INT(swgpu__engine_cpu.create(&d.db, mp, &o, &st), 0);
    if (st) {
        swgpu_scan_stats_t ss = {0, 0, 0};
        sink_init(&k, 1, d.db.n, 0);
        CHECK_EQ_INT(swgpu__engine_cpu.scan_many(st, 0, NULL, sink_fn, NULL, &k, &ss), 0);
        CHECK_EQ_INT(k.calls, 0);
        CHECK_EQ_INT(ss.cells, 0);
        sink_free(&k);
        swgpu__engine_cpu.destroy(st);
        st = NULL;
    }
    tl_tdb_free(&d);
    qset_free(&qs);

    /* a database without sequences: each query goes to the sink once */
    for (int i = 0; i < 5; i++) qset_add(&qs, 10 + (size_t)i, 20, &rng);
    tl_tdb_build(&d, SWGPU_PROTEIN, NULL, NULL, 0);
    CHECK_EQ_INT(swgpu__engine_cpu.create(&d.db, mp, &o, &st), 0);
    if (st) {
        swgpu__query_t qp[5];
        for (int i = 0; i < 5; i++) qp[i] = swgpu__query_plain(qs.q[i], qs.len[i]);
        sink_init(&k, 5, 0, 0);
        CHECK_EQ_INT(swgpu__engine_cpu.scan_many(st, 5, qp, sink_fn, NULL, &k, NULL), 0);
        CHECK_EQ_INT(k.calls, 5);
        CHECK(k.seen[0] == 1 && k.seen[4] == 1, "empty database: each query once");
        sink_free(&k);
        swgpu__engine_cpu.destroy(st);
    }
    tl_tdb_free(&d);
    qset_free(&qs);
    swgpu_matrix_destroy(mp);
}

/* The sink fails: scan_many returns its status and message (whichever
 * thread called it), calls the sink no more, and returns (no hang); an
 * invalid query fails before any call. */
static void test_abort(void)
{
    uint64_t rng = 606;
    swgpu_matrix_t *mp = NULL;
    qset_t qs;
    tl_tdb_t d;
    swgpu__query_t qp[512];

    if (swgpu_matrix_builtin("BLOSUM62", &mp)) {
        CHECK(0, "BLOSUM62: %s", swgpu_last_error());
        return;
    }
    varied_queries(&qs, 60, 120, 20, &rng);
    for (size_t i = 0; i < qs.n; i++) qp[i] = swgpu__query_plain(qs.q[i], qs.len[i]);
    build_db(&d, SWGPU_PROTEIN, tap_quick() ? 100 : 400, 300, &qs, &rng);
    for (int ti = 0; ti < N_THREADS; ti++) {
        static const long at[] = {1, 2, 3, 10, 59, 60};
        for (size_t ai = 0; ai < sizeof at / sizeof at[0]; ai++) {
            swgpu_opts_t o = opts(11, 1, thread_counts[ti]);
            void *st = NULL;
            sink_t k;
            int rc;
            if (swgpu__engine_cpu.create(&d.db, mp, &o, &st)) {
                CHECK(0, "create: %s", swgpu_last_error());
                continue;
            }
            sink_init(&k, qs.n, d.db.n, at[ai]);
            swgpu__fail(SWGPU_OK, "no error");
            rc = swgpu__engine_cpu.scan_many(st, qs.n, qp, sink_fn, NULL, &k, NULL);
            CHECK(rc == SWGPU_ENOTFOUND && k.calls == at[ai] && k.overlap == 0 &&
                      !strncmp(swgpu_last_error(), "sink stops at call", 18),
                  "threads %d abort at %ld: rc %d, %ld calls, last error \"%s\"", thread_counts[ti], at[ai],
                  rc, k.calls, swgpu_last_error());
            sink_free(&k);
            swgpu__engine_cpu.destroy(st);
        }
        /* a failing companion stops the scan with its status and message
         * (one thread offers every query, so no sink call comes first; with
         * more, the queries they all share are never offered: then none may
         * be, and the scan ends as without a companion) */
        swgpu_opts_t o = opts(11, 1, thread_counts[ti]);
        void *st = NULL;
        sink_t k;
        if (swgpu__engine_cpu.create(&d.db, mp, &o, &st) == 0) {
            sink_init(&k, qs.n, d.db.n, 0);
            sink_ahead(&k, NULL);
            k.ahead_fail = SWGPU_ERANGE;
            int rc = swgpu__engine_cpu.scan_many(st, qs.n, qp, sink_fn, ahead_fn, &k, NULL);
            const long offers = atomic_load(&k.ahead_calls);
            CHECK(offers ? rc == SWGPU_ERANGE && !strcmp(swgpu_last_error(), "companion stops")
                         : rc == SWGPU_OK && k.calls == (long)qs.n && thread_counts[ti] > 1,
                  "threads %d, a failing companion: rc %d, %ld offers, %ld sink calls, last "
                  "error \"%s\"", thread_counts[ti], rc, offers, k.calls, swgpu_last_error());
            CHECK(thread_counts[ti] > 1 || (offers == 1 && k.calls == 0),
                  "one thread, a failing companion: %ld offers, %ld sink calls", offers, k.calls);
            sink_free(&k);
            swgpu__engine_cpu.destroy(st);
        } else {
            CHECK(0, "create: %s", swgpu_last_error());
        }
    }
    {
        /* an out-of-range residue code in one query: EINVAL, no sink call */
        swgpu_opts_t o = opts(11, 1, 2);
        void *st = NULL;
        sink_t k;
        if (swgpu__engine_cpu.create(&d.db, mp, &o, &st) == 0) {
            qs.q[30][qs.len[30] / 2] = SWGPU__PAD;
            sink_init(&k, qs.n, d.db.n, 0);
            CHECK_EQ_INT(swgpu__engine_cpu.scan_many(st, qs.n, qp, sink_fn, NULL, &k, NULL), SWGPU_EINVAL);
            CHECK_EQ_INT(k.calls, 0);
            sink_free(&k);
            swgpu__engine_cpu.destroy(st);
        } else {
            CHECK(0, "create: %s", swgpu_last_error());
        }
    }
    tl_tdb_free(&d);
    qset_free(&qs);
    swgpu_matrix_destroy(mp);
}

/*
 * The 8-bit layout of a database (laid out on all threads): 300 sequences of
 * 200-260 residues, several units whatever the lane count; a residue code
 * out of range (written into the database in memory, past the checks of
 * its reading) refuses the engine with the first bad sequence in the
 * units' order (longest first), on 1 and 4 threads: the longest of two
 * bad ones, or the one left; and the layout's scores on 1 and 4 threads
 * are the same.
 */
static void test_layout(void)
{
    enum { N = 300 };
    static char buf[N][264];
    const char *seqs[N];
    const char *aa = "ARNDCQEGHILKMFPSTWYV";
    uint64_t rng = 99;
    for (int i = 0; i < N; i++) {
        const size_t len = 200 + tap_rand(&rng) % 61;
        for (size_t j = 0; j < len; j++)
            buf[i][j] = aa[tap_rand(&rng) % 20];
        buf[i][len] = 0;
        seqs[i] = buf[i];
    }
    swgpu_db_t *db = tl_db_of(SWGPU_PROTEIN, seqs, N, "L");
    swgpu_matrix_t *m = NULL;
    swgpu_matrix_get("BLOSUM62", &m);
    CHECK(db && m, "layout: a database and BLOSUM62");
    if (!db || !m) {
        swgpu_db_destroy(db);
        swgpu_matrix_destroy(m);
        return;
    }
    /* scores with the layout made on 1 and on 4 threads */
    const swgpu__query_t q = swgpu__query_plain(db->res + db->off[N / 2],
                                                db->off[N / 2 + 1] - db->off[N / 2]);
    int32_t *sc[2] = {calloc(N, sizeof(int32_t)), calloc(N, sizeof(int32_t))};
    static const int tc[2] = {1, 4};
    for (int t = 0; t < 2 && sc[0] && sc[1]; t++) {
        swgpu_opts_t o = opts(11, 1, tc[t]);
        void *st = NULL;
        CHECK_EQ_INT(swgpu__engine_cpu.create(db, m, &o, &st), 0);
        if (st)
            CHECK_EQ_INT(swgpu__engine_cpu.scan(st, &q, sc[t], NULL), 0);
        swgpu__engine_cpu.destroy(st);
    }
    CHECK(sc[0] && sc[1] && !memcmp(sc[0], sc[1], N * sizeof(int32_t)) && sc[0][N / 2] > 0,
          "layout: the same scores from layouts made on 1 and 4 threads");
    free(sc[0]);
    free(sc[1]);
    /* bad codes: in the longest sequence and in the shortest, then the shortest alone */
    uint8_t *res = (uint8_t *)db->res;
    const uint64_t kl = N - 1, ks = 0, al = db->off[kl] + 7, as = db->off[ks + 1] - 1;
    char want_l[160], want_s[160];
    snprintf(want_l, sizeof want_l, "cpu engine: database sequence %u (sorted %llu): residue "
             "code %u out of range", db->orig[kl], (unsigned long long)kl, SWGPU__PAD);
    snprintf(want_s, sizeof want_s, "cpu engine: database sequence %u (sorted %llu): residue "
             "code %u out of range", db->orig[ks], (unsigned long long)ks, SWGPU__PAD + 1);
    const uint8_t keep_l = res[al], keep_s = res[as];
    for (int c = 0; c < 2; c++) {
        res[al] = c ? keep_l : SWGPU__PAD;
        res[as] = SWGPU__PAD + 1;
        for (int t = 0; t < 2; t++) {
            swgpu_opts_t o = opts(11, 1, tc[t]);
            void *st = (void *)1;
            const int rc = swgpu__engine_cpu.create(db, m, &o, &st);
            CHECK(rc == SWGPU_EDB && st == NULL && !strcmp(swgpu_last_error(), c ? want_s : want_l),
                  "layout, %s bad, %d threads: %d \"%s\"", c ? "the shortest" : "two", tc[t], rc,
                  swgpu_last_error());
        }
    }
    res[al] = keep_l;
    res[as] = keep_s;
    swgpu_db_destroy(db);
    swgpu_matrix_destroy(m);
}

int main(void)
{
    CHECK(swgpu__engine_cpu.scan_many != NULL, "the cpu engine has scan_many");
    if (!swgpu__engine_cpu.scan_many) return tap_done();
    test_edges();
    test_abort();
    test_protein();
    test_wide();
    test_dna();
    test_sparse();
    test_layout();
    return tap_done();
}
