/*
 * aln_sse41.c - the alignment kernel (simd/simd.h) with SSE4.1: 4 lanes of
 * 32 bits (built with -msse4.1; simd/isa.c checks the CPU first).
 */
#include "simd/simd.h"

#include <immintrin.h>

static inline void bytes4(uint8_t *p, __m128i v)
{
    const __m128i pick = _mm_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
    uint32_t x = (uint32_t)_mm_cvtsi128_si32(_mm_shuffle_epi8(v, pick));
    __builtin_memcpy(p, &x, 4);
}


/* 32-entry byte table lookup: two shuffles (codes 0-15, 16-31) blended on
 * bit 4 of the code (moved to bit 7) */
static inline __m128i lookup32(const int8_t *tab, __m128i idx)
{
    __m128i lo = _mm_loadu_si128((const __m128i *)(const void *)tab);
    __m128i hi = _mm_loadu_si128((const __m128i *)(const void *)(tab + 16));
    __m128i sel = _mm_slli_epi16(idx, 3);
    return _mm_blendv_epi8(_mm_shuffle_epi8(lo, idx), _mm_shuffle_epi8(hi, idx), sel);
}

static inline void lookup4(__m128i *o, const uint8_t *c, const int8_t *tab)
{
    uint32_t x;
    __builtin_memcpy(&x, c, 4);
    *o = _mm_cvtepi8_epi32(lookup32(tab, _mm_cvtsi32_si128((int)x)));
}

#define AL_NAME aln_run
#define AL_V __m128i
#define AL_T int32_t
#define AL_NEG SWGPU__ALN_NEG
#define AL_LANEBITS 1
#define AL_LANES 4
#define AL_SET1(x) _mm_set1_epi32(x)
#define AL_ADD _mm_add_epi32
#define AL_SUB _mm_sub_epi32
#define AL_MAX _mm_max_epi32
#define AL_CMPGT _mm_cmpgt_epi32
#define AL_CMPEQ _mm_cmpeq_epi32
#define AL_AND _mm_and_si128
#define AL_OR _mm_or_si128
#define AL_ANDNOT _mm_andnot_si128
#define AL_SHIFT(v, x) _mm_alignr_epi8((v), _mm_set1_epi32(x), 12)
#define AL_SHIFTZ(v, d) _mm_slli_si128((v), 4 * (d))
#define AL_ANYGT(a, b) (_mm_movemask_epi8(_mm_cmpgt_epi32((a), (b))) != 0)
#define AL_EQMASK(a, b) ((uint32_t)_mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32((a), (b)))))
#define AL_STOREU(p, v) _mm_storeu_si128((__m128i *)(void *)(p), (v))
#define AL_LOADU(p) _mm_loadu_si128((const __m128i *)(const void *)(p))
#define AL_BYTES(p, v) bytes4((p), (v))
#define AL_LOOKUP(o, c, tab) lookup4((o), (c), (tab))
#include "simd/aln_template.h"
#undef AL_NAME
#undef AL_T
#undef AL_NEG
#undef AL_LANEBITS
#undef AL_LANES
#undef AL_SET1
#undef AL_ADD
#undef AL_SUB
#undef AL_MAX
#undef AL_CMPGT
#undef AL_CMPEQ
#undef AL_SHIFT
#undef AL_SHIFTZ
#undef AL_ANYGT
#undef AL_EQMASK
#undef AL_BYTES
#undef AL_LOOKUP

/* 8 lanes of 16 bits */
static inline void bytes8(uint8_t *p, __m128i v)
{
    _mm_storel_epi64((__m128i *)(void *)p, _mm_packus_epi16(v, v));
}

static inline void lookup8x(__m128i *o, const uint8_t *c, const int8_t *tab)
{
    *o = _mm_cvtepi8_epi16(lookup32(tab, _mm_loadl_epi64((const __m128i *)(const void *)c)));
}

#define AL_NAME aln_run16
#define AL_T int16_t
#define AL_NEG INT16_MIN
#define AL_LANEBITS 2
#define AL_LANES 8
#define AL_SET1(x) _mm_set1_epi16((short)(x))
#define AL_ADD _mm_adds_epi16
#define AL_SUB _mm_subs_epi16
#define AL_MAX _mm_max_epi16
#define AL_CMPGT _mm_cmpgt_epi16
#define AL_CMPEQ _mm_cmpeq_epi16
#define AL_SHIFT(v, x) _mm_insert_epi16(_mm_slli_si128((v), 2), (short)(x), 0)
#define AL_SHIFTZ(v, d) _mm_slli_si128((v), 2 * (d))
#define AL_ANYGT(a, b) (_mm_movemask_epi8(_mm_cmpgt_epi16((a), (b))) != 0)
#define AL_EQMASK(a, b) ((uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi16((a), (b))))
#define AL_BYTES(p, v) bytes8((p), (v))
#define AL_LOOKUP(o, c, tab) lookup8x((o), (c), (tab))
#include "simd/aln_template.h"

const swgpu__aln_kernels_t swgpu__aln_sse41 = {"sse41", 1, 4, aln_run, 8, aln_run16};
