"""Pairwise alignment: align() (two sequences, the scalar reference in linear
memory) and align_long() (two long sequences in bounded memory, on the CPU or
a GPU)."""

import os
from dataclasses import dataclass, field
from typing import Callable, Optional, Sequence

from . import _swgpu
from ._common import (_TYPE_NAMES, _alphabet, _clamp_threads, _error, _options_doc,
                      _refuse_input, _residues)

__all__ = ["Alignment", "LongAlignment", "LongStats", "align", "align_long"]


@dataclass(frozen=True)
class Alignment:
    """An optimal local alignment of a query with a target.

    Coordinates are 0-based and half-open: the query's residues
    ``query[query_begin:query_end]`` are aligned with the target's
    ``target[target_begin:target_end]``.  ``qstart``/``qend`` and
    ``sstart``/``send`` give the same ranges 1-based and inclusive, as BLAST
    prints them.  ``cigar`` reads the query against the target: ``M`` a match
    or mismatch column, ``I`` a residue in the query only, ``D`` a residue in
    the target only; it is None when not computed (``score_only``) and ""
    when the score is 0 (no alignment).
    """

    score: int
    query_begin: int
    query_end: int
    target_begin: int
    target_end: int
    cigar: Optional[str]
    length: int       #: alignment columns
    nident: int       #: identical columns
    mismatches: int   #: aligned non-identical columns
    gap_opens: int    #: gap openings
    gaps: int         #: gap columns
    query_length: int
    target_length: int
    type: str         #: "protein" or "dna"

    @property
    def identity(self) -> float:
        """Percentage of identical columns, 100 * nident / length (0 without
        columns), as BLAST's pident."""
        return 100.0 * self.nident / self.length if self.length else 0.0

    @property
    def qstart(self) -> int:
        """1-based first aligned query residue."""
        return self.query_begin + 1

    @property
    def qend(self) -> int:
        """1-based last aligned query residue."""
        return self.query_end

    @property
    def sstart(self) -> int:
        """1-based first aligned target residue."""
        return self.target_begin + 1

    @property
    def send(self) -> int:
        """1-based last aligned target residue."""
        return self.target_end


@dataclass(frozen=True)
class LongStats:
    """What an align_long() call did (swgpu_long_stats_t)."""

    backend: str             #: "cpu", "cuda" or "ref"
    cells: int               #: DP cells computed, all phases
    cells_pruned: int        #: cells skipped by pruning, all phases
    score_cells: int         #: query length x target length
    score_pruned: int        #: of which skipped by pruning
    score_seconds: float     #: phase 1: the best score and its end
    reverse_seconds: float   #: phase 2: the begin, and the saved rows
    traceback_seconds: float  #: phase 3: the CIGAR
    total_seconds: float
    score_gcups: float       #: score_cells / score_seconds / 1e9; 0 when resumed inside or after the score pass
    peak_host_bytes: int
    peak_device_bytes: int
    levels: int              #: depth of the split recursion
    subproblems: int         #: pieces traced back
    gpus: int                #: GPUs the passes ran on (0 on the CPU)
    seed_bound: int          #: the seed chain's score the score pass pruned with from its start


@dataclass(frozen=True)
class LongAlignment(Alignment):
    """The result of align_long(): an Alignment with its strand and the work
    done.

    On the minus strand (DNA), the query is aligned with the reverse
    complement of the target: ``cigar`` reads the query against that reverse
    complement, ``target_begin``/``target_end`` are the aligned interval on
    the target's forward strand, and ``sstart`` > ``send`` (BLAST style,
    as ``swgpu align`` prints ``target_range``).
    """

    strand: Optional[str]                #: "plus" or "minus" (DNA), None (protein)
    other_strand_score: Optional[int]    #: the other strand's score with strand="both"
    stats: LongStats
    # what format() needs: (query, target, matrix, match, mismatch) as given
    _inputs: Optional[tuple] = field(default=None, repr=False, compare=False)

    @property
    def sstart(self) -> int:
        return self.target_end if self.strand == "minus" else self.target_begin + 1

    @property
    def send(self) -> int:
        return self.target_begin + 1 if self.strand == "minus" else self.target_end

    def format(self, format="summary", *, query_id: str = "query", target_id: str = "target",
               command_line: Optional[Sequence[str]] = None) -> str:
        """The alignment as ``swgpu align`` writes it, byte for byte: format
        "summary" (the default), "sam", "pair" (wrapped pairwise text) or
        "svg" (the picture of ``--plot``).  query_id and target_id name the
        sequences (the command line takes the files' first words).
        command_line: SAM's @PG CL field, its words (e.g. ["swgpu", "align",
        "a.fa", "b.fa"]); None leaves CL out.  Raises InvalidArgumentError
        for a query_id too long for SAM (254 characters)."""
        if self._inputs is None:
            raise _error(_swgpu.InvalidArgumentError,
                         "format: this LongAlignment was not made by align_long()")
        if format not in ("summary", "sam", "pair", "svg"):
            raise _error(_swgpu.InvalidArgumentError,
                         "format %r: expected 'summary', 'sam', 'pair' or 'svg'" % (format,))
        if isinstance(command_line, (str, bytes)):
            raise TypeError("command_line: expected a list of words, not a single string")
        query, target, matrix, match, mismatch = self._inputs
        minus = self.strand == "minus"
        tb, te = self.target_begin, self.target_end
        if minus:  # back to the interval on the reverse complement, as aligned
            tb, te = self.target_length - te, self.target_length - tb
        aln = (self.score, self.query_begin, self.query_end, tb, te, self.cigar, self.length,
               self.nident, self.mismatches, self.gap_opens, self.gaps)
        other = (not minus, self.other_strand_score) \
            if self.other_strand_score is not None else None
        return _swgpu.long_format(format, query, target, 1 if self.type == "protein" else 2,
                                  matrix, match, mismatch, minus, aln, other, self.cigar is None,
                                  query_id, target_id,
                                  None if command_line is None else list(command_line))

    def write(self, file, format="summary", *, query_id: str = "query",
              target_id: str = "target", command_line: Optional[Sequence[str]] = None,
              inputs: Sequence = ()) -> None:
        """Write format(format, ...) to a path or a text file object.  As
        ``swgpu align -o`` does, a path is never a directory, the matrix
        file, nor one of inputs (the files the sequences were read from,
        links followed: InvalidArgumentError, nothing written)."""
        text = self.format(format, query_id=query_id, target_id=target_id,
                           command_line=command_line)
        if hasattr(file, "write"):
            file.write(text)
            return
        out = os.fsdecode(file)
        if os.path.isdir(out):
            raise _error(_swgpu.InvalidArgumentError, "output %s: is a directory" % out)
        if isinstance(inputs, (str, bytes, os.PathLike)):
            inputs = (inputs,)
        for source in inputs:
            _refuse_input(os.fsdecode(source), out, "output", "a sequence was read from")
        matrix = self._inputs[2]
        if matrix is not None:
            _refuse_input(os.fsdecode(matrix), out, "output", "the matrix was read from")
        with open(out, "w", encoding="utf-8", errors="surrogateescape") as f:
            f.write(text)


def _fields(aln, score_only):
    score, qb, qe, tb, te, cigar, length, nident, mism, gapo, gaps = aln
    if cigar is None and not score_only:
        cigar = ""  # computed, and empty: the score is 0
    return dict(score=score, query_begin=qb, query_end=qe, target_begin=tb, target_end=te,
                cigar=cigar, length=length, nident=nident, mismatches=mism, gap_opens=gapo,
                gaps=gaps)


def align(query, target, matrix=None, gap_open=None, gap_extend=None, *, match=None,
          mismatch=None, type="auto", score_only=False) -> Alignment:
    """Optimal local alignment (Smith-Waterman, affine gaps) of two sequences.

    query, target: residue letters (str or bytes; whitespace is ignored;
        letters outside the alphabet score as X or N).
    matrix: protein scoring matrix, a built-in name (BLOSUM45 BLOSUM50
        BLOSUM62 BLOSUM80 BLOSUM90 PAM30 PAM70 PAM250, case-insensitive) or an
        NCBI-format matrix file; None: BLOSUM62.
    gap_open, gap_extend: a gap of length k costs gap_open + k*gap_extend;
        None: 11 and 1 for protein, 5 and 2 for DNA.
    match, mismatch: DNA scores (None: +2 and -3).
    type: "auto" (detected from each sequence; they must agree), "protein"
        or "dna".
    score_only: score and coordinates only, no CIGAR (cheaper).

    The scalar reference engine in linear memory (swgpu_align()); ties go to
    the smallest end, then the shortest alignment.  For long sequences use
    align_long().  Raises swgpu.Error subclasses with the library's message.
    """
    al, qlen, tlen, aln = _swgpu.align(_residues(query, "query"), _residues(target, "target"),
                                       _alphabet(type), matrix, match, mismatch, gap_open,
                                       gap_extend, bool(score_only))
    return Alignment(query_length=qlen, target_length=tlen, type=_TYPE_NAMES[al],
                     **_fields(aln, score_only))


_STRANDS = {"plus": 0, "minus": 1, "both": 2}


def align_long(query, target, matrix=None, gap_open=None, gap_extend=None, *, match=None,
               mismatch=None, type="auto", strand="plus", max_memory=None,
               progress: Optional[Callable[[str, float, int, float], None]] = None,
               **options) -> LongAlignment:
    """Optimal local alignment of two long sequences (millions of residues) in
    bounded memory: a score pass, a reverse pass and a divide-and-conquer
    traceback (swgpu_align_long(); ``swgpu align`` on the command line).
    Score, begin and end are those of align().

    query, target, matrix, gap_open, gap_extend, match, mismatch, type: as
        for align().
    strand: DNA only: "plus" aligns the query with the target, "minus" with
        its reverse complement, "both" does both and returns the better
        (ties: plus), with the other's score in ``other_strand_score``.
    max_memory: host and GPU memory budget in bytes or as a size ("512M",
        "4G"), as the command line's --max-memory; sets max_host_memory and
        max_device_memory unless they are given.
    progress: called as progress(phase, fraction, cells, seconds) a few times
        a second, phase "prepass" (the score pass's first pass, which finds a
        score to prune with), "score", "reverse" or "traceback";
        fraction of the phase done (the traceback's of an estimated total),
        cells computed in all phases, seconds since the call began.  An exception it
        raises stops further reports and is raised once the alignment is done
        (the library cannot stop in the middle).

    Keyword options (None or absent: the library's default):
{options}
    """
    if strand not in _STRANDS:
        raise _error(_swgpu.InvalidArgumentError,
                     "strand %r: expected 'plus', 'minus' or 'both'" % (strand,))
    options = dict(options, gap_open=gap_open, gap_extend=gap_extend)
    for name in ("max_host_memory", "max_device_memory"):
        if options.get(name) is None:
            options[name] = max_memory
    _clamp_threads(options)
    score_only = bool(options.get("score_only"))
    query, target = _residues(query, "query"), _residues(target, "target")
    al, qlen, tlen, results = _swgpu.align_long(query, target, _alphabet(type), matrix, match,
                                                mismatch, _STRANDS[strand], options, progress)
    best = 1 if len(results) == 2 and results[1][1][0] > results[0][1][0] else 0
    minus, aln, stats = results[best]
    f = _fields(aln, score_only)
    if minus:  # the interval on the target's forward strand
        f["target_begin"], f["target_end"] = tlen - f["target_end"], tlen - f["target_begin"]
    return LongAlignment(query_length=qlen, target_length=tlen, type=_TYPE_NAMES[al],
                         strand=("minus" if minus else "plus") if al == 2 else None,
                         other_strand_score=results[1 - best][1][0] if len(results) == 2 else None,
                         stats=LongStats(**stats),
                         _inputs=(query, target, matrix, match, mismatch), **f)


align_long.__doc__ = align_long.__doc__.replace("{options}", _options_doc(_swgpu.long_options, 4))
