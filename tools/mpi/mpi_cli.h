/*
 * mpi_cli.h - swgpu-mpi: the swgpu tool with its search and long alignment
 * split across MPI ranks (the files of tools/mpi, built with mpicc when present).
 *
 * Every rank runs the same command line through cli_main(); the hooks of
 * cli.h hand the work to share.c (the database split), search.c and
 * align.c.  Failures are agreed on at fixed points (mpi_agree, a collective
 * every rank reaches in the same order): the first rank that failed by
 * itself prints its message once, every rank exits with status 1, and the
 * output file, which only rank 0 writes (to a temporary name, renamed once
 * complete), is never left.
 */
#ifndef SWGPU_MPI_CLI_H
#define SWGPU_MPI_CLI_H

#include "cli.h"

#include <mpi.h>

typedef struct {
    int rank, size;
    int thread_level;  /* what MPI_Init_thread provided */
    int known;         /* 1 once a failure has been agreed on: no more collectives */
    int origin;        /* the rank whose own failure is reported */
    int consequence;   /* 1: this rank failed because another rank did */
    int have_msg;
    char msg[2048];    /* this rank's first error message */
} mpi_state_t;

extern mpi_state_t mpi_g;

/* Every rank: did any rank fail so far?  failed: this rank's own state.
 * 0 if none did; -1 otherwise (the failure is then known everywhere, and
 * callers return without further collectives).  Once known, returns -1 at
 * once. */
int mpi_agree(int failed);

/* Mark this rank's failure as caused by another rank's (not reported) and
 * return the status to pass up. */
int mpi_peer_failed(void);

/* Test hook: 1 if SWGPU_MPI_FAIL=RANK:PHASE names this rank and phase (the
 * failure is then reported like any other, with a message naming it). */
int mpi_inject(const char *phase);

/* The further HSPs (--max-hsps) that rank 0 gathers from the ranks that
 * align them (hsps.c): hit h of query i, a subject's first, and its
 * further HSPs after it. */
typedef struct {
    size_t i, f;     /* query i's first hit f in the merged result */
    swgpu_hit_t h;
} mpi_hsp_t;
typedef struct {
    mpi_hsp_t *v;
    size_t n, cap;
} mpi_hsps_t;
/* append x (its alignment taken over) as a further HSP of hit f of query i */
int mpi_hsps_add(mpi_hsps_t *x, size_t i, size_t f, const swgpu_hit_t *h);
/* the further HSPs into r, each after its subject's first hit and the
 * HSPs numbered before it; x emptied */
int mpi_hsps_splice(mpi_hsps_t *x, swgpu_search_result_t *r);
void mpi_hsps_free(mpi_hsps_t *x);

/* the hooks: each rank's share of the database (share.c), the search
 * (search.c), the long alignment (align.c) */
int mpi_db_open(const char *path, swgpu_alphabet_t type, const swgpu_seqset_t *queries,
                const swgpu_opts_t *o, uint64_t max_memory, swgpu_db_t **db,
                swgpu_read_info_t *info);

/* This rank's part of a makedb database streamed from disk (share.c decides,
 * search.c scans): parts > 1 when the part does not fit the rank's memory
 * budget (or SWGPU_STREAM_PARTS=N asks for N), its range [from, to) of the
 * whole; the rank's database handle then holds none of its sequences. */
typedef struct {
    const char *path;
    double from, to;
    size_t parts;      /* 0 or 1: not streamed */
    uint64_t budget;   /* the rank's host memory budget, bytes */
} mpi_stream_t;
extern mpi_stream_t mpi_stream;
/* Every rank: the ranks' parts said by rank 0 (-v); with fitting (fitted
 * statistics, which need every score of a query at once) and any rank
 * streaming, refused on every rank: -1. */
int mpi_stream_agree(int fitting);
/* A streamed part: the hits of r that its range holds, read back into
 * *held (the caller's). */
int mpi_stream_held(const swgpu_search_result_t *r, swgpu_db_t **held);
int mpi_search(const swgpu_seqset_t *queries, const swgpu_db_t *db, const swgpu_matrix_t *m,
               const swgpu_opts_t *o, swgpu_search_result_t **res, swgpu_db_t **names);
int mpi_align_long(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen,
                   const swgpu_matrix_t *m, const swgpu_long_opts_t *o, swgpu_aln_t *out,
                   swgpu_long_stats_t *st);

#endif
