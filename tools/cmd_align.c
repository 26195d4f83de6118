/*
 * cmd_align.c - `swgpu align A B`: exact local alignment of two (long)
 * sequences with swgpu_align_long(): summary, SAM or pairwise text, and an
 * SVG picture of the path.
 *
 * A is the query, B the target (the reference in SAM terms); the first
 * record of each file is used.  DNA strands: plus aligns A with B, minus A
 * with the reverse complement of B, both does both and reports the better
 * (ties: plus), with the other strand's score in the summary.  Minus-strand
 * target coordinates are given on B's forward strand, high to low (BLAST
 * style); SAM reverse-complements the query instead (flag 16).
 *
 * Output files (-o, --plot) are written to NAME.tmp.<pid> and renamed when
 * complete; on failure or SIGINT/SIGTERM/SIGHUP the temporaries go away.
 * So do those of the checkpoints (--checkpoint X, and X.minus for the
 * minus strand of --strand both), which the library writes to
 * NAME.tmp.<pid> likewise (src/long/ckpt.c); a checkpoint, or one of
 * these names, that is also an output, an output's temporary or an input
 * is refused before anything is computed.
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
#include <sys/stat.h>
#include <unistd.h>

static void usage(FILE *fp)
{
    fputs("usage: swgpu align A B [options]\n"
          "\n"
          "Exact local alignment (Smith-Waterman, affine gaps) of the first sequence of\n"
          "file A (the query) with the first sequence of file B (the target), in bounded\n"
          "memory: whole bacterial genomes on a GPU, or on the CPU with identical results.\n"
          "\n"
          "scoring (a gap of length k costs OPEN + k*EXTEND):\n"
          "      --type prot|dna    sequence type (default: detected)\n"
          "      --match N          DNA: score of identical bases (default 2)\n"
          "      --mismatch N       DNA: score of other pairs, N and IUPAC codes included\n"
          "                         (default -3)\n"
          "      --matrix NAME|FILE protein matrix (default BLOSUM62)\n"
          "      --gap-open O       (default 5 DNA, 11 protein)\n"
          "      --gap-extend E     (default 2 DNA, 1 protein)\n"
          "      --strand S         DNA: plus (default), minus (A with the reverse complement\n"
          "                         of B) or both (both aligned, the better reported)\n"
          "\n"
          "output:\n"
          "  -f, --outfmt F         summary (default), sam, or pair (wrapped pairwise text)\n"
          "  -o, --out FILE         write to FILE (atomically; default stdout)\n"
          "      --plot FILE.svg    an SVG picture of the alignment path\n"
          "      --score-only       score and coordinates, no traceback (no CIGAR)\n"
          "\n"
          "execution:\n"
          "      --backend B        auto (default: cuda if a GPU is present, else cpu), cpu,\n"
          "                         cuda, or ref (the scalar reference, for checks)\n"
          "  -t, --threads N        CPU threads (default 0 = all cores)\n"
          "      --gpus N           GPUs to split each pass across by target columns, same\n"
          "                         output (default 0 = all visible)\n"
          "      --gpu-parts N      cut passes over few regions into N column slices dealt\n"
          "                         round the GPUs (default: none on one GPU, up to 8 per\n"
          "                         GPU on several; more than 1 on one GPU: for checks),\n"
          "                         or round swgpu-mpi's ranks on GPUs\n"
          "      --max-memory SIZE  host and GPU memory budget, e.g. 512M, 4G (default 4G);\n"
          "                         fails early if too small\n"
          "      --no-prune         compute every cell (no block pruning; for measurements)\n"
          "      --checkpoint FILE  save where the run stands in FILE (written atomically);\n"
          "                         run again with the same FILE to resume (byte-identical\n"
          "                         output); removed when done.  --strand both: the minus\n"
          "                         strand's is FILE.minus\n"
          "      --checkpoint-every S  seconds between checkpoints (default 600)\n"
          "      --quiet            no warnings, no progress, no summary line\n"
          "  -v, --verbose          more messages (-vv: the library's debug log, e.g. each\n"
          "                         pass's pruning and the seed bound it starts from)\n"
          "  -h, --help             this text\n"
          "\n"
          "Progress (per phase: percentage, GCUPS, time left) goes to standard error when\n"
          "it is a terminal; a summary line (cells, seconds per phase, GCUPS, peak memory)\n"
          "always does, unless --quiet.\n",
          fp);
}

/* ------------------------------------------------------------ progress */

typedef struct {
    int tty;
    const char *phase;
} progress_t;

/*
 * One line per phase, rewritten in place: the share of the phase's cells
 * done (~: of an estimated total), the cells computed so far, the phase's
 * GCUPS (pruned cells counted as done, as the summary's score pass) and the
 * time left at that rate.
 */
static void on_progress(const swgpu_long_progress_t *r, void *user)
{
    progress_t *p = user;
    char left[32], pct[16];
    double rate = r->phase_seconds > 0 ? (double)r->phase_done / r->phase_seconds : 0;
    if (!p->tty)
        return;
    if (p->phase && strcmp(p->phase, r->phase))
        fputc('\n', stderr);
    p->phase = r->phase;
    if (r->fraction >= 1.0)
        cli_fmt_duration(left, sizeof left, 0, CLI_DURATION_UNITS);
    else if (r->phase_done > 0 && rate > 0)
        cli_fmt_duration(left, sizeof left, (double)(r->phase_total - r->phase_done) / rate,
                         CLI_DURATION_UNITS);
    else
        snprintf(left, sizeof left, "?");
    snprintf(pct, sizeof pct, "%s%.1f%%", r->phase_estimated ? "~" : "", 100.0 * r->fraction);
    fprintf(stderr, "\r[swgpu %.1fs] %-9s %7s  %.3g cells  %.1f GCUPS  %s%s left     ", cli_elapsed(),
            r->phase, pct, (double)r->cells, rate / 1e9, r->fraction < 1.0 && *left != '?' ? "~" : "", left);
    fflush(stderr);
}

/* --------------------------------------------------------------- result */

typedef struct {
    const char *qid, *tid;
    const uint8_t *q, *t;   /* t: the target as aligned (B or its reverse complement) */
    size_t qlen, tlen;
    swgpu_alphabet_t alpha;
    int minus;              /* 1: aligned to the reverse complement of B */
    swgpu_aln_t aln;
    swgpu_long_stats_t st;
} result_t;

/* the record the library's writers read */
static swgpu_long_record_t record(const result_t *r)
{
    swgpu_long_record_t w = { r->qid, r->tid, r->q, r->t, r->qlen, r->tlen, r->alpha, r->minus,
                              &r->aln };
    return w;
}

/* Write the result in format fmt to fp and the plot to pp (NULL: none).
 * A write error stays in the stream's state, which cli_out_close() reports
 * with the file's name; -1 after printing any other error. */
static int write_result(FILE *fp, FILE *pp, const char *fmt, const result_t *res, int nres,
                        int best, const swgpu_matrix_t *m, int score_only, int argc, char **argv)
{
    swgpu_long_record_t r = record(&res[best]), other = record(&res[1 - best]);
    int rc;
    if (!strcmp(fmt, "sam")) {
        /* the @PG line's CL: "swgpu" and the subcommand's words */
        const char **words = malloc(((size_t)argc + 1) * sizeof *words);
        if (!words) {
            cli_error("out of memory");
            return -1;
        }
        words[0] = "swgpu";
        for (int k = 0; k < argc; k++)
            words[k + 1] = argv[k];
        rc = swgpu_long_write_sam(fp, &r, argc + 1, words);
        free(words);
    } else if (!strcmp(fmt, "pair"))
        rc = swgpu_long_write_pair(fp, &r, m);
    else
        rc = swgpu_long_write_summary(fp, &r, nres == 2 ? &other : NULL, score_only);
    if (rc == SWGPU_OK && pp)
        rc = swgpu_long_write_svg(pp, &r);
    if (rc < 0 && rc != SWGPU_EIO) {
        cli_lib_error(rc);
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------- command */

static void summary_line(const result_t *r)
{
    const swgpu_long_stats_t *s = &r->st;
    char gpus[32] = "", rate[64], resumed[64] = "";
    if (s->gpus > 1)
        snprintf(gpus, sizeof gpus, " (%d GPUs)", s->gpus);
    if (s->score_gcups > 0)
        snprintf(rate, sizeof rate, "%.1f GCUPS", s->score_gcups);
    else /* resumed inside or after it: its time is a part's */
        snprintf(rate, sizeof rate, "no rate");
    if (s->resumed)
        snprintf(resumed, sizeof resumed, ", resumed in the %s",
                 s->resumed == 1 ? "pre-pass" : s->resumed == 2 ? "score pass"
                 : s->resumed == 3 ? "reverse pass" : "traceback");
    fprintf(stderr,
            "[swgpu %.2fs] align%s: backend %s%s%s, %.3g cells computed (%.3g pruned), score pass "
            "%.2f s (%s, %.0f%% pruned, seed bound %lld), reverse %.2f s, traceback %.2f s, total %.2f s, "
            "peak host %.1f MB (RSS %.1f MB), device %.1f MB\n",
            cli_elapsed(), r->alpha == SWGPU_DNA ? (r->minus ? " minus" : " plus") : "", s->backend,
            gpus, resumed,
            (double)s->cells, (double)s->cells_pruned, s->score_seconds, rate,
            s->score_cells ? 100.0 * (double)s->score_pruned / (double)s->score_cells : 0.0,
            (long long)s->seed_bound, s->reverse_seconds, s->traceback_seconds, s->total_seconds,
            (double)s->peak_host_bytes / 1048576.0, cli_peak_rss_mb(),
            (double)s->peak_device_bytes / 1048576.0);
}

enum {
    OPT_MATRIX = 256, OPT_GAP_OPEN, OPT_GAP_EXTEND, OPT_MATCH, OPT_MISMATCH, OPT_TYPE,
    OPT_BACKEND, OPT_STRAND, OPT_SCORE_ONLY, OPT_MAXMEM, OPT_PLOT, OPT_QUIET, OPT_NO_PRUNE,
    OPT_CHECKPOINT, OPT_CHECKPOINT_EVERY, OPT_GPUS, OPT_GPU_PARTS
};

static int read_first(const char *path, swgpu_alphabet_t type, swgpu_seqset_t **set,
                      swgpu_seq_t *seq, int verbosity)
{
    swgpu_read_info_t info;
    int rc = strcmp(path, "-") ? swgpu_seqset_read(path, type, set, &info)
                               : swgpu_seqset_read_fd(0, "(standard input)", type, set, &info);
    if (rc < 0) {
        cli_lib_error(rc);
        return -1;
    }
    if ((rc = swgpu_seqset_get(*set, 0, seq)) < 0) {
        cli_lib_error(rc);
        return -1;
    }
    if (swgpu_seqset_size(*set) > 1 && verbosity > 0)
        fprintf(stderr, "[swgpu %.2fs] warning: %s holds %zu sequences; aligning the first (%s)\n",
                cli_elapsed(), path, swgpu_seqset_size(*set), seq->id);
    return 0;
}

static void align_defaults(cli_align_args_t *a)
{
    memset(a, 0, sizeof *a);
    a->gpus = 0;
    a->fmt = "summary";
    a->strand = "plus";
    a->gap_open = a->gap_extend = -1;
    a->match = 2;
    a->mismatch = -3;
    a->verbosity = 1;
    a->type = SWGPU_AUTO;
    a->backend = SWGPU_BACKEND_AUTO;
}

/* One option c of getopt_long (opt: the word that gave it): CLI_RUN to go
 * on, CLI_HELP or CLI_ERROR. */
static int align_option(int c, const char *opt, cli_align_args_t *a)
{
    switch (c) {
    case 'f': a->fmt = optarg; break;
    case 'o': a->opath = strcmp(optarg, "-") ? optarg : NULL; break; /* -: stdout */
    case 't': if (cli_parse_int("--threads", optarg, &a->threads)) return CLI_ERROR; break;
    case 'h': return CLI_HELP;
    case OPT_MATRIX: a->mname = optarg; break;
    case OPT_GAP_OPEN:
        if (cli_parse_int("--gap-open", optarg, &a->gap_open)) return CLI_ERROR;
        if (a->gap_open < 0) {
            cli_error("--gap-open: %d is negative (penalties are given as positive numbers)",
                      a->gap_open);
            return CLI_ERROR;
        }
        break;
    case OPT_GAP_EXTEND:
        if (cli_parse_int("--gap-extend", optarg, &a->gap_extend)) return CLI_ERROR;
        if (a->gap_extend < 0) {
            cli_error("--gap-extend: %d is negative (penalties are given as positive numbers)",
                      a->gap_extend);
            return CLI_ERROR;
        }
        break;
    case OPT_MATCH:
        if (cli_parse_int("--match", optarg, &a->match)) return CLI_ERROR;
        a->have_match = 1;
        break;
    case OPT_MISMATCH:
        if (cli_parse_int("--mismatch", optarg, &a->mismatch)) return CLI_ERROR;
        a->have_mismatch = 1;
        break;
    case OPT_TYPE: if (cli_parse_type(optarg, &a->type)) return CLI_ERROR; break;
    case OPT_BACKEND:
        if (!strcmp(optarg, "auto")) a->backend = SWGPU_BACKEND_AUTO;
        else if (!strcmp(optarg, "cpu")) a->backend = SWGPU_BACKEND_CPU;
        else if (!strcmp(optarg, "cuda")) a->backend = SWGPU_BACKEND_CUDA;
        else if (!strcmp(optarg, "ref")) a->backend = SWGPU_BACKEND_REF;
        else {
            cli_error("--backend: '%s' is not auto, cpu, cuda or ref", optarg);
            return CLI_ERROR;
        }
        break;
    case OPT_STRAND:
        if (strcmp(optarg, "plus") && strcmp(optarg, "minus") && strcmp(optarg, "both")) {
            cli_error("--strand: '%s' is not plus, minus or both", optarg);
            return CLI_ERROR;
        }
        a->strand = optarg;
        break;
    case OPT_SCORE_ONLY: a->score_only = 1; break;
    case OPT_MAXMEM:
        if (cli_parse_size("--max-memory", optarg, &a->maxmem)) return CLI_ERROR;
        break;
    case OPT_PLOT: a->plot = optarg; break;
    case OPT_QUIET: a->verbosity = 0; break;
    case 'v': a->verbosity = a->verbosity > 0 ? a->verbosity + 1 : 2; break;
    case OPT_NO_PRUNE: a->no_prune = 1; break;
    case OPT_CHECKPOINT: a->checkpoint = optarg; break;
    case OPT_GPUS: if (cli_parse_int("--gpus", optarg, &a->gpus)) return CLI_ERROR; break;
    case OPT_GPU_PARTS: if (cli_parse_int("--gpu-parts", optarg, &a->gpu_parts)) return CLI_ERROR; break;
    case OPT_CHECKPOINT_EVERY: {
        char *end;
        a->checkpoint_every = strtod(optarg, &end);
        if (end != optarg && !*end && a->checkpoint_every > 1e9) {
            cli_error("--checkpoint-every: '%s' is too large (at most 1e9 seconds)", optarg);
            return CLI_ERROR;
        }
        if (end == optarg || *end || !(a->checkpoint_every > 0)) {
            cli_error("--checkpoint-every: '%s' is not a number of seconds > 0", optarg);
            return CLI_ERROR;
        }
        break;
    }
    default: /* ':' too */
        return cli_getopt_error("align", c, opt);
    }
    return CLI_RUN;
}

/* The two files (argv from optind) and the checks across options. */
static int align_operands(int argc, char **argv, cli_align_args_t *a)
{
    if (argc - optind != 2) {
        cli_error("align: %s (see swgpu align --help)",
                  argc - optind < 2 ? "two sequence files A and B are required"
                                    : "more than two sequence files given");
        return CLI_ERROR;
    }
    a->apath = argv[optind];
    a->bpath = argv[optind + 1];
    if (!strcmp(a->apath, "-") && !strcmp(a->bpath, "-")) {
        cli_error("align: A and B cannot both be standard input (-)");
        return CLI_ERROR;
    }
    if (strcmp(a->fmt, "summary") && strcmp(a->fmt, "sam") && strcmp(a->fmt, "pair")) {
        cli_error("--outfmt: '%s' is not summary, sam or pair", a->fmt);
        return CLI_ERROR;
    }
    if (a->checkpoint_every > 0 && !a->checkpoint) {
        cli_error("--checkpoint-every needs --checkpoint FILE (where the checkpoints go)");
        return CLI_ERROR;
    }
    if (a->threads < 0) {
        cli_error("--threads: %d is negative", a->threads);
        return CLI_ERROR;
    }
    if (a->gpus < 0 || a->gpu_parts < 0) {
        cli_error("--%s: %d is negative", a->gpus < 0 ? "gpus" : "gpu-parts", a->gpus < 0 ? a->gpus : a->gpu_parts);
        return CLI_ERROR;
    }
    return CLI_RUN;
}

int cli_align_args(int argc, char **argv, cli_align_args_t *a)
{
    static const struct option longopts[] = {
        {"outfmt", required_argument, NULL, 'f'},
        {"out", required_argument, NULL, 'o'},
        {"threads", required_argument, NULL, 't'},
        {"help", no_argument, NULL, 'h'},
        {"matrix", required_argument, NULL, OPT_MATRIX},
        {"gap-open", required_argument, NULL, OPT_GAP_OPEN},
        {"gap-extend", required_argument, NULL, OPT_GAP_EXTEND},
        {"match", required_argument, NULL, OPT_MATCH},
        {"mismatch", required_argument, NULL, OPT_MISMATCH},
        {"type", required_argument, NULL, OPT_TYPE},
        {"backend", required_argument, NULL, OPT_BACKEND},
        {"strand", required_argument, NULL, OPT_STRAND},
        {"score-only", no_argument, NULL, OPT_SCORE_ONLY},
        {"max-memory", required_argument, NULL, OPT_MAXMEM},
        {"plot", required_argument, NULL, OPT_PLOT},
        {"quiet", no_argument, NULL, OPT_QUIET},
        {"verbose", no_argument, NULL, 'v'},
        {"no-prune", no_argument, NULL, OPT_NO_PRUNE},
        {"checkpoint", required_argument, NULL, OPT_CHECKPOINT},
        {"checkpoint-every", required_argument, NULL, OPT_CHECKPOINT_EVERY},
        {"gpus", required_argument, NULL, OPT_GPUS},
        {"gpu-parts", required_argument, NULL, OPT_GPU_PARTS},
        {NULL, 0, NULL, 0},
    };
    int c, rc;

    align_defaults(a);
    opterr = 0;
    optind = 0; /* glibc: a full reset of getopt's state (0 then means 1) */
    while ((c = getopt_long(argc, argv, ":f:o:t:vh", longopts, NULL)) != -1)
        if ((rc = align_option(c, optind > 1 ? argv[optind - 1] : "", a)) != CLI_RUN)
            return rc;
    return align_operands(argc, argv, a);
}

/* the checkpoints' temporaries, removed on SIGINT/SIGTERM/SIGHUP before
 * the handler that was there (outfile.c's) runs */
static char ck_tmp[2][PATH_MAX + 64];
static struct sigaction ck_old[3];
static const int ck_sigs[3] = { SIGINT, SIGTERM, SIGHUP };

static void ck_on_signal(int sig)
{
    for (int k = 0; k < 2; k++)
        if (ck_tmp[k][0])
            unlink(ck_tmp[k]);
    for (int k = 0; k < 3; k++)
        if (ck_sigs[k] == sig && ck_old[k].sa_handler != SIG_DFL && ck_old[k].sa_handler != SIG_IGN &&
            !(ck_old[k].sa_flags & SA_SIGINFO)) {
            ck_old[k].sa_handler(sig);
            return;
        }
    signal(sig, SIG_DFL);
    raise(sig);
}

static void ck_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = ck_on_signal;
    sigemptyset(&sa.sa_mask);
    for (int k = 0; k < 3; k++)
        sigaction(ck_sigs[k], &sa, &ck_old[k]);
}


/* The checkpoint ck of --checkpoint X (X itself, or minus: X.minus, the
 * minus strand's): -1 after an error when it is something other than a
 * regular file, a file that is not a swgpu checkpoint, an input, or when it
 * or its temporary is an output or an output's temporary. */
static int ck_path_check(const char *x, const char *ck, int minus, const char *const outs[2],
                         const char *const oname[2], const cli_input_t *in, int nin)
{
    struct stat sb;
    char tmp[PATH_MAX + 64], otmp[PATH_MAX + 64], who[PATH_MAX + 64];
    const char *mine[2] = { ck, tmp };
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", ck, (long)getpid());
    if (minus)
        snprintf(who, sizeof who, "--checkpoint %s: the minus strand's checkpoint %s", x, ck);
    else
        snprintf(who, sizeof who, "--checkpoint %s", x);
    if (stat(ck, &sb) == 0) {
        if (!S_ISREG(sb.st_mode)) {
            cli_error("%s is %s, not a checkpoint file", who,
                      S_ISDIR(sb.st_mode) ? "a directory" : S_ISFIFO(sb.st_mode) ? "a FIFO (named pipe)"
                      : S_ISCHR(sb.st_mode) ? "a character device" : S_ISBLK(sb.st_mode) ? "a block device"
                      : S_ISSOCK(sb.st_mode) ? "a socket" : "not a regular file");
            return -1;
        }
        /* the magic of src/long/ckpt.c, any format (the library names an older one) */
        char magic[7];
        FILE *f = fopen(ck, "rb");
        size_t n = f ? fread(magic, 1, sizeof magic, f) : 0;
        if (f)
            fclose(f);
        if (f && (n != sizeof magic || memcmp(magic, "SWGPUCK", sizeof magic))) {
            cli_error("%s is not a swgpu checkpoint", who);
            return -1;
        }
    }
    /* then as any output: never an input, its temporary can be made */
    if (cli_check_output(minus ? "--checkpoint (the minus strand's)" : "--checkpoint", ck, in, nin) < 0)
        return -1;
    for (int o = 0; o < 2; o++) {
        if (!outs[o])
            continue;
        snprintf(otmp, sizeof otmp, "%s.tmp.%ld", outs[o], (long)getpid());
        for (int k = 0; k < 2; k++)
            if (cli_same_path(mine[k], outs[o]) || cli_same_path(mine[k], otmp)) {
                cli_error("%s%s%s is also %s%s %s: give the checkpoint a file of its own", who,
                          k ? ": its temporary " : "", k ? tmp : "",
                          cli_same_path(mine[k], outs[o]) ? "" : "the temporary of ", oname[o], outs[o]);
                return -1;
            }
    }
    return 0;
}

void cli_align_opts(const cli_align_args_t *a, swgpu_alphabet_t alphabet, swgpu_long_opts_t *o)
{
    swgpu_long_opts_init(o, alphabet);
    if (a->gap_open >= 0)
        o->gap_open = a->gap_open;
    if (a->gap_extend >= 0)
        o->gap_extend = a->gap_extend;
    o->threads = a->threads;
    o->gpus = a->gpus;
    o->gpu_parts = a->gpu_parts;
    o->backend = a->backend;
    o->score_only = a->score_only;
    o->prune = !a->no_prune;
    o->checkpoint = a->checkpoint;
    if (a->checkpoint_every > 0)
        o->checkpoint_every = a->checkpoint_every;
    if (a->maxmem)
        o->max_host_memory = o->max_device_memory = a->maxmem;
}

/* The outputs and checkpoints: an output never replaces an input (or the
 * other output), nor a checkpoint either; a checkpoint through a symbolic
 * link is its target (a->checkpoint, ckminus: the minus strand's, of size
 * bytes).  -1 after printing an error. */
static int check_paths(cli_align_args_t *a, char *ckminus, size_t size)
{
    const char *mname = a->mname, *opath = a->opath, *plot = a->plot;
    const char *strand = a->strand, *apath = a->apath, *bpath = a->bpath;
    /* an output never replaces an input (or the other output) */
    const cli_input_t in[] = {{apath, "sequence file A"}, {bpath, "sequence file B"},
                              {mname, "matrix file"}, {opath, "output (-o)"}};
    const cli_input_t in2[] = {{apath, "sequence file A"}, {bpath, "sequence file B"},
                               {mname, "matrix file"}, {opath, "output (-o)"}, {plot, "plot (--plot)"}};
    if (cli_check_output("-o", opath, in, 3) < 0 || cli_check_output("--plot", plot, in, 4) < 0)
        return -1; /* the checkpoint's checks follow (ck_path_check) */
    if (opath && plot && !strcmp(opath, plot)) {
        cli_error("-o and --plot are both %s: give them different files", plot);
        return -1;
    }
    if (a->checkpoint && ((opath && !strcmp(opath, a->checkpoint)) || (plot && !strcmp(plot, a->checkpoint)))) {
        cli_error("--checkpoint %s is also an output: give it a file of its own", a->checkpoint);
        return -1;
    }
    if (a->checkpoint) {
        const char *outs[2] = { opath && strcmp(opath, "-") ? opath : NULL, plot };
        const char *const oname[2] = { "the output (-o)", "the plot (--plot)" };
        if (strlen(a->checkpoint) > PATH_MAX) {
            cli_error("--checkpoint %s: path too long", a->checkpoint);
            return -1;
        }
        snprintf(ckminus, size, "%s.minus", a->checkpoint);
        if (ck_path_check(a->checkpoint, a->checkpoint, 0, outs, oname, in2, 5) < 0 ||
            (!strcmp(strand, "both") && ck_path_check(a->checkpoint, ckminus, 1, outs, oname, in2, 5) < 0))
            return -1;
        /* through a symbolic link, the checkpoints go to its target (as -o's
         * output does), written beside it and renamed over it */
        static char ckdest[PATH_MAX], ckmdest[PATH_MAX];
        int r0 = cli_out_resolve("--checkpoint", a->checkpoint, ckdest, sizeof ckdest);
        int r1 = !strcmp(strand, "both")
                     ? cli_out_resolve("--checkpoint", ckminus, ckmdest, sizeof ckmdest) : 1;
        if (r0 < 0 || r1 < 0)
            return -1;
        if (r0 == 0)
            a->checkpoint = ckdest;
        if (r1 == 0)
            snprintf(ckminus, size, "%s", ckmdest);
    }
    return 0;
}

/* The first sequence of each file and the scoring system, checked against
 * the options; -1 after printing an error (what was made is the caller's
 * to free). */
static int load_inputs(const cli_align_args_t *a, int verbosity, swgpu_seqset_t **sa,
                       swgpu_seqset_t **sb, swgpu_seq_t *A, swgpu_seq_t *B, swgpu_matrix_t **m)
{
    const char *mname = a->mname, *strand = a->strand, *apath = a->apath, *bpath = a->bpath;
    swgpu_alphabet_t type = a->type;
    int rc;
    if (read_first(apath, type, sa, A, verbosity) || read_first(bpath, type, sb, B, verbosity))
        return -1;
    if (!strcmp(a->fmt, "sam") && strlen(A->id) > 254) { /* SAM's QNAME: 1 to 254 characters */
        cli_error("--outfmt sam: the query's id (%s, record 1 of %s) is %zu characters long, more "
                  "than SAM's QNAME may hold (254): shorten it, or choose another --outfmt",
                  A->id, apath, strlen(A->id));
        return -1;
    }
    if (swgpu_seqset_alphabet(*sa) != swgpu_seqset_alphabet(*sb)) {
        cli_error("%s holds %s and %s %s sequences%s", apath,
                  swgpu_alphabet_name(swgpu_seqset_alphabet(*sa)), bpath,
                  swgpu_alphabet_name(swgpu_seqset_alphabet(*sb)),
                  type == SWGPU_AUTO ? " (detected; --type sets the type)" : "");
        return -1;
    }
    if (swgpu_seqset_alphabet(*sa) == SWGPU_DNA) {
        if (mname) {
            cli_error("--matrix applies to protein only; DNA is scored with --match and --mismatch");
            return -1;
        }
        if ((rc = swgpu_matrix_dna(a->match, a->mismatch, m)) < 0) {
            cli_lib_error(rc);
            return -1;
        }
    } else {
        if (a->have_match || a->have_mismatch) {
            cli_error("--%s applies to DNA only; protein is scored with --matrix",
                      a->have_match ? "match" : "mismatch");
            return -1;
        }
        if (strcmp(strand, "plus")) {
            cli_error("--strand %s applies to DNA only", strand);
            return -1;
        }
        if ((rc = swgpu_matrix_get(mname ? mname : "BLOSUM62", m)) < 0) {
            cli_lib_error(rc);
            return -1;
        }
    }
    return 0;
}

/* Align A with B on the strands asked for (the minus strand with B's
 * reverse complement, in *brc), into res[0..*nres); -1 after printing an
 * error. */
static int align_strands(const cli_align_args_t *a, const char *ckminus, const swgpu_seq_t *A,
                         const swgpu_seq_t *B, swgpu_alphabet_t alpha, const swgpu_matrix_t *m,
                         swgpu_long_opts_t *o, progress_t *prog, int verbosity, result_t res[2],
                         int *nres, uint8_t **brc)
{
    const char *strand = a->strand;
    int rc;
    for (int s = 0; s < 2; s++) {
        result_t *r = &res[*nres];
        int minus = s == 1;
        if ((minus && !strcmp(strand, "plus")) || (!minus && !strcmp(strand, "minus")))
            continue;
        r->qid = A->id;
        r->tid = B->id;
        r->q = A->res;
        r->qlen = A->len;
        r->tlen = B->len;
        r->alpha = alpha;
        r->minus = minus;
        r->t = B->res;
        if (minus) {
            *brc = malloc(B->len ? B->len : 1);
            if (!*brc) {
                cli_error("out of memory for the reverse complement of %s", B->id);
                return -1;
            }
            swgpu_dna_revcomp(B->res, B->len, *brc);
            r->t = *brc;
        }
        if (minus && a->checkpoint && !strcmp(strand, "both")) /* each strand its own */
            o->checkpoint = ckminus;
        rc = cli_dist ? cli_dist->align_long(r->q, r->qlen, r->t, r->tlen, m, o, &r->aln, &r->st)
                      : swgpu_align_long(r->q, r->qlen, r->t, r->tlen, m, o, &r->aln, &r->st);
        if (prog->tty) {
            fputc('\n', stderr);
            prog->phase = NULL;
        }
        if (rc < 0) {
            cli_lib_error(rc);
            return -1;
        }
        if (verbosity > 0)
            summary_line(r);
        (*nres)++;
    }
    return 0;
}

int swgpu_cmd_align(int argc, char **argv)
{
    cli_align_args_t a;
    int status = 1;
    swgpu_seqset_t *sa = NULL, *sb = NULL;
    swgpu_seq_t A, B;
    swgpu_matrix_t *m = NULL;
    swgpu_long_opts_t o;
    result_t res[2];
    int nres = 0, best = 0;
    uint8_t *brc = NULL;
    FILE *fp = NULL, *pp = NULL;
    cli_out_t out = {0}, plotout = {0};
    progress_t prog = { 0, NULL };
    char ckminus[PATH_MAX + 8];

    memset(res, 0, sizeof res);
    switch (cli_align_args(argc, argv, &a)) {
    case CLI_HELP: usage(stdout); return 0;
    case CLI_ERROR: return 1;
    }
    const char *fmt = a.fmt, *opath = a.opath, *plot = a.plot, *strand = a.strand;
    int verbosity = a.verbosity;
    if (cli_dist && !cli_dist->writer)
        verbosity = 0; /* swgpu-mpi: one rank speaks */
    cli_install_logger(verbosity);
    a.threads = cli_clamp_threads(a.threads, verbosity);
    if (check_paths(&a, ckminus, sizeof ckminus) < 0)
        return 1; /* nothing made yet */
    if (load_inputs(&a, verbosity, &sa, &sb, &A, &B, &m) < 0)
        goto out;
    cli_align_opts(&a, swgpu_seqset_alphabet(sa), &o);
    prog.tty = verbosity > 0 && isatty(STDERR_FILENO);
    if (prog.tty) {
        o.progress = on_progress;
        o.progress_user = &prog;
    }

    /* open the outputs first: a bad path fails before hours of work */
    if (!(fp = cli_out_open(&out, cli_out_path(opath))))
        goto out;
    if (plot && !(pp = cli_out_open(&plotout, cli_out_path(plot))))
        goto out;
    if (a.checkpoint) { /* after the outputs': their handler runs after ours */
        snprintf(ck_tmp[0], sizeof ck_tmp[0], "%s.tmp.%ld", a.checkpoint, (long)getpid());
        if (!strcmp(strand, "both"))
            snprintf(ck_tmp[1], sizeof ck_tmp[1], "%s.tmp.%ld", ckminus, (long)getpid());
        ck_signals();
    }

    if (align_strands(&a, ckminus, &A, &B, swgpu_seqset_alphabet(sa), m, &o, &prog, verbosity, res,
                      &nres, &brc) < 0)
        goto out;
    if (nres == 2 && res[1].aln.score > res[0].aln.score)
        best = 1;

    if (write_result(fp, pp, fmt, res, nres, best, m, a.score_only, argc, argv) < 0)
        goto out;
    fp = pp = NULL;
    if (cli_out_close(&out) < 0)
        goto out;
    if (plot && cli_out_close(&plotout) < 0)
        goto out;
    status = 0;
out:
    cli_out_abort(&out);
    cli_out_abort(&plotout);
    for (int k = 0; k < 2; k++)
        swgpu_aln_free(&res[k].aln);
    free(brc);
    swgpu_matrix_destroy(m);
    swgpu_seqset_destroy(sa);
    swgpu_seqset_destroy(sb);
    return status;
}
