/*
 * pssm.c - position-specific score matrices (PSSMs) as queries: psiblast's
 * ASCII format (psiblast -out_ascii_pssm) and PSSMs made in memory.
 *
 * A PSSM gives, for every query position, 20 scores in the order
 * ARNDCQEGHILKMFPSTWYV (swgpu's protein codes 0..19).  Subject residues
 * without a column of their own are scored as psiblast scores them in an
 * -in_pssm search (its ASN.1 PSSM holds all 28 NCBIstdaa columns; the
 * values below were read from the ASN.1 PSSMs psiblast 2.12 wrote for
 * records 101-110 of queries250 against uniprot20k and confirmed by the raw
 * scores psiblast reports for subjects with these letters, README
 * "Profile (PSSM) queries"):
 *
 *   X (and every letter read as X)   -1
 *   *                                 -4
 *   B, Z, J, U, O                     SWGPU_PSSM_FORBIDDEN (-32768, BLAST's
 *                                     BLAST_SCORE_MIN): never paired in a
 *                                     positive-scoring alignment
 * except at the positions psiblast computed from no observed residue (the
 * ASCII row's weighted observed percentages are all 0: query ends no
 * aligned sequence covers), where psiblast keeps the underlying BLOSUM62
 * row of the query residue: there U and O score -1 (as X) and B, Z, J
 * BLOSUM62's score of the query residue against them.  (psiblast derives
 * those three from BLOSUM62's frequency ratios and its PSSM scaling factor,
 * which the ASCII file does not record; they can differ from BLOSUM62's by
 * one.)  A file without the percentage columns, and a PSSM made in memory,
 * count every position as computed.  Codes outside the protein alphabet
 * (27..31) score SWGPU_PSSM_FORBIDDEN.
 *
 * The ASCII format, as psiblast writes it: a title line, a header of the 20
 * column letters (twice when the rows carry the percentages), one row per
 * position ("position residue 20 scores [20 percentages information
 * weight]"), a blank line, then the Karlin-Altschul statistics, which are
 * ignored here.  The reader is strict: every problem is an SWGPU_EFORMAT
 * naming the file, the line and what is wrong.
 */
#define _POSIX_C_SOURCE 200809L
#include "internal.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <zlib.h>

#define NSTD 20                         /* scored columns: codes 0..19 */
#define MAX_FILE ((size_t)1 << 30)      /* a PSSM file is at most this large */

static const char columns[] = "ARNDCQEGHILKMFPSTWYV";

enum { CODE_B = 20, CODE_Z = 21, CODE_X = 22, CODE_STAR = 23, CODE_J = 24, CODE_U = 25,
       CODE_O = 26, NPROT = 27 };

/* psiblast's scores of X and * in every column (BLOSUM62's -1 and -4) */
#define SCORE_X (-1)
#define SCORE_STAR (-4)

struct swgpu_pssm {
    char *id;
    size_t len;
    char *letters;  /* len query residue letters, NUL-terminated */
    uint8_t *res;   /* their codes */
    int32_t *rows;  /* len rows of SWGPU_NCODES scores against subject codes */
    int32_t min, max;
};

void swgpu_pssm_destroy(swgpu_pssm_t *p)
{
    if (!p)
        return;
    free(p->id);
    free(p->letters);
    free(p->res);
    free(p->rows);
    free(p);
}

static swgpu_pssm_t *pssm_alloc(const char *id, size_t len)
{
    swgpu_pssm_t *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->len = len;
    p->id = strdup(id ? id : "");
    p->letters = malloc(len + 1);
    p->res = malloc(len ? len : 1);
    p->rows = len <= SIZE_MAX / (SWGPU_NCODES * sizeof(int32_t))
                  ? malloc(len * SWGPU_NCODES * sizeof(int32_t))
                  : NULL;
    if (!p->id || !p->letters || !p->res || !p->rows) {
        swgpu_pssm_destroy(p);
        return NULL;
    }
    p->letters[len] = '\0';
    return p;
}

/*
 * Row of position i from its 20 scores: the columns psiblast gives every
 * other code (see the top of the file).  observed: 0 for a position
 * psiblast computed from no observed residue; b62 the BLOSUM62 table.
 */
static void complete_row(int32_t *row, const int32_t *s20, uint8_t code, int observed,
                         const swgpu_matrix_t *b62)
{
    for (int c = 0; c < SWGPU_NCODES; c++)
        row[c] = SWGPU_PSSM_FORBIDDEN;
    for (int c = 0; c < NSTD; c++)
        row[c] = s20[c];
    row[CODE_X] = SCORE_X;
    row[CODE_STAR] = SCORE_STAR;
    if (!observed) {
        row[CODE_U] = row[CODE_O] = SCORE_X;
        row[CODE_B] = b62->s[code][CODE_B];
        row[CODE_Z] = b62->s[code][CODE_Z];
        row[CODE_J] = b62->s[code][CODE_J];
    }
}

static void set_range(swgpu_pssm_t *p)
{
    p->min = INT32_MAX;
    p->max = INT32_MIN;
    for (size_t k = 0; k < p->len * SWGPU_NCODES; k++) {
        if (p->rows[k] < p->min) p->min = p->rows[k];
        if (p->rows[k] > p->max) p->max = p->rows[k];
    }
}

/* ---------------------------------------------------------------- memory */

int swgpu_pssm_create(const char *id, const char *residues, const int32_t *scores, size_t len,
                      swgpu_pssm_t **out)
{
    swgpu_matrix_t *b62 = NULL;
    swgpu_pssm_t *p;
    int rc;
    if (!out)
        return swgpu__fail(SWGPU_EINVAL, "PSSM: NULL result pointer");
    *out = NULL;
    if (!scores || len == 0)
        return swgpu__fail(SWGPU_EINVAL, "PSSM %s: no scores (%zu positions)", id ? id : "",
                           len);
    for (size_t k = 0; k < len * NSTD; k++)
        if (scores[k] < SWGPU_PSSM_FORBIDDEN || scores[k] > SWGPU_PSSM_SCORE_MAX)
            return swgpu__fail(SWGPU_EINVAL,
                               "PSSM %s: position %zu, column %c: score %d out of range "
                               "(%d..%d)", id ? id : "", k / NSTD + 1, columns[k % NSTD],
                               (int)scores[k], SWGPU_PSSM_FORBIDDEN, SWGPU_PSSM_SCORE_MAX);
    if (residues)
        for (size_t i = 0; i < len; i++)
            if (swgpu_encode(SWGPU_PROTEIN, (unsigned char)residues[i]) < 0)
                return swgpu__fail(SWGPU_EINVAL,
                                   "PSSM %s: position %zu: residue '%c' is not a protein letter",
                                   id ? id : "", i + 1, residues[i]);
    if ((rc = swgpu_matrix_builtin("BLOSUM62", &b62)) < 0)
        return rc;
    if (!(p = pssm_alloc(id, len))) {
        swgpu_matrix_destroy(b62);
        return swgpu__fail(SWGPU_ENOMEM, "PSSM %s: out of memory for %zu positions",
                           id ? id : "", len);
    }
    for (size_t i = 0; i < len; i++) {
        const int32_t *s = scores + i * NSTD;
        int code;
        if (residues) {
            code = swgpu_encode(SWGPU_PROTEIN, (unsigned char)residues[i]);
        } else { /* the best-scoring residue, the first of the column order on ties */
            code = 0;
            for (int c = 1; c < NSTD; c++)
                if (s[c] > s[code]) code = c;
        }
        p->res[i] = (uint8_t)code;
        p->letters[i] = swgpu_decode(SWGPU_PROTEIN, (uint8_t)code);
        complete_row(p->rows + i * SWGPU_NCODES, s, (uint8_t)code, 1, b62);
    }
    swgpu_matrix_destroy(b62);
    set_range(p);
    *out = p;
    return SWGPU_OK;
}

/* ------------------------------------------------------------ the reader */

/* The whole file (plain or gzip) in a NUL-terminated buffer. */
static int slurp(const char *path, char **buf, size_t *n)
{
    gzFile gz = gzopen(path, "rb");
    size_t cap = 1 << 16, len = 0;
    char *b = NULL;
    int rc = SWGPU_OK;
    *buf = NULL;
    if (!gz)
        return swgpu__fail(errno == ENOMEM ? SWGPU_ENOMEM : SWGPU_EIO, "PSSM file %s: %s", path,
                           errno ? strerror(errno) : "cannot open");
    for (;;) {
        if (len + 1 >= cap || !b) {
            char *nb;
            if (b)
                cap *= 2;
            if (cap > MAX_FILE + 2) {
                rc = swgpu__fail(SWGPU_EFORMAT, "PSSM file %s: larger than %zu bytes", path,
                                 MAX_FILE);
                break;
            }
            if (!(nb = realloc(b, cap))) {
                rc = swgpu__fail(SWGPU_ENOMEM, "PSSM file %s: out of memory", path);
                break;
            }
            b = nb;
        }
        int got = gzread(gz, b + len, (unsigned)(cap - 1 - len));
        if (got > 0) {
            len += (size_t)got;
            continue;
        }
        int err = Z_OK;
        const char *msg = gzerror(gz, &err);
        if (got == 0 && err == Z_OK)
            break;
        if (err == Z_BUF_ERROR)
            rc = swgpu__fail(SWGPU_EFORMAT, "PSSM file %s: truncated gzip data", path);
        else if (err == Z_ERRNO)
            rc = swgpu__fail(SWGPU_EIO, "PSSM file %s: %s", path, strerror(errno));
        else
            rc = swgpu__fail(SWGPU_EFORMAT, "PSSM file %s: corrupt gzip data (%s)", path,
                             msg ? msg : "zlib error");
        break;
    }
    gzclose(gz);
    if (rc) {
        free(b);
        return rc;
    }
    b[len] = '\0';
    *buf = b;
    *n = len;
    return SWGPU_OK;
}

/* The next whitespace-delimited token of *p, NUL-terminated in place. */
static char *token(char **p)
{
    char *s = *p, *e;
    while (*s == ' ' || *s == '\t')
        s++;
    if (!*s)
        return NULL;
    e = s;
    while (*e && *e != ' ' && *e != '\t')
        e++;
    if (*e)
        *e++ = '\0';
    *p = e;
    return s;
}

static int is_int(const char *s, long *v)
{
    char *end;
    errno = 0;
    *v = strtol(s, &end, 10);
    return end != s && !*end && !errno;
}

/* The id of a PSSM read from path: the base name without ".gz" and without
 * its extension (kept whole when that would leave nothing). */
static char *id_of(const char *path)
{
    const char *b = strrchr(path, '/');
    char *id = strdup(b ? b + 1 : path), *dot;
    size_t n;
    if (!id)
        return NULL;
    n = strlen(id);
    if (n > 3 && !strcmp(id + n - 3, ".gz"))
        id[n - 3] = '\0';
    dot = strrchr(id, '.');
    if (dot && dot != id)
        *dot = '\0';
    return id;
}

/* the parsed rows, grown as the file goes */
typedef struct {
    int32_t *s20;    /* NSTD scores per position */
    char *letters;
    uint8_t *observed;
    size_t n, cap;
} rows_t;

static int rows_push(rows_t *r)
{
    if (r->n < r->cap)
        return 0;
    size_t cap = r->cap ? 2 * r->cap : 512;
    int32_t *s = realloc(r->s20, cap * NSTD * sizeof *s);
    if (!s)
        return -1;
    r->s20 = s;
    char *l = realloc(r->letters, cap + 1);
    if (!l)
        return -1;
    r->letters = l;
    uint8_t *o = realloc(r->observed, cap);
    if (!o)
        return -1;
    r->observed = o;
    r->cap = cap;
    return 0;
}

#define BAD(...) do { rc = swgpu__fail(SWGPU_EFORMAT, __VA_ARGS__); goto done; } while (0)

int swgpu_pssm_read(const char *path, swgpu_pssm_t **out)
{
    char *buf = NULL, *line, *next, *id = NULL;
    size_t size = 0;
    long lineno = 0, blank_at = 0;
    int ncols = 0; /* header letters: 0 (not seen yet), 20 or 40 */
    rows_t r = {0};
    swgpu_matrix_t *b62 = NULL;
    swgpu_pssm_t *p = NULL;
    int rc;

    if (!out)
        return swgpu__fail(SWGPU_EINVAL, "PSSM: NULL result pointer");
    *out = NULL;
    if (!path)
        return swgpu__fail(SWGPU_EINVAL, "PSSM: no file name");
    if ((rc = slurp(path, &buf, &size)) < 0)
        return rc;
    if (size == 0)
        BAD("PSSM file %s: empty file", path);
    if (memchr(buf, '\0', size))
        BAD("PSSM file %s: binary data (a NUL byte at offset %zu)", path,
            (size_t)((char *)memchr(buf, '\0', size) - buf));

    for (line = buf; line && *line; line = next) {
        char *t, *nl = strchr(line, '\n'), *tok;
        lineno++;
        next = nl ? nl + 1 : NULL;
        if (nl)
            *nl = '\0';
        if ((t = strchr(line, '\r')) && t[1] == '\0')
            *t = '\0'; /* CRLF */
        for (t = line; *t; t++)
            if ((unsigned char)*t < 0x20 && *t != '\t')
                BAD("PSSM file %s, line %ld: control character 0x%02x", path, lineno,
                    (unsigned)(unsigned char)*t);
        t = line;
        tok = token(&t);
        if (!ncols) { /* before the header: the title (any text), blank lines */
            long v;
            if (!tok)
                continue;
            if (is_int(tok, &v))
                BAD("PSSM file %s, line %ld: a matrix row before the header line of column "
                    "letters", path, lineno);
            if (strcmp(tok, "A"))
                continue; /* the title */
            int n = 0;
            for (; tok; tok = token(&t), n++)
                if (n >= 2 * NSTD || tok[1] || tok[0] != columns[n % NSTD])
                    BAD("PSSM file %s, line %ld: expected the header %s (once, or twice with the "
                        "percentages), found '%s' as column %d", path, lineno,
                        "A R N D C Q E G H I L K M F P S T W Y V", tok, n + 1);
            if (n != NSTD && n != 2 * NSTD)
                BAD("PSSM file %s, line %ld: the header has %d column letters, expected %d or %d",
                    path, lineno, n, NSTD, 2 * NSTD);
            ncols = n;
            continue;
        }
        if (!tok) { /* the blank line after the matrix */
            if (!blank_at)
                blank_at = lineno;
            continue;
        }
        {
            long v;
            if (blank_at) { /* the statistics; no matrix row after the blank line */
                if (is_int(tok, &v))
                    BAD("PSSM file %s, line %ld: a matrix row after the end of the matrix (the "
                        "blank line %ld)", path, lineno, blank_at);
                continue;
            }
            if (!is_int(tok, &v))
                BAD("PSSM file %s, line %ld: expected a position number, found '%s'", path,
                    lineno, tok);
            if (v != (long)r.n + 1)
                BAD("PSSM file %s, line %ld: position %ld out of order (expected %zu)", path,
                    lineno, v, r.n + 1);
        }
        if (rows_push(&r) < 0) {
            rc = swgpu__fail(SWGPU_ENOMEM, "PSSM file %s: out of memory at line %ld", path,
                             lineno);
            goto done;
        }
        /* the values after the position, counted first for the message */
        char *vals[2 * NSTD + 4];
        int nv = 0, want = 1 + ncols + (ncols == 2 * NSTD ? 2 : 0);
        while ((tok = token(&t)))
            if (nv < (int)(sizeof vals / sizeof vals[0]))
                vals[nv++] = tok;
            else
                nv++;
        if (nv != want)
            BAD("PSSM file %s, line %ld: position %zu has %d values after its number, expected "
                "%d (the residue, %d scores%s)", path, lineno, r.n + 1, nv, want, NSTD,
                ncols == 2 * NSTD ? ", 20 percentages, information, weight" : "");
        if (vals[0][1] || swgpu_encode(SWGPU_PROTEIN, (unsigned char)vals[0][0]) < 0)
            BAD("PSSM file %s, line %ld: position %zu: residue '%s' is not a protein letter",
                path, lineno, r.n + 1, vals[0]);
        r.letters[r.n] = vals[0][0] >= 'a' ? (char)(vals[0][0] - 'a' + 'A') : vals[0][0];
        r.observed[r.n] = ncols == NSTD;
        for (int c = 0; c < ncols; c++) {
            long v;
            if (!is_int(vals[1 + c], &v))
                BAD("PSSM file %s, line %ld: position %zu, column %d ('%c'): '%s' is not an "
                    "integer", path, lineno, r.n + 1, c + 1, columns[c % NSTD], vals[1 + c]);
            if (c < NSTD) {
                if (v < SWGPU_PSSM_FORBIDDEN || v > SWGPU_PSSM_SCORE_MAX)
                    BAD("PSSM file %s, line %ld: position %zu, column %c: score %ld out of range "
                        "(%d..%d)", path, lineno, r.n + 1, columns[c], v, SWGPU_PSSM_FORBIDDEN,
                        SWGPU_PSSM_SCORE_MAX);
                r.s20[r.n * NSTD + c] = (int32_t)v;
            } else {
                if (v < 0 || v > 100)
                    BAD("PSSM file %s, line %ld: position %zu: percentage %ld of '%c' out of "
                        "range (0..100)", path, lineno, r.n + 1, v, columns[c - NSTD]);
                if (v)
                    r.observed[r.n] = 1;
            }
        }
        if (ncols == 2 * NSTD)
            for (int k = 0; k < 2; k++) {
                char *end;
                double d = strtod(vals[1 + ncols + k], &end);
                if (*end || end == vals[1 + ncols + k] || !(d >= 0))
                    BAD("PSSM file %s, line %ld: position %zu: %s '%s' is not a number >= 0",
                        path, lineno, r.n + 1, k ? "relative weight" : "information",
                        vals[1 + ncols + k]);
            }
        r.n++;
    }
    if (!ncols)
        BAD("PSSM file %s: no header line of column letters (A R N D C Q E G H I L K M F P S T "
            "W Y V): not a psiblast ASCII PSSM", path);
    if (r.n == 0)
        BAD("PSSM file %s: the matrix has no positions", path);

    if ((rc = swgpu_matrix_builtin("BLOSUM62", &b62)) < 0)
        goto done;
    if (!(id = id_of(path)) || !(p = pssm_alloc(id, r.n))) {
        rc = swgpu__fail(SWGPU_ENOMEM, "PSSM file %s: out of memory for %zu positions", path,
                         r.n);
        goto done;
    }
    memcpy(p->letters, r.letters, r.n);
    for (size_t i = 0; i < r.n; i++) {
        p->res[i] = (uint8_t)swgpu_encode(SWGPU_PROTEIN, (unsigned char)r.letters[i]);
        complete_row(p->rows + i * SWGPU_NCODES, r.s20 + i * NSTD, p->res[i], r.observed[i],
                     b62);
    }
    set_range(p);
    *out = p;
    p = NULL;
    rc = SWGPU_OK;
done:
    swgpu_pssm_destroy(p);
    swgpu_matrix_destroy(b62);
    free(id);
    free(r.s20);
    free(r.letters);
    free(r.observed);
    free(buf);
    return rc;
}

/* ------------------------------------------------------------- accessors */

const char *swgpu_pssm_id(const swgpu_pssm_t *p)
{
    return p ? p->id : "";
}

size_t swgpu_pssm_length(const swgpu_pssm_t *p)
{
    return p ? p->len : 0;
}

const char *swgpu_pssm_residues(const swgpu_pssm_t *p)
{
    return p ? p->letters : "";
}

int swgpu_pssm_score(const swgpu_pssm_t *p, size_t pos, uint8_t code)
{
    if (!p || pos >= p->len || code >= SWGPU_NCODES)
        return SWGPU_PSSM_FORBIDDEN;
    return p->rows[pos * SWGPU_NCODES + code];
}

int swgpu_pssm_min(const swgpu_pssm_t *p)
{
    return p ? p->min : 0;
}

int swgpu_pssm_max(const swgpu_pssm_t *p)
{
    return p ? p->max : 0;
}

void swgpu__pssm_query(const swgpu_pssm_t *p, swgpu__query_t *q)
{
    q->res = p->res;
    q->len = p->len;
    q->rows = p->rows;
    q->smin = p->min;
    q->smax = p->max;
}
