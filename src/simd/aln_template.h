/*
 * aln_template.h - the alignment kernel of aln_simd.h for one instruction
 * set, included by aln_<isa>.c with:
 *
 *   AL_NAME           name of the static function to define
 *   AL_V, AL_T, AL_LANES  vector type, lane type (int32_t or int16_t), lanes
 *   AL_NEG            minus infinity of the lanes (SWGPU__ALN_NEG, INT16_MIN)
 *   AL_SET1(x), AL_ADD, AL_SUB, AL_MAX, AL_CMPGT, AL_CMPEQ, AL_AND, AL_OR,
 *                     (16-bit: AL_ADD, AL_SUB saturating)
 *   AL_ANDNOT(a, b)   (~a & b)
 *   AL_SHIFT(v, x)    lanes moved up by one (lane l+1 gets lane l), x in lane 0
 *   AL_SHIFTZ(v, d)   lanes moved up by d (a literal 1, 2, 4 or 8), zeros in
 *                     lanes 0..d-1 (all zeros when d >= AL_LANES)
 *   AL_ANYGT(a, b)    nonzero if any lane of a > the same lane of b
 *   AL_EQMASK(a, b), AL_LANEBITS  the AL_LANEBITS bits of lane l set if lane
 *                     l of a == lane l of b
 *   AL_STOREU(p, v)   store to AL_T p[AL_LANES]
 *   AL_LOADU(p)
 *   AL_BYTES(p, v)    store the low byte of each lane to uint8_t p[AL_LANES]
 *   AL_LOOKUP(o, c, tab)  *o = the lanes tab[c[l]] (c: AL_LANES codes < 32,
 *                     tab: 32 int8), sign-extended to the lanes
 *
 * 16-bit lanes are exact when swgpu__aln_fits16 holds: every real value
 * then lies within +-12000, and anything derived from INT16_MIN stays below
 * them (saturating arithmetic never wraps).
 *
 * Layout: column i = p + 1 (p = 0..S*L-1) is lane p / S of vector p % S;
 * columns past w are padding (profile NEG: their M never reaches a real
 * value, and the F chain only runs towards higher p, so they feed nothing
 * back).  Per row the main loop computes E, M, H and F with F chained only
 * inside each lane; the F entering each lane from the lanes below is then
 * exact after a running maximum over the lanes, and one sweep down the
 * segment applies it, stopping once it can raise nothing: if the swept F
 * entering column k+1 is at most H(k) - oe, with H(k) the main loop's
 * value, it is at most the main loop's F(k+1) >= max(x(k), F(k)) - oe, and
 * so for every later column.  A raised H (= F) gives H - oe < F - ge, so it
 * opens no better F, and E of a row only uses H of the row above: after the
 * sweep H, E, F (and M, never changed) are the exact values.
 */

#ifndef SWEEP_STEP
#define SWEEP_STEP 4
#endif

static void AL_NAME(swgpu__aln_job_t *jb)
{
    const size_t w = jb->w, h = jb->h, L = AL_LANES, S = (w + L - 1) / L, SL = S * L;
    const size_t R = SL + 1; /* dir row stride */
    const int mode = jb->mode;
    const int32_t ge = jb->ge, oe = jb->go + jb->ge;
    const AL_V vneg = AL_SET1(AL_NEG), vge = AL_SET1(ge), voe = AL_SET1(oe);
    AL_V *hp = (AL_V *)jb->work, *hc = hp + S, *ev = hc + S, *mb = ev + S, *fb = mb + S;
    AL_T *prof = (AL_T *)(fb + S);
    uint8_t *xs = (uint8_t *)(prof + SWGPU_NCODES * SL);
    int slot[SWGPU_NCODES];
    int nslots = 0;
    int32_t h0 = 0, e0 = jb->e0, lbest = 0;
    AL_T lanes[AL_LANES], fin[AL_LANES];

    /* the F entering each lane (see below) as a running maximum in log2(L)
     * vector steps: step i adds the lanes 2^i below, each 2^i*S*ge lower;
     * exact (the same values as one lane at a time) while the largest
     * decay, (L-1)*S*ge, stays far from the lanes' limits */
    AL_V pf_fill[4], pf_dec[4];
    const int pf_ok = (int64_t)(L - 1) * (int64_t)S * ge <= (sizeof(AL_T) == 2 ? 12000 : (1 << 28));
    for (int i = 0; i < 4; i++) {
        const size_t d = (size_t)1 << i;
        for (size_t l = 0; l < L; l++)
            lanes[l] = l < d ? (AL_T)AL_NEG : 0;
        pf_fill[i] = AL_LOADU(lanes);
        pf_dec[i] = AL_SET1(pf_ok && d < L ? (int32_t)(d * S) * ge : 0);
    }
    jb->S = S;
    jb->L = L;
    jb->found_i = jb->found_r = 0;
    jb->over = 0;
    for (int c = 0; c < SWGPU_NCODES; c++)
        slot[c] = -1;
    /* the query codes in striped order (padding: code 0, fixed below) */
    for (size_t l = 0; l < L && !jb->xrows; l++) {
        size_t p = l * S;
        for (size_t k = 0; k < S; k++, p++)
            xs[k * L + l] = p < w ? (uint8_t)(jb->x[p] & (SWGPU_NCODES - 1)) : 0;
    }
    /* striped score rows of the codes that occur in y: a table lookup per
     * vector when the row's scores fit in 8 bits, else one by one; with
     * per-column rows (a PSSM) each column's score of the code */
    for (size_t r = 0; r < h; r++) {
        int c = jb->y[r] & (SWGPU_NCODES - 1), small = 1;
        int8_t tab[SWGPU_NCODES];
        if (slot[c] >= 0)
            continue;
        slot[c] = nslots;
        AL_T *pr = prof + (size_t)nslots * SL;
        const int32_t *sr = jb->st + (size_t)c * SWGPU_NCODES;
        nslots++;
        if (jb->xrows) {
            for (size_t l = 0; l < L; l++) {
                size_t p = l * S;
                for (size_t k = 0; k < S; k++, p++)
                    pr[k * L + l] = p < w ? (AL_T)jb->xrows[p * SWGPU_NCODES + c] : AL_NEG;
            }
            continue;
        }
        for (int a = 0; a < SWGPU_NCODES; a++) {
            small &= sr[a] >= INT8_MIN && sr[a] <= INT8_MAX;
            tab[a] = (int8_t)sr[a];
        }
        if (small) {
            for (size_t k = 0; k < S; k++)
                AL_LOOKUP((AL_V *)pr + k, xs + k * L, tab);
        } else {
            for (size_t k = 0; k < SL; k++)
                pr[k] = (AL_T)sr[xs[k]];
        }
        for (size_t p = w; p < SL; p++)
            pr[(p % S) * L + p / S] = AL_NEG;
    }
    /* row 0: H(i,0) = -(go + i*ge), E = NEG */
    {
        AL_T *hpt = (AL_T *)hp, *evt = (AL_T *)ev;
        for (size_t l = 0; l < L; l++) {
            size_t p = l * S;
            for (size_t k = 0; k < S; k++, p++) {
                int64_t v = -((int64_t)jb->go + (int64_t)(p + 1) * ge);
                hpt[k * L + l] = mode == SWGPU__ALN_LOCAL ? 0 : (AL_T)(v < AL_NEG ? AL_NEG : v);
                evt[k * L + l] = AL_NEG;
            }
        }
    }
    if (mode == SWGPU__ALN_BASE) {
        uint8_t *d = jb->dir;
        d[0] = SWGPU__TB_M;
        for (size_t p = 0; p < w; p++)
            d[1 + (p % S) * L + p / S] = SWGPU__TB_I | (p >= 1 ? SWGPU__TB_IEXT : 0);
    }

    for (size_t r = 0; r < h; r++) {
        const AL_V *P = (const AL_V *)(prof + (size_t)slot[jb->y[r] & (SWGPU_NCODES - 1)] * SL);
        const int32_t h0old = h0;
        AL_V vf, vh, vmmax = vneg, *swap;
        if (mode != SWGPU__ALN_LOCAL) { /* LOCAL: H(0,r) = 0 */
            int32_t de = e0 - ge, dop = h0 - oe;
            e0 = dop >= de ? dop : de;
            h0 = e0;
            if (mode == SWGPU__ALN_BASE)
                jb->dir[(r + 1) * R] = SWGPU__TB_D | (dop >= de ? 0 : SWGPU__TB_DEXT);
        }
        vf = AL_SHIFT(vneg, h0 - oe);
        vh = AL_SHIFT(hp[S - 1], h0old);
        if (mode == SWGPU__ALN_BASE) {
            for (size_t k = 0; k < S; k++) {
                AL_V e = AL_MAX(AL_SUB(ev[k], vge), AL_SUB(hp[k], voe));
                AL_V m = AL_ADD(vh, P[k]);
                AL_V x = AL_MAX(m, e);
                mb[k] = m;
                fb[k] = vf;
                hc[k] = AL_MAX(x, vf);
                vf = AL_MAX(AL_SUB(vf, vge), AL_SUB(x, voe));
                vh = hp[k];
                ev[k] = e;
            }
        } else if (mode == SWGPU__ALN_LOCAL) {
            const AL_V zero = AL_SET1(0);
            for (size_t k = 0; k < S; k++) {
                AL_V e = AL_MAX(AL_SUB(ev[k], vge), AL_SUB(hp[k], voe));
                AL_V x = AL_MAX(AL_MAX(AL_ADD(vh, P[k]), e), zero);
                AL_V hv = AL_MAX(x, vf);
                vmmax = AL_MAX(vmmax, hv);
                hc[k] = hv;
                vf = AL_MAX(AL_SUB(vf, vge), AL_SUB(x, voe));
                vh = hp[k];
                ev[k] = e;
            }
        } else if (mode == SWGPU__ALN_START) {
            for (size_t k = 0; k < S; k++) {
                AL_V e = AL_MAX(AL_SUB(ev[k], vge), AL_SUB(hp[k], voe));
                AL_V m = AL_ADD(vh, P[k]);
                AL_V x = AL_MAX(m, e);
                vmmax = AL_MAX(vmmax, m);
                hc[k] = AL_MAX(x, vf);
                vf = AL_MAX(AL_SUB(vf, vge), AL_SUB(x, voe));
                vh = hp[k];
                ev[k] = e;
            }
        } else {
            for (size_t k = 0; k < S; k++) {
                AL_V e = AL_MAX(AL_SUB(ev[k], vge), AL_SUB(hp[k], voe));
                AL_V x = AL_MAX(AL_ADD(vh, P[k]), e);
                hc[k] = AL_MAX(x, vf);
                vf = AL_MAX(AL_SUB(vf, vge), AL_SUB(x, voe));
                vh = hp[k];
                ev[k] = e;
            }
        }
        /* F across lanes: lane l's vf is the F entering lane l+1 from chains
         * that start in lane l (lane 0: or at column 0); a chain from lower
         * lanes crosses lane l losing S*ge */
        if (L > 1) {
            if (pf_ok) {
                /* fin[l] = max(NEG, max over k < l of vf[k] - (l-1-k)*S*ge):
                 * the lanes' fill is NEG, which the decays only lower (or
                 * saturate at), so no step adds a term above the true one */
                AL_V z = AL_SHIFT(vf, AL_NEG);
                z = AL_MAX(z, AL_SUB(AL_OR(AL_SHIFTZ(z, 1), pf_fill[0]), pf_dec[0]));
                if (L > 2)
                    z = AL_MAX(z, AL_SUB(AL_OR(AL_SHIFTZ(z, 2), pf_fill[1]), pf_dec[1]));
                if (L > 4)
                    z = AL_MAX(z, AL_SUB(AL_OR(AL_SHIFTZ(z, 4), pf_fill[2]), pf_dec[2]));
                if (L > 8)
                    z = AL_MAX(z, AL_SUB(AL_OR(AL_SHIFTZ(z, 8), pf_fill[3]), pf_dec[3]));
                vf = AL_MAX(z, vneg);
            } else {
                int64_t run = AL_NEG;
                AL_STOREU(lanes, vf);
                for (size_t l = 1; l < L; l++) {
                    int64_t prev = run - (int64_t)S * ge;
                    run = lanes[l - 1] > prev ? lanes[l - 1] : prev;
                    if (run < AL_NEG)
                        run = AL_NEG;
                    fin[l] = (AL_T)run;
                }
                fin[0] = AL_NEG;
                vf = AL_LOADU(fin);
            }
            /* the stop test once every SWEEP_STEP columns (stopping later
             * is always exact; the test and its mispredicted exit cost more
             * than the few extra columns: in a global pass the F entering
             * the lanes right of the diagonal often wins for the whole
             * segment) */
            for (size_t k = 0; k < S;) {
                size_t end = k + SWEEP_STEP < S ? k + SWEEP_STEP : S;
                AL_V hold = vneg;
                if (mode == SWGPU__ALN_BASE) {
                    for (; k < end; k++) {
                        hold = AL_SUB(hc[k], voe);
                        hc[k] = AL_MAX(hc[k], vf);
                        fb[k] = AL_MAX(fb[k], vf);
                        vf = AL_SUB(vf, vge);
                    }
                } else {
                    for (; k < end; k++) {
                        hold = AL_SUB(hc[k], voe);
                        hc[k] = AL_MAX(hc[k], vf);
                        vf = AL_SUB(vf, vge);
                    }
                }
                if (!AL_ANYGT(vf, hold))
                    break;
            }
        }
        if (mode == SWGPU__ALN_LOCAL && AL_ANYGT(vmmax, AL_SET1(lbest))) {
            /* the row maximum over the main loop's H: a value the sweep
             * raised is F from a higher H of the row, never a strict row
             * maximum; its first cell is looked up in the exact row (only
             * in a row where some lane beats the best so far) */
            int32_t mx;
            AL_STOREU(lanes, vmmax);
            mx = lanes[0];
            for (size_t l = 1; l < L; l++)
                mx = lanes[l] > mx ? lanes[l] : mx;
            if (mx > lbest) {
                const AL_V vs = AL_SET1(mx);
                size_t bestp = SL;
                for (size_t k = 0; k < S; k++) {
                    uint32_t msk = AL_EQMASK(hc[k], vs);
                    while (msk) {
                        size_t l = (size_t)__builtin_ctz(msk) / AL_LANEBITS;
                        size_t p = l * S + k;
                        msk &= ~(((1u << AL_LANEBITS) - 1) << (l * AL_LANEBITS));
                        if (p < bestp)
                            bestp = p;
                    }
                }
                lbest = mx;
                jb->found_i = (int64_t)bestp + 1;
                jb->found_r = (int64_t)r + 1;
            }
        }
        if (mode == SWGPU__ALN_START) {
            int32_t mx;
            AL_STOREU(lanes, vmmax);
            mx = lanes[0];
            for (size_t l = 1; l < L; l++)
                mx = lanes[l] > mx ? lanes[l] : mx;
            if (mx > jb->score) {
                jb->over = mx;
                return;
            }
            if (mx == jb->score) {
                const AL_V vs = AL_SET1(jb->score);
                size_t bestp = SL;
                AL_V d = AL_SHIFT(hp[S - 1], h0old);
                for (size_t k = 0; k < S; k++) {
                    uint32_t msk = AL_EQMASK(AL_ADD(d, P[k]), vs);
                    d = hp[k];
                    while (msk) {
                        size_t l = (size_t)__builtin_ctz(msk) / AL_LANEBITS;
                        size_t p = l * S + k;
                        msk &= ~(((1u << AL_LANEBITS) - 1) << (l * AL_LANEBITS));
                        if (p < bestp)
                            bestp = p;
                    }
                }
                jb->found_i = (int64_t)bestp + 1;
                jb->found_r = (int64_t)r + 1;
                return;
            }
        }
        if (mode == SWGPU__ALN_BASE) {
            /* bits from the exact values: H came from M if H == M, else from
             * F (I) if H == F, else from E (D); F extended if F > H(i-1,r) - oe,
             * E extended if E > H(i,r-1) - oe (mm_base's >= tests) */
            const AL_V two = AL_SET1(2), b4 = AL_SET1(SWGPU__TB_IEXT), b8 = AL_SET1(SWGPU__TB_DEXT);
            uint8_t *d = jb->dir + (r + 1) * R + 1;
            AL_V hl = AL_SHIFT(hc[S - 1], h0);
            for (size_t k = 0; k < S; k++) {
                AL_V hv = hc[k];
                AL_V st = AL_ANDNOT(AL_CMPEQ(hv, mb[k]), AL_ADD(two, AL_CMPEQ(hv, fb[k])));
                AL_V ie = AL_AND(AL_CMPGT(fb[k], AL_SUB(hl, voe)), b4);
                AL_V de = AL_AND(AL_CMPGT(ev[k], AL_SUB(hp[k], voe)), b8);
                AL_BYTES(d + k * L, AL_OR(st, AL_OR(ie, de)));
                hl = hv;
            }
        }
        swap = hp;
        hp = hc;
        hc = swap;
    }
    /* hp: row h */
    if (mode == SWGPU__ALN_LOCAL)
        jb->best = lbest;
    if (mode == SWGPU__ALN_PASS) {
        const AL_T *hpt = (const AL_T *)hp, *evt = (const AL_T *)ev;
        jb->CC[0] = h0;
        jb->DD[0] = e0;
        for (size_t l = 0; l < L; l++) {
            size_t p = l * S;
            for (size_t k = 0; k < S && p < w; k++, p++) {
                jb->CC[p + 1] = hpt[k * L + l];
                jb->DD[p + 1] = evt[k * L + l];
            }
        }
    } else if (mode == SWGPU__ALN_BASE) {
        size_t p = w - 1, at = (p % S) * L + p / S;
        jb->lastM = ((const AL_T *)mb)[at];
        jb->lastI = ((const AL_T *)fb)[at];
        jb->lastD = ((const AL_T *)ev)[at];
    }
}
