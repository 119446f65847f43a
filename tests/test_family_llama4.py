"""Llama 4 with its vision encoder: exact against transformers' ``Llama4ForConditionalGeneration``.

The published Scout (``data/models/llama-4-scout-17b-16e.json``: text_config, vision_config) and random small ones:
names, shapes and total equal to transformers' class on the meta device (108,641,793,536: the language model
107,769,861,120, the encoder, adapter and projector 871,932,416); the active count (the card's 17B is the language
model's; the whole model's includes the encoder); the defaults Llama4Config fills where a sub-config is missing;
which ``tie_word_embeddings`` ties the head (the text config's); the text tokens' FLOPs equal to FlopCounterMode with
transformers' every-expert surplus; an image's FLOPs as :func:`helpers.families.llama4.vision_flops` says, and where
an image cannot run; the KV cache is the language model's.
"""

from __future__ import annotations

import copy

import pytest
from hypothesis import given
from hypothesis import strategies as st

from helpers import count_model, load_config, param_table, parse_config
from helpers.config import raw_config
from helpers.families import llama4
from helpers.flops import forward_flops, six_n_d_gap
from helpers.memory import kv_cache_bytes
from helpers.params import VISION, evaluate

from .conftest import hf_model, run_cli, surplus_flops
from .strategies import STRATEGIES, TINY
from .test_family_multimodal import RANDOM, built_as_counted, measured_flops

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
transformers.logging.set_verbosity_error()
from torch.utils.flop_counter import FlopCounterMode  # noqa: E402

from helpers import torch_ref  # noqa: E402

SCOUT = "llama-4-scout-17b-16e"


def test_scout_as_published_is_what_transformers_builds():
    c, model = built_as_counted(raw_config(SCOUT))
    counted = count_model(c)
    parts = {part: sum(p.numel() for n, p in model.named_parameters() if n.startswith(part))
             for part in ("vision_model.", "multi_modal_projector.", "language_model.")}
    assert counted.total == sum(parts.values()) == 108_641_793_536
    assert counted.components[VISION] == parts["vision_model."] + parts["multi_modal_projector."] == 871_932_416
    assert parts["language_model."] == count_model(load_config("llama-4-scout-17b-16e-text")).total == 107_769_861_120
    # active: the card's "17B" is the language model's (both tables); the whole model's adds the encoder
    text = count_model(load_config("llama-4-scout-17b-16e-text"))
    assert counted.active == text.active + counted.components[VISION] == 18_044_827_136
    assert round(text.active / 1e9) == 17
    assert (c["H_v"], c["L_v"], c["A_v"], c["I_v"], c["P_v"], c["T_v"]) == (1408, 34, 16, 5632, 576, 144)


@pytest.mark.parametrize("missing", [{}, {"text_config": None, "vision_config": None}])
def test_missing_sub_configs_take_llama4_config_defaults(missing):
    c, model = built_as_counted({"model_type": "llama4", **missing})
    text, vision = model.config.text_config, model.config.vision_config
    assert (c["V"], c["H"], c["L"], c["E"], c["L_e"]) == (text.vocab_size, text.hidden_size, text.num_hidden_layers,
                                                          text.num_local_experts, len(text.moe_layers))
    assert (c["H_v"], c["I_v"], c["L_v"], c["O_v"]) == (vision.hidden_size, vision.intermediate_size,
                                                        vision.num_hidden_layers, vision.vision_output_dim)


@pytest.mark.parametrize(("text", "top", "tied"), [
    (None, True, False), (True, False, True), (True, None, True), (False, True, False),
])
def test_the_text_config_ties_the_head(text, top, tied):
    """``language_model`` is a whole Llama4ForCausalLM: its own config's ``tie_word_embeddings`` decides."""
    raw = copy.deepcopy(TINY["llama4"])
    if text is not None:
        raw["text_config"]["tie_word_embeddings"] = text
    if top is not None:
        raw["tie_word_embeddings"] = top
    c, model = built_as_counted(raw)
    assert c.flags["tie_word_embeddings"] == tied == ("language_model.lm_head.weight" not in dict(model.named_parameters()))


@pytest.mark.parametrize(("vision", "field"), [
    ({"hidden_size": 4, "num_attention_heads": 5}, "vision_config.num_attention_heads"),  # 0-wide heads
    ({"pixel_shuffle_ratio": 0.0}, "vision_config.pixel_shuffle_ratio"),
    ({"patch_size": 0}, "vision_config.patch_size"),
])
def test_refused_where_transformers_refuses(vision, field, write_config):
    raw = copy.deepcopy(TINY["llama4"])
    raw["vision_config"].update(vision)
    with pytest.raises(Exception):  # noqa: B017 - whatever transformers raises
        hf_model(copy.deepcopy(raw))
    with pytest.raises(Exception) as refused:  # noqa: B017 - the engine's ConfigError, checked by its field
        parse_config(raw)
    assert refused.value.field == field
    result = run_cli("count", str(write_config(raw)))
    assert result.returncode == 2 and result.stderr.startswith(f"error: {field}: ")


def test_text_flops_and_cache_are_the_language_models():
    raw, B = TINY["llama4"], 2
    c = parse_config(copy.deepcopy(raw))
    torch.manual_seed(0)
    model = hf_model(copy.deepcopy(raw), "cpu").eval()
    for S in (1, 5):
        flops = forward_flops(c, B, S)
        assert measured_flops(model, B, S) == flops.forward + surplus_flops(c, B, S)
        assert six_n_d_gap(flops)["vision tower and projector (no text token runs through them)"] == (
            6 * B * S * count_model(c).components[VISION])
        with torch.no_grad():
            cache = model(input_ids=torch.randint(0, c["V"], (B, S)), use_cache=True).past_key_values
        assert [layer.keys.shape[-2] for layer in cache.layers] == [min(S, 3)] * 3 + [S]  # chunk 4, layer 3 NoPE
        held = sum(t.numel() * t.element_size() for layer in cache.layers for t in (layer.keys, layer.values))
        assert held == kv_cache_bytes(c, B, S, "fp32")


def image_flops(raw: dict, images: int = 2) -> int | Exception:
    """FlopCounterMode per image through the encoder, adapter and projector (as the model's forward runs them), or
    what transformers raises."""
    torch.manual_seed(0)
    model = hf_model(copy.deepcopy(raw), "cpu").eval()
    vision = model.config.vision_config
    pixels = torch.randn(images, vision.num_channels, vision.image_size, vision.image_size)
    try:
        with torch.no_grad(), FlopCounterMode(display=False) as counter:
            features = model.get_image_features(pixels).last_hidden_state
            model.multi_modal_projector(features.view(-1, features.size(-1)))
    except Exception as error:  # noqa: BLE001 - whatever transformers raises is the answer
        return error
    return counter.get_total_flops() // images


@st.composite
def vision_twists(draw) -> dict:
    """Tiny Llama 4 with a vision encoder whose shapes may or may not chain: heads 2 to 8 wide, ratios, widths."""
    raw = copy.deepcopy(TINY["llama4"])
    A_v = draw(st.integers(1, 3))
    head = draw(st.sampled_from([2, 4, 6, 8]))
    ratio = draw(st.sampled_from([0.5, 0.5, 0.5, 0.25, 1.0]))
    H_v = A_v * head + draw(st.sampled_from([0, 0, 0, 1]))
    p_v = draw(st.integers(1, 4))
    width = draw(st.sampled_from([8, 8, 6]))
    raw["vision_config"] = {"hidden_size": H_v, "num_attention_heads": A_v, "num_hidden_layers": draw(st.integers(0, 2)),
                            "intermediate_size": draw(st.sampled_from([int(H_v / ratio ** 2)] * 3 + [H_v])),
                            "pixel_shuffle_ratio": ratio, "patch_size": p_v,
                            "image_size": p_v * draw(st.sampled_from([2, 4, 4, 3])), "num_channels": draw(st.integers(1, 3)),
                            "vision_output_dim": width, "projector_input_dim": 8, "projector_output_dim": 8}
    return raw


@given(raw=vision_twists())
@RANDOM
def test_an_image_costs_what_vision_flops_says_and_runs_where_the_engine_says(raw):
    c, _ = built_as_counted(copy.deepcopy(raw))
    measured = image_flops(raw)
    if "T_v" not in c.sizes:
        assert isinstance(measured, Exception)
        assert "no image runs" in llama4.notes(c)[-1]
        return
    assert measured == evaluate(llama4.vision_flops(c), c)
    assert f"= {measured:,} FLOPs" in llama4.notes(c)[-1]
    reference = torch_ref.build(c)  # the plain-torch encoder, adapter and projector count the same, image by image
    assert torch_ref.matches(param_table(c), reference)
    with torch.no_grad(), FlopCounterMode(display=False) as counter:
        reference.image_features(torch.zeros(2, c["C_v"], c["R_v"], c["R_v"], device="meta"))
    assert counter.get_total_flops() == 2 * measured


def test_flops_says_what_it_counts():
    result = run_cli("flops", SCOUT, "--batch", "1", "--seq-len", "8")
    c = load_config(SCOUT)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[1:3] == llama4.notes(c)
    assert f"= {evaluate(llama4.vision_flops(c), c):,} FLOPs" in llama4.notes(c)[1]


@given(data=st.data())
@RANDOM
def test_random_configs(data):
    raw = data.draw(STRATEGIES["llama4"], label="config")
    c, _ = built_as_counted(raw)
    torch.manual_seed(0)
    model = hf_model(copy.deepcopy(raw), "cpu").eval()
    B, S = data.draw(st.integers(1, 2)), data.draw(st.integers(1, 5))
    assert measured_flops(model, B, S) == forward_flops(c, B, S).forward + surplus_flops(c, B, S)
    assert count_model(c).active == count_model(c).total - c["L_e"] * max(c["E"] - c["k"], 0) * 3 * c["H"] * c["I"]
    assert [p.name for p in param_table(c)][-1] == ("language_model.model.norm.weight"
                                                    if c.flags["tie_word_embeddings"] else "language_model.lm_head.weight")
