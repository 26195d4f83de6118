/*
 * testlib.h - random sequences and their mutants, shared by the test
 * binaries (after tap.h, whose tap_rand draws every number).  Each helper
 * draws exactly as the test-local copy it replaced, so the tests' data are
 * unchanged; two mutants that draw differently keep distinct names.
 */
#ifndef SWGPU_TESTLIB_H
#define SWGPU_TESTLIB_H

#include "swgpu.h"
#include "tap.h"

#include <stddef.h>
#include <stdint.h>

#define TL_AMINO "ARNDCQEGHILKMFPSTWYV"
#define TL_NUC "ACGT"

/* x[0..n): residue codes uniform in [0, ncodes). */
static inline void tl_rand_codes(uint64_t *rng, uint8_t *x, size_t n, int ncodes)
{
    for (size_t i = 0; i < n; i++)
        x[i] = (uint8_t)(tap_rand(rng) % (uint64_t)ncodes);
}

/* b = codes a[0..n) with substitutions, insertions of 1..8 and deletions
 * (rates in 1/1000), at most cap codes; its length. */
static inline size_t tl_mutate_codes(uint64_t *rng, const uint8_t *a, size_t n, uint8_t *b,
                                     size_t cap, int ncodes, int sub, int ins, int del)
{
    size_t k = 0;
    for (size_t i = 0; i < n && k < cap; i++) {
        int r = (int)(tap_rand(rng) % 1000);
        if (r < del)
            continue;
        if (r < del + ins) {
            size_t len = 1 + tap_rand(rng) % 8;
            for (size_t x = 0; x < len && k < cap; x++)
                b[k++] = (uint8_t)(tap_rand(rng) % (uint64_t)ncodes);
        }
        if (k < cap)
            b[k++] = r < del + ins + sub ? (uint8_t)(tap_rand(rng) % (uint64_t)ncodes) : a[i];
    }
    return k;
}

/* s[0..n) letters uniform over alpha, then a NUL. */
static inline void tl_rand_letters(uint64_t *rng, char *s, size_t n, const char *alpha)
{
    size_t na = strlen(alpha);
    for (size_t i = 0; i < n; i++)
        s[i] = alpha[tap_rand(rng) % na];
    s[n] = 0;
}

/* dst = src with about one change in rate residues (a substitution, a
 * deletion or an insertion after the residue, each 1 in 3 rate), letters
 * from alpha drawn only for a change, while 4 more fit in cap (SIZE_MAX:
 * no bound); NUL-terminated; its length. */
static inline size_t tl_mutate_letters(uint64_t *rng, const char *src, char *dst, size_t cap,
                                       unsigned rate, const char *alpha)
{
    size_t n = 0, na = strlen(alpha);
    for (const char *p = src; *p && n + 4 < cap; p++) {
        unsigned r = (unsigned)(tap_rand(rng) % (3 * rate));
        if (r == 0) {
            dst[n++] = alpha[tap_rand(rng) % na];
        } else if (r == 1) {
            continue;
        } else if (r == 2) {
            dst[n++] = *p;
            dst[n++] = alpha[tap_rand(rng) % na];
        } else {
            dst[n++] = *p;
        }
    }
    dst[n] = 0;
    return n;
}

/* As tl_mutate_letters, but a letter is drawn for every residue (after the
 * change's number), whether it is used or not. */
static inline size_t tl_mutate_letters_each(uint64_t *rng, const char *src, char *dst, size_t cap,
                                            unsigned rate, const char *alpha)
{
    size_t n = 0, na = strlen(alpha);
    for (const char *p = src; *p && n + 4 < cap; p++) {
        unsigned r = (unsigned)(tap_rand(rng) % (rate * 3));
        char x = alpha[tap_rand(rng) % na];
        if (r == 0)
            dst[n++] = x;
        else if (r == 1)
            continue;
        else if (r == 2) {
            dst[n++] = *p;
            dst[n++] = x;
        } else
            dst[n++] = *p;
    }
    dst[n] = 0;
    return n;
}

/* A sequence set of the letter strings seqs[0..n), ids prefix0, prefix1, ...;
 * NULL on error. */
static inline swgpu_seqset_t *tl_set_of(swgpu_alphabet_t a, const char *const *seqs, size_t n,
                                        const char *prefix)
{
    swgpu_seqset_t *s = NULL;
    if (swgpu_seqset_create(a, &s) < 0)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        char id[64];
        snprintf(id, sizeof id, "%s%zu", prefix, i);
        if (swgpu_seqset_add(s, id, "", seqs[i], strlen(seqs[i])) < 0) {
            swgpu_seqset_destroy(s);
            return NULL;
        }
    }
    return s;
}

/* The same as a database in memory; NULL on error. */
static inline swgpu_db_t *tl_db_of(swgpu_alphabet_t a, const char *const *seqs, size_t n,
                                   const char *prefix)
{
    swgpu_seqset_t *s = tl_set_of(a, seqs, n, prefix);
    swgpu_db_t *db = NULL;
    if (!s || swgpu_db_from_seqset(s, &db) < 0)
        db = NULL;
    swgpu_seqset_destroy(s);
    return db;
}

#endif
