/*
 * test_format_blast.c - formats 0 (BLAST report), 5 (XML), 15 (JSON) and
 * 17 (SAM) on a search result built by hand: a subject with two HSPs
 * adjacent in the hits (one Hit with two HSPs in 0, 5 and 15, two SAM
 * records sorted by their start on the query), a query without hits, names
 * with the characters each format must escape, a hit without an alignment
 * (refused), DNA minus-strand hits (hit-from > hit-to, frame -1, SAM flag
 * 16 with the clips of the reverse complement).
 */
#include "search/search.h"
#include "tap.h"

#include <stdlib.h>
#include <string.h>

#define Q1 "MKTAYIAKQRQISFVKSHFSRQ"
#define T1 "GGMKTAYIAKQGGGGGGISFVKSHFSRQGG" /* q1 1-9 at 3-11, q1 12-22 at 18-28 */

typedef struct {
    swgpu_seqset_t *queries, *targets;
    swgpu_db_t *db;
    swgpu_matrix_t *m;
    swgpu_search_result_t r;
    swgpu_query_result_t q[2];
    swgpu_hit_t h[3];
    uint32_t c1[1], c2[1], c3[1];
} fixture_t;

static void set_aln(swgpu_aln_t *a, int64_t qb, int64_t qe, int64_t tb, int64_t te,
                    uint32_t *cig, int64_t len, int64_t ident)
{
    a->qbeg = qb, a->qend = qe, a->tbeg = tb, a->tend = te;
    a->cigar = cig, a->n_cigar = a->m_cigar = 1;
    a->length = len, a->n_ident = ident, a->n_mismatch = len - ident;
}

static int fixture(fixture_t *f)
{
    memset(f, 0, sizeof *f);
    if (swgpu_seqset_create(SWGPU_PROTEIN, &f->queries) ||
        swgpu_seqset_add(f->queries, "q1", "a <b> & \"c\" 'd'", Q1, strlen(Q1)) ||
        swgpu_seqset_add(f->queries, "q2", "", "WWWW", 4) ||
        swgpu_seqset_create(SWGPU_PROTEIN, &f->targets) ||
        swgpu_seqset_add(f->targets, "t0", "other", "WWWW", 4) ||
        swgpu_seqset_add(f->targets, "t1", "x\\y\x01z", T1, strlen(T1)) ||
        swgpu_db_from_seqset(f->targets, &f->db) || swgpu_matrix_builtin("BLOSUM62", &f->m))
        return -1;
    /* t1: two HSPs (the better second on the query), then t0 */
    f->c1[0] = 11u << 4 | SWGPU_CIGAR_M;
    f->h[0] = (swgpu_hit_t){.target = 1, .score = 57, .bits = 26.5, .evalue = 1.5e-5};
    set_aln(&f->h[0].aln, 11, 22, 17, 28, f->c1, 11, 11);
    f->c2[0] = 9u << 4 | SWGPU_CIGAR_M;
    f->h[1] = (swgpu_hit_t){.target = 1, .score = 45, .bits = 21.9, .evalue = 0.0042};
    set_aln(&f->h[1].aln, 0, 9, 2, 11, f->c2, 9, 9);
    f->c3[0] = 1u << 4 | SWGPU_CIGAR_M;
    f->h[2] = (swgpu_hit_t){.target = 0, .score = 1, .bits = 5.0, .evalue = 12.5};
    set_aln(&f->h[2].aln, 13, 14, 0, 1, f->c3, 1, 0);
    f->q[0] = (swgpu_query_result_t){.query = 0, .n_hits = 3, .hits = f->h};
    f->q[1] = (swgpu_query_result_t){.query = 1, .n_hits = 0, .hits = NULL};
    f->r.n_queries = 2;
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

static char *render(fixture_t *fx, const char *spec, int want_rc)
{
    swgpu_outfmt_t *f = NULL;
    char *text = NULL;
    size_t size = 0;
    if (swgpu_outfmt_parse(spec, &f) != 0) {
        CHECK(0, "parse '%s': %s", spec, swgpu_last_error());
        return NULL;
    }
    swgpu_outfmt_set_dbname(f, "db<1>");
    FILE *fp = open_memstream(&text, &size);
    int rc = swgpu_outfmt_write(f, fp, &fx->r, fx->queries, fx->db, fx->m, NULL);
    CHECK_EQ_INT(rc, want_rc);
    fclose(fp);
    swgpu_outfmt_destroy(f);
    return text;
}

static int count(const char *s, const char *needle)
{
    int n = 0;
    for (const char *p = s; p && (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

#define HAS(text, needle) CHECK(text && strstr(text, needle), "missing: %s", needle)

static void test_report(fixture_t *fx)
{
    char *t = render(fx, "0", 0);
    HAS(t, "Query= q1 a <b> & \"c\" 'd'\n\nLength=22\n");
    HAS(t, "Sequences producing significant alignments:                          (Bits)  Value\n\n"
           "t1 x\\y\\x01z                                                           26.5    2e-05\n"
           "t0 other                                                              5.0     12   \n\n\n"
           ">t1 x\\y\\x01z\nLength=30\n\n");
    HAS(t, " Score = 26.5 bits (57),  Expect = 2e-05\n"
           " Identities = 11/11 (100%), Positives = 11/11 (100%), Gaps = 0/11 (0%)\n\n"
           "Query  12  ISFVKSHFSRQ  22\n"
           "           ISFVKSHFSRQ\n"
           "Sbjct  18  ISFVKSHFSRQ  28\n\n\n"
           " Score = 21.9 bits (45),  Expect = 0.004\n");
    CHECK_EQ_INT(count(t, "\n>t1"), 1);
    HAS(t, "Query= q2\n\nLength=4\n\n\n***** No hits found *****\n\n\n\n");
    HAS(t, "  Database: db<1>\n  Number of letters in database: 34\n"
           "  Number of sequences in database:  2\n\n\n\nMatrix: BLOSUM62\n"
           "Gap Penalties: Existence: 11, Extension: 1\n");
    free(t);
}

static void test_xml(fixture_t *fx)
{
    char *t = render(fx, "5", 0);
    HAS(t, "<Iteration_query-def>a &lt;b&gt; &amp; &quot;c&quot; &apos;d&apos;</Iteration_query-def>");
    HAS(t, "<BlastOutput_db>db&lt;1&gt;</BlastOutput_db>");
    HAS(t, "<Hit_def>x\\y\\x01z</Hit_def>");
    CHECK_EQ_INT(count(t, "<Hit>"), 2);
    CHECK_EQ_INT(count(t, "<Hsp>"), 3);
    HAS(t, "  <Hit_hsps>\n    <Hsp>\n      <Hsp_num>1</Hsp_num>\n      <Hsp_bit-score>26.5"
           "</Hsp_bit-score>\n      <Hsp_score>57</Hsp_score>\n      <Hsp_evalue>1.5e-05"
           "</Hsp_evalue>\n      <Hsp_query-from>12</Hsp_query-from>\n      <Hsp_query-to>22"
           "</Hsp_query-to>\n      <Hsp_hit-from>18</Hsp_hit-from>\n      <Hsp_hit-to>28"
           "</Hsp_hit-to>\n");
    HAS(t, "<Hsp_num>2</Hsp_num>");
    HAS(t, "<Iteration_query-def>No definition line</Iteration_query-def>");
    HAS(t, "<Iteration_message>No hits found</Iteration_message>\n</Iteration>\n"
           "</BlastOutput_iterations>\n</BlastOutput>\n");
    free(t);
}

static void test_json(fixture_t *fx)
{
    char *t = render(fx, "15", 0);
    HAS(t, "\"query_title\": \"a <b> & \\\"c\\\" 'd'\",");
    HAS(t, "\"title\": \"x\\\\y\\u0001z\"");
    CHECK_EQ_INT(count(t, "\"report\": {"), 2);
    CHECK_EQ_INT(count(t, "\"description\": ["), 2);
    CHECK_EQ_INT(count(t, "\"bit_score\""), 3);
    HAS(t, "\"midline\": \"ISFVKSHFSRQ\"");
    HAS(t, "\"message\": \"No hits found\"");
    free(t);
}

static void test_sam(fixture_t *fx)
{
    char *t = render(fx, "17", 0);
    const char *want =
        "@HD\tVN:1.2\tSO:coordinate\tGO:reference\n"
        "@SQ\tSN:q1\tLN:22\n@SQ\tSN:q2\tLN:4\n@PG\tID:0\tVN:" SWGPU_VERSION "\tPN:swgpu\n"
        "t1\t0\tq1\t1\t255\t2H9M19H\t*\t0\t0\t*\t*\tAS:i:45\tEV:f:0.0042\tNM:i:0\tPI:f:100.00"
        "\tBS:f:21.9\n"
        "t1\t0\tq1\t12\t255\t17H11M2H\t*\t0\t0\t*\t*\tAS:i:57\tEV:f:1.5e-05\tNM:i:0"
        "\tPI:f:100.00\tBS:f:26.5\n"
        "t0\t0\tq1\t14\t255\t1M3H\t*\t0\t0\t*\t*\tAS:i:1\tEV:f:12.5\tNM:i:1\tPI:f:0.00"
        "\tBS:f:5\n";
    CHECK(t && !strcmp(t, want), "SAM:\n--- got\n%s--- expected\n%s---", t ? t : "", want);
    free(t);
}

/* formats 0, 5, 15 and 17 refuse a hit without an alignment */
static void test_no_align(fixture_t *fx)
{
    static const char *specs[] = {"0", "5", "15", "17"};
    fx->h[2].aln.n_cigar = 0;
    for (int i = 0; i < 4; i++) {
        char *t = render(fx, specs[i], SWGPU_EINVAL);
        CHECK(strstr(swgpu_last_error(), "a hit without an alignment (--no-align)") != NULL,
              "format %s: %s", specs[i], swgpu_last_error());
        free(t);
    }
    fx->h[2].aln.n_cigar = 1;
}

int main(void)
{
    fixture_t fx;
    if (fixture(&fx) != 0) {
        printf("fixture: %s\n0 passed, 1 failed\n", swgpu_last_error());
        return 1;
    }
    test_report(&fx);
    test_xml(&fx);
    test_json(&fx);
    test_sam(&fx);
    test_no_align(&fx);
    fixture_free(&fx);
    return tap_done();
}
