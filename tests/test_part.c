/*
 * test_part.c - database parts and the search split over them: parts cover
 * every sequence once (views, makedb files mapped piecewise, FASTA files,
 * BLAST databases), look-ups by whole-database index, damaged parts
 * refused; and candidates on each part + swgpu_search_merge +
 * swgpu_search_align on each part give exactly swgpu_search on the whole
 * database (same hits, bit scores and E-values to the bit, same
 * alignments) with published, fitted and fallback parameters, under both
 * E-value models (Spouge's, where a weaker hit may pass while a stronger
 * one fails, and the old length-adjusted one), --no-self, --no-align,
 * protein and DNA, 1 to 7 parts, empty parts and uneven splits; a part's
 * progress counts its own cells.
 */
#define _POSIX_C_SOURCE 200809L
#include "tap.h"
#include "testlib.h"
#include "search/search.h"

#include <stdlib.h>
#include <unistd.h>

static char tmpdir[256];

static const char *tmp(const char *name)
{
    return tl_path(tmpdir, name);
}

/*
 * A database of nd sequences, ids d0, d1, ...: random ones, homologs of a
 * few "families", exact copies (equal scores: ties broken by database
 * index), and the queries: the first nq sequences, so that each query is
 * one of the database's sequences with its id (--no-self) - plus a query
 * with no database copy.  Also written as FASTA to fa.
 */
static void build(uint64_t seed, size_t nd, size_t nq, int dna, const char *fa,
                  swgpu_seqset_t **qs, swgpu_db_t **db)
{
    swgpu_alphabet_t al = dna ? SWGPU_DNA : SWGPU_PROTEIN;
    swgpu_seqset_t *ds = NULL;
    char fam[4][400], buf[900], id[32];
    FILE *fp = fopen(fa, "w");
    swgpu_seqset_create(al, &ds);
    swgpu_seqset_create(al, qs);
    for (int f = 0; f < 4; f++)
        tl_rand_letters(&seed, fam[f], 60 + tap_rand(&seed) % 300, dna ? TL_NUC : TL_AMINO);
    for (size_t i = 0; i < nd; i++) {
        if (i % 5 == 1)
            tl_mutate_letters_each(&seed, fam[tap_rand(&seed) % 4], buf, sizeof buf, 3 + (unsigned)(i % 7), dna ? TL_NUC : TL_AMINO);
        else if (i % 11 == 4 && i > 20) { /* an exact copy of an earlier sequence */
            swgpu_seq_t s;
            swgpu_seqset_get(ds, (size_t)(tap_rand(&seed) % i), &s);
            for (size_t k = 0; k < s.len; k++)
                buf[k] = swgpu_decode(al, s.res[k]);
            buf[s.len] = 0;
        } else
            tl_rand_letters(&seed, buf, 5 + tap_rand(&seed) % 400, dna ? TL_NUC : TL_AMINO);
        snprintf(id, sizeof id, "d%zu", i);
        swgpu_seqset_add(ds, id, i % 3 ? "some description" : "", buf, strlen(buf));
        if (i < nq)
            swgpu_seqset_add(*qs, id, "", buf, strlen(buf));
        fprintf(fp, ">%s%s\n%s\n", id, i % 3 ? " some description" : "", buf);
    }
    tl_mutate_letters_each(&seed, fam[0], buf, sizeof buf, 4, dna ? TL_NUC : TL_AMINO);
    swgpu_seqset_add(*qs, "fresh", "", buf, strlen(buf));
    fclose(fp);
    swgpu_db_from_seqset(ds, db);
    swgpu_seqset_destroy(ds);
}

/* ------------------------------------------------------------ the parts */

/* the parts of cut points x[0] = 0 < ... < x[np] = 1 from each source
 * cover the database once, in scan order, and answer look-ups */
static void test_cover(void)
{
    swgpu_seqset_t *qs = NULL;
    swgpu_db_t *db = NULL, *p = NULL;
    build(7, 300, 5, 0, tmp("c.fa"), &qs, &db);
    CHECK_EQ_INT(swgpu_db_write(db, tmp("c.swdb")), SWGPU_OK);
    const double cuts[][6] = {{0, 1}, {0, 0.5, 1}, {0, 0.2, 0.2, 0.9, 1}, {0, 0.01, 0.3, 0.31, 0.7, 1}};
    const int ncut[] = {2, 3, 5, 6};
    const uint64_t n = swgpu_db_size(db);
    for (int src = 0; src < 3; src++)
        for (int c = 0; c < 4; c++) {
            uint64_t next = 0, res = 0;
            long bad = 0;
            for (int k = 0; k + 1 < ncut[c]; k++) {
                swgpu_read_info_t info;
                int rc = src == 0   ? swgpu_db_part(db, cuts[c][k], cuts[c][k + 1], &p)
                         : src == 1 ? swgpu_db_open_part(tmp("c.swdb"), SWGPU_AUTO, cuts[c][k], cuts[c][k + 1], &p, &info)
                                    : swgpu_db_open_part(tmp("c.fa"), SWGPU_AUTO, cuts[c][k], cuts[c][k + 1], &p, &info);
                CHECK(rc == SWGPU_OK, "source %d, cut %d, part %d: %s", src, c, k, swgpu_last_error());
                if (rc)
                    continue;
                swgpu_db_part_t pi;
                swgpu_db_part_info(p, &pi);
                bad += pi.first != next || pi.total_n != n || pi.total_residues != swgpu_db_residues(db) ||
                       pi.n != swgpu_db_size(p) || pi.residues != swgpu_db_residues(p);
                if (src)
                    bad += info.n_records != pi.n || info.n_residues != pi.residues;
                /* the part starts where floor(from * R) falls */
                uint64_t lo = (uint64_t)(cuts[c][k] * (double)swgpu_db_residues(db));
                if (pi.n && k > 0)
                    bad += db->off[pi.first] < lo || (pi.first > 0 && db->off[pi.first - 1] >= lo);
                for (uint64_t x = 0; x < pi.n; x++) {
                    size_t idx = swgpu_db_scan_index(p, x);
                    swgpu_seq_t a, b;
                    bad += idx != db->orig[pi.first + x];
                    if (swgpu_db_get(p, idx, &a) || swgpu_db_get(db, idx, &b) || a.len != b.len ||
                        memcmp(a.res, b.res, a.len) || strcmp(a.id, b.id) || strcmp(a.desc, b.desc))
                        bad++;
                }
                bad += swgpu_db_scan_index(p, pi.n) != SIZE_MAX;
                /* another part's sequence is not found here */
                if (pi.first > 0) {
                    swgpu_seq_t a;
                    bad += swgpu_db_get(p, db->orig[pi.first - 1], &a) != SWGPU_ENOTFOUND;
                }
                next += pi.n;
                res += pi.residues;
                swgpu_db_destroy(p);
                p = NULL;
            }
            CHECK(bad == 0 && next == n && res == swgpu_db_residues(db),
                  "source %d, cut %d: %ld bad, %llu sequences", src, c, bad, (unsigned long long)next);
        }

    /* refusals */
    CHECK_EQ_INT(swgpu_db_part(db, 0.5, 0.4, &p), SWGPU_EINVAL);
    CHECK_EQ_INT(swgpu_db_part(db, -0.1, 0.4, &p), SWGPU_EINVAL);
    CHECK_EQ_INT(swgpu_db_open_part(tmp("c.swdb"), SWGPU_AUTO, 0, 1.5, &p, NULL), SWGPU_EINVAL);
    CHECK_EQ_INT(swgpu_db_open_part(tmp("c.swdb"), SWGPU_DNA, 0, 1, &p, NULL), SWGPU_EALPHABET);
    CHECK_EQ_INT(swgpu_db_open_part(tmp("none.swdb"), SWGPU_AUTO, 0, 1, &p, NULL), SWGPU_EIO);
    CHECK_EQ_INT(swgpu_db_part(db, 0.2, 0.6, &p), SWGPU_OK);
    if (p) {
        swgpu_db_t *pp = NULL;
        CHECK_EQ_INT(swgpu_db_part(p, 0, 1, &pp), SWGPU_EINVAL);
        CHECK_EQ_INT(swgpu_db_write(p, tmp("part.swdb")), SWGPU_EINVAL);
        CHECK(access(tmp("part.swdb"), F_OK) != 0, "no file written for a part");
        swgpu_db_destroy(p);
    }
    swgpu_db_destroy(db);
    swgpu_seqset_destroy(qs);
}

/* a makedb file damaged in one part is refused by that part only */
static void test_damaged(void)
{
    swgpu_seqset_t *qs = NULL;
    swgpu_db_t *db = NULL, *p = NULL;
    build(11, 200, 3, 0, tmp("d.fa"), &qs, &db);
    CHECK_EQ_INT(swgpu_db_write(db, tmp("d.swdb")), SWGPU_OK);
    FILE *fp = fopen(tmp("d.swdb"), "r+b");
    unsigned char h[160];
    if (!fp || fread(h, 1, 160, fp) != 160) {
        CHECK(0, "read the header back");
        goto done;
    }
    uint64_t res_off = 0;
    for (int i = 0; i < 8; i++)
        res_off |= (uint64_t)h[48 + 16 * 5 + i] << (8 * i);
    /* a residue code out of range in the last sequence (the longest) */
    uint64_t last = res_off + swgpu_db_residues(db) - 1;
    fseek(fp, (long)last, SEEK_SET);
    fputc(200, fp);
    fclose(fp);
    CHECK_EQ_INT(swgpu_db_open_part(tmp("d.swdb"), SWGPU_AUTO, 0, 0.5, &p, NULL), SWGPU_OK);
    swgpu_db_destroy(p);
    p = NULL;
    CHECK_EQ_INT(swgpu_db_open_part(tmp("d.swdb"), SWGPU_AUTO, 0.5, 1, &p, NULL), SWGPU_EDB);
    CHECK(strstr(swgpu_last_error(), "residue code out of range") != NULL, "%s", swgpu_last_error());
    /* the whole file's checksum catches it too */
    CHECK_EQ_INT(swgpu_db_open(tmp("d.swdb"), SWGPU_AUTO, &p, NULL), SWGPU_EDB);
    /* a damaged header is refused by every part */
    fp = fopen(tmp("d.swdb"), "r+b");
    fseek(fp, 20, SEEK_SET);
    fputc(0x7f, fp);
    fclose(fp);
    CHECK_EQ_INT(swgpu_db_open_part(tmp("d.swdb"), SWGPU_AUTO, 0, 0.5, &p, NULL), SWGPU_EDB);
    CHECK(strstr(swgpu_last_error(), "header checksum") != NULL, "%s", swgpu_last_error());
    /* truncated */
    CHECK_EQ_INT(truncate(tmp("d.swdb"), 100), 0);
    CHECK_EQ_INT(swgpu_db_open_part(tmp("d.swdb"), SWGPU_AUTO, 0, 0.5, &p, NULL), SWGPU_EDB);
done:
    swgpu_db_destroy(db);
    swgpu_seqset_destroy(qs);
}

/* --------------------------------------------------------- split search */

typedef struct {
    size_t nq;
    uint64_t n;        /* the part's sequences */
    int32_t *scores;   /* nq x n, by the query's index */
} keep_t;

static int keep_scores(void *user, size_t query, const int32_t *scores, size_t n)
{
    keep_t *k = user;
    if (n != k->n || query >= k->nq)
        return SWGPU_EINVAL;
    if (n)
        memcpy(k->scores + query * n, scores, n * sizeof *scores);
    return SWGPU_OK;
}

typedef struct {
    keep_t *keep;
    int np;
} whole_scores_t;

static int merge_scores(void *user, size_t query, int32_t *out)
{
    whole_scores_t *w = user;
    for (int p = 0; p < w->np; p++) {
        if (w->keep[p].n)
            memcpy(out, w->keep[p].scores + query * w->keep[p].n, w->keep[p].n * sizeof *out);
        out += w->keep[p].n;
    }
    return SWGPU_OK;
}

/* differences between two results, hit by hit and bit by bit */
static long compare(const swgpu_search_result_t *w, const swgpu_search_result_t *m, long *hits)
{
    long bad = 0;
    if (w->n_queries != m->n_queries || w->cells != m->cells)
        return 1000000;
    for (size_t i = 0; i < w->n_queries; i++) {
        const swgpu_query_result_t *a = &w->q[i], *b = &m->q[i];
        bad += a->n_hits != b->n_hits || memcmp(&a->karlin, &b->karlin, sizeof a->karlin) != 0;
        for (size_t h = 0; h < a->n_hits && h < b->n_hits; h++) {
            const swgpu_hit_t *x = &a->hits[h], *y = &b->hits[h];
            bad += x->target != y->target || x->score != y->score ||
                   memcmp(&x->bits, &y->bits, sizeof x->bits) ||
                   memcmp(&x->evalue, &y->evalue, sizeof x->evalue) || !tl_same_aln(&x->aln, &y->aln);
            (*hits)++;
        }
    }
    return bad;
}

/* 1 if hit a comes before hit b in the order rank (swgpu_opts_t.rank);
 * by_score: the E-value ranking's order got from scores alone (score desc,
 * database index desc), as a part's candidates under fitted statistics
 * come */
static int ranks_before(swgpu_rank_t rank, int by_score, const swgpu_hit_t *a,
                        const swgpu_hit_t *b)
{
    if (rank == SWGPU_RANK_SCORE)
        return a->score > b->score || (a->score == b->score && a->target < b->target);
    if (!by_score) {
        double ea = a->evalue < 1e-180 ? 0 : a->evalue, eb = b->evalue < 1e-180 ? 0 : b->evalue;
        if (ea != eb)
            return ea < eb;
    }
    return a->score > b->score || (a->score == b->score && a->target > b->target);
}

/* 1 if a part's candidates h[0..n) are each once and best first under
 * rank, in one of the two orders ranks_before() knows for it */
static int cands_ordered(swgpu_rank_t rank, const swgpu_hit_t *h, size_t n)
{
    int ok[2] = {1, 1};
    for (int by = 0; by < 2; by++)
        for (size_t k = 1; k < n; k++)
            ok[by] &= ranks_before(rank, by, &h[k - 1], &h[k]);
    return ok[0] || ok[1];
}

/* swgpu_search over the whole database against the split path over the
 * parts with cut points x[0..np], each part from source src (0 view,
 * 1 makedb file, 2 FASTA file), in o's rank */
static long split_search_rank(const swgpu_seqset_t *qs, const swgpu_db_t *db, const char *fa,
                              const char *swdb, const swgpu_matrix_t *m, const swgpu_opts_t *o,
                              const double *x, int np, int src, long *hits)
{
    swgpu_search_result_t *w = NULL, *merged = NULL, *cand[8] = {0};
    swgpu_db_t *part[8] = {0};
    keep_t keep[8];
    long bad = 0;
    size_t nq = swgpu_seqset_size(qs);
    uint64_t *tlen = malloc(swgpu_db_size(db) * sizeof *tlen), nt = 0;
    memset(keep, 0, sizeof keep);
    if (swgpu_search(qs, db, m, o, &w)) {
        fprintf(stderr, "whole search: %s\n", swgpu_last_error());
        return 1000000;
    }
    for (size_t i = 0; i < nq; i++) /* best first by its E-values and scores */
        for (size_t h = 1; h < w->q[i].n_hits; h++)
            bad += !ranks_before(o->rank, 0, &w->q[i].hits[h - 1], &w->q[i].hits[h]);
    for (int p = 0; p < np; p++) {
        int rc = src == 0   ? swgpu_db_part(db, x[p], x[p + 1], &part[p])
                 : src == 1 ? swgpu_db_open_part(swdb, SWGPU_AUTO, x[p], x[p + 1], &part[p], NULL)
                            : swgpu_db_open_part(fa, SWGPU_AUTO, x[p], x[p + 1], &part[p], NULL);
        if (rc) {
            fprintf(stderr, "part %d: %s\n", p, swgpu_last_error());
            bad += 1000000;
            goto done;
        }
        swgpu_opts_t oc = *o;
        keep[p].nq = nq;
        keep[p].n = swgpu_db_size(part[p]);
        keep[p].scores = malloc((nq * keep[p].n + 1) * sizeof(int32_t));
        oc.candidates = 1;
        oc.on_scores = keep_scores;
        oc.on_scores_user = &keep[p];
        if (swgpu_search(qs, part[p], m, &oc, &cand[p])) {
            fprintf(stderr, "part %d search: %s\n", p, swgpu_last_error());
            bad += 1000000;
            goto done;
        }
        for (size_t k = 0; k < keep[p].n; k++) {
            swgpu_seq_t s;
            swgpu_db_get(part[p], swgpu_db_scan_index(part[p], k), &s);
            tlen[nt++] = s.len;
        }
        /* candidates carry no bit scores and no alignments, and each is its
         * part's own, once, best first */
        for (size_t i = 0; i < nq; i++) {
            for (size_t h = 0; h < cand[p]->q[i].n_hits; h++) {
                const swgpu_hit_t *c = &cand[p]->q[i].hits[h];
                swgpu_seq_t s;
                bad += c->aln.n_cigar != 0 || c->bits != 0 || c->score <= 0 ||
                       swgpu_db_get(part[p], c->target, &s) != SWGPU_OK;
            }
            bad += !cands_ordered(o->rank, cand[p]->q[i].hits, cand[p]->q[i].n_hits);
        }
    }
    whole_scores_t ws = {keep, np};
    swgpu_merge_src_t ms = {swgpu_db_size(db), swgpu_db_residues(db), tlen, merge_scores, &ws};
    if (swgpu_search_merge(qs, m, o, (const swgpu_search_result_t *const *)cand, (size_t)np, &ms,
                           &merged)) {
        fprintf(stderr, "merge: %s\n", swgpu_last_error());
        bad += 1000000;
        goto done;
    }
    if (!o->no_align)
        for (int p = 0; p < np; p++)
            if (swgpu_search_align(merged, qs, part[p], m, o)) {
                fprintf(stderr, "align on part %d: %s\n", p, swgpu_last_error());
                bad += 1000000;
            }
    bad += compare(w, merged, hits);
done:
    for (int p = 0; p < np; p++) {
        swgpu_search_result_destroy(cand[p]);
        swgpu_db_destroy(part[p]);
        free(keep[p].scores);
    }
    swgpu_search_result_destroy(merged);
    swgpu_search_result_destroy(w);
    free(tlen);
    return bad;
}

/* split_search_rank() in both ranks: the whole search's hits are in o's
 * rank (checked here on their E-values and scores) */
static long split_search(const swgpu_seqset_t *qs, const swgpu_db_t *db, const char *fa,
                         const char *swdb, const swgpu_matrix_t *m, const swgpu_opts_t *o,
                         const double *x, int np, int src, long *hits)
{
    static const swgpu_rank_t ranks[] = {SWGPU_RANK_EVALUE, SWGPU_RANK_SCORE};
    long bad = 0;
    for (int k = 0; k < 2; k++) {
        swgpu_opts_t oc = *o;
        oc.rank = ranks[k];
        bad += split_search_rank(qs, db, fa, swdb, m, &oc, x, np, src, hits);
    }
    return bad;
}

static void test_split(int dna)
{
    swgpu_seqset_t *qs = NULL;
    swgpu_db_t *db = NULL;
    swgpu_matrix_t *m = NULL;
    const char *fa = tmp(dna ? "s_dna.fa" : "s.fa"), *swdb = tmp(dna ? "s_dna.swdb" : "s.swdb");
    build(dna ? 23 : 5, dna ? 160 : 260, 9, dna, fa, &qs, &db);
    CHECK_EQ_INT(swgpu_db_write(db, swdb), SWGPU_OK);
    if (dna)
        swgpu_matrix_dna(2, -3, &m);
    else
        swgpu_matrix_builtin("BLOSUM62", &m);
    static const double cuts[][8] = {
        {0, 1}, {0, 0.5, 1}, {0, 1.0 / 3, 2.0 / 3, 1}, {0, 0.1, 0.1, 0.75, 1},
        {0, 0.05, 0.2, 0.35, 0.5, 0.65, 0.8, 1}};
    static const int np[] = {1, 2, 3, 4, 7};
    /* settings: published parameters; fitted (no table row for these gaps);
     * --no-self with a small top-N; --no-align; a strict E-value; each under
     * both E-value models */
    for (int set = 0; set < 10; set++) {
        swgpu_opts_t o;
        swgpu_opts_init(&o, dna ? SWGPU_DNA : SWGPU_PROTEIN);
        o.evalue_model = set < 5 ? SWGPU_EVALUE_SPOUGE : SWGPU_EVALUE_OLD_FSC;
        const char *model = set < 5 ? "spouge" : "old-fsc";
        int set5 = set;
        set %= 5;
        o.threads = 2;
        o.top_n = 12;
        if (set == 1) {
            o.gap_open = dna ? 6 : 12; /* no published parameters: fitted */
            o.gap_extend = dna ? 3 : 3;
        }
        if (set == 2) {
            o.no_self = 1;
            o.top_n = 3;
        }
        if (set == 3)
            o.no_align = 1;
        if (set == 4)
            o.evalue = 1e-3;
        long bad = 0, hits = 0;
        for (int c = 0; c < 5; c++)
            for (int src = 0; src < 3; src++)
                if (!tap_quick() || c == 1 || c == 4) /* quick (sanitizers): 2 and 7 parts */
                    bad += split_search(qs, db, fa, swdb, m, &o, cuts[c], np[c], src, &hits);
        CHECK(bad == 0, "%s, %s, setting %d: %ld differences (%ld hits compared)",
              dna ? "DNA" : "protein", model, set, bad, hits);
        CHECK(hits > 100, "%s, %s, setting %d: %ld hits compared", dna ? "DNA" : "protein", model,
              set, hits);
        if (set == 1) { /* the case really is fitted */
            swgpu_search_result_t *r = NULL;
            CHECK_EQ_INT(swgpu_search(qs, db, m, &o, &r), SWGPU_OK);
            CHECK(r && r->q[0].karlin.estimated == 1, "%s: parameters fitted", dna ? "DNA" : "protein");
            swgpu_search_result_destroy(r);
        }
        set = set5;
    }
    swgpu_matrix_destroy(m);
    swgpu_db_destroy(db);
    swgpu_seqset_destroy(qs);
}

/* too few sequences to fit: the fallback parameters, as in the whole search */
static void test_fallback(void)
{
    swgpu_seqset_t *qs = NULL;
    swgpu_db_t *db = NULL;
    swgpu_matrix_t *m = NULL;
    long hits = 0;
    build(3, 30, 4, 0, tmp("f.fa"), &qs, &db);
    swgpu_db_write(db, tmp("f.swdb"));
    swgpu_matrix_builtin("BLOSUM62", &m);
    swgpu_opts_t o;
    swgpu_opts_init(&o, SWGPU_PROTEIN);
    o.gap_open = 12;
    o.gap_extend = 3;
    const double x[] = {0, 0.4, 1}, x3[] = {0, 0.3, 0.6, 1};
    /* the fallback (BLOSUM62 11/1) has Spouge's parameters: under that
     * model its E-values depend on the subject's length, which the parts
     * must allow for without knowing whether the fit will fail */
    static const double thresholds[] = {10, 0.5, 1e-3};
    static const int tops[] = {10, 2, 1};
    for (int mi = 0; mi < 2; mi++)
        for (int k = 0; k < 3; k++) {
            o.evalue_model = mi ? SWGPU_EVALUE_OLD_FSC : SWGPU_EVALUE_SPOUGE;
            o.evalue = thresholds[k];
            o.top_n = tops[k];
            long bad = split_search(qs, db, tmp("f.fa"), tmp("f.swdb"), m, &o, x, 2, 1, &hits) +
                       split_search(qs, db, tmp("f.fa"), tmp("f.swdb"), m, &o, x3, 3, 0, &hits);
            CHECK(bad == 0, "fallback, %s, E <= %g, top %d: %ld differences",
                  mi ? "old-fsc" : "spouge", thresholds[k], tops[k], bad);
        }
    o.evalue = 10;
    o.top_n = 10;
    o.evalue_model = SWGPU_EVALUE_SPOUGE;
    CHECK(hits > 0, "fallback: %ld hits compared", hits);
    {
        /* an inversion under the fallback: a stronger hit a that fails where
         * a weaker one b passes (threshold E(b)), with top_n the rank of b,
         * so that the best top_n by score hold a but not b */
        swgpu_search_result_t *all = NULL;
        swgpu_opts_t oa = o;
        const double x1[] = {0, 1};
        int found = 0;
        oa.top_n = (int)swgpu_db_size(db);
        oa.evalue = 1e300;
        oa.no_align = 1;
        oa.rank = SWGPU_RANK_SCORE; /* inversions are of that order */
        CHECK_EQ_INT(swgpu_search(qs, db, m, &oa, &all), SWGPU_OK);
        for (size_t i = 0; all && i < all->n_queries && !found; i++) {
            const swgpu_query_result_t *qa = &all->q[i];
            for (size_t b = 1; b < qa->n_hits && !found; b++)
                for (size_t a = 0; a < b && !found; a++)
                    if (qa->hits[a].score > qa->hits[b].score &&
                        qa->hits[a].evalue > qa->hits[b].evalue) {
                        found = 1;
                        o.evalue = qa->hits[b].evalue;
                        o.top_n = (int)b;
                    }
        }
        swgpu_search_result_destroy(all);
        CHECK(found, "fallback under spouge: a weaker hit passes where a stronger one fails");
        if (found) {
            long bad = split_search(qs, db, tmp("f.fa"), tmp("f.swdb"), m, &o, x1, 1, 1, &hits) +
                       split_search(qs, db, tmp("f.fa"), tmp("f.swdb"), m, &o, x, 2, 0, &hits);
            CHECK(bad == 0, "fallback, spouge, E <= %g, top %d: %ld differences", o.evalue,
                  o.top_n, bad);
        }
        o.evalue = 10;
        o.top_n = 10;
    }
    {
        swgpu_search_result_t *w = NULL;
        swgpu_karlin_t k62;
        swgpu_karlin_lookup(m, 11, 1, &k62);
        CHECK_EQ_INT(swgpu_search(qs, db, m, &o, &w), SWGPU_OK);
        CHECK(w && w->q[0].karlin.estimated == 0 && w->q[0].karlin.lambda == k62.lambda,
              "too few scores: the BLOSUM62 11/1 fallback");
        swgpu_search_result_destroy(w);
    }

    /* the merge without the scores it needs to fit */
    swgpu_merge_src_t none = {swgpu_db_size(db), swgpu_db_residues(db), NULL, NULL, NULL};
    swgpu_search_result_t *r = NULL;
    CHECK_EQ_INT(swgpu_search_merge(qs, m, &o, NULL, 0, &none, &r), SWGPU_EINVAL);
    swgpu_matrix_destroy(m);
    swgpu_db_destroy(db);
    swgpu_seqset_destroy(qs);
}

/*
 * Spouge's E-values depend on the subject's length: a weaker hit against a
 * short subject may pass the threshold while a stronger one against a long
 * subject fails.  The whole search picks its top_n among those that pass,
 * so a part must too (a part's best top_n by score, filtered afterwards,
 * would miss them).  The inputs are chosen so that such inversions occur
 * (checked), then every threshold and top_n is split and compared.
 */
static void test_spouge_inversions(void)
{
    swgpu_seqset_t *qs = NULL;
    swgpu_db_t *db = NULL;
    swgpu_matrix_t *m = NULL;
    build(41, 300, 8, 0, tmp("i.fa"), &qs, &db);
    swgpu_db_write(db, tmp("i.swdb"));
    swgpu_matrix_builtin("BLOSUM62", &m);
    static const double thresholds[] = {1e-6, 0.05, 0.2, 3};
    static const int tops[] = {1, 2, 4, 50};
    static const double cuts[][5] = {{0, 1}, {0, 0.5, 1}, {0, 0.2, 0.45, 0.8, 1}};
    static const int np[] = {1, 2, 4};
    for (int mi = 0; mi < 2; mi++) {
        swgpu_opts_t o;
        swgpu_search_result_t *all = NULL;
        swgpu_opts_init(&o, SWGPU_PROTEIN);
        o.evalue_model = mi ? SWGPU_EVALUE_OLD_FSC : SWGPU_EVALUE_SPOUGE;
        o.threads = 2;
        o.no_align = 1;
        o.top_n = (int)swgpu_db_size(db);
        o.evalue = 1e300;
        o.rank = SWGPU_RANK_SCORE; /* inversions are of that order (split_search: both) */
        CHECK_EQ_INT(swgpu_search(qs, db, m, &o, &all), SWGPU_OK);
        long inversions = 0, bad = 0, hits = 0, missed = 0;
        for (size_t i = 0; all && i < all->n_queries; i++) {
            const swgpu_query_result_t *qa = &all->q[i];
            for (int x = 0; x < 4; x++) {
                for (size_t a = 0; a < qa->n_hits; a++)
                    for (size_t b = a + 1; b < qa->n_hits; b++)
                        inversions += qa->hits[a].evalue > thresholds[x] &&
                                      qa->hits[b].evalue <= thresholds[x] &&
                                      qa->hits[a].score > qa->hits[b].score;
                /* what the best top_n by score, filtered afterwards, would
                 * lose: a hit that passes below one that fails in the top_n */
                for (int k = 0; k < 4; k++) {
                    size_t top = (size_t)tops[k], fails = 0, passes_after = 0;
                    for (size_t h = 0; h < qa->n_hits; h++) {
                        int pass = qa->hits[h].evalue <= thresholds[x];
                        if (h < top)
                            fails += !pass;
                        else
                            passes_after += pass;
                    }
                    missed += fails && passes_after;
                }
            }
        }
        swgpu_search_result_destroy(all);
        for (int x = 0; x < 4; x++)
            for (int k = 0; k < 4; k++)
                for (int c = 0; c < 3; c++)
                    for (int align = 0; align < 2; align++) {
                        o.evalue = thresholds[x];
                        o.top_n = tops[k];
                        o.no_align = !align;
                        bad += split_search(qs, db, tmp("i.fa"), tmp("i.swdb"), m, &o, cuts[c], np[c],
                                            c, &hits);
                    }
        CHECK(bad == 0, "%s: %ld differences (%ld hits compared)", mi ? "old-fsc" : "spouge", bad,
              hits);
        CHECK(hits > 100, "%s: %ld hits compared", mi ? "old-fsc" : "spouge", hits);
        if (mi == 0)
            CHECK(inversions > 0 && missed > 0,
                  "spouge: a weaker hit passes where a stronger one fails (%ld pairs; %ld "
                  "(query, threshold, top_n) cases where a part's best by score, filtered "
                  "afterwards, would lose a hit)", inversions, missed);
        else
            CHECK(inversions == 0 && missed == 0, "old-fsc: E-values follow the scores");
    }
    swgpu_matrix_destroy(m);
    swgpu_db_destroy(db);
    swgpu_seqset_destroy(qs);
}

/* a part's progress counts its own part's queries and cells */
typedef struct {
    size_t calls, done, total;
    uint64_t cells_done, cells_total;
} prog_t;

static void on_progress(size_t done, size_t total, uint64_t cells_done, uint64_t cells_total,
                        double seconds, void *user)
{
    prog_t *p = user;
    (void)seconds;
    p->calls++;
    p->done = done;
    p->total = total;
    p->cells_done = cells_done;
    p->cells_total = cells_total;
}

static void test_progress(void)
{
    swgpu_seqset_t *qs = NULL;
    swgpu_db_t *db = NULL, *p = NULL;
    swgpu_matrix_t *m = NULL;
    build(13, 120, 6, 0, tmp("p.fa"), &qs, &db);
    swgpu_matrix_builtin("BLOSUM62", &m);
    CHECK_EQ_INT(swgpu_db_part(db, 0.3, 0.8, &p), SWGPU_OK);
    for (int cand = 0; p && cand < 2; cand++) {
        swgpu_opts_t o;
        swgpu_search_result_t *r = NULL;
        prog_t pg = {0, 0, 0, 0, 0};
        swgpu_opts_init(&o, SWGPU_PROTEIN);
        o.threads = 2;
        o.candidates = cand;
        o.progress = on_progress;
        o.progress_user = &pg;
        CHECK_EQ_INT(swgpu_search(qs, p, m, &o, &r), SWGPU_OK);
        uint64_t cells = swgpu_seqset_residues(qs) * swgpu_db_residues(p);
        CHECK(pg.calls > 0 && pg.done == swgpu_seqset_size(qs) && pg.total == pg.done &&
                  pg.cells_done == cells && pg.cells_total == cells && r && r->cells == cells,
              "progress over a part (candidates %d): %zu calls, %zu of %zu queries, %llu of %llu "
              "cells, %llu expected", cand, pg.calls, pg.done, pg.total,
              (unsigned long long)pg.cells_done, (unsigned long long)pg.cells_total,
              (unsigned long long)cells);
        swgpu_search_result_destroy(r);
    }
    /* every score of a part comes through on_scores; swgpu_scan_scores wants
     * a whole database */
    if (p) {
        swgpu_opts_t o;
        swgpu_opts_init(&o, SWGPU_PROTEIN);
        int32_t *out = malloc(swgpu_seqset_size(qs) * swgpu_db_size(db) * sizeof *out);
        CHECK_EQ_INT(swgpu_scan_scores(qs, p, m, &o, out), SWGPU_EINVAL);
        free(out);
    }
    swgpu_db_destroy(p);
    swgpu_matrix_destroy(m);
    swgpu_db_destroy(db);
    swgpu_seqset_destroy(qs);
}

/* a BLAST database is read whole and cut: its parts cover it once, and
 * the split search over them is the whole search */
static void test_blastdb(void)
{
    const char *dir = getenv("SWGPU_TESTDATA");
    char prefix[512], fa[512];
    static const char *const names[] = {"prot_v5", "prot_mv", "nuc_v4"};
    for (int k = 0; k < 3; k++) {
        swgpu_db_t *whole = NULL, *p = NULL;
        swgpu_seqset_t *qs = NULL;
        swgpu_matrix_t *m = NULL;
        int dna = k == 2;
        snprintf(prefix, sizeof prefix, "%s/blastdb/%s", dir ? dir : "tests/data", names[k]);
        snprintf(fa, sizeof fa, "%s/blastdb/%s", dir ? dir : "tests/data", dna ? "nuc.fa" : "prot.fa");
        if (swgpu_db_open(prefix, SWGPU_AUTO, &whole, NULL) != SWGPU_OK) {
            CHECK(0, "open %s: %s", prefix, swgpu_last_error());
            continue;
        }
        const double x[] = {0, 0.3, 0.3, 0.7, 1};
        uint64_t next = 0;
        long bad = 0, hits = 0;
        for (int i = 0; i < 4; i++) {
            swgpu_db_part_t pi;
            if (swgpu_db_open_part(prefix, SWGPU_AUTO, x[i], x[i + 1], &p, NULL) != SWGPU_OK) {
                bad++;
                continue;
            }
            swgpu_db_part_info(p, &pi);
            bad += pi.first != next || pi.total_n != swgpu_db_size(whole);
            for (uint64_t s = 0; s < pi.n; s++) {
                swgpu_seq_t a, b;
                size_t idx = swgpu_db_scan_index(p, s);
                bad += swgpu_db_get(p, idx, &a) || swgpu_db_get(whole, idx, &b) || a.len != b.len ||
                       memcmp(a.res, b.res, a.len) || strcmp(a.id, b.id) || strcmp(a.desc, b.desc);
            }
            next += pi.n;
            /* a part keeps the files it was read from */
            bad += p->n_src != whole->n_src || p->n_src == 0;
            swgpu_db_destroy(p);
            p = NULL;
        }
        bad += next != swgpu_db_size(whole);
        if (swgpu_seqset_read(fa, SWGPU_AUTO, &qs, NULL) == SWGPU_OK) {
            swgpu_opts_t o;
            swgpu_opts_init(&o, dna ? SWGPU_DNA : SWGPU_PROTEIN);
            o.threads = 2;
            o.no_self = 1;
            if (dna)
                swgpu_matrix_dna(2, -3, &m);
            else
                swgpu_matrix_builtin("BLOSUM62", &m);
            /* the parts through swgpu_db_open_part of the prefix (source 1
             * stands for the makedb file: pass the prefix there) */
            bad += split_search(qs, whole, fa, prefix, m, &o, x, 4, 1, &hits);
        } else {
            bad++;
        }
        CHECK(bad == 0 && hits > 0, "BLAST database %s in parts: %ld differences, %ld hits compared",
              names[k], bad, hits);
        swgpu_matrix_destroy(m);
        swgpu_seqset_destroy(qs);
        swgpu_db_destroy(whole);
    }
}

/* swgpu__par_first: the lowest bad index and its value, for any block
 * size and thread count, n when none */
typedef struct {
    size_t n;
    const int *why; /* per index: 0 or the bad value */
    size_t slow;    /* the first bad index takes its time: later blocks find theirs first */
} pf_t;

static int pf_bad(void *arg, size_t i)
{
    const pf_t *p = arg;
    if (i == p->slow)
        usleep(2000);
    return i < p->n ? p->why[i] : -1;
}

static void test_par_first(void)
{
    enum { N = 1000 };
    static int why[N];
    static const size_t blks[] = {1, 3, 64, 999, 5000};
    static const int threads[] = {1, 3, 4};
    uint64_t seed = 41;
    int agree = 0, cases = 0;
    for (int trial = 0; trial < 40; trial++) {
        const size_t n = trial == 0 ? 0 : trial == 1 ? 1 : (size_t)(tap_rand(&seed) % N) + 1;
        size_t want = n;
        memset(why, 0, sizeof why);
        for (int b = 0; b < trial % 5; b++) { /* 0 to 4 bad indexes */
            const size_t i = (size_t)(tap_rand(&seed) % (n ? n : 1));
            if (n) why[i] = 1 + (int)(i % 7);
            if (n && i < want) want = i;
        }
        pf_t p = {n, why, want};
        for (int bi = 0; bi < 5; bi++)
            for (int t = 0; t < 3; t++) {
                int w = -9;
                const size_t at = swgpu__par_first(n, blks[bi], threads[t], pf_bad, &p, &w);
                cases++;
                agree += at == want && (want == n ? w == -9 : w == why[want]);
            }
    }
    CHECK(agree == cases, "par_first: %d of %d cases give the first bad index", agree, cases);
}

/* part_map's one pass over sequences [first, last) of a makedb file's index
 * (the check as it was before it ran in blocks): its message, or "" */
static void part_ref(char *msg, size_t cap, const char *path, const unsigned char *f, double from,
                     double to)
{
    const uint64_t n = tl_get64(f + 16), total = tl_get64(f + 24);
    const uint64_t *off = (const uint64_t *)(f + tl_get64(f + 48));
    const uint64_t *name_off = (const uint64_t *)(f + tl_get64(f + 64));
    const uint32_t *orig = (const uint32_t *)(f + tl_get64(f + 80));
    const uint32_t *rank = (const uint32_t *)(f + tl_get64(f + 96));
    const char *names = (const char *)(f + tl_get64(f + 112));
    const uint64_t nsize = tl_get64(f + 120);
    const uint64_t first = swgpu__db_cut_at(off, n, total, from);
    const uint64_t last = swgpu__db_cut_at(off, n, total, to);
    *msg = 0;
    for (uint64_t k = first; k < last; k++) {
        const char *w = NULL;
        if (off[k + 1] < off[k] || off[k + 1] > total ||
            (k && off[k + 1] - off[k] < off[k] - off[k - 1]))
            w = "database %s: sequence %llu out of length order";
        else if (orig[k] >= n || rank[orig[k]] != k)
            w = "database %s: invalid order permutation at %llu";
        else if (k && off[k + 1] - off[k] == off[k] - off[k - 1] && orig[k] < orig[k - 1])
            w = "database %s: sequences of equal length out of database order at %llu";
        if (w) {
            snprintf(msg, cap, w, path, (unsigned long long)k);
            return;
        }
        uint64_t pos = name_off[orig[k]];
        for (int part = 0; part < 2; part++) {
            const char *p = pos < nsize ? memchr(names + pos, 0, nsize - pos) : NULL;
            if (!p) {
                snprintf(msg, cap, "database %s: names section ends inside sequence %u", path,
                         orig[k]);
                return;
            }
            pos = (uint64_t)(p - names) + 1;
        }
    }
}

/* an index that lies under valid checksums, opened in parts (their checks
 * on all cores): 150 damages to the order, rank and name-offset entries,
 * each part refused with the message of the one pass, or opened when that
 * pass finds nothing */
static void test_index_damage(void)
{
    swgpu_seqset_t *qs = NULL;
    swgpu_db_t *db = NULL;
    build(17, 400, 1, 0, tmp("x.fa"), &qs, &db);
    CHECK_EQ_INT(swgpu_db_write(db, tmp("x.swdb")), SWGPU_OK);
    size_t n = 0;
    unsigned char *good = tl_slurp(tmp("x.swdb"), &n), *f = malloc(n ? n : 1);
    const uint64_t N = swgpu_db_size(db);
    static const double cut[][2] = {{0, 0.5}, {0.5, 1}, {0.2, 0.9}, {0, 1}};
    int agree = 0, cases = 0, refused = 0;
    uint64_t seed = 5;
    for (int trial = 0; good && f && n > 160 && trial < 150; trial++) {
        memcpy(f, good, n);
        const uint64_t s_noff = tl_get64(f + 64), s_orig = tl_get64(f + 80);
        const uint64_t s_rank = tl_get64(f + 96), nsize = tl_get64(f + 120);
        for (int d = 0; d < 1 + trial % 2; d++) {
            const uint64_t i = tap_rand(&seed) % N, j = tap_rand(&seed) % N;
            uint32_t *orig = (uint32_t *)(f + s_orig), *rank = (uint32_t *)(f + s_rank);
            uint64_t *noff = (uint64_t *)(f + s_noff);
            switch (tap_rand(&seed) % 4) {
            case 0: orig[i] = orig[j]; break;
            case 1: rank[i] = (uint32_t)(tap_rand(&seed) % (N + 2)); break;
            case 2: { const uint32_t x = orig[i]; orig[i] = orig[j]; orig[j] = x; break; }
            default: noff[i] = tap_rand(&seed) % 2 ? nsize - 1 : noff[i] + 1; break;
            }
        }
        tl_fix_crcs(f, n);
        tl_spit(tmp("y.swdb"), f, n);
        for (int c = 0; c < 4; c++) {
            char want[300];
            swgpu_db_t *p = NULL;
            part_ref(want, sizeof want, tmp("y.swdb"), f, cut[c][0], cut[c][1]);
            const int rc = swgpu_db_open_part(tmp("y.swdb"), SWGPU_AUTO, cut[c][0], cut[c][1], &p,
                                              NULL);
            const int same = *want ? rc == SWGPU_EDB && !strcmp(swgpu_last_error(), want)
                                   : rc == SWGPU_OK;
            cases++;
            agree += same;
            refused += *want != 0;
            CHECK(same, "damage %d, part [%.1f, %.1f): %d \"%s\", the one pass \"%s\"", trial,
                  cut[c][0], cut[c][1], rc, rc ? swgpu_last_error() : "", want);
            swgpu_db_destroy(p);
        }
    }
    CHECK(cases == 600 && agree == cases && refused > 200,
          "index damages: %d of %d parts as the one pass (%d refused)", agree, cases, refused);
    free(good);
    free(f);
    swgpu_db_destroy(db);
    swgpu_seqset_destroy(qs);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/swgpu_test_part.XXXXXX");
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 2;
    }
    test_cover();
    test_damaged();
    test_par_first();
    test_index_damage();
    test_split(0);
    test_split(1);
    test_fallback();
    test_spouge_inversions();
    test_progress();
    test_blastdb();
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tmpdir);
    return tap_done();
}
