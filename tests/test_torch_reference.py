"""NumPy count == plain-torch count, tensor by tensor, component by component and in total."""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from helpers import count_model, component_counts, load_config, model_names, param_table, parse_config, pretraining_heads
from helpers.torch_ref import BertForPreTraining, build, build_component, matches, torch_count, torch_table

from .strategies import any_config


def torch_groups(config, module) -> dict[str, int]:
    """Torch's numel per component, using the engine's grouping of names (names must match first)."""
    group_of = {p.name: p.component for p in param_table(config)}
    counts: dict[str, int] = {}
    for name, p in module.named_parameters():
        counts[group_of[name]] = counts.get(group_of[name], 0) + p.numel()
    return counts


def check(config) -> None:
    module = build(config)
    params = param_table(config)
    assert matches(params, module), (torch_table(module)[:5], params[:5])
    assert torch_groups(config, module) == component_counts(params)
    assert torch_count(module) == count_model(config).total


@pytest.mark.parametrize("name", model_names())
def test_shipped_models(name):
    check(load_config(name))


@given(any_config)
@settings(max_examples=60, deadline=None)
def test_random_configs(raw):
    check(parse_config(raw))


def test_pretraining_model_ties_the_decoder():
    c = load_config("bert-base-uncased")
    module = build_component(BertForPreTraining, c)
    rows = [p.__class__("bert." + p.name, p.shape, p.component, p.formula) for p in param_table(c)]
    assert matches(rows + pretraining_heads(c), module)
    assert module.cls.predictions.decoder.weight is module.bert.embeddings.word_embeddings.weight
    assert torch_count(module) == 110_106_428
