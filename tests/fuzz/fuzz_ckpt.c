/* fuzz_ckpt.c - resuming a long alignment (swgpu_align_long) from any
 * checkpoint file: a status, never a crash, a hang or an alignment that
 * does not hold together.
 *
 * The pair is fixed (a 20,000-base query, a 300-base target taken from
 * it with 2 % changes), so that the checkpoints of the seed corpus match
 * its fingerprint.  The input's first byte picks the run: bit 0, the
 * CRC-32 that ends a checkpoint is made right before reading (a mutated
 * file almost always fails it, which would keep the fuzzer in front of
 * it: with the CRC right, the mutations reach the checks of the fields);
 * bit 1, scores beyond 32 bits (match 10000, mismatch -30000, gaps 30000 +
 * 20000 per base: the wide engine); bit 2, no pruning.  The rest is the
 * checkpoint.
 *
 * The seed corpus (tests/fuzz/corpus/ckpt) holds real checkpoints of the
 * CPU engine for each of the four runs, every phase it wrote: between
 * passes and inside the pre-pass, the score pass and the reverse pass.
 * The GPU engine writes the same format (align_long.c writes the file for
 * both).  Built with -DFUZZ_CKPT_SEEDS, this file is the program that
 * wrote them: it runs each alignment with the scalar strip kernel (slower:
 * the passes last long enough for in-pass checkpoints) and a checkpoint at
 * every chance, and copies each new state of the file:
 *   cc -std=c11 -D_GNU_SOURCE -DFUZZ_CKPT_SEEDS -Iinclude -Isrc -Itests/fuzz tests/fuzz/fuzz_ckpt.c \
 *      build/libswgpu.a -lz -lpthread -lm -o /tmp/ckseeds && /tmp/ckseeds tests/fuzz/corpus/ckpt
 */
#include "fuzz.h"

#include <string.h>
#include <zlib.h>

#define ALEN 20000
#define BLEN 300

static uint8_t A[ALEN], B[BLEN];
static swgpu_matrix_t *mat[2];

static void setup(void)
{
    uint64_t x = 12345;
    if (mat[0])
        return;
    for (int i = 0; i < ALEN; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        A[i] = (uint8_t)(x >> 62);
    }
    for (int j = 0; j < BLEN; j++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        B[j] = (x >> 33) % 50 == 0 ? (uint8_t)(x >> 62) : A[9000 + j];
    }
    if (swgpu_matrix_dna(2, -3, &mat[0]) || swgpu_matrix_dna(10000, -30000, &mat[1]))
        abort();
}

static void opts(int mode, swgpu_long_opts_t *o)
{
    const int wide = mode >> 1 & 1;
    swgpu_long_opts_init(o, SWGPU_DNA);
    o->gap_open = wide ? 30000 : 5;
    o->gap_extend = wide ? 20000 : 2;
    o->prune = !(mode >> 2 & 1);
    o->threads = 1;
    o->backend = SWGPU_BACKEND_CPU;
}

#ifndef FUZZ_CKPT_SEEDS
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static uint8_t buf[1 << 22];
    swgpu_long_opts_t o;
    swgpu_aln_t out = { 0 };
    swgpu_long_stats_t st;
    int mode;
    if (size < 1 || size - 1 > sizeof buf)
        return 0;
    setup();
    mode = data[0];
    size--;
    memcpy(buf, data + 1, size);
    if ((mode & 1) && size >= 4) {
        uint32_t crc = (uint32_t)crc32(0, Z_NULL, 0);
        crc = (uint32_t)crc32(crc, buf, (uInt)(size - 4));
        memcpy(buf + size - 4, &crc, 4);
    }
    opts(mode, &o);
    o.checkpoint = fuzz_file(buf, size);
    o.checkpoint_every = 1e9; /* none written */
    if (swgpu_align_long(A, ALEN, B, BLEN, mat[mode >> 1 & 1], &o, &out, &st) == SWGPU_OK && out.score > 0) {
        /* it holds together: within the sequences, the CIGAR rescores */
        int64_t s = 0;
        if (out.qbeg < 0 || out.qend > ALEN || out.qbeg >= out.qend || out.tbeg < 0 || out.tend > BLEN ||
            out.tbeg >= out.tend ||
            swgpu_cigar_score(&out, A, ALEN, B, BLEN, mat[mode >> 1 & 1], o.gap_open, o.gap_extend, &s) ||
            s != out.score)
            abort();
    }
    swgpu_aln_free(&out);
    return 0;
}
#else
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

void swgpu__long_set_isa(int isa);

static atomic_int done;
static const char *ckpath;
static int seed_mode;

/* copy each new state of the checkpoint (phase, strips done) into dir */
static void *watch(void *arg)
{
    const char *dir = arg;
    static uint8_t buf[1 << 22];
    int64_t seen[64][2];
    int nseen = 0;
    const int mode = seed_mode;
    while (!atomic_load(&done)) {
        FILE *f = fopen(ckpath, "rb");
        size_t n;
        if (!f)
            continue;
        n = fread(buf + 1, 1, sizeof buf - 1, f);
        fclose(f);
        if (n < 112 + 4)
            continue;
        int64_t ph, next;
        memcpy(&ph, buf + 1 + 16, 8);
        memcpy(&next, buf + 1 + 80, 8);
        int k = 0;
        while (k < nseen && !(seen[k][0] == ph && seen[k][1] == next))
            k++;
        if (k < nseen || nseen == 64)
            continue;
        seen[nseen][0] = ph;
        seen[nseen][1] = next;
        nseen++;
        char name[512];
        buf[0] = (uint8_t)mode;
        snprintf(name, sizeof name, "%s/%s%s_phase%lld_strip%lld", dir, mode & 2 ? "wide" : "i32",
                 mode & 4 ? "_noprune" : "", (long long)ph, (long long)next);
        FILE *g = fopen(name, "wb");
        if (!g || fwrite(buf, 1, n + 1, g) != n + 1)
            abort();
        fclose(g);
        printf("%s: %zu bytes\n", name, n);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    static char path[] = "/tmp/fuzz_ckpt_seed.ck";
    if (argc != 2)
        return 2;
    setup();
    ckpath = path;
    swgpu__long_set_isa(0);
    for (int mode = 0; mode < 8; mode += 2) {
        swgpu_long_opts_t o;
        swgpu_aln_t out = { 0 };
        swgpu_long_stats_t st;
        pthread_t t;
        opts(mode, &o);
        o.threads = 2;
        o.checkpoint = path;
        o.checkpoint_every = 1e-9;
        remove(path);
        atomic_store(&done, 0);
        seed_mode = mode; /* the watcher names its copies after it */
        if (pthread_create(&t, NULL, watch, argv[1]))
            return 1;
        if (swgpu_align_long(A, ALEN, B, BLEN, mat[mode >> 1 & 1], &o, &out, &st)) {
            fprintf(stderr, "%s\n", swgpu_last_error());
            return 1;
        }
        atomic_store(&done, 1);
        pthread_join(t, NULL);
        printf("mode %d: score %lld\n", mode, (long long)out.score);
        swgpu_aln_free(&out);
    }
    return 0;
}
#endif
