/*
 * test_rank.c - how a search ranks and cuts its hits (swgpu_opts_t.rank):
 * blastp 2.12's order on tests/data/rank_*.fa (an E-value that inverts the
 * scores, equal hits, E-values below 1e-180; the numbers and commands are in
 * tests/cli/expected/README), and the top-N cut exact in both ranks: every
 * (top_n, E-value threshold) search keeps the filtered prefix of the whole
 * ranked list, for sequence and PSSM queries, with --no-self.
 */
#include "swgpu.h"
#include "tap.h"
#include "testlib.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* 1 if hit a ranks before hit b under rank, written from the rule itself */
static int before(swgpu_rank_t rank, const swgpu_hit_t *a, const swgpu_hit_t *b)
{
    if (rank == SWGPU_RANK_SCORE)
        return a->score > b->score || (a->score == b->score && a->target < b->target);
    double ea = a->evalue < 1e-180 ? 0 : a->evalue, eb = b->evalue < 1e-180 ? 0 : b->evalue;
    if (ea != eb)
        return ea < eb;
    return a->score > b->score || (a->score == b->score && a->target > b->target);
}

/* the ids of query i's hits, separated by spaces, with their scores */
static const char *hit_list(const swgpu_search_result_t *r, const swgpu_db_t *db, size_t i)
{
    static char buf[4096];
    size_t k = 0;
    buf[0] = 0;
    for (size_t h = 0; h < r->q[i].n_hits && k + 80 < sizeof buf; h++) {
        swgpu_seq_t s;
        if (swgpu_db_get(db, r->q[i].hits[h].target, &s) < 0)
            return "(no such target)";
        k += (size_t)snprintf(buf + k, sizeof buf - k, "%s%s:%d", h ? " " : "", s.id,
                              (int)r->q[i].hits[h].score);
    }
    return buf;
}

/* the fixture as blastp 2.12 ranks it (-comp_based_stats 0 -seg no
 * -max_hsps 1 -evalue 1e-3, with -max_target_seqs 1 and 3 for top 1, 3) */
static void test_blastp_order(void)
{
    swgpu_seqset_t *qs = NULL, *ds = NULL;
    swgpu_db_t *db = NULL;
    swgpu_matrix_t *m = NULL;
    CHECK_EQ_INT(swgpu_seqset_read(tl_path(tl_datadir(), "rank_q.fa"), SWGPU_AUTO, &qs, NULL),
                 SWGPU_OK);
    CHECK_EQ_INT(swgpu_seqset_read(tl_path(tl_datadir(), "rank_db.fa"), SWGPU_AUTO, &ds, NULL),
                 SWGPU_OK);
    if (!qs || !ds || swgpu_db_from_seqset(ds, &db) < 0 ||
        swgpu_matrix_builtin("BLOSUM62", &m) < 0) {
        CHECK(0, "rank fixture: %s", swgpu_last_error());
        goto done;
    }
    static const struct {
        swgpu_rank_t rank;
        int top;
        const char *q1, *qz;
    } cases[] = {
        /* short1 scores less than long1 but has the smaller E-value; the
         * dups are equal (listed from the last); zshort's E-value (1.7e-277)
         * is below zlong's (3.2e-250), both below 1e-180: equal, so the
         * score decides */
        {SWGPU_RANK_EVALUE, 50,
         "short1:406 long1:422 dupD:249 dupC:249 dupB:249 dupA:249", "zlong:1901 zshort:1891"},
        {SWGPU_RANK_EVALUE, 1, "short1:406", "zlong:1901"},
        {SWGPU_RANK_EVALUE, 3, "short1:406 long1:422 dupD:249", "zlong:1901 zshort:1891"},
        {SWGPU_RANK_SCORE, 50,
         "long1:422 short1:406 dupA:249 dupB:249 dupC:249 dupD:249", "zlong:1901 zshort:1891"},
        {SWGPU_RANK_SCORE, 1, "long1:422", "zlong:1901"},
        {SWGPU_RANK_SCORE, 3, "long1:422 short1:406 dupA:249", "zlong:1901 zshort:1891"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        for (int be = 0; be < 2; be++) {
            swgpu_opts_t o;
            swgpu_search_result_t *r = NULL;
            swgpu_opts_init(&o, SWGPU_PROTEIN);
            o.rank = cases[c].rank;
            o.top_n = cases[c].top;
            o.evalue = 1e-3;
            o.backend = be ? SWGPU_BACKEND_REF : SWGPU_BACKEND_CPU;
            o.threads = 2;
            CHECK_EQ_INT(swgpu_search(qs, db, m, &o, &r), SWGPU_OK);
            if (!r || r->n_queries != 2)
                continue;
            const char *rk = o.rank == SWGPU_RANK_SCORE ? "score" : "evalue";
            CHECK_EQ_STR(hit_list(r, db, 0), cases[c].q1);
            CHECK_EQ_STR(hit_list(r, db, 1), cases[c].qz);
            if (c == 0) { /* the E-values that make the order (blastp prints them alike) */
                const swgpu_hit_t *h = r->q[0].hits;
                CHECK(fabs(h[0].evalue / 1.60e-55 - 1) < 0.005 &&
                          fabs(h[1].evalue / 1.89e-53 - 1) < 0.005,
                      "%s: short1 E %g, long1 E %g", rk, h[0].evalue, h[1].evalue);
                h = r->q[1].hits;
                CHECK(h[0].evalue < 1e-180 && h[1].evalue < h[0].evalue,
                      "%s: zlong E %g > zshort E %g, both below 1e-180", rk, h[0].evalue,
                      h[1].evalue);
            }
            swgpu_search_result_destroy(r);
        }
done:
    swgpu_matrix_destroy(m);
    swgpu_db_destroy(db);
    swgpu_seqset_destroy(ds);
    swgpu_seqset_destroy(qs);
}

/* Random queries; a database of random sequences of lengths 5..1204, with
 * the queries' mutants in random flanks of 0..899 (E-values that invert
 * the scores), some mutants repeated (equal hits), and some queries whole
 * (E-values below 1e-180 for long ones).  Query i's id is also a database
 * sequence's when i is even (--no-self). */
static void build(uint64_t seed, size_t nq, size_t nd, swgpu_seqset_t **qs, swgpu_db_t **db)
{
    char **q = calloc(nq, sizeof *q), **d = calloc(nd, sizeof *d);
    swgpu_seqset_t *ds = NULL;
    char *mut = malloc(4000);
    for (size_t i = 0; i < nq; i++) {
        size_t len = 30 + tap_rand(&seed) % 500;
        q[i] = malloc(len + 1);
        tl_rand_letters(&seed, q[i], len, TL_AMINO);
    }
    for (size_t i = 0; i < nd; i++) {
        d[i] = malloc(8000);
        unsigned kind = (unsigned)(tap_rand(&seed) % 10);
        if (kind < 3) { /* a mutant between flanks */
            size_t a = tap_rand(&seed) % 900, b = tap_rand(&seed) % 900;
            size_t n = tl_mutate_letters(&seed, q[tap_rand(&seed) % nq], mut, 4000,
                                         2 + (unsigned)(tap_rand(&seed) % 40), TL_AMINO);
            tl_rand_letters(&seed, d[i], a, TL_AMINO);
            memcpy(d[i] + a, mut, n);
            tl_rand_letters(&seed, d[i] + a + n, b, TL_AMINO);
        } else if (kind == 3 && i > 0) { /* a copy of an earlier one */
            strcpy(d[i], d[tap_rand(&seed) % i]);
        } else if (kind == 4) { /* a query, whole */
            strcpy(d[i], q[tap_rand(&seed) % nq]);
        } else {
            size_t len = 5 + tap_rand(&seed) % 1200;
            tl_rand_letters(&seed, d[i], len, TL_AMINO);
        }
    }
    *qs = tl_set_of(SWGPU_PROTEIN, (const char *const *)q, nq, "s");
    /* ids: s0..s(nq-1) for the first nq (the queries' own ids), then d... */
    swgpu_seqset_create(SWGPU_PROTEIN, &ds);
    for (size_t i = 0; ds && i < nd; i++) {
        char id[32];
        if (i < nq && i % 2 == 0) {
            snprintf(id, sizeof id, "s%zu", i);
            swgpu_seqset_add(ds, id, "", q[i], strlen(q[i]));
        } else {
            snprintf(id, sizeof id, "d%zu", i);
            swgpu_seqset_add(ds, id, "", d[i], strlen(d[i]));
        }
    }
    if (!ds || swgpu_db_from_seqset(ds, db) < 0)
        *db = NULL;
    swgpu_seqset_destroy(ds);
    for (size_t i = 0; i < nq; i++) free(q[i]);
    for (size_t i = 0; i < nd; i++) free(d[i]);
    free(q);
    free(d);
    free(mut);
}

/* r's query i holds the hits of full's query i (every hit, ranked) that
 * pass max_e, first top of them, no_self aside: the count of differences */
static long cut_differs(const swgpu_query_result_t *full, const swgpu_query_result_t *r,
                        double max_e, int top, size_t self)
{
    size_t k = 0;
    long bad = 0;
    for (size_t h = 0; h < full->n_hits && k < (size_t)top; h++) {
        const swgpu_hit_t *x = &full->hits[h];
        if (!(x->evalue <= max_e) || x->target == self)
            continue;
        if (k >= r->n_hits)
            return bad + 1;
        const swgpu_hit_t *y = &r->hits[k++];
        bad += x->target != y->target || x->score != y->score ||
               memcmp(&x->evalue, &y->evalue, sizeof x->evalue) != 0;
    }
    return bad + (k != r->n_hits);
}

/* search() or search_pssm() of qs (pssms when given) */
static int run(const swgpu_seqset_t *qs, const swgpu_pssm_t *const *pssms, size_t n,
               const swgpu_db_t *db, const swgpu_matrix_t *m, const swgpu_opts_t *o,
               swgpu_search_result_t **r)
{
    return pssms ? swgpu_search_pssm(pssms, n, db, m, o, r) : swgpu_search(qs, db, m, o, r);
}

static void test_exact_cut(void)
{
    swgpu_seqset_t *qs = NULL;
    swgpu_db_t *db = NULL;
    swgpu_matrix_t *m = NULL;
    const size_t nq = 6, nd = 400;
    build(30, nq, nd, &qs, &db);
    swgpu_matrix_builtin("BLOSUM62", &m);
    if (!qs || !db || !m) {
        CHECK(0, "random database: %s", swgpu_last_error());
        goto done;
    }
    swgpu_pssm_t *pssms[8] = {0};
    for (size_t i = 0; i < nq; i++) {
        swgpu_seq_t s;
        swgpu_seqset_get(qs, i, &s);
        CHECK_EQ_INT(swgpu_pssm_from_hits(&s, NULL, NULL, db, m, NULL, 0.002, &pssms[i]),
                     SWGPU_OK);
    }
    static const double thresholds[] = {1e300, 1, 1e-5, 1e-100};
    static const int tops[] = {1, 3, 25};
    long inversions = 0, ties = 0, tiny = 0;
    for (int kind = 0; kind < 2; kind++)           /* sequence queries, PSSMs */
        for (int mi = 0; mi < 2; mi++)             /* spouge, old-fsc */
            for (int rk = 0; rk < 2; rk++) {       /* evalue, score */
                swgpu_opts_t o;
                swgpu_search_result_t *full = NULL;
                swgpu_opts_init(&o, SWGPU_PROTEIN);
                o.evalue_model = mi ? SWGPU_EVALUE_OLD_FSC : SWGPU_EVALUE_SPOUGE;
                o.rank = rk ? SWGPU_RANK_SCORE : SWGPU_RANK_EVALUE;
                o.no_align = 1;
                o.threads = 2;
                o.top_n = (int)nd;
                o.evalue = 1e300;
                const swgpu_pssm_t *const *ps = kind ? (const swgpu_pssm_t *const *)pssms : NULL;
                const char *what = kind ? "PSSM" : "sequence";
                const char *model = mi ? "old-fsc" : "spouge", *rn = rk ? "score" : "evalue";
                CHECK_EQ_INT(run(qs, ps, nq, db, m, &o, &full), SWGPU_OK);
                if (!full)
                    continue;
                long unsorted = 0;
                for (size_t i = 0; i < nq; i++) {
                    const swgpu_query_result_t *f = &full->q[i];
                    for (size_t h = 1; h < f->n_hits; h++) {
                        const swgpu_hit_t *a = &f->hits[h - 1], *b = &f->hits[h];
                        unsorted += !before(o.rank, a, b);
                        inversions += !mi && !rk && a->score < b->score;
                        ties += !mi && !rk && a->score == b->score && a->evalue == b->evalue;
                        tiny += !mi && !rk && a->evalue < 1e-180 && b->evalue < 1e-180 &&
                                a->evalue > b->evalue;
                    }
                }
                CHECK(unsorted == 0, "%s, %s, rank %s: %ld pairs out of order", what, model, rn,
                      unsorted);
                long bad = 0, cmp = 0;
                for (int x = 0; x < 4; x++)
                    for (int t = 0; t < 3; t++)
                        for (int self = 0; self < 2; self++) {
                            swgpu_search_result_t *r = NULL;
                            o.evalue = thresholds[x];
                            o.top_n = tops[t];
                            o.no_self = self && !kind;
                            if (run(qs, ps, nq, db, m, &o, &r) != SWGPU_OK) {
                                bad++;
                                continue;
                            }
                            for (size_t i = 0; i < nq; i++, cmp++)
                                /* --no-self drops query i's own copy: index i for even i */
                                bad += cut_differs(&full->q[i], &r->q[i], o.evalue, o.top_n,
                                                   o.no_self && i % 2 == 0 ? i : (size_t)-1);
                            swgpu_search_result_destroy(r);
                        }
                CHECK(bad == 0, "%s, %s, rank %s: %ld of %ld cuts differ from the ranked list",
                      what, model, rn, bad, cmp);
                o.evalue = 1e300;
                o.top_n = (int)nd;
                o.no_self = 0;
                swgpu_search_result_destroy(full);
            }
    /* the data have what the ranking is about, so the checks above can fail */
    CHECK(inversions > 0 && ties > 0 && tiny > 0,
          "E-value order: %ld score inversions, %ld equal hits, %ld pairs below 1e-180 "
          "in score order", inversions, ties, tiny);
    for (size_t i = 0; i < nq; i++)
        swgpu_pssm_destroy(pssms[i]);
done:
    swgpu_matrix_destroy(m);
    swgpu_db_destroy(db);
    swgpu_seqset_destroy(qs);
}

static void test_option(void)
{
    swgpu_opts_t o;
    swgpu_opts_init(&o, SWGPU_PROTEIN);
    CHECK_EQ_INT(o.rank, SWGPU_RANK_EVALUE);
    o.rank = (swgpu_rank_t)2;
    CHECK_EQ_INT(swgpu_opts_check(&o, NULL), SWGPU_EINVAL);
    CHECK(strstr(swgpu_last_error(), "rank 2: unknown") != NULL, "message: %s",
          swgpu_last_error());
}

int main(void)
{
    test_blastp_order();
    test_exact_cut();
    test_option();
    return tap_done();
}
