"""GLM-4.5 (``Glm4MoeForCausalLM``): exact against transformers, tensor by tensor.

The shipped config (``data/models/glm-4.5.json``, zai-org/GLM-4.5's published ``config.json``) against transformers'
class on the meta device; total and active parameters, and the card's 355B / 32B reconciled to the integer (the
multi-token-prediction layer transformers does not build, the vocabulary tables); variants (no QK-norm, no biases,
every layer dense or sparse, no shared expert); random small configs: names, shapes, total, FLOPs equal to
``FlopCounterMode`` with eager attention and eager experts, the KV cache equal to the bytes transformers' cache holds;
unusual configs counted and refused by flops/memory exactly where transformers' forward pass fails.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given

from helpers import count_model, load_config, param_table, parse_config
from helpers.config import raw_config
from helpers.flops import forward_flops
from helpers.memory import kv_cache_bytes
from helpers.params import EMBEDDINGS, FEED_FORWARD, LM_HEAD, param_layout

from .conftest import (
    assert_counted_as_built, assert_refused, assert_runs_where_transformers_runs,
    assert_runs_as_transformers, assert_twin_runs_where_transformers_runs, hf_model, run_cli,
)
from .strategies import STRATEGIES, TINY

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
transformers.logging.set_verbosity_error()
from torch.utils.flop_counter import FlopCounterMode  # noqa: E402

from .test_family_gpt_oss import RANDOM, real, table  # noqa: E402

RAW = raw_config("glm-4.5")
TOTAL, ACTIVE = 352_797_814_784, 33_632_251_904  # Glm4MoeForCausalLM on the meta device; k = 8 of 160 experts
def test_glm_4_5_is_what_transformers_builds():
    c = load_config("glm-4.5")
    model = hf_model(RAW)
    assert [(p.name, p.shape) for p in param_table(c)] == table(model)
    result = count_model(c)
    assert result.total == sum(p.numel() for p in model.parameters()) == TOTAL
    # a token uses k = 8 of the E = 160 routed experts in each of the 89 sparse layers; everything else
    E, k, H, I_e = c["E"], c["k"], c["H"], c["I_e"]
    assert (c["L"] - c["L_f"], E, k) == (89, 160, 8)
    assert result.total - result.active == 89 * (E - k) * 3 * H * I_e
    assert result.active == ACTIVE
    assert {g for g in result.components if result.components[g] != result.active_components[g]} == {FEED_FORWARD}
    doc = json.loads(run_cli("count", "glm-4.5", "--json").stdout)
    assert (doc["total"], doc["active"]) == (TOTAL, ACTIVE)
    # what is new against LLaMA: q/k/v biases (no o_proj bias), a QK-norm of d_k = 128 per head, head_dim ≠ H/A
    layer = dict(model.model.layers[0].named_parameters())
    assert layer["self_attn.q_proj.weight"].shape == (96 * 128, 5120) and "self_attn.o_proj.bias" not in layer
    assert layer["self_attn.k_proj.bias"].shape == (8 * 128,) and layer["self_attn.q_norm.weight"].shape == (128,)


def test_the_card_355b_and_32b_reconciled():
    """GLM-4.5's card: 355B total, 32B active. The model transformers builds, 352.8B; with the MTP layer the
    checkpoint adds (layer 92: one more sparse layer, ``eh_proj`` H × 2H, ``enorm``, ``hnorm`` and the shared head's
    norm; it shares the token table and the head), 356.8B: the card's 355B is neither, rounded. A token's active
    parameters without the two vocabulary tables, 32.1B: the card's 32B (33.6B with them, 32.9B with the head)."""
    c = load_config("glm-4.5")
    result = count_model(c)
    V, H = c["V"], c["H"]
    one_more = count_model(parse_config({**RAW, "num_hidden_layers": 93}))  # layer 92: a sparse layer
    layer, layer_active = one_more.total - result.total, one_more.active - result.active
    assert (layer, layer_active) == (3_935_625_472, 349_495_552)
    mtp = layer + 2 * H * H + 3 * H
    assert result.total + mtp == 356_785_884_416
    assert round(result.total / 1e9, 1) == 352.8 and round((result.total + mtp) / 1e9, 1) == 356.8
    assert result.active - 2 * V * H == 32_080_359_424 and round((result.active - 2 * V * H) / 1e9) == 32
    assert result.active - V * H == 32_856_305_664  # the input table alone left out (DeepSeek-V3's old note): 33B
    assert result.components[EMBEDDINGS] == result.components[LM_HEAD] == V * H == 775_946_240


def test_what_parameters_leave_out():
    """The router's ``e_score_correction_bias`` is a buffer; the MTP layers (``num_nextn_predict_layers``, alias
    ``num_mtp_layers``) are not built, whatever their number: the checkpoint's layer 92 is skipped when loading."""
    model = hf_model(RAW)
    buffers = {n for n, _ in model.named_buffers() if n.endswith("e_score_correction_bias")}
    assert len(buffers) == 89 and not any(n.endswith("e_score_correction_bias") for n, _ in model.named_parameters())
    assert len(model.model.layers) == RAW["num_hidden_layers"] == 92
    assert r"model\.layers\.92.*" in transformers.Glm4MoePreTrainedModel._keys_to_ignore_on_load_unexpected
    for change in ({"num_nextn_predict_layers": 0}, {"num_nextn_predict_layers": 3}, {"num_mtp_layers": 2}):
        raw = {**RAW, **change}
        assert count_model(parse_config(raw)).total == sum(p.numel() for p in hf_model(raw).parameters()) == TOTAL


def test_dense_then_sparse_layers_as_runs():
    c = load_config("glm-4.5")
    assert [block.layers for block in param_layout(c).blocks[1:-1]] == [range(0, 3), range(3, 92)]
    names = {p.name for p in param_table(c)}
    assert "model.layers.2.mlp.gate_proj.weight" in names and "model.layers.2.mlp.gate.weight" not in names
    assert {"model.layers.3.mlp.gate.weight", "model.layers.3.mlp.shared_experts.down_proj.weight",
            "model.layers.91.mlp.experts.gate_up_proj"} <= names


@pytest.mark.parametrize("change", [{"use_qk_norm": False}, {"attention_bias": False, "tie_word_embeddings": True},
                                    {"first_k_dense_replace": 0}, {"first_k_dense_replace": 92}, {"n_shared_experts": 0},
                                    {"partial_rotary_factor": 1.0}])
def test_variants_are_what_transformers_builds(change):
    raw = {**RAW, **change}
    c = assert_counted_as_built(raw)
    if change == {"first_k_dense_replace": 92}:
        assert count_model(c).active == count_model(c).total  # no routed expert: nothing idle


def test_head_dim_absent_is_hidden_over_heads():
    """Without head_dim, H // A (the heads need not divide H): GLM-4.5's 53, odd, half of it rotary: it runs."""
    raw = {key: value for key, value in RAW.items() if key != "head_dim"}
    c = assert_counted_as_built(raw)
    assert c["d_k"] == 5120 // 96 == 53 and "forward" not in c.cannot_run
    twin = {key: value for key, value in TINY["glm4_moe"].items() if key != "head_dim"}
    assert assert_twin_runs_where_transformers_runs({**twin, "hidden_size": 18}, None)["d_k"] == 4


@pytest.mark.parametrize("S", [1, 4])
@pytest.mark.parametrize(("dtype", "name"), [(torch.float32, "fp32"), (torch.bfloat16, "bf16")])
def test_tiny_flops_and_cache(S, dtype, name):
    """FlopCounterMode (eager attention, eager experts) on the tiny model; the cache: A_kv heads of d_k keys and values."""
    raw, B = TINY["glm4_moe"], 2
    c = parse_config(raw)
    model = real(raw).to(dtype)
    with torch.no_grad(), FlopCounterMode(display=False) as counter:
        cache = model(torch.randint(0, c["V"], (B, S)), use_cache=True).past_key_values
    assert counter.get_total_flops() == forward_flops(c, B, S).forward
    assert {tuple(layer.keys.shape) for layer in cache.layers} == {(B, c["A_kv"], S, c["d_k"])}
    held = sum(t.numel() * t.element_size() for layer in cache.layers for t in (layer.keys, layer.values))
    assert held == kv_cache_bytes(c, B, S, name)


@given(raw=STRATEGIES["glm4_moe"])
@RANDOM
def test_random_configs(raw):
    assert_runs_as_transformers(raw)  # names, shapes, total; FLOPs and cache bytes after 1 and 5 tokens


BAD = [
    ({"head_dim": None}, "head_dim"),  # the attention reads it as given
    ({"head_dim": 0}, "head_dim"),  # its scale, head_dim ** -0.5
    ({"head_dim": 127, "partial_rotary_factor": 1.0}, "head_dim"),  # validate_rope: odd and wholly rotary
    ({"partial_rotary_factor": "half"}, "partial_rotary_factor"),
    ({"use_qk_norm": None}, "use_qk_norm"),
    ({"num_key_value_heads": None}, "num_key_value_heads"),
]


@pytest.mark.parametrize(("change", "field"), BAD)
def test_bad_configs_are_refused_in_one_line(write_config, change, field):
    raw = {**RAW, **change}
    with pytest.raises(Exception):  # noqa: B017 -- transformers refuses it too, in its config class or its model
        hf_model(raw)
    assert_refused(run_cli("count", str(write_config(raw))), field)


# (change, its tiny twin's change, the key flops and memory refuse; None: they answer)
BUILT = [
    ({"num_experts_per_tok": 161}, {"num_experts_per_tok": 9}, "num_experts_per_tok"),
    ({"topk_group": 2}, {"topk_group": 3}, "topk_group"),  # more groups kept than groups
    ({"n_group": 160}, {"n_group": 8, "topk_group": 1}, "n_group"),  # groups of one expert: scored by their best two
    ({"num_key_value_heads": 7}, {"num_key_value_heads": 3}, "num_key_value_heads"),
    ({"head_dim": 127}, {"head_dim": 7}, None),  # odd, half rotary (63 of 127): runs
    ({"head_dim": 3, "partial_rotary_factor": 1.0}, {"head_dim": 3, "partial_rotary_factor": 1.0}, "head_dim"),
    ({"first_k_dense_replace": 93}, {"first_k_dense_replace": 4}, None),  # beyond the depth: every layer dense
    ({"num_experts_per_tok": 0}, {"num_experts_per_tok": 0}, None),  # the router scores, no routed expert runs
]


@pytest.mark.parametrize(("change", "tiny", "forward"), BUILT)
def test_unusual_configs_are_counted_and_refused_only_where_transformers_fails(change, tiny, forward):
    """transformers builds each: counted tensor by tensor; the engine declines to run it (flops, memory) exactly where
    its tiny twin's forward pass fails, naming the key, and answers its FLOPs where it runs."""
    c = assert_counted_as_built({**RAW, **change})
    assert c.cannot_run.get("forward", (None,))[0] == forward
    assert_twin_runs_where_transformers_runs({**TINY["glm4_moe"], **tiny}, forward)


@pytest.mark.parametrize(("change", "forward"), [({"topk_group": 2}, "topk_group"), ({"num_experts_per_tok": 0}, None)])
def test_the_command_line_refuses_in_one_line_what_cannot_run(write_config, change, forward):
    assert_runs_where_transformers_runs(write_config({**RAW, **change}), forward, None)


def test_transformers_defaults_and_aliases():
    """``num_local_experts`` reads as ``n_routed_experts`` (Glm4MoeConfig's attribute_map); a rotary share in
    ``rope_parameters`` wins over the top-level key."""
    raw = {**TINY["glm4_moe"]}
    raw["num_local_experts"] = raw.pop("n_routed_experts")
    assert parse_config(raw)["E"] == transformers.AutoConfig.for_model(**raw).n_routed_experts == 8
    c = parse_config({"model_type": "glm4_moe"})
    theirs = transformers.Glm4MoeConfig()
    assert (c["L_f"], c["E"], c["I_e"], c["d_k"]) == (theirs.first_k_dense_replace, theirs.n_routed_experts,
                                                      theirs.moe_intermediate_size, 4096 // 96)
    assert theirs.rope_parameters["partial_rotary_factor"] == 0.5
