/*
 * cli.c - helpers shared by the subcommands of the swgpu tool: the clock of
 * the log lines, the logger, error lines (getopt's too), --threads
 * clamping, option values (integers, sizes, types), durations and the peak
 * memory.
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
#include <sys/resource.h>
#include <time.h>

static double t_start;
static int verbosity_now = 1; /* cli_install_logger's */
static FILE *err_fp; /* NULL: stderr */
const cli_dist_t *cli_dist;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void cli_start_clock(void)
{
    t_start = now();
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
    verbosity_now = verbosity;
}

int cli_verbosity(void)
{
    return verbosity_now;
}

const char *cli_out_path(const char *path)
{
    return path && cli_dist && !cli_dist->writer ? "/dev/null" : path;
}

void cli_error_stream(FILE *fp)
{
    err_fp = fp;
}

void cli_error(const char *fmt, ...)
{
    va_list ap;
    FILE *fp = err_fp ? err_fp : stderr;
    if (cli_dist && cli_dist->error) {
        char msg[2048];
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        cli_dist->error(msg);
        return;
    }
    fflush(stdout);
    fputs("swgpu: ", fp);
    va_start(ap, fmt);
    vfprintf(fp, fmt, ap);
    va_end(ap);
    fputc('\n', fp);
}

int cli_getopt_error(const char *cmd, int c, const char *opt)
{
    if (c == ':')
        cli_error("%s: option '%s' needs a value (see swgpu %s --help)", cmd, opt, cmd);
    else if (optopt && optopt < 256)
        cli_error("%s: unknown option '-%c' (see swgpu %s --help)", cmd, optopt, cmd);
    else
        cli_error("%s: unknown option '%s' (see swgpu %s --help)", cmd, opt, cmd);
    return CLI_ERROR;
}

int cli_parse_int(const char *opt, const char *s, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (end == s || *end) {
        cli_error("%s: '%s' is not an integer", opt, s);
        return -1;
    }
    if (errno == ERANGE || v < INT_MIN || v > INT_MAX) {
        cli_error("%s: '%s' is out of range (%d to %d)", opt, s, INT_MIN, INT_MAX);
        return -1;
    }
    *out = (int)v;
    return 0;
}

/* "123", "512K", "1.5G", "4g": bytes (binary multiples). */
int cli_parse_size(const char *opt, const char *s, uint64_t *out)
{
    int rc = swgpu_parse_size(s, out);
    if (rc == SWGPU_ERANGE) {
        cli_error("%s: '%s' is too large (at most 16E bytes)", opt, s);
        return -1;
    }
    if (rc || *out < 1) {
        cli_error("%s: '%s' is not a size (examples: 512M, 4G)", opt, s);
        return -1;
    }
    if (*out < (uint64_t)1 << 20) { /* budgets are counted in MiB */
        cli_error("%s %s (%llu bytes): at least 1 MiB is needed", opt, s,
                  (unsigned long long)*out);
        return -1;
    }
    return 0;
}

int cli_parse_type(const char *s, swgpu_alphabet_t *a)
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

void cli_lib_error(int rc)
{
    const char *m = swgpu_last_error();
    cli_error("%s", m && *m ? m : swgpu_strerror(rc));
}

double cli_peak_rss_mb(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return 0.0;
    return (double)ru.ru_maxrss / 1024.0; /* Linux: kilobytes */
}

void cli_fmt_duration(char *buf, size_t n, double s, int style)
{
    if (style == CLI_DURATION_CLOCK) {
        long t = s < 0 ? 0 : (long)(s + 0.5);
        if (t >= 3600)
            snprintf(buf, n, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
        else if (t >= 60)
            snprintf(buf, n, "%ld:%02ld", t / 60, t % 60);
        else
            snprintf(buf, n, "%ld s", t);
        return;
    }
    long t = s > 0 && s < 1e9 ? lround(s) : 0;
    if (t < 100)
        snprintf(buf, n, "%ld s", t);
    else if (t < 3600)
        snprintf(buf, n, "%ldm%02lds", t / 60, t % 60);
    else
        snprintf(buf, n, "%ldh%02ldm", t / 3600, t / 60 % 60);
}
