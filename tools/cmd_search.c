/*
 * cmd_search.c - `swgpu search`: queries against a database, top hits with
 * E-values and alignments, written in a BLAST tabular or pairwise format.
 *
 * With -o FILE the output goes to FILE.tmp.<pid>, renamed to FILE only once
 * everything was written; on any failure (or SIGINT/SIGTERM/SIGHUP) the
 * temporary file is removed, so a complete-looking truncated file is never
 * left behind.  An existing FILE that is not a regular file (/dev/null, a
 * FIFO, a symbolic link) is written in place instead.
 */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

static void usage(FILE *fp)
{
    fputs("usage: swgpu search -q QUERIES -d DB [options]\n"
          "\n"
          "Scores every query against every database sequence exactly (Smith-Waterman,\n"
          "affine gaps) and reports the best hits with E-values and alignments.\n"
          "\n"
          "input:\n"
          "  -q, --query FILE       query sequences: FASTA or FASTQ, plain or gzip (or a\n"
          "                         database, as -d takes it)\n"
          "  -d, --db FILE          database: a 'swgpu makedb' file, a BLAST database (its\n"
          "                         name as given to makeblastdb -out), or FASTA/FASTQ (plain\n"
          "                         or gzip)\n"
          "      --type prot|dna    sequence type (default: detected from the sequences)\n"
          "\n"
          "scoring (a gap of length k costs OPEN + k*EXTEND, as in BLAST and ssearch36):\n"
          "      --matrix NAME|FILE protein matrix: BLOSUM45 BLOSUM50 BLOSUM62 BLOSUM80 BLOSUM90\n"
          "                         PAM30 PAM70 PAM250, or an NCBI-format file (default BLOSUM62)\n"
          "      --match N          DNA only: score of identical bases (default 2)\n"
          "      --mismatch N       DNA only: score of different bases (default -3)\n"
          "      --gap-open O       gap open penalty (default 11 protein, 5 DNA)\n"
          "      --gap-extend E     gap extension penalty (default 1 protein, 2 DNA)\n"
          "\n"
          "reporting:\n"
          "  -n, --top N            hits reported per query (default 10)\n"
          "  -e, --evalue X         report hits with E-value <= X (default 10)\n"
          "      --evalue-model M   spouge (default): E-values as BLAST+ computes them by\n"
          "                         default (Spouge's finite-size correction, from the lengths\n"
          "                         of the query, the hit and the database); old-fsc: as\n"
          "                         BLAST+ with OLD_FSC=1 in the environment (Karlin-Altschul\n"
          "                         over the length-adjusted search space).  DNA and fitted\n"
          "                         statistics have no Spouge parameters and use old-fsc\n"
          "  -f, --outfmt FMT       6 (BLAST tabular, default), 7 (tabular with comment lines),\n"
          "                         pair (pairwise alignments), or '6 COLUMNS...' with columns\n"
          "                         qseqid sseqid pident length mismatch gapopen qstart qend\n"
          "                         sstart send evalue bitscore score qlen slen nident gaps cigar\n"
          "  -o, --out FILE         write to FILE (atomically: renamed when complete; default stdout)\n"
          "      --no-align         scores and E-values only (alignment columns: N/A)\n"
          "      --no-self          do not report a query's own sequence (same id, same\n"
          "                         residues) as its hit, e.g. in -q X -d X (all against all)\n"
          "\n"
          "execution:\n"
          "  -t, --threads N        CPU threads (default 0 = all cores)\n"
          "      --backend B        auto, ref, cpu or cuda (default auto: cuda if a GPU is\n"
          "                         present, else cpu)\n"
          "      --kernel NAME      GPU kernel (default: the backend's choice)\n"
          "      --gpus N           GPUs to use (default 0 = all visible)\n"
          "      --max-memory SIZE  GPU memory each GPU may use, e.g. 2G (default 7/8 of its\n"
          "                         free memory); a larger database is streamed in batches\n"
          "  -v, --verbose          more messages (repeat for debug)\n"
          "      --quiet            no warnings, no progress and no summary line\n"
          "  -h, --help             this text\n"
          "\n"
          "Progress (queries scanned, GCUPS, time left) goes to standard error when it is a\n"
          "terminal; a summary line (cells, scan time, GCUPS, overflows, alignment time,\n"
          "wall time, peak memory) always does, unless --quiet.\n",
          fp);
}

/* ------------------------------------------------------- option parsing */

static int parse_int(const char *opt, const char *s, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (end == s || *end || errno || v < INT_MIN || v > INT_MAX) {
        cli_error("%s: '%s' is not an integer", opt, s);
        return -1;
    }
    *out = (int)v;
    return 0;
}

static int parse_double(const char *opt, const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end || errno || !isfinite(v)) {
        cli_error("%s: '%s' is not a number", opt, s);
        return -1;
    }
    *out = v;
    return 0;
}

static int parse_type(const char *s, swgpu_alphabet_t *a)
{
    if (!strcmp(s, "prot") || !strcmp(s, "protein"))
        *a = SWGPU_PROTEIN;
    else if (!strcmp(s, "dna") || !strcmp(s, "nucl"))
        *a = SWGPU_DNA;
    else {
        cli_error("--type: '%s' is not prot or dna", s);
        return -1;
    }
    return 0;
}

static int parse_evalue_model(const char *s, swgpu_evalue_model_t *m)
{
    if (!strcmp(s, "spouge"))
        *m = SWGPU_EVALUE_SPOUGE;
    else if (!strcmp(s, "old-fsc"))
        *m = SWGPU_EVALUE_OLD_FSC;
    else {
        cli_error("--evalue-model: '%s' is not spouge or old-fsc", s);
        return -1;
    }
    return 0;
}

static int parse_backend(const char *s, swgpu_backend_t *b)
{
    if (!strcmp(s, "auto")) *b = SWGPU_BACKEND_AUTO;
    else if (!strcmp(s, "ref")) *b = SWGPU_BACKEND_REF;
    else if (!strcmp(s, "cpu")) *b = SWGPU_BACKEND_CPU;
    else if (!strcmp(s, "cuda")) *b = SWGPU_BACKEND_CUDA;
    else {
        cli_error("--backend: '%s' is not auto, ref, cpu or cuda", s);
        return -1;
    }
    return 0;
}

/* The message of a failed library call. */
static void lib_error(int rc)
{
    const char *m = swgpu_last_error();
    cli_error("%s", m && *m ? m : swgpu_strerror(rc));
}

/* ------------------------------------------------------------- summary */

static double peak_rss_mb(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return 0.0;
    return (double)ru.ru_maxrss / 1024.0; /* Linux: kilobytes */
}

/* ------------------------------------------------------------ progress */

/* "1:05:02", "3:07" or "12 s" */
static void fmt_duration(double s, char *buf, size_t size)
{
    long t = s < 0 ? 0 : (long)(s + 0.5);
    if (t >= 3600)
        snprintf(buf, size, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
    else if (t >= 60)
        snprintf(buf, size, "%ld:%02ld", t / 60, t % 60);
    else
        snprintf(buf, size, "%ld s", t);
}

/* On a terminal (standard error), the scan's progress in one line rewritten
 * in place: queries done, the share of the cells, GCUPS and the time left;
 * a newline once the last query is scanned (the alignments still queued
 * and the summary follow). */
static void on_progress(size_t done, size_t total, uint64_t cells_done, uint64_t cells_total,
                        double seconds, void *user)
{
    (void)user;
    double frac = cells_total ? (double)cells_done / (double)cells_total : 1.0;
    char left[32] = "";
    if (done < total && frac > 0 && seconds > 0) {
        char d[24];
        fmt_duration(seconds * (1.0 - frac) / frac, d, sizeof d);
        snprintf(left, sizeof left, ", %s left", d);
    }
    fprintf(stderr, "\r[swgpu %.1fs] search: %zu of %zu queries (%.1f%%), %.1f GCUPS%s   ",
            cli_elapsed(), done, total, 100.0 * frac,
            seconds > 0 ? (double)cells_done / seconds / 1e9 : 0.0, left);
    if (done == total)
        fputc('\n', stderr);
    fflush(stderr);
}

enum {
    OPT_MATRIX = 256, OPT_GAP_OPEN, OPT_GAP_EXTEND, OPT_MATCH, OPT_MISMATCH, OPT_TYPE,
    OPT_BACKEND, OPT_KERNEL, OPT_GPUS, OPT_MAXMEM, OPT_QUIET, OPT_NO_ALIGN, OPT_NO_SELF,
    OPT_EVALUE_MODEL
};

int cli_search_args(int argc, char **argv, cli_search_args_t *a)
{
    static const struct option longopts[] = {
        {"query", required_argument, NULL, 'q'},
        {"db", required_argument, NULL, 'd'},
        {"top", required_argument, NULL, 'n'},
        {"evalue", required_argument, NULL, 'e'},
        {"outfmt", required_argument, NULL, 'f'},
        {"out", required_argument, NULL, 'o'},
        {"threads", required_argument, NULL, 't'},
        {"verbose", no_argument, NULL, 'v'},
        {"help", no_argument, NULL, 'h'},
        {"matrix", required_argument, NULL, OPT_MATRIX},
        {"gap-open", required_argument, NULL, OPT_GAP_OPEN},
        {"gap-extend", required_argument, NULL, OPT_GAP_EXTEND},
        {"match", required_argument, NULL, OPT_MATCH},
        {"mismatch", required_argument, NULL, OPT_MISMATCH},
        {"type", required_argument, NULL, OPT_TYPE},
        {"backend", required_argument, NULL, OPT_BACKEND},
        {"kernel", required_argument, NULL, OPT_KERNEL},
        {"gpus", required_argument, NULL, OPT_GPUS},
        {"max-memory", required_argument, NULL, OPT_MAXMEM},
        {"quiet", no_argument, NULL, OPT_QUIET},
        {"no-align", no_argument, NULL, OPT_NO_ALIGN},
        {"no-self", no_argument, NULL, OPT_NO_SELF},
        {"evalue-model", required_argument, NULL, OPT_EVALUE_MODEL},
        {NULL, 0, NULL, 0},
    };
    int c;

    memset(a, 0, sizeof *a);
    a->fmtspec = "6";
    a->top_n = 10;
    a->gap_open = a->gap_extend = -1;
    a->match = 2;
    a->mismatch = -3;
    a->verbosity = 1;
    a->evalue = 10.0;
    a->type = SWGPU_AUTO;
    a->backend = SWGPU_BACKEND_AUTO;
    a->evalue_model = SWGPU_EVALUE_SPOUGE;
    opterr = 0;
    optind = 0; /* glibc: a full reset of getopt's state (0 then means 1) */
    while ((c = getopt_long(argc, argv, ":q:d:n:e:f:o:t:vh", longopts, NULL)) != -1) {
        const char *opt = optind > 1 ? argv[optind - 1] : "";
        switch (c) {
        case 'q': a->qpath = optarg; break;
        case 'd': a->dpath = optarg; break;
        case 'n': if (parse_int("-n", optarg, &a->top_n)) return CLI_ERROR; break;
        case 'e': if (parse_double("--evalue", optarg, &a->evalue)) return CLI_ERROR; break;
        case 'f': a->fmtspec = optarg; break;
        case 'o': a->opath = optarg; break;
        case 't': if (parse_int("--threads", optarg, &a->threads)) return CLI_ERROR; break;
        case 'v': a->verbosity++; break;
        case 'h': return CLI_HELP;
        case OPT_MATRIX: a->mname = optarg; break;
        case OPT_GAP_OPEN:
            if (parse_int("--gap-open", optarg, &a->gap_open)) return CLI_ERROR;
            a->have_open = 1;
            break;
        case OPT_GAP_EXTEND:
            if (parse_int("--gap-extend", optarg, &a->gap_extend)) return CLI_ERROR;
            a->have_extend = 1;
            break;
        case OPT_MATCH:
            if (parse_int("--match", optarg, &a->match)) return CLI_ERROR;
            a->have_match = 1;
            break;
        case OPT_MISMATCH:
            if (parse_int("--mismatch", optarg, &a->mismatch)) return CLI_ERROR;
            a->have_mismatch = 1;
            break;
        case OPT_TYPE: if (parse_type(optarg, &a->type)) return CLI_ERROR; break;
        case OPT_BACKEND: if (parse_backend(optarg, &a->backend)) return CLI_ERROR; break;
        case OPT_KERNEL: a->kernel = optarg; break;
        case OPT_GPUS: if (parse_int("--gpus", optarg, &a->gpus)) return CLI_ERROR; break;
        case OPT_MAXMEM:
            if (cli_parse_size("--max-memory", optarg, &a->maxmem)) return CLI_ERROR;
            break;
        case OPT_QUIET: a->verbosity = 0; break;
        case OPT_NO_ALIGN: a->no_align = 1; break;
        case OPT_NO_SELF: a->no_self = 1; break;
        case OPT_EVALUE_MODEL:
            if (parse_evalue_model(optarg, &a->evalue_model)) return CLI_ERROR;
            break;
        case ':':
            cli_error("search: option '%s' needs a value (see swgpu search --help)", opt);
            return CLI_ERROR;
        default:
            if (optopt && optopt < 256)
                cli_error("search: unknown option '-%c' (see swgpu search --help)", optopt);
            else
                cli_error("search: unknown option '%s' (see swgpu search --help)", opt);
            return CLI_ERROR;
        }
    }
    if (optind < argc) {
        cli_error("search: unexpected argument '%s' (see swgpu search --help)", argv[optind]);
        return CLI_ERROR;
    }
    if (!a->qpath || !a->dpath) {
        cli_error("search: %s (see swgpu search --help)",
                  !a->qpath && !a->dpath ? "-q QUERIES and -d DB are required"
                  : !a->qpath            ? "-q QUERIES is required"
                                         : "-d DB is required");
        return CLI_ERROR;
    }
    return CLI_RUN;
}

void cli_search_opts(const cli_search_args_t *a, swgpu_alphabet_t alphabet, swgpu_opts_t *o)
{
    swgpu_opts_init(o, alphabet);
    if (a->have_open) o->gap_open = a->gap_open;
    if (a->have_extend) o->gap_extend = a->gap_extend;
    o->top_n = a->top_n;
    o->evalue = a->evalue;
    o->threads = a->threads;
    o->backend = a->backend;
    o->kernel = a->kernel;
    o->gpus = a->gpus;
    o->max_gpu_memory = a->maxmem;
    o->no_align = a->no_align;
    o->no_self = a->no_self;
    o->evalue_model = a->evalue_model;
}

int swgpu_cmd_search(int argc, char **argv)
{
    cli_search_args_t a;
    swgpu_outfmt_t *fmt = NULL;
    swgpu_seqset_t *queries = NULL;
    swgpu_db_t *db = NULL, *names = NULL;
    swgpu_matrix_t *m = NULL;
    swgpu_search_result_t *res = NULL;
    FILE *fp = NULL;
    int status = 1, rc;
    cli_out_t out = {0};

    switch (cli_search_args(argc, argv, &a)) {
    case CLI_HELP: usage(stdout); return 0;
    case CLI_ERROR: return 1;
    }
    const char *qpath = a.qpath, *dpath = a.dpath, *mname = a.mname, *opath = a.opath;
    swgpu_alphabet_t type = a.type;
    int verbosity = a.verbosity;
    if (cli_dist && !cli_dist->writer)
        verbosity = 0; /* swgpu-mpi: one rank speaks */
    cli_install_logger(verbosity);
    a.threads = cli_clamp_threads(a.threads, verbosity);

    /* Check what can be checked before reading any file; an output never
     * replaces an input */
    {
        const cli_input_t in[] = {{qpath, "query file"}, {dpath, "database"},
                                  {mname, "matrix file"}};
        if (cli_check_output("-o", opath, in, 3) < 0)
            return 1;
    }
    swgpu_opts_t o;
    cli_search_opts(&a, type == SWGPU_DNA ? SWGPU_DNA : SWGPU_PROTEIN, &o);
    if ((rc = swgpu_opts_check(&o, NULL)) < 0) {
        lib_error(rc);
        return 1;
    }
    swgpu_backend_prepare(&o); /* the GPU's set-up overlaps reading the inputs */
    if ((rc = swgpu_outfmt_parse(a.fmtspec, &fmt)) < 0 ||
        (rc = swgpu_outfmt_set_dbname(fmt, dpath)) < 0) {
        lib_error(rc);
        swgpu_outfmt_destroy(fmt);
        return 1;
    }

    /* Inputs. */
    swgpu_read_info_t qi, di;
    if ((rc = swgpu_seqset_read(qpath, type, &queries, &qi)) < 0)
        goto lib_fail;
    rc = cli_dist ? cli_dist->db_open(dpath, type, queries, &o, &db, &di) /* this rank's part */
                  : swgpu_db_open(dpath, type, &db, &di);
    if (rc < 0)
        goto lib_fail;
    swgpu_alphabet_t qa = swgpu_seqset_alphabet(queries), da = swgpu_db_alphabet(db);
    if (qa != da) {
        cli_error("the queries in %s are %s sequences but the database %s holds %s sequences%s",
                  qpath, swgpu_alphabet_name(qa), dpath, swgpu_alphabet_name(da),
                  type == SWGPU_AUTO ? " (detected; --type sets the type)" : "");
        goto out;
    }
    if (verbosity >= 2) {
        fprintf(stderr, "[swgpu %.2fs] %s: %llu %s queries, %llu residues\n", cli_elapsed(),
                qpath, (unsigned long long)qi.n_records, swgpu_alphabet_name(qa),
                (unsigned long long)qi.n_residues);
        fprintf(stderr, "[swgpu %.2fs] %s: %zu sequences, %llu residues, longest %llu\n",
                cli_elapsed(), dpath, swgpu_db_size(db), (unsigned long long)swgpu_db_residues(db),
                (unsigned long long)swgpu_db_max_len(db));
    }

    /* Scoring system. */
    if (qa == SWGPU_DNA) {
        if (mname) {
            cli_error("--matrix applies to protein only; DNA is scored with --match and --mismatch");
            goto out;
        }
        if ((rc = swgpu_matrix_dna(a.match, a.mismatch, &m)) < 0)
            goto lib_fail;
    } else {
        if (a.have_match || a.have_mismatch) {
            cli_error("--%s applies to DNA only; protein is scored with --matrix",
                      a.have_match ? "match" : "mismatch");
            goto out;
        }
        if ((rc = swgpu_matrix_get(mname ? mname : "BLOSUM62", &m)) < 0)
            goto lib_fail;
    }
    cli_search_opts(&a, qa, &o);
    if ((rc = swgpu_opts_check(&o, m)) < 0)
        goto lib_fail;
    if (verbosity > 0 && isatty(STDERR_FILENO))
        o.progress = on_progress;

    /* open the output first: a bad path fails before the search runs */
    if (!(fp = cli_out_open(&out, cli_out_path(opath))))
        goto out;

    rc = cli_dist ? cli_dist->search(queries, db, m, &o, &res, &names)
                  : swgpu_search(queries, db, m, &o, &res);
    if (rc < 0)
        goto lib_fail;
    if (res && (rc = swgpu_outfmt_write(fmt, fp, res, queries, names ? names : db, m, &o)) < 0) {
        const char *msg = swgpu_last_error();
        cli_error("output %s: %s", opath ? opath : "(standard output)",
                  msg && *msg ? msg : swgpu_strerror(rc));
        goto out;
    }
    fp = NULL;
    if (cli_out_close(&out) < 0)
        goto out;

    if (verbosity > 0 && res) {
        swgpu_db_part_t whole; /* swgpu-mpi's db is a part */
        swgpu_db_part_info(db, &whole);
        double wall = cli_elapsed();
        double gcups = res->scan_seconds > 0 ? (double)res->cells / res->scan_seconds / 1e9 : 0.0;
        fprintf(stderr,
                "[swgpu %.2fs] %zu queries (%llu residues) vs %zu sequences (%llu residues): "
                "backend %s, %.3g cells, scan %.3f s (%.2f GCUPS), %llu overflows, "
                "align %.3f s, wall %.2f s, peak RSS %.1f MB\n",
                wall, swgpu_seqset_size(queries), (unsigned long long)swgpu_seqset_residues(queries),
                (size_t)whole.total_n, (unsigned long long)whole.total_residues, res->backend,
                (double)res->cells, res->scan_seconds, gcups,
                (unsigned long long)res->overflows, res->align_seconds, wall, peak_rss_mb());
    }
    status = 0;
    goto out;

lib_fail:
    lib_error(rc);
out:
    cli_out_abort(&out);
    swgpu_search_result_destroy(res);
    swgpu_matrix_destroy(m);
    swgpu_db_destroy(names);
    swgpu_db_destroy(db);
    swgpu_seqset_destroy(queries);
    swgpu_outfmt_destroy(fmt);
    return status;
}
