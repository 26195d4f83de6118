/*
 * align_hits.c - times the alignment of database-search hits as
 * swgpu_search does it (src/search/pipeline.c, align_one: swgpu__cpu_score_pair for
 * the score and end, then swgpu__align_from_end for the begin and the
 * path), single-threaded: "before" is the pair engine's 32-bit end with the
 * scalar begin and path, then per instruction set the 16-bit end kernel and
 * the SIMD begin/path kernels; all must give identical ends and alignments.
 *
 *   build/bench/align_hits [-n QUERIES] [-k HITS] [-r REPEATS] [-i ISA] QUERIES.fasta DB.fasta
 *
 * The hits are the top HITS (default 20) of the first QUERIES (default 40)
 * queries, found with swgpu_search (cpu backend, all cores, no alignment).
 * Each timed loop runs REPEATS times (default 1) and the fastest run counts;
 * times are the thread's CPU time (the machine may be shared); -i runs only one instruction set (scalar,
 * sse41, avx2; for profiles).
 */
#include "search/search.h"
#include "align/align.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
    const uint8_t *q, *t;
    size_t ql, tl;
    int32_t score;
    int64_t qend, tend, qbeg, tbeg;
} pair_t;

/* CPU time of the calling thread: the timed loops are single-threaded, and
 * time while other work holds the core does not count */
static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void no_progress(void *user, uint64_t cells)
{
    (void)user;
    (void)cells;
}

static int same(const swgpu_aln_t *a, const swgpu_aln_t *b)
{
    return a->score == b->score && a->qbeg == b->qbeg && a->qend == b->qend &&
           a->tbeg == b->tbeg && a->tend == b->tend && a->n_cigar == b->n_cigar &&
           (!a->n_cigar || !memcmp(a->cigar, b->cigar, a->n_cigar * sizeof *a->cigar)) &&
           a->length == b->length && a->n_ident == b->n_ident &&
           a->n_mismatch == b->n_mismatch && a->n_gapopen == b->n_gapopen && a->n_gaps == b->n_gaps;
}

int main(int argc, char **argv)
{
    int nq = 40, topn = 20, reps = 1, c, rc = 1, only = -1;
    swgpu_seqset_t *qs = NULL, *sub = NULL;
    swgpu_db_t *db = NULL;
    swgpu_matrix_t *m = NULL;
    swgpu_search_result_t *res = NULL;
    swgpu_opts_t o;
    pair_t *pairs = NULL;
    swgpu_aln_t *ref = NULL, a = {0};
    size_t np = 0;
    double t0, t_search, t_score = 0;
    uint64_t cells_rect = 0, cells_start = 0;

    while ((c = getopt(argc, argv, "n:k:r:i:h")) != -1) {
        switch (c) {
        case 'i':
            only = !strcmp(optarg, "sse41") ? SWGPU__ISA_SSE41 : !strcmp(optarg, "avx2") ?
                   SWGPU__ISA_AVX2 : SWGPU__ISA_SCALAR;
            break;
        case 'n': nq = atoi(optarg); break;
        case 'k': topn = atoi(optarg); break;
        case 'r': reps = atoi(optarg) > 0 ? atoi(optarg) : 1; break;
        default:
            fprintf(stderr, "usage: align_hits [-n QUERIES] [-k HITS] [-r REPEATS] [-i ISA] Q.fasta DB.fasta\n");
            return c == 'h' ? 0 : 1;
        }
    }
    if (argc - optind != 2) {
        fprintf(stderr, "usage: align_hits [-n QUERIES] [-k HITS] [-r REPEATS] [-i ISA] Q.fasta DB.fasta\n");
        return 1;
    }
    if (swgpu_seqset_read(argv[optind], SWGPU_PROTEIN, &qs, NULL) ||
        swgpu_db_open(argv[optind + 1], SWGPU_PROTEIN, &db, NULL) ||
        swgpu_matrix_get("BLOSUM62", &m) || swgpu_seqset_create(SWGPU_PROTEIN, &sub)) {
        fprintf(stderr, "align_hits: %s\n", swgpu_last_error());
        goto done;
    }
    for (size_t i = 0; i < swgpu_seqset_size(qs) && i < (size_t)nq; i++) {
        swgpu_seq_t s;
        char *letters;
        swgpu_seqset_get(qs, i, &s);
        letters = malloc(s.len + 1);
        for (size_t k = 0; k < s.len; k++)
            letters[k] = swgpu_decode(SWGPU_PROTEIN, s.res[k]);
        swgpu_seqset_add(sub, s.id, s.desc, letters, s.len);
        free(letters);
    }
    swgpu_opts_init(&o, SWGPU_PROTEIN);
    o.backend = SWGPU_BACKEND_CPU;
    o.top_n = topn;
    o.no_align = 1;
    {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        t0 = (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
    }
    if (swgpu_search(sub, db, m, &o, &res)) {
        fprintf(stderr, "align_hits: %s\n", swgpu_last_error());
        goto done;
    }
    {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        t_search = (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec - t0;
    }
    for (size_t i = 0; i < res->n_queries; i++)
        np += res->q[i].n_hits;
    pairs = calloc(np ? np : 1, sizeof *pairs);
    ref = calloc(np ? np : 1, sizeof *ref);
    np = 0;
    for (size_t i = 0; i < res->n_queries; i++) {
        swgpu_seq_t q, t;
        swgpu_seqset_get(sub, res->q[i].query, &q);
        for (size_t h = 0; h < res->q[i].n_hits; h++) {
            pair_t *p = &pairs[np++];
            swgpu_db_get(db, res->q[i].hits[h].target, &t);
            p->q = q.res;
            p->ql = q.len;
            p->t = t.res;
            p->tl = t.len;
        }
    }
    printf("# %zu queries x %zu db sequences: %zu hits (top %d) found in %.2f s\n",
           swgpu_seqset_size(sub), swgpu_db_size(db), np, topn, t_search);

    /* the end as search.c got it before the 16-bit kernel: the pair
     * engine's 32-bit bands (a progress callback keeps it off the 16-bit
     * kernel) or, under 64 K cells, the scalar reference */
    t_score = 1e30;
    for (int r = 0; r < reps; r++) {
        t0 = now();
        for (size_t k = 0; k < np; k++) {
            pair_t *p = &pairs[k];
            if (swgpu__cpu_score_pair_ex(p->q, p->ql, p->t, p->tl, m, o.gap_open, o.gap_extend,
                                         1, swgpu__cpu_isa_best(), 0, no_progress, NULL,
                                         &p->score, &p->qend, &p->tend)) {
                fprintf(stderr, "align_hits: %s\n", swgpu_last_error());
                goto done;
            }
        }
        t_score = now() - t0 < t_score ? now() - t0 : t_score;
    }
    /* the reference: the scalar begin and path */
    for (size_t k = 0; k < np; k++) {
        pair_t *p = &pairs[k];
        if (swgpu__align_from_end_scalar(p->q, p->ql, p->t, p->tl, m, o.gap_open, o.gap_extend,
                                         p->score, p->qend, p->tend, 0, &ref[k])) {
            fprintf(stderr, "align_hits: %s\n", swgpu_last_error());
            goto done;
        }
        p->qbeg = ref[k].qbeg;
        p->tbeg = ref[k].tbeg;
        cells_start += (uint64_t)p->qend * (uint64_t)(p->tend - p->tbeg);
        cells_rect += (uint64_t)(p->qend - p->qbeg) * (uint64_t)(p->tend - p->tbeg);
    }
    printf("# mean per hit: reverse pass %.0f cells, path rectangle %.0f cells\n",
           (double)cells_start / (double)(np ? np : 1),
           (double)cells_rect / (double)(np ? np : 1));
    {
        double sq = 0, st = 0;
        for (size_t k = 0; k < np; k++) {
            sq += (double)pairs[k].ql;
            st += (double)pairs[k].tl;
        }
        printf("# (mean lengths: query %.0f, target %.0f)\n", sq / (double)(np ? np : 1),
               st / (double)(np ? np : 1));
    }
    printf("\n| kernels | score_pair us | begin us | path us | total us/hit | vs before | identical |\n");
    printf("|---|---|---|---|---|---|---|\n");
    {
        const int isas[] = {SWGPU__ISA_SCALAR, SWGPU__ISA_SSE41, SWGPU__ISA_AVX2};
        double base_total = 0;
        for (int x = 0; x < 3; x++) {
            int isa = isas[x];
            double ts, tp, tsc, total;
            size_t bad = 0;
            if (!swgpu__cpu_isa_supported((swgpu__isa_t)isa) || (only >= 0 && isa != only))
                continue;
            ts = tp = 1e30;
            tsc = t_score;
            if (isa != SWGPU__ISA_SCALAR) {
                /* the end now: one thread, the 16-bit kernel of this isa */
                tsc = 1e30;
                for (int r = 0; r < reps; r++) {
                    t0 = now();
                    for (size_t k = 0; k < np; k++) {
                        pair_t *p = &pairs[k];
                        int32_t sc = 0;
                        int64_t qe = 0, te = 0;
                        swgpu__cpu_score_pair_isa(p->q, p->ql, p->t, p->tl, m, o.gap_open,
                                                  o.gap_extend, 1, (swgpu__isa_t)isa, 0, &sc,
                                                  &qe, &te);
                        bad += sc != p->score || qe != p->qend || te != p->tend;
                    }
                    tsc = now() - t0 < tsc ? now() - t0 : tsc;
                }
            }
            for (int r = 0; r < reps; r++) {
                t0 = now();
                for (size_t k = 0; k < np; k++) {
                    pair_t *p = &pairs[k];
                    int64_t qb, tb;
                    if (p->score == 0)
                        continue;
                    swgpu__ref_start_isa(p->q, p->ql, p->t, p->tl, m, o.gap_open, o.gap_extend,
                                         p->score, p->qend, p->tend, &qb, &tb, isa);
                    bad += qb != p->qbeg || tb != p->tbeg;
                }
                ts = now() - t0 < ts ? now() - t0 : ts;
            }
            for (int r = 0; r < reps; r++) {
                t0 = now();
                for (size_t k = 0; k < np; k++) {
                    pair_t *p = &pairs[k];
                    if (p->score == 0)
                        continue;
                    a.score = p->score;
                    a.qbeg = p->qbeg;
                    a.tbeg = p->tbeg;
                    a.qend = p->qend;
                    a.tend = p->tend;
                    swgpu__ref_path_isa(p->q, p->ql, p->t, p->tl, m, o.gap_open, o.gap_extend,
                                        &a, isa);
                    bad += !same(&a, &ref[k]);
                }
                tp = now() - t0 < tp ? now() - t0 : tp;
            }
            total = tsc + ts + tp;
            if (isa == SWGPU__ISA_SCALAR)
                base_total = total;
            printf(base_total > 0 ? "| %s | %.1f | %.1f | %.1f | %.1f | %.2fx | %s |\n" :
                   "| %s | %.1f | %.1f | %.1f | %.1f | (%.0f) | %s |\n",
                   isa == SWGPU__ISA_SCALAR ? "before: 32-bit end, scalar begin/path" :
                   swgpu__cpu_isa_name((swgpu__isa_t)isa), 1e6 * tsc / (double)np,
                   1e6 * ts / (double)np, 1e6 * tp / (double)np, 1e6 * total / (double)np,
                   base_total / total, bad ? "NO" : "yes");
            if (bad)
                fprintf(stderr, "align_hits: %s: %zu alignments differ from the scalar ones\n",
                        swgpu__cpu_isa_name((swgpu__isa_t)isa), bad);
        }
    }
    rc = 0;
done:
    for (size_t k = 0; ref && k < np; k++)
        swgpu_aln_free(&ref[k]);
    swgpu_aln_free(&a);
    free(ref);
    free(pairs);
    swgpu_search_result_destroy(res);
    swgpu_seqset_destroy(sub);
    swgpu_seqset_destroy(qs);
    swgpu_db_destroy(db);
    swgpu_matrix_destroy(m);
    return rc;
}
