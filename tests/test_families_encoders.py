"""The encoder families added after BERT and RoBERTa: XLM-RoBERTa, DistilBERT, ELECTRA, ALBERT.

The registry-wide tests (``tests/test_families.py``, ``tests/test_crosscheck_transformers.py``,
``tests/test_flops.py``) check their tensors, totals and FLOPs against transformers; here: what is each
family's own (ALBERT's shared layer, ELECTRA's projection, DistilBERT's dialect) and the refusals.
"""

from __future__ import annotations

import json

import pytest

from helpers import ConfigError, load_config, param_table, parse_config
from helpers.config import MODELS_DIR
from helpers.flops import forward_flops
from helpers.params import EMBEDDINGS, param_layout

from .conftest import assert_refused, run_cli


def test_albert_counts_its_shared_layer_once_and_runs_it_l_times():
    base = load_config("albert-base-v2")
    raw = json.loads((MODELS_DIR / "albert-base-v2.json").read_text())
    deeper = parse_config({**raw, "num_hidden_layers": 24})
    assert param_layout(base).total == param_layout(deeper).total == 11_683_584
    assert param_table(base) == param_table(deeper)
    one = parse_config({**raw, "num_hidden_layers": 1})
    f1, f12, f24 = (forward_flops(c, 1, 8).by_component() for c in (one, base, deeper))
    for component, flops in f12.items():
        if component in (EMBEDDINGS, "pooler"):  # outside the shared layer: once
            assert flops == f1[component] == f24[component]
        else:
            assert flops == 12 * f1[component] and f24[component] == 24 * f1[component]


def test_electra_projects_only_where_the_widths_differ():
    small, base = load_config("electra-small-discriminator"), load_config("electra-base-discriminator")
    assert (small["d_e"], small["H"], base["d_e"], base["H"]) == (128, 256, 768, 768)
    assert [p.shape for p in param_table(small) if p.name.startswith("embeddings_project.")] == [(256, 128), (256,)]
    assert not [p for p in param_table(base) if p.name.startswith("embeddings_project.")]
    assert forward_flops(small, 1, 8).by_component()[EMBEDDINGS] == 2 * 8 * 128 * 256
    assert forward_flops(base, 1, 8).by_component()[EMBEDDINGS] == 0


def test_distilbert_reads_both_dialects_and_xlm_roberta_its_default_vocabulary():
    ours = parse_config({"model_type": "distilbert", "dim": 32, "n_heads": 4, "n_layers": 2})
    theirs = parse_config({"model_type": "distilbert", "hidden_size": 32, "num_attention_heads": 4,
                           "num_hidden_layers": 2})
    assert ours.sizes == theirs.sizes and ours["I"] == 3072  # hidden_dim's default is fixed, not 4·dim
    assert parse_config({"model_type": "xlm-roberta"})["V"] == 30522
    assert load_config("xlm-roberta-base")["V"] == 250002 and load_config("xlm-roberta-base").pad_token_id == 1


BAD = [
    ("albert-base-v2", {"num_hidden_groups": 2}, "num_hidden_groups"),
    ("albert-base-v2", {"inner_group_num": 2}, "inner_group_num"),
    ("albert-base-v2", {"embedding_size": 0}, "embedding_size"),
    ("albert-base-v2", {"num_attention_heads": 7}, "num_attention_heads"),
    ("albert-base-v2", {"position_embedding_type": "relative_key"}, "position_embedding_type"),
    ("electra-small-discriminator", {"num_attention_heads": 3}, "num_attention_heads"),
    ("electra-small-discriminator", {"embedding_size": 12.0}, "embedding_size"),
    ("electra-small-discriminator", {"add_cross_attention": True}, "add_cross_attention"),
    ("electra-small-discriminator", {"pad_token_id": 30522}, "pad_token_id"),
    ("distilbert-base-uncased", {"n_heads": 5}, "n_heads"),
    ("distilbert-base-uncased", {"dim": 768, "hidden_size": 512}, "dim"),
    ("distilbert-base-uncased", {"hidden_dim": 0}, "hidden_dim"),
    ("xlm-roberta-base", {"max_position_embeddings": 1}, "pad_token_id"),
    ("xlm-roberta-base", {"num_attention_heads": 5}, "num_attention_heads"),
]


@pytest.mark.parametrize(("name", "change", "field"), BAD)
def test_bad_encoder_configs_are_refused_in_one_line(write_config, name, change, field):
    raw = {**json.loads((MODELS_DIR / f"{name}.json").read_text()), **change}
    with pytest.raises(ConfigError) as info:
        parse_config(raw)
    assert info.value.field == field
    assert_refused(run_cli("count", str(write_config(raw))), field)
