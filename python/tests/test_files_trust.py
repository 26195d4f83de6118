"""Files and options the Python API must not mistreat: makedb and
Database.write never replace the file (or BLAST database) they read, and an
unknown or unusable kernel is an error on every backend."""

import os
import shutil

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
