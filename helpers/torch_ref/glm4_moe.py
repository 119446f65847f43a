"""GLM-4.5 as plain torch modules: grouped-query attention with q/k/v biases, optional per-head QK-norms and partial
rotary positions; DeepSeek-V3's dense first layers and shared and routed experts."""

from __future__ import annotations

import torch

from ..config import ModelConfig
from .blocks import Attention, RMSNorm, _merge, _rotate, _shared_kv
from .deepseek_v3 import DeepseekV3DecoderLayer, DeepseekV3ForCausalLM, DeepseekV3Model

__all__ = ["Glm4MoeAttention", "Glm4MoeDecoderLayer", "Glm4MoeModel", "Glm4MoeForCausalLM"]


class Glm4MoeAttention(Attention):
    """GQA with a bias on q, k and v under ``attention_bias`` (never on o), each head's query and key normalised by an
    RMSNorm of d_k under ``use_qk_norm``, and rotary angles on the first R dimensions of each head (the rest passed
    through).
    No notebook calls it; it works behind the helpers of ``11_todays_models``."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__(c)
        if c.flags["use_qk_norm"]:
            self.q_norm = RMSNorm(c["d_k"])
            self.k_norm = RMSNorm(c["d_k"])

    @staticmethod
    def biases(c: ModelConfig) -> tuple[bool, bool]:
        """(on q, k and v; on o): ``attention_bias``, never."""
        return c.flags["attention_bias"], False

    def project(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """The heads, each query and key head normalised with ``use_qk_norm``."""
        q, k, v = super().project(x)
        return (self.q_norm(q), self.k_norm(k), v) if hasattr(self, "q_norm") else (q, k, v)

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        def rotate(t: torch.Tensor) -> torch.Tensor:  # the first R (rounded up to a pair) turned, the rest as is
            return torch.cat((_rotate(t[..., :cos.shape[-1]], cos, sin), t[..., cos.shape[-1]:]), dim=-1)

        q, k, v = self.project(x)
        k, v = _shared_kv(rotate(k), v, self.heads)
        return self.o_proj(_merge(self.core(rotate(q), k, v)))


class Glm4MoeDecoderLayer(DeepseekV3DecoderLayer):
    """A GLM-4.5 layer: :class:`Glm4MoeAttention`, then DeepSeek-V3's dense SwiGLU (the first L_f layers) or experts.
    No notebook calls it; it works behind the helpers of ``11_todays_models``."""

    attention_class = Glm4MoeAttention


class Glm4MoeModel(DeepseekV3Model):
    """``model.`` of ``Glm4MoeForCausalLM``: token table, L layers, final RMSNorm; rotary angles over R.
    No notebook calls it; it works behind the helpers of ``11_todays_models``."""

    layer_class = Glm4MoeDecoderLayer
    rotary = "R"  # int(d_k · partial_rotary_factor)


class Glm4MoeForCausalLM(DeepseekV3ForCausalLM):
    """``Glm4MoeForCausalLM``: GLM's attention, L_f dense layers, then shared and top-k routed experts.
    No notebook calls it; it works behind the helpers of ``11_todays_models``."""

    model_class = Glm4MoeModel
