/*
 * psi/hits.c - one query's PSSM from the hits of a round
 * (swgpu_pssm_from_hits): the alignment M with every included hit
 * (swgpu__psi_hits_setup), each row's further alignments
 * (swgpu__psi_hits_more), the purge and the PSSM (swgpu__psi_hits_finish).
 */
#include "psi/psi.h"

#include <string.h>

/*
 * The PSSM of query q (codes) from the hits of qr with E-value <= thr (and,
 * with S, their further alignments), in three steps so that the rounds can
 * spread the further alignments of one query's rows over threads (pool.c):
 * swgpu__psi_hits_setup (row 0 and every hit's own alignment),
 * swgpu__psi_hits_more (row r's further alignments: it reads and writes row
 * r only), swgpu__psi_hits_finish (purging, the PSSM).  Rows are
 * independent until the purge, so the order of the further alignments
 * changes nothing.
 */
void swgpu__psi_hits_free(swgpu__psi_hits_t *H)
{
    free(H->M.let);
    free(H->M.al);
    free(H->M.use);
    free(H->qcodes);
    free(H->t);
    memset(H, 0, sizeof *H);
}

/* Record failure rc (last_error set) of row r if it comes first. */
void swgpu__psi_hits_failed(swgpu__psi_hits_t *H, size_t r, int rc)
{
    if (H->rc == SWGPU_OK || r < H->bad_row) {
        H->rc = rc;
        H->bad_row = r;
        snprintf(H->msg, sizeof H->msg, "%s", swgpu_last_error());
    }
}

/* Step 1: M with row 0 and each included hit's own alignment; stops at the
 * first failure (recorded in H: rows before it still take their further
 * alignments, as a sequential build would have made them first).  Returns
 * an allocation failure, else SWGPU_OK (H->rc says the rest). */
int swgpu__psi_hits_setup(swgpu__psi_hits_t *H, const swgpu_seq_t *q,
                          const swgpu_query_result_t *qr, const swgpu_db_t *db,
                          const swgpu__psi_rescan_t *S, double thr)
{
    swgpu__psi_msa_t *M = &H->M;
    size_t nh = 0;
    memset(H, 0, sizeof *H);
    H->q = q;
    H->S = S;
    H->thr = thr;
    if (q->len == 0)
        return swgpu__fail(SWGPU_EINVAL, "PSSM of query %s: the query is empty", q->id);
    if (qr)
        for (size_t h = 0; h < qr->n_hits; h++)
            nh += qr->hits[h].evalue <= thr && qr->hits[h].score > 0;
    M->L = q->len;
    M->n = nh + 1;
    if (M->L > SIZE_MAX / M->n / 2)
        return swgpu__fail(SWGPU_ENOMEM, "PSSM of query %s: %zu rows of %zu are too many", q->id,
                           M->n, M->L);
    M->let = calloc(M->n * M->L, 1);
    M->al = calloc(M->n * M->L, 1);
    M->use = malloc(M->n);
    H->qcodes = malloc(M->L);
    H->t = calloc(M->n, sizeof *H->t);
    if (!M->let || !M->al || !M->use || !H->qcodes || !H->t) {
        swgpu__psi_hits_free(H);
        return swgpu__fail(SWGPU_ENOMEM, "PSSM of query %s: out of memory for %zu rows of %zu",
                           q->id, nh + 1, q->len);
    }
    H->q = q;
    H->S = S;
    H->thr = thr;
    memset(M->use, 1, M->n);
    for (size_t i = 0; i < M->L; i++) {
        H->qcodes[i] = q->res[i] < 27 ? q->res[i] : PSI_X;
        M->let[i] = swgpu__psi_letter(q->res[i]);
        M->al[i] = 1;
    }
    size_t r = 1;
    H->nset = 1;
    for (size_t h = 0; qr && h < qr->n_hits; h++) {
        const swgpu_hit_t *hit = &qr->hits[h];
        int rc;
        if (!(hit->evalue <= thr && hit->score > 0))
            continue;
        if (hit->aln.n_cigar == 0) {
            rc = swgpu__fail(SWGPU_EINVAL, "PSSM of query %s: hit %zu (database sequence %zu) "
                             "has no alignment (search without no_align)", q->id, h + 1,
                             hit->target + 1);
            swgpu__psi_hits_failed(H, r, rc);
            break;
        }
        if ((rc = swgpu_db_get(db, hit->target, &H->t[r])) < 0) {
            swgpu__psi_hits_failed(H, r, rc);
            break;
        }
        if (swgpu__psi_add_row(M, r, &hit->aln, &H->t[r]) < 0) {
            rc = swgpu__fail(SWGPU_EINVAL, "PSSM of query %s: the alignment of hit %zu runs off "
                             "its sequences", q->id, h + 1);
            swgpu__psi_hits_failed(H, r, rc);
            break;
        }
        H->nset = ++r;
    }
    return SWGPU_OK;
}

/* Step 1 for row r (1 <= r < H->nset): its further alignments, then its
 * use flag; a failure is recorded in H.  Rows may run concurrently. */
int swgpu__psi_hits_more(swgpu__psi_hits_t *H, size_t r)
{
    int rc = H->S ? swgpu__psi_add_more(&H->M, r, H->S, &H->t[r], H->thr,
                                        H->pre ? H->pre + 2 * (r - 1) : NULL)
                  : SWGPU_OK;
    if (rc == SWGPU_OK)
        swgpu__psi_drop_if_empty(&H->M, r);
    return rc;
}

/* Steps 2-6: purge, the rows left, the PSSM. */
int swgpu__psi_hits_finish(const swgpu__psi_basis_t *B, swgpu__psi_hits_t *H, swgpu_pssm_t **out)
{
    swgpu__psi_msa_t *M = &H->M;
    int rc;
    /* 2. purging: stretches identical to the query, then near-identical rows */
    if ((rc = swgpu__psi_purge_rows(M, 1)) < 0)
        return rc;
    {   /* the rows left, query first */
        size_t k = 0;
        for (size_t x = 0; x < M->n; x++) {
            if (!M->use[x] && x)
                continue;
            if (k != x) {
                memcpy(M->let + k * M->L, M->let + x * M->L, M->L);
                memcpy(M->al + k * M->L, M->al + x * M->L, M->L);
            }
            k++;
        }
        M->n = k;
    }
    return swgpu__psi_build(B, M, H->qcodes, H->q->id, out);
}

static int from_hits(const swgpu__psi_basis_t *B, const swgpu_seq_t *q,
                     const swgpu_query_result_t *qr, const swgpu_db_t *db,
                     const swgpu__psi_rescan_t *S, double thr, swgpu_pssm_t **out)
{
    swgpu__psi_hits_t H;
    int rc;
    *out = NULL;
    if ((rc = swgpu__psi_hits_setup(&H, q, qr, db, S, thr)) < 0)
        return rc;
    for (size_t r = 1; r < H.nset; r++)
        if ((rc = swgpu__psi_hits_more(&H, r)) < 0) {
            swgpu__psi_hits_failed(&H, r, rc);
            break;
        }
    if (H.rc < 0)
        rc = swgpu__fail(H.rc, "%s", H.msg);
    else
        rc = swgpu__psi_hits_finish(B, &H, out);
    swgpu__psi_hits_free(&H);
    return rc;
}

int swgpu_pssm_from_hits(const swgpu_seq_t *query, const swgpu_pssm_t *searched,
                         const swgpu_query_result_t *qr, const swgpu_db_t *db,
                         const swgpu_matrix_t *m, const swgpu_opts_t *opts,
                         double inclusion_evalue, swgpu_pssm_t **out)
{
    swgpu__psi_basis_t B;
    swgpu__psi_rescan_t S = {0};
    int rc;
    if (!out)
        return swgpu__fail(SWGPU_EINVAL, "PSSM from hits: NULL result pointer");
    *out = NULL;
    if (!query || !m || (qr && qr->n_hits && !db))
        return swgpu__fail(SWGPU_EINVAL, "PSSM from hits: NULL argument");
    if (swgpu_matrix_alphabet(m) != SWGPU_PROTEIN)
        return swgpu__fail(SWGPU_EALPHABET, "PSSM from hits: matrix %s is not a protein matrix",
                           swgpu_matrix_name(m));
    if (db && swgpu_db_alphabet(db) != SWGPU_PROTEIN)
        return swgpu__fail(SWGPU_EALPHABET, "PSSM from hits: the database is not protein");
    if (!(inclusion_evalue >= 0))
        return swgpu__fail(SWGPU_EINVAL, "PSSM from hits: inclusion E-value %g is negative",
                           inclusion_evalue);
    if (opts && (rc = swgpu_opts_check(opts, m)) < 0)
        return rc;
    if ((rc = swgpu__psi_basis_init(&B, m)) < 0)
        return rc;
    int more = opts && qr && qr->n_hits;
    if (more && (rc = swgpu__psi_rescan_init(&S, query, searched, qr, db, m, opts,
                                             inclusion_evalue)) < 0)
        return rc;
    rc = from_hits(&B, query, qr, db, more ? &S : NULL, inclusion_evalue, out);
    free(S.best);
    return rc;
}
