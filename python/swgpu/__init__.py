"""swgpu: exact Smith-Waterman local alignment (affine gaps) on CPUs and
NVIDIA GPUs, over the C library libswgpu.

    import swgpu
    aln = swgpu.align("MKWVTFISLLFLFSSAYS", "MKWVTFLLLLFISAYS")
    aln.score, aln.cigar, aln.identity

    db = swgpu.Database("db.fasta")            # or a `swgpu makedb` file
    for query in db.search(swgpu.Queries.read("queries.fasta"), top=5):
        for hit in query.hits:
            print(hit.qseqid, hit.sseqid, hit.score, hit.evalue, hit.cigar)
    scores = db.scores("MKWVTFISLL")           # every sequence's score (numpy)

    pssm = swgpu.Pssm("q1.pssm")               # psiblast -out_ascii_pssm
    results = db.search(pssm, top=5)           # a PSSM as the query
    results = db.search(queries, iterations=3) # PSI-BLAST: the last round
    results[0].pssm.write("q1.round3.pssm")    # and the PSSM of its hits

Every call that computes releases the GIL, so threads run searches and
alignments in parallel.  A failed call raises a subclass of swgpu.Error with
the library's message (its `status` attribute is the C status code); the
library's warnings go to the "swgpu" logger.  Coordinates in objects are
0-based and half-open; the BLAST column attributes of a Hit are 1-based.
"""

from . import _swgpu
from ._common import format_bitscore, format_evalue, logger
from ._align import Alignment, LongAlignment, LongStats, align, align_long
from ._pssm import Pssm
from ._search import (COLUMNS, STD_COLUMNS, Database, Hit, IteratedSearchResults, Karlin,
                      Queries, QueryResult, SearchResults, Sequence, makedb)
from ._swgpu import (AlphabetError, BudgetError, DatabaseError, DeviceError, EmptyInputError,
                     Error, FileError, FormatError, InvalidArgumentError, MatrixError,
                     NoDeviceError, NotFoundError, OutOfMemoryError, RangeError)

__version__ = _swgpu.version
#: True when the library was built with CUDA (backend "cuda" is available
#: where a GPU is present).
has_cuda = bool(_swgpu.has_cuda)

__all__ = [
    "align", "align_long", "Alignment", "LongAlignment", "LongStats",
    "Database", "Queries", "Sequence", "makedb", "Pssm",
    "SearchResults", "IteratedSearchResults", "QueryResult", "Hit", "Karlin", "COLUMNS",
    "STD_COLUMNS",
    "format_evalue", "format_bitscore", "logger", "has_cuda",
    "Error", "OutOfMemoryError", "FileError", "FormatError", "EmptyInputError",
    "InvalidArgumentError", "MatrixError", "AlphabetError", "NoDeviceError", "DeviceError",
    "DatabaseError", "BudgetError", "RangeError", "NotFoundError",
]
