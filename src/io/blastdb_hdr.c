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

/* ------------------------------------------- blastp's subject columns */

/* blastp 2.12 names a defline by one of its Seq-ids: the lowest of
 * 10 * base + penalties (CSeq_id's "worst rank"; the first on ties), base by
 * type as measured with blastp (tests/cli/expected/README): gi, gim 20; gnl,
 * bbs, bbm 15; lcl, pat 10; gpp 9; ref 8; every other type 5; a text id
 * (gb, emb, ref, sp, ...) adds 4 without a version, 3 without an accession
 * and 2 without a name. */
static int id_base_rank(int tag)
{
    switch (tag) {
    case 3: case 11: return 20;
    case 1: case 2: case 10: return 15;
    case 0: case 8: return 10;
    case 18: return 9;
    case 9: return 8;
    default: return 5;
    }
}

static int is_textseq(int tag)
{
    return tag >= 4 && tag != 8 && tag != 10 && tag != 11 && tag != 14;
}

/* the position of the k-th '|' (1-based) in s[0, n), or n */
static size_t bar(const char *s, size_t n, int k)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] == '|' && --k == 0)
            return i;
    return n;
}

static int id_rank(int tag, const char *s, size_t n)
{
    int r = 10 * id_base_rank(tag);
    if (is_textseq(tag)) { /* pre|acc[.ver]|name */
        size_t b1 = bar(s, n, 1), b2 = bar(s, n, 2);
        size_t a = b1 < n ? b1 + 1 : n, ae = b2 > a ? b2 : a;
        r += memchr(s + a, '.', ae - a) ? 0 : 4;
        r += ae > a ? 0 : 3;
        r += b2 + 1 < n ? 0 : 2;
    }
    return r;
}

/* sacc and saccver of a Seq-id from its FASTA text s[0, n), as blastp
 * prints them: a text id's accession (its name when it has none) and
 * accession.version, a gi's number, gnl|db|tag as db:tag, pdb|mol|chain as
 * mol_chain, pat|country|number|seq as countrynumber_seq, lcl|x as x */
static void id_label(int tag, const char *s, size_t n, swgpu__sbuf_t *acc, swgpu__sbuf_t *accver)
{
    size_t b1 = bar(s, n, 1), b2 = bar(s, n, 2), b3 = bar(s, n, 3);
    const char *f1 = s + (b1 < n ? b1 + 1 : n), *f2 = s + (b2 < n ? b2 + 1 : n);
    size_t n1 = (size_t)(s + b2 - f1), n2 = (size_t)(s + b3 - f2);
    if (is_textseq(tag)) {
        if (!n1) { /* no accession: the name */
            f1 = f2;
            n1 = (size_t)(s + n - f2);
        }
        const char *dot = memchr(f1, '.', n1);
        sb_add(acc, f1, dot ? (size_t)(dot - f1) : n1);
        sb_add(accver, f1, n1);
        return;
    }
    switch (tag) {
    case 10: /* gnl|db|tag */
        sb_add(acc, f1, n1);
        sb_add(acc, ":", 1);
        sb_add(acc, f2, (size_t)(s + n - f2));
        break;
    case 14: /* pdb|mol|chain */
        sb_add(acc, f1, n1);
        if (f2 < s + n) {
            sb_add(acc, "_", 1);
            sb_add(acc, f2, (size_t)(s + n - f2));
        }
        break;
    case 8: /* pat|country|number|seq */
        sb_add(acc, f1, n1);
        sb_add(acc, f2, n2);
        if (b3 < n) {
            sb_add(acc, "_", 1);
            sb_add(acc, s + b3 + 1, n - b3 - 1);
        }
        break;
    default: /* lcl|x, gi|n, ... */
        sb_add(acc, f1, (size_t)(s + n - f1));
    }
    sb_add(accver, acc->p, acc->n);
}

/* blastp's sseqid, sacc and saccver of one defline from its nid Seq-ids:
 * tag[k], FASTA text at ids->p + off[k], off[k + 1] - off[k] - 1 bytes (the
 * '|' joining the next left out).  The best-ranked one, after "gi|N|" of the
 * first gi when the best is not that gi, a local one without "lcl|". */
static void defline_cols(const swgpu__sbuf_t *ids, const size_t *off, const int *tag, int nid,
                         swgpu__hdr_cols_t *x)
{
    int best = 0, gi = -1, best_rank = 0;
    for (int k = 0; k < nid; k++) {
        int rk = id_rank(tag[k], ids->p + off[k], off[k + 1] - off[k] - 1);
        if (tag[k] == 11 && gi < 0)
            gi = k;
        if (!k || rk < best_rank) {
            best = k;
            best_rank = rk;
        }
    }
    const char *s = ids->p + off[best];
    size_t n = off[best + 1] - off[best] - 1;
    x->seqid.n = x->acc.n = x->accver.n = 0;
    sb_add(&x->seqid, "", 0);
    sb_add(&x->acc, "", 0);
    sb_add(&x->accver, "", 0);
    if (gi >= 0 && gi != best) {
        sb_add(&x->seqid, ids->p + off[gi], off[gi + 1] - off[gi] - 1);
        sb_add(&x->seqid, "|", 1);
    }
    if (tag[best] == 0)
        sb_add(&x->seqid, s + 4, n - 4);
    else
        sb_add(&x->seqid, s, n);
    id_label(tag[best], s, n, &x->acc, &x->accver);
}

#define DEFLINE_MAX_IDS 64 /* Seq-ids of one defline that blastp's choice weighs */

/* One Blast-def-line: its Seq-ids in FASTA form joined by '|', appended to
 * ids (with bare_local, a lone local id without "lcl|"), and its title; *ord
 * is 1 when the only Seq-id is makeblastdb's gnl|BL_ORD_ID|n (no
 * -parse_seqids).  x (may be NULL): blastp's sseqid, sacc and saccver of the
 * defline (of its first DEFLINE_MAX_IDS Seq-ids) and its taxid (0: none). */
static int parse_defline(const ber_t *def, int bare_local, swgpu__sbuf_t *ids, const uint8_t **title,
                         size_t *tlen, int *ord, swgpu__hdr_cols_t *x, const char **why)
{
    ber_t f, list, id;
    const uint8_t *pos = def->c;
    size_t start = ids->n, off[DEFLINE_MAX_IDS + 1];
    int r, nid = 0, first_tag = -1, tag[DEFLINE_MAX_IDS];
    *title = (const uint8_t *)""; /* no title: empty (never NULL: callers step through it) */
    *tlen = 0;
    if (x)
        x->taxid = 0;
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
                if (nid <= DEFLINE_MAX_IDS + 1)
                    off[nid - 1] = ids->n;
                if (nid <= DEFLINE_MAX_IDS)
                    tag[nid - 1] = id.id & 0x1f;
                if (fmt_seqid(&id, 4, ids, why))
                    return -1;
            }
            if (r < 0)
                return -1;
        } else if (f.id == 0xa2) { /* taxid [2] INTEGER */
            int64_t v;
            if (field_int(&f, 2, &v, why))
                return -1;
            if (x)
                x->taxid = v;
        } else if (f.id < 0xa3 || f.id > 0xa5) { /* memberships, links, other-info */
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
    if (x) {
        int k = nid < DEFLINE_MAX_IDS ? nid : DEFLINE_MAX_IDS;
        if (k == nid)
            off[k] = ids->n + 1; /* as if a '|' followed the last */
        defline_cols(ids, off, tag, k, x);
    }
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

/* the taxids of a header's deflines (0: none) in ascending order, each once,
 * joined by ';' (blastp's staxids) */
static int by_value(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static void put_taxids(swgpu__hdr_info_t *hi)
{
    qsort(hi->taxids, hi->ntax, sizeof *hi->taxids, by_value);
    for (size_t k = 0; k < hi->ntax; k++) {
        if (k && hi->taxids[k] == hi->taxids[k - 1])
            continue;
        if (k)
            sb_add(&hi->info, ";", 1);
        sb_int(&hi->info, hi->taxids[k]);
    }
    sb_add(&hi->info, "", 1);
}

static int add_taxid(swgpu__hdr_info_t *hi, int64_t v)
{
    if (hi->ntax == hi->captax) {
        size_t c = hi->captax ? 2 * hi->captax : 8;
        int64_t *q = realloc(hi->taxids, c * sizeof *q);
        if (!q)
            return hi->info.oom = 1, -1;
        hi->taxids = q;
        hi->captax = c;
    }
    hi->taxids[hi->ntax++] = v;
    return 0;
}

/* One defline's part of what blastp prints (see swgpu__hdr_info_t): its
 * sseqid to allseqid, its title (as stored) to alltitles, its taxid; the
 * first's sseqid, sacc, saccver and title to first. */
static int info_defline(swgpu__hdr_info_t *hi, int k, const uint8_t *t, size_t tl)
{
    swgpu__hdr_cols_t *x = &hi->x;
    if (k) {
        sb_add(&hi->allseqid, ";", 1);
        sb_add(&hi->alltitles, "<>", 2);
    } else {
        sb_add(&hi->first, x->seqid.p, x->seqid.n + 1);
        sb_add(&hi->first, x->acc.p, x->acc.n + 1);
        sb_add(&hi->first, x->accver.p, x->accver.n + 1);
    }
    sb_add(&hi->allseqid, x->seqid.p, x->seqid.n);
    sb_add(&hi->alltitles, t, tl);
    if (x->taxid && !hi->taxid)
        hi->taxid = x->taxid;
    return add_taxid(hi, x->taxid);
}

/* s[0, n) and a NUL, or SWGPU__SAME_AS when it equals ref[0, rn) */
static void put_or_same(swgpu__sbuf_t *b, const void *s, size_t n, const void *ref, size_t rn)
{
    if (n == rn && (!n || !memcmp(s, ref, n)))
        sb_add(b, SWGPU__SAME_AS, 2);
    else {
        sb_add(b, s, n);
        sb_add(b, "", 1);
    }
}

/* the block that swgpu__hdr_info_t describes, from what info_defline kept,
 * the record's id and description and the first defline's title t0 */
static void info_finish(swgpu__hdr_info_t *hi, int ord, const swgpu__sbuf_t *id,
                        const swgpu__sbuf_t *desc, const uint8_t *t0, size_t tl0)
{
    swgpu__sbuf_t *b = &hi->info;
    const char *f = hi->first.p; /* seqid, acc, accver */
    size_t l0 = strlen(f), l1 = strlen(f + l0 + 1), l2 = strlen(f + l0 + l1 + 2);
    sb_add(b, ord ? "O" : "P", 2);
    if (ord) {
        sb_add(b, "\0\0\0", 4);
        /* the header line: "id desc" as the FASTA reader splits it? */
        int same = tl0 == id->n + (desc->n ? 1 + desc->n : 0) && !memcmp(t0, id->p, id->n) &&
                   (!desc->n || (t0[id->n] == ' ' && !memcmp(t0 + id->n + 1, desc->p, desc->n)));
        if (same) {
            sb_add(b, SWGPU__SAME_AS, 2);
        } else {
            sb_add(b, t0, tl0);
            sb_add(b, "", 1);
        }
    } else {
        put_or_same(b, f, l0, id->p, id->n);
        sb_add(b, f + l0 + 1, l1 + 1);
        sb_add(b, f + l0 + l1 + 2, l2 + 1);
        put_or_same(b, hi->allseqid.p, hi->allseqid.n, f, l0);
        put_or_same(b, t0, tl0, desc->p, desc->n);
    }
    put_or_same(b, hi->alltitles.p, hi->alltitles.n, t0, tl0);
    if (hi->taxid)
        sb_int(b, hi->taxid);
    sb_add(b, "", 1);
    put_taxids(hi);
}

static void info_reset(swgpu__hdr_info_t *hi)
{
    hi->info.n = hi->first.n = hi->allseqid.n = hi->alltitles.n = 0;
    sb_add(&hi->info, "", 0);
    sb_add(&hi->first, "", 0);
    sb_add(&hi->allseqid, "", 0);
    sb_add(&hi->alltitles, "", 0);
    hi->ntax = 0;
    hi->taxid = 0;
}

void swgpu__hdr_info_free(swgpu__hdr_info_t *hi)
{
    free(hi->x.seqid.p);
    free(hi->x.acc.p);
    free(hi->x.accver.p);
    free(hi->first.p);
    free(hi->allseqid.p);
    free(hi->alltitles.p);
    free(hi->info.p);
    free(hi->taxids);
    memset(hi, 0, sizeof *hi);
}

/* A sequence's id and description as blastdbcmd's FASTA dump shows its
 * header: the first Blast-def-line gives the id (its Seq-ids, or without
 * -parse_seqids the title's first word) and the description (the title, or
 * the rest of it); each further Blast-def-line (a sequence stored once for
 * several entries) adds " >ids title" to the description. */
int swgpu__blastdb_header(const uint8_t *p, size_t n, swgpu__sbuf_t *id, swgpu__sbuf_t *desc,
                          swgpu__hdr_info_t *hi, const char **why)
{
    ber_t set, def;
    const uint8_t *pos, *t, *t0 = NULL;
    size_t tl, tl0 = 0;
    int r, ord, ord0 = 0, k = 0;
    swgpu__hdr_cols_t *x = hi ? &hi->x : NULL;
    if (hi)
        info_reset(hi);
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
            if (parse_defline(&def, 1, id, &t, &tl, &ord, x, why))
                return -1;
            ord0 = ord;
            t0 = t;
            tl0 = tl;
            if (hi && info_defline(hi, 0, t, tl))
                return *why = "out of memory", -1;
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
            if (parse_defline(&def, 0, desc, &t, &tl, &ord, x, why))
                return -1;
            if (hi && info_defline(hi, k - 1, t, tl))
                return *why = "out of memory", -1;
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
    if (id->oom || desc->oom || (hi && (hi->first.oom || hi->allseqid.oom ||
                                        hi->alltitles.oom || x->seqid.oom || x->acc.oom ||
                                        x->accver.oom)))
        return *why = "out of memory", -1;
    t = (const uint8_t *)desc->p;
    tl = desc->n;
    trim(&t, &tl);
    memmove(desc->p, t, tl);
    desc->p[tl] = 0;
    desc->n = tl;
    if (hi)
        info_finish(hi, ord0, id, desc, t0, tl0);
    if (hi && hi->info.oom)
        return *why = "out of memory", -1;
    return 0;
}

