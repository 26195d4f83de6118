/*
 * io/dbstream.c - what a search streamed from a makedb file part by part
 * needs of it (search/stream.c): the header's figures, the scan order's
 * offsets, the whole-file checksum computed piecewise (each part's
 * residues as they are read, the bytes around them once), and a database
 * of the final hits' sequences alone for their alignments and the output.
 */
#define _POSIX_C_SOURCE 200809L
#include "io/io.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

uint32_t swgpu__crc_combine(uint32_t a, uint32_t b, uint64_t len_b)
{
    return (uint32_t)crc32_combine(a, b, (z_off_t)len_b);
}

/* the header of the makedb file fd (path) checked, into H; *size its bytes */
static int read_header(int fd, const char *path, swgpu__db_hdr_t *H, uint64_t *size,
                       swgpu__file_id_t *fid, uint32_t *crc)
{
    unsigned char h[SWGPU__DB_HDR];
    int rc = swgpu__db_file_size(fd, path, size, fid);
    if (rc < 0)
        return rc;
    if (pread(fd, h, SWGPU__DB_HDR, 0) != (ssize_t)SWGPU__DB_HDR)
        return swgpu__fail(SWGPU_EIO, "database %s: cannot read the header: %s", path,
                           strerror(errno));
    if ((rc = swgpu__db_check_header(h, *size, path, H)) < 0)
        return rc;
    *crc = (uint32_t)h[144] | (uint32_t)h[145] << 8 | (uint32_t)h[146] << 16 |
           (uint32_t)h[147] << 24;
    return SWGPU_OK;
}

int swgpu__db_stream_probe(const char *path, swgpu__db_stream_t *s)
{
    char *found = NULL, head[8];
    int rc;
    memset(s, 0, sizeof *s);
    if ((rc = swgpu__db_resolve(path, &found)) < 0)
        return rc;
    const char *name = found ? found : path;
    if (swgpu__blastdb_probe(name)) {
        free(found);
        return 0;
    }
    int fd = open(name, O_RDONLY | O_CLOEXEC);
    if (fd < 0 || swgpu__fd_is_stream(fd) || pread(fd, head, 8, 0) != 8 ||
        memcmp(head, SWGPU__DB_MAGIC, 8)) {
        if (fd >= 0)
            close(fd);
        free(found);
        return 0; /* not a makedb file: whoever reads it says what is wrong */
    }
    swgpu__db_hdr_t H;
    swgpu__file_id_t fid;
    rc = read_header(fd, name, &H, &s->size, &fid, &s->crc);
    close(fd);
    if (rc == SWGPU_OK && !(s->path = strdup(name)))
        rc = swgpu__fail(SWGPU_ENOMEM, "database %s: out of memory", name);
    free(found);
    if (rc < 0)
        return rc;
    s->n = H.n;
    s->total = H.total;
    s->res_off = H.sec[SWGPU__SEC_RES].off;
    s->index_bytes = s->size - H.sec[SWGPU__SEC_RES].size;
    s->alphabet = (swgpu_alphabet_t)H.alphabet;
    return 1;
}

const uint64_t *swgpu__db_stream_offsets(const swgpu__db_stream_t *s, void **base, size_t *len)
{
    swgpu__db_hdr_t H;
    swgpu__file_id_t fid;
    uint64_t size;
    uint32_t crc;
    const uint64_t *off = NULL;
    *base = NULL;
    int fd = open(s->path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        swgpu__fail(SWGPU_EIO, "database %s: %s", s->path, strerror(errno));
        return NULL;
    }
    if (read_header(fd, s->path, &H, &size, &fid, &crc) == SWGPU_OK) {
        if (size != s->size || H.n != s->n || H.total != s->total)
            swgpu__fail(SWGPU_EDB, "database %s: changed while it was read", s->path);
        else
            off = (const uint64_t *)swgpu__db_map_range(
                fd, s->path, H.sec[SWGPU__SEC_OFF].off,
                H.sec[SWGPU__SEC_OFF].off + (s->n + 1) * sizeof *off, base, len);
    }
    close(fd);
    if (off && (off[0] != 0 || off[s->n] != s->total)) {
        munmap(*base, *len);
        *base = NULL;
        swgpu__fail(SWGPU_EDB, "database %s: inconsistent offsets", s->path);
        return NULL;
    }
    return off;
}

uint32_t swgpu__db_part_crc(const swgpu_db_t *part, uint8_t *bad)
{
    uint8_t lim = (uint8_t)swgpu_alphabet_size(part->alphabet);
    *bad = 0;
    if (!part->total_res)
        return (uint32_t)crc32(0, Z_NULL, 0);
    return swgpu__crc_parallel(part->res, part->total_res, part->res, part->total_res, lim, bad,
                               0);
}

/* CRC-32 of bytes [a, b) of fd, read in pieces */
static int crc_range(int fd, const char *path, uint64_t a, uint64_t b, uint32_t *crc)
{
    enum { CHUNK = 1 << 20 };
    unsigned char *buf = malloc(CHUNK);
    uint32_t c = (uint32_t)crc32(0, Z_NULL, 0);
    if (!buf)
        return swgpu__fail(SWGPU_ENOMEM, "database %s: out of memory", path);
    while (a < b) {
        size_t want = b - a < CHUNK ? (size_t)(b - a) : CHUNK;
        ssize_t got = pread(fd, buf, want, (off_t)a);
        if (got <= 0) {
            free(buf);
            return swgpu__fail(SWGPU_EIO, "database %s: %s", path,
                               got < 0 ? strerror(errno) : "truncated while it was read");
        }
        c = (uint32_t)crc32(c, buf, (uInt)got);
        a += (uint64_t)got;
    }
    free(buf);
    *crc = c;
    return SWGPU_OK;
}

int swgpu__db_outer_crc(const swgpu__db_stream_t *s, uint32_t *pre, uint32_t *post)
{
    int fd = open(s->path, O_RDONLY | O_CLOEXEC), rc;
    if (fd < 0)
        return swgpu__fail(SWGPU_EIO, "database %s: %s", s->path, strerror(errno));
    rc = crc_range(fd, s->path, SWGPU__DB_HDR, s->res_off, pre);
    if (rc == SWGPU_OK)
        rc = crc_range(fd, s->path, s->res_off + s->total, s->size, post);
    close(fd);
    return rc;
}

#define BAD(...) do { rc = swgpu__fail(SWGPU_EDB, __VA_ARGS__); goto fail; } while (0)

int swgpu__db_open_hits(const char *path, const uint64_t *t, size_t n, swgpu_db_t **out)
{
    swgpu__db_hdr_t H;
    swgpu__file_id_t fid;
    uint64_t size;
    uint32_t crc;
    void *imap = NULL;
    size_t ilen = 0;
    swgpu_db_t *db = NULL;
    uint8_t *res = NULL;
    uint64_t *o = NULL;
    uint32_t *orig = NULL, *rank = NULL;
    int rc;

    *out = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return swgpu__fail(SWGPU_EIO, "database %s: %s", path, strerror(errno));
    if ((rc = read_header(fd, path, &H, &size, &fid, &crc)) < 0)
        goto fail;
    swgpu__db_sec_t *sec = H.sec;
    uint64_t lo = UINT64_MAX, hi = 0, N = H.n;
    for (int i = 0; i < SWGPU__NSEC; i++) {
        if (i == SWGPU__SEC_RES) continue;
        if (sec[i].off < lo) lo = sec[i].off;
        if (sec[i].off + sec[i].size > hi) hi = sec[i].off + sec[i].size;
    }
    const unsigned char *ix = swgpu__db_map_range(fd, path, lo, hi, &imap, &ilen);
    if (!ix) {
        rc = SWGPU_EIO;
        goto fail;
    }
    const uint64_t *off = (const uint64_t *)(ix + (sec[SWGPU__SEC_OFF].off - lo));
    const uint32_t *wrank = (const uint32_t *)(ix + (sec[SWGPU__SEC_RANK].off - lo));
    o = malloc((n + 1) * sizeof *o);
    orig = malloc((n ? n : 1) * sizeof *orig);
    rank = malloc((N ? N : 1) * sizeof *rank);
    if (!o || !orig || !rank)
        goto nomem;
    o[0] = 0;
    uint64_t max_len = 0;
    for (size_t j = 0; j < n; j++) {
        if (t[j] >= N || (j && t[j] <= t[j - 1]))
            BAD("database %s: sequence %" PRIu64 " out of range or repeated", path, t[j]);
        uint64_t k = wrank[t[j]];
        if (k >= N || off[k + 1] < off[k] || off[k + 1] > H.total)
            BAD("database %s: inconsistent offsets of sequence %" PRIu64, path, t[j]);
        uint64_t len = off[k + 1] - off[k];
        o[j + 1] = o[j] + len;
        max_len = len > max_len ? len : max_len;
        orig[j] = (uint32_t)t[j];
    }
    if (!(res = malloc(o[n] + SWGPU__DB_PAD)))
        goto nomem;
    memset(res + o[n], 0, SWGPU__DB_PAD);
    uint8_t bad = 0, lim = (uint8_t)swgpu_alphabet_size((swgpu_alphabet_t)H.alphabet);
    for (size_t j = 0; j < n; j++) {
        uint64_t k = wrank[t[j]], len = o[j + 1] - o[j];
        if (len && pread(fd, res + o[j], (size_t)len, (off_t)(sec[SWGPU__SEC_RES].off + off[k])) !=
                       (ssize_t)len)
            BAD("database %s: cannot read sequence %" PRIu64 ": %s", path, t[j],
                strerror(errno));
        for (uint64_t x = 0; x < len; x++)
            bad |= res[o[j] + x] >= lim;
    }
    if (bad)
        BAD("database %s: residue code out of range for the %s alphabet", path,
            swgpu_alphabet_name((swgpu_alphabet_t)H.alphabet));
    for (uint64_t i = 0; i < N; i++)
        rank[i] = (uint32_t)n; /* not held */
    for (size_t j = 0; j < n; j++)
        rank[t[j]] = (uint32_t)j;
    if (!(db = calloc(1, sizeof *db)) || !(db->src = malloc(sizeof *db->src)))
        goto nomem;
    close(fd);
    db->alphabet = (swgpu_alphabet_t)H.alphabet;
    db->src[0] = fid;
    db->n_src = 1;
    db->map = imap;
    db->map_len = ilen;
    db->n = n;
    db->total_res = o[n];
    db->max_len = max_len;
    db->res = res;
    db->off = o;
    db->orig = orig;
    db->rank = rank;
    db->names = (const char *)(ix + (sec[SWGPU__SEC_NAMES].off - lo));
    db->name_off = (const uint64_t *)(ix + (sec[SWGPU__SEC_NAME_OFF].off - lo));
    db->whole_n = N;
    db->whole_res = H.total;
    db->owned[SWGPU__OWN_RES] = res;
    db->owned[SWGPU__OWN_OFF] = o;
    db->owned[SWGPU__OWN_ORIG] = orig;
    db->owned[SWGPU__OWN_RANK] = rank;
    *out = db;
    return SWGPU_OK;

nomem:
    rc = swgpu__fail(SWGPU_ENOMEM, "database %s: out of memory for %zu sequences", path, n);
fail:
    if (db)
        free(db->src);
    free(db);
    free(res);
    free(o);
    free(orig);
    free(rank);
    if (imap)
        munmap(imap, ilen);
    close(fd);
    return rc;
}
