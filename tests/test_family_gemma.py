"""Gemma (``GemmaForCausalLM``): LLaMA's tensors with head_dim ≠ H/A, a tied head, (1 + w) RMSNorm gains.

gemma-7b (``data/models/gemma-7b.json``, google/gemma-7b's published config.json) against transformers on the
meta device: names, shapes, total, FLOPs; the cache of a tiny real model; malformed configs refused in one line
as transformers refuses them; unusual ones it builds counted, and refused by flops/memory only where it cannot run.
(The registry-wide tests of ``test_families.py``, ``test_crosscheck_transformers.py`` and ``test_flops.py``
cover Gemma's random configs too.)
"""

from __future__ import annotations

import json

import pytest

from helpers import ConfigError, count_model, load_config, param_table, parse_config
from helpers.config import MODELS_DIR
from helpers.flops import forward_flops, max_seq_len
from helpers.memory import kv_cache_bytes

from .conftest import (
    assert_answered_where_transformers_runs, assert_refused, forward_error, hf_model, run_cli,
)
from .strategies import TINY

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
transformers.logging.set_verbosity_error()

RAW = json.loads((MODELS_DIR / "gemma-7b.json").read_text())



def test_gemma_7b_is_what_transformers_builds():
    c = load_config("gemma-7b")
    model = hf_model(RAW)
    assert [(p.name, p.shape) for p in param_table(c)] == [(n, tuple(p.shape)) for n, p in model.named_parameters()]
    assert count_model(c).total == sum(p.numel() for p in model.parameters()) == 8_537_680_896
    # 16 heads of 256: the query projection is 4096 wide for a hidden size of 3072
    assert (c["H"], c["A"], c["d_k"], c["A_kv"], max_seq_len(c)) == (3072, 16, 256, 16, None)
    assert model.model.layers[0].self_attn.q_proj.weight.shape == (4096, 3072)
    assert c.flags["tie_word_embeddings"] and "lm_head.weight" not in dict(model.named_parameters())
    from torch.utils.flop_counter import FlopCounterMode

    with FlopCounterMode(display=False) as counter:
        model(torch.zeros(1, 128, dtype=torch.long, device="meta"), use_cache=True)
    assert counter.get_total_flops() == forward_flops(c, 1, 128).forward


def test_gemma_heads_need_not_divide_the_hidden_size():
    """transformers builds Gemma with H = 12 and 5 heads of 6 (head_dim alone sizes them): so do we."""
    raw = {**TINY["gemma"], "hidden_size": 12, "num_attention_heads": 5, "num_key_value_heads": 1}
    c = parse_config(raw)
    model = hf_model(raw)
    assert [(p.name, p.shape) for p in param_table(c)] == [(n, tuple(p.shape)) for n, p in model.named_parameters()]


@pytest.mark.parametrize("S", [1, 5, 9])
def test_gemma_cache_is_every_token_of_every_layer(S):
    c = parse_config(TINY["gemma"])
    model = hf_model(TINY["gemma"], "cpu").eval()
    with torch.no_grad():
        cache = model(input_ids=torch.randint(0, c["V"], (2, S)), use_cache=True).past_key_values
    assert {tuple(layer.keys.shape) for layer in cache.layers} == {(2, c["A_kv"], S, c["d_k"])}
    measured = sum(t.numel() * t.element_size() for layer in cache.layers for t in (layer.keys, layer.values))
    assert measured == kv_cache_bytes(c, 2, S, "fp32")


GEMMA_BAD = [  # transformers refuses each too (tested below)
    ({"num_key_value_heads": None}, "num_key_value_heads"),  # an int field in GemmaConfig
    ({"head_dim": 0}, "head_dim"),
    ({"head_dim": None}, "head_dim"),  # transformers would build heads of None
    ({"num_attention_heads": 0}, "num_attention_heads"),
    ({"pad_token_id": 256000}, "pad_token_id"),  # not a row of the token table
    ({"tie_word_embeddings": "yes"}, "tie_word_embeddings"),
]


@pytest.mark.parametrize(("change", "field"), GEMMA_BAD)
def test_gemma_bad_configs_are_refused_in_one_line(write_config, change, field):
    raw = {**RAW, **change}
    with pytest.raises(ConfigError) as info:
        parse_config(raw)
    assert info.value.field == field
    assert_refused(run_cli("count", str(write_config(raw))), field)
    with pytest.raises(Exception):  # noqa: B017 - transformers' own refusal, whatever its kind
        hf_model(raw)


GEMMA_BUILT = [  # (change, the key flops and memory refuse, the key memory alone refuses; None: they answer)
    ({"num_key_value_heads": 3}, "num_key_value_heads", None),  # 16 query heads do not share 3 key/value heads
    ({"sliding_window": 4096}, None, None),  # a stray key GemmaConfig keeps: the cache keeps a window (below)
    ({"layer_types": ["sliding_attention"] * 28}, None, "layer_types"),  # windowed layers, no window: the cache fails
    ({"attention_chunk_size": 1024}, None, None),
]


@pytest.mark.parametrize(("change", "forward", "cache"), GEMMA_BUILT)
def test_gemma_unusual_configs_are_counted_and_refused_only_where_transformers_fails(write_config, change, forward,
                                                                                     cache):
    """transformers builds each: count answers, tensor by tensor; flops and memory refuse (one line naming the key)
    exactly where transformers' forward pass fails, and answer its FLOPs where it runs."""
    raw = {**RAW, **change}
    assert_answered_where_transformers_runs(raw, write_config(raw), forward, cache)


def test_windowed_layers_without_a_window_run_without_a_cache():
    """Gemma's config has no ``sliding_window``: layers listed as windowed run (FLOPs answered), its cache fails."""
    raw = {**TINY["gemma"], "layer_types": ["sliding_attention"] * 2}
    assert forward_error(raw, "cpu", use_cache=False) == forward_flops(parse_config(raw), 1, 3).forward
    assert isinstance(forward_error(raw, "cpu"), AttributeError)


def test_a_stray_sliding_window_really_changes_transformers_cache():
    """GemmaConfig keeps a stray ``sliding_window`` and DynamicCache obeys it: the engine's cache follows."""
    raw = {**TINY["gemma"], "sliding_window": 3}
    model = hf_model(raw, "cpu").eval()
    with torch.no_grad():
        cache = model(input_ids=torch.zeros(1, 7, dtype=torch.long), use_cache=True).past_key_values
    assert {layer.keys.shape[-2] for layer in cache.layers} == {2}
    held = sum(t.numel() * t.element_size() for layer in cache.layers for t in (layer.keys, layer.values))
    assert kv_cache_bytes(parse_config(raw), 1, 7, "fp32") == held
