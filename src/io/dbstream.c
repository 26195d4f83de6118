/*
 * io/dbstream.c - what a search streamed from a makedb file part by part
 * needs of it (search/stream.c): the header's figures, the index mapped
 * once for every part, each part read with its own entries of the index
 * alone, the whole-file checksum computed piecewise (each part's residues
 * as they are read, the bytes around them once), and a database of the
 * final hits' sequences alone for their alignments and the output.
 */
#define _POSIX_C_SOURCE 200809L
#include "io/io.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
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
    s->fd = -1;
    if ((rc = swgpu__db_resolve(path, &found)) < 0)
        return rc;
    const char *name = found ? found : path;
    if (swgpu__blastdb_probe(name)) {
        free(found);
        return 0;
    }
    /* only a regular file can be a makedb database (it is mapped); anything
     * else is not opened here: opening a FIFO would take its one writer's
     * data from whoever reads it next, or leave that reader waiting forever */
    struct stat sb;
    int fd = stat(name, &sb) == 0 && S_ISREG(sb.st_mode) ? open(name, O_RDONLY | O_CLOEXEC) : -1;
    if (fd < 0 || pread(fd, head, 8, 0) != 8 || memcmp(head, SWGPU__DB_MAGIC, 8)) {
        if (fd >= 0)
            close(fd);
        free(found);
        return 0; /* not a makedb file: whoever reads it says what is wrong */
    }
    swgpu__db_hdr_t H;
    rc = read_header(fd, name, &H, &s->size, &s->fid, &s->crc);
    close(fd);
    if (rc == SWGPU_OK && !(s->path = strdup(name)))
        rc = swgpu__fail(SWGPU_ENOMEM, "database %s: out of memory", name);
    free(found);
    if (rc < 0)
        return rc;
    s->n = H.n;
    s->total = H.total;
    s->max_len = H.max_len;
    memcpy(s->sec, H.sec, sizeof s->sec);
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
    int rc = crc_range(s->fd, s->path, SWGPU__DB_HDR, s->res_off, pre);
    if (rc == SWGPU_OK)
        rc = crc_range(s->fd, s->path, s->res_off + s->total, s->size, post);
    return rc;
}

uint64_t swgpu__db_input_bytes(const char *path)
{
    struct stat st;
    if (!path)
        return 0;
    if (swgpu__blastdb_probe(path))
        return swgpu__blastdb_bytes(path);
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) ? (uint64_t)st.st_size : 0;
}

#define BAD(...) do { rc = swgpu__fail(SWGPU_EDB, __VA_ARGS__); goto fail; } while (0)

int swgpu__db_stream_open(swgpu__db_stream_t *s)
{
    const swgpu__db_sec_t *sec = s->sec;
    uint64_t lo = UINT64_MAX, hi = 0, size;
    swgpu__file_id_t fid;
    int rc = SWGPU_OK;
    if ((s->fd = open(s->path, O_RDONLY | O_CLOEXEC)) < 0)
        return swgpu__fail(SWGPU_EIO, "database %s: %s", s->path, strerror(errno));
    if ((rc = swgpu__db_file_size(s->fd, s->path, &size, &fid)) < 0)
        return rc;
    if (size != s->size || fid.dev != s->fid.dev || fid.ino != s->fid.ino)
        return swgpu__fail(SWGPU_EDB, "database %s: changed while it was read", s->path);
    for (int i = 0; i < SWGPU__NSEC; i++) { /* every section but the residues */
        if (i == SWGPU__SEC_RES) continue;
        if (sec[i].off < lo) lo = sec[i].off;
        if (sec[i].off + sec[i].size > hi) hi = sec[i].off + sec[i].size;
    }
    if (!(s->ix = swgpu__db_map_range(s->fd, s->path, lo, hi, &s->imap, &s->ilen)))
        return SWGPU_EIO;
    s->ix_lo = lo;
    const uint64_t *off = (const uint64_t *)(s->ix + (sec[SWGPU__SEC_OFF].off - lo));
    if (off[0] != 0 || off[s->n] != s->total)
        return swgpu__fail(SWGPU_EDB, "database %s: inconsistent offsets (residue offsets end at "
                           "%" PRIu64 ", expected %" PRIu64 ")", s->path, off[s->n], s->total);
    if (s->n && (off[s->n - 1] > s->total || off[s->n] - off[s->n - 1] != s->max_len))
        return swgpu__fail(SWGPU_EDB, "database %s: inconsistent longest sequence (%" PRIu64 ")",
                           s->path, s->max_len);
    if (!(s->seen = calloc(s->n / 8 + 1, 1)))
        return swgpu__fail(SWGPU_ENOMEM, "database %s: out of memory for %" PRIu64 " sequences",
                           s->path, s->n);
    return SWGPU_OK;
}

void swgpu__db_stream_close(swgpu__db_stream_t *s)
{
    if (s->imap)
        munmap(s->imap, s->ilen);
    if (s->fd >= 0)
        close(s->fd);
    free(s->seen);
    free(s->path);
    s->imap = NULL;
    s->fd = -1;
    s->seen = NULL;
    s->path = NULL;
}

/* section i of the stream's index mapping */
static const void *section(const swgpu__db_stream_t *s, int i)
{
    return s->ix + (s->sec[i].off - s->ix_lo);
}

/* bytes [pos, pos + len) of the stream's file into buf */
static int read_at(const swgpu__db_stream_t *s, uint64_t pos, void *buf, uint64_t len)
{
    unsigned char *p = buf;
    while (len) {
        size_t want = len < ((size_t)1 << 30) ? (size_t)len : (size_t)1 << 30;
        ssize_t got = pread(s->fd, p, want, (off_t)pos);
        if (got <= 0)
            return swgpu__fail(SWGPU_EIO, "database %s: %s", s->path,
                               got < 0 ? strerror(errno) : "truncated while it was read");
        p += got;
        pos += (uint64_t)got;
        len -= (uint64_t)got;
    }
    return SWGPU_OK;
}

/* database index x's id and description end inside the names section */
static int names_end(const swgpu__db_stream_t *s, uint32_t x)
{
    const uint64_t *name_off = section(s, SWGPU__SEC_NAME_OFF);
    if (swgpu__db_names_end(section(s, SWGPU__SEC_NAMES), s->sec[SWGPU__SEC_NAMES].size,
                            name_off[x]) == UINT64_MAX)
        return swgpu__fail(SWGPU_EDB, "database %s: names section ends inside sequence "
                           "%" PRIu32, s->path, x);
    return SWGPU_OK;
}

/* the part [first, last)'s entries checked: o holds the offsets [b, last],
 * g the order [b, last), b = first - 1 when first > 0 (its neighbour) */
static int part_check(swgpu__db_stream_t *s, uint64_t first, uint64_t last, uint64_t b,
                      const uint64_t *o, const uint32_t *g, int names)
{
    const uint32_t *rank = section(s, SWGPU__SEC_RANK);
    int rc = SWGPU_OK;
    for (uint64_t k = first; k < last; k++) {
        uint64_t j = k - b;
        if (o[j + 1] < o[j] || o[j + 1] > s->total || (k && o[j + 1] - o[j] < o[j] - o[j - 1]))
            return swgpu__db_seq_fail(s->path, SWGPU__SEQ_LEN, k);
        if (g[j] >= s->n || (s->seen[g[j] / 8] >> (g[j] % 8) & 1) ||
            (names && rank[g[j]] != k))
            return swgpu__db_seq_fail(s->path, SWGPU__SEQ_PERM, k);
        s->seen[g[j] / 8] |= (uint8_t)(1u << (g[j] % 8));
        if (k && o[j + 1] - o[j] == o[j] - o[j - 1] && g[j] < g[j - 1])
            return swgpu__db_seq_fail(s->path, SWGPU__SEQ_TIE, k);
        if (names && (rc = names_end(s, g[j])) < 0)
            return rc;
    }
    return rc;
}

int swgpu__db_stream_part(swgpu__db_stream_t *s, double from, double to, int names,
                          swgpu_db_t **out, uint32_t *crc)
{
    const uint64_t *moff = section(s, SWGPU__SEC_OFF);
    uint64_t first = swgpu__db_cut_at(moff, s->n, s->total, from);
    uint64_t last = swgpu__db_cut_at(moff, s->n, s->total, to);
    uint64_t b = first ? first - 1 : first, size, np = last - first;
    uint64_t *o = NULL;
    uint32_t *g = NULL;
    void *rmap = NULL;
    size_t rlen = 0;
    swgpu_db_t *db = NULL;
    swgpu__file_id_t fid;
    int rc;
    *out = NULL;
    *crc = (uint32_t)crc32(0, Z_NULL, 0);
    if ((rc = swgpu__db_file_size(s->fd, s->path, &size, &fid)) < 0)
        return rc;
    if (size != s->size)
        return swgpu__fail(SWGPU_EDB, "database %s: changed while it was read", s->path);
    if (last < first)
        return swgpu__fail(SWGPU_EDB, "database %s: offsets out of order near sequence %" PRIu64,
                           s->path, last);
    /* the part's entries of the index (and its neighbour's), read */
    if (!(o = malloc((last - b + 1) * sizeof *o)) || !(g = malloc((last - b + 1) * sizeof *g)))
        goto nomem;
    if ((rc = read_at(s, s->sec[SWGPU__SEC_OFF].off + b * sizeof *o, o,
                      (last - b + 1) * sizeof *o)) < 0 ||
        (rc = read_at(s, s->sec[SWGPU__SEC_ORIG].off + b * sizeof *g, g,
                      (last - b) * sizeof *g)) < 0 ||
        (rc = part_check(s, first, last, b, o, g, names)) < 0)
        goto fail;
    /* the part's residues (with the padding after them) mapped, read and checked */
    static const uint8_t empty_res[SWGPU__DB_PAD];
    const uint8_t *res = empty_res;
    uint64_t r0 = o[first - b], nres = o[last - b] - r0;
    if (np) {
        res = swgpu__db_map_range(s->fd, s->path, s->res_off + r0, s->res_off + r0 + nres +
                                  SWGPU__DB_PAD, &rmap, &rlen);
        if (!res) {
            rc = SWGPU_EIO;
            goto fail;
        }
        uint8_t bad = 0, lim = (uint8_t)swgpu_alphabet_size(s->alphabet);
        *crc = swgpu__crc_parallel(res, nres, res, nres, lim, &bad, 0);
        if (bad)
            BAD("database %s: residue code out of range for the %s alphabet", s->path,
                swgpu_alphabet_name(s->alphabet));
    }
    /* the part's own offsets from 0 and its order, in place */
    for (uint64_t k = 0; k <= np; k++)
        o[k] = o[k + first - b] - r0;
    if (first > b)
        memmove(g, g + 1, np * sizeof *g);
    if (!(db = calloc(1, sizeof *db)) || !(db->src = malloc(sizeof *db->src)))
        goto nomem;
    db->alphabet = s->alphabet;
    db->src[0] = s->fid;
    db->n_src = 1;
    db->map_res = rmap;
    db->map_res_len = rlen;
    db->owned[SWGPU__OWN_OFF] = o;
    db->owned[SWGPU__OWN_ORIG] = g;
    db->n = np;
    db->total_res = nres;
    db->max_len = np ? o[np] - o[np - 1] : 0;
    db->part_first = first;
    db->whole_n = s->n;
    db->whole_res = s->total;
    db->whole_max_len = s->max_len;
    db->res = res;
    db->off = o;
    db->orig = g;
    db->rank = section(s, SWGPU__SEC_RANK);
    db->names = section(s, SWGPU__SEC_NAMES);
    db->name_off = section(s, SWGPU__SEC_NAME_OFF);
    *out = db;
    return SWGPU_OK;

nomem:
    rc = swgpu__fail(SWGPU_ENOMEM, "database %s: out of memory for a part of %" PRIu64
                     " sequences", s->path, np);
fail:
    if (db)
        free(db->src);
    free(db);
    free(o);
    free(g);
    if (rmap)
        munmap(rmap, rlen);
    return rc;
}

int swgpu__db_open_hits(swgpu__db_stream_t *s, const uint64_t *t, size_t n, swgpu_db_t **out)
{
    swgpu_db_t *db = NULL;
    uint8_t *res = NULL;
    uint64_t *o = NULL;
    uint32_t *orig = NULL, *rank = NULL;
    uint64_t N = s->n;
    int rc;

    *out = NULL;
    const uint64_t *off = section(s, SWGPU__SEC_OFF);
    const uint32_t *wrank = section(s, SWGPU__SEC_RANK), *worig = section(s, SWGPU__SEC_ORIG);
    o = malloc((n + 1) * sizeof *o);
    orig = malloc((n ? n : 1) * sizeof *orig);
    rank = malloc((N ? N : 1) * sizeof *rank);
    if (!o || !orig || !rank)
        goto nomem;
    o[0] = 0;
    uint64_t max_len = 0;
    for (size_t j = 0; j < n; j++) {
        if (t[j] >= N || (j && t[j] <= t[j - 1]))
            BAD("database %s: sequence %" PRIu64 " out of range or repeated", s->path, t[j]);
        uint64_t k = wrank[t[j]];
        if (k >= N || worig[k] != t[j]) {
            rc = swgpu__db_seq_fail(s->path, SWGPU__SEQ_PERM, k);
            goto fail;
        }
        if (off[k + 1] < off[k] || off[k + 1] > s->total)
            BAD("database %s: inconsistent offsets of sequence %" PRIu64, s->path, t[j]);
        if ((rc = names_end(s, (uint32_t)t[j])) < 0)
            goto fail;
        uint64_t len = off[k + 1] - off[k];
        o[j + 1] = o[j] + len;
        max_len = len > max_len ? len : max_len;
        orig[j] = (uint32_t)t[j];
    }
    if (!(res = malloc(o[n] + SWGPU__DB_PAD)))
        goto nomem;
    memset(res + o[n], 0, SWGPU__DB_PAD);
    uint8_t bad = 0, lim = (uint8_t)swgpu_alphabet_size(s->alphabet);
    for (size_t j = 0; j < n; j++) {
        uint64_t k = wrank[t[j]], len = o[j + 1] - o[j];
        if ((rc = read_at(s, s->res_off + off[k], res + o[j], len)) < 0)
            goto fail;
        for (uint64_t x = 0; x < len; x++)
            bad |= res[o[j] + x] >= lim;
    }
    if (bad)
        BAD("database %s: residue code out of range for the %s alphabet", s->path,
            swgpu_alphabet_name(s->alphabet));
    for (uint64_t i = 0; i < N; i++)
        rank[i] = (uint32_t)n; /* not held */
    for (size_t j = 0; j < n; j++)
        rank[t[j]] = (uint32_t)j;
    if (!(db = calloc(1, sizeof *db)) || !(db->src = malloc(sizeof *db->src)))
        goto nomem;
    db->alphabet = s->alphabet;
    db->src[0] = s->fid;
    db->n_src = 1;
    db->map = s->imap; /* the stream's index, taken over */
    db->map_len = s->ilen;
    s->imap = NULL;
    db->n = n;
    db->total_res = o[n];
    db->max_len = max_len;
    db->res = res;
    db->off = o;
    db->orig = orig;
    db->rank = rank;
    db->names = section(s, SWGPU__SEC_NAMES);
    db->name_off = section(s, SWGPU__SEC_NAME_OFF);
    db->whole_n = N;
    db->whole_res = s->total;
    db->whole_max_len = s->max_len;
    db->owned[SWGPU__OWN_RES] = res;
    db->owned[SWGPU__OWN_OFF] = o;
    db->owned[SWGPU__OWN_ORIG] = orig;
    db->owned[SWGPU__OWN_RANK] = rank;
    *out = db;
    return SWGPU_OK;

nomem:
    rc = swgpu__fail(SWGPU_ENOMEM, "database %s: out of memory for %zu sequences", s->path, n);
fail:
    if (db)
        free(db->src);
    free(db);
    free(res);
    free(o);
    free(orig);
    free(rank);
    return rc;
}

static int u64_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

int swgpu_db_open_hits(const char *path, double from, double to, const uint64_t *targets,
                       size_t n, swgpu_db_t **out)
{
    swgpu__db_stream_t s;
    uint64_t *t = NULL;
    size_t u = 0;
    if (!out)
        return swgpu__fail(SWGPU_EINVAL, "db_open_hits: NULL result pointer");
    *out = NULL;
    if (!path || (n && !targets))
        return swgpu__fail(SWGPU_EINVAL, "db_open_hits: NULL argument");
    int rc = swgpu__db_part_check("db_open_hits: part", from, to);
    if (rc < 0)
        return rc;
    rc = swgpu__db_stream_probe(path, &s);
    if (rc == 0)
        return swgpu__fail(SWGPU_EINVAL, "db_open_hits: %s is not a makedb file", path);
    if (rc > 0 && (rc = swgpu__db_stream_open(&s)) == SWGPU_OK &&
        !(t = malloc((n ? n : 1) * sizeof *t)))
        rc = swgpu__fail(SWGPU_ENOMEM, "database %s: out of memory for %zu hits", s.path, n);
    if (rc == SWGPU_OK) {
        const uint64_t *off = section(&s, SWGPU__SEC_OFF);
        const uint32_t *rank = section(&s, SWGPU__SEC_RANK);
        uint64_t first = swgpu__db_cut_at(off, s.n, s.total, from);
        uint64_t last = swgpu__db_cut_at(off, s.n, s.total, to);
        for (size_t j = 0; j < n; j++)
            if (targets[j] < s.n && rank[targets[j]] >= first && rank[targets[j]] < last)
                t[u++] = targets[j];
        if (u)
            qsort(t, u, sizeof *t, u64_cmp);
        size_t w = 0;
        for (size_t j = 0; j < u; j++)
            if (!w || t[w - 1] != t[j])
                t[w++] = t[j];
        rc = swgpu__db_open_hits(&s, t, w, out);
    }
    free(t);
    swgpu__db_stream_close(&s);
    return rc;
}

int swgpu_db_verify(const char *path)
{
    swgpu__db_stream_t s;
    uint32_t c = 0;
    if (!path)
        return swgpu__fail(SWGPU_EINVAL, "db_verify: no file name");
    int rc = swgpu__db_stream_probe(path, &s);
    if (rc <= 0)
        return rc;
    if ((s.fd = open(s.path, O_RDONLY | O_CLOEXEC)) < 0)
        rc = swgpu__fail(SWGPU_EIO, "database %s: %s", s.path, strerror(errno));
    else if ((rc = crc_range(s.fd, s.path, SWGPU__DB_HDR, s.size, &c)) == SWGPU_OK &&
             c != s.crc)
        rc = swgpu__fail(SWGPU_EDB, "database %s: checksum mismatch (corrupt file)", s.path);
    swgpu__db_stream_close(&s);
    return rc;
}
