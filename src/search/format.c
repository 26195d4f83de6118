/*
 * format.c - output writers: BLAST tabular (formats 6 and 7, with BLAST's
 * custom column lists) and a readable pairwise view ("pair").
 *
 * Tabular rows (formats 6 and 7) follow BLAST+:
 *  - fields separated by one tab, one row per hit, best hit first;
 *  - coordinates 1-based and inclusive: qstart = qbeg + 1, qend = qend;
 *  - pident = 100 * nident / length with 3 decimals ("%.3f");
 *  - evalue: "0.0" below 1e-180; "%.2e" below 0.0009 ("1.23e-50");
 *    "%.3f" below 0.1; "%.2f" below 1; "%.1f" below 10; "%.0f" above;
 *  - bitscore: "%4.1f" up to 99.9 (so values below 10 keep BLAST's leading
 *    space, " 9.8"); the integer part ("%3ld") up to 99999; "%5.3e" above.
 *  - qseqid, qacc and qaccver all print the query's id (the first word of
 *    its header; likewise sseqid/sacc/saccver); stitle prints "id desc".
 *    A subject has one header, so salltitles prints stitle and sallseqid
 *    sseqid (BLAST joins a database entry's several deflines with "<>"
 *    and ';').
 *    Control bytes in names and descriptions are escaped (put_text).
 *  - a DNA hit on the subject's minus strand has sstart > send (BLAST's
 *    convention), qseq/sseq/btop read the subject's reverse complement,
 *    sstrand is "plus" or "minus" ("N/A" for protein, as blastp prints it).
 *  - mismatch counts aligned non-identical columns, gapopen gap openings,
 *    gaps gap columns, positive the aligned columns whose residues are
 *    identical or score > 0 in the matrix (for PSSM queries too, as
 *    psiblast counts them); ppos = 100 * positive / length ("%.2f");
 *    qcovhsp = 100 * (qend - qstart + 1) / qlen as BLAST+ rounds it: to
 *    the nearest integer below 99, truncated above (99.7 prints 99, so
 *    100 means the whole query); qcovs is the same over the union of the
 *    query intervals of the subject's reported HSPs (--max-hsps; with one
 *    alignment per subject it equals qcovhsp); cigar is "12M2I30M" (I: query
 *    only, D: target only); btop is BLAST's trace (runs of identities as
 *    numbers, other columns as query letter then subject letter, '-' for a
 *    gap).
 *  - a hit without an alignment (opts.no_align) prints "N/A" in every
 *    column that needs one.
 * Format 7 writes before each query's rows, as BLAST does:
 *      # SWGPU <version>
 *      # Query: <id> <description>
 *      # Database: <name>
 *      # Fields: <BLAST's names of the columns>     (only if hits > 0)
 *      # <N> hits found
 * and after the last query "# SWGPU processed <N> queries".  The default
 * columns are BLAST+'s: qaccver saccver pident length mismatch gapopen
 * qstart qend sstart send evalue bitscore.  "std" stands for them in a
 * column list; a column named twice is printed once (as BLAST does).
 *
 * The pairwise view, per query: "Query:", "Length:", "Database:" lines, then
 * "No hits found" or per hit a header (target id and description, length,
 * score, bits, E-value, identities/positives/gaps with the alignment length
 * and rounded percentages; a subject's further HSPs, --max-hsps, follow its
 * first from the "Score:" line, without id and length again) and the
 * alignment in blocks of 60 columns:
 *      Query   1 MKVLA-GIV 8
 *                ||| + |||
 *      Target 12 MKVIAAGIV 20
 * with the 1-based positions of the first and last residue of each line
 * (a line holding only gaps repeats the previous position) and a middle
 * line of '|' identical, '+' positive score, ' ' otherwise.  DNA hits add
 * "Strand: Plus/Plus" or "Strand: Plus/Minus"; on the minus strand the
 * Target lines show the subject's reverse complement, their positions
 * counting down on the subject.
 */
#include "search/search.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum outfmt_kind { FMT_TAB = 6, FMT_TAB_COMMENTS = 7, FMT_CSV = 10, FMT_PAIR = 100 };

typedef enum {
    COL_QSEQID, COL_QACC, COL_QACCVER, COL_QLEN,
    COL_SSEQID, COL_SACC, COL_SACCVER, COL_STITLE, COL_SLEN,
    COL_QSTART, COL_QEND, COL_SSTART, COL_SEND,
    COL_QSEQ, COL_SSEQ,
    COL_EVALUE, COL_BITSCORE, COL_SCORE,
    COL_LENGTH, COL_PIDENT, COL_NIDENT, COL_MISMATCH, COL_POSITIVE,
    COL_GAPOPEN, COL_GAPS, COL_BTOP, COL_CIGAR, COL_SSTRAND,
    COL_QCOVHSP, COL_QCOVS, COL_PPOS, COL_SALLTITLES, COL_SALLSEQID,
    NCOLS
} col_t;

/* name on the command line, BLAST's title in "# Fields:", flags */
enum { NEED_ALN = 1, NEED_TEXT = 2 };
static const struct {
    const char *name, *title;
    int need;
} columns[NCOLS] = {
    [COL_QSEQID] = {"qseqid", "query id", 0},
    [COL_QACC] = {"qacc", "query acc.", 0},
    [COL_QACCVER] = {"qaccver", "query acc.ver", 0},
    [COL_QLEN] = {"qlen", "query length", 0},
    [COL_SSEQID] = {"sseqid", "subject id", 0},
    [COL_SACC] = {"sacc", "subject acc.", 0},
    [COL_SACCVER] = {"saccver", "subject acc.ver", 0},
    [COL_STITLE] = {"stitle", "subject title", 0},
    [COL_SLEN] = {"slen", "subject length", 0},
    [COL_QSTART] = {"qstart", "q. start", NEED_ALN},
    [COL_QEND] = {"qend", "q. end", NEED_ALN},
    [COL_SSTART] = {"sstart", "s. start", NEED_ALN},
    [COL_SEND] = {"send", "s. end", NEED_ALN},
    [COL_QSEQ] = {"qseq", "query seq", NEED_ALN | NEED_TEXT},
    [COL_SSEQ] = {"sseq", "subject seq", NEED_ALN | NEED_TEXT},
    [COL_EVALUE] = {"evalue", "evalue", 0},
    [COL_BITSCORE] = {"bitscore", "bit score", 0},
    [COL_SCORE] = {"score", "score", 0},
    [COL_LENGTH] = {"length", "alignment length", NEED_ALN},
    [COL_PIDENT] = {"pident", "% identity", NEED_ALN},
    [COL_NIDENT] = {"nident", "identical", NEED_ALN},
    [COL_MISMATCH] = {"mismatch", "mismatches", NEED_ALN},
    [COL_POSITIVE] = {"positive", "positives", NEED_ALN | NEED_TEXT},
    [COL_GAPOPEN] = {"gapopen", "gap opens", NEED_ALN},
    [COL_GAPS] = {"gaps", "gaps", NEED_ALN},
    [COL_BTOP] = {"btop", "BTOP", NEED_ALN | NEED_TEXT},
    [COL_CIGAR] = {"cigar", "cigar", NEED_ALN},
    [COL_SSTRAND] = {"sstrand", "subject strand", 0},
    [COL_QCOVHSP] = {"qcovhsp", "% query coverage per hsp", NEED_ALN},
    [COL_QCOVS] = {"qcovs", "% query coverage per subject", NEED_ALN},
    [COL_PPOS] = {"ppos", "% positives", NEED_ALN | NEED_TEXT},
    [COL_SALLTITLES] = {"salltitles", "subject titles", 0},
    [COL_SALLSEQID] = {"sallseqid", "subject ids", 0},
};

static const col_t default_columns[] = {
    COL_QACCVER, COL_SACCVER, COL_PIDENT, COL_LENGTH, COL_MISMATCH, COL_GAPOPEN,
    COL_QSTART, COL_QEND, COL_SSTART, COL_SEND, COL_EVALUE, COL_BITSCORE,
};

#define DEFAULT_DBNAME "unnamed"

struct swgpu_outfmt {
    enum outfmt_kind kind;
    int ncol;
    col_t col[NCOLS];
    int need_text; /* some column needs the aligned residues walked */
    char *dbname;  /* NULL: DEFAULT_DBNAME */
};

/* ------------------------------------------------------------- parsing */

static int add_column(swgpu_outfmt_t *f, col_t c)
{
    for (int i = 0; i < f->ncol; i++)
        if (f->col[i] == c)
            return 0; /* BLAST prints a repeated column once */
    f->col[f->ncol++] = c;
    if (columns[c].need & NEED_TEXT)
        f->need_text = 1;
    return 0;
}

static void add_defaults(swgpu_outfmt_t *f)
{
    for (size_t i = 0; i < sizeof default_columns / sizeof default_columns[0]; i++)
        add_column(f, default_columns[i]);
}

int swgpu_outfmt_parse(const char *spec, swgpu_outfmt_t **out)
{
    swgpu_outfmt_t *f = NULL;
    char *copy = NULL;
    int rc = SWGPU_OK;
    if (!out)
        return swgpu__fail(SWGPU_EINVAL, "outfmt: NULL argument");
    *out = NULL;
    if (!spec)
        return swgpu__fail(SWGPU_EINVAL, "outfmt: no format given");
    f = calloc(1, sizeof *f);
    copy = strdup(spec);
    if (!f || !copy) {
        rc = swgpu__fail(SWGPU_ENOMEM, "outfmt: out of memory");
        goto fail;
    }
    /* the format, then its columns separated by spaces or commas */
    const char *sep = " \t\r\n", *colsep = " \t\r\n,";
    char *save = NULL, *tok = strtok_r(copy, sep, &save);
    if (!tok) {
        rc = swgpu__fail(SWGPU_EINVAL, "outfmt: empty format; expected 6, 7, 10 or pair");
        goto fail;
    }
    if (!strcmp(tok, "6"))
        f->kind = FMT_TAB;
    else if (!strcmp(tok, "7"))
        f->kind = FMT_TAB_COMMENTS;
    else if (!strcmp(tok, "10"))
        f->kind = FMT_CSV;
    else if (!strcmp(tok, "pair"))
        f->kind = FMT_PAIR;
    else {
        rc = swgpu__fail(SWGPU_EINVAL, "outfmt: unknown format '%s'; expected 6, 7, 10 or pair",
                         tok);
        goto fail;
    }
    while ((tok = strtok_r(NULL, colsep, &save))) {
        if (f->kind == FMT_PAIR) {
            rc = swgpu__fail(SWGPU_EINVAL, "outfmt: format pair takes no columns ('%s')", tok);
            goto fail;
        }
        if (!strcmp(tok, "std")) {
            add_defaults(f);
            continue;
        }
        int c;
        for (c = 0; c < NCOLS; c++)
            if (!strcmp(tok, columns[c].name))
                break;
        if (c == NCOLS) {
            rc = swgpu__fail(SWGPU_EINVAL, "outfmt: unknown column '%s'", tok);
            goto fail;
        }
        add_column(f, (col_t)c);
    }
    if (f->kind != FMT_PAIR && f->ncol == 0)
        add_defaults(f);
    if (f->kind == FMT_PAIR)
        f->need_text = 1;
    free(copy);
    *out = f;
    return SWGPU_OK;
fail:
    free(copy);
    free(f);
    return rc;
}

int swgpu_outfmt_set_dbname(swgpu_outfmt_t *f, const char *name)
{
    if (!f)
        return swgpu__fail(SWGPU_EINVAL, "outfmt: NULL format");
    char *copy = NULL;
    if (name && !(copy = strdup(name)))
        return swgpu__fail(SWGPU_ENOMEM, "outfmt: out of memory");
    free(f->dbname);
    f->dbname = copy;
    return SWGPU_OK;
}

void swgpu_outfmt_destroy(swgpu_outfmt_t *f)
{
    if (!f)
        return;
    free(f->dbname);
    free(f);
}

/* ----------------------------------------------------- number formatting */

/* E-value as BLAST+ writes it in tabular output. */
static void fmt_evalue(char *buf, size_t size, double e)
{
    if (e < 1.0e-180)
        snprintf(buf, size, "0.0");
    else if (e < 0.0009)
        snprintf(buf, size, "%.2e", e);
    else if (e < 0.1)
        snprintf(buf, size, "%.3f", e);
    else if (e < 1.0)
        snprintf(buf, size, "%.2f", e);
    else if (e < 10.0)
        snprintf(buf, size, "%.1f", e);
    else
        snprintf(buf, size, "%.0f", e);
}

/* Bit score as BLAST+ writes it in tabular output. */
static void fmt_bits(char *buf, size_t size, double b)
{
    if (b > 99999)
        snprintf(buf, size, "%5.3e", b);
    else if (b > 99.9)
        snprintf(buf, size, "%3ld", (long)b);
    else
        snprintf(buf, size, "%4.1f", b);
}

static int percent(int64_t part, int64_t whole)
{
    return whole > 0 ? (int)floor(100.0 * (double)part / (double)whole + 0.5) : 0;
}

/* ------------------------------------------------------- the alignment */

/* What one hit's alignment looks like, walked once from its CIGAR. */
typedef struct {
    char *qtext, *ttext, *mid; /* aligned residues with '-', middle line */
    size_t cap;
    int64_t positives;
    char *btop;
    size_t btop_cap;
} walk_t;

static int grow(char **p, size_t *cap, size_t need)
{
    if (need <= *cap)
        return 0;
    size_t c = *cap ? *cap : 256;
    while (c < need)
        c *= 2;
    char *q = realloc(*p, c);
    if (!q)
        return -1;
    *p = q;
    *cap = c;
    return 0;
}

static int walk_reserve(walk_t *w, size_t len)
{
    if (len + 1 <= w->cap)
        return 0;
    size_t cap = w->cap, c2 = w->cap, c3 = w->cap;
    if (grow(&w->qtext, &cap, len + 1) || grow(&w->ttext, &c2, len + 1) ||
        grow(&w->mid, &c3, len + 1))
        return -1;
    w->cap = cap;
    return 0;
}

static void walk_free(walk_t *w)
{
    free(w->qtext);
    free(w->ttext);
    free(w->mid);
    free(w->btop);
}

/*
 * Fill the aligned strings, the middle line, the positives count and BTOP
 * for hit h of query q against target t.  SWGPU_EINVAL if the CIGAR runs
 * off either sequence.
 */
static int walk_alignment(walk_t *w, const swgpu_aln_t *a, const swgpu_seq_t *q,
                          swgpu_alphabet_t qa, const swgpu_seq_t *t, swgpu_alphabet_t ta,
                          const swgpu_matrix_t *m)
{
    size_t len = 0;
    for (size_t k = 0; k < a->n_cigar; k++)
        len += SWGPU_CIGAR_LEN(a->cigar[k]);
    if (walk_reserve(w, len) || grow(&w->btop, &w->btop_cap, 2 * len + 32))
        return swgpu__fail(SWGPU_ENOMEM, "outfmt: out of memory for an alignment of %zu columns",
                           len);
    int64_t i = a->qbeg, j = a->tbeg;
    size_t col = 0, bl = 0, run = 0;
    w->positives = 0;
    for (size_t k = 0; k < a->n_cigar; k++) {
        unsigned op = SWGPU_CIGAR_OP(a->cigar[k]);
        uint32_t n = SWGPU_CIGAR_LEN(a->cigar[k]);
        for (uint32_t r = 0; r < n; r++, col++) {
            int adv_q = op != SWGPU_CIGAR_D, adv_t = op != SWGPU_CIGAR_I;
            if ((adv_q && (i < 0 || (uint64_t)i >= q->len)) ||
                (adv_t && (j < 0 || (uint64_t)j >= t->len)) || op > SWGPU_CIGAR_D)
                return swgpu__fail(SWGPU_EINVAL,
                                   "outfmt: query %s, target %s: the alignment runs off a "
                                   "sequence (CIGAR element %zu)", q->id, t->id, k);
            char qc = adv_q ? swgpu_decode(qa, q->res[i]) : '-';
            char tc = adv_t ? swgpu_decode(ta, t->res[j]) : '-';
            char mc = ' ';
            if (adv_q && adv_t) {
                if (q->res[i] == t->res[j])
                    mc = '|';
                else if (m && swgpu_matrix_score(m, q->res[i], t->res[j]) > 0)
                    mc = '+';
                if (mc != ' ')
                    w->positives++;
            }
            w->qtext[col] = qc;
            w->ttext[col] = tc;
            w->mid[col] = mc;
            if (mc == '|') {
                run++;
            } else {
                if (run)
                    bl += (size_t)snprintf(w->btop + bl, w->btop_cap - bl, "%zu", run);
                run = 0;
                w->btop[bl++] = qc;
                w->btop[bl++] = tc;
            }
            i += adv_q;
            j += adv_t;
        }
    }
    if (run)
        bl += (size_t)snprintf(w->btop + bl, w->btop_cap - bl, "%zu", run);
    w->btop[bl] = '\0';
    w->qtext[col] = w->ttext[col] = w->mid[col] = '\0';
    return SWGPU_OK;
}

/* ------------------------------------------------------------- writing */

typedef struct {
    const swgpu_outfmt_t *f;
    FILE *fp;
    const swgpu_db_t *db;
    const swgpu_matrix_t *m;
    swgpu_alphabet_t qa, ta;
    walk_t w;
    uint8_t *rc;      /* a minus-strand hit's subject, reverse complemented */
    size_t rc_cap;
    int64_t covs;     /* the hit's subject's query residues covered by its HSPs (qcovs) */
} writer_t;


#define put_text swgpu_put_name

/* "id" or "id desc", escaped */
static void put_title(FILE *fp, const char *id, const char *desc)
{
    put_text(fp, id);
    if (desc && *desc) {
        fputc(' ', fp);
        put_text(fp, desc);
    }
}

static void put_cigar(FILE *fp, const swgpu_aln_t *a)
{
    for (size_t k = 0; k < a->n_cigar; k++)
        fprintf(fp, "%lu%c", (unsigned long)SWGPU_CIGAR_LEN(a->cigar[k]),
                "MID?"[SWGPU_CIGAR_OP(a->cigar[k]) & 3]);
}

/* BLAST+'s query coverage in percent: rounded below 99, truncated above */
static int query_coverage(int64_t covered, size_t qlen)
{
    double p = qlen ? 100.0 * (double)covered / (double)qlen : 0.0;
    return (int)(p < 99 ? p + 0.5 : p);
}

static void put_column(writer_t *wr, col_t c, const swgpu_seq_t *q, const swgpu_seq_t *t,
                       const swgpu_hit_t *h)
{
    FILE *fp = wr->fp;
    const swgpu_aln_t *a = &h->aln;
    char buf[64];
    if ((columns[c].need & NEED_ALN) && a->n_cigar == 0) {
        fputs("N/A", fp);
        return;
    }
    switch (c) {
    case COL_QSEQID: case COL_QACC: case COL_QACCVER:
        put_text(fp, q->id);
        break;
    case COL_SSEQID: case COL_SACC: case COL_SACCVER: case COL_SALLSEQID:
        put_text(fp, t->id);
        break;
    case COL_STITLE: case COL_SALLTITLES:
        put_title(fp, t->id, t->desc);
        break;
    case COL_SSTRAND:
        fputs(wr->ta != SWGPU_DNA ? "N/A" : h->minus ? "minus" : "plus", fp);
        break;
    case COL_QLEN: fprintf(fp, "%zu", q->len); break;
    case COL_SLEN: fprintf(fp, "%zu", t->len); break;
    case COL_QSTART: fprintf(fp, "%lld", (long long)a->qbeg + 1); break;
    case COL_QEND: fprintf(fp, "%lld", (long long)a->qend); break;
    /* the minus strand: sstart > send, as BLAST prints it */
    case COL_SSTART: fprintf(fp, "%lld", (long long)(h->minus ? a->tend : a->tbeg + 1)); break;
    case COL_SEND: fprintf(fp, "%lld", (long long)(h->minus ? a->tbeg + 1 : a->tend)); break;
    case COL_QSEQ: fputs(wr->w.qtext, fp); break;
    case COL_SSEQ: fputs(wr->w.ttext, fp); break;
    case COL_EVALUE:
        fmt_evalue(buf, sizeof buf, h->evalue);
        fputs(buf, fp);
        break;
    case COL_BITSCORE:
        fmt_bits(buf, sizeof buf, h->bits);
        fputs(buf, fp);
        break;
    case COL_SCORE: fprintf(fp, "%ld", (long)h->score); break;
    case COL_LENGTH: fprintf(fp, "%lld", (long long)a->length); break;
    case COL_PIDENT:
        fprintf(fp, "%.3f",
                a->length > 0 ? ((double)a->n_ident) / (double)a->length * 100 : 0.0);
        break;
    case COL_NIDENT: fprintf(fp, "%lld", (long long)a->n_ident); break;
    case COL_MISMATCH: fprintf(fp, "%lld", (long long)a->n_mismatch); break;
    case COL_POSITIVE: fprintf(fp, "%lld", (long long)wr->w.positives); break;
    case COL_GAPOPEN: fprintf(fp, "%lld", (long long)a->n_gapopen); break;
    case COL_GAPS: fprintf(fp, "%lld", (long long)a->n_gaps); break;
    case COL_BTOP: fputs(wr->w.btop, fp); break;
    case COL_CIGAR: put_cigar(fp, a); break;
    case COL_QCOVHSP: fprintf(fp, "%d", query_coverage(a->qend - a->qbeg, q->len)); break;
    case COL_QCOVS: fprintf(fp, "%d", query_coverage(wr->covs, q->len)); break;
    case COL_PPOS:
        fprintf(fp, "%.2f",
                a->length > 0 ? (double)wr->w.positives / (double)a->length * 100 : 0.0);
        break;
    default: break;
    }
}

static void put_fields_line(writer_t *wr)
{
    fputs("# Fields: ", wr->fp);
    for (int i = 0; i < wr->f->ncol; i++)
        fprintf(wr->fp, "%s%s", i ? ", " : "", columns[wr->f->col[i]].title);
    fputc('\n', wr->fp);
}

static const char *dbname(const swgpu_outfmt_t *f)
{
    return f->dbname ? f->dbname : DEFAULT_DBNAME;
}

static int digits(int64_t v)
{
    int d = 1;
    while (v >= 10) {
        v /= 10;
        d++;
    }
    return d;
}

/* One hit in the pairwise view: header, then blocks of 60 columns.  A
 * minus-strand hit shows the subject's reverse complement, its positions
 * counting down on the subject as stored (BLAST's Plus/Minus). */
static void put_pair_hit(writer_t *wr, const swgpu_seq_t *t, const swgpu_hit_t *h)
{
    enum { WIDTH = 60 };
    FILE *fp = wr->fp;
    const swgpu_aln_t *a = &h->aln;
    char ebuf[64];
    fmt_evalue(ebuf, sizeof ebuf, h->evalue);
    if (h->hsp == 0) { /* a subject's further HSPs follow under its title */
        fputc('>', fp);
        put_title(fp, t->id, t->desc);
        fprintf(fp, "\nLength: %zu\n", t->len);
    }
    fprintf(fp, "Score: %ld (%.1f bits), E-value: %s\n", (long)h->score, h->bits, ebuf);
    if (wr->ta == SWGPU_DNA)
        fprintf(fp, "Strand: Plus/%s\n", h->minus ? "Minus" : "Plus");
    if (a->n_cigar == 0) {
        fputs("(no alignment computed)\n\n", fp);
        return;
    }
    fprintf(fp, "Identities: %lld/%lld (%d%%), Positives: %lld/%lld (%d%%), Gaps: %lld/%lld (%d%%)\n\n",
            (long long)a->n_ident, (long long)a->length, percent(a->n_ident, a->length),
            (long long)wr->w.positives, (long long)a->length, percent(wr->w.positives, a->length),
            (long long)a->n_gaps, (long long)a->length, percent(a->n_gaps, a->length));

    size_t len = strlen(wr->w.qtext);
    /* residues before the line, on the strand shown */
    int64_t qpos = a->qbeg, tpos = h->minus ? (int64_t)t->len - a->tend : a->tbeg;
    int w = digits(a->qend > a->tend ? a->qend : a->tend);
    for (size_t c0 = 0; c0 < len; c0 += WIDTH) {
        size_t n = len - c0 < WIDTH ? len - c0 : WIDTH;
        int64_t qn = 0, tn = 0;
        for (size_t k = 0; k < n; k++) {
            qn += wr->w.qtext[c0 + k] != '-';
            tn += wr->w.ttext[c0 + k] != '-';
        }
        /* first and last residue on the line; a line of gaps only shows the
         * previous position twice */
        fprintf(fp, "Query  %*lld %.*s %lld\n", w, (long long)(qn ? qpos + 1 : qpos), (int)n,
                wr->w.qtext + c0, (long long)(qpos + qn));
        size_t mn = n;
        while (mn > 0 && wr->w.mid[c0 + mn - 1] == ' ')
            mn--;
        fprintf(fp, "%*s%.*s\n", 8 + w, "", (int)mn, wr->w.mid + c0);
        int64_t first = tn ? tpos + 1 : tpos, last = tpos + tn;
        if (h->minus) { /* positions on the subject as stored */
            first = tn ? (int64_t)t->len - tpos : (int64_t)t->len - tpos + 1;
            last = (int64_t)t->len - tpos - tn + 1;
        }
        fprintf(fp, "Target %*lld %.*s %lld\n\n", w, (long long)first, (int)n, wr->w.ttext + c0,
                (long long)last);
        qpos += qn;
        tpos += tn;
    }
}

/* The query residues that the HSPs of hit k's subject cover (the union of
 * their query intervals): k's group is its subject's first hit (hsp 0) and
 * the further HSPs after it (swgpu_hit_t.hsp). */
static int64_t subject_coverage(const swgpu_query_result_t *qr, size_t k)
{
    size_t a = k, b = k + 1;
    while (a > 0 && qr->hits[a].hsp > 0 && qr->hits[a - 1].target == qr->hits[k].target)
        a--;
    while (b < qr->n_hits && qr->hits[b].hsp > 0 && qr->hits[b].target == qr->hits[k].target)
        b++;
    int64_t covered = 0, upto = 0;
    for (;;) { /* the intervals in order of their begins, merged */
        const swgpu_aln_t *next = NULL;
        for (size_t x = a; x < b; x++) {
            const swgpu_aln_t *y = &qr->hits[x].aln;
            if (y->n_cigar && y->qend > upto && (!next || y->qbeg < next->qbeg ||
                                                 (y->qbeg == next->qbeg && y->qend > next->qend)))
                next = y;
        }
        if (!next)
            return covered;
        int64_t from = next->qbeg > upto ? next->qbeg : upto;
        covered += next->qend - from;
        upto = next->qend;
    }
}

/* One query's block: q its view (a PSSM's: its query residues), round its
 * round of an iterated search (0: none).  Positives are the columns of
 * identical residues or of a positive score in the matrix m, for a PSSM
 * query too: psiblast 2.12 counts them so (docs/profile-search.md). */
static int write_query(writer_t *wr, const swgpu_query_result_t *qr, const swgpu_seq_t *qv,
                       int round)
{
    const swgpu_outfmt_t *f = wr->f;
    FILE *fp = wr->fp;
    swgpu_seq_t q = *qv;
    int rc;
    const char *qdesc = q.desc ? q.desc : "";

    if (f->kind == FMT_TAB_COMMENTS) {
        fprintf(fp, "# SWGPU %s\n", SWGPU_VERSION);
        if (round)
            fprintf(fp, "# Iteration: %d\n", round);
        fputs("# Query: ", fp);
        put_title(fp, q.id, qdesc);
        fputs("\n# Database: ", fp);
        put_text(fp, dbname(f));
        fputc('\n', fp);
        if (qr->n_hits)
            put_fields_line(wr);
        fprintf(fp, "# %zu hits found\n", qr->n_hits);
    } else if (f->kind == FMT_PAIR) {
        if (round)
            fprintf(fp, "Results from round %d\n\n", round);
        fputs("Query: ", fp);
        put_title(fp, q.id, qdesc);
        fprintf(fp, "\nLength: %zu\nDatabase: ", q.len);
        put_text(fp, dbname(f));
        fputs("\n\n", fp);
        if (!qr->n_hits)
            fputs("No hits found\n\n", fp);
    }

    for (size_t k = 0; k < qr->n_hits; k++) {
        const swgpu_hit_t *h = &qr->hits[k];
        swgpu_seq_t t;
        rc = swgpu_db_get(wr->db, h->target, &t);
        if (rc < 0)
            return swgpu__fail(SWGPU_EINVAL, "outfmt: query %s, hit %zu names target %zu of %zu",
                               q.id, k, h->target, swgpu_db_size(wr->db));
        if (f->need_text && h->aln.n_cigar) {
            swgpu_aln_t a = h->aln;
            if (h->minus) { /* the subject's reverse complement, and the interval on it */
                if (t.len > wr->rc_cap) {
                    uint8_t *nb = realloc(wr->rc, t.len);
                    if (!nb)
                        return swgpu__fail(SWGPU_ENOMEM, "outfmt: out of memory for %zu residues",
                                           t.len);
                    wr->rc = nb;
                    wr->rc_cap = t.len;
                }
                swgpu_dna_revcomp(t.res, t.len, wr->rc);
                t.res = wr->rc;
                a.tbeg = (int64_t)t.len - h->aln.tend;
                a.tend = (int64_t)t.len - h->aln.tbeg;
            }
            rc = walk_alignment(&wr->w, &a, &q, wr->qa, &t, wr->ta, wr->m);
            if (rc < 0)
                return rc;
        }
        if (f->kind == FMT_PAIR) {
            put_pair_hit(wr, &t, h);
            continue;
        }
        wr->covs = subject_coverage(qr, k);
        for (int c = 0; c < f->ncol; c++) {
            if (c) /* format 10: BLAST's CSV, commas and no quoting */
                fputc(f->kind == FMT_CSV ? ',' : '\t', fp);
            put_column(wr, f->col[c], &q, &t, h);
        }
        fputc('\n', fp);
    }
    return SWGPU_OK;
}

/* the end of a write: the closing line of format 7, then the stream's state */
static int finish(writer_t *wr, int rc, size_t nq)
{
    if (rc == SWGPU_OK && wr->f->kind == FMT_TAB_COMMENTS)
        fprintf(wr->fp, "# SWGPU processed %zu queries\n", nq);
    walk_free(&wr->w);
    free(wr->rc);
    wr->rc = NULL;
    if (rc < 0)
        return rc;
    if (fflush(wr->fp) != 0 || ferror(wr->fp))
        return swgpu__fail(SWGPU_EIO, "outfmt: write error: %s", strerror(errno));
    return SWGPU_OK;
}

int swgpu_outfmt_write(const swgpu_outfmt_t *f, FILE *fp, const swgpu_search_result_t *r,
                       const swgpu_seqset_t *queries, const swgpu_db_t *db,
                       const swgpu_matrix_t *m, const swgpu_opts_t *opts)
{
    (void)opts;
    if (!f || !fp || !r || !queries || !db)
        return swgpu__fail(SWGPU_EINVAL, "outfmt: NULL argument");
    writer_t wr = {f, fp, db, m, swgpu_seqset_alphabet(queries), swgpu_db_alphabet(db), {0}, NULL, 0, 0};
    int rc = SWGPU_OK;
    for (size_t i = 0; i < r->n_queries && rc == SWGPU_OK; i++) {
        swgpu_seq_t q;
        if (swgpu_seqset_get(queries, r->q[i].query, &q) < 0)
            return swgpu__fail(SWGPU_EINVAL, "outfmt: result %zu names query %zu of %zu", i,
                               r->q[i].query, swgpu_seqset_size(queries));
        rc = write_query(&wr, &r->q[i], &q, 0);
        if (rc == SWGPU_OK && ferror(fp))
            break;
    }
    return finish(&wr, rc, r->n_queries);
}

int swgpu_outfmt_write_pssm(const swgpu_outfmt_t *f, FILE *fp, const swgpu_search_result_t *r,
                            const swgpu_pssm_t *const *pssms, size_t n, const swgpu_db_t *db,
                            const swgpu_matrix_t *m, const swgpu_opts_t *opts)
{
    (void)opts;
    if (!f || !fp || !r || (!pssms && n) || !db)
        return swgpu__fail(SWGPU_EINVAL, "outfmt: NULL argument");
    writer_t wr = {f, fp, db, m, SWGPU_PROTEIN, swgpu_db_alphabet(db), {0}, NULL, 0, 0};
    int rc = SWGPU_OK;
    for (size_t i = 0; i < r->n_queries && rc == SWGPU_OK; i++) {
        swgpu_seq_t q;
        size_t k = r->q[i].query;
        if (k >= n || swgpu_pssm_get(pssms[k], &q) < 0)
            return swgpu__fail(SWGPU_EINVAL, "outfmt: result %zu names PSSM %zu of %zu", i, k,
                               n);
        rc = write_query(&wr, &r->q[i], &q, 0);
        if (rc == SWGPU_OK && ferror(fp))
            break;
    }
    return finish(&wr, rc, r->n_queries);
}

int swgpu_outfmt_write_iterate(const swgpu_outfmt_t *f, FILE *fp,
                               const swgpu_iterate_result_t *it, const swgpu_seqset_t *queries,
                               const swgpu_pssm_t *const *pssms, int all_rounds,
                               const swgpu_db_t *db, const swgpu_matrix_t *m,
                               const swgpu_opts_t *opts)
{
    (void)opts;
    if (!f || !fp || !it || (!queries && !pssms && it->n_queries) || !db)
        return swgpu__fail(SWGPU_EINVAL, "outfmt: NULL argument");
    writer_t wr = {f, fp, db, m, SWGPU_PROTEIN, swgpu_db_alphabet(db), {0}, NULL, 0, 0};
    int rc = SWGPU_OK;
    size_t blocks = 0, n = it->n_queries;
    for (size_t i = 0; i < n && rc == SWGPU_OK; i++) {
        swgpu_seq_t q;
        rc = queries ? swgpu_seqset_get(queries, i, &q) : swgpu_pssm_get(pssms[i], &q);
        if (rc < 0)
            break;
        size_t last = it->last_round[i];
        for (size_t k = all_rounds ? 0 : last - 1; k < last && rc == SWGPU_OK; k++) {
            rc = write_query(&wr, &it->round[k]->q[i], &q, all_rounds ? (int)k + 1 : 0);
            blocks++;
        }
        if (rc == SWGPU_OK && ferror(fp))
            break;
    }
    return finish(&wr, rc, blocks);
}
