"""Checking a learner's answer to an exercise against the engine, without printing the answer.

Introduced in ``00_overview``. Every notebook ends with Exercises whose answer cells start as
``answer = None`` and report ``not attempted`` until the learner fills them in.
"""

from __future__ import annotations


def verdict(answer: int | None, expected: int) -> str:
    """``not attempted``, ``correct``, or a hint (too high / too low) that does not give the answer away.

    Introduced in ``00_overview``.
    """
    if answer is None:
        return "not attempted"
    if isinstance(answer, bool) or not isinstance(answer, int):
        return f"not yet: give an exact integer, not {type(answer).__name__}"
    if answer == expected:
        return "correct"
    return "not yet: too high" if answer > expected else "not yet: too low"


def check(exercise: str, answer: int | None, expected: int) -> None:
    """Print ``Exercise N: <verdict>`` for a learner's answer (see :func:`verdict`).

    Introduced in ``00_overview``.
    """
    print(f"{exercise}: {verdict(answer, expected)}")
