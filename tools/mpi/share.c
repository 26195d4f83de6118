/*
 * share.c - swgpu-mpi's database split (mpi_db_open): each rank's share.
 *
 * The database's scan order (sorted by length) is cut by residues into one
 * part per rank (swgpu_db_open_part): equal parts, or parts proportional to
 * the ranks' speeds when the ranks differ (their backend, thread count,
 * cores, CPU model or GPUs), measured by each rank scanning the first
 * queries against a small synthetic database, or to SWGPU_MPI_WEIGHTS.
 * Each rank maps only its part of a makedb file (a shared file system is
 * assumed) or keeps only its part of a FASTA file.  A makedb part larger
 * than the rank's memory budget (--max-memory, else 3/4 of the node's
 * memory shared by the node's ranks) is streamed from disk in parts as swgpu
 * search streams a whole database (mpi_stream; search.c scans it, with
 * mpi_stream_agree and mpi_stream_held from here).  Rank 0
 * checks the whole-file checksum, reading the file in pieces.
 */
#define _POSIX_C_SOURCE 200809L
#include "mpi_cli.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { BAL_AUTO, BAL_EQUAL, BAL_MEASURE, BAL_WEIGHTS, BAL_BAD };

static int str_cmp(const void *a, const void *b)
{
    return strcmp((const char *)a, (const char *)b);
}

/* What makes two ranks scan at different speeds, as far as a rank can see:
 * the options, the cores, the CPU model and the node's GPU models (a rank's
 * own GPU index differs between the ranks of a node by design). */
static void describe(const swgpu_opts_t *o, char *d, size_t n)
{
    char cpu[256] = "?", gpus[16][96], line[256], all[1600] = "none";
    int ng = 0;
    FILE *fp = fopen("/proc/cpuinfo", "r");
    while (fp && fgets(line, sizeof line, fp))
        if (!strncmp(line, "model name", 10)) {
            snprintf(cpu, sizeof cpu, "%s", strchr(line, ':') ? strchr(line, ':') + 1 : line);
            break;
        }
    if (fp)
        fclose(fp);
    DIR *dir = opendir("/proc/driver/nvidia/gpus");
    struct dirent *de;
    while (dir && (de = readdir(dir)) && ng < 16) {
        char path[512];
        if (de->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "/proc/driver/nvidia/gpus/%s/information", de->d_name);
        snprintf(gpus[ng], sizeof gpus[0], "?");
        if ((fp = fopen(path, "r"))) {
            while (fgets(line, sizeof line, fp))
                if (!strncmp(line, "Model:", 6)) {
                    snprintf(gpus[ng], sizeof gpus[0], "%.90s", line + 6);
                    break;
                }
            fclose(fp);
        }
        ng++;
    }
    if (dir)
        closedir(dir);
    if (ng) {
        qsort(gpus, (size_t)ng, sizeof gpus[0], str_cmp);
        all[0] = 0;
        for (int k = 0; k < ng; k++)
            strncat(all, gpus[k], sizeof all - strlen(all) - 1);
    }
    snprintf(d, n, "backend=%d threads=%d cores=%ld cpu=%s isa=%s env=%s gpus=%s", (int)o->backend,
             o->threads > 0 ? o->threads : (int)sysconf(_SC_NPROCESSORS_ONLN),
             sysconf(_SC_NPROCESSORS_ONLN), cpu,
             getenv("SWGPU_CPU_ISA") ? getenv("SWGPU_CPU_ISA") : "best",
             getenv("SWGPU_BACKEND") ? getenv("SWGPU_BACKEND") : "-", all);
}

/* Scan speed (cells per second) of this rank: the first queries (up to
 * 2,000 residues) against a synthetic database of about a million residues. */
static double measure_speed(const swgpu_seqset_t *queries, const swgpu_opts_t *o)
{
    swgpu_alphabet_t al = swgpu_seqset_alphabet(queries);
    swgpu_seqset_t *ds = NULL, *qs = NULL;
    swgpu_db_t *db = NULL;
    swgpu_matrix_t *m = NULL;
    swgpu_search_result_t *r = NULL;
    char *buf = NULL;
    double speed = 0;
    uint64_t seed = 0x5157475055ull;
    int dna = al == SWGPU_DNA;
    if (swgpu_seqset_create(al, &ds) || swgpu_seqset_create(al, &qs) || !(buf = malloc(8192)))
        goto done;
    for (int i = 0; i < 3000; i++) {
        size_t len = 100;
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        len += (size_t)(seed >> 33) % 600;
        for (size_t k = 0; k < len; k++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            buf[k] = dna ? "ACGT"[(seed >> 40) % 4] : "ARNDCQEGHILKMFPSTWYV"[(seed >> 40) % 20];
        }
        if (swgpu_seqset_add(ds, "c", "", buf, len))
            goto done;
    }
    {
        size_t total = 0;
        for (size_t i = 0; i < swgpu_seqset_size(queries) && total < 2000; i++) {
            swgpu_seq_t q;
            swgpu_seqset_get(queries, i, &q);
            size_t len = q.len < 8000 ? q.len : 8000;
            for (size_t k = 0; k < len; k++)
                buf[k] = swgpu_decode(al, q.res[k]);
            if (swgpu_seqset_add(qs, q.id, "", buf, len))
                goto done;
            total += len;
        }
    }
    if (swgpu_db_from_seqset(ds, &db) ||
        (dna ? swgpu_matrix_dna(2, -3, &m) : swgpu_matrix_builtin("BLOSUM62", &m)))
        goto done;
    {
        swgpu_opts_t oc;
        swgpu_opts_init(&oc, al);
        oc.threads = o->threads;
        oc.backend = o->backend;
        oc.kernel = o->kernel;
        oc.gpus = o->gpus;
        oc.max_gpu_memory = o->max_gpu_memory;
        oc.candidates = 1;
        if (swgpu_search(qs, db, m, &oc, &r) == SWGPU_OK && r->scan_seconds > 0)
            speed = (double)r->cells / r->scan_seconds;
    }
done:
    swgpu_search_result_destroy(r);
    swgpu_matrix_destroy(m);
    swgpu_db_destroy(db);
    swgpu_seqset_destroy(ds);
    swgpu_seqset_destroy(qs);
    free(buf);
    return speed;
}

/* Each rank's share of the database: rank 0's SWGPU_MPI_BALANCE (auto,
 * equal, measure) or SWGPU_MPI_WEIGHTS (one finite number > 0 per rank,
 * their sum finite) for everyone; auto measures only when the ranks differ.
 * -1 on every rank when SWGPU_MPI_BALANCE is another word or
 * SWGPU_MPI_WEIGHTS is not such a list (rank 0 has the message). */
static int shares(const swgpu_seqset_t *queries, const swgpu_opts_t *o, double *w)
{
    int mode = BAL_AUTO, size = mpi_g.size;
    for (int k = 0; k < size; k++)
        w[k] = 1;
    if (mpi_g.rank == 0) {
        const char *b = getenv("SWGPU_MPI_BALANCE"), *ws = getenv("SWGPU_MPI_WEIGHTS");
        if (b && !strcmp(b, "equal"))
            mode = BAL_EQUAL;
        else if (b && !strcmp(b, "measure"))
            mode = BAL_MEASURE;
        else if (b && *b && strcmp(b, "auto")) {
            cli_error("SWGPU_MPI_BALANCE=%s: not auto, equal or measure", b);
            mode = BAL_BAD;
        }
        if (mode != BAL_BAD && ws && *ws) {
            char *end;
            const char *p = ws;
            double sum = 0;
            int k = 0;
            for (; k < size && mode != BAL_BAD && *p; k++) {
                w[k] = strtod(p, &end);
                if (end == p || (*end && *end != ',') || !isfinite(w[k]) || !(w[k] > 0)) {
                    cli_error("SWGPU_MPI_WEIGHTS=%s: weight %d ('%.*s') is not a finite number "
                              "> 0", ws, k + 1, (int)strcspn(p, ","), p);
                    mode = BAL_BAD;
                } else if (!isfinite(sum += w[k])) {
                    cli_error("SWGPU_MPI_WEIGHTS=%s: the weights' sum is too large", ws);
                    mode = BAL_BAD;
                }
                p = *end == ',' ? end + 1 : end;
            }
            if (mode != BAL_BAD && (k < size || *p || p[-1] == ',')) {
                cli_error("SWGPU_MPI_WEIGHTS=%s: expected %d weights (one per rank), "
                          "separated by commas", ws, size);
                mode = BAL_BAD;
            }
            if (mode != BAL_BAD)
                mode = BAL_WEIGHTS;
        }
    }
    MPI_Bcast(&mode, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (mode == BAL_BAD)
        return -1;
    MPI_Bcast(w, size, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (mode == BAL_EQUAL || mode == BAL_WEIGHTS || size == 1)
        return 0;
    if (mode == BAL_AUTO) {
        char mine[1024], *all = malloc((size_t)size * sizeof mine);
        int differ = 0;
        memset(mine, 0, sizeof mine);
        describe(o, mine, sizeof mine);
        MPI_Allgather(mine, (int)sizeof mine, MPI_CHAR, all, (int)sizeof mine, MPI_CHAR,
                      MPI_COMM_WORLD);
        for (int k = 1; all && k < size; k++)
            differ |= memcmp(all, all + (size_t)k * sizeof mine, sizeof mine) != 0;
        free(all);
        if (!differ)
            return 0;
    }
    double speed = measure_speed(queries, o);
    int ok;
    MPI_Allgather(&speed, 1, MPI_DOUBLE, w, 1, MPI_DOUBLE, MPI_COMM_WORLD);
    ok = 1;
    for (int k = 0; k < size; k++)
        ok &= w[k] > 0;
    for (int k = 0; k < size; k++)
        if (!ok)
            w[k] = 1;
    if (mpi_g.rank == 0 && ok) {
        fprintf(stderr, "[swgpu %.2fs] ranks differ: database shares by measured speed (GCUPS):",
                cli_elapsed());
        for (int k = 0; k < size; k++)
            fprintf(stderr, " %.1f", w[k] / 1e9);
        fputc('\n', stderr);
    }
    return 0;
}

mpi_stream_t mpi_stream;

/* The rank's memory budget: --max-memory, else 3/4 of the node's memory
 * shared by the ranks Open MPI starts on it. */
static uint64_t rank_budget(uint64_t max_memory)
{
    const char *ls = getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
    uint64_t all = swgpu_stream_default_memory();
    if (max_memory)
        return max_memory;
    return ls && atoi(ls) > 1 && all != UINT64_MAX ? all / (uint64_t)atoi(ls) : all;
}

/* Whether this rank streams its part [from, to) of path (mpi_stream set):
 * the library's plan under the rank's budget (SWGPU_STREAM_PARTS=N, tests,
 * forces N parts of a makedb file there). */
static int stream_plan(const char *path, const swgpu_opts_t *o, uint64_t max_memory,
                       double from, double to)
{
    uint64_t bytes = 0;
    size_t parts = 1;
    int rc;
    mpi_stream = (mpi_stream_t){path, from, to, 1, rank_budget(max_memory)};
    rc = swgpu_stream_parts_range(path, o, mpi_stream.budget, from, to, &parts, &bytes);
    if (rc == SWGPU_EBUDGET) {
        cli_error("--max-memory %llu: %s", (unsigned long long)mpi_stream.budget,
                  swgpu_last_error());
        return rc;
    }
    if (rc < 0)
        return rc;
    mpi_stream.parts = parts;
    return SWGPU_OK;
}

int mpi_db_open(const char *path, swgpu_alphabet_t type, const swgpu_seqset_t *queries,
                const swgpu_opts_t *o, uint64_t max_memory, swgpu_db_t **db,
                swgpu_read_info_t *info)
{
    double *w = NULL, sum = 0, from, to;
    int rc;
    *db = NULL;
    w = malloc((size_t)mpi_g.size * sizeof *w);
    if (!w)
        cli_error("out of memory for %d ranks' shares", mpi_g.size);
    if (mpi_agree(!w) < 0) {
        free(w);
        return w ? mpi_peer_failed() : SWGPU_ENOMEM;
    }
    if (shares(queries, o, w) < 0) {
        free(w);
        return mpi_g.rank == 0 ? SWGPU_EINVAL : mpi_peer_failed();
    }
    for (int k = 0; k < mpi_g.size; k++)
        sum += w[k];
    /* every rank computes every cut the same way, so neighbours agree */
    from = 0;
    for (int k = 0; k < mpi_g.rank; k++)
        from += w[k];
    to = from + w[mpi_g.rank];
    from /= sum;
    to = mpi_g.rank == mpi_g.size - 1 ? 1.0 : to / sum;
    free(w);
    if (mpi_inject("open"))
        return SWGPU_EINVAL;
    /* the whole-file checksum, which a part is opened without: rank 0 checks
     * it as swgpu does, reading the file in pieces */
    if (mpi_g.rank == 0 && (rc = swgpu_db_verify(path)) < 0)
        return rc;
    if ((rc = stream_plan(path, o, max_memory, from, to)) < 0)
        return rc;
    if (mpi_stream.parts > 1) /* the index alone: search.c streams the part */
        return swgpu_db_open_part(path, type, from, from, db, info);
    return swgpu_db_open_part(path, type, from, to, db, info);
}

/* a streamed part: the hits of r that its range holds, read back */
int mpi_stream_held(const swgpu_search_result_t *r, swgpu_db_t **held)
{
    size_t n = 0;
    for (size_t i = 0; i < r->n_queries; i++)
        n += r->q[i].n_hits;
    uint64_t *t = malloc((n ? n : 1) * sizeof *t);
    if (!t)
        return SWGPU_ENOMEM;
    n = 0;
    for (size_t i = 0; i < r->n_queries; i++)
        for (size_t h = 0; h < r->q[i].n_hits; h++)
            t[n++] = r->q[i].hits[h].target;
    int rc = swgpu_db_open_hits(mpi_stream.path, mpi_stream.from, mpi_stream.to, t, n, held);
    free(t);
    return rc;
}

/* The ranks' streamed parts: said by rank 0 (-v); fitted statistics, which
 * need every score of a query at once, refused on every rank when any rank
 * streams its part (-1 then). */
int mpi_stream_agree(int fitting)
{
    unsigned long long mine = mpi_stream.parts, *all;
    int any = 0;
    if (!(all = malloc((size_t)mpi_g.size * sizeof *all)))
        MPI_Abort(MPI_COMM_WORLD, 1); /* a word a rank, before any work */
    MPI_Allgather(&mine, 1, MPI_UNSIGNED_LONG_LONG, all, 1, MPI_UNSIGNED_LONG_LONG,
                  MPI_COMM_WORLD);
    for (int r = 0; r < mpi_g.size; r++)
        any |= all[r] > 1;
    if (any && mpi_g.rank == 0 && !fitting && cli_verbosity() >= 1) {
        fprintf(stderr, "[swgpu %.2fs] %s: each rank's part streamed from disk in parts:",
                cli_elapsed(), mpi_stream.path);
        for (int r = 0; r < mpi_g.size; r++)
            fprintf(stderr, "%s %llu", r ? "," : "", all[r] ? all[r] : 1);
        fprintf(stderr, " (rank 0's memory budget %llu bytes)\n",
                (unsigned long long)mpi_stream.budget);
    }
    free(all);
    if (!fitting || !any)
        return 0;
    if (mpi_g.rank == 0)
        cli_error("search: a matrix and gaps without published Karlin-Altschul parameters "
                  "(fitted statistics): not yet with a streamed database (a rank's part above "
                  "its --max-memory)");
    return -1;
}
