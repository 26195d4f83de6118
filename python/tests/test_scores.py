"""Database.scores: every database sequence's score, as a NumPy int32 array
when numpy is installed (array.array rows otherwise), equal to the pairwise
scores of swgpu.align and to the hits' scores."""

import array
import pathlib

import pytest

import swgpu
import swgpu._search
from conftest import data

Q = data("cli_q.fasta")
DB = data("cli_db.fasta")


def pair_scores(db, query, **kw):
    return [swgpu.align(query, s.sequence, **kw).score for s in db]


_COMP = str.maketrans("ACGTacgt", "TGCAtgca")


def both_strand_scores(db, query, **kw):
    """DNA: each sequence's better score of its two strands, as a search scores it."""
    return [max(swgpu.align(query, s.sequence, **kw).score,
                swgpu.align(query, s.sequence.translate(_COMP)[::-1], **kw).score) for s in db]


def test_scores_numpy():
    np = pytest.importorskip("numpy")
    db = swgpu.Database(DB)
    qs = swgpu.Queries.read(Q)
    one = db.scores(qs[0].sequence)
    assert isinstance(one, np.ndarray) and one.dtype == np.int32 and one.shape == (6,)
    assert one.tolist() == pair_scores(db, qs[0].sequence)
    all_ = db.scores(qs)
    assert all_.shape == (3, 6) and all_.dtype == np.int32
    for i, q in enumerate(qs):
        assert all_[i].tolist() == pair_scores(db, q.sequence)
    # the hits are the top of each row
    for i, q in enumerate(db.search(qs)):
        assert [h.score for h in q] == [int(all_[i, h.target_index]) for h in q]
    # every engine, other scoring systems
    for backend in ("ref", "cpu"):
        assert (db.scores(pathlib.Path(Q), backend=backend, threads=1) == all_).all()
    pam = db.scores(qs, matrix="PAM250", gap_open=14, gap_extend=2)
    assert pam[1].tolist() == pair_scores(db, qs[1].sequence, matrix="PAM250", gap_open=14,
                                          gap_extend=2)
    dna = swgpu.Database(data("cli_dna_db.fasta"))
    dq = swgpu.Queries.read(data("cli_dna_q.fasta"))
    d = dna.scores(dq, match=1, mismatch=-2, gap_open=2, gap_extend=2)
    assert d.shape == (len(dq), len(dna))
    for i, q in enumerate(dq):
        assert d[i].tolist() == both_strand_scores(dna, q.sequence, match=1, mismatch=-2,
                                                   gap_open=2, gap_extend=2)
    d = dna.scores(dq, match=1, mismatch=-2, gap_open=2, gap_extend=2, strand="plus")
    for i, q in enumerate(dq):
        assert d[i].tolist() == pair_scores(dna, q.sequence, match=1, mismatch=-2, gap_open=2,
                                            gap_extend=2)
    # a larger database in database order (not the engine's length order)
    big = swgpu.Database(str(pathlib.Path(__file__).parents[2] / "examples" / "db.fasta"))
    q = swgpu.Queries.read(str(pathlib.Path(__file__).parents[2] / "examples" /
                               "queries.fasta"))
    s = big.scores(q[0].sequence)
    assert s.shape == (len(big),)
    assert s.tolist() == pair_scores(big, q[0].sequence)
    assert len(db.scores([])) == 0


def test_scores_without_numpy(monkeypatch):
    monkeypatch.setattr(swgpu._search, "_np", None)
    db = swgpu.Database(DB)
    qs = swgpu.Queries.read(Q)
    one = db.scores(qs[1].sequence)
    assert isinstance(one, array.array) and one.itemsize == 4
    assert one.tolist() == pair_scores(db, qs[1].sequence)
    rows = db.scores(qs)
    assert isinstance(rows, list) and len(rows) == 3
    assert [r.tolist() for r in rows] == [pair_scores(db, q.sequence) for q in qs]


def test_scores_errors():
    db = swgpu.Database(DB)
    with pytest.raises(swgpu.InvalidArgumentError, match="gap extend -1 is negative"):
        db.scores("MKV", gap_extend=-1)
    with pytest.raises(swgpu.AlphabetError):
        db.scores(pathlib.Path(data("cli_dna_q.fasta")))
    with pytest.raises(TypeError, match=r"scores\(\) got an unexpected keyword argument"):
        db.scores("MKV", bogus=1)
