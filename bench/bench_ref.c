/*
 * bench_ref.c - speed and memory of the scalar reference: the score pass
 * (swgpu__ref_score) and the full alignment (swgpu_align: score, reverse
 * pass, Myers-Miller path) on related protein pairs (BLOSUM62, 11/1).
 *
 *   build/bench/bench_ref                 synthetic pairs, 1k .. 20k residues
 *   build/bench/bench_ref A.fasta B.fasta the first sequence of A vs that of B
 *                                         (e.g. titin_hum.fasta twice)
 *
 * Prints one table row per pair: lengths, score, seconds and GCUPS of the
 * score pass, seconds of the whole alignment, peak resident memory.
 */
#include "align/align.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

static long peak_kb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

static void row(const uint8_t *q, size_t qlen, const uint8_t *t, size_t tlen,
                const swgpu_matrix_t *m)
{
    int32_t score = 0;
    int64_t qe, te;
    swgpu_aln_t a = {0};
    double t0 = swgpu__now();
    int rc = swgpu__ref_score(q, qlen, t, tlen, m, 11, 1, &score, &qe, &te);
    double t1 = swgpu__now();
    int rc2 = swgpu_align(q, qlen, t, tlen, m, 11, 1, 0, &a);
    double t2 = swgpu__now();
    if (rc || rc2) {
        fprintf(stderr, "bench_ref: %s\n", swgpu_last_error());
        exit(1);
    }
    printf("%8zu %8zu %9d %9.3f %7.3f %9.3f %8zu %9ld\n", qlen, tlen, (int)score, t1 - t0,
           (double)qlen * (double)tlen / (t1 - t0) / 1e9, t2 - t1, a.n_cigar, peak_kb());
    swgpu_aln_free(&a);
}

static uint64_t rng = 12345;
static uint8_t rnd(void)
{
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (uint8_t)((rng >> 33) % 20);
}

int main(int argc, char **argv)
{
    swgpu_matrix_t *m = NULL;
    if (swgpu_matrix_builtin("BLOSUM62", &m)) {
        fprintf(stderr, "bench_ref: %s\n", swgpu_last_error());
        return 1;
    }
    printf("%8s %8s %9s %9s %7s %9s %8s %9s\n", "qlen", "tlen", "score", "score_s", "GCUPS",
           "align_s", "n_cigar", "peak_kB");
    if (argc == 3) {
        swgpu_seqset_t *a = NULL, *b = NULL;
        swgpu_seq_t x, y;
        if (swgpu_seqset_read(argv[1], SWGPU_PROTEIN, &a, NULL) ||
            swgpu_seqset_read(argv[2], SWGPU_PROTEIN, &b, NULL) || swgpu_seqset_get(a, 0, &x) ||
            swgpu_seqset_get(b, 0, &y)) {
            fprintf(stderr, "bench_ref: %s\n", swgpu_last_error());
            return 1;
        }
        row(x.res, x.len, y.res, y.len, m);
        swgpu_seqset_destroy(a);
        swgpu_seqset_destroy(b);
    } else {
        static const size_t lens[] = {1000, 2000, 5000, 10000, 20000};
        for (size_t k = 0; k < sizeof lens / sizeof lens[0]; k++) {
            size_t n = lens[k], tl = 0;
            uint8_t *q = malloc(n), *t = malloc(2 * n);
            for (size_t i = 0; i < n; i++)
                q[i] = rnd();
            /* related: 15% substitutions, an indel every ~100 residues */
            for (size_t i = 0; i < n; i++) {
                unsigned r = rnd() * 5u + rnd() % 5u; /* 0..99 */
                if (r < 15)
                    t[tl++] = rnd();
                else if (r == 15)
                    i += 2;
                else if (r == 16) {
                    t[tl++] = rnd();
                    t[tl++] = q[i];
                } else
                    t[tl++] = q[i];
            }
            row(q, n, t, tl, m);
            free(q);
            free(t);
        }
    }
    swgpu_matrix_destroy(m);
    return 0;
}
