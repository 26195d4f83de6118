/*
 * search/hits.c - the hits of each query as the engine's scores come
 * (swgpu__search_sink): its Karlin-Altschul parameters, the top_n hits by
 * (score desc, database index asc) that pass the E-value filter, --no-self,
 * a part's candidates (opts->candidates), progress; the chosen hits'
 * alignments are queued (pipeline.c).
 */
#include "search/search.h"

#include <pthread.h>
#include <string.h>

/* 1 if a ranks better than b: higher score, then smaller database index. */
static int better(const swgpu__cand_t *a, const swgpu__cand_t *b)
{
    return a->score > b->score || (a->score == b->score && a->target < b->target);
}

/* Min-heap on rank: h[0] is the worst of the kept candidates. */
static void heap_down(swgpu__cand_t *h, size_t n, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, w = i;
        if (l < n && better(&h[w], &h[l])) w = l;
        if (r < n && better(&h[w], &h[r])) w = r;
        if (w == i)
            return;
        swgpu__cand_t t = h[i];
        h[i] = h[w];
        h[w] = t;
        i = w;
    }
}

static void heap_up(swgpu__cand_t *h, size_t i)
{
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!better(&h[p], &h[i]))
            return;
        swgpu__cand_t t = h[i];
        h[i] = h[p];
        h[p] = t;
        i = p;
    }
}

static int cmp_rank(const void *a, const void *b)
{
    const swgpu__cand_t *x = a, *y = b;
    return better(x, y) ? -1 : better(y, x) ? 1 : 0;
}

/* The best (up to) cap candidates with score > 0 and, when filter is set,
 * E-value <= max_e, best first; returns the count.  heap has room for cap
 * entries.  Scores below min_score cannot reach max_e
 * (swgpu__evalue_min_score) or are not wanted; the others get their E-value
 * under ev (none: 0) computed when they would enter the heap. */
static size_t top_hits(const swgpu_db_t *db, const int32_t *scores, const uint8_t *minus,
                       const uint64_t *tlen, const swgpu__evalue_ctx_t *ev, int32_t min_score,
                       double max_e, int filter, size_t cap, swgpu__cand_t *heap)
{
    size_t n = 0;
    if (min_score < 1)
        min_score = 1;
    for (uint64_t k = 0; k < db->n && cap > 0; k++) {
        if (scores[k] < min_score)
            continue;
        swgpu__cand_t c = {scores[k], db->orig[k], 0.0, minus ? minus[k] : 0};
        if (n == cap && !better(&c, &heap[0]))
            continue;
        if (ev)
            c.evalue = swgpu__evalue_of(ev, c.score, tlen[k]);
        if (filter && !(c.evalue <= max_e))
            continue;
        if (n < cap) {
            heap[n] = c;
            heap_up(heap, n++);
        } else {
            heap[0] = c;
            heap_down(heap, n, 0);
        }
    }
    qsort(heap, n, sizeof *heap, cmp_rank);
    return n;
}

/* --no-self: the database sequences with the same id as query q (id) and
 * the same residues, as sorted indices into ex (at most cap); returns the
 * count */
static size_t self_hits(const swgpu__pipe_t *c, const char *id, const swgpu__query_t *q,
                        uint64_t *ex, size_t cap)
{
    const swgpu_db_t *db = c->db;
    size_t lo = 0, hi = (size_t)db->n, n = 0;
    while (lo < hi) { /* first id >= id */
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(db->names + db->name_off[c->id_ord[mid]], id) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (; lo < db->n && n < cap; lo++) {
        uint32_t x = c->id_ord[lo];
        if (strcmp(db->names + db->name_off[x], id) != 0)
            break;
        uint64_t k = db->rank[x] - db->part_first; /* x is one of the part's */
        uint64_t len = db->off[k + 1] - db->off[k];
        if (len == q->len && !memcmp(db->res + db->off[k], q->res, q->len))
            ex[n++] = k;
    }
    return n;
}

static const swgpu_db_t *cmp_db; /* set while id_ord is sorted (under a lock) */
static pthread_mutex_t cmp_lock = PTHREAD_MUTEX_INITIALIZER;

static int cmp_ids(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    int c = strcmp(cmp_db->names + cmp_db->name_off[x], cmp_db->names + cmp_db->name_off[y]);
    return c ? c : (x > y) - (x < y);
}

int swgpu__id_order(const swgpu_db_t *db, uint32_t **out)
{
    uint32_t *id_ord = malloc(db->n * sizeof *id_ord);
    if (!id_ord)
        return swgpu__fail(SWGPU_ENOMEM, "search: out of memory for %llu ids",
                           (unsigned long long)db->n);
    for (uint64_t x = 0; x < db->n; x++)
        id_ord[x] = db->orig[x];
    pthread_mutex_lock(&cmp_lock);
    cmp_db = db;
    qsort(id_ord, (size_t)db->n, sizeof *id_ord, cmp_ids);
    cmp_db = NULL;
    pthread_mutex_unlock(&cmp_lock);
    *out = id_ord;
    return SWGPU_OK;
}

/* one more query scanned (cells of it): tell opts->progress, at most about
 * five times a second and once for the last query */
static void report_progress(swgpu__pipe_t *c, uint64_t cells)
{
    c->n_done++;
    c->cells_done += cells * (c->strands.both ? 2 : 1);
    if (!c->o->progress)
        return;
    double now = swgpu__now();
    if (c->n_done < c->r->n_queries && now - c->t_report < 0.2)
        return;
    c->t_report = now;
    c->o->progress(c->n_done, c->r->n_queries, c->cells_done, c->cells_total, now - c->t0,
                   c->o->progress_user);
}

/* the fallback parameters (swgpu__fallback_karlin), looked up once */
static int get_fallback(swgpu__pipe_t *c)
{
    int rc;
    if (!c->have_fallback) {
        if ((rc = swgpu__fallback_karlin(c->alphabet, &c->fallback)) < 0)
            return rc;
        c->have_fallback = 1;
    }
    return SWGPU_OK;
}

/* The best (up to) c->cap hits of query i in c->heap, best first, --no-self
 * applied: top_hits() with ev, min_score, max_e and filter; returns the
 * count. */
static size_t select_top(swgpu__pipe_t *c, size_t i, const int32_t *scores,
                         const swgpu__evalue_ctx_t *ev, int32_t min_score, int filter)
{
    const swgpu_db_t *db = c->db;
    uint64_t ex[8];
    size_t nex = c->id_ord ? self_hits(c, c->ids[i], &c->qs[i], ex, 8) : 0;
    size_t want = c->cap + nex < (size_t)db->n ? c->cap + nex : (size_t)db->n;
    size_t n = top_hits(db, scores, c->minus, c->tlen, ev, min_score, c->o->evalue, filter, want,
                        c->heap);
    if (nex) { /* drop the self hits: the rest are the best of the others */
        size_t w = 0;
        for (size_t h = 0; h < n; h++) {
            int self = 0;
            for (size_t e = 0; e < nex; e++)
                self |= c->heap[h].target == db->orig[ex[e]];
            if (!self)
                c->heap[w++] = c->heap[h];
        }
        n = w;
    }
    return n < c->cap ? n : c->cap;
}

/*
 * opts->candidates: query i's candidates, nothing else (see swgpu.h).  The
 * whole search picks its top_n among the hits with E-value <= opts->evalue,
 * so every part must send each hit of its own that could be among them:
 *  - published parameters: the part's best top_n of the hits that pass, as
 *    sink() chooses them (the E-values with the whole database's size);
 *  - parameters fitted to the whole database's scores (swgpu_search_merge):
 *    unknown here.  Fitted parameters give E-values that depend on the
 *    score alone, so the part's best top_n by score hold the best that
 *    pass; if the fit fails, the fallback parameters apply, whose E-values
 *    under Spouge's model depend on the subject's length too: then the
 *    best top_n of those that pass under the fallback are added.
 * Each candidate's evalue is its E-value under the published parameters,
 * else under the fallback ones (the merge takes it where it depends on the
 * subject's length, which the merge does not know).
 */
static int candidates(swgpu__pipe_t *c, size_t i, const int32_t *scores)
{
    const swgpu_db_t *db = c->db;
    const swgpu__query_t *q = &c->qs[i];
    swgpu_query_result_t *qr = &c->r->q[i];
    swgpu__evalue_ctx_t ev;
    swgpu__cand_t *more = NULL;
    size_t n, nb = 0;
    int rc;

    if (c->have_fixed) {
        swgpu__evalue_init(&ev, c->qfixed ? &c->qfixed[i] : &c->fixed, c->o->evalue_model,
                           q->len, swgpu__db_whole_res(db), swgpu__db_whole_n(db));
        n = select_top(c, i, scores, &ev, swgpu__evalue_min_score(&ev, c->o->evalue), 1);
    } else {
        if ((rc = get_fallback(c)) < 0)
            return rc;
        swgpu__evalue_init(&ev, &c->fallback, c->o->evalue_model, q->len,
                           swgpu__db_whole_res(db), swgpu__db_whole_n(db));
        if (ev.spouge) { /* the best that pass should the fit fail */
            nb = select_top(c, i, scores, &ev, swgpu__evalue_min_score(&ev, c->o->evalue), 1);
            if (nb && !(more = malloc(nb * sizeof *more)))
                return swgpu__fail(SWGPU_ENOMEM, "search: out of memory for %zu hits", nb);
            if (nb)
                memcpy(more, c->heap, nb * sizeof *more);
        }
        n = select_top(c, i, scores, &ev, 1, 0); /* the best by score */
    }
    if (n + nb && !(qr->hits = calloc(n + nb, sizeof *qr->hits))) {
        free(more);
        return swgpu__fail(SWGPU_ENOMEM, "search: out of memory for %zu hits", n + nb);
    }
    size_t a = 0, b = 0, k = 0; /* both lists best first: their union, best first */
    while (a < n || b < nb) {
        const swgpu__cand_t *x;
        if (b == nb || (a < n && !better(&more[b], &c->heap[a])))
            x = &c->heap[a++];
        else
            x = &more[b++];
        if (k && qr->hits[k - 1].target == x->target)
            continue; /* in both */
        qr->hits[k].target = x->target;
        qr->hits[k].score = x->score;
        qr->hits[k].evalue = x->evalue;
        qr->hits[k].aln.score = x->score;
        qr->hits[k].minus = x->minus;
        k++;
    }
    qr->n_hits = k;
    free(more);
    return SWGPU_OK;
}

/* the engine's scores of query i: statistics, the top hits, their queued
 * alignments */
int swgpu__search_sink(void *user, size_t i, const int32_t *scores)
{
    swgpu__pipe_t *c = user;
    const swgpu_db_t *db = c->db;
    swgpu_query_result_t *qr = &c->r->q[i];
    const swgpu__query_t *q = &c->qs[i];
    const char *id = c->ids[i];
    int rc;
    qr->query = i;

    if (c->o->on_scores &&
        (rc = c->o->on_scores(c->o->on_scores_user, i, scores, (size_t)db->n)) < 0)
        return swgpu__fail(rc, "search: the on_scores callback failed for query %zu (id %s)",
                           i + 1, id);
    if (c->o->candidates) {
        if ((rc = candidates(c, i, scores)) < 0)
            return rc;
        report_progress(c, (uint64_t)q->len * db->total_res);
        return SWGPU_OK;
    }

    if (c->have_fixed) {
        qr->karlin = c->qfixed ? c->qfixed[i] : c->fixed;
    } else if (swgpu_karlin_fit(scores, c->tlen, (size_t)db->n, q->len, &qr->karlin) < 0) {
        swgpu__log(SWGPU_LOG_DEBUG, "query %zu (id %s): %s", i + 1, id, swgpu_last_error());
        if ((rc = get_fallback(c)) < 0)
            return rc;
        qr->karlin = c->fallback;
        c->n_fallback++;
    }

    /* E-values with the whole database's size (a part's too) */
    swgpu__evalue_ctx_t ev;
    swgpu__evalue_init(&ev, &qr->karlin, c->o->evalue_model, q->len, swgpu__db_whole_res(db),
                       swgpu__db_whole_n(db));
    size_t kept = select_top(c, i, scores, &ev, swgpu__evalue_min_score(&ev, c->o->evalue), 1);
    if (kept && !(qr->hits = calloc(kept, sizeof *qr->hits)))
        return swgpu__fail(SWGPU_ENOMEM, "search: out of memory for %zu hits", kept);
    for (size_t h = 0; h < kept; h++) {
        swgpu_hit_t *hit = &qr->hits[h];
        hit->target = c->heap[h].target;
        hit->score = c->heap[h].score;
        hit->bits = swgpu_bitscore(&qr->karlin, hit->score);
        hit->evalue = c->heap[h].evalue;
        hit->aln.score = hit->score;
        hit->minus = c->heap[h].minus;
    }
    qr->n_hits = kept;
    swgpu__log(SWGPU_LOG_DEBUG, "query %zu (id %s, %zu residues): %zu hits, best score %d",
               i + 1, id, q->len, kept, kept ? (int)qr->hits[0].score : 0);
    if ((rc = swgpu__push_jobs(c, i)) < 0)
        return rc;
    report_progress(c, (uint64_t)q->len * db->total_res);
    return SWGPU_OK;
}

