"""LoRA's targets as peft chooses them, read from the engine's parameter table (no torch, no peft): which modules
``all-linear`` or a list of names wraps, and each pair's A and B. Below :mod:`helpers.finetune` (what a run holds)
and :mod:`helpers.peak` (what its step reaches), which both read it; ``tests/test_finetune.py`` holds it to peft.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .config import ConfigError, ModelConfig
from .params import LM_HEAD, MATRIX, TABLE, Param, param_layout

ALL_LINEAR = "all-linear"

# the MATRIX tensors transformers holds as a bare nn.Parameter of a module that is no nn.Linear (a router scoring the
# experts, a projector's matrix, nn.MultiheadAttention's fused input projection), by model_type: name suffixes.
# peft's all-linear skips them and a target naming their module is refused; tests/test_finetune.py checks this
# table against peft on every family.
BARE_MATRICES: dict[str, tuple[str, ...]] = {
    "mixtral": ("mlp.gate.weight",),
    "qwen3_moe": ("mlp.gate.weight",),
    "qwen3_next": ("mlp.gate.weight",),
    "deepseek_v3": ("mlp.gate.weight",),
    "deepseek_v2": ("mlp.gate.weight",),
    "glm4_moe": ("mlp.gate.weight",),
    "gpt_oss": ("mlp.router.weight",),
    "gemma3": ("mm_input_projection_weight", "attention.in_proj_weight"),
}

# peft's bridge from transformers 4 to 5 for the mixtures whose experts transformers 5 fuses into 3-D parameters
# (peft.utils.transformers_weight_conversion: _MODEL_TO_CONVERSION_PATTERN, _MOE_TARGET_MODULE_MAPPING and
# _MOE_FUSED_TARGETS): a target naming a transformers-4 module (the router ``gate``, an expert's projection) becomes a
# target *parameter* (``gate.weight``, the fused ``gate_up_proj`` and ``down_proj``), wrapped whole (r·E per side for
# E experts); ``all-linear`` adds every such name; the two halves of ``gate_up_proj`` are targeted together (rank 2r)
# or peft raises. A name so moved no longer targets the linear layers it also names (a dense layer's ``down_proj``).
PEFT_MIXTRAL = ({"gate": "gate.weight", "w1": "gate_up_proj", "w3": "gate_up_proj", "w2": "down_proj"}, ("w1", "w3"))
PEFT_QWEN2_MOE = ({"gate": "gate.weight", "gate_proj": "gate_up_proj", "up_proj": "gate_up_proj",
                   "down_proj": "down_proj"}, ("gate_proj", "up_proj"))
PEFT_MOE = {"mixtral": PEFT_MIXTRAL, "qwen3_moe": PEFT_QWEN2_MOE, "deepseek_v3": PEFT_QWEN2_MOE,
            "deepseek_v2": PEFT_QWEN2_MOE, "qwen3_next": PEFT_QWEN2_MOE, "glm4_moe": PEFT_QWEN2_MOE}

LINEAR, EMBEDDING, CONV = "linear", "embedding", "convolution"
WRAPPED = (LINEAR, EMBEDDING, CONV)


@dataclass(frozen=True)
class Module:
    """One module as transformers names it, read from its tensors: ``kind`` is ``"linear"``, ``"embedding"``,
    ``"convolution"`` (a patch embedding) or what stops peft from wrapping it; ``shape`` its weight's (out × in,
    GPT-2's Conv1D in × out; a convolution out × in × kernel).
    No notebook calls it; it works behind the helpers of ``12_finetune_quantize_serve``."""

    name: str
    kind: str
    shape: tuple[int, ...] = ()
    head: bool = False


@dataclass(frozen=True)
class Adapter:
    """One LoRA pair peft adds: ``a`` values in A (r × d_in), ``b`` in B (d_out × r).
    No notebook calls it; it works behind the helpers of ``12_finetune_quantize_serve``."""

    name: str
    a: int
    b: int

    @property
    def values(self) -> int:
        return self.a + self.b


def _adapter(m: Module, rank: int) -> Adapter:
    """peft's pair for a module: a linear layer r·d_in + d_out·r; an embedding V × H r·V + H·r; a convolution
    r·(in·kernel) + out·r (its B a 1 × 1 convolution)."""
    if m.kind == EMBEDDING:
        return Adapter(m.name, rank * m.shape[0], m.shape[1] * rank)
    return Adapter(m.name, rank * math.prod(m.shape[1:]), m.shape[0] * rank)


def _wrapped_parameter(name: str, shape: tuple[int, ...], rank: int) -> Adapter:
    """peft's ``ParamWrapper`` on a bare parameter: E × in × out (fused experts; a matrix out × in: E = 1) gets
    A = Linear(in, r·E) and B = Linear(r·E, out)."""
    if len(shape) == 3:
        experts, d_in, d_out = shape
    elif len(shape) == 2:
        experts, (d_out, d_in) = 1, shape
    else:
        raise ConfigError("--targets", f"{name} is a vector of {shape[0]}: peft wraps matrices and expert tensors only")
    return Adapter(name, rank * experts * d_in, d_out * rank * experts)


def modules(config: ModelConfig) -> dict[str, Module]:
    """Every module holding a parameter, by name: the linear layers (the output head marked), the embedding tables,
    the patch embeddings, and the others (norms, convolutions, fused experts, routers) with what they are.

    No notebook calls it; it works behind the helpers of ``12_finetune_quantize_serve``.
    The output head is the linear layer giving the V logits; one
    tied to the token table (no tensor of its own in the table) is listed as the linear layer transformers still
    builds (``lm_head``, GPT-NeoX's ``embed_out``).
    """
    bare = BARE_MATRICES.get(config.model_type, ())
    found: dict[str, Module] = {}
    params = param_layout(config).expand()
    V = config.sizes.get("V")

    def is_head(p: Param) -> bool:
        return p.component == LM_HEAD and p.kind == MATRIX and p.shape[0] == V

    untied = any(is_head(p) for p in params)
    for p in params:
        module, _, attribute = p.name.rpartition(".")
        if module in found and found[module].kind in WRAPPED and attribute != "weight":
            continue  # a linear layer's bias
        if attribute == "weight" and p.kind == MATRIX and not p.name.endswith(bare):
            found[module] = Module(module, LINEAR if len(p.shape) == 2 else CONV, p.shape, is_head(p))
        elif attribute == "weight" and len(p.shape) == 2 and p.kind == TABLE:
            found[module] = Module(module, EMBEDDING, p.shape)
            if p.tokens and not untied:  # the token table is also the head: transformers still builds the Linear
                head = "embed_out" if config.model_type == "gpt_neox" else "lm_head"
                found[head] = Module(head, LINEAR, p.shape, head=True)
        elif module not in found:
            found[module] = Module(module, f"{p.kind} ({attribute})")
    return found


def targeted(config: ModelConfig, targets: str = ALL_LINEAR, rank: int = 1) -> list[Adapter]:
    """The LoRA pairs peft adds for ``targets`` (``"all-linear"`` or a comma list of module-name suffixes) at ``rank``.

    No notebook calls it; it works behind the helpers of ``12_finetune_quantize_serve``.
    Raises :class:`ConfigError` (``--targets``) where peft raises:
    nothing matches, a matched module is no linear layer, embedding or convolution (a norm, a router, the fused
    experts, a block of layers), half of a fused pair (:data:`PEFT_MOE`).
    """
    table_ = modules(config)
    mapping, fused = PEFT_MOE.get(config.model_type, ({}, ()))
    if targets.strip().lower() == ALL_LINEAR:
        linear = [m for m in table_.values() if m.kind == LINEAR and not m.head]
        if not mapping:
            if not linear:
                raise ConfigError("--targets", f"{config.name} has no linear layer but its head")
            return [_adapter(m, rank) for m in linear]
        wanted = {m.name.rpartition(".")[2] for m in linear} | set(mapping)
    else:
        wanted = {t.strip() for t in targets.split(",") if t.strip()}
        if not wanted:
            raise ConfigError("--targets", "give all-linear or a comma list of module names (q_proj,v_proj)")
    suffixes, parameters, halves = set(), set(), set()
    for t in wanted:
        old = next((o for o in mapping if t == o or t.endswith("." + o)), None)
        if old is None:
            suffixes.add(t)
        else:
            parameters.add(mapping[old])
            halves |= {old} & set(fused)
    if 0 < len(halves) < len(fused):
        raise ConfigError("--targets", f"peft fuses {' and '.join(fused)} into gate_up_proj: target both or neither")

    def hit(name: str, among: set[str]) -> bool:
        return any(name == t or name.endswith("." + t) for t in among)

    chosen = [m for m in table_.values() if hit(m.name, suffixes)]
    for m in chosen:
        if m.kind not in WRAPPED:
            raise ConfigError("--targets", f"{m.name} holds a {m.kind}: peft's LoRA wraps no such module")
    containers = set()
    for name in table_:  # every prefix of a module is a module too (a layer, its attention block)
        while "." in name:
            name = name.rpartition(".")[0]
            containers.add(name)
    blocks = sorted(name for name in containers - set(table_) if hit(name, suffixes))
    if blocks:
        raise ConfigError("--targets", f"{blocks[0]} is a block of modules, not a layer peft's LoRA can wrap")
    adapters = [_adapter(m, rank) for m in chosen]
    for p in param_layout(config).expand():
        if hit(p.name, parameters):
            both = len(halves) == len(fused) and p.name.endswith(".gate_up_proj")
            adapters.append(_wrapped_parameter(p.name, p.shape, rank * len(fused) if both else rank))
    if not adapters:
        raise ConfigError("--targets", f"{', '.join(sorted(wanted))} matches no module of {config.name}")
    return adapters
