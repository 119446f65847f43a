"""The pictures of notebook 11 draw the engine's figures: the cache curves are kv_cache_bytes, the columns the rows."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from helpers import load_config, param_table, select, total, under  # noqa: E402
from helpers.memory import kv_cache_bytes  # noqa: E402
from helpers.plots import (count_bridge, kv_cache_curves, kv_cache_series, layer_columns, layer_kinds,  # noqa: E402
                           layer_strips, patch_grids)

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


def test_layer_kinds_are_the_engines_layers():
    """Each layer's kind, against the engine's counts: windows, chunks, NoPE, linear layers, mixtures."""
    gemma, scout, maverick = (load_config(n) for n in ("gemma-3-27b-it", "llama-4-scout-17b-16e-text",
                                                       "llama-4-maverick-17b-128e-text"))
    nxt, glm, smol = load_config("qwen3-next-80b-a3b"), load_config("glm-4.5"), load_config("smollm3-3b")
    assert layer_kinds(gemma)["attention"].count("windowed, RoPE") == gemma["L_w"] == 52
    assert [i for i, k in enumerate(layer_kinds(gemma)["attention"]) if k == "full, RoPE"] == list(range(5, 62, 6))
    assert layer_kinds(scout)["attention"].count("chunked, RoPE") == scout["L_c"] == 36
    assert [i for i, k in enumerate(layer_kinds(smol)["attention"]) if k == "full, NoPE"] == list(range(3, 36, 4))
    assert layer_kinds(nxt)["attention"].count("linear") == nxt["L_l"] == 36
    assert layer_kinds(maverick)["feed-forward"] == ["dense", "mixture of experts"] * 24
    assert layer_kinds(glm)["feed-forward"] == ["dense"] * 3 + ["mixture of experts"] * 89
    assert set(layer_kinds(load_config("gemma-3-1b-it"))["feed-forward"]) == {"dense"}


def test_strips_one_cell_per_layer():
    rows = {"a": ["full, RoPE", "full, NoPE"] * 3, "b": ["dense"] * 4}
    ax = layer_strips(rows, title="t")
    assert len(ax.patches) == 10 and [t.get_text() for t in ax.get_legend().get_texts()] == ["dense", "full, RoPE",
                                                                                          "full, NoPE"]
    plt.close("all")


def test_patch_grids_count_patches_and_tokens():
    axes = patch_grids({"Gemma 3": (896, 14, 4), "Llama 4": (336, 14, 2)}, title="t")
    assert "64 × 64 = 4,096 patches" in axes[0].get_title() and "16 × 16 = 256 tokens" in axes[0].get_title()
    assert "12 × 12 = 144 tokens" in axes[1].get_title()
    with pytest.raises(ValueError, match="whole patches"):
        patch_grids({"odd": (900, 14, 2)}, title="t")
    plt.close("all")


def test_bridge_lands_where_the_steps_add_up():
    ax = count_bridge([("built", 352_797_814_784), ("+ MTP", 3_988_069_632), ("− tables", -1_551_892_480)],
                      stated="355B", title="t")
    assert "355,233,991,936" in [t.get_text().strip() for t in ax.texts]
    low, high = ax.patches[-1].get_x(), ax.patches[-1].get_x() + ax.patches[-1].get_width()  # the shaded band
    assert (low, high) == (354.5e9, 355.5e9)
    with pytest.raises(ValueError, match="not a figure"):
        count_bridge([("x", 1)], stated="about 355", title="t")
    plt.close("all")
