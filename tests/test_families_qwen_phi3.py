"""Qwen2, Qwen3 and Phi-3 against transformers: shipped configs counted, FLOPs and KV caches measured, bad configs refused.

The registry tests (``tests/test_families.py``, ``tests/test_crosscheck_transformers.py``, ``tests/test_flops.py``)
already run these families on random configs; here: the real configs, the keys that change the cache but no
tensor (Qwen's ``use_sliding_window`` / ``max_window_layers`` / ``layer_types``, Phi-3's ``sliding_window``), the
keys that change no tensor at all (``partial_rotary_factor``, ``rope_scaling``), and one-line refusals.
"""

from __future__ import annotations

import json

import pytest

from helpers import ConfigError, count_model, load_config, param_table, parse_config
from helpers.config import MODELS_DIR
from helpers.flops import forward_flops
from helpers.memory import kv_cache_bytes, kv_cache_formula

from .conftest import assert_refused, hf_model, run_cli
from .strategies import TINY

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
transformers.logging.set_verbosity_error()

from torch.utils.flop_counter import FlopCounterMode  # noqa: E402

SHIPPED = {"qwen2-7b": 7_615_616_512, "qwen3-8b": 8_190_735_360, "phi-3-mini-4k-instruct": 3_821_079_552}


def raw_of(name: str) -> dict:
    return json.loads((MODELS_DIR / f"{name}.json").read_text())



def cache_of(raw: dict, B: int, S: int):
    torch.manual_seed(0)
    model = hf_model(raw, "cpu").eval()
    with torch.no_grad():
        return model(input_ids=torch.randint(0, raw["vocab_size"], (B, S)), use_cache=True).past_key_values


@pytest.mark.parametrize("name", list(SHIPPED))
def test_shipped_model_is_what_transformers_builds(name):
    raw, c = raw_of(name), load_config(name)
    model = hf_model(raw)
    assert [(p.name, p.shape) for p in param_table(c)] == [(n, tuple(p.shape)) for n, p in model.named_parameters()]
    assert count_model(c).total == sum(p.numel() for p in model.parameters()) == SHIPPED[name]
    with FlopCounterMode(display=False) as counter:
        model(torch.zeros(1, 128, dtype=torch.long, device="meta"), use_cache=True)
    assert counter.get_total_flops() == forward_flops(c, 1, 128).forward


def test_what_the_shipped_configs_read():
    q2, q3, phi = (load_config(n) for n in SHIPPED)
    assert (q2["A_kv"], q2["d_k"], q2["L_w"], "W" in q2.sizes) == (4, 128, 0, False)  # use_sliding_window false
    assert (q3["A_kv"], q3["d_k"], q3["L_w"]) == (8, 128, 0)
    assert (phi["A_kv"], phi["d_k"], phi["W"]) == (32, 96, 2047)
    assert kv_cache_formula(phi) == "2*L*A_kv*d_k*min(S, W - 1)*B"
    per_token = 2 * 32 * 32 * 96 * 2  # fp16
    assert kv_cache_bytes(phi, 1, 4096) == kv_cache_bytes(phi, 1, 2046) == 2046 * per_token


# --- keys that change no tensor ------------------------------------------------------------------------------

NO_TENSOR = [
    ("qwen2-7b", {"use_sliding_window": True, "max_window_layers": 20}),
    ("qwen2-7b", {"use_sliding_window": True, "layer_types": ["full_attention", "sliding_attention"] * 14}),
    ("qwen3-8b", {"use_sliding_window": True, "sliding_window": 4096, "max_window_layers": 0}),
    ("qwen3-8b", {"rope_scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}}),
    ("phi-3-mini-4k-instruct", {"partial_rotary_factor": 0.5, "sliding_window": None}),
    ("phi-3-mini-4k-instruct", {"rope_scaling": {"type": "longrope", "short_factor": [1.0] * 48,
                                                 "long_factor": [2.0] * 48}, "max_position_embeddings": 131072}),
]


@pytest.mark.parametrize(("name", "change"), NO_TENSOR)
def test_keys_that_change_no_tensor(name, change):
    raw = {**raw_of(name), **change}
    model = hf_model(raw)
    assert [(p.name, p.shape) for p in param_table(parse_config(raw))] == [
        (n, tuple(p.shape)) for n, p in model.named_parameters()]
    assert count_model(parse_config(raw)).total == SHIPPED[name]


def test_qwen3_head_dim_need_not_split_the_hidden_size():
    """Qwen3 reads head_dim as given: projections A·d_k wide, H not even a multiple of A (transformers builds it)."""
    raw = {**TINY["qwen3"], "hidden_size": 18, "head_dim": 8}  # 18 is no multiple of 4 heads
    c = parse_config(raw)
    model = hf_model(raw)
    assert [(p.name, p.shape) for p in param_table(c)] == [(n, tuple(p.shape)) for n, p in model.named_parameters()]
    assert dict(model.named_parameters())["model.layers.0.self_attn.q_proj.weight"].shape == (32, 18)
    with FlopCounterMode(display=False) as counter:
        model(torch.zeros(2, 5, dtype=torch.long, device="meta"), use_cache=True)
    assert counter.get_total_flops() == forward_flops(c, 2, 5).forward


# --- the KV cache as transformers holds it -------------------------------------------------------------------

QWEN_CACHES = [  # (change, window of each layer: None for a global one)
    ({}, [None, 4]),  # max_window_layers = 1: layer 0 global, layer 1 windowed
    ({"max_window_layers": 0}, [4, 4]),
    ({"max_window_layers": 2}, [None, None]),
    ({"use_sliding_window": False}, [None, None]),  # the window key is ignored
    ({"sliding_window": None}, [None, None]),
    ({"sliding_window": 2}, [None, 2]),
    ({"layer_types": ["sliding_attention", "full_attention"]}, [4, None]),  # the list wins over max_window_layers
    ({"num_key_value_heads": None}, [None, 4]),  # null: one key/value head per query head
]


@pytest.mark.parametrize("model_type", ["qwen2", "qwen3"])
@pytest.mark.parametrize(("change", "windows"), QWEN_CACHES)
def test_qwen_cache_keeps_each_layers_window(model_type, change, windows):
    raw = {**TINY["qwen2"], **change, "model_type": model_type}
    if model_type == "qwen3":
        raw["head_dim"] = 6
    c = parse_config(raw)
    assert c["L_w"] == sum(w is not None for w in windows)
    for S in (1, 3, 4, 5, 11):
        cache = cache_of(raw, 2, S)
        assert [layer.keys.shape[-2] for layer in cache.layers] == [S if w is None else min(S, w - 1) for w in windows]
        measured = sum(t.numel() * t.element_size() for layer in cache.layers for t in (layer.keys, layer.values))
        assert measured == kv_cache_bytes(c, 2, S, "fp32")


@pytest.mark.parametrize("window", [2, 4, None])
def test_phi3_cache_keeps_the_last_window_minus_one_tokens(window):
    raw = {**TINY["phi3"], "sliding_window": window}
    c = parse_config(raw)
    for S in (1, 3, 4, 6):
        cache = cache_of(raw, 2, S)
        assert {layer.keys.shape[-2] for layer in cache.layers} == {S if window is None else min(S, window - 1)}
        measured = sum(t.numel() * t.element_size() for layer in cache.layers for t in (layer.keys, layer.values))
        assert measured == kv_cache_bytes(c, 2, S, "fp32")


# --- bad configs, refused in one line naming the field ---------------------------------------------------------

BAD = [
    ("qwen2-7b", {"num_key_value_heads": 3}, "num_key_value_heads"),
    ("qwen2-7b", {"hidden_size": 3585}, "num_attention_heads"),  # no head_dim: d_k = H/A must be whole
    ("qwen2-7b", {"head_dim": None}, "head_dim"),
    ("qwen2-7b", {"head_dim": 0}, "head_dim"),
    ("qwen2-7b", {"max_window_layers": -1}, "max_window_layers"),
    ("qwen2-7b", {"use_sliding_window": "yes"}, "use_sliding_window"),
    ("qwen2-7b", {"use_sliding_window": True, "sliding_window": 1, "max_window_layers": 0}, "sliding_window"),
    ("qwen2-7b", {"layer_types": ["full_attention"] * 27}, "layer_types"),
    ("qwen2-7b", {"layer_types": ["chunked_attention"] * 28}, "layer_types"),
    ("qwen2-7b", {"layer_types": "full_attention"}, "layer_types"),
    ("qwen2-7b", {"layer_types": ["sliding_attention"] * 28}, "layer_types"),  # use_sliding_window is false
    ("qwen3-8b", {"head_dim": None}, "head_dim"),
    ("qwen3-8b", {"num_key_value_heads": 5}, "num_key_value_heads"),
    ("qwen3-8b", {"attention_bias": 1}, "attention_bias"),
    ("qwen3-8b", {"num_hidden_layers": 0}, "num_hidden_layers"),
    ("phi-3-mini-4k-instruct", {"num_key_value_heads": 5}, "num_key_value_heads"),
    ("phi-3-mini-4k-instruct", {"hidden_size": 3073}, "num_attention_heads"),
    ("phi-3-mini-4k-instruct", {"head_dim": None}, "head_dim"),
    ("phi-3-mini-4k-instruct", {"sliding_window": 1}, "sliding_window"),
    ("phi-3-mini-4k-instruct", {"pad_token_id": 32064}, "pad_token_id"),
    ("phi-3-mini-4k-instruct", {"layer_types": ["full_attention"] * 32}, "layer_types"),
    ("phi-3-mini-4k-instruct", {"attention_chunk_size": 1024}, "attention_chunk_size"),
]


@pytest.mark.parametrize(("name", "change", "field"), BAD)
def test_bad_configs_are_refused_in_one_line(write_config, name, change, field):
    raw = {**raw_of(name), **change}
    with pytest.raises(ConfigError) as info:
        parse_config(raw)
    assert info.value.field == field
    assert_refused(run_cli("count", str(write_config(raw))), field)


def test_windows_off_make_the_window_key_harmless():
    """With use_sliding_window false transformers drops sliding_window: even 1 is then read and ignored."""
    c = parse_config({**raw_of("qwen2-7b"), "sliding_window": 1})
    assert "W" not in c.sizes and c["L_w"] == 0
    assert transformers.Qwen2Config(sliding_window=1).sliding_window is None
