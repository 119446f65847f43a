"""Any other model type: transformers builds its own class on the meta device and counts it.

No formula is taught here for a ``model_type`` outside :data:`helpers.families.FAMILIES`; ``python -m helpers
count`` and ``memory`` still answer it exactly, from the tensors transformers builds (``count`` says so in one line),
while ``flops`` and ``budget``, which need the formulas, refuse it in one line. ``11_todays_models`` checks its
counts against :func:`count_by_transformers`; the other functions work behind the command line of ``00_overview``.

What is counted. The class built is the config's ``architectures`` entry when transformers has that class; else the
model type's class of ``AutoModelForSpeechSeq2Seq`` / ``AutoModelForSeq2SeqLM`` for an encoder–decoder config,
then of ``AutoModelForCausalLM``, ``AutoModelForImageTextToText`` (a vision-language model) and ``AutoModel``, the
first that has one (``--class`` picks another class of transformers). The config is read by the model type's
config class (``from_dict``, as ``from_pretrained`` reads a file; nothing is downloaded), the model is built under
``torch.device("meta")`` (shapes only, no memory, no initialisation cost), and its ``named_parameters()`` are the
table: a weight tied to another (an LM head sharing the token table) is one tensor there, counted once under the
name transformers lists first; buffers (rotary frequencies, position ids, masks) are not parameters and are not
counted.

How tensors are grouped (:func:`component_of`), the first rule that matches a tensor's dotted name:

1. ``head``: a tensor outside the class's base model (``lm_head``, ``score``, ``classifier``, ``proj_out``), or in a
   ``pooler``;
2. ``vision``: a module path through a vision tower or its projector (a segment starting ``vision`` or
   ``visual``, or ``multi_modal_projector``, ``mm_projector``, ``image_newline``); a model that is all vision
   (ViT) has no such segment and is grouped by its parts like any other;
3. ``layer norm``: the tensor's own module is a norm (its name holds ``norm``, or is ``ln_*`` / ``ln*``, or its class
   name holds ``Norm``), wherever it sits (QK-norms and a Mamba mixer's gated norm included, as the families file
   Qwen3's q/k norms);
4. ``embeddings``: a module whose name holds ``embed`` (``embed_tokens``, ``word_embeddings``, ``wte``/``wpe``,
   ``patch_embeddings``, ``cls_token`` under ``embeddings``), or whose class name holds ``Embed`` (BART's ``shared``);
5. ``attention``: a module whose name holds ``attn`` or ``attention`` (self-, cross-, linear attention), or a
   projection named ``q_proj``/``k_proj``/``v_proj``/``o_proj``/``qkv_proj``;
6. ``feed-forward``: an MLP, a mixture's experts, routers and shared experts (a module named ``mlp``, ``ffn``,
   ``feed_forward``, ``ff``, ``moe``, ``experts``, ``shared_expert(s)``, ``router``, ``gate``, ``intermediate``, ``fc1``/``fc2``,
   ``gate_proj``/``up_proj``/``down_proj``, ``c_fc``, ``dense_h_to_4h``/``dense_4h_to_h``, ``w1``/``w2``/``w3``, or the
   ``output`` right under a numbered layer, BERT-style);
7. ``state space``: a Mamba mixer (a module named ``mamba`` or ``ssm``, or a ``mixer`` that rules 5–6 did not
   claim: ``in_proj``, ``conv1d``, ``A_log``, ``D``, ``dt_bias``, ``out_proj``);
8. ``other``: the rest (Whisper's two input convolutions, for one).

Every tensor is in exactly one group, so the groups add up to the total.
"""

from __future__ import annotations

import ctypes
import json
import math
import re
import threading
import warnings
from contextlib import contextmanager
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any, Iterator, Mapping

from .config import MODELS_DIR, ConfigError, ModelConfig, read_json, resolve
from .families import FAMILIES
from .memory import DTYPE_BITS, TRAINING_STATE, fmt_bytes, values_bytes
from .params import ATTENTION, EMBEDDINGS, FEED_FORWARD, LAYER_NORM, evaluate, render
from .report import fmt_int, fmt_share, table

HEAD, VISION, STATE_SPACE, OTHER = "head", "vision", "state space", "other"
# the order the groups are printed in
GROUPS = (EMBEDDINGS, ATTENTION, FEED_FORWARD, STATE_SPACE, LAYER_NORM, VISION, HEAD, OTHER)
COUNTED_BY = "transformers"
INSTALL = "pip install -e .[hf]"
# seconds transformers may take to build a model on the meta device before the command gives up (a config with
# millions of layers would otherwise build for hours); real configs build in about a second
BUILD_LIMIT_S = 20.0

_VISION = re.compile(r"^(vision|visual)|^(multi_modal_projector|mm_projector|image_newline)$")
_NORM = re.compile(r"norm|^ln(_|\d|$)|_ln$")
_ATTENTION = re.compile(r"attn|attention|^(q_proj|k_proj|v_proj|o_proj|qkv_proj)$")
_FEED_FORWARD = re.compile(r"mlp|ffn|feed_?forward|^ff$|moe|experts?$|^shared_experts?$|^router$|^gate$|intermediate"
                           r"|^(fc1|fc2|gate_proj|up_proj|down_proj|gate_up_proj|c_fc|dense_h_to_4h|dense_4h_to_h"
                           r"|w1|w2|w3)$")
_STATE_SPACE = re.compile(r"mamba|^ssm$|^mixer$")


@dataclass(frozen=True)
class Tensor:
    """One parameter tensor of the built model: its name in ``named_parameters()``, its shape and its group.
    No notebook calls it; it works behind the helpers of ``11_todays_models``."""

    name: str
    shape: tuple[int, ...]
    component: str

    @property
    def count(self) -> int:
        return math.prod(self.shape)


@dataclass(frozen=True)
class Counted:
    """What transformers built for a config of an untaught model type, and its parameter table.

    ``how`` says why that class was built; ``tied`` maps each name a shared tensor also has to the name it is
    counted under (``{"lm_head.weight": "model.embed_tokens.weight"}``).
    No notebook calls it; it works behind the helpers of ``11_todays_models``.
    """

    name: str
    model_type: str
    architecture: str
    how: str
    version: str
    tensors: tuple[Tensor, ...]
    tied: Mapping[str, str]
    num_labels: int | None = None
    untaught: str = ""  # what no formula is taught for, where not the model type (a refused key of a taught family)

    @property
    def total(self) -> int:
        return sum((t.count for t in self.tensors), 0)

    @property
    def components(self) -> dict[str, int]:
        """Parameters per group, in the order of :data:`GROUPS`, groups without a tensor left out."""
        counts = {group: 0 for group in GROUPS}
        for t in self.tensors:
            counts[t.component] += t.count
        return {group: n for group, n in counts.items() if any(t.component == group for t in self.tensors)}


def is_taught(model_type: object) -> bool:
    """Whether a family module of :mod:`helpers.families` counts this model type by formula.

    No notebook calls it; it works behind the helpers of ``00_overview``.
    """
    return isinstance(model_type, str) and model_type in FAMILIES


def untaught_config(spec: str | Path) -> tuple[str, dict[str, Any]] | None:
    """The name and raw ``config.json`` of ``spec`` when its ``model_type`` is a string with no family; else None.

    No notebook calls it; it works behind the helpers of ``00_overview``. Named as :func:`~helpers.config.load_config`
    names a config (a model of ``data/models/`` by its name, any other file by the path given).
    """
    path = resolve(spec)
    raw = read_json(path)
    if not isinstance(raw, dict) or not isinstance(raw.get("model_type"), str) or is_taught(raw["model_type"]):
        return None
    name = path.stem if path.parent.resolve() == MODELS_DIR.resolve() else str(spec)
    return name, raw


def unmodelled_config(spec: str | Path, error: ConfigError) -> tuple[str, dict[str, Any], str] | None:
    """The name, raw ``config.json`` and what is untaught, when ``error`` refuses a key its taught family declares
    ``refused`` (an architecture the formulas do not model: BERT's relative positions, Gemma 3 with a tower other than
    SigLIP); else None. transformers builds such configs, so ``count`` answers them as it answers an untaught type.

    No notebook calls it; it works behind the helpers of ``00_overview``.
    """
    path = resolve(spec)
    raw = read_json(path)
    if not isinstance(raw, dict) or not is_taught(raw.get("model_type")):
        return None
    family = FAMILIES[raw["model_type"]]
    refused = {**family.refused, **{k: v for c in family.classes.values() for k, v in c.refused.items()}}
    if error.field not in refused:
        return None
    value: Any = raw
    for part in error.field.split("."):  # a composite's sub-config key: vision_config.model_type
        value = value.get(part) if isinstance(value, dict) else None
    name = path.stem if path.parent.resolve() == MODELS_DIR.resolve() else str(spec)
    # no entry (absent, null or empty): the class the family's formulas would count
    raw = {**raw, "architectures": raw.get("architectures") or [family.architecture]}
    return name, raw, f"{error.field} = {json.dumps(value)} ({refused[error.field][1]})"


def component_of(name: str, in_base_model: bool = True, module_class: str = "") -> str:
    """The group of a tensor from its dotted name (the rules of this module's docstring, first match wins).

No notebook calls it; it works behind the helpers of ``11_todays_models``. ``in_base_model``: whether the tensor is a
    parameter of the class's base model (``model.base_model``); one outside it is the head's. ``module_class``: the
    class name of the module that holds it (``LayerNorm``, ``Embedding``), where known.
    """
    modules = [segment.lower() for segment in name.split(".")[:-1]]
    leaf = name.split(".")[-1]
    if not in_base_model or "pooler" in modules:
        return HEAD
    if any(_VISION.search(m) for m in modules):
        return VISION
    if (modules and _NORM.search(modules[-1])) or "Norm" in module_class:
        return LAYER_NORM
    if any("embed" in m or m in ("wte", "wpe") for m in modules) or "Embed" in module_class:
        return EMBEDDINGS
    if any(_ATTENTION.search(m) for m in modules):
        return ATTENTION
    bert_output = any(m == "output" and prev.isdigit() for prev, m in zip(modules, modules[1:]))
    if bert_output or any(_FEED_FORWARD.search(m) for m in modules):
        return FEED_FORWARD
    if any(_STATE_SPACE.search(m) for m in modules) or leaf in ("A_log", "D", "dt_bias"):
        return STATE_SPACE
    return OTHER


def _transformers() -> Any:
    """The transformers module, or a :class:`ConfigError` saying how to install it."""
    try:
        import transformers  # noqa: F401 - the optional extra [hf]; only this fallback needs it
    except ImportError:
        raise ConfigError("model_type", "has no formula taught here, and counting it by transformers needs "
                                        f"transformers, which is not installed: {INSTALL}") from None
    return transformers


def _field_named(message: str, keys: list[str], model_type: str) -> str:
    """The config key an exception's message names (quoted first, then a bare snake_case word), else model_type."""
    found: list[tuple[int, str]] = []
    for key in keys:
        for pattern in (rf"[`'\"]{re.escape(key)}[`'\"]", rf"(?<![\w.]){re.escape(key)}(?![\w])" if "_" in key else ""):
            match = re.search(pattern, message) if pattern else None
            if match:
                found.append((match.start(), key))
                break
    return min(found)[1] if found else "model_type"


def refusal(error: Exception, raw: Mapping[str, Any], config: Any, model_type: str, what: str) -> ConfigError:
    """transformers' exception as one line naming the field it names (else model_type).

    No notebook calls it; it works behind the helpers of ``11_todays_models``. :mod:`helpers.simulate` calls it too.
    """
    message = " ".join(str(error).split()) or error.__class__.__name__
    keys = [k for k in raw if k not in ("model_type", "architectures")]
    extra = [k for k in (config.to_dict() if config is not None else {}) if k not in keys]
    field = _field_named(message, keys, model_type)
    if field == "model_type":
        field = _field_named(message, extra, model_type)
    if len(message) > 300:
        message = message[:297] + "..."
    return ConfigError(field, f"transformers cannot {what} {json.dumps(model_type)} from this config "
                              f"({error.__class__.__name__}: {message})")


def hf_config(raw: Mapping[str, Any], num_labels: int | None = None) -> Any:
    """transformers' config object for a raw ``config.json``, read by its model type's ``from_dict``.

    No notebook calls it; it works behind the helpers of ``11_todays_models``. A model type transformers does not know,
    or a config its class refuses, is a :class:`ConfigError` of one line.
    """
    transformers = _transformers()
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING

    model_type = raw["model_type"]
    if model_type not in CONFIG_MAPPING:
        raise ConfigError("model_type", f"{json.dumps(model_type)} has no formula taught here and transformers "
                                        f"{transformers.__version__} does not know it either")
    extra = {} if num_labels is None else {"num_labels": num_labels}
    try:
        with quiet():
            return CONFIG_MAPPING[model_type].from_dict(dict(raw), **extra)
    except Exception as error:  # noqa: BLE001 - whatever transformers raises is refused in one line
        raise refusal(error, raw, None, model_type, "read") from None


def choose_class(config: Any, raw: Mapping[str, Any], model_class: str | None = None) -> tuple[Any, str]:
    """The transformers class to build, and why: ``--class``, the ``architectures`` entry, else an auto class's.

    No notebook calls it; it works behind the helpers of ``11_todays_models``.
    """
    transformers = _transformers()
    from transformers.models.auto import modeling_auto

    model_type = raw["model_type"]

    def lookup(name: str) -> Any:
        try:
            found = getattr(transformers, name)
        except (AttributeError, ImportError):
            return None
        return found if isinstance(found, type) and issubclass(found, transformers.PreTrainedModel) else None

    if model_class is not None:
        cls = lookup(model_class)
        if cls is None:
            raise ConfigError("--class", f"{json.dumps(model_class)} is not a model class of transformers "
                                         f"{transformers.__version__}")
        if not isinstance(config, cls.config_class):
            raise ConfigError("--class", f"{model_class} is built from a {cls.config_class.__name__}, not from "
                                         f"this {type(config).__name__} ({model_type})")
        return cls, "--class"
    architectures = raw.get("architectures")
    named = architectures[0] if isinstance(architectures, list) and architectures and isinstance(
        architectures[0], str) else None
    if named is not None and lookup(named) is not None and isinstance(config, lookup(named).config_class):
        return lookup(named), "the config's architectures entry"
    autos = [("AutoModelForCausalLM", "MODEL_FOR_CAUSAL_LM_MAPPING_NAMES"),
             ("AutoModelForImageTextToText", "MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES"),
             ("AutoModel", "MODEL_MAPPING_NAMES")]
    if getattr(config, "is_encoder_decoder", False):
        autos[:0] = [("AutoModelForSpeechSeq2Seq", "MODEL_FOR_SPEECH_SEQ_2_SEQ_MAPPING_NAMES"),
                     ("AutoModelForSeq2SeqLM", "MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES")]
    for auto, mapping in autos:
        name = getattr(modeling_auto, mapping).get(model_type)
        if isinstance(name, str) and lookup(name) is not None:
            why = f"{auto}'s class for {model_type}"
            return lookup(name), (why if named is None else f"{why}; transformers has no {named}")
    raise ConfigError("model_type", f"transformers {transformers.__version__} knows {json.dumps(model_type)} but "
                                    "has no model class for it")


@contextmanager
def quiet() -> Iterator[None]:
    """transformers' warnings and log lines silenced (the command's output is its tables and one-line errors).

    No notebook calls it; it works behind the helpers of ``11_todays_models``. :mod:`helpers.simulate` calls it too.
    """
    from transformers.utils import logging

    level = logging.get_verbosity()
    logging.set_verbosity_error()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        logging.set_verbosity(level)


class _TooSlow(BaseException):
    """Raised by the watchdog when building on the meta device takes longer than its limit (a BaseException, so that
    no ``except Exception`` inside transformers swallows it)."""


@contextmanager
def _time_limit(seconds: float | None) -> Iterator[None]:
    """Raise :class:`_TooSlow` in this thread once ``seconds`` have passed, and again every 0.25 s until the block ends.

    A watchdog thread raises it asynchronously (CPython's ``PyThreadState_SetAsyncExc``), so it works in any thread,
    the main one or not (a signal alarm reaches only the main thread). It is raised again and again because an
    exception that lands in a finaliser (``__del__``, a weakref callback) is printed and dropped: one lost there
    would let the build run on for hours.
    """
    if not seconds:
        yield
        return
    target, done = ctypes.c_ulong(threading.get_ident()), threading.Event()

    def watch() -> None:
        if done.wait(seconds):
            return
        while not done.is_set():
            ctypes.pythonapi.PyThreadState_SetAsyncExc(target, ctypes.py_object(_TooSlow))
            done.wait(0.25)

    watchdog = threading.Thread(target=watch, name="fallback-build-limit", daemon=True)
    watchdog.start()
    try:
        yield
    finally:
        while True:  # stop the watchdog and clear a pending exception, even if one lands here meanwhile
            try:
                done.set()
                watchdog.join()
                ctypes.pythonapi.PyThreadState_SetAsyncExc(target, None)
                break
            except _TooSlow:
                continue


def build_on_meta(cls: Any, config: Any, raw: Mapping[str, Any], limit_s: float | None = BUILD_LIMIT_S) -> Any:
    """``cls(config)`` built under ``torch.device("meta")``, or a one-line :class:`ConfigError`.

    No notebook calls it; it works behind the helpers of ``11_todays_models``. Gives up after ``limit_s`` seconds,
    naming the largest ``*layer*`` key of the config (a config of millions of layers would take hours to build, even
    on meta), else the model type.
    """
    import torch

    model_type = raw["model_type"]
    try:
        with quiet(), _time_limit(limit_s), torch.device("meta"):
            return cls(config)
    except _TooSlow:
        layers = [(value, key) for key, value in raw.items() if "layer" in key and type(value) is int]
        field = max(layers)[1] if layers else "model_type"
        raise ConfigError(field, f"transformers took more than {limit_s:g} s to build {cls.__name__} on the meta "
                                 "device (it builds every layer one by one): given up") from None
    except Exception as error:  # noqa: BLE001 - whatever transformers raises is refused in one line
        raise refusal(error, raw, config, model_type, f"build {cls.__name__} for") from None


def tensor_rows(model: Any) -> tuple[tuple[Tensor, ...], dict[str, str]]:
    """The model's parameters (``named_parameters()``: a shared tensor once) grouped, and each tied alias.

    No notebook calls it; it works behind the helpers of ``11_todays_models``. Buffers are not parameters: not listed.
    """
    base = {id(p) for p in model.base_model.parameters()}

    def owner(name: str) -> str:
        return type(model.get_submodule(name.rpartition(".")[0])).__name__

    tensors = tuple(Tensor(n, tuple(int(s) for s in p.shape), component_of(n, id(p) in base, owner(n)))
                    for n, p in model.named_parameters())
    first = {id(p): n for n, p in model.named_parameters()}
    tied = {n: first[id(p)] for n, p in model.named_parameters(remove_duplicate=False) if first[id(p)] != n}
    return tensors, tied


def count_by_transformers(raw: Mapping[str, Any], name: str = "config", model_class: str | None = None,
                          num_labels: int | None = None, limit_s: float | None = BUILD_LIMIT_S,
                          untaught: str = "") -> Counted:
    """Count a config as transformers builds it: its class, built on meta, tensor by tensor (the command line's answer
    for a model type with no taught formula).

    Introduced in ``11_todays_models``. Raises a one-line :class:`ConfigError` when transformers is missing, does
    not know the model type, or refuses the config. ``untaught``: what has no formula, where it is not the model type
    (:func:`unmodelled_config`).
    """
    transformers = _transformers()
    config = hf_config(raw, num_labels)
    cls, how = choose_class(config, raw, model_class)
    model = build_on_meta(cls, config, raw, limit_s)
    tensors, tied = tensor_rows(model)
    return Counted(name, raw["model_type"], cls.__name__, how, transformers.__version__, tensors, tied, num_labels,
                   untaught)


def headline(result: Counted) -> str:
    """The first lines of ``count`` and ``memory``: the model, the class built, and that transformers counted it.

    No notebook calls it; it works behind the helpers of ``00_overview``.
    """
    return (f"{result.name} ({result.architecture}: {result.how})\n"
            f"counted by transformers {result.version} ({result.architecture} built on the meta device): no formula "
            f"is taught for {result.untaught or 'model_type ' + json.dumps(result.model_type)}")


def _tied_line(result: Counted) -> str:
    if not result.tied:
        return "no tied weights"
    pairs = "; ".join(f"{alias} is {kept}" for alias, kept in result.tied.items())
    return f"tied weights counted once ({pairs})"


def groups_table(result: Counted) -> str:
    """The per-group table of ``count``: group, tensors, parameters, share, and the total.

    No notebook calls it; it works behind the helpers of ``00_overview``.
    """
    whole = result.total
    rows = [(group, sum(t.component == group for t in result.tensors), fmt_int(n), fmt_share(n, whole))
            for group, n in result.components.items()]
    rows.append(("total", len(result.tensors), fmt_int(whole), fmt_share(whole, whole)))
    return table(("component", "tensors", "parameters", "share"), rows, right=(1, 2, 3))


def tensors_table(result: Counted) -> str:
    """Every tensor (``count --tensors``): name, shape, group, parameters, share.

    No notebook calls it; it works behind the helpers of ``00_overview``.
    """
    whole = result.total
    rows = [(t.name, "[" + ", ".join(map(str, t.shape)) + "]", t.component, fmt_int(t.count), fmt_share(t.count, whole))
            for t in result.tensors]
    return table(("name", "shape", "component", "parameters", "share"), rows, right=(3, 4))


def count_report(result: Counted, tensors: bool = False) -> str:
    """The text ``count`` prints for an untaught model type.

    No notebook calls it; it works behind the helpers of ``00_overview``.
    """
    text = f"{headline(result)}\n\n{groups_table(result)}\n{_tied_line(result)}; buffers are not parameters"
    return text + ("\n\n" + tensors_table(result) if tensors else "")


def count_json(result: Counted) -> dict[str, Any]:
    """``count --json`` for an untaught model type: the taught document's keys that apply, and ``counted_by``.

    No notebook calls it; it works behind the helpers of ``00_overview``. ``active`` is left out (which experts a
    token skips is known only by formula); ``tied`` maps each tied name to the name it is counted under; ``num_labels`` is ``--num-labels`` (else null).
    """
    return {
        "model": result.name,
        "model_type": result.model_type,
        "class": result.architecture,
        "num_labels": result.num_labels,
        "names": "transformers",
        "counted_by": COUNTED_BY,
        "transformers_version": result.version,
        "total": result.total,
        "components": result.components,
        "tied": dict(result.tied),
        "parameters": [{"name": t.name, "shape": list(t.shape), "count": t.count, "component": t.component}
                       for t in result.tensors],
    }


def weights_by_dtype(result: Counted) -> dict[str, int]:
    """Bytes of the weights in every dtype of :data:`helpers.memory.DTYPE_BITS` (exact, int4 rounded up).

    No notebook calls it; it works behind the helpers of ``00_overview``.
    """
    return {dtype: values_bytes(result.total, dtype) for dtype in DTYPE_BITS}


def training_state_bytes(result: Counted) -> dict[str, dict[str, int]]:
    """Per recipe of :data:`helpers.memory.TRAINING_STATE`, each part's bytes for N parameters in N_t tensors.

    No notebook calls it; it works behind the helpers of ``00_overview``.
    """
    sizes = ModelConfig(result.name, result.model_type, {"N": result.total, "N_t": len(result.tensors)}, {})
    return {recipe: {part: evaluate(formula, sizes) for part, formula in parts.items()}
            for recipe, parts in TRAINING_STATE.items()}


def memory_report(result: Counted) -> str:
    """The text ``memory`` prints for an untaught model type: weights in each dtype and the training state.

    No notebook calls it; it works behind the helpers of ``00_overview``.
    """
    out = [headline(result), "",
           f"N = {fmt_int(result.total)} parameters in N_t = {len(result.tensors)} tensors"]
    rows = [(dtype, f"{Fraction(DTYPE_BITS[dtype], 8)}", fmt_int(n), fmt_bytes(n))
            for dtype, n in weights_by_dtype(result).items()]
    out += ["", "weights", table(("dtype", "bytes/param", "bytes", "size"), rows, right=(1, 2, 3))]
    for recipe, parts in training_state_bytes(result).items():
        rows = [(part, render(TRAINING_STATE[recipe][part]), fmt_int(n), fmt_bytes(n)) for part, n in parts.items()]
        whole = sum(parts.values(), 0)
        rows.append(("total", "16N + 4N_t", fmt_int(whole), fmt_bytes(whole)))
        out += ["", f"training state, {recipe}", table(("part", "formula", "bytes", "size"), rows, right=(2, 3))]
    out += ["", "KV cache and activations: not answered (they need the attention layout, which no formula here "
                f"describes for {result.model_type})"]
    return "\n".join(out)


def memory_json(result: Counted) -> dict[str, Any]:
    """``memory --json`` for an untaught model type: the taught document's keys that apply, and ``counted_by``.

    No notebook calls it; it works behind the helpers of ``00_overview``.
    """
    return {
        "model": result.name,
        "model_type": result.model_type,
        "counted_by": COUNTED_BY,
        "parameters": result.total,
        "parameter_tensors": len(result.tensors),
        "weights": weights_by_dtype(result),
        "training_state": {recipe: {"parts": parts, "total": sum(parts.values(), 0)}
                           for recipe, parts in training_state_bytes(result).items()},
    }


def refuse(model_type: str, command: str) -> ConfigError:
    """The one-line refusal of ``flops`` and ``budget`` (or an option) for an untaught model type.

    No notebook calls it; it works behind the helpers of ``00_overview``.
    """
    return ConfigError("model_type", f"{json.dumps(model_type)} has no formula taught here: {command} is not answered "
                                     "for it; only count and memory (weights, training state) are, by transformers")
