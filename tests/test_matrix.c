/*
 * test_matrix.c - built-in matrices (spot values from the NCBI files),
 * NCBI-format file loading (round trip, missing codes, every error), DNA
 * scoring, and matrix_get.
 */
#define _POSIX_C_SOURCE 200809L
#include "tap.h"
#include "testlib.h"
#include "swgpu.h"

#include <stdlib.h>
#include <unistd.h>

static const char *datadir;

static const char *data(const char *name)
{
    return tl_path(datadir, name);
}

static int P(char c)
{
    return swgpu_encode(SWGPU_PROTEIN, c);
}

static int sc(const swgpu_matrix_t *m, char a, char b)
{
    return swgpu_matrix_score(m, (uint8_t)P(a), (uint8_t)P(b));
}

/* values read off the NCBI files (/usr/share/ncbi/data, Debian ncbi-data) */
static const struct {
    const char *name;
    int min, max, ww, ar, cc, jj, ij, de, bn, xstar, star_star;
} spot[] = {
    {"BLOSUM45", -5, 15, 15, -2, 12, 4, 4, 2, 5, -5, 1},
    {"BLOSUM50", -5, 15, 15, -2, 13, 4, 4, 2, 5, -5, 1},
    {"BLOSUM62", -4, 11, 11, -1, 9, 3, 3, 2, 4, -4, 1},
    {"BLOSUM80", -6, 11, 11, -2, 9, 3, 3, 1, 5, -6, 1},
    {"BLOSUM90", -6, 11, 11, -2, 9, 4, 3, 1, 5, -6, 1},
    {"PAM30", -17, 13, 13, -7, 10, 6, 5, 2, 6, -17, 1},
    {"PAM70", -11, 13, 13, -4, 9, 5, 4, 3, 5, -11, 1},
    {"PAM250", -8, 17, 17, -2, 12, 5, 3, 3, 2, -8, 1},
};

static void test_builtin(void)
{
    for (size_t i = 0; i < sizeof spot / sizeof *spot; i++) {
        swgpu_matrix_t *m = NULL;
        int rc = swgpu_matrix_builtin(spot[i].name, &m);
        CHECK(rc == 0, "%s: %s", spot[i].name, swgpu_last_error());
        if (rc) continue;
        CHECK_EQ_STR(swgpu_matrix_name(m), spot[i].name);
        CHECK_EQ_INT(swgpu_matrix_alphabet(m), SWGPU_PROTEIN);
        CHECK_EQ_INT(swgpu_matrix_min(m), spot[i].min);
        CHECK_EQ_INT(swgpu_matrix_max(m), spot[i].max);
        CHECK_EQ_INT(sc(m, 'W', 'W'), spot[i].ww);
        CHECK_EQ_INT(sc(m, 'A', 'R'), spot[i].ar);
        CHECK_EQ_INT(sc(m, 'R', 'A'), spot[i].ar);
        CHECK_EQ_INT(sc(m, 'C', 'C'), spot[i].cc);
        CHECK_EQ_INT(sc(m, 'J', 'J'), spot[i].jj);
        CHECK_EQ_INT(sc(m, 'I', 'J'), spot[i].ij);
        CHECK_EQ_INT(sc(m, 'D', 'E'), spot[i].de);
        CHECK_EQ_INT(sc(m, 'B', 'N'), spot[i].bn);
        CHECK_EQ_INT(sc(m, 'X', '*'), spot[i].xstar);
        CHECK_EQ_INT(sc(m, '*', '*'), spot[i].star_star);
        /* U and O are not in the files: they score as X */
        int ok = 1;
        for (int c = 0; c < 27; c++) {
            ok &= swgpu_matrix_score(m, (uint8_t)P('U'), (uint8_t)c) == swgpu_matrix_score(m, SWGPU_PROT_X, (uint8_t)c);
            ok &= swgpu_matrix_score(m, (uint8_t)c, (uint8_t)P('O')) == swgpu_matrix_score(m, (uint8_t)c, SWGPU_PROT_X);
        }
        CHECK(ok, "%s: U and O score as X", spot[i].name);
        CHECK_EQ_INT(sc(m, 'U', 'O'), sc(m, 'X', 'X'));
        CHECK_EQ_INT(swgpu_matrix_score(m, 27, 0), spot[i].min);
        CHECK_EQ_INT(swgpu_matrix_score(m, 31, 31), spot[i].min);
        CHECK_EQ_INT(swgpu_matrix_score(m, 200, 0), spot[i].min);
        swgpu_matrix_destroy(m);
    }
    /* the whole BLOSUM62 diagonal, and symmetry of every table */
    swgpu_matrix_t *m = NULL;
    CHECK_EQ_INT(swgpu_matrix_builtin("blosum62", &m), 0);
    const char *aa = "ARNDCQEGHILKMFPSTWYV";
    static const int diag[] = {4, 5, 6, 6, 9, 5, 5, 6, 8, 4, 4, 5, 5, 6, 7, 4, 5, 11, 7, 4};
    int ok = 1;
    for (int i = 0; i < 20; i++) ok &= sc(m, aa[i], aa[i]) == diag[i];
    CHECK(ok, "BLOSUM62 diagonal");
    CHECK_EQ_INT(sc(m, 'W', 'F'), 1);
    CHECK_EQ_INT(sc(m, 'E', 'Z'), 4);
    CHECK_EQ_INT(sc(m, 'A', 'X'), -1);
    swgpu_matrix_destroy(m);
    for (size_t i = 0; i < sizeof spot / sizeof *spot; i++) {
        swgpu_matrix_builtin(spot[i].name, &m);
        ok = 1;
        for (int a = 0; a < 32; a++)
            for (int b = 0; b < 32; b++)
                ok &= swgpu_matrix_score(m, (uint8_t)a, (uint8_t)b) == swgpu_matrix_score(m, (uint8_t)b, (uint8_t)a);
        CHECK(ok, "%s symmetric", spot[i].name);
        swgpu_matrix_destroy(m);
    }
    m = (swgpu_matrix_t *)1;
    CHECK_EQ_INT(swgpu_matrix_builtin("BLOSUM63", &m), SWGPU_EMATRIX);
    CHECK(m == NULL, "NULL on failure");
    CHECK(strstr(swgpu_last_error(), "BLOSUM63") && strstr(swgpu_last_error(), "PAM250"), "%s", swgpu_last_error());
}

/* write m in NCBI format, load it back, compare every score */
static void test_roundtrip(void)
{
    const char *letters = "ARNDCQEGHILKMFPSTWYVBJZX*";
    char path[] = "/tmp/swgpu_test_matrix.XXXXXX";
    int fd = mkstemp(path);
    FILE *fp = fdopen(fd, "w");
    swgpu_matrix_t *m = NULL, *l = NULL;
    swgpu_matrix_builtin("PAM30", &m);
    fprintf(fp, "# PAM30 written by test_matrix\n   ");
    for (const char *a = letters; *a; a++) fprintf(fp, "  %c", *a);
    fputc('\n', fp);
    for (const char *a = letters; *a; a++) {
        fputc(*a, fp);
        for (const char *b = letters; *b; b++) fprintf(fp, " %3d", sc(m, *a, *b));
        fprintf(fp, "\r\n");
    }
    fclose(fp);
    CHECK_EQ_INT(swgpu_matrix_load(path, &l), 0);
    if (l) {
        int ok = 1;
        for (int a = 0; a < 32; a++)
            for (int b = 0; b < 32; b++)
                ok &= swgpu_matrix_score(m, (uint8_t)a, (uint8_t)b) == swgpu_matrix_score(l, (uint8_t)a, (uint8_t)b);
        CHECK(ok, "PAM30 through a file equals the built-in");
        CHECK_EQ_INT(swgpu_matrix_min(l), -17);
        CHECK_EQ_INT(swgpu_matrix_max(l), 13);
        CHECK_EQ_STR(swgpu_matrix_name(l), strrchr(path, '/') + 1);
    }
    swgpu_matrix_destroy(l);
    /* matrix_get: a path that is not a built-in name */
    CHECK_EQ_INT(swgpu_matrix_get(path, &l), 0);
    CHECK(l && sc(l, 'W', 'W') == 13, "matrix_get by path");
    swgpu_matrix_destroy(l);
    swgpu_matrix_destroy(m);
    unlink(path);

    /* the NCBI files themselves, when installed (not needed by the build) */
    int have = access("/usr/share/ncbi/data/BLOSUM62", R_OK) == 0;
    if (!have) {
        SKIP(8, "NCBI matrix files not installed (Debian ncbi-data)");
        return;
    }
    for (size_t i = 0; i < sizeof spot / sizeof *spot; i++) {
        char p[256];
        snprintf(p, sizeof p, "/usr/share/ncbi/data/%s", spot[i].name);
        swgpu_matrix_builtin(spot[i].name, &m);
        int rc = swgpu_matrix_load(p, &l);
        int ok = rc == 0;
        for (int a = 0; ok && a < 32; a++)
            for (int b = 0; b < 32; b++)
                ok &= swgpu_matrix_score(m, (uint8_t)a, (uint8_t)b) == swgpu_matrix_score(l, (uint8_t)a, (uint8_t)b);
        CHECK(ok, "%s: file equals built-in (%s)", spot[i].name, rc ? swgpu_last_error() : "");
        swgpu_matrix_destroy(m);
        swgpu_matrix_destroy(l);
    }
}

static void test_files(void)
{
    swgpu_matrix_t *m = NULL;
    int rc = swgpu_matrix_load(data("custom.mat"), &m);
    CHECK(rc == 0, "custom.mat: %s", swgpu_last_error());
    if (!rc) {
        CHECK_EQ_STR(swgpu_matrix_name(m), "custom.mat");
        CHECK_EQ_INT(swgpu_matrix_min(m), -5);
        CHECK_EQ_INT(swgpu_matrix_max(m), 20);
        CHECK_EQ_INT(sc(m, 'A', 'A'), 7);
        CHECK_EQ_INT(sc(m, 'W', 'W'), 20);
        CHECK_EQ_INT(sc(m, 'R', 'N'), -5);
        CHECK_EQ_INT(sc(m, 'K', 'E'), 0);
        CHECK_EQ_INT(sc(m, 'X', 'A'), -2);
        CHECK_EQ_INT(sc(m, 'J', 'A'), -2); /* as X */
        CHECK_EQ_INT(sc(m, 'A', 'U'), -2);
        CHECK_EQ_INT(sc(m, 'O', 'O'), -2);
        CHECK_EQ_INT(sc(m, 'B', 'B'), -5); /* missing, not J/U/O: minimum */
        CHECK_EQ_INT(sc(m, '*', 'A'), -5);
        CHECK_EQ_INT(sc(m, 'J', '*'), -5);
    }
    swgpu_matrix_destroy(m);
    rc = swgpu_matrix_load(data("nox.mat"), &m);
    CHECK(rc == 0, "nox.mat: %s", swgpu_last_error());
    if (!rc) {
        CHECK_EQ_INT(sc(m, 'J', 'A'), -5); /* no X: J U O score the minimum */
        CHECK_EQ_INT(sc(m, 'U', 'U'), -5);
        CHECK_EQ_INT(sc(m, 'X', 'X'), -5);
        CHECK_EQ_INT(sc(m, 'W', 'W'), 20);
    }
    swgpu_matrix_destroy(m);

    static const struct {
        const char *file;
        int status;
        const char *msg;
    } bad[] = {
        {"no-such.mat", SWGPU_EIO, "No such file"},
        {"empty.fa", SWGPU_EMATRIX, "no header row"},
        {"noheader.mat", SWGPU_EMATRIX, "no header row"},
        {"numhdr.mat", SWGPU_EMATRIX, "line 1: expected a header row of residue letters, found '1'"},
        {"nonint.mat", SWGPU_EMATRIX, "line 10: 'abc' is not an integer"},
        {"fewrows.mat", SWGPU_EMATRIX, "20 rows for 21 header letters"},
        {"extracol.mat", SWGPU_EMATRIX, "line 7: row 'N' has 22 values, the header has 21 letters"},
        {"badletter.mat", SWGPU_EMATRIX, "line 4: unknown residue letter '-' in header"},
        {"missingaa.mat", SWGPU_EMATRIX, "standard amino acid 'W' is missing"},
        {"duprow.mat", SWGPU_EMATRIX, "line 9: second row for letter 'A'"},
        {"range.mat", SWGPU_EMATRIX, "line 5: score 5000 out of range"},
        {"reads.fq", SWGPU_EMATRIX, "expected a header row"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        m = (swgpu_matrix_t *)1;
        rc = swgpu_matrix_load(data(bad[i].file), &m);
        CHECK(rc == bad[i].status, "%s: status %d (%s)", bad[i].file, rc, swgpu_last_error());
        CHECK(m == NULL, "%s: NULL on failure", bad[i].file);
        CHECK(strstr(swgpu_last_error(), bad[i].msg) && strstr(swgpu_last_error(), bad[i].file),
              "%s: message \"%s\" lacks \"%s\"", bad[i].file, swgpu_last_error(), bad[i].msg);
    }
    /* matrix_get: an unknown name that is no file either */
    rc = swgpu_matrix_get("BLOSUM99", &m);
    CHECK_EQ_INT(rc, SWGPU_EMATRIX);
    CHECK(strstr(swgpu_last_error(), "unknown matrix 'BLOSUM99'"), "%s", swgpu_last_error());
    rc = swgpu_matrix_get("pam70", &m);
    CHECK(rc == 0 && m && sc(m, 'A', 'R') == -4, "matrix_get built-in");
    swgpu_matrix_destroy(m);
    rc = swgpu_matrix_get(data("missing.mat"), &m);
    CHECK_EQ_INT(rc, SWGPU_EIO);
    swgpu_matrix_destroy(NULL);
}

static void test_dna(void)
{
    swgpu_matrix_t *m = NULL;
    CHECK_EQ_INT(swgpu_matrix_dna(2, -3, &m), 0);
    if (!m) return;
    CHECK_EQ_INT(swgpu_matrix_alphabet(m), SWGPU_DNA);
    CHECK_EQ_INT(swgpu_matrix_min(m), -3);
    CHECK_EQ_INT(swgpu_matrix_max(m), 2);
    int ok = 1;
    for (int a = 0; a < 32; a++)
        for (int b = 0; b < 32; b++)
            ok &= swgpu_matrix_score(m, (uint8_t)a, (uint8_t)b) == ((a == b && a < 4) ? 2 : -3);
    CHECK(ok, "DNA +2/-3 table");
    CHECK_EQ_INT(swgpu_matrix_score(m, SWGPU_DNA_N, SWGPU_DNA_N), -3);
    CHECK_EQ_STR(swgpu_matrix_name(m), "DNA+2/-3");
    swgpu_matrix_destroy(m);
    CHECK_EQ_INT(swgpu_matrix_dna(1, -1, &m), 0);
    CHECK(m && swgpu_matrix_score(m, 3, 3) == 1 && swgpu_matrix_score(m, 3, 2) == -1, "DNA +1/-1");
    swgpu_matrix_destroy(m);
    CHECK_EQ_INT(swgpu_matrix_dna(0, -3, &m), SWGPU_EINVAL);
    CHECK_EQ_INT(swgpu_matrix_dna(2, 0, &m), SWGPU_EINVAL);
    CHECK_EQ_INT(swgpu_matrix_dna(-2, -3, &m), SWGPU_EINVAL);
    CHECK_EQ_INT(swgpu_matrix_dna(2, 3, &m), SWGPU_EINVAL);
    CHECK_EQ_INT(swgpu_matrix_dna(1000001, -3, &m), SWGPU_EINVAL);
    CHECK_EQ_INT(swgpu_matrix_dna(2, -1000001, &m), SWGPU_EINVAL);
    CHECK(m == NULL, "NULL on failure");
    /* scores beyond +-1000 are for long alignments: a search refuses them */
    CHECK_EQ_INT(swgpu_matrix_dna(5000, -3, &m), 0);
    {
        swgpu_opts_t o;
        swgpu_opts_init(&o, SWGPU_DNA);
        CHECK_EQ_INT(swgpu_opts_check(&o, m), SWGPU_EMATRIX);
    }
    swgpu_matrix_destroy(m);
}

int main(void)
{
    datadir = tl_datadir();
    test_builtin();
    test_roundtrip();
    test_files();
    test_dna();
    return tap_done();
}
