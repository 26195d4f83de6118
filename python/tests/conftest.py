"""Shared fixtures of the swgpu package's tests.

The package under test is the one on sys.path (``make check-python`` puts
build/python first); failing that, the repository's build/python (``make
python``).  The command-line tool the outputs are compared with is
$SWGPU_CLI, else build/swgpu; tests that need it are skipped without it.
"""

import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(ROOT, "tests", "data")

try:
    import swgpu  # noqa: F401
except ImportError:
    sys.path.insert(0, os.path.join(ROOT, "build", "python"))
    try:
        import swgpu  # noqa: F401
    except ImportError as e:
        raise ImportError("the swgpu package is neither installed nor built in build/python "
                          "(make python, or pip install .): %s" % e) from e


def data(name):
    """Path of a fixture in tests/data."""
    return os.path.join(DATA, name)


def cli_path():
    return os.environ.get("SWGPU_CLI") or os.path.join(ROOT, "build", "swgpu")


@pytest.fixture
def cli():
    """run(*args, ok=True) -> CompletedProcess of the swgpu tool (text)."""
    path = cli_path()
    if not os.access(path, os.X_OK):
        pytest.skip("no swgpu tool at %s (make, or set SWGPU_CLI)" % path)

    def run(*args, ok=True):
        p = subprocess.run([path] + [str(a) for a in args], capture_output=True, text=True,
                           cwd=ROOT)
        if ok and p.returncode != 0:
            raise AssertionError("swgpu %s: exit %d: %s" % (" ".join(map(str, args)),
                                                            p.returncode, p.stderr))
        return p

    return run


def cli_error(proc):
    """The message of a failed run: stderr's 'swgpu: ' line without the prefix."""
    assert proc.returncode == 1, proc.stderr
    line = proc.stderr.strip().splitlines()[-1]
    assert line.startswith("swgpu: "), line
    return line[len("swgpu: "):]


def gotoh(q, t, score, gap_open, gap_extend):
    """Full-matrix Smith-Waterman with affine gaps (a gap of length k costs
    gap_open + k*gap_extend): (best score, end) with the end (query end,
    target end), exclusive, of the cell with the best score and the smallest
    target end, then the smallest query end (the library's tie rule)."""
    neg = -(1 << 40)
    n, m = len(q), len(t)
    h_prev = [0] * (m + 1)
    f_prev = [neg] * (m + 1)
    best, end = 0, (0, 0)
    cells = []
    for i in range(1, n + 1):
        h = [0] * (m + 1)
        f = [neg] * (m + 1)
        e = neg
        for j in range(1, m + 1):
            e = max(e - gap_extend, h[j - 1] - gap_open - gap_extend)
            f[j] = max(f_prev[j] - gap_extend, h_prev[j] - gap_open - gap_extend)
            h[j] = max(0, h_prev[j - 1] + score(q[i - 1], t[j - 1]), e, f[j])
            if h[j] > 0:
                cells.append((h[j], i, j))
        h_prev, f_prev = h, f
    if cells:
        best = max(c[0] for c in cells)
        _, i, j = min((c for c in cells if c[0] == best), key=lambda c: (c[2], c[1]))
        end = (i, j)
    return best, end


def rescore(aln, q, t, score, gap_open, gap_extend):
    """The score of an alignment's CIGAR walked over q and t from its begin;
    also checks that the walk ends at the alignment's end and recounts the
    columns.  Returns (score, length, nident, mismatches, gap_opens, gaps)."""
    i, j = aln.query_begin, aln.target_begin
    total = length = nident = mism = opens = gaps = 0
    for n, op in re.findall(r"(\d+)([MID])", aln.cigar):
        n = int(n)
        length += n
        if op == "M":
            for _ in range(n):
                total += score(q[i], t[j])
                nident += q[i] == t[j]
                mism += q[i] != t[j]
                i += 1
                j += 1
        else:
            total -= gap_open + n * gap_extend
            opens += 1
            gaps += n
            if op == "I":
                i += n
            else:
                j += n
    assert (i, j) == (aln.query_end, aln.target_end), (i, j, aln)
    return total, length, nident, mism, opens, gaps
