/*
 * sw_avx512.c - AVX-512BW batch kernels: 64 lanes of 8 bits, 32 lanes of
 * 16 bits (built with -mavx512f -mavx512bw; only called after the engine
 * checked the CPU).
 */
#include "simd/simd.h"

#include <immintrin.h>
#include <string.h>


/* 8-bit profile of one column: a 32-entry byte table looked up with two
 * in-lane shuffles (entries 0-15 and 16-31) and a blend on bit 4 of the
 * code. */
static inline void profile8(__m512i *prof, const uint8_t *col, const swgpu__sw_query_t *qp)
{
    const __m512i idx = _mm512_load_si512((const void *)col);
    const __mmask64 hi = _mm512_test_epi8_mask(idx, _mm512_set1_epi8(0x10));
    for (int k = 0; k < qp->n_letters; k++) {
        int a = qp->letters[k];
        const int8_t *row = qp->row8 + a * SWGPU_NCODES;
        __m512i tlo = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)row));
        __m512i thi = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)(row + 16)));
        prof[a] = _mm512_mask_blend_epi8(hi, _mm512_shuffle_epi8(tlo, idx),
                                         _mm512_shuffle_epi8(thi, idx));
    }
}

/* 16-bit profile of one column: vpermw over the 32-entry int16 row. */
static inline void profile16(__m512i *prof, const uint8_t *col, const swgpu__sw_query_t *qp)
{
    const __m512i idx = _mm512_cvtepu8_epi16(_mm256_load_si256((const __m256i *)col));
    for (int k = 0; k < qp->n_letters; k++) {
        int a = qp->letters[k];
        __m512i row = _mm512_loadu_si512((const void *)(qp->row16 + a * SWGPU_NCODES));
        prof[a] = _mm512_permutexvar_epi16(idx, row);
    }
}

/* The PSSM form (sw_template.h): per position a 32-entry row, looked up
 * per cell vector.  8 bits: the row's halves in every 128-bit lane, two
 * in-lane shuffles merged on bit 4 of the code; 16 bits: vpermw over the
 * whole row. */
typedef struct {
    __m512i idx;  /* the column's codes */
    __mmask64 hi; /* the lanes whose code is >= 16 */
} pcol8_t;

typedef struct {
    __m512i lo, hi; /* entries 0-15 and 16-31 of the row, in every 128-bit lane */
} prow8_t;

static inline pcol8_t pcol8(const uint8_t *col)
{
    pcol8_t c;
    c.idx = _mm512_load_si512((const void *)col);
    c.hi = _mm512_test_epi8_mask(c.idx, _mm512_set1_epi8(0x10));
    return c;
}

static inline prow8_t prow8(const swgpu__sw_query_t *qp, size_t i)
{
    const int8_t *row = qp->prow8 + i * SWGPU_NCODES;
    prow8_t r;
    r.lo = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)row));
    r.hi = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)(row + 16)));
    return r;
}

static inline __m512i plook8(prow8_t r, pcol8_t c)
{
    return _mm512_mask_shuffle_epi8(_mm512_shuffle_epi8(r.lo, c.idx), c.hi, r.hi, c.idx);
}

static inline __m512i pcol16(const uint8_t *col)
{
    return _mm512_cvtepu8_epi16(_mm256_load_si256((const __m256i *)col));
}

static inline __m512i prow16(const swgpu__sw_query_t *qp, size_t i)
{
    return _mm512_loadu_si512((const void *)(qp->prow16 + i * SWGPU_NCODES));
}

static inline __m512i plook16(__m512i r, __m512i c)
{
    return _mm512_permutexvar_epi16(c, r);
}

#define SW_NAME batch8
#define SW_V __m512i
#define SW_T int8_t
#define SW_MIN INT8_MIN
#define SW_LANES 64
#define SW_SET1(x) _mm512_set1_epi8((char)(x))
#define SW_ADDS _mm512_adds_epi8
#define SW_SUBS _mm512_subs_epi8
#define SW_MAX _mm512_max_epi8
#define SW_BLEND(a, b, m) _mm512_mask_blend_epi8(_mm512_movepi8_mask(m), a, b)
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
#define SW_V __m512i
#define SW_T int16_t
#define SW_MIN INT16_MIN
#define SW_LANES 32
#define SW_SET1(x) _mm512_set1_epi16((short)(x))
#define SW_ADDS _mm512_adds_epi16
#define SW_SUBS _mm512_subs_epi16
#define SW_MAX _mm512_max_epi16
#define SW_BLEND(a, b, m) _mm512_mask_blend_epi8(_mm512_movepi8_mask(m), a, b)
#define SW_PROFILE profile16
#include "simd/sw_template.h"
#undef SW_NAME
#undef SW_PROFILE

#define SW_PSSM
#define SW_NAME batch16p
#define SW_PCOL_T __m512i
#define SW_PCOL pcol16
#define SW_PROW_T __m512i
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
#define SW_V __m512i
#define SW_T int8_t
#define SW_MIN INT8_MIN
#define SW_LANES 64
#define SW_SET1(x) _mm512_set1_epi8((char)(x))
#define SW_ADDS _mm512_adds_epi8
#define SW_SUBS _mm512_subs_epi8
#define SW_MAX _mm512_max_epi8
#define SW_BLEND(a, b, m) _mm512_mask_blend_epi8(_mm512_movepi8_mask(m), a, b)
#define SW_PCOL_T pcol8_t
#define SW_PCOL pcol8
#define SW_PROW_T prow8_t
#define SW_PROW prow8
#define SW_PLOOK plook8
#include "simd/sw_template.h"
#undef SW_PSSM


#define PR_NAME pair_cols
#define PR_V __m512i
#define PR_LANES 16
#define PR_SET1(x) _mm512_set1_epi32(x)
#define PR_ADD _mm512_add_epi32
#define PR_SUB _mm512_sub_epi32
#define PR_MAX _mm512_max_epi32
#define PR_SHIFT(v, x) _mm512_alignr_epi32((v), _mm512_set1_epi32(x), 15)
#define PR_ANYGT(a, b) (_mm512_cmpgt_epi32_mask((a), (b)) != 0)
#define PR_EQMASK(a, b) ((uint32_t)_mm512_cmpeq_epi32_mask((a), (b)))
#define PR_STOREU(p, v) _mm512_storeu_si512((void *)(p), (v))
#define PR_LOADU(p) _mm512_loadu_si512((const void *)(p))
#include "simd/pair_template.h"
/* lane l of the result: max over l' < l of v[l'] - (l-1-l')*d (lane 0 and
 * lanes without any l' are at most NEG); shifts by 1, 1, 2, 4, 8 lanes */
static inline __m512i prefix16(__m512i v, int32_t d)
{
    const __m512i neg = _mm512_set1_epi32(SWGPU__STRIP_NEG);
    __m512i x = _mm512_alignr_epi32(v, neg, 15);
    x = _mm512_max_epi32(x, _mm512_sub_epi32(_mm512_alignr_epi32(x, neg, 15), _mm512_set1_epi32(d)));
    x = _mm512_max_epi32(x, _mm512_sub_epi32(_mm512_alignr_epi32(x, neg, 14), _mm512_set1_epi32(2 * d)));
    x = _mm512_max_epi32(x, _mm512_sub_epi32(_mm512_alignr_epi32(x, neg, 12), _mm512_set1_epi32(4 * d)));
    return _mm512_max_epi32(x, _mm512_sub_epi32(_mm512_alignr_epi32(x, neg, 8), _mm512_set1_epi32(8 * d)));
}
#define PR_PREFIX prefix16
#define ST_NAME strip_cols
#include "simd/strip_template.h"

const swgpu__sw_kernels_t swgpu__sw_avx512 = {
    "avx512", SWGPU__ISA_AVX512, 64, 64, 32, batch8, batch16, 16, pair_cols, batch8p, batch16p, strip_cols,
};
