/*
 * blastdb.h - NCBI BLAST databases (as makeblastdb writes them, format
 * versions 4 and 5, one volume or several behind alias files) read as a
 * sequence set: the two entry points that db.c and seqio.c call.
 */
#ifndef SWGPU_BLASTDB_H
#define SWGPU_BLASTDB_H

#include "internal.h"

/**
 * 1 when path names a BLAST database, else 0: either a prefix P that is not
 * itself a regular file while P.pal, P.pin, P.nal or P.nin is one, or one of
 * those four files itself (its name less the extension is then the prefix).
 */
int swgpu__blastdb_probe(const char *path);

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

#endif /* SWGPU_BLASTDB_H */
