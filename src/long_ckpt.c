/*
 * long_ckpt.c - checkpoints of a long alignment (swgpu_long_opts_t.checkpoint):
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
 */
#define _POSIX_C_SOURCE 200809L
#include "internal.h"
#include "long.h"
#include "long_ckpt.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char MAGIC[8] = { 'S', 'W', 'G', 'P', 'U', 'C', 'K', 1 };

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

static int put(FILE *f, const void *p, size_t n)
{
    return n == 0 || fwrite(p, 1, n, f) == n ? 0 : -1;
}

static int get(FILE *f, void *p, size_t n)
{
    return n == 0 || fread(p, 1, n, f) == n ? 0 : -1;
}

int swgpu__ck_write(const char *path, const swgpu__ck_t *c, const swgpu__lreg_t *g,
                    const swgpu__lck_state_t *st, int wide)
{
    char tmp[4096];
    FILE *f;
    int bad = 0;
    int64_t w = g ? g->w : 0, nch = (w + SWGPU__LONG_CHUNK - 1) / SWGPU__LONG_CHUNK, nrows = 0, nb;
    int64_t head[12];
    if (snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid()) >= (int)sizeof tmp)
        return swgpu__fail(SWGPU_EINVAL, "checkpoint %s: path too long", path);
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
    bad |= put(f, MAGIC, sizeof MAGIC) | put(f, &c->fp, sizeof c->fp) | put(f, head, sizeof head);
    if (st) {
        int64_t v[6] = { st->best, st->bi, st->bj, st->gbest, (int64_t)st->cells, (int64_t)st->pruned };
        bad |= put(f, v, sizeof v);
        bad |= put(f, st->rowH, (size_t)(w + 1) * 4) | put(f, st->rowF, (size_t)(w + 1) * 4);
        bad |= put(f, st->low, (size_t)nch);
        if (wide)
            bad |= put(f, st->base, (size_t)nch * 8);
    }
    if (nrows > 0) {
        bad |= put(f, g->saved, (size_t)nrows * (size_t)(w + 1) * 8);
        if (wide)
            bad |= put(f, g->saved_base, (size_t)nrows * (size_t)nb * 8);
    }
    bad |= fflush(f) != 0 || fsync(fileno(f)) != 0;
    bad |= fclose(f) != 0;
    if (bad || rename(tmp, path) != 0) {
        int e = errno;
        remove(tmp);
        return swgpu__fail(SWGPU_EIO, "checkpoint %s: cannot write it: %s", path, strerror(e));
    }
    return SWGPU_OK;
}

int swgpu__ck_read(const char *path, uint64_t fp, int wide, swgpu__ck_t *c)
{
    FILE *f = fopen(path, "rb");
    char magic[8];
    uint64_t fp2;
    int64_t head[12], w, nch, nrows, nb;
    memset(c, 0, sizeof *c);
    if (!f) {
        if (errno == ENOENT)
            return 0; /* none: start afresh */
        return swgpu__fail(SWGPU_EIO, "checkpoint %s: cannot open it: %s", path, strerror(errno));
    }
    if (get(f, magic, sizeof magic) || memcmp(magic, MAGIC, sizeof magic) || get(f, &fp2, sizeof fp2) ||
        get(f, head, sizeof head))
        goto bad;
    if (fp2 != fp || head[10] != wide) {
        fclose(f);
        return swgpu__fail(SWGPU_EINVAL, "checkpoint %s was made for other inputs or options: remove it "
                           "to start afresh, or give the inputs and options it was made with", path);
    }
    c->phase = (int)head[0];
    c->prune_best = head[1];
    c->S = head[2];
    c->ie = head[3];
    c->je = head[4];
    c->ib = head[5];
    c->jb = head[6];
    w = head[7];
    c->st.next = head[8];
    nrows = head[9];
    nch = (w + SWGPU__LONG_CHUNK - 1) / SWGPU__LONG_CHUNK;
    nb = swgpu__lreg_nbase(w);
    if (c->phase < SWGPU__CK_PREPASS || c->phase > SWGPU__CK_TRACE || w < 0 || nrows < 0 || c->st.next < 0)
        goto bad;
    c->w = w;
    c->nrows = nrows;
    if (c->st.next > 0) {
        int64_t v[6];
        if (get(f, v, sizeof v))
            goto bad;
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
            goto nomem;
        c->st.rowH = c->row;
        c->st.rowF = c->row + w + 1;
        c->st.low = c->low;
        c->st.base = c->base;
        if (get(f, c->st.rowH, (size_t)(w + 1) * 4) || get(f, c->st.rowF, (size_t)(w + 1) * 4) ||
            get(f, c->low, (size_t)nch) || (wide && get(f, c->base, (size_t)nch * 8)))
            goto bad;
    }
    if (nrows > 0) {
        c->saved = malloc((size_t)nrows * (size_t)(w + 1) * 8);
        c->saved_base = wide ? malloc((size_t)nrows * (size_t)nb * 8) : NULL;
        if (!c->saved || (wide && !c->saved_base))
            goto nomem;
        if (get(f, c->saved, (size_t)nrows * (size_t)(w + 1) * 8) ||
            (wide && get(f, c->saved_base, (size_t)nrows * (size_t)nb * 8)))
            goto bad;
    }
    if (fgetc(f) != EOF)
        goto bad;
    fclose(f);
    return 1;
bad:
    fclose(f);
    swgpu__ck_free(c);
    return swgpu__fail(SWGPU_EFORMAT, "checkpoint %s is truncated or not a swgpu checkpoint: remove it "
                       "to start afresh", path);
nomem:
    fclose(f);
    swgpu__ck_free(c);
    return swgpu__fail(SWGPU_ENOMEM, "checkpoint %s: out of memory", path);
}
