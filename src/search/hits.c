/*
 * search/hits.c - the hits of each query as the engine's scores come
 * (swgpu__search_sink): its Karlin-Altschul parameters, the top_n hits by
 * opts->rank that pass the E-value filter, --no-self,
 * a part's candidates (opts->candidates), progress; the chosen hits'
 * alignments are queued (pipeline.c).
 */
#include "search/search.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* 1 if a ranks before b under rank (search.h: swgpu__rank_before). */
static int before(swgpu_rank_t rank, const swgpu__cand_t *a, const swgpu__cand_t *b)
{
    return swgpu__rank_before(rank, a->score, a->evalue, a->target, b->score, b->evalue,
                              b->target);
}

/* Min-heap on rank: h[0] is the worst of the kept candidates. */
static void heap_down(swgpu_rank_t rank, swgpu__cand_t *h, size_t n, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, w = i;
        if (l < n && before(rank, &h[w], &h[l])) w = l;
        if (r < n && before(rank, &h[w], &h[r])) w = r;
        if (w == i)
            return;
        swgpu__cand_t t = h[i];
        h[i] = h[w];
        h[w] = t;
        i = w;
    }
}

static void heap_up(swgpu_rank_t rank, swgpu__cand_t *h, size_t i)
{
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!before(rank, &h[p], &h[i]))
            return;
        swgpu__cand_t t = h[i];
        h[i] = h[p];
        h[p] = t;
        i = p;
    }
}

/* h[0..n), a heap (heap_down's), sorted best first: the worst goes last. */
static void heap_sort(swgpu_rank_t rank, swgpu__cand_t *h, size_t n)
{
    while (n > 1) {
        swgpu__cand_t t = h[0];
        h[0] = h[--n];
        h[n] = t;
        heap_down(rank, h, n, 0);
    }
}

/* a[0..n) sorted best first under rank */
static void sort_cands(swgpu_rank_t rank, swgpu__cand_t *a, size_t n)
{
    for (size_t i = n / 2; i-- > 0;)
        heap_down(rank, a, n, i);
    heap_sort(rank, a, n);
}

/* The order top_hits() keeps under opts' rank: where the E-values fall with
 * the score alone (ev NULL or not Spouge's), BLAST's order is the score's
 * with the last database index first, and needs no E-value to compare. */
static swgpu_rank_t rank_for(swgpu_rank_t rank, const swgpu__evalue_ctx_t *ev)
{
    if (rank == SWGPU_RANK_EVALUE && !(ev && ev->spouge))
        return SWGPU__RANK_BY_SCORE_LAST;
    return rank;
}

/*
 * The best (up to) cap candidates under rank with score > 0 and, when filter
 * is set, E-value <= max_e, best first; returns the count.  heap has room
 * for cap entries.  Scores below min_score cannot reach max_e
 * (swgpu__evalue_min_score) or are not wanted; the others get their E-value
 * under ev (none: 0).  Ranked by score, a candidate's E-value is computed
 * only when it would enter the heap.  Ranked by E-value (under Spouge's
 * model it depends on the subject's length too), once the heap is full a
 * candidate's score is first checked against the worst kept E-value w
 * (or SWGPU__RANK_EVALUE_TIE, below which E-values tie): a score at which
 * no subject length reaches w (swgpu__evalue_may_reach) cannot beat the
 * worst now nor later (w only falls), so the scores found so are
 * remembered (MISS_SPAN of them above min_score) and the entry score rises
 * over those at its bottom.  The cut is exact either way.  (The entry
 * score had been raised after each hit kept by a bound computed at every
 * score on the way, as swgpu__evalue_min_score steps: 606 bounds a query of
 * 700-800 residues against uniprot20k, where the candidates' own scores
 * need 175; bench/NOTES-gpu.md v30.)
 */
#define MISS_SPAN 4096

/* the first index i >= k below n with s[i] >= v (n when none): blocks of 16
 * that the compiler vectorizes, since most scores are far below v (20,000
 * scores in ~5 us instead of ~20 one by one) */
static uint64_t next_at_least(const int32_t *s, uint64_t k, uint64_t n, int32_t v)
{
    for (; k + 16 <= n; k += 16) {
        int any = 0;
        for (int j = 0; j < 16; j++)
            any |= s[k + j] >= v;
        if (any)
            break;
    }
    for (; k < n; k++)
        if (s[k] >= v)
            return k;
    return n;
}

static size_t top_hits(const swgpu_db_t *db, const int32_t *scores, const uint8_t *minus,
                       const uint64_t *tlen, const swgpu__evalue_ctx_t *ev, int32_t min_score,
                       double max_e, int filter, swgpu_rank_t rank, size_t cap,
                       swgpu__cand_t *heap)
{
    size_t n = 0;
    int32_t enter = min_score < 1 ? 1 : min_score;
    const int32_t base = enter;
    uint64_t miss[MISS_SPAN / 64]; /* bit s - base: score s cannot enter */
    double w = 0;                  /* by E-value, the heap full: what a candidate must reach */
    rank = rank_for(rank, ev);
    const int by_e = rank == SWGPU_RANK_EVALUE;
    if (by_e)
        memset(miss, 0, sizeof miss);
    const uint64_t nsc = cap > 0 ? db->n : 0;
    for (uint64_t k = next_at_least(scores, 0, nsc, enter); k < nsc;
         k = next_at_least(scores, k + 1, nsc, enter)) {
        if (by_e && n == cap) { /* (the score alone: the database's arrays stay untouched) */
            const uint32_t d = (uint32_t)(scores[k] - base);
            if (d < MISS_SPAN && (miss[d / 64] >> (d % 64) & 1))
                continue;
            if (!swgpu__evalue_may_reach(ev, scores[k], w)) {
                if (d < MISS_SPAN) {
                    miss[d / 64] |= (uint64_t)1 << (d % 64);
                    for (uint32_t e = (uint32_t)(enter - base);
                         e < MISS_SPAN && (miss[e / 64] >> (e % 64) & 1); e++)
                        enter++;
                }
                continue;
            }
        }
        swgpu__cand_t c = {scores[k], db->orig[k], 0.0, minus ? minus[k] : 0};
        if (n == cap && !by_e && !before(rank, &c, &heap[0]))
            continue;
        if (ev)
            c.evalue = swgpu__evalue_of(ev, c.score, tlen[k]);
        if (filter && !(c.evalue <= max_e))
            continue;
        if (n < cap) {
            heap[n] = c;
            heap_up(rank, heap, n++);
        } else {
            if (by_e && !before(rank, &c, &heap[0]))
                continue;
            heap[0] = c;
            heap_down(rank, heap, n, 0);
        }
        if (by_e && n == cap) {
            w = heap[0].evalue;
            if (w < SWGPU__RANK_EVALUE_TIE)
                w = SWGPU__RANK_EVALUE_TIE;
            if (filter && max_e < w)
                w = max_e;
        }
    }
    heap_sort(rank, heap, n);
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

/* The best (up to) c->cap hits of query i under rank in c->heap, best
 * first, --no-self applied: top_hits() with ev, min_score, max_e and
 * filter; returns the count. */
static size_t select_top(swgpu__pipe_t *c, size_t i, const int32_t *scores,
                         const swgpu__evalue_ctx_t *ev, int32_t min_score, int filter,
                         swgpu_rank_t rank)
{
    const swgpu_db_t *db = c->db;
    uint64_t ex[8];
    size_t nex = c->id_ord ? self_hits(c, c->ids[i], &c->qs[i], ex, 8) : 0;
    size_t want = c->cap + nex < (size_t)db->n ? c->cap + nex : (size_t)db->n;
    size_t n = top_hits(db, scores, c->minus, c->tlen, ev, min_score, c->o->evalue, filter, rank,
                        want, c->heap);
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
 *    score alone, so the part's best top_n by score (equal scores as the
 *    rank orders database indices: SWGPU__RANK_BY_SCORE_LAST for
 *    SWGPU_RANK_EVALUE) hold the best that pass; if the fit fails, the
 *    fallback parameters apply, whose E-values under Spouge's model depend
 *    on the subject's length too: then the best top_n under the rank of
 *    those that pass under the fallback are added, and the union is
 *    listed in that score order.
 * Each candidate's evalue is its E-value under the published parameters,
 * else under the fallback ones (the merge takes it where it depends on the
 * subject's length, which the merge does not know).
 */
static int candidates(swgpu__pipe_t *c, size_t i, const int32_t *scores)
{
    const swgpu_db_t *db = c->db;
    const swgpu__query_t *q = &c->qs[i];
    swgpu_query_result_t *qr = &c->r->q[i];
    swgpu_rank_t rank = c->o->rank;
    swgpu__evalue_ctx_t ev;
    swgpu__cand_t *all = NULL, *x = c->heap;
    size_t n, nb = 0;
    int rc;

    if (c->have_fixed) {
        swgpu__evalue_init(&ev, c->qfixed ? &c->qfixed[i] : &c->fixed, c->o->evalue_model,
                           q->len, swgpu__db_whole_res(db), swgpu__db_whole_n(db));
        n = select_top(c, i, scores, &ev, swgpu__evalue_min_score(&ev, c->o->evalue), 1, rank);
    } else {
        swgpu_rank_t by_score = rank == SWGPU_RANK_SCORE ? rank : SWGPU__RANK_BY_SCORE_LAST;
        if ((rc = get_fallback(c)) < 0)
            return rc;
        swgpu__evalue_init(&ev, &c->fallback, c->o->evalue_model, q->len,
                           swgpu__db_whole_res(db), swgpu__db_whole_n(db));
        if (ev.spouge) { /* the best that pass should the fit fail */
            nb = select_top(c, i, scores, &ev, swgpu__evalue_min_score(&ev, c->o->evalue), 1,
                            rank);
            if (nb && !(all = malloc((nb + c->cap) * sizeof *all)))
                return swgpu__fail(SWGPU_ENOMEM, "search: out of memory for %zu hits",
                                   nb + c->cap);
            if (nb)
                memcpy(all, c->heap, nb * sizeof *all);
        }
        n = select_top(c, i, scores, &ev, 1, 0, by_score); /* the best by score */
        if (nb) { /* the union in the score order, each once */
            memcpy(all + nb, c->heap, n * sizeof *all);
            sort_cands(by_score, all, n + nb);
            size_t u = 0;
            for (size_t h = 0; h < n + nb; h++)
                if (!u || all[u - 1].target != all[h].target)
                    all[u++] = all[h];
            n = u;
            x = all;
        }
    }
    if (n && !(qr->hits = calloc(n, sizeof *qr->hits))) {
        free(all);
        return swgpu__fail(SWGPU_ENOMEM, "search: out of memory for %zu hits", n);
    }
    for (size_t k = 0; k < n; k++) {
        qr->hits[k].target = x[k].target;
        qr->hits[k].score = x[k].score;
        qr->hits[k].evalue = x[k].evalue;
        qr->hits[k].aln.score = x[k].score;
        qr->hits[k].minus = x[k].minus;
    }
    qr->n_hits = n;
    free(all);
    return SWGPU_OK;
}

/* search_ahead's fits: queries idx[0 .. n) of c, rows[j] the scores of idx[j] */
typedef struct {
    swgpu__pipe_t *c;
    const size_t *idx;
    const int32_t *const *rows;
} fit_jobs_t;

static void fit_one(void *arg, size_t j)
{
    fit_jobs_t *J = arg;
    swgpu__pipe_t *c = J->c;
    const size_t i = J->idx[j];
    c->pre_ok[i] = swgpu_karlin_fit(J->rows[j], c->tlen, (size_t)c->db->n, c->qs[i].len,
                                    &c->pre[i]) == SWGPU_OK;
}

/*
 * Where each query's parameters are fitted to its own scores (no published
 * ones: 13-29 ms a query, bench/karlin_fit), sink() would fit a batch's
 * queries one after another while a GPU waits for the batch's hand-over
 * (600 UniProt queries with a scaled BLOSUM62 on an H200: 13.75 s of a
 * 15.6 s run, bench/NOTES-gpu.md v31).  The engine offers the batch's rows
 * first, and the fits run here on all the search's threads; each is the
 * same computation as sink()'s, so the results do not change.  A fit that
 * fails is left to sink(), which fits again for its message and fallback.
 * The CPU engine calls it from its threads at once, a query each
 * (SWGPU__CAP_AHEAD_THREADS): each call writes its own queries' slots of
 * the arrays swgpu__search_ahead_init made before the scan.
 */
int swgpu__search_ahead_init(swgpu__pipe_t *c)
{
    const size_t nq = c->r->n_queries;
    if (c->have_fixed || c->o->candidates)
        return 0;
    if (c->pre)
        return 1;
    if (!(c->pre = calloc(nq ? nq : 1, sizeof *c->pre)) || !(c->pre_ok = calloc(nq ? nq : 1, 1))) {
        free(c->pre);
        c->pre = NULL;
        return 0; /* sink() fits them, one after another */
    }
    return 1;
}

int swgpu__search_ahead(void *user, size_t n, const size_t *idx, const int32_t *const *rows)
{
    swgpu__pipe_t *c = user;
    if (!c->pre) /* nothing to fit (swgpu__search_ahead_init) */
        return SWGPU_OK;
    fit_jobs_t J = {c, idx, rows};
    swgpu__par_for(n, c->o->threads, fit_one, &J);
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
    } else if (c->pre_ok && c->pre_ok[i]) {
        qr->karlin = c->pre[i]; /* search_ahead's fit of these scores */
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
    size_t kept = select_top(c, i, scores, &ev, swgpu__evalue_min_score(&ev, c->o->evalue), 1,
                             c->o->rank);
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

