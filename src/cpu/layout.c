/*
 * cpu/layout.c - the CPU engine's state: its creation for an instruction
 * set (the matrix in the kernels' lane widths) and the database laid out
 * once for the 8-bit batch kernels (layout_db); its release.  The scans
 * that use it: engine.c.
 */
#include "cpu/cpu.h"

#include <string.h>

void swgpu__cpu_destroy(void *state)
{
    swgpu__cpu_state_t *s = state;
    if (!s) return;
    free(s->ucol);
    free(s->cols);
    free(s->uev);
    free(s->events);
    free(s->uslot);
    free(s->slot_k);
    free(s->pair_k);
    free(s->is_pair);
    free(s->codes);
    free(s);
}

#define SPARSE_DIV 4 /* a unit with fewer than 1/SPARSE_DIV of its cells busy is sparse */

/* One sequence's place in the layout. */
typedef struct {
    uint64_t col;  /* first column within its unit */
    uint32_t k;    /* sorted index */
    uint32_t lane;
} place_t;

static int place_cmp(const void *a, const void *b)
{
    const place_t *x = a, *y = b;
    if (x->col != y->col) return x->col < y->col ? -1 : 1;
    return x->lane < y->lane ? -1 : x->lane > y->lane;
}


/*
 * Lay the database out in units of `lanes` lanes, residues interleaved
 * column by column, each sequence padded with SWGPU__PAD to a multiple of
 * SWGPU__COLS columns.  Sequences are placed longest first: a unit is as
 * wide as its first (longest) sequence, and each next sequence goes to the
 * unit's least-loaded lane if it still fits there; otherwise it opens the
 * next unit.  Where lengths are close (most of a length-sorted database)
 * that is one sequence per lane; in the long tail, lanes are refilled with
 * shorter sequences instead of idling (see sw_template.h), which removes
 * most of the padding of plain batches.  Units come out longest first,
 * the order in which threads take them.  Empty sequences get no place
 * (their score is 0).
 */

/* The columns a sequence of len residues takes. */
static inline uint64_t padded(uint64_t len)
{
    return (len + SWGPU__COLS - 1) / SWGPU__COLS * SWGPU__COLS;
}

/* The places of db's non-empty sequences, longest first, in pl; unit u
 * holds pl[ufirst[u] .. ufirst[u+1]) (*nunit units); load: lanes scratch
 * entries.  Returns the number placed. */
static size_t place_seqs(const swgpu_db_t *db, int lanes, place_t *pl, size_t *ufirst,
                         uint64_t *load, size_t *nunit)
{
    uint64_t width = 0;
    size_t nplaced = 0, nu = 0;
    int used = 0; /* lanes [0, used) hold a sequence; the others are empty (load 0) */
    for (uint64_t kk = db->n; kk-- > 0;) {
        uint64_t len = db->off[kk + 1] - db->off[kk];
        uint64_t x = padded(len);
        int best = used; /* the least loaded lane, the first of equals: an empty one first */
        if (len == 0) continue;
        if (used == lanes) {
            best = 0;
            for (int l = 1; l < lanes; l++)
                if (load[l] < load[best]) best = l;
        }
        if (nplaced == 0 || load[best] + x > width) { /* open a unit */
            ufirst[nu++] = nplaced;
            width = x;
            memset(load, 0, (size_t)lanes * sizeof *load);
            used = 0;
            best = 0;
        }
        pl[nplaced].col = load[best];
        pl[nplaced].k = (uint32_t)kk;
        pl[nplaced].lane = (uint32_t)best;
        load[best] += x;
        used += best == used;
        nplaced++;
    }
    ufirst[nu] = nplaced;
    *nunit = nu;
    return nplaced;
}

/* A unit whose lanes are mostly padding (a few long sequences that the
 * rest of the database cannot fill, e.g. a handful of genomes) is not
 * laid out: its sequences are scored one by one with the 32-bit striped
 * pair kernel, which uses every lane whatever the database (~7 GCUPS a
 * thread against ~38 for the 8-bit kernel at full lanes: below a quarter
 * of the lanes busy the pair kernel wins, and it never saturates).  Such
 * units go to s->pair_k, the others stay (renumbered) in pl, ufirst;
 * -1 when out of memory. */
static int drop_sparse(swgpu__cpu_state_t *s, int lanes, place_t *pl, size_t *ufirst,
                       size_t *nunit, size_t *nplaced)
{
    const swgpu_db_t *db = s->db;
    size_t kept = 0, np = 0;
    s->pair_k = malloc((*nplaced + 1) * sizeof *s->pair_k);
    s->is_pair = calloc((size_t)db->n + 1, 1);
    if (!s->pair_k || !s->is_pair) return -1;
    for (size_t u = 0; u < *nunit; u++) {
        uint64_t busy = 0, ncols = 0;
        for (size_t i = ufirst[u]; i < ufirst[u + 1]; i++) {
            uint64_t k = pl[i].k, len = db->off[k + 1] - db->off[k];
            uint64_t end = pl[i].col + padded(len);
            busy += len;
            if (end > ncols) ncols = end;
        }
        if (busy * SPARSE_DIV < ncols * (uint64_t)lanes) {
            for (size_t i = ufirst[u]; i < ufirst[u + 1]; i++) {
                s->pair_k[s->npair++] = pl[i].k;
                s->is_pair[pl[i].k] = 1;
            }
            continue;
        }
        /* keep unit u: move its placements down to unit number kept */
        size_t first = np;
        for (size_t i = ufirst[u]; i < ufirst[u + 1]; i++) pl[np++] = pl[i];
        ufirst[kept++] = first;
    }
    ufirst[kept] = np;
    *nunit = kept;
    *nplaced = np;
    return 0;
}

/* The units' columns, filled on all threads (fill_one); a unit with a
 * residue code out of range records its first such sequence. */
typedef struct {
    swgpu__cpu_state_t *s;
    int lanes;
    place_t *pl;
    const size_t *ufirst;
    uint32_t *bad_k;  /* per unit: the sorted index of its first bad sequence */
    uint8_t *bad;     /* per unit: that sequence's bad code + 1 (0: none) */
} fill_t;

/* Unit u's columns: padding, then its sequences' residues interleaved,
 * their codes' sets in s->codes; its places then sorted by column (the
 * order of its refill events, unit_events). */
static void fill_one(void *arg, size_t u)
{
    const fill_t *f = arg;
    swgpu__cpu_state_t *s = f->s;
    const swgpu_db_t *db = s->db;
    const size_t lanes = (size_t)f->lanes;
    place_t *p = f->pl + f->ufirst[u];
    const size_t np = f->ufirst[u + 1] - f->ufirst[u];
    uint8_t *base = s->cols + (size_t)s->ucol[u] * lanes;
    memset(base, SWGPU__PAD, (size_t)(s->ucol[u + 1] - s->ucol[u]) * lanes);
    f->bad[u] = 0;
    for (size_t i = 0; i < np; i++) {
        uint64_t k = p[i].k, len = db->off[k + 1] - db->off[k];
        const uint8_t *r = db->res + db->off[k];
        uint8_t *dst = base + (size_t)p[i].col * lanes + p[i].lane;
        uint32_t seen = 0;
        for (uint64_t j = 0; j < len; j++) {
            if (r[j] >= SWGPU__PAD) {
                f->bad_k[u] = (uint32_t)k;
                f->bad[u] = (uint8_t)(r[j] + 1);
                return;
            }
            dst[j * (uint64_t)lanes] = r[j];
            seen |= 1u << r[j];
        }
        s->codes[k] = seen;
    }
    qsort(p, np, sizeof *p, place_cmp);
}

/* Unit u's refill events and output slots from (*nev, *nslot) on, its np
 * places p sorted by column (fill_one); in unit order, one thread. */
static void unit_events(swgpu__cpu_state_t *s, int lanes, size_t u, const place_t *p, size_t np,
                        size_t *nev, size_t *nslot)
{
    uint32_t prev[64];
    size_t i;
    int l;
    for (l = 0; l < lanes; l++) prev[l] = SWGPU__NO_SEQ;
    s->uev[u] = *nev;
    s->uslot[u] = *nslot;
    for (i = 0; i < np; i++) {
        if (p[i].col > 0) {
            if (*nev == s->uev[u] || s->events[*nev - 1].col != p[i].col) {
                s->events[*nev].col = p[i].col;
                s->events[*nev].lanes = 0;
                (*nev)++;
            }
            s->events[*nev - 1].lanes |= (uint64_t)1 << p[i].lane;
            s->slot_k[(*nslot)++] = prev[p[i].lane];
        }
        prev[p[i].lane] = p[i].k;
    }
    for (l = 0; l < lanes; l++) s->slot_k[(*nslot)++] = prev[l];
    if (*nslot - s->uslot[u] > s->max_slots) s->max_slots = *nslot - s->uslot[u];
}

static int layout_db(swgpu__cpu_state_t *s, int lanes)
{
    const swgpu_db_t *db = s->db;
    const uint64_t n = db->n;
    place_t *pl = NULL;
    uint64_t *load = NULL, total = 0;
    size_t nunit = 0, u, nplaced = 0, nev = 0, nslot = 0;
    size_t *ufirst = NULL; /* unit u holds pl[ufirst[u] .. ufirst[u+1]) */
    int rc = SWGPU_ENOMEM;

    if ((rc = swgpu__check_db_seqs(n, "cpu engine", NULL))) return rc;
    pl = malloc((size_t)n * sizeof *pl);
    ufirst = malloc(((size_t)n + 1) * sizeof *ufirst);
    load = calloc((size_t)lanes, sizeof *load);
    if (!pl || !ufirst || !load) goto nomem;
    nplaced = place_seqs(db, lanes, pl, ufirst, load, &nunit);
    if (drop_sparse(s, lanes, pl, ufirst, &nunit, &nplaced) < 0) goto nomem;

    s->nunit = nunit;
    s->ucol = malloc((nunit + 1) * sizeof *s->ucol);
    s->uev = malloc((nunit + 1) * sizeof *s->uev);
    s->uslot = malloc((nunit + 1) * sizeof *s->uslot);
    /* at most one event and one extra output per placed sequence */
    s->events = malloc((nplaced + 1) * sizeof *s->events);
    s->slot_k = malloc((nplaced + nunit * (size_t)lanes + 1) * sizeof *s->slot_k);
    if (!s->ucol || !s->uev || !s->uslot || !s->events || !s->slot_k) goto nomem;
    for (u = 0; u < nunit; u++) {
        uint64_t ncols = 0;
        for (size_t i = ufirst[u]; i < ufirst[u + 1]; i++) {
            uint64_t k = pl[i].k, len = db->off[k + 1] - db->off[k];
            uint64_t end = pl[i].col + padded(len);
            if (end > ncols) ncols = end;
        }
        s->ucol[u] = total;
        total += ncols;
    }
    s->ucol[nunit] = total;
    if (total > (SIZE_MAX - 64) / (uint64_t)lanes) {
        rc = swgpu__fail(SWGPU_ENOMEM, "cpu engine: database layout too large");
        goto done;
    }
    s->cols = aligned_alloc(64, ((size_t)total * (size_t)lanes + 63) / 64 * 64 + 64);
    s->codes = calloc((size_t)n + 1, sizeof *s->codes);
    fill_t f = {s, lanes, pl, ufirst, malloc((nunit + 1) * sizeof *f.bad_k), malloc(nunit + 1)};
    if (!s->cols || !s->codes || !f.bad_k || !f.bad) {
        free(f.bad_k);
        free(f.bad);
        goto nomem;
    }
    /* the columns on the search's threads (a serial pass took 0.64 s of a
     * 1.1 M-sequence database's 0.79 s set-up: bench/NOTES-cpu.md) */
    swgpu__par_for(nunit, s->threads, fill_one, &f);
    rc = SWGPU_OK;
    for (u = 0; u < nunit && rc == SWGPU_OK; u++)
        if (f.bad[u]) {
            const uint32_t k = f.bad_k[u];
            rc = swgpu__fail(SWGPU_EDB, "cpu engine: database sequence %u (sorted %llu): "
                             "residue code %u out of range", db->orig[k],
                             (unsigned long long)k, (unsigned)(f.bad[u] - 1));
        }
    free(f.bad_k);
    free(f.bad);
    if (rc)
        goto done;
    for (u = 0; u < nunit; u++)
        unit_events(s, lanes, u, pl + ufirst[u], ufirst[u + 1] - ufirst[u], &nev, &nslot);
    s->uev[nunit] = nev;
    s->uslot[nunit] = nslot;
    rc = SWGPU_OK;
    goto done;
nomem:
    rc = swgpu__fail(SWGPU_ENOMEM, "cpu engine: out of memory for the database layout (%llu sequences)",
                     (unsigned long long)n);
done:
    free(pl);
    free(ufirst);
    free(load);
    return rc;
}

int swgpu__cpu_engine_create_isa(const swgpu_db_t *db, const swgpu_matrix_t *m,
                                 const swgpu_opts_t *o, swgpu__isa_t isa, void **state)
{
    swgpu__cpu_state_t *s = NULL;
    int rc, a, b, oe;
    int32_t smin, smax;

    *state = NULL;
    if (!db || !m || !o)
        return swgpu__fail(SWGPU_EINVAL, "cpu engine: database, matrix and options are required");
    if (o->gap_open < 0 || o->gap_extend < 0)
        return swgpu__fail(SWGPU_EINVAL, "cpu engine: negative gap penalties %d/%d",
                           o->gap_open, o->gap_extend);
    if (!swgpu__cpu_isa_supported(isa))
        return swgpu__fail(SWGPU_ENODEV, "cpu engine: this CPU cannot run %s kernels",
                           swgpu__cpu_isa_name(isa));
    s = calloc(1, sizeof *s);
    if (!s) return swgpu__fail(SWGPU_ENOMEM, "cpu engine: out of memory");
    s->db = db;
    s->m = *m;
    s->mt = *m;
    for (a = 0; a < SWGPU_NCODES; a++)
        for (b = 0; b < SWGPU_NCODES; b++) s->mt.s[a][b] = m->s[b][a];
    s->gap_open = o->gap_open;
    s->gap_extend = o->gap_extend;
    s->threads = o->threads > 0 ? o->threads : swgpu__ncores();
    if (s->threads > 256) s->threads = 256;
    s->isa = isa;
    s->k = swgpu__cpu_kernels(isa);
    /* the lane widths must hold every score the kernels can look up (all
     * codes below the pad code), whatever m->min / m->max say */
    smin = smax = m->s[0][0];
    for (a = 0; a < SWGPU__PAD; a++)
        for (b = 0; b < SWGPU__PAD; b++) {
            if (m->s[a][b] < smin) smin = m->s[a][b];
            if (m->s[a][b] > smax) smax = m->s[a][b];
        }
    s->smax = smax;
    oe = o->gap_open + o->gap_extend;
    s->use8 = s->k && smin >= INT8_MIN && smax <= INT8_MAX && oe <= INT8_MAX;
    s->use16 = s->k && smin >= INT16_MIN && smax <= INT16_MAX && oe <= INT16_MAX;
    for (a = 0; a < SWGPU_NCODES; a++) {
        for (b = 0; b < SWGPU_NCODES; b++) {
            int32_t v = b == SWGPU__PAD ? INT32_MIN : m->s[a][b];
            int16_t v16 = (int16_t)(v < INT16_MIN ? INT16_MIN : v > INT16_MAX ? INT16_MAX : v);
            s->row8[a * SWGPU_NCODES + b] = (int8_t)(v < INT8_MIN ? INT8_MIN : v > INT8_MAX ? INT8_MAX : v);
            s->row16[a * SWGPU_NCODES + b] = v16;
            s->row16b[a * 2 * SWGPU_NCODES + b] = (uint8_t)((uint16_t)v16 & 0xff);
            s->row16b[a * 2 * SWGPU_NCODES + SWGPU_NCODES + b] = (uint8_t)((uint16_t)v16 >> 8);
        }
    }
    if (s->use8 && db->n > 0) {
        rc = layout_db(s, s->k->lanes8);
        if (rc) goto fail;
    }
    *state = s;
    return SWGPU_OK;
fail:
    swgpu__cpu_destroy(s);
    return rc;
}

int swgpu__cpu_create(const swgpu_db_t *db, const swgpu_matrix_t *m, const swgpu_opts_t *o,
                      void **state)
{
    swgpu__isa_t isa;
    int rc = swgpu__cpu_isa_env(&isa);
    if (rc)
        return rc;
    return swgpu__cpu_engine_create_isa(db, m, o, isa, state);
}
