"""Mixtures of experts: Mixtral (``MixtralForCausalLM``) and Qwen3-MoE (``Qwen3MoeForCausalLM``).

The shipped configs (``data/models/``, written from the published config.json files) against transformers 5's
classes on the meta device, name by name and shape by shape (experts fused: ``mlp.experts.gate_up_proj``
E × 2I × H, ``mlp.experts.down_proj`` E × H × I, the router ``mlp.gate.weight`` E × H); the active
parameters (a token uses k of the E experts); the FLOPs of a tiny real model with eager experts (a MoE
forward cannot run on meta: its routing reads values); malformed configs refused in one line.
"""

from __future__ import annotations

import json

import pytest

from helpers import count_model, load_config, param_table, parse_config
from helpers.config import MODELS_DIR
from helpers.count import breakdown
from helpers.flops import forward_flops, six_n_d, six_n_d_gap

from .conftest import assert_refused, run_cli
from .strategies import TINY

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
transformers.logging.set_verbosity_error()

from torch.utils.flop_counter import FlopCounterMode  # noqa: E402

from helpers import torch_ref  # noqa: E402


def hf(raw: dict, device: str = "meta"):
    config = transformers.AutoConfig.for_model(**raw)
    config._attn_implementation = "eager"
    config._experts_implementation = "eager"
    with torch.device(device):
        return getattr(transformers, parse_config(raw).architecture)(config)


# (name, transformers' total on meta, active parameters: the total less the E − k experts a token skips)
SHIPPED = [("mixtral-8x7b-v0.1", 46_702_792_704, 12_879_925_248)]


@pytest.mark.parametrize(("name", "figure", "active"), SHIPPED)
def test_shipped_moe_is_what_transformers_builds(name, figure, active):
    raw = json.loads((MODELS_DIR / f"{name}.json").read_text())
    c = load_config(name)
    model = hf(raw)
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
    assert set(result.active_groups) == set(result.groups)
    assert {g for g in result.groups if result.groups[g] != result.active_groups[g]} == {"feed-forward"}
    assert "active per token" in breakdown(result)


def test_dense_output_has_no_active_column():
    c = load_config("llama-7b")
    result = count_model(c)
    assert result.active == result.total and "active" not in breakdown(result)


@pytest.mark.parametrize("model_type", ["mixtral"])
@pytest.mark.parametrize(("B", "S"), [(1, 1), (2, 5)])
def test_tiny_real_moe_flops_and_reference(model_type, B, S):
    """FlopCounterMode on a tiny real model with eager experts, and on the plain-torch reference (meta)."""
    raw = TINY[model_type]
    c = parse_config(raw)
    torch.manual_seed(0)
    model = hf(raw, "cpu")
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


@pytest.mark.parametrize(("change", "field"), [
    ({"num_experts_per_tok": 9}, "num_experts_per_tok"),
    ({"num_local_experts": 0}, "num_local_experts"),
    ({"num_experts_per_tok": 0}, "num_experts_per_tok"),
    ({"num_local_experts": 8, "num_experts": 4}, "num_local_experts"),
    ({"sliding_window": 4096}, "sliding_window"),
    ({"num_key_value_heads": 5}, "num_key_value_heads"),
    ({"hidden_size": 4095}, "num_attention_heads"),
])
def test_mixtral_bad_configs_are_refused_in_one_line(write_config, change, field):
    raw = {**json.loads((MODELS_DIR / "mixtral-8x7b-v0.1.json").read_text()), **change}
    assert_refused(run_cli("count", str(write_config(raw))), field)


def test_mixtral_num_experts_alias():
    """MixtralConfig's attribute_map reads ``num_experts`` as ``num_local_experts``."""
    raw = {**TINY["mixtral"]}
    raw["num_experts"] = raw.pop("num_local_experts")
    c = parse_config(raw)
    assert c["E"] == transformers.AutoConfig.for_model(**raw).num_local_experts == 4
