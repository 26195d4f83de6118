/*
 * sw_sse41.c - SSE4.1 batch kernels: 16 lanes of 8 bits, 8 lanes of 16 bits
 * (built with -msse4.1; only called after the engine checked the CPU).
 */
#include "simd/simd.h"

#include <immintrin.h>
#include <string.h>


/* Look up 16 codes (< 32) in a 32-byte table: two shuffles (entries 0-15,
 * 16-31) blended on bit 4 of the code (moved to bit 7). */
static inline __m128i lookup16(const uint8_t *tab, __m128i idx, __m128i sel)
{
    __m128i lo = _mm_loadu_si128((const __m128i *)tab);
    __m128i hi = _mm_loadu_si128((const __m128i *)(tab + 16));
    return _mm_blendv_epi8(_mm_shuffle_epi8(lo, idx), _mm_shuffle_epi8(hi, idx), sel);
}

static inline void profile8(__m128i *prof, const uint8_t *col, const swgpu__sw_query_t *qp)
{
    const __m128i idx = _mm_load_si128((const __m128i *)col);
    const __m128i sel = _mm_slli_epi16(idx, 3); /* codes < 32: no carry between bytes */
    for (int k = 0; k < qp->n_letters; k++) {
        int a = qp->letters[k];
        prof[a] = lookup16((const uint8_t *)qp->row8 + a * SWGPU_NCODES, idx, sel);
    }
}

/* 16-bit profile of 8 lanes: low and high bytes looked up apart, then
 * interleaved. */
static inline void profile16(__m128i *prof, const uint8_t *col, const swgpu__sw_query_t *qp)
{
    const __m128i idx = _mm_loadl_epi64((const __m128i *)col);
    const __m128i sel = _mm_slli_epi16(idx, 3);
    for (int k = 0; k < qp->n_letters; k++) {
        int a = qp->letters[k];
        const uint8_t *planes = qp->row16b + a * 2 * SWGPU_NCODES;
        __m128i lo = lookup16(planes, idx, sel);
        __m128i hi = lookup16(planes + SWGPU_NCODES, idx, sel);
        prof[a] = _mm_unpacklo_epi8(lo, hi);
    }
}

/* The PSSM form (sw_template.h): per position a 32-entry row, looked up
 * per cell vector with lookup16 above; 16 bits from the row's byte planes,
 * interleaved as in profile16. */
typedef struct {
    __m128i idx, sel; /* the column's codes; bit 4 moved to bit 7 */
} pcol_t;

typedef struct {
    __m128i lo, hi; /* entries 0-15 and 16-31 of the row */
} prow8_t;

static inline pcol_t pcol8(const uint8_t *col)
{
    pcol_t c;
    c.idx = _mm_load_si128((const __m128i *)col);
    c.sel = _mm_slli_epi16(c.idx, 3);
    return c;
}

static inline prow8_t prow8(const swgpu__sw_query_t *qp, size_t i)
{
    const int8_t *row = qp->prow8 + i * SWGPU_NCODES;
    prow8_t r;
    r.lo = _mm_loadu_si128((const __m128i *)row);
    r.hi = _mm_loadu_si128((const __m128i *)(row + 16));
    return r;
}

static inline __m128i plook8(prow8_t r, pcol_t c)
{
    return _mm_blendv_epi8(_mm_shuffle_epi8(r.lo, c.idx), _mm_shuffle_epi8(r.hi, c.idx), c.sel);
}

static inline pcol_t pcol16(const uint8_t *col)
{
    pcol_t c;
    c.idx = _mm_loadl_epi64((const __m128i *)col);
    c.sel = _mm_slli_epi16(c.idx, 3);
    return c;
}

typedef struct {
    __m128i l0, l1, h0, h1; /* low bytes of entries 0-15, 16-31; high bytes */
} prow16_t;

static inline prow16_t prow16(const swgpu__sw_query_t *qp, size_t i)
{
    const uint8_t *planes = qp->prow16b + i * 2 * SWGPU_NCODES;
    prow16_t r;
    r.l0 = _mm_loadu_si128((const __m128i *)planes);
    r.l1 = _mm_loadu_si128((const __m128i *)(planes + 16));
    r.h0 = _mm_loadu_si128((const __m128i *)(planes + 32));
    r.h1 = _mm_loadu_si128((const __m128i *)(planes + 48));
    return r;
}

static inline __m128i plook16(prow16_t r, pcol_t c)
{
    __m128i lo = _mm_blendv_epi8(_mm_shuffle_epi8(r.l0, c.idx), _mm_shuffle_epi8(r.l1, c.idx), c.sel);
    __m128i hi = _mm_blendv_epi8(_mm_shuffle_epi8(r.h0, c.idx), _mm_shuffle_epi8(r.h1, c.idx), c.sel);
    return _mm_unpacklo_epi8(lo, hi);
}

#define SW_NAME batch8
#define SW_V __m128i
#define SW_T int8_t
#define SW_MIN INT8_MIN
#define SW_LANES 16
#define SW_SET1(x) _mm_set1_epi8((char)(x))
#define SW_ADDS _mm_adds_epi8
#define SW_SUBS _mm_subs_epi8
#define SW_MAX _mm_max_epi8
#define SW_BLEND(a, b, m) _mm_blendv_epi8(a, b, m)
#define SW_PROFILE profile8
#include "simd/sw_template.h"
#undef SW_NAME
#undef SW_V
#undef SW_T
#undef SW_MIN
#undef SW_LANES
#undef SW_SET1
#undef SW_ADDS
#undef SW_SUBS
#undef SW_MAX
#undef SW_BLEND
#undef SW_PROFILE

#define SW_NAME batch16
#define SW_V __m128i
#define SW_T int16_t
#define SW_MIN INT16_MIN
#define SW_LANES 8
#define SW_SET1(x) _mm_set1_epi16((short)(x))
#define SW_ADDS _mm_adds_epi16
#define SW_SUBS _mm_subs_epi16
#define SW_MAX _mm_max_epi16
#define SW_BLEND(a, b, m) _mm_blendv_epi8(a, b, m)
#define SW_PROFILE profile16
#include "simd/sw_template.h"
#undef SW_NAME
#undef SW_PROFILE

#define SW_PSSM
#define SW_NAME batch16p
#define SW_PCOL_T pcol_t
#define SW_PCOL pcol16
#define SW_PROW_T prow16_t
#define SW_PROW prow16
#define SW_PLOOK plook16
#include "simd/sw_template.h"
#undef SW_PCOL_T
#undef SW_PCOL
#undef SW_PROW_T
#undef SW_PROW
#undef SW_PLOOK
#undef SW_NAME
#undef SW_V
#undef SW_T
#undef SW_MIN
#undef SW_LANES
#undef SW_SET1
#undef SW_ADDS
#undef SW_SUBS
#undef SW_MAX
#undef SW_BLEND
#undef SW_PROFILE

#define SW_NAME batch8p
#define SW_V __m128i
#define SW_T int8_t
#define SW_MIN INT8_MIN
#define SW_LANES 16
#define SW_SET1(x) _mm_set1_epi8((char)(x))
#define SW_ADDS _mm_adds_epi8
#define SW_SUBS _mm_subs_epi8
#define SW_MAX _mm_max_epi8
#define SW_BLEND(a, b, m) _mm_blendv_epi8(a, b, m)
#define SW_PCOL_T pcol_t
#define SW_PCOL pcol8
#define SW_PROW_T prow8_t
#define SW_PROW prow8
#define SW_PLOOK plook8
#include "simd/sw_template.h"
#undef SW_PSSM


#define PR_NAME pair_cols
#define PR_V __m128i
#define PR_LANES 4
#define PR_SET1(x) _mm_set1_epi32(x)
#define PR_ADD _mm_add_epi32
#define PR_SUB _mm_sub_epi32
#define PR_MAX _mm_max_epi32
#define PR_SHIFT(v, x) _mm_alignr_epi8((v), _mm_set1_epi32(x), 12)
#define PR_ANYGT(a, b) (_mm_movemask_epi8(_mm_cmpgt_epi32((a), (b))) != 0)
#define PR_EQMASK(a, b) ((uint32_t)_mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32((a), (b)))))
#define PR_STOREU(p, v) _mm_storeu_si128((__m128i *)(void *)(p), (v))
#define PR_LOADU(p) _mm_loadu_si128((const __m128i *)(const void *)(p))
#include "simd/pair_template.h"
/* lane l of the result: max over l' < l of v[l'] - (l-1-l')*d (lane 0 and
 * lanes without any l' are at most NEG); shifts by 1, 1, 2 lanes */
static inline __m128i prefix4(__m128i v, int32_t d)
{
    const __m128i neg = _mm_set1_epi32(SWGPU__STRIP_NEG);
    __m128i x = _mm_alignr_epi8(v, neg, 12);
    x = _mm_max_epi32(x, _mm_sub_epi32(_mm_alignr_epi8(x, neg, 12), _mm_set1_epi32(d)));
    return _mm_max_epi32(x, _mm_sub_epi32(_mm_alignr_epi8(x, neg, 8), _mm_set1_epi32(2 * d)));
}
#define PR_PREFIX prefix4
#define ST_NAME strip_cols
#include "simd/strip_template.h"

const swgpu__sw_kernels_t swgpu__sw_sse41 = {
    "sse41", SWGPU__ISA_SSE41, 16, 16, 8, batch8, batch16, 4, pair_cols, batch8p, batch16p, strip_cols,
};
