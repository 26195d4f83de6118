/*
 * test_seqio.c - alphabets, sequence sets, FASTA/FASTQ reading (plain and
 * gzip) and every bad-input case of the reader.  Fixtures are in tests/data
 * (SWGPU_TESTDATA overrides); gzip files are made here at run time.
 */
#define _POSIX_C_SOURCE 200809L
#include "tap.h"
#include "testlib.h"
#include "swgpu.h"
#include "io/io.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

static const char *datadir;
static char tmpdir[256];
static char lastlog[1024];
static int nlog;

static void logger(swgpu_log_level_t level, const char *msg, void *user)
{
    (void)level;
    (void)user;
    snprintf(lastlog, sizeof lastlog, "%s", msg);
    nlog++;
}

static const char *data(const char *name)
{
    return tl_path(datadir, name);
}

static const char *tmp(const char *name)
{
    return tl_path(tmpdir, name);
}

/* read expecting failure with status st and a message containing want */
static void expect_fail(const char *path, swgpu_alphabet_t a, int st, const char *want)
{
    swgpu_seqset_t *s = (swgpu_seqset_t *)1;
    int rc = swgpu_seqset_read(path, a, &s, NULL);
    CHECK(rc == st, "%s: status %d (%s), expected %d", path, rc, swgpu_last_error(), st);
    CHECK(s == NULL, "%s: *out not NULL on failure", path);
    CHECK(strstr(swgpu_last_error(), want) != NULL, "%s: message \"%s\" lacks \"%s\"", path,
          swgpu_last_error(), want);
    CHECK(strstr(swgpu_last_error(), path) != NULL, "message \"%s\" does not name the file", swgpu_last_error());
}

static void write_gz(const char *path, const char *text, size_t len)
{
    gzFile g = gzopen(path, "wb");
    gzwrite(g, text, (unsigned)len);
    gzclose(g);
}

static long file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) ? -1 : (long)st.st_size;
}

static void test_alphabet(void)
{
    CHECK_EQ_INT(swgpu_encode(SWGPU_PROTEIN, 'A'), 0);
    CHECK_EQ_INT(swgpu_encode(SWGPU_PROTEIN, 'W'), 17);
    CHECK_EQ_INT(swgpu_encode(SWGPU_PROTEIN, 'v'), 19);
    CHECK_EQ_INT(swgpu_encode(SWGPU_PROTEIN, 'x'), SWGPU_PROT_X);
    CHECK_EQ_INT(swgpu_encode(SWGPU_PROTEIN, '*'), 23);
    CHECK_EQ_INT(swgpu_encode(SWGPU_PROTEIN, 'J'), 24);
    CHECK_EQ_INT(swgpu_encode(SWGPU_PROTEIN, 'U'), 25);
    CHECK_EQ_INT(swgpu_encode(SWGPU_PROTEIN, 'o'), 26);
    CHECK_EQ_INT(swgpu_encode(SWGPU_PROTEIN, '-'), -1);
    CHECK_EQ_INT(swgpu_encode(SWGPU_PROTEIN, 0), -1);
    CHECK_EQ_INT(swgpu_encode(SWGPU_PROTEIN, 200), -1);
    CHECK_EQ_INT(swgpu_encode(SWGPU_DNA, 'g'), 2);
    CHECK_EQ_INT(swgpu_encode(SWGPU_DNA, 'U'), 3);
    CHECK_EQ_INT(swgpu_encode(SWGPU_DNA, 'N'), SWGPU_DNA_N);
    CHECK_EQ_INT(swgpu_encode(SWGPU_DNA, 'R'), 5);
    CHECK_EQ_INT(swgpu_encode(SWGPU_DNA, 'v'), 14);
    CHECK_EQ_INT(swgpu_encode(SWGPU_DNA, 'X'), -1);
    CHECK_EQ_INT(swgpu_encode(SWGPU_DNA, 'E'), -1);
    CHECK_EQ_INT(swgpu_encode(SWGPU_AUTO, 'A'), -1);
    CHECK_EQ_INT(swgpu_alphabet_size(SWGPU_PROTEIN), 27);
    CHECK_EQ_INT(swgpu_alphabet_size(SWGPU_DNA), 15);
    int ok = 1;
    for (int a = SWGPU_PROTEIN; a <= SWGPU_DNA; a++)
        for (int c = 0; c < swgpu_alphabet_size(a); c++)
            ok &= swgpu_encode(a, swgpu_decode(a, (uint8_t)c)) == c;
    CHECK(ok, "decode/encode round trip");
    CHECK_EQ_INT(swgpu_decode(SWGPU_PROTEIN, 27), '?');
    CHECK_EQ_INT(swgpu_decode(SWGPU_DNA, 15), '?');
    CHECK_EQ_INT(swgpu_decode(SWGPU_DNA, 4), 'N');
    CHECK_EQ_STR(swgpu_alphabet_name(SWGPU_PROTEIN), "protein");
    CHECK_EQ_STR(swgpu_alphabet_name(SWGPU_DNA), "dna");
    CHECK_EQ_STR(swgpu_alphabet_name(SWGPU_AUTO), "auto");
}

static void test_multi(void)
{
    swgpu_seqset_t *s = NULL;
    swgpu_read_info_t info;
    int rc = swgpu_seqset_read(data("multi.fa"), SWGPU_AUTO, &s, &info);
    CHECK_EQ_INT(rc, 0);
    if (rc) return;
    CHECK_EQ_INT(swgpu_seqset_alphabet(s), SWGPU_PROTEIN);
    CHECK_EQ_INT(swgpu_seqset_size(s), 3);
    CHECK_EQ_STR(tl_id_of(s, 0), "sp|P1|ONE");
    CHECK_EQ_STR(tl_desc_of(s, 0), "first protein >with a bracket");
    CHECK_EQ_STR(tl_letters(s, 0), "MKVLACDEFGHIK");
    CHECK_EQ_STR(tl_id_of(s, 1), "two");
    CHECK_EQ_STR(tl_desc_of(s, 1), "desc with  spaces");
    CHECK_EQ_STR(tl_letters(s, 1), "MK*VWY");
    CHECK_EQ_STR(tl_id_of(s, 2), "three");
    CHECK_EQ_STR(tl_desc_of(s, 2), "");
    CHECK_EQ_STR(tl_letters(s, 2), "WWW");
    swgpu_seq_t q;
    swgpu_seqset_get(s, 1, &q);
    CHECK_EQ_INT(q.res[2], 23);
    CHECK_EQ_INT(info.n_records, 3);
    CHECK_EQ_INT(info.n_residues, 13 + 6 + 3);
    CHECK_EQ_INT(swgpu_seqset_residues(s), 22);
    CHECK_EQ_INT(info.max_len, 13);
    CHECK_EQ_INT(info.n_empty, 0);
    CHECK_EQ_INT(info.n_unknown, 0);
    CHECK_EQ_INT(swgpu_seqset_get(s, 3, &q), SWGPU_EINVAL);
    swgpu_seqset_destroy(s);

    /* the same through gzip, detected from the content (name has no .gz) */
    FILE *fp = fopen(data("multi.fa"), "rb");
    char text[4096];
    size_t n = fread(text, 1, sizeof text, fp);
    fclose(fp);
    write_gz(tmp("multi.bin"), text, n);
    rc = swgpu_seqset_read(tmp("multi.bin"), SWGPU_PROTEIN, &s, &info);
    CHECK_EQ_INT(rc, 0);
    if (rc) return;
    CHECK_EQ_INT(swgpu_seqset_size(s), 3);
    CHECK_EQ_STR(tl_letters(s, 0), "MKVLACDEFGHIK");
    CHECK_EQ_STR(tl_desc_of(s, 0), "first protein >with a bracket");
    CHECK_EQ_STR(tl_letters(s, 2), "WWW");
    swgpu_seqset_destroy(s);
}

static void test_crlf_fastq(void)
{
    swgpu_seqset_t *s = NULL;
    swgpu_read_info_t info;
    int rc = swgpu_seqset_read(data("crlf.fa"), SWGPU_AUTO, &s, &info);
    CHECK_EQ_INT(rc, 0);
    if (!rc) {
        CHECK_EQ_INT(swgpu_seqset_alphabet(s), SWGPU_PROTEIN);
        CHECK_EQ_INT(swgpu_seqset_size(s), 2);
        CHECK_EQ_STR(tl_id_of(s, 0), "c1");
        CHECK_EQ_STR(tl_desc_of(s, 0), "crlf record");
        CHECK_EQ_STR(tl_letters(s, 0), "ACDEFGHI");
        CHECK_EQ_STR(tl_id_of(s, 1), "c2");
        CHECK_EQ_STR(tl_letters(s, 1), "KLMN");
        swgpu_seqset_destroy(s);
    }

    rc = swgpu_seqset_read(data("reads.fq"), SWGPU_AUTO, &s, &info);
    CHECK_EQ_INT(rc, 0);
    if (!rc) {
        CHECK_EQ_INT(swgpu_seqset_alphabet(s), SWGPU_DNA);
        CHECK_EQ_INT(swgpu_seqset_size(s), 3);
        CHECK_EQ_STR(tl_id_of(s, 0), "r1");
        CHECK_EQ_STR(tl_desc_of(s, 0), "first read");
        CHECK_EQ_STR(tl_letters(s, 0), "ACGTACGTNN");
        CHECK_EQ_STR(tl_id_of(s, 1), "r2");
        CHECK_EQ_STR(tl_letters(s, 1), "ACGT"); /* u read as T */
        CHECK_EQ_STR(tl_letters(s, 2), "GGCCAATTRY");
        CHECK_EQ_INT(info.n_residues, 24);
        swgpu_seqset_destroy(s);
    }

    rc = swgpu_seqset_read(data("bom.fa"), SWGPU_AUTO, &s, NULL);
    CHECK_EQ_INT(rc, 0);
    if (!rc) {
        CHECK_EQ_STR(tl_id_of(s, 0), "bom1");
        CHECK_EQ_STR(tl_letters(s, 0), "MKV");
        swgpu_seqset_destroy(s);
    }

    rc = swgpu_seqset_read(data("nonl.fa"), SWGPU_DNA, &s, NULL);
    CHECK_EQ_INT(rc, 0);
    if (!rc) {
        CHECK_EQ_STR(tl_letters(s, 0), "ACGT");
        swgpu_seqset_destroy(s);
    }
}

static void test_alphabets(void)
{
    swgpu_seqset_t *s = NULL;
    swgpu_read_info_t info;
    nlog = 0;
    int rc = swgpu_seqset_read(data("dna.fa"), SWGPU_DNA, &s, &info);
    CHECK_EQ_INT(rc, 0);
    if (!rc) {
        swgpu_seq_t q;
        swgpu_seqset_get(s, 0, &q);
        static const uint8_t want[] = {0, 1, 2, 3, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 0, 1, 2, 3};
        CHECK_EQ_INT(q.len, sizeof want);
        CHECK(q.len == sizeof want && !memcmp(q.res, want, sizeof want), "dna codes");
        CHECK_EQ_STR(tl_letters(s, 1), "ACGTNNACGTNNACGTACGTACGT");
        CHECK_EQ_INT(info.n_unknown, 4);
        CHECK_EQ_INT(nlog, 1);
        CHECK(strstr(lastlog, "4 letters") && strstr(lastlog, "id d2"), "warning: %s", lastlog);
        swgpu_seqset_destroy(s);
    }
    nlog = 0;
    rc = swgpu_seqset_read(data("unknown.fa"), SWGPU_PROTEIN, &s, &info);
    CHECK_EQ_INT(rc, 0);
    if (!rc) {
        CHECK_EQ_STR(tl_letters(s, 0), "MKVXLLXX");
        CHECK_EQ_STR(tl_letters(s, 2), "ABX");
        CHECK_EQ_INT(info.n_unknown, 3);
        CHECK_EQ_INT(nlog, 1);
        CHECK(strstr(lastlog, "3 letters") && strstr(lastlog, "id u1"), "warning: %s", lastlog);
        swgpu_seqset_destroy(s);
    }
    /* auto: >= 90% ACGTU among non-N letters means DNA */
    rc = swgpu_seqset_read(data("autodna.fa"), SWGPU_AUTO, &s, &info);
    CHECK_EQ_INT(rc, 0);
    if (!rc) {
        CHECK_EQ_INT(swgpu_seqset_alphabet(s), SWGPU_DNA);
        CHECK_EQ_INT(info.n_unknown, 1);
        swgpu_seqset_destroy(s);
    }
    rc = swgpu_seqset_read(data("autoprot.fa"), SWGPU_AUTO, &s, &info);
    CHECK_EQ_INT(rc, 0);
    if (!rc) {
        CHECK_EQ_INT(swgpu_seqset_alphabet(s), SWGPU_PROTEIN);
        CHECK_EQ_STR(tl_letters(s, 0), "ACGTACGTAC");
        swgpu_seqset_destroy(s);
    }
}

static void test_empty_records(void)
{
    swgpu_seqset_t *s = NULL;
    swgpu_read_info_t info;
    nlog = 0;
    int rc = swgpu_seqset_read(data("emptyrec.fa"), SWGPU_PROTEIN, &s, &info);
    CHECK_EQ_INT(rc, 0);
    if (rc) return;
    CHECK_EQ_INT(swgpu_seqset_size(s), 2);
    CHECK_EQ_STR(tl_id_of(s, 0), "p1");
    CHECK_EQ_STR(tl_letters(s, 0), "MKV");
    CHECK_EQ_STR(tl_id_of(s, 1), "p2");
    CHECK_EQ_STR(tl_desc_of(s, 1), "");
    CHECK_EQ_STR(tl_letters(s, 1), "WW");
    CHECK_EQ_INT(info.n_empty, 3);
    CHECK_EQ_INT(info.n_records, 2);
    CHECK_EQ_INT(nlog, 1);
    CHECK(strstr(lastlog, "3 records") && strstr(lastlog, "record 1") && strstr(lastlog, "id e1"),
          "warning: %s", lastlog);
    swgpu_seqset_destroy(s);
}

static void test_bad_input(void)
{
    expect_fail(data("no-such-file.fa"), SWGPU_AUTO, SWGPU_EIO, "No such file");
    expect_fail(datadir, SWGPU_AUTO, SWGPU_EIO, "Is a directory");
    expect_fail(data("empty.fa"), SWGPU_AUTO, SWGPU_EEMPTY, "empty file");
    expect_fail(data("blank.fa"), SWGPU_AUTO, SWGPU_EEMPTY, "empty file");
    expect_fail(data("allempty.fa"), SWGPU_AUTO, SWGPU_EEMPTY, "no non-empty sequence");
    expect_fail(data("notfasta.txt"), SWGPU_AUTO, SWGPU_EFORMAT, "line 1: expected '>' or '@' at start of record");
    expect_fail(data("nohdr.fa"), SWGPU_AUTO, SWGPU_EFORMAT, "line 1: expected '>' or '@'");
    expect_fail(data("noplus.fq"), SWGPU_AUTO, SWGPU_EFORMAT, "line 7, record 2 (id r2): FASTQ record has no '+' line");
    expect_fail(data("noplus_eof.fq"), SWGPU_AUTO, SWGPU_EFORMAT, "record 2 (id r2): FASTQ record has no '+' line");
    expect_fail(data("badqual.fq"), SWGPU_AUTO, SWGPU_EFORMAT, "record 2 (id r2): quality length 4 differs from sequence length 6");
    expect_fail(data("binary.fa"), SWGPU_AUTO, SWGPU_EFORMAT, "line 4, record 2 (id b2): binary data (byte 0x01)");
    expect_fail(data("binhdr.fa"), SWGPU_AUTO, SWGPU_EFORMAT, "line 3: binary data");
    expect_fail(data("multi.fa"), (swgpu_alphabet_t)7, SWGPU_EINVAL, "invalid alphabet");

    /* gzip: an empty stream, a truncated stream (tail cut, trailer cut), corrupt data */
    write_gz(tmp("empty.gz"), "", 0);
    expect_fail(tmp("empty.gz"), SWGPU_AUTO, SWGPU_EEMPTY, "empty file");
    size_t n = 200000, k = 0;
    char *text = malloc(n + 64);
    uint64_t seed = 42;
    while (k < n) {
        k += (size_t)sprintf(text + k, ">s%zu\n", k);
        for (int j = 0; j < 60; j++) text[k++] = "ACDEFGHIKLMNPQRSTVWY"[tap_rand(&seed) % 20];
        text[k++] = '\n';
    }
    write_gz(tmp("full.gz"), text, k);
    long size = file_size(tmp("full.gz"));
    FILE *in = fopen(tmp("full.gz"), "rb");
    char *gz = malloc((size_t)size);
    CHECK(in && fread(gz, 1, (size_t)size, in) == (size_t)size, "read back gzip");
    fclose(in);
    swgpu_seqset_t *s = NULL;
    swgpu_read_info_t info;
    int rc = swgpu_seqset_read(tmp("full.gz"), SWGPU_AUTO, &s, &info);
    CHECK_EQ_INT(rc, 0);
    CHECK(!rc && info.n_residues == 60 * info.n_records && info.n_records > 2500, "full gzip: %d records",
          (int)info.n_records);
    swgpu_seqset_destroy(s);
    static const long cut[] = {4, 8, 1000};
    for (int i = 0; i < 3; i++) {
        FILE *o = fopen(tmp("cut.gz"), "wb");
        fwrite(gz, 1, (size_t)(i < 2 ? size - cut[i] : size / 2), o);
        fclose(o);
        expect_fail(tmp("cut.gz"), SWGPU_AUTO, SWGPU_EFORMAT, "truncated gzip data");
    }
    gz[size / 2] ^= 0x55;
    gz[size / 2 + 1] ^= 0x55;
    FILE *o = fopen(tmp("bad.gz"), "wb");
    fwrite(gz, 1, (size_t)size, o);
    fclose(o);
    expect_fail(tmp("bad.gz"), SWGPU_AUTO, SWGPU_EFORMAT, "gzip");
    free(gz);
    free(text);

    /* a makedb database compressed with gzip: refused with a clear message by
     * the reader and by swgpu_db_open (it used to recurse until the stack
     * overflowed: found by fuzz_fasta) */
    swgpu_db_t *db = NULL;
    swgpu_seqset_t *set = NULL;
    CHECK_EQ_INT(swgpu_seqset_read(data("multi.fa"), SWGPU_AUTO, &set, NULL), 0);
    CHECK_EQ_INT(swgpu_db_from_seqset(set, &db), 0);
    CHECK_EQ_INT(swgpu_db_write(db, tmp("db.swdb")), 0);
    swgpu_db_destroy(db);
    swgpu_seqset_destroy(set);
    db = NULL;
    in = fopen(tmp("db.swdb"), "rb");
    size = file_size(tmp("db.swdb"));
    char *raw = malloc((size_t)size);
    CHECK(in && fread(raw, 1, (size_t)size, in) == (size_t)size, "read back db");
    fclose(in);
    write_gz(tmp("db.swdb.gz"), raw, (size_t)size);
    free(raw);
    expect_fail(tmp("db.swdb.gz"), SWGPU_AUTO, SWGPU_EFORMAT,
                "a gzip-compressed swgpu database (decompress it first");
    CHECK_EQ_INT(swgpu_db_open(tmp("db.swdb.gz"), SWGPU_AUTO, &db, NULL), SWGPU_EFORMAT);
    CHECK(db == NULL && strstr(swgpu_last_error(), "gzip-compressed swgpu database"), "db_open: %s",
          swgpu_last_error());
}

/* records and lines that cross the reader's buffer, and a line longer than it */
static void test_large(void)
{
    const char *path = tmp("large.fa");
    FILE *fp = fopen(path, "w");
    uint64_t seed = 7, total = 0, sum = 0;
    const char *aa = "ACDEFGHIKLMNPQRSTVWY";
    size_t nrec = 120000;
    for (size_t i = 0; i < nrec; i++) {
        size_t len = 1 + tap_rand(&seed) % 120;
        fprintf(fp, ">r%zu some description\n", i);
        for (size_t j = 0; j < len; j++) {
            int c = aa[tap_rand(&seed) % 20];
            sum += (uint64_t)swgpu_encode(SWGPU_PROTEIN, c) * (j + 1);
            fputc(c, fp);
            if (j % 50 == 49) fputc('\n', fp);
        }
        fputc('\n', fp);
        total += len;
    }
    size_t big = 9u << 20; /* one 9 MiB line */
    fprintf(fp, ">big\n");
    for (size_t j = 0; j < big; j++) fputc(aa[j % 20], fp);
    fputc('\n', fp);
    fclose(fp);
    swgpu_seqset_t *s = NULL;
    swgpu_read_info_t info;
    int rc = swgpu_seqset_read(path, SWGPU_PROTEIN, &s, &info);
    CHECK_EQ_INT(rc, 0);
    if (rc) return;
    CHECK_EQ_INT(swgpu_seqset_size(s), nrec + 1);
    CHECK_EQ_INT(info.n_residues, total + big);
    CHECK_EQ_INT(info.max_len, big);
    uint64_t sum2 = 0;
    for (size_t i = 0; i < nrec; i++) {
        swgpu_seq_t q;
        swgpu_seqset_get(s, i, &q);
        for (size_t j = 0; j < q.len; j++) sum2 += (uint64_t)q.res[j] * (j + 1);
    }
    CHECK_EQ_INT(sum2, sum);
    CHECK_EQ_STR(tl_id_of(s, nrec - 1), "r119999");
    CHECK_EQ_STR(tl_desc_of(s, nrec - 1), "some description");
    swgpu_seq_t q;
    swgpu_seqset_get(s, nrec, &q);
    CHECK(q.len == big && q.res[big - 1] == swgpu_encode(SWGPU_PROTEIN, aa[(big - 1) % 20]), "big record");
    swgpu_seqset_destroy(s);
    unlink(path);
}

/* Host memory on huge inputs (made here, removed after): a 200 MiB
 * sequence on one line and a 10 MiB header line are read exactly; a
 * makedb database of the long sequence maps back the same. */
static void test_huge(void)
{
    const char *aa = "ACDEFGHIKLMNPQRSTVWY";
    const size_t big = (size_t)200 << 20, hdr = (size_t)10 << 20, chunk = (size_t)1 << 20;
    char *buf = malloc(chunk);
    FILE *fp = fopen(tmp("huge.fa"), "w");
    if (!buf || !fp) {
        CHECK(0, "huge: cannot write %s", tmp("huge.fa"));
        free(buf);
        if (fp) fclose(fp);
        return;
    }
    fputs(">huge one line of 200 MiB\n", fp);
    for (size_t done = 0; done < big; done += chunk) {
        size_t off = done % 20; /* the period of 20 goes on across chunks */
        for (size_t j = 0; j < chunk; j++) buf[j] = aa[(off + j) % 20];
        fwrite(buf, 1, chunk, fp);
    }
    fputs("\n>tiny\nMKV\n", fp);
    CHECK(fclose(fp) == 0, "huge: writing %s failed", tmp("huge.fa"));

    swgpu_seqset_t *s = NULL;
    swgpu_read_info_t info;
    int rc = swgpu_seqset_read(tmp("huge.fa"), SWGPU_AUTO, &s, &info);
    CHECK(rc == 0, "200 MiB line: %s", swgpu_last_error());
    if (rc == 0) {
        swgpu_seq_t q;
        size_t wrong = 0;
        uint8_t code[20];
        for (int k = 0; k < 20; k++) code[k] = (uint8_t)swgpu_encode(SWGPU_PROTEIN, aa[k]);
        CHECK_EQ_INT(swgpu_seqset_alphabet(s), SWGPU_PROTEIN);
        CHECK_EQ_INT(swgpu_seqset_size(s), 2);
        CHECK_EQ_INT(info.max_len, big);
        CHECK_EQ_INT(info.n_residues, big + 3);
        swgpu_seqset_get(s, 0, &q);
        CHECK_EQ_INT(q.len, big);
        for (size_t j = 0; j < q.len; j++) wrong += q.res[j] != code[j % 20];
        CHECK_EQ_INT(wrong, 0);
        CHECK_EQ_STR(q.id, "huge");
        CHECK_EQ_STR(tl_id_of(s, 1), "tiny");
        CHECK_EQ_STR(tl_letters(s, 1), "MKV");

        /* through a makedb file, memory-mapped back */
        swgpu_db_t *db = NULL, *back = NULL;
        CHECK(swgpu_db_from_seqset(s, &db) == 0 && swgpu_db_write(db, tmp("huge.swdb")) == 0,
              "huge makedb: %s", swgpu_last_error());
        swgpu_db_destroy(db);
        swgpu_seqset_destroy(s);
        s = NULL;
        rc = swgpu_db_open(tmp("huge.swdb"), SWGPU_AUTO, &back, NULL);
        CHECK(rc == 0, "huge makedb open: %s", swgpu_last_error());
        if (rc == 0) {
            swgpu_seq_t t;
            CHECK_EQ_INT(swgpu_db_max_len(back), big);
            swgpu_db_get(back, 0, &t);
            CHECK(t.len == big && t.res[0] == code[0] && t.res[big - 1] == code[(big - 1) % 20] &&
                      !strcmp(t.id, "huge"),
                  "huge makedb: sequence 0 of %zu residues, id %s", t.len, t.id);
        }
        swgpu_db_destroy(back);
    }
    swgpu_seqset_destroy(s);
    unlink(tmp("huge.fa"));
    unlink(tmp("huge.swdb"));

    /* a 10 MiB header line: the id is its first word, the rest the description */
    fp = fopen(tmp("hdr.fa"), "w");
    fputs(">h1 ", fp);
    for (size_t done = 0; done < hdr; done += chunk) {
        memset(buf, 'd', chunk);
        fwrite(buf, 1, chunk, fp);
    }
    fputs("\nMKVLAAG\n>", fp);
    memset(buf, 'i', chunk);
    for (size_t done = 0; done < hdr; done += chunk) fwrite(buf, 1, chunk, fp);
    fputs(" short\nACDE\n", fp);
    CHECK(fclose(fp) == 0, "huge: writing %s failed", tmp("hdr.fa"));
    rc = swgpu_seqset_read(tmp("hdr.fa"), SWGPU_PROTEIN, &s, &info);
    CHECK(rc == 0, "10 MiB header: %s", swgpu_last_error());
    if (rc == 0) {
        const char *d = tl_desc_of(s, 0), *id = tl_id_of(s, 1);
        CHECK_EQ_INT(swgpu_seqset_size(s), 2);
        CHECK_EQ_STR(tl_id_of(s, 0), "h1");
        CHECK(strlen(d) == hdr && d[0] == 'd' && d[hdr - 1] == 'd', "10 MiB description: %zu bytes",
              strlen(d));
        CHECK(strlen(id) == hdr && id[0] == 'i' && id[hdr - 1] == 'i', "10 MiB id: %zu bytes",
              strlen(id));
        CHECK_EQ_STR(tl_desc_of(s, 1), "short");
        CHECK_EQ_STR(tl_letters(s, 0), "MKVLAAG");
        CHECK_EQ_STR(tl_letters(s, 1), "ACDE");
    }
    swgpu_seqset_destroy(s);
    unlink(tmp("hdr.fa"));
    free(buf);
}

static void test_create_add(void)
{
    swgpu_seqset_t *s = NULL;
    CHECK_EQ_INT(swgpu_seqset_create(SWGPU_AUTO, &s), 0);
    CHECK_EQ_INT(swgpu_seqset_add(s, "q1", NULL, "acgtnacgta", 10), 0);
    CHECK_EQ_INT(swgpu_seqset_alphabet(s), SWGPU_DNA);
    CHECK_EQ_INT(swgpu_seqset_add(s, "q2", "second", "ACGEX", 5), 0);
    CHECK_EQ_INT(swgpu_seqset_add(s, "q3", NULL, "", 0), 0);
    CHECK_EQ_INT(swgpu_seqset_size(s), 3);
    CHECK_EQ_INT(swgpu_seqset_residues(s), 15);
    CHECK_EQ_STR(tl_letters(s, 0), "ACGTNACGTA");
    CHECK_EQ_STR(tl_letters(s, 1), "ACGNN");
    CHECK_EQ_STR(tl_desc_of(s, 1), "second");
    CHECK_EQ_STR(tl_id_of(s, 2), "q3");
    CHECK_EQ_STR(tl_desc_of(s, 2), "");
    CHECK_EQ_STR(tl_letters(s, 2), "");
    swgpu_seqset_destroy(s);

    CHECK_EQ_INT(swgpu_seqset_create(SWGPU_PROTEIN, &s), 0);
    for (int i = 0; i < 1000; i++) {
        char id[16];
        snprintf(id, sizeof id, "p%d", i);
        swgpu_seqset_add(s, id, "d", "MKVLW-", 6);
    }
    CHECK_EQ_INT(swgpu_seqset_size(s), 1000);
    CHECK_EQ_STR(tl_id_of(s, 999), "p999");
    CHECK_EQ_STR(tl_letters(s, 999), "MKVLWX");
    swgpu_seqset_destroy(s);
    CHECK_EQ_INT(swgpu_seqset_create((swgpu_alphabet_t)9, &s), SWGPU_EINVAL);
    swgpu_seqset_destroy(NULL);
}

/* an empty (or NULL) id is refused, naming the sequence's number; the set
 * is left as it was */
static void test_add_empty_id(void)
{
    swgpu_seqset_t *s = NULL;
    CHECK_EQ_INT(swgpu_seqset_create(SWGPU_AUTO, &s), 0);
    CHECK_EQ_INT(swgpu_seqset_add(s, "", "x", "TAGCTAGG", 8), SWGPU_EINVAL);
    CHECK_EQ_STR(swgpu_last_error(), "seqset_add: sequence 1: empty id");
    CHECK_EQ_INT(swgpu_seqset_size(s), 0);
    CHECK_EQ_INT(swgpu_seqset_alphabet(s), SWGPU_AUTO);
    CHECK_EQ_INT(swgpu_seqset_add(s, "a", "", "ACGT", 4), 0);
    CHECK_EQ_INT(swgpu_seqset_add(s, "b", "", "ACGT", 4), 0);
    CHECK_EQ_INT(swgpu_seqset_add(s, NULL, "d", "ACGT", 4), SWGPU_EINVAL);
    CHECK_EQ_STR(swgpu_last_error(), "seqset_add: sequence 3: empty id");
    CHECK_EQ_INT(swgpu_seqset_size(s), 2);
    CHECK_EQ_INT(swgpu_seqset_residues(s), 8);
    CHECK_EQ_INT(swgpu_seqset_add(s, "c", "", "ACGT", 4), 0);
    CHECK_EQ_STR(tl_id_of(s, 2), "c");
    swgpu_seqset_destroy(s);
}

static void write_file(const char *path, const void *p, size_t n)
{
    CHECK(tl_spit(path, p, n) == 0, "write %s", path);
}

static void write_str(const char *path, const char *text)
{
    write_file(path, text, strlen(text));
}

/* the bytes of text as one gzip member (*n of them; the caller frees) */
static char *gz_member(const char *text, size_t *n)
{
    write_gz(tmp("member.gz"), text, strlen(text));
    long size = file_size(tmp("member.gz"));
    char *p = malloc(size > 0 ? (size_t)size : 1);
    FILE *fp = fopen(tmp("member.gz"), "rb");
    *n = fp && size > 0 && fread(p, 1, (size_t)size, fp) == (size_t)size ? (size_t)size : 0;
    if (fp) fclose(fp);
    return p;
}

/* reading path fails with status st and exactly the message want (printf
 * format, the path its first argument) */
static void expect_msg(const char *path, int st, const char *want, ...)
{
    char w[1024], fmt[1024];
    va_list ap;
    snprintf(fmt, sizeof fmt, "%s", want);
    va_start(ap, want);
    vsnprintf(w, sizeof w, fmt, ap);
    va_end(ap);
    swgpu_seqset_t *s = (swgpu_seqset_t *)1;
    int rc = swgpu_seqset_read(path, SWGPU_AUTO, &s, NULL);
    CHECK(rc == st && s == NULL, "%s: status %d, expected %d", path, rc, st);
    CHECK_EQ_STR(swgpu_last_error(), w);
}

/* path reads as n records "id=letters" (ids and letters as given) */
static void expect_records(const char *path, size_t n, const char *const *want)
{
    swgpu_seqset_t *s = NULL;
    int rc = swgpu_seqset_read(path, SWGPU_PROTEIN, &s, NULL);
    CHECK(rc == 0, "%s: %s", path, swgpu_last_error());
    if (rc) return;
    CHECK_EQ_INT(swgpu_seqset_size(s), n);
    for (size_t i = 0; i < n && i < swgpu_seqset_size(s); i++) {
        char got[16384 + 512];
        snprintf(got, sizeof got, "%s=%s", tl_id_of(s, i), tl_letters(s, i));
        CHECK_EQ_STR(got, want[i]);
    }
    swgpu_seqset_destroy(s);
}

/* gzip: members one after another are read; data after the last member
 * that is not gzip is an error naming its offset; zero padding is ignored
 * with a warning */
static void test_gzip_trailing(void)
{
    size_t na, nb;
    char *a = gz_member(">a\nMKVL\n", &na), *b = gz_member(">b\nWWW\n", &nb);
    char *buf = malloc(na + nb + 64);
    const char *both[] = {"a=MKVL", "b=WWW"}, *one[] = {"a=MKVL"};
    memcpy(buf, a, na);
    memcpy(buf + na, b, nb);
    write_file(tmp("two.gz"), buf, na + nb);
    expect_records(tmp("two.gz"), 2, both);
    memcpy(buf + na, "junk\n", 5);
    write_file(tmp("junk.gz"), buf, na + 5);
    expect_msg(tmp("junk.gz"), SWGPU_EFORMAT, "file %s: data after the end of the gzip stream is "
               "not gzip (byte %zu of the file)", tmp("junk.gz"), na + 1);
    memcpy(buf + na, ">c\nMKV\n", 7); /* plain FASTA appended to a gzip file */
    write_file(tmp("plus.gz"), buf, na + 7);
    expect_msg(tmp("plus.gz"), SWGPU_EFORMAT, "file %s: data after the end of the gzip stream is "
               "not gzip (byte %zu of the file)", tmp("plus.gz"), na + 1);
    buf[na] = 0x1f; /* half a gzip magic at the end */
    write_file(tmp("plus.gz"), buf, na + 1);
    expect_msg(tmp("plus.gz"), SWGPU_EFORMAT, "file %s: data after the end of the gzip stream is "
               "not gzip (byte %zu of the file)", tmp("plus.gz"), na + 1);
    memset(buf + na, 0, 16);
    write_file(tmp("zeros.gz"), buf, na + 16);
    nlog = 0;
    expect_records(tmp("zeros.gz"), 1, one);
    char w[1024];
    snprintf(w, sizeof w, "file %s: 16 zero bytes after the end of the gzip stream (from byte %zu) "
             "ignored", tmp("zeros.gz"), na + 1);
    CHECK_EQ_INT(nlog, 1);
    CHECK_EQ_STR(lastlog, w);
    buf[na + 16] = 'x';
    write_file(tmp("zeros.gz"), buf, na + 17);
    expect_msg(tmp("zeros.gz"), SWGPU_EFORMAT, "file %s: data after the end of the gzip stream is "
               "not gzip (byte %zu of the file)", tmp("zeros.gz"), na + 17);
    /* the same from a descriptor (standard input) */
    memcpy(buf + na, "junk\n", 5);
    write_file(tmp("junk.gz"), buf, na + 5);
    int fd = open(tmp("junk.gz"), O_RDONLY);
    swgpu_seqset_t *s = NULL;
    CHECK_EQ_INT(swgpu_seqset_read_fd(fd, "(standard input)", SWGPU_AUTO, &s, NULL), SWGPU_EFORMAT);
    snprintf(w, sizeof w, "file (standard input): data after the end of the gzip stream is not "
             "gzip (byte %zu of the file)", na + 1);
    CHECK_EQ_STR(swgpu_last_error(), w);
    close(fd);
    free(a);
    free(b);
    free(buf);
}

/* a FASTQ record after FASTA records is read as FASTQ; ';' lines are
 * comments; an empty id is an error naming the record */
static void test_mixed_comments_ids(void)
{
    static const char mix[] = ">a\nMKVL\n@r1 read\nACDE\n+\nIIII\n>b\nWW\n";
    const char *mixed[] = {"a=MKVL", "r1=ACDE", "b=WW"};
    write_file(tmp("mix.fa"), mix, sizeof mix - 1);
    expect_records(tmp("mix.fa"), 3, mixed);
    static const char cm[] = ";old-style comment\n>a x\n;inside\nMKV\n;again\nLW\n\n;between\n>b\nWW\n";
    const char *comments[] = {"a=MKVLW", "b=WW"};
    write_file(tmp("comm.fa"), cm, sizeof cm - 1);
    expect_records(tmp("comm.fa"), 2, comments);
    static const char fq[] = "@q\nACDE\n+\n;;;;\n"; /* ';' is a quality character */
    const char *fastq[] = {"q=ACDE"};
    write_file(tmp("semi.fq"), fq, sizeof fq - 1);
    expect_records(tmp("semi.fq"), 1, fastq);
    write_str(tmp("noid.fa"), ">\nMKV\n");
    expect_msg(tmp("noid.fa"), SWGPU_EFORMAT, "file %s, line 1: record 1 has an empty id (nothing "
               "after '>')", tmp("noid.fa"));
    write_str(tmp("noid.fa"), ">a\nMKV\n> \t \nMKV\n");
    expect_msg(tmp("noid.fa"), SWGPU_EFORMAT, "file %s, line 3: record 2 has an empty id (nothing "
               "after '>')", tmp("noid.fa"));
    write_str(tmp("noid.fa"), "@\nACGT\n+\nIIII\n");
    expect_msg(tmp("noid.fa"), SWGPU_EFORMAT, "file %s, line 1: record 1 has an empty id (nothing "
               "after '@')", tmp("noid.fa"));
}

/* CR-only line ends are named; CRLF (even CR CR LF) still reads */
static void test_cr_only(void)
{
    write_str(tmp("cr.fa"), ">a\rMKV\r>b\rWW\r");
    expect_msg(tmp("cr.fa"), SWGPU_EFORMAT, "file %s, line 1: CR-only line ends (a carriage return "
               "without a line feed): convert the line ends, e.g. tr '\\r' '\\n'", tmp("cr.fa"));
    write_str(tmp("cr.fa"), ">a\nMKV\rLLL\n");
    expect_msg(tmp("cr.fa"), SWGPU_EFORMAT, "file %s, line 2: CR-only line ends (a carriage return "
               "without a line feed): convert the line ends, e.g. tr '\\r' '\\n'", tmp("cr.fa"));
    const char *crcrlf[] = {"a=MKV"};
    write_str(tmp("cr.fa"), ">a\r\r\nMKV\r\n");
    expect_records(tmp("cr.fa"), 1, crcrlf);
}

/* An endless stream stops with SWGPU_EBUDGET as the reading crosses its
 * limit (swgpu__set_read_limit, else SWGPU_READ_LIMIT) */
static void test_read_limit(void)
{
    int fds[2];
    CHECK(pipe(fds) == 0, "pipe");
    pid_t pid = fork();
    if (pid == 0) { /* the writer: one record, lines of 60 residues, forever */
        static char chunk[61 * 1000];
        close(fds[0]);
        for (size_t i = 0; i < sizeof chunk; i++) chunk[i] = i % 61 == 60 ? '\n' : 'A';
        if (write(fds[1], ">endless\n", 9) != 9) _exit(0);
        while (write(fds[1], chunk, sizeof chunk) > 0)
            ;
        _exit(0);
    }
    close(fds[1]);
    swgpu_seqset_t *s = NULL;
    swgpu__set_read_limit(16u << 20);
    int rc = swgpu_seqset_read_fd(fds[0], "endless", SWGPU_AUTO, &s, NULL);
    swgpu__set_read_limit(0);
    close(fds[0]);
    waitpid(pid, NULL, 0);
    CHECK_EQ_INT(rc, SWGPU_EBUDGET);
    const char *msg = swgpu_last_error(), *end = strchr(msg, ':');
    static const char tail[] = ": more than 16777216 bytes held while reading (the limit for "
                               "reading: SWGPU_READ_LIMIT, by default half of the physical memory)";
    unsigned long line = 0;
    CHECK(sscanf(msg, "file endless, line %lu", &line) == 1 && end && !strcmp(end, tail), "%s", msg);
    /* stopped as it crossed: fewer residues read than the limit, and not
     * far below it (the buffers of the reading, 5 MiB here, count too) */
    CHECK(line * 60 <= (16u << 20) && line * 60 >= (10u << 20), "stopped at line %lu", line);
    /* SWGPU_READ_LIMIT: a size, or an error */
    const char *ok[] = {"a=MKVL"};
    write_str(tmp("small.fa"), ">a\nMKVL\n");
    setenv("SWGPU_READ_LIMIT", "12Q", 1);
    expect_msg(tmp("small.fa"), SWGPU_EINVAL, "SWGPU_READ_LIMIT: '12Q' is not a size (bytes, or "
               "with a suffix K, M, G or T)");
    setenv("SWGPU_READ_LIMIT", "64K", 1); /* below the buffers of any reading */
    expect_msg(tmp("small.fa"), SWGPU_EBUDGET, "file %s, line 1: more than 65536 bytes held while "
               "reading (the limit for reading: SWGPU_READ_LIMIT, by default half of the physical "
               "memory)", tmp("small.fa"));
    setenv("SWGPU_READ_LIMIT", "1G", 1);
    expect_records(tmp("small.fa"), 1, ok);
    unsetenv("SWGPU_READ_LIMIT");
}

int main(void)
{
    datadir = tl_datadir();
    snprintf(tmpdir, sizeof tmpdir, "/tmp/swgpu_test_seqio.XXXXXX");
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    swgpu_set_logger(logger, NULL, SWGPU_LOG_WARN);
    test_alphabet();
    test_multi();
    test_crlf_fastq();
    test_alphabets();
    test_empty_records();
    test_bad_input();
    test_large();
    test_huge();
    test_create_add();
    test_add_empty_id();
    test_gzip_trailing();
    test_mixed_comments_ids();
    test_cr_only();
    test_read_limit();
    const char *names[] = {"multi.bin", "empty.gz", "full.gz", "cut.gz", "bad.gz", "db.swdb",
                           "db.swdb.gz", "member.gz", "two.gz", "junk.gz", "plus.gz", "zeros.gz",
                           "mix.fa", "comm.fa", "semi.fq", "noid.fa", "cr.fa", "small.fa"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) unlink(tmp(names[i]));
    rmdir(tmpdir);
    return tap_done();
}
