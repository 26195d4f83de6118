"""The Python example of docs/python.md runs as written and prints what the
page shows after it."""

import os
import re
import subprocess
import sys

import pytest

import swgpu
from conftest import ROOT


def readme_example():
    with open(os.path.join(ROOT, "docs", "python.md"), encoding="utf-8") as f:
        section = f.read()
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    output = re.search(r"\nOutput:\n\n```\n(.*?)```", section, re.S).group(1)
    return code, output


def test_readme_example_runs_as_written(tmp_path):
    pytest.importorskip("numpy")  # the example's scores() part uses numpy
    code, output = readme_example()
    script = tmp_path / "example.py"
    script.write_text(code)
    env = dict(os.environ)
    # the package under test, whichever way it was installed
    env["PYTHONPATH"] = os.pathsep.join(
        [os.path.dirname(os.path.dirname(swgpu.__file__))] +
        [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    p = subprocess.run([sys.executable, str(script)], cwd=ROOT, env=env, capture_output=True,
                       text=True)
    assert p.returncode == 0, p.stderr
    assert p.stdout == output
    assert p.stderr == ""
