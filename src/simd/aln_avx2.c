/*
 * aln_avx2.c - the alignment kernel (simd/simd.h) with AVX2: 8 lanes of 32
 * bits (built with -mavx2; simd/isa.c checks the CPU first).
 */
#include "simd/simd.h"

#include <immintrin.h>

static inline void bytes8(uint8_t *p, __m256i v)
{
    /* the low byte of each 32-bit lane to the first 4 bytes of each half */
    const __m256i pick = _mm256_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
                                          -1, 0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
                                          -1, -1);
    __m256i b = _mm256_shuffle_epi8(v, pick);
    uint32_t lo = (uint32_t)_mm256_extract_epi32(b, 0), hi = (uint32_t)_mm256_extract_epi32(b, 4);
    uint64_t x = (uint64_t)hi << 32 | lo;
    __builtin_memcpy(p, &x, 8);
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

static inline void lookup8(__m256i *o, const uint8_t *c, const int8_t *tab)
{
    uint64_t x;
    __builtin_memcpy(&x, c, 8);
    *o = _mm256_cvtepi8_epi32(lookup32(tab, _mm_cvtsi64_si128((long long)x)));
}

/* lanes up by d (a literal) of 4 bytes / of 2 bytes across the two halves,
 * zeros in; d >= the lanes: all zeros */
static inline __m256i shiftz32(__m256i v, int d)
{
    __m256i lo = _mm256_permute2x128_si256(v, v, 0x08); /* {0, low half of v} */
    switch (d) {
    case 1: return _mm256_alignr_epi8(v, lo, 12);
    case 2: return _mm256_alignr_epi8(v, lo, 8);
    case 4: return lo;
    default: return _mm256_setzero_si256();
    }
}

static inline __m256i shiftz16(__m256i v, int d)
{
    __m256i lo = _mm256_permute2x128_si256(v, v, 0x08);
    switch (d) {
    case 1: return _mm256_alignr_epi8(v, lo, 14);
    case 2: return _mm256_alignr_epi8(v, lo, 12);
    case 4: return _mm256_alignr_epi8(v, lo, 8);
    case 8: return lo;
    default: return _mm256_setzero_si256();
    }
}

#define AL_NAME aln_run
#define AL_V __m256i
#define AL_T int32_t
#define AL_NEG SWGPU__ALN_NEG
#define AL_LANEBITS 1
#define AL_LANES 8
#define AL_SET1(x) _mm256_set1_epi32(x)
#define AL_ADD _mm256_add_epi32
#define AL_SUB _mm256_sub_epi32
#define AL_MAX _mm256_max_epi32
#define AL_CMPGT _mm256_cmpgt_epi32
#define AL_CMPEQ _mm256_cmpeq_epi32
#define AL_AND _mm256_and_si256
#define AL_OR _mm256_or_si256
#define AL_ANDNOT _mm256_andnot_si256
#define AL_SHIFT(v, x) _mm256_blend_epi32(_mm256_permutevar8x32_epi32((v), \
                           _mm256_setr_epi32(7, 0, 1, 2, 3, 4, 5, 6)), _mm256_set1_epi32(x), 1)
#define AL_SHIFTZ(v, d) shiftz32((v), (d))
#define AL_ANYGT(a, b) (_mm256_movemask_epi8(_mm256_cmpgt_epi32((a), (b))) != 0)
#define AL_EQMASK(a, b) ((uint32_t)_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32((a), (b)))))
#define AL_STOREU(p, v) _mm256_storeu_si256((__m256i *)(void *)(p), (v))
#define AL_LOADU(p) _mm256_loadu_si256((const __m256i *)(const void *)(p))
#define AL_BYTES(p, v) bytes8((p), (v))
#define AL_LOOKUP(o, c, tab) lookup8((o), (c), (tab))
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

/* 16 lanes of 16 bits */
static inline void bytes16(uint8_t *p, __m256i v)
{
    __m256i b = _mm256_permute4x64_epi64(_mm256_packus_epi16(v, v), 0x08);
    _mm_storeu_si128((__m128i *)(void *)p, _mm256_castsi256_si128(b));
}

static inline void lookup16x(__m256i *o, const uint8_t *c, const int8_t *tab)
{
    *o = _mm256_cvtepi8_epi16(lookup32(tab, _mm_loadu_si128((const __m128i *)(const void *)c)));
}

/* words up by one across the two halves, x in word 0 */
static inline __m256i shift16(__m256i v, int32_t x)
{
    const __m256i w0 = _mm256_setr_epi16(-1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
    __m256i r = _mm256_alignr_epi8(v, _mm256_permute2x128_si256(v, v, 0x08), 14);
    return _mm256_blendv_epi8(r, _mm256_set1_epi16((short)x), w0);
}

#define AL_NAME aln_run16
#define AL_T int16_t
#define AL_NEG INT16_MIN
#define AL_LANEBITS 2
#define AL_LANES 16
#define AL_SET1(x) _mm256_set1_epi16((short)(x))
#define AL_ADD _mm256_adds_epi16
#define AL_SUB _mm256_subs_epi16
#define AL_MAX _mm256_max_epi16
#define AL_CMPGT _mm256_cmpgt_epi16
#define AL_CMPEQ _mm256_cmpeq_epi16
#define AL_SHIFT(v, x) shift16((v), (x))
#define AL_SHIFTZ(v, d) shiftz16((v), (d))
#define AL_ANYGT(a, b) (_mm256_movemask_epi8(_mm256_cmpgt_epi16((a), (b))) != 0)
#define AL_EQMASK(a, b) ((uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi16((a), (b))))
#define AL_BYTES(p, v) bytes16((p), (v))
#define AL_LOOKUP(o, c, tab) lookup16x((o), (c), (tab))
#include "simd/aln_template.h"

const swgpu__aln_kernels_t swgpu__aln_avx2 = {"avx2", 2, 8, aln_run, 16, aln_run16};
