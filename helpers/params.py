"""The parameter table: every tensor of a model, with its checkpoint name, shape, component and formula.

Introduced in ``00_overview`` and used by every notebook. Counts are products of shapes taken in
NumPy with ``dtype=object``, so they are exact Python integers for any size (no int64 wrap-around).

Formulas are written as Python expressions over the symbols of :mod:`helpers.config`
(``"L*(4*H**2 + 4*H)"``), so that code can evaluate them (:func:`evaluate`) and check them against
the counted tensors, and are shown to people as ``L·(4H² + 4H)`` (:func:`render`).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace
from typing import Iterable, Iterator

import numpy as np

from . import registry
from .config import ConfigError, ModelConfig

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


def param_layout(config: ModelConfig) -> Layout:
    """The model's tensors in compact form (its family's layout): what the counts are computed from.

    No notebook calls it; it works behind the helpers of ``00_overview``.
    ``param_layout(c).expand() == param_table(c)``.
    A config parsed with another class of the family (``model_class``, ``--class``) gets that class's tensors.
    """
    return config.family.model_layout(config)


TRANSFORMERS, CHECKPOINT = "transformers", "checkpoint"  # the two namings of ``count --names``


def checkpoint_layout(config: ModelConfig) -> Layout:
    """The model's tensors as its checkpoints on disk name them: the fused experts one tensor per expert.

    No notebook calls it; it works behind the helpers of ``00_overview``.
    transformers 5 fuses a mixture's experts when it loads a checkpoint
    (``mlp.experts.gate_up_proj``, E × 2I × H); the files name them one by one (Mixtral:
    ``block_sparse_moe.experts.{e}.w1.weight`` ...). The family's ``checkpoint_names`` says how; the same
    values, so the same total. A family without one is refused in one line naming ``--names``.
    """
    expand = config.family.checkpoint_names
    if expand is None:
        declared = [t for t, f in registry.FAMILIES.items() if f.checkpoint_names is not None]
        raise ConfigError("--names", f"{config.model_type} declares no checkpoint names of its own (only "
                                     f"{', '.join(declared)} do, for their fused experts)")
    layout = param_layout(config)
    return Layout(tuple(Block(b.prefix, tuple(q for p in b.params for q in expand(p)), b.layers) for b in layout.blocks))


def param_table(config: ModelConfig) -> list[Param]:
    """Every parameter tensor of the model, in checkpoint order, a tied weight listed once.

    Introduced in ``00_overview``.
    """
    return param_layout(config).expand()


def component_formulas(config: ModelConfig) -> dict[str, str]:
    """The symbolic count of each component, as evaluable expressions (see :func:`render`).

    Introduced in ``01_embeddings``.
    """
    return config.family.model_formulas(config)


def total(params: Iterable[Param]) -> int:
    """Sum of the tensors' counts (exact).

    Introduced in ``00_overview``.
    """
    return sum((p.count for p in params), 0)


def component_counts(params: Iterable[Param]) -> dict[str, int]:
    """Count per component, in the order components first appear.

    Introduced in ``03_feed_forward``.
    """
    counts: dict[str, int] = {}
    for p in params:
        counts[p.component] = counts.get(p.component, 0) + p.count
    return counts


def under(params: Iterable[Param], prefix: str) -> list[Param]:
    """The rows whose checkpoint name starts with ``prefix``, renamed relative to it.

    ``under(param_table(c), "embeddings.")`` names its rows ``word_embeddings.weight`` ...: the names
    a component built alone (``build_component(BertEmbeddings, c)``) gives its parameters, so the
    two can be compared with ``torch_ref.matches``. Introduced in ``01_embeddings``. Used again in 02 and 03.
    """
    return [replace(p, name=p.name[len(prefix):]) for p in params if p.name.startswith(prefix)]


def is_norm(param: Param) -> bool:
    """True for a LayerNorm/RMSNorm tensor (γ or β), whatever component the engine files it under (its kind :data:`NORM`).

    What :func:`linear_biases` leaves out (a norm's β is no linear bias). Introduced in ``02_multi_head_attention``.
    """
    return param.kind == NORM


def linear_biases(params: Iterable[Param]) -> list[Param]:
    """The bias vectors of the linear layers (tensors of kind :data:`BIAS`; a norm's β is of kind :data:`NORM`).

    These are what write-ups 000 and 003 leave out. Introduced in ``00_overview``.
    """
    return [p for p in params if p.kind == BIAS]


def select(params: Iterable[Param], component: str | None = None, layer: int | None = None) -> list[Param]:
    """The rows of one component and/or one layer (``layer=None``: any).

    Introduced in ``00_overview``.
    """
    return [p for p in params if (component is None or p.component == component) and (layer is None or p.layer == layer)]


# --- heads on top of BERT (BertForPreTraining, BertForSequenceClassification) --------------------

def pretraining_heads(config: ModelConfig) -> list[Param]:
    """The MLM and NSP heads of ``BertForPreTraining`` (decoder weight tied to the word embeddings).

    Introduced in ``05_pooler_and_heads``. The ``cls.*`` tensors of that class as the BERT family lists them
    (``--class BertForPreTraining``), for a BERT config (its token table tied, as bert-base's is).
    """
    head = registry.FAMILIES["bert"].classes["BertForPreTraining"]
    whole = replace(config, flags={**config.flags, "tie_word_embeddings": True}, model_class="BertForPreTraining")
    return [p for p in head.layout(whole).expand() if p.name.startswith("cls.")]


def classification_head(config: ModelConfig, num_labels: int) -> list[Param]:
    """The linear classifier of ``BertForSequenceClassification`` on the pooled output (C = num_labels).

    Introduced in ``05_pooler_and_heads``. The same tensors as ``--class BertForSequenceClassification``.
    """
    head = registry.FAMILIES["bert"].classes["BertForSequenceClassification"]
    whole = replace(config, sizes={**config.sizes, "C": num_labels}, model_class="BertForSequenceClassification")
    return [p for p in head.layout(whole).expand() if p.name.startswith("classifier.")]
