/*
 * cpu/engine.c - the CPU database-scan engine (backend "cpu"): the scalar
 * 32-bit kernel, and the scans of each query with threads over the
 * database as layout.c laid it out for the batch kernels (once, for the
 * instruction set picked at run time).
 *
 * A scan runs in up to three phases, all threads taking part in each:
 *   1. 8-bit:  every unit of lanes8 lanes of the precomputed interleaved
 *              layout (longest first, handed out through an atomic counter);
 *   2. 16-bit: the targets whose 8-bit score saturated, regrouped into
 *              batches of lanes16 (interleaved on the fly);
 *   3. 32-bit: the targets that saturated 16 bits too, each with the
 *              striped 32-bit pair kernel (cpu_pair.c) on one thread.
 * Before them, the sequences of sparse units (a few long sequences the
 * database cannot fill lanes around) are scored one by one with the pair
 * kernel on all threads.  A target's score never depends on which thread,
 * unit or path computed it, so results are identical for any thread count.
 * st->overflows counts recomputations: one per target rescored at 16 bits
 * plus one per target rescored at 32 bits (a target redone at both counts
 * twice).
 *
 * scan_many() runs the same phases for many queries with one set of
 * threads, most queries one per thread (see "scan_many" below).
 *
 * Which phases apply depends on the matrix and gaps: the 8-bit phase needs
 * scores in [-128, 127] and open+extend <= 127, the 16-bit one the same
 * within int16; otherwise targets start at the next wider phase.
 *
 * A PSSM query (swgpu__query_t with rows) runs the same phases with the
 * PSSM form of the batch kernels (sw_template.h), its rows converted per
 * query (pssm_rows).  Its 8-bit phase needs no score above 127 (and the
 * matrix's 8-bit layout); lower scores, psiblast's -32768 among them, are
 * clamped to -128, and a target holding a clamped code is rescored at 16
 * bits from a score of 129 (collect).  The pair kernel keeps a PSSM query
 * in the striped position whatever the lengths.
 */
#include "cpu/cpu.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

/* a saturated lane reports this score (see sw_template.h) */
#define CEIL8 (INT8_MAX - INT8_MIN)
#define CEIL16 (INT16_MAX - INT16_MIN)

/* ------------------------------------------------------------ scalar path */

int32_t swgpu__cpu_score32(const swgpu__query_t *Q, const uint8_t *t, size_t tlen,
                           const swgpu_matrix_t *m, int gap_open, int gap_extend,
                           int32_t *work)
{
    const uint8_t *q = Q->res;
    const int32_t *rows = Q->rows;
    const size_t qlen = Q->len;
    /* hcol[i]: H of row i in the previous column; ecol[i]: E entering row i
     * of the current column (see sw_template.h for the recurrences) */
    int32_t *hcol = work, *ecol = work + qlen + 1;
    const int32_t oe = gap_open + gap_extend, ext = gap_extend;
    const int32_t neg = INT32_MIN / 4;
    int32_t best = 0;
    size_t i, j;

    for (i = 0; i < qlen; i++) {
        hcol[i] = 0;
        ecol[i] = neg;
    }
    for (j = 0; j < tlen; j++) {
        const uint8_t tj = t[j];
        int32_t diag = 0, f = neg;
        for (i = 0; i < qlen; i++) {
            int32_t h = diag + (rows ? rows[i * SWGPU_NCODES + tj] : m->s[q[i]][tj]);
            int32_t e = ecol[i];
            diag = hcol[i];
            if (h < e) h = e;
            if (h < f) h = f;
            if (h < 0) h = 0;
            if (h > best) best = h;
            hcol[i] = h;
            h -= oe;
            e -= ext;
            ecol[i] = e > h ? e : h;
            f -= ext;
            if (f < h) f = h;
        }
    }
    return best;
}


/* ----------------------------------------------------------------- scan */

/* A barrier whose thread count can shrink before anyone passes it (when a
 * thread fails to start).  wait() returns 1 in exactly one thread: the
 * last to arrive, which runs the serial step while the others wait at the
 * next barrier. */
typedef struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int count, waiting;
    unsigned gen;
} barrier_t;

static int barrier_init(barrier_t *b, int count)
{
    b->count = count;
    b->waiting = 0;
    b->gen = 0;
    if (pthread_mutex_init(&b->mu, NULL)) return -1;
    if (pthread_cond_init(&b->cv, NULL)) {
        pthread_mutex_destroy(&b->mu);
        return -1;
    }
    return 0;
}

static void barrier_destroy(barrier_t *b)
{
    pthread_cond_destroy(&b->cv);
    pthread_mutex_destroy(&b->mu);
}

static int barrier_pass(barrier_t *b)
{
    int last = 0;
    pthread_mutex_lock(&b->mu);
    unsigned gen = b->gen;
    if (++b->waiting == b->count) {
        b->waiting = 0;
        b->gen++;
        last = 1;
        pthread_cond_broadcast(&b->cv);
    } else {
        while (gen == b->gen) pthread_cond_wait(&b->cv, &b->mu);
    }
    pthread_mutex_unlock(&b->mu);
    return last;
}

/* Called by the starting thread before it reaches the first barrier. */
static void barrier_shrink(barrier_t *b, int count)
{
    pthread_mutex_lock(&b->mu);
    b->count = count;
    pthread_mutex_unlock(&b->mu);
}

/* What the threads of one scan share. */
typedef struct {
    const swgpu__cpu_state_t *s;
    const swgpu__query_t *Q;     /* the query (residues, or a PSSM's rows) */
    swgpu__sw_query_t qp;        /* ... as the batch kernels take it */
    swgpu__sw_batch_fn b8, b16;  /* the kernels for it (plain or PSSM form) */
    int use8, use16;             /* its 8-bit / 16-bit phases are exact */
    uint32_t clamp8;             /* codes whose 8-bit score of some position was
                                    clamped up to -128 (see collect) */
    void *ptab;                  /* a PSSM's kernel rows (qp.prow8, ...), ptab_cap bytes */
    size_t ptab_cap;
    int32_t *scores;
    int nthreads;
    barrier_t barrier;
    atomic_size_t next;          /* work counter of the current phase */
    size_t *ov;                  /* targets (sorted index) of the current wider phase */
    size_t n_ov;
    uint64_t n_rescored;         /* recomputations (phases 2 and 3) */
    atomic_int failed;           /* a thread ran out of memory */
    void **work;                 /* per thread: kernel scratch */
    int32_t **work32;            /* per thread: scalar scratch */
    int32_t **best8;             /* per thread: outputs of one 8-bit unit */
    uint8_t **cols16;            /* per thread: 16-bit interleave buffer kept across
                                    queries (NULL: one allocated per phase) */
    size_t *cols16_cap;          /* its bytes */
    uint8_t letters[SWGPU_NCODES]; /* the distinct codes of the query (qp.letters) */
} scan_ctx_t;

typedef struct {
    scan_ctx_t *c;
    int tid;
} scan_arg_t;

/* Phase 1: unit u of the precomputed layout at 8 bits; best holds
 * s->max_slots outputs. */
static void phase8_unit(scan_ctx_t *c, size_t u, void *work, int32_t *best)
{
    const swgpu__cpu_state_t *s = c->s;
    const size_t lanes = (size_t)s->k->lanes8;
    size_t i, n = s->uslot[u + 1] - s->uslot[u];
    const uint32_t *slot_k = s->slot_k + s->uslot[u];
    c->b8(&c->qp, s->cols + (size_t)s->ucol[u] * lanes, (size_t)(s->ucol[u + 1] - s->ucol[u]),
          s->events + s->uev[u], s->uev[u + 1] - s->uev[u], work, best);
    for (i = 0; i < n; i++)
        if (slot_k[i] != SWGPU__NO_SEQ) c->scores[slot_k[i]] = best[i];
}

/* Phase 2: targets ov[g*lanes16 ...] interleaved into cols, scored at 16 bits. */
static void phase16_group(scan_ctx_t *c, size_t g, void *work, uint8_t *cols)
{
    const swgpu__cpu_state_t *s = c->s;
    const swgpu_db_t *db = s->db;
    const int lanes = s->k->lanes16;
    size_t i0 = g * (size_t)lanes, n = c->n_ov - i0, ncols = 0;
    int32_t best[64];
    int l;

    if (n > (size_t)lanes) n = (size_t)lanes;
    for (l = 0; l < (int)n; l++) {
        size_t k = c->ov[i0 + (size_t)l];
        size_t len = (size_t)(db->off[k + 1] - db->off[k]);
        if (len > ncols) ncols = len;
    }
    ncols = (ncols + SWGPU__COLS - 1) / SWGPU__COLS * SWGPU__COLS;
    memset(cols, SWGPU__PAD, ncols * (size_t)lanes);
    for (l = 0; l < (int)n; l++) {
        size_t k = c->ov[i0 + (size_t)l];
        const uint8_t *r = db->res + db->off[k];
        size_t len = (size_t)(db->off[k + 1] - db->off[k]);
        for (size_t j = 0; j < len; j++)
            cols[j * (size_t)lanes + (size_t)l] = r[j];
    }
    c->b16(&c->qp, cols, ncols, NULL, 0, work, best);
    for (l = 0; l < (int)n; l++)
        c->scores[c->ov[i0 + (size_t)l]] = best[l];
}

/* Score of q against t with the 32-bit striped pair kernel.  The kernel
 * stripes its first sequence over the vectors and walks the second one
 * column by column, with a fixed cost per column: the longer sequence goes
 * first (a local score is the same with the sequences swapped and the
 * matrix transposed; a PSSM query always goes first, its rows being the
 * query's). */
static int pair_score(const swgpu__cpu_state_t *s, const swgpu__query_t *Q, const uint8_t *t,
                      size_t tlen, int threads, int32_t *score)
{
    if (Q->len < tlen && !Q->rows)
        return swgpu__cpu_score_pair_isa(t, tlen, Q->res, Q->len, &s->mt, s->gap_open,
                                         s->gap_extend, threads, s->isa, 0, score, NULL, NULL);
    return swgpu__cpu_score_pair_q(Q, t, tlen, &s->m, s->gap_open, s->gap_extend, threads,
                                   s->isa, 0, NULL, NULL, score, NULL, NULL);
}

/* Phase 3: target k at 32 bits, SIMD striped when the instruction set has
 * it (one thread: the others take other targets). */
static void score32_target(scan_ctx_t *c, size_t k, int32_t *work)
{
    const swgpu__cpu_state_t *s = c->s;
    const swgpu_db_t *db = s->db;
    const uint8_t *t = db->res + db->off[k];
    size_t tlen = (size_t)(db->off[k + 1] - db->off[k]);
    if (s->k) {
        if (pair_score(s, c->Q, t, tlen, 1, &c->scores[k]))
            atomic_store(&c->failed, 1);
        return;
    }
    c->scores[k] = swgpu__cpu_score32(c->Q, t, tlen, &s->m, s->gap_open, s->gap_extend, work);
}

/* Serial step between phases (one thread, others wait at the barrier):
 * gather the targets whose score reached ceil, in sorted order.  After the
 * 8-bit phase of a query whose scores against some codes were clamped up
 * to -128 (clamp8), a target holding such a code is also rescored from 129
 * on: a clamped cell adds -128 to the H of its diagonal neighbour instead
 * of less, which changes nothing while that H is at most 128 (the result
 * is floored at 0 either way), so a best score of at most 128 is exact. */
static void collect(scan_ctx_t *c, int32_t ceil)
{
    const swgpu_db_t *db = c->s->db;
    const uint32_t *codes = ceil == CEIL8 && c->clamp8 ? c->s->codes : NULL;
    size_t n = 0;
    for (uint64_t k = 0; k < db->n; k++)
        if ((c->scores[k] >= ceil || (codes && c->scores[k] > 128 && (codes[k] & c->clamp8))) &&
            !(c->s->is_pair && c->s->is_pair[k]))
            c->ov[n++] = (size_t)k;
    c->n_ov = n;
    c->n_rescored += n;
    atomic_store(&c->next, 0);
}

/* Serial step: every target for the next phase (the first one this query
 * takes), but the sparse units' sequences, which pair_phase scored. */
static void collect_all(scan_ctx_t *c)
{
    const swgpu_db_t *db = c->s->db;
    size_t n = 0;
    for (uint64_t k = 0; k < db->n; k++)
        if (!(c->s->is_pair && c->s->is_pair[k])) c->ov[n++] = (size_t)k;
    c->n_ov = n;
    atomic_store(&c->next, 0);
}

static int barrier_wait(scan_ctx_t *c)
{
    return barrier_pass(&c->barrier);
}

/* The 16-bit interleave buffer of thread tid for targets of up to maxlen
 * residues: the thread's kept one (grown as needed) or a new one. */
static uint8_t *cols16_get(scan_ctx_t *c, int tid, size_t maxlen)
{
    const size_t bytes = ((maxlen + SWGPU__COLS) * (size_t)c->s->k->lanes16 + 63) / 64 * 64;
    if (!c->cols16) return aligned_alloc(64, bytes);
    if (c->cols16_cap[tid] < bytes) {
        free(c->cols16[tid]);
        c->cols16[tid] = aligned_alloc(64, bytes);
        c->cols16_cap[tid] = c->cols16[tid] ? bytes : 0;
    }
    return c->cols16[tid];
}

/* The 8-, 16- and 32-bit phases of one query, run by every one of the
 * c->nthreads threads (tid 0 .. nthreads-1) with c->next at 0. */
static void scan_phases(scan_ctx_t *c, int tid)
{
    const swgpu__cpu_state_t *s = c->s;
    const swgpu_db_t *db = s->db;
    void *work = c->work[tid];
    int32_t *work32 = c->work32[tid];
    uint8_t *cols16 = NULL;
    size_t i;

    if (c->use8) {
        int32_t *best = c->best8[tid];
        while ((i = atomic_fetch_add(&c->next, 1)) < s->nunit)
            phase8_unit(c, i, work, best); /* units come longest first */
        if (barrier_wait(c)) collect(c, CEIL8);
        barrier_wait(c);
    } else if (c->use16) {
        if (barrier_wait(c)) collect_all(c);
        barrier_wait(c);
    }
    if (c->use16 && c->n_ov > 0) {
        const size_t lanes = (size_t)s->k->lanes16;
        const size_t ngroups = (c->n_ov + lanes - 1) / lanes;
        /* ov is in sorted order: the last target is the longest */
        size_t maxlen = (size_t)(db->off[c->ov[c->n_ov - 1] + 1] - db->off[c->ov[c->n_ov - 1]]);
        cols16 = cols16_get(c, tid, maxlen);
        if (!cols16) atomic_store(&c->failed, 1);
        while (cols16 && (i = atomic_fetch_add(&c->next, 1)) < ngroups)
            phase16_group(c, ngroups - 1 - i, work, cols16);
        if (barrier_wait(c)) collect(c, CEIL16);
        barrier_wait(c);
    } else if (!c->use16) {
        if (barrier_wait(c)) collect_all(c);
        barrier_wait(c);
    }
    while ((i = atomic_fetch_add(&c->next, 1)) < c->n_ov)
        score32_target(c, c->ov[c->n_ov - 1 - i], work32);
    if (!c->cols16) free(cols16);
}

static void *scan_worker(void *argp)
{
    scan_arg_t *arg = argp;
    scan_phases(arg->c, arg->tid);
    return NULL;
}

/* The checks scan() makes on a query before scoring it (a non-empty
 * database): the 32-bit score range, the residue codes. */
static int check_query(const swgpu__cpu_state_t *s, const swgpu__query_t *Q)
{
    const swgpu_db_t *db = s->db;
    const size_t qlen = Q->len;
    const int32_t smax = Q->rows ? Q->smax : s->smax;
    if (qlen && !Q->res)
        return swgpu__fail(SWGPU_EINVAL, "cpu engine: a query of %zu residues has no residues", qlen);
    /* the best score is at most max(s) * the shorter length: it must fit */
    if ((uint64_t)(smax > 0 ? smax : 0) * (qlen < db->max_len ? qlen : db->max_len) >
        (uint64_t)1 << 29)
        return swgpu__fail(SWGPU_ERANGE, "cpu engine: a query of %zu residues against sequences of up "
                           "to %llu with matrix maximum %d may exceed the 32-bit score range",
                           qlen, (unsigned long long)db->max_len, (int)smax);
    if (Q->rows && Q->smin < -(1 << 24))
        return swgpu__fail(SWGPU_ERANGE, "cpu engine: PSSM scores down to %d are out of range",
                           (int)Q->smin);
    for (size_t i = 0; i < qlen; i++)
        if (Q->res[i] >= SWGPU__PAD)
            return swgpu__fail(SWGPU_EINVAL, "cpu engine: query position %zu: residue code %u out of range",
                               i, Q->res[i]);
    return SWGPU_OK;
}

static inline int32_t clamp32(int32_t v, int32_t lo, int32_t hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* A PSSM query's rows for the batch kernels (qp.prow8, prow16, prow16b in
 * c->ptab, grown as needed), the codes clamped at 8 bits, and which phases
 * apply: 8 bits when no score exceeds 127 (lower ones are clamped to -128,
 * see collect), 16 bits when every score fits int16. */
static int pssm_rows(scan_ctx_t *c)
{
    const swgpu__cpu_state_t *s = c->s;
    const swgpu__query_t *Q = c->Q;
    const size_t n = Q->len * SWGPU_NCODES;
    const size_t o16 = (n + 63) / 64 * 64, o16b = o16 + (2 * n + 63) / 64 * 64;
    const size_t need = o16b + 2 * n + 64;
    int8_t *r8;
    int16_t *r16;
    uint8_t *r16b;
    if (c->ptab_cap < need) {
        void *p = aligned_alloc(64, (need + 63) / 64 * 64);
        if (!p) return swgpu__fail(SWGPU_ENOMEM, "cpu engine: out of memory for a PSSM of %zu positions",
                                   Q->len);
        free(c->ptab);
        c->ptab = p;
        c->ptab_cap = need;
    }
    r8 = c->ptab;
    r16 = (int16_t *)((char *)c->ptab + o16);
    r16b = (uint8_t *)c->ptab + o16b;
    c->clamp8 = 0;
    for (size_t i = 0; i < Q->len; i++)
        for (int b = 0; b < SWGPU_NCODES; b++) {
            int32_t v = Q->rows[i * SWGPU_NCODES + b];
            int16_t v16 = (int16_t)clamp32(v, INT16_MIN, INT16_MAX);
            if (b == SWGPU__PAD) {
                v = INT32_MIN;
                v16 = INT16_MIN;
            } else if (v < INT8_MIN) {
                c->clamp8 |= 1u << b;
            }
            r8[i * SWGPU_NCODES + b] = (int8_t)clamp32(v, INT8_MIN, INT8_MAX);
            r16[i * SWGPU_NCODES + b] = v16;
            r16b[i * 2 * SWGPU_NCODES + b] = (uint8_t)((uint16_t)v16 & 0xff);
            r16b[i * 2 * SWGPU_NCODES + SWGPU_NCODES + b] = (uint8_t)((uint16_t)v16 >> 8);
        }
    c->qp.prow8 = r8;
    c->qp.prow16 = r16;
    c->qp.prow16b = r16b;
    c->use8 = s->use8 && Q->smax <= INT8_MAX;
    c->use16 = s->k && Q->smin >= INT16_MIN && Q->smax <= INT16_MAX &&
               s->gap_open + s->gap_extend <= INT16_MAX;
    if (s->k) {
        c->b8 = s->k->batch8p;
        c->b16 = s->k->batch16p;
    }
    return SWGPU_OK;
}

/* Point c at query Q (checked) and the scores it writes, ready for its
 * first phase (Q must outlive the scan). */
static int query_init(scan_ctx_t *c, const swgpu__query_t *Q, int32_t *scores)
{
    const swgpu__cpu_state_t *s = c->s;
    int seen[SWGPU_NCODES] = {0}, n_letters = 0;
    c->Q = Q;
    c->qp.q = Q->res;
    c->qp.qlen = Q->len;
    c->qp.row8 = s->row8;
    c->qp.row16 = s->row16;
    c->qp.row16b = s->row16b;
    c->qp.gap_oe = s->gap_open + s->gap_extend;
    c->qp.gap_e = s->gap_extend;
    c->scores = scores;
    c->n_ov = 0;
    c->n_rescored = 0;
    atomic_store(&c->next, 0);
    atomic_store(&c->failed, 0);
    if (Q->rows) {
        c->qp.letters = c->letters;
        c->qp.n_letters = 0;
        return pssm_rows(c);
    }
    for (size_t i = 0; i < Q->len; i++)
        if (!seen[Q->res[i]]) {
            seen[Q->res[i]] = 1;
            c->letters[n_letters++] = Q->res[i];
        }
    c->qp.letters = c->letters;
    c->qp.n_letters = n_letters;
    c->qp.prow8 = NULL;
    c->qp.prow16 = NULL;
    c->qp.prow16b = NULL;
    c->use8 = s->use8;
    c->use16 = s->use16;
    c->clamp8 = 0;
    if (s->k) {
        c->b8 = s->k->batch8;
        c->b16 = s->k->batch16;
    }
    return SWGPU_OK;
}

/* The sequences of sparse units, one at a time with the pair kernel on
 * `threads` threads each. */
static int pair_phase(const swgpu__cpu_state_t *s, const swgpu__query_t *Q, int threads, int32_t *scores)
{
    const swgpu_db_t *db = s->db;
    for (size_t i = 0; i < s->npair; i++) {
        uint32_t k = s->pair_k[i];
        int rc = pair_score(s, Q, db->res + db->off[k], (size_t)(db->off[k + 1] - db->off[k]),
                            threads, &scores[k]);
        if (rc) return rc;
    }
    return SWGPU_OK;
}

static int cpu_scan(void *state, const swgpu__query_t *Q, int32_t *scores, swgpu_scan_stats_t *st)
{
    const swgpu__cpu_state_t *s = state;
    const swgpu_db_t *db = s->db;
    const size_t qlen = Q ? Q->len : 0;
    scan_ctx_t c;
    pthread_t tids[256];
    scan_arg_t args[256];
    int nt = 0, t, started = 0, rc = SWGPU_OK;
    size_t work_bytes;

    if (!Q) return swgpu__fail(SWGPU_EINVAL, "cpu engine: NULL query");
    if (db->n == 0) return SWGPU_OK;
    rc = check_query(s, Q);
    if (rc) return rc;
    /* 0 for empty sequences, which have no place in the 8-bit layout */
    memset(scores, 0, (size_t)db->n * sizeof *scores);
    if (qlen == 0) return SWGPU_OK;
    memset(&c, 0, sizeof c);
    c.s = s;
    if ((rc = query_init(&c, Q, scores))) goto done;
    nt = s->threads;
    if (c.use8 && (size_t)nt > s->nunit) nt = (int)s->nunit;
    if (nt < 1) nt = 1;
    c.nthreads = nt;
    c.ov = malloc((size_t)db->n * sizeof *c.ov);
    c.work = calloc((size_t)nt, sizeof *c.work);
    c.work32 = calloc((size_t)nt, sizeof *c.work32);
    c.best8 = calloc((size_t)nt, sizeof *c.best8);
    if (!c.ov || !c.work || !c.work32 || !c.best8) goto nomem;
    work_bytes = s->k ? swgpu__sw_work_size(qlen, s->k->bytes) : 0;
    for (t = 0; t < nt; t++) {
        if (s->k && !(c.work[t] = aligned_alloc(64, (work_bytes + 63) / 64 * 64))) goto nomem;
        if (!(c.work32[t] = malloc(2 * (qlen + 1) * sizeof(int32_t)))) goto nomem;
        if (s->use8 && !(c.best8[t] = malloc(s->max_slots * sizeof(int32_t)))) goto nomem;
    }
    /* sequences of sparse units: one at a time, all threads on each */
    rc = pair_phase(s, Q, s->threads, scores);
    if (rc) goto done;
    if (barrier_init(&c.barrier, nt)) {
        rc = swgpu__fail(SWGPU_ENOMEM, "cpu engine: cannot create a thread barrier");
        goto done;
    }
    for (t = 0; t < nt; t++) {
        args[t].c = &c;
        args[t].tid = t;
    }
    for (t = 1; t < nt; t++) {
        if (pthread_create(&tids[t], NULL, scan_worker, &args[t])) break;
        started++;
    }
    if (started != nt - 1) /* go on with the threads that did start */
        barrier_shrink(&c.barrier, started + 1);
    scan_worker(&args[0]);
    for (t = 1; t <= started; t++) pthread_join(tids[t], NULL);
    barrier_destroy(&c.barrier);
    if (atomic_load(&c.failed)) {
        /* out of memory, or a 32-bit rescoring failed (its message is in
         * that thread's last error): report it from here */
        rc = swgpu__fail(SWGPU_ENOMEM, "cpu engine: out of memory scanning a query of %zu residues", qlen);
        goto done;
    }
    if (st) {
        st->cells += (uint64_t)qlen * db->total_res;
        st->overflows += c.n_rescored;
    }
    goto done;
nomem:
    rc = swgpu__fail(SWGPU_ENOMEM, "cpu engine: out of memory scanning a query of %zu residues", qlen);
done:
    if (c.work)
        for (t = 0; t < nt; t++) free(c.work[t]);
    if (c.work32)
        for (t = 0; t < nt; t++) free(c.work32[t]);
    if (c.best8)
        for (t = 0; t < nt; t++) free(c.best8[t]);
    free(c.best8);
    free(c.work);
    free(c.work32);
    free(c.ov);
    free(c.ptab);
    return rc;
}

/* ------------------------------------------------------------ scan_many */

/*
 * Many queries in one call, with one set of threads for all of them.
 * Queries are taken longest first.  The first few, each a large share of
 * the work (see many_plan), are scanned like scan() does, every thread on
 * each (the "big" queries; the serial steps between them hand the scores
 * to the sink and set up the next).  Then each thread takes whole queries
 * from a shared counter and runs all their phases alone, into its own
 * score buffer, which it hands to the sink under a mutex: no barriers, no
 * thread start, no allocation per query.  Longest first keeps the last
 * queries, the ones threads finish alone, short.  Memory: one score buffer
 * and one overflow list of db->n per thread, scratch for the longest query.
 */

/* One query of the call: its length and index. */
typedef struct {
    size_t len, i;
} qref_t;

static int qref_cmp(const void *a, const void *b)
{
    const qref_t *x = a, *y = b;
    if (x->len != y->len) return x->len > y->len ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

typedef struct {
    const swgpu__cpu_state_t *s;
    const swgpu__query_t *q;
    swgpu_scan_sink_t sink;
    swgpu_scan_ahead_t ahead; /* called by a thread for its whole query, outside the lock */
    void *user;
    qref_t *order;            /* the queries, longest first */
    size_t nq, nbig;          /* order[0 .. nbig): all threads on each; the rest: one thread each */
    scan_ctx_t coop;          /* the context of the big queries */
    int32_t *coop_alt;        /* its second score buffer (nbig >= 2), beside thread 0's */
    /* the big query whose scores thread 0 hands over while the next one is
     * scanned (set in the serial step, taken by thread 0 after the barrier) */
    const qref_t *pend;
    const int32_t *pend_scores;
    uint64_t pend_rescored;
    int pend_failed;
    int coop_go;              /* go on with the big queries: set in the serial steps only, so
                                 that every thread sees the same value after a barrier (stop
                                 may change meanwhile: thread 0's hand-over) */
    atomic_size_t next_small; /* counter over order[nbig ...] */
    atomic_int stop;          /* a sink or a scan failed: take no more queries */
    pthread_mutex_t mu;       /* the sink calls and what follows */
    int rc;                   /* the first failure, and its message */
    char msg[1024];
    uint64_t cells, overflows;
    /* per thread */
    void **work;
    int32_t **work32, **best8, **scores;
    size_t **ov;
    uint8_t **cols16;
    size_t *cols16_cap;
} many_t;

typedef struct {
    many_t *m;
    int tid;
    scan_ctx_t solo;          /* this thread's whole queries */
} many_arg_t;

/* Record a failure whose message is in the calling thread's last error. */
static void many_error(many_t *m, int rc)
{
    pthread_mutex_lock(&m->mu);
    if (!m->rc) {
        m->rc = rc;
        snprintf(m->msg, sizeof m->msg, "%s", swgpu_last_error());
    }
    atomic_store(&m->stop, 1);
    pthread_mutex_unlock(&m->mu);
}

/* Hand the scores of query r to the sink (one thread at a time). */
static void many_deliver(many_t *m, const qref_t *r, const int32_t *scores, uint64_t rescored)
{
    pthread_mutex_lock(&m->mu);
    if (!atomic_load(&m->stop)) {
        int rc = m->sink(m->user, r->i, scores);
        if (rc < 0) {
            m->rc = rc;
            snprintf(m->msg, sizeof m->msg, "%s", swgpu_last_error());
            atomic_store(&m->stop, 1);
        } else {
            m->cells += (uint64_t)r->len * m->s->db->total_res;
            m->overflows += rescored;
        }
    }
    pthread_mutex_unlock(&m->mu);
}

static int many_oom(size_t qlen)
{
    return swgpu__fail(SWGPU_ENOMEM, "cpu engine: out of memory scanning a query of %zu residues", qlen);
}

/* Serial step of the big queries (one thread, the others at the barrier):
 * order[b-1] (b > 0) left for thread 0 to hand over (coop_deliver), its
 * scores kept while order[b] (b < nbig) is set up in the other buffer. */
static void coop_step(many_t *m, size_t b)
{
    scan_ctx_t *c = &m->coop;
    m->pend = NULL;
    if (b > 0 && !atomic_load(&m->stop)) {
        m->pend = &m->order[b - 1];
        m->pend_scores = c->scores;
        m->pend_rescored = c->n_rescored;
        m->pend_failed = atomic_load(&c->failed);
        if (b < m->nbig)
            c->scores = c->scores == m->scores[0] ? m->coop_alt : m->scores[0];
    }
    if (b < m->nbig && !atomic_load(&m->stop)) {
        const qref_t *r = &m->order[b];
        const swgpu__query_t *q = &m->q[r->i];
        int rc;
        memset(c->scores, 0, (size_t)m->s->db->n * sizeof *c->scores);
        if ((rc = query_init(c, q, c->scores)) || (rc = pair_phase(m->s, q, m->s->threads, c->scores)))
            many_error(m, rc);
    }
    m->coop_go = !atomic_load(&m->stop);
}

/* Thread 0, after the serial step: the last big query handed over (what
 * the caller prepares from its scores first, as for a query scanned alone)
 * while the other threads scan the next one.  Its scores stay untouched
 * until thread 0 is done: the next big query writes the other buffer, and
 * the buffer is thread 0's own once the big queries are over. */
static void coop_deliver(many_t *m)
{
    const qref_t *r = m->pend;
    if (!r || atomic_load(&m->stop))
        return;
    if (m->pend_failed) {
        many_error(m, many_oom(r->len));
        return;
    }
    if (m->ahead) {
        const size_t qi = r->i;
        const int32_t *row = m->pend_scores;
        const int rc = m->ahead(m->user, 1, &qi, &row);
        if (rc < 0) {
            many_error(m, rc);
            return;
        }
    }
    many_deliver(m, r, m->pend_scores, m->pend_rescored);
}

/* Query r alone on this thread. */
static void solo_query(many_arg_t *a, const qref_t *r)
{
    many_t *m = a->m;
    scan_ctx_t *c = &a->solo;
    int32_t *scores = m->scores[a->tid];
    const swgpu__query_t *q = &m->q[r->i];
    int rc;

    memset(scores, 0, (size_t)m->s->db->n * sizeof *scores);
    if (r->len == 0) {
        many_deliver(m, r, scores, 0);
        return;
    }
    if ((rc = query_init(c, q, scores)) == SWGPU_OK)
        rc = pair_phase(m->s, q, 1, scores);
    if (rc) {
        many_error(m, rc);
        return;
    }
    scan_phases(c, 0);
    if (atomic_load(&c->failed)) {
        many_error(m, many_oom(r->len));
        return;
    }
    /* what the caller prepares from the scores (the search: its fit of the
     * query's statistics) runs here, beside the other threads' scans and
     * sink calls, not under the sink's lock */
    if (m->ahead && !atomic_load(&m->stop)) {
        const size_t qi = r->i;
        const int32_t *row = scores;
        if ((rc = m->ahead(m->user, 1, &qi, &row)) < 0) {
            many_error(m, rc);
            return;
        }
    }
    many_deliver(m, r, scores, c->n_rescored);
}

static void *many_worker(void *argp)
{
    many_arg_t *a = argp;
    many_t *m = a->m;
    scan_ctx_t *c = &m->coop;
    size_t b, i;

    if (m->nbig > 0) {
        if (barrier_pass(&c->barrier)) coop_step(m, 0);
        barrier_pass(&c->barrier);
        for (b = 0; b < m->nbig && m->coop_go; b++) {
            scan_phases(c, a->tid);
            if (barrier_pass(&c->barrier)) coop_step(m, b + 1);
            barrier_pass(&c->barrier);
            if (a->tid == 0) coop_deliver(m);
        }
    }
    while (!atomic_load(&m->stop) && (i = atomic_fetch_add(&m->next_small, 1)) < m->nq - m->nbig)
        solo_query(a, &m->order[m->nbig + i]);
    return NULL;
}

/* How many of the queries (longest first) get every thread: those longer
 * than 1/8 of a thread's share of the rest.  A thread finishing a query
 * alone then idles at most about 1/8 of the time of the one-per-thread
 * part (longest first, a query is never longer than the ones before). */
static size_t many_plan(const qref_t *order, size_t nq, int nt)
{
    uint64_t rest = 0;
    size_t nbig = 0;
    if (nt <= 1) return 0;
    for (size_t i = 0; i < nq; i++) rest += order[i].len;
    while (nbig < nq && (uint64_t)order[nbig].len * 8 * (uint64_t)nt > rest) rest -= order[nbig++].len;
    return nbig;
}

/* The per-thread buffers of nt threads (*args, m->work ...) for queries
 * of up to maxq residues; -1 when out of memory (many_free frees them). */
static int many_alloc(many_t *m, many_arg_t **args, int nt, size_t maxq)
{
    const swgpu__cpu_state_t *s = m->s;
    const swgpu_db_t *db = s->db;
    *args = calloc((size_t)nt, sizeof **args);
    m->work = calloc((size_t)nt, sizeof *m->work);
    m->work32 = calloc((size_t)nt, sizeof *m->work32);
    m->best8 = calloc((size_t)nt, sizeof *m->best8);
    m->scores = calloc((size_t)nt, sizeof *m->scores);
    m->ov = calloc((size_t)nt, sizeof *m->ov);
    m->cols16 = calloc((size_t)nt, sizeof *m->cols16);
    m->cols16_cap = calloc((size_t)nt, sizeof *m->cols16_cap);
    if (!*args || !m->work || !m->work32 || !m->best8 || !m->scores || !m->ov || !m->cols16 ||
        !m->cols16_cap)
        return -1;
    size_t work_bytes = s->k ? swgpu__sw_work_size(maxq, s->k->bytes) : 0;
    for (int t = 0; t < nt; t++) {
        if (s->k && !(m->work[t] = aligned_alloc(64, (work_bytes + 63) / 64 * 64))) return -1;
        if (!(m->work32[t] = malloc(2 * (maxq + 1) * sizeof(int32_t)))) return -1;
        if (s->use8 && !(m->best8[t] = malloc(s->max_slots * sizeof(int32_t)))) return -1;
        if (!(m->scores[t] = malloc((size_t)db->n * sizeof(int32_t)))) return -1;
        if (!(m->ov[t] = malloc((size_t)db->n * sizeof(size_t)))) return -1;
    }
    return 0;
}

/* What a scan_many() of nt threads made: nbar of the threads' barriers,
 * the big queries' one (coop_bar), the lock (mu_init), the buffers. */
static void many_free(many_t *m, many_arg_t *args, int nt, int nbar, int coop_bar, int mu_init)
{
    int t;
    for (t = 0; t < nbar; t++) barrier_destroy(&args[t].solo.barrier);
    if (coop_bar) barrier_destroy(&m->coop.barrier);
    if (mu_init) pthread_mutex_destroy(&m->mu);
    for (t = 0; t < nt; t++) {
        if (m->work) free(m->work[t]);
        if (m->work32) free(m->work32[t]);
        if (m->best8) free(m->best8[t]);
        if (m->scores) free(m->scores[t]);
        if (m->ov) free(m->ov[t]);
        if (m->cols16) free(m->cols16[t]);
    }
    free(m->work);
    free(m->work32);
    free(m->best8);
    free(m->scores);
    free(m->ov);
    free(m->cols16);
    free(m->cols16_cap);
    free(m->coop.ptab);
    free(m->coop_alt);
    if (args)
        for (t = 0; t < nt; t++) free(args[t].solo.ptab);
    free(m->order);
    free(args);
}

/* (ahead: each query, SWGPU__CAP_AHEAD_THREADS: by the thread that scanned
 * it alone, or for the queries all threads share by thread 0, while the
 * others scan the next one) */
static int cpu_scan_many(void *state, size_t nq, const swgpu__query_t *q, swgpu_scan_sink_t sink,
                         swgpu_scan_ahead_t ahead, void *user, swgpu_scan_stats_t *st)
{
    const swgpu__cpu_state_t *s = state;
    const swgpu_db_t *db = s->db;
    many_t m;
    pthread_t tids[256];
    many_arg_t *args = NULL;
    int nt = 0, t, started = 0, nbar = 0, coop_bar = 0, mu_init = 0, rc = SWGPU_OK;
    size_t i, maxq;

    if (nq == 0) return SWGPU_OK;
    if (!q || !sink) return swgpu__fail(SWGPU_EINVAL, "cpu engine: scan_many needs queries and a sink");
    if (db->n == 0) { /* no scores: each query's (empty) array goes to the sink */
        static const int32_t none[1];
        for (i = 0; i < nq; i++) {
            rc = sink(user, i, none);
            if (rc < 0) return rc;
        }
        return SWGPU_OK;
    }
    /* the checks of scan(), all before the first query is scored */
    for (i = 0; i < nq; i++) {
        if (!q[i].res && q[i].len > 0)
            return swgpu__fail(SWGPU_EINVAL, "cpu engine: query %zu of %zu residues has no residues", i,
                               q[i].len);
        rc = check_query(s, &q[i]);
        if (rc) return rc;
    }

    memset(&m, 0, sizeof m);
    m.s = s;
    m.q = q;
    m.sink = sink;
    m.ahead = ahead;
    m.user = user;
    m.nq = nq;
    atomic_init(&m.next_small, 0);
    atomic_init(&m.stop, 0);
    m.order = malloc(nq * sizeof *m.order);
    if (!m.order) goto nomem;
    for (i = 0; i < nq; i++) {
        m.order[i].len = q[i].len;
        m.order[i].i = i;
    }
    qsort(m.order, nq, sizeof *m.order, qref_cmp);
    maxq = m.order[0].len;
    nt = s->threads;
    m.nbig = many_plan(m.order, nq, nt);
    if (m.nbig == nq) { /* all big: the threads scan() would use */
        if (s->use8 && (size_t)nt > s->nunit) nt = (int)s->nunit;
    } else if (m.nbig == 0 && (size_t)nt > nq) {
        nt = (int)nq;
    }
    if (nt < 1) nt = 1;

    if (many_alloc(&m, &args, nt, maxq) < 0) goto nomem;
    if (m.nbig >= 2 && !(m.coop_alt = malloc((size_t)db->n * sizeof *m.coop_alt))) goto nomem;
    if (pthread_mutex_init(&m.mu, NULL)) goto nobar;
    mu_init = 1;
    /* the big queries' context: thread 0's score buffer and overflow list
     * (it takes whole queries only after the last big one) */
    m.coop.s = s;
    m.coop.nthreads = nt;
    m.coop.ov = m.ov[0];
    m.coop.scores = m.scores[0];
    m.coop.work = m.work;
    m.coop.work32 = m.work32;
    m.coop.best8 = m.best8;
    m.coop.cols16 = m.cols16;
    m.coop.cols16_cap = m.cols16_cap;
    atomic_init(&m.coop.next, 0);
    atomic_init(&m.coop.failed, 0);
    if (barrier_init(&m.coop.barrier, nt)) goto nobar;
    coop_bar = 1;
    for (t = 0; t < nt; t++) {
        scan_ctx_t *c = &args[t].solo;
        args[t].m = &m;
        args[t].tid = t;
        c->s = s;
        c->nthreads = 1;
        c->ov = m.ov[t];
        c->work = &m.work[t];
        c->work32 = &m.work32[t];
        c->best8 = &m.best8[t];
        c->cols16 = &m.cols16[t];
        c->cols16_cap = &m.cols16_cap[t];
        atomic_init(&c->next, 0);
        atomic_init(&c->failed, 0);
        if (barrier_init(&c->barrier, 1)) goto nobar;
        nbar++;
    }
    for (t = 1; t < nt; t++) {
        if (pthread_create(&tids[t], NULL, many_worker, &args[t])) break;
        started++;
    }
    if (started != nt - 1) /* go on with the threads that did start */
        barrier_shrink(&m.coop.barrier, started + 1);
    many_worker(&args[0]);
    for (t = 1; t <= started; t++) pthread_join(tids[t], NULL);
    if (m.rc) {
        /* the message may be another thread's last error: report it from here */
        rc = swgpu__fail(m.rc, "%s", m.msg);
        goto done;
    }
    if (st) {
        st->cells += m.cells;
        st->overflows += m.overflows;
    }
    goto done;
nobar:
    rc = swgpu__fail(SWGPU_ENOMEM, "cpu engine: cannot create a thread barrier");
    goto done;
nomem:
    rc = swgpu__fail(SWGPU_ENOMEM, "cpu engine: out of memory scanning %zu queries", nq);
done:
    many_free(&m, args, nt, nbar, coop_bar, mu_init);
    return rc;
}

const swgpu_engine_ops_t swgpu__engine_cpu = {
    .name = "cpu",
    .create = swgpu__cpu_create,
    .scan = cpu_scan,
    .destroy = swgpu__cpu_destroy,
    .scan_many = cpu_scan_many,
    .caps = SWGPU__CAP_AHEAD_THREADS,
};
