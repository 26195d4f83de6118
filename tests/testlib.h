/*
 * testlib.h - helpers shared by the test binaries (after tap.h, whose
 * tap_rand draws every number): random sequences and their mutants, paths
 * and whole-file reads and writes, sequence sets and databases built from
 * strings, alignment and search-result comparison.  Each random helper
 * draws exactly as the test-local copy it replaced, so the tests' data are
 * unchanged; two mutants that draw differently keep distinct names.
 */
#ifndef SWGPU_TESTLIB_H
#define SWGPU_TESTLIB_H

#include "swgpu.h"
#include "tap.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define TL_AMINO "ARNDCQEGHILKMFPSTWYV"
#define TL_NUC "ACGT"

/* x[0..n): residue codes uniform in [0, ncodes). */
static inline void tl_rand_codes(uint64_t *rng, uint8_t *x, size_t n, int ncodes)
{
    for (size_t i = 0; i < n; i++)
        x[i] = (uint8_t)(tap_rand(rng) % (uint64_t)ncodes);
}

/* b = codes a[0..n) with substitutions, insertions of 1..8 and deletions
 * (rates in 1/1000), at most cap codes; its length. */
static inline size_t tl_mutate_codes(uint64_t *rng, const uint8_t *a, size_t n, uint8_t *b,
                                     size_t cap, int ncodes, int sub, int ins, int del)
{
    size_t k = 0;
    for (size_t i = 0; i < n && k < cap; i++) {
        int r = (int)(tap_rand(rng) % 1000);
        if (r < del)
            continue;
        if (r < del + ins) {
            size_t len = 1 + tap_rand(rng) % 8;
            for (size_t x = 0; x < len && k < cap; x++)
                b[k++] = (uint8_t)(tap_rand(rng) % (uint64_t)ncodes);
        }
        if (k < cap)
            b[k++] = r < del + ins + sub ? (uint8_t)(tap_rand(rng) % (uint64_t)ncodes) : a[i];
    }
    return k;
}

/* s[0..n) letters uniform over alpha, then a NUL. */
static inline void tl_rand_letters(uint64_t *rng, char *s, size_t n, const char *alpha)
{
    size_t na = strlen(alpha);
    for (size_t i = 0; i < n; i++)
        s[i] = alpha[tap_rand(rng) % na];
    s[n] = 0;
}

/* dst = src with about one change in rate residues (a substitution, a
 * deletion or an insertion after the residue, each 1 in 3 rate), letters
 * from alpha drawn only for a change, while 4 more fit in cap (SIZE_MAX:
 * no bound); NUL-terminated; its length. */
static inline size_t tl_mutate_letters(uint64_t *rng, const char *src, char *dst, size_t cap,
                                       unsigned rate, const char *alpha)
{
    size_t n = 0, na = strlen(alpha);
    for (const char *p = src; *p && n + 4 < cap; p++) {
        unsigned r = (unsigned)(tap_rand(rng) % (3 * rate));
        if (r == 0) {
            dst[n++] = alpha[tap_rand(rng) % na];
        } else if (r == 1) {
            continue;
        } else if (r == 2) {
            dst[n++] = *p;
            dst[n++] = alpha[tap_rand(rng) % na];
        } else {
            dst[n++] = *p;
        }
    }
    dst[n] = 0;
    return n;
}

/* As tl_mutate_letters, but a letter is drawn for every residue (after the
 * change's number), whether it is used or not. */
static inline size_t tl_mutate_letters_each(uint64_t *rng, const char *src, char *dst, size_t cap,
                                            unsigned rate, const char *alpha)
{
    size_t n = 0, na = strlen(alpha);
    for (const char *p = src; *p && n + 4 < cap; p++) {
        unsigned r = (unsigned)(tap_rand(rng) % (rate * 3));
        char x = alpha[tap_rand(rng) % na];
        if (r == 0)
            dst[n++] = x;
        else if (r == 1)
            continue;
        else if (r == 2) {
            dst[n++] = *p;
            dst[n++] = x;
        } else
            dst[n++] = *p;
    }
    dst[n] = 0;
    return n;
}

/* A sequence set of the letter strings seqs[0..n), ids prefix0, prefix1, ...;
 * NULL on error. */
static inline swgpu_seqset_t *tl_set_of(swgpu_alphabet_t a, const char *const *seqs, size_t n,
                                        const char *prefix)
{
    swgpu_seqset_t *s = NULL;
    if (swgpu_seqset_create(a, &s) < 0)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        char id[64];
        snprintf(id, sizeof id, "%s%zu", prefix, i);
        if (swgpu_seqset_add(s, id, "", seqs[i], strlen(seqs[i])) < 0) {
            swgpu_seqset_destroy(s);
            return NULL;
        }
    }
    return s;
}

/* The same as a database in memory; NULL on error. */
static inline swgpu_db_t *tl_db_of(swgpu_alphabet_t a, const char *const *seqs, size_t n,
                                   const char *prefix)
{
    swgpu_seqset_t *s = tl_set_of(a, seqs, n, prefix);
    swgpu_db_t *db = NULL;
    if (!s || swgpu_db_from_seqset(s, &db) < 0)
        db = NULL;
    swgpu_seqset_destroy(s);
    return db;
}

/* ------------------------------------------------------------- files */

/* dir/name, in one of 4 buffers used in turn (a result lives through the
 * next 3 calls). */
static inline const char *tl_path(const char *dir, const char *name)
{
    static char buf[4][4096];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
    return buf[k];
}

/* The test data folder: $SWGPU_TESTDATA, else tests/data. */
static inline const char *tl_datadir(void)
{
    const char *d = getenv("SWGPU_TESTDATA");
    return d ? d : "tests/data";
}

/* The whole file at path (in a buffer with one spare byte, to free)
 * and its length in *n; NULL if it cannot be opened.  *n is 0 if it cannot
 * be read. */
static inline unsigned char *tl_slurp(const char *path, size_t *n)
{
    FILE *fp = fopen(path, "rb");
    unsigned char *p = NULL;
    long len;
    *n = 0;
    if (!fp)
        return NULL;
    if (fseek(fp, 0, SEEK_END) == 0 && (len = ftell(fp)) >= 0 && fseek(fp, 0, SEEK_SET) == 0 &&
        (p = malloc((size_t)len + 1)) && fread(p, 1, (size_t)len, fp) == (size_t)len)
        *n = (size_t)len;
    fclose(fp);
    return p;
}

/* ------------------------------------------------------ makedb files */

/* a little-endian field of a makedb file's header */
static inline uint64_t tl_get64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static inline void tl_put32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

/* a makedb file f of n bytes with both checksums made valid again after an
 * edit (the payload's of bytes [160, n), then the header's of [0, 152)) */
static inline void tl_fix_crcs(unsigned char *f, size_t n)
{
    tl_put32(f + 144, (uint32_t)crc32(crc32(0, Z_NULL, 0), f + 160, (uInt)(n - 160)));
    tl_put32(f + 152, (uint32_t)crc32(crc32(0, Z_NULL, 0), f, 152));
}

/* path = the n bytes at p; 0, or -1 if it cannot be written. */
static inline int tl_spit(const char *path, const void *p, size_t n)
{
    FILE *fp = fopen(path, "wb");
    if (!fp)
        return -1;
    int bad = fwrite(p, 1, n, fp) != n;
    return fclose(fp) != 0 || bad ? -1 : 0;
}

/* ------------------------------------------------ sequences and results */

/* Sequence i's id, description and letters (the last in a static buffer),
 * or "?" if there is none (or it is over 16,383 letters). */
static inline const char *tl_id_of(const swgpu_seqset_t *s, size_t i)
{
    swgpu_seq_t q;
    return swgpu_seqset_get(s, i, &q) ? "?" : q.id;
}

static inline const char *tl_desc_of(const swgpu_seqset_t *s, size_t i)
{
    swgpu_seq_t q;
    return swgpu_seqset_get(s, i, &q) ? "?" : q.desc;
}

static inline const char *tl_letters(const swgpu_seqset_t *s, size_t i)
{
    static char buf[16384];
    swgpu_seq_t q;
    if (swgpu_seqset_get(s, i, &q) || q.len >= sizeof buf)
        return "?";
    for (size_t k = 0; k < q.len; k++)
        buf[k] = swgpu_decode(swgpu_seqset_alphabet(s), q.res[k]);
    buf[q.len] = 0;
    return buf;
}

/* Whether two alignments agree in score, ends, CIGAR and statistics. */
static inline int tl_same_aln(const swgpu_aln_t *a, const swgpu_aln_t *b)
{
    return a->score == b->score && a->qbeg == b->qbeg && a->qend == b->qend &&
           a->tbeg == b->tbeg && a->tend == b->tend && a->n_cigar == b->n_cigar &&
           (a->n_cigar == 0 || memcmp(a->cigar, b->cigar, a->n_cigar * sizeof *a->cigar) == 0) &&
           a->length == b->length && a->n_ident == b->n_ident &&
           a->n_mismatch == b->n_mismatch && a->n_gapopen == b->n_gapopen &&
           a->n_gaps == b->n_gaps;
}

/* Whether two search results hold the same hits, every field of each:
 * target, score, bits, E-value, strand, HSP number and alignment. */
static inline int tl_same_hits(const swgpu_search_result_t *a, const swgpu_search_result_t *b)
{
    if (a->n_queries != b->n_queries)
        return 0;
    for (size_t i = 0; i < a->n_queries; i++) {
        if (a->q[i].query != b->q[i].query || a->q[i].n_hits != b->q[i].n_hits)
            return 0;
        for (size_t h = 0; h < a->q[i].n_hits; h++) {
            const swgpu_hit_t *x = &a->q[i].hits[h], *y = &b->q[i].hits[h];
            if (x->target != y->target || x->score != y->score || x->bits != y->bits ||
                x->evalue != y->evalue || x->minus != y->minus || x->hsp != y->hsp ||
                !tl_same_aln(&x->aln, &y->aln))
                return 0;
        }
    }
    return 1;
}

/* swgpu_align's score of a[0..m) against b[0..n) (codes); -1 on error. */
static inline int64_t tl_align_score(const uint8_t *a, size_t m, const uint8_t *b, size_t n,
                                     const swgpu_matrix_t *mat, int open, int ext)
{
    swgpu_aln_t r;
    int64_t v = -1;
    memset(&r, 0, sizeof r);
    if (swgpu_align(a, m, b, n, mat, open, ext, 1, &r) == 0)
        v = r.score;
    swgpu_aln_free(&r);
    return v;
}

#ifdef SWGPU_IO_H
/* A database built by hand (struct swgpu_db: for tests that include
 * io/io.h before this file): sequences given in database order, sorted here
 * by ascending length (ties in database order), as struct swgpu_db wants;
 * tl_tdb_free frees what tl_tdb_build allocated. */
typedef struct {
    struct swgpu_db db;
    uint8_t *res;
    uint64_t *off;
    uint32_t *orig, *rank;
} tl_tdb_t;

static inline void tl_tdb_build(tl_tdb_t *d, swgpu_alphabet_t alpha, uint8_t **seqs,
                                const size_t *lens, size_t n)
{
    uint64_t total = 0, maxlen = 0;
    memset(d, 0, sizeof *d);
    for (size_t i = 0; i < n; i++) {
        total += lens[i];
        if (lens[i] > maxlen) maxlen = lens[i];
    }
    d->res = malloc(total + 1);
    d->off = malloc((n + 1) * sizeof *d->off);
    d->orig = malloc(n * sizeof *d->orig + 1);
    d->rank = malloc(n * sizeof *d->rank + 1);
    for (size_t i = 0; i < n; i++) d->orig[i] = (uint32_t)i;
    for (size_t i = 1; i < n; i++) { /* stable insertion sort by length */
        uint32_t v = d->orig[i];
        size_t j = i;
        while (j > 0 && lens[d->orig[j - 1]] > lens[v]) {
            d->orig[j] = d->orig[j - 1];
            j--;
        }
        d->orig[j] = v;
    }
    d->off[0] = 0;
    for (size_t k = 0; k < n; k++) {
        if (lens[d->orig[k]]) memcpy(d->res + d->off[k], seqs[d->orig[k]], lens[d->orig[k]]);
        d->off[k + 1] = d->off[k] + lens[d->orig[k]];
        d->rank[d->orig[k]] = (uint32_t)k;
    }
    d->db.alphabet = alpha;
    d->db.n = n;
    d->db.total_res = total;
    d->db.max_len = maxlen;
    d->db.res = d->res;
    d->db.off = d->off;
    d->db.orig = d->orig;
    d->db.rank = d->rank;
}

static inline void tl_tdb_free(tl_tdb_t *d)
{
    free(d->res);
    free(d->off);
    free(d->orig);
    free(d->rank);
}
#endif /* SWGPU_IO_H */

#endif
