"""DeepSeek-V2 (``DeepseekV2ForCausalLM``): multi-head latent attention as first published.

The shipped configs (``data/models/deepseek-v2-lite.json``, ``deepseek-v2.json``, written from deepseek-ai's published
``config.json``) against transformers' class on the meta device, name by name; totals and active parameters against
the cards' 15.7B / 2.4B and 236B / 21B; the latent cache transformers returns (DeepSeek-V3's); both routers (greedy,
group-limited greedy) and ``mlp_bias`` (the latent cache of tiny models: ``tests/test_family_deepseek_v3.py``, FLOPs and
the reference: ``tests/test_family_moe.py``); random small configs: names, shapes, total and FLOPs equal to
``FlopCounterMode`` (eager attention and experts); unusual configs counted and refused by flops/memory exactly where
transformers' forward pass fails.
"""

from __future__ import annotations

import pytest
from hypothesis import given

from helpers import ConfigError, count_model, load_config, param_table, parse_config
from helpers.config import raw_config
from helpers.flops import forward_flops
from helpers.memory import Memory
from helpers.params import EMBEDDINGS, FEED_FORWARD

from .conftest import (
    assert_counted_as_built, assert_refused, assert_runs_where_transformers_runs,
    assert_runs_as_transformers, assert_twin_runs_where_transformers_runs, hf_model, run_cli,
)
from .strategies import STRATEGIES, TINY

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
transformers.logging.set_verbosity_error()

from .test_family_gpt_oss import RANDOM, table  # noqa: E402

# (name, transformers' total on meta, active with both tables)
SHIPPED = [("deepseek-v2-lite", 15_706_484_224, 2_661_150_208), ("deepseek-v2", 235_741_434_880, 21_375_800_320)]
@pytest.mark.parametrize(("name", "total", "active"), SHIPPED)
def test_published_configs_are_what_transformers_builds(name, total, active):
    c = load_config(name)
    model = hf_model(raw_config(name))
    assert [(p.name, p.shape) for p in param_table(c)] == table(model)
    result = count_model(c)
    assert result.total == sum(p.numel() for p in model.parameters()) == total
    # a token uses k = 6 of the E routed experts in each sparse layer (all but the first)
    E, k, H, I_e = c["E"], c["k"], c["H"], c["I_e"]
    assert result.total - result.active == (c["L"] - 1) * (E - k) * 3 * H * I_e
    assert result.active == active
    assert {g for g in result.components if result.components[g] != result.active_components[g]} == {FEED_FORWARD}


def test_the_cards_figures_reconciled():
    """DeepSeek-V2-Lite: 15.7B total, 2.4B activated: 2.45B once the input table is left out (2.66B with it), the
    card's digits cut, not rounded; DeepSeek-V2: 236B and 21B, rounded, with the input table or without it."""
    lite, v2 = count_model(load_config("deepseek-v2-lite")), count_model(load_config("deepseek-v2"))
    assert round(lite.total / 1e9, 1) == 15.7 and round(v2.total / 1e9) == 236
    assert lite.active - lite.components[EMBEDDINGS] == 2_451_435_008
    assert int((lite.active - lite.components[EMBEDDINGS]) / 1e8) / 10 == 2.4  # 2.45 cut to 2.4
    assert round(lite.active / 1e9, 1) == 2.7  # with the input table: not the card's
    assert v2.active - v2.components[EMBEDDINGS] == 20_851_512_320
    assert round(v2.active / 1e9) == round((v2.active - v2.components[EMBEDDINGS]) / 1e9) == 21
    doc = run_cli("count", "deepseek-v2-lite", "--json").stdout
    assert '"total": 15706484224' in doc and '"active": 2661150208' in doc


def test_lite_has_no_query_compression():
    """V2-Lite: ``q_lora_rank: null``, a plain q_proj of A·d_k × H; V2: q_a_proj (1536 × H), its norm, q_b_proj."""
    lite, v2 = ({p.name for p in param_table(load_config(n))} for n in ("deepseek-v2-lite", "deepseek-v2"))
    assert "model.layers.0.self_attn.q_proj.weight" in lite and "model.layers.0.self_attn.q_a_proj.weight" not in lite
    assert {"model.layers.0.self_attn.q_a_proj.weight", "model.layers.0.self_attn.q_a_layernorm.weight",
            "model.layers.0.self_attn.q_b_proj.weight"} <= v2 and "model.layers.0.self_attn.q_proj.weight" not in v2
    c = load_config("deepseek-v2-lite")
    assert next(p for p in param_table(c) if p.name.endswith("q_proj.weight")).shape == (16 * 192, 2048)


@pytest.mark.parametrize("change", [{"mlp_bias": True}, {"attention_bias": True, "tie_word_embeddings": True},
                                    {"first_k_dense_replace": 0}, {"n_shared_experts": 0}, {"num_experts": 32}])
def test_variants_are_what_transformers_builds(change):
    """mlp_bias: biases on the dense SwiGLU and the shared experts (not the routed ones); biased attention and a tied
    head; every layer sparse; no shared expert; the alias num_experts."""
    c = assert_counted_as_built({**raw_config("deepseek-v2-lite"), **change})
    if "mlp_bias" in change:
        names = {p.name for p in param_table(c)}
        assert {"model.layers.0.mlp.down_proj.bias", "model.layers.1.mlp.shared_experts.gate_proj.bias"} <= names
        assert not any("experts.gate_up_proj_bias" in n or n.endswith("mlp.gate.bias") for n in names)


def test_published_cache_per_token():
    """V2: 60 layers × (512 + 64) values a token against 60 × 128 × (192 + 128) for full keys and values."""
    c = load_config("deepseek-v2")
    m = Memory(c, 1, 1, "bf16")
    assert (m.kv_cache(), m.kv_cache_full()) == (2 * 60 * 576, 2 * 60 * 128 * 320) == (69_120, 4_915_200)


@given(raw=STRATEGIES["deepseek_v2"])
@RANDOM
def test_random_configs(raw):
    assert_runs_as_transformers(raw)  # names, shapes, total; FLOPs and cache bytes after 1 and 5 tokens


BAD = [
    ({"hidden_size": 5121}, "num_attention_heads"),  # validate_architecture: the heads divide the width
    ({"qk_rope_head_dim": 63}, "qk_rope_head_dim"),  # validate_rope: odd, wider than 4
    ({"qk_rope_head_dim": 0, "qk_nope_head_dim": 0}, "qk_rope_head_dim"),  # queries and keys 0 wide: scale 0 ** -0.5
    ({"topk_method": 3}, "topk_method"),  # a string field
    ({"mlp_bias": None}, "mlp_bias"),
]


@pytest.mark.parametrize(("change", "field"), BAD)
def test_bad_configs_are_refused_in_one_line(write_config, change, field):
    raw = {**raw_config("deepseek-v2"), **change}
    with pytest.raises(Exception):  # noqa: B017 -- transformers refuses it too, in its config class or its model
        hf_model(raw)
    assert_refused(run_cli("count", str(write_config(raw))), field)


# (change to DeepSeek-V2, its tiny twin's change, the key flops and memory refuse; None: they answer)
BUILT = [
    ({"num_experts_per_tok": None}, {"num_experts_per_tok": None}, "num_experts_per_tok"),  # topk of None
    ({"topk_method": "noaux_tc"}, {"topk_method": "noaux_tc"}, "topk_method"),  # neither branch of the router
    ({"topk_method": None}, {"topk_method": None}, "topk_method"),
    ({"n_group": None}, {"n_group": None}, "n_group"),
    ({"topk_group": 9}, {"topk_group": 5}, "topk_group"),
    ({"n_group": 320}, {"n_group": 16}, "n_group"),  # groups of 0 experts
    ({"n_group": 160, "topk_group": 3}, {"n_group": 8, "topk_group": 2}, None),  # groups of one: scored by their best
    ({"topk_group": 1, "num_experts_per_tok": 21}, {"topk_group": 1, "num_experts_per_tok": 3}, None),  # masked at 0
    ({"topk_method": "greedy", "n_group": None, "topk_group": None},
     {"topk_method": "greedy", "n_group": None, "topk_group": None}, None),  # greedy never reads the groups
    ({"num_experts_per_tok": 161, "topk_method": "greedy"}, {"num_experts_per_tok": 9, "topk_method": "greedy"},
     "num_experts_per_tok"),
    ({"num_key_value_heads": 64}, {"num_key_value_heads": 2}, "num_key_value_heads"),
    ({"qk_rope_head_dim": 0}, {"qk_rope_head_dim": 0}, "qk_rope_head_dim"),  # builds (rotary of H/A), cannot run
    ({"qk_nope_head_dim": 127}, {"qk_nope_head_dim": 3}, "qk_nope_head_dim"),  # the complex view, in fp32
    ({"kv_lora_rank": 511}, {"kv_lora_rank": 5}, "kv_lora_rank"),
    ({"v_head_dim": 0}, {"v_head_dim": 0}, None),  # values 0 wide: runs
    ({"num_hidden_layers": 1, "num_experts_per_tok": None}, {"first_k_dense_replace": 3, "num_experts_per_tok": None},
     None),  # every layer dense: k is never read
]


@pytest.mark.parametrize(("change", "tiny", "forward"), BUILT)
def test_unusual_configs_are_counted_and_refused_only_where_transformers_fails(change, tiny, forward):
    """transformers builds each: counted tensor by tensor; the engine declines to run it (flops, memory) exactly where
    its tiny twin's forward pass fails, naming the key, and answers its FLOPs where it runs."""
    c = assert_counted_as_built({**raw_config("deepseek-v2"), **change})
    assert c.cannot_run.get("forward", (None,))[0] == forward
    assert_twin_runs_where_transformers_runs({**TINY["deepseek_v2"], **tiny}, forward)


@pytest.mark.parametrize(("change", "forward"), [({"topk_method": "noaux_tc"}, "topk_method"), ({"n_group": 160, "topk_group": 3}, None)])
def test_the_command_line_refuses_in_one_line_what_cannot_run(write_config, change, forward):
    assert_runs_where_transformers_runs(write_config({**raw_config("deepseek-v2"), **change}), forward, None)


def test_transformers_defaults():
    """DeepseekV2Config's defaults: every layer sparse and no k (null): transformers builds it, cannot run it; count
    answers (k read as E: every expert active), flops refuse naming num_experts_per_tok."""
    c = parse_config({"model_type": "deepseek_v2"})
    theirs = transformers.DeepseekV2Config()
    assert theirs.num_experts_per_tok is None and theirs.first_k_dense_replace == 0
    assert (c["E"], c["I_e"], c["n_s"], c["d_k"]) == (theirs.n_routed_experts, theirs.moe_intermediate_size,
                                                      theirs.n_shared_experts, theirs.qk_head_dim)
    result = count_model(c)
    assert result.active == result.total
    with pytest.raises(ConfigError) as info:
        forward_flops(c, 1, 4)
    assert info.value.field == "num_experts_per_tok"
