"""Qwen2, Qwen3 and Phi-3 against transformers: shipped configs counted, FLOPs and KV caches measured, bad configs refused.

The registry tests (``tests/test_families.py``, ``tests/test_crosscheck_transformers.py``, ``tests/test_flops.py``)
already run these families on random configs; here: the real configs, the keys that change the cache but no
tensor (Qwen's ``use_sliding_window`` / ``max_window_layers`` / ``layer_types``, Phi-3's ``sliding_window``), the
keys that change no tensor at all (``partial_rotary_factor``, ``rope_scaling``), one-line refusals of what transformers
refuses, and the unusual configs it builds: counted, refused by flops/memory only where it cannot run them.
"""

from __future__ import annotations

import json

import pytest

from helpers import ConfigError, count_model, load_config, param_table, parse_config
from helpers.config import MODELS_DIR
from helpers.flops import forward_flops
from helpers.memory import kv_cache_bytes, kv_cache_formula

from .conftest import (
    assert_answered_where_transformers_runs, assert_refused, forward_error, hf_model, run_cli,
)
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

BAD = [  # transformers refuses each too (tested below)
    ("qwen2-7b", {"head_dim": None}, "head_dim"),
    ("qwen2-7b", {"head_dim": 0}, "head_dim"),
    ("qwen2-7b", {"use_sliding_window": "yes"}, "use_sliding_window"),
    ("qwen2-7b", {"layer_types": ["full_attention"] * 27}, "layer_types"),
    ("qwen2-7b", {"layer_types": "full_attention"}, "layer_types"),
    ("qwen3-8b", {"head_dim": None}, "head_dim"),
    ("qwen3-8b", {"attention_bias": 1}, "attention_bias"),
    ("phi-3-mini-4k-instruct", {"head_dim": None}, "head_dim"),
    ("phi-3-mini-4k-instruct", {"pad_token_id": 32064}, "pad_token_id"),
]


@pytest.mark.parametrize(("name", "change", "field"), BAD)
def test_bad_configs_are_refused_in_one_line(write_config, name, change, field):
    raw = {**raw_of(name), **change}
    with pytest.raises(ConfigError) as info:
        parse_config(raw)
    assert info.value.field == field
    assert_refused(run_cli("count", str(write_config(raw))), field)
    with pytest.raises(Exception):  # noqa: B017 - transformers' own refusal, whatever its kind
        hf_model(raw)


BUILT = [  # (name, change, the key flops and memory refuse, the key memory alone refuses; None: they answer)
    ("qwen2-7b", {"num_key_value_heads": 3}, "num_key_value_heads", None),  # 28 query heads do not share 3
    ("qwen2-7b", {"hidden_size": 3585}, None, None),  # no head_dim: d_k = H // A = 128, q_proj 3584 × 3585
    ("qwen2-7b", {"max_window_layers": -1}, None, None),  # windows off: read and ignored
    ("qwen2-7b", {"use_sliding_window": True, "sliding_window": 1, "max_window_layers": 0}, None, None),  # keeps all
    ("qwen2-7b", {"layer_types": ["chunked_attention"] * 28}, "layer_types", None),  # no mask for chunked layers
    ("qwen2-7b", {"layer_types": ["sliding_attention"] * 28}, "layer_types", None),  # use_sliding_window is false
    ("qwen3-8b", {"num_key_value_heads": 5}, "num_key_value_heads", None),
    ("qwen3-8b", {"num_hidden_layers": 0}, None, None),  # the token table, the final norm and the head
    ("phi-3-mini-4k-instruct", {"num_key_value_heads": 5}, "num_key_value_heads", None),
    ("phi-3-mini-4k-instruct", {"hidden_size": 3073}, None, None),  # d_k = 3073 // 32 = 96
    ("phi-3-mini-4k-instruct", {"sliding_window": 1}, None, None),  # the cache's slice [-0:] keeps every token
    ("phi-3-mini-4k-instruct", {"layer_types": ["full_attention"] * 32}, None, None),
    ("phi-3-mini-4k-instruct", {"attention_chunk_size": 1024}, None, None),  # changes nothing: the window rules
]


@pytest.mark.parametrize(("name", "change", "forward", "cache"), BUILT)
def test_unusual_configs_are_counted_and_refused_only_where_transformers_fails(write_config, name, change, forward,
                                                                               cache):
    """transformers builds each: count answers, tensor by tensor; flops and memory refuse (one line naming the key)
    exactly where transformers' forward pass fails, and answer its FLOPs where it runs."""
    raw = {**raw_of(name), **change}
    assert_answered_where_transformers_runs(raw, write_config(raw), forward, cache)


@pytest.mark.parametrize(("model_type", "kind", "error"), [
    ("qwen2", "sliding_attention", ValueError), ("qwen2", "chunked_attention", KeyError),
    ("qwen3", "sliding_attention", ValueError), ("qwen3", "chunked_attention", KeyError),
])
def test_qwen_masks_only_full_and_windowed_layers(model_type, kind, error):
    """Qwen2/Qwen3 build one mask per layer type, full and sliding only: windowed layers without a window, or chunked
    ones, fail the forward pass itself (no cache needed), so flops refuses them too (its line names layer_types)."""
    raw = {**TINY["qwen2"], "model_type": model_type, "use_sliding_window": False, "layer_types": [kind] * 2}
    assert isinstance(forward_error(raw, "cpu", use_cache=False), error)
    with pytest.raises(ConfigError) as info:
        parse_config(raw).check_runs()
    assert info.value.field == "layer_types"


def test_windows_off_make_the_window_key_harmless():
    """With use_sliding_window false transformers drops sliding_window: even 1 is then read and ignored."""
    c = parse_config({**raw_of("qwen2-7b"), "sliding_window": 1})
    assert "W" not in c.sizes and c["L_w"] == 0
    assert transformers.Qwen2Config(sliding_window=1).sliding_window is None
