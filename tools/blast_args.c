/*
 * blast_args.c - BLAST+'s single-dash options on swgpu's command line
 * (`swgpu search -query Q -db D -outfmt 6 -evalue 1`): the ones swgpu has
 * become its own before getopt_long sees them (-comp_based_stats with
 * BLAST's values), those whose only value swgpu honours are checked and
 * dropped, and every other option of BLAST+
 * is refused with a hint naming swgpu's option where there is one.
 */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

/* BLAST+'s options that swgpu takes as its own, and what they become */
static const struct {
    const char *blast, *swgpu;
} aliases[] = {
    {"query", "-q"}, {"db", "-d"}, {"out", "-o"}, {"outfmt", "-f"}, {"evalue", "-e"},
    {"max_target_seqs", "-n"}, {"num_threads", "-t"}, {"max_hsps", "--max-hsps"},
};

/* BLAST+'s other options (blastp, blastn and psiblast 2.12 -help) with
 * swgpu's nearest option, NULL where it has none */
static const struct {
    const char *blast, *swgpu;
} others[] = {
    {"matrix", "--matrix"}, {"gapopen", "--gap-open"}, {"gapextend", "--gap-extend"},
    {"reward", "--match"}, {"penalty", "--mismatch"}, {"strand", "--strand"},
    {"num_iterations", "--iterations"}, {"inclusion_ethresh", "--inclusion-evalue"},
    {"in_pssm", "--pssm"}, {"out_ascii_pssm", "--out-pssm"}, {"subject", "-d"},
    {"num_alignments", "-n"}, {"num_descriptions", "-n"}, {"version", NULL},
    {"best_hit_overhang", NULL}, {"best_hit_score_edge", NULL}, {"culling_limit", NULL},
    {"db_hard_mask", NULL}, {"db_soft_mask", NULL}, {"dbsize", NULL}, {"dust", NULL},
    {"entrez_query", NULL}, {"export_search_strategy", NULL}, {"filtering_db", NULL},
    {"gilist", NULL}, {"html", NULL}, {"import_search_strategy", NULL}, {"index_name", NULL},
    {"ipglist", NULL}, {"lcase_masking", NULL}, {"line_length", NULL},
    {"min_raw_gapped_score", NULL}, {"mt_mode", NULL}, {"negative_gilist", NULL},
    {"negative_ipglist", NULL}, {"negative_seqidlist", NULL}, {"negative_taxidlist", NULL},
    {"negative_taxids", NULL}, {"no_greedy", NULL}, {"off_diagonal_range", NULL},
    {"parse_deflines", NULL}, {"perc_identity", NULL}, {"qcov_hsp_perc", NULL},
    {"query_loc", NULL}, {"remote", NULL}, {"searchsp", NULL}, {"seg", NULL},
    {"seqidlist", NULL}, {"show_gis", NULL}, {"soft_masking", NULL}, {"sorthits", NULL},
    {"sorthsps", NULL}, {"subject_besthit", NULL}, {"subject_loc", NULL}, {"sum_stats", NULL},
    {"task", NULL}, {"taxidlist", NULL}, {"taxids", NULL}, {"template_length", NULL},
    {"template_type", NULL}, {"threshold", NULL}, {"ungapped", NULL}, {"use_index", NULL},
    {"use_sw_tback", NULL}, {"window_masker_db", NULL}, {"window_masker_taxid", NULL},
    {"window_size", NULL}, {"word_size", NULL}, {"xdrop_gap", NULL}, {"xdrop_gap_final", NULL},
    {"xdrop_ungap", NULL}, {"pseudocount", NULL}, {"phi_pattern", NULL},
    {"save_pssm_after_last_round", NULL}, {"save_each_pssm", NULL}, {"out_pssm", NULL},
    {"gap_trigger", NULL}, {"ignore_msa_master", NULL}, {"in_msa", NULL}, {"msa_master_idx", NULL},
};

#define COUNT(a) (sizeof(a) / sizeof *(a))

/* 1 when w is "-word": a dash, then a lower-case letter, then at least one
 * more lower-case letter or '_' */
static int is_word(const char *w)
{
    if (w[0] != '-' || w[1] < 'a' || w[1] > 'z' || !w[2])
        return 0;
    for (const char *p = w + 2; *p; p++)
        if (!(*p >= 'a' && *p <= 'z') && *p != '_')
            return 0;
    return 1;
}

/* 1 when the option word w (not a BLAST option) takes the next argument as
 * its value: a long option without '=' that requires one, or short options
 * whose last one does without a value attached */
static int takes_next(const char *w, const char *shortopts, const struct option *longopts)
{
    if (w[1] == '-') {
        size_t n = strlen(w + 2);
        if (strchr(w, '='))
            return 0;
        for (const struct option *o = longopts; o->name; o++)
            if (!strncmp(o->name, w + 2, n))
                return o->has_arg == required_argument;
        return 0;
    }
    for (const char *p = w + 1; *p; p++) {
        const char *s = strchr(shortopts, *p);
        if (*p != ':' && s && s[1] == ':')
            return !p[1];
    }
    return 0;
}

/* -comp_based_stats v as blastp reads it: 0 F f none, 1, 2 T t D (blastp's
 * default), 3; the mode as "0".."3", NULL (after saying so) for another */
static const char *cbs_mode(const char *v)
{
    static const struct {
        const char *v, *mode;
    } modes[] = {{"0", "0"}, {"F", "0"}, {"f", "0"}, {"1", "1"}, {"2", "2"},
                 {"T", "2"}, {"t", "2"}, {"D", "2"}, {"3", "3"}};
    for (size_t k = 0; k < sizeof modes / sizeof *modes; k++)
        if (!strcmp(v, modes[k].v))
            return modes[k].mode;
    cli_error("search: -comp_based_stats %s: not one of BLAST's values 0 F f 1 2 T t D 3 "
              "(swgpu's --comp-based-stats 0|1|2|3)", v);
    return NULL;
}

/* the BLAST option w that is not one of aliases[]: refused, CLI_ERROR */
static int refuse(const char *w)
{
    for (size_t k = 0; k < COUNT(others); k++)
        if (!strcmp(w + 1, others[k].blast)) {
            if (others[k].swgpu)
                cli_error("search: %s is BLAST's option, not swgpu's: use %s (see swgpu search "
                          "--help)", w, others[k].swgpu);
            else
                cli_error("search: %s is BLAST's option; swgpu has none like it (see swgpu search "
                          "--help)", w);
            return CLI_ERROR;
        }
    cli_error("search: unknown option '%s' (see swgpu search --help)", w);
    return CLI_ERROR;
}

/* 1 when the word w is BLAST's: one of the tables above, or -help */
static int is_blast(const char *w)
{
    for (size_t k = 0; k < COUNT(aliases); k++)
        if (!strcmp(w + 1, aliases[k].blast))
            return 1;
    for (size_t k = 0; k < COUNT(others); k++)
        if (!strcmp(w + 1, others[k].blast))
            return 1;
    return !strcmp(w, "-help") || !strcmp(w, "-comp_based_stats");
}

/* One BLAST word argv[*i] (or one swgpu cannot have: see cli_blast_args):
 * appended to out (*n) as swgpu's, or dropped, its value too; or refused */
static int blast_word(int argc, char **argv, int *i, char **out, int *n)
{
    const char *w = argv[*i];
    if (!strcmp(w, "-help")) {
        out[(*n)++] = (char *)"-h";
        return CLI_RUN;
    }
    int cbs = !strcmp(w, "-comp_based_stats");
    size_t k = 0;
    while (k < COUNT(aliases) && strcmp(w + 1, aliases[k].blast))
        k++;
    if (k == COUNT(aliases) && !cbs)
        return refuse(w);
    if (*i + 1 >= argc) {
        cli_error("search: option '%s' needs a value (see swgpu search --help)", w);
        return CLI_ERROR;
    }
    if (cbs) {
        const char *mode = cbs_mode(argv[++*i]);
        if (!mode)
            return CLI_ERROR;
        out[(*n)++] = (char *)"--comp-based-stats";
        out[(*n)++] = (char *)mode;
        return CLI_RUN;
    }
    out[(*n)++] = (char *)aliases[k].swgpu;
    out[(*n)++] = argv[++*i];
    return CLI_RUN;
}

int cli_blast_args(int argc, char **argv, const char *shortopts, const struct option *longopts,
                   int *out_argc, char ***out_argv)
{
    char **out = malloc(((size_t)argc + 1) * sizeof *out);
    int n = 0, rc = CLI_RUN;
    *out_argv = NULL;
    if (!out) {
        cli_error("search: out of memory for %d arguments", argc);
        return CLI_ERROR;
    }
    if (argc)
        out[n++] = argv[0];
    for (int i = 1; i < argc && rc == CLI_RUN; i++) {
        const char *w = argv[i];
        if (!strcmp(w, "--")) { /* the rest are operands */
            while (i < argc)
                out[n++] = argv[i++];
            break;
        }
        /* a word that is not BLAST's but begins with one of swgpu's short
         * options stays that option, its value attached (-qfile, -vv) */
        if (is_word(w) && (is_blast(w) || !strchr(shortopts, w[1]))) {
            rc = blast_word(argc, argv, &i, out, &n);
            continue;
        }
        out[n++] = argv[i];
        if (w[0] == '-' && w[1] && takes_next(w, shortopts, longopts) && i + 1 < argc)
            out[n++] = argv[++i];
    }
    if (rc != CLI_RUN) {
        free(out);
        return rc;
    }
    out[n] = NULL;
    *out_argc = n;
    *out_argv = out;
    return CLI_RUN;
}
