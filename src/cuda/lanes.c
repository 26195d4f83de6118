/*
 * lanes.c - the query lanes' packing (lanes.h).
 */
#include "cuda/lanes.h"
#include "base/base.h"

#include <stdlib.h>

/* the lanes as a heap, the lane with the most room on top (ties: the
 * lowest lane); room = cap - load */
typedef struct {
    uint32_t *h;    /* lanes, heap-ordered */
    int64_t *room;  /* by lane */
    uint32_t n;
} lheap_t;

static int above(const lheap_t *q, uint32_t a, uint32_t b)
{
    return q->room[a] != q->room[b] ? q->room[a] > q->room[b] : a < b;
}

static void sift_down(lheap_t *q, uint32_t i)
{
    for (;;) {
        uint32_t l = 2 * i + 1, r = l + 1, t = i;
        if (l < q->n && above(q, q->h[l], q->h[t]))
            t = l;
        if (r < q->n && above(q, q->h[r], q->h[t]))
            t = r;
        if (t == i)
            return;
        const uint32_t x = q->h[i];
        q->h[i] = q->h[t];
        q->h[t] = x;
        i = t;
    }
}

/* One plan: P passes in all, dealt evenly to the J jobs (P = 0: no bound,
 * each query to the least loaded lane).  Returns 0 when a query finds no
 * lane with room for it, else 1 with lane[] and *np (passes of all jobs). */
static int place(const uint32_t *slots, size_t n, uint32_t J, uint32_t G, uint64_t P,
                 lheap_t *q, uint64_t *load, uint32_t *lane, uint64_t *np)
{
    const uint32_t L = 2 * J;
    const int64_t unbounded = INT64_MAX / 4;
    for (uint32_t l = 0; l < L; l++) {
        const uint64_t pj = P / J + (l / 2 < P % J);
        q->room[l] = P ? (int64_t)(pj * G) : unbounded;
        q->h[l] = l;
        load[l] = 0;
    }
    q->n = L;
    for (uint32_t i = L / 2; i-- > 0;)
        sift_down(q, i);
    for (size_t i = 0; i < n; i++) {
        const uint32_t l = q->h[0];
        if (q->room[l] < (int64_t)slots[i])
            return 0;
        lane[i] = l;
        load[l] += slots[i];
        q->room[l] -= slots[i];
        sift_down(q, 0);
    }
    uint64_t sum = 0;
    for (uint32_t j = 0; j < J; j++) {
        const uint64_t mx = load[2 * j] > load[2 * j + 1] ? load[2 * j] : load[2 * j + 1];
        sum += (mx + G - 1) / G;
    }
    *np = sum;
    return 1;
}

int swgpu__qp_pack(const uint32_t *slots, size_t n, uint32_t J, uint32_t G, int pack,
                   uint32_t *lane, uint64_t *npass)
{
    if (J == 0 || G == 0 || J > UINT32_MAX / 2)
        return swgpu__fail(SWGPU_EINVAL, "query lanes: %u jobs of passes of %u slots", J, G);
    const uint32_t L = 2 * J;
    lheap_t q = {(uint32_t *)malloc(L * sizeof(uint32_t)), (int64_t *)malloc(L * sizeof(int64_t)), 0};
    uint64_t *load = (uint64_t *)malloc(L * sizeof *load);
    uint32_t *tmp = (uint32_t *)malloc((n ? n : 1) * sizeof *tmp);
    int rc = SWGPU_OK;
    if (!q.h || !q.room || !load || !tmp) {
        rc = swgpu__fail(SWGPU_ENOMEM, "query lanes: out of memory for %zu queries in %u lanes", n, L);
        goto done;
    }
    uint64_t best = 0, total = 0, np = 0;
    place(slots, n, J, G, 0, &q, load, lane, &best); /* unbounded: always fits */
    for (size_t i = 0; i < n; i++)
        total += slots[i];
    /* the fewest passes in all that fit, between the slots' lower bound
     * and one below the first plan's */
    uint64_t lo = (total + 2ull * G - 1) / (2ull * G), hi = pack ? best : 0;
    if (lo < J)
        lo = J; /* every job some passes: J was chosen to fill the GPU */
    while (lo < hi) {
        const uint64_t mid = lo + (hi - lo) / 2;
        if (place(slots, n, J, G, mid, &q, load, tmp, &np)) {
            hi = mid;
            if (np < best) {
                best = np;
                for (size_t i = 0; i < n; i++)
                    lane[i] = tmp[i];
            }
        } else {
            lo = mid + 1;
        }
    }
    *npass = best;
done:
    free(q.h);
    free(q.room);
    free(load);
    free(tmp);
    return rc;
}
