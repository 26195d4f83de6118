"""The compute calls release the GIL: searches, scans and alignments run in
several Python threads at once and give the results they give alone; each
thread's errors carry its own message; log messages from concurrent calls
all arrive."""

import logging
from concurrent.futures import ThreadPoolExecutor

import swgpu
from conftest import data

Q = data("cli_q.fasta")
DB = data("cli_db.fasta")
OPTIONS = [{}, {"top": 1}, {"matrix": "PAM250", "gap_open": 14, "gap_extend": 2},
           {"no_align": True}, {"backend": "ref", "threads": 1}, {"evalue": 0.01}]


def test_concurrent_searches_equal_sequential():
    db = swgpu.Database(DB)
    q = swgpu.Queries.read(Q)
    want = [db.search(q, **o).format("6 std score cigar") for o in OPTIONS]
    with ThreadPoolExecutor(max_workers=4) as ex:
        jobs = [ex.submit(lambda o: db.search(q, **o).format("6 std score cigar"), o)
                for o in OPTIONS * 4]
        got = [j.result() for j in jobs]
    assert got == want * 4


def test_concurrent_alignments_and_scans():
    a = swgpu.Queries.read(data("long_a.fa"))[0].sequence
    b = swgpu.Queries.read(data("long_b.fa"))[0].sequence
    db = swgpu.Database(DB)
    q = swgpu.Queries.read(Q)
    long_want = swgpu.align_long(a, b, threads=1)
    scores_want = [list(r) for r in db.scores(q)]
    phases = []

    def long_job(k):
        # a progress callback takes the GIL back from the library's call
        aln = swgpu.align_long(a, b, threads=1, progress=lambda *p: phases.append(p[0]))
        return aln.score, aln.cigar

    def scan_job(k):
        return [list(r) for r in db.scores(q, threads=1)]

    with ThreadPoolExecutor(max_workers=4) as ex:
        longs = [ex.submit(long_job, k) for k in range(4)]
        scans = [ex.submit(scan_job, k) for k in range(8)]
        pairs = [ex.submit(swgpu.align, a[:600], b[:600]) for k in range(8)]
        assert [j.result() for j in longs] == [(long_want.score, long_want.cigar)] * 4
        assert [j.result() for j in scans] == [scores_want] * 8
        assert len({j.result() for j in pairs}) == 1
    assert phases.count("traceback") >= 4


def test_each_thread_gets_its_own_error():
    db = swgpu.Database(DB)
    q = swgpu.Queries.read(Q)

    def fail(k):
        try:
            if k % 3 == 0:
                db.search(q, gap_open=-k - 1)
            elif k % 3 == 1:
                swgpu.Database(data("missing%d.fa" % k))
            else:
                swgpu.align("MKV", "MKV", gap_extend=-k)
        except swgpu.Error as e:
            return str(e)
        return None

    with ThreadPoolExecutor(max_workers=4) as ex:
        got = list(ex.map(fail, range(24)))
    for k, msg in enumerate(got):
        if k % 3 == 0:
            assert msg.startswith("gap open %d is negative" % (-k - 1)), msg
        elif k % 3 == 1:
            assert msg == "file %s: No such file or directory" % data("missing%d.fa" % k)
        else:
            assert msg.startswith("gap extend %d is negative" % -k), msg


def test_log_messages_from_concurrent_calls(caplog):
    db = swgpu.Database(DB)
    q = swgpu.Queries.read(Q)
    with caplog.at_level(logging.WARNING, logger="swgpu"):
        with ThreadPoolExecutor(max_workers=4) as ex:
            list(ex.map(lambda k: db.search(q, matrix=data("cli_ident.mat"), gap_open=9,
                                            gap_extend=2), range(12)))
    msgs = [r.getMessage() for r in caplog.records if r.name == "swgpu"]
    assert len(msgs) == 12
    assert all("no published Karlin-Altschul parameters for matrix" in m for m in msgs)
