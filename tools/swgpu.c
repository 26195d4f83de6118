/*
 * swgpu.c - main() of the swgpu tool: subcommand dispatch, the logger, error
 * printing.  Each subcommand lives in tools/cmd_<name>.c.
 */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"

#include <unistd.h>

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static double t_start;
const cli_dist_t *cli_dist;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

double cli_elapsed(void)
{
    return now() - t_start;
}

int cli_clamp_threads(int threads, int verbosity)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (threads == 0 && cli_dist && cli_dist->threads > 0)
        return cli_dist->threads;
    if (cores < 1 || threads <= cores)
        return threads;
    if (verbosity > 0)
        fprintf(stderr, "[swgpu %.2fs] warning: --threads %d is more than the %ld cores: using %ld\n",
                cli_elapsed(), threads, cores, cores);
    return (int)cores;
}

static void log_stderr(swgpu_log_level_t level, const char *msg, void *user)
{
    (void)user;
    const char *tag = level == SWGPU_LOG_ERROR ? "error: "
                      : level == SWGPU_LOG_WARN ? "warning: "
                      : level == SWGPU_LOG_DEBUG ? "debug: "
                                                 : "";
    fprintf(stderr, "[swgpu %.2fs] %s%s\n", cli_elapsed(), tag, msg);
}

/* verbosity: 0 quiet (errors only), 1 warnings (default), 2 info, 3+ debug */
void cli_install_logger(int verbosity)
{
    swgpu_log_level_t max = verbosity <= 0   ? SWGPU_LOG_ERROR
                            : verbosity == 1 ? SWGPU_LOG_WARN
                            : verbosity == 2 ? SWGPU_LOG_INFO
                                             : SWGPU_LOG_DEBUG;
    swgpu_set_logger(log_stderr, NULL, max);
}

void cli_error(const char *fmt, ...)
{
    va_list ap;
    if (cli_dist && cli_dist->error) {
        char msg[2048];
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        cli_dist->error(msg);
        return;
    }
    fflush(stdout);
    fputs("swgpu: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

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

const char *cli_out_path(const char *path)
{
    return path && cli_dist && !cli_dist->writer ? "/dev/null" : path;
}

#ifndef SWGPU_MPI
int main(int argc, char **argv)
{
    return cli_main(argc, argv);
}
#endif

int cli_main(int argc, char **argv)
{
    t_start = now();
    cli_install_logger(1);
    if (argc < 2) {
        cli_error("no command given (commands: search, makedb, version, help; "
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
            cli_error("help: unknown command '%s' (commands: search, makedb, version, help)",
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
        cli_error("unknown command '%s' (commands: search, makedb, version, help)", cmd);
        return 1;
    }
    int status = c->fn(argc - 1, argv + 1) ? 1 : 0;
    swgpu_backend_wait(); /* never exit while the GPU's set-up thread is in the driver */
    return status;
}

/* "123", "512K", "1.5G", "4g": bytes (binary multiples). */
int cli_parse_size(const char *opt, const char *s, uint64_t *out)
{
    char *end;
    double v, mul = 1;
    errno = 0;
    v = strtod(s, &end);
    if (end != s && *end) {
        switch (*end) {
        case 'k': case 'K': mul = 1024.0; break;
        case 'm': case 'M': mul = 1024.0 * 1024; break;
        case 'g': case 'G': mul = 1024.0 * 1024 * 1024; break;
        case 't': case 'T': mul = 1024.0 * 1024 * 1024 * 1024; break;
        default: mul = 0; break;
        }
        if (mul > 0 && (end[1] == 0 || ((end[1] == 'b' || end[1] == 'B') && end[2] == 0) ||
                        ((end[1] == 'i') && (end[2] == 'B') && end[3] == 0)))
            end = (char *)"";
    }
    if (end == s || *end || errno || !isfinite(v) || v <= 0 || v * mul > 1.8e19) {
        cli_error("%s: '%s' is not a size (examples: 512M, 4G)", opt, s);
        return -1;
    }
    *out = (uint64_t)(v * mul);
    return 0;
}
