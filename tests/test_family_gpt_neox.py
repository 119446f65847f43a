"""GPT-NeoX / Pythia (``GPTNeoXForCausalLM``): fused QKV with biases, parallel residual, partial rotary, untied head.

pythia-160m and pythia-1.4b (``data/models/``, EleutherAI's published config.json files) against transformers on
the meta device (REFERENCE.md: 162,322,944 and 1,414,647,808); the cache of a tiny real model (whole heads,
partial rotary or not); the switches that change no tensor; malformed configs refused in one line.
"""

from __future__ import annotations

import json

import pytest

from helpers import ConfigError, count_model, load_config, param_table, parse_config
from helpers.config import MODELS_DIR
from helpers.flops import forward_flops
from helpers.memory import kv_cache_bytes

from .conftest import assert_refused, hf_model, run_cli
from .strategies import TINY

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
StrictDataclassError = pytest.importorskip("huggingface_hub.errors").StrictDataclassError
transformers.logging.set_verbosity_error()

from torch.utils.flop_counter import FlopCounterMode  # noqa: E402

from helpers import torch_ref  # noqa: E402



@pytest.mark.parametrize(("name", "figure"), [("pythia-160m", 162_322_944), ("pythia-1.4b", 1_414_647_808)])
def test_pythia_is_what_transformers_builds(name, figure):
    raw = json.loads((MODELS_DIR / f"{name}.json").read_text())
    c = load_config(name)
    model = hf_model(raw)
    assert [(p.name, p.shape) for p in param_table(c)] == [(n, tuple(p.shape)) for n, p in model.named_parameters()]
    assert count_model(c).total == sum(p.numel() for p in model.parameters()) == figure
    # the paper's non-embedding count: the input table and the untied output head left out
    assert figure - 2 * c["V"] * c["H"] == count_model(c).total - count_model(c).components["embeddings"] - c["V"] * c["H"]
    with FlopCounterMode(display=False) as counter:
        model(torch.zeros(1, 128, dtype=torch.long, device="meta"), use_cache=True)
    assert counter.get_total_flops() == forward_flops(c, 1, 128).forward


@pytest.mark.parametrize("change", [{"use_parallel_residual": False}, {"rotary_pct": 1.0}, {"rotary_pct": 0.5},
                                    {"rotary_emb_base": 500}, {"hidden_act": "relu"}, {"head_dim": 7}])
def test_switches_that_change_no_tensor_and_no_matmul(change):
    """Parallel residual, the rotary fraction and base, the activation, a stray head_dim: the same count and FLOPs."""
    raw = {**json.loads((MODELS_DIR / "pythia-160m.json").read_text()), **change}
    c = parse_config(raw)
    model = hf_model(raw)
    assert count_model(c).total == sum(p.numel() for p in model.parameters()) == 162_322_944
    with FlopCounterMode(display=False) as counter:
        model(torch.zeros(1, 16, dtype=torch.long, device="meta"), use_cache=True)
    assert counter.get_total_flops() == forward_flops(c, 1, 16).forward


@pytest.mark.parametrize("rotary_pct", [0.25, 1.0])
@pytest.mark.parametrize("S", [1, 6])
def test_neox_cache_holds_whole_heads(rotary_pct, S):
    raw = {**TINY["gpt_neox"], "rotary_pct": rotary_pct}
    c = parse_config(raw)
    model = hf_model(raw, "cpu").eval()
    with torch.no_grad():
        cache = model(input_ids=torch.randint(0, c["V"], (2, S)), use_cache=True).past_key_values
    assert {tuple(layer.keys.shape) for layer in cache.layers} == {(2, c["A"], S, c["d_k"])}
    measured = sum(t.numel() * t.element_size() for layer in cache.layers for t in (layer.keys, layer.values))
    assert measured == kv_cache_bytes(c, 2, S, "fp32")


def test_the_reference_runs_both_residual_forms():
    for parallel in (True, False):
        c = parse_config({**TINY["gpt_neox"], "use_parallel_residual": parallel})
        model = torch_ref.build(c, "cpu")
        assert model(torch.randint(0, c["V"], (2, 5))).shape == (2, 5, c["V"])
        assert torch_ref.flop_count(torch_ref.build(c), 2, 5) == forward_flops(c, 2, 5).forward


NEOX_BAD = [
    ({"hidden_size": 770}, "num_attention_heads"),  # GPTNeoXConfig refuses heads that do not divide H
    ({"num_attention_heads": 0}, "num_attention_heads"),
    ({"intermediate_size": None}, "intermediate_size"),
    ({"attention_bias": 1}, "attention_bias"),
    ({"vocab_size": 50304.0}, "vocab_size"),
    ({"layer_types": ["full_attention"] * 3}, "layer_types"),  # transformers wants one per layer (12)
    ({"num_hidden_layers": -1}, "num_hidden_layers"),
]


@pytest.mark.parametrize(("change", "field"), NEOX_BAD)
def test_neox_bad_configs_are_refused_in_one_line(write_config, change, field):
    raw = {**json.loads((MODELS_DIR / "pythia-160m.json").read_text()), **change}
    with pytest.raises(ConfigError) as info:
        parse_config(raw)
    assert info.value.field == field
    assert_refused(run_cli("count", str(write_config(raw))), field)


def test_a_stray_sliding_window_changes_only_transformers_cache_and_the_engine_follows():
    """GPTNeoXConfig keeps the stray ``sliding_window`` and DynamicCache obeys it: no tensor changes, the cache keeps
    W − 1 tokens, and so does the engine's KV cache."""
    from helpers.memory import kv_cache_bytes

    raw = {**TINY["gpt_neox"], "sliding_window": 3}
    model = hf_model(raw, "cpu").eval()
    with torch.no_grad():
        cache = model(input_ids=torch.zeros(1, 7, dtype=torch.long), use_cache=True).past_key_values
    assert {layer.keys.shape[-2] for layer in cache.layers} == {2}
    held = sum(t.numel() * t.element_size() for layer in cache.layers for t in (layer.keys, layer.values))
    assert kv_cache_bytes(parse_config(raw), 1, 7, "fp32") == held
    assert param_table(parse_config(raw)) == param_table(parse_config(TINY["gpt_neox"]))
    with pytest.raises(StrictDataclassError, match="validate_architecture"):
        transformers.GPTNeoXConfig(hidden_size=770, num_attention_heads=12)
