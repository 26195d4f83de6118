/*
 * pssm/pssm.c - position-specific score matrices (PSSMs) as queries:
 * psiblast's ASCII format (psiblast -out_ascii_pssm) and PSSMs made in
 * memory.
 *
 * A PSSM gives, for every query position, 20 scores in the order
 * ARNDCQEGHILKMFPSTWYV (swgpu's protein codes 0..19).  Subject residues
 * without a column of their own are scored as psiblast scores them in an
 * -in_pssm search (its ASN.1 PSSM holds all 28 NCBIstdaa columns; the
 * values below were read from the ASN.1 PSSMs psiblast 2.12 wrote for
 * records 101-110 of queries250 against uniprot20k and confirmed by the raw
 * scores psiblast reports for subjects with these letters,
 * docs/profile-search.md):
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
 * ignored here; a file without that blank line was cut short.  The reader
 * is strict: every problem is an SWGPU_EFORMAT naming the file, the line
 * and what is wrong (read_line, read_header, read_row, pssm_of_rows).
 */
#define _POSIX_C_SOURCE 200809L
#include "pssm/pssm.h"
#include "simd/simd.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

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
    int32_t min, max, min16; /* min16: the least above SWGPU__ALN_FORBID16 */
    /* psiblast's per-position figures, when known (read from a file that has
     * them, or computed by swgpu_pssm_from_hits; NULL otherwise): the
     * weighted observed percentages (20 a position, rounded down), the
     * information per position (bits) and the relative weight of gapless
     * real matches to pseudocounts */
    uint8_t *pct;
    double *info, *relw;
};

void swgpu_pssm_destroy(swgpu_pssm_t *p)
{
    if (!p)
        return;
    free(p->id);
    free(p->letters);
    free(p->res);
    free(p->rows);
    free(p->pct);
    free(p->info);
    free(p->relw);
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
    p->min = p->min16 = INT32_MAX;
    p->max = INT32_MIN;
    for (size_t k = 0; k < p->len * SWGPU_NCODES; k++) {
        if (p->rows[k] < p->min) p->min = p->rows[k];
        if (p->rows[k] > p->max) p->max = p->rows[k];
        if (p->rows[k] > SWGPU__ALN_FORBID16 && p->rows[k] < p->min16) p->min16 = p->rows[k];
    }
    if (p->min16 == INT32_MAX) /* every score forbidden */
        p->min16 = p->max;
}

/* Copy the per-position figures: pct (NSTD a position), info[i * stride]
 * and relw[i * stride]. */
static int set_figures(swgpu_pssm_t *p, const uint8_t *pct, const double *info,
                       const double *relw, size_t stride)
{
    p->pct = malloc(p->len * NSTD);
    p->info = malloc(p->len * sizeof *p->info);
    p->relw = malloc(p->len * sizeof *p->relw);
    if (!p->pct || !p->info || !p->relw)
        return swgpu__fail(SWGPU_ENOMEM, "PSSM %s: out of memory", p->id);
    memcpy(p->pct, pct, p->len * NSTD);
    for (size_t i = 0; i < p->len; i++) {
        p->info[i] = info[i * stride];
        p->relw[i] = relw[i * stride];
    }
    return SWGPU_OK;
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

/* The whole file (plain or gzip) in a NUL-terminated buffer, named as a
 * PSSM file in messages. */
static int slurp(const char *path, char **buf, size_t *n)
{
    int rc = swgpu__read_file(path, MAX_FILE, buf, n);
    if (rc < 0) { /* the message is copied: swgpu__fail writes where it lies */
        char msg[512];
        snprintf(msg, sizeof msg, "%s", swgpu_last_error());
        return swgpu__fail(rc, "PSSM %s", msg);
    }
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
    uint8_t *pct;    /* NSTD percentages per position (files that have them) */
    double *extra;   /* information and relative weight, 2 per position */
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
    uint8_t *pc = realloc(r->pct, cap * NSTD);
    if (!pc)
        return -1;
    r->pct = pc;
    double *x = realloc(r->extra, cap * 2 * sizeof *x);
    if (!x)
        return -1;
    r->extra = x;
    r->cap = cap;
    return 0;
}

/* The file's state as its lines are read: where, the header's column
 * letters, the blank line that ends the matrix, the rows so far. */
typedef struct {
    const char *path;
    long lineno, blank_at;
    int ncols; /* header letters: 0 (not seen yet), 20 or 40 */
    rows_t r;
} reader_t;

static void rows_free(rows_t *r)
{
    free(r->s20);
    free(r->letters);
    free(r->observed);
    free(r->pct);
    free(r->extra);
}

#define BAD(...) return swgpu__fail(SWGPU_EFORMAT, __VA_ARGS__)

/* A line before the header (tok its first token, t the rest): the title
 * (any text), a blank line, or the header of column letters. */
static int read_header(reader_t *R, char *tok, char *t)
{
    const char *path = R->path;
    const long lineno = R->lineno;
    long v;
    if (!tok)
        return SWGPU_OK;
    if (is_int(tok, &v))
        BAD("PSSM file %s, line %ld: a matrix row before the header line of column "
            "letters", path, lineno);
    if (strcmp(tok, "A"))
        return SWGPU_OK; /* the title */
    int n = 0;
    for (; tok; tok = token(&t), n++)
        if (n >= 2 * NSTD || tok[1] || tok[0] != columns[n % NSTD])
            BAD("PSSM file %s, line %ld: expected the header %s (once, or twice with the "
                "percentages), found '%s' as column %d", path, lineno,
                "A R N D C Q E G H I L K M F P S T W Y V", tok, n + 1);
    if (n != NSTD && n != 2 * NSTD)
        BAD("PSSM file %s, line %ld: the header has %d column letters, expected %d or %d",
            path, lineno, n, NSTD, 2 * NSTD);
    R->ncols = n;
    return SWGPU_OK;
}

/* The values of matrix row R->r.n + 1 after its position number (t). */
static int read_row(reader_t *R, char *t)
{
    const char *path = R->path;
    const long lineno = R->lineno;
    const int ncols = R->ncols;
    rows_t *r = &R->r;
    char *tok;
    if (rows_push(r) < 0)
        return swgpu__fail(SWGPU_ENOMEM, "PSSM file %s: out of memory at line %ld", path,
                           lineno);
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
            "%d (the residue, %d scores%s)", path, lineno, r->n + 1, nv, want, NSTD,
            ncols == 2 * NSTD ? ", 20 percentages, information, weight" : "");
    if (vals[0][1] || swgpu_encode(SWGPU_PROTEIN, (unsigned char)vals[0][0]) < 0)
        BAD("PSSM file %s, line %ld: position %zu: residue '%s' is not a protein letter",
            path, lineno, r->n + 1, vals[0]);
    r->letters[r->n] = vals[0][0] >= 'a' ? (char)(vals[0][0] - 'a' + 'A') : vals[0][0];
    r->observed[r->n] = ncols == NSTD;
    for (int c = 0; c < ncols; c++) {
        long v;
        if (!is_int(vals[1 + c], &v))
            BAD("PSSM file %s, line %ld: position %zu, column %d ('%c'): '%s' is not an "
                "integer", path, lineno, r->n + 1, c + 1, columns[c % NSTD], vals[1 + c]);
        if (c < NSTD) {
            if (v < SWGPU_PSSM_FORBIDDEN || v > SWGPU_PSSM_SCORE_MAX)
                BAD("PSSM file %s, line %ld: position %zu, column %c: score %ld out of range "
                    "(%d..%d)", path, lineno, r->n + 1, columns[c], v, SWGPU_PSSM_FORBIDDEN,
                    SWGPU_PSSM_SCORE_MAX);
            r->s20[r->n * NSTD + c] = (int32_t)v;
        } else {
            if (v < 0 || v > 100)
                BAD("PSSM file %s, line %ld: position %zu: percentage %ld of '%c' out of "
                    "range (0..100)", path, lineno, r->n + 1, v, columns[c - NSTD]);
            r->pct[r->n * NSTD + c - NSTD] = (uint8_t)v;
            if (v)
                r->observed[r->n] = 1;
        }
    }
    if (ncols == 2 * NSTD)
        for (int k = 0; k < 2; k++) {
            char *end;
            double d = strtod(vals[1 + ncols + k], &end);
            if (*end || end == vals[1 + ncols + k] || !(d >= 0))
                BAD("PSSM file %s, line %ld: position %zu: %s '%s' is not a number >= 0",
                    path, lineno, r->n + 1, k ? "relative weight" : "information",
                    vals[1 + ncols + k]);
            r->extra[2 * r->n + k] = d;
        }
    r->n++;
    return SWGPU_OK;
}

/* Line R->lineno (NUL-terminated, without its newline). */
static int read_line(reader_t *R, char *line)
{
    const char *path = R->path;
    const long lineno = R->lineno;
    char *t, *tok;
    long v;
    if ((t = strchr(line, '\r')) && t[1] == '\0')
        *t = '\0'; /* CRLF */
    for (t = line; *t; t++)
        if ((unsigned char)*t < 0x20 && *t != '\t')
            BAD("PSSM file %s, line %ld: control character 0x%02x", path, lineno,
                (unsigned)(unsigned char)*t);
    t = line;
    tok = token(&t);
    if (!R->ncols) /* before the header: the title (any text), blank lines */
        return read_header(R, tok, t);
    if (!tok) { /* the blank line after the matrix */
        if (!R->blank_at)
            R->blank_at = lineno;
        return SWGPU_OK;
    }
    if (R->blank_at) { /* the statistics; no matrix row after the blank line */
        if (is_int(tok, &v))
            BAD("PSSM file %s, line %ld: a matrix row after the end of the matrix (the "
                "blank line %ld)", path, lineno, R->blank_at);
        return SWGPU_OK;
    }
    if (!is_int(tok, &v))
        BAD("PSSM file %s, line %ld: expected a position number, found '%s'", path,
            lineno, tok);
    if (v != (long)R->r.n + 1)
        BAD("PSSM file %s, line %ld: position %ld out of order (expected %zu)", path,
            lineno, v, R->r.n + 1);
    return read_row(R, t);
}

/* The PSSM of the rows read, once the whole file is. */
static int pssm_of_rows(const reader_t *R, swgpu_pssm_t **out)
{
    const char *path = R->path;
    const rows_t *r = &R->r;
    swgpu_matrix_t *b62 = NULL;
    swgpu_pssm_t *p = NULL;
    char *id = NULL;
    int rc;
    if (!R->ncols)
        BAD("PSSM file %s: no header line of column letters (A R N D C Q E G H I L K M F P S T "
            "W Y V): not a psiblast ASCII PSSM", path);
    if (r->n == 0)
        BAD("PSSM file %s: the matrix has no positions", path);
    if (!R->blank_at) /* psiblast ends the matrix with a blank line, then its statistics */
        BAD("PSSM file %s: the file ends after position %zu without the blank line that ends the "
            "matrix (cut short?)", path, r->n);

    if ((rc = swgpu_matrix_builtin("BLOSUM62", &b62)) < 0)
        return rc;
    if (!(id = id_of(path)) || !(p = pssm_alloc(id, r->n))) {
        rc = swgpu__fail(SWGPU_ENOMEM, "PSSM file %s: out of memory for %zu positions", path,
                         r->n);
        goto done;
    }
    memcpy(p->letters, r->letters, r->n);
    for (size_t i = 0; i < r->n; i++) {
        p->res[i] = (uint8_t)swgpu_encode(SWGPU_PROTEIN, (unsigned char)r->letters[i]);
        complete_row(p->rows + i * SWGPU_NCODES, r->s20 + i * NSTD, p->res[i], r->observed[i],
                     b62);
    }
    set_range(p);
    if (R->ncols == 2 * NSTD && (rc = set_figures(p, r->pct, r->extra, r->extra + 1, 2)) < 0)
        goto done;
    *out = p;
    p = NULL;
    rc = SWGPU_OK;
done:
    swgpu_pssm_destroy(p);
    swgpu_matrix_destroy(b62);
    free(id);
    return rc;
}

int swgpu_pssm_read(const char *path, swgpu_pssm_t **out)
{
    reader_t R = {path, 0, 0, 0, {0}};
    char *buf = NULL, *line, *next;
    size_t size = 0;
    int rc;

    if (!out)
        return swgpu__fail(SWGPU_EINVAL, "PSSM: NULL result pointer");
    *out = NULL;
    if (!path)
        return swgpu__fail(SWGPU_EINVAL, "PSSM: no file name");
    if ((rc = slurp(path, &buf, &size)) < 0)
        return rc;
    if (size == 0)
        rc = swgpu__fail(SWGPU_EFORMAT, "PSSM file %s: empty file", path);
    else if (memchr(buf, '\0', size))
        rc = swgpu__fail(SWGPU_EFORMAT, "PSSM file %s: binary data (a NUL byte at offset %zu)",
                         path, (size_t)((char *)memchr(buf, '\0', size) - buf));
    for (line = buf; rc == SWGPU_OK && line && *line; line = next) {
        char *nl = strchr(line, '\n');
        R.lineno++;
        next = nl ? nl + 1 : NULL;
        if (nl)
            *nl = '\0';
        rc = read_line(&R, line);
    }
    if (rc == SWGPU_OK)
        rc = pssm_of_rows(&R, out);
    rows_free(&R.r);
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
    q->smin16 = p->min16;
    q->smax = p->max;
}

/* ------------------------------------------------------------ statistics */

/*
 * The Karlin-Altschul parameters of a search with p, as psiblast computes
 * them for a PSSM (checked against psiblast 2.12's -in_pssm output,
 * docs/profile-search.md): the gapped lambda of m and the gaps, and their
 * gapped K times K_p / K_m, where K_p is the ungapped K of the PSSM's own
 * scores (positions whose query residue is not X, the 20 standard columns,
 * subject residues at Robinson & Robinson's frequencies; forbidden scores
 * left out) and K_m that of m's 20 x 20 block under the same frequencies.
 */
/* The ungapped lambda, K and H of p's scores (see swgpu_pssm_karlin). */
static int pssm_ungapped(const swgpu_pssm_t *p, double *lambda, double *K, double *H)
{
    int rc, lo = 0, hi = 0;
    size_t eff = 0;
    for (size_t i = 0; i < p->len; i++) {
        if (p->res[i] == CODE_X)
            continue;
        eff++;
        for (int c = 0; c < NSTD; c++) {
            int32_t s = p->rows[i * SWGPU_NCODES + c];
            if (s == SWGPU_PSSM_FORBIDDEN)
                continue;
            if (s < lo) lo = s;
            if (s > hi) hi = s;
        }
    }
    if (eff == 0)
        return swgpu__fail(SWGPU_EINVAL, "PSSM %s: every query residue is X", p->id);
    double *prob = calloc((size_t)(hi - lo + 1), sizeof *prob);
    if (!prob)
        return swgpu__fail(SWGPU_ENOMEM, "PSSM %s: out of memory", p->id);
    for (size_t i = 0; i < p->len; i++) {
        if (p->res[i] == CODE_X)
            continue;
        for (int c = 0; c < NSTD; c++) {
            int32_t s = p->rows[i * SWGPU_NCODES + c];
            if (s != SWGPU_PSSM_FORBIDDEN)
                prob[s - lo] += swgpu__robinson[c] / (double)eff;
        }
    }
    rc = swgpu__ungapped_karlin(prob, lo, hi, lambda, K, H);
    free(prob);
    if (rc < 0) { /* the message goes into the buffer it is read from: copy it first */
        char why[512];
        snprintf(why, sizeof why, "%s", swgpu_last_error());
        return swgpu__fail(rc, "PSSM %s: %s", p->id, why);
    }
    return SWGPU_OK;
}

int swgpu__pssm_karlin_km(const swgpu_pssm_t *p, const swgpu_matrix_t *m, int gap_open,
                          int gap_extend, const double *m_K, swgpu_karlin_t *out)
{
    double lp, kp, hp, lm, km, hm;
    int rc;
    if (!p || !m || !out)
        return swgpu__fail(SWGPU_EINVAL, "PSSM statistics: NULL argument");
    if ((rc = swgpu_karlin_lookup(m, gap_open, gap_extend, out)) < 0 ||
        (rc = pssm_ungapped(p, &lp, &kp, &hp)) < 0 ||
        (!m_K && (rc = swgpu__matrix_ideal_karlin(m, &lm, &km, &hm)) < 0))
        return rc;
    out->K *= kp / (m_K ? *m_K : km);
    return SWGPU_OK;
}

int swgpu_pssm_karlin(const swgpu_pssm_t *p, const swgpu_matrix_t *m, int gap_open,
                      int gap_extend, swgpu_karlin_t *out)
{
    return swgpu__pssm_karlin_km(p, m, gap_open, gap_extend, NULL, out);
}

/* ------------------------------------------------- built here, written out */

int swgpu__pssm_build(const char *id, const uint8_t *res, size_t len, const int32_t *s20,
                      const uint8_t *observed, const uint8_t *pct, const double *info,
                      const double *relw, swgpu_pssm_t **out)
{
    swgpu_matrix_t *b62 = NULL;
    swgpu_pssm_t *p = NULL;
    int rc;
    *out = NULL;
    if ((rc = swgpu_matrix_builtin("BLOSUM62", &b62)) < 0)
        return rc;
    if (!(p = pssm_alloc(id, len))) {
        swgpu_matrix_destroy(b62);
        return swgpu__fail(SWGPU_ENOMEM, "PSSM %s: out of memory for %zu positions", id, len);
    }
    for (size_t i = 0; i < len; i++) {
        p->res[i] = res[i];
        p->letters[i] = swgpu_decode(SWGPU_PROTEIN, res[i]);
        complete_row(p->rows + i * SWGPU_NCODES, s20 + i * NSTD, res[i], observed[i], b62);
    }
    swgpu_matrix_destroy(b62);
    set_range(p);
    if (pct && (rc = set_figures(p, pct, info, relw, 1)) < 0) {
        swgpu_pssm_destroy(p);
        return rc;
    }
    *out = p;
    return SWGPU_OK;
}

int swgpu_pssm_get(const swgpu_pssm_t *p, swgpu_seq_t *out)
{
    if (!p || !out)
        return swgpu__fail(SWGPU_EINVAL, "PSSM: NULL argument");
    out->id = p->id;
    out->desc = "";
    out->res = p->res;
    out->len = p->len;
    return SWGPU_OK;
}

/*
 * psiblast's ASCII layout (-out_ascii_pssm): a blank line, the title, the
 * header of column letters (twice), one row per position - number, query
 * residue, 20 scores, 20 weighted observed percentages, the information
 * per position and the relative weight of gapless real matches to
 * pseudocounts (0 where unknown) - a blank line and the statistics (the
 * blank line always: swgpu_pssm_read takes a file without it for cut short).
 */
int swgpu_pssm_write(const swgpu_pssm_t *p, const swgpu_matrix_t *m, int gap_open,
                     int gap_extend, FILE *fp)
{
    if (!p || !fp)
        return swgpu__fail(SWGPU_EINVAL, "PSSM write: NULL argument");
    fputs("\nLast position-specific scoring matrix computed, weighted observed percentages "
          "rounded down, information per position, and relative weight of gapless real "
          "matches to pseudocounts\n         ", fp);
    for (int k = 0; k < 2 * NSTD; k++)
        fprintf(fp, "   %c", columns[k % NSTD]);
    fputc('\n', fp);
    for (size_t i = 0; i < p->len; i++) {
        fprintf(fp, "%5zu %c  ", i + 1, p->letters[i]);
        for (int c = 0; c < NSTD; c++)
            fprintf(fp, "%4d", (int)p->rows[i * SWGPU_NCODES + c]);
        fputc(' ', fp);
        for (int c = 0; c < NSTD; c++)
            fprintf(fp, "%4d", p->pct ? (int)p->pct[i * NSTD + c] : 0);
        fprintf(fp, "  %4.2f %4.2f\n", p->info ? p->info[i] : 0.0, p->relw ? p->relw[i] : 0.0);
    }
    fputc('\n', fp); /* the end of the matrix, statistics or not */
    swgpu_karlin_t std, psi;
    double lu, ku, hu, lp, kp, hp;
    if (m && swgpu_matrix_alphabet(m) == SWGPU_PROTEIN &&
        swgpu_karlin_lookup(m, gap_open, gap_extend, &std) == SWGPU_OK &&
        swgpu_pssm_karlin(p, m, gap_open, gap_extend, &psi) == SWGPU_OK &&
        swgpu__matrix_ideal_karlin(m, &lu, &ku, &hu) == SWGPU_OK &&
        pssm_ungapped(p, &lp, &kp, &hp) == SWGPU_OK)
        fprintf(fp, "                      K         Lambda\n"
                    "Standard Ungapped    %6.4f     %6.4f\n"
                    "Standard Gapped      %6.4f     %6.4f\n"
                    "PSI Ungapped         %6.4f     %6.4f\n"
                    "PSI Gapped           %6.4f     %6.4f\n",
                ku, lu, std.K, std.lambda, kp, lp, psi.K, psi.lambda);
    if (fflush(fp) != 0 || ferror(fp))
        return swgpu__fail(SWGPU_EIO, "PSSM write: %s", strerror(errno));
    return SWGPU_OK;
}
