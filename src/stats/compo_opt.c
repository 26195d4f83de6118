/*
 * stats/compo_opt.c - the target frequencies of compositional matrix
 * adjustment (Yu, Wootton & Altschul 2003, PNAS 100:15688; Yu & Altschul
 * 2005, Bioinformatics 21:902-911), as BLAST+ finds them: the 20 x 20 joint
 * probabilities x closest to the matrix's own q in relative entropy
 * sum x ln(x / q), subject to the row sums of x being the query's
 * composition, its column sums the subject's, and (optionally) the relative
 * entropy of x against those compositions, sum x ln(x / (r_i c_j)), being a
 * given value.  Solved by Newton's method on the Lagrangian's stationarity
 * (primal x, duals z for the 2n - 1 independent linear constraints and eta
 * for the entropy one), each step's reduced system A D A^T factored by
 * Cholesky, the step cut to keep x positive (95% of the way to the
 * boundary), until the residual's norm is <= tol.
 */
#include "stats/compo.h"

#include <math.h>
#include <string.h>

#define N SWGPU__N_STD_AA
#define NN (N * N)
#define MA (2 * N - 1)

/* y = beta y + alpha A x: A maps x (N x N) to its column sums (rows 0..N-1
 * of y) and its row sums but the first (rows N..2N-2) */
static void mul_a(double beta, double *y, double alpha, const double *x)
{
    for (int i = 0; i < MA; i++)
        y[i] = beta == 0.0 ? 0.0 : y[i] * beta;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            y[j] += alpha * x[i * N + j];
    for (int i = 1; i < N; i++)
        for (int j = 0; j < N; j++)
            y[i + N - 1] += alpha * x[i * N + j];
}

/* y = beta y + alpha A^T x */
static void mul_at(double beta, double *y, double alpha, const double *x)
{
    for (int k = 0; k < NN; k++)
        y[k] = beta == 0.0 ? 0.0 : y[k] * beta;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            y[i * N + j] += alpha * x[j];
            if (i > 0)
                y[i * N + j] += alpha * x[i + N - 1];
        }
}

/* the Euclidean norm, scaled against overflow as BLAST's */
static double norm2(const double *v, int n)
{
    double sum = 1.0, scale = 0.0;
    for (int i = 0; i < n; i++)
        if (v[i] != 0.0) {
            double a = fabs(v[i]);
            if (scale < a) {
                sum = 1.0 + sum * (scale / a) * (scale / a);
                scale = a;
            } else {
                sum += (a / scale) * (a / scale);
            }
        }
    return scale * sqrt(sum);
}

/* in-place Cholesky of the lower triangle of W (m x m, rows of length m) */
static void cholesky(double W[2 * N][2 * N], int m)
{
    for (int i = 0; i < m; i++) {
        for (int j = 0; j < i; j++) {
            double t = W[i][j];
            for (int k = 0; k < j; k++)
                t -= W[i][k] * W[j][k];
            W[i][j] = t / W[j][j];
        }
        double t = W[i][i];
        for (int k = 0; k < i; k++)
            t -= W[i][k] * W[i][k];
        W[i][i] = sqrt(t);
    }
}

static void chol_solve(double *x, int m, double L[2 * N][2 * N])
{
    for (int i = 0; i < m; i++) {
        double t = x[i];
        for (int j = 0; j < i; j++)
            t -= L[i][j] * x[j];
        x[i] = t / L[i][i];
    }
    for (int j = m - 1; j >= 0; j--) {
        x[j] /= L[j][j];
        for (int i = 0; i < j; i++)
            x[i] -= L[j][i] * x[j];
    }
}

typedef struct {
    double W[2 * N][2 * N]; /* lower triangle used */
    double Dinv[NN], grad_re[NN], work[NN];
    double grads[2][NN], rx[NN], rz[MA + 1], z[MA + 1], old_scores[NN];
} opt_ws_t;

/* the Newton system's matrix A D A^T (and the entropy constraint's row),
 * factored */
static void factor(opt_ws_t *w, const double *x, int re, int m)
{
    for (int i = 0; i < NN; i++)
        w->Dinv[i] = re ? x[i] / (1 - w->z[m - 1]) : x[i];
    for (int r = 0; r < MA; r++)
        for (int c = 0; c <= r; c++)
            w->W[r][c] = 0.0;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            double dd = w->Dinv[i * N + j];
            w->W[j][j] += dd;
            if (i > 0) {
                w->W[i + N - 1][j] += dd;
                w->W[i + N - 1][i + N - 1] += dd;
            }
        }
    if (re) {
        double row[MA];
        memcpy(w->grad_re, w->grads[1], sizeof w->grad_re);
        w->W[m - 1][m - 1] = 0.0;
        for (int i = 0; i < NN; i++) {
            w->work[i] = w->Dinv[i] * w->grad_re[i];
            w->W[m - 1][m - 1] += w->grad_re[i] * w->work[i];
        }
        mul_a(0.0, row, 1.0, w->work);
        for (int c = 0; c < MA; c++)
            w->W[m - 1][c] = row[c];
    }
    cholesky(w->W, m);
}

/* the step (rx, rz) from the residuals in place */
static void solve(opt_ws_t *w, int re, int m)
{
    for (int i = 0; i < NN; i++)
        w->work[i] = w->rx[i] * w->Dinv[i];
    mul_a(1.0, w->rz, -1.0, w->work);
    if (re)
        for (int i = 0; i < NN; i++)
            w->rz[m - 1] -= w->grad_re[i] * w->work[i];
    chol_solve(w->rz, m, w->W);
    if (re)
        for (int i = 0; i < NN; i++)
            w->rx[i] += w->grad_re[i] * w->rz[m - 1];
    mul_at(1.0, w->rx, 1.0, w->rz);
    for (int i = 0; i < NN; i++)
        w->rx[i] *= w->Dinv[i];
}

/* the objective and entropy values and gradients at x, then the residuals'
 * norm */
static double residuals(opt_ws_t *w, const double *x, const double *q, const double *row,
                        const double *col, int re, double target_re)
{
    double v0 = 0, v1 = 0;
    for (int k = 0; k < NN; k++) {
        double t = log(x[k] / q[k]);
        v0 += x[k] * t;
        w->grads[0][k] = t + 1;
        if (re) {
            t += w->old_scores[k];
            v1 += x[k] * t;
            w->grads[1][k] = t + 1;
        }
    }
    (void)v0;
    for (int i = 0; i < NN; i++)
        w->rx[i] = re ? -w->grads[0][i] + w->z[MA] * w->grads[1][i] : -w->grads[0][i];
    mul_at(1.0, w->rx, 1.0, w->z);
    double nx = norm2(w->rx, NN);
    for (int i = 0; i < N; i++)
        w->rz[i] = col[i];
    for (int i = 1; i < N; i++)
        w->rz[i + N - 1] = row[i];
    mul_a(1.0, w->rz, -1.0, x);
    double nz;
    if (re) {
        w->rz[MA] = target_re - v1;
        nz = norm2(w->rz, MA + 1);
    } else {
        nz = norm2(w->rz, MA);
    }
    return sqrt(nx * nx + nz * nz);
}

int swgpu__cbs_optimize(double *x, const double *q, const double *row,
                        const double *col, double target_re, double tol, int maxits)
{
    static _Thread_local opt_ws_t w;
    int re = target_re > 0, m = re ? MA + 1 : MA, its = 0;
    double rnorm = 0;
    memset(w.z, 0, sizeof w.z);
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            w.old_scores[i * N + j] = log(q[i * N + j] / (row[i] * col[j]));
    memcpy(x, q, NN * sizeof *x);
    while (its <= maxits) {
        rnorm = residuals(&w, x, q, row, col, re, target_re);
        if (!(rnorm > tol))
            break;
        if (++its > maxits)
            break;
        factor(&w, x, re, m);
        solve(&w, re, m);
        double alpha = 1.0 / .95;
        for (int i = 0; i < NN; i++) {
            double a = -x[i] / w.rx[i];
            if (a >= 0 && a < alpha)
                alpha = a;
        }
        alpha *= 0.95;
        for (int i = 0; i < NN; i++)
            x[i] += alpha * w.rx[i];
        for (int i = 0; i < m; i++)
            w.z[i] += alpha * w.rz[i];
    }
    return its <= maxits && rnorm <= tol && (!re || w.z[m - 1] < 1) ? 0 : 1;
}
