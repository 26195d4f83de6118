/*
 * io/blastdb.c - NCBI BLAST databases read directly (no conversion step):
 * the files makeblastdb writes, format versions 4 and 5, protein and
 * nucleotide, one volume or several: alias files, volumes' index, residues.
 * The headers (ASN.1 Blast-def-line-sets) become ids and descriptions in
 * blastdb_hdr.c.
 *
 * A database is named by a prefix P.  P.pal / P.nal is an alias file: text
 * lines "KEY value", '#' comments, and "DBLIST a b ..." naming volumes or
 * further alias files (paths relative to the alias file's directory,
 * possibly in double quotes).  A volume V is three files, all integers
 * big-endian unless said otherwise:
 *
 *   V.pin / V.nin  index   u32 format version (4 or 5), u32 type (1 protein,
 *                          0 nucleotide), [v5: u32 volume number], title
 *                          (u32 length + bytes), [v5: LMDB file name, same
 *                          form], date (same form, NUL-padded), u32 number
 *                          of sequences n, u64 LITTLE-endian total residues,
 *                          u32 longest, then u32 arrays of n+1 offsets:
 *                          headers, sequences and (nucleotide) ambiguities;
 *   V.psq          protein: a NUL, then each sequence in NCBIstdaa byte
 *                          codes followed by a NUL; sequence i is
 *                          [seq[i], seq[i+1] - 1);
 *   V.nsq          nucleotide: sequence i is the ncbi2na bases at
 *                          [seq[i], amb[i]), four per byte from the high
 *                          bits, the last byte's low 2 bits counting the
 *                          bases in it; [amb[i], seq[i+1]) the ambiguities:
 *                          a u32 count (high bit: the long form), then per
 *                          run an ncbi4na code, the run length less one and
 *                          the 0-based position: 4 + 4 + 24 bits (short
 *                          form), or 4 + 12 + 16 high bits of the position
 *                          and a u32 of its low bits (long form);
 *   V.phr / V.nhr  headers: record i at [hdr[i], hdr[i+1]) is an ASN.1 BER
 *                          Blast-def-line-set: SEQUENCE OF Blast-def-line
 *                          { title [0] VisibleString, seqid [1] SEQUENCE OF
 *                          Seq-id, taxid [2], memberships [3], links [4],
 *                          other-info [5] }, explicitly tagged, definite or
 *                          indefinite lengths.
 *
 * Version 5 adds LMDB files (accession -> OID, taxonomy) that searching does
 * not need; its sequence and header files are those of version 4.
 *
 * Residues.  NCBIstdaa codes map to the protein alphabet letter for letter
 * (B, Z, X, U, O, J and '*' included); ncbi2na bases and ncbi4na ambiguity
 * codes (N and the IUPAC codes) to the DNA alphabet.  The gap code ('-') is
 * read as X / N and counted as an unknown letter, as the FASTA reader counts
 * '-'.  Trailing '*'s are stripped and a sequence left empty is skipped, as
 * the FASTA reader does, so that searching a database gives what searching
 * the FASTA file it was built from gives.
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

#define ALIAS_MAX_DEPTH 16           /* alias files within alias files */
#define ALIAS_MAX_BYTES (16u << 20)  /* an alias file larger is not one */

/* ----------------------------------------------------------------- files */

typedef struct {
    char *path;
    const uint8_t *p; /* contents; never NULL */
    size_t n;
    void *map;        /* the mapping (NULL for an empty file) */
} mfile_t;

typedef struct {
    char *prefix;
    mfile_t idx, seq, hdr;
    uint32_t version, n, maxlen;
    uint64_t total;
    const uint8_t *hoff, *soff, *aoff; /* n+1 offsets each (aoff: nucleotide only) */
    uint64_t oid0;                     /* OID of its first sequence in the database */
} vol_t;

typedef struct {
    const char *name; /* the database as given */
    int nucl;         /* 1: nucleotide (.n* files), 0: protein (.p*) */
    vol_t *vol;
    size_t nvol, capvol;
    swgpu__file_id_t *files;
    size_t nfiles, capfiles;
    swgpu__sbuf_t id, desc; /* the current record's */
    swgpu__hdr_info_t hi;   /* its info block (blastp's subject columns) */
} ctx_t;

static const uint8_t empty_file[1];

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint64_t le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static int grow_array(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return SWGPU_OK;
    size_t c = *cap ? *cap * 2 : 8;
    while (c < need)
        c *= 2;
    void *q = realloc(*p, c * elem);
    if (!q)
        return swgpu__fail(SWGPU_ENOMEM, "BLAST database: out of memory");
    *p = q;
    *cap = c;
    return SWGPU_OK;
}

static char *concat(const char *a, size_t alen, const char *b)
{
    size_t blen = strlen(b);
    char *s = malloc(alen + blen + 1);
    if (s) {
        memcpy(s, a, alen);
        memcpy(s + alen, b, blen + 1);
    }
    return s;
}

static int is_regular(const char *path, struct stat *st)
{
    struct stat tmp;
    if (!st)
        st = &tmp;
    return stat(path, st) == 0 && S_ISREG(st->st_mode);
}

static int add_file_id(ctx_t *c, const struct stat *st)
{
    int rc = grow_array((void **)&c->files, &c->capfiles, c->nfiles + 1, sizeof *c->files);
    if (rc)
        return rc;
    c->files[c->nfiles++] = (swgpu__file_id_t){(uint64_t)st->st_dev, (uint64_t)st->st_ino};
    return SWGPU_OK;
}

/* map prefix+ext read-only; f->path is set (owned) even on failure */
static int map_file(ctx_t *c, mfile_t *f, const char *prefix, const char *ext)
{
    struct stat st;
    f->p = empty_file;
    f->n = 0;
    f->map = NULL;
    if (!(f->path = concat(prefix, strlen(prefix), ext)))
        return swgpu__fail(SWGPU_ENOMEM, "BLAST database %s: out of memory", c->name);
    int fd = open(f->path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return swgpu__fail(SWGPU_EIO, "BLAST database file %s: %s", f->path, strerror(errno));
    int rc = SWGPU_OK;
    if (fstat(fd, &st) != 0) {
        rc = swgpu__fail(SWGPU_EIO, "BLAST database file %s: %s", f->path, strerror(errno));
    } else if (!S_ISREG(st.st_mode)) {
        rc = swgpu__fail(SWGPU_EIO, "BLAST database file %s: not a regular file", f->path);
    } else if ((uint64_t)st.st_size > SIZE_MAX / 2) {
        rc = swgpu__fail(SWGPU_ERANGE, "BLAST database file %s: too large", f->path);
    } else if ((rc = add_file_id(c, &st)) == SWGPU_OK && st.st_size > 0) {
        void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (m == MAP_FAILED) {
            rc = swgpu__fail(SWGPU_EIO, "BLAST database file %s: mmap failed: %s", f->path,
                             strerror(errno));
        } else {
            f->map = m;
            f->p = m;
            f->n = (size_t)st.st_size;
        }
    }
    close(fd);
    return rc;
}

static void unmap_file(mfile_t *f)
{
    if (f->map)
        munmap(f->map, f->n);
    f->map = NULL;
    f->p = empty_file;
    f->n = 0;
}

static void free_file(mfile_t *f)
{
    unmap_file(f);
    free(f->path);
    f->path = NULL;
}

#define BAD(f, ...) swgpu__fail(SWGPU_EDB, "BLAST database file " f, __VA_ARGS__)

/* ------------------------------------------------------------ alias files */

static int add_volume(ctx_t *c, char *prefix)
{
    int rc = grow_array((void **)&c->vol, &c->capvol, c->nvol + 1, sizeof *c->vol);
    if (rc) {
        free(prefix);
        return rc;
    }
    vol_t *v = &c->vol[c->nvol++];
    memset(v, 0, sizeof *v);
    v->prefix = prefix;
    return SWGPU_OK;
}

/* keys that select part of the listed volumes: refused, not ignored */
static const char *const subset_keys[] = {"GILIST",   "TILIST",    "SEQIDLIST", "TAXIDLIST",
                                          "OIDLIST",  "FIRST_OID", "LAST_OID",  "MEMB_BIT"};

static int read_alias(ctx_t *c, const char *prefix, int depth);

/* the volumes (and alias files) that one DBLIST entry names */
static int add_entry(ctx_t *c, const char *alias_path, const struct stat *alias_st,
                     const char *prefix, const char *tok, size_t toklen, int depth)
{
    size_t dirlen = 0;
    if (tok[0] != '/') { /* relative to the alias file's directory */
        const char *slash = strrchr(prefix, '/');
        dirlen = slash ? (size_t)(slash - prefix) + 1 : 0;
    }
    char *entry = malloc(dirlen + toklen + 5);
    if (!entry)
        return swgpu__fail(SWGPU_ENOMEM, "BLAST database %s: out of memory", c->name);
    memcpy(entry, prefix, dirlen);
    memcpy(entry + dirlen, tok, toklen);
    entry[dirlen + toklen] = 0;
    size_t elen = dirlen + toklen;
    struct stat st;
    strcpy(entry + elen, c->nucl ? ".nal" : ".pal");
    int is_alias = is_regular(entry, &st) &&
                   !(st.st_dev == alias_st->st_dev && st.st_ino == alias_st->st_ino);
    entry[elen] = 0;
    if (is_alias) {
        if (depth + 1 >= ALIAS_MAX_DEPTH) {
            int rc = swgpu__fail(SWGPU_EDB, "BLAST database alias file %s: alias files nested more "
                                            "than %d deep (a cycle?) at %s",
                                 alias_path, ALIAS_MAX_DEPTH, entry);
            free(entry);
            return rc;
        }
        int rc = read_alias(c, entry, depth + 1);
        free(entry);
        return rc;
    }
    return add_volume(c, entry);
}

static int read_alias(ctx_t *c, const char *prefix, int depth)
{
    mfile_t f;
    struct stat st;
    int rc = map_file(c, &f, prefix, c->nucl ? ".nal" : ".pal");
    if (rc)
        goto done;
    if (f.n > ALIAS_MAX_BYTES || stat(f.path, &st) != 0) {
        rc = BAD("%s: not an alias file (%zu bytes)", f.path, f.n);
        goto done;
    }
    /* the last DBLIST line; subset keys refused */
    const char *p = (const char *)f.p, *end = p + f.n;
    const char *list = NULL, *list_end = NULL;
    unsigned line = 0;
    while (p < end) {
        const char *e = memchr(p, '\n', (size_t)(end - p));
        if (!e)
            e = end;
        line++;
        const char *k = p;
        while (k < e && (*k == ' ' || *k == '\t' || *k == '\r'))
            k++;
        const char *ke = k;
        while (ke < e && *ke != ' ' && *ke != '\t' && *ke != '\r')
            ke++;
        for (const char *q = p; q < e; q++)
            if (*q == 0) {
                rc = BAD("%s, line %u: binary data (not an alias file)", f.path, line);
                goto done;
            }
        if (k < e && *k != '#') {
            size_t kl = (size_t)(ke - k);
            if (kl == 6 && !memcmp(k, "DBLIST", 6)) {
                list = ke;
                list_end = e;
            }
            for (size_t i = 0; i < sizeof subset_keys / sizeof *subset_keys; i++)
                if (kl == strlen(subset_keys[i]) && !memcmp(k, subset_keys[i], kl)) {
                    rc = swgpu__fail(SWGPU_EDB, "BLAST database alias file %s, line %u: %s "
                                                "(a subset of the listed databases) is not "
                                                "supported",
                                     f.path, line, subset_keys[i]);
                    goto done;
                }
        }
        p = e + (e < end);
    }
    if (!list) {
        rc = BAD("%s: no DBLIST line", f.path);
        goto done;
    }
    size_t nent = 0;
    for (const char *q = list; q < list_end;) {
        while (q < list_end && (*q == ' ' || *q == '\t' || *q == '\r'))
            q++;
        if (q == list_end)
            break;
        const char *t = q, *te;
        if (*q == '"') {
            t = ++q;
            while (q < list_end && *q != '"')
                q++;
            if (q == list_end) {
                rc = BAD("%s: DBLIST has an unterminated quote", f.path);
                goto done;
            }
            te = q++;
        } else {
            while (q < list_end && *q != ' ' && *q != '\t' && *q != '\r')
                q++;
            te = q;
        }
        if (te == t) {
            rc = BAD("%s: DBLIST has an empty name", f.path);
            goto done;
        }
        if ((rc = add_entry(c, f.path, &st, prefix, t, (size_t)(te - t), depth)) < 0)
            goto done;
        nent++;
    }
    if (!nent)
        rc = BAD("%s: DBLIST names no database", f.path);
done:
    free_file(&f);
    return rc;
}

/* ------------------------------------------------------------------ index */

static int parse_index(ctx_t *c, vol_t *v)
{
    int rc = map_file(c, &v->idx, v->prefix, c->nucl ? ".nin" : ".pin");
    if (rc)
        return rc;
    const char *path = v->idx.path;
    const uint8_t *p = v->idx.p, *end = p + v->idx.n;
#define NEED(k, what)                                                                      \
    do {                                                                                   \
        if ((uint64_t)(end - p) < (uint64_t)(k))                                           \
            return BAD("%s: truncated in the %s (%zu bytes)", path, what, v->idx.n);       \
    } while (0)
    NEED(8, "header");
    v->version = be32(p);
    uint32_t type = be32(p + 4);
    p += 8;
    if (v->version != 4 && v->version != 5)
        return BAD("%s: format version %" PRIu32 " (versions 4 and 5 are read)", path,
                   v->version);
    if (type != (c->nucl ? 0u : 1u))
        return BAD("%s: sequence type %" PRIu32 ", expected %u (%s)", path, type,
                   c->nucl ? 0 : 1, c->nucl ? "nucleotide" : "protein");
    if (v->version == 5) {
        NEED(4, "volume number");
        p += 4;
    }
    static const char *const strings[] = {"title", "LMDB file name", "date"};
    for (int s = 0; s < 3; s++) {
        if (s == 1 && v->version != 5)
            continue;
        NEED(4, strings[s]);
        uint32_t len = be32(p);
        p += 4;
        NEED(len, strings[s]);
        p += len;
    }
    NEED(16, "counts");
    v->n = be32(p);
    v->total = le64(p + 4);
    v->maxlen = be32(p + 12);
    p += 16;
    uint64_t arrays = c->nucl ? 3 : 2, want = arrays * ((uint64_t)v->n + 1) * 4;
    if ((uint64_t)(end - p) != want)
        return BAD("%s: %s (%" PRIu32 " sequences need %" PRIu64 " bytes of offsets, the file has "
                   "%zu)",
                   path, (uint64_t)(end - p) < want ? "truncated" : "unexpected data at the end",
                   v->n, want, (size_t)(end - p));
#undef NEED
    v->hoff = p;
    v->soff = p + 4 * ((size_t)v->n + 1);
    v->aoff = c->nucl ? p + 8 * ((size_t)v->n + 1) : NULL;
    return SWGPU_OK;
}

/* ---------------------------------------------------------------- residues */

typedef struct {
    uint8_t prot[256];  /* NCBIstdaa byte -> code; 0xFF: not a residue */
    uint8_t na4[16];    /* ncbi4na -> code */
    uint64_t n_unknown, first_unknown;
    uint64_t n_empty, first_empty;
    char first_unknown_id[64], first_empty_id[64];
} decode_t;

static void decode_init(decode_t *d)
{
    static const char stdaa[] = "-ABCDEFGHIKLMNPQRSTVWXYZU*OJ"; /* NCBIstdaa 0..27 */
    static const char na4[] = "-ACMGRSVTWYHKDBN";               /* ncbi4na 0..15 */
    memset(d, 0, sizeof *d);
    memset(d->prot, 0xFF, sizeof d->prot);
    d->prot[0] = SWGPU_PROT_X; /* the gap: counted as unknown */
    for (int k = 1; stdaa[k]; k++)
        d->prot[k] = (uint8_t)swgpu_encode(SWGPU_PROTEIN, stdaa[k]);
    d->na4[0] = SWGPU_DNA_N;
    for (int k = 1; na4[k]; k++)
        d->na4[k] = (uint8_t)swgpu_encode(SWGPU_DNA, na4[k]);
}

/* headers' control characters are refused, as in FASTA headers (a tab is a blank) */
static int check_text(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint8_t ch = (uint8_t)s[i];
        if ((ch < ' ' && ch != '\t') || ch == 127)
            return ch | 0x100;
    }
    return 0;
}

/* id and description of record i from its header (in c->id, c->desc) */
static int record_names(ctx_t *c, vol_t *v, uint32_t i)
{
    uint64_t oid = v->oid0 + i;
    uint32_t h0 = be32(v->hoff + 4 * (size_t)i), h1 = be32(v->hoff + 4 * ((size_t)i + 1));
    const char *why = NULL;
    if (h0 >= h1 || h1 > v->hdr.n)
        return BAD("%s, OID %" PRIu64 ": header offsets %" PRIu32 "..%" PRIu32 " outside the "
                   "file (%zu bytes) or out of order",
                   v->hdr.path, oid, h0, h1, v->hdr.n);
    if (swgpu__blastdb_header(v->hdr.p + h0, h1 - h0, &c->id, &c->desc, &c->hi, &why)) {
        if (c->id.oom || c->desc.oom || c->hi.info.oom || (why && !strcmp(why, "out of memory")))
            return swgpu__fail(SWGPU_ENOMEM, "BLAST database %s: out of memory", c->name);
        return BAD("%s, OID %" PRIu64 ": invalid header (%s)", v->hdr.path, oid, why);
    }
    int ctl = check_text(c->id.p, c->id.n);
    if (!ctl)
        ctl = check_text(c->desc.p, c->desc.n);
    if (ctl)
        return BAD("%s, OID %" PRIu64 ": control character 0x%02x in the header", v->hdr.path,
                   oid, ctl & 0xff);
    return SWGPU_OK;
}

static void note(char *dst, size_t cap, const char *id, size_t idlen)
{
    snprintf(dst, cap, "%.*s", (int)(idlen < cap ? idlen : cap - 1), id);
}

/* where a record's residues are, its offsets checked against the file */
typedef struct {
    uint64_t oid;
    const uint8_t *raw; /* protein: NCBIstdaa codes; nucleotide: packed bases */
    uint64_t len;       /* residues */
    const uint8_t *amb; /* nucleotide: the ambiguity data, amb_bytes long */
    size_t amb_bytes;
} rec_t;

static int locate(const ctx_t *c, const vol_t *v, uint32_t i, rec_t *r)
{
    uint32_t s = be32(v->soff + 4 * (size_t)i), e = be32(v->soff + 4 * ((size_t)i + 1));
    r->oid = v->oid0 + i;
    r->len = 0;
    r->raw = v->seq.p + s;
    r->amb = NULL;
    r->amb_bytes = 0;
    if (!c->nucl) { /* the codes, then a NUL */
        if (s >= e || e > v->seq.n)
            return BAD("%s, OID %" PRIu64 ": sequence offsets %" PRIu32 "..%" PRIu32
                       " outside the file (%zu bytes) or out of order",
                       v->seq.path, r->oid, s, e, v->seq.n);
        if (v->seq.p[e - 1] != 0)
            return BAD("%s, OID %" PRIu64 ": no NUL byte after the sequence", v->seq.path, r->oid);
        r->len = e - s - 1;
        return SWGPU_OK;
    }
    uint32_t a = be32(v->aoff + 4 * (size_t)i); /* packed bases, at least one byte */
    if (s >= a || a > e || e > v->seq.n)
        return BAD("%s, OID %" PRIu64 ": sequence offsets %" PRIu32 "..%" PRIu32 "..%" PRIu32
                   " outside the file (%zu bytes) or out of order",
                   v->seq.path, r->oid, s, a, e, v->seq.n);
    r->len = (uint64_t)(a - s - 1) * 4 + (r->raw[a - s - 1] & 3);
    r->amb = v->seq.p + a;
    r->amb_bytes = e - a;
    return SWGPU_OK;
}

/* the first n codes of a protein record into res; *miss: gaps */
static int decode_prot(const vol_t *v, const rec_t *r, const decode_t *d, uint64_t n,
                       uint8_t *res, uint64_t *miss)
{
    uint8_t bad = 0;
    uint64_t gaps = 0;
    for (uint64_t k = 0; k < n; k++) {
        uint8_t code = d->prot[r->raw[k]];
        bad |= code == 0xFF;
        gaps += r->raw[k] == 0;
        res[k] = code;
    }
    *miss = gaps;
    if (!bad)
        return SWGPU_OK;
    uint64_t k = 0;
    while (d->prot[r->raw[k]] != 0xFF)
        k++;
    return BAD("%s, OID %" PRIu64 ": invalid residue byte 0x%02x at position %" PRIu64,
               v->seq.path, r->oid, r->raw[k], k + 1);
}

/* a nucleotide record into res: the packed bases, then the ambiguity runs;
 * *miss: bases given as gaps */
static int decode_nucl(const vol_t *v, const rec_t *r, const decode_t *d, uint8_t *res,
                       uint64_t *miss)
{
    uint64_t full = r->len / 4, k = 0; /* whole bytes; then the last, with the count */
    for (uint64_t j = 0; j < full; j++, k += 4) { /* four bases a byte, high bits first */
        uint8_t b = r->raw[j];
        res[k] = b >> 6;
        res[k + 1] = (b >> 4) & 3;
        res[k + 2] = (b >> 2) & 3;
        res[k + 3] = b & 3;
    }
    for (int i = 0; k < r->len; k++, i++)
        res[k] = (r->raw[full] >> (6 - 2 * i)) & 3;
    *miss = 0;
    if (!r->amb_bytes)
        return SWGPU_OK;
    const uint8_t *q = r->amb;
    if (r->amb_bytes < 4 || r->amb_bytes % 4)
        return BAD("%s, OID %" PRIu64 ": ambiguity data of %zu bytes", v->seq.path, r->oid,
                   r->amb_bytes);
    uint32_t cnt = be32(q);
    int lng = cnt >> 31; /* the long form: two words a run */
    uint64_t words = cnt & 0x7fffffffu;
    if (4 + 4 * words != r->amb_bytes || (lng && words % 2))
        return BAD("%s, OID %" PRIu64 ": ambiguity count %" PRIu64 " does not fit its %zu bytes",
                   v->seq.path, r->oid, words, r->amb_bytes);
    for (uint64_t w = 0; w < words; w += 1 + lng) {
        uint32_t x = be32(q + 4 + 4 * w);
        uint8_t code = x >> 28;
        uint64_t run, pos;
        if (lng) {
            run = ((x >> 16) & 0xfff) + 1;
            pos = (uint64_t)(x & 0xffff) << 32 | be32(q + 8 + 4 * w);
        } else {
            run = ((x >> 24) & 0xf) + 1;
            pos = x & 0xffffff;
        }
        if (pos > r->len || run > r->len - pos)
            return BAD("%s, OID %" PRIu64 ": ambiguity run of %" PRIu64 " at %" PRIu64
                       " past the end of the sequence (%" PRIu64 " bases)",
                       v->seq.path, r->oid, run, pos, r->len);
        memset(res + pos, d->na4[code], (size_t)run);
        if (code == 0)
            *miss += run;
    }
    return SWGPU_OK;
}

/* one volume's sequences, appended to set */
static int read_volume(ctx_t *c, vol_t *v, swgpu_seqset_t *set, decode_t *d)
{
    uint64_t total = 0, maxlen = 0;
    for (uint32_t i = 0; i < v->n; i++) {
        rec_t r;
        int rc = locate(c, v, i, &r);
        if (!rc)
            rc = record_names(c, v, i);
        if (rc)
            return rc;
        total += r.len;
        if (r.len > maxlen)
            maxlen = r.len;
        uint64_t keep = r.len;
        if (!c->nucl) /* trailing stops, as the FASTA reader strips them */
            while (keep && r.raw[keep - 1] == 25)
                keep--;
        if (!keep) {
            if (!d->n_empty++) {
                d->first_empty = r.oid;
                note(d->first_empty_id, sizeof d->first_empty_id, c->id.p, c->id.n);
            }
            continue;
        }
        uint8_t *res;
        uint64_t miss;
        if ((rc = swgpu__seqset_append(set, c->id.p, c->id.n, c->desc.p, c->desc.n,
                                       (size_t)keep, &res)) ||
            (rc = swgpu__seqset_add_bytes(set, c->hi.info.p, c->hi.info.n)) ||
            (rc = c->nucl ? decode_nucl(v, &r, d, res, &miss)
                          : decode_prot(v, &r, d, keep, res, &miss)))
            return rc;
        if (miss && !d->n_unknown) {
            d->first_unknown = r.oid;
            note(d->first_unknown_id, sizeof d->first_unknown_id, c->id.p, c->id.n);
        }
        d->n_unknown += miss;
    }
    if (total != v->total || maxlen != v->maxlen)
        return BAD("%s: the index says %" PRIu64 " residues, longest %" PRIu32 "; the sequences "
                   "have %" PRIu64 ", longest %" PRIu64,
                   v->idx.path, v->total, v->maxlen, total, maxlen);
    return SWGPU_OK;
}

/* ------------------------------------------------------------------- entry */

static int has_ext(const char *path, const char *ext)
{
    size_t n = strlen(path);
    return n > 4 && !strcmp(path + n - 4, ext);
}

static const char *const blast_ext[4] = {".pal", ".pin", ".nal", ".nin"};

/* prefix+ext is a regular file */
static int exists(const char *prefix, size_t plen, const char *ext)
{
    char *p = concat(prefix, plen, ext);
    int r = p && is_regular(p, NULL);
    free(p);
    return r;
}

/* the prefix of path: path itself, or path less a .pal/.pin/.nal/.nin */
static size_t prefix_len(const char *path)
{
    size_t n = strlen(path);
    for (int k = 0; k < 4; k++)
        if (has_ext(path, blast_ext[k]) && is_regular(path, NULL))
            return n - 4;
    return n;
}

int swgpu__blastdb_probe(const char *path)
{
    if (!path || !*path)
        return 0;
    size_t n = strlen(path), pl = prefix_len(path);
    if (pl != n)
        return 1;
    if (is_regular(path, NULL))
        return 0;
    for (int k = 0; k < 4; k++)
        if (exists(path, n, blast_ext[k]))
            return 1;
    return 0;
}

/* the sizes of prefix's (plen bytes) sequence, header and index files, summed */
static uint64_t volume_bytes(const char *prefix, size_t plen)
{
    static const char *const ext[6] = {".pin", ".psq", ".phr", ".nin", ".nsq", ".nhr"};
    uint64_t sum = 0;
    struct stat st;
    for (int k = 0; k < 6; k++) {
        char *p = concat(prefix, plen, ext[k]);
        if (p && is_regular(p, &st))
            sum += (uint64_t)st.st_size;
        free(p);
    }
    return sum;
}

uint64_t swgpu__blastdb_bytes(const char *path)
{
    size_t pl = prefix_len(path);
    uint64_t sum = volume_bytes(path, pl), v;
    char *p = malloc(pl + 16);
    if (!p)
        return sum;
    memcpy(p, path, pl);
    for (int k = 0; k < 1000; k++) { /* makeblastdb's volumes: P.00, P.01, ... */
        snprintf(p + pl, 16, ".%02d", k);
        if (!(v = volume_bytes(p, strlen(p))))
            break;
        sum += v;
    }
    free(p);
    return sum;
}

int swgpu__blastdb_read(const char *path, swgpu_alphabet_t alphabet, swgpu_seqset_t **out,
                        swgpu_read_info_t *info, swgpu__file_id_t **files, size_t *nfiles)
{
    ctx_t c;
    decode_t d;
    swgpu_seqset_t *set = NULL;
    char *prefix = NULL;
    int rc;
    memset(&c, 0, sizeof c);
    *out = NULL;
    if (info)
        memset(info, 0, sizeof *info);
    if (files) {
        *files = NULL;
        *nfiles = 0;
    }
    if (!path)
        return swgpu__fail(SWGPU_EINVAL, "BLAST database: no name");
    c.name = path;
    size_t pl = prefix_len(path);
    if (!(prefix = concat(path, pl, ""))) {
        rc = swgpu__fail(SWGPU_ENOMEM, "BLAST database %s: out of memory", path);
        goto done;
    }
    int has_p = exists(prefix, pl, ".pal") || exists(prefix, pl, ".pin");
    int has_n = exists(prefix, pl, ".nal") || exists(prefix, pl, ".nin");
    int named_volume = 0;
    if (pl != strlen(path)) { /* named by one of its files: that type, that file */
        has_p = path[pl + 1] == 'p';
        has_n = !has_p;
        named_volume = path[pl + 3] == 'n';
    }
    if (alphabet == SWGPU_AUTO && has_p && has_n) {
        rc = swgpu__fail(SWGPU_EINVAL, "BLAST database %s: both a protein and a nucleotide "
                                       "database have this name (--type prot|dna chooses)",
                         path);
        goto done;
    }
    if ((alphabet == SWGPU_PROTEIN && !has_p) || (alphabet == SWGPU_DNA && !has_n) ||
        (!has_p && !has_n)) {
        if (has_p || has_n)
            rc = swgpu__fail(SWGPU_EALPHABET, "BLAST database %s holds %s sequences, %s was "
                                              "asked for",
                             path, has_p ? "protein" : "dna", swgpu_alphabet_name(alphabet));
        else
            rc = swgpu__fail(SWGPU_EIO, "BLAST database %s: no %s.pal, .pin, .nal or .nin", path,
                             prefix);
        goto done;
    }
    c.nucl = alphabet == SWGPU_DNA || (alphabet == SWGPU_AUTO && has_n);
    if (!named_volume && exists(prefix, pl, c.nucl ? ".nal" : ".pal")) {
        if ((rc = read_alias(&c, prefix, 0)) < 0)
            goto done;
    } else {
        char *vp = concat(prefix, pl, "");
        if (!vp) {
            rc = swgpu__fail(SWGPU_ENOMEM, "BLAST database %s: out of memory", path);
            goto done;
        }
        if ((rc = add_volume(&c, vp)) < 0)
            goto done;
    }

    /* the indexes, then the residues reserved at once */
    uint64_t total = 0, nseq = 0;
    for (size_t k = 0; k < c.nvol; k++) {
        vol_t *v = &c.vol[k];
        if ((rc = parse_index(&c, v)) < 0 ||
            (rc = map_file(&c, &v->seq, v->prefix, c.nucl ? ".nsq" : ".psq")) < 0 ||
            (rc = map_file(&c, &v->hdr, v->prefix, c.nucl ? ".nhr" : ".phr")) < 0)
            goto done;
        if (v->total > (uint64_t)v->seq.n * (c.nucl ? 4 : 1)) {
            rc = BAD("%s: %" PRIu64 " residues cannot be in %s (%zu bytes)", v->idx.path,
                     v->total, v->seq.path, v->seq.n);
            goto done;
        }
        v->oid0 = nseq;
        nseq += v->n;
        total += v->total;
    }
    swgpu_alphabet_t a = c.nucl ? SWGPU_DNA : SWGPU_PROTEIN;
    if ((rc = swgpu_seqset_create(a, &set)) < 0 || (rc = swgpu__seqset_reserve(set, total)) < 0)
        goto done;
    set->blast_info = 1;
    decode_init(&d);
    for (size_t k = 0; k < c.nvol; k++) {
        if ((rc = read_volume(&c, &c.vol[k], set, &d)) < 0)
            goto done;
        unmap_file(&c.vol[k].seq);
        unmap_file(&c.vol[k].hdr);
        unmap_file(&c.vol[k].idx);
    }
    if (d.n_empty)
        swgpu__log(SWGPU_LOG_WARN, "BLAST database %s: %" PRIu64 " sequences with no residues "
                                   "but '*' skipped (first: OID %" PRIu64 ", id %s)",
                   path, d.n_empty, d.first_empty, d.first_empty_id);
    if (d.n_unknown)
        swgpu__log(SWGPU_LOG_WARN, "BLAST database %s: %" PRIu64 " gap codes ('-') read as %c "
                                   "(first in OID %" PRIu64 ", id %s)",
                   path, d.n_unknown, c.nucl ? 'N' : 'X', d.first_unknown, d.first_unknown_id);
    if (swgpu_seqset_size(set) == 0) {
        rc = swgpu__fail(SWGPU_EEMPTY, "BLAST database %s: no non-empty sequence (%" PRIu64
                                       " sequences)",
                         path, nseq);
        goto done;
    }
    if (info) {
        info->n_records = set->n;
        info->n_empty = d.n_empty;
        info->n_unknown = d.n_unknown;
        info->n_residues = set->off[set->n];
        info->max_len = set->max_len;
    }
    *out = set;
    set = NULL;
    if (files) {
        *files = c.files;
        *nfiles = c.nfiles;
        c.files = NULL;
    }
    rc = SWGPU_OK;
done:
    for (size_t k = 0; k < c.nvol; k++) {
        free_file(&c.vol[k].idx);
        free_file(&c.vol[k].seq);
        free_file(&c.vol[k].hdr);
        free(c.vol[k].prefix);
    }
    free(c.vol);
    free(c.files);
    free(c.id.p);
    free(c.desc.p);
    swgpu__hdr_info_free(&c.hi);
    free(prefix);
    swgpu_seqset_destroy(set);
    return rc;
}
