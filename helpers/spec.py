"""The records of the engine, and the formula language: what every other module of helpers/ is written in.

Introduced in ``00_overview`` (through :mod:`helpers.config` and :mod:`helpers.params`, which re-export these names).
Layer 0: this module imports no other module of helpers (``tests/test_layers.py``). It holds

* a configuration: :class:`ConfigError`, :class:`Size`, :class:`Flag`, :class:`ModelConfig` (holding its
  :class:`Family`), :func:`read_int`;
* a model's tensors: the components and kinds (``EMBEDDINGS`` …, ``TABLE`` …), :class:`Param`, :class:`Block`,
  :class:`Layout`;
* the formula language: formulas are Python expressions over a config's symbols (``"L*(4*H**2 + 4*H)"``), evaluated
  by :func:`evaluate` and shown as ``L·(4H² + 4H)`` by :func:`render`;
* a family: :class:`Family`, :class:`ModelClass`, :class:`TextConfig`, :class:`StateTerm` (the records each module of
  :mod:`helpers.families` fills in; see the README, "Adding a model family").
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator, Literal, Mapping

import numpy as np


# --- a configuration --------------------------------------------------------------------------------------------------

class ConfigError(ValueError):
    """A configuration that cannot be counted: ``field`` names the culprit.
    Introduced in ``10_budgets``."""

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"{field}: {problem}")
        self.field = field
        self.problem = problem


@dataclass(frozen=True)
class Size:
    """One size a family reads: its ``config.json`` key, its symbol, transformers' default, its minimum.

    ``aliases`` are other keys transformers accepts for the same size (GPT-2's ``hidden_size`` for
    ``n_embd``: its ``attribute_map``). A ``default`` of None means the family derives the size when the
    file leaves it out (GPT-2's ``n_inner``: 4H); ``nullable`` lets a file write ``null`` for a size that has a
    default, as transformers allows (Mistral's ``sliding_window: null``: no window).

    ``layers`` counts, as formulas over the sizes, the layers that alone read the size (GPT-2's heads: ``("L",)``;
    DeepSeek-V3's experts, in its sparse layers: ``("L - L_f",)``), or, where per-layer lists or the class decide, as
    a function of the config (Qwen3-MoE's experts: the layers ``mlp_only_layers`` leaves out; T5's heads: ``L`` and
    the decoder's layers, none in ``T5EncoderModel``). A null under an alias passes transformers' config class
    unchecked (its ``attribute_map`` sets the field to None after the type checks) and fails only where a layer reads
    it: the engine accepts it where each of these counts is 0 (the model it builds then does not depend on the size,
    read as its default), and refuses it elsewhere, naming the alias.
    No notebook calls it; it works behind the helpers of ``00_overview``.
    """

    key: str
    symbol: str
    default: int | None
    minimum: int = 1
    aliases: tuple[str, ...] = ()
    nullable: bool = False
    layers: tuple[str | Callable[[ModelConfig], int], ...] = ()


@dataclass(frozen=True)
class Flag:
    """One boolean switch a family reads (``tie_word_embeddings``, ``attention_bias`` ...).

    ``nullable``: transformers accepts ``null`` for it (a ``bool | None`` field, read as the default); most of its
    config classes declare ``bool`` and refuse ``null``, so the engine refuses it too.
    No notebook calls it; it works behind the helpers of ``00_overview``.
    """

    key: str
    default: bool
    nullable: bool = False


@dataclass(frozen=True)
class ModelConfig:
    """The sizes that decide a model's parameters, keyed by the notebooks' symbols.
    No notebook calls it; it works behind the helpers of ``00_overview``."""

    name: str
    model_type: str
    sizes: Mapping[str, int]
    flags: Mapping[str, bool]
    pad_token_id: int | None = None
    # per-layer lists a family reads besides its sizes (Qwen3-MoE's ``mlp_only_layers``), as tuples of ints
    lists: Mapping[str, tuple[int, ...]] = field(default_factory=dict)
    # another transformers class of the family (``--class``: ``BertForMaskedLM``); None: the family's default
    model_class: str | None = None
    # what transformers builds but cannot run, as {"forward": (key, why), "cache": (key, why)}: its forward pass fails
    # (LLaMA's key/value heads not dividing the query heads), or its KV cache does (a sliding_attention layer without a
    # window) or is not modelled; ``count`` answers, the commands that run it refuse (:meth:`check_runs`). "sdpa": the
    # forward pass fails with transformers' default attention only (eager runs it): refused where a step runs sdpa
    cannot_run: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    # the file's ``quantization_config`` as given (a pre-quantized checkpoint: FP8, MXFP4, GPTQ ...), None without one;
    # it changes no parameter count, only the bytes stored (:mod:`helpers.quantized`)
    quantization: Mapping[str, Any] | None = None
    # the file's ``torch_dtype`` (or ``dtype``): the dtype of what a quantized checkpoint leaves unquantized
    torch_dtype: str | None = None
    # the file's keys as read (after a composite's text config is flattened): what a training step reads beyond the
    # sizes (dropout probabilities, the activation, use_cache; :mod:`helpers.peak`); never compared
    raw: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)
    # the family's description (layout, formulas, FLOPs, KV cache): :func:`helpers.config.parse_config` puts
    # ``helpers.families.FAMILIES[model_type]`` here; None for a config no family reads (the 2017 paper's rows)
    family: Family | None = field(default=None, compare=False, repr=False)

    def check_runs(self, cache: bool = False, attn: str | None = None) -> None:
        """Raise a :class:`ConfigError` naming the key when transformers cannot run this model (with ``cache``: or
        cannot keep its KV cache, or the engine does not model that cache; with ``attn="sdpa"``: or cannot run it with
        sdpa attention). See ``cannot_run``.

        No notebook calls it; it works behind the helpers of ``08_flops_and_memory``.
        """
        for what in ("forward", *(("cache",) if cache else ()), *(("sdpa",) if attn == "sdpa" else ())):
            if what in self.cannot_run:
                raise ConfigError(*self.cannot_run[what])

    @property
    def architecture(self) -> str:
        """The transformers class counted: ``model_class``, or the family's default."""
        return self.model_class or self.family.architecture

    @property
    def num_labels(self) -> int | None:
        """C, the labels of the class's label head (``BertForSequenceClassification``); None: no label head."""
        if self.model_class is None or not self.family.classes[self.model_class].labels:
            return None
        return self.sizes["C"]

    def __getitem__(self, symbol: str) -> int:
        return self.sizes[symbol]


def is_int(value: Any) -> bool:
    """True for an integer that is not a boolean (JSON's ``true`` is no count).

    No notebook calls it; it works behind the helpers of ``00_overview``.
    """
    return isinstance(value, int) and not isinstance(value, bool)


def read_int(key: str, value: Any) -> int:
    """``value`` as an integer count, or a :class:`ConfigError` naming ``key`` (a boolean, a float or anything else).

    No notebook calls it; it works behind the helpers of ``00_overview``.
    """
    if isinstance(value, bool):
        raise ConfigError(key, f"must be an integer count, got the boolean {json.dumps(value)}")
    if isinstance(value, float) and value.is_integer():
        raise ConfigError(key, f"must be an integer, got the float {value!r}")
    if not is_int(value):
        raise ConfigError(key, f"must be an integer, got {json.dumps(value)}")
    return value


# --- a model's tensors and the formula language ----------------------------------------------------------------------

EMBEDDINGS = "embeddings"
ATTENTION = "attention"
FEED_FORWARD = "feed-forward"
LAYER_NORM = "layer norm"
POOLER = "pooler"
LM_HEAD = "lm head"
MLM_HEAD = "MLM head"
NSP_HEAD = "NSP head"
SOP_HEAD = "SOP head"  # ALBERT's sentence-order prediction, in NSP's place
DISCRIMINATOR_HEAD = "discriminator head"  # ELECTRA's replaced-token detection
CLASSIFIER = "classifier"
QA_HEAD = "QA head"  # the start and end logits of extractive question answering
LINEAR_ATTENTION = "linear attention"  # Qwen3-Next's Gated DeltaNet layers: projections, convolution, gates
# a vision-language model's image encoder and the projector into the language model (multiplies no text token)
VISION = "vision"
# the FLOPs components that are not parameter components (see helpers.flops)
ATTENTION_PROJECTIONS = "attention projections"
ATTENTION_SCORES = "attention scores/values"
# a linear-attention layer's state update and read-out (Qwen3-Next's gated delta rule), counted by its recurrence
DELTA_RULE = "gated delta rule (recurrence)"
# the FLOPs lines no parameter tensor accounts for: matmuls of activations against activations (or a state)
WITHOUT_PARAMETERS = (ATTENTION_SCORES, DELTA_RULE)

# what a tensor is, as the builder that made it says (never guessed from its name)
TABLE = "table"  # an embedding table: a lookup (a matmul only where it is also a tied LM head)
MATRIX = "matrix"  # the weight of a linear layer
BIAS = "bias"  # the bias vector of a linear layer
NORM = "norm"  # a LayerNorm / RMSNorm gain γ or shift β
# the routed experts' weights, fused E × out × in: each token multiplies k of the E slices (as a checkpoint on disk
# names them, :func:`checkpoint_layout`: one expert's out × in, which tokens reach it depending on the routing)
EXPERT = "expert"
# the routed experts' biases, fused E × out (GPT-OSS): added, no matmul, but each token adds only its k experts' rows
EXPERT_BIAS = "expert bias"
# a depthwise convolution's kernel, C × 1 × K_c (Qwen3-Next's conv1d): each of C channels slides its own K_c taps over
# the positions the kernel computes (``tokens``: the sequence as padded, which may exceed B·S), no mixing of channels
CONVOLUTION = "convolution"
KINDS = (TABLE, MATRIX, BIAS, NORM, EXPERT, EXPERT_BIAS, CONVOLUTION)


def numel(shape: Iterable[int]) -> int:
    """Number of elements of a tensor of this shape, exact (NumPy object product).

    No notebook calls it; it works behind the helpers of ``00_overview``.
    """
    return int(np.prod(np.array(list(shape), dtype=object), dtype=object))


@dataclass(frozen=True)
class Param:
    """One parameter tensor as the Hugging Face checkpoint stores it.

    ``kind`` is what the tensor is (:data:`TABLE`, :data:`MATRIX`, :data:`BIAS`, :data:`NORM`), set by the
    family's builder; ``tokens`` is how many tokens it multiplies in a forward pass, as a formula over ``B``
    and ``S`` (``"B*S"``: every token; ``"B"``: BERT's pooler, on the [CLS] token only; ``""``: no matmul,
    e.g. a bias, a norm gain, an embedding lookup; a token table tied to the LM head has ``"B*S"``).
    No notebook calls it; it works behind the helpers of ``00_overview``.
    """

    name: str
    shape: tuple[int, ...]
    component: str
    formula: str
    kind: str = ""
    tokens: str = ""

    @property
    def count(self) -> int:
        return numel(self.shape)

    @property
    def layer(self) -> int | None:
        """The encoder/decoder layer this tensor belongs to, or None outside the stack."""
        match = re.search(r"\.(\d+)\.", self.name)
        return int(match.group(1)) if match else None

    @classmethod
    def table(cls, name: str, shape: tuple[int, ...], component: str, formula: str, tokens: str = "") -> Param:
        """An embedding table (a lookup; ``tokens="B*S"`` where it is also the tied LM head)."""
        return cls(name, tuple(int(n) for n in shape), component, formula, TABLE, tokens)

    @classmethod
    def matrix(cls, name: str, shape: tuple[int, ...], component: str, formula: str, tokens: str = "B*S") -> Param:
        """A linear layer's weight, multiplying ``tokens`` tokens (all ``B·S`` unless told)."""
        return cls(name, tuple(int(n) for n in shape), component, formula, MATRIX, tokens)

    @classmethod
    def experts(cls, name: str, shape: tuple[int, ...], component: str, formula: str, tokens: str = "B*S*k") -> Param:
        """E routed experts' weights fused in one ``E × out × in`` tensor (a mixture of experts).

        ``tokens`` counts the routed token slots (``B·S·k``: each token goes to k experts), and each slot
        multiplies one expert's slice (:func:`matmul_count`), not the whole tensor.
        """
        return cls(name, tuple(int(n) for n in shape), component, formula, EXPERT, tokens)

    @classmethod
    def convolution(cls, name: str, shape: tuple[int, ...], component: str, formula: str, tokens: str) -> Param:
        """A depthwise convolution's kernel (C × 1 × K_c): ``tokens`` positions, each output channel K_c multiply-adds
        (2·positions·C·K_c FLOPs, as FlopCounterMode counts a convolution)."""
        return cls(name, tuple(int(n) for n in shape), component, formula, CONVOLUTION, tokens)

    @classmethod
    def expert_bias(cls, name: str, shape: tuple[int, ...], component: str, formula: str) -> Param:
        """E routed experts' biases fused in one ``E × out`` tensor: added (no matmul), each of the ``B·S·k`` routed
        token slots adding one expert's row (so a token uses k of the E rows, :attr:`helpers.count.Count.active`)."""
        return cls(name, tuple(int(n) for n in shape), component, formula, EXPERT_BIAS, "B*S*k")

    @classmethod
    def bias(cls, name: str, shape: tuple[int, ...], component: str, formula: str) -> Param:
        """A linear layer's bias vector (added, no matmul)."""
        return cls(name, tuple(int(n) for n in shape), component, formula, BIAS)

    @classmethod
    def norm(cls, name: str, shape: tuple[int, ...], component: str, formula: str) -> Param:
        """A LayerNorm or RMSNorm vector (γ or β: elementwise, no matmul)."""
        return cls(name, tuple(int(n) for n in shape), component, formula, NORM)


def matmul_count(param: Param) -> int:
    """The weights one of the tensor's ``tokens`` multiplies: one expert's slice for :data:`EXPERT`, else all.

    A mixture of experts routes each token to k of the E experts (E = 0 builds: the slice is still one expert's shape).
    Introduced in ``09_modern_architectures``.
    """
    return math.prod(param.shape[1:]) if param.kind in (EXPERT, EXPERT_BIAS) else param.count


@dataclass(frozen=True)
class Block:
    """Tensors listed once, or a stack of identical layers described once and repeated.

    For a stack, ``prefix`` holds ``{i}`` where the layer index goes (``"encoder.layer.{i}."``) and the
    tensors' names are relative to it; ``layers`` is the range of indices. Outside a stack, ``layers`` is
    None and the names are whole.
    No notebook calls it; it works behind the helpers of ``00_overview``.
    """

    prefix: str
    params: tuple[Param, ...]
    layers: range | None = None

    @property
    def repeat(self) -> int:
        """How many times the block's tensors occur in the model."""
        return 1 if self.layers is None else len(self.layers)

    @staticmethod
    def once(*params: Param) -> Block:
        """Tensors that occur once (embeddings, final norm, pooler, head), under their whole names."""
        return Block("", tuple(params))

    @staticmethod
    def stack(prefix: str, params: Iterable[Param], layers: int) -> Block:
        """``layers`` identical layers named ``prefix.format(i=0)``, ``prefix.format(i=1)`` ..."""
        return Block(prefix, tuple(params), range(layers))

    def expand(self) -> list[Param]:
        """Every tensor of the block under its checkpoint name (a stack: layer after layer)."""
        if self.layers is None:
            return list(self.params)
        rows = []
        for i in self.layers:
            head = self.prefix.format(i=i)
            rows += [Param(head + p.name, p.shape, p.component, p.formula, p.kind, p.tokens) for p in self.params]
        return rows


@dataclass(frozen=True)
class Layout:
    """A model's tensors in compact form: a few blocks, each layer of a stack built once.

    What counting, FLOPs and memory read: their cost does not grow with the number of layers.
    :meth:`expand` (what :func:`param_table` returns) lists every tensor.

    No notebook calls it; it works behind the helpers of ``00_overview``.
    """

    blocks: tuple[Block, ...]

    def rows(self) -> Iterator[tuple[Param, int]]:
        """Each distinct tensor with the number of times it occurs."""
        for block in self.blocks:
            for p in block.params:
                yield p, block.repeat

    @property
    def total(self) -> int:
        """Every parameter, exact."""
        return sum((repeat * p.count for p, repeat in self.rows()), 0)

    @property
    def tensors(self) -> int:
        """N_t: the number of parameter tensors (a tied weight once)."""
        return sum((block.repeat * len(block.params) for block in self.blocks), 0)

    def component_counts(self) -> dict[str, int]:
        """Count per component, in the order components first appear (as :func:`component_counts`)."""
        counts: dict[str, int] = {}
        for p, repeat in self.rows():
            counts[p.component] = counts.get(p.component, 0) + repeat * p.count
        return counts

    def expand(self) -> list[Param]:
        """Every tensor in checkpoint order, a stack expanded layer by layer."""
        return [p for block in self.blocks for p in block.expand()]


def evaluate(formula: str, config: ModelConfig, **extra: int) -> int:
    """The value of a formula for a configuration (and any extra symbols), in exact integers.

    Introduced in ``01_embeddings``. ``min`` and ``max`` may appear (a sliding window's cache).
    """
    names = {**config.sizes, **extra}
    return int(eval(compile(formula, "<formula>", "eval"), {"__builtins__": {}, "min": min, "max": max}, names))


def render(formula: str) -> str:
    """``"L*(4*H**2 + 4*H)"`` -> ``"L·(4H² + 4H)"``: the formula as the notebooks print it.

    Introduced in ``04_layer_norm``.
    """
    text = formula.replace("**2", "²").replace("**3", "³")
    text = re.sub(r"(?<![\w])(\d+)\*(?=[A-Za-z(])", r"\1", text)
    return text.replace("*", "·")


# --- a family ---------------------------------------------------------------------------------------------------------

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

    No notebook calls it; it works behind the helpers of ``00_overview``.
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
    No notebook calls it; it works behind the helpers of ``00_overview``.
    """

    family: str
    key: str = "text_config"
    defaults: Mapping[str, Any] = field(default_factory=dict)
    flat: bool = False
    ignores: tuple[str, ...] = ()
    runs: Callable[[Mapping[str, Any], Mapping[str, int], Mapping[str, bool]],
                   Mapping[str, tuple[str, str]] | None] | None = None


@dataclass(frozen=True)
class StateTerm:
    """A fixed-size part of a decoder's cache, beside its keys and values: constant in S, with its own byte width.

    ``values`` is a formula over the config's symbols and ``B``; ``bits`` the width of each value: None for the
    cache's dtype (the model's, as the keys and values), or a fixed width whatever the model's dtype (Qwen3-Next's
    recurrent state, which transformers keeps in fp32: 32). :func:`helpers.memory.kv_cache_bytes` adds every term.
    No notebook calls it; it works behind the helpers of ``00_overview``.
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

    No notebook calls it; it works behind the helpers of ``00_overview``.
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
