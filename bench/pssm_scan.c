/*
 * pssm_scan.c - PSSM queries against plain queries on the CPU engine: for
 * each PSSM, the database scan of
 *   plain   its query residues with BLOSUM62 (the plain search),
 *   b62rows a PSSM made of BLOSUM62's rows for those residues (the same
 *           scores as plain, through the PSSM kernels),
 *   pssm    the PSSM itself,
 * with the same engine, threads and gaps (BLOSUM62 11/1), and the GCUPS of
 * each (fastest of REPEAT scans per query, alternating the three forms so
 * that load from other processes hits them alike).
 *
 *   build/bench/pssm_scan [-t THREADS] [-i ISA] [-r REPEAT] DB PSSM...
 *
 *   -t  threads (default 0: all cores)
 *   -i  instruction set: scalar, sse41, avx2, avx512 (default: the best)
 *   -r  scans per query and form, the fastest kept (default 3)
 *
 * Columns per query: length, then per form seconds (the fastest scan),
 * GCUPS on wall time, GCUPS per CPU second of the process (robust when
 * other processes share the cores) and targets rescored wider; a last line
 * over all queries.  plain and b62rows give identical scores against every
 * subject without B, Z, J, U or O (which a PSSM forbids: checked).
 */
#include "search/search.h"
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

/* 1 if sorted database sequence k holds B, Z, J, U or O */
static int has_forbidden(const swgpu_db_t *db, uint64_t k)
{
    for (uint64_t j = db->off[k]; j < db->off[k + 1]; j++) {
        uint8_t c = db->res[j];
        if (c == 20 || c == 21 || c == 24 || c == 25 || c == 26) return 1;
    }
    return 0;
}

enum { PLAIN, B62ROWS, PSSM, NFORM };
static const char *form_name[NFORM] = {"plain", "b62rows", "pssm"};

static void usage(void)
{
    fprintf(stderr, "usage: pssm_scan [-t THREADS] [-i ISA] [-r REPEAT] DB PSSM...\n");
}

int main(int argc, char **argv)
{
    int threads = 0, repeat = 3, c, rc = 1;
    const char *isa_name = NULL;
    swgpu__isa_t isa = swgpu__cpu_isa_best();
    swgpu_db_t *db = NULL;
    swgpu_matrix_t *m = NULL;
    void *st = NULL;
    int32_t *scores[NFORM] = {0};
    double tot_s[NFORM] = {0}, tot_c[NFORM] = {0}, tot_cells = 0;
    uint64_t tot_ov[NFORM] = {0};

    while ((c = getopt(argc, argv, "t:i:r:h")) != -1) {
        switch (c) {
        case 't': threads = atoi(optarg); break;
        case 'i': isa_name = optarg; break;
        case 'r': repeat = atoi(optarg); break;
        default: usage(); return c == 'h' ? 0 : 1;
        }
    }
    if (argc - optind < 2 || repeat < 1) {
        usage();
        return 1;
    }
    if (isa_name) {
        int k;
        for (k = 0; k <= SWGPU__ISA_AVX512 && strcmp(isa_name, swgpu__cpu_isa_name((swgpu__isa_t)k)); k++)
            ;
        if (k > SWGPU__ISA_AVX512 || !swgpu__cpu_isa_supported((swgpu__isa_t)k)) {
            fprintf(stderr, "pssm_scan: instruction set %s unknown or not supported here\n", isa_name);
            return 1;
        }
        isa = (swgpu__isa_t)k;
    }
    if (swgpu_db_open(argv[optind], SWGPU_PROTEIN, &db, NULL) ||
        swgpu_matrix_builtin("BLOSUM62", &m)) {
        fprintf(stderr, "pssm_scan: %s\n", swgpu_last_error());
        goto done;
    }
    {
        swgpu_opts_t o;
        swgpu_opts_init(&o, SWGPU_PROTEIN);
        o.threads = threads;
        if (swgpu__cpu_engine_create_isa(db, m, &o, isa, &st)) {
            fprintf(stderr, "pssm_scan: %s\n", swgpu_last_error());
            goto done;
        }
    }
    for (int f = 0; f < NFORM; f++)
        if (!(scores[f] = malloc((db->n + 1) * sizeof *scores[f]))) goto done;
    printf("# %s, %zu sequences, %llu residues; isa %s, threads %d, best of %d\n", argv[optind],
           (size_t)db->n, (unsigned long long)db->total_res, swgpu__cpu_isa_name(isa),
           threads ? threads : swgpu__ncores(), repeat);
    printf("%-12s %6s", "query", "length");
    for (int f = 0; f < NFORM; f++) printf(" %8s %6s %6s %4s", form_name[f], "GCUPS", "cpuG", "ov");
    printf("\n");
    for (int a = optind + 1; a < argc; a++) {
        swgpu_pssm_t *p = NULL, *b = NULL;
        if (swgpu_pssm_read(argv[a], &p)) {
            fprintf(stderr, "pssm_scan: %s\n", swgpu_last_error());
            goto done;
        }
        size_t len = swgpu_pssm_length(p);
        int32_t *s20 = malloc(len * 20 * sizeof *s20);
        swgpu__query_t q[NFORM];
        for (size_t i = 0; i < len; i++) {
            int code = swgpu_encode(SWGPU_PROTEIN, swgpu_pssm_residues(p)[i]);
            for (int k = 0; k < 20; k++) s20[i * 20 + k] = m->s[code][k];
        }
        if (swgpu_pssm_create("b62rows", swgpu_pssm_residues(p), s20, len, &b)) {
            fprintf(stderr, "pssm_scan: %s\n", swgpu_last_error());
            free(s20);
            swgpu_pssm_destroy(p);
            goto done;
        }
        free(s20);
        swgpu__pssm_query(p, &q[PSSM]);
        swgpu__pssm_query(b, &q[B62ROWS]);
        q[PLAIN] = swgpu__query_plain(q[PSSM].res, len);
        double best[NFORM], bestc[NFORM];
        uint64_t ov[NFORM] = {0};
        for (int r = 0; r < repeat; r++)
            for (int f = 0; f < NFORM; f++) {
                swgpu_scan_stats_t ss = {0, 0, 0};
                double t0 = swgpu__now(), c0 = cpu_seconds();
                if (swgpu__engine_cpu.scan(st, &q[f], scores[f], &ss)) {
                    fprintf(stderr, "pssm_scan: %s\n", swgpu_last_error());
                    goto done;
                }
                double t = swgpu__now() - t0, tc = cpu_seconds() - c0;
                if (r == 0 || t < best[f]) best[f] = t;
                if (r == 0 || tc < bestc[f]) bestc[f] = tc;
                ov[f] = ss.overflows;
            }
        for (uint64_t k = 0; k < db->n; k++)
            if (scores[PLAIN][k] != scores[B62ROWS][k] && !has_forbidden(db, k)) {
                fprintf(stderr, "pssm_scan: %s: sequence %u: plain %d, BLOSUM62 rows %d\n", argv[a],
                        db->orig[k], scores[PLAIN][k], scores[B62ROWS][k]);
                goto done;
            }
        double cells = (double)len * (double)db->total_res;
        printf("%-12s %6zu", swgpu_pssm_id(p), len);
        for (int f = 0; f < NFORM; f++) {
            printf(" %8.3f %6.1f %6.1f %4llu", best[f], cells / best[f] / 1e9, cells / bestc[f] / 1e9,
                   (unsigned long long)ov[f]);
            tot_s[f] += best[f];
            tot_c[f] += bestc[f];
            tot_ov[f] += ov[f];
        }
        printf("\n");
        tot_cells += cells;
        swgpu_pssm_destroy(p);
        swgpu_pssm_destroy(b);
    }
    printf("%-12s %6s", "all", "");
    for (int f = 0; f < NFORM; f++)
        printf(" %8.3f %6.1f %6.1f %4llu", tot_s[f], tot_cells / tot_s[f] / 1e9, tot_cells / tot_c[f] / 1e9,
               (unsigned long long)tot_ov[f]);
    printf("\n");
    rc = 0;
done:
    if (st) swgpu__engine_cpu.destroy(st);
    for (int f = 0; f < NFORM; f++) free(scores[f]);
    swgpu_matrix_destroy(m);
    swgpu_db_destroy(db);
    return rc;
}
