"""Hypothesis strategies for random configs of every model type, read from one table (kept small so torch builds fast).

:data:`TABLE` has one row per family of ``helpers.families.FAMILIES`` (``tests/test_families.py`` fails when one is
missing), a :class:`Row` of three columns, from which the three dicts the tests import are built:

* ``tidy``: how to draw a config transformers builds and runs (:data:`STRATEGIES`, the property tests');
* ``wide``: how to draw one from the whole space transformers' config class accepts, as users write them: aliases,
  absent and null keys, head_dim not H/A, layer_types, depths 0 to 3, keys that change no parameter, configs
  transformers refuses included (:data:`WIDE`, ``tests/test_fuzz.py``'s);
* ``tiny``: one small real config, run on the CPU (training state, KV cache; :data:`TINY`).

A column is a list of **steps**, run in order on a config that starts as ``{"model_type": ...}``. A step is either a
dict of **fields**, ``key: spec``, drawn in the order written, or a function ``(draw, config)`` that changes the config:
``like("llama")`` (start from another family's config, under this model_type), ``TIDY`` (this family's tidy config),
``widen(...)``, ``maybe(...)``, ``either(...)``, ``rename(...)``, ``odd_heads(n)``. A spec is

* a strategy (drawn), a plain value (written), or a function of the config drawn so far returning either one
  (``times(A, 1, 4, 2)``: A·d·2 with d drawn from 1..4);
* ``opt(spec)``: half the time (else the key is left as it is); ``put(spec)``: absent, null or a value;
  ``sub(spec)``: a sub-config absent, null or given; ``when(condition, spec)``; ``rarely(n, key=spec, ...)``: fields
  each drawn one time in n;
* ``DROP``: the key removed.

A key that is a :class:`Var` (``A``, ``A_KV``, ``L``, ``E`` ...) is a variable of the draw, dropped from the config at
the end; a key that is a tuple of names writes the value under one of them, drawn (aliases). Values are drawn in the
order written: reordering a row keeps its space but changes the configs the derandomized fuzz test draws.

To add a family: one row ``"model_type": Row(tidy=[...], wide=[...], tiny={...})``, starting from the row of the
family it resembles (``like("llama")``; ``*DECODER``, the keys every LLaMA-like decoder shares, drawn wide).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from hypothesis import strategies as st

# --- the language of a row ----------------------------------------------------------------------------------------


class Var:
    """A variable of a draw (a config key that is dropped at the end): ``{A: st.integers(1, 4), "n_head": A}``."""

    def __init__(self, name: str):
        self.name = name

    def __call__(self, config: dict) -> Any:
        return config[self]

    def __repr__(self) -> str:
        return self.name


# the heads A (A_KV of them key/value heads), the head's width d, the width H, the depth L, the experts E in g groups
# (k_g kept), the linear attention's key heads G_k, a patch p, a drawn sub-config, a drawn choice
A, A_KV, D, E, G, H, K_G, G_K, L, P, SUB, HOW = map(Var, "A A_kv d E g H k_g G_k L p sub how".split())
SKIP = object()  # a spec's value: leave the key as it is (absent if it was)
DROP = object()  # a spec's value: remove the key
Spec = Any  # a strategy, a plain value, or a function of the config drawn so far returning either
Step = dict | Callable[[Callable, dict], None]


def _strategy(spec: Spec, config: dict) -> st.SearchStrategy:
    value = spec(config) if callable(spec) else spec
    return value if isinstance(value, st.SearchStrategy) else st.just(value)


def opt(spec: Spec) -> Spec:
    """Half the time (a boolean drawn first); else the key is left as it is."""
    return lambda c: st.booleans().flatmap(lambda yes: _strategy(spec, c) if yes else st.just(SKIP))


def put(spec: Spec, null: bool = True) -> Spec:
    """Absent, null (where ``null``) or a value: how a user writes an optional key."""
    fates = ("absent", "null", "value") if null else ("absent", "value")
    return lambda c: st.sampled_from(fates).flatmap(
        lambda fate: st.just(SKIP) if fate == "absent" else st.none() if fate == "null" else _strategy(spec, c))


def sub(spec: Spec) -> Spec:
    """A composite's sub-config: drawn, then absent, null (every default) or given (3 times in 5)."""
    return lambda c: _strategy(spec, c).flatmap(lambda value: st.sampled_from(("absent", "null", "value", "value", "value"))
                                                .map(lambda fate: {"absent": SKIP, "null": None}.get(fate, value)))


def rarely(n: int, **fields: Spec) -> dict:
    """Fields each drawn one time in n (an integer drawn first), else left as they are."""
    return {key: (lambda c, spec=spec: st.integers(0, n - 1).flatmap(lambda i: st.just(SKIP) if i else _strategy(spec, c)))
            for key, spec in fields.items()}


def when(condition: Callable[[dict], Any], spec: Spec) -> Spec:
    """``spec`` where the config drawn so far meets ``condition``, else the key is left as it is."""
    return lambda c: _strategy(spec, c) if condition(c) else SKIP


def times(key: str | Var, low: int, high: int, by: int = 1) -> Spec:
    """A multiple of a value drawn before: ``config[key]·d·by``, d from low to high."""
    return lambda c: st.integers(low, high).map(lambda d: c[key] * d * by)


def even(low: int, high: int) -> st.SearchStrategy:
    return st.integers(low, high).map(lambda d: 2 * d)


def per_layer(values: st.SearchStrategy, wide: bool = False, layers: str | Var = "num_hidden_layers") -> Spec:
    """A list of one value per layer (``wide``: one too many, 1 time in 4)."""
    def spec(c: dict) -> st.SearchStrategy:
        lengths = st.sampled_from([c[layers]] * 3 + [c[layers] + 1]) if wide else st.just(c[layers])
        return lengths.flatmap(lambda n: st.lists(values, min_size=n, max_size=n))
    return spec


def family(name: str, wide: bool = False, typed: bool = True) -> Spec:
    """Another family's config (its tidy one, or its wide one), as a sub-config (``typed``: its model_type kept)."""
    return lambda c: (WIDE if wide else STRATEGIES)[name].map(
        lambda config: config if typed else {k: v for k, v in config.items() if k != "model_type"})


def _fields(draw, fields: dict, config: dict) -> None:
    for key, spec in fields.items():
        value = draw(_strategy(spec, config))
        if value is SKIP:
            continue
        if isinstance(key, tuple):  # aliases: the value under one of them
            key = draw(st.sampled_from(key))
        if value is DROP:
            config.pop(key, None)
        else:
            config[key] = value


@st.composite
def build(draw, steps: list[Step], model_type: str | None = None) -> dict:
    """A config drawn by ``steps`` (see the module's docstring), its variables dropped."""
    config = {} if model_type is None else {"model_type": model_type}
    for step in steps:
        if callable(step):
            step(draw, config)
        else:
            _fields(draw, step, config)
    return {key: value for key, value in config.items() if not isinstance(key, Var)}


def like(name: str | None = None, wide: bool = False) -> Step:
    """Start from another family's config (tidy, or ``wide``), under this model_type; no name: this family's."""
    def step(draw, config: dict) -> None:
        model_type = config["model_type"]
        config.update(draw((WIDE if wide else STRATEGIES)[name or model_type]))
        config["model_type"] = model_type
    return step


TIDY = like()  # a wide column's first step: this family's tidy config (then widened)


def maybe(*alternatives: dict) -> Step:
    """The first dict of fields half the time, else the next one half the time ..., else none of them."""
    def step(draw, config: dict) -> None:
        for fields in alternatives:
            if draw(st.booleans()):
                return _fields(draw, fields, config)
    return step


def either(first: dict, second: dict) -> Step:
    """The first dict of fields half the time, else the second."""
    return lambda draw, config: _fields(draw, first if draw(st.booleans()) else second, config)


def rename(aliases: dict[str, str]) -> Step:
    """Half the time every key under its alias (transformers' attribute_map accepts them)."""
    def step(draw, config: dict) -> None:
        if draw(st.booleans()):
            for key, alias in aliases.items():
                config[alias] = config.pop(key)
    return step


def odd_heads(n: int) -> Step:
    """One time in n, 1 to 5 heads (under whichever name the config uses) that need not divide the width."""
    def step(draw, config: dict) -> None:
        if draw(st.integers(0, n - 1)) == 0:
            config[next(k for k in ("n_head", "n_heads", "num_attention_heads") if k in config)] = draw(st.integers(1, 5))
    return step


def widen(aliases: dict[str, str] | None = None, depth: str | tuple[str, ...] = "num_hidden_layers",
          noise: dict | None = None) -> Step:
    """The config as users write it: each key kept, left out (transformers' default), null, or under its alias;
    depths 0 to 3; plus keys from ``noise`` (key: strategy of its value) that change no parameter, or should not."""
    aliases, depths, noise = aliases or {}, depth if isinstance(depth, tuple) else (depth,), noise or {}

    def step(draw, config: dict) -> None:
        for key in depths:
            if key in config:
                config[key] = draw(st.integers(0, 3))
        for key in [k for k in config if isinstance(k, str) and k != "model_type"]:
            fate = draw(st.sampled_from(["keep"] * 24 + ["absent"] * 2 + ["null"] + ["alias"] * 3))
            if fate == "absent":
                del config[key]
            elif fate == "null":
                config[key] = None
            elif fate == "alias" and key in aliases:
                config[aliases[key]] = config.pop(key)
                if draw(st.integers(0, 5)) == 0:  # both names, the same value or another one
                    config[key] = draw(st.sampled_from([config[aliases[key]], draw(st.integers(1, 4))]))
        _fields(draw, rarely(4, **noise), config)
        if "layer_types" in noise and draw(st.booleans()):  # one type per layer (of the depth given, or a guess)
            layers = next((config[k] for k in depths if config.get(k) is not None), 2)
            config["layer_types"] = draw(st.lists(st.sampled_from(["full_attention", "sliding_attention",
                                                                   "chunked_attention"]), min_size=layers, max_size=layers))
    return step


def text_config(wide: bool = False) -> Step:
    """Half the time the text keys under ``text_config`` (``wide``: absent, null or given), else flat as published."""
    def step(draw, config: dict) -> None:
        if draw(st.booleans()):
            keys = [k for k in config if isinstance(k, str) and k not in ("model_type", "vision_config")]
            text = {k: config.pop(k) for k in keys}
            _fields(draw, {"text_config": sub(text) if wide else text}, config)
    return step


class Row(NamedTuple):
    """A row of :data:`TABLE`: the steps of a tidy config, the steps of a wide one, a tiny config."""

    tidy: list[Step]
    wide: list[Step]
    tiny: dict


# --- what several rows share -------------------------------------------------------------------------------------

BOOL = st.booleans()
WINDOW = st.integers(2, 8)  # a window (or a chunk) S can pass
HEAD_DIM = even(1, 4)  # the defaults (128 ...) are too big for these tests; even: rotary pairs
GQA = {A_KV: st.integers(1, 3), A: times(A_KV, 1, 3)}  # A_kv key/value heads, A = A_kv·g query heads
KV = lambda c: c.get("num_key_value_heads") or c["num_attention_heads"]  # said where the default (8) is too many
PAD = lambda c: st.one_of(st.none(), st.integers(0, c["vocab_size"] - 1))  # its default lies outside the table
WIDE_PAD = lambda c: st.integers(0, c["vocab_size"])  # a padding index anywhere, one past the table included
FREE_WIDTH = {"hidden_size": when(lambda c: "head_dim" in c, opt(st.integers(1, 24)))}  # head_dim given: H need not be A·d_k
FULL_OR_SLIDING = st.sampled_from(["full_attention", "sliding_attention"])
SOME_LAYERS = lambda c: st.lists(st.integers(0, c["num_hidden_layers"] - 1), max_size=c["num_hidden_layers"], unique=True)
WIDE_SOME_LAYERS = lambda c: st.lists(st.integers(0, max(c["num_hidden_layers"], 1)), max_size=3, unique=True)
EXPERTS = {"num_local_experts": st.integers(1, 4), "num_experts_per_tok": lambda c: st.integers(1, c["num_local_experts"])}
# E experts in g groups: g·(1..3) (groups that divide them) or 1..6 (that need not)
GROUPED_E = lambda c: st.tuples(st.integers(1, 3), st.integers(1, 6)).flatmap(
    lambda t: st.sampled_from([c["n_group"] * t[0], t[1]]))
NULL_OR_ABSENT = st.booleans().map(lambda null: None if null else DROP)


def wide_experts(names: str | tuple[str, ...], low: int) -> dict:
    """E experts (low to 4; 0 or less: every layer dense) under one of ``names``, k per token 0, 1, E (1 at least) or
    E + 1 (more than E: it builds, cannot run)."""
    return {E: st.integers(low, 4), names: E, "num_experts_per_tok": lambda c: st.sampled_from([0, 1, max(c[E], 1), c[E] + 1])}


# null refused by the config class (int and bool fields): left out 3 times in 4 (so that more configs build), else kept
NULL_MOSTLY_LEFT_OUT = {key: when(lambda c, key=key: c.get(key, 0) is None, st.integers(0, 3).map(lambda i: DROP if i else SKIP))
                        for key in ("num_key_value_heads", "head_dim", "tie_word_embeddings")}

# keys many configs carry that change no parameter: the window of a cache, the dtype, the generation switches
_WINDOW = st.one_of(st.none(), st.integers(1, 8))
COMMON_NOISE = {
    "use_cache": st.booleans(),
    "sliding_window": _WINDOW,
    "attention_chunk_size": _WINDOW,
    "torch_dtype": st.sampled_from(["float32", "bfloat16", None]),
    "layer_norm_eps": st.sampled_from([1e-5, 1e-12]),
    "initializer_range": st.sampled_from([0.02, 0.5]),
    "bos_token_id": st.one_of(st.none(), st.integers(0, 3)),
    "eos_token_id": st.one_of(st.none(), st.integers(0, 3)),
}
ENCODER_NOISE = {**COMMON_NOISE, "pad_token_id": st.one_of(st.none(), st.integers(0, 4)),
                 "position_embedding_type": st.sampled_from(["absolute", None]), "is_decoder": st.booleans(),
                 "add_cross_attention": st.booleans()}

# --- the decoders' whole space (most decoders' wide column starts with it) -------------------------------------------
# What users write: a key left out, written null or given a value; key/value heads that need not divide the query heads
# (transformers builds such a model and fails only in its forward pass); head_dim null or free of H/A; heads that need
# not divide the width; depths 0 to 3; windows, chunks and per-layer attention types (they change the cache, not a
# tensor); aliases of transformers' attribute_map; keys that change nothing.

# the families whose head_dim may be 0: Mistral reads it as H // A, Gemma 2 builds its attention 0 wide (its rotary
# embedding H // A); in the others transformers refuses it (the engine must then refuse it too)
ZERO_HEAD = ("mistral", "gemma2", "llama4_text")
LAYER_TYPES = ("full_attention", "sliding_attention", "chunked_attention", "attention", "moe", "window_attention")
DECODER = [
    {"num_attention_heads": st.integers(1, 4), "num_hidden_layers": st.integers(0, 3), "vocab_size": st.integers(1, 48),
     "hidden_size": st.integers(1, 24), "intermediate_size": st.integers(1, 32)},
    {"hidden_size": opt(times("num_attention_heads", 1, 4, 2)),  # a tidy width half the time: A·d with d even
     "num_key_value_heads": put(lambda c: st.one_of(
         st.sampled_from([d for d in range(1, c["num_attention_heads"] + 1) if c["num_attention_heads"] % d == 0]),
         st.integers(1, 4))),
     "head_dim": put(lambda c: st.one_of(st.integers(0 if c["model_type"] in ZERO_HEAD else 1, 8), st.sampled_from([2, 4, 6]))),
     "tie_word_embeddings": put(BOOL),
     "sliding_window": put(st.integers(1, 8)),  # keys that change no tensor: the window, the chunk, the layers' types
     **rarely(4, attention_chunk_size=put(st.integers(1, 8))),
     **rarely(3, layer_types=per_layer(st.sampled_from(LAYER_TYPES[:3] * 4 + LAYER_TYPES[3:]), wide=True)),
     **rarely(4, use_cache=BOOL, rope_theta=st.sampled_from([10000.0, 1e6]), max_position_embeddings=st.integers(1, 64),
              rms_norm_eps=1e-5, attention_dropout=0.0, bos_token_id=st.integers(0, 3))},
]
QWEN_WINDOW = {"use_sliding_window": put(BOOL, null=False), "max_window_layers": put(st.integers(0, 4), null=False)}


# --- the families' own steps ---------------------------------------------------------------------------------------

def _bert(low: int) -> list[Step]:
    """BERT's keys; RoBERTa's padding index 1 must lie inside its tables (low = 2)."""
    return [{D: st.integers(1, 8), A: st.integers(1, 4), "vocab_size": st.integers(low, 64), "hidden_size": lambda c: c[A] * c[D],
             "num_attention_heads": A, "num_hidden_layers": st.integers(1, 3), "intermediate_size": st.integers(1, 40),
             "max_position_embeddings": st.integers(low, 40), "type_vocab_size": st.integers(1, 3)}]


BERT_WIDE = [TIDY, odd_heads(5), widen(noise={**ENCODER_NOISE, "embedding_size": st.integers(1, 8),
                                              "head_dim": st.integers(1, 8)})]


# ELECTRA's (or ALBERT's) factorised embeddings: d_e = H or not
ELECTRA = [{A: st.integers(1, 4), H: times(A, 1, 8), "vocab_size": st.integers(1, 64),
            "embedding_size": lambda c: st.integers(1, 24).flatmap(lambda d: st.sampled_from([c[H], d])),
            "hidden_size": H, "num_attention_heads": A, "num_hidden_layers": st.integers(1, 4),
            "intermediate_size": st.integers(1, 40), "max_position_embeddings": st.integers(1, 40),
            "type_vocab_size": st.integers(1, 3)}]


def _qwen(head_dim: dict) -> list[Step]:
    """Qwen2's (or Qwen3's) dialect: GQA (key/value heads null: A), a head_dim that may leave H undivided, windows on
    the layers from max_window_layers, or a drawn layer_types, or none."""
    return [{**GQA, "vocab_size": st.integers(1, 64), "hidden_size": times(A, 1, 4, 2), "num_attention_heads": A,
             "num_key_value_heads": lambda c: st.sampled_from([c[A_KV], None]), "num_hidden_layers": st.integers(1, 3),
             "intermediate_size": st.integers(1, 40), "tie_word_embeddings": BOOL, "use_sliding_window": BOOL,
             "sliding_window": st.one_of(WINDOW, st.none()), "max_window_layers": st.integers(0, 3), **head_dim},
            {**FREE_WIDTH, "layer_types": when(lambda c: c["use_sliding_window"] and c["sliding_window"],
                                               opt(per_layer(FULL_OR_SLIDING)))}]


def _mrope(half: int) -> st.SearchStrategy:
    """Qwen2.5-VL's rope_scaling: d_k/2 = ``half`` rotary pairs split into three M-RoPE sections."""
    return st.integers(0, half).flatmap(lambda first: st.integers(0, half - first).map(
        lambda second: {"type": "mrope", "mrope_section": [first, second, half - first - second]}))


# the vision towers (sub-configs, no family of their own): SigLIP (Gemma 3's), Qwen2.5-VL's, Llama 4's
SIGLIP = [{"model_type": "siglip_vision_model", A: st.integers(1, 3), P: st.integers(1, 4), "hidden_size": times(A, 1, 4),
           "num_attention_heads": A, "intermediate_size": st.integers(1, 16), "num_hidden_layers": st.integers(0, 2),
           "num_channels": st.integers(1, 3), "patch_size": P, "image_size": times(P, 1, 4), "vision_use_head": BOOL}]
QWEN_VISION = [{A: st.integers(1, 2), "depth": st.integers(0, 2), "hidden_size": times(A, 1, 4),
                "intermediate_size": st.integers(1, 12), "num_heads": A, "in_channels": st.integers(1, 3),
                "patch_size": st.integers(1, 3), "temporal_patch_size": st.integers(1, 2),
                "spatial_merge_size": st.integers(1, 2), "out_hidden_size": st.integers(1, 12)}]
LLAMA4_VISION = [{"model_type": "llama4_vision_model", A: st.integers(1, 3), P: st.integers(1, 4),
                  "hidden_size": times(A, 1, 3, 2), "num_attention_heads": A, "intermediate_size": st.integers(1, 32),
                  "num_hidden_layers": st.integers(0, 2), "patch_size": P, "image_size": times(P, 1, 4),
                  "num_channels": st.integers(1, 3), "vision_output_dim": st.integers(1, 12),
                  "projector_input_dim": st.integers(1, 12), "projector_output_dim": st.integers(1, 12)}]

LLAMA = {**GQA, "vocab_size": st.integers(1, 64), "hidden_size": times(A, 1, 4, 2), "num_attention_heads": A,
         "num_key_value_heads": A_KV, "num_hidden_layers": st.integers(1, 3), "intermediate_size": st.integers(1, 40),
         "tie_word_embeddings": BOOL, "attention_bias": BOOL, "mlp_bias": BOOL, "head_dim": opt(HEAD_DIM)}
NO_BIAS = {"attention_bias": DROP, "mlp_bias": DROP}  # a LLaMA-like config class with no bias switches
GPT2_ALIASES = {"n_embd": "hidden_size", "n_layer": "num_hidden_layers", "n_head": "num_attention_heads",
                "n_positions": "max_position_embeddings"}
DISTILBERT_ALIASES = {"dim": "hidden_size", "n_heads": "num_attention_heads", "n_layers": "num_hidden_layers"}
T5_ALIASES = {"d_model": "hidden_size", "num_heads": "num_attention_heads", "num_layers": "num_hidden_layers",
              "d_kv": "head_dim"}
QWEN3_NEXT_KINDS = st.sampled_from(["linear_attention", "full_attention"])
GATED_DELTANET = ["linear_attention"] * 4 + ["full_attention"] * 4 + ["mamba", "attention", "sliding_attention", "moe"]


# --- the table: one row per model_type of helpers.families.FAMILIES ------------------------------------------------

TABLE: dict[str, Row] = {
    # BERT / RoBERTa / XLM-RoBERTa; wide: heads that may not divide H, absent and null keys, a padding index anywhere
    "bert": Row(
        tidy=_bert(1), wide=BERT_WIDE,
        tiny={"model_type": "bert", "vocab_size": 40, "hidden_size": 16, "num_attention_heads": 4,
              "num_hidden_layers": 2, "intermediate_size": 20, "max_position_embeddings": 8, "type_vocab_size": 2}),
    "roberta": Row(
        tidy=_bert(2), wide=BERT_WIDE,
        tiny={"model_type": "roberta", "vocab_size": 40, "hidden_size": 16, "num_attention_heads": 4,
              "num_hidden_layers": 2, "intermediate_size": 20, "max_position_embeddings": 10, "type_vocab_size": 1}),
    "xlm-roberta": Row(
        tidy=_bert(2), wide=BERT_WIDE,
        tiny={"model_type": "xlm-roberta", "vocab_size": 40, "hidden_size": 16, "num_attention_heads": 4,
              "num_hidden_layers": 2, "intermediate_size": 20, "max_position_embeddings": 10, "type_vocab_size": 1}),
    # GPT-2: n_inner or not (4H), tied or not, under its own names or the aliases of GPT2Config's attribute_map;
    # wide: those aliases one by one, heads that may not divide n_embd, switches
    "gpt2": Row(
        tidy=[{D: st.integers(1, 8), A: st.integers(1, 4), "vocab_size": st.integers(1, 64), "n_embd": lambda c: c[A] * c[D],
               "n_head": A, "n_layer": st.integers(1, 3), "n_positions": st.integers(1, 40), "tie_word_embeddings": BOOL,
               "n_inner": opt(st.integers(1, 40))}, rename(GPT2_ALIASES)],
        wide=[TIDY, odd_heads(5), widen(GPT2_ALIASES, ("n_layer", "num_hidden_layers"), {
            **COMMON_NOISE, "scale_attn_by_inverse_layer_idx": BOOL, "reorder_and_upcast_attn": BOOL,
            "n_ctx": st.integers(1, 40), "summary_type": st.sampled_from(["cls_index", "last"]), "add_cross_attention": BOOL,
            "layer_types": st.none()})],
        tiny={"model_type": "gpt2", "vocab_size": 40, "n_embd": 12, "n_head": 3, "n_layer": 2, "n_positions": 8}),
    # LLaMA: GQA (key/value heads absent: A), a head_dim of its own or H/A, the bias switches
    "llama": Row(
        tidy=[LLAMA, {"num_key_value_heads": opt(DROP)}],
        wide=[*DECODER, {"attention_bias": put(BOOL), "mlp_bias": put(BOOL)}],
        tiny={"model_type": "llama", "vocab_size": 40, "hidden_size": 16, "num_attention_heads": 4,
              "num_key_value_heads": 2, "num_hidden_layers": 2, "intermediate_size": 20, "attention_bias": True}),
    # Mistral: LLaMA's shapes in Mistral's dialect, with a sliding window short enough for S to pass it (or none)
    "mistral": Row(
        tidy=[like("llama"), {**NO_BIAS, "num_key_value_heads": KV, "sliding_window": st.one_of(WINDOW, st.none())}],
        wide=DECODER,
        tiny={"model_type": "mistral", "vocab_size": 40, "hidden_size": 16, "num_attention_heads": 4,
              "num_key_value_heads": 2, "num_hidden_layers": 2, "intermediate_size": 20, "sliding_window": 4}),
    # Mixtral: LLaMA's shapes (no bias switches), E experts, k of them per token; wide: E 0 included, or its alias
    "mixtral": Row(
        tidy=[like("llama"), {**NO_BIAS, "num_key_value_heads": KV, **EXPERTS}],
        wide=[*DECODER, wide_experts(("num_local_experts", "num_experts"), 0)],
        tiny={"model_type": "mixtral", "vocab_size": 40, "hidden_size": 16, "num_attention_heads": 4,
              "num_key_value_heads": 2, "num_hidden_layers": 2, "intermediate_size": 20, "num_local_experts": 4,
              "num_experts_per_tok": 2}),
    # Gemma: head_dim sizes the heads on its own (H need not be A·d_k, nor divisible by A); tied by default
    "gemma": Row(
        tidy=[{**GQA, "vocab_size": st.integers(1, 64), "hidden_size": st.integers(1, 24), "num_attention_heads": A,
               "num_key_value_heads": A_KV, "head_dim": HEAD_DIM, "num_hidden_layers": st.integers(1, 3),
               "intermediate_size": st.integers(1, 40), "attention_bias": BOOL, "tie_word_embeddings": opt(BOOL)}],
        wide=[*DECODER, {"attention_bias": put(BOOL)}],
        tiny={"model_type": "gemma", "vocab_size": 40, "hidden_size": 12, "num_attention_heads": 4,
              "num_key_value_heads": 2, "head_dim": 6, "num_hidden_layers": 2, "intermediate_size": 20}),
    # Gemma 2: Gemma's shapes (but A must divide H here: Gemma2Config checks it), a window S can pass; wide: softcaps
    "gemma2": Row(
        tidy=[{**GQA, "vocab_size": st.integers(1, 64), "hidden_size": times(A, 1, 6), "num_attention_heads": A,
               "num_key_value_heads": A_KV, "head_dim": HEAD_DIM, "num_hidden_layers": st.integers(1, 4),
               "intermediate_size": st.integers(1, 40), "attention_bias": BOOL, "sliding_window": WINDOW,
               "tie_word_embeddings": opt(BOOL)}],
        wide=[*DECODER, {"attention_bias": put(BOOL), **rarely(4, query_pre_attn_scalar=st.integers(1, 8),
                                                                final_logit_softcapping=None,
                                                                attn_logit_softcapping=st.floats(1, 50))}],
        tiny={"model_type": "gemma2", "vocab_size": 40, "hidden_size": 12, "num_attention_heads": 4,
              "num_key_value_heads": 2, "head_dim": 6, "num_hidden_layers": 3, "intermediate_size": 20,
              "sliding_window": 4}),
    # GPT-NeoX / Pythia: fused QKV, biases switchable, parallel residual or not, untied by default; wide: the rotary share
    "gpt_neox": Row(
        tidy=[{A: st.integers(1, 4), "vocab_size": st.integers(1, 64), "hidden_size": times(A, 1, 8), "num_attention_heads": A,
               "num_hidden_layers": st.integers(1, 3), "intermediate_size": st.integers(1, 40), "attention_bias": BOOL,
               "use_parallel_residual": BOOL, "tie_word_embeddings": opt(BOOL)}],
        wide=[TIDY, odd_heads(5), {"max_position_embeddings": st.integers(1, 40)}, widen(noise={
            **COMMON_NOISE, "rotary_pct": st.sampled_from([0.25, 1.0]), "partial_rotary_factor": st.sampled_from([0.25, 1.0]),
            "rotary_emb_base": st.integers(100, 10000), "layer_types": st.none()})],
        tiny={"model_type": "gpt_neox", "vocab_size": 40, "hidden_size": 16, "num_attention_heads": 2,
              "num_hidden_layers": 2, "intermediate_size": 20}),
    # Qwen2: one global layer, then one windowed (max_window_layers = 1)
    "qwen2": Row(
        tidy=_qwen({"head_dim": opt(HEAD_DIM)}),
        wide=[*DECODER, QWEN_WINDOW],
        tiny={"model_type": "qwen2", "vocab_size": 40, "hidden_size": 16, "num_attention_heads": 4,
              "num_key_value_heads": 2, "num_hidden_layers": 2, "intermediate_size": 20, "use_sliding_window": True,
              "sliding_window": 4, "max_window_layers": 1}),
    # Qwen3: Qwen2's, with the attention bias switch and a head_dim always said (its default, 128, is too big here);
    # tiny: head_dim 6 against H/A = 4
    "qwen3": Row(
        tidy=_qwen({"attention_bias": BOOL, "head_dim": HEAD_DIM}),
        wide=[*DECODER, {**QWEN_WINDOW, "attention_bias": put(BOOL)}],
        tiny={"model_type": "qwen3", "vocab_size": 40, "hidden_size": 16, "num_attention_heads": 4,
              "num_key_value_heads": 2, "head_dim": 6, "num_hidden_layers": 2, "intermediate_size": 20}),
    # Qwen3-MoE: Qwen3's attention (no window: refused) with E experts (0: all dense), k per token, some layers kept
    # dense; wide: E 0 or less (or its alias), k 0 included, experts 0 wide, the sparse step.
    # tiny: layer 0 dense (mlp_only_layers), layers 1 and 2 sparse, head_dim 6 against H/A = 4; I_e = 8 (transformers'
    # default grouped_mm experts want rows of a multiple of 16 bytes on the CPU)
    "qwen3_moe": Row(
        tidy=[like("qwen3"), {"use_sliding_window": DROP, "sliding_window": DROP, "max_window_layers": DROP,
                              "layer_types": DROP, "num_key_value_heads": KV, "num_experts": st.integers(0, 4),
                              "num_experts_per_tok": lambda c: st.integers(1, max(c["num_experts"], 1)),
                              "moe_intermediate_size": st.integers(1, 12), "decoder_sparse_step": st.integers(1, 2),
                              "mlp_only_layers": SOME_LAYERS, "norm_topk_prob": BOOL}],
        wide=[like("qwen3", wide=True), {**wide_experts(("num_experts", "num_local_experts"), -1),
                                         "moe_intermediate_size": st.integers(0, 12),
                                         "decoder_sparse_step": put(st.integers(1, 3), null=False),
                                         "mlp_only_layers": put(WIDE_SOME_LAYERS), "norm_topk_prob": put(BOOL, null=False)}],
        tiny={"model_type": "qwen3_moe", "vocab_size": 40, "hidden_size": 16, "num_attention_heads": 4,
              "num_key_value_heads": 2, "head_dim": 6, "num_hidden_layers": 3, "intermediate_size": 20,
              "moe_intermediate_size": 8, "num_experts": 4, "num_experts_per_tok": 2, "mlp_only_layers": [0],
              "norm_topk_prob": True}),
    # Phi-3: fused projections, a padding row in the token table (its default, 32000, lies outside these tables), one
    # window on every layer or none
    "phi3": Row(
        tidy=[{**GQA, "vocab_size": st.integers(1, 64), "pad_token_id": PAD, "hidden_size": times(A, 1, 4, 2),
               "num_attention_heads": A, "num_key_value_heads": A_KV, "num_hidden_layers": st.integers(1, 3),
               "intermediate_size": st.integers(1, 40), "tie_word_embeddings": BOOL,
               "sliding_window": st.one_of(WINDOW, st.none()), "head_dim": opt(HEAD_DIM)},
              {**FREE_WIDTH, "num_key_value_heads": opt(DROP)}],
        wide=[*DECODER, {"pad_token_id": lambda c: st.one_of(st.none(), st.integers(0, c["vocab_size"] - 1),
                                                             st.just(c["vocab_size"]))}],
        tiny={"model_type": "phi3", "vocab_size": 40, "pad_token_id": 39, "hidden_size": 16, "num_attention_heads": 4,
              "num_key_value_heads": 2, "num_hidden_layers": 2, "intermediate_size": 20, "sliding_window": 4}),
    # OPT: a word_embed_proj_dim d_e that may differ from H, pre- or post-LayerNorm, biases and norm gains switchable;
    # tiny: d_e = 8 against H = 16 (project_in, project_out), post-LayerNorm as opt-350m
    "opt": Row(
        tidy=[{A: st.integers(1, 4), H: times(A, 1, 8), "vocab_size": st.integers(2, 64),  # the padding index 1 inside
               "hidden_size": H, "num_attention_heads": A, "num_hidden_layers": st.integers(1, 3),
               "ffn_dim": st.integers(1, 40), "max_position_embeddings": st.integers(1, 40),
               "word_embed_proj_dim": lambda c: st.integers(1, 24).flatmap(lambda d: st.sampled_from([None, c[H], d])),
               "do_layer_norm_before": BOOL, "enable_bias": BOOL, "layer_norm_elementwise_affine": BOOL,
               "tie_word_embeddings": BOOL}],
        wide=[TIDY, odd_heads(5), widen(noise={**COMMON_NOISE, "_remove_final_layer_norm": BOOL,
                                               "pad_token_id": st.one_of(st.none(), st.integers(0, 4)),
                                               "layer_types": st.none()})],
        tiny={"model_type": "opt", "vocab_size": 40, "hidden_size": 16, "num_attention_heads": 4, "num_hidden_layers": 2,
              "ffn_dim": 20, "max_position_embeddings": 12, "word_embed_proj_dim": 8, "do_layer_norm_before": False}),
    # T5: d_kv free of H/A, a decoder depth of its own or none (null: num_layers), ReLU or gated feed-forward, 4 buckets
    # or more (fewer build, but its bucket function then divides by zero); wide: its four aliases (num_hidden_layers
    # before or without num_layers), cache-only keys, is_gated_act (it overrides feed_forward_proj's)
    # tiny: d_kv 6 against H/A = 4, three decoder layers against two encoder layers, gated feed-forward
    "t5": Row(
        tidy=[{"vocab_size": st.integers(1, 64), "d_model": st.integers(1, 16), "d_kv": st.integers(1, 8),
               "num_heads": st.integers(1, 4), "d_ff": st.integers(1, 40), "num_layers": st.integers(1, 3),
               "num_decoder_layers": st.sampled_from([None, 1, 2, 3]), "relative_attention_num_buckets": st.integers(4, 8),
               "feed_forward_proj": st.sampled_from(["relu", "gelu", "gated-gelu", "gated-silu"]),
               "tie_word_embeddings": opt(BOOL)}],  # forced true by transformers 5.23: no effect
        wide=[TIDY, widen(T5_ALIASES, ("num_layers", "num_decoder_layers"), {
                  **COMMON_NOISE, "relative_attention_max_distance": st.integers(1, 20), "layer_types": st.none(),
                  "is_decoder": BOOL, "is_encoder_decoder": BOOL, "tie_word_embeddings": st.one_of(BOOL, st.none()),
                  "is_gated_act": st.one_of(BOOL, st.none())}),
              {"relative_attention_num_buckets": lambda c: DROP if c.get("relative_attention_num_buckets", 32) is None
               else SKIP}],
        tiny={"model_type": "t5", "vocab_size": 40, "d_model": 16, "d_kv": 6, "num_heads": 4, "d_ff": 20, "num_layers": 2,
              "num_decoder_layers": 3, "relative_attention_num_buckets": 8, "feed_forward_proj": "gated-gelu"}),
    # DistilBERT's dialect (dim, n_heads, n_layers, hidden_dim) or the hidden_size ... names its attribute_map accepts
    "distilbert": Row(
        tidy=[{A: st.integers(1, 4), "vocab_size": st.integers(1, 64), "dim": times(A, 1, 8), "n_heads": A,
               "n_layers": st.integers(1, 3), "hidden_dim": st.integers(1, 40),
               "max_position_embeddings": st.integers(1, 40)}, rename(DISTILBERT_ALIASES)],
        wide=[TIDY, odd_heads(5), widen(DISTILBERT_ALIASES, ("n_layers", "num_hidden_layers"), {
            **COMMON_NOISE, "sinusoidal_pos_embds": BOOL, "pad_token_id": st.one_of(st.none(), st.integers(0, 4))})],
        tiny={"model_type": "distilbert", "vocab_size": 40, "dim": 16, "n_heads": 4, "n_layers": 2, "hidden_dim": 20,
              "max_position_embeddings": 8}),
    # ELECTRA; wide: heads that need not divide H (transformers then builds A·(H // A)-wide projections).
    # tiny: ELECTRA-small's shape: d_e = 8 against H = 16 (embeddings_project)
    "electra": Row(
        tidy=ELECTRA, wide=[TIDY, odd_heads(4), widen(noise=ENCODER_NOISE)],
        tiny={"model_type": "electra", "vocab_size": 40, "embedding_size": 8, "hidden_size": 16,
              "num_attention_heads": 4, "num_hidden_layers": 2, "intermediate_size": 20, "max_position_embeddings": 8}),
    # ALBERT: ELECTRA's; wide: groups of shared layers, and layers per group.
    # tiny: one shared layer run 3 times
    "albert": Row(
        tidy=ELECTRA, wide=[TIDY, odd_heads(4), {"num_hidden_groups": st.integers(1, 3), "inner_group_num": st.integers(0, 3)},
                            widen(noise=ENCODER_NOISE)],
        tiny={"model_type": "albert", "vocab_size": 40, "embedding_size": 8, "hidden_size": 16, "num_attention_heads": 4,
              "num_hidden_layers": 3, "intermediate_size": 20, "max_position_embeddings": 8}),
    # DeepSeek-V3: latent attention (a query bottleneck or none), L_f dense layers, E routed experts in g groups (under
    # either name of DeepseekV3Config's attribute_map), shared experts (0 to 2); every config one transformers' forward
    # pass runs (A_kv = A, E/g ≥ 2, k within the kept groups); wide: every size (the latent or the bottleneck 0 wide,
    # every dimension rotary), the router's groups free (configs its forward cannot route included), A_kv ≠ A, L_f
    # beyond the depth, moe_layer_freq, the window keys (they change no tensor).
    # tiny: layer 0 dense, layers 1 and 2 sparse (8 experts in 4 groups, 2 groups kept, 2 experts per token, 2 shared);
    # a query bottleneck r_q = 12, a latent r_kv = 6, d_k = 4 + 2 against d_v = 3; I_e = 8 (transformers' default
    # grouped_mm experts want rows of a multiple of 16 bytes on the CPU)
    "deepseek_v3": Row(
        tidy=[{A: st.integers(1, 4), L: st.integers(1, 3), G: st.integers(1, 3), E: times(G, 2, 3),
               K_G: lambda c: st.integers(1, c[G]), "vocab_size": st.integers(1, 64),
               "hidden_size": st.integers(1, 24),  # the heads need not divide it
               "num_attention_heads": A, "num_key_value_heads": lambda c: st.sampled_from([c[A], None]),  # null: A
               "num_hidden_layers": L, "q_lora_rank": st.one_of(st.none(), st.integers(1, 12)),  # null: a plain q_proj
               "kv_lora_rank": st.integers(1, 8), "qk_nope_head_dim": st.integers(1, 6), "qk_rope_head_dim": even(1, 3),
               "v_head_dim": st.integers(1, 6), "intermediate_size": st.integers(1, 40),
               "moe_intermediate_size": st.integers(1, 12), "first_k_dense_replace": lambda c: st.integers(0, c[L]),
               "n_group": G, "topk_group": K_G, "num_experts_per_tok": lambda c: st.integers(1, c[K_G] * (c[E] // c[G])),
               "n_shared_experts": st.integers(0, 2), "tie_word_embeddings": BOOL, "attention_bias": BOOL,
               "norm_topk_prob": BOOL, ("num_local_experts", "n_routed_experts"): E}],
        wide=[{"num_attention_heads": st.integers(1, 4), "num_hidden_layers": st.integers(0, 3), "n_group": st.integers(1, 3),
               E: GROUPED_E, "topk_group": lambda c: st.integers(1, c["n_group"] + 1), "vocab_size": st.integers(1, 48),
               "hidden_size": st.integers(1, 24), "kv_lora_rank": st.integers(0, 8), "qk_nope_head_dim": st.integers(0, 6),
               "qk_rope_head_dim": even(1, 3), "v_head_dim": st.integers(1, 6), "intermediate_size": st.integers(1, 32),
               "moe_intermediate_size": st.integers(1, 12),
               "first_k_dense_replace": lambda c: st.integers(0, c["num_hidden_layers"] + 1),
               "num_experts_per_tok": lambda c: st.integers(0, c[E] + 1),  # 0: no routed expert runs
               "n_shared_experts": st.integers(0, 2), ("n_routed_experts", "num_local_experts"): E,
               "num_key_value_heads": put(st.integers(1, 4)), "q_lora_rank": put(st.integers(0, 12)),
               **dict.fromkeys(("tie_word_embeddings", "attention_bias", "norm_topk_prob"), put(BOOL, null=False)),
               **rarely(4, moe_layer_freq=st.integers(1, 3), sliding_window=WINDOW, num_nextn_predict_layers=st.integers(0, 2),
                        routed_scaling_factor=1.0, max_position_embeddings=st.integers(1, 64))}],
        tiny={"model_type": "deepseek_v3", "vocab_size": 40, "hidden_size": 16, "num_attention_heads": 4,
              "num_key_value_heads": 4, "num_hidden_layers": 3, "intermediate_size": 20, "moe_intermediate_size": 8,
              "n_routed_experts": 8, "num_experts_per_tok": 2, "n_shared_experts": 2, "first_k_dense_replace": 1,
              "n_group": 4, "topk_group": 2, "q_lora_rank": 12, "kv_lora_rank": 6, "qk_nope_head_dim": 4,
              "qk_rope_head_dim": 2, "v_head_dim": 3}),
    # OLMo 2: LLaMA's shapes (head_dim free of H/A), QK-norm over the projections, no MLP bias; a table wide enough for
    # its padding index (1 by default; wide: anywhere, a table of 1 row refuses it)
    "olmo2": Row(
        tidy=[like("llama"), {"vocab_size": st.integers(2, 64), "mlp_bias": DROP}],
        wide=[*DECODER, {"attention_bias": put(BOOL, null=False), "pad_token_id": put(WIDE_PAD)}],
        tiny={"model_type": "olmo2", "vocab_size": 40, "hidden_size": 16, "num_attention_heads": 4,
              "num_key_value_heads": 2, "num_hidden_layers": 2, "intermediate_size": 20}),
    # SmolLM3: LLaMA's shapes, NoPE every no_rope_layer_interval-th layer (or a list), windowed NoPE layers when
    # use_sliding_window; a padding index inside the table (its default, 128004, lies outside these tables); wide: the
    # NoPE interval 0 (transformers divides by it), the list one layer short or long.
    # tiny: layer 3 without rotary positions (NoPE), and windowed (use_sliding_window)
    "smollm3": Row(
        tidy=[like("llama"), {"num_hidden_layers": st.integers(1, 5), "num_key_value_heads": KV, "pad_token_id": PAD},
              maybe({"no_rope_layer_interval": st.integers(1, 4)}, {"no_rope_layers": per_layer(st.integers(0, 1))}),
              maybe({"use_sliding_window": True, "sliding_window": WINDOW})],
        wide=[*DECODER, {**dict.fromkeys(("attention_bias", "mlp_bias", "use_sliding_window"), put(BOOL, null=False)),
                         "pad_token_id": put(WIDE_PAD), "no_rope_layer_interval": put(st.integers(0, 4), null=False),
                         "no_rope_layers": put(lambda c: st.lists(st.integers(0, 1), min_size=max(c["num_hidden_layers"] - 1, 0),
                                                                  max_size=c["num_hidden_layers"] + 1))}],
        tiny={"model_type": "smollm3", "vocab_size": 40, "pad_token_id": 0, "hidden_size": 16,
              "num_attention_heads": 4, "num_key_value_heads": 2, "num_hidden_layers": 4, "intermediate_size": 20,
              "use_sliding_window": True, "sliding_window": 4}),
    # Gemma 3 (text): Gemma 2's shapes (A divides H), QK-norm, a window S can pass, the local:global pattern (wide: 0
    # included, transformers divides by it).
    # tiny: layers 0 and 1 local (window 4), layer 2 global (sliding_window_pattern 3); head_dim 6 against H/A = 3
    "gemma3_text": Row(
        tidy=[like("gemma2"), {"num_hidden_layers": st.integers(1, 6), "sliding_window_pattern": opt(st.integers(1, 4))}],
        wide=[like("gemma", wide=True), rarely(3, query_pre_attn_scalar=st.integers(1, 8), final_logit_softcapping=None,
                                               attn_logit_softcapping=None, sliding_window_pattern=st.integers(0, 4),
                                               rope_local_base_freq=10000.0)],
        tiny={"model_type": "gemma3_text", "vocab_size": 40, "hidden_size": 12, "num_attention_heads": 4,
              "num_key_value_heads": 2, "head_dim": 6, "num_hidden_layers": 3, "intermediate_size": 20,
              "sliding_window": 4, "sliding_window_pattern": 3}),
    # GPT-OSS: LLaMA's shapes with a head_dim of their own (its default, 64, is said otherwise), biased attention or not,
    # E experts and k per token, a window S can pass, alternating layers or a drawn layer_types; wide: the MXFP4
    # quantization_config (it changes no parameter count).
    # tiny: layers 0 and 2 windowed (4 tokens), layer 1 full (its default alternation); biased attention, sinks,
    # 4 biased experts, 2 per token; head_dim 6 against H/A = 4
    "gpt_oss": Row(
        tidy=[like("llama"), {"mlp_bias": DROP, "num_hidden_layers": st.integers(1, 4), "num_key_value_heads": KV,
                              "head_dim": HEAD_DIM, **EXPERTS, "sliding_window": WINDOW,
                              "layer_types": opt(per_layer(FULL_OR_SLIDING))}],
        wide=[*DECODER, {"attention_bias": put(BOOL, null=False), **wide_experts(("num_local_experts", "num_experts"), 0),
                         **rarely(4, quantization_config=lambda c: {"quant_method": "mxfp4"})}],
        tiny={"model_type": "gpt_oss", "vocab_size": 40, "hidden_size": 16, "num_attention_heads": 4,
              "num_key_value_heads": 2, "head_dim": 6, "num_hidden_layers": 3, "intermediate_size": 8,
              "num_local_experts": 4, "num_experts_per_tok": 2, "sliding_window": 4}),
    # Qwen3-Next: linear and full attention layers (by full_attention_interval or a drawn layer_types with one full
    # layer at least: the model fails with a cache otherwise), GQA with a head_dim of its own (rotary on a quarter),
    # Gated DeltaNet heads (value heads a multiple of the key heads), a convolution of 1 to 4 taps, E experts (0: every
    # layer dense) with a shared expert, some layers kept dense; wide: the interval 0 or null (transformers divides by
    # it), legacy layer types and types that build no token mixer, value heads that need not be a multiple of the key
    # heads, the rotary fraction, the shared expert 0 wide.
    # tiny: layers 0-2 Gated DeltaNet (2 key heads of 6, 4 value heads of 5, a convolution of 3 taps), layer 3 gated
    # full attention (head_dim 8, 2 of it rotary); layer 0 dense, layers 1-3 sparse (4 experts, 2 per token, a shared
    # expert of 12); I_e = 8 (transformers' default grouped_mm experts want rows of a multiple of 16 bytes)
    "qwen3_next": Row(
        tidy=[{A_KV: st.integers(1, 2), G_K: st.integers(1, 2), L: st.integers(1, 4), E: st.integers(0, 4),
               "vocab_size": st.integers(1, 48), "hidden_size": st.integers(2, 16), "num_attention_heads": times(A_KV, 1, 2),
               "num_key_value_heads": A_KV, "head_dim": HEAD_DIM, "num_hidden_layers": L,
               "intermediate_size": st.integers(1, 16), "moe_intermediate_size": st.integers(1, 8),
               "shared_expert_intermediate_size": st.integers(0, 8), "num_experts": E,
               "num_experts_per_tok": lambda c: st.integers(1, max(c[E], 1)), "decoder_sparse_step": st.integers(1, 2),
               "mlp_only_layers": SOME_LAYERS, "linear_num_key_heads": G_K, "linear_num_value_heads": times(G_K, 1, 2),
               "linear_key_head_dim": st.integers(1, 4), "linear_value_head_dim": st.integers(1, 4),
               "linear_conv_kernel_dim": st.integers(1, 4), "norm_topk_prob": BOOL, "attention_bias": BOOL,
               "tie_word_embeddings": BOOL},
              either({"layer_types": lambda c: st.tuples(st.lists(QWEN3_NEXT_KINDS, min_size=c[L] - 1, max_size=c[L] - 1),
                                                         st.integers(0, c[L] - 1)).map(
                          lambda t: t[0][:t[1]] + ["full_attention"] + t[0][t[1]:])},
                     {"full_attention_interval": lambda c: st.integers(1, c[L])})],
        wide=[*DECODER, {"layer_types": DROP, **NULL_MOSTLY_LEFT_OUT, "attention_bias": put(BOOL, null=False),
                         **wide_experts("num_experts", -1), "moe_intermediate_size": st.integers(0, 8),
                         "shared_expert_intermediate_size": put(st.integers(0, 8), null=False),
                         "decoder_sparse_step": put(st.integers(1, 3), null=False), "mlp_only_layers": put(WIDE_SOME_LAYERS),
                         "linear_num_key_heads": st.integers(1, 3),
                         "linear_num_value_heads": lambda c: st.integers(1, 4).flatmap(lambda v: st.sampled_from(
                             [c["linear_num_key_heads"], 2 * c["linear_num_key_heads"], v])),
                         **dict.fromkeys(("linear_key_head_dim", "linear_value_head_dim", "linear_conv_kernel_dim"),
                                         put(st.integers(1, 4), null=False)),
                         **rarely(3, partial_rotary_factor=st.sampled_from([0.25, 0.5, 1.0, 2.0, None]))},  # null: 1.0
              {HOW: st.sampled_from(["interval"] * 3 + ["types"] * 2 + ["neither"]),
               # mostly an interval that puts a full layer among the first 3 (a cache needs one)
               "full_attention_interval": when(lambda c: c[HOW] == "interval", st.one_of(
                   st.integers(1, 3), st.integers(1, 3), st.integers(-2, 4), st.none(), st.just(2.0))),
               "layer_types": when(lambda c: c[HOW] == "types", per_layer(st.sampled_from(GATED_DELTANET), wide=True))}],
        tiny={"model_type": "qwen3_next", "vocab_size": 40, "hidden_size": 16, "num_attention_heads": 4,
              "num_key_value_heads": 2, "head_dim": 8, "num_hidden_layers": 4, "intermediate_size": 20,
              "moe_intermediate_size": 8, "shared_expert_intermediate_size": 12, "num_experts": 4,
              "num_experts_per_tok": 2, "mlp_only_layers": [0], "linear_num_key_heads": 2,
              "linear_num_value_heads": 4, "linear_key_head_dim": 6, "linear_value_head_dim": 5,
              "linear_conv_kernel_dim": 3}),
    # GLM-4.5: DeepSeek-V3's routing (L_f dense layers, E experts in g groups of at least 2, shared experts) under GQA
    # with a head_dim of its own or H/A, q/k/v biases, QK-norm or not, a partial rotary share; every config one
    # transformers' forward pass runs; wide: head_dim null, 0, odd or free of H/A, heads not dividing H, a rotary share
    # null (the whole head) or 1.0 (odd heads included), the router's groups free, L_f beyond the depth, aliases, the
    # MTP layers (never built).
    # tiny: layer 0 dense, layers 1 and 2 sparse (8 experts in 2 groups, 1 kept, 2 per token, 1 shared); q/k/v biases
    # and QK-norm, head_dim 6 against H/A = 4, half of it rotary; I_e = 8 (the CPU's grouped_mm wants rows of a multiple
    # of 16 bytes)
    "glm4_moe": Row(
        tidy=[like("deepseek_v3"), {**dict.fromkeys(("q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim",
                                                     "v_head_dim"), DROP),  # the latent attention's
                                    A_KV: st.integers(1, 3), A: times(A_KV, 1, 2), "hidden_size": times(A, 1, 3, 2),
                                    "num_attention_heads": A, "num_key_value_heads": A_KV, "use_qk_norm": BOOL,
                                    "partial_rotary_factor": st.sampled_from([0.5, 0.25, 1.0]), "head_dim": opt(HEAD_DIM)}],
        wide=[*DECODER, {"n_group": st.integers(1, 3), E: GROUPED_E, ("n_routed_experts", "num_local_experts"): E,
                         "moe_intermediate_size": st.integers(1, 12),
                         "first_k_dense_replace": lambda c: st.integers(0, c["num_hidden_layers"] + 1),
                         "topk_group": lambda c: st.integers(1, c["n_group"] + 1),
                         "num_experts_per_tok": lambda c: st.integers(0, c[E] + 1), "n_shared_experts": st.integers(0, 2),
                         **dict.fromkeys(("attention_bias", "use_qk_norm", "norm_topk_prob"), put(BOOL, null=False)),
                         "partial_rotary_factor": put(st.sampled_from([0.5, 0.25, 1.0])),
                         **rarely(4, num_nextn_predict_layers=st.integers(0, 2), routed_scaling_factor=2.5)}],
        tiny={"model_type": "glm4_moe", "vocab_size": 40, "hidden_size": 16, "num_attention_heads": 4,
              "num_key_value_heads": 2, "head_dim": 6, "num_hidden_layers": 3, "intermediate_size": 20,
              "moe_intermediate_size": 8, "n_routed_experts": 8, "num_experts_per_tok": 2, "n_shared_experts": 1,
              "first_k_dense_replace": 1, "n_group": 2, "topk_group": 1, "attention_bias": True,
              "use_qk_norm": True}),
    # DeepSeek-V2: DeepSeek-V3's latent attention (heads dividing H, as DeepseekV2Config requires; d_nope and r_kv even:
    # the rotary parts start after them, or transformers' complex view fails in fp32), mlp_bias, greedy or
    # group-limited routing (groups of one expert route: a group is scored by its best one; greedy never reads
    # n_group, topk_group); every config transformers' forward pass runs; wide: DeepSeek-V3's whole space (heads that
    # need not divide H: DeepseekV2Config refuses them), d_rope and d_v of 0, either router or an unknown method, k,
    # n_group and topk_group null or absent.
    # tiny: DeepSeek-V2-Lite's plan: no query compression (q_lora_rank null), layer 0 dense, layers 1 and 2 sparse (8
    # experts in 4 groups, 2 kept, 2 per token, 2 shared), a latent r_kv = 6, d_k = 4 + 2 against d_v = 3
    "deepseek_v2": Row(
        tidy=[like("deepseek_v3"), {"hidden_size": times("num_attention_heads", 1, 6),
                                    E: lambda c: c.get("num_local_experts") or c["n_routed_experts"],
                                    "num_local_experts": DROP, "n_routed_experts": DROP, ("num_experts", "n_routed_experts"): E,
                                    "mlp_bias": BOOL, "qk_nope_head_dim": even(1, 3), "kv_lora_rank": even(1, 4)},
              either({"topk_method": "greedy", "num_experts_per_tok": lambda c: st.integers(1, c[E]), "n_group": opt(DROP),
                      "topk_group": opt(DROP)},
                     {"topk_method": "group_limited_greedy",
                      "n_group": lambda c: st.sampled_from([g for g in (1, 2, 3, 6) if c[E] % g == 0]),
                      "topk_group": lambda c: st.integers(1, c["n_group"])})],
        wide=[like("deepseek_v3", wide=True), {
            E: lambda c: c.get("num_local_experts", SKIP), "num_local_experts": DROP,
            ("n_routed_experts", "num_experts"): when(lambda c: E in c, E),
            **rarely(4, qk_rope_head_dim=st.sampled_from([0, 1, 3])), **rarely(5, v_head_dim=0),
            "mlp_bias": put(BOOL, null=False), "topk_method": put(st.sampled_from(["greedy", "group_limited_greedy", "noaux_tc"])),
            **rarely(5, **dict.fromkeys(("num_experts_per_tok", "n_group", "topk_group"), NULL_OR_ABSENT))}],
        tiny={"model_type": "deepseek_v2", "vocab_size": 40, "hidden_size": 16, "num_attention_heads": 4,
              "num_hidden_layers": 3, "intermediate_size": 20, "moe_intermediate_size": 8,
              "n_routed_experts": 8, "num_experts_per_tok": 2, "n_shared_experts": 2, "first_k_dense_replace": 1,
              "n_group": 4, "topk_group": 2, "topk_method": "group_limited_greedy", "q_lora_rank": None,
              "kv_lora_rank": 6, "qk_nope_head_dim": 4, "qk_rope_head_dim": 2, "v_head_dim": 3}),
    # ModernBERT: even heads (rotary pairs) dividing H, a padding index inside the table (its default, 50283, lies
    # outside), every bias switch, the window and the global layers' interval, or a drawn layer_types; wide: heads that
    # may not divide H or be odd, head_dim (read by its rotary embedding only), depth 0 (refused by its config), a
    # padding index anywhere, the window as sliding_window (half of it), the global layers' interval (0 included:
    # transformers divides by it), null switches, classifier_pooling, now and then another layer type, or one too many.
    # tiny: layer 0 global, layers 1 and 2 local (|i − j| ≤ 2: local_attention 4), no biases (its defaults)
    "modernbert": Row(
        tidy=[{A: st.integers(1, 4), L: st.integers(1, 4), "vocab_size": st.integers(1, 64), "pad_token_id": PAD,
               "hidden_size": times(A, 1, 4, 2), "num_attention_heads": A, "num_hidden_layers": L,
               "intermediate_size": st.integers(1, 40), "local_attention": WINDOW,
               **dict.fromkeys(("norm_bias", "attention_bias", "mlp_bias", "classifier_bias", "decoder_bias",
                                "tie_word_embeddings"), opt(BOOL))},
              maybe({"global_attn_every_n_layers": st.integers(1, 3)}, {"layer_types": per_layer(FULL_OR_SLIDING)})],
        wide=[TIDY, {"layer_types": DROP}, odd_heads(6),
              {**rarely(8, hidden_size=st.integers(0, 24)), L: st.sampled_from([1, 2, 3, 4, 0]), "num_hidden_layers": L},
              widen(depth=(), noise={**COMMON_NOISE, "pad_token_id": st.one_of(st.none(), st.integers(-2, 4)),
                                     "sliding_window": st.sampled_from([None, *range(9)]),
                                     "global_attn_every_n_layers": st.sampled_from([None, -1, 0, 1, 2, 3]),
                                     "head_dim": st.sampled_from([None, -1, *range(9)]),
                                     "classifier_pooling": st.sampled_from(["cls", "mean", "max"]),
                                     "global_rope_theta": st.just(1e4)}),
              rarely(4, layer_types=lambda c: st.sampled_from([c[L]] * 3 + [c[L] + 1]).flatmap(lambda n: st.one_of(
                  st.none(), st.lists(st.sampled_from(["full_attention", "sliding_attention"] * 4 +
                                                      ["chunked_attention", "attention"]), min_size=n, max_size=n))))],
        tiny={"model_type": "modernbert", "vocab_size": 40, "pad_token_id": 0, "hidden_size": 16,
              "num_attention_heads": 4, "num_hidden_layers": 3, "intermediate_size": 20, "local_attention": 4}),
    # Gemma 3 with its tower: a Gemma 3 text config, a SigLIP tower, the projector's pooled tokens, the head's tie (null:
    # untied); wide: a wide text config; a tower whose heads may not divide its width, of depth 0, with a patch larger
    # than the image; 0 pooled tokens (transformers divides by √0); a sub-config left out or null is every default (a
    # 12-layer tower); another tower's model_type (counted by transformers, test_family_multimodal).
    # tiny: the text model above; a SigLIP tower of 2 layers on a 28×28 image of 7×7 patches (16 positions) pooled to
    # 4 tokens, without the pooling head (as published)
    "gemma3": Row(
        tidy=[{"text_config": family("gemma3_text"), "vision_config": build(SIGLIP),
               "mm_tokens_per_image": st.integers(1, 4), "tie_word_embeddings": opt(st.sampled_from([True, False, None]))}],
        wide=[{"text_config": sub(family("gemma3_text", wide=True)),
               "vision_config": sub(build([{A: st.integers(1, 3),
                                            "hidden_size": lambda c: st.one_of(st.integers(1, 8), times(A, 1, 3)(c)),
                                            "num_attention_heads": A, "intermediate_size": st.integers(1, 8),
                                            "num_hidden_layers": st.integers(0, 2), "patch_size": st.integers(1, 4),
                                            "image_size": st.integers(1, 8), "num_channels": put(st.integers(1, 3), null=False),
                                            "vision_use_head": put(BOOL), **rarely(6, model_type="siglip_vision_model")}])),
               "mm_tokens_per_image": put(st.integers(0, 4)), "tie_word_embeddings": put(BOOL)}],
        tiny={"model_type": "gemma3",
              "text_config": {"vocab_size": 40, "hidden_size": 12, "num_attention_heads": 4, "num_key_value_heads": 2,
                              "head_dim": 6, "num_hidden_layers": 3, "intermediate_size": 20, "sliding_window": 4,
                              "sliding_window_pattern": 3},
              "vision_config": {"hidden_size": 8, "intermediate_size": 12, "num_hidden_layers": 2,
                                "num_attention_heads": 2, "image_size": 28, "patch_size": 7, "vision_use_head": False},
              "mm_tokens_per_image": 4}),
    # Qwen2.5-VL: a Qwen2 text config (A divides H; d_k = H/A even, split into three M-RoPE sections), flat as published
    # or as text_config; a small vision encoder with its patch merger; wide: a wide Qwen2 text config (head_dim and tie
    # included: keys its text config class keeps but does not read), M-RoPE sections that may not fit the heads; the
    # vision encoder's keys or their aliases (num_hidden_layers, num_attention_heads).
    # tiny: flat as published: layer 1 windowed (4 tokens); d_k = 4 in M-RoPE sections 1 + 0 + 1; a vision encoder of
    # 2 blocks, patches 2 × 4 × 4, merging 2 × 2 of them into the text width
    "qwen2_5_vl": Row(
        tidy=[like("qwen2"), {"head_dim": DROP,
                              "hidden_size": lambda c: st.integers(1, 3).map(lambda half: 2 * half * c["num_attention_heads"]),
                              "rope_scaling": lambda c: _mrope(c["hidden_size"] // c["num_attention_heads"] // 2),
                              "vision_config": build(QWEN_VISION)}, text_config()],
        wide=[like("qwen2", wide=True),
              {"rope_scaling": put(st.builds(lambda a, b, c: {"type": "mrope", "mrope_section": [a, b, c]},
                                             st.integers(0, 3), st.integers(0, 3), st.integers(0, 3)))},
              {"rope_scaling": when(  # sections that fit the heads half the time they can: the forward pass runs
                  lambda c: (c["hidden_size"] // c["num_attention_heads"] / 2).is_integer(),
                  opt(lambda c: st.integers(0, c["hidden_size"] // c["num_attention_heads"] // 2).map(
                      lambda first: {"type": "mrope", "mrope_section": [
                          first, 0, c["hidden_size"] // c["num_attention_heads"] // 2 - first]}))),
               SUB: build([{"hidden_size": st.integers(1, 8), "intermediate_size": st.integers(1, 8),
                            "patch_size": st.integers(1, 3), "out_hidden_size": st.integers(1, 8),
                            ("depth", "num_hidden_layers"): st.integers(0, 2),
                            ("num_heads", "num_attention_heads"): st.integers(1, 3),
                            **dict.fromkeys(("in_channels", "temporal_patch_size", "spatial_merge_size"),
                                            put(st.integers(1, 2), null=False))}])},
              text_config(wide=True), {"vision_config": sub(SUB)}],
        tiny={"model_type": "qwen2_5_vl", "vocab_size": 40, "hidden_size": 16, "num_attention_heads": 4,
              "num_key_value_heads": 2, "num_hidden_layers": 2, "intermediate_size": 20,
              "use_sliding_window": True, "sliding_window": 4, "max_window_layers": 1,
              "rope_scaling": {"type": "mrope", "mrope_section": [1, 0, 1]},
              "vision_config": {"depth": 2, "hidden_size": 8, "intermediate_size": 12, "num_heads": 2,
                                "patch_size": 4, "temporal_patch_size": 2, "spatial_merge_size": 2,
                                "out_hidden_size": 16, "window_size": 16, "fullatt_block_indexes": [1]}}),
    # Llama 4 (text): LLaMA's shapes with a head_dim of their own (its default, 128, is said otherwise), E experts and k
    # per token with a shared expert, dense layers of their own width, the sparse layers by step or by list, NoPE layers
    # by interval or by list, a chunk S can pass; wide: E 0, k 0, the sparse step 0 or negative, sparse layers outside the
    # stack, the NoPE interval 0 or a list empty or one layer off, the dense width mostly said (its default, 16384, is
    # too big to run on the CPU here).
    # tiny: layers 0-2 rotary and chunked (4 tokens), layer 3 NoPE and full; layers 1 and 3 sparse (Maverick's
    # alternation: 4 experts of width 8, 1 per token, a shared expert), layers 0 and 2 dense of width 12
    "llama4_text": Row(
        tidy=[like("llama"), {"mlp_bias": DROP, "num_hidden_layers": st.integers(1, 5), "num_key_value_heads": KV,
                              "head_dim": HEAD_DIM, **EXPERTS, "intermediate_size_mlp": st.integers(1, 40)},
              maybe({"interleave_moe_layer_step": st.integers(1, 3)}, {"moe_layers": SOME_LAYERS}),
              maybe({"no_rope_layer_interval": st.integers(1, 4)}, {"no_rope_layers": per_layer(st.integers(0, 1))}),
              {"attention_chunk_size": WINDOW, **dict.fromkeys(("use_qk_norm", "attn_temperature_tuning"), opt(BOOL))}],
        wide=[*DECODER, {**NULL_MOSTLY_LEFT_OUT, "attention_bias": put(BOOL, null=False),
                         **wide_experts("num_local_experts", 0),
                         "intermediate_size_mlp": lambda c: st.integers(0, 4).flatmap(
                             lambda i: st.integers(1, 24) if i else st.just(SKIP)),  # said 4 times in 5
                         "interleave_moe_layer_step": put(st.integers(-1, 3), null=False),
                         "moe_layers": put(lambda c: st.lists(st.integers(-1, c["num_hidden_layers"] + 1), max_size=4)),
                         "no_rope_layer_interval": put(st.sampled_from([0, 1, 2, 3, 4, 4, 4]), null=False),
                         "no_rope_layers": put(lambda c: st.sampled_from(
                             [c["num_hidden_layers"]] * 4 + [max(c["num_hidden_layers"] - 1, 0), c["num_hidden_layers"] + 1]
                         ).flatmap(lambda n: st.lists(st.integers(0, 1), min_size=n, max_size=n))),
                         **dict.fromkeys(("use_qk_norm", "attn_temperature_tuning"), put(BOOL, null=False))}],
        tiny={"model_type": "llama4_text", "vocab_size": 40, "hidden_size": 16, "num_attention_heads": 4,
              "num_key_value_heads": 2, "head_dim": 6, "num_hidden_layers": 4, "intermediate_size": 8,
              "intermediate_size_mlp": 12, "num_local_experts": 4, "num_experts_per_tok": 1,
              "interleave_moe_layer_step": 2, "attention_chunk_size": 4}),
    # Llama 4 with its vision encoder: a Llama 4 (text) text_config, a small vision_config (heads dividing the width,
    # images of a few patches, the adapter's widths); wide: each absent or null (the defaults), a tower whose heads do
    # not divide its width or outnumber it, another model_type, a pixel shuffle ratio of 0.
    # tiny: the tiny text model above; 28 × 28 images of 14 × 14 patches (2 × 2, one token after the pixel shuffle),
    # one encoder layer of 2 heads, the adapter and projector 8 wide
    "llama4": Row(
        tidy=[{"text_config": family("llama4_text", typed=False), "vision_config": build(LLAMA4_VISION)}],
        wide=[{"text_config": sub(family("llama4_text", wide=True, typed=False)),
               "vision_config": sub(build([*LLAMA4_VISION, {
                   **rarely(5, hidden_size=st.integers(1, 7), num_attention_heads=st.integers(1, 7),
                            num_hidden_layers=st.integers(0, 7)),
                   **rarely(6, model_type=st.sampled_from(["siglip_vision_model", "llama4_vision_model"]),
                            pixel_shuffle_ratio=st.sampled_from([0.0, 0.25, 0.5, 1.0]))}])),
               **rarely(4, tie_word_embeddings=BOOL, image_token_index=st.integers(0, 3))}],
        tiny={"model_type": "llama4", "text_config": {"vocab_size": 40, "hidden_size": 16, "num_attention_heads": 4,
                                                      "num_key_value_heads": 2, "head_dim": 6, "num_hidden_layers": 4,
                                                      "intermediate_size": 8, "intermediate_size_mlp": 12,
                                                      "num_local_experts": 4, "num_experts_per_tok": 1,
                                                      "interleave_moe_layer_step": 2, "attention_chunk_size": 4},
              "vision_config": {"hidden_size": 16, "num_attention_heads": 2, "intermediate_size": 64,
                                "num_hidden_layers": 1, "image_size": 28, "patch_size": 14, "vision_output_dim": 8,
                                "projector_input_dim": 8, "projector_output_dim": 8}}),
}

# one strategy per model_type of helpers.families.FAMILIES
STRATEGIES: dict[str, st.SearchStrategy[dict]] = {t: build(row.tidy, t) for t, row in TABLE.items()}
# the whole space transformers accepts (tests/test_fuzz.py)
WIDE: dict[str, st.SearchStrategy[dict]] = {t: build(row.wide, t) for t, row in TABLE.items()}
# one tiny real config per model_type, small enough to run on the CPU (training state, KV cache)
TINY: dict[str, dict] = {t: row.tiny for t, row in TABLE.items()}
any_config = st.one_of(*STRATEGIES.values())


def gpt2_configs() -> st.SearchStrategy[dict]:
    return STRATEGIES["gpt2"]


def llama_configs() -> st.SearchStrategy[dict]:
    return STRATEGIES["llama"]
