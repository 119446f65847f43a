"""Exercises of ``05_pooler_and_heads``: expected answers computed by the engine, looked up by id."""

from __future__ import annotations

from . import Case, Exercise, register
from ..config import load_config
from ..params import param_table, pretraining_heads, total
from ..lessons.scaling import scaled_bert


XLMR_V = 250_002   # XLM-R's vocabulary (Conneau et al. 2020), on bert-base's shape: a setting the deck does not show


def _xlmr_sized_heads() -> int:
    """The ``cls.*`` tensors ``BertForPreTraining`` would add for bert-base's shape with XLM-R's vocabulary."""
    return total(pretraining_heads(scaled_bert(768, V=XLMR_V)))


def _pretraining_head_params(V: int, H: int, tied: bool) -> int:
    transform = H * H + H + 2 * H          # dense H×H with bias, LayerNorm γ and β
    decoder = V + (0 if tied else V * H)   # the bias; the weight only when it is not the word table
    nsp = 2 * H + 2
    return transform + decoder + nsp


def _head_cases() -> list[Case]:
    out = []
    for name, tied in (("bert-base-uncased", True), ("bert-base-uncased", False), ("bert-large-uncased", True),
                       ("bert-base-chinese", False), ("bert-base-multilingual-cased", True)):
        c = load_config(name)
        heads = pretraining_heads(c)
        # an untied decoder holds a weight of its own, shaped like the word table of the engine's table
        word = next(p for p in param_table(c) if p.name == "embeddings.word_embeddings.weight")
        expected = total(heads) + (0 if tied else word.count)
        out.append(Case({"V": c["V"], "H": c["H"], "tied": tied}, expected, f"{name}, tied={tied}"))
    return out


register(
    Exercise("05.1", "predict", answer=_xlmr_sized_heads, tolerance=0.1),
    Exercise("05.2", "explain", answer=lambda: "b", choices=("a", "b", "c", "d"),
             hint="follow the arrows of the picture: which head reads the pooled vector, and which reads every position?"),
    Exercise("05.3", "explain", answer=lambda: "c", choices=("a", "b", "c", "d"),
             hint="which token does the model meet in pre-training but never in fine-tuning?"),
    Exercise("05.4", "code", cases=_head_cases, solution=_pretraining_head_params),
)
