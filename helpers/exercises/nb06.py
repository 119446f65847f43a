"""Exercises of ``06_full_bert``: expected answers computed by the engine, looked up by id."""

from __future__ import annotations

from . import Case, Exercise, register
from ..count import count_model
from ..params import EMBEDDINGS
from ..lessons.scaling import HEAD_SIZE, scaled_bert


def _deep_large_embedding_share() -> float:
    """The embedding tables' share, in percent, of a BERT 48 layers deep at bert-large's width (not in the deck)."""
    r = count_model(scaled_bert(1024, L=48))
    return 100 * r.components[EMBEDDINGS] / r.total


def _widest_bert(N: int, L: int, V: int) -> int:
    """Reference solution: the N(H) of the notebook's scaling section, inverted by stepping H up by 64."""
    def n(H: int) -> int:
        return (V + 512 + 2) * H + L * (12 * H * H + 13 * H) + H * H + 3 * H
    H = 64
    while n(H + 64) <= N:
        H += 64
    return H


BUDGETS = ((110_000_000, 12, 30522), (340_000_000, 24, 30522), (1_000_000_000, 24, 30522),
           (50_000_000, 6, 30522), (20_000_000, 4, 21128), (7_000_000_000, 32, 32000))


def _widest_cases() -> list[Case]:
    """For each budget, the widest ``scaled_bert`` whose engine count fits: a search over counted models."""
    out = []
    for N, L, V in BUDGETS:
        fits = [H for H in range(HEAD_SIZE, 8192 + 1, HEAD_SIZE) if count_model(scaled_bert(H, L=L, V=V)).total <= N]
        assert fits and fits[-1] < 8192, "the search range covers the budget"
        out.append(Case({"N": N, "L": L, "V": V}, fits[-1], f"N = {N:,}, L = {L}, V = {V}"))
    return out


register(
    Exercise("06.1", "explain", answer=lambda: "c", choices=("a", "b", "c", "d"),
             hint="round both of bert-base's exact counts, BertModel and BertForPreTraining, to the nearest ten million"),
    Exercise("06.2", "explain", answer=lambda: "b", choices=("a", "b", "c", "d"),
             hint="look at the first row's dtype: what kind of numbers does it hold?"),
    Exercise("06.3", "predict", answer=_deep_large_embedding_share, tolerance=0.1, unit="%"),
    Exercise("06.4", "code", cases=_widest_cases, solution=_widest_bert),
)
