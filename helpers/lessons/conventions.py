"""Which convention a published parameter count follows: total, active, with or without the vocabulary tables.

Introduced in ``09_modern_architectures``. A figure such as "46.7B" or "3.3B activated" is a rounded count of
*something*: every parameter, the parameters one token uses (a mixture of experts), or Kaplan et al. 2020's
non-embedding count. :func:`active_conventions` computes each candidate exactly from the engine's table, and
:func:`matching_conventions` says which of them round to the figure as it is written (:func:`round_as`).
"""

from __future__ import annotations

import re
from fractions import Fraction

from ..config import ModelConfig
from ..count import count_model
from ..flops import non_embedding_parameters
from ..params import EMBEDDINGS, TABLE, param_layout

_STATED = re.compile(r"^(\d+)(?:\.(\d+))?(\s*)(B|M|billion|million)$")
_UNITS = {"B": 10**9, "billion": 10**9, "M": 10**6, "million": 10**6}

TOTAL = "total: every parameter"
ACTIVE = "active: every parameter a token uses"
ACTIVE_NO_INPUT = "active, the input token table left out"
NON_EMBEDDING = "non-embedding total (Kaplan et al. 2020)"
NON_EMBEDDING_ACTIVE = "non-embedding active"
CONVENTIONS = (TOTAL, ACTIVE, ACTIVE_NO_INPUT, NON_EMBEDDING, NON_EMBEDDING_ACTIVE)


def round_as(n: int, stated: str, cut: bool = False) -> str:
    """``n`` written the way ``stated`` is ("46.7B", "3.3B", "60 million", "213M"): same unit, same decimals.

    Introduced in ``09_modern_architectures``. Rounded to the nearest, or with ``cut`` cut off after the last
    decimal shown (3,353,032,704 is "3.4B" rounded, "3.3B" cut off). Raises ``ValueError`` for a figure not of
    that form.
    """
    match = _STATED.match(stated.strip())
    if not match:
        raise ValueError(f"stated: {stated!r} is not a figure like '46.7B', '213M' or '60 million'")
    decimals = len(match.group(2) or "")
    exact = Fraction(n, _UNITS[match.group(4)]) * 10**decimals
    value = Fraction(int(exact) if cut else round(exact), 10**decimals)
    return f"{float(value):.{decimals}f}{match.group(3)}{match.group(4)}"


def _input_tables(config: ModelConfig) -> int:
    """The input token tables (and position tables): the vocabulary tensors a token only looks up."""
    return sum((n * p.count for p, n in param_layout(config).rows() if p.component == EMBEDDINGS and p.kind == TABLE), 0)


def active_conventions(config: ModelConfig) -> dict[str, int]:
    """Each convention of :data:`CONVENTIONS`, counted exactly from the engine's table.

    Introduced in ``09_modern_architectures``. "Active" is :attr:`helpers.count.Count.active` (the total less the
    routed experts a token skips; the total for a dense model); "non-embedding" is Kaplan et al. 2020's N
    (:func:`helpers.flops.non_embedding_parameters`: no vocabulary or position tables, no untied output head).
    """
    result = count_model(config)
    non_embedding = non_embedding_parameters(config)
    return {
        TOTAL: result.total,
        ACTIVE: result.active,
        ACTIVE_NO_INPUT: result.active - _input_tables(config),
        NON_EMBEDDING: non_embedding,
        NON_EMBEDDING_ACTIVE: result.active - (result.total - non_embedding),
    }


def matching_conventions(config: ModelConfig, stated: str, cut: bool = False) -> list[str]:
    """The conventions of :func:`active_conventions` whose exact count, rounded (or ``cut`` off) as ``stated`` is,
    gives ``stated``.

    Introduced in ``09_modern_architectures``. An empty list: no convention reproduces the figure.
    """
    return [name for name, n in active_conventions(config).items() if round_as(n, stated, cut) == stated.strip()]
