/*
 * search.c - swgpu-mpi search (mpi_search): each rank scans its part of the
 * database (the split: share.c), rank 0 merges.
 *
 * Per batch of queries (one batch unless scores must be kept for fits, see
 * below), as named phases:
 *   1. scan_batch: every rank scans every query against its part: the
 *      candidates per query (opts.candidates: the part's hits that may be
 *      among the whole search's top_n, with their E-values where these
 *      depend on the subject's length), ranked by (score desc, database
 *      index asc) with whole-database indices;
 *   2. merge_batch: rank 0 gathers them (MPI_Gatherv) and merges them with
 *      swgpu_search_merge(): the whole search's E-value filter, top_n, bit
 *      scores and E-values with the whole database's size.  When the matrix
 *      and gaps have no published Karlin-Altschul parameters they are
 *      fitted to each query's scores against the whole database: every rank
 *      kept its part's scores (opts.on_scores), and rank 0 gathers them query
 *      by query, in the whole database's scan order (parts in rank order);
 *   3. align_batch: rank 0 broadcasts the final hits; each rank aligns the
 *      hits whose targets it holds (swgpu_search_align); collect_batch: each
 *      sends rank 0 the alignments and those targets' records;
 *   4. after the last batch, rank 0 builds a small database of the hits'
 *      targets, for the output writer to name them from (names_db).
 * A rank whose part is streamed from disk (mpi_stream, share.c) scans it in
 * parts for its candidates (swgpu_search_stream_candidates) and, in step 3,
 * reads back the final hits its range holds (swgpu_db_open_hits) to align
 * them and send their records.
 * Every step is the library's own (the same code as swgpu search), so the
 * output is byte-identical to swgpu search with the same options.
 */
#define _POSIX_C_SOURCE 200809L
#include "mpi_cli.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ byte buffers */

typedef struct {
    char *p;
    size_t n, cap;
    int bad;   /* out of memory */
} buf_t;

static void put(buf_t *b, const void *x, size_t len)
{
    if (b->bad || len == 0)
        return;
    if (b->n + len > b->cap) {
        size_t cap = b->cap ? 2 * b->cap : 4096;
        while (cap < b->n + len)
            cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) {
            b->bad = 1;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->n, x, len);
    b->n += len;
}

static void put_u64(buf_t *b, uint64_t v) { put(b, &v, sizeof v); }
static void put_i64(buf_t *b, int64_t v) { put(b, &v, sizeof v); }
static void put_f64(buf_t *b, double v) { put(b, &v, sizeof v); }

typedef struct {
    const char *p, *end;
    int bad;   /* read past the end */
} rd_t;

static const void *get(rd_t *r, size_t len)
{
    if (r->bad || (size_t)(r->end - r->p) < len) {
        r->bad = 1;
        return NULL;
    }
    const void *x = r->p;
    r->p += len;
    return x;
}

static uint64_t get_u64(rd_t *r)
{
    const void *x = get(r, 8);
    uint64_t v = 0;
    if (x)
        memcpy(&v, x, 8);
    return v;
}

static int64_t get_i64(rd_t *r) { return (int64_t)get_u64(r); }

static double get_f64(rd_t *r)
{
    const void *x = get(r, 8);
    double v = 0;
    if (x)
        memcpy(&v, x, 8);
    return v;
}

/* Rank 0 gets every rank's bytes, rank after rank, in *all (malloc'ed),
 * rank k's at *all + off[k], len[k] bytes.  Every rank calls it; a buffer
 * too large for one message is sent as nothing and reported. */
static int gather_bytes(const buf_t *b, char **all, size_t *off, size_t *len)
{
    int n = b->bad || b->n > (size_t)INT_MAX / 2 ? -1 : (int)b->n;
    int *lens = NULL, *displs = NULL, rc = 0;
    *all = NULL;
    if (mpi_g.rank == 0) {
        lens = malloc((size_t)mpi_g.size * sizeof *lens);
        displs = malloc((size_t)mpi_g.size * sizeof *displs);
    }
    MPI_Gather(&n, 1, MPI_INT, lens, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (mpi_g.rank == 0) {
        long long tot = 0;
        for (int k = 0; k < mpi_g.size; k++) {
            if (lens[k] < 0)
                rc = -1;
            displs[k] = (int)tot;
            tot += lens[k] < 0 ? 0 : lens[k];
            if (lens[k] < 0)
                lens[k] = 0;
        }
        if (tot > INT_MAX)
            rc = -1;
        *all = malloc(tot > 0 && tot <= INT_MAX ? (size_t)tot : 1);
        if (!*all || rc) {
            for (int k = 0; k < mpi_g.size; k++)
                lens[k] = displs[k] = 0;
            rc = -1;
        }
        for (int k = 0; k < mpi_g.size; k++) {
            off[k] = (size_t)displs[k];
            len[k] = (size_t)lens[k];
        }
    }
    MPI_Gatherv(b->p, n < 0 ? 0 : n, MPI_BYTE, *all, lens, displs, MPI_BYTE, 0, MPI_COMM_WORLD);
    free(lens);
    free(displs);
    if (rc)
        cli_error("search: the results of one batch of queries are too large to gather "
                  "(more than 1 GiB a rank)");
    return rc;
}

/* --------------------------------------------------------------- the search */

/* a query set holding queries [i0, i1) of qs */
static int subset(const swgpu_seqset_t *qs, size_t i0, size_t i1, swgpu_seqset_t **out)
{
    swgpu_alphabet_t al = swgpu_seqset_alphabet(qs);
    char *buf = NULL;
    size_t cap = 0;
    int rc = swgpu_seqset_create(al, out);
    for (size_t i = i0; i < i1 && rc == SWGPU_OK; i++) {
        swgpu_seq_t q;
        swgpu_seqset_get(qs, i, &q);
        if (q.len + 1 > cap) {
            char *p = realloc(buf, q.len + 1);
            if (!p) {
                rc = SWGPU_ENOMEM;
                break;
            }
            buf = p;
            cap = q.len + 1;
        }
        for (size_t k = 0; k < q.len; k++)
            buf[k] = swgpu_decode(al, q.res[k]);
        rc = swgpu_seqset_add(*out, q.id, q.desc, buf, q.len);
    }
    free(buf);
    if (rc) {
        swgpu_seqset_destroy(*out);
        *out = NULL;
    }
    return rc;
}

/* the part's scores of every query of a batch (for fits) */
typedef struct {
    size_t nq;
    uint64_t n;
    int32_t *s;
} keep_t;

static int keep_scores(void *user, size_t query, const int32_t *scores, size_t n)
{
    keep_t *k = user;
    if (query >= k->nq || n != k->n)
        return SWGPU_EINVAL;
    if (n)
        memcpy(k->s + query * k->n, scores, n * sizeof *scores);
    return SWGPU_OK;
}

/* rank 0's side of the fit: query i's scores over the whole database, the
 * ranks' parts in rank order */
typedef struct {
    const keep_t *keep;
    int *counts, *displs;
    size_t calls;
} fit_t;

static int gather_scores(void *user, size_t query, int32_t *out)
{
    fit_t *f = user;
    MPI_Gatherv(f->keep->s + query * f->keep->n, (int)f->keep->n, MPI_INT32_T, out, f->counts,
                f->displs, MPI_INT32_T, 0, MPI_COMM_WORLD);
    f->calls++;
    return SWGPU_OK;
}

/* a target's record, as the output needs it */
typedef struct {
    uint64_t target;
    char *id, *desc;
    uint8_t *res;
    uint64_t len;
} rec_t;

typedef struct {
    rec_t *v;
    size_t n, cap;
} recs_t;

static int rec_cmp(const void *a, const void *b)
{
    const rec_t *x = a, *y = b;
    return (x->target > y->target) - (x->target < y->target);
}

static void recs_free(recs_t *r)
{
    for (size_t k = 0; k < r->n; k++) {
        free(r->v[k].id);
        free(r->v[k].desc);
        free(r->v[k].res);
    }
    free(r->v);
    memset(r, 0, sizeof *r);
}

/* the targets' records, sorted and unique, as the database the output
 * names hits from; each hit's target becomes its index there */
static int names_db(recs_t *recs, swgpu_alphabet_t al, swgpu_search_result_t *res,
                    swgpu_db_t **out)
{
    swgpu_seqset_t *set = NULL;
    char *buf = NULL;
    size_t cap = 0, u = 0;
    int rc;
    if (recs->n)
        qsort(recs->v, recs->n, sizeof *recs->v, rec_cmp);
    for (size_t k = 0; k < recs->n; k++) { /* unique */
        if (u && recs->v[u - 1].target == recs->v[k].target) {
            free(recs->v[k].id);
            free(recs->v[k].desc);
            free(recs->v[k].res);
            continue;
        }
        recs->v[u++] = recs->v[k];
    }
    recs->n = u;
    if ((rc = swgpu_seqset_create(al, &set)))
        return rc;
    for (size_t k = 0; k < recs->n && rc == SWGPU_OK; k++) {
        const rec_t *r = &recs->v[k];
        if (r->len + 1 > cap) {
            char *p = realloc(buf, r->len + 1);
            if (!p) {
                rc = SWGPU_ENOMEM;
                break;
            }
            buf = p;
            cap = r->len + 1;
        }
        for (uint64_t x = 0; x < r->len; x++)
            buf[x] = swgpu_decode(al, r->res[x]);
        rc = swgpu_seqset_add(set, r->id, r->desc, buf, r->len);
    }
    free(buf);
    for (size_t i = 0; i < res->n_queries && rc == SWGPU_OK; i++)
        for (size_t h = 0; h < res->q[i].n_hits; h++) {
            size_t lo = 0, hi = recs->n;
            uint64_t t = res->q[i].hits[h].target;
            while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (recs->v[mid].target < t)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            if (lo == recs->n || recs->v[lo].target != t) {
                cli_error("search: internal error: no rank sent the record of database sequence %llu",
                          (unsigned long long)t + 1);
                rc = SWGPU_EINVAL;
                break;
            }
            res->q[i].hits[h].target = lo;
        }
    if (rc == SWGPU_OK && recs->n)
        rc = swgpu_db_from_seqset(set, out);
    else if (rc == SWGPU_OK) { /* no hits at all: any database names nothing */
        swgpu_seqset_add(set, "none", "", "A", 1);
        rc = swgpu_db_from_seqset(set, out);
    }
    swgpu_seqset_destroy(set);
    return rc;
}

static int u64_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* This rank's hits of r (those whose target its part holds): their
 * alignments, then their targets' records (each once), for rank 0. */
static void pack_owned(const swgpu_search_result_t *r, const swgpu_db_t *db, int no_align,
                       buf_t *b)
{
    uint64_t *own = NULL;
    size_t n = 0, total = 0;
    for (size_t i = 0; i < r->n_queries; i++)
        total += r->q[i].n_hits;
    if (!(own = malloc((total ? total : 1) * sizeof *own))) {
        b->bad = 1;
        return;
    }
    for (size_t i = 0; i < r->n_queries; i++)
        for (size_t h = 0, f = 0; h < r->q[i].n_hits; h++) {
            const swgpu_hit_t *hit = &r->q[i].hits[h];
            const swgpu_aln_t *a = &hit->aln;
            swgpu_seq_t t;
            if (hit->hsp == 0) /* a subject's first hit: f its index in the merged result */
                f++;
            if (swgpu_db_get(db, hit->target, &t) != SWGPU_OK)
                continue;
            own[n++] = hit->target;
            if (no_align)
                continue;
            if (hit->hsp == 0) {
                put_u64(b, 1); /* an alignment */
                put_u64(b, i);
                put_u64(b, f - 1);
            } else { /* a further HSP (--max-hsps) of the subject of first hit f - 1 */
                put_u64(b, 3);
                put_u64(b, i);
                put_u64(b, f - 1);
                put_i64(b, hit->score);
                put_f64(b, hit->bits);
                put_f64(b, hit->evalue);
                put_u64(b, (uint64_t)hit->minus);
                put_u64(b, (uint64_t)hit->hsp);
            }
            put_i64(b, a->score);
            put_i64(b, a->qbeg);
            put_i64(b, a->qend);
            put_i64(b, a->tbeg);
            put_i64(b, a->tend);
            put_i64(b, a->length);
            put_i64(b, a->n_ident);
            put_i64(b, a->n_mismatch);
            put_i64(b, a->n_gapopen);
            put_i64(b, a->n_gaps);
            put_u64(b, a->n_cigar);
            put(b, a->cigar, a->n_cigar * sizeof *a->cigar);
        }
    if (n)
        qsort(own, n, sizeof *own, u64_cmp);
    for (size_t k = 0; k < n; k++) {
        swgpu_seq_t t;
        if (k && own[k] == own[k - 1])
            continue;
        swgpu_db_get(db, own[k], &t);
        put_u64(b, 2); /* a target record */
        put_u64(b, own[k]);
        put_u64(b, strlen(t.id));
        put(b, t.id, strlen(t.id));
        put_u64(b, strlen(t.desc));
        put(b, t.desc, strlen(t.desc));
        put_u64(b, t.len);
        put(b, t.res, t.len);
    }
    free(own);
}

/* an alignment as pack_owned() wrote it into a; -1 on a malformed buffer
 * or out of memory */
static int unpack_aln(rd_t *rd, swgpu_aln_t *a)
{
    a->score = (int32_t)get_i64(rd);
            a->qbeg = get_i64(rd);
            a->qend = get_i64(rd);
            a->tbeg = get_i64(rd);
            a->tend = get_i64(rd);
            a->length = get_i64(rd);
            a->n_ident = get_i64(rd);
            a->n_mismatch = get_i64(rd);
            a->n_gapopen = get_i64(rd);
    a->n_gaps = get_i64(rd);
    uint64_t nc = get_u64(rd);
    const void *c = get(rd, nc * sizeof *a->cigar);
    if (!c)
        return -1;
    if (nc > a->m_cigar) {
        uint32_t *p = realloc(a->cigar, nc * sizeof *p);
        if (!p)
            return -1;
        a->cigar = p;
        a->m_cigar = nc;
    }
    if (nc)
        memcpy(a->cigar, c, nc * sizeof *a->cigar);
    a->n_cigar = nc;
    return 0;
}

/* rank 0: one rank's alignments into res (queries from q0), the further
 * HSPs into extra, its records into recs; -1 on a malformed buffer or out
 * of memory */
static int unpack_owned(rd_t *rd, swgpu_search_result_t *res, size_t q0, int no_align,
                        mpi_hsps_t *extra, recs_t *recs)
{
    while (rd->p < rd->end && !rd->bad) {
        uint64_t kind = get_u64(rd);
        if (kind == 1 || kind == 3) {
            uint64_t i = get_u64(rd) + q0, h = get_u64(rd);
            if (i >= res->n_queries || h >= res->q[i].n_hits || no_align)
                return -1;
            if (kind == 1) {
                if (unpack_aln(rd, &res->q[i].hits[h].aln) < 0)
                    return -1;
                continue;
            }
            swgpu_hit_t x;
            memset(&x, 0, sizeof x);
            x.target = res->q[i].hits[h].target;
            x.score = (int32_t)get_i64(rd);
            x.bits = get_f64(rd);
            x.evalue = get_f64(rd);
            x.minus = (int)get_u64(rd);
            x.hsp = (int)get_u64(rd);
            if (unpack_aln(rd, &x.aln) < 0 || mpi_hsps_add(extra, (size_t)i, (size_t)h, &x) < 0) {
                swgpu_aln_free(&x.aln);
                return -1;
            }
        } else if (kind == 2) {
            rec_t r;
            memset(&r, 0, sizeof r);
            r.target = get_u64(rd);
            uint64_t il = get_u64(rd);
            const char *id = get(rd, il);
            uint64_t dl = get_u64(rd);
            const char *desc = get(rd, dl);
            r.len = get_u64(rd);
            const uint8_t *s = get(rd, r.len);
            if (rd->bad)
                return -1;
            if (recs->n == recs->cap) {
                size_t cap = recs->cap ? 2 * recs->cap : 256;
                rec_t *p = realloc(recs->v, cap * sizeof *p);
                if (!p)
                    return -1;
                recs->v = p;
                recs->cap = cap;
            }
            r.id = malloc(il + 1);
            r.desc = malloc(dl + 1);
            r.res = malloc(r.len ? r.len : 1);
            if (!r.id || !r.desc || !r.res) {
                free(r.id);
                free(r.desc);
                free(r.res);
                return -1;
            }
            memcpy(r.id, id, il);
            r.id[il] = 0;
            memcpy(r.desc, desc, dl);
            r.desc[dl] = 0;
            memcpy(r.res, s, r.len);
            recs->v[recs->n++] = r;
        } else {
            return -1;
        }
    }
    return rd->bad ? -1 : 0;
}

/* a hit's target with its strand in the top bit (a DNA minus-strand hit) */
#define MINUS_BIT ((uint64_t)1 << 63)
static uint64_t target_word(const swgpu_hit_t *h)
{
    return (uint64_t)h->target | (h->minus ? MINUS_BIT : 0);
}
static void set_target(swgpu_hit_t *h, uint64_t w)
{
    h->target = (size_t)(w & ~MINUS_BIT);
    h->minus = (w & MINUS_BIT) != 0;
}

/* the candidates of one rank's part: per query the count, then (target and
 * strand, score, E-value: the merge needs it where it depends on the subject) */
static void pack_candidates(const swgpu_search_result_t *c, buf_t *b)
{
    put_u64(b, c->cells);
    put_u64(b, c->overflows);
    put_f64(b, c->scan_seconds);
    put(b, c->backend ? c->backend : "", c->backend ? strlen(c->backend) + 1 : 1);
    for (size_t i = 0; i < c->n_queries; i++) {
        put_u64(b, c->q[i].n_hits);
        for (size_t h = 0; h < c->q[i].n_hits; h++) {
            put_u64(b, target_word(&c->q[i].hits[h]));
            put_i64(b, c->q[i].hits[h].score);
            put_f64(b, c->q[i].hits[h].evalue);
        }
    }
}

static const char *const backends[] = {"ref", "cpu", "cuda"};

static int unpack_candidates(rd_t *rd, size_t nq, swgpu_search_result_t **out)
{
    swgpu_search_result_t *r = calloc(1, sizeof *r);
    if (!r || !(r->q = calloc(nq ? nq : 1, sizeof *r->q))) {
        free(r);
        return -1;
    }
    *out = r;
    r->n_queries = nq;
    r->cells = get_u64(rd);
    r->overflows = get_u64(rd);
    r->scan_seconds = get_f64(rd);
    const char *name = rd->p;
    while (rd->p < rd->end && *rd->p)
        rd->p++;
    if (!get(rd, 1))
        return -1;
    r->backend = "unknown";
    for (size_t k = 0; k < sizeof backends / sizeof *backends; k++)
        if (!strcmp(name, backends[k]))
            r->backend = backends[k];
    for (size_t i = 0; i < nq; i++) {
        uint64_t n = get_u64(rd);
        r->q[i].query = i;
        if (rd->bad || n > (uint64_t)(rd->end - rd->p) / 24)
            return -1;
        if (n && !(r->q[i].hits = calloc(n, sizeof *r->q[i].hits)))
            return -1;
        r->q[i].n_hits = n;
        for (uint64_t h = 0; h < n; h++) {
            set_target(&r->q[i].hits[h], get_u64(rd));
            r->q[i].hits[h].score = (int32_t)get_i64(rd);
            r->q[i].hits[h].evalue = get_f64(rd);
        }
    }
    return rd->bad ? -1 : 0;
}

/* the final hits of a batch, rank 0 to all: per query the count, then
 * (target and strand, score) */
static int share_hits(swgpu_search_result_t *merged, size_t nq, int copy0,
                      swgpu_search_result_t **mine)
{
    buf_t b = {0};
    long long len = 0;
    if (mpi_g.rank == 0) {
        for (size_t i = 0; i < nq; i++) {
            put_u64(&b, merged->q[i].n_hits);
            put(&b, &merged->q[i].karlin, sizeof merged->q[i].karlin);
            for (size_t h = 0; h < merged->q[i].n_hits; h++) {
                put_u64(&b, target_word(&merged->q[i].hits[h]));
                put_i64(&b, merged->q[i].hits[h].score);
            }
        }
        len = b.bad || b.n > INT_MAX ? -1 : (long long)b.n;
    }
    MPI_Bcast(&len, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
    if (len < 0) {
        free(b.p);
        if (mpi_g.rank == 0)
            cli_error("search: out of memory for the hits");
        return -1;
    }
    if (mpi_g.rank != 0 && !(b.p = malloc(len ? (size_t)len : 1)))
        MPI_Abort(MPI_COMM_WORLD, 1); /* cannot stay in step without it */
    MPI_Bcast(b.p, (int)len, MPI_BYTE, 0, MPI_COMM_WORLD);
    if (mpi_g.rank == 0 && !copy0) { /* rank 0 aligns in the merged result itself */
        free(b.p);
        *mine = merged;
        return 0;
    }
    rd_t rd = {b.p, b.p + len, 0};
    swgpu_search_result_t *r = calloc(1, sizeof *r);
    int rc = -1;
    if (r && (r->q = calloc(nq ? nq : 1, sizeof *r->q))) {
        r->n_queries = nq;
        rc = 0;
        for (size_t i = 0; i < nq && rc == 0; i++) {
            uint64_t n = get_u64(&rd);
            const void *k = get(&rd, sizeof r->q[i].karlin);
            r->q[i].query = i;
            if (k)
                memcpy(&r->q[i].karlin, k, sizeof r->q[i].karlin);
            if (rd.bad || n > (uint64_t)(rd.end - rd.p) / 16 ||
                (n && !(r->q[i].hits = calloc(n, sizeof *r->q[i].hits)))) {
                rc = -1;
                break;
            }
            r->q[i].n_hits = n;
            for (uint64_t h = 0; h < n; h++) {
                set_target(&r->q[i].hits[h], get_u64(&rd));
                r->q[i].hits[h].score = (int32_t)get_i64(&rd);
                r->q[i].hits[h].aln.score = r->q[i].hits[h].score;
            }
        }
    }
    free(b.p);
    if (rc) {
        swgpu_search_result_destroy(r);
        cli_error("search: out of memory for the hits");
        return -1;
    }
    *mine = r;
    return 0;
}

/* rank 0: move the batch's merged queries into the whole result, from q0 */
static void take_batch(swgpu_search_result_t *all, swgpu_search_result_t *b, size_t q0)
{
    for (size_t i = 0; i < b->n_queries; i++) {
        all->q[q0 + i] = b->q[i];
        all->q[q0 + i].query = q0 + i;
    }
    b->n_queries = 0; /* the hits changed hands */
    all->cells += b->cells;
    all->overflows += b->overflows;
    all->scan_seconds += b->scan_seconds;
    all->backend = b->backend;
}

/* what every batch of a search shares */
typedef struct {
    const swgpu_db_t *db;
    const swgpu_matrix_t *m;
    const swgpu_opts_t *o;
    swgpu_db_part_t part;
    int fitting;                /* Karlin-Altschul parameters fitted to the scores */
    uint64_t *tlen;             /* rank 0, fits: the whole database's lengths, scan order */
    int *counts, *displs;       /* rank 0, fits: each part's sequence count and offset */
    size_t batch;               /* queries a batch */
    swgpu_search_result_t *all; /* rank 0: the whole result */
    recs_t recs;                /* rank 0: the hits' targets' records */
    double t_align;
} run_t;

/* one batch's state: queries [q0, q0 + bn) */
typedef struct {
    size_t q0, bn;
    swgpu_seqset_t *bq;         /* the batch's queries, when not all of them */
    const swgpu_seqset_t *qs;   /* the batch's queries */
    swgpu_search_result_t *cand, *merged, *mine; /* mine: the merged hits this rank aligns
                                                    (rank 0: merged itself, unless further
                                                    HSPs are asked for) */
    swgpu_db_t *held;           /* a streamed part: the hits it holds, read back */
    mpi_hsps_t extra;           /* rank 0: the further HSPs (--max-hsps) */
    keep_t keep;
    buf_t b;
    char *gathered;
    size_t *off, *len;          /* rank 0: each rank's bytes in gathered */
    double t0;
} batch_t;

/* fits: rank 0 gets the whole database's lengths in scan order (the parts
 * in rank order) and each part's place there */
static void gather_lengths(run_t *s)
{
    int n = (int)s->part.n;
    uint64_t *mine = malloc((s->part.n ? s->part.n : 1) * sizeof *mine);
    if (mpi_g.rank == 0) {
        s->tlen = malloc((s->part.total_n ? s->part.total_n : 1) * sizeof *s->tlen);
        s->counts = malloc((size_t)mpi_g.size * sizeof *s->counts);
        s->displs = malloc((size_t)mpi_g.size * sizeof *s->displs);
        if (!s->tlen || !s->counts || !s->displs)
            MPI_Abort(MPI_COMM_WORLD, 1); /* a few bytes a sequence, before any work */
    }
    if (!mine)
        MPI_Abort(MPI_COMM_WORLD, 1);
    for (uint64_t x = 0; x < s->part.n; x++) {
        swgpu_seq_t q;
        swgpu_db_get(s->db, swgpu_db_scan_index(s->db, x), &q);
        mine[x] = q.len;
    }
    MPI_Gather(&n, 1, MPI_INT, s->counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (mpi_g.rank == 0)
        for (int r = 0, d = 0; r < mpi_g.size; r++) {
            s->displs[r] = d;
            d += s->counts[r];
        }
    MPI_Gatherv(mine, n, MPI_UINT64_T, s->tlen, s->counts, s->displs, MPI_UINT64_T, 0,
                MPI_COMM_WORLD);
    free(mine);
}

/* The queries a batch: all, at most 4,096 (tests lower it with
 * SWGPU_MPI_BATCH), and with fits, which keep each rank's part's scores of
 * a batch, at most 1 GiB of scores on any rank.  Rank 0's choice holds for
 * all (the environment may differ between nodes). */
static void plan_batches(run_t *s, size_t nq)
{
    const char *env = getenv("SWGPU_MPI_BATCH");
    size_t batch = nq ? nq : 1;
    if (batch > 4096)
        batch = 4096;
    if (env && atoi(env) > 0 && (size_t)atoi(env) < batch)
        batch = (size_t)atoi(env);
    if (s->fitting) {
        unsigned long long mx = s->part.n, big;
        MPI_Allreduce(&mx, &big, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
        size_t b = (size_t)(((uint64_t)1 << 30) / (4 * (big ? big : 1)));
        if (b < 1)
            b = 1;
        if (b < batch)
            batch = b;
        gather_lengths(s);
    }
    unsigned long long bb = batch;
    MPI_Bcast(&bb, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
    s->batch = (size_t)bb;
}

/* 1. every rank: the candidates of its part for the batch's queries (and,
 * for fits, its part's scores) */
static int scan_batch(run_t *s, batch_t *bt, const swgpu_seqset_t *queries)
{
    int rc = SWGPU_OK;
    if (!bt->off || !bt->len)
        rc = SWGPU_ENOMEM;
    if (rc == SWGPU_OK && bt->bn != swgpu_seqset_size(queries) &&
        (rc = subset(queries, bt->q0, bt->q0 + bt->bn, &bt->bq)) == SWGPU_OK)
        bt->qs = bt->bq;
    if (rc == SWGPU_OK) {
        swgpu_opts_t oc = *s->o;
        oc.candidates = 1;
        if (s->fitting) {
            size_t n = bt->bn * s->part.n;
            bt->keep.s = malloc((n > 0 ? n : 1) * sizeof *bt->keep.s);
            oc.on_scores = keep_scores;
            oc.on_scores_user = &bt->keep;
            if (!bt->keep.s)
                rc = SWGPU_ENOMEM;
        }
        if (rc == SWGPU_OK)
            rc = mpi_stream.parts > 1
                     ? swgpu_search_stream_candidates(bt->qs, mpi_stream.path, mpi_stream.from,
                                                      mpi_stream.to, mpi_stream.parts, s->m, &oc,
                                                      &bt->cand)
                     : swgpu_search(bt->qs, s->db, s->m, &oc, &bt->cand);
        if (rc < 0) {
            const char *msg = swgpu_last_error();
            cli_error("%s", rc == SWGPU_ENOMEM && !bt->cand && !*msg ? "out of memory" : msg);
        }
    }
    if (rc == SWGPU_OK && mpi_inject("scan"))
        rc = SWGPU_EINVAL;
    return rc;
}

/* 2, rank 0: the ranks' candidates merged into the batch's hits, fitting
 * with the scores the ranks send query by query */
static int merge_parts(run_t *s, batch_t *bt, int rc)
{
    swgpu_search_result_t **parts = calloc((size_t)mpi_g.size, sizeof *parts);
    fit_t fit = {&bt->keep, s->counts, s->displs, 0};
    swgpu_merge_src_t src = {s->part.total_n, s->part.total_residues, s->tlen,
                             s->fitting ? gather_scores : NULL, &fit};
    for (int r = 0; r < mpi_g.size && rc == SWGPU_OK && parts; r++) {
        rd_t rd = {bt->gathered + bt->off[r], bt->gathered + bt->off[r] + bt->len[r], 0};
        if (unpack_candidates(&rd, bt->bn, &parts[r]) < 0) {
            cli_error("search: malformed candidates from rank %d", r);
            rc = SWGPU_EINVAL;
        }
    }
    if (!parts)
        rc = SWGPU_ENOMEM;
    if (rc == SWGPU_OK &&
        (rc = swgpu_search_merge(bt->qs, s->m, s->o, (const swgpu_search_result_t *const *)parts,
                                 (size_t)mpi_g.size, &src, &bt->merged)) < 0)
        cli_error("%s", swgpu_last_error());
    if (s->fitting) /* keep in step with the ranks that send their scores */
        for (size_t i = fit.calls; i < bt->bn; i++) {
            int32_t *scratch = malloc((s->part.total_n ? s->part.total_n : 1) * sizeof *scratch);
            if (!scratch)
                MPI_Abort(MPI_COMM_WORLD, 1);
            gather_scores(&fit, i, scratch);
            free(scratch);
        }
    for (int r = 0; parts && r < mpi_g.size; r++)
        swgpu_search_result_destroy(parts[r]);
    free(parts);
    if (rc == SWGPU_OK && mpi_inject("merge"))
        rc = SWGPU_EINVAL;
    return rc;
}

/* 2. rank 0 gathers the candidates and merges them; for fits, the other
 * ranks send their scores query by query */
static int merge_batch(run_t *s, batch_t *bt)
{
    int rc = SWGPU_OK;
    pack_candidates(bt->cand, &bt->b);
    if (gather_bytes(&bt->b, &bt->gathered, bt->off, bt->len) < 0)
        rc = SWGPU_ENOMEM;
    bt->t0 = MPI_Wtime();
    if (mpi_g.rank == 0)
        rc = merge_parts(s, bt, rc);
    else if (s->fitting)
        for (size_t i = 0; i < bt->bn; i++)
            MPI_Gatherv(bt->keep.s + i * bt->keep.n, (int)bt->keep.n, MPI_INT32_T, NULL, NULL,
                        NULL, MPI_INT32_T, 0, MPI_COMM_WORLD);
    return rc;
}

/* 3. the final hits to every rank; each aligns those it holds */
static int align_batch(run_t *s, batch_t *bt)
{
    int rc = SWGPU_OK;
    if (share_hits(bt->merged, bt->bn, s->o->max_hsps > 1 && !s->o->no_align, &bt->mine) < 0)
        rc = SWGPU_ENOMEM;
    else if (mpi_stream.parts > 1 && (rc = mpi_stream_held(bt->mine, &bt->held)) < 0)
        cli_error("%s", rc == SWGPU_ENOMEM ? "out of memory for the hits" : swgpu_last_error());
    else if (!s->o->no_align &&
             (rc = swgpu_search_align(bt->mine, bt->qs, bt->held ? bt->held : s->db, s->m,
                                      s->o)) < 0)
        cli_error("%s", swgpu_last_error());
    if (rc == SWGPU_OK && mpi_inject("align"))
        rc = SWGPU_EINVAL;
    return rc;
}

/* 3. rank 0 gathers the alignments and the targets' records, and takes the
 * batch's hits into the whole result */
static int collect_batch(run_t *s, batch_t *bt)
{
    int rc = SWGPU_OK;
    free(bt->b.p);
    memset(&bt->b, 0, sizeof bt->b);
    free(bt->gathered);
    bt->gathered = NULL;
    if (bt->mine)
        pack_owned(bt->mine, bt->held ? bt->held : s->db, s->o->no_align, &bt->b);
    if (gather_bytes(&bt->b, &bt->gathered, bt->off, bt->len) < 0)
        rc = SWGPU_ENOMEM;
    if (mpi_g.rank == 0) {
        for (int r = 0; r < mpi_g.size && rc == SWGPU_OK; r++) {
            rd_t rd = {bt->gathered + bt->off[r], bt->gathered + bt->off[r] + bt->len[r], 0};
            if (unpack_owned(&rd, bt->merged, 0, s->o->no_align, &bt->extra, &s->recs) < 0) {
                cli_error("search: malformed alignments from rank %d (or out of memory)", r);
                rc = SWGPU_EINVAL;
            }
        }
        if (rc == SWGPU_OK && mpi_hsps_splice(&bt->extra, bt->merged) < 0) {
            cli_error("search: out of memory for the further HSPs");
            rc = SWGPU_ENOMEM;
        }
        if (rc == SWGPU_OK)
            take_batch(s->all, bt->merged, bt->q0);
    }
    s->t_align += MPI_Wtime() - bt->t0;
    return rc;
}

/* One batch, queries [q0, q1), as its phases with an agreement after each.
 * Sets *failed once a failure is known everywhere. */
static int run_batch(run_t *s, const swgpu_seqset_t *queries, size_t q0, size_t q1, int *failed)
{
    batch_t bt = {.q0 = q0, .bn = q1 - q0, .qs = queries,
                  .keep = {q1 - q0, s->part.n, NULL},
                  .off = calloc((size_t)mpi_g.size, sizeof *bt.off),
                  .len = calloc((size_t)mpi_g.size, sizeof *bt.len)};
    int rc = scan_batch(s, &bt, queries);
    if (mpi_agree(rc < 0) < 0)
        goto done;
    rc = merge_batch(s, &bt);
    if (mpi_agree(rc < 0) < 0)
        goto done;
    rc = align_batch(s, &bt);
    if (mpi_agree(rc < 0) < 0)
        goto done;
    rc = collect_batch(s, &bt);
done:
    if (mpi_g.known)
        *failed = 1;
    if (rc < 0 && !*failed) /* a failure after the last agreement: the next one */
        *failed = mpi_agree(1) < 0;
    if (bt.mine != bt.merged)
        swgpu_search_result_destroy(bt.mine);
    mpi_hsps_free(&bt.extra);
    swgpu_search_result_destroy(bt.merged);
    swgpu_search_result_destroy(bt.cand);
    swgpu_db_destroy(bt.held);
    swgpu_seqset_destroy(bt.bq);
    free(bt.keep.s);
    free(bt.b.p);
    free(bt.gathered);
    free(bt.off);
    free(bt.len);
    return rc;
}

int mpi_search(const swgpu_seqset_t *queries, const swgpu_db_t *db, const swgpu_matrix_t *m,
               const swgpu_opts_t *o, swgpu_search_result_t **res, swgpu_db_t **names)
{
    run_t s = {.db = db, .m = m, .o = o};
    swgpu_karlin_t k;
    size_t nq = swgpu_seqset_size(queries);
    int failed = 0, rc = SWGPU_OK;

    *res = NULL;
    *names = NULL;
    if (mpi_agree(0) < 0)
        return mpi_peer_failed();
    swgpu_db_part_info(db, &s.part);
    s.fitting = swgpu_karlin_lookup(m, o->gap_open, o->gap_extend, &k) != SWGPU_OK;
    if (s.fitting && s.part.total_n > INT_MAX) { /* MPI's counts and displacements are int */
        if (mpi_g.rank == 0)
            cli_error("search: %llu database sequences: a fit of the statistics (a matrix and gaps "
                      "without Karlin-Altschul parameters) gathers every score on rank 0, at most "
                      "%d sequences across ranks", (unsigned long long)s.part.total_n, INT_MAX);
        return SWGPU_ERANGE;
    }
    if (mpi_stream_agree(s.fitting) < 0)
        return SWGPU_EINVAL;
    plan_batches(&s, nq);
    if (mpi_g.rank == 0 && (!(s.all = calloc(1, sizeof *s.all)) ||
                            !(s.all->q = calloc(nq ? nq : 1, sizeof *s.all->q)))) {
        cli_error("search: out of memory for %zu queries", nq);
        rc = SWGPU_ENOMEM;
    }
    if (s.all)
        s.all->n_queries = nq;
    if (mpi_agree(rc < 0) < 0)
        failed = 1;

    for (size_t q0 = 0; q0 < nq && !failed; q0 += s.batch)
        rc = run_batch(&s, queries, q0, q0 + s.batch < nq ? q0 + s.batch : nq, &failed);

    /* 4. the database the output names hits from */
    if (!failed && mpi_g.rank == 0) {
        s.all->align_seconds = s.t_align;
        if ((rc = names_db(&s.recs, swgpu_db_alphabet(db), s.all, names)) < 0)
            cli_error("search: cannot build the hits' records: %s", swgpu_strerror(rc));
    }
    recs_free(&s.recs);
    free(s.tlen);
    free(s.counts);
    free(s.displs);
    if (!failed && mpi_agree(rc < 0) < 0)
        failed = 1;
    if (failed) {
        swgpu_search_result_destroy(s.all);
        swgpu_db_destroy(*names);
        *names = NULL;
        return rc < 0 ? rc : mpi_peer_failed();
    }
    *res = s.all;
    return SWGPU_OK;
}
