/*
 * io/dbpath.c - a database name resolved as BLAST+ resolves one: the name
 * as given (relative to the current directory) first; when nothing by that
 * name exists (no file, no BLAST database) and the name is relative, each
 * directory of $BLASTDB (':'-separated) in turn.  As blastp 2.12 does, a
 * relative name with a '/' (sub/db) is looked for under $BLASTDB too.
 */
#define _POSIX_C_SOURCE 200809L
#include "io/io.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* 1 when path names something a database can be read from: a file (of any
 * kind: a FIFO serves too) or a BLAST database prefix */
static int db_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 || swgpu__blastdb_probe(path);
}

int swgpu__db_resolve(const char *path, char **found)
{
    *found = NULL;
    const char *dirs = getenv("BLASTDB");
    if (!path || !*path || !strcmp(path, "-") || path[0] == '/' || !dirs || !*dirs ||
        db_exists(path))
        return SWGPU_OK;
    size_t plen = strlen(path);
    for (const char *d = dirs; *d;) {
        size_t dlen = strcspn(d, ":");
        if (dlen) {
            char *cand = malloc(dlen + 1 + plen + 1);
            if (!cand)
                return swgpu__fail(SWGPU_ENOMEM, "database %s: out of memory", path);
            memcpy(cand, d, dlen);
            cand[dlen] = '/';
            memcpy(cand + dlen + 1, path, plen + 1);
            if (db_exists(cand)) {
                *found = cand;
                return SWGPU_OK;
            }
            free(cand);
        }
        d += dlen;
        if (*d == ':')
            d++;
    }
    return swgpu__fail(SWGPU_EIO, "file %s: %s, here or in any directory of $BLASTDB (%s)", path,
                       strerror(ENOENT), dirs);
}
