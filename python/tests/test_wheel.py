"""`pip install .` without network: the in-tree build backend makes a wheel
(PEP 427: the package, METADATA, WHEEL, a RECORD whose hashes match) that
installs into a target directory and works from there; the sdist holds
what a build needs."""

import base64
import csv
import hashlib
import importlib.util
import io
import os
import subprocess
import sys
import sysconfig
import tarfile
import zipfile

import pytest

from conftest import ROOT


def pip_available():
    return subprocess.run([sys.executable, "-m", "pip", "--version"],
                          capture_output=True).returncode == 0


@pytest.mark.skipif(not pip_available(), reason="no pip for this interpreter")
def test_pip_wheel_and_install_offline(tmp_path):
    env = dict(os.environ, PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    env.pop("PYTHONPATH", None)
    p = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-index", "--no-deps",
                        "-w", str(tmp_path), ROOT], capture_output=True, text=True, env=env)
    assert p.returncode == 0, p.stdout + p.stderr
    wheels = [f for f in os.listdir(tmp_path) if f.endswith(".whl")]
    assert len(wheels) == 1
    tag = "cp%d%d" % sys.version_info[:2]
    assert wheels[0].startswith("swgpu-") and "-%s-%s-" % (tag, tag) in wheels[0]
    ext = "swgpu/_swgpu" + sysconfig.get_config_var("EXT_SUFFIX")
    with zipfile.ZipFile(tmp_path / wheels[0]) as z:
        names = set(z.namelist())
        dist = [n.split("/")[0] for n in names if n.endswith(".dist-info/WHEEL")][0]
        assert {"swgpu/__init__.py", "swgpu/_common.py", "swgpu/_align.py",
                "swgpu/_search.py", ext, dist + "/METADATA", dist + "/RECORD"} <= names
        meta = z.read(dist + "/METADATA").decode()
        assert "Name: swgpu\n" in meta and "Metadata-Version: 2.1\n" in meta
        assert "Root-Is-Purelib: false" in z.read(dist + "/WHEEL").decode()
        rows = list(csv.reader(io.StringIO(z.read(dist + "/RECORD").decode())))
        assert {r[0] for r in rows} == names
        for name, digest, size in rows:
            if name == dist + "/RECORD":
                assert (digest, size) == ("", "")
                continue
            data = z.read(name)
            h = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            assert (digest, int(size)) == ("sha256=" + h, len(data)), name
    target = tmp_path / "target"
    p = subprocess.run([sys.executable, "-m", "pip", "install", "--no-index", "--no-deps",
                        "--target", str(target), str(tmp_path / wheels[0])],
                       capture_output=True, text=True, env=env)
    assert p.returncode == 0, p.stdout + p.stderr
    code = ("import swgpu; print(swgpu.__file__); "
            "print(swgpu.align('MKWVTFISLLFLFSSAYS', 'MKWVTFISLLFLFSSAYS').score)")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       cwd=str(tmp_path), env=dict(env, PYTHONPATH=str(target)))
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines() == [str(target / "swgpu" / "__init__.py"), "91"]


def test_sdist(tmp_path):
    spec = importlib.util.spec_from_file_location(
        "swgpu_build", os.path.join(ROOT, "python", "swgpu_build.py"))
    backend = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(backend)
    assert backend.get_requires_for_build_wheel() == [] == backend.get_requires_for_build_sdist()
    name = backend.build_sdist(str(tmp_path))
    with tarfile.open(tmp_path / name) as t:
        names = set(t.getnames())
    base = name[:-len(".tar.gz")]
    for f in ("PKG-INFO", "Makefile", "pyproject.toml", "include/swgpu.h", "src/search.c",
              "python/swgpu/_swgpu.c", "python/swgpu/__init__.py", "python/swgpu_build.py",
              "python/find-python"):
        assert base + "/" + f in names, f
    assert not [n for n in names if "__pycache__" in n or n.endswith(".so")]
    meta = backend.prepare_metadata_for_build_wheel(str(tmp_path))
    assert meta == base + ".dist-info"
    assert (tmp_path / meta / "METADATA").read_text().startswith("Metadata-Version: 2.1\n")
