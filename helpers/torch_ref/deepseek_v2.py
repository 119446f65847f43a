"""DeepSeek-V2 as plain torch modules: DeepSeek-V3's latent attention and experts, a softmax router that picks greedily
or within groups, biases on the dense and shared SwiGLUs under ``mlp_bias``."""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from ..config import ModelConfig
from .deepseek_v3 import DeepseekV3DecoderLayer, DeepseekV3ForCausalLM, DeepseekV3Model, DeepseekV3MoE, keep_groups

__all__ = ["DeepseekV2TopkRouter", "DeepseekV2Moe", "DeepseekV2DecoderLayer", "DeepseekV2Model",
           "DeepseekV2ForCausalLM"]


class DeepseekV2TopkRouter(nn.Module):
    """``mlp.gate``: E × H logits per token, softmax scores; the k best experts (``greedy``), or the k best among the
    k_g groups of g whose best expert scores highest (``group_limited_greedy``: the others' scores set to 0).

    No correction bias; transformers multiplies the weights by ``routed_scaling_factor``, a constant left out here.
    No notebook calls it; it works behind the helpers of ``11_todays_models``.
    """

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.top_k, self.limited = c["k"], c.flags["group_limited_greedy"]
        self.groups, self.kept = c.sizes.get("g"), c.sizes.get("k_g")
        self.weight = nn.Parameter(torch.empty(c["E"], c["H"]))

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        scores = F.linear(x, self.weight).softmax(dim=-1)  # [N, E]
        if self.limited:
            scores = keep_groups(scores, self.groups, self.kept, lambda grouped: grouped.max(dim=-1).values, 0.0)
        weights, index = scores.topk(self.top_k, dim=-1)
        return weights, index


class DeepseekV2Moe(DeepseekV3MoE):
    """A sparse layer's feed-forward: the routed experts, DeepSeek-V2's router, the shared experts.
    No notebook calls it; it works behind the helpers of ``11_todays_models``."""

    router_class = DeepseekV2TopkRouter


class DeepseekV2DecoderLayer(DeepseekV3DecoderLayer):
    """A DeepSeek-V2 layer: DeepSeek-V3's latent attention, a dense SwiGLU or :class:`DeepseekV2Moe`.
    No notebook calls it; it works behind the helpers of ``11_todays_models``."""

    moe_class = DeepseekV2Moe


class DeepseekV2Model(DeepseekV3Model):
    """``model.`` of ``DeepseekV2ForCausalLM``: token table, L layers, final RMSNorm; rotary angles over d_rope (turned
    as neighbouring pairs by transformers' complex view, as halves here: elementwise either way, no parameter).
    No notebook calls it; it works behind the helpers of ``11_todays_models``."""

    layer_class = DeepseekV2DecoderLayer


class DeepseekV2ForCausalLM(DeepseekV3ForCausalLM):
    """``DeepseekV2ForCausalLM``: latent attention as first published (V2-Lite: no query compression), L_f dense layers,
    then shared and routed experts.
    No notebook calls it; it works behind the helpers of ``11_todays_models``."""

    model_class = DeepseekV2Model
