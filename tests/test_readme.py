"""The README's command-line examples are real: each ``$ command`` is run and its output compared."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"


def sessions() -> list[list[tuple[str, str]]]:
    """Per fenced block that starts with ``$ ``: its (command, expected output) pairs, in order."""
    blocks = []
    for block in re.findall(r"```\n(.*?)```", README.read_text(), flags=re.S):
        if block.startswith("$ "):
            blocks.append([tuple(chunk.partition("\n")[::2]) for chunk in re.split(r"^\$ ", block, flags=re.M)[1:]])
    return blocks


@pytest.mark.parametrize("session", sessions(), ids=lambda s: s[-1][0])
def test_readme_session(tmp_path, session):
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    for command, expected in session:  # one working directory per block, so a block can write a file first
        result = subprocess.run(["bash", "-c", command], capture_output=True, text=True, cwd=tmp_path, env=env)
        assert result.stdout + result.stderr == expected, command


def test_readme_has_examples():
    assert any(c.startswith("python -m helpers count") for s in sessions() for c, _ in s)


def peak_tables() -> list[list[str]]:
    """The README's tables of measured peaks (rows, then the summary line under them)."""
    lines = README.read_text().splitlines()
    tables = []
    for i, line in enumerate(lines):
        if line.startswith("| step | GPU peak | before |"):
            end = next(j for j in range(i, len(lines)) if not lines[j].startswith("|"))
            summary = next(line for line in lines[end:] if line.strip())
            tables.append(lines[i:end] + [summary])
    return tables


@pytest.mark.parametrize("heldout", [False, True], ids=["measured", "held-out"])
def test_readme_peak_tables_are_what_tools_peak_table_prints(heldout):
    """Every cell but the simulator's (make check-peaks reruns those): the GPU, the engine before, the closed form."""
    from tools import peak_table

    readme = peak_tables()[int(heldout)]
    printed = peak_table.table(simulate=False, heldout=heldout).splitlines()
    rows, summary = printed[2:-2], printed[-1]
    assert len(readme) - 3 == len(rows)
    for got, want in zip(readme[2:-1], rows):
        assert got.split(" | ")[:6] == want.removesuffix(" |").split(" | ")[:6]
    assert readme[-1].startswith(summary.removesuffix(" (GiB = 2³⁰ bytes)"))
