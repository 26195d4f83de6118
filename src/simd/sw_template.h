/*
 * sw_template.h - body of one inter-sequence batch kernel (SWIPE-style),
 * included by sw_<isa>.c once per lane width with these macros defined:
 *
 *   SW_NAME          name of the static function to define
 *   SW_V             vector type;  SW_T  lane type (int8_t or int16_t)
 *   SW_MIN           the lane type's minimum;  SW_LANES  lanes per vector
 *   SW_SET1(x)       broadcast
 *   SW_ADDS, SW_SUBS signed saturating add / subtract
 *   SW_MAX           signed maximum
 *   SW_BLEND(a,b,m)  bytes of b where the bytes of m are 0xff, else a
 *   SW_PROFILE(prof, col, qp)
 *                    for each letter a of qp->letters: prof[a] = the
 *                    scores of a against the SW_LANES codes at col
 *
 * and, for the PSSM form (SW_PSSM defined: the query is qp's per-position
 * score rows, no letters), instead of SW_PROFILE:
 *
 *   SW_PCOL_T, SW_PCOL(col)     what a lookup needs of the codes at col
 *   SW_PROW_T, SW_PROW(qp, i)   ... of position i's 32-entry score row
 *   SW_PLOOK(r, c)              the scores of row r against column c's codes
 *
 * (the plain form looks a block's scores up once per letter, amortized over
 * the query; a PSSM has a row per position, so the PSSM form looks them up
 * in the main loop, one lookup per cell vector, next to the recurrence)
 *
 * Recurrences for query row i and database column j (gap of length k costs
 * o + k*e; oe = o + e):
 *   E[i][j+1] = max(E[i][j] - e, H[i][j] - oe)    gap along the database
 *   F[i+1][j] = max(F[i][j] - e, H[i][j] - oe)    gap along the query
 *   H[i][j]   = max(0, H[i-1][j-1] + s(q[i], d[j]), E[i][j], F[i][j])
 * The best score is the maximum over all cells of H[i-1][j-1] + s(q[i], d[j])
 * (E and F only carry values below an earlier H).
 *
 * Representation: a lane value v means the score v - SW_MIN.  Signed
 * saturating arithmetic then floors H, E and F at score 0 for free: for H
 * that is the local-alignment max(0, ...); for E and F it cannot change any
 * H (H >= 0 anyway).  At the top, diag + s saturates at the lane maximum,
 * which the caller sees as a score of SW_MAX - SW_MIN and rescores wider.
 * Past a sequence's end the pad code scores SW_MIN, so nothing there raises
 * the best.  (Measured on Zen 4: this form, 4 saturating ops and 5 max per
 * cell, beats a form with 1 saturating op and wrapping subtracts, which
 * needs one more max per cell.)
 *
 * The kernel walks SWGPU__COLS database columns at a time down the whole
 * query, keeping per column the F value and the H of the row above in
 * registers; per query row it reads and writes one H and one E vector
 * (the values at the block's right edge).
 *
 * Lane refill: a lane may hold several sequences one after the other, each
 * starting at a multiple of SWGPU__COLS columns.  Before the block where
 * sequences start (an event), the kernel reports the best of the lanes'
 * previous sequences and resets those lanes' H, E and best to 0; F and the
 * registers start at 0 in every block anyway.
 */

_Static_assert(SWGPU__COLS == 4, "the kernel body below walks 4 columns");

/* One cell of row i, column j+C: X holds H(i-1, j+C-1) + s on entry (the
 * saturating add), H(i, j+C) on exit; F is F entering the cell, E the E
 * entering from the left, both updated for the next row / column. */
#define SW_CELL(X, F)                              \
    do {                                           \
        X = SW_MAX(SW_MAX(X, F), e);               \
        t = SW_SUBS(X, voe);                       \
        e = SW_MAX(SW_SUBS(e, ve), t);             \
        F = SW_MAX(SW_SUBS(F, ve), t);             \
    } while (0)

static void SW_NAME(const swgpu__sw_query_t *qp, const uint8_t *cols, size_t ncols,
                    const swgpu__sw_event_t *events, size_t nev, void *work, int32_t *best)
{
    const size_t qlen = qp->qlen;
#ifndef SW_PSSM
    const uint8_t *q = qp->q;
#endif
    SW_V *hv = (SW_V *)work;           /* hv[i]: H of row i in the last column done */
    SW_V *ev = hv + qlen;              /* ev[i]: E entering row i of the next column */
#ifndef SW_PSSM
    SW_V *prof = ev + qlen;            /* prof[c * 32 + a]: scores of letter a, column c */
#endif
    const SW_V zero = SW_SET1(SW_MIN); /* score 0 */
    const SW_V voe = SW_SET1(qp->gap_oe);
    const SW_V ve = SW_SET1(qp->gap_e);
    SW_V vbest = zero;
    SW_T out[SW_LANES];
    size_t i, j, k = 0;
    int c;

    for (i = 0; i < qlen; i++) {
        hv[i] = zero;
        ev[i] = zero;
    }
    for (j = 0; j < ncols; j += SWGPU__COLS) {
        if (k < nev && events[k].col == j) {
            /* new sequences start in the event's lanes: report the best
             * of the ones that ended, then restart those lanes at 0 */
            uint8_t mb[sizeof(SW_V)];
            SW_V m;
            memcpy(out, &vbest, sizeof out);
            memset(mb, 0, sizeof mb);
            for (c = 0; c < SW_LANES; c++)
                if (events[k].lanes >> c & 1) {
                    *best++ = (int32_t)out[c] - SW_MIN;
                    memset(mb + c * sizeof(SW_T), 0xff, sizeof(SW_T));
                }
            memcpy(&m, mb, sizeof m);
            vbest = SW_BLEND(vbest, zero, m);
            for (i = 0; i < qlen; i++) {
                hv[i] = SW_BLEND(hv[i], zero, m);
                ev[i] = SW_BLEND(ev[i], zero, m);
            }
            k++;
        }
#ifdef SW_PSSM
        const SW_PCOL_T c0 = SW_PCOL(cols + j * SW_LANES);
        const SW_PCOL_T c1 = SW_PCOL(cols + (j + 1) * SW_LANES);
        const SW_PCOL_T c2 = SW_PCOL(cols + (j + 2) * SW_LANES);
        const SW_PCOL_T c3 = SW_PCOL(cols + (j + 3) * SW_LANES);
#else
        for (c = 0; c < SWGPU__COLS; c++)
            SW_PROFILE(prof + c * SWGPU_NCODES, cols + (j + (size_t)c) * SW_LANES, qp);
#endif
        /* fC: F entering row i of column j+C; uC: H of row i-1, column j+C;
         * diag: H of row i-1, column j-1 (the block's left edge) */
        SW_V diag = zero, f0 = zero, f1 = zero, f2 = zero, f3 = zero;
        SW_V u0 = zero, u1 = zero, u2 = zero;
        for (i = 0; i < qlen; i++) {
            SW_V e = ev[i], t;
#ifdef SW_PSSM
            const SW_PROW_T r = SW_PROW(qp, i);
            SW_V x0 = SW_ADDS(diag, SW_PLOOK(r, c0));
            SW_V x1 = SW_ADDS(u0, SW_PLOOK(r, c1));
            SW_V x2 = SW_ADDS(u1, SW_PLOOK(r, c2));
            SW_V x3 = SW_ADDS(u2, SW_PLOOK(r, c3));
#else
            const SW_V *p = prof + q[i];
            SW_V x0 = SW_ADDS(diag, p[0]);
            SW_V x1 = SW_ADDS(u0, p[1 * SWGPU_NCODES]);
            SW_V x2 = SW_ADDS(u1, p[2 * SWGPU_NCODES]);
            SW_V x3 = SW_ADDS(u2, p[3 * SWGPU_NCODES]);
#endif
            vbest = SW_MAX(vbest, SW_MAX(SW_MAX(x0, x1), SW_MAX(x2, x3)));
            diag = hv[i];
            SW_CELL(x0, f0);
            SW_CELL(x1, f1);
            SW_CELL(x2, f2);
            SW_CELL(x3, f3);
            u0 = x0;
            u1 = x1;
            u2 = x2;
            hv[i] = x3;
            ev[i] = e;
        }
    }
    memcpy(out, &vbest, sizeof out);
    for (c = 0; c < SW_LANES; c++)
        best[c] = (int32_t)out[c] - SW_MIN;
}
#undef SW_CELL
