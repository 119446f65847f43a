"""A mixture-of-experts layer read from the engine's table, and the FlopCounterMode trap shown in plain torch.

Introduced in ``09_modern_architectures``. :func:`moe_layer` sorts one layer's feed-forward rows into the router,
the routed experts (fused E × out × in, kind :data:`~helpers.params.EXPERT`) and any shared experts (dense
matrices every token passes through), whatever the family names them: the counts of a layer, total and active,
come from those rows.

The trap: transformers 5 runs the routed experts by default with a grouped matrix multiply (``grouped_mm``: the
tokens sorted by expert, one kernel call for all experts), and ``torch.utils.flop_counter.FlopCounterMode`` has no
formula for that operator, so it counts nothing for the experts. :func:`grouped_experts_forward` does the same
with ``torch.nn.functional.grouped_mm`` on a tiny seeded block of :mod:`helpers.torch_ref` (whose own forward
multiplies each routed token by its expert's weights, one batched matmul per slot, which the counter sees).
The torch functions import torch when called; the rest never does.

DeepSeek-V3's other parts, from the same table: :func:`plain_attention` is the attention its latent attention (MLA)
replaces, with the same heads and head sizes (multi-head, or grouped-query with fewer key/value heads), and
:func:`plain_cache_per_token` what that attention would cache; :func:`mtp_module` is the multi-token-prediction
module its checkpoint holds beside the model transformers builds, :func:`fp8_scales` the block scales of its fp8
files, and :func:`checkpoint_parts` puts them together: what the checkpoint holds, part by part.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

from ..config import ModelConfig, parse_config
from ..count import count_model
from ..params import (
    ATTENTION, EMBEDDINGS, EXPERT, EXPERT_BIAS, FEED_FORWARD, LAYER_NORM, LM_HEAD, MATRIX, Param, checkpoint_layout, param_layout,
    param_table, select, total,
)
from ..quantized import block_scales


@dataclass(frozen=True)
class MoeLayer:
    """One layer's mixture of experts, from the table: the router, the routed experts (fused), the shared experts.

    ``router``: the rows of E outputs that score the experts (E × H, and a bias of E where a family has one);
    ``routed``: the fused expert tensors (E × out × in each); ``shared``: dense feed-forward matrices every token
    passes through (DeepSeek-style shared experts; none in Mixtral or Qwen3-MoE).
    No notebook calls it; it works behind the helpers of ``09_modern_architectures``.
    """

    router: tuple[Param, ...]
    routed: tuple[Param, ...]
    shared: tuple[Param, ...]

    @property
    def E(self) -> int:
        """The number of routed experts."""
        return self.routed[0].shape[0]

    @property
    def per_expert(self) -> int:
        """The parameters of one routed expert (its slice of every fused tensor)."""
        return total(self.routed) // self.E

    @property
    def total(self) -> int:
        """Every parameter of the layer's mixture: router, all routed experts, shared experts."""
        return total(self.router) + total(self.routed) + total(self.shared)

    def active(self, k: int) -> int:
        """The parameters one token uses: the router, its k routed experts and the shared experts."""
        return total(self.router) + k * self.per_expert + total(self.shared)


def moe_layer(params: Sequence[Param]) -> MoeLayer:
    """Sort one layer's rows (``select(param_table(c), layer=i)``) into router, routed and shared experts.

    Introduced in ``09_modern_architectures``. Only feed-forward rows are kept; the routed experts are the rows of
    kind :data:`~helpers.params.EXPERT` (and their biases, :data:`~helpers.params.EXPERT_BIAS`: GPT-OSS), the router
    the other rows whose first dimension is E with the layer's width H (or a vector of E), the shared experts the rest. Raises ``ValueError`` for a layer without routed
    experts (a dense layer, such as DeepSeek-V3's first ones or those Qwen3-MoE keeps dense).
    """
    ffn = [p for p in params if p.component == FEED_FORWARD]
    routed = [p for p in ffn if p.kind in (EXPERT, EXPERT_BIAS)]
    if not routed:
        raise ValueError("these rows hold no routed experts (a dense layer)")
    E = routed[0].shape[0]
    widths = {n for p in routed if p.kind == EXPERT for n in p.shape[1:]}  # H is one side of every expert matrix
    router = [p for p in ffn if p not in routed and (p.shape == (E,) or (len(p.shape) == 2 and p.shape[0] == E
                                                                          and p.shape[1] in widths))]
    shared = [p for p in ffn if p not in routed and p not in router]
    return MoeLayer(tuple(router), tuple(routed), tuple(shared))


# --- the FlopCounterMode trap, in plain torch --------------------------------------------------------

TINY_MOE = {"model_type": "mixtral", "vocab_size": 32, "hidden_size": 64, "intermediate_size": 128,
            "num_hidden_layers": 1, "num_attention_heads": 4, "num_key_value_heads": 2, "num_local_experts": 8,
            "num_experts_per_tok": 2}


def tiny_moe_block(seed: int = 0, raw: dict[str, Any] | None = None) -> tuple[ModelConfig, Any]:
    """A small Mixtral mixture-of-experts block of :mod:`helpers.torch_ref` on the CPU, weights drawn with ``seed``.

    Introduced in ``09_modern_architectures``. ``raw`` is a Mixtral config (default :data:`TINY_MOE`: H 64,
    I 128, E 8, k 2); returns the parsed config and the block (``gate``: the router, ``experts``: the fused
    experts), whose forward runs each routed token through its expert's weights.
    """
    import torch

    from ..torch_ref import MixtralSparseMoeBlock, build_component

    config = parse_config(raw or TINY_MOE, name="tiny Mixtral block")
    block = build_component(MixtralSparseMoeBlock, config, device="cpu")
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in block.parameters():
            p.copy_(torch.randn(p.shape, generator=generator) * 0.1)
    return config, block


def grouped_experts_forward(block: Any, x: Any) -> Any:
    """The same block run as transformers' default experts kernel does: tokens sorted by expert, ``grouped_mm``.

    Introduced in ``09_modern_architectures``. ``x`` holds N tokens of width H; the router picks k experts per
    token, the N·k token copies are sorted by expert, and two calls of ``torch.nn.functional.grouped_mm`` (one per
    fused tensor, every expert at once, ``offs`` marking where each expert's tokens end) replace the per-token
    matmuls; the outputs are weighted and summed back per token.
    """
    import torch
    from torch.nn import functional as F

    flat = x.reshape(-1, x.shape[-1])
    weights, index = block.gate(flat)  # [N, k] each
    k, E = index.shape[-1], block.experts.gate_up_proj.shape[0]
    order = torch.argsort(index.reshape(-1), stable=True)  # the N·k slots sorted by expert
    token = order // k
    offs = torch.cumsum(torch.bincount(index.reshape(-1), minlength=E), 0).to(torch.int32)
    gate_up = F.grouped_mm(flat[token], block.experts.gate_up_proj.transpose(-2, -1), offs=offs)
    gate, up = gate_up.chunk(2, dim=-1)
    y = F.grouped_mm(F.silu(gate) * up, block.experts.down_proj.transpose(-2, -1), offs=offs)
    y = y * weights.reshape(-1)[order, None]
    return torch.zeros_like(flat).index_add_(0, token, y).reshape(x.shape)


def tiny_tokens(config: ModelConfig, n: int, seed: int = 1) -> Any:
    """``n`` hidden states of width H, drawn with ``seed`` (what a MoE block receives from attention).

    Introduced in ``09_modern_architectures``.
    """
    import torch

    return torch.randn(n, config["H"], generator=torch.Generator().manual_seed(seed))


def counted_flops(function: Callable[..., Any], *args: Any) -> tuple[Any, int]:
    """``function(*args)`` run under ``FlopCounterMode``: its result and the matmul FLOPs the counter saw.

    Introduced in ``09_modern_architectures``.
    """
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    with torch.no_grad(), FlopCounterMode(display=False) as counter:
        out = function(*args)
    return out, counter.get_total_flops()


# --- DeepSeek-V3: the attention MLA replaces, the multi-token-prediction module, the fp8 scales ---------------

def _latent(config: ModelConfig) -> None:
    """Refuse a config without latent attention (no ``kv_lora_rank``)."""
    if "r_kv" not in config.sizes:
        raise ValueError(f"{config.name}: no latent attention (kv_lora_rank) in a {config.model_type} config")


def plain_attention(config: ModelConfig, kv_heads: int | None = None) -> list[Param]:
    """The attention a latent-attention layer replaces: query, key, value and output projections of the same A
    heads and head sizes (queries and keys d_k = d_nope + d_rope, values d_v), no bottleneck, no bias.

    Introduced in ``09_modern_architectures``. ``kv_heads`` key/value heads (default A: multi-head attention,
    Vaswani et al. 2017; fewer: grouped-query attention, Ainslie et al. 2023, which needs them to divide A), named
    as LLaMA names its projections, relative to the layer. Raises ``ValueError`` for a config without latent
    attention or a ``kv_heads`` that does not divide A.
    """
    _latent(config)
    H, A, d_k, d_v = config["H"], config["A"], config["d_k"], config["d_v"]
    n = A if kv_heads is None else kv_heads
    if n < 1 or A % n:
        raise ValueError(f"kv_heads: {n} does not divide the {A} query heads")
    heads = "A" if n == A else str(n)
    return [Param.matrix("self_attn.q_proj.weight", (A * d_k, H), ATTENTION, "A*d_k*H"),
            Param.matrix("self_attn.k_proj.weight", (n * d_k, H), ATTENTION, f"{heads}*d_k*H"),
            Param.matrix("self_attn.v_proj.weight", (n * d_v, H), ATTENTION, f"{heads}*d_v*H"),
            Param.matrix("self_attn.o_proj.weight", (H, A * d_v), ATTENTION, "H*A*d_v")]


def plain_cache_per_token(config: ModelConfig, kv_heads: int | None = None) -> int:
    """Values the attention of :func:`plain_attention` caches per token: in each of the L layers, what its key and
    value projections output, L·A_kv·(d_k + d_v).

    Introduced in ``09_modern_architectures``. With ``kv_heads`` None (every head its own key and value) this is
    what the engine's ``Family.kv_cache_full`` counts for DeepSeek-V3: the keys and values attention uses.
    """
    rows = plain_attention(config, kv_heads)
    return config["L"] * sum(p.shape[0] for p in rows if p.name.endswith(("k_proj.weight", "v_proj.weight")))


def mtp_module(config: ModelConfig) -> list[Param]:
    """DeepSeek-V3's multi-token-prediction module as its checkpoint names it (layer L, after the model's last).

    Introduced in ``09_modern_architectures``. DeepSeek-AI 2024 (DeepSeek-V3, §2.2): the RMSNorms ``enorm`` (of
    the next token's embedding) and ``hnorm`` (of the model's last hidden state), ``eh_proj`` (H × 2H: the two,
    concatenated, projected back to H), one more transformer layer shaped as the model's last (a sparse layer),
    and the RMSNorm ``shared_head.norm`` before the head. Not listed: the module's ``embed_tokens`` and
    ``shared_head.head``, which share the model's token table and head (the files hold copies of them).
    ``DeepseekV3ForCausalLM`` does not build the module; transformers builds it apart (``MtpModel``).
    """
    _latent(config)
    H, L = config["H"], config["L"]
    prefix = f"model.layers.{L}."
    last = f"model.layers.{L - 1}."
    layer = [Param(prefix + p.name[len(last):], p.shape, p.component, p.formula, p.kind, p.tokens)
             for p in select(param_table(config), layer=L - 1)]
    return [Param.norm(prefix + "enorm.weight", (H,), LAYER_NORM, "H"),
            Param.norm(prefix + "hnorm.weight", (H,), LAYER_NORM, "H"),
            Param.matrix(prefix + "eh_proj.weight", (H, 2 * H), LM_HEAD, "2*H**2"),
            *layer,
            Param.norm(prefix + "shared_head.norm.weight", (H,), LAYER_NORM, "H")]


def _fp8(p: Param) -> bool:
    """Whether DeepSeek-V3's fp8 files store ``p`` in fp8: an attention or feed-forward matrix, not the router."""
    return p.kind in (MATRIX, EXPERT) and p.component in (ATTENTION, FEED_FORWARD) and not p.name.endswith("mlp.gate.weight")


def fp8_scales(config: ModelConfig, params: list[Param] | None = None, block: int = 128) -> int:
    """The fp32 block scales (``weight_scale_inv``) DeepSeek-V3's fp8 files store beside ``params`` (default: the
    model transformers builds): one per ``block`` × ``block`` tile, ⌈rows/block⌉·⌈cols/block⌉ per matrix.

    Introduced in ``09_modern_architectures``. Every attention and feed-forward matrix is stored in fp8, each routed
    expert on its own as the files name them; the router, the norms, the token table, the head and ``eh_proj``
    stay in bf16 with no scale (the ``Linear``/``Gate`` split of DeepSeek's ``inference/model.py``; our reading,
    not a figure the sources state). transformers' FP8 quantizer lays out the same scales
    (:func:`helpers.quantized.stored_weights`, which also reads the config's ``quantization_config``).
    """
    on_disk = config.family.checkpoint_names
    if params is None:
        rows = list(checkpoint_layout(config).rows())
    else:
        rows = [(q, 1) for p in params for q in (on_disk(p) if on_disk else [p])]
    return sum((n * block_scales(*p.shape, (block, block)) for p, n in rows if _fp8(p)), 0)


def checkpoint_parts(config: ModelConfig) -> dict[str, int]:
    """What DeepSeek-V3's checkpoint files hold, part by part: the model transformers builds, the
    multi-token-prediction module (:func:`mtp_module`) with its own copies of the token table and the head, the
    fp8 block scales (:func:`fp8_scales`) and the routers' score-correction biases (buffers, E per sparse layer).

    Introduced in ``09_modern_architectures``. Every part counts tensor elements, as a count of the files does.
    """
    mtp = mtp_module(config)
    tables = sum((n * p.count for p, n in param_layout(config).rows() if p.component in (EMBEDDINGS, LM_HEAD)), 0)
    sparse = config["L"] - config["L_f"] + 1  # the model's sparse layers and the module's
    norms = ("enorm.weight", "hnorm.weight", "shared_head.norm.weight")
    return {
        "the model transformers builds": count_model(config).total,
        "MTP module: one more sparse layer": total(p for p in mtp if not p.name.endswith((*norms, "eh_proj.weight"))),
        "MTP module: eh_proj (H × 2H)": total(p for p in mtp if p.name.endswith("eh_proj.weight")),
        "MTP module: enorm, hnorm, shared_head.norm": total(p for p in mtp if p.name.endswith(norms)),
        "MTP module: its copies of the token table and the head": tables,
        "fp8 block scales (weight_scale_inv), model and module": fp8_scales(config) + fp8_scales(config, mtp),
        "routers' score-correction biases (buffers)": sparse * config["E"],
    }
