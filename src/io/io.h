/*
 * io/io.h - sequences in and out (never installed): the sequence set
 * (struct swgpu_seqset), FASTA/FASTQ reading (plain or gzip), the database
 * (struct swgpu_db, makedb files mapped from disk) and BLAST databases.
 *
 * A set or database is owned by whoever created it and freed with its
 * destroy call; a database opened from a file keeps the file mapped.
 * Failures return a negative status naming the file, record and problem.
 */
#ifndef SWGPU_IO_H
#define SWGPU_IO_H

#include "base/base.h"

struct swgpu_seqset {
    swgpu_alphabet_t alphabet;
    size_t n, cap;          /* sequences, allocated slots */
    uint64_t *off;          /* n+1 offsets into res (off[0] = 0) */
    uint8_t *res;           /* encoded residues, concatenated */
    uint64_t res_cap;
    size_t *name_off;       /* offsets into names: id NUL desc NUL per record */
    char *names;
    size_t names_len, names_cap;
    uint64_t max_len;
    int blast_info;         /* read from a BLAST database: each record's names are
                               followed by its swgpu__hdr_info_t block */
};

/* seqset.c: a new empty set (NULL: no memory); room for one more record; for
 * residues up to need in all, but not beyond max bytes (SWGPU_EBUDGET);
 * a record's names appended */
swgpu_seqset_t *swgpu__seqset_new(swgpu_alphabet_t alphabet);
int swgpu__seqset_reserve_slot(swgpu_seqset_t *s);
int swgpu__seqset_reserve_max(swgpu_seqset_t *s, uint64_t need, uint64_t max);
int swgpu__seqset_add_names(swgpu_seqset_t *s, const char *id, size_t idlen, const char *desc,
                            size_t dlen);
/* n bytes appended to the names (after the last record's: its info block) */
int swgpu__seqset_add_bytes(swgpu_seqset_t *s, const char *p, size_t n);
/* SWGPU_AUTO's choice from a histogram of the letters (upper case) */
swgpu_alphabet_t swgpu__alphabet_decide(const uint64_t hist[256]);
/* letter -> code of an alphabet, SWGPU__NOCODE for a letter outside it */
#define SWGPU__NOCODE 0xFF
void swgpu__encode_table(swgpu_alphabet_t a, uint8_t t[256]);
/* fasta.c: fd (closed here) named path read as FASTA/FASTQ into *out
 * (info filled); stream: a pipe, read once (a database in it is an error).
 * Returns 1, nothing read, when the file is a makedb database (the caller
 * opens it as one: read.c). */
int swgpu__fasta_read_fd(int fd, const char *path, int stream, swgpu_alphabet_t alphabet,
                         swgpu_seqset_t **out, swgpu_read_info_t *info);
/** Room for `residues` more residues (appending them then moves nothing). */
int swgpu__seqset_reserve(swgpu_seqset_t *s, uint64_t residues);
/** Append a record: its id and description (copied, lengths given, no NUL
 *  inside) and len residue codes, which the caller writes through *res
 *  (valid until the next change to s; NULL when len is 0). */
int swgpu__seqset_append(swgpu_seqset_t *s, const char *id, size_t idlen, const char *desc,
                         size_t dlen, size_t len, uint8_t **res);
/** Bytes a FASTA/FASTQ reading may hold (line buffer, residues, names) for
 *  the whole process; beyond them it fails with SWGPU_EBUDGET naming the
 *  line.  0 (the default): SWGPU_READ_LIMIT (bytes, or with a suffix K, M, G,
 *  T), else half of the physical memory. */
void swgpu__set_read_limit(uint64_t bytes);
/* The whole file (plain or gzip, checked as sequence files are: data after the
 * gzip stream that is not gzip is an error) in a NUL-terminated buffer of *len
 * bytes that the caller frees; more than max bytes is SWGPU_EFORMAT. */
int swgpu__read_file(const char *path, size_t max, char **out, size_t *len);
/* the limit of one reading (swgpu__set_read_limit, SWGPU_READ_LIMIT, half
 * the memory); < 0 with the message when SWGPU_READ_LIMIT is bad */
int swgpu__get_read_limit(uint64_t *out);
/* raw[c]: 0 skip (whitespace, digit), 0xFF binary data or a '\r' inside a
 * line, else the byte a sequence line stores (letters upper-cased) */
void swgpu__fasta_raw_table(uint8_t raw[256]);
/* A header line h[0, len) (without its '>' / '@') as every FASTA reader
 * splits it: the id is h[id, id + idlen), its first word (space or tab
 * delimited; idlen 0: none), the description h[desc, desc + dlen), the rest
 * with the blanks around it trimmed.  swgpu__fasta_header_bad: the offset
 * of the first byte a header may not hold (a control byte other than tab,
 * DEL; '\r' among them), len when none. */
typedef struct {
    size_t id, idlen, desc, dlen;
} swgpu__fasta_hdr_t;
void swgpu__fasta_split_header(const char *h, size_t len, swgpu__fasta_hdr_t *out);
size_t swgpu__fasta_header_bad(const char *h, size_t len);
/* open(path) for reading: the descriptor, or SWGPU_EIO with the message
 * ("file P: is a socket ...", "file P: No such file or directory") */
int swgpu__open_input(const char *path);



/*
 * A database: sequences sorted by ascending length (ties: database order),
 * which is the order every engine scans.  "Database order" is the order of
 * the input file; orig[k] maps sorted index k to it, rank[i] back.
 */
struct swgpu_db {
    swgpu_alphabet_t alphabet;
    uint64_t n;             /* sequences */
    uint64_t total_res;     /* residues */
    uint64_t max_len;
    const uint8_t *res;     /* residues in sorted order, concatenated */
    const uint64_t *off;    /* n+1 offsets into res, sorted order */
    const uint32_t *orig;   /* sorted index -> database index */
    const uint32_t *rank;   /* database index -> sorted index */
    const char *names;      /* "id\0desc\0" per sequence, database order (and
                               with blast_info, the record's info block after) */
    const uint64_t *name_off; /* n offsets into names, database order */
    /* A part of a larger database (swgpu_db_part, swgpu_db_open_part): its
     * sequences are the whole database's scan positions [part_first,
     * part_first + n); orig[] holds the whole database's indices, and rank,
     * names and name_off are the whole database's arrays (indexed by them).
     * whole_n == 0: not a part (a zero-initialised struct is a whole one). */
    uint64_t part_first, whole_n, whole_res;
    uint64_t whole_max_len; /* a part's: the whole database's longest sequence */
    /* ownership */
    void *map;              /* mmap base when opened from a file */
    size_t map_len;
    void *map_res;          /* a part of a makedb file: its residues' own mapping */
    size_t map_res_len;
    swgpu__file_id_t *src;  /* the files it was read from: the makedb file, or a BLAST
                               database's files (swgpu_db_write never replaces one) */
    size_t n_src;
    void *owned[6];         /* malloc'ed arrays to free */
    int blast_info;         /* a BLAST database's: swgpu__hdr_info_t blocks in names */
};

/** Sequences and residues of the whole database a handle belongs to (its
 *  own counts unless it is a part); search statistics use these. */
static inline uint64_t swgpu__db_whole_n(const swgpu_db_t *db)
{
    return db->whole_n ? db->whole_n : db->n;
}
static inline uint64_t swgpu__db_whole_res(const swgpu_db_t *db)
{
    return db->whole_n ? db->whole_res : db->total_res;
}

/* --------------------------------- database names (dbpath.c) */

/**
 * A database name resolved as BLAST+ resolves one.  *found = NULL: use path
 * as given (something by that name exists, or path is absolute or "-", or
 * $BLASTDB is unset or empty).  Otherwise each ':'-separated directory D of
 * $BLASTDB in order: *found = "D/path" (malloc'ed, the caller's) for the
 * first where a file or BLAST database of that name exists; none:
 * SWGPU_EIO naming path and $BLASTDB.
 */
int swgpu__db_resolve(const char *path, char **found);

/* --------------------------------- BLAST databases (blastdb.c) */

/**
 * 1 when path names a BLAST database, else 0: either a prefix P that is not
 * itself a regular file while P.pal, P.pin, P.nal or P.nin is one, or one of
 * those four files itself (its name less the extension is then the prefix).
 */
int swgpu__blastdb_probe(const char *path);
/** The bytes of the BLAST database path's sequence, header and index files
 *  (P.pin/psq/phr or P.nin/nsq/nhr, and the volumes P.00, P.01, ... of a
 *  database that makeblastdb split), summed. */
uint64_t swgpu__blastdb_bytes(const char *path);

/**
 * Read every sequence of the BLAST database path (as swgpu__blastdb_probe
 * accepts it) in OID order, volume after volume, into a new set (*out, the
 * caller's).  alphabet: SWGPU_PROTEIN reads P.pal or P.pin, SWGPU_DNA P.nal
 * or P.nin, SWGPU_AUTO whichever exists (SWGPU_EINVAL when both do).
 * Each sequence's id and description follow swgpu_seq_t's meaning, taken
 * from the first Blast-def-line of its header (see blastdb.c); trailing '*'
 * codes are stripped and sequences left empty skipped, as the FASTA reader
 * does.  info (may be NULL) gets the counts.  files (may be NULL): a
 * malloc'ed array of every file read (alias, index, sequence and header
 * files), *nfiles long, so that no output replaces one.  Every offset and
 * length is checked against the files: a damaged database is SWGPU_EDB
 * naming the file and the OID.  Thread safety: none needed (no state).
 */
int swgpu__blastdb_read(const char *path, swgpu_alphabet_t alphabet, swgpu_seqset_t **out,
                        swgpu_read_info_t *info, swgpu__file_id_t **files, size_t *nfiles);

/* ---- shared by the files of the makedb format: db.c (build, write, open)
 *      and dbpart.c (parts) ---- */

#define SWGPU__DB_MAGIC "SWGPU_DB"
#define SWGPU__DB_HDR 160u /* header bytes */
#define SWGPU__DB_PAD 64u  /* zero bytes, at least, after the last residue */
/* the sections of a makedb file */
enum { SWGPU__SEC_OFF, SWGPU__SEC_NAME_OFF, SWGPU__SEC_ORIG, SWGPU__SEC_RANK, SWGPU__SEC_NAMES,
       SWGPU__SEC_RES, SWGPU__NSEC };
/* owned[] slots of an in-memory database */
enum { SWGPU__OWN_RES, SWGPU__OWN_OFF, SWGPU__OWN_ORIG, SWGPU__OWN_RANK, SWGPU__OWN_NAMES,
       SWGPU__OWN_NAME_OFF };

typedef struct {
    uint64_t off, size;
} swgpu__db_sec_t;

/* What a file's header says, checked against the file's size. */
typedef struct {
    uint32_t alphabet;
    uint64_t n, total, max_len;
    swgpu__db_sec_t sec[SWGPU__NSEC];
} swgpu__db_hdr_t;

/** The checks of the first SWGPU__DB_HDR bytes h of a makedb file (path)
 *  of size bytes; what it says into H. */
int swgpu__db_check_header(const unsigned char *h, uint64_t size, const char *path,
                           swgpu__db_hdr_t *H);
/** The size and identity of the open makedb file fd (path), after the
 *  checks that come before its header is read: fstat works, the file holds
 *  at least a header, the host is little-endian. */
int swgpu__db_file_size(int fd, const char *path, uint64_t *size, swgpu__file_id_t *id);
/** 1 on a little-endian host (the only ones makedb files support). */
int swgpu__host_is_le(void);
/** The layout of a makedb file of n sequences, total residues and
 *  names_size bytes of names: the sections into sec, the file size returned. */
uint64_t swgpu__db_layout(uint64_t n, uint64_t total, uint64_t names_size,
                          swgpu__db_sec_t sec[SWGPU__NSEC]);
/** The header of a makedb file of db (its alphabet, n, total_res,
 *  max_len), laid out as sec, file_size bytes, payload CRC payload_crc. */
void swgpu__db_header(unsigned char h[SWGPU__DB_HDR], const swgpu_db_t *db,
                      const swgpu__db_sec_t sec[SWGPU__NSEC], uint64_t file_size,
                      uint32_t payload_crc);
/** CRC-32 of p[0, len) on `threads` threads (0: all cores); *bad = 1 when
 *  a byte of [res, res + nres) (within p's range) is >= lim. */
uint32_t swgpu__crc_parallel(const unsigned char *p, uint64_t len, const unsigned char *res,
                             uint64_t nres, uint8_t lim, uint8_t *bad, int threads);
/** A makedb file's index checked, in blocks of blk sequences on `threads`
 *  threads (0: all cores): offsets (off[0] = 0, off[n] = total, lengths
 *  ascending), the permutation orig / rank, equal lengths in database
 *  order, the longest max_len, and each name offset the end of the
 *  sequence before's two strings in names[0, nsize).  SWGPU_EDB for the
 *  first problem (the lowest sequence), its message naming path and that
 *  sequence, exactly as one pass in order finds it. */
int swgpu__db_check_index(const char *path, uint64_t n, uint64_t total, uint64_t max_len,
                          const uint64_t *off, const uint32_t *orig, const uint32_t *rank,
                          const uint64_t *name_off, const char *names, uint64_t nsize,
                          uint64_t blk, int threads);
/** The order tests of sequence k of a makedb file's index (offsets off,
 *  order orig and rank of n sequences), as one pass in order makes them:
 *  0, or what fails first: SWGPU__SEQ_LEN (out of length order),
 *  SWGPU__SEQ_PERM (the permutation), SWGPU__SEQ_TIE (equal lengths out of
 *  database order).  swgpu__db_seq_fail: that problem as SWGPU_EDB, its
 *  message naming path and k. */
enum { SWGPU__SEQ_LEN = 1, SWGPU__SEQ_PERM, SWGPU__SEQ_TIE };
int swgpu__db_seq_bad(uint64_t n, const uint64_t *off, const uint32_t *orig,
                      const uint32_t *rank, uint64_t k);
int swgpu__db_seq_fail(const char *path, int why, uint64_t k);
/** The end of a sequence's two strings (id, description) at pos in a
 *  makedb file's names[0, nsize): the position after the second's NUL, or
 *  UINT64_MAX when they end past the section. */
uint64_t swgpu__db_names_end(const char *names, uint64_t nsize, uint64_t pos);
/** A mapping of bytes [pos, end) of fd (path names it in messages): *base
 *  and *len to munmap, the return value points at byte pos; NULL after a
 *  failure (message set). */
const unsigned char *swgpu__db_map_range(int fd, const char *path, uint64_t pos, uint64_t end,
                                         void **base, size_t *len);

/* ---- dbstream.c: what a search streamed from a makedb file needs ---- */

/** A part [from, to) of a database as fractions of its residues, checked
 *  (0 <= from <= to <= 1): SWGPU_EINVAL "WHAT [from, to): expected ..." */
int swgpu__db_part_check(const char *what, double from, double to);

/** The scan position of the first sequence whose first residue lies at or
 *  after floor(x * total) of off[0..n] (sorted): the cut between parts at
 *  fraction x (swgpu_db_open_part's). */
uint64_t swgpu__db_cut_at(const uint64_t *off, uint64_t n, uint64_t total, double x);

/** A makedb file's figures, from its header; after swgpu__db_stream_open,
 *  the file open and its index mapped once for every part. */
typedef struct {
    char *path;           /* the file's name, $BLASTDB resolved (malloc'ed: free it) */
    uint64_t size;        /* file bytes */
    uint64_t n, total;    /* sequences, residues */
    uint64_t max_len;     /* the longest sequence */
    uint64_t res_off;     /* the residue section's offset */
    uint64_t index_bytes; /* bytes outside the residue section */
    uint32_t crc;         /* the payload checksum the header holds */
    swgpu_alphabet_t alphabet;
    swgpu__db_sec_t sec[SWGPU__NSEC];
    swgpu__file_id_t fid;
    /* swgpu__db_stream_open's: */
    int fd;               /* the file (-1: not open) */
    void *imap;           /* the index sections, one mapping (NULL once a hits database
                             owns it) */
    size_t ilen;
    const unsigned char *ix; /* the index's first byte, at file offset ix_lo */
    uint64_t ix_lo;
    uint8_t *seen;        /* n bits: the database indices parts have held so far */
} swgpu__db_stream_t;
/** path's figures when it names a makedb file (after $BLASTDB): 1; 0 when
 *  it names another kind of database (s->path NULL); < 0 after an error. */
int swgpu__db_stream_probe(const char *path, swgpu__db_stream_t *s);
/** The probed file opened for its parts: its index mapped (not read), the
 *  scan order's first and last offsets and the longest sequence checked. */
int swgpu__db_stream_open(swgpu__db_stream_t *s);
/** What probe and open took, released (s->path freed). */
void swgpu__db_stream_close(swgpu__db_stream_t *s);
/** The file's n + 1 residue offsets in scan order, mapped (*base and *len
 *  to munmap); NULL after a failure (message set). */
const uint64_t *swgpu__db_stream_offsets(const swgpu__db_stream_t *s, void **base, size_t *len);
/**
 * The part [from, to) of an open stream (the cuts of swgpu_db_open_part):
 * its offsets and order read into memory of its own (only the part's
 * entries of the index, and one before it), its residues mapped and read;
 * rank, names and name_off point into the stream's one mapping (the part
 * must be destroyed before the stream is closed).  Checked: the offsets in
 * length order, the order entries in range, each database index held by
 * one part only (s->seen; parts are opened one at a time), residue codes;
 * with names, also each sequence's rank entry and names (what --no-self
 * reads).  *crc: the CRC-32 of the part's residues.
 */
int swgpu__db_stream_part(swgpu__db_stream_t *s, double from, double to, int names,
                          swgpu_db_t **out, uint32_t *crc);
/** The CRC-32 of the payload bytes outside the residues: *pre of
 *  [header end, residue section), *post of [its last residue, file end). */
int swgpu__db_outer_crc(const swgpu__db_stream_t *s, uint32_t *pre, uint32_t *post);
/** 32-bit CRC of a then b, b of len_b bytes (zlib's crc32_combine). */
uint32_t swgpu__crc_combine(uint32_t a, uint32_t b, uint64_t len_b);
/** A database of the sequences t[0..n) (the whole's database indices,
 *  ascending, no repeats) of the open stream s: a part of the whole (its
 *  indices, names and size), the residues of those sequences only, their
 *  index entries and names checked.  It takes over the stream's index
 *  mapping (s->imap NULL after). */
int swgpu__db_open_hits(swgpu__db_stream_t *s, const uint64_t *t, size_t n, swgpu_db_t **out);
/** The bytes of a database that is not a makedb file, as files on disk: a
 *  FASTA file's size, a BLAST database's volume files' sizes summed (0
 *  when unknown: a pipe, a name that is not there). */
uint64_t swgpu__db_input_bytes(const char *path);

/** Is fd a pipe, socket or terminal (read once, from its start, no seek)? */
int swgpu__fd_is_stream(int fd);
/** A FASTA/FASTQ database from a stream, read once to its end and built in
 *  memory; fd is consumed. */
int swgpu__db_from_stream(int fd, const char *path, swgpu_alphabet_t alphabet, swgpu_db_t **out,
                          swgpu_read_info_t *info);

/* ---- the readers swgpu_db_open (dbbuild.c) sends a file to (db.c) ---- */

/** A BLAST database read and built in memory (its files in src). */
int swgpu__db_open_blast(const char *path, swgpu_alphabet_t alphabet, swgpu_db_t **out,
                         swgpu_read_info_t *info);
/** The makedb file fd (consumed) mapped and validated; its alphabet must
 *  be alphabet unless that is SWGPU_AUTO. */
int swgpu__db_open_file(int fd, const char *path, swgpu_alphabet_t alphabet, swgpu_db_t **out,
                        swgpu_read_info_t *info);
/** A FASTA/FASTQ file fd (consumed) read by fasta.c, built in memory. */
int swgpu__db_read_fasta(int fd, const char *path, swgpu_alphabet_t alphabet, swgpu_db_t **out,
                         swgpu_read_info_t *info);
/** Does the start of a file look like binary data (not text, not gzip)? */
int swgpu__looks_binary(const unsigned char *p, size_t n);

/* ---- a plain FASTA file read on several threads: fastapar.c (the file
 *      cut into pieces at record starts, checked and counted, then copied
 *      into place) for dbbuild.c (the database laid out and sorted) ---- */

typedef struct swgpu__fpar swgpu__fpar_t;
/* what pass 1 found in the whole file */
typedef struct {
    uint64_t n;          /* records kept (non-empty) */
    uint64_t residues;   /* their residues */
    uint64_t names;      /* bytes of their "id\0desc\0" */
    uint64_t max_len;
    uint64_t n_empty;
    swgpu_alphabet_t alphabet; /* the one asked for, or decided over the file */
} swgpu__fpar_sum_t;

/** Pass 1 over the regular file fd (not consumed) named path, of size
 *  bytes, on `threads` threads: checks every record as fasta.c does (the
 *  first bad record in file order is the one named, with its line), logs
 *  the empty-record warning, fills *sum.  Returns 1, nothing held, when the
 *  file is for the sequential reader (gzip, FASTQ, too large to map, or a
 *  reading that could reach the read limit), < 0 on an error (message set),
 *  0 with *out (swgpu__fpar_free) otherwise. */
int swgpu__fpar_scan(int fd, const char *path, uint64_t size, swgpu_alphabet_t alphabet,
                     int threads, swgpu__fpar_t **out, swgpu__fpar_sum_t *sum);
/** Lengths (len) and then name offsets (name_off) of the kept records in
 *  file order, n entries each (len may be name_off: it is overwritten). */
void swgpu__fpar_lengths(swgpu__fpar_t *f, uint64_t *len);
void swgpu__fpar_name_offsets(swgpu__fpar_t *f, uint64_t *name_off);
/** Pass 2: names to names[name_off[i]...], residues encoded to
 *  res + off[rank[i]] (laid out from pass 1's counts); logs the unknown
 *  letters' warning and sets info->n_unknown.  < 0 when the file changed
 *  since pass 1. */
int swgpu__fpar_fill(swgpu__fpar_t *f, char *names, uint8_t *res, const uint64_t *off,
                     const uint32_t *rank, swgpu_read_info_t *info);
void swgpu__fpar_free(swgpu__fpar_t *f);

/* ---- shared by the files of BLAST databases: blastdb.c (volumes,
 *      residues) and blastdb_hdr.c (headers) ---- */

typedef struct {
    char *p;
    size_t n, cap;
    int oom;
} swgpu__sbuf_t; /* a growing string; oom set when it could not grow */

/* one defline's sseqid, sacc and saccver as blastp prints them, its taxid */
typedef struct {
    swgpu__sbuf_t seqid, acc, accver;
    int64_t taxid;
} swgpu__hdr_cols_t;

/**
 * What blastp 2.12 prints of a sequence in its subject columns, read from
 * its header (blastdb_hdr.c): info holds the block kept after the record's
 * "id\0desc\0" in a database's names, NUL-terminated strings:
 *   flag      "P": made with -parse_seqids, "O": not (the four id fields
 *             are then empty: blastp prints the id, as for FASTA); "F" (and
 *             nothing after): a record added by swgpu_seqset_add, printed
 *             as a FASTA record;
 *   seqid acc accver    sseqid sacc saccver (the first defline's);
 *   allseqid            each defline's sseqid, joined by ';';
 *   title alltitles     the first defline's title as stored (untrimmed;
 *                       without -parse_seqids the whole FASTA header line),
 *                       each one's joined by "<>";
 *   taxid               staxid: the first taxid in defline order ("": none);
 *   taxids              staxids: every defline's taxid (0: none), ascending,
 *                       each once, joined by ';'.
 * A field that equals another is stored as SWGPU__SAME_AS (one byte 0x01, a
 * control byte no header holds): seqid the id, allseqid seqid, title (P)
 * the description, title (O) "id desc" (the header line as the FASTA
 * reader splits it), alltitles title.
 * The rest is scratch space; the caller zero-initialises the struct and frees
 * it with swgpu__hdr_info_free.
 */
#define SWGPU__SAME_AS "\x01"
typedef struct {
    swgpu__sbuf_t info;
    swgpu__hdr_cols_t x;
    swgpu__sbuf_t first, allseqid, alltitles;
    int64_t *taxids, taxid;
    size_t ntax, captax;
} swgpu__hdr_info_t;
void swgpu__hdr_info_free(swgpu__hdr_info_t *hi);

/** A sequence's id and description, into id and desc, and (hi not NULL) its
 *  info block into hi->info, from its header record p[0 .. n): nonzero if
 *  the record is invalid (*why says how) or a string could not grow (oom
 *  set, or *why "out of memory"). */
int swgpu__blastdb_header(const uint8_t *p, size_t n, swgpu__sbuf_t *id, swgpu__sbuf_t *desc,
                          swgpu__hdr_info_t *hi, const char **why);

#endif /* SWGPU_IO_H */
