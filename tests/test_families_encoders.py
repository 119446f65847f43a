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
    ("albert-base-v2", {"num_hidden_groups": -1}, "num_hidden_groups"),
    ("albert-base-v2", {"inner_group_num": None}, "inner_group_num"),
    ("albert-base-v2", {"embedding_size": 0}, "embedding_size"),
    ("albert-base-v2", {"num_attention_heads": 769}, "num_attention_heads"),  # 0 dimensions per head
    ("albert-base-v2", {"position_embedding_type": "relative_key"}, "position_embedding_type"),
    ("electra-small-discriminator", {"num_attention_heads": 257}, "num_attention_heads"),  # 0 dimensions per head
    ("electra-small-discriminator", {"embedding_size": 12.0}, "embedding_size"),
    ("electra-small-discriminator", {"add_cross_attention": True}, "add_cross_attention"),
    ("electra-small-discriminator", {"pad_token_id": 30522}, "pad_token_id"),
    ("distilbert-base-uncased", {"n_heads": 5}, "n_heads"),
    ("distilbert-base-uncased", {"dim": 768, "hidden_size": 512}, "n_heads"),  # the alias wins: 512, not 12 heads' multiple
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
    unmodelled = field in load_config(name).family.refused  # built by transformers: count answers it (test_fallback)
    assert_refused(run_cli("flops" if unmodelled else "count", str(write_config(raw))), field)


# --- what transformers builds at the edges: ALBERT's groups, heads that leave part of H out -------------------

ALBERT_GROUPS = [({"num_hidden_groups": 2, "inner_group_num": 2}, 2 * 2 * 7_087_872),
                 ({"num_hidden_groups": 3, "inner_group_num": 1, "num_hidden_layers": 2}, 3 * 7_087_872),
                 ({"num_hidden_groups": 1, "inner_group_num": 0}, 0)]


@pytest.mark.parametrize(("change", "layers"), ALBERT_GROUPS)
def test_albert_groups_and_inner_layers_are_what_transformers_builds_and_runs(change, layers):
    """albert-base-v2 with G groups of K layers: G·K layers of parameters; run i uses group int(i / (L / G))."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    from torch.utils.flop_counter import FlopCounterMode

    raw = {**json.loads((MODELS_DIR / "albert-base-v2.json").read_text()), **change}
    c = parse_config(raw)
    config = transformers.AutoConfig.for_model(**raw)
    config._attn_implementation = "eager"
    with torch.device("meta"):
        model = transformers.AlbertModel(config)
    assert [(p.name, p.shape) for p in param_table(c)] == [(n, tuple(p.shape)) for n, p in model.named_parameters()]
    total = sum(p.numel() for p in model.parameters())
    assert param_layout(c).total == total == 11_683_584 - 7_087_872 + layers  # one shared layer: 7,087,872
    with FlopCounterMode(display=False) as counter:
        model(torch.zeros(1, 16, dtype=torch.long, device="meta"))
    assert forward_flops(c, 1, 16).forward == counter.get_total_flops()


@pytest.mark.parametrize("name", ["albert-base-v2", "electra-small-discriminator"])
def test_heads_leaving_part_of_h_out_are_counted_and_not_run(name, write_config):
    """A config with an embedding_size skips transformers' divisibility check: A·⌊H/A⌋-wide q, k, v, a failing forward."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    raw = {**json.loads((MODELS_DIR / f"{name}.json").read_text()), "num_attention_heads": 7}
    c = parse_config(raw)
    with torch.device("meta"):
        model = getattr(transformers, c.architecture)(transformers.AutoConfig.for_model(**raw))
    assert [(p.name, p.shape) for p in param_table(c)] == [(n, tuple(p.shape)) for n, p in model.named_parameters()]
    assert c["A"] * c["d_k"] < c["H"]
    with pytest.raises(RuntimeError):
        model(torch.zeros(1, 4, dtype=torch.long, device="meta"))
    with pytest.raises(ConfigError, match="num_attention_heads"):
        forward_flops(c, 1, 4)
    assert_refused(run_cli("flops", str(write_config(raw)), "--batch", "1", "--seq-len", "4"), "num_attention_heads")
    assert run_cli("count", str(write_config(raw))).returncode == 0


def test_albert_six_n_d_prints_the_shared_layers_it_misses():
    """6·N·D with ALBERT's stored N: every run of the shared layer after the first is a gap line, printed, not asserted."""
    from helpers.flops import six_n_d, six_n_d_gap

    c = load_config("albert-base-v2")
    flops = forward_flops(c, 1, 128)
    gap = six_n_d_gap(flops)
    assert gap["shared weights run again (stored once in N)"] == -6 * 11 * 128 * (4 * 768**2 + 2 * 768 * 3072)
    assert six_n_d(c, 1, 128) < flops.training / 7  # far below the real cost
    result = run_cli("flops", "albert-base-v2", "--batch", "1", "--seq-len", "128")
    assert result.returncode == 0 and "shared weights run again" in result.stdout


@pytest.mark.parametrize("raw", [
    {"model_type": "bert", "num_hidden_layers": 2, "is_decoder": True, "add_cross_attention": True},
    {"model_type": "electra", "num_hidden_layers": 2, "is_decoder": True, "add_cross_attention": True},
    {"model_type": "xlm-roberta", "num_hidden_layers": 1, "is_decoder": True, "add_cross_attention": True},
    {"model_type": "gpt2", "n_layer": 2, "add_cross_attention": True},
])
def test_cross_attention_layers_are_what_transformers_builds(raw):
    """add_cross_attention (BERT's family: in a decoder only) adds a second attention block to every layer; a plain
    forward pass (no encoder_hidden_states) never runs it: its FLOPs are those of the model without it."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    from torch.utils.flop_counter import FlopCounterMode

    from helpers import count_model

    c = parse_config(raw)
    config = transformers.AutoConfig.for_model(**raw)
    config._attn_implementation = "eager"
    with torch.device("meta"):
        model = getattr(transformers, c.architecture)(config)
    assert [(p.name, p.shape) for p in param_table(c)] == [(n, tuple(p.shape)) for n, p in model.named_parameters()]
    assert count_model(c).total == sum(p.numel() for p in model.parameters())
    assert any("crossattention" in p.name for p in param_table(c))
    with FlopCounterMode(display=False) as counter:
        model(torch.zeros(1, 8, dtype=torch.long, device="meta"), use_cache=raw["model_type"] == "gpt2")  # meta: see test_flops
    assert forward_flops(c, 1, 8).forward == counter.get_total_flops()
    if raw["model_type"] != "gpt2":  # BERT's layers refuse cross-attention in an encoder; so does the engine
        with pytest.raises(ConfigError, match="is_decoder"):
            parse_config({**raw, "is_decoder": False})
