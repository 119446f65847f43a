"""Notebook 09's mixture-of-experts helpers and pictures: one layer sorted into router, routed and shared experts
(any family's rows, shared experts included, as DeepSeek-V3 will need), the FlopCounterMode trap in plain torch
(grouped_mm hides the experts), and the pictures counting what the table counts."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from helpers import FEED_FORWARD, Param, count_model, load_config, param_table, select, total  # noqa: E402
from helpers.lessons.moe import moe_layer  # noqa: E402
from helpers.plots import (count_parts_bars, design_choice_chart, encoder_decoder_columns,  # noqa: E402
                           encoder_decoder_diagram, moe_layer_diagram)
from helpers.lessons.vaswani import Assumptions, table_3, transformer_2017  # noqa: E402

H, E, I = 64, 16, 32
DEEPSEEK_LIKE = [  # a layer as DeepSeek-V3 names one: router, routed experts fused, one shared expert (dense)
    Param.matrix("model.layers.3.mlp.gate.weight", (E, H), FEED_FORWARD, "E*H"),
    Param.experts("model.layers.3.mlp.experts.gate_up_proj", (E, 2 * I, H), FEED_FORWARD, "2*E*I*H"),
    Param.experts("model.layers.3.mlp.experts.down_proj", (E, H, I), FEED_FORWARD, "E*H*I"),
    Param.matrix("model.layers.3.mlp.shared_experts.gate_proj.weight", (I, H), FEED_FORWARD, "I*H"),
    Param.matrix("model.layers.3.mlp.shared_experts.up_proj.weight", (I, H), FEED_FORWARD, "I*H"),
    Param.matrix("model.layers.3.mlp.shared_experts.down_proj.weight", (H, I), FEED_FORWARD, "H*I"),
]


@pytest.mark.parametrize("name", ["mixtral-8x7b-v0.1", "qwen3-30b-a3b"])
def test_moe_layer_counts_what_the_table_counts(name):
    c = load_config(name)
    layer = moe_layer(select(param_table(c), layer=0))
    assert layer.E == c["E"] and layer.shared == () and [p.name.rsplit(".", 2)[-2] for p in layer.router] == ["gate"]
    assert layer.total == total(select(param_table(c), component=FEED_FORWARD, layer=0))
    result = count_model(c)
    assert result.total - result.active == c["L"] * (layer.total - layer.active(c["k"]))


def test_shared_experts_are_sorted_apart():
    layer = moe_layer(DEEPSEEK_LIKE)
    assert [p.name.split("mlp.")[1] for p in layer.router] == ["gate.weight"]
    assert len(layer.routed) == 2 and len(layer.shared) == 3
    assert layer.per_expert == 3 * H * I and layer.active(2) == E * H + 2 * 3 * H * I + 3 * H * I
    _, ax = plt.subplots()
    moe_layer_diagram(DEEPSEEK_LIKE, 2, (0, 9), ax=ax)  # the picture draws them (hatched, always used)
    plt.close("all")


def test_a_dense_layer_is_refused():
    with pytest.raises(ValueError, match="no routed experts"):
        moe_layer(select(param_table(load_config("llama-7b")), layer=0))
    with pytest.raises(ValueError, match="chosen"):
        moe_layer_diagram(DEEPSEEK_LIKE, 2, (0, 0))


def test_grouped_mm_hides_the_experts_from_flop_counter():
    torch = pytest.importorskip("torch")
    from helpers.flops import matmul_tokens
    from helpers.lessons.moe import counted_flops, grouped_experts_forward, tiny_moe_block, tiny_tokens
    from helpers.params import EXPERT, matmul_count

    tiny, block = tiny_moe_block(seed=0)
    x = tiny_tokens(tiny, 16)
    eager, eager_flops = counted_flops(block, x)
    grouped, grouped_flops = counted_flops(grouped_experts_forward, block, x)
    rows = select(param_table(tiny), component=FEED_FORWARD)
    router = sum(2 * matmul_tokens(p, tiny, 1, 16) * matmul_count(p) for p in rows if p.kind != EXPERT)
    experts = sum(2 * matmul_tokens(p, tiny, 1, 16) * matmul_count(p) for p in rows if p.kind == EXPERT)
    assert experts > 0 and eager_flops == router + experts  # the eager path: every routed token counted
    assert grouped_flops == router  # grouped_mm: not one expert FLOP
    assert torch.allclose(eager, grouped, atol=1e-5)
    _, again = counted_flops(block, tiny_tokens(tiny, 16, seed=2))
    assert again == eager_flops  # whatever the routing: each token meets exactly k experts


def test_encoder_decoder_columns_are_the_table():
    for row in table_3():
        for final in (False, True):
            params = transformer_2017(row, Assumptions(final_norms=final)).expand()
            encoder, decoder = encoder_decoder_columns(params)
            assert sum(b.count for b in encoder) == total(
                p for p in params if p.name.startswith(("transformer.encoder.layers.0.", "transformer.encoder.norm.")))
            assert sum(b.count for b in decoder) == total(
                p for p in params if p.name.startswith(("transformer.decoder.layers.0.", "transformer.decoder.norm.")))
            assert len(decoder) == 7 + final
    encoder_decoder_diagram(transformer_2017(table_3()[0]).expand())
    plt.close("all")


def test_charts_draw():
    from helpers.lessons.design import design_effects, design_features

    count_parts_bars({"a": {"x": 3, "y": 1}, "b": {"x": 1, "y": 1}}, "parts")
    left, right = design_choice_chart({"LLaMA": design_features(load_config("llama-7b"))}, design_effects())
    assert len(left.get_yticklabels()) == len(design_effects())
    plt.close("all")
