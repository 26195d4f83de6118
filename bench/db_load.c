/*
 * db_load.c - how long swgpu_db_open takes to load each database given
 * (a makedb file, a BLAST database prefix, or FASTA/FASTQ, plain or gzip):
 * the fastest and the median of R loads, with the sequences and residues.
 *
 *   build/bench/db_load [-r R] PATH...      (R = 5)
 */
#define _POSIX_C_SOURCE 200809L
#include "swgpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    int reps = 5, i = 1;
    if (argc > 2 && !strcmp(argv[1], "-r")) {
        reps = atoi(argv[2]);
        i = 3;
    }
    if (i >= argc || reps < 1 || reps > 100) {
        fprintf(stderr, "usage: db_load [-r R] PATH...\n");
        return 2;
    }
    printf("%-50s %10s %12s %9s %9s\n", "database", "sequences", "residues", "best s", "median s");
    for (; i < argc; i++) {
        double t[100];
        size_t n = 0;
        unsigned long long res = 0;
        for (int r = 0; r < reps; r++) {
            swgpu_db_t *db = NULL;
            double t0 = now();
            int rc = swgpu_db_open(argv[i], SWGPU_AUTO, &db, NULL);
            t[r] = now() - t0;
            if (rc) {
                fprintf(stderr, "%s: %s\n", argv[i], swgpu_last_error());
                return 1;
            }
            n = swgpu_db_size(db);
            res = (unsigned long long)swgpu_db_residues(db);
            swgpu_db_destroy(db);
        }
        qsort(t, (size_t)reps, sizeof *t, by_value);
        printf("%-50s %10zu %12llu %9.3f %9.3f\n", argv[i], n, res, t[0], t[reps / 2]);
    }
    return 0;
}
