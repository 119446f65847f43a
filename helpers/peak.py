"""The peak memory of a training step (and of ``generate``), tensor by tensor, without torch.

Taught in ``13_will_it_fit``; behind ``python -m helpers finetune`` (``peak_bytes``, ``peak_phase``, ``phases``) and
``memory --new-tokens`` (``generate_peak_bytes``). What ``torch.cuda.max_memory_allocated()`` reports for a step is
the most bytes live at one moment; this module walks the step as torch runs it and finds that moment.

A step is written down as a *tape*: the operators of one forward pass as transformers' code calls them (a linear
layer, a norm's few elementwise operators, the attention kernel ...), each with the tensors it makes and the ones
autograd **saves** for the backward pass (what each derivative formula reads: a linear layer its input, SiLU its
input, softmax its output, FlashAttention q, k, v, its output and one log-sum-exp per query and head). The tape is
then played three times:

* **forward**: every tensor is live from the operator that makes it to its last use, or, when saved, into the
  backward pass; the logits and the loss come last (the logits in 16 bits, an fp32 copy, the fp32 log-softmax);
* **backward**: in reverse, each operator's gradients appear (one per input that needs one, the size of that input),
  the gradient it consumed and the tensors it saved are released; a weight's gradient is added into ``.grad``;
  under checkpointing each layer's forward is first run again, saving, just before its backward;
* **optimizer step**: ``torch.optim.AdamW`` (foreach) keeps two moments per trainable tensor, in its dtype, and
  its ``step()`` makes one temporary the size of all of them (``torch._foreach_sqrt`` of the second moments).

Between steps, what persists: the weights (and buffers), the gradients (``zero_grad(set_to_none=False)``) and the
optimizer's moments; the peak of the second step is the step's peak. Every tensor is booked as CUDA's caching
allocator books it, rounded up to 512 bytes. Added once: cuBLAS's workspaces, one per thread that runs matrix
multiplies (the forward's and autograd's), 32 MiB each on a Hopper GPU (torch's default ``CUBLAS_WORKSPACE_CONFIG``
there, ``:4096:8``). Left out, and said so: the CUDA context (outside torch's allocator), the allocator's reserve
beyond what it has handed out, and its habit of handing out a whole cached block when less than 1 MiB of it would be
left over (``helpers.simulate`` shows both).

The tape is this module's reading of transformers' code; :mod:`helpers.simulate` runs that code itself on fake
tensors, and the tests hold the two equal family by family (``tests/test_peak.py``).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from .config import ConfigError, ModelConfig

BLOCK = 512
TRACE = False  # debugging: _backward.trace holds what is live at the backward pass's peak
MiB = 2**20
CUBLAS_WORKSPACE = 32 * MiB  # torch's default cuBLAS workspace on sm90 (H100, H200): CUBLAS_WORKSPACE_CONFIG=:4096:8
MATMUL_THREADS = 2  # the forward's thread and autograd's backward thread each get a cuBLAS handle and a workspace
# bitsandbytes AdamW8bit (optim.optimizer.Optimizer2State.init_state): tensors under min_8bit_size keep fp32 moments
MIN_8BIT_SIZE = 4096
ADAM8_BLOCK = 256
ITEMSIZE = {"fp32": 4, "bf16": 2, "fp16": 2, "int64": 8, "bool": 1, "uint64": 8, "uint8": 1}
FORWARD, BACKWARD, STEP = "forward", "backward", "optimizer step"
PREFILL, DECODE = "prefill", "decode"
ATTN = ("sdpa", "eager")
# A deep stack is written as FOLD layers, the copies between FOLDED_AFTER and FOLDED_AFTER + 1 standing for L − FOLD
# identical ones: each adds what one such layer leaves live, the same in every phase (tests/test_peak.py: equal to
# the whole stack written out)
FOLD, FOLDED_AFTER = 4, 1
AUTOCAST = ("none", "bf16")
CUSTOM_MAX_M = 1536  # bitsandbytes' CUDA gemm_4bit dequantizes the weight past this many rows (helpers.simulate)


def allocated(nbytes: int) -> int:
    """Bytes CUDA's caching allocator books for ``nbytes``: a multiple of 512 (0 for an empty tensor).

    Introduced in ``13_will_it_fit``.
    """
    return 0 if nbytes == 0 else -(-nbytes // BLOCK) * BLOCK


# --- the tape ---------------------------------------------------------------------------------------------------

class Storage:
    """One allocation: its bytes as the allocator books them, and what it is (for the tables).
    No notebook calls it; it works behind the helpers of ``12_finetune_quantize_serve``."""

    __slots__ = ("nbytes", "part", "name")

    def __init__(self, nbytes: int, part: str, name: str = "") -> None:
        self.nbytes = nbytes
        self.part = part
        self.name = name


class Tensor:
    """A tensor of the tape: ``numel`` values of ``dtype`` in a storage (a view shares its base's).
    No notebook calls it; it works behind the helpers of ``12_finetune_quantize_serve``."""

    __slots__ = ("name", "numel", "dtype", "grad", "storage", "formula", "param")

    def __init__(self, name: str, numel: int, dtype: str, grad: bool, storage: Storage | None, formula: str = "",
                 param: bool = False) -> None:
        self.name, self.numel, self.dtype, self.grad = name, numel, dtype, grad
        self.storage, self.formula, self.param = storage, formula, param

    @property
    def nbytes(self) -> int:
        return allocated(self.numel * ITEMSIZE[self.dtype])


@dataclass(eq=False)
class Node:
    """One autograd node: the operator that made ``outputs`` from ``inputs``, what it saved, what its backward makes.

    ``grads`` maps an input needing a gradient to the bytes its backward allocates for it (0: the incoming gradient
    is passed on as it is, a view); ``temp`` the bytes its backward holds meanwhile (a reduction's full-size
    product, a dequantized weight); ``weight`` a trainable leaf this node feeds (its gradient then goes to
    ``.grad``); ``layer`` the decoder/encoder layer it belongs to (None: outside the stack).
    No notebook calls it; it works behind the helpers of ``12_finetune_quantize_serve``.
    """

    op: str
    inputs: list[Tensor]
    outputs: list[Tensor]
    saved: list[Tensor]
    grads: dict[int, int] = field(default_factory=dict)
    temp: int = 0
    layer: int | None = None
    forward_temp: int = 0  # bytes its forward holds while it runs (a dequantized weight), freed when it returns


class Tape:
    """The forward pass as a list of nodes, with CUDA's dtype rules under ``torch.autocast`` (``autocast``).
    No notebook calls it; it works behind the helpers of ``12_finetune_quantize_serve``."""

    def __init__(self, autocast: bool, compute: str, training: bool = True, grad: bool = True) -> None:
        self.nodes: list[Node] = []
        self.autocast = autocast
        self.compute = compute  # the dtype of matmul outputs: autocast's bf16, else the weights'
        self.training = training
        self.grad = grad  # autograd on (training) or not (generate)
        self.layer: int | None = None
        self.pinned: dict[int, tuple[Storage, str]] = {}  # held past their last use: (storage, until)
        self.weight_copies: dict[int, Tensor] = {}  # autocast's cache of 16-bit weight copies, by weight
        self.created: dict[int, int] = {}  # storage id -> the node that made it
        self.storages: dict[int, Storage] = {}
        self.layer_inputs: dict[int, list[Tensor]] = {}  # what a checkpointed layer keeps to run itself again

    # -- making tensors --
    def new(self, name: str, numel: int, dtype: str, grad: bool, formula: str = "", part: str = "activations") -> Tensor:
        storage = Storage(allocated(numel * ITEMSIZE[dtype]), part, name)
        self.storages[id(storage)] = storage
        return Tensor(name, numel, dtype, grad and self.grad, storage, formula)

    def weight(self, name: str, numel: int, dtype: str, trainable: bool) -> Tensor:
        """A parameter (no new storage: it is resident)."""
        return Tensor(name, numel, dtype, trainable and self.grad, None, param=True)

    def input(self, name: str, numel: int, dtype: str) -> Tensor:
        """The batch (resident: made before the step, booked in :func:`resident`)."""
        return Tensor(name, numel, dtype, False, None)

    def view(self, x: Tensor, name: str | None = None, numel: int | None = None) -> Tensor:
        """A view of ``x`` (same storage). A view of all of it passes its gradient on; a part of it (a slice, a
        selected row) gets back a full-size zero tensor its gradient is copied into."""
        part = x.numel if numel is None else numel
        y = Tensor(name or x.name, part, x.dtype, x.grad, x.storage, x.formula, x.param)
        if x.grad:
            self.record("view" if part == x.numel else "slice", [x], [y], [],
                        {id(x): 0 if part == x.numel else x.nbytes})
        return y

    def split(self, x: Tensor, names: tuple[str, ...]) -> list[Tensor]:
        """``x.split(...)``/``chunk``: equal views in one node, whose backward concatenates their gradients (one
        full-size tensor)."""
        parts = [Tensor(name, x.numel // len(names), x.dtype, x.grad, x.storage, x.formula) for name in names]
        if x.grad:
            self.record("split", [x], parts, [], {id(x): x.nbytes})
        return parts

    def record(self, op: str, inputs: list[Tensor], outputs: list[Tensor], saved: list[Tensor],
               grads: dict[int, int] | None = None, temp: int = 0, forward_temp: int = 0) -> Node:
        node = Node(op, inputs, outputs, saved if self.grad else [], grads or {}, temp, self.layer, forward_temp)
        if not any(t.grad for t in inputs):
            node.saved, node.grads = [], {}
        self.nodes.append(node)
        for t in outputs:
            if t.storage is not None and id(t.storage) not in self.created:
                self.created[id(t.storage)] = len(self.nodes) - 1
        return node

    @contextmanager
    def below_autocast(self) -> Iterator[None]:
        """Inside a kernel autocast has already cast for (SDPA's math path): each op keeps its inputs' dtype."""
        autocast, self.autocast = self.autocast, False
        try:
            yield
        finally:
            self.autocast = autocast

    def touch(self, t: Tensor) -> None:
        """``t`` is used here last (a local variable alive until its function returns)."""
        self.record("(end of scope)", [t], [], [])

    def pin(self, t: Tensor, until: str) -> None:
        """Keep ``t`` alive past its last use: ``"forward"`` (the end of the forward pass: autocast's cache, the
        KV cache a training forward fills), ``"output"`` (the model's output, dropped before the backward) or
        ``"backward"`` (a leaf that needs a gradient: its AccumulateGrad node holds it until the graph is freed)."""
        if t.storage is not None:
            self.pinned[id(t.storage)] = (t.storage, until)

    # -- dtype rules --
    def low(self, x: Tensor) -> Tensor:
        """A matmul's operand under autocast: a 16-bit copy of an fp32 tensor (a weight's copy cached for the whole
        forward pass, an activation's made afresh at every call)."""
        if not self.autocast or x.dtype != "fp32":
            return x
        if x.param:
            key = id(x)
            if key not in self.weight_copies:
                copy = self.new(f"{x.name} (16-bit copy)", x.numel, "bf16", x.grad, part="autocast weight copies")
                node = self.record("to_copy", [x], [copy], [], {id(x): allocated(x.numel * 4)})
                node.grads = {id(x): allocated(x.numel * 4)} if x.grad else {}
                self.pin(copy, "forward")
                self.weight_copies[key] = copy
            return self.weight_copies[key]
        return self.cast(x, "bf16")

    def cast(self, x: Tensor, dtype: str, name: str | None = None) -> Tensor:
        if x.dtype == dtype:
            return x
        out = self.new(name or f"{x.name} ({dtype})", x.numel, dtype, x.grad, x.formula)
        self.record("to_copy", [x], [out], [], {id(x): allocated(x.numel * ITEMSIZE[x.dtype])})
        return out

    @staticmethod
    def promote(*dtypes: str) -> str:
        return "fp32" if "fp32" in dtypes else dtypes[0]

    # -- operators (each one autograd node, as torch's derivatives.yaml saves) --
    def linear(self, x: Tensor, w: Tensor, out: int, name: str, bias: Tensor | None = None, rows: int = 0) -> Tensor:
        """``F.linear`` (addmm/mm): saves its input if the weight needs a gradient, the weight if the input does."""
        x, w = self.low(x), self.low(w)
        b = self.low(bias) if bias is not None else None
        rows = rows or x.numel // (w.numel // out)
        y = self.new(name, rows * out, self.compute if self.autocast else x.dtype, x.grad or w.grad or
                     (b is not None and b.grad))
        saved = ([x] if w.grad else []) + ([w] if x.grad else [])
        grads = {id(x): allocated(x.numel * ITEMSIZE[x.dtype])} if x.grad else {}
        if w.grad:
            grads[id(w)] = allocated(w.numel * ITEMSIZE[w.dtype])
        if b is not None and b.grad:
            grads[id(b)] = allocated(b.numel * ITEMSIZE[b.dtype])
        inputs = [x, w] + ([b] if b is not None else [])
        self.record("linear", inputs, [y], saved, grads)
        return y

    def unary(self, op: str, x: Tensor, saves: str = "input", dtype: str | None = None, numel: int | None = None,
              grad_numel: int | None = None) -> Tensor:
        """An elementwise (or reducing) operator: saves its ``input``, its ``output`` or ``none``."""
        y = self.new(f"{op}({x.name})", x.numel if numel is None else numel, dtype or x.dtype, x.grad)
        saved = {"input": [x], "output": [y], "none": []}[saves]
        grads = {id(x): allocated((x.numel if grad_numel is None else grad_numel) * ITEMSIZE[x.dtype])} if x.grad else {}
        self.record(op, [x], [y], saved, grads)
        return y

    def mul(self, a: Tensor, b: Tensor, name: str = "", numel: int | None = None) -> Tensor:
        """``a * b``: saves ``b`` for ``a``'s gradient and ``a`` for ``b``'s (a broadcast operand's gradient is the
        full-size product summed down: a temporary). ``numel``: the product's size where both operands broadcast
        (a head of 1 against two angles), else the larger operand's."""
        n = max(a.numel, b.numel) if numel is None else numel
        y = self.new(name or f"{a.name}·{b.name}", n, self.promote(a.dtype, b.dtype), a.grad or b.grad)
        saved = ([b] if a.grad else []) + ([a] if b.grad else [])
        grads, temp = {}, 0
        for t in (a, b):
            if t.grad:
                grads[id(t)] = allocated(t.numel * ITEMSIZE[t.dtype])
                if t.numel < n:
                    temp = max(temp, allocated(n * ITEMSIZE[y.dtype]))
        self.record("mul", [a, b], [y], saved, grads, temp)
        return y

    def scale(self, x: Tensor, name: str = "") -> Tensor:
        """``x * c`` for a Python number: saves nothing."""
        return self.unary("mul_scalar", x, "none") if not name else self._named(self.unary("mul_scalar", x, "none"), name)

    @staticmethod
    def _named(t: Tensor, name: str) -> Tensor:
        t.name = name
        return t

    def add(self, a: Tensor, b: Tensor, name: str = "") -> Tensor:
        """``a + b``: saves nothing; the gradient passes on to both (cast where an operand had another dtype)."""
        n = max(a.numel, b.numel)
        dtype = self.promote(a.dtype, b.dtype)
        y = self.new(name or f"{a.name}+{b.name}", n, dtype, a.grad or b.grad)
        grads, temp = {}, 0
        for t in (a, b):
            if t.grad:
                grads[id(t)] = 0 if t.dtype == dtype and t.numel == n else allocated(t.numel * ITEMSIZE[t.dtype])
                if t.numel < n:
                    temp = max(temp, allocated(n * ITEMSIZE[dtype]))
        self.record("add", [a, b], [y], [], grads, temp)
        return y

    def dropout(self, x: Tensor, p: float) -> Tensor:
        """CUDA's fused dropout: a 1-byte mask saved beside the output; nothing at p = 0 or outside training."""
        if not self.training or p <= 0:
            return x
        y = self.new(f"dropout({x.name})", x.numel, x.dtype, x.grad)
        mask = self.new(f"dropout mask ({x.name})", x.numel, "bool", False)
        self.record("native_dropout", [x], [y, mask], [mask], {id(x): allocated(x.numel * ITEMSIZE[x.dtype])})
        return y

    def copy(self, x: Tensor, name: str = "") -> Tensor:
        """A contiguous copy (``.contiguous()`` of a transposed tensor, a cache's ``cat``): the gradient passes on."""
        y = self.new(name or f"copy of {x.name}", x.numel, x.dtype, x.grad)
        self.record("copy", [x], [y], [], {id(x): 0})
        return y

    def layer_norm(self, x: Tensor, w: Tensor, b: Tensor | None, rows: int) -> Tensor:
        """``F.layer_norm`` (fp32 under CUDA's autocast): saves its input, the mean and 1/σ (fp32, one per row)."""
        if self.autocast:  # CUDA's fp32 policy: the input, the gain and the shift cast (16-bit weights: fresh copies)
            x, w = self.cast(x, "fp32"), self.cast(w, "fp32")
            b = self.cast(b, "fp32") if b is not None else None
        y = self.new(f"layer_norm({x.name})", x.numel, x.dtype, x.grad or w.grad)
        mean = self.new("mean", rows, "fp32", False)
        rstd = self.new("1/σ", rows, "fp32", False)
        grads = {id(x): allocated(x.numel * ITEMSIZE[x.dtype])} if x.grad else {}
        for t in (w, b):
            if t is not None and t.grad:
                grads[id(t)] = allocated(t.numel * ITEMSIZE[t.dtype])
        extra = [t for t in (w, b) if t is not None and not t.param]  # the weights' fp32 copies are saved too
        self.record("native_layer_norm", [x, w] + ([b] if b is not None else []), [y, mean, rstd],
                    [x, mean, rstd, *extra], grads)
        return y

    def rms_norm(self, x: Tensor, w: Tensor, rows: int, one_plus: bool = False, gain_fp32: bool = False) -> Tensor:
        """LLaMA's RMSNorm as transformers writes it: ``x.to(fp32)``, ``pow(2).mean``, ``rsqrt``, ``x·rsqrt``, back to
        x's dtype, times the gain (Gemma's: ``(1 + w)`` in fp32, then back; OLMo 2's, ``gain_fp32``: times the gain in
        fp32, then back)."""
        dtype = x.dtype
        x32 = self.cast(x, "fp32")
        sq = self.unary("pow", x32, "input")
        var = self.unary("mean", sq, "none", numel=rows, grad_numel=sq.numel)
        var = self.unary("add_scalar", var, "none")
        r = self.unary("rsqrt", var, "output")
        y = self.mul(x32, r)
        if one_plus:
            w1 = self.unary("add_scalar", self.cast(w, "fp32"), "none")
            return self.cast(self.mul(y, w1), dtype)
        if gain_fp32:
            return self.cast(self.mul(w, y), dtype)
        y = self.cast(y, dtype)
        return self.mul(w, y)

    def embedding(self, ids: Tensor, table: Tensor, rows: int, width: int) -> Tensor:
        y = self.new(f"embedding({table.name})", rows * width, table.dtype, table.grad)
        self.record("embedding", [ids, table], [y], [ids] if table.grad else [],
                    {id(table): allocated(table.numel * ITEMSIZE[table.dtype])} if table.grad else {})
        return y

    def flash(self, q: Tensor, k: Tensor, v: Tensor, lse_rows: int, out_numel: int) -> Tensor:
        """FlashAttention (CUDA's choice for 16-bit inputs, no mask): saves q, k, v, its output, one fp32
        log-sum-exp per query and head and the RNG's seed and offset."""
        out = self.new("attention output", out_numel, q.dtype, q.grad or k.grad or v.grad)
        lse = self.new("log-sum-exp", lse_rows, "fp32", False)
        seed = self.new("rng seed", 2, "uint64", False)
        offset = self.new("rng offset", 1, "uint64", False)
        grads = {id(t): allocated(t.numel * ITEMSIZE[t.dtype]) for t in (q, k, v) if t.grad}
        self.record("flash_attention", [q, k, v], [out, lse, seed, offset], [q, k, v, out, lse, seed, offset], grads)
        return out

    def efficient(self, q: Tensor, k: Tensor, v: Tensor, lse_rows: int, out_numel: int,
                  bias: Tensor | None = None) -> Tensor:
        """The memory-efficient kernel (CUDA's choice for fp32, or a mask): saves q, k, v, the additive mask
        (``bias``) if any, its output, an fp32 log-sum-exp per head and query padded to a multiple of 32, and the
        RNG's seed and offset."""
        out = self.new("attention output", out_numel, q.dtype, q.grad or k.grad or v.grad)
        lse = self.new("log-sum-exp", lse_rows, "fp32", False)
        seed = self.new("rng seed", 1, "int64", False)
        offset = self.new("rng offset", 1, "int64", False)
        grads = {id(t): allocated(t.numel * ITEMSIZE[t.dtype]) for t in (q, k, v) if t.grad}
        extra = [bias] if bias is not None else []
        self.record("efficient_attention", [q, k, v, *extra], [out, lse, seed, offset],
                    [q, k, v, *extra, out, lse, seed, offset], grads)
        return out

    def matmul(self, a: Tensor, b: Tensor, numel: int, name: str) -> Tensor:
        a, b = self.low(a), self.low(b)
        y = self.new(name, numel, self.compute if self.autocast else a.dtype, a.grad or b.grad)
        saved = ([b] if a.grad else []) + ([a] if b.grad else [])
        grads = {id(t): allocated(t.numel * ITEMSIZE[t.dtype]) for t in (a, b) if t.grad}
        self.record("bmm", [a, b], [y], saved, grads)
        return y

    def softmax(self, x: Tensor, dtype: str | None = None) -> Tensor:
        if self.autocast and dtype is None:
            dtype = "fp32"  # CUDA's autocast: softmax without a dtype runs in fp32
        if dtype is not None and dtype != x.dtype:
            y = self.new(f"softmax({x.name})", x.numel, dtype, x.grad)
            self.record("softmax", [x], [y], [y], {id(x): allocated(x.numel * ITEMSIZE[x.dtype])},
                        temp=allocated(x.numel * ITEMSIZE[dtype]), forward_temp=allocated(x.numel * ITEMSIZE[dtype]))
            return y
        return self.unary("softmax", x, "output")


# --- settings -----------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Step:
    """One training step's settings, as the harness of ``data/gpu_memory.json`` runs it.

    ``method``: full, lora or qlora; ``weight_dtype``: the weights as loaded (full fine-tuning trains them in that
    dtype); ``autocast``: none or bf16 (``torch.autocast`` around the forward pass); ``attn``: sdpa or eager;
    ``checkpointing``: none or full (transformers' non-reentrant checkpointing of each layer); ``optimizer``: adamw
    (``torch.optim.AdamW``, foreach) or sgd; ``rank``, ``targets``: LoRA's (peft's ``all-linear`` or names).
    Introduced in ``13_will_it_fit``.
    """

    config: ModelConfig
    method: str
    batch: int
    seq_len: int
    checkpointing: str = "none"
    weight_dtype: str = "bf16"
    autocast: str = "none"
    attn: str = "sdpa"
    optimizer: str = "adamw"
    rank: int = 8
    targets: str = "all-linear"


@dataclass(frozen=True)
class Peak:
    """What a step holds at its peak: ``peak_bytes`` in ``peak_phase``; each phase's peak by part.
    No notebook calls it; it works behind the helpers of ``12_finetune_quantize_serve``."""

    peak_bytes: int
    peak_phase: str
    phases: dict[str, dict[str, int]]
    workspace: int
    notes: tuple[str, ...] = ()

    def phase_totals(self) -> dict[str, int]:
        return {name: sum(parts.values()) for name, parts in self.phases.items()}


# --- playing the tape ---------------------------------------------------------------------------------------------

def _forward_live(tape: Tape, start: int, saving: Callable[[Node], bool],
                  levels: list[int] | None = None) -> tuple[int, dict[int, Storage]]:
    """The forward pass's peak of live activation bytes (beyond what was held before) and the storages still live at
    its end: made by a node, live until their last use, or kept (saved by a node that ``saving`` keeps; pinned).
    ``levels``, if given, receives the live bytes at each node (its forward temporaries included)."""
    last_use: dict[int, int] = {}
    for i, node in enumerate(tape.nodes):
        for t in node.inputs:
            if t.storage is not None:
                last_use[id(t.storage)] = i
    kept: set[int] = set()
    for node in tape.nodes:
        if saving(node):
            kept.update(id(t.storage) for t in node.saved if t.storage is not None)
    kept.update(tape.pinned)
    live: dict[int, Storage] = {}
    current = peak = start
    for i, node in enumerate(tape.nodes):
        for t in node.outputs:
            s = t.storage
            if s is not None and id(s) not in live and tape.created.get(id(s)) == i:
                live[id(s)] = s
                current += s.nbytes
        peak = max(peak, current + node.forward_temp)
        if levels is not None:
            levels.append(current + node.forward_temp)
        for t in (*node.inputs, *node.outputs):
            s = t.storage
            if s is None or id(s) not in live or id(s) in kept:
                continue
            if last_use.get(id(s), tape.created.get(id(s), -1)) <= i:
                current -= live.pop(id(s)).nbytes
        if levels is not None and i + 1 < len(tape.nodes) and tape.nodes[i + 1].layer != node.layer:
            levels[-1] = max(levels[-1], current)  # the layer's end, once its last node's inputs are gone
            tape.__dict__.setdefault("layer_ends", {})[node.layer] = current
    return peak, live


# --- transformers' loss ---------------------------------------------------------------------------------------------

def causal_lm_loss(tape: Tape, logits: Tensor, rows: int, vocab: int, batch: int) -> Tensor:
    """``ForCausalLMLoss``: ``logits.float()``, the labels padded by one and shifted (int64), then ``cross_entropy``
    (``log_softmax`` saved in fp32, ``nll_loss`` saving the shifted labels and the total weight).

    No notebook calls it; it works behind the helpers of ``12_finetune_quantize_serve``."""
    logits32 = tape.cast(logits, "fp32", "logits (fp32)")
    padded = tape.new("labels padded", rows + batch, "int64", False)
    tape.record("constant_pad_nd", [], [padded], [])
    shifted = tape.new("shifted labels", rows, "int64", False)
    tape.record("clone", [padded], [shifted], [])
    out = tape.new("log_softmax(logits)", rows * vocab, "fp32", True)
    # nll_loss_backward's zeros, then log_softmax_backward's result: two fp32 logits-sized tensors at once
    tape.record("log_softmax", [logits32], [out], [out], {id(logits32): allocated(rows * vocab * 4)},
                temp=allocated(rows * vocab * 4))
    loss = tape.new("loss", 1, "fp32", True)
    weight = tape.new("total weight", 1, "fp32", False)
    tape.record("nll_loss", [out, shifted], [loss, weight], [shifted, weight], {id(out): 0})
    tape.touch(logits32)  # the loss function's locals: the fp32 logits and the padded labels live until it returns
    tape.touch(padded)
    tape.pin(loss, "backward")  # the caller holds the loss while calling loss.backward()
    return loss


def labels_loss(tape: Tape, logits: Tensor, rows: int, classes: int) -> Tensor:
    """``CrossEntropyLoss`` of a sequence classifier: ``log_softmax`` (fp32 under CUDA's autocast) saved, ``nll_loss``
    saving the total weight (the labels are the batch's).

    No notebook calls it; it works behind the helpers of ``12_finetune_quantize_serve``."""
    dtype = "fp32" if tape.autocast else logits.dtype
    out = tape.new("log_softmax(logits)", rows * classes, dtype, True)
    cast = allocated(rows * classes * ITEMSIZE[dtype]) if dtype != logits.dtype else 0
    tape.record("log_softmax", [logits], [out], [out], {id(logits): logits.nbytes},
                temp=allocated(rows * classes * ITEMSIZE[dtype]) + cast, forward_temp=cast)
    loss = tape.new("loss", 1, dtype, True)
    weight = tape.new("total weight", 1, dtype, False)
    tape.record("nll_loss", [out], [loss, weight], [weight], {id(out): allocated(rows * classes * ITEMSIZE[dtype])})
    tape.pin(loss, "backward")
    return loss


# --- the backward pass ----------------------------------------------------------------------------------------------

def _reached(tape: Tape, loss: Tensor) -> set[int]:
    """The nodes the backward pass runs: those on a path from a tensor needing a gradient to the loss."""
    needed = {id(loss)}
    reached: set[int] = set()
    for i in range(len(tape.nodes) - 1, -1, -1):
        node = tape.nodes[i]
        if any(id(t) in needed for t in node.outputs) and node.grads:
            reached.add(i)
            needed.update(key for key in node.grads)
    return reached


class _Walk:
    """Live bytes while the backward pass runs, above what it starts with (``trace``: also what they are)."""

    def __init__(self, trace: bool = False) -> None:
        self.current = 0
        self.peak = 0
        self.trace = trace
        self.items: dict[str, int] = {}
        self.at_peak: dict[str, int] = {}

    def alloc(self, n: int, label: str = "") -> None:
        self.current += n
        if self.trace and n:
            self.items[label] = self.items.get(label, 0) + n
        if self.current > self.peak:
            self.peak = self.current
            if self.trace:
                self.at_peak = dict(self.items)

    def free(self, n: int, label: str = "") -> None:
        self.current -= n
        if self.trace and n:
            self.items[label] = self.items.get(label, 0) - n
            if not self.items[label]:
                del self.items[label]


class _Grad:
    """A gradient's buffer: its bytes and how many tensors' gradients it is (a view's and an add's share one)."""

    __slots__ = ("nbytes", "refs")

    def __init__(self, nbytes: int) -> None:
        self.nbytes, self.refs = nbytes, 1


def _drop(buf: _Grad, walk: _Walk, t: Tensor) -> None:
    buf.refs -= 1
    if buf.refs == 0:
        walk.free(buf.nbytes, f"grad {t.name} #{id(t) % 10000}")


def _backward(tape: Tape, loss: Tensor, saved_live: dict[int, Storage], recompute: Mapping[int, list[int]],
              layer_of: Mapping[int, int | None], trace: bool = False, extra: int = 0) -> tuple[int, int]:
    """Walk the nodes in reverse; returns the backward pass's peak above its start, and the part of it at the start.

    ``saved_live``: storages live when the backward starts (saved tensors, checkpoints); ``recompute``: for a
    checkpointed layer, its nodes, run forward again (saving) when its last node's backward is reached.
    """
    reached = _reached(tape, loss)
    holders: dict[int, int] = {}  # storage -> nodes still to run that saved it
    for i in reached:
        for t in tape.nodes[i].saved:
            if t.storage is not None and id(t.storage) in saved_live:
                holders[id(t.storage)] = holders.get(id(t.storage), 0) + 1
    walk = _Walk(trace)
    _backward.steps = []  # type: ignore[attr-defined]
    if trace:
        walk.items = {f"saved {s.name} #{k % 10000}": s.nbytes for k, s in saved_live.items()}
    uses: dict[int, int] = {}  # a trainable weight -> the reached nodes that still owe it a gradient
    for i in reached:
        for t in tape.nodes[i].inputs:
            if t.param and id(t) in tape.nodes[i].grads:
                uses[id(t)] = uses.get(id(t), 0) + 1
    grads: dict[int, _Grad] = {id(loss): _Grad(BLOCK)}  # tensor -> its gradient's buffer (shared by aliases)
    walk.alloc(extra, "the folded layers' saved tensors")
    walk.alloc(BLOCK, "grad of loss")
    start_peak = walk.peak
    live_saved = dict(saved_live)
    done_layers: set[int] = set()
    for i in range(len(tape.nodes) - 1, -1, -1):
        if i not in reached:
            continue
        node = tape.nodes[i]
        layer = layer_of.get(i)
        if extra and layer is not None and layer < FOLDED_AFTER + 1:  # below the folded layers: theirs are released
            walk.free(extra, "the folded layers' saved tensors")
            extra = 0
        if layer is not None and layer in recompute and layer not in done_layers and node.saved:
            # the first of the layer's saved tensors the backward unpacks runs its forward again
            done_layers.add(layer)
            _recompute(tape, recompute[layer], walk, live_saved, holders, reached)
        # this node's backward: a new gradient for each input that needs one (0 bytes: the incoming gradient passed
        # on as it is), its temporaries meanwhile
        incoming = next((grads[id(t)] for t in node.outputs if id(t) in grads), None)
        fresh: dict[int, _Grad] = {}
        for t in node.inputs:
            key = id(t)
            if key not in node.grads or key in fresh:
                continue
            nbytes = node.grads[key]
            if nbytes == 0 and incoming is not None:
                incoming.refs += 1
                fresh[key] = incoming
            else:
                walk.alloc(nbytes, f"grad {t.name} #{key % 10000}")
                fresh[key] = _Grad(nbytes)
        walk.alloc(node.temp, f"temp of {node.op}")
        if trace:
            _backward.steps.append((node.op, node.layer, walk.current))  # type: ignore[attr-defined]
        walk.free(node.temp, f"temp of {node.op}")
        for t in node.inputs:
            key = id(t)
            if key not in fresh:
                continue
            buf = fresh.pop(key)
            if key in grads:  # added into the gradient already there
                _drop(buf, walk, t)
            else:
                grads[key] = buf
            if t.param:  # AccumulateGrad runs once every use has given its gradient: then into .grad (resident)
                uses[key] -= 1
                if uses[key] == 0:
                    _drop(grads.pop(key), walk, t)
        for t in node.outputs:  # the gradients this node consumed (the root's ones_like lives to the end)
            if t is not loss and id(t) in grads:
                _drop(grads.pop(id(t)), walk, t)
        for t in node.saved:  # released once the node has run
            s = t.storage
            if s is None or id(s) not in holders:
                continue
            holders[id(s)] -= 1
            if holders[id(s)] == 0 and id(s) in live_saved:
                walk.free(live_saved.pop(id(s)).nbytes, f"saved {s.name} #{id(s) % 10000}")
                del holders[id(s)]
    if trace:
        _backward.trace = walk.at_peak  # type: ignore[attr-defined]
    return walk.peak, start_peak


def _recompute(tape: Tape, nodes: list[int], walk: _Walk, live_saved: dict[int, Storage], holders: dict[int, int],
               reached: set[int]) -> None:
    """Checkpointing: a layer's forward run again before its backward; its saved tensors stay, the rest is freed.
    torch stops the recomputation once the last tensor the layer saves is made again (early stop)."""
    if walk.trace:
        _recompute.entry = {k: v for k, v in walk.items.items() if not k.startswith("saved")}  # type: ignore[attr-defined]
    last = max((i for i in nodes if tape.nodes[i].saved), default=nodes[-1])
    nodes = [i for i in nodes if i <= last]
    made: dict[int, Storage] = {}
    saved: set[int] = set()
    last_use: dict[int, int] = {}
    for i in nodes:
        for t in tape.nodes[i].inputs:
            if t.storage is not None:
                last_use[id(t.storage)] = i
        for t in tape.nodes[i].saved:
            if t.storage is not None:
                saved.add(id(t.storage))
    for i in nodes:
        node = tape.nodes[i]
        for t in node.outputs:
            s = t.storage
            if s is not None and tape.created.get(id(s)) == i and id(s) not in made and id(s) not in live_saved:
                made[id(s)] = s
                walk.alloc(s.nbytes, f"saved {s.name} #{id(s) % 10000}")
        walk.alloc(node.forward_temp, "forward temp")
        walk.free(node.forward_temp, "forward temp")
        for t in (*node.inputs, *node.outputs):
            s = t.storage
            if s is None or id(s) not in made or id(s) in saved:
                continue
            if last_use.get(id(s), i) <= i:
                walk.free(made.pop(id(s)).nbytes, f"saved {s.name} #{id(s) % 10000}")
    for key, s in made.items():  # the layer's saved tensors, now live until their nodes run backward
        live_saved[key] = s
    for i in nodes:
        if i in reached:
            for t in tape.nodes[i].saved:
                if t.storage is not None and id(t.storage) in made:
                    holders[id(t.storage)] = holders.get(id(t.storage), 0) + 1


# --- what a model is made of, for the tape ----------------------------------------------------------------------------

@dataclass
class Model:
    """The model's settings the tape needs: sizes, dtypes, what trains, and the training-time keys of its config.
    No notebook calls it; it works behind the helpers of ``12_finetune_quantize_serve``."""

    config: ModelConfig
    step: Step
    B: int
    S: int
    weights: str  # the dtype of every weight as loaded
    trainable: bool  # full fine-tuning: every weight trains
    lora: bool
    qlora: bool
    raw: Mapping[str, Any]
    built: int | None = None  # layers written on the tape (None: all L); see FOLD

    @property
    def layers(self) -> int:
        """The layers the tape holds: all L, or FOLD of them standing for L (:func:`training_peak`)."""
        return self.config.sizes["L"] if self.built is None else self.built

    @property
    def tokens(self) -> int:
        """B·S, the tokens of the batch."""
        return self.B * self.S

    def __getitem__(self, symbol: str) -> int:
        return self.config.sizes[symbol]

    def read(self, key: str, default: Any) -> Any:
        value = self.raw.get(key, default)
        return default if value is None else value

    def param(self, tape: Tape, name: str, numel: int) -> Tensor:
        return tape.weight(name, numel, self.weights, self.trainable)


def projection(tape: Tape, m: Model, x: Tensor, d_in: int, d_out: int, name: str, bias: bool = False,
               targeted: bool = True) -> Tensor:
    """A linear layer as the method holds it: trained (full), frozen with peft's LoRA pair beside it, or in NF4
    (bitsandbytes' ``Linear4bit``) with the pair beside it.

    No notebook calls it; it works behind the helpers of ``12_finetune_quantize_serve``."""
    rows = x.numel // d_in
    b = m.param(tape, f"{name}.bias", d_out) if bias else None
    if m.qlora and targeted:
        y = _linear_4bit(tape, m, x, d_in, d_out, name, rows)
        if b is not None:
            y = tape.add(y, b)
    else:
        w = m.param(tape, f"{name}.weight", d_out * d_in)
        y = tape.linear(x, w, d_out, name, b, rows)
    if (m.lora or m.qlora) and targeted:
        y = _lora_pair(tape, m, x, y, d_in, d_out, name, rows)
    return y


def _linear_4bit(tape: Tape, m: Model, x: Tensor, d_in: int, d_out: int, name: str, rows: int) -> Tensor:
    """bitsandbytes' ``MatMul4Bit``: saves nothing of its input; past 1,536 rows CUDA dequantizes the weight to 16 bits
    (and the nested absmax to fp32, twice) for the forward's matmul, and the backward dequantizes it again."""
    x = tape.cast(x, "bf16")
    n = d_in * d_out
    dequantized = allocated(2 * n) + 2 * allocated(4 * -(-n // 64))
    y = tape.new(name, rows * d_out, "bf16", x.grad)
    tape.record("matmul_4bit", [x], [y], [], {id(x): allocated(x.numel * ITEMSIZE[x.dtype])}, temp=dequantized,
                forward_temp=dequantized if rows > CUSTOM_MAX_M else 0)
    return y


def _lora_pair(tape: Tape, m: Model, x: Tensor, y: Tensor, d_in: int, d_out: int, name: str, rows: int) -> Tensor:
    """peft's ``lora.Linear.forward``: ``result + lora_B(lora_A(x.to(fp32))) * scaling``, then back to the result's
    dtype (A: r × d_in and B: d_out × r, fp32, the only weights that train)."""
    r = m.step.rank
    a = tape.weight(f"{name}.lora_A", r * d_in, "fp32", True)
    b = tape.weight(f"{name}.lora_B", d_out * r, "fp32", True)
    x32 = tape.cast(x, "fp32")
    h = tape.linear(x32, a, r, f"{name}.lora_A", rows=rows)
    h = tape.linear(h, b, d_out, f"{name}.lora_B", rows=rows)
    h = tape.scale(h)
    out = tape.add(y, h)
    return tape.cast(out, y.dtype)


def angles_width(rotated: int) -> int:
    """The width of the rotary step's cos and sin for ``rotated`` dimensions of a head: ⌈rotated/2⌉ angles
    (``inv_freq``), each twice (``cat((freqs, freqs))``). A head of 1 rotated runs 2 wide against them (d_qk).

    No notebook calls it; it works behind the helpers of ``12_finetune_quantize_serve``."""
    return rotated + rotated % 2


def rope(tape: Tape, x: Tensor, cos: Tensor, sin: Tensor, width: int = 0, angles: int = 0) -> Tensor:
    """``x·cos + rotate_half(x)·sin``: ``rotate_half`` slices the two halves, negates one, concatenates. ``width`` and
    ``angles``: each head's width in x and in cos and sin, where the angles are the wider (a head of 1 against one
    pair: the products broadcast to the angles' width, the queries' and keys' d_qk; ``rotate_half`` keeps x's).

    No notebook calls it; it works behind the helpers of ``12_finetune_quantize_serve``."""
    n = x.numel // width * angles if width and angles > width else None
    a = tape.mul(x, cos, numel=n)
    # rotate_half's cat, neg and two slices, as one node: its backward makes a half-size negation and, per slice, a
    # full-size zero tensor the slice's gradient is copied into
    rot = tape.new(f"rotate_half({x.name})", x.numel, x.dtype, x.grad)
    tape.record("rotate_half", [x], [rot], [], {id(x): allocated(x.numel * ITEMSIZE[x.dtype])},
                temp=allocated(x.numel * ITEMSIZE[x.dtype]) + allocated(x.numel // 2 * ITEMSIZE[x.dtype]))
    b = tape.mul(rot, sin, numel=n)
    return tape.add(a, b)


@dataclass(frozen=True)
class DecoderSpec:
    """What a LLaMA-like decoder layer does differently, as its transformers module writes it (one entry a family).

    ``bias``: q, k, v (and o) biases by default (Qwen2: q, k, v only); ``qk_norm``: an RMSNorm on each head's q and k
    (``"head"``, Qwen3) or on the whole projections (``"full"``, OLMo 2); ``fused_qkv``/``fused_gate_up``: one
    projection split in slices (Phi-3); ``norm``: ``"llama"`` (x·rsqrt in fp32, back, times the gain) or
    ``"gemma"`` (all in fp32, times 1 + the gain); ``post_norms``: the norms after the sublayers (OLMo 2);
    ``embed_scale``: the embeddings times √H (Gemma); ``nope``: the layers without rotary positions (SmolLM3);
    ``norm`` ``"olmo2"``: in fp32 to the end, times the gain, then back; ``rope_fp32``: cos and sin kept in fp32, the
    rotary computed in fp32 and q and k cast back (OLMo 2);
    ``window``: the sliding window of the layers that have one (None: no layer has); ``rope_cat``: the rotary on the
    first ``partial_rotary_factor``·d values of each head, the rest passed, and the two concatenated (Phi-3: a copy
    of q and of k even when the factor is 1).
    No notebook calls it; it works behind the helpers of ``12_finetune_quantize_serve``."""

    bias: bool | None = None  # None: the config's attention_bias
    o_bias: bool | None = None
    qk_norm: str | None = None
    fused_qkv: bool = False
    fused_gate_up: bool = False
    norm: str = "llama"
    post_norms: bool = False
    embed_scale: bool = False
    act: str = "silu"
    nope: Callable[[Model, int], bool] | None = None
    window: Callable[[Model], tuple[int | None, bool]] | None = None
    rope_cat: bool = False
    rope_fp32: bool = False


LLAMA_SPEC = DecoderSpec()


def rotary_angles(m: Model, spec: DecoderSpec = LLAMA_SPEC) -> int:
    """The width of a LLaMA-like layer's cos and sin (:func:`angles_width`): of the whole head, or of
    ``partial_rotary_factor`` of it (``rope_cat``, Phi-3); d_qk, not d_k, for a head of 1.

    No notebook calls it; it works behind the helpers of ``12_finetune_quantize_serve``."""
    d = m["d_k"]
    return angles_width(int(d * float(m.read("partial_rotary_factor", 1.0))) if spec.rope_cat else d)


def _norm(tape: Tape, m: Model, spec: DecoderSpec, x: Tensor, width: int, rows: int, name: str) -> Tensor:
    return tape.rms_norm(x, m.param(tape, f"{name}.weight", width), rows, one_plus=spec.norm == "gemma",
                         gain_fp32=spec.norm == "olmo2")


def llama_layer(tape: Tape, m: Model, x: Tensor, cos: Tensor | None, sin: Tensor | None, use_cache: bool,
                spec: DecoderSpec = LLAMA_SPEC, mask: Tensor | None = None) -> Tensor:
    """``LlamaDecoderLayer`` (and the layers of the families that change a piece of it, :class:`DecoderSpec`):
    RMSNorm, attention (rotary q and k, grouped keys and values), RMSNorm, SwiGLU; the residual adds.

    No notebook calls it; it works behind the helpers of ``12_finetune_quantize_serve``."""
    T, H, I, A, A_kv, d = m.tokens, m["H"], m["I"], m["A"], m["A_kv"], m["d_k"]
    bias = m.config.flags.get("attention_bias", False) if spec.bias is None else spec.bias
    o_bias = bias if spec.o_bias is None else spec.o_bias
    mlp_bias = m.config.flags.get("mlp_bias", False)
    h = x if spec.post_norms else _norm(tape, m, spec, x, H, T, "input_layernorm")
    if spec.fused_qkv:
        qkv = projection(tape, m, h, H, (A + 2 * A_kv) * d, "qkv_proj", bias)
        q = tape.view(qkv, "q", T * A * d)
        k = tape.view(qkv, "k", T * A_kv * d)
        v = tape.view(qkv, "v", T * A_kv * d)
    else:
        q = projection(tape, m, h, H, A * d, "q_proj", bias)
        k = projection(tape, m, h, H, A_kv * d, "k_proj", bias)
        v = projection(tape, m, h, H, A_kv * d, "v_proj", bias)
    if spec.qk_norm == "full":
        q = _norm(tape, m, spec, q, A * d, T, "q_norm")
        k = _norm(tape, m, spec, k, A_kv * d, T, "k_norm")
    elif spec.qk_norm == "head":
        q = _norm(tape, m, spec, q, d, T * A, "q_norm")
        k = _norm(tape, m, spec, k, d, T * A_kv, "k_norm")
    angles = rotary_angles(m, spec)  # a head of 1: queries and keys leave the rotary step d_qk wide, values d_k
    if cos is not None and spec.rope_cat:
        q, k = partial_rope(tape, q, cos, sin, angles, d), partial_rope(tape, k, cos, sin, angles, d)
    elif cos is not None and spec.rope_fp32:
        q, k = (tape.cast(rope(tape, t, cos, sin, d, angles), t.dtype) for t in (q, k))
    elif cos is not None:
        q, k = rope(tape, q, cos, sin, d, angles), rope(tape, k, cos, sin, d, angles)
    if use_cache:  # a training forward with use_cache fills a DynamicCache: each layer's keys and values copied in
        k, v = tape.copy(k, "cached keys"), tape.copy(v, "cached values")
        v.dtype = k.dtype  # the cache starts as an empty tensor of the keys' dtype: cat promotes the values to it
        v.storage.nbytes = v.nbytes
        tape.pin(k, "output")
        tape.pin(v, "output")
    o = decoder_attention(tape, m, q, k, v, A, A_kv, d, mask=mask, heads_first=spec.rope_cat and cos is not None)
    o = projection(tape, m, o, A * d, H, "o_proj", o_bias)
    for t in (q, k, v, h):  # LlamaAttention's locals, and its argument, live until it returns
        tape.touch(t)
    if spec.post_norms:
        o = _norm(tape, m, spec, o, H, T, "post_attention_layernorm")
    x = tape.add(x, o)
    h = x if spec.post_norms else _norm(tape, m, spec, x, H, T, "post_attention_layernorm")
    act = m.read("hidden_act", spec.act) if spec.norm != "gemma" else m.read("hidden_activation",
                                                                            m.read("hidden_act", spec.act))
    if spec.fused_gate_up:
        gu = projection(tape, m, h, H, 2 * I, "gate_up_proj", mlp_bias)
        g, u = tape.split(gu, ("gate", "up"))
        p = tape.mul(u, activation(tape, act, g))
    else:
        g = projection(tape, m, h, H, I, "gate_proj", mlp_bias)
        u = projection(tape, m, h, H, I, "up_proj", mlp_bias)
        a = activation(tape, act, g)
        p = tape.mul(a, u)
    o = projection(tape, m, p, I, H, "down_proj", mlp_bias)
    tape.touch(h)  # the MLP's argument
    if spec.post_norms:
        o = _norm(tape, m, spec, o, H, T, "post_feedforward_layernorm")
    return tape.add(x, o)


def sdpa_kernel(dtype: str, d: int, grouped: bool, mask: bool = False) -> str:
    """The kernel CUDA's ``scaled_dot_product_attention`` runs (:func:`helpers.simulate._sdpa_choice` the same):
    ``flash`` (16-bit, no mask, d a multiple of 8 up to 256), else ``efficient`` (no grouped keys), else ``math``.

    Introduced in ``13_will_it_fit``.
    """
    if dtype in ("bf16", "fp16") and not mask and d % 8 == 0 and d <= 256:
        return "flash"
    if not grouped and d % (4 if dtype == "fp32" else 8) == 0:
        return "efficient"
    return "math"


def _repeat_kv(tape: Tape, k: Tensor, v: Tensor, A: int, A_kv: int) -> tuple[Tensor, Tensor]:
    """Keys and values copied for each query head of their group (transformers' ``repeat_kv``, or SDPA's math path
    under ``enable_gqa``): (B, A, S, d_qk) and (B, A, S, d_k)."""
    k, v = (tape.copy(t, f"{t.name} repeated") for t in (k, v))
    for t in (k, v):
        t.numel = t.numel // A_kv * A
        t.storage.nbytes = t.nbytes
    return k, v


def sdpa(tape: Tape, m: Model, q: Tensor, k: Tensor, v: Tensor, A: int, A_kv: int, d: int, dropout: float,
         mask: Tensor | None = None) -> Tensor:
    """``F.scaled_dot_product_attention`` (causal, or with a boolean ``mask``) with the kernel CUDA picks; the math
    path as torch writes it: q and k each scaled by √scale, q·kᵀ, the causal (or given) mask added, softmax (saved),
    dropout, ·v. A mask: transformers first repeats grouped keys and values (no ``enable_gqa`` with a mask on CUDA),
    and torch turns the booleans into an additive mask of q's dtype, (B, 1, S, S), which the kernel saves.

    No notebook calls it; it works behind the helpers of ``12_finetune_quantize_serve``."""
    B, S = m.B, m.S
    if mask is not None and A_kv != A:
        k, v = _repeat_kv(tape, k, v, A, A_kv)
        A_kv = A
    if tape.autocast:  # on CUDA's lower-precision list
        q, k, v = tape.cast(q, "bf16"), tape.cast(k, "bf16"), tape.cast(v, "bf16")
    bias = None
    if mask is not None:  # torch's convert_boolean_attn_mask: zeros of q's dtype, -inf where not(mask)
        bias = tape.new("additive mask", B * S * S, q.dtype, False)
        tape.record("additive mask", [mask], [bias], [], forward_temp=allocated(B * S * S))
    kernel = sdpa_kernel(q.dtype, q.numel // (B * S * A), A_kv != A, mask is not None)  # q's width: d_qk
    if kernel == "flash":
        return tape.flash(q, k, v, B * A * S, B * S * A * d)
    if kernel == "efficient":
        return tape.efficient(q, k, v, B * A * (-(-S // 32) * 32), B * S * A * d, bias)
    with tape.below_autocast():
        return _sdpa_math(tape, m, q, k, v, A, A_kv, d, dropout, bias)


def _sdpa_math(tape: Tape, m: Model, q: Tensor, k: Tensor, v: Tensor, A: int, A_kv: int, d: int, dropout: float,
               bias: Tensor | None) -> Tensor:
    """SDPA's math path (``_scaled_dot_product_attention_math``): 16-bit q, k and v copied to fp32 first, for
    accuracy, and every step in fp32; the output cast back to q's dtype. Its local tensors (the fp32 copies, the
    scaled queries, the causal mask, the repeated keys and values, the weights, and the weights it also returns, cast
    back and dropped by the caller) live until it returns."""
    B, S = m.B, m.S
    low = q.dtype
    local: list[Tensor] = []
    if low != "fp32":
        q, k, v = local = [tape.cast(t, "fp32") for t in (q, k, v)]
    if A_kv != A:  # enable_gqa on the math path: keys and values repeated for each group
        k, v = _repeat_kv(tape, k, v, A, A_kv)
        local += [k, v]
    q, k = tape.scale(q), tape.scale(k)  # the scaled keys a temporary of the matmul's statement
    w = tape.matmul(q, k, B * A * S * S, "scores")
    if bias is None:
        bias = tape.new("causal mask", S * S, w.dtype, False)
        tape.record("causal mask", [], [bias], [])
        local.append(bias)
    w = tape.add(w, bias)
    w = tape.softmax(w)
    w = tape.dropout(w, dropout)
    returned = tape.cast(w, low, "attention weights (returned, unused)")
    out = tape.cast(tape.matmul(w, v, B * S * A * d, "attention output"), low)
    for t in {id(t): t for t in (*local, q, w, returned)}.values():
        tape.touch(t)
    return out


def decoder_attention(tape: Tape, m: Model, q: Tensor, k: Tensor, v: Tensor, A: int, A_kv: int, d: int,
                      dropout: float = 0.0, causal: bool = True, mask: Tensor | None = None,
                      heads_first: bool = False) -> Tensor:
    """LLaMA's attention: ``scaled_dot_product_attention`` as CUDA runs it (:func:`sdpa`), or transformers' eager
    attention (keys and values repeated per group, q·kᵀ scaled, the mask added, softmax in fp32 saved, back to q's
    dtype, dropout, ·v).

    No notebook calls it; it works behind the helpers of ``12_finetune_quantize_serve``."""
    B, S = m.B, m.S
    if m.step.attn == "sdpa":
        out = sdpa(tape, m, q, k, v, A, A_kv, d, dropout, mask)
        # a q made by cat is heads first in memory: the kernel's output too, so transpose(1, 2).contiguous() copies
        return tape.copy(out, "attention output (contiguous)") if heads_first else out
    scores = B * A * S * S
    if A_kv != A:  # repeat_kv: each key/value head copied for its group of query heads (keys d_qk wide)
        k, v = _repeat_kv(tape, k, v, A, A_kv)
    w = tape.matmul(q, k, scores, "scores")
    w = tape.scale(w)
    if causal:
        w = tape.add(w, mask if mask is not None else tape.input("causal mask", B * S * S, w.dtype))
    w = tape.softmax(w, "fp32")
    w = tape.cast(w, q.dtype if not tape.autocast else "bf16")
    w = tape.dropout(w, dropout)
    out = tape.matmul(w, v, B * S * A * d, "attention output")
    for t in (k, v):  # eager_attention_forward's repeated keys and values, until it returns
        tape.touch(t)
    return out


def llama_model(tape: Tape, m: Model, spec: DecoderSpec = LLAMA_SPEC) -> Tensor:
    """``LlamaForCausalLM.forward`` with ``labels``: the token table, rotary cos/sin, L layers, the final RMSNorm, the
    head over every position, ``ForCausalLMLoss``. Returns the loss. ``spec``: a family that changes a piece.

    No notebook calls it; it works behind the helpers of ``12_finetune_quantize_serve``."""
    T, H, V = m.tokens, m["H"], m["V"]
    window, every = spec.window(m) if spec.window else (None, True)
    masked = window is not None and m.S >= window and m.step.attn == "sdpa"
    if masked and not every:
        raise ConfigError("sliding_window", f"{m.S:,} tokens reach the {window:,}-token sliding window of some "
                                            "layers (not all): this tape writes a window on every layer or none; "
                                            "--simulate runs the step")
    ids = tape.input("input_ids", T, "int64")
    table = m.param(tape, "embed_tokens.weight", V * H)
    x = tape.embedding(ids, table, T, H)
    embeds = x  # LlamaModel's inputs_embeds, a local until it returns
    if m.lora or m.qlora:  # peft's enable_input_require_grads: the embeddings' output is a leaf needing a gradient
        x.grad = tape.grad
        tape.pin(x, "backward")
    if spec.embed_scale:  # Gemma: times √H, a 0-d tensor in the embeddings' dtype
        x = tape.mul(x, tape.new("normalizer", 1, x.dtype, False))
    positions = tape.new("cache_position", m.S, "int64", False)  # arange(S); position_ids is a view of it
    tape.record("arange", [], [positions], [])
    # the sequence reaches the window: transformers builds the mask (SDPA could not be told is_causal)
    # eager attention adds the causal mask transformers builds once, (B, 1, S, S) in the hidden states' dtype
    mask = window_mask(tape, m) if masked else eager_mask(tape, m, x.dtype)
    cos, sin = _rotary(tape, m, "fp32" if spec.rope_fp32 else x.dtype, rotary_angles(m, spec))
    use_cache = bool(m.read("use_cache", True)) and m.step.checkpointing == "none"
    for i in range(m.layers):
        tape.layer = i
        tape.layer_inputs[i] = [x, cos, sin, positions] + ([mask] if mask is not None else [])
        rotary = spec.nope is None or not spec.nope(m, i)
        x = llama_layer(tape, m, x, cos if rotary else None, sin if rotary else None, use_cache, spec, mask)
    tape.layer = None
    x = _norm(tape, m, spec, x, H, T, "norm")
    tape.touch(positions)  # the base model returns: its cache_position, inputs_embeds and mask go
    tape.touch(embeds)
    if mask is not None:
        tape.touch(mask)
    tape.pin(x, "output")  # the base model's output (last_hidden_state) lives until the causal LM returns
    tied = m.config.flags.get("tie_word_embeddings", False)
    head = table if tied else m.param(tape, "lm_head.weight", V * H)
    logits = tape.linear(x, head, V, "logits", rows=T)
    tape.pin(logits, "output")
    return causal_lm_loss(tape, logits, T, V, m.B)


def window_mask(tape: Tape, m: Model) -> Tensor:
    """transformers' sliding-window mask for SDPA (``masking_utils.sdpa_mask``): (1, 1, S, S) booleans, kv > q − W
    and kv ≤ q, each an S × S comparison and-ed onto the last (three of them alive at once), expanded to the batch.

    No notebook calls it; it works behind the helpers of ``12_finetune_quantize_serve``."""
    S2 = allocated(m.S * m.S)
    mask = tape.new("sliding-window mask", m.S * m.S, "bool", False)
    tape.record("sliding-window mask", [], [mask], [], forward_temp=2 * S2)
    return mask


def _rotary(tape: Tape, m: Model, dtype: str, d: int, rows: int = 1) -> tuple[Tensor, Tensor]:
    """The rotary embedding's cos and sin for the S positions (fp32, then the hidden states' dtype), shared by every
    layer; ``rows`` sets of them where the positions are given per sequence (``generate``)."""
    S = m.S * rows
    cos = tape.new("cos", S * d, "fp32", False)
    sin = tape.new("sin", S * d, "fp32", False)
    tape.record("rotary", [], [cos, sin], [])
    return tape.cast(cos, dtype), tape.cast(sin, dtype)


def flash_or_eager(tape: Tape, m: Model, q: Tensor, k: Tensor, v: Tensor, A: int, d: int, dropout: float,
                   heads_first: bool, mask: Tensor | None, softmax_dtype: str | None,
                   strided: tuple[bool, bool, bool] = (False, False, False)) -> Tensor:
    """The attention core, returned in (B, S, A·d) layout ready for the output projection.

    SDPA: FlashAttention; its output takes q's layout, so a q made by ``cat`` (heads first in memory, GPT-NeoX's
    partial rotary) needs a contiguous copy for the projection. Eager (GPT-2, GPT-NeoX, BERT): ``q·kᵀ`` scaled, the
    mask added (promoting to its dtype), softmax (``softmax_dtype``: LLaMA's fp32; None: autocast's fp32, else the
    scores' dtype) saved, back to v's dtype, dropout, ``·v``, then a contiguous copy (B, S, A, d).

    No notebook calls it; it works behind the helpers of ``12_finetune_quantize_serve``."""
    B, S = m.B, m.S
    if m.step.attn == "sdpa":
        out = sdpa(tape, m, q, k, v, A, A, d, dropout) if mask is None else None
        if out is None:
            raise ConfigError("attn", "a masked scaled_dot_product_attention is not taped")
        math = tape.nodes[-1].op == "bmm"
        return tape.copy(out, "attention output (contiguous)") if heads_first or math else out
    scores = B * A * S * S
    # torch.matmul of 4-D tensors runs bmm on (B·A, S, d) reshapes: a strided view (a head slice of a fused projection,
    # a (B, S, A, d) layout) is copied, and the copy is what bmm saves
    q = tape.copy(q, "q (contiguous)") if strided[0] else q
    k = tape.copy(k, "k (contiguous)") if strided[1] else k
    v = tape.copy(v, "v (contiguous)") if strided[2] else v
    w = tape.matmul(q, k, scores, "scores")
    w = tape.scale(w)
    if mask is not None:
        w = tape.add(w, mask)
    w = tape.softmax(w, softmax_dtype)
    w = tape.cast(w, v.dtype if not tape.autocast else ("bf16" if v.dtype == "fp32" else v.dtype))
    w = tape.dropout(w, dropout)
    out = tape.matmul(w, v, B * S * A * d, "attention output")
    return tape.copy(out, "attention output (contiguous)")


def eager_mask(tape: Tape, m: Model, dtype: str) -> Tensor | None:
    """The additive causal mask eager attention adds, (B, 1, S, S) in the hidden states' dtype; None under SDPA.

    No notebook calls it; it works behind the helpers of ``12_finetune_quantize_serve``."""
    if m.step.attn == "sdpa":
        return None
    mask = tape.new("causal mask", m.B * m.S * m.S, dtype, False)
    tape.record("causal mask", [], [mask], [])
    return mask


def gpt2_model(tape: Tape, m: Model) -> Tensor:
    """``GPT2LMHeadModel.forward`` with ``labels``: token and position tables, embedding dropout, L blocks (LayerNorm,
    fused c_attn, attention with dropout, c_proj, residual dropout; LayerNorm, c_fc, GELU, c_proj, dropout), the final
    LayerNorm, the tied head, ``ForCausalLMLoss``.

    No notebook calls it; it works behind the helpers of ``12_finetune_quantize_serve``."""
    T, H, V, A, P = m.tokens, m["H"], m["V"], m["A"], m["P"]
    I = m.config.sizes.get("I") or 4 * H
    d = H // A
    p_embd, p_resid, p_attn = (float(m.read(k, 0.1)) for k in ("embd_pdrop", "resid_pdrop", "attn_pdrop"))
    act = m.read("activation_function", "gelu_new")
    ids = tape.input("input_ids", T, "int64")
    wte = m.param(tape, "wte.weight", V * H)
    embeds = tape.embedding(ids, wte, T, H)
    if m.lora or m.qlora:  # peft's enable_input_require_grads: the token table's output is a leaf needing a gradient
        embeds.grad = tape.grad
        tape.pin(embeds, "backward")
    positions = tape.new("position_ids", m.S, "int64", False)
    tape.record("arange", [], [positions], [])
    pos = tape.embedding(positions, m.param(tape, "wpe.weight", P * H), m.S, H)
    x = tape.add(embeds, pos)
    x = tape.dropout(x, p_embd)
    mask = eager_mask(tape, m, x.dtype)
    use_cache = bool(m.read("use_cache", True)) and m.step.checkpointing == "none"
    for i in range(m.layers):
        tape.layer = i
        tape.layer_inputs[i] = [x, positions] + ([mask] if mask is not None else [])
        h = tape.layer_norm(x, m.param(tape, "ln_1.weight", H), m.param(tape, "ln_1.bias", H), T)
        qkv = projection(tape, m, h, H, 3 * H, "c_attn", bias=True)
        q, k, v = tape.split(qkv, ("q", "k", "v"))
        if use_cache:
            k, v = tape.copy(k, "cached keys"), tape.copy(v, "cached values")
            tape.pin(k, "output")
            tape.pin(v, "output")
        a = flash_or_eager(tape, m, q, k, v, A, d, p_attn, False, mask, None, (True, not use_cache, not use_cache))
        o = projection(tape, m, a, H, H, "attn.c_proj", bias=True)
        tape.touch(a)  # GPT2Attention's attn_output, reassigned only after c_proj returns
        o2 = tape.dropout(o, p_resid)
        for t in (o, qkv, k, v, h):  # its locals and its argument (ln_1's output) live until it returns
            tape.touch(t)
        x = tape.add(o2, x)
        h = tape.layer_norm(x, m.param(tape, "ln_2.weight", H), m.param(tape, "ln_2.bias", H), T)
        f = projection(tape, m, h, H, I, "c_fc", bias=True)
        g = activation(tape, act, f)
        tape.touch(f)
        c = projection(tape, m, g, I, H, "mlp.c_proj", bias=True)
        tape.touch(g)
        y = tape.dropout(c, p_resid)
        tape.touch(c)
        tape.touch(h)
        x = tape.add(x, y)
    tape.layer = None
    x = tape.layer_norm(x, m.param(tape, "ln_f.weight", H), m.param(tape, "ln_f.bias", H), T)
    for t in (positions, embeds, pos):  # GPT2Model's locals
        tape.touch(t)
    tape.pin(x, "output")
    logits = tape.linear(x, wte, V, "logits", rows=T)
    tape.pin(logits, "output")
    return causal_lm_loss(tape, logits, T, V, m.B)


def activation(tape: Tape, name: str, x: Tensor) -> Tensor:
    """transformers' ``ACT2FN[name]``: one saving operator (SiLU, GELU, ReLU), or GPT-2's ``gelu_new`` written out:
    ``0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))`` (the cube in fp32 under CUDA's autocast).

    No notebook calls it; it works behind the helpers of ``12_finetune_quantize_serve``."""
    if name in ("gelu", "gelu_pytorch_tanh", "gelu_python", "silu", "swish"):
        return tape.unary(name, x, "input")
    if name == "relu":
        return tape.unary("relu", x, "output")
    if name in ("gelu_new", "gelu_fast", "gelu_accurate"):
        half = tape.scale(x)
        cube_in = tape.cast(x, "fp32") if tape.autocast else x
        cube = tape.unary("pow", cube_in, "input")
        inner = tape.add(x, tape.scale(cube))
        t = tape.unary("tanh", tape.scale(inner), "output")
        one = tape.unary("add_scalar", t, "none")
        return tape.mul(half, one)
    raise ConfigError("activation_function", f"{name!r}: its step's tape is not written")


def gpt_neox_model(tape: Tape, m: Model) -> Tensor:
    """``GPTNeoXForCausalLM.forward`` with ``labels``: the token table, L layers (parallel residual: attention and MLP
    both read the layer's input; partial rotary on ``rotary_pct`` of each head), the final LayerNorm, the untied
    ``embed_out``.

    No notebook calls it; it works behind the helpers of ``12_finetune_quantize_serve``."""
    T, H, V, A, I = m.tokens, m["H"], m["V"], m["A"], m["I"]
    d = H // A
    parallel = m.config.flags.get("use_parallel_residual", True)
    rot = int(d * float(m.read("rotary_pct", m.read("partial_rotary_factor", 0.25))))
    p_hidden, p_attn = float(m.read("hidden_dropout", 0.0)), float(m.read("attention_dropout", 0.0))
    ids = tape.input("input_ids", T, "int64")
    x = tape.embedding(ids, m.param(tape, "embed_in.weight", V * H), T, H)
    embeds = x
    if m.lora or m.qlora:
        x.grad = tape.grad
        tape.pin(x, "backward")
    x = tape.dropout(x, p_hidden)
    positions = tape.new("cache_position", m.S, "int64", False)
    tape.record("arange", [], [positions], [])
    mask = eager_mask(tape, m, x.dtype)
    angles = angles_width(rot)  # 2 for a head of 1: its queries and keys run 2 wide (d_qk)
    cos, sin = _rotary(tape, m, x.dtype, angles)
    use_cache = bool(m.read("use_cache", True)) and m.step.checkpointing == "none"
    bias = m.config.flags.get("attention_bias", True)
    for i in range(m.layers):
        tape.layer = i
        tape.layer_inputs[i] = [x, cos, sin, positions] + ([mask] if mask is not None else [])
        h = tape.layer_norm(x, m.param(tape, "input_layernorm.weight", H), m.param(tape, "input_layernorm.bias", H), T)
        qkv = projection(tape, m, h, H, 3 * H, "query_key_value", bias)
        q, k, v = tape.split(qkv, ("q", "k", "v"))
        q, k = partial_rope(tape, q, cos, sin, angles, d), partial_rope(tape, k, cos, sin, angles, d)
        if use_cache:
            k, v = tape.copy(k, "cached keys"), tape.copy(v, "cached values")
            v.dtype = k.dtype
            v.storage.nbytes = v.nbytes
            tape.pin(k, "output")
            tape.pin(v, "output")
        o = flash_or_eager(tape, m, q, k, v, A, d, p_attn, True, mask, "fp32")
        o = projection(tape, m, o, H, H, "dense", bias)
        o = tape.dropout(o, p_hidden)
        if parallel:
            h = tape.layer_norm(x, m.param(tape, "post_attention_layernorm.weight", H),
                                m.param(tape, "post_attention_layernorm.bias", H), T)
        else:
            o = tape.add(o, x)
            h = tape.layer_norm(o, m.param(tape, "post_attention_layernorm.weight", H),
                                m.param(tape, "post_attention_layernorm.bias", H), T)
        h = projection(tape, m, h, H, I, "dense_h_to_4h", True)
        h = activation(tape, m.read("hidden_act", "gelu"), h)
        h = projection(tape, m, h, I, H, "dense_4h_to_h", True)
        h = tape.dropout(h, p_hidden)
        x = tape.add(tape.add(h, o), x) if parallel else tape.add(h, o)
    tape.layer = None
    x = tape.layer_norm(x, m.param(tape, "final_layer_norm.weight", H), m.param(tape, "final_layer_norm.bias", H), T)
    tape.touch(positions)
    tape.touch(embeds)
    tape.pin(x, "output")
    tied = m.config.flags.get("tie_word_embeddings", False)
    head = m.param(tape, "embed_out.weight" if not tied else "embed_in.weight", V * H)
    logits = tape.linear(x, head, V, "logits", rows=T)
    tape.pin(logits, "output")
    return causal_lm_loss(tape, logits, T, V, m.B)


def partial_rope(tape: Tape, x: Tensor, cos: Tensor, sin: Tensor, rot: int, d: int) -> Tensor:
    """GPT-NeoX's rotary on the first ``rot`` (the angles' width, ``cos.shape[-1]``) of each head's ``d`` values, the
    rest passed through: ``cat`` of the two (a new tensor, heads first in memory). A head of 1 against 2 angles comes
    out 2 wide (d_qk).

    No notebook calls it; it works behind the helpers of ``12_finetune_quantize_serve``."""
    turned = min(rot, d)  # x[..., :rot] of a narrower head: all of it
    part = tape.view(x, f"{x.name}[..., :rot]", x.numel * turned // d)
    rest = tape.view(x, f"{x.name}[..., rot:]", x.numel - part.numel)
    rotated = rope(tape, part, cos, sin, turned, rot)
    out = tape.new(f"rotary {x.name}", rotated.numel + rest.numel, tape.promote(rotated.dtype, x.dtype), x.grad)
    tape.record("cat", [rotated, rest], [out], [], {id(rotated): 0, id(rest): 0})
    return out


def bert_classifier(tape: Tape, m: Model) -> Tensor:
    """``BertForSequenceClassification.forward`` with ``labels`` (RoBERTa's and the other BERT-like encoders' the
    same way): token, segment and position tables summed, LayerNorm, dropout; L layers (q, k, v, attention,
    dense, dropout, residual LayerNorm; intermediate, GELU, output, dropout, residual LayerNorm); the pooler on the
    first token, dropout, the classifier, cross-entropy over C labels.

    No notebook calls it; it works behind the helpers of ``12_finetune_quantize_serve``."""
    T, H, V, A, I, P = m.tokens, m["H"], m["V"], m["A"], m["I"], m["P"]
    d = H // A
    C = m.config.sizes.get("C", 2)
    p_hidden = float(m.read("hidden_dropout_prob", 0.1))
    p_attn = float(m.read("attention_probs_dropout_prob", 0.1))
    ids = tape.input("input_ids", T, "int64")
    x = tape.embedding(ids, m.param(tape, "word_embeddings.weight", V * H), T, H)
    if m.lora or m.qlora:  # peft's enable_input_require_grads: the token table's output is a leaf needing a gradient
        x.grad = tape.grad
        tape.pin(x, "backward")
    segments = tape.new("token_type_ids", m.S, "int64", False)  # gathered from the zero buffer
    tape.record("gather", [], [segments], [])
    if m["T"]:
        x = tape.add(x, tape.embedding(segments, m.param(tape, "token_type_embeddings.weight", m["T"] * H), T, H))
    x = tape.add(x, tape.embedding(tape.input("position_ids", m.S, "int64"),
                                   m.param(tape, "position_embeddings.weight", P * H), m.S, H))
    x = tape.layer_norm(x, m.param(tape, "embeddings.LayerNorm.weight", H), m.param(tape, "embeddings.LayerNorm.bias", H),
                        T)
    x = tape.dropout(x, p_hidden)
    embeds = x  # BertModel's embedding_output, a local until it returns (after the pooler)
    mask = eager_mask(tape, m, x.dtype)
    if mask is not None:
        mask.storage.nbytes = allocated(m.B * m.S * m.S * ITEMSIZE[mask.dtype])
    for i in range(m.layers):
        tape.layer = i
        tape.layer_inputs[i] = [x] + ([mask] if mask is not None else [])
        q = projection(tape, m, x, H, H, "query", True)
        k = projection(tape, m, x, H, H, "key", True)
        v = projection(tape, m, x, H, H, "value", True)
        a = flash_or_eager(tape, m, q, k, v, A, d, p_attn, False, mask, None, (True, True, True))
        for t in (q, k, v):
            tape.touch(t)
        o = projection(tape, m, a, H, H, "attention.output.dense", True)
        o2 = tape.dropout(o, p_hidden)
        tape.touch(o)
        y = tape.layer_norm(tape.add(o2, x), m.param(tape, "attention.output.LayerNorm.weight", H),
                            m.param(tape, "attention.output.LayerNorm.bias", H), T)
        tape.touch(o2)  # BertSelfOutput's hidden_states: the dropout's output, alive until its LayerNorm returns
        tape.touch(a)
        f = projection(tape, m, y, H, I, "intermediate.dense", True)
        g = activation(tape, m.read("hidden_act", "gelu"), f)
        tape.touch(f)
        h = projection(tape, m, g, I, H, "output.dense", True)
        h2 = tape.dropout(h, p_hidden)
        tape.touch(h)
        z = tape.layer_norm(tape.add(h2, y), m.param(tape, "output.LayerNorm.weight", H),
                            m.param(tape, "output.LayerNorm.bias", H), T)
        tape.touch(h2)
        tape.touch(g)
        tape.touch(y)  # BertLayer's attention_output and its input live until the layer returns
        tape.touch(x)
        x = z
    tape.layer = None
    tape.pin(x, "output")
    first = tape.view(x, "first token", m.B * H)
    pooled = projection(tape, m, first, H, H, "pooler.dense", True, targeted=True)
    pooled = tape.unary("tanh", pooled, "output")
    tape.touch(embeds)
    pooled = tape.dropout(pooled, float(m.read("classifier_dropout", None) or p_hidden))
    logits = projection(tape, m, pooled, H, C, "classifier", True, targeted=False)
    tape.pin(logits, "output")
    return labels_loss(tape, logits, m.B, C)


ENCODERS = ("bert", "roberta", "xlm-roberta")
# the families whose layers are all alike (SmolLM3's every fourth has no rotary positions: written out whole)
FOLDABLE = ("llama", "mistral", "qwen2", "qwen3", "phi3", "olmo2", "gemma", "gpt2", "gpt_neox", "bert", "roberta",
            "xlm-roberta")
def _smollm3_nope(m: Model, i: int) -> bool:
    """SmolLM3's layers without rotary positions: ``no_rope_layers[i] == 0`` (default: every fourth layer)."""
    flags = m.raw.get("no_rope_layers")
    if flags is None:
        interval = int(m.read("no_rope_layer_interval", 4))
        return (i + 1) % interval == 0
    return not flags[i]


def _every_layer_window(default: int | None) -> Callable[[Model], tuple[int | None, bool]]:
    """Mistral's and Phi-3's window, every layer's: ``sliding_window`` (Mistral's default 4,096; null: none)."""
    return lambda m: (m.raw.get("sliding_window", default), True)


def _some_layers_window(m: Model) -> tuple[int | None, bool]:
    """Qwen2's, Qwen3's and SmolLM3's: ``sliding_window`` where ``use_sliding_window``, on the layers of type
    ``sliding_attention`` (by default Qwen's from ``max_window_layers`` on, SmolLM3's with rotary positions); and
    whether that is every layer."""
    window = m.raw.get("sliding_window", 4096) if m.raw.get("use_sliding_window") else None
    L = m["L"]
    types = m.raw.get("layer_types")
    if types is not None:
        sliding = [t == "sliding_attention" for t in types[:L]]
    elif m.config.model_type == "smollm3":
        sliding = [not _smollm3_nope(m, i) for i in range(L)]
    else:
        sliding = [i >= int(m.read("max_window_layers", 28)) for i in range(L)]
    if window is None or not any(sliding):
        return None, True
    return window, all(sliding)


SPECS: dict[str, DecoderSpec] = {
    "llama": LLAMA_SPEC,
    "mistral": DecoderSpec(window=_every_layer_window(4096)),
    "qwen2": DecoderSpec(bias=True, o_bias=False, window=_some_layers_window),
    "qwen3": DecoderSpec(qk_norm="head", window=_some_layers_window),
    "phi3": DecoderSpec(fused_qkv=True, fused_gate_up=True, window=_every_layer_window(None), rope_cat=True),
    "smollm3": DecoderSpec(nope=_smollm3_nope, window=_some_layers_window),
    "olmo2": DecoderSpec(qk_norm="full", post_norms=True, norm="olmo2", rope_fp32=True),
    "gemma": DecoderSpec(norm="gemma", embed_scale=True, act="gelu_pytorch_tanh"),
}


def _decoder(spec: DecoderSpec) -> Callable[[Tape, Model], Tensor]:
    return lambda tape, m: llama_model(tape, m, spec)


PROGRAMS: dict[str, Callable[[Tape, Model], Tensor]] = {
    **{kind: _decoder(spec) for kind, spec in SPECS.items()},
    "gpt2": gpt2_model, "gpt_neox": gpt_neox_model,
    "bert": bert_classifier, "roberta": bert_classifier, "xlm-roberta": bert_classifier,
}


def _buffers(m: Model) -> int:
    """The model's buffers, as transformers registers them: the rotary ``inv_freq`` and ``original_inv_freq`` (fp32,
    one angle per pair of a head's rotated width, ⌈rotated/2⌉, each), BERT's ``position_ids`` and ``token_type_ids``
    (int64, P each); GPT-2 none."""
    kind = m.config.model_type
    if kind in ENCODERS:
        return 2 * allocated(8 * m["P"])
    if kind == "gpt2":
        return 0
    if kind == "gpt_neox":
        d = m["H"] // m["A"]
        rot = int(d * float(m.read("rotary_pct", m.read("partial_rotary_factor", 0.25))))
        return 2 * allocated(4 * (angles_width(rot) // 2))
    inv_freq = 2 * allocated(4 * (rotary_angles(m, SPECS.get(kind, LLAMA_SPEC)) // 2))
    return inv_freq + (BLOCK if kind == "gemma" else 0)  # Gemma: and the embeddings' scale, √H as a 0-d fp32 buffer


def resident(step: Step) -> dict[str, int]:
    """What a step starts with, by kind: the weights (trained or frozen), the LoRA adapters, their gradients and the
    optimizer's moments, every tensor booked as the allocator books it.

    Introduced in ``13_will_it_fit``.
    """
    from .lora import targeted
    from .params import param_layout

    m = _model(step)
    config = training_config(step.config)
    rows = list(param_layout(config).rows())
    item = ITEMSIZE[m.weights]
    parts: dict[str, int] = {}
    trained: list[int] = []
    if step.method == "full":
        parts["weights"] = sum((n * allocated(p.count * item) for p, n in rows), 0)
        trained = [allocated(p.count * item) for p, n in rows for _ in range(n)]
    else:
        adapters = targeted(config, step.targets, step.rank)
        quantized = set()
        frozen = 0
        if step.method == "qlora":
            from .lora import modules
            linear = [mod for mod in modules(config).values() if mod.kind == "linear" and not mod.head]
            quantized = {f"{mod.name}.weight" for mod in linear}
            frozen += sum((nf4_allocated(mod.shape[0] * mod.shape[1]) for mod in linear), 0)
        for p in param_layout(config).expand():
            if p.name in quantized:
                continue
            frozen += allocated(p.count * ITEMSIZE["bf16" if step.method == "qlora" else m.weights])
        parts["weights"] = frozen
        trained = [allocated(4 * v) for a in adapters for v in (a.a, a.b)]
        parts["adapters"] = sum(trained, 0)
    parts["buffers"] = _buffers(m)
    parts["inputs"] = allocated(8 * m.tokens)  # input_ids (a language model's labels are the same tensor)
    if step.config.model_type in ENCODERS:
        parts["inputs"] += allocated(8 * m.B)  # one label per sequence
    parts["gradients"] = sum(trained, 0)
    parts["optimizer state"] = optimizer_state(step.optimizer, *trained_values(step))
    return parts


def trained_values(step: Step) -> tuple[list[int], int]:
    """The values of each trainable tensor, and the bytes of one (the adapters' fp32; full: the weights' dtype).

    No notebook calls it; it works behind the helpers of ``12_finetune_quantize_serve``."""
    from .lora import targeted
    from .params import param_layout

    m = _model(step)
    config = training_config(step.config)
    if step.method == "full":
        return [p.count for p, n in param_layout(config).rows() for _ in range(n)], ITEMSIZE[m.weights]
    return [v for a in targeted(config, step.targets, step.rank) for v in (a.a, a.b)], 4


def optimizer_state(optimizer: str, values: list[int], itemsize: int) -> int:
    """The optimizer's state for trainable tensors of these many values: torch's AdamW two moments in the tensors'
    dtype (its step counters stay on the host); bitsandbytes' AdamW8bit two uint8 moments and two fp32 absmax per 256
    values (fp32 moments under 4,096 values; its two 256-entry maps shared); SGD without momentum none.

    No notebook calls it; it works behind the helpers of ``12_finetune_quantize_serve``.
    """
    if optimizer == "adamw":
        return 2 * sum((allocated(n * itemsize) for n in values), 0)
    if optimizer == "sgd":
        return 0
    if optimizer == "adamw8bit":

        total = 0
        for n in values:
            if n < MIN_8BIT_SIZE:
                total += 2 * allocated(4 * n)
            else:
                total += 2 * allocated(n) + 2 * allocated(4 * -(-n // ADAM8_BLOCK))
        return total + 2 * allocated(4 * 256)
    raise ConfigError("--optimizer", f"must be adamw, adamw8bit or sgd, got {optimizer!r}")


def nf4_allocated(n: int) -> int:
    """bitsandbytes' NF4 weight with double quantization as the allocator books it: the packed values, one uint8
    absmax per 64, one fp32 absmax per 256 of those, the 256-entry fp32 code, the 16-entry NF4 code, the offset.

    No notebook calls it; it works behind the helpers of ``12_finetune_quantize_serve``."""
    blocks = -(-n // 64)
    return (allocated(-(-n // 2)) + allocated(blocks) + allocated(4 * -(-blocks // 256)) + allocated(4 * 256)
            + allocated(4 * 16) + allocated(4))


def training_class(config: ModelConfig) -> str:
    """The class a fine-tuning step trains: the one ``--class`` names, else the family's language model, else (an
    encoder, whose base class has no loss) its ``...ForSequenceClassification``.

    Introduced in ``13_will_it_fit``.
    """
    if config.model_class is not None:
        return config.model_class
    if config.model_type in ENCODERS:
        return next(name for name in config.family.classes if name.endswith("ForSequenceClassification"))
    return config.family.architecture


def training_config(config: ModelConfig) -> ModelConfig:
    """``config`` as the class :func:`training_class` trains (an encoder's label head added, C = 2 by default).

    No notebook calls it; it works behind the helpers of ``12_finetune_quantize_serve``."""
    from dataclasses import replace

    name = training_class(config)
    if name == (config.model_class or config.family.architecture):
        return config
    return replace(config, model_class=name, sizes={**config.sizes, "C": config.sizes.get("C", 2)})


def _model(step: Step) -> Model:
    if step.method not in ("full", "lora", "qlora"):
        raise ConfigError("--method", f"must be full, lora or qlora, got {step.method!r}")
    weights = step.weight_dtype
    if step.method == "qlora":
        weights = "bf16" if weights == "fp32" else weights
    return Model(step.config, step, step.batch, step.seq_len, weights, step.method == "full",
                 step.method == "lora", step.method == "qlora", step.config.raw)


def build_tape(step: Step, fold: bool = False) -> tuple[Tape, Tensor, Model]:
    """The step's forward pass as a tape, and its loss (``fold``: a deep stack of identical layers as FOLD of them).

    Introduced in ``13_will_it_fit``."""
    m = _model(step)
    if fold and m["L"] > FOLD and step.config.model_type in FOLDABLE:
        m.built = FOLD
    autocast = step.autocast != "none"
    tape = Tape(autocast, "bf16" if autocast else m.weights)
    program = PROGRAMS.get(step.config.model_type)
    if program is None:
        raise ConfigError("model_type", f"{step.config.model_type!r}: no tape of its training step is written here; "
                                        "--simulate runs the step itself")
    loss = program(tape, m)
    return tape, loss, m


def training_peak(step: Step) -> Peak:
    """The peak of a training step: forward, backward, optimizer step, each by part, the highest of them.

    Introduced in ``13_will_it_fit``.
    """
    tape, loss, m = build_tape(step, fold=True)
    held = resident(step)
    R = sum(held.values(), 0)
    workspace = MATMUL_THREADS * CUBLAS_WORKSPACE
    ckpt = step.checkpointing == "full"
    layer_of = {i: node.layer for i, node in enumerate(tape.nodes)}
    layer_nodes: dict[int, list[int]] = {}
    for i, node in enumerate(tape.nodes):
        if node.layer is not None:
            layer_nodes.setdefault(node.layer, []).append(i)
    if ckpt:  # a checkpointed layer keeps only its input; its own nodes save nothing until recomputed
        for layer, nodes in layer_nodes.items():
            first = tape.nodes[nodes[0]]
            first.saved = list(first.saved) + [t for t in tape.layer_inputs.get(layer, []) if t.storage is not None]
        keep = lambda node: node.layer is None or node is tape.nodes[layer_nodes[node.layer][0]]  # noqa: E731
    else:
        keep = lambda node: True  # noqa: E731
    saving = keep
    if ckpt:
        originals = {i: list(tape.nodes[i].saved) for nodes in layer_nodes.values() for i in nodes}
        for nodes in layer_nodes.values():
            for i in nodes[1:]:
                tape.nodes[i].saved = []
    levels: list[int] = []
    forward_peak, live_end = _forward_live(tape, 0, saving, levels)
    extra = 0
    if m.built is not None:  # the folded copies: each leaves what a middle layer leaves live
        ends = tape.__dict__["layer_ends"]
        extra = (m["L"] - m.built) * (ends[FOLDED_AFTER + 1] - ends[FOLDED_AFTER])
        boundary = max(i for i, node in enumerate(tape.nodes) if node.layer == FOLDED_AFTER)
        forward_peak = max(max(levels[:boundary + 1], default=0), max(levels[boundary + 1:], default=0) + extra)
    # the backward starts from what the forward kept: saved tensors (pinned ones are dropped with the output)
    saved_ids = set()
    for node in tape.nodes:
        if saving(node):
            saved_ids.update(id(t.storage) for t in node.saved if t.storage is not None)
    saved_ids.update(key for key, (s, until) in tape.pinned.items() if until == "backward")
    start = {key: s for key, s in live_end.items() if key in saved_ids}
    if ckpt:
        for nodes in layer_nodes.values():
            for i in nodes[1:]:
                tape.nodes[i].saved = originals[i]
            first = tape.nodes[nodes[0]]
            first.saved = originals[nodes[0]] + [t for t in first.saved if t not in originals[nodes[0]]]
    if m.built is not None:  # into the backward, each folded copy brings only what its layer saved (not its pins)
        holders: dict[int, set[int | None]] = {}
        for node in tape.nodes:
            if saving(node):
                for t in node.saved:
                    if t.storage is not None:
                        holders.setdefault(id(t.storage), set()).add(node.layer)
        middle = sum((s.nbytes for key, s in start.items() if holders.get(key) == {FOLDED_AFTER + 1}), 0)
        extra = (m["L"] - m.built) * middle
    backward_walk, _ = _backward(tape, loss, start, layer_nodes if ckpt else {}, layer_of, TRACE, extra)
    at_start = sum((s.nbytes for s in start.values()), 0)
    temporaries = sum(allocated_trained(step), 0) if step.optimizer == "adamw" else 0
    phases = {
        FORWARD: {**held, "activations and temporaries": forward_peak, "cuBLAS workspaces": workspace},
        BACKWARD: {**held, "activations and temporaries": at_start + backward_walk, "cuBLAS workspaces": workspace},
        STEP: {**held, "optimizer temporaries": temporaries, "cuBLAS workspaces": workspace},
    }
    del layer_of
    totals = {name: sum(parts.values()) for name, parts in phases.items()}
    phase = max(totals, key=lambda name: totals[name])
    del R
    return Peak(totals[phase], phase, phases, workspace)


# --- will it fit? ---------------------------------------------------------------------------------------------------

CONTEXT = 512 * MiB  # the CUDA context and its libraries' modules, outside torch's allocator: an allowance, not measured


def reserve_margin(generate: bool = False) -> float:
    """The most the caching allocator reserved beyond what it had handed out at the peak, as a fraction, over the
    training steps of ``data/gpu_memory.json`` (``peak_reserved / peak_allocated − 1``), or over its ``generate``
    calls (``generate``: the prefill's blocks stay cached while the decode's longer caches need new ones).

    Introduced in ``13_will_it_fit``.
    """
    rows = measured()["rows"]
    return max(r["peak_reserved"] / r["peak_allocated"] - 1 for r in rows if (r["method"] == "inference") == generate)


def fits(peak: Peak, threads: int = MATMUL_THREADS) -> dict[str, dict[str, Any]]:
    """For each GPU of ``data/hardware.json``: the peak with that GPU's cuBLAS workspaces, the memory CUDA reports,
    and the verdict: ``"yes"`` when the peak, the allocator's largest measured reserve on top of it (a training
    step's, or ``generate``'s) and the context allowance fit; ``"no"`` when the peak alone does not; ``"tight"``
    between.

    Introduced in ``13_will_it_fit``.
    """
    from .budget import gpu_table

    margin = reserve_margin(generate=PREFILL in peak.phases)
    out = {}
    for key, g in gpu_table().items():
        need = peak.peak_bytes - peak.workspace + threads * g.cublas_workspace
        if need * (1 + margin) + CONTEXT <= g.cuda_memory:
            verdict = "yes"
        elif need + CONTEXT > g.cuda_memory:
            verdict = "no"
        else:
            verdict = "tight"
        out[key] = {"fits": verdict, "peak_bytes": need, "cuda_memory": g.cuda_memory,
                    "headroom_bytes": g.cuda_memory - need}
    return out


def allocated_trained(step: Step) -> list[int]:
    """The bytes of each trainable tensor as the allocator books it (AdamW's foreach temporaries are one of each).

    No notebook calls it; it works behind the helpers of ``12_finetune_quantize_serve``."""
    from .lora import targeted
    from .params import param_layout

    m = _model(step)
    config = training_config(step.config)
    if step.method == "full":
        return [allocated(p.count * ITEMSIZE[m.weights]) for p, n in param_layout(config).rows() for _ in range(n)]
    return [allocated(4 * v) for a in targeted(config, step.targets, step.rank) for v in (a.a, a.b)]


# --- generate --------------------------------------------------------------------------------------------------------

GENERATE_PROGRAMS: dict[str, Callable[[Tape, Model, int], list[Tensor]]] = {}


def llama_prefill(tape: Tape, m: Model, new_tokens: int) -> list[Tensor]:
    """``generate``'s first forward pass over the prompt (no gradients): each layer's keys and values copied into
    transformers' ``DynamicCache`` (kept), the head on the last position only (``logits_to_keep=1``), the next
    token's logits copied to fp32. Returns the cache's tensors.

    No notebook calls it; it works behind the helpers of ``13_will_it_fit``."""
    T, H, V = m.tokens, m["H"], m["V"]
    ids = tape.input("input_ids", T, "int64")
    mask = tape.new("attention_mask (ones)", T, "int64", False)  # generate's, for the whole call
    tape.record("ones_like", [], [mask], [])
    tape.pin(mask, "generate")
    table = m.param(tape, "embed_tokens.weight", V * H)
    x = tape.embedding(ids, table, T, H)
    embeds = x
    positions = tape.new("cache_position", m.S, "int64", False)
    tape.record("arange", [], [positions], [])
    # generate's position_ids, one row per sequence (the mask's cumsum − 1, then a contiguous clone of the prompt's)
    rows = [tape.new(name, T, "int64", False) for name in ("position_ids", "position_ids (clone)")]
    tape.record("position_ids", [mask], rows, [])
    cos, sin = _rotary(tape, m, x.dtype, rotary_angles(m), rows=m.B)
    mask = eager_mask(tape, m, x.dtype)
    cache: list[Tensor] = []
    for i in range(m.layers):
        tape.layer = i
        x_in, x = x, llama_layer(tape, m, x, cos, sin, True, mask=mask)
        tape.touch(x_in)  # the model's loop holds the layer's input until the layer returns
    tape.layer = None
    for node in tape.nodes:
        cache += [t for t in node.outputs if t.name in ("cached keys", "cached values")]
    for t in cache:
        tape.pin(t, "generate")
    x = tape.rms_norm(x, m.param(tape, "norm.weight", H), T)
    for t in (positions, embeds, cos, sin, *rows, *([mask] if mask is not None else [])):  # locals until it returns
        tape.touch(t)
    last = tape.view(x, "last position", m.B * H)
    head = table if m.config.flags.get("tie_word_embeddings", False) else m.param(tape, "lm_head.weight", V * H)
    logits = tape.linear(last, head, V, "logits (last position)", rows=m.B)
    tape.touch(x)
    tape.cast(logits, "fp32", "next-token logits (fp32)")
    return cache


GENERATE_PROGRAMS["llama"] = llama_prefill


def generate_peak(config: ModelConfig, batch: int, prompt: int, new_tokens: int, dtype: str = "bf16",
                  attn: str = "sdpa") -> Peak:
    """The peak of ``model.generate``: a prompt of ``prompt`` tokens for each of ``batch`` sequences, exactly
    ``new_tokens`` new tokens, greedy, transformers' default cache, weights and cache in ``dtype``.

    Introduced in ``13_will_it_fit``. Two phases: the prefill (the prompt's forward pass, no gradients: each layer's
    transients on top of the cache so far), and the decode steps, whose last holds the cache of prompt + new − 1
    tokens while one layer's keys (then values) are copied one token longer (``torch.cat``).
    """
    from .params import param_layout

    program = GENERATE_PROGRAMS.get(config.model_type)
    if program is None:
        raise ConfigError("model_type", f"{config.model_type!r}: no tape of its generate is written here; --simulate "
                                        "runs generate itself")
    step = Step(config, "full", batch, prompt, "none", dtype, "none", attn, "sgd")
    m = _model(step)
    m.trainable = False
    if m["L"] > FOLD and config.model_type in FOLDABLE:
        m.built = FOLD
    tape = Tape(False, dtype, training=False, grad=False)
    cache = program(tape, m, new_tokens)
    weights = sum((n * allocated(p.count * ITEMSIZE[dtype]) for p, n in param_layout(config).rows()), 0)
    held = {"weights": weights, "buffers": _buffers(m), "inputs": allocated(8 * batch * prompt)}
    levels: list[int] = []
    prefill, _ = _forward_live(tape, 0, lambda node: False, levels)
    if m.built is not None:  # each folded layer leaves its keys and values in the cache
        ends = tape.__dict__["layer_ends"]
        extra = (m["L"] - m.built) * (ends[FOLDED_AFTER + 1] - ends[FOLDED_AFTER])
        boundary = max(i for i, node in enumerate(tape.nodes) if node.layer == FOLDED_AFTER)
        prefill = max(max(levels[:boundary + 1], default=0), max(levels[boundary + 1:], default=0) + extra)
        per_layer = [t for t in cache if tape.created.get(id(t.storage)) is not None
                     and tape.nodes[tape.created[id(t.storage)]].layer == FOLDED_AFTER + 1]
        cache = cache + per_layer * (m["L"] - m.built)
    # the last decode step: the cache of prompt + new − 1 tokens, one layer's keys copied one token longer
    per_token = {id(t): t.nbytes // prompt if prompt else 0 for t in cache}
    width = [t.numel // prompt for t in cache]
    final = prompt + new_tokens - 1
    cache_end = sum((allocated(w * final * ITEMSIZE[t.dtype]) for w, t in zip(width, cache)), 0)
    copy = max((allocated(w * (final - 1) * ITEMSIZE[t.dtype]) for w, t in zip(width, cache)), default=0)
    bookkeeping = allocated(8 * batch * prompt) + allocated(8 * batch * (prompt + new_tokens))
    logits = allocated(batch * m["V"] * ITEMSIZE[dtype]) + 2 * allocated(batch * m["V"] * 4)
    del per_token
    workspace = CUBLAS_WORKSPACE
    phases = {
        PREFILL: {**held, "cache and activations": prefill, "cuBLAS workspace": workspace},
        DECODE: {**held, "KV cache": cache_end, "cache copy (one layer's keys, one token longer)": copy,
                 "ids, mask and logits": bookkeeping + logits, "cuBLAS workspace": workspace},
    }
    totals = {name: sum(parts.values()) for name, parts in phases.items()}
    phase = max(totals, key=lambda name: totals[name])
    return Peak(totals[phase], phase, phases, workspace)


def measured() -> dict[str, Any]:
    """``data/gpu_memory.json``: real steps and ``generate`` calls on an H200 and an H100, with their harness.

    Introduced in ``12_finetune_quantize_serve``.
    """
    from .config import DATA_DIR, read_json

    return read_json(DATA_DIR / "gpu_memory.json")


def measured_heldout() -> dict[str, Any]:
    """``data/gpu_memory_heldout.json``: 27 steps and ``generate`` calls measured on an H200 after the engine was
    written, several to a process (``process``, ``order_in_process``).

    Introduced in ``13_will_it_fit``.
    """
    from .config import DATA_DIR, read_json

    return read_json(DATA_DIR / "gpu_memory_heldout.json")


def in_base(row: Mapping[str, Any]) -> int:
    """cuBLAS's workspaces already allocated when a held-out row began (an earlier row of its process had run a
    matrix multiply on each thread); 0 for the first row of a process and for every row of :func:`measured`. The
    engine's peak less this is what such a row measured.

    Introduced in ``13_will_it_fit``.
    """
    if not row.get("order_in_process"):
        return 0
    return CUBLAS_WORKSPACE * (1 if row["method"] == "inference" else MATMUL_THREADS)


def measured_step(row: Mapping[str, Any]) -> Step:
    """A training row of :func:`measured` as a :class:`Step` (its model from ``data/models/`` with its override).

    Introduced in ``13_will_it_fit``.
    """
    from .config import parse_config, read_json, resolve

    raw = {**read_json(resolve(row["model"])), **(row.get("override") or {})}
    config = parse_config(raw, name=row["model"], model_class=row.get("cls"), num_labels=row.get("num_labels"))
    targets = "q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj" if row["method"] == "qlora" else "all-linear"
    return Step(config, row["method"], row["batch"], row["seq_len"], row["checkpointing"],
                "fp32" if row["method"] == "full" else "bf16", "bf16" if row["autocast_bf16"] else "none",
                row["attn"], "adamw", 16, targets)
