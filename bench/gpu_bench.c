/*
 * gpu_bench.c - database-scan benchmark of the CUDA engine.
 *
 *   gpu_bench -q QUERIES.fa -d DB.fa[.gz] [-k default,simt,...] [-r REPEATS]
 *             [-m BLOSUM62] [-g 11] [-e 1] [--cfgs "8,16 8,32 ..."] [--pairs]
 *             [--dna FRAGLEN] [--nq N] [--qlen L] [--gpus N]
 *
 * For every kernel: create the engine (database upload, timed), one
 * warm-up scan, then each query scanned REPEATS times (default 3); per
 * query the median scan time, GCUPS (query length x database residues /
 * seconds) and the number of subjects recomputed in 32 bits.  A scan is
 * timed on the host around the engine's synchronous scan() call, so it
 * includes the query upload, the profile build and the score download;
 * kernel_s / kGCUPS are the median CUDA-event time of the scan's kernels
 * alone (resident database).  Totals: scan GCUPS
 * (sum of cells / sum of median times) and the end-to-end wall time
 * (database load + engine creation + one scan per query); with --e2e also
 * swgpu_search over all queries (scan, top hits, alignments, E-values) with
 * the CUDA backend and that kernel, plus the database load.
 * --cfgs: repeat the default kernel with each DPX configuration G,R.
 * --pairs: each query is scanned twice in one scan_many call (two copies;
 * with SWGPU_CUDA_SOLO=1 they make one batch, one query per lane of the
 * query-lane kernel), GCUPS counting both.
 * --dna FRAGLEN: the database file is a genome cut into FRAGLEN pieces and
 * the queries are the first --nq pieces of --qlen of the query file, scored
 * +2/-3 with gaps 5/2 unless -g/-e are given.
 */
#include "search/search.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if SWGPU_HAVE_CUDA
#define ENGINE (&swgpu__engine_cuda)
#else
#define ENGINE ((const swgpu_engine_ops_t *)NULL)
#endif

typedef struct {
    swgpu_db_t db;
    uint8_t *res;
    uint64_t *off;
    uint32_t *orig, *rank;
} bdb_t;

static const uint64_t *sort_key;

static int cmp_idx(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    uint64_t lx = sort_key[x + 1] - sort_key[x], ly = sort_key[y + 1] - sort_key[y];
    if (lx != ly)
        return lx < ly ? -1 : 1;
    return (x > y) - (x < y);
}

/* database sorted by length from sequences given as (offsets, residues) */
static int bdb_make(bdb_t *B, const uint8_t *res, const uint64_t *off, size_t n,
                    swgpu_alphabet_t al)
{
    memset(B, 0, sizeof *B);
    B->orig = malloc(n * sizeof *B->orig);
    B->rank = malloc(n * sizeof *B->rank);
    B->off = malloc((n + 1) * sizeof *B->off);
    B->res = malloc(off[n] ? off[n] : 1);
    if (!B->orig || !B->rank || !B->off || !B->res)
        return -1;
    for (size_t i = 0; i < n; i++)
        B->orig[i] = (uint32_t)i;
    sort_key = off;
    qsort(B->orig, n, sizeof *B->orig, cmp_idx);
    uint64_t o = 0, mx = 0;
    for (size_t k = 0; k < n; k++) {
        uint32_t i = B->orig[k];
        uint64_t l = off[i + 1] - off[i];
        B->rank[i] = (uint32_t)k;
        B->off[k] = o;
        memcpy(B->res + o, res + off[i], l);
        o += l;
        if (l > mx)
            mx = l;
    }
    B->off[n] = o;
    B->db.alphabet = al;
    B->db.n = n;
    B->db.total_res = o;
    B->db.max_len = mx;
    B->db.res = B->res;
    B->db.off = B->off;
    B->db.orig = B->orig;
    B->db.rank = B->rank;
    return 0;
}

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef struct {
    const uint8_t *res;
    size_t len;
} bq_t;

static int n_gpus; /* --gpus: 0 = all visible */
static int pairs;  /* --pairs: each query scanned as two copies in one scan_many call */

static int sink_none(void *user, size_t i, const int32_t *scores)
{
    (void)user;
    (void)i;
    (void)scores;
    return 0;
}

/* one scan of query Qi: alone, or (--pairs) as two copies in one scan_many call */
static int scan_one(void *st, const swgpu__query_t *Qi, int32_t *scores, swgpu_scan_stats_t *s1)
{
    if (!pairs)
        return ENGINE->scan(st, Qi, scores, s1);
    swgpu__query_t two[2] = {*Qi, *Qi};
    return ENGINE->scan_many(st, 2, two, sink_none, NULL, NULL, s1);
}

/* the whole search (scan, top hits, alignments, E-values) through swgpu_search */
static double end_to_end(const char *kernel, const swgpu_seqset_t *qs, const swgpu_db_t *db,
                         const swgpu_matrix_t *m, int open, int ext, double *align_s)
{
    swgpu_opts_t o;
    swgpu_opts_init(&o, swgpu_db_alphabet(db));
    o.gap_open = open;
    o.gap_extend = ext;
    o.backend = SWGPU_BACKEND_CUDA;
    o.kernel = kernel;
    o.gpus = n_gpus;
    swgpu_search_result_t *r = NULL;
    double t0 = swgpu__now();
    if (swgpu_search(qs, db, m, &o, &r)) {
        fprintf(stderr, "gpu_bench: search: %s\n", swgpu_last_error());
        return -1;
    }
    double t = swgpu__now() - t0;
    *align_s = r->align_seconds;
    swgpu_search_result_destroy(r);
    return t;
}

static const swgpu_seqset_t *e2e_queries; /* NULL: no end-to-end run */

static int run_kernel(const char *kernel, const char *label, const swgpu_db_t *db, const bq_t *Q,
                      size_t nq, const swgpu_matrix_t *m, int open, int ext, int repeats,
                      double load_s)
{
    swgpu_opts_t o;
    memset(&o, 0, sizeof o);
    o.gap_open = open;
    o.gap_extend = ext;
    o.kernel = kernel;
    o.top_n = 10;
    o.gpus = n_gpus;
    void *st = NULL;
    double t0 = swgpu__now();
    int rc = ENGINE->create(db, m, &o, &st);
    if (rc) {
        fprintf(stderr, "gpu_bench: %s: %s\n", label, swgpu_last_error());
        return 1;
    }
    double create_s = swgpu__now() - t0;
    int32_t *scores = malloc(db->n * sizeof *scores);
    swgpu_scan_stats_t ss = {0, 0, 0};
    swgpu__query_t Q0 = swgpu__query_plain(Q[0].res, Q[0].len);
    if ((rc = scan_one(st, &Q0, scores, &ss))) { /* warm-up */
        fprintf(stderr, "gpu_bench: %s: %s\n", label, swgpu_last_error());
        return 1;
    }
    printf("\n## kernel %s: %zu subjects, %llu residues, upload %.3f s\n", label,
           (size_t)db->n, (unsigned long long)db->total_res, create_s);
    printf("%-6s %8s %10s %9s %9s %10s %9s\n", "query", "length", "scan_s", "GCUPS", "overflow",
           "kernel_s", "kGCUPS");
    double sum_s = 0, cells = 0, once_s = 0, sum_k = 0;
    uint64_t sum_ov = 0;
    double *ts = malloc(repeats * sizeof *ts), *tk = malloc(repeats * sizeof *tk);
    for (size_t i = 0; i < nq; i++) {
        uint64_t ov = 0;
        for (int r = 0; r < repeats; r++) {
            swgpu_scan_stats_t s1 = {0, 0, 0};
            double a = swgpu__now();
            swgpu__query_t Qi = swgpu__query_plain(Q[i].res, Q[i].len);
            if ((rc = scan_one(st, &Qi, scores, &s1))) {
                fprintf(stderr, "gpu_bench: %s: %s\n", label, swgpu_last_error());
                return 1;
            }
            ts[r] = swgpu__now() - a;
            tk[r] = s1.gpu_seconds;
            ov = s1.overflows;
        }
        once_s += ts[0];
        qsort(ts, repeats, sizeof *ts, cmp_dbl);
        qsort(tk, repeats, sizeof *tk, cmp_dbl);
        double med = ts[repeats / 2], medk = tk[repeats / 2];
        double c = (double)Q[i].len * (double)db->total_res * (pairs ? 2 : 1);
        sum_s += med;
        sum_k += medk;
        cells += c;
        sum_ov += ov;
        printf("%-6zu %8zu %10.4f %9.1f %9llu %10.4f %9.1f\n", i + 1, Q[i].len, med,
               c / med * 1e-9, (unsigned long long)ov, medk, medk > 0 ? c / medk * 1e-9 : 0.0);
    }
    printf("TOTAL %-9s scan %.3f s, %.1f GCUPS, overflows %llu, end-to-end %.2f s "
           "(load %.2f + upload %.2f + scans %.2f)\n",
           label, sum_s, cells / sum_s * 1e-9, (unsigned long long)sum_ov,
           load_s + create_s + once_s, load_s, create_s, once_s);
    if (sum_k > 0)
        printf("KERNEL %-8s %.3f s, %.1f GCUPS (CUDA events around the kernels; excludes the "
               "query upload and profile build, the score download and the 32-bit recompute)\n",
               label, sum_k, cells / sum_k * 1e-9);
    free(ts);
    free(tk);
    free(scores);
    ENGINE->destroy(st);
    if (e2e_queries) {
        double al = 0, t = end_to_end(kernel, e2e_queries, db, m, open, ext, &al);
        if (t < 0)
            return 1;
        printf("E2E   %-9s swgpu_search %.2f s (alignments %.2f s) + load %.2f s = %.2f s\n",
               label, t, al, load_s, t + load_s);
    }
    fflush(stdout);
    return 0;
}

int main(int argc, char **argv)
{
    const char *qpath = NULL, *dpath = NULL, *kernels = "default", *mname = NULL, *cfgs = NULL;
    int repeats = 3, open = -1, ext = -1, frag = 0, nqmax = 1 << 30, qcut = 0, e2e = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-q") && v) qpath = v, i++;
        else if (!strcmp(a, "-d") && v) dpath = v, i++;
        else if (!strcmp(a, "-k") && v) kernels = v, i++;
        else if (!strcmp(a, "-r") && v) repeats = atoi(v), i++;
        else if (!strcmp(a, "-m") && v) mname = v, i++;
        else if (!strcmp(a, "-g") && v) open = atoi(v), i++;
        else if (!strcmp(a, "-e") && v) ext = atoi(v), i++;
        else if (!strcmp(a, "--cfgs") && v) cfgs = v, i++;
        else if (!strcmp(a, "--pairs")) pairs = 1;
        else if (!strcmp(a, "--dna") && v) frag = atoi(v), i++;
        else if (!strcmp(a, "--nq") && v) nqmax = atoi(v), i++;
        else if (!strcmp(a, "--qlen") && v) qcut = atoi(v), i++;
        else if (!strcmp(a, "--e2e")) e2e = 1;
        else if (!strcmp(a, "--gpus") && v) n_gpus = atoi(v), i++;
        else {
            fprintf(stderr, "usage: gpu_bench -q QUERIES -d DB [-k K1,K2] [-r N] [-m MATRIX] "
                            "[-g OPEN] [-e EXT] [--gpus N] [--cfgs \"G,R ...\"] [--pairs] [--dna FRAGLEN] [--nq N] "
                            "[--qlen L] [--e2e]\n");
            return 1;
        }
    }
#if !SWGPU_HAVE_CUDA
    fprintf(stderr, "gpu_bench: built without CUDA\n");
    return 1;
#endif
    if (!qpath || !dpath || repeats < 1) {
        fprintf(stderr, "gpu_bench: -q and -d are required\n");
        return 1;
    }
    swgpu_alphabet_t al = frag ? SWGPU_DNA : SWGPU_PROTEIN;
    swgpu_matrix_t *m = NULL;
    int rc = frag && !mname ? swgpu_matrix_dna(2, -3, &m)
                            : swgpu_matrix_builtin(mname ? mname : "BLOSUM62", &m);
    if (rc) {
        fprintf(stderr, "gpu_bench: %s\n", swgpu_last_error());
        return 1;
    }
    if (open < 0) open = frag ? 5 : 11;
    if (ext < 0) ext = frag ? 2 : 1;

    double t0 = swgpu__now();
    swgpu_seqset_t *qs = NULL, *ds = NULL;
    if (swgpu_seqset_read(qpath, al, &qs, NULL) || swgpu_seqset_read(dpath, al, &ds, NULL)) {
        fprintf(stderr, "gpu_bench: %s\n", swgpu_last_error());
        return 1;
    }
    bdb_t B;
    size_t nq = swgpu_seqset_size(qs);
    bq_t *Q = calloc(nq + 64, sizeof *Q);
    if (frag) {
        /* genome pieces of frag residues as the database */
        size_t n = 0;
        for (size_t i = 0; i < swgpu_seqset_size(ds); i++) {
            swgpu_seq_t s;
            swgpu_seqset_get(ds, i, &s);
            n += (s.len + frag - 1) / frag;
        }
        uint64_t *off = malloc((n + 1) * sizeof *off);
        const uint8_t *base = NULL;
        size_t k = 0;
        for (size_t i = 0; i < swgpu_seqset_size(ds); i++) {
            swgpu_seq_t s;
            swgpu_seqset_get(ds, i, &s);
            if (!base)
                base = s.res;
            for (size_t p = 0; p < s.len; p += frag)
                off[k++] = (uint64_t)(s.res + p - base);
        }
        off[n] = (uint64_t)(ds->res + ds->off[ds->n] - base);
        if (bdb_make(&B, base, off, n, al))
            return 1;
        free(off);
        /* queries: the first pieces of qcut residues of the query file */
        size_t k2 = 0;
        int ql = qcut > 0 ? qcut : 2000;
        for (size_t i = 0; i < nq && (int)k2 < nqmax; i++) {
            swgpu_seq_t s;
            swgpu_seqset_get(qs, i, &s);
            for (size_t p = 0; p + ql <= s.len && (int)k2 < nqmax && k2 < nq + 63; p += ql) {
                Q[k2].res = s.res + p;
                Q[k2].len = ql;
                k2++;
            }
        }
        nq = k2;
    } else {
        swgpu_db_t *pdb = NULL;
        if (swgpu_db_from_seqset(ds, &pdb)) {
            fprintf(stderr, "gpu_bench: %s\n", swgpu_last_error());
            return 1;
        }
        B.db = *pdb; /* shallow view; pdb stays alive until exit */
        if ((size_t)nqmax < nq)
            nq = nqmax;
        for (size_t i = 0; i < nq; i++) {
            swgpu_seq_t s;
            swgpu_seqset_get(qs, i, &s);
            Q[i].res = s.res;
            Q[i].len = qcut > 0 && s.len > (size_t)qcut ? (size_t)qcut : s.len;
        }
    }
    double load_s = swgpu__now() - t0;
    if (e2e && !frag)
        e2e_queries = qs;
    if (nq == 0) {
        fprintf(stderr, "gpu_bench: no queries\n");
        return 1;
    }
    printf("# gpu_bench: db %s (%zu seqs, %llu residues, longest %llu), queries %s (%zu), "
           "%s %d/%d, %d repeats, load %.2f s\n",
           dpath, (size_t)B.db.n, (unsigned long long)B.db.total_res,
           (unsigned long long)B.db.max_len, qpath, nq, swgpu_matrix_name(m), open, ext,
           repeats, load_s);

    int fails = 0;
    char kbuf[256];
    snprintf(kbuf, sizeof kbuf, "%s", kernels);
    for (char *k = strtok(kbuf, ","); k; k = strtok(NULL, ","))
        fails += run_kernel(strcmp(k, "default") ? k : NULL, k, &B.db, Q, nq, m, open, ext, repeats,
                            load_s);
    if (cfgs) {
        char cbuf[512];
        snprintf(cbuf, sizeof cbuf, "%s", cfgs);
        for (char *c = strtok(cbuf, " "); c; c = strtok(NULL, " ")) {
            char label[64];
            snprintf(label, sizeof label, "default[%s]", c);
            setenv("SWGPU_CUDA_CFG", c, 1);
            fails += run_kernel(NULL, label, &B.db, Q, nq, m, open, ext, repeats, load_s);
        }
        unsetenv("SWGPU_CUDA_CFG");
    }
    swgpu_matrix_destroy(m);
    swgpu_seqset_destroy(qs);
    swgpu_seqset_destroy(ds);
    return fails ? 1 : 0;
}
