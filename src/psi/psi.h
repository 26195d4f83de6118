/*
 * psi/psi.h - the iterated (PSI-BLAST-style) search (never installed): a
 * position-specific score matrix (PSSM) from the hits of one round
 * (swgpu_pssm_from_hits), and rounds of searching with it
 * (swgpu_search_iterate; both in include/swgpu.h).  The files, in the order
 * of the steps below:
 *   msa.c        the alignment M: a row from a hit's alignment, the purge (2)
 *   rescan.c     a row's further alignments (the end of step 1)
 *   pssm_arith.c the PSSM arithmetic (3-6): weights, pseudocounts, scaling
 *   hits.c       one query's PSSM from its hits, the steps in order
 *   pool.c       a round's builds on threads while its search goes on
 *   psi.c        the rounds (swgpu_search_iterate)
 * A PSSM made here is its caller's (swgpu_pssm_destroy); errors return as
 * statuses (swgpu__fail).
 *
 * The PSSM follows the published method of PSI-BLAST:
 *   Altschul SF, Madden TL, Schaffer AA, Zhang J, Zhang Z, Miller W,
 *   Lipman DJ (1997) "Gapped BLAST and PSI-BLAST: a new generation of protein
 *   database search programs", Nucleic Acids Res 25:3389-3402;
 *   Schaffer AA, Aravind L, Madden TL, Shavirin S, Spouge JL, Wolf YI,
 *   Koonin EV, Altschul SF (2001) "Improving the accuracy of PSI-BLAST protein
 *   database searches with composition-based statistics and other
 *   refinements", Nucleic Acids Res 29:2994-3005 (gaps in columns, the
 *   underlying matrix's frequency ratios in the pseudocounts);
 *   Altschul SF, Gertz EM, Agarwala R, Schaffer AA, Yu YK (2009) "PSI-BLAST
 *   pseudocounts and the minimum description length principle", Nucleic
 *   Acids Res 37:815-824 (column-specific pseudocounts, BLAST+'s default);
 *   Henikoff S, Henikoff JG (1994) "Position-based sequence weights",
 *   J Mol Biol 243:574-578.
 * with the constants BLAST+ 2.12 uses.  In order:
 *
 *  1. The alignment M: the query is row 0; every hit with an E-value <= the
 *     inclusion threshold adds a row holding, at each query position its
 *     alignment covers, the subject residue aligned there or a gap (a query
 *     residue against nothing); subject residues between query positions are
 *     left out.  Letters other than the 20 amino acids count as X.  As
 *     psiblast puts every HSP of a subject that meets the threshold in the
 *     subject's row (a domain of the subject aligned to each repeat of the
 *     query), the row then takes, while one meets the threshold, the best
 *     local alignment of the subject with a stretch of the query that the
 *     row does not cover yet (scored as the round scored the query, its
 *     E-value as the round's); these never overlap in the query.
 *  2. Purging: a stretch of a row identical to the query (100%) is removed,
 *     and of two rows whose overlapping stretch is >= 94% identical the
 *     later one loses it (X left out of the counts); a row with nothing left
 *     drops out.
 *  3. Sequence weights, per query position i: the rows aligned at i, and the
 *     block of columns around i in which every one of those rows is aligned
 *     (the intersection of their aligned runs).  Within the block each row
 *     earns 1 / (r s) per column, r the number of distinct letters in the
 *     column (gap and X included), s the number of rows with its letter
 *     (Henikoff & Henikoff's position-based weights); the weights are
 *     normalised to sum to 1 (equal weights when every column is uniform).
 *     The weighted letter counts of column i are its observed frequencies
 *     f; a gap's weight is spread over the amino acids by their background
 *     frequencies.
 *  4. Effective observations N_i: in the half of the block's columns with
 *     the most distinct amino acids, their average number of distinct
 *     amino acids, turned into the number of independent draws from the
 *     matrix's background b that would show that many on average; at most
 *     the rows aligned at i, minus one.
 *  5. Pseudocounts (2009): the relative entropy R of the column's
 *     frequencies (with 5.5 pseudocounts drawn from b added) to b,
 *     a = 0.0457 / R^0.8, beta = 500 a / (1 - a) (a column with nothing
 *     observed: beta 30, N 0).  The target frequencies are
 *         Q_r / p_r = (N f_r / p_r + beta sum_j f_j q_rj / (p_r p_j)) / (N + beta).
 *  6. Scores: ln(Q_r / p_r) / lambda_u, lambda_u the ungapped lambda of the
 *     matrix (its "ideal" one, Robinson & Robinson frequencies p); a column
 *     with no observation (only the query aligned there) takes its query
 *     residue's frequency ratios in the matrix's own unit, log2(ratio) u,
 *     which is the matrix row but for the rounding (pssm_arith.c); then
 *     all scores are multiplied by the factor that brings the PSSM's own
 *     ungapped lambda to lambda_u (found by bisection) and rounded.
 */
#ifndef SWGPU_PSI_H
#define SWGPU_PSI_H

#include "search/search.h"

#include <pthread.h>
#include <stdatomic.h>

/** Step 2 of a PSSM from hits (msa.c), for tests: purge the alignment of n
 *  rows of L columns (row-major letters let, 0/1 aligned flags al, use[r]
 *  0 once row r is gone; row 0 the query), fast (1) or by the reference
 *  (0); both must leave the same al and use.  SWGPU_ENOMEM or SWGPU_OK. */
int swgpu__psi_purge(uint8_t *let, uint8_t *al, uint8_t *use, size_t n, size_t L, int fast);

/* ==== Between the files of src/psi (not for tests or other folders) ==== */

#define PSI_NSTD 20     /* the amino acids: codes 0..19 */
#define PSI_X 22        /* X: every other letter of a row of M */
#define PSI_GAP 27      /* a gap in a row of M, as a letter */
#define PSI_NLET 28     /* letters of M: 20 amino acids, X, GAP; codes 20..26 unused */
#define PSI_MAX_OBS 400 /* independent observations are counted up to this */

/* msa.c: the alignment M (step 1) and its purge (step 2). */
typedef struct {
    size_t L, n;      /* columns (query positions), rows (query first) */
    uint8_t *let;     /* n * L letters */
    uint8_t *al;      /* n * L: 1 where the row is aligned */
    uint8_t *use;     /* n: 0 once purged away */
} swgpu__psi_msa_t;

/* A residue code as a letter of M. */
static inline uint8_t swgpu__psi_letter(uint8_t code)
{
    return code < PSI_NSTD ? code : PSI_X;
}

/* Fill row r from a hit's alignment against target t; -1 when the
 * alignment does not fit the sequences (no message set). */
int swgpu__psi_add_row(swgpu__psi_msa_t *M, size_t r, const swgpu_aln_t *a,
                       const swgpu_seq_t *t);
/* use[r] = 0 when row r is aligned nowhere. */
void swgpu__psi_drop_if_empty(swgpu__psi_msa_t *M, size_t r);
/* Step 2: stretches identical to the query, then near-identical rows (fast:
 * on the rows' segments).  SWGPU_ENOMEM or SWGPU_OK. */
int swgpu__psi_purge_rows(swgpu__psi_msa_t *M, int fast);

/* pssm_arith.c: steps 3-6.  What the construction needs of the matrix: its
 * ideal ungapped lambda, the frequency ratios it was made from, the
 * background of the pseudocounts. */
typedef struct {
    const swgpu_matrix_t *m;
    double lambda;                 /* ideal ungapped lambda (Robinson & Robinson) */
    double ratio_lambda;           /* ln 2 / units per bit, or lambda when not known */
    double K;                      /* ideal ungapped K (swgpu__pssm_karlin_km's m_K) */
    double ratio[PSI_NSTD][PSI_NSTD + 1]; /* e^{ratio_lambda s_rj}; column NSTD: against X */
    double bg[PSI_NSTD];           /* b: the matrix's background, or Robinson & Robinson */
    double expno[PSI_MAX_OBS];     /* expected distinct amino acids in j draws from b */
} swgpu__psi_basis_t;

/* The basis of matrix m (protein); a status. */
int swgpu__psi_basis_init(swgpu__psi_basis_t *B, const swgpu_matrix_t *m);
/* The PSSM of alignment M (rows purged, the query first) for query codes
 * qcodes, named id, into *out; a status. */
int swgpu__psi_build(const swgpu__psi_basis_t *B, const swgpu__psi_msa_t *M,
                     const uint8_t *qcodes, const char *id, swgpu_pssm_t **out);

/* rescan.c: the further alignments of step 1.  How a round scored its
 * query: */
typedef struct {
    swgpu__query_t q;        /* the query's residues with m's rows, or the round's PSSM */
    const swgpu_matrix_t *m;
    int gap_open, gap_extend;
    swgpu__evalue_ctx_t ev;  /* the round's E-values of this query */
    int32_t min_score;       /* no score below it has an E-value <= the threshold */
    int32_t *best;           /* per query position: its best score against any residue */
} swgpu__psi_rescan_t;

/* A stretch [a, b) of query positions a row does not cover, and the best
 * local alignment of the subject with it (score 0: none worth computing). */
typedef struct {
    size_t a, b;
    int32_t score;
    int64_t qend, tend; /* relative to a */
} swgpu__psi_stretch_t;

/* S for query q as searched (with PSSM searched, or its residues) in the
 * round of qr on db; S->best is the caller's to free, also on failure. */
int swgpu__psi_rescan_init(swgpu__psi_rescan_t *S, const swgpu_seq_t *q,
                           const swgpu_pssm_t *searched, const swgpu_query_result_t *qr,
                           const swgpu_db_t *db, const swgpu_matrix_t *m, const swgpu_opts_t *o,
                           double thr);
/* Row r's further alignments with subject t (E-value <= thr); pre: the
 * row's two first stretches scored ahead, or NULL.  A status. */
int swgpu__psi_add_more(swgpu__psi_msa_t *M, size_t r, const swgpu__psi_rescan_t *S,
                        const swgpu_seq_t *t, double thr, const swgpu__psi_stretch_t *pre);

/* hits.c: one query's PSSM from its hits, in three steps (see there). */
typedef struct {
    swgpu__psi_msa_t M;
    uint8_t *qcodes;
    const swgpu_seq_t *q;
    swgpu_seq_t *t;   /* t[r]: the subject of row r (r >= 1) */
    size_t nset;      /* rows set up (1 + hits; fewer after a failure) */
    const swgpu__psi_rescan_t *S;
    double thr;
    const swgpu__psi_stretch_t *pre; /* row r's two first stretches scored ahead at
                                      * pre[2(r-1)], or NULL */
    /* the first failure in row order (a sequential build's): status, row */
    int rc;
    size_t bad_row;
    char msg[512];
    size_t pending;   /* rows queued whose further alignments are not done (pool.c) */
} swgpu__psi_hits_t;

int swgpu__psi_hits_setup(swgpu__psi_hits_t *H, const swgpu_seq_t *q,
                          const swgpu_query_result_t *qr, const swgpu_db_t *db,
                          const swgpu__psi_rescan_t *S, double thr);
int swgpu__psi_hits_more(swgpu__psi_hits_t *H, size_t r);
int swgpu__psi_hits_finish(const swgpu__psi_basis_t *B, swgpu__psi_hits_t *H,
                           swgpu_pssm_t **out);
void swgpu__psi_hits_failed(swgpu__psi_hits_t *H, size_t r, int rc);
void swgpu__psi_hits_free(swgpu__psi_hits_t *H);

/* pool.c: the PSSMs of one round, built on threads while its search goes
 * on.  The caller (psi.c) allocates the per-job arrays (room for a round's
 * queries) and fills B, db, m, o, thr, stats and, with CUDA, pairs. */
typedef struct {
    swgpu__psi_hits_t *H;
    size_t r;
} swgpu__psi_row_task_t;

typedef struct {
    const swgpu__psi_basis_t *B;
    const swgpu_db_t *db;
    double thr;
    size_t n;                       /* jobs */
    swgpu_seq_t *q;                 /* per job: the query */
    const swgpu_query_result_t **qr; /* its round's hits */
    const swgpu_pssm_t **searched;   /* the PSSM it searched with (NULL: its residues) */
    const swgpu_matrix_t *m;
    const swgpu_opts_t *o;
    swgpu_query_result_t *best;     /* per job: those of them inclusion considers */
    swgpu_pssm_t **out;
    int *rc;
    char (*msg)[512];
    int stats;                      /* 1: the PSSMs' search parameters as well (stat) */
    int *want_stat;                 /* per job: 1 if its PSSM is searched next round */
    swgpu__pssm_stat_t *stat;       /* per job: its PSSM's parameters */
    size_t *order;                  /* the stretch thread's list of jobs for the GPU */
    size_t *jq;                     /* per job: its query's index in the round's search */
    uint8_t *claimed;               /* per job: 1 once a worker took it */
    int closed;                     /* no job comes any more (build_close) */
    int rc_ahead;                   /* a failure of stretches_ahead (out of memory) */
    /* under lock: the next job, the row queue, the jobs taken whose rows are
     * not queued yet, and every swgpu__psi_hits_t's pending count and failure */
    pthread_mutex_t lock;
    pthread_cond_t cv;
    size_t next_job, setting_up;
    swgpu__psi_row_task_t *tasks; /* (freed by the caller) */
    size_t task_head, ntasks, task_cap;
    atomic_ullong cpu_us; /* CPU microseconds of the workers (phase timings) */
    atomic_ullong max_us; /* the longest job's wall microseconds */
    /* the first further stretches of every row scored ahead on the GPU
     * (stretches_ahead): per job its rescan set-up and 2 stretches per
     * included hit, NULL where not */
#if SWGPU_HAVE_CUDA
    swgpu__cu_pairs_t *pairs;
#endif
    swgpu__psi_rescan_t *S;
    swgpu__psi_stretch_t **pre;
    size_t n_ahead;       /* stretches scored ahead (log) */
    double gpu_s;         /* time in their GPU calls (log) */
    size_t n_ready;       /* jobs [0, n_ready) have theirs (or went without: taken first) */
} swgpu__psi_jobs_t;

/* The threads of a round's builds. */
typedef struct {
    pthread_t tid[64];
    size_t started;
    int ahead; /* the stretch thread runs */
#if SWGPU_HAVE_CUDA
    pthread_t ahead_tid;
#endif
} swgpu__psi_pool_t;

/* Start the workers of up to cap jobs (threads: opts->threads); a status. */
int swgpu__psi_build_open(swgpu__psi_jobs_t *J, swgpu__psi_pool_t *P, size_t cap, int threads);
/* The job of query a of the round's search (under no lock; J->n < cap):
 * query q, the hits inclusion considers, the PSSM it searched with; its
 * PSSM's search parameters too when want_stat. */
void swgpu__psi_build_add(swgpu__psi_jobs_t *J, const swgpu__psi_pool_t *P, size_t a,
                          const swgpu_seq_t *q, const swgpu_query_result_t *best,
                          const swgpu_pssm_t *searched, int want_stat);
/* No more jobs: wait for the builds; the first job's failure, or SWGPU_OK
 * (J->out holds the PSSMs either way). */
int swgpu__psi_build_close(swgpu__psi_jobs_t *J, swgpu__psi_pool_t *P);

/* ==== end of the block between the files of src/psi ==== */

#endif /* SWGPU_PSI_H */
