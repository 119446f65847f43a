"""Llama 4's language model: exact against transformers' ``Llama4ForCausalLM``, tensor by tensor.

The shipped configs (``data/models/llama-4-maverick-17b-128e-text.json``, ``llama-4-scout-17b-16e-text.json``: the
published text configs) and random small ones: names, shapes and total equal to transformers' class on the meta
device; the active count (the cards' "17B active": the language model with both tables, less the E − k routed
experts a token skips); the iRoPE layers (NoPE and full every 4th layer, rotary and chunked the others) read as the
config class reads them; FLOPs equal to ``FlopCounterMode`` on tiny real models once transformers' surplus is added
(it runs every token through all E experts, ``unrouted_flops``); the KV cache equal to the bytes transformers' cache
holds (a chunked layer keeps ``W_c − 1`` tokens once S passes the chunk).
"""

from __future__ import annotations

import contextlib
import io
import json

import pytest
from hypothesis import given

from helpers import count_model, load_config, param_table, parse_config
from helpers.cli import main as cli_main
from helpers.config import raw_config
from helpers.families.base import layer_runs
from helpers.families.llama4_text import unrouted_flops
from helpers.flops import forward_flops
from helpers.memory import kv_cache_bytes
from helpers.params import evaluate

from .conftest import assert_counted_as_built, forward_error, hf_model
from .strategies import STRATEGIES, TINY
from .test_family_gpt_oss import RANDOM, real, table

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
transformers.logging.set_verbosity_error()
from torch.utils.flop_counter import FlopCounterMode  # noqa: E402

# transformers' meta build of the published configs, and the active parameters (both tables counted)
SHIPPED = {"llama-4-maverick-17b-128e-text": (400_711_848_960, 17_184_691_200),
           "llama-4-scout-17b-16e-text": (107_769_861_120, 17_172_894_720)}


def run(model, B: int, S: int):
    """FlopCounterMode's total for one forward pass on B × S random tokens, and the cache it leaves."""
    ids = torch.randint(0, model.config.vocab_size, (B, S), generator=torch.Generator().manual_seed(1))
    with torch.no_grad(), FlopCounterMode(display=False) as counter:
        out = model(ids, use_cache=True)
    return counter.get_total_flops(), out.past_key_values


def held(cache) -> int:
    return sum(t.numel() * t.element_size() for layer in cache.layers for t in (layer.keys, layer.values))


def surplus(c, B: int, S: int) -> int:
    return evaluate(unrouted_flops(c), c, B=B, S=S)


def cli(*args: str) -> tuple[int, str, str]:
    """``python -m helpers ARGS`` run in this process (a subprocess per call would double this file's time)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = cli_main(list(args))
    return status, out.getvalue(), err.getvalue()


def answered(result: tuple[int, str, str], refused: str | None) -> None:
    """Answered (exit 0), or refused in one line ``error: REFUSED: ...`` (exit 2, nothing on stdout)."""
    status, out, err = result
    if refused is None:
        assert status == 0, err
    else:
        assert (status, out, len(err.splitlines())) == (2, "", 1) and err.startswith(f"error: {refused}: "), err


@pytest.mark.parametrize(("name", "expected"), SHIPPED.items())
def test_published_config_is_what_transformers_builds(name, expected):
    total, active = expected
    c = load_config(name)
    model = hf_model(raw_config(name))
    assert [(p.name, p.shape) for p in param_table(c)] == table(model)
    counted = count_model(c)
    assert counted.total == sum(p.numel() for p in model.parameters()) == total
    assert counted.active == active
    # active: the total less E − k experts (3·H·I each) in each of the L_e sparse layers
    E, k, H, I = c["E"], c["k"], c["H"], c["I"]
    assert counted.total - counted.active == c["L_e"] * (E - k) * 3 * H * I
    # the cards' "17B active" keeps both tables: without the input table the language model uses 16.1B
    assert round(active / 1e9) == 17 and round((active - c["V"] * c["H"]) / 1e9) == 16
    doc = json.loads(cli("count", name, "--json")[1])
    assert (doc["total"], doc["active"]) == (total, active)


def test_maverick_alternates_dense_and_sparse_layers_scout_is_sparse_everywhere():
    maverick, scout = load_config("llama-4-maverick-17b-128e-text"), load_config("llama-4-scout-17b-16e-text")
    model = hf_model(raw_config("llama-4-maverick-17b-128e-text"))
    assert (maverick["L_e"], maverick["s"], scout["L_e"], scout["s"]) == (24, 2, 48, 1)
    assert [layer.is_moe_layer for layer in model.model.layers] == [i % 2 == 1 for i in range(48)]
    dense, sparse = (dict(model.model.layers[i].named_parameters()) for i in (0, 1))
    H, I, I_mlp, E = maverick["H"], maverick["I"], maverick["I_mlp"], maverick["E"]
    assert dense["feed_forward.gate_proj.weight"].shape == (I_mlp, H) == (16384, 5120)
    assert sparse["feed_forward.experts.gate_up_proj"].shape == (E, H, 2 * I)  # transposed: in × out
    assert sparse["feed_forward.experts.down_proj"].shape == (E, I, H)
    assert sparse["feed_forward.router.weight"].shape == (E, H) and "feed_forward.router.bias" not in sparse
    assert sparse["feed_forward.shared_expert.down_proj.weight"].shape == (H, I)
    # the L2 QK-norm has no parameter: nothing but the projections in the attention. Maverick's config turns it off
    # (use_qk_norm: false); Scout's rotary layers apply it, its NoPE layers do not
    assert not any("norm" in n for n in sparse if n.startswith("self_attn."))
    assert not any(hasattr(layer.self_attn, "qk_norm") for layer in model.model.layers)
    scout_layers = hf_model(raw_config("llama-4-scout-17b-16e-text")).model.layers
    assert scout_layers[0].self_attn.qk_norm is not None and not hasattr(scout_layers[3].self_attn, "qk_norm")


@pytest.mark.parametrize("name", SHIPPED)
def test_irope_layers_as_the_config_class_reads_them(name):
    c = load_config(name)
    theirs = transformers.AutoConfig.for_model(**raw_config(name))
    assert c.lists["rope"] == tuple(theirs.no_rope_layers) == tuple(int((i + 1) % 4 != 0) for i in range(48))
    types = theirs.layer_types
    assert c.lists["cache"] == (types.count("full_attention"), 0, types.count("chunked_attention")) == (12, 0, 36)
    assert (c["W_c"], c["L_c"]) == (8192, 36)
    # at 128K tokens a NoPE layer holds every token, a chunked one 8,191: the cache, in bf16, B = 1
    S = 131072
    assert kv_cache_bytes(c, 1, S, "bf16") == 2 * 2 * c["A_kv"] * c["d_k"] * (12 * S + 36 * 8191)


@pytest.mark.parametrize("S", [1, 3, 4, 5, 9])
def test_tiny_cache_keeps_chunk_minus_one_tokens_on_chunked_layers(S):
    raw, B, W_c = TINY["llama4_text"], 2, 4
    _, cache = run(real(raw), B, S)
    assert [layer.keys.shape[-2] for layer in cache.layers] == [min(S, W_c - 1)] * 3 + [S]  # layer 3: NoPE, full
    assert held(cache) == kv_cache_bytes(parse_config(raw), B, S, "fp32")


@pytest.mark.parametrize(("B", "S"), [(1, 1), (2, 5)])
def test_tiny_flops_are_the_routed_model_and_transformers_runs_every_expert(B, S):
    """The engine counts k experts per token; transformers' Llama4TextMoe multiplies all E (weighing the unrouted
    by 0): FlopCounterMode on it counts exactly 6·L_e·B·S·(E − k)·H·I more. With k = E the two agree."""
    raw = TINY["llama4_text"]
    c = parse_config(raw)
    measured, _ = run(real(raw), B, S)
    flops = forward_flops(c, B, S)
    assert measured == flops.forward + surplus(c, B, S)
    assert surplus(c, B, S) == 6 * 2 * B * S * (4 - 1) * 16 * 8
    every = {**raw, "num_experts_per_tok": 4}
    assert surplus(parse_config(every), B, S) == 0
    assert run(real(every), B, S)[0] == forward_flops(parse_config(every), B, S).forward


@given(raw=STRATEGIES["llama4_text"])
@RANDOM
def test_random_configs(raw):
    c = parse_config(raw)
    assert [(p.name, p.shape) for p in param_table(c)] == table(hf_model(raw))
    model = real(raw)
    assert count_model(c).total == sum(p.numel() for p in model.parameters())
    for B, S in ((1, 1), (2, 5)):
        measured, cache = run(model, B, S)
        assert measured == forward_flops(c, B, S).forward + surplus(c, B, S)
        assert held(cache) == kv_cache_bytes(c, B, S, "fp32")


@pytest.mark.parametrize(("L", "marked", "runs"), [
    (4, range(1, 4, 2), [(range(0, 1), False), (range(1, 2), True), (range(2, 3), False), (range(3, 4), True)]),
    (10**7, range(0, 10**7), [(range(0, 10**7), True)]),  # Scout's layout at any depth: one run, no loop
    (5, (0, 1, 4), [(range(0, 2), True), (range(2, 4), False), (range(4, 5), True)]),
    (3, (), [(range(0, 3), False)]),
])
def test_layer_runs(L, marked, runs):
    assert layer_runs(L, marked) == runs


# --- how Llama4TextConfig reads its lists: what builds but cannot run (what it refuses: test_family_todays_decoders) ---

# (change, the key flops refuses, the key memory refuses beyond it; None: they answer)
BUILT = [
    ({"interleave_moe_layer_step": 0, "moe_layers": [0, 3]}, None, None),  # the list wins: the step is not read
    ({"moe_layers": [-1, 2, 2, 9]}, None, None),  # indices outside the stack match no layer
    ({"moe_layers": []}, None, None),  # every layer dense
    ({"interleave_moe_layer_step": -1}, None, None),  # range(−2, L, −1): no sparse layer
    ({"no_rope_layers": []}, None, None),  # an empty list reads as absent
    ({"no_rope_layers": [1, 0, 1, 0, 1], "layer_types": ["full_attention"] * 4}, None, None),  # longer, typed
    ({"head_dim": 3}, "head_dim", None),  # the rotary layers pair the dimensions
    ({"head_dim": 3, "no_rope_layers": [0, 0, 0, 0]}, None, None),  # ... no layer rotates: it runs
    ({"attention_chunk_size": None}, "attention_chunk_size", None),  # the chunked mask is built for every input
    ({"attention_chunk_size": 0}, "attention_chunk_size", None),
    ({"attention_chunk_size": -1}, None, "attention_chunk_size"),  # runs; the cache's slice keeps tokens from the start
    ({"attention_chunk_size": 1}, None, None),  # the slice [-0:] keeps every token, as a full layer
    ({"layer_types": ["sliding_attention"] * 4, "sliding_window": 3}, "layer_types", None),  # no such mask
    ({"num_experts_per_tok": 5}, "num_experts_per_tok", None),  # top-5 of 4
    ({"num_experts_per_tok": 0}, None, None),  # the router and the shared expert alone
    ({"num_local_experts": 0, "num_experts_per_tok": 0}, "num_local_experts", None),
    ({"num_local_experts": 0, "num_experts_per_tok": 0, "moe_layers": []}, None, None),  # no sparse layer to fail
    ({"num_key_value_heads": 3}, "num_key_value_heads", None),
    ({"hidden_size": 18}, None, None),  # head_dim sizes the heads: A need not divide H
    ({"tie_word_embeddings": True}, None, None),
]


@pytest.mark.parametrize(("change", "forward", "cache"), BUILT)
def test_built_configs_are_counted_and_refused_only_where_transformers_fails(change, forward, cache, write_config):
    """transformers builds each: count answers, tensor by tensor; on 1 × 3 tokens FlopCounterMode equals the engine
    (with transformers' surplus) where it runs, and flops and memory refuse naming the key exactly where it fails."""
    raw = {**TINY["llama4_text"], **change}
    c = assert_counted_as_built(raw)
    ran = forward_error(raw, "cpu")
    if forward is None:
        assert ran == forward_flops(c, 1, 3).forward + surplus(c, 1, 3)
    else:
        assert isinstance(ran, Exception)
    path = str(write_config(raw))
    answered(cli("count", path), None)
    answered(cli("flops", "--batch", "1", "--seq-len", "16", path), forward)
    answered(cli("memory", path), forward or cache)
