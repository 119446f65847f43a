"""T5 as plain torch modules: an encoder-decoder with a relative position bias, RMS-style norms, no biases."""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from ..config import ModelConfig
from .blocks import RMSNorm, _heads, _mask, _merge

__all__ = ["T5Attention", "T5LayerSelfAttention", "T5LayerCrossAttention", "T5DenseActDense", "T5LayerFF", "T5Block",
           "T5Stack", "T5ForConditionalGeneration"]


class T5Attention(nn.Module):
    """q, k, v (A·d_k × H) and o (H × A·d_k), no bias; block 0 of a stack also holds the relative bias (R × A).

    The bias is looked up (no matmul) and added to the scores. The buckets here are the relative distances
    clamped into [0, R): simpler than T5's logarithmic buckets, the same tensors and the same matmuls.
    No notebook calls it; it works behind the helpers of ``09_modern_architectures``.
    """

    def __init__(self, c: ModelConfig, relative: bool) -> None:
        super().__init__()
        H, A, d_k = c["H"], c["A"], c["d_k"]
        self.heads = A
        self.q = nn.Linear(H, A * d_k, bias=False)
        self.k = nn.Linear(H, A * d_k, bias=False)
        self.v = nn.Linear(H, A * d_k, bias=False)
        self.o = nn.Linear(A * d_k, H, bias=False)
        if relative:
            self.relative_attention_bias = nn.Embedding(c["R"], A)

    def bias(self, S_q: int, S_k: int, device: torch.device) -> torch.Tensor:
        """[1, A, S_q, S_k]: the relative bias of every query–key distance."""
        distance = torch.arange(S_k, device=device)[None, :] - torch.arange(S_q, device=device)[:, None]
        buckets = distance.abs().clamp(max=self.relative_attention_bias.num_embeddings - 1)
        return self.relative_attention_bias(buckets).permute(2, 0, 1)[None]

    def forward(self, x: torch.Tensor, kv: torch.Tensor, bias: torch.Tensor | None, causal: bool) -> torch.Tensor:
        q, k, v = _heads(self.q(x), self.heads), _heads(self.k(kv), self.heads), _heads(self.v(kv), self.heads)
        scores = torch.matmul(q, k.transpose(-1, -2))  # T5 does not scale the scores
        if bias is not None:
            scores = scores + bias
        if causal:
            scores = scores.masked_fill(~_mask(q.shape[-2], q.device), float("-inf"))
        return self.o(_merge(torch.matmul(scores.softmax(dim=-1), v)))


class T5LayerSelfAttention(nn.Module):
    """One T5 self-attention sub-layer: an RMS-style norm (γ only), attention, residual.
    No notebook calls it; it works behind the helpers of ``09_modern_architectures``."""

    def __init__(self, c: ModelConfig, relative: bool) -> None:
        super().__init__()
        self.SelfAttention = T5Attention(c, relative)
        self.layer_norm = RMSNorm(c["H"])


class T5LayerCrossAttention(nn.Module):
    """One T5 decoder cross-attention sub-layer: norm, attention over the encoder's output, residual.
    No notebook calls it; it works behind the helpers of ``09_modern_architectures``."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.EncDecAttention = T5Attention(c, False)
        self.layer_norm = RMSNorm(c["H"])


class T5DenseActDense(nn.Module):
    """wi (I × H) and wo (H × I), ReLU between; gated (T5 v1.1, FLAN-T5): wi_0 and wi_1, GELU(wi_0 x) · wi_1 x.
    No notebook calls it; it works behind the helpers of ``09_modern_architectures``."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        H, I = c["H"], c["I"]
        self.gated = c["G"] == 2
        if self.gated:
            self.wi_0 = nn.Linear(H, I, bias=False)
            self.wi_1 = nn.Linear(H, I, bias=False)
        else:
            self.wi = nn.Linear(H, I, bias=False)
        self.wo = nn.Linear(I, H, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.gated:
            return self.wo(F.gelu(self.wi_0(x), approximate="tanh") * self.wi_1(x))
        return self.wo(F.relu(self.wi(x)))


class T5LayerFF(nn.Module):
    """One T5 feed-forward sub-layer: norm, the (gated or plain) dense block, residual.
    No notebook calls it; it works behind the helpers of ``09_modern_architectures``."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.DenseReluDense = T5DenseActDense(c)
        self.layer_norm = RMSNorm(c["H"])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.DenseReluDense(self.layer_norm(x))


class T5Block(nn.Module):
    """``layer``: self-attention, [cross-attention in the decoder], feed-forward; each pre-RMSNorm with a residual.
    No notebook calls it; it works behind the helpers of ``09_modern_architectures``."""

    def __init__(self, c: ModelConfig, decoder: bool, relative: bool) -> None:
        super().__init__()
        self.decoder = decoder
        parts: list[nn.Module] = [T5LayerSelfAttention(c, relative)]
        if decoder:
            parts.append(T5LayerCrossAttention(c))
        parts.append(T5LayerFF(c))
        self.layer = nn.ModuleList(parts)

    def forward(self, x: torch.Tensor, bias: torch.Tensor, encoded: torch.Tensor | None) -> torch.Tensor:
        self_attn = self.layer[0]
        h = self_attn.layer_norm(x)
        x = x + self_attn.SelfAttention(h, h, bias, causal=self.decoder)
        if self.decoder:
            cross = self.layer[1]
            x = x + cross.EncDecAttention(cross.layer_norm(x), encoded, None, causal=False)
        return self.layer[-1](x)


class T5Stack(nn.Module):
    """``encoder.`` or ``decoder.``: the shared token table, the blocks (block 0 holds the relative bias), a final norm.
    No notebook calls it; it works behind the helpers of ``09_modern_architectures``."""

    def __init__(self, c: ModelConfig, shared: nn.Embedding, decoder: bool) -> None:
        super().__init__()
        self.embed_tokens = shared
        layers = c["L_d"] if decoder else c["L"]
        self.block = nn.ModuleList(T5Block(c, decoder, relative=(i == 0)) for i in range(layers))
        self.final_layer_norm = RMSNorm(c["H"])

    def forward(self, input_ids: torch.Tensor, encoded: torch.Tensor | None = None) -> torch.Tensor:
        x = self.embed_tokens(input_ids)
        S = input_ids.shape[1]
        bias = self.block[0].layer[0].SelfAttention.bias(S, S, input_ids.device)  # block 0's, used by every block
        for block in self.block:
            x = block(x, bias, encoded)
        return self.final_layer_norm(x)


class T5ForConditionalGeneration(nn.Module):
    """``shared`` (V × H), the encoder and the decoder over it, and the LM head, always ``shared`` (transformers 5.23).

    The decoder reads the same token ids as the encoder: one length S for both.
    No notebook calls it; it works behind the helpers of ``09_modern_architectures``.
    """

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.shared = nn.Embedding(c["V"], c["H"])
        self.encoder = T5Stack(c, self.shared, decoder=False)
        self.decoder = T5Stack(c, self.shared, decoder=True)
        self.lm_head = nn.Linear(c["H"], c["V"], bias=False)
        self.lm_head.weight = self.shared.weight

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        return self.lm_head(self.decoder(input_ids, self.encoder(input_ids)))
