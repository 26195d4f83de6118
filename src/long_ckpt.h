/*
 * long_ckpt.h - checkpoints of a long alignment (long_ckpt.c).
 */
#ifndef SWGPU_LONG_CKPT_H
#define SWGPU_LONG_CKPT_H

#include "long.h"

#include <stddef.h>
#include <sys/types.h>

/* where a checkpoint stands: the pass running, or the traceback to start */
enum { SWGPU__CK_PREPASS = 1, SWGPU__CK_SCORE = 2, SWGPU__CK_REVERSE = 3, SWGPU__CK_TRACE = 4 };

/** A checkpoint read back (or to write: phase and the results so far). */
typedef struct {
    uint64_t fp;            /* fingerprint of the inputs and options */
    int phase;
    int64_t prune_best;     /* SCORE and later: the pre-pass's score */
    int64_t S, ie, je;      /* REVERSE and later: the best score and its end */
    int64_t ib, jb;         /* TRACE: the begin */
    int64_t w;              /* the pass's region width (TRACE: the saved rows') */
    swgpu__lck_state_t st;  /* a pass's state (st.next 0: from its start) */
    int64_t nrows;          /* saved rows read */
    int32_t *saved;         /* nrows x (w + 1) pairs */
    int64_t *saved_base;    /* wide scores: nrows x swgpu__lreg_nbase(w) */
    int32_t *row;           /* storage of st.rowH, st.rowF */
    uint8_t *low;
    int64_t *base;
} swgpu__ck_t;

/** FNV-1a over n bytes, from h (start: 0xcbf29ce484222325). */
uint64_t swgpu__ck_hash(uint64_t h, const void *p, size_t n);
/** Write c's phase and results, the pass state st (NULL: none) of region g
 *  with the rows it saved so far (g without st: every row g saves); atomic. */
int swgpu__ck_write(const char *path, const swgpu__ck_t *c, const swgpu__lreg_t *g,
                    const swgpu__lck_state_t *st, int wide);
/** Read path: 0 when it does not exist, 1 when read into c (free with
 *  swgpu__ck_free), or an error: not a regular file (never opened as
 *  anything else: a FIFO does not block) or another fingerprint:
 *  SWGPU_EINVAL; not a checkpoint, another format, a size other than the
 *  header's or a CRC that does not match: SWGPU_EFORMAT.  The fields are
 *  the caller's to check against the inputs (swgpu__ck_check_*). */
int swgpu__ck_read(const char *path, uint64_t fp, int wide, swgpu__ck_t *c);
/** The pass state c->st of a local region of h x w (the checkpoint's w,
 *  its saved rows c->saved) against what such a pass can hold: strips
 *  done 1 .. strips - 1, nrows the rows saved by then (nsaved), the best
 *  cell within the strips done, scores 0 .. maxS, values relative to
 *  their bases within the engines' range.  SWGPU_EFORMAT naming path and
 *  the field otherwise. */
int swgpu__ck_check_state(const char *path, const swgpu__ck_t *c, int64_t h, int64_t w, int64_t nsaved,
                          int64_t maxS, const swgpu__lscore_t *sc);
/** The saved rows c->saved (c->nrows of c->w + 1 pairs, wide: their
 *  bases) against the same ranges. */
int swgpu__ck_check_rows(const char *path, const swgpu__ck_t *c, int64_t maxS, const swgpu__lscore_t *sc);
/** The temporary a checkpoint is written to before its rename:
 *  PATH.tmp.<pid> (as the tool's outputs: tools/outfile.c). */
void swgpu__ck_tmpname(char *buf, size_t size, const char *path);
/** What a file of that mode is, in words ("a directory", ...). */
const char *swgpu__ck_kind(mode_t mode);
void swgpu__ck_free(swgpu__ck_t *c);

#endif
