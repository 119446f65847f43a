"""Shared fixtures: the shipped configs, and a runner for ``python -m helpers``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MODELS = sorted(p.stem for p in (ROOT / "data" / "models").glob("*.json"))


def run_cli(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    """Run ``python -m helpers ARGS`` in a fresh interpreter."""
    return subprocess.run([sys.executable, "-m", "helpers", *args], capture_output=True, text=True, cwd=cwd)


@pytest.fixture
def write_config(tmp_path: Path):
    """Write a dict (or raw text) as a config.json and return its path."""

    def write(content: dict | str, name: str = "config.json") -> Path:
        path = tmp_path / name
        path.write_text(content if isinstance(content, str) else json.dumps(content))
        return path

    return write
