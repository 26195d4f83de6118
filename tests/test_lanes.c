/*
 * test_lanes.c - the query lanes' packing (src/cuda/lanes.c), on the CPU:
 * exact plans of small cases, and on random batches every query in a lane,
 * the pass count true to the lanes, never more passes than the least-loaded
 * rule alone (computed here on its own) and never fewer than the slots need;
 * the first plan alone (pack 0) is that rule's.  Also the engine's GPUs
 * onto devices (SWGPU_CUDA_DEVICES, swgpu__gpu_map in src/base/env.c).
 */
#include "cuda/lanes.h"
#include "base/base.h"
#include "tap.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* the passes of a plan, from its lanes */
static uint64_t passes_of(const uint32_t *slots, size_t n, uint32_t J, uint32_t G, const uint32_t *lane)
{
    uint64_t *load = calloc(2 * J, sizeof *load), sum = 0;
    for (size_t i = 0; i < n; i++)
        load[lane[i]] += slots[i];
    for (uint32_t j = 0; j < J; j++) {
        uint64_t mx = load[2 * j] > load[2 * j + 1] ? load[2 * j] : load[2 * j + 1];
        sum += (mx + G - 1) / G;
    }
    free(load);
    return sum;
}

/* the least-loaded rule alone (the first plan), by a linear scan */
static uint64_t greedy_passes(const uint32_t *slots, size_t n, uint32_t J, uint32_t G)
{
    uint64_t *load = calloc(2 * J, sizeof *load), sum = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t b = 0;
        for (uint32_t l = 1; l < 2 * J; l++)
            if (load[l] < load[b])
                b = l;
        load[b] += slots[i];
    }
    for (uint32_t j = 0; j < J; j++) {
        uint64_t mx = load[2 * j] > load[2 * j + 1] ? load[2 * j] : load[2 * j + 1];
        sum += (mx + G - 1) / G;
    }
    free(load);
    return sum;
}

static void exact_cases(void)
{
    uint32_t lane[16];
    uint64_t np = 0;
    /* the least-loaded rule gives lanes 0,1,2,3,3,0,1: loads 9,9,6,9, 3 + 3
     * passes; packed: 10,12,6,5, 3 + 2 */
    const uint32_t a[] = {6, 6, 6, 5, 4, 3, 3};
    const uint32_t want_a[] = {0, 1, 2, 3, 0, 1, 1};
    CHECK_EQ_INT(swgpu__qp_pack(a, 7, 2, 4, 1, lane, &np), SWGPU_OK);
    CHECK_EQ_INT(np, 5);
    CHECK_EQ_INT(greedy_passes(a, 7, 2, 4), 6);
    for (int i = 0; i < 7; i++)
        CHECK_EQ_INT(lane[i], want_a[i]);
    /* pack 0: the least-loaded rule's plan */
    const uint32_t first_a[] = {0, 1, 2, 3, 3, 0, 1};
    CHECK_EQ_INT(swgpu__qp_pack(a, 7, 2, 4, 0, lane, &np), SWGPU_OK);
    CHECK_EQ_INT(np, 6);
    for (int i = 0; i < 7; i++)
        CHECK_EQ_INT(lane[i], first_a[i]);
    /* nothing to gain: the first plan kept */
    const uint32_t b[] = {3, 3, 3, 3, 2, 2};
    const uint32_t want_b[] = {0, 1, 2, 3, 0, 1};
    CHECK_EQ_INT(swgpu__qp_pack(b, 6, 2, 4, 1, lane, &np), SWGPU_OK);
    CHECK_EQ_INT(np, 3);
    for (int i = 0; i < 6; i++)
        CHECK_EQ_INT(lane[i], want_b[i]);
    /* one job: its two lanes */
    const uint32_t c[] = {8, 8, 8, 8};
    CHECK_EQ_INT(swgpu__qp_pack(c, 4, 1, 8, 1, lane, &np), SWGPU_OK);
    CHECK_EQ_INT(np, 2);
    CHECK_EQ_INT(lane[0], 0);
    CHECK_EQ_INT(lane[1], 1);
    CHECK_EQ_INT(lane[2], 0);
    CHECK_EQ_INT(lane[3], 1);
    /* a batch shaped like the 2,000 UniProt queries' first (1,074 queries
     * of 1-12 slots, 27 jobs, passes of 8 slots) */
    enum { NU = 1074 };
    uint32_t *u = malloc(NU * sizeof *u), *ul = malloc(NU * sizeof *ul);
    for (int i = 0; i < NU; i++)
        u[i] = 1 + (uint32_t)(i * 37 % 12);
    for (int i = 0; i < NU; i++) /* longest first */
        for (int k = i + 1; k < NU; k++)
            if (u[k] > u[i]) {
                uint32_t t = u[i];
                u[i] = u[k];
                u[k] = t;
            }
    CHECK_EQ_INT(swgpu__qp_pack(u, NU, 27, 8, 1, ul, &np), SWGPU_OK);
    CHECK_EQ_INT(greedy_passes(u, NU, 27, 8), 458);
    CHECK_EQ_INT(np, 436);
    CHECK_EQ_INT(passes_of(u, NU, 27, 8, ul), 436);
    free(u);
    free(ul);
    /* bad plans refused */
    CHECK_EQ_INT(swgpu__qp_pack(a, 7, 0, 4, 1, lane, &np), SWGPU_EINVAL);
    CHECK_EQ_INT(swgpu__qp_pack(a, 7, 2, 0, 1, lane, &np), SWGPU_EINVAL);
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint32_t rnd(uint32_t n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng % n);
}

static void random_cases(void)
{
    const int rounds = tap_quick() ? 60 : 400;
    long wins = 0;
    for (int r = 0; r < rounds; r++) {
        const uint32_t J = 1 + rnd(30), G = 1u << rnd(4);
        const size_t n = 2 * J + rnd(600);
        const uint32_t maxs = 1 + rnd(r % 3 == 0 ? 250 : 40);
        uint32_t *s = malloc(n * sizeof *s), *lane = malloc(n * sizeof *lane);
        for (size_t i = 0; i < n; i++)
            s[i] = 1 + rnd(maxs);
        for (size_t i = 1; i < n; i++) /* longest first (insertion) */
            for (size_t k = i; k > 0 && s[k] > s[k - 1]; k--) {
                uint32_t t = s[k];
                s[k] = s[k - 1];
                s[k - 1] = t;
            }
        uint64_t np = 0, total = 0;
        for (size_t i = 0; i < n; i++)
            total += s[i];
        const int rc = swgpu__qp_pack(s, n, J, G, 1, lane, &np);
        int in_range = 1;
        for (size_t i = 0; i < n; i++)
            in_range &= lane[i] < 2 * J;
        const uint64_t g = greedy_passes(s, n, J, G);
        CHECK(rc == SWGPU_OK && in_range, "round %d: rc %d", r, rc);
        CHECK(np == passes_of(s, n, J, G, lane), "round %d: %llu passes reported", r,
              (unsigned long long)np);
        CHECK(np <= g, "round %d: %llu passes, the least-loaded rule %llu", r,
              (unsigned long long)np, (unsigned long long)g);
        CHECK(np * 2 * G >= total, "round %d: %llu passes for %llu slots", r,
              (unsigned long long)np, (unsigned long long)total);
        wins += np < g;
        /* pack 0: the least-loaded rule's passes */
        uint64_t np0 = 0;
        CHECK(swgpu__qp_pack(s, n, J, G, 0, lane, &np0) == SWGPU_OK && np0 == g &&
                  np0 == passes_of(s, n, J, G, lane),
              "round %d: the first plan alone %llu passes, the least-loaded rule %llu", r,
              (unsigned long long)np0, (unsigned long long)g);
        free(s);
        free(lane);
    }
    /* the packing must gain somewhere in this many batches */
    CHECK(wins > rounds / 10, "fewer passes in only %ld of %d batches", wins, rounds);
}

/* swgpu__gpu_map: the list, the default, and each error's message */
static void gpu_map_cases(void)
{
    int map[8];
    CHECK_EQ_INT(swgpu__gpu_map(NULL, 3, map, 8), 3);
    CHECK(map[0] == 0 && map[1] == 1 && map[2] == 2, "default map %d %d %d", map[0], map[1],
          map[2]);
    CHECK_EQ_INT(swgpu__gpu_map("", 12, map, 8), 8);
    CHECK_EQ_INT(map[7], 7);
    CHECK_EQ_INT(swgpu__gpu_map(NULL, 0, map, 8), 0);
    CHECK_EQ_INT(swgpu__gpu_map("0,0,0", 1, map, 8), 3);
    CHECK(map[0] == 0 && map[1] == 0 && map[2] == 0, "0,0,0: %d %d %d", map[0], map[1], map[2]);
    CHECK_EQ_INT(swgpu__gpu_map("1,0,1,3", 4, map, 8), 4);
    CHECK(map[0] == 1 && map[1] == 0 && map[2] == 1 && map[3] == 3, "1,0,1,3: %d %d %d %d", map[0],
          map[1], map[2], map[3]);
    CHECK_EQ_INT(swgpu__gpu_map("007", 8, map, 8), 1);
    CHECK_EQ_INT(map[0], 7);
    const char *bad[] = {"0,", ",0", "0,,1", "a", "-1", "0 ", " 0", "1.5", "0;1"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char want[128];
        snprintf(want, sizeof want, "SWGPU_CUDA_DEVICES=%s: expected CUDA device numbers separated "
                 "by commas, e.g. 0,0,0", bad[i]);
        CHECK_EQ_INT(swgpu__gpu_map(bad[i], 4, map, 8), SWGPU_EINVAL);
        CHECK_EQ_STR(swgpu_last_error(), want);
    }
    CHECK_EQ_INT(swgpu__gpu_map("0,4", 4, map, 8), SWGPU_ENODEV);
    CHECK_EQ_STR(swgpu_last_error(),
                 "SWGPU_CUDA_DEVICES=0,4: device 4, but 4 CUDA device(s) found");
    CHECK_EQ_INT(swgpu__gpu_map("99999999999999999999", 4, map, 8), SWGPU_ENODEV);
    CHECK_EQ_STR(swgpu_last_error(), "SWGPU_CUDA_DEVICES=99999999999999999999: device "
                 "99999999999999999999, but 4 CUDA device(s) found");
    CHECK_EQ_INT(swgpu__gpu_map("0", 0, map, 8), SWGPU_ENODEV);
    CHECK_EQ_STR(swgpu_last_error(), "SWGPU_CUDA_DEVICES=0: device 0, but 0 CUDA device(s) found");
    CHECK_EQ_INT(swgpu__gpu_map("0,0,0", 1, map, 2), SWGPU_EINVAL);
    CHECK_EQ_STR(swgpu_last_error(), "SWGPU_CUDA_DEVICES=0,0,0: more than 2 GPUs");
}

int main(void)
{
    gpu_map_cases();
    exact_cases();
    random_cases();
    return tap_done();
}
