"""DeepSeek-V3 as plain torch modules: multi-head latent attention (MLA), dense first layers, shared and routed
experts chosen within groups."""

from __future__ import annotations

from typing import Callable

import torch
from torch import nn
from torch.nn import functional as F

from ..config import ModelConfig
from .blocks import RMSNorm, SwiGLU, _attend, _heads, _merge, _rotate
from .llama import LlamaDecoderLayer, LlamaForCausalLM, LlamaModel
from .moe import MoeExperts, SparseMoeBlock

__all__ = ["DeepseekV3Attention", "DeepseekV3MLP", "DeepseekV3TopkRouter", "DeepseekV3MoE", "DeepseekV3DecoderLayer",
           "DeepseekV3Model", "DeepseekV3ForCausalLM"]


class DeepseekV3Attention(nn.Module):
    """Multi-head latent attention: the query through a rank-r_q bottleneck (or a plain ``q_proj``), keys and
    values re-projected for every head from a latent of r_kv, one rotary key of d_rope shared by the heads.

    A heads of query/key d_k = d_nope + d_rope and value d_v; the latent and the shared rotary key are what
    transformers caches. Rotary angles are applied to the d_rope part of each query and of the shared key.
    No notebook calls it; it works behind the helpers of ``09_modern_architectures``.
    """

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        H, A, bias = c["H"], c["A"], c.flags["attention_bias"]
        self.heads, self.d_nope, self.d_rope, self.d_v, self.r_kv = A, c["d_nope"], c["d_rope"], c["d_v"], c["r_kv"]
        if "r_q" in c.sizes:
            self.q_a_proj = nn.Linear(H, c["r_q"], bias=bias)
            self.q_a_layernorm = RMSNorm(c["r_q"])
            self.q_b_proj = nn.Linear(c["r_q"], A * c["d_k"], bias=False)
        else:
            self.q_proj = nn.Linear(H, A * c["d_k"], bias=False)
        self.kv_a_proj_with_mqa = nn.Linear(H, c["r_kv"] + c["d_rope"], bias=bias)
        self.kv_a_layernorm = RMSNorm(c["r_kv"])
        self.kv_b_proj = nn.Linear(c["r_kv"], A * (c["d_nope"] + c["d_v"]), bias=False)
        self.o_proj = nn.Linear(A * c["d_v"], H, bias=bias)

    def latent(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """What the cache keeps per token: the normalised latent [B, 1, S, r_kv] and the rotated shared key
        [B, 1, S, d_rope] (one head each)."""
        latent, k_rot = self.kv_a_proj_with_mqa(x).split([self.r_kv, self.d_rope], dim=-1)
        return self.kv_a_layernorm(latent)[:, None], _rotate(k_rot[:, None], cos, sin)

    def expand(self, latent: torch.Tensor, k_rot: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Every head's key [B, A, S, d_k] and value [B, A, S, d_v], re-projected from the cached latent."""
        B, _, S, _ = latent.shape
        kv = self.kv_b_proj(latent).view(B, S, self.heads, self.d_nope + self.d_v).transpose(1, 2)
        k_nope, v = kv.split([self.d_nope, self.d_v], dim=-1)
        return torch.cat((k_nope, k_rot.expand(-1, self.heads, -1, -1)), dim=-1), v

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        if hasattr(self, "q_proj"):
            q = self.q_proj(x)
        else:
            q = self.q_b_proj(self.q_a_layernorm(self.q_a_proj(x)))
        q_nope, q_rot = _heads(q, self.heads).split([self.d_nope, self.d_rope], dim=-1)
        q = torch.cat((q_nope, _rotate(q_rot, cos, sin)), dim=-1)
        k, v = self.expand(*self.latent(x, cos, sin))
        return self.o_proj(_merge(_attend(q, k, v, causal=True)))


class DeepseekV3MLP(SwiGLU):
    """A SwiGLU of a given width: the dense layers' (I), or the shared experts' (n_s·I_e, one MLP).
    No notebook calls it; it works behind the helpers of ``09_modern_architectures``."""


def keep_groups(scores: torch.Tensor, groups: int, kept: int, score: Callable[[torch.Tensor], torch.Tensor],
                fill: float) -> torch.Tensor:
    """The [N, E] scores with every expert outside the ``kept`` best of ``groups`` equal groups set to ``fill``; a
    group's score is ``score`` of its [N, groups, E/groups] slice (DeepSeek-V3, GLM-4.5: its best two summed;
    DeepSeek-V2: its best one). Elementwise and a top-k: no matmul.

    No notebook calls it; it works behind the helpers of ``09_modern_architectures``.
    """
    N, E = scores.shape
    grouped = scores.view(N, groups, E // groups)
    best = score(grouped).topk(kept, dim=-1).indices  # [N, k_g]
    keep = torch.zeros(N, groups, dtype=torch.bool, device=scores.device).scatter(1, best, True)
    return grouped.masked_fill(~keep[..., None], fill).view(N, E)


class DeepseekV3TopkRouter(nn.Module):
    """``mlp.gate``: E × H logits per token, sigmoid scores; the k best experts among the k_g best of g groups.

    ``e_score_correction_bias`` (E) is a buffer, not a parameter: added to the scores to choose the experts,
    not to weigh them. The weights are renormalised with ``norm_topk_prob``; transformers also multiplies them
    by ``routed_scaling_factor``, a constant (no parameter, no matmul) left out here.
    No notebook calls it; it works behind the helpers of ``09_modern_architectures``.
    """

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.top_k, self.groups, self.kept, self.normalise = c["k"], c["g"], c["k_g"], c.flags["norm_topk_prob"]
        self.weight = nn.Parameter(torch.empty(c["E"], c["H"]))
        self.register_buffer("e_score_correction_bias", torch.zeros(c["E"]))

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        scores = F.linear(x, self.weight).sigmoid()  # [N, E]
        choice = keep_groups(scores + self.e_score_correction_bias, self.groups, self.kept,
                             lambda grouped: grouped.topk(2, dim=-1).values.sum(dim=-1), float("-inf"))
        index = choice.topk(self.top_k, dim=-1).indices
        weights = scores.gather(1, index)
        return (weights / weights.sum(dim=-1, keepdim=True) if self.normalise else weights), index


class DeepseekV3MoE(SparseMoeBlock):
    """A sparse layer's feed-forward: the routed experts (fused, registered first), the router, the shared experts.
    No notebook calls it; it works behind the helpers of ``09_modern_architectures``."""

    router_class: type[nn.Module] = DeepseekV3TopkRouter

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.experts = MoeExperts(c, "I_e")
        self.gate = self.router_class(c)
        self.shared_experts = DeepseekV3MLP(c["H"], c["n_s"] * c["I_e"], c.flags.get("mlp_bias", False))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return super().forward(x) + self.shared_experts(x)


class DeepseekV3DecoderLayer(LlamaDecoderLayer):
    """A DeepSeek-V3 layer: latent attention, then a dense SwiGLU (the first L_f layers) or a :class:`DeepseekV3MoE`.
    No notebook calls it; it works behind the helpers of ``09_modern_architectures``."""

    attention_class = DeepseekV3Attention
    moe_class: type[nn.Module] = DeepseekV3MoE

    def feed_forward(self, c: ModelConfig, i: int) -> nn.Module:
        """A dense SwiGLU of width I in the first L_f layers (biased under DeepSeek-V2's ``mlp_bias``), the shared and
        routed experts (``moe_class``) after them."""
        return DeepseekV3MLP(c["H"], c["I"], c.flags.get("mlp_bias", False)) if i < c["L_f"] else self.moe_class(c)


class DeepseekV3Model(LlamaModel):
    """``model.`` of ``DeepseekV3ForCausalLM``: token table, L layers, final RMSNorm; rotary angles over d_rope.
    No notebook calls it; it works behind the helpers of ``09_modern_architectures``."""

    layer_class = DeepseekV3DecoderLayer
    rotary = "d_rope"  # the rotary angles turn the d_rope part of each query and of the shared key


class DeepseekV3ForCausalLM(LlamaForCausalLM):
    """``DeepseekV3ForCausalLM``: latent attention, L_f dense layers, then shared and top-k routed experts.
    No notebook calls it; it works behind the helpers of ``09_modern_architectures``."""

    model_class = DeepseekV3Model
