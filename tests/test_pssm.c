/*
 * test_pssm.c - PSSM queries.
 *
 *  - the psiblast ASCII reader (tests/data/q104.pssm: values, id, residues,
 *    the columns of B Z X U O J * at computed and uncomputed positions,
 *    gzip, CRLF) and every parse error; swgpu_pssm_create and its errors;
 *  - (a) a PSSM made of BLOSUM62's rows for a query's residues gives exactly
 *    the plain search of that query (subjects of the 20 standard letters):
 *    scores of the reference and CPU engines (every instruction set, 1 and 2
 *    threads, scan and scan_many), and swgpu_search_pssm against
 *    swgpu_search: hits, E-values, alignments; long queries (several bands
 *    and 8-bit units), sparse databases, and rows scaled so that the 8- and
 *    16-bit phases saturate and targets are rescored wider;
 *  - (b) random PSSMs (with psiblast's forbidden scores) against the
 *    independent scorer below on every engine path and instruction set,
 *    including the 8-bit phase's clamp of low scores, and their hit
 *    alignments (begin, end, CIGAR rescored here);
 *  - (c) psiblast's own PSSM of one query and subjects with B, Z, X, U, O, J
 *    and '*' (tests/data/pssm_subjects.fa): psiblast's raw scores;
 *  - (d) when the shared benchmark data is present ($SWGPU_TEST_DATA, default
 *    ../shared/data, beside the checkout): psiblast's PSSMs of queries250 records 101-110
 *    against uniprot20k (tests/data/psiblast/README.md): every subject
 *    psiblast reports is a hit, with a raw score >= psiblast's and equal to
 *    the exact score.
 */
#include "psi/psi.h"
#include "cpu/cpu.h"
#include "tap.h"
#include "testlib.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#ifndef DATA
#define DATA "tests/data/"
#endif

/* ------------------------------------------------------- the oracle */

/*
 * The independent scorer: Gotoh's local recurrence with 64-bit values over
 * a full score table rows[i * 32 + c] (query position i, subject code c),
 * H, E (gap in the subject's direction) and F (the query's) kept per query
 * position, one subject residue at a time.  A gap of length k costs
 * go + k * ge.
 */
static int64_t oracle(const int32_t *rows, size_t m, const uint8_t *t, size_t n, int go, int ge)
{
    const int64_t NEG = INT64_MIN / 4;
    int64_t *H = malloc((m + 1) * sizeof *H), *E = malloc((m + 1) * sizeof *E), best = 0;
    for (size_t i = 0; i <= m; i++) {
        H[i] = 0;
        E[i] = NEG;
    }
    for (size_t j = 1; j <= n; j++) {
        int64_t diag = 0, f = NEG, up = 0; /* H(i-1, j-1), F(i, j), H(i-1, j) */
        for (size_t i = 1; i <= m; i++) {
            int64_t e = E[i] - ge > H[i] - go - ge ? E[i] - ge : H[i] - go - ge;
            int64_t h = diag + rows[(i - 1) * SWGPU_NCODES + t[j - 1]];
            f = f - ge > up - go - ge ? f - ge : up - go - ge;
            if (h < 0) h = 0;
            if (h < e) h = e;
            if (h < f) h = f;
            diag = H[i];
            H[i] = h;
            E[i] = e;
            up = h;
            if (h > best) best = h;
        }
    }
    free(H);
    free(E);
    return best;
}

/* The score of an alignment's CIGAR under rows, recomputed here; -1e18 if it
 * runs off a sequence. */
static int64_t rescore(const swgpu_aln_t *a, const int32_t *rows, size_t m, const uint8_t *t,
                       size_t n, int go, int ge)
{
    int64_t qi = a->qbeg, ti = a->tbeg, sum = 0;
    for (size_t k = 0; k < a->n_cigar; k++) {
        unsigned op = SWGPU_CIGAR_OP(a->cigar[k]);
        int64_t len = SWGPU_CIGAR_LEN(a->cigar[k]);
        if (op == SWGPU_CIGAR_M) {
            if (qi + len > (int64_t)m || ti + len > (int64_t)n) return -1000000000000000000LL;
            for (int64_t x = 0; x < len; x++) sum += rows[(qi + x) * SWGPU_NCODES + t[ti + x]];
            qi += len;
            ti += len;
        } else {
            sum -= go + len * ge;
            if (op == SWGPU_CIGAR_I) qi += len;
            else ti += len;
        }
    }
    if (qi != a->qend || ti != a->tend) return -1000000000000000000LL;
    return sum;
}

/* The full score table of p, through the public accessor. */
static int32_t *rows_of(const swgpu_pssm_t *p)
{
    size_t n = swgpu_pssm_length(p);
    int32_t *r = malloc((n ? n : 1) * SWGPU_NCODES * sizeof *r);
    for (size_t i = 0; i < n; i++)
        for (int c = 0; c < SWGPU_NCODES; c++)
            r[i * SWGPU_NCODES + c] = swgpu_pssm_score(p, i, (uint8_t)c);
    return r;
}

/* ---------------------------------------------------------- fixtures */

static const char *std20 = "ARNDCQEGHILKMFPSTWYV";
static const char *prot27 = "ARNDCQEGHILKMFPSTWYVBZX*JUO";

/* A PSSM of m's rows for the residues of q (letters): position i, column c
 * scores m->s[q[i]][c] * scale. */
static swgpu_pssm_t *pssm_of_matrix(const char *id, const char *q, const swgpu_matrix_t *m,
                                    int scale)
{
    size_t n = strlen(q);
    int32_t *s = malloc(n * 20 * sizeof *s);
    swgpu_pssm_t *p = NULL;
    for (size_t i = 0; i < n; i++) {
        int a = swgpu_encode(SWGPU_PROTEIN, q[i]);
        for (int c = 0; c < 20; c++) s[i * 20 + c] = m->s[a][c] * scale;
    }
    if (swgpu_pssm_create(id, q, s, n, &p) < 0) {
        fprintf(stderr, "pssm_of_matrix: %s\n", swgpu_last_error());
        p = NULL;
    }
    free(s);
    return p;
}

static const swgpu__isa_t isas[] = {SWGPU__ISA_SCALAR, SWGPU__ISA_SSE41, SWGPU__ISA_AVX2,
                                    SWGPU__ISA_AVX512};
#define N_ISAS 4

static swgpu_opts_t opts_of(int go, int ge, int threads)
{
    swgpu_opts_t o;
    swgpu_opts_init(&o, SWGPU_PROTEIN);
    o.gap_open = go;
    o.gap_extend = ge;
    o.threads = threads;
    return o;
}

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

/* A file cut at a row boundary (no blank line after the matrix) is refused
 * naming the last position; swgpu_pssm_write ends the matrix with one even
 * without statistics, so what it writes reads back. */
static void test_cut_at_row(void)
{
    FILE *in = fopen(DATA "q104.pssm", "rb");
    static char text[1 << 20];
    size_t n = in ? fread(text, 1, sizeof text - 1, in) : 0;
    if (in) fclose(in);
    text[n] = 0;
    char *cut = strstr(text, "\n  101 "); /* the line of position 101 */
    CHECK(cut != NULL, "q104.pssm has position 101");
    if (!cut) return;
    swgpu_pssm_t *p = NULL;
    const char *path = tmp_file("cut", text, (size_t)(cut + 1 - text));
    char want[512];
    snprintf(want, sizeof want, "PSSM file %s: the file ends after position 100 without the blank "
             "line that ends the matrix (cut short?)", path);
    CHECK_EQ_INT(swgpu_pssm_read(path, &p), SWGPU_EFORMAT);
    CHECK_EQ_STR(swgpu_last_error(), want);
    CHECK(p == NULL, "NULL on failure");
    unlink(path);
    /* written without statistics (no matrix): read back whole */
    CHECK_EQ_INT(swgpu_pssm_read(DATA "q104.pssm", &p), SWGPU_OK);
    path = tmp_file("nostats", "", 0);
    FILE *fp = fopen(path, "wb");
    CHECK(fp && swgpu_pssm_write(p, NULL, 11, 1, fp) == SWGPU_OK, "write: %s", swgpu_last_error());
    if (fp) fclose(fp);
    swgpu_pssm_t *q = NULL;
    CHECK(swgpu_pssm_read(path, &q) == SWGPU_OK, "read back: %s", swgpu_last_error());
    if (q) CHECK_EQ_INT(swgpu_pssm_length(q), swgpu_pssm_length(p));
    unlink(path);
    swgpu_pssm_destroy(q);
    swgpu_pssm_destroy(p);
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

/* ------------------------------------------------ engines: scan level */

/* Scores of every query against db by engine ops (a CPU engine with isa
 * when ops is NULL), scan() one at a time or scan_many() into out[q * n]. */
typedef struct {
    int32_t *out;
    size_t n;
    long calls;
} many_t;

static int many_sink(void *user, size_t i, const int32_t *scores)
{
    many_t *k = user;
    memcpy(k->out + i * k->n, scores, k->n * sizeof *scores);
    k->calls++;
    return 0;
}

static int engine_scores(const swgpu_engine_ops_t *ops, swgpu__isa_t isa, const swgpu_db_t *db,
                         const swgpu_matrix_t *m, const swgpu_opts_t *o, const swgpu__query_t *qs,
                         size_t nq, int many, int32_t *out, uint64_t *overflows)
{
    void *st = NULL;
    int rc = ops ? ops->create(db, m, o, &st) : swgpu__cpu_engine_create_isa(db, m, o, isa, &st);
    swgpu_scan_stats_t ss = {0, 0, 0};
    if (!ops) ops = &swgpu__engine_cpu;
    if (rc) return rc;
    if (many) {
        many_t k = {out, (size_t)db->n, 0};
        rc = ops->scan_many(st, nq, qs, many_sink, NULL, &k, &ss);
        if (!rc && k.calls != (long)nq) rc = -100;
    } else {
        for (size_t i = 0; i < nq && !rc; i++) rc = ops->scan(st, &qs[i], out + i * db->n, &ss);
    }
    if (overflows) *overflows = ss.overflows;
    ops->destroy(st);
    return rc;
}

/* every engine path on qs against want[q * n]: the reference engine, and
 * each instruction set's CPU engine with 1 and 2 threads, scan and
 * scan_many; returns the least overflow count of the SIMD instruction
 * sets' scans (each rescored that many targets wider) */
static uint64_t check_engines(const char *what, const swgpu_db_t *db, const swgpu_matrix_t *m,
                              int go, int ge, const swgpu__query_t *qs, size_t nq,
                              const int32_t *want, int with_ref)
{
    size_t n = (size_t)db->n;
    int32_t *got = malloc((nq * n + 1) * sizeof *got);
    uint64_t ov = 0, least = UINT64_MAX;
    int top = N_ISAS - 1; /* the best instruction set this CPU has */
    while (top > 0 && !swgpu__cpu_isa_supported(isas[top]))
        top--;
    for (int e = with_ref ? -1 : 0; e < N_ISAS; e++) {
        if (e >= 0 && !swgpu__cpu_isa_supported(isas[e])) {
            char why[200];
            snprintf(why, sizeof why, "%s: this CPU lacks %s", what, swgpu__cpu_isa_name(isas[e]));
            SKIP(4, why);
            continue;
        }
        for (int threads = 1; threads <= 2; threads++)
            for (int many = 0; many <= 1; many++) {
                /* the slow scalar paths once: the reference's scan, the
                 * scalar CPU engine's scan_many, on 2 threads */
                if (e <= 0 && threads == 1) continue;
                if ((e < 0 && many) || (e == 0 && !many)) continue;
                /* ThreadSanitizer: the threaded scans of one instruction set */
                if (tap_tsan() && (threads == 1 || e != top)) continue;
                swgpu_opts_t o = opts_of(go, ge, threads);
                long bad = 0;
                memset(got, 0x55, (nq * n + 1) * sizeof *got);
                int rc = engine_scores(e < 0 ? &swgpu__engine_ref : NULL, e < 0 ? 0 : isas[e], db, m,
                                       &o, qs, nq, many, got, &ov);
                if (e > 0 && ov < least) least = ov;
                for (size_t k = 0; k < nq * n && !rc; k++)
                    if (got[k] != want[k]) {
                        if (bad < 4)
                            fprintf(stderr, "%s %s threads %d %s: query %zu subject %zu: %d, "
                                    "expected %d\n", what, e < 0 ? "ref" : swgpu__cpu_isa_name(isas[e]),
                                    threads, many ? "scan_many" : "scan", k / n, k % n, got[k], want[k]);
                        bad++;
                    }
                CHECK(rc == 0 && bad == 0, "%s: %s threads %d %s: rc %d (%s), %ld wrong scores", what,
                      e < 0 ? "ref" : swgpu__cpu_isa_name(isas[e]), threads,
                      many ? "scan_many" : "scan", rc, rc ? swgpu_last_error() : "", bad);
            }
    }
    free(got);
    return least == UINT64_MAX ? 0 : least;
}

/* ------------------------------------------- (a) BLOSUM62 rows = plain */

/* n queries of lens[] residues (20 letters) and a database of their
 * homologs and random sequences (20 letters), plus `longs` sequences of
 * about 3000 residues */
typedef struct {
    char **q, **d;
    size_t nq, nd;
} world_t;

static void world_make(world_t *w, const size_t *lens, size_t nq, size_t nrand, size_t maxlen,
                       size_t longs, uint64_t *rng)
{
    w->nq = nq;
    w->q = malloc(nq * sizeof *w->q);
    w->nd = 0;
    w->d = malloc((3 * nq + nrand + longs) * sizeof *w->d);
    for (size_t i = 0; i < nq; i++) {
        w->q[i] = malloc(lens[i] + 1);
        tl_rand_letters(rng, w->q[i], lens[i], std20);
        for (int h = 0; h < 3; h++) { /* homologs: close, far, a piece */
            char *s = malloc(2 * lens[i] + 8);
            if (h < 2) {
                tl_mutate_letters(rng, w->q[i], s, SIZE_MAX, h ? 4 : 12, std20);
            } else {
                size_t a = lens[i] / 3, b = lens[i] - a;
                memcpy(s, w->q[i] + a, b - a);
                s[b - a] = 0;
            }
            if (!*s) strcpy(s, "W");
            w->d[w->nd++] = s;
        }
    }
    for (size_t i = 0; i < nrand + longs; i++) {
        size_t len = i < nrand ? 1 + (size_t)(tap_rand(rng) % maxlen) : 2800 + (size_t)(tap_rand(rng) % 400);
        char *s = malloc(len + 1);
        tl_rand_letters(rng, s, len, std20);
        w->d[w->nd++] = s;
    }
}

static void world_free(world_t *w)
{
    for (size_t i = 0; i < w->nq; i++) free(w->q[i]);
    for (size_t i = 0; i < w->nd; i++) free(w->d[i]);
    free(w->q);
    free(w->d);
}

/* identical search results: hits, scores, E-values, alignments; with ps
 * (b's PSSMs), b's parameters, E-values and bit scores are instead those of
 * swgpu_pssm_karlin (psiblast's statistics of a PSSM) when m and o's gaps
 * have published parameters */
static long diff_results(const char *what, const swgpu_search_result_t *a,
                         const swgpu_search_result_t *b, swgpu_pssm_t *const *ps,
                         const swgpu_db_t *db, const swgpu_matrix_t *m, const swgpu_opts_t *o)
{
    long bad = 0;
    if (a->n_queries != b->n_queries) return 1;
    for (size_t i = 0; i < a->n_queries; i++) {
        const swgpu_query_result_t *x = &a->q[i], *y = &b->q[i];
        if (x->n_hits != y->n_hits || x->query != y->query) {
            if (bad++ < 3) fprintf(stderr, "%s: query %zu: %zu hits vs %zu\n", what, i, x->n_hits, y->n_hits);
            continue;
        }
        swgpu_karlin_t kq;
        int pk = ps && swgpu_pssm_karlin(ps[i], m, o->gap_open, o->gap_extend, &kq) == SWGPU_OK;
        if (pk && (y->karlin.K != kq.K || y->karlin.lambda != kq.lambda || !(kq.K != x->karlin.K))) {
            if (bad++ < 3) fprintf(stderr, "%s: query %zu: K %g, PSSM's %g\n", what, i, y->karlin.K, kq.K);
        }
        for (size_t h = 0; h < x->n_hits; h++) {
            const swgpu_hit_t *p = &x->hits[h], *q = &y->hits[h];
            double pe = p->evalue, pb = p->bits;
            if (pk) {
                swgpu_seq_t t;
                swgpu_db_get(db, p->target, &t);
                pe = swgpu_hit_evalue(&kq, o->evalue_model, p->score, swgpu_pssm_length(ps[i]), t.len,
                                      swgpu_db_residues(db), swgpu_db_size(db));
                pb = swgpu_bitscore(&kq, p->score);
            }
            int same = p->target == q->target && p->score == q->score && pe == q->evalue &&
                       pb == q->bits && p->aln.score == q->aln.score && p->aln.qbeg == q->aln.qbeg &&
                       p->aln.qend == q->aln.qend && p->aln.tbeg == q->aln.tbeg &&
                       p->aln.tend == q->aln.tend && p->aln.n_cigar == q->aln.n_cigar &&
                       p->aln.length == q->aln.length && p->aln.n_ident == q->aln.n_ident &&
                       p->aln.n_mismatch == q->aln.n_mismatch && p->aln.n_gapopen == q->aln.n_gapopen &&
                       p->aln.n_gaps == q->aln.n_gaps &&
                       (!p->aln.n_cigar || !memcmp(p->aln.cigar, q->aln.cigar, p->aln.n_cigar * 4));
            if (!same && bad++ < 3)
                fprintf(stderr, "%s: query %zu hit %zu: target %zu/%zu score %d/%d E %g/%g\n", what, i, h,
                        p->target, q->target, p->score, q->score, p->evalue, q->evalue);
        }
    }
    return bad;
}

/* the plain search of w's queries and the PSSM search of their rows of m
 * (scaled) agree on every engine and instruction set; mp: the matrix the
 * plain search scores with (m scaled) */
static void check_blosum_world(const char *what, const world_t *w, const swgpu_matrix_t *m,
                               const swgpu_matrix_t *mp, int scale, int go, int ge, int top_n,
                               uint64_t *ov_out)
{
    swgpu_seqset_t *qs = tl_set_of(SWGPU_PROTEIN, (const char *const *)w->q, w->nq, "q");
    swgpu_db_t *db = tl_db_of(SWGPU_PROTEIN, (const char *const *)w->d, w->nd, "d");
    swgpu_pssm_t **ps = calloc(w->nq, sizeof *ps);
    swgpu__query_t *pq = malloc(w->nq * sizeof *pq), *plain = malloc(w->nq * sizeof *plain);
    size_t n = db ? (size_t)db->n : 0;
    int32_t *want = malloc((w->nq * n + 1) * sizeof *want);
    int ok = qs && db;
    char label[256];

    for (size_t i = 0; ok && i < w->nq; i++) {
        char id[32];
        swgpu_seq_t s;
        snprintf(id, sizeof id, "q%zu", i);
        ps[i] = pssm_of_matrix(id, w->q[i], m, scale);
        swgpu_seqset_get(qs, i, &s);
        plain[i] = swgpu__query_plain(s.res, s.len);
        if (!ps[i]) ok = 0;
        else swgpu__pssm_query(ps[i], &pq[i]);
    }
    CHECK(ok, "%s: fixtures", what);
    if (ok) {
        /* the plain scan of the reference engine is the expectation */
        swgpu_opts_t o = opts_of(go, ge, 2);
        int rc = engine_scores(&swgpu__engine_ref, 0, db, mp, &o, plain, w->nq, 0, want, NULL);
        CHECK(rc == 0, "%s: reference scan: %s", what, swgpu_last_error());
        snprintf(label, sizeof label, "%s, PSSM", what);
        uint64_t ov = check_engines(label, db, m, go, ge, pq, w->nq, want, 1);
        if (ov_out) *ov_out = ov;
        /* the searches: hits, E-values, alignments (the reference backend
         * and the CPU one on each SIMD instruction set; the scalar CPU
         * engine was checked above) */
        int top = N_ISAS - 1; /* ThreadSanitizer: its threaded search only */
        while (top > 0 && !swgpu__cpu_isa_supported(isas[top]))
            top--;
        for (int b = 0; b < 1 + N_ISAS; b++) {
            swgpu_search_result_t *r1 = NULL, *r2 = NULL;
            if (b == 1 || (b > 0 && !swgpu__cpu_isa_supported(isas[b - 1]))) continue;
            if (tap_tsan() && b != top + 1) continue;
            o = opts_of(go, ge, 2);
            o.top_n = top_n;
            o.evalue = 1e30;
            o.backend = b ? SWGPU_BACKEND_CPU : SWGPU_BACKEND_REF;
            if (b) setenv("SWGPU_CPU_ISA", swgpu__cpu_isa_name(isas[b - 1]), 1);
            int rc1 = swgpu_search(qs, db, mp, &o, &r1);
            int rc2 = swgpu_search_pssm((const swgpu_pssm_t *const *)ps, w->nq, db, mp, &o, &r2);
            unsetenv("SWGPU_CPU_ISA");
            snprintf(label, sizeof label, "%s, search %s", what, b ? swgpu__cpu_isa_name(isas[b - 1]) : "ref");
            CHECK(rc1 == 0 && rc2 == 0, "%s: rc %d %d: %s", label, rc1, rc2, swgpu_last_error());
            if (rc1 == 0 && rc2 == 0) {
                size_t hits = 0;
                for (size_t i = 0; i < r2->n_queries; i++) hits += r2->q[i].n_hits;
                CHECK(hits >= w->nq, "%s: only %zu hits", label, hits);
                CHECK(diff_results(label, r1, r2, ps, db, mp, &o) == 0, "%s: plain and PSSM searches differ", label);
            }
            swgpu_search_result_destroy(r1);
            swgpu_search_result_destroy(r2);
        }
    }
    for (size_t i = 0; i < w->nq; i++) swgpu_pssm_destroy(ps[i]);
    free(ps);
    free(pq);
    free(plain);
    free(want);
    swgpu_db_destroy(db);
    swgpu_seqset_destroy(qs);
}

static void test_blosum_rows(void)
{
    uint64_t rng = 17;
    swgpu_matrix_t *b62 = NULL, big, mid;
    world_t w;
    if (swgpu_matrix_builtin("BLOSUM62", &b62)) return;

    /* queries from 1 to 1500 residues (several 8-bit units and pair
     * bands), many at once (scan_many's big and solo queries) */
    {
        static const size_t lens[] = {1, 7, 33, 64, 150, 301, 420, 777, 1030, 1500};
        world_make(&w, lens, 10, 70, 400, 0, &rng);
        check_blosum_world("BLOSUM62 rows", &w, b62, b62, 1, 11, 1, 20, NULL);
        world_free(&w);
    }
    /* a sparse database (a few long sequences: the pair kernel, the PSSM
     * query first) and other gaps */
    {
        static const size_t lens[] = {40, 500, 2600};
        world_make(&w, lens, 3, 0, 10, 3, &rng);
        check_blosum_world("BLOSUM62 rows, sparse", &w, b62, b62, 1, 10, 2, 5, NULL);
        world_free(&w);
    }
    /* rows x 8 (max 88 < 128: the 8-bit phase, which saturates on the
     * homologs) and x 40 (max 440: 16-bit first, saturating to 32 bits) */
    {
        static const size_t lens[] = {90, 640, 1100};
        uint64_t ov = 0;
        mid = *b62;
        big = *b62;
        snprintf(mid.name, sizeof mid.name, "BLOSUM62x8");
        snprintf(big.name, sizeof big.name, "BLOSUM62x40");
        for (int a = 0; a < SWGPU_NCODES; a++)
            for (int b = 0; b < SWGPU_NCODES; b++) {
                mid.s[a][b] = b62->s[a][b] * 8;
                big.s[a][b] = b62->s[a][b] * 40;
            }
        mid.min = b62->min * 8;
        mid.max = b62->max * 8;
        big.min = b62->min * 40;
        big.max = b62->max * 40;
        mid.builtin = big.builtin = 0;
        world_make(&w, lens, 3, 150, 200, 0, &rng);
        check_blosum_world("BLOSUM62 rows x 8", &w, b62, &mid, 8, 40, 8, 8, &ov);
        CHECK(ov > 0, "x 8: nothing rescored wider");
        check_blosum_world("BLOSUM62 rows x 40", &w, b62, &big, 40, 200, 40, 8, &ov);
        CHECK(ov > 0, "x 40: nothing rescored wider");
        world_free(&w);
    }
    swgpu_matrix_destroy(b62);
}

/* ------------------------------------------- (b) random PSSMs, oracle */

static swgpu_pssm_t *random_pssm(const char *id, size_t len, int lo, int hi, uint64_t *rng)
{
    int32_t *s = malloc(len * 20 * sizeof *s);
    swgpu_pssm_t *p = NULL;
    for (size_t k = 0; k < len * 20; k++) {
        s[k] = lo + (int32_t)(tap_rand(rng) % (uint64_t)(hi - lo + 1));
        if (tap_rand(rng) % 97 == 0) s[k] = SWGPU_PSSM_FORBIDDEN; /* a forbidden standard pair */
    }
    swgpu_pssm_create(id, NULL, s, len, &p);
    free(s);
    return p;
}

/* the alignment of every (query, subject) pair with a positive score, from
 * its end (swgpu__cpu_score_pair_q on each instruction set = the
 * reference's end) through swgpu__align_from_end_q on each instruction set
 * and 32-bit only: all identical, the CIGAR rescored here to the score */
static void check_alignments(const char *what, swgpu_pssm_t *const *ps, const int32_t *const *rows,
                             size_t nq, const swgpu_db_t *db, const swgpu_matrix_t *m, int go, int ge,
                             size_t max_pairs)
{
    long bad = 0, pairs = 0;
    for (size_t qi = 0; qi < nq; qi++) {
        swgpu__query_t Q;
        swgpu__pssm_query(ps[qi], &Q);
        for (uint64_t k = 0; k < db->n && (size_t)pairs < max_pairs; k++) {
            const uint8_t *t = db->res + db->off[k];
            size_t tl = (size_t)(db->off[k + 1] - db->off[k]);
            int32_t sc = -1;
            int64_t qe = -1, te = -1;
            if (swgpu__ref_score_q(&Q, t, tl, m, go, ge, &sc, &qe, &te) || sc <= 0) continue;
            pairs++;
            if (sc != oracle(rows[qi], Q.len, t, tl, go, ge)) bad++;
            for (int e = 0; e < N_ISAS; e++) {
                int32_t s2 = -1;
                int64_t q2 = -1, t2 = -1;
                if (!swgpu__cpu_isa_supported(isas[e])) continue;
                if (swgpu__cpu_score_pair_q(&Q, t, tl, m, go, ge, 1, isas[e], 0, NULL, NULL, &s2, &q2, &t2) ||
                    s2 != sc || q2 != qe || t2 != te) {
                    if (bad < 3) fprintf(stderr, "%s: pair end %s: %d (%lld,%lld), want %d (%lld,%lld)\n",
                                         what, swgpu__cpu_isa_name(isas[e]), s2, (long long)q2,
                                         (long long)t2, sc, (long long)qe, (long long)te);
                    bad++;
                }
            }
            swgpu_aln_t a0;
            memset(&a0, 0, sizeof a0);
            if (swgpu__align_from_end_q(&Q, t, tl, m, go, ge, sc, qe, te, 0, &a0, 0) ||
                rescore(&a0, rows[qi], Q.len, t, tl, go, ge) != sc || a0.qend != qe || a0.tend != te) {
                if (bad < 3) fprintf(stderr, "%s: scalar alignment: %s\n", what, swgpu_last_error());
                bad++;
            } else {
                int64_t id = 0, qi2 = a0.qbeg, ti2 = a0.tbeg;
                for (size_t c = 0; c < a0.n_cigar; c++) {
                    int64_t len = SWGPU_CIGAR_LEN(a0.cigar[c]);
                    unsigned op = SWGPU_CIGAR_OP(a0.cigar[c]);
                    for (int64_t x = 0; op == SWGPU_CIGAR_M && x < len; x++)
                        id += Q.res[qi2 + x] == t[ti2 + x];
                    if (op != SWGPU_CIGAR_D) qi2 += len;
                    if (op != SWGPU_CIGAR_I) ti2 += len;
                }
                if (id != a0.n_ident) bad++;
            }
            for (int e = 1; e < 2 * N_ISAS - 1; e++) {
                /* sse41, avx2, avx512, then each 32-bit only */
                int isa = e < N_ISAS ? (int)isas[e] : (int)isas[e - N_ISAS + 1] | SWGPU__ALN_ONLY32;
                swgpu_aln_t a;
                memset(&a, 0, sizeof a);
                int rc = swgpu__align_from_end_q(&Q, t, tl, m, go, ge, sc, qe, te, 0, &a, isa);
                if (rc || a.qbeg != a0.qbeg || a.tbeg != a0.tbeg || a.n_cigar != a0.n_cigar ||
                    memcmp(a.cigar, a0.cigar, a.n_cigar * sizeof *a.cigar) || a.n_ident != a0.n_ident) {
                    if (bad < 3) fprintf(stderr, "%s: alignment isa %#x differs from the scalar one\n", what, isa);
                    bad++;
                }
                swgpu_aln_free(&a);
            }
            swgpu_aln_free(&a0);
        }
    }
    CHECK(bad == 0 && pairs > 0, "%s: %ld of %ld pair alignments wrong", what, bad, pairs);
}

static void test_random_pssms(void)
{
    uint64_t rng = 4242;
    swgpu_matrix_t *b62 = NULL;
    static const size_t lens[] = {1, 2, 17, 64, 129, 333, 700, 1100};
    static const struct {
        int lo, hi, go, ge;
    } kinds[] = {{-6, 9, 11, 1}, {-4, 6, 5, 2}, {-60, 90, 40, 10}, {-300, 400, 120, 30}};
    if (swgpu_matrix_builtin("BLOSUM62", &b62)) return;
    for (size_t kd = 0; kd < sizeof kinds / sizeof kinds[0]; kd++) {
        /* every length with the first kind, up to 333 with the others */
        const size_t nq = kd ? 6 : sizeof lens / sizeof lens[0], nd = kd ? 150 : 260;
        swgpu_pssm_t *ps[8];
        int32_t *rows[8];
        swgpu__query_t qs[8];
        char *d[260];
        char what[160];
        for (size_t i = 0; i < nq; i++) {
            char id[16];
            snprintf(id, sizeof id, "r%zu", i);
            ps[i] = random_pssm(id, lens[i], kinds[kd].lo, kinds[kd].hi, &rng);
            rows[i] = rows_of(ps[i]);
            swgpu__pssm_query(ps[i], &qs[i]);
        }
        for (size_t k = 0; k < nd; k++) {
            /* subjects of all 27 letters; some copy a query's residues */
            size_t len = k < 20 ? k + 1 : 1 + (size_t)(tap_rand(&rng) % (kd ? 300 : 500));
            d[k] = malloc(len + 1);
            tl_rand_letters(&rng, d[k], len, tap_rand(&rng) % 3 ? std20 : prot27);
            if (k % 9 == 4) {
                const char *r = swgpu_pssm_residues(ps[k % nq]);
                size_t l = strlen(r) < len ? strlen(r) : len;
                memcpy(d[k], r, l);
            }
        }
        swgpu_db_t *db = tl_db_of(SWGPU_PROTEIN, (const char *const *)d, nd, "d");
        size_t n = (size_t)db->n;
        int32_t *want = malloc(nq * n * sizeof *want);
        for (size_t i = 0; i < nq; i++)
            for (size_t k = 0; k < n; k++)
                want[i * n + k] = (int32_t)oracle(rows[i], lens[i], db->res + db->off[k],
                                                  (size_t)(db->off[k + 1] - db->off[k]), kinds[kd].go,
                                                  kinds[kd].ge);
        snprintf(what, sizeof what, "random PSSMs %d..%d, gaps %d/%d", kinds[kd].lo, kinds[kd].hi,
                 kinds[kd].go, kinds[kd].ge);
        check_engines(what, db, b62, kinds[kd].go, kinds[kd].ge, qs, nq, want, 1);
        check_alignments(what, ps, (const int32_t *const *)rows, nq, db, b62, kinds[kd].go,
                         kinds[kd].ge, kd == 0 ? 400 : 60);
        /* the search: every hit's score is the oracle's, every alignment
         * rescores to it */
        {
            swgpu_opts_t o = opts_of(kinds[kd].go, kinds[kd].ge, 2);
            swgpu_search_result_t *r = NULL;
            o.top_n = 15;
            o.evalue = 1e30;
            o.backend = SWGPU_BACKEND_CPU;
            int rc = swgpu_search_pssm((const swgpu_pssm_t *const *)ps, nq, db, b62, &o, &r);
            CHECK(rc == 0, "%s: search: %s", what, swgpu_last_error());
            long bad = 0, hits = 0;
            for (size_t i = 0; !rc && i < r->n_queries; i++)
                for (size_t h = 0; h < r->q[i].n_hits; h++) {
                    const swgpu_hit_t *x = &r->q[i].hits[h];
                    swgpu_seq_t t;
                    swgpu_db_get(db, x->target, &t);
                    hits++;
                    if (x->score != want[i * n + db->rank[x->target]] ||
                        rescore(&x->aln, rows[i], lens[i], t.res, t.len, kinds[kd].go, kinds[kd].ge) != x->score)
                        bad++;
                }
            CHECK(bad == 0 && hits > 0, "%s: search: %ld of %ld hits wrong", what, bad, hits);
            swgpu_search_result_destroy(r);
        }
        free(want);
        swgpu_db_destroy(db);
        for (size_t k = 0; k < nd; k++) free(d[k]);
        for (size_t i = 0; i < nq; i++) {
            swgpu_pssm_destroy(ps[i]);
            free(rows[i]);
        }
    }
    swgpu_matrix_destroy(b62);
}

/*
 * The 8-bit phase clamps scores below -128 to -128 and rescores the
 * targets holding such a code from 129 on.  Here the clamped path through
 * a forbidden B scores 39 * 8 - 128 = 184 (a positive 8-bit result), the
 * exact best is the 20 residues after the B (160): skipping B takes an I
 * and a D gap (200).  And a target without B keeps its 8-bit score up to
 * the 8-bit ceiling.
 */
static void test_clamp8(void)
{
    swgpu_matrix_t *b62 = NULL;
    char q[41], d0[41], d1[41], *d[2] = {d0, d1};
    int32_t s[40 * 20];
    swgpu_pssm_t *p = NULL;
    if (swgpu_matrix_builtin("BLOSUM62", &b62)) return;
    for (int i = 0; i < 40; i++) {
        q[i] = std20[i % 20];
        for (int c = 0; c < 20; c++) s[i * 20 + c] = c == i % 20 ? 8 : -3;
    }
    q[40] = 0;
    memcpy(d0, q, 41);
    d0[19] = 'B';
    memcpy(d1, q, 41);
    CHECK_EQ_INT(swgpu_pssm_create("clamp", q, s, 40, &p), SWGPU_OK);
    swgpu_db_t *db = tl_db_of(SWGPU_PROTEIN, (const char *const *)d, 2, "d");
    if (p && db) {
        swgpu__query_t Q;
        int32_t want[2];
        int32_t *rows = rows_of(p);
        swgpu__pssm_query(p, &Q);
        for (int k = 0; k < 2; k++)
            want[k] = (int32_t)oracle(rows, 40, db->res + db->off[k],
                                      (size_t)(db->off[k + 1] - db->off[k]), 90, 10);
        CHECK_EQ_INT(want[db->rank[0]], 160);
        CHECK_EQ_INT(want[db->rank[1]], 320);
        check_engines("8-bit clamp", db, b62, 90, 10, &Q, 1, want, 1);
        free(rows);
    }
    swgpu_db_destroy(db);
    swgpu_pssm_destroy(p);
    swgpu_matrix_destroy(b62);
}

/* ------------------------------------------------ (c) psiblast's scores */

/*
 * tests/data/q104.pssm is the ASCII PSSM psiblast 2.12.0 wrote for record
 * 104 of queries250 (two iterations against uniprot20k, -comp_based_stats
 * 0; tests/data/psiblast/README.md), tests/data/pssm_subjects.fa pieces of
 * that query (positions 150-244) with single letters replaced at position
 * 200 (a computed column) or 242 (a column psiblast computed from no
 * observed residue), and three with several.  The raw scores psiblast
 * reports for them (best HSP, BLOSUM62 gaps 11/1):
 *   makeblastdb -in pssm_subjects.fa -dbtype prot -out s
 *   psiblast -in_pssm q104.asn -db s -comp_based_stats 0 -evalue 1e6 \
 *            -outfmt '6 sseqid score qstart qend sstart send length gapopen'
 * (q104.asn: the ASN.1 PSSM of the same run; the subject p210_X replaced
 * position 210 by X).  psiblast's alignments were its optimal ones: a
 * Smith-Waterman scorer over the ASN.1 file's 28 columns gives the same.
 */
static void test_psiblast_fixture(void)
{
    static const struct {
        const char *id;
        int score;
    } want[] = {{"base", 339},      {"p200_X", 332},   {"p200_B", 309},    {"p200_Z", 309},
                {"p200_J", 309},    {"p200_U", 309},   {"p200_O", 309},    {"p200_star", 329},
                {"p242_B", 335},    {"p242_Z", 338},   {"p242_J", 331},    {"p242_U", 333},
                {"p242_O", 333},    {"p242_X", 333},   {"p242_star", 330}, {"mix1", 309},
                {"mix2", 304},      {"mix3", 305},     {"p210_X", 336}};
    const size_t nw = sizeof want / sizeof want[0];
    swgpu_pssm_t *p = NULL;
    swgpu_db_t *db = NULL;
    swgpu_matrix_t *b62 = NULL;
    if (swgpu_pssm_read(DATA "q104.pssm", &p) || swgpu_db_open(DATA "pssm_subjects.fa", SWGPU_PROTEIN, &db, NULL) ||
        swgpu_matrix_builtin("BLOSUM62", &b62)) {
        CHECK(0, "fixture: %s", swgpu_last_error());
        goto out;
    }
    CHECK_EQ_INT(swgpu_db_size(db), nw);
    for (int b = 0; b < 2; b++) {
        swgpu_opts_t o = opts_of(11, 1, 2);
        swgpu_search_result_t *r = NULL;
        o.top_n = 50;
        o.evalue = 1e30;
        o.backend = b ? SWGPU_BACKEND_CPU : SWGPU_BACKEND_REF;
        int rc = swgpu_search_pssm((const swgpu_pssm_t *const *)&p, 1, db, b62, &o, &r);
        CHECK(rc == 0, "psiblast fixture search: %s", swgpu_last_error());
        if (rc) continue;
        CHECK_EQ_INT(r->q[0].n_hits, nw);
        size_t found = 0;
        for (size_t h = 0; h < r->q[0].n_hits; h++) {
            swgpu_seq_t t;
            swgpu_db_get(db, r->q[0].hits[h].target, &t);
            for (size_t k = 0; k < nw; k++)
                if (!strcmp(t.id, want[k].id)) {
                    found++;
                    CHECK(r->q[0].hits[h].score == want[k].score, "%s %s: swgpu %d, psiblast %d",
                          b ? "cpu" : "ref", t.id, r->q[0].hits[h].score, want[k].score);
                }
        }
        CHECK_EQ_INT(found, nw);
        swgpu_search_result_destroy(r);
    }
out:
    swgpu_pssm_destroy(p);
    swgpu_db_destroy(db);
    swgpu_matrix_destroy(b62);
}

/* -------------------------- (c') psiblast's PSSM of a fixed alignment */

/*
 * psiblast 2.12's PSSM of tests/data/psiblast_pin/q.fa from its own round-1
 * HSPs against db.fa (hits.tsv: sseqid evalue score qstart qend sstart send
 * qseq sseq; README.md there has the commands): swgpu_pssm_from_hits given
 * exactly those alignments (opts NULL, threshold 0.002 as psiblast's) must
 * give psiblast's PSSM line for line: every score, the weighted observed
 * percentages, the information per position and the relative weight, as
 * the ASCII format prints them.  The alignment takes each step of the
 * computation (identical and near-identical rows purged, gaps both ways,
 * rows covering part of the query, a row 94.4% identical to an earlier one),
 * so a change of a constant of the purge (0.94), the observations, the
 * pseudocounts (0.0457, 0.8, 500, 5.5), the background or the scaling
 * (SCALE, the bisection) shows (tests/data/psiblast_pin/README.md).
 */

/* psiblast's HSPs in hits.tsv as the hits of one query against db. */
static int pin_hits(const char *path, const swgpu_db_t *db, swgpu_query_result_t *qr)
{
    FILE *fp = fopen(path, "r");
    char line[1024], sid[64], qa[512], sa[512];
    double ev;
    long score, qs, qe, ss, se;
    size_t cap = 0;
    memset(qr, 0, sizeof *qr);
    if (!fp) return -1;
    while (fgets(line, sizeof line, fp)) {
        if (sscanf(line, "%63s %lf %ld %ld %ld %ld %ld %511s %511s", sid, &ev, &score, &qs, &qe,
                   &ss, &se, qa, sa) != 9 || strlen(qa) != strlen(sa)) {
            fclose(fp);
            return -1;
        }
        size_t t = swgpu_db_size(db);
        for (size_t k = 0; k < swgpu_db_size(db); k++) {
            swgpu_seq_t s;
            if (swgpu_db_get(db, k, &s) == 0 && !strcmp(s.id, sid)) t = k;
        }
        if (t == swgpu_db_size(db) || (qr->n_hits == cap &&
            !(qr->hits = realloc(qr->hits, (cap = cap ? 2 * cap : 8) * sizeof *qr->hits)))) {
            fclose(fp);
            return -1;
        }
        swgpu_hit_t *h = &qr->hits[qr->n_hits++];
        memset(h, 0, sizeof *h);
        h->target = t;
        h->score = (int32_t)score;
        h->evalue = ev;
        h->aln.score = score;
        h->aln.qbeg = qs - 1;
        h->aln.qend = qe;
        h->aln.tbeg = ss - 1;
        h->aln.tend = se;
        h->aln.cigar = malloc(strlen(qa) * sizeof *h->aln.cigar);
        if (!h->aln.cigar) {
            fclose(fp);
            return -1;
        }
        for (size_t k = 0; qa[k]; k++) {
            uint32_t op = qa[k] == '-' ? SWGPU_CIGAR_D : sa[k] == '-' ? SWGPU_CIGAR_I : SWGPU_CIGAR_M;
            size_t n = h->aln.n_cigar;
            if (n && SWGPU_CIGAR_OP(h->aln.cigar[n - 1]) == op)
                h->aln.cigar[n - 1] += 1u << 4;
            else
                h->aln.cigar[h->aln.n_cigar++] = 1u << 4 | op;
            h->aln.length++;
        }
    }
    fclose(fp);
    return 0;
}

/* The position lines of p as swgpu_pssm_write prints them; NULL on error. */
static char *pssm_text(const swgpu_pssm_t *p, const swgpu_matrix_t *m)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&buf, &len);
    if (!fp) return NULL;
    int rc = swgpu_pssm_write(p, m, 11, 1, fp);
    fclose(fp);
    if (rc < 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

/* psiblast_pin/deviations.tsv: where swgpu's figures are known to differ
 * from psiblast's (position, column, swgpu's, psiblast's). */
typedef struct {
    long pos;
    char col[8], ours[16], theirs[16];
} pin_dev_t;

static long pin_devs(const char *path, pin_dev_t **out)
{
    FILE *fp = fopen(path, "r");
    char line[256];
    long n = 0, cap = 0;
    *out = NULL;
    if (!fp) return -1;
    while (fgets(line, sizeof line, fp)) {
        pin_dev_t d;
        if (line[0] == '#') continue;
        if (sscanf(line, "%ld %7s %15s %15s", &d.pos, d.col, d.ours, d.theirs) != 4 ||
            (n == cap && !(*out = realloc(*out, (size_t)(cap = cap ? 2 * cap : 256) * sizeof **out)))) {
            fclose(fp);
            return -1;
        }
        (*out)[n++] = d;
    }
    fclose(fp);
    return n;
}

/* A PSSM line's 42 figures after the position and residue: 20 scores
 * (columns A ... V), 20 percentages (%A ... %V), information (info),
 * relative weight (relw).  The position, or -1 for another line. */
#define PIN_FIELDS 42
static long pin_fields(const char *line, char f[PIN_FIELDS][16])
{
    long pos;
    char res;
    int off = 0;
    if (sscanf(line, " %ld %c%n", &pos, &res, &off) != 2) return -1;
    line += off;
    for (int k = 0; k < PIN_FIELDS; k++) {
        int used = 0;
        if (sscanf(line, " %15s%n", f[k], &used) != 1) return -1;
        line += used;
    }
    return pos;
}

static void pin_column(int k, char col[8])
{
    if (k < 20) snprintf(col, 8, "%c", std20[k]);
    else if (k < 40) snprintf(col, 8, "%%%c", std20[k - 20]);
    else snprintf(col, 8, "%s", k == 40 ? "info" : "relw");
}

static void test_pin_psiblast(void)
{
    swgpu_matrix_t *b62 = NULL;
    swgpu_seqset_t *qs = NULL;
    swgpu_db_t *db = NULL;
    swgpu_pssm_t *want = NULL, *mine = NULL;
    swgpu_query_result_t qr;
    swgpu_seq_t q;
    memset(&qr, 0, sizeof qr);
    if (swgpu_matrix_builtin("BLOSUM62", &b62) ||
        swgpu_seqset_read(DATA "psiblast_pin/q.fa", SWGPU_PROTEIN, &qs, NULL) ||
        swgpu_db_open(DATA "psiblast_pin/db.fa", SWGPU_PROTEIN, &db, NULL) ||
        swgpu_pssm_read(DATA "psiblast_pin/q.pssm.gz", &want) ||
        pin_hits(DATA "psiblast_pin/hits.tsv", db, &qr)) {
        CHECK(0, "psiblast_pin fixture: %s", swgpu_last_error());
        goto out;
    }
    CHECK_EQ_INT(qr.n_hits, 9);
    swgpu_seqset_get(qs, 0, &q);
    int rc = swgpu_pssm_from_hits(&q, NULL, &qr, db, b62, NULL, 0.002, &mine);
    CHECK(rc == 0, "psiblast_pin: %s", swgpu_last_error());
    if (rc) goto out;
    CHECK_EQ_INT(swgpu_pssm_length(mine), 72);
    CHECK_EQ_STR(swgpu_pssm_residues(mine), swgpu_pssm_residues(want));
    /* the figures as printed: scores, percentages, information, weight */
    char *a = pssm_text(mine, b62), *b = pssm_text(want, b62);
    CHECK(a && b, "psiblast_pin: write: %s", swgpu_last_error());
    if (a && b) {
        pin_dev_t *dev = NULL;
        long ndev = pin_devs(DATA "psiblast_pin/deviations.tsv", &dev), lines = 0, differ = 0;
        char *sa = NULL, *sb = NULL;
        char *la = strtok_r(a, "\n", &sa), *lb = strtok_r(b, "\n", &sb);
        CHECK(ndev >= 0, "psiblast_pin: deviations.tsv unreadable");
        for (; la && lb; la = strtok_r(NULL, "\n", &sa), lb = strtok_r(NULL, "\n", &sb)) {
            char fa[PIN_FIELDS][16], fb[PIN_FIELDS][16];
            long pa = pin_fields(la, fa), pb = pin_fields(lb, fb);
            if (pa < 0 && pb < 0) continue;
            lines++;
            if (pa != pb) {
                differ++;
                continue;
            }
            for (int k = 0; k < PIN_FIELDS; k++) {
                char col[8];
                pin_column(k, col);
                const char *expect = fb[k];
                for (long d = 0; d < ndev; d++)
                    if (dev[d].pos == pa && !strcmp(dev[d].col, col))
                        expect = strcmp(dev[d].theirs, fb[k]) ? "?" : dev[d].ours;
                if (strcmp(fa[k], expect)) {
                    differ++;
                    fprintf(stderr, "%ld\t%s\t%s\t%s\n", pa, col, fa[k], fb[k]);
                }
            }
        }
        CHECK(lines == 72 && differ == 0 && !la && !lb,
              "psiblast_pin: %ld of %ld positions' figures differ from psiblast's but for "
              "deviations.tsv (%ld): the lines above, position column swgpu psiblast",
              differ, lines * PIN_FIELDS, ndev);
        free(dev);
    }
    free(a);
    free(b);
out:
    for (size_t h = 0; h < qr.n_hits; h++) swgpu_aln_free(&qr.hits[h].aln);
    free(qr.hits);
    swgpu_pssm_destroy(want);
    swgpu_pssm_destroy(mine);
    swgpu_db_destroy(db);
    swgpu_seqset_destroy(qs);
    swgpu_matrix_destroy(b62);
}

/* ---------------------------------- (d) psiblast on uniprot20k (optional) */

static void printed_interval(const char *s, double *lo, double *hi);

/*
 * Issue 17's acceptance: for psiblast's PSSMs of records 101-110, every
 * subject that psiblast -in_pssm -comp_based_stats 0 -max_target_seqs 50
 * reports (tests/data/psiblast/evalues.tsv) is among the hits of a search
 * with -n 100 and the default E-value cutoff (10), scored never lower than
 * psiblast and exactly (the oracle); where the raw scores agree, the
 * E-values agree within 1% of psiblast's printed value.
 */
/* every subject psiblast reports is among the best 100 hits with
 * E <= 10 (q105's subject of score 58 is 243rd by score, but the
 * longer subjects scoring more have E > 10), every alignment
 * rescores here */
static void acceptance_hits(const swgpu_db_t *db, const swgpu_matrix_t *b62, swgpu_pssm_t *const *ps)
{
    swgpu_opts_t o = opts_of(11, 1, 0);
    swgpu_search_result_t *r = NULL;
    o.top_n = 100;
    o.backend = SWGPU_BACKEND_CPU;
    int rc = swgpu_search_pssm((const swgpu_pssm_t *const *)ps, 10, db, b62, &o, &r);
    CHECK(rc == 0, "acceptance search: %s", swgpu_last_error());
    FILE *fp = fopen(DATA "psiblast/evalues.tsv", "r");
    CHECK(fp != NULL, "evalues.tsv");
    long n = 0, missing = 0, lower = 0, inexact = 0, higher = 0, e_bad = 0;
    char line[512], qn[32], sid[400], es[64];
    int score;
    while (!rc && fp && fgets(line, sizeof line, fp)) {
        if (line[0] == '#' ||
            sscanf(line, "%31s %399s %d %63s", qn, sid, &score, es) != 4) continue;
        int qi = atoi(qn + 1) - 101;
        const swgpu_query_result_t *qr = &r->q[qi];
        const swgpu_hit_t *hit = NULL;
        n++;
        for (size_t h = 0; h < qr->n_hits && !hit; h++) {
            swgpu_seq_t t;
            swgpu_db_get(db, qr->hits[h].target, &t);
            if (!strcmp(t.id, sid)) hit = &qr->hits[h];
        }
        if (!hit) {
            if (missing++ < 3) fprintf(stderr, "acceptance: %s %s (psiblast %d) not a hit\n", qn, sid, score);
            continue;
        }
        if (hit->score < score) {
            if (lower++ < 3) fprintf(stderr, "acceptance: %s %s: swgpu %d < psiblast %d\n", qn, sid, hit->score, score);
        }
        higher += hit->score > score;
        if (hit->score == score) {
            double lo, hi;
            printed_interval(es, &lo, &hi);
            if (!(hit->evalue >= lo * 0.99 && hit->evalue <= hi * 1.01) && e_bad++ < 3)
                fprintf(stderr, "acceptance: %s %s: E-value %g, psiblast's %s\n", qn, sid,
                        hit->evalue, es);
        }
        swgpu_seq_t t;
        swgpu_db_get(db, hit->target, &t);
        int32_t *rows = rows_of(ps[qi]);
        if (oracle(rows, swgpu_pssm_length(ps[qi]), t.res, t.len, 11, 1) != hit->score) inexact++;
        free(rows);
    }
    if (fp) fclose(fp);
    CHECK(n == 464 && missing == 0 && lower == 0 && inexact == 0 && e_bad == 0,
          "acceptance: %ld psiblast hits, %ld missing, %ld scored lower, %ld not exact, %ld "
          "E-values off by more than 1%%", n, missing, lower, inexact, e_bad);
    printf("# acceptance: %ld psiblast hits, all found with -n 100; swgpu scores %ld higher, "
           "the others equal with E-values within 1%%\n", n, higher);
    long bad = 0, hits = 0;
    for (size_t i = 0; !rc && i < r->n_queries; i++) {
        int32_t *rows = rows_of(ps[i]);
        for (size_t h = 0; h < r->q[i].n_hits; h++) {
            const swgpu_hit_t *x = &r->q[i].hits[h];
            swgpu_seq_t t;
            swgpu_db_get(db, x->target, &t);
            hits++;
            if (rescore(&x->aln, rows, swgpu_pssm_length(ps[i]), t.res, t.len, 11, 1) != x->score)
                bad++;
        }
        free(rows);
    }
    CHECK(bad == 0 && hits >= 464, "acceptance alignments: %ld of %ld wrong", bad, hits);
    swgpu_search_result_destroy(r);
}

/* the PSSM of round 1 of record 101 (q101), whose 14 included hits
 * psiblast and swgpu align alike: psiblast's but for the rounding
 * of BLOSUM62's scores (measured 86.9% equal, 99.7% within 1, mean
 * difference -0.03; with ratios e^(lambda_u s) and Robinson &
 * Robinson's background for the pseudocounts: 84.9%, +0.04) */
static void acceptance_q101(const char *dir, const swgpu_db_t *db, const swgpu_matrix_t *b62,
                            const swgpu_pssm_t *ps0)
{
    swgpu_seqset_t *qs = NULL;
    swgpu_search_result_t *r = NULL;
    swgpu_pssm_t *mine = NULL;
    swgpu_seq_t q;
    swgpu_opts_t o = opts_of(11, 1, 0);
    o.top_n = 500;
    o.backend = SWGPU_BACKEND_CPU;
    char path[1024];
    snprintf(path, sizeof path, "%s/queries250.fasta", dir);
    int rc = swgpu_seqset_read(path, SWGPU_PROTEIN, &qs, NULL);
    CHECK(rc == 0 && swgpu_seqset_size(qs) >= 101, "%s: %s", path, swgpu_last_error());
    if (rc == 0 && swgpu_seqset_size(qs) >= 101) {
        swgpu_seqset_t *one = NULL;
        swgpu_seqset_get(qs, 100, &q); /* record 101 */
        char *letters = malloc(q.len + 1);
        for (size_t i = 0; i < q.len; i++) letters[i] = swgpu_decode(SWGPU_PROTEIN, q.res[i]);
        letters[q.len] = 0;
        swgpu_seqset_create(SWGPU_PROTEIN, &one);
        swgpu_seqset_add(one, q.id, "", letters, q.len);
        free(letters);
        swgpu_seq_t q1;
        swgpu_seqset_get(one, 0, &q1);
        rc = swgpu_search(one, db, b62, &o, &r);
        if (rc == 0) rc = swgpu_pssm_from_hits(&q1, NULL, &r->q[0], db, b62, &o, 0.002, &mine);
        CHECK(rc == 0 && swgpu_pssm_length(mine) == swgpu_pssm_length(ps0),
              "q101's PSSM: %s", swgpu_last_error());
        if (rc == 0 && swgpu_pssm_length(mine) == swgpu_pssm_length(ps0)) {
            long n = 0, equal = 0, near = 0, diff = 0;
            for (size_t i = 0; i < q1.len; i++)
                for (int c = 0; c < 20; c++, n++) {
                    int d = swgpu_pssm_score(mine, i, (uint8_t)c) -
                            swgpu_pssm_score(ps0, i, (uint8_t)c);
                    equal += d == 0;
                    near += d >= -1 && d <= 1;
                    diff += d;
                }
            CHECK(equal * 100 >= n * 86 && near * 1000 >= n * 995 &&
                      fabs((double)diff / (double)n) < 0.04,
                  "q101's PSSM against psiblast's: %ld of %ld equal, %ld within 1, mean "
                  "difference %.3f", equal, n, near, (double)diff / (double)n);
            printf("# q101's PSSM: %.1f%% of psiblast's scores equal, mean difference %.3f\n",
                   100.0 * (double)equal / (double)n, (double)diff / (double)n);
        }
        swgpu_seqset_destroy(one);
    }
    swgpu_pssm_destroy(mine);
    swgpu_search_result_destroy(r);
    swgpu_seqset_destroy(qs);
}

static void test_acceptance(void)
{
    const char *dir = getenv("SWGPU_TEST_DATA");
    char path[1024];
    swgpu_db_t *db = NULL;
    swgpu_matrix_t *b62 = NULL;
    swgpu_pssm_t *ps[10] = {0};
    if (!dir || !*dir)
        dir = "../shared/data";
    snprintf(path, sizeof path, "%s/uniprot20k.fasta.gz", dir);
    if (access(path, R_OK) != 0) {
        SKIP(1, "psiblast acceptance: no uniprot20k.fasta.gz ($SWGPU_TEST_DATA)");
        return;
    }
    if (swgpu_db_open(path, SWGPU_PROTEIN, &db, NULL) || swgpu_matrix_builtin("BLOSUM62", &b62)) {
        CHECK(0, "acceptance: %s", swgpu_last_error());
        goto out;
    }
    for (int i = 0; i < 10; i++) {
        snprintf(path, sizeof path, DATA "psiblast/q%d.pssm.gz", 101 + i);
        CHECK(swgpu_pssm_read(path, &ps[i]) == 0, "%s: %s", path, swgpu_last_error());
        if (!ps[i]) goto out;
    }
    acceptance_hits(db, b62, ps);
    acceptance_q101(dir, db, b62, ps[0]);
out:
    for (int i = 0; i < 10; i++) swgpu_pssm_destroy(ps[i]);
    swgpu_db_destroy(db);
    swgpu_matrix_destroy(b62);
}

/* A hit whose alignment rectangle spans more than 16,384 residues in all:
 * the traceback's 32-bit bound counts a forbidden score once, not once a
 * column (the pure-gap path bounds every H). */
static void test_long_rectangle(void)
{
    uint64_t rng = 99;
    swgpu_matrix_t *b62 = NULL;
    char *q = malloc(9001), *t = malloc(20000), *d[2];
    swgpu_pssm_t *p = NULL;
    swgpu_search_result_t *r = NULL;
    if (swgpu_matrix_builtin("BLOSUM62", &b62)) return;
    tl_rand_letters(&rng, q, 9000, std20);
    tl_mutate_letters(&rng, q, t, SIZE_MAX, 20, std20);
    d[0] = t;
    d[1] = "MKV";
    p = pssm_of_matrix("long", q, b62, 1);
    swgpu_db_t *db = tl_db_of(SWGPU_PROTEIN, (const char *const *)d, 2, "d");
    swgpu_opts_t o = opts_of(11, 1, 2);
    o.top_n = 1;
    o.backend = SWGPU_BACKEND_CPU;
    int rc = p && db ? swgpu_search_pssm((const swgpu_pssm_t *const *)&p, 1, db, b62, &o, &r) : -1;
    CHECK(rc == 0, "long rectangle: %s", swgpu_last_error());
    if (rc == 0) {
        const swgpu_hit_t *h = &r->q[0].hits[0];
        int32_t *rows = rows_of(p);
        swgpu_seq_t s;
        swgpu_db_get(db, h->target, &s);
        CHECK(r->q[0].n_hits == 1 && h->target == 0 && h->aln.qend - h->aln.qbeg + h->aln.tend - h->aln.tbeg > 16384,
              "long rectangle: the hit");
        CHECK_EQ_INT(rescore(&h->aln, rows, 9000, s.res, s.len, 11, 1), h->score);
        CHECK_EQ_INT(oracle(rows, 9000, s.res, s.len, 11, 1), h->score);
        free(rows);
    }
    swgpu_search_result_destroy(r);
    swgpu_db_destroy(db);
    swgpu_pssm_destroy(p);
    swgpu_matrix_destroy(b62);
    free(q);
    free(t);
}

/* ------------------------------------------------------------ misc */

/* A PSSM whose statistics cannot be computed (every score positive): the
 * message names it and the problem once (it used to be formatted into the
 * buffer it was read from), and a search warns with it through the logger. */
static char warned[1024];
static int n_warned;

static void warn_logger(swgpu_log_level_t level, const char *msg, void *user)
{
    (void)user;
    if (level == SWGPU_LOG_WARN) {
        snprintf(warned, sizeof warned, "%s", msg);
        n_warned++;
    }
}

static void test_statistics_message(void)
{
    static const char expect[] = "PSSM allpos: ungapped statistics: the expected score 1 is not "
                                 "negative or no score is positive";
    int32_t scores[4 * 20];
    swgpu_pssm_t *p = NULL;
    swgpu_matrix_t *b62 = NULL;
    swgpu_karlin_t k;
    char *d[1] = {"MKVLA"};
    swgpu_db_t *db = tl_db_of(SWGPU_PROTEIN, (const char *const *)d, 1, "d");
    swgpu_search_result_t *r = NULL;
    swgpu_opts_t o = opts_of(11, 1, 1);
    for (int i = 0; i < 4 * 20; i++) scores[i] = 1;
    swgpu_matrix_builtin("BLOSUM62", &b62);
    CHECK_EQ_INT(swgpu_pssm_create("allpos", "MKVL", scores, 4, &p), SWGPU_OK);
    CHECK_EQ_INT(swgpu_pssm_karlin(p, b62, 11, 1, &k), SWGPU_EINVAL);
    CHECK_EQ_STR(swgpu_last_error(), expect);
    const swgpu_pssm_t *one[1] = {p};
    swgpu_set_logger(warn_logger, NULL, SWGPU_LOG_WARN);
    CHECK_EQ_INT(swgpu_search_pssm(one, 1, db, b62, &o, &r), SWGPU_OK);
    swgpu_set_logger(NULL, NULL, SWGPU_LOG_WARN);
    CHECK_EQ_INT(n_warned, 1);
    CHECK_EQ_STR(warned, "PSSM allpos: ungapped statistics: the expected score 1 is not negative "
                         "or no score is positive: the E-values use the parameters of matrix "
                         "BLOSUM62 unchanged");
    swgpu_search_result_destroy(r);
    swgpu_pssm_destroy(p);
    swgpu_matrix_destroy(b62);
    swgpu_db_destroy(db);
}

static void test_search_args(void)
{
    swgpu_matrix_t *b62 = NULL, *dna = NULL;
    swgpu_pssm_t *p = NULL;
    char *d[1] = {"ACGTACGT"};
    swgpu_db_t *db = tl_db_of(SWGPU_PROTEIN, (const char *const *)d, 1, "d");
    swgpu_search_result_t *r = NULL;
    swgpu_opts_t o = opts_of(11, 1, 1);
    swgpu_matrix_builtin("BLOSUM62", &b62);
    swgpu_matrix_dna(2, -3, &dna);
    swgpu_pssm_read(DATA "q104.pssm", &p);
    const swgpu_pssm_t *one[1] = {p}, *none[1] = {NULL};
    CHECK_EQ_INT(swgpu_search_pssm(one, 1, db, dna, &o, &r), SWGPU_EALPHABET);
    CHECK_EQ_INT(swgpu_search_pssm(none, 1, db, b62, &o, &r), SWGPU_EINVAL);
    CHECK_EQ_INT(swgpu_search_pssm(NULL, 1, db, b62, &o, &r), SWGPU_EINVAL);
    CHECK_EQ_INT(swgpu_search_pssm(one, 1, db, b62, NULL, &r), SWGPU_EINVAL);
    CHECK_EQ_INT(swgpu_search_pssm(one, 1, db, b62, &o, NULL), SWGPU_EINVAL);
    /* no queries: an empty result */
    CHECK_EQ_INT(swgpu_search_pssm(NULL, 0, db, b62, &o, &r), SWGPU_OK);
    if (r) CHECK_EQ_INT(r->n_queries, 0);
    swgpu_search_result_destroy(r);
    r = NULL;
    {
        /* a DNA database */
        swgpu_seqset_t *s = NULL;
        swgpu_db_t *ddb = NULL;
        swgpu_seqset_create(SWGPU_DNA, &s);
        swgpu_seqset_add(s, "x", "", "ACGTTGCA", 8);
        swgpu_db_from_seqset(s, &ddb);
        CHECK_EQ_INT(swgpu_search_pssm(one, 1, ddb, b62, &o, &r), SWGPU_EALPHABET);
        swgpu_db_destroy(ddb);
        swgpu_seqset_destroy(s);
    }
    /* the query id and --no-self: a database sequence with the PSSM's id and
     * residues is its own hit, dropped with no_self */
    {
        const char *res = swgpu_pssm_residues(p);
        swgpu_seqset_t *s = NULL;
        swgpu_db_t *sdb = NULL;
        swgpu_seqset_create(SWGPU_PROTEIN, &s);
        swgpu_seqset_add(s, "q104", "", res, strlen(res));
        swgpu_seqset_add(s, "other", "", res + 10, 200);
        swgpu_db_from_seqset(s, &sdb);
        o.top_n = 5;
        o.evalue = 1e30;
        CHECK_EQ_INT(swgpu_search_pssm(one, 1, sdb, b62, &o, &r), SWGPU_OK);
        if (r) {
            CHECK_EQ_INT(r->q[0].n_hits, 2);
            CHECK_EQ_INT(r->q[0].hits[0].target, 0);
            CHECK_EQ_INT(r->q[0].hits[0].aln.n_ident, 244);
            CHECK_EQ_INT(r->q[0].hits[0].aln.length, 244);
        }
        swgpu_search_result_destroy(r);
        r = NULL;
        o.no_self = 1;
        CHECK_EQ_INT(swgpu_search_pssm(one, 1, sdb, b62, &o, &r), SWGPU_OK);
        if (r) {
            CHECK_EQ_INT(r->q[0].n_hits, 1);
            CHECK_EQ_INT(r->q[0].hits[0].target, 1);
        }
        swgpu_search_result_destroy(r);
        swgpu_db_destroy(sdb);
        swgpu_seqset_destroy(s);
    }
    swgpu_pssm_destroy(p);
    swgpu_db_destroy(db);
    swgpu_matrix_destroy(b62);
    swgpu_matrix_destroy(dna);
}

/* The interval of values that BLAST prints as s ("1.13e-138", "0.002",
 * "9.9", "0.0" below 1e-180). */
static void printed_interval(const char *s, double *lo, double *hi)
{
    const char *dot = strchr(s, '.'), *e = strchr(s, 'e');
    double v = strtod(s, NULL), half;
    int digits = 0;
    if (!strcmp(s, "0.0")) {
        *lo = 0;
        *hi = 1e-180;
        return;
    }
    if (dot)
        for (const char *c = dot + 1; *c >= '0' && *c <= '9'; c++) digits++;
    half = 0.5 * pow(10, -digits) * (e ? pow(10, atoi(e + 1)) : 1);
    *lo = v - half > 0 ? v - half : 0;
    *hi = v + half;
}

/*
 * psiblast's statistics of its PSSMs: psiblast 2.12's -in_pssm searches of
 * records 101-110 (tests/data/psiblast) reported these K (its XML output's
 * Statistics_kappa; lambda 0.267 each time); and the E-values and bit
 * scores it printed for the 464 subjects (tests/data/psiblast/evalues.tsv)
 * follow from the raw scores within 1% of the printed values, with the
 * database's size (uniprot20k: 9,055,569 residues, 20,000 sequences).
 */
static void test_psiblast_statistics(void)
{
    static const double kappa[10] = {0.0369545014398996, 0.0438340193964542, 0.0461347285970867,
                                     0.0382353906205702, 0.0415058718391513, 0.0385543042425826,
                                     0.0405375111869917, 0.0456431905624353, 0.0364715540794349,
                                     0.0366437692338602};
    swgpu_matrix_t *b62 = NULL;
    swgpu_pssm_t *p[10] = {0};
    swgpu_karlin_t k[10];
    char path[256], line[1024];
    swgpu_matrix_builtin("BLOSUM62", &b62);
    for (int i = 0; i < 10; i++) {
        snprintf(path, sizeof path, DATA "psiblast/q%d.pssm.gz", 101 + i);
        int rc = swgpu_pssm_read(path, &p[i]);
        CHECK(rc == 0, "%s: %s", path, swgpu_last_error());
        if (rc) continue;
        rc = swgpu_pssm_karlin(p[i], b62, 11, 1, &k[i]);
        CHECK(rc == 0 && k[i].lambda == 0.267 && fabs(k[i].K / kappa[i] - 1) < 1e-3,
              "q%d: K %.6g lambda %g, psiblast's %.6g 0.267", 101 + i, k[i].K, k[i].lambda,
              kappa[i]);
    }
    FILE *fp = fopen(DATA "psiblast/evalues.tsv", "r");
    CHECK(fp != NULL, "evalues.tsv");
    long n = 0, same_bits = 0, e_ok = 0, b_ok = 0;
    while (fp && fgets(line, sizeof line, fp)) {
        char q[32], sid[256], es[64], bs[64];
        int score;
        unsigned long slen;
        if (line[0] == '#' || sscanf(line, "%31s %255s %d %63s %63s %lu", q, sid, &score, es, bs,
                                     &slen) != 6)
            continue;
        int i = atoi(q + 1) - 101;
        if (i < 0 || i >= 10 || !p[i]) continue;
        n++;
        double e = swgpu_hit_evalue(&k[i], SWGPU_EVALUE_SPOUGE, score, swgpu_pssm_length(p[i]),
                                    slen, 9055569, 20000);
        double b = swgpu_bitscore(&k[i], score), lo, hi;
        printed_interval(es, &lo, &hi);
        e_ok += e >= lo * 0.99 && e <= hi * 1.01;
        double pb = strtod(bs, NULL);
        b_ok += pb > 99.9 ? (long)b == (long)pb : fabs(b - pb) <= 0.05 + 0.1;
        char mine[64];
        snprintf(mine, sizeof mine, b > 99.9 ? "%.0f" : "%.1f", b > 99.9 ? floor(b) : b);
        same_bits += !strcmp(mine, bs);
    }
    if (fp) fclose(fp);
    CHECK(n == 464 && e_ok == n && b_ok == n,
          "psiblast's E-values: %ld subjects, %ld E-values within 1%% of psiblast's, %ld bit scores "
          "within its rounding", n, e_ok, b_ok);
    printf("# psiblast statistics: %ld subjects, E-values all within 1%%, bit scores printed "
           "alike %ld\n", n, same_bits);
    for (int i = 0; i < 10; i++) swgpu_pssm_destroy(p[i]);
    swgpu_matrix_destroy(b62);
}

/*
 * PSI-BLAST's PSSM from hits and iterated searches (src/psi/):
 *  - no hits, or only hits identical to the query (purged): every position
 *    unobserved (B, Z, J as BLOSUM62's row), scored by the matrix's
 *    frequency ratios of its query residue and scaled to the matrix's
 *    lambda, as psiblast 2.12 does: tests/data/psiblast/self.pssm is its
 *    PSSM for this query when its only hit is itself, and its scores are
 *    met exactly but for the rounding of BLOSUM62's scores (which psiblast's
 *    frequency ratios do not have): none off by more than 1, >= 90% equal;
 *  - swgpu_pssm_write then swgpu_pssm_read gives back every score and figure;
 *  - an included hit without an alignment is refused;
 *  - one round of swgpu_search_iterate is swgpu_search, and round k+1 is
 *    swgpu_search_pssm with the PSSM swgpu_pssm_from_hits made of round k;
 *    a query with no hit below the threshold stops after round 1.
 */
static void same_scores(const char *what, const swgpu_pssm_t *a, const swgpu_pssm_t *b)
{
    long bad = 0;
    if (swgpu_pssm_length(a) != swgpu_pssm_length(b) ||
        strcmp(swgpu_pssm_residues(a), swgpu_pssm_residues(b))) {
        CHECK(0, "%s: lengths or residues differ", what);
        return;
    }
    for (size_t i = 0; i < swgpu_pssm_length(a); i++)
        for (int c = 0; c < SWGPU_NCODES; c++)
            bad += swgpu_pssm_score(a, i, (uint8_t)c) != swgpu_pssm_score(b, i, (uint8_t)c);
    CHECK(bad == 0, "%s: %ld scores differ", what, bad);
}

static long results_differ(const swgpu_query_result_t *x, const swgpu_query_result_t *y)
{
    long bad = x->n_hits != y->n_hits;
    for (size_t h = 0; !bad && h < x->n_hits; h++) {
        const swgpu_hit_t *p = &x->hits[h], *q = &y->hits[h];
        bad += p->target != q->target || p->score != q->score || p->evalue != q->evalue ||
               p->bits != q->bits || p->aln.qbeg != q->aln.qbeg || p->aln.tbeg != q->aln.tbeg ||
               p->aln.n_cigar != q->aln.n_cigar ||
               (p->aln.n_cigar && memcmp(p->aln.cigar, q->aln.cigar, p->aln.n_cigar * 4));
    }
    return bad;
}

/* swgpu_pssm_from_hits on r, a search of the query q: with the query's own
 * hit only (purged: the PSSM p0 of no hits), with every hit (written and
 * read back), with a hit that has no alignment. */
static void from_hits_of_search(const swgpu_seq_t *q, swgpu_search_result_t *r, const swgpu_db_t *db,
                                const swgpu_matrix_t *b62, const swgpu_opts_t *o, const swgpu_pssm_t *p0)
{
    swgpu_pssm_t *p1 = NULL;
    double self_e = r->q[0].hits[0].evalue;
    CHECK(r->q[0].hits[0].target == 0, "the query is its best hit");
    int rc = swgpu_pssm_from_hits(q, NULL, &r->q[0], db, b62, o, self_e, &p1); /* only the query */
    CHECK(rc == 0, "from_hits, the query only: %s", swgpu_last_error());
    if (!rc && p0) same_scores("identical hit purged: the PSSM of no hits", p1, p0);
    swgpu_pssm_destroy(p1);
    /* every hit: a PSSM of its own, written and read back */
    swgpu_pssm_t *p2 = NULL, *p3 = NULL;
    rc = swgpu_pssm_from_hits(q, NULL, &r->q[0], db, b62, NULL, 1e9, &p2);
    CHECK(rc == 0, "from_hits, every hit: %s", swgpu_last_error());
    if (!rc) {
        long differ = 0;
        for (size_t i = 0; i < q->len; i++)
            for (int c = 0; c < 20; c++)
                differ += swgpu_pssm_score(p2, i, (uint8_t)c) != swgpu_pssm_score(p0, i, (uint8_t)c);
        CHECK(differ > 0, "the hits change the PSSM");
        char path[] = "/tmp/swgpu_test_pssm_XXXXXX";
        int fd = mkstemp(path);
        FILE *fp = fd >= 0 ? fdopen(fd, "w") : NULL;
        CHECK(fp && swgpu_pssm_write(p2, b62, 11, 1, fp) == 0, "write: %s", swgpu_last_error());
        if (fp) fclose(fp);
        rc = swgpu_pssm_read(path, &p3);
        CHECK(rc == 0, "read back: %s", swgpu_last_error());
        if (!rc) {
            same_scores("written and read back", p2, p3);
            CHECK(!strcmp(swgpu_pssm_id(p3), path + 5), "read back: id %s", swgpu_pssm_id(p3));
        }
        unlink(path);
    }
    swgpu_pssm_destroy(p2);
    swgpu_pssm_destroy(p3);
    /* an included hit without an alignment */
    swgpu_aln_t keep = r->q[0].hits[1].aln;
    r->q[0].hits[1].aln.n_cigar = 0;
    swgpu_pssm_t *p4 = NULL;
    rc = swgpu_pssm_from_hits(q, NULL, &r->q[0], db, b62, NULL, 1e9, &p4);
    CHECK(rc == SWGPU_EINVAL && !p4 && strstr(swgpu_last_error(), "has no alignment"),
          "a hit without an alignment: %d %s", rc, swgpu_last_error());
    r->q[0].hits[1].aln = keep;
}

/* swgpu_search_iterate's rounds (it, with psi's iterations) against
 * swgpu_search (r) and swgpu_search_pssm of each round's PSSM; final_pssm 0,
 * align_rounds 0 and -n 1 give the same rounds. */
static void iterate_as_rounds(const swgpu_seqset_t *set, const swgpu_seq_t *q, const swgpu_db_t *db,
                              const swgpu_matrix_t *b62, const swgpu_opts_t *o, swgpu_psi_opts_t *psi,
                              const swgpu_iterate_result_t *it, const swgpu_search_result_t *r)
{
    int rc;
    CHECK(it->n_rounds >= 2 && it->last_round[0] == it->n_rounds,
          "iterate: %zu rounds, last %zu", it->n_rounds, it->last_round[0]);
    CHECK(results_differ(&it->round[0]->q[0], &r->q[0]) == 0, "round 1 = swgpu_search");
    size_t incl = 0;
    for (size_t h = 0; h < r->q[0].n_hits; h++) incl += r->q[0].hits[h].evalue <= 1e-3;
    CHECK(it->included[0] == incl, "round 1 included %zu, expected %zu", it->included[0], incl);
    for (size_t k = 1; k < it->n_rounds; k++) {
        swgpu_pssm_t *pk = NULL;
        swgpu_search_result_t *rk = NULL;
        rc = swgpu_pssm_from_hits(q, k > 1 ? it->pssm[k - 1] : NULL, &it->round[k - 1]->q[0], db,
                                  b62, o, 1e-3, &pk);
        if (!rc) same_scores("round k's PSSM", pk, it->pssm[k]);
        if (!rc) rc = swgpu_search_pssm((const swgpu_pssm_t *const *)&pk, 1, db, b62, o, &rk);
        CHECK(rc == 0 && results_differ(&it->round[k]->q[0], &rk->q[0]) == 0,
              "round %zu = swgpu_search_pssm of round %zu's PSSM", k + 1, k);
        swgpu_search_result_destroy(rk);
        swgpu_pssm_destroy(pk);
    }
    CHECK(it->converged[0] == (it->n_rounds < 3), "converged flag");
    CHECK(it->final_pssm[0] != NULL, "final PSSM made");
    /* final_pssm 0: the same rounds, no final PSSM */
    swgpu_iterate_result_t *it2 = NULL;
    psi->final_pssm = 0;
    rc = swgpu_search_iterate(set, NULL, 0, db, b62, o, psi, &it2);
    psi->final_pssm = 1;
    CHECK(rc == 0 && it2->n_rounds == it->n_rounds && !it2->final_pssm[0] &&
              it2->converged[0] == it->converged[0] && it2->included[0] == it->included[0],
          "final_pssm 0: %s", swgpu_last_error());
    for (size_t k = 0; rc == 0 && k < it->n_rounds; k++)
        CHECK(results_differ(&it->round[k]->q[0], &it2->round[k]->q[0]) == 0,
              "final_pssm 0: round %zu alike", k + 1);
    swgpu_iterate_result_destroy(it2);
    /* align_rounds 0 (final_pssm 0): the same rounds, PSSMs and last
     * round; an earlier round aligns the hits the next PSSM takes and
     * leaves the others unaligned (score kept, no CIGAR) */
    psi->final_pssm = 0;
    psi->align_rounds = 0;
    rc = swgpu_search_iterate(set, NULL, 0, db, b62, o, psi, &it2);
    psi->final_pssm = 1;
    psi->align_rounds = 1;
    CHECK(rc == 0 && it2->n_rounds == it->n_rounds && it2->included[0] == it->included[0] &&
              it2->last_round[0] == it->last_round[0],
          "align_rounds 0: %s", swgpu_last_error());
    if (rc == 0) {
        const size_t L = it->n_rounds - 1;
        CHECK(results_differ(&it->round[L]->q[0], &it2->round[L]->q[0]) == 0,
              "align_rounds 0: the last round alike");
        for (size_t k = 1; k < it->n_rounds; k++)
            same_scores("align_rounds 0: round k's PSSM", it2->pssm[k], it->pssm[k]);
        long above = 0, bare = 0, wrong = 0;
        for (size_t k = 0; k < L; k++) {
            const swgpu_query_result_t *a = &it->round[k]->q[0], *b = &it2->round[k]->q[0];
            CHECK_EQ_INT(b->n_hits, a->n_hits);
            for (size_t h = 0; h < a->n_hits && h < b->n_hits; h++) {
                const int in = a->hits[h].evalue <= 1e-3;
                above += !in;
                bare += b->hits[h].aln.n_cigar == 0 && b->hits[h].aln.score == b->hits[h].score;
                wrong += in ? b->hits[h].aln.n_cigar != a->hits[h].aln.n_cigar ||
                                  b->hits[h].aln.qbeg != a->hits[h].aln.qbeg ||
                                  b->hits[h].aln.tbeg != a->hits[h].aln.tbeg
                            : b->hits[h].aln.n_cigar != 0 || b->hits[h].score != a->hits[h].score;
            }
        }
        CHECK(above > 0 && bare == above && wrong == 0,
              "align_rounds 0: %ld hits above the threshold in earlier rounds, %ld unaligned, "
              "%ld wrong", above, bare, wrong);
    }
    swgpu_iterate_result_destroy(it2);
    /* -n 1: the rounds still align (and include) every hit below the
     * threshold, though they report one */
    swgpu_opts_t o1 = *o;
    o1.top_n = 1;
    rc = swgpu_search_iterate(set, NULL, 0, db, b62, &o1, psi, &it2);
    CHECK(rc == 0 && it2->n_rounds == it->n_rounds && it2->included[0] == it->included[0] &&
              it2->included[0] > 1 && it2->round[0]->q[0].n_hits == 1,
          "-n 1: %s", swgpu_last_error());
    for (size_t k = 1; rc == 0 && k < it->n_rounds; k++)
        same_scores("-n 1: round k's PSSM", it2->pssm[k], it->pssm[k]);
    swgpu_iterate_result_destroy(it2);
}

static void test_from_hits(void)
{
    swgpu_matrix_t *b62 = NULL;
    swgpu_matrix_builtin("BLOSUM62", &b62);
    const char *qs = "MGFRDLNLRERQVLGIIIQAYVVTAAPVGSRYIARNYNLGFSDATIRNVMAELEDEGYISQ";
    char *d[4];
    uint64_t rng = 17;
    d[0] = strdup(qs); /* the query itself */
    d[1] = malloc(200);
    d[2] = malloc(200);
    d[3] = malloc(200);
    tl_mutate_letters(&rng, qs, d[1], SIZE_MAX, 6, std20);
    tl_mutate_letters(&rng, qs, d[2], SIZE_MAX, 4, std20);
    tl_rand_letters(&rng, d[3], 150, std20);
    swgpu_db_t *db = tl_db_of(SWGPU_PROTEIN, (const char *const *)d, 4, "d");
    swgpu_seqset_t *set = NULL;
    swgpu_seqset_create(SWGPU_PROTEIN, &set);
    swgpu_seqset_add(set, "q", "", qs, strlen(qs));
    swgpu_seq_t q;
    swgpu_seqset_get(set, 0, &q);

    /* no hits: the ratios' rows, scaled, as psiblast's */
    swgpu_pssm_t *p0 = NULL, *pb = pssm_of_matrix("q", qs, b62, 1), *ps = NULL;
    int rc = swgpu_pssm_from_hits(&q, NULL, NULL, db, b62, NULL, 0.002, &p0);
    CHECK(rc == 0, "from_hits, no hits: %s", swgpu_last_error());
    CHECK(swgpu_pssm_read(DATA "psiblast/self.pssm", &ps) == 0, "self.pssm: %s",
          swgpu_last_error());
    if (!rc && ps && swgpu_pssm_length(ps) == q.len) {
        long equal = 0, far = 0, n = 0;
        for (size_t i = 0; i < q.len; i++)
            for (int c = 0; c < 20; c++, n++) {
                int d = swgpu_pssm_score(p0, i, (uint8_t)c) - swgpu_pssm_score(ps, i, (uint8_t)c);
                equal += d == 0;
                far += d < -1 || d > 1;
            }
        CHECK(far == 0 && equal * 10 >= n * 9,
              "no hits: psiblast's scores, %ld of %ld equal, %ld off by more than 1", equal, n,
              far);
        CHECK(swgpu_pssm_score(p0, 0, 20) == b62->s[q.res[0]][20] &&
              swgpu_pssm_score(p0, 0, 24) == b62->s[q.res[0]][24],
              "no hits: B and J unobserved, BLOSUM62's");
    }
    swgpu_pssm_destroy(ps);

    /* a search; only the query's own sequence included: purged, the same rows */
    swgpu_opts_t o = opts_of(11, 1, 2);
    swgpu_search_result_t *r = NULL;
    rc = swgpu_search(set, db, b62, &o, &r);
    CHECK(rc == 0 && r->q[0].n_hits >= 3, "search: %s", swgpu_last_error());
    if (!rc)
        from_hits_of_search(&q, r, db, b62, &o, p0);

    /* iterations: round 1 = swgpu_search; round 2 = the PSSM of round 1 */
    swgpu_psi_opts_t psi;
    swgpu_psi_opts_init(&psi);
    CHECK(psi.iterations == 1 && psi.inclusion_evalue == 0.002 && psi.max_hits == 500 &&
              psi.final_pssm == 1 && psi.align_rounds == 1,
          "psi defaults");
    psi.iterations = 3;
    psi.inclusion_evalue = 1e-3;
    swgpu_iterate_result_t *it = NULL;
    rc = swgpu_search_iterate(set, NULL, 0, db, b62, &o, &psi, &it);
    CHECK(rc == 0, "iterate: %s", swgpu_last_error());
    if (!rc && r)
        iterate_as_rounds(set, &q, db, b62, &o, &psi, it, r);
    swgpu_iterate_result_destroy(it);
    /* a query without hits below the threshold stops after round 1 */
    it = NULL;
    psi.inclusion_evalue = 1e-300;
    rc = swgpu_search_iterate(set, NULL, 0, db, b62, &o, &psi, &it);
    CHECK(rc == 0 && it->n_rounds == 1 && it->last_round[0] == 1 && it->converged[0] &&
          it->included[0] == 0, "no inclusion: one round");
    swgpu_iterate_result_destroy(it);
    CHECK(swgpu_search_iterate(set, (const swgpu_pssm_t *const *)&pb, 1, db, b62, &o, &psi, &it) ==
              SWGPU_EINVAL && !it, "queries and PSSMs both given");
    psi.iterations = 0;
    CHECK(swgpu_search_iterate(set, NULL, 0, db, b62, &o, &psi, &it) == SWGPU_EINVAL,
          "iterations 0");

    swgpu_search_result_destroy(r);
    swgpu_pssm_destroy(p0);
    swgpu_pssm_destroy(pb);
    swgpu_seqset_destroy(set);
    swgpu_db_destroy(db);
    for (int i = 0; i < 4; i++) free(d[i]);
    swgpu_matrix_destroy(b62);
}

/* Positions of p whose weighted observed percentages (as swgpu_pssm_write
 * prints them) are not all 0, in [a, b). */
static long observed_in(const swgpu_pssm_t *p, const swgpu_matrix_t *m, size_t a, size_t b)
{
    char *buf = NULL, *line;
    size_t len = 0;
    long n = 0;
    FILE *fp = open_memstream(&buf, &len);
    if (!fp || swgpu_pssm_write(p, m, 11, 1, fp) < 0) {
        if (fp) fclose(fp);
        free(buf);
        return -1;
    }
    fclose(fp);
    for (line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
        long pos, v, sum = 0;
        char res;
        int off = 0;
        if (sscanf(line, " %ld %c%n", &pos, &res, &off) != 2 || pos < 1) continue;
        const char *c = line + off;
        for (int k = 0; k < 40; k++) {
            int used = 0;
            if (sscanf(c, " %ld%n", &v, &used) != 1) break;
            if (k >= 20) sum += v;
            c += used;
        }
        n += sum > 0 && (size_t)pos > a && (size_t)pos <= b;
    }
    free(buf);
    return n;
}

/*
 * A subject with one copy of a domain the query holds twice: its hit aligns
 * it to one copy; with opts, swgpu_pssm_from_hits also aligns it to the
 * other (as psiblast includes both HSPs), so both copies' positions are
 * observed; without opts only the hit's own alignment counts.
 */
static void test_further_alignments(void)
{
    swgpu_matrix_t *b62 = NULL;
    swgpu_matrix_builtin("BLOSUM62", &b62);
    uint64_t rng = 29;
    char dom[81], copy2[120], q[300], *d[2];
    tl_rand_letters(&rng, dom, 80, std20);
    tl_mutate_letters(&rng, dom, copy2, SIZE_MAX, 8, std20);
    snprintf(q, sizeof q, "%s%s", dom, copy2);
    size_t l1 = strlen(dom), lq = strlen(q);
    d[0] = malloc(120);
    tl_mutate_letters(&rng, dom, d[0], SIZE_MAX, 10, std20);
    d[1] = malloc(200);
    tl_rand_letters(&rng, d[1], 150, std20);
    swgpu_db_t *db = tl_db_of(SWGPU_PROTEIN, (const char *const *)d, 2, "d");
    swgpu_seqset_t *set = NULL;
    swgpu_seqset_create(SWGPU_PROTEIN, &set);
    swgpu_seqset_add(set, "q2", "", q, lq);
    swgpu_seq_t sq;
    swgpu_seqset_get(set, 0, &sq);
    swgpu_opts_t o = opts_of(11, 1, 1);
    swgpu_search_result_t *r = NULL;
    int rc = swgpu_search(set, db, b62, &o, &r);
    CHECK(rc == 0 && r->q[0].n_hits >= 1 && r->q[0].hits[0].target == 0 &&
              r->q[0].hits[0].evalue <= 1e-3,
          "repeat: the subject is a hit: %s", swgpu_last_error());
    if (!rc && r->q[0].n_hits) {
        const swgpu_aln_t *a = &r->q[0].hits[0].aln;
        int first = a->qend <= (int64_t)l1 + 5; /* which copy the hit aligned to */
        size_t oa = first ? l1 : 0, ob = first ? lq : l1; /* the other copy */
        swgpu_pssm_t *one = NULL, *both = NULL;
        CHECK(swgpu_pssm_from_hits(&sq, NULL, &r->q[0], db, b62, NULL, 1e-3, &one) == 0 &&
                  swgpu_pssm_from_hits(&sq, NULL, &r->q[0], db, b62, &o, 1e-3, &both) == 0,
              "repeat: from_hits: %s", swgpu_last_error());
        long n1 = one ? observed_in(one, b62, oa, ob) : -1;
        long n2 = both ? observed_in(both, b62, oa, ob) : -1;
        CHECK(n1 == 0 && n2 >= 60, "repeat: the other copy's observed positions: %ld without "
              "opts, %ld with (of %zu)", n1, n2, ob - oa);
        CHECK(observed_in(both, b62, first ? 0 : l1, first ? l1 : lq) ==
                  observed_in(one, b62, first ? 0 : l1, first ? l1 : lq),
              "repeat: the hit's own copy alike");
        /* a threshold the further alignment does not meet: only the hit's */
        swgpu_pssm_t *strict = NULL;
        double e2 = r->q[0].hits[0].evalue;
        CHECK(swgpu_pssm_from_hits(&sq, NULL, &r->q[0], db, b62, &o, e2, &strict) == 0 &&
                  observed_in(strict, b62, oa, ob) == 0,
              "repeat: a further alignment above the threshold left out");
        swgpu_pssm_destroy(one);
        swgpu_pssm_destroy(both);
        swgpu_pssm_destroy(strict);
    }
    swgpu_search_result_destroy(r);
    swgpu_seqset_destroy(set);
    swgpu_db_destroy(db);
    free(d[0]);
    free(d[1]);
    swgpu_matrix_destroy(b62);
}

/*
 * The fast purge of step 2 (segments, 8 columns at a time, the early exit)
 * against the reference (swgpu__psi_purge with fast 0): random alignments of
 * a query and rows near it (0 to 50% changed, so that stretches land on
 * either side of 94% and 100%), X letters (in and out of the rows' segments:
 * purged columns keep their letters), gaps, one to four segments a row,
 * touching ones, segments at the first and last column, short and long rows.
 */
static void test_purge_fast(void)
{
    uint64_t rng = 17;
    int trials = tap_quick() ? 150 : 600, bad = 0;
    long dropped = 0, cols = 0;
    for (int t = 0; t < trials && !bad; t++) {
        size_t L = 1 + tap_rand(&rng) % (t % 3 == 0 ? 12 : t % 3 == 1 ? 90 : 700);
        size_t n = 1 + tap_rand(&rng) % (t % 5 == 0 ? 4 : 60);
        uint8_t *let = malloc(n * L), *al = calloc(n * L, 1), *use = malloc(n);
        uint8_t *let2 = malloc(n * L), *al2 = malloc(n * L), *use2 = malloc(n);
        unsigned xrate = 1 + (unsigned)(tap_rand(&rng) % 40);
        for (size_t i = 0; i < L; i++) {
            let[i] = tap_rand(&rng) % xrate == 0 ? 22 : (uint8_t)(tap_rand(&rng) % 20);
            al[i] = 1;
        }
        for (size_t r = 1; r < n; r++) {
            /* a parent: the query or an earlier row, so that rows cluster */
            size_t par = tap_rand(&rng) % 3 == 0 ? 0 : tap_rand(&rng) % r;
            unsigned pct = (unsigned)(tap_rand(&rng) % 6 == 0 ? 0 : tap_rand(&rng) % 4 == 0
                                      ? tap_rand(&rng) % 50 : tap_rand(&rng) % 9);
            for (size_t i = 0; i < L; i++) {
                uint8_t c = let[par * L + i];
                unsigned x = (unsigned)(tap_rand(&rng) % 100);
                if (x < pct)
                    c = tap_rand(&rng) % 10 == 0 ? 27 : (uint8_t)(tap_rand(&rng) % 20);
                if (tap_rand(&rng) % (xrate * 4) == 0)
                    c = 22;
                let[r * L + i] = c;
            }
            int nseg = 1 + (int)(tap_rand(&rng) % 4);
            for (int k = 0; k < nseg; k++) {
                size_t b = tap_rand(&rng) % 4 == 0 ? 0 : tap_rand(&rng) % L;
                size_t e = tap_rand(&rng) % 4 == 0 ? L : b + 1 + tap_rand(&rng) % (L - b);
                memset(al + r * L + b, 1, e - b);
            }
            use[r] = tap_rand(&rng) % 20 != 0;
        }
        use[0] = 1;
        memcpy(let2, let, n * L);
        memcpy(al2, al, n * L);
        memcpy(use2, use, n);
        int rc1 = swgpu__psi_purge(let, al, use, n, L, 0);
        for (size_t r = 1; r < n; r++)
            dropped += use2[r] && !use[r];
        for (size_t k = L; k < n * L; k++) /* columns purged (al2: the input) */
            cols += al2[k] && !al[k];
        int rc2 = swgpu__psi_purge(let2, al2, use2, n, L, 1);
        bad = rc1 != 0 || rc2 != 0 || memcmp(al, al2, n * L) != 0 || memcmp(use, use2, n) != 0;
        CHECK(!bad, "purge trial %d (L %zu, %zu rows): the fast purge differs from the "
              "reference", t, L, n);
        free(let);
        free(al);
        free(use);
        free(let2);
        free(al2);
        free(use2);
    }
    printf("# purge: %d trials, %ld rows dropped, %ld columns purged\n", trials, dropped, cols);
    CHECK(dropped > 50 && cols > 5000, "purge: %ld rows dropped and %ld columns purged in the "
          "trials (the trials must purge)", dropped, cols);
}

/* swgpu__round_away is lround on the values PSSM scaling meets */
static void test_round_away(void)
{
    static const double edge[] = {0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 0.49999999999999994,
                                  -0.49999999999999994, 1.4999999999999998, 4503599627370495.5,
                                  -4503599627370495.5, 2147483646.5, -2147483647.5, 1e-300,
                                  7.000000000000001, -6.999999999999999};
    int bad = 0;
    for (size_t k = 0; k < sizeof edge / sizeof *edge; k++)
        if (fabs(edge[k]) < 2147483647.0 && swgpu__round_away(edge[k]) != (int32_t)lround(edge[k]))
            bad++;
    uint64_t rng = 3;
    for (int k = 0; k < 200000; k++) {
        double v = ((double)(tap_rand(&rng) % 2000001) - 1000000.0) / 200.0 *
                   (0.5 + (double)(tap_rand(&rng) % 1000) / 1000.0);
        bad += swgpu__round_away(v) != (int32_t)lround(v);
    }
    CHECK(bad == 0, "swgpu__round_away differs from lround on %d values", bad);
}

int main(void)
{
    /* each test, then its seconds (the slow ones under the sanitizers) */
    static const struct {
        const char *name;
        void (*fn)(void);
    } T[] = {
        { "round away", test_round_away },
        { "read fixture", test_read_fixture },
        { "read errors", test_read_errors },
        { "cut at a row", test_cut_at_row },
        { "create", test_create },
        { "search args", test_search_args },
        { "statistics message", test_statistics_message },
        { "clamp8", test_clamp8 },
        { "long rectangle", test_long_rectangle },
        { "psiblast fixture", test_psiblast_fixture },
        { "psiblast pin", test_pin_psiblast },
        { "psiblast statistics", test_psiblast_statistics },
        { "from hits", test_from_hits },
        { "further alignments", test_further_alignments },
        { "purge fast", test_purge_fast },
        { "blosum rows", test_blosum_rows },
        { "random pssms", test_random_pssms },
        { "acceptance", test_acceptance },
    };
    for (size_t k = 0; k < sizeof T / sizeof T[0]; k++) {
        const double t = swgpu__now();
#if defined(__SANITIZE_THREAD__)
        /* under ThreadSanitizer (make check-tsan) the two big single searches
         * are left to make check and check-sanitize: TSan checks every vector
         * load of the SIMD engine one range at a time (45 of test_pssm's 77 s
         * in CI), and their threads are test_search's, which TSan runs */
        if (T[k].fn == test_blosum_rows || T[k].fn == test_acceptance) {
            char why[96];
            snprintf(why, sizeof why, "%s: not under ThreadSanitizer (make check runs it)", T[k].name);
            SKIP(1, why);
            continue;
        }
#endif
        T[k].fn();
        printf("# %s %.2fs\n", T[k].name, swgpu__now() - t);
    }
    return tap_done();
}
