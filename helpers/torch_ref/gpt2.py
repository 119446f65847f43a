"""GPT-2 as plain torch modules: Conv1D layers (weights stored [in, out]), learned positions, pre-LayerNorm."""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from ..config import ModelConfig
from .blocks import _attend, _heads, _lm_head, _merge, _run

__all__ = ["Conv1D", "GPT2Attention", "GPT2MLP", "GPT2Block", "GPT2Model", "GPT2LMHeadModel"]


class Conv1D(nn.Module):
    """GPT-2's linear layer: weight stored [in, out] (transposed against ``nn.Linear``).
    No notebook calls it; it works behind the helpers of ``01_embeddings``."""

    def __init__(self, n_in: int, n_out: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.empty(n_in, n_out))
        nn.init.normal_(self.weight, std=0.02)  # as GPT-2 initialises it (skipped on the meta device: build)
        self.bias = nn.Parameter(torch.zeros(n_out))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shape = (*x.shape[:-1], self.weight.shape[1])
        return torch.addmm(self.bias, x.reshape(-1, x.shape[-1]), self.weight).view(shape)


class GPT2Attention(nn.Module):
    """GPT-2 attention: c_attn H×3H + 3H, c_proj H² + H: 4H² + 4H.
    No notebook calls it; it works behind the helpers of ``01_embeddings``."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.heads = c["A"]
        self.c_attn = Conv1D(c["H"], 3 * c["H"])
        self.c_proj = Conv1D(c["H"], c["H"])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q, k, v = (_heads(t, self.heads) for t in self.c_attn(x).split(x.shape[-1], dim=-1))
        return self.c_proj(_merge(_attend(q, k, v, causal=True)))


class GPT2MLP(nn.Module):
    """GPT-2 MLP: c_fc H×I + I, c_proj I×H + H, tanh GELU between: 2H·I + I + H.
    No notebook calls it; it works behind the helpers of ``01_embeddings``."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.c_fc = Conv1D(c["H"], c["I"])
        self.c_proj = Conv1D(c["I"], c["H"])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.c_proj(F.gelu(self.c_fc(x), approximate="tanh"))


class GPT2Block(nn.Module):
    """Pre-LayerNorm decoder layer: ln_1, attention, ln_2, MLP.
    No notebook calls it; it works behind the helpers of ``01_embeddings``."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.ln_1 = nn.LayerNorm(c["H"])
        self.attn = GPT2Attention(c)
        self.ln_2 = nn.LayerNorm(c["H"])
        self.mlp = GPT2MLP(c)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT2Model(nn.Module):
    """``transformer.``: wte V×H, wpe P×H, L blocks, ln_f 2H: (V + P)·H + L·(4H² + 2H·I + I + 9H) + 2H.
    No notebook calls it; it works behind the helpers of ``01_embeddings``."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.wte = nn.Embedding(c["V"], c["H"])
        self.wpe = nn.Embedding(c["P"], c["H"])
        self.h = nn.ModuleList(GPT2Block(c) for _ in range(c["L"]))
        self.ln_f = nn.LayerNorm(c["H"])

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        positions = torch.arange(input_ids.shape[1], device=input_ids.device)
        x = self.wte(input_ids) + self.wpe(positions)
        return self.ln_f(_run(self.h, x))


class GPT2LMHeadModel(nn.Module):
    """GPT-2 with its LM head over every position; the head is the token table when tied.
    No notebook calls it; it works behind the helpers of ``01_embeddings``."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.transformer = GPT2Model(c)
        self.lm_head = _lm_head(c, self.transformer.wte)

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        return self.lm_head(self.transformer(input_ids))
