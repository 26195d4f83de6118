"""Every option of ``swgpu search`` and ``swgpu align`` is reachable from
Python: a keyword of db.search() / align_long() (the C extension's option
tables), or the Python counterpart named here.  An option added to the tool
fails this test until it is mapped (most often one row in _swgpu.c's table)."""

import inspect
import re

import pytest

import swgpu
from swgpu import _swgpu

# command-line options that are not keywords of the same name
SEARCH = {
    "query": "the queries argument of Database.search",
    "db": "swgpu.Database(path)",
    "type": "Database(path, type=) and Queries(..., type=)",
    "matrix": "keyword matrix", "match": "keyword match", "mismatch": "keyword mismatch",
    "top": "keyword top", "max-memory": "keyword max_gpu_memory",
    "outfmt": "SearchResults.format(outfmt)", "out": "SearchResults.write(file)",
    "verbose": "the 'swgpu' logger's level (DEBUG)", "quiet": "the 'swgpu' logger's level",
    "help": None,
    # PSSM queries and iterated searches (iterations, inclusion_evalue: keywords)
    "pssm": "a swgpu.Pssm(path), or a list of them, as the queries of Database.search",
    "out-pssm": "QueryResult.pssm.write(path) of an iterated search",
    "report": "IteratedSearchResults.format(outfmt, all_rounds=True)",
}
ALIGN = {
    "type": "keyword type", "matrix": "keyword matrix", "match": "keyword match",
    "mismatch": "keyword mismatch", "strand": "keyword strand",
    "max-memory": "keyword max_memory", "no-prune": "keyword prune=False",
    "outfmt": "the tool's output formats (summary, sam, pair): the LongAlignment's fields",
    "out": "the tool's output file", "plot": "the tool's SVG drawing",
    "verbose": "the 'swgpu' logger's level (DEBUG)",
    "quiet": "the 'swgpu' logger's level", "help": None,
}


def options(cli, command):
    return sorted(set(re.findall(r"--([a-z][a-z-]*)", cli(command, "--help").stdout)))


@pytest.mark.parametrize("command,table,mapped,func", [
    ("search", _swgpu.search_options, SEARCH, swgpu.Database.search),
    ("align", _swgpu.long_options, ALIGN, swgpu.align_long),
])
def test_every_option_is_reachable(cli, command, table, mapped, func):
    keywords = {name for name, _, _ in table} | set(inspect.signature(func).parameters)
    for opt in options(cli, command):
        if opt in mapped:
            m = re.match(r"keyword (\w+)", mapped[opt] or "")
            assert not m or m.group(1) in keywords, (opt, mapped[opt])
        else:
            assert opt.replace("-", "_") in keywords, \
                "swgpu %s --%s has no Python keyword" % (command, opt)


def test_search_keywords_reach_the_options_struct():
    db = swgpu.Database.from_sequences(["MKWVTFISLLFLFSSAYS", "MKWVTFLLLLFISAYS", "PPPPPP"])
    q = "MKWVTFISLLFLFSSAYS"
    assert [len(r) for r in db.search(q, top=1)] == [1]
    assert [h.score for h in db.search(q, evalue=1e-30)[0]] == []
    assert db.search(q, gap_open=0, gap_extend=1)[0][1].score == \
        swgpu.align(q, "MKWVTFLLLLFISAYS", gap_open=0, gap_extend=1).score
    assert db.search(q, no_align=True)[0][0].alignment is None
    assert [h.target_index for h in db.search([("seq_1", q)], no_self=True)[0]] == [1]
    assert db.search(q, backend="ref").backend == "ref"
    for name, kind, doc in _swgpu.search_options + _swgpu.long_options:
        assert kind in ("int", "bool", "float", "size", "str") and doc
