/*
 * fasta.c - reading FASTA and FASTQ, plain or gzip-compressed, into a
 * sequence set of encoded residues; the whole of a small file
 * (swgpu__read_file) and the limit on what a reading may hold.
 *
 * Reading works in two passes over the residues:
 *  1. the parser walks the file line by line (read into one large buffer,
 *     through inflate when the content is gzip, plain files as they are)
 *     and stores each sequence line's letters, upper-cased and with
 *     whitespace and digits dropped, through a 256-entry table;
 *  2. when the file is done, the alphabet is decided (SWGPU_AUTO: DNA if at
 *     least 90% of the letters other than N are A, C, G, T or U, over the
 *     WHOLE file) and the stored letters are encoded in place.
 * Letters outside the alphabet become X (protein) or N (DNA); they are
 * counted and reported in one warning per file.
 *
 * Details of the accepted text:
 *  - a record starts with '>' (FASTA) or '@' (FASTQ) at the start of a line,
 *    also right after a FASTA record (the format may change per record);
 *    a '>' elsewhere in a header is part of the header;
 *  - header: id = first word (space or tab delimited), desc = the rest,
 *    trimmed; an empty id is an error, so are control characters in a
 *    header (binary data);
 *  - a line starting with ';' outside a FASTQ record is a comment;
 *  - line ends: LF or CRLF; a carriage return inside a line (CR-only line
 *    ends) is an error;
 *  - gzip: members one after another; anything after the last one but zero
 *    bytes (ignored with a warning) is an error;
 *  - sequence lines: letters in either case, '*' (a stop); whitespace and
 *    digits are ignored; other printable characters ('-', '.', ...) count
 *    as unknown letters; control characters and bytes >= 0x80 are an error;
 *    trailing '*'s of a record are stripped, a '*' inside is kept (protein
 *    code 23; in DNA it is an unknown letter);
 *  - FASTQ: sequence lines up to a line starting with '+', then quality
 *    lines until they hold as many characters as the sequence; a mismatch
 *    is an error;
 *  - blank lines between records and a UTF-8 byte-order mark are ignored;
 *    records whose sequence is empty are skipped (one warning per file).
 */
#define _POSIX_C_SOURCE 200809L
#include "io/io.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

/* --------------------------------------------------------- line reader */

/*
 * The file's bytes go to buf as they are (plain text) or through inflate
 * (gzip, detected from its first two bytes).  Concatenated gzip members are
 * read one after the other; what follows the last member must be nothing,
 * or zero bytes (padding: a warning), anything else is an error (zlib's
 * gzread dropped it silently).  Everything the reader and the set it fills
 * hold stays under a limit (swgpu__set_read_limit), checked as they grow.
 */
typedef struct {
    int fd;
    const char *path;
    char *buf;
    size_t cap, beg, end; /* unread bytes are buf[beg, end) */
    int eof;
    uint64_t lineno;      /* number of the line last returned (1-based) */
    uint64_t nbytes;      /* bytes read so far (uncompressed) */
    int gz;               /* gzip: in[] goes through zs */
    int zinit, member_end;
    z_stream zs;          /* in[] bytes not consumed yet: zs.next_in, zs.avail_in */
    unsigned char *in;
    size_t in_cap;
    int in_eof;
    uint64_t in_pos;      /* file bytes read into in[] so far */
    const swgpu_seqset_t *set; /* the set being filled (its memory counts) */
    uint64_t limit;       /* bytes the reading may hold */
} reader_t;

static _Atomic uint64_t read_limit; /* 0: SWGPU_READ_LIMIT, else half of physical memory */

void swgpu__set_read_limit(uint64_t bytes)
{
    read_limit = bytes;
}

/* the limit of one reading (0 and the message set: SWGPU_READ_LIMIT is bad) */
int swgpu__get_read_limit(uint64_t *out)
{
    const char *env = getenv("SWGPU_READ_LIMIT");
    if ((*out = read_limit)) return SWGPU_OK;
    if (env && *env) {
        if (swgpu_parse_size(env, out) || *out == 0)
            return swgpu__fail(SWGPU_EINVAL, "SWGPU_READ_LIMIT: '%s' is not a size (bytes, or "
                               "with a suffix K, M, G or T)", env);
        return SWGPU_OK;
    }
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    *out = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page / 2 : UINT64_MAX;
    return SWGPU_OK;
}

/* bytes held by the reading: the line buffer, the set's residues and names */
static uint64_t held(const reader_t *r, uint64_t more)
{
    const swgpu_seqset_t *s = r->set;
    return r->cap + r->in_cap + more + (s ? s->res_cap + s->names_cap + s->cap * 16 : 0);
}

/* the limit reached at line lineno */
static int over_limit(const reader_t *r, uint64_t lineno)
{
    return swgpu__fail(SWGPU_EBUDGET, "file %s, line %" PRIu64 ": more than %" PRIu64 " bytes "
                       "held while reading (the limit for reading: SWGPU_READ_LIMIT, by default "
                       "half of the physical memory)", r->path, lineno, r->limit);
}

/* up to n bytes of the file at dst: the count, 0 at its end, < 0 on error */
static ssize_t rd_raw(reader_t *r, void *dst, size_t n)
{
    for (;;) {
        ssize_t got = read(r->fd, dst, n);
        if (got >= 0) return got;
        if (errno != EINTR) return swgpu__fail(SWGPU_EIO, "file %s: %s", r->path, strerror(errno));
    }
}

/* more file bytes after the unconsumed ones (moved to the front of in[]) */
static int in_more(reader_t *r)
{
    if (r->zs.avail_in && r->zs.next_in != r->in) memmove(r->in, r->zs.next_in, r->zs.avail_in);
    r->zs.next_in = r->in;
    ssize_t got = rd_raw(r, r->in + r->zs.avail_in, r->in_cap - r->zs.avail_in);
    if (got < 0) return (int)got;
    if (got == 0) r->in_eof = 1;
    r->zs.avail_in += (uInt)got;
    r->in_pos += (uint64_t)got;
    return 0;
}

/* open: the first bytes decide plain or gzip */
static int rd_open(reader_t *r, int fd, size_t in_cap)
{
    r->fd = fd;
    r->in_cap = in_cap;
    if (!(r->in = malloc(in_cap))) return swgpu__fail(SWGPU_ENOMEM, "file %s: out of memory", r->path);
    r->zs.next_in = r->in;
    int rc;
    while (r->zs.avail_in < 2 && !r->in_eof)
        if ((rc = in_more(r)) < 0) return rc;
    if (r->zs.avail_in >= 2 && r->in[0] == 0x1f && r->in[1] == 0x8b) {
        r->gz = 1;
        if (inflateInit2(&r->zs, 15 + 16) != Z_OK)
            return swgpu__fail(SWGPU_ENOMEM, "file %s: out of memory", r->path);
        r->zinit = 1;
    }
    return 0;
}

static void rd_close(reader_t *r)
{
    if (r->zinit) inflateEnd(&r->zs);
    if (r->fd >= 0) close(r->fd);
    free(r->in);
    free(r->buf);
}

/* after a gzip member: another member, the end, or zero padding to the end */
static int rd_member_end(reader_t *r)
{
    int rc;
    while (r->zs.avail_in < 2 && !r->in_eof)
        if ((rc = in_more(r)) < 0) return rc;
    if (r->zs.avail_in == 0) {
        r->eof = 1;
        return 0;
    }
    if (r->zs.avail_in >= 2 && r->zs.next_in[0] == 0x1f && r->zs.next_in[1] == 0x8b) {
        if (inflateReset(&r->zs) != Z_OK)
            return swgpu__fail(SWGPU_EFORMAT, "file %s: corrupt gzip data (%s)", r->path,
                               r->zs.msg ? r->zs.msg : "zlib error");
        r->member_end = 0;
        return 0;
    }
    uint64_t at = r->in_pos - r->zs.avail_in, zeros = 0;
    for (;;) {
        for (uInt i = 0; i < r->zs.avail_in; i++)
            if (r->zs.next_in[i])
                return swgpu__fail(SWGPU_EFORMAT, "file %s: data after the end of the gzip stream "
                                   "is not gzip (byte %" PRIu64 " of the file)", r->path,
                                   r->in_pos - r->zs.avail_in + i + 1);
        zeros += r->zs.avail_in;
        r->zs.avail_in = 0;
        if (r->in_eof) break;
        if ((rc = in_more(r)) < 0) return rc;
    }
    swgpu__log(SWGPU_LOG_WARN, "file %s: %" PRIu64 " zero bytes after the end of the gzip stream "
               "(from byte %" PRIu64 ") ignored", r->path, zeros, at + 1);
    r->eof = 1;
    return 0;
}

/* read more bytes after buf[end]; sets eof at a clean end of input */
static int rd_fill(reader_t *r)
{
    if (r->end == r->cap) {
        size_t nc = r->cap * 2;
        if (held(r, nc - r->cap) > r->limit) return over_limit(r, r->lineno + 1);
        char *p = realloc(r->buf, nc);
        if (!p) return swgpu__fail(SWGPU_ENOMEM, "file %s: out of memory (line %" PRIu64 " longer than %zu bytes)",
                                   r->path, r->lineno + 1, r->cap);
        r->buf = p;
        r->cap = nc;
    }
    size_t want = r->cap - r->end;
    if (want > (1u << 30)) want = 1u << 30;
    if (!r->gz) {
        ssize_t n;
        if (r->zs.avail_in) { /* the bytes read to tell plain from gzip */
            n = r->zs.avail_in < want ? (ssize_t)r->zs.avail_in : (ssize_t)want;
            memcpy(r->buf + r->end, r->zs.next_in, (size_t)n);
            r->zs.next_in += n;
            r->zs.avail_in -= (uInt)n;
        } else if ((n = rd_raw(r, r->buf + r->end, want)) < 0) {
            return (int)n;
        }
        if (n == 0) r->eof = 1;
        r->end += (size_t)n;
        r->nbytes += (uint64_t)n;
        return 0;
    }
    for (;;) {
        int rc;
        if (r->member_end) {
            if ((rc = rd_member_end(r)) < 0) return rc;
            if (r->eof) return 0;
        }
        if (!r->zs.avail_in && !r->in_eof && (rc = in_more(r)) < 0) return rc;
        r->zs.next_out = (Bytef *)r->buf + r->end;
        r->zs.avail_out = (uInt)want;
        int z = inflate(&r->zs, Z_NO_FLUSH);
        size_t n = want - r->zs.avail_out;
        r->end += n;
        r->nbytes += n;
        if (z == Z_STREAM_END)
            r->member_end = 1;
        else if (z == Z_MEM_ERROR)
            return swgpu__fail(SWGPU_ENOMEM, "file %s: out of memory while decompressing", r->path);
        else if (z != Z_OK && z != Z_BUF_ERROR)
            return swgpu__fail(SWGPU_EFORMAT, "file %s: corrupt gzip data (%s)", r->path,
                               r->zs.msg ? r->zs.msg : "zlib error");
        else if (!n && !r->zs.avail_in && r->in_eof)
            return swgpu__fail(SWGPU_EFORMAT, "file %s: truncated gzip data (unexpected end of file)", r->path);
        if (n) return 0;
    }
}

/* Next line without its '\n' (and '\r's before it); 1: a line, 0: end of input. */
static int rd_line(reader_t *r, char **line, size_t *len)
{
    size_t scan = r->beg;
    for (;;) {
        char *nl = memchr(r->buf + scan, '\n', r->end - scan);
        if (nl || (r->eof && r->beg < r->end)) {
            char *s = r->buf + r->beg;
            char *e = nl ? nl : r->buf + r->end;
            r->beg = (size_t)(e - r->buf) + (nl != NULL);
            while (e > s && e[-1] == '\r') e--;
            *line = s;
            *len = (size_t)(e - s);
            r->lineno++;
            return 1;
        }
        if (r->eof) return 0;
        /* move the partial line to the front, then read more */
        if (r->beg) {
            memmove(r->buf, r->buf + r->beg, r->end - r->beg);
            r->end -= r->beg;
            r->beg = 0;
        }
        scan = r->end;
        int rc = rd_fill(r);
        if (rc) return rc;
    }
}

/* The whole of file path (plain or gzip, read as the sequence reader reads
 * it: data after the gzip stream that is not gzip is an error) in a
 * NUL-terminated buffer of *len bytes (the caller frees it); at most max
 * bytes, else SWGPU_EFORMAT. */
int swgpu__read_file(const char *path, size_t max, char **out, size_t *len)
{
    reader_t r;
    int rc;
    memset(&r, 0, sizeof r);
    r.path = path;
    r.fd = -1;
    *out = NULL;
    *len = 0;
    if ((rc = swgpu__get_read_limit(&r.limit)) < 0)
        return rc;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return swgpu__fail(errno == ENOMEM ? SWGPU_ENOMEM : SWGPU_EIO, "file %s: %s", path,
                           strerror(errno));
    if ((rc = rd_open(&r, fd, 64u << 10)) < 0)
        goto done;
    r.cap = 64u << 10;
    if (!(r.buf = malloc(r.cap))) {
        rc = swgpu__fail(SWGPU_ENOMEM, "file %s: out of memory", path);
        goto done;
    }
    while (!r.eof) {
        if (r.end > max) {
            rc = swgpu__fail(SWGPU_EFORMAT, "file %s: larger than %zu bytes", path, max);
            goto done;
        }
        size_t from = r.end;
        if ((rc = rd_fill(&r)) < 0) /* grows buf under the reading limit */
            goto done;
        for (const char *q = r.buf + from; (q = memchr(q, '\n', r.end - (size_t)(q - r.buf)));
             q++)
            r.lineno++; /* the lines read, for the limit's message */
    }
    if (r.end > max) {
        rc = swgpu__fail(SWGPU_EFORMAT, "file %s: larger than %zu bytes", path, max);
        goto done;
    }
    if (r.end == r.cap) {
        char *b = realloc(r.buf, r.cap + 1);
        if (!b) {
            rc = swgpu__fail(SWGPU_ENOMEM, "file %s: out of memory", path);
            goto done;
        }
        r.buf = b;
    }
    r.buf[r.end] = '\0';
    *out = r.buf;
    *len = r.end;
    r.buf = NULL;
    rc = SWGPU_OK;
done:
    r.fd = fd;
    rd_close(&r);
    return rc;
}

/* ------------------------------------------------------------- parsing */

/* raw[c]: 0 skip (whitespace, digit), 0xFF binary data or a '\r' inside a
 * line (CR-only line ends), else the byte to store (letters upper-cased; '*' and other punctuation kept as is and
 * encoded later, punctuation as an unknown letter). */
void swgpu__fasta_raw_table(uint8_t raw[256])
{
    for (int c = 0; c < 256; c++) {
        if (c >= 'a' && c <= 'z') raw[c] = (uint8_t)(c - 'a' + 'A');
        else if (c >= '0' && c <= '9') raw[c] = 0;
        else if (c == ' ' || c == '\t' || c == '\v' || c == '\f') raw[c] = 0;
        else if (c > ' ' && c < 127) raw[c] = (uint8_t)c;
        else raw[c] = 0xFF;
    }
}

void swgpu__fasta_split_header(const char *h, size_t len, swgpu__fasta_hdr_t *out)
{
    size_t i = 0;
    while (i < len && (h[i] == ' ' || h[i] == '\t')) i++;
    size_t ib = i;
    while (i < len && h[i] != ' ' && h[i] != '\t') i++;
    size_t ie = i;
    while (i < len && (h[i] == ' ' || h[i] == '\t')) i++;
    size_t de = len;
    while (de > i && (h[de - 1] == ' ' || h[de - 1] == '\t')) de--;
    out->id = ib;
    out->idlen = ie - ib;
    out->desc = i;
    out->dlen = de - i;
}

size_t swgpu__fasta_header_bad(const char *h, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)h[i];
        if ((c < ' ' && c != '\t') || c == 127)
            return i;
    }
    return len;
}

typedef struct {
    reader_t r;
    swgpu_seqset_t *set;
    uint8_t raw[256];
    uint64_t rec;          /* records started (1-based number of the current) */
    uint64_t n_empty;
    uint64_t first_empty;  /* record number of the first empty record */
    char first_empty_id[64];
} parser_t;

static const char *cur_id(const parser_t *p)
{
    return p->set->names + p->set->name_off[p->set->n];
}

static int cr_only(const parser_t *p)
{
    return swgpu__fail(SWGPU_EFORMAT, "file %s, line %" PRIu64 ": CR-only line ends (a carriage "
                       "return without a line feed): convert the line ends, e.g. tr '\\r' '\\n'",
                       p->r.path, p->r.lineno);
}

/* header line (without its '>' / '@'): id = first word, desc = the rest */
static int parse_header(parser_t *p, const char *h, size_t len)
{
    size_t bad = swgpu__fasta_header_bad(h, len);
    if (bad < len) {
        unsigned char c = (unsigned char)h[bad];
        if (c == '\r')
            return cr_only(p);
        return swgpu__fail(SWGPU_EFORMAT, "file %s, line %" PRIu64 ": binary data (byte 0x%02x) in header of record %" PRIu64,
                           p->r.path, p->r.lineno, c, p->rec);
    }
    swgpu__fasta_hdr_t f;
    swgpu__fasta_split_header(h, len, &f);
    if (f.idlen == 0)
        return swgpu__fail(SWGPU_EFORMAT, "file %s, line %" PRIu64 ": record %" PRIu64 " has an empty id "
                           "(nothing after '%c')", p->r.path, p->r.lineno, p->rec, h[-1]);
    if (held(&p->r, len + 2) > p->r.limit)
        return over_limit(&p->r, p->r.lineno);
    int rc = swgpu__seqset_reserve_slot(p->set);
    if (rc) return rc;
    p->set->name_off[p->set->n] = p->set->names_len;
    return swgpu__seqset_add_names(p->set, h + f.id, f.idlen, h + f.desc, f.dlen);
}

/* Hot loop: append the letters of line to the current record, whose
 * residues so far are res[start, *used). */
static int seq_line(parser_t *p, const char *line, size_t len, uint64_t *used)
{
    swgpu_seqset_t *s = p->set;
    if (len == 0) /* a blank line; res may still be NULL (found by fuzz_fasta) */
        return 0;
    if (*used + len > s->res_cap) { /* grown within the limit */
        uint64_t other = held(&p->r, 0) - s->res_cap;
        uint64_t room = p->r.limit > other ? p->r.limit - other : 0;
        if (*used + len > room) return over_limit(&p->r, p->r.lineno);
        int rc = swgpu__seqset_reserve_max(s, *used + len, room);
        if (rc) return rc;
    }
    const uint8_t *src = (const uint8_t *)line;
    const uint8_t *raw = p->raw;
    uint8_t *dst = s->res + *used;
    size_t k = 0;
    int bad = 0;
    for (size_t i = 0; i < len; i++) {
        uint8_t v = raw[src[i]];
        dst[k] = v;
        k += v != 0;
        bad |= v == 0xFF;
    }
    if (bad) {
        size_t i = 0;
        while (raw[src[i]] != 0xFF) i++;
        if (src[i] == '\r')
            return cr_only(p);
        return swgpu__fail(SWGPU_EFORMAT, "file %s, line %" PRIu64 ", record %" PRIu64 " (id %s): binary data (byte 0x%02x) in sequence",
                           p->r.path, p->r.lineno, p->rec, cur_id(p), src[i]);
    }
    *used += k;
    return 0;
}

/* close the current record: strip trailing '*'s, keep or skip it */
static void end_record(parser_t *p, uint64_t used)
{
    swgpu_seqset_t *s = p->set;
    uint64_t start = s->off[s->n];
    while (used > start && s->res[used - 1] == '*') used--;
    if (used == start) {
        if (!p->n_empty++) {
            p->first_empty = p->rec;
            snprintf(p->first_empty_id, sizeof p->first_empty_id, "%s", cur_id(p));
        }
        s->names_len = s->name_off[s->n]; /* drop its names */
        return;
    }
    uint64_t len = used - start;
    s->off[s->n + 1] = used;
    s->n++;
    if (len > s->max_len) s->max_len = len;
}

static int is_blank(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (s[i] != ' ' && s[i] != '\t') return 0;
    return 1;
}

static int parse(parser_t *p)
{
    char *line;
    size_t len;
    int rc = rd_line(&p->r, &line, &len);
    while (rc == 1) {
        if (is_blank(line, len) || line[0] == ';') { /* blank line or comment between records */
            rc = rd_line(&p->r, &line, &len);
            continue;
        }
        uint64_t used = p->set->off[p->set->n];
        if (line[0] == '>') {
            p->rec++;
            if ((rc = parse_header(p, line + 1, len - 1))) return rc;
            while ((rc = rd_line(&p->r, &line, &len)) == 1 && !(len && (line[0] == '>' || line[0] == '@')))
                if (!(len && line[0] == ';') && (rc = seq_line(p, line, len, &used))) return rc;
            if (rc < 0) return rc;
            end_record(p, used);
            continue; /* rc == 1: line is the next header (FASTA or FASTQ); rc == 0: end */
        }
        if (line[0] == '@') {
            p->rec++;
            if ((rc = parse_header(p, line + 1, len - 1))) return rc;
            uint64_t hdr_line = p->r.lineno;
            while ((rc = rd_line(&p->r, &line, &len)) == 1 && !(len && line[0] == '+')) {
                if (len && (line[0] == '@' || line[0] == '>'))
                    return swgpu__fail(SWGPU_EFORMAT, "file %s, line %" PRIu64 ", record %" PRIu64 " (id %s): FASTQ record has no '+' line",
                                       p->r.path, p->r.lineno, p->rec, cur_id(p));
                if ((rc = seq_line(p, line, len, &used))) return rc;
            }
            if (rc < 0) return rc;
            if (rc == 0)
                return swgpu__fail(SWGPU_EFORMAT, "file %s, line %" PRIu64 ", record %" PRIu64 " (id %s): FASTQ record has no '+' line (end of file)",
                                   p->r.path, hdr_line, p->rec, cur_id(p));
            /* quality lines until they cover the sequence */
            uint64_t slen = used - p->set->off[p->set->n], qlen = 0;
            while (qlen < slen) {
                if ((rc = rd_line(&p->r, &line, &len)) < 0) return rc;
                if (rc == 0) break;
                qlen += len;
            }
            if (qlen != slen)
                return swgpu__fail(SWGPU_EFORMAT, "file %s, line %" PRIu64 ", record %" PRIu64 " (id %s): quality length %" PRIu64 " differs from sequence length %" PRIu64,
                                   p->r.path, p->r.lineno, p->rec, cur_id(p), qlen, slen);
            end_record(p, used);
            rc = rd_line(&p->r, &line, &len);
            continue;
        }
        if (p->rec == 0)
            return swgpu__fail(SWGPU_EFORMAT, "file %s, line %" PRIu64 ": expected '>' or '@' at start of record",
                               p->r.path, p->r.lineno);
        return swgpu__fail(SWGPU_EFORMAT, "file %s, line %" PRIu64 ": expected '@' or '>' at start of record %" PRIu64,
                           p->r.path, p->r.lineno, p->rec + 1);
    }
    return rc;
}

/* pass 2: decide the alphabet, encode in place, count unknown letters */
static void encode_all(parser_t *p, swgpu_alphabet_t want, swgpu_read_info_t *info)
{
    swgpu_seqset_t *s = p->set;
    uint64_t total = s->off[s->n];
    if (want == SWGPU_AUTO) {
        uint64_t hist[256] = {0};
        for (uint64_t i = 0; i < total; i++) hist[s->res[i]]++;
        want = swgpu__alphabet_decide(hist);
    }
    s->alphabet = want;
    uint8_t enc[256];
    swgpu__encode_table(want, enc);
    uint8_t unk = want == SWGPU_DNA ? SWGPU_DNA_N : SWGPU_PROT_X;
    uint64_t n_unknown = 0;
    size_t first = 0;
    for (size_t k = 0; k < s->n; k++) {
        uint8_t *r = s->res + s->off[k];
        size_t len = (size_t)(s->off[k + 1] - s->off[k]);
        size_t miss = 0;
        for (size_t i = 0; i < len; i++) {
            uint8_t c = enc[r[i]];
            miss += c == SWGPU__NOCODE;
            r[i] = c == SWGPU__NOCODE ? unk : c;
        }
        if (miss && !n_unknown) first = k;
        n_unknown += miss;
    }
    if (n_unknown)
        swgpu__log(SWGPU_LOG_WARN, "file %s: %" PRIu64 " letters outside the %s alphabet read as %c (first in sequence %zu, id %s)",
                   p->r.path, n_unknown, swgpu_alphabet_name(want), want == SWGPU_DNA ? 'N' : 'X', first + 1,
                   s->names + s->name_off[first]);
    info->n_unknown = n_unknown;
}


int swgpu__fasta_read_fd(int fd, const char *path, int stream, swgpu_alphabet_t alphabet,
                         swgpu_seqset_t **out, swgpu_read_info_t *info)
{
    parser_t p;
    int rc;
    struct stat st;
    memset(&p, 0, sizeof p);
    p.r.path = path;
    p.r.fd = -1;
    if ((rc = swgpu__get_read_limit(&p.r.limit)) < 0) {
        close(fd);
        return rc;
    }
    /* buffers: 1 MiB for gzip input, 4 MiB for lines (grown for longer
     * ones); a small file gets small ones */
    int regular = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
    uint64_t size = regular ? (uint64_t)st.st_size : UINT64_MAX;
    if (!regular && fstat(fd, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode) || S_ISSOCK(st.st_mode)))
        stream = 1; /* a pipe named by a path (/dev/stdin, <(...)): read once */
    if ((rc = rd_open(&p.r, fd, size < (1u << 20) ? 64u << 10 : 1u << 20)) < 0)
        goto fail;
    p.r.cap = size < (4u << 20) - (64u << 10) ? (size_t)size + (64u << 10) : 4u << 20;
    p.r.buf = malloc(p.r.cap);
    p.set = swgpu__seqset_new(alphabet);
    p.r.set = p.set;
    if (!p.r.buf || !p.set) {
        rc = swgpu__fail(SWGPU_ENOMEM, "file %s: out of memory", path);
        goto fail;
    }
    swgpu__fasta_raw_table(p.raw);

    /* the first 8 bytes, for the magic numbers and a UTF-8 byte-order mark
     * (one read may give fewer: a pipe, a gzip member of a few bytes) */
    while (p.r.end < 8 && !p.r.eof)
        if ((rc = rd_fill(&p.r)) < 0) goto fail;
    if (p.r.end >= 8 && !memcmp(p.r.buf, "SWGPU_DB", 8) && p.r.gz) {
        /* a database is memory-mapped, never decompressed */
        rc = swgpu__fail(SWGPU_EFORMAT, "file %s: a gzip-compressed swgpu database (decompress it "
                         "first: databases are memory-mapped)", path);
        goto fail;
    }
    if (stream && p.r.end >= 8 && !memcmp(p.r.buf, "\0\0\0", 3) &&
        (p.r.buf[3] == 4 || p.r.buf[3] == 5)) {
        rc = swgpu__fail(SWGPU_EFORMAT, "file %s: a BLAST database file cannot be read from a "
                         "stream (give the database's name, as given to makeblastdb -out)", path);
        goto fail;
    }
    if (p.r.end >= 8 && !memcmp(p.r.buf, "SWGPU_DB", 8) && stream) {
        rc = swgpu__fail(SWGPU_EFORMAT, "file %s: a swgpu makedb database cannot be read from "
                         "a stream (databases are memory-mapped: give its file name)", path);
        goto fail;
    }
    if (p.r.end >= 8 && !memcmp(p.r.buf, "SWGPU_DB", 8)) { /* a makedb database */
        rd_close(&p.r);
        swgpu_seqset_destroy(p.set);
        return 1; /* the caller reads it as a database (read.c) */
    }
    /* a UTF-8 byte-order mark before the first record is ignored */
    if (p.r.end >= 3 && !memcmp(p.r.buf, "\xef\xbb\xbf", 3)) p.r.beg = 3;
    if ((rc = parse(&p)) < 0) goto fail;
    if (p.rec == 0) {
        rc = swgpu__fail(SWGPU_EEMPTY, "file %s: empty file", path);
        goto fail;
    }
    if (p.n_empty)
        swgpu__log(SWGPU_LOG_WARN, "file %s: %" PRIu64 " records with an empty sequence skipped (first: record %" PRIu64 ", id %s)",
                   path, p.n_empty, p.first_empty, p.first_empty_id);
    if (p.set->n == 0) {
        rc = swgpu__fail(SWGPU_EEMPTY, "file %s: no non-empty sequence (%" PRIu64 " records, all empty)", path, p.n_empty);
        goto fail;
    }
    encode_all(&p, alphabet, info);
    info->n_records = p.set->n;
    info->n_empty = p.n_empty;
    info->n_residues = p.set->off[p.set->n];
    info->max_len = p.set->max_len;
    rd_close(&p.r);
    *out = p.set;
    return SWGPU_OK;

fail:
    if (p.r.fd < 0) close(fd);
    rd_close(&p.r);
    swgpu_seqset_destroy(p.set);
    memset(info, 0, sizeof *info);
    return rc;
}
