"""The parameter table: every tensor of a model, with its checkpoint name, shape, component and formula.

Introduced in ``00_overview`` and used by every notebook. Counts are products of shapes taken in
NumPy with ``dtype=object``, so they are exact Python integers for any size (no int64 wrap-around).

Formulas are written as Python expressions over the symbols of :mod:`helpers.config`
(``"L*(4*H**2 + 4*H)"``), so that code can evaluate them (:func:`evaluate`) and check them against
the counted tensors, and are shown to people as ``L·(4H² + 4H)`` (:func:`render`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable

import numpy as np

from .config import ModelConfig

EMBEDDINGS = "embeddings"
ATTENTION = "attention"
FEED_FORWARD = "feed-forward"
LAYER_NORM = "layer norm"
POOLER = "pooler"
LM_HEAD = "lm head"
MLM_HEAD = "MLM head"
NSP_HEAD = "NSP head"
CLASSIFIER = "classifier"


def numel(shape: Iterable[int]) -> int:
    """Number of elements of a tensor of this shape, exact (NumPy object product).

    Introduced in ``00_overview``.
    """
    return int(np.prod(np.array(list(shape), dtype=object), dtype=object))


@dataclass(frozen=True)
class Param:
    """One parameter tensor as the Hugging Face checkpoint stores it."""

    name: str
    shape: tuple[int, ...]
    group: str
    formula: str

    @property
    def count(self) -> int:
        return numel(self.shape)

    @property
    def layer(self) -> int | None:
        """The encoder/decoder layer this tensor belongs to, or None outside the stack."""
        match = re.search(r"\.(\d+)\.", self.name)
        return int(match.group(1)) if match else None


def evaluate(formula: str, config: ModelConfig, **extra: int) -> int:
    """The value of a formula for a configuration (and any extra symbols), in exact integers.

    Introduced in ``01_embeddings``.
    """
    names = {**config.sizes, **extra}
    return int(eval(compile(formula, "<formula>", "eval"), {"__builtins__": {}}, names))


def render(formula: str) -> str:
    """``"L*(4*H**2 + 4*H)"`` -> ``"L·(4H² + 4H)"``: the formula as the notebooks print it.

    Introduced in ``04_layer_norm``.
    """
    text = formula.replace("**2", "²").replace("**3", "³")
    text = re.sub(r"(?<![\w])(\d+)\*(?=[A-Za-z(])", r"\1", text)
    return text.replace("*", "·")


def _p(name: str, shape: tuple[int, ...], group: str, formula: str) -> Param:
    return Param(name, tuple(int(n) for n in shape), group, formula)


# --- BERT and RoBERTa (BertModel / RobertaModel, pooler included) ---------------------------------

def _bert_layer(prefix: str, c: ModelConfig) -> list[Param]:
    H, I = c["H"], c["I"]
    rows = []
    for proj in ("query", "key", "value"):
        rows += [_p(f"{prefix}attention.self.{proj}.weight", (H, H), ATTENTION, "H**2"),
                 _p(f"{prefix}attention.self.{proj}.bias", (H,), ATTENTION, "H")]
    rows += [
        _p(f"{prefix}attention.output.dense.weight", (H, H), ATTENTION, "H**2"),
        _p(f"{prefix}attention.output.dense.bias", (H,), ATTENTION, "H"),
        _p(f"{prefix}attention.output.LayerNorm.weight", (H,), LAYER_NORM, "H"),
        _p(f"{prefix}attention.output.LayerNorm.bias", (H,), LAYER_NORM, "H"),
        _p(f"{prefix}intermediate.dense.weight", (I, H), FEED_FORWARD, "I*H"),
        _p(f"{prefix}intermediate.dense.bias", (I,), FEED_FORWARD, "I"),
        _p(f"{prefix}output.dense.weight", (H, I), FEED_FORWARD, "H*I"),
        _p(f"{prefix}output.dense.bias", (H,), FEED_FORWARD, "H"),
        _p(f"{prefix}output.LayerNorm.weight", (H,), LAYER_NORM, "H"),
        _p(f"{prefix}output.LayerNorm.bias", (H,), LAYER_NORM, "H"),
    ]
    return rows


def _bert(c: ModelConfig) -> list[Param]:
    V, P, T, H = c["V"], c["P"], c["T"], c["H"]
    word = _p("embeddings.word_embeddings.weight", (V, H), EMBEDDINGS, "V*H")
    position = _p("embeddings.position_embeddings.weight", (P, H), EMBEDDINGS, "P*H")
    token_type = _p("embeddings.token_type_embeddings.weight", (T, H), EMBEDDINGS, "T*H")
    norm = [_p("embeddings.LayerNorm.weight", (H,), LAYER_NORM, "H"), _p("embeddings.LayerNorm.bias", (H,), LAYER_NORM, "H")]
    # the same tensors; RobertaEmbeddings registers its position table last
    rows = [word, token_type, *norm, position] if c.model_type == "roberta" else [word, position, token_type, *norm]
    for i in range(c["L"]):
        rows += _bert_layer(f"encoder.layer.{i}.", c)
    rows += [_p("pooler.dense.weight", (H, H), POOLER, "H**2"), _p("pooler.dense.bias", (H,), POOLER, "H")]
    return rows


_BERT_FORMULAS = {
    EMBEDDINGS: "(V + P + T)*H",
    ATTENTION: "L*(4*H**2 + 4*H)",
    FEED_FORWARD: "L*(2*H*I + I + H)",
    LAYER_NORM: "2*H + 4*L*H",
    POOLER: "H**2 + H",
}


# --- GPT-2 (GPT2LMHeadModel; Conv1D weights stored [in, out]) -------------------------------------

def _gpt2(c: ModelConfig) -> list[Param]:
    V, P, H, I = c["V"], c["P"], c["H"], c["I"]
    rows = [_p("transformer.wte.weight", (V, H), EMBEDDINGS, "V*H"),
            _p("transformer.wpe.weight", (P, H), EMBEDDINGS, "P*H")]
    for i in range(c["L"]):
        b = f"transformer.h.{i}."
        rows += [
            _p(f"{b}ln_1.weight", (H,), LAYER_NORM, "H"),
            _p(f"{b}ln_1.bias", (H,), LAYER_NORM, "H"),
            _p(f"{b}attn.c_attn.weight", (H, 3 * H), ATTENTION, "3*H**2"),
            _p(f"{b}attn.c_attn.bias", (3 * H,), ATTENTION, "3*H"),
            _p(f"{b}attn.c_proj.weight", (H, H), ATTENTION, "H**2"),
            _p(f"{b}attn.c_proj.bias", (H,), ATTENTION, "H"),
            _p(f"{b}ln_2.weight", (H,), LAYER_NORM, "H"),
            _p(f"{b}ln_2.bias", (H,), LAYER_NORM, "H"),
            _p(f"{b}mlp.c_fc.weight", (H, I), FEED_FORWARD, "H*I"),
            _p(f"{b}mlp.c_fc.bias", (I,), FEED_FORWARD, "I"),
            _p(f"{b}mlp.c_proj.weight", (I, H), FEED_FORWARD, "I*H"),
            _p(f"{b}mlp.c_proj.bias", (H,), FEED_FORWARD, "H"),
        ]
    rows += [_p("transformer.ln_f.weight", (H,), LAYER_NORM, "H"), _p("transformer.ln_f.bias", (H,), LAYER_NORM, "H")]
    if not c.flags["tie_word_embeddings"]:
        rows.append(_p("lm_head.weight", (V, H), LM_HEAD, "V*H"))
    return rows


def _gpt2_formulas(c: ModelConfig) -> dict[str, str]:
    formulas = {
        EMBEDDINGS: "(V + P)*H",
        ATTENTION: "L*(4*H**2 + 4*H)",
        FEED_FORWARD: "L*(2*H*I + I + H)",
        LAYER_NORM: "4*L*H + 2*H",
    }
    if not c.flags["tie_word_embeddings"]:
        formulas[LM_HEAD] = "V*H"
    return formulas


# --- LLaMA family (LlamaForCausalLM: RMSNorm, SwiGLU, rotary positions, GQA) ---------------------

def _llama(c: ModelConfig) -> list[Param]:
    V, H, I, A, A_kv, d_k = c["V"], c["H"], c["I"], c["A"], c["A_kv"], c["d_k"]
    attention_bias, mlp_bias = c.flags["attention_bias"], c.flags["mlp_bias"]
    rows = [_p("model.embed_tokens.weight", (V, H), EMBEDDINGS, "V*H")]
    for i in range(c["L"]):
        b = f"model.layers.{i}."
        for proj, out, sym in (("q_proj", A * d_k, "A"), ("k_proj", A_kv * d_k, "A_kv"), ("v_proj", A_kv * d_k, "A_kv")):
            rows.append(_p(f"{b}self_attn.{proj}.weight", (out, H), ATTENTION, f"{sym}*d_k*H"))
            if attention_bias:
                rows.append(_p(f"{b}self_attn.{proj}.bias", (out,), ATTENTION, f"{sym}*d_k"))
        rows.append(_p(f"{b}self_attn.o_proj.weight", (H, A * d_k), ATTENTION, "H*A*d_k"))
        if attention_bias:
            rows.append(_p(f"{b}self_attn.o_proj.bias", (H,), ATTENTION, "H"))
        for proj, shape, formula, bias, bias_formula in (
            ("gate_proj", (I, H), "I*H", I, "I"),
            ("up_proj", (I, H), "I*H", I, "I"),
            ("down_proj", (H, I), "H*I", H, "H"),
        ):
            rows.append(_p(f"{b}mlp.{proj}.weight", shape, FEED_FORWARD, formula))
            if mlp_bias:
                rows.append(_p(f"{b}mlp.{proj}.bias", (bias,), FEED_FORWARD, bias_formula))
        rows += [_p(f"{b}input_layernorm.weight", (H,), LAYER_NORM, "H"),
                 _p(f"{b}post_attention_layernorm.weight", (H,), LAYER_NORM, "H")]
    rows.append(_p("model.norm.weight", (H,), LAYER_NORM, "H"))
    if not c.flags["tie_word_embeddings"]:
        rows.append(_p("lm_head.weight", (V, H), LM_HEAD, "V*H"))
    return rows


def _llama_formulas(c: ModelConfig) -> dict[str, str]:
    attention = "2*A*d_k*H + 2*A_kv*d_k*H"
    if c.flags["attention_bias"]:
        attention += " + A*d_k + 2*A_kv*d_k + H"
    feed_forward = "3*H*I" + (" + 2*I + H" if c.flags["mlp_bias"] else "")
    formulas = {
        EMBEDDINGS: "V*H",
        ATTENTION: f"L*({attention})",
        FEED_FORWARD: f"L*({feed_forward})",
        LAYER_NORM: "(2*L + 1)*H",
    }
    if not c.flags["tie_word_embeddings"]:
        formulas[LM_HEAD] = "V*H"
    return formulas


_TABLES = {"bert": _bert, "roberta": _bert, "gpt2": _gpt2, "llama": _llama}
_FORMULAS = {
    "bert": lambda c: dict(_BERT_FORMULAS),
    "roberta": lambda c: dict(_BERT_FORMULAS),
    "gpt2": _gpt2_formulas,
    "llama": _llama_formulas,
}


def param_table(config: ModelConfig) -> list[Param]:
    """Every parameter tensor of the model, in checkpoint order, a tied weight listed once.

    Introduced in ``00_overview``.
    """
    return _TABLES[config.model_type](config)


def group_formulas(config: ModelConfig) -> dict[str, str]:
    """The symbolic count of each component, as evaluable expressions (see :func:`render`).

    Introduced in ``01_embeddings``.
    """
    return _FORMULAS[config.model_type](config)


def total(params: Iterable[Param]) -> int:
    """Sum of the tensors' counts (exact).

    Introduced in ``00_overview``.
    """
    return sum((p.count for p in params), 0)


def group_counts(params: Iterable[Param]) -> dict[str, int]:
    """Count per component, in the order components first appear.

    Introduced in ``03_feed_forward``.
    """
    counts: dict[str, int] = {}
    for p in params:
        counts[p.group] = counts.get(p.group, 0) + p.count
    return counts


def under(params: Iterable[Param], prefix: str) -> list[Param]:
    """The rows whose checkpoint name starts with ``prefix``, renamed relative to it.

    ``under(param_table(c), "embeddings.")`` names its rows ``word_embeddings.weight`` ...: the names
    a component built alone (``build_component(BertEmbeddings, c)``) gives its parameters, so the
    two can be compared with ``torch_ref.matches``. Introduced in ``01_embeddings``. Used again in 02 and 03.
    """
    return [Param(p.name[len(prefix):], p.shape, p.group, p.formula) for p in params if p.name.startswith(prefix)]


def is_norm(param: Param) -> bool:
    """True for a LayerNorm/RMSNorm tensor (γ or β), whatever component the engine files it under.

    What :func:`linear_biases` leaves out (a norm's β is no linear bias). Introduced in ``02_multi_head_attention``.
    """
    return re.search(r"(LayerNorm|layernorm|\bln_\w+|\bnorm)\.(weight|bias)$", param.name) is not None


def linear_biases(params: Iterable[Param]) -> list[Param]:
    """The bias vectors of the linear layers (every ``.bias`` that is not a LayerNorm's β).

    These are what write-ups 000 and 003 leave out. Introduced in ``00_overview``.
    """
    return [p for p in params if p.name.endswith("bias") and len(p.shape) == 1 and not is_norm(p)]


def select(params: Iterable[Param], group: str | None = None, layer: int | None = None) -> list[Param]:
    """The rows of one component and/or one layer (``layer=None``: any).

    Introduced in ``00_overview``.
    """
    return [p for p in params if (group is None or p.group == group) and (layer is None or p.layer == layer)]


# --- heads on top of BERT (BertForPreTraining, BertForSequenceClassification) --------------------

def pretraining_heads(config: ModelConfig) -> list[Param]:
    """The MLM and NSP heads of ``BertForPreTraining`` (decoder weight tied to the word embeddings).

    Introduced in ``05_pooler_and_heads``.
    """
    V, H = config["V"], config["H"]
    return [
        _p("cls.predictions.bias", (V,), MLM_HEAD, "V"),
        _p("cls.predictions.transform.dense.weight", (H, H), MLM_HEAD, "H**2"),
        _p("cls.predictions.transform.dense.bias", (H,), MLM_HEAD, "H"),
        _p("cls.predictions.transform.LayerNorm.weight", (H,), MLM_HEAD, "H"),
        _p("cls.predictions.transform.LayerNorm.bias", (H,), MLM_HEAD, "H"),
        _p("cls.seq_relationship.weight", (2, H), NSP_HEAD, "2*H"),
        _p("cls.seq_relationship.bias", (2,), NSP_HEAD, "2"),
    ]


def classification_head(config: ModelConfig, num_labels: int) -> list[Param]:
    """The linear classifier of ``BertForSequenceClassification`` on the pooled output (C = num_labels).

    Introduced in ``05_pooler_and_heads``.
    """
    H = config["H"]
    return [_p("classifier.weight", (num_labels, H), CLASSIFIER, "C*H"),
            _p("classifier.bias", (num_labels,), CLASSIFIER, "C")]
