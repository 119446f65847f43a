"""Exercises of ``06_full_bert``: expected answers computed by the engine, looked up by id."""

from __future__ import annotations

from . import Case, Exercise, register
from ..config import load_config, model_names
from ..count import count_model
from ..params import EMBEDDINGS


def _embedding_share_percent(name: str) -> float:
    """The embedding tables' share of ``BertModel``, in percent, from the engine's count."""
    r = count_model(load_config(name))
    return 100 * r.groups[EMBEDDINGS] / r.total


def _bert_params(V: int, H: int, L: int, I: int, P: int, T: int) -> int:
    embeddings = (V + P + T) * H
    layer = (4 * H * H + 4 * H) + (2 * H * I + I + H) + 4 * H   # attention, feed-forward, two LayerNorms
    return embeddings + 2 * H + L * layer + H * H + H          # + embedding LayerNorm, layers, pooler


def _bert_cases() -> list[Case]:
    """Every BERT-shaped model of ``data/models/`` (``BertModel`` and ``RobertaModel``, pooler included)."""
    out = []
    for name in model_names():
        c = load_config(name)
        if c.model_type in ("bert", "roberta"):
            kw = {s: c[s] for s in ("V", "H", "L", "I", "P", "T")}
            out.append(Case(kw, count_model(c).total, name))
    return out


register(
    Exercise("06.1", "predict", answer=lambda: _embedding_share_percent("bert-large-uncased"), tolerance=0.1,
             unit="%"),
    Exercise("06.2", "explain", answer=lambda: "c", choices=("a", "b", "c", "d"),
             hint="round both of bert-base's exact counts, BertModel and BertForPreTraining, to the nearest ten million"),
    Exercise("06.3", "explain", answer=lambda: "b", choices=("a", "b", "c", "d"),
             hint="look at its dtype, and at what model.parameters() returns"),
    Exercise("06.4", "code", cases=_bert_cases, solution=_bert_params),
)
