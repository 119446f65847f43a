"""Vision-language models: Gemma 3 with its SigLIP tower, Qwen2.5-VL with its vision encoder.

A composite config (``text_config`` / ``vision_config``) read through the text family of its language model
(:class:`helpers.families.base.TextConfig`): the shipped configs (gemma-3-27b-it as published, 27,432,406,640;
Qwen2.5-VL-7B-Instruct, 8,292,166,656: ../shared/REFERENCE.md) and random small ones equal transformers on the meta
device name by name; the defaults a composite config fills where a sub-config is missing or null; which
``tie_word_embeddings`` ties the head; refusals naming ``text_config.KEY``; FLOPs of text tokens equal to
FlopCounterMode, Gemma 3's image through its tower as :func:`helpers.families.gemma3.vision_flops` says; the KV cache is
the language model's (``tests/test_families.py`` compares it with transformers' cache for every decoder).
"""

from __future__ import annotations

import copy

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers import ConfigError, count_model, load_config, param_table, parse_config, torch_ref
from helpers.config import raw_config
from helpers.families import gemma3, qwen2_5_vl
from helpers.flops import forward_flops, six_n_d_gap
from helpers.memory import kv_cache_bytes
from helpers.params import VISION, evaluate

from .conftest import assert_refused, hf_model, run_cli
from .strategies import STRATEGIES, TINY
from .test_family_gpt_oss import measured_flops, table

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
transformers.logging.set_verbosity_error()
from torch.utils.flop_counter import FlopCounterMode  # noqa: E402

SHIPPED = {"gemma-3-27b-it": 27_432_406_640, "qwen2.5-vl-7b-instruct": 8_292_166_656}  # ../shared/REFERENCE.md
RANDOM = settings(max_examples=12, deadline=None, derandomize=True, database=None,
                  suppress_health_check=[HealthCheck.too_slow])
TOWER = ("model.vision_tower.", "model.multi_modal_projector.", "model.visual.")


def built_as_counted(raw: dict):
    """The engine's config, after checking its table and total against transformers' meta build."""
    c = parse_config(copy.deepcopy(raw))
    model = hf_model(copy.deepcopy(raw))  # transformers writes into the rope dicts it is given
    assert [(p.name, p.shape) for p in param_table(c)] == table(model)
    assert count_model(c).total == sum(p.numel() for p in model.parameters())
    return c, model


@pytest.mark.parametrize(("name", "total"), SHIPPED.items())
def test_published_config_is_what_transformers_builds(name, total):
    c, model = built_as_counted(raw_config(name))
    counted = count_model(c)
    assert counted.total == counted.active == total  # dense: every parameter is active
    tower = sum(p.numel() for n, p in model.named_parameters() if n.startswith(TOWER))
    assert counted.components[VISION] == tower
    assert counted.total - tower == sum(p.numel() for n, p in model.named_parameters() if not n.startswith(TOWER))


def test_gemma3_27b_reads_its_text_model_and_tower():
    c = load_config("gemma-3-27b-it")
    assert (c["H"], c["L"], c["A"], c["A_kv"], c["d_k"], c["W"], c["L_w"], c["L_g"]) == (5376, 62, 32, 16, 128, 1024, 52, 10)
    assert (c["H_v"], c["L_v"], c["A_v"], c["R_v"], c["p_v"], c["P_v"], c["T_i"]) == (1152, 27, 16, 896, 14, 4096, 256)
    assert c.flags["tie_word_embeddings"] and not c.flags["vision_config.vision_use_head"]


def test_qwen2_5_vl_reads_its_flat_text_model():
    c = load_config("qwen2.5-vl-7b-instruct")
    assert (c["H"], c["L"], c["A"], c["A_kv"], c["d_k"], c["I"], c["V"]) == (3584, 28, 28, 4, 128, 18944, 152064)
    assert (c["H_v"], c["L_v"], c["I_v"], c["m_v"], c["O_v"]) == (1280, 32, 3420, 2, 3584)
    assert not c.flags["tie_word_embeddings"] and "lm_head.weight" in [p.name for p in param_table(c)]


@pytest.mark.parametrize("model_type", ["gemma3", "qwen2_5_vl"])
@pytest.mark.parametrize("missing", [{}, {"text_config": None, "vision_config": None}])
def test_missing_sub_configs_take_the_composite_defaults(model_type, missing):
    """No sub-config, or null ones: every default, as the composite config class fills them (Qwen2.5-VL's text
    model is 80 layers of 8192, not Qwen2's defaults)."""
    c, model = built_as_counted({"model_type": model_type, **missing})
    theirs = model.config
    text, vision = theirs.text_config, theirs.vision_config
    assert (c["V"], c["H"], c["L"], c["A"], c["A_kv"], c["I"]) == (
        text.vocab_size, text.hidden_size, text.num_hidden_layers, text.num_attention_heads, text.num_key_value_heads,
        text.intermediate_size)
    assert (c["H_v"], c["I_v"], c["L_v"]) == (vision.hidden_size, vision.intermediate_size, vision.num_hidden_layers)


def test_qwen2_5_vl_flat_and_nested_are_the_same_model():
    flat = copy.deepcopy(TINY["qwen2_5_vl"])
    vision = flat.pop("vision_config")
    del flat["model_type"]
    nested = {"model_type": "qwen2_5_vl", "text_config": flat, "vision_config": vision}
    assert param_table(built_as_counted(nested)[0]) == param_table(parse_config(TINY["qwen2_5_vl"]))


@pytest.mark.parametrize(("raw", "tied"), [
    ({"model_type": "gemma3"}, True),
    ({"model_type": "gemma3", "tie_word_embeddings": False}, False),
    ({"model_type": "gemma3", "tie_word_embeddings": None}, False),  # bool | None: null ties nothing
    ({"model_type": "gemma3", "text_config": {"tie_word_embeddings": False}}, True),  # the composite's decides
    ({"model_type": "qwen2_5_vl"}, False),
    ({"model_type": "qwen2_5_vl", "tie_word_embeddings": True}, True),
    ({"model_type": "qwen2_5_vl", "text_config": {"tie_word_embeddings": True}}, True),  # the text config can tie it
])
def test_which_tie_word_embeddings_ties_the_head(raw, tied):
    small = {"gemma3": {"num_hidden_layers": 1, "vocab_size": 8, "hidden_size": 8, "num_attention_heads": 2,
                        "num_key_value_heads": 1, "head_dim": 4},
             "qwen2_5_vl": {"num_hidden_layers": 1, "vocab_size": 8, "hidden_size": 8, "num_attention_heads": 2}}
    raw = {**raw, "vision_config": {"num_hidden_layers": 0, "depth": 0},
           "text_config": {**small[raw["model_type"]], **raw.get("text_config", {})}}
    c, model = built_as_counted(raw)
    assert c.flags["tie_word_embeddings"] == tied == ("lm_head.weight" not in dict(model.named_parameters()))


@pytest.mark.parametrize(("raw", "field"), [
    ({"model_type": "gemma3", "text_config": {"hidden_size": 10, "num_attention_heads": 3}}, "text_config.num_attention_heads"),
    ({"model_type": "gemma3", "text_config": {"vocab_size": 1.5}}, "text_config.vocab_size"),
    ({"model_type": "gemma3", "text_config": [1]}, "text_config"),
    ({"model_type": "gemma3", "vision_config": "siglip"}, "vision_config"),
    ({"model_type": "gemma3", "vision_config": {"hidden_size": 10, "num_attention_heads": 3}},
     "vision_config.num_attention_heads"),
    ({"model_type": "gemma3", "mm_tokens_per_image": 0}, "mm_tokens_per_image"),
    ({"model_type": "qwen2_5_vl", "hidden_size": 10, "num_attention_heads": 3}, "num_attention_heads"),
    ({"model_type": "qwen2_5_vl", "text_config": {"hidden_size": 10, "num_attention_heads": 3}},
     "text_config.num_attention_heads"),
    ({"model_type": "qwen2_5_vl", "vision_config": {"hidden_size": 2, "num_heads": 3}}, "vision_config.num_heads"),
    ({"model_type": "qwen2_5_vl", "vision_config": {"fullatt_block_indexes": 3}}, "vision_config.fullatt_block_indexes"),
])
def test_refused_where_transformers_refuses_naming_the_key(raw, field, write_config):
    with pytest.raises(Exception):  # noqa: B017 - whatever transformers raises
        hf_model(copy.deepcopy(raw))
    with pytest.raises(ConfigError) as refused:
        parse_config(raw)
    assert refused.value.field == field
    assert_refused(run_cli("count", str(write_config(raw))), field)


def test_another_vision_tower_is_counted_by_transformers(write_config):
    """transformers builds Gemma 3 around any vision model (AutoModel); the formulas model SigLIP's: ``count`` answers
    another tower as it answers an untaught type (transformers' class on meta, the key named), ``flops`` refuses it
    in one line naming the key."""
    raw = {"model_type": "gemma3", "vision_config": {"model_type": "clip_vision_model", "num_hidden_layers": 0}}
    total = sum(p.numel() for p in hf_model(raw).parameters())
    path = str(write_config(raw))
    count = run_cli("count", path)
    assert count.returncode == 0 and 'no formula is taught for vision_config.model_type = "clip_vision_model"' in count.stdout
    assert any(line.startswith("total") and f"{total:,}" in line for line in count.stdout.splitlines())
    assert_refused(run_cli("flops", path), "vision_config.model_type")


@pytest.mark.parametrize(("text", "key"), [
    ({"rope_scaling": {"type": "mrope", "mrope_section": [1, 1, 1]}}, "rope_scaling"),  # 3 of d_k/2 = 4
    ({"rope_scaling": None}, "rope_parameters"),  # the default [16, 24, 24]: 64 of 4
    ({"head_dim": 6}, "text_config.head_dim"),  # the rotary table 6 wide, the heads 8
])
def test_qwen2_5_vl_forward_refused_where_transformers_cannot_run(text, key, write_config):
    base = copy.deepcopy(TINY["qwen2_5_vl"])
    vision = base.pop("vision_config")
    if key.startswith("text_config."):
        raw = {"model_type": "qwen2_5_vl", "text_config": {**base, **text}, "vision_config": vision}
        del raw["text_config"]["model_type"]
    else:
        raw = {**base, **text, "vision_config": vision}
    c, _ = built_as_counted(raw)
    with pytest.raises(RuntimeError):
        measured_flops(hf_model(copy.deepcopy(raw), "cpu").eval(), 1, 3)
    assert c.cannot_run["forward"][0] == key
    assert_refused(run_cli("flops", "--batch", "1", "--seq-len", "4", str(write_config(raw))), key)


@pytest.mark.parametrize("model_type", ["gemma3", "qwen2_5_vl"])
def test_tiny_text_flops_equal_flop_counter(model_type):
    raw = TINY[model_type]
    c = parse_config(copy.deepcopy(raw))
    torch.manual_seed(0)
    model = hf_model(copy.deepcopy(raw), "cpu").eval()
    for B, S in ((1, 1), (2, 5)):
        flops = forward_flops(c, B, S)
        assert measured_flops(model, B, S) == flops.forward
        assert six_n_d_gap(flops)["vision tower and projector (no text token runs through them)"] == (
            6 * B * S * count_model(c).components[VISION])


@pytest.mark.parametrize("source", ["transformers", "torch_ref"])
@pytest.mark.parametrize("head", [False, True])
def test_gemma3_image_flops_equal_flop_counter(head, source):
    """Gemma 3's images: the tower, its pooling head where built, and the projector, per image, as stated; the same
    in transformers and in the plain-torch reference."""
    raw = copy.deepcopy(TINY["gemma3"])
    raw["vision_config"]["vision_use_head"] = head
    c = parse_config(copy.deepcopy(raw))
    torch.manual_seed(0)
    if source == "transformers":
        model = hf_model(raw, "cpu").eval()
        features = model.model.get_image_features
    else:
        model = torch_ref.build(c, "cpu").eval()
        features = model.image_features
    images = 3
    pixels = torch.randn(images, 3, c["R_v"], c["R_v"])
    with torch.no_grad(), FlopCounterMode(display=False) as counter:
        features(pixels)
    assert counter.get_total_flops() == images * evaluate(gemma3.vision_flops(c), c)


@pytest.mark.parametrize(("vision", "grids"), [
    ({}, [(1, 8, 8), (2, 8, 12), (1, 4, 4), (1, 6, 10), (1, 2, 14)]),  # windows of 2 × 2 merged patches, some cut short
    ({"window_size": 24, "fullatt_block_indexes": [0, 5]}, [(1, 6, 6), (1, 10, 4)]),  # 3 × 3 windows; block 5: none
])
def test_qwen2_5_vl_image_flops_equal_flop_counter(vision, grids):
    """Qwen2.5-VL's images and videos through the vision encoder: full attention per frame in the
    fullatt_block_indexes blocks, windows in the others (the last window of a side shorter), as image_flops says."""
    raw = copy.deepcopy(TINY["qwen2_5_vl"])
    raw["vision_config"].update(vision)
    c = parse_config(copy.deepcopy(raw))
    torch.manual_seed(0)
    model = hf_model(raw, "cpu").eval()
    for t, h, w in grids:
        pixels = torch.randn(t * h * w, c["C_v"] * c["t_v"] * c["p_v"] ** 2)
        with torch.no_grad(), FlopCounterMode(display=False) as counter:
            model.model.get_image_features(pixels, torch.tensor([[t, h, w]]))
        assert counter.get_total_flops() == qwen2_5_vl.image_flops(c, h, w, t), (t, h, w)


def test_flops_says_what_it_counts(write_config):
    gemma = run_cli("flops", "gemma-3-27b-it", "--batch", "1", "--seq-len", "8")
    c = load_config("gemma-3-27b-it")
    assert gemma.returncode == 0, gemma.stderr
    assert gemma.stdout.splitlines()[1] == gemma3.GEMMA3.notes(c)[0]
    assert f"= {evaluate(gemma3.vision_flops(c), c):,} FLOPs" in gemma3.GEMMA3.notes(c)[0]
    qwen = run_cli("flops", "qwen2.5-vl-7b-instruct", "--batch", "1", "--seq-len", "8")
    assert qwen.stdout.splitlines()[1] == qwen2_5_vl.QWEN2_5_VL.notes(load_config("qwen2.5-vl-7b-instruct"))[0]


@pytest.mark.parametrize("model_type", ["gemma3", "qwen2_5_vl"])
@pytest.mark.parametrize("S", [3, 9])
def test_tiny_cache_is_the_language_models(model_type, S):
    """Windowed layers keep W − 1 tokens once S passes the window (Gemma 3: layers 0 and 1; Qwen2.5-VL: layer 1)."""
    raw, B = TINY[model_type], 2
    c = parse_config(copy.deepcopy(raw))
    torch.manual_seed(0)
    model = hf_model(copy.deepcopy(raw), "cpu").eval()
    with torch.no_grad():
        cache = model(input_ids=torch.randint(0, c["V"], (B, S)), use_cache=True).past_key_values
    kept = [layer.keys.shape[-2] for layer in cache.layers]
    assert kept == {"gemma3": [min(S, 3), min(S, 3), S], "qwen2_5_vl": [S, min(S, 3)]}[model_type]
    held = sum(t.numel() * t.element_size() for layer in cache.layers for t in (layer.keys, layer.values))
    assert held == kv_cache_bytes(c, B, S, "fp32")


@pytest.mark.parametrize("model_type", ["gemma3", "qwen2_5_vl"])
@given(data=st.data())
@RANDOM
def test_random_configs(model_type, data):
    raw = data.draw(STRATEGIES[model_type], label="config")
    c, _ = built_as_counted(raw)
    torch.manual_seed(0)
    model = hf_model(copy.deepcopy(raw), "cpu").eval()
    B, S = data.draw(st.integers(1, 2)), data.draw(st.integers(1, 5))
    assert measured_flops(model, B, S) == forward_flops(c, B, S).forward
