/*
 * cpu_many.c - many queries against one database with the CPU engine: a
 * loop over scan(), one query per call, against one scan_many() call for
 * all of them.  Prints wall seconds and GCUPS of each and checks that both
 * give every query the same scores (a checksum per query, taken by the
 * loop after each scan and by the scan_many sink).
 *
 *   build/bench/cpu_many [-t THREADS] [-n NQ] [-m MATRIX] [-g OPEN/EXT] [-r REPEAT]
 *                        [-s scan|many] QUERIES DB
 *
 *   -t  threads (default 0 = all cores)
 *   -n  the first NQ queries of the file only (default all)
 *   -m  matrix (default BLOSUM62; DNA databases use +2/-3)
 *   -g  gap open/extend (default 11/1 protein, 5/2 DNA)
 *   -r  runs of each, the fastest kept (default 1)
 *   -s  run only this one (default both)
 *
 * SWGPU_CPU_ISA=scalar|sse41|avx2|avx512 picks the instruction set (default
 * the best this CPU has).  DB is a makedb file or a FASTA file.
 */
#include "cpu/cpu.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

/* FNV-1a over the scores of one query */
static uint64_t checksum(const int32_t *s, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t k = 0; k < n; k++) {
        h ^= (uint32_t)s[k];
        h *= 0x100000001b3ull;
    }
    return h;
}

typedef struct {
    uint64_t *sum;
    size_t n;
} sink_t;

static int sink_fn(void *user, size_t i, const int32_t *scores)
{
    sink_t *k = user;
    k->sum[i] = checksum(scores, k->n);
    return 0;
}

static void usage(void)
{
    fprintf(stderr, "usage: cpu_many [-t THREADS] [-n NQ] [-m MATRIX] [-g OPEN/EXT] [-r REPEAT] "
                    "[-s scan|many] QUERIES DB\n");
}

int main(int argc, char **argv)
{
    int threads = 0, repeat = 1, go = -1, ge = -1, c, rc = 1;
    size_t nq_max = 0;
    const char *mname = NULL, *only = NULL;
    swgpu_db_t *db = NULL;
    swgpu_seqset_t *qs = NULL;
    swgpu_matrix_t *m = NULL;
    void *st = NULL;
    int32_t *scores = NULL;
    uint64_t *sum_scan = NULL, *sum_many = NULL, qres = 0;
    swgpu__query_t *qp = NULL;

    while ((c = getopt(argc, argv, "t:n:m:g:r:s:h")) != -1) {
        switch (c) {
        case 't': threads = atoi(optarg); break;
        case 'n': nq_max = (size_t)atol(optarg); break;
        case 'm': mname = optarg; break;
        case 'g':
            if (sscanf(optarg, "%d/%d", &go, &ge) != 2) {
                usage();
                return 1;
            }
            break;
        case 'r': repeat = atoi(optarg) > 0 ? atoi(optarg) : 1; break;
        case 's': only = optarg; break;
        default: usage(); return c == 'h' ? 0 : 1;
        }
    }
    if (argc - optind != 2) {
        usage();
        return 1;
    }
    double t0 = swgpu__now();
    if (swgpu_db_open(argv[optind + 1], SWGPU_AUTO, &db, NULL) ||
        swgpu_seqset_read(argv[optind], swgpu_db_alphabet(db), &qs, NULL)) {
        fprintf(stderr, "cpu_many: %s\n", swgpu_last_error());
        goto done;
    }
    if (swgpu_db_alphabet(db) == SWGPU_DNA ? swgpu_matrix_dna(2, -3, &m)
                                           : swgpu_matrix_get(mname ? mname : "BLOSUM62", &m)) {
        fprintf(stderr, "cpu_many: %s\n", swgpu_last_error());
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
    if (nq_max && nq > nq_max) nq = nq_max;
    scores = malloc((n + 1) * sizeof *scores);
    sum_scan = calloc(nq + 1, sizeof *sum_scan);
    sum_many = calloc(nq + 1, sizeof *sum_many);
    qp = malloc((nq + 1) * sizeof *qp);
    if (!scores || !sum_scan || !sum_many || !qp) {
        fprintf(stderr, "cpu_many: out of memory\n");
        goto done;
    }
    for (size_t i = 0; i < nq; i++) {
        swgpu_seq_t q;
        swgpu_seqset_get(qs, i, &q);
        qp[i] = swgpu__query_plain(q.res, q.len);
        qres += q.len;
    }
    if (swgpu__engine_cpu.create(db, m, &o, &st)) {
        fprintf(stderr, "cpu_many: %s\n", swgpu_last_error());
        goto done;
    }
    const char *isa = getenv("SWGPU_CPU_ISA");
    printf("database %zu sequences, %llu residues; %zu queries, %llu residues; %s %d/%d; isa %s; "
           "threads %d (of %d cores); load+create %.2f s\n",
           n, (unsigned long long)dbres, nq, (unsigned long long)qres, swgpu_matrix_name(m), o.gap_open,
           o.gap_extend, isa && *isa ? isa : swgpu__cpu_isa_name(swgpu__cpu_isa_best()),
           threads > 0 ? threads : swgpu__ncores(), swgpu__ncores(), swgpu__now() - t0);
    printf("%-18s %9s %9s %10s %10s\n", "mode", "wall_s", "GCUPS", "queries/s", "rescored");
    double best_scan = 0, best_many = 0;
    for (int r = 0; r < repeat; r++) {
        if (!only || !strcmp(only, "scan")) {
            swgpu_scan_stats_t ss = {0, 0, 0};
            double w0 = swgpu__now();
            for (size_t i = 0; i < nq; i++) {
                if (swgpu__engine_cpu.scan(st, &qp[i], scores, &ss)) {
                    fprintf(stderr, "cpu_many: scan: %s\n", swgpu_last_error());
                    goto done;
                }
                sum_scan[i] = checksum(scores, n);
            }
            double w = swgpu__now() - w0;
            if (r == 0 || w < best_scan) best_scan = w;
            printf("%-18s %9.3f %9.2f %10.1f %10llu\n", "scan() per query", w, (double)ss.cells / w / 1e9,
                   (double)nq / w, (unsigned long long)ss.overflows);
        }
        if (!only || !strcmp(only, "many")) {
            swgpu_scan_stats_t ss = {0, 0, 0};
            sink_t k = {sum_many, n};
            double w0 = swgpu__now();
            if (swgpu__engine_cpu.scan_many(st, nq, qp, sink_fn, NULL, &k, &ss)) {
                fprintf(stderr, "cpu_many: scan_many: %s\n", swgpu_last_error());
                goto done;
            }
            double w = swgpu__now() - w0;
            if (r == 0 || w < best_many) best_many = w;
            printf("%-18s %9.3f %9.2f %10.1f %10llu\n", "scan_many()", w, (double)ss.cells / w / 1e9,
                   (double)nq / w, (unsigned long long)ss.overflows);
        }
    }
    if (!only) {
        size_t bad = 0;
        for (size_t i = 0; i < nq; i++) bad += sum_scan[i] != sum_many[i];
        printf("best of %d: scan() %.3f s, scan_many() %.3f s: %.2fx; scores %s (%zu queries differ)\n", repeat,
               best_scan, best_many, best_scan / best_many, bad ? "DIFFER" : "identical", bad);
        if (bad) goto done;
    }
    rc = 0;
done:
    if (st) swgpu__engine_cpu.destroy(st);
    free(scores);
    free(sum_scan);
    free(sum_many);
    free(qp);
    swgpu_matrix_destroy(m);
    swgpu_seqset_destroy(qs);
    swgpu_db_destroy(db);
    return rc;
}
