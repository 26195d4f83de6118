/*
 * psi/psi.h - the iterated (PSI-BLAST-style) search (never installed):
 * rounds of search, each building every query's next PSSM from its hits.
 * swgpu_search_iterate (include/swgpu.h) is the entry point; what is here
 * is exposed for tests.
 */
#ifndef SWGPU_PSI_H
#define SWGPU_PSI_H

#include "search/search.h"

/** Step 2 of a PSSM from hits (psi.c), for tests: purge the alignment of n
 *  rows of L columns (row-major letters let, 0/1 aligned flags al, use[r]
 *  0 once row r is gone; row 0 the query), fast (1) or by the reference
 *  (0); both must leave the same al and use.  SWGPU_ENOMEM or SWGPU_OK. */
int swgpu__psi_purge(uint8_t *let, uint8_t *al, uint8_t *use, size_t n, size_t L, int fast);

#endif /* SWGPU_PSI_H */
