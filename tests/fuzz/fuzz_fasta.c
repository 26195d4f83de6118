/* fuzz_fasta.c - the FASTA/FASTQ reader (plain and gzip, detected from the
 * bytes; a makedb file is read too) on any input: a status, never a crash.
 *
 * Each input is read as it is (mutated gzip seeds exercise the corrupt and
 * truncated gzip paths), then compressed as two gzip members and read
 * again: the parser behind gzip must give the same status and the same
 * sequences as on the plain bytes. */
#include "fuzz.h"

#include <string.h>
#include <zlib.h>

typedef struct {
    int rc;
    swgpu_seqset_t *s;
    swgpu_read_info_t info;
} reading_t;

static void check(const reading_t *r)
{
    if (r->rc != SWGPU_OK)
        return;
    /* every record readable, its codes inside the alphabet */
    int n = swgpu_alphabet_size(swgpu_seqset_alphabet(r->s));
    for (size_t i = 0; i < swgpu_seqset_size(r->s); i++) {
        swgpu_seq_t q;
        if (swgpu_seqset_get(r->s, i, &q) != SWGPU_OK || !q.id || !q.desc)
            abort();
        for (size_t j = 0; j < q.len; j++)
            if (q.res[j] >= n)
                abort();
    }
    if (r->info.n_records != swgpu_seqset_size(r->s))
        abort();
}

/* the two readings hold the same sequences */
static void same(const reading_t *a, const reading_t *b)
{
    if (a->rc != b->rc)
        abort();
    if (a->rc != SWGPU_OK)
        return;
    if (memcmp(&a->info, &b->info, sizeof a->info) ||
        swgpu_seqset_alphabet(a->s) != swgpu_seqset_alphabet(b->s) ||
        swgpu_seqset_size(a->s) != swgpu_seqset_size(b->s))
        abort();
    for (size_t i = 0; i < swgpu_seqset_size(a->s); i++) {
        swgpu_seq_t x, y;
        swgpu_seqset_get(a->s, i, &x);
        swgpu_seqset_get(b->s, i, &y);
        if (strcmp(x.id, y.id) || strcmp(x.desc, y.desc) || x.len != y.len ||
            (x.len && memcmp(x.res, y.res, x.len)))
            abort();
    }
}

/* data as a gzip file of two members (split in the middle) at path */
static void write_gzip(const char *path, const uint8_t *data, size_t size)
{
    FILE *fp = fopen(path, "wb");
    if (!fp)
        abort();
    size_t half = size / 2;
    for (int part = 0; part < 2; part++) {
        const uint8_t *p = part ? data + half : data;
        z_stream z;
        uint8_t out[1 << 14];
        memset(&z, 0, sizeof z);
        if (deflateInit2(&z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
            abort();
        z.next_in = (Bytef *)p;
        z.avail_in = (uInt)(part ? size - half : half);
        int zr;
        do {
            z.next_out = out;
            z.avail_out = sizeof out;
            zr = deflate(&z, Z_FINISH);
            if (zr == Z_STREAM_ERROR)
                abort();
            fwrite(out, 1, sizeof out - z.avail_out, fp);
        } while (zr != Z_STREAM_END);
        deflateEnd(&z);
    }
    if (fclose(fp) != 0)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file(data, size);
    swgpu_alphabet_t al[] = {SWGPU_AUTO, SWGPU_PROTEIN, SWGPU_DNA};
    reading_t plain[3];
    for (int a = 0; a < 3; a++) {
        plain[a].s = NULL;
        plain[a].rc = swgpu_seqset_read(path, al[a], &plain[a].s, &plain[a].info);
        check(&plain[a]);
    }
    /* the same bytes through gzip (not for gzip input, read decompressed
     * above, nor for a makedb file, which is refused compressed) */
    int gz = size >= 2 && data[0] == 0x1f && data[1] == 0x8b;
    int db = size >= 8 && !memcmp(data, "SWGPU_DB", 8);
    write_gzip(path, data, size);
    for (int a = 0; a < 3; a++) {
        reading_t z = {0, NULL, {0}};
        z.rc = swgpu_seqset_read(path, al[a], &z.s, &z.info);
        check(&z);
        if (db && z.rc != SWGPU_EFORMAT)
            abort();
        if (!gz && !db)
            same(&plain[a], &z);
        swgpu_seqset_destroy(z.s);
        swgpu_seqset_destroy(plain[a].s);
    }
    return 0;
}
