"""Budgets (``helpers.budget``): hardware data, training time, sharded memory, decode ceilings, the rules of
thumb, and the ``budget`` / ``memory --gpus`` command line with its refusals."""

from __future__ import annotations

import json
import math
from fractions import Fraction

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import load_config, param_table, parse_config, total
from helpers.budget import (ZERO_STAGES, budget_json, chinchilla_tokens, compute_optimal, decode, decode_flops,
                            flops_rules, gpu, gpu_table, hardware, implied_mfu, kv_crossover_batch,
                            kv_values_per_token, min_gpus, padded_rows, reported, shard_rows, sharded_json,
                            sharded_state, state_per_gpu, tp_shape, tp_split, training_budget, training_flops,
                            training_flops_per_token)
from helpers.config import ConfigError
from helpers.flops import forward_flops, palm_training_flops, six_n_d
from helpers.memory import (ADAMW_FP32, ADAMW_MIXED, Memory, kv_cache_bytes, memory_report, training_state,
                            weight_bytes)
from helpers.count import describe

from .conftest import MODELS, assert_refused, run_cli, run_cli_without_torch
from .strategies import gpt2_configs, llama_configs

DECODERS = [n for n in MODELS if load_config(n).model_type in ("gpt2", "llama")]


# --- data/hardware.json -----------------------------------------------------------------------------

def test_hardware_file_has_every_gpu_with_its_source():
    gpus = hardware()["gpus"]
    assert list(gpus) == ["A100-80GB", "H100-SXM", "H200", "RTX-4090"]
    for key, g in gpus.items():
        assert set(g) - {"cuda_total_bytes", "cuda_total_gib"} == {
            "name", "bf16_dense_tflops", "bf16_sparse_tflops", "memory_mib", "memory_datasheet", "memory_bandwidth_gbps",
            "source", "cuda_source", "compute_capability", "cublas_workspace_bytes"}
        assert ("cuda_total_bytes" in g) != ("cuda_total_gib" in g), key  # measured here, or as torch prints it
        assert isinstance(g["memory_mib"], int) and g["memory_datasheet"].endswith(" GB"), key
        assert g["bf16_dense_tflops"] * 2 == g["bf16_sparse_tflops"], f"{key}: dense is half the sparsity figure"
        assert g["source"].startswith("NVIDIA"), key


def test_gpu_figures_are_exact_integers():
    h100 = gpu("H100-SXM")
    assert (h100.flops, h100.bandwidth, h100.memory) == (989_500_000_000_000, 3_350_000_000_000, 81_559 * 2**20)
    assert gpu("RTX-4090").flops == 165_200_000_000_000  # 165.2 TFLOPS, no float error
    assert all(isinstance(v, int) for g in gpu_table().values() for v in (g.flops, g.bandwidth, g.memory))
    assert gpu("h100-sxm") == h100


def test_gpu_memory_is_binary_as_the_driver_reports_it():
    # nvidia-smi memory.total, MiB: a datasheet's "80 GB" is 80 GiB of HBM, not 80·10⁹ bytes
    assert {k: g.memory >> 20 for k, g in gpu_table().items()} == {
        "A100-80GB": 81_920, "H100-SXM": 81_559, "H200": 143_771, "RTX-4090": 24_564}
    assert all(g.memory % 2**20 == 0 for g in gpu_table().values())
    a100 = gpu("A100-80GB")
    assert a100.memory == 80 * 2**30 and a100.datasheet_memory == "80 GB"
    assert a100.describe().endswith('81,920 MiB (datasheet: "80 GB")')


def test_unknown_gpu_names_the_known_ones():
    with pytest.raises(ConfigError, match="V100.*A100-80GB, H100-SXM, H200, RTX-4090"):
        gpu("V100")


def test_reported_figures():
    assert reported("gpt3-175b")["training_flops"] == 3.14e23 and reported("gpt3-175b")["tokens"] == 300 * 10**9
    assert reported("llama-7b")["gpu_hours"] == 82_432 and reported("llama-7b")["gpu"] in gpu_table()
    assert reported("chinchilla")["tokens_per_parameter"] == 20
    with pytest.raises(KeyError):
        reported("bert-base-uncased")


# --- training compute and time ---------------------------------------------------------------------

@pytest.mark.parametrize("name", DECODERS)
def test_training_flops_are_per_token_times_tokens(name):
    c = load_config(name)
    S = c["P"]
    assert training_flops(c, S) == forward_flops(c, 1, S).training
    assert training_flops(c, 10**12) == training_flops_per_token(c, S) * 10**12
    assert training_flops(c, 7, seq_len=S) * S == forward_flops(c, 1, S).training * 7  # exact for any D


def test_gpt3_against_the_paper():
    c = load_config("gpt3-175b")
    D, paper = reported("gpt3-175b")["tokens"], reported("gpt3-175b")["training_flops"]
    assert round(six_n_d(c, 1, D) / paper, 3) == 1.001
    assert round(training_flops(c, D) / paper, 3) == 1.028  # attention, less the position lookups


def test_llama_against_the_paper():
    a100 = gpu("A100-80GB")
    plan = training_budget(load_config("llama-7b"), 10**12, a100, 0.4, gpus=2048)
    hours = reported("llama-7b")["gpu_hours"]
    assert plan.gpu_hours == plan.flops / (a100.flops * 0.4) / 3600
    assert round(plan.gpu_hours / hours, 3) == 1.157
    assert round(implied_mfu(plan.flops, a100, hours), 3) == 0.463
    assert plan.days == plan.gpu_hours / 24 / 2048
    assert plan.recompute_flops * 3 == plan.flops * 4 and plan.hfu_with_recompute == pytest.approx(0.4 * 4 / 3)


@pytest.mark.parametrize("mfu", [0, -0.1, 1.5, float("nan"), float("inf")])
def test_mfu_outside_the_unit_interval_is_refused(mfu):
    with pytest.raises(ConfigError, match="--mfu"):
        training_budget(load_config("gpt2"), 1000, gpu("H200"), mfu)


def test_mfu_of_one_is_the_peak():
    plan = training_budget(load_config("gpt2"), 1024, gpu("H200"), 1)
    assert plan.gpu_seconds == plan.flops / gpu("H200").flops


def test_chinchilla():
    c = load_config("llama-7b")
    assert chinchilla_tokens(c) == 20 * total(param_table(c))
    N, D = compute_optimal(3.14e23)
    assert D == 20 * N and math.isclose(6 * N * D, 3.14e23)


# --- memory per GPU when sharded ---------------------------------------------------------------------

@given(rows=st.integers(0, 200), world=st.integers(1, 9))
@settings(max_examples=200, deadline=None)
def test_shard_rows_is_torch_chunk(rows, world):
    chunks = [len(t) for t in torch.chunk(torch.empty(rows), world)] if rows else []
    ours = [shard_rows(rows, world, r) for r in range(world)]
    assert ours == chunks + [0] * (world - len(chunks))
    assert sum(ours) == rows and all(n <= padded_rows(rows, world) for n in ours)
    assert ours[0] == (padded_rows(rows, world) if rows else 0)


@pytest.mark.parametrize("name", MODELS)
def test_one_gpu_holds_notebook_08s_training_state(name):
    c = load_config(name)
    for recipe in (ADAMW_MIXED, ADAMW_FP32):
        ours = [(p.name, p.bytes) for p in sharded_state(c, 1, 3, recipe=recipe)]
        assert ours == [(p.name, p.bytes) for p in training_state(c, recipe)]


@pytest.mark.parametrize("name", ["llama-7b", "gpt2", "bert-base-uncased", "llama-2-70b"])
def test_stages_shard_one_more_part_each(name):
    c = load_config(name)
    N, N_t = total(param_table(c)), len(param_table(c))
    for W in (1, 2, 3, 8, 64):
        sizes = [state_per_gpu(c, W, z) for z in ZERO_STAGES]
        assert sizes == sorted(sizes, reverse=True)
        assert sizes[0] == 16 * N + 4 * N_t
        assert sizes[3] >= 16 * N / W + 4 * N_t  # padding can only add
        if all(p.shape[0] % W == 0 for p in param_table(c)):
            assert sizes[1:] == [4 * N + 12 * N // W + 4 * N_t, 2 * N + 14 * N // W + 4 * N_t, 16 * N // W + 4 * N_t]


@given(raw=st.one_of(gpt2_configs(), llama_configs()), W=st.integers(1, 6))
@settings(max_examples=60, deadline=None)
def test_ranks_hold_the_whole_state_between_them(raw, W):
    c = parse_config(raw)
    N = total(param_table(c))
    moments = sum(next(p.bytes for p in sharded_state(c, W, 3, recipe=ADAMW_FP32, rank=r) if p.name == "AdamW exp_avg (fp32)")
                  for r in range(W))
    assert moments == 4 * N  # unpadded: every row once
    per_gpu = [state_per_gpu(c, W, 3, recipe=ADAMW_FP32, rank=r) for r in range(W)]
    assert per_gpu[0] == max(per_gpu)  # rank 0 is the most loaded
    assert state_per_gpu(c, W + 1, 3) <= state_per_gpu(c, W, 3)


def test_tensor_parallel_splits_matrices_and_replicates_norms():
    c = load_config("llama-7b")
    by_name = {p.name: p for p in param_table(c)}
    assert tp_split(by_name["model.layers.0.self_attn.q_proj.weight"], c) == 0
    assert tp_split(by_name["model.layers.0.self_attn.o_proj.weight"], c) == 1
    assert tp_split(by_name["model.layers.0.mlp.down_proj.weight"], c) == 1
    assert tp_split(by_name["model.norm.weight"], c) is None
    assert tp_shape(by_name["lm_head.weight"], c, 8) == (4000, 4096)
    N = total(param_table(c))
    norms = sum(p.count for p in param_table(c) if tp_split(p, c) is None)
    assert state_per_gpu(c, 8, 0, tp=8) == 16 * ((N - norms) // 8 + norms) + 4 * len(param_table(c))
    gpt2 = load_config("gpt2")  # Conv1D stores [in, out]: c_attn splits dim 1, c_proj dim 0; row biases replicated
    rows = {p.name: tp_split(p, gpt2) for p in param_table(gpt2)}
    assert (rows["transformer.h.0.attn.c_attn.weight"], rows["transformer.h.0.attn.c_proj.weight"],
            rows["transformer.h.0.attn.c_proj.bias"]) == (1, 0, None)


@pytest.mark.parametrize(("gpus", "zero", "tp", "field"), [(8, 4, 1, "--zero"), (8, -1, 1, "--zero"), (0, 3, 1, "--gpus"),
                                                           (8, 3, 3, "--tp"), (12, 3, 8, "--tp"), (8, 3, 0, "--tp")])
def test_bad_sharding_is_refused(gpus, zero, tp, field):
    with pytest.raises(ConfigError) as error:
        sharded_state(load_config("llama-7b"), gpus, zero, tp)
    assert error.value.field == field


def test_tp_must_divide_the_key_value_heads_too():
    with pytest.raises(ConfigError, match="num_key_value_heads = 8"):
        sharded_state(load_config("llama-2-70b"), 16, 3, tp=16)


@pytest.mark.parametrize("name", ["llama-7b", "llama-65b", "gpt3-175b"])
def test_min_gpus_is_the_smallest_that_fits(name):
    c = load_config(name)
    for g in gpu_table().values():
        G = min_gpus(c, g, 3)
        assert state_per_gpu(c, G, 3) <= g.memory
        assert G == 1 or state_per_gpu(c, G - 1, 3) > g.memory
    assert min_gpus(c, gpu("A100-80GB"), 0) is None  # data parallel: whole state on every GPU


# --- serving ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", DECODERS)
def test_decode_flops_grow_with_the_context_only_in_attention(name):
    c = load_config(name)
    assert decode_flops(c, 3, 1) == forward_flops(c, 3, 1).forward
    step = decode_flops(c, 2, 101) - decode_flops(c, 2, 100)
    assert step == 4 * c["L"] * 2 * c["A"] * c["d_k"]


def test_encoders_do_not_decode():
    with pytest.raises(ValueError, match="encoder"):
        decode_flops(load_config("bert-base-uncased"), 1, 8)


def test_decode_ceiling_is_bytes_over_bandwidth():
    c, h100 = load_config("llama-7b"), gpu("H100-SXM")
    s = decode(c, h100, batch=4, context=2048)
    assert s.bytes_per_step == weight_bytes(c, "bf16") + kv_cache_bytes(c, 4, 2048, "bf16")
    assert s.tokens_per_s == s.bandwidth_tokens_per_s == 4 * h100.bandwidth / s.bytes_per_step
    assert s.bound == "memory bandwidth" and s.gpus == 1
    assert decode(load_config("gpt3-175b"), h100).gpus == 5  # 334 GiB of weights + cache over 79.6 GiB GPUs
    int4 = decode(c, h100, batch=4, context=2048, dtype="int4")
    assert int4.weight_bytes * 4 == s.weight_bytes and int4.tokens_per_s > s.tokens_per_s


@pytest.mark.parametrize(("name", "S"), [("llama-7b", 2048), ("llama-2-70b", 4096), ("gpt2", 1024), ("gpt2-xl", 1024)])
def test_kv_crossover_is_the_first_batch_past_the_weights(name, S):
    c = load_config(name)
    B = kv_crossover_batch(c, S)
    assert kv_cache_bytes(c, B, S, "bf16") > weight_bytes(c, "bf16") >= kv_cache_bytes(c, B - 1, S, "bf16")
    assert kv_values_per_token(c) * S * B * 2 == kv_cache_bytes(c, B, S, "bf16")


# --- the rules of thumb ----------------------------------------------------------------------------

@given(raw=st.one_of(gpt2_configs(), llama_configs()), S=st.integers(1, 64))
@settings(max_examples=60, deadline=None)
def test_every_rule_differs_from_the_count_by_its_named_terms(raw, S):
    c = parse_config(raw)
    exact = training_flops_per_token(c, S)
    for rule in flops_rules(c, S):
        assert rule.per_token - exact == sum(rule.gap.values()), rule.name


def test_llama3_8b_rules():
    c = parse_config({"model_type": "llama", "vocab_size": 128256, "hidden_size": 4096, "intermediate_size": 14336,
                      "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
                      "max_position_embeddings": 8192})
    assert total(param_table(c)) == 8_030_261_248
    rules = {r.name: r.per_token for r in flops_rules(c, 8192)}
    exact = training_flops_per_token(c, 8192)
    assert exact == 57_912_852_480
    assert rules["6N, N = every parameter"] == 6 * 8_030_261_248
    assert rules["6N + 12·L·H·S, N = every parameter"] == 6 * 8_030_261_248 + 12 * 32 * 4096 * 8192
    assert rules["6N + 12·L·H·S, N = weight matrices"] == exact  # PaLM's rule, read as notebook 08 reads it
    assert exact * 8192 == palm_training_flops(c, 1, 8192)
    assert rules["hardware FLOPs, full recomputation"] * 3 == exact * 4


# --- the command line --------------------------------------------------------------------------------

def test_budget_text():
    result = run_cli("budget", "llama-7b", "--tokens", "1e12", "--gpu", "A100-80GB", "--mfu", "0.4", "--gpus", "2048")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "training, counted (forward + backward matmuls)  42,863,689,728,000,000,000,000" in out
    assert "ESTIMATE at MFU 0.4: 95,405 GPU-hours" in out
    assert "estimate / reported = 1.157" in out and "decode, UPPER BOUND" in out


def test_budget_json_schema():
    result = run_cli("budget", "gpt3-175b", "--tokens", "300000000000", "--gpu", "H100-SXM", "--mfu", "0.4", "--json")
    doc = json.loads(result.stdout)
    assert list(doc) == ["model", "tokens", "seq_len", "gpu", "mfu", "gpus", "training_flops", "six_n_d",
                         "recompute_flops", "estimate", "reported", "decode"]
    c = load_config("gpt3-175b")
    assert doc["training_flops"] == training_flops(c, 300 * 10**9) and isinstance(doc["training_flops"], int)
    assert doc["six_n_d"] == {"parameters": 174_604_259_328, "tokens": 300 * 10**9, "flops": six_n_d(c, 1, 300 * 10**9)}
    assert list(doc["estimate"]) == ["gpu_hours", "gpu_days", "days", "hfu_with_recompute"]
    assert doc["reported"]["training_flops"] == 3.14e23
    assert doc["decode"]["upper_bound"] is True and doc["decode"]["gpus"] == 5
    assert list(doc["decode"]) == ["upper_bound", "batch", "seq_len", "dtype", "kv_dtype", "gpus", "weight_bytes",
                                   "kv_cache_bytes", "bytes_per_step", "flops_per_step", "bandwidth_tokens_per_s",
                                   "compute_tokens_per_s", "tokens_per_s", "bound"]
    plan = training_budget(c, 300 * 10**9, gpu("H100-SXM"), 0.4)
    assert doc == json.loads(json.dumps(budget_json(plan, decode(c, gpu("H100-SXM")))))


def test_budget_of_an_encoder_has_no_decode():
    result = run_cli("budget", "bert-base-uncased", "--tokens", "1000000", "--gpu", "RTX-4090", "--mfu", "0.5", "--json")
    assert json.loads(result.stdout)["decode"] is None


def test_memory_sharded_text_and_json():
    text = run_cli("memory", "llama-7b", "--gpus", "8", "--zero", "3").stdout
    assert "total per GPU                                     13,476,832,396  12.55 GiB" in text
    assert "8 GPUs = G_tp 1 (tensor parallel) × G_dp 8 (data parallel)" in text and "2N/G_dp" in text
    assert "A100-80GB 81,920 MiB yes" in text
    doc = json.loads(run_cli("memory", "llama-7b", "--gpus", "16", "--zero", "2", "--tp", "2", "--json").stdout)
    assert list(doc) == ["model", "parameters", "parameter_tensors", "gpus", "zero", "tp", "dp", "recipe", "per_gpu",
                         "activations_included", "fits"]
    assert (doc["gpus"], doc["zero"], doc["tp"], doc["dp"]) == (16, 2, 2, 8)
    assert doc["per_gpu"]["total"] == state_per_gpu(load_config("llama-7b"), 16, 2, tp=2) == sum(doc["per_gpu"]["parts"].values())
    assert doc == sharded_json(load_config("llama-7b"), 16, 2, tp=2)


def test_memory_without_sharding_options_is_unchanged():
    c = load_config("llama-7b")
    expected = f"{describe(c)}\n\n{memory_report(Memory(c, 1, 2048, 'fp16'))}\n"
    assert run_cli("memory", "llama-7b").stdout == expected


BUDGET = ("budget", "llama-7b", "--tokens", "1e12", "--gpu", "H100-SXM", "--mfu", "0.4")


@pytest.mark.parametrize(("change", "field"), [
    (("--gpu", "V100"), "--gpu"), (("--mfu", "0"), "--mfu"), (("--mfu", "1.01"), "--mfu"), (("--mfu", "nan"), "--mfu"),
    (("--mfu", "abc"), "--mfu"), (("--tokens", "0"), "--tokens"), (("--tokens", "-5"), "--tokens"),
    (("--tokens", "1.5"), "--tokens"), (("--tokens", "1/2"), "--tokens"), (("--tokens", "many"), "--tokens"),
    (("--gpus", "0"), "--gpus"), (("--batch", "0"), "--batch"), (("--dtype", "fp8"), "--dtype"),
    (("--seq-len", "0"), "--seq-len"),
])
def test_budget_refusals(change, field):
    args = list(BUDGET)
    option, value = change
    if option in args:
        args[args.index(option) + 1] = value
    else:
        args += [option, value]
    assert_refused(run_cli(*args), field)


def test_budget_unknown_gpu_names_the_known_ones():
    result = run_cli("budget", "gpt2", "--tokens", "1000", "--gpu", "V100", "--mfu", "0.5")
    assert result.stderr == "error: --gpu: unknown GPU 'V100'; data/hardware.json has A100-80GB, H100-SXM, H200, RTX-4090\n"


@pytest.mark.parametrize("missing", ["--tokens", "--gpu", "--mfu"])
def test_budget_required_options(missing):
    args = list(BUDGET)
    i = args.index(missing)
    del args[i:i + 2]
    assert_refused(run_cli(*args), missing)


@pytest.mark.parametrize(("args", "field"), [
    (("--gpus", "8", "--zero", "4"), "--zero"), (("--gpus", "8", "--zero", "x"), "--zero"),
    (("--gpus", "0", "--zero", "3"), "--gpus"), (("--gpus", "8", "--zero", "3", "--tp", "3"), "--tp"),
    (("--gpus", "12", "--zero", "3", "--tp", "8"), "--tp"), (("--zero", "3"), "--gpus"), (("--tp", "2"), "--gpus"),
])
def test_memory_sharding_refusals(args, field):
    assert_refused(run_cli("memory", "llama-7b", *args), field)


@pytest.mark.parametrize("args", [BUDGET[1:] + ("--json",), ("llama-7b", "--gpus", "8", "--zero", "3", "--json")])
def test_new_commands_do_not_import_torch(args):
    command = "budget" if "--tokens" in args else "memory"
    result = run_cli_without_torch(command, *args)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["model"] == "llama-7b"


def test_tokens_accept_scientific_notation():
    doc = json.loads(run_cli("budget", "gpt2", "--tokens", "3e5", "--gpu", "H200", "--mfu", "1", "--json").stdout)
    assert doc["tokens"] == 300_000 and doc["training_flops"] == training_flops(load_config("gpt2"), 300_000)
    assert Fraction(doc["estimate"]["gpu_hours"]).limit_denominator() > 0


@pytest.mark.parametrize("name", [n for n in MODELS if load_config(n).family.is_decoder])
def test_every_rule_reconciles_on_every_shipped_decoder(name):
    """Each convention's gap, term by term, closes on the exact count for every shipped decoder: mixtures (the experts
    a token skips, or PaLM's N missing the k it uses), latent attention (12·L·H·S with d_k of queries ≠ of values) and
    Qwen3-Next (the recurrence and the convolution's padding) included; flops_rules itself asserts each sum."""
    c = load_config(name)
    rules = flops_rules(c, 2048)
    exact = training_flops_per_token(c, 2048)
    assert [r.exact for r in rules] == [exact] * len(rules)
    if any(p.kind == "expert" for p in param_table(c)):
        assert any("skips" in term for term in rules[0].gap)
