"""The base install (no extra) imports every module and answers every --help."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "support" / "base_install.py"
BASE_PYTHON_ENV = "SEALGRAPH_BASE_PYTHON"
"""The interpreter of a virtualenv holding only ``pip install sealgraph`` (CI makes one)."""


def run(python: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    return subprocess.run(
        [python, str(SCRIPT), *args], capture_output=True, text=True, env=env, timeout=300
    )


def test_every_module_imports_and_every_help_works_without_the_extras():
    # The extras' modules are made unimportable in the subprocess: the development
    # virtualenv stands in for one that holds the base install only.
    result = run(sys.executable, "--block")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "every module imports, every --help works" in result.stdout


@pytest.mark.skipif(
    not os.environ.get(BASE_PYTHON_ENV),
    reason=f"set {BASE_PYTHON_ENV} to the python of a base-only virtualenv (CI does)",
)
def test_in_a_virtualenv_that_holds_only_the_base_install():
    # The script first checks that no extra can be imported there.
    result = run(os.environ[BASE_PYTHON_ENV])
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_feature_without_its_extra_names_the_extra(tmp_path):
    # Only the feature fails, in one line that says what to install.
    code = f"""
import sys
sys.path.insert(0, {str(SCRIPT.parent)!r})
import base_install
base_install.block_extras()
from sealgraph.cli import main
sys.exit(main(["index", {str(tmp_path)!r}, "--index", "qdrant://127.0.0.1:9/x"]))
"""
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
    )
    err = result.stderr.strip().splitlines()
    assert result.returncode != 0 and len(err) == 1, result.stderr
    assert "pip install 'sealgraph[qdrant]'" in err[0], err
