/*
 * cli.h - shared pieces of the swgpu command-line tool (not the library).
 * tools/swgpu.c holds main() and dispatches to one function per subcommand;
 * each subcommand lives in its own tools/cmd_*.c file.
 */
#ifndef SWGPU_CLI_H
#define SWGPU_CLI_H

#include "swgpu.h"

#include <stdint.h>
#include <stdio.h>

/* subcommands: argv[0] is the subcommand name; return the exit status */
int swgpu_cmd_search(int argc, char **argv);
int swgpu_cmd_makedb(int argc, char **argv);
int swgpu_cmd_align(int argc, char **argv);

/* The command-line driver: main() of swgpu, run on every rank by swgpu-mpi. */
int cli_main(int argc, char **argv);

/*
 * Hooks through which swgpu-mpi (tools/mpi/) runs a command's work across
 * MPI ranks; NULL in swgpu.  Every rank parses the same command line and
 * reads the same queries; the hooks split the rest.
 */
typedef struct {
    int writer;  /* 1 on the rank that writes the outputs and prints (rank 0) */
    int threads; /* what --threads 0 means (0: all cores) */
    /* cli_error() hands its message here instead of printing it */
    void (*error)(const char *msg);
    /* search: open this rank's part of the database (the split may depend on
     * the ranks' speeds, measured with the queries and the options o), or
     * plan to stream it from disk when it exceeds max_memory (--max-memory,
     * 0: not given) */
    int (*db_open)(const char *path, swgpu_alphabet_t type, const swgpu_seqset_t *queries,
                   const swgpu_opts_t *o, uint64_t max_memory, swgpu_db_t **db,
                   swgpu_read_info_t *info);
    /* search: the whole search over every rank's part; on the writer *res and
     * *names (a database holding every hit's target, for the output) */
    int (*search)(const swgpu_seqset_t *queries, const swgpu_db_t *db, const swgpu_matrix_t *m,
                  const swgpu_opts_t *o, swgpu_search_result_t **res, swgpu_db_t **names);
    /* align: swgpu_align_long() with its passes split across the ranks (the
     * writer gets the alignment) */
    int (*align_long)(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen,
                      const swgpu_matrix_t *m, const swgpu_long_opts_t *o, swgpu_aln_t *out,
                      swgpu_long_stats_t *st);
} cli_dist_t;
extern const cli_dist_t *cli_dist;
/* the path a rank writes an output to: /dev/null on the ranks that do not
 * write (swgpu-mpi), path itself otherwise */
const char *cli_out_path(const char *path);

/*
 * Option parsing, apart from running: cli_<command>_args() reads argv with
 * getopt_long (argv is permuted, as getopt does; the getopt state is reset
 * first, so it may be called many times in one process) into the command's
 * arguments and checks what needs no file.  It opens, reads and writes no
 * file and never exits.  Returns CLI_RUN (run the command), CLI_HELP (--help
 * was given: print the usage, exit 0) or CLI_ERROR (one error line was
 * printed: exit 1).
 */
enum { CLI_ERROR = -1, CLI_RUN = 0, CLI_HELP = 1 };

typedef struct {
    const char *qpath, *dpath; /* -q, -d (both required) */
    const char *mname;         /* --matrix, NULL: BLOSUM62 */
    const char *fmtspec;       /* -f ("6") */
    const char *opath;         /* -o, NULL: stdout */
    const char *kernel;        /* --kernel, NULL: the backend's default */
    int top_n, threads, gpus, verbosity, no_align, no_self;
    int gap_open, gap_extend, match, mismatch;
    int have_open, have_extend, have_match, have_mismatch;
    uint64_t maxmem;           /* --max-memory, 0: not given */
    double evalue;
    swgpu_alphabet_t type;     /* --type, SWGPU_AUTO: detected */
    swgpu_backend_t backend;
    swgpu_evalue_model_t evalue_model; /* --evalue-model (spouge) */
    swgpu_strand_t strand;     /* --strand (both) */
    int strand_given;          /* --strand was given (DNA only) */
    const char **pssm;         /* --pssm FILE, npssm of them (malloc'ed: cli_search_args_free) */
    int npssm;
    int iterations;            /* --iterations (1) */
    double inclusion;          /* --inclusion-evalue (0.002) */
    const char *out_pssm;      /* --out-pssm DIR, NULL: none */
    int report_all;            /* --report all (0: last) */
    swgpu_rank_t rank;         /* --rank (evalue) */
    int comp_based_stats;      /* --comp-based-stats (0) */
    int max_hsps;              /* --max-hsps (1) */
} cli_search_args_t;
int cli_search_args(int argc, char **argv, cli_search_args_t *a);
/* what cli_search_args() allocated (after CLI_RUN or CLI_HELP) */
void cli_search_args_free(cli_search_args_t *a);
/* the library options of a search of `alphabet` sequences with these
 * arguments (the gap defaults depend on the alphabet) */
void cli_search_opts(const cli_search_args_t *a, swgpu_alphabet_t alphabet, swgpu_opts_t *o);

/* blast_args.c: argv with BLAST+'s single-dash options (-query, -db, -out,
 * -outfmt, -evalue, -max_target_seqs, -num_threads) made swgpu's, for
 * getopt_long with these options; -comp_based_stats V as
 * --comp-based-stats with blastp's meaning of V; any other of BLAST's refused (CLI_ERROR, after a message naming
 * swgpu's option where there is one).  *out_argv: malloc'ed, NULL-ended,
 * its strings argv's or static. */
struct option;
int cli_blast_args(int argc, char **argv, const char *shortopts, const struct option *longopts,
                   int *out_argc, char ***out_argv);

typedef struct {
    const char *apath, *bpath; /* the two sequence files */
    const char *mname;         /* --matrix, NULL: BLOSUM62 */
    const char *fmt;           /* summary, sam or pair */
    const char *opath, *plot;  /* -o (NULL: stdout), --plot (NULL: none) */
    const char *strand;        /* plus, minus or both */
    int gap_open, gap_extend;  /* -1: the alphabet's default */
    int match, mismatch, have_match, have_mismatch;
    int threads, verbosity, score_only, no_prune;
    uint64_t maxmem;           /* --max-memory, 0: the default budget */
    swgpu_alphabet_t type;
    swgpu_backend_t backend;
    const char *checkpoint;    /* --checkpoint, NULL: none */
    double checkpoint_every;   /* --checkpoint-every seconds (600) */
    int gpus, gpu_parts;       /* --gpus, --gpu-parts (0: all GPUs; automatic slices) */
} cli_align_args_t;
int cli_align_args(int argc, char **argv, cli_align_args_t *a);
/* the library options of an alignment of `alphabet` sequences */
void cli_align_opts(const cli_align_args_t *a, swgpu_alphabet_t alphabet, swgpu_long_opts_t *o);

typedef struct {
    const char *in, *out;
    swgpu_alphabet_t type;
    int verbosity;
    int threads; /* 0: all cores */
} cli_makedb_args_t;
int cli_makedb_args(int argc, char **argv, cli_makedb_args_t *a);

/* logging helpers installed by main(): "[swgpu 1.23s] message" on stderr */
void cli_install_logger(int verbosity);
/* the verbosity the logger was last installed with (1 before that) */
int cli_verbosity(void);
/* print "swgpu: <msg>" and a newline to stderr (or to the stream given to
 * cli_error_stream(); NULL: stderr again) */
void cli_error(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
void cli_error_stream(FILE *fp);
/* the clock of the log lines starts (main() calls it first) */
void cli_start_clock(void);
double cli_elapsed(void);
/* --threads N: N above the online cores is clamped to them, with a warning
 * (unless quiet); negative values are returned unchanged, and 0 too (all
 * cores) unless cli_dist gives it a meaning */
int cli_clamp_threads(int threads, int verbosity);
/* getopt_long's error for a subcommand cmd ("search"): c ':' (opt, the word
 * that gave it, lacks its value) or anything else (an unknown option: -X
 * from optopt, else opt) told as one error line; returns CLI_ERROR */
int cli_getopt_error(const char *cmd, int c, const char *opt);
/* an int option's value; -1 after an error naming opt when s is not an
 * integer or out of int's range */
int cli_parse_int(const char *opt, const char *s, int *out);
/* "123", "512K", "1.5G", "4g" -> bytes (binary multiples), at least 1 MiB
 * (a memory budget); -1 after an error naming the option */
int cli_parse_size(const char *opt, const char *s, uint64_t *out);
/* --type: "prot"/"protein" or "dna"/"nucl"; -1 after an error */
int cli_parse_type(const char *s, swgpu_alphabet_t *a);
/* print the message of a failed library call (swgpu_last_error(), else
 * swgpu_strerror(rc)) as cli_error() does */
void cli_lib_error(int rc);
/* the process's peak resident memory in MB (0 when unknown) */
double cli_peak_rss_mb(void);
/* A duration for people, s seconds (negative: 0), in buf of n bytes:
 * CLI_DURATION_UNITS "42 s", "12m05s", "3h07m" (align's progress);
 * CLI_DURATION_CLOCK "12 s", "3:07", "1:05:02" (search's progress). */
enum { CLI_DURATION_UNITS, CLI_DURATION_CLOCK };
void cli_fmt_duration(char *buf, size_t n, double s, int style);

/* An output file written atomically (see outfile.c).  path NULL: stdout. */
#include <limits.h>
#include <stdio.h>
typedef struct {
    const char *path;         /* as given */
    char dest[PATH_MAX];      /* path, symbolic links followed: what the rename replaces */
    char tmp[PATH_MAX + 32];  /* non-empty while a temporary exists */
    int tmpdir;               /* tmp is a directory (cli_out_open_dir) */
    FILE *fp;
} cli_out_t;
/* Open; NULL after printing an error. */
FILE *cli_out_open(cli_out_t *o, const char *path);
/* For a writer that takes a file name (makedb): a private directory
 * dest.tmp.<pid> beside path's target, and in *file the name inside it to
 * write; cli_out_close() renames that file over the target, and
 * cli_out_abort() or SIGINT/SIGTERM/SIGHUP remove the directory with what it
 * holds.  A target that exists and is not a regular file (a directory, a
 * FIFO, a device) is refused.  -1 after printing an error naming opt. */
int cli_out_open_dir(cli_out_t *o, const char *opt, const char *path, char *file, size_t size);
/* Flush, close and rename into place; -1 after printing an error. */
int cli_out_close(cli_out_t *o);
/* Close and remove the temporary (safe to call twice or when unopened). */
void cli_out_abort(cli_out_t *o);
/* path with its symbolic links followed (the last link's target, which
 * need not exist) in dest: 0; 1 (dest = path) when the links name an open
 * file rather than a path (/dev/stdout, /dev/fd/N, /proc/...: written in
 * place); -1 after an error naming opt (an empty name, a loop of links, a
 * path that cannot be looked up). */
int cli_out_resolve(const char *opt, const char *path, char *dest, size_t size);
/* An input of a command: its path and what it is ("query file", ...). */
typedef struct {
    const char *path;
    const char *what;
} cli_input_t;
/* -1 after printing an error when output `out` (named by `opt`, e.g. "-o")
 * cannot be written or would replace an input: an empty name, a directory,
 * a name too long for its temporary file, a directory where the temporary
 * cannot be created (missing, read-only), or the same file as one of the n
 * inputs (an input "-" is standard input: the file it reads, when it is
 * one): same device and inode, links followed, so a symbolic or hard link to
 * an input counts too, or when an input names a BLAST database (a prefix)
 * and out is one of its files (versions 4 and 5).  0 when out is NULL, a
 * device such as /dev/null or a FIFO, or can be written. */
int cli_check_output(const char *opt, const char *out, const cli_input_t *in, int n);
/* 1 when paths a and b name the same file, existing or not (the same
 * directory, resolved, and the same name; or the same device and inode) */
int cli_same_path(const char *a, const char *b);

#endif
