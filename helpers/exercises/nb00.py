"""Exercises of ``00_overview``: expected answers computed by the engine, looked up by id."""

from __future__ import annotations

from . import Case, Exercise, register
from ..config import load_config
from ..count import count_model
from ..params import ATTENTION, EMBEDDINGS, FEED_FORWARD, POOLER, linear_biases, param_table, select, total

MULTILINGUAL = "bert-base-multilingual-cased"
# five BertModel/RobertaModel configurations of data/models/, each with a different V, H, L, I, P or T
CODE_MODELS = ("bert-base-uncased", "bert-large-uncased", "bert-base-chinese", MULTILINGUAL, "roberta-base")


def _writeup_gap() -> str:
    """00.1: write-up 000's figure is BertModel less its linear biases and pooler, and both round to 110M: "c"."""
    c = load_config("bert-base-uncased")
    params = param_table(c)
    exact = count_model(c).total
    biases = total(p for p in linear_biases(params) if p.component in (ATTENTION, FEED_FORWARD))
    without = exact - biases - total(select(params, component=POOLER))
    assert without == 108_808_704 and round(without, -7) == round(exact, -7) == 110_000_000
    return "c"


def _roberta_total() -> int:
    """00.2: what transformers' RobertaModel builds for roberta-base, pooler included (the published checkpoint
    has no pooler: 124,055,040 of these are in it, the solution says).
    """
    return count_model(load_config("roberta-base")).total


def _multilingual_embedding_share() -> float:
    """00.3: the embedding tables' share of bert-base-multilingual-cased, in percent."""
    params = param_table(load_config(MULTILINGUAL))
    return 100 * total(select(params, component=EMBEDDINGS)) / total(params)


def _bert_params(V: int, H: int, L: int, I: int, P: int, T: int) -> int:
    layer = (4 * H**2 + 4 * H) + (2 * H * I + I + H) + 4 * H
    return (V + P + T) * H + 2 * H + L * layer + H**2 + H


def _bert_cases() -> list[Case]:
    cases = []
    for name in CODE_MODELS:
        c = load_config(name)
        kwargs = {s: c[s] for s in ("V", "H", "L", "I", "P", "T")}
        cases.append(Case(kwargs, total(param_table(c)), name))
    return cases


register(
    Exercise("00.1", "explain", answer=_writeup_gap, choices=("a", "b", "c", "d"),
             hint="check each choice against the slide: is 108,808,704 the engine's exact count? does the "
                  "vocabulary differ? and what would a figure rounded to ten million tell you?"),
    Exercise("00.2", "predict", answer=_roberta_total, tolerance=0.1),
    Exercise("00.3", "predict", answer=_multilingual_embedding_share, tolerance=0.1, unit="%"),
    Exercise("00.4", "code", cases=_bert_cases, solution=_bert_params),
)
