"""00_overview's picture of the whole BERT model: its boxes are the engine's table, for every BERT-like config;
and its exercise bank: the reference solutions pass, a wrong answer does not."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from helpers import count_model, load_config, model_names, param_table, total  # noqa: E402
from helpers.exercises import exercise, verdict  # noqa: E402
from helpers.plots import bert_blocks, bert_diagram  # noqa: E402

BERTS = [n for n in model_names() if load_config(n).model_type in ("bert", "roberta")]


@pytest.mark.parametrize("name", BERTS)
def test_boxes_are_the_table(name):
    c = load_config(name)
    params = param_table(c)
    blocks = bert_blocks(params)
    assert len(blocks) == 7
    assert sum(b.count for b in blocks) == total(params) == count_model(c).total
    for component, n in count_model(c).components.items():
        assert sum(b.count for b in blocks if b.component == component) == n, component
    H, I, L = c["H"], c["I"], c["L"]
    assert [b.count for b in blocks[2:6]] == [L * (4 * H**2 + 4 * H), L * 2 * H, L * (2 * H * I + I + H), L * 2 * H]
    assert blocks[0].detail.endswith("= (V + P + T)·H")
    assert blocks[2].detail == f"{L} × {4 * H**2 + 4 * H:,} = L·(4H² + 4H)"
    assert blocks[4].detail.endswith("= L·(2H·I + I + H)")
    assert blocks[3].detail.endswith("= 2L·H") and blocks[6].detail.endswith("= H² + H")


def test_diagram_draws_every_count_and_the_bracket():
    params = param_table(load_config("bert-base-uncased"))
    ax = bert_diagram(params)
    texts = "\n".join(t.get_text() for t in ax.texts)
    for b in bert_blocks(params):
        assert f"{b.count:,}" in texts
    assert "× L = 12" in texts and "109,482,240" in ax.get_title()
    assert "(0.00%)" not in texts
    plt.close(ax.figure)


def test_a_decoder_table_is_refused():
    with pytest.raises(ValueError):
        bert_blocks(param_table(load_config("gpt2")))


def test_bank_solutions_pass_and_wrong_answers_do_not():
    ex = exercise("00.4")
    assert verdict("00.4", ex.solution).startswith("correct on all 5")
    assert verdict("00.4", lambda V, H, L, I, P, T: ex.solution(V, H, L, I, P, T) - H**2 - H).startswith("not yet")
    right = exercise("00.1").answer()
    assert verdict("00.1", right) == "correct"
    assert all(verdict("00.1", c).startswith("not yet") for c in "abcd" if c != right)
    assert exercise("00.2").answer() == count_model(load_config("roberta-base")).total
    assert verdict("00.2", exercise("00.2").answer()).startswith("exact")
    assert verdict("00.2", 110_000_000).startswith("too low")
    assert verdict("00.3", 21.8).startswith("too low")  # bert-base's share is far below the multilingual model's