"""The console command ``paramcount`` (``[project.scripts]`` in pyproject.toml) is ``python -m helpers``, installed.

``make env`` installs it into .venv/bin beside the interpreter; it runs the same ``helpers.cli.main``, so the two
print the same bytes and return the same exit status.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
COMMAND = Path(sys.executable).parent / "paramcount"


def run(argv: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(argv, capture_output=True, text=True, cwd=ROOT, timeout=60)


def test_declared_in_pyproject():
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]
    assert scripts == {"paramcount": "helpers.cli:main"}


@pytest.mark.parametrize("args", [["count", "bert-base-uncased"], ["count", "gpt2", "--json"],
                                  ["flops", "bert-base-uncased", "--batch", "1", "--seq-len", "128"],
                                  ["count", "no-such-model"]], ids=lambda a: " ".join(a))
def test_paramcount_is_python_m_helpers(args):
    assert COMMAND.is_file(), f"no {COMMAND}: run `make env` (it installs [project.scripts])"
    console, module = run([str(COMMAND), *args]), run([sys.executable, "-m", "helpers", *args])
    assert (console.returncode, console.stdout) == (module.returncode, module.stdout)
    assert console.stderr == module.stderr.replace("python -m helpers", "paramcount")  # each names itself in help
    assert console.stdout or console.returncode == 2


def test_paramcount_counts_bert_base():
    from helpers import count_model, load_config

    out = run([str(COMMAND), "count", "bert-base-uncased"])
    total = count_model(load_config("bert-base-uncased")).total
    assert out.returncode == 0 and f"total {total:,}" in " ".join(out.stdout.split())
