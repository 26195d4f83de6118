/*
 * cigar.c - the CIGAR of a long alignment: runs appended and merged as the
 * pieces are traced back and joined, then stored in the caller's
 * swgpu_aln_t with the statistics it implies (swgpu_align_long).
 */
#include "long/long.h"

#include <string.h>

int swgpu__la_cig_push(swgpu__la_cig_t *c, int op, int64_t len)
{
    if (len <= 0)
        return SWGPU_OK;
    if (c->n && SWGPU_CIGAR_OP(c->v[c->n - 1]) == (uint32_t)op &&
        SWGPU_CIGAR_LEN(c->v[c->n - 1]) + (uint64_t)len < (1u << 27)) {
        c->v[c->n - 1] += (uint32_t)len << 4;
        return SWGPU_OK;
    }
    if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 16;
        uint32_t *p = realloc(c->v, cap * sizeof *p);
        if (!p)
            return SWGPU_ENOMEM;
        c->v = p;
        c->cap = cap;
    }
    while (len >= (1 << 27)) { /* keep lengths within 28 bits */
        c->v[c->n++] = ((uint32_t)((1 << 27) - 1) << 4) | (uint32_t)op;
        len -= (1 << 27) - 1;
        if (c->n == c->cap)
            return swgpu__la_cig_push(c, op, len);
    }
    c->v[c->n++] = ((uint32_t)len << 4) | (uint32_t)op;
    return SWGPU_OK;
}

void swgpu__la_aln_clear(swgpu_aln_t *out)
{
    out->score = 0;
    out->qbeg = out->qend = out->tbeg = out->tend = 0;
    out->n_cigar = 0;
    out->length = out->n_ident = out->n_mismatch = out->n_gapopen = out->n_gaps = 0;
}

/* Fill the alignment's statistics from its CIGAR; return its score. */
static int64_t aln_finish(const swgpu__la_t *C, swgpu_aln_t *out)
{
    int64_t i = out->qbeg, j = out->tbeg, score = 0;
    for (size_t k = 0; k < out->n_cigar; k++) {
        uint32_t op = SWGPU_CIGAR_OP(out->cigar[k]);
        int64_t len = SWGPU_CIGAR_LEN(out->cigar[k]);
        out->length += len;
        if (op == SWGPU_CIGAR_M) {
            for (int64_t x = 0; x < len; x++, i++, j++) {
                score += C->sc.s[C->a[i]][C->b[j]];
                if (C->a[i] == C->b[j])
                    out->n_ident++;
                else
                    out->n_mismatch++;
            }
        } else {
            out->n_gapopen++;
            out->n_gaps += len;
            score -= C->sc.open + len * C->sc.ext;
            if (op == SWGPU_CIGAR_I)
                i += len;
            else
                j += len;
        }
    }
    if (i != out->qend || j != out->tend)
        return INT64_MIN;
    return score;
}

int swgpu__la_aln_store(const swgpu__la_t *C, const swgpu__la_cig_t *cig, swgpu_aln_t *out, int64_t *score)
{
    if (out->m_cigar < cig->n) {
        uint32_t *p = realloc(out->cigar, cig->n * sizeof *p);
        if (!p)
            return swgpu__fail(SWGPU_ENOMEM, "long alignment: out of memory for the CIGAR");
        out->cigar = p;
        out->m_cigar = cig->n;
    }
    memcpy(out->cigar, cig->v, cig->n * sizeof *cig->v);
    out->n_cigar = cig->n;
    *score = aln_finish(C, out);
    return SWGPU_OK;
}
