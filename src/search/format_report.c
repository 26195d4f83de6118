/*
 * format_report.c - format 0, BLAST's pairwise report as blastp / blastn
 * 2.12 print it: a header (program, reference, database), per query
 * "Query=", "Length=", the table of subjects ("Sequences producing
 * significant alignments", one line per subject with its best HSP's bit
 * score and E-value), per subject ">id desc", "Length=" and per HSP the
 * "Score = X bits (Y),  Expect = Z" and "Identities/Positives/Gaps" lines
 * (blastn: "Strand=Plus/Minus") and the alignment in blocks of 60 columns
 * (the middle line: the residue where identical, '+' where the matrix
 * scores > 0, blastn '|'); after each query its Karlin-Altschul parameters
 * (ungapped: of the query's composition against Robinson & Robinson's
 * frequencies, as BLAST+ computes them; gapped: the search's) and effective
 * search space, and at the end the database's size, matrix and gap costs.
 * Not as BLAST prints them: the program line ("SWGPU <version>"), no
 * "Posted date", no word-size lines (swgpu has no seeds), long subject
 * titles are not wrapped after ">".
 */
#include "search/format_int.h"
#include "stats/stats.h"

#include <stdlib.h>
#include <string.h>

enum { LINE_LEN = 68, WIDTH = 60 };

static void put_header(fmt_writer_t *wr)
{
    FILE *fp = wr->fp;
    uint64_t nseq, res;
    char a[32], b[32];
    swgpu__fmt_db_size(wr->db, &nseq, &res);
    swgpu__fmt_thousands(a, sizeof a, nseq);
    swgpu__fmt_thousands(b, sizeof b, res);
    fprintf(fp, "SWGPU %s\n\n\n", SWGPU_VERSION);
    fputs("Reference: Stephen F. Altschul, Thomas L. Madden, Alejandro A.\n"
          "Schaffer, Jinghui Zhang, Zheng Zhang, Webb Miller, and David J.\n"
          "Lipman (1997), \"Gapped BLAST and PSI-BLAST: a new generation of\n"
          "protein database search programs\", Nucleic Acids Res. 25:3389-3402.\n\n\n\n",
          fp);
    fputs("Database: ", fp);
    swgpu_put_name(fp, swgpu__fmt_dbname(wr->f));
    fprintf(fp, "\n           %s sequences; %s total letters\n\n\n\n", a, b);
}

/* The strings of the subject table's line of hit h, and their widths. */
static void table_strings(const swgpu_hit_t *h, char *bits, char *ev)
{
    swgpu__fmt_bits(bits, 32, h->bits);
    if (bits[0] == ' ') /* the report has no leading space */
        memmove(bits, bits + 1, strlen(bits));
    swgpu__fmt_evalue_report(ev, 32, h->evalue);
}

static int put_table(fmt_writer_t *wr, const fmt_block_t *b)
{
    FILE *fp = wr->fp;
    const swgpu_query_result_t *qr = b->qr;
    size_t wb = 6, we = 5; /* "(Bits)", "Value" */
    char bits[32], ev[32];
    for (size_t k = 0; k < qr->n_hits; k += swgpu__fmt_group(qr, k)) {
        table_strings(&qr->hits[k], bits, ev);
        if (strlen(bits) > wb)
            wb = strlen(bits);
        if (strlen(ev) > we)
            we = strlen(ev);
    }
    fprintf(fp, "%*sScore%*sE\n", LINE_LEN + 2, "", (int)(wb - 5 + 4), "");
    fprintf(fp, "%-*s (Bits)%*s  Value\n\n", LINE_LEN, "Sequences producing significant alignments:",
            (int)(wb - 6), "");
    for (size_t k = 0; k < qr->n_hits; k += swgpu__fmt_group(qr, k)) {
        const swgpu_hit_t *h = &qr->hits[k];
        swgpu_seq_t t;
        int rc = swgpu__fmt_target(wr, b->q, k, h, &t);
        if (rc < 0)
            return rc;
        /* the title, cut to 65 characters and "..." past 68 */
        char *title = NULL;
        size_t len = 0;
        FILE *ms = open_memstream(&title, &len);
        if (!ms)
            return swgpu__fail(SWGPU_ENOMEM, "outfmt 0: out of memory");
        swgpu__fmt_put_title(ms, t.id, t.desc);
        fclose(ms);
        if (len > LINE_LEN)
            fprintf(fp, "%.*s...", LINE_LEN - 3, title);
        else
            fprintf(fp, "%-*s", LINE_LEN, title);
        free(title);
        table_strings(h, bits, ev);
        fprintf(fp, "  %-*s  %-*s\n", (int)wb, bits, (int)we, ev);
    }
    fputs("\n\n", fp);
    return SWGPU_OK;
}

/* One HSP: its score lines, then its alignment in blocks of 60 columns. */
static void put_hsp(fmt_writer_t *wr, const swgpu_seq_t *t, const swgpu_hit_t *h)
{
    FILE *fp = wr->fp;
    const swgpu_aln_t *a = &h->aln;
    const fmt_walk_t *w = &wr->w;
    int dna = wr->ta == SWGPU_DNA;
    char bits[32], ev[32];
    table_strings(h, bits, ev);
    fprintf(fp, " Score = %s bits (%ld),  Expect = %s\n", bits, (long)h->score, ev);
    fprintf(fp, " Identities = %lld/%lld (%d%%), ", (long long)a->n_ident, (long long)a->length,
            swgpu__fmt_percent(a->n_ident, a->length));
    if (!dna)
        fprintf(fp, "Positives = %lld/%lld (%d%%), ", (long long)w->positives,
                (long long)a->length, swgpu__fmt_percent(w->positives, a->length));
    fprintf(fp, "Gaps = %lld/%lld (%d%%)\n", (long long)a->n_gaps, (long long)a->length,
            swgpu__fmt_percent(a->n_gaps, a->length));
    if (dna)
        fprintf(fp, " Strand=Plus/%s\n", h->minus ? "Minus" : "Plus");
    fputc('\n', fp);

    size_t len = strlen(w->qtext);
    int64_t qpos = a->qbeg, tpos = h->minus ? (int64_t)t->len - a->tend : a->tbeg;
    int64_t mx = a->qend > a->tend ? a->qend : a->tend;
    int nw = swgpu__fmt_digits(mx) + 2;
    for (size_t c0 = 0; c0 < len; c0 += WIDTH) {
        size_t n = len - c0 < WIDTH ? len - c0 : WIDTH;
        fmt_span_t sp;
        swgpu__fmt_line_span(w, c0, n, h->minus, t->len, &qpos, &tpos, &sp);
        fprintf(fp, "Query  %-*lld%.*s  %lld\n", nw, (long long)sp.qfirst, (int)n, w->qtext + c0,
                (long long)sp.qlast);
        fprintf(fp, "%*s", 7 + nw, "");
        for (size_t k = 0; k < n; k++) {
            char mc = w->mid[c0 + k];
            fputc(mc == '|' && !dna ? w->qtext[c0 + k] : mc, fp);
        }
        fprintf(fp, "\nSbjct  %-*lld%.*s  %lld\n\n", nw, (long long)sp.tfirst, (int)n,
                w->ttext + c0, (long long)sp.tlast);
    }
    fputs("\n", fp);
}

/* The ungapped lambda, K and H of the query's residues against subjects of
 * Robinson & Robinson's frequencies (DNA: 1/4 each base), as BLAST+ reports
 * them (-1: none). */
static int ungapped(const fmt_writer_t *wr, const swgpu_seq_t *q, double *lk)
{
    int lo = swgpu_matrix_min(wr->m), hi = swgpu_matrix_max(wr->m);
    int dna = wr->ta == SWGPU_DNA, nb = dna ? 4 : 20;
    double *prob = calloc((size_t)(hi - lo + 1), sizeof *prob);
    if (!prob)
        return -1;
    double sum = 0;
    for (size_t i = 0; i < q->len; i++)
        for (int b = 0; b < nb; b++) {
            double p = dna ? 0.25 : swgpu__robinson[b];
            prob[swgpu_matrix_score(wr->m, q->res[i], (uint8_t)b) - lo] += p;
            sum += p;
        }
    for (int s = lo; s <= hi && sum > 0; s++)
        prob[s - lo] /= sum;
    int rc = sum > 0 ? swgpu__ungapped_karlin(prob, lo, hi, &lk[0], &lk[1], &lk[2]) : -1;
    free(prob);
    return rc < 0 ? -1 : 0;
}

static void put_stats(fmt_writer_t *wr, const fmt_block_t *b)
{
    FILE *fp = wr->fp;
    const swgpu_karlin_t *k = &b->qr->karlin;
    int go, ge;
    swgpu__fmt_gaps(wr, &go, &ge);
    double G = go + ge, lk[3];
    if (wr->m && ungapped(wr, b->q, lk) == 0) {
        fputs(k->has_spouge ? "Lambda      K        H        a         alpha\n"
                            : "Lambda      K        H\n", fp);
        fprintf(fp, "%#8.3g %#8.3g %#8.3g ", lk[0], lk[1], lk[2]);
        if (k->has_spouge)
            fprintf(fp, "%#8.3g %#8.3g ", k->spouge.a + k->spouge.b / (2 * G),
                    k->spouge.alpha + k->spouge.beta / (2 * G));
        fputs("\n\nGapped\n", fp);
    }
    if (k->has_spouge) {
        fputs("Lambda      K        H        a         alpha    sigma\n", fp);
        fprintf(fp, "%#8.3g %#8.3g %#8.3g %#8.3g %#8.3g %#8.3g \n\n", k->lambda, k->K, k->H,
                k->spouge.a, k->spouge.alpha, k->spouge.sigma);
    } else {
        fputs("Lambda      K        H\n", fp);
        fprintf(fp, "%#8.3g %#8.3g %#8.3g \n\n", k->lambda, k->K, k->H);
    }
    int64_t L;
    double space;
    swgpu__fmt_search_space(wr, b->qr, b->q->len, &L, &space);
    fprintf(fp, "Effective search space used: %.0f\n\n\n", space);
}

int swgpu__report_block(fmt_writer_t *wr, const fmt_block_t *b)
{
    FILE *fp = wr->fp;
    const swgpu_query_result_t *qr = b->qr;
    int rc;
    if (!wr->started)
        put_header(wr);
    if (b->first) {
        fputs("Query= ", fp);
        swgpu__fmt_put_title(fp, b->q->id, b->q->desc);
        fprintf(fp, "\n\nLength=%zu\n", b->q->len);
    }
    if (b->round)
        fprintf(fp, "\nResults from round %d\n\n", b->round);
    if (!qr->n_hits) {
        fputs("\n\n***** No hits found *****\n\n\n\n", fp);
    } else if ((rc = put_table(wr, b)) < 0) {
        return rc;
    }
    for (size_t k = 0; k < qr->n_hits;) {
        size_t n = swgpu__fmt_group(qr, k);
        swgpu_seq_t t;
        if ((rc = swgpu__fmt_target(wr, b->q, k, &qr->hits[k], &t)) < 0)
            return rc;
        fputc('>', fp);
        swgpu__fmt_put_title(fp, t.id, t.desc);
        fprintf(fp, "\nLength=%zu\n\n", t.len);
        for (size_t j = k; j < k + n; j++) {
            const swgpu_hit_t *h = &qr->hits[j];
            if ((rc = swgpu__fmt_need_aln(wr, b->q, h)) < 0 ||
                (rc = swgpu__fmt_walk_hit(wr, b->q, &t, h)) < 0)
                return rc;
            put_hsp(wr, &t, h);
        }
        k += n;
    }
    if (qr->n_hits)
        fputc('\n', fp);
    if (b->last)
        put_stats(wr, b);
    return SWGPU_OK;
}

int swgpu__report_end(fmt_writer_t *wr)
{
    FILE *fp = wr->fp;
    uint64_t nseq, res;
    char a[32], b[32];
    int go, ge;
    if (!wr->started)
        put_header(wr);
    swgpu__fmt_db_size(wr->db, &nseq, &res);
    swgpu__fmt_thousands(a, sizeof a, nseq);
    swgpu__fmt_thousands(b, sizeof b, res);
    swgpu__fmt_gaps(wr, &go, &ge);
    fputs("  Database: ", fp);
    swgpu_put_name(fp, swgpu__fmt_dbname(wr->f));
    fprintf(fp, "\n  Number of letters in database: %s\n", b);
    fprintf(fp, "  Number of sequences in database:  %s\n\n\n\n", a);
    if (wr->ta == SWGPU_DNA && wr->m)
        fprintf(fp, "Matrix: blastn matrix %d %d\n", swgpu_matrix_max(wr->m),
                swgpu_matrix_min(wr->m));
    else
        fprintf(fp, "Matrix: %s\n", wr->m ? swgpu_matrix_name(wr->m) : "unknown");
    fprintf(fp, "Gap Penalties: Existence: %d, Extension: %d\n", go, ge);
    return SWGPU_OK;
}
