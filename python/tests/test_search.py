"""swgpu.Database and its search(): hits equal to ``swgpu search`` for the
same options (the library's writer through SearchResults.format, and the Hit
objects' columns formatted in Python), known hits, the ways to give queries,
the database's sequences, errors with the library's messages, logging."""

import logging
import os
import pathlib

import pytest

import swgpu
from conftest import ROOT, cli_error, data

Q = data("cli_q.fasta")
DB = data("cli_db.fasta")
DQ = data("cli_dna_q.fasta")
DDB = data("cli_dna_db.fasta")
ALL_COLUMNS = " ".join(swgpu.COLUMNS)

# (name, queries, database, command-line options, the same as keywords)
CASES = [
    ("default", Q, DB, [], {}),
    ("top1", Q, DB, ["-n", "1"], {"top": 1}),
    ("evalue", Q, DB, ["--evalue", "0.01"], {"evalue": 0.01}),
    ("pam250", Q, DB, ["--matrix", "PAM250", "--gap-open", "14", "--gap-extend", "2"],
     {"matrix": "PAM250", "gap_open": 14, "gap_extend": 2}),
    ("matrix-file", Q, DB, ["--matrix", data("cli_ident.mat"), "--gap-open", "9",
                            "--gap-extend", "2", "--evalue", "1e9"],
     {"matrix": data("cli_ident.mat"), "gap_open": 9, "gap_extend": 2, "evalue": 1e9}),
    ("no-align", Q, DB, ["--no-align"], {"no_align": True}),
    ("old-fsc", Q, DB, ["--evalue-model", "old-fsc"], {"evalue_model": "old-fsc"}),
    ("rank-score", Q, DB, ["--rank", "score"], {"rank": "score"}),
    ("rank-evalue", data("rank_q.fa"), data("rank_db.fa"), ["--rank", "evalue", "-n", "4"],
     {"rank": "evalue", "top": 4}),
    ("all-vs-all", DB, DB, [], {}),
    ("no-self", DB, DB, ["--no-self", "-n", "3"], {"no_self": True, "top": 3}),
    ("ref", Q, DB, ["--backend", "ref", "--threads", "1"], {"backend": "ref", "threads": 1}),
    ("cpu", Q, DB, ["--backend", "cpu", "--threads", "2"], {"backend": "cpu", "threads": 2}),
    ("gpu-options", Q, DB, ["--kernel", "simt", "--gpus", "1", "--max-memory", "1G"],
     {"kernel": "simt", "gpus": 1, "max_gpu_memory": "1G"}),
    ("dna", DQ, DDB, [], {}),
    ("dna-scores", DQ, DDB, ["--match", "1", "--mismatch", "-2", "--gap-open", "2",
                             "--gap-extend", "2"],
     {"match": 1, "mismatch": -2, "gap_open": 2, "gap_extend": 2}),
    ("dna-strands", data("strand/queries.fa"), data("strand/db.fa"), ["-n", "28", "-e", "1e300"],
     {"top": 28, "evalue": 1e300}),
    ("dna-plus", data("strand/queries.fa"), data("strand/db.fa"), ["--strand", "plus"],
     {"strand": "plus"}),
    ("dna-minus", data("strand/queries.fa"), data("strand/db.fa"), ["--strand", "minus"],
     {"strand": "minus"}),
    ("cbs1", data("cbs_q.fa"), data("cbs_db.fa"), ["--comp-based-stats", "1", "-n", "500"],
     {"comp_based_stats": 1, "top": 500}),
    ("max-hsps", data("hsps_q.fasta"), data("hsps_db.fasta"), ["--max-hsps", "6", "-e", "100"],
     {"max_hsps": 6, "evalue": 100}),
    ("max-hsps-few", Q, DB, ["--max-hsps", "3", "-n", "4"], {"max_hsps": 3, "top": 4}),
    ("dna-max-hsps", data("hsps_dna_q.fasta"), data("hsps_dna_db.fasta"), ["--max-hsps", "5"],
     {"max_hsps": 5}),
    ("examples", os.path.join(ROOT, "examples", "queries.fasta"),
     os.path.join(ROOT, "examples", "db.fasta"), ["-n", "5"], {"top": 5}),
]
FORMATS = ["6", "7", "pair", "6 " + ALL_COLUMNS, "7 std score qlen slen cigar",
           "6 qcovhsp,qcovs,ppos,salltitles,sallseqid,positive,length",
           "0", "5", "15", "17"]  # BLAST's report, XML, JSON and SAM


@pytest.mark.parametrize("name,q,db,args,kw", CASES, ids=[c[0] for c in CASES])
def test_search_equals_cli(cli, name, q, db, args, kw):
    d = swgpu.Database(db)
    queries = pathlib.Path(q) if name.startswith("d") else swgpu.Queries.read(q)
    res = d.search(queries, **kw)
    assert len(res) == len(swgpu.Queries.read(q))
    for fmt in FORMATS:
        if "--no-align" in args and fmt in ("0", "5", "15", "17"):
            with pytest.raises(swgpu.InvalidArgumentError, match="need the alignments"):
                res.format(fmt)
            continue
        want = cli("search", "-q", q, "-d", db, "--quiet", "--outfmt", fmt, *args).stdout
        assert res.format(fmt) == want, (name, fmt)
        if fmt.startswith("6"):
            # the Hit objects' columns, formatted in Python
            cols = fmt[2:] or "std"
            rows = "".join(h.row(cols) + "\n" for h in res.hits())
            assert rows == want, (name, fmt)


def test_blast_coverage_columns():
    """qcovhsp/qcovs (BLAST's rounding: nearest below 99, truncated from 99
    on) and ppos from the alignment by their definitions: examples' first
    query, top hit (the CLI comparison above checks them against the library)."""
    d = swgpu.Database(os.path.join(ROOT, "examples", "db.fasta"))
    res = d.search(swgpu.Queries.read(os.path.join(ROOT, "examples", "queries.fasta")), top=1)
    h = res[0].hits[0]
    a = h.alignment
    cov = 100.0 * (a.query_end - a.query_begin) / h.qlen
    assert h.qcovhsp == h.qcovs == int(cov + 0.5 if cov < 99 else cov)
    assert h.column("ppos") == "%.2f" % (100.0 * h.positive / h.length)
    assert h.row("salltitles sallseqid") == h.row("stitle sseqid")


def test_rank():
    """BLAST's ranking by default, as blastp 2.12 prints it on the rank fixture
    (tests/cli/expected/blastp_rank.tsv): short1 (E 1.60e-55, score 406)
    before long1 (E 1.89e-53, score 422), equal hits from the last in the
    database, E-values below 1e-180 equal (zlong's larger one first, by its
    score); rank="score" keeps the order by score, the first first."""
    d = swgpu.Database(data("rank_db.fa"))
    q = swgpu.Queries.read(data("rank_q.fa"))
    ids = lambda res, i: [(h.target_id, h.score) for h in res[i].hits]
    res = d.search(q, evalue=1e-3)
    assert ids(res, 0) == [("short1", 406), ("long1", 422), ("dupD", 249), ("dupC", 249),
                           ("dupB", 249), ("dupA", 249)]
    assert ids(res, 1) == [("zlong", 1901), ("zshort", 1891)]
    assert res[1].hits[0].evalue > res[1].hits[1].evalue
    assert ids(d.search(q, evalue=1e-3, top=1, rank="evalue"), 0) == [("short1", 406)]
    res = d.search(q, evalue=1e-3, rank="score")
    assert ids(res, 0) == [("long1", 422), ("short1", 406), ("dupA", 249), ("dupB", 249),
                           ("dupC", 249), ("dupD", 249)]
    assert ids(d.search(q, evalue=1e-3, top=1, rank="score"), 0) == [("long1", 422)]
    with pytest.raises(swgpu.InvalidArgumentError, match="option rank: 'sideways' is not one of"):
        d.search(q, rank="sideways")


def test_max_hsps():
    """max_hsps: a subject's further HSPs follow its first (Hit.hsp 0, 1, ...),
    each with its own E-value; qcovhsp and qcovs as blastp 2.12 prints them
    for this pair (blastp -max_hsps 6 -comp_based_stats 0 -seg no -evalue 1e-5:
    tests/cli/expected/hsps_blastp_6.tsv); top counts subjects."""
    d = swgpu.Database(data("hsps_db.fasta"))
    res = d.search(pathlib.Path(data("hsps_q.fasta")), max_hsps=6, evalue=1e-5)
    got = [(h.qseqid, h.sseqid, h.score, h.hsp, h.qstart, h.qend, h.sstart, h.send, h.qcovhsp,
            h.qcovs) for h in res.hits()]
    assert got == [("q1", "r1", 199, 0, 1, 50, 72, 121, 60, 100),
                   ("q1", "r1", 185, 1, 42, 84, 17, 59, 51, 100),
                   ("q1", "r1", 93, 2, 11, 42, 132, 163, 38, 100),
                   ("q1", "r2", 179, 0, 1, 45, 100, 144, 54, 100),
                   ("q1", "r2", 169, 1, 37, 84, 27, 74, 57, 100),
                   ("q1x", "r1", 199, 0, 1, 50, 72, 121, 44, 74),
                   ("q1x", "r1", 185, 1, 42, 84, 17, 59, 38, 74),
                   ("q1x", "r1", 93, 2, 11, 42, 132, 163, 28, 74),
                   ("q1x", "r2", 179, 0, 1, 45, 100, 144, 39, 81),
                   ("q1x", "r2", 177, 1, 37, 92, 27, 83, 49, 81)]
    assert ["%.3g" % h.evalue for h in res[1]] == ["3.56e-25", "4.36e-23", "1.06e-09",
                                                   "2.17e-22", "4.31e-22"]
    one = d.search(pathlib.Path(data("hsps_q.fasta")), max_hsps=6, evalue=1e-5, top=1)
    assert [(h.sseqid, h.hsp) for h in one[0]] == [("r1", 0), ("r1", 1), ("r1", 2)]
    assert [h.row() for h in d.search(pathlib.Path(data("hsps_q.fasta")), max_hsps=1).hits()] \
        == [h.row() for h in d.search(pathlib.Path(data("hsps_q.fasta"))).hits()]


@pytest.mark.parametrize("value,error", [
    (0, "max_hsps 0: must be >= 1 (alignments per query, subject and strand)"),
    (-2, "max_hsps -2: must be >= 1 (alignments per query, subject and strand)"),
    ("3", "option max_hsps: expected an int, got str"),
    (1.5, "option max_hsps: expected an int, got float")])
def test_max_hsps_refused(value, error):
    d = swgpu.Database(data("hsps_db.fasta"))
    with pytest.raises((swgpu.InvalidArgumentError, TypeError)) as e:
        d.search("MGFRDLNLRERQVLG", max_hsps=value)
    assert str(e.value) == error
    with pytest.raises(swgpu.InvalidArgumentError, match="not with no_align"):
        d.search("MGFRDLNLRERQVLG", max_hsps=2, no_align=True)
    with pytest.raises(swgpu.InvalidArgumentError, match="an iterated search reports one"):
        d.search("MGFRDLNLRERQVLG", max_hsps=2, iterations=2)


def test_minus_strand_hit():
    """q06 is the reverse complement of s08's bases 83-572: found on the minus
    strand, BLAST's coordinates, the interval on s08 as stored."""
    d = swgpu.Database(data("strand/db.fa"))
    res = d.search(swgpu.Queries.read(data("strand/queries.fa")), top=1)
    h = res[5].hits[0]
    assert (h.query_id, h.target_id, h.score, h.strand, h.sstrand) == \
        ("q06", "s08", 980, "minus", "minus")
    assert (h.qstart, h.qend, h.sstart, h.send) == (1, 490, 572, 83)
    assert (h.alignment.target_begin, h.alignment.target_end) == (82, 572)
    assert h.alignment.cigar == "490M"
    # sseq reads the reverse complement: the query itself
    assert h.sseq == h.qseq
    plus = d.search(swgpu.Queries.read(data("strand/queries.fa")), top=1, strand="plus")
    assert plus[5].hits[0].score < 100 and plus[5].hits[0].strand == "plus"
    prot = swgpu.Database(DB).search(swgpu.Queries.read(Q), top=1)
    assert prot[0].hits[0].strand is None and prot[0].hits[0].sstrand == "N/A"


def test_names_cannot_forge_output():
    """Control characters in names and descriptions are escaped in every
    format, by the library's writer and by Hit.row() alike (issue 28)."""
    seq = "MKTAYIAKQRQISFVKSHFSRQ"
    d = swgpu.Database.from_sequences([("t\x01", seq)])
    res = d.search([("q\x1b[31m", seq)], top=1)
    want = "q\\x1b[31m\tt\\x01\tt\\x01\t109\n"
    assert res.format("6 qseqid sseqid stitle score") == want
    assert "".join(h.row("qseqid sseqid stitle score") + "\n" for h in res.hits()) == want
    assert res.hits().__next__().query_id == "q\x1b[31m"  # the attribute stays as given


def test_makedb_file_as_database_and_queries(cli, tmp_path):
    path = str(tmp_path / "cli.swdb")
    db = swgpu.makedb(DB, path)
    assert len(db) == 6
    opened = swgpu.Database(path)
    assert opened.path == path and opened.info["records"] == 6
    assert list(opened) == list(swgpu.Database(DB))
    for fmt in ("6", "7"):
        want = cli("search", "-q", Q, "-d", path, "--quiet", "--outfmt", fmt).stdout
        assert opened.search(swgpu.Queries.read(Q)).format(fmt) == want
        want = cli("search", "-q", path, "-d", path, "--quiet", "--outfmt", fmt).stdout
        assert opened.search(pathlib.Path(path)).format(fmt) == want


def test_makedb_threads_same_file(cli, tmp_path):
    # the file is the same whatever the threads, and the command line's
    want = tmp_path / "cli.swdb"
    cli("makedb", "--quiet", "-t", "1", DB, str(want))
    for threads in (0, 1, 2, 3, 7):
        path = tmp_path / ("t%d.swdb" % threads)
        db = swgpu.makedb(DB, path, threads=threads)
        assert path.read_bytes() == want.read_bytes()
        assert list(db) == list(swgpu.Database(DB, threads=threads)) == list(swgpu.Database(want))
    with pytest.raises(ValueError, match="threads: -1 is negative"):
        swgpu.makedb(DB, tmp_path / "x.swdb", threads=-1)
    with pytest.raises(TypeError, match="threads: an int"):
        swgpu.Database(DB, threads=1.5)
    assert not (tmp_path / "x.swdb").exists()


def test_known_hits():
    res = swgpu.Database(DB).search(swgpu.Queries.read(Q))
    q1, q2, q3 = res
    assert (q2.index, q2.id, q2.description, q2.length) == (1, "q2",
                                                            "serum albumin signal peptide", 18)
    # t3 and t5 tie (score 91, E-value): listed from the last, as blastp does
    assert [(h.sseqid, h.score) for h in q2] == [("t5", 91), ("t3", 91), ("t2", 19)]
    h = q2[1]
    assert (h.qseqid, h.sseqid, h.pident, h.length, h.mismatch, h.gapopen) == \
        ("q2", "t3", 100.0, 18, 0, 0)
    assert (h.qstart, h.qend, h.sstart, h.send, h.cigar, h.qlen, h.nident, h.gaps) == \
        (1, 18, 1, 18, "18M", 18, 18, 0)
    assert (h.qseq, h.sseq, h.positive, h.btop) == ("MKWVTFISLLFLFSSAYS",) * 2 + (18, "18")
    assert h.target_index == 2 and h.query_index == 1
    assert (h.alignment.query_begin, h.alignment.target_end) == (0, 18)
    # BLAST+'s default E-value (Spouge), and with BLAST+'s OLD_FSC=1 model
    # (tests/cli/expected/search_6.out and search_6_old_fsc.out)
    assert h.evalue == pytest.approx(4.07e-11, rel=0.01)
    assert (swgpu.format_evalue(h.evalue), swgpu.format_bitscore(h.bitscore)) == \
        ("4.07e-11", "39.7")
    old = swgpu.Database(DB).search(swgpu.Queries.read(Q), evalue_model="old-fsc")[1][1]
    assert (old.sseqid, swgpu.format_evalue(old.evalue)) == ("t3", "1.34e-08")
    assert h.stitle.startswith("t3 ")
    # the gapped hit of q1: 13M1I7M on t2
    g = [h for h in q1 if h.sseqid == "t2"][0]
    assert (g.cigar, g.gapopen, g.gaps, g.qseq, g.sseq) == \
        ("13M1I7M", 1, 1, "IIQAYVVTAAPVGSRYIARNY", "LVTAYVIGSVPFG-LVIARTF")
    # published BLOSUM62 11/1 parameters
    k = q1.karlin
    assert (k.lambda_, k.K, k.H, k.estimated) == (0.267, 0.041, 0.14, False)
    # q3's one hit (t6) has E-value 10.6 under Spouge, 7.6 with old-fsc (-e 10)
    assert len(q3) == 0
    old3 = swgpu.Database(DB).search(swgpu.Queries.read(Q), evalue_model="old-fsc")[2]
    assert len(old3) == 1 and old3[0].sseqid == "t6"
    assert res.backend == ("cuda" if swgpu.has_cuda and res.backend == "cuda" else "cpu")
    assert res.cells == swgpu.Queries.read(Q).residues * swgpu.Database(DB).residues
    no = swgpu.Database(DB).search(swgpu.Queries.read(Q), no_align=True)
    h = no[1][0]
    assert (h.score, h.alignment, h.cigar, h.qstart, h.qseq, h.column("qstart")) == \
        (91, None, None, None, None, "N/A")


def test_ways_to_give_queries():
    db = swgpu.Database(DB)
    want = db.search(swgpu.Queries.read(Q)).format("6 qseqid sseqid score cigar")
    seqs = list(swgpu.Queries.read(Q))
    assert db.search(pathlib.Path(Q)).format("6 qseqid sseqid score cigar") == want
    assert db.search([(s.id, s.description, s.sequence) for s in seqs]).format(
        "6 qseqid sseqid score cigar") == want
    assert db.search([(s.id, s.sequence) for s in seqs]).format(
        "6 qseqid sseqid score cigar") == want
    assert db.search(swgpu.Queries(seqs)).format("6 qseqid sseqid score cigar") == want
    # plain strings: ids query_1, query_2, ...; a single str is one query
    plain = db.search([s.sequence for s in seqs])
    assert [q.id for q in plain] == ["query_1", "query_2", "query_3"]
    assert [[h.score for h in q] for q in plain] == \
        [[h.score for h in q] for q in db.search(pathlib.Path(Q))]
    one = db.search(seqs[1].sequence)
    assert len(one) == 1 and [h.score for h in one[0]] == [91, 91, 19]
    assert len(db.search([])) == 0
    # a short query that looks like DNA is typed as the database
    assert db.search("ACGTACGT")[0].length == 8
    q = swgpu.Queries(["ACGTACGTAC", "GGCATT"])
    assert (q.type, len(q), q[0].id, q[1].sequence, q.residues) == \
        ("dna", 2, "query_1", "GGCATT", 16)
    assert swgpu.Queries(["ACGTACGTAC"], type="protein").type == "protein"


def parse_fasta(path):
    recs = []
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith(">"):
                sid, _, desc = line[1:].partition(" ")
                recs.append([sid, desc.strip(), ""])
            elif line:
                recs[-1][2] += line.strip().upper()
    return [tuple(r) for r in recs]


def test_database_sequences(tmp_path):
    db = swgpu.Database(DB)
    want = parse_fasta(DB)
    assert len(db) == len(want) == 6
    assert [tuple(s) for s in db] == want
    assert tuple(db[-1]) == want[-1] and [tuple(s) for s in db[1:3]] == want[1:3]
    assert (db.type, db.residues, db.max_length) == \
        ("protein", sum(len(w[2]) for w in want), max(len(w[2]) for w in want))
    assert db.info == {"records": 6, "empty": 0, "unknown": 0,
                       "residues": db.residues, "max_length": db.max_length}
    with pytest.raises(IndexError):
        db[6]
    mem = swgpu.Database.from_sequences([("a", "first", "MKWVTF"), "ACDEFG"])
    assert (mem.path, mem.info, [tuple(s) for s in mem]) == \
        (None, None, [("a", "first", "MKWVTF"), ("seq_2", "", "ACDEFG")])
    out = tmp_path / "mem.swdb"
    mem.write(out)
    assert [tuple(s) for s in swgpu.Database(out)] == [tuple(s) for s in mem]
    with pytest.raises(swgpu.InvalidArgumentError, match="was read from; refusing to replace it"):
        swgpu.Database(out).write(out)
    dna = swgpu.Database(DDB)
    assert dna.type == "dna" and repr(dna).startswith("Database(4 dna sequences")


def test_errors_carry_the_library_message(cli):
    db = swgpu.Database(DB)
    q = swgpu.Queries.read(Q)
    with pytest.raises(swgpu.InvalidArgumentError) as e:
        db.search(q, top=0)
    assert str(e.value) == cli_error(cli("search", "-q", Q, "-d", DB, "-n", "0", ok=False))
    with pytest.raises(swgpu.InvalidArgumentError) as e:
        db.search(q).format("6 qseqid bogus")
    assert str(e.value) == cli_error(cli("search", "-q", Q, "-d", DB, "--outfmt",
                                         "6 qseqid bogus", ok=False))
    with pytest.raises(swgpu.InvalidArgumentError, match="unknown column 'bogus'"):
        db.search(q)[0][0].row("qseqid bogus")
    with pytest.raises(swgpu.FormatError) as e:
        swgpu.Queries.read(data("notfasta.txt"))
    assert str(e.value) == cli_error(cli("search", "-q", data("notfasta.txt"), "-d", DB,
                                         ok=False))
    with pytest.raises(swgpu.FileError) as e:
        swgpu.Database(data("missing.fa"))
    assert str(e.value) == cli_error(cli("search", "-q", Q, "-d", data("missing.fa"), ok=False))
    assert e.value.status == -2 and isinstance(e.value, OSError)
    with pytest.raises(swgpu.AlphabetError, match="the queries are dna sequences but the "
                                                  "database holds protein sequences"):
        db.search(pathlib.Path(DQ))
    with pytest.raises(swgpu.MatrixError) as e:
        db.search(q, matrix="BLOSUM1")
    assert str(e.value) == cli_error(cli("search", "-q", Q, "-d", DB, "--matrix", "BLOSUM1",
                                         ok=False))
    with pytest.raises(swgpu.InvalidArgumentError, match="matrix applies to protein only"):
        swgpu.Database(DDB).search(pathlib.Path(DQ), matrix="BLOSUM62")
    with pytest.raises(TypeError, match=r"search\(\) got an unexpected keyword argument 'topp'"):
        db.search(q, topp=3)
    with pytest.raises(TypeError, match="option top: expected an int"):
        db.search(q, top="3")
    with pytest.raises(swgpu.InvalidArgumentError, match="'gpu' is not one of"):
        db.search(q, backend="gpu")
    with pytest.raises(swgpu.InvalidArgumentError, match="'lots' is not a size"):
        db.search(q, max_gpu_memory="lots")
    with pytest.raises(TypeError, match="Queries.read"):
        swgpu.Queries(Q)
    with pytest.raises(swgpu.FormatError, match="not a residue letter"):
        db.search(Q)  # a file name as a str is not a sequence
    with pytest.raises(swgpu.InvalidArgumentError, match="type 'rna'"):
        swgpu.Database(DB, type="rna")
    if not swgpu.has_cuda:
        with pytest.raises(swgpu.NoDeviceError) as e:
            db.search(q, backend="cuda")
        assert str(e.value) == cli_error(cli("search", "-q", Q, "-d", DB, "--backend", "cuda",
                                             ok=False))
    assert issubclass(swgpu.NoDeviceError, swgpu.Error)


def test_warnings_go_to_the_logger(cli, caplog):
    db = swgpu.Database(DB)
    with caplog.at_level(logging.WARNING, logger="swgpu"):
        db.search(swgpu.Queries.read(Q), matrix=data("cli_ident.mat"), gap_open=9, gap_extend=2)
    msgs = [r.getMessage() for r in caplog.records if r.name == "swgpu"]
    p = cli("search", "-q", Q, "-d", DB, "--matrix", data("cli_ident.mat"), "--gap-open", "9",
            "--gap-extend", "2")
    cli_warnings = [line.split("warning: ", 1)[1] for line in p.stderr.splitlines()
                    if "warning: " in line]
    assert msgs == cli_warnings and "no published Karlin-Altschul parameters" in msgs[0]
    caplog.clear()
    with caplog.at_level(logging.ERROR, logger="swgpu"):
        db.search(swgpu.Queries.read(Q), matrix=data("cli_ident.mat"), gap_open=9, gap_extend=2)
    assert [r for r in caplog.records if r.name == "swgpu"] == []
    caplog.clear()
    with caplog.at_level(logging.DEBUG, logger="swgpu"):
        db.search(swgpu.Queries.read(Q))
    assert any("best score 379" in r.getMessage() for r in caplog.records)
    caplog.clear()
    cores = os.cpu_count()
    with caplog.at_level(logging.WARNING, logger="swgpu"):
        res = db.search(swgpu.Queries.read(Q), threads=cores + 5)
    assert [r.getMessage() for r in caplog.records] == \
        ["threads %d is more than the %d cores: using %d" % (cores + 5, cores, cores)]
    assert res.format() == db.search(swgpu.Queries.read(Q)).format()


def test_results_write(tmp_path):
    res = swgpu.Database(DB).search(swgpu.Queries.read(Q), backend="cpu")
    res.write(tmp_path / "hits.tsv")
    assert (tmp_path / "hits.tsv").read_text() == res.format("6")
    res.write(str(tmp_path / "hits7.tsv"), outfmt="7", dbname="mydb")
    assert "# Database: mydb\n" in (tmp_path / "hits7.tsv").read_text()
    assert "# Database: %s\n" % DB in res.format("7")
    assert "# Database: unnamed\n" in swgpu.Database.from_sequences(["MKV"]).search(
        "MKV").format("7")
    # 9 hits: q3's weak hit has E-value 10.6 under Spouge (golden search_6.out)
    assert repr(res) == "SearchResults(3 queries, 9 hits, backend cpu)"


@pytest.mark.parametrize("prefix", ["prot_v4", "prot_v5s", "prot_mv"])
def test_blast_database_equals_its_fasta(prefix):
    """A makeblastdb database (tests/data/blastdb, versions 4 and 5, with and
    without -parse_seqids, several volumes) opens by its prefix and searches
    exactly as the FASTA file it was built from (but for saccver: the
    accession, as blastp prints it, of a -parse_seqids database)."""
    fasta = swgpu.Database(data("blastdb/prot.fa"))
    blast = swgpu.Database(data("blastdb/" + prefix))
    assert len(blast) == len(fasta)
    assert [tuple(s) for s in blast] == [tuple(s) for s in fasta]
    queries = swgpu.Queries([s.sequence for s in fasta][:3])
    cols = "6 qseqid sseqid pident length mismatch gapopen qstart qend sstart send evalue bitscore"
    rb, rf = blast.search(queries, top=5), fasta.search(queries, top=5)
    assert rb.format(cols) == rf.format(cols)
    s = prefix.endswith("s")
    acc = [h.saccver for h in rb.hits()]
    assert acc == [h.sseqid.split("|")[1] if s and "|" in h.sseqid else h.sseqid
                   for h in rb.hits()]
    assert acc[0] == ("W0FSK4" if s else "tr|W0FSK4|W0FSK4_9FLAV")


@pytest.mark.parametrize("backend", ["ref", "cpu"])
def test_search_progress(backend):
    db = swgpu.Database(DB)
    queries = swgpu.Queries.read(Q)
    seen = []
    res = db.search(queries, backend=backend, progress=lambda *a: seen.append(a))
    assert res.format("6") == db.search(queries, backend=backend).format("6")
    cells = sum(len(q.sequence) for q in queries) * sum(len(s.sequence) for s in db)
    assert seen and seen[-1][:4] == (3, 3, cells, cells)
    assert [s[0] for s in seen] == sorted({s[0] for s in seen})
    assert all(s[4] >= 0 for s in seen)


def test_search_progress_exception():
    def progress(done, total, cells_done, cells_total, seconds):
        raise KeyError("stop %d" % done)

    with pytest.raises(KeyError, match=r"stop [123]"):
        swgpu.Database(DB).search(swgpu.Queries.read(Q), progress=progress)
    with pytest.raises(TypeError, match="progress"):
        swgpu.Database(DB).search("MKV", progress=3)


def test_blastdb_environment(cli, tmp_path, monkeypatch):
    """Database(NAME) looks a name that is nothing here up along $BLASTDB, as
    swgpu search -d does (issue 30); format 10 and comma-separated columns."""
    import shutil
    for d in ("wd", "b1", "b2"):
        (tmp_path / d).mkdir()
    for f in pathlib.Path(data("blastdb")).glob("prot_v4.p*"):
        shutil.copy(f, tmp_path / "b2")
    monkeypatch.chdir(tmp_path / "wd")
    monkeypatch.setenv("BLASTDB", "%s:%s" % (tmp_path / "b1", tmp_path / "b2"))
    db = swgpu.Database("prot_v4")
    assert db.path == "prot_v4" and len(db) == 12
    assert list(db) == list(swgpu.Database(data("blastdb/prot_v4")))
    with pytest.raises(swgpu.FileError) as e:
        swgpu.Database("nope")
    assert str(e.value) == ("file nope: No such file or directory, here or in any directory "
                            "of $BLASTDB (%s:%s)" % (tmp_path / "b1", tmp_path / "b2"))
    res = db.search(swgpu.Queries.read(data("blastdb/prot.fa")), top=3)
    assert res.format("10 qseqid,sseqid evalue") == res.format("6 qseqid sseqid evalue").replace(
        "\t", ",")
    assert res.format("10 qseqid,sseqid evalue") == cli(
        "search", "-q", data("blastdb/prot.fa"), "-d", "prot_v4", "-n", "3", "--quiet",
        "-outfmt", "10 qseqid,sseqid evalue").stdout
    hit = next(res.hits())
    assert hit.row("qseqid,sseqid, evalue") == hit.row("qseqid sseqid evalue")


def test_comp_based_stats():
    """comp_based_stats=1, 2, 3 give blastp -comp_based_stats 1, 2, 3's
    numbers for a pair (tests/cli/expected/blastp_cbs[123].tsv), and 0 the
    matrix's exact score; other values are refused with the library's
    message."""
    d = swgpu.Database(data("cbs_db.fa"))
    q = swgpu.Queries.read(data("cbs_q.fa"))
    for mode, score, bits, evalue in ((1, 382, "151", "5.68e-45"), (2, 417, "165", "3.91e-50"),
                                      (3, 417, "165", "3.91e-50"), (0, 425, "168", "2.93e-51")):
        res = d.search(q, comp_based_stats=mode, top=500)
        (h,) = [h for h in res[1].hits if h.target_id == "tr|H8ILG6|H8ILG6_MYCIA"]
        assert h.row("score bitscore evalue") == "%d\t%s\t%s" % (score, bits, evalue)
    with pytest.raises(swgpu.InvalidArgumentError, match="must be 0, 1, 2 or 3"):
        d.search(q, comp_based_stats=7)
