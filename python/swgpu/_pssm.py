"""Position-specific score matrices (PSSMs) as queries: the Pssm type, read
from psiblast's ASCII format (a file or text) or made from rows of scores."""

import array
import operator
import os
import tempfile

from . import _swgpu
from ._common import Karlin, _error

__all__ = ["Pssm"]

#: The 20 scored columns of a PSSM row, psiblast's order.
COLUMNS = "ARNDCQEGHILKMFPSTWYV"
#: psiblast's score of a pair it never aligns (BLAST_SCORE_MIN).
FORBIDDEN = -32768
#: The greatest score a PSSM may hold.
SCORE_MAX = 1000


class Pssm:
    """A position-specific score matrix: per query position, a score for
    each of the 20 residues ``ARNDCQEGHILKMFPSTWYV``, searched with as a
    query (``Database.search``) in place of a sequence.

    ``Pssm(path)`` reads psiblast's ASCII format (``psiblast
    -out_ascii_pssm``; plain or gzip; the id is the file's base name without
    its extension, "q101" for "dir/q101.pssm.gz"), as ``swgpu search --pssm``
    does; ``Pssm.from_text(text, id)`` reads the same format from a str or
    bytes; ``Pssm.from_scores(rows, residues=None, id="")`` makes one from a
    row of 20 scores per position.  Residues without a column of their own
    (B, Z, X, *, J, U, O) score as psiblast scores them (see ``score``).

    A Pssm is read-only: it may be shared by searches in several threads.
    """

    COLUMNS = COLUMNS

    def __init__(self, path):
        if isinstance(path, Pssm):
            raise TypeError("Pssm(path): give a file path (a Pssm is read-only: no copy needed)")
        self._c = _swgpu.Pssm.read(path)

    @classmethod
    def _wrap(cls, c):
        p = cls.__new__(cls)
        p._c = c
        return p

    @classmethod
    def read(cls, path) -> "Pssm":
        """The same as ``Pssm(path)``."""
        return cls(path)

    @classmethod
    def from_text(cls, text, id="pssm") -> "Pssm":
        """Read psiblast's ASCII format from text: a str, or bytes (plain or
        gzip-compressed), exactly as a file would be read.  The PSSM's id is
        ``id`` (a non-empty name without '/'); errors name "PSSM text ID"
        where a file's name "PSSM file PATH"."""
        if isinstance(text, str):
            data = text.encode("utf-8", "surrogateescape")
        elif isinstance(text, (bytes, bytearray, memoryview)):
            data = bytes(text)
        else:
            raise TypeError("Pssm.from_text: expected a str or bytes, got %s"
                            % type(text).__name__)
        if not isinstance(id, str):
            raise TypeError("Pssm.from_text: id must be a str")
        if not id or "/" in id or "\0" in id or len(os.fsencode(id)) > 200:
            raise _error(_swgpu.InvalidArgumentError,
                         "Pssm.from_text: id %r: expected a name of 1 to 200 bytes without '/'"
                         % id)
        # The C API reads PSSMs from files (swgpu_pssm_read): the text goes
        # through one named so that the id comes out as given.
        with tempfile.TemporaryDirectory(prefix="swgpu-pssm-") as d:
            path = os.path.join(d, id + ".pssm")
            with open(path, "wb") as f:
                f.write(data)
            try:
                return cls(path)
            except _swgpu.Error as e:
                msg = str(e).replace("PSSM file " + path, "PSSM text " + id).replace(path, id)
                raise _error(type(e), msg) from None

    @classmethod
    def from_scores(cls, rows, residues=None, id="") -> "Pssm":
        """A PSSM of len(rows) positions, each a row of 20 integer scores
        against ``ARNDCQEGHILKMFPSTWYV`` (-32768..1000; a list of lists, or
        any 2-D sequence such as a NumPy array).  residues: the query's
        residue letters, one per position (str), or None for each position's
        best-scoring column letter (the first in that order on ties).  Every
        position counts as computed from observed residues (B, Z, J, U, O
        score -32768)."""
        if isinstance(rows, (str, bytes, bytearray)):
            raise TypeError("Pssm.from_scores: expected rows of 20 scores, got %s (Pssm.from_text "
                            "reads the ASCII format)" % type(rows).__name__)
        if not isinstance(id, str):
            raise TypeError("Pssm.from_scores: id must be a str")
        flat = array.array("i" if array.array("i").itemsize == 4 else "l")
        n = 0
        for n, row in enumerate(rows, 1):
            row = list(row)
            if len(row) != 20:
                raise _error(_swgpu.InvalidArgumentError,
                             "PSSM %s: position %d has %d scores, expected 20 (columns %s)"
                             % (id, n, len(row), COLUMNS))
            for c, v in enumerate(row):
                v = operator.index(v)  # ints, NumPy's integers; not floats
                if not FORBIDDEN <= v <= SCORE_MAX:
                    raise _error(_swgpu.InvalidArgumentError,
                                 "PSSM %s: position %d, column %s: score %d out of range "
                                 "(%d..%d)" % (id, n, COLUMNS[c], v, FORBIDDEN, SCORE_MAX))
                flat.append(v)
        if residues is not None and not isinstance(residues, (str, bytes, bytearray)):
            raise TypeError("Pssm.from_scores: residues must be a str of letters or None")
        return cls._wrap(_swgpu.Pssm.create(id, residues, flat.tobytes(), n))

    # ---- what it holds

    @property
    def id(self) -> str:
        """The query's id (the file's base name for a PSSM read from a file)."""
        return self._c.id

    @property
    def length(self) -> int:
        """Positions (the query's length)."""
        return self._c.length

    def __len__(self):
        return self._c.length

    @property
    def residues(self) -> str:
        """The query residues, one upper-case letter per position."""
        return self._c.residues

    @property
    def scores(self):
        """The scores as a list of rows (a new list each time), one per
        position, each the 20 scores against ``ARNDCQEGHILKMFPSTWYV``."""
        return self._c.rows()

    @property
    def min(self) -> int:
        """The least score, over every position and residue."""
        return self._c.min

    @property
    def max(self) -> int:
        """The greatest score."""
        return self._c.max

    def score(self, position: int, residue: str) -> int:
        """The score of a position (0-based) against a database residue
        letter, the search's own: a column's score, or for the letters without
        one X -1, * -4, and B, Z, J, U, O -32768 (never in a positive-scoring
        alignment) except at positions computed from no observed residue
        (rows of a file whose weighted observed percentages are all 0), where
        U and O score -1 and B, Z, J BLOSUM62's score of the query residue."""
        n = self._c.length
        position = operator.index(position)
        if position < 0:
            position += n
        return self._c.score(position, residue)

    # ---- statistics and output

    def karlin(self, matrix=None, gap_open=None, gap_extend=None):
        """The Karlin-Altschul parameters of a search with this PSSM under
        the protein matrix (None: BLOSUM62) and gaps (None: 11, 1), as
        psiblast computes them: the matrix's gapped lambda and K scaled by
        the PSSM's ungapped K over the matrix's (swgpu_pssm_karlin)."""
        return Karlin(*self._c.karlin(matrix, gap_open, gap_extend))

    def format(self, matrix=None, gap_open=None, gap_extend=None) -> str:
        """The PSSM in psiblast's ASCII format (what ``swgpu search
        --out-pssm`` writes and ``Pssm(path)`` reads back to the same
        scores), with the K and lambda block of the protein matrix (None:
        BLOSUM62) and gaps (None: 11, 1)."""
        return self._c.format(matrix, gap_open, gap_extend)

    def write(self, file, matrix=None, gap_open=None, gap_extend=None) -> None:
        """Write format(...) to a path or a text file object."""
        text = self.format(matrix, gap_open, gap_extend)
        if hasattr(file, "write"):
            file.write(text)
        else:
            with open(file, "w", encoding="utf-8") as f:
                f.write(text)

    def __repr__(self):
        return "Pssm(%r, %d positions)" % (self.id, self.length)
