"""The parameter table: exact counts, formulas that evaluate to the table, rendering."""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from helpers import (count_model, evaluate, component_counts, component_formulas, is_norm, linear_biases, load_config,
                     model_names, numel, param_table, parse_config, pretraining_heads, render, select, total)
from helpers.config import published, published_figure

from .strategies import any_config


def test_numel_is_exact_beyond_int64():
    big = 2**40
    assert numel((big, big)) == 2**80  # int64 would wrap around
    assert isinstance(numel((3, 4)), int)


def test_render():
    assert render("L*(4*H**2 + 4*H)") == "L·(4H² + 4H)"
    assert render("(V + P + T)*H") == "(V + P + T)·H"
    assert render("L*(2*A*d_k*H + 2*A_kv*d_k*H)") == "L·(2A·d_k·H + 2A_kv·d_k·H)"


@pytest.mark.parametrize("name", model_names())
def test_group_formulas_evaluate_to_the_table(name):
    c = load_config(name)
    groups = component_counts(param_table(c))
    formulas = component_formulas(c)
    assert set(groups) == set(formulas)
    assert all(evaluate(formulas[g], c) == n for g, n in groups.items())
    assert all(evaluate(p.formula, c) == p.count for p in param_table(c))


@given(any_config)
@settings(max_examples=200, deadline=None)
def test_formulas_hold_for_random_configs(raw):
    c = parse_config(raw)
    result = count_model(c)  # asserts each component formula against the counted tensors
    assert result.total == sum(result.components.values())
    assert all(evaluate(p.formula, c) == p.count for p in result.params)
    names = [p.name for p in result.params]
    assert len(names) == len(set(names))


def test_reference_figures():
    expected_from_reference = {  # ../shared/REFERENCE.md, counted with transformers on meta
        "bert-base-uncased": 109_482_240, "bert-large-uncased": 335_141_888, "bert-base-chinese": 102_267_648,
        "gpt2": 124_439_808, "gpt3-175b": 174_604_259_328, "llama-7b": 6_738_415_616,
        "llama-13b": 13_015_864_320, "llama-65b": 65_285_660_672,
    }
    for name, expected in expected_from_reference.items():
        assert count_model(load_config(name)).total == expected, name


def test_linear_biases_and_norms():
    c = load_config("bert-base-uncased")
    rows = param_table(c) + pretraining_heads(c)
    assert {p.name.rsplit(".", 2)[-2] for p in linear_biases(rows)} == {
        "query", "key", "value", "dense", "predictions", "seq_relationship"}
    assert all(p.name.endswith(("LayerNorm.weight", "LayerNorm.bias")) for p in rows if is_norm(p))
    assert len([p for p in rows if is_norm(p)]) == 2 * (1 + 2 * c["L"] + 1)  # + the MLM head's LayerNorm
    llama = param_table(load_config("llama-7b"))
    assert linear_biases(llama) == [] and len([p for p in llama if is_norm(p)]) == 2 * 32 + 1


def test_published_figure_prefers_the_paper():
    assert published_figure("bert-base-uncased")["source"].startswith("Devlin")
    with pytest.raises(KeyError):
        published_figure("no-such-model")


def test_bert_reconciliation_with_the_writeups():
    c = load_config("bert-base-uncased")
    params = param_table(c)
    no_bias_no_pooler = total(p for p in params if p not in linear_biases(params) and p.component != "pooler")
    writeup = next(w for w in published()["writeups"] if w["id"] == "000")
    assert no_bias_no_pooler == writeup["value"]
    per_layer_biases = total(linear_biases(select(params, layer=0)))
    assert per_layer_biases == 4 * c["H"] + c["I"] + c["H"]
    pooler = total(select(params, component="pooler"))
    assert no_bias_no_pooler + c["L"] * per_layer_biases + pooler == count_model(c).total


def test_pretraining_heads_total():
    c = load_config("bert-base-uncased")
    assert count_model(c).total + total(pretraining_heads(c)) == 110_106_428


def test_select_by_group_and_layer():
    params = param_table(load_config("bert-base-uncased"))
    assert len(select(params, layer=3)) == 16
    assert {p.component for p in select(params, layer=0)} == {"attention", "feed-forward", "layer norm"}
    assert total(select(params, component="pooler")) == 768 * 768 + 768
