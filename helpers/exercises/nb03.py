"""Exercises of ``03_feed_forward``: expected answers computed by the engine, looked up by id."""

from __future__ import annotations

from . import Case, Exercise, register
from ..config import load_config
from ..params import FEED_FORWARD, param_table, select, total


def _ffn_layer(name: str) -> int:
    """The engine's feed-forward parameters of layer 0 of a named model."""
    return total(select(param_table(load_config(name)), component=FEED_FORWARD, layer=0))


def _ratio() -> float:
    return _ffn_layer("bert-large-uncased") / _ffn_layer("bert-base-uncased")


def _ffn_params(H: int, I: int, gated: bool) -> int:
    """Reference solution of 03.4: two biased matrices (BERT, GPT-2) or three without bias (SwiGLU)."""
    return 3 * H * I if gated else 2 * H * I + I + H


def _ffn_cases() -> list[Case]:
    out = []
    for name in ("bert-base-uncased", "bert-large-uncased", "gpt2-xl", "llama-7b", "llama-2-70b"):
        c = load_config(name)
        kw = dict(H=c["H"], I=c["I"], gated=c.model_type == "llama")
        out.append(Case(kw, _ffn_layer(name), name))
    return out


register(
    Exercise("03.1", "explain", answer=lambda: "b", choices=("a", "b", "c", "d"),
             hint="is there one W₁ per position, or one W₁ that every position goes through?"),
    Exercise("03.2", "predict", answer=_ratio, tolerance=0.05, unit="×"),
    Exercise("03.3", "explain", answer=lambda: "b", choices=("a", "b", "c", "d"),
             hint="both checkpoints hold the same H × I numbers; compare how nn.Linear and Conv1D multiply"),
    Exercise("03.4", "code", cases=_ffn_cases, solution=_ffn_params),
)
