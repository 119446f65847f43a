"""What a model family is, in one place: the :class:`Family` record every family module fills in.

Introduced in ``00_overview`` (``ModelConfig.family``). See the README, "Adding a model family".
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterable, Literal, Mapping

from ..config import Flag, ModelConfig, Size
from ..params import Block, Layout, Param

Formulas = Callable[[ModelConfig], dict[str, str]]


@dataclass(frozen=True)
class ModelClass:
    """Another transformers class of a family: the base model alone, or another head on it (``--class``).

    ``layout`` and ``formulas`` play the roles of the family's own (names, shapes, order and tied tensors
    exactly as ``named_parameters()`` of that class lists them; a parameter count per component). Where
    the class has a label head (``XForSequenceClassification`` ...), ``labels`` is True and the layout reads
    C, the number of labels (``num_labels``, or the length of ``id2label``; 2 by default, as transformers);
    ``required_labels`` is the only C the class accepts (DistilBERT's question answering: 2). ``flags`` and
    ``refused`` are read only for this class, as the family's are (an MLM head's ``tie_word_embeddings``);
    ``read(raw)`` checks other keys only this class reads, raising ``ConfigError(key, problem)``.
    :mod:`helpers.families.heads` builds them.
    """

    layout: Callable[[ModelConfig], Layout]
    formulas: Formulas
    labels: bool = False
    required_labels: int | None = None
    flags: tuple[Flag, ...] = ()
    refused: Mapping[str, tuple[Any, str]] = field(default_factory=dict)
    read: Callable[[Mapping[str, Any]], None] | None = None


@dataclass(frozen=True)
class TextConfig:
    """The language model of a composite config (transformers' ``text_config``), read by a text family of its own.

    ``family``: the ``model_type`` of the family that reads it (``"gemma3_text"``); its sizes, flags, ``derive``,
    ``read`` and ``runs`` apply as they would to a config of that type, and its symbols (V, H, L, A, d_k ...) become the
    composite's. ``key``: where the composite keeps it. ``defaults``: the values the composite's text config class fills
    where the file leaves a key out, when they differ from the text family's own (Qwen2.5-VL's text config: H = 8192,
    L = 80 ...). ``flat``: with no ``key`` in the file, the text keys are read from the top level (Qwen2.5-VL's
    published form), not from the defaults alone. ``ignores``: keys the text family reads but the composite's text
    config class does not (Qwen2.5-VL's text model takes d_k = H // A whatever ``head_dim`` says): left out before
    the text family reads the config. ``runs``: what the composite's model cannot run of its language model, in place
    of the text family's own ``runs`` where the composite runs it otherwise (Gemma 3's builds only the attention masks
    of the layer types it has; Gemma3ForCausalLM builds the sliding one for every input); None: the text family's.
    """

    family: str
    key: str = "text_config"
    defaults: Mapping[str, Any] = field(default_factory=dict)
    flat: bool = False
    ignores: tuple[str, ...] = ()
    runs: Callable[[Mapping[str, Any], Mapping[str, int], Mapping[str, bool]],
                   Mapping[str, tuple[str, str]] | None] | None = None


def nest(layout: Layout, renames: Mapping[str, str], before: tuple[Block, ...] = ()) -> Layout:
    """A text family's layout inside a composite model: each name starting with a key of ``renames`` renamed
    (``{"model.": "model.language_model."}``), ``before`` (a vision tower and its projector) listed first.

    No notebook calls it; it works behind the helpers of ``11_todays_models``.
    """
    def rename(name: str) -> str:
        for old, new in renames.items():
            if name.startswith(old):
                return new + name[len(old):]
        return name

    blocks = tuple(Block(rename(b.prefix), b.params, b.layers) if b.layers is not None else
                   Block(b.prefix, tuple(replace(p, name=rename(p.name)) for p in b.params)) for b in layout.blocks)
    return Layout((*before, *blocks))


@dataclass(frozen=True)
class StateTerm:
    """A fixed-size part of a decoder's cache, beside its keys and values: constant in S, with its own byte width.

    ``values`` is a formula over the config's symbols and ``B``; ``bits`` the width of each value: None for the
    cache's dtype (the model's, as the keys and values), or a fixed width whatever the model's dtype (Qwen3-Next's
    recurrent state, which transformers keeps in fp32: 32). :func:`helpers.memory.kv_cache_bytes` adds every term.
    """

    name: str
    values: str
    bits: int | None = None


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
    * ``runs(raw, sizes, flags)``: for a config transformers builds but cannot run, ``{"forward": (key, why)}`` where
      its forward pass fails (LLaMA's key/value heads not dividing the query heads, more experts per token than
      experts), ``{"cache": (key, why)}`` where only its KV cache fails or is not modelled; None or ``{}`` where it
      runs. ``count`` answers such a config; ``flops``, ``memory`` and ``budget`` refuse it in one line naming the
      key (:meth:`~helpers.config.ModelConfig.check_runs`);
    * ``heads_divide_hidden``: when transformers requires the heads ``A`` to divide ``H``: ``"always"`` (LLaMA,
      BERT, GPT-2: even with ``head_dim``), ``"unless head_dim"`` (Qwen2, Qwen3, Phi-3: once ``head_dim`` is given
      the projections are A·d_k wide, whatever H is), ``"unless embedding_size"`` (BERT: its attention skips the
      check when the config has that key, and builds A·⌊H/A⌋-wide projections), ``"never"`` (Gemma, whose ``GemmaConfig`` accepts H = 18
      with A = 4, head_dim 6; T5, whose ``d_kv`` sizes the heads);
    * ``text``, ``sub_configs``: a composite config (a vision-language model). ``text`` (a :class:`TextConfig`)
      names the text family that reads the language model's ``text_config``: its sizes, flags, per-layer lists, what
      it cannot run and its padding row become this config's, under the same symbols (V, H, L ...), before this
      family's own are read (a flag of both: this family's wins, as the composite's ``tie_word_embeddings`` does
      in transformers); a problem there is refused naming ``text_config.KEY``. ``sub_configs``: the other objects
      (``"vision_config"``) whose keys this family's sizes, flags and ``refused`` name with a dot
      (``Size("vision_config.hidden_size", "H_v", 1152)``); a missing or null object: every default, as the
      composite config fills it. The layout reuses the text family's (:func:`nest` renames ``model.`` to
      ``model.language_model.`` and puts the tower first); :func:`composite` builds such a family with the text
      family's FLOPs, cache and positions, and ``heads_divide_hidden="never"`` (the text family checked its heads);
    * ``notes``: lines ``flops`` prints under the model's description, saying what its count leaves out (a
      vision tower's cost per image); None: nothing to say;
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
    * ``state``: the cache's fixed-size terms besides keys and values (:class:`StateTerm`: Qwen3-Next's linear-attention
      layers keep a convolution state at the model's dtype and a recurrent state in fp32, constant in S); None: none;
    * ``positions``: the longest sequence its position table covers (None: rotary, no table);
    * ``torch_ref``: the class of :mod:`helpers.torch_ref` that builds it from plain torch modules;
    * ``classes``: the other transformers classes of the family the engine counts (``--class``), by name:
      the base model alone (``LlamaModel``), other heads (``BertForMaskedLM``, ``GPT2ForSequenceClassification``
      ...); :attr:`architecture` stays the default;
    * ``checkpoint_names``: where the checkpoints on disk name some tensors otherwise than transformers (the
      experts of a mixture, which transformers fuses when it loads them), a function giving, for one tensor
      of the layout, the tensors a checkpoint stores for it (itself where nothing differs); None: the same names;
    * ``surplus_flops``: where transformers' own class multiplies more than the model needs (Llama 4 runs every token
      through all E experts, weighing the unrouted by 0), the matmul FLOPs it adds to :attr:`flops`, as a formula over
      the symbols, B and S: ``FlopCounterMode`` on that class counts ``flops + surplus_flops``; None: nothing more.
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
    state: Callable[[ModelConfig], tuple[StateTerm, ...]] | None = None
    flags: tuple[Flag, ...] = ()
    refused: Mapping[str, tuple[Any, str]] = field(default_factory=dict)
    derive: Callable[[dict[str, int], Mapping[str, str]], None] | None = None
    read: Callable[[Mapping[str, Any], dict[str, int], Mapping[str, bool]],
                   Mapping[str, tuple[int, ...]] | None] | None = None
    runs: Callable[[Mapping[str, Any], Mapping[str, int], Mapping[str, bool]],
                   Mapping[str, tuple[str, str]] | None] | None = None
    pad_token_id: int | None = None
    padded: tuple[str, ...] = ("V",)
    heads_divide_hidden: Literal["always", "unless head_dim", "unless embedding_size", "never"] = "always"
    heads_checked_by_layers: bool = False  # the check lives in the attention layer: a depth-0 model skips it (BERT)
    classes: Mapping[str, ModelClass] = field(default_factory=dict)
    checkpoint_names: Callable[[Param], list[Param]] | None = None
    surplus_flops: Callable[[ModelConfig], str] | None = None
    text: TextConfig | None = None
    sub_configs: tuple[str, ...] = ()
    notes: Callable[[ModelConfig], list[str]] | None = None

    @property
    def class_names(self) -> tuple[str, ...]:
        """Every class the engine counts for this family, the default (:attr:`architecture`) first."""
        return (self.architecture, *self.classes)

    def model_layout(self, config: ModelConfig) -> Layout:
        """The tensors of the class ``config`` asks for (``config.model_class``; None: the default)."""
        if config.model_class is None:
            return self.layout(config)
        return self.classes[config.model_class].layout(config)

    def model_formulas(self, config: ModelConfig) -> dict[str, str]:
        """The parameter formulas of the class ``config`` asks for, per component."""
        if config.model_class is None:
            return self.formulas(config)
        return self.classes[config.model_class].formulas(config)

    @property
    def is_decoder(self) -> bool:
        """True for a family that keeps a KV cache (a decoder)."""
        return self.kv_cache is not None


def composite(language: Family, **fields: Any) -> Family:
    """A vision-language family around the family of its language model (``language``, read as ``fields["text"]`` says):
    its FLOPs (text tokens only), its cache and positions are the text family's, and its heads were checked there
    (``heads_divide_hidden="never"``); ``fields`` give the rest (sizes, layout, formulas ...).

    No notebook calls it; it works behind the helpers of ``11_todays_models``.
    """
    inherited = {"flops": language.flops, "kv_cache": language.kv_cache, "state": language.state,
                 "positions": language.positions, "heads_divide_hidden": "never"}
    return Family(**{**inherited, **fields})


def too_many_experts(sizes: Mapping[str, int], key: str) -> tuple[str, str] | None:
    """More experts per token (k, ``num_experts_per_tok``) than the E experts the file gives under ``key``: the router's
    ``torch.topk`` cannot pick them (the model builds, its forward pass fails), as ``(key, why)`` for a family's
    ``runs``; None where k ≤ E. Every family with routed experts refuses it so.

    No notebook calls it; it works behind the helpers of ``09_modern_architectures``.
    """
    if sizes["k"] <= sizes["E"]:
        return None
    return ("num_experts_per_tok", f"{sizes['k']} experts per token, but only {key} = {sizes['E']} experts")


def experts_key(raw: Mapping[str, Any], keys: tuple[str, ...] = ("num_local_experts", "num_experts")) -> str:
    """The key a file gives its experts under: the first of ``keys`` (the field, then its aliases) it has, else the
    field's (Mixtral's and GPT-OSS's ``num_local_experts``, alias ``num_experts``).

    No notebook calls it; it works behind the helpers of ``09_modern_architectures``.
    """
    return next((key for key in keys if key in raw), keys[0])


def mixed_stack(L: int, dense_layers: int, dense: str, sparse: str, dense_count: str, sparse_count: str) -> str:
    """One formula for a stack of dense and sparse layers: ``dense`` in each of ``dense_layers``, ``sparse`` in the rest.

    ``dense_count`` and ``sparse_count`` write those numbers in symbols (Qwen3-MoE: ``"(L - L_e)"``, ``"L_e"``;
    DeepSeek-V3: ``"L_f"``, ``"(L - L_f)"``); a stack of one kind is ``L·(...)``.
    No notebook calls it; it works behind the helpers of ``09_modern_architectures``.
    """
    if dense_layers == L:
        return f"L*({dense})"
    if dense_layers == 0:
        return f"L*({sparse})"
    return f"{dense_count}*({dense}) + {sparse_count}*({sparse})"


def layer_runs(L: int, marked: Iterable[int]) -> list[tuple[range, bool]]:
    """Layers 0 … L − 1 as runs of consecutive layers of one kind, in order: True for the indices of ``marked`` (sorted,
    unique, within the stack), False for the others. A ``range`` of step 1 is read without a loop.

    No notebook calls it; it works behind the helpers of ``09_modern_architectures``. Qwen3-MoE marks its dense layers,
    Llama 4 its sparse ones.
    """
    if isinstance(marked, range) and marked.step == 1:
        parts = [(range(0, marked.start), False), (marked, True), (range(marked.stop, L), False)]
        return [(run, kind) for run, kind in parts if len(run)]
    found: list[tuple[range, bool]] = []
    start = 0
    for i in marked:
        if found and found[-1][1] and found[-1][0].stop == i:
            found[-1] = (range(found[-1][0].start, i + 1), True)
        else:
            if start < i:
                found.append((range(start, i), False))
            found.append((range(i, i + 1), True))
        start = i + 1
    if start < L:
        found.append((range(start, L), False))
    return found
