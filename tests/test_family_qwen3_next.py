"""Qwen3-Next: exact against transformers, tensor by tensor, byte by byte of its cache.

The shipped config (``data/models/qwen3-next-80b-a3b.json``: Qwen/Qwen3-Next-80B-A3B-Instruct's published
``config.json``) and random small ones: names, shapes and total equal to ``Qwen3NextForCausalLM`` on the meta device;
the active count; FLOPs against ``FlopCounterMode`` on tiny real CPU models; the cache equal to every byte
transformers' cache holds after S tokens (keys and values of the full layers, the convolution state at the model's
dtype and the recurrent state in fp32 of the linear layers, constant in S); refusals in one line.

The gated delta rule. The engine counts it by its recurrence: 6·d_gk·d_gv FLOPs per token and value head (the state
read with the key, its rank-1 update, the read-out with the query). On a prefill, transformers runs its chunked torch
fallback (``torch_chunk_gated_delta_rule``, chunks of 64: the sequence padded to whole chunks, in-chunk key-key and
query-key products, the state's matmuls per chunk), which FlopCounterMode counts as
``G_v·B·⌈S/64⌉·(4·64²·d_gk + 2·64²·d_gv + 6·64·d_gk·d_gv)`` per linear layer (:func:`chunked_kernel`; its triangular
solve is not a matmul FlopCounterMode counts). The tests measure what FlopCounterMode counts inside that kernel and
assert: measured − kernel = engine − recurrence, i.e. everything else is exact, and the kernel equals that formula.
The difference, stated: for Qwen3-Next-80B-A3B on one sequence of 4,096 tokens the kernel does 695,784,701,952 FLOPs
where the recurrence is 463,856,467,968 (1.5×: 231,928,233,984 more); on one token it does 64 positions' worth,
10,871,635,968 against 113,246,208 (96×).
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings

from helpers import count_model, load_config, param_table, parse_config
from helpers.config import raw_config
from helpers.flops import NOTES, forward_flops
from helpers.memory import Memory, cache_parts, kv_cache_bytes, memory_json
from helpers.params import ATTENTION, DELTA_RULE, FEED_FORWARD, LINEAR_ATTENTION

from .conftest import (assert_counted_as_built, assert_refused, assert_refused_as_transformers_refuses, held_bytes,
                       hf_model, run_cli)
from .strategies import STRATEGIES, TINY

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
transformers.logging.set_verbosity_error()
from torch.utils.flop_counter import FlopCounterMode  # noqa: E402
from transformers.models.qwen3_next import modeling_qwen3_next  # noqa: E402

NAME, TOTAL = "qwen3-next-80b-a3b", 79_674_391_296  # ../shared/REFERENCE.md: the meta build's total
CHUNK = 64  # torch_chunk_gated_delta_rule's default chunk_size, as Qwen3NextGatedDeltaNet calls it
RANDOM = settings(max_examples=15, deadline=None, derandomize=True, database=None,
                  suppress_health_check=[HealthCheck.too_slow])


def table(model) -> list[tuple[str, tuple[int, ...]]]:
    return [(n, tuple(p.shape)) for n, p in model.named_parameters()]


def real(raw: dict, dtype=None):
    torch.manual_seed(0)
    model = hf_model(raw, "cpu").eval()
    return model if dtype is None else model.to(dtype)


def measured(model, B: int, S: int) -> tuple[int, int, object]:
    """FlopCounterMode on a prefill of B × S tokens with the cache on: (whole count, the part counted inside the
    chunked gated-delta-rule kernel, the cache)."""
    inside: list[int] = []
    chunked = modeling_qwen3_next.torch_chunk_gated_delta_rule

    def kernel(*args, **kwargs):
        before = counter.get_total_flops()
        result = chunked(*args, **kwargs)
        inside.append(counter.get_total_flops() - before)
        return result

    modeling_qwen3_next.torch_chunk_gated_delta_rule = kernel
    try:
        with torch.no_grad(), FlopCounterMode(display=False) as counter:
            out = model(torch.randint(0, model.config.vocab_size, (B, S)), use_cache=True)
    finally:
        modeling_qwen3_next.torch_chunk_gated_delta_rule = chunked
    return counter.get_total_flops(), sum(inside), out.past_key_values


def chunked_kernel(c, B: int, S: int) -> int:
    """What FlopCounterMode counts in transformers' chunked torch kernel, all linear layers: per value head and chunk
    of 64 (the sequence padded to whole chunks), k_β·kᵀ and q·kᵀ (2·64²·d_gk each), the in-chunk attention on the
    corrected values (2·64²·d_gv), and the state read twice and updated (3 × 2·64·d_gk·d_gv)."""
    chunks = -(-S // CHUNK)
    per_chunk = 4 * CHUNK**2 * c["d_gk"] + 2 * CHUNK**2 * c["d_gv"] + 6 * CHUNK * c["d_gk"] * c["d_gv"]
    return c["L_l"] * B * c["G_v"] * chunks * per_chunk


def check_flops(raw: dict, c, B: int, S: int, model=None) -> None:
    whole, inside, _ = measured(model or real(raw), B, S)
    flops = forward_flops(c, B, S)
    recurrence = flops.by_component().get(DELTA_RULE, 0)
    assert whole - inside == flops.forward - recurrence  # everything but the gated delta rule, exact
    assert inside == chunked_kernel(c, B, S)
    assert recurrence == 6 * c["L_l"] * B * S * c["G_v"] * c["d_gk"] * c["d_gv"]


# --- the published config -----------------------------------------------------------------------------------

def test_published_config_is_what_transformers_builds():
    c = load_config(NAME)
    model = hf_model(raw_config(NAME))
    assert [(p.name, p.shape) for p in param_table(c)] == table(model)
    counted = count_model(c)
    assert counted.total == sum(p.numel() for p in model.parameters()) == TOTAL
    types = model.config.layer_types
    assert (c["L_l"], c["L_f"]) == (types.count("linear_attention"), types.count("full_attention")) == (36, 12)
    assert [i for i, t in enumerate(types) if t == "full_attention"] == list(range(3, 48, 4))
    # active: the total less the E − k routed experts a token skips, in each of the 48 sparse layers
    E, k, H, I_e = c["E"], c["k"], c["H"], c["I_e"]
    assert counted.total - counted.active == c["L_e"] * (E - k) * 3 * H * I_e
    assert counted.active == 3_874_929_408
    # the card's "A3B" (3B activated): the active count without the token table and the untied head
    assert counted.active - 2 * c["V"] * H == 3_252_599_552


def test_gated_attention_and_gated_deltanet_as_transformers_stores_them():
    c = load_config(NAME)
    model = hf_model(raw_config(NAME))
    full, linear = dict(model.model.layers[3].named_parameters()), dict(model.model.layers[0].named_parameters())
    A, d_k, H = c["A"], c["d_k"], c["H"]
    assert full["self_attn.q_proj.weight"].shape == (2 * A * d_k, H)  # queries and their output gate
    assert full["self_attn.q_norm.weight"].shape == (d_k,)
    channels = 2 * c["G_k"] * c["d_gk"] + c["G_v"] * c["d_gv"]
    assert linear["linear_attn.conv1d.weight"].shape == (channels, 1, c["K_c"]) == (8192, 1, 4)
    assert linear["linear_attn.in_proj_qkvz.weight"].shape == (channels + c["G_v"] * c["d_gv"], H)
    assert linear["linear_attn.A_log"].shape == linear["linear_attn.dt_bias"].shape == (c["G_v"],)
    assert linear["mlp.shared_expert_gate.weight"].shape == (1, H)
    parts = count_model(c).components
    assert parts[ATTENTION] == sum(p.numel() for n, p in model.named_parameters() if ".self_attn." in n
                                   and "norm" not in n)
    assert parts[LINEAR_ATTENTION] == sum(p.numel() for n, p in model.named_parameters() if ".linear_attn." in n
                                          and "norm" not in n)


def test_decode_state_of_the_published_model_is_constant_in_s():
    c = load_config(NAME)
    per_layer_state = (8192 * 4 * 2) + (32 * 128 * 128 * 4)  # convolution in bf16, recurrent state in fp32
    for S in (1, 4096, 262_144):
        parts = cache_parts(c, 1, S, "bf16")
        assert parts == {"keys and values": 12 * 2 * 2 * 256 * S * 2, "convolution state": 36 * 8192 * 4 * 2,
                         "recurrent state": 36 * 32 * 128 * 128 * 4}
        assert kv_cache_bytes(c, 1, S, "bf16") == 12 * 2 * 2 * 256 * S * 2 + 36 * per_layer_state
    document = memory_json(Memory(c, 1, 4096, "bf16"))
    assert document["kv_cache"] == sum(document["kv_cache_parts"].values()) == 100_663_296 + 77_856_768


def test_the_recurrence_and_the_chunked_kernel_on_the_published_model():
    """The figures of the module docstring: what the chunked kernel does against the recurrence the engine counts."""
    c = load_config(NAME)
    for S, kernel, recurrence in ((4096, 695_784_701_952, 463_856_467_968), (1, 10_871_635_968, 113_246_208)):
        assert forward_flops(c, 1, S).by_component()[DELTA_RULE] == recurrence
        assert chunked_kernel(c, 1, S) == kernel
    assert 695_784_701_952 - 463_856_467_968 == 231_928_233_984


# --- tiny real models: FLOPs and the cache ---------------------------------------------------------------------

@pytest.mark.parametrize(("B", "S"), [(1, 1), (2, 5), (1, 70)])  # 70: past one chunk of 64
def test_tiny_flops_everything_but_the_recurrence_exact(B, S):
    raw = TINY["qwen3_next"]
    check_flops(raw, parse_config(raw), B, S)


@pytest.mark.parametrize("S", [1, 2, 3, 9])  # the convolution's kernel is 3: S below, at and past it
def test_tiny_cache_holds_every_byte_the_engine_counts(S):
    raw, B = TINY["qwen3_next"], 2
    c = parse_config(raw)
    for dtype, name in ((None, "fp32"), (torch.bfloat16, "bf16")):
        _, _, cache = measured(real(raw, dtype), B, S)
        kinds = [type(layer).__name__ for layer in cache.layers]
        assert kinds == ["LinearAttentionLayer"] * 3 + ["DynamicLayer"]
        recurrent = cache.layers[0].recurrent_states[0]
        assert recurrent.dtype == torch.float32 and recurrent.shape == (B, c["G_v"], c["d_gk"], c["d_gv"])
        assert cache.layers[0].conv_states[0].shape[-1] == c["K_c"]  # K_c inputs, whatever S is
        assert held_bytes(cache) == kv_cache_bytes(c, B, S, name), name


# --- random small configs -------------------------------------------------------------------------------------

@given(raw=STRATEGIES["qwen3_next"])
@RANDOM
def test_random_configs(raw):
    c = assert_counted_as_built(raw)  # tensors and total on the meta device
    model = real(raw)
    assert count_model(c).total == sum(p.numel() for p in model.parameters())
    for B, S in ((1, 1), (2, 5)):
        check_flops(raw, c, B, S, model)
    _, _, cache = measured(model, 2, 3)
    assert held_bytes(cache) == kv_cache_bytes(c, 2, 3, "fp32")


# --- refusals: what transformers refuses, and what it builds but cannot run -----------------------------------

REFUSED = [  # transformers raises too (config class or model init)
    ({"full_attention_interval": 0}, "full_attention_interval"),  # (i + 1) % 0
    ({"full_attention_interval": None}, "full_attention_interval"),
    ({"layer_types": ["linear_attention"] * 3}, "layer_types"),  # 4 layers
    ({"head_dim": None}, "head_dim"),
    ({"head_dim": 7, "partial_rotary_factor": 1.0}, "head_dim"),  # validate_rope: an odd head wholly rotary
    ({"decoder_sparse_step": 0}, "decoder_sparse_step"),
    ({"partial_rotary_factor": "half"}, "partial_rotary_factor"),
]


@pytest.mark.parametrize(("change", "field"), REFUSED)
def test_refused_in_one_line_as_transformers_refuses(write_config, change, field):
    raw = {**TINY["qwen3_next"], **change}
    assert_refused_as_transformers_refuses(raw, field, write_config(raw))


CANNOT_RUN = [  # transformers builds them (count answers), its forward pass fails (flops and memory refuse)
    ({"layer_types": ["linear_attention", "sliding_attention", "moe", "full_attention"]}, "layer_types"),
    ({"linear_num_key_heads": 3}, "linear_num_key_heads"),  # 4 value heads: not a multiple of 3
    ({"num_key_value_heads": 3}, "num_key_value_heads"),
    ({"num_experts_per_tok": 5}, "num_experts_per_tok"),
    ({"partial_rotary_factor": 2.0}, "partial_rotary_factor"),  # 16 rotary dimensions in a head of 8
]


@pytest.mark.parametrize(("change", "field"), CANNOT_RUN)
def test_built_but_not_run_refused_by_flops_and_memory(write_config, change, field):
    raw = {**TINY["qwen3_next"], **change}
    c = parse_config(raw)
    assert [(p.name, p.shape) for p in param_table(c)] == table(hf_model(raw))
    with pytest.raises(Exception):  # noqa: B017 - whatever transformers raises
        real(raw)(torch.zeros(1, 3, dtype=torch.long), use_cache=True)
    path = str(write_config(raw))
    assert run_cli("count", path).returncode == 0
    assert_refused(run_cli("flops", "--batch", "1", "--seq-len", "4", path), field)
    assert_refused(run_cli("memory", path), field)


def test_layer_types_by_interval_or_list():
    base = {**TINY["qwen3_next"], "num_hidden_layers": 6}
    for change, kinds in (({}, (1, 1, 1, 2, 1, 1)), ({"full_attention_interval": 2}, (1, 2) * 3),
                          ({"full_attention_interval": -4}, (1, 1, 1, 2, 1, 1)),
                          ({"layer_types": ["mamba", "attention"] * 3}, (1, 2) * 3)):  # legacy names, renamed
        raw = {**base, **change}
        assert parse_config(raw).lists["types"] == kinds
        types = hf_model(raw).config.layer_types
        assert kinds == tuple(1 if t == "linear_attention" else 2 for t in types)


# --- the command line -----------------------------------------------------------------------------------------

def test_cli_answers():
    count = run_cli("count", NAME)
    assert count.returncode == 0 and f"{TOTAL:,}" in count.stdout and "3,874,929,408" in count.stdout
    flops = run_cli("flops", "--batch", "1", "--seq-len", "4096", NAME)
    assert flops.returncode == 0 and NOTES[DELTA_RULE] in flops.stdout and "463,856,467,968" in flops.stdout
    memory = run_cli("memory", "--batch", "1", "--seq-len", "4096", "--dtype", "bf16", "--json", NAME)
    assert memory.returncode == 0
    assert json.loads(memory.stdout)["kv_cache_parts"] == {"keys and values": 100_663_296,
                                                           "convolution state": 2_359_296,
                                                           "recurrent state": 75_497_472}
    assert FEED_FORWARD in run_cli("count", "--json", NAME).stdout
