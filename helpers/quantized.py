"""Quantized checkpoints: the bytes a ``config.json`` with a ``quantization_config`` stores, by dtype.

Works behind the command line of ``00_overview`` (``python -m helpers memory``: ``stored_weight_bytes`` in
``--json``, a table by dtype in the text). It never imports torch. The quantization changes no parameter count;
it changes what each weight costs on disk. Every layout below is the model transformers builds (its parameters,
tied weights once; buffers such as rotary tables and DeepSeek's score-correction biases are not weights), each
module stored as the format's own code lays it out:

* ``fp8`` (DeepSeek-V3, Qwen3-FP8): transformers' ``FineGrainedFP8HfQuantizer`` (``integrations/finegrained_fp8``):
  every ``nn.Linear`` becomes ``FP8Linear`` (weight in fp8, one ``weight_scale_inv`` per ``weight_block_size``
  tile, ⌈out/b₀⌉·⌈in/b₁⌉; one scalar where the config gives no block size; a static activation scheme adds one fp32
  ``activation_scale``), every fused ``experts`` module ``FP8Experts`` (per expert the same tiles, the fused gate/up
  scale at least 2 rows high). Routers (not ``nn.Linear`` in transformers), GPT-2's ``Conv1D``, tables and norms stay
  in the file's dtype (bf16), as do biases. The scales are fp32 as transformers (and vLLM) hold them after loading
  and as DeepSeek-V3's files store them; ``config.json`` does not say what a file stores, its safetensors header
  does: a config in ``data/models`` records another dtype under :data:`SCALE_DTYPE_KEY` (Qwen3-FP8's files: bf16).
* ``mxfp4`` (gpt-oss): the routed experts' matrices in OCP MX FP4, as gpt-oss's safetensors store them
  (``*_blocks``: 32 four-bit values in 16 bytes; ``*_scales``: one 8-bit exponent per 32 values); everything else,
  the experts' biases included, in bf16.
* ``bitsandbytes`` 4-bit (``load_in_4bit``; nf4 or fp4): every linear layer (``nn.Linear``, GPT-2's ``Conv1D``)
  but the skipped ones as bitsandbytes saves them (``functional.quantize_4bit``, :func:`bnb_4bit_parts`): the values
  packed two to a byte, one absmax per 64 values (fp32; with double quantization uint8, re-quantized in blocks of
  256 with fp32 absmaxes and a 256-entry fp32 code), the 16-entry fp32 code table. Not counted: the JSON
  bitsandbytes packs per layer into a ``quant_state.bitsandbytes__nf4`` uint8 tensor when it saves (78 to 170-odd
  bytes: shape, dtype, block sizes and the double quantization's offset, whose digits vary). 8-bit
  (``load_in_8bit``, LLM.int8): int8 weights, one fp32 row scale (``SCB``) per output row, one ``weight_format``
  byte per layer (``Linear8bitLt._save_to_state_dict``). Checked against the files ``save_pretrained`` writes.
* ``gptq`` and ``awq`` (``bits``, ``group_size``): every linear layer of the transformer layers (each routed expert
  on its own, as their checkpoints store experts) packed in int32: ``qweight`` (in·bits/32 × out for GPTQ, in ×
  out·bits/32 for AWQ's GEMM layout), ``qzeros`` (⌈in/g⌉ × out·bits/32), fp16 ``scales`` (⌈in/g⌉ × out), GPTQ's
  int32 ``g_idx`` (in); biases fp16; the rest (tables, norms, routers, the LM head) in the file's dtype. Layouts
  of AutoGPTQ's ``QuantLinear`` (``qlinear_cuda_old``: 2, 3, 4 or 8 bits, in and out multiples of 32) and AutoAWQ's
  ``WQLinear_GEMM`` (``awq/modules/linear/gemm.py``: 4 bits, whole groups, out a multiple of 8), read from their
  sources (neither library is installed here: stated, not measured); a shape they cannot pack is refused.

``modules_to_not_convert`` (``llm_int8_skip_modules`` for bitsandbytes) matches module names as transformers does
(a prefix up to a module boundary, a regular expression with that boundary, or a suffix); without one, the LM
head (and the module holding the table's last parameter) stays unquantized, as transformers' default skip list
keeps it. A ``quant_method`` not listed here is refused in one line naming it: no guess.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from .config import ConfigError, ModelConfig
from .params import BIAS, EXPERT, EXPERT_BIAS, LM_HEAD, MATRIX, TABLE, Param, param_layout

# bytes per value of the dtypes a checkpoint names (``torch_dtype``) and the engine's own names
DTYPE_BYTES: dict[str, int] = {"float32": 4, "float16": 2, "bfloat16": 2}
SHORT: dict[str, str] = {"float32": "fp32", "float16": "fp16", "bfloat16": "bf16"}
METHODS = ("fp8", "mxfp4", "bitsandbytes", "gptq", "awq")
CONV1D_FAMILIES = ("gpt2",)  # linear layers built as transformers' Conv1D (not nn.Linear)
ROUTERS = ("gate", "router")
# a class's ``_keep_in_fp32_modules``: transformers' quantizers add them to the modules left unconverted
KEEP_IN_FP32: dict[str, tuple[str, ...]] = {"t5": ("wo",), "gpt_oss": ("post_attention_layernorm", "input_layernorm", "norm")}  # a mixture's router: the module beside its experts (not an nn.Linear in transformers)


# bitsandbytes' 4-bit state (functional.quantize_4bit; NF4 and FP4 alike), bytes by dtype
BNB_BLOCK = 64  # values per first-level absmax
BNB_BLOCK2 = 256  # first-level absmaxes per second-level fp32 absmax (double quantization)
BNB_CODE = 16 * 4  # the 4-bit code table: 16 fp32 values, held by every tensor's QuantState
DYNAMIC_CODE = 256 * 4  # the 8-bit dynamic map quantizing the absmaxes: 256 fp32 values, in every state2
# the dtype of an fp8 checkpoint's ``weight_scale_inv`` as its files store it, where it is not fp32: not in config.json
# (the safetensors header says it), so data/models records it beside the config's keys
SCALE_DTYPE_KEY = "_weight_scale_inv_dtype"


@dataclass(frozen=True)
class Stored:
    """What a quantized checkpoint stores: its ``quant_method``, a line on its layout, bytes by dtype.
    No notebook calls it; it works behind the helpers of ``08_flops_and_memory``."""

    method: str
    layout: str
    by_dtype: Mapping[str, int]

    @property
    def total(self) -> int:
        return sum(self.by_dtype.values(), 0)


def _module(p: Param) -> str:
    """The module a parameter belongs to, as transformers names it (``...q_proj`` for ``...q_proj.weight``)."""
    return p.name.rsplit(".", 1)[0]


def skipped(name: str, patterns: Iterable[str]) -> bool:
    """Whether transformers leaves module ``name`` unconverted for these ``modules_to_not_convert`` patterns: a pattern
    matching from the start up to a module boundary (also as a regular expression), or a suffix of the name.

    As transformers' ``quantizers_utils.should_convert_module`` decides.
    No notebook calls it; it works behind the helpers of ``08_flops_and_memory``.
    """
    boundary = r"(?:(?<=\.)|(?=\.|$))"
    try:
        return any(re.match(rf"(?:{key}){boundary}", name) or name.endswith(key) for key in patterns)
    except re.error as error:
        raise ConfigError("quantization_config.modules_to_not_convert", f"a pattern is not a regular expression "
                          f"({error})") from None


def _file_dtype(config: ModelConfig, default: str = "bfloat16") -> str:
    dtype = config.torch_dtype or default
    if dtype not in DTYPE_BYTES:
        raise ConfigError("torch_dtype", f"{dtype!r} is not a dtype a checkpoint stores (float32, float16, bfloat16)")
    return dtype


def _linears(config: ModelConfig, params: list[Param], conv1d: bool) -> set[str]:
    """Modules that are linear layers: a :data:`MATRIX` weight, not a mixture's router, not GPT-2's ``Conv1D`` unless
    ``conv1d``."""
    if config.model_type in CONV1D_FAMILIES and not conv1d:  # only the head is an nn.Linear
        return {_module(p) for p in params if p.kind == MATRIX and p.component == LM_HEAD}
    experts = {_module(p).rsplit(".", 1)[0] for p in params if p.kind == EXPERT}  # the mlp holding the experts
    routers = {f"{parent}.{name}" for parent in experts for name in ROUTERS}
    return {_module(p) for p in params if p.kind == MATRIX and p.name.endswith("weight") and _module(p) not in routers}


def _default_skips(params: list[Param]) -> list[str]:
    """transformers' ``get_keys_to_not_convert``: the output head and the module of the model's last parameter."""
    heads = [_module(p) for p in params if p.component == LM_HEAD and p.kind == MATRIX]
    tied = ["lm_head"] if _tied_head(params) else []  # a head tied to the table
    return [*heads, *tied, params[-1].name.removesuffix(".weight")]  # a last bias names no module: nothing skipped


def _skips(config: ModelConfig, q: Mapping[str, Any], params: list[Param], key: str = "modules_to_not_convert",
           default: bool = True) -> list[str]:
    given = q.get(key)
    if given is not None and (not isinstance(given, list) or not all(isinstance(k, str) for k in given)):
        raise ConfigError(f"quantization_config.{key}", f"must be a list of module names, got {given!r}")
    skips = (_default_skips(params) if default else []) if given is None else list(given)
    return [*skips, *KEEP_IN_FP32.get(config.model_type, ())]


def _tied_head(params: list[Param]) -> Param | None:
    """The token table where it is also the LM head (tied: one tensor in the table, ``lm_head`` in the model)."""
    return next((p for p in params if p.kind == TABLE and p.tokens), None)


def _selection(config: ModelConfig, q: Mapping[str, Any], params: list[Param]) -> set[str]:
    """The modules the method of ``q`` quantizes (see the module's docstring)."""
    method = q["quant_method"]
    tied = {"lm_head"} if _tied_head(params) else set()  # not skipped, transformers converts it apart
    if method == "bitsandbytes":
        skips = _skips(config, q, params, "llm_int8_skip_modules")
        return {m for m in _linears(config, params, conv1d=True) | tied if not skipped(m, skips)}
    experts = {_module(p) for p in params if p.kind == EXPERT}
    if method == "mxfp4":
        skips = _skips(config, q, params)
        return {m for m in experts if not skipped(m, skips)}
    if method == "fp8":
        skips = _skips(config, q, params)
        return {m for m in _linears(config, params, conv1d=False) | experts | tied if not skipped(m, skips)}
    skips = _skips(config, q, params, default=False)
    layers = {_module(p) for p in params if p.layer is not None}  # the transformer layers' modules, not the head
    return {m for m in _linears(config, params, conv1d=True) & layers | experts if not skipped(m, skips)}


def converted_modules(config: ModelConfig) -> set[str]:
    """The modules a pre-quantized checkpoint of ``config`` stores quantized, as transformers names them (empty without
    a ``quantization_config``; a tied head converted apart is ``lm_head``).

    Refused as :func:`stored_weights` refuses. No notebook calls it or reaches it.
    """
    if stored_weights(config) is None:
        return set()
    return _selection(config, dict(config.quantization or {}), param_layout(config).expand())


def _positive_int(q: Mapping[str, Any], key: str, default: int | None = None) -> int:
    value = q.get(key, default)
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ConfigError(f"quantization_config.{key}", f"must be a positive integer, got {value!r}")
    return value


def _add(by: dict[str, int], dtype: str, n: int) -> None:
    by[dtype] = by.get(dtype, 0) + n


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def block_scales(rows: int, cols: int, block: tuple[int, int] = (128, 128), least_rows: int = 0) -> int:
    """The fp32 scales (``weight_scale_inv``) of a ``rows`` × ``cols`` matrix stored in fp8 with one scale per
    ``block`` tile: ⌈rows/b₀⌉·⌈cols/b₁⌉ (at least ``least_rows`` rows of tiles: transformers' fused gate/up experts
    keep 2).

    :func:`helpers.lessons.moe.fp8_scales` counts DeepSeek-V3's with it.
    No notebook calls it; it works behind the helpers of ``08_flops_and_memory``.
    """
    return max(_cdiv(rows, block[0]), least_rows) * _cdiv(cols, block[1])


def bnb_4bit_parts(values: int, double: bool = True, offset: bool = True, blocksize: int = BNB_BLOCK) -> dict[str, int]:
    """Bytes bitsandbytes holds for one tensor of ``values`` values in 4 bits (NF4 or FP4), by dtype, exact.

    ``quantize_4bit(w, blocksize=64, compress_statistics=double)``: the 4-bit values packed two a byte (⌈n/2⌉), one
    absmax per 64 values (``blocksize``), the 16-entry fp32 code table; with double quantization the absmaxes in uint8
    (⌈n/64⌉), one fp32 absmax per 256 of those, the dynamic map's 256 fp32 values and (``offset``) the fp32 offset,
    their mean, which bitsandbytes holds as a tensor and its saved files write into the layer's JSON state instead;
    without it the absmaxes in fp32 (4·⌈n/64⌉).
    No notebook calls it; it works behind the helpers of ``08_flops_and_memory``.
    """
    blocks = _cdiv(values, blocksize)
    if double:
        return {"uint8": _cdiv(values, 2) + blocks,
                "fp32": 4 * _cdiv(blocks, BNB_BLOCK2) + 4 * offset + BNB_CODE + DYNAMIC_CODE}
    return {"uint8": _cdiv(values, 2), "fp32": 4 * blocks + BNB_CODE}


def nf4_bytes(values: int, blocksize: int = BNB_BLOCK) -> int:
    """Bytes bitsandbytes holds for one tensor of ``values`` values in NF4 with double quantization (QLoRA's frozen
    weights), exact: ``⌈n/2⌉ + ⌈n/64⌉ + 4·⌈⌈n/64⌉/256⌉ + 4 + 64 + 1024`` (:func:`bnb_4bit_parts`); ``blocksize``:
    ``quantize_4bit``'s values per absmax (64, QLoRA's).

    Introduced in ``12_finetune_quantize_serve``.
    """
    return sum(bnb_4bit_parts(values, blocksize=blocksize).values(), 0)


def _fp8(config: ModelConfig, q: Mapping[str, Any], params: list[Param], plain: str) -> Stored:
    block = q.get("weight_block_size", [128, 128])  # FineGrainedFP8Config's default; null: one scale per tensor
    if block is not None and (not isinstance(block, list) or len(block) != 2
                              or not all(isinstance(b, int) and not isinstance(b, bool) and b > 0 for b in block)):
        raise ConfigError("quantization_config.weight_block_size", f"must be two positive integers, got {block!r}")
    static = q.get("activation_scheme", "dynamic") == "static"
    scale = config.raw.get(SCALE_DTYPE_KEY, "float32")
    if scale not in DTYPE_BYTES:
        raise ConfigError(SCALE_DTYPE_KEY, f"{scale!r} is not a dtype a checkpoint stores (float32, float16, bfloat16)")
    quantized = _selection(config, q, params)
    by: dict[str, int] = {}

    def tiles(out: int, inp: int, least: int = 0) -> int:
        return 1 if block is None else block_scales(out, inp, tuple(block), least)

    def scales(n: int) -> None:  # n weight_scale_inv values, and one fp32 activation_scale if the scheme is static
        _add(by, SHORT[scale], DTYPE_BYTES[scale] * n)
        if static:
            _add(by, "fp32", 4)

    for p in params:
        module = _module(p)
        if p.kind == MATRIX and module in quantized:
            _add(by, "fp8", p.count)
            scales(tiles(*p.shape))
        elif p.kind in (EXPERT, EXPERT_BIAS) and module in quantized:
            if p.kind == EXPERT_BIAS:
                raise ConfigError("quantization_config.quant_method", f"fp8: transformers' FP8Experts takes no expert "
                                  f"biases ({p.name})")
            E, out, inp = p.shape
            _add(by, "fp8", p.count)
            _add(by, SHORT[scale], DTYPE_BYTES[scale] * E * tiles(out, inp, 2 if p.name.endswith("gate_up_proj") else 0))
            if static:
                _add(by, "fp32", 4 * E)
        else:
            _add(by, SHORT[plain], p.count * DTYPE_BYTES[plain])
    head = _tied_head(params)
    if head is not None and "lm_head" in quantized:  # a tied head not skipped: an FP8Linear of its own
        _add(by, "fp8", head.count)
        scales(tiles(*head.shape))
    shape = "per tensor" if block is None else f"per {block[0]}×{block[1]} block"
    return Stored("fp8", f"fp8 (e4m3) weights, {SHORT[scale]} weight_scale_inv {shape}; the rest in {SHORT[plain]}", by)


def _mxfp4(config: ModelConfig, q: Mapping[str, Any], params: list[Param], plain: str) -> Stored:
    quantized = _selection(config, q, params)
    by: dict[str, int] = {}
    for p in params:
        if p.kind == EXPERT and _module(p) in quantized:
            E, out, inp = p.shape
            blocks = E * out * _cdiv(inp, 32)
            _add(by, "uint8 (fp4 blocks)", blocks * 16)
            _add(by, "uint8 (e8m0 scales)", blocks)
        else:
            _add(by, SHORT[plain], p.count * DTYPE_BYTES[plain])
    return Stored("mxfp4", f"experts in MXFP4: 32 four-bit values in 16 bytes + one 8-bit scale; the rest in "
                           f"{SHORT[plain]}", by)


def _bnb(config: ModelConfig, q: Mapping[str, Any], params: list[Param], plain: str) -> Stored:
    four, eight = bool(q.get("load_in_4bit")), bool(q.get("load_in_8bit"))
    if four == eight:
        raise ConfigError("quantization_config.load_in_4bit", "bitsandbytes: exactly one of load_in_4bit and "
                          "load_in_8bit must be true")
    quantized = _selection(config, q, params)
    double = bool(q.get("bnb_4bit_use_double_quant"))
    kind = q.get("bnb_4bit_quant_type", "fp4")
    if four and kind not in ("nf4", "fp4"):
        raise ConfigError("quantization_config.bnb_4bit_quant_type", f"must be nf4 or fp4, got {kind!r}")
    by: dict[str, int] = {}

    def linear(count: int, rows: int) -> None:
        if eight:
            _add(by, "int8", count)
            _add(by, "fp32", 4 * rows)
            _add(by, "uint8", 1)  # weight_format
            return
        for dtype, n in bnb_4bit_parts(count, double, offset=False).items():  # as the files hold them
            _add(by, dtype, n)

    conv1d = config.model_type in CONV1D_FAMILIES
    for p in params:
        if p.kind == MATRIX and _module(p) in quantized:
            linear(p.count, p.shape[1] if conv1d and p.component != LM_HEAD else p.shape[0])
        else:
            _add(by, SHORT[plain], p.count * DTYPE_BYTES[plain])
    head = _tied_head(params)
    if head is not None and "lm_head" in quantized:  # a tied head not skipped: a quantized linear of its own
        linear(head.count, head.shape[0])
    layout = ("int8 weights + an fp32 scale per row (LLM.int8)" if eight else
              f"{kind} 4-bit weights, absmax per 64{' double-quantized' if double else ''} (bitsandbytes)")
    return Stored("bitsandbytes", f"{layout}; the rest in {SHORT[plain]}", by)


def _packed(config: ModelConfig, q: Mapping[str, Any], params: list[Param], plain: str, method: str) -> Stored:
    bits = _positive_int(q, "w_bit" if method == "awq" and "w_bit" in q else "bits", 4)
    if bits not in ((2, 3, 4, 8) if method == "gptq" else (4,)):  # what QuantLinear / WQLinear_GEMM accept
        raise ConfigError("quantization_config.bits", f"{method}: {bits}-bit weights are not a layout its "
                          f"QuantLinear builds ({'2, 3, 4 or 8' if method == 'gptq' else '4 only'})")
    key = "q_group_size" if method == "awq" and "q_group_size" in q else "group_size"
    group = q.get(key, 128)
    if group != -1:
        group = _positive_int(q, key, 128)
    if method == "awq" and str(q.get("version", "gemm")).lower() not in ("gemm", "exllama"):
        raise ConfigError("quantization_config.version", f"AWQ {q['version']!r}: only the GEMM layout (gemm, exllama) "
                          "is laid out here")
    by: dict[str, int] = {}
    quantized = _selection(config, q, params)
    for p in params:
        module = _module(p)
        if p.kind in (MATRIX, EXPERT) and module in quantized:
            experts, out, inp = (p.shape if p.kind == EXPERT else (1, *p.shape))
            if config.model_type in CONV1D_FAMILIES and p.kind == MATRIX:
                inp, out = out, inp  # Conv1D stores [in, out]
            g = inp if group == -1 else group
            # GPTQ's QuantLinear packs whole 32-value runs along both widths; WQLinear_GEMM needs whole groups and
            # whole int32 words of outputs: another shape has no layout to count (refused, never rounded)
            if (inp % 32 or out % 32) if method == "gptq" else (inp % g or out % 8):
                need = "in and out multiples of 32" if method == "gptq" else f"in a multiple of {g}, out of 8"
                raise ConfigError(f"quantization_config.{key}", f"{method}: {module} is {out} × {inp} (out × in); its "
                                  f"packed layout needs {need}")
            groups = -(-inp // g)
            if method == "gptq":  # qweight (in/32·bits × out), qzeros (groups × out/32·bits), g_idx (in)
                words = inp // 32 * bits * out + groups * (out // 32 * bits) + inp
            else:  # AWQ: qweight (in × out/8), qzeros (groups × out/8)
                words = inp * (out // 8) + groups * (out // 8)
            _add(by, "int32", experts * 4 * words)
            _add(by, "fp16", experts * 2 * groups * out)  # scales
        elif p.kind in (BIAS, EXPERT_BIAS) and module in quantized:
            _add(by, "fp16", p.count * 2)
        else:
            _add(by, SHORT[plain], p.count * DTYPE_BYTES[plain])
    scales = "per row" if group == -1 else f"per {group}"
    extra = ", int32 g_idx" if method == "gptq" else ""
    return Stored(method, f"{bits}-bit qweight and qzeros packed in int32, fp16 scales {scales}{extra}; the rest in "
                          f"{SHORT[plain]}", by)


def stored_weights(config: ModelConfig) -> Stored | None:
    """The bytes a pre-quantized checkpoint of ``config`` stores, by dtype (None: no ``quantization_config``).

    Raises :class:`ConfigError` naming ``quant_method`` for a method this module does not lay out (never a guess), or
    naming the key of a setting it cannot read. Introduced in ``12_finetune_quantize_serve``.
    """
    q = config.quantization
    if q is None:
        return None
    if not isinstance(q, dict):
        raise ConfigError("quantization_config", f"must be an object, got {q!r}")
    method = q.get("quant_method")
    if method not in METHODS:
        raise ConfigError("quantization_config.quant_method", f"{method!r}: no stored layout known for it (known: "
                          f"{', '.join(METHODS)}): its bytes are not guessed")
    params = param_layout(config).expand()
    if method == "fp8":
        return _fp8(config, q, params, _file_dtype(config))
    if method == "mxfp4":
        return _mxfp4(config, q, params, _file_dtype(config))
    if method == "bitsandbytes":
        return _bnb(config, q, params, _file_dtype(config))
    return _packed(config, q, params, _file_dtype(config, "float16"), method)
