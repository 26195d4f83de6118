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
 *   PR_STOREU(p, v)    store the lanes of v to int32_t p[PR_LANES]
 *   PR_LOADU(p)        the vector of int32_t p[PR_LANES]
 *
 * Layout: band row r (0 <= r < S * PR_LANES) is lane r / S of vector r % S,
 * so a vector's lanes are S rows apart and the vertical (F) dependency runs
 * along the vectors of a lane.  Per column j the main loop computes
 *   H = max(0, Hdiag + s, E, F),  E' = max(E - e, H - oe),  F' = max(F - e, H - oe)
 * with F only chained inside each lane's segment.  The F entering each
 * lane from the lanes above is then exact after a running maximum over the
 * lanes (a chain crossing a whole segment loses S*e), and one sweep down
 * the segment applies it, stopping as soon as it can raise no H (Farrar's
 * lazy-F loop, but never more than one pass: self-alignments and other
 * high-scoring pairs, whose F chains cross many lanes, cost at most two
 * passes instead of up to PR_LANES + 1).  The sweep's stop test compares
 * with H before the sweep raised it, which keeps open = 0 exact.  The column maximum is taken over the
 * main-loop H values: a value raised by the lazy loop comes from a gap that
 * starts at a higher cell of the same column, so it is never the column's
 * strict maximum nor its first (topmost) occurrence.
 */

/*
 * The best cell of column j when the column's main-loop maximum (vmax) beats
 * best->score: that score, column j, and its topmost row among hc[0..S-1]
 * (row r is lane r / S of vector r % S).  No row holding the maximum means
 * a gap from the rows above raised that cell past it, so a cell above scores
 * more and this best never wins the merge; its row does not matter.  Also
 * called by strip_template.h, which each ISA's file includes after this one.
 */
static inline void pr_column_best(const PR_V *hc, size_t S, PR_V vmax, size_t j,
                                  swgpu__pair_best_t *best)
{
    int32_t lanes[PR_LANES], colmax;
    uint32_t found = 0, first[PR_LANES];
    if (!PR_ANYGT(vmax, PR_SET1(best->score)))
        return;
    PR_STOREU(lanes, vmax);
    colmax = lanes[0];
    for (int l = 1; l < PR_LANES; l++)
        if (lanes[l] > colmax) colmax = lanes[l];
    const PR_V vc = PR_SET1(colmax);
    for (size_t k = 0; k < S && !(found & 1); k++) {
        uint32_t m = PR_EQMASK(hc[k], vc) & ~found;
        if (!m) continue;
        found |= m;
        for (; m; m &= m - 1) first[__builtin_ctz(m)] = (uint32_t)k;
    }
    best->score = colmax;
    best->j = (int64_t)j;
    best->r = found ? (int64_t)((size_t)__builtin_ctz(found) * S + first[__builtin_ctz(found)]) : 0;
}

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
    int32_t lanes[PR_LANES], fin[PR_LANES];

    for (size_t j = j0; j < j1; j++) {
        const PR_V *p = (const PR_V *)b->prof + (size_t)t[j] * S;
        /* F entering the band's top row comes from the band above (lane 0) */
        PR_V vf = PR_SHIFT(neg, top_f ? top_f[j] : SWGPU__PAIR_NEG);
        /* diagonal of row r: H(r-1, j-1); for r = 0 the band above's last row
         * (at j = 0: the corner, 0 unless the columns are a part's) */
        PR_V vh = PR_SHIFT(hp[S - 1], j > 0 ? (top_h ? top_h[j - 1] : 0) : b->corner);
        PR_V vmax = zero, tt, *swap;
        int32_t flast = SWGPU__PAIR_NEG;
        size_t k;

        /* vh: H without the vertical gap; F is chained with
         * F' = max(F - e, vh - oe) (the F term of H - oe is below F - e),
         * so the chain through vf is two operations long */
#define PR_ROW(k)                                                  \
    do {                                                           \
        vh = PR_MAX(PR_MAX(PR_ADD(vh, p[k]), ev[k]), zero);        \
        vmax = PR_MAX(vmax, vh);                                   \
        tt = PR_SUB(vh, voe);                                      \
        vh = PR_MAX(vh, vf);                                       \
        vf = PR_MAX(PR_SUB(vf, ve), tt);                           \
        hc[k] = vh;                                                \
        ev[k] = PR_MAX(PR_SUB(ev[k], ve), PR_SUB(vh, voe));        \
        vh = hp[k];                                                \
    } while (0)
        for (k = 0; k <= lk; k++) PR_ROW(k);
        PR_STOREU(lanes, vf); /* F entering the row below the band's last row */
        flast = lanes[ll];
        for (; k < S; k++) PR_ROW(k);
#undef PR_ROW
        /* F across lanes.  vf lane l is the F entering lane l+1's first
         * row from chains that start in lane l (lane 0: or above the band);
         * a chain from higher up crosses lane l losing S*e, so the exact F
         * entering lane l+1 is a running maximum over the lanes */
        {
            int64_t run = SWGPU__PAIR_NEG;
            PR_STOREU(lanes, vf);
            for (int l = 1; l < PR_LANES; l++) {
                int64_t prev = run - (int64_t)S * b->gap_e;
                run = lanes[l - 1] > prev ? lanes[l - 1] : prev;
                if (run < SWGPU__PAIR_NEG) run = SWGPU__PAIR_NEG;
                fin[l] = (int32_t)run;
            }
            fin[0] = SWGPU__PAIR_NEG; /* lane 0: the band's top F, already used */
            vf = PR_LOADU(fin);
        }
        /* one sweep down the segment with those F values (Farrar's lazy-F
         * loop, but one pass: the cross-lane F is exact already) */
        for (k = 0; k < S; k++) {
            /* the F entering row k+1 that the main loop used is at least
             * H(k) - oe with H(k) before this update, and an F <= 0 cannot
             * raise any H: the chain stops where it beats neither */
            PR_V hold = PR_MAX(PR_SUB(hc[k], voe), zero);
            vh = PR_MAX(hc[k], vf);
            hc[k] = vh;
            ev[k] = PR_MAX(ev[k], PR_SUB(vh, voe));
            vf = PR_MAX(PR_SUB(vf, ve), neg);
            if (k == lk) {
                PR_STOREU(lanes, vf);
                if (lanes[ll] > flast) flast = lanes[ll];
            }
            if (!PR_ANYGT(vf, hold)) break;
        }
        PR_STOREU(lanes, hc[lk]);
        if (out_h) {
            out_h[j] = lanes[ll];
            out_f[j] = lanes[ll] - b->gap_oe > flast ? lanes[ll] - b->gap_oe : flast;
        }
        pr_column_best(hc, S, vmax, j, best); /* the first column with a new best */
        swap = hp;
        hp = hc;
        hc = swap;
    }
    b->hp = (int32_t *)hp; /* the last column done */
    b->hc = (int32_t *)hc;
}
