/*
 * cmd_makedb.c - `swgpu makedb IN OUT`: read a FASTA/FASTQ file (plain or
 * gzip) or a BLAST database and write the binary, length-sorted, memory-mappable database that
 * `swgpu search -d` opens without parsing (swgpu_makedb: a plain FASTA file on -t threads).
 */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

static void usage(FILE *fp)
{
    fputs("usage: swgpu makedb [options] IN OUT\n"
          "\n"
          "Converts IN (FASTA or FASTQ, plain or gzip, or a BLAST database named as given to\n"
          "makeblastdb -out; '-' is standard input: a pipe is read to its end into memory,\n"
          "then as a file is) into the binary database OUT for 'swgpu search -d OUT'.  OUT is\n"
          "written in a temporary directory OUT.tmp.PID and renamed when complete (for a\n"
          "symbolic link, its target is replaced); a directory, FIFO or device is refused.\n"
          "\n"
          "options:\n"
          "      --type prot|dna    sequence type (default: detected from the sequences)\n"
          "  -t, --threads N        CPU threads reading a plain FASTA file (default 0 = all\n"
          "                         cores; gzip, FASTQ and other inputs are read on one)\n"
          "  -v, --verbose          more messages\n"
          "      --quiet            no warnings and no summary line\n"
          "  -h, --help             this text\n",
          fp);
}

enum { OPT_TYPE = 256, OPT_QUIET };

int cli_makedb_args(int argc, char **argv, cli_makedb_args_t *a)
{
    static const struct option longopts[] = {
        {"type", required_argument, NULL, OPT_TYPE},
        {"threads", required_argument, NULL, 't'},
        {"verbose", no_argument, NULL, 'v'},
        {"quiet", no_argument, NULL, OPT_QUIET},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int c;

    memset(a, 0, sizeof *a);
    a->type = SWGPU_AUTO;
    a->verbosity = 1;
    opterr = 0;
    optind = 0; /* glibc: a full reset of getopt's state (0 then means 1) */
    while ((c = getopt_long(argc, argv, ":t:vh", longopts, NULL)) != -1) {
        const char *opt = optind > 1 ? argv[optind - 1] : "";
        switch (c) {
        case OPT_TYPE:
            if (!strcmp(optarg, "prot") || !strcmp(optarg, "protein")) {
                a->type = SWGPU_PROTEIN;
            } else if (!strcmp(optarg, "dna") || !strcmp(optarg, "nucl")) {
                a->type = SWGPU_DNA;
            } else {
                cli_error("--type: '%s' is not prot or dna", optarg);
                return CLI_ERROR;
            }
            break;
        case 't':
            if (cli_parse_int("--threads", optarg, &a->threads)) return CLI_ERROR;
            if (a->threads < 0) {
                cli_error("--threads: %d is negative", a->threads);
                return CLI_ERROR;
            }
            break;
        case 'v': a->verbosity++; break;
        case OPT_QUIET: a->verbosity = 0; break;
        case 'h': return CLI_HELP;
        default: /* ':' too */
            return cli_getopt_error("makedb", c, opt);
        }
    }
    if (argc - optind != 2) {
        cli_error("makedb: expected IN and OUT, got %d argument%s (see swgpu makedb --help)",
                  argc - optind, argc - optind == 1 ? "" : "s");
        return CLI_ERROR;
    }
    a->in = argv[optind];
    a->out = argv[optind + 1];
    if (!strcmp(a->out, "-")) {
        cli_error("makedb: OUT is '-': a database is written to a file, not to standard output "
                  "(give a file name)");
        return CLI_ERROR;
    }
    return CLI_RUN;
}

int swgpu_cmd_makedb(int argc, char **argv)
{
    cli_makedb_args_t a;
    int rc;

    switch (cli_makedb_args(argc, argv, &a)) {
    case CLI_HELP: usage(stdout); return 0;
    case CLI_ERROR: return 1;
    }
    const char *in = a.in, *outp = a.out;
    swgpu_alphabet_t type = a.type;
    int verbosity = a.verbosity;
    cli_install_logger(verbosity);
    int threads = cli_clamp_threads(a.threads, verbosity);
    {
        const cli_input_t inp[] = {{in, "input"}};
        if (cli_check_output("makedb: OUT", outp, inp, 1) < 0)
            return 1;
    }
    /* the database is written into a private directory beside OUT, made
     * now (a bad OUT fails before IN is read), renamed over OUT when whole;
     * an interrupted run removes the directory */
    cli_out_t out;
    char file[sizeof out.tmp + 8];
    if (cli_out_open_dir(&out, "makedb: OUT", outp, file, sizeof file) < 0)
        return 1;

    swgpu_db_t *db = NULL;
    swgpu_read_info_t info;
    memset(&info, 0, sizeof info);
    /* '-': standard input, by the name that opens it (a pipe is read to
     * its end into memory, then as a file is) */
    if ((rc = swgpu_makedb(strcmp(in, "-") ? in : "/dev/stdin", file, type, threads, &db, &info)) < 0) {
        const char *m = swgpu_last_error();
        cli_error("%s", m && *m ? m : swgpu_strerror(rc));
        cli_out_abort(&out);
        swgpu_db_destroy(db);
        return 1;
    }
    if (cli_out_close(&out) < 0) {
        swgpu_db_destroy(db);
        return 1;
    }
    if (verbosity > 0)
        fprintf(stderr,
                "[swgpu %.2fs] makedb: wrote %s: %zu %s sequences, %llu residues, longest %llu "
                "(%llu empty records skipped, %llu unknown letters)\n",
                cli_elapsed(), outp, swgpu_db_size(db), swgpu_alphabet_name(swgpu_db_alphabet(db)),
                (unsigned long long)swgpu_db_residues(db), (unsigned long long)swgpu_db_max_len(db),
                (unsigned long long)info.n_empty, (unsigned long long)info.n_unknown);
    swgpu_db_destroy(db);
    return 0;
}
