/*
 * strip_template.h - one strip of the long aligner's CPU engine (src/long/cpu_strip.c)
 * over a range of columns: Farrar's striped layout with 32-bit lanes and one
 * lazy-F sweep, as the pair kernel of pair_template.h, for local or anchored
 * regions.  Included by sw_<isa>.c after pair_template.h, with its PR_*
 * instruction macros and
 *
 *   ST_NAME            name of the static function to define
 *
 * The strip's rows r = 0 .. S*PR_LANES-1 (row r in lane r / S of vector
 * r % S; rows past the strip's end score SWGPU__STRIP_PAD against every
 * code, so they only ever feed rows below them).  Per column j, with
 * H(-1, j) and F(-1, j) the row above the strip (top_h, top_f):
 *
 *   E(r,j) = max(E(r,j-1) - e, H(r,j-1) - oe)
 *   F(r,j) = max(F(r-1,j) - e, H(r-1,j) - oe)
 *   H(r,j) = max(H(r-1,j-1) + s(r, t[j]), E(r,j), F(r,j), floor)
 *
 * with floor 0 in a local region and SWGPU__STRIP_NEG in an anchored one
 * (real values of an anchored region lie far above it: a value at the floor
 * derives from a minus-infinity boundary and stays below every real value,
 * and no value falls far enough below the floor to wrap).  The F entering
 * each lane from the lanes above is exact after a running maximum over the
 * lanes; one sweep down the segment applies it, stopping as soon as it can
 * raise nothing (in a local region: nothing above 0; an F that is not
 * above 0 cannot raise an H floored at 0, and any F below its true value
 * is a lower bound, which the engine allows off the optimal paths).
 *
 * Outputs per column: out_h[j], out_f[j] = H and F of the strip's last row
 * (F of that row itself, the max of its in-lane value and the sweep's).
 * The left column lives in the state: hp = H of the column before j0,
 * e = E entering column j0; on return they hold column j1 - 1 and E
 * entering j1.  corner = H(-1, j0 - 1) on entry, H(-1, j1 - 1) on return
 * (read before the caller publishes progress: the strip below may then
 * overwrite the row above).  With track, the best cell (first column whose
 * main-loop maximum beats best->score, topmost row in it) as the pair
 * kernel finds it.
 */

static void ST_NAME(swgpu__strip_t *b, const uint8_t *t, size_t j0, size_t j1,
                    const int32_t *top_h, const int32_t *top_f, int32_t *out_h, int32_t *out_f,
                    swgpu__pair_best_t *best)
{
    const size_t S = b->S;
    PR_V *hp = (PR_V *)b->hp;       /* hp[k]: H of column j-1 */
    PR_V *hc = (PR_V *)b->hc;       /* hc[k]: H of column j */
    PR_V *ev = (PR_V *)b->e;        /* ev[k]: E entering column j, then j+1 */
    const PR_V floor = PR_SET1(b->local ? 0 : SWGPU__STRIP_NEG);
    const PR_V neg = PR_SET1(SWGPU__STRIP_NEG);
    const PR_V voe = PR_SET1(b->gap_oe);
    const PR_V ve = PR_SET1(b->gap_e);
    const int32_t oe = b->gap_oe, ext = b->gap_e;
    const size_t lk = b->last_k;    /* the strip's last real row: lane b->last_l, vector lk */
    const int ll = b->last_l, track = b->track;
    int32_t diag = b->corner;
    int32_t lanes[PR_LANES];

    for (size_t j = j0; j < j1; j++) {
        const PR_V *p = (const PR_V *)b->prof + (size_t)t[j] * S;
        /* F entering the strip's first row (lane 0): from the row above */
        const int32_t ftop = top_f[j] - ext > top_h[j] - oe ? top_f[j] - ext : top_h[j] - oe;
        PR_V vf = PR_SHIFT(neg, ftop);
        PR_V vh = PR_SHIFT(hp[S - 1], diag); /* diagonal of row r: H(r-1, j-1) */
        PR_V vmax = floor, tt, *swap;
        int32_t flast;
        size_t k;

        diag = top_h[j];
#define ST_ROW(k)                                                  \
    do {                                                           \
        vh = PR_MAX(PR_MAX(PR_ADD(vh, p[k]), ev[k]), floor);       \
        vmax = PR_MAX(vmax, vh);                                   \
        tt = PR_SUB(vh, voe);                                      \
        vh = PR_MAX(vh, vf);                                       \
        vf = PR_MAX(PR_SUB(vf, ve), tt);                           \
        hc[k] = vh;                                                \
        ev[k] = PR_MAX(PR_SUB(ev[k], ve), PR_SUB(vh, voe));        \
        vh = hp[k];                                                \
    } while (0)
        for (k = 0; k < lk; k++) ST_ROW(k);
        PR_STOREU(lanes, vf); /* F of the last row, from its lane's chain */
        flast = lanes[ll];
        for (; k < S; k++) ST_ROW(k);
#undef ST_ROW
        /* F across lanes: vf lane l is the F entering lane l+1's first row
         * from chains that start in lane l (lane 0: or above the strip); a
         * chain from higher up crosses lane l losing S*e, so the exact F
         * entering lane l is max over l' < l of vf[l'] - (l-1-l')*S*e
         * (floored at NEG), a prefix maximum in log2(lanes) steps */
        vf = PR_MAX(PR_PREFIX(vf, (int32_t)S * ext), neg);
        for (k = 0; k < S; k++) {
            /* the F entering row k+1 that the main loop used is at least
             * H(k) - oe with H(k) before this update: the sweep stops where
             * it beats neither that nor the floor */
            PR_V hold = PR_MAX(PR_SUB(hc[k], voe), floor);
            if (k == lk) {
                PR_STOREU(lanes, vf);
                if (lanes[ll] > flast) flast = lanes[ll];
            }
            hc[k] = PR_MAX(hc[k], vf);
            ev[k] = PR_MAX(ev[k], PR_SUB(hc[k], voe));
            vf = PR_MAX(PR_SUB(vf, ve), neg);
            if (!PR_ANYGT(vf, hold)) break;
        }
        PR_STOREU(lanes, hc[lk]);
        out_h[j] = lanes[ll];
        out_f[j] = flast;
        if (track)
            pr_column_best(hc, S, vmax, j, best); /* pair_template.h */
        swap = hp;
        hp = hc;
        hc = swap;
    }
    b->hp = (int32_t *)hp; /* the last column done */
    b->hc = (int32_t *)hc;
    b->corner = diag;
}
