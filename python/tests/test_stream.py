"""A makedb database searched streamed from disk (Database(path,
max_memory=...)): a forced multi-part search (SWGPU_STREAM_PARTS, as for
``swgpu search``: N parts whatever the budget, which is set high so that
the test process's own size does not matter) and one that max_memory
itself cuts into parts give the
unstreamed search's hits, alignments and output byte for byte; what a
streamed database does not give is refused with a clear error."""

import os
import pathlib
import random
import resource

import pytest

import swgpu
from conftest import data

DB_FA = data("cli_db.fasta")
Q = pathlib.Path(data("cli_q.fasta"))
COLS = "6 std score qlen slen cigar qseq sseq"


@pytest.fixture
def swdb(tmp_path):
    path = tmp_path / "db.swdb"
    swgpu.makedb(DB_FA, path)
    return path


def _rows(results):
    return [(h.query_index, h.target_index, h.score, h.bitscore, h.evalue, h.alignment.cigar)
            for h in results.hits()]


@pytest.mark.parametrize("parts", [2, 3, 7])
@pytest.mark.parametrize("options", [{}, {"top": 3, "no_self": True}, {"no_align": True},
                                     {"rank": "score", "evalue": 1e3}])
def test_forced_parts_equal_whole(swdb, monkeypatch, parts, options):
    whole = swgpu.Database(swdb).search(swgpu.Queries.read(DB_FA), **options)
    monkeypatch.setenv("SWGPU_STREAM_PARTS", str(parts))
    db = swgpu.Database(swdb, max_memory="64G")
    assert db.streamed and db.stream_parts(**options) == parts
    got = db.search(swgpu.Queries.read(DB_FA), **options)
    assert got.stream_parts == parts
    assert whole.stream_parts == 1
    assert got.format(COLS, "db") == whole.format(COLS, "db")
    if not options.get("no_align"):
        assert _rows(got) == _rows(whole)
    assert [h.target_id for h in got.hits()] == [h.target_id for h in whole.hits()]


def test_max_memory_cuts_into_parts(tmp_path):
    """A budget a little above what the process holds: the database (about
    3 MB of residues) does not fit whole and is cut into parts by the
    budget alone."""
    rng = random.Random(5)
    seqs = ["".join(rng.choice("ACDEFGHIKLMNPQRSTVWY") for _ in range(rng.randint(50, 600)))
            for _ in range(9000)]
    path = tmp_path / "big.swdb"
    swgpu.Database.from_sequences(seqs).write(path)
    queries = [seqs[10], seqs[4000][:200]]
    whole = swgpu.Database(path).search(queries, top=5)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    db = swgpu.Database(path, max_memory=rss + 4 * 1024 * 1024)
    assert db.streamed
    assert len(db) == 9000 and db.residues == whole.cells // sum(len(q) for q in queries)
    assert db.max_length == max(len(s) for s in seqs)
    got = db.search(queries, top=5)
    assert got.stream_parts > 1
    assert got.format(COLS, "big") == whole.format(COLS, "big")


def test_fits_or_not_makedb_reads_whole(swdb, caplog):
    assert not swgpu.Database(swdb, max_memory="4G").streamed
    assert swgpu.Database(swdb, max_memory="4G").search(Q).stream_parts == 1
    with caplog.at_level("WARNING", logger="swgpu"):
        db = swgpu.Database(DB_FA, max_memory=100)
    assert not db.streamed and len(db) > 0
    assert any("is read whole into memory although the memory budget is 100 bytes" in r.getMessage()
               and "makedb" in r.getMessage() for r in caplog.records), caplog.records


def test_streamed_refusals(swdb, monkeypatch):
    monkeypatch.setenv("SWGPU_STREAM_PARTS", "2")
    db = swgpu.Database(swdb, max_memory=64 << 30)
    for what, call in [("db[i]", lambda: db[0]), ("iteration", lambda: list(db)),
                       ("scores()", lambda: db.scores(Q)),
                       ("write()", lambda: db.write(os.devnull)),
                       ("iterated", lambda: db.search(Q, iterations=2))]:
        with pytest.raises(swgpu.InvalidArgumentError, match="streamed from disk"):
            call()
    with pytest.raises(swgpu.InvalidArgumentError, match="not yet available with a streamed"):
        db.search(Q, comp_based_stats=2)
    with pytest.raises(swgpu.InvalidArgumentError, match="'lots' is not a size"):
        swgpu.Database(swdb, max_memory="lots")
    monkeypatch.setenv("SWGPU_STREAM_PARTS", "0")
    with pytest.raises(swgpu.InvalidArgumentError, match="SWGPU_STREAM_PARTS=0"):
        swgpu.Database(swdb, max_memory="64G")
