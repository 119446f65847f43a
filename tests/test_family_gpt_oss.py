"""GPT-OSS: exact against transformers, tensor by tensor.

The shipped configs (``data/models/gpt-oss-120b.json``, ``gpt-oss-20b.json``: openai/gpt-oss-*'s published
``config.json``) and random small ones: names, shapes and total equal to ``GptOssForCausalLM`` on the meta device;
the active count (the card's 5.13B and 3.61B without the input table); ``quantization_config`` changing no count;
FLOPs equal to ``FlopCounterMode`` on random small models (the tiny model and the reference are checked with the
other mixtures, ``tests/test_family_moe.py``); the KV cache equal to the bytes transformers' cache holds (a windowed layer keeps ``W − 1`` tokens).
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

from helpers import count_model, load_config, param_table, parse_config
from helpers.config import raw_config
from helpers.memory import kv_cache_bytes

from .conftest import assert_runs_as_transformers, hf_model
from .strategies import STRATEGIES, TINY

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
transformers.logging.set_verbosity_error()
from torch.utils.flop_counter import FlopCounterMode  # noqa: E402

# ../shared/REFERENCE.md: the meta build's totals, and the active parameters without the input table
SHIPPED = {"gpt-oss-120b": (116_829_156_672, 5_132_849_472), "gpt-oss-20b": (20_914_757_184, 3_608_307_264)}
RANDOM = settings(max_examples=15, deadline=None, derandomize=True, database=None,
                  suppress_health_check=[HealthCheck.too_slow])


def table(model) -> list[tuple[str, tuple[int, ...]]]:
    return [(n, tuple(p.shape)) for n, p in model.named_parameters()]


def real(raw: dict):
    torch.manual_seed(0)
    return hf_model(raw, "cpu").eval()


def measured_flops(model, B: int, S: int) -> int:
    with torch.no_grad(), FlopCounterMode(display=False) as counter:
        model(torch.zeros(B, S, dtype=torch.long), use_cache=True)
    return counter.get_total_flops()


@pytest.mark.parametrize(("name", "expected"), SHIPPED.items())
def test_published_config_is_what_transformers_builds(name, expected):
    total, active_without_table = expected
    c = load_config(name)
    model = hf_model(raw_config(name))
    assert [(p.name, p.shape) for p in param_table(c)] == table(model)
    counted = count_model(c)
    assert counted.total == sum(p.numel() for p in model.parameters()) == total
    assert counted.active - c["V"] * c["H"] == active_without_table
    # active: the total less the E − k experts' weights and bias rows a token skips, per layer
    E, k, H, I = c["E"], c["k"], c["H"], c["I"]
    assert counted.total - counted.active == c["L"] * (E - k) * (3 * H * I + 2 * I + H)


@pytest.mark.parametrize("name", SHIPPED)
def test_quantization_config_changes_no_count(name):
    raw = raw_config(name)
    assert raw["quantization_config"]["quant_method"] == "mxfp4"
    plain = {key: value for key, value in raw.items() if key != "quantization_config"}
    assert count_model(parse_config(plain)).total == count_model(parse_config(raw)).total == SHIPPED[name][0]
    assert param_table(parse_config(plain)) == param_table(parse_config(raw))


def test_sinks_router_and_experts_as_transformers_stores_them():
    c = load_config("gpt-oss-20b")
    model = hf_model(raw_config("gpt-oss-20b"))
    layer = dict(model.model.layers[0].named_parameters())
    E, H, I, A = c["E"], c["H"], c["I"], c["A"]
    assert layer["self_attn.sinks"].shape == (A,)  # one logit per query head
    assert layer["mlp.router.weight"].shape == (E, H) and layer["mlp.router.bias"].shape == (E,)
    assert layer["mlp.experts.gate_up_proj"].shape == (E, H, 2 * I)  # transposed: in × out
    assert layer["mlp.experts.gate_up_proj_bias"].shape == (E, 2 * I)
    assert layer["mlp.experts.down_proj"].shape == (E, I, H)
    assert layer["mlp.experts.down_proj_bias"].shape == (E, H)
    assert layer["self_attn.q_proj.bias"].shape == (A * c["d_k"],)
    types = model.config.layer_types
    assert (c["L_w"], c["W"]) == (types.count("sliding_attention"), 128) == (12, 128)
    assert c.lists["windows"] == tuple(128 if t == "sliding_attention" else 0 for t in types)


@pytest.mark.parametrize("S", [1, 3, 4, 5, 9])
def test_tiny_cache_keeps_window_minus_one_tokens_on_windowed_layers(S):
    raw, B, W = TINY["gpt_oss"], 2, 4
    with torch.no_grad():
        cache = real(raw)(input_ids=torch.randint(0, raw["vocab_size"], (B, S)), use_cache=True).past_key_values
    kept = [layer.keys.shape[-2] for layer in cache.layers]
    held = sum(t.numel() * t.element_size() for layer in cache.layers for t in (layer.keys, layer.values))
    assert kept == [min(S, W - 1), S, min(S, W - 1)]  # layers 0 and 2 windowed, layer 1 full
    assert held == kv_cache_bytes(parse_config(raw), B, S, "fp32")


@given(raw=STRATEGIES["gpt_oss"])
@RANDOM
def test_random_configs(raw):
    assert_runs_as_transformers(raw)  # names, shapes, total; FLOPs and cache bytes after 1 and 5 tokens
