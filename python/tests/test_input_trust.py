"""Nothing is read silently wrong (issue 28): what the readers refuse or
read differently, through the Python package."""

import gzip
import os
import threading

import pytest

import swgpu


def test_empty_sequence_database():
    # the C API keeps an empty sequence (swgpu_seqset_add with length 0):
    # a database of one empty sequence, which nothing aligns to
    db = swgpu.Database.from_sequences([("x", "")])
    assert db.max_length == 0
    assert list(db.scores("MKV")) == [0]
    assert len(db.search("MKV")[0]) == 0
    two = swgpu.Database.from_sequences([("x", ""), ("y", "MKWVTF")])
    assert list(two.scores("MKWVTF")) == [0, 36]


def test_gzip_then_junk(tmp_path):
    member = gzip.compress(b">a\nMKVL\n")
    path = tmp_path / "junk.fa.gz"
    path.write_bytes(member + b">b\nWWW\n")
    for read in (swgpu.Queries.read, swgpu.Database):
        with pytest.raises(swgpu.FormatError) as e:
            read(path)
        assert str(e.value) == ("file %s: data after the end of the gzip stream is not gzip "
                                "(byte %d of the file)" % (path, len(member) + 1))
    both = tmp_path / "two.fa.gz"
    both.write_bytes(member + gzip.compress(b">b\nWWW\n"))
    q = swgpu.Queries.read(both)
    assert [(s.id, s.sequence) for s in q] == [("a", "MKVL"), ("b", "WWW")]


def test_records(tmp_path):
    path = tmp_path / "mixed.fa"
    path.write_bytes(b";comment\n>a\nMKVL\n;inside\nWW\n@r1\nACDE\n+\nIIII\n")
    q = swgpu.Queries.read(path, type="protein")
    assert [(s.id, s.sequence) for s in q] == [("a", "MKVLWW"), ("r1", "ACDE")]
    path.write_bytes(b">a\nMKV\n>\nMKV\n")
    with pytest.raises(swgpu.FormatError) as e:
        swgpu.Queries.read(path)
    assert str(e.value) == "file %s, line 3: record 2 has an empty id (nothing after '>')" % path
    path.write_bytes(b">a\rMKV\r")
    with pytest.raises(swgpu.FormatError) as e:
        swgpu.Queries.read(path)
    assert str(e.value) == ("file %s, line 1: CR-only line ends (a carriage return without a "
                            "line feed): convert the line ends, e.g. tr '\\r' '\\n'" % path)


def test_database_from_pipe():
    r, w = os.pipe()

    def feed():
        with os.fdopen(w, "wb") as f:
            f.write(b">a\nMKWVTF\n>b\nWW\n")

    t = threading.Thread(target=feed)
    t.start()
    try:
        db = swgpu.Database("/dev/fd/%d" % r)
    finally:
        t.join()
        os.close(r)
    assert db.max_length == 6
    assert list(db.scores("MKWVTF")) == [36, 11]
