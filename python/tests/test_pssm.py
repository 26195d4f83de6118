"""swgpu.Pssm and searches with PSSM queries, once or iterated: a PSSM of
BLOSUM62's rows is the plain query (tests/test_pssm.c and tests/cli/psi.sh
check the same in C), a PSSM from a file, from its text and from its scores
search alike, outputs equal ``swgpu search --pssm`` and ``swgpu search
--iterations N``'s, the final PSSMs equal ``--out-pssm``'s files, and bad
input raises the library's errors."""

import gzip
import os
import pathlib
from concurrent.futures import ThreadPoolExecutor

import pytest

import swgpu
from conftest import cli_error, data

Q = data("cli_q.fasta")
DB = data("cli_db.fasta")
P = data("cli_pssm")  # PSSMs of BLOSUM62's rows for the records of cli_q.fasta
ALL_COLUMNS = " ".join(swgpu.COLUMNS)
FORMATS = ["6", "7", "pair", "6 " + ALL_COLUMNS]

# BLOSUM62's rows and columns in psiblast's PSSM column order
BLOSUM62_TEXT = """
   A  R  N  D  C  Q  E  G  H  I  L  K  M  F  P  S  T  W  Y  V
A  4 -1 -2 -2  0 -1 -1  0 -2 -1 -1 -1 -1 -2 -1  1  0 -3 -2  0
R -1  5  0 -2 -3  1  0 -2  0 -3 -2  2 -1 -3 -2 -1 -1 -3 -2 -3
N -2  0  6  1 -3  0  0  0  1 -3 -3  0 -2 -3 -2  1  0 -4 -2 -3
D -2 -2  1  6 -3  0  2 -1 -1 -3 -4 -1 -3 -3 -1  0 -1 -4 -3 -3
C  0 -3 -3 -3  9 -3 -4 -3 -3 -1 -1 -3 -1 -2 -3 -1 -1 -2 -2 -1
Q -1  1  0  0 -3  5  2 -2  0 -3 -2  1  0 -3 -1  0 -1 -2 -1 -2
E -1  0  0  2 -4  2  5 -2  0 -3 -3  1 -2 -3 -1  0 -1 -3 -2 -2
G  0 -2  0 -1 -3 -2 -2  6 -2 -4 -4 -2 -3 -3 -2  0 -2 -2 -3 -3
H -2  0  1 -1 -3  0  0 -2  8 -3 -3 -1 -2 -1 -2 -1 -2 -2  2 -3
I -1 -3 -3 -3 -1 -3 -3 -4 -3  4  2 -3  1  0 -3 -2 -1 -3 -1  3
L -1 -2 -3 -4 -1 -2 -3 -4 -3  2  4 -2  2  0 -3 -2 -1 -2 -1  1
K -1  2  0 -1 -3  1  1 -2 -1 -3 -2  5 -1 -3 -1  0 -1 -3 -2 -2
M -1 -1 -2 -3 -1  0 -2 -3 -2  1  2 -1  5  0 -2 -1 -1 -1 -1  1
F -2 -3 -3 -3 -2 -3 -3 -3 -1  0  0 -3  0  6 -4 -2 -2  1  3 -1
P -1 -2 -2 -1 -3 -1 -1 -2 -2 -3 -3 -1 -2 -4  7 -1 -1 -4 -3 -2
S  1 -1  1  0 -1  0  0  0 -1 -2 -2  0 -1 -2 -1  4  1 -3 -2 -2
T  0 -1  0 -1 -1 -1 -1 -2 -2 -1 -1 -1 -1 -2 -1  1  5 -2 -2  0
W -3 -3 -4 -4 -2 -2 -3 -2 -2 -3 -2 -3 -1  1 -4 -3 -2 11  2 -3
Y -2 -2 -2 -3 -2 -1 -2 -3  2 -1 -1 -2 -1  3 -3 -2 -2  2  7 -1
V  0 -3 -3 -3 -1 -2 -2 -3 -3  3  1 -2  1 -1 -2 -2  0 -3 -1  4
"""
BLOSUM62 = {line.split()[0]: [int(v) for v in line.split()[1:]]
            for line in BLOSUM62_TEXT.strip().splitlines()[1:]}


def blosum_pssm(seq):
    """The PSSM of BLOSUM62's rows for seq's residues."""
    return swgpu.Pssm.from_scores([BLOSUM62[r] for r in seq.sequence], seq.sequence, seq.id)


def hits_of(res):
    """Everything of each hit but the statistics (E-value, bit score), which
    are a PSSM's own (swgpu_pssm_karlin) for a PSSM query."""
    return [[(h.target_index, h.score, h.alignment) for h in q.hits] for q in res]


def test_blosum62_table_is_the_library_s():
    # a local alignment of WaW with WbW, gaps too dear to open, scores
    # 11 + s(a, b) + 11 (every BLOSUM62 score is > -11)
    cols = swgpu.Pssm.COLUMNS
    for a in cols:
        for b in cols:
            got = swgpu.align("W%sW" % a, "W%sW" % b, gap_open=100, gap_extend=1).score
            assert got - 22 == BLOSUM62[a][cols.index(b)], (a, b)


@pytest.mark.parametrize("backend", ["ref", "cpu"])
def test_blosum62_rows_give_the_plain_search(backend):
    db = swgpu.Database(DB)
    queries = swgpu.Queries.read(Q)
    kw = {"evalue": 1000, "backend": backend, "top": 20}
    plain = db.search(queries, **kw)
    pssms = [blosum_pssm(s) for s in queries]
    res = db.search(pssms, **kw)
    assert sum(len(q) for q in plain) > 6
    assert hits_of(res) == hits_of(plain)
    cols = "sseqid score qstart qend sstart send cigar nident mismatch positive gaps qseq sseq btop"
    assert res.format("6 " + cols) == plain.format("6 " + cols)
    for p, q, r in zip(pssms, plain, res):
        assert (r.id, r.length, r.description) == (p.id, len(p), "")
        assert (r.id, r.length) == (q.id, q.length)
        # psiblast's statistics for a PSSM: the matrix's lambda, K scaled
        assert r.karlin == p.karlin() and r.karlin.lambda_ == q.karlin.lambda_
    # one PSSM at a time, as a single query
    one = db.search(pssms[0], **kw)
    assert hits_of(one) == hits_of(res)[:1]


def test_file_text_and_scores_search_alike(cli, tmp_path):
    db = swgpu.Database(DB)
    queries = swgpu.Queries.read(Q)
    for seq in queries:
        path = os.path.join(P, seq.id + ".pssm")
        with open(path, "rb") as f:
            raw = f.read()
        from_file = swgpu.Pssm(path)
        from_path = swgpu.Pssm(pathlib.Path(path))
        from_str = swgpu.Pssm.from_text(raw.decode(), id=seq.id)
        from_gzip = swgpu.Pssm.from_text(gzip.compress(raw), id=seq.id)
        from_scores = blosum_pssm(seq)
        gz = tmp_path / (seq.id + ".pssm.gz")
        gz.write_bytes(gzip.compress(raw))
        from_gz_file = swgpu.Pssm(gz)
        all_ = [from_file, from_path, from_str, from_gzip, from_scores, from_gz_file]
        for p in all_:
            assert (p.id, p.length, p.residues) == (seq.id, len(seq.sequence), seq.sequence)
            assert p.scores == [BLOSUM62[r] for r in seq.sequence]
            assert len(p.scores) == len(p) and all(len(row) == 20 for row in p.scores)
        want = {fmt: db.search(from_file).format(fmt) for fmt in FORMATS}
        for fmt in FORMATS:
            cli_out = cli("search", "--pssm", path, "-d", DB, "--quiet", "--outfmt", fmt).stdout
            assert want[fmt] == cli_out, (seq.id, fmt)
            for p in all_[1:]:
                assert db.search(p).format(fmt) == want[fmt], (seq.id, fmt)


def test_psiblast_pssm_equals_cli(cli):
    # psiblast's own PSSM (q104) against subjects with every unusual letter
    path = data("q104.pssm")
    subjects = data("pssm_subjects.fa")
    p = swgpu.Pssm(path)
    assert p.id == "q104" and p.min == swgpu._pssm.FORBIDDEN
    db = swgpu.Database(subjects)
    with open(path, "rb") as f:
        text = swgpu.Pssm.from_text(f.read(), id="q104")
    for fmt, args in (("7", []), ("pair", ["-n", "2"]), ("6 " + ALL_COLUMNS, [])):
        want = cli("search", "--pssm", path, "-d", subjects, "--quiet", "--outfmt", fmt,
                   *args).stdout
        top = {"top": 2} if args else {}
        assert db.search(p, **top).format(fmt) == want
        assert db.search(text, **top).format(fmt) == want
    res = db.search(p)
    rows = "".join(h.row(ALL_COLUMNS) + "\n" for h in res.hits())
    assert rows == cli("search", "--pssm", path, "-d", subjects, "--quiet", "--outfmt",
                       "6 " + ALL_COLUMNS).stdout
    # the letters without a column: X -1, * -4, B Z J U O forbidden or
    # BLOSUM62's where the position observed nothing
    assert p.score(0, "X") == -1 and p.score(0, "*") == -4
    assert {p.score(i, "B") for i in range(len(p))} & {swgpu._pssm.FORBIDDEN}


def test_several_pssms_and_options_equal_cli(cli):
    paths = [os.path.join(P, q + ".pssm") for q in ("q1", "q2", "q3")]
    db = swgpu.Database(DB)
    pssms = [swgpu.Pssm(p) for p in paths]
    pargs = [a for p in paths for a in ("--pssm", p)]
    for args, kw in (([], {}), (["-n", "2", "--evalue", "1"], {"top": 2, "evalue": 1}),
                     (["--evalue-model", "old-fsc"], {"evalue_model": "old-fsc"}),
                     (["--matrix", "BLOSUM80", "--gap-open", "10", "--gap-extend", "1"],
                      {"matrix": "BLOSUM80", "gap_open": 10, "gap_extend": 1}),
                     (["--no-align"], {"no_align": True})):
        res = db.search(pssms, **kw)
        for fmt in ("6", "7", "6 qseqid sseqid score evalue bitscore qlen slen pident", "0",
                    "5", "15", "17"):
            if "--no-align" in args and fmt in ("0", "5", "15", "17"):
                continue  # they need the alignments (test_search.py)
            want = cli("search", *pargs, "-d", DB, "--quiet", "--outfmt", fmt, *args).stdout
            assert res.format(fmt) == want, (args, fmt)
            if fmt.startswith("6"):
                cols = fmt[2:] or "std"
                assert "".join(h.row(cols) + "\n" for h in res.hits()) == want, (args, fmt)


def test_format_reads_back():
    for path in (os.path.join(P, "q1.pssm"), data("q104.pssm"),
                 data(os.path.join("psiblast", "q101.pssm.gz"))):
        p = swgpu.Pssm(path)
        text = p.format()
        assert text.startswith("\nLast position-specific scoring matrix computed")
        assert "PSI Gapped" in text  # BLOSUM62 11/1: the K and lambda block
        back = swgpu.Pssm.from_text(text, id=p.id)
        assert (back.id, back.residues, back.scores) == (p.id, p.residues, p.scores)
        assert back.format() == text
        assert [back.score(i, c) for i in range(len(p)) for c in "BZJUOX*"] == \
            [p.score(i, c) for i in range(len(p)) for c in "BZJUOX*"]
    # without published parameters for the gaps: no K and lambda block
    assert "PSI Gapped" not in p.format(gap_open=3, gap_extend=3)


def test_write(tmp_path):
    p = swgpu.Pssm(os.path.join(P, "q2.pssm"))
    out = tmp_path / "w.pssm"
    p.write(out)
    assert out.read_text() == p.format()
    assert swgpu.Pssm(out).scores == p.scores


# ------------------------------------------------------------ iterations

ITER_CASES = [
    ("two", ["--iterations", "2"], {"iterations": 2}),
    ("three", ["--iterations", "3"], {"iterations": 3}),
    ("inclusion", ["--iterations", "2", "--inclusion-evalue", "1"],
     {"iterations": 2, "inclusion_evalue": 1}),
    ("top", ["--iterations", "2", "-n", "2", "--evalue", "1"],
     {"iterations": 2, "top": 2, "evalue": 1}),
    ("no-align", ["--iterations", "2", "--no-align"], {"iterations": 2, "no_align": True}),
]


@pytest.mark.parametrize("name,args,kw", ITER_CASES, ids=[c[0] for c in ITER_CASES])
def test_iterated_search_equals_cli(cli, name, args, kw):
    db = swgpu.Database(DB)
    res = db.search(swgpu.Queries.read(Q), **kw)
    assert isinstance(res, swgpu.IteratedSearchResults)
    assert res.rounds == max(q.rounds for q in res)
    for fmt in FORMATS:
        want = cli("search", "-q", Q, "-d", DB, "--quiet", "--outfmt", fmt, *args).stdout
        assert res.format(fmt) == want, (name, fmt)
        if fmt.startswith("6"):
            cols = fmt[2:] or "std"
            assert "".join(h.row(cols) + "\n" for h in res.hits()) == want, (name, fmt)
    for fmt in ("6", "7", "pair", "0", "5", "15", "17"):
        if "--no-align" in args and fmt in ("0", "5", "15", "17"):
            continue  # they need the alignments (test_search.py)
        want = cli("search", "-q", Q, "-d", DB, "--quiet", "--outfmt", fmt, "--report", "all",
                   *args).stdout
        assert res.format(fmt, all_rounds=True) == want, (name, fmt)


def test_iterated_search_final_pssms_equal_out_pssm(cli, tmp_path):
    db = swgpu.Database(DB)
    res = db.search(swgpu.Queries.read(Q), iterations=2)
    cli("search", "-q", Q, "-d", DB, "--quiet", "--iterations", "2", "--out-pssm", tmp_path)
    assert [q.id for q in res] == ["q1", "q2", "q3"]
    for q in res:
        assert isinstance(q.pssm, swgpu.Pssm) and q.pssm.id == q.id and len(q.pssm) == q.length
        assert q.pssm.format() == (tmp_path / (q.id + ".pssm")).read_text()
        assert len(q.included) == q.rounds and q.converged in (True, False)
    # q3 includes nothing in round 1 and stops there
    assert (res[2].rounds, res[2].converged, res[2].included) == (1, True, (0,))
    # the PSSMs outlive their results
    pssms = [q.pssm for q in res]
    del res
    again = db.search(pssms)
    assert len(again) == 3 and again[0].id == "q1"
    # final_pssm=False: no PSSMs, the same hits
    res = db.search(swgpu.Queries.read(Q), iterations=2, final_pssm=False)
    assert [q.pssm for q in res] == [None] * 3
    assert res.format("7") == db.search(swgpu.Queries.read(Q), iterations=2).format("7")


def test_iterated_search_from_pssms_equals_cli(cli):
    paths = [os.path.join(P, q + ".pssm") for q in ("q1", "q2")]
    db = swgpu.Database(DB)
    res = db.search([swgpu.Pssm(p) for p in paths], iterations=2)
    pargs = [a for p in paths for a in ("--pssm", p)]
    for fmt in FORMATS:
        want = cli("search", *pargs, "-d", DB, "--quiet", "--iterations", "2", "--outfmt",
                   fmt).stdout
        assert res.format(fmt) == want, fmt
    assert [(q.id, q.description, q.length) for q in res] == [("q1", "", 84), ("q2", "", 18)]


def test_one_iteration_is_the_plain_search():
    db = swgpu.Database(DB)
    q = swgpu.Queries.read(Q)
    plain = db.search(q)
    once = db.search(q, iterations=1)
    assert [q.rounds for q in once] == [1, 1, 1]
    for fmt in FORMATS:
        assert once.format(fmt) == plain.format(fmt)
    assert hits_of(once) == hits_of(plain)


def test_iterated_search_threads_and_progress():
    db = swgpu.Database(DB)
    q = swgpu.Queries.read(Q)
    want = db.search(q, iterations=3).format("7")
    calls = []
    got = db.search(q, iterations=3, progress=lambda *a: calls.append(a)).format("7")
    assert got == want and calls
    pssm = swgpu.Pssm(os.path.join(P, "q1.pssm"))
    want_p = db.search(pssm).format("6")
    with ThreadPoolExecutor(max_workers=4) as ex:
        jobs = [ex.submit(lambda: db.search(q, iterations=3).format("7")) for _ in range(4)]
        jobs += [ex.submit(lambda: db.search(pssm).format("6")) for _ in range(4)]
        assert [j.result() for j in jobs] == [want] * 4 + [want_p] * 4


# ---------------------------------------------------------------- errors

def test_read_errors(tmp_path):
    missing = str(tmp_path / "nope.pssm")
    with pytest.raises(swgpu.FileError) as e:
        swgpu.Pssm(missing)
    assert isinstance(e.value, OSError) and e.value.status == -2
    assert str(e.value) == "PSSM file %s: No such file or directory" % missing
    bad = tmp_path / "bad.pssm"
    bad.write_text("just a title\n")
    with pytest.raises(swgpu.FormatError) as e:
        swgpu.Pssm(bad)
    assert isinstance(e.value, ValueError)
    assert str(e.value).startswith("PSSM file %s: no header line of column letters" % bad)


def test_text_errors_name_the_text():
    with open(os.path.join(P, "q2.pssm")) as f:
        lines = f.read().splitlines(True)
    cases = [
        ("", "PSSM text t: empty file"),
        ("hello\n", "PSSM text t: no header line of column letters"),
        # line 1 is blank, 2 the title, 3 the header, 4 position 1
        ("".join(lines[:4] + [lines[4].replace(" 2 ", " 7 ", 1)] + lines[5:]),
         "PSSM text t, line 5: position 7 out of order (expected 2)"),
        ("".join(lines[:3] + [lines[3].rsplit(None, 1)[0] + "\n"] + lines[4:]),
         "PSSM text t, line 4: position 1 has 42 values after its number, expected 43"),
        ("".join(lines[:3] + [lines[3].replace("-1", "x1", 1)] + lines[4:]),
         "PSSM text t, line 4: position 1, column 1 ('A'): 'x1' is not an integer"),
        (gzip.compress(b"".join(l.encode() for l in lines))[:-12],
         "PSSM text t: truncated gzip data"),
    ]
    for text, msg in cases:
        with pytest.raises(swgpu.FormatError) as e:
            swgpu.Pssm.from_text(text, id="t")
        assert isinstance(e.value, ValueError) and str(e.value).startswith(msg), str(e.value)
        assert "swgpu-pssm-" not in str(e.value)  # the temporary file is not named
    for bad_id in ("", "a/b"):
        with pytest.raises(swgpu.InvalidArgumentError, match="Pssm.from_text: id"):
            swgpu.Pssm.from_text("".join(lines), id=bad_id)
    with pytest.raises(TypeError):
        swgpu.Pssm.from_text(12)


def test_scores_errors():
    row = BLOSUM62["A"]
    with pytest.raises(swgpu.InvalidArgumentError) as e:
        swgpu.Pssm.from_scores([row, row[:19]], id="s")
    assert isinstance(e.value, ValueError)
    assert str(e.value) == "PSSM s: position 2 has 19 scores, expected 20 " \
                           "(columns ARNDCQEGHILKMFPSTWYV)"
    with pytest.raises(ValueError, match=r"PSSM s: position 1, column R: score 1001 out of "
                                         r"range \(-32768..1000\)"):
        swgpu.Pssm.from_scores([[4, 1001] + row[2:]], id="s")
    with pytest.raises(ValueError, match=r"score -32769 out of range"):
        swgpu.Pssm.from_scores([[-32769] + row[1:]], id="s")
    with pytest.raises(swgpu.InvalidArgumentError, match=r"PSSM s: no scores \(0 positions\)"):
        swgpu.Pssm.from_scores([], id="s")
    with pytest.raises(swgpu.InvalidArgumentError,
                       match="PSSM s: position 2: residue '1' is not a protein letter"):
        swgpu.Pssm.from_scores([row, row], residues="A1", id="s")
    with pytest.raises(swgpu.InvalidArgumentError, match="PSSM s: 3 residues for 2 positions"):
        swgpu.Pssm.from_scores([row, row], residues="AAA", id="s")
    with pytest.raises(TypeError):
        swgpu.Pssm.from_scores([[0.5] * 20])
    with pytest.raises(TypeError):
        swgpu.Pssm.from_scores("ACDE")
    # residues None: each position's best-scoring column, the first on ties
    p = swgpu.Pssm.from_scores([BLOSUM62["W"], [0] * 20, BLOSUM62["C"]])
    assert (p.id, p.residues, p.score(1, "B"), p.score(-1, "C")) == ("", "WAC", -32768, 9)
    with pytest.raises(IndexError):
        p.score(3, "A")
    with pytest.raises(swgpu.InvalidArgumentError, match="'1' is not a protein letter"):
        p.score(0, "1")


def test_search_errors(cli):
    pssm = swgpu.Pssm(os.path.join(P, "q1.pssm"))
    db = swgpu.Database(DB)
    dna = swgpu.Database(data("cli_dna_db.fasta"))
    with pytest.raises(swgpu.AlphabetError, match="the queries are protein PSSMs but the "
                                                  "database holds dna sequences"):
        dna.search(pssm)
    with pytest.raises(swgpu.InvalidArgumentError, match="match applies to DNA only"):
        db.search(pssm, match=1)
    with pytest.raises(swgpu.InvalidArgumentError, match="gap open -1 is negative"):
        db.search(pssm, gap_open=-1)
    with pytest.raises(TypeError, match="query 2: str among Pssm queries"):
        db.search([pssm, "MKWV"])
    with pytest.raises(TypeError, match="PSSM queries are searched by search"):
        db.scores(pssm)
    # iterated searches: the library's checks, the command line's words
    q = swgpu.Queries.read(Q)
    p = cli("search", "-q", Q, "-d", DB, "--iterations", "0", ok=False)
    assert cli_error(p) == "--iterations 0: must be >= 1"
    with pytest.raises(swgpu.InvalidArgumentError) as e:
        db.search(q, iterations=0)
    assert str(e.value) == "iterations 0: must be >= 1"
    with pytest.raises(swgpu.InvalidArgumentError, match="inclusion E-value 0: must be > 0"):
        db.search(q, iterations=2, inclusion_evalue=0)
    with pytest.raises(TypeError, match="option iterations: expected an int"):
        db.search(q, iterations="two")
    with pytest.raises(swgpu.AlphabetError, match="iterated search: PSSMs need protein"):
        dna.search(swgpu.Queries.read(data("cli_dna_q.fasta")), iterations=2)
    with pytest.raises(swgpu.AlphabetError):
        dna.search(pssm, iterations=2)
    # a results object of a plain search has no rounds
    assert not hasattr(db.search(pssm), "rounds")


def test_pssm_is_not_a_path_or_copy():
    with pytest.raises(TypeError):
        swgpu.Pssm(swgpu.Pssm(os.path.join(P, "q1.pssm")))
