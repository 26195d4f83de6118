/*
 * swgpu.h - the one public header of libswgpu: exact Smith-Waterman local
 * alignment and database search on CPUs and NVIDIA GPUs.
 *
 * Conventions
 *  - Every exported symbol is prefixed swgpu_ / SWGPU_.
 *  - Functions return 0 (SWGPU_OK) or a negative swgpu_status_t.  On failure
 *    swgpu_last_error() gives a one-line message naming the file, record and
 *    problem (thread-local; valid until the next failing call in the thread).
 *  - The library never prints and never exits; diagnostics go to the logger
 *    installed with swgpu_set_logger() (none by default).
 *  - Objects are created by *_create / *_read / *_open and released by the
 *    matching *_destroy, which accepts NULL.
 *  - Gap convention: a gap of length k costs  open + k * extend  (BLAST,
 *    SWIPE, ssearch36).  Both values are given as non-negative penalties.
 *  - Coordinates in structs are 0-based, half-open: [beg, end).
 *  - Thread safety.  Every function may be called from several threads at
 *    once, with these rules:
 *      * a matrix, a sequence set, a database and an output format are
 *        read-only once made, and may be shared by any number of threads
 *        (searches, alignments, writes of the same database); only the
 *        calls that change them (swgpu_seqset_add, swgpu_outfmt_set_dbname,
 *        and *_destroy) need the object to themselves;
 *      * what a call fills in (swgpu_aln_t, swgpu_search_result_t,
 *        swgpu_long_stats_t, an output FILE) belongs to one call at a time;
 *      * swgpu_last_error() is per thread;
 *      * swgpu_set_logger() is set once, before other threads call in, and
 *        the logger it installs is called from any thread, the library's
 *        own worker threads included, and concurrently.
 *    Concurrent searches on a GPU each hold their own copy of the database
 *    in GPU memory (one that no longer fits is streamed).
 *    tests/test_concurrent.c checks that searches (every backend) and
 *    alignments run from several threads on shared objects give exactly
 *    the single-threaded results.
 */
#ifndef SWGPU_H
#define SWGPU_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SWGPU_VERSION "0.1.0"

/* ---------------------------------------------------------------- status */

typedef enum {
    SWGPU_OK = 0,
    SWGPU_ENOMEM = -1,    /* out of memory */
    SWGPU_EIO = -2,       /* a file cannot be opened, read or written */
    SWGPU_EFORMAT = -3,   /* malformed input: not FASTA/FASTQ, truncated gzip, bad record */
    SWGPU_EEMPTY = -4,    /* the input holds no (non-empty) sequence */
    SWGPU_EINVAL = -5,    /* invalid argument or option value */
    SWGPU_EMATRIX = -6,   /* invalid or unknown scoring matrix */
    SWGPU_EALPHABET = -7, /* alphabets of the inputs do not agree */
    SWGPU_ENODEV = -8,    /* the requested backend or device is not available */
    SWGPU_EDEVICE = -9,   /* a GPU runtime call failed */
    SWGPU_EDB = -10,      /* a database file is invalid, truncated or foreign */
    SWGPU_EBUDGET = -11,  /* the memory budget cannot hold the minimum needed */
    SWGPU_ERANGE = -12,   /* a value exceeds what can be represented */
    SWGPU_ENOTFOUND = -13, /* a looked-up item does not exist */
    SWGPU_EPART = -14     /* another part of a computation split across processes failed */
} swgpu_status_t;

/** Short description of a status code (static string, never NULL). */
const char *swgpu_strerror(int status);

/** Detailed message of the last failure in the calling thread ("" if none;
 *  each thread has its own, valid until its next failing call). */
const char *swgpu_last_error(void);

/** A size in bytes as users write it: a number (a fraction allowed) and an
 *  optional binary multiple K, M, G or T (either case), which may be followed
 *  by B or iB ("123", "512K", "1.5G", "4GiB"; truncated to whole bytes).  The
 *  one reading of sizes: SWGPU_READ_LIMIT, --max-memory, Python's max_memory.
 *  SWGPU_EINVAL (no message recorded) when s is not such a size or is
 *  negative, SWGPU_ERANGE when it is 2^64 or more. */
int swgpu_parse_size(const char *s, uint64_t *out);

/* --------------------------------------------------------------- logging */

typedef enum {
    SWGPU_LOG_ERROR = 1,
    SWGPU_LOG_WARN = 2,
    SWGPU_LOG_INFO = 3,
    SWGPU_LOG_DEBUG = 4
} swgpu_log_level_t;

typedef void (*swgpu_log_fn)(swgpu_log_level_t level, const char *msg, void *user);

/** Install a logger; messages above max_level are dropped.  fn NULL: silence.
 *  Not thread-safe with respect to concurrent library calls: set it first.
 *  fn is called from any thread (the library's worker threads too), possibly
 *  from several at once, so it must be thread-safe itself. */
void swgpu_set_logger(swgpu_log_fn fn, void *user, swgpu_log_level_t max_level);

/* -------------------------------------------------------------- alphabet */

typedef enum {
    SWGPU_AUTO = 0,    /* detect from the data */
    SWGPU_PROTEIN = 1, /* codes in NCBI matrix order: ARNDCQEGHILKMFPSTWYVBZX* then J U O */
    SWGPU_DNA = 2      /* codes: A C G T N, then IUPAC R Y K M S W B D H V */
} swgpu_alphabet_t;

/** Number of residue codes any alphabet may use (codes are < this). */
#define SWGPU_NCODES 32
#define SWGPU_PROT_X 22 /* protein code of X, the unknown residue */
#define SWGPU_DNA_N 4   /* DNA code of N */

/** Encode one letter (either case); -1 if the letter is not in the alphabet. */
int swgpu_encode(swgpu_alphabet_t alphabet, int letter);
/** Upper-case letter of a code ('?' if out of range). */
char swgpu_decode(swgpu_alphabet_t alphabet, uint8_t code);
/** Number of codes used by the alphabet (27 protein, 15 DNA). */
int swgpu_alphabet_size(swgpu_alphabet_t alphabet);
/** "protein" / "dna" / "auto". */
const char *swgpu_alphabet_name(swgpu_alphabet_t alphabet);

/* ------------------------------------------------------------- sequences */

typedef struct swgpu_seqset swgpu_seqset_t;

/** A view of one sequence; pointers stay valid while the owner lives. */
typedef struct {
    const char *id;     /* first word of the header line */
    const char *desc;   /* rest of the header line ("" if none) */
    const uint8_t *res; /* encoded residues */
    size_t len;
} swgpu_seq_t;

/** What reading a file found. */
typedef struct {
    uint64_t n_records;  /* records kept */
    uint64_t n_empty;    /* records skipped because their sequence is empty */
    uint64_t n_unknown;  /* letters outside the alphabet, mapped to X (protein) or N (DNA) */
    uint64_t n_residues; /* residues kept */
    uint64_t max_len;    /* longest sequence kept */
} swgpu_read_info_t;

/**
 * Read a FASTA or FASTQ file, plain or gzip-compressed (detected from the
 * content).  Multi-line records, lower case, CRLF and a trailing '*' are
 * accepted.  alphabet SWGPU_AUTO detects DNA vs protein from the residues.
 * Empty records are skipped (counted, logged as a warning).  A makedb
 * database (swgpu_db_write) is read too: its sequences in database order;
 * so is an NCBI BLAST database, named by its makeblastdb prefix (versions 4
 * and 5, alias files and volumes; ids and titles as docs/blast-databases.md
 * says; SWGPU_EDB naming the file and OID when it is damaged).
 * info may be NULL.  On success *out is owned by the caller.
 */
int swgpu_seqset_read(const char *path, swgpu_alphabet_t alphabet,
                      swgpu_seqset_t **out, swgpu_read_info_t *info);

/**
 * swgpu_seqset_read() from an open file descriptor, such as standard input
 * (0) or a pipe: FASTA or FASTQ, plain or gzip (detected from the content),
 * read to its end; fd is not closed.  name stands for the file in messages
 * (NULL: "(stream)").  A makedb database or a BLAST database cannot come
 * this way (SWGPU_EFORMAT: give its name to swgpu_seqset_read).
 */
int swgpu_seqset_read_fd(int fd, const char *name, swgpu_alphabet_t alphabet,
                         swgpu_seqset_t **out, swgpu_read_info_t *info);

/** An empty set to fill with swgpu_seqset_add(). */
int swgpu_seqset_create(swgpu_alphabet_t alphabet, swgpu_seqset_t **out);
/** Append a sequence given as letters; unknown letters become X / N.  An
 *  empty (or NULL) id is SWGPU_EINVAL, the set unchanged.  Not while other
 *  threads use the set (it may move the sequences). */
int swgpu_seqset_add(swgpu_seqset_t *set, const char *id, const char *desc,
                     const char *letters, size_t len);
size_t swgpu_seqset_size(const swgpu_seqset_t *set);
uint64_t swgpu_seqset_residues(const swgpu_seqset_t *set);
swgpu_alphabet_t swgpu_seqset_alphabet(const swgpu_seqset_t *set);
/** Fill *out with a view of sequence i; SWGPU_EINVAL if i is out of range. */
int swgpu_seqset_get(const swgpu_seqset_t *set, size_t i, swgpu_seq_t *out);
void swgpu_seqset_destroy(swgpu_seqset_t *set);

/* ---------------------------------------------------------------- matrix */

typedef struct swgpu_matrix swgpu_matrix_t;

/** Built-in matrices: BLOSUM45 BLOSUM50 BLOSUM62 BLOSUM80 BLOSUM90 PAM30
 *  PAM70 PAM250 (case-insensitive).  SWGPU_EMATRIX if unknown. */
int swgpu_matrix_builtin(const char *name, swgpu_matrix_t **out);
/** Load an NCBI-format matrix file (protein letters). */
int swgpu_matrix_load(const char *path, swgpu_matrix_t **out);
/** DNA scoring: match > 0 for identical A/C/G/T, mismatch < 0 otherwise
 *  (N and IUPAC codes always score mismatch); |score| <= 1000000, though a
 *  search (swgpu_opts_check) refuses scores beyond +-1000. */
int swgpu_matrix_dna(int match, int mismatch, swgpu_matrix_t **out);
/** Either a built-in name or, failing that, a matrix file path. */
int swgpu_matrix_get(const char *name_or_path, swgpu_matrix_t **out);
const char *swgpu_matrix_name(const swgpu_matrix_t *m);
swgpu_alphabet_t swgpu_matrix_alphabet(const swgpu_matrix_t *m);
int swgpu_matrix_score(const swgpu_matrix_t *m, uint8_t a, uint8_t b);
int swgpu_matrix_min(const swgpu_matrix_t *m);
int swgpu_matrix_max(const swgpu_matrix_t *m);
void swgpu_matrix_destroy(swgpu_matrix_t *m);

/* ------------------------------------------------- profiles (PSSM queries) */

/**
 * A position-specific score matrix (PSSM): per query position, a score for
 * every database residue, used as a query by swgpu_search_pssm().  A PSSM
 * holds 20 scores per position in the order ARNDCQEGHILKMFPSTWYV (protein
 * codes 0..19) and its query residues.  Database residues without a column
 * of their own score as psiblast scores them in an -in_pssm search:
 *   X (and every letter read as X) -1, '*' -4, and B, Z, J, U, O
 *   SWGPU_PSSM_FORBIDDEN (psiblast's -32768: never in a positive-scoring
 *   alignment), except at positions psiblast computed from no observed
 *   residue (a row of the ASCII file whose weighted observed percentages
 *   are all 0), where U and O score -1 and B, Z, J the BLOSUM62 score of
 *   the position's query residue against them.
 * Read-only after creation: may be shared between threads.
 */
typedef struct swgpu_pssm swgpu_pssm_t;

/** psiblast's score of a pair it never aligns (BLAST_SCORE_MIN). */
#define SWGPU_PSSM_FORBIDDEN (-32768)
/** Scores a PSSM may hold: SWGPU_PSSM_FORBIDDEN .. SWGPU_PSSM_SCORE_MAX. */
#define SWGPU_PSSM_SCORE_MAX 1000

/**
 * Read a PSSM in psiblast's ASCII format (psiblast -out_ascii_pssm), plain
 * or gzip-compressed: the header line of column letters, one row per
 * position ("position residue 20 scores", optionally followed by the 20
 * weighted observed percentages, the information and the relative weight),
 * lines before the header (psiblast's title) and after the blank line that
 * ends the matrix (its statistics) ignored; CRLF line ends accepted.  Its
 * id is the file's base name without ".gz" and without its extension
 * ("dir/q101.pssm" -> "q101").  SWGPU_EIO if the file cannot be read,
 * SWGPU_EFORMAT naming the file, line and problem for anything malformed
 * (no header, rows out of order, wrong number of values, a value that is
 * not an integer or out of range, no positions).  *out is the caller's.
 */
int swgpu_pssm_read(const char *path, swgpu_pssm_t **out);

/**
 * A PSSM from memory: len positions, scores[i*20 + c] the score of
 * position i against column c of ARNDCQEGHILKMFPSTWYV (each in
 * SWGPU_PSSM_FORBIDDEN..SWGPU_PSSM_SCORE_MAX); residues: len protein
 * letters (either case), or NULL for each position's best-scoring column
 * letter (the first in that order on ties).  Every position counts as
 * computed from observed residues (B, Z, J, U, O forbidden).  id is copied
 * (NULL: "").  SWGPU_EINVAL for len 0, a score out of range or a letter
 * outside the protein alphabet.
 */
int swgpu_pssm_create(const char *id, const char *residues, const int32_t *scores,
                      size_t len, swgpu_pssm_t **out);

const char *swgpu_pssm_id(const swgpu_pssm_t *p);
/** Positions (the query length). */
size_t swgpu_pssm_length(const swgpu_pssm_t *p);
/** The query residues, one upper-case letter per position, NUL-terminated. */
const char *swgpu_pssm_residues(const swgpu_pssm_t *p);
/** Score of position pos against protein code code (any code < SWGPU_NCODES,
 *  the rule above included); SWGPU_PSSM_FORBIDDEN when out of range. */
int swgpu_pssm_score(const swgpu_pssm_t *p, size_t pos, uint8_t code);
/** Least and greatest score over every position and code. */
int swgpu_pssm_min(const swgpu_pssm_t *p);
int swgpu_pssm_max(const swgpu_pssm_t *p);
/** A view of p as a sequence: its id, an empty description, its query
 *  residues' codes and length (pointers valid while p lives). */
int swgpu_pssm_get(const swgpu_pssm_t *p, swgpu_seq_t *out);

/**
 * Write p in psiblast's ASCII format (psiblast -out_ascii_pssm), which
 * swgpu_pssm_read() reads back to the same scores: a blank line, the title,
 * the header of column letters, one row per position (number, query residue,
 * the 20 scores, the 20 weighted observed percentages rounded down, the
 * information per position in bits and the relative weight of gapless real
 * matches to pseudocounts; 0 where p does not know them: a PSSM read from a
 * file without them, or made by swgpu_pssm_create), then, when m is a
 * protein matrix with published parameters for the gaps, psiblast's block of
 * K and lambda (ungapped ones under Robinson & Robinson's frequencies: m's
 * and the PSSM's; gapped ones: m's and swgpu_pssm_karlin's).  fp is the
 * caller's; SWGPU_EIO on a write error.
 */
int swgpu_pssm_write(const swgpu_pssm_t *p, const swgpu_matrix_t *m, int gap_open,
                     int gap_extend, FILE *fp);
void swgpu_pssm_destroy(swgpu_pssm_t *p);

/* --------------------------------------------------------------- options */

/**
 * Receives one query's exact scores against every sequence of the searched
 * database handle: scores[k] for scan position k (swgpu_db_scan_index()),
 * n = swgpu_db_size().  Valid during the call only.  Called from the scan,
 * once per query, in any query order, never from two threads at once; a
 * negative return stops the search, which returns that status.
 */
typedef int (*swgpu_scores_fn)(void *user, size_t query, const int32_t *scores, size_t n);

typedef enum {
    SWGPU_BACKEND_AUTO = 0, /* cuda if a device is present, else cpu */
    SWGPU_BACKEND_REF = 1,  /* scalar reference (the oracle) */
    SWGPU_BACKEND_CPU = 2,  /* SIMD + threads */
    SWGPU_BACKEND_CUDA = 3  /* NVIDIA GPUs */
} swgpu_backend_t;

/** The strands of a DNA search (swgpu_opts_t.strand).  A minus-strand hit is
 *  the query aligned with the reverse complement of the subject. */
typedef enum {
    SWGPU_STRAND_BOTH = 0,  /* each subject's best over both strands (default) */
    SWGPU_STRAND_PLUS = 1,  /* the subjects as stored */
    SWGPU_STRAND_MINUS = 2  /* their reverse complements */
} swgpu_strand_t;

/** How E-values are computed (swgpu_opts_t.evalue_model, swgpu_hit_evalue). */
typedef enum {
    SWGPU_EVALUE_SPOUGE = 0, /* BLAST+'s default: Spouge's finite-size correction, per
                                hit, from the query, the hit's subject and the database
                                length.  Parameters without Spouge's set (DNA, fitted,
                                see swgpu_karlin_t.has_spouge) use SWGPU_EVALUE_OLD_FSC,
                                as BLAST+ does for blastn */
    SWGPU_EVALUE_OLD_FSC = 1 /* BLAST+ with OLD_FSC=1 in the environment: Karlin-Altschul
                                over the length-adjusted search space of the query and
                                the whole database (the same for every hit of a query) */
} swgpu_evalue_model_t;

typedef struct {
    int gap_open;            /* gap of length k costs gap_open + k*gap_extend */
    int gap_extend;
    int top_n;               /* hits kept per query (>= 1) */
    double evalue;           /* report hits with E-value <= this */
    int threads;             /* CPU threads; 0 = all cores */
    swgpu_backend_t backend;
    const char *kernel;      /* GPU kernel name, NULL = default */
    int gpus;                /* GPUs to use; 0 = all visible */
    uint64_t max_gpu_memory; /* bytes each GPU may hold (database, buffers); 0 = 7/8 of
                                its free memory, or SWGPU_GPU_MEMORY when set.  A database
                                larger than this is streamed through the GPU in batches. */
    int no_align;            /* 1: scores, coordinates-less hits only */
    int no_self;             /* 1: a database sequence with the query's id and the same
                                residues (the query itself, in an all-against-all search)
                                is not reported as a hit of that query */
    swgpu_evalue_model_t evalue_model; /* the E-values of the hits and of the evalue
                                          threshold (default SWGPU_EVALUE_SPOUGE) */
    swgpu_strand_t strand;   /* DNA: the subjects' strands searched (default both: a
                                subject's score is the better of its two strands, the
                                plus strand on a tie); protein searches ignore it */
    /* Progress of swgpu_search (NULL: none): called when a query's scores are
     * ready, at most about 5 times a second plus once when the last query is
     * done, never from two threads at once (not always from the calling
     * thread).  done of total queries scanned, cells (qlen x database
     * residues) of those and of all queries, seconds since the scan began.
     * For a part of a database, the part's own residues count.
     * It must not call back into the library for the same search. */
    void (*progress)(size_t done, size_t total, uint64_t cells_done, uint64_t cells_total,
                     double seconds, void *user);
    void *progress_user;
    /* A search split over database parts (swgpu_db_part; swgpu-mpi): */
    int candidates;          /* 1: per query only the database sequences that may be among
                                the whole search's hits, best first by (score desc, database
                                index asc), no_self applied, no alignments: with published
                                parameters the best top_n of those whose E-value (the whole
                                database's size) passes opts->evalue, else (parameters fitted
                                on the whole database later) the best top_n with score > 0,
                                plus, where the fallback parameters' E-values depend on the
                                subject's length (Spouge), the best top_n that pass under
                                them.  evalue: the E-value under the published parameters,
                                else the fallback ones; karlin zero, bits 0.
                                swgpu_search_merge() finishes them */
    swgpu_scores_fn on_scores; /* NULL, or called with every query's scores (for fits) */
    void *on_scores_user;
} swgpu_opts_t;

/** Defaults: protein open 11 extend 1; DNA open 5 extend 2; top_n 10,
 *  evalue 10, threads 0, backend auto, evalue_model SWGPU_EVALUE_SPOUGE. */
void swgpu_opts_init(swgpu_opts_t *o, swgpu_alphabet_t alphabet);
/** SWGPU_EINVAL with a message for negative/absurd gaps, top_n < 1, ... */
int swgpu_opts_check(const swgpu_opts_t *o, const swgpu_matrix_t *m);

/* ------------------------------------------------------------- alignment */

enum { SWGPU_CIGAR_M = 0, SWGPU_CIGAR_I = 1, SWGPU_CIGAR_D = 2 };
/* CIGAR element: (length << 4) | op.  I consumes the query only, D the
 * target only.  M is a match or mismatch column. */
#define SWGPU_CIGAR_OP(c) ((c) & 0xfu)
#define SWGPU_CIGAR_LEN(c) ((c) >> 4)

/** A local alignment.  The caller owns it; zero-initialise before first use,
 *  reuse across calls (the cigar buffer grows as needed), free with
 *  swgpu_aln_free(). */
typedef struct {
    int64_t score;       /* 64-bit: a long alignment's score may pass 2^31 */
    int64_t qbeg, qend;  /* query interval  [qbeg, qend)  */
    int64_t tbeg, tend;  /* target interval [tbeg, tend) */
    uint32_t *cigar;
    size_t n_cigar, m_cigar; /* used and allocated elements */
    int64_t length;      /* alignment columns */
    int64_t n_ident;     /* identical columns */
    int64_t n_mismatch;  /* aligned non-identical columns */
    int64_t n_gapopen;   /* gap openings */
    int64_t n_gaps;      /* gap columns */
} swgpu_aln_t;

void swgpu_aln_free(swgpu_aln_t *a);

/** Score a CIGAR against the two sequences from (qbeg, tbeg); used to verify
 *  alignments.  Returns SWGPU_EINVAL if the CIGAR runs off a sequence. */
int swgpu_cigar_score(const swgpu_aln_t *a, const uint8_t *q, size_t qlen,
                      const uint8_t *t, size_t tlen, const swgpu_matrix_t *m,
                      int gap_open, int gap_extend, int64_t *score);

/** Write the CIGAR as text ("12M2I30M") into buf (size bytes, NUL-terminated);
 *  returns the length it needs without the NUL. */
size_t swgpu_cigar_string(const swgpu_aln_t *a, char *buf, size_t size);

/**
 * Optimal local alignment of q and t with the scalar reference engine in
 * linear memory.  With score_only the CIGAR is not computed (cheaper), but
 * score and end coordinates are.  Ties: among cells of maximal score, the
 * end is the one with the smallest target end, then the smallest query end;
 * the start is the one with the largest begin positions (shortest alignment).
 * Thread safety: concurrent calls on different outputs are safe (sequences
 * and matrix shared).
 */
int swgpu_align(const uint8_t *q, size_t qlen, const uint8_t *t, size_t tlen,
                const swgpu_matrix_t *m, int gap_open, int gap_extend,
                int score_only, swgpu_aln_t *out);

/* ------------------------------------------------------------- database */

typedef struct swgpu_db swgpu_db_t;

/** Build an in-memory database from a sequence set (copied). */
int swgpu_db_from_seqset(const swgpu_seqset_t *set, swgpu_db_t **out);
/** Open a makedb database (memory-mapped, validated) or, when path is a
 *  FASTA/FASTQ file or a BLAST database prefix (see swgpu_seqset_read),
 *  build one in memory.  info may be NULL. */
int swgpu_db_open(const char *path, swgpu_alphabet_t alphabet,
                  swgpu_db_t **out, swgpu_read_info_t *info);
/** Write db as a makedb file (written to a temporary name of this call's
 *  own, then renamed: threads may write the same path at once, and the file
 *  is then one complete database).  Refuses to replace the file db was read
 *  from. */
int swgpu_db_write(const swgpu_db_t *db, const char *path);
size_t swgpu_db_size(const swgpu_db_t *db);
uint64_t swgpu_db_residues(const swgpu_db_t *db);
uint64_t swgpu_db_max_len(const swgpu_db_t *db);
swgpu_alphabet_t swgpu_db_alphabet(const swgpu_db_t *db);
/** Sequence i in database (file) order.  For a part (below), i is an index
 *  of the whole database, and only the part's own sequences are found
 *  (SWGPU_ENOTFOUND for the others). */
int swgpu_db_get(const swgpu_db_t *db, size_t i, swgpu_seq_t *out);
void swgpu_db_destroy(swgpu_db_t *db);

/*
 * Parts: a database split across processes (swgpu-mpi) or devices.  Every
 * engine scans a database in its scan order: sequences sorted by length,
 * ties in database order.  A part is a contiguous run of that order chosen
 * by residues: with R the total residues, the part [from, to) of the
 * database (0 <= from <= to <= 1) holds the sequences whose first residue
 * lies at a position p of the scan order's concatenated residues with
 * floor(from*R) <= p < floor(to*R) (to = 1: through the last sequence).
 * Parts given consecutive intervals - [0,a), [a,b), [b,1], the same doubles
 * on every side - hold every sequence exactly once; a part may be empty.
 *
 * A part is an ordinary database handle to the engines and to
 * swgpu_search(): swgpu_db_size()/swgpu_db_residues() count its own
 * sequences, its hits carry the whole database's indices (so hits from
 * several parts merge exactly, see swgpu_search_merge()), and E-values use
 * the whole database's sequence and residue counts.  swgpu_db_write()
 * refuses a part.
 */

/** Where a handle stands in its whole database (a whole database is its own
 *  only part: first 0, n = total_n). */
typedef struct {
    uint64_t first;          /* scan position of the part's first sequence in the whole */
    uint64_t n;              /* sequences in the part */
    uint64_t residues;       /* residues in the part */
    uint64_t total_n;        /* sequences of the whole database */
    uint64_t total_residues; /* residues of the whole database */
} swgpu_db_part_t;

/** Fill *out (see swgpu_db_part_t); SWGPU_EINVAL for NULL arguments. */
int swgpu_db_part_info(const swgpu_db_t *db, swgpu_db_part_t *out);

/** A part [from, to) of an open whole database, without copying residues:
 *  db must outlive *out (destroy the part first).  SWGPU_EINVAL if db is
 *  itself a part or the interval is not within [0, 1]. */
int swgpu_db_part(const swgpu_db_t *db, double from, double to, swgpu_db_t **out);

/**
 * Open the part [from, to) of a database file.  A makedb file is mapped
 * piecewise: the index sections (offsets, order, names: about 24 bytes a
 * sequence plus its header) are mapped without being read as a whole, and
 * only the part's residues are mapped; the header checksum and the part's
 * own structure (offsets, length order, order permutation, names, residue
 * codes) are validated, the whole-file checksum is not (that needs every
 * byte; swgpu_db_open() checks it).  A FASTA/FASTQ file is read whole (the
 * scan order needs every length) and only the part is kept.  info (may be
 * NULL) describes the part.  Thread safety as swgpu_db_open().
 */
int swgpu_db_open_part(const char *path, swgpu_alphabet_t alphabet, double from, double to,
                       swgpu_db_t **out, swgpu_read_info_t *info);

/** The database index of the sequence at scan position k of the handle
 *  (0 <= k < swgpu_db_size(db); for a part, position k of the part), or
 *  SIZE_MAX if k is out of range.  Scan positions are what
 *  swgpu_opts_t.on_scores reports scores by. */
size_t swgpu_db_scan_index(const swgpu_db_t *db, size_t k);

/* ------------------------------------------------------------ statistics */

/**
 * Spouge's finite-size correction (Park, Sheetlin, Ma, Mott & Spouge 2012).
 * An alignment of score S takes up a stretch of the query and one of the
 * subject; their lengths are taken as normal, each with mean a S + b and
 * variance alpha S + beta, and with covariance sigma S + tau.  BLAST+ puts a
 * floor under the variance and the covariance: 2 alpha / lambda and
 * 2 sigma / lambda.  See swgpu_hit_evalue() for the E-value.
 */
typedef struct {
    double a, b;         /* mean length of the aligned stretch: a S + b */
    double alpha, beta;  /* its variance: alpha S + beta */
    double sigma, tau;   /* covariance of the query's and the subject's: sigma S + tau */
} swgpu_spouge_t;

typedef struct {
    double lambda, K, H; /* gapped Karlin-Altschul parameters */
    double alpha, beta;  /* BLAST length-correction parameters */
    int estimated;       /* 0: published table; 1: fitted to the search's scores */
    int round_down;      /* 1: the E-value of an odd score is that of the even
                          * score below (BLAST, for DNA +2/-3, +3/-4, +2/-5, +2/-7) */
    int has_spouge;      /* 1: spouge holds BLAST+'s finite-size correction parameters
                          * (the protein tables; 0 for DNA and fitted parameters) */
    swgpu_spouge_t spouge;
} swgpu_karlin_t;

/** Published gapped parameters for matrix + gaps; SWGPU_ENOTFOUND if none.
 *  Protein tables come with Spouge's parameters (has_spouge 1), DNA ones
 *  without (BLAST+ has none for blastn). */
int swgpu_karlin_lookup(const swgpu_matrix_t *m, int gap_open, int gap_extend,
                        swgpu_karlin_t *out);
/** Fit lambda and K to raw scores of unrelated pairs (maximum likelihood,
 *  Gumbel with location ln(K m n)/lambda); tlen[i] is the target length of
 *  scores[i].  SWGPU_EINVAL if there are too few scores. */
int swgpu_karlin_fit(const int32_t *scores, const uint64_t *tlen, size_t n,
                     uint64_t qlen, swgpu_karlin_t *out);
double swgpu_bitscore(const swgpu_karlin_t *k, int32_t score);

/**
 * E-value of a hit of raw score `score` between a query of qlen residues
 * and a subject of tlen residues, in a database of db_residues residues in
 * db_nseq sequences, under `model`:
 *
 *  SWGPU_EVALUE_SPOUGE (when k->has_spouge; otherwise as OLD_FSC):
 *      E = K e^{-lambda S} (db_residues / tlen) (p_q p_t + c Phi(u_q) Phi(u_t)),
 *    where for the query  l_q = qlen - (a S + b),  v = max(2 alpha / lambda,
 *    alpha S + beta),  u_q = l_q / sqrt(v),  p_q = l_q Phi(u_q) + sqrt(v) phi(u_q)
 *    (the expected length left over by the alignment), the same with tlen for
 *    the subject, c = max(2 sigma / lambda, sigma S + tau), and Phi, phi the
 *    standard normal distribution and density.  This is BLAST+'s default
 *    (blastp 2.12.0+ checked: tests/test_stats.c, bench/evalue_compare.sh).
 *    db_residues 0: the pair's own E-value (no database factor); tlen 0
 *    counts as 1.  db_nseq is not used.
 *  SWGPU_EVALUE_OLD_FSC: E = K m' n' e^{-lambda S} with BLAST's length
 *    adjustment L (m' = qlen - L, n' = db_residues - db_nseq L; no adjustment
 *    for fitted parameters); tlen is not used.  BLAST+ with OLD_FSC=1.
 *
 * Parameters with round_down give an odd score the E-value of the even score
 * below.  Thread-safe (no state).
 */
double swgpu_hit_evalue(const swgpu_karlin_t *k, swgpu_evalue_model_t model, int32_t score,
                        uint64_t qlen, uint64_t tlen, uint64_t db_residues, uint64_t db_nseq);

/** The SWGPU_EVALUE_OLD_FSC E-value: swgpu_hit_evalue(k, SWGPU_EVALUE_OLD_FSC,
 *  score, qlen, 0, db_residues, db_nseq). */
double swgpu_evalue(const swgpu_karlin_t *k, int32_t score, uint64_t qlen,
                    uint64_t db_residues, uint64_t db_nseq);

/**
 * The Karlin-Altschul parameters of a search with p under matrix m and the
 * gaps, as psiblast computes them for a PSSM: the published gapped
 * parameters of m and the gaps (swgpu_karlin_lookup: SWGPU_ENOTFOUND when
 * there are none) with K multiplied by K_p / K_m, the ungapped K of the
 * PSSM's scores over K_m that of m's own, both with subject residues at
 * Robinson & Robinson's (1991) frequencies (K_p over the positions whose
 * query residue is not X).  lambda and the Spouge parameters are m's.
 * swgpu_search_pssm() uses these.  SWGPU_EINVAL when the PSSM's expected
 * score is not negative.
 */
int swgpu_pssm_karlin(const swgpu_pssm_t *p, const swgpu_matrix_t *m, int gap_open,
                      int gap_extend, swgpu_karlin_t *out);

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
} swgpu_hit_t;

typedef struct {
    size_t query;       /* index in the query set */
    size_t n_hits;      /* best first; ties by database order */
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
 * sequence is scored exactly; per query the top opts->top_n hits with
 * E-value <= opts->evalue and score > 0 are kept, with alignments.
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
 * (score desc, database index asc), the same Karlin-Altschul parameters,
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
 * top_n best of those that pass, bit scores and E-values (a candidate's own
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
 * top-N, tie rule and alignments).  Query position i scores against
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
    int max_hits;            /* a round includes hits among each query's best max_hits only
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
 * hits kept, E-values, tie rule, alignments; opts->no_align drops the
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

/** Parse "6", "7", "pair", or a BLAST column list such as
 *  "6 qseqid sseqid score evalue qlen slen".  SWGPU_EINVAL names a bad column. */
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
void swgpu_outfmt_destroy(swgpu_outfmt_t *f);


/* ------------------------------------------- long pairwise alignment */

/**
 * A progress report of swgpu_align_long().  The phases, in order:
 * "prepass" (the CPU engine's pruned score pass only, when the seed chain
 * found no strong alignment: a cheap pass that finds a score to prune
 * with), "score", "reverse" and "traceback" (not
 * with score_only).  A phase's cells are those of the passes it runs (all
 * of the matrix for "prepass" and "score", the rectangle up to the end for
 * "reverse"); a cell is done once computed or skipped by pruning, so that
 * phase_done / phase_seconds is the phase's rate with pruned cells counted
 * as done (as the score pass's GCUPS in swgpu_long_stats_t) and
 * phase_seconds * (phase_total - phase_done) / phase_done an estimate of
 * the time left (pruned cells cost little, so it is only an estimate).
 * The traceback's total is not known in advance: phase_estimated is 1 and
 * phase_total a model of it (its first level's forward passes, then for
 * every piece a reverse pass, forward passes and the full-matrix traceback
 * of the smallest pieces, along a straight path), revised with the actual
 * pieces after each level (an estimate that falls short grows beyond the
 * cells done, so that only the phase's last report has fraction 1).  Each
 * phase begins with a report where phase_done is 0 and ends with one where
 * fraction is 1 and phase_total == phase_done.
 */
typedef struct {
    const char *phase;      /* "prepass", "score", "reverse" or "traceback" (static string) */
    double fraction;        /* of the phase done, 0..1: phase_done / phase_total, never
                               decreasing within a phase (an estimate revised upwards
                               does not set it back) */
    uint64_t cells;         /* cells computed so far, all phases (pruned ones not counted) */
    double seconds;         /* since the call began */
    uint64_t phase_done;    /* cells of the phase done: computed or pruned */
    uint64_t phase_total;   /* cells of the phase in all: exact, or an estimate (below) */
    int phase_estimated;    /* 1: phase_total is an estimate (the traceback) */
    double phase_seconds;   /* since the phase began */
} swgpu_long_progress_t;

/**
 * Progress callback of swgpu_align_long(): p is valid during the call only.
 * Called from the calling thread, at most a few times a second, and at the
 * start and the end of each phase; it must not call back into the library
 * for the same alignment.
 */
typedef void (*swgpu_progress_fn)(const swgpu_long_progress_t *p, void *user);

/**
 * A transport between the parts of a computation split across processes
 * (swgpu-mpi implements it with MPI; threads of one process can too).
 * Every part calls the same library function with the same arguments and
 * its own transport; the library moves data through these callbacks, each
 * returning 0 or a negative status.
 */
typedef struct {
    int rank;   /* this part, 0 .. size-1 */
    int size;   /* number of parts */
    void *user;
    /* Point to point (boundary columns): len bytes to part `to`, from part
     * `from`.  tag < 32768; messages with the same sender and tag arrive in
     * the order they were sent.  Called from several threads at once. */
    int (*send)(void *user, int to, int tag, const void *buf, size_t len);
    int (*recv)(void *user, int from, int tag, void *buf, size_t len);
    /* Collective, called by every part in the same order from the thread
     * that called the library: part p's len[p] bytes lie in buf at offset
     * len[0] + ... + len[p-1]; on return buf holds every part's bytes. */
    int (*allgather)(void *user, void *buf, const size_t *len);
} swgpu_comm_t;

/** Options of swgpu_align_long(); fill with swgpu_long_opts_init(). */
typedef struct {
    int gap_open;               /* gap of length k costs gap_open + k*gap_extend */
    int gap_extend;
    uint64_t max_host_memory;   /* bytes the call may hold on the host (0: 4 GiB) */
    uint64_t max_device_memory; /* bytes it may hold on the GPU (0: 4 GiB) */
    int score_only;             /* 1: score and coordinates, no CIGAR (no traceback) */
    swgpu_backend_t backend;    /* auto: cuda when a device is present, else cpu;
                                   ref: swgpu_align() (for checks) */
    int threads;                /* CPU threads; 0 = all cores */
    int prune;                  /* 1 (default): skip blocks that provably cannot
                                   reach the best score (exact) */
    swgpu_progress_fn progress; /* NULL: no reports */
    void *progress_user;
    const swgpu_comm_t *comm;   /* NULL: this process alone.  Otherwise every part of
                                   comm calls swgpu_align_long() with the same arguments and
                                   the passes are split across the parts by target columns
                                   (see swgpu_align_long); part 0 gets the CIGAR */
    const char *checkpoint;     /* NULL: none.  A file holding where the call stands (see
                                   swgpu_align_long: Checkpoints) */
    double checkpoint_every;    /* seconds between checkpoints (default 600) */
    int gpus;                   /* cuda: GPUs each pass is split across, the first N visible
                                   (0, the default: all) */
    int gpu_parts;              /* cuda: column slices a pass over few regions is cut into,
                                   dealt round the GPUs (0: automatic, none on one GPU and up
                                   to 8 per GPU on several; at most 256); more than one on
                                   one GPU checks the split there */
} swgpu_long_opts_t;

/** What a swgpu_align_long() call did. */
typedef struct {
    const char *backend;        /* "cpu", "cuda" or "ref" (static string) */
    uint64_t cells;             /* DP cells computed, all phases */
    uint64_t cells_pruned;      /* cells skipped by pruning, all phases */
    uint64_t score_cells;       /* alen * blen: the score-pass matrix */
    uint64_t score_pruned;      /* of which skipped by pruning */
    double score_seconds;       /* phase 1: best score and its end */
    double reverse_seconds;     /* phase 2: reverse pass (start, split rows) */
    double traceback_seconds;   /* phase 3: crossing points, sub-problems, CIGAR */
    double total_seconds;
    double score_gcups;         /* score_cells / score_seconds / 1e9; 0 when the score
                                   pass was not run whole in this call (resumed) */
    uint64_t peak_host_bytes;   /* largest working memory held on the host */
    uint64_t peak_device_bytes; /* ... and on the GPU (0 on the CPU) */
    int levels;                 /* depth of the split recursion */
    uint64_t subproblems;       /* pieces traced back on the CPU */
    int gpus;                   /* GPUs the passes ran on (0 on the CPU) */
    int64_t seed_bound;         /* the score of an alignment chained from exact seed
                                   matches, which the score pass prunes with from its
                                   start (0: none found, or no pruning) */
    int resumed;                /* the phase the call resumed in from a checkpoint (1
                                   pre-pass, 2 score pass, 3 reverse pass, 4 traceback),
                                   0 none: the work before it is in no count or time */
} swgpu_long_stats_t;

/** Defaults: gaps as swgpu_opts_init() for the alphabet, 4 GiB budgets,
 *  backend auto, threads 0, prune 1, no progress, no checkpoint (every 600
 *  seconds when one is given), one GPU, one partition per GPU. */
void swgpu_long_opts_init(swgpu_long_opts_t *o, swgpu_alphabet_t alphabet);

/**
 * Optimal local alignment (affine gaps) of two long sequences, exactly as
 * swgpu_align() defines it (same score, same end and begin coordinates, same
 * tie rule) but in memory bounded by the budgets, multithreaded on the CPU
 * or on an NVIDIA GPU.  a is the query (I in the CIGAR), b the target (D).
 * Three phases: a score pass (best score and its end), a reverse pass from
 * the end (the begin, and rows saved at a spacing the budget allows), then a
 * divide-and-conquer traceback that recomputes only the pieces the path
 * crosses.  The CPU and the GPU paths give identical alignments for the same
 * options; the alignment chosen among co-optimal ones may depend on the
 * memory budget.  out is the caller's (see swgpu_aln_t); st may be NULL.
 * SWGPU_EBUDGET if the budget cannot hold the minimum (the message says how
 * much is needed), SWGPU_ENODEV if backend cuda is asked for and absent,
 * SWGPU_ERANGE if a sequence is longer than 2^31 - 1.  Scores are exact
 * whatever their size (out->score is 64-bit).  Pairs whose values may pass
 * +-2^29 (the sum of the lengths times the largest score or gap cost) run
 * on the CPU engine (backend cuda or auto: on the CPU, with a warning
 * logged) in 32-bit lanes rebased per block, which needs the largest score
 * plus gap open plus gap extend at most 348,165 (SWGPU_ERANGE otherwise) and
 * o->comm unset or of size 1 (SWGPU_ERANGE otherwise).
 * Thread safety: concurrent calls on different outputs are safe (sequences,
 * matrix and options shared); progress is called on the calling thread.
 *
 * Split across parts (o->comm with size > 1, every part calling with the
 * same arguments): the CPU engines of all parts compute each pass together
 * - the score pass, the reverse pass and the traceback's forward passes
 * cut by target columns, one slice per part, the boundary columns passed
 * from part to part strip by strip through comm->send/recv so that the
 * parts work as a pipeline; batches of many regions and the traceback's
 * pieces dealt out whole - and every part gets the alignment, identical to
 * the single-process one (same options, same budget).  Each part uses
 * o->threads threads and holds what one process would (the saved rows are
 * shared out through comm->allgather).  backend cuda: SWGPU_ENODEV; ref:
 * each part computes alone.  When one part fails, every part returns an
 * error: that part its own, the others SWGPU_EPART.
 *
 * Checkpoints (o->checkpoint, a file path): every o->checkpoint_every
 * seconds the call saves where it stands - the state of the pass running
 * (the score pass, its pre-pass or the reverse pass: the strips done, the
 * last one's bottom row, the rows saved so far) or, once the reverse pass
 * is done, what the traceback starts from - into a temporary file beside
 * it, then renamed over it, so that the file always holds a whole
 * checkpoint.  A call that finds the file resumes from it and returns
 * exactly what an uninterrupted call would have; a checkpoint made for
 * other sequences or options (scoring, memory budgets, score_only, prune)
 * is refused with SWGPU_EINVAL, a damaged one with SWGPU_EFORMAT, both
 * naming the file.  The call removes the file when it succeeds.  The CPU
 * engine saves inside a pass (it lets the strips in flight finish, then
 * writes); the GPU engine saves between passes and starts a pass that was
 * interrupted from its beginning (the state is the same: a GPU engine
 * that runs strips from a given one could start from it).  Not with
 * o->comm (SWGPU_EINVAL).  Only one call at a time may use a file.
 */
int swgpu_align_long(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen,
                     const swgpu_matrix_t *m, const swgpu_long_opts_t *o,
                     swgpu_aln_t *out, swgpu_long_stats_t *st);

/** Reverse complement of DNA codes (A<->T, C<->G, N and IUPAC codes mapped
 *  to their complements); out may equal in. */
void swgpu_dna_revcomp(const uint8_t *in, size_t n, uint8_t *out);

/* ------------------------------------------------ long alignment output */

/**
 * A long alignment as its writers read it: the two sequences as aligned
 * and what swgpu_align_long() returned for them.  Everything is the
 * caller's; the writers only read it.  On the minus strand (DNA) target is
 * the target's reverse complement, the sequence aln's target interval is
 * in, while the outputs give target positions on the forward strand.
 */
typedef struct {
    const char *query_id, *target_id; /* names, written as swgpu_put_name() does (NULL: none) */
    const uint8_t *query, *target;    /* residue codes, query_len and target_len of them */
    size_t query_len, target_len;
    swgpu_alphabet_t alphabet;        /* SWGPU_PROTEIN or SWGPU_DNA */
    int minus;                        /* 1: aligned with the target's reverse complement */
    const swgpu_aln_t *aln;           /* without a CIGAR (n_cigar 0) when score-only */
} swgpu_long_record_t;

/*
 * The outputs of `swgpu align`, byte for byte, written to fp (the caller's
 * stream, neither flushed nor closed).  Each checks r first: SWGPU_EINVAL
 * (nothing written) for a NULL argument, an alphabet other than protein or
 * DNA, a protein on the minus strand, an alignment outside its sequences or
 * a CIGAR that does not span its intervals.  SWGPU_EIO when fp's error
 * state is set once written (the caller reports what a later flush or
 * close finds).  Thread safety: concurrent calls on different streams are
 * safe.
 */
/** The summary: names and lengths, the strand (DNA), the score, with other
 *  (the other strand's alignment, of which only minus and aln->score are
 *  read; NULL: one strand) an "other_strand" line, the 1-based ranges
 *  (the target's high to low on minus), and unless score_only the
 *  length, identity, mismatches, gaps and the CIGAR; "alignment none" for
 *  a score of 0. */
int swgpu_long_write_summary(FILE *fp, const swgpu_long_record_t *r,
                             const swgpu_long_record_t *other, int score_only);
/** SAM 1.6: @HD, @SQ (the target), @PG with VN and, when argc > 0, CL (the
 *  argc words of argv joined by spaces, each written as swgpu_put_name()
 *  does), then one record: soft clips for the unaligned ends, mapping
 *  quality 255, AS (score) and NM (mismatches and gap columns); on the
 *  minus strand flag 16 with the query reverse-complemented and the CIGAR
 *  reversed; an unmapped record (flag 4) for a score of 0 or no CIGAR.
 *  SWGPU_EINVAL for a query id over SAM's 254 characters. */
int swgpu_long_write_sam(FILE *fp, const swgpu_long_record_t *r, int argc,
                         const char *const *argv);
/** Wrapped pairwise text: a header (names, lengths, strand, score,
 *  identities and gaps) and blocks of 60 columns, query, match line ('|'
 *  identical, '+' a pair m scores > 0) and target, with their 1-based
 *  positions (the target's on its forward strand).  m: the matrix the
 *  alignment was scored with (required). */
int swgpu_long_write_pair(FILE *fp, const swgpu_long_record_t *r, const swgpu_matrix_t *m);
/** An SVG picture (800 x 800 plot) of the alignment path, target on x
 *  (forward strand), query on y, with the names, score and identity. */
int swgpu_long_write_svg(FILE *fp, const swgpu_long_record_t *r);

#ifdef __cplusplus
}
#endif
#endif /* SWGPU_H */
