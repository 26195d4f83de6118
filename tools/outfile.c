/*
 * outfile.c - output files of the tool, written so that a failed or
 * interrupted run never leaves a truncated file that looks complete.
 *
 * A regular file (or a path that does not exist yet) is written to
 * PATH.tmp.<pid> and renamed over PATH only once everything was written.
 * Anything else that exists - a device such as /dev/null, a FIFO, a symbolic
 * link - is written in place, since renaming over it would replace it.
 * SIGINT/SIGTERM/SIGHUP remove the temporaries of every open output.
 */
#include "cli.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_OPEN 4
static cli_out_t *open_outs[MAX_OPEN];

static void on_signal(int sig)
{
    for (int i = 0; i < MAX_OPEN; i++)
        if (open_outs[i] && open_outs[i]->tmp[0])
            unlink(open_outs[i]->tmp);
    signal(sig, SIG_DFL);
    raise(sig);
}

static void track(cli_out_t *o, int on)
{
    for (int i = 0; i < MAX_OPEN; i++) {
        if (on && !open_outs[i]) {
            open_outs[i] = o;
            return;
        }
        if (!on && open_outs[i] == o)
            open_outs[i] = NULL;
    }
}

FILE *cli_out_open(cli_out_t *o, const char *path)
{
    struct stat sb;
    memset(o, 0, sizeof *o);
    o->path = path;
    if (!path) {
        o->fp = stdout;
        return o->fp;
    }
    if (lstat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) {
        if (S_ISDIR(sb.st_mode)) {
            cli_error("output %s: is a directory", path);
            return NULL;
        }
        o->fp = fopen(path, "w");
        if (!o->fp)
            cli_error("output %s: cannot open: %s", path, strerror(errno));
        return o->fp;
    }
    snprintf(o->tmp, sizeof o->tmp, "%s.tmp.%ld", path, (long)getpid());
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    signal(SIGHUP, on_signal);
    track(o, 1);
    o->fp = fopen(o->tmp, "w");
    if (!o->fp) {
        cli_error("output %s: cannot create %s: %s", path, o->tmp, strerror(errno));
        track(o, 0);
        o->tmp[0] = 0;
    }
    return o->fp;
}

int cli_out_close(cli_out_t *o)
{
    FILE *fp = o->fp;
    int bad, err;
    if (!fp)
        return -1;
    o->fp = NULL;
    bad = fflush(fp) != 0 || ferror(fp);
    err = errno;
    if (fp != stdout && fclose(fp) != 0 && !bad) {
        bad = 1;
        err = errno;
    }
    if (bad) {
        cli_error("output %s: writing %s failed: %s", o->path ? o->path : "(standard output)",
                  o->tmp[0] ? o->tmp : o->path ? o->path : "(standard output)", strerror(err));
        cli_out_abort(o);
        return -1;
    }
    if (o->tmp[0]) {
        if (rename(o->tmp, o->path) != 0) {
            cli_error("output %s: cannot rename %s to it: %s", o->path, o->tmp, strerror(errno));
            cli_out_abort(o);
            return -1;
        }
        o->tmp[0] = 0;
        track(o, 0);
    }
    return 0;
}

void cli_out_abort(cli_out_t *o)
{
    if (o->fp && o->fp != stdout)
        fclose(o->fp);
    o->fp = NULL;
    if (o->tmp[0]) {
        remove(o->tmp);
        o->tmp[0] = 0;
    }
    track(o, 0);
}

/* 1 when out (an existing file) belongs to the BLAST database that the
 * prefix in names: in's directory, in's name, '.', anything (a volume
 * number), and an extension of the files searching reads */
static int blastdb_file(const char *in, const char *out)
{
    static const char *const ext[] = {".pal", ".pin", ".psq", ".phr",
                                      ".nal", ".nin", ".nsq", ".nhr"};
    char dir[PATH_MAX], rdir[PATH_MAX], rout[PATH_MAX], want[PATH_MAX + 8];
    size_t n = strlen(out), k;
    for (k = 0; k < sizeof ext / sizeof *ext; k++)
        if (n > 4 && !strcmp(out + n - 4, ext[k]))
            break;
    if (k == sizeof ext / sizeof *ext)
        return 0;
    const char *slash = strrchr(in, '/');
    const char *base = slash ? slash + 1 : in;
    if (!*base)
        return 0;
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - in) + (slash == in) : 1,
             slash ? in : ".");
    if (!realpath(dir, rdir) || !realpath(out, rout))
        return 0;
    int w = snprintf(want, sizeof want, "%s%s%s.", rdir,
                     rdir[strlen(rdir) - 1] == '/' ? "" : "/", base);
    return w > 0 && (size_t)w < sizeof want && !strncmp(rout, want, (size_t)w);
}

int cli_check_output(const char *opt, const char *out, const cli_input_t *in, int n)
{
    struct stat so, si;
    if (!out || stat(out, &so) != 0 || S_ISCHR(so.st_mode) || S_ISFIFO(so.st_mode))
        return 0; /* nothing there yet, or a device / pipe written in place */
    for (int i = 0; i < n; i++) {
        if (in[i].path && strcmp(in[i].path, "-") && stat(in[i].path, &si) != 0 &&
            blastdb_file(in[i].path, out)) {
            cli_error("%s %s is a file of the BLAST database %s (the %s): refusing to "
                      "overwrite an input (choose another output file)",
                      opt, out, in[i].path, in[i].what);
            return -1;
        }
        if (in[i].path && !strcmp(in[i].path, "-")) { /* standard input, not a file "-" */
            if (fstat(STDIN_FILENO, &si) != 0 || !S_ISREG(si.st_mode))
                continue;
        } else if (!in[i].path || stat(in[i].path, &si) != 0) {
            continue;
        }
        if (si.st_dev == so.st_dev && si.st_ino == so.st_ino) {
            cli_error("%s %s is the same file as the %s %s: refusing to overwrite an input "
                      "(choose another output file)", opt, out, in[i].what,
                      strcmp(in[i].path, "-") ? in[i].path : "(standard input)");
            return -1;
        }
    }
    return 0;
}
