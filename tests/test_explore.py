"""The explorer's pure functions (helpers/explorer.py), without a browser: every figure is the engine's."""

from __future__ import annotations

import json
import re
from datetime import datetime
from pathlib import Path

import pytest

from helpers import ConfigError, count_model, load_config, parse_config
from helpers.config import raw_config
from helpers.explorer import (UPLOADED, compare_rows, compute, edited, explore, knobs, outcome, picture_png,
                             summary_html, sweep, sweep_png, sweep_values, uploaded)
from helpers.flops import forward_flops
from helpers.budget import chinchilla_tokens, training_flops_per_token
from helpers.memory import ADAMW_MIXED, kv_cache_bytes, training_state, weight_bytes

from .conftest import MODELS


@pytest.mark.parametrize("name", MODELS)
def test_every_preset_gives_the_engines_figures(name):
    out = compute(raw_config(name), batch=2, seq_len=64, dtype="fp16", name=name)
    config = load_config(name)
    result = count_model(config)
    assert (out.total, out.active, out.components) == (result.total, result.active, result.components)
    assert out.weights == weight_bytes(config, "fp16")
    if isinstance(out.forward, int):
        assert out.forward == forward_flops(config, 2, 64).forward
    if isinstance(out.kv_cache, int) or out.kv_cache is None:
        assert out.kv_cache == kv_cache_bytes(config, 2, 64, "fp16")
    assert f"<span class='explore-total'>{result.total:,}</span>" in summary_html(out)
    assert out.training_state == sum(part.bytes for part in training_state(config, ADAMW_MIXED))
    assert out.tokens == chinchilla_tokens(config)
    if isinstance(out.training_run, int):  # decoders: exact training FLOPs for D tokens at S
        assert out.training_run == training_flops_per_token(config, 64) * out.tokens
        assert f"<span class='explore-run'>{out.training_run:,}</span>" in summary_html(out)


@pytest.mark.parametrize("name", MODELS)
def test_each_knob_sets_its_size(name):
    """Every knob shown writes the size the engine then reads; its shown value is the parsed one."""
    raw = raw_config(name)
    shown = knobs(raw)
    assert shown and {k.symbol: k.value for k in shown}.items() <= dict(parse_config(raw).sizes).items()
    assert outcome(raw, {k.symbol: k.value for k in shown}).total == count_model(load_config(name)).total
    for knob in shown:
        if knob.symbol in ("L", "P", "V"):  # sizes no check ties to another (but the padding row: V)
            changed = edited(raw, {knob.symbol: knob.value + 1})
            out = outcome(raw, {knob.symbol: knob.value + 1})
            if isinstance(out, str):  # refused as the engine refuses it (gpt-oss: layer_types lists L layers)
                with pytest.raises(ConfigError, match="^" + out.split(":")[0]):
                    parse_config(changed)
                assert "\n" not in out
                continue
            assert parse_config(changed).sizes[knob.symbol] == knob.value + 1, knob
            assert out.total == count_model(parse_config(changed)).total


def test_a_changed_knob_moves_the_total_by_one_layer():
    raw = raw_config("bert-base-uncased")
    one, two = (outcome(raw, {"L": n}).total for n in (12, 13))
    assert two - one == 7_087_872  # one BERT-base layer


@pytest.mark.parametrize("changes, message", [
    ({"A": 7}, "num_attention_heads: the heads split the hidden size: hidden_size = 768 is not divisible by "
               "num_attention_heads = 7"),
    ({"H": 0}, "hidden_size: must be at least 1, got 0"),
    ({"Q": 3}, "Q: is not a size this family reads"),
])
def test_an_invalid_knob_gives_the_engines_one_line_message(changes, message):
    result = outcome(raw_config("bert-base-uncased"), changes)
    assert isinstance(result, str) and "\n" not in result and result.startswith(message)
    if "Q" not in changes:
        with pytest.raises(ConfigError) as error:
            parse_config(edited(raw_config("bert-base-uncased"), changes))
        assert str(error.value) == result


@pytest.mark.parametrize("batch, seq_len, dtype, message", [
    (0, 8, "fp16", "B: must be a positive integer, got 0"),
    (1, 0, "fp16", "S: must be a positive integer, got 0"),
    (1, 8, "fp8", "dtype: 'fp8' is not one of"),
])
def test_invalid_batch_length_or_dtype(batch, seq_len, dtype, message):
    assert outcome(raw_config("gpt2"), batch=batch, seq_len=seq_len, dtype=dtype).startswith(message)


def test_a_model_that_cannot_run_still_counts_and_says_why():
    """LLaMA with key/value heads that do not divide the heads: transformers builds it (count), cannot run it."""
    out = outcome(raw_config("llama-7b"), {"A_kv": 3})
    assert isinstance(out, str) or isinstance(out.forward, str)
    if not isinstance(out, str):
        assert out.total == count_model(parse_config(edited(raw_config("llama-7b"), {"A_kv": 3}))).total
        assert "\n" not in out.forward


def test_compare_puts_components_side_by_side():
    left, right = (compute(raw_config(n), name=n) for n in ("bert-base-uncased", "modernbert-base"))
    rows = compare_rows(left, right)
    assert rows[-1] == ("total", count_model(load_config("bert-base-uncased")).total,
                        count_model(load_config("modernbert-base")).total)
    assert {name for name, _, _ in rows[:-1]} == {*left.components, *right.components}
    moe = compare_rows(compute(raw_config("mixtral-8x7b-v0.1")), compute(raw_config("mistral-7b-v0.1")))
    assert moe[-1][0] == "active per token"


def test_the_picture_is_a_png():
    assert picture_png(compute(raw_config("gpt2"), name="gpt2")).startswith(b"\x89PNG")


def test_the_app_builds_and_recomputes():
    """The widget layer without a browser: a preset, a changed field, an invalid one."""
    app = explore("gpt2")
    pane = app.children[0]
    preset, _, fields = pane.children[0].children[:3]
    message, summary = pane.children[1].children[:2]
    assert f"{count_model(load_config('gpt2')).total:,}" in summary.value
    field = {f.description: f for f in fields.children}
    field["H"].value = 960
    assert field["I"].value == 4 * 960  # a derived size follows (GPT-2's n_inner: 4H)
    preset.value = "bert-base-uncased"
    field = {f.description: f for f in fields.children}
    field["L"].value = 13
    assert f"{outcome(raw_config('bert-base-uncased'), {'L': 13}).total:,}" in summary.value
    field["A"].value = 7
    assert "hidden_size = 768 is not divisible by num_attention_heads = 7" in message.value
    assert "Traceback" not in message.value
    field["A"].value = 12
    assert message.value == ""
    assert field["L"].value == 13


@pytest.mark.parametrize("name, key", [("gpt-oss-20b", "layer_types"), ("smollm3-3b", "no_rope_layers")])
def test_per_layer_lists_follow_the_layers(name, key):
    """gpt-oss's layer_types (and SmolLM3's no_rope_layers) list L layers: a new L repeats their pattern."""
    raw = raw_config(name)
    old = raw[key]
    changed = edited(raw, {"L": len(old) + 3})
    assert changed[key] == old + old[:3]
    assert edited(raw, {"L": 2})[key] == old[:2]
    assert parse_config(changed).sizes["L"] == len(old) + 3
    assert raw[key] == old  # the preset is left as it was


def test_sweep_gives_each_components_count():
    raw = raw_config("bert-base-uncased")
    values = sweep_values(1, 24, 4)
    assert values == [1, 8, 16, 24]
    curves = sweep(raw, {}, "L", values)
    for i, layers in enumerate(values):
        result = count_model(parse_config(edited(raw, {"L": layers})))
        assert {c: curves[c][i] for c in result.components} == result.components
        assert curves["total"][i] == result.total
    heads = sweep(raw, {}, "A", [7, 12])  # 7 heads do not split 768: refused, the curve breaks there
    assert heads["total"] == [None, count_model(load_config("bert-base-uncased")).total]
    assert sweep_png(curves, "L", values, "t").startswith(b"\x89PNG")
    with pytest.raises(ConfigError, match="^sweep: needs"):
        sweep_values(5, 5, 3)


def test_the_sweep_tab_draws():
    app = explore("gpt2")
    controls, message, picture = app.children[2].children
    knob, start, stop, steps, go = controls.children
    assert knob.value == "L"
    start.value, stop.value, steps.value = 1, 4, 4
    go.click()
    assert message.value == "gpt2: L from 1 to 4" and bytes(picture.value).startswith(b"\x89PNG")
    start.value = 9
    go.click()
    assert "sweep: needs" in message.value


def test_an_uploaded_config_is_its_raw_config():
    raw = {**raw_config("llama-7b"), "num_hidden_layers": 3}
    assert uploaded(json.dumps(raw).encode(), "mine.json") == raw
    assert uploaded(b"\xef\xbb\xbf" + json.dumps(raw).encode(), "bom.json") == raw  # a byte-order mark is read past


@pytest.mark.parametrize("content, message", [
    (b"{oops", "CONFIG: up.json is not valid JSON (line 1, column 2: Expecting property name enclosed in double quotes)"),
    (b"\xff\xfe{}", "CONFIG: up.json is not UTF-8 text (byte 0)"),
    (b"[1, 2]", "config: must be a JSON object, got a JSON list"),
    (b"{}", "model_type: is missing; supported: bert,"),
    (b'{"model_type": "bert", "hidden_size": 768, "num_attention_heads": 7}',
     "num_attention_heads: the heads split the hidden size: hidden_size = 768 is not divisible by num_attention_heads = 7"),
    (b'{"model_type": "mamba2"}', 'model_type: "mamba2" has no family taught here, and the explorer needs one; '
                                  "`python -m helpers count up.json` counts it by transformers"),
])
def test_an_uploaded_file_the_explorer_cannot_take_gives_one_line(content, message):
    with pytest.raises(ConfigError) as error:
        uploaded(content, "up.json")
    assert str(error.value).startswith(message) and "\n" not in str(error.value)
    if content.startswith(b'{"model_type": "bert"'):  # the engine's own message, as it gives it
        with pytest.raises(ConfigError) as engine:
            parse_config(json.loads(content))
        assert str(engine.value) == str(error.value)


def test_the_app_takes_an_upload():
    """The upload widget without a browser: a valid file becomes the current model, a bad one says why."""
    app = explore("gpt2")
    pane = app.children[0]
    preset, upload, fields = pane.children[0].children[:3]
    message, summary = pane.children[1].children[:2]

    def send(name, content):
        upload.value = ({"name": name, "type": "application/json", "size": len(content), "content": memoryview(content),
                         "last_modified": datetime(2026, 1, 1)},)

    raw = {**raw_config("llama-7b"), "num_hidden_layers": 3}
    send("mine.json", json.dumps(raw).encode())
    assert preset.value == UPLOADED + "mine.json" and preset.options[-1] == preset.value
    assert f"<span class='explore-total'>{count_model(parse_config(raw)).total:,}</span>" in summary.value
    assert {f.description: f.value for f in fields.children}["L"] == 3
    assert upload.value == ()  # cleared: the same file can be sent again
    send("bad.json", b"{oops")
    assert "CONFIG: bad.json is not valid JSON" in message.value and preset.value == UPLOADED + "mine.json"
    send("mine.json", json.dumps({**raw, "num_hidden_layers": 4}).encode())  # the same name again: replaced
    assert preset.options.count(UPLOADED + "mine.json") == 1 and message.value == ""
    assert {f.description: f.value for f in fields.children}["L"] == 4


def test_every_notebook_from_01_invites_to_the_explorer_on_its_model():
    """Each notebook from 01 on ends its Summary with a one-line invitation to the explorer preset on its model."""
    from helpers.config import model_names
    notebooks = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("[0-9][0-9]_*.ipynb"))[1:]
    assert notebooks
    for path in notebooks:
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        start = next(i for i, c in enumerate(cells) if "".join(c["source"]).lstrip().startswith("## Summary"))
        section = []
        for cell in cells[start:]:
            text = "".join(cell["source"])
            if section and text.lstrip().startswith("## "):
                break
            section.append(text)
        found = re.findall(r'helpers\.explore\(model="([^"]+)"\)', "\n".join(section))
        assert len(found) == 1 and found[0] in model_names(), path.name


def test_will_it_fit_gives_the_engines_peak_and_verdict():
    """The fourth tab: the closed form's peak of a step of the explore tab's model, by phase, and the verdict."""
    from helpers.explorer import fit, fit_html
    from helpers.peak import Step, fits, training_peak

    result, verdict = fit(raw_config("llama-7b"), {}, 1, 2048, "lora", "full", rank=16, gpu="RTX-4090")
    expected = training_peak(Step(load_config("llama-7b"), "lora", 1, 2048, "full", "bf16", "none", "sdpa", "adamw", 16))
    assert result.peak_bytes == expected.peak_bytes and verdict == fits(expected)["RTX-4090"]
    page = fit_html(result, verdict, "RTX-4090")
    assert "explore-fit" in page and f"{expected.peak_bytes:,}" in page
    # a knob that changes the model changes the peak; one the engine refuses gives its one-line message
    deeper, _ = fit(raw_config("llama-7b"), {"L": 40}, 1, 2048, "lora", "full", rank=16)
    assert deeper.peak_bytes > result.peak_bytes
    assert fit(raw_config("llama-7b"), {"A": 7}).startswith("num_attention_heads: ")
    assert fit(raw_config("mixtral-8x7b-v0.1"), {}).startswith("model_type: ")  # no tape: --simulate is named
    assert "--simulate" in fit(raw_config("mixtral-8x7b-v0.1"), {})


def test_the_app_has_a_will_it_fit_tab_that_follows_its_knobs():
    app = explore("llama-7b")
    assert app.get_title(3) == "will it fit"
    method, ckpt, attention, autocast, weights, rank, gpu = app.children[3].children[0].children
    fitted = app.children[3].children[1]
    assert "explore-fit" in fitted.value
    before = fitted.value
    ckpt.value = "full"
    assert fitted.value != before and "Traceback" not in fitted.value
    gpu.value = "RTX-4090"
    assert "RTX-4090" in fitted.value
