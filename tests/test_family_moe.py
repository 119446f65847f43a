"""Mixtures of experts: Mixtral (``MixtralForCausalLM``) and Qwen3-MoE (``Qwen3MoeForCausalLM``).

The shipped configs (``data/models/``, written from the published config.json files) against transformers 5's
classes on the meta device, name by name and shape by shape (experts fused: ``mlp.experts.gate_up_proj``
E × 2I × H, ``mlp.experts.down_proj`` E × H × I, the router ``mlp.gate.weight`` E × H); the active
parameters (a token uses k of the E experts); the FLOPs of a tiny real model with eager experts (a MoE
forward cannot run on meta: its routing reads values); malformed configs refused in one line; unusual configs
transformers builds counted, and refused by flops/memory only where a tiny twin shows it cannot run them.
"""

from __future__ import annotations

import json

import pytest

from helpers import count_model, load_config, param_table, parse_config
from helpers.config import MODELS_DIR
from helpers.count import count_report
from helpers.flops import forward_flops, six_n_d, six_n_d_gap
from helpers.params import param_layout

from .conftest import (
    assert_counted_as_built, assert_refused, assert_runs_where_transformers_runs,
    assert_twin_runs_where_transformers_runs, hf_model, run_cli,
)
from .strategies import TINY

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
transformers.logging.set_verbosity_error()

from torch.utils.flop_counter import FlopCounterMode  # noqa: E402

from helpers import torch_ref  # noqa: E402



# (name, transformers' total on meta, active parameters: the total less the E − k experts a token skips)
SHIPPED = [("mixtral-8x7b-v0.1", 46_702_792_704, 12_879_925_248), ("qwen3-30b-a3b", 30_532_122_624, 3_353_032_704)]


@pytest.mark.parametrize(("name", "figure", "active"), SHIPPED)
def test_shipped_moe_is_what_transformers_builds(name, figure, active):
    raw = json.loads((MODELS_DIR / f"{name}.json").read_text())
    c = load_config(name)
    model = hf_model(raw)
    assert [(p.name, p.shape) for p in param_table(c)] == [(n, tuple(p.shape)) for n, p in model.named_parameters()]
    result = count_model(c)
    assert result.total == sum(p.numel() for p in model.parameters()) == figure
    assert result.active == active
    doc = json.loads(run_cli("count", name, "--json").stdout)
    assert (doc["total"], doc["active"]) == (figure, active)
    assert f"{active:,}" in run_cli("count", name).stdout.splitlines()[-1]  # the total row: total and active


def test_mixtral_active_parameters_by_hand():
    """Mixtral 8x7B: each token uses 2 of the 8 experts: 6 experts of 3·H·I idle in each of 32 layers."""
    c = load_config("mixtral-8x7b-v0.1")
    result = count_model(c)
    assert result.total - result.active == 32 * 6 * 3 * 4096 * 14336
    assert set(result.active_components) == set(result.components)
    assert {g for g in result.components if result.components[g] != result.active_components[g]} == {"feed-forward"}
    assert "active per token" in count_report(result)


def test_dense_output_has_no_active_column():
    c = load_config("llama-7b")
    result = count_model(c)
    assert result.active == result.total and "active" not in count_report(result)


_DEEPSEEK = json.loads((MODELS_DIR / "deepseek-v3.json").read_text())
# each mixture's tiny config, and DeepSeek-V3's with a plain query projection and biases, or with its published YaRN
# rotary scaling (no matmul)
TINY_CASES = [("mixtral", {}), ("qwen3_moe", {}), ("gpt_oss", {}), ("deepseek_v3", {}),
              ("deepseek_v3", {"q_lora_rank": None, "attention_bias": True}),
              ("deepseek_v3", {"rope_scaling": _DEEPSEEK["rope_scaling"], "rope_theta": _DEEPSEEK["rope_theta"]}),
              ("glm4_moe", {}), ("glm4_moe", {"use_qk_norm": False, "attention_bias": False, "partial_rotary_factor": 1.0}),
              ("deepseek_v2", {}), ("deepseek_v2", {"topk_method": "greedy", "mlp_bias": True, "q_lora_rank": 12})]


@pytest.mark.parametrize(("model_type", "change"), TINY_CASES)
@pytest.mark.parametrize(("B", "S"), [(1, 1), (2, 5)])
def test_tiny_real_moe_flops_and_reference(model_type, change, B, S):
    """FlopCounterMode on a tiny real model with eager experts, and on the plain-torch reference (meta)."""
    raw = {**TINY[model_type], **change}
    c = parse_config(raw)
    torch.manual_seed(0)
    model = hf_model(raw, "cpu")
    flops = forward_flops(c, B, S)
    with FlopCounterMode(display=False) as counter:
        model(torch.randint(0, c["V"], (B, S)), use_cache=True)
    assert counter.get_total_flops() == flops.forward
    ref = torch_ref.build(c)
    assert torch_ref.matches(param_table(c), ref)
    assert torch_ref.flop_count(ref, B, S) == flops.forward
    assert torch_ref.flop_count(ref, B, S, backward=True) == flops.training
    # 6·N·D charges every expert; the count charges k of E per token: the gap names the difference
    gap = six_n_d_gap(flops)
    assert gap["routed experts a token does not use"] == 6 * B * S * (count_model(c).total - count_model(c).active)
    assert sum(gap.values()) == six_n_d(c, B, S) - flops.training


@pytest.mark.parametrize(("model_type", "change"), [case for case in TINY_CASES if case[0] in ("glm4_moe", "deepseek_v2")])
def test_the_reference_computes_what_transformers_computes(model_type, change):
    """GLM-4.5's and DeepSeek-V2's plain-torch models, given transformers' weights, give its logits (the RMSNorms'
    epsilon, a constant the reference fixes at 1e-6, set alike): the same routing, rotation and attention."""
    raw = {**TINY[model_type], **change, "rms_norm_eps": 1e-6}
    c = parse_config(raw)
    torch.manual_seed(0)
    model = hf_model(raw, "cpu").eval()
    ref = torch_ref.build(c, "cpu").eval()
    ref.load_state_dict(model.state_dict())  # the same names: every parameter and buffer
    input_ids = torch.randint(0, c["V"], (2, 5))
    with torch.no_grad():
        torch.testing.assert_close(ref(input_ids), model(input_ids).logits, rtol=1e-5, atol=1e-5)


# (model, change, its tiny twin's change, the key flops and memory refuse; None: they answer)
MOE_BUILT = [
    ("mixtral-8x7b-v0.1", {"num_experts_per_tok": 9}, {"num_experts_per_tok": 5}, "num_experts_per_tok"),
    ("mixtral-8x7b-v0.1", {"num_local_experts": 8, "num_experts": 4}, {"num_experts": 3}, None),  # the alias wins
    ("mixtral-8x7b-v0.1", {"sliding_window": 4096}, {"sliding_window": 3}, None),  # the mask and the cache only
    ("mixtral-8x7b-v0.1", {"num_key_value_heads": 5}, {"num_key_value_heads": 3}, "num_key_value_heads"),
    ("mixtral-8x7b-v0.1", {"hidden_size": 4095}, {"hidden_size": 12, "num_attention_heads": 4}, "head_dim"),  # odd
    # no experts: the tensors are 0 wide; k = 2 of 0 cannot route, k = 0 runs (the router alone)
    ("mixtral-8x7b-v0.1", {"num_local_experts": 0}, {"num_local_experts": 0}, "num_experts_per_tok"),
    ("mixtral-8x7b-v0.1", {"num_local_experts": 0, "num_experts_per_tok": 0},
     {"num_local_experts": 0, "num_experts_per_tok": 0}, None),
    ("mixtral-8x7b-v0.1", {"num_experts_per_tok": 0}, {"num_experts_per_tok": 0}, None),  # no expert runs
    ("qwen3-30b-a3b", {"num_experts_per_tok": 0}, {"num_experts_per_tok": 0}, None),  # no expert runs
    ("qwen3-30b-a3b", {"num_experts": -1}, {"num_experts": -1}, None),  # E ≤ 0: every layer dense (E > 0 tested)
    ("qwen3-30b-a3b", {"moe_intermediate_size": 0}, {"moe_intermediate_size": 0}, None),  # experts 0 wide
    ("qwen3-30b-a3b", {"num_experts_per_tok": 129}, {"num_experts_per_tok": 5}, "num_experts_per_tok"),
    ("qwen3-30b-a3b", {"use_sliding_window": True}, {"use_sliding_window": True, "sliding_window": 3}, None),
    ("qwen3-30b-a3b", {"num_key_value_heads": 5}, {"num_key_value_heads": 3}, "num_key_value_heads"),
]


@pytest.mark.parametrize(("name", "change", "tiny", "forward"), MOE_BUILT)
def test_moe_unusual_configs_are_counted_and_refused_only_where_transformers_fails(write_config, name, change, tiny,
                                                                                   forward):
    """transformers builds each: count answers, tensor by tensor; flops and memory refuse in one line naming the key
    exactly where transformers cannot run it (its tiny twin's forward pass fails), and answer its FLOPs where it runs."""
    raw = {**json.loads((MODELS_DIR / f"{name}.json").read_text()), **change}
    assert_counted_as_built(raw)
    assert_runs_where_transformers_runs(write_config(raw), forward, None)
    assert_twin_runs_where_transformers_runs({**TINY[raw["model_type"]], **tiny}, forward)


def test_mixtral_num_experts_alias():
    """MixtralConfig's attribute_map reads ``num_experts`` as ``num_local_experts``."""
    raw = {**TINY["mixtral"]}
    raw["num_experts"] = raw.pop("num_local_experts")
    c = parse_config(raw)
    assert c["E"] == transformers.AutoConfig.for_model(**raw).num_local_experts == 4


# --- Qwen3-MoE: dense and sparse layers ------------------------------------------------------------------

@pytest.mark.parametrize(("change", "sparse"), [
    ({}, [1, 2, 3, 4, 5]),
    ({"decoder_sparse_step": 2}, [1, 3, 5]),
    ({"decoder_sparse_step": 2, "mlp_only_layers": [3, 4, 9]}, [1, 5]),
    ({"decoder_sparse_step": 3, "mlp_only_layers": []}, [2, 5]),
    ({"mlp_only_layers": [0, 2, 5, -1]}, [1, 3, 4]),
    ({"num_experts": 0}, []),
    ({"num_experts": 0, "num_experts_per_tok": 5}, []),  # no sparse layer: k is never used
    ({"mlp_only_layers": None}, [0, 1, 2, 3, 4, 5]),
])
def test_qwen3_moe_dense_and_sparse_layers(change, sparse):
    """Layer i is sparse unless listed in mlp_only_layers, E = 0, or (i + 1) is no multiple of the step."""
    raw = {**TINY["qwen3_moe"], "num_hidden_layers": 6, **change}
    c = parse_config(raw)
    model = hf_model(raw)
    assert [(p.name, p.shape) for p in param_table(c)] == [(n, tuple(p.shape)) for n, p in model.named_parameters()]
    assert count_model(c).total == sum(p.numel() for p in model.parameters())
    assert [i for i in range(6) if f"model.layers.{i}.mlp.gate.weight" in dict(model.named_parameters())] == sparse
    assert c["L_e"] == len(sparse)
    ref = torch_ref.build(c)
    assert torch_ref.matches(param_table(c), ref)
    assert torch_ref.flop_count(ref, 2, 3) == forward_flops(c, 2, 3).forward


def test_qwen3_moe_layers_are_runs_of_one_kind():
    """A stack of identical layers is one block: the 48 sparse layers of Qwen3-30B-A3B, 3 runs around a dense one."""
    assert len(param_layout(load_config("qwen3-30b-a3b")).blocks) == 3
    c = parse_config({**json.loads((MODELS_DIR / "qwen3-30b-a3b.json").read_text()), "mlp_only_layers": [10]})
    assert [block.layers for block in param_layout(c).blocks[1:-1]] == [range(0, 10), range(10, 11), range(11, 48)]


@pytest.mark.parametrize(("change", "field"), [
    ({"decoder_sparse_step": 0}, "decoder_sparse_step"),
    ({"mlp_only_layers": 3}, "mlp_only_layers"),
    ({"mlp_only_layers": [1.5]}, "mlp_only_layers"),
    ({"mlp_only_layers": [True]}, "mlp_only_layers"),
    ({"head_dim": None}, "head_dim"),
    ({"num_key_value_heads": None}, "num_key_value_heads"),
])
def test_qwen3_moe_bad_configs_are_refused_in_one_line(write_config, change, field):
    raw = {**json.loads((MODELS_DIR / "qwen3-30b-a3b.json").read_text()), **change}
    assert_refused(run_cli("count", str(write_config(raw))), field)


@pytest.mark.parametrize("name", ["mixtral-8x7b-v0.1", "qwen3-30b-a3b", "deepseek-v3", "gpt-oss-20b",
                                  "llama-4-maverick-17b-128e-text", "llama-4-scout-17b-16e-text"])
def test_moe_layer_sorts_every_sparse_layer_as_the_active_count_does(name):
    """``helpers.lessons.moe.moe_layer`` (notebook 09) sorts each sparse layer's rows into router, routed and shared experts:
    the mixtures hold every feed-forward row, and what a token skips, layer by layer, is the total less ``active``
    (GPT-OSS's expert biases are routed rows: a token reads k of their E rows)."""
    from helpers.lessons.moe import moe_layer
    from helpers.params import FEED_FORWARD, select
    c = load_config(name)
    table, result = param_table(c), count_model(c)
    skipped = 0
    for i in range(c["L"]):
        layer = select(table, layer=i)
        try:
            mixture = moe_layer(layer)
        except ValueError:  # a dense layer
            continue
        assert mixture.total == sum(p.count for p in layer if p.component == FEED_FORWARD)
        assert len(mixture.router) in (1, 2) and all(p.shape[0] == mixture.E for p in mixture.router)
        skipped += mixture.total - mixture.active(c["k"])
    assert skipped > 0
    assert result.total - skipped == result.active
