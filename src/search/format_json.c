/*
 * format_json.c - format 15, BLAST's single-file JSON as blastp / blastn /
 * psiblast 2.12 write it: {"BlastOutput2": [ one {"report": ...} per query
 * ]}, each report with program, version, reference, search_target, params
 * and results: {"search": {query_id, query_title, query_len, hits, stat,
 * message}} or, for the rounds of an iterated search, {"iterations":
 * [{"iter_num": N, "search": {...}}, ...]}.  A hit is a subject
 * ("description": [{id, accession, title}], len, its adjacent HSPs as
 * "hsps"); an HSP has num, bit_score, score, evalue, identity, positive,
 * query_from/to, hit_from/to (blastn: query_strand, hit_strand "Plus" or
 * "Minus", hit_from > hit_to on the minus strand), align_len, gaps, qseq,
 * hseq, midline.  Ids as in format 5 (format_xml.c).  Strings escaped as
 * JSON requires (\" \\ and \u00XX for control bytes).
 */
#include "search/format_int.h"

#include <string.h>

static void json_str(FILE *fp, const char *s)
{
    fputc('"', fp);
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(fp, "\\%c", c);
        else if (c == '\n')
            fputs("\\n", fp);
        else if (c == '\t')
            fputs("\\t", fp);
        else if (c == '\r')
            fputs("\\r", fp);
        else if (c < 0x20 || c == 0x7f)
            fprintf(fp, "\\u%04x", c);
        else
            fputc(c, fp);
    }
    fputc('"', fp);
}

static void key_str(FILE *fp, int indent, const char *key, const char *v, int comma)
{
    fprintf(fp, "%*s\"%s\": ", indent, "", key);
    json_str(fp, v);
    fputs(comma ? ",\n" : "\n", fp);
}

static void key_int(FILE *fp, int indent, const char *key, long long v, int comma)
{
    fprintf(fp, "%*s\"%s\": %lld%s\n", indent, "", key, v, comma ? "," : "");
}

static void key_dbl(FILE *fp, int indent, const char *key, double v, int comma)
{
    fprintf(fp, "%*s\"%s\": %g%s\n", indent, "", key, v, comma ? "," : "");
}

static void put_report_head(fmt_writer_t *wr)
{
    FILE *fp = wr->fp;
    char ver[64];
    int go, ge;
    swgpu__fmt_gaps(wr, &go, &ge);
    snprintf(ver, sizeof ver, "SWGPU %s", SWGPU_VERSION);
    fputs(wr->started ? ",\n{\n" : "{\n\"BlastOutput2\": [\n{\n", fp);
    fputs("    \"report\": {\n", fp);
    key_str(fp, 6, "program", swgpu__fmt_program(wr), 1);
    key_str(fp, 6, "version", ver, 1);
    key_str(fp, 6, "reference",
            "Stephen F. Altschul, Thomas L. Madden, Alejandro A. Sch&auml;ffer, Jinghui Zhang, "
            "Zheng Zhang, Webb Miller, and David J. Lipman (1997), \"Gapped BLAST and PSI-BLAST: a "
            "new generation of protein database search programs\", Nucleic Acids Res. "
            "25:3389-3402.", 1);
    fputs("      \"search_target\": {\n", fp);
    key_str(fp, 8, "db", swgpu__fmt_dbname(wr->f), 0);
    fputs("      },\n      \"params\": {\n", fp);
    if (wr->ta == SWGPU_PROTEIN && wr->m)
        key_str(fp, 8, "matrix", swgpu_matrix_name(wr->m), 1);
    key_dbl(fp, 8, "expect", wr->opts ? wr->opts->evalue : 10.0, 1);
    if (wr->ta == SWGPU_DNA && wr->m) {
        key_int(fp, 8, "sc_match", swgpu_matrix_max(wr->m), 1);
        key_int(fp, 8, "sc_mismatch", swgpu_matrix_min(wr->m), 1);
    }
    key_int(fp, 8, "gap_open", go, 1);
    key_int(fp, 8, "gap_extend", ge, 1);
    key_str(fp, 8, "filter", "F", 0);
    fputs("      },\n      \"results\": {\n", fp);
}

static void put_hsp(fmt_writer_t *wr, const swgpu_hit_t *h, int num, int in, int comma)
{
    FILE *fp = wr->fp;
    const swgpu_aln_t *a = &h->aln;
    int dna = wr->ta == SWGPU_DNA, i2 = in + 2;
    fprintf(fp, "%*s{\n", in, "");
    key_int(fp, i2, "num", num, 1);
    key_dbl(fp, i2, "bit_score", h->bits, 1);
    key_int(fp, i2, "score", h->score, 1);
    key_dbl(fp, i2, "evalue", h->evalue, 1);
    key_int(fp, i2, "identity", a->n_ident, 1);
    key_int(fp, i2, "positive", wr->w.positives, 1);
    key_int(fp, i2, "query_from", a->qbeg + 1, 1);
    key_int(fp, i2, "query_to", a->qend, 1);
    if (dna)
        key_str(fp, i2, "query_strand", "Plus", 1);
    key_int(fp, i2, "hit_from", h->minus ? a->tend : a->tbeg + 1, 1);
    key_int(fp, i2, "hit_to", h->minus ? a->tbeg + 1 : a->tend, 1);
    if (dna)
        key_str(fp, i2, "hit_strand", h->minus ? "Minus" : "Plus", 1);
    key_int(fp, i2, "align_len", a->length, 1);
    key_int(fp, i2, "gaps", a->n_gaps, 1);
    key_str(fp, i2, "qseq", wr->w.qtext, 1);
    key_str(fp, i2, "hseq", wr->w.ttext, 1);
    if (!dna) /* protein midlines show the identical residue */
        for (char *m = wr->w.mid, *qc = wr->w.qtext; *m; m++, qc++)
            if (*m == '|')
                *m = *qc;
    key_str(fp, i2, "midline", wr->w.mid, 0);
    fprintf(fp, "%*s}%s\n", in, "", comma ? "," : "");
}

static int put_hits(fmt_writer_t *wr, const fmt_block_t *b, int in)
{
    FILE *fp = wr->fp;
    const swgpu_query_result_t *qr = b->qr;
    int rc, num = 0;
    fprintf(fp, "%*s\"hits\": [\n", in, "");
    for (size_t k = 0; k < qr->n_hits;) {
        size_t n = swgpu__fmt_group(qr, k);
        swgpu_seq_t t;
        if ((rc = swgpu__fmt_target(wr, b->q, k, &qr->hits[k], &t)) < 0)
            return rc;
        int i2 = in + 2, i4 = in + 4;
        fprintf(fp, "%*s{\n", i2, "");
        key_int(fp, i4, "num", ++num, 1);
        fprintf(fp, "%*s\"description\": [\n%*s{\n", i4, "", i4 + 2, "");
        key_str(fp, i4 + 4, "id", t.id, 1);
        key_str(fp, i4 + 4, "accession", t.id, 1);
        key_str(fp, i4 + 4, "title", t.desc ? t.desc : "", 0);
        fprintf(fp, "%*s}\n%*s],\n", i4 + 2, "", i4, "");
        key_int(fp, i4, "len", (long long)t.len, 1);
        fprintf(fp, "%*s\"hsps\": [\n", i4, "");
        for (size_t j = k; j < k + n; j++) {
            if ((rc = swgpu__fmt_need_aln(wr, b->q, &qr->hits[j])) < 0 ||
                (rc = swgpu__fmt_walk_hit(wr, b->q, &t, &qr->hits[j])) < 0)
                return rc;
            put_hsp(wr, &qr->hits[j], (int)(j - k + 1), i4 + 2, j + 1 < k + n);
        }
        k += n;
        fprintf(fp, "%*s]\n%*s}%s\n", i4, "", i2, "", k < qr->n_hits ? "," : "");
    }
    fprintf(fp, "%*s],\n", in, "");
    return SWGPU_OK;
}

/* One "search" object at indent in. */
static int put_search(fmt_writer_t *wr, const fmt_block_t *b, int in)
{
    FILE *fp = wr->fp;
    uint64_t nseq, res;
    int64_t L;
    double space;
    int rc, i2 = in + 2;
    fprintf(fp, "%*s\"search\": {\n", in, "");
    key_str(fp, i2, "query_id", b->q->id, 1);
    key_str(fp, i2, "query_title", b->q->desc ? b->q->desc : "", 1);
    key_int(fp, i2, "query_len", (long long)b->q->len, 1);
    if ((rc = put_hits(wr, b, i2)) < 0)
        return rc;
    swgpu__fmt_db_size(wr->db, &nseq, &res);
    swgpu__fmt_search_space(wr, b->qr, b->q->len, &L, &space);
    fprintf(fp, "%*s\"stat\": {\n", i2, "");
    key_int(fp, i2 + 2, "db_num", (long long)nseq, 1);
    key_int(fp, i2 + 2, "db_len", (long long)res, 1);
    key_int(fp, i2 + 2, "hsp_len", L, 1);
    fprintf(fp, "%*s\"eff_space\": %.0f,\n", i2 + 2, "", space);
    key_dbl(fp, i2 + 2, "kappa", b->qr->karlin.K, 1);
    key_dbl(fp, i2 + 2, "lambda", b->qr->karlin.lambda, 1);
    key_dbl(fp, i2 + 2, "entropy", b->qr->karlin.H, 0);
    fprintf(fp, "%*s}%s\n", i2, "", b->qr->n_hits ? "" : ",");
    if (!b->qr->n_hits)
        key_str(fp, i2, "message", "No hits found", 0);
    fprintf(fp, "%*s}\n", in, "");
    return SWGPU_OK;
}

int swgpu__json_block(fmt_writer_t *wr, const fmt_block_t *b)
{
    FILE *fp = wr->fp;
    int rc;
    if (!b->round) {
        put_report_head(wr);
        if ((rc = put_search(wr, b, 8)) < 0)
            return rc;
        fputs("      }\n    }\n  }\n", fp);
        return SWGPU_OK;
    }
    /* a round of an iterated search: one report per query, its rounds in
     * "iterations" */
    if (b->first) {
        put_report_head(wr);
        fputs("        \"iterations\": [\n", fp);
    }
    fprintf(fp, "          {\n            \"iter_num\": %d,\n", b->round);
    if ((rc = put_search(wr, b, 12)) < 0)
        return rc;
    fprintf(fp, "          }%s\n", b->last ? "" : ",");
    if (b->last)
        fputs("        ]\n      }\n    }\n  }\n", fp);
    return SWGPU_OK;
}

int swgpu__json_end(fmt_writer_t *wr)
{
    fputs(wr->started ? "]\n}\n" : "{\n\"BlastOutput2\": [\n]\n}\n", wr->fp);
    return SWGPU_OK;
}
