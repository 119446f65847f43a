"""Helpers of notebooks 01-02: a module's rows on their own, embedding shares, the split into heads."""

from __future__ import annotations

import pytest

from helpers import ConfigError, count_model, load_config, param_table, select, total
from helpers.lessons.attention import head_slices, with_heads
from helpers import compact_table, under
from helpers.lessons.embeddings import embedding_share
from helpers.torch_ref import BertEmbeddings, BertLayer, build_component, matches


def test_under_names_rows_as_a_component_built_alone():
    c = load_config("bert-base-uncased")
    assert matches(under(param_table(c), "embeddings."), build_component(BertEmbeddings, c))
    assert matches(under(param_table(c), "encoder.layer.5."), build_component(BertLayer, c))
    assert under(param_table(c), "no.such.prefix.") == []


@pytest.mark.parametrize("name", ["bert-base-uncased", "bert-base-chinese", "roberta-base", "bert-large-uncased"])
def test_embedding_share(name):
    c = load_config(name)
    result = count_model(c)
    assert embedding_share(c) == result.components["embeddings"] / result.total
    assert embedding_share(c, V=c["V"]) == embedding_share(c)
    assert embedding_share(c, V=2 * c["V"]) > embedding_share(c)


def test_compact_table_lists_every_row():
    rows = under(param_table(load_config("bert-base-uncased")), "pooler.")
    text = compact_table(rows).splitlines()
    assert text[0].split() == ["tensor", "shape", "formula", "parameters"]
    assert [line.split()[0] for line in text[2:]] == ["dense.weight", "dense.bias"]
    assert text[2].endswith("589,824")


def test_splitting_into_heads_changes_no_count():
    c = load_config("bert-base-uncased")
    for A in (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 768):
        split = with_heads(c, A)
        assert (split["A"], split["d_k"]) == (A, 768 // A)
        assert count_model(split).total == count_model(c).total


def test_with_heads_refuses():
    c = load_config("bert-base-uncased")
    with pytest.raises(ConfigError, match="not divisible"):
        with_heads(c, 5)
    with pytest.raises(ConfigError, match="at least 1"):
        with_heads(c, 0)
    with pytest.raises(ConfigError, match="A_kv"):
        with_heads(load_config("llama-7b"), 16)


def test_heads_sum_back_to_the_layer():
    c = load_config("bert-base-uncased")
    heads = [head_slices(c, h) for h in range(c["A"])]
    output_bias = c["H"]  # added after the heads are concatenated: no head owns it
    assert sum(total(h) for h in heads) + output_bias == total(select(param_table(c), component="attention", layer=0))
    assert total(heads[0]) == 4 * c["H"] * c["d_k"] + 3 * c["d_k"]
    with pytest.raises(ValueError):
        head_slices(c, c["A"])
