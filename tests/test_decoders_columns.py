"""helpers.plots.decoders (notebook 07): the boxes of the GPT-2 / LLaMA picture are the engine's table."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from helpers import count_model, load_config, param_table, parse_config, select, total  # noqa: E402
from helpers.plots import decoder_columns, gpt2_llama_blocks  # noqa: E402

from .strategies import gpt2_configs, llama_configs  # noqa: E402


@given(st.one_of(gpt2_configs(), llama_configs()))
@settings(max_examples=100, deadline=None)
def test_the_boxes_add_up_to_the_model(raw):
    c = parse_config(raw)
    params = param_table(c)
    boxes = decoder_columns(params)
    assert len(boxes) == 8
    inside = sum(b.count for b in boxes[2:6])  # one layer: norm, attention, norm, feed-forward
    assert inside == total(select(params, layer=0))
    assert sum(b.count for b in boxes) - inside + c["L"] * inside == count_model(c).total
    tied = c.flags["tie_word_embeddings"]
    assert (boxes[7].count == 0) == tied  # a tied head has no tensor of its own
    assert (boxes[1].count == 0) == (c.model_type == "llama")  # rotary: no position table


def test_the_picture_draws_both_columns():
    gpt2, llama7 = load_config("gpt2"), load_config("llama-7b")
    ax = gpt2_llama_blocks(param_table(gpt2), param_table(llama7), ("GPT-2", "LLaMA"), gqa=load_config("llama-2-70b"))
    texts = [t.get_text() for t in ax.texts]
    assert "× L = 12" in texts and "× L = 32" in texts
    assert any("A_kv = 8" in t and "A = 64" in t for t in texts)
    assert any("38,597,376" in t for t in texts) and any("135,266,304" in t for t in texts)
    plt.close(ax.figure)


def test_the_head_box_says_tied_or_untied():
    for name in ("gpt2", "llama-7b"):
        raw = {"gpt2": {"model_type": "gpt2", "vocab_size": 10, "n_embd": 4, "n_head": 2, "n_layer": 1,
                        "n_positions": 8},
               "llama-7b": {"model_type": "llama", "vocab_size": 10, "hidden_size": 4, "num_attention_heads": 2,
                            "num_hidden_layers": 1, "intermediate_size": 6}}[name]
        for tied in (True, False):
            head = decoder_columns(param_table(parse_config({**raw, "tie_word_embeddings": tied})))[7]
            assert ("(tied)" in head.label) == tied and ("untied" in head.label) == (not tied)


def test_attention_biases_are_named_when_present():
    raw = {"model_type": "llama", "vocab_size": 10, "hidden_size": 4, "num_attention_heads": 2,
           "num_hidden_layers": 1, "intermediate_size": 6}
    for bias in (True, False):
        attention = decoder_columns(param_table(parse_config({**raw, "attention_bias": bias})))[3]
        assert ("no biases" in attention.label) == (not bias)
