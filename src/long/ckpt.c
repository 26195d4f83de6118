/*
 * ckpt.c - checkpoints of a long alignment (swgpu_long_opts_t.checkpoint):
 * the file format, written atomically (a temporary beside it, then rename)
 * and read back.
 *
 * A checkpoint holds where the alignment stands: the phase running (the
 * score pass's pre-pass, the score pass, the reverse pass, or the traceback
 * about to start), what the earlier phases found (the pre-pass's score, the
 * best score and its end, the begin), and, for a pass, its state between
 * strips (long.h: swgpu__lck_state_t: the bottom row of the strips done,
 * their best cell, the counts, the rows saved so far); for the traceback,
 * the reverse pass's saved rows.  Any engine that runs a pass strip by
 * strip can start from such a state.  The header's fingerprint hashes the
 * sequences and every option the output depends on (scoring, memory budget,
 * score-only, pruning), so that a checkpoint made for other inputs is
 * refused.  Values are stored in the machine's byte order.
 *
 * Layout (format 2): the magic "SWGPUCK" and the format byte, the
 * fingerprint, 12 header words (int64: phase, prune_best, S, ie, je, ib, jb,
 * w, next, nrows, wide, 0), with next > 0 the pass state (6 words: best, bi,
 * bj, gbest, cells, pruned; rowH and rowF, w + 1 int32 each; low, one byte
 * per chunk; wide: one int64 base per chunk), nrows saved rows of w + 1
 * {H, F} pairs, wide: their nrows x swgpu__lreg_nbase(w) bases, and last
 * zlib's CRC-32 of every byte before it (uint32).  The reader checks the
 * magic, the format, the size the header implies and the CRC before
 * anything is used; the caller checks the fields against the inputs
 * (batch.c).
 */
#define _POSIX_C_SOURCE 200809L
#include "long/long.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define FORMAT 2
static const char MAGIC[8] = { 'S', 'W', 'G', 'P', 'U', 'C', 'K', FORMAT };
#define HEAD_BYTES (8 + 8 + 12 * 8)

uint64_t swgpu__ck_hash(uint64_t h, const void *p, size_t n)
{
    const uint8_t *b = p;
    for (size_t k = 0; k < n; k++)
        h = (h ^ b[k]) * 0x100000001b3ull; /* FNV-1a */
    return h;
}

void swgpu__ck_free(swgpu__ck_t *c)
{
    free(c->row);
    free(c->low);
    free(c->base);
    free(c->saved);
    free(c->saved_base);
    memset(c, 0, sizeof *c);
}

static uint32_t crc_add(uint32_t crc, const void *p, size_t n)
{
    const Bytef *b = p;
    while (n > 0) {
        const uInt k = n > (1u << 30) ? 1u << 30 : (uInt)n;
        crc = (uint32_t)crc32(crc, b, k);
        b += k;
        n -= k;
    }
    return crc;
}

static int put(FILE *f, uint32_t *crc, const void *p, size_t n)
{
    if (n == 0)
        return 0;
    *crc = crc_add(*crc, p, n);
    return fwrite(p, 1, n, f) == n ? 0 : -1;
}

static int get(FILE *f, uint32_t *crc, void *p, size_t n)
{
    if (n == 0)
        return 0;
    if (fread(p, 1, n, f) != n)
        return -1;
    *crc = crc_add(*crc, p, n);
    return 0;
}

void swgpu__ck_tmpname(char *buf, size_t size, const char *path)
{
    snprintf(buf, size, "%s.tmp.%ld", path, (long)getpid());
}

const char *swgpu__ck_kind(mode_t mode)
{
    return S_ISDIR(mode) ? "a directory" : S_ISFIFO(mode) ? "a FIFO (named pipe)" :
           S_ISCHR(mode) ? "a character device" : S_ISBLK(mode) ? "a block device" :
           S_ISSOCK(mode) ? "a socket" : S_ISREG(mode) ? "a regular file" : "not a regular file";
}

int swgpu__ck_write(const char *path, const swgpu__ck_t *c, const swgpu__lreg_t *g,
                    const swgpu__lck_state_t *st, int wide)
{
    char tmp[4096];
    FILE *f;
    int bad = 0;
    uint32_t crc = (uint32_t)crc32(0, Z_NULL, 0);
    int64_t w = g ? g->w : 0, nch = (w + SWGPU__LONG_CHUNK - 1) / SWGPU__LONG_CHUNK, nrows = 0, nb;
    int64_t head[12];
    if (strlen(path) + 32 >= sizeof tmp)
        return swgpu__fail(SWGPU_EINVAL, "checkpoint %s: path too long", path);
    swgpu__ck_tmpname(tmp, sizeof tmp, path);
    if (!(f = fopen(tmp, "wb")))
        return swgpu__fail(SWGPU_EIO, "checkpoint %s: cannot create %s: %s", path, tmp, strerror(errno));
    if (g && st)
        nrows = swgpu__lck_rows(g, st->next);
    else if (g)
        nrows = swgpu__lreg_nsaved(g); /* the traceback's: every row */
    nb = swgpu__lreg_nbase(w);
    head[0] = c->phase;
    head[1] = c->prune_best;
    head[2] = c->S;
    head[3] = c->ie;
    head[4] = c->je;
    head[5] = c->ib;
    head[6] = c->jb;
    head[7] = w;
    head[8] = st ? st->next : 0;
    head[9] = nrows;
    head[10] = wide;
    head[11] = 0;
    bad |= put(f, &crc, MAGIC, sizeof MAGIC) | put(f, &crc, &c->fp, sizeof c->fp) | put(f, &crc, head, sizeof head);
    if (st) {
        int64_t v[6] = { st->best, st->bi, st->bj, st->gbest, (int64_t)st->cells, (int64_t)st->pruned };
        bad |= put(f, &crc, v, sizeof v);
        bad |= put(f, &crc, st->rowH, (size_t)(w + 1) * 4) | put(f, &crc, st->rowF, (size_t)(w + 1) * 4);
        bad |= put(f, &crc, st->low, (size_t)nch);
        if (wide)
            bad |= put(f, &crc, st->base, (size_t)nch * 8);
    }
    if (nrows > 0) {
        bad |= put(f, &crc, g->saved, (size_t)nrows * (size_t)(w + 1) * 8);
        if (wide)
            bad |= put(f, &crc, g->saved_base, (size_t)nrows * (size_t)nb * 8);
    }
    bad |= fwrite(&crc, 1, sizeof crc, f) != sizeof crc;
    bad |= fflush(f) != 0 || fsync(fileno(f)) != 0;
    bad |= fclose(f) != 0;
    if (bad || rename(tmp, path) != 0) {
        int e = errno;
        remove(tmp);
        return swgpu__fail(SWGPU_EIO, "checkpoint %s: cannot write it: %s", path, strerror(e));
    }
    return SWGPU_OK;
}

/* A damaged checkpoint: the file is left as it is. */
static int damaged(FILE *f, swgpu__ck_t *c, const char *path, const char *why)
{
    fclose(f);
    swgpu__ck_free(c);
    return swgpu__fail(SWGPU_EFORMAT, "checkpoint %s is damaged (%s): it cannot be resumed; remove it "
                       "to start afresh", path, why);
}

static int nomem(FILE *f, swgpu__ck_t *c, const char *path)
{
    fclose(f);
    swgpu__ck_free(c);
    return swgpu__fail(SWGPU_ENOMEM, "checkpoint %s: out of memory", path);
}

/* Open path, a regular file (never opened as anything else: a FIFO does
 * not block), into *f with its stat in *sb: SWGPU_OK, 1 when there is no
 * such file, or an error. */
static int open_file(const char *path, struct stat *sb, FILE **f)
{
    int fd;
    if (stat(path, sb) != 0) {
        if (errno == ENOENT)
            return 1; /* none: start afresh */
        return swgpu__fail(SWGPU_EIO, "checkpoint %s: cannot open it: %s", path, strerror(errno));
    }
    if (!S_ISREG(sb->st_mode))
        return swgpu__fail(SWGPU_EINVAL, "checkpoint %s is %s, not a checkpoint file", path,
                           swgpu__ck_kind(sb->st_mode));
    /* not blocking on a FIFO put there since */
    if ((fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)) < 0)
        return swgpu__fail(SWGPU_EIO, "checkpoint %s: cannot open it: %s", path, strerror(errno));
    if (fstat(fd, sb) != 0 || !S_ISREG(sb->st_mode)) {
        close(fd);
        return swgpu__fail(SWGPU_EINVAL, "checkpoint %s is %s, not a checkpoint file", path,
                           swgpu__ck_kind(sb->st_mode));
    }
    if (!(*f = fdopen(fd, "rb"))) {
        close(fd);
        return swgpu__fail(SWGPU_ENOMEM, "checkpoint %s: out of memory", path);
    }
    return SWGPU_OK;
}

/* The magic and the format (the file closed when they are not ours). */
static int check_magic(FILE *f, const char *path, uint32_t *crc)
{
    char magic[8];
    if (get(f, crc, magic, sizeof magic) || memcmp(magic, MAGIC, 7)) {
        fclose(f);
        return swgpu__fail(SWGPU_EFORMAT, "checkpoint %s is not a swgpu checkpoint", path);
    }
    if (magic[7] != FORMAT) {
        fclose(f);
        return swgpu__fail(SWGPU_EFORMAT, "checkpoint %s was written by %s swgpu (checkpoint format %d, this "
                           "one reads format %d): it cannot be resumed; remove it to start afresh", path,
                           (unsigned char)magic[7] < FORMAT ? "an older" : "a newer", (unsigned char)magic[7],
                           FORMAT);
    }
    return SWGPU_OK;
}

/* The CRC of the whole file (after the magic, CRC crc so far), before
 * anything else is looked at; f is left after the magic again. */
static int check_crc(FILE *f, swgpu__ck_t *c, const char *path, const struct stat *sb, uint32_t crc)
{
    static const size_t CH = 1 << 20;
    uint8_t *buf;
    uint64_t left, fp2;
    uint32_t crc1 = crc, crc2;
    int64_t head[12];
    int short_read = 0;
    char why[160];
    if (sb->st_size < HEAD_BYTES + 4)
        return damaged(f, c, path, "truncated");
    if (!(buf = malloc(CH)))
        return nomem(f, c, path);
    for (left = (uint64_t)sb->st_size - 4 - sizeof MAGIC; left > 0 && !short_read;) {
        const size_t k = left < CH ? (size_t)left : CH;
        if (get(f, &crc1, buf, k))
            short_read = 1;
        left -= k;
    }
    free(buf);
    if (short_read || fread(&crc2, 1, sizeof crc2, f) != sizeof crc2)
        return damaged(f, c, path, "truncated");
    if (crc2 == crc1)
        return fseek(f, sizeof MAGIC, SEEK_SET) == 0 ? SWGPU_OK : damaged(f, c, path, "cannot read it again");
    /* say so when the header describes another size (a file cut short) */
    snprintf(why, sizeof why, "its checksum does not match its contents");
    if (fseek(f, sizeof MAGIC, SEEK_SET) == 0 && !get(f, &crc1, &fp2, sizeof fp2) &&
        !get(f, &crc1, head, sizeof head) && head[7] >= 0 && head[7] <= INT32_MAX && head[8] >= 0 &&
        head[9] >= 0 && head[9] <= INT32_MAX && (head[10] == 0 || head[10] == 1)) {
        const int64_t w1 = head[7], nch1 = (w1 + SWGPU__LONG_CHUNK - 1) / SWGPU__LONG_CHUNK;
        const uint64_t want = HEAD_BYTES + 4 + (uint64_t)head[9] * ((uint64_t)(w1 + 1) * 8 +
                              (head[10] ? (uint64_t)swgpu__lreg_nbase(w1) * 8 : 0)) +
                              (head[8] > 0 ? 48 + (uint64_t)(w1 + 1) * 8 + (uint64_t)nch1 * (head[10] ? 9 : 1) : 0);
        if (want != (uint64_t)sb->st_size)
            snprintf(why, sizeof why, "%lld bytes where its header describes %llu: truncated or damaged",
                     (long long)sb->st_size, (unsigned long long)want);
    }
    return damaged(f, c, path, why);
}

/* The header (fingerprint in *fp2, words in head) against the file's size,
 * before any allocation; its fields into c. */
static int read_header(FILE *f, swgpu__ck_t *c, const char *path, off_t size, uint32_t *crc, uint64_t *fp2,
                       int64_t *head)
{
    int64_t w, next, nrows, nch;
    uint64_t need, rowb;
    if (get(f, crc, fp2, sizeof *fp2) || get(f, crc, head, 12 * sizeof *head))
        return damaged(f, c, path, "truncated header");
    w = head[7];
    next = head[8];
    nrows = head[9];
    if (head[10] != 0 && head[10] != 1)
        return damaged(f, c, path, "invalid header");
    if (w < 0 || w > INT32_MAX || next < 0 || next > INT32_MAX || nrows < 0)
        return damaged(f, c, path, "invalid header");
    nch = (w + SWGPU__LONG_CHUNK - 1) / SWGPU__LONG_CHUNK;
    rowb = (uint64_t)(w + 1) * 8 + (head[10] ? (uint64_t)swgpu__lreg_nbase(w) * 8 : 0);
    if ((uint64_t)nrows > (uint64_t)size / rowb)
        return damaged(f, c, path, "truncated");
    need = HEAD_BYTES + (uint64_t)nrows * rowb + 4;
    if (next > 0)
        need += 48 + (uint64_t)(w + 1) * 8 + (uint64_t)nch * (head[10] ? 9 : 1);
    if (need != (uint64_t)size) {
        char why[96];
        snprintf(why, sizeof why, "%lld bytes where its header describes %llu", (long long)size,
                 (unsigned long long)need);
        return damaged(f, c, path, why);
    }
    c->phase = (int)head[0];
    c->prune_best = head[1];
    c->S = head[2];
    c->ie = head[3];
    c->je = head[4];
    c->ib = head[5];
    c->jb = head[6];
    c->w = w;
    c->nrows = nrows;
    c->st.next = next;
    return SWGPU_OK;
}

/* The pass state (c->st.next > 0) and the saved rows the header announced
 * (wide: the file holds wide scores' bases). */
static int read_body(FILE *f, swgpu__ck_t *c, const char *path, uint32_t *crc, int wide)
{
    const int64_t w = c->w, nrows = c->nrows, nch = (w + SWGPU__LONG_CHUNK - 1) / SWGPU__LONG_CHUNK;
    const int64_t nb = swgpu__lreg_nbase(w);
    if (c->st.next > 0) {
        int64_t v[6];
        if (get(f, crc, v, sizeof v))
            return damaged(f, c, path, "truncated");
        c->st.best = v[0];
        c->st.bi = v[1];
        c->st.bj = v[2];
        c->st.gbest = v[3];
        c->st.cells = (uint64_t)v[4];
        c->st.pruned = (uint64_t)v[5];
        c->row = malloc((size_t)(w + 1) * 8);
        c->low = malloc((size_t)nch + 1);
        c->base = wide ? malloc((size_t)nch * 8 + 8) : NULL;
        if (!c->row || !c->low || (wide && !c->base))
            return nomem(f, c, path);
        c->st.rowH = c->row;
        c->st.rowF = c->row + w + 1;
        c->st.low = c->low;
        c->st.base = c->base;
        if (get(f, crc, c->st.rowH, (size_t)(w + 1) * 4) || get(f, crc, c->st.rowF, (size_t)(w + 1) * 4) ||
            get(f, crc, c->low, (size_t)nch) || (wide && get(f, crc, c->base, (size_t)nch * 8)))
            return damaged(f, c, path, "truncated");
    }
    if (nrows > 0) {
        c->saved = malloc((size_t)nrows * (size_t)(w + 1) * 8);
        c->saved_base = wide ? malloc((size_t)nrows * (size_t)nb * 8) : NULL;
        if (!c->saved || (wide && !c->saved_base))
            return nomem(f, c, path);
        if (get(f, crc, c->saved, (size_t)nrows * (size_t)(w + 1) * 8) ||
            (wide && get(f, crc, c->saved_base, (size_t)nrows * (size_t)nb * 8)))
            return damaged(f, c, path, "truncated");
    }
    return SWGPU_OK;
}

int swgpu__ck_read(const char *path, uint64_t fp, int wide, swgpu__ck_t *c)
{
    struct stat sb;
    FILE *f;
    uint64_t fp2;
    uint32_t crc = (uint32_t)crc32(0, Z_NULL, 0), crc2;
    int64_t head[12];
    int rc;
    memset(c, 0, sizeof *c);
    if ((rc = open_file(path, &sb, &f)))
        return rc == 1 ? 0 : rc;
    if ((rc = check_magic(f, path, &crc)) || (rc = check_crc(f, c, path, &sb, crc)) ||
        (rc = read_header(f, c, path, sb.st_size, &crc, &fp2, head)) ||
        (rc = read_body(f, c, path, &crc, head[10] != 0)))
        return rc;
    if (fread(&crc2, 1, sizeof crc2, f) != sizeof crc2 || fgetc(f) != EOF || crc2 != crc)
        return damaged(f, c, path, "it changed while read");
    fclose(f);
    if (fp2 != fp || head[10] != wide) {
        swgpu__ck_free(c);
        return swgpu__fail(SWGPU_EINVAL, "checkpoint %s was made for other inputs or options: remove it "
                           "to start afresh, or give the inputs and options it was made with", path);
    }
    return 1;
}

/* A field out of range: the file is left as it is. */
static int unfit(const char *path, const char *field, int64_t v, const char *what)
{
    return swgpu__fail(SWGPU_EFORMAT, "checkpoint %s does not fit this alignment: %s %lld %s: remove it to "
                       "start afresh", path, field, (long long)v, what);
}

/* n entries H[x * step], F[x * step] of vertex columns col0 + x: 32-bit
 * scores H 0 .. maxS, F NEG - (open + ext) .. maxS (a skipped chunk's lower
 * bounds: H 0, F NEG); wide: values relative to their base (column 0:
 * base[0], column j: base[boff + (j - 1) / CHUNK]) within NEG - (open +
 * ext) .. 2^29, at most maxS once based.  Columns of chunks flagged in low
 * (not NULL) hold nothing and are not looked at.  The first bad column in
 * *bad. */
static int row_ok(const int32_t *H, const int32_t *F, size_t step, int64_t col0, int64_t n, const uint8_t *low,
                  const int64_t *base, int64_t boff, int64_t maxS, const swgpu__lscore_t *sc, int64_t *bad)
{
    const int64_t lo = (int64_t)SWGPU__LONG_NEG - sc->open - sc->ext;
    for (int64_t x = 0; x < n; x++) {
        const int64_t j = col0 + x, h = H[(size_t)x * step], f = F[(size_t)x * step];
        *bad = j;
        if (low && j > 0 && low[(j - 1) / SWGPU__LONG_CHUNK])
            continue;
        if (!sc->wide) {
            if (h < 0 || h > maxS || f < lo || f > maxS)
                return 0;
        } else {
            const int64_t b = base[j == 0 ? 0 : boff + (j - 1) / SWGPU__LONG_CHUNK];
            if (h < lo || h > SWGPU__LONG_DROP || f < lo || f > SWGPU__LONG_DROP ||
                (h >= SWGPU__LONG_INF32 && h + b > maxS) || (f >= SWGPU__LONG_INF32 && f + b > maxS))
                return 0;
        }
    }
    return 1;
}

static int bases_ok(const int64_t *b, int64_t n, int64_t maxS, int64_t *bad)
{
    for (int64_t k = 0; k < n; k++) {
        *bad = k;
        if (b[k] < -maxS - SWGPU__LONG_DROP || b[k] > maxS)
            return 0;
    }
    return 1;
}

int swgpu__ck_check_rows(const char *path, const swgpu__ck_t *c, int64_t maxS, const swgpu__lscore_t *sc)
{
    const int64_t w = c->w, nb = swgpu__lreg_nbase(w);
    int64_t bad;
    for (int64_t r = 0; r < c->nrows; r++) {
        const int32_t *row = c->saved + (size_t)r * (size_t)(w + 1) * 2;
        const int64_t *base = sc->wide ? c->saved_base + (size_t)r * (size_t)nb : NULL;
        if (base && !bases_ok(base, nb, maxS, &bad))
            return unfit(path, "a saved row's base", base[bad], "is out of range");
        /* row x's base: [0] for column 0, [1 + chunk] beyond */
        if (!row_ok(row, row + 1, 2, 0, w + 1, NULL, base, 1, maxS, sc, &bad))
            return unfit(path, "a saved row's value at column", bad, "is out of range");
    }
    return SWGPU_OK;
}

int swgpu__ck_check_state(const char *path, const swgpu__ck_t *c, int64_t h, int64_t w, int64_t nsaved,
                          int64_t maxS, const swgpu__lscore_t *sc)
{
    const swgpu__lck_state_t *st = &c->st;
    const int64_t strips = (h + SWGPU__LONG_SH - 1) / SWGPU__LONG_SH;
    const int64_t nch = (w + SWGPU__LONG_CHUNK - 1) / SWGPU__LONG_CHUNK;
    const int64_t rows = st->next < strips ? st->next * SWGPU__LONG_SH : h;
    int64_t bad;
    if (st->next < 1 || st->next >= strips)
        return unfit(path, "strips done", st->next, "is not within the pass's strips");
    if (c->w != w)
        return unfit(path, "the pass's width", c->w, "is not the region's");
    if (c->nrows != nsaved)
        return unfit(path, "saved rows", c->nrows, "are not the rows the pass saved by then");
    if (st->best < 0 || st->best > maxS)
        return unfit(path, "the pass's best score", st->best, "is out of range");
    if (st->bi < 0 || st->bi > rows || st->bj < 0 || st->bj > w || (st->best > 0 && (st->bi < 1 || st->bj < 1)))
        return unfit(path, "the pass's best cell's row", st->bi, "or column is out of range");
    if (st->gbest < 0 || st->gbest > maxS)
        return unfit(path, "the pass's pruning score", st->gbest, "is out of range");
    if (st->cells > (uint64_t)h * (uint64_t)w || st->pruned > (uint64_t)h * (uint64_t)w - st->cells)
        return unfit(path, "the pass's cells", (int64_t)st->cells, "are more than the region's");
    for (int64_t k = 0; k < nch; k++) {
        if (st->low[k] > 1)
            return unfit(path, "a chunk's flag", st->low[k], "is not 0 or 1");
        if (sc->wide && !st->low[k] && !bases_ok(st->base + k, 1, maxS, &bad))
            return unfit(path, "a chunk's base", st->base[k], "is out of range");
    }
    /* the row's bases: chunk c's at [c]; column 0 is never read */
    if (!row_ok(st->rowH + 1, st->rowF + 1, 1, 1, w, st->low, st->base, 0, maxS, sc, &bad))
        return unfit(path, "the pass's row at column", bad + 1, "is out of range");
    return swgpu__ck_check_rows(path, c, maxS, sc);
}
