"""The GPU backend through Python (skipped without CUDA or a GPU): searches,
all scores and long alignments equal the CPU backend's."""

import pathlib

import pytest

import swgpu
from conftest import ROOT, data


@pytest.fixture(scope="module")
def gpu():
    if not swgpu.has_cuda:
        pytest.skip("built without CUDA")
    try:
        swgpu.Database.from_sequences(["MKV"]).scores("MKV", backend="cuda")
    except swgpu.NoDeviceError as e:
        pytest.skip("no GPU: %s" % e)


def test_search_and_scores_on_the_gpu(gpu):
    pytest.importorskip("numpy")
    db = swgpu.Database(str(pathlib.Path(ROOT) / "examples" / "db.fasta"))
    q = swgpu.Queries.read(str(pathlib.Path(ROOT) / "examples" / "queries.fasta"))
    cpu = db.search(q, backend="cpu", top=20)
    for kernel in (None, "simt", "intra", "vector", "scan"):
        res = db.search(q, backend="cuda", kernel=kernel, top=20)
        assert res.backend == "cuda"
        assert res.format("6 std score cigar") == cpu.format("6 std score cigar"), kernel
    assert (db.scores(q, backend="cuda") == db.scores(q, backend="cpu")).all()
    capped = db.scores(q, backend="cuda", max_gpu_memory="256M", gpus=1)
    assert (capped == db.scores(q, backend="cpu")).all()
    with pytest.raises(swgpu.BudgetError, match="GPU memory budget of 1048576 bytes is below"):
        db.scores(q, backend="cuda", max_gpu_memory="1M")


def test_long_alignment_on_the_gpu(gpu):
    a = swgpu.Queries.read(data("long_a.fa"))[0].sequence
    b = swgpu.Queries.read(data("long_brc.fa"))[0].sequence
    g = swgpu.align_long(a, b, strand="both", backend="cuda")
    c = swgpu.align_long(a, b, strand="both", backend="cpu")
    assert g.stats.backend == "cuda" and c.stats.backend == "cpu"
    assert (g.score, g.cigar, g.strand, g.sstart, g.send, g.other_strand_score) == \
        (c.score, c.cigar, c.strand, c.sstart, c.send, c.other_strand_score)
