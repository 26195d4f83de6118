/*
 * score/score.h - scoring systems (never installed): the substitution
 * matrix (struct swgpu_matrix, built-in tables in matrix_data.c) and the
 * query as every engine and aligner scores it (swgpu__query_t: a sequence
 * under a matrix, or the rows of a PSSM).
 *
 * A matrix is owned by its creator (swgpu_matrix_destroy frees it); a
 * swgpu__query_t only points into memory its maker keeps alive.
 */
#ifndef SWGPU_SCORE_H
#define SWGPU_SCORE_H

#include "base/base.h"

struct swgpu_matrix {
    char name[64];
    swgpu_alphabet_t alphabet;
    int32_t s[SWGPU_NCODES][SWGPU_NCODES]; /* s[a][b], codes beyond the alphabet score min */
    int min, max;
    int match, mismatch;                   /* DNA matrices only */
    int builtin;                           /* 1 if a built-in table */
};

/*
 * One query as the engines and the pair aligners score it.  Query position
 * i scores against subject code c as
 *     rows ? rows[i * SWGPU_NCODES + c] : m->s[res[i]][c]
 * with m the matrix of the engine or the call.  rows, when set, is a
 * position-specific score matrix (a PSSM, src/pssm.c): len rows of
 * SWGPU_NCODES scores; smin / smax are the least and greatest of all of
 * them (entries may be SWGPU_PSSM_FORBIDDEN), smin16 the least above
 * SWGPU__ALN_FORBID16 (simd/simd.h; a lower bound of it will do: a
 * query on a stretch of a PSSM's positions keeps the PSSM's; set it when
 * rows change).  res is always set: the
 * query's residue codes (for a PSSM its query residues, which alignment
 * statistics and --no-self compare with the subject's; never scored).
 */
typedef struct {
    const uint8_t *res;
    size_t len;
    const int32_t *rows;
    int32_t smin, smax, smin16;
} swgpu__query_t;

/** A query scored by the matrix rows of its residues. */
static inline swgpu__query_t swgpu__query_plain(const uint8_t *res, size_t len)
{
    swgpu__query_t q = {res, len, NULL, 0, 0, 0};
    return q;
}

/** The least and greatest score q uses under m: the rows' range, or m's. */
static inline void swgpu__query_range(const swgpu__query_t *q, const swgpu_matrix_t *m,
                                      int32_t *smin, int32_t *smax)
{
    *smin = q->rows ? q->smin : m->min;
    *smax = q->rows ? q->smax : m->max;
}

/* ----------------------------- built-in tables (matrix_data.c) */

#include <stdint.h>

typedef struct {
    const char *name;     /* "BLOSUM62" */
    const char *letters;  /* header letters in the file's order */
    const int8_t *scores; /* row-major, strlen(letters)^2 values */
} swgpu__matrix_table_t;

/** Terminated by an entry with name NULL. */
extern const swgpu__matrix_table_t swgpu__matrix_tables[];

#endif /* SWGPU_SCORE_H */
