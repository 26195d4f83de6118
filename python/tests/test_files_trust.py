"""Files and options the Python API must not mistreat: makedb and
Database.write never replace the file (or BLAST database) they read, and an
unknown or unusable kernel is an error on every backend."""

import os
import re
import stat
import shutil
import threading

import pytest

import swgpu
from conftest import data


def _copy(tmp_path, name):
    dst = tmp_path / name
    shutil.copyfile(data(name), dst)
    return dst


def test_makedb_refuses_its_input(tmp_path):
    fa = _copy(tmp_path, "cli_db.fasta")
    before = fa.read_bytes()
    with pytest.raises(swgpu.InvalidArgumentError,
                       match=r"cli_db\.fasta: is the file this database was read from"):
        swgpu.makedb(fa, fa)
    assert fa.read_bytes() == before


def test_makedb_refuses_a_link_to_its_input(tmp_path):
    fa = _copy(tmp_path, "cli_db.fasta")
    before = fa.read_bytes()
    link = tmp_path / "link.fa"
    link.symlink_to(fa)
    with pytest.raises(swgpu.InvalidArgumentError, match=r"link\.fa: is the file this database"):
        swgpu.makedb(fa, link)
    assert fa.read_bytes() == before and link.is_symlink()


def test_database_write_refuses_its_source(tmp_path):
    fa = _copy(tmp_path, "cli_db.fasta")
    before = fa.read_bytes()
    db = swgpu.Database(fa)
    with pytest.raises(swgpu.InvalidArgumentError, match=r"refusing to replace it"):
        db.write(fa)
    assert fa.read_bytes() == before
    # another file is written, and reads back as the same database
    out = tmp_path / "out.swdb"
    db.write(out)
    again = swgpu.Database(out)
    assert [s.id for s in again] == [s.id for s in db]
    assert list(tmp_path.iterdir()) and not [p for p in os.listdir(tmp_path) if ".tmp." in p]


def test_write_refuses_a_blast_v5_file(tmp_path):
    for x in ("pin", "psq", "phr"):
        shutil.copyfile(data("blastdb/prot_v5." + x), tmp_path / ("v5." + x))
    for x in ("pdb", "pot", "ptf", "pto"):
        (tmp_path / ("v5." + x)).write_bytes(b"lmdb " + x.encode())
    prefix = str(tmp_path / "v5")
    db = swgpu.Database(prefix)
    for x in ("pdb", "pot", "ptf", "pto", "psq"):
        target = tmp_path / ("v5." + x)
        before = target.read_bytes()
        with pytest.raises(swgpu.InvalidArgumentError,
                           match=r"v5\.%s: is a file of the BLAST database .*v5 " % x):
            db.write(target)
        with pytest.raises(swgpu.InvalidArgumentError, match=r"is a file of the BLAST database"):
            swgpu.makedb(prefix, target)
        assert target.read_bytes() == before


def test_unknown_kernel_is_an_error_on_every_backend():
    db = swgpu.Database(data("cli_db.fasta"))
    q = swgpu.Queries.read(data("cli_q.fasta"))
    for backend in ("ref", "cpu", "auto"):
        with pytest.raises(swgpu.InvalidArgumentError,
                           match=r"kernel 'nope': unknown \(the cuda backend's kernels: default, "
                                 r"dpx, simt, intra, vector, scan"):
            db.search(q, backend=backend, kernel="nope")


def test_gpu_kernel_refused_by_cpu_and_ref():
    db = swgpu.Database(data("cli_db.fasta"))
    q = swgpu.Queries.read(data("cli_q.fasta"))
    for backend in ("ref", "cpu"):
        with pytest.raises(swgpu.InvalidArgumentError,
                           match=r"kernel 'simt': backend %s has no kernels to choose" % backend):
            db.search(q, backend=backend, kernel="simt")
    # "default" is every backend's own choice
    plain = db.search(q, backend="cpu")
    same = db.search(q, backend="cpu", kernel="default")
    assert plain.format("6") == same.format("6")


def _specials(tmp_path):
    """(path, what the refusal calls it) for a FIFO, a directory, a link to
    the FIFO and (where mknod may make one) a character device."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    d = tmp_path / "dir"
    d.mkdir()
    link = tmp_path / "link"
    link.symlink_to("fifo")
    out = [(fifo, "is a FIFO"), (d, "is a directory"), (link, "its target .*fifo is a FIFO")]
    dev = tmp_path / "dev"
    try:
        os.mknod(dev, 0o600 | stat.S_IFCHR, os.makedev(1, 3))
        out.append((dev, "is a device"))
    except (OSError, AttributeError):
        pass
    return out


def test_database_write_and_makedb_refuse_a_fifo_directory_or_device(tmp_path):
    fa = _copy(tmp_path, "cli_db.fasta")
    db = swgpu.Database(fa)
    for path, what in _specials(tmp_path):
        mode = os.lstat(path).st_mode
        for call in (lambda: db.write(path), lambda: swgpu.makedb(fa, path),
                     lambda: swgpu.Database.from_sequences([("a", "MKV")]).write(path)):
            with pytest.raises(swgpu.InvalidArgumentError,
                               match=r"^database %s: %s, not a regular file \(refusing to replace "
                                     r"it: give a file name\)$" % (re.escape(str(path)), what)):
                call()
            assert os.lstat(path).st_mode == mode, path
    assert sorted(p.name for p in tmp_path.iterdir() if ".tmp." in p.name) == []


def test_database_write_refuses_an_open_file_name(tmp_path):
    # a link into /proc names an open file, as /dev/stdout does (that one is
    # never used here: renaming over it would break the system's)
    db = swgpu.Database(data("cli_db.fasta"))
    with open(tmp_path / "open.txt", "w") as f:
        link = tmp_path / "out"
        link.symlink_to("/proc/self/fd/%d" % f.fileno())
        with pytest.raises(swgpu.InvalidArgumentError,
                           match=r"^database %s: names an open file \(such as /dev/stdout\), not "
                                 r"a regular file \(refusing to replace it: give a file name\)$"
                                 % re.escape(str(link))):
            db.write(link)
    assert link.is_symlink() and (tmp_path / "open.txt").read_text() == ""


def test_search_results_write_refuses_its_inputs(tmp_path):
    fa = _copy(tmp_path, "cli_db.fasta")
    qa = _copy(tmp_path, "cli_q.fasta")
    link = tmp_path / "qlink"
    link.symlink_to(qa)
    db = swgpu.Database(fa)
    before = (fa.read_bytes(), qa.read_bytes())
    for res in (db.search(swgpu.Queries.read(qa)), db.search(qa),
                db.search(swgpu.Queries.read(qa), iterations=2)):
        for path, msg in ((qa, "the queries were"), (link, "the queries were"),
                          (fa, "the database was")):
            with pytest.raises(swgpu.InvalidArgumentError,
                               match=r"^output %s: is the file %s read from; refusing to replace "
                                     r"it$" % (re.escape(str(path)), msg)):
                res.write(path)
            with pytest.raises(swgpu.InvalidArgumentError, match=r"refusing to replace it$"):
                res.write(str(path), "7")
        with pytest.raises(swgpu.InvalidArgumentError,
                           match=r"^output %s: is a directory$" % re.escape(str(tmp_path))):
            res.write(tmp_path)
        assert (fa.read_bytes(), qa.read_bytes()) == before and link.is_symlink()
        out = tmp_path / "out.tsv"
        res.write(out)
        assert out.read_text() == res.format()
    # as swgpu search -o: a FIFO is written into, not replaced
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_text()))
    reader.start()
    res.write(fifo)
    reader.join(10)
    assert got == [res.format()] and stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_search_results_write_refuses_a_blast_database_file(tmp_path):
    for x in ("pin", "psq", "phr"):
        shutil.copyfile(data("blastdb/prot_v5." + x), tmp_path / ("v5." + x))
    db = swgpu.Database(str(tmp_path / "v5"))
    res = db.search(swgpu.Queries.read(data("cli_q.fasta")))
    target = tmp_path / "v5.psq"
    before = target.read_bytes()
    with pytest.raises(swgpu.InvalidArgumentError,
                       match=r"^output .*v5\.psq: is a file of the BLAST database .*v5 the "
                             r"database was read from; refusing to replace it$"):
        res.write(target)
    assert target.read_bytes() == before


def test_empty_id_is_refused():
    for make, n in ((lambda: swgpu.Queries([("", "x", "TAGCTAGG")]), 1),
                    (lambda: swgpu.Queries([("q1", "MKV"), ("", "MKV")]), 2),
                    (lambda: swgpu.Database.from_sequences([("", "ACGT")]), 1),
                    (lambda: swgpu.Database.from_sequences([("a", "ACGT"), ("b", "ACGT"),
                                                            ("", "ACGT")]), 3)):
        with pytest.raises(swgpu.InvalidArgumentError,
                           match=r"^seqset_add: sequence %d: empty id$" % n):
            make()
    # plain strings get ids query_N / seq_N
    assert [s.id for s in swgpu.Queries(["MKV", "MKW"])] == ["query_1", "query_2"]
