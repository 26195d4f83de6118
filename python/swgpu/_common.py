"""Pieces shared by the swgpu package's modules: sequence types, the library's
log messages routed to the ``swgpu`` logger, errors raised from Python, and
the BLAST tabular number formats, the guard that keeps an output off an
input file, and the Karlin-Altschul parameters (a search's and a PSSM's)."""

import logging
import os
import re
import stat
import textwrap
from dataclasses import dataclass

from . import _swgpu

__all__ = ["logger", "format_evalue", "format_bitscore", "Karlin"]


@dataclass(frozen=True)
class Karlin:
    """Karlin-Altschul parameters a query's E-values were computed with."""

    lambda_: float
    K: float
    H: float
    alpha: float
    beta: float
    estimated: bool   #: True: fitted to the query's scores; False: published
    round_down: bool  #: BLAST's rounding of odd scores (some DNA systems)

#: The logger the library's messages go to ("swgpu"): warnings such as
#: approximate E-values or unknown letters are logged at WARNING, per-query
#: details at DEBUG.  With no logging configured, warnings go to stderr.
logger = logging.getLogger("swgpu")

_PY_LEVELS = {1: logging.ERROR, 2: logging.WARNING, 3: logging.INFO, 4: logging.DEBUG}


def _log_level():
    """The most detailed library level (1 error .. 4 debug) the logger wants."""
    for lib, py in ((4, logging.DEBUG), (3, logging.INFO), (2, logging.WARNING),
                    (1, logging.ERROR)):
        if logger.isEnabledFor(py):
            return lib
    return 0


def _log_emit(level, message):
    logger.log(_PY_LEVELS.get(level, logging.WARNING), "%s", message)


_swgpu._set_log_hooks(_log_level, _log_emit)

# ------------------------------------------------------------------ errors

_STATUS = {cls: status for status, cls in _swgpu.errors_by_status.items()}


def _error(cls, message):
    """An exception of one of the library's classes, raised from Python."""
    e = cls(message)
    e.status = _STATUS.get(cls, 0)
    return e


# --------------------------------------------------------------- alphabets

_TYPES = {"auto": 0, "protein": 1, "prot": 1, "dna": 2, "nucl": 2}
_TYPE_NAMES = {0: "auto", 1: "protein", 2: "dna"}


def _alphabet(type):
    """'auto', 'protein' ('prot') or 'dna' ('nucl') as the library's code."""
    if isinstance(type, str) and type.lower() in _TYPES:
        return _TYPES[type.lower()]
    raise _error(_swgpu.InvalidArgumentError,
                 "type %r: expected 'auto', 'protein' or 'dna'" % (type,))


# Residue letters given as Python strings: letters and '*' ('-', '.',
# digits... are refused, so that a file name is never read as a sequence).
_WHITESPACE = re.compile(r"\s+")
_NOT_RESIDUE = re.compile(r"[^A-Za-z*]")


def _residues(seq, what):
    """seq (str or bytes) without whitespace, checked to be residue letters."""
    if isinstance(seq, (bytes, bytearray)):
        seq = bytes(seq).decode("ascii", "replace")
    if not isinstance(seq, str):
        raise TypeError("%s: expected a str of residue letters, got %s"
                        % (what, type(seq).__name__))
    seq = _WHITESPACE.sub("", seq)
    bad = _NOT_RESIDUE.search(seq)
    if bad:
        raise _error(_swgpu.FormatError,
                     "%s: %r at position %d is not a residue letter (a sequence is letters "
                     "and '*'; to read a file, give a pathlib.Path or use Queries.read)"
                     % (what, bad.group(), bad.start() + 1))
    return seq


def _clamp_threads(options):
    """threads above the online cores is clamped to them, with a warning (as
    the command line does)."""
    t = options.get("threads")
    if isinstance(t, int) and not isinstance(t, bool) and t > 0:
        cores = os.cpu_count() or 1
        if t > cores:
            logger.warning("threads %d is more than the %d cores: using %d", t, cores, cores)
            options["threads"] = cores
    return options


def _options_doc(table, indent):
    """The keyword options of a C options table, for docstrings indented by
    indent spaces."""
    lines = []
    for name, kind, doc in table:
        lines += textwrap.wrap("%s (%s): %s" % (name, kind, doc), 79,
                               initial_indent=" " * indent,
                               subsequent_indent=" " * (indent + 4))
    return "\n".join(lines)


# ---------------------------------------------------- BLAST number formats

def format_evalue(e):
    """An E-value as BLAST+ (and ``swgpu search``) writes it in tabular output:
    "0.0" below 1e-180, "%.2e" below 0.0009, then "%.3f", "%.2f", "%.1f" and
    "%.0f" below 0.1, 1, 10 and above."""
    if e < 1.0e-180:
        return "0.0"
    if e < 0.0009:
        return "%.2e" % e
    if e < 0.1:
        return "%.3f" % e
    if e < 1.0:
        return "%.2f" % e
    if e < 10.0:
        return "%.1f" % e
    return "%.0f" % e


def format_bitscore(b):
    """A bit score as BLAST+ writes it: "%4.1f" up to 99.9, the integer part up
    to 99999, "%5.3e" above."""
    if b > 99999:
        return "%5.3e" % b
    if b > 99.9:
        return "%3d" % int(b)
    return "%4.1f" % b


# the extensions of a BLAST database's files, versions 4 and 5 (as the
# swgpu tool's input guard, tools/outfile.c)
_BLASTDB_EXT = ("al", "in", "sq", "hr", "og", "sd", "si", "ni", "nd", "pi", "pd", "hi", "hd",
                "os", "ot", "tf", "to", "db", "js", "aa", "ab", "ac")


def _refuse_input(source, output, label="database", read_from="this database was read from"):
    """Raise InvalidArgumentError when output (an existing regular file,
    links followed) is the file source (what a Database or Queries was read
    from) or a file of the BLAST database that the prefix source names.
    Messages: "LABEL OUTPUT: is the file READ_FROM; refusing to replace it"."""
    if source is None:
        return
    out = os.fsdecode(output)
    try:
        so = os.stat(out)
    except OSError:
        return  # nothing there yet
    if not stat.S_ISREG(so.st_mode):
        return  # not a file: refused, or written in place, by the caller
    try:
        si = os.stat(source)
    except OSError:
        si = None
    if si is not None:
        if (si.st_dev, si.st_ino) == (so.st_dev, so.st_ino):
            raise _error(_swgpu.InvalidArgumentError,
                         "%s %s: is the file %s; refusing to replace it" % (label, out, read_from))
        return
    # a BLAST database prefix: its files are PREFIX[.volume].EXT
    name = os.path.basename(out)
    if (len(name) > 4 and name[-4] == "." and name[-3] in "pn" and name[-2:] in _BLASTDB_EXT):
        want = os.path.join(os.path.realpath(os.path.dirname(source) or "."),
                            os.path.basename(source)) + "."
        if os.path.basename(source) and os.path.realpath(out).startswith(want):
            raise _error(_swgpu.InvalidArgumentError,
                         "%s %s: is a file of the BLAST database %s %s; refusing to replace it"
                         % (label, out, source, read_from))
