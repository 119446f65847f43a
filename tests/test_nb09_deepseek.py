"""Notebook 09's DeepSeek-V3 and latent-attention parts: the published figures and the convention behind each, the
multi-token-prediction module against transformers' ``MtpModel``, what the checkpoint files hold, the attention MLA
replaces (against LLaMA's engine where LLaMA can say it) and its cache, and the two pictures drawn from the table."""

from __future__ import annotations

import json

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from helpers import ATTENTION, load_config, param_table, parse_config, select, total  # noqa: E402
from helpers.budget import kv_values_per_token  # noqa: E402
from helpers.config import MODELS_DIR, published, raw_config  # noqa: E402
from helpers.lessons.conventions import (ACTIVE, ACTIVE_NO_INPUT, TOTAL, active_conventions,  # noqa: E402
                                 matching_conventions, round_as)
from helpers.memory import Memory  # noqa: E402
from helpers.lessons.moe import (checkpoint_parts, fp8_scales, moe_layer, mtp_module, plain_attention,  # noqa: E402
                         plain_cache_per_token)
from helpers.params import EXPERT, Param  # noqa: E402
from helpers.plots import cache_per_token_bars, mla_flow  # noqa: E402

RAW = json.loads((MODELS_DIR / "deepseek-v3.json").read_text())
FIGURES = [f for f in published()["figures"] if f["config"] == "deepseek-v3"]


def test_published_figures_and_their_conventions():
    """671B is the total; 37B the active count without the input table, rounded (or with it, cut off). The weight
    documentation exists in two versions: 36.6B "including 0.9B for the output Head" is the active count without the
    input table, to its decimal; 36.7B "including 0.9B for Embedding and 0.9B for the output Head" matches no
    convention (with both tables the count is 37.55B)."""
    c = load_config("deepseek-v3")
    assert [(f["stated"], f["part"]) for f in FIGURES] == [
        ("671B", "model"), ("37B", "model"), ("36.7B", "model"), ("36.6B", "model"), ("685B", "checkpoint"),
        ("14B", "MTP module"), ("11.5B", "MTP module"), ("2.4B", "MTP module"), ("1.5B", "MTP module")]
    assert all(f["value"] == round(float(f["stated"][:-1]) * 10**9) for f in FIGURES)
    expected = {"671B": ([TOTAL], [TOTAL]), "37B": ([ACTIVE_NO_INPUT], [ACTIVE]),
                "36.6B": ([ACTIVE_NO_INPUT], [ACTIVE_NO_INPUT]), "36.7B": ([], [])}
    for stated, (rounded, cut) in expected.items():
        assert (matching_conventions(c, stated), matching_conventions(c, stated, cut=True)) == (rounded, cut), stated
    assert round_as(active_conventions(c)[ACTIVE], "36.7B") == "37.6B"  # what the 36.7B text describes


def test_documentation_quotes_have_their_revision():
    """Each quoted sentence of the weight documentation is stored with where it was read, and says the figure."""
    for f in FIGURES:
        if "weight file documentation" in f["source"]:
            assert f["revision"] and f"**{f['stated']}" in f["quote"], f["stated"]
    versions = {f["stated"]: f["revision"] for f in FIGURES if "quote" in f}
    assert versions["36.7B"].startswith("github.com/deepseek-ai/DeepSeek-V3") and versions["2.4B"] == versions["36.7B"]
    assert versions["36.6B"] == versions["1.5B"] != versions["36.7B"]


def test_module_figures_leave_eh_proj_out():
    """11.5B, 1.5B (head) and 2.4B (head and table) come out of the module's exact count only without eh_proj (2H²)."""
    c = load_config("deepseek-v3")
    mtp = mtp_module(c)
    eh_proj, VH = 2 * c["H"] ** 2, c["V"] * c["H"]
    mixture = moe_layer(mtp)
    active = total(mtp) - (mixture.total - mixture.active(c["k"])) + VH  # k routed experts and the head
    exact = {"11.5B": total(mtp), "1.5B": active, "2.4B": active + VH}
    assert {s: round_as(n, s) for s, n in exact.items()} == {"11.5B": "11.6B", "1.5B": "1.6B", "2.4B": "2.5B"}
    assert {s: round_as(n - eh_proj, s) for s, n in exact.items()} == {"11.5B": "11.5B", "1.5B": "1.5B", "2.4B": "2.4B"}


transformers = pytest.importorskip("transformers")
torch = pytest.importorskip("torch")


def _mtp_model(raw: dict):
    """transformers' multi-token-prediction module (``MtpModel``) of a DeepSeek-V3 built on the meta device."""
    from transformers.modeling_layers import MtpModel

    config = transformers.AutoConfig.for_model(**raw)
    with torch.device("meta"):
        main = transformers.DeepseekV3ForCausalLM(config)
        return main, MtpModel(main, 1)


_NAMES = {"layers.0.mtp_block.": "", "layers.0.post_norm.": "shared_head.norm.", "layers.0.": ""}


def _as_on_disk(name: str, L: int) -> str:
    for theirs, ours in _NAMES.items():
        if name.startswith(theirs):
            return f"model.layers.{L}." + ours + name[len(theirs):]
    raise AssertionError(name)


@pytest.mark.parametrize("change", [{}, {"first_k_dense_replace": 0, "q_lora_rank": None}, {"n_shared_experts": 2}])
def test_mtp_module_is_transformers_mtp_model(change):
    """Name by name (transformers' ``layers.0.mtp_block.*`` is the files' ``model.layers.61.*``), shape by shape; the
    module's own count is 11,610,067,968, and with the table and the head it shares, 13,463,426,048."""
    raw = {**RAW, **change}
    c = parse_config(raw)
    main, mtp = _mtp_model(raw)
    shared = {id(p) for p in main.parameters()}
    theirs = [(_as_on_disk(n, c["L"]), tuple(p.shape)) for n, p in mtp.named_parameters() if id(p) not in shared]
    ours = [(p.name, p.shape) for p in mtp_module(c)]
    assert sorted(ours) == sorted(theirs)
    assert total(mtp_module(c)) == sum(p.numel() for p in mtp.parameters() if id(p) not in shared)
    if not change:
        assert total(mtp_module(c)) == 11_610_067_968
        assert sum(p.numel() for p in mtp.parameters()) == 11_610_067_968 + 2 * c["V"] * c["H"] == 13_463_426_048


def test_mtp_module_refuses_other_families():
    with pytest.raises(ValueError, match="latent attention"):
        mtp_module(load_config("llama-7b"))


def test_checkpoint_parts():
    """The files: the model, the module with its copies, the fp8 scales and the buffers; 685B only with the scales."""
    c = load_config("deepseek-v3")
    parts = checkpoint_parts(c)
    assert parts["the model transformers builds"] == 671_026_404_352
    assert parts["routers' score-correction biases (buffers)"] == 59 * 256
    files = sum(parts.values())
    scales = parts["fp8 block scales (weight_scale_inv), model and module"]
    assert round_as(files, "685B") == "685B" and round_as(files - scales, "685B") == "684B"
    assert scales == fp8_scales(c) + fp8_scales(c, mtp_module(c))


def test_fp8_scales_tile_each_matrix():
    """One scale per 128 × 128 tile, a partial tile counting whole; each routed expert on its own; no scale for the
    router, a norm, the tables."""
    c = load_config("deepseek-v3")
    H, I_e, E = c["H"], c["I_e"], c["E"]
    assert fp8_scales(c, [Param.matrix("self_attn.q_a_proj.weight", (128, 128), ATTENTION, "")]) == 1
    assert fp8_scales(c, [Param.matrix("self_attn.kv_a_proj_with_mqa.weight", (576, H), ATTENTION, "")]) == 5 * 56
    sparse = select(param_table(c), layer=3)
    experts = [p for p in sparse if p.kind == EXPERT]
    assert fp8_scales(c, experts) == E * 3 * (I_e // 128) * (H // 128)
    assert fp8_scales(c, [p for p in sparse if p.name.endswith(("mlp.gate.weight", "layernorm.weight"))]) == 0
    assert fp8_scales(c, [p for p in param_table(c) if p.layer is None]) == 0  # the table, the final norm, the head
    dense, sparse_layer = (fp8_scales(c, select(param_table(c), layer=i)) for i in (0, 3))
    assert fp8_scales(c) == 3 * dense + 58 * sparse_layer  # the whole model, from its layout


@pytest.mark.parametrize(("d_v", "kv_heads"), [(192, 8), (192, None), (192, 1), (192, 32)])
def test_plain_attention_is_llamas_where_llama_can_say_it(d_v, kv_heads):
    """With values as wide as keys, the attention MLA replaces is LLaMA's (names, shapes) and so is its cache."""
    c = parse_config({**RAW, "v_head_dim": d_v})
    llama = parse_config({"model_type": "llama", "hidden_size": c["H"], "num_hidden_layers": c["L"],
                          "num_attention_heads": c["A"], "num_key_value_heads": kv_heads or c["A"],
                          "head_dim": c["d_k"]})
    rows = select(param_table(llama), component=ATTENTION, layer=0)
    assert [(p.name, p.shape) for p in plain_attention(c, kv_heads)] == [
        (p.name.removeprefix("model.layers.0."), p.shape) for p in rows]
    assert plain_cache_per_token(c, kv_heads) == kv_values_per_token(llama)


@pytest.mark.parametrize("change", [{}, {"v_head_dim": 64}, {"num_hidden_layers": 5, "qk_rope_head_dim": 32}])
def test_plain_cache_is_the_engines_full_cache(change):
    """Every head's keys and values: the engine's ``kv_cache_full``, for DeepSeek-V3 and variants."""
    c = parse_config({**RAW, **change})
    for S in (1, 7):
        assert 2 * S * plain_cache_per_token(c) == Memory(c, 1, S, "bf16").kv_cache_full()
    assert kv_values_per_token(c) == c["L"] * (c["r_kv"] + c["d_rope"])


def test_deepseek_v3_cache_and_weights_beside_mha_and_gqa():
    c = load_config("deepseek-v3")
    assert (plain_cache_per_token(c), plain_cache_per_token(c, 8), kv_values_per_token(c)) == (2_498_560, 156_160, 35_136)
    mla = total(p for p in select(param_table(c), layer=0) if ".self_attn." in p.name)
    assert (total(plain_attention(c)), total(plain_attention(c, 8)), mla) == (587_202_560, 311_951_360, 187_107_328)


@pytest.mark.parametrize("kv_heads", [0, 3, 256])
def test_plain_attention_refuses(kv_heads):
    with pytest.raises(ValueError, match="kv_heads"):
        plain_attention(load_config("deepseek-v3"), kv_heads)
    with pytest.raises(ValueError, match="latent attention"):
        plain_attention(load_config("mixtral-8x7b-v0.1"))


def test_mla_flow_reads_its_sizes_from_the_rows():
    c = parse_config({**RAW, "kv_lora_rank": 256, "qk_rope_head_dim": 32})
    rows = [p for p in select(param_table(c), layer=4) if ".self_attn." in p.name]
    ax = mla_flow(rows, c["A"])
    texts = [t.get_text() for t in ax.texts]
    assert "latent c_KV\nr_kv = 256" in texts and "rotary key k_R\nd_rope = 32" in texts
    assert any(t.endswith(f"= {total(rows):,}") for t in texts)
    assert any("kv_b_proj\n32,768×256\n8,388,608" == t for t in texts)
    plt.close("all")
    plain_query = parse_config({**RAW, "q_lora_rank": None})
    with pytest.raises(ValueError, match="q_a_proj"):
        mla_flow([p for p in select(param_table(plain_query), layer=4) if ".self_attn." in p.name], c["A"])


def test_cache_bars_and_moe_diagram_of_a_shared_expert():
    ax = cache_per_token_bars({"a": 90, "b": 9}, "t")
    assert [t.get_text() for t in ax.texts] == ["9", "90  (×10.00)"]
    c = load_config("deepseek-v3")
    layer = moe_layer(select(param_table(c), layer=3))
    assert total(layer.shared) == layer.per_expert
    plt.close("all")
    raw = {**raw_config("deepseek-v3"), "n_shared_experts": 2}
    from helpers.plots import moe_layer_diagram

    ax = moe_layer_diagram(select(param_table(parse_config(raw)), layer=3), 8, range(8), per_row=32)
    assert any(t.get_text().startswith("shared\n2 experts") for t in ax.texts)
    plt.close("all")
