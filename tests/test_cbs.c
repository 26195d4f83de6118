/*
 * test_cbs.c - composition-based statistics (opts.comp_based_stats, issue 30).
 *
 *  - SEG as blastp runs it before the rescoring: the segments of every
 *    subject of tests/data/cbs_db.fa equal segmasker's (ncbi-blast+ 2.12,
 *    `segmasker -window 10 -locut 1.8 -hicut 2.1 -outfmt interval`, recorded
 *    in tests/data/cbs_db.seg);
 *  - BLAST's Newton-Raphson lambda on a two-score system with a known root;
 *  - the optimiser of modes 2 and 3: a fixed point at BLOSUM62's own
 *    marginals; the constraints met for skewed ones;
 *  - modes 1, 2, 3 through swgpu_search on the reference and CPU engines (and
 *    CUDA where a device is present): every hit's score is round(S / 32), S
 *    the reference engine's score of the query against the SEG-masked subject
 *    with the pair's matrix (built here from the compositions) and the gap
 *    costs times 32; its E-value is the Spouge E-value of S / 32 and its bit
 *    score that of the rounded score; its CIGAR rescores to S; identities
 *    counted against the subject as stored; the engines agree hit for hit;
 *  - the refusals: other matrices, DNA, PSSM queries,
 *    candidates, values out of range.
 */
#include "stats/compo.h"
#include "align/align.h"
#include "ref/ref.h"
#include "search/search.h"
#include "tap.h"
#include "testlib.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define DATA "tests/data/"

/* the segments of tests/data/cbs_db.seg against swgpu__seg_mask's */
static void test_seg(const swgpu_seqset_t *db)
{
    size_t len = 0;
    unsigned char *txt = tl_slurp(DATA "cbs_db.seg", &len);
    CHECK(txt != NULL, "cannot read cbs_db.seg");
    if (!txt)
        return;
    size_t n = swgpu_seqset_size(db), rec = 0, masked_total = 0;
    uint8_t *want = NULL, *got = NULL;
    size_t cur_len = 0;
    int bad = 0;
    char *save = NULL;
    for (char *line = strtok_r((char *)txt, "\n", &save);; line = strtok_r(NULL, "\n", &save)) {
        if (!line || line[0] == '>') {
            if (want) { /* the previous record is complete */
                swgpu_seq_t s;
                swgpu_seqset_get(db, rec - 1, &s);
                CHECK(swgpu__seg_mask(s.res, s.len, got) == SWGPU_OK, "seg %zu", rec);
                for (size_t i = 0; i < cur_len; i++) {
                    int is_x = got[i] == SWGPU_PROT_X && s.res[i] != SWGPU_PROT_X;
                    bad += is_x != (want[i] == 1);
                    masked_total += want[i];
                }
                free(want);
                free(got);
                want = got = NULL;
            }
            if (!line)
                break;
            swgpu_seq_t s;
            CHECK(rec < n, "more records in cbs_db.seg than in cbs_db.fa");
            if (rec >= n || swgpu_seqset_get(db, rec, &s) < 0)
                break;
            CHECK(!strncmp(line + 1, s.id, strlen(s.id)), "record %zu: %s", rec + 1, s.id);
            rec++;
            cur_len = s.len;
            want = calloc(s.len + 1, 1);
            got = malloc(s.len + 1);
            continue;
        }
        long a, b;
        if (want && sscanf(line, "%ld - %ld", &a, &b) == 2 && a >= 0 && b < (long)cur_len)
            memset(want + a, 1, (size_t)(b - a + 1));
        else
            CHECK(0, "bad line in cbs_db.seg: %s", line);
    }
    free(want);
    free(got);
    free(txt);
    CHECK_EQ_INT(rec, n);
    CHECK_EQ_INT(bad, 0);
    CHECK_EQ_INT(masked_total, 1113); /* segmasker's residues in segments */
}

/* scores -1 and +1 with p(+1) = 1/4: e^{lambda} / 4 + 3 e^{-lambda} / 4 = 1,
 * e^{lambda} = 3 */
static void test_lambda(void)
{
    double p[3] = {0.75, 0.0, 0.25};
    double l = swgpu__cbs_lambda_nr(p, -1, 1, 0.5);
    CHECK(fabs(l - log(3.0)) < 1e-5 * log(3.0), "lambda %.9f, expected ln 3", l);
    double q[3] = {0.25, 0.0, 0.75}; /* positive mean: no lambda */
    CHECK(swgpu__cbs_lambda_nr(q, -1, 1, 0.5) == -1.0, "positive mean");
}

/* every hit of r against the reference computation; returns the hits */
static size_t check_hits(const swgpu_search_result_t *r, const swgpu_seqset_t *qs,
                         const swgpu_db_t *db, const swgpu_matrix_t *m, const swgpu_opts_t *o,
                         size_t *n_adjusted)
{
    swgpu__cbs_basis_t b;
    CHECK(swgpu__cbs_basis_init(&b, m) == SWGPU_OK, "basis: %s", swgpu_last_error());
    swgpu_matrix_t *adj = malloc(sizeof *adj);
    size_t total = 0;
    for (size_t i = 0; i < r->n_queries; i++) {
        const swgpu_query_result_t *qr = &r->q[i];
        swgpu_seq_t q;
        swgpu_seqset_get(qs, qr->query, &q);
        swgpu__compo_t qc, sc;
        swgpu__compo_read(&qc, q.res, q.len);
        swgpu__evalue_ctx_t ev;
        swgpu__evalue_init(&ev, &qr->karlin, o->evalue_model, q.len, swgpu_db_residues(db),
                           swgpu_db_size(db));
        for (size_t h = 0; h < qr->n_hits; h++) {
            const swgpu_hit_t *hit = &qr->hits[h];
            swgpu_seq_t t;
            swgpu_db_get(db, hit->target, &t);
            uint8_t *masked = malloc(t.len);
            swgpu__seg_mask(t.res, t.len, masked);
            swgpu__compo_read(&sc, masked, t.len);
            swgpu__cbs_rule_t rule;
            CHECK(swgpu__cbs_matrix(&b, o->comp_based_stats, &qc, q.len, &sc, t.len, adj,
                                    &rule) == SWGPU_OK,
                  "matrix");
            *n_adjusted += rule == SWGPU__CBS_ADJUSTED;
            int32_t S = 0;
            swgpu__ref_score(q.res, q.len, masked, t.len, adj, o->gap_open * 32,
                             o->gap_extend * 32, &S, NULL, NULL);
            int32_t want = (int32_t)floor(S / 32.0 + 0.5);
            CHECK(hit->score == want, "query %zu %s: score %d, reference %d/32 -> %d", i, t.id,
                  hit->score, S, want);
            double e = swgpu__evalue_of_real(&ev, S / 32.0, t.len);
            CHECK(hit->evalue == e, "%s: E %g, expected %g", t.id, hit->evalue, e);
            CHECK(hit->bits == swgpu_bitscore(&qr->karlin, want), "%s: bits", t.id);
            if (hit->aln.n_cigar) {
                int64_t cs = 0;
                CHECK(swgpu_cigar_score(&hit->aln, q.res, q.len, masked, t.len, adj,
                                        o->gap_open * 32, o->gap_extend * 32, &cs) == SWGPU_OK &&
                          cs == S,
                      "%s: the CIGAR scores %lld, not %d", t.id, (long long)cs, S);
                swgpu_aln_t a = hit->aln;
                swgpu__aln_stats(&a, q.res, t.res);
                CHECK(a.n_ident == hit->aln.n_ident && a.n_mismatch == hit->aln.n_mismatch,
                      "%s: identities", t.id);
            }
            if (h) /* rank: score desc, E-value asc */
                CHECK(qr->hits[h - 1].score > hit->score ||
                          (qr->hits[h - 1].score == hit->score &&
                           qr->hits[h - 1].evalue <= hit->evalue),
                      "rank at %zu", h);
            free(masked);
            total++;
        }
    }
    free(adj);
    return total;
}

/* mode (1, 2, 3) on every engine: want hits, of which adjusted had their
 * matrix adjusted (the others scaled) */
static void test_mode(const swgpu_seqset_t *qs, const swgpu_db_t *db, const swgpu_matrix_t *m,
                      int mode, size_t want, size_t adjusted)
{
    swgpu_opts_t o;
    swgpu_opts_init(&o, SWGPU_PROTEIN);
    o.top_n = 500;
    o.comp_based_stats = mode;
    o.threads = 2;
    swgpu_search_result_t *ref = NULL, *cpu = NULL, *gpu = NULL;
    o.backend = SWGPU_BACKEND_REF;
    CHECK(swgpu_search(qs, db, m, &o, &ref) == SWGPU_OK, "ref: %s", swgpu_last_error());
    o.backend = SWGPU_BACKEND_CPU;
    CHECK(swgpu_search(qs, db, m, &o, &cpu) == SWGPU_OK, "cpu: %s", swgpu_last_error());
    if (!ref || !cpu)
        return;
    size_t n_adj = 0, n = check_hits(cpu, qs, db, m, &o, &n_adj);
    CHECK(n == want, "mode %d: %zu hits, expected %zu", mode, n, want);
    CHECK(n_adj == adjusted, "mode %d: %zu adjusted, expected %zu", mode, n_adj, adjusted);
    CHECK(tl_same_hits(ref, cpu), "mode %d: ref and cpu engines differ", mode);
    o.backend = SWGPU_BACKEND_CUDA;
    int rc = swgpu_search(qs, db, m, &o, &gpu);
    if (rc == SWGPU_ENODEV) {
        SKIP(1, "no CUDA device: the GPU scan of comp-based-stats");
    } else {
        CHECK(rc == SWGPU_OK && tl_same_hits(gpu, cpu), "mode %d: cuda differs: %s", mode,
              rc ? swgpu_last_error() : "hits");
    }
    /* no_align: the same scores and E-values */
    swgpu_search_result_t *na = NULL;
    o.backend = SWGPU_BACKEND_CPU;
    o.no_align = 1;
    CHECK(swgpu_search(qs, db, m, &o, &na) == SWGPU_OK, "no_align");
    if (na) {
        int same = na->q[0].n_hits == cpu->q[0].n_hits;
        for (size_t h = 0; same && h < na->q[0].n_hits; h++)
            same = na->q[0].hits[h].score == cpu->q[0].hits[h].score &&
                   na->q[0].hits[h].evalue == cpu->q[0].hits[h].evalue &&
                   na->q[0].hits[h].aln.n_cigar == 0;
        CHECK(same, "no_align changes the hits");
    }
    swgpu_search_result_destroy(na);
    swgpu_search_result_destroy(gpu);
    swgpu_search_result_destroy(ref);
    swgpu_search_result_destroy(cpu);
}

/* the optimiser: from BLOSUM62's own marginals and relative entropy it
 * stays at the joint probabilities; for other marginals its answer has
 * them, and relative entropy 0.44 */
static void test_optimize(void)
{
    enum { N = SWGPU__N_STD_AA };
    double row[N] = {0}, col[N] = {0}, x[N * N], re = 0;
    const double *q = &swgpu__b62_joint[0][0];
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            row[i] += q[i * N + j];
            col[j] += q[i * N + j];
        }
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            re += q[i * N + j] * log(q[i * N + j] / (row[i] * col[j]));
    CHECK(swgpu__cbs_optimize(x, q, row, col, re, 1e-8, 2000) == 0, "at the optimum");
    double worst = 0;
    for (int k = 0; k < N * N; k++)
        worst = fmax(worst, fabs(x[k] - q[k]));
    CHECK(worst < 1e-9, "moved %g from the joint probabilities", worst);
    double r2[N], c2[N], rs[N] = {0}, cs[N] = {0}, re2 = 0, s = 0;
    for (int i = 0; i < N; i++) { /* a skewed pair of compositions */
        r2[i] = (i % 3 + 1.0);
        c2[i] = (N - i) * 0.5 + 1.0;
    }
    double sr = 0, sc = 0;
    for (int i = 0; i < N; i++) {
        sr += r2[i];
        sc += c2[i];
    }
    for (int i = 0; i < N; i++) {
        r2[i] /= sr;
        c2[i] /= sc;
    }
    CHECK(swgpu__cbs_optimize(x, q, r2, c2, 0.44, 1e-8, 2000) == 0, "skewed");
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            rs[i] += x[i * N + j];
            cs[j] += x[i * N + j];
            re2 += x[i * N + j] * log(x[i * N + j] / (r2[i] * c2[j]));
            s += x[i * N + j];
        }
    worst = fabs(re2 - 0.44);
    for (int i = 0; i < N; i++)
        worst = fmax(worst, fmax(fabs(rs[i] - r2[i]), fabs(cs[i] - c2[i])));
    CHECK(worst < 1e-8 && fabs(s - 1) < 1e-8, "constraints off by %g", worst);
}

/* rc and a message containing what */
static void refused(int rc, const char *what)
{
    CHECK(rc == SWGPU_EINVAL && strstr(swgpu_last_error(), what), "rc %d, '%s' lacks '%s'", rc,
          swgpu_last_error(), what);
}

static void test_refusals(const swgpu_seqset_t *qs, const swgpu_db_t *db, const swgpu_matrix_t *m)
{
    swgpu_opts_t o;
    swgpu_search_result_t *r = NULL;
    swgpu_opts_init(&o, SWGPU_PROTEIN);
    o.comp_based_stats = 4;
    refused(swgpu_opts_check(&o, m), "must be 0, 1, 2 or 3");
    o.comp_based_stats = -1;
    refused(swgpu_opts_check(&o, m), "must be 0, 1, 2 or 3");
    o.comp_based_stats = 1;
    o.candidates = 1;
    refused(swgpu_search(qs, db, m, &o, &r), "database parts");
    o.candidates = 0;
    swgpu_matrix_t *b45 = NULL;
    CHECK(swgpu_matrix_builtin("BLOSUM45", &b45) == SWGPU_OK, "BLOSUM45");
    o.gap_open = 15;
    o.gap_extend = 2;
    refused(swgpu_search(qs, db, b45, &o, &r), "BLOSUM62 only");
    swgpu_matrix_destroy(b45);
    swgpu_matrix_t *dna = NULL;
    CHECK(swgpu_matrix_dna(2, -3, &dna) == SWGPU_OK, "dna matrix");
    swgpu_opts_init(&o, SWGPU_DNA);
    o.comp_based_stats = 1;
    refused(swgpu_opts_check(&o, dna), "for protein searches");
    swgpu_matrix_destroy(dna);
    swgpu_opts_init(&o, SWGPU_PROTEIN);
    o.comp_based_stats = 1;
    refused(swgpu_search_pssm(NULL, 0, db, m, &o, &r), "not with PSSM queries");
    CHECK(r == NULL, "no result on refusal");
}

int main(void)
{
    swgpu_seqset_t *qs = NULL, *dbs = NULL;
    swgpu_db_t *db = NULL;
    swgpu_matrix_t *m = NULL;
    if (swgpu_seqset_read(DATA "cbs_q.fa", SWGPU_PROTEIN, &qs, NULL) < 0 ||
        swgpu_seqset_read(DATA "cbs_db.fa", SWGPU_PROTEIN, &dbs, NULL) < 0 ||
        swgpu_db_from_seqset(dbs, &db) < 0 || swgpu_matrix_builtin("BLOSUM62", &m) < 0) {
        fprintf(stderr, "set-up: %s\n", swgpu_last_error());
        return 1;
    }
    test_seg(dbs);
    test_lambda();
    test_optimize();
    test_mode(qs, db, m, 1, 38, 0);
    test_mode(qs, db, m, 2, 42, 36); /* the rule scales 6 (blastp agrees on the 33 it reports) */
    test_mode(qs, db, m, 3, 43, 43);
    test_refusals(qs, db, m);
    swgpu_matrix_destroy(m);
    swgpu_db_destroy(db);
    swgpu_seqset_destroy(dbs);
    swgpu_seqset_destroy(qs);
    return tap_done();
}
