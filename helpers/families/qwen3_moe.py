"""Qwen3-MoE as transformers builds it (``Qwen3MoeForCausalLM``): Qwen3's attention, a mixture of experts.

In ``09_modern_architectures``. Qwen3's layer (q/k RMSNorms per head, an explicit head_dim) with its SwiGLU replaced,
in the sparse layers, by ``num_experts`` (E) experts of width ``moe_intermediate_size`` (I_e), of which the
router (``mlp.gate``, E × H) picks ``num_experts_per_tok`` (k) per token. transformers 5 stores the experts
fused and registers them before the router: ``mlp.experts.gate_up_proj`` (E × 2I_e × H),
``mlp.experts.down_proj`` (E × H × I_e), then ``mlp.gate.weight``. Layer ``i`` is sparse when it is not in
``mlp_only_layers``, E > 0 and ``(i + 1) % decoder_sparse_step == 0``; the others keep a dense SwiGLU of
``intermediate_size`` (I). L_e counts the sparse layers. Qwen3-30B-A3B: 30.5B parameters, 3.3B active
(:attr:`helpers.count.Count.active`). The cache is LLaMA's; with ``use_sliding_window`` every layer keeps
the last ``sliding_window − 1`` tokens (Qwen3MoeConfig has no ``max_window_layers``).
"""

from __future__ import annotations

import json
from typing import Any, Mapping

from ..spec import ConfigError, Flag, ModelConfig, Size, read_int as _read_int
from ..spec import FEED_FORWARD, Block, Layout, Param
from . import llama, qwen3
from .base import Family, experts_key, layer_runs, mixed_stack, too_many_experts
from .heads import decoder_classes, expand_experts


def is_sparse(c: ModelConfig, i: int) -> bool:
    """Whether layer ``i`` holds the experts (Qwen3MoeDecoderLayer's test, and Qwen3NextDecoderLayer's).

    No notebook calls it; it works behind the helpers of ``09_modern_architectures``.
    """
    return i not in c.lists["mlp_only_layers"] and c["E"] > 0 and (i + 1) % c["s"] == 0


def unlisted_layers(c: ModelConfig) -> int:
    """The layers ``mlp_only_layers`` leaves out: each reads E (Qwen3MoeDecoderLayer tests ``num_experts > 0`` for
    every layer not listed, before the step), so E nulled under its alias fails there and nowhere else.

    No notebook calls it; it works behind the helpers of ``09_modern_architectures``.
    """
    return c["L"] - len({i for i in c.lists["mlp_only_layers"] if 0 <= i < c["L"]})


def _runs(c: ModelConfig) -> list[tuple[range, bool]]:
    """The layers as runs of consecutive dense or sparse layers, in order (one run when all are alike)."""
    L, s = c["L"], c["s"]
    if c["E"] <= 0:
        return [(range(L), False)]
    if s == 1:  # sparse everywhere but the dense layers listed: cut at those
        dense = sorted(j for j in set(c.lists["mlp_only_layers"]) if 0 <= j < L)
        return [(run, not is_dense) for run, is_dense in layer_runs(L, dense)]
    return layer_runs(L, [i for i in range(s - 1, L, s) if is_sparse(c, i)])


def moe_block(c: ModelConfig) -> list[Param]:
    """A sparse MoE block's tensors as transformers registers them: the E fused experts (``mlp.experts.gate_up_proj``,
    ``mlp.experts.down_proj``), then the router (``mlp.gate.weight``); Qwen3-Next's sparse layers hold the same three.

    No notebook calls it; it works behind the helpers of ``09_modern_architectures``.
    """
    H, I_e, E = c["H"], c["I_e"], c["E"]
    return [Param.experts("mlp.experts.gate_up_proj", (E, 2 * I_e, H), FEED_FORWARD, "2*E*I_e*H"),
            Param.experts("mlp.experts.down_proj", (E, H, I_e), FEED_FORWARD, "E*H*I_e"),
            Param.matrix("mlp.gate.weight", (E, H), FEED_FORWARD, "E*H")]


def _layout(c: ModelConfig) -> Layout:
    """Qwen3's tensors, the SwiGLU of each sparse layer replaced by E fused experts and a router."""
    dense = qwen3.QWEN3.layout(c)  # Qwen3's: token table, a dense layer, the final norm and head
    head, stack, tail = dense.blocks
    sparse, at = list(stack.params), [i for i, p in enumerate(stack.params) if p.name.startswith("mlp.")]
    sparse[at[0]:at[-1] + 1] = moe_block(c)
    layers = tuple(Block(stack.prefix, tuple(sparse) if sparse_run else stack.params, run)
                   for run, sparse_run in _runs(c))
    return Layout((head, *layers, tail))


def _feed_forward(c: ModelConfig, dense: str, sparse: str) -> str:
    """``dense`` per dense layer, ``sparse`` per sparse layer: L − L_e of one, L_e of the other."""
    return mixed_stack(c["L"], c["L"] - c["L_e"], dense, sparse, "(L - L_e)", "L_e")


def _formulas(c: ModelConfig) -> dict[str, str]:
    """Qwen3's formulas, the feed-forward split between dense and sparse layers (every expert counted)."""
    result = dict(qwen3.QWEN3.formulas(c))
    result[FEED_FORWARD] = _feed_forward(c, "3*H*I", "3*E*H*I_e + E*H")
    return result


def _flops(c: ModelConfig) -> dict[str, str]:
    """LLaMA's FLOPs, a sparse layer's feed-forward per routed token (k experts) plus the router."""
    return {**llama.flops(c), FEED_FORWARD: _feed_forward(c, "6*B*S*H*I", "6*B*S*k*H*I_e + 2*B*S*E*H")}


def read_sparse_layers(raw: Mapping[str, Any], sizes: dict[str, int]) -> tuple[int, ...]:
    """``mlp_only_layers`` (the layers kept dense, as listed) and L_e, the sparse layers, into ``sizes``: layer ``i`` is
    sparse when E > 0, ``(i + 1) % s == 0`` and ``i`` is not listed (Qwen3-MoE's and Qwen3-Next's decoder layers).

    No notebook calls it; it works behind the helpers of ``09_modern_architectures``.
    """
    listed = raw.get("mlp_only_layers")
    if listed is None:
        listed = []
    if not isinstance(listed, list):
        raise ConfigError("mlp_only_layers", f"must be a list of layer indices, got {json.dumps(listed)}")
    dense = tuple(_read_int("mlp_only_layers", i) for i in listed)
    L, E, s = sizes["L"], sizes["E"], sizes["s"]
    kept_dense = sum(1 for i in set(dense) if 0 <= i < L and (i + 1) % s == 0)
    sizes["L_e"] = L // s - kept_dense if E > 0 else 0  # layers s − 1, 2s − 1, ... less those kept dense
    return dense


def _read(raw: Mapping[str, Any], sizes: dict[str, int], flags: Mapping[str, bool]) -> dict[str, tuple[int, ...]]:
    """``mlp_only_layers`` (the layers kept dense), L_e (the sparse layers) and the checks that need them."""
    if "head_dim" in raw and raw["head_dim"] is None and sizes["L"]:  # no layer (L = 0): no attention to fail
        raise ConfigError("head_dim", "must be an integer, got null (leave the key out for hidden_size // "
                                      "num_attention_heads)")
    dense = read_sparse_layers(raw, sizes)
    switch = raw.get("use_sliding_window", False)
    if not isinstance(switch, bool):
        raise ConfigError("use_sliding_window", f"must be true or false, got {json.dumps(switch)}")
    return {"mlp_only_layers": dense, **_read_cache(raw, sizes, flags)}


# Qwen3MoeConfig has no layer_types and no max_window_layers: with use_sliding_window every layer is windowed
_read_cache, _window_runs = llama.hooks(default=4096, switch="use_sliding_window", stored_head=False)


def _cannot_run(raw: Mapping[str, Any], sizes: Mapping[str, int], flags: Mapping[str, bool]) -> dict[str, tuple[str, str]]:
    """LLaMA's (key/value heads, the cache), and k ≤ E where a layer is sparse (``torch.topk`` refuses more)."""
    problems = _window_runs(raw, sizes, flags)
    if sizes["L_e"] and (found := too_many_experts(sizes, experts_key(raw, ("num_experts", "num_local_experts")))):
        problems.setdefault("forward", found)
    return problems


QWEN3_MOE = Family(
    model_type="qwen3_moe",
    architecture="Qwen3MoeForCausalLM",
    sizes=(
        Size("vocab_size", "V", 151936),
        Size("hidden_size", "H", 2048),
        Size("num_hidden_layers", "L", 24, minimum=0),
        Size("num_attention_heads", "A", 32),
        Size("num_key_value_heads", "A_kv", 4),
        Size("head_dim", "d_k", None),  # not a Qwen3MoeConfig field, but read (getattr): None: H // A
        Size("intermediate_size", "I", 6144),  # the dense layers' SwiGLU
        Size("max_position_embeddings", "P", 32768),
        Size("moe_intermediate_size", "I_e", 768, minimum=0),  # each expert's SwiGLU (0: experts 0 wide)
        Size("num_experts", "E", 128, minimum=-2**63, aliases=("num_local_experts",),  # 0 or less: every layer dense
             layers=(unlisted_layers,)),
        Size("num_experts_per_tok", "k", 8, minimum=0),  # 0: the router runs, no expert does
        Size("decoder_sparse_step", "s", 1),
        Size("sliding_window", "W", 4096, minimum=-2**63, nullable=True),  # used only with use_sliding_window
        llama.CHUNK,
    ),
    flags=(Flag("tie_word_embeddings", False), Flag("attention_bias", False), Flag("norm_topk_prob", False)),
    derive=llama.LLAMA.derive,
    read=_read,
    runs=_cannot_run,
    heads_divide_hidden="never",  # head_dim = H // A without it: the projections are A·d_k wide
    pad_token_id=None,
    layout=_layout,
    formulas=_formulas,
    flops=_flops,
    kv_cache=llama.kv_cache,  # every token, or the last W − 1 with use_sliding_window
    positions=lambda c: None,  # rotary: no position table
    torch_ref="Qwen3MoeForCausalLM",
    classes=decoder_classes("Qwen3Moe", "model.", qa_prefix="transformer."),
    checkpoint_names=expand_experts("gate_proj", "up_proj", "down_proj", width="I_e"),  # mlp.experts.{e}.gate_proj ...
)
