/*
 * seed.c - a lower bound of a long pair's best local score, from
 * exact seed matches, for the score pass's pruning (long.h: Pruning).
 *
 * The score pass skips a block once it cannot reach the best score known,
 * so the sooner a score near the final one is known, the more it skips.
 * Found as the pass goes, the best so far trails the final best: on two
 * related bacterial genomes it prunes about half the matrix, where a bound
 * close to the final score from the first row on prunes all but a band
 * around the optimal path and the corner that can still reach the score.
 *
 * The bound is the score of a real alignment, so it never exceeds the
 * optimum and the exact pass gives the same result with it:
 *
 * 1. k-mers of b (every st-th position) go into a hash table; a k-mer met
 *    twice is dropped (repeats give no collinear anchor).
 * 2. Every k-mer of a found once in b starts a maximal exact match (MEM),
 *    extended both ways.
 * 3. A collinear chain of MEMs with the highest estimated score (sparse
 *    dynamic programming over the previous CHAIN_LOOK MEMs in the order of
 *    a and the TOP best chain ends so far, which repeats' short MEMs
 *    cannot push out of reach; a later MEM overlapping an earlier one is
 *    trimmed).
 * 4. The chain becomes an alignment: between two MEMs the residues left are
 *    aligned on the diagonals with one gap (at its best place, when the two
 *    MEMs lie on different diagonals).  Its best-scoring stretch (maximum
 *    subarray over its columns and gaps) is the bound.
 *
 * Linear in the lengths (plus the MEMs' sort); 8 bytes a slot of the hash
 * table, at most 2^22 slots.  Only a better bound depends on the seeds: a
 * pair without seeds gets 0, and the pass finds its best as before.
 */
#include "long/long.h"

#include <stdlib.h>
#include <string.h>

#define CHAIN_LOOK 64          /* predecessors tried per MEM: the previous ones, */
#define TOP 16                 /* and the best chain ends so far */
#define MAX_MEMS ((size_t)1 << 22)
#define MAX_ENTRIES ((int64_t)1 << 21) /* k-mers of b in the table */

typedef struct {
    int64_t i, j, len; /* a[i .. i+len) == b[j .. j+len) */
} mem_t;

typedef struct {
    const uint8_t *a, *b;
    int64_t alen, blen;
    const swgpu__lscore_t *sc;
    int bits, k;
    uint64_t mask;
    uint8_t ok[256]; /* a code that seeds: positive against itself */
} seed_t;

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return x;
}

/* Slots: 0 empty, else (fingerprint << 32) | (position + 1), bit 31 set
 * when the k-mer occurs more than once. */
#define SLOT_POS(v) ((int64_t)((v) & 0x7fffffffu) - 1)
#define SLOT_REP 0x80000000u

/* k-mers are told apart by their slot and a 32-bit fingerprint only: two
 * that share both count as one repeated k-mer, and a hit is checked
 * against the sequences before it is used, so a collision costs a seed,
 * never a wrong one */
static void table_add(uint64_t *tab, uint64_t tmask, uint64_t key, int64_t pos)
{
    const uint64_t h = mix64(key), fp = (h >> 32) | 1;
    for (uint64_t x = h & tmask;; x = (x + 1) & tmask) {
        const uint64_t v = tab[x];
        if (!v) {
            tab[x] = (fp << 32) | (uint64_t)(pos + 1);
            return;
        }
        if ((v >> 32) == fp) {
            tab[x] = v | SLOT_REP;
            return;
        }
    }
}

/* b's position of the k-mer (to be checked), -1 if absent or repeated */
static int64_t table_find(const uint64_t *tab, uint64_t tmask, uint64_t key)
{
    const uint64_t h = mix64(key), fp = (h >> 32) | 1;
    for (uint64_t x = h & tmask;; x = (x + 1) & tmask) {
        const uint64_t v = tab[x];
        if (!v)
            return -1;
        if ((v >> 32) == fp)
            return (v & SLOT_REP) ? -1 : SLOT_POS(v);
    }
}

static int mem_cmp(const void *x, const void *y)
{
    const mem_t *p = x, *q = y;
    if (p->i != q->i)
        return p->i < q->i ? -1 : 1;
    return p->j < q->j ? -1 : p->j > q->j;
}

/* the self-scores of a[i .. i + len): what an exact match of those residues scores */
static int64_t mem_sum(const seed_t *S, int64_t i, int64_t len)
{
    int64_t w = 0;
    if (S->sc->dna)
        return (int64_t)S->sc->match * len;
    for (int64_t x = i; x < i + len; x++)
        w += S->sc->s[S->a[x]][S->a[x]];
    return w;
}

/* the maximal exact matches through unique k-mers; NULL on no memory */
static mem_t *find_mems(const seed_t *S, size_t *nout, uint64_t *bytes)
{
    const int64_t st0 = (S->blen + MAX_ENTRIES - 1) / MAX_ENTRIES, st = st0 > 4 ? st0 : 4;
    const int64_t entries = S->blen / st + 1;
    uint64_t slots = 1024, tmask, key = 0;
    uint64_t *tab;
    mem_t *v = NULL;
    size_t n = 0, cap = 0;
    int64_t run = 0;
    enum { RECENT = 16, BLK = 64 };
    uint64_t bk[BLK];
    int64_t bp[BLK];
    mem_t recent[RECENT];
    int nrec = 0, rpos = 0;

    while (slots < 2 * (uint64_t)entries)
        slots *= 2;
    tmask = slots - 1;
    *bytes = slots * sizeof *tab;
    tab = calloc(slots, sizeof *tab);
    if (!tab)
        return NULL;
    /* in blocks of BLK k-mers: their slots prefetched, then visited in order */
    for (int64_t p0 = 0; p0 < S->blen; p0 += BLK) {
        const int64_t p1 = p0 + BLK < S->blen ? p0 + BLK : S->blen;
        int nb = 0;
        for (int64_t p = p0; p < p1; p++) { /* the k-mer ending at p */
            const uint8_t c = S->b[p];
            run = S->ok[c] ? run + 1 : 0;
            key = ((key << S->bits) | c) & S->mask;
            if (run >= S->k && (p + 1 - S->k) % st == 0) {
                bk[nb] = key;
                bp[nb++] = p + 1 - S->k;
                __builtin_prefetch(&tab[mix64(key) & tmask]);
            }
        }
        for (int x = 0; x < nb; x++)
            table_add(tab, tmask, bk[x], bp[x]);
    }
    run = 0;
    key = 0;
    for (int64_t p0 = 0; p0 < S->alen && n < MAX_MEMS; p0 += BLK) {
        const int64_t p1 = p0 + BLK < S->alen ? p0 + BLK : S->alen;
        int nb = 0;
        for (int64_t p = p0; p < p1; p++) {
            const uint8_t c = S->a[p];
            run = S->ok[c] ? run + 1 : 0;
            key = ((key << S->bits) | c) & S->mask;
            if (run >= S->k) {
                bk[nb] = key;
                bp[nb++] = p + 1 - S->k;
                __builtin_prefetch(&tab[mix64(key) & tmask]);
            }
        }
        for (int b = 0; b < nb && n < MAX_MEMS; b++) {
            int64_t i = bp[b], j, ie, je, hit;
            int seen = 0;
            hit = table_find(tab, tmask, bk[b]);
            if (hit < 0)
                continue;
            for (int x = 0; x < nrec && !seen; x++) /* inside a MEM found already */
                seen = recent[x].j - recent[x].i == hit - i && i >= recent[x].i && i < recent[x].i + recent[x].len;
            if (seen || memcmp(S->a + i, S->b + hit, (size_t)S->k))
                continue;
            j = hit;
            while (i > 0 && j > 0 && S->a[i - 1] == S->b[j - 1] && S->ok[S->a[i - 1]])
                i--, j--;
            ie = bp[b] + S->k;
            je = hit + S->k;
            while (ie < S->alen && je < S->blen && S->a[ie] == S->b[je] && S->ok[S->a[ie]])
                ie++, je++;
            if (n == cap) {
                size_t c2 = cap ? 2 * cap : 4096;
                mem_t *v2 = realloc(v, c2 * sizeof *v);
                if (!v2) {
                    free(v);
                    free(tab);
                    return NULL;
                }
                v = v2;
                cap = c2;
            }
            v[n].i = i;
            v[n].j = j;
            v[n].len = ie - i;
            recent[rpos] = v[n];
            rpos = (rpos + 1) % RECENT;
            if (nrec < RECENT)
                nrec++;
            n++;
        }
    }
    free(tab);
    if (!v) /* none: an empty list, not a failure */
        v = malloc(sizeof *v);
    *nout = n;
    return v;
}

/* Kadane over the alignment's columns and gaps */
typedef struct {
    int64_t cur, best;
} kadane_t;

static void kadd(kadane_t *K, int64_t d)
{
    K->cur += d;
    if (K->cur > K->best)
        K->best = K->cur;
    if (K->cur < 0)
        K->cur = 0;
}

static int64_t sdiag(const seed_t *S, int64_t i, int64_t j)
{
    return S->sc->s[S->a[i]][S->b[j]];
}

/*
 * The residues between the end (i, j) of one MEM and the start (i2, j2) of
 * the next: on the first MEM's diagonal for p of them, one gap, on the
 * second's for the rest; p where that scores best.
 */
static void fill(const seed_t *S, kadane_t *K, int64_t i, int64_t j, int64_t i2, int64_t j2)
{
    const int64_t di = i2 - i, dj = j2 - j, m0 = di < dj ? di : dj, g = di > dj ? di - dj : dj - di;
    int64_t l2 = 0, l1 = 0, bestv, p = 0;
    if (g == 0) {
        for (int64_t x = 0; x < m0; x++)
            kadd(K, sdiag(S, i + x, j + x));
        return;
    }
    for (int64_t y = 0; y < m0; y++) /* all m0 on the second diagonal */
        l2 += sdiag(S, i2 - m0 + y, j2 - m0 + y);
    bestv = l2;
    for (int64_t x = 0; x < m0; x++) { /* x + 1 on the first */
        l1 += sdiag(S, i + x, j + x);
        l2 -= sdiag(S, i2 - m0 + x, j2 - m0 + x);
        if (l1 + l2 > bestv) {
            bestv = l1 + l2;
            p = x + 1;
        }
    }
    for (int64_t x = 0; x < p; x++)
        kadd(K, sdiag(S, i + x, j + x));
    kadd(K, -((int64_t)S->sc->open + (int64_t)S->sc->ext * g));
    for (int64_t y = p; y < m0; y++)
        kadd(K, sdiag(S, i2 - m0 + y, j2 - m0 + y));
}

/* The seeds' parameters for a x b: the k-mer length (k letters of `bits`
 * bits), the codes that seed, and in *pen the largest mismatch penalty.
 * 0 when no seed can be found (no code scores positively against itself,
 * a sequence shorter than k, or a code beyond the scoring's). */
static int seed_setup(seed_t *S, const uint8_t *a, int64_t alen, const uint8_t *b, int64_t blen,
                      const swgpu__lscore_t *sc, int64_t *pen)
{
    int usable = 0;
    memset(S, 0, sizeof *S);
    S->a = a;
    S->b = b;
    S->alen = alen;
    S->blen = blen;
    S->sc = sc;
    S->bits = sc->dna ? 2 : 5;
    { /* k: the letters that index the longer sequence (log4 or log32 of its
       * length, in 2 or 5 bits a letter), plus 6 DNA letters or 3 protein
       * ones (20 letters: 32^lg ~ 20^(1.16 lg)), so that a k-mer is met by
       * chance less than about once in 4^6 or 20^3 */
        const int64_t len = blen > alen ? blen : alen;
        int lg = 0;
        while (S->bits * lg < 62 && ((int64_t)1 << (S->bits * lg)) < len)
            lg++;
        S->k = sc->dna ? lg + 6 : (lg * 5 + 3) / 4 + 3;
        if (S->k < (sc->dna ? 12 : 5))
            S->k = sc->dna ? 12 : 5;
        if (S->k > (sc->dna ? 24 : 12))
            S->k = sc->dna ? 24 : 12;
    }
    S->mask = ((uint64_t)1 << (S->bits * S->k)) - 1;
    for (int c = 0; c < (sc->dna ? 4 : 32); c++) {
        S->ok[c] = sc->s[c][c] > 0;
        usable += S->ok[c];
    }
    *pen = 0;
    for (int x = 0; x < 32; x++)
        for (int y = 0; y < 32; y++)
            if (-sc->s[x][y] > *pen)
                *pen = -sc->s[x][y];
    if (!usable || alen < S->k || blen < S->k)
        return 0;
    for (int64_t p = 0; p < alen; p++) /* codes the scoring has (the engines index s by them) */
        if (a[p] >= 32)
            return 0;
    for (int64_t p = 0; p < blen; p++)
        if (b[p] >= 32)
            return 0;
    return 1;
}

/* The chain: f[y] = the best estimated score of a chain ending with MEM y
 * of the n sorted MEMs m (w0: their self-scores), trimmed by shift[y] to
 * follow pred[y]; returns the best chain's last MEM, -1 if none scores. */
static int64_t chain(const seed_t *S, const mem_t *m, size_t n, const int64_t *w0, int64_t pen, int64_t *f,
                     int64_t *pred, int64_t *shift)
{
    const swgpu__lscore_t *sc = S->sc;
    size_t top[TOP], ntop = 0;
    int64_t bestf = 0, end = -1;
    for (size_t y = 0; y < n; y++) {
        const mem_t *q = &m[y];
        const size_t x0 = y > CHAIN_LOOK ? y - CHAIN_LOOK : 0;
        f[y] = w0[y];
        pred[y] = -1;
        shift[y] = 0;
        /* the previous CHAIN_LOOK MEMs, then the best chain ends before them */
        for (size_t xx = x0; xx < y + ntop; xx++) {
            const size_t x = xx < y ? xx : top[xx - y];
            const mem_t *p = &m[x];
            int64_t sh = 0, di, dj, est;
            if (xx >= y && x >= x0)
                continue;
            if (p->i >= q->i || p->j >= q->j)
                continue;
            if (p->i + p->len - q->i > sh)
                sh = p->i + p->len - q->i;
            if (p->j + p->len - q->j > sh)
                sh = p->j + p->len - q->j;
            if (sh >= q->len || (!sc->dna && sh > 4096))
                continue;
            di = q->i + sh - (p->i + p->len);
            dj = q->j + sh - (p->j + p->len);
            est = f[x] + w0[y] - mem_sum(S, q->i, sh) - (di < dj ? di : dj) * pen -
                  (di != dj ? sc->open + sc->ext * (di > dj ? di - dj : dj - di) : 0);
            if (est > f[y]) {
                f[y] = est;
                pred[y] = (int64_t)x;
                shift[y] = sh;
            }
        }
        if (f[y] > bestf) {
            bestf = f[y];
            end = (int64_t)y;
        }
        { /* keep the TOP best chain ends, best first */
            size_t z = ntop < TOP ? ntop++ : TOP;
            while (z > 0 && f[top[z - 1]] < f[y]) {
                if (z < TOP)
                    top[z] = top[z - 1];
                z--;
            }
            if (z < TOP)
                top[z] = y;
        }
    }
    return end;
}

/* The chain ending with MEM `end` forwards (pred links reversed in place),
 * scored exactly: its best-scoring stretch. */
static int64_t chain_score(const seed_t *S, const mem_t *m, int64_t *pred, const int64_t *shift, int64_t end)
{
    kadane_t K = { 0, 0 };
    int64_t y = end, prev = -1;
    if (end < 0)
        return 0;
    while (y >= 0) { /* reverse the list: pred[y] becomes the next MEM */
        const int64_t up = pred[y];
        pred[y] = prev;
        prev = y;
        y = up;
    }
    for (y = prev; y >= 0; y = pred[y]) {
        const mem_t *q = &m[y];
        const int64_t sh = shift[y];
        mem_t t = { q->i + sh, q->j + sh, q->len - sh };
        kadd(&K, mem_sum(S, t.i, t.len));
        if (pred[y] >= 0) {
            const mem_t *r = &m[pred[y]];
            fill(S, &K, t.i + t.len, t.j + t.len, r->i + shift[pred[y]], r->j + shift[pred[y]]);
        }
    }
    return K.best;
}

int swgpu__long_seed_bound(const uint8_t *a, int64_t alen, const uint8_t *b, int64_t blen,
                           const swgpu__lscore_t *sc, int64_t *bound, uint64_t *bytes)
{
    seed_t S;
    mem_t *m;
    size_t n = 0;
    int64_t *f = NULL, *pred = NULL, *shift = NULL, *w0 = NULL, pen;
    uint64_t tbytes = 0;

    *bound = 0;
    *bytes = 0;
    if (!seed_setup(&S, a, alen, b, blen, sc, &pen))
        return SWGPU_OK;
    m = find_mems(&S, &n, &tbytes);
    if (!m)
        return swgpu__fail(SWGPU_ENOMEM, "long alignment: out of memory for the seed matches");
    if (n == 0) {
        free(m);
        return SWGPU_OK;
    }
    qsort(m, n, sizeof *m, mem_cmp);
    {
        size_t u = 0; /* a MEM met from several of its k-mers, once */
        for (size_t y = 0; y < n; y++)
            if (!u || m[y].i != m[u - 1].i || m[y].j != m[u - 1].j)
                m[u++] = m[y];
        n = u;
    }
    f = malloc(n * sizeof *f);
    pred = malloc(n * sizeof *pred);
    shift = malloc(n * sizeof *shift);
    w0 = malloc(n * sizeof *w0);
    if (!f || !pred || !shift || !w0) {
        free(m);
        free(f);
        free(pred);
        free(shift);
        free(w0);
        return swgpu__fail(SWGPU_ENOMEM, "long alignment: out of memory for %zu seed matches", n);
    }
    *bytes = n * (sizeof *m + sizeof *f + sizeof *pred + sizeof *shift + sizeof *w0);
    if (tbytes > *bytes)
        *bytes = tbytes;
    for (size_t y = 0; y < n; y++)
        w0[y] = mem_sum(&S, m[y].i, m[y].len);
    *bound = chain_score(&S, m, pred, shift, chain(&S, m, n, w0, pen, f, pred, shift));
    swgpu__log(SWGPU_LOG_DEBUG, "long alignment: %zu seed matches, a chain scoring %lld", n, (long long)*bound);
    free(m);
    free(f);
    free(pred);
    free(shift);
    free(w0);
    return SWGPU_OK;
}
