/*
 * search/hsps.c - a search's further alignments per subject
 * (swgpu_opts_t.max_hsps): once a hit's first alignment is done (on the
 * alignment threads, pipeline.c), up to max_hsps - 1 more on its strand
 * and, for a DNA search of both strands, up to max_hsps on the other
 * (src/align/hsps.c: Waterman-Eggert / SIM), each with its own bit score
 * and E-value and kept while the E-value passes opts->evalue; then, once
 * every alignment is done, each query's hits with each subject's further
 * HSPs after its first (swgpu__hsps_splice).
 */
#include "search/search.h"
#include "align/align.h"

#include <string.h>

/* Append hit x to L. */
static int list_add(swgpu__hsp_list_t *L, const swgpu_hit_t *x)
{
    if (L->n == L->cap) {
        size_t c = L->cap ? 2 * L->cap : 4;
        swgpu_hit_t *p = realloc(L->h, c * sizeof *p);
        if (!p)
            return swgpu__fail(SWGPU_ENOMEM, "search: out of memory for further alignments");
        L->h = p;
        L->cap = c;
    }
    L->h[L->n++] = *x;
    return SWGPU_OK;
}

void swgpu__hsp_list_free(swgpu__hsp_list_t *L)
{
    for (size_t k = 0; k < L->n; k++)
        swgpu_aln_free(&L->h[k].aln);
    free(L->h);
    memset(L, 0, sizeof *L);
}

/* The further alignments of hit hit (subject t, scored by query q) on one
 * strand (minus: the subject's reverse complement, res) into L: first
 * the hit's own alignment forbidden when on the hit's strand. */
static int one_strand(const swgpu__query_t *q, const swgpu_seq_t *t, const uint8_t *res,
                      int minus, const swgpu_hit_t *hit, const swgpu_query_result_t *qr,
                      const swgpu__evalue_ctx_t *ev, const swgpu_matrix_t *m,
                      const swgpu_opts_t *o, swgpu__hsp_list_t *L)
{
    swgpu__hsps_t S;
    int rc = swgpu__hsps_init(&S, q, res, t->len, m, o->gap_open, o->gap_extend), k = 0;
    if (rc < 0)
        return rc;
    if (minus == hit->minus) {
        swgpu_aln_t a0 = hit->aln; /* in the strand's coordinates */
        if (minus) {
            a0.tbeg = (int64_t)t->len - hit->aln.tend;
            a0.tend = (int64_t)t->len - hit->aln.tbeg;
        }
        rc = swgpu__hsps_forbid(&S, &a0);
        k = 1;
    }
    int32_t min_score = swgpu__evalue_min_score(ev, o->evalue); /* none below passes */
    if (min_score < 1)
        min_score = 1;
    for (; rc == SWGPU_OK && k < o->max_hsps; k++) {
        swgpu_hit_t x;
        memset(&x, 0, sizeof x);
        if ((rc = swgpu__hsps_next(&S, min_score, &x.aln)) < 0 || x.aln.score < min_score) {
            swgpu_aln_free(&x.aln);
            break;
        }
        x.target = hit->target;
        x.score = (int32_t)x.aln.score;
        x.bits = swgpu_bitscore(&qr->karlin, x.score);
        x.evalue = swgpu__evalue_of(ev, x.score, t->len);
        x.minus = minus;
        if (!(x.evalue <= o->evalue)) {
            swgpu_aln_free(&x.aln);
            break;
        }
        if ((rc = swgpu__hsps_forbid(&S, &x.aln)) < 0 || (rc = list_add(L, &x)) < 0) {
            swgpu_aln_free(&x.aln);
            break;
        }
        if (minus) { /* the interval on the subject as stored */
            swgpu_aln_t *a = &L->h[L->n - 1].aln;
            int64_t tb = a->tbeg;
            a->tbeg = (int64_t)t->len - a->tend;
            a->tend = (int64_t)t->len - tb;
        }
    }
    swgpu__hsps_free(&S);
    return rc;
}

int swgpu__hsps_of_hit(const swgpu__query_t *q, const swgpu_query_result_t *qr, size_t h,
                       const swgpu_db_t *db, const swgpu_matrix_t *m, const swgpu_opts_t *o,
                       swgpu__hsp_list_t *L)
{
    const swgpu_hit_t *hit = &qr->hits[h];
    swgpu_seq_t t;
    uint8_t *rc_res = NULL;
    swgpu__evalue_ctx_t ev;
    int rc = swgpu_db_get(db, hit->target, &t);
    if (rc < 0)
        return rc;
    int dna = swgpu_matrix_alphabet(m) == SWGPU_DNA;
    int both = dna && o->strand == SWGPU_STRAND_BOTH;
    if ((hit->minus || both) && !(rc_res = malloc(t.len ? t.len : 1)))
        return swgpu__fail(SWGPU_ENOMEM, "search: out of memory for the reverse complement "
                           "of database sequence %zu (%zu residues)", hit->target + 1, t.len);
    if (rc_res)
        swgpu_dna_revcomp(t.res, t.len, rc_res);
    swgpu__evalue_init(&ev, &qr->karlin, o->evalue_model, q->len, swgpu__db_whole_res(db),
                       swgpu__db_whole_n(db));
    rc = one_strand(q, &t, hit->minus ? rc_res : t.res, hit->minus, hit, qr, &ev, m, o, L);
    if (rc == SWGPU_OK && both)
        rc = one_strand(q, &t, hit->minus ? t.res : rc_res, !hit->minus, hit, qr, &ev, m, o, L);
    free(rc_res);
    if (rc < 0) {
        swgpu__hsp_list_free(L);
        return rc;
    }
    /* best first; of equal scores the hit's strand first, then as found */
    for (size_t a = 1; a < L->n; a++) {
        swgpu_hit_t x = L->h[a];
        size_t b = a;
        for (; b > 0 && L->h[b - 1].score < x.score; b--)
            L->h[b] = L->h[b - 1];
        L->h[b] = x;
    }
    for (size_t a = 0; a < L->n; a++)
        L->h[a].hsp = (int)a + 1;
    return SWGPU_OK;
}

int swgpu__hsps_splice(swgpu_query_result_t *qr, swgpu__hsp_list_t *L)
{
    size_t n = qr->n_hits, extra = 0;
    for (size_t h = 0; h < n; h++)
        extra += L[h].n;
    if (!extra)
        return SWGPU_OK;
    swgpu_hit_t *x = malloc((n + extra) * sizeof *x);
    if (!x)
        return swgpu__fail(SWGPU_ENOMEM, "search: out of memory for %zu hits", n + extra);
    size_t k = 0;
    for (size_t h = 0; h < n; h++) {
        x[k++] = qr->hits[h];
        if (L[h].n) /* L[h].h may be NULL then */
            memcpy(x + k, L[h].h, L[h].n * sizeof *x);
        k += L[h].n;
        free(L[h].h);
        memset(&L[h], 0, sizeof L[h]);
    }
    free(qr->hits);
    qr->hits = x;
    qr->n_hits = k;
    return SWGPU_OK;
}

int swgpu__hsps_lists(swgpu__pipe_t *c, size_t nq)
{
    if (c->o->max_hsps <= 1 || c->o->no_align)
        return SWGPU_OK;
    if (!(c->more = calloc(nq ? nq : 1, sizeof *c->more)))
        return swgpu__fail(SWGPU_ENOMEM, "search: out of memory for %zu queries", nq);
    return SWGPU_OK;
}

int swgpu__hsps_lists_query(swgpu__pipe_t *c, size_t i)
{
    size_t n = c->r->q[i].n_hits;
    if (c->more && !(c->more[i] = calloc(n ? n : 1, sizeof *c->more[i])))
        return swgpu__fail(SWGPU_ENOMEM, "search: out of memory for %zu hits", n);
    return SWGPU_OK;
}

int swgpu__hsps_splice_all(swgpu__pipe_t *c, size_t nq)
{
    int rc = SWGPU_OK;
    for (size_t i = 0; c->more && i < nq && rc == SWGPU_OK; i++)
        if (c->more[i] && (rc = swgpu__hsps_splice(&c->r->q[i], c->more[i])) == SWGPU_OK) {
            free(c->more[i]);
            c->more[i] = NULL;
        }
    return rc;
}

void swgpu__hsps_lists_free(swgpu__pipe_t *c, size_t nq)
{
    if (!c->more || !c->r)
        return;
    for (size_t i = 0; i < nq; i++) {
        if (!c->more[i])
            continue;
        for (size_t h = 0; h < c->r->q[i].n_hits; h++)
            swgpu__hsp_list_free(&c->more[i][h]);
        free(c->more[i]);
    }
    free(c->more);
    c->more = NULL;
}
