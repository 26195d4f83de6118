/*
 * search_args.c - the arguments of `swgpu search` (and swgpu-mpi's): the
 * options, their values checked, the defaults, and the library options they
 * make (cli_search_args, cli_search_opts; the usage text is cmd_search.c's).
 */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"

#include <errno.h>
#include <float.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int parse_double(const char *opt, const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end || (errno && errno != ERANGE) || isnan(v)) {
        cli_error("%s: '%s' is not a number", opt, s);
        return -1;
    }
    if (isinf(v) || (errno == ERANGE && fabs(v) > 1.0)) {
        cli_error("%s: '%s' is out of range (at most %g)", opt, s, DBL_MAX);
        return -1;
    }
    /* below the smallest double: that double, not 0 (e.g. -e 1e-400) */
    if (errno == ERANGE && v == 0)
        v = strchr(s, '-') && strchr(s, '-') < strpbrk(s, "0123456789.") ? -DBL_TRUE_MIN
                                                                          : DBL_TRUE_MIN;
    *out = v;
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

static int parse_rank(const char *s, swgpu_rank_t *r)
{
    if (!strcmp(s, "evalue"))
        *r = SWGPU_RANK_EVALUE;
    else if (!strcmp(s, "score"))
        *r = SWGPU_RANK_SCORE;
    else {
        cli_error("--rank: '%s' is not evalue or score", s);
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

enum {
    OPT_MATRIX = 256, OPT_GAP_OPEN, OPT_GAP_EXTEND, OPT_MATCH, OPT_MISMATCH, OPT_TYPE,
    OPT_BACKEND, OPT_KERNEL, OPT_GPUS, OPT_MAXMEM, OPT_QUIET, OPT_NO_ALIGN, OPT_NO_SELF,
    OPT_EVALUE_MODEL, OPT_PSSM, OPT_ITERATIONS, OPT_INCLUSION, OPT_OUT_PSSM, OPT_REPORT,
    OPT_STRAND, OPT_RANK, OPT_CBS, OPT_MAX_HSPS
};

void cli_search_args_free(cli_search_args_t *a)
{
    free(a->pssm);
    a->pssm = NULL;
    a->npssm = 0;
}

/* the argument parsing proper; cli_search_args frees what it allocated when
 * this refuses */
static int search_args(int argc, char **argv, cli_search_args_t *a);

int cli_search_args(int argc, char **argv, cli_search_args_t *a)
{
    int rc = search_args(argc, argv, a);
    if (rc == CLI_ERROR)
        cli_search_args_free(a);
    return rc;
}

static void search_defaults(cli_search_args_t *a)
{
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
    a->rank = SWGPU_RANK_EVALUE;
    a->iterations = 1;
    a->inclusion = 0.002;
    a->max_hsps = 1;
}

/* One option c of getopt_long (opt: the word that gave it): CLI_RUN to go
 * on, CLI_HELP or CLI_ERROR. */
static int search_option(int c, const char *opt, cli_search_args_t *a)
{
    switch (c) {
    case 'q': a->qpath = optarg; break;
    case 'd': a->dpath = optarg; break;
    case 'n': if (cli_parse_int("-n", optarg, &a->top_n)) return CLI_ERROR; break;
    case 'e': if (parse_double("--evalue", optarg, &a->evalue)) return CLI_ERROR; break;
    case 'f': a->fmtspec = optarg; break;
    case 'o': a->opath = strcmp(optarg, "-") ? optarg : NULL; break; /* -: stdout */
    case 't': if (cli_parse_int("--threads", optarg, &a->threads)) return CLI_ERROR; break;
    case 'v': a->verbosity++; break;
    case 'h': return CLI_HELP;
    case OPT_MATRIX: a->mname = optarg; break;
    case OPT_GAP_OPEN:
        if (cli_parse_int("--gap-open", optarg, &a->gap_open)) return CLI_ERROR;
        a->have_open = 1;
        break;
    case OPT_GAP_EXTEND:
        if (cli_parse_int("--gap-extend", optarg, &a->gap_extend)) return CLI_ERROR;
        a->have_extend = 1;
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
    case OPT_BACKEND: if (parse_backend(optarg, &a->backend)) return CLI_ERROR; break;
    case OPT_KERNEL: a->kernel = optarg; break;
    case OPT_GPUS: if (cli_parse_int("--gpus", optarg, &a->gpus)) return CLI_ERROR; break;
    case OPT_MAXMEM:
        if (cli_parse_size("--max-memory", optarg, &a->maxmem)) return CLI_ERROR;
        break;
    case OPT_QUIET: a->verbosity = 0; break;
    case OPT_NO_ALIGN: a->no_align = 1; break;
    case OPT_NO_SELF: a->no_self = 1; break;
    case OPT_CBS:
        if (cli_parse_int("--comp-based-stats", optarg, &a->comp_based_stats)) return CLI_ERROR;
        if (a->comp_based_stats < 0 || a->comp_based_stats > 3) {
            cli_error("--comp-based-stats %s: must be 0, 1, 2 or 3", optarg);
            return CLI_ERROR;
        }
        break;
    case OPT_EVALUE_MODEL:
        if (parse_evalue_model(optarg, &a->evalue_model)) return CLI_ERROR;
        break;
    case OPT_RANK: if (parse_rank(optarg, &a->rank)) return CLI_ERROR; break;
    case OPT_PSSM: {
        const char **p = realloc(a->pssm, (size_t)(a->npssm + 1) * sizeof *p);
        if (!p) {
            cli_error("search: out of memory for %d PSSM files", a->npssm + 1);
            return CLI_ERROR;
        }
        a->pssm = p;
        a->pssm[a->npssm++] = optarg;
        break;
    }
    case OPT_ITERATIONS:
        if (cli_parse_int("--iterations", optarg, &a->iterations)) return CLI_ERROR;
        if (a->iterations < 1) {
            cli_error("--iterations %d: must be >= 1", a->iterations);
            return CLI_ERROR;
        }
        break;
    case OPT_INCLUSION:
        if (parse_double("--inclusion-evalue", optarg, &a->inclusion)) return CLI_ERROR;
        if (!(a->inclusion > 0)) {
            cli_error("--inclusion-evalue %s: must be > 0", optarg);
            return CLI_ERROR;
        }
        break;
    case OPT_OUT_PSSM: a->out_pssm = optarg; break;
    case OPT_MAX_HSPS:
        if (cli_parse_int("--max-hsps", optarg, &a->max_hsps)) return CLI_ERROR;
        if (a->max_hsps < 1) {
            cli_error("--max-hsps %d: must be >= 1 (alignments per query, subject and strand)",
                      a->max_hsps);
            return CLI_ERROR;
        }
        break;
    case OPT_STRAND:
        a->strand_given = 1;
        if (!strcmp(optarg, "both")) a->strand = SWGPU_STRAND_BOTH;
        else if (!strcmp(optarg, "plus")) a->strand = SWGPU_STRAND_PLUS;
        else if (!strcmp(optarg, "minus")) a->strand = SWGPU_STRAND_MINUS;
        else {
            cli_error("--strand: '%s' is not both, plus or minus", optarg);
            return CLI_ERROR;
        }
        break;
    case OPT_REPORT:
        if (!strcmp(optarg, "all") || !strcmp(optarg, "last")) {
            a->report_all = !strcmp(optarg, "all");
        } else {
            cli_error("--report: '%s' is not last or all", optarg);
            return CLI_ERROR;
        }
        break;
    default: /* ':' too */
        return cli_getopt_error("search", c, opt);
    }
    return CLI_RUN;
}

/* What is left of argv after the options (nothing) and the checks across
 * options. */
static int search_operands(int argc, char **argv, cli_search_args_t *a)
{
    if (optind < argc) {
        cli_error("search: unexpected argument '%s' (see swgpu search --help)", argv[optind]);
        return CLI_ERROR;
    }
    if (a->qpath && a->npssm) {
        cli_error("search: -q and --pssm cannot be combined: a PSSM is the query (as psiblast's "
                  "-in_pssm replaces -query); give one of them");
        return CLI_ERROR;
    }
    if ((!a->qpath && !a->npssm) || !a->dpath) {
        cli_error("search: %s (see swgpu search --help)",
                  !a->qpath && !a->npssm && !a->dpath ? "-q QUERIES (or --pssm FILE) and -d DB "
                                                        "are required"
                  : !a->dpath ? "-d DB is required"
                              : "-q QUERIES (or --pssm FILE) is required");
        return CLI_ERROR;
    }
    if (!strcmp(a->dpath, "-")) {
        cli_error("search: -d -: the database cannot be read from standard input (give its "
                  "file or BLAST database name)");
        return CLI_ERROR;
    }
    if (a->max_hsps > 1 && (a->no_align || a->iterations > 1)) {
        cli_error("search: --max-hsps %d cannot be combined with %s", a->max_hsps,
                  a->no_align ? "--no-align: the further alignments need the first ones"
                              : "--iterations: an iterated search reports one alignment per "
                                "subject (its PSSMs take every HSP of a subject)");
        return CLI_ERROR;
    }
    for (int i = 0; i < a->npssm; i++)
        if (!strcmp(a->pssm[i], "-")) {
            cli_error("search: --pssm -: a PSSM cannot be read from standard input (give its "
                      "file)");
            return CLI_ERROR;
        }
    return CLI_RUN;
}

static int search_args(int argc, char **argv, cli_search_args_t *a)
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
        {"pssm", required_argument, NULL, OPT_PSSM},
        {"iterations", required_argument, NULL, OPT_ITERATIONS},
        {"inclusion-evalue", required_argument, NULL, OPT_INCLUSION},
        {"out-pssm", required_argument, NULL, OPT_OUT_PSSM},
        {"report", required_argument, NULL, OPT_REPORT},
        {"strand", required_argument, NULL, OPT_STRAND},
        {"rank", required_argument, NULL, OPT_RANK},
        {"comp-based-stats", required_argument, NULL, OPT_CBS},
        {"max-hsps", required_argument, NULL, OPT_MAX_HSPS},
        {NULL, 0, NULL, 0},
    };
    static const char shortopts[] = ":q:d:n:e:f:o:t:vh";
    char **av;
    int ac, c, rc;

    search_defaults(a);
    if ((rc = cli_blast_args(argc, argv, shortopts, longopts, &ac, &av)) != CLI_RUN)
        return rc;
    opterr = 0;
    optind = 0; /* glibc: a full reset of getopt's state (0 then means 1) */
    while (rc == CLI_RUN && (c = getopt_long(ac, av, shortopts, longopts, NULL)) != -1)
        rc = search_option(c, optind > 1 ? av[optind - 1] : "", a);
    if (rc == CLI_RUN)
        rc = search_operands(ac, av, a);
    free(av);
    return rc;
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
    o->strand = a->strand;
    o->rank = a->rank;
    o->comp_based_stats = a->comp_based_stats;
    o->max_hsps = a->max_hsps;
}

