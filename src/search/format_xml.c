/*
 * format_xml.c - format 5, BLAST XML (the NCBI_BlastOutput DTD) as blastp /
 * blastn / psiblast 2.12 write it: <BlastOutput> with the program, the
 * database, the first query and the parameters, then one <Iteration> per
 * query (per round of an iterated search, Iteration_iter-num the round),
 * its <Hit>s (one per subject: a subject's adjacent HSPs are its <Hsp>s)
 * and its <Statistics> (database size, length adjustment, effective search
 * space, K, lambda, H).  Ids as blastp prints them for databases and
 * queries with parsed ids (-parse_seqids, -parse_deflines): Hit_id and
 * Hit_accession the id (first word of the header), Hit_def the rest ("No
 * definition line" when empty); likewise Iteration_query-ID and -def.
 * Coordinates 1-based; a minus-strand DNA hit has Hsp_hit-from > Hsp_hit-to
 * and Hsp_hit-frame -1, its Hsp_hseq the subject's reverse complement.
 * Text is escaped as XML requires (& < > " '), control bytes as swgpu_put_name
 * writes them.
 */
#include "search/format_int.h"

#include <string.h>

/* s escaped for XML text: the five entities, control bytes as \xHH */
static void xml_text(FILE *fp, const char *s)
{
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        switch (c) {
        case '&': fputs("&amp;", fp); break;
        case '<': fputs("&lt;", fp); break;
        case '>': fputs("&gt;", fp); break;
        case '"': fputs("&quot;", fp); break;
        case '\'': fputs("&apos;", fp); break;
        default:
            if (c < 0x20 || c == 0x7f) {
                char one[2] = {(char)c, 0};
                swgpu_put_name(fp, one);
            } else {
                fputc(c, fp);
            }
        }
    }
}

static void tag_text(FILE *fp, int indent, const char *tag, const char *s)
{
    fprintf(fp, "%*s<%s>", indent, "", tag);
    xml_text(fp, s);
    fprintf(fp, "</%s>\n", tag);
}

static void tag_int(FILE *fp, int indent, const char *tag, long long v)
{
    fprintf(fp, "%*s<%s>%lld</%s>\n", indent, "", tag, v, tag);
}

static void tag_dbl(FILE *fp, int indent, const char *tag, double v)
{
    fprintf(fp, "%*s<%s>%g</%s>\n", indent, "", tag, v, tag);
}

static const char *def_of(const char *desc)
{
    return desc && *desc ? desc : "No definition line";
}

static void put_opening(fmt_writer_t *wr, const swgpu_seq_t *q)
{
    FILE *fp = wr->fp;
    char ver[64];
    const char *prog = swgpu__fmt_program(wr);
    int go, ge;
    swgpu__fmt_gaps(wr, &go, &ge);
    snprintf(ver, sizeof ver, "SWGPU %s", SWGPU_VERSION);
    fputs("<?xml version=\"1.0\"?>\n<!DOCTYPE BlastOutput PUBLIC \"-//NCBI//NCBI BlastOutput/EN\" "
          "\"http://www.ncbi.nlm.nih.gov/dtd/NCBI_BlastOutput.dtd\">\n<BlastOutput>\n", fp);
    tag_text(fp, 2, "BlastOutput_program", prog);
    tag_text(fp, 2, "BlastOutput_version", ver);
    tag_text(fp, 2, "BlastOutput_reference",
             "Stephen F. Altschul, Thomas L. Madden, Alejandro A. Sch&auml;ffer, Jinghui Zhang, "
             "Zheng Zhang, Webb Miller, and David J. Lipman (1997), \"Gapped BLAST and PSI-BLAST: "
             "a new generation of protein database search programs\", Nucleic Acids Res. "
             "25:3389-3402.");
    tag_text(fp, 2, "BlastOutput_db", swgpu__fmt_dbname(wr->f));
    tag_text(fp, 2, "BlastOutput_query-ID", q ? q->id : "");
    tag_text(fp, 2, "BlastOutput_query-def", q ? def_of(q->desc) : "");
    tag_int(fp, 2, "BlastOutput_query-len", q ? (long long)q->len : 0);
    fputs("  <BlastOutput_param>\n    <Parameters>\n", fp);
    if (wr->ta == SWGPU_PROTEIN && wr->m)
        tag_text(fp, 6, "Parameters_matrix", swgpu_matrix_name(wr->m));
    tag_dbl(fp, 6, "Parameters_expect", wr->opts ? wr->opts->evalue : 10.0);
    if (wr->ta == SWGPU_DNA && wr->m) {
        tag_int(fp, 6, "Parameters_sc-match", swgpu_matrix_max(wr->m));
        tag_int(fp, 6, "Parameters_sc-mismatch", swgpu_matrix_min(wr->m));
    }
    tag_int(fp, 6, "Parameters_gap-open", go);
    tag_int(fp, 6, "Parameters_gap-extend", ge);
    tag_text(fp, 6, "Parameters_filter", "F");
    fputs("    </Parameters>\n  </BlastOutput_param>\n<BlastOutput_iterations>\n", fp);
}

static void put_hsp(fmt_writer_t *wr, const swgpu_hit_t *h, int num)
{
    FILE *fp = wr->fp;
    const swgpu_aln_t *a = &h->aln;
    int dna = wr->ta == SWGPU_DNA;
    fputs("    <Hsp>\n", fp);
    tag_int(fp, 6, "Hsp_num", num);
    tag_dbl(fp, 6, "Hsp_bit-score", h->bits);
    tag_int(fp, 6, "Hsp_score", h->score);
    tag_dbl(fp, 6, "Hsp_evalue", h->evalue);
    tag_int(fp, 6, "Hsp_query-from", a->qbeg + 1);
    tag_int(fp, 6, "Hsp_query-to", a->qend);
    tag_int(fp, 6, "Hsp_hit-from", h->minus ? a->tend : a->tbeg + 1);
    tag_int(fp, 6, "Hsp_hit-to", h->minus ? a->tbeg + 1 : a->tend);
    tag_int(fp, 6, "Hsp_query-frame", dna);
    tag_int(fp, 6, "Hsp_hit-frame", dna ? (h->minus ? -1 : 1) : 0);
    tag_int(fp, 6, "Hsp_identity", a->n_ident);
    tag_int(fp, 6, "Hsp_positive", wr->w.positives);
    tag_int(fp, 6, "Hsp_gaps", a->n_gaps);
    tag_int(fp, 6, "Hsp_align-len", a->length);
    tag_text(fp, 6, "Hsp_qseq", wr->w.qtext);
    tag_text(fp, 6, "Hsp_hseq", wr->w.ttext);
    fputs("      <Hsp_midline>", fp);
    for (const char *m = wr->w.mid, *qc = wr->w.qtext; *m; m++, qc++)
        fputc(*m == '|' && !dna ? *qc : *m, fp);
    fputs("</Hsp_midline>\n    </Hsp>\n", fp);
}

static void put_statistics(fmt_writer_t *wr, const fmt_block_t *b)
{
    FILE *fp = wr->fp;
    uint64_t nseq, res;
    int64_t L;
    double space;
    swgpu__fmt_db_size(wr->db, &nseq, &res);
    swgpu__fmt_search_space(wr, b->qr, b->q->len, &L, &space);
    fputs("  <Iteration_stat>\n    <Statistics>\n", fp);
    tag_int(fp, 6, "Statistics_db-num", (long long)nseq);
    tag_int(fp, 6, "Statistics_db-len", (long long)res);
    tag_int(fp, 6, "Statistics_hsp-len", L);
    fprintf(fp, "      <Statistics_eff-space>%.0f</Statistics_eff-space>\n", space);
    tag_dbl(fp, 6, "Statistics_kappa", b->qr->karlin.K);
    tag_dbl(fp, 6, "Statistics_lambda", b->qr->karlin.lambda);
    tag_dbl(fp, 6, "Statistics_entropy", b->qr->karlin.H);
    fputs("    </Statistics>\n  </Iteration_stat>\n", fp);
}

int swgpu__xml_block(fmt_writer_t *wr, const fmt_block_t *b)
{
    FILE *fp = wr->fp;
    const swgpu_query_result_t *qr = b->qr;
    int rc;
    if (!wr->started)
        put_opening(wr, b->q);
    fputs("<Iteration>\n", fp);
    tag_int(fp, 2, "Iteration_iter-num", b->round ? b->round : (long long)b->num);
    tag_text(fp, 2, "Iteration_query-ID", b->q->id);
    tag_text(fp, 2, "Iteration_query-def", def_of(b->q->desc));
    tag_int(fp, 2, "Iteration_query-len", (long long)b->q->len);
    fputs("<Iteration_hits>\n", fp);
    int num = 0;
    for (size_t k = 0; k < qr->n_hits;) {
        size_t n = swgpu__fmt_group(qr, k);
        swgpu_seq_t t;
        if ((rc = swgpu__fmt_target(wr, b->q, k, &qr->hits[k], &t)) < 0)
            return rc;
        fputs("<Hit>\n", fp);
        tag_int(fp, 2, "Hit_num", ++num);
        tag_text(fp, 2, "Hit_id", t.id);
        tag_text(fp, 2, "Hit_def", def_of(t.desc));
        tag_text(fp, 2, "Hit_accession", t.id);
        tag_int(fp, 2, "Hit_len", (long long)t.len);
        fputs("  <Hit_hsps>\n", fp);
        for (size_t j = k; j < k + n; j++) {
            if ((rc = swgpu__fmt_need_aln(wr, b->q, &qr->hits[j])) < 0 ||
                (rc = swgpu__fmt_walk_hit(wr, b->q, &t, &qr->hits[j])) < 0)
                return rc;
            put_hsp(wr, &qr->hits[j], (int)(j - k + 1));
        }
        fputs("  </Hit_hsps>\n</Hit>\n", fp);
        k += n;
    }
    fputs("</Iteration_hits>\n", fp);
    put_statistics(wr, b);
    if (!qr->n_hits)
        fputs("  <Iteration_message>No hits found</Iteration_message>\n", fp);
    fputs("</Iteration>\n", fp);
    return SWGPU_OK;
}

int swgpu__xml_end(fmt_writer_t *wr)
{
    if (!wr->started)
        put_opening(wr, NULL);
    fputs("</BlastOutput_iterations>\n</BlastOutput>\n", wr->fp);
    return SWGPU_OK;
}
