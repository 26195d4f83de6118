/*
 * psi/pssm_arith.c - the PSSM arithmetic, steps 3 to 6 of psi.h: what the
 * construction needs of the matrix (swgpu__psi_basis_init), the sequence
 * weights, effective observations and pseudocounts of each column, the
 * target frequencies and scores, and the scaling of the scores to the
 * matrix's lambda (swgpu__psi_build).  test_pssm's test_pin_psiblast pins
 * them to psiblast's on a fixed alignment.
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

#include <math.h>
#include <string.h>

#define PSEUDO_INF 1e6    /* "infinitely many" pseudocounts */
#define SCALE 200         /* scores are kept at 1/200 before the scaling, as BLAST+ */

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
 * decimals (normalised to sum 1 in swgpu__psi_basis_init). */
static const double blosum62_background[PSI_NSTD] = {
    0.0740, 0.0516, 0.0446, 0.0536, 0.0246, 0.0340, 0.0543, 0.0741, 0.0262, 0.0679,
    0.0989, 0.0579, 0.0250, 0.0469, 0.0387, 0.0573, 0.0508, 0.0132, 0.0324, 0.0729,
};

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
static void balance_ratios(swgpu__psi_basis_t *B)
{
    double c[PSI_NSTD];
    for (int r = 0; r < PSI_NSTD; r++)
        c[r] = 1;
    for (int it = 0; it < 100; it++) {
        double worst = 0;
        for (int j = 0; j < PSI_NSTD; j++) {
            double t = 0;
            for (int r = 0; r < PSI_NSTD; r++)
                t += B->bg[r] * c[r] * B->ratio[r][j] * c[j];
            c[j] /= sqrt(t);
            if (fabs(t - 1) > worst)
                worst = fabs(t - 1);
        }
        if (worst < 1e-12)
            break;
    }
    for (int r = 0; r < PSI_NSTD; r++) {
        for (int j = 0; j < PSI_NSTD; j++)
            B->ratio[r][j] *= c[r] * c[j];
        B->ratio[r][PSI_NSTD] *= c[r];
    }
}

int swgpu__psi_basis_init(swgpu__psi_basis_t *B, const swgpu_matrix_t *m)
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
    for (int r = 0; r < PSI_NSTD; r++) {
        for (int j = 0; j < PSI_NSTD; j++)
            B->ratio[r][j] = exp(B->ratio_lambda * m->s[r][j]);
        B->ratio[r][PSI_NSTD] = exp(B->ratio_lambda * m->s[r][PSI_X]);
    }
    int b62 = m->builtin && !strcmp(m->name, "BLOSUM62");
    for (int r = 0; r < PSI_NSTD; r++)
        sum += B->bg[r] = b62 ? blosum62_background[r] : swgpu__robinson[r];
    for (int r = 0; r < PSI_NSTD; r++)
        B->bg[r] /= sum;
    balance_ratios(B);
    B->expno[0] = 0;
    for (int j = 1; j < PSI_MAX_OBS; j++) {
        double e = 0;
        for (int k = 0; k < PSI_NSTD; k++)
            e += pow(1.0 - B->bg[k], j);
        B->expno[j] = PSI_NSTD - e;
    }
    return SWGPU_OK;
}

/* The PSSM's ungapped lambda with integer scores s[i * PSI_NSTD + r] (rows whose
 * query residue is X left out); 0 when there is none. */
static double pssm_lambda(const int32_t *s, const uint8_t *q, size_t L)
{
    int lo = 0, hi = 0;
    size_t eff = 0;
    for (size_t i = 0; i < L; i++) {
        if (q[i] == PSI_X)
            continue;
        eff++;
        for (int r = 0; r < PSI_NSTD; r++) {
            int32_t v = s[i * PSI_NSTD + r];
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
        if (q[i] == PSI_X)
            continue;
        for (int r = 0; r < PSI_NSTD; r++)
            if (s[i * PSI_NSTD + r] != SWGPU_PSSM_FORBIDDEN)
                prob[s[i * PSI_NSTD + r] - lo] += swgpu__robinson[r] / (double)eff;
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
    size_t n = L * PSI_NSTD;
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
    double mw[PSI_NLET];        /* weighted letter frequencies (gap spread after) */
    double gapless;             /* weight of the rows with a residue here */
    double sigma;               /* distinct letters summed over the block's columns */
    int distinct[PSI_NSTD + 1]; /* block columns by number of distinct amino acids */
    size_t nrows;               /* rows aligned here (the query included) */
    long left, right;           /* the block: columns [left, right]; -1 / L when none */
} column_t;

/* The block of every column: the intersection of the aligned runs of the
 * rows (the query excepted) aligned there. */
static void blocks(const swgpu__psi_msa_t *M, column_t *col)
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
static void weights(const swgpu__psi_msa_t *M, const uint8_t *letT, const size_t *rows, size_t nr,
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
        memset(cnt, 0, PSI_NLET * sizeof *cnt);
        for (size_t k = 0; k < nr; k++) {
            uint8_t x = letT[(size_t)j * n + rows[k]];
            if (cnt[x]++ == 0) {
                d++;
                std += x < PSI_NSTD;
            }
        }
        c->sigma += d;
        c->distinct[std < PSI_NSTD ? std : PSI_NSTD]++;
        varied |= d > 1;
        double inv[PSI_NLET]; /* each letter's term, divided once */
        for (int x = 0; x < PSI_NLET; x++)
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

/* Effective independent observations of column i (see psi.h). */
static double observations(const swgpu__psi_basis_t *B, const column_t *c, size_t L)
{
    if (c->left < 0 || c->right >= (long)L || c->nrows == 0)
        return 0;
    long half = (c->right - c->left + 2) / 2;
    if (half < 1)
        half = 1;
    long taken = 0, total = 0;
    for (int k = PSI_NSTD; k >= 0 && taken < half; k--) {
        long n = c->distinct[k];
        if (taken + n > half)
            n = half - taken;
        taken += n;
        total += n * k;
    }
    double ave = (double)total / (double)taken, indep;
    int i = 1;
    while (i < PSI_MAX_OBS && B->expno[i] <= ave)
        i++;
    indep = i == PSI_MAX_OBS ? PSI_MAX_OBS
                         : i - (B->expno[i] - ave) / (B->expno[i] - B->expno[i - 1]);
    if (indep > (double)c->nrows)
        indep = (double)c->nrows;
    return indep - 1 > 0 ? indep - 1 : 0;
}

/* The number of pseudocounts of a column (Altschul et al. 2009). */
static double pseudocounts(const swgpu__psi_basis_t *B, const double *f, double obs)
{
    double adj[PSI_NSTD], sum = 0, R = 0;
    for (int r = 0; r < PSI_NSTD; r++) {
        adj[r] = f[r] * obs + B->bg[r] * 5.5;
        sum += adj[r];
    }
    for (int r = 0; r < PSI_NSTD; r++) {
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
int swgpu__psi_build(const swgpu__psi_basis_t *B, const swgpu__psi_msa_t *M,
                     const uint8_t *qcodes, const char *id, swgpu_pssm_t **out)
{
    const size_t L = M->L, n = M->n;
    column_t *col = calloc(L, sizeof *col);
    double *w = calloc(n, sizeof *w), *info = calloc(L, sizeof *info),
           *relw = calloc(L, sizeof *relw), *Q = malloc(L * PSI_NSTD * sizeof *Q);
    size_t *rows = malloc(n * sizeof *rows), *prev = malloc(n * sizeof *prev), nprev = 0;
    int32_t *scaled = malloc(L * PSI_NSTD * sizeof *scaled), *s = malloc(L * PSI_NSTD * sizeof *s);
    uint8_t *obsd = malloc(L), *pct = malloc(L * PSI_NSTD), *letT = malloc(L * n);
    unsigned cnt[PSI_NLET];
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
            if (x != PSI_GAP)
                c->gapless += w[rows[k]];
        }
        if (qcodes[i] != PSI_X) { /* a gap's weight spread by the background */
            for (int r = 0; r < PSI_NSTD; r++)
                c->mw[r] += c->mw[PSI_GAP] * swgpu__robinson[r];
            c->mw[PSI_GAP] = 0;
        }
    }
    /* 4-6. observations, pseudocounts, target frequencies, scores */
    for (size_t i = 0; i < L; i++) {
        column_t *c = &col[i];
        double *q = Q + i * PSI_NSTD, obs = 0, beta = 0;
        int any = 0;
        if (qcodes[i] != PSI_X) {
            obs = observations(B, c, L);
            beta = pseudocounts(B, c->mw, obs);
            if (beta >= PSEUDO_INF) {
                beta = 30;
                obs = 0;
            }
            for (int r = 0; r < PSI_NSTD; r++) {
                double pseudo = 0;
                for (int j = 0; j < PSI_NSTD; j++)
                    pseudo += c->mw[j] * B->ratio[r][j];
                pseudo += c->mw[PSI_X] * B->ratio[r][PSI_NSTD];
                q[r] = (obs * c->mw[r] / swgpu__robinson[r] + beta * pseudo) / (obs + beta);
                any |= q[r] != 0;
            }
        }
        obsd[i] = (uint8_t)any;
        info[i] = 0;
        for (int r = 0; r < PSI_NSTD; r++) {
            int32_t *v = &scaled[i * PSI_NSTD + r];
            if (!any && qcodes[i] < PSI_NSTD) /* nothing observed: the ratios' row */
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
            pct[i * PSI_NSTD + r] = (uint8_t)(pc >= 100 ? 100 : pc > 0 ? floor(pc) : 0);
        }
        relw[i] = c->nrows > 1 && qcodes[i] != PSI_X && beta > 0
                      ? c->gapless / beta *
                            (c->sigma / (double)(c->right - c->left + 1) - 1)
                      : 0;
    }
    if ((rc = scale_pssm(s, scaled, qcodes, L, B->lambda)) < 0)
        goto done;
    for (size_t k = 0; k < L * PSI_NSTD; k++)
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
