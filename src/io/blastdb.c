/*
 * blastdb.c - NCBI BLAST databases read directly (no conversion step): the
 * files makeblastdb writes, format versions 4 and 5, protein and
 * nucleotide, one volume or several.
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
 * Ids.  A sequence's id and description come from the first Blast-def-line
 * of its header:
 *  - makeblastdb without -parse_seqids stores the Seq-id gnl|BL_ORD_ID|OID
 *    and the whole FASTA header line as the title: the id is the title's
 *    first word and the description the rest, exactly as the FASTA reader
 *    splits that line;
 *  - with -parse_seqids the id is every Seq-id in FASTA form joined by '|',
 *    as `blastdbcmd -outfmt %f -long_seqids` prints them (sp|P69905.2|HBA_HUMAN,
 *    tr|..|.. for unreviewed UniProt, gi|12345|ref|NP_000001.1|, pdb|1ABC|A,
 *    gnl|db|tag, ...), except that a lone local id is printed without "lcl|",
 *    as it was written in the FASTA file; the description is the title;
 *  - a sequence stored once for several entries (several Blast-def-lines)
 *    gets " >ids title" of each further one added to its description, as
 *    blastdbcmd shows them.
 * Descriptions are trimmed of blanks at both ends, as the FASTA reader trims.
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
#define BER_MAX_DEPTH 32             /* Blast-def-line-sets nest about 8 deep */

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
    char *p;
    size_t n, cap;
    int oom;
} sbuf_t; /* a growing string; oom set when it could not grow */

typedef struct {
    const char *name; /* the database as given */
    int nucl;         /* 1: nucleotide (.n* files), 0: protein (.p*) */
    vol_t *vol;
    size_t nvol, capvol;
    swgpu__file_id_t *files;
    size_t nfiles, capfiles;
    sbuf_t id, desc; /* the current record's */
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

/* ------------------------------------------------------------- ASN.1 BER */

typedef struct {
    uint8_t id;            /* identifier octet: class, constructed bit, tag (< 31) */
    const uint8_t *c, *ce; /* contents */
    const uint8_t *next;   /* the byte after the element (and its end-of-contents) */
} ber_t;

/* the element at p (not past end); -1 with *why set when malformed */
static int ber_get(const uint8_t *p, const uint8_t *end, int depth, ber_t *e, const char **why)
{
    if (depth > BER_MAX_DEPTH)
        return *why = "nested too deeply", -1;
    if (end - p < 2)
        return *why = "truncated element", -1;
    uint8_t id = p[0], l = p[1];
    if ((id & 0x1f) == 0x1f)
        return *why = "unsupported tag", -1;
    p += 2;
    if (l == 0x80) { /* indefinite: the children, then 00 00 */
        if (!(id & 0x20))
            return *why = "indefinite length on a primitive element", -1;
        const uint8_t *q = p;
        for (;;) {
            if (end - q >= 2 && q[0] == 0 && q[1] == 0)
                break;
            ber_t sub;
            if (ber_get(q, end, depth + 1, &sub, why))
                return -1;
            q = sub.next;
        }
        e->c = p;
        e->ce = q;
        e->next = q + 2;
    } else {
        uint64_t len = l;
        if (l > 0x80) {
            int k = l & 0x7f;
            if (k > 4)
                return *why = "length too large", -1;
            if (end - p < k)
                return *why = "truncated length", -1;
            len = 0;
            for (int i = 0; i < k; i++)
                len = len << 8 | *p++;
        }
        if ((uint64_t)(end - p) < len)
            return *why = "element runs past the end of the header", -1;
        e->c = p;
        e->ce = p + len;
        e->next = p + len;
    }
    e->id = id;
    return 0;
}

/* the next child of constructed element e at *pos: 1, 0 at the end, -1 bad */
static int ber_child(const ber_t *e, const uint8_t **pos, int depth, ber_t *child, const char **why)
{
    if (*pos >= e->ce)
        return 0;
    if (ber_get(*pos, e->ce, depth, child, why))
        return -1;
    *pos = child->next;
    return 1;
}

/* the one element inside an explicitly tagged element ([n] { x }) */
static int ber_inner(const ber_t *e, int depth, ber_t *in, const char **why)
{
    const uint8_t *pos = e->c;
    if (!(e->id & 0x20))
        return *why = "a tagged field is not constructed", -1;
    int r = ber_child(e, &pos, depth + 1, in, why);
    if (r <= 0)
        return r < 0 ? -1 : (*why = "empty tagged field", -1);
    if (pos != e->ce)
        return *why = "a tagged field holds more than one element", -1;
    return 0;
}

/* a character string (VisibleString, as NCBI writes; UTF8/Printable/IA5 too) */
static int ber_str(const ber_t *e, const uint8_t **s, size_t *n, const char **why)
{
    if (e->id != 0x1a && e->id != 0x0c && e->id != 0x13 && e->id != 0x16)
        return *why = "expected a string", -1;
    *s = e->c;
    *n = (size_t)(e->ce - e->c);
    return 0;
}

static int ber_int(const ber_t *e, int64_t *v, const char **why)
{
    size_t n = (size_t)(e->ce - e->c);
    if (e->id != 0x02 || n < 1 || n > 8)
        return *why = "expected an INTEGER", -1;
    uint64_t u = e->c[0] & 0x80 ? UINT64_MAX : 0;
    for (size_t i = 0; i < n; i++)
        u = u << 8 | e->c[i];
    *v = (int64_t)u;
    return 0;
}

/* [tag] { string } and [tag] { INTEGER } fields */
static int field_str(const ber_t *e, int depth, const uint8_t **s, size_t *n, const char **why)
{
    ber_t in;
    return ber_inner(e, depth, &in, why) ? -1 : ber_str(&in, s, n, why);
}

static int field_int(const ber_t *e, int depth, int64_t *v, const char **why)
{
    ber_t in;
    return ber_inner(e, depth, &in, why) ? -1 : ber_int(&in, v, why);
}

/* ------------------------------------------------------ Seq-ids as text */

static void sb_add(sbuf_t *b, const void *s, size_t n)
{
    if (b->oom)
        return;
    if (b->n + n + 1 > b->cap) {
        size_t c = b->cap ? b->cap : 256;
        while (c < b->n + n + 1)
            c *= 2;
        char *q = realloc(b->p, c);
        if (!q) {
            b->oom = 1;
            return;
        }
        b->p = q;
        b->cap = c;
    }
    if (n)
        memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = 0;
}

static void sb_str(sbuf_t *b, const char *s)
{
    sb_add(b, s, strlen(s));
}

static void sb_int(sbuf_t *b, int64_t v)
{
    char t[24];
    int k = snprintf(t, sizeof t, "%" PRId64, v);
    sb_add(b, t, (size_t)k);
}

/* Object-id ::= CHOICE { id [0] INTEGER, str [1] VisibleString } */
static int fmt_object_id(const ber_t *choice, int depth, sbuf_t *b, const char **why)
{
    const uint8_t *s;
    size_t n;
    int64_t v;
    if (choice->id == 0xa0) {
        if (field_int(choice, depth, &v, why))
            return -1;
        sb_int(b, v);
    } else if (choice->id == 0xa1) {
        if (field_str(choice, depth, &s, &n, why))
            return -1;
        sb_add(b, s, n);
    } else {
        return *why = "invalid Object-id", -1;
    }
    return 0;
}

/* The fields [0]..[7] of a SEQUENCE whose fields are explicitly tagged:
 * f[n] is field n when bit n of *have is set; other elements are skipped. */
static int seq_fields(const ber_t *seq, int depth, ber_t f[8], unsigned *have, const char **why)
{
    ber_t c;
    const uint8_t *pos = seq->c;
    int r;
    *have = 0;
    if (seq->id != 0x30)
        return *why = "expected a SEQUENCE", -1;
    while ((r = ber_child(seq, &pos, depth + 1, &c, why)) > 0) {
        unsigned t = c.id & 0x1f;
        if ((c.id & 0xe0) == 0xa0 && t < 8) {
            f[t] = c;
            *have |= 1u << t;
        }
    }
    return r;
}

/* an optional string field: empty when absent */
static int opt_str(const ber_t f[8], unsigned have, int n, int depth, const uint8_t **s,
                   size_t *len, const char **why)
{
    *s = NULL;
    *len = 0;
    return have >> n & 1 ? field_str(&f[n], depth, s, len, why) : 0;
}

/* Textseq-id ::= SEQUENCE { name [0], accession [1], release [2], version [3] }
 * as prefix|accession[.version]|name; UniProt's unreviewed swissprot is "tr" */
static int fmt_textseq(const ber_t *seq, int depth, const char *prefix, sbuf_t *b,
                       const char **why)
{
    ber_t f[8];
    unsigned have;
    const uint8_t *name, *acc, *rel;
    size_t nname, nacc, nrel;
    int64_t ver = 0;
    if (seq_fields(seq, depth, f, &have, why) ||
        opt_str(f, have, 0, depth + 1, &name, &nname, why) ||
        opt_str(f, have, 1, depth + 1, &acc, &nacc, why) ||
        opt_str(f, have, 2, depth + 1, &rel, &nrel, why) ||
        (have & 8 && field_int(&f[3], depth + 1, &ver, why)))
        return -1;
    if (!strcmp(prefix, "sp") && nrel == 10 && !memcmp(rel, "unreviewed", 10))
        prefix = "tr";
    sb_str(b, prefix);
    sb_add(b, "|", 1);
    sb_add(b, acc, nacc);
    if (nacc && ver > 0) {
        sb_add(b, ".", 1);
        sb_int(b, ver);
    }
    sb_add(b, "|", 1);
    sb_add(b, name, nname);
    return 0;
}

/* Giimport-id ::= SEQUENCE { id [0] INTEGER, db [1], release [2] }: gim|id */
static int fmt_giim(const ber_t *seq, int depth, sbuf_t *b, const char **why)
{
    ber_t f[8];
    unsigned have;
    int64_t v;
    if (seq_fields(seq, depth, f, &have, why))
        return -1;
    if (!(have & 1))
        return *why = "Giimport-id without id", -1;
    if (field_int(&f[0], depth + 1, &v, why))
        return -1;
    sb_str(b, "gim|");
    sb_int(b, v);
    return 0;
}

/* Patent-seq-id ::= SEQUENCE { seqid [0] INTEGER, cit [1] Id-pat }, Id-pat ::=
 * SEQUENCE { country [0], id [1] CHOICE { number [0], app-number [1] },
 * doc-type [2] }: pat|country|number|seqid (pgp|... for an application) */
static int fmt_patent(const ber_t *seq, int depth, sbuf_t *b, const char **why)
{
    ber_t f[8], g[8], cit, id;
    unsigned have, ghave;
    int64_t seqno = 0;
    const uint8_t *country, *num;
    size_t ncountry, nnum;
    if (seq_fields(seq, depth, f, &have, why))
        return -1;
    if ((have & 3) != 3)
        return *why = "Patent-seq-id without seqid or cit", -1;
    if (field_int(&f[0], depth + 1, &seqno, why) || ber_inner(&f[1], depth + 1, &cit, why) ||
        seq_fields(&cit, depth + 2, g, &ghave, why) ||
        opt_str(g, ghave, 0, depth + 3, &country, &ncountry, why))
        return -1;
    if (!(ghave & 2))
        return *why = "Id-pat without id", -1;
    if (ber_inner(&g[1], depth + 3, &id, why))
        return -1;
    if (id.id != 0xa0 && id.id != 0xa1)
        return *why = "invalid Id-pat id", -1;
    if (field_str(&id, depth + 4, &num, &nnum, why))
        return -1;
    sb_str(b, id.id == 0xa1 ? "pgp|" : "pat|");
    sb_add(b, country, ncountry);
    sb_add(b, "|", 1);
    sb_add(b, num, nnum);
    sb_add(b, "|", 1);
    sb_int(b, seqno);
    return 0;
}

/* Dbtag ::= SEQUENCE { db [0] VisibleString, tag [1] Object-id }: gnl|db|tag */
static int fmt_dbtag(const ber_t *seq, int depth, sbuf_t *b, const char **why)
{
    ber_t f[8], tag;
    unsigned have;
    const uint8_t *db;
    size_t ndb;
    if (seq_fields(seq, depth, f, &have, why) || opt_str(f, have, 0, depth + 1, &db, &ndb, why))
        return -1;
    if (!(have & 2))
        return *why = "Dbtag without tag", -1;
    if (ber_inner(&f[1], depth + 1, &tag, why))
        return -1;
    sb_str(b, "gnl|");
    sb_add(b, db, ndb);
    sb_add(b, "|", 1);
    return fmt_object_id(&tag, depth + 2, b, why);
}

/* PDB-seq-id ::= SEQUENCE { mol [0], chain [1] INTEGER (default ' '), rel [2],
 * chain-id [3] }: pdb|mol|chain-id, or the chain as a letter */
static int fmt_pdb(const ber_t *seq, int depth, sbuf_t *b, const char **why)
{
    ber_t f[8];
    unsigned have;
    const uint8_t *mol, *cid;
    size_t nmol, ncid;
    int64_t chain = ' ';
    if (seq_fields(seq, depth, f, &have, why) || opt_str(f, have, 0, depth + 1, &mol, &nmol, why) ||
        opt_str(f, have, 3, depth + 1, &cid, &ncid, why) ||
        (have & 2 && field_int(&f[1], depth + 1, &chain, why)))
        return -1;
    sb_str(b, "pdb|");
    sb_add(b, mol, nmol);
    sb_add(b, "|", 1);
    if (have & 8) {
        sb_add(b, cid, ncid);
    } else if (chain > ' ' && chain < 127) {
        char ch = (char)chain;
        sb_add(b, &ch, 1);
    }
    return 0;
}

static const char *const seqid_prefix[20] = {
    "lcl", "bbs", "bbm", "gim", "gb",  "emb", "pir", "sp",  "pat", "ref",
    "gnl", "gi",  "dbj", "prf", "pdb", "tpg", "tpe", "tpd", "gpp", "nat"};

/* one Seq-id (a CHOICE, tag [0]..[19]) in FASTA form */
static int fmt_seqid(const ber_t *choice, int depth, sbuf_t *b, const char **why)
{
    unsigned tag = choice->id & 0x1f;
    ber_t in;
    int64_t v;
    if ((choice->id & 0xe0) != 0xa0 || tag >= 20)
        return *why = "unknown Seq-id type", -1;
    if (ber_inner(choice, depth, &in, why))
        return -1;
    depth++;
    switch (tag) {
    case 0: /* local: Object-id */
        sb_str(b, "lcl|");
        return fmt_object_id(&in, depth, b, why);
    case 1: case 2: case 11: /* gibbsq, gibbmt, gi: INTEGER */
        if (ber_int(&in, &v, why))
            return -1;
        sb_str(b, seqid_prefix[tag]);
        sb_add(b, "|", 1);
        sb_int(b, v);
        return 0;
    case 3: return fmt_giim(&in, depth, b, why);
    case 8: return fmt_patent(&in, depth, b, why);
    case 10: return fmt_dbtag(&in, depth, b, why);
    case 14: return fmt_pdb(&in, depth, b, why);
    default: /* genbank, embl, pir, swissprot, other (refseq), ddbj, prf, tpg, ... */
        return fmt_textseq(&in, depth, seqid_prefix[tag], b, why);
    }
}

/* One Blast-def-line: its Seq-ids in FASTA form joined by '|', appended to
 * ids (with bare_local, a lone local id without "lcl|"), and its title; *ord
 * is 1 when the only Seq-id is makeblastdb's gnl|BL_ORD_ID|n (no
 * -parse_seqids). */
static int parse_defline(const ber_t *def, int bare_local, sbuf_t *ids, const uint8_t **title,
                         size_t *tlen, int *ord, const char **why)
{
    ber_t f, list, id;
    const uint8_t *pos = def->c;
    size_t start = ids->n;
    int r, nid = 0, first_tag = -1;
    *title = (const uint8_t *)""; /* no title: empty (never NULL: callers step through it) */
    *tlen = 0;
    if (def->id != 0x30)
        return *why = "not a Blast-def-line", -1;
    while ((r = ber_child(def, &pos, 2, &f, why)) > 0) {
        if (f.id == 0xa0) {
            if (field_str(&f, 2, title, tlen, why))
                return -1;
        } else if (f.id == 0xa1) {
            const uint8_t *lp;
            if (ber_inner(&f, 2, &list, why))
                return -1;
            if (list.id != 0x30)
                return *why = "invalid Seq-id list", -1;
            lp = list.c;
            while ((r = ber_child(&list, &lp, 4, &id, why)) > 0) {
                if (nid++)
                    sb_add(ids, "|", 1);
                else
                    first_tag = id.id & 0x1f;
                if (fmt_seqid(&id, 4, ids, why))
                    return -1;
            }
            if (r < 0)
                return -1;
        } else if (f.id < 0xa2 || f.id > 0xa5) { /* taxid, memberships, links, other-info */
            return *why = "unexpected Blast-def-line field", -1;
        }
    }
    if (r < 0)
        return -1;
    if (!nid)
        return *why = "no Seq-id", -1;
    if (ids->oom)
        return *why = "out of memory", -1;
    *ord = nid == 1 && first_tag == 10 && !strncmp(ids->p + start, "gnl|BL_ORD_ID|", 14);
    if (bare_local && nid == 1 && first_tag == 0) { /* lcl|x -> x */
        memmove(ids->p + start, ids->p + start + 4, ids->n - start - 4 + 1);
        ids->n -= 4;
    }
    return 0;
}

static int is_blank(uint8_t c)
{
    return c == ' ' || c == '\t';
}

static void trim(const uint8_t **t, size_t *n)
{
    while (*n && is_blank(**t))
        ++*t, --*n;
    while (*n && is_blank((*t)[*n - 1]))
        --*n;
}

/* A sequence's id and description as blastdbcmd's FASTA dump shows its
 * header: the first Blast-def-line gives the id (its Seq-ids, or without
 * -parse_seqids the title's first word) and the description (the title, or
 * the rest of it); each further Blast-def-line (a sequence stored once for
 * several entries) adds " >ids title" to the description. */
static int parse_header(const uint8_t *p, size_t n, sbuf_t *id, sbuf_t *desc, const char **why)
{
    ber_t set, def;
    const uint8_t *pos, *t;
    size_t tl;
    int r, ord, k = 0;
    id->n = desc->n = 0;
    sb_add(id, "", 0);
    sb_add(desc, "", 0);
    if (ber_get(p, p + n, 0, &set, why))
        return -1;
    if (set.id != 0x30)
        return *why = "not a Blast-def-line-set", -1;
    if (set.next != p + n)
        return *why = "data after the Blast-def-line-set", -1;
    pos = set.c;
    while ((r = ber_child(&set, &pos, 1, &def, why)) > 0) {
        if (k++ == 0) {
            if (parse_defline(&def, 1, id, &t, &tl, &ord, why))
                return -1;
            trim(&t, &tl);
            if (ord) { /* the title is the FASTA header line */
                size_t w = 0;
                while (w < tl && !is_blank(t[w]))
                    w++;
                id->n = 0;
                sb_add(id, t, w);
                t += w;
                tl -= w;
                trim(&t, &tl);
            }
            sb_add(desc, t, tl);
        } else {
            size_t mark;
            sb_add(desc, " >", 2);
            mark = desc->n;
            if (parse_defline(&def, 0, desc, &t, &tl, &ord, why))
                return -1;
            if (ord)
                desc->n = mark;
            else
                sb_add(desc, " ", 1);
            trim(&t, &tl);
            sb_add(desc, t, tl);
        }
    }
    if (r < 0)
        return -1;
    if (!k)
        return *why = "no Blast-def-line", -1;
    if (id->oom || desc->oom)
        return *why = "out of memory", -1;
    t = (const uint8_t *)desc->p;
    tl = desc->n;
    trim(&t, &tl);
    memmove(desc->p, t, tl);
    desc->p[tl] = 0;
    desc->n = tl;
    return 0;
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
    if (parse_header(v->hdr.p + h0, h1 - h0, &c->id, &c->desc, &why)) {
        if (c->id.oom || c->desc.oom)
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
    free(prefix);
    swgpu_seqset_destroy(set);
    return rc;
}
