"""Gemma 2 (``Gemma2ForCausalLM``): four norms per layer, windowed and global layers alternating.

gemma-2-9b (``data/models/gemma-2-9b.json``, google/gemma-2-9b's published config.json) against transformers on
the meta device: names, shapes, total, FLOPs; the cache a tiny real model returns, layer by layer (windowed
layers keep the last W − 1 tokens, global layers every token); malformed configs refused in one line; unusual ones
transformers builds counted, and refused by flops/memory only where it cannot run them.
"""

from __future__ import annotations

import json

import pytest

from helpers import ConfigError, count_model, load_config, param_table, parse_config
from helpers.config import MODELS_DIR
from helpers.flops import forward_flops
from helpers.memory import kv_cache_bytes, kv_cache_formula
from helpers.params import LAYER_NORM

from .conftest import (
    assert_answered_where_transformers_runs, assert_refused, forward_error, hf_model, run_cli,
)
from .strategies import TINY

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
StrictDataclassError = pytest.importorskip("huggingface_hub.errors").StrictDataclassError
transformers.logging.set_verbosity_error()

RAW = json.loads((MODELS_DIR / "gemma-2-9b.json").read_text())



def test_gemma_2_9b_is_what_transformers_builds():
    c = load_config("gemma-2-9b")
    model = hf_model(RAW)
    assert [(p.name, p.shape) for p in param_table(c)] == [(n, tuple(p.shape)) for n, p in model.named_parameters()]
    assert count_model(c).total == sum(p.numel() for p in model.parameters()) == 9_241_705_984
    assert count_model(c).components[LAYER_NORM] == (4 * 42 + 1) * 3584  # four norms per layer, one at the end
    assert (c["d_k"], c["A_kv"], c["W"], c["L_w"], c["L_g"]) == (256, 8, 4096, 21, 21)
    assert model.config.layer_types[:2] == ["sliding_attention", "full_attention"]
    from torch.utils.flop_counter import FlopCounterMode

    with FlopCounterMode(display=False) as counter:
        model(torch.zeros(1, 128, dtype=torch.long, device="meta"), use_cache=True)
    assert counter.get_total_flops() == forward_flops(c, 1, 128).forward


@pytest.mark.parametrize("L", [1, 2, 3, 4])
@pytest.mark.parametrize("window", [2, 4, 6])
def test_gemma2_cache_alternates_windowed_and_global_layers(L, window):
    raw = {**TINY["gemma2"], "num_hidden_layers": L, "sliding_window": window}
    c = parse_config(raw)
    model = hf_model(raw, "cpu").eval()
    for S in (1, 3, window, 9):
        with torch.no_grad():
            cache = model(input_ids=torch.randint(0, c["V"], (2, S)), use_cache=True).past_key_values
        kept = [layer.keys.shape[-2] for layer in cache.layers]
        assert kept == [min(S, window - 1) if i % 2 == 0 else S for i in range(L)]
        measured = sum(t.numel() * t.element_size() for layer in cache.layers for t in (layer.keys, layer.values))
        assert measured == kv_cache_bytes(c, 2, S, "fp32")


def test_gemma_2_9b_cache_halves_past_the_window():
    c = load_config("gemma-2-9b")
    per_layer_token = 2 * c["A_kv"] * c["d_k"] * 2  # fp16 bytes
    assert kv_cache_formula(c) == "2*A_kv*d_k*(L_w*min(S, W - 1) + L_g*S)*B"
    assert kv_cache_bytes(c, 1, 100) == 42 * 100 * per_layer_token
    assert kv_cache_bytes(c, 1, 8192) == (21 * 4095 + 21 * 8192) * per_layer_token


GEMMA2_BAD = [
    ({"hidden_size": 3585}, "num_attention_heads"),  # Gemma2Config refuses heads that do not divide H
    ({"pad_token_id": -256001}, "pad_token_id"),
]


@pytest.mark.parametrize(("change", "field"), GEMMA2_BAD)
def test_gemma2_bad_configs_are_refused_in_one_line(write_config, change, field):
    raw = {**RAW, **change}
    with pytest.raises(ConfigError) as info:
        parse_config(raw)
    assert info.value.field == field
    assert_refused(run_cli("count", str(write_config(raw))), field)


GEMMA2_BUILT = [  # (change, the key flops and memory refuse, the key memory alone refuses; None: they answer)
    ({"sliding_window": 1}, None, None),  # the cache's slice [-0:] keeps every token: all layers global
    ({"sliding_window": None}, "sliding_window", None),  # builds; its windowed layers fail, cache or not (below)
    ({"num_key_value_heads": 3}, "num_key_value_heads", None),  # 16 query heads do not share 3 key/value heads
    ({"layer_types": ["full_attention"] * 42}, None, None),  # what re-saving writes, here all global
    ({"head_dim": 0}, "head_dim", None),  # q/k/v/o 0 wide (the rotary embedding H // A): its forward pass fails
    ({"head_dim": 0, "num_hidden_layers": 0}, None, None),  # no layer: nothing splits into heads
]


@pytest.mark.parametrize(("change", "forward", "cache"), GEMMA2_BUILT)
def test_gemma2_unusual_configs_are_counted_and_refused_only_where_transformers_fails(write_config, change, forward,
                                                                                      cache):
    """transformers builds each: count answers, tensor by tensor; flops and memory refuse (one line naming the key)
    exactly where transformers' forward pass fails, and answer its FLOPs where it runs."""
    raw = {**RAW, **change}
    assert_answered_where_transformers_runs(raw, write_config(raw), forward, cache)


def test_gemma2_refusals_are_transformers_own():
    """The heads must divide H and the window must be a number: transformers refuses or fails on both."""
    with pytest.raises(StrictDataclassError, match="validate_architecture"):
        transformers.Gemma2Config(hidden_size=18, num_attention_heads=4, head_dim=6)
    raw = {**TINY["gemma2"], "sliding_window": None}
    with pytest.raises(TypeError):
        hf_model(raw, "cpu")(input_ids=torch.zeros(1, 3, dtype=torch.long), use_cache=True)
    assert isinstance(forward_error(raw, "cpu", use_cache=False), ValueError)  # the sliding mask, with no cache
