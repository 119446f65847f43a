"""The real step on fake tensors: transformers' class, peft's LoRA, torch's AdamW, autocast, checkpointing and
``generate`` run as written, on tensors that hold no data, and every byte a CUDA GPU would hold is counted.

Taught in ``13_will_it_fit``; behind ``python -m helpers finetune/memory --simulate`` (needs the ``[hf]`` extra:
transformers, and peft and bitsandbytes for LoRA and QLoRA). Nothing is allocated and no GPU is needed: the model is
built on the meta device, moved with ``to_empty`` under torch's ``FakeTensorMode`` (tensors with a shape, a dtype and
a storage size, no data), and the step runs for real on the CPU device.

What is counted. A ``TorchDispatchMode`` sees every operator's outputs; each output whose storage is new (a view or
an in-place result makes none) adds its bytes, rounded up to the 512-byte blocks of CUDA's caching allocator, and
the storage's bytes leave when torch frees it. The peak of that count over two steps, from the model's build on, is
what ``torch.cuda.max_memory_allocated()`` reports for the same steps (``data/gpu_memory.json``), less what the
count cannot see: the workspaces cuBLAS and the attention kernels take from the allocator, and the allocator
handing out a whole cached block when less than 1 MiB of it would be left.

What the CPU would do otherwise, and the GPU does: four CUDA behaviours are put back, each where torch decides it.

* **Autocast's op lists.** ``torch.autocast("cuda")`` runs ``pow``, ``rsqrt``, ``exp``, ``layer_norm``, ``softmax``,
  ``log_softmax``, ``sum``, the losses … in fp32 and promotes ``addcmul`` …; the CPU's lists leave them in bf16.
  Their ``AutocastCPU`` kernels are replaced, for the simulation, by CUDA's policies (torch's
  ``aten/src/ATen/autocast_mode.h``: ``AT_FORALL_FP32``, ``AT_FORALL_FP32_SET_OPT_DTYPE``, ``AT_FORALL_PROMOTE``);
  the matmuls' lists agree, and autocast's cache of 16-bit weight copies is torch's own.
* **The attention kernel.** ``F.scaled_dot_product_attention`` picks, as CUDA's dispatcher does, FlashAttention (16-bit
  inputs, no mask, head size a multiple of 8 up to 256: it saves q, k, v, its output and one fp32 log-sum-exp per
  query and head), else the memory-efficient kernel (a mask; no grouped keys), else the math path, which keeps the
  S×S scores.
* **Dropout.** CUDA's fused ``native_dropout`` keeps a 1-byte mask; the CPU keeps a mask in the input's dtype.
* **The optimizer's step counters** live on the host for ``torch.optim.AdamW`` without ``capturable``: not counted.

transformers asks the data three questions a fake tensor cannot answer (is the batch packed, is it padded on the
right, are all sequences finished): the simulation answers them as the harness's inputs do (one unpadded sequence
per row, ``N`` new tokens). bitsandbytes' 4-bit layers (QLoRA) run as they are, their weights quantized by
``bitsandbytes.functional.quantize_4bit`` on fake tensors; where its CUDA matmul dequantizes the weight to 16 bits
before a plain ``linear`` (more than 1,536 rows, bitsandbytes' ``_gemm_4bit_custom_max_m``), the simulation does the
same with bitsandbytes' own dequantize operators.
"""

from __future__ import annotations

import contextlib
import time
import warnings
import weakref
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Mapping

from .config import ConfigError

BLOCK = 512  # CUDA's caching allocator rounds every allocation up to a multiple of 512 bytes
CUBLAS_WORKSPACE = 32 * 2**20  # torch's default cuBLAS workspace per thread on a Hopper GPU (helpers.peak)
CUSTOM_MAX_M = 1536  # bitsandbytes (CUDA): past this many rows gemm_4bit dequantizes, then calls F.linear
INSTALL = "pip install -e .[hf]"
FORWARD, BACKWARD, STEP = "forward", "backward", "optimizer step"
PREFILL, DECODE = "prefill", "decode"


def allocated(nbytes: int) -> int:
    """The bytes CUDA's caching allocator books for a tensor of ``nbytes``: a multiple of 512, at least 512.

    No notebook calls it; it works behind the helpers of ``13_will_it_fit``.
    """
    return 0 if nbytes == 0 else -(-nbytes // BLOCK) * BLOCK


@dataclass(frozen=True)
class Simulated:
    """What the simulated step held: its peak and where, the peak of each phase, and the count over time.

    ``resident`` is what was held when the measured step began (weights, buffers, gradients and optimizer state),
    by kind; ``phases`` the peak of each phase of the measured (second) step, ``timeline`` the count after every
    operator that allocated, as ``(phase, bytes)``, for pictures.
    No notebook calls it; it works behind the helpers of ``13_will_it_fit``.
    """

    peak_bytes: int
    peak_phase: str
    phases: dict[str, int]
    loaded_bytes: int
    held_bytes: int
    resident: dict[str, int]
    timeline: list[tuple[str, int]] = field(repr=False)
    kernels: dict[str, int]
    seconds: float
    tensor_peak_bytes: int = 0  # the same count with each tensor rounded to 512 bytes (no allocator): the closed form's
    tensor_phases: dict[str, int] = field(default_factory=dict)
    workspace: int = 0  # the cuBLAS workspaces a fresh process adds (helpers.peak), not counted by the run


def _torch() -> Any:
    try:
        import torch
        import transformers  # noqa: F401
    except ImportError:
        raise ConfigError("--simulate", f"needs torch and transformers: {INSTALL}") from None
    return torch


class CachingAllocator:
    """CUDA's caching allocator as torch configures it by default (one stream, no expandable segments), for
    ``allocated_bytes``: what ``torch.cuda.memory_allocated()`` counts is the blocks it hands out, not the tensors.

    A request is rounded up to 512 bytes and served from a pool: blocks of at most 1 MiB from 2 MiB segments, larger
    ones from segments of 20 MiB (under 10 MiB) or of the request rounded up to 2 MiB. The smallest cached block that
    is large enough is taken; it is split only if what remains is at least 512 bytes (small pool) or more than 1 MiB
    (large pool), else handed out whole, the remainder counted as allocated; a freed block merges with free
    neighbours of its segment. Segments are never returned (no ``empty_cache``). (torch's
    ``c10/cuda/CUDACachingAllocator.cpp``: ``kMinBlockSize``, ``kSmallSize``, ``kSmallBuffer``, ``kLargeBuffer``,
    ``kMinLargeAlloc``, ``kRoundLarge``, ``get_free_block``, ``should_split``, ``try_merge_blocks``.)
    No notebook calls it; it works behind the helpers of ``13_will_it_fit``.
    """

    MIN_BLOCK, SMALL, SMALL_BUFFER, LARGE_BUFFER, MIN_LARGE, ROUND_LARGE = 512, 2**20, 2 * 2**20, 20 * 2**20, \
        10 * 2**20, 2 * 2**20

    class Block:
        __slots__ = ("ptr", "size", "free", "prev", "next", "small")

        def __init__(self, ptr: int, size: int, small: bool) -> None:
            self.ptr, self.size, self.free, self.prev, self.next, self.small = ptr, size, True, None, None, small

    def __init__(self) -> None:
        self.pools: dict[bool, list] = {True: [], False: []}  # sorted (size, ptr, id, block)
        self.allocated = 0
        self.reserved = 0
        self._next = 0

    def malloc(self, nbytes: int) -> Any:
        import bisect

        size = allocated(max(nbytes, 1))
        small = size <= self.SMALL
        pool = self.pools[small]
        i = bisect.bisect_left(pool, (size, -1, -1))
        if i < len(pool):
            block = pool.pop(i)[3]
        else:
            segment = self.SMALL_BUFFER if small else (
                self.LARGE_BUFFER if size < self.MIN_LARGE else -(-size // self.ROUND_LARGE) * self.ROUND_LARGE)
            block = self.Block(self._next, segment, small)
            self._next += segment + 2**40  # segments apart: never merged with each other
            self.reserved += segment
        remaining = block.size - size
        if (remaining >= self.MIN_BLOCK) if small else (remaining > self.SMALL):
            rest = self.Block(block.ptr + size, remaining, small)
            rest.prev, rest.next = block, block.next
            if block.next is not None:
                block.next.prev = rest
            block.next, block.size = rest, size
            self._insert(rest)
        block.free = False
        self.allocated += block.size
        return block

    def free(self, block: Any) -> None:
        self.allocated -= block.size
        block.free = True
        for other in (block.prev, block.next):
            if other is None or not other.free:
                continue
            self._remove(other)
            if other is block.prev:
                other.size += block.size
                other.next = block.next
                if block.next is not None:
                    block.next.prev = other
                block = other
            else:
                block.size += other.size
                block.next = other.next
                if other.next is not None:
                    other.next.prev = block
        self._insert(block)

    def _insert(self, block: Any) -> None:
        import bisect

        bisect.insort(self.pools[block.small], (block.size, block.ptr, id(block), block))

    def _remove(self, block: Any) -> None:
        import bisect

        pool = self.pools[block.small]
        pool.pop(bisect.bisect_left(pool, (block.size, block.ptr, id(block))))


class _Counter:
    """Live bytes of every storage the step creates, two ways: each tensor rounded to 512 bytes (what the closed form
    counts) and the blocks :class:`CachingAllocator` hands out (what ``max_memory_allocated`` reports)."""

    def __init__(self) -> None:
        self.tensors = 0
        self.allocator = CachingAllocator()
        self.peak = 0
        self.tensor_peak = 0
        self.phase = "build"
        self.phase_peaks: dict[str, int] = {}
        self.tensor_phase_peaks: dict[str, int] = {}
        self.timeline: list[tuple[str, int]] = []
        self._keys: dict[int, Any] = {}
        self.ignored: set[int] = set()

    @property
    def live(self) -> int:
        return self.allocator.allocated

    def add(self, storage: Any) -> None:
        key = id(storage)
        ref = self._keys.get(key)
        if (ref is not None and ref[0]() is storage) or key in self.ignored or storage.nbytes() == 0:
            return
        n = allocated(storage.nbytes())
        block = self.allocator.malloc(storage.nbytes())
        self.tensors += n

        def free(_: Any, n: int = n, key: int = key, block: Any = block) -> None:
            self.tensors -= n
            self.allocator.free(block)
            self._keys.pop(key, None)
        self._keys[key] = (weakref.ref(storage, free), block, n)
        live = self.allocator.allocated
        self.peak = max(self.peak, live)
        self.tensor_peak = max(self.tensor_peak, self.tensors)
        if live > self.phase_peaks.get(self.phase, -1):
            self.phase_peaks[self.phase] = live
        if self.tensors > self.tensor_phase_peaks.get(self.phase, -1):
            self.tensor_phase_peaks[self.phase] = self.tensors
        if not self.timeline or self.timeline[-1] != (self.phase, live):
            self.timeline.append((self.phase, live))

    def forget(self, storage: Any) -> None:
        """Stop counting a storage the GPU run keeps on the host (an optimizer's step counter)."""
        key = id(storage)
        entry = self._keys.pop(key, None)
        if entry is not None and entry[0]() is storage:
            self.tensors -= entry[2]
            self.allocator.free(entry[1])
        self.ignored.add(key)

    def enter(self, phase: str) -> None:
        self.phase = phase
        self.phase_peaks[phase] = max(self.phase_peaks.get(phase, 0), self.live)
        self.tensor_phase_peaks[phase] = max(self.tensor_phase_peaks.get(phase, 0), self.tensors)


def _counting_mode(counter: _Counter, answers: Mapping[str, Any]) -> Any:
    """The ``TorchDispatchMode`` that counts outputs, answers the data questions, and replays bitsandbytes' CUDA
    fallback (dequantize, then ``F.linear``)."""
    torch = _torch()
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils._pytree import tree_map_only
    from torch._subclasses.fake_tensor import DataDependentOutputException

    local_scalar = torch.ops.aten._local_scalar_dense.default
    gemm_4bit = _bnb_gemm_op()

    class Count(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # noqa: ANN001 - torch's protocol
            kwargs = kwargs or {}
            if func is local_scalar:
                try:  # a fake tensor made from a constant (an optimizer's step counter) knows its value
                    return func(*args, **kwargs)
                except DataDependentOutputException:  # a question transformers asks the data: the harness's answer
                    return _answer() if args[0].dtype == torch.bool else 0
            if gemm_4bit is not None and func is gemm_4bit:
                out = _dequantize_then_linear(args, kwargs)
                if out is not None:
                    return out
            out = func(*args, **kwargs)
            tree_map_only(torch.Tensor, lambda t: counter.add(t.untyped_storage()), out)
            return out

    return Count()


def _bnb_gemm_op() -> Any:
    try:
        import torch
        return torch.ops.bitsandbytes.gemm_4bit.default
    except (AttributeError, RuntimeError, ImportError):
        return None


def _dequantize_then_linear(args: tuple, kwargs: dict) -> Any:
    """bitsandbytes' CUDA ``gemm_4bit`` past 1,536 rows (``_dequant_linear_fallback``): the nested absmax to fp32,
    the weight to the input's dtype, then ``F.linear``; None below (its fused kernel holds no 16-bit weight)."""
    import torch

    names = ("A", "B", "shapeB", "absmax", "blocksize", "quant_type", "bias", "absmax_8bit", "absmax_code",
             "absmax_offset")
    a = dict(zip(names, args)) | kwargs
    A = a["A"]
    if A.numel() // A.shape[-1] <= CUSTOM_MAX_M:
        return None
    absmax = a["absmax"]
    if a.get("absmax_8bit") is not None:
        absmax_dq = torch.ops.bitsandbytes.dequantize_blockwise.default(a["absmax_8bit"], absmax, a["absmax_code"],
                                                                       256, torch.float32)
        absmax = absmax_dq + a["absmax_offset"]
        del absmax_dq
    weight = torch.ops.bitsandbytes.dequantize_4bit.default(a["B"], absmax, a["blocksize"], a["quant_type"],
                                                           list(a["shapeB"]), A.dtype)
    del absmax
    return torch.nn.functional.linear(A, weight, a.get("bias"))


# --- CUDA's choices, put back ---------------------------------------------------------------------------------

# torch's aten/src/ATen/autocast_mode.h: the CUDA autocast policies that differ from the CPU's (the matmuls agree)
CUDA_FP32 = ("acos", "asin", "cosh", "erfinv", "exp", "expm1", "log", "log10", "log2", "log1p", "reciprocal", "rsqrt",
             "sinh", "tan", "pow.Tensor_Scalar", "pow.Tensor_Tensor", "pow.Scalar", "softplus", "layer_norm",
             "native_layer_norm", "group_norm", "frobenius_norm.dim", "nuclear_norm", "nuclear_norm.dim",
             "cosine_similarity", "poisson_nll_loss", "cosine_embedding_loss", "nll_loss", "nll_loss2d",
             "hinge_embedding_loss", "kl_div", "l1_loss", "smooth_l1_loss", "huber_loss", "mse_loss",
             "margin_ranking_loss", "multilabel_margin_loss", "soft_margin_loss", "triplet_margin_loss",
             "multi_margin_loss", "binary_cross_entropy_with_logits", "dist", "pdist", "cdist", "renorm", "logsumexp")
CUDA_FP32_SET_OPT_DTYPE = ("prod", "prod.dim_int", "softmax.int", "log_softmax.int", "cumprod", "cumsum",
                           "linalg_vector_norm", "linalg_matrix_norm", "linalg_matrix_norm.str_ord", "sum",
                           "sum.dim_IntList")
CUDA_PROMOTE = ("addcdiv", "addcmul", "atan2", "bilinear", "cross", "dot", "grid_sampler", "index_put", "tensordot",
                "scatter_add")
# the CPU's own policies that CUDA does not have: removed (cross_entropy's log_softmax and nll_loss are then autocast
# one by one, as on CUDA)
CPU_ONLY = ("cross_entropy_loss", "stack", "cat", "index_copy", "quantile", "quantile.scalar", "nanquantile",
            "nanquantile.scalar")


def _op(torch: Any, name: str) -> Any:
    packet, _, overload = name.partition(".")
    return getattr(getattr(torch.ops.aten, packet), overload or "default")


@contextlib.contextmanager
def cuda_autocast_lists() -> Iterator[None]:
    """While inside, ``torch.autocast("cpu")`` applies CUDA's fp32, fp32-with-dtype and promote policies.

    No notebook calls it; it works behind the helpers of ``13_will_it_fit``."""
    torch = _torch()
    key = torch._C.DispatchKey.AutocastCPU
    below = torch._C.DispatchKeySet(key)

    def eligible(t: Any) -> bool:
        return isinstance(t, torch.Tensor) and t.is_floating_point() and t.dtype != torch.float64

    def cast(x: Any, dtype: Any) -> Any:
        if eligible(x):
            return x.to(dtype)
        if isinstance(x, (list, tuple)):
            return type(x)(cast(y, dtype) for y in x)
        return x

    def fp32(op: Any) -> Callable:
        def kernel(*args: Any, **kwargs: Any) -> Any:
            with torch._C._ExcludeDispatchKeyGuard(below):
                return op(*cast(args, torch.float32), **{k: cast(v, torch.float32) for k, v in kwargs.items()})
        return kernel

    def set_opt_dtype(op: Any) -> Callable:
        where = [a.name for a in op._schema.arguments].index("dtype")

        def kernel(*args: Any, **kwargs: Any) -> Any:
            given = args[where] if len(args) > where else kwargs.get("dtype")
            if eligible(args[0]) and given is None:
                args, kwargs = args[:where], dict(kwargs, dtype=torch.float32)
            with torch._C._ExcludeDispatchKeyGuard(below):
                return op(*args, **kwargs)
        return kernel

    def promote(op: Any) -> Callable:
        def kernel(*args: Any, **kwargs: Any) -> Any:
            wide = any(eligible(a) and a.dtype == torch.float32 for a in (*args, *kwargs.values()))
            with torch._C._ExcludeDispatchKeyGuard(below):
                if wide:
                    args, kwargs = cast(args, torch.float32), {k: cast(v, torch.float32) for k, v in kwargs.items()}
                return op(*args, **kwargs)
        return kernel

    library = torch.library.Library("aten", "IMPL")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "overriding a previously registered kernel": that is the point
            for names, policy in ((CUDA_FP32, fp32), (CUDA_FP32_SET_OPT_DTYPE, set_opt_dtype), (CUDA_PROMOTE, promote)):
                for name in names:
                    library.impl(name, policy(_op(torch, name)), "AutocastCPU")
            for name in CPU_ONLY:  # no autocast kernel, as on CUDA: the ops they call are autocast one by one
                library.impl(name, torch.library.fallthrough_kernel, "AutocastCPU")
        yield
    finally:
        library._destroy()


def _sdpa_choice(q: Any, k: Any, attn_mask: Any) -> str:
    """The kernel CUDA's ``scaled_dot_product_attention`` runs: ``flash``, ``efficient`` or ``math``."""
    import torch

    d = q.shape[-1]
    if q.dtype in (torch.float16, torch.bfloat16) and attn_mask is None and d % 8 == 0 and d <= 256:
        return "flash"
    grouped = k.shape[-3] != q.shape[-3]
    if not grouped and d % (4 if q.dtype == torch.float32 else 8) == 0:
        return "efficient"
    return "math"


@contextlib.contextmanager
def cuda_kernels(kernels: dict[str, int]) -> Iterator[None]:
    """``F.scaled_dot_product_attention`` and ``F.dropout`` as CUDA runs them (the kernel chosen counted in
    ``kernels``).

    No notebook calls it; it works behind the helpers of ``13_will_it_fit``."""
    torch = _torch()
    F = torch.nn.functional
    sdpa, dropout = F.scaled_dot_product_attention, F.dropout
    below = torch._C.DispatchKeySet(torch._C.DispatchKey.AutocastCPU)

    def attention(q: Any, k: Any, v: Any, attn_mask: Any = None, dropout_p: float = 0.0, is_causal: bool = False,
                  scale: float | None = None, enable_gqa: bool = False) -> Any:
        if torch.is_autocast_enabled("cpu"):  # scaled_dot_product_attention is on CUDA's lower-precision list
            low = torch.get_autocast_dtype("cpu")
            q, k, v = (t.to(low) if t.dtype == torch.float32 else t for t in (q, k, v))
        choice = _sdpa_choice(q, k, attn_mask)
        kernels[choice] = kernels.get(choice, 0) + 1
        with torch._C._ExcludeDispatchKeyGuard(below):
            if choice == "flash":
                return torch.ops.aten._scaled_dot_product_flash_attention(q, k, v, dropout_p, is_causal, False,
                                                                          scale=scale)[0]
            if choice == "efficient":
                bias = attn_mask
                if bias is not None and bias.dtype == torch.bool:  # SDPA turns a boolean mask into an additive one
                    bias = torch.zeros(bias.shape, dtype=q.dtype).masked_fill(bias.logical_not(), float("-inf"))
                grad = q.requires_grad or k.requires_grad or v.requires_grad
                return torch.ops.aten._scaled_dot_product_efficient_attention(q, k, v, bias, grad, dropout_p,
                                                                              is_causal, scale=scale)[0]
            return torch.ops.aten._scaled_dot_product_attention_math(q, k, v, attn_mask, dropout_p, is_causal, None,
                                                                     scale=scale, enable_gqa=enable_gqa)[0]

    def fused_dropout(input: Any, p: float = 0.5, training: bool = True, inplace: bool = False) -> Any:
        if training and 0 < p < 1 and input.numel() > 0:
            return torch.ops.aten.native_dropout(input, p, True)[0]
        return dropout(input, p, training, inplace)

    F.scaled_dot_product_attention, F.dropout = attention, fused_dropout
    try:
        yield
    finally:
        F.scaled_dot_product_attention, F.dropout = sdpa, dropout


@contextlib.contextmanager
def _real_masks() -> Iterator[None]:
    """transformers' masking code treats a fake tensor as a traced one and builds every mask in full; on the GPU it
    asks the data instead (is the padding mask all ones? is the batch packed?): let it ask."""
    import transformers.masking_utils as masking

    tracing = masking.is_tracing
    masking.is_tracing = lambda *args, **kwargs: False
    try:
        yield
    finally:
        masking.is_tracing = tracing


def _answer() -> bool:
    """What the harness's data answers to a question a fake tensor cannot: transformers' masking code asks whether the
    mask is all ones and the batch unpacked (yes: no padding, one sequence per row); ``generate`` whether a prompt is
    padded on the right or a sequence has finished (no: min_new_tokens = max_new_tokens)."""
    import sys

    frame = sys._getframe()
    while frame is not None:
        if frame.f_globals.get("__name__") == "transformers.masking_utils":
            return True
        frame = frame.f_back
    return False


# --- the model ---------------------------------------------------------------------------------------------------

def build_model(raw: Mapping[str, Any], dtype: str, attn: str, model_class: str | None = None,
          num_labels: int | None = None) -> Any:
    """transformers' class for ``raw`` (the family's, ``--class``'s or the auto class's) on the meta device, in
    ``dtype`` ("fp32", "bf16", "fp16"), with ``attn`` attention ("sdpa" or "eager").

    No notebook calls it; it works behind the helpers of ``13_will_it_fit``."""
    torch = _torch()
    from . import fallback

    config = fallback.hf_config(raw, num_labels)
    cls, _ = fallback.choose_class(config, raw, model_class or _taught_class(raw))
    config._attn_implementation = attn
    torch_dtype = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}[dtype]
    with fallback.quiet(), torch.device("meta"):
        try:
            model = cls._from_config(config, dtype=torch_dtype)
        except Exception as error:  # noqa: BLE001 - whatever transformers raises is refused in one line
            raise fallback.refusal(error, raw, config, raw["model_type"], f"build {cls.__name__} for") from None
    return model


def _taught_class(raw: Mapping[str, Any]) -> str | None:
    from .families import FAMILIES

    family = FAMILIES.get(raw.get("model_type"))
    return None if family is None else family.architecture


def _quantize_linears(model: Any, fake: Any) -> None:
    """Every ``nn.Linear`` but the output head replaced by bitsandbytes' ``Linear4bit`` (NF4, double quantization,
    bf16 compute), its weight quantized by bitsandbytes on a fake tensor: the harness's QLoRA model."""
    torch = _torch()
    try:
        import bitsandbytes as bnb
    except ImportError:
        raise ConfigError("--method", f"qlora's simulation needs bitsandbytes: {INSTALL}") from None
    if "dynamic" not in bnb.functional.name2qmap:  # built from real numbers (tolist): once, outside the fake mode
        bnb.functional.name2qmap["dynamic"] = bnb.functional.create_dynamic_map()
    head = model.get_output_embeddings()
    for module in list(model.modules()):
        for child_name, child in list(module.named_children()):
            if type(child) is not torch.nn.Linear or child is head:
                continue
            with fake:
                weight = torch.empty(child.weight.shape, dtype=torch.bfloat16)
                packed, state = bnb.functional.quantize_4bit(weight, blocksize=64, compress_statistics=True,
                                                             quant_type="nf4")
                del weight
            layer = bnb.nn.Linear4bit(child.in_features, child.out_features, bias=child.bias is not None,
                                      compute_dtype=torch.bfloat16, compress_statistics=True, quant_type="nf4",
                                      device="meta")
            # the packed weight on meta (to_empty makes it fake with the rest); its quantization state already fake
            layer.weight = bnb.nn.Params4bit(data=torch.empty(packed.shape, dtype=packed.dtype, device="meta"),
                                             requires_grad=False, quant_state=state, blocksize=64,
                                             compress_statistics=True, quant_type="nf4", bnb_quantized=True,
                                             module=layer)
            if child.bias is not None:
                layer.bias = torch.nn.Parameter(torch.empty_like(child.bias, device="meta"), requires_grad=False)
            layer.simulated_quant_state = state  # to_empty drops Params4bit's state: _materialize puts it back
            setattr(module, child_name, layer)


def _lora(model: Any, rank: int, alpha: int, targets: str) -> Any:
    try:
        import peft
    except ImportError:
        raise ConfigError("--method", f"LoRA's simulation needs peft: {INSTALL}") from None
    target = "all-linear" if targets.strip().lower() == "all-linear" else [t.strip() for t in targets.split(",")]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = peft.get_peft_model(model, peft.LoraConfig(r=rank, lora_alpha=alpha, target_modules=target,
                                                           lora_dropout=0.0))
    model.enable_input_require_grads()
    return model


@contextlib.contextmanager
def _session() -> Iterator[Any]:
    """The fake-tensor mode, transformers' logging quiet, its masking code asking the data."""
    _torch()
    from torch._subclasses.fake_tensor import FakeTensorMode
    from . import fallback

    with fallback.quiet(), _real_masks():
        yield FakeTensorMode(allow_non_fake_inputs=True)


def _materialize(model: Any, fake: Any, counter: _Counter) -> int:
    """``to_empty`` under the fake mode (ties kept), every parameter and buffer counted; returns the bytes."""
    with fake:
        model.to_empty(device="cpu")
    if hasattr(model, "tie_weights"):
        model.tie_weights()  # to_empty gives each module its own tensor: tie the head to the table again
    for tensor in (*model.parameters(), *model.buffers()):
        counter.add(tensor.untyped_storage())
    for module in model.modules():  # bitsandbytes' quantization state lives beside the packed weight
        state = getattr(module, "simulated_quant_state", None)
        if state is not None:
            module.weight.quant_state = state
            for tensor in (state.absmax, state.code, getattr(state, "offset", None),
                           *(() if state.state2 is None else (state.state2.absmax, state.state2.code))):
                if tensor is not None:
                    counter.add(tensor.untyped_storage())
    return counter.live


def simulate_finetune(raw: Mapping[str, Any], method: str = "lora", rank: int = 8, alpha: int | None = None,
                      targets: str = "all-linear", batch: int = 1, seq_len: int = 512, checkpointing: str = "none",
                      weight_dtype: str = "bf16", autocast: str = "none", attn: str = "sdpa",
                      optimizer: str = "adamw", model_class: str | None = None, num_labels: int | None = None,
                      steps: int = 2) -> Simulated:
    """Two training steps of ``raw`` as the harness of ``data/gpu_memory.json`` runs them, on fake tensors.

    Introduced in ``13_will_it_fit``. Full fine-tuning trains every weight in ``weight_dtype``; LoRA freezes them
    and trains peft's fp32 adapters (rank ``rank``, on ``targets``); QLoRA also stores every linear layer but the
    head in NF4. ``torch.optim.AdamW`` (foreach) or ``SGD``; ``zero_grad(set_to_none=False)`` keeps the gradients
    between steps; ``checkpointing="full"`` is transformers' non-reentrant checkpointing of each layer;
    ``autocast="bf16"`` wraps the forward pass in ``torch.autocast`` (CUDA's op lists). Labels are the input ids
    (a language model) or one class per sequence (a ``...ForSequenceClassification``).
    """
    torch = _torch()
    if optimizer not in ("adamw", "sgd"):
        raise ConfigError("--optimizer", f"--simulate runs torch's adamw or sgd, got {optimizer!r}")
    started = time.perf_counter()
    counter = _Counter()
    kernels: dict[str, int] = {}
    with _session() as fake:
        model = build_model(raw, "fp32" if weight_dtype == "fp32" else weight_dtype, attn, model_class, num_labels)
        if method == "qlora":
            model = model.to(torch.bfloat16) if weight_dtype == "fp32" else model
            _quantize_linears(model, fake)
        if method in ("lora", "qlora"):
            model = _lora(model, rank, alpha or 2 * rank, targets)
        if checkpointing == "full":
            model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        model.train()
        loaded = _materialize(model, fake, counter)
        trainable = [p for p in model.parameters() if p.requires_grad]
        vocab = getattr(model.config, "vocab_size", None) or model.config.get_text_config().vocab_size
        labels_classes = model_class is not None and "SequenceClassification" in model_class
        precision = torch.bfloat16 if autocast == "bf16" else torch.float16
        answers = {"torch.bool": False}
        resident: dict[str, int] = {}
        with contextlib.ExitStack() as stack:
            stack.enter_context(fake)
            if autocast != "none":
                stack.enter_context(cuda_autocast_lists())
            stack.enter_context(cuda_kernels(kernels))
            stack.enter_context(_counting_mode(counter, answers))
            make = torch.optim.AdamW if optimizer == "adamw" else torch.optim.SGD
            opt = make(trainable, lr=1e-5, foreach=True)
            ids = torch.randint(0, vocab, (batch, seq_len))
            labels = torch.randint(0, num_labels or 2, (batch,)) if labels_classes else ids
            for step in range(steps):
                last = step == steps - 1
                if last:
                    resident = _resident(model, opt, counter)
                counter.enter(FORWARD if last else f"{FORWARD} (step {step + 1})")
                with torch.autocast("cpu", precision, enabled=autocast != "none"):
                    loss = model(input_ids=ids, labels=labels).loss
                counter.enter(BACKWARD if last else f"{BACKWARD} (step {step + 1})")
                loss.backward()
                del loss
                counter.enter(STEP if last else f"{STEP} (step {step + 1})")
                opt.step()
                for state in opt.state.values():  # AdamW's step counters: on the host unless capturable
                    if "step" in state:
                        counter.forget(state["step"].untyped_storage())
                opt.zero_grad(set_to_none=False)
        held = counter.live
    phases = {name: counter.phase_peaks[name] for name in (FORWARD, BACKWARD, STEP)}
    phase = max(counter.phase_peaks, key=lambda name: counter.phase_peaks[name])
    return Simulated(counter.peak, phase.split(" (")[0], phases, loaded, held, resident, counter.timeline, kernels,
                     time.perf_counter() - started, counter.tensor_peak,
                     {name: counter.tensor_phase_peaks[name] for name in (FORWARD, BACKWARD, STEP)},
                     2 * CUBLAS_WORKSPACE)


def _resident(model: Any, opt: Any, counter: _Counter) -> dict[str, int]:
    """The bytes held at the start of the measured step, by kind (each storage once)."""
    seen: set[int] = set()

    def bytes_of(tensors: Any) -> int:
        total = 0
        for t in tensors:
            if t is None:
                continue
            st = t.untyped_storage()
            if id(st) in seen or id(st) in counter.ignored:
                continue
            seen.add(id(st))
            total += allocated(st.nbytes())
        return total

    import torch

    params = list(model.parameters())
    kinds = {"weights": bytes_of(p for p in params if not p.requires_grad),
             "trained weights": bytes_of(p for p in params if p.requires_grad),
             "gradients": bytes_of(p.grad for p in params),
             "optimizer state": bytes_of(v for s in opt.state.values() for v in s.values()
                                         if isinstance(v, torch.Tensor))}
    kinds["buffers and quantization state"] = counter.tensors - sum(kinds.values())
    return kinds


def simulate_generate(raw: Mapping[str, Any], batch: int, prompt: int, new_tokens: int, dtype: str = "bf16",
                      attn: str = "sdpa") -> Simulated:
    """transformers' ``model.generate`` (greedy, transformers' default cache) on fake tensors: a prompt of
    ``prompt`` tokens for each of ``batch`` sequences, exactly ``new_tokens`` new tokens.

    Introduced in ``13_will_it_fit``.
    """
    torch = _torch()
    started = time.perf_counter()
    counter = _Counter()
    kernels: dict[str, int] = {}
    with _session() as fake:
        model = build_model(raw, dtype, attn)
        model.eval()
        loaded = _materialize(model, fake, counter)
        vocab = getattr(model.config, "vocab_size", None) or model.config.get_text_config().vocab_size
        calls = [0]

        def unfinished(this_peer_finished: Any, synced_gpus: bool, device: Any) -> bool:
            calls[0] += 1  # generate's loop, after its prefill: exactly new_tokens tokens (min = max new tokens)
            counter.enter(DECODE)
            return calls[0] <= new_tokens

        model._has_unfinished_sequences = unfinished
        with contextlib.ExitStack() as stack:
            stack.enter_context(fake)
            stack.enter_context(cuda_kernels(kernels))
            stack.enter_context(_counting_mode(counter, {"torch.bool": False}))
            ids = torch.randint(0, vocab, (batch, prompt))
            counter.enter(PREFILL)
            with torch.no_grad():
                out = model.generate(ids, max_new_tokens=new_tokens, min_new_tokens=new_tokens, do_sample=False)
            del out
        held = counter.live
    phases = {name: counter.phase_peaks.get(name, 0) for name in (PREFILL, DECODE)}
    phase = max(phases, key=lambda name: phases[name])
    return Simulated(counter.peak, phase, phases, loaded, held, {"weights": loaded}, counter.timeline, kernels,
                     time.perf_counter() - started, counter.tensor_peak,
                     {name: counter.tensor_phase_peaks.get(name, 0) for name in (PREFILL, DECODE)}, CUBLAS_WORKSPACE)


def simulate_run(config: Any, run: Any) -> Simulated:
    """``finetune --simulate``: the :class:`~helpers.finetune.Finetune` run, simulated on its config's own keys.

    No notebook calls it; it works behind the helpers of ``00_overview``."""
    from . import peak

    if not config.raw:
        raise ConfigError("--simulate", "needs the config's own keys (a config.json)")
    return simulate_finetune(config.raw, run.method, run.rank, run.alpha, run.targets, run.batch, run.seq_len,
                             run.checkpointing, run.weight_dtype, run.autocast, run.attn, run.optimizer,
                             peak.training_class(config), config.sizes.get("C"))


def simulate_json(sim: Simulated) -> dict[str, Any]:
    """The keys ``--simulate`` adds, and the peak it replaces: ``peak_bytes`` is the simulated peak as the caching
    allocator books it, plus the cuBLAS workspaces of a Hopper GPU.

    No notebook calls it; it works behind the helpers of ``00_overview``."""
    return {"peak_bytes": sim.peak_bytes + sim.workspace, "peak_phase": sim.peak_phase,
            "peak_counted_by": "simulation (helpers.simulate)",
            "simulated": {"allocated_peak_bytes": sim.peak_bytes, "tensor_peak_bytes": sim.tensor_peak_bytes,
                          "cublas_workspace_bytes": sim.workspace, "phases": sim.phases,
                          "tensor_phases": sim.tensor_phases, "loaded_bytes": sim.loaded_bytes,
                          "held_bytes": sim.held_bytes, "attention_kernels": sim.kernels,
                          "seconds": round(sim.seconds, 1)}}


def simulate_report(sim: Simulated) -> str:
    """The lines ``--simulate`` adds to the text output.

    No notebook calls it; it works behind the helpers of ``00_overview``."""
    from .memory import fmt_bytes
    from .report import fmt_int

    total = sim.peak_bytes + sim.workspace
    phases = "; ".join(f"{name} {fmt_bytes(n)}" for name, n in sim.phases.items())
    return "\n".join([
        f"simulated (the real step on fake tensors, {sim.seconds:.1f} s): peak {fmt_int(total)} bytes ({fmt_bytes(total)}) "
        f"in the {sim.peak_phase}",
        f"  = {fmt_int(sim.peak_bytes)} in the caching allocator's blocks + {fmt_int(sim.workspace)} cuBLAS workspaces; "
        f"tensors alone (512-byte rounding): {fmt_int(sim.tensor_peak_bytes)}",
        f"  each phase's peak: {phases}; attention kernels: {sim.kernels or 'none (eager)'}"])
