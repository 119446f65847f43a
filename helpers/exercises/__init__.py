"""Exercises that teach: predict, explain, write code, each checked without showing its answer.

Introduced in ``00_overview``. A notebook's exercise is a Markdown cell ``**Exercise 02.3 (code).** ...``,
then an answer cell the learner fills in, ending ``check("02.3", answer)``. The answer cell never states
the expected value: :func:`check` looks it up here, by exercise id, in the bank of the notebook
(``helpers/exercises/nb02.py`` ...), where it is computed by the engine.

Three kinds (:data:`KINDS`):

- ``predict``: write a guess *before* running the check; the check then shows the engine's figure and how far
  off the guess was (within ``tolerance`` counts as a good guess).
- ``explain``: pick one of the lettered choices (or type a short word); checked, with a hint when wrong.
- ``code``: write a small function; the check calls it on several configurations and compares each result
  with the engine.

The feedback is printed in the reader's language: after ``use_language("zh")`` (the zh notebooks' set-up cell),
``练习 00.1：未作答``; a hint and a unit come from ``data/zh/plots.json``, like the figures' texts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from ..language import current_language, translate

KINDS = ("predict", "explain", "code")


@dataclass(frozen=True)
class Case:
    """One call of a code exercise: the keyword arguments, the engine's result, and a label for the hint.
    No notebook calls it; it works behind the helpers of ``00_overview``."""

    kwargs: Mapping[str, Any]
    expected: Any
    label: str


@dataclass(frozen=True)
class Exercise:
    """One exercise of the bank, keyed by ``"NN.K"`` (notebook NN, exercise K).

    ``answer`` computes the expected value for ``predict`` and ``explain``; ``cases`` gives the calls a
    ``code`` exercise is checked on, and ``solution`` is a reference implementation (the tests run it
    through :func:`check`). ``choices`` lists the accepted letters of an ``explain`` exercise;
    ``tolerance`` is the relative error a ``predict`` guess may have to count as close.
    No notebook calls it; it works behind the helpers of ``00_overview``.
    """

    id: str
    kind: str
    answer: Callable[[], Any] | None = None
    cases: Callable[[], Sequence[Case]] | None = None
    solution: Callable[..., Any] | None = None
    choices: tuple[str, ...] = ()
    tolerance: float = 0.1
    unit: str = ""
    hint: str = ""
    accept: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"{self.id}: kind must be one of {KINDS}, got {self.kind!r}")
        if self.kind == "code" and (self.cases is None or self.solution is None):
            raise ValueError(f"{self.id}: a code exercise needs cases and a solution")
        if self.kind != "code" and self.answer is None:
            raise ValueError(f"{self.id}: a {self.kind} exercise needs an answer")


BANK: dict[str, Exercise] = {}
_LOADED: list[bool] = []


def register(*exercises: Exercise) -> None:
    """Add exercises to the bank (each notebook's ``nbNN`` module calls this once).

    No notebook calls it; it works behind the helpers of ``00_overview``.
    """
    for exercise in exercises:
        if exercise.id in BANK:
            raise ValueError(f"exercise {exercise.id} is registered twice")
        BANK[exercise.id] = exercise


def exercise(exercise_id: str) -> Exercise:
    """The bank's entry for ``"NN.K"``.

    No notebook calls it; it works behind the helpers of ``00_overview``.
    """
    _load()
    if exercise_id not in BANK:
        raise KeyError(f"no exercise {exercise_id!r}; the bank holds {', '.join(sorted(BANK))}")
    return BANK[exercise_id]


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _zh() -> bool:
    return current_language() == "zh"


def _show(value: Any, unit: str = "") -> str:
    if _zh() and unit.strip():
        unit = unit[:len(unit) - len(unit.lstrip())] + translate(unit.strip(), printed=True)
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}{unit}"
    if isinstance(value, float):
        return f"{value:,.4g}{unit}"
    return repr(value)


def _choices(values: Sequence[str]) -> str:
    return ("、" if _zh() else ", ").join(map(repr, values))


def _not_yet(why: str = "") -> str:
    """``not yet`` (还不对), with the reason after it."""
    if _zh():
        return "还不对" + (f"：{why}" if why else "")
    return "not yet" + (f": {why}" if why else "")


def _predict(ex: Exercise, guess: Any) -> str:
    if not _number(guess):
        return _not_yet(f"猜测应是一个数，而不是 {type(guess).__name__}" if _zh()
                        else f"a guess is a number, not {type(guess).__name__}")
    actual = ex.answer()
    off = (guess - actual) / actual if actual else math.inf
    if _zh():
        if abs(off) <= ex.tolerance:
            how = "猜得不错" if guess != actual else "完全正确"
        else:
            how = f"{'偏高' if off > 0 else '偏低'} {abs(off):.0%}"
        return f"{how}：引擎算出 {_show(actual, ex.unit)}，你猜的是 {_show(guess, ex.unit)}"
    if abs(off) <= ex.tolerance:
        how = "a good guess" if guess != actual else "exact"
    else:
        how = f"{'too high' if off > 0 else 'too low'} by {abs(off):.0%}"
    return f"{how}: the engine says {_show(actual, ex.unit)}, you guessed {_show(guess, ex.unit)}"


def _explain(ex: Exercise, answer: Any) -> str:
    if not isinstance(answer, str):
        return _not_yet(f"请用字符串作答，从 {_choices(ex.choices or ex.accept)} 中选一个" if _zh()
                        else f"answer with a string, one of {_choices(ex.choices or ex.accept)}")
    given = answer.strip().lower().rstrip(".)")
    expected = str(ex.answer()).lower()
    if ex.choices and given not in ex.choices:
        return _not_yet(f"请从 {_choices(ex.choices)} 中选一个" if _zh() else f"choose one of {_choices(ex.choices)}")
    if given == expected or given in ex.accept:
        return "正确" if _zh() else "correct"
    if not ex.hint:
        return _not_yet()
    return f"还不对。提示：{translate(ex.hint, printed=True)}" if _zh() else f"not yet: {ex.hint}"


def _code(ex: Exercise, function: Any) -> str:
    if not callable(function):
        return _not_yet("请传入函数本身（只写函数名，不要调用它）" if _zh()
                        else "pass your function itself (its name, without calling it)")
    cases = list(ex.cases())
    for case in cases:
        try:
            got = function(**case.kwargs)
        except NotImplementedError:
            return _not_attempted()
        except Exception as error:  # the learner's code: report, never raise
            raised = f"{error.__class__.__name__}: {error}"
            return _not_yet(f"在 {case.label} 上抛出了 {raised}" if _zh() else f"it raised {raised} (for {case.label})")
        if got is None and case is cases[0]:
            return _not_attempted()
        if got != case.expected or isinstance(got, bool) != isinstance(case.expected, bool):
            side = ""
            if _number(got) and _number(case.expected):
                side = ("，偏高" if got > case.expected else "，偏低") if _zh() else \
                    (", too high" if got > case.expected else ", too low")
            return _not_yet(f"{case.label} 上的结果不对{side}" if _zh() else f"wrong for {case.label}{side}")
    return f"在全部 {len(cases)} 个配置上都正确" if _zh() else f"correct on all {len(cases)} configurations"


def _not_attempted(predict: bool = False) -> str:
    if _zh():
        return "未作答" + ("：先写下你的猜测，再运行这个单元格" if predict else "")
    return "not attempted" + (": write your guess first, then run this cell" if predict else "")


def verdict(exercise_id: str, answer: Any) -> str:
    """What :func:`check` prints after the exercise id: ``not attempted``, ``correct``, or a hint (in Chinese after
    ``use_language("zh")``: ``未作答``, ``正确``, ``还不对。提示：……``).

    No notebook calls it; it works behind the helpers of ``00_overview``.
    """
    ex = exercise(exercise_id)
    if answer is None:
        return _not_attempted(ex.kind == "predict")
    return {"predict": _predict, "explain": _explain, "code": _code}[ex.kind](ex, answer)


def check(exercise_id: str, answer: Any) -> None:
    """Print ``Exercise NN.K: <verdict>`` for a learner's answer, looked up in the bank (see :func:`verdict`);
    ``练习 NN.K：<verdict>`` after ``use_language("zh")``.

    Introduced in ``00_overview``.
    """
    if _zh():
        print(f"练习 {exercise_id}：{verdict(exercise_id, answer)}")
    else:
        print(f"Exercise {exercise_id}: {verdict(exercise_id, answer)}")


def _load() -> None:
    """Import every notebook's bank module (each registers its exercises)."""
    if _LOADED:
        return
    _LOADED.append(True)
    import importlib
    import pkgutil

    for module in sorted(m.name for m in pkgutil.iter_modules(__path__) if m.name.startswith("nb")):
        importlib.import_module(f"{__name__}.{module}")
