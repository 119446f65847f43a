"""The KV cache of the LLaMA-like decoders, DeepSeek-V3, V2 and GLM-4.5 == what transformers' ``DynamicCache`` holds.

For every config of :data:`tests.strategies.WIDE` of these families (windows, chunks, ``layer_types``, windows of 1,
null windows, key/value heads that do not divide the query heads ...) that transformers builds: either its forward
pass with a cache runs (CPU, B = 2, a few tokens) and :func:`helpers.memory.kv_cache_bytes` equals the bytes of the
keys and values its cache holds, or it fails and the engine refuses the cache in one ``ConfigError`` naming the key.
The seed is fixed (``derandomize=True``).
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from helpers import count_model, parse_config
from helpers.config import ConfigError
from helpers.flops import forward_flops
from helpers.memory import kv_cache_bytes

from .conftest import assert_counted_as_built, forward_error, hf_model
from .strategies import TINY, WIDE

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
transformers.logging.set_verbosity_error()

DECODERS = ["llama", "mistral", "mixtral", "qwen2", "qwen3", "qwen3_moe", "phi3", "gemma", "gemma2", "deepseek_v3",
            "glm4_moe", "deepseek_v2", "llama4_text"]
CACHE = settings(max_examples=8, deadline=None, derandomize=True, database=None,
                 suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


@pytest.mark.parametrize("model_type", DECODERS)
@given(data=st.data())
@CACHE
def test_kv_cache_is_what_transformers_holds(model_type, data):
    raw = data.draw(WIDE[model_type], label="config")
    try:
        c = parse_config(raw)
    except ConfigError:
        return  # tests/test_fuzz.py checks that transformers refuses it too
    if count_model(c).total > 500_000:
        return
    try:
        model = hf_model(raw, "cpu").eval()
    except Exception:  # noqa: BLE001 -- transformers refuses: the count property covers it
        return
    B, S = 2, data.draw(st.integers(1, 9), label="S")
    torch.manual_seed(0)
    try:
        with torch.no_grad():
            cache = model(input_ids=torch.randint(0, c["V"], (B, S)), use_cache=True).past_key_values
        measured = sum(t.numel() * t.element_size() for layer in cache.layers
                       for t in (layer.keys, layer.values) if t is not None)
    except Exception as error:  # noqa: BLE001 -- the forward pass or its cache fails: the engine must refuse
        note(f"transformers fails: {type(error).__name__}: {error}")
        with pytest.raises(ConfigError):
            kv_cache_bytes(c, B, S, "fp32")
        return
    assert kv_cache_bytes(c, B, S, "fp32") == measured


@pytest.mark.parametrize("window", [0, -1, -5])
@pytest.mark.parametrize("model_type", ["mistral", "gemma2"])
def test_a_window_below_one_is_counted_run_and_its_cache_refused(model_type, window):
    """sliding_window ≤ 0: the config class keeps it, the model builds (counted) and runs without a cache (FLOPs
    answered); its cache's slice [-W + 1:] keeps tokens from the start and the cached forward pass fails on every
    length but S = 2 − W: the engine refuses the cache, naming the key."""
    raw = {**TINY[model_type], "sliding_window": window}
    c = assert_counted_as_built(raw)
    assert forward_error(raw, "cpu", use_cache=False) == forward_flops(c, 1, 3).forward
    c.check_runs()
    with pytest.raises(ConfigError) as info:
        kv_cache_bytes(c, 2, 3, "fp32")
    assert info.value.field == "sliding_window"
    model = hf_model(raw, "cpu").eval()
    ran = []
    for S in range(1, 10):
        try:
            with torch.no_grad():
                model(input_ids=torch.zeros(1, S, dtype=torch.long), use_cache=True)
            ran.append(S)
        except RuntimeError:
            pass
    assert ran == [2 - window]


@pytest.mark.parametrize("model_type", ["llama", "llama4_text"])
def test_chunked_layers_of_a_chunk_of_one_keep_every_token(model_type):
    """``attention_chunk_size: 1`` with layers typed ``chunked_attention``: the cache's slice ``[-0:]`` keeps every
    token, as a full layer's; the engine counts them so (and keeps W_c for the check of its runs)."""
    raw = {**TINY[model_type], "attention_chunk_size": 1, "num_hidden_layers": 2,
           "layer_types": ["chunked_attention", "full_attention"]}
    c = parse_config(raw)
    assert c.lists["cache"] == (2, 0, 0) and "cache" not in c.cannot_run
    torch.manual_seed(0)
    with torch.no_grad():
        cache = hf_model(raw, "cpu").eval()(input_ids=torch.zeros(2, 5, dtype=torch.long), use_cache=True).past_key_values
    assert sum(t.numel() * t.element_size() for layer in cache.layers for t in (layer.keys, layer.values)) == \
        kv_cache_bytes(c, 2, 5, "fp32")
