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
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

from .config import ModelConfig, parse_config
from .params import EXPERT, FEED_FORWARD, Param, total


@dataclass(frozen=True)
class MoeLayer:
    """One layer's mixture of experts, from the table: the router, the routed experts (fused), the shared experts.

    ``router``: the rows of E outputs that score the experts (E × H, and a bias of E where a family has one);
    ``routed``: the fused expert tensors (E × out × in each); ``shared``: dense feed-forward matrices every token
    passes through (DeepSeek-style shared experts; none in Mixtral or Qwen3-MoE).
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
    kind :data:`~helpers.params.EXPERT`, the router the other rows whose first dimension is E with the layer's
    width H (or a vector of E), the shared experts the rest. Raises ``ValueError`` for a layer without routed
    experts (a dense layer, such as DeepSeek-V3's first ones or those Qwen3-MoE keeps dense).
    """
    ffn = [p for p in params if p.component == FEED_FORWARD]
    routed = [p for p in ffn if p.kind == EXPERT]
    if not routed:
        raise ValueError("these rows hold no routed experts (a dense layer)")
    E, H = routed[0].shape[0], routed[0].shape[-1]
    router = [p for p in ffn if p.kind != EXPERT and p.shape in ((E, H), (E,))]
    shared = [p for p in ffn if p.kind != EXPERT and p not in router]
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

    from .torch_ref import MixtralSparseMoeBlock, build_component

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
