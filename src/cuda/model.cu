/*
 * model.cu - the host model of the group kernels (group.cu): the same cell
 * code (cells.cuh) run on the CPU, lanes in lock-step and the shuffle by
 * copies, for the tests that compare every kernel configuration with the
 * reference without a GPU (swgpu__cu_emulate, swgpu__cu_emulate_qp).
 */
#include "common.cuh"
#include "cells.cuh"

#include <vector>

enum { IB = SWGPU_CU_INTRA_THREADS, IR = SWGPU_CU_INTRA_R };

/* 1 if cfg is one of the kernel's configurations (list: its table) */
static int has_cfg(const swgpu_cu_cfg_t *(*list)(int *), swgpu_cu_cfg_t cfg)
{
    int n;
    const swgpu_cu_cfg_t *c = list(&n);
    for (int i = 0; i < n; i++)
        if (c[i].G == cfg.G && c[i].R == cfg.R && c[i].P == cfg.P)
            return 1;
    return 0;
}

/* one group job on the CPU: lanes in lock-step, the shuffle by copies */
template <class L, int R, int SH = 0> /* SH: 1 shifted form, 2 carried form */
static void emu_job(int G, const int16_t *tprof, int qlen, const uint32_t *res,
                    const uint32_t *woff, const uint32_t *len, uint32_t ka, uint32_t kb, int two,
                    int oe, int ext, int32_t *scores)
{
    typedef typename L::V V;
    const int W = G * R, ntiles = (qlen + W - 1) / W;
    uint32_t la = len[ka], lb = two ? len[kb] : 0, wa = woff[ka], wb = two ? woff[kb] : 0;
    const int Lr = (int)(la > lb ? la : lb);
    std::vector<SwLane<L, R>> ln(G);
    const uint32_t nk = 0u - (uint32_t)oe * 0x10001u;
    std::vector<V> oh(G), oe_(G);
    std::vector<V> bh(Lr + 1), be(Lr + 1);
    for (int t = 0; t < G; t++)
        ln[t].M = 0;
    for (int tile = 0; tile < ntiles; tile++) {
        const int16_t *prof = tprof + (size_t)tile * SWGPU_CU_NRES * W;
        for (int t = 0; t < G; t++) {
            if constexpr (SH == 2)
                ln[t].start_sh2(L::splat(2 * oe), nk, 1u);
            else if constexpr (SH == 1)
                ln[t].start_sh(L::splat(oe));
            else
                ln[t].start(oe);
        }
        for (int s = 0; s < Lr + G - 1; s++) {
            for (int t = 0; t < G; t++) {
                oh[t] = ln[t].h;
                oe_[t] = ln[t].e;
            }
            for (int t = 0; t < G; t++) {
                int j = s - t;
                if (j < 0 || j >= Lr)
                    continue;
                V hr, er;
                if (t > 0) {
                    hr = oh[t - 1];
                    er = oe_[t - 1];
                } else if (tile > 0) {
                    hr = bh[j];
                    er = be[j];
                } else {
                    hr = SH ? L::splat(SH * oe) : 0;
                    er = SH == 2 ? L::splat(2 * oe) : 0;
                }
                ln[t].h = hr;
                ln[t].e = er;
                V sc[R];
                sw_fetch<R>(L(), prof + sw_res(res, wa, la, j) * W,
                            prof + sw_res(res, wb, lb, j) * W, t, G, sc);
                if constexpr (SH == 2)
                    ln[t].row_sh2(sc, L::splat(2 * oe), nk, L::splat(-ext), 1u);
                else if constexpr (SH == 1)
                    ln[t].row_sh(sc, L::splat(oe), nk, L::splat(-ext), 1u);
                else
                    ln[t].template row<false>(sc, L::splat(-oe), L::splat(-ext));
                if (t == G - 1) {
                    bh[j] = ln[t].h;
                    be[j] = ln[t].e;
                }
            }
        }
    }
    V m = 0;
    for (int t = 0; t < G; t++)
        m = L::max3(m, ln[t].M, ln[t].M);
    if constexpr (SH == 2)
        m = L::addmax0(m, L::splat(-oe), 0);
    L::put(scores, ka, kb, two, m);
}

template <int R>
static void emu_dpx(int G, const int16_t *tprof, int qlen, const uint32_t *res,
                    const uint32_t *woff, const uint32_t *len, uint32_t n, int oe, int ext,
                    int32_t *scores, int sh)
{
    for (uint32_t k = 0; k < n; k += 2) {
        if (sh == 2)
            emu_job<LP16, R, 2>(G, tprof, qlen, res, woff, len, k, k + 1, k + 1 < n, oe, ext, scores);
        else if (sh)
            emu_job<LP16, R, 1>(G, tprof, qlen, res, woff, len, k, k + 1, k + 1 < n, oe, ext, scores);
        else
            emu_job<LP16, R>(G, tprof, qlen, res, woff, len, k, k + 1, k + 1 < n, oe, ext, scores);
    }
}

extern "C" int swgpu__cu_emulate(int kind, swgpu_cu_cfg_t cfg, const uint32_t *res,
                                 const uint32_t *woff, const uint32_t *len, uint32_t n,
                                 const uint8_t *q, int qlen, const int16_t *mat, int oe, int ext,
                                 int32_t *scores)
{
    if (kind == 1) {
        cfg.G = IB;
        cfg.R = IR;
    } else if (!has_cfg(swgpu__cu_dpx_configs, cfg)) {
        return swgpu__fail(SWGPU_EINVAL, "DPX kernel: no configuration G=%d R=%d P=%d", cfg.G, cfg.R, cfg.P);
    }
    std::vector<int16_t> tp(swgpu__cu_tile_prof_len(cfg.G, cfg.R, qlen));
    swgpu__cu_tile_prof(cfg.G, cfg.R, q, qlen, mat, tp.data());
    if (kind == 1) {
        for (uint32_t k = 0; k < n; k++)
            emu_job<LS32, IR>(IB, tp.data(), qlen, res, woff, len, k, k, 0, oe, ext, scores);
        return SWGPU_OK;
    }
    const int sh = cfg.P == 4 ? 2 : cfg.P == 3;
    switch (cfg.R) {
    case 12: emu_dpx<12>(cfg.G, tp.data(), qlen, res, woff, len, n, oe, ext, scores, sh); break;
    case 16: emu_dpx<16>(cfg.G, tp.data(), qlen, res, woff, len, n, oe, ext, scores, sh); break;
    case 20: emu_dpx<20>(cfg.G, tp.data(), qlen, res, woff, len, n, oe, ext, scores, sh); break;
    case 24: emu_dpx<24>(cfg.G, tp.data(), qlen, res, woff, len, n, oe, ext, scores, sh); break;
    case 28: emu_dpx<28>(cfg.G, tp.data(), qlen, res, woff, len, n, oe, ext, scores, sh); break;
    case 32: emu_dpx<32>(cfg.G, tp.data(), qlen, res, woff, len, n, oe, ext, scores, sh); break;
    default: return swgpu__fail(SWGPU_EINVAL, "DPX model: R=%d", cfg.R);
    }
    return SWGPU_OK;
}

/* the query-lane kernel's group on the CPU: one subject, a job's passes */
template <int R, int SH>
static void emu_qp_job(int G, const uint32_t *res, const uint32_t *woff, const uint32_t *len,
                       uint32_t k, const swgpu_cu_pass_t *pass, uint32_t np, int32_t *scores,
                       size_t stride, int oe, int ext)
{
    typedef LP16::V V;
    const int W = G * R, L = (int)len[k];
    const uint32_t nk = 0u - (uint32_t)oe * 0x10001u;
    const V v = LP16::splat(SH == 2 ? 2 * oe : oe), b0e = SH == 2 ? v : 0;
    std::vector<SwLane<LP16, R>> ln(G);
    std::vector<V> oh(G), oe_(G), bh(L + 1), be(L + 1);
    for (uint32_t pi = 0; pi < np; pi++) {
        const swgpu_cu_pass_t *ps = &pass[pi];
        for (int t = 0; t < G; t++) {
            ln[t].M = 0;
            if constexpr (SH == 2)
                ln[t].start_sh2(v, nk, 1u);
            else
                ln[t].start_sh(v);
        }
        for (int s = 0; s < L + G - 1; s++) {
            for (int t = 0; t < G; t++) {
                oh[t] = ln[t].h;
                oe_[t] = ln[t].e;
            }
            for (int t = 0; t < G; t++) {
                const int j = s - t;
                if (j < 0 || j >= L)
                    continue;
                const uint32_t keep = qp_keep(ps->starts, t);
                const V hr = t > 0 ? oh[t - 1] : bh[j], er = t > 0 ? oe_[t - 1] : be[j];
                ln[t].h = (hr & keep) | (v & ~keep);
                ln[t].e = (er & keep) | (b0e & ~keep);
                const int r = sw_res(res, woff[k], len[k], j);
                V sc[R];
                for (int c = 0; c < R; c++)
                    sc[c] = ps->prof[(size_t)r * W + (size_t)((c / 4) * G + t) * 4 + (c & 3)];
                if constexpr (SH == 2)
                    ln[t].row_sh2(sc, v, nk, LP16::splat(-ext), 1u);
                else
                    ln[t].row_sh(sc, v, nk, LP16::splat(-ext), 1u);
                if (t == G - 1) {
                    bh[j] = ln[t].h;
                    be[j] = ln[t].e;
                }
            }
        }
        for (int t = 0; t < G; t++) {
            V m = ln[t].M;
            if constexpr (SH == 2)
                m = LP16::addmax0(m, LP16::splat(-oe), 0);
            for (int h = 0; h < 2; h++) {
                const uint32_t q = ps->qi[h][t];
                if (q == 0xffffu)
                    continue;
                const int32_t x = h ? sw_hi16(m) : sw_lo16(m);
                int32_t *o = &scores[q * stride + k];
                if (x > *o)
                    *o = x;
            }
        }
    }
}

extern "C" int swgpu__cu_emulate_qp(swgpu_cu_cfg_t cfg, const uint32_t *res, const uint32_t *woff,
                                    const uint32_t *len, uint32_t n, const swgpu_cu_job_t *jobs,
                                    uint32_t njobs, const swgpu_cu_pass_t *pass, int32_t *scores,
                                    size_t stride, int oe, int ext)
{
    if (!has_cfg(swgpu__cu_qp_configs, cfg))
        return swgpu__fail(SWGPU_EINVAL, "query-lane kernel: no configuration G=%d R=%d P=%d",
                           cfg.G, cfg.R, cfg.P);
    for (uint32_t jb = 0; jb < njobs; jb++)
        for (uint32_t k = 0; k < n; k++) {
            const swgpu_cu_pass_t *ps = pass + jobs[jb].first;
            const uint32_t np = jobs[jb].n;
            const int sh = cfg.P == 4 ? 2 : 1; /* the configuration's cell form */
            switch (cfg.R * 4 + sh) {
            case 16 * 4 + 1: emu_qp_job<16, 1>(cfg.G, res, woff, len, k, ps, np, scores, stride, oe, ext); break;
            case 20 * 4 + 1: emu_qp_job<20, 1>(cfg.G, res, woff, len, k, ps, np, scores, stride, oe, ext); break;
            case 24 * 4 + 2: emu_qp_job<24, 2>(cfg.G, res, woff, len, k, ps, np, scores, stride, oe, ext); break;
            case 28 * 4 + 2: emu_qp_job<28, 2>(cfg.G, res, woff, len, k, ps, np, scores, stride, oe, ext); break;
            case 32 * 4 + 2: emu_qp_job<32, 2>(cfg.G, res, woff, len, k, ps, np, scores, stride, oe, ext); break;
            default:
                return swgpu__fail(SWGPU_EINVAL, "query-lane model: R=%d P=%d", cfg.R, cfg.P);
            }
        }
    return SWGPU_OK;
}
