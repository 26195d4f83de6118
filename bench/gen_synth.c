/*
 * gen_synth.c - the synthetic Swiss-Prot-size protein database of the GPU
 * benchmark, written as FASTA to stdout or to the named file.
 *
 *   gen_synth [-n 572970] [-s SEED] [-x K [-t THREADS]] [OUT.fasta]
 *
 * n sequences (default 572,970, Swiss-Prot's count); lengths drawn from a
 * lognormal with median 300 and sigma 0.61, rounded and clipped to
 * [2, 35213]; residues drawn independently from the Robinson-Robinson
 * background frequencies of the 20 amino acids.  A fixed seed (default
 * 572970) makes the output identical on every machine: the generator is
 * splitmix64 with Box-Muller normals, no library randomness.
 *
 * -x K: K times as many sequences (K x n: -x 100 is the UniRef50-size
 * database, 57.3 M sequences, about 20.6 G residues, 22 GB of FASTA), cut
 * into blocks of BLOCK sequences, each drawn from its own splitmix64 stream
 * seeded from (SEED, block index) and generated on THREADS threads
 * (default: every core); the blocks are written in order, so the output is
 * the same for every THREADS.  Without -x, one stream draws all n sequences
 * (the GPU benchmarks' database; -x 1 is a different one of the same size).
 */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "splitmix64.h"

enum { MAXLEN = 35213, BLOCK = 16384, LUT_BITS = 12 };

/* Robinson & Robinson (1991) amino-acid frequencies, per 100,000 */
static const char aa[20] = {'A', 'R', 'N', 'D', 'C', 'Q', 'E', 'G', 'H', 'I',
                            'L', 'K', 'M', 'F', 'P', 'S', 'T', 'W', 'Y', 'V'};
static const double freq[20] = {7805, 5129, 4487, 5364, 1925, 4264, 6295, 7377, 2199, 5142,
                                9019, 5744, 2243, 3856, 5203, 7120, 5841, 1330, 3216, 6441};

/* cumulative table over 2^32; lut[j]: the letter of the least r of bucket j
 * (r >> (32 - LUT_BITS) == j), where the search for any r of j starts */
static uint64_t cum[20];
static uint8_t lut[1 << LUT_BITS];

static void tables(void)
{
    double tot = 0, acc = 0;
    for (int i = 0; i < 20; i++)
        tot += freq[i];
    for (int i = 0; i < 20; i++) {
        acc += freq[i];
        cum[i] = (uint64_t)(acc / tot * 4294967296.0);
    }
    cum[19] = 4294967296ull;
    for (uint64_t j = 0; j < (1u << LUT_BITS); j++) {
        uint64_t r = j << (32 - LUT_BITS);
        int a = 0;
        while (r >= cum[a])
            a++;
        lut[j] = (uint8_t)a;
    }
}

/* uniform in (0, 1) */
static double unif(uint64_t *st)
{
    return ((double)(splitmix64(st) >> 11) + 0.5) / 9007199254740992.0;
}

typedef struct {
    char *p;
    size_t n, cap;
} buf_t;

/* count sequences from stream *st, numbered from first + 1, appended to b;
 * returns their residues (0 and b->p NULL when out of memory) */
static uint64_t gen_seqs(uint64_t *st, uint64_t first, uint64_t count, buf_t *b)
{
    uint64_t residues = 0;
    for (uint64_t k = first; k < first + count; k++) {
        double u1 = unif(st), u2 = unif(st);
        double z = sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
        long len = lround(300.0 * exp(0.61 * z));
        if (len < 2) len = 2;
        if (len > MAXLEN) len = MAXLEN;
        if (b->cap - b->n < (size_t)len + 64) {
            size_t cap = 2 * b->cap + (size_t)len + 64;
            char *p = realloc(b->p, cap);
            if (!p) {
                free(b->p);
                b->p = NULL;
                return 0;
            }
            b->p = p;
            b->cap = cap;
        }
        b->n += (size_t)sprintf(b->p + b->n, ">synth%llu len=%ld\n", (unsigned long long)k + 1, len);
        char *line = b->p + b->n;
        for (long j = 0; j < len; j++) {
            uint64_t r = splitmix64(st) >> 32;
            int a = lut[r >> (32 - LUT_BITS)];
            while (r >= cum[a])
                a++;
            line[j] = aa[a];
        }
        line[len] = '\n';
        b->n += (size_t)len + 1;
        residues += (uint64_t)len;
    }
    return residues;
}

/* -x: blocks taken in turn by the threads, written in block order */
typedef struct {
    FILE *fp;
    uint64_t seed, total, nblocks;
    pthread_mutex_t mu;
    pthread_cond_t turn_cv;
    uint64_t next, turn;   /* the next block to take, the next to write */
    uint64_t residues, bytes;
    int failed;
} run_t;

/* block b's stream: its own splitmix64 state from (seed, b) */
static uint64_t block_state(uint64_t seed, uint64_t b)
{
    uint64_t s = seed ^ (b + 1) * 0xd1b54a32d192ed03ull;
    return splitmix64(&s);
}

static void *worker(void *arg)
{
    run_t *R = arg;
    buf_t b = {NULL, 0, 0};
    for (;;) {
        pthread_mutex_lock(&R->mu);
        uint64_t k = R->next++;
        int stop = R->failed;
        pthread_mutex_unlock(&R->mu);
        if (k >= R->nblocks || stop)
            break;
        uint64_t st = block_state(R->seed, k), first = k * BLOCK;
        uint64_t cnt = R->total - first < BLOCK ? R->total - first : BLOCK;
        b.n = 0;
        uint64_t res = gen_seqs(&st, first, cnt, &b);
        pthread_mutex_lock(&R->mu);
        while (R->turn != k && !R->failed)
            pthread_cond_wait(&R->turn_cv, &R->mu);
        if (!b.p || (!R->failed && fwrite(b.p, 1, b.n, R->fp) != b.n))
            R->failed = 1;
        R->residues += res;
        R->bytes += b.n;
        R->turn++;
        pthread_cond_broadcast(&R->turn_cv);
        pthread_mutex_unlock(&R->mu);
    }
    free(b.p);
    return NULL;
}

static int parse_u64(const char *opt, const char *s, uint64_t min, uint64_t *out)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (!*s || *end || *s == '-' || v < min) {
        fprintf(stderr, "gen_synth: %s '%s': expected a whole number >= %llu\n", opt, s,
                (unsigned long long)min);
        return -1;
    }
    *out = v;
    return 0;
}

int main(int argc, char **argv)
{
    uint64_t n = 572970, seed = 572970, copies = 0, threads = 0;
    const char *out = NULL;
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        if (!strcmp(o, "-n") && i + 1 < argc) {
            if (parse_u64(o, argv[++i], 0, &n)) return 1;
        } else if (!strcmp(o, "-s") && i + 1 < argc) {
            if (parse_u64(o, argv[++i], 0, &seed)) return 1;
        } else if (!strcmp(o, "-x") && i + 1 < argc) {
            if (parse_u64(o, argv[++i], 1, &copies)) return 1;
        } else if (!strcmp(o, "-t") && i + 1 < argc) {
            if (parse_u64(o, argv[++i], 1, &threads)) return 1;
        } else if (o[0] == '-') {
            fprintf(stderr, "usage: gen_synth [-n N] [-s SEED] [-x K [-t THREADS]] [OUT.fasta]\n");
            return 1;
        } else
            out = o;
    }
    if (copies && n > UINT64_MAX / copies) {
        fprintf(stderr, "gen_synth: -n %llu -x %llu: too many sequences\n",
                (unsigned long long)n, (unsigned long long)copies);
        return 1;
    }
    FILE *fp = out ? fopen(out, "w") : stdout;
    if (!fp) {
        perror(out);
        return 1;
    }
    static char obuf[1 << 20];
    setvbuf(fp, obuf, _IOFBF, sizeof obuf);
    tables();
    uint64_t total = copies ? n * copies : n, residues = 0, bytes = 0;
    int failed = 0;
    if (!copies) { /* one stream, written a block at a time */
        uint64_t st = seed;
        buf_t b = {NULL, 0, 0};
        for (uint64_t k = 0; k < n && !failed; k += BLOCK) {
            b.n = 0;
            residues += gen_seqs(&st, k, n - k < BLOCK ? n - k : BLOCK, &b);
            failed = !b.p || fwrite(b.p, 1, b.n, fp) != b.n;
            bytes += b.n;
        }
        free(b.p);
    } else {
        if (!threads) {
            long c = sysconf(_SC_NPROCESSORS_ONLN);
            threads = c > 0 ? (uint64_t)c : 1;
        }
        run_t R = {fp, seed, total, (total + BLOCK - 1) / BLOCK, PTHREAD_MUTEX_INITIALIZER,
                   PTHREAD_COND_INITIALIZER, 0, 0, 0, 0, 0};
        if (threads > R.nblocks) threads = R.nblocks ? R.nblocks : 1;
        pthread_t *th = calloc(threads, sizeof *th);
        uint64_t started = 0;
        while (th && started < threads && !pthread_create(&th[started], NULL, worker, &R))
            started++;
        if (started == 0)
            worker(&R); /* no thread: here */
        for (uint64_t t = 0; t < started; t++)
            pthread_join(th[t], NULL);
        free(th);
        residues = R.residues;
        bytes = R.bytes;
        failed = R.failed;
    }
    if (fflush(fp) || failed || (fp != stdout && fclose(fp))) {
        perror(out ? out : "standard output");
        return 1;
    }
    fprintf(stderr, "gen_synth: %llu sequences, %llu residues, %llu bytes\n",
            (unsigned long long)total, (unsigned long long)residues, (unsigned long long)bytes);
    return 0;
}
