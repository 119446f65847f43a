"""The pictures of 02_multi_head_attention say what the engine counts: labels and bar heights from the table."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from helpers import ATTENTION, load_config, param_table, select, total  # noqa: E402
from helpers.lessons.attention import head_slices, with_heads  # noqa: E402
from helpers.plots import attention_flow, head_split_bars, qkv_heatmaps  # noqa: E402
from helpers.plots.diagrams import modules  # noqa: E402


def texts(ax) -> str:
    return "\n".join(t.get_text() for t in ax.texts)


@pytest.mark.parametrize("name", ["bert-base-uncased", "bert-large-uncased", "llama-2-70b"])
def test_attention_flow_labels_every_projection_with_its_count(name):
    c = load_config(name)
    rows = select(param_table(c), component=ATTENTION, layer=0)
    fig, ax = plt.subplots()
    try:
        attention_flow(rows, c["d_k"], ax=ax)
        shown = texts(ax)
        for tensors in modules(rows).values():
            assert f"{total(tensors):,}" in shown
        assert f"= {total(rows):,}" in shown
        assert "0 parameters" in shown
        if name == "llama-2-70b":  # grouped-query: fewer key/value heads than query heads
            assert f"{c['A']} heads" in shown and f"{c['A_kv']} heads" in shown
    finally:
        plt.close(fig)


def test_attention_flow_refuses_a_fused_projection():
    c = load_config("gpt2")  # c_attn holds Q, K and V in one Conv1D, stored in × out
    with pytest.raises(ValueError, match="separate projections"):
        attention_flow(select(param_table(c), component=ATTENTION, layer=0), c["d_k"], ax=plt.subplots()[1])
    plt.close("all")


def test_head_split_bars_stack_to_the_layer_count():
    c = load_config("bert-base-uncased")
    splits = []
    for a in (1, 4, 12, 64):
        ca = with_heads(c, a)
        splits.append((a, ca["d_k"], total(head_slices(ca, 0)), total(select(param_table(ca), component=ATTENTION, layer=0))))
    fig, ax = plt.subplots()
    try:
        head_split_bars(splits, ax=ax)
        for x, (a, _, one, layer) in enumerate(splits):
            patches = [p for p in ax.patches if abs(p.get_x() + p.get_width() / 2 - x) < 1e-9]
            assert len(patches) == a + 1  # A heads and the output bias
            assert sum(p.get_height() for p in patches) == pytest.approx(layer, abs=1e-6)
            assert f"{one:,}" in texts(ax)
        a, _, one, layer = splits[-1]
        assert f"b_O: {layer - a * one:,}" in texts(ax) and layer - a * one == c["H"]  # the sliver, labelled
    finally:
        plt.close(fig)


def test_qkv_heatmaps_draw_the_four_matrices_on_one_scale():
    rng = np.random.default_rng(0)
    mats = [rng.normal(size=(3, 5)) for _ in range(4)]
    axes = qkv_heatmaps(*mats)
    try:
        assert len(axes) == 4
        limits = {ax.images[0].get_clim() for ax in axes}
        assert len(limits) == 1
        for ax, m in zip(axes, mats):
            assert np.array_equal(ax.images[0].get_array(), m)
    finally:
        plt.close(axes[0].figure)
