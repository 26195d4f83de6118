/*
 * seqset.c - residue alphabets (letters, codes, the automatic choice of
 * protein or DNA) and sequence sets (struct swgpu_seqset: records appended
 * with their names, residues concatenated).
 */
#include "io/io.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------- alphabet */

static const char prot_letters[] = "ARNDCQEGHILKMFPSTWYVBZX*JUO"; /* codes 0..26 */
static const char dna_letters[] = "ACGTNRYKMSWBDHV";               /* codes 0..14 */


/* t[c] = code of byte c (either case) in alphabet a, SWGPU__NOCODE if none. */
void swgpu__encode_table(swgpu_alphabet_t a, uint8_t t[256])
{
    const char *l = a == SWGPU_DNA ? dna_letters : prot_letters;
    memset(t, SWGPU__NOCODE, 256);
    for (int i = 0; l[i]; i++) {
        t[(uint8_t)l[i]] = (uint8_t)i;
        if (l[i] >= 'A' && l[i] <= 'Z')
            t[(uint8_t)(l[i] - 'A' + 'a')] = (uint8_t)i;
    }
    if (a == SWGPU_DNA) { /* RNA: U reads as T */
        t['U'] = 3;
        t['u'] = 3;
    }
}

int swgpu_encode(swgpu_alphabet_t alphabet, int letter)
{
    const char *l;
    if (alphabet == SWGPU_PROTEIN) l = prot_letters;
    else if (alphabet == SWGPU_DNA) l = dna_letters;
    else return -1;
    if (letter >= 'a' && letter <= 'z') letter -= 'a' - 'A';
    if (alphabet == SWGPU_DNA && letter == 'U') letter = 'T';
    if (letter <= 0 || letter > 127) return -1;
    const char *p = strchr(l, letter);
    return p ? (int)(p - l) : -1;
}

char swgpu_decode(swgpu_alphabet_t alphabet, uint8_t code)
{
    if (alphabet == SWGPU_PROTEIN && code < sizeof prot_letters - 1) return prot_letters[code];
    if (alphabet == SWGPU_DNA && code < sizeof dna_letters - 1) return dna_letters[code];
    return '?';
}

int swgpu_alphabet_size(swgpu_alphabet_t alphabet)
{
    if (alphabet == SWGPU_PROTEIN) return (int)sizeof prot_letters - 1;
    if (alphabet == SWGPU_DNA) return (int)sizeof dna_letters - 1;
    return 0;
}

const char *swgpu_alphabet_name(swgpu_alphabet_t alphabet)
{
    switch (alphabet) {
    case SWGPU_PROTEIN: return "protein";
    case SWGPU_DNA: return "dna";
    case SWGPU_AUTO: return "auto";
    default: return "unknown";
    }
}

/* ------------------------------------------------------- seqset storage */

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap) return 0;
    size_t c = *cap ? *cap : 16;
    while (c < need) c += c / 2 + 16;
    void *q = realloc(*p, c * elem);
    if (!q) return swgpu__fail(SWGPU_ENOMEM, "out of memory (%zu bytes)", c * elem);
    *p = q;
    *cap = c;
    return 0;
}

/* room for one more sequence slot (off has n+2 entries, name_off n+1) */
int swgpu__seqset_reserve_slot(swgpu_seqset_t *s)
{
    if (s->n + 1 < s->cap) return 0;
    size_t cap = s->cap, cap2 = s->cap;
    int rc = grow((void **)&s->name_off, &cap, s->n + 2, sizeof *s->name_off);
    if (!rc) rc = grow((void **)&s->off, &cap2, s->n + 2, sizeof *s->off);
    if (rc) return rc;
    s->cap = cap < cap2 ? cap : cap2;
    return 0;
}

/* room for need residues, the buffer grown to at most max bytes (>= need) */
int swgpu__seqset_reserve_max(swgpu_seqset_t *s, uint64_t need, uint64_t max)
{
    if (need <= s->res_cap) return 0;
    if (need > SIZE_MAX / 2) return swgpu__fail(SWGPU_ERANGE, "sequence data too large");
    size_t cap = (size_t)s->res_cap;
    if (cap < (1u << 20)) cap = 1u << 20;
    while (cap < need) cap *= 2;
    if (cap > max) cap = (size_t)max;
    uint8_t *p = realloc(s->res, cap);
    if (!p) return swgpu__fail(SWGPU_ENOMEM, "out of memory (%zu bytes of residues)", cap);
    s->res = p;
    s->res_cap = cap;
    return 0;
}

static int reserve_res(swgpu_seqset_t *s, uint64_t need)
{
    return swgpu__seqset_reserve_max(s, need, SIZE_MAX);
}

/* append id NUL desc NUL to the names buffer */
int swgpu__seqset_add_names(swgpu_seqset_t *s, const char *id, size_t idlen, const char *desc, size_t dlen)
{
    int rc = grow((void **)&s->names, &s->names_cap, s->names_len + idlen + dlen + 2, 1);
    if (rc) return rc;
    char *p = s->names + s->names_len;
    memcpy(p, id, idlen);
    p[idlen] = 0;
    memcpy(p + idlen + 1, desc, dlen);
    p[idlen + 1 + dlen] = 0;
    s->names_len += idlen + dlen + 2;
    return 0;
}

int swgpu__seqset_add_bytes(swgpu_seqset_t *s, const char *p, size_t n)
{
    int rc = grow((void **)&s->names, &s->names_cap, s->names_len + n, 1);
    if (rc) return rc;
    memcpy(s->names + s->names_len, p, n);
    s->names_len += n;
    return 0;
}

swgpu_seqset_t *swgpu__seqset_new(swgpu_alphabet_t alphabet)
{
    swgpu_seqset_t *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->alphabet = alphabet;
    if (swgpu__seqset_reserve_slot(s)) {
        swgpu_seqset_destroy(s);
        return NULL;
    }
    s->off[0] = 0;
    return s;
}

int swgpu_seqset_create(swgpu_alphabet_t alphabet, swgpu_seqset_t **out)
{
    *out = NULL;
    if (alphabet != SWGPU_AUTO && alphabet != SWGPU_PROTEIN && alphabet != SWGPU_DNA)
        return swgpu__fail(SWGPU_EINVAL, "seqset: invalid alphabet %d", (int)alphabet);
    *out = swgpu__seqset_new(alphabet);
    return *out ? SWGPU_OK : swgpu__fail(SWGPU_ENOMEM, "seqset: out of memory");
}

/* DNA if >= 90% of the letters other than N (and '*') are A C G T U */
swgpu_alphabet_t swgpu__alphabet_decide(const uint64_t hist[256])
{
    uint64_t nuc = 0, other = 0;
    for (int c = 0; c < 256; c++) {
        int u = c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c;
        if (u == 'N' || u == '*') continue;
        if (u == 'A' || u == 'C' || u == 'G' || u == 'T' || u == 'U') nuc += hist[c];
        else other += hist[c];
    }
    if (nuc + other == 0) return (hist['N'] | hist['n']) ? SWGPU_DNA : SWGPU_PROTEIN;
    return nuc * 10 >= (nuc + other) * 9 ? SWGPU_DNA : SWGPU_PROTEIN;
}

/*
 * Append one sequence; its id must not be empty.  With a set created as
 * SWGPU_AUTO, the first sequence added decides the alphabet (same 90% rule
 * as reading).  Every byte of letters is one residue; letters outside the
 * alphabet become X / N.
 */
int swgpu_seqset_add(swgpu_seqset_t *set, const char *id, const char *desc,
                     const char *letters, size_t len)
{
    uint8_t enc[256];
    if (!set || (!letters && len))
        return swgpu__fail(SWGPU_EINVAL, "seqset_add: NULL argument");
    if (!id || !*id) /* results name sequences by id: a row must not start with a tab */
        return swgpu__fail(SWGPU_EINVAL, "seqset_add: sequence %zu: empty id", set->n + 1);
    if (!desc) desc = "";
    if (set->alphabet == SWGPU_AUTO) {
        uint64_t hist[256] = {0};
        for (size_t i = 0; i < len; i++) hist[(uint8_t)letters[i]]++;
        set->alphabet = swgpu__alphabet_decide(hist);
    }
    size_t name_at = set->names_len;
    int rc = swgpu__seqset_reserve_slot(set);
    if (!rc) rc = reserve_res(set, set->off[set->n] + len);
    if (!rc) rc = swgpu__seqset_add_names(set, id, strlen(id), desc, strlen(desc));
    if (!rc && set->blast_info) rc = swgpu__seqset_add_bytes(set, "F", 2); /* no header */
    if (rc) {
        set->names_len = name_at;
        return rc;
    }
    swgpu__encode_table(set->alphabet, enc);
    uint8_t unk = set->alphabet == SWGPU_DNA ? SWGPU_DNA_N : SWGPU_PROT_X;
    uint8_t *dst = set->res + set->off[set->n];
    for (size_t i = 0; i < len; i++) {
        uint8_t c = enc[(uint8_t)letters[i]];
        dst[i] = c == SWGPU__NOCODE ? unk : c;
    }
    set->name_off[set->n] = name_at;
    set->off[set->n + 1] = set->off[set->n] + len;
    set->n++;
    if (len > set->max_len) set->max_len = len;
    return SWGPU_OK;
}

size_t swgpu_seqset_size(const swgpu_seqset_t *set)
{
    return set ? set->n : 0;
}

uint64_t swgpu_seqset_residues(const swgpu_seqset_t *set)
{
    return set ? set->off[set->n] : 0;
}

swgpu_alphabet_t swgpu_seqset_alphabet(const swgpu_seqset_t *set)
{
    return set ? set->alphabet : SWGPU_AUTO;
}

int swgpu_seqset_get(const swgpu_seqset_t *set, size_t i, swgpu_seq_t *out)
{
    if (!set || i >= set->n)
        return swgpu__fail(SWGPU_EINVAL, "seqset: sequence %zu out of range (%zu sequences)", i,
                           set ? set->n : (size_t)0);
    out->id = set->names + set->name_off[i];
    out->desc = out->id + strlen(out->id) + 1;
    out->res = set->res + set->off[i];
    out->len = (size_t)(set->off[i + 1] - set->off[i]);
    return SWGPU_OK;
}

void swgpu_seqset_destroy(swgpu_seqset_t *set)
{
    if (!set) return;
    free(set->off);
    free(set->res);
    free(set->name_off);
    free(set->names);
    free(set);
}

int swgpu__seqset_reserve(swgpu_seqset_t *s, uint64_t residues)
{
    return reserve_res(s, s->off[s->n] + residues);
}

int swgpu__seqset_append(swgpu_seqset_t *s, const char *id, size_t idlen, const char *desc,
                         size_t dlen, size_t len, uint8_t **res)
{
    int rc = swgpu__seqset_reserve_slot(s);
    if (!rc)
        rc = reserve_res(s, s->off[s->n] + len);
    if (!rc)
        rc = swgpu__seqset_add_names(s, id, idlen, desc, dlen);
    if (rc)
        return rc;
    s->name_off[s->n] = s->names_len - idlen - dlen - 2;
    *res = len ? s->res + s->off[s->n] : NULL;
    s->off[s->n + 1] = s->off[s->n] + len;
    s->n++;
    if (len > s->max_len)
        s->max_len = len;
    return SWGPU_OK;
}

/* The reverse complement in the library's DNA codes (the minus strand of a
 * search and of a long alignment). */
void swgpu_dna_revcomp(const uint8_t *in, size_t n, uint8_t *out)
{
    /* A C G T N R Y K M S W B D H V -> T G C A N Y R M K S W V H D B */
    static const uint8_t comp[15] = { 3, 2, 1, 0, 4, 6, 5, 8, 7, 9, 10, 14, 13, 12, 11 };
    for (size_t i = 0, k = n; i < k--; i++) {
        uint8_t x = in[i], y = in[k];
        out[i] = y < 15 ? comp[y] : y;
        out[k] = x < 15 ? comp[x] : x;
    }
}

/*
 * Names and descriptions come from files and callers: a control byte in one
 * (a tab, a newline, an escape) would add columns or rows, or drive a
 * terminal.  They are written with \t, \n, \r and \xHH for the other
 * control bytes (0x00-0x1f, 0x7f); every other byte as it is.
 */
void swgpu_put_name(FILE *fp, const char *s)
{
    if (!fp || !s)
        return;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p >= 0x20 && *p != 0x7f) { /* a run of printable bytes, written at once */
            const unsigned char *e = p + 1;
            while (*e >= 0x20 && *e != 0x7f)
                e++;
            fwrite(p, 1, (size_t)(e - p), fp);
            p = e - 1;
        } else if (*p == '\t')
            fputs("\\t", fp);
        else if (*p == '\n')
            fputs("\\n", fp);
        else if (*p == '\r')
            fputs("\\r", fp);
        else
            fprintf(fp, "\\x%02x", *p);
    }
}
