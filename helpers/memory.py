"""Memory of a model in bytes: weights by dtype, training state, KV cache and (estimated) activations.

Introduced in ``08_flops_and_memory``; ``python -m helpers memory`` prints it. It never imports torch.

Exact parts come from the parameter table (N parameters in N_t tensors):

* weights: ``N × bytes per value`` (fp32 4, fp16/bf16 2, int8 1, int4 ½ rounded up to whole bytes;
  quantisation scales and zero points are not included there: :func:`quantized_weight_bytes` adds them);
* training state with AdamW (torch's ``AdamW`` keeps ``exp_avg`` and ``exp_avg_sq`` of each
  parameter's shape and one fp32 ``step`` scalar per parameter tensor):
  fp32: weights + gradients + 2 moments = 16 bytes per parameter, + 4 bytes per tensor (also what
  ``torch.autocast`` keeps: it casts weights to 16 bits per operation, transiently, and leaves them,
  their gradients and the moments in fp32);
  mixed precision as ZeRO lays it out (Rajbhandari et al. 2020, §3.1: 2 + 2 + 12 = 16 bytes):
  fp16 weights + fp16 gradients + fp32 master weights + 2 fp32 moments = 16 bytes per parameter, + 4 bytes
  per tensor; other conventions keep fp32 gradients too and print 18 or 20 (Megatron-LM's distributed
  optimizer docs, Hugging Face's Trainer docs, the Ultra-Scale Playbook: :data:`STATE_SOURCES`);
* KV cache of a decoder: ``2 · L · A_kv · d_k · S · B`` values (a key and a value per layer, KV head,
  head dimension, position and sequence); GPT-2 has ``A_kv = A``; BERT, an encoder, keeps none. A family may add
  fixed-size terms (its ``state``, :class:`~helpers.families.base.StateTerm`), each with its own byte width:
  Qwen3-Next's linear-attention layers keep a convolution state at the model's dtype and a recurrent state in fp32,
  whatever S is. The cache's bytes are every byte it holds after S tokens, whatever its kind.

Activations are an ESTIMATE: Korthikanti et al. 2022 (*Reducing Activation Recomputation in Large
Transformer Models*, §4.1, eq. 1) give ``S·B·H·(34 + 5·A·S/H)`` bytes per layer for a GPT-style layer in
16-bit with no recomputation, no parallelism and the attention matrices materialised; the ``5·A·S²·B``
are all heads' softmax output (2), softmax dropout mask (1) and dropout output (2). Recomputing that
attention core (their §5, "selective") leaves ``34·S·B·H``, as FlashAttention (Dao et al. 2022), which
never stores an ``S×S`` matrix, does; full recomputation keeps only each layer's input, ``2·S·B·H``. Other
layer shapes (SwiGLU, GQA, no dropout) and framework temporaries change the constant.
"""

from __future__ import annotations

import ast

from dataclasses import dataclass
from fractions import Fraction

from .config import ConfigError, ModelConfig
from .params import EMBEDDINGS, LM_HEAD, evaluate, param_layout, render
from .quantized import stored_weights
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

# Other published conventions for mixed-precision AdamW state (each from its source; torch's AdamW also keeps
# the fp32 step scalars, which no source counts: they are added here as in every recipe of the engine). Not
# printed by the command line, which shows the two layouts above; notebook 08 compares them all.
MEGATRON_BF16 = "Megatron-LM, bf16 params, fp32 main grads"
MEGATRON_FP16 = "Megatron-LM, fp16 params, fp16 grads"
HF_TRAINER = "Hugging Face Trainer, mixed precision"
PLAYBOOK = "Ultra-Scale Playbook, bf16 + fp32 grads"
CONVENTIONS: dict[str, dict[str, str]] = {
    MEGATRON_BF16: {
        "weights (bf16)": "2*N",
        "main gradients (fp32)": "4*N",
        "main weights (fp32)": "4*N",
        "AdamW exp_avg (fp32)": "4*N",
        "AdamW exp_avg_sq (fp32)": "4*N",
        "AdamW step (one fp32 scalar per tensor)": "4*N_t",
    },
    MEGATRON_FP16: {
        "weights (fp16)": "2*N",
        "gradients (fp16)": "2*N",
        "main gradients (fp32)": "4*N",
        "main weights (fp32)": "4*N",
        "AdamW exp_avg (fp32)": "4*N",
        "AdamW exp_avg_sq (fp32)": "4*N",
        "AdamW step (one fp32 scalar per tensor)": "4*N_t",
    },
    HF_TRAINER: {
        "weights (fp32)": "4*N",
        "weights, 16-bit copy": "2*N",
        "gradients (fp32)": "4*N",
        "AdamW exp_avg (fp32)": "4*N",
        "AdamW exp_avg_sq (fp32)": "4*N",
        "AdamW step (one fp32 scalar per tensor)": "4*N_t",
    },
    PLAYBOOK: {
        "weights (bf16)": "2*N",
        "gradients (bf16)": "2*N",
        "weights (fp32)": "4*N",
        "gradients (fp32)": "4*N",
        "AdamW exp_avg (fp32)": "4*N",
        "AdamW exp_avg_sq (fp32)": "4*N",
        "AdamW step (one fp32 scalar per tensor)": "4*N_t",
    },
}

# where each layout is stated (the figure per parameter, step scalars left out, as the source prints it)
STATE_SOURCES: dict[str, str] = {
    ADAMW_FP32: "plain fp32 training with torch.optim.AdamW: 4 + 4 + 4 + 4",
    ADAMW_MIXED: "Rajbhandari et al. 2020 (ZeRO), §3.1: 2 + 2 + 12 = 16 (fp16 weights and gradients; fp32 master "
                 "weights, momentum and variance)",
    MEGATRON_BF16: "Megatron-LM docs, Distributed Optimizer (docs/api-guide/dist_optimizer.md): 18 bytes per "
                   "parameter, non-distributed",
    MEGATRON_FP16: "Megatron-LM docs, Distributed Optimizer (docs/api-guide/dist_optimizer.md): 20 bytes per "
                   "parameter, non-distributed",
    HF_TRAINER: "transformers docs, Model training anatomy (Anatomy of Model's Memory): 6 for weights (fp32 + a "
                "16-bit copy), 4 for fp32 gradients, 8 for AdamW = 18",
    PLAYBOOK: "Tazi et al. 2025, The Ultra-Scale Playbook, Memory usage in Transformers: bf16 weights and gradients "
              "2 + 2, fp32 weights and gradients 4 + 4, Adam moments 4 + 4 = 20",
}

# torch.autocast: the same resident state as fp32 AdamW (its fp32 weights are the master copy); the 16-bit
# copies of the weights are made per operation and live only until the backward pass has used them.
# Not printed by the command line (same bytes as fp32); named so that a check can say which layout it verified.
ADAMW_AUTOCAST = "AdamW under torch.autocast"
RECIPES: dict[str, dict[str, str]] = {**TRAINING_STATE, ADAMW_AUTOCAST: dict(TRAINING_STATE[ADAMW_FP32]), **CONVENTIONS}

# the values each family holds in its KV cache (times bytes per value b) are in helpers.families

ACTIVATIONS_PER_LAYER = "34*S*B*H + 5*A*S**2*B"  # = S·B·H·(34 + 5·A·S/H), Korthikanti et al. 2022
ACTIVATIONS_SOURCE = "Korthikanti et al. 2022, eq. 1: 16-bit, no recomputation, no parallelism"

# bytes per layer, Korthikanti et al. 2022: eq. 1 (§4.1), eq. 6 (§5, selective), §5 and Table 2 (full)
NO_RECOMPUTE, SELECTIVE, FULL = "none", "selective", "full"
ACTIVATIONS_BY_RECOMPUTE: dict[str, str] = {
    NO_RECOMPUTE: ACTIVATIONS_PER_LAYER,  # everything the backward pass reads, S×S matrices included
    SELECTIVE: "34*S*B*H",  # attention core recomputed (or never stored: FlashAttention)
    FULL: "2*S*B*H",  # only the layer's input; the whole layer is run again in the backward pass
}
# the 5·A·S²·B of eq. 1, all heads together (Korthikanti et al. 2022, §4.1)
ATTENTION_CORE: dict[str, str] = {
    "softmax output (16-bit)": "2*A*S**2*B",
    "softmax dropout mask (1 byte)": "A*S**2*B",
    "dropout output (16-bit)": "2*A*S**2*B",
}


def values_bytes(values: int, dtype: str, bits: int | None = None) -> int:
    """Whole bytes that hold ``values`` values of ``dtype`` (int4 packs two per byte, rounded up), or of ``bits``
    each where given (a state kept at a fixed width).

    No notebook calls it; it works behind the helpers of ``07_decoder_llms``.
    """
    return -(-values * (DTYPE_BITS[dtype] if bits is None else bits) // 8)


def parameter_tensors(config: ModelConfig) -> int:
    """N_t: the number of parameter tensors (a tied weight once), one AdamW ``step`` each.

    Introduced in ``08_flops_and_memory``.
    """
    return param_layout(config).tensors


def weight_bytes(config: ModelConfig, dtype: str) -> int:
    """Bytes of the weights alone in ``dtype`` (fp32, fp16, bf16, int8, int4), exact.

    Introduced in ``08_flops_and_memory``.
    """
    return values_bytes(param_layout(config).total, dtype)


@dataclass(frozen=True)
class MemoryPart:
    """One part of a memory budget: what it is, its formula and its exact bytes.
    No notebook calls it; it works behind the helpers of ``08_flops_and_memory``."""

    name: str
    formula: str
    bytes: int


def bytes_per_parameter(recipe: str) -> int:
    """Bytes of training state per parameter under ``recipe``, the per-tensor step scalars left out (16, 18, 20).

    Introduced in ``08_flops_and_memory``. Read from the recipe's formulas (each part ``k*N``); the source of
    each recipe is :data:`STATE_SOURCES`.
    """
    return sum(int(formula.removesuffix("*N")) for formula in RECIPES[recipe].values() if formula.endswith("*N"))


def training_state(config: ModelConfig, recipe: str = ADAMW_MIXED) -> list[MemoryPart]:
    """The resident training state of ``recipe`` (``ADAMW_FP32``, ``ADAMW_MIXED`` or ``ADAMW_AUTOCAST``), part by part.

    Introduced in ``08_flops_and_memory``. Activations are not included (see :func:`activation_bytes`).
    ``ADAMW_MIXED`` is the layout of ZeRO (Rajbhandari et al. 2020, §3.1): fp16 weights and gradients for
    the passes, fp32 master weights and moments for the update, 16 bytes a parameter. ``MEGATRON_BF16``,
    ``MEGATRON_FP16``, ``HF_TRAINER`` and ``PLAYBOOK`` are the 18- and 20-byte conventions that also keep fp32
    gradients (:data:`STATE_SOURCES`). ``ADAMW_AUTOCAST`` keeps what
    ``torch.autocast`` training keeps: fp32 weights, gradients and moments, the same bytes as ``ADAMW_FP32``
    (the 16-bit copies it makes per operation are transient).
    """
    layout = param_layout(config)
    sizes = {"N": layout.total, "N_t": layout.tensors}
    return [MemoryPart(name, formula, evaluate(formula, config, **sizes))
            for name, formula in RECIPES[recipe].items()]


def kv_cache_formula(config: ModelConfig) -> str | None:
    """Values in the KV cache as a formula over the config's symbols, B and S; None for an encoder.

    Introduced in ``07_decoder_llms``.
    """
    kv_cache = config.family.kv_cache
    if kv_cache is not None:
        config.check_runs(cache=True)  # a model (or a cache) transformers cannot run: refused, naming the key
    return None if kv_cache is None else kv_cache(config)


def cache_parts(config: ModelConfig, batch: int, seq_len: int, dtype: str = "fp16") -> dict[str, int] | None:
    """The bytes of each part of a decoder's cache after ``seq_len`` tokens: ``"keys and values"``, then each fixed-size
    term of its family's ``state`` at its own width (Qwen3-Next: ``"convolution state"`` in ``dtype``, ``"recurrent
    state"`` in fp32); None for an encoder.

    No notebook calls it; it works behind the helpers of ``07_decoder_llms``.
    """
    formula = kv_cache_formula(config)
    if formula is None:
        return None
    parts = {"keys and values": values_bytes(evaluate(formula, config, B=batch, S=seq_len), dtype)}
    for term in state_terms(config):
        parts[term.name] = values_bytes(evaluate(term.values, config, B=batch, S=seq_len), dtype, term.bits)
    return parts


def state_terms(config: ModelConfig) -> tuple:
    """The family's fixed-size cache terms (:class:`~helpers.families.base.StateTerm`), none for most families.

    No notebook calls it; it works behind the helpers of ``07_decoder_llms``.
    """
    return () if config.family.state is None else config.family.state(config)


def kv_cache_bytes(config: ModelConfig, batch: int, seq_len: int, dtype: str = "fp16") -> int | None:
    """Bytes of the cache a decoder keeps for ``batch`` sequences of ``seq_len`` tokens: its keys and values, and any
    fixed-size state its family keeps beside them (:func:`cache_parts`).

    ``2 · L · A_kv · d_k · S · B · bytes per value`` (a sliding window caps S: Mistral keeps ``min(S, W − 1)``
    positions); None for BERT and RoBERTa (encoders: no cache).
    Introduced in ``07_decoder_llms``.
    """
    parts = cache_parts(config, batch, seq_len, dtype)
    return None if parts is None else sum(parts.values(), 0)


def activation_bytes_per_layer(config: ModelConfig, batch: int, seq_len: int, recompute: str = NO_RECOMPUTE) -> int:
    """ESTIMATE of one layer's stored activations in 16-bit (Korthikanti et al. 2022).

    ``recompute``: ``"none"`` (eq. 1, §4.1): S·B·H·(34 + 5·A·S/H), the attention matrices materialised;
    ``"selective"`` (eq. 6, §5): 34·S·B·H, the attention core recomputed in the backward pass, which is also
    what FlashAttention (Dao et al. 2022) leaves, storing no S×S matrix; ``"full"`` (§5, Table 2): 2·S·B·H,
    the layer's input only. Introduced in ``08_flops_and_memory``.
    """
    if recompute not in ACTIVATIONS_BY_RECOMPUTE:
        raise ValueError(f"recompute must be one of {', '.join(ACTIVATIONS_BY_RECOMPUTE)}, got {recompute!r}")
    return evaluate(ACTIVATIONS_BY_RECOMPUTE[recompute], config, B=batch, S=seq_len)


def stacked_layers(config: ModelConfig) -> int:
    """The layers whose activations are stored: L, plus an encoder–decoder's L_d decoder layers (T5).

    No notebook calls it; it works behind the helpers of ``08_flops_and_memory``.
    """
    return config["L"] + config.sizes.get("L_d", 0)


def activation_bytes(config: ModelConfig, batch: int, seq_len: int, recompute: str = NO_RECOMPUTE) -> int:
    """ESTIMATE of the activations of all layers (embeddings, final norm and logits not included).

    Introduced in ``08_flops_and_memory``. ``recompute`` as in :func:`activation_bytes_per_layer`. An
    encoder–decoder (T5) counts its L + L_d layers alike: a decoder layer's cross-attention is left out.
    """
    return stacked_layers(config) * activation_bytes_per_layer(config, batch, seq_len, recompute)


def attention_core_bytes(config: ModelConfig, batch: int, seq_len: int) -> dict[str, int]:
    """The ``5·A·S²·B`` bytes of Korthikanti et al.'s eq. 1 per layer, tensor by tensor, all heads together.

    Introduced in ``08_flops_and_memory``. What the backward pass reads of the ``S×S`` attention matrices when
    they are materialised: the softmax output (16-bit), the dropout mask (1 byte) and the dropout output
    (16-bit), each ``A·S²·B`` values. A layer without attention dropout (LLaMA) stores the softmax output only.
    """
    return {name: evaluate(formula, config, B=batch, S=seq_len) for name, formula in ATTENTION_CORE.items()}


# --- quantised weights: what 4 bits really cost ----------------------------------------------------------

def quantized_weight_bytes(config: ModelConfig, bits: int = 4, group_size: int = 128, scale_bits: int = 16,
                           zero_bits: int = 0, keep: tuple[str, ...] = (EMBEDDINGS, LM_HEAD),
                           keep_bits: int = 16) -> int:
    """Bytes of the weights when the weight matrices are quantised to ``bits`` with one scale per group.

    Introduced in ``08_flops_and_memory``. Group-wise formats (GPTQ, AWQ and others) store each weight matrix
    in ``bits`` per value plus, for every ``group_size`` consecutive values (along a row of an ``nn.Linear``
    weight when its input width is a multiple of ``group_size``, as in every model of this series), a
    ``scale_bits`` scale and a ``zero_bits`` zero point: ``bits + (scale_bits + zero_bits)/group_size`` bits a
    weight, 4.125 for 4 bits with a 16-bit scale per 128, 4.15625 with a zero point packed in 4 bits too (as
    GPTQ's and AWQ's checkpoints store ``qzeros``: eight 4-bit zero points an int32). The components in
    ``keep`` (the embedding tables and the LM head by default) and every vector (biases, norm gains) stay at
    ``keep_bits``. Rounded up to whole bytes.
    """
    stored = 0  # bits
    for p, n in param_layout(config).rows():
        if len(p.shape) == 2 and p.component not in keep:
            groups = -(-p.count // group_size)
            stored += n * (p.count * bits + groups * (scale_bits + zero_bits))
        else:
            stored += n * p.count * keep_bits
    return -(-stored // 8)


@dataclass(frozen=True)
class Memory:
    """Every memory figure of a model for one batch shape and one inference dtype.
    Introduced in ``08_flops_and_memory``."""

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

    def kv_cache_full(self) -> int | None:
        """Bytes full multi-head keys and values would take where the cache holds a compressed form instead.

        DeepSeek-V3's latent attention caches ``L·(r_kv + d_rope)`` values per token (:meth:`kv_cache`); every
        head's key (d_k) and value (d_v), as attention uses them after ``kv_b_proj``, would be ``L·A·(d_k + d_v)``.
        None for a family whose cache already holds full keys and values (its family has no ``kv_cache_full``).
        Used in ``09_modern_architectures`` (MLA against full keys and values).
        """
        full = self.config.family.kv_cache_full
        if full is None:
            return None
        return values_bytes(evaluate(full(self.config), self.config, B=self.batch, S=self.seq_len), self.dtype)

    def activations(self) -> int:
        """ESTIMATE (Korthikanti et al. 2022)."""
        return activation_bytes(self.config, self.batch, self.seq_len)

    def inference(self) -> int:
        """Weights in ``dtype`` + KV cache in ``dtype`` (activations of one forward pass not included)."""
        return weight_bytes(self.config, self.dtype) + (self.kv_cache() or 0)

    def inference_stored(self) -> int | None:
        """A pre-quantized checkpoint's stored weights (:func:`~helpers.quantized.stored_weights`) + KV cache in
        ``dtype``; None without a ``quantization_config`` or where its method is refused."""
        stored, _ = _stored(self.config)
        return None if stored is None else stored.total + (self.kv_cache() or 0)

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


def _sum_at_top(formula: str) -> bool:
    """Whether ``formula`` is a sum or difference outside any bracket (``a + b``, not ``L*(a + b)``): it needs one
    before ``·b``."""
    top = ast.parse(formula, mode="eval").body
    return isinstance(top, ast.BinOp) and isinstance(top.op, (ast.Add, ast.Sub))


def _layers_label(c: ModelConfig) -> str:
    """``L = 32 layers``, or ``L + L_d = 12 layers (...)`` for an encoder–decoder."""
    if "L_d" in c.sizes:
        return f"L + L_d = {stacked_layers(c)} layers (the decoder's cross-attention not counted)"
    return f"L = {c['L']} layers"


def memory_report(memory: Memory) -> str:
    """The text report of ``python -m helpers memory``: weights, training state, KV cache, activations.

    No notebook calls it; it works behind the helpers of ``00_overview``.
    """
    c, B, S = memory.config, memory.batch, memory.seq_len
    out = [f"N = {fmt_int(memory.parameters)} parameters in N_t = {parameter_tensors(c)} tensors; B = {B}, S = {S}"]
    rows = [(dtype, f"{Fraction(DTYPE_BITS[dtype], 8)}", fmt_int(n), fmt_bytes(n)) for dtype, n in memory.weights().items()]
    out += ["", "weights", table(("dtype", "bytes/param", "bytes", "size"), rows, right=(1, 2, 3))]
    out += _stored_text(c)
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
        values = f"({render(formula)})" if _sum_at_top(formula) else render(formula)
        out.append(f"KV cache ({memory.dtype}): {values}·{Fraction(DTYPE_BITS[memory.dtype], 8)} bytes"
                   f" = {fmt_int(kv)} bytes ({fmt_bytes(kv)})")
        terms = state_terms(c)
        if terms:  # fixed-size state beside the keys and values: each part at its own width
            parts = cache_parts(c, B, S, memory.dtype)
            width = Fraction(DTYPE_BITS[memory.dtype], 8)
            out[-1] = f"KV cache ({memory.dtype}): {fmt_int(kv)} bytes ({fmt_bytes(kv)}) in all, of which"
            out.append(f"  keys and values: {values}·{width} bytes = {fmt_int(parts['keys and values'])} bytes")
            for term in terms:
                size = width if term.bits is None else Fraction(term.bits, 8)
                fixed = [name for name, bits in DTYPE_BITS.items() if bits == term.bits]
                kind = memory.dtype if term.bits is None else f"{(fixed or [f'{term.bits}-bit'])[0]} whatever the dtype"
                text = f"({render(term.values)})" if _sum_at_top(term.values) else render(term.values)
                out.append(f"  {term.name} ({kind}, constant in S): {text}·{size} bytes = {fmt_int(parts[term.name])} "
                           "bytes")
        full = memory.kv_cache_full()
        if full is not None and kv:  # a compressed cache (MLA's latent): beside what full keys and values would take
            out.append(f"  (a compressed cache: full multi-head keys and values, "
                       f"{render(c.family.kv_cache_full(c))}·{Fraction(DTYPE_BITS[memory.dtype], 8)} bytes, would take"
                       f" {fmt_int(full)} bytes ({fmt_bytes(full)}), ×{full / kv:.2f})")
    per_layer, acts = activation_bytes_per_layer(c, B, S), memory.activations()
    out += [f"activations, ESTIMATE ({ACTIVATIONS_SOURCE}):",
            f"  per layer S·B·H·(34 + 5A·S/H) = {fmt_int(per_layer)} bytes; {_layers_label(c)}: "
            f"{fmt_int(acts)} bytes ({fmt_bytes(acts)})"]
    cache = "KV cache" if kv is not None else "no KV cache"
    rows = [(f"inference ({memory.dtype} weights + {cache})", fmt_int(memory.inference()), fmt_bytes(memory.inference())),
            (f"training ({ADAMW_MIXED} state + activations, an estimate)", fmt_int(memory.training()),
             fmt_bytes(memory.training()))]
    stored = memory.inference_stored()
    if stored is not None:  # a pre-quantized checkpoint: what serving it as published holds
        rows.insert(1, (f"inference (the checkpoint's stored weights + {cache})", fmt_int(stored), fmt_bytes(stored)))
    out += ["", table(("total", "bytes", "size"), rows, right=(1, 2))]
    return "\n".join(out)


def memory_json(memory: Memory) -> dict[str, object]:
    """The ``python -m helpers memory --json`` document (bytes as exact integers).

    No notebook calls it; it works behind the helpers of ``00_overview``.
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
        **_stored_json(c),
        "training_state": {
            recipe: {"parts": {p.name: p.bytes for p in training_state(c, recipe)},
                     "total": sum((p.bytes for p in training_state(c, recipe)), 0)}
            for recipe in TRAINING_STATE
        },
        "kv_cache": memory.kv_cache(),
        **({"kv_cache_parts": cache_parts(c, memory.batch, memory.seq_len, memory.dtype)} if state_terms(c) else {}),
        **({} if memory.kv_cache_full() is None else {"kv_cache_full": memory.kv_cache_full()}),
        "activations": {"estimate": True, "source": ACTIVATIONS_SOURCE,
                        "per_layer": activation_bytes_per_layer(c, memory.batch, memory.seq_len),
                        "total": memory.activations()},
        "inference": memory.inference(),
        **({} if memory.inference_stored() is None else {"inference_stored": memory.inference_stored()}),
        "training": memory.training(),
    }


def _stored(config: ModelConfig) -> tuple[object, str | None]:
    """The checkpoint's stored weights (:func:`~helpers.quantized.stored_weights`) or the one line refusing them."""
    try:
        return stored_weights(config), None
    except ConfigError as error:
        return None, str(error)


def _stored_json(config: ModelConfig) -> dict[str, object]:
    """``stored_weight_bytes`` (and by dtype) for a config with a ``quantization_config``; nothing without one."""
    if config.quantization is None:
        return {}
    stored, refused = _stored(config)
    if stored is None:
        return {"stored_weight_bytes": None, "stored_weight_bytes_refused": refused}
    return {"stored_weight_bytes": stored.total, "stored_weight_bytes_by_dtype": dict(stored.by_dtype),
            "stored_weight_layout": f"{stored.method}: {stored.layout}"}


def _stored_text(config: ModelConfig) -> list[str]:
    """The text table of a quantized checkpoint's stored weights by dtype (or its one-line refusal)."""
    if config.quantization is None:
        return []
    stored, refused = _stored(config)
    if stored is None:
        return ["", f"stored weights (quantization_config): not computed: {refused}"]
    rows = [(dtype, fmt_int(n), fmt_bytes(n)) for dtype, n in stored.by_dtype.items()]
    rows.append(("stored_weight_bytes", fmt_int(stored.total), fmt_bytes(stored.total)))
    return ["", f"stored weights of the quantized checkpoint ({stored.method}: {stored.layout})",
            table(("dtype", "bytes", "size"), rows, right=(1, 2))]
