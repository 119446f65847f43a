"""The pictures of notebook 11 draw the engine's figures: the cache curves are kv_cache_bytes, the columns the rows."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from helpers import load_config, param_table, select, total, under  # noqa: E402
from helpers.memory import kv_cache_bytes  # noqa: E402
from helpers.plots import kv_cache_curves, kv_cache_series, layer_columns  # noqa: E402

LENGTHS = [100, 128, 129, 512, 4096, 131072]


def test_series_are_the_engines_bytes():
    models = {"full": load_config("olmo-2-1124-7b"), "windows": load_config("gpt-oss-20b"),
              "latent": load_config("deepseek-v3")}
    series = kv_cache_series(models, LENGTHS, "bf16")
    assert series == {k: [kv_cache_bytes(c, 1, S, "bf16") for S in LENGTHS] for k, c in models.items()}
    windows = series["windows"]
    assert windows[1] - windows[0] > windows[2] - windows[1]  # past the window, only the full layers grow


def test_curves_one_line_per_model_in_each_panel():
    models = {"a": load_config("smollm3-3b"), "b": load_config("gemma-3-1b-it")}
    left, right = kv_cache_curves(models, LENGTHS, "t", dtype="fp16")
    series = kv_cache_series(models, LENGTHS, "fp16")
    assert [line.get_label() for line in left.lines] == ["a", "b"] == [line.get_label() for line in right.lines]
    assert list(left.lines[1].get_ydata()) == [v / 2**30 for v in series["b"]]
    assert list(right.lines[0].get_ydata()) == [v / S / 2**10 for v, S in zip(series["a"], LENGTHS)]
    plt.close("all")


def test_an_encoder_has_no_cache_to_draw():
    with pytest.raises(ValueError, match="no decode cache"):
        kv_cache_series({"BERT": load_config("bert-base-uncased")}, LENGTHS)


def test_columns_count_the_rows():
    olmo = under(select(param_table(load_config("olmo-2-1124-7b")), layer=0), "model.layers.0.")
    boxes = {"attention": "self_attn.", "norm": "post_attention_layernorm", "mlp": "mlp.",
             "norm after": "post_feedforward_layernorm"}
    ax = layer_columns({"OLMo 2": (olmo, boxes)}, "t")
    shown = [t.get_text() for t in ax.texts]
    assert any(t.startswith("attention\n" + f"{total(p for p in olmo if p.name.startswith('self_attn.')):,}")
               for t in shown)
    with pytest.raises(ValueError, match="no tensor"):
        layer_columns({"OLMo 2": (olmo, {"input norm": "input_layernorm"})}, "t")
    plt.close("all")
