/*
 * swgpu.c - main() of the swgpu tool: subcommand dispatch, usage, version.
 * Each subcommand lives in tools/cmd_<name>.c, the shared helpers (logger,
 * error lines) in tools/cli.c.
 */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"

#include <stdio.h>
#include <string.h>

static void usage(FILE *fp)
{
    fputs("swgpu " SWGPU_VERSION " - exact Smith-Waterman local alignment on CPUs and NVIDIA GPUs\n"
          "\n"
          "usage: swgpu <command> [options]\n"
          "\n"
          "commands:\n"
          "  search    search protein or DNA queries against a database (top hits,\n"
          "            E-values, alignments; BLAST tabular or pairwise output)\n"
          "  makedb    convert a FASTA/FASTQ file into a binary swgpu database\n"
          "  align     exact local alignment of two long sequences (whole genomes),\n"
          "            on a GPU or the CPU; summary, SAM, pairwise text, SVG plot\n"
          "  version   print the version and the compiled-in backends\n"
          "  help      this text; 'swgpu help <command>' for a command's options\n"
          "\n"
          "Gap convention: a gap of length k costs OPEN + k*EXTEND.\n"
          "Run 'swgpu <command> --help' for the options of a command.\n",
          fp);
}

static int cmd_version(void)
{
    printf("swgpu %s\n", SWGPU_VERSION);
#ifdef SWGPU_HAVE_CUDA
    printf("backends: ref cpu cuda\n");
#else
    printf("backends: ref cpu (built without CUDA)\n");
#endif
    return 0;
}

typedef struct {
    const char *name;
    int (*fn)(int argc, char **argv);
} command_t;

static const command_t commands[] = {
    {"search", swgpu_cmd_search},
    {"makedb", swgpu_cmd_makedb},
    {"align", swgpu_cmd_align},
};

static const command_t *find_command(const char *name)
{
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(commands[i].name, name))
            return &commands[i];
    return NULL;
}

#ifndef SWGPU_MPI
int main(int argc, char **argv)
{
    return cli_main(argc, argv);
}
#endif

int cli_main(int argc, char **argv)
{
    cli_start_clock();
    cli_install_logger(1);
    if (argc < 2) {
        cli_error("no command given (commands: search, makedb, align, version, help; "
                  "swgpu --help for usage)");
        return 1;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(cmd, "help")) {
        if (argc < 3) {
            usage(stdout);
            return 0;
        }
        const command_t *c = find_command(argv[2]);
        if (!c) {
            cli_error("help: unknown command '%s' (commands: search, makedb, align, version, help)",
                      argv[2]);
            return 1;
        }
        char *hargv[] = {argv[2], "--help", NULL};
        return c->fn(2, hargv);
    }
    if (!strcmp(cmd, "version") || !strcmp(cmd, "--version") || !strcmp(cmd, "-V"))
        return cmd_version();
    const command_t *c = find_command(cmd);
    if (!c) {
        cli_error("unknown command '%s' (commands: search, makedb, align, version, help)", cmd);
        return 1;
    }
    int status = c->fn(argc - 1, argv + 1) ? 1 : 0;
    swgpu_backend_wait(); /* never exit while the GPU's set-up thread is in the driver */
    return status;
}
