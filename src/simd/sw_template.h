/*
 * sw_template.h - body of one inter-sequence batch kernel (SWIPE-style),
 * included by sw_<isa>.c once per lane width with these macros defined:
 *
 *   SW_NAME          name of the static function to define
 *   SW_V             vector type;  SW_T  lane type (int8_t or int16_t)
 *   SW_LANES         lanes per vector
 *   SW_SET1(x)       broadcast
 *   SW_ADDS, SW_SUBS signed saturating add / subtract
 *   SW_MAX           signed maximum
 *   SW_PROFILE(prof, col, qp)
 *                    for each letter a of qp->letters: prof[a] = the
 *                    scores of a against the SW_LANES codes at col
 *
 * Scores are held with the floor of the signed lane type as zero ("biased
 * by the lane minimum"): a lane value v means the score v - SW_MIN.  Signed
 * saturating arithmetic then clamps every H at 0 for free, which is the
 * local-alignment max(0, ...), and clamps at the top, where a lane reaching
 * the lane maximum is reported as saturated.
 *
 * Recurrences for query row i and database column j (gap of length k costs
 * o + k*e; oe = o + e):
 *   E[i][j+1] = max(E[i][j] - e, H[i][j] - oe)    gap along the database
 *   F[i+1][j] = max(F[i][j] - e, H[i][j] - oe)    gap along the query
 *   H[i][j]   = max(0, H[i-1][j-1] + s(q[i], d[j]), E[i][j], F[i][j])
 * E and F are floored at 0 by the saturation too, which cannot change any H
 * (H >= 0 anyway).  The best score is max over all cells of
 * H[i-1][j-1] + s(q[i], d[j]): E and F only carry values below an earlier H.
 *
 * The kernel walks SWGPU__COLS database columns at a time down the whole
 * query, keeping per column the F value and the H of the row above in
 * registers; per query row it reads and writes one H and one E vector
 * (the values at the block's left/right edge).
 */

static void SW_NAME(const swgpu__sw_query_t *qp, const uint8_t *cols, size_t ncols,
                    void *work, int32_t *best)
{
    const size_t qlen = qp->qlen;
    SW_V *hv = (SW_V *)work;           /* hv[i]: H of row i in the last column done */
    SW_V *ev = hv + qlen;              /* ev[i]: E entering row i of the next column */
    SW_V *prof = ev + qlen;            /* prof[c * 32 + a]: scores of letter a, column c */
    const SW_V zero = SW_SET1(SW_MIN); /* score 0 */
    const SW_V voe = SW_SET1(qp->gap_oe);
    const SW_V ve = SW_SET1(qp->gap_e);
    SW_V vbest = zero;
    SW_T out[SW_LANES];
    size_t i, j;
    int c;

    for (i = 0; i < qlen; i++) {
        hv[i] = zero;
        ev[i] = zero;
    }
    for (j = 0; j < ncols; j += SWGPU__COLS) {
        for (c = 0; c < SWGPU__COLS; c++)
            SW_PROFILE(prof + c * SWGPU_NCODES, cols + (j + (size_t)c) * SW_LANES, qp);
        /* f_c: F entering row i of column j+c; u_c: H of row i-1, column j+c;
         * diag: H of row i-1, column j-1 (the block's left edge) */
        SW_V f0 = zero, f1 = zero, f2 = zero, f3 = zero;
        SW_V u0 = zero, u1 = zero, u2 = zero, diag = zero;
        for (i = 0; i < qlen; i++) {
            const SW_V *p = prof + qp->q[i];
            SW_V hl = hv[i]; /* H of row i, column j-1 */
            SW_V e = ev[i];  /* E entering row i, column j */
            SW_V h0, h1, h2, h3, t;

            h0 = SW_ADDS(diag, p[0]);
            vbest = SW_MAX(vbest, h0);
            h0 = SW_MAX(h0, e);
            h0 = SW_MAX(h0, f0);
            diag = hl;
            t = SW_SUBS(h0, voe);
            e = SW_MAX(SW_SUBS(e, ve), t);
            f0 = SW_MAX(SW_SUBS(f0, ve), t);

            h1 = SW_ADDS(u0, p[SWGPU_NCODES]);
            vbest = SW_MAX(vbest, h1);
            h1 = SW_MAX(h1, e);
            h1 = SW_MAX(h1, f1);
            u0 = h0;
            t = SW_SUBS(h1, voe);
            e = SW_MAX(SW_SUBS(e, ve), t);
            f1 = SW_MAX(SW_SUBS(f1, ve), t);

            h2 = SW_ADDS(u1, p[2 * SWGPU_NCODES]);
            vbest = SW_MAX(vbest, h2);
            h2 = SW_MAX(h2, e);
            h2 = SW_MAX(h2, f2);
            u1 = h1;
            t = SW_SUBS(h2, voe);
            e = SW_MAX(SW_SUBS(e, ve), t);
            f2 = SW_MAX(SW_SUBS(f2, ve), t);

            h3 = SW_ADDS(u2, p[3 * SWGPU_NCODES]);
            vbest = SW_MAX(vbest, h3);
            h3 = SW_MAX(h3, e);
            h3 = SW_MAX(h3, f3);
            u2 = h2;
            t = SW_SUBS(h3, voe);
            e = SW_MAX(SW_SUBS(e, ve), t);
            f3 = SW_MAX(SW_SUBS(f3, ve), t);

            hv[i] = h3;
            ev[i] = e;
        }
    }
    memcpy(out, &vbest, sizeof out);
    for (c = 0; c < SW_LANES; c++)
        best[c] = (int32_t)out[c] - SW_MIN;
}
