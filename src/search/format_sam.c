/*
 * format_sam.c - format 17, SAM as blastn 2.12 writes it (-outfmt 17), for
 * DNA and protein searches alike: @HD (VN:1.2 SO:coordinate GO:reference),
 * one @SQ per query (the queries are the references, as in BLAST's SAM),
 * @PG; then per query its hits sorted by their start on the query, each a
 * record whose read is the subject: QNAME the subject's id, FLAG 0 or 16 (a
 * DNA hit on the subject's minus strand: the read is its reverse
 * complement), RNAME the query's id, POS the first aligned query position,
 * MAPQ 255, the CIGAR read against the query (M, I: subject only, D: query
 * only) with hard clips (H) for the subject's unaligned ends, as BLAST
 * writes them, SEQ and QUAL '*', and BLAST's tags AS:i (raw score), EV:f
 * (E-value), NM:i (edit distance: mismatches and gap columns), PI:f (percent
 * identity over the aligned residue pairs, "%.2f") and BS:f (bit score).
 * Every hit needs its alignment.
 */
#include "search/format_int.h"

#include <stdlib.h>
#include <string.h>

static int query_header(fmt_writer_t *wr)
{
    FILE *fp = wr->fp;
    fputs("@HD\tVN:1.2\tSO:coordinate\tGO:reference\n", fp);
    for (size_t i = 0; i < wr->nqueries; i++) {
        swgpu_seq_t q;
        int rc = wr->query_at(wr, i, &q);
        if (rc < 0)
            return rc;
        fputs("@SQ\tSN:", fp);
        swgpu_put_name(fp, q.id);
        fprintf(fp, "\tLN:%zu\n", q.len);
    }
    fprintf(fp, "@PG\tID:0\tVN:%s\tPN:swgpu\n", SWGPU_VERSION);
    return SWGPU_OK;
}

/* (query start, hit index) pairs: by start, then in the hits' order */
static int by_start(const void *x, const void *y)
{
    const int64_t *a = x, *b = y;
    if (a[0] != b[0])
        return a[0] < b[0] ? -1 : 1;
    return a[1] < b[1] ? -1 : a[1] > b[1];
}

static void put_record(fmt_writer_t *wr, const swgpu_seq_t *q, const swgpu_seq_t *t,
                       const swgpu_hit_t *h)
{
    FILE *fp = wr->fp;
    const swgpu_aln_t *a = &h->aln;
    int64_t left = h->minus ? (int64_t)t->len - a->tend : a->tbeg;
    int64_t right = h->minus ? a->tbeg : (int64_t)t->len - a->tend;
    int64_t mcols = 0;
    swgpu_put_name(fp, t->id);
    fprintf(fp, "\t%d\t", h->minus ? 16 : 0);
    swgpu_put_name(fp, q->id);
    fprintf(fp, "\t%lld\t255\t", (long long)a->qbeg + 1);
    if (left)
        fprintf(fp, "%lldH", (long long)left);
    for (size_t k = 0; k < a->n_cigar; k++) {
        unsigned op = SWGPU_CIGAR_OP(a->cigar[k]);
        uint32_t n = SWGPU_CIGAR_LEN(a->cigar[k]);
        if (op == SWGPU_CIGAR_M)
            mcols += n;
        /* the read is the subject: swgpu's I (query only) is SAM's D */
        fprintf(fp, "%lu%c", (unsigned long)n,
                op == SWGPU_CIGAR_I ? 'D' : op == SWGPU_CIGAR_D ? 'I' : 'M');
    }
    if (right)
        fprintf(fp, "%lldH", (long long)right);
    fprintf(fp, "\t*\t0\t0\t*\t*\tAS:i:%ld\tEV:f:%g\tNM:i:%lld\tPI:f:%.2f\tBS:f:%g\n",
            (long)h->score, h->evalue, (long long)(a->n_mismatch + a->n_gaps),
            mcols ? 100.0 * (double)a->n_ident / (double)mcols : 0.0, h->bits);
}

int swgpu__sam_block(fmt_writer_t *wr, const fmt_block_t *b)
{
    const swgpu_query_result_t *qr = b->qr;
    int rc;
    if (!wr->started && (rc = query_header(wr)) < 0)
        return rc;
    if (2 * qr->n_hits > wr->ivs_cap) {
        int64_t *nv = realloc(wr->ivs, 2 * qr->n_hits * sizeof *nv);
        if (!nv)
            return swgpu__fail(SWGPU_ENOMEM, "outfmt 17: out of memory for %zu hits",
                               qr->n_hits);
        wr->ivs = nv;
        wr->ivs_cap = 2 * qr->n_hits;
    }
    for (size_t k = 0; k < qr->n_hits; k++) {
        if ((rc = swgpu__fmt_need_aln(wr, b->q, &qr->hits[k])) < 0)
            return rc;
        wr->ivs[2 * k] = qr->hits[k].aln.qbeg;
        wr->ivs[2 * k + 1] = (int64_t)k;
    }
    qsort(wr->ivs, qr->n_hits, 2 * sizeof *wr->ivs, by_start);
    for (size_t i = 0; i < qr->n_hits; i++) {
        size_t k = (size_t)wr->ivs[2 * i + 1];
        const swgpu_hit_t *h = &qr->hits[k];
        swgpu_seq_t t;
        if ((rc = swgpu__fmt_target(wr, b->q, k, h, &t)) < 0)
            return rc;
        put_record(wr, b->q, &t, h);
    }
    return SWGPU_OK;
}

int swgpu__sam_end(fmt_writer_t *wr)
{
    return wr->started ? SWGPU_OK : query_header(wr);
}
