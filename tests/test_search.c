/*
 * test_search.c - swgpu_search and its options: top-N selection and its tie
 * rule, every query reported, E-value filter and models, scanned scores
 * equal to the alignments' scores, determinism across thread counts, option
 * checks; swgpu_scan_scores (every score of a scan) against swgpu_align;
 * DNA on both strands.
 */
#include "swgpu.h"
#include "tap.h"
#include "testlib.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Reference score of query qi vs database sequence ti by swgpu_align. */
static int ref_score(const swgpu_seqset_t *qs, size_t qi, const swgpu_db_t *db, size_t ti,
                     const swgpu_matrix_t *m, const swgpu_opts_t *o)
{
    swgpu_seq_t q, t;
    if (swgpu_seqset_get(qs, qi, &q) < 0 || swgpu_db_get(db, ti, &t) < 0)
        return -1;
    return (int)tl_align_score(q.res, q.len, t.res, t.len, m, o->gap_open, o->gap_extend);
}

static void test_known_score(const swgpu_matrix_t *b62)
{
    /* BLOSUM62 diagonal of MKWVTFISLL: 5+5+11+4+5+6+4+4+4+4 = 52 */
    const char *q[] = {"MKWVTFISLL"};
    const char *d[] = {"GGGGGGGGGG", "AAAMKWVTFISLLAAA", "PPPP"};
    swgpu_seqset_t *qs = tl_set_of(SWGPU_PROTEIN, q, 1, "s");
    swgpu_db_t *db = tl_db_of(SWGPU_PROTEIN, d, 3, "s");
    swgpu_opts_t o;
    swgpu_search_result_t *r = NULL;
    swgpu_opts_init(&o, SWGPU_PROTEIN);
    o.top_n = 1;
    CHECK_EQ_INT(swgpu_search(qs, db, b62, &o, &r), SWGPU_OK);
    if (r) {
        CHECK_EQ_INT(r->n_queries, 1);
        CHECK_EQ_INT(r->q[0].n_hits, 1);
        if (r->q[0].n_hits == 1) {
            const swgpu_hit_t *h = &r->q[0].hits[0];
            CHECK_EQ_INT(h->target, 1);
            CHECK_EQ_INT(h->score, 52);
            CHECK_EQ_INT(h->aln.qbeg, 0);
            CHECK_EQ_INT(h->aln.qend, 10);
            CHECK_EQ_INT(h->aln.tbeg, 3);
            CHECK_EQ_INT(h->aln.tend, 13);
            CHECK_EQ_INT(h->aln.n_ident, 10);
            CHECK_EQ_INT(h->aln.n_cigar, 1);
            CHECK(h->evalue > 0 && h->bits > 0, "evalue %g bits %g", h->evalue, h->bits);
        }
        CHECK(r->backend && *r->backend, "backend name set");
        /* cells: qlen * database residues */
        CHECK_EQ_INT(r->cells, 10 * (10 + 16 + 4));
    }
    swgpu_search_result_destroy(r);
    swgpu_db_destroy(db);
    swgpu_seqset_destroy(qs);
}

static void test_ties(const swgpu_matrix_t *b62)
{
    /* Targets 1, 3 and 4 all contain the query exactly (score 52); target 1
     * is the longest, so in the length-sorted scan order it comes last:
     * ranked by score, the hits must still be in database order 1, 3, 4. */
    const char *q[] = {"MKWVTFISLL"};
    const char *d[] = {"GGGG", "GGGGGGGGMKWVTFISLLGGGGGGGG", "PPPPPP", "MKWVTFISLL",
                       "GMKWVTFISLLG", "MKWVTFISL"};
    swgpu_seqset_t *qs = tl_set_of(SWGPU_PROTEIN, q, 1, "s");
    swgpu_db_t *db = tl_db_of(SWGPU_PROTEIN, d, 6, "s");
    swgpu_opts_t o;
    swgpu_search_result_t *r = NULL;
    swgpu_opts_init(&o, SWGPU_PROTEIN);
    o.rank = SWGPU_RANK_SCORE;
    o.top_n = 2;
    CHECK_EQ_INT(swgpu_search(qs, db, b62, &o, &r), SWGPU_OK);
    if (r && r->q[0].n_hits == 2) {
        CHECK_EQ_INT(r->q[0].hits[0].target, 1);
        CHECK_EQ_INT(r->q[0].hits[1].target, 3);
        CHECK_EQ_INT(r->q[0].hits[0].score, 52);
        CHECK_EQ_INT(r->q[0].hits[1].score, 52);
    } else {
        CHECK(0, "expected 2 hits");
    }
    swgpu_search_result_destroy(r);
    r = NULL;

    o.top_n = 10; /* more than the database: every positive-scoring target */
    CHECK_EQ_INT(swgpu_search(qs, db, b62, &o, &r), SWGPU_OK);
    if (r) {
        /* the query has no G and no P, and BLOSUM62 scores G and P against
         * each of its letters <= 0: GGGG and PPPPPP score 0 and are absent */
        CHECK_EQ_INT(r->q[0].n_hits, 4);
        if (r->q[0].n_hits == 4) {
            CHECK_EQ_INT(r->q[0].hits[0].target, 1);
            CHECK_EQ_INT(r->q[0].hits[1].target, 3);
            CHECK_EQ_INT(r->q[0].hits[2].target, 4);
            CHECK_EQ_INT(r->q[0].hits[3].target, 5);
            CHECK_EQ_INT(r->q[0].hits[3].score, 48); /* 52 minus the last L */
        }
    }
    swgpu_search_result_destroy(r);
    r = NULL;

    /* ranked by E-value (the default), equal scores differ by the
     * subjects' lengths (Spouge's correction): 1 (26 residues, E 7.14e-7),
     * 4 (12, 7.24e-7), 3 (10, 7.72e-7), then 5 (score 48, 3.14e-6) */
    o.rank = SWGPU_RANK_EVALUE;
    CHECK_EQ_INT(swgpu_search(qs, db, b62, &o, &r), SWGPU_OK);
    if (r && r->q[0].n_hits == 4) {
        static const size_t want[] = {1, 4, 3, 5};
        for (int h = 0; h < 4; h++)
            CHECK_EQ_INT(r->q[0].hits[h].target, want[h]);
        CHECK(r->q[0].hits[0].evalue < r->q[0].hits[1].evalue &&
                  r->q[0].hits[1].evalue < r->q[0].hits[2].evalue &&
                  r->q[0].hits[2].evalue < r->q[0].hits[3].evalue,
              "E-values ascending: %g %g %g %g", r->q[0].hits[0].evalue,
              r->q[0].hits[1].evalue, r->q[0].hits[2].evalue, r->q[0].hits[3].evalue);
    } else {
        CHECK(0, "expected 4 hits ranked by E-value");
    }
    swgpu_search_result_destroy(r);
    swgpu_db_destroy(db);
    swgpu_seqset_destroy(qs);
}

static void test_every_query_reported(const swgpu_matrix_t *b62)
{
    /* Query 1 (PPPP) has no positive score against a database without P;
     * it must still get its (empty) result, in query order. */
    const char *q[] = {"MKWVTFISLL", "PPPP", "WWW"};
    const char *d[] = {"MKWVTFISLL", "AAAA", "GMKWG"};
    swgpu_seqset_t *qs = tl_set_of(SWGPU_PROTEIN, q, 3, "s");
    swgpu_db_t *db = tl_db_of(SWGPU_PROTEIN, d, 3, "s");
    swgpu_opts_t o;
    swgpu_search_result_t *r = NULL;
    swgpu_opts_init(&o, SWGPU_PROTEIN);
    CHECK_EQ_INT(swgpu_search(qs, db, b62, &o, &r), SWGPU_OK);
    if (r) {
        CHECK_EQ_INT(r->n_queries, 3);
        for (size_t i = 0; i < r->n_queries && i < 3; i++)
            CHECK_EQ_INT(r->q[i].query, i);
        CHECK_EQ_INT(r->q[1].n_hits, 0);
        CHECK(r->q[1].hits == NULL, "no hit array for a query without hits");
        CHECK_EQ_INT(r->q[2].n_hits, 2); /* W in targets 0 and 2 */
        if (r->q[2].n_hits == 2) {
            CHECK_EQ_INT(r->q[2].hits[0].target, 0);
            CHECK_EQ_INT(r->q[2].hits[0].score, 11);
            CHECK_EQ_INT(r->q[2].hits[1].target, 2);
        }
    }
    swgpu_search_result_destroy(r);
    swgpu_db_destroy(db);
    swgpu_seqset_destroy(qs);
}

/* A random database of n proteins with homologs of the queries planted. */
static void build_random(uint64_t seed, size_t nq, size_t nd, swgpu_seqset_t **qs, swgpu_db_t **db)
{
    char **q = calloc(nq, sizeof *q), **d = calloc(nd, sizeof *d);
    for (size_t i = 0; i < nq; i++) {
        size_t len = 20 + tap_rand(&seed) % 200;
        q[i] = malloc(len + 1);
        tl_rand_letters(&seed, q[i], len, TL_AMINO);
    }
    for (size_t i = 0; i < nd; i++) {
        d[i] = malloc(600);
        if (i % 7 == 3) {
            tl_mutate_letters(&seed, q[tap_rand(&seed) % nq], d[i], 600, 4 + (unsigned)(i % 5), TL_AMINO);
        } else {
            size_t len = 5 + tap_rand(&seed) % 300;
            tl_rand_letters(&seed, d[i], len, TL_AMINO);
        }
    }
    *qs = tl_set_of(SWGPU_PROTEIN, (const char *const *)q, nq, "s");
    *db = tl_db_of(SWGPU_PROTEIN, (const char *const *)d, nd, "s");
    for (size_t i = 0; i < nq; i++) free(q[i]);
    for (size_t i = 0; i < nd; i++) free(d[i]);
    free(q);
    free(d);
}

static void test_random(const swgpu_matrix_t *b62)
{
    swgpu_seqset_t *qs = NULL;
    swgpu_db_t *db = NULL;
    build_random(42, 6, 150, &qs, &db);
    CHECK(qs && db, "random inputs built");
    if (!qs || !db)
        return;
    swgpu_opts_t o;
    swgpu_opts_init(&o, SWGPU_PROTEIN);
    o.top_n = 15;
    o.evalue = 1e9; /* keep everything with score > 0 */
    o.threads = 1;
    o.rank = SWGPU_RANK_SCORE; /* the order checked below (test_rank.c: by E-value) */
    swgpu_search_result_t *r1 = NULL, *r2 = NULL, *r4 = NULL, *rs = NULL;
    CHECK_EQ_INT(swgpu_search(qs, db, b62, &o, &r1), SWGPU_OK);
    o.threads = 2;
    CHECK_EQ_INT(swgpu_search(qs, db, b62, &o, &r2), SWGPU_OK);
    o.threads = 4;
    CHECK_EQ_INT(swgpu_search(qs, db, b62, &o, &r4), SWGPU_OK);
    if (!r1 || !r2 || !r4)
        goto done;

    size_t nd = swgpu_db_size(db);
    int *all = malloc(nd * sizeof *all);
    long bad_top = 0, bad_order = 0, bad_rescore = 0, bad_threads = 0, bad_ref = 0;
    for (size_t i = 0; i < r1->n_queries; i++) {
        const swgpu_query_result_t *qr = &r1->q[i];
        swgpu_seq_t q;
        swgpu_seqset_get(qs, i, &q);
        /* expected top list: brute force over the database with swgpu_align */
        size_t positive = 0;
        for (size_t t = 0; t < nd; t++) {
            all[t] = ref_score(qs, i, db, t, b62, &o);
            positive += all[t] > 0;
        }
        size_t want = positive < 15 ? positive : 15;
        if (qr->n_hits != want)
            bad_top++;
        for (size_t h = 0; h < qr->n_hits; h++) {
            const swgpu_hit_t *hit = &qr->hits[h];
            if (all[hit->target] != hit->score)
                bad_ref++;
            /* rank: no target outside the list may beat this hit */
            if (h > 0) {
                const swgpu_hit_t *p = &qr->hits[h - 1];
                if (p->score < hit->score || (p->score == hit->score && p->target >= hit->target))
                    bad_order++;
            }
            swgpu_seq_t t;
            int64_t s = -1;
            swgpu_db_get(db, hit->target, &t);
            if (swgpu_cigar_score(&hit->aln, q.res, q.len, t.res, t.len, b62, o.gap_open,
                                  o.gap_extend, &s) < 0 || s != hit->score || hit->aln.score != hit->score)
                bad_rescore++;
            if (h >= r2->q[i].n_hits || h >= r4->q[i].n_hits ||
                r2->q[i].hits[h].target != hit->target || r4->q[i].hits[h].target != hit->target ||
                !tl_same_aln(&r2->q[i].hits[h].aln, &hit->aln) || !tl_same_aln(&r4->q[i].hits[h].aln, &hit->aln) ||
                r2->q[i].hits[h].evalue != hit->evalue)
                bad_threads++;
        }
        if (qr->n_hits) {
            /* the weakest kept hit beats every target left out */
            const swgpu_hit_t *last = &qr->hits[qr->n_hits - 1];
            for (size_t t = 0; t < nd; t++) {
                int in = 0;
                for (size_t h = 0; h < qr->n_hits; h++)
                    in |= qr->hits[h].target == t;
                if (!in && (all[t] > last->score || (all[t] == last->score && t < last->target)))
                    bad_top++;
            }
        }
        if (r2->q[i].n_hits != qr->n_hits || r4->q[i].n_hits != qr->n_hits)
            bad_threads++;
    }
    free(all);
    CHECK_EQ_INT(bad_top, 0);
    CHECK_EQ_INT(bad_order, 0);
    CHECK_EQ_INT(bad_ref, 0);
    CHECK_EQ_INT(bad_rescore, 0);
    CHECK_EQ_INT(bad_threads, 0);

    /* planted homologs give strong hits: with a strict E-value only those remain */
    o.threads = 2;
    o.evalue = 1e-5;
    CHECK_EQ_INT(swgpu_search(qs, db, b62, &o, &rs), SWGPU_OK);
    if (rs) {
        long kept = 0, bad_e = 0, missing = 0;
        for (size_t i = 0; i < rs->n_queries; i++) {
            for (size_t h = 0; h < rs->q[i].n_hits; h++) {
                kept++;
                bad_e += !(rs->q[i].hits[h].evalue <= 1e-5);
            }
            /* every hit of the loose search with E <= 1e-5 is in the strict one */
            size_t want = 0;
            for (size_t h = 0; h < r1->q[i].n_hits; h++)
                want += r1->q[i].hits[h].evalue <= 1e-5;
            missing += want != rs->q[i].n_hits;
        }
        CHECK(kept > 0, "some planted homolog passes E <= 1e-5");
        CHECK_EQ_INT(bad_e, 0);
        CHECK_EQ_INT(missing, 0);
    }

done:
    swgpu_search_result_destroy(r1);
    swgpu_search_result_destroy(r2);
    swgpu_search_result_destroy(r4);
    swgpu_search_result_destroy(rs);
    swgpu_db_destroy(db);
    swgpu_seqset_destroy(qs);
}

/* Searches with o at each threshold and top_n of the lists, against all
 * (every positive-scoring hit, in the same rank): each must hold, query by
 * query, the first top_n of all's hits that pass its threshold, in order.
 * Returns the differences; *kept counts the hits compared. */
static long top_lists_diff(const swgpu_seqset_t *qs, const swgpu_db_t *db,
                           const swgpu_matrix_t *m, swgpu_opts_t o,
                           const swgpu_search_result_t *all, const double *thresholds,
                           size_t nthr, const int *tops, size_t ntops, long *kept)
{
    long bad = 0;
    for (size_t x = 0; x < nthr; x++)
        for (size_t k = 0; k < ntops; k++) {
            swgpu_search_result_t *r = NULL;
            o.evalue = thresholds[x];
            o.top_n = tops[k];
            CHECK_EQ_INT(swgpu_search(qs, db, m, &o, &r), SWGPU_OK);
            for (size_t i = 0; r && i < r->n_queries; i++) {
                const swgpu_query_result_t *qa = &all->q[i], *qr = &r->q[i];
                size_t n = 0;
                for (size_t h = 0; h < qa->n_hits && n < (size_t)tops[k]; h++) {
                    if (!(qa->hits[h].evalue <= thresholds[x]))
                        continue;
                    bad += n >= qr->n_hits || qr->hits[n].target != qa->hits[h].target ||
                           qr->hits[n].score != qa->hits[h].score ||
                           qr->hits[n].evalue != qa->hits[h].evalue;
                    n++;
                }
                bad += n != qr->n_hits;
                *kept += (long)n;
            }
            swgpu_search_result_destroy(r);
        }
    return bad;
}

/*
 * E-value models: every hit's E-value is swgpu_hit_evalue() of its score,
 * query, subject and database; the hits are the top_n by (score, database
 * order) among those with E-value <= the threshold.  Under Spouge's model a
 * short subject can pass with a lower score than a long one that fails, so
 * the filter must come before the top_n (checked against the full list);
 * under OLD_FSC the E-value falls with the score alone.
 */
static void test_evalue_models(const swgpu_matrix_t *b62)
{
    swgpu_seqset_t *qs = NULL;
    swgpu_db_t *db = NULL;
    build_random(7, 8, 400, &qs, &db);
    CHECK(qs && db, "random inputs built");
    if (!qs || !db)
        goto out;
    size_t nd = swgpu_db_size(db);
    swgpu_opts_t o;
    swgpu_opts_init(&o, SWGPU_PROTEIN);
    CHECK_EQ_INT(o.evalue_model, SWGPU_EVALUE_SPOUGE);
    o.threads = 2;
    o.no_align = 1;
    o.rank = SWGPU_RANK_SCORE; /* inversions are of that order (test_rank.c: by E-value) */
    static const swgpu_evalue_model_t models[] = {SWGPU_EVALUE_SPOUGE, SWGPU_EVALUE_OLD_FSC};
    static const double thresholds[] = {1e-6, 0.02, 3};
    static const int tops[] = {1, 4, 1000};
    for (size_t mi = 0; mi < 2; mi++) {
        swgpu_search_result_t *all = NULL;
        o.evalue_model = models[mi];
        o.top_n = (int)nd;
        o.evalue = 1e300;
        CHECK_EQ_INT(swgpu_search(qs, db, b62, &o, &all), SWGPU_OK);
        if (!all)
            continue;
        long bad_e = 0, inversions = 0, bad_list = 0, kept = 0;
        for (size_t i = 0; i < all->n_queries; i++) {
            const swgpu_query_result_t *qa = &all->q[i];
            swgpu_seq_t q, t;
            swgpu_seqset_get(qs, i, &q);
            CHECK(qa->karlin.has_spouge == 1, "BLOSUM62 11/1 has Spouge's parameters");
            for (size_t h = 0; h < qa->n_hits; h++) {
                swgpu_db_get(db, qa->hits[h].target, &t);
                double e = swgpu_hit_evalue(&qa->karlin, models[mi], qa->hits[h].score, q.len,
                                            t.len, swgpu_db_residues(db), nd);
                bad_e += e != qa->hits[h].evalue;
            }
            for (size_t x = 0; x < 3; x++)
                for (size_t a = 0; a < qa->n_hits; a++)
                    for (size_t b = a + 1; b < qa->n_hits; b++)
                        inversions += qa->hits[a].evalue > thresholds[x] &&
                                      qa->hits[b].evalue <= thresholds[x];
        }
        bad_list = top_lists_diff(qs, db, b62, o, all, thresholds, 3, tops, 3, &kept);
        CHECK_EQ_INT(bad_e, 0);
        CHECK_EQ_INT(bad_list, 0);
        CHECK(kept > 20, "%s: %ld hits kept over the thresholds", mi ? "old-fsc" : "spouge", kept);
        if (models[mi] == SWGPU_EVALUE_SPOUGE)
            CHECK(inversions > 0, "spouge: a weaker hit passes where a stronger one fails (%ld)",
                  inversions);
        else
            CHECK_EQ_INT(inversions, 0);
        swgpu_search_result_destroy(all);
    }
    o.evalue_model = (swgpu_evalue_model_t)2;
    CHECK_EQ_INT(swgpu_opts_check(&o, b62), SWGPU_EINVAL);
    CHECK(strstr(swgpu_last_error(), "E-value model 2") != NULL, "%s", swgpu_last_error());
out:
    swgpu_db_destroy(db);
    swgpu_seqset_destroy(qs);
}

/*
 * Ranked by E-value (the default), the top_n hits are the first top_n of
 * the whole list under that rank among those that pass the threshold,
 * although the search skips the scores that cannot beat its worst kept hit
 * (hits.c top_hits): related subjects of a long, W-rich query score far
 * above the scores it remembers (its first 4,096 from the entry score),
 * many of them close to each other, so the cut is taken both ways.
 */
static void test_evalue_rank_cut(const swgpu_matrix_t *b62)
{
    enum { NQ = 4, ND = 400, BASE = 900 };
    uint64_t seed = 77;
    char *q[NQ], *d[ND];
    q[0] = malloc(BASE + 1);
    for (int i = 0; i < BASE; i++)
        q[0][i] = tap_rand(&seed) % 3 == 0 ? 'W' : TL_AMINO[tap_rand(&seed) % 20];
    q[0][BASE] = 0;
    q[1] = malloc(2 * BASE);
    tl_mutate_letters(&seed, q[0], q[1], 2 * BASE, 8, TL_AMINO);
    q[2] = malloc(161);
    tl_rand_letters(&seed, q[2], 160, TL_AMINO);
    q[3] = malloc(401);
    tl_rand_letters(&seed, q[3], 400, TL_AMINO);
    for (int i = 0; i < ND; i++) {
        d[i] = malloc(2 * BASE);
        if (i < 40)
            tl_mutate_letters(&seed, q[0], d[i], 2 * BASE, 3 + (unsigned)i, TL_AMINO);
        else if (i < 52)
            tl_mutate_letters(&seed, q[2], d[i], 2 * BASE, 2 + (unsigned)(i % 6), TL_AMINO);
        else
            tl_rand_letters(&seed, d[i], 20 + tap_rand(&seed) % 400, TL_AMINO);
    }
    swgpu_seqset_t *qs = tl_set_of(SWGPU_PROTEIN, (const char *const *)q, NQ, "q");
    swgpu_db_t *db = tl_db_of(SWGPU_PROTEIN, (const char *const *)d, ND, "d");
    for (int i = 0; i < NQ; i++)
        free(q[i]);
    for (int i = 0; i < ND; i++)
        free(d[i]);
    swgpu_opts_t o;
    swgpu_opts_init(&o, SWGPU_PROTEIN);
    o.threads = 2;
    o.no_align = 1;
    o.top_n = ND;
    o.evalue = 1e300;
    swgpu_search_result_t *all = NULL;
    CHECK_EQ_INT(swgpu_search(qs, db, b62, &o, &all), SWGPU_OK);
    if (!all)
        goto out;
    int32_t best = 0;
    for (size_t h = 0; h < all->q[0].n_hits; h++)
        if (all->q[0].hits[h].score > best)
            best = all->q[0].hits[h].score;
    CHECK(best > 5000, "the W-rich query's best score %d", (int)best);
    static const double thresholds[] = {1e300, 1e-3, 1e-150};
    static const int tops[] = {1, 3, 7, 30, 100};
    long kept = 0;
    CHECK_EQ_INT(top_lists_diff(qs, db, b62, o, all, thresholds, 3, tops, 5, &kept), 0);
    CHECK(kept > 100, "%ld hits kept over the thresholds and tops", kept);
    swgpu_search_result_destroy(all);
out:
    swgpu_db_destroy(db);
    swgpu_seqset_destroy(qs);
}

static void test_no_align(const swgpu_matrix_t *b62)
{
    const char *q[] = {"MKWVTFISLL"};
    const char *d[] = {"AAAMKWVTFISLLAAA", "MKWVTAAAFISLL"};
    swgpu_seqset_t *qs = tl_set_of(SWGPU_PROTEIN, q, 1, "s");
    swgpu_db_t *db = tl_db_of(SWGPU_PROTEIN, d, 2, "s");
    swgpu_opts_t o;
    swgpu_search_result_t *r = NULL;
    swgpu_opts_init(&o, SWGPU_PROTEIN);
    o.no_align = 1;
    CHECK_EQ_INT(swgpu_search(qs, db, b62, &o, &r), SWGPU_OK);
    if (r && r->q[0].n_hits == 2) {
        CHECK_EQ_INT(r->q[0].hits[0].score, 52);
        CHECK_EQ_INT(r->q[0].hits[0].aln.n_cigar, 0);
        /* MKWVT (30) + gap of 3 (11 + 3) + FISLL (22) = 38 */
        CHECK_EQ_INT(r->q[0].hits[1].score, 38);
        CHECK(r->align_seconds == 0.0, "no alignment time");
    } else {
        CHECK(0, "expected 2 hits");
    }
    swgpu_search_result_destroy(r);
    swgpu_db_destroy(db);
    swgpu_seqset_destroy(qs);
}

/* opts.progress: called with queries and cells counting up, the last call
 * with every query and every cell done; the result is the same without it */
typedef struct {
    int calls, ordered;
    size_t done, total;
    uint64_t cells_done, cells_total;
} progress_log_t;

static void log_progress(size_t done, size_t total, uint64_t cells_done, uint64_t cells_total,
                         double seconds, void *user)
{
    progress_log_t *p = user;
    if (done <= p->done || cells_done <= p->cells_done || seconds < 0 || done > total)
        p->ordered = 0;
    p->calls++;
    p->done = done;
    p->total = total;
    p->cells_done = cells_done;
    p->cells_total = cells_total;
}

static void test_progress(const swgpu_matrix_t *b62)
{
    const char *q[] = {"MKWVTFISLL", "AAAMKW", "FISLLAAAW"};
    const char *d[] = {"AAAMKWVTFISLLAAA", "MKWVTAAAFISLL", "WWW"};
    swgpu_seqset_t *qs = tl_set_of(SWGPU_PROTEIN, q, 3, "s");
    swgpu_db_t *db = tl_db_of(SWGPU_PROTEIN, d, 3, "s");
    const swgpu_backend_t be[] = {SWGPU_BACKEND_REF, SWGPU_BACKEND_CPU};
    for (int b = 0; b < 2; b++) {
        swgpu_opts_t o;
        swgpu_search_result_t *r1 = NULL, *r2 = NULL;
        progress_log_t log = {0, 1, 0, 0, 0, 0};
        swgpu_opts_init(&o, SWGPU_PROTEIN);
        o.backend = be[b];
        CHECK_EQ_INT(swgpu_search(qs, db, b62, &o, &r1), SWGPU_OK);
        o.progress = log_progress;
        o.progress_user = &log;
        CHECK_EQ_INT(swgpu_search(qs, db, b62, &o, &r2), SWGPU_OK);
        CHECK(log.calls >= 1 && log.ordered, "progress calls in order (%d calls)", log.calls);
        CHECK_EQ_INT((int)log.done, 3);
        CHECK_EQ_INT((int)log.total, 3);
        /* (10 + 6 + 9) query residues x 32 database residues */
        CHECK_EQ_INT((int)log.cells_total, 800);
        CHECK_EQ_INT((int)log.cells_done, 800);
        if (r1 && r2)
            for (size_t i = 0; i < 3; i++) {
                CHECK_EQ_INT((int)r2->q[i].n_hits, (int)r1->q[i].n_hits);
                for (size_t h = 0; h < r1->q[i].n_hits && h < r2->q[i].n_hits; h++)
                    CHECK_EQ_INT(r2->q[i].hits[h].score, r1->q[i].hits[h].score);
            }
        swgpu_search_result_destroy(r1);
        swgpu_search_result_destroy(r2);
    }
    swgpu_db_destroy(db);
    swgpu_seqset_destroy(qs);
}

/* all against all: --no-self drops exactly the query's own sequence (same id,
 * same residues), keeps a same-id sequence with other residues, and the
 * next best hit moves up; the same file read as a makedb database gives the
 * same queries */
static void test_no_self(const swgpu_matrix_t *b62)
{
    const char *seqs[] = {"MKWVTFISLLLLFSSAYS", "MKWVTFISLLAAFSSAYS", "PEPTIDEKWVTFISLL",
                          "GGGGSSSSAAAA"};
    swgpu_seqset_t *qs = tl_set_of(SWGPU_PROTEIN, seqs, 4, "s");
    swgpu_db_t *db = tl_db_of(SWGPU_PROTEIN, seqs, 4, "s");
    swgpu_opts_t o;
    swgpu_search_result_t *all = NULL, *ns = NULL;
    swgpu_opts_init(&o, SWGPU_PROTEIN);
    o.evalue = 1e9;
    o.top_n = 3;
    CHECK_EQ_INT(swgpu_search(qs, db, b62, &o, &all), SWGPU_OK);
    o.no_self = 1;
    CHECK_EQ_INT(swgpu_search(qs, db, b62, &o, &ns), SWGPU_OK);
    if (all && ns) {
        long selfs = 0, shifted = 0;
        for (size_t i = 0; i < 4; i++) {
            if (all->q[i].n_hits && all->q[i].hits[0].target == i)
                selfs++; /* a sequence is its own best hit */
            size_t k = 0;
            for (size_t h = 0; h < all->q[i].n_hits; h++) /* the others, in order */
                if (all->q[i].hits[h].target != i) {
                    if (k < ns->q[i].n_hits && ns->q[i].hits[k].target == all->q[i].hits[h].target &&
                        ns->q[i].hits[k].score == all->q[i].hits[h].score)
                        shifted++;
                    k++;
                }
            for (size_t h = 0; h < ns->q[i].n_hits; h++)
                CHECK(ns->q[i].hits[h].target != i, "query %zu: self hit with no_self", i);
        }
        CHECK_EQ_INT(selfs, 4);
        /* query 0's hits without itself: 1 and 2 (and a third, the next best) */
        CHECK_EQ_INT(ns->q[0].n_hits, 3);
        CHECK_EQ_INT(ns->q[0].hits[0].target, 1);
        CHECK(shifted >= 6, "the other hits move up in order (%ld)", shifted);
    }
    swgpu_search_result_destroy(all);
    swgpu_search_result_destroy(ns);
    /* a database sequence with the query's id but other residues stays */
    const char *other[] = {"MKWVTFISLLLLFSSAYT"};
    swgpu_seqset_t *q1 = tl_set_of(SWGPU_PROTEIN, seqs, 1, "s");
    swgpu_db_t *d1 = tl_db_of(SWGPU_PROTEIN, other, 1, "s"); /* id "s0" as well */
    swgpu_search_result_t *r = NULL;
    CHECK_EQ_INT(swgpu_search(q1, d1, b62, &o, &r), SWGPU_OK);
    if (r)
        CHECK_EQ_INT(r->q[0].n_hits, 1);
    swgpu_search_result_destroy(r);
    /* a makedb file read as a query set: the sequences in database order */
    char path[] = "/tmp/swgpu_test_noself_XXXXXX";
    int fd = mkstemp(path);
    if (fd >= 0) {
        close(fd);
        swgpu_seqset_t *back = NULL;
        CHECK_EQ_INT(swgpu_db_write(db, path), SWGPU_OK);
        CHECK_EQ_INT(swgpu_seqset_read(path, SWGPU_AUTO, &back, NULL), SWGPU_OK);
        if (back) {
            CHECK_EQ_INT(swgpu_seqset_size(back), 4);
            for (size_t i = 0; i < 4 && i < swgpu_seqset_size(back); i++) {
                swgpu_seq_t a, b;
                swgpu_seqset_get(back, i, &a);
                swgpu_seqset_get(qs, i, &b);
                CHECK(a.len == b.len && !memcmp(a.res, b.res, a.len) && !strcmp(a.id, b.id),
                      "makedb record %zu read back as query", i);
            }
        }
        swgpu_seqset_destroy(back);
        unlink(path);
    }
    swgpu_seqset_destroy(q1);
    swgpu_db_destroy(d1);
    swgpu_db_destroy(db);
    swgpu_seqset_destroy(qs);
}

static void test_dna(void)
{
    /* +2/-3, open 5 extend 2: ACGTACGTAC (10 matches) = 20 */
    const char *q[] = {"ACGTACGTAC"};
    const char *d[] = {"TTTTACGTACGTACTTTT", "GGGGGGG"};
    swgpu_seqset_t *qs = tl_set_of(SWGPU_DNA, q, 1, "s");
    swgpu_db_t *db = tl_db_of(SWGPU_DNA, d, 2, "s");
    swgpu_matrix_t *m = NULL;
    swgpu_opts_t o;
    swgpu_search_result_t *r = NULL;
    swgpu_opts_init(&o, SWGPU_DNA);
    CHECK_EQ_INT(o.gap_open, 5);
    CHECK_EQ_INT(o.gap_extend, 2);
    CHECK_EQ_INT(swgpu_matrix_dna(2, -3, &m), SWGPU_OK);
    CHECK_EQ_INT(swgpu_search(qs, db, m, &o, &r), SWGPU_OK);
    if (r && r->q[0].n_hits >= 1) {
        CHECK_EQ_INT(r->q[0].hits[0].target, 0);
        CHECK_EQ_INT(r->q[0].hits[0].score, 20);
        CHECK_EQ_INT(r->q[0].hits[0].aln.tbeg, 4);
        CHECK_EQ_INT(r->q[0].karlin.estimated, 0); /* +2/-3 5/2 is published */
    } else {
        CHECK(0, "expected a DNA hit");
    }
    swgpu_search_result_destroy(r);
    swgpu_matrix_destroy(m);
    swgpu_db_destroy(db);
    swgpu_seqset_destroy(qs);
}


/* A DNA code string's reverse complement (ACGT only) */
static void revcomp_text(const char *s, char *out)
{
    size_t n = strlen(s);
    for (size_t i = 0; i < n; i++) {
        char c = s[n - 1 - i];
        out[i] = c == 'A' ? 'T' : c == 'C' ? 'G' : c == 'G' ? 'C' : 'A';
    }
    out[n] = 0;
}

/*
 * DNA searches on both strands (issue 28): every hit's score is the better
 * of swgpu_align's scores of the query against the subject and against its
 * reverse complement (plus on a tie), on each backend and strand setting;
 * a minus hit's CIGAR scores that score against the reverse complement from
 * the interval turned back; swgpu_scan_scores gives the same best of two.
 */
enum { NQ = 5, ND = 24 }; /* the strand tests' queries and database sequences */

/* The strand tests' queries q and database sequences d (in static buffers):
 * random bases; each d[j] holds a piece of q[j % NQ] between random flanks,
 * reverse-complemented for j % 3 == 1, with substitutions for j % 4 == 3,
 * left out for j % 6 == 5. */
static void strand_fixtures(const char **q, const char **d)
{
    static char qbuf[NQ][400], dbuf[ND][1200], tmp[1200], rc[1200];
    uint64_t seed = 2828;
    for (size_t i = 0; i < NQ; i++) {
        tl_rand_letters(&seed, qbuf[i], 120 + 60 * i, TL_NUC);
        q[i] = qbuf[i];
    }
    for (size_t j = 0; j < ND; j++) { /* flanks around a query's piece, either strand */
        size_t fl = 50 + tap_rand(&seed) % 300, fr = 50 + tap_rand(&seed) % 300;
        tl_rand_letters(&seed, dbuf[j], fl, TL_NUC);
        const char *src = q[j % NQ];
        size_t a = tap_rand(&seed) % 40, len = strlen(src) - a - tap_rand(&seed) % 40;
        memcpy(tmp, src + a, len);
        tmp[len] = 0;
        if (j % 3 == 1) {
            revcomp_text(tmp, rc);
            strcpy(tmp, rc);
        }
        if (j % 4 == 3) /* a weaker homolog: substitutions */
            for (size_t k = 0; k < len; k += 7)
                tmp[k] = tmp[k] == 'A' ? 'C' : 'A';
        strcat(dbuf[j], j % 6 == 5 ? "" : tmp);
        tl_rand_letters(&seed, dbuf[j] + strlen(dbuf[j]), fr, TL_NUC);
        d[j] = dbuf[j];
    }
}

/* Exact coordinates: a query that is the reverse complement of d1's
 * bases 100..159 (0-based) is found there on the minus strand */
static void strand_exact(const swgpu_db_t *db, const swgpu_matrix_t *m, const swgpu_opts_t *base,
                         const char *d1)
{
    char piece[61], pq[61];
    memcpy(piece, d1 + 100, 60);
    piece[60] = 0;
    revcomp_text(piece, pq);
    const char *one[] = {pq};
    swgpu_seqset_t *q1 = tl_set_of(SWGPU_DNA, one, 1, "s");
    swgpu_search_result_t *r = NULL;
    swgpu_opts_t o = *base;
    o.backend = SWGPU_BACKEND_CPU;
    o.strand = SWGPU_STRAND_BOTH;
    o.top_n = 1;
    CHECK_EQ_INT(swgpu_search(q1, db, m, &o, &r), SWGPU_OK);
    if (r && r->q[0].n_hits == 1) {
        const swgpu_hit_t *x = &r->q[0].hits[0];
        CHECK_EQ_INT(x->target, 1);
        CHECK_EQ_INT(x->score, 120);
        CHECK_EQ_INT(x->minus, 1);
        CHECK_EQ_INT(x->aln.qbeg, 0);
        CHECK_EQ_INT(x->aln.qend, 60);
        CHECK_EQ_INT(x->aln.tbeg, 100);
        CHECK_EQ_INT(x->aln.tend, 160);
        CHECK_EQ_INT(x->aln.n_cigar, 1);
    } else {
        CHECK(0, "the reverse-complemented piece is not found");
    }
    swgpu_search_result_destroy(r);
    o.strand = SWGPU_STRAND_PLUS; /* on the plus strand alone: not as that */
    CHECK_EQ_INT(swgpu_search(q1, db, m, &o, &r), SWGPU_OK);
    CHECK(r && (r->q[0].n_hits == 0 || r->q[0].hits[0].score < 120),
          "plus strand only: the piece scores %d", r && r->q[0].n_hits ?
          (int)r->q[0].hits[0].score : 0);
    swgpu_search_result_destroy(r);
    swgpu_seqset_destroy(q1);
}

static void test_strands(void)
{
    const char *q[NQ], *d[ND];
    strand_fixtures(q, d);
    swgpu_seqset_t *qs = tl_set_of(SWGPU_DNA, q, NQ, "s");
    swgpu_db_t *db = tl_db_of(SWGPU_DNA, d, ND, "s");
    swgpu_matrix_t *m = NULL;
    CHECK_EQ_INT(swgpu_matrix_dna(2, -3, &m), SWGPU_OK);
    if (!qs || !db || !m) {
        CHECK(0, "strand fixtures");
        return;
    }
    swgpu_opts_t o;
    swgpu_opts_init(&o, SWGPU_DNA);
    CHECK_EQ_INT(o.strand, SWGPU_STRAND_BOTH);
    o.top_n = ND;
    o.evalue = 1e300;
    /* the reference: each pair's score on each strand */
    int plus[NQ][ND], minus[NQ][ND];
    uint8_t rcres[1200];
    for (size_t i = 0; i < NQ; i++)
        for (size_t j = 0; j < ND; j++) {
            swgpu_seq_t sq, st;
            swgpu_aln_t a;
            memset(&a, 0, sizeof a);
            swgpu_seqset_get(qs, i, &sq);
            swgpu_db_get(db, j, &st);
            plus[i][j] = ref_score(qs, i, db, j, m, &o);
            swgpu_dna_revcomp(st.res, st.len, rcres);
            swgpu_align(sq.res, sq.len, rcres, st.len, m, o.gap_open, o.gap_extend, 1, &a);
            minus[i][j] = (int)a.score;
            swgpu_aln_free(&a);
        }
    size_t n_minus_best = 0;
    for (size_t i = 0; i < NQ; i++)
        for (size_t j = 0; j < ND; j++)
            n_minus_best += minus[i][j] > plus[i][j];
    CHECK(n_minus_best >= 8, "only %zu pairs are better on the minus strand", n_minus_best);

    static const swgpu_backend_t backends[] = {SWGPU_BACKEND_REF, SWGPU_BACKEND_CPU,
                                               SWGPU_BACKEND_CPU};
    static const swgpu_strand_t strands[] = {SWGPU_STRAND_BOTH, SWGPU_STRAND_PLUS,
                                             SWGPU_STRAND_MINUS};
    for (size_t b = 0; b < 3; b++)
        for (size_t k = 0; k < 3; k++) {
            swgpu_search_result_t *r = NULL;
            o.backend = backends[b];
            o.threads = (int)b + 1;
            o.strand = strands[k];
            CHECK_EQ_INT(swgpu_search(qs, db, m, &o, &r), SWGPU_OK);
            size_t bad = 0, badmin = 0, badaln = 0, hits = 0;
            for (size_t i = 0; r && i < NQ; i++) {
                size_t want = 0;
                for (size_t j = 0; j < ND; j++) {
                    int s = k == 1 ? plus[i][j] : k == 2 ? minus[i][j]
                          : (plus[i][j] > minus[i][j] ? plus[i][j] : minus[i][j]);
                    want += s > 0;
                }
                bad += r->q[i].n_hits != want;
                for (size_t h = 0; h < r->q[i].n_hits; h++, hits++) {
                    const swgpu_hit_t *x = &r->q[i].hits[h];
                    size_t j = x->target;
                    int ismin = k == 2 || (k == 0 && minus[i][j] > plus[i][j]);
                    bad += x->score != (ismin ? minus[i][j] : plus[i][j]);
                    badmin += x->minus != ismin;
                    /* the CIGAR against the strand it reads */
                    swgpu_seq_t sq, st;
                    swgpu_seqset_get(qs, i, &sq);
                    swgpu_db_get(db, j, &st);
                    swgpu_aln_t a = x->aln;
                    const uint8_t *t = st.res;
                    if (x->minus) {
                        swgpu_dna_revcomp(st.res, st.len, rcres);
                        t = rcres;
                        a.tbeg = (int64_t)st.len - x->aln.tend;
                        a.tend = (int64_t)st.len - x->aln.tbeg;
                    }
                    int64_t sc = -1;
                    badaln += swgpu_cigar_score(&a, sq.res, sq.len, t, st.len, m, o.gap_open,
                                                o.gap_extend, &sc) != SWGPU_OK ||
                              sc != x->score || x->aln.tbeg < 0 || x->aln.tend > (int64_t)st.len;
                }
            }
            CHECK(bad == 0 && badmin == 0 && badaln == 0 && hits > 0,
                  "backend %d strand %d: %zu hits, %zu wrong scores or counts, %zu wrong "
                  "strands, %zu wrong alignments", (int)o.backend, (int)o.strand, hits, bad,
                  badmin, badaln);
            swgpu_search_result_destroy(r);
        }

    strand_exact(db, m, &o, d[1]);

    /* swgpu_scan_scores: the best of two on both strands */
    int32_t *all = malloc(NQ * ND * sizeof *all);
    o.strand = SWGPU_STRAND_BOTH;
    o.backend = SWGPU_BACKEND_CPU;
    CHECK_EQ_INT(swgpu_scan_scores(qs, db, m, &o, all), SWGPU_OK);
    size_t bad = 0;
    for (size_t i = 0; i < NQ; i++)
        for (size_t j = 0; j < ND; j++)
            bad += all[i * ND + j] != (plus[i][j] > minus[i][j] ? plus[i][j] : minus[i][j]);
    CHECK(bad == 0, "scan_scores on both strands: %zu differ", bad);
    o.strand = (swgpu_strand_t)7;
    CHECK_EQ_INT(swgpu_search(qs, db, m, &o, &(swgpu_search_result_t *){NULL}), SWGPU_EINVAL);
    CHECK(strstr(swgpu_last_error(), "strand 7: unknown") != NULL, "%s", swgpu_last_error());
    free(all);
    swgpu_matrix_destroy(m);
    swgpu_db_destroy(db);
    swgpu_seqset_destroy(qs);
}

static void test_errors(const swgpu_matrix_t *b62)
{
    swgpu_opts_t o;
    swgpu_opts_init(&o, SWGPU_PROTEIN);
    CHECK_EQ_INT(o.gap_open, 11);
    CHECK_EQ_INT(o.gap_extend, 1);
    CHECK_EQ_INT(o.top_n, 10);
    CHECK(o.evalue == 10.0, "default evalue 10");
    CHECK_EQ_INT(swgpu_opts_check(&o, b62), SWGPU_OK);
    CHECK_EQ_INT(swgpu_opts_check(&o, NULL), SWGPU_OK);

    swgpu_opts_t b = o;
    b.gap_open = -1;
    CHECK_EQ_INT(swgpu_opts_check(&b, b62), SWGPU_EINVAL);
    CHECK(strstr(swgpu_last_error(), "gap open -1 is negative") != NULL, "%s", swgpu_last_error());
    b = o;
    b.gap_extend = -2;
    CHECK_EQ_INT(swgpu_opts_check(&b, b62), SWGPU_EINVAL);
    b = o;
    b.gap_open = 100000;
    CHECK_EQ_INT(swgpu_opts_check(&b, b62), SWGPU_EINVAL);
    CHECK(strstr(swgpu_last_error(), "absurd") != NULL, "%s", swgpu_last_error());
    b = o;
    b.gap_open = 0;
    b.gap_extend = 0;
    CHECK_EQ_INT(swgpu_opts_check(&b, b62), SWGPU_EINVAL);
    b = o;
    b.gap_open = 0; /* open 0 with extend 1 is a linear gap model: fine */
    CHECK_EQ_INT(swgpu_opts_check(&b, b62), SWGPU_OK);
    b = o;
    b.top_n = 0;
    CHECK_EQ_INT(swgpu_opts_check(&b, b62), SWGPU_EINVAL);
    CHECK(strstr(swgpu_last_error(), "-n must be >= 1") != NULL, "%s", swgpu_last_error());
    b = o;
    b.evalue = 0;
    CHECK_EQ_INT(swgpu_opts_check(&b, b62), SWGPU_EINVAL);
    b = o;
    b.threads = -1;
    CHECK_EQ_INT(swgpu_opts_check(&b, b62), SWGPU_EINVAL);

    /* alphabets must agree */
    const char *pq[] = {"MKWVTFISLL"};
    const char *dq[] = {"ACGTACGT"};
    swgpu_seqset_t *prot = tl_set_of(SWGPU_PROTEIN, pq, 1, "s"), *dna = tl_set_of(SWGPU_DNA, dq, 1, "s");
    swgpu_db_t *pdb = tl_db_of(SWGPU_PROTEIN, pq, 1, "s"), *ddb = tl_db_of(SWGPU_DNA, dq, 1, "s");
    swgpu_matrix_t *dm = NULL;
    swgpu_matrix_dna(2, -3, &dm);
    swgpu_search_result_t *r = NULL;
    CHECK_EQ_INT(swgpu_search(dna, pdb, b62, &o, &r), SWGPU_EALPHABET);
    CHECK(strstr(swgpu_last_error(), "dna") && strstr(swgpu_last_error(), "protein"), "%s",
          swgpu_last_error());
    CHECK(r == NULL, "no result on failure");
    CHECK_EQ_INT(swgpu_search(prot, pdb, dm, &o, &r), SWGPU_EALPHABET);
    CHECK_EQ_INT(swgpu_search(dna, ddb, b62, &o, &r), SWGPU_EALPHABET);
    b = o;
    b.top_n = -3;
    CHECK_EQ_INT(swgpu_search(prot, pdb, b62, &b, &r), SWGPU_EINVAL);
    CHECK_EQ_INT(swgpu_search(prot, pdb, b62, NULL, &r), SWGPU_EINVAL);
    swgpu_search_result_destroy(NULL);
    swgpu_matrix_destroy(dm);
    swgpu_db_destroy(pdb);
    swgpu_db_destroy(ddb);
    swgpu_seqset_destroy(prot);
    swgpu_seqset_destroy(dna);
}

/* swgpu_scan_scores: every score, database order, equal to swgpu_align's and
 * to the hits' scores, whatever the backend; errors as swgpu_search's. */
static void test_scan_scores(const swgpu_matrix_t *b62)
{
    swgpu_seqset_t *qs = NULL;
    swgpu_db_t *db = NULL;
    build_random(7, 5, 120, &qs, &db);
    size_t nq = swgpu_seqset_size(qs), nd = swgpu_db_size(db);
    int32_t *all = malloc(nq * nd * sizeof *all);
    swgpu_opts_t o;
    swgpu_opts_init(&o, SWGPU_PROTEIN);
    o.gap_open = 10;
    o.gap_extend = 2;
    static const swgpu_backend_t backends[] = {SWGPU_BACKEND_REF, SWGPU_BACKEND_CPU};
    for (size_t b = 0; b < 2; b++) {
        o.backend = backends[b];
        o.threads = (int)b + 1;
        memset(all, 0xff, nq * nd * sizeof *all);
        CHECK_EQ_INT(swgpu_scan_scores(qs, db, b62, &o, all), SWGPU_OK);
        size_t bad = 0;
        for (size_t i = 0; i < nq; i++)
            for (size_t j = 0; j < nd; j++)
                bad += all[i * nd + j] != ref_score(qs, i, db, j, b62, &o);
        CHECK(bad == 0, "backend %d: %zu scores differ from swgpu_align", (int)o.backend, bad);
    }
    /* the hits of a search are the top scores of the rows */
    swgpu_search_result_t *r = NULL;
    o.top_n = 3;
    o.evalue = 1e9;
    CHECK_EQ_INT(swgpu_search(qs, db, b62, &o, &r), SWGPU_OK);
    for (size_t i = 0; r && i < nq; i++)
        for (size_t h = 0; h < r->q[i].n_hits; h++)
            CHECK_EQ_INT(all[i * nd + r->q[i].hits[h].target], r->q[i].hits[h].score);
    swgpu_search_result_destroy(r);

    /* errors: alphabets, options, NULL */
    const char *dq[] = {"ACGTACGTAC"};
    swgpu_seqset_t *dna = tl_set_of(SWGPU_DNA, dq, 1, "s");
    CHECK_EQ_INT(swgpu_scan_scores(dna, db, b62, &o, all), SWGPU_EALPHABET);
    CHECK(strstr(swgpu_last_error(), "dna") != NULL, "%s", swgpu_last_error());
    o.gap_open = -1;
    CHECK_EQ_INT(swgpu_scan_scores(qs, db, b62, &o, all), SWGPU_EINVAL);
    CHECK(strstr(swgpu_last_error(), "gap open -1") != NULL, "%s", swgpu_last_error());
    CHECK_EQ_INT(swgpu_scan_scores(qs, db, b62, &o, NULL), SWGPU_EINVAL);
    swgpu_seqset_destroy(dna);
    free(all);
    swgpu_db_destroy(db);
    swgpu_seqset_destroy(qs);
}

int main(void)
{
    swgpu_matrix_t *b62 = NULL;
    CHECK_EQ_INT(swgpu_matrix_builtin("BLOSUM62", &b62), SWGPU_OK);
    if (!b62)
        return tap_done();
    test_known_score(b62);
    test_ties(b62);
    test_every_query_reported(b62);
    test_random(b62);
    test_evalue_models(b62);
    test_evalue_rank_cut(b62);
    test_no_align(b62);
    test_progress(b62);
    test_no_self(b62);
    test_dna();
    test_strands();
    test_errors(b62);
    test_scan_scores(b62);
    swgpu_matrix_destroy(b62);
    return tap_done();
}
