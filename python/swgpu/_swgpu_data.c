/*
 * _swgpu_data.c - the extension module's input types: SeqSet (a sequence
 * set read from a file or built from Python), Database (a database file or
 * a SeqSet's sequences) and Pssm (read, built from counts, formatted).
 */
#include "_swgpu.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* --------------------------------------------------------------- SeqSet */

static void seqset_dealloc(SeqSetObject *self)
{
    swgpu_seqset_destroy(self->set);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *seqset_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"alphabet", NULL};
    int a = SWGPU_AUTO;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|i:SeqSet", kwlist, &a) ||
        swpy_check_alphabet(a) < 0)
        return NULL;
    SeqSetObject *self = (SeqSetObject *)type->tp_alloc(type, 0);
    if (!self)
        return NULL;
    int rc = swgpu_seqset_create((swgpu_alphabet_t)a, &self->set);
    if (rc < 0) {
        Py_DECREF(self);
        return swpy_raise_msg(rc, swgpu_last_error());
    }
    return (PyObject *)self;
}

static PyObject *seqset_read(PyObject *cls, PyObject *args)
{
    PyObject *path;
    int a = SWGPU_AUTO;
    if (!PyArg_ParseTuple(args, "O|i:read", &path, &a) || swpy_check_alphabet(a) < 0)
        return NULL;
    PyObject *b = swpy_path_bytes(path);
    if (!b)
        return NULL;
    SeqSetObject *self = (SeqSetObject *)SeqSetType.tp_alloc(&SeqSetType, 0);
    if (!self) {
        Py_DECREF(b);
        return NULL;
    }
    (void)cls;
    const char *p = PyBytes_AS_STRING(b);
    int rc;
    swpy_log_begin();
    Py_BEGIN_ALLOW_THREADS
    rc = swgpu_seqset_read(p, (swgpu_alphabet_t)a, &self->set, &self->info);
    Py_END_ALLOW_THREADS
    Py_DECREF(b);
    if (swpy_finish(rc) < 0) {
        Py_DECREF(self);
        return NULL;
    }
    self->have_info = 1;
    return (PyObject *)self;
}

static PyObject *seqset_add(SeqSetObject *self, PyObject *args)
{
    const char *id, *desc;
    PyObject *seq, *keep = NULL;
    const char *p;
    Py_ssize_t n;
    if (!PyArg_ParseTuple(args, "ssO:add", &id, &desc, &seq))
        return NULL;
    char what[128];
    snprintf(what, sizeof what, "sequence %.100s", *id ? id : "(no id)");
    if (swpy_letters(seq, what, &keep, &p, &n) < 0)
        return NULL;
    int rc = swgpu_seqset_add(self->set, id, desc, p, (size_t)n);
    Py_DECREF(keep);
    if (rc < 0)
        return swpy_raise_msg(rc, swgpu_last_error());
    Py_RETURN_NONE;
}

static Py_ssize_t seqset_len(SeqSetObject *self)
{
    return (Py_ssize_t)swgpu_seqset_size(self->set);
}

static int seqset_at(SeqSetObject *self, PyObject *args, swgpu_seq_t *s)
{
    Py_ssize_t i;
    if (!PyArg_ParseTuple(args, "n", &i))
        return -1;
    if (i < 0 || (size_t)i >= swgpu_seqset_size(self->set)) {
        PyErr_SetString(PyExc_IndexError, "sequence index out of range");
        return -1;
    }
    swgpu_seqset_get(self->set, (size_t)i, s);
    return 0;
}

static PyObject *seqset_get(SeqSetObject *self, PyObject *args)
{
    swgpu_seq_t s;
    if (seqset_at(self, args, &s) < 0)
        return NULL;
    PyObject *res = swpy_decode_seq(swgpu_seqset_alphabet(self->set), s.res, s.len);
    return res ? Py_BuildValue("(NNN)", swpy_text(s.id), swpy_text(s.desc), res) : NULL;
}

static PyObject *seqset_meta(SeqSetObject *self, PyObject *args)
{
    swgpu_seq_t s;
    if (seqset_at(self, args, &s) < 0)
        return NULL;
    return Py_BuildValue("(NNn)", swpy_text(s.id), swpy_text(s.desc), (Py_ssize_t)s.len);
}

static PyObject *seqset_alphabet(SeqSetObject *self, void *closure)
{
    (void)closure;
    return PyLong_FromLong(swgpu_seqset_alphabet(self->set));
}

static PyObject *seqset_residues(SeqSetObject *self, void *closure)
{
    (void)closure;
    return PyLong_FromUnsignedLongLong(swgpu_seqset_residues(self->set));
}

static PyObject *seqset_info(SeqSetObject *self, void *closure)
{
    (void)closure;
    if (!self->have_info)
        Py_RETURN_NONE;
    return swpy_read_info(&self->info);
}

static PyMethodDef seqset_methods[] = {
    {"read", (PyCFunction)seqset_read, METH_VARARGS | METH_STATIC,
     "read(path, alphabet=0) -> SeqSet: a FASTA/FASTQ file (plain or gzip) or a makedb file"},
    {"add", (PyCFunction)seqset_add, METH_VARARGS, "add(id, desc, letters)"},
    {"get", (PyCFunction)seqset_get, METH_VARARGS, "get(i) -> (id, desc, residues)"},
    {"meta", (PyCFunction)seqset_meta, METH_VARARGS, "meta(i) -> (id, desc, length)"},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef seqset_getset[] = {
    {"alphabet", (getter)seqset_alphabet, NULL, "1 protein, 2 dna (0 while empty and auto)", NULL},
    {"residues", (getter)seqset_residues, NULL, "residues in all", NULL},
    {"info", (getter)seqset_info, NULL, "what reading the file found (None if not read)", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PySequenceMethods seqset_seq = {.sq_length = (lenfunc)seqset_len};

PyTypeObject SeqSetType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "swgpu._swgpu.SeqSet",
    .tp_basicsize = sizeof(SeqSetObject),
    .tp_dealloc = (destructor)seqset_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A set of sequences (swgpu_seqset_t).",
    .tp_new = seqset_new,
    .tp_methods = seqset_methods,
    .tp_getset = seqset_getset,
    .tp_as_sequence = &seqset_seq,
};

/* ------------------------------------------------------------- Database */

static void database_dealloc(DatabaseObject *self)
{
    swgpu_db_destroy(self->db);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* Database.open(path, alphabet, threads) and Database.makedb(in, out,
 * alphabet, threads): out NULL opens */
static PyObject *database_read(PyObject *path, PyObject *outp, int a, int threads)
{
    if (swpy_check_alphabet(a) < 0)
        return NULL;
    if (threads < 0) {
        PyErr_SetString(PyExc_ValueError, "threads: must be 0 (all cores) or more");
        return NULL;
    }
    PyObject *b = swpy_path_bytes(path), *ob = NULL;
    if (!b || (outp && !(ob = swpy_path_bytes(outp)))) {
        Py_XDECREF(b);
        return NULL;
    }
    DatabaseObject *self = (DatabaseObject *)DatabaseType.tp_alloc(&DatabaseType, 0);
    if (!self) {
        Py_DECREF(b);
        Py_XDECREF(ob);
        return NULL;
    }
    const char *p = PyBytes_AS_STRING(b), *o = ob ? PyBytes_AS_STRING(ob) : NULL;
    int rc;
    swpy_log_begin();
    Py_BEGIN_ALLOW_THREADS
    rc = o ? swgpu_makedb(p, o, (swgpu_alphabet_t)a, threads, &self->db, &self->info)
           : swgpu_db_open_threads(p, (swgpu_alphabet_t)a, threads, &self->db, &self->info);
    Py_END_ALLOW_THREADS
    Py_DECREF(b);
    Py_XDECREF(ob);
    if (swpy_finish(rc) < 0) {
        Py_DECREF(self);
        return NULL;
    }
    self->have_info = 1;
    return (PyObject *)self;
}

static PyObject *database_open(PyObject *cls, PyObject *args)
{
    PyObject *path;
    int a = SWGPU_AUTO, threads = 0;
    (void)cls;
    if (!PyArg_ParseTuple(args, "O|ii:open", &path, &a, &threads))
        return NULL;
    return database_read(path, NULL, a, threads);
}

static PyObject *database_makedb(PyObject *cls, PyObject *args)
{
    PyObject *path, *outp;
    int a = SWGPU_AUTO, threads = 0;
    (void)cls;
    if (!PyArg_ParseTuple(args, "OO|ii:makedb", &path, &outp, &a, &threads))
        return NULL;
    return database_read(path, outp, a, threads);
}

/* Database.open_index(path, alphabet): a makedb file's index alone (an
 * empty part), for a database searched streamed from disk */
static PyObject *database_open_index(PyObject *cls, PyObject *args)
{
    PyObject *path;
    int a = SWGPU_AUTO;
    (void)cls;
    if (!PyArg_ParseTuple(args, "O|i:open_index", &path, &a) || swpy_check_alphabet(a) < 0)
        return NULL;
    PyObject *b = swpy_path_bytes(path);
    if (!b)
        return NULL;
    DatabaseObject *self = (DatabaseObject *)DatabaseType.tp_alloc(&DatabaseType, 0);
    if (!self) {
        Py_DECREF(b);
        return NULL;
    }
    int rc;
    swpy_log_begin();
    Py_BEGIN_ALLOW_THREADS
    rc = swgpu_db_open_part(PyBytes_AS_STRING(b), (swgpu_alphabet_t)a, 0, 0, &self->db, NULL);
    Py_END_ALLOW_THREADS
    Py_DECREF(b);
    if (swpy_finish(rc) < 0) {
        Py_DECREF(self);
        return NULL;
    }
    return (PyObject *)self;
}

static PyObject *database_from_seqset(PyObject *cls, PyObject *args)
{
    SeqSetObject *set;
    (void)cls;
    if (!PyArg_ParseTuple(args, "O!:from_seqset", &SeqSetType, &set))
        return NULL;
    DatabaseObject *self = (DatabaseObject *)DatabaseType.tp_alloc(&DatabaseType, 0);
    if (!self)
        return NULL;
    int rc;
    swpy_log_begin();
    Py_BEGIN_ALLOW_THREADS
    rc = swgpu_db_from_seqset(set->set, &self->db);
    Py_END_ALLOW_THREADS
    if (swpy_finish(rc) < 0) {
        Py_DECREF(self);
        return NULL;
    }
    return (PyObject *)self;
}

static Py_ssize_t database_len(DatabaseObject *self)
{
    return (Py_ssize_t)swgpu_db_size(self->db);
}

/* database index i is one of the handle's (a part's, such as a streamed
 * search's hits, holds some of the whole's indices); -1 with IndexError */
static int database_holds(DatabaseObject *self, Py_ssize_t i)
{
    swgpu_db_part_t w;
    swgpu_seq_t s;
    swgpu_db_part_info(self->db, &w);
    if (i < 0 || (uint64_t)i >= w.total_n) {
        PyErr_SetString(PyExc_IndexError, "database index out of range");
        return -1;
    }
    if (swgpu_db_get(self->db, (size_t)i, &s) != SWGPU_OK) {
        PyErr_Format(PyExc_IndexError, "database index %zd: %s", i, swgpu_last_error());
        return -1;
    }
    return 0;
}

static int database_at(DatabaseObject *self, PyObject *args, swgpu_seq_t *s)
{
    Py_ssize_t i;
    if (!PyArg_ParseTuple(args, "n", &i) || database_holds(self, i) < 0)
        return -1;
    swgpu_db_get(self->db, (size_t)i, s);
    return 0;
}

static PyObject *database_get(DatabaseObject *self, PyObject *args)
{
    swgpu_seq_t s;
    if (database_at(self, args, &s) < 0)
        return NULL;
    PyObject *res = swpy_decode_seq(swgpu_db_alphabet(self->db), s.res, s.len);
    return res ? Py_BuildValue("(NNN)", swpy_text(s.id), swpy_text(s.desc), res) : NULL;
}

static PyObject *database_meta(DatabaseObject *self, PyObject *args)
{
    swgpu_seq_t s;
    if (database_at(self, args, &s) < 0)
        return NULL;
    return Py_BuildValue("(NNn)", swpy_text(s.id), swpy_text(s.desc), (Py_ssize_t)s.len);
}

/* text or None */
static PyObject *text_or_none(const char *s)
{
    if (!s)
        Py_RETURN_NONE;
    return swpy_text(s);
}

static PyObject *database_ids(DatabaseObject *self, PyObject *args)
{
    Py_ssize_t i;
    swgpu_seq_ids_t x;
    if (!PyArg_ParseTuple(args, "n:ids", &i) || database_holds(self, i) < 0)
        return NULL;
    if (swgpu_db_ids(self->db, (size_t)i, &x) < 0)
        return swpy_raise_msg(SWGPU_EINVAL, swgpu_last_error());
    return Py_BuildValue("(NNNNNNNN)", swpy_text(x.seqid), swpy_text(x.acc), swpy_text(x.accver),
                         swpy_text(x.allseqid), text_or_none(x.title), text_or_none(x.alltitles),
                         swpy_text(x.taxid), swpy_text(x.taxids));
}

/* taxdb_names(taxids) -> {taxid: (sciname, comname, blastname, kingdom)} for
 * those NCBI's taxdb (found as the command line finds it) has; {} without */
PyObject *py_taxdb_names(PyObject *self, PyObject *arg)
{
    (void)self;
    swgpu_taxdb_t *t = NULL;
    PyObject *seq = PySequence_Fast(arg, "taxdb_names: expected a sequence of taxids");
    if (!seq)
        return NULL;
    int rc = swgpu_taxdb_open(NULL, &t);
    if (rc < 0) {
        Py_DECREF(seq);
        return swpy_raise_msg(rc, swgpu_last_error());
    }
    PyObject *out = PyDict_New();
    for (Py_ssize_t k = 0; out && t && k < PySequence_Fast_GET_SIZE(seq); k++) {
        PyObject *o = PySequence_Fast_GET_ITEM(seq, k);
        long long v = PyLong_AsLongLong(o);
        swgpu_taxon_t x;
        if (v == -1 && PyErr_Occurred()) {
            Py_CLEAR(out);
            break;
        }
        if (!swgpu_taxdb_lookup(t, v, &x))
            continue;
        PyObject *names = Py_BuildValue(
            "(NNNN)", PyUnicode_DecodeUTF8(x.sciname, (Py_ssize_t)x.sciname_len, "surrogateescape"),
            PyUnicode_DecodeUTF8(x.comname, (Py_ssize_t)x.comname_len, "surrogateescape"),
            PyUnicode_DecodeUTF8(x.blastname, (Py_ssize_t)x.blastname_len, "surrogateescape"),
            PyUnicode_DecodeUTF8(x.kingdom, (Py_ssize_t)x.kingdom_len, "surrogateescape"));
        if (!names || PyDict_SetItem(out, o, names) < 0)
            Py_CLEAR(out);
        Py_XDECREF(names);
    }
    swgpu_taxdb_destroy(t);
    Py_DECREF(seq);
    return out;
}

static PyObject *database_write(DatabaseObject *self, PyObject *args)
{
    PyObject *path;
    if (!PyArg_ParseTuple(args, "O:write", &path))
        return NULL;
    PyObject *b = swpy_path_bytes(path);
    if (!b)
        return NULL;
    const char *p = PyBytes_AS_STRING(b);
    int rc;
    swpy_log_begin();
    Py_BEGIN_ALLOW_THREADS
    rc = swgpu_db_write(self->db, p);
    Py_END_ALLOW_THREADS
    Py_DECREF(b);
    if (swpy_finish(rc) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *database_alphabet(DatabaseObject *self, void *closure)
{
    (void)closure;
    return PyLong_FromLong(swgpu_db_alphabet(self->db));
}

static PyObject *database_residues(DatabaseObject *self, void *closure)
{
    (void)closure;
    return PyLong_FromUnsignedLongLong(swgpu_db_residues(self->db));
}

static PyObject *database_max_len(DatabaseObject *self, void *closure)
{
    (void)closure;
    return PyLong_FromUnsignedLongLong(swgpu_db_max_len(self->db));
}

static PyObject *database_info(DatabaseObject *self, void *closure)
{
    (void)closure;
    if (!self->have_info)
        Py_RETURN_NONE;
    return swpy_read_info(&self->info);
}

static PyMethodDef database_methods[] = {
    {"open", (PyCFunction)database_open, METH_VARARGS | METH_STATIC,
     "open(path, alphabet=0, threads=0) -> Database: a makedb file, or FASTA/FASTQ built in "
     "memory (a plain FASTA file on threads threads, 0: all cores)"},
    {"makedb", (PyCFunction)database_makedb, METH_VARARGS | METH_STATIC,
     "makedb(input, output, alphabet=0, threads=0) -> Database: input written as the makedb "
     "file output (swgpu_makedb)"},
    {"open_index", (PyCFunction)database_open_index, METH_VARARGS | METH_STATIC,
     "open_index(path, alphabet=0) -> Database: a makedb file's index alone (no sequences; "
     "whole gives the file's counts)"},
    {"from_seqset", (PyCFunction)database_from_seqset, METH_VARARGS | METH_STATIC,
     "from_seqset(seqset) -> Database (copied)"},
    {"get", (PyCFunction)database_get, METH_VARARGS, "get(i) -> (id, desc, residues)"},
    {"meta", (PyCFunction)database_meta, METH_VARARGS, "meta(i) -> (id, desc, length)"},
    {"ids", (PyCFunction)database_ids, METH_VARARGS,
     "ids(i) -> (sseqid, sacc, saccver, sallseqid, stitle or None, salltitles or None, staxid, "
     "staxids) as swgpu_db_ids gives them"},
    {"write", (PyCFunction)database_write, METH_VARARGS, "write(path): a makedb file"},
    {NULL, NULL, 0, NULL},
};

/* (sequences, residues, longest) of the whole database the handle is a part of */
static PyObject *database_whole(DatabaseObject *self, void *closure)
{
    swgpu_db_part_t w;
    (void)closure;
    swgpu_db_part_info(self->db, &w);
    return Py_BuildValue("(KKK)", (unsigned long long)w.total_n,
                         (unsigned long long)w.total_residues, (unsigned long long)w.total_max_len);
}

static PyGetSetDef database_getset[] = {
    {"whole", (getter)database_whole, NULL,
     "(sequences, residues, longest) of the whole database (a part's or an index's)", NULL},
    {"alphabet", (getter)database_alphabet, NULL, "1 protein, 2 dna", NULL},
    {"residues", (getter)database_residues, NULL, "residues in all", NULL},
    {"max_len", (getter)database_max_len, NULL, "longest sequence", NULL},
    {"info", (getter)database_info, NULL, "what opening found (None if built in memory)", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PySequenceMethods database_seq = {.sq_length = (lenfunc)database_len};

PyTypeObject DatabaseType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "swgpu._swgpu.Database",
    .tp_basicsize = sizeof(DatabaseObject),
    .tp_dealloc = (destructor)database_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A sequence database (swgpu_db_t).",
    .tp_methods = database_methods,
    .tp_getset = database_getset,
    .tp_as_sequence = &database_seq,
};

/* ------------------------------------------------------------------ Pssm */

static void pssm_dealloc(PssmObject *self)
{
    if (self->owner)
        Py_DECREF(self->owner);
    else
        swgpu_pssm_destroy(self->p);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* A Pssm object for p: its own (owner NULL, p destroyed on failure) or
 * borrowed from owner. */
PyObject *swpy_pssm_wrap(swgpu_pssm_t *p, PyObject *owner)
{
    PssmObject *self = (PssmObject *)PssmType.tp_alloc(&PssmType, 0);
    if (!self) {
        if (!owner)
            swgpu_pssm_destroy(p);
        return NULL;
    }
    self->p = p;
    Py_XINCREF(owner);
    self->owner = owner;
    return (PyObject *)self;
}

static PyObject *pssm_read(PyObject *cls, PyObject *args)
{
    PyObject *path;
    (void)cls;
    if (!PyArg_ParseTuple(args, "O:read", &path))
        return NULL;
    PyObject *b = swpy_path_bytes(path);
    if (!b)
        return NULL;
    const char *s = PyBytes_AS_STRING(b);
    swgpu_pssm_t *p = NULL;
    int rc;
    swpy_log_begin();
    Py_BEGIN_ALLOW_THREADS
    rc = swgpu_pssm_read(s, &p);
    Py_END_ALLOW_THREADS
    Py_DECREF(b);
    if (swpy_finish(rc) < 0)
        return NULL;
    return swpy_pssm_wrap(p, NULL);
}

/* create(id, residues or None, scores, n): scores a buffer of n * 20 native
 * int32 (row by row, columns ARNDCQEGHILKMFPSTWYV) */
static PyObject *pssm_create(PyObject *cls, PyObject *args)
{
    const char *id;
    PyObject *residues, *keep = NULL;
    Py_buffer scores;
    Py_ssize_t n;
    const char *letters_p = NULL;
    (void)cls;
    if (!PyArg_ParseTuple(args, "sOy*n:create", &id, &residues, &scores, &n))
        return NULL;
    PyObject *ret = NULL;
    if (n < 0 || (size_t)scores.len != (size_t)n * 20 * sizeof(int32_t)) {
        swpy_raise_fmt(SWGPU_EINVAL,
                       "PSSM %s: %zd bytes of scores for %zd positions (expected %zd)", id,
                       scores.len, n, n * 20 * (Py_ssize_t)sizeof(int32_t));
        goto done;
    }
    if (residues != Py_None) {
        Py_ssize_t len;
        if (swpy_letters(residues, "residues", &keep, &letters_p, &len) < 0)
            goto done;
        if (len != n) {
            swpy_raise_fmt(SWGPU_EINVAL, "PSSM %s: %zd residues for %zd positions", id, len, n);
            goto done;
        }
    }
    swgpu_pssm_t *p = NULL;
    int rc = swgpu_pssm_create(id, letters_p, (const int32_t *)scores.buf, (size_t)n, &p);
    if (rc < 0) {
        swpy_raise_msg(rc, swgpu_last_error());
        goto done;
    }
    ret = swpy_pssm_wrap(p, NULL);
done:
    Py_XDECREF(keep);
    PyBuffer_Release(&scores);
    return ret;
}

/* rows() -> [[20 scores], ...]: each position's scores against
 * ARNDCQEGHILKMFPSTWYV */
static PyObject *pssm_rows(PssmObject *self, PyObject *unused)
{
    (void)unused;
    size_t n = swgpu_pssm_length(self->p);
    PyObject *list = PyList_New((Py_ssize_t)n);
    for (size_t i = 0; list && i < n; i++) {
        PyObject *row = PyList_New(20);
        for (int c = 0; row && c < 20; c++) {
            PyObject *v = PyLong_FromLong(swgpu_pssm_score(self->p, i, (uint8_t)c));
            if (!v)
                Py_CLEAR(row);
            else
                PyList_SET_ITEM(row, c, v);
        }
        if (!row)
            Py_CLEAR(list);
        else
            PyList_SET_ITEM(list, (Py_ssize_t)i, row);
    }
    return list;
}

/* score(position, letter) -> the score of a position against any protein
 * letter (the rule of swgpu_pssm_score for those without a column) */
static PyObject *pssm_score(PssmObject *self, PyObject *args)
{
    Py_ssize_t pos;
    int letter;
    if (!PyArg_ParseTuple(args, "nC:score", &pos, &letter))
        return NULL;
    size_t n = swgpu_pssm_length(self->p);
    if (pos < 0 || (size_t)pos >= n) {
        PyErr_Format(PyExc_IndexError, "position %zd out of range (%zu positions)", pos, n);
        return NULL;
    }
    int code = letter < 128 ? swgpu_encode(SWGPU_PROTEIN, letter) : -1;
    if (code < 0)
        return swpy_raise_fmt(SWGPU_EINVAL, "'%c' is not a protein letter",
                              letter < 128 ? letter : '?');
    return PyLong_FromLong(swgpu_pssm_score(self->p, (size_t)pos, (uint8_t)code));
}

/* The protein matrix and gaps of a PSSM's statistics (matrix None:
 * BLOSUM62; gaps None: the protein defaults); *m is the caller's. */
static int pssm_scoring(PyObject *matrix, PyObject *go, PyObject *ge, swgpu_matrix_t **m,
                        swgpu_opts_t *o)
{
    swgpu_opts_init(o, SWGPU_PROTEIN);
    if (swpy_int_arg(go, "gap_open", &o->gap_open) < 0 ||
        swpy_int_arg(ge, "gap_extend", &o->gap_extend) < 0 ||
        swpy_make_matrix(SWGPU_PROTEIN, matrix, Py_None, Py_None, m) < 0)
        return -1;
    int rc = swgpu_opts_check(o, *m);
    if (rc < 0) {
        swpy_raise_msg(rc, swgpu_last_error());
        return -1;
    }
    return 0;
}

/* format(matrix, gap_open, gap_extend) -> str: psiblast's ASCII format */
static PyObject *pssm_format(PssmObject *self, PyObject *args)
{
    PyObject *matrix, *go, *ge;
    if (!PyArg_ParseTuple(args, "OOO:format", &matrix, &go, &ge))
        return NULL;
    swgpu_matrix_t *m = NULL;
    swgpu_opts_t o;
    if (pssm_scoring(matrix, go, ge, &m, &o) < 0) {
        swgpu_matrix_destroy(m);
        return NULL;
    }
    char *buf = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&buf, &len);
    if (!fp) {
        swgpu_matrix_destroy(m);
        return PyErr_NoMemory();
    }
    int rc;
    swpy_log_begin();
    Py_BEGIN_ALLOW_THREADS
    rc = swgpu_pssm_write(self->p, m, o.gap_open, o.gap_extend, fp);
    if (fclose(fp) != 0 && rc == SWGPU_OK)
        rc = SWGPU_ENOMEM;
    Py_END_ALLOW_THREADS
    swgpu_matrix_destroy(m);
    PyObject *s = NULL;
    if (swpy_finish(rc) == 0)
        s = PyUnicode_DecodeUTF8(buf ? buf : "", (Py_ssize_t)len, "strict");
    free(buf);
    return s;
}

PyObject *swpy_karlin_tuple(const swgpu_karlin_t *k)
{
    return Py_BuildValue("(dddddOO)", k->lambda, k->K, k->H, k->alpha, k->beta,
                         k->estimated ? Py_True : Py_False, k->round_down ? Py_True : Py_False);
}

/* karlin(matrix, gap_open, gap_extend) -> the parameters of a search with it */
static PyObject *pssm_karlin(PssmObject *self, PyObject *args)
{
    PyObject *matrix, *go, *ge;
    if (!PyArg_ParseTuple(args, "OOO:karlin", &matrix, &go, &ge))
        return NULL;
    swgpu_matrix_t *m = NULL;
    swgpu_opts_t o;
    swgpu_karlin_t k;
    PyObject *ret = NULL;
    if (pssm_scoring(matrix, go, ge, &m, &o) == 0) {
        int rc;
        swpy_log_begin();
        Py_BEGIN_ALLOW_THREADS
        rc = swgpu_pssm_karlin(self->p, m, o.gap_open, o.gap_extend, &k);
        Py_END_ALLOW_THREADS
        if (swpy_finish(rc) == 0)
            ret = swpy_karlin_tuple(&k);
    }
    swgpu_matrix_destroy(m);
    return ret;
}

static PyObject *pssm_id(PssmObject *self, void *c)
{
    (void)c;
    return swpy_text(swgpu_pssm_id(self->p));
}
static PyObject *pssm_length(PssmObject *self, void *c)
{
    (void)c;
    return PyLong_FromSize_t(swgpu_pssm_length(self->p));
}
static PyObject *pssm_residues(PssmObject *self, void *c)
{
    (void)c;
    return PyUnicode_FromString(swgpu_pssm_residues(self->p));
}
static PyObject *pssm_min(PssmObject *self, void *c)
{
    (void)c;
    return PyLong_FromLong(swgpu_pssm_min(self->p));
}
static PyObject *pssm_max(PssmObject *self, void *c)
{
    (void)c;
    return PyLong_FromLong(swgpu_pssm_max(self->p));
}

static PyMethodDef pssm_methods[] = {
    {"read", (PyCFunction)pssm_read, METH_VARARGS | METH_STATIC,
     "read(path) -> Pssm: psiblast's ASCII format (plain or gzip)"},
    {"create", (PyCFunction)pssm_create, METH_VARARGS | METH_STATIC,
     "create(id, residues or None, scores, n) -> Pssm: scores n * 20 native int32"},
    {"rows", (PyCFunction)pssm_rows, METH_NOARGS,
     "rows() -> [[20 scores (ARNDCQEGHILKMFPSTWYV)], ...]"},
    {"score", (PyCFunction)pssm_score, METH_VARARGS, "score(position, letter) -> int"},
    {"format", (PyCFunction)pssm_format, METH_VARARGS,
     "format(matrix, gap_open, gap_extend) -> str in psiblast's ASCII format"},
    {"karlin", (PyCFunction)pssm_karlin, METH_VARARGS,
     "karlin(matrix, gap_open, gap_extend) -> (lambda, K, H, alpha, beta, estimated, "
     "round_down)"},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef pssm_getset[] = {
    {"id", (getter)pssm_id, NULL, "the query's id", NULL},
    {"length", (getter)pssm_length, NULL, "positions", NULL},
    {"residues", (getter)pssm_residues, NULL, "the query residues", NULL},
    {"min", (getter)pssm_min, NULL, "least score (any position, any code)", NULL},
    {"max", (getter)pssm_max, NULL, "greatest score", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject PssmType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "swgpu._swgpu.Pssm",
    .tp_basicsize = sizeof(PssmObject),
    .tp_dealloc = (destructor)pssm_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A position-specific score matrix (swgpu_pssm_t).",
    .tp_methods = pssm_methods,
    .tp_getset = pssm_getset,
};

/* The C PSSMs of a tuple of Pssm objects (malloc'd, the caller's); NULL
 * with an exception set on failure. */
const swgpu_pssm_t **swpy_pssm_array(PyObject *tuple)
{
    if (!PyTuple_Check(tuple)) {
        PyErr_SetString(PyExc_TypeError, "PSSMs: expected a tuple of Pssm objects");
        return NULL;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(tuple);
    const swgpu_pssm_t **a = malloc((size_t)(n ? n : 1) * sizeof *a);
    if (!a)
        return (const swgpu_pssm_t **)PyErr_NoMemory();
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *o = PyTuple_GET_ITEM(tuple, i);
        if (!PyObject_TypeCheck(o, &PssmType)) {
            free(a);
            PyErr_Format(PyExc_TypeError, "PSSM %zd: expected a Pssm, got %s", i + 1,
                         Py_TYPE(o)->tp_name);
            return NULL;
        }
        a[i] = ((PssmObject *)o)->p;
    }
    return a;
}
