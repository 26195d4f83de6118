"""The package built by setuptools, offline (pip install --no-build-isolation):
the sdist holds what a build needs; a wheel built from it, CPU-only, has a
platform tag, the metadata (licence included) and a RECORD whose hashes
match, and installs into a target directory and works from there; an
editable install (pip install -e) of the same tree imports and searches
from another directory."""

import base64
import csv
import hashlib
import io
import os
import re
import subprocess
import sys
import sysconfig
import tarfile
import zipfile

import pytest

from conftest import ROOT

CODE = ("import swgpu; print(swgpu.__file__); "
        "print(swgpu.align('MKWVTFISLLFLFSSAYS', 'MKWVTFISLLFLFSSAYS').score); "
        "db = swgpu.Database(%r); q = swgpu.Queries.read(%r); "
        "print(db.search(q, top=1).format('6 qseqid sseqid score').splitlines()[0])"
        % (os.path.join(ROOT, "examples", "db.fasta"), os.path.join(ROOT, "examples", "queries.fasta")))
EXPECT = ["91", "sp|P75428|PLSY_MYCPN\ttr|B3XUJ2|B3XUJ2_UREUR\t313"]


def has(module):
    return subprocess.run([sys.executable, "-c", "import " + module],
                          capture_output=True).returncode == 0


needs_tools = pytest.mark.skipif(
    not (has("pip") and has("setuptools") and has("wheel")),
    reason="no pip, setuptools or wheel for this interpreter "
           "(apt-get install python3-pip python3-setuptools python3-wheel)")


def version():
    with open(os.path.join(ROOT, "include", "swgpu.h"), encoding="utf-8") as f:
        return re.search(r'#define SWGPU_VERSION "([^"]+)"', f.read()).group(1)


def clean_env(tmp_path):
    """pip without an index or cache; a CPU-only build whatever make or the
    caller had in the environment."""
    env = dict(os.environ, PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1",
               PIP_NO_CACHE_DIR="1", CUDA="0", SWGPU_CUDA="0")
    for k in ("PYTHONPATH", "MAKEFLAGS", "MFLAGS", "MAKELEVEL"):
        env.pop(k, None)
    return env


def run(cmd, env, cwd=None):
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=cwd)
    assert p.returncode == 0, " ".join(map(str, cmd)) + "\n" + p.stdout[-3000:] + p.stderr[-3000:]
    return p


def test_pyproject_version_is_the_library_version():
    with open(os.path.join(ROOT, "pyproject.toml"), encoding="utf-8") as f:
        assert re.search(r'^version = "([^"]+)"$', f.read(), re.M).group(1) == version()


@pytest.fixture(scope="module")
def sdist(tmp_path_factory):
    """The sdist, built by setuptools' PEP 517 backend in the source tree."""
    out = tmp_path_factory.mktemp("sdist")
    code = ("import sys, setuptools.build_meta as b; "
            "print(b.build_sdist(sys.argv[1]))")
    p = run([sys.executable, "-c", code, str(out)], clean_env(out), cwd=ROOT)
    return out / p.stdout.splitlines()[-1]


@needs_tools
def test_sdist_holds_the_build(sdist):
    base = "swgpu-" + version()
    assert sdist.name == base + ".tar.gz"
    with tarfile.open(sdist) as t:
        names = set(t.getnames())
        pkg_info = t.extractfile(base + "/PKG-INFO").read().decode()
    for f in ("PKG-INFO", "LICENSE", "README.md", "Makefile", "setup.py", "pyproject.toml",
              "include/swgpu.h", "src/base/util.c", "src/simd/sw_avx2.c", "src/cuda/group.cu",
              "python/swgpu/_swgpu.c", "python/swgpu/_swgpu.h", "python/swgpu/_swgpu_align.c",
              "python/swgpu/_swgpu_data.c", "python/swgpu/_swgpu_opts.c",
              "python/swgpu/_swgpu_result.c", "python/swgpu/_swgpu_search.c",
              "python/swgpu/__init__.py", "python/swgpu/_search.py"):
        assert base + "/" + f in names, f
    assert not [n for n in names if "__pycache__" in n or n.endswith((".so", ".o", ".a"))]
    assert "\nLicense: MIT\n" in pkg_info and "\nRequires-Python: >=3.9\n" in pkg_info


@pytest.fixture(scope="module")
def tree(sdist, tmp_path_factory):
    """The sdist unpacked: the wheel and the editable install are built from
    it (the second reuses the first's library)."""
    src = tmp_path_factory.mktemp("src")
    with tarfile.open(sdist) as t:
        t.extractall(src)
    return src / sdist.name[:-len(".tar.gz")]


@needs_tools
def test_wheel_from_the_sdist_and_install(tree, tmp_path):
    env = clean_env(tmp_path)
    run([sys.executable, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps",
         "-w", str(tmp_path), str(tree)], env)
    wheels = [f for f in os.listdir(tmp_path) if f.endswith(".whl")]
    assert len(wheels) == 1
    tag = "cp%d%d" % sys.version_info[:2]
    plat = re.sub(r"[-.]", "_", sysconfig.get_platform())
    assert wheels[0] == "swgpu-%s-%s-%s-%s.whl" % (version(), tag, tag, plat)
    ext = "swgpu/_swgpu" + sysconfig.get_config_var("EXT_SUFFIX")
    with zipfile.ZipFile(tmp_path / wheels[0]) as z:
        names = set(z.namelist())
        dist = "swgpu-%s.dist-info" % version()
        assert {"swgpu/__init__.py", "swgpu/_common.py", "swgpu/_align.py", "swgpu/_search.py",
                "swgpu/_pssm.py", ext, dist + "/METADATA", dist + "/RECORD", dist + "/WHEEL",
                dist + "/LICENSE"} <= names
        assert not [n for n in names if n.startswith("swgpu/") and n.endswith(".c")]
        meta = z.read(dist + "/METADATA").decode()
        for line in ("Name: swgpu", "Version: " + version(), "License: MIT",
                     "Classifier: License :: OSI Approved :: MIT License",
                     "Classifier: Operating System :: POSIX :: Linux", "Requires-Python: >=3.9",
                     'Requires-Dist: numpy ; extra == "numpy"'):
            assert line.replace('"', "'") + "\n" in meta.replace('"', "'"), line
        wheel = z.read(dist + "/WHEEL").decode()
        assert "Root-Is-Purelib: false\n" in wheel and "Tag: %s-%s-%s\n" % (tag, tag, plat) in wheel
        rows = list(csv.reader(io.StringIO(z.read(dist + "/RECORD").decode())))
        assert {r[0] for r in rows} == names
        for name, digest, size in rows:
            if name == dist + "/RECORD":
                assert (digest, size) == ("", "")
                continue
            data = z.read(name)
            h = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            assert (digest, int(size)) == ("sha256=" + h, len(data)), name
    # CPU-only, and the library's symbols are not exported by the module
    assert os.path.isdir(tree / "build" / "pip-cpu") and not os.path.exists(tree / "build" / "pip-cuda")
    target = tmp_path / "target"
    run([sys.executable, "-m", "pip", "install", "--no-deps", "--target", str(target),
         str(tmp_path / wheels[0])], env)
    dyn = run(["nm", "-D", "--defined-only", str(target / ext)], env).stdout.split()
    assert "PyInit__swgpu" in dyn and not [s for s in dyn if s.startswith("swgpu_")]
    p = run([sys.executable, "-c", CODE + "; print(swgpu.has_cuda)"], dict(env, PYTHONPATH=str(target)),
            cwd=str(tmp_path))
    assert p.stdout.splitlines() == [str(target / "swgpu" / "__init__.py")] + EXPECT + ["False"]


@needs_tools
def test_editable_install(tree, tmp_path):
    env = clean_env(tmp_path)
    venv = tmp_path / "venv"
    # the interpreter's own pip and setuptools serve the venv
    run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(venv)], env)
    py = str(venv / "bin" / "python")
    run([py, "-m", "pip", "install", "--no-build-isolation", "--no-deps", "-e", str(tree)], env)
    away = tmp_path / "elsewhere"
    away.mkdir()
    p = run([py, "-c", CODE], env, cwd=str(away))
    assert p.stdout.splitlines() == [str(tree / "python" / "swgpu" / "__init__.py")] + EXPECT
    # an edit to the tree's Python sources shows without reinstalling
    with open(tree / "python" / "swgpu" / "__init__.py", "a", encoding="utf-8") as f:
        f.write("\nEDITED = 1\n")
    p = run([py, "-c", "import swgpu; print(swgpu.EDITED)"], env, cwd=str(away))
    assert p.stdout == "1\n"
