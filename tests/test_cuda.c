/*
 * test_cuda.c - the CUDA backend against the scalar recurrence.
 *
 * Part 1 (every build with CUDA sources, no GPU needed): the host model of
 * the group kernels (swgpu__cu_emulate runs the kernels' per-thread code on
 * the CPU) for every DPX configuration and the intra kernel.
 * Part 2 (a GPU present, else SKIP "no CUDA device"): the engine with every
 * kernel family, several matrices and gap pairs, protein and DNA, edge-case
 * lengths, overflow-forcing pairs, and a database streamed under a tiny
 * memory budget.  Every score must equal the reference exactly.  The
 * profiles built on the GPU must equal the host builder's byte for byte.
 * DNA on both strands: the GPU's hits equal the CPU's (part2_strands).
 * Part 3 (a GPU present): every allocation of the engine made to fail in
 * turn (SWGPU_CUDA_FAIL_ALLOC): the right hits or SWGPU_ENOMEM, nothing else.
 *
 * PSSM queries (a PSSM's score rows instead of a query's residues) in both
 * parts: the host model on PSSM profiles (part1_pssm) and, on a GPU, every
 * kernel family, the many-query batches mixing PSSMs and plain queries,
 * overflows, a split scan, a streamed database, swgpu_search_pssm against
 * the CPU backend and psiblast's fixture (part2_pssm).
 *
 * SWGPU_TEST_SMALL=1 shrinks part 2 (for compute-sanitizer runs);
 * SWGPU_TEST_STREAMED=1 runs only its streamed-database cases.
 */
#include "search/search.h"
#include "align/align.h"
#include "tap.h"
#include "testlib.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if SWGPU_HAVE_CUDA
#include "cuda/kernels.cuh"

/* ------------------------------------------------------------ reference */

/* the scalar reference (src/ref), the oracle of every backend */
static int32_t ref_score(const uint8_t *q, size_t m, const uint8_t *t, size_t n,
                         const swgpu_matrix_t *mat, int open, int ext)
{
    int32_t sc = -1;
    int rc = swgpu__ref_score(q, m, t, n, mat, open, ext, &sc, NULL, NULL);
    if (rc)
        fprintf(stderr, "swgpu__ref_score: %s\n", swgpu_last_error());
    return sc;
}

/* the same for a query given as swgpu__query_t (a PSSM's rows) */
static int32_t ref_score_q(const swgpu__query_t *q, const uint8_t *t, size_t n,
                           const swgpu_matrix_t *mat, int open, int ext)
{
    int32_t sc = -1;
    int rc = swgpu__ref_score_q(q, t, n, mat, open, ext, &sc, NULL, NULL);
    if (rc)
        fprintf(stderr, "swgpu__ref_score_q: %s\n", swgpu_last_error());
    return sc;
}

/* -------------------------------------------------------------- helpers */

static uint64_t seed = 20251113;

static void mat_random(swgpu_matrix_t *m, int lo, int hi, int diag_bonus)
{
    memset(m, 0, sizeof *m);
    snprintf(m->name, sizeof m->name, "random%d_%d", lo, hi);
    m->alphabet = SWGPU_PROTEIN;
    m->min = lo;
    m->max = hi;
    for (int a = 0; a < 32; a++)
        for (int b = 0; b <= a; b++) {
            int v = lo + (int)(tap_rand(&seed) % (uint64_t)(hi - lo + 1));
            if (a == b && v < hi - diag_bonus)
                v = hi - (int)(tap_rand(&seed) % (uint64_t)(diag_bonus + 1));
            m->s[a][b] = m->s[b][a] = v;
        }
}

static void mat_dna(swgpu_matrix_t *m, int match, int mismatch)
{
    memset(m, 0, sizeof *m);
    snprintf(m->name, sizeof m->name, "dna%d/%d", match, mismatch);
    m->alphabet = SWGPU_DNA;
    for (int a = 0; a < 32; a++)
        for (int b = 0; b < 32; b++)
            m->s[a][b] = (a == b && a < 4) ? match : mismatch;
    m->min = mismatch;
    m->max = match;
    m->match = match;
    m->mismatch = mismatch;
}

/* a residue: protein (dna 0; 1 in 40 outside the 20 standard letters),
 * DNA (1), protein of the 20 standard letters only (2) */
static uint8_t rand_res(int dna)
{
    uint64_t r = tap_rand(&seed);
    if (dna == 2)
        return (uint8_t)(r % 20);
    if (dna)
        return (uint8_t)(r % 50 == 0 ? 4 + r / 50 % 11 : r % 4);
    return (uint8_t)(r % 40 == 0 ? 20 + r / 40 % 7 : r % 20);
}

/* a database of n sequences with lengths from lens (cycled) or random */
typedef struct {
    swgpu_db_t db;
    uint8_t *res;
    uint64_t *off;
    uint32_t *orig, *rank;
    char *names;         /* "s<i>\0\0" per sequence: searches with alignments read ids */
    uint64_t *name_off;
} testdb_t;

static int cmp_len(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static void db_make(testdb_t *T, const uint32_t *lens, size_t n, int dna, const uint8_t *copy_of,
                    size_t copy_len)
{
    uint32_t *L = malloc(n * sizeof *L);
    memcpy(L, lens, n * sizeof *L);
    qsort(L, n, sizeof *L, cmp_len);
    uint64_t tot = 0, mx = 0;
    for (size_t i = 0; i < n; i++) {
        tot += L[i];
        if (L[i] > mx) mx = L[i];
    }
    memset(T, 0, sizeof *T);
    T->res = malloc(tot ? tot : 1);
    T->off = malloc((n + 1) * sizeof *T->off);
    T->orig = malloc(n * sizeof *T->orig);
    T->rank = malloc(n * sizeof *T->rank);
    T->names = malloc(n * 16 + 1);
    T->name_off = malloc((n ? n : 1) * sizeof *T->name_off);
    uint64_t o = 0, no = 0;
    for (size_t i = 0; i < n; i++) {
        T->off[i] = o;
        for (uint32_t j = 0; j < L[i]; j++)
            T->res[o + j] = (copy_of && j < copy_len && (i % 3 == 0)) ? copy_of[j] : rand_res(dna);
        o += L[i];
        T->orig[i] = T->rank[i] = (uint32_t)i;
        T->name_off[i] = no;
        no += (uint64_t)sprintf(T->names + no, "s%zu", i) + 1;
        T->names[no++] = '\0'; /* no description */
    }
    T->off[n] = o;
    T->db.alphabet = dna == 1 ? SWGPU_DNA : SWGPU_PROTEIN;
    T->db.n = n;
    T->db.total_res = tot;
    T->db.max_len = mx;
    T->db.res = T->res;
    T->db.off = T->off;
    T->db.orig = T->orig;
    T->db.rank = T->rank;
    T->db.names = T->names;
    T->db.name_off = T->name_off;
    free(L);
}

static void db_free(testdb_t *T)
{
    free(T->res);
    free(T->off);
    free(T->orig);
    free(T->rank);
    free(T->names);
    free(T->name_off);
}

/* s[0..n) by rand_res.  Not testlib's tl_rand_codes: the residues include
 * rare ambiguity codes and come from this file's one seed, drawn by every
 * part in turn, so this test keeps its own to keep its data. */
static void rand_seq(uint8_t *s, size_t n, int dna)
{
    for (size_t i = 0; i < n; i++)
        s[i] = rand_res(dna);
}

/* A PSSM over the residues q (codes): position i scores m's row of q[i]
 * times scale (m NULL: random scores in [lo, hi], about 1 in 60 of them
 * psiblast's forbidden -32768).  B, Z, J, U, O then score -32768 by the
 * PSSM rule (swgpu.h). */
static swgpu_pssm_t *pssm_make(const uint8_t *q, size_t len, const swgpu_matrix_t *m, int scale,
                               int lo, int hi)
{
    int32_t *sc = malloc(len * 20 * sizeof *sc);
    char *res = malloc(len + 1);
    swgpu_pssm_t *p = NULL;
    for (size_t i = 0; i < len; i++) {
        res[i] = swgpu_decode(SWGPU_PROTEIN, q[i]);
        for (int c = 0; c < 20; c++) {
            if (m)
                sc[i * 20 + c] = m->s[q[i]][c] * scale;
            else if (tap_rand(&seed) % 60 == 0)
                sc[i * 20 + c] = SWGPU_PSSM_FORBIDDEN;
            else
                sc[i * 20 + c] = lo + (int32_t)(tap_rand(&seed) % (uint64_t)(hi - lo + 1));
        }
    }
    if (swgpu_pssm_create("p", res, sc, len, &p) < 0)
        fprintf(stderr, "pssm_make: %s\n", swgpu_last_error());
    free(sc);
    free(res);
    return p;
}

/* a PSSM's rows as int16, the profile builders' matrix of qlen rows */
static int16_t *rows16(const swgpu__query_t *Q)
{
    int16_t *r = malloc(Q->len * 32 * sizeof *r + 2);
    for (size_t k = 0; k < Q->len * 32; k++)
        r[k] = (int16_t)Q->rows[k];
    return r;
}

/* pack a db as the kernels want it (words, word offsets, lengths) */
static void pack(const swgpu_db_t *db, uint32_t **res, uint32_t **woff, uint32_t **len)
{
    uint64_t w = 0;
    *woff = malloc(db->n * sizeof **woff);
    *len = malloc(db->n * sizeof **len);
    for (uint64_t k = 0; k < db->n; k++) {
        (*woff)[k] = (uint32_t)w;
        (*len)[k] = (uint32_t)(db->off[k + 1] - db->off[k]);
        w += ((*len)[k] + 3) / 4;
    }
    *res = calloc(w ? w : 1, sizeof **res);
    for (uint64_t k = 0; k < db->n; k++)
        for (uint32_t j = 0; j < (((*len)[k] + 3) / 4) * 4; j++) {
            uint32_t c = j < (*len)[k] ? db->res[db->off[k] + j] : SWGPU_CU_PAD;
            (*res)[(*woff)[k] + j / 4] |= c << (8 * (j % 4));
        }
}

/* ------------------------------------------------- part 1: host model */

static void model_case(const swgpu_db_t *db, const uint8_t *q, size_t qlen,
                       const swgpu_matrix_t *m, int open, int ext, const char *what)
{
    uint32_t *res, *woff, *len;
    int16_t mat[32 * 32];
    int32_t *want = malloc(db->n * sizeof *want), *got = malloc(db->n * sizeof *got);
    int ncfg;
    const swgpu_cu_cfg_t *cfg = swgpu__cu_dpx_configs(&ncfg);
    pack(db, &res, &woff, &len);
    for (int a = 0; a < 32; a++)
        for (int r = 0; r < 32; r++)
            mat[32 * a + r] = (int16_t)m->s[a][r];
    for (uint64_t k = 0; k < db->n; k++)
        want[k] = ref_score(q, qlen, db->res + db->off[k], db->off[k + 1] - db->off[k], m, open,
                            ext);
    int sat = 32767 - m->max - 2 * (open + ext); /* the carried form holds H + 2oe */
    for (int c = -1; c < ncfg; c++) {
        swgpu_cu_cfg_t cf = c < 0 ? (swgpu_cu_cfg_t){0, 0, 0} : cfg[c];
        int rc = swgpu__cu_emulate(c < 0 ? 1 : 0, cf, res, woff, len, (uint32_t)db->n, q,
                                   (int)qlen, mat, open + ext, ext, got);
        CHECK_EQ_INT(rc, 0);
        int bad = 0;
        for (uint64_t k = 0; k < db->n && bad < 3; k++) {
            int ok = c < 0 ? got[k] == want[k]
                           : (want[k] < sat ? got[k] == want[k] : got[k] >= sat);
            if (!ok) {
                bad++;
                CHECK(0, "model %s G=%d R=%d (%s, qlen %zu): subject %llu (len %u) "
                         "scored %d, expected %d", c < 0 ? "intra" : "dpx", cf.G, cf.R, what,
                      qlen, (unsigned long long)k, len[k], got[k], want[k]);
            }
        }
        if (!bad)
            tap_passed++;
    }
    free(res);
    free(woff);
    free(len);
    free(want);
    free(got);
}

/* the query-lane kernel's host model: lanes of several queries one after
 * another (each starting on a slot of its own, in any thread), lanes of
 * different lengths, an idle lane; every query-lane configuration against
 * the reference.  lane[i]: the lane of query i (queries of a lane in order). */
static void model_case_qp(const swgpu_db_t *db, const uint8_t *q, const size_t *qls, size_t nq,
                          const int *lane, const swgpu_matrix_t *m, int open, int ext,
                          const char *what)
{
    uint32_t *res, *woff, *len;
    int16_t mat[32 * 32];
    int ncfg;
    const swgpu_cu_cfg_t *cfg = swgpu__cu_qp_configs(&ncfg);
    pack(db, &res, &woff, &len);
    for (int a = 0; a < 32; a++)
        for (int r = 0; r < 32; r++)
            mat[32 * a + r] = (int16_t)m->s[a][r];
    int32_t **want = malloc(nq * sizeof *want);
    int32_t *got = malloc(nq * db->n * sizeof *got);
    swgpu_cu_qpq_t *qt = calloc(nq, sizeof *qt);
    for (size_t i = 0; i < nq; i++) {
        qt[i].q = q + (i * 41) % 300;
        qt[i].mat = mat;
        qt[i].qlen = (int32_t)qls[i];
        want[i] = malloc(db->n * sizeof **want);
        for (uint64_t k = 0; k < db->n; k++)
            want[i][k] = ref_score(qt[i].q, qls[i], db->res + db->off[k],
                                   db->off[k + 1] - db->off[k], m, open, ext);
    }
    int sat = 32767 - m->max - 2 * (open + ext);
    CHECK_EQ_INT(ncfg, 5); /* groups of 8 at R = 16..32 */
    for (int c = 0; c < ncfg; c++) {
        CHECK(swgpu__cu_qp_has(cfg[c]), "lane configuration %d listed but not found", c);
        const int G = cfg[c].G, R = cfg[c].R, W = G * R;
        uint32_t nsl[2] = {0, 0};
        for (size_t i = 0; i < nq; i++)
            nsl[lane[i]] += (uint32_t)((qls[i] + R - 1) / R);
        const uint32_t m0 = nsl[0] > nsl[1] ? nsl[0] : nsl[1], np = (m0 + G - 1) / G;
        swgpu_cu_pass_t *pass = calloc(np, sizeof *pass);
        swgpu_cu_pbuild_t *pb = calloc(np, sizeof *pb);
        uint32_t *tabs = malloc((size_t)np * 32 * W * sizeof *tabs);
        for (uint32_t p = 0; p < np; p++) {
            pass[p].starts = 0xffffffffu;
            for (int h = 0; h < 2; h++)
                for (int t = 0; t < G; t++) {
                    pass[p].qi[h][t] = 0xffff;
                    pb[p].qi[h][t] = -1;
                }
        }
        uint32_t at[2] = {0, 0};
        for (size_t i = 0; i < nq; i++) {
            const int h = lane[i];
            const uint32_t ns = (uint32_t)((qls[i] + R - 1) / R);
            for (uint32_t x = 0; x < ns; x++, at[h]++) {
                const uint32_t p = at[h] / G, t = at[h] % G;
                pass[p].qi[h][t] = (uint16_t)i;
                if (x > 0)
                    pass[p].starts &= ~(1u << (2 * t + h));
                pb[p].qi[h][t] = (int32_t)i;
                pb[p].c0[h][t] = (int32_t)(x * R);
            }
        }
        for (uint32_t p = 0; p < np; p++) {
            swgpu__cu_qp_prof(cfg[c], qt, &pb[p], tabs + (size_t)p * 32 * W);
            pass[p].prof = tabs + (size_t)p * 32 * W;
        }
        swgpu_cu_job_t job = {0, np};
        memset(got, 0, nq * db->n * sizeof *got);
        int rc = swgpu__cu_emulate_qp(cfg[c], res, woff, len, (uint32_t)db->n, &job, 1, pass, got,
                                      db->n, open + ext, ext);
        CHECK_EQ_INT(rc, 0);
        int bad = 0;
        for (size_t i = 0; i < nq; i++)
            for (uint64_t k = 0; k < db->n && bad < 3; k++) {
                const int32_t g = got[i * db->n + k];
                const int ok = want[i][k] < sat ? g == want[i][k] : g >= sat;
                if (!ok) {
                    bad++;
                    CHECK(0, "model lanes G=%d R=%d P=%d (%s): query %zu (len %zu, lane %d) "
                             "subject %llu (len %u) scored %d, expected %d", G, R, cfg[c].P,
                          what, i, qls[i], lane[i], (unsigned long long)k, len[k], g, want[i][k]);
                }
            }
        if (!bad)
            tap_passed++;
        free(pass);
        free(pb);
        free(tabs);
    }
    for (size_t i = 0; i < nq; i++)
        free(want[i]);
    free(want);
    free(got);
    free(qt);
    free(res);
    free(woff);
    free(len);
}

/* the host model with a PSSM query: the profiles built from its rows (no
 * codes), every DPX configuration and the intra kernel */
static void model_case_pssm(const swgpu_db_t *db, const swgpu__query_t *Q,
                            const swgpu_matrix_t *m, int open, int ext, const char *what)
{
    uint32_t *res, *woff, *len;
    int16_t *mat = rows16(Q);
    int32_t *want = malloc(db->n * sizeof *want), *got = malloc(db->n * sizeof *got);
    int ncfg;
    const swgpu_cu_cfg_t *cfg = swgpu__cu_dpx_configs(&ncfg);
    pack(db, &res, &woff, &len);
    for (uint64_t k = 0; k < db->n; k++)
        want[k] = ref_score_q(Q, db->res + db->off[k], db->off[k + 1] - db->off[k], m, open, ext);
    int sat = 32767 - (Q->smax > 0 ? Q->smax : 0) - 2 * (open + ext);
    for (int c = -1; c < ncfg; c++) {
        swgpu_cu_cfg_t cf = c < 0 ? (swgpu_cu_cfg_t){0, 0, 0} : cfg[c];
        int rc = swgpu__cu_emulate(c < 0 ? 1 : 0, cf, res, woff, len, (uint32_t)db->n, NULL,
                                   (int)Q->len, mat, open + ext, ext, got);
        CHECK_EQ_INT(rc, 0);
        int bad = 0;
        for (uint64_t k = 0; k < db->n && bad < 3; k++) {
            int ok = c < 0 ? got[k] == want[k]
                           : (want[k] < sat ? got[k] == want[k] : got[k] >= sat);
            if (!ok) {
                bad++;
                CHECK(0, "model %s G=%d R=%d P=%d (%s, PSSM of %zu): subject %llu (len %u) "
                         "scored %d, expected %d", c < 0 ? "intra" : "dpx", cf.G, cf.R, cf.P,
                      what, Q->len, (unsigned long long)k, len[k], got[k], want[k]);
            }
        }
        if (!bad)
            tap_passed++;
    }
    free(res);
    free(woff);
    free(len);
    free(want);
    free(got);
    free(mat);
}

/* PSSM queries in the host model: BLOSUM62's rows (the plain scores on
 * subjects of the 20 standard letters), random rows with psiblast's
 * forbidden -32768 against subjects of every letter (forbidden pairs in
 * the 16-bit lanes), large scores (saturating lanes reported) */
static void part1_pssm(void)
{
    swgpu_matrix_t *b62 = NULL;
    testdb_t T;
    uint8_t q[1100];
    if (swgpu_matrix_builtin("BLOSUM62", &b62) < 0)
        return;
    rand_seq(q, sizeof q, 2);
    uint32_t lens[] = {1, 2, 3, 7, 8, 9, 31, 32, 33, 64, 100, 128, 129, 200, 256, 257, 333, 512,
                       513, 700};
    db_make(&T, lens, sizeof lens / sizeof lens[0], 2, q, 600);
    size_t qls[] = {1, 97, 257, 1025};
    for (size_t i = 0; i < sizeof qls / sizeof qls[0]; i++) {
        swgpu_pssm_t *p = pssm_make(q, qls[i], b62, 1, 0, 0);
        swgpu__query_t Q;
        if (!p)
            continue;
        swgpu__pssm_query(p, &Q);
        /* the rows are the plain query's scores here */
        int same = 1;
        for (uint64_t k = 0; k < T.db.n; k++)
            same &= ref_score_q(&Q, T.db.res + T.db.off[k], T.db.off[k + 1] - T.db.off[k], b62,
                                11, 1) == ref_score(q, qls[i], T.db.res + T.db.off[k],
                                                    T.db.off[k + 1] - T.db.off[k], b62, 11, 1);
        CHECK(same, "BLOSUM62 rows of %zu residues: the reference differs from the plain query",
              qls[i]);
        model_case_pssm(&T.db, &Q, b62, 11, 1, "BLOSUM62 rows");
        swgpu_pssm_destroy(p);
    }
    db_free(&T);
    db_make(&T, lens, sizeof lens / sizeof lens[0], 0, q, 600);
    for (size_t i = 0; i < sizeof qls / sizeof qls[0]; i++) {
        swgpu_pssm_t *p = pssm_make(q, qls[i], NULL, 1, -6, 9);
        swgpu__query_t Q;
        if (!p)
            continue;
        swgpu__pssm_query(p, &Q);
        model_case_pssm(&T.db, &Q, b62, 11, 1, "random rows");
        model_case_pssm(&T.db, &Q, b62, 3, 3, "random rows 3/3");
        swgpu_pssm_destroy(p);
    }
    db_free(&T);
    uint32_t lb[] = {600, 700, 900, 1000, 1100, 1100, 50, 10};
    db_make(&T, lb, sizeof lb / sizeof lb[0], 0, q, 1100);
    {
        swgpu_pssm_t *p = pssm_make(q, 1100, b62, 60, 0, 0); /* up to 660 a residue */
        swgpu__query_t Q;
        if (p) {
            swgpu__pssm_query(p, &Q);
            model_case_pssm(&T.db, &Q, b62, 11, 1, "large scores");
            swgpu_pssm_destroy(p);
        }
    }
    db_free(&T);
    swgpu_matrix_destroy(b62);
}

static void part1(void)
{
    swgpu_matrix_t prot, dna, big;
    mat_random(&prot, -4, 11, 6);
    mat_dna(&dna, 2, -3);
    mat_random(&big, -40, 120, 20);
    uint8_t q[1200], q2[700];
    rand_seq(q, sizeof q, 0);
    rand_seq(q2, sizeof q2, 1);

    /* random protein subjects, edge lengths */
    uint32_t lens[] = {1, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 127,
                       128, 129, 200, 255, 256, 257, 300, 333, 400, 511, 512, 513};
    testdb_t T;
    db_make(&T, lens, sizeof lens / sizeof lens[0], 0, q, 300);
    size_t qls[] = {1, 2, 7, 96, 97, 160, 255, 256, 257, 512, 513, 1025};
    for (size_t i = 0; i < sizeof qls / sizeof qls[0]; i++)
        model_case(&T.db, q, qls[i], &prot, 11, 1, "protein 11/1");
    model_case(&T.db, q, 300, &prot, 10, 2, "protein 10/2");
    model_case(&T.db, q, 300, &prot, 0, 1, "protein 0/1");
    model_case(&T.db, q, 300, &prot, 3, 3, "protein 3/3");
    {
        /* lane 0: four queries one after another, lane 1: three, shorter in all */
        size_t ql[] = {97, 300, 7, 513, 1, 16, 33};
        int ln[] = {0, 0, 0, 1, 1, 0, 1};
        model_case_qp(&T.db, q, ql, 7, ln, &prot, 11, 1, "lanes 0,0,0,0 / 1,1,1");
        size_t q1[] = {257};
        int l1[] = {1};
        model_case_qp(&T.db, q, q1, 1, l1, &prot, 10, 2, "one query, lane 0 idle");
        size_t q2[] = {160, 161};
        int l2[] = {0, 1};
        model_case_qp(&T.db, q, q2, 2, l2, &prot, 3, 3, "a pair");
    }
    db_free(&T);

    /* overflow-forcing: large scores, copies of the query */
    uint32_t lb[] = {600, 700, 900, 1000, 1100, 1150, 1200, 1200, 50, 10};
    db_make(&T, lb, sizeof lb / sizeof lb[0], 0, q, 1200);
    model_case(&T.db, q, 1200, &big, 11, 1, "large scores");
    {
        /* saturating lanes: a long query and copies of it, two gap costs */
        size_t ql[] = {1200, 600, 700};
        int ln[] = {0, 1, 1};
        model_case_qp(&T.db, q, ql, 3, ln, &big, 30, 2, "lanes, large scores 30/2");
        model_case_qp(&T.db, q, ql, 3, ln, &big, 11, 1, "lanes, large scores 11/1");
    }
    db_free(&T);

    /* DNA */
    uint32_t ld[] = {1, 4, 10, 50, 100, 250, 300, 650, 700, 701};
    db_make(&T, ld, sizeof ld / sizeof ld[0], 1, q2, 700);
    model_case(&T.db, q2, 700, &dna, 5, 2, "dna 5/2");
    model_case(&T.db, q2, 129, &dna, 5, 2, "dna 5/2");
    db_free(&T);
}

/* ------------------------------------------------------ part 2: GPU */

static const char *kernels[] = {NULL, "intra", "simt", "vector", "scan"};
enum { NKERN = sizeof kernels / sizeof kernels[0] };

/* log lines of the engine (to see that a database was streamed) */
static char last_info[256];
static int saw_lanes; /* a "lanes of" plan was logged (query lanes ran) */
static size_t ahead_offered; /* queries the engine offered ahead of their sink calls */
static void grab_log(swgpu_log_level_t level, const char *msg, void *user)
{
    (void)level;
    (void)user;
    if (strstr(msg, "cuda: lanes of"))
        saw_lanes = 1;
    else if (strstr(msg, "cuda:"))
        snprintf(last_info, sizeof last_info, "%s", msg);
}
static int expect_streaming;
static uint64_t case_gpu_memory; /* swgpu_opts_t.max_gpu_memory of gpu_cases */

/* every kernel family on one case (query Q: residues, or a PSSM's rows);
 * the reference is computed once */
static void gpu_cases_q(const swgpu_db_t *db, const swgpu__query_t *Q, const swgpu_matrix_t *m,
                        int open, int ext, const char *what, uint64_t *overflows)
{
    const size_t qlen = Q->len;
    int32_t *want = malloc(db->n * sizeof *want), *got = malloc(db->n * sizeof *got);
    for (uint64_t k = 0; k < db->n; k++)
        want[k] = ref_score_q(Q, db->res + db->off[k], db->off[k + 1] - db->off[k], m, open, ext);
    for (int kk = 0; kk < NKERN; kk++) {
        const char *kernel = kernels[kk], *kname = kernel ? kernel : "default";
        swgpu_opts_t o;
        memset(&o, 0, sizeof o);
        o.gap_open = open;
        o.gap_extend = ext;
        o.kernel = kernel;
        o.top_n = 10;
        o.max_gpu_memory = case_gpu_memory;
        void *st = NULL;
        int rc = swgpu__engine_cuda.create(db, m, &o, &st);
        CHECK(rc == 0, "create %s (%s): %s", kname, what, swgpu_last_error());
        if (rc)
            continue;
        if (expect_streaming)
            CHECK(strstr(last_info, "streaming") != NULL, "%s (%s): not streamed: %s", kname, what,
                  last_info);
        for (uint64_t k = 0; k < db->n; k++)
            got[k] = -7;
        swgpu_scan_stats_t ss = {0, 0, 0};
        rc = swgpu__engine_cuda.scan(st, Q, got, &ss);
        CHECK(rc == 0, "scan %s (%s): %s", kname, what, swgpu_last_error());
        int bad = 0;
        for (uint64_t k = 0; k < db->n && !rc && bad < 3; k++) {
            if (got[k] != want[k]) {
                bad++;
                CHECK(0, "kernel %s (%s, qlen %zu, gaps %d/%d): subject %llu (len %llu) scored "
                         "%d, expected %d", kname, what, qlen, open, ext, (unsigned long long)k,
                      (unsigned long long)(db->off[k + 1] - db->off[k]), got[k], want[k]);
            }
        }
        if (!rc && !bad)
            tap_passed++;
        CHECK_EQ_INT(ss.cells, (uint64_t)qlen * db->total_res);
        if (overflows && kk == 0)
            *overflows += ss.overflows;
        swgpu__engine_cuda.destroy(st);
    }
    free(want);
    free(got);
}

static void gpu_cases(const swgpu_db_t *db, const uint8_t *q, size_t qlen, const swgpu_matrix_t *m,
                      int open, int ext, const char *what, uint64_t *overflows)
{
    swgpu__query_t Q = swgpu__query_plain(q, qlen);
    gpu_cases_q(db, &Q, m, open, ext, what, overflows);
}

/* scan_many: several queries per call (batched by configuration on the
 * GPU); every query's scores must equal the reference, each query must be
 * handed over exactly once */
typedef struct {
    const swgpu_db_t *db;
    int32_t **want;
    int *seen;
    size_t nq, bad;
    int fail_at; /* the sink fails on this call (-1: never) */
    int calls;
    const char *what;
    /* ahead: the queries offered and not yet sunk (the sink must take them
     * next, in order), how many were offered, the call that fails (-1: never) */
    size_t *next_idx, n_next, at_next, offered;
    int ahead_fail_at, ahead_calls;
} many_ctx_t;

/* a batch offered ahead: its rows must be the queries' scores already,
 * and the sink must take exactly these queries next */
static int many_ahead(void *user, size_t n, const size_t *idx, const int32_t *const *rows)
{
    many_ctx_t *c = user;
    if (c->ahead_fail_at >= 0 && c->ahead_calls++ == c->ahead_fail_at)
        return swgpu__fail(SWGPU_ERANGE, "test ahead: stop");
    if (c->at_next != c->n_next || n < 2) { /* the last batch not all sunk, or one query */
        c->bad++;
        return SWGPU_OK;
    }
    free(c->next_idx);
    c->next_idx = malloc(n * sizeof *c->next_idx);
    memcpy(c->next_idx, idx, n * sizeof *idx);
    c->n_next = n;
    c->at_next = 0;
    c->offered += n;
    for (size_t j = 0; j < n; j++)
        if (idx[j] >= c->nq || memcmp(rows[j], c->want[idx[j]], c->db->n * sizeof **rows)) {
            if (c->bad++ < 3)
                CHECK(0, "scan_many %s: ahead's row %zu of %zu (query %zu) is not its scores",
                      c->what, j, n, idx[j]);
        }
    return SWGPU_OK;
}

static int many_sink(void *user, size_t i, const int32_t *scores)
{
    many_ctx_t *c = user;
    if (c->fail_at >= 0 && c->calls++ == c->fail_at)
        return swgpu__fail(SWGPU_EINVAL, "test sink: stop");
    if (i >= c->nq) {
        c->bad++;
        return SWGPU_OK;
    }
    if (c->at_next < c->n_next && c->next_idx[c->at_next++] != i) {
        if (c->bad++ < 3)
            CHECK(0, "scan_many %s: query %zu sunk where the next offered was %zu", c->what, i,
                  c->next_idx[c->at_next - 1]);
    }
    c->seen[i]++;
    for (uint64_t k = 0; k < c->db->n; k++)
        if (scores[k] != c->want[i][k]) {
            if (c->bad++ < 3)
                CHECK(0, "scan_many %s: query %zu subject %llu (len %llu) scored %d, expected %d",
                      c->what, i, (unsigned long long)k,
                      (unsigned long long)(c->db->off[k + 1] - c->db->off[k]), scores[k],
                      c->want[i][k]);
            break;
        }
    return SWGPU_OK;
}

/* scan_many of queries qp[0..nq) (residues, or PSSMs' rows) */
static void gpu_many_q(const swgpu_db_t *db, const swgpu__query_t *qp, size_t nq,
                       const swgpu_matrix_t *m, int open, int ext, const char *kernel,
                       const char *what, uint64_t *overflows)
{
    int32_t **want = malloc(nq * sizeof *want);
    int *seen = calloc(nq, sizeof *seen);
    for (size_t i = 0; i < nq; i++) {
        want[i] = malloc((db->n ? db->n : 1) * sizeof **want);
        for (uint64_t k = 0; k < db->n; k++)
            want[i][k] = ref_score_q(&qp[i], db->res + db->off[k], db->off[k + 1] - db->off[k],
                                     m, open, ext);
    }
    swgpu_opts_t o;
    memset(&o, 0, sizeof o);
    o.gap_open = open;
    o.gap_extend = ext;
    o.kernel = kernel;
    o.top_n = 10;
    o.max_gpu_memory = case_gpu_memory;
    void *st = NULL;
    int rc = swgpu__engine_cuda.create(db, m, &o, &st);
    CHECK(rc == 0, "create (%s): %s", what, swgpu_last_error());
    if (!rc) {
        many_ctx_t c = {db, want, seen, nq, 0, -1, 0, what, NULL, 0, 0, 0, -1, 0};
        swgpu_scan_stats_t ss = {0, 0, 0};
        uint64_t cells = 0;
        for (size_t i = 0; i < nq; i++)
            cells += (uint64_t)qp[i].len * db->total_res;
        rc = swgpu__engine_cuda.scan_many(st, nq, qp, many_sink, many_ahead, &c, &ss);
        CHECK(rc == 0, "scan_many %s: %s", what, swgpu_last_error());
        size_t once = 0;
        for (size_t i = 0; i < nq; i++)
            once += seen[i] == 1;
        CHECK(once == nq && c.bad == 0 && c.at_next == c.n_next,
              "scan_many %s: %zu of %zu queries handed over once, %zu bad, %zu of %zu offered "
              "ahead sunk", what, once, nq, c.bad, c.at_next, c.n_next);
        CHECK(c.offered <= nq, "scan_many %s: %zu queries offered ahead of %zu", what, c.offered,
              nq);
        ahead_offered += c.offered;
        free(c.next_idx);
        CHECK_EQ_INT(ss.cells, cells);
        if (overflows)
            *overflows += ss.overflows;
        /* a sink failure stops the scan with its status; the engine stays usable */
        if (nq > 2) {
            many_ctx_t f = {db, want, seen, nq, 0, (int)nq / 2, 0, what, NULL, 0, 0, 0, -1, 0};
            rc = swgpu__engine_cuda.scan_many(st, nq, qp, many_sink, NULL, &f, NULL);
            CHECK_EQ_INT(rc, SWGPU_EINVAL);
            CHECK(f.bad == 0, "scan_many %s: wrong scores before the stop", what);
            /* so does a failure of ahead (when the engine offers a batch) */
            many_ctx_t a = {db, want, seen, nq, 0, -1, 0, what, NULL, 0, 0, 0, 0, 0};
            rc = swgpu__engine_cuda.scan_many(st, nq, qp, many_sink, many_ahead, &a, NULL);
            CHECK(rc == (a.ahead_calls ? SWGPU_ERANGE : SWGPU_OK), "scan_many %s: %d after "
                  "ahead failed on call %d", what, rc, a.ahead_calls);
            free(a.next_idx);
            memset(seen, 0, nq * sizeof *seen);
            many_ctx_t g = {db, want, seen, nq, 0, -1, 0, what, NULL, 0, 0, 0, -1, 0};
            rc = swgpu__engine_cuda.scan_many(st, nq, qp, many_sink, NULL, &g, NULL);
            CHECK(rc == 0 && g.bad == 0, "scan_many %s after a stopped scan: %s", what,
                  rc ? swgpu_last_error() : "wrong scores");
        }
        swgpu__engine_cuda.destroy(st);
    }
    for (size_t i = 0; i < nq; i++)
        free(want[i]);
    free(want);
    free(seen);
}

static void gpu_many(const swgpu_db_t *db, const uint8_t *q, const size_t *qls, size_t nq,
                     const swgpu_matrix_t *m, int open, int ext, const char *kernel,
                     const char *what, uint64_t *overflows)
{
    swgpu__query_t *qp = malloc(nq * sizeof *qp);
    for (size_t i = 0; i < nq; i++) /* different queries of the same length */
        qp[i] = swgpu__query_plain(q + (i * 37) % 500, qls[i]);
    gpu_many_q(db, qp, nq, m, open, ext, kernel, what, overflows);
    free(qp);
}

/* the profiles built on the GPU equal the host builder's, byte for byte */
static void gpu_profiles(const swgpu_matrix_t *m, const uint8_t *q)
{
    int16_t mat[32 * 32];
    for (int a = 0; a < 32; a++)
        for (int r = 0; r < 32; r++)
            mat[32 * a + r] = (int16_t)m->s[a][r];
    int ncfg;
    const swgpu_cu_cfg_t *dc = swgpu__cu_dpx_configs(&ncfg);
    swgpu_cu_cfg_t cf[64];
    int nc = 0;
    for (int c = 0; c < ncfg && nc < 62; c++)
        cf[nc++] = dc[c];
    cf[nc++] = (swgpu_cu_cfg_t){SWGPU_CU_INTRA_THREADS, SWGPU_CU_INTRA_R, 0}; /* intra */
    int qls[] = {1, 97, 1025, 5478};
    uint8_t *dq = NULL;
    int16_t *dmat = NULL;
    void *dout = NULL;
    size_t cap = 0;
    int ok = cudaMalloc((void **)&dq, 5478) == cudaSuccess &&
             cudaMalloc((void **)&dmat, sizeof mat) == cudaSuccess &&
             cudaMemcpy(dq, q, 5478, cudaMemcpyHostToDevice) == cudaSuccess &&
             cudaMemcpy(dmat, mat, sizeof mat, cudaMemcpyHostToDevice) == cudaSuccess;
    CHECK(ok, "profiles: device buffers");
    for (int c = 0; c < nc && ok; c++)
        for (size_t i = 0; i < sizeof qls / sizeof qls[0]; i++) {
            size_t nb = swgpu__cu_dpx_prof_bytes(cf[c], qls[i]);
            void *want = malloc(nb), *got = malloc(nb);
            if (nb > cap) {
                cudaFree(dout);
                cap = 0;
                if (cudaMalloc(&dout, nb) == cudaSuccess)
                    cap = nb;
            }
            swgpu__cu_dpx_prof(cf[c], q, qls[i], mat, want);
            int rc = cap >= nb ? swgpu__cu_prof_dev(cf[c], dq, qls[i], dmat, dout, 0) : -1;
            int same = rc == 0 && cudaMemcpy(got, dout, nb, cudaMemcpyDeviceToHost) == cudaSuccess &&
                       memcmp(want, got, nb) == 0;
            CHECK(same, "profile G=%d R=%d P=%d qlen %d: built on the GPU differs from the host's",
                  cf[c].G, cf[c].R, cf[c].P, qls[i]);
            free(want);
            free(got);
        }
    cudaFree(dq);
    cudaFree(dmat);
    cudaFree(dout);
}

/* the same for a PSSM's rows (q NULL: the matrix has a row per column) */
static void gpu_profiles_pssm(const swgpu__query_t *Q)
{
    int16_t *mat = rows16(Q);
    int ncfg;
    const swgpu_cu_cfg_t *dc = swgpu__cu_dpx_configs(&ncfg);
    swgpu_cu_cfg_t cf[64];
    int nc = 0;
    for (int c = 0; c < ncfg && nc < 62; c++)
        cf[nc++] = dc[c];
    cf[nc++] = (swgpu_cu_cfg_t){SWGPU_CU_INTRA_THREADS, SWGPU_CU_INTRA_R, 0}; /* intra */
    int16_t *dmat = NULL;
    void *dout = NULL;
    size_t cap = 0, mb = Q->len * 32 * sizeof *mat;
    int ok = cudaMalloc((void **)&dmat, mb) == cudaSuccess &&
             cudaMemcpy(dmat, mat, mb, cudaMemcpyHostToDevice) == cudaSuccess;
    CHECK(ok, "PSSM profiles: device buffers");
    for (int c = 0; c < nc && ok; c++) {
        size_t nb = swgpu__cu_dpx_prof_bytes(cf[c], (int)Q->len);
        void *want = malloc(nb), *got = malloc(nb);
        if (nb > cap) {
            cudaFree(dout);
            cap = 0;
            if (cudaMalloc(&dout, nb) == cudaSuccess)
                cap = nb;
        }
        swgpu__cu_dpx_prof(cf[c], NULL, (int)Q->len, mat, want);
        int rc = cap >= nb ? swgpu__cu_prof_dev(cf[c], NULL, (int)Q->len, dmat, dout, 0) : -1;
        int same = rc == 0 && cudaMemcpy(got, dout, nb, cudaMemcpyDeviceToHost) == cudaSuccess &&
                   memcmp(want, got, nb) == 0;
        CHECK(same, "PSSM profile G=%d R=%d P=%d qlen %zu: built on the GPU differs from the "
                    "host's", cf[c].G, cf[c].R, cf[c].P, Q->len);
        free(want);
        free(got);
    }
    cudaFree(dmat);
    cudaFree(dout);
    free(mat);
}

/* search with PSSMs (swgpu_search_pssm): backend cuda = backend cpu, hits,
 * E-values and alignments */
static void gpu_search_pssm(const swgpu_db_t *db, swgpu_pssm_t *const *ps, size_t n,
                            const char *what)
{
    swgpu_matrix_t *b62 = NULL;
    swgpu_search_result_t *r[2] = {NULL, NULL};
    int rc[2];
    swgpu_matrix_builtin("BLOSUM62", &b62);
    for (int b = 0; b < 2; b++) {
        swgpu_opts_t o;
        swgpu_opts_init(&o, SWGPU_PROTEIN);
        o.top_n = 20;
        o.evalue = 1e30;
        o.backend = b ? SWGPU_BACKEND_CUDA : SWGPU_BACKEND_CPU;
        rc[b] = swgpu_search_pssm((const swgpu_pssm_t *const *)ps, n, db, b62, &o, &r[b]);
        CHECK(rc[b] == 0, "search_pssm %s (%s): %s", b ? "cuda" : "cpu", what, swgpu_last_error());
    }
    if (!rc[0] && !rc[1]) {
        long bad = 0, hits = 0;
        CHECK_EQ_STR(r[1]->backend, "cuda");
        for (size_t i = 0; i < n; i++) {
            const swgpu_query_result_t *x = &r[0]->q[i], *y = &r[1]->q[i];
            if (x->n_hits != y->n_hits) {
                bad++;
                continue;
            }
            for (size_t h = 0; h < x->n_hits; h++) {
                const swgpu_hit_t *p = &x->hits[h], *q = &y->hits[h];
                hits++;
                bad += !(p->target == q->target && p->score == q->score && p->evalue == q->evalue &&
                         p->aln.qbeg == q->aln.qbeg && p->aln.tbeg == q->aln.tbeg &&
                         p->aln.qend == q->aln.qend && p->aln.tend == q->aln.tend &&
                         p->aln.n_cigar == q->aln.n_cigar && p->aln.n_ident == q->aln.n_ident &&
                         !memcmp(p->aln.cigar, q->aln.cigar, p->aln.n_cigar * sizeof *p->aln.cigar));
            }
        }
        CHECK(bad == 0 && hits > 0, "search_pssm (%s): cuda and cpu differ in %ld of %ld hits",
              what, bad, hits);
    }
    swgpu_search_result_destroy(r[0]);
    swgpu_search_result_destroy(r[1]);
    swgpu_matrix_destroy(b62);
}

/* psiblast's PSSM of one query and subjects with B Z X U O J * (the
 * fixture of tests/test_pssm.c, which holds its provenance): psiblast's
 * raw scores on the GPU, every kernel family */
static void gpu_psiblast_fixture(void)
{
    static const char *ids[] = {"base", "p200_X", "p200_B", "p200_Z", "p200_J", "p200_U", "p200_O",
                                "p200_star", "p242_B", "p242_Z", "p242_J", "p242_U", "p242_O",
                                "p242_X", "p242_star", "mix1", "mix2", "mix3", "p210_X"};
    static const int want[] = {339, 332, 309, 309, 309, 309, 309, 329, 335, 338,
                               331, 333, 333, 333, 330, 309, 304, 305, 336};
    swgpu_pssm_t *p = NULL;
    swgpu_db_t *db = NULL;
    swgpu_matrix_t *b62 = NULL;
    if (swgpu_pssm_read("tests/data/q104.pssm", &p) < 0 ||
        swgpu_db_open("tests/data/pssm_subjects.fa", SWGPU_PROTEIN, &db, NULL) < 0 ||
        swgpu_matrix_builtin("BLOSUM62", &b62) < 0) {
        CHECK(0, "psiblast fixture: %s", swgpu_last_error());
        goto out;
    }
    for (int kk = 0; kk < NKERN; kk++) {
        swgpu_opts_t o;
        swgpu_search_result_t *r = NULL;
        swgpu_opts_init(&o, SWGPU_PROTEIN);
        o.top_n = 50;
        o.evalue = 1e30;
        o.backend = SWGPU_BACKEND_CUDA;
        o.kernel = kernels[kk];
        int rc = swgpu_search_pssm((const swgpu_pssm_t *const *)&p, 1, db, b62, &o, &r);
        CHECK(rc == 0, "psiblast fixture, kernel %s: %s", kernels[kk] ? kernels[kk] : "default",
              swgpu_last_error());
        if (rc)
            continue;
        int bad = r->q[0].n_hits != sizeof want / sizeof want[0];
        for (size_t h = 0; h < r->q[0].n_hits; h++) {
            swgpu_seq_t t;
            swgpu_db_get(db, r->q[0].hits[h].target, &t);
            for (size_t k = 0; k < sizeof want / sizeof want[0]; k++)
                if (!strcmp(t.id, ids[k]) && r->q[0].hits[h].score != want[k]) {
                    bad++;
                    fprintf(stderr, "psiblast fixture %s: %s scored %d, psiblast %d\n",
                            kernels[kk] ? kernels[kk] : "default", t.id, r->q[0].hits[h].score,
                            want[k]);
                }
        }
        CHECK(bad == 0, "psiblast fixture, kernel %s: psiblast's raw scores",
              kernels[kk] ? kernels[kk] : "default");
        swgpu_search_result_destroy(r);
    }
out:
    swgpu_pssm_destroy(p);
    swgpu_db_destroy(db);
    swgpu_matrix_destroy(b62);
}

/*
 * PSSM queries on the GPU: the profiles built from rows, every kernel
 * family and DPX configuration against the reference (BLOSUM62 rows = the
 * plain query on 20-letter subjects; random rows with psiblast's forbidden
 * scores on subjects of every letter; rows in [-127, 127] for simt's 8-bit
 * profile; large scores with overflows recomputed), scan_many with PSSMs
 * and plain queries in the same batches (one- and multi-tile, the long-
 * subject path), a split scan, the search (cuda = cpu) and psiblast's
 * fixture.  (Streamed: in part2's streaming block.)
 */
static void part2_pssm(int small)
{
    swgpu_matrix_t *b62 = NULL;
    static uint8_t q[6000];
    testdb_t T;
    if (swgpu_matrix_builtin("BLOSUM62", &b62) < 0)
        return;
    rand_seq(q, sizeof q, 2);

    {
        swgpu_pssm_t *p = pssm_make(q, 1025, NULL, 1, -6, 9);
        swgpu__query_t Q;
        if (p) {
            swgpu__pssm_query(p, &Q);
            gpu_profiles_pssm(&Q);
            swgpu_pssm_destroy(p);
        }
    }

    /* BLOSUM62 rows on 20-letter subjects: the plain query's scores */
    size_t n = small ? 60 : 400;
    uint32_t *lens = malloc((n + 16) * sizeof *lens);
    uint32_t edge[] = {1, 2, 3, 4, 5, 8, 31, 32, 33, 2047, 2048, 2049, 2050, 3000, 4100, 1};
    for (size_t i = 0; i < n; i++)
        lens[i] = 1 + (uint32_t)(tap_rand(&seed) % (i % 7 == 0 ? 1500 : 400));
    memcpy(lens + n, edge, sizeof edge);
    db_make(&T, lens, n + (small ? 4 : 16), 2, q, 2500);
    size_t qls[] = {1, 144, 257, 464, 1025, 1500, 5478};
    for (size_t i = 0; i < (small ? 3 : sizeof qls / sizeof qls[0]); i++) {
        swgpu_pssm_t *p = pssm_make(q, qls[i], b62, 1, 0, 0);
        swgpu__query_t Q;
        if (!p)
            continue;
        swgpu__pssm_query(p, &Q);
        int same = 1;
        for (uint64_t k = 0; k < T.db.n; k++)
            same &= ref_score_q(&Q, T.db.res + T.db.off[k], T.db.off[k + 1] - T.db.off[k], b62,
                                11, 1) == ref_score(q, qls[i], T.db.res + T.db.off[k],
                                                    T.db.off[k + 1] - T.db.off[k], b62, 11, 1);
        CHECK(same, "BLOSUM62 rows of %zu residues: not the plain query's scores", qls[i]);
        gpu_cases_q(&T.db, &Q, b62, 11, 1, "PSSM of BLOSUM62 rows", NULL);
        gpu_cases(&T.db, q, qls[i], b62, 11, 1, "plain query of the BLOSUM62-rows PSSM", NULL);
        swgpu_pssm_destroy(p);
    }
    db_free(&T);

    /* random rows, forbidden scores, subjects of every letter */
    db_make(&T, lens, n + (small ? 4 : 16), 0, q, 2500);
    swgpu_pssm_t *ps[12] = {0};
    swgpu__query_t qs[12], mix[24];
    size_t nps = 0;
    for (size_t i = 0; i < (small ? 3 : sizeof qls / sizeof qls[0]); i++) {
        ps[nps] = pssm_make(q + i * 7, qls[i], NULL, 1, -6, 9);
        if (!ps[nps])
            continue;
        swgpu__pssm_query(ps[nps], &qs[nps]);
        gpu_cases_q(&T.db, &qs[nps], b62, 11, 1, "random PSSM", NULL);
        if (i == 2)
            gpu_cases_q(&T.db, &qs[nps], b62, 5, 2, "random PSSM, gaps 5/2", NULL);
        nps++;
    }
    /* every compiled DPX configuration, forced */
    {
        int ncfg;
        const swgpu_cu_cfg_t *cf = swgpu__cu_dpx_configs(&ncfg);
        for (int c = 0; c < ncfg && !small && nps > 4; c++) {
            char v[32], what[80];
            snprintf(v, sizeof v, "%d,%d,%d", cf[c].G, cf[c].R, cf[c].P);
            snprintf(what, sizeof what, "PSSM, SWGPU_CUDA_CFG=%s", v);
            setenv("SWGPU_CUDA_CFG", v, 1);
            gpu_cases_q(&T.db, &qs[1], b62, 11, 1, what, NULL);
            gpu_cases_q(&T.db, &qs[4], b62, 11, 1, what, NULL);
            unsetenv("SWGPU_CUDA_CFG");
        }
    }
    /* rows within [-127, 127] (no forbidden score): simt's 8-bit profile */
    if (nps > 2) {
        int32_t *r = malloc(qs[2].len * 32 * sizeof *r);
        swgpu__query_t Q = qs[2];
        for (size_t k = 0; k < Q.len * 32; k++)
            r[k] = Q.rows[k] == SWGPU_PSSM_FORBIDDEN ? -20 : Q.rows[k];
        Q.rows = r;
        Q.smin = -20;
        Q.smin16 = -20;
        gpu_cases_q(&T.db, &Q, b62, 11, 1, "PSSM rows in 8 bits", NULL);
        free(r);
    }
    /* scan_many: PSSMs and plain queries in the same batches */
    {
        size_t nm = 0;
        for (size_t i = 0; i < nps; i++) {
            mix[nm++] = qs[i];
            mix[nm++] = swgpu__query_plain(q + 100 + i, qs[i].len);
        }
        gpu_many_q(&T.db, mix, nm, b62, 11, 1, NULL, "PSSMs and plain queries", NULL);
        if (!small)
            for (int kk = 1; kk < NKERN; kk++)
                gpu_many_q(&T.db, mix, nm, b62, 11, 1, kernels[kk], kernels[kk], NULL);
    }
    gpu_search_pssm(&T.db, ps, nps, "random PSSMs");
    for (size_t i = 0; i < nps; i++)
        swgpu_pssm_destroy(ps[i]);
    db_free(&T);
    free(lens);

    /* overflow-forcing: BLOSUM62 rows x 60 (up to 660), copies of the query */
    {
        uint32_t lo[] = {3000, 3000, 2900, 2500, 2100, 1500, 1000, 500, 100, 10, 1, 4000};
        db_make(&T, lo, sizeof lo / sizeof lo[0], 2, q, 4000);
        swgpu_pssm_t *pb[3] = {pssm_make(q, 3000, b62, 60, 0, 0), pssm_make(q, 900, b62, 60, 0, 0),
                               pssm_make(q + 5, 900, NULL, 1, -6, 9)};
        if (pb[0] && pb[1] && pb[2]) {
            swgpu__query_t Q[3];
            uint64_t ov = 0, ovm = 0;
            for (int i = 0; i < 3; i++)
                swgpu__pssm_query(pb[i], &Q[i]);
            gpu_cases_q(&T.db, &Q[0], b62, 11, 1, "PSSM, overflow", &ov);
            CHECK(ov > 0, "PSSM: no overflow recomputed with large scores");
            gpu_many_q(&T.db, Q, 3, b62, 11, 1, NULL, "PSSMs, overflow, many queries", &ovm);
            CHECK(ovm > 0, "PSSM scan_many: no overflow recomputed with large scores");
        }
        for (int i = 0; i < 3; i++)
            swgpu_pssm_destroy(pb[i]);
        db_free(&T);
    }

    /* a split scan (9000 subjects) */
    if (!small) {
        size_t nsp = 9000;
        uint32_t *lsp = malloc(nsp * sizeof *lsp);
        for (size_t i = 0; i < nsp; i++)
            lsp[i] = 1 + (uint32_t)(tap_rand(&seed) % (i % 50 == 0 ? 1200 : 150));
        lsp[0] = 2100;
        lsp[1] = 2600;
        db_make(&T, lsp, nsp, 0, q, 2600);
        swgpu_pssm_t *p = pssm_make(q, 1100, NULL, 1, -6, 9);
        if (p) {
            swgpu__query_t Q;
            swgpu__pssm_query(p, &Q);
            gpu_cases_q(&T.db, &Q, b62, 11, 1, "PSSM, split scan", NULL);
            gpu_search_pssm(&T.db, &p, 1, "split scan");
            swgpu_pssm_destroy(p);
        }
        db_free(&T);
        free(lsp);
    }
    gpu_psiblast_fixture();
    swgpu_matrix_destroy(b62);
}

/* many queries per call: every configuration of the default family
 * (1, 2 and many per batch), multi-tile, long-subject path; the other
 * kernel families through the one-query fallback */
static void part2_many(const swgpu_db_t *db, const uint8_t *q, const swgpu_matrix_t *prot, int small)
{
    size_t mq[] = {1, 5, 60, 100, 144, 144, 144, 200, 255, 256, 257, 300, 300, 464, 700,
                   1024, 1025, 1100, 1100, 1500, 2500, 0, 3};
    size_t nmq = sizeof mq / sizeof mq[0];
    size_t one[] = {464}, two[] = {300, 300};
    gpu_many(db, q, one, 1, prot, 11, 1, NULL, "1 query", NULL);
    gpu_many(db, q, two, 2, prot, 11, 1, NULL, "2 queries", NULL);
    ahead_offered = 0;
    gpu_many(db, q, mq, small ? 8 : nmq, prot, 11, 1, NULL, "many queries", NULL);
    CHECK(ahead_offered > 0, "many queries: no batch was offered ahead of its sink calls");
    /* the same without query lanes (the many-query kernel), with one
     * job of two long lanes (as on a large database), and in batches of
     * two queries (or one) */
    setenv("SWGPU_CUDA_QP", "0", 1);
    gpu_many(db, q, mq, small ? 8 : nmq, prot, 11, 1, NULL, "many queries, no lanes", NULL);
    unsetenv("SWGPU_CUDA_QP");
    setenv("SWGPU_CUDA_QP_UNITS", "1", 1);
    gpu_many(db, q, mq, small ? 8 : nmq, prot, 11, 1, NULL, "many queries, one job", NULL);
    unsetenv("SWGPU_CUDA_QP_UNITS");
    setenv("SWGPU_CUDA_SOLO", "1", 1);
    gpu_many(db, q, mq, small ? 8 : nmq, prot, 11, 1, NULL, "many queries, solo", NULL);
    unsetenv("SWGPU_CUDA_SOLO");
    if (!small) {
        gpu_many(db, q, mq, nmq, prot, 5, 2, NULL, "many queries, gaps 5/2", NULL);
        for (int kk = 1; kk < NKERN; kk++)
            gpu_many(db, q, mq, 8, prot, 11, 1, kernels[kk], kernels[kk], NULL);
        size_t rep[300];
        for (size_t i = 0; i < 300; i++)
            rep[i] = 20 + (i * 13) % 400;
        gpu_many(db, q, rep, 300, prot, 11, 1, NULL, "300 short queries", NULL);
        setenv("SWGPU_CUDA_QP_UNITS", "1", 1);
        gpu_many(db, q, rep, 300, prot, 11, 1, NULL, "300 short queries, one job", NULL);
        unsetenv("SWGPU_CUDA_QP_UNITS");
    }
}

/* under SWGPU_TEST_STREAMED, each streamed case's start on stderr with the
 * seconds since the first (a device check cut off by its time limit shows
 * where it was) */
static void stage(const char *what)
{
    static struct timespec t0;
    struct timespec t;
    if (!getenv("SWGPU_TEST_STREAMED"))
        return;
    clock_gettime(CLOCK_MONOTONIC, &t);
    if (!t0.tv_sec)
        t0 = t;
    fprintf(stderr, "[%.1f s] %s\n", (double)(t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) * 1e-9,
            what);
}

/* Streaming: a database several times the tiny budget, by SWGPU_GPU_MEMORY
 * and by the option; many queries and PSSM queries on it. */
static void part2_streamed(const uint8_t *q, const swgpu_matrix_t *prot)
{
    testdb_t T;
    size_t ns = 3000;
    uint32_t *ls = malloc(ns * sizeof *ls);
    for (size_t i = 0; i < ns; i++)
        ls[i] = 20 + (uint32_t)(tap_rand(&seed) % 700);
    db_make(&T, ls, ns, 0, q, 700);
    setenv("SWGPU_GPU_MEMORY", "64.5M", 1);
    swgpu_set_logger(grab_log, NULL, SWGPU_LOG_INFO);
    expect_streaming = 1;
    stage("streamed (SWGPU_GPU_MEMORY)");
    gpu_cases(&T.db, q, 500, prot, 11, 1, "streamed (SWGPU_GPU_MEMORY)", NULL);
    unsetenv("SWGPU_GPU_MEMORY");
    /* the same budget through the option (swgpu search --max-memory) */
    case_gpu_memory = (uint64_t)129 << 19; /* 64.5 MiB */
    stage("streamed (max_gpu_memory)");
    gpu_cases(&T.db, q, 1600, prot, 11, 1, "streamed (max_gpu_memory)", NULL);
    {
        size_t sq[] = {100, 500, 1600};
        stage("streamed, many queries");
        gpu_many(&T.db, q, sq, 3, prot, 11, 1, NULL, "streamed, many queries", NULL);
    }
    {
        /* PSSM queries on a streamed database, one and several at once */
        swgpu_pssm_t *pa = pssm_make(q, 500, NULL, 1, -6, 9), *pb = pssm_make(q, 1600, NULL, 1, -6, 9);
        if (pa && pb) {
            swgpu__query_t Q[3];
            swgpu__pssm_query(pa, &Q[0]);
            swgpu__pssm_query(pb, &Q[1]);
            Q[2] = swgpu__query_plain(q + 3, 700);
            stage("streamed PSSM");
            gpu_cases_q(&T.db, &Q[1], prot, 11, 1, "streamed PSSM", NULL);
            gpu_many_q(&T.db, Q, 3, prot, 11, 1, NULL, "streamed, PSSMs and a plain query",
                       NULL);
        }
        swgpu_pssm_destroy(pa);
        swgpu_pssm_destroy(pb);
    }
    case_gpu_memory = 0;
    /* a GPU's share over a chunk's 32-bit offsets (issue 31: a 20 G-residue
     * database on one GPU): the limit lowered to 20,000 words, about 14
     * chunks of this 1.1 M-residue database, streamed though it fits */
    setenv("SWGPU_CUDA_CHUNK_WORDS", "20000", 1);
    stage("chunks under the offset limit");
    gpu_cases(&T.db, q, 500, prot, 11, 1, "chunks under the offset limit", NULL);
    {
        unsigned nch = 0;
        const char *c = strstr(last_info, "streaming, ");
        CHECK(c && sscanf(c, "streaming, %u chunk", &nch) == 1 && nch >= 14,
              "chunks under the offset limit: %s", last_info);
        size_t sq[] = {100, 500};
        stage("chunks, many queries");
        gpu_many(&T.db, q, sq, 2, prot, 11, 1, NULL, "chunks under the offset limit, many queries",
                 NULL);
        /* a batch of query lanes over streamed chunks: 16 queries of 20 to
         * 497 residues and one of 1,100 (the long subjects' kernel past
         * 1,024), several jobs, each chunk's scores into the slot of its
         * buffer with slot 0's lane tables */
        size_t sl[17];
        for (size_t i = 0; i < 16; i++)
            sl[i] = 20 + (i * 61) % 480;
        sl[16] = 1100;
        saw_lanes = 0;
        swgpu_set_logger(grab_log, NULL, SWGPU_LOG_DEBUG);
        stage("chunks, lanes");
        gpu_many(&T.db, q, sl, 17, prot, 11, 1, NULL, "chunks under the offset limit, lanes", NULL);
        swgpu_set_logger(grab_log, NULL, SWGPU_LOG_INFO);
        CHECK(saw_lanes, "chunks under the offset limit, lanes: no query lanes were planned");
    }
    setenv("SWGPU_CUDA_CHUNK_WORDS", "1023", 1);
    {
        swgpu_opts_t o;
        memset(&o, 0, sizeof o);
        o.gap_open = 11;
        o.gap_extend = 1;
        o.top_n = 10;
        void *st = NULL;
        CHECK_EQ_INT(swgpu__engine_cuda.create(&T.db, prot, &o, &st), SWGPU_EINVAL);
        CHECK(strstr(swgpu_last_error(), "SWGPU_CUDA_CHUNK_WORDS=1023") != NULL, "%s",
              swgpu_last_error());
        if (st)
            swgpu__engine_cuda.destroy(st);
    }
    unsetenv("SWGPU_CUDA_CHUNK_WORDS");
    stage("streamed cases done");
    expect_streaming = 0;
    swgpu_set_logger(NULL, NULL, SWGPU_LOG_WARN);
    db_free(&T);
    free(ls);
}

static void part2(int small)
{
    swgpu_matrix_t prot, dna, big;
    mat_random(&prot, -4, 11, 6);
    mat_dna(&dna, 2, -3);
    mat_random(&big, -40, 120, 20);
    static uint8_t q[6000], qd[3000];
    rand_seq(q, sizeof q, 0);
    rand_seq(qd, sizeof qd, 1);
    testdb_t T;

    gpu_profiles(&prot, q);

    /* edge lengths and random lengths, every kernel, several query lengths */
    size_t n = small ? 60 : 400;
    uint32_t *lens = malloc((n + 16) * sizeof *lens);
    uint32_t edge[] = {1, 2, 3, 4, 5, 8, 31, 32, 33, 2047, 2048, 2049, 2050, 3000, 4100, 1};
    for (size_t i = 0; i < n; i++)
        lens[i] = 1 + (uint32_t)(tap_rand(&seed) % (i % 7 == 0 ? 1500 : 400));
    memcpy(lens + n, edge, sizeof edge);
    db_make(&T, lens, n + (small ? 4 : 16), 0, q, 2500);
    size_t qls_all[] = {1, 5, 144, 255, 256, 257, 464, 1024, 1025, 1500, 5478};
    size_t nq = small ? 3 : sizeof qls_all / sizeof qls_all[0];
    for (size_t i = 0; i < nq; i++)
        gpu_cases(&T.db, q, qls_all[i], &prot, 11, 1, "protein", NULL);
    int gaps[][2] = {{10, 2}, {5, 2}, {0, 1}, {3, 3}};
    for (int g = 0; g < 4; g++)
        gpu_cases(&T.db, q, small ? 300 : 700, &prot, gaps[g][0], gaps[g][1], "protein gaps",
                  NULL);
    /* every compiled DPX configuration, forced (short and multi-tile queries) */
    {
        int ncfg;
        const swgpu_cu_cfg_t *cf = swgpu__cu_dpx_configs(&ncfg);
        for (int c = 0; c < ncfg && !small; c++) {
            char v[32], what[64];
            snprintf(v, sizeof v, "%d,%d,%d", cf[c].G, cf[c].R, cf[c].P);
            snprintf(what, sizeof what, "SWGPU_CUDA_CFG=%s", v);
            setenv("SWGPU_CUDA_CFG", v, 1);
            gpu_cases(&T.db, q, 200, &prot, 11, 1, what, NULL);
            gpu_cases(&T.db, q, 1100, &prot, 11, 1, what, NULL);
            unsetenv("SWGPU_CUDA_CFG");
        }
    }

    part2_many(&T.db, q, &prot, small);

    /* every built-in matrix */
    const char *names[] = {"BLOSUM45", "BLOSUM50", "BLOSUM62", "BLOSUM80", "BLOSUM90",
                           "PAM30", "PAM70", "PAM250"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        swgpu_matrix_t *bm = NULL;
        int rc = swgpu_matrix_builtin(names[i], &bm);
        CHECK(rc == 0, "matrix %s: %s", names[i], swgpu_last_error());
        if (rc)
            continue;
        if (!small || i == 2)
            gpu_cases(&T.db, q, 400, bm, 11, 1, names[i], NULL);
        swgpu_matrix_destroy(bm);
    }
    db_free(&T);

    /* overflow-forcing: copies of the query scored with large values */
    uint32_t lo[] = {3000, 3000, 2900, 2500, 2100, 1500, 1000, 500, 100, 10, 1, 4000};
    db_make(&T, lo, sizeof lo / sizeof lo[0], 0, q, 4000);
    uint64_t ov = 0;
    gpu_cases(&T.db, q, 3000, &big, 11, 1, "overflow", &ov);
    CHECK(ov > 0, "no overflow recomputed with large scores (%llu)", (unsigned long long)ov);
    {
        size_t oq[] = {3000, 2500, 3000, 900, 900};
        uint64_t ovm = 0;
        gpu_many(&T.db, q, oq, 5, &big, 11, 1, NULL, "overflow, many queries", &ovm);
        CHECK(ovm > 0, "scan_many: no overflow recomputed with large scores");
    }
    db_free(&T);

    /* a split scan (engine.cu: SPLIT_MIN = 8192 subjects and more): the longest
     * seven eighths scored, downloaded and copied out while the shortest
     * eighth computes on a second stream; one- and multi-tile queries, the
     * long-subject path, overflows recomputed in both parts */
    if (!small) {
        size_t nsp = 9000;
        uint32_t *lsp = malloc(nsp * sizeof *lsp);
        for (size_t i = 0; i < nsp; i++)
            lsp[i] = 1 + (uint32_t)(tap_rand(&seed) % (i % 50 == 0 ? 1200 : 150));
        lsp[0] = 2100;
        lsp[1] = 2600;
        db_make(&T, lsp, nsp, 0, q, 2600);
        gpu_cases(&T.db, q, 300, &prot, 11, 1, "split scan", NULL);
        gpu_cases(&T.db, q, 1100, &prot, 11, 1, "split scan", NULL);
        uint64_t ovs = 0;
        gpu_cases(&T.db, q, 1100, &big, 11, 1, "split scan, large scores", &ovs);
        CHECK(ovs > 0, "split scan: no overflow recomputed with large scores");
        db_free(&T);
        free(lsp);
    }

    /* DNA */
    size_t nd = small ? 30 : 200;
    for (size_t i = 0; i < nd; i++)
        lens[i] = 1 + (uint32_t)(tap_rand(&seed) % 3000);
    db_make(&T, lens, nd, 1, qd, 3000);
    gpu_cases(&T.db, qd, small ? 500 : 3000, &dna, 5, 2, "dna", NULL);
    db_free(&T);

    if (!small)
        part2_streamed(q, &prot);
    free(lens);
}

/* ------------------------------------------------ failed allocations */

static int n_fallback;

static void count_fallback(swgpu_log_level_t level, const char *msg, void *user)
{
    (void)user;
    if (level == SWGPU_LOG_WARN && strstr(msg, "out of GPU memory") &&
        strstr(msg, "streaming the database instead"))
        n_fallback++;
}


/*
 * DNA searches on both strands on the GPU (issue 28): the batched engine
 * scans each query and its reverse complement; the hits (targets, scores,
 * strands, coordinates, CIGARs) equal the CPU backend's for strand both,
 * plus and minus, with enough hits that the GPU computes the ends of minus
 * hits too (the feeder's reverse-complemented subjects).
 */
static void part2_strands(int small)
{
    static const char comp[4] = {'T', 'G', 'C', 'A'};
    const char *acgt = "ACGT";
    size_t nq = small ? 6 : 40, nd = small ? 60 : 400;
    swgpu_seqset_t *qs = NULL, *ds = NULL;
    swgpu_db_t *db = NULL;
    swgpu_matrix_t *m = NULL;
    char **q = calloc(nq, sizeof *q);
    char buf[3000];
    int ok = q && !swgpu_seqset_create(SWGPU_DNA, &qs) && !swgpu_seqset_create(SWGPU_DNA, &ds) &&
             !swgpu_matrix_dna(2, -3, &m);
    for (size_t i = 0; ok && i < nq; i++) {
        size_t len = 60 + (size_t)(tap_rand(&seed) % 900);
        q[i] = malloc(len + 1);
        for (size_t k = 0; k < len; k++)
            q[i][k] = acgt[tap_rand(&seed) % 4];
        q[i][len] = 0;
        char id[16];
        snprintf(id, sizeof id, "q%zu", i);
        ok = !swgpu_seqset_add(qs, id, "", q[i], len);
    }
    for (size_t j = 0; ok && j < nd; j++) {
        size_t n = 0, fl = (size_t)(tap_rand(&seed) % 400);
        for (size_t k = 0; k < fl; k++)
            buf[n++] = acgt[tap_rand(&seed) % 4];
        const char *src = q[j % nq];
        size_t len = strlen(src);
        for (size_t k = 0; k < len && j % 5 != 4; k++) { /* a piece, plus or minus, mutated */
            char c = j % 2 ? src[k] : src[len - 1 - k];
            if (j % 2 == 0)
                c = comp[strchr(acgt, c) - acgt];
            if (tap_rand(&seed) % 12 == 0)
                c = acgt[tap_rand(&seed) % 4];
            buf[n++] = c;
        }
        for (size_t k = 0; k < 50; k++)
            buf[n++] = acgt[tap_rand(&seed) % 4];
        char id[16];
        snprintf(id, sizeof id, "d%zu", j);
        ok = !swgpu_seqset_add(ds, id, "", buf, n);
    }
    ok = ok && !swgpu_db_from_seqset(ds, &db);
    CHECK(ok, "strand fixtures: %s", swgpu_last_error());
    static const swgpu_strand_t strands[] = {SWGPU_STRAND_BOTH, SWGPU_STRAND_PLUS,
                                             SWGPU_STRAND_MINUS};
    for (size_t k = 0; ok && k < 3; k++) {
        swgpu_opts_t o;
        swgpu_search_result_t *rg = NULL, *rc = NULL;
        swgpu_opts_init(&o, SWGPU_DNA);
        o.strand = strands[k];
        o.top_n = 20;
        o.evalue = 1e300;
        o.backend = SWGPU_BACKEND_CUDA;
        CHECK_EQ_INT(swgpu_search(qs, db, m, &o, &rg), SWGPU_OK);
        o.backend = SWGPU_BACKEND_CPU;
        CHECK_EQ_INT(swgpu_search(qs, db, m, &o, &rc), SWGPU_OK);
        size_t bad = 0, n_minus = 0;
        int same = rg && rc && tl_same_hits(rg, rc);
        for (size_t i = 0; same && i < nq; i++)
            for (size_t h = 0; h < rg->q[i].n_hits; h++) {
                const swgpu_hit_t *x = &rg->q[i].hits[h], *y = &rc->q[i].hits[h];
                bad += x->minus != y->minus || x->aln.tbeg != y->aln.tbeg ||
                       x->aln.tend != y->aln.tend || x->aln.qbeg != y->aln.qbeg;
                n_minus += x->minus;
            }
        CHECK(same && bad == 0, "strand %d: the GPU's hits differ from the CPU's (%zu strands "
              "or coordinates)", (int)o.strand, bad);
        CHECK(k == 1 ? n_minus == 0 : n_minus >= nq, "strand %d: %zu minus hits", (int)o.strand,
              n_minus);
        swgpu_search_result_destroy(rg);
        swgpu_search_result_destroy(rc);
    }
    for (size_t i = 0; q && i < nq; i++)
        free(q[i]);
    free(q);
    swgpu_matrix_destroy(m);
    swgpu_db_destroy(db);
    swgpu_seqset_destroy(ds);
    swgpu_seqset_destroy(qs);
}

/*
 * GPU and pinned allocations that fail (SWGPU_CUDA_FAIL_ALLOC=N fails the
 * Nth allocation of each engine, for every N in turn, with a resident and a
 * streamed database): a search either gives the CPU backend's hits (a
 * resident database whose buffers failed is streamed instead, with a
 * warning) or fails with SWGPU_ENOMEM and a message saying which memory ran
 * out; never a crash, a partial result or another status; afterwards a
 * search without failures works.
 */
static void alloc_failures(void)
{
    const char *aa = "ARNDCQEGHILKMFPSTWYV";
    swgpu_seqset_t *qs = NULL, *ds = NULL;
    swgpu_db_t *db = NULL;
    swgpu_matrix_t *m = NULL;
    swgpu_search_result_t *want = NULL;
    char buf[700], id[32];
    swgpu_seqset_create(SWGPU_PROTEIN, &qs);
    swgpu_seqset_create(SWGPU_PROTEIN, &ds);
    for (int i = 0; i < 400; i++) {
        size_t len = 20 + tap_rand(&seed) % 600;
        for (size_t j = 0; j < len; j++)
            buf[j] = aa[tap_rand(&seed) % 20];
        snprintf(id, sizeof id, "s%d", i);
        swgpu_seqset_add(ds, id, "", buf, len);
        if (i % 80 == 3) { /* five queries, each a database sequence with 2 changes */
            buf[len / 3] = 'W';
            buf[len / 2] = 'C';
            snprintf(id, sizeof id, "q%d", i);
            swgpu_seqset_add(qs, id, "", buf, len);
        }
    }
    if (swgpu_db_from_seqset(ds, &db) || swgpu_matrix_builtin("BLOSUM62", &m)) {
        CHECK(0, "alloc failures: set-up: %s", swgpu_last_error());
        goto out;
    }
    swgpu_opts_t o;
    swgpu_opts_init(&o, SWGPU_PROTEIN);
    o.backend = SWGPU_BACKEND_CPU;
    if (swgpu_search(qs, db, m, &o, &want)) {
        CHECK(0, "alloc failures: cpu search: %s", swgpu_last_error());
        goto out;
    }
    swgpu_set_logger(count_fallback, NULL, SWGPU_LOG_WARN);
    for (int streamed = 0; streamed < 2; streamed++) {
        long ok = 0, enomem = 0, bad = 0;
        o.backend = SWGPU_BACKEND_CUDA;
        o.max_gpu_memory = streamed ? (uint64_t)65 << 20 : 0; /* 64 MiB fixed + chunks */
        for (int k = 1; k <= 80; k++) {
            char v[16];
            swgpu_search_result_t *r = NULL;
            snprintf(v, sizeof v, "%d", k);
            setenv("SWGPU_CUDA_FAIL_ALLOC", v, 1);
            int rc = swgpu_search(qs, db, m, &o, &r);
            const char *msg = swgpu_last_error();
            if (rc == 0 && r && tl_same_hits(r, want)) {
                ok++;
            } else if (rc == SWGPU_ENOMEM && !r &&
                       (strstr(msg, "out of GPU memory") || strstr(msg, "out of pinned host memory"))) {
                enomem++;
            } else {
                if (bad++ < 3)
                    fprintf(stderr, "allocation %d failing (%s database): status %d, %s\n", k,
                            streamed ? "streamed" : "resident", rc,
                            rc ? msg : "hits differ from the cpu backend's");
            }
            swgpu_search_result_destroy(r);
        }
        unsetenv("SWGPU_CUDA_FAIL_ALLOC");
        CHECK(bad == 0, "%s database: %ld failing allocations gave a wrong result or status",
              streamed ? "streamed" : "resident", bad);
        CHECK(enomem > 0 && ok > 0, "%s database: %ld searches failed with ENOMEM, %ld succeeded",
              streamed ? "streamed" : "resident", enomem, ok);
        if (!streamed)
            CHECK(n_fallback > 0, "a resident database whose buffers failed was never streamed instead");
    }
    swgpu_set_logger(NULL, NULL, SWGPU_LOG_WARN);
    {
        swgpu_search_result_t *r = NULL;
        o.max_gpu_memory = 0;
        CHECK(swgpu_search(qs, db, m, &o, &r) == 0 && tl_same_hits(r, want),
              "a search after the failures: %s", swgpu_last_error());
        swgpu_search_result_destroy(r);
    }
out:
    swgpu_search_result_destroy(want);
    swgpu_matrix_destroy(m);
    swgpu_db_destroy(db);
    swgpu_seqset_destroy(qs);
    swgpu_seqset_destroy(ds);
}

/* ----------------------------------------------------------- pair ends */

/* Pairs on the GPU (swgpu__cu_pairs_run): every pair's score, qend and tend
 * must equal the reference's on the same stretch of the query (the tie
 * rule: first cell in target-major order), for plain queries and PSSMs,
 * stretches starting anywhere in 8-column groups and spanning several
 * 256-column segments, related subjects (ties: tandem copies), known scores
 * checked and a wrong one refused. */
static void part2_pairs(int small)
{
    swgpu_matrix_t *b62 = NULL;
    CHECK(swgpu_matrix_builtin("BLOSUM62", &b62) == 0, "BLOSUM62");
    if (!b62)
        return;
    static const size_t qls[] = {1, 7, 8, 9, 31, 255, 256, 257, 300, 513, 1100};
    static const size_t tls[] = {1, 2, 31, 32, 33, 97, 400, 1500};
    const size_t nq = sizeof qls / sizeof *qls, nt = sizeof tls / sizeof *tls;
    const int gaps[][2] = {{10, 1}, {5, 2}, {0, 1}};
    size_t npairs = small ? 300 : 3000;
    for (int gi = 0; gi < 3; gi++)
        for (int pssm = 0; pssm < 2; pssm++) {
            const int go = gaps[gi][0], ge = gaps[gi][1];
            swgpu__cu_pairs_t *P = NULL;
            int rc = swgpu__cu_pairs_create(b62, go, ge, &P);
            CHECK(rc == 0, "pairs create: %s", swgpu_last_error());
            if (rc)
                continue;
            uint8_t *q[11];
            swgpu_pssm_t *ps[11] = {0};
            swgpu__query_t Q[11];
            for (size_t i = 0; i < nq; i++) {
                q[i] = malloc(qls[i]);
                rand_seq(q[i], qls[i], 0);
                if (pssm) {
                    ps[i] = pssm_make(q[i], qls[i], i % 2 ? b62 : NULL, 3, -12, 9);
                    swgpu__pssm_query(ps[i], &Q[i]);
                } else {
                    Q[i] = swgpu__query_plain(q[i], qls[i]);
                }
            }
            swgpu__cu_pair_t *J = calloc(npairs, sizeof *J);
            uint8_t **T = calloc(npairs, sizeof *T);
            for (size_t k = 0; k < npairs; k++) {
                size_t qi = tap_rand(&seed) % nq, L = qls[qi];
                size_t tl = tls[tap_rand(&seed) % nt];
                size_t a = tap_rand(&seed) % 3 == 0 ? 0 : tap_rand(&seed) % L;
                size_t len = tap_rand(&seed) % 3 == 0 ? L - a : 1 + tap_rand(&seed) % (L - a);
                T[k] = malloc(tl);
                switch (tap_rand(&seed) % 3) {
                case 0:
                    rand_seq(T[k], tl, 0);
                    break;
                case 1: /* related: the stretch with substitutions */
                    for (size_t j = 0; j < tl; j++)
                        T[k][j] = tap_rand(&seed) % 5 ? q[qi][a + j % len] : rand_res(0);
                    break;
                default: /* tandem copies of a short piece: ties */
                    for (size_t j = 0; j < tl; j++)
                        T[k][j] = q[qi][a + (j % (len < 12 ? len : 12))];
                }
                J[k] = (swgpu__cu_pair_t){.q = &Q[qi], .qoff = a, .qlen = len, .t = T[k],
                                          .tlen = tl, .score = -1, .qend = -1, .tend = -1};
            }
            /* every third pair with its known score */
            long bad = 0, notdone = 0;
            int32_t *want = malloc(npairs * sizeof *want);
            int64_t *wq = malloc(npairs * sizeof *wq), *wt = malloc(npairs * sizeof *wt);
            int64_t *wb = malloc(npairs * sizeof *wb), *wtb = malloc(npairs * sizeof *wtb);
            long nbegin = 0;
            for (size_t k = 0; k < npairs; k++) {
                swgpu__query_t sub = *J[k].q;
                sub.res += J[k].qoff;
                sub.len = J[k].qlen;
                if (sub.rows)
                    sub.rows += J[k].qoff * SWGPU_NCODES;
                want[k] = -1;
                if (swgpu__ref_score_q(&sub, J[k].t, J[k].tlen, b62, go, ge, &want[k], &wq[k],
                                       &wt[k]))
                    fprintf(stderr, "ref: %s\n", swgpu_last_error());
                if (k % 3 == 0)
                    J[k].known = want[k];
                wb[k] = wtb[k] = -1;
                if (k % 3 == 0 && J[k].qoff == 0 && want[k] > 0) { /* and the begin */
                    swgpu_aln_t al = {0};
                    J[k].begin = 1;
                    if (swgpu__align_from_end_q(&sub, J[k].t, J[k].tlen, b62, go, ge, want[k],
                                                wq[k], wt[k], 1, &al, -1) == 0) {
                        wb[k] = al.qbeg;
                        wtb[k] = al.tbeg;
                    }
                    swgpu_aln_free(&al);
                }
            }
            rc = swgpu__cu_pairs_run(P, J, npairs);
            CHECK(rc == 0, "pairs run (gaps %d/%d, %s): %s", go, ge, pssm ? "PSSM" : "plain",
                  swgpu_last_error());
            for (size_t k = 0; rc == 0 && k < npairs; k++) {
                if (!J[k].done) {
                    notdone++;
                    continue;
                }
                nbegin += J[k].begin;
                if (J[k].score != want[k] || J[k].qend != wq[k] || J[k].tend != wt[k] ||
                    J[k].qbeg != wb[k] || J[k].tbeg != wtb[k]) {
                    if (bad++ < 5)
                        fprintf(stderr, "pair %zu (qlen %zu, stretch %zu+%zu, tlen %zu): GPU %d "
                                "(%lld, %lld) from (%lld, %lld), reference %d (%lld, %lld) from "
                                "(%lld, %lld)\n", k, J[k].q->len, J[k].qoff, J[k].qlen,
                                J[k].tlen, (int)J[k].score, (long long)J[k].qend,
                                (long long)J[k].tend, (long long)J[k].qbeg, (long long)J[k].tbeg,
                                (int)want[k], (long long)wq[k], (long long)wt[k],
                                (long long)wb[k], (long long)wtb[k]);
                }
            }
            CHECK(rc == 0 && bad == 0 && notdone == 0 && (size_t)nbegin > npairs / 20,
                  "pairs (gaps %d/%d, %s): %ld of %zu differ from the reference (%ld with the "
                  "begin), %ld not done", go, ge, pssm ? "PSSM" : "plain", bad, npairs, nbegin,
                  notdone);
            /* a wrong known score is refused */
            size_t k1 = 0;
            while (k1 < npairs && want[k1] <= 0)
                k1++;
            if (k1 < npairs) {
                swgpu__cu_pair_t w = J[k1];
                w.known = want[k1] + 1;
                rc = swgpu__cu_pairs_run(P, &w, 1);
                CHECK(rc == SWGPU_ERANGE && strstr(swgpu_last_error(), "internal error"),
                      "a wrong known score: status %d (%s)", rc, swgpu_last_error());
            }
            /* a second call reuses the profiles kept on the device */
            for (size_t k = 0; k < npairs; k++)
                J[k].score = -1;
            rc = swgpu__cu_pairs_run(P, J, npairs / 2);
            bad = 0;
            for (size_t k = 0; rc == 0 && k < npairs / 2; k++)
                bad += J[k].score != want[k] || J[k].qend != wq[k] || J[k].tend != wt[k] ||
                       J[k].qbeg != wb[k] || J[k].tbeg != wtb[k];
            CHECK(rc == 0 && bad == 0, "pairs, second call: %ld differ (%s)", bad,
                  rc ? swgpu_last_error() : "ok");
            swgpu__cu_pairs_destroy(P);
            for (size_t k = 0; k < npairs; k++)
                free(T[k]);
            free(T);
            free(J);
            free(want);
            free(wq);
            free(wt);
            free(wb);
            free(wtb);
            for (size_t i = 0; i < nq; i++) {
                free(q[i]);
                swgpu_pssm_destroy(ps[i]);
            }
        }
    swgpu_matrix_destroy(b62);
}

#endif /* SWGPU_HAVE_CUDA */

int main(void)
{
#if SWGPU_HAVE_CUDA
    const int streamed_only = getenv("SWGPU_TEST_STREAMED") != NULL;
    if (!streamed_only) {
        part1();
        part1_pssm();
    }
    const int gpus = swgpu__cuda_device_count();
    if (gpus < 0) {
        CHECK(0, "the GPUs: %s", swgpu_last_error());
    } else if (gpus == 0) {
        SKIP(1, "no CUDA device");
    } else if (streamed_only) { /* the streamed cases alone (a quick device check) */
        setvbuf(stdout, NULL, _IOLBF, 0);
        swgpu_matrix_t prot;
        mat_random(&prot, -4, 11, 6);
        static uint8_t q[6000];
        rand_seq(q, sizeof q, 0);
        part2_streamed(q, &prot);
    } else {
        printf("# %d GPU(s)%s\n", gpus,
               getenv("SWGPU_CUDA_DEVICES") ? " (SWGPU_CUDA_DEVICES)" : "");
        part2(getenv("SWGPU_TEST_SMALL") != NULL);
        part2_pssm(getenv("SWGPU_TEST_SMALL") != NULL);
        part2_pairs(getenv("SWGPU_TEST_SMALL") != NULL);
        part2_strands(getenv("SWGPU_TEST_SMALL") != NULL);
        alloc_failures();
    }
#else
    SKIP(1, "no CUDA device (built without CUDA)");
#endif
    return tap_done();
}
