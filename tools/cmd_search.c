/*
 * cmd_search.c - `swgpu search`: queries against a database, top hits with
 * E-values and alignments, written in one of BLAST+'s formats or the
 * pairwise view (the arguments are parsed in search_args.c).
 *
 * With -o FILE the output goes to FILE.tmp.<pid>, renamed to FILE only once
 * everything was written; on any failure (or SIGINT/SIGTERM/SIGHUP) the
 * temporary file is removed, so a complete-looking truncated file is never
 * left behind (tools/outfile.c; through a symbolic link, its target is
 * replaced).  An existing FILE that is not a regular file (/dev/null, a FIFO)
 * is written in place instead.
 */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"

#include <errno.h>
#include <float.h>
#include <getopt.h>
#include <limits.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void usage(FILE *fp)
{
    fputs("usage: swgpu search -q QUERIES -d DB [options]\n"
          "       swgpu search --pssm FILE [--pssm FILE...] -d DB [options]\n"
          "\n"
          "Scores every query against every database sequence exactly (Smith-Waterman,\n"
          "affine gaps) and reports the best hits with E-values and alignments.\n"
          "\n"
          "input:\n"
          "  -q, --query FILE       query sequences: FASTA or FASTQ, plain or gzip (or a\n"
          "                         database, as -d takes it); - reads standard input\n"
          "      --pssm FILE        a PSSM as the query, in psiblast's ASCII format\n"
          "                         (-out_ascii_pssm; plain or gzip; its id is the file's base\n"
          "                         name without extension); repeat for more; not with -q\n"
          "  -d, --db FILE          database: a 'swgpu makedb' file, a BLAST database (its\n"
          "                         name as given to makeblastdb -out), or FASTA/FASTQ (plain\n"
          "                         or gzip); a relative name that names nothing here is\n"
          "                         looked for in each directory of $BLASTDB in turn\n"
          "      --type prot|dna    sequence type (default: detected from the sequences)\n"
          "\n"
          "scoring (a gap of length k costs OPEN + k*EXTEND, as in BLAST and ssearch36):\n"
          "      --matrix NAME|FILE protein matrix: BLOSUM45 BLOSUM50 BLOSUM62 BLOSUM80 BLOSUM90\n"
          "                         PAM30 PAM70 PAM250, or an NCBI-format file (default BLOSUM62)\n"
          "      --match N          DNA only: score of identical bases (default 2)\n"
          "      --mismatch N       DNA only: score of different bases (default -3)\n"
          "      --gap-open O       gap open penalty (default 11 protein, 5 DNA)\n"
          "      --gap-extend E     gap extension penalty (default 1 protein, 2 DNA)\n"
          "\n"
          "reporting:\n"
          "  -n, --top N            hits reported per query (default 10)\n"
          "  -e, --evalue X         report hits with E-value <= X (default 10)\n"
          "      --evalue-model M   spouge (default): E-values as BLAST+ computes them by\n"
          "                         default (Spouge's finite-size correction, from the lengths\n"
          "                         of the query, the hit and the database); old-fsc: as\n"
          "                         BLAST+ with OLD_FSC=1 in the environment (Karlin-Altschul\n"
          "                         over the length-adjusted search space).  DNA and fitted\n"
          "                         statistics have no Spouge parameters and use old-fsc\n"
          "      --rank R           evalue (default): -n keeps the best hits by E-value, then\n"
          "                         score, equal hits the last in the database first, as\n"
          "                         BLAST+; score: by score, then the first in the database\n"
          "  -f, --outfmt FMT       6 (BLAST tabular, default), 7 (tabular with comment lines),\n"
          "                         10 (format 6 with commas, as BLAST's CSV), 0 (BLAST's\n"
          "                         pairwise report), 5 (BLAST XML), 15 (BLAST JSON), 17 (SAM:\n"
          "                         the queries are the references, as BLAST writes it),\n"
          "                         pair (pairwise alignments), or '6 COLUMNS...' (or 7, 10)\n"
          "                         with columns,\n"
          "                         separated by spaces or commas,\n"
          "                         qseqid sseqid pident length mismatch gapopen qstart qend\n"
          "                         sstart send evalue bitscore score qlen slen nident gaps cigar\n"
          "                         sstrand qcovhsp qcovs ppos salltitles sallseqid qacc\n"
          "                         qaccver sacc saccver stitle qseq sseq positive btop\n"
          "                         staxid staxids ssciname sscinames scomname scomnames\n"
          "                         sblastname sblastnames sskingdom sskingdoms\n"
          "  -o, --out FILE         write to FILE (atomically: renamed when complete; default stdout)\n"
          "      --comp-based-stats N  protein, as blastp -comp_based_stats N: 0 (default)\n"
          "                         none, the matrix's exact scores as CUDASW++, ssearch36\n"
          "                         and parasail give them; 1 the matrix scaled to each pair's\n"
          "                         compositions; 2 (blastp's default) adjusted to them where\n"
          "                         BLAST's rule says so, else scaled; 3 always adjusted.\n"
          "                         BLAST's preliminary hits (the best 1050 by the matrix's\n"
          "                         score) are rescored exactly (BLOSUM62 only)\n"
          "      --no-align         scores and E-values only (alignment columns: N/A)\n"
          "      --no-self          do not report a query's own sequence (same id, same\n"
          "                         residues) as its hit, e.g. in -q X -d X (all against all)\n"
          "      --strand S         DNA: both (default: each subject's better strand), plus\n"
          "                         or minus (the subjects' reverse complements); minus hits\n"
          "                         print sstart > send, as BLAST does (column sstrand)\n"
          "      --max-hsps N       alignments per query, subject and strand (default 1): a\n"
          "                         subject's next best local alignments that share no\n"
          "                         aligned pair with the ones before (Waterman-Eggert, as\n"
          "                         lalign36), each with its own E-value (<= -e), listed\n"
          "                         after the subject's best; -n counts subjects; DNA with\n"
          "                         both strands: up to N on each\n"
          "\n"
          "iterated search (PSI-BLAST, protein):\n"
          "      --iterations N     rounds (default 1); after each, the hits with E-value <=\n"
          "                         --inclusion-evalue among the best 500 make a PSSM\n"
          "                         that the next round searches with; a query stops early when\n"
          "                         a round includes no new hit\n"
          "      --inclusion-evalue X  E-value for inclusion in the PSSM (default 0.002)\n"
          "      --out-pssm DIR     write each query's PSSM of its last round as DIR/NAME.pssm\n"
          "                         (psiblast's ASCII format: --pssm reads it back); NAME is\n"
          "                         the id with bytes other than letters, digits and ._-+ (and\n"
          "                         a leading .) as _, and _N added for query N when an\n"
          "                         earlier query has that name; DIR is created if missing\n"
          "      --report last|all  the last round of each query (default), or every round\n"
          "                         (format 7: '# Iteration: N' lines; pair: 'Results from\n"
          "                         round N'; format 6: the rows of every round in turn)\n"
          "\n"
          "execution:\n"
          "  -t, --threads N        CPU threads (default 0 = all cores)\n"
          "      --backend B        auto, ref, cpu or cuda (default auto: cuda if a GPU is\n"
          "                         present, else cpu)\n"
          "      --kernel NAME      GPU kernel (default: the backend's choice)\n"
          "      --gpus N           GPUs to use (default 0 = all visible)\n"
          "      --max-memory SIZE  memory the search may use, e.g. 2G: on each GPU (default\n"
          "                         7/8 of its free memory; a larger database is streamed to\n"
          "                         it in batches) and on the host (default 3/4 of physical\n"
          "                         memory; a makedb database that does not fit is streamed\n"
          "                         from disk in parts, the next read while one is scanned)\n"
          "  -v, --verbose          more messages (repeat for debug)\n"
          "      --quiet            no warnings, no progress and no summary line\n"
          "  -h, --help             this text\n"
          "\n"
          "Progress (queries scanned, GCUPS, time left) goes to standard error when it is a\n"
          "terminal; a summary line (cells, scan time, GCUPS, overflows, alignment time,\n"
          "wall time, peak memory) always does, unless --quiet.\n"
          "\n"
          "BLAST+'s -query -db -out -outfmt -evalue -max_target_seqs -num_threads -max_hsps\n"
          "stand for -q -d -o -f -e -n -t --max-hsps, -comp_based_stats V for\n"
          "--comp-based-stats (V as blastp takes it: 0 F f, 1, 2 T t D, 3);\n"
          "BLAST+'s other options are refused, naming swgpu's option where there is one.\n",
          fp);
}

/* ------------------------------------------------------------ progress */

/* On a terminal (standard error), the scan's progress in one line rewritten
 * in place: queries done, the share of the cells, GCUPS and the time left;
 * a newline once the last query is scanned (the alignments still queued
 * and the summary follow). */
static void on_progress(size_t done, size_t total, uint64_t cells_done, uint64_t cells_total,
                        double seconds, void *user)
{
    (void)user;
    double frac = cells_total ? (double)cells_done / (double)cells_total : 1.0;
    char left[32] = "";
    if (done < total && frac > 0 && seconds > 0) {
        char d[24];
        cli_fmt_duration(d, sizeof d, seconds * (1.0 - frac) / frac, CLI_DURATION_CLOCK);
        snprintf(left, sizeof left, ", %s left", d);
    }
    fprintf(stderr, "\r[swgpu %.1fs] search: %zu of %zu queries (%.1f%%), %.1f GCUPS%s   ",
            cli_elapsed(), done, total, 100.0 * frac,
            seconds > 0 ? (double)cells_done / seconds / 1e9 : 0.0, left);
    if (done == total)
        fputc('\n', stderr);
    fflush(stderr);
}

/* What a search reads, runs and writes. */
typedef struct {
    cli_search_args_t a;
    swgpu_seqset_t *queries;     /* -q (NULL with --pssm) */
    swgpu_pssm_t **pssms;        /* --pssm, a.npssm of them */
    swgpu_db_t *db, *names;
    swgpu_matrix_t *m;
    swgpu_search_result_t *res;  /* one round */
    swgpu_iterate_result_t *it;  /* or an iterated search */
    char **pssm_names;           /* --out-pssm: each query's file name (pssm_names) */
    size_t npssm_names;
    size_t parts;                /* > 1: the database streamed in parts (db: an empty part,
                                    names: the hits' sequences) */
    uint64_t db_bytes;           /* the makedb file's size */
} search_t;

static void search_free(search_t *S)
{
    swgpu_iterate_result_destroy(S->it);
    swgpu_search_result_destroy(S->res);
    swgpu_matrix_destroy(S->m);
    swgpu_db_destroy(S->names);
    swgpu_db_destroy(S->db);
    swgpu_seqset_destroy(S->queries);
    for (int i = 0; S->pssms && i < S->a.npssm; i++)
        swgpu_pssm_destroy(S->pssms[i]);
    free(S->pssms);
    for (size_t i = 0; S->pssm_names && i < S->npssm_names; i++)
        free(S->pssm_names[i]);
    free(S->pssm_names);
    cli_search_args_free(&S->a);
}

/* The queries: -q (a file, or standard input for -), or the --pssm files. */
static int read_queries(search_t *S, swgpu_read_info_t *qi)
{
    int rc;
    if (S->a.npssm) {
        memset(qi, 0, sizeof *qi);
        if (!(S->pssms = calloc((size_t)S->a.npssm, sizeof *S->pssms))) {
            cli_error("out of memory for %d PSSMs", S->a.npssm);
            return -1;
        }
        for (int i = 0; i < S->a.npssm; i++) {
            if ((rc = swgpu_pssm_read(S->a.pssm[i], &S->pssms[i])) < 0) {
                cli_lib_error(rc);
                return -1;
            }
            qi->n_records++;
            qi->n_residues += swgpu_pssm_length(S->pssms[i]);
        }
        return 0;
    }
    rc = !strcmp(S->a.qpath, "-")
             ? swgpu_seqset_read_fd(STDIN_FILENO, "(standard input)", S->a.type, &S->queries, qi)
             : swgpu_seqset_read(S->a.qpath, S->a.type, &S->queries, qi);
    if (rc < 0) {
        cli_lib_error(rc);
        return -1;
    }
    return 0;
}

/* --out-pssm DIR: the file name of each query's PSSM, ID.pssm, made safe
 * and unique.  The id's bytes other than letters, digits and ". _ - +"
 * become '_', as does a leading '.'; an id longer than 200 bytes is cut
 * there; an empty id is "queryN" (N: the query's number from 1).  When an
 * earlier query has the name already, "_N" is appended (again while it is
 * still taken).  Names in S->pssm_names; -1 after an error. */
static int pssm_names(search_t *S, size_t nq)
{
    if (!(S->pssm_names = calloc(nq ? nq : 1, sizeof *S->pssm_names))) {
        cli_error("out of memory for %zu PSSM file names", nq);
        return -1;
    }
    S->npssm_names = nq;
    for (size_t i = 0; i < nq; i++) {
        char name[256];
        const char *id;
        size_t k = 0;
        if (S->queries) {
            swgpu_seq_t q;
            swgpu_seqset_get(S->queries, i, &q);
            id = q.id;
        } else {
            id = swgpu_pssm_id(S->pssms[i]);
        }
        for (; id[k] && k < 200; k++) {
            unsigned char c = (unsigned char)id[k];
            int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                     c == '_' || c == '-' || c == '+' || (c == '.' && k > 0);
            name[k] = ok ? (char)c : '_';
        }
        name[k] = '\0';
        if (!k)
            snprintf(name, sizeof name, "query%zu", i + 1);
        for (;;) {
            size_t j = 0;
            while (j < i && strcmp(S->pssm_names[j], name))
                j++;
            if (j == i)
                break;
            size_t len = strlen(name);
            snprintf(name + len, sizeof name - len, "_%zu", i + 1);
            if (strlen(name) == len) {
                cli_error("--out-pssm %s: no unique file name for query %zu (%s)",
                          S->a.out_pssm, i + 1, id);
                return -1;
            }
        }
        if (!(S->pssm_names[i] = strdup(name))) {
            cli_error("out of memory for %zu PSSM file names", nq);
            return -1;
        }
    }
    return 0;
}

/* --out-pssm DIR: the file of query i, DIR/NAME.pssm; -1 after an error
 * when it does not fit. */
static int pssm_path(const search_t *S, size_t i, char *path, size_t size)
{
    if (snprintf(path, size, "%s/%s.pssm", S->a.out_pssm, S->pssm_names[i]) >= (int)size) {
        cli_error("--out-pssm %s: the path of query %zu's PSSM (%s.pssm) is too long",
                  S->a.out_pssm, i + 1, S->pssm_names[i]);
        return -1;
    }
    return 0;
}

/* mkdir -p DIR; -1 after an error */
static int make_dir(const char *opt, const char *dir)
{
    char p[PATH_MAX];
    struct stat sb;
    if (snprintf(p, sizeof p, "%s", dir) >= (int)sizeof p) {
        cli_error("%s %s: the name is too long", opt, dir);
        return -1;
    }
    for (char *c = p + 1;; c++) {
        if (*c && *c != '/')
            continue;
        char end = *c;
        *c = '\0';
        if (mkdir(p, 0777) != 0 && errno != EEXIST) {
            cli_error("%s %s: cannot create the directory %s: %s", opt, dir, p, strerror(errno));
            return -1;
        }
        *c = end;
        if (!end)
            break;
    }
    if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        cli_error("%s %s: not a directory", opt, dir);
        return -1;
    }
    return 0;
}

/* --out-pssm DIR, before the search: the directory (made when missing),
 * unique safe names, and no file there that would replace an input or the
 * -o output */
static int check_pssm_dir(search_t *S, size_t nq, const cli_input_t *in, int nin)
{
    char path[PATH_MAX];
    struct stat sb;
    cli_input_t *in2;
    if (stat(S->a.out_pssm, &sb) == 0 && !S_ISDIR(sb.st_mode)) {
        cli_error("--out-pssm %s: not a directory", S->a.out_pssm);
        return -1;
    }
    if (make_dir("--out-pssm", S->a.out_pssm) < 0 || pssm_names(S, nq) < 0)
        return -1;
    if (!(in2 = malloc((size_t)(nin + 1) * sizeof *in2))) {
        cli_error("out of memory");
        return -1;
    }
    memcpy(in2, in, (size_t)nin * sizeof *in2);
    in2[nin] = (cli_input_t){S->a.opath, "output (-o)"};
    for (size_t i = 0; i < nq; i++) {
        if (pssm_path(S, i, path, sizeof path) < 0 ||
            cli_check_output("--out-pssm", path, in2, nin + 1) < 0) {
            free(in2);
            return -1;
        }
        if (S->a.opath && cli_same_path(path, S->a.opath)) { /* not written yet */
            cli_error("--out-pssm %s: query %zu's PSSM %s is also the output (-o) %s: give them "
                      "different files", S->a.out_pssm, i + 1, path, S->a.opath);
            free(in2);
            return -1;
        }
    }
    free(in2);
    return 0;
}

/* --out-pssm DIR: every query's last PSSM as DIR/NAME.pssm, each written whole
 * or not at all. */
static int write_pssms(search_t *S, const swgpu_opts_t *o)
{
    const swgpu_iterate_result_t *it = S->it;
    char path[PATH_MAX];
    for (size_t i = 0; i < it->n_queries; i++) {
        if (pssm_path(S, i, path, sizeof path) < 0)
            return -1;
        cli_out_t out;
        FILE *fp = cli_out_open(&out, path);
        if (!fp)
            return -1;
        int rc = swgpu_pssm_write(it->final_pssm[i], S->m, o->gap_open, o->gap_extend, fp);
        if (rc < 0) {
            cli_lib_error(rc);
            cli_out_abort(&out);
            return -1;
        }
        if (cli_out_close(&out) < 0)
            return -1;
    }
    return 0;
}

/* The summary line on standard error. */
static void summary(const search_t *S, size_t nq, uint64_t qres)
{
    swgpu_db_part_t whole; /* swgpu-mpi's db is a part */
    swgpu_db_part_info(S->db, &whole);
    double wall = cli_elapsed(), scan = 0, align = 0;
    uint64_t cells = 0, overflows = 0;
    const char *backend = "";
    char rounds[64] = "";
    if (S->it) {
        for (size_t k = 0; k < S->it->n_rounds; k++) {
            const swgpu_search_result_t *r = S->it->round[k];
            scan += r->scan_seconds;
            align += r->align_seconds;
            cells += r->cells;
            overflows += r->overflows;
            backend = r->backend;
        }
        snprintf(rounds, sizeof rounds, "%zu rounds, ", S->it->n_rounds);
    } else {
        scan = S->res->scan_seconds;
        align = S->res->align_seconds;
        cells = S->res->cells;
        overflows = S->res->overflows;
        backend = S->res->backend;
    }
    fprintf(stderr,
            "[swgpu %.2fs] %zu queries (%llu residues) vs %zu sequences (%llu residues): "
            "backend %s, %s%.3g cells, scan %.3f s (%.2f GCUPS), %llu overflows, "
            "align %.3f s, wall %.2f s, peak RSS %.1f MB\n",
            wall, nq, (unsigned long long)qres, (size_t)whole.total_n,
            (unsigned long long)whole.total_residues, backend, rounds, (double)cells, scan,
            scan > 0 ? (double)cells / scan / 1e9 : 0.0, (unsigned long long)overflows, align,
            wall, cli_peak_rss_mb());
}

/* The combinations swgpu-mpi, PSSM queries and iterated searches refuse
 * before any file is read; -1 after printing an error. */
static int check_modes(const cli_search_args_t *a, int iterated)
{
    if (cli_dist && (a->npssm || iterated || (a->qpath && !strcmp(a->qpath, "-")))) {
        cli_error("search: swgpu-mpi does not take --pssm, --iterations, --out-pssm, --report "
                  "or -q - (run swgpu)");
        return -1;
    }
    if (cli_dist && a->comp_based_stats) {
        cli_error("search: swgpu-mpi does not take --comp-based-stats %d yet (run swgpu)",
                  a->comp_based_stats);
        return -1;
    }
    if (a->npssm || iterated) {
        if (a->type == SWGPU_DNA) {
            cli_error("search: %s take protein only (--type dna given)",
                      a->npssm ? "PSSM queries" : "iterated searches");
            return -1;
        }
        if (a->have_match || a->have_mismatch) {
            cli_error("--%s applies to DNA only; %s are protein", a->have_match ? "match"
                      : "mismatch", a->npssm ? "PSSM queries" : "iterated searches");
            return -1;
        }
    }
    return 0;
}

/* The inputs of the search (a malloc'ed array in *in, *nin of them), and -o
 * checked against them: an output never replaces an input; -1 after
 * printing an error. */
static int check_inputs(const cli_search_args_t *a, cli_input_t **in, int *nin)
{
    *nin = 3 + a->npssm;
    if (!(*in = malloc((size_t)*nin * sizeof **in))) {
        cli_error("out of memory");
        return -1;
    }
    (*in)[0] = (cli_input_t){a->qpath, "query file"};
    (*in)[1] = (cli_input_t){a->dpath, "database"};
    (*in)[2] = (cli_input_t){a->mname, "matrix file"};
    for (int i = 0; i < a->npssm; i++)
        (*in)[3 + i] = (cli_input_t){a->pssm[i], "PSSM file"};
    return cli_check_output("-o", a->opath, *in, *nin);
}

/* The host memory a search may use: --max-memory, else 3/4 of physical memory. */
static uint64_t host_budget(const cli_search_args_t *a)
{
    return a->maxmem ? (uint64_t)a->maxmem : swgpu_stream_default_memory();
}

/* Whether the database is streamed from disk (S->parts > 1): a makedb file
 * that does not fit the host budget with its engine layout, or
 * SWGPU_STREAM_PARTS=N (tests: N parts, whatever the budget; the library
 * reads it).  -1 after printing an error. */
static int stream_plan(search_t *S, const swgpu_opts_t *o)
{
    int rc = swgpu_stream_parts(S->a.dpath, o, host_budget(&S->a), &S->parts, &S->db_bytes);
    if (rc == SWGPU_EBUDGET) {
        cli_error("--max-memory %llu: %s", (unsigned long long)host_budget(&S->a),
                  swgpu_last_error());
        return -1;
    }
    if (rc < 0) {
        cli_lib_error(rc);
        return -1;
    }
#ifdef __GLIBC__
    /* glibc raises its mmap threshold to the largest block freed so far: each
     * part's layout, freed, would then stay in the heap beside the next's
     * (measured: 37 MB peak instead of 28 for 7 parts of 5 M residues) */
    if (S->parts > 1)
        mallopt(M_MMAP_THRESHOLD, 256 * 1024);
#endif
    return 0;
}

/* What a streamed database does not take yet, refused (after scoring()):
 * -1 after printing an error. */
static int stream_check(const search_t *S, const swgpu_opts_t *o, int iterated)
{
    const char *what = NULL;
    swgpu_karlin_t k;
    if (S->parts <= 1)
        return 0;
    if (S->pssms)
        what = "--pssm";
    else if (iterated)
        what = "--iterations, --out-pssm and --report";
    else if (o->comp_based_stats)
        what = "--comp-based-stats";
    else if (swgpu_karlin_lookup(S->m, o->gap_open, o->gap_extend, &k) != SWGPU_OK)
        what = "a matrix and gaps without published Karlin-Altschul parameters (fitted "
               "statistics)";
    if (!what)
        return 0;
    cli_error("search: %s: not yet with a streamed database (--max-memory %llu below the "
              "database's %llu bytes)", what, (unsigned long long)host_budget(&S->a),
              (unsigned long long)S->db_bytes);
    return -1;
}

/* The queries (qname: what messages call them) and the database, their
 * alphabets checked against each other and the options, into S; *qa is the
 * queries' alphabet.  -1 after printing an error. */
static int read_inputs(search_t *S, const swgpu_opts_t *o, const char *qname, int iterated,
                       int verbosity, swgpu_read_info_t *qi, swgpu_alphabet_t *qa)
{
    const cli_search_args_t *a = &S->a;
    swgpu_read_info_t di;
    int rc;
    if (read_queries(S, qi) < 0)
        return -1;
    if (!cli_dist && stream_plan(S, o) < 0)
        return -1;
    rc = cli_dist ? cli_dist->db_open(a->dpath, a->type, S->queries, o, a->maxmem, &S->db, &di)
         : S->parts > 1 ? swgpu_db_open_part(a->dpath, a->type, 0, 0, &S->db, &di) /* the index */
                        : swgpu_db_open_threads(a->dpath, a->type, a->threads, &S->db, &di);
    if (rc < 0) {
        cli_lib_error(rc);
        return -1;
    }
    *qa = S->queries ? swgpu_seqset_alphabet(S->queries) : SWGPU_PROTEIN;
    swgpu_alphabet_t da = swgpu_db_alphabet(S->db);
    if (*qa != da) {
        cli_error("the queries in %s are %s%s but the database %s holds %s sequences%s", qname,
                  swgpu_alphabet_name(*qa), S->pssms ? " PSSMs" : " sequences", a->dpath,
                  swgpu_alphabet_name(da),
                  a->type == SWGPU_AUTO ? " (detected; --type sets the type)" : "");
        return -1;
    }
    if (a->strand_given && *qa != SWGPU_DNA) {
        cli_error("--strand applies to DNA searches only; %s holds %s %s", qname,
                  swgpu_alphabet_name(*qa), S->pssms ? "PSSMs" : "sequences");
        return -1;
    }
    if (iterated && *qa != SWGPU_PROTEIN) {
        cli_error("--iterations, --out-pssm and --report take protein queries; %s holds %s "
                  "sequences", qname, swgpu_alphabet_name(*qa));
        return -1;
    }
    if (verbosity >= 1 && S->parts > 1)
        fprintf(stderr, "[swgpu %.2fs] %s: %llu bytes, streamed from disk in %zu parts "
                "(--max-memory %llu bytes)\n", cli_elapsed(), a->dpath,
                (unsigned long long)S->db_bytes, S->parts, (unsigned long long)host_budget(a));
    if (verbosity >= 2) {
        swgpu_db_part_t whole;
        swgpu_db_part_info(S->db, &whole);
        fprintf(stderr, "[swgpu %.2fs] %s: %llu %s %s, %llu residues\n", cli_elapsed(), qname,
                (unsigned long long)qi->n_records, swgpu_alphabet_name(*qa),
                S->pssms ? "PSSMs" : "queries", (unsigned long long)qi->n_residues);
        fprintf(stderr, "[swgpu %.2fs] %s: %zu sequences, %llu residues, longest %llu\n",
                cli_elapsed(), a->dpath, (size_t)whole.total_n,
                (unsigned long long)whole.total_residues,
                (unsigned long long)whole.total_max_len);
    }
    return 0;
}

/* The scoring system of alphabet qa (S->m) and the options that go with it
 * (o), checked; -1 after printing an error. */
static int scoring(search_t *S, swgpu_alphabet_t qa, swgpu_opts_t *o)
{
    const cli_search_args_t *a = &S->a;
    int rc;
    if (qa == SWGPU_DNA) {
        if (a->mname) {
            cli_error("--matrix applies to protein only; DNA is scored with --match and --mismatch");
            return -1;
        }
        rc = swgpu_matrix_dna(a->match, a->mismatch, &S->m);
    } else {
        if (a->have_match || a->have_mismatch) {
            cli_error("--%s applies to DNA only; protein is scored with --matrix",
                      a->have_match ? "match" : "mismatch");
            return -1;
        }
        rc = swgpu_matrix_get(a->mname ? a->mname : "BLOSUM62", &S->m);
    }
    if (rc < 0) {
        cli_lib_error(rc);
        return -1;
    }
    cli_search_opts(a, qa, o);
    if ((rc = swgpu_opts_check(o, S->m)) < 0) {
        cli_lib_error(rc);
        return -1;
    }
    return 0;
}

/* The search itself: iterated, of PSSM queries, or of sequences (across
 * the ranks under swgpu-mpi); -1 after printing an error. */
static int run_search(search_t *S, const swgpu_opts_t *o, int iterated)
{
    const cli_search_args_t *a = &S->a;
    int rc;
    if (iterated) {
        swgpu_psi_opts_t psi;
        swgpu_psi_opts_init(&psi);
        psi.iterations = a->iterations;
        psi.inclusion_evalue = a->inclusion;
        psi.final_pssm = a->out_pssm != NULL; /* the last round's PSSMs: only to write them */
        psi.align_rounds = a->report_all;      /* earlier rounds are printed only with --report all */
        rc = swgpu_search_iterate(S->queries, (const swgpu_pssm_t *const *)S->pssms,
                                  (size_t)a->npssm, S->db, S->m, o, &psi, &S->it);
    } else if (S->pssms) {
        rc = swgpu_search_pssm((const swgpu_pssm_t *const *)S->pssms, (size_t)a->npssm, S->db,
                               S->m, o, &S->res);
    } else if (S->parts > 1) {
        rc = swgpu_search_stream(S->queries, a->dpath, S->parts, S->m, o, &S->res, &S->names);
    } else {
        rc = cli_dist ? cli_dist->search(S->queries, S->db, S->m, o, &S->res, &S->names)
                      : swgpu_search(S->queries, S->db, S->m, o, &S->res);
    }
    if (rc < 0) {
        cli_lib_error(rc);
        return -1;
    }
    return 0;
}

/* The results in format fmt to fp (the output opath); -1 after printing an
 * error. */
static int write_results(const search_t *S, const swgpu_outfmt_t *fmt, FILE *fp,
                         const swgpu_opts_t *o)
{
    const cli_search_args_t *a = &S->a;
    const swgpu_db_t *names = S->names ? S->names : S->db;
    int rc = 0;
    if (S->it)
        rc = swgpu_outfmt_write_iterate(fmt, fp, S->it, S->queries,
                                        (const swgpu_pssm_t *const *)S->pssms, a->report_all,
                                        names, S->m, o);
    else if (S->res && S->pssms)
        rc = swgpu_outfmt_write_pssm(fmt, fp, S->res, (const swgpu_pssm_t *const *)S->pssms,
                                     (size_t)a->npssm, names, S->m, o);
    else if (S->res)
        rc = swgpu_outfmt_write(fmt, fp, S->res, S->queries, names, S->m, o);
    if (rc < 0) {
        const char *msg = swgpu_last_error();
        cli_error("output %s: %s", a->opath ? a->opath : "(standard output)",
                  msg && *msg ? msg : swgpu_strerror(rc));
        return -1;
    }
    return 0;
}

int swgpu_cmd_search(int argc, char **argv)
{
    search_t S;
    swgpu_outfmt_t *fmt = NULL;
    FILE *fp = NULL;
    int status = 1, rc, nin = 0;
    cli_out_t out = {0};
    cli_input_t *in = NULL;
    swgpu_opts_t o;
    swgpu_read_info_t qi;
    swgpu_alphabet_t qa;

    memset(&S, 0, sizeof S);
    switch (cli_search_args(argc, argv, &S.a)) {
    case CLI_HELP: usage(stdout); cli_search_args_free(&S.a); return 0;
    case CLI_ERROR: return 1;
    }
    cli_search_args_t *a = &S.a;
    const char *qpath = a->qpath, *dpath = a->dpath, *opath = a->opath;
    const char *qname = qpath ? (strcmp(qpath, "-") ? qpath : "standard input") : a->pssm[0];
    int verbosity = a->verbosity;
    int iterated = a->iterations > 1 || a->out_pssm || a->report_all;
    if (cli_dist && !cli_dist->writer)
        verbosity = 0; /* swgpu-mpi: one rank speaks */
    cli_install_logger(verbosity);
    a->threads = cli_clamp_threads(a->threads, verbosity);
    if (check_modes(a, iterated) < 0)
        goto out;

    /* Check what can be checked before reading any file */
    if (check_inputs(a, &in, &nin) < 0)
        goto out;
    cli_search_opts(a, a->type == SWGPU_DNA ? SWGPU_DNA : SWGPU_PROTEIN, &o);
    if ((rc = swgpu_opts_check(&o, NULL)) < 0)
        goto lib_fail;
    /* the GPU's set-up overlaps reading the inputs; an unknown --kernel fails here */
    if ((rc = swgpu_backend_prepare(&o)) < 0)
        goto lib_fail;
    if ((rc = swgpu_outfmt_parse(a->fmtspec, &fmt)) < 0 ||
        (rc = swgpu_outfmt_set_dbname(fmt, dpath)) < 0)
        goto lib_fail;

    if (read_inputs(&S, &o, qname, iterated, verbosity, &qi, &qa) < 0 || scoring(&S, qa, &o) < 0 ||
        stream_check(&S, &o, iterated) < 0)
        goto out;
    if (verbosity > 0 && isatty(STDERR_FILENO))
        o.progress = on_progress;
    if (!opath) /* `swgpu search ... | head` ends quietly (SIGPIPE), as other tools */
        signal(SIGPIPE, SIG_DFL);

    if (a->out_pssm &&
        check_pssm_dir(&S, S.queries ? swgpu_seqset_size(S.queries) : (size_t)a->npssm, in,
                       nin) < 0)
        goto out;
    /* open the output first: a bad path fails before the search runs */
    if (!(fp = cli_out_open(&out, cli_out_path(opath))))
        goto out;

    if (run_search(&S, &o, iterated) < 0)
        goto out;
    if (S.it && a->out_pssm && write_pssms(&S, &o) < 0)
        goto out;
    double t_out = cli_elapsed();
    if (write_results(&S, fmt, fp, &o) < 0)
        goto out;
    fp = NULL;
    if (cli_out_close(&out) < 0)
        goto out;
    if (verbosity > 1)
        fprintf(stderr, "[swgpu %.2fs] debug: output written in %.3f s\n", cli_elapsed(),
                cli_elapsed() - t_out);

    if (verbosity > 0 && (S.res || S.it))
        summary(&S, S.queries ? swgpu_seqset_size(S.queries) : (size_t)a->npssm,
                S.queries ? swgpu_seqset_residues(S.queries) : qi.n_residues);
    status = 0;
    goto out;

lib_fail:
    cli_lib_error(rc);
out:
    free(in);
    cli_out_abort(&out);
    search_free(&S);
    swgpu_outfmt_destroy(fmt);
    return status;
}
