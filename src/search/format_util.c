/*
 * format_util.c - what the output writers share (format_int.h): BLAST's
 * number formats, the walk of a hit's alignment into its aligned strings,
 * the middle line, positives and BTOP, a hit's subject, the grouping of a
 * subject's adjacent HSPs, and the database statistics BLAST reports.
 */
#include "search/format_int.h"
#include "stats/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ----------------------------------------------------- number formatting */

void swgpu__fmt_evalue(char *buf, size_t size, double e)
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

/* BLAST+'s CAlignFormatUtil::GetScoreString: one significant digit below
 * 0.0009 ("2e-35", "1e-120"). */
void swgpu__fmt_evalue_report(char *buf, size_t size, double e)
{
    if (e < 1.0e-180)
        snprintf(buf, size, "0.0");
    else if (e < 1.0e-99)
        snprintf(buf, size, "%2.0e", e);
    else if (e < 0.0009)
        snprintf(buf, size, "%3.0e", e);
    else if (e < 0.1)
        snprintf(buf, size, "%4.3f", e);
    else if (e < 1.0)
        snprintf(buf, size, "%3.2f", e);
    else if (e < 10.0)
        snprintf(buf, size, "%2.1f", e);
    else
        snprintf(buf, size, "%.0f", e);
}

void swgpu__fmt_bits(char *buf, size_t size, double b)
{
    if (b > 99999)
        snprintf(buf, size, "%5.3e", b);
    else if (b > 99.9)
        snprintf(buf, size, "%3ld", (long)b);
    else
        snprintf(buf, size, "%4.1f", b);
}

int swgpu__fmt_percent(int64_t part, int64_t whole)
{
    return whole > 0 ? (int)floor(100.0 * (double)part / (double)whole + 0.5) : 0;
}

int swgpu__fmt_digits(int64_t v)
{
    int d = 1;
    while (v >= 10) {
        v /= 10;
        d++;
    }
    return d;
}

void swgpu__fmt_line_span(const fmt_walk_t *w, size_t c0, size_t n, int minus, size_t tlen,
                          int64_t *qpos, int64_t *tpos, fmt_span_t *s)
{
    int64_t qn = 0, tn = 0, q = *qpos, t = *tpos;
    for (size_t k = 0; k < n; k++) {
        qn += w->qtext[c0 + k] != '-';
        tn += w->ttext[c0 + k] != '-';
    }
    s->qfirst = qn ? q + 1 : q;
    s->qlast = q + qn;
    s->tfirst = tn ? t + 1 : t;
    s->tlast = t + tn;
    if (minus) { /* positions on the subject as stored */
        s->tfirst = tn ? (int64_t)tlen - t : (int64_t)tlen - t + 1;
        s->tlast = (int64_t)tlen - t - tn + 1;
    }
    *qpos = q + qn;
    *tpos = t + tn;
}

void swgpu__fmt_thousands(char *buf, size_t size, uint64_t n)
{
    char d[32];
    int len = snprintf(d, sizeof d, "%llu", (unsigned long long)n);
    size_t o = 0;
    for (int i = 0; i < len && o + 2 < size; i++) {
        if (i && (len - i) % 3 == 0)
            buf[o++] = ',';
        buf[o++] = d[i];
    }
    buf[o] = '\0';
}

void swgpu__fmt_put_title(FILE *fp, const char *id, const char *desc)
{
    swgpu_put_name(fp, id);
    if (desc && *desc) {
        fputc(' ', fp);
        swgpu_put_name(fp, desc);
    }
}

/* ------------------------------------------------------- the alignment */

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

static int walk_reserve(fmt_walk_t *w, size_t len)
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

void swgpu__fmt_walk_free(fmt_walk_t *w)
{
    free(w->qtext);
    free(w->ttext);
    free(w->mid);
    free(w->btop);
}

/*
 * Fill the aligned strings, the middle line, the positives count and BTOP
 * for alignment a of query q against target t.  SWGPU_EINVAL if the CIGAR
 * runs off either sequence.
 */
static int walk_alignment(fmt_walk_t *w, const swgpu_aln_t *a, const swgpu_seq_t *q,
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

int swgpu__fmt_target(fmt_writer_t *wr, const swgpu_seq_t *q, size_t k, const swgpu_hit_t *h,
                      swgpu_seq_t *t)
{
    if (swgpu_db_get(wr->db, h->target, t) < 0)
        return swgpu__fail(SWGPU_EINVAL, "outfmt: query %s, hit %zu names target %zu of %zu",
                           q->id, k, h->target, swgpu_db_size(wr->db));
    return SWGPU_OK;
}

int swgpu__fmt_walk_hit(fmt_writer_t *wr, const swgpu_seq_t *q, const swgpu_seq_t *t0,
                        const swgpu_hit_t *h)
{
    swgpu_seq_t t = *t0;
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
    return walk_alignment(&wr->w, &a, q, wr->qa, &t, wr->ta, wr->m);
}

size_t swgpu__fmt_group(const swgpu_query_result_t *qr, size_t k)
{
    size_t n = 1;
    while (k + n < qr->n_hits && qr->hits[k + n].target == qr->hits[k].target &&
           qr->hits[k + n].minus == qr->hits[k].minus)
        n++;
    return n;
}

int swgpu__fmt_need_aln(const fmt_writer_t *wr, const swgpu_seq_t *q, const swgpu_hit_t *h)
{
    if (h->aln.n_cigar)
        return SWGPU_OK;
    return swgpu__fail(SWGPU_EINVAL,
                       "outfmt %d: query %s: a hit without an alignment (--no-align); formats "
                       "0, 5, 15 and 17 need the alignments", (int)wr->f->kind, q->id);
}

/* ------------------------------------------------- database statistics */

void swgpu__fmt_db_size(const swgpu_db_t *db, uint64_t *nseq, uint64_t *residues)
{
    swgpu_db_part_t p;
    if (swgpu_db_part_info(db, &p) == SWGPU_OK) {
        *nseq = p.total_n;
        *residues = p.total_residues;
    } else {
        *nseq = swgpu_db_size(db);
        *residues = swgpu_db_residues(db);
    }
}

void swgpu__fmt_search_space(const fmt_writer_t *wr, const swgpu_query_result_t *qr,
                             uint64_t qlen, int64_t *hsp_len, double *space)
{
    uint64_t nseq, res;
    swgpu__fmt_db_size(wr->db, &nseq, &res);
    *hsp_len = 0;
    *space = 0;
    if (qr->karlin.lambda <= 0)
        return;
    int64_t L = swgpu__length_adjustment(&qr->karlin, qlen, res, nseq);
    double m = (double)qlen - (double)L, n = (double)res - (double)nseq * (double)L;
    *hsp_len = L;
    *space = (m < 1 ? 1 : m) * (n < 1 ? 1 : n);
}

void swgpu__fmt_gaps(const fmt_writer_t *wr, int *open, int *extend)
{
    if (wr->opts) {
        *open = wr->opts->gap_open;
        *extend = wr->opts->gap_extend;
        return;
    }
    swgpu_opts_t o;
    swgpu_opts_init(&o, wr->ta);
    *open = o.gap_open;
    *extend = o.gap_extend;
}

const char *swgpu__fmt_dbname(const swgpu_outfmt_t *f)
{
    return f->dbname ? f->dbname : DEFAULT_DBNAME;
}

const char *swgpu__fmt_program(const fmt_writer_t *wr)
{
    if (wr->ta == SWGPU_DNA)
        return "blastn";
    return wr->iterated ? "psiblast" : "blastp";
}
