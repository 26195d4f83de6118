/*
 * long_parts.c - what splitting a long alignment across parts costs: the
 * pair aligned by one process, then by P parts as threads of this process
 * joined by an in-process transport (tests/inproc_comm.h), as swgpu-mpi's
 * ranks are joined by MPI; on a GPU the parts share it (each gets a P-th of
 * its multiprocessors), so the split's time against one process's is the
 * price of its pipeline (the start and end of each slice, the boundary
 * columns' relay), not a speed-up.  Outputs compared with one process's.
 *
 *   build/bench/long_parts [-p PARTS] [-s SLICES] [-b cpu|cuda|auto] [-t THREADS]
 *                          [-g MATCH/MISMATCH/OPEN/EXT] [-o] A.fasta B.fasta
 *
 * PARTS: a comma list of part counts (default 2); SLICES: a comma list of
 * slice counts in all, dealt round the parts (0: automatic; the CUDA engine
 * only; default 0); -o: score only.  One table row per run.
 */
#include "../tests/inproc_comm.h"
#include "../tests/testlib.h"
#include "base/base.h"

#include <getopt.h>
#include <stdio.h>

typedef struct {
    part_t part;
    const swgpu_seq_t *a, *b;
    const swgpu_matrix_t *m;
    swgpu_long_opts_t o;
    swgpu_aln_t aln;
    swgpu_long_stats_t st;
    int rc;
} job_t;

static void *run_part(void *arg)
{
    job_t *j = arg;
    j->rc = swgpu_align_long(j->a->res, j->a->len, j->b->res, j->b->len, j->m, &j->o, &j->aln, &j->st);
    return NULL;
}

static void row(const char *what, int parts, int slices, double wall, const swgpu_long_stats_t *st, const char *out)
{
    printf("%-12s %5d %6d %8.2f %8.2f %8.2f %9.2f  %s\n", what, parts, slices, wall, st->score_seconds,
           st->reverse_seconds, st->traceback_seconds, out);
}

static int usage(void)
{
    fprintf(stderr, "usage: long_parts [-p PARTS,...] [-s SLICES,...] [-b cpu|cuda|auto] [-t THREADS] "
                    "[-g MATCH/MISMATCH/OPEN/EXT] [-o] A B\n");
    return 1;
}

int main(int argc, char **argv)
{
    const char *plist = "2", *slist = "0";
    int c, match = 2, mismatch = -3, go = 5, ge = 2, rc = 1;
    swgpu_long_opts_t o;
    swgpu_seqset_t *sa = NULL, *sb = NULL;
    swgpu_matrix_t *m = NULL;
    swgpu_seq_t A, B;
    swgpu_aln_t one = {0};
    swgpu_long_stats_t st1;

    swgpu_long_opts_init(&o, SWGPU_DNA);
    while ((c = getopt(argc, argv, "p:s:b:t:g:oh")) != -1) {
        switch (c) {
        case 'p': plist = optarg; break;
        case 's': slist = optarg; break;
        case 'b':
            o.backend = !strcmp(optarg, "cpu") ? SWGPU_BACKEND_CPU : !strcmp(optarg, "cuda") ? SWGPU_BACKEND_CUDA
                                                                                              : SWGPU_BACKEND_AUTO;
            break;
        case 't': o.threads = atoi(optarg); break;
        case 'g':
            if (sscanf(optarg, "%d/%d/%d/%d", &match, &mismatch, &go, &ge) == 4)
                break;
            return usage();
        case 'o': o.score_only = 1; break;
        default: return usage();
        }
    }
    if (argc - optind != 2)
        return usage();
    o.gap_open = go;
    o.gap_extend = ge;
    if (swgpu_seqset_read(argv[optind], SWGPU_DNA, &sa, NULL) ||
        swgpu_seqset_read(argv[optind + 1], SWGPU_DNA, &sb, NULL) || swgpu_matrix_dna(match, mismatch, &m) ||
        swgpu_seqset_get(sa, 0, &A) || swgpu_seqset_get(sb, 0, &B)) {
        fprintf(stderr, "long_parts: %s\n", swgpu_last_error());
        goto done;
    }
    double t0 = swgpu__now();
    if (swgpu_align_long(A.res, A.len, B.res, B.len, m, &o, &one, &st1)) {
        fprintf(stderr, "long_parts: one process: %s\n", swgpu_last_error());
        goto done;
    }
    printf("%s (%zu) x %s (%zu), +%d/%d, gaps %d+%dk, %s%s: score %lld\n", A.id, A.len, B.id, B.len, match, mismatch,
           go, ge, st1.backend, o.score_only ? ", score only" : "", (long long)one.score);
    printf("%-12s %5s %6s %8s %8s %8s %9s  %s\n", "run", "parts", "slices", "wall_s", "score_s", "rev_s", "trace_s",
           "output");
    row("one process", 1, 0, swgpu__now() - t0, &st1, "-");
    for (const char *p = plist; *p; p += strcspn(p, ",") + (p[strcspn(p, ",")] == ',')) {
        const int P = atoi(p);
        for (const char *s = slist; *s; s += strcspn(s, ",") + (s[strcspn(s, ",")] == ',')) {
            job_t jobs[MAXP];
            pthread_t tid[MAXP];
            hub_t hub;
            int bad = 0, failed = 0;
            if (P < 2 || P > MAXP) {
                fprintf(stderr, "long_parts: %d parts: 2 to %d\n", P, MAXP);
                goto done;
            }
            hub_init(&hub, P);
            t0 = swgpu__now();
            for (int q = 0; q < P; q++) {
                memset(&jobs[q], 0, sizeof jobs[q]);
                part_init(&jobs[q].part, &hub, q);
                jobs[q].a = &A;
                jobs[q].b = &B;
                jobs[q].m = m;
                jobs[q].o = o;
                jobs[q].o.comm = &jobs[q].part.comm;
                jobs[q].o.gpu_parts = atoi(s);
                pthread_create(&tid[q], NULL, run_part, &jobs[q]);
            }
            for (int q = 0; q < P; q++)
                pthread_join(tid[q], NULL);
            const double wall = swgpu__now() - t0;
            hub_free(&hub);
            for (int q = 0; q < P; q++) {
                failed |= jobs[q].rc != 0;
                bad |= !tl_same_aln(&jobs[q].aln, &one);
                swgpu_aln_free(&jobs[q].aln);
            }
            row("split", P, atoi(s), wall, &jobs[0].st,
                failed ? "FAILED" : bad ? "DIFFERENT" : "identical");
        }
    }
    rc = 0;
done:
    swgpu_aln_free(&one);
    swgpu_matrix_destroy(m);
    swgpu_seqset_destroy(sa);
    swgpu_seqset_destroy(sb);
    return rc;
}
