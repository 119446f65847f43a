"""The blocks every reference model shares, written once: the attention core, heads, RMSNorm, rotary angles, and the
decoder skeleton (LLaMA's layer, model and causal LM) whose parts a family swaps by class attributes.

No notebook imports this module directly: its names are re-exported by :mod:`helpers.torch_ref`.
"""

from __future__ import annotations

import math
import sys
from typing import Callable

import torch
from torch import nn
from torch.nn import functional as F

from ..config import ModelConfig

# --- the attention core and the head split -----------------------------------------------------------


def _mask(S: int, device: torch.device, window: int | None = None) -> torch.Tensor:
    """[S, S] True where query i may see key j: j ≤ i, and (with a ``window``) j > i − window."""
    seen = torch.ones(S, S, dtype=torch.bool, device=device).tril()
    if window is not None:
        seen = seen & ~torch.ones(S, S, dtype=torch.bool, device=device).tril(-window)
    return seen


def _attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool) -> torch.Tensor:
    """Eager scaled dot-product attention over [B, heads, S, d_k]: two matmuls of S×S."""
    scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(q.shape[-1])
    if causal:
        scores = scores.masked_fill(~_mask(q.shape[-2], q.device), float("-inf"))
    return torch.matmul(scores.softmax(dim=-1), v)


def _attend(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool) -> torch.Tensor:
    """The attention core every reference model calls: ``helpers.torch_ref._attention``, looked up at call time, so
    that ``patch.object(torch_ref, "_attention", sdpa)`` (notebook 10) swaps it in every model at once."""
    return sys.modules[__package__]._attention(q, k, v, causal)


def _heads(x: torch.Tensor, heads: int) -> torch.Tensor:
    """[B, S, heads·d_k] -> [B, heads, S, d_k]."""
    B, S, _ = x.shape
    return x.view(B, S, heads, -1).transpose(1, 2)


def _merge(x: torch.Tensor) -> torch.Tensor:
    """[B, heads, S, d_k] -> [B, S, heads·d_k]."""
    B, _, S, _ = x.shape
    return x.transpose(1, 2).reshape(B, S, -1)


def _shared_kv(k: torch.Tensor, v: torch.Tensor, heads: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Grouped-query attention: keys and values of [B, A_kv, S, d] repeated to the ``heads`` query heads (each
    key/value head serves A/A_kv of them)."""
    group = heads // k.shape[1]
    return k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)


def _self_attention(x: torch.Tensor, heads: int, projections: tuple[Callable, Callable, Callable],
                    causal: bool) -> torch.Tensor:
    """Multi-head self-attention of separate q, k, v projections (BERT's, DistilBERT's, ALBERT's, OPT's), heads
    merged back to [B, S, heads·d_k]; the output projection is the caller's."""
    q, k, v = (_heads(proj(x), heads) for proj in projections)
    return _merge(_attend(q, k, v, causal))


def _run(layers: nn.ModuleList, x: torch.Tensor) -> torch.Tensor:
    """x through each layer in turn."""
    for layer in layers:
        x = layer(x)
    return x


def _lm_head(c: ModelConfig, table: nn.Embedding, width: str = "H") -> nn.Linear:
    """The output head (width × V, no bias), the token ``table`` itself when the config ties them."""
    head = nn.Linear(c[width], c["V"], bias=False)
    if c.flags["tie_word_embeddings"]:
        head.weight = table.weight  # tied: one tensor, counted once
    return head


# --- RMSNorm and rotary positions --------------------------------------------------------------------

class RMSNorm(nn.Module):
    """RMSNorm: a gain γ of H, no bias β, no mean subtracted.
    Introduced in ``04_layer_norm``."""

    def __init__(self, H: int, eps: float = 1e-6) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(H))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.weight * x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)


def rotary_angles(d_k: int, S: int, device: torch.device | str, dtype: torch.dtype = torch.float32,
                  base: float = 10000) -> tuple[torch.Tensor, torch.Tensor]:
    """cos and sin of the rotary angles, [1, S, d_k]: position × frequency, elementwise (no matmul, no parameter).

    Built as transformers 5 builds them (an outer product by broadcasting), so FlopCounterMode counts 0.
    ``base``: θ, the wavelength scale (10,000 as in RoFormer; ModernBERT's global layers 160,000).
    No notebook calls it; it works behind the helpers of ``08_flops_and_memory``.
    """
    inv_freq = 1.0 / (base ** (torch.arange(0, d_k, 2, device=device, dtype=torch.float32) / d_k))
    positions = torch.arange(S, device=device, dtype=torch.float32)
    freqs = (positions[:, None] * inv_freq[None, :])[None]
    angles = torch.cat((freqs, freqs), dim=-1)
    return angles.cos().to(dtype), angles.sin().to(dtype)


def _rotate(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    half = x.shape[-1] // 2
    rotated = torch.cat((-x[..., half:], x[..., :half]), dim=-1)
    return x * cos[:, None] + rotated * sin[:, None]


# --- the decoder skeleton: LLaMA's attention, SwiGLU, layer, model and causal LM ------------------------

class Attention(nn.Module):
    """Grouped-query attention: A query heads, A_kv key/value heads of d_k, rotary angles, no position table.

    A family changes one step: :meth:`project` (the heads before rotation: QK-norms, a fused projection),
    :meth:`core` (the scores: sinks, windows), or the tensors in ``__init__`` (:meth:`biases`).

    No notebook calls it; it works behind the helpers of ``08_flops_and_memory``.
    """

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        H, A, A_kv, d_k = c["H"], c["A"], c["A_kv"], c["d_k"]
        qkv_bias, o_bias = self.biases(c)
        self.heads, self.kv_heads = A, A_kv
        self.q_proj = nn.Linear(H, A * d_k, bias=qkv_bias)
        self.k_proj = nn.Linear(H, A_kv * d_k, bias=qkv_bias)
        self.v_proj = nn.Linear(H, A_kv * d_k, bias=qkv_bias)
        self.o_proj = nn.Linear(A * d_k, H, bias=o_bias)

    @staticmethod
    def biases(c: ModelConfig) -> tuple[bool, bool]:
        """(on q, k and v; on o): both ``attention_bias`` (Mistral has no such switch: never a bias)."""
        bias = c.flags.get("attention_bias", False)
        return bias, bias

    def project(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Queries [B, A, S, d_k], keys and values [B, A_kv, S, d_k], before the rotation."""
        return (_heads(self.q_proj(x), self.heads), _heads(self.k_proj(x), self.kv_heads),
                _heads(self.v_proj(x), self.kv_heads))

    def core(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        """Causal attention of every query head over its (shared) keys and values."""
        return _attend(q, k, v, causal=True)

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        q, k, v = self.project(x)
        k, v = _shared_kv(_rotate(k, cos, sin), v, self.heads)
        return self.o_proj(_merge(self.core(_rotate(q, cos, sin), k, v)))


class SwiGLU(nn.Module):
    """down(silu(gate(x)) * up(x)): three matrices of H × width.
    No notebook calls it; it works behind the helpers of ``08_flops_and_memory``."""

    def __init__(self, H: int, width: int, bias: bool = False) -> None:
        super().__init__()
        self.gate_proj = nn.Linear(H, width, bias=bias)
        self.up_proj = nn.Linear(H, width, bias=bias)
        self.down_proj = nn.Linear(width, H, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


# where a layer's RMSNorms stand: before or after each sub-layer (``DecoderLayer.norms``)
BEFORE_ATTENTION, AFTER_ATTENTION, BEFORE_MLP, AFTER_MLP = range(4)


class DecoderLayer(nn.Module):
    """A decoder layer: ``self_attn``, ``mlp`` and RMSNorms of H around them, each sub-layer with a residual.

    ``norms`` names the norms in registration order with where each stands (LLaMA: one before each sub-layer;
    Gemma 2: before and after each; OLMo 2: after each). A layer whose parts depend on its index ``i`` overrides
    :meth:`attention` or :meth:`feed_forward`.

    No notebook calls it; it works behind the helpers of ``08_flops_and_memory``.
    """

    attention_class: type[nn.Module] = Attention
    mlp_class: Callable[[ModelConfig], nn.Module]
    norms: dict[str, int] = {"input_layernorm": BEFORE_ATTENTION, "post_attention_layernorm": BEFORE_MLP}

    def __init__(self, c: ModelConfig, i: int = 0) -> None:
        super().__init__()
        self.self_attn = self.attention(c, i)
        self.mlp = self.feed_forward(c, i)
        for name in self.norms:
            setattr(self, name, RMSNorm(c["H"]))
        self.placed = {where: name for name, where in self.norms.items()}

    def attention(self, c: ModelConfig, i: int) -> nn.Module:
        """Layer i's attention."""
        return self.attention_class(c)

    def feed_forward(self, c: ModelConfig, i: int) -> nn.Module:
        """Layer i's feed-forward."""
        return self.mlp_class(c)

    def _norm(self, where: int, x: torch.Tensor) -> torch.Tensor:
        return getattr(self, self.placed[where])(x) if where in self.placed else x

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        attended = self.self_attn(self._norm(BEFORE_ATTENTION, x), cos, sin)
        x = x + self._norm(AFTER_ATTENTION, attended)
        return x + self._norm(AFTER_MLP, self.mlp(self._norm(BEFORE_MLP, x)))


class DecoderModel(nn.Module):
    """``model.``: embed_tokens V×H, L layers of ``layer_class`` (built with their index), final RMSNorm H; rotary
    angles over ``rotary`` (a size of the config: d_k, or DeepSeek's d_rope) add no parameter.
    No notebook calls it; it works behind the helpers of ``08_flops_and_memory``."""

    layer_class: type[nn.Module] = DecoderLayer
    rotary = "d_k"

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.d_k = c[self.rotary]
        self.embed_tokens = nn.Embedding(c["V"], c["H"])
        self.layers = nn.ModuleList(self.layer_class(c, i) for i in range(c["L"]))
        self.norm = RMSNorm(c["H"])

    def angles(self, i: int, cos: torch.Tensor, sin: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The rotary angles layer i turns its queries and keys by (SmolLM3's NoPE layers: none)."""
        return cos, sin

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        x = self.embed_tokens(input_ids)
        cos, sin = rotary_angles(self.d_k, input_ids.shape[1], input_ids.device, x.dtype)
        for i, layer in enumerate(self.layers):
            x = layer(x, *self.angles(i, cos, sin))
        return self.norm(x)


class CausalLM(nn.Module):
    """``model_class`` under ``model.``, and its output head ``lm_head`` (untied unless the config ties it).
    No notebook calls it; it works behind the helpers of ``08_flops_and_memory``."""

    model_class: type[nn.Module] = DecoderModel

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.model = self.model_class(c)
        self.lm_head = _lm_head(c, self.model.embed_tokens)

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        return self.lm_head(self.model(input_ids))
