/*
 * test_stream.c - a makedb database streamed in parts
 * (swgpu_search_stream) gives exactly swgpu_search() on the whole database:
 * the same hits in the same order, bit scores and E-values to the bit, the
 * same alignments, and the hits' database names them as the whole does; for
 * 1, 2, 3, 7 parts and one sequence a part, with exact copies in the
 * database (ties of equal scores at the top-N cut-off, across parts), under
 * both ranks and both E-value models, --no-self and --no-align.  The part
 * count (swgpu_stream_parts) follows the budget (a FASTA file larger than
 * it is read whole, with a warning); what a stream does not take is
 * refused; a file whose index lies (a database index held twice, a name
 * that runs off its section) under valid checksums is refused.  Ranges
 * streamed alone (swgpu_search_stream_candidates, as swgpu-mpi ranks do),
 * merged, and aligned on each range's hits (swgpu_db_open_hits) give the
 * whole search too; swgpu_db_verify checks the whole-file checksum.  The
 * part count of a FIFO is 1 without opening it (an open would wait for a
 * writer, or take the one writer's data from the reader after it).
 */
#define _POSIX_C_SOURCE 200809L
#include "tap.h"
#include "testlib.h"
#include "search/search.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

static char tmpdir[256];
static char logged[1024]; /* the last warning logged */

static void grab_log(swgpu_log_level_t level, const char *msg, void *user)
{
    (void)user;
    if (level == SWGPU_LOG_WARN)
        snprintf(logged, sizeof logged, "%s", msg);
}

/* nd sequences, ids d0...: random ones, homologs of two families, and
 * exact copies of the queries (ties); the queries: the first nq */
static void build(uint64_t seed, size_t nd, size_t nq, swgpu_seqset_t **qs, swgpu_db_t **db)
{
    swgpu_seqset_t *ds = NULL;
    char fam[2][400], buf[900], id[32];
    swgpu_seqset_create(SWGPU_PROTEIN, &ds);
    swgpu_seqset_create(SWGPU_PROTEIN, qs);
    for (int f = 0; f < 2; f++)
        tl_rand_letters(&seed, fam[f], 80 + tap_rand(&seed) % 200, TL_AMINO);
    for (size_t i = 0; i < nd; i++) {
        if (i % 4 == 1)
            tl_mutate_letters_each(&seed, fam[i % 8 == 1], buf, sizeof buf, 2 + (unsigned)(i % 9),
                                   TL_AMINO);
        else if (i >= nq && i % 3 == 0) { /* a copy of a query: equal scores */
            swgpu_seq_t s;
            swgpu_seqset_get(ds, (size_t)(tap_rand(&seed) % nq), &s);
            for (size_t k = 0; k < s.len; k++)
                buf[k] = swgpu_decode(SWGPU_PROTEIN, s.res[k]);
            buf[s.len] = 0;
        } else
            tl_rand_letters(&seed, buf, 20 + tap_rand(&seed) % 300, TL_AMINO);
        snprintf(id, sizeof id, "d%zu", i);
        swgpu_seqset_add(ds, id, i % 2 ? "a description" : "", buf, strlen(buf));
        if (i < nq)
            swgpu_seqset_add(*qs, id, "", buf, strlen(buf));
    }
    swgpu_db_from_seqset(ds, db);
    swgpu_seqset_destroy(ds);
}

/* w (the whole search on db) against s (streamed, its hits' database h):
 * the mismatches; *hits counts the hits compared */
static long compare(const swgpu_search_result_t *w, const swgpu_db_t *db,
                    const swgpu_search_result_t *s, const swgpu_db_t *h, long *hits)
{
    long bad = 0;
    if (w->n_queries != s->n_queries || w->cells != s->cells)
        return 1000000;
    for (size_t i = 0; i < w->n_queries; i++) {
        const swgpu_query_result_t *a = &w->q[i], *b = &s->q[i];
        bad += a->n_hits != b->n_hits || memcmp(&a->karlin, &b->karlin, sizeof a->karlin) != 0;
        for (size_t k = 0; k < a->n_hits && k < b->n_hits; k++) {
            const swgpu_hit_t *x = &a->hits[k], *y = &b->hits[k];
            swgpu_seq_t tx, ty;
            bad += x->target != y->target || x->score != y->score ||
                   memcmp(&x->bits, &y->bits, sizeof x->bits) ||
                   memcmp(&x->evalue, &y->evalue, sizeof x->evalue) || !tl_same_aln(&x->aln, &y->aln);
            if (swgpu_db_get(db, x->target, &tx) || swgpu_db_get(h, y->target, &ty) ||
                strcmp(tx.id, ty.id) || strcmp(tx.desc, ty.desc) || tx.len != ty.len ||
                memcmp(tx.res, ty.res, tx.len))
                bad++;
            (*hits)++;
        }
    }
    return bad;
}

static void test_same(void)
{
    swgpu_seqset_t *qs = NULL;
    swgpu_db_t *db = NULL;
    swgpu_matrix_t *m = NULL;
    char path[300];
    size_t nd = 61;
    build(31, nd, 9, &qs, &db);
    snprintf(path, sizeof path, "%s/s.swdb", tmpdir);
    CHECK(swgpu_db_write(db, path) == SWGPU_OK, "makedb file written: %s", swgpu_last_error());
    swgpu_matrix_builtin("BLOSUM62", &m);
    const size_t parts[] = {1, 2, 3, 7, 61, 100};
    for (int v = 0; v < 8; v++) {
        swgpu_opts_t o;
        swgpu_search_result_t *w = NULL;
        swgpu_opts_init(&o, SWGPU_PROTEIN);
        o.backend = SWGPU_BACKEND_CPU;
        o.threads = 2;
        o.top_n = v % 2 ? 2 : 4; /* copies of a query tie at the cut-off */
        o.rank = v & 2 ? SWGPU_RANK_SCORE : SWGPU_RANK_EVALUE;
        o.evalue_model = v & 4 ? SWGPU_EVALUE_OLD_FSC : SWGPU_EVALUE_SPOUGE;
        o.evalue = v == 5 ? 1e-3 : 10;
        o.no_self = v == 3;
        o.no_align = v == 6;
        CHECK(swgpu_search(qs, db, m, &o, &w) == SWGPU_OK, "whole search %d", v);
        for (size_t p = 0; p < sizeof parts / sizeof *parts; p++) {
            swgpu_search_result_t *s = NULL;
            swgpu_db_t *h = NULL;
            long hits = 0, bad;
            int rc = swgpu_search_stream(qs, path, parts[p], m, &o, &s, &h);
            CHECK(rc == SWGPU_OK, "variant %d, %zu parts: %s", v, parts[p], swgpu_last_error());
            if (rc)
                continue;
            bad = compare(w, db, s, h, &hits);
            CHECK(bad == 0 && hits > 0, "variant %d, %zu parts: %ld of %ld hits differ", v,
                  parts[p], bad, hits);
            swgpu_db_part_t info;
            swgpu_db_part_info(h, &info);
            CHECK(info.total_n == nd && info.total_residues == swgpu_db_residues(db) &&
                      info.total_max_len == swgpu_db_max_len(db),
                  "the hits' database has the whole's size and longest (%llu, want %llu)",
                  (unsigned long long)info.total_max_len,
                  (unsigned long long)swgpu_db_max_len(db));
            swgpu_search_result_destroy(s);
            swgpu_db_destroy(h);
        }
        swgpu_search_result_destroy(w);
    }

    /* the part count follows the budget; other databases are read whole */
    swgpu_opts_t o;
    size_t n = 0;
    uint64_t bytes = 0;
    swgpu_opts_init(&o, SWGPU_PROTEIN);
    o.threads = 1;
    CHECK(swgpu_stream_parts(path, &o, UINT64_MAX / 2, &n, &bytes) == SWGPU_OK && n == 1,
          "a database that fits: one part (%zu)", n);
    CHECK((long long)bytes > 0 && access(path, R_OK) == 0, "the file's bytes: %llu",
          (unsigned long long)bytes);
    CHECK(swgpu_stream_parts(path, &o, 1, &n, &bytes) == SWGPU_EBUDGET,
          "a budget of one byte: SWGPU_EBUDGET");
    snprintf(path, sizeof path, "%s/s.fa", tmpdir);
    FILE *fp = fopen(path, "w");
    fputs(">a\nACDEFGHIK\n", fp);
    fclose(fp);
    logged[0] = 0;
    swgpu_set_logger(grab_log, NULL, SWGPU_LOG_WARN);
    CHECK(swgpu_stream_parts(path, &o, 1, &n, &bytes) == SWGPU_OK && n == 1 && bytes == 0,
          "FASTA: read whole");
    CHECK(strstr(logged, "s.fa (13 bytes) is read whole into memory although the memory "
                 "budget is 1 bytes") && strstr(logged, "makedb"), "FASTA over the budget: "
          "warned (%s)", logged);
    logged[0] = 0;
    CHECK(swgpu_stream_parts(path, &o, 0, &n, &bytes) == SWGPU_OK && n == 1 && !logged[0],
          "FASTA, no budget given: no warning (%s)", logged);
    CHECK(swgpu_stream_parts(path, &o, 13, &n, &bytes) == SWGPU_OK && n == 1 && !logged[0],
          "FASTA within the budget: no warning (%s)", logged);
    /* a BLAST database of three volumes (an alias file): their nine files' bytes */
    char bpath[300], want[400];
    uint64_t sum = 0;
    for (int v = 0; v < 3; v++)
        for (int e = 0; e < 3; e++) {
            size_t len = 0;
            snprintf(bpath, sizeof bpath, "%s/blastdb/prot_mv.%02d.p%s", tl_datadir(), v,
                     (const char *[]){"in", "sq", "hr"}[e]);
            free(tl_slurp(bpath, &len));
            sum += len;
        }
    snprintf(bpath, sizeof bpath, "%s/blastdb/prot_mv", tl_datadir());
    snprintf(want, sizeof want, "prot_mv (%llu bytes) is read whole", (unsigned long long)sum);
    CHECK(sum > 1000 && swgpu_stream_parts(bpath, &o, 1000, &n, &bytes) == SWGPU_OK &&
              n == 1 && strstr(logged, want), "BLAST database over the budget: warned with "
          "\"%s\" (%s)", want, logged);
    swgpu_set_logger(NULL, NULL, SWGPU_LOG_WARN);

    /* refused: no makedb file, fitted statistics, no parts */
    swgpu_search_result_t *s = NULL;
    swgpu_db_t *h = NULL;
    CHECK(swgpu_search_stream(qs, path, 2, m, &o, &s, &h) == SWGPU_EINVAL && !s && !h,
          "FASTA refused");
    snprintf(path, sizeof path, "%s/s.swdb", tmpdir);
    CHECK(swgpu_search_stream(qs, path, 0, m, &o, &s, &h) == SWGPU_EINVAL, "0 parts refused");
    o.gap_open = 12;
    o.gap_extend = 3;
    CHECK(swgpu_search_stream(qs, path, 2, m, &o, &s, &h) == SWGPU_EINVAL &&
              strstr(swgpu_last_error(), "not yet available with a streamed database"),
          "fitted statistics refused: %s", swgpu_last_error());
    swgpu_matrix_destroy(m);
    swgpu_db_destroy(db);
    swgpu_seqset_destroy(qs);
}

/* f (n bytes, a makedb file) written to name with both checksums made
 * valid again; a stream of it in 2 parts refused with want */
static void expect_lie(unsigned char *f, size_t n, const char *name, int no_self,
                       const char *want)
{
    char path[300];
    swgpu_seqset_t *qs = NULL;
    swgpu_matrix_t *m = NULL;
    swgpu_search_result_t *r = NULL;
    swgpu_db_t *h = NULL;
    swgpu_opts_t o;
    tl_fix_crcs(f, n);
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    tl_spit(path, f, n);
    swgpu_seqset_create(SWGPU_PROTEIN, &qs);
    swgpu_seqset_add(qs, "q", "", "MKVLAAGICWDEHH", 14);
    swgpu_matrix_get("BLOSUM62", &m);
    swgpu_opts_init(&o, SWGPU_PROTEIN);
    o.threads = 1;
    o.no_self = no_self;
    o.evalue = 1e300;
    int rc = swgpu_search_stream(qs, path, 2, m, &o, &r, &h);
    CHECK(rc == SWGPU_EDB && !r && !h && strstr(swgpu_last_error(), want),
          "%s: refused with \"%s\" (%d: %s)", name, want, rc, swgpu_last_error());
    swgpu_search_result_destroy(r);
    swgpu_db_destroy(h);
    swgpu_matrix_destroy(m);
    swgpu_seqset_destroy(qs);
}

/* an index that lies under valid checksums: each part checks its own
 * entries before the scan, the hits' database the hits' */
static void test_lies(void)
{
    swgpu_seqset_t *qs = NULL;
    swgpu_db_t *db = NULL;
    char path[300];
    size_t n = 0;
    build(29, 120, 2, &qs, &db);
    snprintf(path, sizeof path, "%s/lie.swdb", tmpdir);
    CHECK_EQ_INT(swgpu_db_write(db, path), SWGPU_OK);
    unsigned char *good = tl_slurp(path, &n), *f = malloc(n ? n : 1);
    uint64_t N = swgpu_db_size(db);
    if (!good || !f || n < 160) {
        CHECK(0, "read lie.swdb back");
        goto done;
    }
    /* the sections' offsets (header bytes 48 + 16 i) */
    uint64_t s_noff = tl_get64(good + 48 + 16), s_orig = tl_get64(good + 48 + 32);
    uint64_t names_size = tl_get64(good + 48 + 72);
    /* the last sequence's order entry names the first's database index: a
     * part of its own, the second, holds an index the first held */
    memcpy(f, good, n);
    memcpy(f + s_orig + 4 * (N - 1), f + s_orig, 4);
    expect_lie(f, n, "dup.swdb", 0, "invalid order permutation at 119");
    /* every name offset past the end of the names section: the hits'
     * database refuses to name them; with --no-self the parts do */
    memcpy(f, good, n);
    for (uint64_t i = 0; i < N; i++)
        for (int b = 0; b < 8; b++)
            f[s_noff + 8 * i + b] = (unsigned char)((names_size - 1) >> (8 * b));
    expect_lie(f, n, "names.swdb", 0, "names section ends inside sequence");
    expect_lie(f, n, "names2.swdb", 1, "names section ends inside sequence");
done:
    free(good);
    free(f);
    swgpu_db_destroy(db);
    swgpu_seqset_destroy(qs);
}

/* the database cut into ranges at cuts[], each streamed in k parts for its
 * candidates, merged, each range's hits aligned on its own hits' database:
 * the whole search's result, hit for hit */
static void test_ranges(void)
{
    swgpu_seqset_t *qs = NULL;
    swgpu_db_t *db = NULL, *all = NULL;
    swgpu_matrix_t *m = NULL;
    swgpu_search_result_t *w = NULL, *cand[3] = {NULL, NULL, NULL}, *r = NULL;
    char path[300];
    const double cuts[] = {0, 0.3, 0.55, 1};
    build(37, 80, 6, &qs, &db);
    snprintf(path, sizeof path, "%s/r.swdb", tmpdir);
    CHECK_EQ_INT(swgpu_db_write(db, path), SWGPU_OK);
    swgpu_matrix_builtin("BLOSUM62", &m);
    swgpu_opts_t o;
    swgpu_opts_init(&o, SWGPU_PROTEIN);
    o.backend = SWGPU_BACKEND_CPU;
    o.threads = 2;
    o.top_n = 3;
    CHECK(swgpu_search(qs, db, m, &o, &w) == SWGPU_OK, "whole search");
    for (int k = 0; k < 3; k++) {
        int rc = swgpu_search_stream_candidates(qs, path, cuts[k], cuts[k + 1], (size_t)k + 2, m,
                                                &o, &cand[k]);
        CHECK(rc == SWGPU_OK, "range %d in %d parts: %s", k, k + 2, swgpu_last_error());
    }
    swgpu_merge_src_t src = {swgpu_db_size(db), swgpu_db_residues(db), NULL, NULL, NULL};
    if (!cand[0] || !cand[1] || !cand[2] ||
        swgpu_search_merge(qs, m, &o, (const swgpu_search_result_t *const *)cand, 3, &src, &r)) {
        CHECK(0, "merge: %s", swgpu_last_error());
        goto done;
    }
    size_t nt = 0;
    uint64_t t[600];
    for (size_t i = 0; i < r->n_queries; i++)
        for (size_t h = 0; h < r->q[i].n_hits && nt < 600; h++)
            t[nt++] = r->q[i].hits[h].target;
    for (int k = 0; k < 3; k++) {
        swgpu_db_t *hk = NULL;
        int rc = swgpu_db_open_hits(path, cuts[k], cuts[k + 1], t, nt, &hk);
        CHECK(rc == SWGPU_OK && swgpu_db_size(hk) > 0 && swgpu_db_size(hk) < nt,
              "range %d's hits: %zu of %zu (%s)", k, hk ? swgpu_db_size(hk) : 0, nt,
              swgpu_last_error());
        if (rc == SWGPU_OK)
            CHECK_EQ_INT(swgpu_search_align(r, qs, hk, m, &o), SWGPU_OK);
        swgpu_db_destroy(hk);
    }
    CHECK_EQ_INT(swgpu_db_open_hits(path, 0, 1, t, nt, &all), SWGPU_OK);
    long hits = 0, bad = all ? compare(w, db, r, all, &hits) : 1;
    CHECK(bad == 0 && hits > 10, "ranges merged and aligned: %ld of %ld hits differ", bad, hits);
    swgpu_db_t *none = (swgpu_db_t *)1;
    CHECK(swgpu_db_open_hits(path, 0.5, 0.4, t, nt, &none) == SWGPU_EINVAL && !none,
          "db_open_hits: a reversed range refused");
    size_t np = 0;
    uint64_t bytes = 0;
    CHECK(swgpu_stream_parts_range(path, &o, 0, 0.6, 0.2, &np, &bytes) == SWGPU_EINVAL,
          "stream_parts_range: a reversed range refused");
    CHECK(swgpu_stream_parts_range(path, &o, 0, 0.2, 0.6, &np, &bytes) == SWGPU_OK && np == 1 &&
              bytes > 0, "stream_parts_range: the default budget holds the range whole");
    /* the whole-file checksum: the file as written, then a residue changed */
    CHECK_EQ_INT(swgpu_db_verify(path), SWGPU_OK);
    size_t n = 0;
    unsigned char *f = tl_slurp(path, &n);
    if (f && n > 300) {
        f[n - 200] ^= 1;
        tl_spit(path, f, n);
        CHECK(swgpu_db_verify(path) == SWGPU_EDB &&
                  strstr(swgpu_last_error(), "checksum mismatch (corrupt file)"),
              "db_verify: a changed byte found (%s)", swgpu_last_error());
    }
    free(f);
done:
    swgpu_db_destroy(all);
    for (int k = 0; k < 3; k++)
        swgpu_search_result_destroy(cand[k]);
    swgpu_search_result_destroy(r);
    swgpu_search_result_destroy(w);
    swgpu_matrix_destroy(m);
    swgpu_db_destroy(db);
    swgpu_seqset_destroy(qs);
}

/* swgpu_stream_parts on a FIFO with no writer: 1 part, at once (an open
 * of it would block; SIGALRM ends the test then, with no result line) */
static void test_fifo(void)
{
    char path[300];
    snprintf(path, sizeof path, "%s/db.fifo", tmpdir);
    if (mkfifo(path, 0600) != 0) {
        SKIP(2, "mkfifo failed");
        return;
    }
    swgpu_opts_t o;
    swgpu_opts_init(&o, SWGPU_PROTEIN);
    size_t parts = 9;
    uint64_t bytes = 9;
    alarm(30);
    CHECK_EQ_INT(swgpu_stream_parts(path, &o, (uint64_t)1 << 20, &parts, &bytes), SWGPU_OK);
    alarm(0);
    CHECK(parts == 1 && bytes == 0, "FIFO: %zu parts, %llu bytes", parts, (unsigned long long)bytes);
    unlink(path);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/swgpu_test_stream.XXXXXX");
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 2;
    }
    test_same();
    test_lies();
    test_ranges();
    test_fifo();
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tmpdir);
    return tap_done();
}
