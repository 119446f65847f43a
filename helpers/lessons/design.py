"""What changes the count and what does not: the design choices of the series' families, and their exact effects.

Introduced in ``09_modern_architectures``. :func:`design_features` reads, from a model's parameter table and sizes,
which of :data:`FEATURES` it has (biases on the query, key and value projections, on attention's output projection,
in the feed-forward, LayerNorm's β, a gated feed-forward,
a tied head, grouped-query attention, a sliding window, routed experts). :data:`CHANGES` are the choices made one
at a time on a 7B-class model: each changes ONE config key of a shipped config (LLaMA 7B, Mistral 7B, Mixtral
8x7B) and :func:`design_effects` counts the model before and after with the engine. Two choices have no config
key in any family of the engine (LayerNorm against RMSNorm, a gated feed-forward against a plain one at the same
width): their effect is the rows of the table they add or remove (:data:`ROW_CHANGES`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from ..config import ModelConfig, parse_config, raw_config
from ..count import count_model
from ..params import ATTENTION, BIAS, EXPERT, FEED_FORWARD, LM_HEAD, MATRIX, NORM, Param, param_table

QKV_BIASES = "biases on q, k and v"
O_BIAS = "a bias on o (attention's output)"
FFN_BIASES = "biases in the feed-forward"
LAYER_NORM_BETA = "LayerNorm β (not RMSNorm)"
GATED = "gated feed-forward"
TIED = "head tied to the token table"
GQA = "grouped-query attention"
WINDOW = "sliding window"
EXPERTS = "routed experts"
FEATURES = (QKV_BIASES, O_BIAS, FFN_BIASES, LAYER_NORM_BETA, GATED, TIED, GQA, WINDOW, EXPERTS)


def _first_layer(params: Sequence[Param]) -> list[Param]:
    """The rows of the first layer of the first stack (an encoder–decoder's encoder block 0)."""
    first = next(p for p in params if p.layer is not None)
    prefix = first.name[:first.name.index(f".{first.layer}.") + len(f".{first.layer}.")]
    return [p for p in params if p.name.startswith(prefix)]


def _attention_bias_rows(params: Sequence[Param]) -> dict[str, list[Param]]:
    """The attention biases of a table, split into those of the input projections (q, k, v, fused or not) and
    those of the output projection: in each layer, the bias of the last attention matrix (``o_proj``,
    ``attention.output.dense``, GPT-2's ``c_proj``, GPT-NeoX's ``dense``) is the output's."""
    layers: dict[int, list[Param]] = {}
    for p in params:
        if p.component == ATTENTION and p.layer is not None:
            layers.setdefault(p.layer, []).append(p)
    split: dict[str, list[Param]] = {QKV_BIASES: [], O_BIAS: []}
    for rows in layers.values():
        matrices = [p for p in rows if p.kind == MATRIX]
        output = matrices[-1].name.removesuffix("weight") + "bias" if matrices else None
        for p in rows:
            if p.kind == BIAS:
                split[O_BIAS if p.name == output else QKV_BIASES].append(p)
    return split


def _feed_forward_matrices(config: ModelConfig) -> int:
    """The number of H × I matrices in one feed-forward of the first layer (per expert in a mixture): 2 or 3.

    Counted from the table: the feed-forward weights of layer 0 (the router left out) divided by E·H·I, with I
    the width of one expert (``I_e``) where the family has one.
    """
    layer = _first_layer(param_table(config))
    E = config.sizes.get("E", 1) if any(p.kind == EXPERT for p in layer) else 1
    width = config.sizes.get("I_e", config["I"]) if E > 1 else config["I"]
    weights = sum(p.count for p in layer if p.component == FEED_FORWARD and p.kind in (MATRIX, EXPERT)
                  and p.shape not in ((E, config["H"]),))
    return weights // (E * config["H"] * width)


def design_features(config: ModelConfig) -> dict[str, bool | None]:
    """Which of :data:`FEATURES` the model has, read from its table and sizes (None: does not apply).

    Introduced in ``09_modern_architectures``. Biases: tensors of kind bias on the input projections of attention
    (q, k, v), on its output projection (o: the bias of each layer's last attention matrix), in the feed-forward;
    LayerNorm's β: norm vectors named ``.bias``; gated: three H × I matrices per feed-forward (per expert in a
    mixture, from the table); tied: a decoder with no ``lm head`` rows (an encoder has no head: None); grouped-query
    attention: A_kv < A; a window: a window W that some layer uses; experts: tensors of kind expert.
    """
    params = param_table(config)
    sizes = config.sizes
    attention_biases = _attention_bias_rows(params)
    return {
        QKV_BIASES: bool(attention_biases[QKV_BIASES]),
        O_BIAS: bool(attention_biases[O_BIAS]),
        FFN_BIASES: any(p.kind == BIAS and p.component == FEED_FORWARD for p in params),
        LAYER_NORM_BETA: any(p.kind == NORM and p.name.endswith(".bias") for p in params),
        GATED: _feed_forward_matrices(config) == 3,
        TIED: (not any(p.component == LM_HEAD for p in params)) if config.family.is_decoder else None,
        GQA: sizes.get("A_kv", sizes["A"]) < sizes["A"],
        WINDOW: "W" in sizes and sizes.get("L_w", 1) > 0,
        EXPERTS: any(p.kind == EXPERT for p in params),
    }


@dataclass(frozen=True)
class Change:
    """One design choice made on a shipped config by changing ONE key: ``key`` from its value in ``base`` to ``value``.

    ``model`` names the ``data/models/`` config; ``base`` holds keys set before the change (to start from a
    variant of it, e.g. Mixtral with one expert per token); ``feature`` is the entry of :data:`FEATURES` it is.
    ``part``: where one key makes two choices at once (LLaMA's ``attention_bias`` adds biases to q, k, v AND o),
    the effect counts only the rows the key adds that belong to ``part`` (:data:`QKV_BIASES` or :data:`O_BIAS`).
    No notebook calls it; it works behind the helpers of ``09_modern_architectures``.
    """

    label: str
    feature: str
    model: str
    key: str
    value: Any
    base: Mapping[str, Any] = field(default_factory=dict)
    part: str = ""

    def configs(self) -> tuple[ModelConfig, ModelConfig]:
        """The model before and after the change."""
        raw = {**raw_config(self.model), **self.base}
        return (parse_config(raw, name=self.model), parse_config({**raw, self.key: self.value}, name=self.model))

    @property
    def before(self) -> Any:
        """The key's value before the change, as the engine reads it (a key the file leaves out: its default)."""
        return _config_value(self.configs()[0], self.key)


def _config_value(config: ModelConfig, key: str) -> Any:
    """The value a parsed config has for a ``config.json`` key (a flag, or the size the key sets; None: unset)."""
    if key in config.flags:
        return config.flags[key]
    for size in config.family.sizes:
        if key in (size.key, *size.aliases):
            return config.sizes.get(size.symbol)
    raise KeyError(f"{key}: not a key the {config.model_type} family reads")


CHANGES = (
    Change("biases on q, k and v", QKV_BIASES, "llama-7b", "attention_bias", True, part=QKV_BIASES),
    Change("a bias on o", O_BIAS, "llama-7b", "attention_bias", True, part=O_BIAS),
    Change("biases on the feed-forward", FFN_BIASES, "llama-7b", "mlp_bias", True),
    Change("head tied to the token table", TIED, "llama-7b", "tie_word_embeddings", True),
    Change("8 key/value heads for 32 query heads", GQA, "llama-7b", "num_key_value_heads", 8),
    Change("a window of 4,096 tokens", WINDOW, "mistral-7b-v0.1", "sliding_window", 4096, {"sliding_window": None}),
    Change("8 experts instead of 1 (k = 1)", EXPERTS, "mixtral-8x7b-v0.1", "num_local_experts", 8,
           {"num_local_experts": 1, "num_experts_per_tok": 1}),
    Change("2 experts per token instead of 1", EXPERTS, "mixtral-8x7b-v0.1", "num_experts_per_tok", 2,
           {"num_experts_per_tok": 1}),
)


@dataclass(frozen=True)
class RowChange:
    """A choice no family of the engine switches with a key: its effect is rows of ``model``'s table, those of
    kind ``kind`` whose name ends with ``suffix``. ``present``: the model has made the choice (the rows are in its
    table: before the choice, they are not); otherwise the choice adds as many again (a β beside each γ).
    No notebook calls it; it works behind the helpers of ``09_modern_architectures``."""

    label: str
    feature: str
    model: str
    kind: str
    suffix: str
    present: bool


ROW_CHANGES = (
    RowChange("LayerNorm's β beside each γ", LAYER_NORM_BETA, "llama-7b", NORM, ".weight", False),
    RowChange("a gate beside the up matrix (SwiGLU)", GATED, "llama-7b", MATRIX, "mlp.gate_proj.weight",
              True),
)


@dataclass(frozen=True)
class Effect:
    """The exact effect of one choice on a model: before and after, total and active (one token's parameters).
    No notebook calls it; it works behind the helpers of ``09_modern_architectures``."""

    label: str
    feature: str
    model: str
    how: str
    total_before: int
    total: int
    active_before: int
    active: int

    @property
    def delta(self) -> int:
        """The change of the total."""
        return self.total - self.total_before

    @property
    def delta_active(self) -> int:
        """The change of the active parameters."""
        return self.active - self.active_before


def _value(value: Any) -> str:
    return "null" if value is None else str(value).lower() if isinstance(value, bool) else f"{value:,}"


def _change_effect(change: Change) -> Effect:
    """The counts before and after one :class:`Change`, by the engine (only the rows of its ``part``, if any)."""
    configs = change.configs()
    before, after = (count_model(c) for c in configs)
    how = f"{change.key}: {_value(change.before)} → {_value(change.value)}"
    if not change.part:
        return Effect(change.label, change.feature, change.model, how, before.total, after.total, before.active,
                      after.active)
    old = {p.name for p in param_table(configs[0])}
    rows = sum(p.count for p in _attention_bias_rows(param_table(configs[1]))[change.part] if p.name not in old)
    what = "q, k, v" if change.part == QKV_BIASES else "o"
    return Effect(change.label, change.feature, change.model, f"{how} (its {what} rows)", before.total,
                  before.total + rows, before.active, before.active + rows)


def _row_effect(change: RowChange) -> Effect:
    """The effect of one :class:`RowChange`: the rows it adds or removes, counted in the engine's table.

    A β added to an RMSNorm has the length of its γ, so a LayerNorm model holds the norm rows twice; a
    feed-forward without its gate lacks the ``gate_proj`` rows.
    """
    c = parse_config(raw_config(change.model), name=change.model)
    result = count_model(c)
    rows = sum(p.count for p in param_table(c) if p.kind == change.kind and p.name.endswith(change.suffix))
    what = change.suffix.rsplit(".", 2)[-2]
    how = f"no key: the {what} rows" if change.present else "no key: one β per norm γ"
    before = result.total - rows if change.present else result.total
    active = result.active - rows if change.present else result.active
    return Effect(change.label, change.feature, change.model, how, before, before + rows, active, active + rows)


def design_effects() -> list[Effect]:
    """Every choice's exact effect, in the order of :data:`FEATURES`: :data:`CHANGES` and :data:`ROW_CHANGES`.

    Introduced in ``09_modern_architectures``.
    """
    effects = [_change_effect(c) for c in CHANGES] + [_row_effect(c) for c in ROW_CHANGES]
    return sorted(effects, key=lambda e: FEATURES.index(e.feature))


def walk(model: str, steps: Sequence[tuple[str, Any]]) -> list[tuple[str, int, int]]:
    """Change one key after another on a shipped config: ``(key = value, total, active)`` after each step.

    Introduced in ``09_modern_architectures``. The first row is the shipped model itself (``model``, its counts).
    """
    raw = dict(raw_config(model))
    result = count_model(parse_config(raw, name=model))
    rows = [(model, result.total, result.active)]
    for key, value in steps:
        raw[key] = value
        result = count_model(parse_config(raw, name=model))
        rows.append((f"{key} = {_value(value)}", result.total, result.active))
    return rows
