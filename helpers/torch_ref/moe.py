"""Mixtures of experts as plain torch modules: the router, the fused experts and the sparse block (Mixtral's,
Qwen3-MoE's; DeepSeek-V3 and GPT-OSS build on them)."""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from ..config import ModelConfig
from .llama import LlamaDecoderLayer, LlamaForCausalLM, LlamaMLP, LlamaModel
from .qwen import Qwen3Attention

__all__ = ["MoeRouter", "MoeExperts", "SparseMoeBlock", "MixtralSparseMoeBlock", "MixtralDecoderLayer", "MixtralModel",
           "MixtralForCausalLM", "Qwen3MoeSparseMoeBlock", "Qwen3MoeDecoderLayer", "Qwen3MoeModel",
           "Qwen3MoeForCausalLM"]


class MoeRouter(nn.Module):
    """``mlp.gate``: E × H logits per token, softmax, the top k experts and their weights.
    No notebook calls it; it works behind the helpers of ``09_modern_architectures``."""

    def __init__(self, c: ModelConfig, normalise: bool = True) -> None:
        super().__init__()
        self.top_k, self.normalise = c["k"], normalise
        self.weight = nn.Parameter(torch.empty(c["E"], c["H"]))

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        probs = F.softmax(F.linear(x, self.weight), dim=-1)
        weights, index = torch.topk(probs, self.top_k, dim=-1)
        return (weights / weights.sum(dim=-1, keepdim=True) if self.normalise else weights), index


class MoeExperts(nn.Module):
    """E SwiGLU experts fused: ``gate_up_proj`` E × 2I × H, ``down_proj`` E × H × I (transformers 5's layout).
    No notebook calls it; it works behind the helpers of ``09_modern_architectures``."""

    def __init__(self, c: ModelConfig, intermediate: str = "I") -> None:
        super().__init__()
        E, H, I = c["E"], c["H"], c[intermediate]
        self.gate_up_proj = nn.Parameter(torch.empty(E, 2 * I, H))
        self.down_proj = nn.Parameter(torch.empty(E, H, I))

    def expert(self, x: torch.Tensor, chosen: torch.Tensor) -> torch.Tensor:
        """Token n through expert ``chosen[n]``: its weights gathered, then a batched matmul of one token each."""
        gate, up = torch.bmm(self.gate_up_proj[chosen], x.unsqueeze(-1)).squeeze(-1).chunk(2, dim=-1)
        return torch.bmm(self.down_proj[chosen], (F.silu(gate) * up).unsqueeze(-1)).squeeze(-1)

    def forward(self, x: torch.Tensor, weights: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
        """Each token through its k experts, one slot at a time, so only the k chosen experts cost FLOPs."""
        out = torch.zeros_like(x)
        for slot in range(index.shape[-1]):
            out = out + self.expert(x, index[..., slot]) * weights[..., slot, None]
        return out


class SparseMoeBlock(nn.Module):
    """The router's weights and choices (:meth:`route`), then the experts, on the tokens flattened to N = B·S rows.
    No notebook calls it; it works behind the helpers of ``09_modern_architectures``."""

    def route(self, flat: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """[N, k] weights and expert indices (``gate``: the router)."""
        return self.gate(flat)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        flat = x.reshape(-1, x.shape[-1])
        return self.experts(flat, *self.route(flat)).reshape(x.shape)


class MixtralSparseMoeBlock(SparseMoeBlock):
    """Router (``gate``) then the experts (``experts``), on the tokens flattened to N = B·S rows.
    No notebook calls it; it works behind the helpers of ``09_modern_architectures``."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.gate = MoeRouter(c)
        self.experts = MoeExperts(c)


class MixtralDecoderLayer(LlamaDecoderLayer):
    """A Mixtral layer: LLaMA's attention (no biases), its MLP a sparse mixture of experts.
    No notebook calls it; it works behind the helpers of ``00_overview``."""

    mlp_class = MixtralSparseMoeBlock


class MixtralModel(LlamaModel):
    """``model.`` of ``MixtralForCausalLM``: token table, L Mixtral layers, final RMSNorm.
    No notebook calls it; it works behind the helpers of ``00_overview``."""

    layer_class = MixtralDecoderLayer


class MixtralForCausalLM(LlamaForCausalLM):
    """``MixtralForCausalLM``: LLaMA with a top-k mixture of E SwiGLU experts in every layer.
    No notebook calls it; it works behind the helpers of ``00_overview``."""

    model_class = MixtralModel


class Qwen3MoeSparseMoeBlock(SparseMoeBlock):
    """Qwen3-MoE's sparse block: the experts (of width I_e) registered first, then the router (``gate``).
    No notebook calls it; it works behind the helpers of ``00_overview``."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.experts = MoeExperts(c, "I_e")
        self.gate = MoeRouter(c, normalise=c.flags["norm_topk_prob"])


class Qwen3MoeDecoderLayer(LlamaDecoderLayer):
    """A Qwen3-MoE layer: Qwen3's attention; a sparse block, or Qwen3's dense SwiGLU in the layers kept dense.
    No notebook calls it; it works behind the helpers of ``00_overview``."""

    attention_class = Qwen3Attention

    def feed_forward(self, c: ModelConfig, i: int) -> nn.Module:
        """Layer i's sparse block, unless ``mlp_only_layers`` or the sparse step ``s`` keeps it dense."""
        sparse = i not in c.lists["mlp_only_layers"] and c["E"] > 0 and (i + 1) % c["s"] == 0
        return Qwen3MoeSparseMoeBlock(c) if sparse else LlamaMLP(c)


class Qwen3MoeModel(LlamaModel):
    """``model.`` of ``Qwen3MoeForCausalLM``: token table, L Qwen3-MoE layers, final RMSNorm.
    No notebook calls it; it works behind the helpers of ``00_overview``."""

    layer_class = Qwen3MoeDecoderLayer


class Qwen3MoeForCausalLM(LlamaForCausalLM):
    """``Qwen3MoeForCausalLM``: Qwen3 with a top-k mixture of E experts in its sparse layers.
    No notebook calls it; it works behind the helpers of ``00_overview``."""

    model_class = Qwen3MoeModel
