/*
 * test_blastdb.c - BLAST databases as input (src/io/blastdb.c):
 *  - every committed fixture (tests/data/blastdb: versions 4 and 5, with and
 *    without -parse_seqids, several volumes, a nested alias) reads as the
 *    FASTA file it was built from reads, through swgpu_seqset_read and
 *    swgpu_db_open;
 *  - exact ids, descriptions and residues (every kind of Seq-id, several
 *    deflines, ambiguity codes, U O J, gaps, stops);
 *  - the ways to name a database, both types under one name, alias files
 *    (relative paths, quotes, nesting, cycles, subsets refused);
 *  - damaged databases, built here byte by byte, refused with SWGPU_EDB
 *    naming the file and the OID;
 *  - when makeblastdb and blastdbcmd are installed: databases built now,
 *    compared sequence by sequence with blastdbcmd's FASTA dump.
 */
#define _POSIX_C_SOURCE 200809L
#include "tap.h"
#include "testlib.h"
#include "io/io.h"

#include <ftw.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static char datadir[512]; /* the data folder's blastdb/ */
static char tmpdir[256];

static const char *data(const char *name)
{
    return tl_path(datadir, name);
}

static const char *tmp(const char *name)
{
    return tl_path(tmpdir, name);
}

static void copy_file(const char *from, const char *to)
{
    size_t n;
    unsigned char *p = tl_slurp(from, &n);
    tl_spit(to, p, n);
    free(p);
}

static swgpu_seqset_t *read_set(const char *path, swgpu_alphabet_t a, swgpu_read_info_t *info)
{
    swgpu_seqset_t *s = NULL;
    int rc = swgpu_seqset_read(path, a, &s, info);
    CHECK(rc == SWGPU_OK, "reading %s: %s", path, swgpu_last_error());
    return s;
}

/* s with every run of blanks made one space (in a static buffer) */
static const char *squeezed(const char *s, int which)
{
    static char buf[2][4096];
    size_t n = 0;
    for (; *s && n + 1 < sizeof buf[which]; s++)
        if (*s != ' ' || (n && buf[which][n - 1] != ' ')) buf[which][n++] = *s;
    buf[which][n] = 0;
    return buf[which];
}

/* a and b hold the same sequences: ids, descriptions (with squeeze, equal
 * up to runs of blanks), residues, in order */
static int same_sets_sq(const char *what, const swgpu_seqset_t *a, const swgpu_seqset_t *b,
                        int squeeze)
{
    if (!a || !b) return 0;
    if (swgpu_seqset_size(a) != swgpu_seqset_size(b) ||
        swgpu_seqset_alphabet(a) != swgpu_seqset_alphabet(b)) {
        fprintf(stderr, "%s: %zu %s sequences, expected %zu %s\n", what, swgpu_seqset_size(a),
                swgpu_alphabet_name(swgpu_seqset_alphabet(a)), swgpu_seqset_size(b),
                swgpu_alphabet_name(swgpu_seqset_alphabet(b)));
        return 0;
    }
    for (size_t i = 0; i < swgpu_seqset_size(a); i++) {
        swgpu_seq_t x, y;
        swgpu_seqset_get(a, i, &x);
        swgpu_seqset_get(b, i, &y);
        int desc_differs = squeeze ? strcmp(squeezed(x.desc, 0), squeezed(y.desc, 1))
                                   : strcmp(x.desc, y.desc);
        if (strcmp(x.id, y.id) || desc_differs || x.len != y.len ||
            memcmp(x.res, y.res, x.len)) {
            fprintf(stderr, "%s: sequence %zu is '%s' '%s' (%zu), expected '%s' '%s' (%zu)\n", what,
                    i, x.id, x.desc, x.len, y.id, y.desc, y.len);
            return 0;
        }
    }
    return 1;
}

static int same_sets(const char *what, const swgpu_seqset_t *a, const swgpu_seqset_t *b)
{
    return same_sets_sq(what, a, b, 0);
}

/* the database db holds set's sequences in database order */
static int same_db(const swgpu_db_t *db, const swgpu_seqset_t *set)
{
    if (!db || swgpu_db_size(db) != swgpu_seqset_size(set) ||
        swgpu_db_residues(db) != swgpu_seqset_residues(set))
        return 0;
    for (size_t i = 0; i < swgpu_seqset_size(set); i++) {
        swgpu_seq_t x, y;
        if (swgpu_db_get(db, i, &x) || swgpu_seqset_get(set, i, &y)) return 0;
        if (strcmp(x.id, y.id) || strcmp(x.desc, y.desc) || x.len != y.len ||
            memcmp(x.res, y.res, x.len))
            return 0;
    }
    return 1;
}

/* ------------------------------------------------- the committed fixtures */

static void test_fixtures(void)
{
    static const struct {
        const char *db, *fasta;
    } pairs[] = {
        {"prot_v4", "prot.fa"},   {"prot_v5", "prot.fa"},   {"prot_v4s", "prot.fa"},
        {"prot_v5s", "prot.fa"},  {"prot_mv", "prot.fa"},   {"nuc_v4", "nuc.fa"},
        {"nuc_v5", "nuc.fa"},     {"nuc_v4s", "nuc.fa"},    {"nuc_v5s", "nuc.fa"},
        {"nuc_mv", "nuc.fa"},     {"prot_v4.pin", "prot.fa"}, {"prot_mv.pal", "prot.fa"},
        {"nuc_v5.nin", "nuc.fa"}, {"nuc_mv.nal", "nuc.fa"},
    };
    for (size_t k = 0; k < sizeof pairs / sizeof *pairs; k++) {
        swgpu_read_info_t bi, fi;
        swgpu_seqset_t *b = read_set(data(pairs[k].db), SWGPU_AUTO, &bi);
        swgpu_seqset_t *f = read_set(data(pairs[k].fasta), SWGPU_AUTO, &fi);
        CHECK(same_sets(pairs[k].db, b, f), "%s reads as %s", pairs[k].db, pairs[k].fasta);
        CHECK(bi.n_records == fi.n_records && bi.n_residues == fi.n_residues &&
                  bi.max_len == fi.max_len,
              "%s: info %llu records %llu residues, FASTA %llu %llu", pairs[k].db,
              (unsigned long long)bi.n_records, (unsigned long long)bi.n_residues,
              (unsigned long long)fi.n_records, (unsigned long long)fi.n_residues);
        swgpu_db_t *db = NULL;
        swgpu_read_info_t di;
        int rc = swgpu_db_open(data(pairs[k].db), SWGPU_AUTO, &db, &di);
        CHECK(rc == SWGPU_OK && same_db(db, f), "%s: swgpu_db_open (%s)", pairs[k].db,
              swgpu_last_error());
        CHECK(di.n_records == fi.n_records, "%s: db info", pairs[k].db);
        swgpu_db_destroy(db);
        swgpu_seqset_destroy(b);
        swgpu_seqset_destroy(f);
    }

    /* the nested alias: prot_mv's volumes, then prot_v4 */
    swgpu_seqset_t *n = read_set(data("alias/nested"), SWGPU_AUTO, NULL);
    swgpu_seqset_t *f = read_set(data("prot.fa"), SWGPU_AUTO, NULL);
    int ok = n && f && swgpu_seqset_size(n) == 2 * swgpu_seqset_size(f);
    for (size_t i = 0; ok && i < swgpu_seqset_size(n); i++)
        ok = !strcmp(tl_id_of(n, i), tl_id_of(f, i % swgpu_seqset_size(f))) &&
             !strcmp(tl_letters(n, i), tl_letters(f, i % swgpu_seqset_size(f)));
    CHECK(ok, "alias/nested holds prot.fa twice");
    swgpu_seqset_destroy(n);
    swgpu_seqset_destroy(f);
}

/* exact values, from blastdbcmd -outfmt %f -long_seqids (makeblastdb 2.12) */
static void test_exact(void)
{
    static const char *const ids[] = {
        "foo",           "bar",           "gi|12345|ref|NP_000001.1|", "ref|XP_000002.3|",
        "gb|AAA12345.1|", "emb|CAA1234.2|NAME1", "dbj|BAA00001.1|",       "pir||S12345",
        "sp|P69905.2|HBA_HUMAN", "pdb|1ABC|A", "pdb|2XYZ|BB",            "gnl|mydb|tag42",
        "gnl|mydb|42",   "prf||1234567A", "tpg|DAA00001.1|",           "sp|P12345|",
        "ref|NP_123456.1|", "gi|999",     "pat|US|1234567|3",          "123",
        "tr|A0A000|A0A000_HUMAN", "gb|AAA99999|"};
    swgpu_seqset_t *s = read_set(data("ids_v4s"), SWGPU_AUTO, NULL);
    swgpu_seqset_t *f = read_set(data("ids.fa"), SWGPU_AUTO, NULL);
    CHECK_EQ_INT(swgpu_seqset_size(s), 22);
    for (size_t i = 0; i < 22 && i < swgpu_seqset_size(s); i++) {
        CHECK_EQ_STR(tl_id_of(s, i), ids[i]);
        CHECK_EQ_STR(tl_desc_of(s, i), tl_desc_of(f, i));
    }
    CHECK_EQ_STR(tl_desc_of(s, 0), "a plain word: a local id");
    CHECK_EQ_STR(tl_letters(s, 21), "MKVLAAGIVALLLAAGCSSTT");
    swgpu_seqset_destroy(s);
    swgpu_seqset_destroy(f);

    s = read_set(data("multidef_v4s"), SWGPU_AUTO, NULL);
    CHECK_EQ_INT(swgpu_seqset_size(s), 2);
    CHECK_EQ_STR(tl_id_of(s, 0), "gi|111|gb|AAA1.1|");
    CHECK_EQ_STR(tl_desc_of(s, 0), "first title >gi|222|emb|CAA2.1| second title >lcl|third third title");
    CHECK_EQ_STR(tl_letters(s, 0), "MKVLAAGIVALLLAAGWWKRRE");
    CHECK_EQ_STR(tl_id_of(s, 1), "sp|P1|N1_HUMAN");
    CHECK_EQ_STR(tl_desc_of(s, 1), "single entry");
    swgpu_seqset_destroy(s);

    swgpu_read_info_t info;
    s = read_set(data("prot_v5"), SWGPU_AUTO, &info);
    CHECK_EQ_INT(swgpu_seqset_alphabet(s), SWGPU_PROTEIN);
    CHECK_EQ_INT(swgpu_seqset_size(s), 12);      /* 14 records: one empty, one of stops */
    CHECK_EQ_INT(info.n_empty, 1);                /* the stops (makeblastdb drops the empty one) */
    CHECK_EQ_INT(info.n_unknown, 1);              /* the gap */
    CHECK_EQ_STR(tl_id_of(s, 6), "sp|P69905|HBA_HUMAN");
    CHECK_EQ_STR(tl_desc_of(s, 6), "Hemoglobin subunit alpha  OS=Homo sapiens OX=9606 GN=HBA1");
    CHECK_EQ_STR(tl_id_of(s, 7), "plainid");
    CHECK_EQ_STR(tl_letters(s, 7), "MKTAYIAKQRQISFVKSHFSRQLEERLGLIEVQAPILSRVGDGTQDNLSGAEKAVQVKVKALPDAVEVAHSHRGDSAVLA");
    CHECK_EQ_STR(tl_letters(s, 8), "MKVLAGG*HHKKRLEXDDWWYYFPST");
    CHECK_EQ_STR(tl_id_of(s, 9), "ambig");
    CHECK_EQ_STR(tl_letters(s, 9), "MBZXKVLABZXXXWWKR");
    CHECK_EQ_STR(tl_letters(s, 10), "MKVLAGGKKLLQQRRSTVWY");
    CHECK_EQ_STR(tl_id_of(s, 11), "nodesc");
    CHECK_EQ_STR(tl_desc_of(s, 11), "");
    swgpu_seqset_destroy(s);

    s = read_set(data("nuc_v4s"), SWGPU_AUTO, &info);
    CHECK_EQ_INT(swgpu_seqset_alphabet(s), SWGPU_DNA);
    CHECK_EQ_INT(swgpu_seqset_size(s), 12);
    CHECK_EQ_STR(tl_id_of(s, 2), "iupac");
    CHECK_EQ_STR(tl_letters(s, 2), "ACGTNRYKMSWBDHVN");
    CHECK_EQ_STR(tl_letters(s, 6), "ACGTTGCATTTAGC");
    CHECK_EQ_STR(tl_letters(s, 7), "ACGTNNRYKMACGTWSBDHV");
    CHECK_EQ_STR(tl_letters(s, 8), "G");
    CHECK_EQ_STR(tl_letters(s, 9), "N");
    CHECK_EQ_STR(tl_letters(s, 10), "ACGTNACGTNNNNACG"); /* makeblastdb stored the gap as N */
    const char *h = tl_letters(s, 5);                     /* 6000 N at 100..6099, Y at 6300 */
    size_t nn = 0;
    for (size_t k = 100; k < 6100 && h[k]; k++) nn += h[k] == 'N';
    CHECK(strlen(h) == 5001 + 6000 && nn == 6000 && h[99] != 'N' && h[6100] != 'N' && h[6300] == 'Y',
          "hugeN: %zu bases, %zu N in the run", strlen(h), nn);
    CHECK(!strncmp(tl_letters(s, 3) + 13, "NNNNNNNNNNNNNNNN", 16), "shortN: the run of 16");
    swgpu_seqset_destroy(s);
}

/* ----------------------------------------- databases built byte by byte */

typedef struct {
    unsigned char *p;
    size_t n, cap;
} buf_t;

static void put(buf_t *b, const void *p, size_t n)
{
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2 + 256;
        b->p = realloc(b->p, b->cap);
    }
    if (n) memcpy(b->p + b->n, p, n);
    b->n += n;
}

static void put_be32(buf_t *b, uint32_t v)
{
    unsigned char x[4] = {(unsigned char)(v >> 24), (unsigned char)(v >> 16), (unsigned char)(v >> 8),
                          (unsigned char)v};
    put(b, x, 4);
}

static void put_pstr(buf_t *b, const char *s)
{
    put_be32(b, (uint32_t)strlen(s));
    put(b, s, strlen(s));
}

/* a Blast-def-line-set { { title, seqid { local str id } } }, indefinite
 * lengths as NCBI writes them */
static size_t hdr_local(unsigned char *out, const char *id, const char *title)
{
    buf_t b = {0};
    put(&b, "\x30\x80\x30\x80\xa0\x80\x1a", 7);
    unsigned char l = (unsigned char)strlen(title);
    put(&b, &l, 1);
    put(&b, title, l);
    put(&b, "\0\0\xa1\x80\x30\x80\xa0\x80\xa1\x80\x1a", 11);
    l = (unsigned char)strlen(id);
    put(&b, &l, 1);
    put(&b, id, l);
    put(&b, "\0\0\0\0\0\0\0\0\0\0\0\0", 12);
    memcpy(out, b.p, b.n);
    size_t n = b.n;
    free(b.p);
    return n;
}

enum { MAXREC = 4 };
typedef struct {
    int nucl, n;
    uint32_t version, type;      /* 0: 4 and the right type */
    const unsigned char *hdr[MAXREC];
    size_t hlen[MAXREC];
    const unsigned char *seq[MAXREC]; /* protein codes, or packed bases */
    size_t slen[MAXREC];
    const unsigned char *amb[MAXREC]; /* nucleotide ambiguity bytes */
    size_t alen[MAXREC];
    int64_t total;               /* -1: the right one */
    int no_nul;                  /* protein: no NUL after the last sequence */
    int swap_hdr;                /* header offsets of record 0 swapped */
    size_t cut_idx;              /* bytes cut off the index's end */
    size_t keep_idx;             /* when not 0: only the index's first bytes */
    size_t extra_idx;            /* zero bytes added to the index */
} vol_spec_t;

/* write PREFIX.pin/psq/phr (or .n*) as makeblastdb would, version 4 */
static void write_vol(const char *prefix, const vol_spec_t *v)
{
    buf_t idx = {0}, sq = {0}, hd = {0};
    uint32_t hoff[MAXREC + 1], soff[MAXREC + 1], aoff[MAXREC + 1];
    uint64_t total = 0;
    uint32_t maxlen = 0;
    put(&sq, "", 1);
    hoff[0] = 0;
    for (int i = 0; i < v->n; i++) {
        put(&hd, v->hdr[i], v->hlen[i]);
        hoff[i + 1] = (uint32_t)hd.n;
        soff[i] = (uint32_t)sq.n;
        put(&sq, v->seq[i], v->slen[i]);
        uint64_t len = v->slen[i];
        if (v->nucl) {
            len = v->slen[i] ? (v->slen[i] - 1) * 4 + (v->seq[i][v->slen[i] - 1] & 3) : 0;
            aoff[i] = (uint32_t)sq.n;
            put(&sq, v->amb[i], v->alen[i]);
        } else if (!(v->no_nul && i == v->n - 1)) {
            put(&sq, "", 1);
        }
        total += len;
        if (len > maxlen) maxlen = (uint32_t)len;
    }
    soff[v->n] = aoff[v->n] = (uint32_t)sq.n;
    if (v->swap_hdr) {
        uint32_t t = hoff[0];
        hoff[0] = hoff[1];
        hoff[1] = t;
    }
    put_be32(&idx, v->version ? v->version : 4);
    put_be32(&idx, v->type ? v->type - 1 : (v->nucl ? 0 : 1)); /* type is stored + 1 */
    put_pstr(&idx, "test");
    put_pstr(&idx, "Nov 25, 2026  11:00 AM\0\0");
    put_be32(&idx, (uint32_t)v->n);
    uint64_t t = v->total >= 0 ? (uint64_t)v->total : total;
    for (int k = 0; k < 8; k++) {
        unsigned char x = (unsigned char)(t >> (8 * k));
        put(&idx, &x, 1);
    }
    put_be32(&idx, maxlen);
    for (int i = 0; i <= v->n; i++) put_be32(&idx, hoff[i]);
    for (int i = 0; i <= v->n; i++) put_be32(&idx, soff[i]);
    if (v->nucl)
        for (int i = 0; i <= v->n; i++) put_be32(&idx, aoff[i]);
    for (size_t k = 0; k < v->extra_idx; k++) put(&idx, "", 1);
    char path[512];
    const char *x = v->nucl ? "n" : "p";
    snprintf(path, sizeof path, "%s.%sin", prefix, x);
    tl_spit(path, idx.p, v->keep_idx ? v->keep_idx : idx.n - v->cut_idx);
    snprintf(path, sizeof path, "%s.%ssq", prefix, x);
    tl_spit(path, sq.p, sq.n);
    snprintf(path, sizeof path, "%s.%shr", prefix, x);
    tl_spit(path, hd.p, hd.n);
    free(idx.p);
    free(sq.p);
    free(hd.p);
}

/* reading prefix fails with status, the message holding both strings */
static void expect_fail(const char *name, const char *prefix, swgpu_alphabet_t a, int status,
                        const char *must1, const char *must2)
{
    swgpu_seqset_t *s = NULL;
    swgpu_db_t *db = NULL;
    int rc = swgpu_seqset_read(prefix, a, &s, NULL);
    const char *err = swgpu_last_error();
    CHECK(rc == status, "%s: status %d, expected %d (%s)", name, rc, status, err);
    CHECK(strstr(err, must1) != NULL, "%s: message '%s' lacks '%s'", name, err, must1);
    if (must2) CHECK(strstr(err, must2) != NULL, "%s: message '%s' lacks '%s'", name, err, must2);
    CHECK(s == NULL, "%s: no set on failure", name);
    rc = swgpu_db_open(prefix, a, &db, NULL);
    CHECK(rc == status && db == NULL, "%s: swgpu_db_open status %d", name, rc);
    swgpu_seqset_destroy(s);
    swgpu_db_destroy(db);
}

/* Broken indexes of the volume good fail with their messages. */
static void built_index_errors(const vol_spec_t *good)
{
    vol_spec_t v = *good;
    v.version = 3;
    write_vol(tmp("bad"), &v);
    expect_fail("version 3", tmp("bad"), SWGPU_AUTO, SWGPU_EDB, "bad.pin", "format version 3");
    v = *good;
    v.type = 1; /* nucleotide type in a .pin */
    write_vol(tmp("bad"), &v);
    expect_fail("wrong type", tmp("bad"), SWGPU_AUTO, SWGPU_EDB, "bad.pin", "sequence type 0");
    v = *good;
    v.cut_idx = 3;
    write_vol(tmp("bad"), &v);
    expect_fail("index cut", tmp("bad"), SWGPU_AUTO, SWGPU_EDB, "bad.pin", "truncated");
    v = *good;
    v.extra_idx = 4;
    write_vol(tmp("bad"), &v);
    expect_fail("index longer", tmp("bad"), SWGPU_AUTO, SWGPU_EDB, "bad.pin", "unexpected data");
    v = *good;
    v.keep_idx = 10; /* inside the title */
    write_vol(tmp("bad"), &v);
    expect_fail("index header cut", tmp("bad"), SWGPU_AUTO, SWGPU_EDB, "bad.pin", "truncated in the");
    v = *good;
    v.total = 9;
    write_vol(tmp("bad"), &v);
    expect_fail("total", tmp("bad"), SWGPU_AUTO, SWGPU_EDB, "bad.pin", "index says 9 residues");
    v = *good;
    v.total = 1000;
    write_vol(tmp("bad"), &v);
    expect_fail("total beyond the file", tmp("bad"), SWGPU_AUTO, SWGPU_EDB, "bad.pin",
                "1000 residues cannot be in");
}

/* Broken sequence files (.psq) of the volume good. */
static void built_sequence_errors(const vol_spec_t *good)
{
    vol_spec_t v = *good;
    v.no_nul = 1;
    write_vol(tmp("bad"), &v);
    expect_fail("no NUL", tmp("bad"), SWGPU_AUTO, SWGPU_EDB, "bad.psq, OID 1", "no NUL byte");
    static const unsigned char s28[] = {12, 28, 1};
    v = *good;
    v.seq[1] = s28;
    v.slen[1] = 3;
    write_vol(tmp("bad"), &v);
    expect_fail("byte 28", tmp("bad"), SWGPU_AUTO, SWGPU_EDB, "bad.psq, OID 1",
                "invalid residue byte 0x1c at position 2");
    write_vol(tmp("bad"), good);
    tl_spit(tmp("bad.psq"), "\0\x0c\x0a", 3); /* cut short */
    expect_fail("psq cut", tmp("bad"), SWGPU_AUTO, SWGPU_EDB, "bad.pin", "cannot be in");
    write_vol(tmp("bad"), good);
    tl_spit(tmp("bad.psq"), "\0\x0c\x0a\x13\x0b\x01\0\x07\x07\x08\0\x07", 8); /* OID 1 cut */
    expect_fail("psq cut in OID 1", tmp("bad"), SWGPU_AUTO, SWGPU_EDB, "bad.psq, OID 1",
                "outside the file");
    write_vol(tmp("bad"), good);
    unlink(tmp("bad.psq"));
    expect_fail("no psq", tmp("bad"), SWGPU_AUTO, SWGPU_EIO, "bad.psq", "No such file");
    static const unsigned char stars[] = {25, 25};
    v = *good;
    v.seq[0] = v.seq[1] = stars;
    v.slen[0] = v.slen[1] = 2;
    write_vol(tmp("bad"), &v);
    expect_fail("only stops", tmp("bad"), SWGPU_AUTO, SWGPU_EEMPTY, "no non-empty sequence", NULL);
}

/* Broken headers (.phr) of the volume good; a definite-length header reads
 * as NCBI's indefinite one. */
static void built_header_errors(const vol_spec_t *good)
{
    vol_spec_t v = *good;
    v.swap_hdr = 1;
    write_vol(tmp("bad"), &v);
    expect_fail("header offsets", tmp("bad"), SWGPU_AUTO, SWGPU_EDB, "bad.phr, OID 0",
                "header offsets");
    unsigned char deep[192]; /* 48 nested SEQUENCEs */
    for (int k = 0; k < 96; k += 2) {
        deep[k] = 0x30;
        deep[k + 1] = 0x80;
    }
    memset(deep + 96, 0, 96);
    v = *good;
    v.hdr[0] = deep;
    v.hlen[0] = sizeof deep;
    write_vol(tmp("bad"), &v);
    expect_fail("deep header", tmp("bad"), SWGPU_AUTO, SWGPU_EDB, "bad.phr, OID 0",
                "nested too deeply");
    unsigned char hx[256];
    size_t hn = hdr_local(hx, "x", "t");
    hx[hn++] = 0; /* a byte after the set */
    v = *good;
    v.hdr[1] = hx;
    v.hlen[1] = hn;
    write_vol(tmp("bad"), &v);
    expect_fail("data after", tmp("bad"), SWGPU_AUTO, SWGPU_EDB, "bad.phr, OID 1", "data after");
    hn = hdr_local(hx, "x", "t");
    v.hlen[1] = hn - 3; /* cut inside */
    write_vol(tmp("bad"), &v);
    expect_fail("header cut", tmp("bad"), SWGPU_AUTO, SWGPU_EDB, "bad.phr, OID 1",
                "invalid header");
    hn = hdr_local(hx, "x", "t");
    hx[15] = 0xb9; /* the Seq-id choice [0] becomes [25] */
    v.hlen[1] = hn;
    write_vol(tmp("bad"), &v);
    expect_fail("unknown Seq-id", tmp("bad"), SWGPU_AUTO, SWGPU_EDB, "bad.phr, OID 1",
                "unknown Seq-id type");
    hn = hdr_local(hx, "x", "a\001b");
    v.hlen[1] = hn;
    write_vol(tmp("bad"), &v);
    expect_fail("control character", tmp("bad"), SWGPU_AUTO, SWGPU_EDB, "bad.phr, OID 1",
                "control character 0x01");
    static const unsigned char noid[] = {0x30, 0x80, 0x30, 0x80, 0xa0, 0x80, 0x1a, 1, 't',
                                         0, 0, 0, 0, 0, 0};
    v.hdr[1] = noid;
    v.hlen[1] = sizeof noid;
    write_vol(tmp("bad"), &v);
    expect_fail("no Seq-id", tmp("bad"), SWGPU_AUTO, SWGPU_EDB, "bad.phr, OID 1", "no Seq-id");
    static const unsigned char longlen[] = {0x30, 0x85, 1, 2, 3, 4, 5};
    v.hdr[1] = longlen;
    v.hlen[1] = sizeof longlen;
    write_vol(tmp("bad"), &v);
    expect_fail("length too large", tmp("bad"), SWGPU_AUTO, SWGPU_EDB, "bad.phr, OID 1",
                "length too large");
    /* a definite-length header (NCBI writes indefinite ones) reads the same */
    static const unsigned char def[] = {0x30, 0x13, 0x30, 0x11, 0xa0, 0x05, 0x1a, 0x03, 'a', 'b',
                                        'c', 0xa1, 0x08, 0x30, 0x06, 0xab, 0x04, 0x02, 0x02,
                                        0x01, 0x00};
    v.hdr[1] = def;
    v.hlen[1] = sizeof def;
    write_vol(tmp("def"), &v);
    swgpu_seqset_t *s = read_set(tmp("def"), SWGPU_AUTO, NULL);
    CHECK(s && !strcmp(tl_id_of(s, 1), "gi|256") && !strcmp(tl_desc_of(s, 1), "abc"),
          "a definite-length header: %s %s", s ? tl_id_of(s, 1) : "", s ? tl_desc_of(s, 1) : "");
    swgpu_seqset_destroy(s);
}

/* Nucleotide volumes (one record, header hdr): packed bases and ambiguity
 * runs, and broken ambiguity data. */
static void built_nucleotide(const unsigned char *hdr, size_t hlen)
{
    static const unsigned char p0[] = {0x1b, 0x82}; /* ACGT, then G A and 2 in the low bits */
    static const unsigned char a0[] = {0, 0, 0, 2, 0xf1, 0, 0, 1, 0x50, 0, 0, 5}; /* NN at 1, R at 5 */
    vol_spec_t nv = {0};
    nv.nucl = 1;
    nv.n = 1;
    nv.hdr[0] = hdr;
    nv.hlen[0] = hlen;
    nv.seq[0] = p0;
    nv.slen[0] = sizeof p0;
    nv.amb[0] = a0;
    nv.alen[0] = sizeof a0;
    nv.total = -1;
    write_vol(tmp("nuc"), &nv);
    swgpu_seqset_t *s = read_set(tmp("nuc"), SWGPU_AUTO, NULL);
    CHECK_EQ_STR(tl_letters(s, 0), "ANNTGR");
    swgpu_seqset_destroy(s);
    static const unsigned char along[] = {0x80, 0, 0, 2, 0xf0, 0x02, 0, 0, 0, 0, 0, 3}; /* NNN at 3 */
    nv.amb[0] = along;
    nv.alen[0] = sizeof along;
    write_vol(tmp("nuc"), &nv);
    s = read_set(tmp("nuc"), SWGPU_AUTO, NULL);
    CHECK_EQ_STR(tl_letters(s, 0), "ACGNNN");
    swgpu_seqset_destroy(s);
    static const unsigned char apast[] = {0x80, 0, 0, 2, 0xf0, 0x02, 0, 0, 0, 0, 0, 4};
    nv.amb[0] = apast;
    write_vol(tmp("badn"), &nv);
    expect_fail("ambiguity past the end", tmp("badn"), SWGPU_AUTO, SWGPU_EDB, "badn.nsq, OID 0",
                "past the end of the sequence (6 bases)");
    static const unsigned char acount[] = {0, 0, 0, 3, 0xf1, 0, 0, 1, 0x50, 0, 0, 5};
    nv.amb[0] = acount;
    write_vol(tmp("badn"), &nv);
    expect_fail("ambiguity count", tmp("badn"), SWGPU_AUTO, SWGPU_EDB, "badn.nsq, OID 0",
                "ambiguity count 3");
    nv.alen[0] = 6;
    write_vol(tmp("badn"), &nv);
    expect_fail("ambiguity bytes", tmp("badn"), SWGPU_AUTO, SWGPU_EDB, "badn.nsq, OID 0",
                "ambiguity data of 6 bytes");
    nv.alen[0] = sizeof acount;
    nv.slen[0] = 0; /* no packed byte at all */
    write_vol(tmp("badn"), &nv);
    expect_fail("no packed byte", tmp("badn"), SWGPU_AUTO, SWGPU_EDB, "badn.nsq, OID 0",
                "outside the file (13 bytes) or out of order");
}

static void test_built(void)
{
    unsigned char h0[256], h1[256];
    static const unsigned char s0[] = {12, 10, 19, 11, 1}; /* MKVLA */
    static const unsigned char s1[] = {7, 7, 8};           /* GGH */
    vol_spec_t good = {0};
    good.n = 2;
    good.hdr[0] = h0;
    good.hlen[0] = hdr_local(h0, "first", "the first one");
    good.hdr[1] = h1;
    good.hlen[1] = hdr_local(h1, "second", "");
    good.seq[0] = s0;
    good.slen[0] = sizeof s0;
    good.seq[1] = s1;
    good.slen[1] = sizeof s1;
    good.total = -1;
    write_vol(tmp("good"), &good);
    swgpu_seqset_t *s = read_set(tmp("good"), SWGPU_AUTO, NULL);
    CHECK(s && swgpu_seqset_size(s) == 2, "the built volume reads");
    if (s && swgpu_seqset_size(s) == 2) {
        CHECK_EQ_STR(tl_id_of(s, 0), "first");
        CHECK_EQ_STR(tl_desc_of(s, 0), "the first one");
        CHECK_EQ_STR(tl_letters(s, 0), "MKVLA");
        CHECK_EQ_STR(tl_id_of(s, 1), "second");
        CHECK_EQ_STR(tl_letters(s, 1), "GGH");
    }
    swgpu_seqset_destroy(s);

    /* NCBIstdaa: U (24), O (26), J (27), '*' (25) inside, '-' (0), B Z X */
    static const unsigned char all[] = {1, 24, 26, 27, 25, 0, 2, 23, 21, 20};
    vol_spec_t v = good;
    v.n = 1;
    v.seq[0] = all;
    v.slen[0] = sizeof all;
    write_vol(tmp("uoj"), &v);
    swgpu_read_info_t info;
    s = read_set(tmp("uoj"), SWGPU_PROTEIN, &info);
    CHECK_EQ_STR(tl_letters(s, 0), "AUOJ*XBZXW");
    CHECK_EQ_INT(info.n_unknown, 1);
    swgpu_seqset_destroy(s);

    built_index_errors(&good);
    built_sequence_errors(&good);
    built_header_errors(&good);
    built_nucleotide(h0, good.hlen[0]);
}

/* ------------------------------------------------------ names and aliases */

static void write_text(const char *path, const char *text)
{
    tl_spit(path, text, strlen(text));
}

static void test_names(void)
{
    char buf[600];
    swgpu_seqset_t *s;
    /* probe */
    CHECK_EQ_INT(swgpu__blastdb_probe(data("prot_v4")), 1);
    CHECK_EQ_INT(swgpu__blastdb_probe(data("prot_v4.pin")), 1);
    CHECK_EQ_INT(swgpu__blastdb_probe(data("prot_mv")), 1);
    CHECK_EQ_INT(swgpu__blastdb_probe(data("prot_mv.pal")), 1);
    CHECK_EQ_INT(swgpu__blastdb_probe(data("prot.fa")), 0);
    CHECK_EQ_INT(swgpu__blastdb_probe(data("nothere")), 0);
    CHECK_EQ_INT(swgpu__blastdb_probe(data("prot_v4.psq")), 0);
    CHECK_EQ_INT(swgpu__blastdb_probe(NULL), 0);

    /* a type that the database does not hold */
    expect_fail("protein asked of nucleotide", data("nuc_v4"), SWGPU_PROTEIN, SWGPU_EALPHABET,
                "holds dna sequences", NULL);
    expect_fail("dna asked of protein", data("prot_v5"), SWGPU_DNA, SWGPU_EALPHABET,
                "holds protein sequences", NULL);
    expect_fail("dna asked of a .pin", data("prot_v4.pin"), SWGPU_DNA, SWGPU_EALPHABET,
                "holds protein", NULL);

    /* both types under one name: the type chooses */
    const char *ext[] = {"pin", "psq", "phr", "nin", "nsq", "nhr"};
    for (int k = 0; k < 6; k++) {
        snprintf(buf, sizeof buf, "%s.%s", k < 3 ? "prot_v4" : "nuc_v4", ext[k]);
        char to[600];
        snprintf(to, sizeof to, "%s/both.%s", tmpdir, ext[k]);
        copy_file(data(buf), to);
    }
    expect_fail("both types", tmp("both"), SWGPU_AUTO, SWGPU_EINVAL, "both a protein and a nucleotide",
                "--type");
    s = read_set(tmp("both"), SWGPU_PROTEIN, NULL);
    CHECK(s && swgpu_seqset_alphabet(s) == SWGPU_PROTEIN && swgpu_seqset_size(s) == 12, "both: protein");
    swgpu_seqset_destroy(s);
    s = read_set(tmp("both"), SWGPU_DNA, NULL);
    CHECK(s && swgpu_seqset_alphabet(s) == SWGPU_DNA && swgpu_seqset_size(s) == 12, "both: dna");
    swgpu_seqset_destroy(s);
    s = read_set(tmp("both.nin"), SWGPU_AUTO, NULL);
    CHECK(s && swgpu_seqset_alphabet(s) == SWGPU_DNA, "both.nin names the nucleotide one");
    swgpu_seqset_destroy(s);

    /* alias files: quotes, a directory with a space, an alias naming itself */
    mkdir(tmp("sub dir"), 0755);
    for (int k = 0; k < 3; k++) {
        snprintf(buf, sizeof buf, "prot_v5s.%s", ext[k]);
        char to[600];
        snprintf(to, sizeof to, "%s/sub dir/v.%s", tmpdir, ext[k]);
        copy_file(data(buf), to);
        snprintf(to, sizeof to, "%s/self.%s", tmpdir, ext[k]);
        copy_file(data(buf), to);
    }
    write_text(tmp("quoted.pal"), "# a comment\nTITLE quoted\r\nDBLIST \"sub dir/v\" self\r\nNSEQ 24\n");
    write_text(tmp("self.pal"), "DBLIST self\n");
    s = read_set(tmp("quoted"), SWGPU_AUTO, NULL);
    swgpu_seqset_t *f = read_set(data("prot.fa"), SWGPU_AUTO, NULL);
    int ok = s && f && swgpu_seqset_size(s) == 2 * swgpu_seqset_size(f);
    for (size_t i = 0; ok && i < swgpu_seqset_size(s); i++)
        ok = !strcmp(tl_id_of(s, i), tl_id_of(f, i % swgpu_seqset_size(f)));
    CHECK(ok, "quoted alias: the volume in 'sub dir', then self");
    swgpu_seqset_destroy(s);
    swgpu_seqset_destroy(f);

    write_text(tmp("nolist.pal"), "TITLE none\n");
    expect_fail("no DBLIST", tmp("nolist"), SWGPU_AUTO, SWGPU_EDB, "nolist.pal", "no DBLIST");
    write_text(tmp("emptylist.pal"), "DBLIST  \n");
    expect_fail("empty DBLIST", tmp("emptylist"), SWGPU_AUTO, SWGPU_EDB, "emptylist.pal",
                "names no database");
    write_text(tmp("gilist.pal"), "DBLIST self\nGILIST some.gil\n");
    expect_fail("GILIST", tmp("gilist"), SWGPU_AUTO, SWGPU_EDB, "gilist.pal, line 2",
                "GILIST (a subset");
    write_text(tmp("oid.pal"), "DBLIST self\nFIRST_OID 3\n");
    expect_fail("FIRST_OID", tmp("oid"), SWGPU_AUTO, SWGPU_EDB, "oid.pal", "FIRST_OID");
    write_text(tmp("quote.pal"), "DBLIST \"self\n");
    expect_fail("unterminated quote", tmp("quote"), SWGPU_AUTO, SWGPU_EDB, "quote.pal",
                "unterminated quote");
    write_text(tmp("missing.pal"), "DBLIST self gone\n");
    expect_fail("missing volume", tmp("missing"), SWGPU_AUTO, SWGPU_EIO, "gone.pin",
                "No such file");
    write_text(tmp("cyc_a.pal"), "DBLIST cyc_b\n");
    write_text(tmp("cyc_b.pal"), "DBLIST cyc_a\n");
    expect_fail("alias cycle", tmp("cyc_a"), SWGPU_AUTO, SWGPU_EDB, "nested more than 16",
                "cyc_");
    tl_spit(tmp("bin.pal"), "DBLIST self\0\n", 13);
    expect_fail("binary alias", tmp("bin"), SWGPU_AUTO, SWGPU_EDB, "bin.pal, line 1",
                "binary data");

    /* swgpu_db_write never replaces a file the database was read from */
    swgpu_db_t *db = NULL;
    int rc = swgpu_db_open(tmp("quoted"), SWGPU_AUTO, &db, NULL);
    CHECK(rc == SWGPU_OK, "open quoted: %s", swgpu_last_error());
    size_t before, after;
    free(tl_slurp(tmp("sub dir/v.psq"), &before));
    rc = swgpu_db_write(db, tmp("sub dir/v.psq"));
    CHECK(rc == SWGPU_EINVAL && strstr(swgpu_last_error(), "a file this database was read from"),
          "db_write over a volume file: %d %s", rc, swgpu_last_error());
    rc = swgpu_db_write(db, tmp("quoted.pal"));
    CHECK(rc == SWGPU_EINVAL, "db_write over the alias file: %d", rc);
    free(tl_slurp(tmp("sub dir/v.psq"), &after));
    CHECK(before == after && before > 0, "the volume file is untouched");
    rc = swgpu_db_write(db, tmp("quoted.swdb"));
    CHECK(rc == SWGPU_OK, "db_write elsewhere: %s", swgpu_last_error());
    swgpu_db_t *back = NULL;
    s = read_set(tmp("quoted"), SWGPU_AUTO, NULL);
    rc = swgpu_db_open(tmp("quoted.swdb"), SWGPU_AUTO, &back, NULL);
    CHECK(rc == SWGPU_OK && s && same_db(back, s), "the makedb file of a BLAST database");
    swgpu_seqset_destroy(s);
    swgpu_db_destroy(back);
    swgpu_db_destroy(db);
}

/* ------------------------------- against blastdbcmd, when BLAST is here */

/* blastdbcmd -long_seqids's FASTA as swgpu reads the database: a lone local
 * id loses its "lcl|" (swgpu prints it as the FASTA file had it) and the
 * "TPA: " that blastdbcmd puts before a third-party entry's title is dropped
 * (it is not stored) */
static void normalise_dump(const char *path)
{
    size_t n;
    unsigned char *p = tl_slurp(path, &n);
    if (!p) return;
    buf_t out = {0};
    size_t i = 0;
    while (i < n) {
        size_t e = i;
        while (e < n && p[e] != '\n') e++;
        if (p[i] == '>') {
            size_t w = i + 1;
            while (w < e && p[w] != ' ') w++;
            const char *line = (const char *)p + i;
            size_t idlen = w - i - 1;
            if (idlen > 4 && !strncmp(line + 1, "lcl|", 4) && !memchr(line + 5, '|', idlen - 4)) {
                put(&out, ">", 1);
                put(&out, line + 5, e - i - 5);
            } else if ((!strncmp(line + 1, "tpg|", 4) || !strncmp(line + 1, "tpe|", 4) ||
                        !strncmp(line + 1, "tpd|", 4)) &&
                       e - w > 6 && !strncmp((const char *)p + w, " TPA: ", 6)) {
                put(&out, line, w - i + 1);
                put(&out, p + w + 6, e - w - 6);
            } else {
                put(&out, line, e - i);
            }
        } else {
            put(&out, p + i, e - i);
        }
        put(&out, "\n", 1);
        i = e + 1;
    }
    tl_spit(path, out.p, out.n);
    free(out.p);
    free(p);
}

static void test_blastdbcmd(void)
{
    if (system("command -v makeblastdb >/dev/null 2>&1 && command -v blastdbcmd >/dev/null 2>&1")) {
        SKIP(1, "makeblastdb/blastdbcmd not installed: no comparison with blastdbcmd");
        return;
    }
    static const struct {
        const char *fasta, *type, *opts;
        int versions; /* bit 0: version 4, bit 1: version 5 */
    } src[] = {
        {"prot.fa", "prot", "", 3},
        {"prot.fa", "prot", "-parse_seqids", 3},
        {"prot.fa", "prot", "-max_file_sz 1500", 3},
        {"prot.fa", "prot", "-parse_seqids -max_file_sz 2000", 3},
        {"nuc.fa", "nucl", "", 3},
        {"nuc.fa", "nucl", "-parse_seqids", 3},
        {"nuc.fa", "nucl", "-max_file_sz 1000", 3},
        {"ids.fa", "prot", "-parse_seqids", 1}, /* makeblastdb 2.12 aborts on it in version 5 */
        {"ids.fa", "prot", "", 3},
        {"multidef.fa", "prot", "-parse_seqids", 3},
        {"multidef.fa", "prot", "", 3},
    };
    char cmd[2048];
    for (size_t k = 0; k < sizeof src / sizeof *src; k++)
        for (int ver = 4; ver <= 5; ver++) {
            if (!(src[k].versions & (1 << (ver - 4)))) continue;
            const char *prefix = tmp("rt");
            snprintf(cmd, sizeof cmd, "rm -f '%s'.*; makeblastdb -in '%s' -dbtype %s -out '%s' "
                     "-blastdb_version %d %s >/dev/null 2>&1", prefix, data(src[k].fasta),
                     src[k].type, prefix, ver, src[k].opts);
            int rc = system(cmd);
            CHECK(rc == 0, "makeblastdb failed: %s", cmd);
            if (rc) continue;
            int parsed = strstr(src[k].opts, "parse_seqids") != NULL;
            snprintf(cmd, sizeof cmd, "blastdbcmd -db '%s' -dbtype %s -entry all -outfmt %%f %s "
                     "> '%s' 2>/dev/null", prefix, src[k].type, parsed ? "-long_seqids" : "",
                     tmp("rt_dump.fa"));
            rc = system(cmd);
            CHECK(rc == 0, "blastdbcmd failed: %s", cmd);
            if (rc) continue;
            if (parsed) normalise_dump(tmp("rt_dump.fa"));
            swgpu_seqset_t *b = read_set(prefix, SWGPU_AUTO, NULL);
            swgpu_seqset_t *d = read_set(tmp("rt_dump.fa"),
                                         src[k].type[0] == 'n' ? SWGPU_DNA : SWGPU_PROTEIN, NULL);
            char what[256];
            snprintf(what, sizeof what, "%s v%d %s", src[k].fasta, ver, src[k].opts);
            /* -long_seqids prints titles with runs of blanks made one */
            CHECK(same_sets_sq(what, b, d, parsed), "%s: as blastdbcmd dumps it", what);
            swgpu_seqset_destroy(b);
            swgpu_seqset_destroy(d);
        }
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

int main(void)
{
    snprintf(datadir, sizeof datadir, "%s/blastdb", tl_datadir());
    snprintf(tmpdir, sizeof tmpdir, "/tmp/swgpu_test_blastdb.XXXXXX");
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    test_fixtures();
    test_exact();
    test_built();
    test_names();
    test_blastdbcmd();
    if (nftw(tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS) != 0)
        fprintf(stderr, "could not remove %s\n", tmpdir);
    return tap_done();
}
