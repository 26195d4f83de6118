/*
 * tap.h - the tiny test harness every test binary uses.  Each test binary
 * ends by printing one line "N passed, N failed" (and ", N skipped" when
 * some checks were skipped) and exits non-zero if anything failed.
 */
#ifndef SWGPU_TAP_H
#define SWGPU_TAP_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long tap_passed, tap_failed, tap_skipped;

#define CHECK(cond, ...)                                                    \
    do {                                                                    \
        if (cond) {                                                         \
            tap_passed++;                                                   \
        } else {                                                            \
            tap_failed++;                                                   \
            fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                   \
            fputc('\n', stderr);                                            \
        }                                                                   \
    } while (0)

#define CHECK_EQ_INT(a, b)                                                    \
    do {                                                                      \
        long long tap_a_ = (long long)(a), tap_b_ = (long long)(b);           \
        CHECK(tap_a_ == tap_b_, "%s = %lld, expected %lld", #a, tap_a_, tap_b_); \
    } while (0)

#define CHECK_EQ_STR(a, b)                                                      \
    do {                                                                        \
        const char *tap_a_ = (a), *tap_b_ = (b);                                \
        CHECK(tap_a_ && tap_b_ && strcmp(tap_a_, tap_b_) == 0,                  \
              "%s = \"%s\", expected \"%s\"", #a, tap_a_ ? tap_a_ : "(null)",   \
              tap_b_ ? tap_b_ : "(null)");                                      \
    } while (0)

#define SKIP(n, why)                                              \
    do {                                                          \
        tap_skipped += (n);                                       \
        printf("SKIP %s (%ld checks)\n", (why), (long)(n));       \
    } while (0)

static inline int tap_done(void)
{
    if (tap_skipped)
        printf("%ld passed, %ld failed, %ld skipped\n", tap_passed, tap_failed, tap_skipped);
    else
        printf("%ld passed, %ld failed\n", tap_passed, tap_failed);
    return tap_failed ? 1 : 0;
}

/* SWGPU_TEST_QUICK=1 (make check-tsan sets it): the slowest tests run fewer
 * and smaller random cases, every path still taken, for sanitizers that slow
 * the code down tenfold or more. */
static inline int tap_quick(void)
{
    const char *e = getenv("SWGPU_TEST_QUICK");
    return e && *e && strcmp(e, "0") != 0;
}

/* Built with ThreadSanitizer (make check-tsan): a test may keep to its
 * multithreaded paths there, the single-threaded ones being checked by the
 * plain and the AddressSanitizer builds. */
static inline int tap_tsan(void)
{
#if defined(__SANITIZE_THREAD__)
    return 1;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
    return 1;
#else
    return 0;
#endif
#else
    return 0;
#endif
}

/* Deterministic PRNG (splitmix64) so seeded tests repeat exactly. */
static inline uint64_t tap_rand(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

#endif
