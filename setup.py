"""The swgpu Python package's extension module, built with setuptools.

The metadata is in pyproject.toml.  build_ext first runs the project's
Makefile for the static library (build/pip-cpu, or build/pip-cuda with
CUDA), then compiles python/swgpu/_swgpu*.c against it as `make python`
does: hidden visibility, the library's symbols kept out of the module's
exports (-Wl,--exclude-libs,ALL), CUDA's static runtime linked in when the
library has CUDA.  CUDA is built only on request: SWGPU_CUDA=1 or CUDA=1
in the environment (NVCC=/path/to/nvcc picks the compiler).  MAKE_JOBS
sets make's parallel jobs (default: the CPU count).
"""

import glob
import os
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))


def want_cuda():
    return "1" in (os.environ.get("SWGPU_CUDA"), os.environ.get("CUDA"))


class MakeBuildExt(build_ext):
    """build_ext that makes libswgpu.a first, then links the extension with it."""

    def run(self):
        cuda = want_cuda()
        b = os.path.join(ROOT, "build", "pip-cuda" if cuda else "pip-cpu")
        jobs = os.environ.get("MAKE_JOBS") or str(os.cpu_count() or 1)
        cmd = ["make", "-C", ROOT, "-j" + jobs, "B=" + b, "CUDA=" + ("1" if cuda else "0"),
               b + "/libswgpu.a", b + "/python-ext.flags"]
        # a make that runs pip (make check-python) must not hand its own
        # flags and variables (B=, CFLAGS=) to this one
        env = {k: v for k, v in os.environ.items()
               if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES")}
        print("swgpu setup.py: " + " ".join(cmd), file=sys.stderr, flush=True)
        subprocess.run(cmd, check=True, stdout=sys.stderr, env=env)
        flags = {}
        with open(os.path.join(b, "python-ext.flags"), encoding="utf-8") as f:
            for line in f:
                key, _, value = line.partition(":")
                flags[key] = value.split()
        for ext in self.extensions:
            ext.extra_compile_args = flags["cflags"] + ["-fvisibility=hidden"]
            ext.extra_objects = [os.path.join(b, "libswgpu.a")]
            ext.extra_link_args = ["-Wl,--exclude-libs,ALL"] + flags["libs"]
        # the extension is always relinked: a CPU-only and a CUDA build share
        # setuptools' build directory, and its time check would take either
        self.force = True
        super().run()


os.makedirs(os.path.join(ROOT, "build"), exist_ok=True)
setup(
    # relative paths, sorted: setuptools wants them so, and the build repeats
    ext_modules=[Extension("swgpu._swgpu",
                           sources=sorted(os.path.relpath(p, ROOT) for p in
                                          glob.glob(os.path.join(ROOT, "python/swgpu/_swgpu*.c"))),
                           include_dirs=["include", "src"])],
    cmdclass={"build_ext": MakeBuildExt},
    # setuptools' own records under build/, not beside the package's sources
    options={"egg_info": {"egg_base": "build"}},
)
