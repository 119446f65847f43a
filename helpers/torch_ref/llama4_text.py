"""Llama 4's language model as plain torch modules: iRoPE (NoPE layers over the whole context, rotary layers within
chunks, their queries and keys normalised), sparse layers of routed experts that read their input scaled by a sigmoid, and a shared
expert beside them; dense layers of their own width."""

from __future__ import annotations

import math

import torch
from torch import nn
from torch.nn import functional as F

from ..config import ModelConfig
from .blocks import RMSNorm, SwiGLU, _attend, _mask
from .llama import LlamaAttention, LlamaForCausalLM
from .moe import MoeExperts, SparseMoeBlock
from .smollm3 import SmolLM3Model

__all__ = ["Llama4TextAttention", "Llama4TextExperts", "Llama4TextMoe", "Llama4TextDecoderLayer", "Llama4TextModel",
           "Llama4ForCausalLM"]



def _moe_layers(c: ModelConfig) -> set[int]:
    """The sparse layers as transformers' ``Llama4TextConfig`` lists them: the file's ``moe_layers`` (read into
    ``c.lists["moe"]``), else every ``interleave_moe_layer_step``-th layer (s) from layer s − 1. Written here from
    transformers, not taken from the engine's family: the reference stays an independent check."""
    if "moe" in c.lists:
        return set(c.lists["moe"])
    s = c["s"]
    return set(range(s - 1, c["L"], s)) if s > 0 else set()

class Llama4TextAttention(LlamaAttention):
    """LLaMA's attention; in a rotary layer (``rope``) the rotated queries and keys are divided by their root mean square
    (``use_qk_norm``: no gain, no parameter), and in a chunked layer (``chunks``: W_c) each query sees the keys of its
    own chunk of W_c positions only. (transformers also scales a NoPE layer's queries with the position from
    ``floor_scale`` = 8192 tokens on: 1 below it, never a matmul; left out here.)
    No notebook calls it; it works behind the helpers of ``11_todays_models``."""

    def __init__(self, c: ModelConfig, i: int = 0) -> None:
        super().__init__(c)
        self.qk_norm = bool(c.lists["rope"][i]) and c.flags["use_qk_norm"]
        self.chunk = c.lists["chunks"][i] or None

    def core(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        """The QK-norm where the layer rotates, then causal attention, within the chunk where the layer is chunked."""
        if self.qk_norm:
            q, k = (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5) for x in (q, k))
        if self.chunk is None:
            return _attend(q, k, v, causal=True)
        S = q.shape[-2]
        position = torch.arange(S, device=q.device)
        seen = _mask(S, q.device) & (position[:, None] // self.chunk == position[None, :] // self.chunk)
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(q.shape[-1])
        return torch.matmul(scores.masked_fill(~seen, float("-inf")).softmax(dim=-1), v)


class Llama4TextExperts(MoeExperts):
    """E SwiGLU experts fused and transposed as transformers stores them: ``gate_up_proj`` E × H × 2I (the gate's
    columns, then the up's), ``down_proj`` E × I × H, no bias. Each routed token enters its expert scaled by its
    router weight (transformers scales the input, not the output).
    No notebook calls it; it works behind the helpers of ``11_todays_models``."""

    def __init__(self, c: ModelConfig) -> None:
        nn.Module.__init__(self)
        E, H, I = c["E"], c["H"], c["I"]
        self.gate_up_proj = nn.Parameter(torch.empty(E, H, 2 * I))
        self.down_proj = nn.Parameter(torch.empty(E, I, H))

    def expert(self, x: torch.Tensor, chosen: torch.Tensor) -> torch.Tensor:
        """Token n through expert ``chosen[n]``: a batched matmul of one token each, on its gathered weights."""
        gate, up = torch.bmm(x.unsqueeze(1), self.gate_up_proj[chosen]).squeeze(1).chunk(2, dim=-1)
        return torch.bmm((F.silu(gate) * up).unsqueeze(1), self.down_proj[chosen]).squeeze(1)

    def forward(self, x: torch.Tensor, weights: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
        """Each token through its k experts, scaled by each one's weight on the way in."""
        out = torch.zeros_like(x)
        for slot in range(index.shape[-1]):
            out = out + self.expert(x * weights[..., slot, None], index[..., slot])
        return out


class Llama4TextMoe(SparseMoeBlock):
    """``feed_forward`` of a sparse layer: the experts, the router (``router``, E × H, no bias: the k best logits,
    each through a sigmoid) and the shared expert (``shared_expert``, a SwiGLU of width I) every token passes.
    No notebook calls it; it works behind the helpers of ``11_todays_models``."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.experts = Llama4TextExperts(c)
        self.router = nn.Linear(c["H"], c["E"], bias=False)
        self.shared_expert = SwiGLU(c["H"], c["I"])
        self.top_k = c["k"]

    def route(self, flat: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The k best logits, each through a sigmoid (not a softmax among them)."""
        logits, index = torch.topk(self.router(flat), self.top_k, dim=-1)
        return torch.sigmoid(logits), index

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        flat = x.reshape(-1, x.shape[-1])
        return (self.experts(flat, *self.route(flat)) + self.shared_expert(flat)).reshape(x.shape)


class Llama4TextDecoderLayer(nn.Module):
    """A pre-RMSNorm layer whose feed-forward is ``feed_forward`` (transformers' name): the mixture in the sparse
    layers, a SwiGLU of width I_mlp in the others.
    No notebook calls it; it works behind the helpers of ``11_todays_models``."""

    def __init__(self, c: ModelConfig, i: int = 0) -> None:
        super().__init__()
        self.self_attn = Llama4TextAttention(c, i)
        self.feed_forward = Llama4TextMoe(c) if i in _moe_layers(c) else SwiGLU(c["H"], c["I_mlp"])
        self.input_layernorm = RMSNorm(c["H"])
        self.post_attention_layernorm = RMSNorm(c["H"])

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        x = x + self.self_attn(self.input_layernorm(x), cos, sin)
        return x + self.feed_forward(self.post_attention_layernorm(x))


class Llama4TextModel(SmolLM3Model):
    """``model.`` of ``Llama4ForCausalLM``: token table, L Llama 4 layers (the NoPE ones, ``rope`` 0, unrotated:
    SmolLM3's reading), final RMSNorm.
    No notebook calls it; it works behind the helpers of ``11_todays_models``."""

    layer_class = Llama4TextDecoderLayer


class Llama4ForCausalLM(LlamaForCausalLM):
    """``Llama4ForCausalLM``: iRoPE attention, dense and sparse layers (top-k sigmoid routing, a shared expert).
    No notebook calls it; it works behind the helpers of ``11_todays_models``."""

    model_class = Llama4TextModel
