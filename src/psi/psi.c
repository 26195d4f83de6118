/*
 * psi.c - iterated searches in the manner of PSI-BLAST: a position-specific
 * score matrix (PSSM) from the hits of one round (swgpu_pssm_from_hits), and
 * rounds of searching with it (swgpu_search_iterate).
 *
 * The PSSM follows the published method of PSI-BLAST:
 *   Altschul SF, Madden TL, Schaffer AA, Zhang J, Zhang Z, Miller W,
 *   Lipman DJ (1997) "Gapped BLAST and PSI-BLAST: a new generation of protein
 *   database search programs", Nucleic Acids Res 25:3389-3402;
 *   Schaffer AA, Aravind L, Madden TL, Shavirin S, Spouge JL, Wolf YI,
 *   Koonin EV, Altschul SF (2001) "Improving the accuracy of PSI-BLAST protein
 *   database searches with composition-based statistics and other
 *   refinements", Nucleic Acids Res 29:2994-3005 (gaps in columns, the
 *   underlying matrix's frequency ratios in the pseudocounts);
 *   Altschul SF, Gertz EM, Agarwala R, Schaffer AA, Yu YK (2009) "PSI-BLAST
 *   pseudocounts and the minimum description length principle", Nucleic
 *   Acids Res 37:815-824 (column-specific pseudocounts, BLAST+'s default);
 *   Henikoff S, Henikoff JG (1994) "Position-based sequence weights",
 *   J Mol Biol 243:574-578.
 * with the constants BLAST+ 2.12 uses.  In order:
 *
 *  1. The alignment M: the query is row 0; every hit with an E-value <= the
 *     inclusion threshold adds a row holding, at each query position its
 *     alignment covers, the subject residue aligned there or a gap (a query
 *     residue against nothing); subject residues between query positions are
 *     left out.  Letters other than the 20 amino acids count as X.  As
 *     psiblast puts every HSP of a subject that meets the threshold in the
 *     subject's row (a domain of the subject aligned to each repeat of the
 *     query), the row then takes, while one meets the threshold, the best
 *     local alignment of the subject with a stretch of the query that the
 *     row does not cover yet (scored as the round scored the query, its
 *     E-value as the round's); these never overlap in the query.
 *  2. Purging: a stretch of a row identical to the query (100%) is removed,
 *     and of two rows whose overlapping stretch is >= 94% identical the
 *     later one loses it (X left out of the counts); a row with nothing left
 *     drops out.
 *  3. Sequence weights, per query position i: the rows aligned at i, and the
 *     block of columns around i in which every one of those rows is aligned
 *     (the intersection of their aligned runs).  Within the block each row
 *     earns 1 / (r s) per column, r the number of distinct letters in the
 *     column (gap and X included), s the number of rows with its letter
 *     (Henikoff & Henikoff's position-based weights); the weights are
 *     normalised to sum to 1 (equal weights when every column is uniform).
 *     The weighted letter counts of column i are its observed frequencies
 *     f; a gap's weight is spread over the amino acids by their background
 *     frequencies.
 *  4. Effective observations N_i: in the half of the block's columns with
 *     the most distinct amino acids, their average number of distinct
 *     amino acids, turned into the number of independent draws from the
 *     matrix's background b that would show that many on average; at most
 *     the rows aligned at i, minus one.
 *  5. Pseudocounts (2009): the relative entropy R of the column's
 *     frequencies (with 5.5 pseudocounts drawn from b added) to b,
 *     a = 0.0457 / R^0.8, beta = 500 a / (1 - a) (a column with nothing
 *     observed: beta 30, N 0).  The target frequencies are
 *         Q_r / p_r = (N f_r / p_r + beta sum_j f_j q_rj / (p_r p_j)) / (N + beta).
 *  6. Scores: ln(Q_r / p_r) / lambda_u, lambda_u the ungapped lambda of the
 *     matrix (its "ideal" one, Robinson & Robinson frequencies p); a column
 *     with no observation (only the query aligned there) takes its query
 *     residue's frequency ratios in the matrix's own unit, log2(ratio) u,
 *     which is the matrix row but for the rounding (see below); then
 *     all scores are multiplied by the factor that brings the PSSM's own
 *     ungapped lambda to lambda_u (found by bisection) and rounded.
 *
 * Frequency ratios.  PSI-BLAST uses the frequency ratios q_rj / (p_r p_j)
 * from which its matrices were made (Henikoff & Henikoff 1992, "Amino acid
 * substitution matrices from protein blocks", PNAS 89:10915-10919, for
 * BLOSUM).  Each such matrix holds those ratios as log-odds rounded to
 * integers in a published unit, 1/2 or 1/3 bit (BLOSUM62: s_rj =
 * round(2 log2 ratio)), so here ratio_rj = 2^{s_rj / u} with u the units
 * per bit of the built-in matrix (Altschul 1991, J Mol Biol 219:555-565, on
 * a matrix's scale), balanced (balance_ratios) to undo the bias of the
 * rounding; only the rounding of each s is lost.  The scale is not
 * lambda_u: lambda_u is the matrix's lambda under Robinson & Robinson's
 * frequencies (0.3176 for BLOSUM62, not ln 2 / 2 = 0.3466), and ratios
 * e^{lambda_u s} give flatter columns than psiblast's (queries250 x
 * uniprot20k, 3 rounds: 97.9% of psiblast's last-round hits found, against
 * 99.7% with the balanced 2^{s/u} and b below).  A matrix read from a
 * file, whose unit is not known, uses lambda_u.
 *
 * Background b of steps 4 and 5.  BLAST+ takes the matrix's own background
 * frequencies there (for BLOSUM62 the amino-acid frequencies of the BLOCKS
 * from which Henikoff & Henikoff made it) and Robinson & Robinson's p
 * everywhere else; so does this file for BLOSUM62.  Other matrices use p
 * for b as well.
 */
#include "psi/psi.h"
#include "align/align.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#define NSTD 20
#define CODE_X 22
#define GAP 27            /* a gap in a row of M, as a letter */
#define NLET 28           /* letters of M: 20 amino acids, X (22), GAP; codes 20..26 unused */
#define NEAR_IDENTICAL 0.94
#define MAX_OBS 400       /* independent observations are counted up to this */
#define PSEUDO_INF 1e6    /* "infinitely many" pseudocounts */
#define SCALE 200         /* scores are kept at 1/200 before the scaling, as BLAST+ */

/* ------------------------------------------------------ the alignment M */

typedef struct {
    size_t L, n;      /* columns (query positions), rows (query first) */
    uint8_t *let;     /* n * L letters */
    uint8_t *al;      /* n * L: 1 where the row is aligned */
    uint8_t *use;     /* n: 0 once purged away */
} msa_t;

static uint8_t letter_of(uint8_t code)
{
    return code < NSTD ? code : CODE_X;
}

/* Fill row r from a hit's alignment against target t; SWGPU_EINVAL when the
 * alignment does not fit the sequences. */
static int add_row(msa_t *M, size_t r, const swgpu_aln_t *a, const swgpu_seq_t *t)
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
                let[i] = letter_of(t->res[j]);
                al[i++] = 1;
                j++;
            } else if (op == SWGPU_CIGAR_I) {
                let[i] = GAP;
                al[i++] = 1;
            } else {
                j++;
            }
        }
    }
    return 0;
}

static void drop_if_empty(msa_t *M, size_t r)
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
static void purge_similar(msa_t *M, size_t a, size_t b, double max_id)
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
        int no_x = la[p] != CODE_X && lb[p] != CODE_X;
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
        drop_if_empty(M, b);
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
static void segs_of_row(const msa_t *M, segs_t *S, size_t r)
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

static int segs_init(const msa_t *M, segs_t *S)
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
static int stretch_purged(const msa_t *M, size_t a, size_t b, size_t s, size_t e,
                          double max_id, size_t *start)
{
    const size_t L = M->L;
    const uint8_t *la = M->let + a * L, *lb = M->let + b * L;
    const uint8_t *aa = M->al + a * L, *ab = M->al + b * L;
    const uint64_t xs = 0x0101010101010101ULL * CODE_X;
    size_t eff = 0, ident = 0, p = s, first = e;
    for (size_t x = s; x < e; x++)
        if (la[x] != CODE_X && lb[x] != CODE_X) {
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
            int no_x = la[p] != CODE_X && lb[p] != CODE_X;
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
static void purge_similar_fast(msa_t *M, segs_t *S, size_t a, size_t b, double max_id)
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
    drop_if_empty(M, b);
}

/* Step 2 (see the top): stretches identical to the query, then
 * near-identical rows; fast: purge_similar_fast.  SWGPU_ENOMEM or 0. */
static int purge_rows(msa_t *M, int fast)
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
    msa_t M = {L, n, let, al, use};
    return purge_rows(&M, fast);
}

/* ----------------------------------------------------------- the matrix */

/* The units per bit of the built-in matrices' scores, as published with
 * each (NCBI's matrix files: "at a scale of ln(2)/2.0"). */
static const struct {
    const char *name;
    double units;
} matrix_units[] = {
    {"BLOSUM45", 3}, {"BLOSUM50", 3}, {"BLOSUM62", 2}, {"BLOSUM80", 2},
    {"BLOSUM90", 2}, {"PAM30", 2},    {"PAM70", 2},    {"PAM250", 3},
};

/* BLOSUM62's background: the amino-acid frequencies of the blocks it was
 * made from (Henikoff & Henikoff 1992), ARNDCQEGHILKMFPSTWYV, to four
 * decimals (normalised to sum 1 in basis_init). */
static const double blosum62_background[NSTD] = {
    0.0740, 0.0516, 0.0446, 0.0536, 0.0246, 0.0340, 0.0543, 0.0741, 0.0262, 0.0679,
    0.0989, 0.0579, 0.0250, 0.0469, 0.0387, 0.0573, 0.0508, 0.0132, 0.0324, 0.0729,
};

/* What the construction needs of the matrix (see the top): its ideal
 * ungapped lambda, the frequency ratios it was made from, the background
 * of the pseudocounts. */
typedef struct {
    const swgpu_matrix_t *m;
    double lambda;                 /* ideal ungapped lambda (Robinson & Robinson) */
    double ratio_lambda;           /* ln 2 / units per bit, or lambda when not known */
    double K;                      /* ideal ungapped K (swgpu__pssm_karlin_km's m_K) */
    double ratio[NSTD][NSTD + 1];  /* e^{ratio_lambda s_rj}; column NSTD: against X */
    double bg[NSTD];               /* b: the matrix's background, or Robinson & Robinson */
    double expno[MAX_OBS];         /* expected distinct amino acids in j draws from b */
} basis_t;

/*
 * Give back to the ratios r_rj = e^{ratio_lambda s_rj} the property of the
 * frequency ratios a matrix is made from: the target frequencies
 * b_r b_j r_rj have the background b as their marginals, sum_r b_r r_rj = 1
 * for every j (Henikoff & Henikoff 1992; Altschul 1991).  The rounding of
 * the scores loses it (BLOSUM62's 2^{s/2} give sums 0.95 to 1.09 under its
 * own background), which shifts every score of a PSSM column built from
 * them; the symmetric scaling r_rj c_r c_j that restores it is found by
 * Sinkhorn-Knopp iteration (c_j <- c_j / sqrt(sum_r b_r c_r r_rj c_j)).
 * The column against X is scaled by c_r.
 */
static void balance_ratios(basis_t *B)
{
    double c[NSTD];
    for (int r = 0; r < NSTD; r++)
        c[r] = 1;
    for (int it = 0; it < 100; it++) {
        double worst = 0;
        for (int j = 0; j < NSTD; j++) {
            double t = 0;
            for (int r = 0; r < NSTD; r++)
                t += B->bg[r] * c[r] * B->ratio[r][j] * c[j];
            c[j] /= sqrt(t);
            if (fabs(t - 1) > worst)
                worst = fabs(t - 1);
        }
        if (worst < 1e-12)
            break;
    }
    for (int r = 0; r < NSTD; r++) {
        for (int j = 0; j < NSTD; j++)
            B->ratio[r][j] *= c[r] * c[j];
        B->ratio[r][NSTD] *= c[r];
    }
}

static int basis_init(basis_t *B, const swgpu_matrix_t *m)
{
    double K, H, sum = 0;
    int rc = swgpu__matrix_ideal_karlin(m, &B->lambda, &K, &H);
    if (rc < 0)
        return rc;
    B->K = K;
    B->m = m;
    B->ratio_lambda = B->lambda;
    for (size_t k = 0; m->builtin && k < sizeof matrix_units / sizeof *matrix_units; k++)
        if (!strcmp(m->name, matrix_units[k].name))
            B->ratio_lambda = M_LN2 / matrix_units[k].units;
    for (int r = 0; r < NSTD; r++) {
        for (int j = 0; j < NSTD; j++)
            B->ratio[r][j] = exp(B->ratio_lambda * m->s[r][j]);
        B->ratio[r][NSTD] = exp(B->ratio_lambda * m->s[r][CODE_X]);
    }
    int b62 = m->builtin && !strcmp(m->name, "BLOSUM62");
    for (int r = 0; r < NSTD; r++)
        sum += B->bg[r] = b62 ? blosum62_background[r] : swgpu__robinson[r];
    for (int r = 0; r < NSTD; r++)
        B->bg[r] /= sum;
    balance_ratios(B);
    B->expno[0] = 0;
    for (int j = 1; j < MAX_OBS; j++) {
        double e = 0;
        for (int k = 0; k < NSTD; k++)
            e += pow(1.0 - B->bg[k], j);
        B->expno[j] = NSTD - e;
    }
    return SWGPU_OK;
}

/* The PSSM's ungapped lambda with integer scores s[i * NSTD + r] (rows whose
 * query residue is X left out); 0 when there is none. */
static double pssm_lambda(const int32_t *s, const uint8_t *q, size_t L)
{
    int lo = 0, hi = 0;
    size_t eff = 0;
    for (size_t i = 0; i < L; i++) {
        if (q[i] == CODE_X)
            continue;
        eff++;
        for (int r = 0; r < NSTD; r++) {
            int32_t v = s[i * NSTD + r];
            if (v == SWGPU_PSSM_FORBIDDEN) continue;
            if (v < lo) lo = v;
            if (v > hi) hi = v;
        }
    }
    if (!eff)
        return 0;
    double *prob = calloc((size_t)(hi - lo + 1), sizeof *prob), lam = 0;
    if (!prob)
        return -1;
    for (size_t i = 0; i < L; i++) {
        if (q[i] == CODE_X)
            continue;
        for (int r = 0; r < NSTD; r++)
            if (s[i * NSTD + r] != SWGPU_PSSM_FORBIDDEN)
                prob[s[i * NSTD + r] - lo] += swgpu__robinson[r] / (double)eff;
    }
    if (swgpu__ungapped_karlin(prob, lo, hi, &lam, NULL, NULL) < 0)
        lam = 0;
    free(prob);
    return lam;
}

static void apply_factor(int32_t *s, const int32_t *scaled, size_t n, double f)
{
    for (size_t k = 0; k < n; k++)
        s[k] = scaled[k] == SWGPU_PSSM_FORBIDDEN ? SWGPU_PSSM_FORBIDDEN
                                                 : swgpu__round_away(f * scaled[k] / SCALE);
}

/*
 * The integer PSSM s from the scores at 1/SCALE: the factor that brings its
 * ungapped lambda to the ideal one is bracketed (steps of 5%, doubled), then
 * halved ten times; s holds the scores of the last factor tried.
 */
static int scale_pssm(int32_t *s, const int32_t *scaled, const uint8_t *q, size_t L,
                      double ideal)
{
    double f = 1, lo = 1, hi = 1, lam;
    int first = 1, too_high = 1;
    size_t n = L * NSTD;
    for (int guard = 0;; guard++) {
        apply_factor(s, scaled, n, f);
        lam = pssm_lambda(s, q, L);
        if (lam < 0)
            return swgpu__fail(SWGPU_ENOMEM, "PSSM: out of memory");
        if (!(lam > 0) || guard > 60)
            return swgpu__fail(SWGPU_ERANGE, "PSSM: the expected score is not negative: no "
                               "scaling to the matrix's lambda exists");
        if (lam > ideal) { /* scores too small: a larger factor */
            if (first) {
                hi = f = 1.05;
                lo = 1;
                too_high = 1;
                first = 0;
            } else {
                if (!too_high)
                    break;
                hi += hi - 1;
                f = hi;
            }
        } else {
            if (first) {
                hi = 1;
                lo = f = 0.95;
                too_high = 0;
                first = 0;
            } else {
                if (too_high)
                    break;
                lo += lo - 1;
                f = lo;
            }
        }
    }
    for (int it = 0; it < 10; it++) {
        f = 0.5 * (hi + lo);
        apply_factor(s, scaled, n, f);
        lam = pssm_lambda(s, q, L);
        if (lam < 0)
            return swgpu__fail(SWGPU_ENOMEM, "PSSM: out of memory");
        if (lam > ideal)
            lo = f;
        else
            hi = f;
    }
    return SWGPU_OK;
}

/* ------------------------------------------------------------ the build */

typedef struct {
    double mw[NLET];     /* weighted letter frequencies (gap spread after) */
    double gapless;      /* weight of the rows with a residue here */
    double sigma;        /* distinct letters summed over the block's columns */
    int distinct[NSTD + 1]; /* block columns by number of distinct amino acids */
    size_t nrows;        /* rows aligned here (the query included) */
    long left, right;    /* the block: columns [left, right]; -1 / L when none */
} column_t;

/* The block of every column: the intersection of the aligned runs of the
 * rows (the query excepted) aligned there. */
static void blocks(const msa_t *M, column_t *col)
{
    const size_t L = M->L;
    for (size_t i = 0; i < L; i++) {
        col[i].left = -1;
        col[i].right = (long)L;
    }
    for (size_t r = 1; r < M->n; r++) {
        const uint8_t *al = M->al + r * L;
        for (size_t i = 0; i < L;) {
            if (!al[i]) {
                i++;
                continue;
            }
            size_t e = i;
            while (e < L && al[e])
                e++;
            for (size_t k = i; k < e; k++) { /* run [i, e) */
                if ((long)i > col[k].left) col[k].left = (long)i;
                if ((long)e - 1 < col[k].right) col[k].right = (long)e - 1;
            }
            i = e;
        }
    }
}

/* Henikoff & Henikoff weights of the rows rows[0..nr) over column i's block
 * into w (indexed by row), and the block's distinct-letter figures; letT:
 * M's letters column by column (letT[j * n + r]: a column's rows side by
 * side, where M holds them a row apart). */
static void weights(const msa_t *M, const uint8_t *letT, const size_t *rows, size_t nr,
                    column_t *c, double *w, unsigned *cnt)
{
    const size_t n = M->n;
    int varied = 0;
    for (size_t k = 0; k < nr; k++)
        w[rows[k]] = 0;
    c->sigma = 0;
    memset(c->distinct, 0, sizeof c->distinct);
    for (long j = c->left; j <= c->right; j++) {
        unsigned d = 0, std = 0;
        memset(cnt, 0, NLET * sizeof *cnt);
        for (size_t k = 0; k < nr; k++) {
            uint8_t x = letT[(size_t)j * n + rows[k]];
            if (cnt[x]++ == 0) {
                d++;
                std += x < NSTD;
            }
        }
        c->sigma += d;
        c->distinct[std < NSTD ? std : NSTD]++;
        varied |= d > 1;
        double inv[NLET]; /* each letter's term, divided once */
        for (int x = 0; x < NLET; x++)
            if (cnt[x])
                inv[x] = 1.0 / ((double)cnt[x] * d);
        for (size_t k = 0; k < nr; k++)
            w[rows[k]] += inv[letT[(size_t)j * n + rows[k]]];
    }
    double sum = 0;
    for (size_t k = 0; k < nr; k++)
        sum += varied ? w[rows[k]] : 1;
    for (size_t k = 0; k < nr; k++)
        w[rows[k]] = varied ? w[rows[k]] / sum : 1.0 / (double)nr;
}

/* Effective independent observations of column i (see the top). */
static double observations(const basis_t *B, const column_t *c, size_t L)
{
    if (c->left < 0 || c->right >= (long)L || c->nrows == 0)
        return 0;
    long half = (c->right - c->left + 2) / 2;
    if (half < 1)
        half = 1;
    long taken = 0, total = 0;
    for (int k = NSTD; k >= 0 && taken < half; k--) {
        long n = c->distinct[k];
        if (taken + n > half)
            n = half - taken;
        taken += n;
        total += n * k;
    }
    double ave = (double)total / (double)taken, indep;
    int i = 1;
    while (i < MAX_OBS && B->expno[i] <= ave)
        i++;
    indep = i == MAX_OBS ? MAX_OBS
                         : i - (B->expno[i] - ave) / (B->expno[i] - B->expno[i - 1]);
    if (indep > (double)c->nrows)
        indep = (double)c->nrows;
    return indep - 1 > 0 ? indep - 1 : 0;
}

/* The number of pseudocounts of a column (Altschul et al. 2009). */
static double pseudocounts(const basis_t *B, const double *f, double obs)
{
    double adj[NSTD], sum = 0, R = 0;
    for (int r = 0; r < NSTD; r++) {
        adj[r] = f[r] * obs + B->bg[r] * 5.5;
        sum += adj[r];
    }
    for (int r = 0; r < NSTD; r++) {
        adj[r] /= sum;
        if (adj[r] > 1e-4)
            R += adj[r] * log(adj[r] / B->bg[r]);
    }
    if (R < 1e-4)
        R = 1e-4;
    double a = 0.0457 / pow(R, 0.8);
    return a < 1 - 1e-4 ? 500 * a / (1 - a) : PSEUDO_INF;
}

/* The PSSM of alignment M (rows purged) for query codes q. */
static int build(const basis_t *B, const msa_t *M, const uint8_t *qcodes, const char *id,
                 swgpu_pssm_t **out)
{
    const size_t L = M->L, n = M->n;
    column_t *col = calloc(L, sizeof *col);
    double *w = calloc(n, sizeof *w), *info = calloc(L, sizeof *info),
           *relw = calloc(L, sizeof *relw), *Q = malloc(L * NSTD * sizeof *Q);
    size_t *rows = malloc(n * sizeof *rows), *prev = malloc(n * sizeof *prev), nprev = 0;
    int32_t *scaled = malloc(L * NSTD * sizeof *scaled), *s = malloc(L * NSTD * sizeof *s);
    uint8_t *obsd = malloc(L), *pct = malloc(L * NSTD), *letT = malloc(L * n);
    unsigned cnt[NLET];
    int rc = SWGPU_OK;
    if (!col || !w || !info || !relw || !Q || !rows || !prev || !scaled || !s || !obsd || !pct ||
        !letT) {
        rc = swgpu__fail(SWGPU_ENOMEM, "PSSM %s: out of memory for %zu positions", id, L);
        goto done;
    }
    for (size_t r = 0; r < n; r++)
        for (size_t i = 0; i < L; i++)
            letT[i * n + r] = M->let[r * L + i];
    blocks(M, col);
    /* 3. weights, observed frequencies */
    int have_prev = 0;
    for (size_t i = 0; i < L; i++) {
        column_t *c = &col[i];
        size_t nr = 0;
        for (size_t r = 0; r < n; r++)
            if (M->al[r * L + i])
                rows[nr++] = r;
        c->nrows = nr;
        if (nr <= 1) {
            have_prev = 0;
            continue;
        }
        if (have_prev && nr == nprev && !memcmp(rows, prev, nr * sizeof *rows)) {
            c->sigma = col[i - 1].sigma; /* the same rows, so the same block */
            memcpy(c->distinct, col[i - 1].distinct, sizeof c->distinct);
        } else {
            weights(M, letT, rows, nr, c, w, cnt);
            memcpy(prev, rows, nr * sizeof *rows);
            nprev = nr;
            have_prev = 1;
        }
        for (size_t k = 0; k < nr; k++) {
            uint8_t x = letT[i * n + rows[k]];
            c->mw[x] += w[rows[k]];
            if (x != GAP)
                c->gapless += w[rows[k]];
        }
        if (qcodes[i] != CODE_X) { /* a gap's weight spread by the background */
            for (int r = 0; r < NSTD; r++)
                c->mw[r] += c->mw[GAP] * swgpu__robinson[r];
            c->mw[GAP] = 0;
        }
    }
    /* 4-6. observations, pseudocounts, target frequencies, scores */
    for (size_t i = 0; i < L; i++) {
        column_t *c = &col[i];
        double *q = Q + i * NSTD, obs = 0, beta = 0;
        int any = 0;
        if (qcodes[i] != CODE_X) {
            obs = observations(B, c, L);
            beta = pseudocounts(B, c->mw, obs);
            if (beta >= PSEUDO_INF) {
                beta = 30;
                obs = 0;
            }
            for (int r = 0; r < NSTD; r++) {
                double pseudo = 0;
                for (int j = 0; j < NSTD; j++)
                    pseudo += c->mw[j] * B->ratio[r][j];
                pseudo += c->mw[CODE_X] * B->ratio[r][NSTD];
                q[r] = (obs * c->mw[r] / swgpu__robinson[r] + beta * pseudo) / (obs + beta);
                any |= q[r] != 0;
            }
        }
        obsd[i] = (uint8_t)any;
        info[i] = 0;
        for (int r = 0; r < NSTD; r++) {
            int32_t *v = &scaled[i * NSTD + r];
            if (!any && qcodes[i] < NSTD) /* nothing observed: the ratios' row */
                *v = (int32_t)lround(SCALE * log(B->ratio[qcodes[i]][r]) / B->ratio_lambda);
            else if (!any) /* a query X, B, Z, ...: the matrix row */
                *v = SCALE * B->m->s[qcodes[i]][r];
            else if (q[r] > 0)
                *v = (int32_t)lround(SCALE * log(q[r]) / B->lambda);
            else
                *v = SWGPU_PSSM_FORBIDDEN;
            if (any && q[r] > 1e-4)
                info[i] += q[r] * swgpu__robinson[r] * log(q[r]) / M_LN2;
            double pc = 100 * c->mw[r];
            pct[i * NSTD + r] = (uint8_t)(pc >= 100 ? 100 : pc > 0 ? floor(pc) : 0);
        }
        relw[i] = c->nrows > 1 && qcodes[i] != CODE_X && beta > 0
                      ? c->gapless / beta *
                            (c->sigma / (double)(c->right - c->left + 1) - 1)
                      : 0;
    }
    if ((rc = scale_pssm(s, scaled, qcodes, L, B->lambda)) < 0)
        goto done;
    for (size_t k = 0; k < L * NSTD; k++)
        if (s[k] != SWGPU_PSSM_FORBIDDEN && s[k] > SWGPU_PSSM_SCORE_MAX)
            s[k] = SWGPU_PSSM_SCORE_MAX;
    rc = swgpu__pssm_build(id, qcodes, L, s, obsd, pct, info, relw, out);
done:
    free(letT);
    free(col);
    free(w);
    free(info);
    free(relw);
    free(Q);
    free(rows);
    free(prev);
    free(scaled);
    free(s);
    free(obsd);
    free(pct);
    return rc;
}

/* How a round scored its query, for the further alignments of step 1. */
typedef struct {
    swgpu__query_t q;        /* the query's residues with m's rows, or the round's PSSM */
    const swgpu_matrix_t *m;
    int gap_open, gap_extend;
    swgpu__evalue_ctx_t ev;  /* the round's E-values of this query */
    int32_t min_score;       /* no score below it has an E-value <= the threshold */
    int32_t *best;           /* per query position: its best score against any residue */
} rescan_t;

static int rescan_init(rescan_t *S, const swgpu_seq_t *q, const swgpu_pssm_t *searched,
                       const swgpu_query_result_t *qr, const swgpu_db_t *db,
                       const swgpu_matrix_t *m, const swgpu_opts_t *o, double thr)
{
    S->m = m;
    S->gap_open = o->gap_open;
    S->gap_extend = o->gap_extend;
    if (searched)
        swgpu__pssm_query(searched, &S->q);
    else
        S->q = swgpu__query_plain(q->res, q->len);
    if (S->q.len != q->len)
        return swgpu__fail(SWGPU_EINVAL, "PSSM of query %s: the searched PSSM has %zu "
                           "positions, the query %zu", q->id, S->q.len, q->len);
    swgpu__evalue_init(&S->ev, &qr->karlin, o->evalue_model, q->len, swgpu__db_whole_res(db),
                       swgpu__db_whole_n(db));
    S->min_score = swgpu__evalue_min_score(&S->ev, thr);
    if (!(S->best = malloc((q->len ? q->len : 1) * sizeof *S->best)))
        return swgpu__fail(SWGPU_ENOMEM, "PSSM of query %s: out of memory", q->id);
    for (size_t i = 0; i < q->len; i++) {
        int32_t b = 0;
        for (int c = 0; c < SWGPU_NCODES; c++) {
            int32_t v = S->q.rows ? S->q.rows[i * SWGPU_NCODES + c] : m->s[S->q.res[i]][c];
            if (v > b)
                b = v;
        }
        S->best[i] = b;
    }
    return SWGPU_OK;
}

/* A stretch [a, b) of query positions a row does not cover, and the best
 * local alignment of the subject with it (score 0: none worth computing). */
typedef struct {
    size_t a, b;
    int32_t score;
    int64_t qend, tend; /* relative to a */
} stretch_t;

/* The best score of subject t against stretch x, when its best conceivable
 * score (the sum of its positions' best scores) can meet S->min_score. */
static int score_stretch(const rescan_t *S, const swgpu_seq_t *t, stretch_t *x)
{
    int64_t bound = 0;
    x->score = 0;
    for (size_t i = x->a; i < x->b; i++)
        bound += S->best[i];
    if (x->b <= x->a || bound < S->min_score)
        return SWGPU_OK;
    swgpu__query_t sub = S->q;
    sub.res += x->a;
    sub.len = x->b - x->a;
    if (sub.rows)
        sub.rows += x->a * SWGPU_NCODES;
    return swgpu__cpu_score_pair_q(&sub, t->res, t->len, S->m, S->gap_open, S->gap_extend, 1,
                                   swgpu__cpu_isa_best(), 0, NULL, NULL, &x->score, &x->qend,
                                   &x->tend);
}

/* Room for n stretches in *x (capacity *cap). */
static int grow(stretch_t **x, size_t n, size_t *cap)
{
    if (n <= *cap)
        return SWGPU_OK;
    size_t c = *cap ? 2 * *cap : 8;
    stretch_t *y = realloc(*x, c * sizeof *y);
    if (!y)
        return swgpu__fail(SWGPU_ENOMEM, "PSSM: out of memory");
    *x = y;
    *cap = c;
    return SWGPU_OK;
}

/*
 * The further alignments of row r (step 1): while one exists, the best local
 * alignment of subject t with a stretch of query positions the row does not
 * cover, added to the row when its E-value meets thr; the stretch it came
 * from leaves its two ends as stretches.
 */
static int add_more(msa_t *M, size_t r, const rescan_t *S, const swgpu_seq_t *t, double thr,
                    const stretch_t *pre)
{
    const uint8_t *al = M->al + r * M->L;
    stretch_t *x = NULL;
    size_t n = 0, cap = 0;
    int rc = SWGPU_OK;
    for (size_t a = 0; a < M->L;) {
        if (al[a]) {
            a++;
            continue;
        }
        size_t b = a;
        while (b < M->L && !al[b])
            b++;
        if ((rc = grow(&x, n + 1, &cap)) < 0)
            goto done;
        x[n].a = a;
        x[n].b = b;
        /* scored ahead (on the GPU: stretches_ahead), else here */
        if (pre && pre[0].a == a && pre[0].b == b && pre[0].score >= 0)
            x[n++] = pre[0];
        else if (pre && pre[1].a == a && pre[1].b == b && pre[1].score >= 0)
            x[n++] = pre[1];
        else if ((rc = score_stretch(S, t, &x[n++])) < 0)
            goto done;
        a = b;
    }
    for (;;) {
        size_t k = n;
        for (size_t i = 0; i < n; i++)
            if (x[i].score > 0 && (k == n || x[i].score > x[k].score))
                k = i;
        if (k == n || x[k].score < S->min_score ||
            !(swgpu__evalue_of(&S->ev, x[k].score, t->len) <= thr))
            break;
        swgpu__query_t sub = S->q;
        swgpu_aln_t aln = {0};
        sub.res += x[k].a;
        sub.len = x[k].b - x[k].a;
        if (sub.rows)
            sub.rows += x[k].a * SWGPU_NCODES;
        rc = swgpu__align_from_end_q(&sub, t->res, t->len, S->m, S->gap_open, S->gap_extend,
                                     x[k].score, x[k].qend, x[k].tend, 0, &aln, -1);
        if (rc < 0)
            goto done;
        aln.qbeg += (int64_t)x[k].a;
        aln.qend += (int64_t)x[k].a;
        size_t qb = (size_t)aln.qbeg, qe = (size_t)aln.qend;
        rc = add_row(M, r, &aln, t);
        swgpu_aln_free(&aln);
        if (rc < 0 || qb < x[k].a || qe > x[k].b || qb >= qe) {
            rc = swgpu__fail(SWGPU_ERANGE, "internal error: a further alignment runs off its "
                             "stretch");
            goto done;
        }
        /* the stretch's two ends: x[k] and a new one */
        if ((rc = grow(&x, n + 1, &cap)) < 0)
            goto done;
        x[n].a = qe;
        x[n].b = x[k].b;
        x[k].b = qb;
        if ((rc = score_stretch(S, t, &x[k])) < 0 || (rc = score_stretch(S, t, &x[n++])) < 0)
            goto done;
    }
done:
    free(x);
    return rc;
}

/*
 * The PSSM of query q (codes) from the hits of qr with E-value <= thr (and,
 * with S, their further alignments), in three steps so that the rounds can
 * spread the further alignments of one query's rows over threads
 * (build_worker): hits_setup (row 0 and every hit's own alignment),
 * hits_more (row r's further alignments: it reads and writes row r only),
 * hits_finish (purging, the PSSM).  Rows are independent until the purge,
 * so the order of the further alignments changes nothing.
 */
typedef struct {
    msa_t M;
    uint8_t *qcodes;
    const swgpu_seq_t *q;
    swgpu_seq_t *t;   /* t[r]: the subject of row r (r >= 1) */
    size_t nset;      /* rows set up (1 + hits; fewer after a failure) */
    const rescan_t *S;
    double thr;
    const stretch_t *pre; /* row r's two first stretches scored ahead at pre[2(r-1)], or NULL */
    /* the first failure in row order (a sequential build's): status, row */
    int rc;
    size_t bad_row;
    char msg[512];
    size_t pending;   /* rows queued whose further alignments are not done (build_worker) */
} hits_t;

static void hits_free(hits_t *H)
{
    free(H->M.let);
    free(H->M.al);
    free(H->M.use);
    free(H->qcodes);
    free(H->t);
    memset(H, 0, sizeof *H);
}

/* Record failure rc (last_error set) of row r if it comes first. */
static void hits_failed(hits_t *H, size_t r, int rc)
{
    if (H->rc == SWGPU_OK || r < H->bad_row) {
        H->rc = rc;
        H->bad_row = r;
        snprintf(H->msg, sizeof H->msg, "%s", swgpu_last_error());
    }
}

/* Step 1: M with row 0 and each included hit's own alignment; stops at the
 * first failure (recorded in H: rows before it still take their further
 * alignments, as a sequential build would have made them first).  Returns
 * an allocation failure, else SWGPU_OK (H->rc says the rest). */
static int hits_setup(hits_t *H, const swgpu_seq_t *q, const swgpu_query_result_t *qr,
                      const swgpu_db_t *db, const rescan_t *S, double thr)
{
    msa_t *M = &H->M;
    size_t nh = 0;
    memset(H, 0, sizeof *H);
    H->q = q;
    H->S = S;
    H->thr = thr;
    if (q->len == 0)
        return swgpu__fail(SWGPU_EINVAL, "PSSM of query %s: the query is empty", q->id);
    if (qr)
        for (size_t h = 0; h < qr->n_hits; h++)
            nh += qr->hits[h].evalue <= thr && qr->hits[h].score > 0;
    M->L = q->len;
    M->n = nh + 1;
    if (M->L > SIZE_MAX / M->n / 2)
        return swgpu__fail(SWGPU_ENOMEM, "PSSM of query %s: %zu rows of %zu are too many", q->id,
                           M->n, M->L);
    M->let = calloc(M->n * M->L, 1);
    M->al = calloc(M->n * M->L, 1);
    M->use = malloc(M->n);
    H->qcodes = malloc(M->L);
    H->t = calloc(M->n, sizeof *H->t);
    if (!M->let || !M->al || !M->use || !H->qcodes || !H->t) {
        hits_free(H);
        return swgpu__fail(SWGPU_ENOMEM, "PSSM of query %s: out of memory for %zu rows of %zu",
                           q->id, nh + 1, q->len);
    }
    H->q = q;
    H->S = S;
    H->thr = thr;
    memset(M->use, 1, M->n);
    for (size_t i = 0; i < M->L; i++) {
        H->qcodes[i] = q->res[i] < 27 ? q->res[i] : CODE_X;
        M->let[i] = letter_of(q->res[i]);
        M->al[i] = 1;
    }
    size_t r = 1;
    H->nset = 1;
    for (size_t h = 0; qr && h < qr->n_hits; h++) {
        const swgpu_hit_t *hit = &qr->hits[h];
        int rc;
        if (!(hit->evalue <= thr && hit->score > 0))
            continue;
        if (hit->aln.n_cigar == 0) {
            rc = swgpu__fail(SWGPU_EINVAL, "PSSM of query %s: hit %zu (database sequence %zu) "
                             "has no alignment (search without no_align)", q->id, h + 1,
                             hit->target + 1);
            hits_failed(H, r, rc);
            break;
        }
        if ((rc = swgpu_db_get(db, hit->target, &H->t[r])) < 0) {
            hits_failed(H, r, rc);
            break;
        }
        if (add_row(M, r, &hit->aln, &H->t[r]) < 0) {
            rc = swgpu__fail(SWGPU_EINVAL, "PSSM of query %s: the alignment of hit %zu runs off "
                             "its sequences", q->id, h + 1);
            hits_failed(H, r, rc);
            break;
        }
        H->nset = ++r;
    }
    return SWGPU_OK;
}

/* Step 1 for row r (1 <= r < H->nset): its further alignments, then its
 * use flag; a failure is recorded in H.  Rows may run concurrently. */
static int hits_more(hits_t *H, size_t r)
{
    int rc = H->S ? add_more(&H->M, r, H->S, &H->t[r], H->thr,
                             H->pre ? H->pre + 2 * (r - 1) : NULL)
                  : SWGPU_OK;
    if (rc == SWGPU_OK)
        drop_if_empty(&H->M, r);
    return rc;
}

/* Steps 2-6: purge, the rows left, the PSSM. */
static int hits_finish(const basis_t *B, hits_t *H, swgpu_pssm_t **out)
{
    msa_t *M = &H->M;
    int rc;
    /* 2. purging: stretches identical to the query, then near-identical rows */
    if ((rc = purge_rows(M, 1)) < 0)
        return rc;
    {   /* the rows left, query first */
        size_t k = 0;
        for (size_t x = 0; x < M->n; x++) {
            if (!M->use[x] && x)
                continue;
            if (k != x) {
                memcpy(M->let + k * M->L, M->let + x * M->L, M->L);
                memcpy(M->al + k * M->L, M->al + x * M->L, M->L);
            }
            k++;
        }
        M->n = k;
    }
    return build(B, M, H->qcodes, H->q->id, out);
}

static int from_hits(const basis_t *B, const swgpu_seq_t *q, const swgpu_query_result_t *qr,
                     const swgpu_db_t *db, const rescan_t *S, double thr, swgpu_pssm_t **out)
{
    hits_t H;
    int rc;
    *out = NULL;
    if ((rc = hits_setup(&H, q, qr, db, S, thr)) < 0)
        return rc;
    for (size_t r = 1; r < H.nset; r++)
        if ((rc = hits_more(&H, r)) < 0) {
            hits_failed(&H, r, rc);
            break;
        }
    if (H.rc < 0)
        rc = swgpu__fail(H.rc, "%s", H.msg);
    else
        rc = hits_finish(B, &H, out);
    hits_free(&H);
    return rc;
}

int swgpu_pssm_from_hits(const swgpu_seq_t *query, const swgpu_pssm_t *searched,
                         const swgpu_query_result_t *qr, const swgpu_db_t *db,
                         const swgpu_matrix_t *m, const swgpu_opts_t *opts,
                         double inclusion_evalue, swgpu_pssm_t **out)
{
    basis_t B;
    rescan_t S = {0};
    int rc;
    if (!out)
        return swgpu__fail(SWGPU_EINVAL, "PSSM from hits: NULL result pointer");
    *out = NULL;
    if (!query || !m || (qr && qr->n_hits && !db))
        return swgpu__fail(SWGPU_EINVAL, "PSSM from hits: NULL argument");
    if (swgpu_matrix_alphabet(m) != SWGPU_PROTEIN)
        return swgpu__fail(SWGPU_EALPHABET, "PSSM from hits: matrix %s is not a protein matrix",
                           swgpu_matrix_name(m));
    if (db && swgpu_db_alphabet(db) != SWGPU_PROTEIN)
        return swgpu__fail(SWGPU_EALPHABET, "PSSM from hits: the database is not protein");
    if (!(inclusion_evalue >= 0))
        return swgpu__fail(SWGPU_EINVAL, "PSSM from hits: inclusion E-value %g is negative",
                           inclusion_evalue);
    if (opts && (rc = swgpu_opts_check(opts, m)) < 0)
        return rc;
    if ((rc = basis_init(&B, m)) < 0)
        return rc;
    int more = opts && qr && qr->n_hits;
    if (more && (rc = rescan_init(&S, query, searched, qr, db, m, opts, inclusion_evalue)) < 0)
        return rc;
    rc = from_hits(&B, query, qr, db, more ? &S : NULL, inclusion_evalue, out);
    free(S.best);
    return rc;
}

/* ------------------------------------------------------------ the rounds */

void swgpu_psi_opts_init(swgpu_psi_opts_t *o)
{
    if (!o)
        return;
    o->iterations = 1;
    o->inclusion_evalue = 0.002;
    o->max_hits = 500;
    o->final_pssm = 1;
    o->align_rounds = 1;
}

void swgpu_iterate_result_destroy(swgpu_iterate_result_t *r)
{
    if (!r)
        return;
    if (r->round)
        for (size_t k = 0; k < r->n_rounds; k++)
            swgpu_search_result_destroy(r->round[k]);
    if (r->pssm)
        for (size_t k = 0; k < r->n_rounds * r->n_queries; k++)
            swgpu_pssm_destroy(r->pssm[k]);
    if (r->final_pssm)
        for (size_t i = 0; i < r->n_queries; i++)
            swgpu_pssm_destroy(r->final_pssm[i]);
    free(r->round);
    free(r->pssm);
    free(r->final_pssm);
    free(r->last_round);
    free(r->included);
    free(r->converged);
    free(r);
}

/*
 * The PSSMs of one round, built on several threads while its search goes
 * on (build_open).  A worker takes a query (in the order they come, ready:
 * its first stretches scored on the GPU, or, when none is, the newest one
 * on the host) and sets up its rows (hits_setup); their further
 * alignments, most of the work of a query with hundreds of included hits,
 * go to a queue that every worker takes from; the query's worker helps with
 * the queue until its own rows are done, then purges and builds
 * (hits_finish).  So a query of 500 long rows no longer keeps one thread
 * busy while the others wait.  At most one query per worker is set up at a
 * time (its alignment in memory).
 */
typedef struct {
    hits_t *H;
    size_t r;
} row_task_t;

typedef struct {
    const basis_t *B;
    const swgpu_db_t *db;
    double thr;
    size_t n;                       /* jobs */
    swgpu_seq_t *q;                 /* per job: the query */
    const swgpu_query_result_t **qr; /* its round's hits */
    const swgpu_pssm_t **searched;   /* the PSSM it searched with (NULL: its residues) */
    const swgpu_matrix_t *m;
    const swgpu_opts_t *o;
    swgpu_query_result_t *best;     /* per job: those of them inclusion considers */
    swgpu_pssm_t **out;
    int *rc;
    char (*msg)[512];
    int stats;                      /* 1: the PSSMs' search parameters as well (stat) */
    int *want_stat;                 /* per job: 1 if its PSSM is searched next round */
    swgpu__pssm_stat_t *stat;       /* per job: its PSSM's parameters */
    size_t *order;                  /* the stretch thread's list of jobs for the GPU */
    size_t *jq;                     /* per job: its query's index in the round's search */
    uint8_t *claimed;               /* per job: 1 once a worker took it */
    int closed;                     /* no job comes any more (build_close) */
    int rc_ahead;                   /* a failure of stretches_ahead (out of memory) */
    /* under lock: the next job, the row queue, the jobs taken whose rows are
     * not queued yet, and every hits_t's pending count and failure */
    pthread_mutex_t lock;
    pthread_cond_t cv;
    size_t next_job, setting_up;
    row_task_t *tasks;
    size_t task_head, ntasks, task_cap;
    atomic_ullong cpu_us; /* CPU microseconds of the workers (phase timings) */
    atomic_ullong max_us; /* the longest job's wall microseconds */
    /* the first further stretches of every row scored ahead on the GPU
     * (stretches_ahead): per job its rescan set-up and 2 stretches per
     * included hit, NULL where not */
#if SWGPU_HAVE_CUDA
    swgpu__cu_pairs_t *pairs;
#endif
    rescan_t *S;
    stretch_t **pre;
    size_t n_ahead;       /* stretches scored ahead (log) */
    double gpu_s;         /* time in their GPU calls (log) */
    size_t n_ready;       /* jobs [0, n_ready) have theirs (or went without: taken first) */
} build_jobs_t;

/* One queued row (called without the lock). */
static void run_row(build_jobs_t *J, row_task_t tk)
{
    int rc = hits_more(tk.H, tk.r);
    pthread_mutex_lock(&J->lock);
    if (rc < 0)
        hits_failed(tk.H, tk.r, rc);
    if (--tk.H->pending == 0)
        pthread_cond_broadcast(&J->cv);
    pthread_mutex_unlock(&J->lock);
}

/* Job k, start to end (called without the lock; J->setting_up counts it). */
static void run_job(build_jobs_t *J, size_t k, int use_pre)
{
    rescan_t S = {0};
    hits_t H;
    int set = 0, queued = 0, rc;
    double t0 = swgpu__now();
    int more = J->qr[k]->n_hits > 0, ahead = use_pre && J->pre && J->pre[k];
    rc = more && !ahead ? rescan_init(&S, &J->q[k], J->searched[k], J->qr[k], J->db, J->m, J->o,
                                      J->thr)
                        : SWGPU_OK;
    if (rc == SWGPU_OK)
        set = (rc = hits_setup(&H, &J->q[k], J->qr[k], J->db,
                               more ? (ahead ? &J->S[k] : &S) : NULL, J->thr)) == SWGPU_OK;
    if (set && ahead)
        H.pre = J->pre[k];
    pthread_mutex_lock(&J->lock);
    if (set && H.nset > 1) {
        size_t need = J->ntasks + H.nset - 1;
        if (need > J->task_cap) {
            size_t cap = J->task_cap ? 2 * J->task_cap : 1024;
            while (cap < need)
                cap *= 2;
            row_task_t *t = realloc(J->tasks, cap * sizeof *t);
            if (t) {
                J->tasks = t;
                J->task_cap = cap;
            }
        }
        if (need <= J->task_cap) { /* else (no memory for the queue): the rows here */
            for (size_t r = 1; r < H.nset; r++)
                J->tasks[J->ntasks++] = (row_task_t){&H, r};
            H.pending = H.nset - 1;
            queued = 1;
        }
    }
    J->setting_up--;
    pthread_cond_broadcast(&J->cv);
    if (set && !queued) {
        pthread_mutex_unlock(&J->lock);
        for (size_t r = 1; r < H.nset; r++)
            if ((rc = hits_more(&H, r)) < 0) {
                hits_failed(&H, r, rc);
                break;
            }
        pthread_mutex_lock(&J->lock);
    }
    while (queued && H.pending > 0) { /* help with the queue until our rows are done */
        if (J->task_head < J->ntasks) {
            row_task_t tk = J->tasks[J->task_head++];
            pthread_mutex_unlock(&J->lock);
            run_row(J, tk);
            pthread_mutex_lock(&J->lock);
        } else {
            pthread_cond_wait(&J->cv, &J->lock);
        }
    }
    pthread_mutex_unlock(&J->lock);
    if (set) {
        rc = H.rc < 0 ? swgpu__fail(H.rc, "%s", H.msg) : hits_finish(J->B, &H, &J->out[k]);
        hits_free(&H);
    }
    if (rc == SWGPU_OK && J->stats && J->want_stat[k]) { /* what the next search needs of it */
        swgpu__pssm_stat_t *st = &J->stat[k];
        st->failed = swgpu__pssm_karlin_km(J->out[k], J->m, J->o->gap_open, J->o->gap_extend,
                                           &J->B->K, &st->k) < 0;
        if (st->failed)
            snprintf(st->msg, sizeof st->msg, "%s", swgpu_last_error());
    }
    free(S.best);
    J->rc[k] = rc;
    if (rc < 0)
        snprintf(J->msg[k], sizeof J->msg[k], "%s", swgpu_last_error());
    swgpu__log(SWGPU_LOG_DEBUG, "PSSM of query %s (%zu residues) from %zu hits: %.3f s",
               J->q[k].id, J->q[k].len, J->qr[k]->n_hits, swgpu__now() - t0);
    unsigned long long us = (unsigned long long)(1e6 * (swgpu__now() - t0)),
                       was = atomic_load(&J->max_us);
    while (us > was && !atomic_compare_exchange_weak(&J->max_us, &was, us))
        ;
}

static void *build_worker(void *arg)
{
    build_jobs_t *J = arg;
    double cpu0 = swgpu__thread_cpu();
    pthread_mutex_lock(&J->lock);
    for (;;) {
        if (J->task_head < J->ntasks) {
            row_task_t tk = J->tasks[J->task_head++];
            pthread_mutex_unlock(&J->lock);
            run_row(J, tk);
            pthread_mutex_lock(&J->lock);
            continue;
        }
        while (J->next_job < J->n_ready && J->claimed[J->next_job])
            J->next_job++;
        size_t k = J->next_job, pre = 1;
        if (k == J->n_ready) { /* none ready: the newest waiting for the GPU, on the host */
            for (k = J->n; k > J->n_ready && J->claimed[k - 1]; k--)
                ;
            k = k > J->n_ready ? k - 1 : J->n;
            pre = 0;
        }
        if (k < J->n) {
            J->claimed[k] = 1;
            J->setting_up++;
            pthread_mutex_unlock(&J->lock);
            run_job(J, k, (int)pre);
            pthread_mutex_lock(&J->lock);
        } else if (J->closed && J->next_job == J->n && J->setting_up == 0) {
            break; /* no row will be queued any more */
        } else {
            pthread_cond_wait(&J->cv, &J->lock);
        }
    }
    pthread_mutex_unlock(&J->lock);
    atomic_fetch_add(&J->cpu_us, (unsigned long long)(1e6 * (swgpu__thread_cpu() - cpu0)));
    return NULL;
}

/*
 * The first further stretches of every row of jobs[0, nj), scored on the
 * GPU in one call (J->pairs; the stretch thread calls it for each new group
 * of jobs): a row's first stretches are the query positions before and
 * after its hit's alignment.  A stretch the GPU did not take keeps score -1
 * and is scored by add_more on the host; a GPU failure leaves them all
 * there (warned).  SWGPU_ENOMEM or SWGPU_OK.
 */
#if SWGPU_HAVE_CUDA
static int stretches_ahead(build_jobs_t *J, const size_t *jobs, size_t nj)
{
    swgpu__cu_pair_t *pj = NULL;
    stretch_t **where = NULL;
    size_t np = 0, cap = 0;
    int rc = SWGPU_OK;
    for (size_t jx = 0; jx < nj; jx++) {
        const size_t k = jobs[jx];
        const swgpu_query_result_t *qr = J->qr[k];
        size_t nh = 0, o = 0;
        if (qr->n_hits == 0)
            continue;
        if (rescan_init(&J->S[k], &J->q[k], J->searched[k], qr, J->db, J->m, J->o, J->thr) < 0) {
            free(J->S[k].best); /* run_job sets it up again and reports it */
            J->S[k].best = NULL;
            continue;
        }
        for (size_t h = 0; h < qr->n_hits; h++)
            nh += qr->hits[h].evalue <= J->thr && qr->hits[h].score > 0;
        if (!(J->pre[k] = malloc((nh ? 2 * nh : 1) * sizeof *J->pre[k])))
            return swgpu__fail(SWGPU_ENOMEM, "iterated search: out of memory");
        if (np + 2 * nh > cap) {
            size_t c = cap ? 2 * cap : 4096;
            while (c < np + 2 * nh)
                c *= 2;
            swgpu__cu_pair_t *a = realloc(pj, c * sizeof *a);
            if (a)
                pj = a;
            stretch_t **b = realloc(where, c * sizeof *b);
            if (b)
                where = b;
            if (!a || !b) {
                free(pj);
                free(where);
                return swgpu__fail(SWGPU_ENOMEM, "iterated search: out of memory");
            }
            cap = c;
        }
        const rescan_t *S = &J->S[k];
        const size_t L = J->q[k].len;
        for (size_t h = 0; h < qr->n_hits; h++) {
            const swgpu_hit_t *hit = &qr->hits[h];
            if (!(hit->evalue <= J->thr && hit->score > 0))
                continue;
            stretch_t *x = &J->pre[k][2 * o++];
            swgpu_seq_t t;
            const int ok = hit->aln.n_cigar > 0 && hit->aln.qbeg >= 0 &&
                           hit->aln.qbeg <= hit->aln.qend && (uint64_t)hit->aln.qend <= L &&
                           swgpu_db_get(J->db, hit->target, &t) == SWGPU_OK;
            x[0] = (stretch_t){0, ok ? (size_t)hit->aln.qbeg : 0, -1, 0, 0};
            x[1] = (stretch_t){ok ? (size_t)hit->aln.qend : 0, L, -1, 0, 0};
            if (!ok)
                continue; /* hits_setup fails there */
            for (int e = 0; e < 2; e++) { /* score_stretch's bound, then the GPU */
                int64_t bound = 0;
                for (size_t i = x[e].a; i < x[e].b; i++)
                    bound += S->best[i];
                if (x[e].b <= x[e].a || bound < S->min_score) {
                    x[e].score = 0;
                    continue;
                }
                pj[np] = (swgpu__cu_pair_t){.q = &S->q, .qoff = x[e].a, .qlen = x[e].b - x[e].a,
                                            .t = t.res, .tlen = t.len};
                where[np++] = &x[e];
            }
        }
    }
    double t0 = swgpu__now();
    if (np && (rc = swgpu__cu_pairs_run(J->pairs, pj, np)) < 0) {
        swgpu__log(SWGPU_LOG_WARN, "stretch scores on the GPU failed, the host computes them: %s",
                   swgpu_last_error());
        rc = SWGPU_OK;
        np = 0;
    }
    for (size_t x = 0; x < np; x++)
        if (pj[x].done) {
            where[x]->score = pj[x].score;
            where[x]->qend = pj[x].qend;
            where[x]->tend = pj[x].tend;
            J->n_ahead++;
        }
    J->gpu_s += swgpu__now() - t0;
    free(pj);
    free(where);
    return rc;
}
#endif

static void ahead_free(build_jobs_t *J)
{
    if (J->S)
        for (size_t k = 0; k < J->n; k++)
            free(J->S[k].best);
    if (J->pre)
        for (size_t k = 0; k < J->n; k++)
            free(J->pre[k]);
    free(J->S);
    free(J->pre);
    J->S = NULL;
    J->pre = NULL;
}

/*
 * The builds of a round run while its search goes on: build_open starts the
 * workers, the search hands over each query whose alignments are done
 * (round_done adds its job), build_close waits for the last.  Jobs are
 * taken in the order they come.  With the GPU a thread scores the first
 * further stretches of each new group of jobs (stretches_ahead) before the
 * workers take them.
 */
#if SWGPU_HAVE_CUDA
static void *stretch_thread(void *arg)
{
    build_jobs_t *J = arg;
    pthread_mutex_lock(&J->lock);
    for (;;) {
        if (J->n_ready < J->n) {
            size_t a = J->n_ready, b = J->n, nj = 0;
            for (size_t j = a; j < b; j++) /* those no worker took meanwhile */
                if (!J->claimed[j])
                    J->order[a + nj++] = j;
            pthread_mutex_unlock(&J->lock);
            if (J->rc_ahead == SWGPU_OK)
                J->rc_ahead = stretches_ahead(J, J->order + a, nj);
            pthread_mutex_lock(&J->lock);
            J->n_ready = b;
            pthread_cond_broadcast(&J->cv);
            continue;
        }
        if (J->closed)
            break;
        pthread_cond_wait(&J->cv, &J->lock);
    }
    pthread_mutex_unlock(&J->lock);
    return NULL;
}
#endif

typedef struct {
    pthread_t tid[64];
    size_t started;
    int ahead; /* the stretch thread runs */
#if SWGPU_HAVE_CUDA
    pthread_t ahead_tid;
#endif
} pool_t;

/* Start the workers of up to cap jobs (every per-job array of J holds cap). */
static int build_open(build_jobs_t *J, pool_t *P, size_t cap, int threads)
{
    size_t nt = threads > 0 ? (size_t)threads : (size_t)swgpu__ncores();
    memset(P, 0, sizeof *P);
    J->n = J->n_ready = J->next_job = J->setting_up = 0;
    J->task_head = J->ntasks = 0;
    J->closed = 0;
    J->rc_ahead = SWGPU_OK;
    J->n_ahead = 0;
    J->gpu_s = 0;
    atomic_store(&J->cpu_us, 0);
    atomic_store(&J->max_us, 0);
    if (!(J->order = malloc((cap ? cap : 1) * sizeof *J->order)) ||
        !(J->claimed = calloc(cap ? cap : 1, 1))) {
        free(J->order);
        J->order = NULL;
        return swgpu__fail(SWGPU_ENOMEM, "iterated search: out of memory for %zu PSSMs", cap);
    }
    if (nt > 64)
        nt = 64;
#if SWGPU_HAVE_CUDA
    if (J->pairs && nt > 1 &&
        (!(J->S = calloc(cap ? cap : 1, sizeof *J->S)) ||
         !(J->pre = calloc(cap ? cap : 1, sizeof *J->pre)))) {
        ahead_free(J);
        free(J->order);
        free(J->claimed);
        J->order = NULL;
        J->claimed = NULL;
        return swgpu__fail(SWGPU_ENOMEM, "iterated search: out of memory");
    }
#endif
    pthread_mutex_init(&J->lock, NULL);
    pthread_cond_init(&J->cv, NULL);
    for (; nt > 1 && P->started < nt; P->started++)
        if (pthread_create(&P->tid[P->started], NULL, build_worker, J) != 0)
            break;
#if SWGPU_HAVE_CUDA
    if (J->pre && P->started && pthread_create(&P->ahead_tid, NULL, stretch_thread, J) == 0)
        P->ahead = 1;
#endif
    return SWGPU_OK;
}

/* The job of query a of the round's search (under no lock; J->n < cap). */
static void build_add(build_jobs_t *J, const pool_t *P, size_t a, const swgpu_seq_t *q,
                      const swgpu_query_result_t *best, const swgpu_pssm_t *searched,
                      int want_stat)
{
    pthread_mutex_lock(&J->lock);
    size_t j = J->n;
    J->q[j] = *q;
    J->best[j] = *best;
    J->qr[j] = &J->best[j];
    J->searched[j] = searched;
    J->want_stat[j] = want_stat;
    J->out[j] = NULL;
    J->rc[j] = SWGPU_OK;
    J->jq[j] = a;
    J->n = j + 1;
    if (!P->ahead)
        J->n_ready = J->n;
    pthread_cond_broadcast(&J->cv);
    pthread_mutex_unlock(&J->lock);
}

/* No more jobs: wait for the builds (in this thread when no worker runs). */
static int build_close(build_jobs_t *J, pool_t *P)
{
    pthread_mutex_lock(&J->lock);
    J->closed = 1;
    if (!P->ahead)
        J->n_ready = J->n;
    pthread_cond_broadcast(&J->cv);
    pthread_mutex_unlock(&J->lock);
#if SWGPU_HAVE_CUDA
    if (P->ahead)
        pthread_join(P->ahead_tid, NULL);
    if (J->pre)
        swgpu__log(SWGPU_LOG_DEBUG, "%zu stretches scored on the GPU (%.3f s in its calls)",
                   J->n_ahead, J->gpu_s);
#endif
    if (!P->started)
        build_worker(J);
    for (size_t t = 0; t < P->started; t++)
        pthread_join(P->tid[t], NULL);
    P->started = 0;
    P->ahead = 0;
    pthread_cond_destroy(&J->cv);
    pthread_mutex_destroy(&J->lock);
    ahead_free(J);
    free(J->order);
    free(J->claimed);
    J->order = NULL;
    J->claimed = NULL;
    if (J->rc_ahead < 0)
        return J->rc_ahead;
    for (size_t k = 0; k < J->n; k++)
        if (J->rc[k] < 0)
            return swgpu__fail(J->rc[k], "%s", J->msg[k]);
    return SWGPU_OK;
}

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return (x > y) - (x < y);
}

/* The sorted targets of qr's hits with E-value <= thr, into *out (n). */
static int included_set(const swgpu_query_result_t *qr, double thr, size_t **out, size_t *n)
{
    size_t k = 0;
    *out = malloc((qr->n_hits ? qr->n_hits : 1) * sizeof **out);
    if (!*out)
        return swgpu__fail(SWGPU_ENOMEM, "iterated search: out of memory");
    for (size_t h = 0; h < qr->n_hits; h++)
        if (qr->hits[h].evalue <= thr && qr->hits[h].score > 0)
            (*out)[k++] = qr->hits[h].target;
    qsort(*out, k, sizeof **out, cmp_size);
    *n = k;
    return SWGPU_OK;
}

/* 1 if every element of a (sorted, na) is in b (sorted, nb) */
static int subset(const size_t *a, size_t na, const size_t *b, size_t nb)
{
    size_t j = 0;
    for (size_t i = 0; i < na; i++) {
        while (j < nb && b[j] < a[i])
            j++;
        if (j == nb || b[j] != a[i])
            return 0;
    }
    return 1;
}

/* What first_only (swgpu__align_sel_t) needs to tell, while a round's
 * search runs, which queries converge in it. */
typedef struct {
    const size_t *act;       /* the round's query a is query act[a] */
    size_t *const *prev_set; /* per query: the round before's included set */
    const size_t *prev_n;
    size_t max_hits;
    double thr;
} conv_t;

/* 1 if the round converges for query act[a] (its included set, as the
 * round computes it after the search, holds no hit the round before did
 * not include): no PSSM is made of its hits unless final_pssm, so they need
 * no alignment beyond those reported.  0 when unsure (out of memory). */
static int converges(void *user, size_t a, const swgpu_query_result_t *qr)
{
    const conv_t *C = user;
    size_t i = C->act[a], *set = NULL, ns = 0;
    swgpu_query_result_t best = *qr;
    if (best.n_hits > C->max_hits)
        best.n_hits = C->max_hits;
    if (included_set(&best, C->thr, &set, &ns) < 0)
        return 0;
    int conv = subset(set, ns, C->prev_set[i], C->prev_n[i]);
    free(set);
    return conv;
}

/* Keep the best top_n hits of every query of r. */
static void truncate_hits(swgpu_search_result_t *r, size_t top_n)
{
    for (size_t i = 0; i < r->n_queries; i++)
        while (r->q[i].n_hits > top_n)
            swgpu_aln_free(&r->q[i].hits[--r->q[i].n_hits].aln);
}

/* A round's builds while its search goes on (round_done, the search's
 * query_done): a query whose round is not its last, or whose final PSSM is
 * wanted, gets its job as soon as its alignments are done. */
typedef struct {
    build_jobs_t *J;
    const pool_t *P;
    conv_t conv;
    const swgpu_seq_t *qv;
    const swgpu_pssm_t *const *searched; /* per query of the search: its PSSM, or NULL */
    int last_round, final_pssm;
} round_ctx_t;

static void round_done(void *user, size_t a, const swgpu_query_result_t *qr)
{
    const round_ctx_t *X = user;
    size_t i = X->conv.act[a];
    swgpu_query_result_t best = *qr;
    if (best.n_hits > X->conv.max_hits)
        best.n_hits = X->conv.max_hits;
    /* as the round's end decides it (an allocation failure there fails the
     * round; here it only costs a PSSM that is not used) */
    int last = converges((void *)&X->conv, a, qr) || X->last_round;
    if (last && !X->final_pssm)
        return;
    build_add(X->J, X->P, a, &X->qv[i], &best, X->searched[a], !last);
}

int swgpu_search_iterate(const swgpu_seqset_t *queries, const swgpu_pssm_t *const *pssms,
                         size_t npssm, const swgpu_db_t *db, const swgpu_matrix_t *m,
                         const swgpu_opts_t *opts, const swgpu_psi_opts_t *psi,
                         swgpu_iterate_result_t **out)
{
    swgpu_iterate_result_t *R = NULL;
    basis_t B;
    swgpu_opts_t o;
    size_t n, **prev_set = NULL, *prev_n = NULL, *act = NULL;
    swgpu_seq_t *qv = NULL;
    const swgpu_pssm_t **cur = NULL;
    swgpu__pssm_stat_t *stat_of = NULL, *given = NULL; /* per query / per round's query */
    size_t *job_of = NULL;                             /* per round's query: its build job */
    build_jobs_t J;
    int rc;

    memset(&J, 0, sizeof J);
    if (!out)
        return swgpu__fail(SWGPU_EINVAL, "iterated search: NULL result pointer");
    *out = NULL;
    if (!db || !m || !opts || !psi || (!queries) == (!pssms))
        return swgpu__fail(SWGPU_EINVAL, "iterated search: NULL argument (give either "
                           "queries or PSSMs)");
    if (psi->iterations < 1)
        return swgpu__fail(SWGPU_EINVAL, "iterations %d: must be >= 1", psi->iterations);
    if (!(psi->inclusion_evalue > 0))
        return swgpu__fail(SWGPU_EINVAL, "inclusion E-value %g: must be > 0",
                           psi->inclusion_evalue);
    if (psi->max_hits < 1)
        return swgpu__fail(SWGPU_EINVAL, "max_hits %d: must be >= 1", psi->max_hits);
    if ((rc = swgpu_opts_check(opts, m)) < 0)
        return rc;
    if (swgpu_matrix_alphabet(m) != SWGPU_PROTEIN || swgpu_db_alphabet(db) != SWGPU_PROTEIN ||
        (queries && swgpu_seqset_alphabet(queries) != SWGPU_PROTEIN))
        return swgpu__fail(SWGPU_EALPHABET, "iterated search: PSSMs need protein queries, "
                           "a protein database and a protein matrix");
    if ((rc = basis_init(&B, m)) < 0)
        return rc;
    n = queries ? swgpu_seqset_size(queries) : npssm;
    o = *opts;
    o.no_align = 0; /* the PSSMs need the alignments */
    o.candidates = 0;
    if (o.top_n < psi->max_hits)
        o.top_n = psi->max_hits;
    size_t N1 = n ? n : 1, I = (size_t)psi->iterations;
    /* alignments: of the hits a round reports (the best opts->top_n) and of
     * those it includes; the others' would be thrown away */
    swgpu__align_sel_t sel = {opts->no_align ? 0 : (size_t)opts->top_n, (size_t)psi->max_hits,
                              psi->inclusion_evalue, NULL, NULL, 0, NULL, NULL, NULL};
    /* a query that goes on to another round reports this round's hits
     * only when every round is reported */
    sel.first_go_on = psi->align_rounds ? sel.first : 0;
    /* the last round builds no PSSM unless psi->final_pssm: its included
     * hits need no alignment beyond those it reports (the inclusion counts
     * and the convergence take the E-values only) */
    swgpu__align_sel_t sel_last = sel;
    if (!psi->final_pssm)
        sel_last.upto = 0;
    /* nor does a query that converges in its round */
    conv_t conv = {NULL, NULL, NULL, (size_t)psi->max_hits, psi->inclusion_evalue};
    if (!psi->final_pssm) {
        sel.first_only = converges;
        sel.user = &conv;
    }
    if (!(R = calloc(1, sizeof *R)) || !(R->round = calloc(I, sizeof *R->round)) ||
        !(R->pssm = calloc(I * N1, sizeof *R->pssm)) ||
        !(R->final_pssm = calloc(N1, sizeof *R->final_pssm)) ||
        !(R->last_round = calloc(N1, sizeof *R->last_round)) ||
        !(R->included = calloc(I * N1, sizeof *R->included)) ||
        !(R->converged = calloc(N1, sizeof *R->converged)) ||
        !(prev_set = calloc(N1, sizeof *prev_set)) || !(prev_n = calloc(N1, sizeof *prev_n)) ||
        !(act = malloc(N1 * sizeof *act)) || !(qv = calloc(N1, sizeof *qv)) ||
        !(cur = calloc(N1, sizeof *cur)) || !(J.q = calloc(N1, sizeof *J.q)) ||
        !(J.qr = calloc(N1, sizeof *J.qr)) || !(J.out = calloc(N1, sizeof *J.out)) ||
        !(J.searched = calloc(N1, sizeof *J.searched)) ||
        !(J.best = calloc(N1, sizeof *J.best)) ||
        !(J.rc = calloc(N1, sizeof *J.rc)) ||
        !(J.msg = calloc(N1, sizeof *J.msg)) ||
        !(J.want_stat = calloc(N1, sizeof *J.want_stat)) ||
        !(J.stat = calloc(N1, sizeof *J.stat)) || !(stat_of = calloc(N1, sizeof *stat_of)) ||
        !(given = calloc(N1, sizeof *given)) || !(job_of = malloc(N1 * sizeof *job_of)) ||
        !(J.jq = malloc(N1 * sizeof *J.jq))) {
        rc = swgpu__fail(SWGPU_ENOMEM, "iterated search: out of memory for %zu queries", n);
        goto fail;
    }
    R->n_queries = n;
    for (size_t i = 0; i < n; i++) {
        rc = queries ? swgpu_seqset_get(queries, i, &qv[i])
                     : pssms[i] ? swgpu_pssm_get(pssms[i], &qv[i])
                                : swgpu__fail(SWGPU_EINVAL, "iterated search: PSSM %zu is NULL",
                                              i + 1);
        if (rc < 0)
            goto fail;
    }
    J.B = &B;
    J.db = db;
    J.m = m;
    J.o = &o;
    J.thr = psi->inclusion_evalue;
#if SWGPU_HAVE_CUDA
    {   /* the builds' stretch scores on the GPU (SWGPU_CUDA_PAIRS=0: on the host) */
        const swgpu_engine_ops_t *eo = NULL;
        const char *pe = getenv("SWGPU_CUDA_PAIRS");
        if (!(pe && !strcmp(pe, "0")) && swgpu__engine_select(&o, &eo) == SWGPU_OK &&
            (eo->caps & SWGPU__CAP_GPU) &&
            swgpu__cu_pairs_create(m, o.gap_open, o.gap_extend, &J.pairs) < 0) {
            swgpu__log(SWGPU_LOG_DEBUG, "stretch scores on the host: %s", swgpu_last_error());
            J.pairs = NULL;
        }
    }
#endif
    {   /* the PSSMs' search parameters as they are built (when the search takes any) */
        swgpu_karlin_t fixed;
        J.stats = swgpu_karlin_lookup(m, o.gap_open, o.gap_extend, &fixed) == SWGPU_OK;
    }

    size_t nact = n;
    for (size_t i = 0; i < n; i++)
        act[i] = i;
    conv.act = act;
    conv.prev_set = prev_set;
    conv.prev_n = prev_n;
    for (size_t k = 0; k < I && (nact || k == 0); k++) {
        swgpu_search_result_t *r = NULL;
        double t_round = swgpu__now();
        pool_t pool;
        for (size_t a = 0; a < nact; a++) {
            cur[a] = k == 0 ? (queries ? NULL : pssms[act[a]]) : R->pssm[k * n + act[a]];
            if (k > 0 && J.stats)
                given[a] = stat_of[act[a]];
        }
        /* the round's builds go on with its search */
        round_ctx_t X = {&J, &pool, conv, qv, cur, k + 1 == I, psi->final_pssm};
        swgpu__align_sel_t sk = k + 1 == I ? sel_last : sel;
        sk.query_done = round_done;
        sk.done_user = &X;
#if SWGPU_HAVE_CUDA
        sk.pairs = J.pairs;
        swgpu__cu_pairs_forget(J.pairs); /* a round's queries are new PSSMs */
#endif
        if ((rc = build_open(&J, &pool, nact, opts->threads)) < 0)
            goto fail;
        /* the round's search: the active queries */
        if (k == 0 && queries)
            rc = swgpu__search_sel(queries, db, m, &o, &sk, &r);
        else
            rc = swgpu__search_pssm_sel(cur, nact, db, m, &o, &sk,
                                        k > 0 && J.stats ? given : NULL, &r);
        double t_build = swgpu__now();
        int rcb = build_close(&J, &pool);
        if (rc == SWGPU_OK && rcb < 0)
            rc = rcb;
        if (rc < 0) {
            for (size_t j = 0; j < J.n; j++)
                swgpu_pssm_destroy(J.out[j]);
            swgpu_search_result_destroy(r);
            goto fail;
        }
        swgpu__log(SWGPU_LOG_INFO, "round %zu: %zu queries searched, %zu PSSMs built (%.3f s "
                   "after the search)", k + 1, nact, J.n, swgpu__now() - t_build);
        swgpu__log(SWGPU_LOG_DEBUG, "round %zu: search %.3f s (scan %.3f s, alignments after "
                   "it %.3f s), PSSM builds and statistics %.3f CPU s (the longest %.3f s)", k + 1,
                   t_build - t_round, r->scan_seconds, r->align_seconds,
                   atomic_load(&J.cpu_us) * 1e-6, atomic_load(&J.max_us) * 1e-6);
        /* each query's job (SIZE_MAX: none) */
        for (size_t a = 0; a < nact; a++)
            job_of[a] = SIZE_MAX;
        for (size_t j = 0; j < J.n; j++)
            job_of[J.jq[j]] = j;
        /* as a result of every query, inactive ones without hits */
        if (nact != n || k > 0) {
            swgpu_query_result_t *q = calloc(N1, sizeof *q);
            if (!q) {
                for (size_t j = 0; j < J.n; j++)
                    swgpu_pssm_destroy(J.out[j]);
                swgpu_search_result_destroy(r);
                rc = swgpu__fail(SWGPU_ENOMEM, "iterated search: out of memory");
                goto fail;
            }
            for (size_t i = 0; i < n; i++)
                q[i].query = i;
            for (size_t a = 0; a < nact; a++) {
                q[act[a]] = r->q[a];
                q[act[a]].query = act[a];
            }
            free(r->q);
            r->q = q;
            r->n_queries = n;
        }
        R->round[k] = r;
        R->n_rounds = k + 1;
        /* which queries go on: those whose included set grew, while rounds
         * are left */
        for (size_t a = 0; a < nact && rc == SWGPU_OK; a++) {
            size_t i = act[a], *set = NULL, ns = 0;
            /* inclusion looks at the best max_hits only, as psiblast at its
             * -max_target_seqs, whatever top_n reports */
            swgpu_query_result_t best = r->q[i];
            if (best.n_hits > (size_t)psi->max_hits)
                best.n_hits = (size_t)psi->max_hits;
            if ((rc = included_set(&best, psi->inclusion_evalue, &set, &ns)) < 0)
                break;
            R->included[k * n + i] = ns;
            R->converged[i] = subset(set, ns, prev_set[i], prev_n[i]);
            free(prev_set[i]);
            prev_set[i] = set;
            prev_n[i] = ns;
            int last = R->converged[i] || k + 1 == I;
            if ((job_of[a] == SIZE_MAX) != (last && !psi->final_pssm))
                rc = swgpu__fail(SWGPU_EINVAL, "internal error: iterated search: query %zu's "
                                 "PSSM was %s", i + 1, job_of[a] == SIZE_MAX ? "not built"
                                                                             : "built unasked");
        }
        if (rc < 0) {
            for (size_t j = 0; j < J.n; j++)
                swgpu_pssm_destroy(J.out[j]);
            goto fail;
        }
        size_t still = 0;
        for (size_t a = 0; a < nact; a++) {
            size_t i = act[a], jk = job_of[a];
            int last = R->converged[i] || k + 1 == I;
            swgpu_pssm_t *p = jk == SIZE_MAX ? NULL : J.out[jk];
            if (last) {
                R->last_round[i] = k + 1;
                R->final_pssm[i] = p;
            } else {
                R->pssm[(k + 1) * n + i] = p;
                stat_of[i] = J.stat[jk];
                act[still++] = i;
            }
        }
        nact = still;
        truncate_hits(r, (size_t)opts->top_n);
        if (opts->no_align) /* the caller asked for none: drop them */
            for (size_t i = 0; i < n; i++)
                for (size_t h = 0; h < r->q[i].n_hits; h++) {
                    swgpu_aln_free(&r->q[i].hits[h].aln);
                    r->q[i].hits[h].aln.score = r->q[i].hits[h].score;
                }
    }
    rc = SWGPU_OK;
    *out = R;
    R = NULL;
fail:
    if (prev_set)
        for (size_t i = 0; i < n; i++)
            free(prev_set[i]);
    free(prev_set);
    free(prev_n);
    free(act);
    free(qv);
    free(cur);
    free(J.q);
    free(J.qr);
    free(J.searched);
    free(J.best);
    free(J.out);
    free(J.rc);
    free(J.msg);
    free(J.tasks);
    free(J.want_stat);
    free(J.stat);
    free(stat_of);
    free(given);
    free(job_of);
    free(J.jq);
#if SWGPU_HAVE_CUDA
    swgpu__cu_pairs_destroy(J.pairs);
#endif
    if (R && R->pssm && R->n_rounds < I) /* a failed round: the PSSMs made for it */
        for (size_t i = 0; i < n; i++)
            swgpu_pssm_destroy(R->pssm[R->n_rounds * n + i]);
    swgpu_iterate_result_destroy(R);
    return rc;
}
