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


def run_cli_without_torch(*args: str) -> subprocess.CompletedProcess[str]:
    """Run ``python -m helpers ARGS`` in a fresh interpreter that fails if anything imported torch."""
    code = (f"import sys, runpy; sys.argv = ['helpers', *{list(args)!r}]\n"
            "try:\n    runpy.run_module('helpers', run_name='__main__')\nexcept SystemExit:\n    pass\n"
            "assert 'torch' not in sys.modules, 'torch was imported'")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)


def assert_refused(result: subprocess.CompletedProcess[str], field: str) -> None:
    """Bad input: exit code 2, nothing on stdout, one stderr line ``error: FIELD: ...``, no traceback."""
    assert result.returncode == 2, result.stdout
    assert result.stdout == ""
    assert len(result.stderr.splitlines()) == 1, result.stderr
    assert result.stderr.startswith(f"error: {field}: ")
    assert "Traceback" not in result.stderr


@pytest.fixture
def write_config(tmp_path: Path):
    """Write a dict (or raw text) as a config.json and return its path."""

    def write(content: dict | str, name: str = "config.json") -> Path:
        path = tmp_path / name
        path.write_text(content if isinstance(content, str) else json.dumps(content))
        return path

    return write


def hf_model(raw: dict, device: str = "meta"):
    """transformers' model for a raw ``config.json`` (its family's class), eager attention and eager experts.

    The config is not parsed by the engine, so refusal tests can build what the engine refuses. Imports torch
    and transformers only when called (some tests run without them).
    """
    import torch
    import transformers

    from helpers.families import FAMILIES

    config = transformers.AutoConfig.for_model(**raw)
    config._attn_implementation = "eager"
    config._experts_implementation = "eager"  # a mixture's experts one matmul each (no effect on a dense model)
    with torch.device(device):
        return getattr(transformers, FAMILIES[raw["model_type"]].architecture)(config)
