/*
 * gen_synth.c - the synthetic Swiss-Prot-size protein database of the GPU
 * benchmark, written as FASTA to stdout or to the named file.
 *
 *   gen_synth [-n 572970] [-s SEED] [OUT.fasta]
 *
 * n sequences (default 572,970, Swiss-Prot's count); lengths drawn from a
 * lognormal with median 300 and sigma 0.61, rounded and clipped to
 * [2, 35213]; residues drawn independently from the Robinson-Robinson
 * background frequencies of the 20 amino acids.  A fixed seed (default
 * 572970) makes the output identical on every machine: the generator is
 * splitmix64 with Box-Muller normals, no library randomness.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "splitmix64.h"

static uint64_t state;

static uint64_t next64(void)
{
    return splitmix64(&state);
}

/* uniform in (0, 1) */
static double unif(void)
{
    return ((double)(next64() >> 11) + 0.5) / 9007199254740992.0;
}

int main(int argc, char **argv)
{
    /* Robinson & Robinson (1991) amino-acid frequencies, per 100,000 */
    static const char aa[20] = {'A', 'R', 'N', 'D', 'C', 'Q', 'E', 'G', 'H', 'I',
                                'L', 'K', 'M', 'F', 'P', 'S', 'T', 'W', 'Y', 'V'};
    static const double freq[20] = {7805, 5129, 4487, 5364, 1925, 4264, 6295, 7377, 2199, 5142,
                                    9019, 5744, 2243, 3856, 5203, 7120, 5841, 1330, 3216, 6441};
    long n = 572970;
    uint64_t seed = 572970;
    const char *out = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-n") && i + 1 < argc)
            n = atol(argv[++i]);
        else if (!strcmp(argv[i], "-s") && i + 1 < argc)
            seed = strtoull(argv[++i], NULL, 10);
        else if (argv[i][0] == '-') {
            fprintf(stderr, "usage: gen_synth [-n N] [-s SEED] [OUT.fasta]\n");
            return 1;
        } else
            out = argv[i];
    }
    FILE *fp = out ? fopen(out, "w") : stdout;
    if (!fp) {
        perror(out);
        return 1;
    }
    static char buf[1 << 20];
    setvbuf(fp, buf, _IOFBF, sizeof buf);
    /* cumulative table over 2^32 for fast sampling */
    double tot = 0, acc = 0;
    uint64_t cum[20];
    for (int i = 0; i < 20; i++)
        tot += freq[i];
    for (int i = 0; i < 20; i++) {
        acc += freq[i];
        cum[i] = (uint64_t)(acc / tot * 4294967296.0);
    }
    cum[19] = 4294967296ull;
    state = seed;
    uint64_t residues = 0;
    char *line = malloc(35214 + 2);
    for (long k = 0; k < n; k++) {
        double u1 = unif(), u2 = unif();
        double z = sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
        long len = lround(300.0 * exp(0.61 * z));
        if (len < 2) len = 2;
        if (len > 35213) len = 35213;
        for (long j = 0; j < len; j++) {
            uint64_t r = next64() >> 32;
            int a = 0;
            while (r >= cum[a])
                a++;
            line[j] = aa[a];
        }
        line[len] = '\n';
        fprintf(fp, ">synth%ld len=%ld\n", k + 1, len);
        fwrite(line, 1, (size_t)len + 1, fp);
        residues += (uint64_t)len;
    }
    free(line);
    if (fp != stdout && fclose(fp)) {
        perror(out);
        return 1;
    }
    fprintf(stderr, "gen_synth: %ld sequences, %llu residues\n", n, (unsigned long long)residues);
    return 0;
}
