#!/usr/bin/env python3
"""blast_formats.py FMT FILE TAB - check a format 5 (XML, read by Biopython's
NCBIXML) or 15 (JSON, read by json, BLAST's BlastOutput2 layout) output
against format 6's rows of the same search (TAB: columns qseqid sseqid
evalue bitscore score qstart qend sstart send nident gaps qseq sseq).
Prints one line per problem and exits 1 if any."""
import json
import sys


def fmt_evalue(e):
    # format 6's E-value (src/search/format_util.c, swgpu__fmt_evalue)
    if e < 1e-180:
        return "0.0"
    if e < 0.0009:
        return "%.2e" % e
    if e < 0.1:
        return "%.3f" % e
    if e < 1:
        return "%.2f" % e
    if e < 10:
        return "%.1f" % e
    return "%.0f" % e


def fmt_bits(b):
    if b > 99999:
        return "%5.3e" % b
    if b > 99.9:
        return "%3d" % int(b)
    return "%4.1f" % b


def rows_xml(path):
    from Bio.Blast import NCBIXML
    out = []
    with open(path) as f:
        for rec in NCBIXML.parse(f):
            for aln in rec.alignments:
                for h in aln.hsps:
                    out.append([rec.query_id, aln.hit_id, fmt_evalue(h.expect), fmt_bits(h.bits),
                                str(int(h.score)), h.query_start, h.query_end, h.sbjct_start,
                                h.sbjct_end, h.identities, h.gaps, h.query, h.sbjct])
    return out


REPORT_KEYS = {"program", "version", "reference", "search_target", "params", "results"}
SEARCH_KEYS = {"query_id", "query_title", "query_len", "hits", "stat"}
HSP_KEYS = {"num", "bit_score", "score", "evalue", "identity", "positive", "query_from",
            "query_to", "hit_from", "hit_to", "align_len", "gaps", "qseq", "hseq", "midline"}


def rows_json(path, problems):
    with open(path) as f:
        doc = json.load(f)
    out = []
    for rep in doc["BlastOutput2"]:
        r = rep["report"]
        if set(r) != REPORT_KEYS:
            problems.append("report keys %s" % sorted(r))
        s = r["results"]["search"]
        if not SEARCH_KEYS <= set(s):
            problems.append("search keys %s" % sorted(s))
        if set(s["stat"]) != {"db_num", "db_len", "hsp_len", "eff_space", "kappa", "lambda",
                              "entropy"}:
            problems.append("stat keys %s" % sorted(s["stat"]))
        for hit in s["hits"]:
            for h in hit["hsps"]:
                if not HSP_KEYS <= set(h):
                    problems.append("hsp keys %s" % sorted(h))
                out.append([s["query_id"], hit["description"][0]["id"], fmt_evalue(h["evalue"]),
                            fmt_bits(h["bit_score"]), str(h["score"]), h["query_from"],
                            h["query_to"], h["hit_from"], h["hit_to"], h["identity"], h["gaps"],
                            h["qseq"], h["hseq"]])
    return out


def main():
    fmt, path, tab = sys.argv[1:4]
    problems = []
    got = rows_xml(path) if fmt == "5" else rows_json(path, problems)
    want = []
    with open(tab) as f:
        for line in f:
            c = line.rstrip("\n").split("\t")
            want.append(c[:5] + [int(x) for x in c[5:11]] + c[11:13])
    got = [[str(x) if i < 5 else x for i, x in enumerate(r)] for r in got]
    if len(got) != len(want):
        problems.append("%d HSPs, format 6 has %d rows" % (len(got), len(want)))
    for g, w in zip(got, want):
        if g != w:
            problems.append("HSP %s differs from format 6's %s" % (g, w))
    for p in problems:
        print(p)
    print("%s: %d HSPs compared" % (path, len(got)))
    sys.exit(1 if problems else 0)


main()
