"""Serving: what fits on the GPUs — KV-cache tokens, sequences at a context length, decode and prefill ceilings.

Taught in ``12_finetune_quantize_serve``; behind the command line of ``00_overview`` (``python -m helpers serve``). It
never imports torch.

The arithmetic is vLLM's start-up arithmetic (Kwon et al. 2023, *Efficient Memory Management for Large Language
Model Serving with PagedAttention*, SOSP: the KV cache is a pool of fixed-size blocks of ``block_size`` tokens, a
sequence holding whole blocks), read in vLLM's ``vllm/v1/core/kv_cache_utils.py`` (``get_kv_cache_configs``,
``get_num_blocks``, ``_get_kv_cache_groups_uniform_page_size``, ``get_max_concurrency_for_kv_cache_config``):

Followed, exactly:

* per GPU, ``⌈gpu_memory_utilization × memory⌉`` is the budget (``request_memory`` in ``vllm/v1/worker/utils.py``);
  the KV cache gets what is left after the weight shard and the non-KV memory;
* a page is ``block_size × bytes per token of one layer``; blocks = ``available // page // layers``
  (= ``available // (block_size × bytes per token of all layers)``); ``kv_tokens = blocks × block_size``, the
  "GPU KV cache size: N tokens" vLLM logs;
* a sequence of S tokens holds ``⌈S / block_size⌉`` blocks of every full-attention layer; ``max_sequences`` is
  ``blocks // ⌈S / block_size⌉``, the floor of vLLM's "Maximum concurrency for S tokens per request";
* tensor parallelism over N GPUs splits the key/value heads: ``A_kv / N`` per GPU, and where ``A_kv < N`` each GPU
  keeps one head (vLLM replicates KV heads; N must be a multiple of A_kv); the query heads must divide by N;
  multi-head latent attention caches one latent per token that every head reads, so every GPU keeps all of it
  (vLLM's MLA: one KV "head", replicated across TP ranks; ``ModelConfig.get_num_kv_heads``: 1 under MLA, else
  ``max(1, A_kv // N)``; ``QKVParallelLinear`` asserts the divisions); linear-attention heads (Qwen3-Next) split like
  KV heads;
* a model with layers of several kinds (full and sliding-window, or chunked) is grouped as vLLM's hybrid KV-cache
  manager groups it (``_get_kv_cache_groups_uniform_page_size``): groups of the fewest layers of a kind (the most,
  where the most are under 1.5 × the fewest), each kind padded up to whole groups; a block of the pool is a page of
  every layer of one group, blocks = ``available // (page × layers per group)``, ``kv_tokens = blocks // groups ×
  block_size``; a sequence reserves, per group, what its kind needs (``max_memory_usage_bytes``): a full layer
  ``⌈S / block_size⌉`` blocks, a sliding-window layer ``⌈min(W − 1 + max_num_batched_tokens, S) / block_size⌉ + 1``
  (the window may start mid-block), a chunked layer ``⌈min(W_c + max_num_batched_tokens, S) / block_size⌉``; the
  layers of each kind are the engine's count (the family's ``lists["cache"]``), their widths its cache formula.

Simplified, and said so in every answer:

* the non-KV memory is a stated reserve (``activation_reserve``), not measured: vLLM runs a profiling forward pass of
  ``max_num_batched_tokens`` dummy tokens and takes the activation peak, the non-torch memory (NCCL, cuBLAS
  workspaces) and CUDA graphs from what it saw; read yours in vLLM's start-up log and pass it;
* the weight shard: every tensor but the norms split evenly over N GPUs (rounded up per tensor), norms whole on
  every GPU; vLLM also pads the vocabulary (``VocabParallelEmbedding``: to a multiple of 64) and keeps a few small
  matrices whole (MLA's down-projections, the MoE router) — not modelled;
* ``max_num_batched_tokens`` is a stated default (8192; vLLM picks its own by usage context and GPU): pass yours;
* a family that does not count its layers by kind while it mixes kinds is pooled by bytes instead of grouped;
* linear attention's fixed state (convolution and recurrent state, per sequence, not per token) is a per-sequence
  cost taken from the same pool, not paged (vLLM pads it to one page and raises the attention block size to match);
  it is kept at 16 bits unless the engine fixes its width (Qwen3-Next's recurrent state: fp32), whatever the KV dtype;
* memory is what CUDA reports (``cudaMemGetInfo``'s total, ``torch.cuda.mem_get_info()``), as vLLM reads it:
  ``data/hardware.json`` has it measured on an H100 and an H200, as torch prints it (to 0.01 GiB) for the others;
* the block size is what you pass (vLLM's default 16; some attention backends, MLA's among them, pick larger ones).

The decode ceiling is :class:`helpers.budget.Decode` (notebook 10's): every GPU reads its weight shard and its part of
the batch's KV cache once per step at the datasheet bandwidth; the prefill bound is
:func:`helpers.budget.prefill_seconds` (one sequence's forward FLOPs at the datasheet peak of the N GPUs).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from fractions import Fraction

from .budget import GPU, Decode, decode_flops, gpu as find_gpu, prefill_seconds
from .config import ConfigError, ModelConfig
from .flops import max_seq_len
from .memory import DTYPE_BITS, fmt_bytes, kv_cache_formula, state_terms
from .params import NORM, evaluate, param_layout
from .quantized import stored_weights
from .report import fmt_int

KV_BITS: dict[str, int] = {"fp32": 32, "fp16": 16, "bf16": 16, "fp8": 8}  # vLLM's --kv-cache-dtype, bits per value
WEIGHT_BITS: dict[str, int] = {**DTYPE_BITS, "fp8": 8}  # weights as stored; quantisation scales not included
STORED = "stored"  # --weight-dtype: the bytes a pre-quantized checkpoint stores (the default where it has a quantization_config)
STATE_BITS = 16  # a linear-attention state the engine gives no width: the model's 16-bit dtype (vLLM's "auto")
HEAD_SYMBOLS = ("A_kv", "A", "G_k", "G_v")  # head counts in the cache formulas: split by tensor parallelism
DEFAULT_RESERVE_GIB = 2  # a stated stand-in for what vLLM's profiling run measures
DEFAULT_BATCHED = 8192  # max_num_batched_tokens; vLLM's own default depends on the usage context and the GPU


def heads_per_gpu(config: ModelConfig, gpus: int) -> dict[str, int]:
    """The head counts one of ``gpus`` tensor-parallel GPUs keeps (``A_kv``, ``A``, ``G_k``, ``G_v`` where the model
    has them): ``n / N``, or 1 where ``n < N`` and N is a multiple of n (vLLM replicates KV heads).

No notebook calls it; it works behind the helpers of ``12_finetune_quantize_serve``.
    A ConfigError where N does not divide the query heads, or
    neither divides the other for the others.
    """
    if gpus < 1:
        raise ConfigError("--gpus", f"must be a positive integer, got {gpus}")
    if "A" in config.sizes and config["A"] % gpus:
        raise ConfigError("--gpus", f"{gpus} does not divide num_attention_heads = {config['A']}: "
                                    "vLLM gives every GPU whole query heads")
    per_gpu = {}
    for symbol in HEAD_SYMBOLS:
        if symbol in config.sizes:
            n = config[symbol]
            if n % gpus and (n == 0 or gpus % n):
                raise ConfigError("--gpus", f"{gpus} GPUs and {n} {symbol} heads: vLLM splits heads evenly or "
                                            "replicates them (one of the two must divide the other)")
            per_gpu[symbol] = n // gpus if n % gpus == 0 else 1
    return per_gpu


FULL, SLIDING, CHUNKED = "full", "sliding", "chunked"  # vLLM's FullAttentionSpec, SlidingWindowSpec, ChunkedLocal...


@dataclass(frozen=True)
class Kind:
    """The layers of one attention kind on one GPU: ``values`` per token of all of them together, ``layers`` of them
    (None where the engine does not count them), ``kept`` tokens (``W − 1``, ``W_c − 1``; None: every token).
    No notebook calls it; it works behind the helpers of ``12_finetune_quantize_serve``."""

    name: str
    values: int
    layers: int | None
    kept: int | None

    def blocks(self, tokens: int, block_size: int, batched: int) -> int:
        """Blocks one layer of this kind reserves for a sequence of ``tokens`` tokens, as vLLM's
        ``max_memory_usage_bytes`` counts them: every token; or the window's ``W − 1`` plus a prefill chunk of
        ``batched`` tokens, plus one block because the window may start mid-block; or the chunk's ``W_c`` plus the
        prefill chunk."""
        if self.kept is None:
            return -(-tokens // block_size)
        if self.name == SLIDING:
            return -(-min(self.kept + batched, tokens) // block_size) + 1
        return -(-min(self.kept + 1 + batched, tokens) // block_size)


@dataclass(frozen=True)
class CacheShape:
    """One GPU's cache per sequence, read from the engine's cache formula and state terms: its attention
    :class:`Kind`\\ s (values, not bytes) and the fixed per-sequence state in bytes.

    No notebook calls it; it works behind the helpers of ``12_finetune_quantize_serve``."""

    kinds: tuple[Kind, ...]
    state_bytes: int

    @property
    def per_token(self) -> int:
        """Values per token of every caching layer together (what a block of every layer holds per token)."""
        return sum(k.values for k in self.kinds)

    def values(self, tokens: int) -> int:
        """Values one sequence of ``tokens`` tokens keeps (windows capped), state excluded."""
        return sum(k.values * (tokens if k.kept is None else min(tokens, k.kept)) for k in self.kinds)

    @property
    def layer_width(self) -> int | None:
        """Values per token of ONE layer where every kind counts its layers and all layers are as wide (vLLM's
        hybrid manager needs it); None otherwise."""
        if len(self.kinds) < 2 or any(k.layers is None or not k.layers for k in self.kinds):
            return None
        width, rest = divmod(self.per_token, sum(k.layers for k in self.kinds))
        return width if not rest and all(k.values == k.layers * width for k in self.kinds) else None

    def groups(self) -> tuple[int, dict[str, int]]:
        """vLLM's KV-cache groups of a hybrid model (``_get_kv_cache_groups_uniform_page_size``): the layers per
        group (the fewest layers of a kind, or the most where the most are under 1.5 × the fewest) and the groups of
        each kind (padded up); one group of everything for a single kind or where layers are not counted."""
        width = self.layer_width
        if width is None:
            return 0, {k.name: 1 for k in self.kinds}
        fewest, most = min(k.layers for k in self.kinds), max(k.layers for k in self.kinds)
        size = most if most < fewest * 1.5 else fewest
        return size, {k.name: -(-k.layers // size) for k in self.kinds}


def cache_shape(config: ModelConfig, gpus: int = 1) -> CacheShape | None:
    """The cache one of ``gpus`` GPUs keeps per sequence (:class:`CacheShape`); None for an encoder (no cache).

    No notebook calls it; it works behind the helpers of ``12_finetune_quantize_serve``. The family's cache formula
    (``Family.kv_cache``) is evaluated with each GPU's head counts (:func:`heads_per_gpu`) and taken apart by its
    slopes: values per token just past the widest window are the full layers', and each window's share is the drop of
    the slope at it; the layers of each kind are the family's own count (``ModelConfig.lists["cache"]``) where it
    keeps one.
    """
    formula = kv_cache_formula(config)
    if formula is None:
        return None
    heads = heads_per_gpu(config, gpus)

    def values(tokens: int) -> int:
        return evaluate(formula, config, B=1, S=tokens, **heads)

    caps = {name: config[symbol] - 1 for name, symbol in ((CHUNKED, "W_c"), (SLIDING, "W"))
            if symbol in config.sizes and config[symbol] > 1}  # a window of 1 keeps every token
    widest = max(caps.values(), default=0)
    counts = dict(zip((FULL, SLIDING, CHUNKED), config.lists.get("cache") or (None, None, None)))
    kinds = [Kind(FULL, values(widest + 2) - values(widest + 1), counts[FULL], None)]
    for name, kept in caps.items():  # equal caps: the sliding layers take both shares
        drop = (values(kept) - values(kept - 1)) - (values(kept + 1) - values(kept))
        kinds = [k for k in kinds if k.kept != kept] + [Kind(name, drop, counts[name], kept)]
    shape = CacheShape(tuple(k for k in kinds if k.values), 0)
    for tokens in (0, 1, widest, widest + 7):
        if values(tokens) != shape.values(tokens):
            raise ValueError(f"{config.name}: the cache formula {formula} is not full layers plus capped windows")
    state = sum((-(-evaluate(t.values, config, B=1, S=1, **heads) * (t.bits or STATE_BITS) // 8)
                 for t in state_terms(config)), 0)
    return replace(shape, state_bytes=state)


def weight_shard(config: ModelConfig, gpus: int, dtype: str = "bf16") -> tuple[int, int]:
    """(bytes of weights one of ``gpus`` GPUs holds, the bytes of them every GPU holds whole): every tensor but the
    norms split evenly (rounded up per tensor), norms replicated. ``dtype`` :data:`STORED`: the bytes a pre-quantized
    checkpoint stores (:func:`helpers.quantized.stored_weights`: gpt-oss's MXFP4 experts, FP8 blocks and their scales),
    the norms among them taken as bf16 and held whole, the rest split evenly.

    No notebook calls it; it works behind the helpers of ``12_finetune_quantize_serve``.
    """
    if dtype == STORED:
        stored = stored_weights(config)
        if stored is None:
            raise ConfigError("--weight-dtype", f"stored: {config.name} carries no quantization_config")
        norms = 2 * sum((p.count * repeat for p, repeat in param_layout(config).rows() if p.kind == NORM), 0)
        return -(-(stored.total - norms) // gpus) + norms, norms
    if dtype not in WEIGHT_BITS:
        raise ConfigError("--weight-dtype", f"must be one of {', '.join(WEIGHT_BITS)} or {STORED}, got {dtype!r}")
    held = replicated = 0
    for p, repeat in param_layout(config).rows():
        if p.kind == NORM:
            held += p.count * repeat
            replicated += p.count * repeat
        else:
            held += -(-p.count // gpus) * repeat
    bits = WEIGHT_BITS[dtype]
    return -(-held * bits // 8), -(-replicated * bits // 8)


@dataclass(frozen=True)
class Serving:
    """A deployment of one model on ``gpus`` GPUs, by vLLM's start-up arithmetic (every byte figure per GPU).
    No notebook calls it; it works behind the helpers of ``12_finetune_quantize_serve``."""

    config: ModelConfig
    gpu: GPU
    gpus: int
    kv_dtype: str
    weight_dtype: str
    max_model_len: int
    utilization: Fraction
    block_size: int
    reserve: int  # bytes: activations, non-torch memory, CUDA graphs (vLLM profiles them)
    budget: int  # ⌈utilization × memory⌉, as vLLM's request_memory rounds it
    weights: int  # the weight shard
    replicated: int  # of which held whole on every GPU
    cache: CacheShape | None
    decode: Decode | None
    prefill_tokens_per_s: float
    batched: int = DEFAULT_BATCHED  # vLLM's max_num_batched_tokens: the prefill chunk a window layer reserves

    @property
    def available(self) -> int:
        """Bytes left for the KV cache: budget − weights − reserve (negative: nothing fits)."""
        return self.budget - self.weights - self.reserve

    @property
    def fits(self) -> bool:
        return self.available > 0

    @property
    def width(self) -> int:
        """Bytes per cached value (fp8: 1)."""
        return KV_BITS[self.kv_dtype] // 8

    @property
    def bytes_per_token(self) -> int:
        """Bytes one token takes in every caching layer on one GPU (0: no per-token cache)."""
        return 0 if self.cache is None else self.cache.per_token * self.width

    @property
    def block_bytes(self) -> int:
        """One block of the pool: a page of every layer of one group (block_size × bytes per token of a layer × layers
        per group, vLLM's hybrid manager), or of every caching layer (one kind: block_size × bytes per token)."""
        if self.cache is None:
            return 0
        size, _ = self.cache.groups()
        if size:
            return self.block_size * self.cache.layer_width * self.width * size
        return self.block_size * self.bytes_per_token

    @property
    def num_blocks(self) -> int:
        """Blocks of the pool: available // block (0 when the weights leave nothing or nothing is cached per token)."""
        return self.available // self.block_bytes if self.fits and self.block_bytes else 0

    @property
    def kv_tokens(self) -> int | None:
        """Tokens of KV cache the deployment holds, vLLM's "GPU KV cache size": blocks // groups × block_size;
        None for an encoder."""
        if self.cache is None:
            return None
        return self.num_blocks // sum(self.cache.groups()[1].values()) * self.block_size

    @property
    def blocks_per_sequence(self) -> int:
        """Pool blocks one sequence of max_model_len tokens reserves: each group's blocks for its kind
        (:meth:`Kind.blocks`), summed (vLLM's ``get_max_concurrency_for_kv_cache_config``)."""
        if self.cache is None:
            return 0
        _, groups = self.cache.groups()
        return sum(groups[k.name] * k.blocks(self.max_model_len, self.block_size, self.batched)
                   for k in self.cache.kinds)

    @property
    def sequence_bytes(self) -> int:
        """Bytes one sequence of max_model_len tokens holds on one GPU: its blocks and its fixed state."""
        if self.cache is None:
            return 0
        size, _ = self.cache.groups()
        if size or len(self.cache.kinds) < 2:
            kv = self.blocks_per_sequence * self.block_bytes
        else:  # kinds whose layers are not counted: pooled by bytes
            kv = self.block_size * self.width * sum(k.values * k.blocks(self.max_model_len, self.block_size,
                                                                        self.batched) for k in self.cache.kinds)
        return kv + self.cache.state_bytes

    @property
    def max_sequences(self) -> int | None:
        """Sequences of max_model_len tokens held at once (the floor of vLLM's "Maximum concurrency"); None for an
        encoder or a model with nothing cached."""
        if self.cache is None or not self.sequence_bytes:
            return None
        if not self.fits:
            return 0
        pool = self.num_blocks * self.block_bytes if self.block_bytes else self.available
        return pool // self.sequence_bytes


def _fraction(option: str, value: float | str | Fraction) -> Fraction:
    try:
        return Fraction(str(value))
    except (ValueError, ZeroDivisionError):
        raise ConfigError(option, f"must be a number, got {value!r}") from None


def serve(config: ModelConfig, gpu: str | GPU, gpus: int = 1, kv_dtype: str = "bf16", weight_dtype: str | None = None,
          max_model_len: int | None = None, utilization: float | str | Fraction = "0.9", block_size: int = 16,
          reserve_gib: float | str | Fraction = DEFAULT_RESERVE_GIB, batched: int = DEFAULT_BATCHED) -> Serving:
    """What a vLLM deployment of ``config`` on ``gpus`` × ``gpu`` holds: :class:`Serving`.

    Introduced in ``12_finetune_quantize_serve``. ``max_model_len`` defaults to the model's context (its
    position table or ``max_position_embeddings``); ``batched`` is vLLM's ``max_num_batched_tokens``, which only a
    window layer's reservation reads. ``weight_dtype`` None: the checkpoint's stored bytes where ``config.json`` has a
    ``quantization_config`` (:data:`STORED`: gpt-oss-120b's MXFP4 checkpoint), else bf16. Weights that do not fit are an
    answer (``fits`` False, no tokens), not an error; a bad option is a ConfigError naming it.
    """
    config.check_runs()
    if weight_dtype is None:
        weight_dtype = STORED if config.quantization is not None else "bf16"
    device = find_gpu(gpu) if isinstance(gpu, str) else gpu
    if kv_dtype not in KV_BITS:
        raise ConfigError("--kv-dtype", f"must be one of {', '.join(KV_BITS)}, got {kv_dtype!r}")
    share = _fraction("--gpu-memory-utilization", utilization)
    if not 0 < share <= 1:
        raise ConfigError("--gpu-memory-utilization", f"must be in (0, 1], got {utilization}")
    reserve = _fraction("--activation-reserve-gib", reserve_gib)
    if reserve < 0:
        raise ConfigError("--activation-reserve-gib", f"must be 0 or more, got {reserve_gib}")
    if block_size < 1:
        raise ConfigError("--block-size", f"must be a positive integer, got {block_size}")
    if batched < 1:
        raise ConfigError("--max-num-batched-tokens", f"must be a positive integer, got {batched}")
    longest = max_seq_len(config)
    if max_model_len is None:
        max_model_len = config.sizes.get("P") if longest is None else longest
        if max_model_len is None:
            raise ConfigError("--max-model-len", f"{config.name} states no context length: give --max-model-len")
    if max_model_len < 1:
        raise ConfigError("--max-model-len", f"must be a positive integer, got {max_model_len}")
    if longest is not None and max_model_len > longest:
        raise ConfigError("--max-model-len", f"{config.name} has positions for at most {longest} tokens, "
                                             f"got {max_model_len}")
    cache = cache_shape(config, gpus)  # refuses GPU counts that do not split the heads
    weights, replicated = weight_shard(config, gpus, weight_dtype)
    plan = Serving(config, device, gpus, kv_dtype, weight_dtype, max_model_len, share, block_size,
                   math.floor(reserve * 2**30), math.ceil(share * device.cuda_memory), weights, replicated, cache,
                   None, max_model_len / prefill_seconds(config, device, 1, max_model_len, gpus), batched)
    batch = plan.max_sequences
    if cache is None or not batch:
        return plan
    kv_read = batch * (-(-cache.values(max_model_len) * KV_BITS[kv_dtype] // 8) + cache.state_bytes)
    step = Decode(config, device, batch, max_model_len, weight_dtype, kv_dtype, gpus, gpus * weights, gpus * kv_read,
                  decode_flops(config, batch, max_model_len))
    return replace(plan, decode=step)


def serve_json(plan: Serving) -> dict[str, object]:
    """The figures of :func:`serve` as a JSON document (bytes per GPU, exact integers; ceilings as floats).

    No notebook calls it; it works behind the helpers of ``00_overview``.
    """
    step = plan.decode
    return {
        "model": plan.config.name, "gpu": plan.gpu.key, "gpus": plan.gpus, "kv_dtype": plan.kv_dtype,
        "weight_dtype": plan.weight_dtype, "max_model_len": plan.max_model_len,
        "gpu_memory_utilization": float(plan.utilization), "block_size": plan.block_size,
        "memory_bytes": plan.gpu.memory, "cuda_memory_bytes": plan.gpu.cuda_memory, "budget_bytes": plan.budget,
        "weight_bytes_per_gpu": plan.weights,
        "replicated_weight_bytes": plan.replicated, "activation_reserve_bytes": plan.reserve,
        "kv_cache_bytes_per_gpu": max(plan.available, 0), "fits": plan.fits,
        "kv_bytes_per_token_per_gpu": plan.bytes_per_token, "block_bytes": plan.block_bytes,
        "kv_cache_groups": None if plan.cache is None else plan.cache.groups()[1],
        "num_blocks": plan.num_blocks, "kv_tokens": plan.kv_tokens, "max_num_batched_tokens": plan.batched,
        "blocks_per_sequence": plan.blocks_per_sequence, "sequence_bytes": plan.sequence_bytes,
        "state_bytes_per_sequence": 0 if plan.cache is None else plan.cache.state_bytes,
        "max_sequences": plan.max_sequences,
        "decode_batch": None if step is None else step.batch,
        "decode_bytes_per_step": None if step is None else step.bytes_per_step,
        "decode_tokens_per_s": None if step is None else step.bandwidth_tokens_per_s,
        "decode_compute_tokens_per_s": None if step is None else step.compute_tokens_per_s,
        "prefill_tokens_per_s": plan.prefill_tokens_per_s,
    }


def serve_report(plan: Serving) -> str:
    """The deployment in words: each figure with the arithmetic that gives it, and what is simplified.

    No notebook calls it; it works behind the helpers of ``00_overview``.
    """
    c, g, n = plan.config, plan.gpu, plan.gpus
    out = [f"served on {n} × {g.describe()}; tensor parallel over {n}; weights {plan.weight_dtype}, "
           f"KV cache {plan.kv_dtype}, block_size {plan.block_size}, max_model_len {fmt_int(plan.max_model_len)}",
           "vLLM's start-up arithmetic (Kwon et al. 2023, PagedAttention), per GPU:",
           f"  budget    = ⌈{plan.utilization} × {fmt_int(g.cuda_memory)}⌉ = {fmt_int(plan.budget)} bytes "
           f"({fmt_bytes(plan.budget)}), of the memory CUDA reports" + ("" if g.cuda_exact else " (as torch prints "
                                                                        "it, to 0.01 GiB)"),
           f"  weights   = {fmt_int(plan.weights)} bytes ({fmt_bytes(plan.weights)}): every tensor / {n}, norms whole "
           f"({fmt_int(plan.replicated)} bytes replicated)",
           f"  reserve   = {fmt_int(plan.reserve)} bytes ({fmt_bytes(plan.reserve)}): activations, non-torch memory, "
           "CUDA graphs — STATED (--activation-reserve-gib), vLLM measures it by profiling",
           f"  KV memory = budget − weights − reserve = {fmt_int(plan.available)} bytes"]
    if not plan.fits:
        out.append(f"the weights do not fit: {fmt_bytes(plan.weights)} of weights and {fmt_bytes(plan.reserve)} of "
                   f"reserve exceed the {fmt_bytes(plan.budget)} budget per GPU; vLLM would stop at start-up "
                   "(no memory for the cache blocks): more GPUs, a smaller weight dtype, or a larger utilization")
    if plan.cache is None:
        out.append(f"{c.name} is an encoder: no KV cache (vLLM serves it as a pooling model); "
                   f"prefill ≤ {plan.prefill_tokens_per_s:,.0f} tokens/s (its FLOPs at the peak of {n} GPUs)")
        return "\n".join(out)
    heads = heads_per_gpu(c, n)
    if "r_kv" in c.sizes:
        split = "one latent per token and layer, whole on every GPU (MLA: not split)"
    elif "A_kv" in heads:
        split = f"{c['A_kv']} KV heads → {heads['A_kv']} per GPU" + (" (replicated)" if c["A_kv"] < n else "")
    else:
        split = f"heads split over {n} GPUs"
    out.append(f"cache per token per GPU: {fmt_int(plan.cache.per_token)} values × {plan.width} byte{'s' if plan.width > 1 else ''} "
               f"= {fmt_int(plan.bytes_per_token)} bytes ({split})")
    for k in plan.cache.kinds:
        layers = "" if k.layers is None else f"{k.layers} "
        kept = "every token" if k.kept is None else f"the last {fmt_int(k.kept)} tokens"
        out.append(f"  {layers}{k.name} layers: {fmt_int(k.values)} values per token, {kept}; "
                   f"{k.blocks(plan.max_model_len, plan.block_size, plan.batched):,} blocks a sequence")
    if plan.cache.state_bytes:
        out.append(f"fixed state per sequence per GPU: {fmt_int(plan.cache.state_bytes)} bytes (linear attention; "
                   "not per token)")
    size, groups = plan.cache.groups()
    if size:
        out += [f"hybrid: {' + '.join(f'{g} {name}' for name, g in groups.items())} groups of {size} layers "
                f"(vLLM's hybrid KV-cache manager, padded); a block = a page of every layer of one group",
                f"block     = block_size × bytes per token of a layer × {size} = {plan.block_size} × "
                f"{fmt_int(plan.cache.layer_width * plan.width)} × {size} = {fmt_int(plan.block_bytes)} bytes",
                f"blocks    = KV memory // block = {fmt_int(plan.num_blocks)}",
                f"kv_tokens = blocks // {sum(groups.values())} groups × block_size = {fmt_int(plan.kv_tokens)}"]
    elif plan.block_bytes:
        out += [f"block     = block_size × bytes per token = {plan.block_size} × {fmt_int(plan.bytes_per_token)} "
                f"= {fmt_int(plan.block_bytes)} bytes",
                f"blocks    = KV memory // block = {fmt_int(plan.num_blocks)}",
                f"kv_tokens = blocks × block_size = {fmt_int(plan.kv_tokens)}"]
    sequences = plan.max_sequences
    if sequences is None:
        out.append("nothing is cached per sequence: memory does not limit the sequences")
    else:
        out.append(f"one sequence of {fmt_int(plan.max_model_len)} tokens: {fmt_int(plan.sequence_bytes)} bytes "
                   f"({fmt_int(plan.blocks_per_sequence)} blocks) → max_sequences = {fmt_int(sequences)}")
        if plan.fits and sequences == 0:
            out.append("not one sequence of max_model_len fits: vLLM refuses to start (lower --max-model-len)")
    if plan.decode is not None:
        d = plan.decode
        out.append(f"decode ceiling at B = {fmt_int(d.batch)}: {n} × {g.bandwidth // 10**9:,} GB/s over "
                   f"{fmt_bytes(d.bytes_per_step)} read per step (weights + the batch's KV) ≤ "
                   f"{d.bandwidth_tokens_per_s:,.0f} tokens/s (compute allows {d.compute_tokens_per_s:,.0f})")
    out.append(f"prefill of one {fmt_int(plan.max_model_len)}-token prompt ≤ {plan.prefill_tokens_per_s:,.0f} "
               f"tokens/s (forward FLOPs at the peak of {n} GPUs)")
    out.append("simplified: the reserve is stated, not profiled; norms replicated, all else split evenly (no vocabulary "
               "padding); linear-attention state taken per sequence, unpaged")
    return "\n".join(out)
