"""Exercises: the checker itself, and every notebook's exercises against their solutions.

Each notebook's code is run with ``helpers.exercises.check`` recording what it is asked to check, so the
expected answers come from the notebook's own helpers calls; a solution that states its final number
must state exactly that number.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from helpers.exercises import check, verdict

NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("*.ipynb"))
# a stated result is written with thousands separators (plain digits are sizes: V = 30522, H = 1024)
NUMBER = re.compile(r"(?<![\d.,])\d{1,3}(?:,\d{3})+(?![\d,]*\.\d)")


def test_verdict():
    assert verdict(None, 5) == "not attempted"
    assert verdict(5, 5) == "correct"
    assert verdict(6, 5) == "not yet: too high"
    assert verdict(4, 5) == "not yet: too low"
    assert verdict(5.0, 5).startswith("not yet: give an exact integer")
    assert verdict(True, 1).startswith("not yet: give an exact integer")


def test_check_prints_without_giving_the_answer_away(capsys):
    check("Exercise 1", None, 123_456)
    check("Exercise 2", 7, 123_456)
    out = capsys.readouterr().out
    assert out == "Exercise 1: not attempted\nExercise 2: not yet: too low\n"
    assert "123" not in out


RUNNER = """
import json, sys
import matplotlib
matplotlib.use("Agg")
import helpers.exercises
seen = {}
helpers.exercises.check = lambda name, answer, expected: seen.update({name: [answer, expected]})
namespace = {"__name__": "__main__"}
for cell in json.load(open(sys.argv[1]))["cells"]:
    if cell["cell_type"] == "code":
        exec(compile("".join(cell["source"]), sys.argv[1], "exec"), namespace)
sys.stdout = sys.__stdout__
print("\\nCHECKED " + json.dumps(seen))
"""


def run_notebook(path: Path) -> dict[str, tuple[object, int]]:
    """Execute a notebook's code in a fresh interpreter, as a kernel would, with ``check`` recording its calls.

    Returns ``{exercise: (answer, expected)}``; the expected answers come from the notebook's own helpers calls.
    """
    result = subprocess.run([sys.executable, "-c", RUNNER, path.name], capture_output=True, text=True,
                            cwd=path.parent)
    assert result.returncode == 0, result.stderr[-3000:]
    checked = json.loads(result.stdout.rsplit("\nCHECKED ", 1)[1])
    return {name: (answer, expected) for name, (answer, expected) in checked.items()}


def solutions(path: Path) -> dict[str, str]:
    """``{"Exercise N": solution text}`` from the markdown cells tagged ``solution``."""
    found = {}
    for cell in json.loads(path.read_text())["cells"]:
        if "solution" in cell["metadata"].get("tags", []):
            text = "".join(cell["source"])
            number = re.match(r"\*\*Solution (\d+)\.\*\*", text)
            assert number, f"a solution cell must start with **Solution N.**: {text[:60]!r}"
            found[f"Exercise {number.group(1)}"] = text
    return found


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_exercises_match_their_solutions(path):
    checked = run_notebook(path)
    assert checked, "a notebook without exercises"
    assert all(answer is None for answer, _ in checked.values()), "stored answer cells must start unanswered"
    assert all(isinstance(expected, int) and not isinstance(expected, bool) for _, expected in checked.values())
    texts = solutions(path)
    assert sorted(texts) == sorted(checked), "one solution per exercise, numbered alike"
    for exercise, text in texts.items():
        numbers = NUMBER.findall(text)
        if numbers:  # a solution that states its final number states the checked one
            assert int(numbers[-1].replace(",", "")) == checked[exercise][1], (exercise, numbers[-1])
