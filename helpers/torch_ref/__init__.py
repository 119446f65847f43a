"""Reference models built from plain ``torch.nn`` modules (not from transformers), names as in the checkpoints.

Introduced in ``00_overview`` (the first torch check); every notebook closes with one of these.
Models are built on the meta device by default: shapes without memory, so even GPT-3 175B builds in
about a second. Each module has an eager forward pass (full S×S attention, as transformers' eager
attention), so ``torch.utils.flop_counter.FlopCounterMode`` can count its matrix multiplies.

The package, one module per family:

* ``blocks.py``: what the families share, written once: the attention core (``_attention``, called through
  ``_attend``), ``_heads`` / ``_merge`` / ``_shared_kv``, ``RMSNorm``, ``rotary_angles``, and the decoder skeleton
  ``Attention`` → ``DecoderLayer`` → ``DecoderModel`` → ``CausalLM``, whose parts a family swaps by class
  attributes (``attention_class``, ``mlp_class``, ``norms``, ``layer_class``, ``model_class``, ``rotary``) or by
  one hook (``Attention.project`` / ``core``, ``DecoderLayer.attention`` / ``feed_forward``,
  ``DecoderModel.angles``). ``llama.py`` fills the skeleton with LLaMA's parts; most decoders subclass LLaMA's.
* ``NAME.py``: a family's classes, listed in its ``__all__``. ``bert.py`` holds BERT, RoBERTa and ELECTRA,
  ``qwen.py`` Qwen2 and Qwen3, ``moe.py`` the router, experts and sparse block with Mixtral and Qwen3-MoE.

The registry is the list of star imports below: ``build`` looks the class a family names in ``Family.torch_ref``
up in this namespace, where tests and notebooks import them from too. A new family adds its module
``helpers/torch_ref/NAME.py`` (its public classes in ``__all__``, the blocks imported from ``.blocks`` or from
another family's module, never copied) and ONE line here: ``from .NAME import *  # noqa: F403``.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterable, Iterator

import torch
from torch import nn

from ..config import ModelConfig
from ..params import Param
from .blocks import (Attention, CausalLM, DecoderLayer, DecoderModel, RMSNorm, SwiGLU, _attention, _heads,  # noqa: F401
                     _merge, _rotate, _shared_kv, rotary_angles)

# the registry: one line per family module
from .albert import *  # noqa: F403
from .bert import *  # noqa: F403
from .deepseek_v2 import *  # noqa: F403
from .deepseek_v3 import *  # noqa: F403
from .distilbert import *  # noqa: F403
from .gemma import *  # noqa: F403
from .gemma3 import *  # noqa: F403
from .gemma3_text import *  # noqa: F403
from .glm4_moe import *  # noqa: F403
from .gpt2 import *  # noqa: F403
from .gpt_neox import *  # noqa: F403
from .gpt_oss import *  # noqa: F403
from .llama import *  # noqa: F403
from .llama4 import *  # noqa: F403
from .llama4_text import *  # noqa: F403
from .modernbert import *  # noqa: F403
from .moe import *  # noqa: F403
from .olmo2 import *  # noqa: F403
from .opt import *  # noqa: F403
from .phi3 import *  # noqa: F403
from .qwen import *  # noqa: F403
from .qwen2_5_vl import *  # noqa: F403
from .qwen3_next import *  # noqa: F403
from .smollm3 import *  # noqa: F403
from .t5 import *  # noqa: F403

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


# --- building -------------------------------------------------------------------------------------

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


# --- added for 08_flops_and_memory: tensor bytes, FLOP counting (the KV cache: llama.llama_key_values) ---------

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
