"""The 2017 Transformer of notebook 09 (``helpers.lessons.vaswani``): its table, its formulas, torch's nn.Transformer, and
the residual against Vaswani et al. 2017's Table 3 (base 65M, big 213M), which no one vocabulary closes."""

from __future__ import annotations

import itertools

import pytest

from helpers.config import published
from helpers.params import evaluate
from helpers.lessons.vaswani import (Assumptions, formulas_2017, nn_transformer_assumptions, paper_config, table_3,
                             transformer_2017, vocabulary_range)

SWITCHES = list(itertools.product((False, True), repeat=4))  # attention_bias, ffn_bias, final_norms, output_bias
ROWS = {row["model"]: row for row in table_3()}


def test_table_3_is_the_papers():
    assert [(r["model"], r["N"], r["d_model"], r["d_ff"], r["h"], r["d_k"], r["value"]) for r in table_3()] == [
        ("base", 6, 512, 2048, 8, 64, 65_000_000), ("big", 6, 1024, 4096, 16, 64, 213_000_000)]
    assert published()["vaswani_2017"]["vocabulary"]["en-de"]["V"] == Assumptions().V == 37000


@pytest.mark.parametrize("switches", SWITCHES)
@pytest.mark.parametrize("model", ["base", "big"])
def test_formulas_are_the_table(model, switches):
    a = Assumptions(36000, *switches)
    layout = transformer_2017(ROWS[model], a)
    c = paper_config(ROWS[model], a.V)
    assert {g: evaluate(f, c) for g, f in formulas_2017(a).items()} == layout.component_counts()
    assert layout.total == sum(p.count for p in layout.expand())


def test_the_papers_assumptions_count():
    """Biases in the feed-forward only, post-LN without final norms, V = 37,000: 63.0M and 214.2M."""
    assert transformer_2017(ROWS["base"]).total == 63_045_632
    assert transformer_2017(ROWS["big"]).total == 214_171_648
    assert transformer_2017(ROWS["base"], Assumptions(attention_bias=True)).total == 63_082_496  # REFERENCE's 63.1M


def test_no_vocabulary_gives_both_figures():
    """The residual: under every combination of the open assumptions, base needs a larger V than big allows."""
    for switches in SWITCHES:
        base = vocabulary_range(ROWS["base"], Assumptions(37000, *switches))
        big = vocabulary_range(ROWS["big"], Assumptions(37000, *switches))
        assert len(base) > 0 and len(big) > 0
        assert big[-1] < base[0]
    assert transformer_2017(ROWS["base"]).total < 65_000_000 < transformer_2017(ROWS["base"]).total + 2_000_000
    assert transformer_2017(ROWS["big"]).total - 2_000_000 < 213_000_000 < transformer_2017(ROWS["big"]).total


@pytest.mark.parametrize("model", ["base", "big"])
def test_vocabulary_range_is_exactly_the_vocabularies_that_round_to_the_figure(model):
    row, a = ROWS[model], Assumptions()
    needed = vocabulary_range(row, a)

    def rounds(V: int) -> bool:
        return round(transformer_2017(row, Assumptions(V=V)).total, -6) == row["value"]

    assert rounds(needed[0]) and rounds(needed[-1])
    assert not rounds(needed[0] - 1) and not rounds(needed[-1] + 1)


def test_an_impossible_figure_gives_an_empty_range():
    row = {**ROWS["base"], "value": 1_000_000}  # below the layers alone: no vocabulary reaches it
    assert len(vocabulary_range(row)) == 0


def test_nn_transformer_is_the_table_under_its_assumptions():
    torch = pytest.importorskip("torch")  # noqa: F841
    from helpers.torch_ref import matches, torch_count
    from helpers.lessons.vaswani import torch_transformer_2017

    for row in table_3():
        layout = transformer_2017(row, nn_transformer_assumptions(37000))
        model = torch_transformer_2017(row, 37000)
        assert matches(layout.expand(), model) and torch_count(model) == layout.total
        # and the paper's count differs by the attention biases and the two final norms only
        assert layout.total - transformer_2017(row).total == evaluate("(L + 2*L_d)*4*H + 4*H", paper_config(row, 37000))
        assert not matches(transformer_2017(row).expand(), model)
