/*
 * matrix.c - scoring matrices: the built-in BLOSUM/PAM tables, NCBI-format
 * matrix files, and DNA match/mismatch scoring.
 *
 * Built-in tables and files go through the same builder, so both follow one
 * rule for the residue codes a table lacks:
 *  - J, U, O score as X (its row and column) when X is given, else as the
 *    table's minimum;
 *  - any other missing code ('*', B, Z, X, and the unused codes 27..31)
 *    scores the table's minimum.
 * The 20 standard amino acids must all be present.
 *
 * NCBI file format: lines starting with '#' and blank lines are ignored; the
 * first other line is the header, one letter per column; then one row per
 * header letter (any order): the row's letter followed by one integer per
 * column.  A letter that is not a residue letter (anything but A-Z, a-z and
 * '*') is an error, as are duplicate letters, non-integer values, values
 * beyond +-1000 and rows whose count does not match the header.
 */
#define _POSIX_C_SOURCE 200809L
#include "score/score.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#define MAX_ABS_SCORE 1000
/* DNA scores as large as long alignments' gap costs (a search refuses more than
 * +-1000: swgpu_opts_check) */
#define MAX_DNA_SCORE 1000000
#define MAX_LETTERS 32

static const char standard20[] = "ARNDCQEGHILKMFPSTWYV";

/*
 * Fill m from n letters and their n x n scores (row-major, row = first
 * residue).  src names the table in messages.  Letters must be valid and
 * distinct (checked by the callers for files, by construction for tables).
 */
static int build(swgpu_matrix_t *m, const char *src, const char *letters, int n, const int *v)
{
    int code[MAX_LETTERS], have[SWGPU_NCODES] = {0};
    int mn = INT_MAX, mx = INT_MIN;
    for (int i = 0; i < n; i++) {
        code[i] = swgpu_encode(SWGPU_PROTEIN, letters[i]);
        if (code[i] < 0)
            return swgpu__fail(SWGPU_EMATRIX, "matrix %s: unknown residue letter '%c'", src, letters[i]);
        if (have[code[i]])
            return swgpu__fail(SWGPU_EMATRIX, "matrix %s: letter '%c' appears twice", src, letters[i]);
        have[code[i]] = 1;
    }
    for (const char *p = standard20; *p; p++)
        if (!have[swgpu_encode(SWGPU_PROTEIN, *p)])
            return swgpu__fail(SWGPU_EMATRIX, "matrix %s: standard amino acid '%c' is missing", src, *p);
    for (int i = 0; i < n * n; i++) {
        if (v[i] < mn) mn = v[i];
        if (v[i] > mx) mx = v[i];
    }
    for (int a = 0; a < SWGPU_NCODES; a++)
        for (int b = 0; b < SWGPU_NCODES; b++) m->s[a][b] = mn;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) m->s[code[i]][code[j]] = v[i * n + j];
    const int X = SWGPU_PROT_X;
    if (have[X]) {
        static const char like_x[] = "JUO";
        for (const char *p = like_x; *p; p++) {
            int c = swgpu_encode(SWGPU_PROTEIN, *p);
            if (have[c]) continue;
            for (int b = 0; b < SWGPU_NCODES; b++) m->s[c][b] = m->s[X][b];
            for (int b = 0; b < SWGPU_NCODES; b++) m->s[b][c] = m->s[b][X];
        }
    }
    m->alphabet = SWGPU_PROTEIN;
    m->min = mn;
    m->max = mx;
    return SWGPU_OK;
}

static int builtin(const char *name, swgpu_matrix_t **out)
{
    for (const swgpu__matrix_table_t *t = swgpu__matrix_tables; t->name; t++) {
        if (strcasecmp(t->name, name)) continue;
        int n = (int)strlen(t->letters), v[MAX_LETTERS * MAX_LETTERS];
        for (int i = 0; i < n * n; i++) v[i] = t->scores[i];
        swgpu_matrix_t *m = calloc(1, sizeof *m);
        if (!m) return swgpu__fail(SWGPU_ENOMEM, "matrix %s: out of memory", name);
        int rc = build(m, t->name, t->letters, n, v);
        if (rc) {
            free(m);
            return rc;
        }
        snprintf(m->name, sizeof m->name, "%s", t->name);
        m->builtin = 1;
        *out = m;
        return SWGPU_OK;
    }
    return SWGPU_ENOTFOUND;
}

static void builtin_list(char *buf, size_t size)
{
    size_t k = 0;
    buf[0] = 0;
    for (const swgpu__matrix_table_t *t = swgpu__matrix_tables; t->name && k < size; t++)
        k += (size_t)snprintf(buf + k, size - k, "%s%s", k ? " " : "", t->name);
}

int swgpu_matrix_builtin(const char *name, swgpu_matrix_t **out)
{
    char list[256];
    *out = NULL;
    if (!name) return swgpu__fail(SWGPU_EINVAL, "matrix: no name");
    int rc = builtin(name, out);
    if (rc != SWGPU_ENOTFOUND) return rc;
    builtin_list(list, sizeof list);
    return swgpu__fail(SWGPU_EMATRIX, "unknown matrix '%s' (built-in: %s)", name, list);
}

/* ---------------------------------------------------------- file loader */

static char *next_token(char **p)
{
    char *s = *p;
    while (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n') s++;
    if (!*s) return NULL;
    char *e = s;
    while (*e && *e != ' ' && *e != '\t' && *e != '\r' && *e != '\n') e++;
    if (*e) *e++ = 0;
    *p = e;
    return s;
}

static int is_residue_letter(int c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '*';
}

int swgpu_matrix_load(const char *path, swgpu_matrix_t **out)
{
    FILE *fp = NULL;
    char *line = NULL, *tok, *p;
    size_t cap = 0;
    ssize_t got;
    long lineno = 0;
    int rc = SWGPU_OK, nl = 0, nrows = 0, seen[MAX_LETTERS] = {0};
    char letters[MAX_LETTERS + 1];
    int v[MAX_LETTERS * MAX_LETTERS];
    swgpu_matrix_t *m = NULL;

    *out = NULL;
    if (!path) return swgpu__fail(SWGPU_EINVAL, "matrix: no file name");
    fp = fopen(path, "r");
    if (!fp) return swgpu__fail(SWGPU_EIO, "matrix file %s: %s", path, strerror(errno));
    while ((got = getline(&line, &cap, fp)) >= 0) {
        lineno++;
        if ((size_t)got != strlen(line)) {
            rc = swgpu__fail(SWGPU_EMATRIX, "matrix file %s, line %ld: binary data", path, lineno);
            goto fail;
        }
        p = line;
        tok = next_token(&p);
        if (!tok || tok[0] == '#') continue;
        if (!nl) { /* header row */
            do {
                if (tok[1] || (tok[0] >= '0' && tok[0] <= '9')) {
                    rc = swgpu__fail(SWGPU_EMATRIX, "matrix file %s, line %ld: expected a header row of residue letters, found '%s'",
                                     path, lineno, tok);
                    goto fail;
                }
                if (!is_residue_letter(tok[0]) || swgpu_encode(SWGPU_PROTEIN, tok[0]) < 0 || nl == MAX_LETTERS) {
                    rc = swgpu__fail(SWGPU_EMATRIX, "matrix file %s, line %ld: unknown residue letter '%s' in header",
                                     path, lineno, tok);
                    goto fail;
                }
                for (int i = 0; i < nl; i++)
                    if (swgpu_encode(SWGPU_PROTEIN, letters[i]) == swgpu_encode(SWGPU_PROTEIN, tok[0])) {
                        rc = swgpu__fail(SWGPU_EMATRIX, "matrix file %s, line %ld: letter '%c' appears twice in header",
                                         path, lineno, tok[0]);
                        goto fail;
                    }
                letters[nl++] = tok[0];
            } while ((tok = next_token(&p)));
            letters[nl] = 0;
            continue;
        }
        /* a row: its letter, then nl integers */
        int r = -1;
        if (!tok[1])
            for (int i = 0; i < nl; i++)
                if (swgpu_encode(SWGPU_PROTEIN, letters[i]) == swgpu_encode(SWGPU_PROTEIN, tok[0])) r = i;
        if (r < 0) {
            rc = swgpu__fail(SWGPU_EMATRIX, "matrix file %s, line %ld: row label '%s' is not a letter of the header",
                             path, lineno, tok);
            goto fail;
        }
        if (seen[r]) {
            rc = swgpu__fail(SWGPU_EMATRIX, "matrix file %s, line %ld: second row for letter '%c'", path, lineno, letters[r]);
            goto fail;
        }
        seen[r] = 1;
        nrows++;
        int k = 0;
        while ((tok = next_token(&p))) {
            char *end;
            errno = 0;
            long x = strtol(tok, &end, 10);
            if (*end || end == tok || errno) {
                rc = swgpu__fail(SWGPU_EMATRIX, "matrix file %s, line %ld: '%s' is not an integer", path, lineno, tok);
                goto fail;
            }
            if (x > MAX_ABS_SCORE || x < -MAX_ABS_SCORE) {
                rc = swgpu__fail(SWGPU_EMATRIX, "matrix file %s, line %ld: score %ld out of range (|score| <= %d)",
                                 path, lineno, x, MAX_ABS_SCORE);
                goto fail;
            }
            if (k < nl) v[r * nl + k] = (int)x;
            k++;
        }
        if (k != nl) {
            rc = swgpu__fail(SWGPU_EMATRIX, "matrix file %s, line %ld: row '%c' has %d values, the header has %d letters",
                             path, lineno, letters[r], k, nl);
            goto fail;
        }
    }
    if (ferror(fp)) {
        rc = swgpu__fail(SWGPU_EIO, "matrix file %s: %s", path, strerror(errno));
        goto fail;
    }
    if (!nl) {
        rc = swgpu__fail(SWGPU_EMATRIX, "matrix file %s: no header row of residue letters", path);
        goto fail;
    }
    if (nrows != nl) {
        rc = swgpu__fail(SWGPU_EMATRIX, "matrix file %s: %d rows for %d header letters", path, nrows, nl);
        goto fail;
    }
    m = calloc(1, sizeof *m);
    if (!m) {
        rc = swgpu__fail(SWGPU_ENOMEM, "matrix file %s: out of memory", path);
        goto fail;
    }
    {
        char src[1100];
        snprintf(src, sizeof src, "file %s", path);
        if ((rc = build(m, src, letters, nl, v))) goto fail;
    }
    const char *base = strrchr(path, '/');
    snprintf(m->name, sizeof m->name, "%s", base ? base + 1 : path);
    free(line);
    fclose(fp);
    *out = m;
    return SWGPU_OK;

fail:
    free(m);
    free(line);
    fclose(fp);
    return rc;
}

int swgpu_matrix_dna(int match, int mismatch, swgpu_matrix_t **out)
{
    *out = NULL;
    if (match <= 0 || match > MAX_DNA_SCORE)
        return swgpu__fail(SWGPU_EINVAL, "DNA match score %d: must be in 1..%d", match, MAX_DNA_SCORE);
    if (mismatch >= 0 || mismatch < -MAX_DNA_SCORE)
        return swgpu__fail(SWGPU_EINVAL, "DNA mismatch score %d: must be in -%d..-1", mismatch, MAX_DNA_SCORE);
    swgpu_matrix_t *m = calloc(1, sizeof *m);
    if (!m) return swgpu__fail(SWGPU_ENOMEM, "matrix: out of memory");
    for (int a = 0; a < SWGPU_NCODES; a++)
        for (int b = 0; b < SWGPU_NCODES; b++)
            m->s[a][b] = (a == b && a < 4) ? match : mismatch; /* A C G T only */
    snprintf(m->name, sizeof m->name, "DNA%+d/%+d", match, mismatch);
    m->alphabet = SWGPU_DNA;
    m->min = mismatch;
    m->max = match;
    m->match = match;
    m->mismatch = mismatch;
    m->builtin = 1;
    *out = m;
    return SWGPU_OK;
}

int swgpu_matrix_get(const char *name_or_path, swgpu_matrix_t **out)
{
    char list[256];
    *out = NULL;
    if (!name_or_path) return swgpu__fail(SWGPU_EINVAL, "matrix: no name");
    int rc = builtin(name_or_path, out);
    if (rc != SWGPU_ENOTFOUND) return rc;
    FILE *fp = fopen(name_or_path, "r");
    if (!fp && errno == ENOENT && !strchr(name_or_path, '/')) {
        builtin_list(list, sizeof list);
        return swgpu__fail(SWGPU_EMATRIX, "unknown matrix '%s': not a built-in (%s) and no such file",
                           name_or_path, list);
    }
    if (fp) fclose(fp);
    return swgpu_matrix_load(name_or_path, out);
}

const char *swgpu_matrix_name(const swgpu_matrix_t *m)
{
    return m ? m->name : "";
}

swgpu_alphabet_t swgpu_matrix_alphabet(const swgpu_matrix_t *m)
{
    return m ? m->alphabet : SWGPU_AUTO;
}

int swgpu_matrix_score(const swgpu_matrix_t *m, uint8_t a, uint8_t b)
{
    if (a >= SWGPU_NCODES || b >= SWGPU_NCODES) return m->min;
    return m->s[a][b];
}

int swgpu_matrix_min(const swgpu_matrix_t *m)
{
    return m->min;
}

int swgpu_matrix_max(const swgpu_matrix_t *m)
{
    return m->max;
}

void swgpu_matrix_destroy(swgpu_matrix_t *m)
{
    free(m);
}
