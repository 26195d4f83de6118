/*
 * hsps.c - swgpu-mpi's further HSPs (--max-hsps): the ranks that hold a
 * subject align its further HSPs (swgpu_search_align) and send them to
 * rank 0 (search.c), which puts each after its subject's first hit, as
 * swgpu_search() lists them.
 */
#include "mpi_cli.h"

#include <stdlib.h>
#include <string.h>

int mpi_hsps_add(mpi_hsps_t *x, size_t i, size_t f, const swgpu_hit_t *h)
{
    if (x->n == x->cap) {
        size_t cap = x->cap ? 2 * x->cap : 64;
        mpi_hsp_t *p = realloc(x->v, cap * sizeof *p);
        if (!p)
            return -1;
        x->v = p;
        x->cap = cap;
    }
    x->v[x->n++] = (mpi_hsp_t){i, f, *h};
    return 0;
}

static int by_place(const void *a, const void *b)
{
    const mpi_hsp_t *x = a, *y = b;
    if (x->i != y->i)
        return x->i < y->i ? -1 : 1;
    if (x->f != y->f)
        return x->f < y->f ? -1 : 1;
    return (x->h.hsp > y->h.hsp) - (x->h.hsp < y->h.hsp);
}

int mpi_hsps_splice(mpi_hsps_t *x, swgpu_search_result_t *r)
{
    if (!x->n)
        return 0;
    qsort(x->v, x->n, sizeof *x->v, by_place);
    size_t k = 0;
    for (size_t i = 0; i < r->n_queries; i++) {
        size_t n = 0, e = k;
        while (e < x->n && x->v[e].i == i)
            e++;
        if (e == k)
            continue;
        swgpu_query_result_t *qr = &r->q[i];
        swgpu_hit_t *h = malloc((qr->n_hits + (e - k)) * sizeof *h);
        if (!h)
            return -1;
        for (size_t f = 0; f < qr->n_hits; f++) {
            h[n++] = qr->hits[f];
            for (; k < e && x->v[k].f == f; k++)
                h[n++] = x->v[k].h;
        }
        free(qr->hits);
        qr->hits = h;
        qr->n_hits = n;
        k = e;
    }
    x->n = 0;
    return 0;
}

void mpi_hsps_free(mpi_hsps_t *x)
{
    for (size_t k = 0; k < x->n; k++)
        swgpu_aln_free(&x->v[k].h.aln);
    free(x->v);
    memset(x, 0, sizeof *x);
}
