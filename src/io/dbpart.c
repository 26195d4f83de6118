/*
 * io/dbpart.c - parts of a database (swgpu_db_part, swgpu_db_open_part):
 * the sequences whose residues start in [from, to) of the whole's, for a
 * search split over processes.  A makedb file's part maps the index and
 * only the part's residues; other inputs are read whole and cut.
 */
#define _POSIX_C_SOURCE 200809L
#include "io/io.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define BAD(...) do { rc = swgpu__fail(SWGPU_EDB, __VA_ARGS__); goto fail; } while (0)

uint64_t swgpu__db_cut_at(const uint64_t *off, uint64_t n, uint64_t total, double x)
{
    if (x <= 0)
        return 0;
    if (x >= 1)
        return n;
    uint64_t p = (uint64_t)(x * (double)total), lo = 0, hi = n;
    while (lo < hi) { /* first k with off[k] >= p */
        uint64_t mid = lo + (hi - lo) / 2;
        if (off[mid] < p)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int swgpu__db_part_check(const char *what, double from, double to)
{
    if (!(from >= 0 && from <= to && to <= 1))
        return swgpu__fail(SWGPU_EINVAL, "%s [%g, %g): expected 0 <= from <= to <= 1", what, from,
                           to);
    return SWGPU_OK;
}

/* residue bytes a part points at when it is empty */
static const uint8_t empty_res[SWGPU__DB_PAD];

/* fill a part's counts and its own offsets (copied, starting at 0) from the
 * whole database's arrays; res/orig/names are the caller's */
static int part_fill(swgpu_db_t *p, const uint64_t *off, uint64_t first, uint64_t last,
                     uint64_t whole_n, uint64_t whole_res)
{
    uint64_t n = last - first;
    uint64_t *o = malloc((n + 1) * sizeof *o);
    if (!o)
        return swgpu__fail(SWGPU_ENOMEM, "database part: out of memory for %" PRIu64 " offsets", n + 1);
    for (uint64_t k = 0; k <= n; k++)
        o[k] = off[first + k] - off[first];
    p->owned[SWGPU__OWN_OFF] = o;
    p->off = o;
    p->n = n;
    p->total_res = o[n];
    p->max_len = n ? o[n] - o[n - 1] : 0;
    p->part_first = first;
    p->whole_n = whole_n;
    p->whole_res = whole_res;
    return SWGPU_OK;
}

int swgpu_db_part(const swgpu_db_t *db, double from, double to, swgpu_db_t **out)
{
    if (!out)
        return swgpu__fail(SWGPU_EINVAL, "db_part: NULL result pointer");
    *out = NULL;
    if (!db)
        return swgpu__fail(SWGPU_EINVAL, "db_part: NULL database");
    if (db->whole_n)
        return swgpu__fail(SWGPU_EINVAL, "db_part: the database is itself a part");
    int rc = swgpu__db_part_check("database part", from, to);
    if (rc)
        return rc;
    uint64_t first = swgpu__db_cut_at(db->off, db->n, db->total_res, from);
    uint64_t last = swgpu__db_cut_at(db->off, db->n, db->total_res, to);
    swgpu_db_t *p = calloc(1, sizeof *p);
    if (!p)
        return swgpu__fail(SWGPU_ENOMEM, "db_part: out of memory");
    p->alphabet = db->alphabet;
    if ((rc = part_fill(p, db->off, first, last, db->n, db->total_res))) {
        swgpu_db_destroy(p);
        return rc;
    }
    p->whole_max_len = db->max_len;
    p->res = db->res + db->off[first];
    p->orig = db->orig + first;
    p->rank = db->rank;
    p->names = db->names;
    p->name_off = db->name_off;
    p->blast_info = db->blast_info;
    *out = p;
    return SWGPU_OK;
}

/* the part [first, last) of an in-memory whole database, which it consumes:
 * the part's residues and order are copied, the names and the rank array
 * change hands, the rest is freed */
static int part_take(swgpu_db_t *whole, uint64_t first, uint64_t last, swgpu_db_t **out)
{
    swgpu_db_t *p = calloc(1, sizeof *p);
    uint64_t n = last - first, nres = whole->off[last] - whole->off[first];
    uint8_t *res = malloc(nres + SWGPU__DB_PAD);
    uint32_t *orig = malloc((n ? n : 1) * sizeof *orig);
    int rc;
    if (!p || !res || !orig) {
        free(p);
        free(res);
        free(orig);
        swgpu_db_destroy(whole);
        return swgpu__fail(SWGPU_ENOMEM, "database part: out of memory for %" PRIu64 " residues", nres);
    }
    memcpy(res, whole->res + whole->off[first], nres);
    memset(res + nres, 0, SWGPU__DB_PAD);
    memcpy(orig, whole->orig + first, n * sizeof *orig);
    p->alphabet = whole->alphabet;
    p->owned[SWGPU__OWN_RES] = res;
    p->owned[SWGPU__OWN_ORIG] = orig;
    p->res = res;
    p->orig = orig;
    if ((rc = part_fill(p, whole->off, first, last, whole->n, whole->total_res))) {
        swgpu_db_destroy(p);
        swgpu_db_destroy(whole);
        return rc;
    }
    p->whole_max_len = whole->max_len;
    p->rank = whole->rank;
    p->names = whole->names;
    p->name_off = whole->name_off;
    if (whole->map) { /* laid out in one mapping (dbbuild.c): the part keeps it, less the
                       * residues (its own copy) */
        uintptr_t pg = 4096, a = ((uintptr_t)whole->res + pg - 1) & ~(pg - 1);
        uintptr_t b = ((uintptr_t)whole->res + whole->total_res) & ~(pg - 1);
        if (b > a) madvise((void *)a, b - a, MADV_DONTNEED);
        p->map = whole->map;
        p->map_len = whole->map_len;
        whole->map = NULL;
    }
    p->blast_info = whole->blast_info;
    p->owned[SWGPU__OWN_RANK] = whole->owned[SWGPU__OWN_RANK];
    p->owned[SWGPU__OWN_NAMES] = whole->owned[SWGPU__OWN_NAMES];
    p->owned[SWGPU__OWN_NAME_OFF] = whole->owned[SWGPU__OWN_NAME_OFF];
    whole->owned[SWGPU__OWN_RANK] = whole->owned[SWGPU__OWN_NAMES] = whole->owned[SWGPU__OWN_NAME_OFF] = NULL;
    p->src = whole->src; /* the files it was read from (a BLAST database's several) */
    p->n_src = whole->n_src;
    whole->src = NULL;
    whole->n_src = 0;
    swgpu_db_destroy(whole);
    *out = p;
    return SWGPU_OK;
}

/* a mapping of bytes [pos, end) of fd: *base is the mapping, *len its length,
 * the return value points at byte pos; NULL after a failure (message set) */
const unsigned char *swgpu__db_map_range(int fd, const char *path, uint64_t pos, uint64_t end,
                                         void **base, size_t *len)
{
    uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE), lo = pos - pos % page;
    *base = NULL;
    *len = (size_t)(end - lo);
    void *m = mmap(NULL, *len, PROT_READ, MAP_PRIVATE, fd, (off_t)lo);
    if (m == MAP_FAILED) {
        swgpu__fail(SWGPU_EIO, "database %s: mmap failed: %s", path, strerror(errno));
        return NULL;
    }
    *base = m;
    return (const unsigned char *)m + (pos - lo);
}

/* part_map's checks of sequence first + i, each the one pass's test there:
 * 0, a SWGPU__SEQ_* problem (the offsets also within the residues), or its
 * names past the section */
enum { PART_NAMES = SWGPU__SEQ_TIE + 1 };
typedef struct {
    uint64_t first, n, total, nsize;
    const uint64_t *off, *name_off;
    const uint32_t *orig, *rank;
    const char *names;
} part_check_t;

static int part_bad(void *arg, size_t i)
{
    const part_check_t *c = arg;
    const uint64_t k = c->first + i;
    if (c->off[k + 1] > c->total)
        return SWGPU__SEQ_LEN;
    const int why = swgpu__db_seq_bad(c->n, c->off, c->orig, c->rank, k);
    if (why)
        return why;
    if (swgpu__db_names_end(c->names, c->nsize, c->name_off[c->orig[k]]) == UINT64_MAX)
        return PART_NAMES;
    return 0;
}

/* open the part [from, to) of a makedb file (fd consumed): the index
 * sections mapped whole (read as far as touched), the part's residues mapped
 * alone; the header and the part validated */
static int part_map(int fd, const char *path, double from, double to, swgpu_db_t **out)
{
    unsigned char h[SWGPU__DB_HDR];
    swgpu_db_t *db = NULL;
    swgpu__db_hdr_t H;
    swgpu__db_sec_t *sec = H.sec;
    void *imap = NULL, *rmap = NULL;
    size_t ilen = 0, rlen = 0;
    int rc = SWGPU_OK;

    uint64_t size;
    swgpu__file_id_t fid;
    if ((rc = swgpu__db_file_size(fd, path, &size, &fid)) < 0)
        goto fail;
    if (pread(fd, h, SWGPU__DB_HDR, 0) != (ssize_t)SWGPU__DB_HDR) {
        rc = swgpu__fail(SWGPU_EIO, "database %s: cannot read the header: %s", path, strerror(errno));
        goto fail;
    }
    if ((rc = swgpu__db_check_header(h, size, path, &H)))
        goto fail;
    uint64_t n = H.n, total = H.total;

    /* the index: every section but the residues, in one mapping */
    uint64_t lo = UINT64_MAX, hi = 0;
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
    const uint64_t *name_off = (const uint64_t *)(ix + (sec[SWGPU__SEC_NAME_OFF].off - lo));
    const uint32_t *orig = (const uint32_t *)(ix + (sec[SWGPU__SEC_ORIG].off - lo));
    const uint32_t *rank = (const uint32_t *)(ix + (sec[SWGPU__SEC_RANK].off - lo));
    const char *names = (const char *)(ix + (sec[SWGPU__SEC_NAMES].off - lo));
    if (off[0] != 0 || off[n] != total)
        BAD("database %s: inconsistent offsets (residue offsets end at %" PRIu64 ", expected %" PRIu64 ")", path, off[n], total);
    if (off[n - 1] > total || off[n] - off[n - 1] != H.max_len)
        BAD("database %s: inconsistent longest sequence (%" PRIu64 ")", path, H.max_len);

    /* the part's sequences: the binary search above assumes sorted offsets,
     * which the part then checks it really has (with its neighbours), on
     * all cores (the first problem as one pass in order finds it) */
    uint64_t first = swgpu__db_cut_at(off, n, total, from);
    uint64_t last = swgpu__db_cut_at(off, n, total, to);
    part_check_t pc = {first, n, total, sec[SWGPU__SEC_NAMES].size, off, name_off, orig, rank,
                       names};
    int why = 0;
    const size_t at = last > first ? swgpu__par_first((size_t)(last - first), (size_t)1 << 16, 0,
                                                      part_bad, &pc, &why)
                                   : 0;
    if (at == SIZE_MAX) {
        rc = swgpu__fail(SWGPU_ENOMEM, "database %s: out of memory", path);
        goto fail;
    }
    if (last > first && at < last - first) {
        const uint64_t k = first + at;
        if (why != PART_NAMES) {
            rc = swgpu__db_seq_fail(path, why, k);
            goto fail;
        }
        BAD("database %s: names section ends inside sequence %" PRIu32, path, orig[k]);
    }

    /* the part's residues, with the padding that follows them */
    const uint8_t *res = empty_res;
    if (last > first) {
        res = swgpu__db_map_range(fd, path, sec[SWGPU__SEC_RES].off + off[first], sec[SWGPU__SEC_RES].off + off[last] + SWGPU__DB_PAD,
                        &rmap, &rlen);
        if (!res) {
            rc = SWGPU_EIO;
            goto fail;
        }
        uint8_t bad = 0, lim = (uint8_t)swgpu_alphabet_size((swgpu_alphabet_t)H.alphabet);
        for (uint64_t x = 0; x < off[last] - off[first]; x++)
            bad |= res[x] >= lim;
        if (bad)
            BAD("database %s: residue code out of range for the %s alphabet", path,
                swgpu_alphabet_name((swgpu_alphabet_t)H.alphabet));
    }
    close(fd);
    fd = -1;

    db = calloc(1, sizeof *db);
    if (db && !(db->src = malloc(sizeof *db->src))) {
        free(db);
        db = NULL;
    }
    if (!db) {
        rc = swgpu__fail(SWGPU_ENOMEM, "database %s: out of memory", path);
        goto fail;
    }
    db->alphabet = (swgpu_alphabet_t)H.alphabet;
    db->src[0] = fid;
    db->n_src = 1;
    db->map = imap;
    db->map_len = ilen;
    db->map_res = rmap;
    db->map_res_len = rlen;
    imap = rmap = NULL;
    if ((rc = part_fill(db, off, first, last, n, total))) {
        swgpu_db_destroy(db);
        return rc;
    }
    db->whole_max_len = H.max_len;
    db->res = res;
    db->orig = orig + first;
    db->rank = rank;
    db->names = names;
    db->name_off = name_off;
    *out = db;
    return SWGPU_OK;

fail:
    if (imap) munmap(imap, ilen);
    if (rmap) munmap(rmap, rlen);
    if (fd >= 0) close(fd);
    return rc;
}

int swgpu_db_open_part(const char *path, swgpu_alphabet_t alphabet, double from, double to,
                       swgpu_db_t **out, swgpu_read_info_t *info)
{
    unsigned char head[8];
    swgpu_db_t *whole = NULL;
    int rc;
    if (!out)
        return swgpu__fail(SWGPU_EINVAL, "db_open_part: NULL result pointer");
    *out = NULL;
    if (info) memset(info, 0, sizeof *info);
    if (!path) return swgpu__fail(SWGPU_EINVAL, "db_open_part: no file name");
    if ((rc = swgpu__db_part_check("database part", from, to)))
        return rc;
    char *found;
    if ((rc = swgpu__db_resolve(path, &found)) || found) {
        if (found) rc = swgpu_db_open_part(found, alphabet, from, to, out, info);
        free(found);
        return rc;
    }
    /* a BLAST database prefix names no file of its own: read whole, then cut */
    int fd = -1;
    if (!swgpu__blastdb_probe(path) && (fd = swgpu__open_input(path)) < 0)
        return fd;
    ssize_t got = fd < 0 || swgpu__fd_is_stream(fd) ? 0 : pread(fd, head, sizeof head, 0);
    if (fd >= 0 && swgpu__fd_is_stream(fd)) { /* read once, here: the stream's data is not read twice */
        if ((rc = swgpu__db_from_stream(fd, path, alphabet, &whole, NULL)))
            return rc;
        rc = part_take(whole, swgpu__db_cut_at(whole->off, whole->n, whole->total_res, from),
                       swgpu__db_cut_at(whole->off, whole->n, whole->total_res, to), out);
        if (rc)
            return rc;
    } else if (got == (ssize_t)sizeof head && !memcmp(head, SWGPU__DB_MAGIC, 8)) {
        if ((rc = part_map(fd, path, from, to, out)))
            return rc;
        if (alphabet != SWGPU_AUTO && alphabet != (*out)->alphabet) {
            rc = swgpu__fail(SWGPU_EALPHABET, "database %s holds %s sequences, %s was asked for", path,
                             swgpu_alphabet_name((*out)->alphabet), swgpu_alphabet_name(alphabet));
            swgpu_db_destroy(*out);
            *out = NULL;
            return rc;
        }
    } else {
        if (fd >= 0) close(fd);
        if ((rc = swgpu_db_open(path, alphabet, &whole, NULL)))
            return rc;
        rc = part_take(whole, swgpu__db_cut_at(whole->off, whole->n, whole->total_res, from),
                       swgpu__db_cut_at(whole->off, whole->n, whole->total_res, to), out);
        if (rc)
            return rc;
    }
    if (info) {
        info->n_records = (*out)->n;
        info->n_residues = (*out)->total_res;
        info->max_len = (*out)->max_len;
    }
    return SWGPU_OK;
}

