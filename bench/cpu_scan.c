/*
 * cpu_scan.c - times only the CPU engine's database scan, per instruction
 * set, and prints a GCUPS table (for tuning the kernels).
 *
 *   build/bench/cpu_scan [-t THREADS] [-i ISA,ISA...] [-m MATRIX] [-g OPEN/EXT]
 *                        [-r REPEAT] [-V N] [-v] DB QUERIES
 *
 *   -t  threads (default 1; 0 = all cores)
 *   -i  instruction sets among scalar, sse41, avx2, avx512 (default: every
 *       SIMD one this CPU has)
 *   -m  matrix (default BLOSUM62; DNA databases use +2/-3)
 *   -g  gap open/extend (default 11/1 protein, 5/2 DNA)
 *   -r  scans per query, the fastest kept (default 1)
 *   -V  verify the scores of the first N queries against the reference
 *       engine (slow: scalar)
 *   -v  one line per query
 *
 * Columns: wall seconds of all scans, GCUPS on wall time, GCUPS per CPU
 * second (robust when other processes share the cores), and the targets
 * rescored at 16/32 bits.
 */
#include "cpu/cpu.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static double cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void usage(void)
{
    fprintf(stderr, "usage: cpu_scan [-t THREADS] [-i ISA,...] [-m MATRIX] [-g OPEN/EXT] [-r REPEAT] "
                    "[-V N] [-v] DB QUERIES\n");
}

int main(int argc, char **argv)
{
    int threads = 1, repeat = 1, verify = 0, verbose = 0, go = -1, ge = -1, c;
    const char *isas = NULL, *mname = NULL;
    swgpu_db_t *db = NULL;
    swgpu_seqset_t *qs = NULL;
    swgpu_matrix_t *m = NULL;
    int32_t *scores = NULL, **want = NULL;
    int rc = 1;

    while ((c = getopt(argc, argv, "t:i:m:g:r:V:vh")) != -1) {
        switch (c) {
        case 't': threads = atoi(optarg); break;
        case 'i': isas = optarg; break;
        case 'm': mname = optarg; break;
        case 'g':
            if (sscanf(optarg, "%d/%d", &go, &ge) != 2) {
                usage();
                return 1;
            }
            break;
        case 'r': repeat = atoi(optarg) > 0 ? atoi(optarg) : 1; break;
        case 'V': verify = atoi(optarg); break;
        case 'v': verbose = 1; break;
        default: usage(); return c == 'h' ? 0 : 1;
        }
    }
    if (argc - optind != 2) {
        usage();
        return 1;
    }
    if (swgpu_db_open(argv[optind], SWGPU_AUTO, &db, NULL) ||
        swgpu_seqset_read(argv[optind + 1], swgpu_db_alphabet(db), &qs, NULL)) {
        fprintf(stderr, "cpu_scan: %s\n", swgpu_last_error());
        goto done;
    }
    if (swgpu_db_alphabet(db) == SWGPU_DNA ? swgpu_matrix_dna(2, -3, &m)
                                           : swgpu_matrix_get(mname ? mname : "BLOSUM62", &m)) {
        fprintf(stderr, "cpu_scan: %s\n", swgpu_last_error());
        goto done;
    }
    swgpu_opts_t o;
    swgpu_opts_init(&o, swgpu_db_alphabet(db));
    if (go >= 0) {
        o.gap_open = go;
        o.gap_extend = ge;
    }
    o.threads = threads;
    size_t n = swgpu_db_size(db), nq = swgpu_seqset_size(qs);
    uint64_t dbres = swgpu_db_residues(db);
    scores = malloc(n * sizeof *scores);
    if (!scores) goto done;

    if (verify > 0) {
        void *st = NULL;
        if ((size_t)verify > nq) verify = (int)nq;
        want = calloc((size_t)verify, sizeof *want);
        if (!want || swgpu__engine_ref.create(db, m, &o, &st)) {
            fprintf(stderr, "cpu_scan: reference engine: %s\n", swgpu_last_error());
            goto done;
        }
        for (int qi = 0; qi < verify; qi++) {
            swgpu_seq_t q;
            swgpu_seqset_get(qs, (size_t)qi, &q);
            want[qi] = malloc(n * sizeof *want[qi]);
            swgpu__query_t Q = swgpu__query_plain(q.res, q.len);
            if (!want[qi] || swgpu__engine_ref.scan(st, &Q, want[qi], NULL)) {
                fprintf(stderr, "cpu_scan: reference scan: %s\n", swgpu_last_error());
                swgpu__engine_ref.destroy(st);
                goto done;
            }
        }
        swgpu__engine_ref.destroy(st);
    }

    printf("%-7s %7s %9s %9s %9s %11s %9s%s\n", "isa", "threads", "create_s", "scan_s", "GCUPS",
           "GCUPS/cpu-s", "rescored", verify ? "  verify" : "");
    for (int isa = SWGPU__ISA_SCALAR; isa <= SWGPU__ISA_AVX512; isa++) {
        const char *name = swgpu__cpu_isa_name((swgpu__isa_t)isa);
        if (isas ? !strstr(isas, name) : isa == SWGPU__ISA_SCALAR) continue;
        if (!swgpu__cpu_isa_supported((swgpu__isa_t)isa)) {
            printf("%-7s (not supported by this CPU)\n", name);
            continue;
        }
        void *st = NULL;
        double t0 = swgpu__now();
        if (swgpu__cpu_engine_create_isa(db, m, &o, (swgpu__isa_t)isa, &st)) {
            fprintf(stderr, "cpu_scan: %s\n", swgpu_last_error());
            goto done;
        }
        double tcreate = swgpu__now() - t0, wall = 0, cpu = 0;
        swgpu_scan_stats_t ss = {0, 0, 0};
        long bad = 0;
        for (size_t qi = 0; qi < nq; qi++) {
            swgpu_seq_t q;
            double best_w = 0, best_c = 0;
            uint64_t q_over = 0;
            swgpu_seqset_get(qs, qi, &q);
            for (int r = 0; r < repeat; r++) {
                swgpu_scan_stats_t s1 = {0, 0, 0};
                double w0 = swgpu__now(), c0 = cpu_seconds();
                swgpu__query_t Q = swgpu__query_plain(q.res, q.len);
                if (swgpu__engine_cpu.scan(st, &Q, scores, &s1)) {
                    fprintf(stderr, "cpu_scan: %s\n", swgpu_last_error());
                    swgpu__engine_cpu.destroy(st);
                    goto done;
                }
                double w = swgpu__now() - w0, cc = cpu_seconds() - c0;
                if (r == 0 || w < best_w) best_w = w;
                if (r == 0 || cc < best_c) best_c = cc;
                if (r == 0) {
                    ss.cells += s1.cells;
                    ss.overflows += s1.overflows;
                    q_over = s1.overflows;
                }
            }
            wall += best_w;
            cpu += best_c;
            if ((int)qi < verify)
                for (size_t k = 0; k < n; k++) bad += scores[k] != want[qi][k];
            if (verbose)
                printf("  %-7s query %zu len %zu: %.4f s, %.2f GCUPS, %.2f GCUPS/cpu-s, %llu rescored\n",
                       name, qi, q.len, best_w, (double)q.len * (double)dbres / best_w / 1e9,
                       (double)q.len * (double)dbres / best_c / 1e9, (unsigned long long)q_over);
        }
        swgpu__engine_cpu.destroy(st);
        printf("%-7s %7d %9.3f %9.3f %9.2f %11.2f %9llu", name, threads, tcreate, wall,
               (double)ss.cells / wall / 1e9, (double)ss.cells / cpu / 1e9,
               (unsigned long long)ss.overflows);
        if (verify) printf("  %ld wrong", bad);
        printf("\n");
    }
    printf("database %zu sequences, %llu residues; %zu queries; %s %d/%d\n", n,
           (unsigned long long)dbres, nq, swgpu_matrix_name(m), o.gap_open, o.gap_extend);
    rc = 0;
done:
    if (want)
        for (int qi = 0; qi < verify; qi++) free(want[qi]);
    free(want);
    free(scores);
    swgpu_matrix_destroy(m);
    swgpu_seqset_destroy(qs);
    swgpu_db_destroy(db);
    return rc;
}
