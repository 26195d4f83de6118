/*
 * pssm/pssm.h - position-specific score matrices (never installed): their
 * building, reading and writing (PSI-BLAST's ASCII format), their queries
 * and their Karlin-Altschul parameters.  The iterated search that makes
 * them from hits is src/psi.
 *
 * A PSSM is owned by its creator and freed with swgpu_pssm_destroy.
 */
#ifndef SWGPU_PSSM_H
#define SWGPU_PSSM_H

#include "io/io.h"
#include "stats/stats.h"

/** The query of a PSSM (pointers into p, valid while p lives). */
void swgpu__pssm_query(const swgpu_pssm_t *p, swgpu__query_t *q);

/** A PSSM of len positions: query residue codes res, 20 scores per position
 *  (s20[i * 20 + c]), observed[i] 0 where no residue was observed (B, Z, J
 *  then score as BLOSUM62's row of the query residue: see pssm.c), and the
 *  optional per-position figures of the ASCII format (pct: 20 a position,
 *  info, relw; pct NULL: none). */
int swgpu__pssm_build(const char *id, const uint8_t *res, size_t len, const int32_t *s20,
                      const uint8_t *observed, const uint8_t *pct, const double *info,
                      const double *relw, swgpu_pssm_t **out);

/** swgpu_pssm_karlin with m's ideal ungapped K (swgpu__matrix_ideal_karlin,
 *  ~5 ms for BLOSUM62) given as *m_K (NULL: computed here), for callers that
 *  need the parameters of many PSSMs. */
int swgpu__pssm_karlin_km(const swgpu_pssm_t *p, const swgpu_matrix_t *m, int gap_open,
                          int gap_extend, const double *m_K, swgpu_karlin_t *out);

#endif /* SWGPU_PSSM_H */
