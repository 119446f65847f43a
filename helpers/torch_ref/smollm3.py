"""SmolLM3 as plain torch modules: LLaMA with NoPE layers (no rotary positions on every 4th by default)."""

from __future__ import annotations

import torch

from ..config import ModelConfig
from .llama import LlamaForCausalLM, LlamaModel

__all__ = ["SmolLM3Model", "SmolLM3ForCausalLM"]


class SmolLM3Model(LlamaModel):
    """``model.`` of ``SmolLM3ForCausalLM``: LLaMA's; the layers whose ``rope`` entry is 0 attend without rotation.
    No notebook calls it; it works behind the helpers of ``11_todays_models``."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__(c)
        self.rope = c.lists["rope"]

    def angles(self, i: int, cos: torch.Tensor, sin: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The rotary angles, or none (cos 1, sin 0: NoPE) in a layer whose ``rope`` entry is 0."""
        return (cos, sin) if self.rope[i] else (torch.ones_like(cos), torch.zeros_like(sin))


class SmolLM3ForCausalLM(LlamaForCausalLM):
    """``SmolLM3ForCausalLM``: LLaMA with NoPE layers (no rotary positions on every 4th by default), tied head.
    No notebook calls it; it works behind the helpers of ``11_todays_models``."""

    model_class = SmolLM3Model
