/*
 * search/search.h - the database search (never installed): the driver
 * (search.c: scan every subject with the chosen engine, select hits,
 * align them, E-values), its options and checks (opts.c), the strands of
 * a DNA search (strands.c), hit selection (hits.c), the alignment
 * pipeline (pipeline.c), the engine choice (backend.c), merging part
 * results (merge.c) and the output formats (format.c).
 *
 * A result is owned by the caller (swgpu_search_result_destroy).
 */
#ifndef SWGPU_SEARCH_H
#define SWGPU_SEARCH_H

#include "engine/engine.h"
#include "pssm/pssm.h"
#include "io/io.h"

#include <pthread.h>

/** Which hits of each query a search aligns: the first `first`, and those
 *  among the first `upto` whose E-value is <= evalue (unless first_only says
 *  otherwise for the query); the others keep no
 *  alignment (aln.score = score, no CIGAR), as with opts->no_align.  An
 *  iterated search (psi.c) needs the alignments of the hits it includes and
 *  of those it reports only. */
typedef struct {
    size_t first, upto;
    double evalue;
    /* optional: first_only(user, i, qr) nonzero when query i's result qr
     * needs its first `first` alignments only (an iterated search's query
     * that converged: its included hits make no PSSM).  Called once per
     * query, from the thread that hands out the query's hits. */
    int (*first_only)(void *user, size_t i, const swgpu_query_result_t *qr);
    void *user;
    /* with first_only: how many first hits a query that does not converge
     * needs aligned besides those the upto rule takes (an iterated search
     * whose earlier rounds are not reported: 0, as such a query's hits are
     * reported only in a later round) */
    size_t first_go_on;
    /* optional: query_done(done_user, i, qr) once query i's hits are final
     * (its alignments done), from an alignment thread or the thread that
     * hands out its hits: an iterated search builds its next PSSM while
     * the search goes on */
    void (*query_done)(void *done_user, size_t i, const swgpu_query_result_t *qr);
    void *done_user;
    /* optional: the GPU pair context (swgpu__cu_pairs_t) a cuda search uses
     * for its hits' ends instead of making its own (an iterated search's,
     * made once for all its rounds) */
    void *pairs;
} swgpu__align_sel_t;

/** swgpu_search() and swgpu_search_pssm() aligning the hits sel selects
 *  (NULL: all of them). */
int swgpu__search_sel(const swgpu_seqset_t *queries, const swgpu_db_t *db,
                      const swgpu_matrix_t *m, const swgpu_opts_t *opts,
                      const swgpu__align_sel_t *sel, swgpu_search_result_t **out);
/** A PSSM's Karlin-Altschul parameters for a search with it
 *  (swgpu__pssm_karlin_km), computed ahead: failed nonzero (msg: why) when
 *  they could not be had; the search then warns and uses the matrix's. */
typedef struct {
    swgpu_karlin_t k;
    int failed;
    char msg[256];
} swgpu__pssm_stat_t;

/** stats: each PSSM's parameters computed ahead (an iterated search
 *  computes them as it builds the PSSMs), or NULL: computed here. */
int swgpu__search_pssm_sel(const swgpu_pssm_t *const *pssms, size_t n, const swgpu_db_t *db,
                           const swgpu_matrix_t *m, const swgpu_opts_t *opts,
                           const swgpu__align_sel_t *sel, const swgpu__pssm_stat_t *stats,
                           swgpu_search_result_t **out);


/** The one dispatch point (backend.c): the engine for o->backend. */
int swgpu__engine_select(const swgpu_opts_t *o, const swgpu_engine_ops_t **ops);

/* ---- shared by the files of search/: the search driver (search.c), its
 *      options (opts.c), strands (strands.c), hit selection (hits.c) and
 *      alignment pipeline (pipeline.c) ---- */

/* Candidate hit while scanning: score, database index, E-value. */
typedef struct {
    int32_t score;
    uint32_t target;
    double evalue;
    int minus;      /* the score is the subject's minus strand's */
} swgpu__cand_t;

/* E-values below this compare equal in the ranking by E-value, as in
 * BLAST+ (blast_hits.c, s_EvalueComp), which prints them as 0.0. */
#define SWGPU__RANK_EVALUE_TIE 1.0e-180

/* The order of the hits when their E-values fall with the score alone (the
 * length-adjusted model: parameters without Spouge's set, such as fitted
 * ones): SWGPU_RANK_EVALUE's order, got from scores without E-values
 * (score descending, then database index descending).  hits.c's
 * candidates() uses it; never a swgpu_opts_t.rank. */
#define SWGPU__RANK_BY_SCORE_LAST ((swgpu_rank_t)2)

/* 1 if hit a (score sa, E-value ea, database index ta) ranks before hit b
 * under rank (swgpu_opts_t.rank; SWGPU_RANK_EVALUE follows BLAST+'s
 * s_EvalueCompareHSPLists, blastp 2.12 checked on tests/data/rank_*.fa). */
static inline int swgpu__rank_before(swgpu_rank_t rank, int32_t sa, double ea, uint64_t ta,
                                     int32_t sb, double eb, uint64_t tb)
{
    if (rank == SWGPU_RANK_EVALUE) {
        double ka = ea < SWGPU__RANK_EVALUE_TIE ? 0.0 : ea;
        double kb = eb < SWGPU__RANK_EVALUE_TIE ? 0.0 : eb;
        if (ka != kb)
            return ka < kb;
    }
    if (sa != sb)
        return sa > sb;
    return rank == SWGPU_RANK_SCORE ? ta < tb : ta > tb;
}

/* One hit's alignment in the queue (pipeline.c). */
typedef struct {
    size_t query;
    size_t hit;
    int ended;          /* 1: qend, tend hold the hit's end (computed on the GPU) */
    int64_t qend, tend;
    int begun;          /* 1: qbeg, tbeg hold its begin as well */
    int64_t qbeg, tbeg;
} swgpu__job_t;

/*
 * The strands of a DNA search.  The engines scan the queries' reverse
 * complements against the subjects as stored: the score of a query's
 * reverse complement against a subject is the score of the query against the
 * subject's reverse complement, since a DNA matrix (swgpu_matrix_dna: match
 * and mismatch) scores two codes as it scores their complements.  With both
 * strands, engine query 2i is query i and 2i+1 its reverse complement;
 * swgpu__strands_sink() keeps the first of the two score arrays to come
 * until the other one does, then hands the query's sink the better of each
 * subject's two scores (plus on a tie) and which one it was.
 */
typedef struct {
    swgpu_scan_sink_t inner;   /* the sink of the queries */
    swgpu_scan_ahead_t inner_ahead; /* its companion (NULL: none; set after init) */
    void *user;
    int both, minus;           /* two engine queries per query / the minus strand only */
    uint64_t n;                /* scores per query (database sequences) */
    int32_t **pending;         /* both: per query, the first strand's scores, until the other */
    uint8_t *pending_minus;    /* ... and which strand they are */
    int32_t *merged;           /* both: the query's best of two */
    uint8_t *flags;            /* per scan position, 1: the minus strand's score */
    const uint8_t **flags_out; /* set before each call of inner: flags, or NULL (all plus) */
    int32_t *ahead_rows;       /* both, ahead: the merged rows offered, ahead_cap of them */
    size_t ahead_cap;
    size_t *ahead_pos;         /* both, ahead: per engine query, its place in the batch + 1 */
    uint8_t *res;              /* the reverse complements' residues */
    swgpu__query_t *eq;        /* the engine queries (NULL: the queries themselves) */
    size_t neq;
} swgpu__strands_t;

/* A hit's further alignments (hsps.c), until they join the hits. */
typedef struct {
    swgpu_hit_t *h;
    size_t n, cap;
} swgpu__hsp_list_t;

/* A search's state from the scan to the alignments: what sink() needs
 * (hits.c) and the alignment queue with its threads (pipeline.c). */
typedef struct {
    const swgpu__query_t *qs; /* the queries, nq of them, and their ids */
    const char *const *ids;
    const swgpu_db_t *db;
    const swgpu_matrix_t *m;
    const swgpu_opts_t *o;
    const swgpu__align_sel_t *sel; /* which hits to align (NULL: all) */
    swgpu_search_result_t *r;
    /* per-query selection (sink) */
    swgpu_alphabet_t alphabet;
    int have_fixed, have_fallback;
    swgpu_karlin_t fixed, fallback;
    const swgpu_karlin_t *qfixed; /* PSSM queries: each one's own (swgpu_pssm_karlin) */
    size_t n_fallback;
    const uint64_t *tlen;
    swgpu_karlin_t *pre;     /* search_ahead: per query, its fitted parameters ... */
    uint8_t *pre_ok;         /* ... where 1 (else, a failed fit too, sink() fits) */
    size_t cap;
    swgpu__cand_t *heap;
    const uint32_t *id_ord;  /* --no-self: database indices sorted by id */
    const uint8_t *minus;    /* the query in sink(): per scan position, 1 where the score is
                                the minus strand's (NULL: all plus) */
    swgpu__strands_t strands;
    /* progress (opts->progress): queries and cells done, when the scan began
     * and when progress was last reported */
    size_t n_done;
    uint64_t cells_done, cells_total;
    double t0, t_report;
    /* the alignment queue */
    pthread_mutex_t lock;
    pthread_cond_t cv;
    swgpu__job_t *jobs;
    size_t n_jobs, cap_jobs, next;
    int closed;
    double align_cpu; /* CPU seconds the alignment threads used (phase timings) */
    /* GPU ends (see FEED_MIN) */
#if SWGPU_HAVE_CUDA
    swgpu__cu_pairs_t *pairs;
#endif
    int feeding;            /* the feeder thread runs */
    pthread_t *tid;         /* the alignment threads, started of them */
    size_t started;
#if SWGPU_HAVE_CUDA
    pthread_t feeder_th;
    int have_feeder, own_pairs;
#endif
    size_t n_workers;
    swgpu__job_t *ready;
    size_t n_ready, cap_ready, rnext;
    size_t n_gpu_ends;
    double job_s; /* the workers' seconds on host jobs (ends not from the GPU), job_n of them */
    size_t job_n;
    size_t *left; /* sel->query_done: per query, its alignments not done yet */
    swgpu__hsp_list_t **more; /* opts->max_hsps > 1: per query, per hit, its further
                                 alignments (hsps.c) */
    /* the first failure in (query, hit) order */
    int status;
    swgpu__job_t bad;
    char msg[1024];
} swgpu__pipe_t;

/* options and input checks (opts.c) */
/** Common checks of a search's database, matrix and options; the queries'
 *  alphabet qa must be the database's and the matrix's. */
int swgpu__search_check(swgpu_alphabet_t qa, const swgpu_db_t *db, const swgpu_matrix_t *m,
                        const swgpu_opts_t *opts);
/** Scores are 32-bit: the best possible score of query i (id), smax * qlen,
 *  must fit. */
int swgpu__query_range_check(const swgpu__query_t *q, const char *id, size_t i, int32_t smax);
/** The sequences of a query set as the engines' queries, checked against
 *  the database, matrix and options (*qs and *ids: the caller frees them). */
int swgpu__seqset_queries(const swgpu_seqset_t *queries, const swgpu_db_t *db,
                          const swgpu_matrix_t *m, const swgpu_opts_t *opts,
                          swgpu__query_t **qs, const char ***ids);

/* strands (strands.c) */
void swgpu__strands_free(swgpu__strands_t *st, size_t nq);
/** The engine queries of nq queries qs (st->eq, st->neq) for opts->strand,
 *  and the state of swgpu__strands_sink() passing scores on to
 *  inner(user, ...); st->eq NULL: the queries themselves.  n: the
 *  database's sequences. */
int swgpu__strands_init(swgpu__strands_t *st, const swgpu__query_t *qs, size_t nq,
                        swgpu_alphabet_t qa, const swgpu_opts_t *opts, uint64_t n,
                        swgpu_scan_sink_t inner, void *user, const uint8_t **flags_out);
/** The engine's scores of engine query k (a swgpu_scan_sink_t on a strands_t). */
int swgpu__strands_sink(void *user, size_t k, const int32_t *scores);
/** A batch's rows to inner_ahead (a swgpu_scan_ahead_t on a strands_t).
 *  Both strands: the merged rows (as the sink will make them) of the
 *  queries whose second strand is in the batch, the first being in it too
 *  or pending, in the order their sink calls will come. */
int swgpu__strands_ahead(void *user, size_t n, const size_t *idx, const int32_t *const *rows);
/** Every engine query of st (qs: the queries) scanned by ops (state: its
 *  create()'s) against n database sequences into st's sink; counters into
 *  stats; what names the caller in messages ("search"). */
int swgpu__strands_scan(const swgpu_engine_ops_t *ops, void *state, swgpu__strands_t *st,
                        const swgpu__query_t *qs, uint64_t n, swgpu_scan_stats_t *stats,
                        const char *what);

/* hit selection (hits.c) */
/** --no-self: db's indices sorted by id into *out (malloc'd) */
int swgpu__id_order(const swgpu_db_t *db, uint32_t **out);
/** The engine's scores of query i (a swgpu_scan_sink_t on a swgpu__pipe_t):
 *  statistics, the top hits, their queued alignments. */
int swgpu__search_sink(void *user, size_t i, const int32_t *scores);
/** The arrays of swgpu__search_ahead's fits (c->pre, c->pre_ok), made before
 *  the scan where the scoring has no published parameters: 1 when made
 *  (0: nothing to fit ahead, or no memory for it: sink() fits). */
int swgpu__search_ahead_init(swgpu__pipe_t *c);
/** A batch's rows ahead of their sink() calls (a swgpu_scan_ahead_t on a
 *  swgpu__pipe_t): the queries' fitted parameters, on several threads
 *  (nothing before swgpu__search_ahead_init); safe from several threads at
 *  once for distinct queries. */
int swgpu__search_ahead(void *user, size_t n, const size_t *idx, const int32_t *const *rows);

/* the alignment pipeline (pipeline.c) */
/** Queue the alignments of query i's hits. */
int swgpu__push_jobs(swgpu__pipe_t *c, size_t i);
/** An alignment thread: aligns queued hits until the queue is closed and
 *  empty. */
void *swgpu__align_worker(void *arg);
/** The alignment threads of a search with engine ops (and the feeder of
 *  the hits' ends on the GPU), waiting for the first hits. */
void swgpu__aligners_start(swgpu__pipe_t *c, const swgpu_engine_ops_t *ops);
/** Close the queue (failed: drop what is queued, else align it here when
 *  no thread could be started) and join the threads; returns the number of
 *  threads that aligned. */
size_t swgpu__aligners_close(swgpu__pipe_t *c, int failed);
/** The lock, condition and queues of c (the threads closed). */
void swgpu__pipe_free(swgpu__pipe_t *c);

/* further alignments per subject (hsps.c) */
/** Hit h of query result qr (query q, its first alignment done): its
 *  further alignments (opts->max_hsps) into L, best first, numbered
 *  (swgpu_hit_t.hsp 1, 2, ...). */
int swgpu__hsps_of_hit(const swgpu__query_t *q, const swgpu_query_result_t *qr, size_t h,
                       const swgpu_db_t *db, const swgpu_matrix_t *m, const swgpu_opts_t *o,
                       swgpu__hsp_list_t *L);
/** qr's hits with L[h]'s after hit h (L[0 .. qr->n_hits), emptied). */
int swgpu__hsps_splice(swgpu_query_result_t *qr, swgpu__hsp_list_t *L);
void swgpu__hsp_list_free(swgpu__hsp_list_t *L);
/** c->more for nq queries when opts->max_hsps > 1 (n_hits: each one's
 *  hits, NULL: lists made by swgpu__hsps_lists_query()); c->more[i] holds
 *  query i's lists. */
int swgpu__hsps_lists(swgpu__pipe_t *c, size_t nq);
int swgpu__hsps_lists_query(swgpu__pipe_t *c, size_t i);
/** Every query's further alignments into its hits (c->more freed). */
int swgpu__hsps_splice_all(swgpu__pipe_t *c, size_t nq);
void swgpu__hsps_lists_free(swgpu__pipe_t *c, size_t nq);

#endif /* SWGPU_SEARCH_H */
