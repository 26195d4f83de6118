/*
 * io/dbbuild.c - opening a database (swgpu_db_open: which reader a file
 * goes to) and makedb (swgpu_makedb); a plain FASTA file built on several
 * threads.
 *
 * A plain FASTA file (fastapar.c) is built in one mapping laid out as the
 * makedb file (db.c): anonymous memory, or for swgpu_makedb the new file
 * itself, so that nothing is copied to be written.  After pass 1 the sizes
 * are known: the lengths go to the name_off section (as scratch), a stable
 * counting sort on 16-bit digits (one pass below 65,536 residues) orders
 * them into orig (rank as the other buffer), then off, rank and name_off
 * are filled and pass 2 puts names and residues in place.  The file is
 * byte for byte the one swgpu_db_write() writes of the database fasta.c
 * and swgpu_db_from_seqset() make; a gzip, FASTQ or streamed input goes
 * that way (one thread).
 */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE
#include "io/io.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

static atomic_uint tmp_serial; /* swgpu_makedb's temporary names */

/* ------------------------------------------------------------ sorting */

enum { DIGIT = 16, BUCKETS = 1 << DIGIT, SORT_MAXT = 64 };

typedef struct {
    const uint64_t *len;   /* keys, database order */
    const uint32_t *src;   /* the order so far (NULL: 0 .. n-1) */
    uint32_t *dst;
    uint64_t n, total;
    int shift;
    size_t T;
    uint32_t *cnt;         /* T x BUCKETS counts, then places */
    uint64_t *sum;         /* off: each range's residues */
    uint64_t *off;
    uint32_t *rank;
} sort_t;

static void sort_count(void *ctx, size_t t)
{
    sort_t *S = ctx;
    uint32_t *c = S->cnt + t * BUCKETS;
    uint64_t a = S->n * t / S->T, b = S->n * (t + 1) / S->T;
    memset(c, 0, BUCKETS * sizeof *c);
    for (uint64_t k = a; k < b; k++)
        c[(S->len[S->src ? S->src[k] : k] >> S->shift) & (BUCKETS - 1)]++;
}

static void sort_place(void *ctx, size_t t)
{
    sort_t *S = ctx;
    uint32_t *c = S->cnt + t * BUCKETS;
    uint64_t a = S->n * t / S->T, b = S->n * (t + 1) / S->T;
    for (uint64_t k = a; k < b; k++) {
        uint32_t i = S->src ? S->src[k] : (uint32_t)k;
        S->dst[c[(S->len[i] >> S->shift) & (BUCKETS - 1)]++] = i;
    }
}

static void off_sum(void *ctx, size_t t)
{
    sort_t *S = ctx;
    uint64_t a = S->n * t / S->T, b = S->n * (t + 1) / S->T, s = 0;
    for (uint64_t k = a; k < b; k++) s += S->len[S->dst[k]];
    S->sum[t] = s;
}

static void off_fill(void *ctx, size_t t)
{
    sort_t *S = ctx;
    uint64_t a = S->n * t / S->T, b = S->n * (t + 1) / S->T, s = S->sum[t];
    for (uint64_t k = a; k < b; k++) {
        S->off[k] = s;
        s += S->len[S->dst[k]];
        S->rank[S->dst[k]] = (uint32_t)k;
    }
}

/* orig: the indices sorted by (len, index); off and rank from it.  len (n
 * entries) is not in off, orig or rank.  -1: no memory */
static int sort_db(const uint64_t *len, uint64_t n, uint64_t max_len, int threads,
                   uint64_t *off, uint32_t *orig, uint32_t *rank)
{
    size_t T = threads > 0 ? (size_t)threads : (size_t)swgpu__ncores();
    if (T > SORT_MAXT) T = SORT_MAXT;
    if (n < ((uint64_t)1 << 16)) T = 1;
    uint64_t sum[SORT_MAXT];
    sort_t S = {len, NULL, NULL, n, 0, 0, T, malloc(T * BUCKETS * sizeof(uint32_t)), sum, off, rank};
    if (!S.cnt) return -1;
    int passes = 1;
    while (passes < 4 && (max_len >> (DIGIT * passes))) passes++;
    for (int p = 0; p < passes; p++) {
        S.shift = DIGIT * p;
        S.dst = (passes - p) % 2 ? orig : rank; /* the last pass writes orig */
        swgpu__par_for(T, (int)T, sort_count, &S);
        uint32_t pos = 0;
        for (size_t key = 0; key < BUCKETS; key++)
            for (size_t t = 0; t < T; t++) {
                uint32_t c = S.cnt[t * BUCKETS + key];
                S.cnt[t * BUCKETS + key] = pos;
                pos += c;
            }
        swgpu__par_for(T, (int)T, sort_place, &S);
        S.src = S.dst;
    }
    free(S.cnt);
    swgpu__par_for(T, (int)T, off_sum, &S);
    uint64_t s = 0;
    for (size_t t = 0; t < T; t++) {
        uint64_t v = sum[t];
        sum[t] = s;
        s += v;
    }
    swgpu__par_for(T, (int)T, off_fill, &S);
    off[n] = s;
    return 0;
}

/* ------------------------------------------------------------ building */

typedef struct {
    const char *out_path;  /* the makedb file to write, or NULL: memory */
    char *tmp;
    int fd;
    unsigned char *map;
    uint64_t size;
} target_t;

static void target_abort(target_t *t)
{
    if (t->map) munmap(t->map, (size_t)t->size);
    if (t->tmp) unlink(t->tmp);
    free(t->tmp);
    if (t->fd >= 0) close(t->fd);
    t->map = NULL;
    t->tmp = NULL;
    t->fd = -1;
}

/* the mapping of size bytes: the new file (its temporary name) or memory */
static int target_open(target_t *t, uint64_t size)
{
    t->size = size;
    if (!t->out_path) {
        void *m = mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED)
            return swgpu__fail(SWGPU_ENOMEM, "database: out of memory (%" PRIu64 " bytes)", size);
#ifdef MADV_HUGEPAGE
        madvise(m, (size_t)size, MADV_HUGEPAGE);
#endif
        t->map = m;
        return 0;
    }
    size_t tlen = strlen(t->out_path) + 48;
    if (!(t->tmp = malloc(tlen)))
        return swgpu__fail(SWGPU_ENOMEM, "database %s: out of memory", t->out_path);
    snprintf(t->tmp, tlen, "%s.tmp.%ld.m%u", t->out_path, (long)getpid(), atomic_fetch_add(&tmp_serial, 1u));
    t->fd = open(t->tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (t->fd < 0)
        return swgpu__fail(SWGPU_EIO, "database %s: cannot create %s: %s", t->out_path, t->tmp, strerror(errno));
    /* the blocks reserved now: a full disk is an error here, not a SIGBUS
     * when a page of the mapping is first written */
    int e = ftruncate(t->fd, (off_t)size) ? errno : posix_fallocate(t->fd, 0, (off_t)size);
    if (e == ENOSPC || e == EDQUOT || e == EFBIG || e == EIO)
        return swgpu__fail(SWGPU_EIO, "database %s: write failed: %s", t->tmp, strerror(e));
    void *m = mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE, MAP_SHARED, t->fd, 0);
    if (m == MAP_FAILED) { /* a file system without shared mappings: built in memory, then written */
        target_abort(t);
        t->out_path = NULL;
        return target_open(t, size);
    }
    t->map = m;
    return 0;
}

/* the file written: synced, renamed over out_path; its identity in *id */
static int target_commit(target_t *t, swgpu__file_id_t *id)
{
    struct stat st;
    if (!t->out_path) return 0;
    if (fsync(t->fd) != 0 || fstat(t->fd, &st) != 0)
        return swgpu__fail(SWGPU_EIO, "database %s: write failed: %s", t->tmp, strerror(errno));
    *id = (swgpu__file_id_t){(uint64_t)st.st_dev, (uint64_t)st.st_ino};
    if (rename(t->tmp, t->out_path) != 0)
        return swgpu__fail(SWGPU_EIO, "database %s: cannot rename %s: %s", t->out_path, t->tmp, strerror(errno));
    free(t->tmp);
    t->tmp = NULL;
    return 0;
}

/* The database of the plain FASTA file fd (not consumed) named path, of
 * size bytes, laid out in t; 1: the file is for fasta.c */
static int build(int fd, const char *path, uint64_t size, swgpu_alphabet_t alphabet,
                 int threads, target_t *t, swgpu_db_t **out, swgpu_read_info_t *info)
{
    swgpu__fpar_t *F = NULL;
    swgpu__fpar_sum_t sum;
    swgpu__db_sec_t sec[SWGPU__NSEC];
    swgpu_db_t *db = NULL;
    double t0 = swgpu__now(), t1, t2, t3, t4;
    int rc = swgpu__fpar_scan(fd, path, size, alphabet, threads, &F, &sum);
    if (rc) return rc;
    t1 = swgpu__now();
    if ((rc = swgpu__check_db_seqs(sum.n, "file", path))) goto fail;
    uint64_t fsize = swgpu__db_layout(sum.n, sum.residues, sum.names, sec);
    if (!(db = calloc(1, sizeof *db))) {
        rc = swgpu__fail(SWGPU_ENOMEM, "database: out of memory");
        goto fail;
    }
    if ((rc = target_open(t, fsize)) < 0) goto fail;
    unsigned char *m = t->map;
    uint64_t *off = (uint64_t *)(m + sec[SWGPU__SEC_OFF].off);
    uint64_t *name_off = (uint64_t *)(m + sec[SWGPU__SEC_NAME_OFF].off);
    uint32_t *orig = (uint32_t *)(m + sec[SWGPU__SEC_ORIG].off);
    uint32_t *rank = (uint32_t *)(m + sec[SWGPU__SEC_RANK].off);
    swgpu__fpar_lengths(F, name_off);
    if (sort_db(name_off, sum.n, sum.max_len, threads, off, orig, rank)) {
        rc = swgpu__fail(SWGPU_ENOMEM, "database: out of memory");
        goto fail;
    }
    swgpu__fpar_name_offsets(F, name_off);
    t2 = swgpu__now();
    if ((rc = swgpu__fpar_fill(F, (char *)(m + sec[SWGPU__SEC_NAMES].off), m + sec[SWGPU__SEC_RES].off,
                               off, rank, info)) < 0)
        goto fail;
    swgpu__fpar_free(F);
    F = NULL;
    db->alphabet = sum.alphabet;
    db->n = sum.n;
    db->total_res = sum.residues;
    db->max_len = sum.max_len;
    t3 = swgpu__now();
    uint8_t bad;
    uint32_t crc = swgpu__crc_parallel(m + SWGPU__DB_HDR, fsize - SWGPU__DB_HDR, NULL, 0, 0, &bad, threads);
    swgpu__db_header(m, db, sec, fsize, crc);
    swgpu__file_id_t id;
    t4 = swgpu__now();
    if ((rc = target_commit(t, &id)) < 0) goto fail;
    swgpu__log(SWGPU_LOG_INFO, "file %s: read on %d threads in %.2f s: checked %.2f s, laid out "
               "and sorted %.2f s, copied %.2f s, checksum %.2f s, %s %.2f s", path,
               threads > 0 ? threads : swgpu__ncores(), swgpu__now() - t0, t1 - t0, t2 - t1,
               t3 - t2, t4 - t3, t->out_path ? "synced" : "done", swgpu__now() - t4);
    if (t->out_path) {
        if (!(db->src = malloc(sizeof *db->src))) {
            rc = swgpu__fail(SWGPU_ENOMEM, "database: out of memory");
            goto fail;
        }
        db->src[0] = id;
        db->n_src = 1;
        close(t->fd);
        t->fd = -1;
    }
    mprotect(m, (size_t)fsize, PROT_READ);
    db->res = m + sec[SWGPU__SEC_RES].off;
    db->off = off;
    db->orig = orig;
    db->rank = rank;
    db->names = (const char *)(m + sec[SWGPU__SEC_NAMES].off);
    db->name_off = name_off;
    db->map = m;
    db->map_len = (size_t)fsize;
    t->map = NULL;
    info->n_records = sum.n;
    info->n_empty = sum.n_empty;
    info->n_residues = sum.residues;
    info->max_len = sum.max_len;
    *out = db;
    return 0;

fail:
    swgpu__fpar_free(F);
    if (db) free(db->src);
    free(db);
    target_abort(t);
    return rc;
}

/* ------------------------------------------------------------ opening */

/* fd (a regular file, closed here unless 1 is returned) built as a plain
 * FASTA file on `threads` threads; 1: it is for fasta.c (fd left open) */
static int build_plain(int fd, const char *path, uint64_t size, swgpu_alphabet_t alphabet,
                       int threads, const char *out_path, swgpu_db_t **out,
                       swgpu_read_info_t *info, int *written)
{
    /* built in memory (huge pages), then written: twice as fast as the
     * new file mapped (a fault per 4 KiB page) on a 2-core VM;
     * SWGPU_MAKEDB_MAPPED=1 lays it out in the file (to compare) */
    const char *mapped = getenv("SWGPU_MAKEDB_MAPPED");
    target_t t = {mapped && !strcmp(mapped, "1") ? out_path : NULL, NULL, -1, NULL, 0};
    int rc = build(fd, path, size, alphabet, threads, &t, out, info);
    if (rc == 1) return 1;
    close(fd);
    if (rc < 0) memset(info, 0, sizeof *info);
    else *written = t.out_path != NULL;
    return rc;
}

/*
 * A stream (a pipe: standard input, <(...); a socket, a terminal) is read to
 * its end into an anonymous memory file (memfd), which is then read as a
 * regular file is: a plain FASTA stream on `threads` threads, the database
 * the same as the file's.  The memory file holds the stream's bytes, at most
 * the read limit (swgpu__get_read_limit), until the database is built.
 * Anything else in it (gzip, FASTQ, a database, binary data) is read as
 * before, on one thread, with the stream's messages; so is the stream
 * itself where no memory file can be made.  fd is consumed.
 */
static int open_stream(int fd, const char *path, swgpu_alphabet_t alphabet, int threads,
                       const char *out_path, swgpu_db_t **out, swgpu_read_info_t *info,
                       int *written)
{
    uint64_t limit, size = 0;
    int rc = swgpu__get_read_limit(&limit);
    if (rc < 0) {
        close(fd);
        return rc;
    }
    int mfd = memfd_create("swgpu-stream", MFD_CLOEXEC);
    if (mfd < 0) return swgpu__db_from_stream(fd, path, alphabet, out, info);
    enum { PIECE = 4 << 20 };
    char *buf = malloc(PIECE);
    if (!buf) {
        close(fd);
        close(mfd);
        return swgpu__fail(SWGPU_ENOMEM, "file %s: out of memory", path);
    }
    for (;;) {
        ssize_t got = read(fd, buf, PIECE);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) {
            rc = swgpu__fail(SWGPU_EIO, "file %s: %s", path, strerror(errno));
            break;
        }
        if (got == 0) break;
        if (size + (uint64_t)got > limit) {
            rc = swgpu__fail(SWGPU_EBUDGET, "file %s: more than %" PRIu64 " bytes read from the "
                             "stream (the limit for reading: SWGPU_READ_LIMIT, by default half "
                             "of the physical memory)", path, limit);
            break;
        }
        for (ssize_t done = 0; done < got;) {
            ssize_t w = write(mfd, buf + done, (size_t)(got - done));
            if (w < 0 && errno == EINTR) continue;
            if (w <= 0) {
                rc = swgpu__fail(errno == ENOSPC || errno == ENOMEM || errno == EFBIG
                                     ? SWGPU_ENOMEM : SWGPU_EIO,
                                 "file %s: no memory for the stream after %" PRIu64 " bytes: %s",
                                 path, size, w < 0 ? strerror(errno) : "short write");
                break;
            }
            done += w;
            size += (uint64_t)w;
        }
        if (rc) break;
    }
    free(buf);
    close(fd);
    if (rc) {
        close(mfd);
        return rc;
    }
    unsigned char head[8];
    ssize_t got = pread(mfd, head, sizeof head, 0);
    int plain = got > 0 && !(got >= 8 && !memcmp(head, SWGPU__DB_MAGIC, 8)) &&
                !(swgpu__looks_binary(head, (size_t)got) && head[0] != '>' && head[0] != '@');
    if (plain && (rc = build_plain(mfd, path, size, alphabet, threads, out_path, out, info,
                                   written)) != 1)
        return rc;
    if (lseek(mfd, 0, SEEK_SET) != 0) {
        rc = swgpu__fail(SWGPU_EIO, "file %s: %s", path, strerror(errno));
        close(mfd);
        return rc;
    }
    /* read as the stream it was: its messages (a database or BLAST file
     * cannot come this way, an empty stream is empty) */
    return swgpu__db_from_stream(mfd, path, alphabet, out, info);
}

/* path opened as swgpu_db_open does; a plain FASTA file on `threads`
 * threads, laid out in out_path when it is not NULL (*written set) */
static int open_db(const char *path, swgpu_alphabet_t alphabet, int threads,
                   const char *out_path, swgpu_db_t **out, swgpu_read_info_t *info, int *written)
{
    unsigned char head[512];
    swgpu_read_info_t dummy;
    if (!info) info = &dummy;
    *out = NULL;
    memset(info, 0, sizeof *info);
    if (!path) return swgpu__fail(SWGPU_EINVAL, "db_open: no file name");
    char *found;
    int rc = swgpu__db_resolve(path, &found);
    if (rc || found) {
        if (found) rc = open_db(found, alphabet, threads, out_path, out, info, written);
        free(found);
        return rc;
    }
    if (swgpu__blastdb_probe(path)) return swgpu__db_open_blast(path, alphabet, out, info);
    int fd = swgpu__open_input(path);
    if (fd < 0) return fd;
    if (swgpu__fd_is_stream(fd)) return open_stream(fd, path, alphabet, threads, out_path, out, info, written);
    ssize_t got = pread(fd, head, sizeof head, 0);
    if (got < 0) {
        int e = errno;
        close(fd);
        return swgpu__fail(SWGPU_EIO, "file %s: %s", path, strerror(e));
    }
    if (got >= 8 && !memcmp(head, SWGPU__DB_MAGIC, 8)) return swgpu__db_open_file(fd, path, alphabet, out, info);
    close(fd);
    /* a file that starts as FASTA/FASTQ goes to the reader, which names the
     * line and the byte of anything binary in it */
    if (swgpu__looks_binary(head, (size_t)got) && !(got > 0 && (head[0] == '>' || head[0] == '@')))
        return swgpu__fail(SWGPU_EDB, "file %s: neither a swgpu database (bad magic) nor FASTA/FASTQ", path);
    int fd2 = swgpu__open_input(path);
    if (fd2 < 0) return fd2;
    struct stat st;
    rc = 1;
    if (fstat(fd2, &st) == 0 && S_ISREG(st.st_mode) &&
        (rc = build_plain(fd2, path, (uint64_t)st.st_size, alphabet, threads, out_path, out, info,
                          written)) != 1)
        return rc;
    return swgpu__db_read_fasta(fd2, path, alphabet, out, info);
}

int swgpu_db_open(const char *path, swgpu_alphabet_t alphabet, swgpu_db_t **out, swgpu_read_info_t *info)
{
    int written = 0;
    return open_db(path, alphabet, 0, NULL, out, info, &written);
}

int swgpu_db_open_threads(const char *path, swgpu_alphabet_t alphabet, int threads,
                          swgpu_db_t **out, swgpu_read_info_t *info)
{
    int written = 0;
    if (!out) return swgpu__fail(SWGPU_EINVAL, "db_open: NULL result pointer");
    return open_db(path, alphabet, threads, NULL, out, info, &written);
}

int swgpu_makedb(const char *in, const char *out_path, swgpu_alphabet_t alphabet, int threads,
                 swgpu_db_t **out, swgpu_read_info_t *info)
{
    swgpu_db_t *db = NULL;
    int written = 0, rc;
    if (out) *out = NULL;
    if (!in || !out_path) return swgpu__fail(SWGPU_EINVAL, "makedb: NULL argument");
    if (!swgpu__host_is_le())
        return swgpu__fail(SWGPU_EINVAL, "database %s: big-endian hosts are not supported", out_path);
    rc = open_db(in, alphabet, threads, out_path, &db, info, &written);
    if (!rc && !written) rc = swgpu_db_write(db, out_path);
    if (rc || !out) swgpu_db_destroy(db);
    else *out = db;
    if (rc && info) memset(info, 0, sizeof *info);
    return rc;
}
