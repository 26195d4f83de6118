/*
 * io/taxdb.c - NCBI's taxonomy names database, taxdb.bti and taxdb.btd, read
 * as blastp 2.12 reads them (NCBI's seqdbtax.cpp) for its sscinames,
 * scomnames, sblastnames and sskingdoms columns.
 *
 *   taxdb.bti  big-endian u32s: magic 0x8739, the number of taxa N, four
 *              reserved words, then N pairs (taxid, offset of its record in
 *              taxdb.btd) in ascending taxid order;
 *   taxdb.btd  the records back to back, each "sciname TAB comname TAB
 *              blastname TAB kingdom" with no terminator: record k ends
 *              where record k + 1 begins, the last at the end of the file.
 *
 * blastp finds taxdb.bti in the current directory, else in each directory
 * of $BLASTDB in order (not in the database's directory: checked with
 * blastp 2.12), and taxdb.btd beside it.  Both files are mapped; a lookup is
 * a binary search.  A record with fewer than three tabs or an empty kingdom
 * is one blastp does not use (not found).
 */
#define _POSIX_C_SOURCE 200809L

#include "io/io.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define TAXDB_MAGIC 0x8739u
#define TAXDB_HEAD 24u /* magic, count, four reserved words */

struct swgpu_taxdb {
    const uint8_t *idx, *dat; /* the two files, mapped (dat NULL when empty) */
    size_t idx_len, dat_len;
    uint32_t n;               /* taxa */
};

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* path mapped read-only: *p (NULL for an empty file), *len; 1 when the file
 * does not exist; negative on error */
static int map_path(const char *path, const uint8_t **p, size_t *len)
{
    struct stat st;
    *p = NULL;
    *len = 0;
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        if (errno == ENOENT)
            return 1;
        return swgpu__fail(SWGPU_EIO, "taxonomy database %s: %s", path, strerror(errno));
    }
    if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
        close(fd);
        return swgpu__fail(SWGPU_EIO, "taxonomy database %s: not a regular file", path);
    }
    if (st.st_size > 0) {
        void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (m == MAP_FAILED) {
            int e = errno;
            close(fd);
            return swgpu__fail(SWGPU_EIO, "taxonomy database %s: %s", path, strerror(e));
        }
        *p = m;
        *len = (size_t)st.st_size;
    }
    close(fd);
    return 0;
}

void swgpu_taxdb_destroy(swgpu_taxdb_t *t)
{
    if (!t)
        return;
    if (t->idx)
        munmap((void *)t->idx, t->idx_len);
    if (t->dat)
        munmap((void *)t->dat, t->dat_len);
    free(t);
}

/* the checks of the files: magic, count, taxids ascending, offsets in order
 * and inside taxdb.btd */
static int check(const swgpu_taxdb_t *t, const char *bti, const char *btd)
{
    if (t->idx_len < TAXDB_HEAD || be32(t->idx) != TAXDB_MAGIC)
        return swgpu__fail(SWGPU_EDB, "taxonomy database %s: not a taxdb index (bad magic)", bti);
    uint64_t n = be32(t->idx + 4);
    if ((t->idx_len - TAXDB_HEAD) % 8 || (t->idx_len - TAXDB_HEAD) / 8 != n)
        return swgpu__fail(SWGPU_EDB, "taxonomy database %s: says %" PRIu64 " taxa, has room for "
                                      "%zu",
                           bti, n, (t->idx_len - TAXDB_HEAD) / 8);
    for (uint64_t k = 0; k < n; k++) {
        const uint8_t *e = t->idx + TAXDB_HEAD + 8 * k;
        if (k && be32(e) <= be32(e - 8))
            return swgpu__fail(SWGPU_EDB, "taxonomy database %s: taxid %" PRIu32 " (entry %" PRIu64
                                          ") not above the one before",
                               bti, be32(e), k + 1);
        if (be32(e + 4) > t->dat_len || (k && be32(e + 4) < be32(e - 4)))
            return swgpu__fail(SWGPU_EDB, "taxonomy database %s: taxid %" PRIu32 ": offset %" PRIu32
                                          " out of order or past the end of %s (%zu bytes)",
                               bti, be32(e), be32(e + 4), btd, t->dat_len);
    }
    return SWGPU_OK;
}

/* dir/taxdb.bti and .btd: 1 when dir has no taxdb.bti */
static int open_in(const char *dir, swgpu_taxdb_t **out)
{
    size_t dl = strlen(dir);
    char *bti = malloc(dl + 12), *btd = malloc(dl + 12);
    swgpu_taxdb_t *t = calloc(1, sizeof *t);
    int rc;
    if (!bti || !btd || !t) {
        rc = swgpu__fail(SWGPU_ENOMEM, "taxonomy database: out of memory");
        goto done;
    }
    snprintf(bti, dl + 12, "%s%s%s", dir, dl && dir[dl - 1] != '/' ? "/" : "", "taxdb.bti");
    snprintf(btd, dl + 12, "%s%s%s", dir, dl && dir[dl - 1] != '/' ? "/" : "", "taxdb.btd");
    if ((rc = map_path(bti, &t->idx, &t->idx_len)) != 0)
        goto done;
    if ((rc = map_path(btd, &t->dat, &t->dat_len)) != 0) {
        if (rc == 1)
            rc = swgpu__fail(SWGPU_EDB, "taxonomy database %s: no %s beside it", bti, btd);
        goto done;
    }
    if ((rc = check(t, bti, btd)) < 0)
        goto done;
    t->n = be32(t->idx + 4);
    *out = t;
    t = NULL;
done:
    swgpu_taxdb_destroy(t);
    free(bti);
    free(btd);
    return rc;
}

int swgpu_taxdb_open(const char *dir, swgpu_taxdb_t **out)
{
    if (!out)
        return swgpu__fail(SWGPU_EINVAL, "taxdb_open: NULL argument");
    *out = NULL;
    if (dir) {
        int rc = open_in(dir, out);
        return rc < 0 ? rc : SWGPU_OK;
    }
    int rc = open_in(".", out);
    if (rc <= 0)
        return rc;
    const char *env = getenv("BLASTDB");
    for (const char *p = env; p && *p;) {
        size_t n = strcspn(p, ":");
        if (n) {
            char *d = strndup(p, n);
            if (!d)
                return swgpu__fail(SWGPU_ENOMEM, "taxonomy database: out of memory");
            rc = open_in(d, out);
            free(d);
            if (rc <= 0)
                return rc;
        }
        p += n + (p[n] == ':');
    }
    return SWGPU_OK;
}

/* the next field of s[*i, n) up to a tab (1) or the end (0) */
static int field(const char *s, size_t n, size_t *i, const char **f, size_t *fl)
{
    const char *tab = memchr(s + *i, '\t', n - *i);
    *f = s + *i;
    *fl = tab ? (size_t)(tab - *f) : n - *i;
    *i += *fl + (tab != NULL);
    return tab != NULL;
}

int swgpu_taxdb_lookup(const swgpu_taxdb_t *t, int64_t taxid, swgpu_taxon_t *out)
{
    if (!t || !out || !t->dat || taxid <= 0 || taxid > UINT32_MAX)
        return 0;
    size_t lo = 0, hi = t->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        uint32_t v = be32(t->idx + TAXDB_HEAD + 8 * mid);
        if (v < taxid)
            lo = mid + 1;
        else
            hi = mid;
    }
    const uint8_t *e = t->idx + TAXDB_HEAD + 8 * lo;
    if (lo == t->n || be32(e) != taxid)
        return 0;
    size_t b = be32(e + 4), end = lo + 1 < t->n ? be32(e + 12) : t->dat_len, i = 0;
    const char *s = (const char *)t->dat + b;
    size_t n = end - b;
    if (!field(s, n, &i, &out->sciname, &out->sciname_len) ||
        !field(s, n, &i, &out->comname, &out->comname_len) ||
        !field(s, n, &i, &out->blastname, &out->blastname_len))
        return 0;
    out->kingdom = s + i;
    out->kingdom_len = n - i;
    return out->kingdom_len > 0;
}
