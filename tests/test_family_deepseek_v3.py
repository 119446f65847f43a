"""DeepSeek-V3 (``DeepseekV3ForCausalLM``): latent attention (MLA), the first dense layers, shared and routed experts.

The shipped config (``data/models/deepseek-v3.json``, DeepSeek-V3's published config.json) against transformers 5's
class on the meta device, name by name and shape by shape; total and active parameters against the published
figures; what ``model.parameters()`` leaves out (the router's correction bias is a buffer, the multi-token-prediction
module is not built, ``quantization_config`` changes nothing); FLOPs of a tiny real model with eager experts; the
cache transformers returns (the latent, not per-head keys and values) beside the full keys and values attention uses;
malformed configs refused in one line.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings

from helpers import ConfigError, count_model, load_config, param_table, parse_config
from helpers.budget import kv_values_per_token, mla_values_per_token
from helpers.config import MODELS_DIR
from helpers.count import count_report
from helpers.flops import forward_flops
from helpers.memory import Memory, kv_cache_bytes, memory_report
from helpers.params import EMBEDDINGS, FEED_FORWARD, param_layout

from .conftest import (
    assert_counted_as_built, assert_refused, assert_runs_where_transformers_runs, forward_error, hf_model, run_cli,
)
from .strategies import STRATEGIES, TINY

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
transformers.logging.set_verbosity_error()

from helpers import torch_ref  # noqa: E402

RAW = json.loads((MODELS_DIR / "deepseek-v3.json").read_text())



def table(model) -> list[tuple[str, tuple[int, ...]]]:
    return [(n, tuple(p.shape)) for n, p in model.named_parameters()]


def test_deepseek_v3_is_what_transformers_builds():
    """671B without the multi-token-prediction module; 37.6B active, 36.6B of them without the input table."""
    c = load_config("deepseek-v3")
    model = hf_model(RAW)
    assert [(p.name, p.shape) for p in param_table(c)] == table(model)
    result = count_model(c)
    assert result.total == sum(p.numel() for p in model.parameters()) == 671_026_404_352
    # a token uses k = 8 of the E = 256 routed experts in each of the 58 sparse layers
    experts = 58 * 256 * 3 * c["H"] * c["I_e"]
    assert result.active == result.total - experts * (256 - 8) // 256 == 37_552_282_624
    # DeepSeek's weights documentation: 36.6B activated "including 0.9B for the output head" (the input table left out)
    assert result.active - result.components[EMBEDDINGS] == 36_625_603_584
    assert {g for g in result.components if result.components[g] != result.active_components[g]} == {FEED_FORWARD}
    doc = json.loads(run_cli("count", "deepseek-v3", "--json").stdout)
    assert (doc["total"], doc["active"]) == (result.total, result.active)
    assert "active per token" in count_report(result)


def test_first_layers_dense_then_sparse_as_runs():
    c = load_config("deepseek-v3")
    blocks = param_layout(c).blocks
    assert [block.layers for block in blocks[1:-1]] == [range(0, 3), range(3, 61)]
    names = {p.name for p in param_table(c)}
    assert "model.layers.2.mlp.gate_proj.weight" in names and "model.layers.2.mlp.gate.weight" not in names
    assert {"model.layers.3.mlp.gate.weight", "model.layers.3.mlp.shared_experts.gate_proj.weight",
            "model.layers.60.mlp.experts.gate_up_proj"} <= names
    huge = parse_config({**RAW, "num_hidden_layers": 10**7})  # identical layers counted once and multiplied
    assert len(param_layout(huge).blocks) == 4
    per_sparse_layer = count_model(parse_config({**RAW, "num_hidden_layers": 62})).total - count_model(c).total
    assert count_model(huge).total == count_model(c).total + (10**7 - 61) * per_sparse_layer


@pytest.mark.parametrize("change", [{"q_lora_rank": None}, {"first_k_dense_replace": 0}, {"first_k_dense_replace": 61},
                                    {"attention_bias": True, "tie_word_embeddings": True}, {"n_shared_experts": 0},
                                    {"num_key_value_heads": None}])
def test_variants_are_what_transformers_builds(change):
    """A plain q_proj (q_lora_rank: null), all sparse, all dense, biases and a tied head, no shared expert."""
    raw = {**RAW, **change}
    c = parse_config(raw)
    model = hf_model(raw)
    assert [(p.name, p.shape) for p in param_table(c)] == table(model)
    assert count_model(c).total == sum(p.numel() for p in model.parameters())
    if change == {"first_k_dense_replace": 61}:
        assert count_model(c).active == count_model(c).total  # no routed expert: nothing idle


@given(STRATEGIES["deepseek_v3"])
@settings(max_examples=40, deadline=None)
def test_random_configs_are_what_transformers_builds(raw):
    c = parse_config(raw)
    model = hf_model(raw)
    assert [(p.name, p.shape) for p in param_table(c)] == table(model)
    assert count_model(c).total == sum(p.numel() for p in model.parameters())


def test_what_parameters_leave_out():
    """The router's ``e_score_correction_bias`` is a buffer (saved, not counted); the multi-token-prediction module
    (num_nextn_predict_layers) is not built; ``quantization_config`` (fp8 storage) changes no tensor of the model."""
    model = hf_model(RAW)
    buffers = {n for n, _ in model.named_buffers() if n.endswith("e_score_correction_bias")}
    assert len(buffers) == 58 and not any(n.endswith("e_score_correction_bias") for n, _ in model.named_parameters())
    assert set(model.state_dict()) - {n for n, _ in model.named_parameters()} == buffers
    total = count_model(load_config("deepseek-v3")).total
    for change in ({"num_nextn_predict_layers": 0}, {"num_nextn_predict_layers": 3},
                   {"quantization_config": None}):
        raw = {k: v for k, v in {**RAW, **change}.items() if v is not None}
        assert count_model(parse_config(raw)).total == total
        assert sum(p.numel() for p in hf_model(raw).parameters()) == total


def _expanded(model) -> list:
    """Record every layer's keys and values as attention uses them (``expand_kv``'s outputs)."""
    seen = []
    for layer in model.model.layers:
        attn = layer.self_attn

        def wrapped(kv_nope, k_rot, original=attn.expand_kv):
            keys, values = original(kv_nope, k_rot)
            seen.append((keys, values))
            return keys, values

        attn.expand_kv = wrapped
    return seen


@pytest.mark.parametrize(("dtype", "name"), [(torch.float32, "fp32"), (torch.bfloat16, "bf16")])
@pytest.mark.parametrize(("model_type", "change"), [
    ("deepseek_v3", {}), ("deepseek_v3", {"q_lora_rank": None}),
    ("deepseek_v2", {}), ("deepseek_v2", {"q_lora_rank": 12, "topk_method": "greedy", "mlp_bias": True}),
])
def test_cache_is_the_latent_transformers_returns(dtype, name, model_type, change):
    """transformers caches, per layer, the latent (keys, r_kv wide) and the shared rotary key (values, d_rope), one
    head; attention then expands them into A heads of keys (d_k) and values (d_v): what the full figure counts.
    DeepSeek-V2's class caches the same (its tiny config: no query compression, as V2-Lite)."""
    raw = {**TINY[model_type], **change}
    c = parse_config(raw)
    torch.manual_seed(0)
    model = hf_model(raw, "cpu").to(dtype).eval()
    for S in (1, 4, 7):
        seen = _expanded(model)
        with torch.no_grad():
            cache = model(input_ids=torch.randint(0, c["V"], (2, S)), use_cache=True).past_key_values
        assert {(tuple(layer.keys.shape), tuple(layer.values.shape)) for layer in cache.layers} == {
            ((2, 1, S, c["r_kv"]), (2, 1, S, c["d_rope"]))}
        measured = sum(t.numel() * t.element_size() for layer in cache.layers for t in (layer.keys, layer.values))
        assert measured == kv_cache_bytes(c, 2, S, name) == Memory(c, 2, S, name).kv_cache()
        full = sum(t.numel() * t.element_size() for pair in seen for t in pair)
        assert len(seen) == c["L"] and full == Memory(c, 2, S, name).kv_cache_full()
    # the reference model's latent has the shapes transformers caches
    ref = torch_ref.build(c)
    cos, sin = torch_ref.rotary_angles(c["d_rope"], 3, "meta")
    latent, k_rot = ref.model.layers[0].self_attn.latent(torch.zeros(2, 3, c["H"], device="meta"), cos, sin)
    assert (tuple(latent.shape), tuple(k_rot.shape)) == ((2, 1, 3, c["r_kv"]), (2, 1, 3, c["d_rope"]))


def test_deepseek_v3_cache_per_token():
    """61 layers × (512 + 64) values a token (notebook 10's MLA formula), against 61 × 128 × (192 + 128) for full
    keys and values: 71 times less."""
    c = load_config("deepseek-v3")
    assert kv_values_per_token(c) == mla_values_per_token(61, 512, 64) == 61 * 576 == 35_136
    m = Memory(c, 1, 1, "bf16")
    assert (m.kv_cache(), m.kv_cache_full()) == (2 * 35_136, 2 * 61 * 128 * 320) == (70_272, 4_997_120)
    text = memory_report(Memory(c, 1, 4096, "fp16"))
    assert f"{kv_cache_bytes(c, 1, 4096):,}" in text and f"{Memory(c, 1, 4096, 'fp16').kv_cache_full():,}" in text
    assert "×71.11" in text
    doc = json.loads(run_cli("memory", "deepseek-v3", "--seq-len", "4096", "--json").stdout)
    assert (doc["kv_cache"], doc["kv_cache_full"]) == (kv_cache_bytes(c, 1, 4096), 4096 * 4_997_120)
    assert "kv_cache_full" not in json.loads(run_cli("memory", "llama-7b", "--json").stdout)  # full K, V already


BAD = [
    ({"kv_lora_rank": None}, "kv_lora_rank"),
    ({"qk_rope_head_dim": 63}, "qk_rope_head_dim"),
    ({"v_head_dim": None}, "v_head_dim"),
    ({"first_k_dense_replace": None}, "first_k_dense_replace"),
    ({"n_shared_experts": -1}, "n_shared_experts"),
    ({"attention_bias": "no"}, "attention_bias"),
]


@pytest.mark.parametrize(("change", "field"), BAD)
def test_bad_configs_are_refused_in_one_line(write_config, change, field):
    raw = {**RAW, **change}
    assert_refused(run_cli("count", str(write_config(raw))), field)


BUILT = [  # (change, the key flops and memory refuse; None: they answer)
    ({"num_experts_per_tok": 257}, "num_experts_per_tok"),  # more experts per token than experts
    ({"topk_group": 1, "num_experts_per_tok": 33}, None),  # the kept group holds 32: the rest are picked at score 0
    ({"first_k_dense_replace": 62}, None),  # beyond the depth: every layer dense
    ({"topk_group": 9}, "topk_group"),  # more groups kept than groups
    ({"n_group": 7}, "n_group"),  # groups that do not divide the experts
    ({"n_group": 256, "topk_group": 8}, "n_group"),  # groups of one expert
    ({"num_key_value_heads": 64}, "num_key_value_heads"),  # changes no tensor; repeat_kv breaks the forward pass
    ({"num_attention_heads": 64}, "num_key_value_heads"),
    ({"num_local_experts": 128}, None),  # the alias wins over n_routed_experts (applied after the fields)
    ({"num_experts_per_tok": 0}, None),  # the router scores, no routed expert runs
    ({"q_lora_rank": 0}, None),  # q_a_proj, q_a_layernorm and q_b_proj 0 wide (not a plain q_proj: that is null)
    ({"kv_lora_rank": 0}, None),  # the latent 0 wide: kv_a_layernorm and kv_b_proj
    ({"qk_nope_head_dim": 0}, None),  # every query/key dimension rotary
    ({"moe_layer_freq": 2}, None),  # not read by DeepseekV3 in transformers: every layer past the dense ones sparse
]


@pytest.mark.parametrize(("change", "forward"), BUILT)
def test_unusual_configs_are_counted_and_refused_only_where_transformers_fails(write_config, change, forward):
    """transformers builds each: count answers, tensor by tensor; flops and memory refuse in one line naming the key
    exactly the configs transformers cannot run (tiny twins of each run or fail below)."""
    raw = {**RAW, **change}
    assert_counted_as_built(raw)
    assert_runs_where_transformers_runs(write_config(raw), forward, None)


@pytest.mark.parametrize("change", [{"topk_group": 1, "num_experts_per_tok": 3}, {"first_k_dense_replace": 4},
                                    {"num_local_experts": 16}, {"moe_layer_freq": 2}, {"num_experts_per_tok": 0},
                                    {"q_lora_rank": 0}, {"kv_lora_rank": 0}, {"qk_nope_head_dim": 0},
                                    {"q_lora_rank": 0, "kv_lora_rank": 0, "qk_nope_head_dim": 0}])
def test_the_unusual_configs_transformers_runs_are_answered(change):
    """Tiny twins of the configs above that run: transformers' FLOPs (eager experts) are the engine's."""
    raw = {**TINY["deepseek_v3"], **change}
    c = assert_counted_as_built(raw)
    c.check_runs(cache=True)
    assert forward_error(raw, "cpu") == forward_flops(c, 1, 3).forward


@pytest.mark.parametrize(("change", "field"), [
    ({"num_key_value_heads": 2}, "num_key_value_heads"), ({"qk_rope_head_dim": 3}, "qk_rope_head_dim"),
    ({"n_group": 8, "topk_group": 2}, "n_group"), ({"n_group": 3, "topk_group": 2}, "n_group"),
    ({"num_experts_per_tok": 9}, "num_experts_per_tok"), ({"topk_group": 5}, "topk_group"),
])
def test_refusals_are_what_transformers_cannot_run(change, field):
    """A_kv ≠ A, an odd rotary size, groups of one expert, groups that do not divide E, more experts per token than
    experts, more groups kept than groups: transformers builds the model (the parameters do not depend on them), the
    engine counts it, but its forward pass fails on one token, and flops/memory refuse it naming the key.
    (Groups that do not divide E can even run, silently wrong: the view that groups the router's scores then
    mixes the tokens' rows whenever their number fits, e.g. 3 tokens of 8 experts in groups of 2.)"""
    raw = {**TINY["deepseek_v3"], **change}
    c = assert_counted_as_built(raw)
    with pytest.raises(ConfigError) as info:
        c.check_runs()
    assert info.value.field == field
    model = hf_model(raw, "cpu")
    with pytest.raises(RuntimeError):
        model(torch.zeros(1, 1, dtype=torch.long))


def test_transformers_defaults_and_aliases():
    """``num_local_experts`` reads as ``n_routed_experts`` (DeepseekV3Config's attribute_map); null heads are A."""
    raw = {**TINY["deepseek_v3"]}
    raw["num_local_experts"] = raw.pop("n_routed_experts")
    assert parse_config(raw)["E"] == transformers.AutoConfig.for_model(**raw).n_routed_experts == 8
    raw["num_key_value_heads"] = None
    assert parse_config(raw)["A_kv"] == transformers.AutoConfig.for_model(**raw).num_key_value_heads == 4
    c = parse_config({"model_type": "deepseek_v3"})
    assert (c["d_k"], c["r_q"], c["L_f"]) == (transformers.DeepseekV3Config().qk_head_dim, 1536, 3)
