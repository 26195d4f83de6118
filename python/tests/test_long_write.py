"""LongAlignment.format() and write(): byte for byte what ``swgpu align``
writes (summary, SAM, pairwise text, the --plot SVG) on the same inputs, both
strands, protein, score-only and unaligned pairs; write() to a path and to a
file object, and the outputs it refuses (an input, the matrix file, a
directory) without writing."""

import os

import pytest

import swgpu
from conftest import ROOT, data

CASES = [
    (["long_a.fa", "long_b.fa"], {}),
    (["--strand", "minus", "long_a.fa", "long_brc.fa"], {"strand": "minus"}),
    (["--strand", "both", "long_a.fa", "long_brc.fa"], {"strand": "both"}),
    (["--strand", "both", "long_a.fa", "long_b.fa"], {"strand": "both"}),
    (["--match", "1", "--mismatch", "-2", "--gap-open", "3", "long_a.fa", "long_b.fa"],
     {"match": 1, "mismatch": -2, "gap_open": 3}),
    (["long_pa.fa", "long_pb.fa"], {}),
    (["--matrix", "PAM70", "long_pa.fa", "long_pb.fa"], {"matrix": "PAM70"}),
    (["--score-only", "long_a.fa", "long_b.fa"], {"score_only": True}),
    (["../../examples/queries.fasta", "../../examples/db.fasta"], {}),
    (["--strand", "both", "cli_dna_q.fasta", "cli_dna_db.fasta"], {"strand": "both"}),
]


def first(path):
    return swgpu.Queries.read(path)[0]


def inputs(args):
    """The paths of a case's two files and its command-line words."""
    words = [data(a) if a.endswith((".fa", ".fasta")) else a for a in args]
    return words[-2], words[-1], words


@pytest.mark.parametrize("fmt", ["summary", "sam", "pair", "svg"])
@pytest.mark.parametrize("args,kw", CASES)
def test_format_equals_cli(cli, tmp_path, fmt, args, kw):
    pa, pb, words = inputs(args)
    if fmt == "svg":
        plot = tmp_path / "p.svg"
        cmd = ["align", "--quiet", "--plot", str(plot)] + words
        cli(*cmd)
        want = plot.read_text(encoding="utf-8", errors="surrogateescape")
    else:
        cmd = ["align", "--quiet", "--outfmt", fmt] + words
        want = cli(*cmd).stdout
    a, b = first(pa), first(pb)
    got = swgpu.align_long(a.sequence, b.sequence, **kw)
    text = got.format(fmt, query_id=a.id, target_id=b.id, command_line=["swgpu"] + cmd)
    assert text == want


def test_sam_without_command_line_and_defaults():
    aln = swgpu.align_long("CCACGTTAGCATTGACGGAT", "GGGACGTTAGCTTGACGGATCC")
    assert aln.format("sam") == (
        "@HD\tVN:1.6\tSO:unsorted\n@SQ\tSN:target\tLN:22\n"
        "@PG\tID:swgpu\tPN:swgpu\tVN:%s\n"
        "query\t0\ttarget\t4\t255\t2S8M1I9M\t*\t0\t0\tCCACGTTAGCATTGACGGAT\t*\tAS:i:27\tNM:i:1\n"
        % swgpu.__version__)
    minus = swgpu.align_long("CCACGTTAGCATTGACGGAT", "GGGACGTTAGCTTGACGGATCC", strand="minus")
    assert minus.format("sam", query_id="q\t1").splitlines()[-1] == (
        "q\\t1\t16\ttarget\t19\t255\t4M16S\t*\t0\t0\tATCCGTCAATGCTAACGTGG\t*\tAS:i:8\tNM:i:0")
    none = swgpu.align_long("AAAA", "CCCC")
    assert none.format("sam").splitlines()[-1] == "query\t4\t*\t0\t0\t*\t*\t0\t0\tAAAA\t*\tAS:i:0"
    assert none.format() == ("query     query\t4\ntarget    target\t4\nstrand    plus\n"
                             "score     0\nalignment none\n")


def test_format_errors():
    aln = swgpu.align_long("MKVLAAGIW", "MKVLSAGIW")
    with pytest.raises(swgpu.InvalidArgumentError, match="format 'bam'"):
        aln.format("bam")
    with pytest.raises(swgpu.InvalidArgumentError, match="more than SAM's QNAME may hold"):
        aln.format("sam", query_id="x" * 255)
    assert aln.format("sam", query_id="x" * 254).splitlines()[-1].startswith("x" * 254 + "\t0\t")
    with pytest.raises(TypeError, match="list of words"):
        aln.format("sam", command_line="swgpu align a b")
    hand = swgpu.LongAlignment(**{k: getattr(aln, k) for k in (
        "score", "query_begin", "query_end", "target_begin", "target_end", "cigar", "length",
        "nident", "mismatches", "gap_opens", "gaps", "query_length", "target_length", "type",
        "strand", "other_strand_score", "stats")})
    with pytest.raises(swgpu.InvalidArgumentError, match="not made by align_long"):
        hand.format()


def test_write_path_file_object_and_refusals(tmp_path):
    src = tmp_path / "a.fa"
    src.write_text(">a\nCCACGTTAGCATTGACGGAT\n")
    aln = swgpu.align_long(first(str(src)).sequence, "GGGACGTTAGCTTGACGGATCC")
    want = aln.format("pair", query_id="a")
    out = tmp_path / "out.txt"
    aln.write(out, "pair", query_id="a", inputs=[src])
    assert out.read_text() == want

    class Sink:
        text = ""

        def write(self, s):
            Sink.text += s

    aln.write(Sink(), "pair", query_id="a")
    assert Sink.text == want
    link = tmp_path / "link.fa"
    os.symlink(src, link)
    for target in (src, link):
        with pytest.raises(swgpu.InvalidArgumentError,
                           match="is the file a sequence was read from; refusing to replace it"):
            aln.write(target, "sam", inputs=[src])
        assert src.read_text() == ">a\nCCACGTTAGCATTGACGGAT\n"
    with pytest.raises(swgpu.InvalidArgumentError, match="is a directory"):
        aln.write(tmp_path, inputs=src)


def test_write_refuses_the_matrix_file(tmp_path):
    mat = tmp_path / "m.mat"
    with open(os.path.join(ROOT, "tests", "data", "custom.mat")) as f:
        mat.write_text(f.read())
    aln = swgpu.align_long("MKVLAAGIW", "MKVLSAGIW", matrix=str(mat))
    with pytest.raises(swgpu.InvalidArgumentError, match="the matrix was read from"):
        aln.write(mat, "summary")
    assert aln.format().startswith("query     query\t9\n")
