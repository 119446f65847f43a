"""Test-only cross-check against transformers' own models, built on the meta device.

For every config in data/models/ and for random configs: the same tensor names, shapes, order and totals.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings

from helpers import count_model, load_config, model_names, param_table, parse_config, pretraining_heads
from helpers.config import MODELS_DIR
from helpers.families import FAMILIES

from .strategies import any_config

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
transformers.logging.set_verbosity_error()  # random tiny vocabularies make it warn about special token ids

CLASSES = {model_type: family.architecture for model_type, family in FAMILIES.items()}  # the class each mirrors


def hf_model(raw: dict, cls_name: str | None = None):
    config = transformers.AutoConfig.for_model(**raw)
    cls = getattr(transformers, cls_name or CLASSES[raw["model_type"]])
    with torch.device("meta"):
        return cls(config)


def hf_table(model) -> list[tuple[str, tuple[int, ...]]]:
    return [(name, tuple(p.shape)) for name, p in model.named_parameters()]


def compare(raw: dict) -> None:
    c = parse_config(raw)
    model = hf_model(raw)
    assert [(p.name, p.shape) for p in param_table(c)] == hf_table(model)
    assert count_model(c).total == sum(p.numel() for p in model.parameters())


@pytest.mark.parametrize("name", model_names())
def test_shipped_config(name):
    raw = json.loads((MODELS_DIR / f"{name}.json").read_text())
    assert load_config(name).architecture == CLASSES[raw["model_type"]]
    compare(raw)


@given(any_config)
@settings(max_examples=40, deadline=None)
def test_random_configs(raw):
    compare(raw)


def test_bert_for_pretraining():
    raw = json.loads((MODELS_DIR / "bert-base-uncased.json").read_text())
    c = parse_config(raw)
    model = hf_model(raw, "BertForPreTraining")
    ours = [("bert." + p.name, p.shape) for p in param_table(c)] + [(p.name, p.shape) for p in pretraining_heads(c)]
    assert sorted(ours) == sorted(hf_table(model))
    assert sum(p.numel() for p in model.parameters()) == 110_106_428
