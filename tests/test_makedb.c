/*
 * test_makedb.c - makedb on several threads (swgpu_makedb,
 * swgpu_db_open_threads): the file, the counts, the warnings and the errors
 * are those of the one-thread reader (fasta.c, swgpu_db_from_seqset,
 * swgpu_db_write), byte for byte, for 1, 2, 3 and 7 threads and pieces
 * of 1 byte (one record each) to 1 MiB: the fixtures and random files
 * (record sizes, line widths, case, CRLF, comments, '*', unknown letters,
 * empty records), then the same files with a bad byte, an empty id or a
 * FASTQ record put in, and under a read limit.
 */
#define _POSIX_C_SOURCE 200809L
#include "tap.h"
#include "testlib.h"
#include "io/io.h"

#include <dirent.h>
#include <unistd.h>

static char tmpdir[256];
static char warned[8192]; /* the warnings logged since the last reset */

static const char *tmp(const char *name)
{
    return tl_path(tmpdir, name);
}

static void logger(swgpu_log_level_t level, const char *msg, void *user)
{
    (void)user;
    if (level == SWGPU_LOG_WARN && strlen(warned) + strlen(msg) + 2 < sizeof warned) {
        strcat(warned, msg);
        strcat(warned, "\n");
    }
}

/* the one-thread way: status, message, warnings, file bytes, counts */
typedef struct {
    int rc;
    char msg[1024], warn[8192];
    unsigned char *file;
    size_t len;
    swgpu_read_info_t info;
} result_t;

static void reference(const char *in, swgpu_alphabet_t a, result_t *r)
{
    swgpu_seqset_t *set = NULL;
    swgpu_db_t *db = NULL;
    memset(r, 0, sizeof *r);
    warned[0] = 0;
    unlink(tmp("ref.db"));
    r->rc = swgpu_seqset_read(in, a, &set, &r->info);
    if (!r->rc) r->rc = swgpu_db_from_seqset(set, &db);
    if (!r->rc) r->rc = swgpu_db_write(db, tmp("ref.db"));
    snprintf(r->msg, sizeof r->msg, "%s", r->rc ? swgpu_last_error() : "");
    snprintf(r->warn, sizeof r->warn, "%s", warned);
    if (!r->rc) r->file = tl_slurp(tmp("ref.db"), &r->len);
    swgpu_db_destroy(db);
    swgpu_seqset_destroy(set);
}

/* in made into a database on `threads` threads with pieces of `piece`
 * bytes, checked against ref (what says which case it is) */
static void compare(const char *in, swgpu_alphabet_t a, int threads, const char *piece,
                    const result_t *ref, const char *what)
{
    swgpu_read_info_t info;
    swgpu_db_t *db = NULL;
    setenv("SWGPU_FASTA_PIECE", piece, 1);
    unlink(tmp("new.db"));
    warned[0] = 0;
    int rc = swgpu_makedb(in, tmp("new.db"), a, threads, &db, &info);
    CHECK(rc == ref->rc, "%s, %d threads, pieces %s: status %d, expected %d (%s)", what, threads,
          piece, rc, ref->rc, rc ? swgpu_last_error() : "");
    if (rc && ref->rc)
        CHECK(!strcmp(swgpu_last_error(), ref->msg), "%s, %d threads, pieces %s: message\n  %s\nexpected\n  %s",
              what, threads, piece, swgpu_last_error(), ref->msg);
    CHECK(!strcmp(warned, ref->warn), "%s, %d threads, pieces %s: warnings\n%sexpected\n%s", what,
          threads, piece, warned, ref->warn);
    if (!rc && !ref->rc) {
        size_t len;
        unsigned char *file = tl_slurp(tmp("new.db"), &len);
        CHECK(file && len == ref->len && !memcmp(file, ref->file, len),
              "%s, %d threads, pieces %s: the file differs (%zu bytes, expected %zu)", what, threads,
              piece, len, ref->len);
        CHECK(info.n_records == ref->info.n_records && info.n_empty == ref->info.n_empty &&
                  info.n_residues == ref->info.n_residues && info.max_len == ref->info.max_len &&
                  info.n_unknown == ref->info.n_unknown,
              "%s, %d threads, pieces %s: counts", what, threads, piece);
        free(file);
        /* the database in memory is the same one */
        swgpu_db_t *m = NULL;
        unlink(tmp("mem.db"));
        rc = swgpu_db_open_threads(in, a, threads, &m, NULL);
        if (!rc) rc = swgpu_db_write(m, tmp("mem.db"));
        file = tl_slurp(tmp("mem.db"), &len);
        CHECK(!rc && file && len == ref->len && !memcmp(file, ref->file, len),
              "%s, %d threads, pieces %s: the database in memory differs", what, threads, piece);
        free(file);
        swgpu_db_destroy(m);
    }
    if (rc) CHECK(access(tmp("new.db"), F_OK) != 0, "%s: no file after a failure", what);
    swgpu_db_destroy(db);
}

static void compare_all(const char *path, swgpu_alphabet_t a, const char *what)
{
    static const int threads[] = {1, 2, 3, 7};
    static const char *const pieces[] = {"1", "61", "4096", "1M"};
    char in[4096]; /* path may be a tl_path buffer, which tmp() reuses */
    snprintf(in, sizeof in, "%s", path);
    result_t ref;
    reference(in, a, &ref);
    for (size_t t = 0; t < 4; t++)
        for (size_t p = 0; p < 4; p++) compare(in, a, threads[t], pieces[p], &ref, what);
    free(ref.file);
}

/* every FASTA/FASTQ fixture of tests/data */
static void test_fixtures(void)
{
    const char *dir = tl_datadir();
    DIR *d = opendir(dir);
    struct dirent *e;
    CHECK(d != NULL, "open %s", dir);
    while (d && (e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (n < 4 || (strcmp(e->d_name + n - 3, ".fa") && strcmp(e->d_name + n - 3, ".fq") &&
                      (n < 7 || strcmp(e->d_name + n - 6, ".fasta"))))
            continue;
        compare_all(tl_path(dir, e->d_name), SWGPU_AUTO, e->d_name);
        compare_all(tl_path(dir, e->d_name), SWGPU_PROTEIN, e->d_name);
    }
    if (d) closedir(d);
}

static uint64_t rnd(uint64_t *s, uint64_t n)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return n ? *s % n : 0;
}

/* a random FASTA text of about nrec records into buf (cap bytes): DNA or
 * protein letters, random lengths and line widths, lower case, digits and
 * spaces, '*' inside and at the end, unknown letters, CRLF, comments,
 * blank lines, empty records, '>' inside a header */
static size_t random_fasta(uint64_t *s, char *buf, size_t cap, int nrec, int dna)
{
    const char *alpha = dna ? "ACGTACGTACGTN" : "ACDEFGHIKLMNPQRSTVWYXBZ";
    size_t n = 0;
    int crlf = rnd(s, 4) == 0;
    const char *eol = crlf ? "\r\n" : "\n";
    if (rnd(s, 4) == 0) n += (size_t)snprintf(buf + n, cap - n, ";comment%s%s", eol, rnd(s, 2) ? eol : "");
    for (int r = 0; r < nrec && n + 20000 < cap; r++) {
        n += (size_t)snprintf(buf + n, cap - n, ">%sid%d%s%s%s", rnd(s, 8) ? "" : " ", r,
                              rnd(s, 3) ? " some desc" : "", rnd(s, 5) ? "" : " a>b\t", eol);
        uint64_t len = rnd(s, 5) == 0 ? 0 : rnd(s, 10) == 0 ? rnd(s, 9000) : rnd(s, 400);
        uint64_t width = 1 + rnd(s, 100), col = 0;
        for (uint64_t i = 0; i < len; i++) {
            int k = (int)rnd(s, 1000);
            char c = alpha[rnd(s, strlen(alpha))];
            if (k < 30) c = (char)(c - 'A' + 'a');
            else if (k < 33) c = '*';
            else if (k < 35) c = "-.J"[rnd(s, 3)];
            else if (k < 37) c = "0 9\t"[rnd(s, 4)];
            buf[n++] = c;
            if (++col == width) {
                n += (size_t)snprintf(buf + n, cap - n, "%s", eol);
                col = 0;
                if (rnd(s, 50) == 0) n += (size_t)snprintf(buf + n, cap - n, "%s", rnd(s, 2) ? eol : ";c\n");
            }
        }
        if (rnd(s, 6) == 0) n += (size_t)snprintf(buf + n, cap - n, "**");
        if (col || rnd(s, 2)) n += (size_t)snprintf(buf + n, cap - n, "%s", eol);
    }
    if (n && rnd(s, 5) == 0 && buf[n - 1] == '\n') n -= crlf ? 2 : 1; /* no final line end */
    return n;
}

static void test_random(void)
{
    enum { CAP = 4 << 20 };
    char *buf = malloc(CAP), what[64];
    uint64_t s = 0x9e3779b97f4a7c15ull;
    int rounds = tap_quick() ? 6 : 16;
    for (int i = 0; i < rounds; i++) {
        size_t n = random_fasta(&s, buf, CAP, 1 + (int)rnd(&s, 300), i % 3 == 0);
        tl_spit(tmp("r.fa"), buf, n);
        snprintf(what, sizeof what, "random file %d", i);
        compare_all(tmp("r.fa"), SWGPU_AUTO, what);
        /* the same with errors put in: the first one in the file is named */
        for (int j = 0; j < 3 && n > 10; j++) {
            size_t at = (size_t)rnd(&s, n), k = 0;
            static const char *const bad[] = {"\x01", "\r", "\xff", "\n>\n", "\n> x\n", "\n@r\nAC\n+\nII\n",
                                              "\n\x7f", "\n#x\n"};
            const char *b = bad[rnd(&s, 8)];
            size_t bl = strlen(b);
            memmove(buf + at + bl, buf + at, n - at);
            memcpy(buf + at, b, bl);
            n += bl;
            tl_spit(tmp("r.fa"), buf, n);
            snprintf(what, sizeof what, "random file %d, damage %d (%02x at %zu)", i, j, (unsigned char)b[0], at);
            compare_all(tmp("r.fa"), SWGPU_AUTO, what);
            (void)k;
        }
    }
    free(buf);
}

/* a read limit: the reading that would reach it is fasta.c's, which names
 * the line */
static void test_limit(void)
{
    enum { CAP = 1 << 20 };
    char *buf = malloc(CAP);
    uint64_t s = 12345;
    size_t n = random_fasta(&s, buf, CAP, 400, 0);
    tl_spit(tmp("r.fa"), buf, n);
    swgpu__set_read_limit(64 << 10);
    compare_all(tmp("r.fa"), SWGPU_AUTO, "read limit 64K");
    swgpu__set_read_limit(0);
    free(buf);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/swgpu_test_makedb.XXXXXX");
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    swgpu_set_logger(logger, NULL, SWGPU_LOG_WARN);
    test_fixtures();
    test_random();
    test_limit();
    const char *names[] = {"ref.db", "new.db", "mem.db", "r.fa"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) unlink(tmp(names[i]));
    DIR *d = opendir(tmpdir);
    struct dirent *e;
    int left = 0;
    while (d && (e = readdir(d)))
        if (e->d_name[0] != '.') left++;
    if (d) closedir(d);
    CHECK(left == 0, "%d files left in %s (temporary files not removed)", left, tmpdir);
    rmdir(tmpdir);
    return tap_done();
}
