"""Budgets: from exact FLOPs and bytes to GPU-hours, GPUs per model and tokens per second.

Introduced in ``10_budgets``; ``python -m helpers budget`` and ``python -m helpers memory --gpus N --zero Z``
print it. It never imports torch. Hardware peaks and the papers' reported figures are data, read from
``data/hardware.json`` (each with its source), never constants in this code.

What is exact and what is not:

* **Exact integers** (counts): training FLOPs (the matmuls of :mod:`helpers.flops`, forward + backward),
  ``6·N·D``, bytes of weights, training state per GPU under sharding, KV cache, FLOPs of a decode step.
* **Estimates** (floats): GPU-hours and days, which divide the exact FLOPs by a datasheet peak times an
  assumed *model FLOPs utilisation* (MFU, Chowdhery et al. 2022, App. B: the FLOPs the model needs over
  what the GPUs could do in the time; activation recomputation makes the GPUs do more, which MFU does
  not credit: that is *hardware* FLOPs utilisation, HFU, Korthikanti et al. 2022).
* **Upper bounds** (floats): decode tokens per second, which assume every byte is read once per step at
  the datasheet bandwidth and every FLOP runs at the datasheet peak, and nothing else takes time.
* **Lower bounds**: GPU counts that "fit" count the training state only (no activations, no transient
  buffers, no fragmentation), against the memory the datasheet prints.

Sharding follows torch's FSDP2 (``fully_shard``): each tensor is split along dim 0 into ``G_dp`` chunks (the
data-parallel ranks) as ``torch.chunk`` splits it (rank ``r`` holds ``min(⌈d₀/G_dp⌉, d₀ − r·⌈d₀/G_dp⌉)`` rows, at
least 0), and each rank stores its chunk padded to ``⌈d₀/G_dp⌉`` rows: rank 0 is the most loaded. ZeRO stages (Rajbhandari et al.
2020): stage 1 shards the optimizer state, stage 2 also the gradients, stage 3 also the weights (= FSDP).
Tensor parallelism follows Megatron-LM (Shoeybi et al. 2019): column-parallel Q/K/V and first FFN matrices,
row-parallel output projections, vocabulary-parallel token table and LM head, norms replicated.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from .config import DATA_DIR, ConfigError, ModelConfig, read_json
from .flops import (ATTENTION_SCORES, forward_flops, matmul_parameters, matmul_tokens, max_seq_len,
                    non_embedding_parameters, six_n_d)
from .memory import ADAMW_FP32, ADAMW_MIXED, MemoryPart, fmt_bytes, kv_cache_bytes, kv_cache_formula, weight_bytes
from .params import (CONVOLUTION, DELTA_RULE, EMBEDDINGS, EXPERT, EXPERT_BIAS, LM_HEAD, VISION, Param, evaluate,
                     param_layout)
from .report import fmt_int, table

HARDWARE_PATH = DATA_DIR / "hardware.json"
ZERO_STAGES = {0: "data parallel (DDP)", 1: "ZeRO-1", 2: "ZeRO-2", 3: "ZeRO-3 / FSDP"}
STEP = "AdamW step (one fp32 scalar per tensor)"
RECOMPUTE = Fraction(4, 3)  # full activation recomputation: forward + forward again + backward (2) = 4 forwards, not 3

# recipe -> (part, bytes per parameter, the ZeRO stage from which it is sharded); the names are 08's
_SHARDED_FROM: dict[str, tuple[tuple[str, int, int], ...]] = {
    ADAMW_MIXED: (("weights (fp16)", 2, 3), ("gradients (fp16)", 2, 2), ("master weights (fp32)", 4, 1),
                  ("AdamW exp_avg (fp32)", 4, 1), ("AdamW exp_avg_sq (fp32)", 4, 1)),
    ADAMW_FP32: (("weights (fp32)", 4, 3), ("gradients (fp32)", 4, 2),
                 ("AdamW exp_avg (fp32)", 4, 1), ("AdamW exp_avg_sq (fp32)", 4, 1)),
}

# Megatron-LM tensor parallelism: (checkpoint-name suffix, the stored dim split across G_tp GPUs); else replicated
_TP_SPLITS: dict[str, tuple[tuple[str, int], ...]] = {
    "bert": (("attention.self.query.weight", 0), ("attention.self.query.bias", 0),
             ("attention.self.key.weight", 0), ("attention.self.key.bias", 0),
             ("attention.self.value.weight", 0), ("attention.self.value.bias", 0),
             ("attention.output.dense.weight", 1), ("intermediate.dense.weight", 0), ("intermediate.dense.bias", 0),
             ("output.dense.weight", 1), ("embeddings.word_embeddings.weight", 0)),
    "gpt2": (("attn.c_attn.weight", 1), ("attn.c_attn.bias", 0), ("attn.c_proj.weight", 0),  # Conv1D: [in, out]
             ("mlp.c_fc.weight", 1), ("mlp.c_fc.bias", 0), ("mlp.c_proj.weight", 0),
             ("transformer.wte.weight", 0), ("lm_head.weight", 0)),
    "llama": (("q_proj.weight", 0), ("q_proj.bias", 0), ("k_proj.weight", 0), ("k_proj.bias", 0),
              ("v_proj.weight", 0), ("v_proj.bias", 0), ("o_proj.weight", 1),
              ("gate_proj.weight", 0), ("gate_proj.bias", 0), ("up_proj.weight", 0), ("up_proj.bias", 0),
              ("down_proj.weight", 1), ("embed_tokens.weight", 0), ("lm_head.weight", 0)),
}
# families that keep another family's tensor names (their extra tensors, q/k norms or Gemma 2's sandwich norms,
# are replicated); a family not listed here is refused for --tp > 1 rather than split wrongly
for _alias, _like in (("roberta", "bert"), ("xlm-roberta", "bert"), ("mistral", "llama"), ("qwen2", "llama"),
                      ("qwen3", "llama"), ("gemma", "llama"), ("gemma2", "llama")):
    _TP_SPLITS[_alias] = _TP_SPLITS[_like]


# --- hardware and reported figures (data/hardware.json) ---------------------------------------------

@dataclass(frozen=True)
class GPU:
    """One accelerator as its datasheet prints it: dense 16-bit tensor FLOP/s, memory bandwidth and size.
    No notebook calls it; it works behind the helpers of ``10_budgets``."""

    key: str
    name: str
    flops: int  # dense bf16/fp16 tensor-core FLOP/s (not the sparsity figure)
    bandwidth: int  # bytes/s (the datasheet's decimal GB/s)
    memory: int  # bytes: the MiB the driver reports (nvidia-smi memory.total) × 2**20
    source: str
    datasheet_memory: str = ""  # the memory as the vendor prints it ("80 GB": 80 GiB of HBM), for reference
    cuda_memory: int = 0  # bytes CUDA reports (torch.cuda.mem_get_info): what torch's allocator and vLLM can use
    cuda_exact: bool = True  # measured to the byte (else as torch prints it, to 0.01 GiB: rounded to the MiB)
    cuda_source: str = ""
    cublas_workspace: int = 0  # torch's default cuBLAS workspace per handle on this GPU

    def describe(self) -> str:
        """``NVIDIA A100 80GB SXM: 312 TFLOP/s dense bf16, 2,039 GB/s, 81,920 MiB (datasheet: "80 GB")``."""
        return (f"{self.name}: {self.flops / 10**12:g} TFLOP/s dense bf16, "
                f"{self.bandwidth // 10**9:,} GB/s, {self.memory >> 20:,} MiB (datasheet: \"{self.datasheet_memory}\")")


def _exact(value: Any, scale: int) -> int:
    """A figure of ``data/hardware.json`` (JSON number in TFLOPS, GB/s, MiB ...) times its unit, as an exact integer."""
    scaled = Fraction(str(value)) * scale
    if scaled.denominator != 1:
        raise ValueError(f"{value} × {scale} is not a whole number")
    return int(scaled)


def hardware() -> dict[str, Any]:
    """``data/hardware.json``: GPU datasheet peaks and the papers' reported figures, each with its source.

    Introduced in ``10_budgets``.
    """
    return read_json(HARDWARE_PATH)


def gpu_table() -> dict[str, GPU]:
    """The GPUs of ``data/hardware.json`` by key (``A100-80GB``, ``H100-SXM`` ...).

    Introduced in ``10_budgets``. Memory is binary: the MiB the driver reports (``memory_mib``, 2**20 bytes
    each), not the datasheet's "80 GB" read as 80·10⁹ bytes; peaks and bandwidth are decimal, as printed.
    """
    return {key: GPU(key, g["name"], _exact(g["bf16_dense_tflops"], 10**12),
                     _exact(g["memory_bandwidth_gbps"], 10**9), _exact(g["memory_mib"], 2**20), g["source"],
                     g["memory_datasheet"], *_cuda_total(g), g["cuda_source"], g["cublas_workspace_bytes"])
            for key, g in hardware()["gpus"].items()}


def _cuda_total(g: dict[str, Any]) -> tuple[int, bool]:
    """The bytes CUDA reports: measured (``cuda_total_bytes``), or torch's printed GiB rounded to the MiB."""
    if "cuda_total_bytes" in g:
        return int(g["cuda_total_bytes"]), True
    return round(Fraction(str(g["cuda_total_gib"])) * 1024) * 2**20, False


def gpu(name: str) -> GPU:
    """One GPU by its key in ``data/hardware.json`` (case does not matter); a ConfigError names the known ones.

    Introduced in ``10_budgets``.
    """
    known = gpu_table()
    for key, value in known.items():
        if key.lower() == name.lower():
            return value
    raise ConfigError("--gpu", f"unknown GPU {name!r}; data/hardware.json has {', '.join(known)}")


def reported(name: str) -> dict[str, Any]:
    """A figure a paper reports (``"gpt3-175b"``, ``"llama-7b"``, ``"chinchilla"``, ``"mfu"``), with its source.

    Introduced in ``10_budgets``. Raises ``KeyError`` for a name with no entry.
    """
    return hardware()["reported"][name]


# --- training compute and time ------------------------------------------------------------------------

def context_length(config: ModelConfig) -> int:
    """The sequence length a model trains on by default: its position table, or LLaMA's trained context P.

    Introduced in ``10_budgets``.
    """
    longest = max_seq_len(config)
    if longest is None and "P" not in config.sizes:
        raise ConfigError("--seq-len", f"{config.name} states no context length (no position table, no "
                                       "max_position_embeddings): give --seq-len")
    return config["P"] if longest is None else longest


def _check_mfu(mfu: float) -> None:
    if not (isinstance(mfu, (int, float)) and 0 < mfu <= 1):  # NaN fails the comparison too
        raise ConfigError("--mfu", f"must be in (0, 1] (a fraction of the peak), got {mfu}")


def training_flops(config: ModelConfig, tokens: int, seq_len: int | None = None) -> int:
    """Exact model FLOPs of training on ``tokens`` tokens in sequences of ``seq_len``: forward + backward matmuls.

    Introduced in ``10_budgets``. ``forward_flops(config, 1, S).training`` per sequence times ``D/S``
    sequences. Every decoder term carries a factor S, so this is exact for any D; BERT's pooler runs once
    per sequence, so there a fractional last sequence is rounded to a whole FLOP.
    """
    if tokens < 1:
        raise ConfigError("--tokens", f"must be a positive number of tokens, got {tokens}")
    S = context_length(config) if seq_len is None else seq_len
    return round(Fraction(forward_flops(config, 1, S).training * tokens, S))


@dataclass(frozen=True)
class TrainingBudget:
    """Training a model on D tokens: exact FLOPs, then GPU-hours and days at an assumed MFU (estimates).
    No notebook calls it; it works behind the helpers of ``10_budgets``."""

    config: ModelConfig
    tokens: int
    seq_len: int
    gpu: GPU
    mfu: float
    gpus: int
    flops: int  # counted model FLOPs: forward + backward matmuls
    six_n_d: int  # 6·N·D, N = every parameter

    @property
    def recompute_flops(self) -> int:
        """FLOPs the GPUs run with full activation recomputation: 4 forward passes' worth instead of 3."""
        return round(self.flops * RECOMPUTE)

    @property
    def gpu_seconds(self) -> float:
        """ESTIMATE: counted FLOPs / (peak × MFU)."""
        return self.flops / (self.gpu.flops * self.mfu)

    @property
    def gpu_hours(self) -> float:
        return self.gpu_seconds / 3600

    @property
    def days(self) -> float:
        """ESTIMATE: wall-clock days on ``gpus`` GPUs, if they scale perfectly."""
        return self.gpu_hours / 24 / self.gpus

    @property
    def hfu_with_recompute(self) -> float:
        """The hardware FLOPs utilisation the same run has when it recomputes every activation."""
        return self.mfu * float(RECOMPUTE)


def training_budget(config: ModelConfig, tokens: int, gpu: GPU, mfu: float, gpus: int = 1,
                    seq_len: int | None = None) -> TrainingBudget:
    """Training FLOPs (exact) and time (estimate) for ``tokens`` tokens on ``gpu`` at model FLOPs utilisation ``mfu``.

    Introduced in ``10_budgets``.
    """
    _check_mfu(mfu)
    if gpus < 1:
        raise ConfigError("--gpus", f"must be a positive integer, got {gpus}")
    S = context_length(config) if seq_len is None else seq_len
    return TrainingBudget(config, tokens, S, gpu, mfu, gpus, training_flops(config, tokens, S),
                          six_n_d(config, 1, tokens))


def implied_mfu(flops: int, gpu: GPU, gpu_hours: float) -> float:
    """The MFU a reported run must have had: its FLOPs over what ``gpu_hours`` at the peak could do.

    Introduced in ``10_budgets``. An ESTIMATE of an average: reported GPU-hours include restarts,
    evaluation and idle time, which all lower it.
    """
    return flops / (gpu.flops * gpu_hours * 3600)


def chinchilla_tokens(config: ModelConfig) -> int:
    """Compute-optimal training tokens for the model's size: about 20 per parameter (Hoffmann et al. 2022).

    Introduced in ``10_budgets``.
    """
    return reported("chinchilla")["tokens_per_parameter"] * param_layout(config).total


def compute_optimal(flops: float) -> tuple[float, float]:
    """ESTIMATE of the compute-optimal (N, D) for a budget C, with C = 6·N·D and D = 20·N: N = √(C / 120).

    Introduced in ``10_budgets``.
    """
    ratio = reported("chinchilla")["tokens_per_parameter"]
    n = math.sqrt(flops / (6 * ratio))
    return n, ratio * n


# --- memory per GPU when training is sharded --------------------------------------------------------

def shard_rows(rows: int, world: int, rank: int) -> int:
    """Rows of a dim-0 split that rank ``rank`` of ``world`` holds, as ``torch.chunk`` (and FSDP2) split it.

    Introduced in ``10_budgets``. Chunks of ``⌈rows/world⌉``; the last ones are shorter or empty.
    """
    chunk = -(-rows // world)
    return max(0, min(chunk, rows - rank * chunk))


def padded_rows(rows: int, world: int) -> int:
    """Rows every rank stores for a dim-0 split: ``⌈rows/world⌉``, the short chunks padded (FSDP2).

    Introduced in ``10_budgets``.
    """
    return -(-rows // world)


def tp_split(param: Param, config: ModelConfig) -> int | None:
    """The dim of a stored tensor that Megatron-style tensor parallelism splits, or None (replicated).

    Introduced in ``10_budgets``. Column-parallel (Q, K, V, the first FFN matrices and their biases) split
    their outputs, row-parallel (the output projections) their inputs; the token table and LM head split the
    vocabulary; norms, position tables, row-parallel biases and the pooler are replicated on every GPU.
    """
    for suffix, dim in _TP_SPLITS[config.model_type]:
        if param.name.endswith(suffix):
            return dim
    return None


def check_tp(config: ModelConfig, tp: int) -> None:
    """Refuse a tensor-parallel degree that does not divide the heads (a ConfigError naming the key).

    Introduced in ``10_budgets``.
    """
    if tp < 1:
        raise ConfigError("--tp", f"must be a positive integer, got {tp}")
    if tp > 1 and config.model_type not in _TP_SPLITS:
        raise ConfigError("--tp", f"the tensor-parallel split of model_type {config.model_type} is not described; "
                                  f"described: {', '.join(sorted(_TP_SPLITS))}")
    keys = {"A": "num_attention_heads", "A_kv": "num_key_value_heads"}
    for symbol in ("A", "A_kv"):
        if symbol in config.sizes and config[symbol] % tp:
            raise ConfigError("--tp", f"{tp} does not divide {keys[symbol]} = {config[symbol]}: "
                                      "tensor parallelism gives every GPU whole heads")


def tp_shape(param: Param, config: ModelConfig, tp: int) -> tuple[int, ...]:
    """The shape one tensor-parallel GPU stores (the most loaded: a split dim rounded up).

    Introduced in ``10_budgets``.
    """
    if tp == 1:
        return param.shape
    dim = tp_split(param, config)
    if dim is None:
        return param.shape
    shape = list(param.shape)
    shape[dim] = -(-shape[dim] // tp)
    return tuple(shape)


def _check_sharding(config: ModelConfig, gpus: int, zero: int, tp: int) -> int:
    if zero not in ZERO_STAGES:
        raise ConfigError("--zero", f"must be 0, 1, 2 or 3 (the ZeRO stages), got {zero}")
    if gpus < 1:
        raise ConfigError("--gpus", f"must be a positive integer, got {gpus}")
    check_tp(config, tp)
    if gpus % tp:
        raise ConfigError("--tp", f"{tp} does not divide --gpus = {gpus} (GPUs = tensor-parallel × data-parallel)")
    return gpus // tp


def _tp_shapes(config: ModelConfig, tp: int) -> Counter[tuple[int, ...]]:
    """The shapes one tensor-parallel GPU stores, with how many tensors have each (L identical layers: few)."""
    shapes: Counter[tuple[int, ...]] = Counter()
    for p, repeat in param_layout(config).rows():  # each distinct tensor once, times the layers that hold it
        shapes[tp_shape(p, config, tp)] += repeat
    return shapes


def _local_counts(shapes: Counter[tuple[int, ...]], dp: int, rank: int) -> tuple[int, int, int]:
    """(whole, sharded, padded) elements one GPU holds: its TP share, then its FSDP chunk of that."""
    whole = sharded = padded = 0
    for shape, tensors in shapes.items():
        rest = math.prod(shape[1:]) * tensors
        whole += shape[0] * rest
        sharded += shard_rows(shape[0], dp, rank) * rest
        padded += padded_rows(shape[0], dp) * rest
    return whole, sharded, padded


def _state(shapes: Counter[tuple[int, ...]], dp: int, zero: int, tp: int, recipe: str, rank: int) -> list[MemoryPart]:
    whole, sharded, padded = _local_counts(shapes, dp, rank)
    split = "/G_tp" if tp > 1 else ""
    parts = []
    for name, size, stage in _SHARDED_FROM[recipe]:
        shard = zero >= stage and dp > 1
        over = ("/(G_tp·G_dp)" if tp > 1 else "/G_dp") if shard else split
        # FSDP2 keeps weights and gradients in padded buffers on every rank; optimizer state is unpadded
        held = (padded if stage >= 2 else sharded) if shard else whole
        parts.append(MemoryPart(name, f"{size}N{over}", size * held))
    parts.append(MemoryPart(STEP, "4N_t", 4 * sum(shapes.values())))
    return parts


def sharded_state(config: ModelConfig, gpus: int, zero: int, tp: int = 1, recipe: str = ADAMW_MIXED,
                  rank: int = 0) -> list[MemoryPart]:
    """Training state one GPU holds, part by part, for ``gpus`` = G_tp × G_dp GPUs at ZeRO stage ``zero``.

    Introduced in ``10_budgets``. ``rank`` is the data-parallel rank. As FSDP2 allocates: sharded weights and
    gradients sit in buffers padded to ``⌈d₀/G_dp⌉`` rows on every rank, sharded optimizer state holds the rank's
    own rows only; rank 0 holds full chunks, so it is the most loaded. The AdamW ``step`` scalars are never
    sharded (one per tensor, on every GPU). Activations and transient buffers are not included.
    """
    dp = _check_sharding(config, gpus, zero, tp)
    return _state(_tp_shapes(config, tp), dp, zero, tp, recipe, rank)


def state_per_gpu(config: ModelConfig, gpus: int, zero: int, tp: int = 1, recipe: str = ADAMW_MIXED,
                  rank: int = 0) -> int:
    """Bytes of training state on one GPU (the sum of :func:`sharded_state`), exact.

    Introduced in ``10_budgets``.
    """
    return sum((p.bytes for p in sharded_state(config, gpus, zero, tp, recipe, rank)), 0)


def min_gpus(config: ModelConfig, gpu: GPU, zero: int, tp: int = 1, recipe: str = ADAMW_MIXED,
             limit: int = 1 << 20) -> int | None:
    """The fewest GPUs (a multiple of ``tp``) whose memory holds the training state: a LOWER BOUND.

    Introduced in ``10_budgets``. None when no count up to ``limit`` does (data parallelism and ZeRO-1/2
    keep whole weights on every GPU, so adding GPUs stops helping). Activations need more.
    """
    _check_sharding(config, tp, zero, tp)
    shapes = _tp_shapes(config, tp)

    def fits(dp: int) -> bool:
        return sum((p.bytes for p in _state(shapes, dp, zero, tp, recipe, 0)), 0) <= gpu.memory

    if not fits(limit):
        return None
    low, high = 1, limit  # per-GPU state never grows with G_dp: bisect for the first G_dp that fits
    while low < high:
        mid = (low + high) // 2
        if fits(mid):
            high = mid
        else:
            low = mid + 1
    return tp * low


# --- serving: prefill and decode ----------------------------------------------------------------------

def ridge_point(gpu: GPU) -> float:
    """FLOPs per byte at which a GPU's peak compute and bandwidth take equal time (the roofline's knee).

    Introduced in ``10_budgets``. Below it a kernel waits for memory, above it for arithmetic.
    """
    return gpu.flops / gpu.bandwidth


def decode_flops(config: ModelConfig, batch: int, context: int) -> int:
    """Matmul FLOPs of one decode step: B new tokens, each attending over ``context`` cached tokens.

    Introduced in ``10_budgets``. Every weight matrix once per new token (``2 × its parameters``), and the
    scores/values matmuls against the cache: ``4·L·B·S·A·d_k``.
    """
    if kv_cache_formula(config) is None:
        raise ValueError(f"{config.name} is an encoder: it reads its input at once and never decodes")
    one = forward_flops(config, batch, 1).by_component()
    scores = one[ATTENTION_SCORES]  # 4·L·B·A·d_k: one query against one key
    return sum(one.values()) - scores + scores * context


@dataclass(frozen=True)
class Decode:
    """One decode step of B sequences with S tokens of context on G GPUs; its tokens/s are UPPER BOUNDS.
    No notebook calls it; it works behind the helpers of ``10_budgets``."""

    config: ModelConfig
    gpu: GPU
    batch: int
    context: int
    dtype: str  # weights
    kv_dtype: str
    gpus: int
    weight_bytes: int
    kv_bytes: int
    flops: int

    @property
    def bytes_per_step(self) -> int:
        """Every weight and the whole KV cache, read once per step."""
        return self.weight_bytes + self.kv_bytes

    @property
    def bandwidth_tokens_per_s(self) -> float:
        """UPPER BOUND from memory: B tokens per (bytes / bandwidth of G GPUs)."""
        return self.batch * self.gpus * self.gpu.bandwidth / self.bytes_per_step

    @property
    def compute_tokens_per_s(self) -> float:
        """UPPER BOUND from arithmetic: B tokens per (FLOPs / peak of G GPUs)."""
        return self.batch * self.gpus * self.gpu.flops / self.flops

    @property
    def tokens_per_s(self) -> float:
        """UPPER BOUND: the lower of the two ceilings."""
        return min(self.bandwidth_tokens_per_s, self.compute_tokens_per_s)

    @property
    def bound(self) -> str:
        return "memory bandwidth" if self.bandwidth_tokens_per_s <= self.compute_tokens_per_s else "compute"


def decode(config: ModelConfig, gpu: GPU, batch: int = 1, context: int | None = None, dtype: str = "bf16",
           kv_dtype: str = "bf16", gpus: int | None = None, weights: int | None = None) -> Decode:
    """Bytes, FLOPs and the tokens/s ceiling of one decode step (default: the fewest GPUs that hold it).

    Introduced in ``10_budgets``. The weights cost ``N·b`` bytes in ``dtype`` unless ``weights`` gives their
    bytes (e.g. :func:`helpers.memory.quantized_weight_bytes`, scales included). With G > 1 the weights and
    cache are assumed split evenly and read in parallel (tensor parallel), communication ignored: still an
    upper bound.
    """
    S = context_length(config) if context is None else context
    flops = decode_flops(config, batch, S)
    kv = kv_cache_bytes(config, batch, S, kv_dtype)
    weights = weight_bytes(config, dtype) if weights is None else weights
    if gpus is None:
        gpus = -(-(weights + kv) // gpu.memory)
    return Decode(config, gpu, batch, S, dtype, kv_dtype, gpus, weights, kv, flops)


def prefill_seconds(config: ModelConfig, gpu: GPU, batch: int, prompt: int, gpus: int = 1) -> float:
    """LOWER BOUND on the time to read a prompt: its forward FLOPs at the peak of ``gpus`` GPUs.

    Introduced in ``10_budgets``. Prefill multiplies every weight by all B·S prompt tokens at once, so it
    is compute-bound: its FLOPs per byte of weights far exceed the ridge point.
    """
    return forward_flops(config, batch, prompt).forward / (gpus * gpu.flops)


def kv_crossover_batch(config: ModelConfig, context: int, dtype: str = "bf16", kv_dtype: str = "bf16") -> int:
    """The smallest batch whose KV cache (B sequences of ``context`` tokens) outweighs the weights.

    Introduced in ``10_budgets``.
    """
    weights = weight_bytes(config, dtype)
    per_sequence = kv_cache_bytes(config, 1, context, kv_dtype)
    batch = weights // per_sequence + 1
    assert kv_cache_bytes(config, batch, context, kv_dtype) > weights >= kv_cache_bytes(config, batch - 1, context, kv_dtype)
    return batch


def kv_values_per_token(config: ModelConfig) -> int:
    """Values a decoder caches per token: 2·L·A_kv·d_k (a key and a value per layer and KV head).

    Introduced in ``09_modern_architectures``.
    """
    return evaluate(kv_cache_formula(config), config, B=1, S=1)


def mla_values_per_token(layers: int, kv_lora_rank: int, rope_head_dim: int) -> int:
    """Values multi-head latent attention caches per token: L·(r_kv + d_rope) (DeepSeek-AI 2024, DeepSeek-V2 §2.1).

    Introduced in ``10_budgets``. One compressed latent of ``kv_lora_rank`` per layer, from which every
    head's keys and values are re-projected, plus one shared rotary key of ``rope_head_dim``.
    """
    return layers * (kv_lora_rank + rope_head_dim)


# --- why the rules of thumb disagree ------------------------------------------------------------------

@dataclass(frozen=True)
class Rule:
    """A convention for training FLOPs per token, its value, and the named terms by which it differs from the count.
    No notebook calls it; it works behind the helpers of ``10_budgets``."""

    name: str
    source: str
    per_token: int
    gap: dict[str, int]  # rule − exact, term by term

    @property
    def exact(self) -> int:
        return self.per_token - sum(self.gap.values(), 0)


def training_flops_per_token(config: ModelConfig, seq_len: int) -> int:
    """Exact training FLOPs per token of a decoder at sequence length S (every term carries S, so it divides, except
    a convolution's padding: Qwen3-Next's, ValueError where it leaves a remainder).

    Introduced in ``10_budgets``.
    """
    if kv_cache_formula(config) is None:
        raise ValueError(f"{config.name} is an encoder: its pooler runs once per sequence, not per token")
    per_sequence = forward_flops(config, 1, seq_len).training
    if per_sequence % seq_len:  # a convolution's K_c − 1 padded positions are per sequence, not per token
        raise ValueError(f"{config.name}: {per_sequence:,} training FLOPs per sequence of {seq_len} tokens is no whole "
                         "number per token (its convolution pads each sequence); count per sequence instead")
    return per_sequence // seq_len


def flops_rules(config: ModelConfig, seq_len: int) -> list[Rule]:
    """The usual conventions for training FLOPs per token, each with its gap to the exact count, term by term.

    Introduced in ``10_budgets``. Terms: embedding lookups and elementwise parameters (biases, norm gains)
    cost no matmul; attention's S×S matmuls have no parameters; Kaplan's non-embedding N leaves out the
    LM head's matmul; recomputation runs the forward pass twice. PaLM's rule with N read as the weight
    matrices (:func:`helpers.flops.matmul_parameters`, as notebook 08 reads it) is the count exactly.
    """
    S = seq_len
    exact = training_flops_per_token(config, S)
    rows = list(param_layout(config).rows())
    N = sum((n * p.count for p, n in rows), 0)
    lookups = sum((n * p.count for p, n in rows if p.component == EMBEDDINGS and not matmul_tokens(p, config, 1, S)), 0)
    elementwise = sum((n * p.count for p, n in rows
                       if (len(p.shape) == 1 or p.kind == EXPERT_BIAS) and p.component != VISION), 0)
    tower = sum((n * p.count for p, n in rows if p.component == VISION), 0)  # no text token runs through it
    vision = {"the vision tower (no text token multiplies it)": 6 * tower} if tower else {}
    experts = [(p, n) for p, n in rows if p.kind == EXPERT]  # a token multiplies k of each fused tensor's E slices
    used = sum((n * config["k"] * (p.count // p.shape[0]) for p, n in experts), 0)
    idle = sum((n * p.count for p, n in experts), 0) - used
    IDLE, USED = "routed experts a token skips (no FLOP)", "the k routed experts a token uses (not in N)"
    moe = {IDLE: 6 * idle} if experts else {}
    head = next(p.count for p, _ in rows if p.component == EMBEDDINGS and p.shape[0] == config["V"])  # V × its width
    beside = sum((n * p.count for p, n in rows if p.component in (EMBEDDINGS, LM_HEAD) and p.tokens == "B*S"
                  and config["V"] not in p.shape), 0)  # OPT's project_in/out: matmuls filed with the vocabulary
    convolutions = [(p, n) for p, n in rows if p.kind == CONVOLUTION]  # Qwen3-Next: its K_c − 1 padded positions
    padded = sum((n * p.count * (matmul_tokens(p, config, 1, S) - S) for p, n in convolutions), 0)
    recurrence = 3 * forward_flops(config, 1, S).by_component().get(DELTA_RULE, 0) // S
    linear = {**({"the convolution's padded positions": -6 * padded // S} if padded else {}),
              **({"the gated delta rule's recurrence (no parameters)": -recurrence} if recurrence else {})}
    unmultiplied = sum((n * p.count for p, n in convolutions), 0)  # not among PaLM's weight matrices (tokens B·S)
    attention = 3 * forward_flops(config, 1, S).by_component()[ATTENTION_SCORES] // S  # 12·L·A·d_k·S
    L, heads = config["L"], config["A"] * config["d_k"]
    context = 12 * L * heads * S  # the rules' 12·L·H·S, H = A·d_k
    CTX = "12·L·H·S against the S×S matmuls the layers run (d_k of queries ≠ of values, layers without softmax attention)"
    off = {CTX: context - attention} if context != attention else {}
    LOOK, ELEM = "embedding lookups (no matmul)", "biases and norm gains (elementwise)"
    ATT = "attention S×S matmuls (no parameters)"
    rules = [
        Rule("6N, N = every parameter", "Hoffmann et al. 2022, App. F; Brown et al. 2020, App. D (C ≈ 6ND)",
             6 * N, {LOOK: 6 * lookups, ELEM: 6 * elementwise, ATT: -attention, **moe, **linear, **vision}),
        Rule("6N + 12·L·H·S, N = every parameter", "Chowdhery et al. 2022's formula with the usual N (H = A·d_k)",
             6 * N + 12 * L * heads * S, {LOOK: 6 * lookups, ELEM: 6 * elementwise, **moe, **off, **linear, **vision}),
        Rule("6N + 12·L·H·S, N = weight matrices",
             "Chowdhery et al. 2022, App. B (PaLM's model FLOPs; its 12·L·H·Q·T is the full S×S, not the causal half)",
             6 * matmul_parameters(config) + 12 * L * heads * S,
             {**({USED: -6 * used} if experts else {}), **off, **linear,
              **({"convolution weights (not weight matrices)": -6 * unmultiplied} if unmultiplied else {})}),
        Rule("6N + 6·L·H·S, N = non-embedding",
             "Kaplan et al. 2020, Table 1 and §2.1: C_forward ≈ 2N + 2·n_layer·n_ctx·d_attn, half our 4·L·S·H",
             6 * non_embedding_parameters(config) + 6 * L * heads * S,
             {ELEM: 6 * elementwise, **moe, **vision,
              "LM head matmul (a vocabulary matrix, outside N)": -6 * head,
              "half the S×S matmuls (Kaplan's context term, 2·L·S·H forward)": -attention // 2,
              **{k: v // 2 for k, v in off.items()}, **linear,
              **({"projections beside the vocabulary tables (OPT's project_in/out, outside N)": -6 * beside}
                 if beside else {})}),
        Rule("hardware FLOPs, full recomputation", "Korthikanti et al. 2022 (HFU): 4 forward passes, not 3",
             round(exact * RECOMPUTE), {"the forward pass run again in backward": exact // 3}),
        Rule("FlopCounterMode, SDPA on CPU", "measured in 10_budgets on a small model: the fused kernel is not counted",
             exact - attention, {ATT: -attention}),
    ]
    for rule in rules:
        assert rule.exact == exact, rule.name
    return rules


# --- output (the command line) ------------------------------------------------------------------------

def _ratio(a: float, b: float) -> str:
    return f"{a / b:.3f}"


def _approx(x: float) -> str:
    """An estimate shown to its sensible precision: whole numbers from 100, three digits below."""
    return f"{x:,.0f}" if x >= 100 else f"{x:.3g}"


def budget_report(budget: TrainingBudget, step: Decode | None) -> str:
    """The text of ``python -m helpers budget``: training FLOPs, GPU-hours and days, the decode ceiling.

    Introduced in ``10_budgets``.
    """
    b, g = budget, budget.gpu
    N = param_layout(b.config).total
    rows = [("training, counted (forward + backward matmuls)", fmt_int(b.flops)),
            (f"6·N·D (N = {fmt_int(N)}, every parameter)", fmt_int(b.six_n_d)),
            ("hardware FLOPs with full recomputation (4/3 ×)", fmt_int(b.recompute_flops))]
    out = [f"training on D = {fmt_int(b.tokens)} tokens in sequences of S = {fmt_int(b.seq_len)}", "",
           table(("", "FLOPs"), rows, right=(1,)), "",
           g.describe(), f"  source: {g.source.split(' (')[0]}",
           f"ESTIMATE at MFU {b.mfu:g}: {_approx(b.gpu_hours)} GPU-hours = {_approx(b.gpu_hours / 24)} GPU-days; "
           f"{_approx(b.days)} days on {fmt_int(b.gpus)} GPU{'s' if b.gpus > 1 else ''}",
           "  MFU = counted FLOPs / (GPU-seconds × peak), attention's S×S counted in full (PaLM, App. B)",
           f"  with full recomputation HFU = 4/3 MFU = {b.hfu_with_recompute:.3f}"]
    try:
        paper = reported(b.config.name)
    except KeyError:
        paper = None
    if paper and paper.get("tokens") == b.tokens:
        cite = paper["source"].split(" (")[0]
        if "training_flops" in paper:
            out += [f"reported: {paper['training_flops']:.3g} FLOPs ({cite})".replace("e+", "e"),
                    f"  counted / reported = {_ratio(b.flops, paper['training_flops'])}; "
                    f"6·N·D / reported = {_ratio(b.six_n_d, paper['training_flops'])}"]
        if "gpu_hours" in paper and paper["gpu"] == g.key:
            out += [f"reported: {paper['gpu_hours']:,} GPU-hours on {paper['gpu']} ({cite})",
                    f"  estimate / reported = {_ratio(b.gpu_hours, paper['gpu_hours'])}; the MFU the report implies: "
                    f"{implied_mfu(b.flops, g, paper['gpu_hours']):.3f}"]
    out.append("")
    if step is None:
        out.append("decode: none (an encoder reads its whole input at once)")
    else:
        s = step
        out += [f"decode, UPPER BOUND: B = {s.batch}, S = {fmt_int(s.context)}, {s.dtype} weights, {s.kv_dtype} KV cache, "
                f"{s.gpus} GPU{'s' if s.gpus > 1 else ''} hold{'' if s.gpus > 1 else 's'} them",
                f"  bytes per step: {fmt_int(s.weight_bytes)} weights + {fmt_int(s.kv_bytes)} KV cache = "
                f"{fmt_int(s.bytes_per_step)} ({fmt_bytes(s.bytes_per_step)})",
                f"  FLOPs per step: {fmt_int(s.flops)}",
                f"  ≤ {s.bandwidth_tokens_per_s:,.1f} tokens/s from bandwidth, ≤ {s.compute_tokens_per_s:,.0f} from compute: "
                f"bound by {s.bound}"]
    return "\n".join(out)


def budget_json(budget: TrainingBudget, step: Decode | None) -> dict[str, Any]:
    """The ``python -m helpers budget --json`` document: exact counts as integers, estimates labelled.

    Introduced in ``10_budgets``.
    """
    b, g = budget, budget.gpu
    try:
        paper: dict[str, Any] | None = reported(b.config.name)
    except KeyError:
        paper = None
    doc: dict[str, Any] = {
        "model": b.config.name,
        "tokens": b.tokens,
        "seq_len": b.seq_len,
        "gpu": {"key": g.key, "name": g.name, "bf16_dense_flops": g.flops, "memory_bandwidth": g.bandwidth,
                "memory_bytes": g.memory, "memory_datasheet": g.datasheet_memory, "source": g.source},
        "mfu": b.mfu,
        "gpus": b.gpus,
        "training_flops": b.flops,
        "six_n_d": {"parameters": param_layout(b.config).total, "tokens": b.tokens, "flops": b.six_n_d},
        "recompute_flops": b.recompute_flops,
        "estimate": {"gpu_hours": b.gpu_hours, "gpu_days": b.gpu_hours / 24, "days": b.days,
                     "hfu_with_recompute": b.hfu_with_recompute},
        "reported": paper,
        "decode": None,
    }
    if step is not None:
        doc["decode"] = {"upper_bound": True, "batch": step.batch, "seq_len": step.context, "dtype": step.dtype,
                         "kv_dtype": step.kv_dtype, "gpus": step.gpus, "weight_bytes": step.weight_bytes,
                         "kv_cache_bytes": step.kv_bytes, "bytes_per_step": step.bytes_per_step,
                         "flops_per_step": step.flops, "bandwidth_tokens_per_s": step.bandwidth_tokens_per_s,
                         "compute_tokens_per_s": step.compute_tokens_per_s, "tokens_per_s": step.tokens_per_s,
                         "bound": step.bound}
    return doc


def sharded_report(config: ModelConfig, gpus: int, zero: int, tp: int = 1) -> str:
    """The text of ``python -m helpers memory CONFIG --gpus N --zero Z [--tp T]``: training state per GPU.

    Introduced in ``10_budgets``.
    """
    dp = _check_sharding(config, gpus, zero, tp)
    parts = sharded_state(config, gpus, zero, tp)
    whole = sum((p.bytes for p in parts), 0)
    rows = [(p.name, p.formula, fmt_int(p.bytes), fmt_bytes(p.bytes)) for p in parts]
    rows.append(("total per GPU", "", fmt_int(whole), fmt_bytes(whole)))
    layout = param_layout(config)
    N, N_t = layout.total, layout.tensors
    out = [f"training state per GPU, {ADAMW_MIXED}, {ZERO_STAGES[zero]}:",
           f"{gpus} GPUs = G_tp {tp} (tensor parallel) × G_dp {dp} (data parallel); "
           f"N = {fmt_int(N)} parameters in N_t = {N_t} tensors",
           "the most loaded GPU: each tensor split along dim 0 as FSDP2 splits it, padded; no activations or buffers",
           "", table(("part", "formula", "bytes per GPU", "size"), rows, right=(2, 3)), ""]
    fits = [f"{key} {g.memory >> 20:,} MiB {'yes' if whole <= g.memory else 'no'}" for key, g in gpu_table().items()]
    out.append("fits (state alone, a LOWER BOUND on memory): " + "; ".join(fits))
    return "\n".join(out)


def sharded_json(config: ModelConfig, gpus: int, zero: int, tp: int = 1) -> dict[str, Any]:
    """The ``python -m helpers memory --gpus N --zero Z --json`` document (bytes as exact integers).

    Introduced in ``10_budgets``.
    """
    dp = _check_sharding(config, gpus, zero, tp)
    parts = sharded_state(config, gpus, zero, tp)
    whole = sum((p.bytes for p in parts), 0)
    layout = param_layout(config)
    return {
        "model": config.name,
        "parameters": layout.total,
        "parameter_tensors": layout.tensors,
        "gpus": gpus,
        "zero": zero,
        "tp": tp,
        "dp": dp,
        "recipe": ADAMW_MIXED,
        "per_gpu": {"parts": {p.name: p.bytes for p in parts}, "total": whole},
        "activations_included": False,
        "fits": {key: whole <= g.memory for key, g in gpu_table().items()},
    }
