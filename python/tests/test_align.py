"""swgpu.align and swgpu.align_long: scores known by hand, a Python full-matrix
oracle on seeded random pairs, CIGARs rescored to the score, align_long equal
to align, and the same results and errors as ``swgpu align``."""

import os
import random
import re

import pytest

import swgpu
from conftest import cli_error, data, gotoh, rescore

PROT = "ACDEFGHIKLMNPQRSTVWY"
LETTERS = "ARNDCQEGHILKMFPSTWYVBZX*"


def matrix_scores(matrix=None):
    """s(a, b) of a protein matrix as the library scores it: W a W against
    W b W with gaps too dear to use scores 2*s(W, W) + s(a, b)."""
    ww = swgpu.align("W", "W", matrix).score
    table = {}
    for a in LETTERS:
        for b in LETTERS:
            s = swgpu.align("W%sW" % a, "W%sW" % b, matrix, 100, 100).score - 2 * ww
            table[a, b] = s
    return lambda a, b: table[a, b]


def dna_score(match, mismatch):
    return lambda a, b: match if a == b and a in "ACGT" else mismatch


def test_blosum62_entries_known():
    s = matrix_scores()
    assert (s("W", "W"), s("A", "A"), s("C", "C"), s("W", "C"), s("E", "D"), s("I", "V")) == \
        (11, 4, 9, -2, 2, 3)
    assert all(s(a, b) == s(b, a) for a in LETTERS for b in LETTERS)


def test_known_scores():
    # the signal peptide of serum albumin against itself: the BLOSUM62
    # diagonal, M5 K5 W11 V4 T5 F6 I4 S4 L4 L4 F6 L4 F6 S4 S4 A4 Y7 S4
    a = swgpu.align("MKWVTFISLLFLFSSAYS", "MKWVTFISLLFLFSSAYS")
    assert (a.score, a.cigar, a.length, a.nident, a.identity) == (91, "18M", 18, 18, 100.0)
    assert (a.query_begin, a.query_end, a.target_begin, a.target_end) == (0, 18, 0, 18)
    assert (a.qstart, a.qend, a.sstart, a.send) == (1, 18, 1, 18)
    assert a.type == "protein"
    # DNA, +2/-3, open 5 extend 2: 8 matches, a 2-base gap (-9), 6 matches
    a = swgpu.align("ACGTACGTGGCATGCA", "ACGTACGTCATGCA")
    assert (a.type, a.score, a.cigar) == ("dna", 16 - 9 + 12, "8M2I6M")
    assert (a.mismatches, a.gap_opens, a.gaps, a.length, a.nident) == (0, 1, 2, 16, 14)
    assert a.identity == pytest.approx(87.5)
    # the same with a cheaper open: open 1 extend 1, the gap costs 3
    assert swgpu.align("ACGTACGTGGCATGCA", "ACGTACGTCATGCA", gap_open=1, gap_extend=1).score \
        == 25
    # match/mismatch: +1/-1 on one mismatch in the middle of 9
    a = swgpu.align("AAAACAAAA", "AAAAGAAAA", match=1, mismatch=-1)
    assert (a.score, a.cigar, a.mismatches) == (7, "9M", 1)
    # positional matrix and gaps, as the issue's signature writes them
    assert swgpu.align("HEAGAWGHEE", "PAWHEAE", "BLOSUM62", 11, 1).score == \
        swgpu.align("HEAGAWGHEE", "PAWHEAE").score


def test_no_alignment_and_score_only():
    a = swgpu.align("WWWW", "PPPP")
    assert (a.score, a.cigar, a.length, a.identity) == (0, "", 0, 0.0)
    assert swgpu.align("", "MKV").score == 0
    # an empty sequence takes the other's type
    assert (swgpu.align("", "ACGTAC").type, swgpu.align("ACGTAC", "").type) == ("dna", "dna")
    full = swgpu.align("MKWVTFISLLFLFSSAYS", "MKWVTFLLLLFISAYS")
    only = swgpu.align("MKWVTFISLLFLFSSAYS", "MKWVTFLLLLFISAYS", score_only=True)
    assert only.cigar is None
    assert (only.score, only.query_begin, only.query_end, only.target_begin, only.target_end) \
        == (full.score, full.query_begin, full.query_end, full.target_begin, full.target_end)


def test_whitespace_and_case():
    a = swgpu.align("mkwvt fisll\nflfssays", b"MKWVTFISLLFLFSSAYS")
    assert (a.score, a.query_length) == (91, 18)


@pytest.mark.parametrize("system", ["blosum62", "pam250", "matrix-file", "dna"])
def test_random_pairs_against_oracle(system):
    rng = random.Random(hash(system) & 0xffff)
    if system == "dna":
        alphabet, score, kw = "ACGTN", dna_score(2, -3), {"type": "dna"}
        gaps = [(5, 2), (0, 3), (2, 1)]
    else:
        matrix = {"blosum62": "BLOSUM62", "pam250": "pam250",
                  "matrix-file": data("cli_ident.mat")}[system]
        alphabet, score, kw = PROT + "X", matrix_scores(matrix), {"matrix": matrix,
                                                                 "type": "protein"}
        gaps = [(11, 1), (10, 2), (3, 3), (0, 1)]
    for k in range(60):
        go, ge = gaps[k % len(gaps)]
        q = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 35)))
        if k % 3 == 0 and q:  # a homolog: mutate q
            t = "".join(c if rng.random() < 0.8 else rng.choice(alphabet) for c in q)
            t = t[:rng.randint(0, len(t))] + "".join(rng.choice(alphabet) for _ in range(3)) + \
                t[rng.randint(0, len(t)):]
        else:
            t = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 35)))
        a = swgpu.align(q, t, gap_open=go, gap_extend=ge, **kw)
        best, end = gotoh(q, t, score, go, ge)
        assert a.score == best, (q, t, go, ge)
        if best == 0:
            assert a.cigar == ""
            continue
        assert (a.query_end, a.target_end) == end, (q, t, go, ge)
        assert rescore(a, q, t, score, go, ge) == \
            (a.score, a.length, a.nident, a.mismatches, a.gap_opens, a.gaps)


def test_align_long_equals_align():
    rng = random.Random(14)
    for k in range(30):
        dna = k % 2 == 0
        alphabet = "ACGT" if dna else PROT
        q = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 300)))
        t = "".join(c if rng.random() < 0.85 else rng.choice(alphabet) for c in q[::-1][:200])
        t += "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 80)))
        if k % 3 == 0:
            t = q[50:] + t
        short = swgpu.align(q, t)
        for backend, threads in (("cpu", 1), ("cpu", 2), ("ref", 0)):
            long_ = swgpu.align_long(q, t, backend=backend, threads=threads)
            assert long_.stats.backend == backend
            for f in ("score", "query_begin", "query_end", "target_begin", "target_end"):
                assert getattr(long_, f) == getattr(short, f), (k, backend, f)
            score = dna_score(2, -3) if dna else matrix_scores()
            go, ge = (5, 2) if dna else (11, 1)
            if long_.score:
                assert rescore(long_, q, t, score, go, ge)[0] == long_.score


def test_align_long_options():
    a = swgpu.Queries.read(data("long_a.fa"))[0].sequence
    b = swgpu.Queries.read(data("long_b.fa"))[0].sequence
    full = swgpu.align_long(a, b, prune=False, threads=1)
    pruned = swgpu.align_long(a, b, threads=2, max_memory="16M")
    assert full.stats.cells_pruned == 0 and full.stats.score_cells == len(a) * len(b)
    # no pruning, no seed bound; with it, a real alignment's score
    assert full.stats.seed_bound == 0 and 0 < pruned.stats.seed_bound <= pruned.score
    assert full.stats.gpus == 0
    assert (pruned.score, pruned.query_begin, pruned.target_end) == \
        (full.score, full.query_begin, full.target_end)
    only = swgpu.align_long(a, b, score_only=True)
    assert only.cigar is None and only.score == full.score
    assert swgpu.align_long(a, b, gap_open=2, gap_extend=1).score >= full.score
    seen = []
    swgpu.align_long(a, b, progress=lambda *args: seen.append(args))
    assert {p[0] for p in seen} <= {"prepass", "score", "reverse", "traceback"}
    assert all(0.0 <= p[1] <= 1.0 and p[2] >= 0 and p[3] >= 0 for p in seen)


def test_align_long_gpus_keywords():
    # the GPU split's keywords: the CPU backend ignores them, the CUDA tests
    # compare partitions on a GPU; bad values are refused on every backend
    a = swgpu.Queries.read(data("long_a.fa"))[0].sequence
    b = swgpu.Queries.read(data("long_b.fa"))[0].sequence
    base = swgpu.align_long(a, b, backend="cpu")
    split = swgpu.align_long(a, b, backend="cpu", gpus=0, gpu_parts=3)
    assert (split.score, split.query_begin, split.target_end, split.cigar) == \
        (base.score, base.query_begin, base.target_end, base.cigar)
    with pytest.raises(ValueError, match="gpus -1"):
        swgpu.align_long(a, b, backend="cpu", gpus=-1)


def test_align_long_progress_exception():
    a = "ACGT" * 400

    def progress(phase, fraction, cells, seconds):
        raise KeyError("stop " + phase)

    with pytest.raises(KeyError, match="stop (prepass|score)"):
        swgpu.align_long(a, a, progress=progress)


def test_align_long_checkpoint(tmp_path):
    a = swgpu.Queries.read(data("long_a.fa"))[0].sequence
    b = swgpu.Queries.read(data("long_b.fa"))[0].sequence
    ck = str(tmp_path / "run.ckpt")
    plain = swgpu.align_long(a, b, threads=1)
    with_ck = swgpu.align_long(a, b, threads=1, checkpoint=ck, checkpoint_every=0.001)
    assert (with_ck.score, with_ck.query_begin, with_ck.query_end, with_ck.target_begin,
            with_ck.target_end, with_ck.cigar) == \
        (plain.score, plain.query_begin, plain.query_end, plain.target_begin,
         plain.target_end, plain.cigar)
    assert not os.path.exists(ck)  # removed when done


def summary(text):
    """`swgpu align` summary lines as a dict."""
    out = {}
    for line in text.splitlines():
        key, _, value = line.partition(" ")
        out[key] = value.strip()
    return out


@pytest.mark.parametrize("args,kw", [
    (["long_a.fa", "long_b.fa"], {}),
    (["long_a.fa", "long_brc.fa", "--strand", "minus"], {"strand": "minus"}),
    (["long_a.fa", "long_brc.fa", "--strand", "both"], {"strand": "both"}),
    (["long_a.fa", "long_b.fa", "--strand", "both"], {"strand": "both"}),
    (["long_a.fa", "long_b.fa", "--gap-open", "3", "--gap-extend", "1", "--match", "1",
      "--mismatch", "-2"], {"gap_open": 3, "gap_extend": 1, "match": 1, "mismatch": -2}),
    (["long_pa.fa", "long_pb.fa"], {}),
    (["long_pa.fa", "long_pb.fa", "--matrix", "PAM70", "--gap-open", "10", "--gap-extend",
      "1"], {"matrix": "PAM70", "gap_open": 10, "gap_extend": 1}),
    (["long_a.fa", "long_b.fa", "--score-only"], {"score_only": True}),
    (["long_a.fa", "long_b.fa", "--no-prune", "--backend", "ref"], {"prune": False,
                                                                    "backend": "ref"}),
])
def test_align_long_equals_cli(cli, args, kw):
    want = summary(cli(*(["align", "--quiet"] + [data(a) if a.endswith(".fa") else a
                                                   for a in args])).stdout)
    a = swgpu.Queries.read(data(args[0]))[0].sequence
    b = swgpu.Queries.read(data(args[1]))[0].sequence
    got = swgpu.align_long(a, b, **kw)
    assert str(got.score) == want["score"]
    assert "%d-%d" % (got.qstart, got.qend) == want["query_range"]
    assert "%d-%d" % (got.sstart, got.send) == want["target_range"]
    if got.type == "dna":
        assert got.strand == want["strand"]
    else:
        assert got.strand is None and "strand" not in want
    if "other_strand" in want:
        assert "%s %d" % ("plus" if got.strand == "minus" else "minus",
                          got.other_strand_score) == want["other_strand"]
    else:
        assert got.other_strand_score is None
    if kw.get("score_only"):
        assert got.cigar is None and "cigar" not in want
        return
    assert got.cigar == want["cigar"]
    assert "%d/%d (%.2f%%)" % (got.nident, got.length, got.identity) == want["identity"]
    assert (str(got.length), str(got.mismatches), str(got.gap_opens), str(got.gaps)) == \
        (want["length"], want["mismatch"], want["gapopen"], want["gaps"])


def test_minus_strand_coordinates():
    # the target is the reverse complement of the query's middle
    q = "TTTTGATCCGATTAGCCATGCAAAA"
    core = q[4:21]
    comp = {"A": "T", "C": "G", "G": "C", "T": "A"}
    t = "CCCCCC" + "".join(comp[c] for c in reversed(core)) + "GG"
    a = swgpu.align_long(q, t, strand="minus")
    assert (a.strand, a.score, a.cigar) == ("minus", 2 * len(core), "%dM" % len(core))
    assert (a.query_begin, a.query_end) == (4, 21)
    assert (a.target_begin, a.target_end) == (6, 6 + len(core))  # forward strand
    assert (a.sstart, a.send) == (6 + len(core), 7)               # high to low


def test_errors_carry_the_library_message(cli):
    with pytest.raises(swgpu.InvalidArgumentError) as e:
        swgpu.align("MKV", "MKV", gap_open=-3)
    assert str(e.value) == "gap open -3 is negative: give penalties as positive numbers " \
                           "(a gap of length k costs open + k*extend)"
    assert e.value.status == -5 and isinstance(e.value, ValueError)
    with pytest.raises(swgpu.MatrixError) as e:
        swgpu.align("MKV", "MKV", matrix="BLOSUM999")
    p = cli("align", "--quiet", "--matrix", "BLOSUM999", data("long_pa.fa"), data("long_pb.fa"),
            ok=False)
    assert str(e.value) == cli_error(p)
    assert e.value.status == -6
    with pytest.raises(swgpu.AlphabetError, match="the query is a dna sequence and the target "
                                                  "a protein sequence"):
        swgpu.align("ACGTACGTAC", "MKWVTFISLL")
    with pytest.raises(swgpu.InvalidArgumentError, match="matrix applies to protein only"):
        swgpu.align("ACGT", "ACGT", matrix="BLOSUM62")
    with pytest.raises(swgpu.InvalidArgumentError, match="match applies to DNA only"):
        swgpu.align("MKV", "MKV", match=3)
    with pytest.raises(swgpu.InvalidArgumentError, match="strand minus applies to DNA only"):
        swgpu.align_long("MKV", "MKV", strand="minus")
    with pytest.raises(swgpu.FormatError, match="not a residue letter"):
        swgpu.align("queries.fasta", "MKV")
    with pytest.raises(TypeError, match="unexpected keyword argument 'treads'"):
        swgpu.align_long("MKV", "MKV", treads=2)
    with pytest.raises(swgpu.InvalidArgumentError, match="'gpu' is not one of 'auto', 'ref'"):
        swgpu.align_long("MKV", "MKV", backend="gpu")
    # a budget too small: the library's message, as the tool prints it
    a = swgpu.Queries.read(data("long_a.fa"))[0].sequence
    b = swgpu.Queries.read(data("long_b.fa"))[0].sequence
    with pytest.raises(swgpu.BudgetError) as e:
        swgpu.align_long(a, b, max_memory="1M")
    p = cli("align", "--quiet", "--max-memory", "1M", data("long_a.fa"), data("long_b.fa"),
            ok=False)
    assert str(e.value) == cli_error(p)
    assert re.search(r"at least \d+ MiB are needed", str(e.value))


def test_cuda_backend_absent_or_present():
    if swgpu.has_cuda:
        pytest.skip("built with CUDA: the GPU tests cover the backend")
    with pytest.raises(swgpu.NoDeviceError, match="no CUDA support"):
        swgpu.align_long("ACGT" * 10, "ACGT" * 10, backend="cuda")
