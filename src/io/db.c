/*
 * io/db.c - the sequence database: built in memory from a sequence set, or
 * written once by makedb and memory-mapped on open (its parts: dbpart.c);
 * swgpu_db_open's choice of reader; the accessors.
 *
 * Sequences are sorted by ascending length, ties in database (input)
 * order, which is the order every engine scans; see struct swgpu_db in
 * io/io.h.  At least SWGPU__DB_PAD zero bytes follow the last residue, in memory
 * and in the file, so vector and GPU loaders may read a little past the end.
 *
 * File format, version 1 (all integers little-endian):
 *
 *   offset  size  field
 *        0     8  magic "SWGPU_DB"
 *        8     4  format version (1)
 *       12     4  alphabet (1 protein, 2 dna)
 *       16     8  n, number of sequences (1 .. 2^32-1)
 *       24     8  total residues
 *       32     8  longest sequence
 *       40     8  file size in bytes
 *       48    96  six sections, each {u64 offset, u64 size in bytes}:
 *                 off (u64, n+1), name_off (u64, n), orig (u32, n),
 *                 rank (u32, n), names ("id\0desc\0" per sequence),
 *                 res (u8, total residues)
 *      144     4  CRC-32 (zlib) of bytes [160, file size)
 *      148     4  flags (0)
 *      152     4  CRC-32 of bytes [0, 152)
 *      156     4  reserved (0)
 *      160        sections, each at a multiple of 64 bytes, zero padding
 *                 between them; at least 64 zero bytes after res.
 *
 * The arrays in the file are exactly struct swgpu_db's arrays, so opening
 * is a zero-copy read-only mmap plus validation (checksums, sizes, offsets,
 * the sort order and the permutation).  Only little-endian hosts are
 * supported.
 */
#define _POSIX_C_SOURCE 200809L
#include "io/io.h"

#include <pthread.h>
#include <stdatomic.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define DB_VERSION 1u
#define DB_ALIGN 64u

static atomic_uint tmp_serial; /* swgpu_db_write's temporary names */
static const char *const sec_name[SWGPU__NSEC] = {"off", "name_off", "orig", "rank", "names", "res"};


int swgpu__host_is_le(void)
{
    const uint16_t x = 1;
    return *(const uint8_t *)&x == 1;
}

static uint64_t align_up(uint64_t x)
{
    return (x + DB_ALIGN - 1) & ~(uint64_t)(DB_ALIGN - 1);
}

/* ------------------------------------------------------------ building */

typedef struct {
    uint64_t len;
    uint32_t idx;
} len_idx_t;

static int by_len_then_index(const void *a, const void *b)
{
    const len_idx_t *x = a, *y = b;
    if (x->len != y->len) return x->len < y->len ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

int swgpu_db_from_seqset(const swgpu_seqset_t *set, swgpu_db_t **out)
{
    swgpu_db_t *db = NULL;
    len_idx_t *order = NULL;
    int rc;
    *out = NULL;
    if (!set) return swgpu__fail(SWGPU_EINVAL, "db_from_seqset: no sequence set");
    uint64_t n = set->n, total = set->off[set->n];
    if (n == 0) return swgpu__fail(SWGPU_EEMPTY, "database: no sequences");
    if ((rc = swgpu__check_db_seqs(n, "database", NULL))) return rc;

    db = calloc(1, sizeof *db);
    order = malloc(n * sizeof *order);
    uint8_t *res = malloc(total + SWGPU__DB_PAD);
    uint64_t *off = malloc((n + 1) * sizeof *off);
    uint32_t *orig = malloc(n * sizeof *orig);
    uint32_t *rank = malloc(n * sizeof *rank);
    char *names = malloc(set->names_len + 1);
    uint64_t *name_off = malloc(n * sizeof *name_off);
    if (db) {
        db->owned[SWGPU__OWN_RES] = res;
        db->owned[SWGPU__OWN_OFF] = off;
        db->owned[SWGPU__OWN_ORIG] = orig;
        db->owned[SWGPU__OWN_RANK] = rank;
        db->owned[SWGPU__OWN_NAMES] = names;
        db->owned[SWGPU__OWN_NAME_OFF] = name_off;
    }
    if (!db || !order || !res || !off || !orig || !rank || !names || !name_off) {
        if (!db) { /* nothing owns the arrays yet */
            free(res);
            free(off);
            free(orig);
            free(rank);
            free(names);
            free(name_off);
        }
        rc = swgpu__fail(SWGPU_ENOMEM, "database: out of memory (%" PRIu64 " sequences, %" PRIu64 " residues)", n, total);
        goto fail;
    }
    for (uint64_t i = 0; i < n; i++) {
        order[i].len = set->off[i + 1] - set->off[i];
        order[i].idx = (uint32_t)i;
    }
    qsort(order, n, sizeof *order, by_len_then_index); /* (len, index) keys: a stable order */
    off[0] = 0;
    for (uint64_t k = 0; k < n; k++) {
        uint32_t i = order[k].idx;
        if (order[k].len) /* set->res is NULL while every sequence is empty */
            memcpy(res + off[k], set->res + set->off[i], order[k].len);
        off[k + 1] = off[k] + order[k].len;
        orig[k] = i;
        rank[i] = (uint32_t)k;
    }
    memset(res + total, 0, SWGPU__DB_PAD);
    memcpy(names, set->names, set->names_len);
    names[set->names_len] = 0;
    for (uint64_t i = 0; i < n; i++) name_off[i] = set->name_off[i];

    db->alphabet = set->alphabet;
    db->n = n;
    db->total_res = total;
    db->max_len = order[n - 1].len;
    db->res = res;
    db->off = off;
    db->orig = orig;
    db->rank = rank;
    db->names = names;
    db->name_off = name_off;
    db->blast_info = set->blast_info;
    free(order);
    *out = db;
    return SWGPU_OK;

fail:
    free(order);
    swgpu_db_destroy(db);
    return rc;
}

/* ------------------------------------------------------------- writing */


static void put_u32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static void put_u64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static uint32_t get_u32(const unsigned char *p)
{
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}

static uint64_t get_u64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}

static uint32_t crc_update(uint32_t crc, const void *data, uint64_t len)
{
    const unsigned char *p = data;
    while (len) {
        uInt chunk = len > (1u << 30) ? (1u << 30) : (uInt)len;
        crc = (uint32_t)crc32(crc, p, chunk);
        p += chunk;
        len -= chunk;
    }
    return crc;
}

/* The CRC of a large mapped file on all cores: pieces in parallel, joined
 * with zlib's crc32_combine (a 250 MB database took 0.15 s on one core). */
typedef struct {
    const unsigned char *p;
    uint64_t len;
    uint32_t crc;
    const unsigned char *res, *res_end; /* residue codes to check, where in [p, p+len) */
    uint8_t lim, bad;
} crc_piece_t;

/* the largest byte of [a, a + n): blocks of 64 bytes, a loop of fixed
 * length that the compiler vectorizes at -O2 (a byte-by-byte test of each
 * code ran at half the CRC's speed, 2/3 of opening a database) */
static uint8_t max_byte(const unsigned char *a, uint64_t n)
{
    uint64_t i = 0;
    uint8_t mx = 0;
    for (; i + 64 <= n; i += 64) {
        uint8_t m = 0;
        for (int k = 0; k < 64; k++)
            m = a[i + k] > m ? a[i + k] : m;
        mx = m > mx ? m : mx;
    }
    for (; i < n; i++)
        mx = a[i] > mx ? a[i] : mx;
    return mx;
}

/* the piece's CRC and code check, 256 kB at a time (each block read from
 * memory once) */
static void *crc_piece(void *arg)
{
    enum { BLK = 256 << 10 };
    crc_piece_t *c = arg;
    uint32_t crc = (uint32_t)crc32(0, Z_NULL, 0);
    uint8_t mx = 0;
    for (uint64_t o = 0; o < c->len; o += BLK) {
        const unsigned char *p = c->p + o;
        const uint64_t len = c->len - o < BLK ? c->len - o : BLK;
        crc = crc_update(crc, p, len);
        const unsigned char *a = p > c->res ? p : c->res;
        const unsigned char *b = p + len < c->res_end ? p + len : c->res_end;
        if (a < b) {
            const uint8_t m = max_byte(a, (uint64_t)(b - a));
            mx = m > mx ? m : mx;
        }
    }
    c->crc = crc;
    c->bad = c->res && mx >= c->lim;
    return NULL;
}

/* also *bad = 1 when a byte of [res, res + nres) is >= lim; on `threads`
 * threads (0: all cores) */
uint32_t swgpu__crc_parallel(const unsigned char *p, uint64_t len, const unsigned char *res,
                             uint64_t nres, uint8_t lim, uint8_t *bad, int threads)
{
    enum { MAXT = 32 };
    int T = threads > 0 ? threads : swgpu__ncores();
    if (T > MAXT)
        T = MAXT;
    if (len < ((uint64_t)8 << 20) || T < 2)
        T = 1;
    crc_piece_t pc[MAXT];
    pthread_t th[MAXT];
    int started[MAXT] = {0};
    for (int t = 0; t < T; t++) {
        uint64_t a = len * (uint64_t)t / (uint64_t)T, b = len * (uint64_t)(t + 1) / (uint64_t)T;
        pc[t] = (crc_piece_t){p + a, b - a, 0, res, res ? res + nres : NULL, lim, 0};
        if (t > 0)
            started[t] = pthread_create(&th[t], NULL, crc_piece, &pc[t]) == 0;
    }
    crc_piece(&pc[0]);
    uint32_t crc = pc[0].crc;
    *bad = pc[0].bad;
    for (int t = 1; t < T; t++) {
        if (started[t])
            pthread_join(th[t], NULL);
        else
            crc_piece(&pc[t]);
        crc = (uint32_t)crc32_combine(crc, pc[t].crc, (z_off_t)pc[t].len);
        *bad |= pc[t].bad;
    }
    return crc;
}

/* section layout of a file of n sequences, total residues and names_size
 * bytes of names: offsets and sizes; returns the file size */
uint64_t swgpu__db_layout(uint64_t n, uint64_t total, uint64_t names_size,
                          swgpu__db_sec_t sec[SWGPU__NSEC])
{
    uint64_t size[SWGPU__NSEC];
    size[SWGPU__SEC_OFF] = (n + 1) * 8;
    size[SWGPU__SEC_NAME_OFF] = n * 8;
    size[SWGPU__SEC_ORIG] = n * 4;
    size[SWGPU__SEC_RANK] = n * 4;
    size[SWGPU__SEC_NAMES] = names_size;
    size[SWGPU__SEC_RES] = total;
    uint64_t pos = SWGPU__DB_HDR;
    for (int i = 0; i < SWGPU__NSEC; i++) {
        pos = align_up(pos);
        sec[i].off = pos;
        sec[i].size = size[i];
        pos += size[i];
    }
    return align_up(pos + SWGPU__DB_PAD);
}

void swgpu__db_header(unsigned char h[SWGPU__DB_HDR], const swgpu_db_t *db,
                      const swgpu__db_sec_t sec[SWGPU__NSEC], uint64_t file_size,
                      uint32_t payload_crc)
{
    memset(h, 0, SWGPU__DB_HDR);
    memcpy(h, SWGPU__DB_MAGIC, 8);
    put_u32(h + 8, DB_VERSION);
    put_u32(h + 12, (uint32_t)db->alphabet);
    put_u64(h + 16, db->n);
    put_u64(h + 24, db->total_res);
    put_u64(h + 32, db->max_len);
    put_u64(h + 40, file_size);
    for (int i = 0; i < SWGPU__NSEC; i++) {
        put_u64(h + 48 + 16 * i, sec[i].off);
        put_u64(h + 56 + 16 * i, sec[i].size);
    }
    put_u32(h + 144, payload_crc);
    put_u32(h + 152, crc_update((uint32_t)crc32(0, Z_NULL, 0), h, 152));
}

/* bytes of the names section: through the end of the last pair */
static uint64_t names_size(const swgpu_db_t *db)
{
    const char *p = db->names + db->name_off[db->n - 1];
    p += strlen(p) + 1;
    p += strlen(p) + 1;
    return (uint64_t)(p - db->names);
}

/* a BLAST database's names less their info blocks (makedb files hold
 * "id\0desc\0" only): *names and *name_off malloc'ed, *size bytes */
static int compact_names(const swgpu_db_t *db, char **names, uint64_t **name_off, uint64_t *size)
{
    uint64_t total = 0;
    for (uint64_t i = 0; i < db->n; i++) {
        const char *id = db->names + db->name_off[i], *desc = id + strlen(id) + 1;
        total += strlen(id) + strlen(desc) + 2;
    }
    *names = malloc(total ? total : 1);
    *name_off = malloc(db->n * sizeof **name_off);
    if (!*names || !*name_off) {
        free(*names);
        free(*name_off);
        *names = NULL;
        *name_off = NULL;
        return swgpu__fail(SWGPU_ENOMEM, "database: out of memory for the names (%" PRIu64 " bytes)", total);
    }
    uint64_t pos = 0;
    for (uint64_t i = 0; i < db->n; i++) {
        const char *id = db->names + db->name_off[i], *desc = id + strlen(id) + 1;
        size_t n = strlen(id) + strlen(desc) + 2;
        (*name_off)[i] = pos;
        memcpy(*names + pos, id, n);
        pos += n;
    }
    *size = total;
    return SWGPU_OK;
}

int swgpu_db_write(const swgpu_db_t *db, const char *path)
{
    struct stat ps;
    if (db && path && db->n_src && stat(path, &ps) == 0)
        for (size_t i = 0; i < db->n_src; i++)
            if ((uint64_t)ps.st_dev == db->src[i].dev && (uint64_t)ps.st_ino == db->src[i].ino)
                return swgpu__fail(SWGPU_EINVAL, "database %s: is %s this database was read "
                                                 "from; refusing to replace it",
                                   path, db->map ? "the file" : "a file");
    static const unsigned char zeros[DB_ALIGN + SWGPU__DB_PAD];
    swgpu__db_sec_t sec[SWGPU__NSEC];
    unsigned char h[SWGPU__DB_HDR];
    char *tmp = NULL;
    FILE *fp = NULL;
    int rc = SWGPU_OK;

    if (!db || !path) return swgpu__fail(SWGPU_EINVAL, "db_write: NULL argument");
    if (db->whole_n) return swgpu__fail(SWGPU_EINVAL, "database %s: a part of a database cannot be written", path);
    if (!swgpu__host_is_le()) return swgpu__fail(SWGPU_EINVAL, "database %s: big-endian hosts are not supported", path);
    char *cnames = NULL;
    uint64_t *cname_off = NULL, nsize = 0;
    if (db->blast_info) {
        if ((rc = compact_names(db, &cnames, &cname_off, &nsize)) < 0) return rc;
    } else {
        nsize = names_size(db);
    }
    uint64_t fsize = swgpu__db_layout(db->n, db->total_res, nsize, sec);
    const void *data[SWGPU__NSEC] = {db->off, cname_off ? cname_off : db->name_off, db->orig,
                                     db->rank, cnames ? cnames : db->names, db->res};

    /* payload checksum, zero padding included */
    uint32_t crc = (uint32_t)crc32(0, Z_NULL, 0);
    uint64_t pos = SWGPU__DB_HDR;
    for (int i = 0; i < SWGPU__NSEC; i++) {
        crc = crc_update(crc, zeros, sec[i].off - pos);
        crc = crc_update(crc, data[i], sec[i].size);
        pos = sec[i].off + sec[i].size;
    }
    crc = crc_update(crc, zeros, fsize - pos);
    swgpu__db_header(h, db, sec, fsize, crc);

    /* a temporary name of this call's own (threads may write the same path
     * at once: each file is complete, the last rename wins) */
    size_t tlen = strlen(path) + 48;
    tmp = malloc(tlen);
    if (!tmp) {
        free(cnames);
        free(cname_off);
        return swgpu__fail(SWGPU_ENOMEM, "database %s: out of memory", path);
    }
    snprintf(tmp, tlen, "%s.tmp.%ld.%u", path, (long)getpid(), atomic_fetch_add(&tmp_serial, 1u));
    int tfd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    fp = tfd >= 0 ? fdopen(tfd, "wb") : NULL;
    if (!fp) {
        if (tfd >= 0) close(tfd);
        rc = swgpu__fail(SWGPU_EIO, "database %s: cannot create %s: %s", path, tmp, strerror(errno));
        goto fail;
    }
    int ok = fwrite(h, 1, SWGPU__DB_HDR, fp) == SWGPU__DB_HDR;
    pos = SWGPU__DB_HDR;
    for (int i = 0; ok && i < SWGPU__NSEC; i++) {
        size_t gap = (size_t)(sec[i].off - pos);
        ok = fwrite(zeros, 1, gap, fp) == gap && fwrite(data[i], 1, (size_t)sec[i].size, fp) == sec[i].size;
        pos = sec[i].off + sec[i].size;
    }
    if (ok) ok = fwrite(zeros, 1, (size_t)(fsize - pos), fp) == fsize - pos;
    if (ok) ok = fflush(fp) == 0 && fsync(fileno(fp)) == 0;
    if (fclose(fp) != 0) ok = 0;
    fp = NULL;
    if (!ok) {
        rc = swgpu__fail(SWGPU_EIO, "database %s: write failed: %s", tmp, strerror(errno));
        goto fail;
    }
    if (rename(tmp, path) != 0) {
        rc = swgpu__fail(SWGPU_EIO, "database %s: cannot rename %s: %s", path, tmp, strerror(errno));
        goto fail;
    }
    free(tmp);
    free(cnames);
    free(cname_off);
    return SWGPU_OK;

fail:
    if (fp) fclose(fp);
    unlink(tmp);
    free(tmp);
    free(cnames);
    free(cname_off);
    return rc;
}

/* ------------------------------------------------------------- opening */

#define BAD(...) do { rc = swgpu__fail(SWGPU_EDB, __VA_ARGS__); goto fail; } while (0)

/* the checks of the first SWGPU__DB_HDR bytes h of a file of `size` bytes */
int swgpu__db_check_header(const unsigned char *h, uint64_t size, const char *path, swgpu__db_hdr_t *H)
{
    if (memcmp(h, SWGPU__DB_MAGIC, 8))
        return swgpu__fail(SWGPU_EDB, "database %s: not a swgpu database (bad magic)", path);
    uint32_t version = get_u32(h + 8);
    if (version != DB_VERSION)
        return swgpu__fail(SWGPU_EDB, "database %s: unsupported format version %" PRIu32
                           " (this build reads version %u); rebuild it with swgpu makedb",
                           path, version, DB_VERSION);
    if (get_u32(h + 152) != crc_update((uint32_t)crc32(0, Z_NULL, 0), h, 152))
        return swgpu__fail(SWGPU_EDB, "database %s: header checksum mismatch (corrupt file)", path);
    uint64_t fsize = get_u64(h + 40);
    if (fsize != size)
        return swgpu__fail(SWGPU_EDB, "database %s: %s (the header says %" PRIu64 " bytes, the file has %" PRIu64 ")",
                           path, size < fsize ? "truncated" : "unexpected data after the end", fsize, size);
    uint32_t alphabet = get_u32(h + 12);
    uint64_t n = get_u64(h + 16), total = get_u64(h + 24);
    if (alphabet != SWGPU_PROTEIN && alphabet != SWGPU_DNA)
        return swgpu__fail(SWGPU_EDB, "database %s: invalid alphabet %" PRIu32, path, alphabet);
    if (n == 0 || total > size)
        return swgpu__fail(SWGPU_EDB, "database %s: invalid counts (%" PRIu64 " sequences, %" PRIu64 " residues)",
                           path, n, total);
    if (n > swgpu__db_max_seqs()) return swgpu__check_db_seqs(n, "database", path);
    uint64_t want[SWGPU__NSEC] = {(n + 1) * 8, n * 8, n * 4, n * 4, 0, total};
    swgpu__db_sec_t *sec = H->sec;
    for (int i = 0; i < SWGPU__NSEC; i++) {
        sec[i].off = get_u64(h + 48 + 16 * i);
        sec[i].size = get_u64(h + 56 + 16 * i);
        if (sec[i].off % DB_ALIGN || sec[i].off < SWGPU__DB_HDR || sec[i].off > size || sec[i].size > size - sec[i].off)
            return swgpu__fail(SWGPU_EDB, "database %s: inconsistent offsets (section %s at %" PRIu64 ", %" PRIu64
                               " bytes, file %" PRIu64 " bytes)", path, sec_name[i], sec[i].off, sec[i].size, size);
        if (i != SWGPU__SEC_NAMES && sec[i].size != want[i])
            return swgpu__fail(SWGPU_EDB, "database %s: inconsistent offsets (section %s has %" PRIu64
                               " bytes, expected %" PRIu64 ")", path, sec_name[i], sec[i].size, want[i]);
        for (int j = 0; j < i; j++)
            if (sec[i].off < sec[j].off + sec[j].size && sec[j].off < sec[i].off + sec[i].size)
                return swgpu__fail(SWGPU_EDB, "database %s: inconsistent offsets (sections %s and %s overlap)",
                                   path, sec_name[j], sec_name[i]);
    }
    if (sec[SWGPU__SEC_RES].off + total + SWGPU__DB_PAD > size)
        return swgpu__fail(SWGPU_EDB, "database %s: inconsistent offsets (no padding after the residues)", path);
    if (sec[SWGPU__SEC_NAMES].size < 2 * n)
        return swgpu__fail(SWGPU_EDB, "database %s: inconsistent offsets (names section too small)", path);
    H->alphabet = alphabet;
    H->n = n;
    H->total = total;
    H->max_len = get_u64(h + 32);
    return SWGPU_OK;
}

int swgpu__db_file_size(int fd, const char *path, uint64_t *size, swgpu__file_id_t *id)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        return swgpu__fail(SWGPU_EIO, "database %s: %s", path, strerror(errno));
    *size = (uint64_t)st.st_size;
    *id = (swgpu__file_id_t){(uint64_t)st.st_dev, (uint64_t)st.st_ino};
    if (*size < SWGPU__DB_HDR)
        return swgpu__fail(SWGPU_EDB, "database %s: truncated (%" PRIu64 " bytes, the header alone has %u)",
                           path, *size, SWGPU__DB_HDR);
    if (!swgpu__host_is_le())
        return swgpu__fail(SWGPU_EDB, "database %s: big-endian hosts are not supported", path);
    return SWGPU_OK;
}

int swgpu__db_seq_bad(uint64_t n, const uint64_t *off, const uint32_t *orig,
                      const uint32_t *rank, uint64_t k)
{
    if (off[k + 1] < off[k] || (k && off[k + 1] - off[k] < off[k] - off[k - 1]))
        return SWGPU__SEQ_LEN;
    if (orig[k] >= n || rank[orig[k]] != k)
        return SWGPU__SEQ_PERM;
    if (k && off[k + 1] - off[k] == off[k] - off[k - 1] && orig[k] < orig[k - 1])
        return SWGPU__SEQ_TIE;
    return 0;
}

int swgpu__db_seq_fail(const char *path, int why, uint64_t k)
{
    return why == SWGPU__SEQ_LEN
               ? swgpu__fail(SWGPU_EDB, "database %s: sequence %" PRIu64 " out of length order",
                             path, k)
           : why == SWGPU__SEQ_PERM
               ? swgpu__fail(SWGPU_EDB, "database %s: invalid order permutation at %" PRIu64,
                             path, k)
               : swgpu__fail(SWGPU_EDB, "database %s: sequences of equal length out of database "
                             "order at %" PRIu64, path, k);
}

/* swgpu__db_check_index's checks of sequence k, each the one pass's test at
 * k (swgpu__par_first finds the first failing k): 0, or the problem */
enum { IDX_OK, IDX_NAME_OFF, IDX_NAME_END };
typedef struct {
    uint64_t n, nsize;
    const uint64_t *off, *name_off;
    const uint32_t *orig, *rank;
    const char *names;
} idx_check_t;

static int order_bad(void *arg, size_t i)
{
    const idx_check_t *c = arg;
    return swgpu__db_seq_bad(c->n, c->off, c->orig, c->rank, i);
}

uint64_t swgpu__db_names_end(const char *names, uint64_t nsize, uint64_t pos)
{
    for (int part = 0; part < 2; part++) {
        const char *p = pos < nsize ? memchr(names + pos, 0, nsize - pos) : NULL;
        if (!p)
            return UINT64_MAX;
        pos = (uint64_t)(p - names) + 1;
    }
    return pos;
}

/* sequence k's names where the one pass would read them: right after
 * sequence k-1's (where they end wherever no earlier sequence failed) */
static int names_bad(void *arg, size_t i)
{
    const idx_check_t *c = arg;
    const uint64_t k = i;
    const uint64_t pos = k ? swgpu__db_names_end(c->names, c->nsize, c->name_off[k - 1]) : 0;
    if (c->name_off[k] != pos)
        return IDX_NAME_OFF;
    if (swgpu__db_names_end(c->names, c->nsize, pos) == UINT64_MAX)
        return IDX_NAME_END;
    return IDX_OK;
}

int swgpu__db_check_index(const char *path, uint64_t n, uint64_t total, uint64_t max_len,
                          const uint64_t *off, const uint32_t *orig, const uint32_t *rank,
                          const uint64_t *name_off, const char *names, uint64_t nsize,
                          uint64_t blk, int threads)
{
    if (off[0] != 0 || off[n] != total)
        return swgpu__fail(SWGPU_EDB, "database %s: inconsistent offsets (residue offsets end at "
                           "%" PRIu64 ", expected %" PRIu64 ")", path, off[n], total);
    if (n == 0)
        return SWGPU_OK;
    idx_check_t c = {n, nsize, off, name_off, orig, rank, names};
    int why = 0;
    size_t at = swgpu__par_first((size_t)n, (size_t)blk, threads, order_bad, &c, &why);
    if (at == SIZE_MAX)
        return swgpu__fail(SWGPU_ENOMEM, "database %s: out of memory", path);
    if (at < n)
        return swgpu__db_seq_fail(path, why, at);
    if (off[n] - off[n - 1] != max_len)
        return swgpu__fail(SWGPU_EDB, "database %s: inconsistent longest sequence (%" PRIu64 ")",
                           path, max_len);
    at = swgpu__par_first((size_t)n, (size_t)blk, threads, names_bad, &c, &why);
    if (at == SIZE_MAX)
        return swgpu__fail(SWGPU_ENOMEM, "database %s: out of memory", path);
    if (at < n)
        return why == IDX_NAME_OFF ? swgpu__fail(SWGPU_EDB, "database %s: inconsistent offsets "
                                                 "(name of sequence %zu)", path, at)
                                   : swgpu__fail(SWGPU_EDB, "database %s: names section ends "
                                                 "inside sequence %zu", path, at);
    return SWGPU_OK;
}

/* map and validate a makedb file; fd is consumed */
static int db_map(int fd, const char *path, swgpu_db_t **out)
{
    swgpu_db_t *db = NULL;
    unsigned char *map = MAP_FAILED;
    swgpu__db_hdr_t H;
    swgpu__db_sec_t *sec = H.sec;
    int rc = SWGPU_OK;

    uint64_t size;
    swgpu__file_id_t fid;
    if ((rc = swgpu__db_file_size(fd, path, &size, &fid)) < 0)
        goto fail;
    map = mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED) {
        rc = swgpu__fail(SWGPU_EIO, "database %s: mmap failed: %s", path, strerror(errno));
        goto fail;
    }
    close(fd);
    fd = -1;
    if ((rc = swgpu__db_check_header(map, size, path, &H)))
        goto fail;
    uint32_t alphabet = H.alphabet;
    uint64_t n = H.n, total = H.total, max_len = H.max_len;
    uint8_t bad = 0, lim = (uint8_t)swgpu_alphabet_size((swgpu_alphabet_t)alphabet);
    uint32_t crc = swgpu__crc_parallel(map + SWGPU__DB_HDR, size - SWGPU__DB_HDR,
                                       map + sec[SWGPU__SEC_RES].off, total, lim, &bad, 0);
    if (crc != get_u32(map + 144))
        BAD("database %s: checksum mismatch (corrupt file)", path);

    /* the content: offsets, sort order, permutation, names, residue codes */
    const uint64_t *off = (const uint64_t *)(map + sec[SWGPU__SEC_OFF].off);
    const uint64_t *name_off = (const uint64_t *)(map + sec[SWGPU__SEC_NAME_OFF].off);
    const uint32_t *orig = (const uint32_t *)(map + sec[SWGPU__SEC_ORIG].off);
    const uint32_t *rank = (const uint32_t *)(map + sec[SWGPU__SEC_RANK].off);
    const char *names = (const char *)(map + sec[SWGPU__SEC_NAMES].off);
    const uint8_t *res = map + sec[SWGPU__SEC_RES].off;
    if ((rc = swgpu__db_check_index(path, n, total, max_len, off, orig, rank, name_off, names,
                                    sec[SWGPU__SEC_NAMES].size, (uint64_t)1 << 16, 0)))
        goto fail;
    if (bad) BAD("database %s: residue code out of range for the %s alphabet", path, swgpu_alphabet_name((swgpu_alphabet_t)alphabet));

    db = calloc(1, sizeof *db);
    if (db && !(db->src = malloc(sizeof *db->src))) {
        free(db);
        db = NULL;
    }
    if (!db) {
        rc = swgpu__fail(SWGPU_ENOMEM, "database %s: out of memory", path);
        goto fail;
    }
    db->alphabet = (swgpu_alphabet_t)alphabet;
    db->src[0] = fid;
    db->n_src = 1;
    db->n = n;
    db->total_res = total;
    db->max_len = max_len;
    db->res = res;
    db->off = off;
    db->orig = orig;
    db->rank = rank;
    db->names = names;
    db->name_off = name_off;
    db->map = map;
    db->map_len = (size_t)size;
    *out = db;
    return SWGPU_OK;

fail:
    if (map != MAP_FAILED) munmap(map, (size_t)size);
    if (fd >= 0) close(fd);
    return rc;
}

/* does the start of a file look like binary data (not text, not gzip)? */
int swgpu__looks_binary(const unsigned char *p, size_t n)
{
    if (n >= 2 && p[0] == 0x1f && p[1] == 0x8b) return 0;
    for (size_t i = 0; i < n; i++)
        if (p[i] < 0x20 && p[i] != '\t' && p[i] != '\n' && p[i] != '\r' && p[i] != '\v' && p[i] != '\f') return 1;
    return 0;
}

/* fd (consumed) named path read as FASTA/FASTQ (stream: a pipe, read once) */
static int read_fasta(int fd, const char *path, int stream, swgpu_alphabet_t alphabet,
                      swgpu_seqset_t **set, swgpu_read_info_t *info)
{
    swgpu_read_info_t dummy;
    int rc;
    if (!info) info = &dummy;
    memset(info, 0, sizeof *info);
    rc = swgpu__fasta_read_fd(fd, path, stream, alphabet, set, info);
    if (rc == 1) /* checked as FASTA above: it changed since */
        rc = swgpu__fail(SWGPU_EDB, "file %s: changed while it was read (now a swgpu database)", path);
    return rc;
}

/* Is fd a pipe, socket or terminal (read once, from its start, no seek)? */
int swgpu__fd_is_stream(int fd)
{
    struct stat st;
    return fstat(fd, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode) || S_ISSOCK(st.st_mode));
}

/* A FASTA/FASTQ database from a stream (-d <(zcat db.fa.gz), /dev/stdin):
 * read once to its end, built in memory; fd is consumed.  A makedb or
 * BLAST database cannot come this way (the reader says so). */
int swgpu__db_from_stream(int fd, const char *path, swgpu_alphabet_t alphabet, swgpu_db_t **out,
                          swgpu_read_info_t *info)
{
    swgpu_seqset_t *set = NULL;
    int own = dup(fd), rc;
    close(fd);
    rc = own < 0 ? swgpu__fail(SWGPU_EIO, "file %s: %s", path, strerror(errno))
                 : read_fasta(own, path, 1, alphabet, &set, info);
    if (!rc) rc = swgpu__check_db_seqs(set->n, "file", path);
    if (!rc) rc = swgpu_db_from_seqset(set, out);
    swgpu_seqset_destroy(set);
    if (rc && info) memset(info, 0, sizeof *info);
    return rc;
}

int swgpu__db_open_blast(const char *path, swgpu_alphabet_t alphabet, swgpu_db_t **out,
                         swgpu_read_info_t *info)
{
    swgpu__file_id_t *files = NULL;
    swgpu_seqset_t *set = NULL;
    size_t nfiles = 0;
    int rc = swgpu__blastdb_read(path, alphabet, &set, info, &files, &nfiles);
    if (!rc) rc = swgpu__check_db_seqs(set->n, "BLAST database", path);
    if (!rc) rc = swgpu_db_from_seqset(set, out);
    swgpu_seqset_destroy(set);
    if (rc) {
        free(files);
        if (info) memset(info, 0, sizeof *info);
        return rc;
    }
    (*out)->src = files;
    (*out)->n_src = nfiles;
    return SWGPU_OK;
}

int swgpu__db_open_file(int fd, const char *path, swgpu_alphabet_t alphabet, swgpu_db_t **out,
                        swgpu_read_info_t *info)
{
    swgpu_db_t *db = NULL;
    int rc = db_map(fd, path, &db);
    if (rc) return rc;
    if (alphabet != SWGPU_AUTO && alphabet != db->alphabet) {
        rc = swgpu__fail(SWGPU_EALPHABET, "database %s holds %s sequences, %s was asked for", path,
                         swgpu_alphabet_name(db->alphabet), swgpu_alphabet_name(alphabet));
        swgpu_db_destroy(db);
        return rc;
    }
    if (info) {
        info->n_records = db->n;
        info->n_residues = db->total_res;
        info->max_len = db->max_len;
    }
    *out = db;
    return SWGPU_OK;
}

int swgpu__db_read_fasta(int fd, const char *path, swgpu_alphabet_t alphabet, swgpu_db_t **out,
                         swgpu_read_info_t *info)
{
    swgpu_seqset_t *set = NULL;
    int rc = read_fasta(fd, path, 0, alphabet, &set, info);
    if (rc) return rc;
    rc = swgpu__check_db_seqs(set->n, "file", path);
    if (!rc) rc = swgpu_db_from_seqset(set, out);
    swgpu_seqset_destroy(set);
    return rc;
}

/* ------------------------------------------------------------ accessors */

size_t swgpu_db_size(const swgpu_db_t *db)
{
    return db ? (size_t)db->n : 0;
}

uint64_t swgpu_db_residues(const swgpu_db_t *db)
{
    return db ? db->total_res : 0;
}

uint64_t swgpu_db_max_len(const swgpu_db_t *db)
{
    return db ? db->max_len : 0;
}

swgpu_alphabet_t swgpu_db_alphabet(const swgpu_db_t *db)
{
    return db ? db->alphabet : SWGPU_AUTO;
}

int swgpu_db_get(const swgpu_db_t *db, size_t i, swgpu_seq_t *out)
{
    if (!db || i >= swgpu__db_whole_n(db))
        return swgpu__fail(SWGPU_EINVAL, "database: sequence %zu out of range (%" PRIu64 " sequences)", i,
                           db ? swgpu__db_whole_n(db) : 0);
    uint64_t k = db->rank[i];
    if (k < db->part_first || k - db->part_first >= db->n)
        return swgpu__fail(SWGPU_ENOTFOUND, "database: sequence %zu is not in this part "
                           "(scan positions %" PRIu64 "..%" PRIu64 ")", i, db->part_first,
                           db->part_first + db->n);
    k -= db->part_first;
    out->id = db->names + db->name_off[i];
    out->desc = out->id + strlen(out->id) + 1;
    out->res = db->res + db->off[k];
    out->len = (size_t)(db->off[k + 1] - db->off[k]);
    return SWGPU_OK;
}

int swgpu_db_ids(const swgpu_db_t *db, size_t i, swgpu_seq_ids_t *out)
{
    if (!db || !out || i >= swgpu__db_whole_n(db))
        return swgpu__fail(SWGPU_EINVAL, "database: sequence %zu out of range (%" PRIu64 " sequences)", i,
                           db ? swgpu__db_whole_n(db) : 0);
    const char *id = db->names + db->name_off[i], *desc = id + strlen(id) + 1, *p = desc;
    out->seqid = out->acc = out->accver = out->allseqid = id;
    out->title = out->alltitles = NULL;
    out->taxid = out->taxids = "N/A";
    if (!db->blast_info)
        return SWGPU_OK;
    p += strlen(p) + 1; /* the info block after "id\0desc\0" (io.h) */
    const char *f[9];
    if (*p == 'F')
        return SWGPU_OK;
    for (int k = 0; k < 9; k++, p += strlen(p) + 1) f[k] = p;
#define SAME(s) (!strcmp((s), SWGPU__SAME_AS))
    if (*f[0] == 'P') {
        out->seqid = SAME(f[1]) ? id : f[1];
        out->acc = f[2];
        out->accver = f[3];
        out->allseqid = SAME(f[4]) ? out->seqid : f[4];
        out->title = SAME(f[5]) ? desc : f[5];
    } else {
        out->title = SAME(f[5]) ? NULL : f[5]; /* NULL: "id desc" */
    }
    out->alltitles = SAME(f[6]) ? out->title : f[6];
#undef SAME
    if (out->title && !*out->title) /* blastp's stitle of an untitled entry */
        out->title = "N/A";
    if (out->alltitles && !*out->alltitles)
        out->alltitles = "N/A";
    out->taxid = *f[7] ? f[7] : "N/A";
    out->taxids = f[8];
    return SWGPU_OK;
}

int swgpu_db_part_info(const swgpu_db_t *db, swgpu_db_part_t *out)
{
    if (!db || !out)
        return swgpu__fail(SWGPU_EINVAL, "db_part_info: NULL argument");
    out->first = db->part_first;
    out->n = db->n;
    out->residues = db->total_res;
    out->total_n = swgpu__db_whole_n(db);
    out->total_residues = swgpu__db_whole_res(db);
    out->total_max_len = db->whole_n ? db->whole_max_len : db->max_len;
    return SWGPU_OK;
}

size_t swgpu_db_scan_index(const swgpu_db_t *db, size_t k)
{
    return db && k < db->n ? (size_t)db->orig[k] : SIZE_MAX;
}

void swgpu_db_destroy(swgpu_db_t *db)
{
    if (!db) return;
    if (db->map) munmap(db->map, db->map_len);
    if (db->map_res) munmap(db->map_res, db->map_res_len);
    free(db->src);
    for (size_t i = 0; i < sizeof db->owned / sizeof *db->owned; i++) free(db->owned[i]);
    free(db);
}

