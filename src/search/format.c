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
 *    its header); the subject's id columns are swgpu_db_ids()'s: from a
 *    FASTA or makedb database sseqid, sacc, saccver and sallseqid print its
 *    id and stitle and salltitles "id desc"; from a BLAST database they are
 *    what blastp 2.12 prints (-parse_seqids: the preferred Seq-id, its
 *    accession, a sequence's several deflines joined by ';' and "<>";
 *    without: the id and the header line as stored).
 *  - staxid and staxids as the BLAST database's deflines have them ("N/A",
 *    "0" or "N/A" without); ssciname, scomname, sblastname and sskingdom
 *    name staxid's taxon from NCBI's taxdb (swgpu_taxdb_open; "N/A" when
 *    there is none or it lacks the taxon); sscinames and scomnames name each
 *    taxid of staxids, sblastnames and sskingdoms list the distinct names
 *    found, sorted (all as blastp 2.12 prints them).
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
 *
 * Formats 0 (BLAST's report), 5 (XML), 15 (JSON) and 17 (SAM) have files
 * of their own (format_report.c, format_xml.c, format_json.c,
 * format_sam.c); what the writers share is in format_util.c.
 */
#include "search/format_int.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef enum {
    COL_QSEQID, COL_QACC, COL_QACCVER, COL_QLEN,
    COL_SSEQID, COL_SACC, COL_SACCVER, COL_STITLE, COL_SLEN,
    COL_QSTART, COL_QEND, COL_SSTART, COL_SEND,
    COL_QSEQ, COL_SSEQ,
    COL_EVALUE, COL_BITSCORE, COL_SCORE,
    COL_LENGTH, COL_PIDENT, COL_NIDENT, COL_MISMATCH, COL_POSITIVE,
    COL_GAPOPEN, COL_GAPS, COL_BTOP, COL_CIGAR, COL_SSTRAND,
    COL_QCOVHSP, COL_QCOVS, COL_PPOS, COL_SALLTITLES, COL_SALLSEQID,
    COL_STAXID, COL_SSCINAME, COL_SCOMNAME, COL_SBLASTNAME, COL_SSKINGDOM,
    COL_STAXIDS, COL_SSCINAMES, COL_SCOMNAMES, COL_SBLASTNAMES, COL_SSKINGDOMS,
    NCOLS
} col_t;

/* name on the command line, BLAST's title in "# Fields:", flags */
enum { NEED_ALN = 1, NEED_TEXT = 2, NEED_TAXDB = 4 };
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
    [COL_STAXID] = {"staxid", "subject tax id", 0},
    [COL_SSCINAME] = {"ssciname", "subject sci name", NEED_TAXDB},
    [COL_SCOMNAME] = {"scomname", "subject com names", NEED_TAXDB},
    [COL_SBLASTNAME] = {"sblastname", "subject blast name", NEED_TAXDB},
    [COL_SSKINGDOM] = {"sskingdom", "subject super kingdom", NEED_TAXDB},
    [COL_STAXIDS] = {"staxids", "subject tax ids", 0},
    [COL_SSCINAMES] = {"sscinames", "subject sci names", NEED_TAXDB},
    [COL_SCOMNAMES] = {"scomnames", "subject com names", NEED_TAXDB},
    [COL_SBLASTNAMES] = {"sblastnames", "subject blast names", NEED_TAXDB},
    [COL_SSKINGDOMS] = {"sskingdoms", "subject super kingdoms", NEED_TAXDB},
};

static const col_t default_columns[] = {
    COL_QACCVER, COL_SACCVER, COL_PIDENT, COL_LENGTH, COL_MISMATCH, COL_GAPOPEN,
    COL_QSTART, COL_QEND, COL_SSTART, COL_SEND, COL_EVALUE, COL_BITSCORE,
};

/* ------------------------------------------------------------- parsing */

static int add_column(swgpu_outfmt_t *f, col_t c)
{
    for (int i = 0; i < f->ncol; i++)
        if (f->col[i] == (int)c)
            return 0; /* BLAST prints a repeated column once */
    f->col[f->ncol++] = c;
    if (columns[c].need & NEED_TEXT)
        f->need_text = 1;
    if (columns[c].need & NEED_TAXDB)
        f->need_taxdb = 1;
    return 0;
}

static void add_defaults(swgpu_outfmt_t *f)
{
    for (size_t i = 0; i < sizeof default_columns / sizeof default_columns[0]; i++)
        add_column(f, default_columns[i]);
}

#define FORMATS "0, 5, 6, 7, 10, 15, 17 or pair"

_Static_assert(NCOLS <= FMT_MAX_COLS, "FMT_MAX_COLS holds every column");

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
        rc = swgpu__fail(SWGPU_EINVAL, "outfmt: empty format; expected " FORMATS);
        goto fail;
    }
    static const struct {
        const char *name;
        enum outfmt_kind kind;
    } kinds[] = {{"0", FMT_REPORT}, {"5", FMT_XML}, {"6", FMT_TAB}, {"7", FMT_TAB_COMMENTS},
                 {"10", FMT_CSV}, {"15", FMT_JSON}, {"17", FMT_SAM}, {"pair", FMT_PAIR}};
    size_t ki;
    for (ki = 0; ki < sizeof kinds / sizeof kinds[0]; ki++)
        if (!strcmp(tok, kinds[ki].name))
            break;
    if (ki == sizeof kinds / sizeof kinds[0]) {
        rc = swgpu__fail(SWGPU_EINVAL, "outfmt: unknown format '%s'; expected " FORMATS, tok);
        goto fail;
    }
    f->kind = kinds[ki].kind;
    int tabular = f->kind == FMT_TAB || f->kind == FMT_TAB_COMMENTS || f->kind == FMT_CSV;
    while ((tok = strtok_r(NULL, colsep, &save))) {
        if (!tabular) {
            rc = swgpu__fail(SWGPU_EINVAL, "outfmt: format %s takes no columns ('%s')",
                             kinds[ki].name, tok);
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
    if (tabular && f->ncol == 0)
        add_defaults(f);
    if (!tabular)
        f->need_text = 1;
    free(copy);
    *out = f;
    return SWGPU_OK;
fail:
    free(copy);
    free(f);
    return rc;
}

/* *slot = a copy of s (NULL: none), the old one freed */
static int set_copy(swgpu_outfmt_t *f, char **slot, const char *s)
{
    if (!f)
        return swgpu__fail(SWGPU_EINVAL, "outfmt: NULL format");
    char *copy = NULL;
    if (s && !(copy = strdup(s)))
        return swgpu__fail(SWGPU_ENOMEM, "outfmt: out of memory");
    free(*slot);
    *slot = copy;
    return SWGPU_OK;
}

int swgpu_outfmt_set_dbname(swgpu_outfmt_t *f, const char *name)
{
    return set_copy(f, f ? &f->dbname : NULL, name);
}

int swgpu_outfmt_set_taxdb(swgpu_outfmt_t *f, const char *dir)
{
    return set_copy(f, f ? &f->taxdb_dir : NULL, dir);
}

void swgpu_outfmt_destroy(swgpu_outfmt_t *f)
{
    if (!f)
        return;
    free(f->taxdb_dir);
    free(f->dbname);
    free(f);
}

/* ------------------------------------------------------------- writing */

typedef fmt_writer_t writer_t;


#define put_text swgpu_put_name

#define put_title swgpu__fmt_put_title
#define fmt_evalue swgpu__fmt_evalue
#define fmt_bits swgpu__fmt_bits
#define percent swgpu__fmt_percent

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

/* the taxonomy columns: staxid / staxids as the database has them; a
 * name of each taxid, as blastp 2.12 prints them: one per taxid of
 * staxids (N/A for one taxdb lacks) for sscinames and scomnames; the
 * distinct names found, sorted, for sblastnames and sskingdoms (N/A when
 * none); the singular columns name staxid's taxon */
enum { TAX_SCI, TAX_COM, TAX_BLAST, TAX_KINGDOM };

static void taxon_name(const swgpu_taxon_t *x, int which, const char **s, size_t *n)
{
    const char *p[4] = {x->sciname, x->comname, x->blastname, x->kingdom};
    size_t l[4] = {x->sciname_len, x->comname_len, x->blastname_len, x->kingdom_len};
    *s = p[which];
    *n = l[which];
}

static int by_name(const void *a, const void *b)
{
    const swgpu_taxon_t *x = a, *y = b; /* the names to sort are in blastname */
    size_t n = x->blastname_len < y->blastname_len ? x->blastname_len : y->blastname_len;
    int c = memcmp(x->blastname, y->blastname, n);
    return c ? c : (x->blastname_len > y->blastname_len) - (x->blastname_len < y->blastname_len);
}

static void put_taxa(writer_t *wr, const char *taxids, int which, int per_taxid)
{
    enum { MAXT = 256 }; /* taxids of one subject named (blastp's nr entries have fewer) */
    swgpu_taxon_t found[MAXT];
    size_t nf = 0, printed = 0;
    for (const char *p = taxids; *p && (per_taxid || nf < MAXT);) {
        char *end;
        long long v = strtoll(p, &end, 10);
        swgpu_taxon_t x;
        int ok = swgpu_taxdb_lookup(wr->tax, v, &x);
        if (per_taxid) {
            const char *s = "N/A";
            size_t n = 3;
            if (ok)
                taxon_name(&x, which, &s, &n);
            fprintf(wr->fp, "%s%.*s", printed++ ? ";" : "", (int)n, s);
        } else if (ok) { /* keep the name asked for in blastname's place, to sort */
            taxon_name(&x, which, &x.blastname, &x.blastname_len);
            found[nf++] = x;
        }
        p = *end == ';' ? end + 1 : end + strlen(end);
    }
    if (per_taxid)
        return;
    qsort(found, nf, sizeof *found, by_name);
    for (size_t k = 0; k < nf; k++)
        if (!k || by_name(&found[k], &found[k - 1]))
            fprintf(wr->fp, "%s%.*s", printed++ ? ";" : "", (int)found[k].blastname_len,
                    found[k].blastname);
    if (!printed)
        fputs("N/A", wr->fp);
}

/* the subject columns that come from the database's deflines */
static void put_subject(writer_t *wr, col_t c, const swgpu_seq_t *t, const swgpu_hit_t *h)
{
    FILE *fp = wr->fp;
    swgpu_seq_ids_t ids;
    swgpu_db_ids(wr->db, h->target, &ids);
    switch (c) {
    case COL_SSEQID: put_text(fp, ids.seqid); break;
    case COL_SACC: put_text(fp, ids.acc); break;
    case COL_SACCVER: put_text(fp, ids.accver); break;
    case COL_SALLSEQID: put_text(fp, ids.allseqid); break;
    case COL_STITLE:
        if (ids.title)
            put_text(fp, ids.title);
        else
            put_title(fp, t->id, t->desc);
        break;
    case COL_SALLTITLES:
        if (ids.alltitles)
            put_text(fp, ids.alltitles);
        else
            put_title(fp, t->id, t->desc);
        break;
    case COL_STAXID: fputs(ids.taxid, fp); break;
    case COL_STAXIDS: fputs(ids.taxids, fp); break;
    case COL_SSCINAME: put_taxa(wr, ids.taxid, TAX_SCI, 1); break;
    case COL_SCOMNAME: put_taxa(wr, ids.taxid, TAX_COM, 1); break;
    case COL_SBLASTNAME: put_taxa(wr, ids.taxid, TAX_BLAST, 1); break;
    case COL_SSKINGDOM: put_taxa(wr, ids.taxid, TAX_KINGDOM, 1); break;
    case COL_SSCINAMES: put_taxa(wr, ids.taxids, TAX_SCI, 1); break;
    case COL_SCOMNAMES: put_taxa(wr, ids.taxids, TAX_COM, 1); break;
    case COL_SBLASTNAMES: put_taxa(wr, ids.taxids, TAX_BLAST, 0); break;
    case COL_SSKINGDOMS: put_taxa(wr, ids.taxids, TAX_KINGDOM, 0); break;
    default: break;
    }
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
    case COL_STITLE: case COL_SALLTITLES:
    case COL_STAXID: case COL_SSCINAME: case COL_SCOMNAME: case COL_SBLASTNAME:
    case COL_SSKINGDOM: case COL_STAXIDS: case COL_SSCINAMES: case COL_SCOMNAMES:
    case COL_SBLASTNAMES: case COL_SSKINGDOMS:
        put_subject(wr, c, t, h);
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

#define dbname swgpu__fmt_dbname

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
    int w = swgpu__fmt_digits(a->qend > a->tend ? a->qend : a->tend);
    for (size_t c0 = 0; c0 < len; c0 += WIDTH) {
        size_t n = len - c0 < WIDTH ? len - c0 : WIDTH;
        fmt_span_t sp;
        swgpu__fmt_line_span(&wr->w, c0, n, h->minus, t->len, &qpos, &tpos, &sp);
        fprintf(fp, "Query  %*lld %.*s %lld\n", w, (long long)sp.qfirst, (int)n, wr->w.qtext + c0,
                (long long)sp.qlast);
        size_t mn = n;
        while (mn > 0 && wr->w.mid[c0 + mn - 1] == ' ')
            mn--;
        fprintf(fp, "%*s%.*s\n", 8 + w, "", (int)mn, wr->w.mid + c0);
        fprintf(fp, "Target %*lld %.*s %lld\n\n", w, (long long)sp.tfirst, (int)n,
                wr->w.ttext + c0, (long long)sp.tlast);
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
static int write_query(writer_t *wr, const fmt_block_t *blk)
{
    const swgpu_query_result_t *qr = blk->qr;
    const swgpu_seq_t *qv = blk->q;
    int round = blk->round;
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
        if ((rc = swgpu__fmt_target(wr, &q, k, h, &t)) < 0)
            return rc;
        if (f->need_text && h->aln.n_cigar && (rc = swgpu__fmt_walk_hit(wr, &q, &t, h)) < 0)
            return rc;
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

/* the taxonomy names, when a column prints them */
static int open_taxdb(writer_t *wr)
{
    return wr->f->need_taxdb ? swgpu_taxdb_open(wr->f->taxdb_dir, &wr->tax) : SWGPU_OK;
}

/* One block in the writer's format. */
static int write_block(writer_t *wr, const fmt_block_t *b)
{
    int rc;
    switch (wr->f->kind) {
    case FMT_REPORT: rc = swgpu__report_block(wr, b); break;
    case FMT_XML: rc = swgpu__xml_block(wr, b); break;
    case FMT_JSON: rc = swgpu__json_block(wr, b); break;
    case FMT_SAM: rc = swgpu__sam_block(wr, b); break;
    default: rc = write_query(wr, b); break;
    }
    wr->started = 1;
    wr->blocks++;
    return rc;
}

/* the end of a write: the format's closing lines, then the stream's state */
static int finish(writer_t *wr, int rc)
{
    if (rc == SWGPU_OK) {
        switch (wr->f->kind) {
        case FMT_TAB_COMMENTS:
            fprintf(wr->fp, "# SWGPU processed %zu queries\n", wr->blocks);
            break;
        case FMT_REPORT: rc = swgpu__report_end(wr); break;
        case FMT_XML: rc = swgpu__xml_end(wr); break;
        case FMT_JSON: rc = swgpu__json_end(wr); break;
        case FMT_SAM: rc = swgpu__sam_end(wr); break;
        default: break;
        }
    }
    swgpu__fmt_walk_free(&wr->w);
    free(wr->rc);
    free(wr->ivs);
    wr->rc = NULL;
    wr->ivs = NULL;
    swgpu_taxdb_destroy(wr->tax);
    wr->tax = NULL;
    if (rc < 0)
        return rc;
    if (fflush(wr->fp) != 0 || ferror(wr->fp))
        return swgpu__fail(SWGPU_EIO, "outfmt: write error: %s", strerror(errno));
    return SWGPU_OK;
}

/* Formats 0, 5, 15 and 17 need every hit's alignment: checked before a
 * line is written. */
static int check_alns(const writer_t *wr, const swgpu_query_result_t *qr, size_t i)
{
    enum outfmt_kind k = wr->f->kind;
    if (k != FMT_REPORT && k != FMT_XML && k != FMT_JSON && k != FMT_SAM)
        return SWGPU_OK;
    for (size_t j = 0; j < qr->n_hits; j++)
        if (!qr->hits[j].aln.n_cigar) {
            swgpu_seq_t q = {0};
            q.id = "";
            if (wr->query_at(wr, i, &q) < 0)
                q.id = "";
            return swgpu__fmt_need_aln(wr, &q, &qr->hits[j]);
        }
    return SWGPU_OK;
}

static int query_at(const writer_t *wr, size_t i, swgpu_seq_t *q)
{
    size_t k = wr->res ? wr->res->q[i].query : i;
    int rc = wr->queries ? swgpu_seqset_get(wr->queries, k, q)
             : k < wr->npssm ? swgpu_pssm_get(wr->pssms[k], q) : SWGPU_EINVAL;
    if (rc < 0)
        return swgpu__fail(SWGPU_EINVAL, "outfmt: result %zu names query %zu, not in the input",
                           i, k);
    return SWGPU_OK;
}

static void writer_init(writer_t *wr, const swgpu_outfmt_t *f, FILE *fp, const swgpu_db_t *db,
                        const swgpu_matrix_t *m, const swgpu_opts_t *opts, swgpu_alphabet_t qa,
                        size_t nq)
{
    memset(wr, 0, sizeof *wr);
    wr->f = f;
    wr->fp = fp;
    wr->db = db;
    wr->m = m;
    wr->opts = opts;
    wr->qa = qa;
    wr->ta = swgpu_db_alphabet(db);
    wr->nqueries = nq;
    wr->query_at = query_at;
}

/* Result i's query (wr->queries), or PSSM (wr->pssms). */
static int result_query(const writer_t *wr, size_t i, swgpu_seq_t *q)
{
    size_t k = wr->res->q[i].query;
    if (wr->queries) {
        if (swgpu_seqset_get(wr->queries, k, q) < 0)
            return swgpu__fail(SWGPU_EINVAL, "outfmt: result %zu names query %zu of %zu", i, k,
                               swgpu_seqset_size(wr->queries));
    } else if (k >= wr->npssm || swgpu_pssm_get(wr->pssms[k], q) < 0) {
        return swgpu__fail(SWGPU_EINVAL, "outfmt: result %zu names PSSM %zu of %zu", i, k,
                           wr->npssm);
    }
    return SWGPU_OK;
}

/* The blocks of results [from, to), in order. */
static int write_range(writer_t *wr, size_t from, size_t to)
{
    int rc = SWGPU_OK;
    for (size_t i = from; i < to && rc == SWGPU_OK; i++) {
        swgpu_seq_t q;
        if ((rc = result_query(wr, i, &q)) < 0)
            break;
        fmt_block_t b = {&wr->res->q[i], &q, i + 1, 0, 1, 1};
        rc = write_block(wr, &b);
        if (rc == SWGPU_OK && ferror(wr->fp))
            break;
    }
    return rc;
}

/* ---- formats 6, 7, 10 and the pairwise view on several threads ----
 * Each query's block there depends on that query alone: with many hits,
 * slices of consecutive queries are formatted by threads into memory and
 * written in order, one round of slices at a time (memory: a round's
 * text, ~16 MiB at most).  The output is the one thread's, byte for byte,
 * up to the first failing block. */
enum { PAR_MIN_HITS = 2048, PAR_MAX_THREADS = 16 };
/* a slice's text, estimated (par_bytes): at least 64 KiB, at most 1 MiB, so
 * that a round holds at most ~16 MiB whatever the result's size */
#define PAR_SLICE_MIN ((uint64_t)64 << 10)
#define PAR_SLICE_MAX ((uint64_t)1 << 20)

/* the text of query result qr, roughly: a line per hit, and the aligned
 * residues where the format prints them */
static uint64_t par_bytes(const writer_t *wr, const swgpu_query_result_t *qr)
{
    const int pair = wr->f->kind == FMT_PAIR, text = pair || wr->f->need_text;
    uint64_t b = 256;
    for (size_t k = 0; k < qr->n_hits; k++)
        b += 160 + (text ? (uint64_t)(pair ? 4 : 3) * (uint64_t)qr->hits[k].aln.length : 0);
    return b;
}

typedef struct {
    writer_t wr;     /* the thread's writer: its own scratch, fp in memory */
    size_t from, to; /* results [from, to) */
    char *buf;       /* the text (open_memstream) */
    size_t len;
    int rc;
    char msg[512];   /* the error, read on this thread (swgpu_last_error is per thread) */
} slice_t;

/* slice j of the round (swgpu__par_for) */
static void slice_run(void *ctx, size_t j)
{
    slice_t *s = (slice_t *)ctx + j;
    s->wr.fp = open_memstream(&s->buf, &s->len);
    if (!s->wr.fp)
        s->rc = swgpu__fail(SWGPU_ENOMEM, "outfmt: out of memory");
    else {
        s->rc = write_range(&s->wr, s->from, s->to);
        if (fclose(s->wr.fp) != 0 && s->rc == SWGPU_OK)
            s->rc = swgpu__fail(SWGPU_ENOMEM, "outfmt: out of memory");
    }
    if (s->rc < 0)
        snprintf(s->msg, sizeof s->msg, "%s", swgpu_last_error());
    swgpu__fmt_walk_free(&s->wr.w);
    free(s->wr.rc);
    free(s->wr.ivs);
}

/* The results on several threads when the format and the hits allow (*done
 * 1), else nothing (*done 0: write them on one). */
static int write_par(writer_t *wr, int *done)
{
    const swgpu_search_result_t *r = wr->res;
    enum outfmt_kind k = wr->f->kind;
    size_t n = r->n_queries, hits = 0;
    uint64_t total = 0;
    *done = 0;
    if ((k != FMT_TAB && k != FMT_TAB_COMMENTS && k != FMT_CSV && k != FMT_PAIR) || wr->tax || n < 2)
        return SWGPU_OK;
    for (size_t i = 0; i < n; i++) {
        hits += r->q[i].n_hits;
        total += par_bytes(wr, &r->q[i]);
    }
    int nt = wr->opts && wr->opts->threads > 0 ? wr->opts->threads : swgpu__ncores();
    nt = nt > PAR_MAX_THREADS ? PAR_MAX_THREADS : nt;
    if (nt < 2 || hits < PAR_MIN_HITS)
        return SWGPU_OK;
    slice_t *S = calloc((size_t)nt, sizeof *S);
    if (!S)
        return SWGPU_OK; /* one thread writes them */
    *done = 1;
    uint64_t per = total / ((uint64_t)nt * 8); /* a slice's text: 8 rounds, or more */
    per = per < PAR_SLICE_MIN ? PAR_SLICE_MIN : per > PAR_SLICE_MAX ? PAR_SLICE_MAX : per;
    int rc = SWGPU_OK;
    for (size_t i = 0; i < n && rc == SWGPU_OK && !ferror(wr->fp);) {
        size_t ns = 0;
        for (; ns < (size_t)nt && i < n; ns++) {
            slice_t *s = &S[ns];
            memset(s, 0, sizeof *s);
            s->wr = *wr;
            s->wr.w = (fmt_walk_t){0};
            s->wr.rc = NULL;
            s->wr.rc_cap = 0;
            s->wr.ivs = NULL;
            s->wr.ivs_cap = 0;
            s->wr.blocks = 0;
            s->from = i;
            for (uint64_t b = 0; i < n && (b < per || i == s->from); i++)
                b += par_bytes(wr, &r->q[i]);
            s->to = i;
        }
        swgpu__par_for(ns, nt, slice_run, S);
        for (size_t j = 0; j < ns; j++) {
            if (rc == SWGPU_OK) {
                if (S[j].len)
                    fwrite(S[j].buf, 1, S[j].len, wr->fp);
                wr->blocks += S[j].wr.blocks;
                wr->started |= S[j].wr.started;
                if (S[j].rc < 0)
                    rc = swgpu__fail(S[j].rc, "%s", S[j].msg);
            }
            free(S[j].buf);
        }
    }
    free(S);
    return rc;
}

/* Every result's block, on several threads where write_par can. */
static int write_results(writer_t *wr)
{
    int rc = SWGPU_OK, done = 0;
    for (size_t i = 0; i < wr->res->n_queries && rc == SWGPU_OK; i++)
        rc = check_alns(wr, &wr->res->q[i], i);
    if (rc == SWGPU_OK)
        rc = write_par(wr, &done);
    if (rc == SWGPU_OK && !done)
        rc = write_range(wr, 0, wr->res->n_queries);
    return rc;
}

int swgpu_outfmt_write(const swgpu_outfmt_t *f, FILE *fp, const swgpu_search_result_t *r,
                       const swgpu_seqset_t *queries, const swgpu_db_t *db,
                       const swgpu_matrix_t *m, const swgpu_opts_t *opts)
{
    if (!f || !fp || !r || !queries || !db)
        return swgpu__fail(SWGPU_EINVAL, "outfmt: NULL argument");
    writer_t wr;
    writer_init(&wr, f, fp, db, m, opts, swgpu_seqset_alphabet(queries), r->n_queries);
    wr.res = r;
    wr.queries = queries;
    int rc = open_taxdb(&wr);
    if (rc == SWGPU_OK)
        rc = write_results(&wr);
    return finish(&wr, rc);
}

int swgpu_outfmt_write_pssm(const swgpu_outfmt_t *f, FILE *fp, const swgpu_search_result_t *r,
                            const swgpu_pssm_t *const *pssms, size_t n, const swgpu_db_t *db,
                            const swgpu_matrix_t *m, const swgpu_opts_t *opts)
{
    if (!f || !fp || !r || (!pssms && n) || !db)
        return swgpu__fail(SWGPU_EINVAL, "outfmt: NULL argument");
    writer_t wr;
    writer_init(&wr, f, fp, db, m, opts, SWGPU_PROTEIN, r->n_queries);
    wr.iterated = 1; /* a PSSM search: psiblast's */
    wr.res = r;
    wr.pssms = pssms;
    wr.npssm = n;
    int rc = open_taxdb(&wr);
    if (rc == SWGPU_OK)
        rc = write_results(&wr);
    return finish(&wr, rc);
}

int swgpu_outfmt_write_iterate(const swgpu_outfmt_t *f, FILE *fp,
                               const swgpu_iterate_result_t *it, const swgpu_seqset_t *queries,
                               const swgpu_pssm_t *const *pssms, int all_rounds,
                               const swgpu_db_t *db, const swgpu_matrix_t *m,
                               const swgpu_opts_t *opts)
{
    if (!f || !fp || !it || (!queries && !pssms && it->n_queries) || !db)
        return swgpu__fail(SWGPU_EINVAL, "outfmt: NULL argument");
    writer_t wr;
    writer_init(&wr, f, fp, db, m, opts, SWGPU_PROTEIN, it->n_queries);
    wr.iterated = 1;
    wr.queries = queries;
    wr.pssms = pssms;
    wr.npssm = queries ? 0 : it->n_queries;
    int rc = open_taxdb(&wr);
    size_t n = it->n_queries;
    for (size_t i = 0; i < n && rc == SWGPU_OK; i++)
        for (size_t k = all_rounds ? 0 : it->last_round[i] - 1;
             k < it->last_round[i] && rc == SWGPU_OK; k++)
            rc = check_alns(&wr, &it->round[k]->q[i], i);
    for (size_t i = 0; i < n && rc == SWGPU_OK; i++) {
        swgpu_seq_t q;
        rc = queries ? swgpu_seqset_get(queries, i, &q) : swgpu_pssm_get(pssms[i], &q);
        if (rc < 0)
            break;
        size_t last = it->last_round[i], first = all_rounds ? 0 : last - 1;
        for (size_t k = first; k < last && rc == SWGPU_OK; k++) {
            fmt_block_t b = {&it->round[k]->q[i], &q, i + 1, all_rounds ? (int)k + 1 : 0,
                             k == first, k + 1 == last};
            rc = write_block(&wr, &b);
        }
        if (rc == SWGPU_OK && ferror(fp))
            break;
    }
    return finish(&wr, rc);
}
