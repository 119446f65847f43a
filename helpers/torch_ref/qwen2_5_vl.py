"""Qwen2.5-VL as plain torch modules: its vision encoder's tensors (patch embedding, blocks, patch merger) and Qwen2's
text model (:mod:`.qwen`) under ``model.language_model.``; the forward pass runs text tokens only."""

from __future__ import annotations

from torch import nn

from ..config import ModelConfig
from .blocks import RMSNorm, SwiGLU
from .gemma3 import ConditionalGeneration
from .qwen import Qwen2Model

__all__ = ["Qwen2_5_VisionTransformer", "Qwen2_5_VLModel", "Qwen2_5_VLForConditionalGeneration"]


class Qwen2_5_VLVisionAttention(nn.Module):
    """One fused ``qkv`` projection (3H_v × H_v) and ``proj``, both with biases (windows and 2-D rotary: no tensor).
    No notebook calls it; it works behind the helpers of ``11_todays_models``."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.qkv = nn.Linear(c["H_v"], 3 * c["H_v"])
        self.proj = nn.Linear(c["H_v"], c["H_v"])


class Qwen2_5_VLVisionBlock(nn.Module):
    """Two RMSNorms, the attention and a SwiGLU MLP of I_v with biases.
    No notebook calls it; it works behind the helpers of ``11_todays_models``."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.norm1 = RMSNorm(c["H_v"])
        self.norm2 = RMSNorm(c["H_v"])
        self.attn = Qwen2_5_VLVisionAttention(c)
        self.mlp = SwiGLU(c["H_v"], c["I_v"], bias=True)


class Qwen2_5_VLPatchMerger(nn.Module):
    """An RMSNorm, then an MLP over m_v × m_v neighbouring patches concatenated (H_v·m_v² wide) into O_v.
    No notebook calls it; it works behind the helpers of ``11_todays_models``."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        wide = c["H_v"] * c["m_v"] ** 2
        self.ln_q = RMSNorm(c["H_v"])
        self.mlp = nn.Sequential(nn.Linear(wide, wide), nn.GELU(), nn.Linear(wide, c["O_v"]))


class PatchEmbed(nn.Module):
    """One convolution of t_v × p_v × p_v over C_v channels into H_v, without a bias.
    No notebook calls it; it works behind the helpers of ``11_todays_models``."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        kernel = (c["t_v"], c["p_v"], c["p_v"])
        self.proj = nn.Conv3d(c["C_v"], c["H_v"], kernel_size=kernel, stride=kernel, bias=False)


class Qwen2_5_VisionTransformer(nn.Module):
    """``model.visual.``: the patch embedding, L_v blocks, the patch merger.
    No notebook calls it; it works behind the helpers of ``11_todays_models``."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.patch_embed = PatchEmbed(c)
        self.blocks = nn.ModuleList(Qwen2_5_VLVisionBlock(c) for _ in range(c["L_v"]))
        self.merger = Qwen2_5_VLPatchMerger(c)


class Qwen2_5_VLModel(nn.Module):
    """``model.``: the vision encoder as ``visual``, then Qwen2's text model as ``language_model``.
    No notebook calls it; it works behind the helpers of ``11_todays_models``."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.visual = Qwen2_5_VisionTransformer(c)
        self.language_model = Qwen2Model(c)


class Qwen2_5_VLForConditionalGeneration(ConditionalGeneration):
    """``Qwen2_5_VLForConditionalGeneration``: text tokens through the language model and its head (untied by default;
    text positions are the same on M-RoPE's three axes, so its rotation is LLaMA's).
    No notebook calls it; it works behind the helpers of ``11_todays_models``."""

    model_class = Qwen2_5_VLModel
