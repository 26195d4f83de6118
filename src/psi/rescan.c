/*
 * psi/rescan.c - the further alignments of a row of M (the end of step 1
 * of psi.h): while one meets the inclusion threshold, the best local
 * alignment of the row's subject with a stretch of query positions the row
 * does not cover yet, scored as the round scored the query.
 */
#include "psi/psi.h"
#include "align/align.h"

#include <string.h>

int swgpu__psi_rescan_init(swgpu__psi_rescan_t *S, const swgpu_seq_t *q,
                           const swgpu_pssm_t *searched, const swgpu_query_result_t *qr,
                           const swgpu_db_t *db, const swgpu_matrix_t *m, const swgpu_opts_t *o,
                           double thr)
{
    S->m = m;
    S->gap_open = o->gap_open;
    S->gap_extend = o->gap_extend;
    if (searched)
        swgpu__pssm_query(searched, &S->q);
    else
        S->q = swgpu__query_plain(q->res, q->len);
    if (S->q.len != q->len)
        return swgpu__fail(SWGPU_EINVAL, "PSSM of query %s: the searched PSSM has %zu "
                           "positions, the query %zu", q->id, S->q.len, q->len);
    swgpu__evalue_init(&S->ev, &qr->karlin, o->evalue_model, q->len, swgpu__db_whole_res(db),
                       swgpu__db_whole_n(db));
    S->min_score = swgpu__evalue_min_score(&S->ev, thr);
    if (!(S->best = malloc((q->len ? q->len : 1) * sizeof *S->best)))
        return swgpu__fail(SWGPU_ENOMEM, "PSSM of query %s: out of memory", q->id);
    for (size_t i = 0; i < q->len; i++) {
        int32_t b = 0;
        for (int c = 0; c < SWGPU_NCODES; c++) {
            int32_t v = S->q.rows ? S->q.rows[i * SWGPU_NCODES + c] : m->s[S->q.res[i]][c];
            if (v > b)
                b = v;
        }
        S->best[i] = b;
    }
    return SWGPU_OK;
}

/* The best score of subject t against stretch x, when its best conceivable
 * score (the sum of its positions' best scores) can meet S->min_score. */
static int score_stretch(const swgpu__psi_rescan_t *S, const swgpu_seq_t *t,
                         swgpu__psi_stretch_t *x)
{
    int64_t bound = 0;
    x->score = 0;
    for (size_t i = x->a; i < x->b; i++)
        bound += S->best[i];
    if (x->b <= x->a || bound < S->min_score)
        return SWGPU_OK;
    swgpu__query_t sub = S->q;
    sub.res += x->a;
    sub.len = x->b - x->a;
    if (sub.rows)
        sub.rows += x->a * SWGPU_NCODES;
    return swgpu__cpu_score_pair_q(&sub, t->res, t->len, S->m, S->gap_open, S->gap_extend, 1,
                                   swgpu__cpu_isa_best(), 0, NULL, NULL, &x->score, &x->qend,
                                   &x->tend);
}

/* Room for n stretches in *x (capacity *cap). */
static int grow(swgpu__psi_stretch_t **x, size_t n, size_t *cap)
{
    if (n <= *cap)
        return SWGPU_OK;
    size_t c = *cap ? 2 * *cap : 8;
    swgpu__psi_stretch_t *y = realloc(*x, c * sizeof *y);
    if (!y)
        return swgpu__fail(SWGPU_ENOMEM, "PSSM: out of memory");
    *x = y;
    *cap = c;
    return SWGPU_OK;
}

/*
 * The further alignments of row r (step 1): while one exists, the best local
 * alignment of subject t with a stretch of query positions the row does not
 * cover, added to the row when its E-value meets thr; the stretch it came
 * from leaves its two ends as stretches.
 */
int swgpu__psi_add_more(swgpu__psi_msa_t *M, size_t r, const swgpu__psi_rescan_t *S,
                        const swgpu_seq_t *t, double thr, const swgpu__psi_stretch_t *pre)
{
    const uint8_t *al = M->al + r * M->L;
    swgpu__psi_stretch_t *x = NULL;
    size_t n = 0, cap = 0;
    int rc = SWGPU_OK;
    for (size_t a = 0; a < M->L;) {
        if (al[a]) {
            a++;
            continue;
        }
        size_t b = a;
        while (b < M->L && !al[b])
            b++;
        if ((rc = grow(&x, n + 1, &cap)) < 0)
            goto done;
        x[n].a = a;
        x[n].b = b;
        /* scored ahead (on the GPU: stretches_ahead), else here */
        if (pre && pre[0].a == a && pre[0].b == b && pre[0].score >= 0)
            x[n++] = pre[0];
        else if (pre && pre[1].a == a && pre[1].b == b && pre[1].score >= 0)
            x[n++] = pre[1];
        else if ((rc = score_stretch(S, t, &x[n++])) < 0)
            goto done;
        a = b;
    }
    for (;;) {
        size_t k = n;
        for (size_t i = 0; i < n; i++)
            if (x[i].score > 0 && (k == n || x[i].score > x[k].score))
                k = i;
        if (k == n || x[k].score < S->min_score ||
            !(swgpu__evalue_of(&S->ev, x[k].score, t->len) <= thr))
            break;
        swgpu__query_t sub = S->q;
        swgpu_aln_t aln = {0};
        sub.res += x[k].a;
        sub.len = x[k].b - x[k].a;
        if (sub.rows)
            sub.rows += x[k].a * SWGPU_NCODES;
        rc = swgpu__align_from_end_q(&sub, t->res, t->len, S->m, S->gap_open, S->gap_extend,
                                     x[k].score, x[k].qend, x[k].tend, 0, &aln, -1);
        if (rc < 0)
            goto done;
        aln.qbeg += (int64_t)x[k].a;
        aln.qend += (int64_t)x[k].a;
        size_t qb = (size_t)aln.qbeg, qe = (size_t)aln.qend;
        rc = swgpu__psi_add_row(M, r, &aln, t);
        swgpu_aln_free(&aln);
        if (rc < 0 || qb < x[k].a || qe > x[k].b || qb >= qe) {
            rc = swgpu__fail(SWGPU_ERANGE, "internal error: a further alignment runs off its "
                             "stretch");
            goto done;
        }
        /* the stretch's two ends: x[k] and a new one */
        if ((rc = grow(&x, n + 1, &cap)) < 0)
            goto done;
        x[n].a = qe;
        x[n].b = x[k].b;
        x[k].b = qb;
        if ((rc = score_stretch(S, t, &x[k])) < 0 || (rc = score_stretch(S, t, &x[n++])) < 0)
            goto done;
    }
done:
    free(x);
    return rc;
}
