"""swgpu_build - the in-tree PEP 517 build backend of the swgpu Python package.

``pip install .`` (and ``pip wheel .``) run it without any network access:
pyproject.toml requires nothing, and this module needs only the standard
library, GNU make and a C compiler.  build_wheel runs the project's Makefile
(``make python`` in its own build directory, build/pip-cuda or build/pip-cpu,
with the running interpreter as PYTHON), so that the extension is compiled
and linked exactly as ``make python`` does it (with CUDA when nvcc is found
or $NVCC names it; NVCC= in the environment forces a CPU-only build), then
writes the wheel itself: the
package's files plus the .dist-info METADATA, WHEEL and RECORD of the wheel
format (PEP 427).  build_sdist writes a source archive of what the build
needs.

config_settings (``pip install . --config-settings jobs=N``): ``jobs``, the
parallel jobs of make (default: the CPU count); ``build-dir``, the build
directory.
"""

import base64
import hashlib
import io
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import zipfile

NAME = "swgpu"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SUMMARY = "Exact Smith-Waterman local alignment and database search on CPUs and NVIDIA GPUs"

# what build_sdist ships: the library's sources and the package
SDIST_PATHS = ("Makefile", "README.md", "pyproject.toml", "include", "src", "python")


def _version():
    with open(os.path.join(ROOT, "include", "swgpu.h"), encoding="utf-8") as f:
        m = re.search(r'#define SWGPU_VERSION "([^"]+)"', f.read())
    if not m:
        raise RuntimeError("swgpu_build: no SWGPU_VERSION in include/swgpu.h")
    return m.group(1)


def _tag():
    """The wheel's python, abi and platform tags, e.g. cp311-cp311-linux_x86_64."""
    impl = {"cpython": "cp"}.get(sys.implementation.name, sys.implementation.name)
    py = "%s%d%d" % (impl, sys.version_info[0], sys.version_info[1])
    soabi = sysconfig.get_config_var("SOABI") or ""
    parts = soabi.split("-")
    abi = impl + parts[1] if impl == "cp" and len(parts) > 1 else "none"
    plat = re.sub(r"[-.]", "_", sysconfig.get_platform())
    return "%s-%s-%s" % (py, abi, plat)


def _metadata():
    return "\n".join([
        "Metadata-Version: 2.1",
        "Name: %s" % NAME,
        "Version: %s" % _version(),
        "Summary: %s" % SUMMARY,
        "Requires-Python: >=3.8",
        "Provides-Extra: numpy",
        'Requires-Dist: numpy; extra == "numpy"',
        "",
        "swgpu computes exact Smith-Waterman local alignments (affine gaps): pairwise,",
        "for two long sequences in bounded memory, and database searches with BLAST",
        "tabular hits, on CPUs (SIMD, threads) and NVIDIA GPUs.  See README.md.",
        "",
    ])


def _wheel_file(tag):
    return "Wheel-Version: 1.0\nGenerator: swgpu_build\nRoot-Is-Purelib: false\nTag: %s\n" % tag


def _dist_info():
    return "%s-%s.dist-info" % (NAME, _version())


def _setting(config_settings, key, default):
    value = (config_settings or {}).get(key)
    return default if value in (None, "") else value


def _nvcc():
    """The CUDA compiler the build uses, as the Makefile chooses it: $NVCC
    when set (empty: a CPU-only build), else nvcc on PATH, else none."""
    if "NVCC" in os.environ:
        return os.environ["NVCC"]
    return shutil.which("nvcc") or ""


def _build(config_settings):
    """Run make; returns the directory holding the built package.  A build
    with CUDA and one without have their own directories, so that neither
    reuses the other's library."""
    nvcc = _nvcc()
    default = os.path.join(ROOT, "build", "pip-cuda" if nvcc else "pip-cpu")
    b = os.path.abspath(_setting(config_settings, "build-dir", default))
    jobs = str(_setting(config_settings, "jobs", os.cpu_count() or 1))
    cmd = ["make", "-C", ROOT, "-j" + jobs, "B=" + b, "NVCC=" + nvcc, "PYTHON=" + sys.executable,
           "python"]
    # a make that runs pip (make check-python) must not pass its own flags on
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    print("swgpu_build: " + " ".join(cmd), file=sys.stderr)
    subprocess.run(cmd, check=True, stdout=sys.stderr, env=env)
    return os.path.join(b, "python", NAME)


def _record_line(arcname, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d" % (arcname, digest, len(data))


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    d = os.path.join(metadata_directory, _dist_info())
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "METADATA"), "w", encoding="utf-8") as f:
        f.write(_metadata())
    with open(os.path.join(d, "WHEEL"), "w", encoding="utf-8") as f:
        f.write(_wheel_file(_tag()))
    return _dist_info()


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    pkg = _build(config_settings)
    ext = "_swgpu" + sysconfig.get_config_var("EXT_SUFFIX")
    files = sorted(f for f in os.listdir(pkg) if f.endswith(".py")) + [ext]
    if not os.path.exists(os.path.join(pkg, ext)):
        raise RuntimeError("swgpu_build: make python did not build %s" % os.path.join(pkg, ext))
    tag = _tag()
    name = "%s-%s-%s.whl" % (NAME, _version(), tag)
    dist_info = _dist_info()
    record = []
    path = os.path.join(wheel_directory, name)
    with zipfile.ZipFile(path + ".tmp", "w", zipfile.ZIP_DEFLATED) as z:
        def add(arcname, data, mode=0o644):
            info = zipfile.ZipInfo(arcname, date_time=(1980, 1, 1, 0, 0, 0))
            info.external_attr = (0o100000 | mode) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)
            record.append(_record_line(arcname, data))
        for f in files:
            with open(os.path.join(pkg, f), "rb") as src:
                add("%s/%s" % (NAME, f), src.read(), 0o755 if f == ext else 0o644)
        add(dist_info + "/METADATA", _metadata().encode())
        add(dist_info + "/WHEEL", _wheel_file(tag).encode())
        add(dist_info + "/top_level.txt", (NAME + "\n").encode())
        record.append(dist_info + "/RECORD,,")
        info = zipfile.ZipInfo(dist_info + "/RECORD", date_time=(1980, 1, 1, 0, 0, 0))
        info.external_attr = 0o100644 << 16
        z.writestr(info, "\n".join(record) + "\n")
    os.replace(path + ".tmp", path)
    return name


def build_sdist(sdist_directory, config_settings=None):
    base = "%s-%s" % (NAME, _version())
    name = base + ".tar.gz"
    path = os.path.join(sdist_directory, name)

    def skip(tarinfo):
        parts = tarinfo.name.split("/")
        if "__pycache__" in parts or tarinfo.name.endswith((".pyc", ".so", ".o")):
            return None
        tarinfo.uid = tarinfo.gid = 0
        tarinfo.uname = tarinfo.gname = ""
        return tarinfo

    with tarfile.open(path + ".tmp", "w:gz", format=tarfile.PAX_FORMAT) as t:
        for p in SDIST_PATHS:
            t.add(os.path.join(ROOT, p), arcname="%s/%s" % (base, p), filter=skip)
        pkg_info = _metadata().encode()
        info = tarfile.TarInfo("%s/PKG-INFO" % base)
        info.size = len(pkg_info)
        info.mode = 0o644
        t.addfile(info, io.BytesIO(pkg_info))
    os.replace(path + ".tmp", path)
    return name


if __name__ == "__main__":  # python3 python/swgpu_build.py DIR: a wheel into DIR
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    os.makedirs(out, exist_ok=True)
    print(os.path.join(out, build_wheel(out)))
