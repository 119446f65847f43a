"""Exercises of ``00_overview``: expected answers computed by the engine, looked up by id."""

from __future__ import annotations

from . import Case, Exercise, register
from ..config import load_config
from ..count import count_model
from ..params import EMBEDDINGS, param_table, select, total

MULTILINGUAL = "bert-base-multilingual-cased"
# five BertModel/RobertaModel configurations of data/models/, each with a different V, H, L, I, P or T
CODE_MODELS = ("bert-base-uncased", "bert-large-uncased", "bert-base-chinese", MULTILINGUAL, "roberta-base")


def _multilingual_total() -> int:
    return count_model(load_config(MULTILINGUAL)).total


def _multilingual_embedding_share() -> float:
    params = param_table(load_config(MULTILINGUAL))
    return 100 * total(select(params, group=EMBEDDINGS)) / total(params)


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
    Exercise("00.1", "predict", answer=_multilingual_total, tolerance=0.1),
    Exercise("00.2", "predict", answer=_multilingual_embedding_share, tolerance=0.1, unit="%"),
    Exercise("00.3", "explain", answer=lambda: "c", choices=("a", "b", "c", "d"),
             hint="check each choice against the slides: is the vocabulary the same? is 108,808,704 "
                  "BertModel's exact count? are the pre-training heads part of BertModel?"),
    Exercise("00.4", "code", cases=_bert_cases, solution=_bert_params),
)
