"""The picture of ``05_pooler_and_heads``: every box counts rows of the engine's tables, each row once, and the
tied decoder weight is the word table, counted once."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from helpers import classification_head, load_config, model_names, param_table, pretraining_heads, total  # noqa: E402
from helpers.plots import heads_diagram, heads_parts  # noqa: E402

BERTS = [n for n in model_names() if load_config(n).model_type == "bert"]


@pytest.mark.parametrize("name", BERTS)
def test_every_row_in_one_box(name):
    c = load_config(name)
    params, heads, classifier = param_table(c), pretraining_heads(c), classification_head(c, 3)
    parts = heads_parts(params, heads, classifier)
    drawn = [p for box, rows in parts.items() if box != "decoder (tied)" for p in rows]
    assert sorted(p.name for p in drawn) == sorted(p.name for p in [*params, *heads, *classifier])
    assert parts["decoder (tied)"] == parts["word table"]
    assert total(parts["word table"]) == c["V"] * c["H"]
    assert total(parts["decoder bias"]) == c["V"]


def test_a_table_without_the_heads_is_refused():
    c = load_config("bert-base-uncased")
    with pytest.raises(ValueError):
        heads_parts(param_table(c), pretraining_heads(c)[1:], classification_head(c, 2))


def test_the_diagram_labels_the_counts():
    c = load_config("bert-base-uncased")
    fig, ax = plt.subplots()
    heads_diagram(param_table(c), pretraining_heads(c), classification_head(c, 2), ax=ax)
    texts = "\n".join(t.get_text() for t in ax.texts)
    for label in ("590,592", "1,538", "30,522", "0 new parameters", "109,482,240", "110,106,428", "counted once"):
        assert label in texts
    plt.close(fig)
