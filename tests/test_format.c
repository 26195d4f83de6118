/*
 * test_format.c - output writers: golden text for BLAST tabular (6, 7),
 * custom column lists and the pairwise view, on a search result built by
 * hand (three queries, one of them without hits; alignments with a query
 * gap, a target gap, a 60-column wrap and a hit without alignment); column
 * list parsing and errors; write errors; names with control bytes
 * escaped in every format; the coverage and positive-percent columns; many
 * queries' hits written on several threads as on one.
 */
#include "search/search.h"
#include "tap.h"

#include <stdlib.h>
#include <string.h>

/* q1 against t2:  MKTAYIAKQRQISFVKSHFSRQ
 *                 | ||| |||  |||||||||||     K/R and I/V score > 0
 *                 MRTAYVAKQ--ISFVKSHFSRQ                            */
#define Q1 "MKTAYIAKQRQISFVKSHFSRQ"
#define T2 "MRTAYVAKQISFVKSHFSRQ"
/* q3: 65 residues; t3 holds it with "GG" inserted after 30 */
#define Q3A "ACDEFGHIKLMNPQRSTVWYACDEFGHIKL"
#define Q3B "MNPQRSTVWYACDEFGHIKLMNPQRSTVWYACDEF"
/* q4: 200 residues, for the coverage columns */
#define Q20 "ACDEFGHIKLMNPQRSTVWY"
#define Q4 Q20 Q20 Q20 Q20 Q20 Q20 Q20 Q20 Q20 Q20

typedef struct {
    swgpu_seqset_t *queries, *targets;
    swgpu_db_t *db;
    swgpu_matrix_t *m;
    swgpu_search_result_t r;
    swgpu_query_result_t q[3];
    swgpu_hit_t h1[2], h3[2];
    uint32_t c_t1[1], c_t2[3], c_t3[3];
} fixture_t;

static void set_aln(swgpu_aln_t *a, int64_t qb, int64_t qe, int64_t tb, int64_t te,
                    uint32_t *cig, size_t nc, int64_t len, int64_t ident, int64_t mis,
                    int64_t gapo, int64_t gaps)
{
    a->qbeg = qb, a->qend = qe, a->tbeg = tb, a->tend = te;
    a->cigar = cig, a->n_cigar = a->m_cigar = nc;
    a->length = len, a->n_ident = ident, a->n_mismatch = mis;
    a->n_gapopen = gapo, a->n_gaps = gaps;
}

static int fixture(fixture_t *f)
{
    memset(f, 0, sizeof *f);
    if (swgpu_seqset_create(SWGPU_PROTEIN, &f->queries) ||
        swgpu_seqset_add(f->queries, "q1", "first query", Q1, strlen(Q1)) ||
        swgpu_seqset_add(f->queries, "q2", "", "WWWW", 4) ||
        swgpu_seqset_add(f->queries, "q3", "third", Q3A Q3B, 65) ||
        swgpu_seqset_add(f->queries, "q4", "", Q4, 200) ||
        swgpu_seqset_create(SWGPU_PROTEIN, &f->targets) ||
        swgpu_seqset_add(f->targets, "t1", "target one", "GG" Q1 "GG", 26) ||
        swgpu_seqset_add(f->targets, "t2", "", T2, strlen(T2)) ||
        swgpu_seqset_add(f->targets, "t3", "target three", "PP" Q3A "GG" Q3B "PP", 71) ||
        swgpu_db_from_seqset(f->targets, &f->db) || swgpu_matrix_builtin("BLOSUM62", &f->m))
        return -1;

    /* q1: t1 (exact, inside), t2 (two positives, two-residue query gap) */
    f->c_t1[0] = 22u << 4 | SWGPU_CIGAR_M;
    f->h1[0] = (swgpu_hit_t){.target = 0, .score = 113, .bits = 48.1, .evalue = 1.5e-12};
    set_aln(&f->h1[0].aln, 0, 22, 2, 24, f->c_t1, 1, 22, 22, 0, 0, 0);
    f->c_t2[0] = 9u << 4 | SWGPU_CIGAR_M;
    f->c_t2[1] = 2u << 4 | SWGPU_CIGAR_I;
    f->c_t2[2] = 11u << 4 | SWGPU_CIGAR_M;
    f->h1[1] = (swgpu_hit_t){.target = 1, .score = 88, .bits = 38.5, .evalue = 0.0042};
    set_aln(&f->h1[1].aln, 0, 22, 0, 20, f->c_t2, 3, 22, 18, 2, 1, 2);
    /* q3: t3 (two-residue target gap, wraps at 60), t1 without alignment */
    f->c_t3[0] = 30u << 4 | SWGPU_CIGAR_M;
    f->c_t3[1] = 2u << 4 | SWGPU_CIGAR_D;
    f->c_t3[2] = 35u << 4 | SWGPU_CIGAR_M;
    f->h3[0] = (swgpu_hit_t){.target = 2, .score = 300, .bits = 120.7, .evalue = 1e-200};
    set_aln(&f->h3[0].aln, 0, 65, 2, 69, f->c_t3, 3, 67, 65, 0, 1, 2);
    f->h3[1] = (swgpu_hit_t){.target = 0, .score = 20, .bits = 9.8, .evalue = 27.4};

    f->q[0] = (swgpu_query_result_t){.query = 0, .n_hits = 2, .hits = f->h1};
    f->q[1] = (swgpu_query_result_t){.query = 1, .n_hits = 0, .hits = NULL};
    f->q[2] = (swgpu_query_result_t){.query = 2, .n_hits = 2, .hits = f->h3};
    f->r.n_queries = 3;
    f->r.q = f->q;
    return 0;
}

static void fixture_free(fixture_t *f)
{
    swgpu_seqset_destroy(f->queries);
    swgpu_seqset_destroy(f->targets);
    swgpu_db_destroy(f->db);
    swgpu_matrix_destroy(f->m);
}

/* Run the writer on the fixture into memory; returns malloc'ed text. */
static char *render(fixture_t *fx, const char *spec, const char *dbname)
{
    swgpu_outfmt_t *f = NULL;
    char *text = NULL;
    size_t size = 0;
    int rc = swgpu_outfmt_parse(spec, &f);
    CHECK(rc == 0, "parse '%s': %s", spec, swgpu_last_error());
    if (rc)
        return NULL;
    if (dbname)
        CHECK_EQ_INT(swgpu_outfmt_set_dbname(f, dbname), 0);
    FILE *fp = open_memstream(&text, &size);
    CHECK(fp != NULL, "open_memstream");
    if (fp) {
        rc = swgpu_outfmt_write(f, fp, &fx->r, fx->queries, fx->db, fx->m, NULL);
        CHECK(rc == 0, "write '%s': %s", spec, swgpu_last_error());
        fclose(fp);
    }
    swgpu_outfmt_destroy(f);
    return text;
}

static void check_text(fixture_t *fx, const char *spec, const char *dbname, const char *want)
{
    char *got = render(fx, spec, dbname);
    CHECK(got && !strcmp(got, want), "format '%s':\n--- got\n%s--- expected\n%s---", spec,
          got ? got : "(null)", want);
    free(got);
}

static const char *rows6 =
    "q1\tt1\t100.000\t22\t0\t0\t1\t22\t3\t24\t1.50e-12\t48.1\n"
    "q1\tt2\t81.818\t22\t2\t1\t1\t22\t1\t20\t0.004\t38.5\n"
    "q3\tt3\t97.015\t67\t0\t1\t1\t65\t3\t69\t0.0\t120\n"
    "q3\tt1\tN/A\tN/A\tN/A\tN/A\tN/A\tN/A\tN/A\tN/A\t27\t 9.8\n";

static void test_tabular(fixture_t *fx)
{
    check_text(fx, "6", NULL, rows6);
    check_text(fx, " 6  std ", NULL, rows6);

    const char *fields =
        "# Fields: query acc.ver, subject acc.ver, % identity, alignment length, mismatches, "
        "gap opens, q. start, q. end, s. start, s. end, evalue, bit score\n";
    char want[4096];
    snprintf(want, sizeof want,
             "# SWGPU " SWGPU_VERSION "\n# Query: q1 first query\n# Database: testdb\n%s"
             "# 2 hits found\n"
             "q1\tt1\t100.000\t22\t0\t0\t1\t22\t3\t24\t1.50e-12\t48.1\n"
             "q1\tt2\t81.818\t22\t2\t1\t1\t22\t1\t20\t0.004\t38.5\n"
             "# SWGPU " SWGPU_VERSION "\n# Query: q2\n# Database: testdb\n# 0 hits found\n"
             "# SWGPU " SWGPU_VERSION "\n# Query: q3 third\n# Database: testdb\n%s"
             "# 2 hits found\n"
             "q3\tt3\t97.015\t67\t0\t1\t1\t65\t3\t69\t0.0\t120\n"
             "q3\tt1\tN/A\tN/A\tN/A\tN/A\tN/A\tN/A\tN/A\tN/A\t27\t 9.8\n"
             "# SWGPU processed 3 queries\n",
             fields, fields);
    check_text(fx, "7", "testdb", want);

    /* default database name */
    char *got = render(fx, "7", NULL);
    CHECK(got && strstr(got, "# Database: unnamed\n"), "default name: %s", got ? got : "");
    free(got);

    check_text(fx, "6 qseqid sseqid score evalue qlen slen nident gaps cigar positive btop",
               NULL,
               "q1\tt1\t113\t1.50e-12\t22\t26\t22\t0\t22M\t22\t22\n"
               "q1\tt2\t88\t0.004\t22\t20\t18\t2\t9M2I11M\t20\t1KR3IV3R-Q-11\n"
               "q3\tt3\t300\t0.0\t65\t71\t65\t2\t30M2D35M\t65\t30-G-G35\n"
               "q3\tt1\t20\t27\t65\t26\tN/A\tN/A\tN/A\tN/A\tN/A\n");
    /* columns separated by commas as well as spaces (issue 30) */
    check_text(fx, "6 qseqid,sseqid,score, evalue ,qlen,,slen", NULL,
               "q1\tt1\t113\t1.50e-12\t22\t26\n"
               "q1\tt2\t88\t0.004\t22\t20\n"
               "q3\tt3\t300\t0.0\t65\t71\n"
               "q3\tt1\t20\t27\t65\t26\n");
    /* format 10: format 6's fields separated by commas, as blastp -outfmt 10
     * writes them (its bit scores below 10 keep their leading space too) */
    check_text(fx, "10", NULL,
               "q1,t1,100.000,22,0,0,1,22,3,24,1.50e-12,48.1\n"
               "q1,t2,81.818,22,2,1,1,22,1,20,0.004,38.5\n"
               "q3,t3,97.015,67,0,1,1,65,3,69,0.0,120\n"
               "q3,t1,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A,27, 9.8\n");
    check_text(fx, "10 qseqid,stitle,evalue cigar", NULL,
               "q1,t1 target one,1.50e-12,22M\n"
               "q1,t2,0.004,9M2I11M\n"
               "q3,t3 target three,0.0,30M2D35M\n"
               "q3,t1 target one,27,N/A\n");
    check_text(fx, "6 sacc qacc qseq sseq stitle qseqid qseqid", NULL,
               "t1\tq1\t" Q1 "\t" Q1 "\tt1 target one\tq1\n"
               "t2\tq1\t" Q1 "\tMRTAYVAKQ--ISFVKSHFSRQ\tt2\tq1\n"
               "t3\tq3\t" Q3A "--" Q3B "\t" Q3A "GG" Q3B "\tt3 target three\tq3\n"
               "t1\tq3\tN/A\tN/A\tt1 target one\tq3\n");
    check_text(fx, "7 score saccver mismatch gapopen", "x",
               "# SWGPU " SWGPU_VERSION "\n# Query: q1 first query\n# Database: x\n"
               "# Fields: score, subject acc.ver, mismatches, gap opens\n# 2 hits found\n"
               "113\tt1\t0\t0\n88\tt2\t2\t1\n"
               "# SWGPU " SWGPU_VERSION "\n# Query: q2\n# Database: x\n# 0 hits found\n"
               "# SWGPU " SWGPU_VERSION "\n# Query: q3 third\n# Database: x\n"
               "# Fields: score, subject acc.ver, mismatches, gap opens\n# 2 hits found\n"
               "300\tt3\t0\t1\n20\tt1\tN/A\tN/A\n"
               "# SWGPU processed 3 queries\n");
}

/* qcovhsp, qcovs, ppos, salltitles, sallseqid (issue 30) as blastp 2.12
 * prints them: ppos = 100 * positive / length ("%.2f"); the coverages are
 * BLAST+'s, rounded below 99 and truncated above (blastp prints 99 for 299
 * of 300 query residues); one alignment per subject, so qcovs = qcovhsp. */
static void test_coverage_columns(fixture_t *fx)
{
    check_text(fx, "6 qseqid sseqid qcovhsp qcovs ppos positive length salltitles sallseqid",
               NULL,
               "q1\tt1\t100\t100\t100.00\t22\t22\tt1 target one\tt1\n"
               "q1\tt2\t100\t100\t90.91\t20\t22\tt2\tt2\n"
               "q3\tt3\t100\t100\t97.01\t65\t67\tt3 target three\tt3\n"
               "q3\tt1\tN/A\tN/A\tN/A\tN/A\tN/A\tt1 target one\tt1\n");

    /* q4 (200 residues) covered by 200, 199, 197, 150 and 1 residues:
     * 100, 99.5 -> 99 (truncated), 98.5 -> 99 (rounded), 75, 0.5 -> 1 */
    static const int64_t qend[5] = {200, 199, 197, 160, 11};
    static const int64_t qbeg[5] = {0, 0, 0, 10, 10};
    uint32_t cig[5];
    swgpu_hit_t h[5];
    for (int i = 0; i < 5; i++) {
        int64_t n = qend[i] - qbeg[i];
        cig[i] = (uint32_t)n << 4 | SWGPU_CIGAR_M;
        h[i] = (swgpu_hit_t){.target = i % 3, .score = 50 - i, .bits = 20, .evalue = 1};
        set_aln(&h[i].aln, qbeg[i], qend[i], 0, n, &cig[i], 1, n, n, 0, 0, 0);
    }
    swgpu_search_result_t saved = fx->r;
    swgpu_query_result_t q4 = {.query = 3, .n_hits = 5, .hits = h};
    fx->r.n_queries = 1;
    fx->r.q = &q4;
    check_text(fx, "7 qcovhsp qcovs sallseqid qstart qend", "x",
               "# SWGPU " SWGPU_VERSION "\n# Query: q4\n# Database: x\n"
               "# Fields: % query coverage per hsp, % query coverage per subject, subject ids, "
               "q. start, q. end\n# 5 hits found\n"
               "100\t100\tt1\t1\t200\n"
               "99\t99\tt2\t1\t199\n"
               "99\t99\tt3\t1\t197\n"
               "75\t75\tt1\t11\t160\n"
               "1\t1\tt2\t11\t11\n"
               "# SWGPU processed 1 queries\n");
    fx->r = saved;
}

static void test_pair(fixture_t *fx)
{
    check_text(fx, "pair", "testdb",
               "Query: q1 first query\nLength: 22\nDatabase: testdb\n\n"
               ">t1 target one\nLength: 26\nScore: 113 (48.1 bits), E-value: 1.50e-12\n"
               "Identities: 22/22 (100%), Positives: 22/22 (100%), Gaps: 0/22 (0%)\n\n"
               "Query   1 " Q1 " 22\n"
               "          ||||||||||||||||||||||\n"
               "Target  3 " Q1 " 24\n\n"
               ">t2\nLength: 20\nScore: 88 (38.5 bits), E-value: 0.004\n"
               "Identities: 18/22 (82%), Positives: 20/22 (91%), Gaps: 2/22 (9%)\n\n"
               "Query   1 " Q1 " 22\n"
               "          |+|||+|||  |||||||||||\n"
               "Target  1 MRTAYVAKQ--ISFVKSHFSRQ 20\n\n"
               "Query: q2\nLength: 4\nDatabase: testdb\n\nNo hits found\n\n"
               "Query: q3 third\nLength: 65\nDatabase: testdb\n\n"
               ">t3 target three\nLength: 71\nScore: 300 (120.7 bits), E-value: 0.0\n"
               "Identities: 65/67 (97%), Positives: 65/67 (97%), Gaps: 2/67 (3%)\n\n"
               "Query   1 " Q3A "--MNPQRSTVWYACDEFGHIKLMNPQRSTV 58\n"
               "          ||||||||||||||||||||||||||||||  ||||||||||||||||||||||||||||\n"
               "Target  3 " Q3A "GGMNPQRSTVWYACDEFGHIKLMNPQRSTV 62\n\n"
               "Query  59 WYACDEF 65\n"
               "          |||||||\n"
               "Target 63 WYACDEF 69\n\n"
               ">t1 target one\nLength: 26\nScore: 20 (9.8 bits), E-value: 27\n"
               "(no alignment computed)\n\n");
}

static void test_parse_errors(void)
{
    swgpu_outfmt_t *f = (swgpu_outfmt_t *)1;
    CHECK_EQ_INT(swgpu_outfmt_parse("6 qseqid xyz evalue", &f), SWGPU_EINVAL);
    CHECK_EQ_STR(swgpu_last_error(), "outfmt: unknown column 'xyz'");
    CHECK(f == NULL, "no object on failure");
    CHECK_EQ_INT(swgpu_outfmt_parse("", &f), SWGPU_EINVAL);
    CHECK_EQ_INT(swgpu_outfmt_parse("   ", &f), SWGPU_EINVAL);
    CHECK_EQ_INT(swgpu_outfmt_parse("9", &f), SWGPU_EINVAL);
    CHECK_EQ_STR(swgpu_last_error(),
                 "outfmt: unknown format '9'; expected 0, 5, 6, 7, 10, 15, 17 or pair");
    CHECK_EQ_INT(swgpu_outfmt_parse("5 qseqid", &f), SWGPU_EINVAL);
    CHECK_EQ_STR(swgpu_last_error(), "outfmt: format 5 takes no columns ('qseqid')");
    CHECK_EQ_INT(swgpu_outfmt_parse("pair qseqid", &f), SWGPU_EINVAL);
    CHECK_EQ_INT(swgpu_outfmt_parse("6qseqid", &f), SWGPU_EINVAL);
    CHECK_EQ_INT(swgpu_outfmt_parse("6,qseqid", &f), SWGPU_EINVAL); /* as blastp 2.12 */
    CHECK_EQ_STR(swgpu_last_error(),
                 "outfmt: unknown format '6,qseqid'; expected 0, 5, 6, 7, 10, 15, 17 or pair");
    CHECK_EQ_INT(swgpu_outfmt_parse("pair,qseqid", &f), SWGPU_EINVAL);
    CHECK_EQ_INT(swgpu_outfmt_parse("10 qseqid,xyz", &f), SWGPU_EINVAL);
    CHECK_EQ_STR(swgpu_last_error(), "outfmt: unknown column 'xyz'");
    CHECK_EQ_INT(swgpu_outfmt_parse(NULL, &f), SWGPU_EINVAL);
    CHECK_EQ_INT(swgpu_outfmt_parse("7 QSEQID", &f), SWGPU_EINVAL);
    CHECK_EQ_INT(swgpu_outfmt_parse("\t7\tqlen\tslen\n", &f), 0);
    swgpu_outfmt_destroy(f);
    CHECK_EQ_INT(swgpu_outfmt_set_dbname(NULL, "x"), SWGPU_EINVAL);
    swgpu_outfmt_destroy(NULL);
}

static void test_write_errors(fixture_t *fx)
{
    swgpu_outfmt_t *f = NULL;
    CHECK_EQ_INT(swgpu_outfmt_parse("6", &f), 0);
    FILE *fp = fopen("/dev/full", "w");
    if (!fp) {
        SKIP(2, "/dev/full is not available");
    } else {
        CHECK_EQ_INT(swgpu_outfmt_write(f, fp, &fx->r, fx->queries, fx->db, fx->m, NULL),
                     SWGPU_EIO);
        CHECK(strstr(swgpu_last_error(), "write error") != NULL, "message: %s",
              swgpu_last_error());
        fclose(fp);
    }

    /* a result naming a target or query that does not exist */
    char *text = NULL;
    size_t size = 0;
    fp = open_memstream(&text, &size);
    fx->h1[1].target = 7;
    CHECK_EQ_INT(swgpu_outfmt_write(f, fp, &fx->r, fx->queries, fx->db, fx->m, NULL),
                 SWGPU_EINVAL);
    fx->h1[1].target = 1;
    fx->q[1].query = 9;
    CHECK_EQ_INT(swgpu_outfmt_write(f, fp, &fx->r, fx->queries, fx->db, fx->m, NULL),
                 SWGPU_EINVAL);
    fx->q[1].query = 1;
    /* a CIGAR longer than the target */
    fx->c_t1[0] = 30u << 4 | SWGPU_CIGAR_M;
    swgpu_outfmt_t *g = NULL;
    CHECK_EQ_INT(swgpu_outfmt_parse("6 qseq", &g), 0);
    CHECK_EQ_INT(swgpu_outfmt_write(g, fp, &fx->r, fx->queries, fx->db, fx->m, NULL),
                 SWGPU_EINVAL);
    CHECK(strstr(swgpu_last_error(), "runs off") != NULL, "message: %s", swgpu_last_error());
    fx->c_t1[0] = 22u << 4 | SWGPU_CIGAR_M;
    fclose(fp);
    free(text);
    swgpu_outfmt_destroy(g);
    swgpu_outfmt_destroy(f);
}


/* r written in format spec with the given threads into a string; *rc the
 * writer's status */
static char *render_threads(fixture_t *fx, const swgpu_search_result_t *r, const char *spec,
                            int threads, int *rc)
{
    swgpu_outfmt_t *f = NULL;
    swgpu_opts_t o;
    char *buf = NULL;
    size_t len = 0;
    swgpu_opts_init(&o, SWGPU_PROTEIN);
    o.threads = threads;
    *rc = swgpu_outfmt_parse(spec, &f);
    FILE *fp = open_memstream(&buf, &len);
    if (*rc == 0 && fp)
        *rc = swgpu_outfmt_write(f, fp, r, fx->queries, fx->db, fx->m, &o);
    if (fp)
        fclose(fp);
    swgpu_outfmt_destroy(f);
    return buf;
}

/* Many queries' hits (2,700, more than the 2,048 that take threads) in
 * the formats written on several threads: the text is one thread's, byte
 * for byte; format 7 counts every query; a result naming a query that is
 * not there, in the middle, leaves the text before it and is named. */
static void test_threads(fixture_t *fx)
{
    enum { N = 2025 };
    swgpu_query_result_t *q = malloc(N * sizeof *q);
    if (!q) {
        CHECK(0, "out of memory");
        return;
    }
    for (size_t i = 0; i < N; i++)
        q[i] = fx->q[i % 3];
    swgpu_search_result_t r = {.n_queries = N, .q = q};
    const char *specs[] = {"6", "7", "10", "pair", "6 qseqid sseqid qseq sseq btop qcovs"};
    for (size_t k = 0; k < sizeof specs / sizeof *specs; k++) {
        int rc1, rc4;
        char *one = render_threads(fx, &r, specs[k], 1, &rc1), *four = render_threads(fx, &r, specs[k], 4, &rc4);
        CHECK(rc1 == 0 && rc4 == 0 && one && four && !strcmp(one, four),
              "format '%s' on 4 threads: status %d and %d, %zu and %zu bytes", specs[k], rc1, rc4,
              one ? strlen(one) : 0, four ? strlen(four) : 0);
        if (k == 0) { /* 1,350 queries with 2 hits: 2,700 rows */
            size_t rows = 0;
            for (const char *c = four; c && *c; c++)
                rows += *c == '\n';
            CHECK_EQ_INT((int)rows, 2700);
        }
        if (k == 1)
            CHECK(four && strstr(four, "# SWGPU processed 2025 queries\n") != NULL,
                  "format 7 on 4 threads: the closing count");
        free(one);
        free(four);
    }
    /* result 1,500 names query 9: the text of results 0 .. 1,499, the error */
    q[1500].query = 9;
    int rc1, rc4;
    char *one = render_threads(fx, &r, "6", 1, &rc1), *four = render_threads(fx, &r, "6", 4, &rc4);
    char msg[256];
    snprintf(msg, sizeof msg, "%s", swgpu_last_error());
    CHECK_EQ_INT(rc4, SWGPU_EINVAL);
    CHECK_EQ_INT(rc1, SWGPU_EINVAL);
    CHECK(!strcmp(msg, "outfmt: result 1500 names query 9 of 4"), "message: %s", msg);
    CHECK(one && four && !strcmp(one, four), "a failing block on 4 threads: the text before it");
    size_t rows = 0;
    for (const char *c = four; c && *c; c++)
        rows += *c == '\n';
    CHECK_EQ_INT((int)rows, 2000); /* results 0 .. 1,499: 1,000 with 2 hits each */
    free(one);
    free(four);
    free(q);
}

/* Write r in format spec into a string (NULL on failure). */
static char *render_result(const swgpu_search_result_t *r, const swgpu_seqset_t *qs,
                           const swgpu_db_t *db, const swgpu_matrix_t *m, const char *spec,
                           const char *dbname)
{
    swgpu_outfmt_t *f = NULL;
    char *buf = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&buf, &len);
    if (!fp || swgpu_outfmt_parse(spec, &f) < 0 || (dbname && swgpu_outfmt_set_dbname(f, dbname)) ||
        swgpu_outfmt_write(f, fp, r, qs, db, m, NULL) < 0) {
        if (fp)
            fclose(fp);
        free(buf);
        swgpu_outfmt_destroy(f);
        return NULL;
    }
    fclose(fp);
    swgpu_outfmt_destroy(f);
    return buf;
}

/* Names, descriptions and the database's name with control bytes (a tab, a
 * newline, a carriage return, an escape, DEL) cannot add columns or rows:
 * every format writes them escaped (issue 28). */
static void test_escaped_names(void)
{
    swgpu_seqset_t *qs = NULL, *ts = NULL;
    swgpu_db_t *db = NULL;
    swgpu_matrix_t *m = NULL;
    swgpu_search_result_t *r = NULL;
    swgpu_opts_t o;
    int ok = !swgpu_seqset_create(SWGPU_PROTEIN, &qs) &&
             !swgpu_seqset_add(qs, "q\x1b[31m", "d\tx\ny", Q1, strlen(Q1)) &&
             !swgpu_seqset_create(SWGPU_PROTEIN, &ts) &&
             !swgpu_seqset_add(ts, "t\x01", "a\tb\r\nc\x7f\\", Q1, strlen(Q1)) &&
             !swgpu_db_from_seqset(ts, &db) && !swgpu_matrix_builtin("BLOSUM62", &m);
    CHECK(ok, "fixtures: %s", swgpu_last_error());
    swgpu_opts_init(&o, SWGPU_PROTEIN);
    o.backend = SWGPU_BACKEND_CPU;
    CHECK_EQ_INT(ok ? swgpu_search(qs, db, m, &o, &r) : -1, SWGPU_OK);
    if (!r || r->q[0].n_hits != 1) {
        CHECK(0, "one hit expected");
    } else {
        char *t6 = render_result(r, qs, db, m, "6 qseqid sseqid stitle score", NULL);
        CHECK_EQ_STR(t6, "q\\x1b[31m\tt\\x01\tt\\x01 a\\tb\\r\\nc\\x7f\\\t109\n"); /* Q1 with itself */
        free(t6);
        char *t7 = render_result(r, qs, db, m, "7 score", "my\tdb");
        CHECK(t7 && strstr(t7, "# Query: q\\x1b[31m d\\tx\\ny\n# Database: my\\tdb\n"),
              "format 7: %s", t7 ? t7 : "(null)");
        free(t7);
        char *tp = render_result(r, qs, db, m, "pair", NULL);
        CHECK(tp && strstr(tp, "Query: q\\x1b[31m d\\tx\\ny\nLength: 22\n") &&
                  strstr(tp, ">t\\x01 a\\tb\\r\\nc\\x7f\\\nLength: 22\n"),
              "pair: %s", tp ? tp : "(null)");
        /* no control byte at all but the line ends */
        size_t bad = 0;
        for (const char *p = tp; p && *p; p++)
            bad += (unsigned char)*p < 0x20 && *p != '\n';
        CHECK_EQ_INT(bad, 0);
        free(tp);
    }
    swgpu_search_result_destroy(r);
    swgpu_matrix_destroy(m);
    swgpu_db_destroy(db);
    swgpu_seqset_destroy(ts);
    swgpu_seqset_destroy(qs);
}

int main(void)
{
    fixture_t fx;
    int rc = fixture(&fx);
    CHECK(rc == 0, "fixture: %s", swgpu_last_error());
    if (rc == 0) {
        test_tabular(&fx);
        test_coverage_columns(&fx);
        test_pair(&fx);
        test_write_errors(&fx);
        test_threads(&fx);
    }
    test_parse_errors();
    test_escaped_names();
    fixture_free(&fx);
    return tap_done();
}
