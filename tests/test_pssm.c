/*
 * test_pssm.c - PSSM queries: the psiblast ASCII reader
 * (tests/data/q104.pssm: values, id, residues, the columns of B Z X U O J *
 * at computed and uncomputed positions, gzip, CRLF) and every parse error;
 * swgpu_pssm_create and its errors.
 */
#include "swgpu.h"
#include "tap.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#ifndef DATA
#define DATA "tests/data/"
#endif

/* --------------------------------------------------------- the reader */

/* write text to a temporary file; its path */
static const char *tmp_file(const char *name, const char *text, size_t len)
{
    static char path[256];
    snprintf(path, sizeof path, "/tmp/swgpu_test_pssm_%ld_%s", (long)getpid(), name);
    FILE *fp = fopen(path, "wb");
    if (fp) {
        fwrite(text, 1, len, fp);
        fclose(fp);
    }
    return path;
}

static void test_read_fixture(void)
{
    swgpu_pssm_t *p = NULL, *pz = NULL;
    const char *want_res =
        "MSKEVKRVLFKISGESLATNEDGSNRIDEIQLSRLVGELRDVRKCGVEVAVVVGGGNIIRGLDQQKMLQINRVSADQMGMLATLINGMAL"
        "SDALKADNIPCLLTSTLSCPQLAELYTPQKSSEALKQGKILICTTGAGSPYLTTDTGAALRACELNVDVLFKATMHVDGVYDKDPRVDKD"
        "AVRYDAITFKDFLSQQLGVMDPAAISLCMEANIPIRVFNFAKHSLKEVLLNEYVGTLIHSGEDA";
    /* row 1 (M) and row 242 (E, a position psiblast computed from nothing
     * observed) as the file has them */
    static const int row1[20] = {-1, -1, -2, -3, -2, 0, -2, -3, -2, 1, 2, -1, 6, 0, -3, -2, -1, -2, -1, 1};
    static const int row242[20] = {-1, 0, 0, 1, -4, 2, 5, -2, 0, -3, -3, 1, -2, -3, -1, 0, -1, -3, -2, -2};
    enum { B = 20, Z = 21, X = 22, STAR = 23, J = 24, U = 25, O = 26 };

    CHECK_EQ_INT(swgpu_pssm_read(DATA "q104.pssm", &p), SWGPU_OK);
    if (!p) {
        fprintf(stderr, "%s\n", swgpu_last_error());
        return;
    }
    CHECK_EQ_INT(swgpu_pssm_length(p), 244);
    CHECK_EQ_STR(swgpu_pssm_id(p), "q104");
    CHECK_EQ_STR(swgpu_pssm_residues(p), want_res);
    for (int c = 0; c < 20; c++) {
        CHECK_EQ_INT(swgpu_pssm_score(p, 0, (uint8_t)c), row1[c]);
        CHECK_EQ_INT(swgpu_pssm_score(p, 241, (uint8_t)c), row242[c]);
    }
    /* the columns psiblast gives residues without one of their own */
    CHECK_EQ_INT(swgpu_pssm_score(p, 0, X), -1);
    CHECK_EQ_INT(swgpu_pssm_score(p, 0, STAR), -4);
    CHECK_EQ_INT(swgpu_pssm_score(p, 0, B), SWGPU_PSSM_FORBIDDEN);
    CHECK_EQ_INT(swgpu_pssm_score(p, 0, Z), SWGPU_PSSM_FORBIDDEN);
    CHECK_EQ_INT(swgpu_pssm_score(p, 0, J), SWGPU_PSSM_FORBIDDEN);
    CHECK_EQ_INT(swgpu_pssm_score(p, 0, U), SWGPU_PSSM_FORBIDDEN);
    CHECK_EQ_INT(swgpu_pssm_score(p, 0, O), SWGPU_PSSM_FORBIDDEN);
    CHECK_EQ_INT(swgpu_pssm_score(p, 241, X), -1);
    CHECK_EQ_INT(swgpu_pssm_score(p, 241, STAR), -4);
    CHECK_EQ_INT(swgpu_pssm_score(p, 241, B), 1);  /* BLOSUM62 E-B */
    CHECK_EQ_INT(swgpu_pssm_score(p, 241, Z), 4);  /* E-Z */
    CHECK_EQ_INT(swgpu_pssm_score(p, 241, J), -3); /* E-J */
    CHECK_EQ_INT(swgpu_pssm_score(p, 241, U), -1);
    CHECK_EQ_INT(swgpu_pssm_score(p, 241, O), -1);
    CHECK_EQ_INT(swgpu_pssm_score(p, 100, 27), SWGPU_PSSM_FORBIDDEN); /* outside the alphabet */
    CHECK_EQ_INT(swgpu_pssm_score(p, 244, 0), SWGPU_PSSM_FORBIDDEN);  /* out of range */
    CHECK_EQ_INT(swgpu_pssm_score(p, 0, 32), SWGPU_PSSM_FORBIDDEN);
    CHECK_EQ_INT(swgpu_pssm_min(p), SWGPU_PSSM_FORBIDDEN);
    CHECK_EQ_INT(swgpu_pssm_max(p), 8);

    /* the same file gzip-compressed, and with CRLF line ends */
    CHECK_EQ_INT(swgpu_pssm_read(DATA "psiblast/q104.pssm.gz", &pz), SWGPU_OK);
    if (pz) {
        int same = swgpu_pssm_length(pz) == 244 && !strcmp(swgpu_pssm_id(pz), "q104");
        for (size_t i = 0; same && i < 244; i++)
            for (int c = 0; c < SWGPU_NCODES; c++)
                same &= swgpu_pssm_score(pz, i, (uint8_t)c) == swgpu_pssm_score(p, i, (uint8_t)c);
        CHECK(same, "q104.pssm.gz differs from q104.pssm");
        swgpu_pssm_destroy(pz);
        pz = NULL;
    }
    {
        FILE *fp = fopen(DATA "q104.pssm", "rb");
        char *text = malloc(1 << 20), *crlf = malloc(2 << 20);
        size_t n = fp ? fread(text, 1, (1 << 20) - 1, fp) : 0, k = 0;
        if (fp) fclose(fp);
        for (size_t i = 0; i < n; i++) {
            if (text[i] == '\n') crlf[k++] = '\r';
            crlf[k++] = text[i];
        }
        CHECK_EQ_INT(swgpu_pssm_read(tmp_file("crlf.pssm", crlf, k), &pz), SWGPU_OK);
        if (pz) {
            int same = swgpu_pssm_length(pz) == 244 && !strcmp(swgpu_pssm_residues(pz), want_res);
            for (size_t i = 0; same && i < 244; i++)
                for (int c = 0; c < SWGPU_NCODES; c++)
                    same &= swgpu_pssm_score(pz, i, (uint8_t)c) == swgpu_pssm_score(p, i, (uint8_t)c);
            CHECK(same, "the CRLF copy differs");
            char id[64];
            snprintf(id, sizeof id, "swgpu_test_pssm_%ld_crlf", (long)getpid());
            CHECK_EQ_STR(swgpu_pssm_id(pz), id);
            swgpu_pssm_destroy(pz);
            pz = NULL;
        }
        unlink(tmp_file("crlf.pssm", "", 0));
        free(text);
        free(crlf);
    }
    swgpu_pssm_destroy(p);
    swgpu_pssm_destroy(NULL);
}

/* a small well-formed file: header of 20 or 40 columns, rows as given */
static const char *hdr20 = "           A  R  N  D  C  Q  E  G  H  I  L  K  M  F  P  S  T  W  Y  V\n";
static const char *hdr40 =
    "           A  R  N  D  C  Q  E  G  H  I  L  K  M  F  P  S  T  W  Y  V   A   R   N   D   C   Q"
    "   E   G   H   I   L   K   M   F   P   S   T   W   Y   V\n";
#define ROW20 " -1 -1 -2 -3 -2  0 -2 -3 -2  1  2 -1  6  0 -3 -2 -1 -2 -1  1"
#define PCT0 "  0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0  0.00 0.00"
#define PCTM "  0 0 0 0 0 0 0 0 0 0 0 0 100 0 0 0 0 0 0 0  0.33 0.01"

static void expect_error(const char *name, const char *text, int want_rc, const char *want_msg)
{
    swgpu_pssm_t *p = NULL;
    const char *path = tmp_file(name, text, strlen(text));
    int rc = swgpu_pssm_read(path, &p);
    CHECK(rc == want_rc && p == NULL && strstr(swgpu_last_error(), want_msg) &&
              strstr(swgpu_last_error(), path),
          "%s: rc %d, message \"%s\", expected %d and \"%s\"", name, rc, swgpu_last_error(), want_rc,
          want_msg);
    swgpu_pssm_destroy(p);
    unlink(path);
}

static void test_read_errors(void)
{
    char buf[4096];
    swgpu_pssm_t *p = NULL;

    expect_error("empty", "", SWGPU_EFORMAT, "empty file");
    expect_error("title", "\nLast position-specific scoring matrix computed\n\n", SWGPU_EFORMAT,
                 "no header line");
    expect_error("fasta", ">q1\nMKV\n", SWGPU_EFORMAT, "no header line");
    snprintf(buf, sizeof buf, "    1 M" ROW20 "\n%s", hdr20);
    expect_error("before", buf, SWGPU_EFORMAT, "line 1: a matrix row before the header");
    expect_error("order", "  A N R D C Q E G H I L K M F P S T W Y V\n", SWGPU_EFORMAT,
                 "line 1: expected the header A R N D C Q E G H I L K M F P S T W Y V (once, or "
                 "twice with the percentages), found 'N' as column 2");
    expect_error("header21", "  A R N D C Q E G H I L K M F P S T W Y V A\n", SWGPU_EFORMAT,
                 "the header has 21 column letters");
    expect_error("header2", "\nLast\n  A R N D C Q E G H I L K M F P S T W Y W\n", SWGPU_EFORMAT,
                 "line 3: expected the header");
    snprintf(buf, sizeof buf, "\ntitle\n%s", hdr20);
    expect_error("norows", buf, SWGPU_EFORMAT, "the matrix has no positions");
    snprintf(buf, sizeof buf, "%s    1 M -1 -1 -2\n", hdr20);
    expect_error("truncated", buf, SWGPU_EFORMAT,
                 "line 2: position 1 has 4 values after its number, expected 21");
    snprintf(buf, sizeof buf, "%s    1 M" ROW20 "  0\n", hdr20);
    expect_error("extra", buf, SWGPU_EFORMAT, "has 22 values after its number, expected 21");
    snprintf(buf, sizeof buf, "%s    1 M" ROW20 "\n", hdr40);
    expect_error("nopct", buf, SWGPU_EFORMAT, "expected 43 (the residue, 20 scores, 20 percentages");
    snprintf(buf, sizeof buf, "%s    1 M -1 -1 -2 -3 -2 0 -2 -3 -2 1 2 x1 6 0 -3 -2 -1 -2 -1 1\n",
             hdr20);
    expect_error("nonint", buf, SWGPU_EFORMAT, "line 2: position 1, column 12 ('K'): 'x1' is not an integer");
    snprintf(buf, sizeof buf, "%s    1 M -1 -1 -2 -3 -2 0 -2 -3 -2 1 2 1.5 6 0 -3 -2 -1 -2 -1 1\n",
             hdr20);
    expect_error("decimal", buf, SWGPU_EFORMAT, "'1.5' is not an integer");
    snprintf(buf, sizeof buf, "%s    1 M" ROW20 "\n    3 K" ROW20 "\n", hdr20);
    expect_error("skip", buf, SWGPU_EFORMAT, "line 3: position 3 out of order (expected 2)");
    snprintf(buf, sizeof buf, "%s    1 M" ROW20 "\n    1 K" ROW20 "\n", hdr20);
    expect_error("repeat", buf, SWGPU_EFORMAT, "line 3: position 1 out of order (expected 2)");
    snprintf(buf, sizeof buf, "%s    0 M" ROW20 "\n", hdr20);
    expect_error("zero", buf, SWGPU_EFORMAT, "position 0 out of order (expected 1)");
    snprintf(buf, sizeof buf, "%s    1 1" ROW20 "\n", hdr20);
    expect_error("residue", buf, SWGPU_EFORMAT, "residue '1' is not a protein letter");
    snprintf(buf, sizeof buf, "%s    1 MK" ROW20 "\n", hdr20);
    expect_error("residue2", buf, SWGPU_EFORMAT, "residue 'MK' is not a protein letter");
    snprintf(buf, sizeof buf, "%s    x M" ROW20 "\n", hdr20);
    expect_error("posnum", buf, SWGPU_EFORMAT, "line 2: expected a position number, found 'x'");
    snprintf(buf, sizeof buf, "%s    1 M -1 -1 -2 -3 -2 0 -2 -3 -2 1 2 1001 6 0 -3 -2 -1 -2 -1 1\n",
             hdr20);
    expect_error("range", buf, SWGPU_EFORMAT, "column K: score 1001 out of range (-32768..1000)");
    snprintf(buf, sizeof buf, "%s    1 M -1 -1 -2 -3 -2 0 -2 -3 -2 1 2 -32769 6 0 -3 -2 -1 -2 -1 1\n",
             hdr20);
    expect_error("range2", buf, SWGPU_EFORMAT, "score -32769 out of range");
    snprintf(buf, sizeof buf, "%s    1 M" ROW20 "  0 0 0 0 0 0 0 0 0 0 0 0 101 0 0 0 0 0 0 0  0.3 0.0\n",
             hdr40);
    expect_error("pct", buf, SWGPU_EFORMAT, "percentage 101 of 'M' out of range (0..100)");
    snprintf(buf, sizeof buf, "%s    1 M" ROW20 "  0 0 0 0 0 0 0 0 0 0 0 0 100 0 0 0 0 0 0 0  x 0.0\n",
             hdr40);
    expect_error("info", buf, SWGPU_EFORMAT, "information 'x' is not a number >= 0");
    snprintf(buf, sizeof buf, "%s    1 M" ROW20 "  0 0 0 0 0 0 0 0 0 0 0 0 100 0 0 0 0 0 0 0  0.1 -1\n",
             hdr40);
    expect_error("weight", buf, SWGPU_EFORMAT, "relative weight '-1' is not a number >= 0");
    snprintf(buf, sizeof buf, "%s    1 M" ROW20 "\n\n    2 K" ROW20 "\n", hdr20);
    expect_error("after", buf, SWGPU_EFORMAT,
                 "line 4: a matrix row after the end of the matrix (the blank line 3)");
    snprintf(buf, sizeof buf, "%s    1 M" ROW20 "\n\x01\n", hdr20);
    expect_error("control", buf, SWGPU_EFORMAT, "line 3: control character 0x01");
    {
        /* a NUL byte */
        char bin[64] = "  A R N D\0 C\n";
        const char *path = tmp_file("nul", bin, 14);
        CHECK_EQ_INT(swgpu_pssm_read(path, &p), SWGPU_EFORMAT);
        CHECK(strstr(swgpu_last_error(), "binary data") != NULL, "NUL: %s", swgpu_last_error());
        unlink(path);
    }
    {
        /* a truncated gzip stream */
        snprintf(buf, sizeof buf, "\ntitle\n%s    1 M" ROW20 PCTM "\n    2 K" ROW20 PCT0 "\n\n",
                 hdr40);
        uLongf zn = compressBound((uLong)strlen(buf)) + 32;
        Bytef *z = malloc(zn);
        /* a gzip member: header, raw deflate, trailer (through gzopen) */
        const char *gzpath = tmp_file("whole.gz", "", 0);
        gzFile g = gzopen(gzpath, "wb");
        gzwrite(g, buf, (unsigned)strlen(buf));
        gzclose(g);
        FILE *fp = fopen(gzpath, "rb");
        size_t n = fread(z, 1, zn, fp);
        fclose(fp);
        CHECK_EQ_INT(swgpu_pssm_read(gzpath, &p), SWGPU_OK);
        if (p) {
            CHECK_EQ_INT(swgpu_pssm_length(p), 2);
            CHECK_EQ_STR(swgpu_pssm_residues(p), "MK");
            /* position 2 observed nothing: B from BLOSUM62 (K-B 0); position 1 did */
            CHECK_EQ_INT(swgpu_pssm_score(p, 1, 20), 0);
            CHECK_EQ_INT(swgpu_pssm_score(p, 0, 20), SWGPU_PSSM_FORBIDDEN);
            swgpu_pssm_destroy(p);
            p = NULL;
        }
        unlink(gzpath);
        const char *cut = tmp_file("cut.gz", (const char *)z, n - 12);
        CHECK_EQ_INT(swgpu_pssm_read(cut, &p), SWGPU_EFORMAT);
        CHECK(strstr(swgpu_last_error(), "gzip") != NULL, "cut gzip: %s", swgpu_last_error());
        unlink(cut);
        free(z);
    }
    CHECK_EQ_INT(swgpu_pssm_read("/nonexistent/q.pssm", &p), SWGPU_EIO);
    CHECK(strstr(swgpu_last_error(), "/nonexistent/q.pssm") != NULL, "missing: %s", swgpu_last_error());
    CHECK_EQ_INT(swgpu_pssm_read(NULL, &p), SWGPU_EINVAL);
    CHECK_EQ_INT(swgpu_pssm_read(DATA "q104.pssm", NULL), SWGPU_EINVAL);

    /* 20 columns only: every position counts as computed; the id drops the
     * extension only; lower-case residues are read */
    snprintf(buf, sizeof buf, "%s    1 m" ROW20 "\n    2 E" ROW20 "\n\nK Lambda\n", hdr20);
    {
        const char *path = tmp_file("two.rows.pssm", buf, strlen(buf));
        CHECK_EQ_INT(swgpu_pssm_read(path, &p), SWGPU_OK);
        if (p) {
            CHECK_EQ_STR(swgpu_pssm_residues(p), "ME");
            CHECK(strstr(swgpu_pssm_id(p), "two.rows") && !strstr(swgpu_pssm_id(p), ".pssm"),
                  "id %s", swgpu_pssm_id(p));
            CHECK_EQ_INT(swgpu_pssm_score(p, 1, 20), SWGPU_PSSM_FORBIDDEN);
            CHECK_EQ_INT(swgpu_pssm_score(p, 1, 12), 6);
            swgpu_pssm_destroy(p);
            p = NULL;
        }
        unlink(path);
    }
}

static void test_create(void)
{
    swgpu_pssm_t *p = NULL;
    int32_t s[3 * 20];
    for (int i = 0; i < 60; i++) s[i] = (i % 20) - 5;
    s[20 + 7] = 30; /* position 2: G is best */
    s[40 + 3] = 14; /* position 3: D and W tie at 14: D comes first */
    s[40 + 17] = 14;
    CHECK_EQ_INT(swgpu_pssm_create("x", NULL, s, 3, &p), SWGPU_OK);
    if (p) {
        CHECK_EQ_STR(swgpu_pssm_residues(p), "VGD"); /* position 1: V (14) */
        CHECK_EQ_STR(swgpu_pssm_id(p), "x");
        CHECK_EQ_INT(swgpu_pssm_score(p, 1, 7), 30);
        CHECK_EQ_INT(swgpu_pssm_score(p, 2, 22), -1);
        CHECK_EQ_INT(swgpu_pssm_score(p, 2, 23), -4);
        CHECK_EQ_INT(swgpu_pssm_score(p, 0, 25), SWGPU_PSSM_FORBIDDEN);
        CHECK_EQ_INT(swgpu_pssm_max(p), 30);
        CHECK_EQ_INT(swgpu_pssm_min(p), SWGPU_PSSM_FORBIDDEN);
        swgpu_pssm_destroy(p);
        p = NULL;
    }
    CHECK_EQ_INT(swgpu_pssm_create(NULL, "akx", s, 3, &p), SWGPU_OK);
    if (p) {
        CHECK_EQ_STR(swgpu_pssm_residues(p), "AKX");
        CHECK_EQ_STR(swgpu_pssm_id(p), "");
        swgpu_pssm_destroy(p);
        p = NULL;
    }
    CHECK_EQ_INT(swgpu_pssm_create("x", "AK1", s, 3, &p), SWGPU_EINVAL);
    CHECK(strstr(swgpu_last_error(), "position 3: residue '1'") != NULL, "%s", swgpu_last_error());
    CHECK_EQ_INT(swgpu_pssm_create("x", NULL, s, 0, &p), SWGPU_EINVAL);
    CHECK_EQ_INT(swgpu_pssm_create("x", NULL, NULL, 3, &p), SWGPU_EINVAL);
    CHECK_EQ_INT(swgpu_pssm_create("x", NULL, s, 3, NULL), SWGPU_EINVAL);
    s[25] = 1001;
    CHECK_EQ_INT(swgpu_pssm_create("x", NULL, s, 3, &p), SWGPU_EINVAL);
    CHECK(strstr(swgpu_last_error(), "position 2, column Q: score 1001") != NULL, "%s",
          swgpu_last_error());
    s[25] = -32769;
    CHECK_EQ_INT(swgpu_pssm_create("x", NULL, s, 3, &p), SWGPU_EINVAL);
    s[25] = SWGPU_PSSM_FORBIDDEN;
    CHECK_EQ_INT(swgpu_pssm_create("x", NULL, s, 3, &p), SWGPU_OK);
    swgpu_pssm_destroy(p);
    CHECK(p != NULL, "a forbidden score is a valid score");
    CHECK_EQ_INT(swgpu_pssm_length(NULL), 0);
    CHECK_EQ_STR(swgpu_pssm_id(NULL), "");
}

int main(void)
{
    test_read_fixture();
    test_read_errors();
    test_create();
    return tap_done();
}
