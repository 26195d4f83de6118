/*
 * read.c - swgpu_seqset_read and swgpu_seqset_read_fd: a sequence file of
 * any kind we read (FASTA/FASTQ, plain or gzip: fasta.c; a makedb
 * database: db.c; a BLAST database: blastdb.c) as a sequence set.  The top
 * of src/io: nothing else here calls it.
 */
#define _POSIX_C_SOURCE 200809L
#include "io/io.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

/* The sequences of a makedb database, in database order, as a set (so that
 * the same file serves as queries and database: all against all). */
static int seqset_from_db(const char *path, swgpu_alphabet_t alphabet, swgpu_seqset_t **out,
                          swgpu_read_info_t *info)
{
    swgpu_db_t *db = NULL;
    swgpu_seqset_t *s = NULL;
    int rc = swgpu_db_open(path, alphabet, &db, info);
    if (rc < 0)
        return rc;
    if (!(s = swgpu__seqset_new(swgpu_db_alphabet(db)))) {
        rc = swgpu__fail(SWGPU_ENOMEM, "file %s: out of memory", path);
        goto done;
    }
    if ((rc = swgpu__seqset_reserve(s, swgpu_db_residues(db))) < 0)
        goto done;
    for (size_t i = 0; i < swgpu_db_size(db); i++) {
        swgpu_seq_t q;
        uint8_t *res;
        if ((rc = swgpu_db_get(db, i, &q)) < 0 ||
            (rc = swgpu__seqset_append(s, q.id, strlen(q.id), q.desc, strlen(q.desc), q.len,
                                       &res)) < 0)
            goto done;
        if (q.len)
            memcpy(res, q.res, q.len);
    }
    if (info) {
        info->n_records = s->n;
        info->n_residues = s->off[s->n];
        info->max_len = s->max_len;
    }
    *out = s;
    s = NULL;
done:
    swgpu_seqset_destroy(s);
    swgpu_db_destroy(db);
    return rc;
}

/* fd (closed here) named path read as FASTA/FASTQ, or as the makedb
 * database it turns out to be */
static int read_fd(int fd, const char *path, int stream, swgpu_alphabet_t alphabet,
                   swgpu_seqset_t **out, swgpu_read_info_t *info)
{
    int rc = swgpu__fasta_read_fd(fd, path, stream, alphabet, out, info);
    return rc == 1 ? seqset_from_db(path, alphabet, out, info) : rc;
}

int swgpu_seqset_read(const char *path, swgpu_alphabet_t alphabet,
                      swgpu_seqset_t **out, swgpu_read_info_t *info)
{
    swgpu_read_info_t dummy;
    int rc, fd = -1;
    if (!info) info = &dummy;
    memset(info, 0, sizeof *info);
    *out = NULL;
    if (!path)
        return swgpu__fail(SWGPU_EINVAL, "seqset_read: no file name");
    if (alphabet != SWGPU_AUTO && alphabet != SWGPU_PROTEIN && alphabet != SWGPU_DNA)
        return swgpu__fail(SWGPU_EINVAL, "file %s: invalid alphabet %d", path, (int)alphabet);
    if (swgpu__blastdb_probe(path)) {
        rc = swgpu__blastdb_read(path, alphabet, out, info, NULL, NULL);
        if (rc)
            memset(info, 0, sizeof *info);
        return rc;
    }
    if ((fd = swgpu__open_input(path)) < 0)
        return fd;
    return read_fd(fd, path, 0, alphabet, out, info);
}

int swgpu_seqset_read_fd(int fd, const char *name, swgpu_alphabet_t alphabet,
                         swgpu_seqset_t **out, swgpu_read_info_t *info)
{
    swgpu_read_info_t dummy;
    if (!info) info = &dummy;
    memset(info, 0, sizeof *info);
    if (!out)
        return swgpu__fail(SWGPU_EINVAL, "seqset_read_fd: NULL result pointer");
    *out = NULL;
    if (!name)
        name = "(stream)";
    if (alphabet != SWGPU_AUTO && alphabet != SWGPU_PROTEIN && alphabet != SWGPU_DNA)
        return swgpu__fail(SWGPU_EINVAL, "file %s: invalid alphabet %d", name, (int)alphabet);
    int own = dup(fd); /* read_fd closes it, not the caller's */
    if (own < 0)
        return swgpu__fail(SWGPU_EIO, "file %s: %s", name, strerror(errno));
    return read_fd(own, name, 1, alphabet, out, info);
}

