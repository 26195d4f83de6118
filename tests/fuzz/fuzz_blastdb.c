/* fuzz_blastdb.c - the BLAST database reader (src/io/blastdb.c) on any input:
 * a status, never a crash.  A database is several files, so one input
 * holds them all:
 *
 *   byte 0        bit 0: nucleotide (.nin/.nsq/.nhr, else .pin/.psq/.phr);
 *                 bit 1: an alias file follows the three volume files
 *   then up to four sections, each a u32 little-endian length and that
 *   many bytes: the index, the sequences, the headers, the alias file
 *   (a short or missing section is written as what is there).
 *
 * The volume is written as DIR/d.*, the alias as DIR/a.pal (or .nal), and
 * the harness opens DIR/a when there is an alias, else DIR/d, and reads
 * every sequence and its subject columns (swgpu_db_ids).  The seeds
 * in tests/fuzz/corpus/blastdb pack the fixtures of tests/data/blastdb
 * (single volumes of both types and versions; one with "DBLIST d d").
 */
#include "fuzz.h"

#include <string.h>
#include <sys/stat.h>

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char dir[64];
    char path[4][96], prefix[96];
    (void)fuzz_file; /* one file is not enough here */
    if (!dir[0])
        snprintf(dir, sizeof dir, "/tmp/swgpu_fuzz_blastdb_%ld", (long)getpid());
    if (size < 1)
        return 0;
    int nucl = data[0] & 1, alias = (data[0] >> 1) & 1;
    const char *x = nucl ? "n" : "p";
    static const char *const ext[4] = {"in", "sq", "hr", "al"};
    mkdir(dir, 0700);
    size_t pos = 1;
    for (int s = 0; s < 3 + alias; s++) {
        size_t len = 0;
        if (size - pos >= 4) {
            len = le32(data + pos);
            pos += 4;
        } else {
            pos = size;
        }
        if (len > size - pos)
            len = size - pos;
        snprintf(path[s], sizeof path[s], "%s/%s.%s%s", dir, s == 3 ? "a" : "d", x, ext[s]);
        FILE *fp = fopen(path[s], "wb");
        if (!fp)
            abort(); /* the harness cannot work at all */
        if (len && fwrite(data + pos, 1, len, fp) != len)
            abort();
        fclose(fp);
        pos += len;
    }
    snprintf(prefix, sizeof prefix, "%s/%s", dir, alias ? "a" : "d");

    swgpu_db_t *db = NULL;
    if (swgpu_db_open(prefix, SWGPU_AUTO, &db, NULL) == SWGPU_OK) {
        int n = swgpu_alphabet_size(swgpu_db_alphabet(db));
        uint64_t res = 0;
        for (size_t i = 0; i < swgpu_db_size(db); i++) {
            swgpu_seq_t q;
            if (swgpu_db_get(db, i, &q) != SWGPU_OK || !q.id || !q.desc || !q.len ||
                q.len > swgpu_db_max_len(db))
                abort();
            for (size_t j = 0; j < q.len; j++)
                if (q.res[j] >= n)
                    abort();
            res += q.len;
            /* blastp's subject columns: every string there */
            swgpu_seq_ids_t x;
            if (swgpu_db_ids(db, i, &x) != SWGPU_OK || !x.seqid || !x.acc || !x.accver ||
                !x.allseqid || !x.taxid || !x.taxids || (!x.title) != (!x.alltitles) ||
                strlen(x.seqid) + strlen(x.acc) + strlen(x.accver) + strlen(x.allseqid) +
                        strlen(x.taxid) + (x.title ? strlen(x.title) + strlen(x.alltitles) : 0) ==
                    (size_t)-1)
                abort();
        }
        if (res != swgpu_db_residues(db))
            abort();
    }
    swgpu_db_destroy(db);
    for (int s = 0; s < 3 + alias; s++)
        unlink(path[s]);
    rmdir(dir);
    return 0;
}
