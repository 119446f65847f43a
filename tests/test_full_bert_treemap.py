"""The treemap of ``06_full_bert``: its layout gives every piece an area proportional to its count, and its
pieces are the engine's rows, each once."""

from __future__ import annotations

import itertools

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from helpers import count_model, load_config, model_names, param_table, total  # noqa: E402
from helpers.plots import parameter_treemap, squarify, treemap_parts
from helpers.plots.bert import _tensor_kind  # noqa: E402


def _overlap(a, b) -> float:
    (ax, ay, aw, ah), (bx, by, bw, bh) = a, b
    return max(0.0, min(ax + aw, bx + bw) - max(ax, bx)) * max(0.0, min(ay + ah, by + bh) - max(ay, by))


@given(st.lists(st.integers(min_value=0, max_value=10**9), min_size=1, max_size=30),
       st.floats(min_value=1, max_value=500), st.floats(min_value=1, max_value=500))
@settings(max_examples=200, deadline=None)
def test_squarify_tiles_the_rectangle_with_areas_proportional_to_the_values(values, width, height):
    rects = squarify(values, 10.0, 20.0, width, height)
    assert len(rects) == len(values)
    whole = sum(values)
    for (x, y, w, h), v in zip(rects, values):
        expected = width * height * v / whole if whole else 0.0
        assert w * h == pytest.approx(expected, rel=1e-9, abs=1e-9 * width * height)
        eps = 1e-6 * (width + height)  # a value 10⁸ times another leaves float error of that order
        assert 10.0 - eps <= x and x + w <= 10.0 + width + eps
        assert 20.0 - eps <= y and y + h <= 20.0 + height + eps
    for a, b in itertools.combinations(rects, 2):
        assert _overlap(a, b) <= 1e-9 * width * height


def test_squarify_is_squarified_and_refuses_negatives():
    # Bruls et al.'s example: six values on a 6 × 4 rectangle; no piece thinner than 1 : 3
    rects = squarify([6, 6, 4, 3, 2, 2, 1], 0, 0, 6, 4)
    assert all(max(w / h, h / w) < 3 for _, _, w, h in rects)
    with pytest.raises(ValueError):
        squarify([1, -1], 0, 0, 1, 1)
    assert squarify([0, 0], 0, 0, 2, 2) == [(0, 0, 0.0, 0.0)] * 2


@pytest.mark.parametrize("name", model_names())
def test_treemap_parts_are_the_engine_rows_each_once(name):
    params = param_table(load_config(name))
    parts = treemap_parts(params)
    rows = [p for kinds in parts.values() for group in kinds.values() for p in group]
    assert sorted(p.name for p in rows) == sorted(p.name for p in params)
    assert {g: sum(total(r) for r in kinds.values()) for g, kinds in parts.items()} == count_model(
        load_config(name)).components


def test_bert_tensor_kinds():
    parts = treemap_parts(param_table(load_config("bert-base-uncased")))
    assert {g: list(kinds) for g, kinds in parts.items()} == {
        "embeddings": ["word table", "position table", "segment table"],
        "layer norm": ["γ", "β"],
        "attention": ["W_Q", "biases", "W_K", "W_V", "W_O"],
        "feed-forward": ["W₁", "biases", "W₂"],
        "pooler": ["W_p", "biases"],
    }
    assert [len(parts["attention"][k]) for k in ("W_Q", "biases")] == [12, 48]
    gpt2 = {p.name: p for p in param_table(load_config("gpt2"))}
    assert _tensor_kind(gpt2["transformer.h.3.attn.c_attn.weight"]) == "attn.c_attn.weight"  # the name, no layer


def test_the_treemap_draws_every_component():
    fig, ax = plt.subplots()
    parameter_treemap(param_table(load_config("bert-base-uncased")), ax=ax)
    texts = "\n".join(t.get_text() for t in ax.texts)
    for label in ("feed-forward", "embeddings", "attention", "word table", "layer norm: 38,400", "pooler: 590,592"):
        assert label in texts
    plt.close(fig)
