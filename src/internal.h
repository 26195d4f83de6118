/*
 * internal.h - definitions shared inside libswgpu (never installed).
 */
#ifndef SWGPU_INTERNAL_H
#define SWGPU_INTERNAL_H

#include "swgpu.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>

/* ---------------------------------------------------------------- errors */

/** Record a detailed message for swgpu_last_error() and return status. */
int swgpu__fail(int status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/** Log through the installed logger (no-op when none). */
void swgpu__log(swgpu_log_level_t level, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/** The published parameters of the alphabet's default scoring system
 *  (BLOSUM62 11/1, DNA +2/-3 5/2): the search's E-values when neither a
 *  table nor a fit gives any (search.c). */
int swgpu__fallback_karlin(swgpu_alphabet_t a, swgpu_karlin_t *k);

/** Monotonic wall-clock seconds. */
double swgpu__now(void);
/** CPU seconds the calling thread has used (for phase timings; 0 if unknown). */
double swgpu__thread_cpu(void);
/** Number of online CPU cores (>= 1). */
int swgpu__ncores(void);

/* ------------------------------------------------------------- sequences */

struct swgpu_seqset {
    swgpu_alphabet_t alphabet;
    size_t n, cap;          /* sequences, allocated slots */
    uint64_t *off;          /* n+1 offsets into res (off[0] = 0) */
    uint8_t *res;           /* encoded residues, concatenated */
    uint64_t res_cap;
    size_t *name_off;       /* offsets into names: id NUL desc NUL per record */
    char *names;
    size_t names_len, names_cap;
    uint64_t max_len;
};

/** Room for `residues` more residues (appending them then moves nothing). */
int swgpu__seqset_reserve(swgpu_seqset_t *s, uint64_t residues);
/** Append a record: its id and description (copied, lengths given, no NUL
 *  inside) and len residue codes, which the caller writes through *res
 *  (valid until the next change to s; NULL when len is 0). */
int swgpu__seqset_append(swgpu_seqset_t *s, const char *id, size_t idlen, const char *desc,
                         size_t dlen, size_t len, uint8_t **res);
/** Bytes a FASTA/FASTQ reading may hold (line buffer, residues, names) for
 *  the whole process; beyond them it fails with SWGPU_EBUDGET naming the
 *  line.  0 (the default): SWGPU_READ_LIMIT (bytes, or with a suffix K, M, G,
 *  T), else half of the physical memory. */
void swgpu__set_read_limit(uint64_t bytes);
/* The whole file (plain or gzip, checked as sequence files are: data after the
 * gzip stream that is not gzip is an error) in a NUL-terminated buffer of *len
 * bytes that the caller frees; more than max bytes is SWGPU_EFORMAT. */
int swgpu__read_file(const char *path, size_t max, char **out, size_t *len);
/* open(path) for reading: the descriptor, or SWGPU_EIO with the message
 * ("file P: is a socket ...", "file P: No such file or directory") */
int swgpu__open_input(const char *path);

/* ---------------------------------------------------------------- matrix */

struct swgpu_matrix {
    char name[64];
    swgpu_alphabet_t alphabet;
    int32_t s[SWGPU_NCODES][SWGPU_NCODES]; /* s[a][b], codes beyond the alphabet score min */
    int min, max;
    int match, mismatch;                   /* DNA matrices only */
    int builtin;                           /* 1 if a built-in table */
};

/* -------------------------------------------------------------- database */

/** A file's identity (device and inode), to recognise it under any name. */
typedef struct {
    uint64_t dev, ino;
} swgpu__file_id_t;

/*
 * A database: sequences sorted by ascending length (ties: database order),
 * which is the order every engine scans.  "Database order" is the order of
 * the input file; orig[k] maps sorted index k to it, rank[i] back.
 */
struct swgpu_db {
    swgpu_alphabet_t alphabet;
    uint64_t n;             /* sequences */
    uint64_t total_res;     /* residues */
    uint64_t max_len;
    const uint8_t *res;     /* residues in sorted order, concatenated */
    const uint64_t *off;    /* n+1 offsets into res, sorted order */
    const uint32_t *orig;   /* sorted index -> database index */
    const uint32_t *rank;   /* database index -> sorted index */
    const char *names;      /* "id\0desc\0" per sequence, database order */
    const uint64_t *name_off; /* n offsets into names, database order */
    /* A part of a larger database (swgpu_db_part, swgpu_db_open_part): its
     * sequences are the whole database's scan positions [part_first,
     * part_first + n); orig[] holds the whole database's indices, and rank,
     * names and name_off are the whole database's arrays (indexed by them).
     * whole_n == 0: not a part (a zero-initialised struct is a whole one). */
    uint64_t part_first, whole_n, whole_res;
    /* ownership */
    void *map;              /* mmap base when opened from a file */
    size_t map_len;
    void *map_res;          /* a part of a makedb file: its residues' own mapping */
    size_t map_res_len;
    swgpu__file_id_t *src;  /* the files it was read from: the makedb file, or a BLAST
                               database's files (swgpu_db_write never replaces one) */
    size_t n_src;
    void *owned[6];         /* malloc'ed arrays to free */
};

/** Sequences and residues of the whole database a handle belongs to (its
 *  own counts unless it is a part); search statistics use these. */
static inline uint64_t swgpu__db_whole_n(const swgpu_db_t *db)
{
    return db->whole_n ? db->whole_n : db->n;
}
static inline uint64_t swgpu__db_whole_res(const swgpu_db_t *db)
{
    return db->whole_n ? db->whole_res : db->total_res;
}

/* ------------------------------------------------------------ statistics */

/** One query's E-values (stats.c): the parameters, the model and what
 *  depends only on the query and the database, set up once. */
typedef struct {
    swgpu_karlin_t k;
    int spouge;   /* 1: Spouge's model (asked for, and k has its parameters) */
    double m;     /* query residues */
    double db;    /* database residues (0: none, the pair's own E-value) */
    double space; /* otherwise: the length-adjusted search space K m' n' */
} swgpu__evalue_ctx_t;

void swgpu__evalue_init(swgpu__evalue_ctx_t *c, const swgpu_karlin_t *k,
                        swgpu_evalue_model_t model, uint64_t qlen, uint64_t db_residues,
                        uint64_t db_nseq);
/** swgpu_hit_evalue() for a subject of tlen residues. */
double swgpu__evalue_of(const swgpu__evalue_ctx_t *c, int32_t score, uint64_t tlen);
/** A score (>= 1) below which no subject, whatever its length, gets an
 *  E-value <= max_e; INT32_MAX when no score reaches it.  Exact for the
 *  length-adjusted model (E <= max_e iff score >= it), a lower bound for
 *  Spouge's (scores from it up still need their E-values checked). */
int32_t swgpu__evalue_min_score(const swgpu__evalue_ctx_t *c, double max_e);

/** Robinson & Robinson (1991) frequencies of the 20 standard amino acids. */
extern const double swgpu__robinson[20];
/** Tests: nonzero makes swgpu__ungapped_karlin's convolution take its scalar
 *  form (the AVX one must give the same doubles). */
extern int swgpu__stats_scalar;
/** Ungapped Karlin-Altschul lambda, K and H of i.i.d. scores s = lo..hi with
 *  probabilities prob[s - lo] (negative mean, some positive score); K (the
 *  costly part) and H may be NULL. */
int swgpu__ungapped_karlin(const double *prob, int lo, int hi, double *lambda, double *K,
                           double *H);
/** The same for a matrix's 20 standard amino acids under swgpu__robinson
 *  (BLAST's "ideal" parameters of the matrix). */
int swgpu__matrix_ideal_karlin(const swgpu_matrix_t *m, double *lambda, double *K, double *H);

/* --------------------------------------------------------------- queries */

/*
 * One query as the engines and the pair aligners score it.  Query position
 * i scores against subject code c as
 *     rows ? rows[i * SWGPU_NCODES + c] : m->s[res[i]][c]
 * with m the matrix of the engine or the call.  rows, when set, is a
 * position-specific score matrix (a PSSM, src/pssm.c): len rows of
 * SWGPU_NCODES scores; smin / smax are the least and greatest of all of
 * them (entries may be SWGPU_PSSM_FORBIDDEN), smin16 the least above
 * SWGPU__ALN_FORBID16 (simd/aln_simd.h; a lower bound of it will do: a
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

/** lround(v) for |v| < 2^31 without the library call (PSSM scaling, psi.c):
 *  v - trunc(v) is exact there, so halfway cases round away from zero as
 *  lround does. */
static inline int32_t swgpu__round_away(double v)
{
    long long t = (long long)v;
    double d = v - (double)t;
    return (int32_t)(t + (d >= 0.5) - (d <= -0.5));
}

/** Step 2 of a PSSM from hits (psi.c), for tests: purge the alignment of n
 *  rows of L columns (row-major letters let, 0/1 aligned flags al, use[r]
 *  0 once row r is gone; row 0 the query), fast (1) or by the reference
 *  (0); both must leave the same al and use.  SWGPU_ENOMEM or SWGPU_OK. */
int swgpu__psi_purge(uint8_t *let, uint8_t *al, uint8_t *use, size_t n, size_t L, int fast);

/** The least and greatest score q uses under m: the rows' range, or m's. */
static inline void swgpu__query_range(const swgpu__query_t *q, const swgpu_matrix_t *m,
                                      int32_t *smin, int32_t *smax)
{
    *smin = q->rows ? q->smin : m->min;
    *smax = q->rows ? q->smax : m->max;
}

/* ---------------------------------------------------- searches (search.c) */

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

/* --------------------------------------------------------------- engines */

/** Counters an engine fills during a scan (added to, not reset). */
typedef struct {
    uint64_t cells;      /* qlen * residues scanned */
    uint64_t overflows;  /* targets recomputed at a wider precision */
    double gpu_seconds;  /* CUDA-event time of the scan's kernels (the slowest GPU), added
                            up over scans; 0 where not measured (CPU, streamed database) */
} swgpu_scan_stats_t;

/**
 * Receives the scores of one query of a scan_many() call: i is the query's
 * index in the call's arrays, scores[k] its exact score against sorted
 * database sequence k (valid only during the call).  The engine calls it
 * once per query, in any query order, never from two threads at once.  A
 * negative return (a status, last_error set) stops the scan; scan_many()
 * then returns that status.
 */
typedef int (*swgpu_scan_sink_t)(void *user, size_t i, const int32_t *scores);

/**
 * A database-scan engine.  create() prepares per-database state (for a GPU:
 * the uploaded database); scan() scores one query (its residues with m's
 * rows, or a PSSM: swgpu__query_t) against every database sequence and
 * writes exact 32-bit scores indexed by SORTED position.
 * scan_many() (optional, NULL: the caller loops over scan()) scores nq
 * queries, batching them as the engine sees fit (many short queries share
 * one pass over a small database), and hands each query's scores to sink;
 * st gets the cells and overflows of all of them.  Scores are identical to
 * scan()'s for every query.
 */
/* What an engine offers beyond scanning (swgpu_engine_ops_t.caps): callers
 * ask for these, never for an engine's name. */
enum {
    SWGPU__CAP_GPU = 1  /* it scans on GPUs: a host core is kept to feed them, and
                           hits' ends and stretch scores may go to a GPU too */
};

typedef struct swgpu_engine_ops {
    const char *name;   /* for messages and the result's backend field */
    int (*create)(const swgpu_db_t *db, const swgpu_matrix_t *m,
                  const swgpu_opts_t *o, void **state);
    int (*scan)(void *state, const swgpu__query_t *q, int32_t *scores, swgpu_scan_stats_t *st);
    void (*destroy)(void *state);
    int (*scan_many)(void *state, size_t nq, const swgpu__query_t *q, swgpu_scan_sink_t sink,
                     void *user, swgpu_scan_stats_t *st);
    unsigned caps;      /* SWGPU__CAP_* */
} swgpu_engine_ops_t;

/** The one dispatch point (backend.c): the engine for o->backend. */
int swgpu__engine_select(const swgpu_opts_t *o, const swgpu_engine_ops_t **ops);

/* engines (each defined where it is implemented) */
extern const swgpu_engine_ops_t swgpu__engine_ref;
extern const swgpu_engine_ops_t swgpu__engine_cpu; /* src/simd/cpu_engine.c */
/**
 * Best local scores and ends of many pairs on the GPU (src/cuda/pairs.cu):
 * positions [qoff, qoff + qlen) of query q against subject t, scored as
 * swgpu__cpu_score_pair_q scores that stretch, with the same end by the
 * same tie rule (qend relative to qoff; 0 and 0 for a score of 0).  known
 * > 0: the pair's best score, checked (SWGPU_ERANGE, internal error, when
 * the GPU's differs).  done: 1 when computed; 0 when the pair does not
 * fit the kernel's 32-bit cells (the caller computes it).  begin: the
 * begin of the alignment too, by the reference's reverse pass and tie rule
 * (swgpu__ref_start), or -1 when the GPU did not have it.  Defined in
 * builds with CUDA (SWGPU_HAVE_CUDA) only.  One context per
 * user; swgpu__cu_pairs_run may be called from any thread (calls take
 * turns).  Profiles are kept between calls, keyed by the query's res, rows
 * and len, which must not change while the context lives.
 */
typedef struct {
    const swgpu__query_t *q;
    size_t qoff, qlen;
    const uint8_t *t;
    size_t tlen;
    int32_t known;
    int begin;            /* with known > 0 and qoff 0: the begin as well */
    int32_t score;
    int64_t qend, tend;
    int64_t qbeg, tbeg;   /* begin: swgpu__ref_start's begin, -1 when not had */
    int done;
} swgpu__cu_pair_t;
typedef struct swgpu__cu_pairs swgpu__cu_pairs_t;
int swgpu__cu_pairs_create(const swgpu_matrix_t *m, int gap_open, int gap_extend,
                           swgpu__cu_pairs_t **out);
int swgpu__cu_pairs_run(swgpu__cu_pairs_t *P, swgpu__cu_pair_t *jobs, size_t n);
/** Forget the profiles kept (their queries may be freed from now on). */
void swgpu__cu_pairs_forget(swgpu__cu_pairs_t *P);
void swgpu__cu_pairs_destroy(swgpu__cu_pairs_t *P);

#if SWGPU_HAVE_CUDA
extern const swgpu_engine_ops_t swgpu__engine_cuda; /* src/cuda/engine.cu */
/** Number of visible CUDA devices (0 when none or no driver). */
int swgpu__cuda_device_count(void);
/** Set up the driver and the first `gpus` GPUs' contexts (0: all) on a
 *  background thread; the engine and swgpu__cuda_device_count wait for it. */
void swgpu__cuda_prepare(int gpus);
/** Wait until a set-up started by swgpu__cuda_prepare is complete. */
void swgpu__cuda_prepare_wait(void);
#endif

#endif /* SWGPU_INTERNAL_H */
