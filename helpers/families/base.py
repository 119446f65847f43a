"""What several families build with: a composite family (:func:`composite`, :func:`nest`), a stack of two kinds of
layers (:func:`mixed_stack`, :func:`layer_runs`). The :class:`Family` record every family module fills in (and
:class:`ModelClass`, :class:`TextConfig`, :class:`StateTerm`) is :mod:`helpers.spec`'s, importable from here.

Introduced in ``00_overview`` (``ModelConfig.family``). See the README, "Adding a model family".
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Iterable, Mapping

# the records themselves live in helpers.spec (layer 0), importable from here
from ..spec import Block, Family, Formulas, Layout, ModelClass, StateTerm, TextConfig  # noqa: F401


def nest(layout: Layout, renames: Mapping[str, str], before: tuple[Block, ...] = ()) -> Layout:
    """A text family's layout inside a composite model: each name starting with a key of ``renames`` renamed
    (``{"model.": "model.language_model."}``), ``before`` (a vision tower and its projector) listed first.

    No notebook calls it; it works behind the helpers of ``00_overview``.
    """
    def rename(name: str) -> str:
        for old, new in renames.items():
            if name.startswith(old):
                return new + name[len(old):]
        return name

    blocks = tuple(Block(rename(b.prefix), b.params, b.layers) if b.layers is not None else
                   Block(b.prefix, tuple(replace(p, name=rename(p.name)) for p in b.params)) for b in layout.blocks)
    return Layout((*before, *blocks))


def composite(language: Family, **fields: Any) -> Family:
    """A vision-language family around the family of its language model (``language``, read as ``fields["text"]`` says):
    its FLOPs (text tokens only), its cache and positions are the text family's, and its heads were checked there
    (``heads_divide_hidden="never"``); ``fields`` give the rest (sizes, layout, formulas ...).

    No notebook calls it; it works behind the helpers of ``00_overview``.
    """
    inherited = {"flops": language.flops, "kv_cache": language.kv_cache, "state": language.state,
                 "positions": language.positions, "heads_divide_hidden": "never"}
    return Family(**{**inherited, **fields})


def too_many_experts(sizes: Mapping[str, int], key: str) -> tuple[str, str] | None:
    """More experts per token (k, ``num_experts_per_tok``) than the E experts the file gives under ``key``: the router's
    ``torch.topk`` cannot pick them (the model builds, its forward pass fails), as ``(key, why)`` for a family's
    ``runs``; None where k ≤ E. Every family with routed experts refuses it so.

    No notebook calls it; it works behind the helpers of ``00_overview``.
    """
    if sizes["k"] <= sizes["E"]:
        return None
    return ("num_experts_per_tok", f"{sizes['k']} experts per token, but only {key} = {sizes['E']} experts")


def experts_key(raw: Mapping[str, Any], keys: tuple[str, ...] = ("num_local_experts", "num_experts")) -> str:
    """The key a file gives its experts under: the first of ``keys`` (the field, then its aliases) it has, else the
    field's (Mixtral's and GPT-OSS's ``num_local_experts``, alias ``num_experts``).

    No notebook calls it; it works behind the helpers of ``00_overview``.
    """
    return next((key for key in keys if key in raw), keys[0])


def mixed_stack(L: int, dense_layers: int, dense: str, sparse: str, dense_count: str, sparse_count: str) -> str:
    """One formula for a stack of dense and sparse layers: ``dense`` in each of ``dense_layers``, ``sparse`` in the rest.

    ``dense_count`` and ``sparse_count`` write those numbers in symbols (Qwen3-MoE: ``"(L - L_e)"``, ``"L_e"``;
    DeepSeek-V3: ``"L_f"``, ``"(L - L_f)"``); a stack of one kind is ``L·(...)``.
    No notebook calls it; it works behind the helpers of ``00_overview``.
    """
    if dense_layers == L:
        return f"L*({dense})"
    if dense_layers == 0:
        return f"L*({sparse})"
    return f"{dense_count}*({dense}) + {sparse_count}*({sparse})"


def layer_runs(L: int, marked: Iterable[int]) -> list[tuple[range, bool]]:
    """Layers 0 … L − 1 as runs of consecutive layers of one kind, in order: True for the indices of ``marked`` (sorted,
    unique, within the stack), False for the others. A ``range`` of step 1 is read without a loop.

    No notebook calls it; it works behind the helpers of ``00_overview``. Qwen3-MoE marks its dense layers,
    Llama 4 its sparse ones.
    """
    if isinstance(marked, range) and marked.step == 1:
        parts = [(range(0, marked.start), False), (marked, True), (range(marked.stop, L), False)]
        return [(run, kind) for run, kind in parts if len(run)]
    found: list[tuple[range, bool]] = []
    start = 0
    for i in marked:
        if found and found[-1][1] and found[-1][0].stop == i:
            found[-1] = (range(found[-1][0].start, i + 1), True)
        else:
            if start < i:
                found.append((range(start, i), False))
            found.append((range(i, i + 1), True))
        start = i + 1
    if start < L:
        found.append((range(start, L), False))
    return found
