"""``serve``: KV-cache tokens, sequences and ceilings by vLLM's start-up arithmetic."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers.budget import gpu
from helpers.config import ConfigError, load_config, parse_config
from helpers.memory import cache_parts
from helpers.params import param_layout
from helpers.quantized import stored_weights
from helpers.serve import cache_shape, serve, serve_report, weight_shard

from .conftest import MODELS, assert_refused, run_cli, run_cli_without_torch
from .strategies import STRATEGIES, TINY

H100 = gpu("H100-SXM")
GIB = 2**30


@pytest.mark.parametrize("model_type", sorted(TINY))
def test_every_family_answers(model_type):
    config = parse_config(TINY[model_type])
    plan = serve(config, "H100-SXM", max_model_len=8)
    assert plan.fits
    if config.family.kv_cache is None:  # encoders: no cache, a prefill bound only
        assert plan.kv_tokens is None and plan.max_sequences is None and plan.decode is None
    else:
        assert plan.kv_tokens % 16 == 0 and plan.kv_tokens > 0
        assert plan.max_sequences >= 1 and plan.decode is not None
    assert plan.prefill_tokens_per_s > 0
    assert serve_report(plan)


@pytest.mark.parametrize("name", MODELS)
def test_every_shipped_model_answers(name):
    config = load_config(name)
    try:
        plan = serve(config, "H200", gpus=1, max_model_len=None)
    except ConfigError as error:  # T5: relative positions, no stated context
        assert error.field == "--max-model-len"
        plan = serve(config, "H200", gpus=1, max_model_len=512)
    stored = stored_weights(config)  # a pre-quantized checkpoint (gpt-oss's MXFP4, FP8): its bytes by default
    assert plan.weights == weight_shard(config, 1, "stored" if stored else "bf16")[0]
    assert plan.weights == (stored.total if stored else 2 * param_layout(config).total)
    assert (plan.kv_tokens is None) == (config.family.kv_cache is None)


def test_a_pre_quantized_checkpoint_is_served_as_stored():
    """gpt-oss-120b as published (MXFP4 experts) fits one H100; the same model in bf16 does not; a config with no
    quantization_config has no stored form to ask for."""
    oss = load_config("gpt-oss-120b")
    stored = serve(oss, "H100-SXM", max_model_len=8192)
    assert stored.weight_dtype == "stored" and stored.weights == stored_weights(oss).total == 65_248_815_744
    assert stored.fits and stored.max_sequences == 15
    assert not serve(oss, "H100-SXM", weight_dtype="bf16", max_model_len=8192).fits
    two = serve(load_config("qwen3-8b-fp8"), "H100-SXM", gpus=2, max_model_len=4096)
    norms = 2 * sum(p.count * n for p, n in param_layout(load_config("qwen3-8b-fp8")).rows() if p.kind == "norm")
    assert two.weights == -(-(stored_weights(load_config("qwen3-8b-fp8")).total - norms) // 2) + norms
    with pytest.raises(ConfigError) as refused:
        serve(load_config("llama-7b"), "H100-SXM", weight_dtype="stored", max_model_len=2048)
    assert refused.value.field == "--weight-dtype"


def test_llama2_70b_on_four_h100_by_hand():
    """Every figure of the block arithmetic, by hand."""
    config = load_config("llama-2-70b")  # L = 80, A = 64, A_kv = 8, d_k = 128, 68,976,648,192 parameters
    plan = serve(config, "H100-SXM", gpus=4, max_model_len=4096)
    # of the memory CUDA reports (an H100 80GB HBM3: 85,017,493,504 bytes, data/gpu_memory.json), rounded up, as vLLM does
    assert plan.budget == 76_515_744_154 == -(-85_017_493_504 * 9 // 10)
    norms = (2 * 80 + 1) * 8192  # two RMSNorms a layer and the final one: replicated
    assert plan.replicated == 2 * norms
    assert plan.weights == 2 * (68_976_648_192 - norms) // 4 + 2 * norms == 34_490_302_464
    assert plan.reserve == 2 * GIB
    assert plan.available == 76_515_744_154 - 34_490_302_464 - 2 * GIB == 39_877_958_042
    assert plan.bytes_per_token == 2 * 80 * (8 // 4) * 128 * 2 == 81_920  # K and V, 80 layers, 2 heads a GPU, bf16
    assert plan.block_bytes == 16 * 81_920
    assert plan.num_blocks == 39_877_958_042 // 1_310_720 == 30_424
    assert plan.kv_tokens == 30_424 * 16 == 486_784
    assert plan.blocks_per_sequence == 256
    assert plan.max_sequences == 30_424 // 256 == 118  # the floor of vLLM's "Maximum concurrency for 4,096 tokens"
    step = plan.decode
    assert step.batch == 118 and step.weight_bytes == 4 * plan.weights
    assert step.kv_bytes == 4 * 118 * 4096 * 81_920
    assert step.bandwidth_tokens_per_s == pytest.approx(118 * 4 * H100.bandwidth / (step.weight_bytes + step.kv_bytes))


def test_fp8_kv_about_doubles_tokens():
    for name, gpus in (("llama-2-70b", 4), ("qwen3-8b", 1), ("gemma-3-27b-it", 2), ("deepseek-v2-lite", 1)):
        config = load_config(name)
        bf16 = serve(config, "H100-SXM", gpus=gpus, max_model_len=4096)
        fp8 = serve(config, "H100-SXM", gpus=gpus, max_model_len=4096, kv_dtype="fp8")
        assert fp8.bytes_per_token * 2 == bf16.bytes_per_token
        assert fp8.block_bytes * 2 == bf16.block_bytes and fp8.num_blocks == fp8.available // fp8.block_bytes
        assert 1.9 < fp8.kv_tokens / bf16.kv_tokens <= 2.1
        assert fp8.max_sequences >= 2 * bf16.max_sequences


def test_kv_heads_split_then_replicated():
    config = load_config("llama-2-70b")  # 8 KV heads
    assert cache_shape(config, 8).per_token == 2 * 80 * 1 * 128
    assert cache_shape(config, 16).per_token == 2 * 80 * 1 * 128  # 16 GPUs: each KV head on two GPUs
    assert cache_shape(config, 2).per_token == 2 * 80 * 4 * 128


def test_mla_latent_is_replicated():
    config = load_config("deepseek-v3")  # 61 layers, r_kv = 512, d_rope = 64
    assert cache_shape(config, 1).per_token == cache_shape(config, 8).per_token == 61 * (512 + 64)
    assert "not split" in serve_report(serve(config, "H200", gpus=8, weight_dtype="fp8", max_model_len=4096))


def test_sliding_windows_grouped_as_vllm_groups_them():
    """vLLM's hybrid manager: groups of the fewest layers of a kind, each kind padded; windows hold W − 1 + a chunk."""
    config = load_config("gemma-3-27b-it")  # 62 layers: 52 windowed (W = 1024), 10 global; 16 KV heads of 128
    per_layer = 2 * 16 * 128
    shape = cache_shape(config)
    assert [(k.name, k.layers, k.kept, k.values) for k in shape.kinds] == [
        ("full", 10, None, 10 * per_layer), ("sliding", 52, 1023, 52 * per_layer)]
    assert shape.groups() == (10, {"full": 1, "sliding": 6})  # 52 < 1.5 × 10 fails: groups of 10, 8 padding layers
    plan = serve(config, "H200", max_model_len=32768, batched=2048)
    assert plan.block_bytes == 16 * per_layer * 2 * 10  # a page of each of the 10 layers a group has
    assert plan.num_blocks == plan.available // plan.block_bytes
    assert plan.kv_tokens == plan.num_blocks // 7 * 16  # vLLM's "GPU KV cache size"
    window = -(-(1023 + 2048) // 16) + 1  # the window, a prefill chunk, one block for a mid-block start
    assert plan.blocks_per_sequence == 1 * (32768 // 16) + 6 * window
    assert plan.max_sequences == plan.num_blocks // plan.blocks_per_sequence
    short = serve(config, "H200", max_model_len=512)  # shorter than the window: still one block more
    assert short.blocks_per_sequence == 512 // 16 + 6 * (512 // 16 + 1)


def test_equal_kinds_make_equal_groups():
    shape = cache_shape(load_config("gpt-oss-120b"))  # 36 layers, alternating: 18 sliding (W = 128), 18 full
    assert shape.groups() == (18, {"full": 1, "sliding": 1})
    plan = serve(load_config("gpt-oss-120b"), "H100-SXM", weight_dtype="int4", max_model_len=8192)
    assert plan.kv_tokens == plan.available // (16 * 2 * 8 * 64 * 2 * 18) // 2 * 16


def test_one_kind_is_one_group():
    config = load_config("mistral-7b-v0.1")  # every layer windowed: W = 4096
    plan = serve(config, "H100-SXM", max_model_len=32768, batched=8192)
    assert [k.name for k in plan.cache.kinds] == ["sliding"] and plan.cache.groups() == (0, {"sliding": 1})
    assert plan.kv_tokens == plan.available // (16 * plan.bytes_per_token) * 16
    assert plan.blocks_per_sequence == -(-(4095 + 8192) // 16) + 1


def test_linear_attention_state_is_per_sequence():
    config = load_config("qwen3-next-80b-a3b")
    plans = [serve(config, "H200", gpus=4, weight_dtype="fp8", max_model_len=s) for s in (4096, 8192)]
    state = plans[0].cache.state_bytes
    assert state == plans[1].cache.state_bytes > 0
    assert plans[1].sequence_bytes - plans[0].sequence_bytes == 4096 * plans[0].bytes_per_token
    assert plans[0].sequence_bytes == 4096 * plans[0].bytes_per_token + state


def test_weights_that_do_not_fit_are_an_answer():
    plan = serve(load_config("llama-2-70b"), "H100-SXM", gpus=1)
    assert not plan.fits and plan.kv_tokens == 0 and plan.max_sequences == 0 and plan.decode is None
    result = run_cli("serve", "llama-2-70b", "--gpu", "H100-SXM", "--json")
    assert result.returncode == 0
    assert json.loads(result.stdout)["fits"] is False


def test_cli_json_without_torch():
    result = run_cli_without_torch("serve", "llama-2-70b", "--gpu", "H100-SXM", "--gpus", "4", "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["kv_tokens"] == 486_784 and data["max_sequences"] == 118
    assert data["cuda_memory_bytes"] == 85_017_493_504 < data["memory_bytes"]
    text = run_cli("serve", "llama-2-70b", "--gpu", "H100-SXM", "--gpus", "4", "--kv-dtype", "fp8")
    assert "kv_tokens = blocks × block_size = 973,568" in text.stdout


@pytest.mark.parametrize("args, field", [
    (("--gpu", "V100"), "--gpu"),
    ((), "--gpu"),
    (("--gpu", "H100-SXM", "--gpus", "5"), "--gpus"),
    (("--gpu", "H100-SXM", "--kv-dtype", "int8"), "--kv-dtype"),
    (("--gpu", "H100-SXM", "--weight-dtype", "fp6"), "--weight-dtype"),
    (("--gpu", "H100-SXM", "--gpu-memory-utilization", "1.5"), "--gpu-memory-utilization"),
    (("--gpu", "H100-SXM", "--block-size", "0"), "--block-size"),
    (("--gpu", "H100-SXM", "--max-model-len", "999999"), "--max-model-len"),
    (("--gpu", "H100-SXM", "--activation-reserve-gib", "-1"), "--activation-reserve-gib"),
])
def test_refusals_in_one_line(args, field):
    assert_refused(run_cli("serve", "gpt2", *args), field)


SETTINGS = settings(max_examples=8, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@pytest.mark.parametrize("model_type", sorted(STRATEGIES))
def test_random_configs_answer_or_refuse_in_one_line(model_type):
    """Random configs of every family: an answer whose blocks add up, the engine's own cache bytes, or a ConfigError."""

    @SETTINGS
    @given(raw=STRATEGIES[model_type], gpus=st.sampled_from((1, 2, 4)), length=st.integers(1, 40))
    def check(raw, gpus, length):
        config = parse_config(raw)
        try:
            plan = serve(config, "H200", gpus=gpus, max_model_len=length, block_size=4, batched=3)
            fp8 = serve(config, "H200", gpus=gpus, max_model_len=length, block_size=4, batched=3, kv_dtype="fp8")
        except ConfigError as error:
            assert error.field.startswith("--") or error.field in raw or error.field == "layer_types", error
            return
        if plan.cache is None:
            assert plan.kv_tokens is None and plan.max_sequences is None
            return
        assert fp8.bytes_per_token * 2 == plan.bytes_per_token
        assert plan.kv_tokens % 4 == 0 and 0 <= plan.num_blocks * plan.block_bytes <= max(plan.available, 0)
        if plan.max_sequences is not None:
            assert plan.max_sequences * plan.sequence_bytes <= max(plan.num_blocks * plan.block_bytes, plan.available)
        if gpus == 1:  # the shape taken apart gives back the engine's cache, token for token
            parts = cache_parts(config, 1, length, "bf16")
            assert parts["keys and values"] == 2 * plan.cache.values(length)

    check()
