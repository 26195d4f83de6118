/*
 * basetrace.c - the traceback of the small pieces of a long alignment
 * (walk.c leaves them): each piece's full dynamic-programming matrix,
 * computed only where an optimal path can pass, and its path traced back
 * from the end state; the pieces traced by a pool of threads (and, split
 * across parts, each part its share) and their CIGARs joined in order.
 */
#define _POSIX_C_SOURCE 200809L
#include "long/long.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define SH SWGPU__LONG_SH
#define NEG SWGPU__LONG_NEG

static int64_t imin64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

static int64_t imax64(int64_t a, int64_t b)
{
    return a > b ? a : b;
}

/*
 * The best score any path from vertex (i, j) of an h x w piece can have
 * to its start plus to its end, from the lengths alone: min(di, dj) * smax
 * - |di - dj| * ext each way.  A cell where this is below the piece's score
 * lies on no optimal path.  It is concave in j, so for a row the cells that
 * reach the score form one interval.
 */
static int64_t piece_ub(const swgpu__lscore_t *sc, int64_t h, int64_t w, int64_t i, int64_t j)
{
    const int64_t a = sc->smax > 0 ? sc->smax : 0, e = sc->ext;
    int64_t di = h - i, dj = w - j;
    return imin64(i, j) * a - (i > j ? i - j : j - i) * e + imin64(di, dj) * a -
           (di > dj ? di - dj : dj - di) * e;
}

/* Columns [*lo, *hi] (within 1..w) of row i that may lie on an optimal path
 * of score T; *lo > *hi when none does. */
static void piece_window(const swgpu__lscore_t *sc, int64_t h, int64_t w, int64_t i, int64_t T,
                         int64_t *lo, int64_t *hi)
{
    const int64_t cand[4] = { 1, w, imax64(1, imin64(w, i)), imax64(1, imin64(w, w - h + i)) };
    int64_t jm = 1, best = INT64_MIN, a, b;
    for (int k = 0; k < 4; k++) {
        int64_t v = piece_ub(sc, h, w, i, cand[k]);
        if (v > best) {
            best = v;
            jm = cand[k];
        }
    }
    if (best < T) {
        *lo = 1;
        *hi = 0;
        return;
    }
    a = 1; /* smallest j in [1, jm] that reaches T (nondecreasing there) */
    b = jm;
    while (a < b) {
        int64_t m = a + (b - a) / 2;
        if (piece_ub(sc, h, w, i, m) >= T)
            b = m;
        else
            a = m + 1;
    }
    *lo = a;
    a = jm; /* largest j in [jm, w] that does (nonincreasing there) */
    b = w;
    while (a < b) {
        int64_t m = a + (b - a + 1) / 2;
        if (piece_ub(sc, h, w, i, m) >= T)
            a = m;
        else
            b = m - 1;
    }
    *hi = a;
}

/*
 * The full matrix of one piece with its begin/end states, into dir, one
 * byte per vertex (rows of w + 1): bits 0-1 where H came from (0 diagonal,
 * 1 E, 2 F; ties in that order), bit 2 E extended E(i,j-1) (ties: opened
 * from H), bit 3 F extended F(i-1,j); H and F: one row each.  Returns the
 * score at the end vertex in the end state.  Rows 1..h compute only the
 * columns that may lie on an optimal path (piece_window); the others hold
 * minus infinity, a lower bound, which changes no value on an optimal path
 * and so no decision of the traceback (a tie between two sources means
 * both lie on optimal paths).
 */
static int64_t base_fill(const swgpu__la_t *C, const swgpu__la_piece_t *u, uint8_t *dir, int64_t *H, int64_t *F)
{
    const int64_t h = u->i1 - u->i0, w = u->j1 - u->j0, W = w + 1;
    const int64_t ext = C->sc.ext, oe = C->sc.open + C->sc.ext, NEGB = C->sc.wide ? SWGPU__LONG_NEG64 : NEG;
    const uint8_t *A = C->a + u->i0 - 1, *B = C->b + u->j0 - 1;
    int64_t h0, e0, f0, e, endv;
    int64_t i, j, plo = 1, phi = w;

    swgpu__la_start_init(u->s0, &h0, &e0, &f0);
    if (h0 <= NEG)
        h0 = NEGB;
    if (e0 <= NEG)
        e0 = NEGB;
    if (f0 <= NEG)
        f0 = NEGB;
    /* row 0 */
    H[0] = h0;
    F[0] = f0;
    e = e0;
    dir[0] = 0;
    for (j = 1; j <= w; j++) {
        int64_t ee = e - ext, eo = H[j - 1] - oe;
        e = ee > eo ? ee : eo;
        H[j] = e;
        F[j] = NEGB;
        dir[j] = (uint8_t)(1 | (ee > eo ? 4 : 0));
    }
    endv = u->s1 == SWGPU__LA_E ? e : u->s1 == SWGPU__LA_F ? F[w] : H[w];
    for (i = 1; i <= h; i++) {
        const int32_t *prow = C->sc.s[A[i]];
        uint8_t *d = dir + i * W;
        int64_t lo, hi;
        int64_t prev0 = H[0], diag, fe = F[0] - ext, fo = H[0] - oe;
        piece_window(&C->sc, h, w, i, u->T, &lo, &hi);
        F[0] = fe > fo ? fe : fo;
        H[0] = F[0];
        d[0] = (uint8_t)(2 | (fe > fo ? 8 : 0));
        diag = lo == 1 ? prev0 : lo <= w ? H[lo - 1] : NEGB;
        /* the previous row's values outside this row's window become minus infinity */
        for (j = plo; j <= phi && j < lo; j++)
            H[j] = F[j] = NEGB;
        for (j = imax64(plo, hi + 1); j <= phi; j++)
            H[j] = F[j] = NEGB;
        plo = lo;
        phi = hi;
        e = NEGB;
        for (j = lo; j <= hi; j++) {
            int64_t ee = e - ext, eo = H[j - 1] - oe;
            int64_t fe2 = F[j] - ext, fo2 = H[j] - oe;
            int64_t hh = diag + prow[B[j]];
            uint8_t bits = (uint8_t)((ee > eo ? 4 : 0) | (fe2 > fo2 ? 8 : 0));
            e = ee > eo ? ee : eo;
            diag = H[j];
            F[j] = fe2 > fo2 ? fe2 : fo2;
            if (e > hh) {
                hh = e;
                bits |= 1;
            }
            if (F[j] > hh) {
                hh = F[j];
                bits = (uint8_t)((bits & ~3) | 2);
            }
            H[j] = hh;
            d[j] = bits;
        }
        endv = u->s1 == SWGPU__LA_E ? e : u->s1 == SWGPU__LA_F ? F[w] : H[w];
    }
    return endv;
}

/* The path through dir from the end vertex in state s1 back to the begin,
 * its CIGAR appended to *out. */
static int base_walk(const swgpu__la_piece_t *u, const uint8_t *dir, swgpu__la_cig_t *out)
{
    const int64_t W = u->j1 - u->j0 + 1;
    int64_t i = u->i1 - u->i0, j = u->j1 - u->j0;
    int state;
    uint32_t *rev = NULL;
    size_t nrev = 0, caprev = 0;
    int rc = SWGPU_OK;

    /* runs collected in reverse */
    state = u->s1;
    while (i > 0 || j > 0) {
        uint8_t d = dir[i * W + j];
        int op;
        if (state == SWGPU__LA_H) {
            int src = d & 3;
            if (src == 0) {
                op = SWGPU_CIGAR_M;
                i--;
                j--;
            } else {
                state = src == 1 ? SWGPU__LA_E : SWGPU__LA_F;
                continue;
            }
        } else if (state == SWGPU__LA_E) {
            op = SWGPU_CIGAR_D;
            state = (d & 4) ? SWGPU__LA_E : SWGPU__LA_H;
            j--;
        } else {
            op = SWGPU_CIGAR_I;
            state = (d & 8) ? SWGPU__LA_F : SWGPU__LA_H;
            i--;
        }
        if (nrev && SWGPU_CIGAR_OP(rev[nrev - 1]) == (uint32_t)op) {
            rev[nrev - 1] += 1u << 4;
            continue;
        }
        if (nrev == caprev) {
            size_t cap = caprev ? 2 * caprev : 64;
            uint32_t *p = realloc(rev, cap * sizeof *p);
            if (!p) {
                free(rev);
                return swgpu__fail(SWGPU_ENOMEM, "long alignment: out of memory in traceback");
            }
            rev = p;
            caprev = cap;
        }
        rev[nrev++] = (1u << 4) | (uint32_t)op;
    }
    for (size_t k = nrev; k-- > 0 && !rc;)
        if (swgpu__la_cig_push(out, (int)SWGPU_CIGAR_OP(rev[k]), SWGPU_CIGAR_LEN(rev[k])))
            rc = swgpu__fail(SWGPU_ENOMEM, "long alignment: out of memory in traceback");
    free(rev);
    return rc;
}

/* Full-matrix global alignment of one piece (base_fill, base_walk); its
 * CIGAR appended to *out. */
static int base_trace(const swgpu__la_t *C, const swgpu__la_piece_t *u, uint8_t *dir, int64_t *H, int64_t *F,
                      swgpu__la_cig_t *out)
{
    const int64_t endv = base_fill(C, u, dir, H, F);
    if (endv != u->T)
        return swgpu__fail(SWGPU_EINVAL, "long alignment: internal error: piece [%lld,%lld)x[%lld,%lld) "
                           "scores %lld, expected %lld", (long long)u->i0, (long long)u->i1,
                           (long long)u->j0, (long long)u->j1, (long long)endv, (long long)u->T);
    return base_walk(u, dir, out);
}

typedef struct {
    const swgpu__la_t *C;
    const swgpu__la_pieces_t *list;
    swgpu__la_cig_t *cig;     /* one per piece */
    _Atomic size_t next;
    _Atomic int rc;
    _Atomic uint64_t done;    /* cells of the pieces traced back (progress) */
    _Atomic int running;      /* workers not finished */
    char err[1024];
    pthread_mutex_t lock;
} basejob_t;

static void base_run(basejob_t *J);

static void *base_worker(void *arg)
{
    basejob_t *J = arg;
    base_run(J);
    atomic_fetch_sub(&J->running, 1);
    return NULL;
}

static void base_run(basejob_t *J)
{
    uint8_t *dir = NULL;
    int64_t *H = NULL, *F = NULL;
    size_t wmax = 0;
    for (;;) {
        size_t k = atomic_fetch_add(&J->next, 1);
        const swgpu__la_piece_t *u;
        int64_t w;
        int rc;
        if (k >= J->list->n || atomic_load(&J->rc))
            break;
        u = &J->list->v[k];
        w = u->j1 - u->j0;
        if (!dir) {
            dir = malloc((size_t)swgpu__la_base_cells());
            if (!dir)
                goto nomem;
        }
        if ((size_t)w + 1 > wmax) {
            int64_t *h2 = realloc(H, ((size_t)w + 1) * sizeof *H);
            int64_t *f2;
            if (!h2)
                goto nomem;
            H = h2;
            f2 = realloc(F, ((size_t)w + 1) * sizeof *F);
            if (!f2)
                goto nomem;
            F = f2;
            wmax = (size_t)w + 1;
        }
        rc = base_trace(J->C, u, dir, H, F, &J->cig[k]);
        atomic_fetch_add(&J->done, (uint64_t)(u->i1 - u->i0) * (uint64_t)w);
        if (rc) {
            int zero = 0;
            pthread_mutex_lock(&J->lock);
            if (atomic_compare_exchange_strong(&J->rc, &zero, rc))
                snprintf(J->err, sizeof J->err, "%s", swgpu_last_error());
            pthread_mutex_unlock(&J->lock);
            break;
        }
    }
    free(dir);
    free(H);
    free(F);
    return;
nomem:
    {
        int zero = 0;
        pthread_mutex_lock(&J->lock);
        if (atomic_compare_exchange_strong(&J->rc, &zero, SWGPU_ENOMEM))
            snprintf(J->err, sizeof J->err, "long alignment: out of memory in traceback");
        pthread_mutex_unlock(&J->lock);
    }
    free(dir);
    free(H);
    free(F);
    return;
}

/* Trace back every (small) piece in parallel and join the CIGARs into out. */
static int trace_pieces(swgpu__la_t *C, const swgpu__la_pieces_t *list, swgpu__la_cig_t *all)
{
    basejob_t J;
    pthread_t *tid = NULL;
    int nt = C->threads, started = 0, rc;
    memset(&J, 0, sizeof J);
    J.C = C;
    J.list = list;
    J.cig = calloc(list->n ? list->n : 1, sizeof *J.cig);
    if (!J.cig)
        return swgpu__fail(SWGPU_ENOMEM, "long alignment: out of memory");
    atomic_init(&J.next, 0);
    atomic_init(&J.rc, 0);
    atomic_init(&J.done, 0);
    pthread_mutex_init(&J.lock, NULL);
    if ((size_t)nt > list->n)
        nt = (int)list->n;
    if (nt < 1)
        nt = 1;
    swgpu__la_host_use(C, (uint64_t)nt * (uint64_t)(swgpu__la_base_cells() + 16 * SH * 4));
    if (nt > 1)
        tid = malloc((size_t)nt * sizeof *tid);
    atomic_init(&J.running, nt);
    if (tid)
        for (; started < nt; started++)
            if (pthread_create(&tid[started], NULL, base_worker, &J) != 0)
                break;
    if (started == 0) {
        base_run(&J);
    } else {
        atomic_fetch_sub(&J.running, nt - started);
        while (C->o->progress && atomic_load(&J.running) > 0) { /* report while they work */
            struct timespec ts = { 0, 20 * 1000 * 1000 };
            nanosleep(&ts, NULL);
            swgpu__la_progress(C, atomic_load(&J.done), atomic_load(&J.done)); /* not counted as computed */
        }
    }
    for (int k = 0; k < started; k++)
        pthread_join(tid[k], NULL);
    free(tid);
    C->phase_done += atomic_load(&J.done);
    rc = atomic_load(&J.rc);
    if (rc)
        swgpu__fail(rc, "%s", J.err);
    for (size_t k = 0; k < list->n && !rc; k++)
        for (size_t x = 0; x < J.cig[k].n && !rc; x++)
            if (swgpu__la_cig_push(all, (int)SWGPU_CIGAR_OP(J.cig[k].v[x]), SWGPU_CIGAR_LEN(J.cig[k].v[x])))
                rc = swgpu__fail(SWGPU_ENOMEM, "long alignment: out of memory for the CIGAR");
    for (size_t k = 0; k < list->n; k++)
        free(J.cig[k].v);
    free(J.cig);
    pthread_mutex_destroy(&J.lock);
    return rc;
}

/*
 * The pieces traced back by the parts together: part p takes the pieces
 * whose cells begin in the p-th of P equal shares of all the pieces' cells
 * (consecutive pieces), joins their CIGARs, and every part joins the parts'
 * CIGARs in order - the same CIGAR as one process joining every piece.
 */
static int trace_pieces_split(swgpu__la_t *C, const swgpu__la_pieces_t *list, swgpu__la_cig_t *all)
{
    const swgpu_comm_t *cm = C->comm;
    uint64_t total = 0, acc = 0;
    size_t k0 = list->n, k1 = list->n, off[SWGPU__LONG_MAX_PARTS + 1];
    swgpu__la_cig_t mine = { 0 };
    char *got = NULL;
    int rc;
    for (size_t k = 0; k < list->n; k++)
        total += (uint64_t)(list->v[k].i1 - list->v[k].i0 + 1) * (uint64_t)(list->v[k].j1 - list->v[k].j0 + 1);
    for (size_t k = 0; k < list->n; k++) {
        const swgpu__la_piece_t *u = &list->v[k];
        int p = total ? (int)((double)acc / (double)total * cm->size) : 0;
        if (p >= cm->size)
            p = cm->size - 1;
        if (p == cm->rank && k0 == list->n)
            k0 = k;
        if (p > cm->rank && k1 == list->n)
            k1 = k;
        acc += (uint64_t)(u->i1 - u->i0 + 1) * (uint64_t)(u->j1 - u->j0 + 1);
    }
    if (k0 > k1)
        k0 = k1;
    swgpu__la_pieces_t part = { list->v + k0, k1 - k0, k1 - k0 };
    rc = part.n ? trace_pieces(C, &part, &mine) : SWGPU_OK;
    if ((rc = swgpu__lsplit_gather(cm, rc, mine.v, mine.n * sizeof *mine.v, &got, off))) {
        C->dead = 1;
        free(mine.v);
        return rc;
    }
    for (int p = 0; p < cm->size && !rc; p++)
        for (size_t x = off[p]; x < off[p + 1] && !rc; x += sizeof(uint32_t)) {
            uint32_t c;
            memcpy(&c, got + x, sizeof c);
            if (swgpu__la_cig_push(all, (int)SWGPU_CIGAR_OP(c), SWGPU_CIGAR_LEN(c)))
                rc = swgpu__fail(SWGPU_ENOMEM, "long alignment: out of memory for the CIGAR");
        }
    free(got);
    free(mine.v);
    return rc;
}

int swgpu__la_trace(swgpu__la_t *C, const swgpu__la_pieces_t *list, swgpu__la_cig_t *all)
{
    return C->comm ? trace_pieces_split(C, list, all) : trace_pieces(C, list, all);
}
