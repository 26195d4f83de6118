/*
 * psi/msa.c - the alignment M from which a PSSM is made (psi.h, steps 1
 * and 2): a row from a hit's alignment, and the purge of the rows that
 * repeat the query or one another, by the reference (purge_similar) and
 * fast (purge_similar_fast), which must agree (swgpu__psi_purge, tests).
 */
#include "psi/psi.h"

#include <string.h>

#define NEAR_IDENTICAL 0.94

/* Fill row r from a hit's alignment against target t; SWGPU_EINVAL when the
 * alignment does not fit the sequences. */
int swgpu__psi_add_row(swgpu__psi_msa_t *M, size_t r, const swgpu_aln_t *a, const swgpu_seq_t *t)
{
    uint8_t *let = M->let + r * M->L, *al = M->al + r * M->L;
    int64_t i = a->qbeg, j = a->tbeg;
    for (size_t k = 0; k < a->n_cigar; k++) {
        unsigned op = SWGPU_CIGAR_OP(a->cigar[k]);
        int64_t len = SWGPU_CIGAR_LEN(a->cigar[k]);
        for (int64_t x = 0; x < len; x++) {
            if (op != SWGPU_CIGAR_D && (i < 0 || (uint64_t)i >= M->L))
                return -1;
            if (op != SWGPU_CIGAR_I && (j < 0 || (uint64_t)j >= t->len))
                return -1;
            if (op == SWGPU_CIGAR_M) {
                let[i] = swgpu__psi_letter(t->res[j]);
                al[i++] = 1;
                j++;
            } else if (op == SWGPU_CIGAR_I) {
                let[i] = PSI_GAP;
                al[i++] = 1;
            } else {
                j++;
            }
        }
    }
    return 0;
}

void swgpu__psi_drop_if_empty(swgpu__psi_msa_t *M, size_t r)
{
    const uint8_t *al = M->al + r * M->L;
    for (size_t i = 0; i < M->L; i++)
        if (al[i])
            return;
    M->use[r] = 0;
}

/*
 * Purge from row b the stretches that are at least `max_id` identical to
 * row a.  A stretch runs between columns where neither row is aligned; it
 * starts at a column without X where either is aligned; its length counts
 * the columns without X where either is aligned, its identities the
 * columns where both are aligned to the same letter (not X).  Row 0 (the
 * query) counts as aligned only for the identities, so that the stretches
 * are those of b.
 */
static void purge_similar(swgpu__psi_msa_t *M, size_t a, size_t b, double max_id)
{
    const size_t L = M->L;
    const uint8_t *la = M->let + a * L, *lb = M->let + b * L;
    const uint8_t *aa = M->al + a * L;
    uint8_t *ab = M->al + b * L;
    int counting = 1;
    size_t start = 0, eff = 0, nx = 0, ident = 0, purged = 0;
    if (a == b || !M->use[a] || !M->use[b])
        return;
    for (size_t p = 0; p <= L; p++) {
        int a_al = p < L && a != 0 && aa[p], b_al = p < L && ab[p];
        if (!a_al && !b_al) { /* the end of a stretch */
            if (counting && eff > 0 && (double)ident / (double)eff >= max_id) {
                size_t stop = start + eff + nx < L ? start + eff + nx : L;
                memset(ab + start, 0, stop - start);
                purged = 1;
            }
            counting = 0;
            continue;
        }
        int no_x = la[p] != PSI_X && lb[p] != PSI_X;
        if (no_x) {
            if (counting) {
                eff++;
            } else {
                counting = 1;
                start = p;
                eff = 1;
                nx = ident = 0;
            }
        } else if (counting) {
            nx++;
        }
        if (no_x && counting && b_al && aa[p] && la[p] == lb[p])
            ident++;
    }
    if (purged)
        swgpu__psi_drop_if_empty(M, b);
}

/*
 * The same purge, fast: the rows' aligned runs (segments) are kept as lists,
 * so that a pair of rows visits only the stretches (the union of its two
 * rows' segments) in which both rows are aligned somewhere, and a stretch
 * is counted 8 columns at a time (SWAR) and left as soon as even identities
 * in all its columns left could not bring it to max_id.  purge_similar() is
 * the reference it must match (tests: swgpu__psi_purge).
 */
typedef struct {
    size_t *beg, *end; /* segments of every row: [beg, end) */
    size_t *off, *cnt; /* row r: beg/end[off[r] .. off[r] + cnt[r]) */
} segs_t;

/* row r's segments into S (room for as many as it had when S was made) */
static void segs_of_row(const swgpu__psi_msa_t *M, segs_t *S, size_t r)
{
    const uint8_t *al = M->al + r * M->L;
    size_t n = 0, o = S->off[r];
    for (size_t i = 0; i < M->L;) {
        if (!al[i]) {
            i++;
            continue;
        }
        size_t e = i;
        while (e < M->L && al[e])
            e++;
        S->beg[o + n] = i;
        S->end[o + n++] = e;
        i = e;
    }
    S->cnt[r] = n;
}

static int segs_init(const swgpu__psi_msa_t *M, segs_t *S)
{
    size_t total = 0;
    memset(S, 0, sizeof *S);
    S->off = malloc(M->n * sizeof *S->off);
    S->cnt = malloc(M->n * sizeof *S->cnt);
    if (!S->off || !S->cnt)
        return -1;
    for (size_t r = 0; r < M->n; r++) {
        const uint8_t *al = M->al + r * M->L;
        size_t n = 0;
        for (size_t i = 0; i < M->L; i++)
            n += al[i] && (i == 0 || !al[i - 1]);
        S->off[r] = total;
        total += n;
    }
    S->beg = malloc((total ? total : 1) * sizeof *S->beg);
    S->end = malloc((total ? total : 1) * sizeof *S->end);
    if (!S->beg || !S->end)
        return -1;
    for (size_t r = 0; r < M->n; r++)
        segs_of_row(M, S, r);
    return 0;
}

static void segs_free(segs_t *S)
{
    free(S->beg);
    free(S->end);
    free(S->off);
    free(S->cnt);
}

#define BYTES_LO7 0x7f7f7f7f7f7f7f7fULL
#define BYTES_HI 0x8080808080808080ULL

/* the high bit of every byte of x that is 0 */
static inline uint64_t zero_bytes(uint64_t x)
{
    return ~(((x & BYTES_LO7) + BYTES_LO7) | x | BYTES_LO7);
}

static inline uint64_t load8(const uint8_t *p)
{
    uint64_t x;
    memcpy(&x, p, sizeof x);
    return x;
}

/*
 * Stretch [s, e) of rows a and b (every column aligned in one of them): the
 * identities and the columns counted (without X) as purge_similar counts
 * them; returns 1 when the stretch is purged from b (then *start: where it
 * begins), 0 as soon as it cannot be.  The bound: with c columns counted so
 * far and R columns left, the stretch's identity is at most
 * (ident + R) / (eff + R) (rounding is monotone, so the test is exact).
 */
static int stretch_purged(const swgpu__psi_msa_t *M, size_t a, size_t b, size_t s, size_t e,
                          double max_id, size_t *start)
{
    const size_t L = M->L;
    const uint8_t *la = M->let + a * L, *lb = M->let + b * L;
    const uint8_t *aa = M->al + a * L, *ab = M->al + b * L;
    const uint64_t xs = 0x0101010101010101ULL * PSI_X;
    size_t eff = 0, ident = 0, p = s, first = e;
    for (size_t x = s; x < e; x++)
        if (la[x] != PSI_X && lb[x] != PSI_X) {
            first = x;
            break;
        }
    if (first == e)
        return 0; /* X only: nothing counted */
    while (p < e) {
        size_t stop = p + 64 < e ? p + 64 : e;
        for (; p + 8 <= stop; p += 8) {
            uint64_t A = load8(la + p), Bv = load8(lb + p);
            uint64_t nox = ~(zero_bytes(A ^ xs) | zero_bytes(Bv ^ xs)) & BYTES_HI;
            uint64_t id = nox & zero_bytes(A ^ Bv) & ((load8(aa + p) & load8(ab + p)) << 7);
            eff += (size_t)__builtin_popcountll(nox);
            ident += (size_t)__builtin_popcountll(id);
        }
        for (; p < stop; p++) {
            int no_x = la[p] != PSI_X && lb[p] != PSI_X;
            eff += no_x;
            ident += no_x && ab[p] && aa[p] && la[p] == lb[p];
        }
        size_t R = e - p;
        if (R && (double)(ident + R) / (double)(eff + R) < max_id)
            return 0;
    }
    if (!(eff > 0 && (double)ident / (double)eff >= max_id))
        return 0;
    *start = s == 0 ? 0 : first;
    return 1;
}

/* purge_similar(M, a, b, max_id) on the segments S (b's kept up to date) */
static void purge_similar_fast(swgpu__psi_msa_t *M, segs_t *S, size_t a, size_t b, double max_id)
{
    if (a == b || !M->use[a] || !M->use[b] || !S->cnt[b])
        return;
    const size_t *ab_ = S->beg + S->off[b], *ae_ = S->end + S->off[b], nb = S->cnt[b];
    const size_t *aa_ = S->beg + S->off[a], *ae = S->end + S->off[a];
    size_t na = a ? S->cnt[a] : 0; /* the query counts as aligned for identities only */
    if (a && (!na || aa_[0] >= ae_[nb - 1] || ab_[0] >= ae[na - 1]))
        return; /* no column aligned in both: no identity */
    size_t ia = 0, ib = 0;
    int purged = 0;
    while (ia < na || ib < nb) {
        /* a stretch: the union of touching or overlapping segments */
        size_t s, e, last_a = 0, last_b = 0;
        int both = a == 0;
        if (ib == nb || (ia < na && aa_[ia] < ab_[ib])) {
            s = aa_[ia];
            e = last_a = ae[ia++];
        } else {
            s = ab_[ib];
            e = last_b = ae_[ib++];
        }
        for (;;) {
            if (ia < na && aa_[ia] <= e) {
                both |= aa_[ia] < last_b;
                last_a = ae[ia];
                if (ae[ia] > e)
                    e = ae[ia];
                ia++;
            } else if (ib < nb && ab_[ib] <= e) {
                both |= ab_[ib] < last_a;
                last_b = ae_[ib];
                if (ae_[ib] > e)
                    e = ae_[ib];
                ib++;
            } else {
                break;
            }
        }
        size_t start;
        if (!both || !stretch_purged(M, a, b, s, e, max_id, &start))
            continue;
        /* the later stretches lie beyond e, and the walk reads S, not al */
        memset(M->al + b * M->L + start, 0, e - start);
        purged = 1;
    }
    if (!purged)
        return;
    segs_of_row(M, S, b);
    swgpu__psi_drop_if_empty(M, b);
}

/* Step 2 (see psi.h): stretches identical to the query, then
 * near-identical rows; fast: purge_similar_fast.  SWGPU_ENOMEM or 0. */
int swgpu__psi_purge_rows(swgpu__psi_msa_t *M, int fast)
{
    segs_t S;
    if (!fast) {
        for (size_t b = 1; b < M->n; b++)
            purge_similar(M, 0, b, 1.0);
        for (size_t i = 1; i < M->n; i++)
            for (size_t j = 1; i + j < M->n; j++)
                purge_similar(M, j, i + j, NEAR_IDENTICAL);
        return SWGPU_OK;
    }
    if (segs_init(M, &S) < 0) {
        segs_free(&S);
        return swgpu__fail(SWGPU_ENOMEM, "PSSM: out of memory for %zu rows", M->n);
    }
    for (size_t b = 1; b < M->n; b++)
        purge_similar_fast(M, &S, 0, b, 1.0);
    for (size_t i = 1; i < M->n; i++)
        for (size_t j = 1; i + j < M->n; j++)
            purge_similar_fast(M, &S, j, i + j, NEAR_IDENTICAL);
    segs_free(&S);
    return SWGPU_OK;
}

int swgpu__psi_purge(uint8_t *let, uint8_t *al, uint8_t *use, size_t n, size_t L, int fast)
{
    swgpu__psi_msa_t M = {L, n, let, al, use};
    return swgpu__psi_purge_rows(&M, fast);
}
