/*
 * write.c - the outputs of a long alignment (swgpu_align_long()) as
 * `swgpu align` writes them: the summary, SAM, wrapped pairwise text and an
 * SVG picture of the path (swgpu_long_write_*() in swgpu.h).
 *
 * Target coordinates are given on the target's forward strand: on the
 * minus strand high to low (BLAST style) in the summary and the pairwise
 * text, while SAM reverse-complements the query instead (flag 16).
 */
#include "long/long.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------- checks */

/* SWGPU_EINVAL (naming the writer `what`) unless r is a whole record whose
 * alignment lies in its sequences: the coordinates in range and the CIGAR,
 * when there is one, spanning exactly [qbeg, qend) and [tbeg, tend). */
static int check(const char *what, FILE *fp, const swgpu_long_record_t *r)
{
    const swgpu_aln_t *a;
    int64_t qn = 0, tn = 0;
    if (!fp || !r || !r->aln)
        return swgpu__fail(SWGPU_EINVAL, "%s: NULL argument", what);
    a = r->aln;
    if ((!r->query && r->query_len) || (!r->target && r->target_len) || (!a->cigar && a->n_cigar))
        return swgpu__fail(SWGPU_EINVAL, "%s: NULL sequence or CIGAR", what);
    if (r->alphabet != SWGPU_PROTEIN && r->alphabet != SWGPU_DNA)
        return swgpu__fail(SWGPU_EINVAL, "%s: the alphabet is not protein or DNA", what);
    if (r->minus && r->alphabet != SWGPU_DNA)
        return swgpu__fail(SWGPU_EINVAL, "%s: the minus strand of a protein", what);
    if (a->qbeg < 0 || a->qbeg > a->qend || (uint64_t)a->qend > r->query_len || a->tbeg < 0 ||
        a->tbeg > a->tend || (uint64_t)a->tend > r->target_len)
        return swgpu__fail(SWGPU_EINVAL,
                           "%s: the alignment's intervals (query %lld-%lld, target %lld-%lld) "
                           "are not in the sequences (%zu and %zu residues)", what,
                           (long long)a->qbeg, (long long)a->qend, (long long)a->tbeg,
                           (long long)a->tend, r->query_len, r->target_len);
    for (size_t k = 0; k < a->n_cigar; k++) {
        uint32_t op = SWGPU_CIGAR_OP(a->cigar[k]), len = SWGPU_CIGAR_LEN(a->cigar[k]);
        if (op > SWGPU_CIGAR_D)
            return swgpu__fail(SWGPU_EINVAL, "%s: CIGAR element %zu has op %u (not M, I or D)",
                               what, k, op);
        if (op != SWGPU_CIGAR_D)
            qn += len;
        if (op != SWGPU_CIGAR_I)
            tn += len;
    }
    if (a->n_cigar && (qn != a->qend - a->qbeg || tn != a->tend - a->tbeg))
        return swgpu__fail(SWGPU_EINVAL,
                           "%s: the CIGAR spans %lld query and %lld target residues, the "
                           "intervals %lld and %lld", what, (long long)qn, (long long)tn,
                           (long long)(a->qend - a->qbeg), (long long)(a->tend - a->tbeg));
    return SWGPU_OK;
}

/* the end of a write: the stream's error state (not flushed: the caller
 * closes the stream and sees what is still buffered fail there) */
static int done(const char *what, FILE *fp)
{
    if (ferror(fp))
        return swgpu__fail(SWGPU_EIO, "%s: write error: %s", what, strerror(errno));
    return SWGPU_OK;
}

/* 1-based target start/end on the forward strand (start > end on minus). */
static void target_range(const swgpu_long_record_t *r, long long *ts, long long *te)
{
    if (!r->minus) {
        *ts = r->aln->tbeg + 1;
        *te = r->aln->tend;
    } else {
        *ts = (long long)r->target_len - r->aln->tbeg;
        *te = (long long)r->target_len - r->aln->tend + 1;
    }
}

static void write_cigar(FILE *fp, const uint32_t *c, size_t n, int reverse)
{
    static const char ops[] = "MID";
    for (size_t k = 0; k < n; k++) {
        uint32_t x = c[reverse ? n - 1 - k : k];
        fprintf(fp, "%u%c", SWGPU_CIGAR_LEN(x), ops[SWGPU_CIGAR_OP(x) % 3]);
    }
}

static double percent(int64_t part, int64_t whole)
{
    return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

/* ------------------------------------------------------------ summary */

int swgpu_long_write_summary(FILE *fp, const swgpu_long_record_t *r,
                             const swgpu_long_record_t *other, int score_only)
{
    int rc = check("summary", fp, r);
    if (rc < 0)
        return rc;
    if (other && !other->aln)
        return swgpu__fail(SWGPU_EINVAL, "summary: the other strand has no alignment");
    const swgpu_aln_t *a = r->aln;
    long long ts, te;
    target_range(r, &ts, &te);
    fputs("query     ", fp);
    swgpu_put_name(fp, r->query_id);
    fprintf(fp, "\t%zu\ntarget    ", r->query_len);
    swgpu_put_name(fp, r->target_id);
    fprintf(fp, "\t%zu\n", r->target_len);
    if (r->alphabet == SWGPU_DNA)
        fprintf(fp, "strand    %s\n", r->minus ? "minus" : "plus");
    fprintf(fp, "score     %lld\n", (long long)a->score);
    if (other)
        fprintf(fp, "other_strand %s %lld\n", other->minus ? "minus" : "plus",
                (long long)other->aln->score);
    if (a->score == 0) {
        fprintf(fp, "alignment none\n");
        return done("summary", fp);
    }
    fprintf(fp, "query_range  %lld-%lld\n", (long long)a->qbeg + 1, (long long)a->qend);
    fprintf(fp, "target_range %lld-%lld\n", ts, te);
    if (score_only)
        return done("summary", fp);
    fprintf(fp, "length    %lld\n", (long long)a->length);
    fprintf(fp, "identity  %lld/%lld (%.2f%%)\n", (long long)a->n_ident, (long long)a->length,
            percent(a->n_ident, a->length));
    fprintf(fp, "mismatch  %lld\n", (long long)a->n_mismatch);
    fprintf(fp, "gapopen   %lld\n", (long long)a->n_gapopen);
    fprintf(fp, "gaps      %lld\n", (long long)a->n_gaps);
    fprintf(fp, "cigar     ");
    write_cigar(fp, a->cigar, a->n_cigar, 0);
    fputc('\n', fp);
    return done("summary", fp);
}

/* ---------------------------------------------------------------- SAM */

static void write_seq(FILE *fp, const uint8_t *x, size_t n, swgpu_alphabet_t alpha, int rc)
{
    static const uint8_t comp[15] = { 3, 2, 1, 0, 4, 6, 5, 8, 7, 9, 10, 14, 13, 12, 11 };
    for (size_t i = 0; i < n; i++) {
        uint8_t c = rc ? x[n - 1 - i] : x[i];
        if (rc && c < 15)
            c = comp[c];
        fputc(swgpu_decode(alpha, c), fp);
    }
}

static void sam_header(FILE *fp, const swgpu_long_record_t *r, int argc,
                       const char *const *argv)
{
    fputs("@HD\tVN:1.6\tSO:unsorted\n@SQ\tSN:", fp);
    swgpu_put_name(fp, r->target_id);
    fprintf(fp, "\tLN:%zu\n", r->target_len);
    fprintf(fp, "@PG\tID:swgpu\tPN:swgpu\tVN:%s", SWGPU_VERSION);
    for (int k = 0; k < argc; k++) {
        fputs(k ? " " : "\tCL:", fp);
        swgpu_put_name(fp, argv[k]);
    }
    fputc('\n', fp);
}

int swgpu_long_write_sam(FILE *fp, const swgpu_long_record_t *r, int argc,
                         const char *const *argv)
{
    int rc = check("sam", fp, r);
    if (rc < 0)
        return rc;
    if (argc < 0 || (argc > 0 && !argv))
        return swgpu__fail(SWGPU_EINVAL, "sam: %d words of command line", argc);
    for (int k = 0; k < argc; k++)
        if (!argv[k])
            return swgpu__fail(SWGPU_EINVAL, "sam: word %d of the command line is NULL", k);
    if (r->query_id && strlen(r->query_id) > 254) /* QNAME: 1 to 254 characters */
        return swgpu__fail(SWGPU_EINVAL,
                           "sam: the query's id (%s) is %zu characters long, more than SAM's "
                           "QNAME may hold (254)", r->query_id, strlen(r->query_id));
    const swgpu_aln_t *a = r->aln;
    sam_header(fp, r, argc, argv);
    if (a->score == 0 || a->n_cigar == 0) {
        swgpu_put_name(fp, r->query_id);
        fputs("\t4\t*\t0\t0\t*\t*\t0\t0\t", fp);
        write_seq(fp, r->query, r->query_len, r->alphabet, 0);
        fprintf(fp, "\t*\tAS:i:%lld\n", (long long)a->score);
        return done("sam", fp);
    }
    /* on minus, the record shows the reverse complement of the query
     * against the forward strand: the CIGAR reversed, the clips swapped */
    long long ts, te, lead, trail;
    target_range(r, &ts, &te);
    lead = r->minus ? (long long)r->query_len - a->qend : a->qbeg;
    trail = r->minus ? a->qbeg : (long long)r->query_len - a->qend;
    swgpu_put_name(fp, r->query_id);
    fprintf(fp, "\t%d\t", r->minus ? 16 : 0);
    swgpu_put_name(fp, r->target_id);
    fprintf(fp, "\t%lld\t255\t", r->minus ? te : ts);
    if (lead)
        fprintf(fp, "%lldS", lead);
    write_cigar(fp, a->cigar, a->n_cigar, r->minus);
    if (trail)
        fprintf(fp, "%lldS", trail);
    fprintf(fp, "\t*\t0\t0\t");
    write_seq(fp, r->query, r->query_len, r->alphabet, r->minus);
    fprintf(fp, "\t*\tAS:i:%lld\tNM:i:%lld\n", (long long)a->score,
            (long long)(a->n_mismatch + a->n_gaps));
    return done("sam", fp);
}

/* --------------------------------------------------------- pairwise */

enum { PAIR_W = 60 };

/* the pairwise text's block in progress: its three lines, the residues
 * consumed so far and where the block began */
typedef struct {
    char ql[PAIR_W + 1], ml[PAIR_W + 1], tl[PAIR_W + 1];
    int n;
    int64_t qi, ti, q0, t0;
} pair_block_t;

static void pair_column(pair_block_t *b, const swgpu_long_record_t *r, const swgpu_matrix_t *m,
                        uint32_t op)
{
    if (op == SWGPU_CIGAR_M) {
        uint8_t c = r->query[b->qi], d = r->target[b->ti];
        b->ql[b->n] = swgpu_decode(r->alphabet, c);
        b->tl[b->n] = swgpu_decode(r->alphabet, d);
        b->ml[b->n] = c == d ? '|' : swgpu_matrix_score(m, c, d) > 0 ? '+' : ' ';
        b->qi++;
        b->ti++;
    } else if (op == SWGPU_CIGAR_I) {
        b->ql[b->n] = swgpu_decode(r->alphabet, r->query[b->qi++]);
        b->tl[b->n] = '-';
        b->ml[b->n] = ' ';
    } else {
        b->ql[b->n] = '-';
        b->tl[b->n] = swgpu_decode(r->alphabet, r->target[b->ti++]);
        b->ml[b->n] = ' ';
    }
    b->n++;
}

static void pair_flush(FILE *fp, pair_block_t *b, const swgpu_long_record_t *r)
{
    long long tb = r->minus ? (long long)r->target_len - b->t0 : b->t0 + 1;
    long long tend = r->minus ? (long long)r->target_len - b->ti + 1 : b->ti;
    b->ql[b->n] = b->ml[b->n] = b->tl[b->n] = 0;
    fprintf(fp, "Query  %-10lld %s %lld\n", (long long)b->q0 + 1, b->ql, (long long)b->qi);
    fprintf(fp, "       %-10s %s\n", "", b->ml);
    fprintf(fp, "Target %-10lld %s %lld\n\n", tb, b->tl, tend);
    b->n = 0;
    b->q0 = b->qi;
    b->t0 = b->ti;
}

int swgpu_long_write_pair(FILE *fp, const swgpu_long_record_t *r, const swgpu_matrix_t *m)
{
    int rc = check("pair", fp, r);
    if (rc < 0)
        return rc;
    if (!m)
        return swgpu__fail(SWGPU_EINVAL, "pair: NULL matrix");
    const swgpu_aln_t *a = r->aln;
    pair_block_t b;
    b.n = 0;
    b.qi = b.q0 = a->qbeg;
    b.ti = b.t0 = a->tbeg;
    fputs("Query:  ", fp);
    swgpu_put_name(fp, r->query_id);
    fprintf(fp, " (%zu)\nTarget: ", r->query_len);
    swgpu_put_name(fp, r->target_id);
    fprintf(fp, " (%zu)%s\n", r->target_len, r->minus ? ", minus strand" : "");
    fprintf(fp, "Score = %lld, Identities = %lld/%lld (%.0f%%), Gaps = %lld/%lld (%.0f%%)\n\n",
            (long long)a->score, (long long)a->n_ident, (long long)a->length,
            percent(a->n_ident, a->length), (long long)a->n_gaps, (long long)a->length,
            percent(a->n_gaps, a->length));
    if (a->score == 0 || a->n_cigar == 0)
        return done("pair", fp);
    for (size_t k = 0; k < a->n_cigar; k++) {
        uint32_t op = SWGPU_CIGAR_OP(a->cigar[k]), len = SWGPU_CIGAR_LEN(a->cigar[k]);
        for (uint32_t x = 0; x < len; x++) {
            pair_column(&b, r, m, op);
            if (b.n == PAIR_W || (k + 1 == a->n_cigar && x + 1 == len))
                pair_flush(fp, &b, r);
        }
    }
    return done("pair", fp);
}

/* ---------------------------------------------------------------- SVG */

/* the picture's plot area and margins, in pixels */
static const double PW = 800, PH = 800, ML = 90, MT = 60, MR = 30, MB = 60;

static double nice_step(double range, int ticks)
{
    double raw = range / ticks, p = pow(10.0, floor(log10(raw > 0 ? raw : 1))), f = raw / p;
    return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * p;
}

static void fmt_pos(char *buf, size_t n, double v)
{
    if (v >= 1e6)
        snprintf(buf, n, "%gM", v / 1e6);
    else if (v >= 1e4)
        snprintf(buf, n, "%gk", v / 1e3);
    else
        snprintf(buf, n, "%g", v);
}

/* a name in XML text: markup characters as entities, control characters as
 * swgpu_put_name writes them (XML 1.0 has no way to hold most of them) */
static void xml_text(FILE *fp, const char *s)
{
    for (; s && *s; s++) {
        if (*s == '<') fputs("&lt;", fp);
        else if (*s == '>') fputs("&gt;", fp);
        else if (*s == '&') fputs("&amp;", fp);
        else if (*s == '"') fputs("&quot;", fp);
        else if ((unsigned char)*s < 0x20 || *s == 0x7f) {
            char c[2] = { *s, 0 };
            swgpu_put_name(fp, c);
        } else fputc(*s, fp);
    }
}

/* the frame, the title, the ticks of both axes and their labels */
static void svg_frame(FILE *fp, const swgpu_long_record_t *r, double sx, double sy)
{
    const swgpu_aln_t *a = r->aln;
    char buf[64];
    double step;
    fprintf(fp, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
                "font-family=\"sans-serif\" font-size=\"12\">\n",
            ML + PW + MR, MT + PH + MB);
    fprintf(fp, "<rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" fill=\"white\" "
                "stroke=\"black\"/>\n", ML, MT, PW, PH);
    fprintf(fp, "<text x=\"%.0f\" y=\"24\" text-anchor=\"middle\" font-size=\"14\">", ML + PW / 2);
    xml_text(fp, r->query_id);
    fputs(" vs ", fp);
    xml_text(fp, r->target_id);
    fprintf(fp, "%s: score %lld, identity %.2f%%</text>\n", r->minus ? " (minus strand)" : "",
            (long long)a->score, percent(a->n_ident, a->length));
    step = nice_step((double)r->target_len, 8);
    for (double v = 0; v <= (double)r->target_len; v += step) {
        double x = ML + v * sx;
        fmt_pos(buf, sizeof buf, v);
        fprintf(fp, "<line x1=\"%.1f\" y1=\"%.0f\" x2=\"%.1f\" y2=\"%.0f\" stroke=\"black\"/>"
                    "<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">%s</text>\n",
                x, MT + PH, x, MT + PH + 5, x, MT + PH + 20, buf);
    }
    step = nice_step((double)r->query_len, 8);
    for (double v = 0; v <= (double)r->query_len; v += step) {
        double y = MT + v * sy;
        fmt_pos(buf, sizeof buf, v);
        fprintf(fp, "<line x1=\"%.0f\" y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\" stroke=\"black\"/>"
                    "<text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\" dominant-baseline=\"middle\">%s</text>\n",
                ML - 5, y, ML, y, ML - 8, y, buf);
    }
    fprintf(fp, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">", ML + PW / 2, MT + PH + 45);
    xml_text(fp, r->target_id);
    fputs(" (target, forward strand)</text>\n", fp);
    fprintf(fp, "<text transform=\"translate(20,%.0f) rotate(-90)\" text-anchor=\"middle\">",
            MT + PH / 2);
    xml_text(fp, r->query_id);
    fputs(" (query)</text>\n", fp);
}

/* The path over target (x, forward coordinates) and query (y, top to
 * bottom), kept to points at least a pixel apart (a few thousand at most). */
static void svg_path(FILE *fp, const swgpu_long_record_t *r, double sx, double sy)
{
    const swgpu_aln_t *a = r->aln;
    double lx = -10, ly = -10;
    int64_t qi = a->qbeg, ti = a->tbeg;
    size_t npts = 0;
    fputs("<polyline fill=\"none\" stroke=\"#c0392b\" stroke-width=\"1.5\" points=\"", fp);
    for (size_t k = 0; k <= a->n_cigar; k++) {
        double tx = r->minus ? (double)r->target_len - (double)ti : (double)ti;
        double x = ML + tx * sx, y = MT + (double)qi * sy;
        if (k == 0 || k == a->n_cigar || fabs(x - lx) + fabs(y - ly) >= 1.0) {
            fprintf(fp, "%s%.1f,%.1f", npts ? " " : "", x, y);
            npts++;
            lx = x;
            ly = y;
        }
        if (k < a->n_cigar) {
            uint32_t op = SWGPU_CIGAR_OP(a->cigar[k]), len = SWGPU_CIGAR_LEN(a->cigar[k]);
            if (op != SWGPU_CIGAR_D)
                qi += len;
            if (op != SWGPU_CIGAR_I)
                ti += len;
        }
    }
    fputs("\"/>\n", fp);
}

int swgpu_long_write_svg(FILE *fp, const swgpu_long_record_t *r)
{
    int rc = check("svg", fp, r);
    if (rc < 0)
        return rc;
    const double sx = PW / (double)(r->target_len ? r->target_len : 1);
    const double sy = PH / (double)(r->query_len ? r->query_len : 1);
    svg_frame(fp, r, sx, sy);
    if (r->aln->score != 0 && r->aln->n_cigar != 0)
        svg_path(fp, r, sx, sy);
    fputs("</svg>\n", fp);
    return done("svg", fp);
}
