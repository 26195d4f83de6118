/*
 * test_db.c - databases: the sort order (length, ties in database order),
 * makedb write/open round trips, and every kind of damaged file refused
 * with SWGPU_EDB.
 */
#define _POSIX_C_SOURCE 200809L
#include "tap.h"
#include "testlib.h"
#include "io/io.h"

#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <dirent.h>
#include <unistd.h>
#include <zlib.h>

static const char *datadir;
static char tmpdir[256];

static const char *data(const char *name)
{
    return tl_path(datadir, name);
}

static const char *tmp(const char *name)
{
    return tl_path(tmpdir, name);
}

/* db holds exactly the sequences of set, in the same database order, and
 * its sorted arrays are consistent */
static int same_as_set(const swgpu_db_t *db, const swgpu_seqset_t *set)
{
    if (swgpu_db_size(db) != swgpu_seqset_size(set)) return 0;
    if (swgpu_db_residues(db) != swgpu_seqset_residues(set)) return 0;
    if (swgpu_db_alphabet(db) != swgpu_seqset_alphabet(set)) return 0;
    uint64_t maxl = 0;
    for (size_t i = 0; i < swgpu_seqset_size(set); i++) {
        swgpu_seq_t a, b;
        if (swgpu_seqset_get(set, i, &a) || swgpu_db_get(db, i, &b)) return 0;
        if (a.len != b.len || memcmp(a.res, b.res, a.len) || strcmp(a.id, b.id) || strcmp(a.desc, b.desc)) return 0;
        if (a.len > maxl) maxl = a.len;
    }
    if (swgpu_db_max_len(db) != maxl) return 0;
    for (uint64_t k = 0; k < db->n; k++) {
        if (db->rank[db->orig[k]] != k) return 0;
        uint64_t len = db->off[k + 1] - db->off[k];
        if (k) {
            uint64_t prev = db->off[k] - db->off[k - 1];
            if (len < prev || (len == prev && db->orig[k] < db->orig[k - 1])) return 0;
        }
    }
    for (int i = 0; i < 64; i++)
        if (db->res[db->total_res + i]) return 0; /* the zero padding after the residues */
    return 1;
}

static void test_sort_ties(void)
{
    static const char *seqs[] = {"MKVLW", "ACD", "WWWWW", "G", "EEE", "KKKKK", "", "PP"};
    swgpu_seqset_t *set = NULL;
    swgpu_seqset_create(SWGPU_PROTEIN, &set);
    for (int i = 0; i < 8; i++) {
        char id[8];
        snprintf(id, sizeof id, "s%d", i);
        swgpu_seqset_add(set, id, i == 2 ? "has a description" : "", seqs[i], strlen(seqs[i]));
    }
    swgpu_db_t *db = NULL;
    CHECK_EQ_INT(swgpu_db_from_seqset(set, &db), 0);
    if (!db) return;
    static const uint32_t want[] = {6, 3, 7, 1, 4, 0, 2, 5};
    int ok = 1;
    for (int k = 0; k < 8; k++) ok &= db->orig[k] == want[k];
    CHECK(ok, "sorted by length, ties in database order");
    CHECK_EQ_INT(db->off[8], 24);
    CHECK_EQ_INT(db->off[1], 0); /* the empty sequence first */
    CHECK_EQ_INT(db->off[2], 1);
    CHECK_EQ_INT(db->rank[5], 7);
    CHECK_EQ_INT(swgpu_db_max_len(db), 5);
    CHECK(same_as_set(db, set), "db equals set");
    swgpu_seq_t q;
    swgpu_db_get(db, 2, &q);
    CHECK_EQ_STR(q.id, "s2");
    CHECK_EQ_STR(q.desc, "has a description");
    CHECK_EQ_INT(q.len, 5);
    CHECK_EQ_INT(q.res[0], swgpu_encode(SWGPU_PROTEIN, 'W'));
    CHECK_EQ_INT(swgpu_db_get(db, 8, &q), SWGPU_EINVAL);

    /* write, open (mmap), compare */
    CHECK_EQ_INT(swgpu_db_write(db, tmp("ties.db")), 0);
    {
        int left = 0;
        DIR *dir = opendir(tmp(""));
        for (struct dirent *e; dir && (e = readdir(dir));)
            left += !strncmp(e->d_name, "ties.db.tmp.", 12);
        if (dir)
            closedir(dir);
        CHECK(access(tmp("ties.db"), R_OK) == 0 && dir && left == 0,
              "renamed, no temporary left (%d)", left);
    }
    swgpu_db_t *m = NULL;
    swgpu_read_info_t info;
    CHECK_EQ_INT(swgpu_db_open(tmp("ties.db"), SWGPU_AUTO, &m, &info), 0);
    if (m) {
        CHECK(m->map != NULL, "opened by mmap");
        CHECK(same_as_set(m, set), "mapped db equals set");
        ok = 1;
        for (int k = 0; k < 8; k++) ok &= m->orig[k] == want[k];
        CHECK(ok, "mapped order");
        CHECK_EQ_INT(info.n_records, 8);
        CHECK_EQ_INT(info.n_residues, 24);
        CHECK_EQ_INT(info.max_len, 5);
        CHECK_EQ_INT(((uintptr_t)m->off) % 64, 0);
        CHECK_EQ_INT(((uintptr_t)m->res) % 64, 0);
    }
    /* a protein database asked for as DNA */
    swgpu_db_t *x = NULL;
    CHECK_EQ_INT(swgpu_db_open(tmp("ties.db"), SWGPU_DNA, &x, NULL), SWGPU_EALPHABET);
    CHECK(x == NULL, "NULL on failure");
    swgpu_db_destroy(m);
    swgpu_db_destroy(db);
    swgpu_seqset_destroy(set);
}

/* a larger seeded random database through the file format and back */
static void test_roundtrip_random(void)
{
    uint64_t seed = 2024;
    swgpu_seqset_t *set = NULL;
    swgpu_seqset_create(SWGPU_DNA, &set);
    char buf[700], id[32], desc[64];
    for (int i = 0; i < 5000; i++) {
        size_t len = 1 + tap_rand(&seed) % 40 + (tap_rand(&seed) % 10 == 0 ? tap_rand(&seed) % 600 : 0);
        for (size_t j = 0; j < len; j++) buf[j] = "ACGTNRYKMSWBDHV"[tap_rand(&seed) % 15];
        snprintf(id, sizeof id, "seq%d", i);
        snprintf(desc, sizeof desc, i % 3 ? "random sequence %d" : "", i);
        swgpu_seqset_add(set, id, desc, buf, len);
    }
    swgpu_db_t *db = NULL, *m = NULL;
    CHECK_EQ_INT(swgpu_db_from_seqset(set, &db), 0);
    CHECK(db && same_as_set(db, set), "random db equals set");
    CHECK_EQ_INT(swgpu_db_write(db, tmp("rand.db")), 0);
    CHECK_EQ_INT(swgpu_db_open(tmp("rand.db"), SWGPU_DNA, &m, NULL), 0);
    CHECK(m && same_as_set(m, set), "mapped random db equals set");
    if (m && db) {
        CHECK(!memcmp(m->off, db->off, (db->n + 1) * 8) && !memcmp(m->res, db->res, db->total_res) &&
                  !memcmp(m->orig, db->orig, db->n * 4) && !memcmp(m->rank, db->rank, db->n * 4),
              "sorted arrays identical");
        CHECK_EQ_INT(m->alphabet, SWGPU_DNA);
    }
    /* writing a mapped database gives the same bytes */
    size_t n1, n2;
    CHECK_EQ_INT(swgpu_db_write(m, tmp("rand2.db")), 0);
    unsigned char *a = tl_slurp(tmp("rand.db"), &n1), *b = tl_slurp(tmp("rand2.db"), &n2);
    CHECK(a && b && n1 == n2 && !memcmp(a, b, n1), "rewrite is byte-identical");
    free(a);
    free(b);
    /* ... but never over the file it was read from */
    CHECK_EQ_INT(swgpu_db_write(m, tmp("rand.db")), SWGPU_EINVAL);
    CHECK(strstr(swgpu_last_error(), "refusing to replace") != NULL, "message: %s",
          swgpu_last_error());
    a = tl_slurp(tmp("rand.db"), &n1);
    b = tl_slurp(tmp("rand2.db"), &n2);
    CHECK(a && b && n1 == n2 && !memcmp(a, b, n1), "the source is unchanged");
    free(a);
    free(b);
    swgpu_db_destroy(m);
    swgpu_db_destroy(db);
    swgpu_seqset_destroy(set);
}

static void expect_db_fail(const char *path, int status, const char *want)
{
    swgpu_db_t *db = (swgpu_db_t *)1;
    int rc = swgpu_db_open(path, SWGPU_AUTO, &db, NULL);
    CHECK(rc == status, "%s: status %d (%s), expected %d", path, rc, swgpu_last_error(), status);
    CHECK(db == NULL, "%s: NULL on failure", path);
    CHECK(strstr(swgpu_last_error(), want) && strstr(swgpu_last_error(), path), "%s: message \"%s\" lacks \"%s\"",
          path, swgpu_last_error(), want);
}

/* recompute the header checksum after editing a header field */
static void fix_header_crc(unsigned char *p)
{
    tl_put32(p + 152, (uint32_t)crc32(0, p, 152));
}

static void test_damaged(void)
{
    swgpu_seqset_t *set = NULL;
    swgpu_db_t *db = NULL;
    int rc = swgpu_seqset_read(data("multi.fa"), SWGPU_AUTO, &set, NULL);
    CHECK_EQ_INT(rc, 0);
    if (rc) return;
    swgpu_db_from_seqset(set, &db);
    swgpu_db_write(db, tmp("good.db"));
    swgpu_db_destroy(db);
    swgpu_seqset_destroy(set);
    size_t n;
    unsigned char *good = tl_slurp(tmp("good.db"), &n), *p = malloc(n + 64);
    CHECK(good && n > 256, "good.db written (%zu bytes)", n);
    if (!good || n <= 256) return;

    /* truncated anywhere: in the header, in the payload, one byte short */
    static const size_t cut[] = {0, 7, 8, 100, 159, 200, 0};
    for (int i = 0; i < 7; i++) {
        size_t len = i == 6 ? n - 1 : cut[i];
        if (i == 5) len = n / 2;
        tl_spit(tmp("cut.db"), good, len);
        if (len < 8) { /* too short to carry the magic: read as (empty / non-FASTA) text */
            db = (swgpu_db_t *)1;
            rc = swgpu_db_open(tmp("cut.db"), SWGPU_AUTO, &db, NULL);
            CHECK(rc == (len ? SWGPU_EFORMAT : SWGPU_EEMPTY), "cut at %zu: %d (%s)", len, rc, swgpu_last_error());
            continue;
        }
        expect_db_fail(tmp("cut.db"), SWGPU_EDB, "truncated");
    }
    /* data appended */
    memcpy(p, good, n);
    memset(p + n, 0, 64);
    tl_spit(tmp("long.db"), p, n + 64);
    expect_db_fail(tmp("long.db"), SWGPU_EDB, "unexpected data after the end");
    /* foreign binary file (bad magic) */
    memcpy(p, good, n);
    p[0] = 'X';
    tl_spit(tmp("foreign.db"), p, n);
    expect_db_fail(tmp("foreign.db"), SWGPU_EDB, "neither a swgpu database (bad magic) nor FASTA/FASTQ");
    /* a newer format version */
    memcpy(p, good, n);
    tl_put32(p + 8, 2);
    tl_spit(tmp("v2.db"), p, n);
    expect_db_fail(tmp("v2.db"), SWGPU_EDB, "unsupported format version 2");
    /* a header field damaged */
    memcpy(p, good, n);
    p[20] ^= 1;
    tl_spit(tmp("hdr.db"), p, n);
    expect_db_fail(tmp("hdr.db"), SWGPU_EDB, "header checksum mismatch");
    /* a payload byte damaged (a residue) */
    memcpy(p, good, n);
    p[n - 70] ^= 0x10;
    tl_spit(tmp("crc.db"), p, n);
    expect_db_fail(tmp("crc.db"), SWGPU_EDB, "checksum mismatch (corrupt file)");
    /* inconsistent offsets with a valid header checksum */
    memcpy(p, good, n);
    p[48 + 16 * 5] += 8; /* res section no longer aligned */
    fix_header_crc(p);
    tl_spit(tmp("off.db"), p, n);
    expect_db_fail(tmp("off.db"), SWGPU_EDB, "inconsistent offsets (section res");
    memcpy(p, good, n);
    p[56] += 8; /* size of the off section */
    fix_header_crc(p);
    tl_spit(tmp("off2.db"), p, n);
    expect_db_fail(tmp("off2.db"), SWGPU_EDB, "inconsistent offsets (section off has");
    memcpy(p, good, n);
    p[48 + 16 * 4] = p[48 + 16 * 3]; /* names placed over rank */
    fix_header_crc(p);
    tl_spit(tmp("off3.db"), p, n);
    expect_db_fail(tmp("off3.db"), SWGPU_EDB, "overlap");
    /* a residue code out of range with both checksums made valid: the last
     * residue, then the first */
    uint64_t res_off = 0, nres = 0;
    for (int i = 0; i < 8; i++) {
        res_off |= (uint64_t)good[48 + 16 * 5 + i] << (8 * i);
        nres |= (uint64_t)good[56 + 16 * 5 + i] << (8 * i);
    }
    CHECK(nres > 1 && res_off + nres < n, "the residues of good.db (%llu at %llu)",
          (unsigned long long)nres, (unsigned long long)res_off);
    for (int k = 0; k < 2 && nres > 1 && res_off + nres < n; k++) {
        memcpy(p, good, n);
        p[res_off + (k ? 0 : nres - 1)] = (unsigned char)swgpu_alphabet_size(SWGPU_PROTEIN);
        tl_fix_crcs(p, n);
        tl_spit(tmp("code.db"), p, n);
        expect_db_fail(tmp("code.db"), SWGPU_EDB, "residue code out of range for the protein alphabet");
    }
    free(p);
    free(good);
}

/* swgpu__crc_parallel: zlib's CRC of the whole buffer on any number of
 * threads, and a residue code >= lim found wherever it is in [res, res +
 * nres) (the 64-byte and 256 kB blocks' edges, the threads' pieces' edges)
 * and nowhere else */
static void test_crc_codes(void)
{
    enum { LIM = 25 };
    const size_t len = (9u << 20) + 37; /* over 8 MB: cut into pieces */
    unsigned char *b = malloc(len);
    CHECK(b != NULL, "%zu bytes", len);
    if (!b) return;
    for (size_t i = 0; i < len; i++)
        b[i] = (unsigned char)((i * 7 + i / 13) % LIM);
    const uint32_t want = (uint32_t)crc32(crc32(0, Z_NULL, 0), b, (uInt)len);
    static const int threads[] = {1, 3, 4};
    uint8_t bad = 9;
    for (int t = 0; t < 3; t++) {
        CHECK_EQ_INT(swgpu__crc_parallel(b, len, b, len, LIM, &bad, threads[t]), want);
        CHECK_EQ_INT(bad, 0);
        CHECK_EQ_INT(swgpu__crc_parallel(b, len, NULL, 0, 0, &bad, threads[t]), want);
        CHECK_EQ_INT(bad, 0);
    }
    const size_t at[] = {0, 63, 64, 65, (256u << 10) - 1, 256u << 10, len / 3, len / 3 + 1,
                         len / 4 - 1, len - 64, len - 1};
    for (size_t i = 0; i < sizeof at / sizeof *at; i++) {
        const unsigned char keep = b[at[i]];
        for (int t = 0; t < 3; t++) {
            b[at[i]] = LIM - 1; /* the largest code allowed */
            swgpu__crc_parallel(b, len, b, len, LIM, &bad, threads[t]);
            CHECK(bad == 0, "code %d at %zu, %d threads: allowed", LIM - 1, at[i], threads[t]);
            b[at[i]] = LIM;
            swgpu__crc_parallel(b, len, b, len, LIM, &bad, threads[t]);
            CHECK(bad == 1, "code %d at %zu, %d threads: found", LIM, at[i], threads[t]);
            /* only the codes of [100, len - 100) are checked */
            swgpu__crc_parallel(b, len, b + 100, len - 200, LIM, &bad, threads[t]);
            CHECK(bad == (at[i] >= 100 && at[i] < len - 100), "code %d at %zu, %d threads, "
                  "codes [100, %zu) checked: %d", LIM, at[i], threads[t], len - 100, bad);
        }
        b[at[i]] = keep;
    }
    free(b);
}

/* the one-pass check of a makedb file's index (what db.c did before its
 * checks ran in blocks): the message of the first problem, or "" */
static void index_ref(char *msg, size_t cap, uint64_t n, uint64_t total, uint64_t max_len,
                      const uint64_t *off, const uint32_t *orig, const uint32_t *rank,
                      const uint64_t *name_off, const char *names, uint64_t nsize)
{
    *msg = 0;
    if (off[0] != 0 || off[n] != total) {
        snprintf(msg, cap, "database P: inconsistent offsets (residue offsets end at %llu, "
                 "expected %llu)", (unsigned long long)off[n], (unsigned long long)total);
        return;
    }
    for (uint64_t k = 0; k < n; k++) {
        const char *w = NULL;
        if (off[k + 1] < off[k] || (k && off[k + 1] - off[k] < off[k] - off[k - 1]))
            w = "database P: sequence %llu out of length order";
        else if (orig[k] >= n || rank[orig[k]] != k)
            w = "database P: invalid order permutation at %llu";
        else if (k && off[k + 1] - off[k] == off[k] - off[k - 1] && orig[k] < orig[k - 1])
            w = "database P: sequences of equal length out of database order at %llu";
        if (w) {
            snprintf(msg, cap, w, (unsigned long long)k);
            return;
        }
    }
    if (n && off[n] - off[n - 1] != max_len) {
        snprintf(msg, cap, "database P: inconsistent longest sequence (%llu)",
                 (unsigned long long)max_len);
        return;
    }
    uint64_t pos = 0;
    for (uint64_t i = 0; i < n; i++) {
        if (name_off[i] != pos) {
            snprintf(msg, cap, "database P: inconsistent offsets (name of sequence %llu)",
                     (unsigned long long)i);
            return;
        }
        for (int part = 0; part < 2; part++) {
            const char *p = pos < nsize ? memchr(names + pos, 0, nsize - pos) : NULL;
            if (!p) {
                snprintf(msg, cap, "database P: names section ends inside sequence %llu",
                         (unsigned long long)i);
                return;
            }
            pos = (uint64_t)(p - names) + 1;
        }
    }
}

/*
 * swgpu__db_check_index in blocks on several threads against the one pass:
 * a valid index of 300 sequences (lengths with ties, names of varied
 * lengths) passes for every block size and thread count; then 600 damages
 * (the residues' end, the longest, the names' end, the first and last name
 * offsets; then at random an offset, an order or rank entry, a name
 * offset, a names byte made 'x' or 0, two at once) give exactly the one
 * pass's status and message, for blocks of 1, 7, 64 and 300 sequences on 1
 * and 3 threads.
 */
static void test_check_index(void)
{
    enum { N = 300 };
    uint64_t off[N + 1], name_off[N], seed = 77;
    uint32_t orig[N], rank[N];
    char names[N * 24];
    uint64_t nsize = 0;
    off[0] = 0;
    for (uint64_t k = 0; k < N; k++) {
        off[k + 1] = off[k] + k / 7; /* runs of 7 equal lengths */
        orig[k] = (uint32_t)k;
        rank[k] = (uint32_t)k;
        name_off[k] = nsize;
        nsize += (uint64_t)snprintf(names + nsize, 24, "s%llu", (unsigned long long)k) + 1;
        nsize += (uint64_t)snprintf(names + nsize, 24, "%.*s", (int)(k % 5), "desc") + 1;
    }
    const uint64_t total = off[N], max_len = off[N] - off[N - 1];
    static const uint64_t blks[] = {1, 7, 64, 300};
    static const int threads[] = {1, 3};
    for (int b = 0; b < 4; b++)
        for (int t = 0; t < 2; t++)
            CHECK(swgpu__db_check_index("P", N, total, max_len, off, orig, rank, name_off, names,
                                        nsize, blks[b], threads[t]) == SWGPU_OK,
                  "a valid index, blocks of %llu, %d threads: %s", (unsigned long long)blks[b],
                  threads[t], swgpu_last_error());
    int agree = 0, failed = 0;
    for (int trial = 0; trial < 600; trial++) {
        uint64_t o2[N + 1], n2[N];
        uint32_t g2[N], r2[N];
        char s2[sizeof names];
        memcpy(o2, off, sizeof off);
        memcpy(n2, name_off, sizeof name_off);
        memcpy(g2, orig, sizeof orig);
        memcpy(r2, rank, sizeof rank);
        memcpy(s2, names, sizeof names);
        uint64_t ml = max_len;
        switch (trial) { /* the rarer problems first */
        case 0: o2[N] += 1; break;                  /* the residues' end */
        case 1: ml += 1; break;                     /* the longest */
        case 2: s2[nsize - 1] = 'x'; break;         /* the names' end */
        case 3: n2[N - 1] = nsize; break;
        case 4: n2[0] = 1; break;
        }
        for (int d = 0; trial >= 5 && d < 1 + trial % 2; d++) {
            const uint64_t i = tap_rand(&seed) % N, j = tap_rand(&seed) % N;
            switch (tap_rand(&seed) % 6) {
            case 0: o2[1 + i] += (tap_rand(&seed) % 3) - 1; break;
            case 1: g2[i] = g2[j]; break;
            case 2: g2[i] = r2[i] == i ? (uint32_t)(N + i % 2) : g2[i]; break;
            case 3: { uint32_t x = g2[i]; g2[i] = g2[j]; g2[j] = x; x = r2[g2[i]];
                      r2[g2[i]] = r2[g2[j]]; r2[g2[j]] = x; break; }
            case 4: n2[i] += (tap_rand(&seed) % 5) - 2; break;
            default: s2[tap_rand(&seed) % nsize] = tap_rand(&seed) % 2 ? 'x' : 0; break;
            }
        }
        char want[200];
        index_ref(want, sizeof want, N, total, ml, o2, g2, r2, n2, s2, nsize);
        failed += *want != 0;
        for (int b = 0; b < 4; b++)
            for (int t = 0; t < 2; t++) {
                const int rc = swgpu__db_check_index("P", N, total, ml, o2, g2, r2, n2, s2, nsize,
                                                     blks[b], threads[t]);
                const int same = *want ? rc == SWGPU_EDB && !strcmp(swgpu_last_error(), want)
                                       : rc == SWGPU_OK;
                agree += same;
                CHECK(same, "damage %d, blocks of %llu, %d threads: %d \"%s\", the one pass \"%s\"",
                      trial, (unsigned long long)blks[b], threads[t], rc,
                      rc ? swgpu_last_error() : "", want);
            }
    }
    CHECK(failed > 300, "most damages are found (%d of 600)", failed);
    CHECK_EQ_INT(agree, 600 * 8);
}

static void test_open_fasta(void)
{
    swgpu_db_t *db = NULL;
    swgpu_read_info_t info;
    CHECK_EQ_INT(swgpu_db_open(data("emptyrec.fa"), SWGPU_AUTO, &db, &info), 0);
    if (db) {
        CHECK(db->n_src == 0, "built in memory, from no database file");
        CHECK_EQ_INT(swgpu_db_size(db), 2);
        CHECK_EQ_INT(info.n_empty, 3);
        CHECK_EQ_INT(db->orig[0], 1); /* "WW" before "MKV" */
        swgpu_seq_t q;
        swgpu_db_get(db, 0, &q);
        CHECK_EQ_STR(q.id, "p1");
        CHECK_EQ_INT(q.len, 3);
    }
    swgpu_db_destroy(db);
    gzFile g = gzopen(tmp("db.fa.gz"), "wb");
    gzputs(g, ">a\nACGTACGT\n>b\nACG\n");
    gzclose(g);
    CHECK_EQ_INT(swgpu_db_open(tmp("db.fa.gz"), SWGPU_AUTO, &db, NULL), 0);
    CHECK(db && swgpu_db_alphabet(db) == SWGPU_DNA && swgpu_db_residues(db) == 11, "gzip FASTA database");
    swgpu_db_destroy(db);
    expect_db_fail(data("notfasta.txt"), SWGPU_EFORMAT, "expected '>' or '@'");
    expect_db_fail(data("no-such.db"), SWGPU_EIO, "No such file");
    expect_db_fail(data("empty.fa"), SWGPU_EEMPTY, "empty file");
    /* writing where it cannot */
    swgpu_seqset_t *set = NULL;
    swgpu_seqset_create(SWGPU_PROTEIN, &set);
    swgpu_seqset_add(set, "x", "", "MKV", 3);
    swgpu_db_from_seqset(set, &db);
    CHECK_EQ_INT(swgpu_db_write(db, "/nonexistent-dir/x.db"), SWGPU_EIO);
    CHECK(strstr(swgpu_last_error(), "/nonexistent-dir/x.db"), "%s", swgpu_last_error());
    swgpu_db_destroy(db);
    swgpu_seqset_destroy(set);
    swgpu_seqset_create(SWGPU_PROTEIN, &set);
    db = (swgpu_db_t *)1;
    CHECK_EQ_INT(swgpu_db_from_seqset(set, &db), SWGPU_EEMPTY);
    CHECK(db == NULL, "NULL on failure");
    swgpu_seqset_destroy(set);
    swgpu_db_destroy(NULL);
}

/* a set whose only sequence is empty: a database of one empty sequence
 * (its residues were copied from a NULL buffer: UBSan's report) */
static void test_empty_sequence(void)
{
    swgpu_seqset_t *set = NULL;
    swgpu_db_t *db = NULL;
    swgpu_seq_t q;
    swgpu_seqset_create(SWGPU_PROTEIN, &set);
    CHECK_EQ_INT(swgpu_seqset_add(set, "x", "", "", 0), SWGPU_OK);
    CHECK_EQ_INT(swgpu_db_from_seqset(set, &db), SWGPU_OK);
    if (db) {
        CHECK_EQ_INT(swgpu_db_size(db), 1);
        CHECK_EQ_INT(swgpu_db_residues(db), 0);
        CHECK_EQ_INT(swgpu_db_max_len(db), 0);
        CHECK_EQ_INT(swgpu_db_get(db, 0, &q), SWGPU_OK);
        CHECK_EQ_STR(q.id, "x");
        CHECK_EQ_INT(q.len, 0);
    }
    swgpu_db_destroy(db);
    swgpu_seqset_destroy(set);
}

/* fd of a pipe a child fills with n bytes of text, then closes */
static int pipe_of(const char *text, size_t n, pid_t *pid)
{
    int fds[2];
    if (pipe(fds)) return -1;
    if ((*pid = fork()) == 0) {
        close(fds[0]);
        _exit(write(fds[1], text, n) == (ssize_t)n ? 0 : 1);
    }
    close(fds[1]);
    return fds[0];
}

/* A database from a pipe named by a path (-d <(zcat db.fa.gz), /dev/stdin):
 * read once as a stream, whole or a part; a makedb database that way is
 * refused saying why (it used to fail with "Illegal seek") */
static void test_pipe(void)
{
    static const char fa[] = ">a\nMKVLW\n>b\nWW\n>c\nMKVLWAAA\n";
    char path[64];
    pid_t pid;
    swgpu_db_t *db = NULL;
    swgpu_read_info_t info;
    int fd = pipe_of(fa, sizeof fa - 1, &pid);
    snprintf(path, sizeof path, "/dev/fd/%d", fd);
    CHECK_EQ_INT(swgpu_db_open(path, SWGPU_AUTO, &db, &info), SWGPU_OK);
    close(fd);
    waitpid(pid, NULL, 0);
    if (db) {
        CHECK_EQ_INT(swgpu_db_size(db), 3);
        CHECK_EQ_INT(swgpu_db_residues(db), 15);
        CHECK_EQ_INT(info.n_records, 3);
        swgpu_seq_t q;
        swgpu_db_get(db, 2, &q);
        CHECK_EQ_STR(q.id, "c");
    }
    swgpu_db_destroy(db);
    db = NULL;
    fd = pipe_of(fa, sizeof fa - 1, &pid);
    snprintf(path, sizeof path, "/dev/fd/%d", fd);
    CHECK_EQ_INT(swgpu_db_open_part(path, SWGPU_AUTO, 0.0, 1.0, &db, &info), SWGPU_OK);
    close(fd);
    waitpid(pid, NULL, 0);
    if (db) {
        CHECK_EQ_INT(swgpu_db_size(db), 3);
        CHECK_EQ_INT(info.n_residues, 15);
    }
    swgpu_db_destroy(db);
    db = NULL;
    /* a makedb database through a pipe: refused, saying why */
    swgpu_seqset_t *set = NULL;
    swgpu_seqset_create(SWGPU_PROTEIN, &set);
    swgpu_seqset_add(set, "x", "", "MKV", 3);
    swgpu_db_from_seqset(set, &db);
    swgpu_db_write(db, tmp("pipe.db"));
    swgpu_db_destroy(db);
    db = NULL;
    swgpu_seqset_destroy(set);
    size_t n = 0;
    unsigned char *bytes = tl_slurp(tmp("pipe.db"), &n);
    fd = pipe_of((const char *)bytes, n, &pid);
    snprintf(path, sizeof path, "/dev/fd/%d", fd);
    CHECK_EQ_INT(swgpu_db_open(path, SWGPU_AUTO, &db, NULL), SWGPU_EFORMAT);
    char want[256];
    snprintf(want, sizeof want, "file %s: a swgpu makedb database cannot be read from a stream "
             "(databases are memory-mapped: give its file name)", path);
    CHECK_EQ_STR(swgpu_last_error(), want);
    CHECK(db == NULL, "NULL on failure");
    close(fd);
    kill(pid, SIGKILL); /* it may still be writing */
    waitpid(pid, NULL, 0);
    free(bytes);
}

int main(void)
{
    datadir = tl_datadir();
    snprintf(tmpdir, sizeof tmpdir, "/tmp/swgpu_test_db.XXXXXX");
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    test_sort_ties();
    test_roundtrip_random();
    test_damaged();
    test_crc_codes();
    test_check_index();
    test_open_fasta();
    test_empty_sequence();
    test_pipe();
    const char *names[] = {"ties.db", "rand.db", "rand2.db", "good.db", "cut.db", "long.db", "foreign.db",
                           "v2.db", "hdr.db", "crc.db", "off.db", "off2.db", "off3.db", "code.db", "db.fa.gz",
                           "pipe.db"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) unlink(tmp(names[i]));
    rmdir(tmpdir);
    return tap_done();
}
