"""Reference models built from plain ``torch.nn`` modules (not from transformers), names as in the checkpoints.

Introduced in ``00_overview`` (the first torch check); every notebook closes with one of these.
Models are built on the meta device by default: shapes without memory, so even GPT-3 175B builds in
about a second. Each module has an eager forward pass (full S×S attention, as transformers' eager
attention), so ``torch.utils.flop_counter.FlopCounterMode`` can count its matrix multiplies.
"""

from __future__ import annotations

import math
from contextlib import contextmanager
from typing import Iterable, Iterator

import torch
from torch import nn
from torch.nn import functional as F

from .config import ModelConfig
from .params import Param


# --- counting -------------------------------------------------------------------------------------

def torch_count(module: nn.Module) -> int:
    """Parameters of a module as torch counts them: ``numel`` summed, a tied weight once.

    Introduced in ``00_overview``.
    """
    return sum(p.numel() for p in module.parameters())


def torch_table(module: nn.Module) -> list[tuple[str, tuple[int, ...]]]:
    """``(name, shape)`` of every parameter in registration order, a tied weight once.

    Introduced in ``01_embeddings``.
    """
    return [(name, tuple(p.shape)) for name, p in module.named_parameters()]


def matches(params: list[Param], module: nn.Module, prefix: str = "") -> bool:
    """True when a parameter table and a torch module have the same names, shapes and order.

    Introduced in ``00_overview``.
    """
    return [(prefix + p.name, p.shape) for p in params] == torch_table(module)


# --- BERT / RoBERTa ------------------------------------------------------------------------------

def _attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool) -> torch.Tensor:
    """Eager scaled dot-product attention over [B, heads, S, d_k]: two matmuls of S×S."""
    scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(q.shape[-1])
    if causal:
        S = q.shape[-2]
        mask = torch.ones(S, S, dtype=torch.bool, device=q.device).tril()
        scores = scores.masked_fill(~mask, float("-inf"))
    return torch.matmul(scores.softmax(dim=-1), v)


def _heads(x: torch.Tensor, heads: int) -> torch.Tensor:
    """[B, S, heads·d_k] -> [B, heads, S, d_k]."""
    B, S, _ = x.shape
    return x.view(B, S, heads, -1).transpose(1, 2)


def _shared_kv(k: torch.Tensor, v: torch.Tensor, heads: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Grouped-query attention: keys and values of [B, A_kv, S, d] repeated to the ``heads`` query heads (each
    key/value head serves A/A_kv of them)."""
    group = heads // k.shape[1]
    return k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)


def _merge(x: torch.Tensor) -> torch.Tensor:
    """[B, heads, S, d_k] -> [B, S, heads·d_k]."""
    B, _, S, _ = x.shape
    return x.transpose(1, 2).reshape(B, S, -1)


class BertEmbeddings(nn.Module):
    """Token (V×H) + position (P×H) + segment (T×H) tables, summed, then LayerNorm."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.word_embeddings = nn.Embedding(c["V"], c["H"])
        self.position_embeddings = nn.Embedding(c["P"], c["H"])
        self.token_type_embeddings = nn.Embedding(c["T"], c["H"])
        self.LayerNorm = nn.LayerNorm(c["H"])

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        S = input_ids.shape[1]
        positions = torch.arange(S, device=input_ids.device)
        x = self.word_embeddings(input_ids) + self.position_embeddings(positions)
        x = x + self.token_type_embeddings(torch.zeros_like(input_ids))
        return self.LayerNorm(x)


class RobertaEmbeddings(BertEmbeddings):
    """RoBERTa's embeddings: the same tables, the position table registered last (as transformers does)."""

    def __init__(self, c: ModelConfig) -> None:
        nn.Module.__init__(self)
        self.word_embeddings = nn.Embedding(c["V"], c["H"])
        self.token_type_embeddings = nn.Embedding(c["T"], c["H"])
        self.LayerNorm = nn.LayerNorm(c["H"])
        self.position_embeddings = nn.Embedding(c["P"], c["H"])


class BertSelfAttention(nn.Module):
    """Q, K, V projections (H×H each, with bias) and the split into A heads of d_k."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.heads = c["A"]
        self.query = nn.Linear(c["H"], c["H"])
        self.key = nn.Linear(c["H"], c["H"])
        self.value = nn.Linear(c["H"], c["H"])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q, k, v = (_heads(proj(x), self.heads) for proj in (self.query, self.key, self.value))
        return _merge(_attention(q, k, v, causal=False))


class BertSelfOutput(nn.Module):
    """Output projection W_O (H×H) and the post-attention LayerNorm."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.dense = nn.Linear(c["H"], c["H"])
        self.LayerNorm = nn.LayerNorm(c["H"])

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        return self.LayerNorm(self.dense(x) + residual)


class BertAttention(nn.Module):
    """Multi-head self-attention with its output projection and LayerNorm: 4H² + 4H + 2H."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.self = BertSelfAttention(c)
        self.output = BertSelfOutput(c)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.output(self.self(x), x)


class BertIntermediate(nn.Module):
    """First feed-forward matrix, H -> I, then GELU."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.dense = nn.Linear(c["H"], c["I"])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.gelu(self.dense(x))


class BertOutput(nn.Module):
    """Second feed-forward matrix, I -> H, and the layer's second LayerNorm."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.dense = nn.Linear(c["I"], c["H"])
        self.LayerNorm = nn.LayerNorm(c["H"])

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        return self.LayerNorm(self.dense(x) + residual)


class BertLayer(nn.Module):
    """One encoder layer: attention block, then feed-forward block."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.attention = BertAttention(c)
        self.intermediate = BertIntermediate(c)
        self.output = BertOutput(c)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.attention(x)
        return self.output(self.intermediate(x), x)


class BertEncoder(nn.Module):
    """The L encoder layers, ``encoder.layer.0`` ...: L·(4H² + 2H·I + I + 9H)."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.layer = nn.ModuleList(BertLayer(c) for _ in range(c["L"]))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layer:
            x = layer(x)
        return x


class BertPooler(nn.Module):
    """Dense H×H + tanh on the [CLS] position only."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.dense = nn.Linear(c["H"], c["H"])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.dense(x[:, 0]))


class BertModel(nn.Module):
    """Embeddings, L encoder layers, pooler: ``BertModel``."""

    embeddings_class: type[BertEmbeddings] = BertEmbeddings

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.embeddings = self.embeddings_class(c)
        self.encoder = BertEncoder(c)
        self.pooler = BertPooler(c)

    def forward(self, input_ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        hidden = self.encoder(self.embeddings(input_ids))
        return hidden, self.pooler(hidden)


class RobertaModel(BertModel):
    """``RobertaModel``: BERT's model with RoBERTa's embeddings (the position table registered last)."""

    embeddings_class = RobertaEmbeddings


class BertPredictionHeadTransform(nn.Module):
    """MLM head transform (parameters only): dense H² + H and LayerNorm 2H: H² + 3H."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.dense = nn.Linear(c["H"], c["H"])
        self.LayerNorm = nn.LayerNorm(c["H"])


class BertLMPredictionHead(nn.Module):
    """MLM head: transform (H² + H), LayerNorm (2H), decoder tied to the word embeddings, bias (V)."""

    def __init__(self, c: ModelConfig, word_embeddings: nn.Embedding) -> None:
        super().__init__()
        self.bias = nn.Parameter(torch.zeros(c["V"]))
        self.transform = BertPredictionHeadTransform(c)
        self.decoder = nn.Linear(c["H"], c["V"], bias=False)
        self.decoder.weight = word_embeddings.weight  # tied: one tensor, counted once


class BertPreTrainingHeads(nn.Module):
    """The ``cls.`` heads: MLM (V + H² + 3H, decoder tied) and NSP (2H + 2): V + H² + 5H + 2."""

    def __init__(self, c: ModelConfig, word_embeddings: nn.Embedding) -> None:
        super().__init__()
        self.predictions = BertLMPredictionHead(c, word_embeddings)
        self.seq_relationship = nn.Linear(c["H"], 2)


class BertForPreTraining(nn.Module):
    """``BertForPreTraining``: the model under ``bert.``, the MLM and NSP heads under ``cls.``."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.bert = BertModel(c)
        self.cls = BertPreTrainingHeads(c, self.bert.embeddings.word_embeddings)


# --- GPT-2 ---------------------------------------------------------------------------------------

class Conv1D(nn.Module):
    """GPT-2's linear layer: weight stored [in, out] (transposed against ``nn.Linear``)."""

    def __init__(self, n_in: int, n_out: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.empty(n_in, n_out))
        nn.init.normal_(self.weight, std=0.02)  # as GPT-2 initialises it (skipped on the meta device: build)
        self.bias = nn.Parameter(torch.zeros(n_out))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shape = (*x.shape[:-1], self.weight.shape[1])
        return torch.addmm(self.bias, x.reshape(-1, x.shape[-1]), self.weight).view(shape)


class GPT2Attention(nn.Module):
    """GPT-2 attention: c_attn H×3H + 3H, c_proj H² + H: 4H² + 4H."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.heads = c["A"]
        self.c_attn = Conv1D(c["H"], 3 * c["H"])
        self.c_proj = Conv1D(c["H"], c["H"])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q, k, v = (_heads(t, self.heads) for t in self.c_attn(x).split(x.shape[-1], dim=-1))
        return self.c_proj(_merge(_attention(q, k, v, causal=True)))


class GPT2MLP(nn.Module):
    """GPT-2 MLP: c_fc H×I + I, c_proj I×H + H, tanh GELU between: 2H·I + I + H."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.c_fc = Conv1D(c["H"], c["I"])
        self.c_proj = Conv1D(c["I"], c["H"])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.c_proj(F.gelu(self.c_fc(x), approximate="tanh"))


class GPT2Block(nn.Module):
    """Pre-LayerNorm decoder layer: ln_1, attention, ln_2, MLP."""

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
    """``transformer.``: wte V×H, wpe P×H, L blocks, ln_f 2H: (V + P)·H + L·(4H² + 2H·I + I + 9H) + 2H."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.wte = nn.Embedding(c["V"], c["H"])
        self.wpe = nn.Embedding(c["P"], c["H"])
        self.h = nn.ModuleList(GPT2Block(c) for _ in range(c["L"]))
        self.ln_f = nn.LayerNorm(c["H"])

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        positions = torch.arange(input_ids.shape[1], device=input_ids.device)
        x = self.wte(input_ids) + self.wpe(positions)
        for block in self.h:
            x = block(x)
        return self.ln_f(x)


class GPT2LMHeadModel(nn.Module):
    """GPT-2 with its LM head over every position; the head is the token table when tied."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.transformer = GPT2Model(c)
        self.lm_head = nn.Linear(c["H"], c["V"], bias=False)
        if c.flags["tie_word_embeddings"]:
            self.lm_head.weight = self.transformer.wte.weight

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        return self.lm_head(self.transformer(input_ids))


# --- LLaMA ---------------------------------------------------------------------------------------

class RMSNorm(nn.Module):
    """RMSNorm: a gain γ of H, no bias β, no mean subtracted."""

    def __init__(self, H: int, eps: float = 1e-6) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(H))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.weight * x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)


def rotary_angles(d_k: int, S: int, device: torch.device | str,
                  dtype: torch.dtype = torch.float32) -> tuple[torch.Tensor, torch.Tensor]:
    """cos and sin of the rotary angles, [1, S, d_k]: position × frequency, elementwise (no matmul, no parameter).

    Built as transformers 5 builds them (an outer product by broadcasting), so FlopCounterMode counts 0.
    No notebook calls it; it works behind the helpers of ``07_decoder_llms``.
    """
    inv_freq = 1.0 / (10000 ** (torch.arange(0, d_k, 2, device=device, dtype=torch.float32) / d_k))
    positions = torch.arange(S, device=device, dtype=torch.float32)
    freqs = (positions[:, None] * inv_freq[None, :])[None]
    angles = torch.cat((freqs, freqs), dim=-1)
    return angles.cos().to(dtype), angles.sin().to(dtype)


def _rotate(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    half = x.shape[-1] // 2
    rotated = torch.cat((-x[..., half:], x[..., :half]), dim=-1)
    return x * cos[:, None] + rotated * sin[:, None]


class LlamaAttention(nn.Module):
    """Grouped-query attention: A query heads, A_kv key/value heads of d_k, no position table."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        bias = c.flags.get("attention_bias", False)  # Mistral has no such switch: never a bias
        self.heads, self.kv_heads = c["A"], c["A_kv"]
        self.q_proj = nn.Linear(c["H"], c["A"] * c["d_k"], bias=bias)
        self.k_proj = nn.Linear(c["H"], c["A_kv"] * c["d_k"], bias=bias)
        self.v_proj = nn.Linear(c["H"], c["A_kv"] * c["d_k"], bias=bias)
        self.o_proj = nn.Linear(c["A"] * c["d_k"], c["H"], bias=bias)

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        q = _rotate(_heads(self.q_proj(x), self.heads), cos, sin)
        k = _rotate(_heads(self.k_proj(x), self.kv_heads), cos, sin)
        v = _heads(self.v_proj(x), self.kv_heads)
        k, v = _shared_kv(k, v, self.heads)
        return self.o_proj(_merge(_attention(q, k, v, causal=True)))


class LlamaMLP(nn.Module):
    """SwiGLU: down(silu(gate(x)) * up(x)), three matrices of H×I."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        bias = c.flags.get("mlp_bias", False)
        self.gate_proj = nn.Linear(c["H"], c["I"], bias=bias)
        self.up_proj = nn.Linear(c["H"], c["I"], bias=bias)
        self.down_proj = nn.Linear(c["I"], c["H"], bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class LlamaDecoderLayer(nn.Module):
    """Pre-RMSNorm LLaMA layer (no biases): 2A·d_k·H + 2A_kv·d_k·H attention + 3H·I SwiGLU + 2H norms."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.self_attn = LlamaAttention(c)
        self.mlp = LlamaMLP(c)
        self.input_layernorm = RMSNorm(c["H"])
        self.post_attention_layernorm = RMSNorm(c["H"])

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        x = x + self.self_attn(self.input_layernorm(x), cos, sin)
        return x + self.mlp(self.post_attention_layernorm(x))


class LlamaModel(nn.Module):
    """``model.``: embed_tokens V×H, L decoder layers, final RMSNorm H; rotary positions add no parameter."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.d_k = c["d_k"]
        self.embed_tokens = nn.Embedding(c["V"], c["H"])
        self.layers = nn.ModuleList(LlamaDecoderLayer(c) for _ in range(c["L"]))
        self.norm = RMSNorm(c["H"])

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        x = self.embed_tokens(input_ids)
        cos, sin = rotary_angles(self.d_k, input_ids.shape[1], input_ids.device, x.dtype)
        for layer in self.layers:
            x = layer(x, cos, sin)
        return self.norm(x)


class LlamaForCausalLM(nn.Module):
    """LLaMA with its output head (``lm_head``, untied unless the config ties it)."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.model = LlamaModel(c)
        self.lm_head = nn.Linear(c["H"], c["V"], bias=False)
        if c.flags["tie_word_embeddings"]:
            self.lm_head.weight = self.model.embed_tokens.weight

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        return self.lm_head(self.model(input_ids))


# --- Gemma 2 -------------------------------------------------------------------------------------

class Gemma2DecoderLayer(LlamaDecoderLayer):
    """LLaMA's layer with each sub-layer sandwiched between two RMSNorms: 4H of norms per layer.

    Introduced in ``07_decoder_llms``. (Gemma stores each gain as an offset from 1; the count is the same.)
    """

    def __init__(self, c: ModelConfig) -> None:
        super().__init__(c)
        self.pre_feedforward_layernorm = RMSNorm(c["H"])
        self.post_feedforward_layernorm = RMSNorm(c["H"])

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        x = x + self.post_attention_layernorm(self.self_attn(self.input_layernorm(x), cos, sin))
        return x + self.post_feedforward_layernorm(self.mlp(self.pre_feedforward_layernorm(x)))


class Gemma2Model(LlamaModel):
    """``model.``: embed_tokens V×H, L sandwiched layers, final RMSNorm (eager attention: the window masks, no FLOP saved)."""

    def __init__(self, c: ModelConfig) -> None:
        nn.Module.__init__(self)
        self.d_k = c["d_k"]
        self.embed_tokens = nn.Embedding(c["V"], c["H"])
        self.layers = nn.ModuleList(Gemma2DecoderLayer(c) for _ in range(c["L"]))
        self.norm = RMSNorm(c["H"])


class Gemma2ForCausalLM(LlamaForCausalLM):
    """Gemma 2 with its LM head, tied to the token table unless the config unties it."""

    def __init__(self, c: ModelConfig) -> None:
        nn.Module.__init__(self)
        self.model = Gemma2Model(c)
        self.lm_head = nn.Linear(c["H"], c["V"], bias=False)
        if c.flags["tie_word_embeddings"]:
            self.lm_head.weight = self.model.embed_tokens.weight


# --- GPT-NeoX / Pythia ----------------------------------------------------------------------------

class GPTNeoXAttention(nn.Module):
    """Fused ``query_key_value`` (3H × H, each head's q, k, v side by side) and ``dense`` (H × H), biases by default.

    Rotary angles on the first quarter of each head (Pythia's ``rotary_pct`` 0.25), the rest passed through:
    elementwise, no parameter, no FLOP.
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
        return self.dense(_merge(_attention(q, k, v, causal=True)))


class GPTNeoXMLP(nn.Module):
    """``dense_h_to_4h`` (I × H) and ``dense_4h_to_h`` (H × I), with biases, GELU between: 2H·I + I + H."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.dense_h_to_4h = nn.Linear(c["H"], c["I"])
        self.dense_4h_to_h = nn.Linear(c["I"], c["H"])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.dense_4h_to_h(F.gelu(self.dense_h_to_4h(x)))


class GPTNeoXLayer(nn.Module):
    """Two LayerNorms, attention and MLP; parallel residual (Pythia): x + attn(ln₁(x)) + mlp(ln₂(x))."""

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
    """``gpt_neox.``: embed_in V×H, L layers, final LayerNorm 2H; no position table (rotary)."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.embed_in = nn.Embedding(c["V"], c["H"])
        self.layers = nn.ModuleList(GPTNeoXLayer(c) for _ in range(c["L"]))
        self.final_layer_norm = nn.LayerNorm(c["H"])

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        x = self.embed_in(input_ids)
        for layer in self.layers:
            x = layer(x)
        return self.final_layer_norm(x)


class GPTNeoXForCausalLM(nn.Module):
    """GPT-NeoX with its output head ``lm_head`` (``embed_out`` in the checkpoints), untied unless the config ties it."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.gpt_neox = GPTNeoXModel(c)
        self.lm_head = nn.Linear(c["H"], c["V"], bias=False)
        if c.flags["tie_word_embeddings"]:
            self.lm_head.weight = self.gpt_neox.embed_in.weight

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        return self.lm_head(self.gpt_neox(input_ids))


# --- Qwen2, Qwen3, Phi-3: LLaMA's layer with other attention tensors ------------------------------

class Qwen2Attention(LlamaAttention):
    """Qwen2's attention: LLaMA's, with a bias on q, k and v (always) and none on o."""

    def __init__(self, c: ModelConfig) -> None:
        nn.Module.__init__(self)
        H, A, A_kv, d_k = c["H"], c["A"], c["A_kv"], c["d_k"]
        self.heads, self.kv_heads = A, A_kv
        self.q_proj = nn.Linear(H, A * d_k, bias=True)
        self.k_proj = nn.Linear(H, A_kv * d_k, bias=True)
        self.v_proj = nn.Linear(H, A_kv * d_k, bias=True)
        self.o_proj = nn.Linear(A * d_k, H, bias=False)


class Qwen3Attention(LlamaAttention):
    """Qwen3's attention: LLaMA's (a bias on all four only with ``attention_bias``), each head's query and key
    normalised by an RMSNorm of d_k (one gain shared by the heads) before the rotation."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__(c)
        self.q_norm = RMSNorm(c["d_k"])
        self.k_norm = RMSNorm(c["d_k"])

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        q = _rotate(self.q_norm(_heads(self.q_proj(x), self.heads)), cos, sin)
        k = _rotate(self.k_norm(_heads(self.k_proj(x), self.kv_heads)), cos, sin)
        v = _heads(self.v_proj(x), self.kv_heads)
        k, v = _shared_kv(k, v, self.heads)
        return self.o_proj(_merge(_attention(q, k, v, causal=True)))


class Phi3Attention(nn.Module):
    """Phi-3's attention: ``o_proj`` (registered first), then one fused ``qkv_proj`` split after the matmul."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        H, A, A_kv, d_k = c["H"], c["A"], c["A_kv"], c["d_k"]
        self.heads, self.kv_heads = A, A_kv
        self.sizes = [A * d_k, A_kv * d_k, A_kv * d_k]
        self.o_proj = nn.Linear(A * d_k, H, bias=False)
        self.qkv_proj = nn.Linear(H, sum(self.sizes), bias=False)

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        q, k, v = self.qkv_proj(x).split(self.sizes, dim=-1)
        q, k = _rotate(_heads(q, self.heads), cos, sin), _rotate(_heads(k, self.kv_heads), cos, sin)
        v = _heads(v, self.kv_heads)
        k, v = _shared_kv(k, v, self.heads)
        return self.o_proj(_merge(_attention(q, k, v, causal=True)))


class Phi3MLP(nn.Module):
    """Phi-3's SwiGLU: one fused ``gate_up_proj`` (H -> 2I, chunked into gate and up), then ``down_proj``."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.gate_up_proj = nn.Linear(c["H"], 2 * c["I"], bias=False)
        self.down_proj = nn.Linear(c["I"], c["H"], bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        gate, up = self.gate_up_proj(x).chunk(2, dim=-1)
        return self.down_proj(F.silu(gate) * up)


class _VariantDecoderLayer(LlamaDecoderLayer):
    """LLaMA's pre-RMSNorm layer with another attention (and MLP) class; the forward is LLaMA's."""

    attention: type[nn.Module] = LlamaAttention
    mlp_class: type[nn.Module] = LlamaMLP

    def __init__(self, c: ModelConfig) -> None:
        nn.Module.__init__(self)
        self.self_attn = self.attention(c)
        self.mlp = self.mlp_class(c)
        self.input_layernorm = RMSNorm(c["H"])
        self.post_attention_layernorm = RMSNorm(c["H"])


class Qwen2DecoderLayer(_VariantDecoderLayer):
    """A Qwen2 layer: LLaMA's, its attention with q/k/v biases."""

    attention = Qwen2Attention


class Qwen3DecoderLayer(_VariantDecoderLayer):
    """A Qwen3 layer: LLaMA's, its attention with per-head q/k RMSNorms."""

    attention = Qwen3Attention


class Phi3DecoderLayer(_VariantDecoderLayer):
    """A Phi-3 layer: LLaMA's, with the fused qkv_proj and gate_up_proj."""

    attention, mlp_class = Phi3Attention, Phi3MLP


class _VariantModel(LlamaModel):
    """``model.``: LLaMA's token table, L layers of ``layer_class``, final RMSNorm; the forward is LLaMA's."""

    layer_class: type[nn.Module] = LlamaDecoderLayer

    def __init__(self, c: ModelConfig) -> None:
        nn.Module.__init__(self)
        self.d_k = c["d_k"]
        self.embed_tokens = nn.Embedding(c["V"], c["H"])
        self.layers = nn.ModuleList(self.layer_class(c) for _ in range(c["L"]))
        self.norm = RMSNorm(c["H"])


class _VariantForCausalLM(LlamaForCausalLM):
    """LLaMA's causal LM over another ``model_class`` (``lm_head`` untied unless the config ties it)."""

    model_class: type[nn.Module] = LlamaModel

    def __init__(self, c: ModelConfig) -> None:
        nn.Module.__init__(self)
        self.model = self.model_class(c)
        self.lm_head = nn.Linear(c["H"], c["V"], bias=False)
        if c.flags["tie_word_embeddings"]:
            self.lm_head.weight = self.model.embed_tokens.weight


class Qwen2Model(_VariantModel):
    """``model.`` of ``Qwen2ForCausalLM``: token table, L Qwen2 layers, final RMSNorm."""

    layer_class = Qwen2DecoderLayer


class Qwen2ForCausalLM(_VariantForCausalLM):
    """``Qwen2ForCausalLM``: LLaMA with q/k/v biases."""

    model_class = Qwen2Model


class Qwen3Model(_VariantModel):
    """``model.`` of ``Qwen3ForCausalLM``: token table, L Qwen3 layers, final RMSNorm."""

    layer_class = Qwen3DecoderLayer


class Qwen3ForCausalLM(_VariantForCausalLM):
    """``Qwen3ForCausalLM``: LLaMA with per-head q/k RMSNorms and an explicit head_dim."""

    model_class = Qwen3Model


class Phi3Model(_VariantModel):
    """``model.`` of ``Phi3ForCausalLM``: token table, L Phi3 layers, final RMSNorm."""

    layer_class = Phi3DecoderLayer


class Phi3ForCausalLM(_VariantForCausalLM):
    """``Phi3ForCausalLM``: LLaMA with fused qkv_proj and gate_up_proj."""

    model_class = Phi3Model


# --- OLMo 2, SmolLM3, Gemma 3 (text) ------------------------------------------------------------

class Olmo2Attention(LlamaAttention):
    """OLMo 2's attention: LLaMA's, queries and keys normalised over the whole projection (A·d_k, A_kv·d_k)."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__(c)
        self.q_norm = RMSNorm(c["A"] * c["d_k"])
        self.k_norm = RMSNorm(c["A_kv"] * c["d_k"])

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        q = _rotate(_heads(self.q_norm(self.q_proj(x)), self.heads), cos, sin)
        k = _rotate(_heads(self.k_norm(self.k_proj(x)), self.kv_heads), cos, sin)
        v = _heads(self.v_proj(x), self.kv_heads)
        k, v = _shared_kv(k, v, self.heads)
        return self.o_proj(_merge(_attention(q, k, v, causal=True)))


class Olmo2DecoderLayer(nn.Module):
    """An OLMo 2 layer: no norm before a sub-layer, one after each (``post_attention``, ``post_feedforward``)."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.self_attn = Olmo2Attention(c)
        self.mlp = LlamaMLP(c)
        self.post_attention_layernorm = RMSNorm(c["H"])
        self.post_feedforward_layernorm = RMSNorm(c["H"])

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        x = x + self.post_attention_layernorm(self.self_attn(x, cos, sin))
        return x + self.post_feedforward_layernorm(self.mlp(x))


class Olmo2Model(_VariantModel):
    """``model.`` of ``Olmo2ForCausalLM``: token table, L OLMo 2 layers, final RMSNorm."""

    layer_class = Olmo2DecoderLayer


class Olmo2ForCausalLM(_VariantForCausalLM):
    """``Olmo2ForCausalLM``: LLaMA's matrices, norms after the sub-layers, QK-norm over the projections."""

    model_class = Olmo2Model


class SmolLM3Model(LlamaModel):
    """``model.`` of ``SmolLM3ForCausalLM``: LLaMA's; the layers whose ``rope`` entry is 0 attend without rotation."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__(c)
        self.rope = c.lists["rope"]

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        x = self.embed_tokens(input_ids)
        cos, sin = rotary_angles(self.d_k, input_ids.shape[1], input_ids.device, x.dtype)
        for layer, rope in zip(self.layers, self.rope):
            x = layer(x, cos, sin) if rope else layer(x, torch.ones_like(cos), torch.zeros_like(sin))  # NoPE
        return self.norm(x)


class SmolLM3ForCausalLM(_VariantForCausalLM):
    """``SmolLM3ForCausalLM``: LLaMA with NoPE layers (no rotary positions on every 4th by default), tied head."""

    model_class = SmolLM3Model


class Gemma3DecoderLayer(Gemma2DecoderLayer):
    """A Gemma 3 layer: Gemma 2's four norms, its attention with per-head q/k RMSNorms (Qwen3's)."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__(c)
        self.self_attn = Qwen3Attention(c)  # replaces LLaMA's attention in place: the registration order is kept


class Gemma3TextModel(_VariantModel):
    """``model.`` of ``Gemma3ForCausalLM``: token table, L Gemma 3 layers, final RMSNorm."""

    layer_class = Gemma3DecoderLayer


class Gemma3ForCausalLM(_VariantForCausalLM):
    """``Gemma3ForCausalLM``: Gemma 2's sandwiched layers with QK-norm, tied head (eager: the window masks only)."""

    model_class = Gemma3TextModel


# --- OPT -----------------------------------------------------------------------------------------

class OPTAttention(nn.Module):
    """k, v, q and out projections, H × H each, biases unless ``enable_bias`` is false."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        H, bias = c["H"], c.flags["enable_bias"]
        self.heads = c["A"]
        self.k_proj = nn.Linear(H, H, bias=bias)
        self.v_proj = nn.Linear(H, H, bias=bias)
        self.q_proj = nn.Linear(H, H, bias=bias)
        self.out_proj = nn.Linear(H, H, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q, k, v = (_heads(proj(x), self.heads) for proj in (self.q_proj, self.k_proj, self.v_proj))
        return self.out_proj(_merge(_attention(q, k, v, causal=True)))


class OPTDecoderLayer(nn.Module):
    """Attention and a ReLU MLP (fc1 I × H, fc2 H × I), each with a LayerNorm before it (pre-LN) or after its residual."""

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
    """``model.decoder.``: token table V × d_e, positions (P + 2) × H (offset 2), projections if d_e ≠ H, final LayerNorm."""

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
        for layer in self.layers:
            x = layer(x)
        if self.final_layer_norm is not None:
            x = self.final_layer_norm(x)
        return x if self.project_out is None else self.project_out(x)


class OPTModel(nn.Module):
    """OPT's model: ``decoder.`` with its tables, layers and (pre-LN) final norm."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.decoder = OPTDecoder(c)

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        return self.decoder(input_ids)


class OPTForCausalLM(nn.Module):
    """OPT with its LM head (V × d_e) over every position; the head is the token table when tied."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.model = OPTModel(c)
        self.lm_head = nn.Linear(c["d_e"], c["V"], bias=False)
        if c.flags["tie_word_embeddings"]:
            self.lm_head.weight = self.model.decoder.embed_tokens.weight

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        return self.lm_head(self.model(input_ids))


# --- T5: an encoder-decoder ------------------------------------------------------------------------

class T5Attention(nn.Module):
    """q, k, v (A·d_k × H) and o (H × A·d_k), no bias; block 0 of a stack also holds the relative bias (R × A).

    The bias is looked up (no matmul) and added to the scores. The buckets here are the relative distances
    clamped into [0, R): simpler than T5's logarithmic buckets, the same tensors and the same matmuls.
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
            S = q.shape[-2]
            mask = torch.ones(S, S, dtype=torch.bool, device=q.device).tril()
            scores = scores.masked_fill(~mask, float("-inf"))
        return self.o(_merge(torch.matmul(scores.softmax(dim=-1), v)))


class T5LayerSelfAttention(nn.Module):
    """One T5 self-attention sub-layer: an RMS-style norm (γ only), attention, residual."""

    def __init__(self, c: ModelConfig, relative: bool) -> None:
        super().__init__()
        self.SelfAttention = T5Attention(c, relative)
        self.layer_norm = RMSNorm(c["H"])


class T5LayerCrossAttention(nn.Module):
    """One T5 decoder cross-attention sub-layer: norm, attention over the encoder's output, residual."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.EncDecAttention = T5Attention(c, False)
        self.layer_norm = RMSNorm(c["H"])


class T5DenseActDense(nn.Module):
    """wi (I × H) and wo (H × I), ReLU between; gated (T5 v1.1, FLAN-T5): wi_0 and wi_1, GELU(wi_0 x) · wi_1 x."""

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
    """One T5 feed-forward sub-layer: norm, the (gated or plain) dense block, residual."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.DenseReluDense = T5DenseActDense(c)
        self.layer_norm = RMSNorm(c["H"])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.DenseReluDense(self.layer_norm(x))


class T5Block(nn.Module):
    """``layer``: self-attention, [cross-attention in the decoder], feed-forward; each pre-RMSNorm with a residual."""

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
    """``encoder.`` or ``decoder.``: the shared token table, the blocks (block 0 holds the relative bias), a final norm."""

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


# --- DistilBERT, ELECTRA, ALBERT (encoders) ---------------------------------------------------------

class DistilBertEmbeddings(nn.Module):
    """Token (V×H) + position (P×H) tables, summed, then LayerNorm: no segment table."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.word_embeddings = nn.Embedding(c["V"], c["H"])
        self.position_embeddings = nn.Embedding(c["P"], c["H"])
        self.LayerNorm = nn.LayerNorm(c["H"])

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        positions = torch.arange(input_ids.shape[1], device=input_ids.device)
        return self.LayerNorm(self.word_embeddings(input_ids) + self.position_embeddings(positions))


class DistilBertSelfAttention(nn.Module):
    """Q, K, V and output projections (H×H each, with bias): ``q_lin``, ``k_lin``, ``v_lin``, ``out_lin``."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.heads = c["A"]
        self.q_lin = nn.Linear(c["H"], c["H"])
        self.k_lin = nn.Linear(c["H"], c["H"])
        self.v_lin = nn.Linear(c["H"], c["H"])
        self.out_lin = nn.Linear(c["H"], c["H"])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q, k, v = (_heads(proj(x), self.heads) for proj in (self.q_lin, self.k_lin, self.v_lin))
        return self.out_lin(_merge(_attention(q, k, v, causal=False)))


class DistilBertFFN(nn.Module):
    """``lin1`` H → I, GELU, ``lin2`` I → H."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.lin1 = nn.Linear(c["H"], c["I"])
        self.lin2 = nn.Linear(c["I"], c["H"])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.lin2(F.gelu(self.lin1(x)))


class DistilBertBlock(nn.Module):
    """transformers' ``TransformerBlock``: attention, ``sa_layer_norm``, feed-forward, ``output_layer_norm``."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.attention = DistilBertSelfAttention(c)
        self.sa_layer_norm = nn.LayerNorm(c["H"])
        self.ffn = DistilBertFFN(c)
        self.output_layer_norm = nn.LayerNorm(c["H"])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.sa_layer_norm(self.attention(x) + x)
        return self.output_layer_norm(self.ffn(x) + x)


class DistilBertTransformer(nn.Module):
    """The L layers, ``transformer.layer.0`` ..."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.layer = nn.ModuleList(DistilBertBlock(c) for _ in range(c["L"]))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layer:
            x = layer(x)
        return x


class DistilBertModel(nn.Module):
    """``DistilBertModel``: embeddings and L layers, no pooler."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.embeddings = DistilBertEmbeddings(c)
        self.transformer = DistilBertTransformer(c)

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        return self.transformer(self.embeddings(input_ids))


class ElectraEmbeddings(BertEmbeddings):
    """BERT's three tables and LayerNorm, d_e (``embedding_size``) wide: ELECTRA's and ALBERT's embeddings."""

    def __init__(self, c: ModelConfig) -> None:
        nn.Module.__init__(self)
        self.word_embeddings = nn.Embedding(c["V"], c["d_e"])
        self.position_embeddings = nn.Embedding(c["P"], c["d_e"])
        self.token_type_embeddings = nn.Embedding(c["T"], c["d_e"])
        self.LayerNorm = nn.LayerNorm(c["d_e"])


class ElectraModel(nn.Module):
    """``ElectraModel``: d_e-wide embeddings, a projection d_e → H where d_e ≠ H, BERT's L layers, no pooler."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.embeddings = ElectraEmbeddings(c)
        if c["d_e"] != c["H"]:
            self.embeddings_project = nn.Linear(c["d_e"], c["H"])
        self.encoder = BertEncoder(c)

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        x = self.embeddings(input_ids)
        if hasattr(self, "embeddings_project"):
            x = self.embeddings_project(x)
        return self.encoder(x)


class AlbertAttention(nn.Module):
    """Q, K, V, output ``dense`` (H×H each, with bias) and the post-attention LayerNorm, in one module."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.heads = c["A"]
        self.query = nn.Linear(c["H"], c["H"])
        self.key = nn.Linear(c["H"], c["H"])
        self.value = nn.Linear(c["H"], c["H"])
        self.dense = nn.Linear(c["H"], c["H"])
        self.LayerNorm = nn.LayerNorm(c["H"])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q, k, v = (_heads(proj(x), self.heads) for proj in (self.query, self.key, self.value))
        return self.LayerNorm(self.dense(_merge(_attention(q, k, v, causal=False))) + x)


class AlbertLayer(nn.Module):
    """``full_layer_layer_norm``, attention, ``ffn`` H → I, ``ffn_output`` I → H."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.full_layer_layer_norm = nn.LayerNorm(c["H"])
        self.attention = AlbertAttention(c)
        self.ffn = nn.Linear(c["H"], c["I"])
        self.ffn_output = nn.Linear(c["I"], c["H"])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.attention(x)
        return self.full_layer_layer_norm(self.ffn_output(F.gelu(self.ffn(x))) + x)


class AlbertLayerGroup(nn.Module):
    """One group holding its K layers (``albert_layers.0`` ... ``albert_layers.{K-1}``; ``inner_group_num``)."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.albert_layers = nn.ModuleList([AlbertLayer(c) for _ in range(c["K"])])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.albert_layers:
            x = layer(x)
        return x


class AlbertTransformer(nn.Module):
    """``embedding_hidden_mapping_in`` d_e → H, then L runs, run i through group ``int(i / (L / G))`` (one: shared)."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.layers, self.groups = c["L"], c["G"]
        self.embedding_hidden_mapping_in = nn.Linear(c["d_e"], c["H"])
        self.albert_layer_groups = nn.ModuleList([AlbertLayerGroup(c) for _ in range(c["G"])])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.embedding_hidden_mapping_in(x)
        for i in range(self.layers):  # the same parameters, L times (each group's, L / G times)
            x = self.albert_layer_groups[int(i / (self.layers / self.groups))](x)
        return x


class AlbertModel(nn.Module):
    """``AlbertModel``: d_e-wide embeddings, the shared encoder, the pooler (dense H×H + tanh on [CLS])."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.embeddings = ElectraEmbeddings(c)
        self.encoder = AlbertTransformer(c)
        self.pooler = nn.Linear(c["H"], c["H"])

    def forward(self, input_ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        hidden = self.encoder(self.embeddings(input_ids))
        return hidden, torch.tanh(self.pooler(hidden[:, 0]))


# --- mixtures of experts (Mixtral, Qwen3-MoE) -----------------------------------------------------

class MoeRouter(nn.Module):
    """``mlp.gate``: E × H logits per token, softmax, the top k experts and their weights."""

    def __init__(self, c: ModelConfig, normalise: bool = True) -> None:
        super().__init__()
        self.top_k, self.normalise = c["k"], normalise
        self.weight = nn.Parameter(torch.empty(c["E"], c["H"]))

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        probs = F.softmax(F.linear(x, self.weight), dim=-1)
        weights, index = torch.topk(probs, self.top_k, dim=-1)
        return (weights / weights.sum(dim=-1, keepdim=True) if self.normalise else weights), index


class MoeExperts(nn.Module):
    """E SwiGLU experts fused: ``gate_up_proj`` E × 2I × H, ``down_proj`` E × H × I (transformers 5's layout)."""

    def __init__(self, c: ModelConfig, intermediate: str = "I") -> None:
        super().__init__()
        E, H, I = c["E"], c["H"], c[intermediate]
        self.gate_up_proj = nn.Parameter(torch.empty(E, 2 * I, H))
        self.down_proj = nn.Parameter(torch.empty(E, H, I))

    def forward(self, x: torch.Tensor, weights: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
        """Each token through its k experts, one slot at a time: the token's expert weights gathered, then
        multiplied (a batched matmul of one token each), so only the k chosen experts cost FLOPs."""
        out = torch.zeros_like(x)
        for slot in range(index.shape[-1]):
            chosen = index[..., slot]  # [N]
            gate, up = torch.bmm(self.gate_up_proj[chosen], x.unsqueeze(-1)).squeeze(-1).chunk(2, dim=-1)
            y = torch.bmm(self.down_proj[chosen], (F.silu(gate) * up).unsqueeze(-1)).squeeze(-1)
            out = out + y * weights[..., slot, None]
        return out


class MixtralSparseMoeBlock(nn.Module):
    """Router (``gate``) then the experts (``experts``), on the tokens flattened to N = B·S rows."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.gate = MoeRouter(c)
        self.experts = MoeExperts(c)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        flat = x.reshape(-1, x.shape[-1])
        weights, index = self.gate(flat)
        return self.experts(flat, weights, index).reshape(x.shape)


class MixtralDecoderLayer(_VariantDecoderLayer):
    """A Mixtral layer: LLaMA's attention (no biases), its MLP a sparse mixture of experts."""

    mlp_class = MixtralSparseMoeBlock


class MixtralModel(_VariantModel):
    """``model.`` of ``MixtralForCausalLM``: token table, L Mixtral layers, final RMSNorm."""

    layer_class = MixtralDecoderLayer


class MixtralForCausalLM(_VariantForCausalLM):
    """``MixtralForCausalLM``: LLaMA with a top-k mixture of E SwiGLU experts in every layer."""

    model_class = MixtralModel


class Qwen3MoeSparseMoeBlock(nn.Module):
    """Qwen3-MoE's sparse block: the experts (of width I_e) registered first, then the router (``gate``)."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.experts = MoeExperts(c, "I_e")
        self.gate = MoeRouter(c, normalise=c.flags["norm_topk_prob"])

    forward = MixtralSparseMoeBlock.forward


class Qwen3MoeDecoderLayer(_VariantDecoderLayer):
    """A Qwen3-MoE layer: Qwen3's attention; a sparse block, or Qwen3's dense SwiGLU in the layers kept dense."""

    attention = Qwen3Attention

    def __init__(self, c: ModelConfig, i: int) -> None:
        sparse = i not in c.lists["mlp_only_layers"] and c["E"] > 0 and (i + 1) % c["s"] == 0
        self.mlp_class = Qwen3MoeSparseMoeBlock if sparse else LlamaMLP
        super().__init__(c)


class Qwen3MoeModel(_VariantModel):
    """``model.`` of ``Qwen3MoeForCausalLM``: token table, L Qwen3-MoE layers, final RMSNorm."""

    def __init__(self, c: ModelConfig) -> None:
        nn.Module.__init__(self)
        self.d_k = c["d_k"]
        self.embed_tokens = nn.Embedding(c["V"], c["H"])
        self.layers = nn.ModuleList(Qwen3MoeDecoderLayer(c, i) for i in range(c["L"]))
        self.norm = RMSNorm(c["H"])


class Qwen3MoeForCausalLM(_VariantForCausalLM):
    """``Qwen3MoeForCausalLM``: Qwen3 with a top-k mixture of E experts in its sparse layers."""

    model_class = Qwen3MoeModel


# --- GPT-OSS: attention sinks, alternating windows, experts with biases -------------------------------

class GptOssAttention(LlamaAttention):
    """LLaMA's attention with biases on q, k, v and o, one learned logit per head (``sinks``) joining each row of
    scores in the softmax (its share of the probability goes to no value), and, in a windowed layer, each query
    seeing only the last ``window`` positions (itself included)."""

    def __init__(self, c: ModelConfig, window: int | None = None) -> None:
        super().__init__(c)
        self.window = window
        self.sinks = nn.Parameter(torch.zeros(c["A"]))

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        q = _rotate(_heads(self.q_proj(x), self.heads), cos, sin)
        k = _rotate(_heads(self.k_proj(x), self.kv_heads), cos, sin)
        v = _heads(self.v_proj(x), self.kv_heads)
        k, v = _shared_kv(k, v, self.heads)
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(q.shape[-1])
        S = q.shape[-2]
        seen = torch.ones(S, S, dtype=torch.bool, device=q.device).tril()
        if self.window is not None:
            seen = seen & ~torch.ones(S, S, dtype=torch.bool, device=q.device).tril(-self.window)
        scores = scores.masked_fill(~seen, float("-inf"))
        sink = self.sinks.reshape(1, -1, 1, 1).expand(scores.shape[0], -1, S, 1)
        probs = torch.cat((scores, sink), dim=-1).softmax(dim=-1)[..., :-1]  # the sink's column dropped
        return self.o_proj(_merge(torch.matmul(probs, v)))


class GptOssExperts(nn.Module):
    """E clamped-SwiGLU experts with biases, fused and transposed as transformers stores them: ``gate_up_proj``
    E × H × 2I (gate and up interleaved), ``down_proj`` E × I × H, and a bias row per expert for each."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        E, H, I = c["E"], c["H"], c["I"]
        self.gate_up_proj = nn.Parameter(torch.empty(E, H, 2 * I))
        self.gate_up_proj_bias = nn.Parameter(torch.zeros(E, 2 * I))
        self.down_proj = nn.Parameter(torch.empty(E, I, H))
        self.down_proj_bias = nn.Parameter(torch.zeros(E, H))

    def forward(self, x: torch.Tensor, weights: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
        """Each token through its k experts, one slot at a time (only the chosen experts cost FLOPs)."""
        out = torch.zeros_like(x)
        for slot in range(index.shape[-1]):
            chosen = index[..., slot]
            gate_up = torch.bmm(x.unsqueeze(1), self.gate_up_proj[chosen]).squeeze(1) + self.gate_up_proj_bias[chosen]
            gate, up = gate_up[..., ::2].clamp(max=7.0), gate_up[..., 1::2].clamp(-7.0, 7.0)
            hidden = (up + 1) * gate * torch.sigmoid(1.702 * gate)  # swiglu_alpha 1.702, swiglu_limit 7
            y = torch.bmm(hidden.unsqueeze(1), self.down_proj[chosen]).squeeze(1) + self.down_proj_bias[chosen]
            out = out + y * weights[..., slot, None]
        return out


class GptOssMLP(nn.Module):
    """The router (``router``: E × H and a bias of E; softmax over the k best logits), then the experts."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.router = nn.Linear(c["H"], c["E"])
        self.experts = GptOssExperts(c)
        self.top_k = c["k"]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        flat = x.reshape(-1, x.shape[-1])
        logits, index = torch.topk(self.router(flat), self.top_k, dim=-1)
        return self.experts(flat, logits.softmax(dim=-1), index).reshape(x.shape)


class GptOssDecoderLayer(_VariantDecoderLayer):
    """A GPT-OSS layer: LLaMA's pre-RMSNorm layer, its attention with sinks (windowed or not), its MLP the experts."""

    mlp_class = GptOssMLP

    def __init__(self, c: ModelConfig, window: int | None) -> None:
        nn.Module.__init__(self)
        self.self_attn = GptOssAttention(c, window)
        self.mlp = GptOssMLP(c)
        self.input_layernorm = RMSNorm(c["H"])
        self.post_attention_layernorm = RMSNorm(c["H"])


class GptOssModel(_VariantModel):
    """``model.`` of ``GptOssForCausalLM``: token table, L GPT-OSS layers (``windows``: each one's window), RMSNorm."""

    def __init__(self, c: ModelConfig) -> None:
        nn.Module.__init__(self)
        self.d_k = c["d_k"]
        self.embed_tokens = nn.Embedding(c["V"], c["H"])
        windows = c.lists.get("windows", (0,) * c["L"])
        self.layers = nn.ModuleList(GptOssDecoderLayer(c, w or None) for w in windows)
        self.norm = RMSNorm(c["H"])


class GptOssForCausalLM(_VariantForCausalLM):
    """``GptOssForCausalLM``: a top-k mixture of E biased experts, attention sinks, alternating windowed layers."""

    model_class = GptOssModel



# --- DeepSeek-V3: latent attention (MLA), shared and routed experts ----------------------------------

class DeepseekV3Attention(nn.Module):
    """Multi-head latent attention: the query through a rank-r_q bottleneck (or a plain ``q_proj``), keys and
    values re-projected for every head from a latent of r_kv, one rotary key of d_rope shared by the heads.

    A heads of query/key d_k = d_nope + d_rope and value d_v; the latent and the shared rotary key are what
    transformers caches. Rotary angles are applied to the d_rope part of each query and of the shared key.
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
        return self.o_proj(_merge(_attention(q, k, v, causal=True)))


class DeepseekV3MLP(nn.Module):
    """A SwiGLU of a given width: the dense layers' (I), or the shared experts' (n_s·I_e, one MLP)."""

    def __init__(self, H: int, width: int) -> None:
        super().__init__()
        self.gate_proj = nn.Linear(H, width, bias=False)
        self.up_proj = nn.Linear(H, width, bias=False)
        self.down_proj = nn.Linear(width, H, bias=False)

    forward = LlamaMLP.forward


class DeepseekV3TopkRouter(nn.Module):
    """``mlp.gate``: E × H logits per token, sigmoid scores; the k best experts among the k_g best of g groups.

    ``e_score_correction_bias`` (E) is a buffer, not a parameter: added to the scores to choose the experts,
    not to weigh them. The weights are renormalised with ``norm_topk_prob``; transformers also multiplies them
    by ``routed_scaling_factor``, a constant (no parameter, no matmul) left out here.
    """

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.top_k, self.groups, self.kept, self.normalise = c["k"], c["g"], c["k_g"], c.flags["norm_topk_prob"]
        self.weight = nn.Parameter(torch.empty(c["E"], c["H"]))
        self.register_buffer("e_score_correction_bias", torch.zeros(c["E"]))

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        scores = F.linear(x, self.weight).sigmoid()  # [N, E]
        choice = scores + self.e_score_correction_bias
        N, E = choice.shape
        grouped = choice.view(N, self.groups, E // self.groups)
        best = grouped.topk(2, dim=-1).values.sum(dim=-1).topk(self.kept, dim=-1).indices  # [N, k_g]
        keep = torch.zeros(N, self.groups, dtype=torch.bool, device=x.device).scatter(1, best, True)
        choice = grouped.masked_fill(~keep[..., None], float("-inf")).view(N, E)
        index = choice.topk(self.top_k, dim=-1).indices
        weights = scores.gather(1, index)
        return (weights / weights.sum(dim=-1, keepdim=True) if self.normalise else weights), index


class DeepseekV3MoE(nn.Module):
    """A sparse layer's feed-forward: the routed experts (fused, registered first), the router, the shared experts."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.experts = MoeExperts(c, "I_e")
        self.gate = DeepseekV3TopkRouter(c)
        self.shared_experts = DeepseekV3MLP(c["H"], c["n_s"] * c["I_e"])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return MixtralSparseMoeBlock.forward(self, x) + self.shared_experts(x)


class DeepseekV3DecoderLayer(LlamaDecoderLayer):
    """A DeepSeek-V3 layer: latent attention, then a dense SwiGLU (the first L_f layers) or a :class:`DeepseekV3MoE`."""

    def __init__(self, c: ModelConfig, i: int) -> None:
        nn.Module.__init__(self)
        self.self_attn = DeepseekV3Attention(c)
        self.mlp = DeepseekV3MLP(c["H"], c["I"]) if i < c["L_f"] else DeepseekV3MoE(c)
        self.input_layernorm = RMSNorm(c["H"])
        self.post_attention_layernorm = RMSNorm(c["H"])


class DeepseekV3Model(LlamaModel):
    """``model.`` of ``DeepseekV3ForCausalLM``: token table, L layers, final RMSNorm; rotary angles over d_rope."""

    def __init__(self, c: ModelConfig) -> None:
        nn.Module.__init__(self)
        self.d_k = c["d_rope"]  # the rotary angles turn the d_rope part of each query and of the shared key
        self.embed_tokens = nn.Embedding(c["V"], c["H"])
        self.layers = nn.ModuleList(DeepseekV3DecoderLayer(c, i) for i in range(c["L"]))
        self.norm = RMSNorm(c["H"])


class DeepseekV3ForCausalLM(_VariantForCausalLM):
    """``DeepseekV3ForCausalLM``: latent attention, L_f dense layers, then shared and top-k routed experts."""

    model_class = DeepseekV3Model


_INITIALISERS = ("normal_", "uniform_", "kaiming_uniform_", "xavier_uniform_", "trunc_normal_", "zeros_", "ones_",
                 "constant_")


@contextmanager
def _placed(device: str | torch.device) -> Iterator[None]:
    """Build on ``device``; on the meta device, with ``torch.nn.init``'s initialisers skipped (a meta tensor has
    no values to fill, and the first ``normal_`` on one costs seconds of torch's decomposition machinery)."""
    meta = torch.device(device).type == "meta"
    saved = {name: getattr(nn.init, name) for name in _INITIALISERS} if meta else {}
    try:
        for name in saved:
            setattr(nn.init, name, lambda tensor, *args, **kwargs: tensor)
        with torch.device(device):
            yield
    finally:
        for name, function in saved.items():
            setattr(nn.init, name, function)


def build(config: ModelConfig, device: str | torch.device = "meta") -> nn.Module:
    """The whole model from plain ``torch.nn`` modules, on the meta device unless told otherwise.

    Introduced in ``00_overview``. The class is the one the model's family names (``Family.torch_ref``).
    """
    with _placed(device):
        return architecture(config)(config)


def architecture(config: ModelConfig) -> type[nn.Module]:
    """The reference class that builds a config's model: the one its family names in ``torch_ref``.

    No notebook calls it; it works behind the helpers of ``00_overview``.
    """
    return globals()[config.family.torch_ref]


def build_component(cls: type[nn.Module], config: ModelConfig, device: str | torch.device = "meta") -> nn.Module:
    """One component (``BertEmbeddings``, ``BertLayer``, ``BertPooler`` ...) on the meta device.

    Introduced in ``01_embeddings``.
    """
    with _placed(device):
        return cls(config)


# --- added for 08_flops_and_memory: the KV cache, tensor bytes, FLOP counting -----------------------

def llama_key_values(model: LlamaForCausalLM, input_ids: torch.Tensor) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """The keys and values each layer of a reference LLaMA keeps for generation: its KV cache.

    Introduced in ``08_flops_and_memory``. Runs the model's layers on ``input_ids`` and returns, per
    layer, the rotated keys and the values as attention uses them before the query groups share
    them: ``[B, A_kv, S, d_k]`` each (what transformers stores in ``past_key_values``).
    """
    inner = model.model
    x = inner.embed_tokens(input_ids)
    cos, sin = rotary_angles(inner.d_k, input_ids.shape[1], input_ids.device, x.dtype)
    cache = []
    for layer in inner.layers:
        attn, h = layer.self_attn, layer.input_layernorm(x)
        cache.append((_rotate(_heads(attn.k_proj(h), attn.kv_heads), cos, sin), _heads(attn.v_proj(h), attn.kv_heads)))
        x = layer(x, cos, sin)
    return cache


def tensor_bytes(tensors: Iterable[torch.Tensor]) -> int:
    """Bytes the tensors occupy (``numel × element_size`` summed): what a memory formula must match.

    Introduced in ``08_flops_and_memory``.
    """
    return sum(t.numel() * t.element_size() for t in tensors)


def flop_count(module: nn.Module, batch: int, seq_len: int, backward: bool = False) -> int:
    """Matmul FLOPs ``FlopCounterMode`` counts for one forward pass (and backward) on token ids 0.

    Introduced in ``08_flops_and_memory``. The input lives on the module's device (meta: shapes only,
    nothing computed); with ``backward`` the sum of every output is differentiated.
    """
    from torch.utils.flop_counter import FlopCounterMode

    device = next(module.parameters()).device
    input_ids = torch.zeros(batch, seq_len, dtype=torch.long, device=device)
    with FlopCounterMode(display=False) as counter:
        out = module(input_ids)
        if backward:
            outputs = out if isinstance(out, tuple) else (out,)
            sum(t.sum() for t in outputs).backward()
    return counter.get_total_flops()
