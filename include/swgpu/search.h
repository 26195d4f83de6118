/*
 * swgpu/search.h - database search, iterated (PSI-BLAST) search and
 * their output formats.
 * Included by swgpu.h: include <swgpu.h>, not this file.
 */
#ifndef SWGPU_SEARCH_API_H
#define SWGPU_SEARCH_API_H

#include "swgpu/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- search */

typedef struct {
    size_t target;    /* index in database order */
    int32_t score;
    double bits;
    double evalue;
    swgpu_aln_t aln;  /* empty (n_cigar 0) when opts.no_align */
    int minus;        /* 1: DNA, the subject's minus strand: aln is the query aligned
                         with the reverse complement of the subject; its cigar reads
                         the query against that reverse complement, tbeg/tend are the
                         aligned interval on the subject as stored (BLAST prints it
                         as sstart = tend > send = tbeg + 1).  0: plus (or protein) */
    int hsp;          /* 0: the subject's best alignment, its first hit (score, bits and
                         rank are the subject's); k > 0 (opts.max_hsps > 1): the subject's
                         (k+1)-th alignment, which follows the hits of hsp 0 .. k-1 of
                         the same target: a subject's HSPs are adjacent, best first (by
                         score; of equal scores, the first hit's strand first), and they
                         share no aligned pair on a strand.  Its score, bits, evalue,
                         minus and aln are its own */
} swgpu_hit_t;

typedef struct {
    size_t query;       /* index in the query set */
    size_t n_hits;      /* best first by swgpu_opts_t.rank (with opts.max_hsps > 1 a
                           subject's further HSPs follow its first: see swgpu_hit_t.hsp) */
    swgpu_hit_t *hits;
    swgpu_karlin_t karlin; /* parameters used for this query */
} swgpu_query_result_t;

typedef struct {
    size_t n_queries;
    swgpu_query_result_t *q;
    const char *backend;   /* name of the engine that scanned (static) */
    uint64_t cells;        /* sum over queries of qlen * db residues */
    uint64_t overflows;    /* targets rescored at a wider precision */
    double scan_seconds;   /* wall time of the database scan (the hits' selection and
                              most alignments overlap it) */
    double align_seconds;  /* wall time the hits' alignments went on after the scan */
} swgpu_search_result_t;

/**
 * Search every query against every database sequence.  Every database
 * sequence is scored exactly; per query the best opts->top_n hits by
 * opts->rank (BLAST's order by default: E-value ascending, every E-value
 * below 1e-180 equal, then score descending, then database index
 * descending) with E-value <= opts->evalue and score > 0 are kept, with
 * alignments.
 * The engine may scan many queries at once (a GPU batches short queries);
 * the hits' alignments are computed on opts->threads threads while the
 * scan goes on.  The result is the same whatever the backend, the batching
 * or the thread count.
 * Thread safety: concurrent calls may share queries, db, m and opts (all
 * read only); each call has its own engine and threads, and its own result.
 */
int swgpu_search(const swgpu_seqset_t *queries, const swgpu_db_t *db,
                 const swgpu_matrix_t *m, const swgpu_opts_t *opts,
                 swgpu_search_result_t **out);
void swgpu_search_result_destroy(swgpu_search_result_t *r);

/**
 * A search split over parts of a database: run swgpu_search() with
 * opts->candidates on each part (swgpu_db_part, swgpu_db_open_part), then
 * merge the parts' results here, then align the kept hits where their
 * targets are (swgpu_search_align() on each part).  The outcome is exactly
 * swgpu_search() on the whole database: the same hits in the same order
 * (opts->rank), the same Karlin-Altschul parameters,
 * bit scores, E-values and alignments.
 */

/** What swgpu_search_merge() needs to know of the whole database. */
typedef struct {
    uint64_t db_sequences;   /* the whole database's sequences */
    uint64_t db_residues;    /* ... and residues */
    /* Only when the matrix and gaps have no published parameters (they are
     * then fitted to each query's scores against the whole database): */
    const uint64_t *tlen;    /* the db_sequences lengths in the whole scan order */
    /* fill out[db_sequences] with query i's scores in the whole scan order
     * (the parts' on_scores arrays, parts in scan order); called once per
     * query, for i = 0, 1, ... in order; a negative return stops the merge */
    int (*scores)(void *user, size_t query, int32_t *out);
    void *user;
} swgpu_merge_src_t;

/**
 * Merge the candidates of nparts parts (results of swgpu_search() with
 * opts->candidates, each over the same queries; parts in any order) into
 * the whole search's result without alignments: per query the parameters,
 * published or fitted (then src->tlen and src->scores are required), the
 * E-value filter (opts->evalue_model, the whole database's size), then the
 * top_n best of those that pass by opts->rank, bit scores and E-values (a candidate's own
 * where the E-value depends on the subject's length).  opts as given to the
 * parts (candidates ignored).
 * cells and overflows are the parts' sums, scan_seconds their maximum.
 * *out is the caller's (swgpu_search_result_destroy).
 */
int swgpu_search_merge(const swgpu_seqset_t *queries, const swgpu_matrix_t *m,
                       const swgpu_opts_t *opts, const swgpu_search_result_t *const *parts,
                       size_t nparts, const swgpu_merge_src_t *src,
                       swgpu_search_result_t **out);

/**
 * Compute the alignments of the hits of r whose target db holds (for a
 * part: its own sequences; others are left as they are) on opts->threads
 * threads, exactly as swgpu_search() computes them.  r->q[i] must be query
 * i (as swgpu_search() and swgpu_search_merge() make them).  Each alignment
 * is checked against its hit's score.
 */
int swgpu_search_align(swgpu_search_result_t *r, const swgpu_seqset_t *queries,
                       const swgpu_db_t *db, const swgpu_matrix_t *m, const swgpu_opts_t *opts);

/**
 * A database larger than the memory a search may use, streamed from disk.
 * swgpu_stream_parts() says into how many parts the makedb file path is
 * cut so that the search's host memory (its resident set: the process so
 * far, two parts' residues and own index entries, the engine's layout of
 * the part it scans, a bit a sequence, with opts->no_self the file's index
 * once) stays within max_memory bytes (0: swgpu_stream_default_memory()):
 * the fewest parts that do.  *parts = 1 when the whole database and its
 * layout fit (search it whole with swgpu_search), and for a database that
 * is not a makedb file (*db_bytes 0; only a makedb file is streamed; when
 * max_memory is given and the file, or a BLAST database's files, are
 * larger, a warning through the logger says it is read whole).
 * *db_bytes: the file's size.  SWGPU_EBUDGET when even parts of one
 * sequence would not fit.  opts: the search's (its thread count).  For a
 * makedb file the environment variable SWGPU_STREAM_PARTS=N (tests) gives N
 * parts whatever the budget (SWGPU_EINVAL when N is not a number >= 1).
 */
int swgpu_stream_parts(const char *path, const swgpu_opts_t *opts, uint64_t max_memory,
                       size_t *parts, uint64_t *db_bytes);

/**
 * swgpu_stream_parts() for the part [from, to) of the makedb file path (the
 * cut of swgpu_db_open_part, 0 <= from <= to <= 1): into how many parts
 * swgpu_search_stream_candidates() cuts that range so that a process
 * searching it alone (an swgpu-mpi rank) stays within max_memory bytes;
 * *parts = 1 when the range with its engine layout fits whole.
 */
int swgpu_stream_parts_range(const char *path, const swgpu_opts_t *opts, uint64_t max_memory,
                             double from, double to, size_t *parts, uint64_t *db_bytes);

/** The host memory a search may use when none is given: 3/4 of the
 *  machine's physical memory (UINT64_MAX when that is unknown). */
uint64_t swgpu_stream_default_memory(void);

/**
 * swgpu_search() of the makedb file path, streamed in nparts parts (cut by
 * residues as swgpu_db_open_part cuts them): each part is read from disk
 * on its own while the one before it is scanned (at most two in memory),
 * scanned with every query for its candidates, then released; the parts'
 * candidates are merged (swgpu_search_merge, the whole database's size),
 * and the hits are aligned on *hits, a database of the hits' sequences
 * alone read back from the file (a part of the whole: the whole's indices,
 * names and size; the output formats take it in place of the database).
 * The result equals swgpu_search()'s on the whole database, hit for hit;
 * the whole-file checksum is checked as swgpu_db_open() checks it.
 * scan_seconds is the parts' scans together.  Not available (SWGPU_EINVAL,
 * saying so): opts->comp_based_stats, opts->candidates and on_scores, and a
 * matrix and gaps without published Karlin-Altschul parameters (fitting
 * them needs every score of a query at once).  *out and *hits are the
 * caller's.  Thread safety as swgpu_search.
 */
int swgpu_search_stream(const swgpu_seqset_t *queries, const char *path, size_t nparts,
                        const swgpu_matrix_t *m, const swgpu_opts_t *opts,
                        swgpu_search_result_t **out, swgpu_db_t **hits);

/**
 * The candidates of the part [from, to) of the makedb file path (what
 * swgpu_search() with opts->candidates gives on swgpu_db_open_part's part),
 * the range streamed from disk in nparts parts as swgpu_search_stream()
 * streams the whole: per query the parts' candidates one after the other
 * (swgpu_search_merge() takes them in any order, with the other ranges').
 * Each part's residues and own index entries are checked as it is read;
 * the whole-file checksum is not (it needs every byte: swgpu_db_verify()).
 * opts->candidates is implied; not available as for swgpu_search_stream():
 * opts->on_scores, opts->comp_based_stats, fitted statistics.  *out is the
 * caller's.
 */
int swgpu_search_stream_candidates(const swgpu_seqset_t *queries, const char *path, double from,
                                   double to, size_t nparts, const swgpu_matrix_t *m,
                                   const swgpu_opts_t *opts, swgpu_search_result_t **out);

/**
 * Every database sequence's exact score against every query, without hits
 * or statistics: out[i * swgpu_db_size(db) + j] is the score of query i
 * against database sequence j (database order); out holds
 * swgpu_seqset_size(queries) * swgpu_db_size(db) entries (the caller's).
 * The engine is chosen as for swgpu_search (opts->backend, kernel, gpus,
 * max_gpu_memory, threads); opts->top_n, evalue, no_align and no_self do not
 * apply.  The scores equal the ones swgpu_search ranks its hits by.  db
 * must be a whole database (SWGPU_EINVAL for a part: swgpu_opts_t.on_scores
 * gives a part's scores).
 * Thread safety: as swgpu_search (concurrent calls on different outputs).
 */
int swgpu_scan_scores(const swgpu_seqset_t *queries, const swgpu_db_t *db,
                      const swgpu_matrix_t *m, const swgpu_opts_t *opts, int32_t *out);

/**
 * Search with position-specific score matrices as queries: pssms[0..n) in
 * place of a sequence set, otherwise exactly swgpu_search() (every
 * database sequence scored exactly, every backend, the same batching,
 * top-N by opts->rank and alignments).  Query position i scores against
 * database residue code c as swgpu_pssm_score(pssms[q], i, c); m must be
 * a protein matrix: it picks the Karlin-Altschul parameters of the
 * E-values and is never used for scores.  With published parameters for m
 * and the gaps, each PSSM's are psiblast's (swgpu_pssm_karlin: m's lambda,
 * K scaled by the PSSM's ungapped K over m's); otherwise they are fitted to
 * each query's scores as in swgpu_search().  Alignments compare the database residues with
 * the PSSM's query residues (swgpu_pssm_residues) for the identity and
 * mismatch counts.  r->q[i].query is the index i into pssms.  db must be a
 * protein database.  The PSSMs must outlive the call only.
 */
int swgpu_search_pssm(const swgpu_pssm_t *const *pssms, size_t n, const swgpu_db_t *db,
                      const swgpu_matrix_t *m, const swgpu_opts_t *opts,
                      swgpu_search_result_t **out);

/* ------------------------------------------- iterated search (PSI-BLAST) */

/**
 * The PSSM that PSI-BLAST's method makes from a round of search: the hits
 * of qr (a query's result, with alignments) with E-value <= inclusion_evalue
 * aligned to the query (query->res, its len residues; id copied), each in a
 * row of its own; with opts, a row then also takes its subject's best local
 * alignments with the stretches of the query it does not cover yet, while
 * their E-values (qr->karlin, opts' gaps and E-value model, db's size) are
 * <= inclusion_evalue, as psiblast includes every HSP of a subject (opts
 * NULL: the hits' own alignments only).  searched is the PSSM the round
 * searched with, which scores those alignments (NULL: the query's residues
 * scored by m; otherwise its length is the query's).  The rows are purged of
 * stretches identical to the query and of near-identical rows (94%); then
 * Henikoff & Henikoff position-based sequence weights, data-dependent
 * pseudocounts (Altschul et al. 2009, BLAST+'s default), target
 * frequencies turned into scores in the units of matrix m and scaled so
 * that the PSSM's ungapped lambda is m's (src/psi.c describes each step and
 * cites the papers).  qr NULL or without included hits: every position
 * unobserved, scored by m's frequency ratios of its query residue and
 * scaled the same way (psiblast's PSSM for a query whose only hit is
 * itself).  db is the database the hits index; m a protein matrix.  The
 * PSSM records the weighted observed percentages, the information per
 * position and the relative weights that swgpu_pssm_write() prints.
 * SWGPU_EINVAL when an included hit has no alignment.  *out is the caller's.
 */
int swgpu_pssm_from_hits(const swgpu_seq_t *query, const swgpu_pssm_t *searched,
                         const swgpu_query_result_t *qr, const swgpu_db_t *db,
                         const swgpu_matrix_t *m, const swgpu_opts_t *opts,
                         double inclusion_evalue, swgpu_pssm_t **out);

/** Options of swgpu_search_iterate(); swgpu_psi_opts_init() sets the defaults. */
typedef struct {
    int iterations;          /* rounds at most (>= 1; default 1: one search) */
    double inclusion_evalue; /* a round's hits with E-value <= this make the next round's
                                PSSM (default 0.002, psiblast's) */
    int max_hits;            /* a round includes hits among each query's best max_hits
                                (by opts->rank: psiblast's order by default) only
                                (default 500, psiblast's -max_target_seqs), whatever
                                opts->top_n, the number of hits the results keep */
    int final_pssm;          /* 1 (default): make each query's PSSM of its last round's
                                hits (final_pssm); 0: leave final_pssm NULL and save
                                that work */
    int align_rounds;        /* 1 (default): every round's hits carry their alignments;
                                0: only each query's last round's (in earlier rounds the
                                hits the next PSSM does not take keep score and E-value,
                                aln.score = score, no CIGAR), which saves their
                                alignments when only the last round is reported (with
                                final_pssm 0; final_pssm 1 aligns as 1) */
} swgpu_psi_opts_t;

void swgpu_psi_opts_init(swgpu_psi_opts_t *o);

/** What swgpu_search_iterate() found; swgpu_iterate_result_destroy() frees it. */
typedef struct {
    size_t n_queries;
    size_t n_rounds;                  /* rounds run (the most any query ran) */
    swgpu_search_result_t **round;    /* round[k]: round k+1, q[i] query i (no hits where the
                                         query had stopped before) */
    swgpu_pssm_t **pssm;              /* pssm[k * n_queries + i]: the PSSM query i searched
                                         with in round k+1 (k >= 1; NULL for k = 0 and once
                                         it had stopped) */
    swgpu_pssm_t **final_pssm;        /* per query: the PSSM of its last round's hits (NULL
                                         unless psi->final_pssm) */
    size_t *last_round;               /* per query: its last round (1..n_rounds); its results
                                         are round[last_round[i] - 1]->q[i] */
    size_t *included;                 /* included[k * n_queries + i]: hits query i included in
                                         round k+1 (before purging) */
    int *converged;                   /* per query: 1 when it stopped because its last round
                                         included no hit that the round before had not */
} swgpu_iterate_result_t;

void swgpu_iterate_result_destroy(swgpu_iterate_result_t *r);

/**
 * An iterated search (PSI-BLAST): round 1 searches with the queries (a
 * sequence set scored by m, or npssm PSSMs: exactly one of queries and
 * pssms is given); after each round every query's hits with E-value <=
 * psi->inclusion_evalue among its best psi->max_hits make its PSSM
 * (swgpu_pssm_from_hits), which the next round
 * searches with (swgpu_search_pssm: PSSM statistics).  A query stops after
 * psi->iterations rounds, or earlier when a round includes no hit that the
 * round before did not include (round 1: when it includes none).  Every
 * round is an ordinary search with opts (each query's best opts->top_n
 * hits by opts->rank kept, E-values, alignments; opts->no_align drops the
 * alignments from the results, though the rounds compute them for the
 * PSSMs).  Protein only.  Thread safety as swgpu_search.
 */
int swgpu_search_iterate(const swgpu_seqset_t *queries, const swgpu_pssm_t *const *pssms,
                         size_t npssm, const swgpu_db_t *db, const swgpu_matrix_t *m,
                         const swgpu_opts_t *opts, const swgpu_psi_opts_t *psi,
                         swgpu_iterate_result_t **out);

/**
 * Optional: start setting up the backend that o selects (for a GPU: the
 * driver and each GPU's context, a few tenths of a second) on a background
 * thread, so that it overlaps the caller's own work, such as reading the
 * input files; swgpu_search then waits for it as needed.  Returns SWGPU_OK
 * whether or not a GPU is present, SWGPU_EINVAL when o names a kernel that the
 * backend it selects does not have or SWGPU_BACKEND names no backend (so a
 * caller can refuse them before reading its inputs; swgpu_search refuses them
 * too).  A program that called it must call
 * swgpu_backend_wait() before it exits (exiting while the set-up thread is
 * inside the GPU driver can crash the process).
 */
int swgpu_backend_prepare(const swgpu_opts_t *o);

/** Wait until a set-up started by swgpu_backend_prepare() is complete (at
 *  once when none was started).  Both may be called from any thread; the
 *  set-up happens once per process. */
void swgpu_backend_wait(void);

/* ---------------------------------------------------------------- output */

/** Write a name or description to fp as every output format writes it: the
 *  control characters (0x00-0x1f, 0x7f) as \\t, \\n, \\r or \\xHH, every other
 *  byte as it is, so that a name cannot add columns or lines.  NULL writes
 *  nothing.  The caller checks fp's error state. */
void swgpu_put_name(FILE *fp, const char *s);

typedef struct swgpu_outfmt swgpu_outfmt_t;

/** Parse "0" (BLAST's pairwise report), "5" (BLAST XML), "6", "7", "10"
 *  (CSV: format 6's fields separated by commas, not quoted, as BLAST+ writes
 *  it), "15" (BLAST JSON), "17" (SAM, as blastn writes it), "pair", or one
 *  of 6, 7 and 10 with a column
 *  list separated by spaces or commas, such as "6 qseqid sseqid score evalue"
 *  or "10 qseqid,sseqid,evalue".  SWGPU_EINVAL names a bad column. */
int swgpu_outfmt_parse(const char *spec, swgpu_outfmt_t **out);
/** Write all results in the format to fp (the caller's stream).  The same
 *  format may be used by several threads at once, each with its own fp. */
int swgpu_outfmt_write(const swgpu_outfmt_t *f, FILE *fp,
                       const swgpu_search_result_t *r,
                       const swgpu_seqset_t *queries, const swgpu_db_t *db,
                       const swgpu_matrix_t *m, const swgpu_opts_t *opts);
/** The same for a search with PSSM queries (swgpu_search_pssm: r->q[i].query
 *  indexes pssms): each query's id is its PSSM's, its length the number of
 *  positions; identities compare the subject with the PSSM's query residues,
 *  and positives are identities and the pairs that m scores > 0, as psiblast
 *  2.12 counts them for a PSSM (its underlying matrix, not the PSSM). */
int swgpu_outfmt_write_pssm(const swgpu_outfmt_t *f, FILE *fp, const swgpu_search_result_t *r,
                            const swgpu_pssm_t *const *pssms, size_t n, const swgpu_db_t *db,
                            const swgpu_matrix_t *m, const swgpu_opts_t *opts);
/** The results of an iterated search (queries or pssms as given to it):
 *  query by query, its last round, or with all_rounds every round it ran,
 *  each a block as swgpu_outfmt_write() writes it, under "# Iteration: N"
 *  (format 7) or "Results from round N" (pair) when all_rounds.  Format 7's
 *  closing line counts the blocks. */
int swgpu_outfmt_write_iterate(const swgpu_outfmt_t *f, FILE *fp,
                               const swgpu_iterate_result_t *it, const swgpu_seqset_t *queries,
                               const swgpu_pssm_t *const *pssms, int all_rounds,
                               const swgpu_db_t *db, const swgpu_matrix_t *m,
                               const swgpu_opts_t *opts);
/** Database name shown by format 7 ("# Database: NAME") and the pairwise
 *  view (copied; NULL restores the default "unnamed"). */
int swgpu_outfmt_set_dbname(swgpu_outfmt_t *f, const char *name);
/** Where the taxonomy name columns (ssciname scomname sblastname sskingdom
 *  and their plurals) read taxdb.bti / taxdb.btd: directory dir (copied), or
 *  NULL (the default) where blastp looks, as swgpu_taxdb_open(NULL) does.
 *  A write opens them when a column needs them; none found: "N/A". */
int swgpu_outfmt_set_taxdb(swgpu_outfmt_t *f, const char *dir);
void swgpu_outfmt_destroy(swgpu_outfmt_t *f);


#ifdef __cplusplus
}
#endif
#endif /* SWGPU_SEARCH_API_H */
