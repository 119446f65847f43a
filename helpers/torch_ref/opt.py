"""OPT as plain torch modules: learned positions offset by 2, pre- or post-LayerNorm, an optional d_e ≠ H projection."""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from ..config import ModelConfig
from .blocks import _lm_head, _run, _self_attention

__all__ = ["OPTAttention", "OPTDecoderLayer", "OPTDecoder", "OPTModel", "OPTForCausalLM"]


class OPTAttention(nn.Module):
    """k, v, q and out projections, H × H each, biases unless ``enable_bias`` is false.
    No notebook calls it; it works behind the helpers of ``00_overview``."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        H, bias = c["H"], c.flags["enable_bias"]
        self.heads = c["A"]
        self.k_proj = nn.Linear(H, H, bias=bias)
        self.v_proj = nn.Linear(H, H, bias=bias)
        self.q_proj = nn.Linear(H, H, bias=bias)
        self.out_proj = nn.Linear(H, H, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.out_proj(_self_attention(x, self.heads, (self.q_proj, self.k_proj, self.v_proj), causal=True))


class OPTDecoderLayer(nn.Module):
    """Attention and a ReLU MLP (fc1 I × H, fc2 H × I), each with a LayerNorm before it (pre-LN) or after its residual.
    No notebook calls it; it works behind the helpers of ``00_overview``."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        H, I, bias, affine = c["H"], c["I"], c.flags["enable_bias"], c.flags["layer_norm_elementwise_affine"]
        self.pre = c.flags["do_layer_norm_before"]
        self.self_attn = OPTAttention(c)
        self.self_attn_layer_norm = nn.LayerNorm(H, elementwise_affine=affine)
        self.fc1 = nn.Linear(H, I, bias=bias)
        self.fc2 = nn.Linear(I, H, bias=bias)
        self.final_layer_norm = nn.LayerNorm(H, elementwise_affine=affine)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.pre:
            x = x + self.self_attn(self.self_attn_layer_norm(x))
            return x + self.fc2(F.relu(self.fc1(self.final_layer_norm(x))))
        x = self.self_attn_layer_norm(x + self.self_attn(x))
        return self.final_layer_norm(x + self.fc2(F.relu(self.fc1(x))))


class OPTDecoder(nn.Module):
    """``model.decoder.``: token table V × d_e, positions (P + 2) × H (offset 2), projections if d_e ≠ H, final
    LayerNorm.
    No notebook calls it; it works behind the helpers of ``00_overview``."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        V, P, H, d_e = c["V"], c["P"], c["H"], c["d_e"]
        self.embed_tokens = nn.Embedding(V, d_e, padding_idx=c.pad_token_id)
        self.embed_positions = nn.Embedding(P + 2, H)
        self.project_out = nn.Linear(H, d_e, bias=False) if d_e != H else None
        self.project_in = nn.Linear(d_e, H, bias=False) if d_e != H else None
        final = c.flags["do_layer_norm_before"] and not c.flags["_remove_final_layer_norm"]
        affine = c.flags["layer_norm_elementwise_affine"]
        self.final_layer_norm = nn.LayerNorm(H, elementwise_affine=affine) if final else None
        self.layers = nn.ModuleList(OPTDecoderLayer(c) for _ in range(c["L"]))

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        x = self.embed_tokens(input_ids)
        if self.project_in is not None:
            x = self.project_in(x)
        x = x + self.embed_positions(torch.arange(input_ids.shape[1], device=input_ids.device) + 2)
        x = _run(self.layers, x)
        if self.final_layer_norm is not None:
            x = self.final_layer_norm(x)
        return x if self.project_out is None else self.project_out(x)


class OPTModel(nn.Module):
    """OPT's model: ``decoder.`` with its tables, layers and (pre-LN) final norm.
    No notebook calls it; it works behind the helpers of ``00_overview``."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.decoder = OPTDecoder(c)

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        return self.decoder(input_ids)


class OPTForCausalLM(nn.Module):
    """OPT with its LM head (V × d_e) over every position; the head is the token table when tied.
    No notebook calls it; it works behind the helpers of ``00_overview``."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.model = OPTModel(c)
        self.lm_head = _lm_head(c, self.model.decoder.embed_tokens, width="d_e")

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        return self.lm_head(self.model(input_ids))
