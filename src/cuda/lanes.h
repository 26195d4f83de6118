/*
 * lanes.h - how the CUDA engine's query-lane batches (k_qp) lay their
 * queries in lanes.  Host code in every build (tests/test_lanes.c runs it
 * without a GPU); engine_batch.cu's qp_plan uses it.
 */
#ifndef SWGPU_CUDA_LANES_H
#define SWGPU_CUDA_LANES_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * n queries of slots[i] slots each, in the order they are placed (longest
 * first), into 2J lanes: lanes 2j and 2j+1 are the two halves of job j,
 * and job j takes ceil(max(load of lane 2j, of lane 2j+1) / G) passes.
 * lane[i] receives query i's lane, *npass the passes of all jobs.
 *
 * The first plan puts each query into the least loaded lane (ties: the
 * lowest).  A job's passes are then rounded up to whole passes and its two
 * lanes rarely end together: the 2,000 UniProt queries' batches waste
 * 2-4% of their slots so (bench/NOTES-gpu.md v29).  So the plan is made
 * again for fewer passes: P passes in all, dealt evenly to the jobs, each
 * lane filled to its job's passes at most, each query into the lane with
 * the most room left; the fewest P that fits (by bisection between the
 * slots' lower bound and the first plan's passes) is kept when it beats
 * the first plan; pack 0 keeps the first plan alone.  Returns SWGPU_OK,
 * SWGPU_ENOMEM or SWGPU_EINVAL (no jobs, passes of no slots).
 */
int swgpu__qp_pack(const uint32_t *slots, size_t n, uint32_t J, uint32_t G, int pack,
                   uint32_t *lane, uint64_t *npass);

#ifdef __cplusplus
}
#endif

#endif
