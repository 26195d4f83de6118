/*
 * test_long_write.c - the writers of a long alignment (src/long/write.c):
 * golden summary, SAM and pairwise text for a plus-strand alignment with a
 * query gap and a minus-strand one (target coordinates on the forward
 * strand, SAM's reverse-complemented query, a name with a control byte
 * escaped), an unaligned pair, the SVG's path, and the errors: NULL
 * arguments, alignments outside their sequences, CIGARs that do not span
 * their intervals, a protein minus strand, an over-long QNAME, a stream
 * that cannot be written.
 */
#include "swgpu.h"
#include "tap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define Q "CCACGTTAGCATTGACGGAT"
#define T "GGGACGTTAGCTTGACGGATCC"

static void encode(const char *s, uint8_t *x)
{
    for (size_t i = 0; s[i]; i++)
        x[i] = (uint8_t)swgpu_encode(SWGPU_DNA, s[i]);
}

/* what w wrote (malloc'ed) and its status in *rc */
static char *capture(int (*w)(FILE *, const swgpu_long_record_t *, const void *),
                     const swgpu_long_record_t *r, const void *arg, int *rc)
{
    char *text = NULL;
    size_t size = 0;
    FILE *fp = open_memstream(&text, &size);
    if (!fp) {
        *rc = -100;
        return NULL;
    }
    *rc = w(fp, r, arg);
    fclose(fp);
    return text;
}

static const swgpu_matrix_t *dna_m;

static int w_summary(FILE *fp, const swgpu_long_record_t *r, const void *other)
{
    return swgpu_long_write_summary(fp, r, other, 0);
}
static int w_sam(FILE *fp, const swgpu_long_record_t *r, const void *cl)
{
    static const char *const words[] = {"swgpu", "align", "a b"};
    return swgpu_long_write_sam(fp, r, cl ? 3 : 0, cl ? words : NULL);
}
static int w_pair(FILE *fp, const swgpu_long_record_t *r, const void *arg)
{
    (void)arg;
    return swgpu_long_write_pair(fp, r, dna_m);
}
static int w_svg(FILE *fp, const swgpu_long_record_t *r, const void *arg)
{
    (void)arg;
    return swgpu_long_write_svg(fp, r);
}

static void check_text(int (*w)(FILE *, const swgpu_long_record_t *, const void *),
                       const swgpu_long_record_t *r, const void *arg, const char *want)
{
    int rc;
    char *got = capture(w, r, arg, &rc);
    CHECK_EQ_INT(rc, SWGPU_OK);
    CHECK_EQ_STR(got, want);
    free(got);
}

static void check_fails(int (*w)(FILE *, const swgpu_long_record_t *, const void *),
                        const swgpu_long_record_t *r, const void *arg, int want_rc)
{
    int rc;
    char *got = capture(w, r, arg, &rc);
    CHECK_EQ_INT(rc, want_rc);
    CHECK(got && !*got, "wrote \"%s\" before failing", got ? got : "(null)");
    free(got);
}

int main(void)
{
    uint8_t q[32], t[32], trc[32];
    swgpu_matrix_t *m = NULL;
    swgpu_aln_t plus = {0}, minus = {0}, none = {0};
    encode(Q, q);
    encode(T, t);
    swgpu_dna_revcomp(t, strlen(T), trc);
    if (swgpu_matrix_dna(2, -3, &m) < 0 ||
        swgpu_align(q, strlen(Q), t, strlen(T), m, 5, 2, 0, &plus) < 0 ||
        swgpu_align(q, strlen(Q), trc, strlen(T), m, 5, 2, 0, &minus) < 0) {
        printf("set-up failed: %s\n0 passed, 1 failed\n", swgpu_last_error());
        return 1;
    }
    dna_m = m;
    swgpu_long_record_t rp = {"q1", "t1", q, t, strlen(Q), strlen(T), SWGPU_DNA, 0, &plus};
    swgpu_long_record_t rm = {"q1", "t\t1", q, trc, strlen(Q), strlen(T), SWGPU_DNA, 1, &minus};
    swgpu_long_record_t rn = {"q1", "t1", q, t, strlen(Q), strlen(T), SWGPU_DNA, 0, &none};

    /* plus: ACGTTAGC A TTGACGGAT against ACGTTAGC - TTGACGGAT */
    check_text(w_summary, &rp, NULL,
               "query     q1\t20\ntarget    t1\t22\nstrand    plus\nscore     27\n"
               "query_range  3-20\ntarget_range 4-20\nlength    18\n"
               "identity  17/18 (94.44%)\nmismatch  0\ngapopen   1\ngaps      1\n"
               "cigar     8M1I9M\n");
    check_text(w_sam, &rp, "cl",
               "@HD\tVN:1.6\tSO:unsorted\n@SQ\tSN:t1\tLN:22\n"
               "@PG\tID:swgpu\tPN:swgpu\tVN:" SWGPU_VERSION "\tCL:swgpu align a b\n"
               "q1\t0\tt1\t4\t255\t2S8M1I9M\t*\t0\t0\t" Q "\t*\tAS:i:27\tNM:i:1\n");
    check_text(w_pair, &rp, NULL,
               "Query:  q1 (20)\nTarget: t1 (22)\n"
               "Score = 27, Identities = 17/18 (94%), Gaps = 1/18 (6%)\n\n"
               "Query  3          ACGTTAGCATTGACGGAT 20\n"
               "                  |||||||| |||||||||\n"
               "Target 4          ACGTTAGC-TTGACGGAT 20\n\n");

    /* minus: the query's GGAT with the reverse complement's first 4 (the
     * forward strand's 22 down to 19); SAM: the query reverse-complemented */
    check_text(w_summary, &rm, &rp,
               "query     q1\t20\ntarget    t\\t1\t22\nstrand    minus\nscore     8\n"
               "other_strand plus 27\nquery_range  17-20\ntarget_range 22-19\nlength    4\n"
               "identity  4/4 (100.00%)\nmismatch  0\ngapopen   0\ngaps      0\ncigar     4M\n");
    check_text(w_sam, &rm, NULL,
               "@HD\tVN:1.6\tSO:unsorted\n@SQ\tSN:t\\t1\tLN:22\n"
               "@PG\tID:swgpu\tPN:swgpu\tVN:" SWGPU_VERSION "\n"
               "q1\t16\tt\\t1\t19\t255\t4M16S\t*\t0\t0\tATCCGTCAATGCTAACGTGG\t*\tAS:i:8\tNM:i:0\n");
    check_text(w_pair, &rm, NULL,
               "Query:  q1 (20)\nTarget: t\\t1 (22), minus strand\n"
               "Score = 8, Identities = 4/4 (100%), Gaps = 0/4 (0%)\n\n"
               "Query  17         GGAT 20\n"
               "                  ||||\n"
               "Target 22         GGAT 19\n\n");

    /* no alignment: unmapped SAM record, a summary without ranges */
    check_text(w_sam, &rn, NULL,
               "@HD\tVN:1.6\tSO:unsorted\n@SQ\tSN:t1\tLN:22\n"
               "@PG\tID:swgpu\tPN:swgpu\tVN:" SWGPU_VERSION "\n"
               "q1\t4\t*\t0\t0\t*\t*\t0\t0\t" Q "\t*\tAS:i:0\n");
    check_text(w_summary, &rn, NULL,
               "query     q1\t20\ntarget    t1\t22\nstrand    plus\nscore     0\nalignment none\n");

    /* SVG: the path's corners (x = 90 + 800/22 per target residue, y = 60
     * + 800/20 per query residue), the names in the title */
    {
        int rc;
        char *svg = capture(w_svg, &rp, NULL, &rc);
        CHECK_EQ_INT(rc, SWGPU_OK);
        CHECK(svg && strstr(svg, "points=\"199.1,140.0 490.0,460.0 490.0,500.0 817.3,860.0\"/>\n"
                                 "</svg>\n"), "%s", svg ? svg : "(null)");
        CHECK(svg && strstr(svg, ">q1 vs t1: score 27, identity 94.44%</text>"), "title");
        free(svg);
        svg = capture(w_svg, &rn, NULL, &rc);
        CHECK_EQ_INT(rc, SWGPU_OK);
        CHECK(svg && !strstr(svg, "polyline") && strstr(svg, "(query)</text>\n</svg>\n"), "no path");
        free(svg);
    }

    /* errors: nothing written */
    {
        swgpu_aln_t bad = plus;
        swgpu_long_record_t rb = rp;
        char longid[300];
        rb.aln = &bad;
        bad.tend = 23; /* past the target */
        check_fails(w_summary, &rb, NULL, SWGPU_EINVAL);
        bad = plus;
        bad.qbeg = 3; /* the CIGAR spans 18 query residues, the interval 17 */
        check_fails(w_pair, &rb, NULL, SWGPU_EINVAL);
        CHECK(strstr(swgpu_last_error(), "spans 18 query and 17 target"), "%s", swgpu_last_error());
        bad = plus;
        bad.cigar = NULL;
        check_fails(w_svg, &rb, NULL, SWGPU_EINVAL);
        rb = rp;
        rb.alphabet = SWGPU_PROTEIN;
        rb.minus = 1;
        check_fails(w_sam, &rb, NULL, SWGPU_EINVAL);
        rb = rp;
        rb.aln = NULL;
        check_fails(w_summary, &rb, NULL, SWGPU_EINVAL);
        memset(longid, 'x', 255);
        longid[255] = 0;
        rb = rp;
        rb.query_id = longid;
        check_fails(w_sam, &rb, NULL, SWGPU_EINVAL);
        longid[254] = 0; /* 254: SAM's longest QNAME */
        int rc;
        char *text = capture(w_sam, &rb, NULL, &rc);
        CHECK_EQ_INT(rc, SWGPU_OK);
        free(text);
        CHECK_EQ_INT(swgpu_long_write_pair(stdout, &rp, NULL), SWGPU_EINVAL);
        CHECK_EQ_INT(swgpu_long_write_sam(NULL, &rp, 0, NULL), SWGPU_EINVAL);
        CHECK_EQ_INT(swgpu_long_write_sam(stdout, &rp, 1, NULL), SWGPU_EINVAL);
    }
    /* a stream that cannot be written */
    {
        FILE *ro = fopen("/dev/null", "r");
        CHECK(ro != NULL, "open /dev/null");
        if (ro) {
            CHECK_EQ_INT(swgpu_long_write_summary(ro, &rp, NULL, 0), SWGPU_EIO);
            CHECK(strstr(swgpu_last_error(), "summary: write error"), "%s", swgpu_last_error());
            fclose(ro);
        }
    }
    swgpu_aln_free(&plus);
    swgpu_aln_free(&minus);
    swgpu_matrix_destroy(m);
    return tap_done();
}
