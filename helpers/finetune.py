"""What a fine-tuning run holds: LoRA's trainable parameters as peft counts them, QLoRA's NF4 weights as bitsandbytes
holds them, and the bytes of weights, adapters, gradients, optimizer state and activations.

Taught in ``12_finetune_quantize_serve``; behind the command line of ``00_overview`` (``python -m helpers
finetune``). Read from the engine's parameter table alone (no torch, no peft): each tensor's name is the one
transformers gives it, so peft's rules can be applied to the names.

* LoRA (Hu et al. 2021) adds, beside each targeted ``d_out × d_in`` linear layer, ``A`` (r × d_in) and ``B``
  (d_out × r): **r·(d_in + d_out)** trainable values per module (an embedding table V × H: r·(V + H)). GPT-2's
  transposed ``Conv1D`` (in × out) counts the same; a fused projection (Phi-3's ``qkv_proj``, ``gate_up_proj``) is one
  module, one pair.
* ``--targets all-linear`` is peft's rule (``_maybe_include_all_linear_layers``): every ``nn.Linear`` / ``Conv1D``
  but the output head (``get_output_embeddings()``). Routers that transformers holds as a bare ``nn.Parameter``
  (Mixtral's ``mlp.gate``, GPT-OSS's ``mlp.router`` ...) and fused 3-D expert tensors are no linear layer: peft
  leaves them alone. A comma list matches module names by suffix as peft does (``key == t`` or ``key`` ends with
  ``"." + t``); a matched module peft cannot wrap is refused in one line, as peft raises.
* QLoRA (Dettmers et al. 2023): the linear weights in NF4 with double quantization, byte for byte as
  ``bitsandbytes.functional.quantize_4bit(w, blocksize=64, quant_type="nf4", compress_statistics=True)`` holds them
  (:func:`nf4_bytes`); the rest (embeddings, norms, head, biases, routers, fused experts) in bf16.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

from .config import ConfigError, ModelConfig
from .lora import ALL_LINEAR, LINEAR, WRAPPED, Adapter, Module, modules, targeted  # noqa: F401 - finetune's names
from .memory import DTYPE_BITS, FULL, NO_RECOMPUTE, activation_bytes, fmt_bytes
from .params import param_layout
from .quantized import nf4_bytes
from .report import fmt_int, table
from . import peak as _peak
from .peak import ADAM8_BLOCK, MIN_8BIT_SIZE

AUTOCAST, ATTN = _peak.AUTOCAST, _peak.ATTN

METHODS = ("full", "lora", "qlora")
OPTIMIZERS = ("adamw", "adamw8bit", "sgd")
CHECKPOINTING = {"none": NO_RECOMPUTE, "full": FULL}

# bitsandbytes' NF4 with double quantization (functional.quantize_4bit, compress_statistics=True): helpers.quantized
NF4_FORMULA = "⌈n/2⌉ + ⌈n/64⌉ + 4·⌈⌈n/64⌉/256⌉ + 4 + 64 + 1024"

OPTIMIZER_CONVENTIONS = {
    "adamw": "torch.optim.AdamW: exp_avg and exp_avg_sq in fp32 (8 bytes a trainable value) + one fp32 step "
             "scalar per tensor (4·N_t)",
    "adamw8bit": "bitsandbytes AdamW8bit: two uint8 moments + two fp32 absmax per 256 values (2n + 8·⌈n/256⌉), "
                 "fp32 moments (8n) for a tensor under 4096 values; the two 1 KiB code maps once",
    "sgd": "torch.optim.SGD without momentum: no state",
}


def lora_parameters(config: ModelConfig, rank: int, targets: str = ALL_LINEAR) -> int:
    """LoRA's trainable values: r·(d_in + d_out) summed over the targeted modules, what peft's ``get_peft_model``
    leaves trainable (``bias="none"``).

    Introduced in ``12_finetune_quantize_serve``.
    """
    return sum(adapter.values for adapter in targeted(config, targets, rank))


def _dtype_bytes(values: int, dtype: str) -> int:
    return -(-values * DTYPE_BITS[dtype] // 8)


@dataclass(frozen=True)
class Finetune:
    """One fine-tuning run's memory, part by part (bytes), with the formula of each part.
    Introduced in ``12_finetune_quantize_serve``."""

    config: ModelConfig
    method: str
    rank: int
    targets: str
    batch: int
    seq_len: int
    optimizer: str
    checkpointing: str
    weight_dtype: str
    alpha: int | None = None
    autocast: str = "none"  # "bf16": torch.autocast around the forward pass (with fp32 weights: torch AMP's layout)
    attn: str = "sdpa"  # transformers' attention: "sdpa" (its default) or "eager"

    def __post_init__(self) -> None:
        for option, value, allowed in (("--method", self.method, METHODS), ("--optimizer", self.optimizer, OPTIMIZERS),
                                       ("--checkpointing", self.checkpointing, tuple(CHECKPOINTING)),
                                       ("--weight-dtype", self.weight_dtype, tuple(DTYPE_BITS)),
                                       ("--autocast", self.autocast, AUTOCAST), ("--attn", self.attn, ATTN)):
            if value not in allowed:
                raise ConfigError(option, f"must be one of {', '.join(allowed)}, got {value!r}")

    @property
    def adapters(self) -> list[Adapter]:
        """The LoRA pairs (:func:`targeted`); none for full fine-tuning."""
        return [] if self.method == "full" else targeted(self.config, self.targets, self.rank)

    @property
    def parameters(self) -> int:
        """N: every parameter of the model."""
        return param_layout(self.config).total

    @property
    def trainable_parameters(self) -> int:
        """The values the optimizer updates: the adapters (LoRA, QLoRA) or every parameter (full)."""
        if self.method == "full":
            return self.parameters
        return sum((a.values for a in self.adapters), 0)

    @property
    def quantized(self) -> list[Module]:
        """The linear layers QLoRA holds in NF4: every one but the output head."""
        if self.method != "qlora":
            return []
        return [m for m in modules(self.config).values() if m.kind == LINEAR and not m.head]

    @property
    def frozen_weight_bytes(self) -> int:
        """The base model's weights: LoRA, all in ``weight_dtype``; QLoRA, the linear layers' weights in NF4
        (:func:`nf4_bytes`, tensor by tensor) and the rest in ``weight_dtype``; full fine-tuning, none frozen."""
        if self.method == "full":
            return 0
        quantized = [m.shape[0] * m.shape[1] for m in self.quantized]
        rest = self.parameters - sum(quantized, 0)
        return sum((nf4_bytes(n) for n in quantized), 0) + _dtype_bytes(rest, self.weight_dtype)

    @property
    def adapter_bytes(self) -> int:
        """The adapters in fp32 (peft's ``autocast_adapter_dtype=True`` casts bf16/fp16 adapters to fp32)."""
        return 4 * self.trainable_parameters if self.method != "full" else 0

    @property
    def trained_weight_bytes(self) -> int:
        """Full fine-tuning: the weights being trained, in ``weight_dtype`` (LoRA's are the adapters)."""
        return _dtype_bytes(self.parameters, self.weight_dtype) if self.method == "full" else 0

    @property
    def gradient_bytes(self) -> int:
        """One gradient per trainable value, in the trained weights' dtype (fp32 adapters; full: ``weight_dtype``)."""
        if self.method == "full":
            return _dtype_bytes(self.parameters, self.weight_dtype)
        return 4 * self.trainable_parameters

    @property
    def tensors(self) -> list[int]:
        """The sizes of the trainable tensors (the optimizer keeps state per tensor)."""
        if self.method == "full":
            return [p.count for p in param_layout(self.config).expand()]
        return [n for a in self.adapters for n in (a.a, a.b)]

    @property
    def master_bytes(self) -> int:
        """Full fine-tuning in 16-bit weights: the fp32 master copy the optimizer updates (4 bytes a parameter)."""
        return 4 * self.parameters if self.method == "full" and DTYPE_BITS[self.weight_dtype] < 32 else 0

    @property
    def optimizer_bytes(self) -> int:
        """The optimizer's state (:data:`OPTIMIZER_CONVENTIONS`), plus the fp32 master weights of 16-bit full
        fine-tuning."""
        sizes = self.tensors
        if self.optimizer == "sgd":
            state = 0
        elif self.optimizer == "adamw":
            state = 8 * sum(sizes, 0) + 4 * len(sizes)
        else:
            state = sum((8 * n if n < MIN_8BIT_SIZE else 2 * n + 8 * -(-n // ADAM8_BLOCK) for n in sizes), 0)
            state += 2 * 1024 if any(n >= MIN_8BIT_SIZE for n in sizes) else 0
        return state + self.master_bytes

    @property
    def activation_bytes(self) -> int:
        """The layers' saved activations in 16-bit (Korthikanti et al. 2022): full checkpointing, each layer's input,
        2·S·B·H a layer, exactly what autograd saves (tests/test_finetune.py, seven families); none, eq. 1's
        ESTIMATE, 34·S·B·H + 5·A·S²·B a layer, 9 to 19% under what autograd saves on GPT-2."""
        return activation_bytes(self.config, self.batch, self.seq_len, CHECKPOINTING[self.checkpointing])

    @property
    def total_bytes(self) -> int:
        return (self.frozen_weight_bytes + self.adapter_bytes + self.trained_weight_bytes + self.gradient_bytes
                + self.optimizer_bytes + self.activation_bytes)

    @property
    def step(self) -> _peak.Step:
        """This run as :mod:`helpers.peak` plays it."""
        return _peak.Step(self.config, self.method, self.batch, self.seq_len, self.checkpointing, self.weight_dtype,
                          self.autocast, self.attn, self.optimizer, self.rank, self.targets)

    @cached_property
    def peak(self) -> _peak.Peak | None:
        """The step's peak (:func:`helpers.peak.training_peak`): what ``torch.cuda.max_memory_allocated()`` reports.
        None where no tape of the family's step is written (:attr:`peak_refused` says why)."""
        try:
            return _peak.training_peak(self.step)
        except ConfigError as error:
            self.__dict__["peak_refused"] = str(error)
            return None

    def formulas(self) -> dict[str, str]:
        """The formula of each part, as the text output prints it."""
        w = DTYPE_BITS[self.weight_dtype] / 8
        w = int(w) if w == int(w) else w
        lora = "r·Σ(d_in + d_out) over the targeted modules"
        frozen = {"full": "0 (every weight is trained)", "lora": f"{w}·N ({self.weight_dtype})",
                  "qlora": f"Σ NF4 bytes per linear weight ({NF4_FORMULA}) + {w}·(rest of N) ({self.weight_dtype})"}
        checkpoint = ("L·2·S·B·H, each layer's input in bf16 (full checkpointing; exact as autograd saves it)"
                      if self.checkpointing == "full" else
                      "ESTIMATE, Korthikanti et al. 2022 eq. 1: L·S·B·H·(34 + 5·A·S/H) (GPT-2 saves 9-19% more)")
        master = " + 4·N (fp32 master weights)" if self.master_bytes else ""
        return {
            "trainable_parameters": "N" if self.method == "full" else lora,
            "frozen_weight_bytes": frozen[self.method],
            "adapter_bytes": "0" if self.method == "full" else "4·trainable (fp32 adapters)",
            "trained_weight_bytes": f"{w}·N ({self.weight_dtype})" if self.method == "full" else "0",
            "gradient_bytes": f"{w}·N" if self.method == "full" else "4·trainable (fp32)",
            "optimizer_bytes": OPTIMIZER_CONVENTIONS[self.optimizer] + master,
            "activation_bytes": checkpoint + "; the layers only, logits left out",
            "total_bytes": "the sum of the parts above",
        }


KEYS = ("trainable_parameters", "frozen_weight_bytes", "adapter_bytes", "trained_weight_bytes", "gradient_bytes",
        "optimizer_bytes", "activation_bytes", "total_bytes")


def finetune_json(run: Finetune) -> dict[str, Any]:
    """The ``python -m helpers finetune --json`` document: the issue's keys, and the run's settings.

    No notebook calls it; it works behind the helpers of ``00_overview``.
    """
    doc: dict[str, Any] = {"model": run.config.name, "method": run.method, "parameters": run.parameters}
    if run.method != "full":
        doc.update(rank=run.rank, alpha=run.alpha, targets=run.targets,
                   target_modules=len(run.adapters))
    doc.update(batch=run.batch, seq_len=run.seq_len, optimizer=run.optimizer, checkpointing=run.checkpointing,
               weight_dtype=run.weight_dtype, autocast=run.autocast, attn=run.attn,
               **{"class": _peak.training_class(run.config)})
    doc.update({key: getattr(run, key) for key in KEYS})
    doc["activation_estimate"] = run.checkpointing == "none"
    doc.update(_peak_json(run))
    return doc


def _peak_json(run: Finetune) -> dict[str, Any]:
    """The peak's keys of ``finetune --json``: ``peak_bytes``, ``peak_phase``, ``phases`` (bytes by part),
    ``fits`` per GPU, and what the peak leaves out; ``peak_bytes`` null (and ``peak_refused``) without a tape."""
    peak = run.peak
    if peak is None:
        return {"peak_bytes": None, "peak_phase": None, "phases": None, "fits": None,
                "peak_refused": run.__dict__.get("peak_refused")}
    return {"peak_bytes": peak.peak_bytes, "peak_phase": peak.peak_phase, "phases": peak.phases,
            "peak_counted_by": "closed form (helpers.peak)", "fits": _peak.fits(peak),
            "peak_excludes": PEAK_EXCLUDES}


PEAK_EXCLUDES = ("the CUDA context (outside torch's allocator); the caching allocator's reserve beyond what it hands out "
                 "(up to 15.7% of the peak in the measured steps, data/gpu_memory.json); a whole cached block handed out "
                 "when less than 1 MiB of it would be left (--simulate models it)")


def finetune_report(run: Finetune) -> str:
    """The text of ``python -m helpers finetune``: each part's bytes and formula.

    No notebook calls it; it works behind the helpers of ``00_overview``.
    """
    formulas = run.formulas()
    share = run.trainable_parameters / run.parameters if run.parameters else 0.0
    head = f"{run.method}"
    if run.method != "full":
        head += (f", rank r = {run.rank}, targets {run.targets} ({len(run.adapters)} modules)"
                 + ("" if run.alpha is None else f", alpha {run.alpha} (scales the update, no byte)"))
    lines = [f"fine-tuning: {head}; B = {run.batch} × S = {run.seq_len}, optimizer {run.optimizer}, "
             f"checkpointing {run.checkpointing}", "",
             f"trainable parameters: {fmt_int(run.trainable_parameters)} of N = {fmt_int(run.parameters)} "
             f"({share:.4%}) = {formulas['trainable_parameters']}", ""]
    rows = [(key.removesuffix("_bytes").replace("_", " "), fmt_int(getattr(run, key)), fmt_bytes(getattr(run, key)),
             formulas[key]) for key in KEYS[1:]]
    return "\n".join([*lines, table(("part", "bytes", "", "formula"), rows, right=(1, 2)), "", *_peak_lines(run)])


def _peak_lines(run: Finetune) -> list[str]:
    """The peak's lines of ``finetune``: each phase's bytes by part, the peak, and the verdict per GPU."""
    peak = run.peak
    if peak is None:
        refused = str(run.__dict__.get("peak_refused"))
        return [f"peak: not computed ({refused})" + ("" if "--simulate" in refused else "; --simulate runs the step")]
    names = list(peak.phases)
    parts = list(dict.fromkeys(p for phase in peak.phases.values() for p in phase))
    rows = [(part, *(fmt_int(peak.phases[n][part]) if part in peak.phases[n] else "" for n in names)) for part in parts]
    totals = peak.phase_totals()
    rows.append(("total", *(fmt_int(totals[n]) + (" *" if n == peak.peak_phase else "") for n in names)))
    verdicts = _peak.fits(peak)
    head = (f"peak of one step (the second: the gradients and the optimizer state held), as torch.cuda.max_memory_allocated() "
            f"reports it; {run.attn} attention, autocast {run.autocast}, class {_peak.training_class(run.config)}")
    return [head, table(("part", *names), rows, right=tuple(range(1, len(names) + 1))),
            f"peak: {fmt_int(peak.peak_bytes)} bytes ({fmt_bytes(peak.peak_bytes)}) in the {peak.peak_phase} "
            "(cuBLAS workspaces of a Hopper GPU)",
            f"fits (the peak, the allocator's reserve up to {_peak.reserve_margin():.1%} and a 0.5 GiB context, within the "
            "memory CUDA reports): " + "; ".join(f"{k} {fmt_bytes(v['cuda_memory'])} {v['fits']}" for k, v in
                                                  verdicts.items()),
            f"left out: {PEAK_EXCLUDES}"]
