"""Exercises of ``04_layer_norm``: expected answers computed by the engine, looked up by id."""

from __future__ import annotations

from . import Case, Exercise, register
from ..config import load_config
from ..params import LAYER_NORM, param_table, select, total


def _one_in() -> int:
    """GPT-3 175B: one parameter in how many is a LayerNorm γ or β (rounded down, as notebook 04 prints it)."""
    table = param_table(load_config("gpt3-175b"))
    return total(table) // total(select(table, component=LAYER_NORM))


def _norm_params(H: int, L: int, rms: bool, per_layer: int) -> int:
    """Reference solution of 04.4: per_layer norms in each of L layers and one outside, γ only (RMSNorm) or γ and β."""
    return (per_layer * L + 1) * H * (1 if rms else 2)


def _norm_rows(config) -> list:
    return select(param_table(config), component=LAYER_NORM)


def _norm_cases() -> list[Case]:
    out = []
    for name in ("bert-base-uncased", "bert-large-uncased", "gpt2", "gpt2-xl", "llama-7b", "llama-2-70b"):
        c = load_config(name)
        kw = dict(H=c["H"], L=c["L"], rms=c.model_type == "llama", per_layer=2)
        out.append(Case(kw, total(_norm_rows(c)), name))
    gemma = load_config("gemma-2-9b")  # four RMSNorms per layer: before and after each sublayer (Gemma Team 2024)
    kw = dict(H=gemma["H"], L=gemma["L"], rms=True, per_layer=4)
    out.append(Case(kw, total(_norm_rows(gemma)), "gemma-2-9b"))
    return out


register(
    Exercise("04.1", "predict", answer=_one_in, tolerance=0.15),
    Exercise("04.2", "explain", answer=lambda: "b", choices=("a", "b", "c", "d"),
             hint="subtract the mean from a vector whose entries are all equal: what is left to scale?"),
    Exercise("04.3", "explain", answer=lambda: "b", choices=("a", "b", "c", "d"),
             hint="follow the residual stream of a pre-LN model to its end: which additions are ever normalised?"),
    Exercise("04.4", "code", cases=_norm_cases, solution=_norm_params),
)
