"""Memory from the parameter tables == the bytes of real tensors.

(a) training state: every tensor after one real AdamW step on small CPU models (fp32, and mixed precision
with fp16 weights/gradients beside fp32 master weights), AdamW's per-tensor ``step`` scalar included;
(b) KV cache: the keys and values transformers' LlamaForCausalLM / GPT2LMHeadModel return as
``past_key_values`` (MHA and GQA, fp32 and bf16), and the reference LLaMA's ``llama_key_values``;
(c) weights by dtype; then the ``memory`` command line; (d) the layouts and estimates notebook 08 names:
``torch.autocast``'s fp32 state, Korthikanti et al.'s recomputation strategies, FlashAttention storing no S×S
tensor, and 4-bit weights with group scales, each against real tensors where there are any.
"""

from __future__ import annotations

import json
from fractions import Fraction

import pytest

from helpers import count_model, load_config, param_table, parse_config
from helpers.config import MODELS_DIR
from helpers.memory import (
    ADAMW_AUTOCAST, ADAMW_FP32, ADAMW_MIXED, DTYPE_BITS, FULL, HF_TRAINER, MEGATRON_BF16, MEGATRON_FP16,
    NO_RECOMPUTE, PLAYBOOK, RECIPES, SELECTIVE, STATE_SOURCES, Memory, activation_bytes, activation_bytes_per_layer,
    attention_core_bytes, bytes_per_parameter, kv_cache_bytes, parameter_tensors, quantized_weight_bytes,
    training_state, weight_bytes,
)

from .conftest import assert_refused, run_cli, run_cli_without_torch

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from helpers import torch_ref  # noqa: E402

TINY = {
    "bert": {"model_type": "bert", "vocab_size": 40, "hidden_size": 16, "num_attention_heads": 4,
             "num_hidden_layers": 2, "intermediate_size": 20, "max_position_embeddings": 8, "type_vocab_size": 2},
    "gpt2": {"model_type": "gpt2", "vocab_size": 40, "n_embd": 12, "n_head": 3, "n_layer": 2, "n_positions": 8},
    "llama": {"model_type": "llama", "vocab_size": 40, "hidden_size": 16, "num_attention_heads": 4,
              "num_key_value_heads": 2, "num_hidden_layers": 2, "intermediate_size": 20, "attention_bias": True},
}


def nbytes(tensors) -> int:
    return sum(t.numel() * t.element_size() for t in tensors)


def _scalar(out) -> "torch.Tensor":
    return sum(t.float().sum() for t in out) if isinstance(out, tuple) else out.float().sum()


def parts(config, recipe) -> dict[str, int]:
    return {p.name: p.bytes for p in training_state(config, recipe)}


@pytest.mark.parametrize("model_type", list(TINY))
def test_fp32_adamw_state_is_every_tensor(model_type):
    c = parse_config(TINY[model_type])
    torch.manual_seed(0)
    model = torch_ref.build(c, "cpu")
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    _scalar(model(torch.randint(0, c["V"], (2, 5)))).backward()
    optimizer.step()
    params = list(model.parameters())
    states = [optimizer.state[p] for p in params]
    assert all(set(s) == {"exp_avg", "exp_avg_sq", "step"} for s in states)
    assert all(s["step"].dtype == torch.float32 and s["step"].numel() == 1 for s in states)
    measured = {
        "weights (fp32)": nbytes(params),
        "gradients (fp32)": nbytes(p.grad for p in params),
        "AdamW exp_avg (fp32)": nbytes(s["exp_avg"] for s in states),
        "AdamW exp_avg_sq (fp32)": nbytes(s["exp_avg_sq"] for s in states),
        "AdamW step (one fp32 scalar per tensor)": nbytes(s["step"] for s in states),
    }
    assert measured == parts(c, ADAMW_FP32)
    assert len(params) == parameter_tensors(c)
    N = count_model(c).total
    assert sum(measured.values()) == 16 * N + 4 * len(params)


@pytest.mark.parametrize("model_type", ["bert", "gpt2"])
def test_mixed_precision_adamw_state_is_every_tensor(model_type):
    """fp16 model for forward/backward, fp32 master copy updated by AdamW (its fp32 grads freed after the step)."""
    c = parse_config(TINY[model_type])
    torch.manual_seed(0)
    master = torch_ref.build(c, "cpu")
    for p in master.parameters():
        torch.nn.init.normal_(p, std=0.02)
    half = torch_ref.build(c, "cpu").to(torch.float16)
    half.load_state_dict(master.state_dict())
    _scalar(half(torch.randint(0, c["V"], (2, 5)))).backward()
    optimizer = torch.optim.AdamW(master.parameters(), lr=1e-3)
    for p, h in zip(master.parameters(), half.parameters()):
        p.grad = h.grad.float()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    states = [optimizer.state[p] for p in master.parameters()]
    measured = {
        "weights (fp16)": nbytes(half.parameters()),
        "gradients (fp16)": nbytes(h.grad for h in half.parameters()),
        "master weights (fp32)": nbytes(master.parameters()),
        "AdamW exp_avg (fp32)": nbytes(s["exp_avg"] for s in states),
        "AdamW exp_avg_sq (fp32)": nbytes(s["exp_avg_sq"] for s in states),
        "AdamW step (one fp32 scalar per tensor)": nbytes(s["step"] for s in states),
    }
    assert measured == parts(c, ADAMW_MIXED)


def test_both_recipes_are_16_bytes_per_parameter_plus_4_per_tensor():
    c = load_config("llama-7b")
    N, N_t = count_model(c).total, len(param_table(c))
    for recipe in (ADAMW_FP32, ADAMW_MIXED):
        assert sum(parts(c, recipe).values()) == 16 * N + 4 * N_t


def test_the_published_conventions_16_18_20():
    """ZeRO 16; Megatron-LM 18 (bf16 params, fp32 main grads) or 20 (fp16 params and grads); HF Trainer 18; the
    Ultra-Scale Playbook 20: each source's figure, from the recipe's parts; every recipe names its source."""
    assert {r: bytes_per_parameter(r) for r in (ADAMW_FP32, ADAMW_MIXED, MEGATRON_BF16, MEGATRON_FP16, HF_TRAINER,
                                                 PLAYBOOK)} == {ADAMW_FP32: 16, ADAMW_MIXED: 16, MEGATRON_BF16: 18,
                                                                MEGATRON_FP16: 20, HF_TRAINER: 18, PLAYBOOK: 20}
    assert set(STATE_SOURCES) | {ADAMW_AUTOCAST} == set(RECIPES)
    c = load_config("llama-7b")
    N, N_t = count_model(c).total, parameter_tensors(c)
    for recipe in RECIPES:
        assert sum(parts(c, recipe).values()) == bytes_per_parameter(recipe) * N + 4 * N_t, recipe


def _mixed_step(c, low, keep_fp32_grads):
    """One AdamW step on an fp32 master copy, gradients from a 16-bit model: the tensors each layout keeps."""
    torch.manual_seed(0)
    master = torch_ref.build(c, "cpu")
    for p in master.parameters():
        torch.nn.init.normal_(p, std=0.02)
    model = torch_ref.build(c, "cpu").to(low)
    model.load_state_dict(master.state_dict())
    _scalar(model(torch.randint(0, c["V"], (2, 5)))).backward()
    optimizer = torch.optim.AdamW(master.parameters(), lr=1e-3)
    main_grads = [h.grad.float() for h in model.parameters()]  # accumulated in fp32 (Megatron's main_grad)
    for p, g in zip(master.parameters(), main_grads):
        p.grad = g
    optimizer.step()
    states = [optimizer.state[p] for p in master.parameters()]
    return model, master, (main_grads if keep_fp32_grads else []), states


@pytest.mark.parametrize("model_type", ["bert", "gpt2", "llama"])
def test_the_18_and_20_byte_layouts_are_every_tensor(model_type):
    c = parse_config(TINY[model_type])
    steps = lambda states: nbytes(s["step"] for s in states)  # noqa: E731
    # Megatron-LM, bf16 params: the model's gradients are the fp32 main grads themselves (no 16-bit grads)
    model, master, main_grads, states = _mixed_step(c, torch.bfloat16, True)
    assert {"weights (bf16)": nbytes(model.parameters()), "main gradients (fp32)": nbytes(main_grads),
            "main weights (fp32)": nbytes(master.parameters()),
            "AdamW exp_avg (fp32)": nbytes(s["exp_avg"] for s in states),
            "AdamW exp_avg_sq (fp32)": nbytes(s["exp_avg_sq"] for s in states),
            "AdamW step (one fp32 scalar per tensor)": steps(states)} == parts(c, MEGATRON_BF16)
    # fp16 params and grads beside fp32 main grads: Megatron-LM's 20, the playbook's 20 (bf16) likewise
    model, master, main_grads, states = _mixed_step(c, torch.float16, True)
    low = {"weights (fp16)": nbytes(model.parameters()), "gradients (fp16)": nbytes(h.grad for h in model.parameters())}
    assert {**low, "main gradients (fp32)": nbytes(main_grads), "main weights (fp32)": nbytes(master.parameters()),
            "AdamW exp_avg (fp32)": nbytes(s["exp_avg"] for s in states),
            "AdamW exp_avg_sq (fp32)": nbytes(s["exp_avg_sq"] for s in states),
            "AdamW step (one fp32 scalar per tensor)": steps(states)} == parts(c, MEGATRON_FP16)
    assert sum(low.values()) + nbytes(main_grads) + nbytes(master.parameters()) + 2 * nbytes(master.parameters()) + \
        steps(states) == sum(parts(c, PLAYBOOK).values())
    # the Hugging Face Trainer's account: fp32 weights + a 16-bit copy, fp32 gradients, AdamW
    assert {"weights (fp32)": nbytes(master.parameters()), "weights, 16-bit copy": nbytes(model.parameters()),
            "gradients (fp32)": nbytes(main_grads), "AdamW exp_avg (fp32)": nbytes(s["exp_avg"] for s in states),
            "AdamW exp_avg_sq (fp32)": nbytes(s["exp_avg_sq"] for s in states),
            "AdamW step (one fp32 scalar per tensor)": steps(states)} == parts(c, HF_TRAINER)


KV_CASES = [
    ({**TINY["llama"]}, torch.float32, "fp32"),  # GQA: A = 4 query heads share A_kv = 2
    ({**TINY["llama"], "num_key_value_heads": 4}, torch.float32, "fp32"),  # MHA
    ({**TINY["llama"], "num_key_value_heads": 1, "head_dim": 6}, torch.bfloat16, "bf16"),  # MQA, d_k != H/A
    (TINY["gpt2"], torch.float32, "fp32"),
    (TINY["gpt2"], torch.bfloat16, "bf16"),
]


@pytest.mark.parametrize(("raw", "dtype", "name"), KV_CASES)
def test_kv_cache_is_what_transformers_returns(raw, dtype, name):
    c = parse_config(raw)
    torch.manual_seed(0)
    cls = getattr(transformers, {"llama": "LlamaForCausalLM", "gpt2": "GPT2LMHeadModel"}[c.model_type])
    model = cls(transformers.AutoConfig.for_model(**raw)).to(dtype).eval()
    B, S = 3, 7
    with torch.no_grad():
        cache = model(input_ids=torch.randint(0, c["V"], (B, S)), use_cache=True).past_key_values
    assert len(cache.layers) == c["L"]
    measured = nbytes([t for layer in cache.layers for t in (layer.keys, layer.values)])
    assert measured == kv_cache_bytes(c, B, S, name)


@pytest.mark.parametrize("raw", [case[0] for case in KV_CASES if case[0]["model_type"] == "llama"][:3])
def test_kv_cache_of_the_reference_llama(raw):
    c = parse_config(raw)
    B, S = 2, 6
    with torch.no_grad():
        cache = torch_ref.llama_key_values(torch_ref.build(c, "cpu"), torch.randint(0, c["V"], (B, S)))
    assert len(cache) == c["L"]
    assert all(k.shape == v.shape == (B, c["A_kv"], S, c["d_k"]) for k, v in cache)
    assert nbytes([t for kv in cache for t in kv]) == kv_cache_bytes(c, B, S, "fp32")


def test_reference_key_values_are_the_ones_attention_uses():
    """The cached keys/values, shared across query groups, reproduce the layer's attention output."""
    c = parse_config(TINY["llama"])
    torch.manual_seed(0)
    model = torch_ref.build(c, "cpu")
    ids = torch.randint(0, c["V"], (2, 5))
    with torch.no_grad():
        (k, v), layer = torch_ref.llama_key_values(model, ids)[0], model.model.layers[0]
        x = model.model.embed_tokens(ids)
        cos, sin = torch_ref.rotary_angles(c["d_k"], 5, "cpu")
        attn, h = layer.self_attn, layer.input_layernorm(x)
        q = torch_ref._rotate(torch_ref._heads(attn.q_proj(h), attn.heads), cos, sin)
        group = c["A"] // c["A_kv"]
        out = torch_ref._attention(q, k.repeat_interleave(group, 1), v.repeat_interleave(group, 1), causal=True)
        assert torch.allclose(attn.o_proj(torch_ref._merge(out)), attn(h, cos, sin))


def test_encoders_keep_no_cache():
    assert kv_cache_bytes(load_config("bert-base-uncased"), 1, 512) is None
    assert kv_cache_bytes(load_config("roberta-base"), 1, 512) is None


@pytest.mark.parametrize(("dtype", "torch_dtype"), [("fp32", torch.float32), ("fp16", torch.float16),
                                                    ("bf16", torch.bfloat16), ("int8", torch.int8)])
def test_weight_bytes_are_the_tensors_bytes(dtype, torch_dtype):
    c = parse_config(TINY["gpt2"])
    with torch.no_grad():
        tensors = [p.detach().to(torch_dtype) for p in torch_ref.build(c, "cpu").parameters()]
    assert nbytes(tensors) == weight_bytes(c, dtype)


def test_int4_packs_two_values_a_byte_rounded_up():
    c = parse_config({"model_type": "bert", "vocab_size": 41, "hidden_size": 3, "num_attention_heads": 1,
                      "num_hidden_layers": 1, "intermediate_size": 5, "max_position_embeddings": 3,
                      "type_vocab_size": 1})  # an odd parameter count
    N = count_model(c).total
    assert N % 2 == 1
    assert weight_bytes(c, "int4") == (N + 1) // 2
    assert set(DTYPE_BITS) == {"fp32", "fp16", "bf16", "int8", "int4"}


def test_kv_cache_of_llama_7b_and_70b():
    """2 · L · A_kv · d_k · S · B · 2 bytes: GQA (A_kv = 8 of 64 heads) keeps 70B's cache small."""
    for name in ("llama-7b", "llama-2-70b"):
        c = load_config(name)
        assert kv_cache_bytes(c, 1, 4096) == 2 * c["L"] * c["A_kv"] * c["d_k"] * 4096 * 2
    assert kv_cache_bytes(load_config("llama-2-70b"), 1, 4096) < kv_cache_bytes(load_config("llama-7b"), 1, 4096)


def test_activation_estimate_is_the_papers_formula():
    """S·B·H·(34 + 5·A·S/H) in exact arithmetic, times L layers."""
    for name, B, S in (("bert-base-uncased", 8, 512), ("llama-7b", 1, 2048), ("gpt2", 3, 1000)):
        c = load_config(name)
        H, A = c["H"], c["A"]
        assert activation_bytes_per_layer(c, B, S) == S * B * H * (34 + Fraction(5 * A * S, H))
        assert activation_bytes(c, B, S) == c["L"] * activation_bytes_per_layer(c, B, S)


def test_totals():
    m = Memory(load_config("llama-7b"), 1, 2048, "fp16")
    assert m.inference() == weight_bytes(m.config, "fp16") + kv_cache_bytes(m.config, 1, 2048, "fp16")
    assert m.training() == sum(parts(m.config, ADAMW_MIXED).values()) + activation_bytes(m.config, 1, 2048)


# --- command line ---------------------------------------------------------------------------------

def test_cli_text():
    result = run_cli("memory", "llama-7b", "--batch", "1", "--seq-len", "2048")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    c = load_config("llama-7b")
    assert f"{weight_bytes(c, 'fp16'):,}" in out and f"{kv_cache_bytes(c, 1, 2048):,}" in out
    assert "ESTIMATE" in out and "Korthikanti" in out
    assert "AdamW step (one fp32 scalar per tensor)" in out


def test_cli_defaults_and_encoder():
    result = run_cli("memory", "bert-base-uncased", "--json")
    doc = json.loads(result.stdout)
    assert (doc["batch"], doc["seq_len"], doc["dtype"]) == (1, 512, "fp16")  # S defaults to the positions
    assert doc["kv_cache"] is None
    assert doc["weights"]["fp32"] == 4 * doc["parameters"] == 4 * 109_482_240


def test_cli_json_schema():
    result = run_cli("memory", "llama-2-70b", "--batch", "2", "--seq-len", "100", "--dtype", "int8", "--json")
    doc = json.loads(result.stdout)
    c = load_config("llama-2-70b")
    assert list(doc) == ["model", "parameters", "parameter_tensors", "batch", "seq_len", "dtype", "weights",
                         "training_state", "kv_cache", "activations", "inference", "training"]
    assert doc["parameters"] == count_model(c).total and doc["parameter_tensors"] == len(param_table(c))
    assert doc["weights"] == {d: weight_bytes(c, d) for d in DTYPE_BITS}
    for recipe in (ADAMW_FP32, ADAMW_MIXED):
        assert doc["training_state"][recipe]["parts"] == parts(c, recipe)
        assert doc["training_state"][recipe]["total"] == sum(parts(c, recipe).values())
    assert doc["kv_cache"] == kv_cache_bytes(c, 2, 100, "int8")
    assert doc["activations"]["estimate"] is True
    assert doc["activations"]["total"] == activation_bytes(c, 2, 100)
    assert doc["inference"] == weight_bytes(c, "int8") + doc["kv_cache"]
    assert doc["training"] == doc["training_state"][ADAMW_MIXED]["total"] + doc["activations"]["total"]


BAD = [
    (["--batch", "0"], "--batch"),
    (["--seq-len", "-3"], "--seq-len"),
    (["--seq-len", "x"], "--seq-len"),
    (["--dtype", "fp8"], "--dtype"),
    (["--dtype", "FP16"], "--dtype"),
]


@pytest.mark.parametrize(("args", "field"), BAD)
def test_cli_bad_options(args, field):
    assert_refused(run_cli("memory", "llama-7b", *args), field)


def test_cli_too_long_for_the_position_table():
    assert_refused(run_cli("memory", "roberta-base", "--seq-len", "513"), "--seq-len")  # P = 514, from 2


def test_cli_json_without_torch():
    result = run_cli_without_torch("memory", "llama-7b", "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["parameters"] == count_model(load_config("llama-7b")).total


# --- mixed-precision layouts, recomputation, FlashAttention, 4-bit weights ------------------------------------

def test_autocast_keeps_the_fp32_layout():
    """Under torch.autocast the weights, gradients and moments stay fp32: ADAMW_AUTOCAST = the fp32 bytes."""
    c = parse_config(TINY["llama"])
    torch.manual_seed(0)
    model = torch_ref.build(c, "cpu")
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out = model(torch.randint(0, c["V"], (2, 5)))
    assert out.dtype == torch.bfloat16  # the matmuls ran in 16 bits
    out.float().sum().backward()
    optimizer.step()
    params = list(model.parameters())
    assert all(p.dtype == p.grad.dtype == torch.float32 for p in params)
    states = [optimizer.state[p] for p in params]
    measured = [nbytes(params), nbytes(p.grad for p in params), nbytes(s["exp_avg"] for s in states),
                nbytes(s["exp_avg_sq"] for s in states), nbytes(s["step"] for s in states)]
    assert measured == [p.bytes for p in training_state(c, ADAMW_AUTOCAST)]
    assert parts(c, ADAMW_AUTOCAST) == parts(c, ADAMW_FP32)


def test_recomputation_strategies():
    """Korthikanti et al. 2022: eq. 1 (none), eq. 6 (selective: 34·S·B·H), Table 2 (full: 2·S·B·H)."""
    for name, B, S in (("gpt3-175b", 1, 2048), ("llama-7b", 2, 1000), ("bert-base-uncased", 8, 512)):
        c = load_config(name)
        H, A, L = c["H"], c["A"], c["L"]
        none, selective, full = (activation_bytes(c, B, S, mode) for mode in (NO_RECOMPUTE, SELECTIVE, FULL))
        assert none == activation_bytes(c, B, S) == L * S * B * H * (34 + Fraction(5 * A * S, H))
        assert selective == 34 * L * S * B * H and full == 2 * L * S * B * H
        core = attention_core_bytes(c, B, S)
        assert list(core.values()) == [2 * A * S**2 * B, A * S**2 * B, 2 * A * S**2 * B]
        assert none - selective == L * sum(core.values())
    gpt3 = load_config("gpt3-175b")  # Korthikanti et al. §5: 5as/h = 80 for GPT-3, selective recompute saves 70%
    saved = 1 - Fraction(activation_bytes(gpt3, 1, 2048, SELECTIVE), activation_bytes(gpt3, 1, 2048))
    assert round(100 * saved) == 70
    with pytest.raises(ValueError):
        activation_bytes(gpt3, 1, 2048, "some")


def _saved_values(attention, B=1, A=4, S=256, d_k=8) -> list[int]:
    """The sizes (values) of every storage autograd keeps for the backward pass of one attention core."""
    q, k, v = (torch.randn(B, A, S, d_k, requires_grad=True) for _ in range(3))
    saved = {}

    def pack(t):
        saved[t.untyped_storage().data_ptr()] = t.untyped_storage().nbytes() // t.element_size()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        attention(q, k, v)
    return list(saved.values())


def test_flash_attention_stores_no_square_matrix():
    """Eager attention keeps the A·S²·B softmax output (the 2AS²B of eq. 1 in 16-bit); sdpa's flash kernel none."""
    from torch.nn.attention import SDPBackend, sdpa_kernel

    B, A, S = 1, 4, 256
    eager = _saved_values(lambda q, k, v: torch_ref._attention(q, k, v, causal=True), B, A, S)
    with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
        flash = _saved_values(lambda q, k, v: torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True),
                              B, A, S)
    assert sorted(n for n in eager if n >= S * S) == [S * S, A * S * S * B]  # the causal mask, the softmax output
    assert max(flash) < S * S and A * S * B in flash  # no S×S tensor; one statistic per row of each head


def test_quantized_weights_with_group_scales():
    c = load_config("llama-7b")
    N = count_model(c).total
    quantised = sum(p.count for p in param_table(c) if len(p.shape) == 2 and p.component not in ("embeddings", "lm head"))
    kept = N - quantised
    assert kept == 2 * c["V"] * c["H"] + (2 * c["L"] + 1) * c["H"]
    assert 8 * quantized_weight_bytes(c) == quantised * 4 + quantised // 128 * 16 + kept * 16  # 4.125 bits
    assert 8 * quantized_weight_bytes(c, zero_bits=4) == quantised * 4 + quantised // 128 * 20 + kept * 16  # 4.15625
    assert quantized_weight_bytes(c, bits=16, scale_bits=0) == weight_bytes(c, "fp16")
    assert weight_bytes(c, "int4") < quantized_weight_bytes(c) < weight_bytes(c, "int8")


def test_quantized_bytes_are_the_tensors_of_a_group_wise_format():
    """Quantise a tiny model's matrices for real: packed 4-bit values (uint8, two a byte) + fp16 scales per 16."""
    c = parse_config({**TINY["llama"], "hidden_size": 32, "intermediate_size": 48})
    torch.manual_seed(0)
    stored = []
    for p in torch_ref.build(c, "cpu").parameters():
        w = p.detach()
        if w.dim() == 2 and w.shape != (c["V"], c["H"]):  # the matrices; tables and vectors stay 16-bit
            groups = w.reshape(-1, 16)
            scale = groups.abs().amax(dim=1, keepdim=True) / 7
            q = (groups / scale).round().clamp(-8, 7).to(torch.int8) + 8  # 0..15
            packed = (q[:, 0::2] | (q[:, 1::2] << 4)).to(torch.uint8)
            stored += [packed, scale.to(torch.float16)]
        else:
            stored.append(w.to(torch.float16))
    assert nbytes(stored) == quantized_weight_bytes(c, group_size=16)


def test_packed_4_bit_zero_points_as_gptq_and_awq_store_them():
    """Asymmetric 4-bit: packed values, an fp16 scale and a 4-bit zero point per group, eight zero points an int32
    (the ``qzeros`` of GPTQ/AWQ checkpoints): 4 + (16 + 4)/g bits a weight."""
    c = parse_config({**TINY["llama"], "hidden_size": 32, "intermediate_size": 48})
    torch.manual_seed(0)
    stored = []
    for p in torch_ref.build(c, "cpu").parameters():
        w = p.detach()
        if w.dim() == 2 and w.shape != (c["V"], c["H"]):
            groups = w.reshape(-1, 16)
            low, high = groups.amin(dim=1, keepdim=True), groups.amax(dim=1, keepdim=True)
            scale = (high - low) / 15
            zero = (-low / scale).round().clamp(0, 15).to(torch.int32)  # 0..15
            q = ((groups / scale).round() + zero).clamp(0, 15).to(torch.uint8)
            packed = q[:, 0::2] | (q[:, 1::2] << 4)
            z = zero.reshape(-1, 8)
            qzeros = sum(z[:, i] << (4 * i) for i in range(8)).to(torch.int32)  # eight 4-bit zeros a word
            stored += [packed, scale.to(torch.float16), qzeros]
        else:
            stored.append(w.to(torch.float16))
    assert nbytes(stored) == quantized_weight_bytes(c, group_size=16, zero_bits=4)


def test_an_encoder_decoder_stores_the_activations_of_both_stacks():
    """T5: L encoder and L_d decoder layers, each estimated as one layer of eq. 1 (cross-attention left out)."""
    c = load_config("t5-small")
    assert (c["L"], c["L_d"]) == (6, 6)
    assert activation_bytes(c, 1, 512) == 12 * activation_bytes_per_layer(c, 1, 512)
    deeper = parse_config({**json.loads((MODELS_DIR / "t5-small.json").read_text()), "num_decoder_layers": 8})
    assert activation_bytes(deeper, 1, 512) == 14 * activation_bytes_per_layer(c, 1, 512)
    out = run_cli("memory", "t5-small", "--seq-len", "512").stdout
    assert "L + L_d = 12 layers" in out and "KV cache (fp16): (2L_d·A·d_k·S·B + 2L_d·A·d_k·S·B)·2 bytes" in out
