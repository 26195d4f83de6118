/*
 * test_taxdb.c - the subject columns read from BLAST databases' deflines
 * (swgpu_db_ids) and NCBI's taxonomy names database (swgpu_taxdb_*): the
 * fixtures tests/data/blastdb/tax_v5s, seqids_v5s and tests/data/taxdb
 * (values as blastp 2.12 prints them, tests/cli/expected/README); FASTA,
 * makedb databases and parts; records added by hand; where taxdb is looked
 * for; damaged taxdb files; the writer's taxonomy columns with
 * swgpu_outfmt_set_taxdb.
 */
#include "search/search.h"
#include "tap.h"
#include "testlib.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *B, *TAXDIR;

/* index of the sequence whose id is id (-1: none) */
static long find_id(const swgpu_db_t *db, const char *id)
{
    for (size_t i = 0; i < swgpu_db_size(db); i++) {
        swgpu_seq_t s;
        if (swgpu_db_get(db, i, &s) == 0 && !strcmp(s.id, id))
            return (long)i;
    }
    return -1;
}

static void check_ids(const swgpu_db_t *db, const char *id, const char *seqid, const char *acc,
                      const char *accver, const char *allseqid, const char *title,
                      const char *alltitles, const char *taxid, const char *taxids)
{
    swgpu_seq_ids_t x;
    long i = find_id(db, id);
    CHECK(i >= 0, "%s in the database", id);
    if (i < 0)
        return;
    CHECK_EQ_INT(swgpu_db_ids(db, (size_t)i, &x), SWGPU_OK);
    CHECK_EQ_STR(x.seqid, seqid);
    CHECK_EQ_STR(x.acc, acc);
    CHECK_EQ_STR(x.accver, accver);
    CHECK_EQ_STR(x.allseqid, allseqid);
    if (title) {
        CHECK(x.title && !strcmp(x.title, title), "%s: title '%s'", id, x.title ? x.title : "(null)");
        CHECK(x.alltitles && !strcmp(x.alltitles, alltitles), "%s: alltitles '%s'", id,
              x.alltitles ? x.alltitles : "(null)");
    } else {
        CHECK(!x.title && !x.alltitles, "%s: no titles", id);
    }
    CHECK_EQ_STR(x.taxid, taxid);
    CHECK_EQ_STR(x.taxids, taxids);
}

static void test_db_ids(void)
{
    swgpu_db_t *db = NULL, *fa = NULL, *part = NULL, *back = NULL;
    CHECK_EQ_INT(swgpu_db_open(tl_path(B, "tax_v5s"), SWGPU_AUTO, &db, NULL), SWGPU_OK);
    if (!db)
        return;
    check_ids(db, "sp|P69905.2|HBA_HUMAN", "sp|P69905.2|HBA_HUMAN", "P69905", "P69905.2",
              "sp|P69905.2|HBA_HUMAN", "Hemoglobin subunit alpha", "Hemoglobin subunit alpha",
              "9606", "9606");
    check_ids(db, "gi|4504349|ref|NP_000510.1|", "gi|4504349|ref|NP_000510.1|", "NP_000510",
              "NP_000510.1", "gi|4504349|ref|NP_000510.1|", "a gi and a refseq id",
              "a gi and a refseq id", "9606", "9606");
    check_ids(db, "gnl|mydb|ecoli1", "gnl|mydb|ecoli1", "mydb:ecoli1", "mydb:ecoli1",
              "gnl|mydb|ecoli1", "general id, E. coli", "general id, E. coli", "562", "562");
    check_ids(db, "pdb|4HHB|A", "pdb|4HHB|A", "4HHB_A", "4HHB_A", "pdb|4HHB|A",
              "a pdb chain, a taxon missing from taxdb", "a pdb chain, a taxon missing from taxdb",
              "7227", "7227");
    check_ids(db, "sp|P12345|", "sp|P12345|", "P12345", "P12345", "sp|P12345|", "a bare accession",
              "a bare accession", "10239", "10239");
    check_ids(db, "tr|A0A0B4J2F0|A0A0B4J2F0_HUMAN", "tr|A0A0B4J2F0|A0A0B4J2F0_HUMAN",
              "A0A0B4J2F0", "A0A0B4J2F0", "tr|A0A0B4J2F0|A0A0B4J2F0_HUMAN",
              "unreviewed, no taxon in the map", "unreviewed, no taxon in the map", "N/A", "0");
    /* several deflines: taxids sorted, each once; staxid the first defline's */
    check_ids(db, "ref|XP_000001.1|", "ref|XP_000001.1|", "XP_000001", "XP_000001.1",
              "ref|XP_000001.1|;emb|CAB00002.1|;third", "title one",
              "title one<>title two<>title three", "10090", "9606;10090");
    check_ids(db, "gb|AAA00019.1|", "gb|AAA00019.1|", "AAA00019", "AAA00019.1",
              "gb|AAA00019.1|;ref|XP_000017.1|;emb|CAB00018.1|", "t3", "t3<>t1<>t2", "10090",
              "0;9606;10090");

    /* a part of it knows the whole database's columns */
    CHECK_EQ_INT(swgpu_db_part(db, 0.5, 1.0, &part), SWGPU_OK);
    if (part) {
        swgpu_seq_ids_t a, b;
        long i = find_id(db, "ref|XP_000003.1|");
        CHECK(i >= 0 && swgpu_db_ids(part, (size_t)i, &a) == 0 &&
                  swgpu_db_ids(db, (size_t)i, &b) == 0 && !strcmp(a.taxids, b.taxids) &&
                  !strcmp(a.taxids, "562;2157;9606;10090") && !strcmp(a.acc, "XP_000003"),
              "a part's columns");
        swgpu_db_destroy(part);
    }
    CHECK_EQ_INT(swgpu_db_ids(db, swgpu_db_size(db), &(swgpu_seq_ids_t){0}), SWGPU_EINVAL);

    /* makedb files keep ids and descriptions only: FASTA's columns */
    const char *tmp = "test_taxdb.tmp.swdb";
    CHECK_EQ_INT(swgpu_db_write(db, tmp), SWGPU_OK);
    CHECK_EQ_INT(swgpu_db_open(tmp, SWGPU_AUTO, &back, NULL), SWGPU_OK);
    if (back) {
        check_ids(back, "ref|XP_000001.1|", "ref|XP_000001.1|", "ref|XP_000001.1|",
                  "ref|XP_000001.1|", "ref|XP_000001.1|", NULL, NULL, "N/A", "N/A");
        swgpu_seq_t s, t;
        long i = find_id(back, "ref|XP_000001.1|"), j = find_id(db, "ref|XP_000001.1|");
        CHECK(i == j && swgpu_db_get(back, (size_t)i, &s) == 0 &&
                  swgpu_db_get(db, (size_t)j, &t) == 0 && !strcmp(s.desc, t.desc),
              "makedb keeps the description");
        swgpu_db_destroy(back);
    }
    unlink(tmp);

    /* the same sequences from FASTA: no taxonomy, the id everywhere */
    CHECK_EQ_INT(swgpu_db_open(tl_path(B, "ids_q.fa"), SWGPU_AUTO, &fa, NULL), SWGPU_OK);
    if (fa)
        check_ids(fa, "query1", "query1", "query1", "query1", "query1", NULL, NULL, "N/A", "N/A");
    swgpu_db_destroy(fa);
    swgpu_db_destroy(db);
}

/* a BLAST database read as a set, a record added by hand: that one has a
 * FASTA record's columns, the others keep theirs */
static void test_added_record(void)
{
    swgpu_seqset_t *s = NULL;
    swgpu_db_t *db = NULL;
    CHECK_EQ_INT(swgpu_seqset_read(tl_path(B, "seqids_v5s"), SWGPU_AUTO, &s, NULL), SWGPU_OK);
    if (!s)
        return;
    CHECK_EQ_INT(swgpu_seqset_add(s, "mine", "added", "MKV", 3), SWGPU_OK);
    CHECK_EQ_INT(swgpu_db_from_seqset(s, &db), SWGPU_OK);
    if (db) {
        check_ids(db, "mine", "mine", "mine", "mine", "mine", NULL, NULL, "N/A", "N/A");
        /* Seq-id ranks: the gnl loses to the ref, the gi goes first */
        check_ids(db, "gnl|db|t1|ref|NP_5.1|", "ref|NP_5.1|", "NP_5", "NP_5.1", "ref|NP_5.1|",
                  "gnl then ref", "gnl then ref", "N/A", "0");
        check_ids(db, "pdb|3ABC|C|gi|77", "gi|77|pdb|3ABC|C", "3ABC_C", "3ABC_C",
                  "gi|77|pdb|3ABC|C", "pdb then gi", "pdb then gi", "N/A", "0");
        check_ids(db, "gi|81|lcl|x3", "gi|81|x3", "x3", "x3", "gi|81|x3", "gi then lcl",
                  "gi then lcl", "N/A", "0");
        check_ids(db, "pir||S1|prf||P2", "pir||S1", "S1", "S1", "pir||S1", "pir then prf",
                  "pir then prf", "N/A", "0");
        check_ids(db, "gpp|GP3.1||pat|US|7|8", "gpp|GP3.1|", "GP3", "GP3.1", "gpp|GP3.1|",
                  "gpp then pat", "gpp then pat", "N/A", "0");
    }
    swgpu_db_destroy(db);
    swgpu_seqset_destroy(s);
}

static void check_taxon(const swgpu_taxdb_t *t, int64_t taxid, const char *sci, const char *com,
                        const char *blast, const char *king)
{
    swgpu_taxon_t x;
    int r = swgpu_taxdb_lookup(t, taxid, &x);
    CHECK(r == 1, "taxid %lld found", (long long)taxid);
    if (r != 1)
        return;
    CHECK(x.sciname_len == strlen(sci) && !memcmp(x.sciname, sci, x.sciname_len) &&
              x.comname_len == strlen(com) && !memcmp(x.comname, com, x.comname_len) &&
              x.blastname_len == strlen(blast) && !memcmp(x.blastname, blast, x.blastname_len) &&
              x.kingdom_len == strlen(king) && !memcmp(x.kingdom, king, x.kingdom_len),
          "taxid %lld: %.*s / %.*s / %.*s / %.*s", (long long)taxid, (int)x.sciname_len,
          x.sciname, (int)x.comname_len, x.comname, (int)x.blastname_len, x.blastname,
          (int)x.kingdom_len, x.kingdom);
}

static void test_lookup(void)
{
    swgpu_taxdb_t *t = NULL;
    swgpu_taxon_t x;
    CHECK_EQ_INT(swgpu_taxdb_open(TAXDIR, &t), SWGPU_OK);
    CHECK(t != NULL, "taxdb opened");
    check_taxon(t, 562, "Escherichia coli", "E. coli", "enterobacteria", "Bacteria"); /* first */
    check_taxon(t, 9606, "Homo sapiens", "human", "primates", "Eukaryota");
    check_taxon(t, 10239, "Viruses", "Viruses", "viruses", "Viruses"); /* last */
    CHECK_EQ_INT(swgpu_taxdb_lookup(t, 7227, &x), 0);
    CHECK_EQ_INT(swgpu_taxdb_lookup(t, 0, &x), 0);
    CHECK_EQ_INT(swgpu_taxdb_lookup(t, 1, &x), 0);
    CHECK_EQ_INT(swgpu_taxdb_lookup(t, 99999, &x), 0);
    CHECK_EQ_INT(swgpu_taxdb_lookup(t, -5, &x), 0);
    CHECK_EQ_INT(swgpu_taxdb_lookup(NULL, 9606, &x), 0);
    swgpu_taxdb_destroy(t);
}

/* where taxdb is found: dir, else the current directory, else $BLASTDB */
static void test_search_path(void)
{
    swgpu_taxdb_t *t = NULL;
    char *old = getenv("BLASTDB") ? strdup(getenv("BLASTDB")) : NULL;
    char want[4096];
    unsetenv("BLASTDB");
    CHECK_EQ_INT(swgpu_taxdb_open(NULL, &t), SWGPU_OK); /* the repository has none */
    CHECK(t == NULL, "no taxdb in the current directory");
    swgpu_taxdb_destroy(t);
    t = NULL;
    CHECK_EQ_INT(swgpu_taxdb_open(B, &t), SWGPU_OK); /* a directory without one */
    CHECK(t == NULL, "no taxdb in %s", B);
    swgpu_taxdb_destroy(t);
    t = NULL;
    snprintf(want, sizeof want, "/nonexistent::%s", TAXDIR);
    setenv("BLASTDB", want, 1);
    CHECK_EQ_INT(swgpu_taxdb_open(NULL, &t), SWGPU_OK);
    CHECK(t != NULL, "taxdb found through $BLASTDB");
    if (t)
        check_taxon(t, 10090, "Mus musculus", "house mouse", "rodents", "Eukaryota");
    swgpu_taxdb_destroy(t);
    if (old)
        setenv("BLASTDB", old, 1);
    else
        unsetenv("BLASTDB");
    free(old);
}

static void put32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24), p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8), p[3] = (unsigned char)v;
}

/* a taxdb of n taxa in dir: ids[k], offsets off[k] into dat; then open */
static int try_taxdb(const char *dir, uint32_t magic, uint32_t count, const uint32_t *ids,
                     const uint32_t *off, int n, const char *dat, swgpu_taxdb_t **t)
{
    unsigned char idx[24 + 8 * 8] = {0};
    put32(idx, magic);
    put32(idx + 4, count);
    for (int k = 0; k < n; k++) {
        put32(idx + 24 + 8 * k, ids[k]);
        put32(idx + 28 + 8 * k, off[k]);
    }
    if (tl_spit(tl_path(dir, "taxdb.bti"), idx, 24 + 8 * (size_t)n) ||
        (dat && tl_spit(tl_path(dir, "taxdb.btd"), dat, strlen(dat))))
        return -100;
    if (!dat)
        unlink(tl_path(dir, "taxdb.btd"));
    *t = NULL;
    return swgpu_taxdb_open(dir, t);
}

static void test_damaged(void)
{
    char dir[] = "test_taxdb.XXXXXX";
    swgpu_taxdb_t *t = NULL;
    swgpu_taxon_t x;
    const char *dat = "A b\tc\td\tE"
                      "F\tg\th\t"         /* an empty kingdom */
                      "I\tj";              /* fewer than three tabs */
    uint32_t ids[3] = {5, 7, 9}, off[3] = {0, 9, 15};
    if (!mkdtemp(dir)) {
        CHECK(0, "mkdtemp");
        return;
    }
    CHECK_EQ_INT(try_taxdb(dir, 0x8739, 3, ids, off, 3, dat, &t), SWGPU_OK);
    CHECK(t && swgpu_taxdb_lookup(t, 5, &x) == 1 && x.sciname_len == 3 &&
              !memcmp(x.sciname, "A b", 3) && x.kingdom_len == 1 && x.kingdom[0] == 'E',
          "a record of four fields");
    CHECK(swgpu_taxdb_lookup(t, 7, &x) == 0, "an empty kingdom: not used");
    CHECK(swgpu_taxdb_lookup(t, 9, &x) == 0, "two fields: not used");
    swgpu_taxdb_destroy(t);

    CHECK_EQ_INT(try_taxdb(dir, 0x8740, 3, ids, off, 3, dat, &t), SWGPU_EDB);
    CHECK(strstr(swgpu_last_error(), "taxdb.bti: not a taxdb index (bad magic)") != NULL, "%s",
          swgpu_last_error());
    CHECK_EQ_INT(try_taxdb(dir, 0x8739, 4, ids, off, 3, dat, &t), SWGPU_EDB);
    CHECK(strstr(swgpu_last_error(), "says 4 taxa, has room for 3") != NULL, "%s",
          swgpu_last_error());
    uint32_t unsorted[3] = {5, 9, 7};
    CHECK_EQ_INT(try_taxdb(dir, 0x8739, 3, unsorted, off, 3, dat, &t), SWGPU_EDB);
    CHECK(strstr(swgpu_last_error(), "taxid 7 (entry 3) not above the one before") != NULL, "%s",
          swgpu_last_error());
    uint32_t past[3] = {0, 9, 99}, back[3] = {0, 15, 9};
    CHECK_EQ_INT(try_taxdb(dir, 0x8739, 3, ids, past, 3, dat, &t), SWGPU_EDB);
    CHECK(strstr(swgpu_last_error(), "taxid 9: offset 99 out of order or past the end") != NULL,
          "%s", swgpu_last_error());
    CHECK_EQ_INT(try_taxdb(dir, 0x8739, 3, ids, back, 3, dat, &t), SWGPU_EDB);
    CHECK(strstr(swgpu_last_error(), "taxid 9: offset 9 out of order") != NULL, "%s",
          swgpu_last_error());
    CHECK_EQ_INT(try_taxdb(dir, 0x8739, 3, ids, off, 3, NULL, &t), SWGPU_EDB);
    CHECK(strstr(swgpu_last_error(), "taxdb.bti: no ") && strstr(swgpu_last_error(), "taxdb.btd beside it"),
          "%s", swgpu_last_error());
    CHECK(t == NULL, "no handle after an error");
    /* no taxa, an empty data file: found, every lookup fails */
    CHECK_EQ_INT(try_taxdb(dir, 0x8739, 0, ids, off, 0, "", &t), SWGPU_OK);
    CHECK(t && swgpu_taxdb_lookup(t, 5, &x) == 0, "an empty taxdb");
    swgpu_taxdb_destroy(t);
    unlink(tl_path(dir, "taxdb.bti"));
    unlink(tl_path(dir, "taxdb.btd"));
    rmdir(dir);
}

/* the writer: staxids from the deflines, names from the taxdb it was given */
static void test_writer(void)
{
    swgpu_db_t *db = NULL;
    swgpu_seqset_t *q = NULL;
    swgpu_outfmt_t *f = NULL;
    CHECK_EQ_INT(swgpu_db_open(tl_path(B, "tax_v5s"), SWGPU_AUTO, &db, NULL), SWGPU_OK);
    CHECK_EQ_INT(swgpu_seqset_read(tl_path(B, "ids_q.fa"), SWGPU_AUTO, &q, NULL), SWGPU_OK);
    if (!db || !q)
        goto done;
    swgpu_hit_t h[2] = {{.target = (size_t)find_id(db, "ref|XP_000003.1|"), .score = 5},
                        {.target = (size_t)find_id(db, "pdb|4HHB|A"), .score = 4}};
    swgpu_query_result_t qr = {.query = 0, .n_hits = 2, .hits = h};
    swgpu_search_result_t r = {.n_queries = 1, .q = &qr};
    const char *spec = "6 sseqid staxid ssciname sskingdom staxids sscinames sblastnames "
                       "sskingdoms";
    const char *with =
        "ref|XP_000003.1|\t2157\tArchaea\tArchaea\t562;2157;9606;10090\t"
        "Escherichia coli;Archaea;Homo sapiens;Mus musculus\t"
        "archaea;enterobacteria;primates;rodents\tArchaea;Bacteria;Eukaryota\n"
        "pdb|4HHB|A\t7227\tN/A\tN/A\t7227\tN/A\tN/A\tN/A\n";
    const char *without =
        "ref|XP_000003.1|\t2157\tN/A\tN/A\t562;2157;9606;10090\tN/A;N/A;N/A;N/A\tN/A\tN/A\n"
        "pdb|4HHB|A\t7227\tN/A\tN/A\t7227\tN/A\tN/A\tN/A\n";
    for (int k = 0; k < 2; k++) {
        char *buf = NULL;
        size_t len = 0;
        FILE *fp = open_memstream(&buf, &len);
        CHECK_EQ_INT(swgpu_outfmt_parse(spec, &f), SWGPU_OK);
        CHECK_EQ_INT(swgpu_outfmt_set_taxdb(f, k ? B : TAXDIR), SWGPU_OK);
        CHECK_EQ_INT(swgpu_outfmt_write(f, fp, &r, q, db, NULL, NULL), SWGPU_OK);
        fclose(fp);
        CHECK(buf && !strcmp(buf, k ? without : with), "taxonomy columns (%s):\n%s",
              k ? "no taxdb" : "taxdb", buf ? buf : "(null)");
        free(buf);
        swgpu_outfmt_destroy(f);
        f = NULL;
    }
done:
    swgpu_seqset_destroy(q);
    swgpu_db_destroy(db);
}

int main(void)
{
    static char b[4096], tx[4096];
    snprintf(b, sizeof b, "%s/blastdb", tl_datadir());
    snprintf(tx, sizeof tx, "%s/taxdb", tl_datadir());
    B = b;
    TAXDIR = tx;
    test_db_ids();
    test_added_record();
    test_lookup();
    test_search_path();
    test_damaged();
    test_writer();
    return tap_done();
}
