"""OLMo 2, SmolLM3 and Gemma 3's text model: exact against transformers, tensor by tensor.

For each, the shipped config (``data/models/``: allenai/OLMo-2-1124-7B, HuggingFaceTB/SmolLM3-3B,
google/gemma-3-1b-it, written from their published ``config.json``) and random small ones: names, shapes and total
equal to transformers' class on the meta device; FLOPs equal to ``FlopCounterMode`` with eager attention; the KV
cache equal to the bytes transformers' cache holds after S tokens, S past the window included (a windowed layer
keeps ``W − 1`` tokens); what is new in each (OLMo 2's QK-norm over the whole projection and norms after the
sub-layers, SmolLM3's NoPE layers, Gemma 3's 5:1 local/global layers and QK-norm) read as transformers reads it.
The configs transformers refuses are refused in one line naming the key, Llama 4's (text) among them
(``tests/test_family_llama4_text.py`` holds the rest of that family).
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

from helpers import count_model, load_config, param_table, parse_config
from helpers.config import raw_config
from helpers.flops import forward_flops
from helpers.memory import kv_cache_bytes
from helpers.params import LAYER_NORM

from .conftest import (assert_refused_as_transformers_refuses, assert_runs_where_transformers_runs, forward_error,
                       hf_model, run_cli)
from .strategies import STRATEGIES, TINY

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
transformers.logging.set_verbosity_error()
from torch.utils.flop_counter import FlopCounterMode  # noqa: E402

# the totals ../shared/REFERENCE.md gives for a meta build of each published config
SHIPPED = {"olmo-2-1124-7b": 7_298_617_344, "smollm3-3b": 3_075_098_624, "gemma-3-1b-it": 999_885_952}
RANDOM = settings(max_examples=15, deadline=None, derandomize=True, database=None,
                  suppress_health_check=[HealthCheck.too_slow])


def table(model) -> list[tuple[str, tuple[int, ...]]]:
    return [(n, tuple(p.shape)) for n, p in model.named_parameters()]


def measured_flops(model, B: int, S: int) -> int:
    with torch.no_grad(), FlopCounterMode(display=False) as counter:
        model(torch.zeros(B, S, dtype=torch.long, device=next(model.parameters()).device), use_cache=True)
    return counter.get_total_flops()


def cache_after(raw: dict, B: int, S: int):
    """The cache a tiny real model (CPU, fp32, eager) holds after reading S tokens: (tokens per layer, bytes)."""
    torch.manual_seed(0)
    model = hf_model(raw, "cpu").eval()
    with torch.no_grad():
        cache = model(input_ids=torch.randint(0, raw["vocab_size"], (B, S)), use_cache=True).past_key_values
    kept = [layer.keys.shape[-2] for layer in cache.layers]
    return kept, sum(t.numel() * t.element_size() for layer in cache.layers for t in (layer.keys, layer.values))


# --- the published configs ------------------------------------------------------------------------------------

@pytest.mark.parametrize(("name", "total"), SHIPPED.items())
def test_published_config_is_what_transformers_builds(name, total):
    c = load_config(name)
    model = hf_model(raw_config(name))
    assert [(p.name, p.shape) for p in param_table(c)] == table(model)
    assert count_model(c).total == sum(p.numel() for p in model.parameters()) == total
    assert forward_flops(c, 1, 16).forward == measured_flops(model, 1, 16)


def test_olmo2_norms_follow_the_sublayers_and_span_the_projection():
    c = load_config("olmo-2-1124-7b")
    model = hf_model(raw_config("olmo-2-1124-7b"))
    layer = dict(model.model.layers[0].named_parameters())
    assert "input_layernorm.weight" not in layer  # no norm before a sub-layer
    assert layer["self_attn.q_norm.weight"].shape == (c["A"] * c["d_k"],)  # 4096: the whole projection, not d_k
    assert layer["self_attn.k_norm.weight"].shape == (c["A_kv"] * c["d_k"],)
    norms = sum(p.numel() for n, p in model.named_parameters() if "norm" in n)
    assert count_model(c).components[LAYER_NORM] == norms == c["L"] * (2 * c["H"] + 2 * 4096) + c["H"]


def test_smollm3_nope_layers_are_transformers_own():
    c = load_config("smollm3-3b")
    model = hf_model(raw_config("smollm3-3b"))
    assert list(c.lists["rope"]) == [layer.self_attn.use_rope for layer in model.model.layers]
    assert [i for i, r in enumerate(c.lists["rope"]) if not r] == list(range(3, 36, 4))  # every 4th: 9 NoPE layers
    assert "lm_head.weight" not in dict(model.named_parameters())  # tied to the token table


@pytest.mark.parametrize("change", [{}, {"no_rope_layer_interval": 3}, {"no_rope_layers": [0, 1, 1, 0, 1]}])
def test_smollm3_rope_list_follows_the_config(change):
    raw = {**TINY["smollm3"], "num_hidden_layers": 5, **change}
    raw.pop("use_sliding_window")
    model = hf_model(raw)
    assert list(parse_config(raw).lists["rope"]) == [layer.self_attn.use_rope for layer in model.model.layers]


def test_gemma3_five_local_layers_to_one_global():
    c = load_config("gemma-3-1b-it")
    model = hf_model(raw_config("gemma-3-1b-it"))
    types = model.config.layer_types
    assert (c["L_w"], c["L_g"], c["W"]) == (types.count("sliding_attention"), types.count("full_attention"), 512)
    assert (c["L_w"], c["L_g"]) == (22, 4)
    assert [i for i, t in enumerate(types) if t == "full_attention"] == [5, 11, 17, 23]
    layer = dict(model.model.layers[0].named_parameters())
    assert layer["self_attn.q_norm.weight"].shape == (c["d_k"],)  # per head, as Qwen3
    assert count_model(c).components[LAYER_NORM] == c["L"] * (4 * c["H"] + 2 * c["d_k"]) + c["H"]


# --- random small configs -------------------------------------------------------------------------------------

def _check_random(raw: dict) -> None:
    c = parse_config(raw)
    model = hf_model(raw)
    assert [(p.name, p.shape) for p in param_table(c)] == table(model)
    assert count_model(c).total == sum(p.numel() for p in model.parameters())
    for B, S in ((1, 1), (2, 5)):
        assert forward_flops(c, B, S).forward == measured_flops(model, B, S)


@given(raw=STRATEGIES["olmo2"])
@RANDOM
def test_random_olmo2_configs(raw):
    _check_random(raw)


@given(raw=STRATEGIES["smollm3"])
@RANDOM
def test_random_smollm3_configs(raw):
    _check_random(raw)


@given(raw=STRATEGIES["gemma3_text"])
@RANDOM
def test_random_gemma3_text_configs(raw):
    _check_random(raw)


# --- the cache, past the window -------------------------------------------------------------------------------

@pytest.mark.parametrize("S", [1, 3, 4, 5, 9])
def test_tiny_caches_keep_window_minus_one_tokens_on_windowed_layers(S):
    W = 4
    expected = {
        "olmo2": [S, S],  # no window: every token, every layer
        "smollm3": [S, S, S, min(S, W - 1)],  # the NoPE layer (3) is the windowed one (use_sliding_window)
        "gemma3_text": [min(S, W - 1), min(S, W - 1), S],  # pattern 3: two local layers, then a global one
    }
    for model_type, kept in expected.items():
        raw = TINY[model_type]
        assert cache_after(raw, 2, S) == (kept, kv_cache_bytes(parse_config(raw), 2, S, "fp32")), model_type


@pytest.mark.parametrize("S", [511, 512, 600])
def test_gemma_3_1b_cache_pattern_past_its_512_token_window(S):
    """gemma-3-1b-it's 26 layers and 512-token window, its widths shrunk to run on the CPU: local layers keep 511."""
    raw = {**raw_config("gemma-3-1b-it"), "vocab_size": 16, "hidden_size": 8, "num_attention_heads": 2,
           "head_dim": 4, "intermediate_size": 8}
    kept, measured = cache_after(raw, 1, S)
    assert kept == [S if (i + 1) % 6 == 0 else min(S, 511) for i in range(26)]
    assert measured == kv_cache_bytes(parse_config(raw), 1, S, "fp32")
    published = load_config("gemma-3-1b-it")
    per_token = 2 * published["A_kv"] * published["d_k"] * 2  # keys and values, fp16
    assert kv_cache_bytes(published, 1, S) == (22 * min(S, 511) + 4 * S) * per_token


# --- refusals: what transformers refuses or cannot run ---------------------------------------------------------

REFUSED = [  # (model_type, change, field): transformers raises too (config class or model init)
    ("smollm3", {"no_rope_layer_interval": 0}, "no_rope_layer_interval"),  # (i + 1) % 0
    ("smollm3", {"no_rope_layers": [1, 1, 1]}, "no_rope_layers"),  # one entry per layer read: 4 layers
    ("gemma3_text", {"sliding_window_pattern": 0}, "sliding_window_pattern"),
    ("gemma3_text", {"layer_types": ["chunked_attention"] * 3}, "layer_types"),  # no rotary base for it
    ("gemma3_text", {"hidden_size": 13}, "num_attention_heads"),  # validate_architecture: A divides H
    ("olmo2", {"head_dim": None}, "head_dim"),
    ("llama4_text", {"interleave_moe_layer_step": 0}, "interleave_moe_layer_step"),  # range(−1, L, 0)
    ("llama4_text", {"no_rope_layer_interval": 0}, "no_rope_layer_interval"),  # (i + 1) % 0
    # the interval is read even beside a list (Llama4TextConfig derives its default list first)
    ("llama4_text", {"no_rope_layer_interval": 0, "no_rope_layers": [1, 1, 1, 0]}, "no_rope_layer_interval"),
    ("llama4_text", {"no_rope_layers": [1, 1, 0]}, "no_rope_layers"),  # 3 layer types derived for 4 layers
    ("llama4_text", {"head_dim": 0}, "head_dim"),  # head_dim ** -0.5
    ("llama4_text", {"num_key_value_heads": None}, "num_key_value_heads"),  # an int field
    ("llama4_text", {"head_dim": 5}, "head_dim"),  # validate_rope: an odd head wider than 4
]


@pytest.mark.parametrize(("model_type", "change", "field"), REFUSED)
def test_refused_in_one_line_as_transformers_refuses(write_config, model_type, change, field):
    raw = {**TINY[model_type], **change}
    assert_refused_as_transformers_refuses(raw, field, write_config(raw))


def test_gemma3_without_a_window_is_counted_but_not_run(write_config):
    """``sliding_window: null`` builds; the model's sliding-window mask then fails: flops and memory refuse."""
    raw = {**TINY["gemma3_text"], "sliding_window": None}
    assert [(p.name, p.shape) for p in param_table(parse_config(raw))] == table(hf_model(raw))
    assert isinstance(forward_error(raw), Exception)
    assert_runs_where_transformers_runs(write_config(raw), "sliding_window", None)


# --- the command line -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", SHIPPED)
def test_cli_answers(name):
    count = run_cli("count", name)
    assert count.returncode == 0 and f"{SHIPPED[name]:,}" in count.stdout
    assert run_cli("flops", "--batch", "1", "--seq-len", "1024", name).returncode == 0
    assert run_cli("memory", "--batch", "1", "--seq-len", "1024", name).returncode == 0
