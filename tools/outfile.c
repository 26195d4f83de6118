/*
 * outfile.c - output files of the tool, written so that a failed or
 * interrupted run never leaves a truncated file that looks complete.
 *
 * A regular file (or a path that does not exist yet) is written to
 * PATH.tmp.<pid> and renamed over PATH only once everything was written.
 * A symbolic link is followed to its target (the last link's target when
 * links chain), whose directory holds the temporary and which the rename
 * replaces: the link stays a link.  Anything else that exists - a device
 * such as /dev/null, a FIFO - is written in place, since renaming over it
 * would replace it.  SIGINT/SIGTERM/SIGHUP remove the temporaries of every
 * open output.
 */
#include "cli.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MAX_OPEN 4
static cli_out_t *open_outs[MAX_OPEN];

#if defined(__linux__) && defined(SYS_getdents64)
struct dirent64_raw {
    unsigned long long d_ino;
    long long d_off;
    unsigned short d_reclen;
    unsigned char d_type;
    char d_name[];
};
#endif

/* remove the temporary directory dir and what it holds (files only), with
 * calls that are safe in a signal handler */
static void remove_tmpdir(const char *dir)
{
#if defined(__linux__) && defined(SYS_getdents64)
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        char buf[4096] __attribute__((aligned(8)));
        long n;
        /* unlinking while reading: read again from the start until empty */
        for (int pass = 0; pass < 64; pass++) {
            int removed = 0;
            lseek(fd, 0, SEEK_SET);
            while ((n = syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0)
                for (long off = 0; off < n;) {
                    struct dirent64_raw *d = (struct dirent64_raw *)(buf + off);
                    off += d->d_reclen;
                    if (strcmp(d->d_name, ".") && strcmp(d->d_name, "..") &&
                        unlinkat(fd, d->d_name, 0) == 0)
                        removed = 1;
                }
            if (!removed)
                break;
        }
        close(fd);
    }
#endif
    rmdir(dir);
}

static void on_signal(int sig)
{
    for (int i = 0; i < MAX_OPEN; i++)
        if (open_outs[i] && open_outs[i]->tmp[0]) {
            if (open_outs[i]->tmpdir)
                remove_tmpdir(open_outs[i]->tmp);
            else
                unlink(open_outs[i]->tmp);
        }
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

/* the label of an output in messages: "output PATH" for -o, else the option */
static const char *label(const char *opt)
{
    return !opt || !strcmp(opt, "-o") ? "output" : opt;
}

/* cli_out_resolve's answer for a path written in place: path itself */
static int in_place(const char *path, char *dest, size_t size)
{
    snprintf(dest, size, "%s", path);
    return 1;
}

int cli_out_resolve(const char *opt, const char *path, char *dest, size_t size)
{
    char link[PATH_MAX], next[PATH_MAX];
    struct stat sb;
    if (!*path) {
        cli_error("%s '': an empty file name", label(opt));
        return -1;
    }
    if (snprintf(dest, size, "%s", path) >= (int)size) {
        cli_error("%s %s: the name is too long", label(opt), path);
        return -1;
    }
    for (int hops = 0;; hops++) {
        /* links of /proc (/dev/stdout, /dev/fd/N) name open files, which
         * their text does not: the path itself is written in place */
        if (!strncmp(dest, "/proc/", 6))
            return in_place(path, dest, size);
        if (lstat(dest, &sb) != 0) {
            if (errno == ENOENT) { /* a new file, unless the kernel sees one */
                struct stat ks;
                return stat(path, &ks) == 0 ? in_place(path, dest, size) : 0;
            }
            if (strcmp(dest, path))
                cli_error("%s %s: its target %s: %s", label(opt), path, dest, strerror(errno));
            else
                cli_error("%s %s: %s", label(opt), path, strerror(errno));
            return -1;
        }
        if (!S_ISLNK(sb.st_mode)) {
            struct stat ks;
            if (hops && stat(path, &ks) == 0 && (ks.st_dev != sb.st_dev || ks.st_ino != sb.st_ino))
                return in_place(path, dest, size);
            return 0;
        }
        if (hops == 40) {
            cli_error("%s %s: too many levels of symbolic links", label(opt), path);
            return -1;
        }
        ssize_t n = readlink(dest, link, sizeof link - 1);
        if (n < 0 || n == (ssize_t)sizeof link - 1) {
            cli_error("%s %s: cannot read the symbolic link %s: %s", label(opt), path, dest,
                      n < 0 ? strerror(errno) : "target too long");
            return -1;
        }
        link[n] = '\0';
        const char *slash = strrchr(dest, '/');
        int w = link[0] == '/' || !slash
                    ? snprintf(next, sizeof next, "%s", link)
                    : snprintf(next, sizeof next, "%.*s/%s", (int)(slash - dest), dest, link);
        if (w < 0 || w >= (int)sizeof next || snprintf(dest, size, "%s", next) >= (int)size) {
            cli_error("%s %s: the target of the symbolic link is too long", label(opt), path);
            return -1;
        }
    }
}

/* dest's temporary name, dest.tmp.<pid>; -1 after an error when it is too
 * long for a name (NAME_MAX) or a path */
static int tmp_name(const char *opt, const char *path, const char *dest, char *tmp, size_t size)
{
    const char *slash = strrchr(dest, '/');
    const char *base = slash ? slash + 1 : dest;
    char dir[PATH_MAX];
    long name_max;
    int w = snprintf(tmp, size, "%s.tmp.%ld", dest, (long)getpid());
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - dest) + (slash == dest) : 1,
             slash ? dest : ".");
    errno = 0;
    name_max = pathconf(dir, _PC_NAME_MAX);
    if (name_max <= 0)
        name_max = NAME_MAX;
    if (w < 0 || w >= (int)size || w >= PATH_MAX ||
        strlen(base) + (size_t)(w - (int)strlen(dest)) > (size_t)name_max) {
        cli_error("%s %s: the name is too long for its temporary file %s.tmp.%ld (at most %ld "
                  "bytes in a file name)", label(opt), path, base, (long)getpid(), name_max);
        tmp[0] = 0;
        return -1;
    }
    return 0;
}

static void catch_signals(void)
{
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    signal(SIGHUP, on_signal);
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
    int special = cli_out_resolve("-o", path, o->dest, sizeof o->dest);
    if (special < 0)
        return NULL;
    /* sb only when stat ran: a special name (/dev/stdout, /dev/fd/N) is not
     * stat'ed here (its mode was read uninitialised: under ASan a pipe on
     * /dev/fd/1 was once called a directory) */
    int have_sb = !special && stat(o->dest, &sb) == 0;
    if (special || (have_sb && !S_ISREG(sb.st_mode))) {
        if (have_sb && S_ISDIR(sb.st_mode)) {
            cli_error("output %s: is a directory", path);
            return NULL;
        }
        o->fp = fopen(path, "w");
        if (!o->fp)
            cli_error("output %s: cannot open: %s", path, strerror(errno));
        return o->fp;
    }
    if (tmp_name("-o", path, o->dest, o->tmp, sizeof o->tmp) < 0)
        return NULL;
    catch_signals();
    track(o, 1);
    o->fp = fopen(o->tmp, "w");
    if (!o->fp) {
        cli_error("output %s: cannot create %s: %s", path, o->tmp, strerror(errno));
        track(o, 0);
        o->tmp[0] = 0;
    } else if (stat(o->dest, &sb) == 0 && S_ISREG(sb.st_mode)) {
        fchmod(fileno(o->fp), sb.st_mode & 07777); /* the file it replaces keeps its mode */
    }
    return o->fp;
}

int cli_out_open_dir(cli_out_t *o, const char *opt, const char *path, char *file, size_t size)
{
    struct stat sb;
    memset(o, 0, sizeof *o);
    o->path = path;
    o->tmpdir = 1;
    int special = cli_out_resolve(opt, path, o->dest, sizeof o->dest);
    if (special < 0)
        return -1;
    if (special) {
        cli_error("%s %s: names an open file (such as /dev/stdout), not a regular file "
                  "(refusing to replace it: give a file name)", opt, path);
        return -1;
    }
    if (stat(o->dest, &sb) == 0 && !S_ISREG(sb.st_mode)) {
        int link = strcmp(o->dest, path) != 0;
        cli_error("%s %s: %s%s%s %s, not a regular file (refusing to replace it: give a file "
                  "name)", opt, path, link ? "its target " : "", link ? o->dest : "",
                  link ? " is" : "is",
                  S_ISDIR(sb.st_mode) ? "a directory" : S_ISFIFO(sb.st_mode) ? "a FIFO"
                  : S_ISCHR(sb.st_mode) || S_ISBLK(sb.st_mode) ? "a device" : "a special file");
        return -1;
    }
    if (tmp_name(opt, path, o->dest, o->tmp, sizeof o->tmp) < 0)
        return -1;
    catch_signals();
    track(o, 1);
    if (mkdir(o->tmp, 0700) != 0) {
        cli_error("%s %s: cannot create %s: %s", opt, path, o->tmp, strerror(errno));
        track(o, 0);
        o->tmp[0] = 0;
        return -1;
    }
    if (snprintf(file, size, "%s/out", o->tmp) >= (int)size) {
        cli_error("%s %s: the name is too long", opt, path);
        cli_out_abort(o);
        return -1;
    }
    return 0;
}

int cli_out_close(cli_out_t *o)
{
    FILE *fp = o->fp;
    int bad, err;
    if (o->tmpdir) {
        char file[sizeof o->tmp + 8];
        if (!o->tmp[0])
            return -1;
        snprintf(file, sizeof file, "%s/out", o->tmp);
        struct stat sb;
        if (stat(o->dest, &sb) == 0 && S_ISREG(sb.st_mode))
            chmod(file, sb.st_mode & 07777); /* the file it replaces keeps its mode */
        if (rename(file, o->dest) != 0) {
            cli_error("%s: cannot rename %s to it: %s", o->path, file, strerror(errno));
            cli_out_abort(o);
            return -1;
        }
        cli_out_abort(o); /* the directory, empty now */
        return 0;
    }
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
        if (rename(o->tmp, o->dest) != 0) {
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
        if (o->tmpdir)
            remove_tmpdir(o->tmp);
        else
            remove(o->tmp);
        o->tmp[0] = 0;
    }
    track(o, 0);
}

/* 1 when out (an existing file) belongs to the BLAST database that the
 * prefix in names: in's directory, in's name, '.', anything (a volume
 * number), and the extension of a file of a BLAST database (version 4 or 5:
 * makeblastdb's LMDB files and indices too) */
/* the real path of p, whether or not p exists (its directory's real path
 * and its last name); 0 if the directory cannot be resolved */
static int real_name(const char *p, char *out, size_t size)
{
    char dir[PATH_MAX], rdir[PATH_MAX];
    const char *slash = strrchr(p, '/');
    const char *base = slash ? slash + 1 : p;
    if (!*base)
        return 0;
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - p) + (slash == p) : 1,
             slash ? p : ".");
    if (!realpath(dir, rdir))
        return 0;
    int w = snprintf(out, size, "%s%s%s", rdir, rdir[strlen(rdir) - 1] == '/' ? "" : "/", base);
    return w > 0 && (size_t)w < size;
}

/* the index of a BLAST database file's extension (".pin", ".nal", ...) at
 * the end of name, or -1 */
static int blastdb_ext(const char *name)
{
    static const char *const ext[] = {
        "al", "in", "sq", "hr", "og", "sd", "si", "ni", "nd", "pi", "pd", "hi", "hd",
        "os", "ot", "tf", "to", "db", "js", "aa", "ab", "ac"};
    size_t n = strlen(name);
    for (size_t k = 0; k < sizeof ext / sizeof *ext; k++)
        if (n > 4 && name[n - 4] == '.' && (name[n - 3] == 'p' || name[n - 3] == 'n') &&
            !strcmp(name + n - 2, ext[k]))
            return (int)k;
    return -1;
}

/* 1 if out (existing or not) is a file of the BLAST database that input in
 * names (its prefix, or one of its files): PREFIX.pin, PREFIX.nal (an alias
 * file there would hide the database), PREFIX.pdb, a volume's PREFIX.00.psq,
 * ... */
static int blastdb_file(const char *in, const char *out)
{
    char prefix[PATH_MAX], rpre[PATH_MAX], rout[PATH_MAX];
    struct stat si;
    if (blastdb_ext(out) < 0)
        return 0;
    snprintf(prefix, sizeof prefix, "%s", in);
    if (blastdb_ext(prefix) >= 0)
        prefix[strlen(prefix) - 4] = 0; /* a file of the database names it too */
    else if (stat(in, &si) == 0)
        return 0; /* a file that is no BLAST database's: FASTA, makedb */
    if (!real_name(prefix, rpre, sizeof rpre) || !real_name(out, rout, sizeof rout))
        return 0;
    size_t w = strlen(rpre); /* PREFIX.ext, or a volume's PREFIX.NN.ext */
    return !strncmp(rout, rpre, w) && rout[w] == '.';
}

/* 1 when paths a and b name the same file, existing or not (the same
 * directory, resolved, and the same name) */
int cli_same_path(const char *a, const char *b)
{
    struct stat sa, sb;
    char ra[PATH_MAX], rb[PATH_MAX];
    if (!strcmp(a, b))
        return 1;
    if (stat(a, &sa) == 0 && stat(b, &sb) == 0)
        return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    return real_name(a, ra, sizeof ra) && real_name(b, rb, sizeof rb) && !strcmp(ra, rb);
}

int cli_check_output(const char *opt, const char *out, const cli_input_t *in, int n)
{
    struct stat so, si;
    char dest[PATH_MAX], tmp[PATH_MAX + 32];
    if (!out)
        return 0;
    int special = cli_out_resolve(opt, out, dest, sizeof dest);
    if (special < 0)
        return -1;
    if (special)
        return 0; /* an open file (/dev/stdout) written in place */
    /* a file of an input BLAST database, existing or not (PREFIX.nal, made
     * anew, would hide the database) */
    for (int i = 0; i < n; i++)
        if (in[i].path && strcmp(in[i].path, "-") && blastdb_file(in[i].path, out)) {
            cli_error("%s %s is a file of the BLAST database %s (the %s): refusing to "
                      "overwrite an input (choose another output file)",
                      opt, out, in[i].path, in[i].what);
            return -1;
        }
    if (stat(dest, &so) == 0) {
        if (S_ISDIR(so.st_mode)) {
            cli_error("%s %s: is a directory", label(opt), out);
            return -1;
        }
        if (!S_ISREG(so.st_mode))
            return 0; /* a device / pipe written in place */
        for (int i = 0; i < n; i++) {
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
    }
    /* the temporary beside it can be made (a missing or read-only directory,
     * a name too long: refused now rather than after the run) */
    if (tmp_name(opt, out, dest, tmp, sizeof tmp) < 0)
        return -1;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) {
        cli_error("%s %s: cannot create %s: %s", label(opt), out, tmp, strerror(errno));
        return -1;
    }
    close(fd);
    unlink(tmp);
    return 0;
}
