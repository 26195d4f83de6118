/*
 * test_concurrent.c - the library under concurrent use.  Several threads at
 * once run searches (backends ref and cpu, and cuda when a device is
 * present), pairwise alignments (swgpu_align) and long alignments
 * (swgpu_align_long on the CPU), all on one shared query set, matrix and
 * database (built in memory, and a makedb file mapped from disk), and
 * write that database to one path from every thread at once; every
 * result must equal the single-threaded run's exactly: each hit's target,
 * score, bits, E-value, coordinates, counts and CIGAR.  Each thread's error
 * message (swgpu_last_error) stays its own.  make check-tsan runs this
 * under ThreadSanitizer.
 */
#include "swgpu.h"
#include "long/long.h"
#include "tap.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define N_WORKERS 4
#define ROUNDS 2

static const char *datadir = "tests/data", *exdir = "examples";
static char tmpdir[] = "/tmp/swgpu_test_concurrent.XXXXXX";

/* --------------------------------------------------------------- shared */

static swgpu_seqset_t *queries;   /* examples/queries.fasta + 3 database sequences */
static swgpu_db_t *db_mem;        /* examples/db.fasta, built in memory */
static swgpu_db_t *db_map;        /* the same, written by swgpu_db_write and mapped */
static swgpu_db_t *db_small;      /* its first 20 sequences (for the slow reference) */
static swgpu_matrix_t *blosum, *dna;
static swgpu_seqset_t *long_a, *long_b, *long_pa, *long_pb; /* the long-alignment fixtures */
static int have_cuda;

/* ------------------------------------------------------------------ jobs */

enum { J_CPU, J_CPU_MAP, J_REF, J_CUDA, J_ALIGN, J_LONG_DNA, J_LONG_PROT, J_DB_WRITE, N_JOBS };
static const char *const job_name[N_JOBS] = {"search cpu",       "search cpu (mapped db)",
                                             "search ref",       "search cuda",
                                             "swgpu_align",      "align_long dna",
                                             "align_long protein", "db_write (one path)"};

/* What one job computed. */
typedef struct {
    int rc;
    swgpu_search_result_t *res; /* searches */
    size_t n_aln;               /* alignments */
    swgpu_aln_t aln[16];
} outcome_t;

static void outcome_free(outcome_t *o)
{
    swgpu_search_result_destroy(o->res);
    for (size_t i = 0; i < o->n_aln; i++)
        swgpu_aln_free(&o->aln[i]);
    memset(o, 0, sizeof *o);
}

static int search(const swgpu_db_t *db, swgpu_backend_t b, int threads, outcome_t *out)
{
    swgpu_opts_t o;
    swgpu_opts_init(&o, SWGPU_PROTEIN);
    o.backend = b;
    o.threads = threads;
    o.top_n = 6;
    return swgpu_search(queries, db, blosum, &o, &out->res);
}

/* swgpu_align of every query with 4 database sequences (the pairs the
 * searches align too, among others) */
static int pairwise(outcome_t *out)
{
    for (size_t qi = 0; qi < swgpu_seqset_size(queries); qi++)
        for (size_t k = 0; k < 4 && out->n_aln < 16; k++) {
            swgpu_seq_t q, t;
            swgpu_seqset_get(queries, qi, &q);
            swgpu_db_get(db_mem, 7 + 53 * k + qi, &t);
            int rc = swgpu_align(q.res, q.len, t.res, t.len, blosum, 11, 1, 0, &out->aln[out->n_aln++]);
            if (rc < 0)
                return rc;
        }
    return SWGPU_OK;
}

/* swgpu_align_long on the CPU of a[ab, ab + n) with b[bb, bb + n) (the
 * whole sequences when shorter): the default budget, and a small one (more
 * saved rows in the reverse pass; main() makes the traceback's pieces small) */
static int align_long(const swgpu_seqset_t *a, size_t ab, const swgpu_seqset_t *b, size_t bb,
                      size_t n, const swgpu_matrix_t *m, int threads, outcome_t *out)
{
    swgpu_seq_t x, y;
    swgpu_seqset_get(a, 0, &x);
    swgpu_seqset_get(b, 0, &y);
    size_t xn = x.len - ab < n ? x.len - ab : n, yn = y.len - bb < n ? y.len - bb : n;
    for (int k = 0; k < 2; k++) {
        swgpu_long_opts_t o;
        swgpu_long_opts_init(&o, swgpu_matrix_alphabet(m));
        o.backend = SWGPU_BACKEND_CPU;
        o.threads = threads;
        if (k == 1)
            o.max_host_memory = 2u << 20;
        int rc = swgpu_align_long(x.res + ab, xn, y.res + bb, yn, m, &o, &out->aln[out->n_aln++], NULL);
        if (rc < 0)
            return rc;
    }
    return SWGPU_OK;
}

/* swgpu_db_write of the small database, every thread to the same path, then
 * the file mapped back: complete and equal (the last rename wins) */
static int db_write_read(void)
{
    char path[512];
    swgpu_db_t *back = NULL;
    snprintf(path, sizeof path, "%s/shared.swdb", tmpdir);
    int rc = swgpu_db_write(db_small, path);
    if (rc < 0 || (rc = swgpu_db_open(path, SWGPU_AUTO, &back, NULL)) < 0)
        return rc;
    if (swgpu_db_size(back) != swgpu_db_size(db_small) ||
        swgpu_db_residues(back) != swgpu_db_residues(db_small))
        rc = SWGPU_EDB;
    for (size_t i = 0; i < swgpu_db_size(back) && rc == 0; i++) {
        swgpu_seq_t x, y;
        swgpu_db_get(back, i, &x);
        swgpu_db_get(db_small, i, &y);
        if (strcmp(x.id, y.id) || x.len != y.len || memcmp(x.res, y.res, x.len))
            rc = SWGPU_EDB;
    }
    swgpu_db_destroy(back);
    return rc;
}

static int run_job(int job, int threads, outcome_t *out)
{
    memset(out, 0, sizeof *out);
    switch (job) {
    case J_CPU: return out->rc = search(db_mem, SWGPU_BACKEND_CPU, threads, out);
    case J_CPU_MAP: return out->rc = search(db_map, SWGPU_BACKEND_CPU, threads, out);
    case J_REF: return out->rc = search(db_small, SWGPU_BACKEND_REF, threads, out);
    case J_CUDA: return out->rc = search(db_mem, SWGPU_BACKEND_CUDA, threads, out);
    case J_ALIGN: return out->rc = pairwise(out);
    case J_LONG_DNA: return out->rc = align_long(long_a, 400, long_b, 160, 900, dna, threads, out);
    case J_LONG_PROT: return out->rc = align_long(long_pa, 0, long_pb, 0, 1000, blosum, threads, out);
    case J_DB_WRITE: return out->rc = db_write_read();
    }
    return out->rc = SWGPU_EINVAL;
}

/* ------------------------------------------------------------ comparing */

/* 0 when the alignments are identical; else a description in why */
static int aln_differs(const swgpu_aln_t *a, const swgpu_aln_t *b, char *why, size_t n)
{
    if (a->score != b->score || a->qbeg != b->qbeg || a->qend != b->qend || a->tbeg != b->tbeg ||
        a->tend != b->tend || a->length != b->length || a->n_ident != b->n_ident ||
        a->n_mismatch != b->n_mismatch || a->n_gapopen != b->n_gapopen || a->n_gaps != b->n_gaps ||
        a->n_cigar != b->n_cigar ||
        (a->n_cigar && memcmp(a->cigar, b->cigar, a->n_cigar * sizeof *a->cigar))) {
        snprintf(why, n, "score %d [%lld,%lld)x[%lld,%lld) %zu ops vs score %d [%lld,%lld)x[%lld,%lld) %zu ops",
                 (int)a->score, (long long)a->qbeg, (long long)a->qend, (long long)a->tbeg,
                 (long long)a->tend, a->n_cigar, (int)b->score, (long long)b->qbeg, (long long)b->qend,
                 (long long)b->tbeg, (long long)b->tend, b->n_cigar);
        return 1;
    }
    return 0;
}

/* number of differences between two outcomes (searches: hit by hit) */
static long differences(const outcome_t *x, const outcome_t *y, char *why, size_t n)
{
    long bad = 0;
    why[0] = 0;
    if (x->rc != y->rc) {
        snprintf(why, n, "status %d vs %d", x->rc, y->rc);
        return 1;
    }
    if (x->n_aln != y->n_aln) {
        snprintf(why, n, "%zu alignments vs %zu", x->n_aln, y->n_aln);
        return 1;
    }
    for (size_t i = 0; i < x->n_aln; i++)
        bad += aln_differs(&x->aln[i], &y->aln[i], why, n);
    if (!x->res != !y->res) {
        snprintf(why, n, "a result vs none");
        return bad + 1;
    }
    if (!x->res)
        return bad;
    if (x->res->n_queries != y->res->n_queries) {
        snprintf(why, n, "%zu queries vs %zu", x->res->n_queries, y->res->n_queries);
        return bad + 1;
    }
    for (size_t q = 0; q < x->res->n_queries; q++) {
        const swgpu_query_result_t *a = &x->res->q[q], *b = &y->res->q[q];
        if (a->query != b->query || a->n_hits != b->n_hits || a->karlin.lambda != b->karlin.lambda ||
            a->karlin.K != b->karlin.K) {
            snprintf(why, n, "query %zu: %zu hits vs %zu (or other statistics)", q, a->n_hits, b->n_hits);
            bad++;
            continue;
        }
        for (size_t h = 0; h < a->n_hits; h++) {
            const swgpu_hit_t *u = &a->hits[h], *v = &b->hits[h];
            char w[256];
            if (u->target != v->target || u->score != v->score || u->bits != v->bits ||
                u->evalue != v->evalue) {
                snprintf(why, n, "query %zu hit %zu: target %zu score %d bits %.17g E %.17g vs "
                         "target %zu score %d bits %.17g E %.17g", q, h, u->target, u->score,
                         u->bits, u->evalue, v->target, v->score, v->bits, v->evalue);
                bad++;
            } else if (aln_differs(&u->aln, &v->aln, w, sizeof w)) {
                snprintf(why, n, "query %zu hit %zu: %s", q, h, w);
                bad++;
            }
        }
    }
    return bad;
}

/* --------------------------------------------------------------- workers */

static outcome_t baseline[N_JOBS];
static int job_on[N_JOBS];

typedef struct {
    int id;
    long runs, bad, bad_err;
    char why[512];
    int bad_job;
} worker_t;

static void *worker(void *arg)
{
    worker_t *w = arg;
    for (int r = 0; r < ROUNDS; r++)
        for (int k = 0; k < N_JOBS; k++) {
            int job = (k + w->id + r) % N_JOBS; /* each thread in its own order */
            if (!job_on[job])
                continue;
            outcome_t o;
            char why[512];
            run_job(job, 1 + (w->id + r) % 2, &o);
            long d = differences(&o, &baseline[job], why, sizeof why);
            if (d && !w->bad) {
                w->bad_job = job;
                snprintf(w->why, sizeof w->why, "%s", why);
            }
            w->bad += d;
            w->runs++;
            outcome_free(&o);

            /* a failure of this thread's own: its message, whatever the
             * other threads failed meanwhile */
            swgpu_opts_t bad;
            swgpu_opts_init(&bad, SWGPU_PROTEIN);
            bad.top_n = -1000 - w->id;
            char want[64];
            snprintf(want, sizeof want, "top hits %d:", bad.top_n);
            if (swgpu_opts_check(&bad, NULL) != SWGPU_EINVAL)
                w->bad_err++;
            usleep(100);
            if (!strstr(swgpu_last_error(), want))
                w->bad_err++;
        }
    return NULL;
}

/* ----------------------------------------------------------------- setup */

static swgpu_seqset_t *read_set(const char *dir, const char *name, swgpu_alphabet_t a)
{
    char path[512];
    swgpu_seqset_t *s = NULL;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int rc = swgpu_seqset_read(path, a, &s, NULL);
    CHECK(rc == 0, "read %s: %s", path, swgpu_last_error());
    return s;
}

/* a set with the first n sequences of db (letters decoded and re-added) */
static swgpu_seqset_t *first_of(const swgpu_db_t *db, size_t n, swgpu_seqset_t *into)
{
    swgpu_seqset_t *s = into;
    if (!s && swgpu_seqset_create(SWGPU_PROTEIN, &s) < 0)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        swgpu_seq_t q;
        swgpu_db_get(db, i, &q);
        char *letters = malloc(q.len + 1);
        for (size_t j = 0; j < q.len; j++)
            letters[j] = swgpu_decode(SWGPU_PROTEIN, q.res[j]);
        swgpu_seqset_add(s, q.id, q.desc, letters, q.len);
        free(letters);
    }
    return s;
}

static int setup(void)
{
    char path[512];
    swgpu_seqset_t *s;
    snprintf(path, sizeof path, "%s/db.fasta", exdir);
    if (swgpu_db_open(path, SWGPU_PROTEIN, &db_mem, NULL) < 0 ||
        swgpu_matrix_builtin("BLOSUM62", &blosum) < 0 || swgpu_matrix_dna(2, -3, &dna) < 0) {
        CHECK(0, "set-up: %s", swgpu_last_error());
        return -1;
    }
    snprintf(path, sizeof path, "%s/db.swdb", tmpdir);
    if (swgpu_db_write(db_mem, path) < 0 || swgpu_db_open(path, SWGPU_AUTO, &db_map, NULL) < 0) {
        CHECK(0, "makedb file: %s", swgpu_last_error());
        return -1;
    }
    unlink(path); /* mapped: the sequences stay readable */
    s = first_of(db_mem, 20, NULL);
    if (!s || swgpu_db_from_seqset(s, &db_small) < 0) {
        CHECK(0, "small database: %s", swgpu_last_error());
        swgpu_seqset_destroy(s);
        return -1;
    }
    swgpu_seqset_destroy(s);
    queries = read_set(exdir, "queries.fasta", SWGPU_PROTEIN);
    long_a = read_set(datadir, "long_a.fa", SWGPU_DNA);
    long_b = read_set(datadir, "long_b.fa", SWGPU_DNA);
    long_pa = read_set(datadir, "long_pa.fa", SWGPU_PROTEIN);
    long_pb = read_set(datadir, "long_pb.fa", SWGPU_PROTEIN);
    if (!queries || !long_a || !long_b || !long_pa || !long_pb)
        return -1;
    /* three database sequences join the queries: each finds itself first */
    swgpu_seqset_t *extra = NULL;
    swgpu_seqset_create(SWGPU_PROTEIN, &extra);
    first_of(db_mem, 3, extra);
    for (size_t i = 0; i < 3; i++) {
        swgpu_seq_t q;
        swgpu_seqset_get(extra, i, &q);
        char *letters = malloc(q.len + 1);
        for (size_t j = 0; j < q.len; j++)
            letters[j] = swgpu_decode(SWGPU_PROTEIN, q.res[j]);
        swgpu_seqset_add(queries, q.id, q.desc, letters, q.len);
        free(letters);
    }
    swgpu_seqset_destroy(extra);
    return 0;
}

int main(void)
{
    const char *e = getenv("SWGPU_TESTDATA");
    if (e)
        datadir = e;
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    swgpu__long_set_base(1 << 12); /* small traceback pieces; set before any thread runs */
    if (setup() < 0) {
        rmdir(tmpdir);
        return tap_done();
    }

    /* the single-threaded run, one thread inside the library too */
    for (int j = 0; j < N_JOBS; j++) {
        run_job(j, 1, &baseline[j]);
        if (j == J_CUDA && baseline[j].rc == SWGPU_ENODEV) {
            SKIP(1, "search cuda under concurrent use: no CUDA device");
            continue;
        }
        CHECK(baseline[j].rc == 0, "%s: %s", job_name[j], swgpu_last_error());
        job_on[j] = baseline[j].rc == 0;
    }
    have_cuda = job_on[J_CUDA];

    /* the baseline itself: searches find hits with alignments, the engines
     * agree, the queries taken from the database find themselves */
    if (job_on[J_CPU]) {
        const swgpu_search_result_t *r = baseline[J_CPU].res;
        size_t nq = r->n_queries, with_hits = 0;
        for (size_t q = 0; q < nq; q++)
            with_hits += r->q[q].n_hits > 0 && r->q[q].hits[0].aln.n_cigar > 0;
        CHECK_EQ_INT(nq, 6);
        CHECK_EQ_INT(with_hits, nq);
        for (size_t q = 3; q < nq; q++)
            CHECK(r->q[q].hits[0].target == q - 3 && r->q[q].hits[0].evalue < 1e-30,
                  "query %zu (a database sequence) finds itself first: target %zu E %g", q,
                  r->q[q].hits[0].target, r->q[q].hits[0].evalue);
    }
    char why[512];
    if (job_on[J_CPU] && job_on[J_CPU_MAP])
        CHECK(differences(&baseline[J_CPU], &baseline[J_CPU_MAP], why, sizeof why) == 0,
              "in-memory and mapped database differ: %s", why);
    if (have_cuda)
        CHECK(differences(&baseline[J_CPU], &baseline[J_CUDA], why, sizeof why) == 0,
              "cpu and cuda differ: %s", why);
    if (job_on[J_REF]) {
        outcome_t cpu_small;
        memset(&cpu_small, 0, sizeof cpu_small);
        cpu_small.rc = search(db_small, SWGPU_BACKEND_CPU, 1, &cpu_small);
        CHECK(differences(&cpu_small, &baseline[J_REF], why, sizeof why) == 0,
              "cpu and ref differ on the small database: %s", why);
        outcome_free(&cpu_small);
    }
    if (job_on[J_LONG_DNA])
        CHECK(baseline[J_LONG_DNA].aln[0].score == baseline[J_LONG_DNA].aln[1].score &&
                  baseline[J_LONG_DNA].aln[0].score > 0,
              "long dna: score %d with the default budget, %d with 2 MiB",
              (int)baseline[J_LONG_DNA].aln[0].score, (int)baseline[J_LONG_DNA].aln[1].score);

    /* then N_WORKERS threads at once, each running every job ROUNDS times */
    pthread_t th[N_WORKERS];
    worker_t w[N_WORKERS];
    int started[N_WORKERS];
    for (int i = 0; i < N_WORKERS; i++) {
        memset(&w[i], 0, sizeof w[i]);
        w[i].id = i;
        started[i] = pthread_create(&th[i], NULL, worker, &w[i]) == 0;
        CHECK(started[i], "thread %d not started", i);
    }
    long runs = 0;
    for (int i = 0; i < N_WORKERS; i++) {
        if (!started[i])
            continue;
        pthread_join(th[i], NULL);
        CHECK(w[i].bad == 0, "thread %d: %ld differences from the single-threaded run; first in %s: %s",
              i, w[i].bad, job_name[w[i].bad_job], w[i].why);
        CHECK(w[i].bad_err == 0, "thread %d: %ld error messages not its own", i, w[i].bad_err);
        runs += w[i].runs;
    }
    int on = 0;
    for (int j = 0; j < N_JOBS; j++)
        on += job_on[j];
    CHECK_EQ_INT(runs, (long)N_WORKERS * ROUNDS * on);

    for (int j = 0; j < N_JOBS; j++)
        outcome_free(&baseline[j]);
    swgpu_seqset_destroy(queries);
    swgpu_seqset_destroy(long_a);
    swgpu_seqset_destroy(long_b);
    swgpu_seqset_destroy(long_pa);
    swgpu_seqset_destroy(long_pb);
    swgpu_db_destroy(db_mem);
    swgpu_db_destroy(db_map);
    swgpu_db_destroy(db_small);
    swgpu_matrix_destroy(blosum);
    swgpu_matrix_destroy(dna);
    {
        char path[600];
        int left = 0;
        snprintf(path, sizeof path, "%s/shared.swdb", tmpdir);
        unlink(path);
        left = rmdir(tmpdir) != 0; /* fails if a temporary file was left behind */
        CHECK(!left, "%s: not empty at the end (a temporary file left?)", tmpdir);
    }
    return tap_done();
}
