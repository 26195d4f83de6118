/*
 * io/fastapar.c - a plain FASTA file read on several threads (for
 * dbbuild.c), with the result fasta.c gives for it, byte for byte.
 *
 * The file is memory-mapped and cut into pieces that start at a '>' after a
 * line feed (a record start: in a file without FASTQ records no such line
 * is anything else).  Pass 1 walks each piece as fasta.c's parser walks
 * lines, checks everything it checks and counts records, residues, name
 * bytes and lines, without storing anything but each kept record's length
 * and name bytes.  The first piece in file order that found an error names
 * it (its line and record numbers: the pieces before it counted theirs).
 * A line starting with '@' (FASTQ) sends the whole file to fasta.c.  Pass 2,
 * after dbbuild.c has laid the database out, walks the pieces again and
 * writes each record's names and encoded residues into their final places.
 */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE
#include "io/io.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

/* ------------------------------------------------------------ pieces */

enum { P_OK, P_ERR, P_FASTQ };
enum { E_CR, E_HDR_BIN, E_NO_ID, E_SEQ_BIN, E_EXPECT };

typedef struct {
    const unsigned char *beg, *end; /* the piece's bytes */
    int first;                      /* the file's first piece: lines before a record */
    /* pass 1 */
    int status, ekind;
    uint64_t eline, erec;           /* the error's line and record, within the piece */
    unsigned char ebyte;
    const unsigned char *eid;       /* the id of the error's record (in the map) */
    size_t eidlen;
    uint64_t lines, recs;           /* lines and records started */
    uint64_t n, cap;                /* records kept; room in len/nsz */
    uint64_t *len, *nsz;            /* kept records' lengths and name bytes */
    uint64_t residues, names, max_len, max_line, raw_res;
    uint64_t n_empty, first_empty;  /* empty records; the first's record number */
    const unsigned char *empty_id;
    size_t empty_idlen;
    uint64_t *empty;                /* record numbers (within the piece) of empty ones */
    uint64_t empty_cap;
    uint64_t hist[256];
    /* pass 2 */
    uint64_t base, name_base;       /* the first kept record's index, names offset */
    uint64_t n_unknown, first_unknown;
    const char *unknown_id;         /* the first's id (in the names written) */
    int changed;
} piece_t;

struct swgpu__fpar {
    const char *path;
    const unsigned char *map;
    size_t map_len;
    piece_t *pc;
    size_t np;
    int threads, auto_alpha;
    swgpu_alphabet_t alphabet; /* decided after pass 1 */
    uint8_t raw[256];
    uint8_t enc[256];    /* pass 2: byte -> code, 0x80 skip, 0x40 | code unknown */
    char *names;
    uint8_t *res;
    const uint64_t *off;
    const uint32_t *rank;
    uint64_t *out;       /* swgpu__fpar_lengths / _name_offsets */
    int which;
};

static size_t piece_bytes = 8u << 20; /* tests set it lower (SWGPU_FASTA_PIECE) */

/* The pieces: about size / piece_bytes of them (at least 4 per thread on
 * a large file), each starting at "\n>" + 1. */
static int cut(swgpu__fpar_t *F, size_t start, int threads)
{
    size_t len = F->map_len, want = piece_bytes;
    const char *env = getenv("SWGPU_FASTA_PIECE");
    uint64_t v;
    if (env && *env && !swgpu_parse_size(env, &v) && v > 0) want = (size_t)v;
    if (len / want < (size_t)threads * 4 && len >= ((size_t)threads * 4) << 20)
        want = len / ((size_t)threads * 4);
    size_t np = len / want + 1;
    if (!(F->pc = calloc(np, sizeof *F->pc))) return SWGPU_ENOMEM;
    const unsigned char *m = F->map, *at = m + start;
    for (size_t k = 0; at < m + len; k++) {
        const unsigned char *end = m + len;
        if (k + 1 < np) {
            size_t t = len * (k + 1) / np;
            const unsigned char *q = m + (t > (size_t)(at - m) ? t : (size_t)(at - m));
            for (end = m + len; q < m + len; q++) {
                q = memchr(q, '\n', (size_t)(m + len - q));
                if (!q) break;
                if (q + 1 < m + len && q[1] == '>') {
                    end = q + 1;
                    break;
                }
            }
        }
        F->pc[F->np++] = (piece_t){.beg = at, .end = end, .first = k == 0};
        at = end;
    }
    return 0;
}

/* ------------------------------------------------------------ pass 1 */

typedef struct {
    const unsigned char *p, *end;
    uint64_t line;
} lines_t;

/* the next line without its '\n' and the '\r's before it (as rd_line) */
static int next_line(lines_t *L, const unsigned char **s, size_t *len)
{
    if (L->p >= L->end) return 0;
    const unsigned char *s0 = L->p, *nl = memchr(s0, '\n', (size_t)(L->end - s0));
    const unsigned char *e = nl ? nl : L->end;
    L->p = nl ? nl + 1 : L->end;
    while (e > s0 && e[-1] == '\r') e--;
    *s = s0;
    *len = (size_t)(e - s0);
    L->line++;
    return 1;
}

static int blank(const unsigned char *s, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (s[i] != ' ' && s[i] != '\t') return 0;
    return 1;
}

static void fail_at(piece_t *pc, int kind, uint64_t line, unsigned char byte)
{
    pc->status = P_ERR;
    pc->ekind = kind;
    pc->eline = line;
    pc->erec = pc->recs;
    pc->ebyte = byte;
}

/* header h[0, len) (after its '>'): the id's place; 0, or an error set */
static int header(piece_t *pc, const unsigned char *h, size_t len, uint64_t line,
                  const unsigned char **id, size_t *idlen, uint64_t *nsz)
{
    const char *hc = (const char *)h;
    size_t bad = swgpu__fasta_header_bad(hc, len);
    if (bad < len) {
        fail_at(pc, h[bad] == '\r' ? E_CR : E_HDR_BIN, line, h[bad]);
        return -1;
    }
    swgpu__fasta_hdr_t f;
    swgpu__fasta_split_header(hc, len, &f);
    if (f.idlen == 0) {
        fail_at(pc, E_NO_ID, line, '>');
        return -1;
    }
    *id = h + f.id;
    *idlen = f.idlen;
    *nsz = f.idlen + f.dlen + 2;
    return 0;
}

/* trailing '*'s of a record: after a line s[0, len) of raw bytes, *tail
 * (the '*'s at the record's end so far) */
static void star_tail(const uint8_t *raw, const unsigned char *s, size_t len, uint64_t *tail)
{
    size_t i = len;
    uint64_t stars = 0;
    while (i > 0) {
        uint8_t v = raw[s[i - 1]];
        if (v == '*') stars++;
        else if (v) break;
        i--;
    }
    *tail = i > 0 ? stars : *tail + stars;
}

static int grow_u64(uint64_t **p, uint64_t *cap, uint64_t need)
{
    if (need <= *cap) return 0;
    uint64_t c = *cap ? *cap * 2 : 1024;
    while (c < need) c *= 2;
    uint64_t *q = realloc(*p, c * sizeof *q);
    if (!q) return -1;
    *p = q;
    *cap = c;
    return 0;
}

/* a record ended: kept (its length and name bytes) or empty; -1: no memory */
static int end_rec(piece_t *pc, uint64_t cnt, uint64_t tail, uint64_t nsz,
                   const unsigned char *id, size_t idlen)
{
    uint64_t len = cnt - tail;
    if (!len) {
        if (!pc->n_empty++) {
            pc->first_empty = pc->recs;
            pc->empty_id = id;
            pc->empty_idlen = idlen;
        }
        if (grow_u64(&pc->empty, &pc->empty_cap, pc->n_empty)) return -1;
        pc->empty[pc->n_empty - 1] = pc->recs;
        return 0;
    }
    if (pc->n == pc->cap) {
        uint64_t c1 = pc->cap, c2 = pc->cap;
        if (grow_u64(&pc->len, &c1, pc->n + 1) || grow_u64(&pc->nsz, &c2, pc->n + 1)) return -1;
        pc->cap = c1 < c2 ? c1 : c2;
    }
    pc->len[pc->n] = len;
    pc->nsz[pc->n++] = nsz;
    pc->residues += len;
    pc->names += nsz;
    if (len > pc->max_len) pc->max_len = len;
    return 0;
}

/* a sequence line's letters counted (and into hist when asked); 0, or an
 * error set */
static int count_line(piece_t *pc, const uint8_t *raw, const unsigned char *s, size_t len,
                      uint64_t line, int hist, uint64_t *cnt)
{
    uint64_t k = 0;
    int bad = 0;
    if (hist) {
        uint64_t *h = pc->hist;
        for (size_t i = 0; i < len; i++) {
            uint8_t v = raw[s[i]];
            h[v]++;
            k += v != 0;
            bad |= v == 0xFF;
        }
    } else {
        for (size_t i = 0; i < len; i++) {
            uint8_t v = raw[s[i]];
            k += v != 0;
            bad |= v == 0xFF;
        }
    }
    if (bad) {
        size_t i = 0;
        while (raw[s[i]] != 0xFF) i++;
        fail_at(pc, s[i] == '\r' ? E_CR : E_SEQ_BIN, line, s[i]);
        return -1;
    }
    *cnt += k;
    return 0;
}

/* before the first record (the file's first piece): blank lines, comments;
 * 1: s is the first header, 0: the end, -1: a status set */
static int lead_in(piece_t *pc, lines_t *L, const unsigned char **s, size_t *len)
{
    int have = next_line(L, s, len);
    while (have && (blank(*s, *len) || (*s)[0] == ';'))
        have = next_line(L, s, len);
    if (!have) return 0;
    if ((*s)[0] == '@') {
        pc->status = P_FASTQ;
        return -1;
    }
    if ((*s)[0] != '>') {
        fail_at(pc, E_EXPECT, L->line, 0);
        return -1;
    }
    return 1;
}

static void scan_piece(void *ctx, size_t ip)
{
    swgpu__fpar_t *F = ctx;
    piece_t *pc = &F->pc[ip];
    const uint8_t *raw = F->raw;
    lines_t L = {pc->beg, pc->end, 0};
    const unsigned char *s;
    size_t len;
    int have = pc->first ? lead_in(pc, &L, &s, &len) : next_line(&L, &s, &len);
    while (have > 0) {
        if (s[0] == '@') {
            pc->status = P_FASTQ;
            break;
        }
        const unsigned char *id;
        size_t idlen;
        uint64_t nsz, cnt = 0, tail = 0;
        pc->recs++;
        if (len > pc->max_line) pc->max_line = len;
        if (header(pc, s + 1, len - 1, L.line, &id, &idlen, &nsz)) break;
        while ((have = next_line(&L, &s, &len)) && !(len && (s[0] == '>' || s[0] == '@'))) {
            if (len > pc->max_line) pc->max_line = len;
            if (!len || s[0] == ';') continue;
            if (count_line(pc, raw, s, len, L.line, F->auto_alpha, &cnt)) {
                pc->eid = id;
                pc->eidlen = idlen;
                goto out;
            }
            star_tail(raw, s, len, &tail);
        }
        pc->raw_res += cnt;
        if (end_rec(pc, cnt, tail, nsz, id, idlen)) {
            pc->status = P_ERR;
            pc->ekind = -1; /* no memory */
            break;
        }
    }
out:
    pc->lines = L.line;
    /* the map's pages of this piece are read again in pass 2, from the
     * page cache: not held meanwhile */
    uintptr_t pg = 4096, a = ((uintptr_t)pc->beg + pg - 1) & ~(pg - 1), b = (uintptr_t)pc->end & ~(pg - 1);
    if (b > a) madvise((void *)a, b - a, MADV_DONTNEED);
}

/* the message of piece pc's error; lines and records before it given */
static int report(const swgpu__fpar_t *F, const piece_t *pc, uint64_t lines, uint64_t recs)
{
    uint64_t line = lines + pc->eline, rec = recs + pc->erec;
    const char *path = F->path;
    switch (pc->ekind) {
    case E_CR:
        return swgpu__fail(SWGPU_EFORMAT, "file %s, line %" PRIu64 ": CR-only line ends (a carriage "
                           "return without a line feed): convert the line ends, e.g. tr '\\r' '\\n'",
                           path, line);
    case E_HDR_BIN:
        return swgpu__fail(SWGPU_EFORMAT, "file %s, line %" PRIu64 ": binary data (byte 0x%02x) in header of record %" PRIu64,
                           path, line, pc->ebyte, rec);
    case E_NO_ID:
        return swgpu__fail(SWGPU_EFORMAT, "file %s, line %" PRIu64 ": record %" PRIu64 " has an empty id "
                           "(nothing after '%c')", path, line, rec, pc->ebyte);
    case E_SEQ_BIN:
        return swgpu__fail(SWGPU_EFORMAT, "file %s, line %" PRIu64 ", record %" PRIu64 " (id %.*s): binary data (byte 0x%02x) in sequence",
                           path, line, rec, (int)pc->eidlen, (const char *)pc->eid, pc->ebyte);
    case E_EXPECT:
        return swgpu__fail(SWGPU_EFORMAT, "file %s, line %" PRIu64 ": expected '>' or '@' at start of record",
                           path, line);
    default:
        return swgpu__fail(SWGPU_ENOMEM, "file %s: out of memory", path);
    }
}

/* Could fasta.c's reading have held more than the read limit while reading
 * pieces [0, np) (residues raw, names, records, longest line)?  A bound
 * of what it holds (line buffer, input buffer, residues, names, slots, each
 * grown by its own rule). */
static int may_reach_limit(const swgpu__fpar_t *F, size_t np, uint64_t limit)
{
    uint64_t raw = 0, names = 0, recs = 0, line = 0;
    for (size_t k = 0; k < np; k++) {
        raw += F->pc[k].raw_res;
        names += F->pc[k].names + F->pc[k].max_line + 2;
        recs += F->pc[k].recs;
        if (F->pc[k].max_line > line) line = F->pc[k].max_line;
    }
    uint64_t buf = 4 * (line + 2) > (4u << 20) ? 4 * (line + 2) : (4u << 20);
    uint64_t res = 2 * (raw + line) > (1u << 20) ? 2 * (raw + line) : (1u << 20);
    uint64_t bound = buf + (1u << 20) + res + names + names / 2 + 64 + 24 * (recs + 2) + 1024;
    return bound > limit;
}

void swgpu__fpar_free(swgpu__fpar_t *f)
{
    if (!f) return;
    for (size_t k = 0; k < f->np; k++) {
        free(f->pc[k].len);
        free(f->pc[k].nsz);
        free(f->pc[k].empty);
    }
    free(f->pc);
    if (f->map) munmap((void *)f->map, f->map_len);
    free(f);
}

/* pass 1 done: the first piece in file order that failed, or the sums */
static int conclude(swgpu__fpar_t *F, swgpu_alphabet_t alphabet, uint64_t limit,
                    swgpu__fpar_sum_t *sum)
{
    uint64_t lines = 0, recs = 0, hist[256] = {0};
    size_t k;
    memset(sum, 0, sizeof *sum);
    for (k = 0; k < F->np; k++) {
        piece_t *pc = &F->pc[k];
        if (pc->status == P_FASTQ) return 1;
        if (pc->status == P_ERR)
            return may_reach_limit(F, k + 1, limit) ? 1 : report(F, pc, lines, recs);
        pc->base = sum->n;
        pc->name_base = sum->names;
        lines += pc->lines;
        recs += pc->recs;
        sum->n += pc->n;
        sum->residues += pc->residues;
        sum->names += pc->names;
        sum->n_empty += pc->n_empty;
        if (pc->max_len > sum->max_len) sum->max_len = pc->max_len;
        for (int c = 1; c < 255 && F->auto_alpha; c++) hist[c] += pc->hist[c];
    }
    if (may_reach_limit(F, F->np, limit) || 40 * sum->n + sum->names + sum->residues > limit)
        return 1;
    if (recs == 0)
        return swgpu__fail(SWGPU_EEMPTY, "file %s: empty file", F->path);
    if (sum->n_empty) {
        for (k = 0; !F->pc[k].n_empty; k++) {}
        uint64_t before = 0;
        for (size_t j = 0; j < k; j++) before += F->pc[j].recs;
        char id[64];
        snprintf(id, sizeof id, "%.*s", (int)F->pc[k].empty_idlen, (const char *)F->pc[k].empty_id);
        swgpu__log(SWGPU_LOG_WARN, "file %s: %" PRIu64 " records with an empty sequence skipped (first: record %" PRIu64 ", id %s)",
                   F->path, sum->n_empty, before + F->pc[k].first_empty, id);
    }
    if (sum->n == 0)
        return swgpu__fail(SWGPU_EEMPTY, "file %s: no non-empty sequence (%" PRIu64 " records, all empty)",
                           F->path, sum->n_empty);
    sum->alphabet = alphabet == SWGPU_AUTO ? swgpu__alphabet_decide(hist) : alphabet;
    F->alphabet = sum->alphabet;
    return 0;
}

int swgpu__fpar_scan(int fd, const char *path, uint64_t size, swgpu_alphabet_t alphabet,
                     int threads, swgpu__fpar_t **out, swgpu__fpar_sum_t *sum)
{
    uint64_t limit;
    int rc;
    *out = NULL;
    if ((rc = swgpu__get_read_limit(&limit)) < 0) return rc;
    if (size < 2 || size > SIZE_MAX / 2) return 1;
    swgpu__fpar_t *F = calloc(1, sizeof *F);
    if (!F) return 1;
    F->path = path;
    F->threads = threads > 0 ? threads : swgpu__ncores();
    F->auto_alpha = alphabet == SWGPU_AUTO;
    void *m = mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (m == MAP_FAILED) {
        free(F);
        return 1;
    }
    F->map = m;
    F->map_len = (size_t)size;
    if (F->map[0] == 0x1f && F->map[1] == 0x8b) { /* gzip */
        swgpu__fpar_free(F);
        return 1;
    }
    swgpu__fasta_raw_table(F->raw);
    size_t start = size >= 3 && !memcmp(F->map, "\xef\xbb\xbf", 3) ? 3 : 0;
    if (cut(F, start, F->threads) < 0) {
        swgpu__fpar_free(F);
        return 1;
    }
    swgpu__par_for(F->np, F->threads, scan_piece, F);
    if ((rc = conclude(F, alphabet, limit, sum)) != 0) {
        swgpu__fpar_free(F);
        return rc;
    }
    *out = F;
    return 0;
}

/* ------------------------------------------------------------ between */

static void put_arrays(void *ctx, size_t ip)
{
    swgpu__fpar_t *F = ctx;
    piece_t *pc = &F->pc[ip];
    uint64_t *o = F->out + pc->base;
    if (F->which == 0) {
        if (pc->n) /* a piece without records may have no array */
            memcpy(o, pc->len, pc->n * sizeof *o);
        return;
    }
    uint64_t pos = pc->name_base;
    for (uint64_t j = 0; j < pc->n; j++) {
        o[j] = pos;
        pos += pc->nsz[j];
    }
}

void swgpu__fpar_lengths(swgpu__fpar_t *f, uint64_t *len)
{
    f->out = len;
    f->which = 0;
    swgpu__par_for(f->np, f->threads, put_arrays, f);
}

void swgpu__fpar_name_offsets(swgpu__fpar_t *f, uint64_t *name_off)
{
    f->out = name_off;
    f->which = 1;
    swgpu__par_for(f->np, f->threads, put_arrays, f);
}

/* ------------------------------------------------------------ pass 2 */

/* a header's names at *np ("id\0desc\0"), within [.., nend) */
static int put_names(const unsigned char *h, size_t len, char **np, const char *nend)
{
    swgpu__fasta_hdr_t f;
    swgpu__fasta_split_header((const char *)h, len, &f);
    size_t need = f.idlen + f.dlen + 2;
    if (need > (size_t)(nend - *np)) return -1;
    char *p = *np;
    memcpy(p, h + f.id, f.idlen);
    p[f.idlen] = 0;
    memcpy(p + f.idlen + 1, h + f.desc, f.dlen);
    p[need - 1] = 0;
    *np += need;
    return 0;
}

/* a sequence line's codes to dst[*w ..], at most cap in all; *cnt counts
 * every residue (beyond cap too), *miss the unknown letters written */
static void put_line(const uint8_t *enc, const unsigned char *s, size_t len, uint8_t *dst,
                     uint64_t cap, uint64_t *w, uint64_t *cnt, uint64_t *miss)
{
    uint64_t k = *w, m = 0;
    if (k + len <= cap) { /* every store within the record */
        for (size_t i = 0; i < len; i++) {
            uint8_t v = enc[s[i]];
            dst[k] = v & 0x3F;
            k += !(v & 0x80);
            m += (v >> 6) & 1;
        }
        *cnt += k - *w;
    } else {
        for (size_t i = 0; i < len; i++) {
            uint8_t v = enc[s[i]];
            if (v & 0x80) continue;
            ++*cnt;
            if (k < cap) {
                dst[k++] = v & 0x3F;
                m += (v >> 6) & 1;
            }
        }
    }
    *w = k;
    *miss += m;
}

static void fill_piece(void *ctx, size_t ip)
{
    swgpu__fpar_t *F = ctx;
    piece_t *pc = &F->pc[ip];
    lines_t L = {pc->beg, pc->end, 0};
    const unsigned char *s;
    size_t len;
    char *np = F->names + pc->name_base, *nend = np + pc->names;
    uint64_t kept = 0, rec = 0, e = 0;
    int have = next_line(&L, &s, &len);
    if (pc->first)
        while (have && (blank(s, len) || s[0] == ';')) have = next_line(&L, &s, &len);
    while (have && len && s[0] == '>') {
        int skip = e < pc->n_empty && pc->empty[e] == rec + 1;
        uint64_t i = pc->base + kept, cap = 0, w = 0, cnt = 0, tail = 0, miss = 0;
        uint8_t *dst = NULL;
        rec++;
        e += skip;
        const char *id = np;
        if (!skip) {
            if (kept == pc->n || put_names(s + 1, len - 1, &np, nend)) break;
            dst = F->res + F->off[F->rank[i]];
            cap = F->off[F->rank[i] + 1] - F->off[F->rank[i]];
        }
        while ((have = next_line(&L, &s, &len)) && !(len && (s[0] == '>' || s[0] == '@'))) {
            if (!len || s[0] == ';') continue;
            if (!skip) put_line(F->enc, s, len, dst, cap, &w, &cnt, &miss);
            else put_line(F->enc, s, len, NULL, 0, &w, &cnt, &miss);
            star_tail(F->raw, s, len, &tail);
        }
        if (cnt - tail != cap) break; /* the file changed since pass 1 */
        if (!skip) {
            if (miss && !pc->n_unknown) {
                pc->first_unknown = i;
                pc->unknown_id = id;
            }
            pc->n_unknown += miss;
            kept++;
        }
    }
    pc->changed = have || kept != pc->n || np != nend;
    uintptr_t pg = 4096, a = ((uintptr_t)pc->beg + pg - 1) & ~(pg - 1), b = (uintptr_t)pc->end & ~(pg - 1);
    if (b > a) madvise((void *)a, b - a, MADV_DONTNEED);
}

int swgpu__fpar_fill(swgpu__fpar_t *F, char *names, uint8_t *res, const uint64_t *off,
                     const uint32_t *rank, swgpu_read_info_t *info)
{
    uint8_t code[256];
    swgpu_alphabet_t a = F->alphabet;
    uint8_t unk = a == SWGPU_DNA ? SWGPU_DNA_N : SWGPU_PROT_X;
    swgpu__encode_table(a, code);
    for (int c = 0; c < 256; c++) {
        uint8_t r = F->raw[c];
        F->enc[c] = r == 0 || r == 0xFF ? 0x80 : code[r] == SWGPU__NOCODE ? 0x40 | unk : code[r];
    }
    F->names = names;
    F->res = res;
    F->off = off;
    F->rank = rank;
    swgpu__par_for(F->np, F->threads, fill_piece, F);
    uint64_t n_unknown = 0, first = 0;
    const char *first_id = "";
    for (size_t k = 0; k < F->np; k++) {
        if (F->pc[k].changed)
            return swgpu__fail(SWGPU_EIO, "file %s: changed while it was read", F->path);
        if (F->pc[k].n_unknown && !n_unknown) {
            first = F->pc[k].first_unknown;
            first_id = F->pc[k].unknown_id;
        }
        n_unknown += F->pc[k].n_unknown;
    }
    if (n_unknown)
        swgpu__log(SWGPU_LOG_WARN, "file %s: %" PRIu64 " letters outside the %s alphabet read as %c (first in sequence %zu, id %s)",
                   F->path, n_unknown, swgpu_alphabet_name(a), a == SWGPU_DNA ? 'N' : 'X',
                   (size_t)first + 1, first_id);
    info->n_unknown = n_unknown;
    return 0;
}
