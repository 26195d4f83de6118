/*
 * stats/seg.c - SEG, the low-complexity filter of Wootton & Federhen (1993,
 * "Statistics of local complexity in amino acid sequences and sequence
 * databases", Comput Chem 17:149-163; 1996, Methods Enzymol 266:554-571),
 * as BLAST+ runs it on each subject before composition-based statistics
 * rescore it (window 10, locut 1.8, hicut 2.1, trim at most 50 residues, at
 * most 2 non-standard residues in a window): windows of low entropy
 * (<= locut) grow while their entropy stays <= hicut, each grown segment is
 * trimmed to its least probable sub-segment, and the residues of the
 * segments become X.  The arithmetic follows BLAST's so that the segments
 * are the same: entropies in bits with its table of ln(k/10) for windows of
 * 10, probabilities with ln n! rounded to 6 decimals up to n = 10000.
 */
#include "stats/compo.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WINDOW 10
#define LOCUT 1.8
#define HICUT 2.1
#define MAXTRIM 50
#define MAXBOGUS 2
#define NALPHA 20
#define LN20 2.9957322735539909
#define LN2 0.69314718055994530941723212145818
#define NFACT 10001

/* BLAST's ln(k/10), k = 0..10, as it tabulates them */
static const double log_win10[11] = {0.0,          -2.30258509,  -1.60943791,  -1.203982804,
                                     -0.91629073,  -0.6931478,   -0.510825623, -0.356674944,
                                     -0.22314355,  -0.105360515, 0.0};

static double lnfact[NFACT];
static pthread_once_t lnfact_once = PTHREAD_ONCE_INIT;

static void lnfact_init(void)
{
    char buf[64];
    for (int n = 0; n < NFACT; n++) {
        snprintf(buf, sizeof buf, "%.6f", lgamma(n + 1.0));
        lnfact[n] = strtod(buf, NULL);
    }
}

static double ln_fact(int n)
{
    return n < NFACT ? lnfact[n] : (n + 0.5) * log(n) - n + 0.9189385332;
}

/* NCBIstdaa code -> class 0..19 of the 20 standard residues, -1: "bogus" */
static int seg_class(uint8_t c)
{
    if (c == 1)
        return 0;
    if (c >= 3 && c <= 20)
        return c - 2;
    if (c == 22)
        return 19;
    return -1;
}

/* a window of len residues at p inside a stretch of parent_len at base */
typedef struct {
    const uint8_t *base;
    int start, len, parent_len;
    int comp[NALPHA], bogus;
    int sv[NALPHA + 1]; /* the state vector: the nonzero counts, descending, 0-ended */
    double entropy;     /* -2: not kept */
} win_t;

static int desc(const void *a, const void *b)
{
    return *(const int *)b - *(const int *)a;
}

static void win_open(win_t *w, const uint8_t *base, int parent_len, int start, int len)
{
    memset(w, 0, sizeof *w);
    w->base = base;
    w->start = start;
    w->len = len;
    w->parent_len = parent_len;
    w->entropy = -2;
    for (int i = 0; i < len; i++) {
        int k = seg_class(base[start + i]);
        if (k >= 0)
            w->comp[k]++;
        else
            w->bogus++;
    }
    int n = 0;
    for (int k = 0; k < NALPHA; k++)
        if (w->comp[k])
            w->sv[n++] = w->comp[k];
    qsort(w->sv, (size_t)n, sizeof *w->sv, desc);
}

static double entropy(const int *sv)
{
    int total = 0;
    for (int i = 0; sv[i]; i++)
        total += sv[i];
    if (!total)
        return 0;
    double e = 0;
    for (int i = 0; sv[i]; i++)
        e += total == 10 ? sv[i] * log_win10[sv[i]] / LN2
                         : sv[i] * log((double)sv[i] / total) / LN2;
    return fabs(e / total);
}

/* the state vector after a residue of a class with count c leaves / joins */
static void sv_dec(int *sv, int c)
{
    for (int i = 0; sv[i]; i++)
        if (sv[i] == c && sv[i + 1] < c) {
            sv[i]--;
            return;
        }
}

static void sv_inc(int *sv, int c)
{
    for (int i = 0;; i++)
        if (sv[i] == c) {
            sv[i]++;
            return;
        }
}

/* one residue to the right; 0 at the end of the parent */
static int win_shift(win_t *w)
{
    if (w->start + 1 + w->len > w->parent_len)
        return 0;
    int k = seg_class(w->base[w->start]);
    if (k >= 0)
        sv_dec(w->sv, w->comp[k]--);
    else
        w->bogus--;
    k = seg_class(w->base[w->start + w->len]);
    if (k >= 0)
        sv_inc(w->sv, w->comp[k]++);
    else
        w->bogus++;
    w->start++;
    if (w->entropy > -2)
        w->entropy = entropy(w->sv);
    return 1;
}

/* ln of the number of assignments of the 20 letters to the state vector's
 * counts (BLAST's s_LnAss) */
static double ln_ass(const int *sv)
{
    double ans = lnfact[NALPHA];
    if (sv[0] == 0)
        return ans;
    int total = NALPHA, cls = 1, svi = sv[0], svim1 = sv[0];
    for (int i = 0;; svim1 = svi) {
        if (++i == NALPHA) {
            ans -= ln_fact(cls);
            break;
        } else if ((svi = *++sv) == svim1) {
            cls++;
        } else {
            total -= cls;
            ans -= ln_fact(cls);
            if (svi == 0) {
                ans -= ln_fact(total);
                break;
            }
            cls = 1;
        }
    }
    return ans;
}

static double ln_prob(const int *sv, int total)
{
    double perm = ln_fact(total);
    for (int i = 0; sv[i]; i++)
        perm -= ln_fact(sv[i]);
    return ln_ass(sv) + perm - total * LN20;
}

/* the least probable sub-stretch of [*l, *r] of base (at most MAXTRIM
 * residues shorter) */
static void trim(const uint8_t *base, int *l, int *r)
{
    int n = *r - *l + 1, lend = 0, rend = n - 1, minlen = 1;
    const uint8_t *p = base + *l;
    double minprob = 1;
    if (n - MAXTRIM > minlen)
        minlen = n - MAXTRIM;
    for (int len = n; len > minlen; len--) {
        win_t w;
        win_open(&w, p, n, 0, len);
        int i = 0, more = 1;
        while (more) {
            double prob = ln_prob(w.sv, len);
            if (prob < minprob) {
                minprob = prob;
                lend = i;
                rend = len + i - 1;
            }
            more = win_shift(&w);
            i++;
        }
    }
    *r = *l + rend;
    *l = *l + lend;
}

/* the entropies of the windows centred at each position of base[0, n) (-1:
 * none, or too many bogus residues); NULL when n < WINDOW or no memory */
static double *seq_entropy(const uint8_t *base, int n)
{
    int down = (WINDOW + 1) / 2 - 1, up = WINDOW - down;
    if (WINDOW > n)
        return NULL;
    double *H = malloc((size_t)n * sizeof *H);
    if (!H)
        return NULL;
    for (int i = 0; i < n; i++)
        H[i] = -1;
    win_t w;
    win_open(&w, base, n, 0, WINDOW);
    w.entropy = entropy(w.sv);
    for (int i = down; i <= n - up; i++) {
        H[i] = w.bogus > MAXBOGUS ? -1 : w.entropy;
        win_shift(&w);
    }
    return H;
}

/* BLAST's s_SegSeq on base[0, n) (offset: where base is in the whole):
 * segments masked in mask[]; -1 when out of memory */
static int seg_seq(const uint8_t *base, int n, int offset, uint8_t *mask)
{
    int down = (WINDOW + 1) / 2 - 1, up = WINDOW - down;
    double *H = seq_entropy(base, n);
    if (!H)
        return n < WINDOW ? 0 : -1;
    int first = down, last = n - up, lowlim = first, rc = 0;
    for (int i = first; i <= last; i++) {
        if (!(H[i] <= LOCUT && H[i] != -1.0))
            continue;
        int loi = i, hii = i;
        while (loi >= lowlim && H[loi] != -1.0 && !(H[loi] > HICUT))
            loi--;
        loi++;
        while (hii <= last && H[hii] != -1.0 && !(H[hii] > HICUT))
            hii++;
        hii--;
        int l = loi - down, r = hii + up - 1;
        trim(base, &l, &r);
        if (i + up - 1 < l) { /* a trigger window in the trimmed left part */
            int lend = loi - down;
            if ((rc = seg_seq(base + lend, l - lend, offset + lend, mask)) < 0)
                break;
        }
        memset(mask + offset + l, 1, (size_t)(r - l + 1));
        i = hii < r + down ? hii : r + down;
        lowlim = i + 1;
    }
    free(H);
    return rc;
}

int swgpu__seg_mask(const uint8_t *res, size_t len, uint8_t *out)
{
    pthread_once(&lnfact_once, lnfact_init);
    if (len > (size_t)INT32_MAX / 2)
        return swgpu__fail(SWGPU_EINVAL, "SEG: sequence of %zu residues too long", len);
    uint8_t *std = malloc(len ? 2 * len : 1);
    if (!std)
        return swgpu__fail(SWGPU_ENOMEM, "SEG: out of memory for %zu residues", len);
    uint8_t *mask = std + len;
    for (size_t i = 0; i < len; i++)
        std[i] = res[i] < 27 ? (uint8_t)swgpu__to_ncbistdaa[res[i]] : 21;
    memset(mask, 0, len);
    int rc = seg_seq(std, (int)len, 0, mask);
    if (rc < 0) {
        free(std);
        return swgpu__fail(SWGPU_ENOMEM, "SEG: out of memory for %zu residues", len);
    }
    for (size_t i = 0; i < len; i++)
        out[i] = mask[i] ? SWGPU_PROT_X : res[i];
    free(std);
    return SWGPU_OK;
}
