/*
 * splitmix64.h - the benchmarks' random numbers: splitmix64 (Steele, Lea and
 * Flood, 2014), no library randomness, so a seed gives the same data on every
 * machine.  (tests/tap.h has the same generator for the tests: tap_rand.)
 */
#ifndef SWGPU_BENCH_SPLITMIX64_H
#define SWGPU_BENCH_SPLITMIX64_H
#include <stdint.h>

static inline uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

#endif
