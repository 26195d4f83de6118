/*
 * cpu_pair.c - exact score and tie-rule end of ONE long pair on the CPU:
 * 32-bit SIMD, threads.
 *
 * The query is cut into bands of band_rows rows.  A band walks the whole
 * target column by column (pair_template.h, striped 32-bit lanes), taking
 * its top edge (H of the row above and F entering its first row, per
 * column) from the band above and writing its bottom edge for the band
 * below.  Band b runs on thread b % T; it starts a chunk of columns once the
 * band above has finished those columns (a per-band progress counter), so
 * the T threads work on T consecutive bands at once, like a wavefront of
 * tiles.  Edges live in T+1 buffers of 2 x tlen int32, reused round robin:
 * band b writes buffer b % (T+1), which band b-T read; b-T ran before b on
 * the same thread, so it is done, and so is every band above it (a band
 * finishes only after the band above published its last column).
 *
 * Each band keeps its best cell (first column reaching its maximum, topmost
 * row there); the bands' bests are merged with the same rule: highest
 * score, then smallest target end, then smallest query end.
 */
#include "align/align.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>

#define PAIR_GAP_MAX (1 << 24)   /* the same bounds as the reference */
#define PAIR_SCORE_MAX (1 << 24)
#define PAIR_VAL_BOUND (1 << 29)
#define PAIR_SMALL_CELLS 65536   /* below this, the scalar reference */
#define PAIR_ONE_THREAD_CELLS ((uint64_t)1 << 22) /* up to this, one thread (16-bit kernel) */

typedef struct {
    const uint8_t *q, *t;
    const int32_t *prows;        /* a PSSM query's score rows, or NULL: m's */
    size_t qlen, tlen;
    const swgpu_matrix_t *m;
    int gap_open, gap_extend;
    const swgpu__sw_kernels_t *k;
    size_t rows;                 /* band height (a multiple of lanes32) */
    size_t nband, nthreads, chunk;
    int32_t **edge_h, **edge_f;  /* nthreads+1 edge buffers of tlen */
    size_t nedge;
    atomic_size_t *progress;     /* per band: columns finished */
    pthread_mutex_t lock;
    pthread_cond_t go_cv;        /* threads start when go is set, nthreads final */
    int go;
    swgpu__pair_best_t best;     /* merged, r = query row */
    int failed;
    swgpu__pair_prog_fn prog;    /* optional, called by thread 0 only */
    void *prog_user;
    _Atomic uint64_t cells;      /* cells finished, for prog */
} pair_ctx_t;

typedef struct {
    pair_ctx_t *c;
    size_t tid;
} pair_arg_t;

/* The tie rule between two cells of the same score: smaller target end,
 * then smaller query end. */
static void merge_best(pair_ctx_t *c, const swgpu__pair_best_t *b)
{
    pthread_mutex_lock(&c->lock);
    if (b->score > c->best.score ||
        (b->score == c->best.score && b->score > 0 &&
         (b->j < c->best.j || (b->j == c->best.j && b->r < c->best.r))))
        c->best = *b;
    pthread_mutex_unlock(&c->lock);
}

static void *pair_worker(void *argp)
{
    pair_arg_t *arg = argp;
    pair_ctx_t *c = arg->c;
    const size_t V = (size_t)c->k->lanes32, S = c->rows / V;
    int32_t *prof, *buf;

    pthread_mutex_lock(&c->lock);
    while (!c->go) pthread_cond_wait(&c->go_cv, &c->lock);
    pthread_mutex_unlock(&c->lock);
    /* sizes rounded up to the alignment, as aligned_alloc requires */
    prof = aligned_alloc(64, (SWGPU_NCODES * c->rows * sizeof(int32_t) + 63) / 64 * 64);
    buf = aligned_alloc(64, (3 * c->rows * sizeof(int32_t) + 63) / 64 * 64);

    if (!prof || !buf) {
        pthread_mutex_lock(&c->lock);
        c->failed = 1;
        pthread_mutex_unlock(&c->lock);
    }
    for (size_t band = arg->tid; band < c->nband; band += c->nthreads) {
        const size_t i0 = band * c->rows;
        const size_t nrows = c->qlen - i0 < c->rows ? c->qlen - i0 : c->rows;
        swgpu__pair_band_t b;
        swgpu__pair_best_t best = {0, 0, 0};
        const int32_t *top_h = NULL, *top_f = NULL;
        int32_t *out_h = NULL, *out_f = NULL;
        size_t j0, r, l, kk;

        if (!prof || !buf) {
            /* publish progress so the bands below do not wait forever */
            atomic_store(&c->progress[band], c->tlen);
            continue;
        }
        for (int code = 0; code < SWGPU_NCODES; code++)
            for (kk = 0; kk < S; kk++)
                for (l = 0; l < V; l++) {
                    r = l * S + kk;
                    prof[((size_t)code * S + kk) * V + l] =
                        r >= nrows ? SWGPU__PAIR_NEG
                        : c->prows ? c->prows[(i0 + r) * SWGPU_NCODES + code]
                                   : c->m->s[c->q[i0 + r]][code];
                }
        b.prof = prof;
        b.S = S;
        b.hp = buf;
        b.hc = buf + c->rows;
        b.e = buf + 2 * c->rows;
        b.gap_oe = c->gap_open + c->gap_extend;
        b.gap_e = c->gap_extend;
        b.last_l = (int)((nrows - 1) / S);
        b.last_k = (nrows - 1) % S;
        b.corner = 0;
        for (r = 0; r < c->rows; r++) {
            b.hp[r] = 0;               /* H of column -1 */
            b.e[r] = SWGPU__PAIR_NEG;  /* E entering column 0 */
        }
        if (band > 0) {
            top_h = c->edge_h[(band - 1) % c->nedge];
            top_f = c->edge_f[(band - 1) % c->nedge];
        }
        if (band + 1 < c->nband) {
            out_h = c->edge_h[band % c->nedge];
            out_f = c->edge_f[band % c->nedge];
        }
        for (j0 = 0; j0 < c->tlen; j0 += c->chunk) {
            size_t j1 = c->tlen - j0 < c->chunk ? c->tlen : j0 + c->chunk;
            if (band > 0)
                while (atomic_load(&c->progress[band - 1]) < j1) sched_yield();
            c->k->pair_cols(&b, c->t, j0, j1, top_h, top_f, out_h, out_f, &best);
            atomic_store(&c->progress[band], j1);
            if (c->prog) {
                uint64_t done = atomic_fetch_add(&c->cells, (uint64_t)nrows * (j1 - j0)) +
                                (uint64_t)nrows * (j1 - j0);
                if (arg->tid == 0) c->prog(c->prog_user, done);
            }
        }
        best.r += (int64_t)i0;
        merge_best(c, &best);
    }
    free(prof);
    free(buf);
    return NULL;
}

/* Run the bands of c (q, t, lengths, scoring, kernels, rows and nthreads
 * set): edges, progress, threads.  c->best is the
 * merged best. */
static int run_bands(pair_ctx_t *c)
{
    pthread_t tids[256];
    pair_arg_t args[256];
    size_t i, started = 0;
    int rc = SWGPU_OK;

    atomic_init(&c->cells, 0);
    c->nband = (c->qlen + c->rows - 1) / c->rows;
    if (c->nthreads > c->nband) c->nthreads = c->nband;
    /* columns per step of the band pipeline: a band starts once the band
     * above finished its first chunk, so chunks are a sixteenth of the
     * target (at least 16 columns, at most 4096) */
    c->chunk = c->tlen / 16 < 16 ? 16 : c->tlen / 16 > 4096 ? 4096 : c->tlen / 16;
    c->nedge = c->nband > 1 ? (c->nthreads + 1 < c->nband ? c->nthreads + 1 : c->nband) : 0;
    c->edge_h = calloc(c->nedge + 1, sizeof *c->edge_h);
    c->edge_f = calloc(c->nedge + 1, sizeof *c->edge_f);
    c->progress = malloc(c->nband * sizeof *c->progress);
    if (!c->edge_h || !c->edge_f || !c->progress) goto nomem;
    for (i = 0; i < c->nedge; i++) {
        c->edge_h[i] = malloc(c->tlen * sizeof(int32_t));
        c->edge_f[i] = malloc(c->tlen * sizeof(int32_t));
        if (!c->edge_h[i] || !c->edge_f[i]) goto nomem;
    }
    for (i = 0; i < c->nband; i++) atomic_init(&c->progress[i], 0);
    if (pthread_mutex_init(&c->lock, NULL)) goto nomem;
    if (pthread_cond_init(&c->go_cv, NULL)) {
        pthread_mutex_destroy(&c->lock);
        goto nomem;
    }
    for (i = 0; i < c->nthreads; i++) {
        args[i].c = c;
        args[i].tid = i;
    }
    for (i = 1; i < c->nthreads; i++) {
        if (pthread_create(&tids[i], NULL, pair_worker, &args[i])) break;
        started++;
    }
    /* the threads wait for go: if some failed to start, the bands are dealt
     * to the ones that did (nedge >= nthreads + 1 stays true) */
    pthread_mutex_lock(&c->lock);
    c->nthreads = started + 1;
    c->go = 1;
    pthread_cond_broadcast(&c->go_cv);
    pthread_mutex_unlock(&c->lock);
    pair_worker(&args[0]);
    for (i = 1; i <= started; i++) pthread_join(tids[i], NULL);
    pthread_cond_destroy(&c->go_cv);
    pthread_mutex_destroy(&c->lock);
    if (c->failed) goto nomem;
    goto done;
nomem:
    rc = swgpu__fail(SWGPU_ENOMEM, "pair score: out of memory for %zu x %zu", c->qlen, c->tlen);
done:
    for (i = 0; i < c->nedge; i++) {
        if (c->edge_h) free(c->edge_h[i]);
        if (c->edge_f) free(c->edge_f[i]);
    }
    free(c->edge_h);
    free(c->edge_f);
    free(c->progress);
    return rc;
}

int swgpu__cpu_score_pair_q(const swgpu__query_t *Q, const uint8_t *t, size_t tlen,
                            const swgpu_matrix_t *m, int gap_open, int gap_extend, int threads,
                            swgpu__isa_t isa, size_t band_rows, swgpu__pair_prog_fn prog,
                            void *prog_user, int32_t *score, int64_t *qend, int64_t *tend)
{
    pair_ctx_t c;
    size_t i, V;
    int rc = SWGPU_OK;
    const uint8_t *q = Q ? Q->res : NULL;
    const size_t qlen = Q ? Q->len : 0;
    int32_t smin, smax;

    if (!q || !t || !score)
        return swgpu__fail(SWGPU_EINVAL, "pair score: NULL sequence or result pointer");
    if (!m) return swgpu__fail(SWGPU_EINVAL, "pair score: no scoring matrix");
    if (gap_open < 0 || gap_extend < 0 || gap_open > PAIR_GAP_MAX || gap_extend > PAIR_GAP_MAX)
        return swgpu__fail(SWGPU_EINVAL, "pair score: gap open %d / extend %d: each must be in 0..%d",
                           gap_open, gap_extend, PAIR_GAP_MAX);
    swgpu__query_range(Q, m, &smin, &smax);
    if (smin < -PAIR_SCORE_MAX || smax > PAIR_SCORE_MAX || smin > smax)
        return swgpu__fail(SWGPU_EMATRIX, "pair score: matrix %s: scores %d..%d out of range", m->name,
                           (int)smin, (int)smax);
    {
        uint64_t shorter = qlen < tlen ? qlen : tlen;
        if (shorter > (uint64_t)PAIR_VAL_BOUND ||
            (int64_t)(smax > 0 ? smax : 0) * (int64_t)shorter > PAIR_VAL_BOUND)
            return swgpu__fail(SWGPU_ERANGE, "pair score: lengths %zu x %zu with matrix maximum %d may "
                               "exceed the 32-bit score range", qlen, tlen, (int)smax);
    }
    for (i = 0; i < qlen; i++)
        if (q[i] >= SWGPU_NCODES)
            return swgpu__fail(SWGPU_EINVAL, "pair score: query position %zu: residue code %u out of range",
                               i, q[i]);
    for (i = 0; i < tlen; i++)
        if (t[i] >= SWGPU_NCODES)
            return swgpu__fail(SWGPU_EINVAL, "pair score: target position %zu: residue code %u out of range",
                               i, t[i]);
    /* a pair one thread scores (search hits): the 16-bit striped kernel of
     * simd/simd.h when its bound holds (the same score and end); not
     * with a progress callback or a forced band height (tests of the bands) */
    if (!prog && band_rows == 0 &&
        (threads == 1 || (uint64_t)qlen * tlen <= PAIR_ONE_THREAD_CELLS) &&
        swgpu__aln_local_score(Q, t, tlen, m, gap_open, gap_extend, (int)isa, score, qend,
                               tend) == SWGPU_OK)
        return SWGPU_OK;
    memset(&c, 0, sizeof c);
    c.k = swgpu__cpu_isa_supported(isa) ? swgpu__cpu_kernels(isa) : NULL;
    if (!c.k || qlen == 0 || tlen == 0 || (uint64_t)qlen * tlen < PAIR_SMALL_CELLS)
        return swgpu__ref_score_q(Q, t, tlen, m, gap_open, gap_extend, score, qend, tend);

    V = (size_t)c.k->lanes32;
    c.q = q;
    c.prows = Q->rows;
    c.t = t;
    c.qlen = qlen;
    c.tlen = tlen;
    c.m = m;
    c.gap_open = gap_open;
    c.gap_extend = gap_extend;
    c.prog = prog;
    c.prog_user = prog_user;
    c.nthreads = threads > 0 ? (size_t)threads : (size_t)swgpu__ncores();
    if (c.nthreads > 256) c.nthreads = 256;
    /* bands: 1536 rows keep a column's working set (profile slice, two H
     * rows, E: 16 bytes a row) in a 32 KiB L1 (measured best on Zen 4 among
     * 512..4096); fewer rows when that would leave threads without a band */
    if (band_rows == 0) {
        band_rows = 1536;
        if ((qlen + c.nthreads - 1) / c.nthreads < band_rows)
            band_rows = (qlen + c.nthreads - 1) / c.nthreads;
    }
    c.rows = (band_rows + V - 1) / V * V;
    if ((rc = run_bands(&c)) == SWGPU_OK) {
        *score = c.best.score;
        if (qend) *qend = c.best.score > 0 ? c.best.r + 1 : 0;
        if (tend) *tend = c.best.score > 0 ? c.best.j + 1 : 0;
    }
    return rc;
}

int swgpu__cpu_score_pair_ex(const uint8_t *q, size_t qlen, const uint8_t *t, size_t tlen,
                             const swgpu_matrix_t *m, int gap_open, int gap_extend, int threads,
                             swgpu__isa_t isa, size_t band_rows, swgpu__pair_prog_fn prog,
                             void *prog_user, int32_t *score, int64_t *qend, int64_t *tend)
{
    swgpu__query_t Q = swgpu__query_plain(q, qlen);
    return swgpu__cpu_score_pair_q(&Q, t, tlen, m, gap_open, gap_extend, threads, isa, band_rows,
                                   prog, prog_user, score, qend, tend);
}

int swgpu__cpu_score_pair_isa(const uint8_t *q, size_t qlen, const uint8_t *t, size_t tlen,
                              const swgpu_matrix_t *m, int gap_open, int gap_extend, int threads,
                              swgpu__isa_t isa, size_t band_rows, int32_t *score, int64_t *qend,
                              int64_t *tend)
{
    return swgpu__cpu_score_pair_ex(q, qlen, t, tlen, m, gap_open, gap_extend, threads, isa, band_rows,
                                    NULL, NULL, score, qend, tend);
}

int swgpu__cpu_score_pair(const uint8_t *q, size_t qlen, const uint8_t *t, size_t tlen,
                          const swgpu_matrix_t *m, int gap_open, int gap_extend, int threads,
                          int32_t *score, int64_t *qend, int64_t *tend)
{
    return swgpu__cpu_score_pair_isa(q, qlen, t, tlen, m, gap_open, gap_extend, threads,
                                     swgpu__cpu_isa_best(), 0, score, qend, tend);
}

/* ------------------------------------------------ local score and end (16-bit) */

int swgpu__aln_local_score(const swgpu__query_t *q, const uint8_t *t, size_t tlen,
                           const swgpu_matrix_t *m, int gap_open, int gap_extend, int isa,
                           int32_t *score, int64_t *qend, int64_t *tend)
{
    const swgpu__aln_kernels_t *k = swgpu__aln_kernels(isa);
    swgpu__aln_job_t jb = {0};
    int32_t st[SWGPU_NCODES * SWGPU_NCODES], smin, smax;
    const size_t qlen = q->len;
    size_t bytes;
    swgpu__query_range(q, m, &smin, &smax);
    if (!k || qlen == 0 || tlen == 0 ||
        !swgpu__aln_local_fits16(qlen, tlen, gap_open, gap_extend, smax))
        return 1;
    bytes = (5 + 32) * ((qlen + k->lanes16 - 1) / k->lanes16) * k->lanes16 * sizeof(int16_t) +
            qlen + k->lanes16 + 64;
    if (bytes > SWGPU__ALN_THREAD_KEEP || !(jb.work = swgpu__aln_thread_work(bytes)))
        return 1;
    if (!q->rows)
        for (int x = 0; x < SWGPU_NCODES; x++)
            for (int y = 0; y < SWGPU_NCODES; y++)
                st[y * SWGPU_NCODES + x] = m->s[x][y];
    jb.x = q->res;
    jb.w = qlen;
    jb.y = t;
    jb.h = tlen;
    jb.st = st;
    jb.xrows = q->rows;
    jb.go = gap_open;
    jb.ge = gap_extend;
    jb.mode = SWGPU__ALN_LOCAL;
    k->run16(&jb);
    swgpu__aln_thread_work_done(jb.work, bytes);
    *score = jb.best;
    if (qend)
        *qend = jb.best ? jb.found_i : 0;
    if (tend)
        *tend = jb.best ? jb.found_r : 0;
    return SWGPU_OK;
}
