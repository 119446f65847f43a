"""The explorer: turn a model's knobs and watch its counts, FLOPs and bytes move, all from the engine.

No notebook calls it; it works behind the helpers of ``00_overview`` (``count_model``, ``component_bars``) and
``08_flops_and_memory`` (``forward_flops``, ``weight_bytes``, ``kv_cache_bytes``). ``explore()`` in JupyterLab, or
``make explorer`` for the same app as a Voilà page.

The logic is pure functions, testable without a browser: :func:`knobs` (the sizes a preset's family reads),
:func:`edited` (a preset's raw config with the knobs changed), :func:`compute` (an :class:`Outputs` or the engine's
one-line :class:`~helpers.config.ConfigError`), :func:`compare_rows`, :func:`sweep`, :func:`uploaded` (an uploaded
``config.json``'s raw config); the widget layer (:func:`explore`) only wires them.
"""

from __future__ import annotations

import copy
import html
import io
import json
from dataclasses import dataclass
from typing import Any, Mapping

from .config import ConfigError, decode_json, model_names, parse_config, raw_config
from .count import count_model
from .flops import forward_flops
from .budget import chinchilla_tokens, training_flops_per_token
from .memory import ADAMW_MIXED, DTYPE_BITS, kv_cache_bytes, training_state, weight_bytes
from .families import FAMILIES

DEFAULT_B, DEFAULT_S, DEFAULT_DTYPE = 1, 2048, "bf16"


@dataclass(frozen=True)
class Knob:
    """One size a preset's family reads: its symbol, where it lives in ``config.json`` (a path of keys: ``("H",)``
    is written ``("hidden_size",)``; a composite's language model ``("text_config", "hidden_size")``), the other keys
    transformers reads for it (removed when the knob is set, so the knob's value is the one read), and its value.
    No notebook calls it or reaches it."""

    symbol: str
    path: tuple[str, ...]
    aliases: tuple[str, ...]
    value: int


def knobs(raw: Mapping[str, Any]) -> list[Knob]:
    """The sizes the family of ``raw`` reads that its parsed config holds, with their values (derived ones included:
    LLaMA's A_kv = A when the file leaves it out). A composite's language-model sizes come first, under its key.

    No notebook calls it or reaches it.
    """
    config = parse_config(dict(raw))
    family = FAMILIES[raw["model_type"]]
    found: dict[str, Knob] = {}
    if family.text is not None:
        spec = family.text
        nested = raw.get(spec.key) is not None or not spec.flat
        for size in FAMILIES[spec.family].sizes:
            if size.symbol in config.sizes and size.key not in spec.ignores:
                path = (spec.key, size.key) if nested else (size.key,)
                found[size.symbol] = Knob(size.symbol, path, size.aliases, config.sizes[size.symbol])
    for size in family.sizes:
        if size.symbol in config.sizes and size.symbol not in found:
            found[size.symbol] = Knob(size.symbol, tuple(size.key.split(".")), size.aliases,
                                      config.sizes[size.symbol])
    return list(found.values())


# per-layer lists transformers checks against num_hidden_layers: they follow a change of L (their pattern repeated)
PER_LAYER = ("layer_types", "no_rope_layers")


def edited(raw: Mapping[str, Any], changes: Mapping[str, int]) -> dict[str, Any]:
    """``raw`` with each knob named in ``changes`` (symbol → value) set, at its key (its aliases removed). A per-layer
    list of the old L entries beside it (:data:`PER_LAYER`: gpt-oss's ``layer_types``) follows a new L, its pattern
    repeated from the first layer, so that L is a knob of those models too.

    No notebook calls it or reaches it.
    """
    out = copy.deepcopy(dict(raw))
    if not changes:
        return out
    by_symbol = {knob.symbol: knob for knob in knobs(raw)}
    for symbol, value in changes.items():
        if symbol not in by_symbol:
            raise ConfigError(symbol, f"is not a size this family reads (knobs: {', '.join(by_symbol)})")
        knob = by_symbol[symbol]
        where = out
        for key in knob.path[:-1]:
            if not isinstance(where.get(key), dict):
                where[key] = {}
            where = where[key]
        for alias in knob.aliases:
            where.pop(alias, None)
        where[knob.path[-1]] = value
        if symbol == "L":
            for key in PER_LAYER:
                given = where.get(key)
                if isinstance(given, list) and given and len(given) == knob.value:
                    where[key] = [given[i % len(given)] for i in range(value)]
    return out


UPLOADED = "uploaded: "  # the preset menu's label of an uploaded file: "uploaded: config.json"


def uploaded(content: bytes, filename: str) -> dict[str, Any]:
    """The raw config of an uploaded ``config.json`` (its bytes and file name), checked as the explorer needs it: a
    JSON object the engine parses, of a family it is taught. Else the one-line :class:`ConfigError`: the file named
    for bytes that are not UTF-8 JSON, the engine's own message for a config it refuses, and for a ``model_type``
    with no family, that the explorer needs one while ``python -m helpers count`` answers it by transformers.

    No notebook calls it or reaches it.
    """
    try:
        text = bytes(content).decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise ConfigError("CONFIG", f"{filename} is not UTF-8 text (byte {error.start})") from None
    raw = decode_json(text, filename)
    if isinstance(raw, dict) and isinstance(raw.get("model_type"), str) and raw["model_type"] not in FAMILIES:
        raise ConfigError("model_type", f"{json.dumps(raw['model_type'])} has no family taught here, and the explorer "
                                        f"needs one; `python -m helpers count {filename}` counts it by transformers")
    parse_config(raw, name=filename)  # the engine's one line for anything else it refuses
    return raw


@dataclass(frozen=True)
class Outputs:
    """What the explorer shows for one config: the component table and the figures of the engine.
    No notebook calls it or reaches it."""

    name: str
    total: int
    active: int
    components: dict[str, int]
    active_components: dict[str, int]
    formulas: dict[str, str]
    forward: int | str  # FLOPs of one forward pass on B × S tokens, or the engine's one-line refusal
    training: int | str  # forward + backward
    weights: int
    kv_cache: int | None | str  # bytes; None: no cache (an encoder); str: the engine's refusal
    batch: int
    seq_len: int
    dtype: str
    training_state: int = 0  # bytes of mixed-precision AdamW's state (weights, gradients, fp32 master and moments)
    tokens: int = 0  # D: training tokens, Chinchilla's 20 per parameter (Hoffmann et al. 2022)
    training_run: int | str = ""  # training FLOPs for D tokens at S, or why there is no per-token figure

    @property
    def moe(self) -> bool:
        return self.active != self.total


def compute(raw: Mapping[str, Any], batch: int = DEFAULT_B, seq_len: int = DEFAULT_S, dtype: str = DEFAULT_DTYPE,
            name: str = "config") -> Outputs:
    """Every figure of the explorer for ``raw``, through the engine alone. Raises :class:`ConfigError` (one line,
    naming the key) for a config the engine refuses, as for B < 1, S < 1 or an unknown dtype.

    No notebook calls it or reaches it.
    """
    for key, value in (("B", batch), ("S", seq_len)):
        if not isinstance(value, int) or value < 1:
            raise ConfigError(key, f"must be a positive integer, got {value!r}")
    if dtype not in DTYPE_BITS:
        raise ConfigError("dtype", f"{dtype!r} is not one of {', '.join(DTYPE_BITS)}")
    config = parse_config(dict(raw), name=name)
    result = count_model(config)
    forward: int | str
    training: int | str
    try:
        flops = forward_flops(config, batch, seq_len)
        forward, training = flops.forward, flops.training
    except ConfigError as error:
        forward = training = str(error)
    kv: int | None | str
    try:
        config.check_runs(cache=True)
        kv = kv_cache_bytes(config, batch, seq_len, dtype)
    except ConfigError as error:
        kv = str(error)
    tokens = chinchilla_tokens(config)
    run: int | str
    try:
        run = training_flops_per_token(config, seq_len) * tokens
    except (ConfigError, ValueError) as error:  # an encoder (its pooler runs per sequence), or a convolution's padding
        run = str(error)
    return Outputs(name=name, total=result.total, active=result.active, components=result.components,
                   active_components=result.active_components, formulas=result.formulas, forward=forward,
                   training=training, weights=weight_bytes(config, dtype), kv_cache=kv, batch=batch,
                   seq_len=seq_len, dtype=dtype,
                   training_state=sum((part.bytes for part in training_state(config, ADAMW_MIXED)), 0),
                   tokens=tokens, training_run=run)


def outcome(raw: Mapping[str, Any], changes: Mapping[str, int] | None = None, batch: int = DEFAULT_B,
            seq_len: int = DEFAULT_S, dtype: str = DEFAULT_DTYPE, name: str = "config") -> Outputs | str:
    """:func:`compute` on ``raw`` with the knobs ``changes`` set (:func:`edited`), or the engine's one-line message
    (``"num_attention_heads: ..."``) where it refuses.

    No notebook calls it or reaches it.
    """
    try:
        return compute(edited(raw, changes or {}), batch, seq_len, dtype, name)
    except ConfigError as error:
        return str(error)


# --- HTML ----------------------------------------------------------------------------------------------------------

def _n(value: int) -> str:
    return f"{value:,}"


def _bytes(value: int | None | str) -> str:
    if value is None:
        return "no cache (an encoder)"
    if isinstance(value, str):
        return html.escape(value)
    return f"{value:,} B ({value / 2**30:,.3f} GiB)"


def summary_html(out: Outputs) -> str:
    """The totals, FLOPs and bytes as an HTML block (the browser test reads ``explore-total``).

    No notebook calls it or reaches it.
    """
    tokens = out.batch * out.seq_len
    lines = [f"<b>{html.escape(out.name)}</b>: <b>total</b> <span class='explore-total'>{_n(out.total)}</span> parameters"]
    if out.moe:
        lines.append(f"<b>active</b> per token <span class='explore-active'>{_n(out.active)}</span>")
    if isinstance(out.forward, int):
        lines.append(f"forward FLOPs, B·S = {_n(tokens)} tokens: {_n(out.forward)} "
                     f"({_n(out.forward // tokens)} per token); training step: {_n(out.training)}")
    else:
        lines.append(f"forward FLOPs: {html.escape(out.forward)}")
    if isinstance(out.training_run, int):
        lines.append(f"training on D = {_n(out.tokens)} tokens (Chinchilla's 20 per parameter), S = {out.seq_len}: "
                     f"<span class='explore-run'>{_n(out.training_run)}</span> FLOPs")
    lines.append(f"weights in {out.dtype}: {_bytes(out.weights)}; training state ({ADAMW_MIXED}): "
                 f"{_bytes(out.training_state)}")
    per_token = f" ({_n(out.kv_cache // tokens)} B per token)" if isinstance(out.kv_cache, int) else ""
    lines.append(f"KV cache, B = {out.batch}, S = {out.seq_len}, {out.dtype}: {_bytes(out.kv_cache)}{per_token}")
    return "<br>".join(lines)


def table_html(out: Outputs) -> str:
    """The component table: count, formula, share (and active count for a mixture of experts).

    No notebook calls it or reaches it.
    """
    head = "<tr><th>component</th><th>count</th><th>formula</th><th>share</th>"
    head += "<th>active</th></tr>" if out.moe else "</tr>"
    rows = []
    for component, count in out.components.items():
        share = f"{100 * count / out.total:.2f}%" if out.total else "-"
        row = (f"<tr><td>{html.escape(component)}</td><td style='text-align:right'>{_n(count)}</td>"
               f"<td><code>{html.escape(out.formulas.get(component, ''))}</code></td>"
               f"<td style='text-align:right'>{share}</td>")
        if out.moe:
            row += f"<td style='text-align:right'>{_n(out.active_components[component])}</td>"
        rows.append(row + "</tr>")
    return f"<table class='explore-table'>{head}{''.join(rows)}</table>"


def error_html(message: str) -> str:
    """The engine's one-line message, in red (the browser test reads ``explore-error``).

    No notebook calls it or reaches it.
    """
    return f"<span class='explore-error' style='color:#b00020'>{html.escape(message)}</span>"


def picture_png(out: Outputs) -> bytes:
    """The notebooks' picture of the component table (:func:`helpers.plots.component_bars`) as PNG bytes.

    No notebook calls it or reaches it.
    """
    from matplotlib.figure import Figure

    from .plots import component_bars

    figure = Figure(figsize=(8, 0.45 * len(out.components) + 1.2), layout="constrained")
    component_bars({c: n for c, n in out.components.items() if n > 0} or {"(nothing)": 0}, out.name,
                   ax=figure.subplots())
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=80, metadata={"Software": None})
    return buffer.getvalue()


def compare_rows(left: Outputs, right: Outputs) -> list[tuple[str, int | None, int | None]]:
    """The components of two models side by side (None: the model has no such component), then the total.

    No notebook calls it or reaches it.
    """
    names = list(dict.fromkeys([*left.components, *right.components]))
    rows: list[tuple[str, int | None, int | None]] = [
        (name, left.components.get(name), right.components.get(name)) for name in names]
    rows.append(("total", left.total, right.total))
    if left.moe or right.moe:
        rows.append(("active per token", left.active, right.active))
    return rows


def compare_html(left: Outputs, right: Outputs) -> str:
    """:func:`compare_rows` as a table, the rows that differ highlighted, with the difference right − left.

    No notebook calls it or reaches it.
    """
    head = (f"<tr><th>component</th><th>{html.escape(left.name)}</th><th>{html.escape(right.name)}</th>"
            "<th>right − left</th></tr>")
    rows = []
    for name, a, b in compare_rows(left, right):
        differs = a != b
        style = " style='background:#fff3b0'" if differs else ""
        diff = _n((b or 0) - (a or 0)) if differs else "="
        cells = [html.escape(name), "-" if a is None else _n(a), "-" if b is None else _n(b), diff]
        rows.append(f"<tr class='{'explore-differs' if differs else 'explore-same'}'{style}>"
                    + "".join(f"<td>{cell}</td>" for cell in cells) + "</tr>")
    return f"<table class='explore-compare'>{head}{''.join(rows)}</table>"


def sweep(raw: Mapping[str, Any], changes: Mapping[str, int], symbol: str,
          values: list[int]) -> dict[str, list[int | None]]:
    """Each component's count as one knob takes ``values`` (the other knobs as ``changes`` set them); None where the
    engine refuses that value (the curve breaks there). Components in table order, then ``"total"``.

    No notebook calls it or reaches it.
    """
    results = [outcome(raw, {**changes, symbol: value}) for value in values]
    names = list(dict.fromkeys(c for r in results if not isinstance(r, str) for c in r.components))
    curves: dict[str, list[int | None]] = {
        name: [None if isinstance(r, str) else r.components.get(name, 0) for r in results] for name in names}
    curves["total"] = [None if isinstance(r, str) else r.total for r in results]
    return curves


def sweep_png(curves: Mapping[str, list[int | None]], symbol: str, values: list[int], title: str) -> bytes:
    """:func:`sweep`'s curves, one per component (the series' colours), as PNG bytes.

    No notebook calls it or reaches it.
    """
    from matplotlib.figure import Figure

    from .plots import COLOURS

    figure = Figure(figsize=(8, 4.5), layout="constrained")
    ax = figure.subplots()
    for name, counts in curves.items():
        points = [(v, c) for v, c in zip(values, counts) if c is not None]
        if points:
            ax.plot(*zip(*points), marker="o", label=name, color=COLOURS.get(name, "#333333" if name == "total" else None))
    ax.set_xlabel(symbol)
    ax.set_ylabel("parameters")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(frameon=False, fontsize=8)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=80, metadata={"Software": None})
    return buffer.getvalue()


def sweep_values(start: int, stop: int, steps: int) -> list[int]:
    """``steps`` integers from ``start`` to ``stop`` (both included, evenly spaced, repeats dropped); refused in one line
    where the range is empty.

    No notebook calls it or reaches it.
    """
    if steps < 2 or start < 0 or stop <= start:
        raise ConfigError("sweep", f"needs 0 <= from < to and at least 2 steps, got {start}..{stop} in {steps}")
    return list(dict.fromkeys(start + (stop - start) * i // (steps - 1) for i in range(steps)))


# --- the widgets -------------------------------------------------------------------------------------------------------

# --- will it fit? The peak of a training step, by phase, and the verdict on a GPU ---------------------

FIT_METHODS = ("lora", "qlora", "full")
FIT_GPU = "H100-SXM"


def fit(raw: Mapping[str, Any], changes: Mapping[str, int] | None = None, batch: int = DEFAULT_B,
        seq_len: int = DEFAULT_S, method: str = "lora", checkpointing: str = "none", attn: str = "sdpa",
        autocast: str = "none", weight_dtype: str = "bf16", rank: int = 16, gpu: str = FIT_GPU,
        name: str = "config") -> tuple[Any, dict[str, Any]] | str:
    """The closed-form peak of one training step of ``raw`` (knobs ``changes`` set) and the verdict on ``gpu``, or the
    engine's one-line message where it has no answer (a family with no tape of its step: ``--simulate`` runs it).

    No notebook calls it or reaches it.
    """
    from . import peak

    try:
        for key, value in (("B", batch), ("S", seq_len), ("rank", rank)):
            if not isinstance(value, int) or value < 1:
                raise ConfigError(key, f"must be a positive integer, got {value!r}")
        config = parse_config(edited(raw, changes or {}), name=name)
        config.check_runs(attn=attn)
        result = peak.training_peak(peak.Step(config, method, batch, seq_len, checkpointing, weight_dtype, autocast,
                                              attn, "adamw", rank))
        return result, peak.fits(result)[gpu]
    except ConfigError as error:
        return str(error)


def fit_html(result: Any, verdict: Mapping[str, Any], gpu: str) -> str:
    """The peak's phases by part as an HTML table, the peak phase marked, and the verdict on ``gpu`` (the browser test
    reads ``explore-fit``).

    No notebook calls it or reaches it.
    """
    names = list(result.phases)
    parts = list(dict.fromkeys(p for phase in result.phases.values() for p in phase))
    head = "<tr><th>part</th>" + "".join(f"<th>{html.escape(n)}</th>" for n in names) + "</tr>"
    rows = []
    for part in parts:
        cells = "".join(f"<td style='text-align:right'>{_n(result.phases[n][part]) if part in result.phases[n] else ''}"
                        "</td>" for n in names)
        rows.append(f"<tr><td>{html.escape(part)}</td>{cells}</tr>")
    totals = result.phase_totals()
    rows.append("<tr><td><b>total</b></td>" + "".join(
        f"<td style='text-align:right'><b>{_n(totals[n])}{' *' if n == result.peak_phase else ''}</b></td>"
        for n in names) + "</tr>")
    word = {"yes": "fits", "tight": "is tight on", "no": "does not fit"}[verdict["fits"]]
    line = (f"peak {_bytes(result.peak_bytes)} in the {html.escape(result.peak_phase)}; it "
            f"<span class='explore-fit'>{word}</span> {html.escape(gpu)}: {_bytes(verdict['cuda_memory'])} as CUDA "
            f"reports it, headroom {_bytes(verdict['headroom_bytes'])} (allocator reserve and CUDA context not in the "
            "peak)")
    return f"{line}<table class='explore-fit-table'>{head}{''.join(rows)}</table>"


def explore(model: str = "bert-base-uncased") -> Any:
    """The explorer app (ipywidgets): a preset menu of every model in ``data/models/``, a field per size its family
    reads, dtype, B and S; every change recomputes the component table, its picture, FLOPs and bytes from the engine.
    A file upload makes any ``config.json`` of a taught family the current model (appended to the menu as
    ``uploaded: <file name>``). An invalid value or file shows the engine's one-line message. A second tab compares
    two presets side by side; a third sweeps one knob of the first tab's model across a range, each component as a
    curve.

    No notebook calls it or reaches it. ``make explorer`` serves it with Voilà.
    """
    import ipywidgets as w

    names = model_names()
    preset = w.Dropdown(options=names, value=model, description="preset")
    preset.add_class("explore-preset")
    dtype = w.Dropdown(options=list(DTYPE_BITS), value=DEFAULT_DTYPE, description="dtype")
    batch = w.IntText(value=DEFAULT_B, description="B")
    seq_len = w.IntText(value=DEFAULT_S, description="S")
    for widget, key in ((dtype, "dtype"), (batch, "B"), (seq_len, "S")):
        widget.add_class(f"explore-knob-{key}")
    fields = w.VBox()
    message = w.HTML()
    message.add_class("explore-message")
    summary = w.HTML()
    summary.add_class("explore-summary")
    table = w.HTML()
    picture = w.Image(format="png")
    upload = w.FileUpload(accept=".json,application/json", multiple=False, description="upload a config.json")
    upload.add_class("explore-upload")
    uploads: dict[str, dict[str, Any]] = {}  # preset label -> raw config of an uploaded file
    state: dict[str, Any] = {"raw": raw_config(model), "changes": {}, "busy": False}

    def source(label: str) -> dict[str, Any]:
        return copy.deepcopy(uploads[label]) if label in uploads else raw_config(label)

    def redraw(*_: Any) -> None:
        result = outcome(state["raw"], state["changes"], batch.value, seq_len.value, dtype.value, preset.value)
        if isinstance(result, str):
            message.value = error_html(result)
            return
        message.value = ""
        summary.value = summary_html(result)
        table.value = table_html(result)
        picture.value = picture_png(result)
        # derived sizes follow (d_k = H/A after a change of H), without counting as an edit
        state["busy"] = True
        try:
            current = {knob.symbol: knob.value for knob in knobs(edited(state["raw"], state["changes"]))}
            for field in fields.children:
                if field.description in current and field.description not in state["changes"]:
                    field.value = current[field.description]
        finally:
            state["busy"] = False

    def on_field(change: Mapping[str, Any]) -> None:
        if state["busy"]:
            return
        state["changes"][change["owner"].description] = change["new"]
        redraw()

    def load(*_: Any) -> None:
        state["raw"], state["changes"] = source(preset.value), {}
        children = []
        for knob in knobs(state["raw"]):
            field = w.IntText(value=knob.value, description=knob.symbol, tooltip=".".join(knob.path))
            field.add_class(f"explore-knob-{knob.symbol}")
            field.observe(on_field, names="value")
            children.append(field)
        fields.children = tuple(children)
        redraw()

    def on_upload(change: Mapping[str, Any]) -> None:
        if not change["new"]:
            return
        file = change["new"][0]
        upload.value = ()  # cleared, so that the same file uploaded again (edited) is read again
        try:
            raw = uploaded(bytes(file["content"]), file["name"])
        except ConfigError as error:
            message.value = error_html(str(error))
            return
        label = UPLOADED + file["name"]
        uploads[label] = raw
        if label not in preset.options:
            preset.options = [*preset.options, label]  # keeps the current value; load() runs once, below
        if preset.value == label:
            load()
        else:
            preset.value = label

    preset.observe(load, names="value")
    upload.observe(on_upload, names="value")
    for widget in (dtype, batch, seq_len):
        widget.observe(redraw, names="value")
    load()

    left = w.Dropdown(options=names, value="bert-base-uncased" if "bert-base-uncased" in names else names[0],
                      description="left")
    right = w.Dropdown(options=names, value="modernbert-base" if "modernbert-base" in names else names[-1],
                       description="right")
    left.add_class("explore-left")
    right.add_class("explore-right")
    compared = w.HTML()
    compared.add_class("explore-compared")

    def recompare(*_: Any) -> None:
        results = [outcome(raw_config(side.value), name=side.value) for side in (left, right)]
        errors = [r for r in results if isinstance(r, str)]
        compared.value = error_html(errors[0]) if errors else compare_html(*results)  # type: ignore[arg-type]

    left.observe(recompare, names="value")
    right.observe(recompare, names="value")
    recompare()

    # the sweep: one knob of the explore tab's model across a range, the other knobs as set there
    swept = w.Dropdown(description="knob")
    swept.add_class("explore-sweep-knob")
    start, stop, steps = (w.IntText(description=d, value=v) for d, v in (("from", 1), ("to", 48), ("steps", 12)))
    go = w.Button(description="sweep")
    go.add_class("explore-sweep-go")
    sweep_message = w.HTML()
    sweep_message.add_class("explore-sweep-message")
    sweep_picture = w.Image(format="png")

    def sweep_knobs(*_: Any) -> None:
        swept.options = [knob.symbol for knob in knobs(state["raw"])]
        swept.value = "L" if "L" in swept.options else swept.options[0]

    def run_sweep(*_: Any) -> None:
        try:
            values = sweep_values(start.value, stop.value, steps.value)
        except ConfigError as error:
            sweep_message.value = error_html(str(error))
            return
        changes = {k: v for k, v in state["changes"].items() if k != swept.value}
        curves = sweep(state["raw"], changes, swept.value, values)
        refused = sum(c is None for c in curves["total"])
        sweep_message.value = (f"{preset.value}: {swept.value} from {values[0]} to {values[-1]}"
                               + (f"; {refused} of {len(values)} values refused by the engine" if refused else ""))
        if refused < len(values):
            sweep_picture.value = sweep_png(curves, swept.value, values, f"{preset.value}: each component against "
                                                                         f"{swept.value}")

    preset.observe(sweep_knobs, names="value")
    go.on_click(run_sweep)
    sweep_knobs()

    # will it fit: the explore tab's model, B and S; a training method and a GPU
    from .budget import gpu_table

    method = w.Dropdown(options=list(FIT_METHODS), value="lora", description="method")
    ckpt = w.Dropdown(options=["none", "full"], value="none", description="checkpointing")
    attention = w.Dropdown(options=["sdpa", "eager"], value="sdpa", description="attention")
    amp = w.Dropdown(options=["none", "bf16"], value="none", description="autocast")
    weights = w.Dropdown(options=["bf16", "fp32"], value="bf16", description="weights")
    rank = w.IntText(value=16, description="LoRA rank")
    gpu = w.Dropdown(options=list(gpu_table()), value=FIT_GPU, description="GPU")
    for widget, key in ((method, "method"), (ckpt, "checkpointing"), (attention, "attn"), (amp, "autocast"),
                        (weights, "weights"), (rank, "rank"), (gpu, "gpu")):
        widget.add_class(f"explore-fit-{key}")
    fitted = w.HTML()
    fitted.add_class("explore-fitted")

    def refit(*_: Any) -> None:
        result = fit(state["raw"], state["changes"], batch.value, seq_len.value, method.value, ckpt.value,
                     attention.value, amp.value, weights.value, rank.value, gpu.value, preset.value)
        fitted.value = error_html(result) if isinstance(result, str) else fit_html(*result, gpu.value)

    for widget in (method, ckpt, attention, amp, weights, rank, gpu, preset, batch, seq_len):
        widget.observe(refit, names="value")
    refit()
    fit_pane = w.HBox([w.VBox([method, ckpt, attention, amp, weights, rank, gpu]), fitted])

    knobs_pane = w.VBox([preset, upload, fields, dtype, batch, seq_len], layout=w.Layout(min_width="320px"))
    explore_pane = w.HBox([knobs_pane, w.VBox([message, summary, table, picture])])
    sweep_pane = w.VBox([w.HBox([swept, start, stop, steps, go]), sweep_message, sweep_picture])
    tabs = w.Tab(children=[explore_pane, w.VBox([w.HBox([left, right]), compared]), sweep_pane, fit_pane])
    for i, title in enumerate(("explore", "compare", "sweep", "will it fit")):
        tabs.set_title(i, title)
    return tabs
