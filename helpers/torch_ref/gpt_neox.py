"""GPT-NeoX / Pythia as plain torch modules: fused per-head q, k, v, partial rotary, parallel residual."""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from ..config import ModelConfig
from .blocks import _attend, _heads, _lm_head, _merge, _rotate, _run, rotary_angles

__all__ = ["GPTNeoXAttention", "GPTNeoXMLP", "GPTNeoXLayer", "GPTNeoXModel", "GPTNeoXForCausalLM"]


class GPTNeoXAttention(nn.Module):
    """Fused ``query_key_value`` (3H × H, each head's q, k, v side by side) and ``dense`` (H × H), biases by default.

    Rotary angles on the first quarter of each head (Pythia's ``rotary_pct`` 0.25), the rest passed through:
    elementwise, no parameter, no FLOP.
    No notebook calls it; it works behind the helpers of ``09_modern_architectures``.
    """

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        bias = c.flags["attention_bias"]
        self.heads, self.d_k = c["A"], c["d_k"]
        self.rotary = 2 * (self.d_k // 8)  # int(d_k · 0.25), even
        self.query_key_value = nn.Linear(c["H"], 3 * c["H"], bias=bias)
        self.dense = nn.Linear(c["H"], c["H"], bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q, k, v = _heads(self.query_key_value(x), self.heads).chunk(3, dim=-1)
        if self.rotary:
            cos, sin = rotary_angles(self.rotary, x.shape[1], x.device, x.dtype)
            q, k = (torch.cat((_rotate(t[..., :self.rotary], cos, sin), t[..., self.rotary:]), dim=-1) for t in (q, k))
        return self.dense(_merge(_attend(q, k, v, causal=True)))


class GPTNeoXMLP(nn.Module):
    """``dense_h_to_4h`` (I × H) and ``dense_4h_to_h`` (H × I), with biases, GELU between: 2H·I + I + H.
    No notebook calls it; it works behind the helpers of ``09_modern_architectures``."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.dense_h_to_4h = nn.Linear(c["H"], c["I"])
        self.dense_4h_to_h = nn.Linear(c["I"], c["H"])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.dense_4h_to_h(F.gelu(self.dense_h_to_4h(x)))


class GPTNeoXLayer(nn.Module):
    """Two LayerNorms, attention and MLP; parallel residual (Pythia): x + attn(ln₁(x)) + mlp(ln₂(x)).
    No notebook calls it; it works behind the helpers of ``09_modern_architectures``."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.parallel = c.flags["use_parallel_residual"]
        self.input_layernorm = nn.LayerNorm(c["H"])
        self.post_attention_layernorm = nn.LayerNorm(c["H"])
        self.attention = GPTNeoXAttention(c)
        self.mlp = GPTNeoXMLP(c)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        attn = self.attention(self.input_layernorm(x))
        if self.parallel:
            return x + attn + self.mlp(self.post_attention_layernorm(x))
        x = x + attn
        return x + self.mlp(self.post_attention_layernorm(x))


class GPTNeoXModel(nn.Module):
    """``gpt_neox.``: embed_in V×H, L layers, final LayerNorm 2H; no position table (rotary).
    No notebook calls it; it works behind the helpers of ``09_modern_architectures``."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.embed_in = nn.Embedding(c["V"], c["H"])
        self.layers = nn.ModuleList(GPTNeoXLayer(c) for _ in range(c["L"]))
        self.final_layer_norm = nn.LayerNorm(c["H"])

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        return self.final_layer_norm(_run(self.layers, self.embed_in(input_ids)))


class GPTNeoXForCausalLM(nn.Module):
    """GPT-NeoX with its output head ``lm_head`` (``embed_out`` in the checkpoints), untied unless the config ties it.
    No notebook calls it; it works behind the helpers of ``09_modern_architectures``."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.gpt_neox = GPTNeoXModel(c)
        self.lm_head = _lm_head(c, self.gpt_neox.embed_in)

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        return self.lm_head(self.gpt_neox(input_ids))
