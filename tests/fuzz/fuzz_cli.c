/* fuzz_cli.c - the command-line option parsing of swgpu search, align and
 * makedb (tools/cmd_*.c: cli_search_args, cli_align_args, cli_makedb_args).
 *
 * Input: the first byte picks the subcommand (0 search, 1 align, 2 makedb,
 * modulo 3), the rest split on NUL bytes is its argv (argv[0] is the
 * subcommand's name, as the tool passes it).  The parser runs as the tool
 * runs it, without the command: it must print exactly one "swgpu: ..." error
 * line when it refuses, nothing otherwise.  What it accepts then goes
 * through the library calls that check option values as the command would
 * make them (swgpu_opts_check with and without a matrix, the output format
 * parser, the DNA and built-in matrices; for align, swgpu_align_long on two
 * short built-in sequences, whose score must equal swgpu_align's).  No file
 * is read or written: a --matrix that is not a built-in name is not loaded.
 */
#include "cli.h"
#include "fuzz.h"

#include <string.h>

enum { MAX_ARGS = 64 };

/* a failed library call must say why */
static void explained(int rc)
{
    const char *m = swgpu_last_error();
    if (rc < 0 && (!m || !*m))
        abort();
}

/* the scoring system the command would use; NULL when it is refused (or is
 * a file name, never opened here) */
static swgpu_matrix_t *matrix_of(swgpu_alphabet_t al, const char *mname, int match, int mismatch)
{
    swgpu_matrix_t *m = NULL;
    int rc = al == SWGPU_DNA ? swgpu_matrix_dna(match, mismatch, &m)
                             : swgpu_matrix_builtin(mname ? mname : "BLOSUM62", &m);
    explained(rc);
    if ((rc < 0) != (m == NULL))
        abort();
    return m;
}

static void after_search(cli_search_args_t *a)
{
    if ((!a->qpath && !a->npssm) || (a->qpath && a->npssm) || !a->dpath || !a->fmtspec ||
        a->iterations < 1 || !(a->inclusion > 0))
        abort();
    swgpu_outfmt_t *f = NULL;
    int rc = swgpu_outfmt_parse(a->fmtspec, &f);
    explained(rc);
    if (rc == SWGPU_OK && swgpu_outfmt_set_dbname(f, a->dpath) != SWGPU_OK)
        abort();
    swgpu_outfmt_destroy(f);
    a->threads = cli_clamp_threads(a->threads, 0);
    for (swgpu_alphabet_t al = SWGPU_PROTEIN; al <= SWGPU_DNA; al++) {
        swgpu_opts_t o;
        cli_search_opts(a, al, &o);
        explained(swgpu_opts_check(&o, NULL));
        swgpu_matrix_t *m = matrix_of(al, a->mname, a->match, a->mismatch);
        if (m && swgpu_opts_check(&o, m) == SWGPU_OK) {
            swgpu_karlin_t k;
            if (swgpu_karlin_lookup(m, o.gap_open, o.gap_extend, &k) == SWGPU_OK &&
                !(k.lambda > 0 && k.K > 0))
                abort();
        } else if (m) {
            explained(swgpu_opts_check(&o, m));
        }
        swgpu_matrix_destroy(m);
    }
}

static void after_align(cli_align_args_t *a)
{
    static const char *const seq[2][2] = {{"MKWVTFISLLFLFSSAYS", "MKWVTAISLLLLFSSAYS"},
                                          {"ACGTACGTTAGC", "ACGTTCGTAGC"}};
    if (!a->apath || !a->bpath || a->threads < 0 || a->gap_open < -1 || a->gap_extend < -1 ||
        (strcmp(a->fmt, "summary") && strcmp(a->fmt, "sam") && strcmp(a->fmt, "pair")) ||
        (strcmp(a->strand, "plus") && strcmp(a->strand, "minus") && strcmp(a->strand, "both")))
        abort();
    a->threads = cli_clamp_threads(a->threads, 0);
    for (swgpu_alphabet_t al = SWGPU_PROTEIN; al <= SWGPU_DNA; al++) {
        swgpu_matrix_t *m = matrix_of(al, a->mname, a->match, a->mismatch);
        if (!m)
            continue;
        uint8_t x[32], y[32];
        size_t nx = strlen(seq[al - 1][0]), ny = strlen(seq[al - 1][1]);
        for (size_t i = 0; i < nx; i++)
            x[i] = (uint8_t)swgpu_encode(al, seq[al - 1][0][i]);
        for (size_t i = 0; i < ny; i++)
            y[i] = (uint8_t)swgpu_encode(al, seq[al - 1][1][i]);
        swgpu_long_opts_t o;
        swgpu_aln_t got = {0}, want = {0};
        cli_align_opts(a, al, &o);
        int rc = swgpu_align_long(x, nx, y, ny, m, &o, &got, NULL);
        explained(rc);
        if (rc == SWGPU_OK) {
            if (swgpu_align(x, nx, y, ny, m, o.gap_open, o.gap_extend, 1, &want) != SWGPU_OK ||
                got.score != want.score || got.qend != want.qend || got.tend != want.tend)
                abort();
        }
        swgpu_aln_free(&got);
        swgpu_aln_free(&want);
        swgpu_matrix_destroy(m);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const names[3] = {"search", "align", "makedb"};
    static int init;
    if (!init) {
        swgpu_set_logger(NULL, NULL, SWGPU_LOG_ERROR);
        init = 1;
    }
    if (size < 1)
        return 0;
    int cmd = data[0] % 3;
    /* the arguments: NUL-separated strings, the last one ends the input */
    char *buf = malloc(size + 1);
    char *argv[MAX_ARGS + 2];
    int argc = 0, newline = 0;
    if (!buf)
        abort();
    memcpy(buf, data + 1, size - 1);
    buf[size - 1] = 0;
    argv[argc++] = (char *)names[cmd];
    for (char *p = buf; p < buf + size - 1 && argc <= MAX_ARGS; p += strlen(p) + 1) {
        argv[argc++] = p;
        newline |= strchr(p, '\n') != NULL;
    }
    argv[argc] = NULL;

    char *err = NULL;
    size_t errlen = 0;
    FILE *ef = open_memstream(&err, &errlen);
    if (!ef)
        abort();
    cli_error_stream(ef);
    int rc;
    cli_search_args_t sa;
    cli_align_args_t aa;
    cli_makedb_args_t ma;
    if (cmd == 0)
        rc = cli_search_args(argc, argv, &sa);
    else if (cmd == 1)
        rc = cli_align_args(argc, argv, &aa);
    else
        rc = cli_makedb_args(argc, argv, &ma);
    cli_error_stream(NULL);
    fclose(ef);

    /* a refusal is one error line, anything else prints none */
    if (rc != CLI_ERROR && rc != CLI_RUN && rc != CLI_HELP)
        abort();
    if ((rc == CLI_ERROR) != (errlen > 0))
        abort();
    if (rc == CLI_ERROR) {
        char *nl = memchr(err, '\n', errlen);
        if (errlen <= 8 || strncmp(err, "swgpu: ", 7) || err[errlen - 1] != '\n' ||
            strlen(err) != errlen || (!newline && nl != err + errlen - 1))
            abort();
    }
    free(err);

    if (rc == CLI_RUN) {
        if (cmd == 0)
            after_search(&sa);
        else if (cmd == 1)
            after_align(&aa);
        else if (!ma.in || !ma.out)
            abort();
    }
    if (cmd == 0 && rc != CLI_ERROR)
        cli_search_args_free(&sa);
    free(buf);
    return 0;
}
