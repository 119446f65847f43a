"""What a model family is, in one place: the :class:`Family` record every family module fills in.

Introduced in ``00_overview`` (``ModelConfig.family``). See the README, "Adding a model family".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Literal, Mapping

from ..config import Flag, ModelConfig, Size
from ..params import Layout

Formulas = Callable[[ModelConfig], dict[str, str]]


@dataclass(frozen=True)
class Family:
    """One ``model_type``: how its ``config.json`` reads, its tensors, its formulas, its FLOPs and its KV cache.

    Config reading (:func:`helpers.config.parse_config` applies it):

    * ``sizes``, ``flags``: the keys read, under the notebooks' symbols, with transformers' defaults and aliases;
    * ``refused``: ``{key: (the only value accepted, why)}`` for keys that change the architecture in a way
      the engine does not model (refused in one line naming the key, never counted silently wrong);
    * ``derive(sizes, keys)``: derived sizes (GPT-2's I = 4H, LLaMA's A_kv = A) and the family's own checks
      (heads dividing heads); ``sizes`` is filled in place, ``keys`` maps a symbol to its config key;
    * ``read(raw, sizes, flags)``: keys that are neither a size nor a flag (a list such as Qwen2's
      ``layer_types``, or sizes that depend on a switch), read after ``derive`` into derived sizes (``sizes``
      filled in place) and checked, refused in one line naming the key; it may return per-layer lists
      (``{name: tuple of ints}``, Qwen3-MoE's dense layers), kept as ``ModelConfig.lists``; None: nothing more to read;
    * ``heads_divide_hidden``: when transformers requires the heads ``A`` to divide ``H``: ``"always"`` (LLaMA,
      BERT, GPT-2: even with ``head_dim``), ``"unless head_dim"`` (Qwen2, Qwen3, Phi-3: once ``head_dim`` is given
      the projections are A·d_k wide, whatever H is), ``"never"`` (Gemma, whose ``GemmaConfig`` accepts H = 18
      with A = 4, head_dim 6; T5, whose ``d_kv`` sizes the heads);
    * ``pad_token_id``: transformers' default padding index; ``padded``: the symbols of the tables that hold
      that padding row (checked as torch checks it), empty where no table has one (GPT-2);

    The model (each a function of the parsed :class:`~helpers.config.ModelConfig`):

    * ``architecture``: the transformers class it mirrors (and the one the tests build to cross-check);
    * ``layout``: the tensors, as a :class:`~helpers.params.Layout` of blocks, each tensor with its kind
      and the tokens it multiplies, each layer of a stack built once;
    * ``formulas``: the parameter count of each component, as formulas over the config's symbols;
    * ``flops``: the forward FLOPs of each component (attention scores included), over the symbols, B and S;
    * ``kv_cache``: the values a decoder caches for B sequences of S tokens, as a formula; None: an encoder;
    * ``kv_cache_full``: for a cache that holds a compressed form (DeepSeek-V3's latent attention), the values
      full multi-head keys and values would take, as attention uses them (the figure the saving is measured
      against); None: the cache already holds full keys and values;
    * ``positions``: the longest sequence its position table covers (None: rotary, no table);
    * ``torch_ref``: the class of :mod:`helpers.torch_ref` that builds it from plain torch modules.
    """

    model_type: str
    architecture: str
    sizes: tuple[Size, ...]
    layout: Callable[[ModelConfig], Layout]
    formulas: Formulas
    flops: Formulas
    torch_ref: str
    positions: Callable[[ModelConfig], int | None]
    kv_cache: Callable[[ModelConfig], str] | None = None
    kv_cache_full: Callable[[ModelConfig], str] | None = None
    flags: tuple[Flag, ...] = ()
    refused: Mapping[str, tuple[Any, str]] = field(default_factory=dict)
    derive: Callable[[dict[str, int], Mapping[str, str]], None] | None = None
    read: Callable[[Mapping[str, Any], dict[str, int], Mapping[str, bool]],
                   Mapping[str, tuple[int, ...]] | None] | None = None
    pad_token_id: int | None = None
    padded: tuple[str, ...] = ("V",)
    heads_divide_hidden: Literal["always", "unless head_dim", "never"] = "always"

    @property
    def is_decoder(self) -> bool:
        """True for a family that keeps a KV cache (a decoder)."""
        return self.kv_cache is not None
