"""Reading a Hugging Face ``config.json`` into a checked, normalised configuration.

Introduced in ``00_overview``; every other notebook, the tests and ``python -m helpers`` read
configurations through :func:`load_config`.

A configuration is reduced to the handful of sizes that decide the parameter count, under the
symbols the notebooks use (``V``, ``P``, ``T``, ``H``, ``L``, ``A``, ``I``, ``d_k``, ``A_kv``).
Keys a file leaves out take the defaults ``transformers`` uses for that ``model_type``; anything
malformed raises :class:`ConfigError`, whose message names the field and what is wrong.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any, Mapping

from .families import FAMILIES, SUPPORTED
from .spec import ConfigError, Family, Flag, ModelConfig, Size  # noqa: F401  the records live in helpers.spec (layer 0)
from .spec import evaluate, read_int as _read_int

DATA_DIR = Path(__file__).resolve().parent.parent / "data"
MODELS_DIR = DATA_DIR / "models"


def _null(key: str, size: Size) -> ConfigError:
    return ConfigError(key, f"must be an integer, got null (leave the key out for the default {size.default})")


def _read_size(raw: Mapping[str, Any], size: Size, unread: dict[str, tuple[str, Size]]) -> int | None:
    """The size as transformers reads it (its default where the file leaves it out), checked; None where it stays
    unset. A null under an alias of a size only layers read (``size.layers``) is read as the default and put in
    ``unread`` (symbol: (the alias, the size)), to be refused once the depths and the class are known, unless no layer
    built reads it (every count of ``size.layers`` 0)."""
    nulled = False
    for key in (size.key, *size.aliases):
        if key in raw and raw[key] is None:
            nulled = True
            if size.default is not None and not size.nullable:  # transformers would fail on it
                if key == size.key or not size.layers:  # the config class checks its own field's type
                    raise _null(key, size)
                # through the alias the field is set to None unchecked, whatever its own key says
                unread[size.symbol] = (key, size)
                return size.default
    given = [key for key in (size.key, *size.aliases) if raw.get(key) is not None]
    if not given:
        return None if nulled and size.nullable else size.default
    values = {key: _read_int(key, raw[key]) for key in given}
    # transformers' config classes set the field from its own key, then apply their attribute_map: an alias, when the
    # file gives one, overrides the field's own key (the last alias in the file's order wins), as it does there
    aliases = [key for key in raw if key in size.aliases and key in values]
    key = aliases[-1] if aliases else size.key
    value = values[key]
    if value < size.minimum:
        raise ConfigError(key, f"must be at least {size.minimum}, got {value}")
    return value


def _read_pad(raw: Mapping[str, Any], family: Family, sizes: Mapping[str, int]) -> int | None:
    """The padding index of the token table (and RoBERTa's position table), checked as torch would."""
    pad = raw.get("pad_token_id", family.pad_token_id)
    if pad is None or not family.padded:
        return None
    pad = _read_int("pad_token_id", pad)
    keys = {size.symbol: size.key for size in family.sizes}
    for key, rows in ((keys[symbol], sizes[symbol]) for symbol in family.padded):
        if not -rows <= pad < rows:
            raise ConfigError("pad_token_id", f"{pad} is not a row of the table of {key} = {rows}")
    return pad


def _read_flag(raw: Mapping[str, Any], flag: Flag) -> bool:
    value = raw.get(flag.key, flag.default)
    if value is None:
        if not flag.nullable:  # a ``bool`` field of transformers' config class: null fails its validation
            raise ConfigError(flag.key, "must be true or false, got null (leave the key out for the default "
                                        f"{json.dumps(flag.default)})")
        return flag.default
    if not isinstance(value, bool):
        raise ConfigError(flag.key, f"must be true or false, got {json.dumps(value)}")
    return value


def _divides(raw_key: str, whole_key: str, part: int, whole: int, what: str) -> None:
    """Raise a :class:`ConfigError` naming ``raw_key`` unless ``part`` divides ``whole`` (families use it too)."""
    if whole % part:
        raise ConfigError(raw_key, f"{what}: {whole_key} = {whole} is not divisible by {raw_key} = {part}")


def _read_labels(raw: Mapping[str, Any]) -> int:
    """C as transformers reads it: the length of ``id2label`` if given, else ``num_labels``, else 2."""
    id2label = raw.get("id2label")
    if id2label is not None:
        if not isinstance(id2label, dict):
            raise ConfigError("id2label", f"must be an object mapping label ids to names, got {json.dumps(id2label)}")
        for key in map(str, id2label):
            if not (key.isascii() and key.lstrip("-").isdigit()):  # transformers reads each key with int()
                raise ConfigError("id2label", f"keys must be integer label ids, got {json.dumps(key)}")
        if not id2label:
            raise ConfigError("id2label", "is empty: a label head needs at least one label")
        return len(id2label)
    labels = raw.get("num_labels")
    if labels is None:
        return 2
    labels = _read_int("num_labels", labels)
    if labels < 1:
        raise ConfigError("num_labels", f"must be at least 1, got {labels}")
    return labels


def _read_class(raw: Mapping[str, Any], family: Family, model_class: str | None, num_labels: int | None,
                sizes: dict[str, int], flags: dict[str, bool]) -> str | None:
    """The class to count (None: the family's default), with C and the class's own flags, checked."""
    if model_class == family.architecture:
        model_class = None
    if model_class is not None and model_class not in family.classes:
        raise ConfigError("--class", f"{json.dumps(model_class)} is not a {family.model_type} class the engine counts; "
                                     f"known: {', '.join(family.class_names)}")
    spec = family.classes[model_class] if model_class is not None else None
    if spec is None or not spec.labels:
        if num_labels is not None:
            with_labels = [n for n, c in family.classes.items() if c.labels]
            raise ConfigError("--num-labels", f"{model_class or family.architecture} has no label head (the "
                                              f"{family.model_type} classes with one: {', '.join(with_labels) or 'none'})")
        if spec is None:
            return None
    for key, (expected, why) in spec.refused.items():
        if key in raw and raw[key] is not None and raw[key] != expected:
            raise ConfigError(key, f"{json.dumps(raw[key])} is not supported (only {json.dumps(expected)}): {why}")
    flags.update({flag.key: _read_flag(raw, flag) for flag in spec.flags})
    if spec.read is not None:
        spec.read(raw)
    if spec.labels:
        if num_labels is not None and num_labels < 1:
            raise ConfigError("--num-labels", f"must be a positive integer, got {num_labels}")
        labels = _read_labels(raw) if num_labels is None else num_labels  # from_pretrained(num_labels=...) wins
        if spec.required_labels is not None and labels != spec.required_labels:
            field = "--num-labels" if num_labels is not None else ("id2label" if raw.get("id2label") is not None
                                                                  else "num_labels")
            raise ConfigError(field, f"{model_class} requires {spec.required_labels} labels (transformers refuses "
                                     f"any other number), got {labels}")
        sizes["C"] = labels
    return model_class


def _read_nested(raw: dict[str, Any], family: Family, name: str) -> tuple[dict[str, Any], ModelConfig | None]:
    """A composite config (transformers' ``text_config`` / ``vision_config``): the keys of each object in
    ``family.sub_configs`` also as ``"vision_config.hidden_size"`` (what the family's own sizes name), and the language
    model's config parsed by its own family (``family.text``: ``text_config``, or the top-level keys where the file
    has none and the family reads that flat form), what the file leaves out filled with the composite's defaults.
    A problem there is refused naming ``text_config.KEY``. (None, as given) for a family of one config.
    """
    subs = (*family.sub_configs, *((family.text.key,) if family.text is not None else ()))
    flat = dict(raw)
    for key in subs:
        if raw.get(key) is not None and not isinstance(raw[key], dict):  # transformers raises a TypeError
            raise ConfigError(key, f"must be an object (or null for the defaults), got {json.dumps(raw[key])}")
        flat.update({f"{key}.{k}": v for k, v in (raw.get(key) or {}).items()})
    spec = family.text
    if spec is None:
        return flat, None
    given = raw.get(spec.key)
    nested = given is not None or not spec.flat
    sub = {**spec.defaults, **(given or {} if nested else {k: v for k, v in raw.items() if k not in subs})}
    sub = {k: v for k, v in sub.items() if k not in spec.ignores}
    try:
        text = parse_config({**sub, "model_type": spec.family}, name=name)
        if spec.runs is not None:  # the composite runs its language model otherwise than the text family's class
            text = replace(text, cannot_run=dict(spec.runs(text.raw, text.sizes, text.flags) or {}))
    except ConfigError as error:
        raise ConfigError(f"{spec.key}.{error.field}" if nested else error.field, error.problem) from None
    if nested:  # what the language model cannot run, named as the file names it
        text = replace(text, cannot_run={what: (f"{spec.key}.{key}", why) for what, (key, why) in text.cannot_run.items()})
    return flat, text


def parse_config(raw: Any, name: str = "config", model_class: str | None = None,
                 num_labels: int | None = None) -> ModelConfig:
    """Check a decoded ``config.json`` and reduce it to a :class:`ModelConfig`.

    Introduced in ``02_multi_head_attention``. ``model_class`` names another transformers class of the family to count
    (``BertForMaskedLM``; its :attr:`~helpers.families.base.Family.classes`), ``num_labels`` overrides the
    file's labels for a class with a label head, as ``from_pretrained(..., num_labels=N)`` does; both are
    refused in one line naming ``--class`` / ``--num-labels`` where they do not apply.
    """
    if not isinstance(raw, dict):
        raise ConfigError("config", f"must be a JSON object, got a JSON {type(raw).__name__}")
    model_type = raw.get("model_type")
    if model_type is None:
        raise ConfigError("model_type", f"is missing; supported: {', '.join(SUPPORTED)}")
    if model_type not in FAMILIES:
        raise ConfigError("model_type", f"{json.dumps(model_type)} is not supported; supported: {', '.join(SUPPORTED)}")
    family = FAMILIES[model_type]
    raw, text = _read_nested(raw, family, name)
    for key, (expected, why) in family.refused.items():
        if key in raw and raw[key] is not None and raw[key] != expected:
            raise ConfigError(key, f"{json.dumps(raw[key])} is not supported (only {json.dumps(expected)}): {why}")
    sizes: dict[str, int] = dict(text.sizes) if text else {}  # a composite: its language model's sizes first
    unread: dict[str, tuple[str, Size]] = {}  # sizes nulled under an alias: built only where no layer reads them
    for size in family.sizes:
        value = _read_size(raw, size, unread)
        if value is not None:
            sizes[size.symbol] = value
    flags = {**(text.flags if text else {}), **{flag.key: _read_flag(raw, flag) for flag in family.flags}}
    keys = {size.symbol: size.key for size in family.sizes}

    if family.derive is not None:  # derived sizes (I = 4H, A_kv = A) and the family's own checks
        family.derive(sizes, keys)
    lists: Mapping[str, tuple[int, ...]] = dict(text.lists) if text else {}
    if family.read is not None:  # keys that are neither sizes nor flags (Qwen2's layer_types)
        lists = {**lists, **(family.read(raw, sizes, flags) or {})}
    chosen = _read_class(raw, family, model_class, num_labels, sizes, flags)
    built = ModelConfig(name, model_type, sizes, flags, lists=lists, model_class=chosen)
    for key, size in unread.values():  # the depths and the class known (T5EncoderModel builds no decoder layer)
        if any(layers(built) if callable(layers) else evaluate(layers, built) for layers in size.layers):
            raise _null(key, size)  # a layer would read None
    # transformers refuses a hidden size the heads do not divide: always (LLaMA), only without head_dim (Qwen2,
    # Qwen3, Phi-3: their projections are A·d_k wide whatever H is) or never (Gemma, T5)
    rule = family.heads_divide_hidden
    unchecked = family.heads_checked_by_layers and sizes.get("L") == 0  # no attention layer built to check them
    if not unchecked and (rule == "always" or (rule == "unless head_dim" and "d_k" not in sizes) or (
            rule == "unless embedding_size" and "embedding_size" not in raw)):
        _divides(keys["A"], keys["H"], sizes["A"], sizes["H"], "the heads split the hidden size")
    sizes.setdefault("d_k", sizes["H"] // sizes["A"])
    pad = text.pad_token_id if text else _read_pad(raw, family, sizes)
    cannot_run = {**(text.cannot_run if text else {}),
                  **((family.runs(raw, sizes, flags) if family.runs is not None else None) or {})}
    return ModelConfig(name=name, model_type=model_type, sizes=sizes, flags=flags, pad_token_id=pad, lists=lists,
                       model_class=chosen, cannot_run=cannot_run, quantization=raw.get("quantization_config"),
                       torch_dtype=raw.get("torch_dtype") or raw.get("dtype"), raw=raw, family=family)


def model_names() -> list[str]:
    """The configurations shipped in ``data/models/``, by name.

    Introduced in ``01_embeddings``.
    """
    return sorted(path.stem for path in MODELS_DIR.glob("*.json"))


def resolve(spec: str | Path) -> Path:
    """A path to a config.json (or to a checkpoint folder holding one), or the name of a model in ``data/models/``.

    No notebook calls it; it works behind the helpers of ``00_overview``.
    """
    path = Path(spec)
    if path.is_file():
        return path
    if (path / "config.json").is_file():
        return path / "config.json"
    shipped = MODELS_DIR / f"{spec}.json"
    if shipped.is_file():
        return shipped
    if path.exists():
        raise ConfigError("CONFIG", f"{spec} is not a file")
    raise ConfigError("CONFIG", f"{spec} is neither a file nor a model in data/models/ ({', '.join(model_names())})")


def read_json(path: Path) -> Any:
    """A JSON file's content, or a :class:`ConfigError` saying why it cannot be read.

    Introduced in ``07_decoder_llms``.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError("CONFIG", f"{path} cannot be read ({error.__class__.__name__})") from None
    return decode_json(text, str(path))


def decode_json(text: str, where: str) -> Any:
    """``text`` decoded as JSON, or a :class:`ConfigError` naming ``where`` (a file) and the line and column at fault.

    No notebook calls it; it works behind the helpers of ``00_overview``. :func:`read_json` and the explorer's upload
    call it.
    """
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise ConfigError("CONFIG", f"{where} is not valid JSON (line {error.lineno}, column {error.colno}: {error.msg})") from None


def load_config(spec: str | Path, model_class: str | None = None, num_labels: int | None = None) -> ModelConfig:
    """Read and check a config: a path to a ``config.json`` or a name in ``data/models/``.

    Introduced in ``00_overview``. ``model_class`` and ``num_labels``: as :func:`parse_config`.
    """
    path = resolve(spec)
    name = path.stem if path.parent.resolve() == MODELS_DIR.resolve() else str(spec)
    return parse_config(read_json(path), name=name, model_class=model_class, num_labels=num_labels)


def raw_config(name: str) -> dict[str, Any]:
    """The unparsed ``data/models/NAME.json`` (for showing a file's own keys).

    Introduced in ``00_overview``.
    """
    return read_json(resolve(name))


def published() -> dict[str, Any]:
    """``data/published.json``: figures as papers, model cards and the write-ups state them.

    Introduced in ``00_overview``.
    """
    return read_json(DATA_DIR / "published.json")


def published_figure(name: str) -> dict[str, Any]:
    """The first figure ``data/published.json`` lists for a model of ``data/models/`` (its paper's, where it has one).

    Introduced in ``00_overview``. Raises ``KeyError`` for a model with no published figure.
    """
    for figure in published()["figures"]:
        if figure["config"] == name:
            return figure
    raise KeyError(name)
