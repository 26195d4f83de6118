/*
 * test_long_split.c - swgpu_align_long() split across parts (opts.comm):
 * every part gets exactly the single-process alignment (score, begin,
 * end, CIGAR), with 2 to 5 parts joined by an in-process transport (one
 * thread per part, messages through a mailbox, allgather through a
 * barrier), for DNA and protein pairs, related and random, several
 * thread counts, memory budgets (the split layout) and full-matrix base
 * sizes (deep divide and conquer), score-only, without pruning; narrow
 * targets (fewer columns than parts).  Failures: a part whose transport fails
 * makes every part fail (that part with its own status, the others with
 * SWGPU_EPART), and nothing waits forever.  Some pairs again with sends
 * that return only once received (MPI's rendezvous for large messages): a
 * protocol that needs buffered sends deadlocks there, as it would under
 * mpirun, and the test fails instead of hanging.  With a CUDA device (backend
 * auto) every split runs on the CUDA engine, the parts sharing the device;
 * backend cuda without one, or on some parts only, is refused on every part.
 */
#include "inproc_comm.h"
#include "long/long.h"
#include "tap.h"
#include "testlib.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------- the split runs */

typedef struct {
    part_t part;
    const uint8_t *a, *b;
    size_t alen, blen;
    const swgpu_matrix_t *m;
    swgpu_long_opts_t o;
    swgpu_aln_t aln;
    swgpu_long_stats_t st;
    int rc;
    char err[256];
} job_t;

static void *run_part(void *arg)
{
    job_t *j = arg;
    j->rc = swgpu_align_long(j->a, j->alen, j->b, j->blen, j->m, &j->o, &j->aln, &j->st);
    snprintf(j->err, sizeof j->err, "%s", swgpu_last_error());
    return NULL;
}

/* sends that wait until they are received (inproc_comm.h); run_split's
 * fail_part makes that part's sends fail instead of its receives */
static int rendezvous, send_fails;

/* run with P parts (backend[p], when not NULL, for part p's); the parts'
 * results in jobs[0..P) (aln freed by the caller) */
static void run_split_b(int P, int fail_part, const uint8_t *a, size_t alen, const uint8_t *b,
                        size_t blen, const swgpu_matrix_t *m, const swgpu_long_opts_t *o,
                        const swgpu_backend_t *backend, job_t *jobs, hub_t *hub)
{
    pthread_t tid[MAXP];
    hub_init(hub, P);
    hub->fail_recv_part = send_fails ? -1 : fail_part;
    hub->fail_send_part = send_fails ? fail_part : -1;
    hub->rendezvous = rendezvous;
    for (int p = 0; p < P; p++) {
        job_t *j = &jobs[p];
        memset(j, 0, sizeof *j);
        part_init(&j->part, hub, p);
        j->a = a;
        j->b = b;
        j->alen = alen;
        j->blen = blen;
        j->m = m;
        j->o = *o;
        j->o.comm = &j->part.comm;
        if (backend)
            j->o.backend = backend[p];
        pthread_create(&tid[p], NULL, run_part, j);
    }
    for (int p = 0; p < P; p++)
        pthread_join(tid[p], NULL);
    hub_free(hub);
}

static void run_split(int P, int fail_part, const uint8_t *a, size_t alen, const uint8_t *b,
                      size_t blen, const swgpu_matrix_t *m, const swgpu_long_opts_t *o,
                      job_t *jobs, hub_t *hub)
{
    run_split_b(P, fail_part, a, alen, b, blen, m, o, NULL, jobs, hub);
}

static long checks_run;

/* every part of every split gives the single-process alignment */
static void check(const char *what, const uint8_t *a, size_t alen, const uint8_t *b, size_t blen,
                  const swgpu_matrix_t *m, const swgpu_long_opts_t *o)
{
    swgpu_aln_t one = {0};
    swgpu_long_stats_t st1;
    int rc = swgpu_align_long(a, alen, b, blen, m, o, &one, &st1);
    CHECK(rc == 0, "%s: single process: %s", what, swgpu_last_error());
    for (int P = 2; P <= 5; P++) {
        job_t jobs[MAXP];
        hub_t hub;
        long bad = 0;
        run_split(P, -1, a, alen, b, blen, m, o, jobs, &hub);
        for (int p = 0; p < P; p++) {
            if (jobs[p].rc)
                fprintf(stderr, "%s, %d parts, part %d: %s\n", what, P, p, jobs[p].err);
            bad += jobs[p].rc != 0 || !tl_same_aln(&jobs[p].aln, &one) ||
                   jobs[p].st.score_cells != st1.score_cells;
            swgpu_aln_free(&jobs[p].aln);
        }
        CHECK(bad == 0 && !hub.bad_lens && !hub.send_timeouts,
              "%s, %d parts: %ld parts differ (score %d), %d sends never received", what, P, bad,
              (int)one.score, hub.send_timeouts);
        checks_run++;
    }
    swgpu_aln_free(&one);
}

/* check() with the traceback's divide and conquer taken deep: full-matrix
 * pieces of 600 x 600 cells at most, budgets of 3 MiB */
static void check_deep(const char *what, const uint8_t *a, size_t alen, const uint8_t *b,
                       size_t blen, const swgpu_matrix_t *m, const swgpu_long_opts_t *o)
{
    swgpu_long_opts_t d = *o;
    d.max_host_memory = d.max_device_memory = 3u << 20;
    swgpu__long_set_base(600 * 600);
    check(what, a, alen, b, blen, m, &d);
    swgpu__long_set_base(0);
}

static void test_pairs(void)
{
    swgpu_matrix_t *dna = NULL, *b62 = NULL;
    uint64_t s = 2024;
    enum { N = 12000 };
    uint8_t *a = malloc(N), *b = malloc(2 * N), *r = malloc(N);
    swgpu_matrix_dna(2, -3, &dna);
    swgpu_matrix_builtin("BLOSUM62", &b62);

    /* a related DNA pair with a random prefix, like two genome pieces */
    tl_rand_codes(&s, a, N, 4);
    tl_rand_codes(&s, b, 700, 4);
    size_t bl = 700 + tl_mutate_codes(&s, a + 1000, 9000, b + 700, 2 * N - 700, 4, 30, 3, 3);
    swgpu_long_opts_t o;
    swgpu_long_opts_init(&o, SWGPU_DNA);
    o.threads = 1;
    check("dna related", a, N, b, bl, dna, &o);
    o.threads = 2;
    check("dna related, 2 threads a part", a, N, b, bl, dna, &o);
    check_deep("dna related, deep traceback", a, N, b, bl, dna, &o);
    o.score_only = 1;
    check("dna related, score only", a, N, b, bl, dna, &o);
    o.score_only = 0;
    o.prune = 0;
    check("dna related, no pruning", a, N, b, bl, dna, &o);
    o.prune = 1;
    /* 7 slices dealt round the parts (the CUDA engine's parts take several
     * each; the CPU engine's one) */
    o.gpu_parts = 7;
    check("dna related, 7 slices", a, N, b, bl, dna, &o);
    o.gpu_parts = 0;
    /* the same with rendezvous sends: one and two threads a part, several
     * slices a part on the CUDA engine, the traceback's passes */
    rendezvous = 1;
    o.threads = 1;
    check("dna related, rendezvous sends", a, N, b, bl, dna, &o);
    o.threads = 2;
    check("dna related, 2 threads a part, rendezvous sends", a, N, b, bl, dna, &o);
    o.gpu_parts = 7;
    check("dna related, 7 slices, rendezvous sends", a, N, b, bl, dna, &o);
    o.gpu_parts = 0;
    check_deep("dna related, deep traceback, rendezvous sends", a, N, b, bl, dna, &o);
    rendezvous = 0;
    /* many threads (more than the strips of a pass) and a small budget: the
     * score pass prunes, in one part and split */
    o.threads = 64;
    o.max_host_memory = o.max_device_memory = (uint64_t)12 << 20;
    {
        swgpu_aln_t x = {0};
        swgpu_long_stats_t st;
        if (swgpu_align_long(a, N, b, bl, dna, &o, &x, &st) == 0) {
            CHECK(st.score_pruned > 0, "score pass pruned %llu", (unsigned long long)st.score_pruned);
            check("dna related, 64 threads, 12 MiB", a, N, b, bl, dna, &o);
        } else
            CHECK(0, "12 MiB budget: %s", swgpu_last_error());
        swgpu_aln_free(&x);
    }
    o.max_host_memory = o.max_device_memory = 0;
    o.threads = 2;
    /* scores beyond 32 bits (every value x 10,000: the related pair's
     * values pass 2^29): parts start at multiples of 256 columns, boundary
     * columns carry their base */
    {
        swgpu_matrix_t *big = NULL;
        swgpu_aln_t x = {0};
        swgpu_long_opts_t ow = o;
        swgpu_matrix_dna(20000, -30000, &big);
        ow.gap_open = 50000;
        ow.gap_extend = 20000;
        ow.max_host_memory = ow.max_device_memory = 0;
        {
            /* (12,000 + ~9,700 residues) x 50,000 passes 2^29: wide, exactly 10,000x */
            swgpu_aln_t u = {0};
            CHECK(big && swgpu_align_long(a, N, b, bl, big, &ow, &x, NULL) == 0 &&
                      swgpu_align_long(a, N, b, bl, dna, &o, &u, NULL) == 0 && x.score == 10000 * u.score &&
                      (int64_t)(N + bl) * 50000 >= ((int64_t)1 << 29),
                  "wide scores: %lld, unscaled %lld: %s", (long long)x.score, (long long)u.score,
                  swgpu_last_error());
            swgpu_aln_free(&u);
        }
        swgpu_aln_free(&x);
        check("dna related, wide scores", a, N, b, bl, big, &ow);
        ow.prune = 0;
        check("dna related, wide scores, no pruning", a, N, b, bl, big, &ow);
        ow.prune = 1;
        check_deep("dna related, wide scores, deep traceback", a, N, b, bl, big, &ow);
        ow.gpu_parts = 11;
        check_deep("dna related, wide scores, deep traceback, 11 slices", a, N, b, bl, big, &ow);
        swgpu_matrix_destroy(big);
    }
    /* unrelated: a short best alignment somewhere */
    tl_rand_codes(&s, r, 5000, 4);
    check("dna random", a, 6000, r, 5000, dna, &o);
    /* a target narrower than the parts' slices */
    check("dna narrow target", a, 3000, a + 1500, 300, dna, &o);
    check("dna one column", a, 2000, a + 10, 1, dna, &o);

    /* protein */
    swgpu_long_opts_init(&o, SWGPU_PROTEIN);
    o.threads = 1;
    tl_rand_codes(&s, a, 4000, 20);
    bl = tl_mutate_codes(&s, a, 4000, b, 2 * N, 20, 150, 10, 10);
    check("protein related", a, 4000, b, bl, b62, &o);
    o.gap_open = 0; /* open 0: the lazy-F loop's corner case */
    o.gap_extend = 2;
    check("protein related, open 0", a, 4000, b, bl, b62, &o);

    swgpu_matrix_destroy(dna);
    swgpu_matrix_destroy(b62);
    free(a);
    free(b);
    free(r);
}

/* a part whose boundary columns cannot be received: every part fails, the
 * failing one with its own status, the others with SWGPU_EPART */
static void test_failure(void)
{
    swgpu_matrix_t *dna = NULL;
    uint64_t s = 77;
    uint8_t *a = malloc(6000), *b = malloc(6000);
    swgpu_matrix_dna(2, -3, &dna);
    tl_rand_codes(&s, a, 6000, 4);
    size_t bl = tl_mutate_codes(&s, a, 6000, b, 6000, 4, 20, 2, 2);
    swgpu_long_opts_t o;
    swgpu_long_opts_init(&o, SWGPU_DNA);
    o.threads = 2;
    for (int P = 2; P <= 4; P++)
        for (int f = 1; f < P; f++) {
            job_t jobs[MAXP];
            hub_t hub;
            long bad = 0;
            run_split(P, f, a, 6000, b, bl, dna, &o, jobs, &hub);
            for (int p = 0; p < P; p++) {
                bad += p == f ? jobs[p].rc != SWGPU_EIO : jobs[p].rc != SWGPU_EPART;
                bad += jobs[p].aln.n_cigar != 0 || jobs[p].aln.score != 0;
                swgpu_aln_free(&jobs[p].aln);
            }
            CHECK(bad == 0, "%d parts, part %d's receives fail: %ld wrong (part 0: %d %s)", P, f,
                  bad, jobs[0].rc, jobs[0].err);
        }
    /* a part whose sends fail, and with them the receives of the part on
     * its right (swgpu_comm_t): both fail with their own status, the
     * others with SWGPU_EPART, none waits forever */
    send_fails = 1;
    for (int P = 2; P <= 4; P++)
        for (int f = 0; f < P - 1; f++) {
            job_t jobs[MAXP];
            hub_t hub;
            long bad = 0;
            run_split(P, f, a, 6000, b, bl, dna, &o, jobs, &hub);
            for (int p = 0; p < P; p++) {
                bad += p == f || p == f + 1 ? jobs[p].rc != SWGPU_EIO : jobs[p].rc != SWGPU_EPART;
                bad += jobs[p].aln.n_cigar != 0 || jobs[p].aln.score != 0;
                swgpu_aln_free(&jobs[p].aln);
            }
            CHECK(bad == 0, "%d parts, part %d's sends fail: %ld wrong (part 0: %d %s)", P, f,
                  bad, jobs[0].rc, jobs[0].err);
        }
    send_fails = 0;
    /* backend cuda on every part: the CUDA engine on each, the one
     * process's alignment; without a device every part fails with
     * SWGPU_ENODEV */
    {
        job_t jobs[MAXP];
        hub_t hub;
        swgpu_aln_t one = {0};
        o.backend = SWGPU_BACKEND_CUDA;
        const int r1 = swgpu_align_long(a, 6000, b, bl, dna, &o, &one, NULL);
        run_split(3, -1, a, 6000, b, bl, dna, &o, jobs, &hub);
        if (r1 == SWGPU_ENODEV) {
            CHECK(jobs[0].rc == SWGPU_ENODEV && jobs[1].rc == SWGPU_ENODEV && jobs[2].rc == SWGPU_ENODEV,
                  "cuda split without a device: %d %d %d", jobs[0].rc, jobs[1].rc, jobs[2].rc);
        } else {
            long bad = r1 != 0;
            for (int p = 0; p < 3; p++)
                bad += jobs[p].rc != 0 || !tl_same_aln(&jobs[p].aln, &one) || strcmp(jobs[p].st.backend, "cuda");
            CHECK(bad == 0, "cuda split on 3 parts: %ld differ (part 0: %d %s)", bad, jobs[0].rc, jobs[0].err);
        }
        for (int p = 0; p < 3; p++)
            swgpu_aln_free(&jobs[p].aln);
        swgpu_aln_free(&one);
        /* cuda on one part, the CPU on the other: refused on both (the
         * engine is every part's or none's), the part without a device
         * that asked for one with SWGPU_ENODEV */
        const swgpu_backend_t mixed[2] = {SWGPU_BACKEND_CUDA, SWGPU_BACKEND_CPU};
        run_split_b(2, -1, a, 6000, b, bl, dna, &o, mixed, jobs, &hub);
        CHECK(jobs[0].rc == (r1 == SWGPU_ENODEV ? SWGPU_ENODEV : SWGPU_EPART) && jobs[1].rc == SWGPU_EPART,
              "cuda and cpu parts: %d %d (%s)", jobs[0].rc, jobs[1].rc, jobs[0].err);
        for (int p = 0; p < 2; p++)
            swgpu_aln_free(&jobs[p].aln);
    }
    swgpu_matrix_destroy(dna);
    free(a);
    free(b);
}

int main(void)
{
    test_pairs();
    test_failure();
    CHECK(checks_run >= 64, "%ld split runs", checks_run);
    return tap_done();
}
