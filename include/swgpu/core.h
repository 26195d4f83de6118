/*
 * swgpu/core.h - the core of the public API: statuses and messages, the
 * logger, alphabets, sequences and sets, matrices, PSSMs, options, pair
 * alignment, databases and statistics.
 * Included by swgpu.h: include <swgpu.h>, not this file.
 */
#ifndef SWGPU_CORE_H
#define SWGPU_CORE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif


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

/** How a search ranks each query's hits, and so which top_n it keeps
 *  (swgpu_opts_t.rank). */
typedef enum {
    SWGPU_RANK_EVALUE = 0,   /* BLAST+'s order (default): E-value ascending, every E-value
                                below 1e-180 (printed 0.0) counting as equal, then score
                                descending, then database index descending (blastp 2.12
                                lists equal hits from the last in the database) */
    SWGPU_RANK_SCORE = 1     /* score descending, then database index ascending */
} swgpu_rank_t;

typedef struct {
    int gap_open;            /* gap of length k costs gap_open + k*gap_extend */
    int gap_extend;
    int top_n;               /* hits kept per query (>= 1): the best by rank */
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
                                the whole search's hits, best first by rank, no_self
                                applied, no alignments: with published
                                parameters the best top_n of those whose E-value (the whole
                                database's size) passes opts->evalue, else (parameters fitted
                                on the whole database later: E-values that fall with the
                                score alone) the best top_n by score with score > 0, equal
                                scores by rank's rule for database indices,
                                plus, where the fallback parameters' E-values depend on the
                                subject's length (Spouge), the best top_n that pass under
                                them.  evalue: the E-value under the published parameters,
                                else the fallback ones; karlin zero, bits 0.
                                swgpu_search_merge() finishes them */
    swgpu_scores_fn on_scores; /* NULL, or called with every query's scores (for fits) */
    void *on_scores_user;
    swgpu_rank_t rank;       /* the order of each query's hits, which picks the top_n kept
                                among those that pass evalue: every subject is scored, so
                                the cut is exact in either order (default
                                SWGPU_RANK_EVALUE) */
    /* Composition-based statistics of a protein search, BLAST+'s -comp_based_stats:
     * 0 (default) none, the matrix's exact scores; 1 the matrix scaled to each pair's
     * compositions (Schaffer et al. 2001); 2 the matrix adjusted to them (Yu &
     * Altschul 2005) where BLAST's rule says so, else scaled (blastp's default); 3
     * always adjusted.  With 1..3, swgpu_search() keeps BLAST's preliminary hits (the
     * best 1050 by the matrix's score, or 2 top_n + 50 above top_n 500, with E-value
     * <= evalue, 5 evalue for 2 and 3), rescores each exactly by Smith-Waterman under
     * its pair's integer matrix at 32 times the matrix's scale, gap costs times 32,
     * against the subject with its SEG segments as X (as blastp does), and reports
     * round(score / 32), BLAST's E-value of score / 32 and the bit score of the
     * rounded score, ranked by rank; the alignments are
     * the adjusted matrix's; the result's align_seconds includes the rescoring.  BLOSUM62 only; sequence queries only (swgpu_search_pssm,
     * swgpu_search_iterate and candidates refuse it). */
    int comp_based_stats;
    int max_hsps;            /* alignments (HSPs) per query, subject and strand (0 or 1: one,
                                the default).  N > 1: after a subject's best alignment, up
                                to N - 1 more on its strand, each the best local alignment
                                that aligns no pair (i, j) an earlier one aligns
                                (Waterman-Eggert as Huang & Miller's SIM computes them:
                                lalign36's scores); a DNA search of both strands also takes
                                up to N from the subject's other strand.  Each has its own
                                bit score and E-value (no sum statistics) and must pass
                                opts->evalue; top_n counts subjects.  They are further
                                swgpu_hit_t entries after their subject's first (see
                                swgpu_hit_t.hsp).  Needs the alignments (not with
                                no_align) */
} swgpu_opts_t;

/** Defaults: protein open 11 extend 1; DNA open 5 extend 2; top_n 10,
 *  evalue 10, threads 0, backend auto, evalue_model SWGPU_EVALUE_SPOUGE,
 *  rank SWGPU_RANK_EVALUE. */
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
/** swgpu_db_open() reading a plain (not compressed) FASTA file on `threads`
 *  threads (0: all cores, as swgpu_db_open() does): the file is cut into
 *  pieces at record starts, read in parallel and laid out in one mapping.
 *  The database, the messages and the statuses are the same whatever the
 *  threads; gzip and FASTQ are read on one thread.  A stream (a pipe such as
 *  /dev/stdin, a socket) is read to its end into memory, at most the read
 *  limit (SWGPU_READ_LIMIT, by default half the physical memory), then as a
 *  file is. */
int swgpu_db_open_threads(const char *path, swgpu_alphabet_t alphabet, int threads,
                          swgpu_db_t **out, swgpu_read_info_t *info);
/** `swgpu makedb`: `in` read as swgpu_db_open_threads() reads it and
 *  written as the makedb file out_path (a temporary name, then renamed),
 *  byte for byte the file swgpu_db_write() writes of that database (a
 *  plain FASTA file is laid out in memory as the file is, then written;
 *  SWGPU_MAKEDB_MAPPED=1 lays it out in the new file, mapped).  *out (may
 *  be NULL) gets the database; info (may be NULL) the counts. */
int swgpu_makedb(const char *in, const char *out_path, swgpu_alphabet_t alphabet, int threads,
                 swgpu_db_t **out, swgpu_read_info_t *info);
size_t swgpu_db_size(const swgpu_db_t *db);
uint64_t swgpu_db_residues(const swgpu_db_t *db);
uint64_t swgpu_db_max_len(const swgpu_db_t *db);
swgpu_alphabet_t swgpu_db_alphabet(const swgpu_db_t *db);
/** Sequence i in database (file) order.  For a part (below), i is an index
 *  of the whole database, and only the part's own sequences are found
 *  (SWGPU_ENOTFOUND for the others). */
int swgpu_db_get(const swgpu_db_t *db, size_t i, swgpu_seq_t *out);
void swgpu_db_destroy(swgpu_db_t *db);

/**
 * What blastp 2.12 prints in its subject columns for a sequence.  From a
 * BLAST database made with -parse_seqids: seqid is the defline's preferred
 * Seq-id in FASTA form (gi|N| before it when the defline has a gi; a local
 * id without lcl|), acc and accver its accession without and with the
 * version (gnl|db|tag: db:tag, pdb|1ABC|A: 1ABC_A, ...), title the title
 * alone ("N/A" when empty); a sequence stored once for several deflines
 * joins theirs in allseqid (';') and alltitles ("<>").  A BLAST database
 * made without -parse_seqids: seqid, acc, accver and allseqid are the id,
 * title the FASTA header line as stored (blanks kept).  FASTA and makedb
 * databases: the four are the id, title and alltitles NULL (print the id
 * and description joined by a blank).  Taxonomy (BLAST databases whose deflines carry
 * taxids, as makeblastdb -taxid / -taxid_map writes them): taxid is the
 * first defline's that has one, "N/A" when none; taxids every defline's in
 * ascending order, each once, joined by ';' (0 for a defline without), "N/A"
 * for a database that is not a BLAST database.
 */
typedef struct {
    const char *seqid, *acc, *accver, *allseqid; /* sseqid sacc saccver sallseqid */
    const char *title, *alltitles;               /* stitle salltitles, or NULL */
    const char *taxid, *taxids;                  /* staxid staxids */
} swgpu_seq_ids_t;

/** The subject columns of sequence i in database order (for a part, an index
 *  of the whole database); the strings live as long as db.  SWGPU_EINVAL
 *  when i is out of range. */
int swgpu_db_ids(const swgpu_db_t *db, size_t i, swgpu_seq_ids_t *out);

/* NCBI's taxonomy names database (taxdb.bti and taxdb.btd, as blastp reads
 * them: a taxid's scientific name, common name, BLAST name and
 * superkingdom). */
typedef struct swgpu_taxdb swgpu_taxdb_t;

/** One taxon's names: pointers into the mapped file, each len bytes (no
 *  terminating NUL). */
typedef struct {
    const char *sciname, *comname, *blastname, *kingdom;
    size_t sciname_len, comname_len, blastname_len, kingdom_len;
} swgpu_taxon_t;

/**
 * Open dir/taxdb.bti and dir/taxdb.btd; dir NULL: where blastp 2.12 looks
 * for them, the current directory, then each ':'-separated directory of
 * $BLASTDB in order (not the database's directory).  *out is NULL when no
 * taxdb.bti is found (not an error: the names print as N/A); SWGPU_EDB
 * naming the file when one is damaged (bad magic, count or offsets), or
 * when taxdb.btd is missing beside taxdb.bti.
 */
int swgpu_taxdb_open(const char *dir, swgpu_taxdb_t **out);
/** taxid's names into *out: 1 when found, 0 when the database lacks it. */
int swgpu_taxdb_lookup(const swgpu_taxdb_t *t, int64_t taxid, swgpu_taxon_t *out);
void swgpu_taxdb_destroy(swgpu_taxdb_t *t);

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
    uint64_t total_max_len;  /* the whole database's longest sequence (swgpu_db_max_len
                                gives the part's) */
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

/**
 * A database of those of the sequences targets[0..n) (database indices, in
 * any order, repeats and indices out of range ignored) that lie in the part
 * [from, to) of the makedb file path (swgpu_db_open_part's cut): their
 * residues only, read from disk, and the file's index mapped (not read) for
 * their names.  It is a part of the whole (its indices, names and size, see
 * swgpu_db_part_info), so that swgpu_search_align() aligns the hits it holds
 * and swgpu_db_get() names them.  The index entries and names of the
 * sequences held are checked, the whole-file checksum is not
 * (swgpu_db_verify).  Thread safety as swgpu_db_open().
 */
int swgpu_db_open_hits(const char *path, double from, double to, const uint64_t *targets,
                       size_t n, swgpu_db_t **out);

/** The whole-file checksum of the makedb file path checked, the file read
 *  in pieces of 1 MiB (the memory it takes), as swgpu_db_open() checks it:
 *  SWGPU_EDB "checksum mismatch (corrupt file)" when it differs.  Other
 *  kinds of databases have none: SWGPU_OK. */
int swgpu_db_verify(const char *path);

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

#ifdef __cplusplus
}
#endif

#endif /* SWGPU_CORE_H */
