/*
 * test_strands.c - what a search does with the batches an engine offers
 * ahead of its sink calls (swgpu_scan_ahead_t), on the CPU with a simulated
 * engine: the strands' companion (swgpu__strands_ahead) with both DNA
 * strands offers each query's merged row exactly once, in the batch of its
 * second strand, equal to the row the query's sink then gets and in the
 * order of those calls, whatever the batches' cuts; with one strand it
 * passes a batch on as it is; a failing companion's status comes back.  The
 * search's fits of a batch (swgpu__search_ahead, on several threads: run
 * under ThreadSanitizer by check-tsan) equal the fits one at a time, and
 * nothing is fitted where published parameters are used.  An engine that
 * offers each query from its scanning threads (simulated on 1 to 4 threads,
 * queries in order and shuffled): each query's merged row offered at most
 * once, by the thread that then sinks it, before that call, and on one
 * thread every query.
 */
#include "tap.h"
#include "testlib.h"
#include "search/search.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>

#define NQ 9
#define NSUB 41

/* what the simulated search saw */
typedef struct {
    size_t n;                  /* subjects */
    int32_t *offered[NQ];      /* per query, the row offered ahead (a copy) */
    int noffered[NQ], nsunk[NQ];
    size_t queue[NQ], at, len; /* the queries offered by the last batch, to be sunk next */
    int bad, fail;             /* fail: the companion's status to return (0: none) */
    const int32_t *passed;     /* one strand: the first row pointer the companion got */
} rec_t;

static int rec_ahead(void *user, size_t n, const size_t *idx, const int32_t *const *rows)
{
    rec_t *r = user;
    if (r->fail)
        return swgpu__fail(r->fail, "test companion: stop");
    if (r->at != r->len)
        r->bad++; /* the batch before not all sunk */
    r->at = r->len = 0;
    if (n)
        r->passed = rows[0];
    for (size_t j = 0; j < n; j++) {
        if (idx[j] >= NQ || r->len == NQ) {
            r->bad++;
            continue;
        }
        r->noffered[idx[j]]++;
        free(r->offered[idx[j]]);
        r->offered[idx[j]] = malloc(r->n * sizeof **r->offered);
        memcpy(r->offered[idx[j]], rows[j], r->n * sizeof **rows);
        r->queue[r->len++] = idx[j];
    }
    return SWGPU_OK;
}

static int rec_sink(void *user, size_t i, const int32_t *scores)
{
    rec_t *r = user;
    if (i >= NQ)
        return r->bad++, SWGPU_OK;
    r->nsunk[i]++;
    if (r->at < r->len && r->queue[r->at++] != i)
        r->bad++;
    if (!r->offered[i] || memcmp(r->offered[i], scores, r->n * sizeof *scores))
        r->bad++;
    return SWGPU_OK;
}

/* st for nq DNA queries qs on strand (the recorder r as sink and companion) */
static void strands_of(swgpu__strands_t *st, rec_t *r, const swgpu__query_t *qs, size_t nq,
                       swgpu_strand_t strand)
{
    swgpu_opts_t o;
    swgpu_opts_init(&o, SWGPU_DNA);
    o.strand = strand;
    memset(r, 0, sizeof *r);
    r->n = NSUB;
    CHECK_EQ_INT(swgpu__strands_init(st, qs, nq, SWGPU_DNA, &o, NSUB, rec_sink, r, NULL), 0);
    st->inner_ahead = rec_ahead;
}

/* the engine's row of engine query k: small scores with ties between strands */
static int32_t row_score(size_t k, size_t t)
{
    return (int32_t)((k * 7919u + t * 104729u + (k >> 1) * 31u) % 23u);
}

/* the engine queries 0 .. 2 NQ - 1 in order ord, cut after the positions in
 * cuts (ncut of them), offered and sunk batch by batch through st */
static void run_batches(const char *what, const size_t *ord, const size_t *cuts, size_t ncut)
{
    static uint8_t res[NQ][12];
    swgpu__query_t qs[NQ];
    for (int i = 0; i < NQ; i++) {
        for (int k = 0; k < 12; k++)
            res[i][k] = (uint8_t)((i + k * 3) % 4);
        qs[i] = swgpu__query_plain(res[i], 12);
    }
    rec_t r;
    swgpu__strands_t st;
    strands_of(&st, &r, qs, NQ, SWGPU_STRAND_BOTH);
    CHECK_EQ_INT(st.neq, 2 * NQ);
    static int32_t rows[2 * NQ][NSUB];
    for (size_t k = 0; k < 2 * NQ; k++)
        for (size_t t = 0; t < NSUB; t++)
            rows[k][t] = row_score(k, t);
    size_t from = 0;
    for (size_t c = 0; c <= ncut; c++) {
        const size_t to = c < ncut ? cuts[c] : 2 * NQ, nb = to - from;
        const int32_t *brow[2 * NQ];
        for (size_t j = 0; j < nb; j++)
            brow[j] = rows[ord[from + j]];
        CHECK_EQ_INT(swgpu__strands_ahead(&st, nb, ord + from, brow), 0);
        for (size_t j = 0; j < nb; j++)
            CHECK_EQ_INT(swgpu__strands_sink(&st, ord[from + j], brow[j]), 0);
        from = to;
    }
    int once = 0, merged = 0;
    for (int i = 0; i < NQ; i++) {
        once += r.noffered[i] == 1 && r.nsunk[i] == 1;
        int ok = r.offered[i] != NULL;
        for (size_t t = 0; ok && t < NSUB; t++) {
            const int32_t p = rows[2 * i][t], m = rows[2 * i + 1][t];
            ok = r.offered[i][t] == (m > p ? m : p);
        }
        merged += ok;
        free(r.offered[i]);
    }
    CHECK(once == NQ && merged == NQ && r.bad == 0 && r.at == r.len,
          "%s: %d of %d queries offered and sunk once, %d merged rows right, %d bad", what, once,
          NQ, merged, r.bad);
    swgpu__strands_free(&st, NQ);
}

static void strands_cases(void)
{
    size_t ord[2 * NQ];
    for (size_t k = 0; k < 2 * NQ; k++)
        ord[k] = k;
    const size_t one[] = {2 * NQ - 1};
    run_batches("one batch", ord, NULL, 0);
    run_batches("pairs cut apart", ord, (const size_t[]){1, 4, 5, 9, 12}, 5);
    size_t every[2 * NQ - 1];
    for (size_t k = 0; k < 2 * NQ - 1; k++)
        every[k] = k + 1;
    run_batches("batches of one", ord, every, 2 * NQ - 1);
    run_batches("the last alone", ord, one, 1);
    /* minus strands first, plus strands in reverse, cut unevenly */
    for (size_t i = 0; i < NQ; i++) {
        ord[i] = 2 * i + 1;
        ord[NQ + i] = 2 * (NQ - 1 - i);
    }
    run_batches("minus first", ord, (const size_t[]){3, 10, 11}, 3);
    run_batches("minus first, one batch", ord, NULL, 0);
    /* shuffled */
    uint64_t rng = 17;
    for (size_t k = 2 * NQ - 1; k > 0; k--) {
        size_t j = (size_t)(tap_rand(&rng) % (k + 1)), x = ord[k];
        ord[k] = ord[j];
        ord[j] = x;
    }
    run_batches("shuffled", ord, (const size_t[]){2, 7, 8, 15}, 4);

    /* one strand: the batch passed on as it is; a failing companion's status */
    static uint8_t res[5] = {0, 1, 2, 3, 0};
    swgpu__query_t q[2] = {swgpu__query_plain(res, 5), swgpu__query_plain(res + 1, 4)};
    rec_t r;
    swgpu__strands_t st;
    strands_of(&st, &r, q, 2, SWGPU_STRAND_PLUS);
    static int32_t a[NSUB], b[NSUB];
    const int32_t *rows[2] = {a, b};
    const size_t idx[2] = {1, 0};
    CHECK_EQ_INT(swgpu__strands_ahead(&st, 2, idx, rows), 0);
    CHECK(r.passed == a && r.noffered[0] == 1 && r.noffered[1] == 1 && r.queue[0] == 1,
          "one strand: the batch not passed on as it is");
    r.fail = SWGPU_ERANGE;
    CHECK_EQ_INT(swgpu__strands_ahead(&st, 2, idx, rows), SWGPU_ERANGE);
    st.inner_ahead = NULL;
    CHECK_EQ_INT(swgpu__strands_ahead(&st, 2, idx, rows), 0);
    free(r.offered[0]);
    free(r.offered[1]);
    swgpu__strands_free(&st, 2);
}

/* ---------------------------------------- offers from scanning threads */

/* what the simulated search saw of an engine that offers each query from
 * its scanning threads (SWGPU__CAP_AHEAD_THREADS) */
typedef struct {
    atomic_int offered[NQ], sunk[NQ];
    pthread_t by[NQ];          /* the thread that offered query i */
    int32_t row[NQ][NSUB];     /* the row offered */
    atomic_long bad;
    long not_by, unoffered;    /* (sink calls, under the engine's lock) */
    int fail;                  /* the companion's status (0: none) */
} trec_t;

static int trec_ahead(void *user, size_t n, const size_t *idx, const int32_t *const *rows)
{
    trec_t *r = user;
    if (r->fail)
        return swgpu__fail(r->fail, "test companion: stop");
    if (n != 1 || idx[0] >= NQ) {
        atomic_fetch_add(&r->bad, 1);
        return SWGPU_OK;
    }
    if (atomic_fetch_add(&r->offered[idx[0]], 1) == 0) {
        memcpy(r->row[idx[0]], rows[0], sizeof r->row[0]);
        r->by[idx[0]] = pthread_self();
    }
    return SWGPU_OK;
}

static int trec_sink(void *user, size_t i, const int32_t *scores)
{
    trec_t *r = user;
    if (i >= NQ)
        return atomic_fetch_add(&r->bad, 1), SWGPU_OK;
    atomic_fetch_add(&r->sunk[i], 1);
    if (!atomic_load(&r->offered[i]))
        r->unoffered++;
    else if (!pthread_equal(r->by[i], pthread_self()))
        r->not_by++;
    else if (memcmp(r->row[i], scores, sizeof r->row[0]))
        atomic_fetch_add(&r->bad, 1);
    return SWGPU_OK;
}

/* the simulated engine: T threads take the engine queries in order ord,
 * each offers its query's row (ahead, n = 1) and then sinks it under a lock */
typedef struct {
    const size_t *ord;
    size_t nq;
    atomic_size_t next;
    pthread_mutex_t lock;
    swgpu_scan_sink_t sink;
    swgpu_scan_ahead_t ahead;
    void *user;
    atomic_int rc;
    int threads;
} teng_t;

static int32_t trows[2 * NQ][NSUB];

static void *teng_worker(void *arg)
{
    teng_t *e = arg;
    for (size_t j; atomic_load(&e->rc) == 0 && (j = atomic_fetch_add(&e->next, 1)) < e->nq;) {
        const size_t k = e->ord[j];
        const int32_t *row = trows[k];
        int rc = e->ahead ? e->ahead(e->user, 1, &k, &row) : SWGPU_OK;
        if (rc == SWGPU_OK) {
            pthread_mutex_lock(&e->lock);
            rc = e->sink(e->user, k, row);
            pthread_mutex_unlock(&e->lock);
        }
        if (rc)
            atomic_store(&e->rc, rc);
    }
    return NULL;
}

static int teng_scan_many(void *state, size_t nq, const swgpu__query_t *q, swgpu_scan_sink_t sink,
                          swgpu_scan_ahead_t ahead, void *user, swgpu_scan_stats_t *stats)
{
    (void)q, (void)stats;
    teng_t *e = state;
    pthread_t th[8];
    int started = 0;
    e->nq = nq;
    e->sink = sink;
    e->ahead = ahead;
    e->user = user;
    atomic_init(&e->next, 0);
    atomic_init(&e->rc, 0);
    for (int t = 1; t < e->threads; t++)
        started += pthread_create(&th[started], NULL, teng_worker, e) == 0;
    teng_worker(e);
    for (int t = 0; t < started; t++)
        pthread_join(th[t], NULL);
    return atomic_load(&e->rc);
}

/* the engine queries in order ord on `threads` threads through the strands'
 * scan: every query sunk once; offered at most once, by the thread that
 * then sinks it, before that call, its merged row; on one thread, every
 * query offered; a failing companion's status comes back */
static void run_threads(const char *what, const size_t *ord, int threads, int fail)
{
    static uint8_t res[NQ][12];
    swgpu__query_t qs[NQ];
    for (int i = 0; i < NQ; i++) {
        for (int k = 0; k < 12; k++)
            res[i][k] = (uint8_t)((i + 2 * k) % 4);
        qs[i] = swgpu__query_plain(res[i], 12);
    }
    for (size_t k = 0; k < 2 * NQ; k++)
        for (size_t t = 0; t < NSUB; t++)
            trows[k][t] = row_score(k, t);
    static trec_t r;
    memset(&r, 0, sizeof r);
    for (int i = 0; i < NQ; i++) {
        atomic_init(&r.offered[i], 0);
        atomic_init(&r.sunk[i], 0);
    }
    atomic_init(&r.bad, 0);
    r.fail = fail;
    swgpu_opts_t o;
    swgpu_opts_init(&o, SWGPU_DNA);
    o.strand = SWGPU_STRAND_BOTH;
    swgpu__strands_t st;
    CHECK_EQ_INT(swgpu__strands_init(&st, qs, NQ, SWGPU_DNA, &o, NSUB, trec_sink, &r, NULL), 0);
    st.inner_ahead = trec_ahead;
    teng_t e = {.ord = ord, .threads = threads};
    pthread_mutex_init(&e.lock, NULL);
    const swgpu_engine_ops_t ops = {.name = "threads", .scan_many = teng_scan_many,
                                    .caps = SWGPU__CAP_AHEAD_THREADS};
    const int rc = swgpu__strands_scan(&ops, &e, &st, qs, NSUB, NULL, "test");
    pthread_mutex_destroy(&e.lock);
    swgpu__strands_free(&st, NQ);
    if (fail) {
        CHECK(rc == fail, "%s: the companion's status %d came back as %d", what, fail, rc);
        return;
    }
    CHECK_EQ_INT(rc, 0);
    int once = 0, twice = 0, sunk = 0, merged = 0;
    for (int i = 0; i < NQ; i++) {
        const int n = atomic_load(&r.offered[i]);
        once += n == 1;
        twice += n > 1;
        sunk += atomic_load(&r.sunk[i]) == 1;
        int ok = n == 1;
        for (size_t t = 0; ok && t < NSUB; t++) {
            const int32_t p = trows[2 * i][t], m = trows[2 * i + 1][t];
            ok = r.row[i][t] == (m > p ? m : p);
        }
        merged += ok;
    }
    CHECK(sunk == NQ && twice == 0 && merged == once && atomic_load(&r.bad) == 0 &&
              r.not_by == 0 && r.unoffered == NQ - once && (threads > 1 || once == NQ),
          "%s, %d threads: %d sunk once, %d offered once (%d merged right), %d more often, %ld "
          "sunk on another thread, %ld without an offer, %ld bad", what, threads, sunk, once,
          merged, twice, r.not_by, r.unoffered, atomic_load(&r.bad));
}

static void thread_cases(void)
{
    size_t ord[2 * NQ];
    for (size_t k = 0; k < 2 * NQ; k++)
        ord[k] = k;
    for (int rep = 0; rep < 20; rep++) {
        run_threads("in order", ord, 1, 0);
        run_threads("in order", ord, 4, 0);
    }
    uint64_t rng = 23;
    for (int rep = 0; rep < 20; rep++) {
        for (size_t k = 2 * NQ - 1; k > 0; k--) {
            size_t j = (size_t)(tap_rand(&rng) % (k + 1)), x = ord[k];
            ord[k] = ord[j];
            ord[j] = x;
        }
        run_threads("shuffled", ord, 1, 0);
        run_threads("shuffled", ord, 3, 0);
    }
    run_threads("a failing companion", ord, 1, SWGPU_ERANGE);
    run_threads("a failing companion", ord, 4, SWGPU_ERANGE);
}

/* the search's fits of a batch on 4 threads against one at a time */
static void fit_cases(void)
{
    enum { NS = 3000, NF = 12 };
    const char *seqs[1] = {"ACDEFGHIKLMNPQRSTVWY"};
    const char *many[NS];
    for (int k = 0; k < NS; k++)
        many[k] = seqs[0];
    swgpu_db_t *db = tl_db_of(SWGPU_PROTEIN, many, NS, "fit");
    CHECK(db != NULL, "fit: no database");
    if (!db)
        return;
    uint64_t *tlen = malloc(NS * sizeof *tlen);
    int32_t *rows = malloc((size_t)NF * NS * sizeof *rows);
    static uint8_t qres[400];
    swgpu__query_t qs[NF];
    uint64_t rng = 5;
    for (int k = 0; k < NS; k++)
        tlen[k] = 50 + tap_rand(&rng) % 900;
    for (int i = 0; i < NF; i++) {
        qs[i] = swgpu__query_plain(qres, 100 + 25 * (size_t)i);
        const double lambda = 0.25 + 0.01 * i;
        for (int k = 0; k < NS; k++) { /* Gumbel scores around ln(K m n) / lambda */
            const double u = ((double)(tap_rand(&rng) % 1000000) + 0.5) / 1e6;
            const double loc = log(0.04 * (double)qs[i].len * (double)tlen[k]) / lambda;
            rows[(size_t)i * NS + k] = (int32_t)floor(loc - log(-log(u)) / lambda);
        }
    }
    swgpu_opts_t o;
    swgpu_opts_init(&o, SWGPU_PROTEIN);
    o.threads = 4;
    swgpu_search_result_t res;
    memset(&res, 0, sizeof res);
    res.n_queries = NF;
    swgpu__pipe_t c;
    const swgpu__pipe_t c0 = {.o = &o, .r = &res, .db = db, .qs = qs, .tlen = tlen};
    c = c0;
    size_t idx[NF];
    const int32_t *brow[NF];
    for (int j = 0; j < NF; j++) { /* offered in reverse */
        idx[j] = (size_t)(NF - 1 - j);
        brow[j] = rows + idx[j] * NS;
    }
    CHECK_EQ_INT(swgpu__search_ahead_init(&c), 1);
    CHECK_EQ_INT(swgpu__search_ahead(&c, NF, idx, brow), 0);
    int same = 0, fitted = 0;
    for (int i = 0; i < NF && c.pre; i++) {
        swgpu_karlin_t k;
        const int ok = swgpu_karlin_fit(rows + (size_t)i * NS, tlen, NS, qs[i].len, &k) == 0;
        fitted += ok;
        same += ok == c.pre_ok[i] && (!ok || (k.lambda == c.pre[i].lambda && k.K == c.pre[i].K &&
                                              k.H == c.pre[i].H));
    }
    CHECK(c.pre != NULL && fitted == NF && same == NF,
          "fit: %d of %d fitted one at a time, %d the same from the batch", fitted, NF, same);
    free(c.pre);
    free(c.pre_ok);
    /* published parameters: nothing fitted, nothing allocated */
    c = c0;
    c.have_fixed = 1;
    CHECK_EQ_INT(swgpu__search_ahead_init(&c), 0);
    CHECK_EQ_INT(swgpu__search_ahead(&c, NF, idx, brow), 0);
    CHECK(c.pre == NULL && c.pre_ok == NULL, "fit: fitted with published parameters");
    free(tlen);
    free(rows);
    swgpu_db_destroy(db);
}

int main(void)
{
    strands_cases();
    thread_cases();
    fit_cases();
    return tap_done();
}
