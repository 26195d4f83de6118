/*
 * pair_template.h - one band of query rows x a range of target columns,
 * Farrar's striped layout with 32-bit lanes and the lazy-F loop, for the
 * long-pair scorer (cpu_pair.c).  Included by sw_<isa>.c with:
 *
 *   PR_NAME            name of the static function to define
 *   PR_V, PR_LANES     vector type, 32-bit lanes per vector
 *   PR_SET1(x), PR_ADD, PR_SUB, PR_MAX   (32-bit lanes, wrapping add/sub)
 *   PR_SHIFT(v, x)     lanes moved up by one (lane l+1 gets lane l), x in lane 0
 *   PR_ANYGT(a, b)     nonzero if any lane of a > the same lane of b
 *   PR_EQMASK(a, b)    bit l set if lane l of a == lane l of b
 *
 * Layout: band row r (0 <= r < S * PR_LANES) is lane r / S of vector r % S,
 * so a vector's lanes are S rows apart and the vertical (F) dependency runs
 * along the vectors of a lane.  Per column j the main loop computes
 *   H = max(0, Hdiag + s, E, F),  E' = max(E - e, H - oe),  F' = max(F - e, H - oe)
 * with F only chained inside each lane's segment; the lazy-F loop then
 * carries F from the bottom of each segment into the next lane until it can
 * no longer raise any H (Farrar 2007; the stop test compares with H before
 * the loop raised it, which keeps open = 0 exact).  The column maximum is taken over the
 * main-loop H values: a value raised by the lazy loop comes from a gap that
 * starts at a higher cell of the same column, so it is never the column's
 * strict maximum nor its first (topmost) occurrence.
 */

static void PR_NAME(swgpu__pair_band_t *b, const uint8_t *t, size_t j0, size_t j1,
                    const int32_t *top_h, const int32_t *top_f, int32_t *out_h, int32_t *out_f,
                    swgpu__pair_best_t *best)
{
    const size_t S = b->S;
    PR_V *hp = (PR_V *)b->hp;       /* hp[k]: H of column j-1 */
    PR_V *hc = (PR_V *)b->hc;       /* hc[k]: H of column j */
    PR_V *ev = (PR_V *)b->e;        /* ev[k]: E entering column j, then j+1 */
    const PR_V zero = PR_SET1(0);
    const PR_V neg = PR_SET1(SWGPU__PAIR_NEG);
    const PR_V voe = PR_SET1(b->gap_oe);
    const PR_V ve = PR_SET1(b->gap_e);
    const size_t lk = b->last_k;    /* the band's last real row: lane b->last_l, vector lk */
    const int ll = b->last_l;
    int32_t lanes[PR_LANES];

    for (size_t j = j0; j < j1; j++) {
        const PR_V *p = (const PR_V *)b->prof + (size_t)t[j] * S;
        /* F entering the band's top row comes from the band above (lane 0) */
        PR_V vf = PR_SHIFT(neg, top_f ? top_f[j] : SWGPU__PAIR_NEG);
        /* diagonal of row r: H(r-1, j-1); for r = 0 the band above's last row */
        PR_V vh = PR_SHIFT(hp[S - 1], (top_h && j > 0) ? top_h[j - 1] : 0);
        PR_V vmax = zero, tt, *swap;
        int32_t flast = SWGPU__PAIR_NEG, colmax;
        size_t k;

        for (k = 0; k < S; k++) {
            vh = PR_ADD(vh, p[k]);
            vh = PR_MAX(vh, ev[k]);
            vh = PR_MAX(vh, vf);
            vh = PR_MAX(vh, zero);
            vmax = PR_MAX(vmax, vh);
            hc[k] = vh;
            tt = PR_SUB(vh, voe);
            ev[k] = PR_MAX(PR_SUB(ev[k], ve), tt);
            vf = PR_MAX(PR_SUB(vf, ve), tt);
            vh = hp[k];
            if (k == lk) { /* F entering the row below the band's last row */
                memcpy(lanes, &vf, sizeof lanes);
                flast = lanes[ll];
            }
        }
        /* lazy F: at most PR_LANES passes over the segment */
        for (int pass = 0; pass < PR_LANES; pass++) {
            vf = PR_SHIFT(vf, SWGPU__PAIR_NEG);
            for (k = 0; k < S; k++) {
                /* the F entering row k+1 that the main loop used is at
                 * least H(k) - oe with H(k) before this update: the chain
                 * stops where it cannot beat that */
                PR_V hold = PR_SUB(hc[k], voe);
                vh = PR_MAX(hc[k], vf);
                hc[k] = vh;
                ev[k] = PR_MAX(ev[k], PR_SUB(vh, voe));
                vf = PR_MAX(PR_SUB(vf, ve), neg);
                if (k == lk) {
                    memcpy(lanes, &vf, sizeof lanes);
                    if (lanes[ll] > flast) flast = lanes[ll];
                }
                if (!PR_ANYGT(vf, hold)) goto lazy_done;
            }
        }
    lazy_done:
        memcpy(lanes, &hc[lk], sizeof lanes);
        if (out_h) {
            out_h[j] = lanes[ll];
            out_f[j] = lanes[ll] - b->gap_oe > flast ? lanes[ll] - b->gap_oe : flast;
        }
        memcpy(lanes, &vmax, sizeof lanes);
        colmax = lanes[0];
        for (int l = 1; l < PR_LANES; l++)
            if (lanes[l] > colmax) colmax = lanes[l];
        if (colmax > best->score) {
            /* first column with this score: find its topmost row */
            const PR_V vc = PR_SET1(colmax);
            uint32_t found = 0, first[PR_LANES];
            for (k = 0; k < S && !(found & 1); k++) {
                uint32_t m = PR_EQMASK(hc[k], vc) & ~found;
                for (int l = 0; l < PR_LANES; l++)
                    if (m >> l & 1) first[l] = (uint32_t)k;
                found |= m;
            }
            int l0 = __builtin_ctz(found); /* colmax occurs: found != 0 */
            best->score = colmax;
            best->j = (int64_t)j;
            best->r = (int64_t)((size_t)l0 * S + first[l0]);
        }
        swap = hp;
        hp = hc;
        hc = swap;
    }
    b->hp = (int32_t *)hp; /* the last column done */
    b->hc = (int32_t *)hc;
}
