"""The notebooks are stored executed, so nbval has something to compare (it passes unexecuted cells vacuously)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

_DIR = Path(__file__).resolve().parent.parent / "notebooks"
# the English notebooks and the Chinese edition's (notebooks/zh)
NOTEBOOKS = sorted(_DIR.glob("*.ipynb")) + sorted(_DIR.glob("zh/*.ipynb"))


def code_cells(path: Path) -> list[dict]:
    nb = json.loads(path.read_text())
    return [c for c in nb["cells"] if c["cell_type"] == "code" and "".join(c["source"]).strip()]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.relative_to(_DIR).as_posix())
def test_stored_executed_in_order_without_errors(path):
    cells = code_cells(path)
    assert cells, "a notebook without code"
    counts = [c["execution_count"] for c in cells]
    assert None not in counts, "unexecuted code cells: nbval would pass them without comparing"
    assert counts == list(range(1, len(cells) + 1)), f"not run top to bottom in one kernel: {counts}"
    for cell in cells:
        for out in cell["outputs"]:
            assert out["output_type"] != "error", "a stored error"
            assert out.get("name") != "stderr", f"stderr output: {''.join(out.get('text', ''))[:200]}"


def test_an_unexecuted_notebook_is_caught(tmp_path):
    nb = {"cells": [{"cell_type": "code", "source": ["1 + 1"], "execution_count": None, "outputs": [],
                     "metadata": {}}], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path = tmp_path / "unexecuted.ipynb"
    path.write_text(json.dumps(nb))
    with pytest.raises(AssertionError, match="unexecuted"):
        test_stored_executed_in_order_without_errors(path)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.relative_to(_DIR).as_posix())
def test_stored_kernelspec_is_the_installed_kernel(path):
    """JupyterLab rewrites a differing kernelspec on opening, which marks a learner's untouched notebook modified."""
    from jupyter_client.kernelspec import KernelSpecManager

    spec = KernelSpecManager().get_kernel_spec("python3")
    stored = json.loads(path.read_text())["metadata"]["kernelspec"]
    assert stored == {"display_name": spec.display_name, "language": spec.language, "name": "python3"}
