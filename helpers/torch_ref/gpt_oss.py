"""GPT-OSS as plain torch modules: attention sinks, alternating windows, a biased router and experts with biases."""

from __future__ import annotations

import math

import torch
from torch import nn

from ..config import ModelConfig
from .blocks import _mask
from .llama import LlamaAttention, LlamaDecoderLayer, LlamaForCausalLM, LlamaModel
from .moe import MoeExperts, SparseMoeBlock

__all__ = ["GptOssAttention", "GptOssExperts", "GptOssMLP", "GptOssDecoderLayer", "GptOssModel", "GptOssForCausalLM"]


class GptOssAttention(LlamaAttention):
    """LLaMA's attention with biases on q, k, v and o, one learned logit per head (``sinks``) joining each row of
    scores in the softmax (its share of the probability goes to no value), and, in a windowed layer, each query
    seeing only the last ``window`` positions (itself included).
    No notebook calls it; it works behind the helpers of ``11_todays_models``."""

    def __init__(self, c: ModelConfig, window: int | None = None) -> None:
        super().__init__(c)
        self.window = window
        self.sinks = nn.Parameter(torch.zeros(c["A"]))

    def core(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        """Causal (and windowed) scores with the sink's column joining the softmax, then dropped."""
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(q.shape[-1])
        S = q.shape[-2]
        scores = scores.masked_fill(~_mask(S, q.device, self.window), float("-inf"))
        sink = self.sinks.reshape(1, -1, 1, 1).expand(scores.shape[0], -1, S, 1)
        probs = torch.cat((scores, sink), dim=-1).softmax(dim=-1)[..., :-1]  # the sink's column dropped
        return torch.matmul(probs, v)


class GptOssExperts(MoeExperts):
    """E clamped-SwiGLU experts with biases, fused and transposed as transformers stores them: ``gate_up_proj``
    E × H × 2I (gate and up interleaved), ``down_proj`` E × I × H, and a bias row per expert for each.
    No notebook calls it; it works behind the helpers of ``11_todays_models``."""

    def __init__(self, c: ModelConfig) -> None:
        nn.Module.__init__(self)
        E, H, I = c["E"], c["H"], c["I"]
        self.gate_up_proj = nn.Parameter(torch.empty(E, H, 2 * I))
        self.gate_up_proj_bias = nn.Parameter(torch.zeros(E, 2 * I))
        self.down_proj = nn.Parameter(torch.empty(E, I, H))
        self.down_proj_bias = nn.Parameter(torch.zeros(E, H))

    def expert(self, x: torch.Tensor, chosen: torch.Tensor) -> torch.Tensor:
        """Token n through expert ``chosen[n]``: the clamped SwiGLU (swiglu_alpha 1.702, swiglu_limit 7), biases."""
        gate_up = torch.bmm(x.unsqueeze(1), self.gate_up_proj[chosen]).squeeze(1) + self.gate_up_proj_bias[chosen]
        gate, up = gate_up[..., ::2].clamp(max=7.0), gate_up[..., 1::2].clamp(-7.0, 7.0)
        hidden = (up + 1) * gate * torch.sigmoid(1.702 * gate)
        return torch.bmm(hidden.unsqueeze(1), self.down_proj[chosen]).squeeze(1) + self.down_proj_bias[chosen]


class GptOssMLP(SparseMoeBlock):
    """The router (``router``: E × H and a bias of E; softmax over the k best logits), then the experts.
    No notebook calls it; it works behind the helpers of ``11_todays_models``."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.router = nn.Linear(c["H"], c["E"])
        self.experts = GptOssExperts(c)
        self.top_k = c["k"]

    def route(self, flat: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The k best logits of the biased router, softmaxed among themselves."""
        logits, index = torch.topk(self.router(flat), self.top_k, dim=-1)
        return logits.softmax(dim=-1), index


class GptOssDecoderLayer(LlamaDecoderLayer):
    """A GPT-OSS layer: LLaMA's pre-RMSNorm layer, its attention with sinks (windowed or not), its MLP the experts.
    No notebook calls it; it works behind the helpers of ``11_todays_models``."""

    mlp_class = GptOssMLP

    def attention(self, c: ModelConfig, i: int) -> nn.Module:
        """Layer i's attention with sinks, over its window (``windows``: 0 for a full layer)."""
        return GptOssAttention(c, c.lists.get("windows", (0,) * c["L"])[i] or None)


class GptOssModel(LlamaModel):
    """``model.`` of ``GptOssForCausalLM``: token table, L GPT-OSS layers (``windows``: each one's window), RMSNorm.
    No notebook calls it; it works behind the helpers of ``11_todays_models``."""

    layer_class = GptOssDecoderLayer


class GptOssForCausalLM(LlamaForCausalLM):
    """``GptOssForCausalLM``: a top-k mixture of E biased experts, attention sinks, alternating windowed layers.
    No notebook calls it; it works behind the helpers of ``11_todays_models``."""

    model_class = GptOssModel
