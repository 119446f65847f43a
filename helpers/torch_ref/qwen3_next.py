"""Qwen3-Next as plain torch modules: Gated DeltaNet and gated full attention layers, experts with a shared expert.

Works behind the helpers of ``11_todays_models``. The forward pass counts under FlopCounterMode what the engine counts
(``helpers.families.qwen3_next``): the convolution as transformers' torch path computes it with a cache (the input
left-padded to K_c, then padded by K_c − 1 on both sides: max(S, K_c) + K_c − 1 outputs per channel), written as one
batched matmul per channel so that its backward pass counts 2× its forward (FlopCounterMode prices a grouped
convolution's weight gradient as a dense one); the gated delta rule by its recurrence, token by token, three matmuls
per value head (the state read with the key, its rank-1 update, the read-out with the query: 6·d_gk·d_gv FLOPs), not
transformers' chunked kernel, which does more.
"""

from __future__ import annotations

import math

import torch
from torch import nn
from torch.nn import functional as F

from ..config import ModelConfig
from .blocks import BEFORE_ATTENTION, BEFORE_MLP, RMSNorm, SwiGLU, _heads, _merge, _rotate, _shared_kv
from .llama import LlamaDecoderLayer, LlamaForCausalLM, LlamaMLP, LlamaModel
from .moe import MoeExperts, MoeRouter, SparseMoeBlock
from .qwen import Qwen3Attention

__all__ = ["Qwen3NextAttention", "Qwen3NextGatedDeltaNet", "Qwen3NextSparseMoeBlock", "Qwen3NextDecoderLayer",
           "Qwen3NextModel", "Qwen3NextForCausalLM"]



def _sparse(c: ModelConfig, i: int) -> bool:
    """Whether layer ``i`` holds the experts, as ``Qwen3NextDecoderLayer`` decides (not in ``mlp_only_layers``, E > 0,
    every ``decoder_sparse_step``-th layer). Written here from transformers, not taken from the engine's family."""
    return i not in c.lists["mlp_only_layers"] and c["E"] > 0 and (i + 1) % c["s"] == 0

class Qwen3NextAttention(Qwen3Attention):
    """Qwen3's attention whose ``q_proj`` is twice as wide: each head's query and a gate, the attention output times
    sigmoid(gate) before ``o_proj``; rotary angles on the first R dimensions of each query and key head.
    No notebook calls it; it works behind the helpers of ``11_todays_models``."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__(c)
        self.q_proj = nn.Linear(c["H"], 2 * c["A"] * c["d_k"], bias=self.biases(c)[0])  # keeps q_proj's place
        self.d_k, self.rotary = c["d_k"], c["R"]

    def _turn(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        """The first R dimensions of each head rotated, the rest passed through."""
        return torch.cat((_rotate(x[..., :self.rotary], cos, sin), x[..., self.rotary:]), dim=-1)

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        B, S, _ = x.shape
        query, gate = self.q_proj(x).view(B, S, self.heads, 2 * self.d_k).chunk(2, dim=-1)
        q = self._turn(self.q_norm(query.transpose(1, 2)), cos, sin)
        k = self._turn(self.k_norm(_heads(self.k_proj(x), self.kv_heads)), cos, sin)
        k, v = _shared_kv(k, _heads(self.v_proj(x), self.kv_heads), self.heads)
        return self.o_proj(_merge(self.core(q, k, v)) * torch.sigmoid(gate.reshape(B, S, -1)))


class Qwen3NextGatedDeltaNet(nn.Module):
    """Gated DeltaNet: queries and keys (G_k heads of d_gk), values and an output gate z (G_v heads of d_gv), β and the
    decay's input a (one each per value head) from two projections; a depthwise causal convolution of K_c taps over
    the queries, keys and values; per value head a d_gk × d_gv state, decayed by exp(g), corrected by the delta rule
    and read by the query; a gated RMSNorm of d_gv; ``out_proj``.
    No notebook calls it; it works behind the helpers of ``11_todays_models``."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        H, G_k, G_v, d_gk, d_gv, K_c = c["H"], c["G_k"], c["G_v"], c["d_gk"], c["d_gv"], c["K_c"]
        self.sizes = (G_k * d_gk, G_k * d_gk, G_v * d_gv, G_v * d_gv)  # q, k, v, z
        self.G_k, self.G_v, self.d_gk, self.d_gv, self.K_c = G_k, G_v, d_gk, d_gv, K_c
        channels = 2 * G_k * d_gk + G_v * d_gv
        self.dt_bias = nn.Parameter(torch.ones(G_v))
        self.A_log = nn.Parameter(torch.zeros(G_v))
        self.conv1d = nn.Conv1d(channels, channels, K_c, groups=channels, bias=False, padding=K_c - 1)
        self.in_proj_qkvz = nn.Linear(H, channels + G_v * d_gv, bias=False)
        self.in_proj_ba = nn.Linear(H, 2 * G_v, bias=False)
        self.norm = RMSNorm(d_gv)
        self.out_proj = nn.Linear(G_v * d_gv, H, bias=False)

    def convolution(self, x: torch.Tensor) -> torch.Tensor:
        """[B, C, S] through the depthwise kernel as transformers' torch path runs it with a cache, each channel's
        windows times its K_c taps as one batched matmul ([C, B·positions, K_c] @ [C, K_c, 1]), then SiLU."""
        B, C, S = x.shape
        K = self.K_c
        x = F.pad(x, (max(K - S, 0) + K - 1, K - 1))  # left-padded to K (a prefill shorter than the kernel), then K − 1
        windows = x.unfold(-1, K, 1)  # [B, C, max(S, K) + K − 1, K]
        positions = windows.shape[2]
        out = torch.bmm(windows.permute(1, 0, 2, 3).reshape(C, B * positions, K), self.conv1d.weight.view(C, K, 1))
        return F.silu(out.view(C, B, positions).permute(1, 0, 2)[..., :max(S, K)][..., -S:])

    def recurrence(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, beta: torch.Tensor,
                   decay: torch.Tensor) -> torch.Tensor:
        """The gated delta rule over [B, S, G_v, ·], token by token: S ← decay·S, S ← S + k·(β·(v − Sᵀk))ᵀ, o = Sᵀq,
        three matmuls per token and value head (2·d_gk·d_gv FLOPs each)."""
        B, S = q.shape[:2]
        state = q.new_zeros(B * self.G_v, self.d_gk, self.d_gv)
        outputs = []
        for t in range(S):
            q_t, k_t = q[:, t].reshape(-1, 1, self.d_gk), k[:, t].reshape(-1, 1, self.d_gk)
            state = state * decay[:, t].reshape(-1, 1, 1)
            delta = (v[:, t].reshape(-1, 1, self.d_gv) - torch.bmm(k_t, state)) * beta[:, t].reshape(-1, 1, 1)
            state = state + torch.bmm(k_t.transpose(1, 2), delta)
            outputs.append(torch.bmm(q_t, state).view(B, self.G_v, self.d_gv))
        return torch.stack(outputs, dim=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, S, _ = x.shape
        q, k, v, z = self.in_proj_qkvz(x).split(self.sizes, dim=-1)
        b, a = self.in_proj_ba(x).chunk(2, dim=-1)
        mixed = self.convolution(torch.cat((q, k, v), dim=-1).transpose(1, 2)).transpose(1, 2)
        q, k, v = mixed.split(self.sizes[:3], dim=-1)
        group = self.G_v // self.G_k  # each key head serves G_v / G_k value heads
        q, k = (F.normalize(t.reshape(B, S, self.G_k, self.d_gk), dim=-1).repeat_interleave(group, dim=2) for t in (q, k))
        decay = (-self.A_log.exp() * F.softplus(a + self.dt_bias)).exp()
        out = self.recurrence(q / math.sqrt(self.d_gk), k, v.reshape(B, S, self.G_v, self.d_gv), b.sigmoid(), decay)
        out = self.norm(out) * F.silu(z.reshape(B, S, self.G_v, self.d_gv))
        return self.out_proj(out.reshape(B, S, -1))


class Qwen3NextSparseMoeBlock(SparseMoeBlock):
    """The router (``gate``) first, the E fused experts of I_e, then a shared expert of I_s on every token behind its
    own sigmoid gate (``shared_expert_gate``, 1 × H).
    No notebook calls it; it works behind the helpers of ``11_todays_models``."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.gate = MoeRouter(c, normalise=c.flags["norm_topk_prob"])
        self.experts = MoeExperts(c, "I_e")
        self.shared_expert = SwiGLU(c["H"], c["I_s"])
        self.shared_expert_gate = nn.Linear(c["H"], 1, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return super().forward(x) + torch.sigmoid(self.shared_expert_gate(x)) * self.shared_expert(x)


class Qwen3NextDecoderLayer(LlamaDecoderLayer):
    """One layer: Gated DeltaNet (``linear_attn``), gated attention (``self_attn``) or, for another layer type, no token
    mixer; a sparse block or a dense SwiGLU (Qwen3-MoE's rule); LLaMA's two RMSNorms.
    No notebook calls it; it works behind the helpers of ``11_todays_models``."""

    def __init__(self, c: ModelConfig, i: int = 0) -> None:
        nn.Module.__init__(self)
        self.kind = c.lists["types"][i]  # 1: linear attention, 2: full attention, 0: none
        if self.kind == 1:
            self.linear_attn = Qwen3NextGatedDeltaNet(c)
        elif self.kind == 2:
            self.self_attn = Qwen3NextAttention(c)
        self.mlp = Qwen3NextSparseMoeBlock(c) if _sparse(c, i) else LlamaMLP(c)
        for name in self.norms:
            setattr(self, name, RMSNorm(c["H"]))
        self.placed = {where: name for name, where in self.norms.items()}

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        mixed = self._norm(BEFORE_ATTENTION, x)
        if self.kind == 1:
            mixed = self.linear_attn(mixed)
        elif self.kind == 2:
            mixed = self.self_attn(mixed, cos, sin)
        x = x + mixed
        return x + self.mlp(self._norm(BEFORE_MLP, x))


class Qwen3NextModel(LlamaModel):
    """``model.`` of ``Qwen3NextForCausalLM``: token table, L layers, final RMSNorm; rotary angles over R dimensions.
    No notebook calls it; it works behind the helpers of ``11_todays_models``."""

    layer_class = Qwen3NextDecoderLayer
    rotary = "R"


class Qwen3NextForCausalLM(LlamaForCausalLM):
    """``Qwen3NextForCausalLM``: linear and full attention layers, top-k experts with a shared expert.
    No notebook calls it; it works behind the helpers of ``11_todays_models``."""

    model_class = Qwen3NextModel
