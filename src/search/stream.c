/*
 * search/stream.c - a search of a makedb file larger than the memory it
 * may use, streamed from disk part by part (swgpu_stream_parts,
 * swgpu_search_stream), and a range of it streamed alone for an swgpu-mpi
 * rank (swgpu_stream_parts_range, swgpu_search_stream_candidates).
 *
 * The database's scan order is cut by residues into parts (the cuts of
 * swgpu_db_open_part).  The file's index is mapped once for all parts;
 * each part reads its own entries of it and its residues (checked), is
 * scanned with every query for its candidates (opts->candidates), then
 * released; while part k is scanned a thread reads part k+1, so at most two
 * parts are in memory and the reading overlaps the scan.  The parts'
 * candidates are merged as a search split across swgpu-mpi ranks is
 * (swgpu_search_merge: the whole database's size in every E-value), the
 * final hits' sequences alone are read back (swgpu__db_open_hits) and
 * aligned there (swgpu_search_align), so the result is swgpu_search()'s on
 * the whole database.  The whole-file checksum is checked as
 * swgpu_db_open() checks it: each part's residues as they are read, the
 * bytes around them once, combined (crc32_combine); a range streamed alone
 * leaves it to swgpu_db_verify().
 */
#define _POSIX_C_SOURCE 200809L
#include "search/search.h"

#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

/*
 * Host bytes a search takes beside the database file's own pages:
 * - per residue of the part being scanned, the engine's layout: the CPU
 *   engine interleaves the residues column by column for its SIMD lanes,
 *   1 byte a residue plus padding (measured: 1.05 bytes a residue with
 *   gen_synth -n 100000, 36.0 M residues: peak RSS 79.0 MB = 3.4 MB of
 *   process + 40.3 MB of file + 37.9 MB); the CUDA engine's host copy is
 *   the DPX pair layout (src/cuda/engine_layout.cu, layout_thread: one
 *   2-byte row per residue of the longer of two neighbours, about
 *   residues / 2 rows) or the packed words of the other kernels (4 bytes
 *   per 4 residues): 1 byte a residue either way;
 * - per sequence of the part: the engines' per-sequence arrays (CPU:
 *   slots, places and codes, about 20 bytes; CUDA: h_gpoff 8 and h_poff 4
 *   bytes per pair, chunk offsets) and the search's own (per query thread
 *   of the CPU engine's many-query scan: a score and an overflow index,
 *   12 bytes);
 * - per sequence of a part, scanned or read: its own entries of the index
 *   (offsets 8 bytes, order 4), read into memory of its own;
 * - the CUDA engine's scores of a batch when it streams its chunks: what
 *   swgpu__gpu_score_bytes gives past its 256 MB minimum (a quarter of a
 *   byte a residue of a part of more than 1 G residues).
 */
#define LAYOUT_PER_RESIDUE 1
#define PER_SEQUENCE 32
#define PER_SEQUENCE_THREAD 12
#define PART_INDEX 12

/* part k of nparts of [from, to): the fraction it starts at (the end: part
 * k + 1's; k = nparts: to itself, so a range's last part ends where the
 * next range starts) */
static double part_from(double from, double to, size_t k, size_t nparts)
{
    return k >= nparts ? to : from + (to - from) * ((double)k / (double)nparts);
}

static uint64_t peak_rss(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return 0;
    return (uint64_t)ru.ru_maxrss * 1024; /* Linux: kilobytes */
}

uint64_t swgpu_stream_default_memory(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || size <= 0)
        return UINT64_MAX;
    return (uint64_t)pages / 4 * 3 * (uint64_t)size;
}

/* SWGPU_STREAM_PARTS=N (tests): N parts of a makedb file, whatever the
 * budget, for every caller of swgpu_stream_parts(_range) (swgpu search,
 * swgpu-mpi's ranks, Python) */
static int forced_parts(size_t *parts)
{
    const char *env = getenv("SWGPU_STREAM_PARTS");
    if (!env || !*env)
        return SWGPU_OK;
    char *end;
    long v = strtol(env, &end, 10);
    if (*end || v < 1)
        return swgpu__fail(SWGPU_EINVAL, "SWGPU_STREAM_PARTS=%s: not a number of parts >= 1", env);
    *parts = (size_t)v;
    return SWGPU_OK;
}

/* the CUDA engine's batch scores past their minimum, for res residues */
static uint64_t score_extra(uint64_t res)
{
    return swgpu__gpu_score_bytes(res) - SWGPU__GPU_SCORE_BYTES_MIN;
}

/* the most host memory any part of nparts needs while it is scanned, the
 * next one read meanwhile */
static uint64_t part_need(const uint64_t *off, const swgpu__db_stream_t *s, double from,
                          double to, size_t nparts, uint64_t per_seq)
{
    uint64_t most = 0;
    for (size_t k = 0; k < nparts; k++) {
        uint64_t a = swgpu__db_cut_at(off, s->n, s->total, part_from(from, to, k, nparts));
        uint64_t b = swgpu__db_cut_at(off, s->n, s->total, part_from(from, to, k + 1, nparts));
        uint64_t c = swgpu__db_cut_at(off, s->n, s->total, part_from(from, to, k + 2, nparts));
        uint64_t need = (off[b] - off[a]) * (1 + LAYOUT_PER_RESIDUE) + (b - a) * per_seq +
                        score_extra(off[b] - off[a]) +
                        (off[c] - off[b]) + (c - b) * PART_INDEX + 2 * SWGPU__DB_PAD;
        most = need > most ? need : most;
    }
    return most;
}

/* a database read whole (not a makedb file) under an explicit budget it
 * exceeds: said, with the way to stream it */
static void warn_whole(const char *path, uint64_t budget)
{
    uint64_t bytes = swgpu__db_input_bytes(path);
    if (bytes > budget)
        swgpu__log(SWGPU_LOG_WARN, "database %s (%llu bytes) is read whole into memory although "
                   "the memory budget is %llu bytes: only a makedb file is streamed from disk "
                   "within the budget (swgpu makedb %s OUT.swdb makes one)", path,
                   (unsigned long long)bytes, (unsigned long long)budget, path);
}

/*
 * The parts: the fewest nparts for which every part k, scanned while part
 * k + 1 is read, fits what the budget leaves beside `fixed':
 *   res_k (1 + LAYOUT_PER_RESIDUE) + seqs_k (PER_SEQUENCE + PART_INDEX +
 *   threads PER_SEQUENCE_THREAD) + res_k+1 + seqs_k+1 PART_INDEX + 2 PAD
 *   <= budget - fixed
 * (res and seqs: a part's residues and sequences), searched upwards from
 * the even cut's estimate, (2 + LAYOUT_PER_RESIDUE) total / (budget -
 * fixed) + 1.  fixed: the process so far (its peak resident set), a bit a
 * sequence (the parts' order check), and with --no-self the index pages
 * the parts' names and ranks are read from (at most the whole index: one
 * mapping shared by the parts).  After the parts, the hits' database takes
 * the process so far and a rank entry (4 bytes) a sequence: that must fit
 * too.  Each part costs an engine's creation (on a GPU: device buffers and
 * the layout), so the fewest parts the budget allows are taken.
 */
int swgpu_stream_parts_range(const char *path, const swgpu_opts_t *opts, uint64_t max_memory,
                             double from, double to, size_t *parts, uint64_t *db_bytes)
{
    swgpu__db_stream_t s;
    void *base = NULL;
    size_t len = 0;
    if (!path || !opts || !parts || !db_bytes)
        return swgpu__fail(SWGPU_EINVAL, "stream_parts: NULL argument");
    *parts = 1;
    *db_bytes = 0;
    int rc = swgpu__db_part_check("stream_parts: part", from, to);
    if (rc < 0)
        return rc;
    rc = swgpu__db_stream_probe(path, &s);
    if (rc < 0)
        return rc;
    if (rc == 0) { /* another kind of database: read whole */
        if (max_memory)
            warn_whole(path, max_memory);
        return SWGPU_OK;
    }
    *db_bytes = s.size;
    const uint64_t *off = swgpu__db_stream_offsets(&s, &base, &len);
    if (!off) {
        free(s.path);
        return SWGPU_EIO;
    }
    uint64_t budget = max_memory ? max_memory : swgpu_stream_default_memory();
    int threads = opts->threads > 0 ? opts->threads : swgpu__ncores();
    uint64_t per_seq = PER_SEQUENCE + PART_INDEX + PER_SEQUENCE_THREAD * (uint64_t)threads;
    uint64_t used = peak_rss();
    uint64_t first = swgpu__db_cut_at(off, s.n, s.total, from);
    uint64_t last = swgpu__db_cut_at(off, s.n, s.total, to);
    uint64_t res = last >= first ? off[last] - off[first] : 0, seqs = last - first;
    /* the range searched whole: the index and its residues mapped, its layout */
    uint64_t whole = used + s.index_bytes + res * (1 + LAYOUT_PER_RESIDUE) + seqs * per_seq +
                     score_extra(res);
    uint64_t fixed = used + s.n / 8 + 1 + (opts->no_self ? s.index_bytes : 0);
    uint64_t after = used + 4 * s.n;
    size_t n = 2;
    if (whole <= budget || last < first || seqs < 2)
        n = 1;
    else if (fixed < budget && after < budget) {
        uint64_t avail = budget - fixed;
        uint64_t guess = res * (2 + LAYOUT_PER_RESIDUE) / avail + 1;
        n = guess > 2 ? (size_t)guess : 2;
        while (n <= seqs && part_need(off, &s, from, to, n, per_seq) > avail)
            n = n < 64 ? n + 1 : n + n / 16;
    }
    rc = SWGPU_OK;
    if (n > 1 && (fixed >= budget || after >= budget || n > seqs))
        rc = swgpu__fail(SWGPU_EBUDGET, "database %s (%llu bytes, %llu sequences, index %llu "
                         "bytes): %llu bytes of memory are too few to stream it in parts (%llu "
                         "in use already)", s.path, (unsigned long long)s.size,
                         (unsigned long long)s.n, (unsigned long long)s.index_bytes,
                         (unsigned long long)budget, (unsigned long long)used);
    else {
        *parts = n;
        rc = forced_parts(parts);
    }
    munmap(base, len);
    free(s.path);
    return rc;
}

int swgpu_stream_parts(const char *path, const swgpu_opts_t *opts, uint64_t max_memory,
                       size_t *parts, uint64_t *db_bytes)
{
    return swgpu_stream_parts_range(path, opts, max_memory, 0, 1, parts, db_bytes);
}

/* ------------------------------------------------------------ the search */

/* one part read from disk (on a thread of its own while the one before it
 * is scanned) */
typedef struct {
    swgpu__db_stream_t *s;
    double from, to;
    int names;          /* the part's names and ranks checked (--no-self reads them) */
    int outer;          /* also the checksum of the bytes around the residues */
    swgpu_db_t *db;
    uint32_t crc, pre, post;
    int rc;
    char msg[512];      /* the failure's message (errors are per thread) */
} load_t;

static void *load_part(void *arg)
{
    load_t *L = arg;
    L->rc = swgpu__db_stream_part(L->s, L->from, L->to, L->names, &L->db, &L->crc);
    if (L->rc == SWGPU_OK && L->outer)
        L->rc = swgpu__db_outer_crc(L->s, &L->pre, &L->post);
    if (L->rc < 0)
        snprintf(L->msg, sizeof L->msg, "%s", swgpu_last_error());
    return NULL;
}

/* what the parts leave: their candidates, the running checksum */
typedef struct {
    swgpu__db_stream_t *s;
    double from, to;    /* the range streamed ([0, 1]: the whole file, its checksum too) */
    size_t nparts;
    swgpu_search_result_t **cand;
    uint32_t crc;       /* of the residues read so far */
    double scan;        /* the parts' scan times, summed */
} stream_t;

/* part k's load done (joined): its checksum taken in, or its failure */
static int load_done(stream_t *S, load_t *L)
{
    if (L->rc < 0) {
        swgpu_db_destroy(L->db);
        L->db = NULL;
        return swgpu__fail(L->rc, "%s", L->msg);
    }
    S->crc = swgpu__crc_combine(S->crc, L->crc, L->db->total_res);
    if (L->outer) {
        uint32_t whole = swgpu__crc_combine(L->pre, S->crc, S->s->total);
        whole = swgpu__crc_combine(whole, L->post, S->s->size - S->s->res_off - S->s->total);
        if (whole != S->s->crc) {
            swgpu_db_destroy(L->db);
            L->db = NULL;
            return swgpu__fail(SWGPU_EDB, "database %s: checksum mismatch (corrupt file)",
                               S->s->path);
        }
    }
    return SWGPU_OK;
}

/* every part scanned for its candidates, part k+1 read while part k is */
static int scan_parts(stream_t *S, const swgpu_seqset_t *queries, const swgpu_matrix_t *m,
                      const swgpu_opts_t *oc)
{
    load_t L[2];
    pthread_t th;
    int running = 0, rc = SWGPU_OK;
    memset(L, 0, sizeof L);
    int names = oc->no_self;
    int whole = S->from <= 0 && S->to >= 1;
    L[0] = (load_t){.s = S->s, .from = S->from, .to = part_from(S->from, S->to, 1, S->nparts),
                    .names = names, .outer = whole && S->nparts == 1};
    load_part(&L[0]);
    for (size_t k = 0; k < S->nparts && rc == SWGPU_OK; k++) {
        load_t *cur = &L[k % 2], *next = &L[(k + 1) % 2];
        if (k > 0) {
            pthread_join(th, NULL);
            running = 0;
        }
        if ((rc = load_done(S, cur)) < 0)
            break;
        if (k + 1 < S->nparts) {
            *next = (load_t){.s = S->s, .from = part_from(S->from, S->to, k + 1, S->nparts),
                             .to = part_from(S->from, S->to, k + 2, S->nparts),
                             .names = names, .outer = whole && k + 2 == S->nparts};
            if (pthread_create(&th, NULL, load_part, next) == 0)
                running = 1;
            else
                rc = swgpu__fail(SWGPU_ENOMEM, "streamed search: cannot start a thread");
        }
        if (rc == SWGPU_OK && (rc = swgpu_search(queries, cur->db, m, oc, &S->cand[k])) == SWGPU_OK) {
            S->scan += S->cand[k]->scan_seconds;
            swgpu__log(SWGPU_LOG_INFO, "database %s: part %zu of %zu, %zu sequences: scan %.3f s",
                       S->s->path, k + 1, S->nparts, swgpu_db_size(cur->db),
                       S->cand[k]->scan_seconds);
        }
        swgpu_db_destroy(cur->db);
        cur->db = NULL;
    }
    if (running) {
        pthread_join(th, NULL);
        for (int i = 0; i < 2; i++)
            swgpu_db_destroy(L[i].db);
    }
    return rc;
}

static int u64_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* the merged hits' sequences alone, read back from the file */
static int hits_db(swgpu__db_stream_t *s, const swgpu_search_result_t *r, swgpu_db_t **out)
{
    size_t n = 0, u = 0;
    for (size_t i = 0; i < r->n_queries; i++)
        n += r->q[i].n_hits;
    uint64_t *t = malloc((n ? n : 1) * sizeof *t);
    if (!t)
        return swgpu__fail(SWGPU_ENOMEM, "streamed search: out of memory for %zu hits", n);
    n = 0;
    for (size_t i = 0; i < r->n_queries; i++)
        for (size_t h = 0; h < r->q[i].n_hits; h++)
            t[n++] = r->q[i].hits[h].target;
    if (n)
        qsort(t, n, sizeof *t, u64_cmp);
    for (size_t k = 0; k < n; k++)
        if (!u || t[u - 1] != t[k])
            t[u++] = t[k];
    int rc = swgpu__db_open_hits(s, t, u, out);
    free(t);
    return rc;
}

/* the parts' candidates released */
static void cand_free(stream_t *S)
{
    for (size_t p = 0; S->cand && p < S->nparts; p++)
        swgpu_search_result_destroy(S->cand[p]);
    free(S->cand);
    S->cand = NULL;
}

/* The checks and the scan that swgpu_search_stream (fn "search_stream")
 * and swgpu_search_stream_candidates share: the range [from, to) of path in
 * nparts parts, into *S (S->cand: each part's candidates) with *s open;
 * after a failure both are released. */
static int stream_scan(const swgpu_seqset_t *queries, const char *path, double from, double to,
                       size_t nparts, const swgpu_matrix_t *m, const swgpu_opts_t *opts,
                       const char *fn, swgpu__db_stream_t *s, stream_t *S)
{
    swgpu_karlin_t k;
    int rc;
    memset(S, 0, sizeof *S);
    if (!queries || !path || !m || !opts)
        return swgpu__fail(SWGPU_EINVAL, "%s: NULL argument", fn);
    if (nparts < 1)
        return swgpu__fail(SWGPU_EINVAL, "%s: %zu parts (at least 1)", fn, nparts);
    char what[64];
    snprintf(what, sizeof what, "%s: part", fn);
    if ((rc = swgpu__db_part_check(what, from, to)) < 0)
        return rc;
    if ((rc = swgpu_opts_check(opts, m)) < 0)
        return rc;
    if (opts->on_scores)
        return swgpu__fail(SWGPU_EINVAL, "%s: opts.on_scores is not available with a streamed "
                           "database", fn);
    if (opts->comp_based_stats)
        return swgpu__fail(SWGPU_EINVAL, "%s: --comp-based-stats %d is not yet available with a "
                           "streamed database", fn, opts->comp_based_stats);
    if (swgpu_karlin_lookup(m, opts->gap_open, opts->gap_extend, &k) != SWGPU_OK)
        return swgpu__fail(SWGPU_EINVAL, "%s: matrix %s with gap open %d extend %d has no "
                           "published parameters, and fitting them is not yet available with a "
                           "streamed database", fn, swgpu_matrix_name(m), opts->gap_open,
                           opts->gap_extend);
    if ((rc = swgpu__db_stream_probe(path, s)) <= 0)
        return rc < 0 ? rc : swgpu__fail(SWGPU_EINVAL, "%s: %s is not a makedb file "
                                         "(swgpu_db_write makes one)", fn, path);
    if (s->alphabet != swgpu_seqset_alphabet(queries))
        rc = swgpu__fail(SWGPU_EALPHABET, "database %s holds %s sequences, the queries are %s",
                         s->path, swgpu_alphabet_name(s->alphabet),
                         swgpu_alphabet_name(swgpu_seqset_alphabet(queries)));
    else
        rc = swgpu__db_stream_open(s);
    if (rc == SWGPU_OK) {
        if (nparts > s->n && s->n > 0)
            nparts = (size_t)s->n;
        *S = (stream_t){.s = s, .from = from, .to = to, .nparts = nparts,
                        .crc = 0}; /* 0: the CRC-32 of no bytes */
        if (!(S->cand = calloc(nparts, sizeof *S->cand)))
            rc = swgpu__fail(SWGPU_ENOMEM, "%s: out of memory for %zu parts", fn, nparts);
    }
    if (rc == SWGPU_OK) {
        swgpu_opts_t oc = *opts;
        oc.candidates = 1;
        oc.progress = NULL;
        rc = scan_parts(S, queries, m, &oc);
    }
    if (rc < 0) {
        cand_free(S);
        swgpu__db_stream_close(s);
    }
    return rc;
}

int swgpu_search_stream(const swgpu_seqset_t *queries, const char *path, size_t nparts,
                        const swgpu_matrix_t *m, const swgpu_opts_t *opts,
                        swgpu_search_result_t **out, swgpu_db_t **hits)
{
    swgpu__db_stream_t s;
    swgpu_search_result_t *r = NULL;
    stream_t S;
    int rc;
    if (!out || !hits)
        return swgpu__fail(SWGPU_EINVAL, "search_stream: NULL result pointer");
    *out = NULL;
    *hits = NULL;
    if (opts && (opts->candidates || opts->on_scores))
        return swgpu__fail(SWGPU_EINVAL, "search_stream: opts.candidates and opts.on_scores "
                           "are the stream's own");
    if ((rc = stream_scan(queries, path, 0, 1, nparts, m, opts, "search_stream", &s, &S)) < 0)
        return rc;
    swgpu_merge_src_t src = {s.n, s.total, NULL, NULL, NULL};
    rc = swgpu_search_merge(queries, m, opts, (const swgpu_search_result_t *const *)S.cand,
                            S.nparts, &src, &r);
    cand_free(&S);
    double t0 = swgpu__now();
    if (rc == SWGPU_OK)
        rc = hits_db(&s, r, hits);
    if (rc == SWGPU_OK && !opts->no_align)
        rc = swgpu_search_align(r, queries, *hits, m, opts);
    swgpu__db_stream_close(&s);
    if (rc < 0) {
        swgpu_search_result_destroy(r);
        swgpu_db_destroy(*hits);
        *hits = NULL;
        return rc;
    }
    r->scan_seconds = S.scan;
    r->align_seconds = swgpu__now() - t0;
    *out = r;
    return SWGPU_OK;
}

/* the parts' candidates, query by query, in one result (parts consumed) */
static int join_parts(stream_t *S, size_t nq, swgpu_search_result_t **out)
{
    swgpu_search_result_t *r = calloc(1, sizeof *r);
    if (!r || !(r->q = calloc(nq ? nq : 1, sizeof *r->q))) {
        free(r);
        return swgpu__fail(SWGPU_ENOMEM, "search_stream_candidates: out of memory");
    }
    r->n_queries = nq;
    for (size_t p = 0; p < S->nparts; p++) {
        const swgpu_search_result_t *c = S->cand[p];
        r->backend = r->backend ? r->backend : c->backend;
        r->cells += c->cells;
        r->overflows += c->overflows;
    }
    r->scan_seconds = S->scan;
    for (size_t i = 0; i < nq; i++) {
        size_t n = 0, w = 0;
        for (size_t p = 0; p < S->nparts; p++)
            n += S->cand[p]->q[i].n_hits;
        r->q[i].query = i;
        r->q[i].karlin = S->nparts ? S->cand[0]->q[i].karlin : r->q[i].karlin;
        if (n && !(r->q[i].hits = malloc(n * sizeof *r->q[i].hits))) {
            swgpu_search_result_destroy(r);
            return swgpu__fail(SWGPU_ENOMEM, "search_stream_candidates: out of memory for "
                               "%zu candidates", n);
        }
        for (size_t p = 0; p < S->nparts; p++) {
            swgpu_query_result_t *q = &S->cand[p]->q[i];
            if (q->n_hits)
                memcpy(r->q[i].hits + w, q->hits, q->n_hits * sizeof *q->hits);
            w += q->n_hits;
            q->n_hits = 0; /* the alignments, if any, now r's */
        }
        r->q[i].n_hits = n;
    }
    *out = r;
    return SWGPU_OK;
}

int swgpu_search_stream_candidates(const swgpu_seqset_t *queries, const char *path, double from,
                                   double to, size_t nparts, const swgpu_matrix_t *m,
                                   const swgpu_opts_t *opts, swgpu_search_result_t **out)
{
    swgpu__db_stream_t s;
    stream_t S;
    int rc;
    if (!out)
        return swgpu__fail(SWGPU_EINVAL, "search_stream_candidates: NULL result pointer");
    *out = NULL;
    if ((rc = stream_scan(queries, path, from, to, nparts, m, opts, "search_stream_candidates",
                          &s, &S)) < 0)
        return rc;
    rc = join_parts(&S, swgpu_seqset_size(queries), out);
    cand_free(&S);
    swgpu__db_stream_close(&s);
    return rc;
}
