"""Memory of a model in bytes: weights by dtype, training state, KV cache and (estimated) activations.

Introduced in ``08_flops_and_memory``; ``python -m helpers memory`` prints it. It never imports torch.

Exact parts come from the parameter table (N parameters in N_t tensors):

* weights: ``N × bytes per value`` (fp32 4, fp16/bf16 2, int8 1, int4 ½ rounded up to whole bytes;
  quantisation scales and zero points are not included);
* training state with AdamW (torch's ``AdamW`` keeps ``exp_avg`` and ``exp_avg_sq`` of each
  parameter's shape and one fp32 ``step`` scalar per parameter tensor):
  fp32: weights + gradients + 2 moments = 16 bytes per parameter, + 4 bytes per tensor;
  mixed precision: fp16 weights + fp16 gradients + fp32 master weights + 2 fp32 moments
  = 16 bytes per parameter, + 4 bytes per tensor;
* KV cache of a decoder: ``2 · L · A_kv · d_k · S · B`` values (a key and a value per layer, KV head,
  head dimension, position and sequence); GPT-2 has ``A_kv = A``; BERT, an encoder, keeps none.

Activations are an ESTIMATE: Korthikanti et al. 2022 (*Reducing Activation Recomputation in Large
Transformer Models*, eq. 2) give ``S·B·H·(34 + 5·A·S/H)`` bytes per layer for a GPT-style layer in
16-bit with no recomputation and no parallelism; other layer shapes (SwiGLU, GQA, no dropout) and
framework temporaries change the constant.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from .config import ModelConfig
from .params import evaluate, param_layout, param_table, render, total
from .report import fmt_int, table

# bits per stored value
DTYPE_BITS: dict[str, int] = {"fp32": 32, "fp16": 16, "bf16": 16, "int8": 8, "int4": 4}

ADAMW_FP32 = "fp32 AdamW"
ADAMW_MIXED = "mixed-precision AdamW"

# part -> bytes as a formula over N (parameters) and N_t (parameter tensors)
TRAINING_STATE: dict[str, dict[str, str]] = {
    ADAMW_FP32: {
        "weights (fp32)": "4*N",
        "gradients (fp32)": "4*N",
        "AdamW exp_avg (fp32)": "4*N",
        "AdamW exp_avg_sq (fp32)": "4*N",
        "AdamW step (one fp32 scalar per tensor)": "4*N_t",
    },
    ADAMW_MIXED: {
        "weights (fp16)": "2*N",
        "gradients (fp16)": "2*N",
        "master weights (fp32)": "4*N",
        "AdamW exp_avg (fp32)": "4*N",
        "AdamW exp_avg_sq (fp32)": "4*N",
        "AdamW step (one fp32 scalar per tensor)": "4*N_t",
    },
}

# the values each family holds in its KV cache (times bytes per value b) are in helpers.families

ACTIVATIONS_PER_LAYER = "34*S*B*H + 5*A*S**2*B"  # = S·B·H·(34 + 5·A·S/H), Korthikanti et al. 2022
ACTIVATIONS_SOURCE = "Korthikanti et al. 2022, eq. 2: 16-bit, no recomputation, no parallelism"


def _bytes(values: int, dtype: str) -> int:
    """Whole bytes that hold ``values`` values of ``dtype`` (int4 packs two per byte, rounded up)."""
    return -(-values * DTYPE_BITS[dtype] // 8)


def parameter_tensors(config: ModelConfig) -> int:
    """N_t: the number of parameter tensors (a tied weight once), one AdamW ``step`` each.

    Introduced in ``08_flops_and_memory``.
    """
    return param_layout(config).tensors


def weight_bytes(config: ModelConfig, dtype: str) -> int:
    """Bytes of the weights alone in ``dtype`` (fp32, fp16, bf16, int8, int4), exact.

    Introduced in ``08_flops_and_memory``.
    """
    return _bytes(param_layout(config).total, dtype)


@dataclass(frozen=True)
class MemoryPart:
    """One part of a memory budget: what it is, its formula and its exact bytes."""

    name: str
    formula: str
    bytes: int


def training_state(config: ModelConfig, recipe: str = ADAMW_MIXED) -> list[MemoryPart]:
    """The resident training state of ``recipe`` (``ADAMW_FP32`` or ``ADAMW_MIXED``), part by part.

    Introduced in ``08_flops_and_memory``. Activations are not included (see :func:`activation_bytes`).
    """
    layout = param_layout(config)
    sizes = {"N": layout.total, "N_t": layout.tensors}
    return [MemoryPart(name, formula, evaluate(formula, config, **sizes))
            for name, formula in TRAINING_STATE[recipe].items()]


def kv_cache_formula(config: ModelConfig) -> str | None:
    """Values in the KV cache as a formula over the config's symbols, B and S; None for an encoder.

    Introduced in ``08_flops_and_memory``.
    """
    kv_cache = config.family.kv_cache
    return None if kv_cache is None else kv_cache(config)


def kv_cache_bytes(config: ModelConfig, batch: int, seq_len: int, dtype: str = "fp16") -> int | None:
    """Bytes of the keys and values a decoder keeps for ``batch`` sequences of ``seq_len`` tokens.

    ``2 · L · A_kv · d_k · S · B · bytes per value`` (a sliding window caps S: Mistral keeps ``min(S, W − 1)``
    positions); None for BERT and RoBERTa (encoders: no cache).
    Introduced in ``08_flops_and_memory``.
    """
    formula = kv_cache_formula(config)
    if formula is None:
        return None
    return _bytes(evaluate(formula, config, B=batch, S=seq_len), dtype)


def activation_bytes_per_layer(config: ModelConfig, batch: int, seq_len: int) -> int:
    """ESTIMATE of one layer's stored activations in 16-bit, no recomputation: S·B·H·(34 + 5·A·S/H).

    Korthikanti et al. 2022, eq. 2. Introduced in ``08_flops_and_memory``.
    """
    return evaluate(ACTIVATIONS_PER_LAYER, config, B=batch, S=seq_len)


def activation_bytes(config: ModelConfig, batch: int, seq_len: int) -> int:
    """ESTIMATE of the activations of all L layers (embeddings, final norm and logits not included).

    Introduced in ``08_flops_and_memory``.
    """
    return config["L"] * activation_bytes_per_layer(config, batch, seq_len)


@dataclass(frozen=True)
class Memory:
    """Every memory figure of a model for one batch shape and one inference dtype."""

    config: ModelConfig
    batch: int
    seq_len: int
    dtype: str

    @property
    def parameters(self) -> int:
        return param_layout(self.config).total

    def weights(self) -> dict[str, int]:
        """Bytes of the weights in every dtype."""
        return {dtype: weight_bytes(self.config, dtype) for dtype in DTYPE_BITS}

    def kv_cache(self) -> int | None:
        return kv_cache_bytes(self.config, self.batch, self.seq_len, self.dtype)

    def activations(self) -> int:
        """ESTIMATE (Korthikanti et al. 2022)."""
        return activation_bytes(self.config, self.batch, self.seq_len)

    def inference(self) -> int:
        """Weights in ``dtype`` + KV cache in ``dtype`` (activations of one forward pass not included)."""
        return weight_bytes(self.config, self.dtype) + (self.kv_cache() or 0)

    def training(self) -> int:
        """Mixed-precision AdamW state + estimated 16-bit activations (the recipe the estimate assumes)."""
        return sum((part.bytes for part in training_state(self.config, ADAMW_MIXED)), 0) + self.activations()


def fmt_bytes(n: int) -> str:
    """Bytes in binary units with two decimals: ``12.55 GiB`` (1 GiB = 2³⁰ bytes).

    Introduced in ``08_flops_and_memory``.
    """
    for unit, size in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= size:
            return f"{n / size:.2f} {unit}"
    return f"{n} B"


def memory_breakdown(memory: Memory) -> str:
    """The text report of ``python -m helpers memory``: weights, training state, KV cache, activations.

    Introduced in ``08_flops_and_memory``.
    """
    c, B, S = memory.config, memory.batch, memory.seq_len
    out = [f"N = {fmt_int(memory.parameters)} parameters in N_t = {parameter_tensors(c)} tensors; B = {B}, S = {S}"]
    rows = [(dtype, f"{Fraction(DTYPE_BITS[dtype], 8)}", fmt_int(n), fmt_bytes(n)) for dtype, n in memory.weights().items()]
    out += ["", "weights", table(("dtype", "bytes/param", "bytes", "size"), rows, right=(1, 2, 3))]
    for recipe in TRAINING_STATE:
        parts = training_state(c, recipe)
        whole = sum((p.bytes for p in parts), 0)
        rows = [(p.name, render(p.formula), fmt_int(p.bytes), fmt_bytes(p.bytes)) for p in parts]
        rows.append(("total", "16N + 4N_t", fmt_int(whole), fmt_bytes(whole)))
        out += ["", f"training state, {recipe}", table(("part", "formula", "bytes", "size"), rows, right=(2, 3))]
    kv = memory.kv_cache()
    formula = kv_cache_formula(c)
    out.append("")
    if kv is None:
        out.append("KV cache: none (an encoder attends over its whole input at once; nothing is kept between steps)")
    else:
        out.append(f"KV cache ({memory.dtype}): {render(formula)}·{Fraction(DTYPE_BITS[memory.dtype], 8)} bytes"
                   f" = {fmt_int(kv)} bytes ({fmt_bytes(kv)})")
    per_layer, acts = activation_bytes_per_layer(c, B, S), memory.activations()
    out += [f"activations, ESTIMATE ({ACTIVATIONS_SOURCE}):",
            f"  per layer S·B·H·(34 + 5A·S/H) = {fmt_int(per_layer)} bytes; L = {c['L']} layers: "
            f"{fmt_int(acts)} bytes ({fmt_bytes(acts)})"]
    cache = "KV cache" if kv is not None else "no KV cache"
    rows = [(f"inference ({memory.dtype} weights + {cache})", fmt_int(memory.inference()), fmt_bytes(memory.inference())),
            (f"training ({ADAMW_MIXED} state + activations, an estimate)", fmt_int(memory.training()),
             fmt_bytes(memory.training()))]
    out += ["", table(("total", "bytes", "size"), rows, right=(1, 2))]
    return "\n".join(out)


def to_json(memory: Memory) -> dict[str, object]:
    """The ``python -m helpers memory --json`` document (bytes as exact integers).

    Introduced in ``08_flops_and_memory``.
    """
    c = memory.config
    return {
        "model": c.name,
        "parameters": memory.parameters,
        "parameter_tensors": parameter_tensors(c),
        "batch": memory.batch,
        "seq_len": memory.seq_len,
        "dtype": memory.dtype,
        "weights": memory.weights(),
        "training_state": {
            recipe: {"parts": {p.name: p.bytes for p in training_state(c, recipe)},
                     "total": sum((p.bytes for p in training_state(c, recipe)), 0)}
            for recipe in TRAINING_STATE
        },
        "kv_cache": memory.kv_cache(),
        "activations": {"estimate": True, "source": ACTIVATIONS_SOURCE,
                        "per_layer": activation_bytes_per_layer(c, memory.batch, memory.seq_len),
                        "total": memory.activations()},
        "inference": memory.inference(),
        "training": memory.training(),
    }
