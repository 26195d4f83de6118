/*
 * begin.c - the begin of a local alignment whose score and end are known:
 * the reverse pass anchored at the end cell (swgpu__ref_start and its
 * scalar and per-instruction-set forms), its rows on the SIMD kernels of
 * src/simd when the CPU has them.  Notation: src/ref/sw_ref.c.
 */
#include "align/align.h"

#include <stdlib.h>
#include <string.h>

/* The SIMD kernels are used when their scratch stays below this; wider
 * rectangles run the scalar code (same results). */
#define SIMD_WORK_MAX ((size_t)64 << 20)
int swgpu__ref_score(const uint8_t *q, size_t qlen, const uint8_t *t, size_t tlen,
                     const swgpu_matrix_t *m, int gap_open, int gap_extend,
                     int32_t *score, int64_t *qend, int64_t *tend)
{
    swgpu__query_t Q = swgpu__query_plain(q, qlen);
    return swgpu__ref_score_q(&Q, t, tlen, m, gap_open, gap_extend, score, qend, tend);
}

/* --------------------------------------------------------- reverse pass */

/*
 * The start.  Given the end (qend, tend) and the best score S > 0, run the
 * recurrences above on the REVERSED prefixes q[0,qend) and t[0,tend),
 * ANCHORED at the end cell: no 0 restart, H'(0,0) = 0, the borders are
 * pure gaps (H'(i,0) = -(go + i*ge), H'(0,j) = -(go + j*ge)).  In reversed
 * coordinates cell (i,j) stands for the begin (qend-i, tend-j), and
 *
 *   M'(i,j) = H'(i-1,j-1) + s(q[qend-i], t[tend-j])
 *
 * is the best score of an alignment of q[qend-i,qend) x t[tend-j,tend)
 * whose first column aligns q[qend-i] with t[tend-j].  No such value can
 * exceed S (each is a local alignment).  The start is the first reversed
 * cell in target-major order with M'(i,j) == S, i.e. the largest tbeg,
 * then the largest qbeg: the shortest of the optimal alignments.  The pass
 * stops at that row, so it costs qend x (tend - tbeg) cells.
 */
int swgpu__align_start_k(const swgpu__query_t *Q, const uint8_t *t, size_t tlen,
                       const swgpu_matrix_t *m, int gap_open, int gap_extend, int32_t score,
                       int64_t qend, int64_t tend, int64_t *qbeg, int64_t *tbeg,
                       const swgpu__aln_kernels_t *k, int only32)
{
    const int32_t go = gap_open, ge = gap_extend, oe = go + ge;
    const uint8_t *q = Q->res;
    const size_t qlen = Q->len;
    uint8_t *qr = NULL;
    int32_t *buf = NULL, *H, *E, *Mrow, *scratch, *rr = NULL;
    swgpu__ref_prof_t p = {0};
    size_t n, w;
    swgpu__ref_range_t r = swgpu__ref_range(Q, m);
    int rc = swgpu__ref_check_scoring(m, &r, gap_open, gap_extend);
    if (rc)
        return rc;
    if (score <= 0 || qend <= 0 || tend <= 0 || (uint64_t)qend > qlen || (uint64_t)tend > tlen ||
        !q || !t || !qbeg || !tbeg)
        return swgpu__fail(SWGPU_EINVAL,
                           "reference start: bad end cell (%lld, %lld) or score %d for lengths "
                           "%zu x %zu", (long long)qend, (long long)tend, (int)score, qlen, tlen);
    w = (size_t)qend;
    n = (size_t)tend;
    if ((rc = swgpu__ref_check_global(&r, go, ge, w, n)))
        return rc;

    /* qr = q[0,qend) reversed (rr: a PSSM's rows reversed), its profile;
     * rows over w+1 columns */
    qr = malloc(w);
    if (!qr)
        return swgpu__fail(SWGPU_ENOMEM, "reference start: no memory for %zu columns", w);
    for (size_t i = 0; i < w; i++)
        qr[i] = q[w - 1 - i];
    rr = swgpu__ref_rows_reversed(Q->rows, w, &rc);
    if (rc) {
        free(qr);
        return rc;
    }
    if (k) {
        /* the same pass, striped (simd/simd.h): the same M' values */
        size_t bytes = swgpu__aln_work_bytes(k, w);
        void *work = bytes <= SIMD_WORK_MAX ? swgpu__aln_thread_work(bytes) : NULL;
        uint8_t *tr = work ? malloc(n) : NULL;
        if (!tr)
            swgpu__aln_thread_work_done(work, bytes);
        if (tr) {
            int32_t st[SWGPU_NCODES * SWGPU_NCODES];
            swgpu__aln_job_t jb = {0};
            if (!rr)
                for (int x = 0; x < SWGPU_NCODES; x++)
                    for (int y = 0; y < SWGPU_NCODES; y++)
                        st[y * SWGPU_NCODES + x] = m->s[x][y];
            for (size_t j = 0; j < n; j++)
                tr[j] = t[n - 1 - j];
            jb.x = qr;
            jb.w = w;
            jb.y = tr;
            jb.h = n;
            jb.st = st;
            jb.xrows = rr;
            jb.go = go;
            jb.ge = ge;
            jb.e0 = SWGPU__REF_NEG;
            jb.mode = SWGPU__ALN_START;
            jb.score = score;
            jb.work = work;
            if (!only32 && swgpu__aln_fits16(w, n, k->lanes16, go, ge, r.min16, r.max, score))
                k->run16(&jb);
            else
                k->run(&jb);
            swgpu__aln_thread_work_done(work, bytes);
            free(tr);
            free(qr);
            free(rr);
            if (jb.over)
                return swgpu__fail(SWGPU_EINVAL,
                                   "reference start: an alignment ending at (%lld, %lld) scores "
                                   "%d > the given best %d", (long long)qend, (long long)tend,
                                   (int)jb.over, (int)score);
            if (!jb.found_r)
                return swgpu__fail(SWGPU_EINVAL,
                                   "reference start: no alignment ending at (%lld, %lld) reaches "
                                   "score %d", (long long)qend, (long long)tend, (int)score);
            *qbeg = qend - jb.found_i;
            *tbeg = tend - jb.found_r;
            return SWGPU_OK;
        }
    }
    buf = malloc((4 * w + 2) * sizeof *buf);
    if (!buf) {
        rc = swgpu__fail(SWGPU_ENOMEM, "reference start: no memory for %zu columns", w);
        goto fail;
    }
    swgpu__ref_prof_init(&p, qr, rr, w, m);
    H = buf;           /* H[i] = H'(i, j), i = 0..w */
    E = buf + w + 1;   /* E[i] = E'(i, j) */
    Mrow = E + w + 1;  /* Mrow[i-1] = M'(i, j) of the current row */
    scratch = Mrow + w;

    H[0] = 0;
    E[0] = SWGPU__REF_NEG;
    for (size_t i = 1; i <= w; i++) {
        H[i] = -(go + (int32_t)i * ge);
        E[i] = SWGPU__REF_NEG;
    }
    for (size_t j = 1; j <= n; j++) {
        const int32_t *sc = swgpu__ref_prof_row(&p, t[n - j], scratch); /* sc[i-1] = s(q[qend-i], t[tend-j]) */
        int32_t diag = H[0], f, mmax = SWGPU__REF_NEG;
        E[0] = swgpu__ref_max32(E[0] - ge, H[0] - oe); /* column 0: a pure D gap */
        H[0] = E[0];
        f = H[0] - oe; /* F'(1,j); then F' as in swgpu__ref_sw_fwd, from x = max(M', E') */
        for (size_t i = 1; i <= w; i++) {
            int32_t e = swgpu__ref_max32(E[i] - ge, H[i] - oe);
            int32_t mm = diag + sc[i - 1];
            int32_t x = swgpu__ref_max32(mm, e);
            int32_t h = swgpu__ref_max32(x, f);
            f = swgpu__ref_max32(f - ge, x - oe);
            Mrow[i - 1] = mm;
            mmax = swgpu__ref_max32(mmax, mm);
            diag = H[i];
            H[i] = h;
            E[i] = e;
        }
        if (mmax > score) {
            rc = swgpu__fail(SWGPU_EINVAL,
                             "reference start: an alignment ending at (%lld, %lld) scores %d > "
                             "the given best %d", (long long)qend, (long long)tend, (int)mmax,
                             (int)score);
            goto fail;
        }
        if (mmax == score) {
            size_t i = 0;
            while (Mrow[i] != score)
                i++;
            *qbeg = qend - (int64_t)(i + 1);
            *tbeg = tend - (int64_t)j;
            rc = SWGPU_OK;
            goto done;
        }
    }
    rc = swgpu__fail(SWGPU_EINVAL,
                     "reference start: no alignment ending at (%lld, %lld) reaches score %d",
                     (long long)qend, (long long)tend, (int)score);
fail:
done:
    swgpu__ref_prof_free(&p);
    free(qr);
    free(rr);
    free(buf);
    return rc;
}

int swgpu__ref_start(const uint8_t *q, size_t qlen, const uint8_t *t, size_t tlen,
                     const swgpu_matrix_t *m, int gap_open, int gap_extend,
                     int32_t score, int64_t qend, int64_t tend,
                     int64_t *qbeg, int64_t *tbeg)
{
    swgpu__query_t Q = swgpu__query_plain(q, qlen);
    return swgpu__align_start_k(&Q, t, tlen, m, gap_open, gap_extend, score, qend, tend, qbeg, tbeg,
                       swgpu__aln_kernels(-1), 0);
}

int swgpu__ref_start_scalar(const uint8_t *q, size_t qlen, const uint8_t *t, size_t tlen,
                            const swgpu_matrix_t *m, int gap_open, int gap_extend,
                            int32_t score, int64_t qend, int64_t tend,
                            int64_t *qbeg, int64_t *tbeg)
{
    swgpu__query_t Q = swgpu__query_plain(q, qlen);
    return swgpu__align_start_k(&Q, t, tlen, m, gap_open, gap_extend, score, qend, tend, qbeg, tbeg,
                       NULL, 0);
}

int swgpu__ref_start_isa(const uint8_t *q, size_t qlen, const uint8_t *t, size_t tlen,
                         const swgpu_matrix_t *m, int gap_open, int gap_extend,
                         int32_t score, int64_t qend, int64_t tend,
                         int64_t *qbeg, int64_t *tbeg, int isa)
{
    swgpu__query_t Q = swgpu__query_plain(q, qlen);
    return swgpu__align_start_k(&Q, t, tlen, m, gap_open, gap_extend, score, qend, tend, qbeg, tbeg,
                       swgpu__aln_kernels(isa < 0 ? isa : isa & 0xff),
                       isa >= 0 && (isa & SWGPU__ALN_ONLY32));
}

