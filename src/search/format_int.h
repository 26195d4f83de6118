/*
 * search/format_int.h - what the output writers of src/search share (never
 * installed): the parsed format, the writer's state, BLAST's number formats,
 * the walk of an alignment into its aligned strings, and the entry points of
 * the BLAST report (format 0, format_report.c), XML (5, format_xml.c), JSON
 * (15, format_json.c) and SAM (17, format_sam.c) writers.
 */
#ifndef SWGPU_SEARCH_FORMAT_INT_H
#define SWGPU_SEARCH_FORMAT_INT_H

#include "search/search.h"

#include <stdio.h>

enum outfmt_kind {
    FMT_REPORT = 0, FMT_XML = 5, FMT_TAB = 6, FMT_TAB_COMMENTS = 7, FMT_CSV = 10,
    FMT_JSON = 15, FMT_SAM = 17, FMT_PAIR = 100
};

#define FMT_MAX_COLS 64
#define DEFAULT_DBNAME "unnamed"

struct swgpu_outfmt {
    enum outfmt_kind kind;
    int ncol;
    int col[FMT_MAX_COLS];
    int need_text; /* some column needs the aligned residues walked */
    char *dbname;  /* NULL: DEFAULT_DBNAME */
    int need_taxdb;   /* some column prints taxonomy names */
    char *taxdb_dir;  /* where taxdb.bti is; NULL: where blastp looks */
};

/* What one hit's alignment looks like, walked once from its CIGAR. */
typedef struct {
    char *qtext, *ttext, *mid; /* aligned residues with '-', middle line ('|', '+', ' ') */
    size_t cap;
    int64_t positives;
    char *btop;
    size_t btop_cap;
} fmt_walk_t;

/* One block of results: a query's hits (of one round of an iterated search). */
typedef struct {
    const swgpu_query_result_t *qr;
    const swgpu_seq_t *q; /* the query (a PSSM's: its residues) */
    size_t num;           /* 1-based: the query's place among those written */
    int round;            /* round of an iterated search (0: none) */
    int first, last;      /* 1: the query's first / last block written */
} fmt_block_t;

typedef struct fmt_writer fmt_writer_t;
struct fmt_writer {
    const swgpu_outfmt_t *f;
    FILE *fp;
    const swgpu_db_t *db;
    const swgpu_matrix_t *m;
    const swgpu_opts_t *opts; /* may be NULL */
    swgpu_alphabet_t qa, ta;
    fmt_walk_t w;
    uint8_t *rc;              /* a minus-strand hit's subject, reverse complemented */
    size_t rc_cap;
    swgpu_taxdb_t *tax;       /* the taxonomy names (NULL: none found, or not needed) */
    int64_t covs;             /* the hit's subject's query residues covered by its HSPs (qcovs) */
    int iterated;             /* results of an iterated search */
    size_t nqueries;          /* queries the write holds */
    size_t blocks;            /* blocks written so far */
    int started;              /* the format's opening is written */
    int64_t *ivs;             /* scratch for the formats' own use */
    size_t ivs_cap;
    /* the i-th query of the write (0 <= i < nqueries), for headers that
     * list them all (SAM's @SQ) */
    int (*query_at)(const fmt_writer_t *wr, size_t i, swgpu_seq_t *q);
    const swgpu_search_result_t *res;   /* what query_at reads: the result, */
    const swgpu_seqset_t *queries;      /* and the queries or the PSSMs */
    const swgpu_pssm_t *const *pssms;
    size_t npssm;
};

/* ---- format_util.c ---- */
/** E-value as BLAST+ writes it in tabular output. */
void swgpu__fmt_evalue(char *buf, size_t size, double e);
/** E-value as BLAST+'s report (format 0) writes it. */
void swgpu__fmt_evalue_report(char *buf, size_t size, double e);
/** Bit score as BLAST+ writes it. */
void swgpu__fmt_bits(char *buf, size_t size, double b);
/** 100 * part / whole rounded to the nearest integer (0 when whole is 0). */
int swgpu__fmt_percent(int64_t part, int64_t whole);
/** The decimal digits of v >= 0. */
int swgpu__fmt_digits(int64_t v);
/** One line of a pairwise view: columns [c0, c0 + n) of w's texts, *qpos
 *  and *tpos the residues before it on the strand shown (advanced past it).
 *  In s the line's first and last residue, 1-based, of the query and of the
 *  subject as stored (minus: a minus-strand hit on a subject of tlen
 *  residues, counting down); a line of gaps shows the previous position
 *  twice. */
typedef struct {
    int64_t qfirst, qlast, tfirst, tlast;
} fmt_span_t;
void swgpu__fmt_line_span(const fmt_walk_t *w, size_t c0, size_t n, int minus, size_t tlen,
                          int64_t *qpos, int64_t *tpos, fmt_span_t *s);
/** n with commas between groups of three digits, as BLAST prints counts. */
void swgpu__fmt_thousands(char *buf, size_t size, uint64_t n);
void swgpu__fmt_walk_free(fmt_walk_t *w);
/** "id" or "id desc", escaped (swgpu_put_name). */
void swgpu__fmt_put_title(FILE *fp, const char *id, const char *desc);
/** Subject t of hit h (database order index); SWGPU_EINVAL names the hit k
 *  of query q when the database has no such sequence. */
int swgpu__fmt_target(fmt_writer_t *wr, const swgpu_seq_t *q, size_t k, const swgpu_hit_t *h,
                      swgpu_seq_t *t);
/** Walk hit h's alignment (query q, subject t as stored) into wr->w: on the
 *  minus strand against t's reverse complement.  SWGPU_EINVAL if the CIGAR
 *  runs off either sequence. */
int swgpu__fmt_walk_hit(fmt_writer_t *wr, const swgpu_seq_t *q, const swgpu_seq_t *t,
                        const swgpu_hit_t *h);
/** The number of hits from k on that belong to the same subject and strand
 *  as hit k (adjacent in qr->hits: one Hit with several HSPs). */
size_t swgpu__fmt_group(const swgpu_query_result_t *qr, size_t k);
/** SWGPU_EINVAL naming the format when hit k of q has no alignment. */
int swgpu__fmt_need_aln(const fmt_writer_t *wr, const swgpu_seq_t *q, const swgpu_hit_t *h);
/** The database's whole size (a part's whole database). */
void swgpu__fmt_db_size(const swgpu_db_t *db, uint64_t *nseq, uint64_t *residues);
/** BLAST's length adjustment and effective search space of a query of qlen
 *  residues under the block's parameters (0 and 0 when there are none). */
void swgpu__fmt_search_space(const fmt_writer_t *wr, const swgpu_query_result_t *qr,
                             uint64_t qlen, int64_t *hsp_len, double *space);
/** The gap costs (opts', else the alphabet's defaults). */
void swgpu__fmt_gaps(const fmt_writer_t *wr, int *open, int *extend);
const char *swgpu__fmt_dbname(const swgpu_outfmt_t *f);
/** The program BLAST would name: "blastp", "blastn" (or "psiblast"). */
const char *swgpu__fmt_program(const fmt_writer_t *wr);

/* ---- one file per format: a block, and the end of the output ---- */
int swgpu__report_block(fmt_writer_t *wr, const fmt_block_t *b);
int swgpu__report_end(fmt_writer_t *wr);
int swgpu__xml_block(fmt_writer_t *wr, const fmt_block_t *b);
int swgpu__xml_end(fmt_writer_t *wr);
int swgpu__json_block(fmt_writer_t *wr, const fmt_block_t *b);
int swgpu__json_end(fmt_writer_t *wr);
int swgpu__sam_block(fmt_writer_t *wr, const fmt_block_t *b);
int swgpu__sam_end(fmt_writer_t *wr);

#endif /* SWGPU_SEARCH_FORMAT_INT_H */
