/*
 * cpu_pair.c - times swgpu__cpu_score_pair (one long pair: score and
 * tie-rule end) per instruction set and thread count, against the scalar
 * reference swgpu__ref_score, and checks that they agree.
 *
 *   build/bench/cpu_pair [-t THREADS] [-n MAXLEN] [-b ROWS] [-m MATRIX] [-g OPEN/EXT] A.fasta B.fasta
 *
 * Aligns the first record of A (query) with the first record of B, each
 * cut to MAXLEN residues when given; -t sets the largest thread count tried
 * (default: all cores); -b the band height (default: the engine's choice).
 */
#include "cpu/cpu.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    int maxthreads = swgpu__ncores(), go = -1, ge = -1, c, rc = 1;
    size_t maxlen = 0, rows = 0;
    const char *mname = NULL;
    swgpu_seqset_t *a = NULL, *b = NULL;
    swgpu_matrix_t *m = NULL;
    swgpu_seq_t q, t;

    while ((c = getopt(argc, argv, "t:n:b:m:g:h")) != -1) {
        switch (c) {
        case 't': maxthreads = atoi(optarg) > 0 ? atoi(optarg) : 1; break;
        case 'n': maxlen = (size_t)atoll(optarg); break;
        case 'b': rows = (size_t)atoll(optarg); break;
        case 'm': mname = optarg; break;
        case 'g':
            if (sscanf(optarg, "%d/%d", &go, &ge) == 2) break;
            /* fall through */
        default:
            fprintf(stderr, "usage: cpu_pair [-t THREADS] [-n MAXLEN] [-b ROWS] [-m MATRIX] [-g OPEN/EXT] A B\n");
            return c == 'h' ? 0 : 1;
        }
    }
    if (argc - optind != 2) {
        fprintf(stderr, "usage: cpu_pair [-t THREADS] [-n MAXLEN] [-b ROWS] [-m MATRIX] [-g OPEN/EXT] A B\n");
        return 1;
    }
    if (swgpu_seqset_read(argv[optind], SWGPU_AUTO, &a, NULL) ||
        swgpu_seqset_read(argv[optind + 1], swgpu_seqset_alphabet(a), &b, NULL)) {
        fprintf(stderr, "cpu_pair: %s\n", swgpu_last_error());
        goto done;
    }
    swgpu_alphabet_t alpha = swgpu_seqset_alphabet(a);
    if (alpha == SWGPU_DNA ? swgpu_matrix_dna(2, -3, &m) : swgpu_matrix_get(mname ? mname : "BLOSUM62", &m)) {
        fprintf(stderr, "cpu_pair: %s\n", swgpu_last_error());
        goto done;
    }
    if (go < 0) {
        go = alpha == SWGPU_DNA ? 5 : 11;
        ge = alpha == SWGPU_DNA ? 2 : 1;
    }
    swgpu_seqset_get(a, 0, &q);
    swgpu_seqset_get(b, 0, &t);
    if (maxlen && q.len > maxlen) q.len = maxlen;
    if (maxlen && t.len > maxlen) t.len = maxlen;
    double cells = (double)q.len * (double)t.len;

    int32_t ws;
    int64_t wq, wt;
    double t0 = swgpu__now();
    if (swgpu__ref_score(q.res, q.len, t.res, t.len, m, go, ge, &ws, &wq, &wt)) {
        fprintf(stderr, "cpu_pair: reference: %s\n", swgpu_last_error());
        goto done;
    }
    double tref = swgpu__now() - t0;
    printf("%s (%zu) x %s (%zu), %s %d/%d: score %d, end (%lld, %lld)\n", q.id, q.len, t.id, t.len,
           swgpu_matrix_name(m), go, ge, ws, (long long)wq, (long long)wt);
    printf("%-9s %7s %9s %9s %9s  %s\n", "engine", "threads", "seconds", "GCUPS", "speedup", "result");
    printf("%-9s %7d %9.3f %9.2f %9.2f  reference\n", "ref", 1, tref, cells / tref / 1e9, 1.0);
    for (int isa = SWGPU__ISA_SSE41; isa <= SWGPU__ISA_AVX512; isa++) {
        if (!swgpu__cpu_isa_supported((swgpu__isa_t)isa)) continue;
        for (int th = 1; th <= maxthreads; th *= 2) {
            int32_t s;
            int64_t qe, te;
            t0 = swgpu__now();
            if (swgpu__cpu_score_pair_isa(q.res, q.len, t.res, t.len, m, go, ge, th, (swgpu__isa_t)isa, rows,
                                          &s, &qe, &te)) {
                fprintf(stderr, "cpu_pair: %s\n", swgpu_last_error());
                goto done;
            }
            double w = swgpu__now() - t0;
            printf("%-9s %7d %9.3f %9.2f %9.2f  %s\n", swgpu__cpu_isa_name((swgpu__isa_t)isa), th, w,
                   cells / w / 1e9, tref / w, s == ws && qe == wq && te == wt ? "same" : "DIFFERENT");
            if (th < maxthreads && th * 2 > maxthreads) th = maxthreads / 2;
        }
    }
    rc = 0;
done:
    swgpu_matrix_destroy(m);
    swgpu_seqset_destroy(a);
    swgpu_seqset_destroy(b);
    return rc;
}
