/*
 * gen_chrom.c - a simulated chromosome pair for `swgpu align` benchmarks:
 * a random DNA sequence A and a copy B that has diverged from it.
 *
 *   gen_chrom [options] A.fasta B.fasta
 *
 *   -n LEN        length of A (default 25,000,000)
 *   -s SEED       seed (default 12)
 *   --sub R       substitutions per base (default 0.01)
 *   --indel R     short indels per base (default 0.001), half insertions,
 *                 half deletions, lengths 1 + a geometric count of mean 1
 *                 (capped at 30)
 *   --inv K       inversions (default 3)
 *   --inv-len N   length of each (default LEN / 250: 100 kbp at 25 Mbp)
 *   --trans-len N length of the translocated segment (default LEN / 100;
 *                 0: none)
 *
 * A: LEN bases drawn uniformly from ACGT.  B: A with K segments reverse-
 * complemented in place (inversions) and one segment cut out and inserted
 * elsewhere (a translocation), all at random places that do not overlap,
 * then point mutations over the whole copy: each base is substituted (by
 * one of the other three) with probability --sub, and an indel starts
 * before it with probability --indel.  The events are listed on standard
 * error, in A's coordinates (1-based).  The generator is splitmix64, no
 * library randomness, so a seed gives the same pair on every machine.
 */
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

/* uniform in [0, 1) */
static double unif(void)
{
    return (double)(next64() >> 11) / 9007199254740992.0;
}

/* uniform in [0, n) */
static size_t below(size_t n)
{
    return n ? (size_t)(unif() * (double)n) : 0;
}

static const char BASES[4] = {'A', 'C', 'G', 'T'};

static char comp(char c)
{
    return c == 'A' ? 'T' : c == 'C' ? 'G' : c == 'G' ? 'C' : 'A';
}

static void revcomp(char *s, size_t n)
{
    for (size_t i = 0, j = n; i < j;) {
        char x = comp(s[i]);
        s[i++] = comp(s[--j]);
        s[j] = x;
    }
}

static int write_fasta(const char *path, const char *id, const char *desc, const char *s, size_t n)
{
    static char buf[1 << 20];
    FILE *fp = fopen(path, "w");
    if (!fp) {
        perror(path);
        return -1;
    }
    setvbuf(fp, buf, _IOFBF, sizeof buf);
    fprintf(fp, ">%s %s\n", id, desc);
    for (size_t i = 0; i < n; i += 80) {
        fwrite(s + i, 1, n - i < 80 ? n - i : 80, fp);
        fputc('\n', fp);
    }
    if (fclose(fp) != 0) {
        perror(path);
        return -1;
    }
    return 0;
}

static int parse_num(const char *opt, const char *s, double lo, double hi, double *out)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end || !(v >= lo && v <= hi)) {
        fprintf(stderr, "gen_chrom: %s: '%s' is not a number in [%g, %g]\n", opt, s, lo, hi);
        return -1;
    }
    *out = v;
    return 0;
}

typedef struct {
    size_t beg, len;
} seg_t;

/* A segment of len bases that overlaps none of the n taken ones (with a
 * gap of at least len between); 0 on success. */
static int place(size_t total, size_t len, const seg_t *taken, int n, size_t *beg)
{
    for (int tries = 0; tries < 10000; tries++) {
        size_t b = below(total - len + 1);
        int ok = 1;
        for (int k = 0; k < n && ok; k++)
            if (b < taken[k].beg + taken[k].len + len && taken[k].beg < b + len + len)
                ok = 0;
        if (ok) {
            *beg = b;
            return 0;
        }
    }
    return -1;
}

int main(int argc, char **argv)
{
    double n = 25e6, seed = 12, sub = 0.01, indel = 0.001, inv = 3, inv_len = -1, trans_len = -1, v;
    const char *apath = NULL, *bpath = NULL;
    char *a = NULL, *b0 = NULL, *b = NULL;
    seg_t taken[66];
    int nt = 0, status = 1;

    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        double *dst = !strcmp(o, "-n")          ? &n
                      : !strcmp(o, "-s")        ? &seed
                      : !strcmp(o, "--sub")     ? &sub
                      : !strcmp(o, "--indel")   ? &indel
                      : !strcmp(o, "--inv")     ? &inv
                      : !strcmp(o, "--inv-len") ? &inv_len
                      : !strcmp(o, "--trans-len") ? &trans_len
                                                  : NULL;
        if (dst && i + 1 < argc) {
            double hi = dst == &sub || dst == &indel ? 0.5 : dst == &inv ? 64 : 2e9;
            if (parse_num(o, argv[++i], 0, hi, &v))
                return 1;
            *dst = v;
        } else if (o[0] == '-' || (apath && bpath)) {
            fprintf(stderr, "usage: gen_chrom [-n LEN] [-s SEED] [--sub R] [--indel R] [--inv K] "
                            "[--inv-len N] [--trans-len N] A.fasta B.fasta\n");
            return 1;
        } else if (!apath)
            apath = o;
        else
            bpath = o;
    }
    if (!apath || !bpath) {
        fprintf(stderr, "gen_chrom: two output files A.fasta and B.fasta are required\n");
        return 1;
    }
    const size_t len = (size_t)n, ninv = (size_t)inv;
    const size_t il = inv_len >= 0 ? (size_t)inv_len : len / 250;
    const size_t tl = trans_len >= 0 ? (size_t)trans_len : len / 100;
    /* room: an inversion keeps its length away from the others on each side,
     * the translocation lands at least twice its length from where it was */
    if (len < 1 || ninv * 3 * il + (tl > 0 ? 6 * tl : 0) >= len) {
        fprintf(stderr, "gen_chrom: %zu bases cannot hold %zu inversions of %zu and a translocation "
                        "of %zu\n", len, ninv, il, tl);
        return 1;
    }
    state = (uint64_t)seed;
    a = malloc(len);
    b0 = malloc(len);
    size_t bcap = len + len / 8 + 64; /* B's buffer, grown if insertions need more */
    b = malloc(bcap);
    if (!a || !b0 || !b) {
        fprintf(stderr, "gen_chrom: out of memory for %zu bases\n", len);
        goto out;
    }
    for (size_t i = 0; i < len; i++)
        a[i] = BASES[next64() >> 62];
    memcpy(b0, a, len);

    /* the translocation: A[s, s+tl) cut out and inserted before A's base t
     * of what is left; the inversions keep away from its new place and from
     * the junction it left (both in B's coordinates before the indels) */
    if (tl > 0) {
        size_t s = below(len - tl + 1), t, cut;
        char *tmp = malloc(len);
        if (!tmp) {
            fprintf(stderr, "gen_chrom: out of memory\n");
            goto out;
        }
        do
            t = below(len - tl + 1);
        while (t + 2 * tl > s && t < s + 2 * tl); /* well away from where it was (len >= 6 tl) */
        memcpy(tmp, a, s);
        memcpy(tmp + s, a + s + tl, len - s - tl);
        memcpy(b0, tmp, t);
        memcpy(b0 + t, a + s, tl);
        memcpy(b0 + t + tl, tmp + t, len - tl - t);
        free(tmp);
        cut = t > s ? s : s + tl;
        taken[nt++] = (seg_t){ t, tl };
        taken[nt++] = (seg_t){ cut > 0 ? cut - 1 : 0, 2 };
        fprintf(stderr, "translocation: A %zu-%zu moved to B (before indels) %zu-%zu\n", s + 1, s + tl,
                t + 1, t + tl);
    }
    /* inversions, in B's coordinates before the point mutations */
    for (size_t k = 0; k < ninv; k++) {
        size_t s;
        if (place(len, il, taken, nt, &s)) {
            fprintf(stderr, "gen_chrom: no room for inversion %zu\n", k + 1);
            goto out;
        }
        taken[nt++] = (seg_t){ s, il };
        revcomp(b0 + s, il);
        fprintf(stderr, "inversion: B (before indels) %zu-%zu reverse-complemented\n", s + 1, s + il);
    }

    /* point mutations */
    {
        size_t nb = 0, nsub = 0, nins = 0, ndel = 0, inslen = 0, dellen = 0;
        for (size_t i = 0; i < len; i++) {
            if (unif() < indel) {
                size_t l = 1;
                while (l < 30 && unif() < 0.5)
                    l++;
                if (nb + l + 1 > bcap) {
                    char *nbuf = realloc(b, bcap * 2);
                    if (!nbuf) {
                        fprintf(stderr, "gen_chrom: out of memory\n");
                        goto out;
                    }
                    b = nbuf;
                    bcap *= 2;
                }
                if (next64() >> 63) { /* insertion before b0[i] */
                    for (size_t x = 0; x < l; x++)
                        b[nb++] = BASES[next64() >> 62];
                    nins++;
                    inslen += l;
                } else { /* deletion of b0[i, i+l) */
                    ndel++;
                    dellen += l < len - i ? l : len - i;
                    i += l - 1;
                    continue;
                }
            }
            if (unif() < sub) {
                b[nb++] = BASES[((b0[i] == 'A' ? 0 : b0[i] == 'C' ? 1 : b0[i] == 'G' ? 2 : 3) + 1 +
                                 below(3)) & 3];
                nsub++;
            } else
                b[nb++] = b0[i];
        }
        fprintf(stderr, "point mutations: %zu substitutions, %zu insertions (%zu bases), %zu deletions "
                        "(%zu bases); A %zu bases, B %zu bases\n",
                nsub, nins, inslen, ndel, dellen, len, nb);
        {
            char desc[256];
            snprintf(desc, sizeof desc, "random, %zu bp, seed %llu", len, (unsigned long long)seed);
            if (write_fasta(apath, "simA", desc, a, len))
                goto out;
            snprintf(desc, sizeof desc, "simA with %g substitutions and %g indels per base, %zu inversions "
                     "of %zu, a translocation of %zu", sub, indel, ninv, il, tl);
            if (write_fasta(bpath, "simB", desc, b, nb))
                goto out;
        }
    }
    status = 0;
out:
    free(a);
    free(b0);
    free(b);
    return status;
}
