"""Sequence sets, databases and database search: Queries, Database (its
search() and scores(); queries are sequences or PSSMs, searched once or
iterated), and the results as QueryResult and Hit objects with BLAST's
tabular columns."""

import array
import operator
import os
import stat
from dataclasses import dataclass, field
from typing import Any, Iterator, NamedTuple, Optional, Sequence as SequenceT, Tuple

from . import _swgpu
from ._align import Alignment
from ._common import (Karlin, _TYPE_NAMES, _alphabet, _clamp_threads, _error, _options_doc,
                      _refuse_input, _residues, format_bitscore, format_evalue)
from ._pssm import Pssm

try:
    import numpy as _np
except ImportError:  # numpy is optional: scores() then returns array.array rows
    _np = None

__all__ = ["Sequence", "Queries", "Database", "Karlin", "Hit", "QueryResult", "SearchResults",
           "IteratedSearchResults", "COLUMNS", "STD_COLUMNS", "makedb"]


class Sequence(NamedTuple):
    """One sequence of a Queries set or a Database."""

    id: str           #: first word of the header line
    description: str  #: rest of the header line ("" if none)
    sequence: str     #: residue letters (upper case; unknown letters as X or N)


def _entries(sequences, default_id):
    """(id, description, letters) of each item: a str (or bytes), a pair
    (id, sequence), a triple (id, description, sequence) or a Sequence."""
    if isinstance(sequences, (str, bytes, bytearray)):
        sequences = [sequences]
    out = []
    for i, item in enumerate(sequences):
        if isinstance(item, (str, bytes, bytearray)):
            sid, desc, seq = "%s_%d" % (default_id, i + 1), "", item
        elif isinstance(item, tuple) and len(item) == 2:
            (sid, seq), desc = item, ""
        elif isinstance(item, tuple) and len(item) == 3:
            sid, desc, seq = item
        else:
            raise TypeError("sequence %d: expected a str, (id, sequence) or (id, description, "
                            "sequence), got %r" % (i + 1, item))
        if not isinstance(sid, str) or not isinstance(desc, str):
            raise TypeError("sequence %d: id and description must be str" % (i + 1))
        out.append((sid, desc, _residues(seq, "sequence %s" % (sid or i + 1))))
    return out


def _seqset(entries, alphabet):
    """A C sequence set of the entries; alphabet 0 detects it from all of
    them (the library's rule, as for a file)."""
    if alphabet == 0 and entries:
        alphabet = _swgpu.detect("".join(e[2] for e in entries))
    s = _swgpu.SeqSet(alphabet)
    for sid, desc, seq in entries:
        s.add(sid, desc, seq)
    return s


class _SeqList:
    """Sequence access shared by Queries and Database (self._c: the C set)."""

    _c: Any

    def __len__(self) -> int:
        return len(self._c)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        n = len(self._c)
        i = operator.index(i)  # ints, and NumPy's integers
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("index %d out of range (%d sequences)" % (i, n))
        return Sequence(*self._c.get(i))

    def __iter__(self) -> Iterator[Sequence]:
        for i in range(len(self._c)):
            yield Sequence(*self._c.get(i))

    @property
    def type(self) -> str:
        """"protein" or "dna"."""
        return _TYPE_NAMES[self._c.alphabet]

    @property
    def residues(self) -> int:
        """Residues in all sequences."""
        return self._c.residues

    @property
    def info(self) -> Optional[dict]:
        """What reading the file found: records, empty (records skipped),
        unknown (letters mapped to X or N), residues, max_length; None when
        the set was made from Python sequences."""
        return self._c.info


class Queries(_SeqList):
    """A set of query sequences.

    ``Queries(sequences, type="auto")`` takes an iterable of sequences, each
    a str of residue letters (ids "query_1", "query_2", ...), an
    ``(id, sequence)`` pair or an ``(id, description, sequence)`` triple;
    ``Queries.read(path)`` reads a file.  type "auto" detects protein or DNA
    from all the sequences together (DNA if at least 90% of the letters other
    than N are A, C, G, T or U).  Indexing and iteration give Sequence tuples.
    """

    def __init__(self, sequences, type="auto"):
        if isinstance(sequences, (str, bytes, os.PathLike)):
            raise TypeError("Queries(%r): give a list of sequences, or Queries.read(path) for a "
                            "file" % (sequences,))
        self._c = _seqset(_entries(sequences, "query"), _alphabet(type))
        self.path = None

    @classmethod
    def read(cls, path, type="auto") -> "Queries":
        """Read a FASTA or FASTQ file (plain or gzip, detected from the
        content) or a makedb database, as ``swgpu search -q`` does."""
        q = cls.__new__(cls)
        q._c = _swgpu.SeqSet.read(path, _alphabet(type))
        q.path = os.fsdecode(path)
        return q

    def __repr__(self):
        return "Queries(%d %s sequences%s)" % (len(self), self.type,
                                              ", %r" % self.path if self.path else "")


#: The columns of ``swgpu search --outfmt '6 ...'`` (and of Hit.row()).
COLUMNS = ("qseqid", "qacc", "qaccver", "qlen", "sseqid", "sacc", "saccver", "stitle", "slen",
           "qstart", "qend", "sstart", "send", "qseq", "sseq", "evalue", "bitscore", "score",
           "length", "pident", "nident", "mismatch", "positive", "gapopen", "gaps", "btop",
           "cigar", "sstrand", "qcovhsp", "qcovs", "ppos", "salltitles", "sallseqid",
           "staxid", "ssciname", "scomname", "sblastname", "sskingdom", "staxids", "sscinames",
           "scomnames", "sblastnames", "sskingdoms")
#: BLAST+'s default columns, "std".
STD_COLUMNS = ("qaccver", "saccver", "pident", "length", "mismatch", "gapopen", "qstart",
               "qend", "sstart", "send", "evalue", "bitscore")
_NEED_ALN = frozenset(("qstart", "qend", "sstart", "send", "qseq", "sseq", "length", "pident",
                       "nident", "mismatch", "positive", "gapopen", "gaps", "btop", "cigar",
                       "qcovhsp", "qcovs", "ppos"))


_TEXT_COLUMNS = frozenset(("qseqid", "qacc", "qaccver", "sseqid", "sacc", "saccver", "stitle",
                           "salltitles", "sallseqid"))
#: taxonomy columns: None prints N/A, a tuple its items joined by ';' (N/A if empty)
_TAXON_COLUMNS = frozenset(("staxid", "ssciname", "scomname", "sblastname", "sskingdom",
                            "staxids", "sscinames", "scomnames", "sblastnames", "sskingdoms"))
_TAXON_FIELD = {"sci": 0, "com": 1, "blast": 2, "kingdom": 3}
_ESCAPES = {i: "\\x%02x" % i for i in list(range(0x20)) + [0x7f]}
_ESCAPES.update({0x09: "\\t", 0x0a: "\\n", 0x0d: "\\r"})


def escape_text(s: str) -> str:
    """A name or description as the output formats write it: control
    characters as \\t, \\n, \\r and \\xHH, so that they cannot add columns
    or rows (the library's writer does the same)."""
    return s.translate(_ESCAPES)


def _columns(columns):
    """A column list ("std", "qseqid sseqid ..." or "qseqid,sseqid,...", or
    names) as a tuple, each column once (as BLAST prints a repeated column
    once)."""
    names = columns.replace(",", " ").split() if isinstance(columns, str) else list(columns)
    out = []
    for name in names:
        for c in (STD_COLUMNS if name == "std" else (name,)):
            if c not in COLUMNS:
                raise _error(_swgpu.InvalidArgumentError, "outfmt: unknown column '%s'" % c)
            if c not in out:
                out.append(c)
    return tuple(out or STD_COLUMNS)


@dataclass(frozen=True)
class Hit:
    """One database sequence reported for a query, with BLAST's tabular
    columns as attributes (qseqid sseqid pident length mismatch gapopen qstart
    qend sstart send evalue bitscore score qlen slen nident gaps cigar, and
    qacc qaccver sacc saccver stitle qseq sseq positive btop sstrand, qcovhsp
    qcovs ppos salltitles sallseqid, and the taxonomy columns staxid staxids
    ssciname sscinames scomname scomnames sblastname sblastnames sskingdom
    sskingdoms).

    The subject's id columns (sseqid sacc saccver sallseqid stitle
    salltitles) are what blastp prints for a BLAST database (with
    -parse_seqids: the accession in sacc, the title alone in stitle, several
    deflines joined), the id and "id description" otherwise.  staxid is an int
    (None when the subject has none), staxids a tuple of ints (0 for a
    defline without; () for a database that is not a BLAST database); the
    names come from NCBI's taxdb.bti/.btd in the current directory or
    $BLASTDB, as the command line finds them: ssciname etc. a str or None,
    sscinames and scomnames one str or None per taxid of staxids,
    sblastnames and sskingdoms the distinct names found, sorted.
    Coordinates in the columns are 1-based and inclusive; ``alignment`` has
    them 0-based and half-open.  With ``no_align`` the search computes no
    alignment: ``alignment`` and the columns that need it are None.

    A DNA hit on the subject's minus strand (``strand`` "minus") aligns the
    query with the subject's reverse complement: ``alignment.cigar``, ``sseq``
    and ``btop`` read that reverse complement, ``alignment.target_begin`` and
    ``target_end`` are the interval on the subject as stored, and ``sstart`` >
    ``send`` as BLAST prints them.
    """

    query_index: int          #: index of the query in the query set
    query_id: str
    query_length: int
    target_index: int         #: index in the database (database order)
    target_id: str
    target_description: str
    target_length: int
    score: int                #: raw Smith-Waterman score
    bitscore: float
    evalue: float
    alignment: Optional[Alignment]
    _text: Any = field(default=None, repr=False, compare=False)
    #: DNA: "plus" or "minus", the subject's strand the hit is on; None (protein)
    strand: Optional[str] = None
    #: 0: the subject's best alignment; k > 0 (max_hsps): its (k+1)-th HSP,
    #: which follows the subject's earlier ones in the query's hits
    hsp: int = 0
    #: the query residues the subject's reported HSPs cover together (qcovs)
    _covered: Optional[int] = field(default=None, repr=False, compare=False)
    _ids: Any = field(default=None, repr=False, compare=False)   # () -> Database ids(target)
    _taxa: Any = field(default=None, repr=False, compare=False)  # () -> {taxid: names}

    # ---- BLAST columns
    qseqid = qacc = qaccver = property(lambda self: self.query_id)
    qlen = property(lambda self: self.query_length)
    slen = property(lambda self: self.target_length)

    def _id(self, k):
        return self.target_id if self._ids is None else self._ids()[k]

    sseqid = property(lambda self: self._id(0))
    sacc = property(lambda self: self._id(1))
    saccver = property(lambda self: self._id(2))
    sallseqid = property(lambda self: self._id(3))

    @property
    def stitle(self) -> str:
        """The target's title: its id and description, or what blastp prints
        for a BLAST database's subject."""
        t = None if self._ids is None else self._ids()[4]
        if t is not None:
            return t
        d = self.target_description
        return self.target_id + (" " + d if d else "")

    @property
    def salltitles(self) -> str:
        """Every title of the subject (a BLAST database's sequence of several
        deflines: joined by "<>")."""
        t = None if self._ids is None else self._ids()[5]
        return self.stitle if t is None else t

    @property
    def staxid(self) -> Optional[int]:
        """The subject's taxid (its first defline's that has one), None
        without."""
        t = "N/A" if self._ids is None else self._ids()[6]
        return None if t == "N/A" else int(t)

    @property
    def staxids(self) -> Tuple[int, ...]:
        """Every defline's taxid (0: none), ascending, each once; () when
        the database is not a BLAST database."""
        t = "N/A" if self._ids is None else self._ids()[7]
        return () if t == "N/A" else tuple(int(x) for x in t.split(";"))

    def _taxon(self, taxid, what):
        names = self._taxa().get(taxid) if self._taxa is not None and taxid else None
        return None if names is None else names[_TAXON_FIELD[what]]

    def _distinct(self, what):
        return tuple(sorted({n for n in (self._taxon(t, what) for t in self.staxids) if n}))

    ssciname = property(lambda self: self._taxon(self.staxid, "sci"))
    scomname = property(lambda self: self._taxon(self.staxid, "com"))
    sblastname = property(lambda self: self._taxon(self.staxid, "blast"))
    sskingdom = property(lambda self: self._taxon(self.staxid, "kingdom"))
    sscinames = property(lambda self: tuple(self._taxon(t, "sci") for t in self.staxids))
    scomnames = property(lambda self: tuple(self._taxon(t, "com") for t in self.staxids))
    sblastnames = property(lambda self: self._distinct("blast"))
    sskingdoms = property(lambda self: self._distinct("kingdom"))

    @property
    def qcovhsp(self) -> Optional[int]:
        """BLAST's % query coverage of the alignment, 100 (qend - qstart + 1) /
        qlen: rounded to the nearest integer below 99, truncated from 99 on
        (100 means the whole query)."""
        a = self.alignment
        if a is None:
            return None
        p = 100.0 * (a.query_end - a.query_begin) / self.query_length if self.query_length else 0.0
        return int(p + 0.5 if p < 99 else p)

    @property
    def qcovs(self) -> Optional[int]:
        """BLAST's % query coverage per subject: qcovhsp's percentage of the
        union of the query intervals of the subject's reported HSPs (its
        Hits with hsp 0, 1, ...; the same as qcovhsp with one per subject)."""
        if self.alignment is None or self._covered is None:
            return self.qcovhsp
        p = 100.0 * self._covered / self.query_length if self.query_length else 0.0
        return int(p + 0.5 if p < 99 else p)

    @property
    def ppos(self) -> Optional[float]:
        """Percentage of aligned columns that are positive (identical or > 0)."""
        if self.alignment is None:
            return None
        n = self.length
        return 100.0 * self.positive / n if n else 0.0

    def _aln(self, attr):
        a = self.alignment
        return None if a is None else getattr(a, attr)

    qstart = property(lambda self: self._aln("qstart"))
    qend = property(lambda self: self._aln("qend"))

    @property
    def sstart(self) -> Optional[int]:
        """1-based first aligned subject residue on the hit's strand (on the
        minus strand the larger coordinate)."""
        return self._aln("send" if self.strand == "minus" else "sstart")

    @property
    def send(self) -> Optional[int]:
        """1-based last aligned subject residue on the hit's strand."""
        return self._aln("sstart" if self.strand == "minus" else "send")

    @property
    def sstrand(self) -> str:
        """BLAST's sstrand column: "plus", "minus", or "N/A" (protein)."""
        return self.strand or "N/A"
    length = property(lambda self: self._aln("length"))
    pident = property(lambda self: self._aln("identity"))
    nident = property(lambda self: self._aln("nident"))
    mismatch = property(lambda self: self._aln("mismatches"))
    gapopen = property(lambda self: self._aln("gap_opens"))
    gaps = property(lambda self: self._aln("gaps"))
    cigar = property(lambda self: self._aln("cigar"))

    def _walk(self, k):
        return None if self.alignment is None else self._text()[k]

    qseq = property(lambda self: self._walk(0), doc="aligned query residues, '-' for gaps")
    sseq = property(lambda self: self._walk(1), doc="aligned target residues, '-' for gaps")
    positive = property(lambda self: self._walk(2),
                        doc="aligned columns that are identical or score > 0")
    btop = property(lambda self: self._walk(3), doc="BLAST's trace of the alignment")

    def column(self, name: str) -> str:
        """One column as ``swgpu search --outfmt '6 NAME'`` prints it ("N/A"
        for a column that needs the alignment of a no_align hit)."""
        if name not in COLUMNS:
            raise _error(_swgpu.InvalidArgumentError, "outfmt: unknown column '%s'" % name)
        if name in _NEED_ALN and self.alignment is None:
            return "N/A"
        if name == "evalue":
            return format_evalue(self.evalue)
        if name == "bitscore":
            return format_bitscore(self.bitscore)
        if name == "pident":
            return "%.3f" % self.pident
        if name == "ppos":
            return "%.2f" % self.ppos
        if name in _TEXT_COLUMNS:
            return escape_text(getattr(self, name))
        if name in _TAXON_COLUMNS:
            v = getattr(self, name)
            if isinstance(v, tuple):
                v = ";".join("N/A" if x is None else str(x) for x in v) if v else None
            return "N/A" if v is None else escape_text(str(v))
        return str(getattr(self, name))

    def row(self, columns="std") -> str:
        """The hit's line of ``swgpu search --outfmt '6 COLUMNS'`` (without
        the newline); columns: "std", a list separated by spaces or commas,
        or a list."""
        return "\t".join(self.column(c) for c in _columns(columns))


@dataclass(frozen=True)
class QueryResult:
    """One query's hits, best first (in the search's rank order).  For a PSSM
    query, id and length are the PSSM's and description is "".  The last
    four fields are an iterated search's (None otherwise): the query's last
    round (the one its hits come from), whether it stopped because that
    round included no new hit, the hits each round included in its PSSM,
    and the PSSM made of its last round's hits."""

    index: int
    id: str
    description: str
    length: int
    hits: Tuple[Hit, ...]
    karlin: Karlin
    rounds: Optional[int] = None
    converged: Optional[bool] = None
    included: Optional[Tuple[int, ...]] = None
    pssm: Optional[Pssm] = None

    def __len__(self):
        return len(self.hits)

    def __iter__(self):
        return iter(self.hits)

    def __getitem__(self, i):
        return self.hits[i]


def _covered(rows):
    """Per hit of a query (res.hits rows), the query residues its subject's
    HSPs cover together: each subject's first hit (hsp 0) and the further
    HSPs after it."""
    out = [None] * len(rows)
    h = 0
    while h < len(rows):
        e = h + 1
        while e < len(rows) and rows[e][6] > 0 and rows[e][0] == rows[h][0]:
            e += 1
        spans = sorted((r[4][1], r[4][2]) for r in rows[h:e] if r[4][5] is not None)
        n, upto = 0, 0
        for b, end in spans:
            if end > upto:
                n += end - max(b, upto)
                upto = end
        out[h:e] = [n] * (e - h)
        h = e
    return out


class SearchResults(SequenceT[QueryResult]):
    """Every query's QueryResult, in query order (a sequence), with what the
    search did: ``backend`` (the engine that scanned), ``cells`` (query
    lengths times database residues), ``overflows`` (targets rescored at a
    wider precision), ``scan_seconds`` and ``align_seconds``."""

    def __init__(self, res, db, query_path=None):
        self._res = res
        self._db = db
        self._query_path = query_path  # the file the queries were read from
        self._walks = None
        self._taxa_names = None
        out = []
        for i in range(len(res)):
            qid, qdesc, qlen = res.meta(i)
            hits = []
            rows = res.hits(i)
            covered = _covered(rows)
            for h, (target, score, bits, evalue, aln, minus, hsp) in enumerate(rows):
                tid, tdesc, tlen = db._c.meta(target)
                a = None
                if aln[5] is not None:  # no_align: no CIGAR, no alignment
                    a = Alignment(*aln, query_length=qlen, target_length=tlen, type=db.type)
                strand = ("minus" if minus else "plus") if db.type == "dna" else None
                hits.append(Hit(i, qid, qlen, target, tid, tdesc, tlen, score, bits, evalue, a,
                                _text=self._walker(i, h), strand=strand, hsp=hsp,
                                _covered=covered[h], _ids=self._ids_of(target),
                                _taxa=self._taxa))
            out.append(QueryResult(i, qid, qdesc, qlen, tuple(hits), Karlin(*res.karlin(i)),
                                   **self._iteration(i)))
        self._queries = out

    def _iteration(self, i):
        return {}

    backend = property(lambda self: self._res.backend)
    cells = property(lambda self: self._res.cells)
    overflows = property(lambda self: self._res.overflows)
    scan_seconds = property(lambda self: self._res.scan_seconds)
    align_seconds = property(lambda self: self._res.align_seconds)
    stream_parts = property(lambda self: getattr(self, "_stream_parts", 1),
                            doc="the parts a streamed database was searched in (1: whole)")

    def __len__(self):
        return len(self._queries)

    def __getitem__(self, i):
        return self._queries[i]

    def __iter__(self):
        return iter(self._queries)

    def hits(self) -> Iterator[Hit]:
        """Every hit of every query, in output order."""
        for q in self._queries:
            yield from q.hits

    def _walker(self, i, h):
        return lambda: self._text_columns()[i][h]

    def _ids_of(self, target):
        c = self._db._c
        return lambda: c.ids(target)

    def _taxa(self):
        # the names of every taxid of every hit, read from taxdb once
        if self._taxa_names is None:
            ids = {t for q in self._queries for h in q.hits for t in h.staxids} - {0}
            self._taxa_names = _swgpu.taxdb_names(sorted(ids)) if ids else {}
        return self._taxa_names

    def _text_columns(self):
        # qseq, sseq, positive and btop of every hit, computed once by the
        # library's writer
        if self._walks is None:
            lines = iter(self._res.format("6 qseq sseq positive btop").splitlines())
            walks = []
            for q in self._queries:
                rows = []
                for _ in q.hits:
                    qs, ss, pos, btop = next(lines).split("\t")
                    rows.append((qs, ss, int(pos), btop))
                walks.append(rows)
            self._walks = walks
        return self._walks

    def format(self, outfmt="6", dbname: Optional[str] = None) -> str:
        """The results as ``swgpu search --outfmt OUTFMT`` writes them: "6"
        (BLAST tabular), "7" (with comment lines), "10" (format 6 with
        commas, BLAST's CSV), "0" (BLAST's pairwise report), "5" (BLAST
        XML), "15" (BLAST JSON), "17" (SAM as blastn writes it; 0, 5, 15 and
        17 need the alignments), "pair" (pairwise alignments), or "6 COLUMNS..."
        / "7 COLUMNS..." / "10 COLUMNS..." (columns separated by spaces or
        commas).  dbname is format 7's
        and pair's "Database:" name (default: the path the database was
        opened from, as the command line's -d)."""
        if dbname is None:
            dbname = self._db.path
        return self._res.format(outfmt, dbname)

    def write(self, file, outfmt="6", dbname: Optional[str] = None) -> None:
        """Write format(outfmt, dbname) to a path or a text file object.  A
        path is never the file the database or the queries were read from
        (nor a file of the BLAST database), nor a directory; a FIFO or a
        device is written in place, as ``swgpu search -o`` does."""
        self._write(file, lambda: self.format(outfmt, dbname))

    def _write(self, file, text):
        if hasattr(file, "write"):
            file.write(text())
            return
        out = os.fsdecode(file)
        if os.path.isdir(out):
            raise _error(_swgpu.InvalidArgumentError, "output %s: is a directory" % out)
        _refuse_input(self._db.path, out, "output", "the database was read from")
        _refuse_input(self._query_path, out, "output", "the queries were read from")
        text = text()
        with open(out, "w", encoding="utf-8", errors="surrogateescape") as f:
            f.write(text)

    def __repr__(self):
        return "%s(%d queries, %d hits, backend %s)" % (
            type(self).__name__, len(self), sum(len(q) for q in self._queries), self.backend)


class IteratedSearchResults(SearchResults):
    """The results of an iterated search (``Database.search`` with
    ``iterations``): each query's QueryResult holds its last round's hits and
    the iteration fields (rounds, converged, included, pssm); ``rounds`` is
    the number of rounds run (the most any query ran); cells, overflows,
    scan_seconds and align_seconds add up every round."""

    rounds = property(lambda self: self._res.n_rounds)

    def _iteration(self, i):
        last, converged, included = self._res.rounds(i)
        c = self._res.final_pssm(i)
        return {"rounds": last, "converged": converged, "included": included,
                "pssm": None if c is None else Pssm._wrap(c)}

    def format(self, outfmt="6", dbname: Optional[str] = None, all_rounds=False) -> str:
        """As ``swgpu search --iterations N --outfmt OUTFMT``: each query's
        last round (``--report last``), or with all_rounds every round it ran
        (``--report all``: format 7 marks each round with "# Iteration: N",
        pair with "Results from round N")."""
        if dbname is None:
            dbname = self._db.path
        return self._res.format(outfmt, dbname, bool(all_rounds))

    def write(self, file, outfmt="6", dbname: Optional[str] = None, all_rounds=False) -> None:
        """Write format(outfmt, dbname, all_rounds) to a path or a text file
        object (a path as for SearchResults.write)."""
        self._write(file, lambda: self.format(outfmt, dbname, all_rounds))


def _int_threads(threads):
    """threads for reading: an int, 0 (all cores) or more."""
    if isinstance(threads, bool) or not isinstance(threads, int):
        raise TypeError("threads: an int is expected, got %s" % type(threads).__name__)
    if threads < 0:
        raise ValueError("threads: %d is negative" % threads)
    return threads


class Database(_SeqList):
    """A sequence database: ``Database(path, type="auto")`` opens a
    ``swgpu makedb`` file (memory-mapped and validated) or reads a FASTA/FASTQ
    file (plain or gzip) into memory, as ``swgpu search -d`` does;
    ``Database.from_sequences(...)`` builds one from Python sequences.

    ``len(db)``, ``db[i]`` and iteration give its sequences as Sequence
    tuples in database (file) order; search() and scores() compare queries
    with every sequence.  A Database may be searched from several threads
    at once.
    """

    def __init__(self, path, type="auto", threads=0, max_memory=None):
        """threads: CPU threads reading a plain FASTA file (0: all cores;
        the database is the same whatever the number).

        max_memory: the host memory a search may use, in bytes or as a size
        ("512M", "4G"), as ``swgpu search --max-memory``.  A makedb file
        whose search would not fit is not read: its index alone is opened,
        and search() streams it from disk in parts, each read while the one
        before it is scanned (``stream_parts`` says how many; the result
        equals the unstreamed search's).  Such a database gives len(),
        ``residues`` and ``max_length``, but not its sequences (db[i],
        iteration), scores(), PSSM or iterated searches, nor write().
        Other kinds of files are read whole (with a warning through the
        log when larger than max_memory: make a makedb file of them)."""
        threads = _clamp_threads({"threads": _int_threads(threads)})["threads"]
        self.path = os.fsdecode(path)
        self._max_memory = max_memory
        self._streamed = False
        if max_memory is not None:
            parts, nbytes = _swgpu.stream_parts(path, max_memory, {"threads": threads})
            if nbytes and parts > 1:
                self._c = _swgpu.Database.open_index(path, _alphabet(type))
                self._streamed = True
                self._stream_path = path
                return
        self._c = _swgpu.Database.open(path, _alphabet(type), threads)

    @property
    def streamed(self) -> bool:
        """True when searches stream the database from disk (max_memory)."""
        return getattr(self, "_streamed", False)

    def stream_parts(self, **options) -> int:
        """The parts search(**options) cuts a streamed database into (1 for
        a database in memory)."""
        if not self.streamed:
            return 1
        return _swgpu.stream_parts(self._stream_path, self._max_memory,
                                   _clamp_threads(dict(options)))[0]

    def _refuse_streamed(self, what):
        if self.streamed:
            raise _error(_swgpu.InvalidArgumentError,
                         "database %s is streamed from disk (max_memory %r below what its "
                         "search needs): %s not available" % (self.path, self._max_memory, what))

    def __len__(self) -> int:
        return self._c.whole[0] if self.streamed else len(self._c)

    def __getitem__(self, i):
        self._refuse_streamed("its sequences (db[i]) are")
        return super().__getitem__(i)

    def __iter__(self):
        self._refuse_streamed("its sequences (iteration) are")
        return super().__iter__()

    @property
    def residues(self) -> int:
        """Residues in all sequences."""
        return self._c.whole[1] if self.streamed else self._c.residues

    @classmethod
    def from_sequences(cls, sequences, type="auto") -> "Database":
        """A database of sequences given as for Queries (ids "seq_1", ...)."""
        db = cls.__new__(cls)
        db._c = _swgpu.Database.from_seqset(_seqset(_entries(sequences, "seq"), _alphabet(type)))
        db.path = None
        return db

    @property
    def max_length(self) -> int:
        """Length of the longest sequence."""
        return self._c.whole[2] if self.streamed else self._c.max_len

    def write(self, path) -> None:
        """Write the database as a ``swgpu makedb`` file (written to a
        temporary name, then renamed; never over the file it was read from,
        nor over a file of the BLAST database it was read from)."""
        self._refuse_streamed("write() is")
        _refuse_special(path)
        _refuse_input(self.path, path)
        self._c.write(path)

    def _queries(self, queries):
        if isinstance(queries, Queries):
            return queries
        if isinstance(queries, Pssm) or (isinstance(queries, (list, tuple)) and
                                         any(isinstance(q, Pssm) for q in queries)):
            raise TypeError("PSSM queries are searched by search(), not scores()")
        if isinstance(queries, os.PathLike):
            return Queries.read(queries)
        return Queries(_entries(queries, "query"), type=self.type)

    def search(self, queries, *, matrix=None, match=None, mismatch=None, progress=None,
               iterations=None, inclusion_evalue=None, final_pssm=None,
               **options) -> SearchResults:
        """Search every query against every database sequence (``swgpu
        search``): every sequence is scored exactly; per query the best
        ``top`` hits with score > 0 and E-value <= ``evalue`` are returned,
        best first as ``rank`` orders them (BLAST+'s E-value order by
        default), with their alignments.

        queries: a Queries set; a str of residue letters (one query,
            "query_1"); a list of sequences as Queries takes (typed as the
            database); a pathlib.Path (a FASTA/FASTQ or makedb file, its
            type detected, as ``-q``); or a Pssm, or a list of them (``swgpu
            search --pssm``; a protein database).
        matrix: protein matrix name or NCBI matrix file (None: BLOSUM62);
            with PSSM queries it only chooses the E-values' statistics.
        match, mismatch: DNA scores (None: +2, -3).
        progress: None, or a callable progress(done, total, cells_done,
            cells_total, seconds) called as queries are scanned (at most
            about five times a second, and once when the last is done),
            possibly from another thread; an exception it raises ends
            nothing early but is raised when the search returns.

        Keyword options (None or absent: the default):
{options}

        An iterated search (PSI-BLAST, protein; ``swgpu search
        --iterations``) runs when any of these is given:
{psi_options}

        Returns SearchResults: a QueryResult per query, each with its Hit
        objects; its format() writes the command line's output formats.  An
        iterated search returns IteratedSearchResults: each query's last
        round, with its rounds and its final PSSM.
        """
        options = _clamp_threads(options)
        mh = options.get("max_hsps")
        if mh is not None and isinstance(mh, int) and not isinstance(mh, bool) and mh < 1:
            raise _error(_swgpu.InvalidArgumentError, "max_hsps %d: must be >= 1 (alignments "
                         "per query, subject and strand)" % mh)
        psi = {k: v for k, v in (("iterations", iterations),
                                 ("inclusion_evalue", inclusion_evalue),
                                 ("final_pssm", final_pssm)) if v is not None}
        pssms = self._pssms(queries)
        if self.streamed:
            if psi or pssms is not None:
                self._refuse_streamed("PSSM and iterated searches are")
            q = self._queries(queries)
            parts = self.stream_parts(**options)
            res, hits = _swgpu.search_stream(q._c, self._c, self._stream_path, parts, matrix,
                                             match, mismatch, options, progress)
            hdb = Database.__new__(Database)
            hdb._c = hits
            hdb.path = self.path
            out = SearchResults(res, hdb, q.path)
            out._stream_parts = parts
            return out
        if psi:
            q = None if pssms is not None else self._queries(queries)
            res = _swgpu.search_iterate(None if q is None else q._c, pssms, self._c, matrix, match, mismatch,
                                        options, psi, progress)
            return IteratedSearchResults(res, self, None if q is None else q.path)
        if pssms is not None:
            if match is not None or mismatch is not None:
                raise _error(_swgpu.InvalidArgumentError,
                             "%s applies to DNA only; PSSM queries are protein"
                             % ("match" if match is not None else "mismatch"))
            res = _swgpu.search_pssm(pssms, self._c, matrix, options, progress)
            return SearchResults(res, self)
        q = self._queries(queries)
        res = _swgpu.search(q._c, self._c, matrix, match, mismatch, options, progress)
        return SearchResults(res, self, q.path)

    @staticmethod
    def _pssms(queries):
        """The C PSSMs of a Pssm or a list of them (a tuple), or None for
        sequence queries."""
        if isinstance(queries, Pssm):
            return (queries._c,)
        if isinstance(queries, (list, tuple)) and queries and \
                any(isinstance(q, Pssm) for q in queries):
            for i, q in enumerate(queries):
                if not isinstance(q, Pssm):
                    raise TypeError("query %d: %s among Pssm queries (a search has sequence "
                                    "queries or PSSM queries, as -q and --pssm)"
                                    % (i + 1, type(q).__name__))
            return tuple(q._c for q in queries)
        return None

    def scores(self, queries, *, matrix=None, match=None, mismatch=None, **options):
        """The exact score of every database sequence against each query, in
        database order, scanned by the search's engine (swgpu_scan_scores()).

        queries: as for search().  A single str gives a 1-D array of
        len(db) scores; anything else a 2-D array, one row per query.  The
        arrays are numpy int32 arrays when numpy is installed, otherwise
        array.array("i") (a list of them for several queries).  Options as
        for search() (top, evalue, no_align and no_self do not apply).
        """
        self._refuse_streamed("scores() is")
        q = self._queries(queries)
        buf = _swgpu.scan_scores(q._c, self._c, matrix, match, mismatch, _clamp_threads(options))
        one = isinstance(queries, (str, bytes, bytearray))
        nq, nd = len(q), len(self)
        if _np is not None:
            a = _np.frombuffer(buf, dtype=_np.int32)
            return a if one else a.reshape(nq, nd)
        code = "i" if array.array("i").itemsize == 4 else "l"
        flat = array.array(code)
        flat.frombytes(bytes(buf))
        if one:
            return flat
        return [flat[k * nd:(k + 1) * nd] for k in range(nq)]

    def __repr__(self):
        return "Database(%d %s sequences%s)" % (len(self), self.type,
                                               ", %r" % self.path if self.path else "")


Database.search.__doc__ = Database.search.__doc__.replace(
    "{options}", _options_doc(_swgpu.search_options, 8)).replace(
    "{psi_options}", _options_doc(_swgpu.psi_options, 8))


def _file_kind(mode):
    return ("a directory" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode)
            else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "a special file")


def _refuse_special(output):
    """Raise InvalidArgumentError when output, a file that Database.write
    replaces by renaming a temporary over it, exists and is not a regular
    file (links followed): a directory, a FIFO, a device, or an open file
    named through /proc (/dev/stdout), as ``swgpu makedb`` refuses them."""
    out = os.fsdecode(output)
    dest = out
    for _ in range(40):
        if dest.startswith("/proc/"):
            raise _error(_swgpu.InvalidArgumentError,
                         "database %s: names an open file (such as /dev/stdout), not a regular "
                         "file (refusing to replace it: give a file name)" % out)
        try:
            st = os.lstat(dest)
        except OSError:
            return  # a new file (or an error the write reports)
        if not stat.S_ISLNK(st.st_mode):
            break
        dest = os.path.join(os.path.dirname(dest), os.readlink(dest))
    else:
        return  # too many links: the write reports it
    if stat.S_ISREG(st.st_mode):
        return
    raise _error(_swgpu.InvalidArgumentError,
                 "database %s: %s %s, not a regular file (refusing to replace it: give a file "
                 "name)" % (out, "its target %s is" % dest if dest != out else "is",
                            _file_kind(st.st_mode)))


def makedb(input, output, type="auto", threads=0) -> Database:
    """``swgpu makedb INPUT OUTPUT``: read a FASTA/FASTQ file (plain or gzip)
    and write it as a binary database; returns the Database read.  Refuses
    to replace input (or a file of the BLAST database input names).  A plain
    FASTA file is read on `threads` threads (0: all cores) and laid out
    directly in OUTPUT; the file is the same whatever the number."""
    _refuse_special(output)
    _refuse_input(os.fsdecode(input), output)
    db = Database.__new__(Database)
    db._c = _swgpu.Database.makedb(input, output, _alphabet(type), _clamp_threads({"threads": _int_threads(threads)})["threads"])
    db.path = os.fsdecode(input)
    return db
