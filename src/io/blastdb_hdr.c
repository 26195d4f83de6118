/*
 * io/blastdb_hdr.c - the headers of a BLAST database's sequences (V.phr /
 * V.nhr records: ASN.1 BER Blast-def-line-sets, see blastdb.c) as the ids
 * and descriptions blastdbcmd shows.
 *
 * Ids.  A sequence's id and description come from the first Blast-def-line
 * of its header:
 *  - makeblastdb without -parse_seqids stores the Seq-id gnl|BL_ORD_ID|OID
 *    and the whole FASTA header line as the title: the id is the title's
 *    first word and the description the rest, exactly as the FASTA reader
 *    splits that line;
 *  - with -parse_seqids the id is every Seq-id in FASTA form joined by '|',
 *    as `blastdbcmd -outfmt %f -long_seqids` prints them (sp|P69905.2|HBA_HUMAN,
 *    tr|..|.. for unreviewed UniProt, gi|12345|ref|NP_000001.1|, pdb|1ABC|A,
 *    gnl|db|tag, ...), except that a lone local id is printed without "lcl|",
 *    as it was written in the FASTA file; the description is the title;
 *  - a sequence stored once for several entries (several Blast-def-lines)
 *    gets " >ids title" of each further one added to its description, as
 *    blastdbcmd shows them.
 * Descriptions are trimmed of blanks at both ends, as the FASTA reader trims.
 */
#include "io/io.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define BER_MAX_DEPTH 32 /* Blast-def-line-sets nest about 8 deep */

/* ------------------------------------------------------------- ASN.1 BER */

typedef struct {
    uint8_t id;            /* identifier octet: class, constructed bit, tag (< 31) */
    const uint8_t *c, *ce; /* contents */
    const uint8_t *next;   /* the byte after the element (and its end-of-contents) */
} ber_t;

/* the element at p (not past end); -1 with *why set when malformed */
static int ber_get(const uint8_t *p, const uint8_t *end, int depth, ber_t *e, const char **why)
{
    if (depth > BER_MAX_DEPTH)
        return *why = "nested too deeply", -1;
    if (end - p < 2)
        return *why = "truncated element", -1;
    uint8_t id = p[0], l = p[1];
    if ((id & 0x1f) == 0x1f)
        return *why = "unsupported tag", -1;
    p += 2;
    if (l == 0x80) { /* indefinite: the children, then 00 00 */
        if (!(id & 0x20))
            return *why = "indefinite length on a primitive element", -1;
        const uint8_t *q = p;
        for (;;) {
            if (end - q >= 2 && q[0] == 0 && q[1] == 0)
                break;
            ber_t sub;
            if (ber_get(q, end, depth + 1, &sub, why))
                return -1;
            q = sub.next;
        }
        e->c = p;
        e->ce = q;
        e->next = q + 2;
    } else {
        uint64_t len = l;
        if (l > 0x80) {
            int k = l & 0x7f;
            if (k > 4)
                return *why = "length too large", -1;
            if (end - p < k)
                return *why = "truncated length", -1;
            len = 0;
            for (int i = 0; i < k; i++)
                len = len << 8 | *p++;
        }
        if ((uint64_t)(end - p) < len)
            return *why = "element runs past the end of the header", -1;
        e->c = p;
        e->ce = p + len;
        e->next = p + len;
    }
    e->id = id;
    return 0;
}

/* the next child of constructed element e at *pos: 1, 0 at the end, -1 bad */
static int ber_child(const ber_t *e, const uint8_t **pos, int depth, ber_t *child, const char **why)
{
    if (*pos >= e->ce)
        return 0;
    if (ber_get(*pos, e->ce, depth, child, why))
        return -1;
    *pos = child->next;
    return 1;
}

/* the one element inside an explicitly tagged element ([n] { x }) */
static int ber_inner(const ber_t *e, int depth, ber_t *in, const char **why)
{
    const uint8_t *pos = e->c;
    if (!(e->id & 0x20))
        return *why = "a tagged field is not constructed", -1;
    int r = ber_child(e, &pos, depth + 1, in, why);
    if (r <= 0)
        return r < 0 ? -1 : (*why = "empty tagged field", -1);
    if (pos != e->ce)
        return *why = "a tagged field holds more than one element", -1;
    return 0;
}

/* a character string (VisibleString, as NCBI writes; UTF8/Printable/IA5 too) */
static int ber_str(const ber_t *e, const uint8_t **s, size_t *n, const char **why)
{
    if (e->id != 0x1a && e->id != 0x0c && e->id != 0x13 && e->id != 0x16)
        return *why = "expected a string", -1;
    *s = e->c;
    *n = (size_t)(e->ce - e->c);
    return 0;
}

static int ber_int(const ber_t *e, int64_t *v, const char **why)
{
    size_t n = (size_t)(e->ce - e->c);
    if (e->id != 0x02 || n < 1 || n > 8)
        return *why = "expected an INTEGER", -1;
    uint64_t u = e->c[0] & 0x80 ? UINT64_MAX : 0;
    for (size_t i = 0; i < n; i++)
        u = u << 8 | e->c[i];
    *v = (int64_t)u;
    return 0;
}

/* [tag] { string } and [tag] { INTEGER } fields */
static int field_str(const ber_t *e, int depth, const uint8_t **s, size_t *n, const char **why)
{
    ber_t in;
    return ber_inner(e, depth, &in, why) ? -1 : ber_str(&in, s, n, why);
}

static int field_int(const ber_t *e, int depth, int64_t *v, const char **why)
{
    ber_t in;
    return ber_inner(e, depth, &in, why) ? -1 : ber_int(&in, v, why);
}

/* ------------------------------------------------------ Seq-ids as text */

static void sb_add(swgpu__sbuf_t *b, const void *s, size_t n)
{
    if (b->oom)
        return;
    if (b->n + n + 1 > b->cap) {
        size_t c = b->cap ? b->cap : 256;
        while (c < b->n + n + 1)
            c *= 2;
        char *q = realloc(b->p, c);
        if (!q) {
            b->oom = 1;
            return;
        }
        b->p = q;
        b->cap = c;
    }
    if (n)
        memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = 0;
}

static void sb_str(swgpu__sbuf_t *b, const char *s)
{
    sb_add(b, s, strlen(s));
}

static void sb_int(swgpu__sbuf_t *b, int64_t v)
{
    char t[24];
    int k = snprintf(t, sizeof t, "%" PRId64, v);
    sb_add(b, t, (size_t)k);
}

/* Object-id ::= CHOICE { id [0] INTEGER, str [1] VisibleString } */
static int fmt_object_id(const ber_t *choice, int depth, swgpu__sbuf_t *b, const char **why)
{
    const uint8_t *s;
    size_t n;
    int64_t v;
    if (choice->id == 0xa0) {
        if (field_int(choice, depth, &v, why))
            return -1;
        sb_int(b, v);
    } else if (choice->id == 0xa1) {
        if (field_str(choice, depth, &s, &n, why))
            return -1;
        sb_add(b, s, n);
    } else {
        return *why = "invalid Object-id", -1;
    }
    return 0;
}

/* The fields [0]..[7] of a SEQUENCE whose fields are explicitly tagged:
 * f[n] is field n when bit n of *have is set; other elements are skipped. */
static int seq_fields(const ber_t *seq, int depth, ber_t f[8], unsigned *have, const char **why)
{
    ber_t c;
    const uint8_t *pos = seq->c;
    int r;
    *have = 0;
    if (seq->id != 0x30)
        return *why = "expected a SEQUENCE", -1;
    while ((r = ber_child(seq, &pos, depth + 1, &c, why)) > 0) {
        unsigned t = c.id & 0x1f;
        if ((c.id & 0xe0) == 0xa0 && t < 8) {
            f[t] = c;
            *have |= 1u << t;
        }
    }
    return r;
}

/* an optional string field: empty when absent */
static int opt_str(const ber_t f[8], unsigned have, int n, int depth, const uint8_t **s,
                   size_t *len, const char **why)
{
    *s = NULL;
    *len = 0;
    return have >> n & 1 ? field_str(&f[n], depth, s, len, why) : 0;
}

/* Textseq-id ::= SEQUENCE { name [0], accession [1], release [2], version [3] }
 * as prefix|accession[.version]|name; UniProt's unreviewed swissprot is "tr" */
static int fmt_textseq(const ber_t *seq, int depth, const char *prefix, swgpu__sbuf_t *b,
                       const char **why)
{
    ber_t f[8];
    unsigned have;
    const uint8_t *name, *acc, *rel;
    size_t nname, nacc, nrel;
    int64_t ver = 0;
    if (seq_fields(seq, depth, f, &have, why) ||
        opt_str(f, have, 0, depth + 1, &name, &nname, why) ||
        opt_str(f, have, 1, depth + 1, &acc, &nacc, why) ||
        opt_str(f, have, 2, depth + 1, &rel, &nrel, why) ||
        (have & 8 && field_int(&f[3], depth + 1, &ver, why)))
        return -1;
    if (!strcmp(prefix, "sp") && nrel == 10 && !memcmp(rel, "unreviewed", 10))
        prefix = "tr";
    sb_str(b, prefix);
    sb_add(b, "|", 1);
    sb_add(b, acc, nacc);
    if (nacc && ver > 0) {
        sb_add(b, ".", 1);
        sb_int(b, ver);
    }
    sb_add(b, "|", 1);
    sb_add(b, name, nname);
    return 0;
}

/* Giimport-id ::= SEQUENCE { id [0] INTEGER, db [1], release [2] }: gim|id */
static int fmt_giim(const ber_t *seq, int depth, swgpu__sbuf_t *b, const char **why)
{
    ber_t f[8];
    unsigned have;
    int64_t v;
    if (seq_fields(seq, depth, f, &have, why))
        return -1;
    if (!(have & 1))
        return *why = "Giimport-id without id", -1;
    if (field_int(&f[0], depth + 1, &v, why))
        return -1;
    sb_str(b, "gim|");
    sb_int(b, v);
    return 0;
}

/* Patent-seq-id ::= SEQUENCE { seqid [0] INTEGER, cit [1] Id-pat }, Id-pat ::=
 * SEQUENCE { country [0], id [1] CHOICE { number [0], app-number [1] },
 * doc-type [2] }: pat|country|number|seqid (pgp|... for an application) */
static int fmt_patent(const ber_t *seq, int depth, swgpu__sbuf_t *b, const char **why)
{
    ber_t f[8], g[8], cit, id;
    unsigned have, ghave;
    int64_t seqno = 0;
    const uint8_t *country, *num;
    size_t ncountry, nnum;
    if (seq_fields(seq, depth, f, &have, why))
        return -1;
    if ((have & 3) != 3)
        return *why = "Patent-seq-id without seqid or cit", -1;
    if (field_int(&f[0], depth + 1, &seqno, why) || ber_inner(&f[1], depth + 1, &cit, why) ||
        seq_fields(&cit, depth + 2, g, &ghave, why) ||
        opt_str(g, ghave, 0, depth + 3, &country, &ncountry, why))
        return -1;
    if (!(ghave & 2))
        return *why = "Id-pat without id", -1;
    if (ber_inner(&g[1], depth + 3, &id, why))
        return -1;
    if (id.id != 0xa0 && id.id != 0xa1)
        return *why = "invalid Id-pat id", -1;
    if (field_str(&id, depth + 4, &num, &nnum, why))
        return -1;
    sb_str(b, id.id == 0xa1 ? "pgp|" : "pat|");
    sb_add(b, country, ncountry);
    sb_add(b, "|", 1);
    sb_add(b, num, nnum);
    sb_add(b, "|", 1);
    sb_int(b, seqno);
    return 0;
}

/* Dbtag ::= SEQUENCE { db [0] VisibleString, tag [1] Object-id }: gnl|db|tag */
static int fmt_dbtag(const ber_t *seq, int depth, swgpu__sbuf_t *b, const char **why)
{
    ber_t f[8], tag;
    unsigned have;
    const uint8_t *db;
    size_t ndb;
    if (seq_fields(seq, depth, f, &have, why) || opt_str(f, have, 0, depth + 1, &db, &ndb, why))
        return -1;
    if (!(have & 2))
        return *why = "Dbtag without tag", -1;
    if (ber_inner(&f[1], depth + 1, &tag, why))
        return -1;
    sb_str(b, "gnl|");
    sb_add(b, db, ndb);
    sb_add(b, "|", 1);
    return fmt_object_id(&tag, depth + 2, b, why);
}

/* PDB-seq-id ::= SEQUENCE { mol [0], chain [1] INTEGER (default ' '), rel [2],
 * chain-id [3] }: pdb|mol|chain-id, or the chain as a letter */
static int fmt_pdb(const ber_t *seq, int depth, swgpu__sbuf_t *b, const char **why)
{
    ber_t f[8];
    unsigned have;
    const uint8_t *mol, *cid;
    size_t nmol, ncid;
    int64_t chain = ' ';
    if (seq_fields(seq, depth, f, &have, why) || opt_str(f, have, 0, depth + 1, &mol, &nmol, why) ||
        opt_str(f, have, 3, depth + 1, &cid, &ncid, why) ||
        (have & 2 && field_int(&f[1], depth + 1, &chain, why)))
        return -1;
    sb_str(b, "pdb|");
    sb_add(b, mol, nmol);
    sb_add(b, "|", 1);
    if (have & 8) {
        sb_add(b, cid, ncid);
    } else if (chain > ' ' && chain < 127) {
        char ch = (char)chain;
        sb_add(b, &ch, 1);
    }
    return 0;
}

static const char *const seqid_prefix[20] = {
    "lcl", "bbs", "bbm", "gim", "gb",  "emb", "pir", "sp",  "pat", "ref",
    "gnl", "gi",  "dbj", "prf", "pdb", "tpg", "tpe", "tpd", "gpp", "nat"};

/* one Seq-id (a CHOICE, tag [0]..[19]) in FASTA form */
static int fmt_seqid(const ber_t *choice, int depth, swgpu__sbuf_t *b, const char **why)
{
    unsigned tag = choice->id & 0x1f;
    ber_t in;
    int64_t v;
    if ((choice->id & 0xe0) != 0xa0 || tag >= 20)
        return *why = "unknown Seq-id type", -1;
    if (ber_inner(choice, depth, &in, why))
        return -1;
    depth++;
    switch (tag) {
    case 0: /* local: Object-id */
        sb_str(b, "lcl|");
        return fmt_object_id(&in, depth, b, why);
    case 1: case 2: case 11: /* gibbsq, gibbmt, gi: INTEGER */
        if (ber_int(&in, &v, why))
            return -1;
        sb_str(b, seqid_prefix[tag]);
        sb_add(b, "|", 1);
        sb_int(b, v);
        return 0;
    case 3: return fmt_giim(&in, depth, b, why);
    case 8: return fmt_patent(&in, depth, b, why);
    case 10: return fmt_dbtag(&in, depth, b, why);
    case 14: return fmt_pdb(&in, depth, b, why);
    default: /* genbank, embl, pir, swissprot, other (refseq), ddbj, prf, tpg, ... */
        return fmt_textseq(&in, depth, seqid_prefix[tag], b, why);
    }
}

/* One Blast-def-line: its Seq-ids in FASTA form joined by '|', appended to
 * ids (with bare_local, a lone local id without "lcl|"), and its title; *ord
 * is 1 when the only Seq-id is makeblastdb's gnl|BL_ORD_ID|n (no
 * -parse_seqids). */
static int parse_defline(const ber_t *def, int bare_local, swgpu__sbuf_t *ids, const uint8_t **title,
                         size_t *tlen, int *ord, const char **why)
{
    ber_t f, list, id;
    const uint8_t *pos = def->c;
    size_t start = ids->n;
    int r, nid = 0, first_tag = -1;
    *title = (const uint8_t *)""; /* no title: empty (never NULL: callers step through it) */
    *tlen = 0;
    if (def->id != 0x30)
        return *why = "not a Blast-def-line", -1;
    while ((r = ber_child(def, &pos, 2, &f, why)) > 0) {
        if (f.id == 0xa0) {
            if (field_str(&f, 2, title, tlen, why))
                return -1;
        } else if (f.id == 0xa1) {
            const uint8_t *lp;
            if (ber_inner(&f, 2, &list, why))
                return -1;
            if (list.id != 0x30)
                return *why = "invalid Seq-id list", -1;
            lp = list.c;
            while ((r = ber_child(&list, &lp, 4, &id, why)) > 0) {
                if (nid++)
                    sb_add(ids, "|", 1);
                else
                    first_tag = id.id & 0x1f;
                if (fmt_seqid(&id, 4, ids, why))
                    return -1;
            }
            if (r < 0)
                return -1;
        } else if (f.id < 0xa2 || f.id > 0xa5) { /* taxid, memberships, links, other-info */
            return *why = "unexpected Blast-def-line field", -1;
        }
    }
    if (r < 0)
        return -1;
    if (!nid)
        return *why = "no Seq-id", -1;
    if (ids->oom)
        return *why = "out of memory", -1;
    *ord = nid == 1 && first_tag == 10 && !strncmp(ids->p + start, "gnl|BL_ORD_ID|", 14);
    if (bare_local && nid == 1 && first_tag == 0) { /* lcl|x -> x */
        memmove(ids->p + start, ids->p + start + 4, ids->n - start - 4 + 1);
        ids->n -= 4;
    }
    return 0;
}

static int is_blank(uint8_t c)
{
    return c == ' ' || c == '\t';
}

static void trim(const uint8_t **t, size_t *n)
{
    while (*n && is_blank(**t))
        ++*t, --*n;
    while (*n && is_blank((*t)[*n - 1]))
        --*n;
}

/* A sequence's id and description as blastdbcmd's FASTA dump shows its
 * header: the first Blast-def-line gives the id (its Seq-ids, or without
 * -parse_seqids the title's first word) and the description (the title, or
 * the rest of it); each further Blast-def-line (a sequence stored once for
 * several entries) adds " >ids title" to the description. */
int swgpu__blastdb_header(const uint8_t *p, size_t n, swgpu__sbuf_t *id, swgpu__sbuf_t *desc,
                          const char **why)
{
    ber_t set, def;
    const uint8_t *pos, *t;
    size_t tl;
    int r, ord, k = 0;
    id->n = desc->n = 0;
    sb_add(id, "", 0);
    sb_add(desc, "", 0);
    if (ber_get(p, p + n, 0, &set, why))
        return -1;
    if (set.id != 0x30)
        return *why = "not a Blast-def-line-set", -1;
    if (set.next != p + n)
        return *why = "data after the Blast-def-line-set", -1;
    pos = set.c;
    while ((r = ber_child(&set, &pos, 1, &def, why)) > 0) {
        if (k++ == 0) {
            if (parse_defline(&def, 1, id, &t, &tl, &ord, why))
                return -1;
            trim(&t, &tl);
            if (ord) { /* the title is the FASTA header line */
                size_t w = 0;
                while (w < tl && !is_blank(t[w]))
                    w++;
                id->n = 0;
                sb_add(id, t, w);
                t += w;
                tl -= w;
                trim(&t, &tl);
            }
            sb_add(desc, t, tl);
        } else {
            size_t mark;
            sb_add(desc, " >", 2);
            mark = desc->n;
            if (parse_defline(&def, 0, desc, &t, &tl, &ord, why))
                return -1;
            if (ord)
                desc->n = mark;
            else
                sb_add(desc, " ", 1);
            trim(&t, &tl);
            sb_add(desc, t, tl);
        }
    }
    if (r < 0)
        return -1;
    if (!k)
        return *why = "no Blast-def-line", -1;
    if (id->oom || desc->oom)
        return *why = "out of memory", -1;
    t = (const uint8_t *)desc->p;
    tl = desc->n;
    trim(&t, &tl);
    memmove(desc->p, t, tl);
    desc->p[tl] = 0;
    desc->n = tl;
    return 0;
}

