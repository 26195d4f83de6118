"""Hit's subject id and taxonomy columns from BLAST databases, as blastp
2.12 prints them: equal to ``swgpu search``'s (SearchResults.format and
Hit.row), to blastp's own rows (tests/cli/expected/blastp_*.tsv), with NCBI's
taxdb found in $BLASTDB or the current directory, or not at all."""

import os
import shutil

import pytest

import swgpu
from conftest import ROOT, data

B = data("blastdb")
TAXDB = data("taxdb")
Q = os.path.join(B, "ids_q.fa")
EXPECTED = os.path.join(ROOT, "tests", "cli", "expected")
ID = "qseqid sseqid sacc saccver sallseqid stitle salltitles score"
TAX = ("qseqid sseqid sacc saccver sallseqid staxid ssciname scomname sblastname sskingdom "
       "staxids sscinames scomnames sblastnames sskingdoms stitle score")


def rows(res, cols):
    return "".join(h.row(cols) + "\n" for h in res.hits())


def blastp_rows(name):
    with open(os.path.join(EXPECTED, "blastp_%s.tsv" % name)) as f:
        return f.read().splitlines()


@pytest.mark.parametrize("where", ["none", "blastdb", "cwd"])
def test_taxonomy_equals_cli_and_blastp(cli, monkeypatch, tmp_path, where):
    monkeypatch.delenv("BLASTDB", raising=False)
    monkeypatch.chdir(tmp_path)
    if where == "blastdb":
        monkeypatch.setenv("BLASTDB", "%s:%s" % (tmp_path / "nowhere", TAXDB))
    elif where == "cwd":
        for f in ("taxdb.bti", "taxdb.btd"):
            shutil.copy(os.path.join(TAXDB, f), tmp_path)
    db = os.path.join(B, "tax_v5s")
    res = swgpu.Database(db).search(swgpu.Queries.read(Q), top=500, evalue=1000)
    if where == "cwd":  # the tool runs in the repository: give it the same taxdb
        monkeypatch.setenv("BLASTDB", str(tmp_path))
    want = cli("search", "-q", Q, "-d", db, "--quiet", "-n", "500", "-e", "1000", "--outfmt",
               "6 " + TAX).stdout
    assert res.format("6 " + TAX) == want
    assert rows(res, TAX) == want
    got = set(want.splitlines())
    expected = blastp_rows("tax_v5s_none" if where == "none" else "tax_v5s")
    assert expected and all(r in got for r in expected)


def test_taxonomy_attributes(monkeypatch):
    monkeypatch.setenv("BLASTDB", TAXDB)
    res = swgpu.Database(os.path.join(B, "tax_v5s")).search(swgpu.Queries.read(Q), top=500)
    hits = {h.target_id: h for h in res[0].hits}
    h = hits["ref|XP_000003.1|"]
    assert (h.sseqid, h.sacc, h.saccver) == ("ref|XP_000003.1|", "XP_000003", "XP_000003.1")
    assert h.sallseqid == "ref|XP_000003.1|;emb|CAB00004.1|;gb|AAA00005.1|;gb|AAA00006.1|"
    assert (h.stitle, h.salltitles) == ("t1", "t1<>t2<>t3<>t4")
    assert h.staxid == 2157 and h.staxids == (562, 2157, 9606, 10090)
    assert (h.ssciname, h.scomname, h.sblastname, h.sskingdom) == \
        ("Archaea", "Archaea", "archaea", "Archaea")
    assert h.sscinames == ("Escherichia coli", "Archaea", "Homo sapiens", "Mus musculus")
    assert h.sblastnames == ("archaea", "enterobacteria", "primates", "rodents")
    assert h.sskingdoms == ("Archaea", "Bacteria", "Eukaryota")
    # a defline without a taxid, one taxdb lacks
    h = hits["ref|XP_000007.1|"]
    assert h.staxid == 7227 and h.staxids == (0, 7227, 9606)
    assert h.ssciname is None and h.sscinames == (None, None, "Homo sapiens")
    assert h.row("staxid ssciname sscinames sskingdoms") == \
        "7227\tN/A\tN/A;N/A;Homo sapiens\tEukaryota"
    h = hits["tr|A0A0B4J2F0|A0A0B4J2F0_HUMAN"]
    assert h.staxid is None and h.staxids == (0,)
    assert h.row("staxid staxids sscinames sblastnames") == "N/A\t0\tN/A\tN/A"


def test_fasta_database_has_no_taxonomy():
    res = swgpu.Database(Q).search(swgpu.Queries.read(Q), top=5)
    h = res[0].hits[0]
    assert h.staxid is None and h.staxids == () and h.sscinames == () and h.sskingdoms == ()
    assert h.sacc == h.sseqid == h.target_id
    assert h.row("staxid staxids ssciname sscinames sblastnames") == "N/A\tN/A\tN/A\tN/A\tN/A"


@pytest.mark.parametrize("name,db,query", [
    ("ids_v4s", "ids_v4s", Q), ("seqids_v5s", "seqids_v5s", Q),
    ("multidef_v4s", "multidef_v4s", Q), ("prot_v4", "prot_v4", os.path.join(B, "prot.fa"))])
def test_ids_equal_blastp(name, db, query):
    """-parse_seqids ids (every Seq-id type, deflines of several ids, several
    deflines) and raw titles without -parse_seqids: blastp's rows."""
    res = swgpu.Database(os.path.join(B, db)).search(swgpu.Queries.read(query), top=500,
                                                     evalue=1000)
    got = set(rows(res, ID).splitlines())
    expected = blastp_rows(name)
    assert expected and [r for r in expected if r not in got] == []
