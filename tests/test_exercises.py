"""Exercises: the checker itself, and every notebook's exercises against the bank.

The contract (helpers/exercises/__init__.py): an exercise is a Markdown cell ``**Exercise NN.K (kind).**``,
then an answer cell that ends ``check("NN.K", ...)`` and states no expected value, then a solution cell
tagged ``solution``. The bank computes each answer with the engine; its reference solution must pass the
check and a wrong answer must not. No answer may be printed above its exercise.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from helpers.exercises import BANK, KINDS, Case, Exercise, _load, check, exercise, verdict

NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("*.ipynb"))
HEADING = re.compile(r"^\*\*Exercise (\d\d)\.(\d+) \((predict|explain|code)\)\.\*\*")
CALL = re.compile(r"""check\(\s*["'](\d\d\.\d+)["']""")
_load()


def cells(path: Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def text(cell: dict) -> str:
    src = cell["source"]
    return src if isinstance(src, str) else "".join(src)


def outputs(cell: dict) -> str:
    parts = []
    for out in cell.get("outputs", []):
        if "text" in out:
            parts.append("".join(out["text"]))
        for mime in ("text/plain", "text/markdown", "text/html"):
            if mime in out.get("data", {}):
                parts.append("".join(out["data"][mime]))
    return "\n".join(parts)


def exercises_in(path: Path) -> list[tuple[int, str, str]]:
    """``(cell index, "NN.K", kind)`` for each exercise heading of a notebook."""
    found = []
    for i, cell in enumerate(cells(path)):
        match = HEADING.match(text(cell)) if cell["cell_type"] == "markdown" else None
        if match:
            found.append((i, f"{match.group(1)}.{match.group(2)}", match.group(3)))
    return found


def spellings(value: object) -> list[str]:
    """How an answer would look if a notebook printed it."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return []
    if isinstance(value, int):
        return [f"{value:,}", str(value)] if abs(value) >= 1000 else []
    return [f"{value:.1f}%", f"{100 * value:.1f}%"] if value else []


# --- the checker --------------------------------------------------------------------------------------

def _square(n: int) -> int:
    return n * n


TOY = {
    "99.1": Exercise("99.1", "predict", answer=lambda: 1_000_000, tolerance=0.1),
    "99.2": Exercise("99.2", "explain", answer=lambda: "b", choices=("a", "b", "c"), hint="look again at W_O"),
    "99.3": Exercise("99.3", "code", cases=lambda: [Case({"n": n}, n * n, f"n = {n}") for n in (2, 3, 50)],
                     solution=_square),
}


@pytest.fixture
def toy_bank(monkeypatch):
    for key, value in TOY.items():
        monkeypatch.setitem(BANK, key, value)


def test_predict_verdicts(toy_bank):
    assert verdict("99.1", None).startswith("not attempted")
    assert verdict("99.1", 1_000_000).startswith("exact")
    assert verdict("99.1", 950_000).startswith("a good guess")
    assert verdict("99.1", 2_000_000).startswith("too high by 100%")
    assert verdict("99.1", 500_000).startswith("too low by 50%")
    assert verdict("99.1", "a lot").startswith("not yet")


def test_explain_verdicts(toy_bank):
    assert verdict("99.2", None) == "not attempted"
    assert verdict("99.2", "b") == verdict("99.2", " B) ") == "correct"
    assert verdict("99.2", "a") == "not yet: look again at W_O"
    assert verdict("99.2", "z").startswith("not yet: choose one of")
    assert verdict("99.2", 2).startswith("not yet: answer with a string")


def test_code_verdicts(toy_bank):
    def unanswered(n):
        return None

    def raises(n):
        raise NotImplementedError

    assert verdict("99.3", _square) == "correct on all 3 configurations"
    assert verdict("99.3", unanswered) == verdict("99.3", raises) == "not attempted"
    assert verdict("99.3", lambda n: n * n + (n == 50)) == "not yet: wrong for n = 50, too high"
    assert verdict("99.3", lambda n: 1 / 0).startswith("not yet: it raised ZeroDivisionError")
    assert verdict("99.3", 4).startswith("not yet: pass your function")


def test_check_prints_without_giving_the_answer_away(toy_bank, capsys):
    check("99.1", None)
    check("99.2", "a")
    check("99.3", lambda n: 0)
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "Exercise 99.1: not attempted: write your guess first, then run this cell"
    assert "1,000,000" not in out and "'b'" not in out and "2500" not in out


def test_a_malformed_exercise_is_refused():
    with pytest.raises(ValueError):
        Exercise("99.9", "guess", answer=lambda: 1)
    with pytest.raises(ValueError):
        Exercise("99.9", "code", answer=lambda: 1)
    with pytest.raises(KeyError):
        exercise("99.99")


# --- the bank against itself ---------------------------------------------------------------------------

@pytest.mark.parametrize("exercise_id", sorted(BANK), ids=str)
def test_the_reference_answer_passes_and_a_wrong_one_does_not(exercise_id):
    ex = BANK[exercise_id]
    if ex.kind == "code":
        assert verdict(exercise_id, ex.solution).startswith("correct on all")
        assert len(ex.cases()) >= 3, "a code exercise is checked on at least three configurations"

        def off_by_one(**kwargs):
            return ex.solution(**kwargs) + 1

        assert verdict(exercise_id, off_by_one).startswith("not yet")
    elif ex.kind == "predict":
        answer = ex.answer()
        assert verdict(exercise_id, answer).startswith("exact")
        assert verdict(exercise_id, answer * 3 if answer else 1).startswith("too")
    else:
        answer = ex.answer()
        assert verdict(exercise_id, answer) == "correct"
        wrong = [c for c in ex.choices if c != answer]
        assert not ex.choices or answer in ex.choices
        if wrong:
            assert verdict(exercise_id, wrong[0]).startswith("not yet")


# --- the notebooks against the bank ----------------------------------------------------------------------

@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_notebook_teaches_with_three_kinds(path):
    found = exercises_in(path)
    assert len(found) >= 3, "at least three exercises"
    assert {kind for _, _, kind in found} == set(KINDS), "one of each kind: predict, explain, code"
    number = path.stem[:2]
    assert all(eid.startswith(number + ".") for _, eid, _ in found), "ids are numbered by their notebook"
    for _, eid, kind in found:
        assert eid in BANK, f"exercise {eid} is not in the bank"
        assert BANK[eid].kind == kind, f"{eid}: the heading says {kind}, the bank {BANK[eid].kind}"


def test_every_exercise_of_the_bank_is_in_its_notebook():
    in_notebooks = {eid for path in NOTEBOOKS for _, eid, _ in exercises_in(path)}
    assert sorted(BANK) == sorted(in_notebooks)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_answer_cells_hide_the_answer_and_solutions_follow(path):
    nb = cells(path)
    for i, eid, _ in exercises_in(path):
        # the slide's speaker notes may sit between the question and its answer cell
        after = [c for c in nb[i + 1:] if c["metadata"].get("slideshow", {}).get("slide_type") != "notes"]
        answer_cell, solution = after[0], after[1]
        assert answer_cell["cell_type"] == "code", f"{eid}: the answer cell comes right after the question (and its notes)"
        assert CALL.findall(text(answer_cell)) == [eid], f"{eid}: the answer cell calls check({eid!r}, ...)"
        assert "expected" not in text(answer_cell), f"{eid}: the answer cell states its expected value"
        assert outputs(answer_cell).startswith(f"Exercise {eid}: not attempted"), f"{eid}: stored unanswered"
        assert answer_cell["metadata"].get("slideshow", {}).get("slide_type") == "skip", f"{eid}: not on the slides"
        assert "solution" in solution["metadata"].get("tags", []), f"{eid}: a solution cell follows the answer cell"
        assert text(solution).startswith(f"**Solution {eid}.**")
        assert solution["metadata"].get("slideshow", {}).get("slide_type") == "skip"
        ex = BANK[eid]
        shown = [] if ex.kind == "code" else spellings(ex.answer())
        for value in shown:
            assert value not in text(answer_cell), f"{eid}: the answer cell shows {value}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_predicted_answer_is_printed_above_its_exercise(path):
    nb = cells(path)
    for i, eid, kind in exercises_in(path):
        if kind != "predict":
            continue
        above = "\n".join(text(c) + "\n" + outputs(c) for c in nb[:i])
        for value in spellings(BANK[eid].answer()):
            assert value not in above, f"{eid}: its answer {value} is already printed above the exercise"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_solutions_start_folded_in_jupyterlab(path):
    """A learner working in JupyterLab sees each solution collapsed until they click it open."""
    solutions = [c for c in cells(path) if "solution" in c["metadata"].get("tags", [])]
    assert solutions and all(c["metadata"].get("jupyter", {}).get("source_hidden") is True for c in solutions)
