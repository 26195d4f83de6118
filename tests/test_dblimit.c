/*
 * test_dblimit.c - the one limit of 32 bits in the database's path: at
 * most 2^32 - 1 sequences (sorted and database indices), offsets and
 * counts being 64-bit.  SWGPU_DB_MAX_SEQS lowers the limit, so that every
 * place that checks it (the parallel FASTA reader, the one-thread reader
 * of gzip and of streams, swgpu_db_from_seqset, a makedb file's header,
 * the CPU engine, the search) is shown to refuse a database one sequence
 * over it with the same clear message, and to take one at it.
 */
#define _POSIX_C_SOURCE 200809L
#include "tap.h"
#include "testlib.h"
#include "cpu/cpu.h"
#include "io/io.h"

#include <unistd.h>
#include <zlib.h>

static char tmpdir[256];

static const char *tmp(const char *name)
{
    return tl_path(tmpdir, name);
}

static const char *const seqs[] = {"MKWVTFISLL", "ACDEFGHIK", "PPPPW", "MMMKV", "LLKLLKA"};
static const char fasta[] = ">s0\nMKWVTFISLL\n>s1\nACDEFGHIK\n>s2\nPPPPW\n>s3\nMMMKV\n>s4\nLLKLLKA\n";

static char want[1024];

/* the message for 5 sequences when 4 may be held */
static const char *over(const char *kind, const char *name)
{
    snprintf(want, sizeof want, "%s%s%s: 5 sequences, more than the 4 a database may hold "
             "(32-bit sequence indices)", kind, name ? " " : "", name ? name : "");
    return want;
}

static void test_helper(void)
{
    unsetenv("SWGPU_DB_MAX_SEQS");
    CHECK_EQ_INT(swgpu__db_max_seqs(), 4294967295ull);
    const char *ignored[] = {"0", "-1", "abc", "4x", "", "4294967295", "18446744073709551617"};
    for (size_t i = 0; i < sizeof ignored / sizeof *ignored; i++) {
        setenv("SWGPU_DB_MAX_SEQS", ignored[i], 1);
        CHECK(swgpu__db_max_seqs() == 4294967295ull, "SWGPU_DB_MAX_SEQS=%s not ignored", ignored[i]);
    }
    setenv("SWGPU_DB_MAX_SEQS", "4294967294", 1);
    CHECK_EQ_INT(swgpu__db_max_seqs(), 4294967294ull);
    setenv("SWGPU_DB_MAX_SEQS", "4", 1);
    CHECK_EQ_INT(swgpu__db_max_seqs(), 4);
    CHECK_EQ_INT(swgpu__check_db_seqs(4, "file", "x.fa"), SWGPU_OK);
    CHECK_EQ_INT(swgpu__check_db_seqs(5, "file", "x.fa"), SWGPU_ERANGE);
    CHECK_EQ_STR(swgpu_last_error(), over("file", "x.fa"));
    CHECK_EQ_INT(swgpu__check_db_seqs(5, "search", NULL), SWGPU_ERANGE);
    CHECK_EQ_STR(swgpu_last_error(), over("search", NULL));
    /* the real limit: sizes past 32 bits are no sequence count over it */
    unsetenv("SWGPU_DB_MAX_SEQS");
    CHECK_EQ_INT(swgpu__check_db_seqs(4294967295ull, "file", "x"), SWGPU_OK);
    CHECK_EQ_INT(swgpu__check_db_seqs(4294967296ull, "file", "x"), SWGPU_ERANGE);
    snprintf(want, sizeof want, "file x: 4294967296 sequences, more than the 4294967295 a "
             "database may hold (32-bit sequence indices)");
    CHECK_EQ_STR(swgpu_last_error(), want);
}

/* makedb of path with 4 then 5 allowed: refused with the message, then made */
static void makedb_both(const char *in, const char *kind, int threads)
{
    char path[512]; /* tmp()'s buffers are reused */
    snprintf(path, sizeof path, "%s", in);
    swgpu_db_t *db = NULL;
    setenv("SWGPU_DB_MAX_SEQS", "4", 1);
    unlink(tmp("o.swdb"));
    CHECK_EQ_INT(swgpu_makedb(path, tmp("o.swdb"), SWGPU_AUTO, threads, &db, NULL), SWGPU_ERANGE);
    CHECK_EQ_STR(swgpu_last_error(), over(kind, path));
    CHECK(db == NULL && access(tmp("o.swdb"), F_OK) != 0, "%s: a database made", path);
    setenv("SWGPU_DB_MAX_SEQS", "5", 1);
    CHECK_EQ_INT(swgpu_makedb(path, tmp("o.swdb"), SWGPU_AUTO, threads, &db, NULL), SWGPU_OK);
    CHECK_EQ_INT(swgpu_db_size(db), 5);
    swgpu_db_destroy(db);
}

static void test_readers(void)
{
    CHECK_EQ_INT(tl_spit(tmp("five.fa"), fasta, strlen(fasta)), 0);
    makedb_both(tmp("five.fa"), "file", 2); /* the parallel reader */
    makedb_both(tmp("five.fa"), "file", 1);
    gzFile gz = gzopen(tmp("five.fa.gz"), "wb");
    CHECK(gz != NULL, "gzopen");
    if (gz) {
        gzwrite(gz, fasta, (unsigned)strlen(fasta));
        gzclose(gz);
        makedb_both(tmp("five.fa.gz"), "file", 2); /* fasta.c, one thread */
    }
    /* a makedb file of 5 opened where 4 may be held: its header */
    unsetenv("SWGPU_DB_MAX_SEQS");
    swgpu_db_t *db = NULL;
    CHECK_EQ_INT(swgpu_makedb(tmp("five.fa"), tmp("five.swdb"), SWGPU_AUTO, 1, NULL, NULL), SWGPU_OK);
    setenv("SWGPU_DB_MAX_SEQS", "4", 1);
    CHECK_EQ_INT(swgpu_db_open(tmp("five.swdb"), SWGPU_AUTO, &db, NULL), SWGPU_ERANGE);
    CHECK_EQ_STR(swgpu_last_error(), over("database", tmp("five.swdb")));
    swgpu_db_destroy(db);
    setenv("SWGPU_DB_MAX_SEQS", "5", 1);
    CHECK_EQ_INT(swgpu_db_open(tmp("five.swdb"), SWGPU_AUTO, &db, NULL), SWGPU_OK);
    swgpu_db_destroy(db);
    /* a set of 5 made into a database */
    swgpu_seqset_t *set = tl_set_of(SWGPU_PROTEIN, seqs, 5, "s");
    setenv("SWGPU_DB_MAX_SEQS", "4", 1);
    db = NULL;
    CHECK_EQ_INT(swgpu_db_from_seqset(set, &db), SWGPU_ERANGE);
    CHECK_EQ_STR(swgpu_last_error(), over("database", NULL));
    CHECK(db == NULL, "from_seqset: a database made");
    swgpu_seqset_destroy(set);
}

/* a database of 5 made while allowed, searched when 4 are: the CPU engine
 * and the search refuse it */
static void test_engine_search(const swgpu_matrix_t *b62)
{
    unsetenv("SWGPU_DB_MAX_SEQS");
    swgpu_db_t *db = tl_db_of(SWGPU_PROTEIN, seqs, 5, "s");
    swgpu_seqset_t *qs = tl_set_of(SWGPU_PROTEIN, seqs, 1, "q");
    CHECK(db && qs, "fixtures");
    if (!db || !qs) return;
    swgpu_opts_t o;
    swgpu_opts_init(&o, SWGPU_PROTEIN);
    o.backend = SWGPU_BACKEND_CPU;
    setenv("SWGPU_DB_MAX_SEQS", "4", 1);
    void *state = NULL;
    CHECK_EQ_INT(swgpu__cpu_create(db, b62, &o, &state), SWGPU_ERANGE);
    CHECK_EQ_STR(swgpu_last_error(), over("cpu engine", NULL));
    CHECK(state == NULL, "cpu engine made");
    swgpu_search_result_t *r = NULL;
    CHECK_EQ_INT(swgpu_search(qs, db, b62, &o, &r), SWGPU_ERANGE);
    CHECK_EQ_STR(swgpu_last_error(), over("search", NULL));
    CHECK(r == NULL, "a result made");
    swgpu_search_result_destroy(r);
    setenv("SWGPU_DB_MAX_SEQS", "5", 1);
    CHECK_EQ_INT(swgpu_search(qs, db, b62, &o, &r), SWGPU_OK);
    if (r) {
        CHECK_EQ_INT(r->q[0].n_hits > 0, 1);
        CHECK_EQ_INT(r->q[0].hits[0].target, 0);
        CHECK_EQ_INT(r->q[0].hits[0].score, 52); /* MKWVTFISLL against itself */
    }
    swgpu_search_result_destroy(r);
    swgpu_seqset_destroy(qs);
    swgpu_db_destroy(db);
    unsetenv("SWGPU_DB_MAX_SEQS");
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/swgpu_test_dblimit.XXXXXX");
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    swgpu_matrix_t *b62 = NULL;
    CHECK_EQ_INT(swgpu_matrix_builtin("BLOSUM62", &b62), SWGPU_OK);
    test_helper();
    test_readers();
    if (b62) test_engine_search(b62);
    swgpu_matrix_destroy(b62);
    const char *names[] = {"five.fa", "five.fa.gz", "five.swdb", "o.swdb"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) unlink(tmp(names[i]));
    rmdir(tmpdir);
    return tap_done();
}
