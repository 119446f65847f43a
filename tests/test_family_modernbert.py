"""ModernBERT: exact against transformers, tensor by tensor.

The shipped configs (``data/models/modernbert-base.json``, ``modernbert-large.json``: answerdotai/ModernBERT-*'s
published ``config.json``) and random small ones: names, shapes and total equal to ``ModernBertModel`` on the meta
device (the other classes, the masked LM's tied decoder among them, in ``tests/test_classes.py``); the formula by
hand and against BERT-base; FLOPs equal to ``FlopCounterMode`` with eager attention, local layers counting the whole
S × S; the attention pattern read as ``ModernBertConfig`` reads it; and what transformers refuses, refused.
"""

from __future__ import annotations

import pytest
from hypothesis import given

from helpers import ConfigError, count_model, load_config, param_table, parse_config
from helpers.config import raw_config
from helpers.flops import forward_flops
from helpers.params import ATTENTION, EMBEDDINGS, FEED_FORWARD, LAYER_NORM, POOLER

from .conftest import hf_model
from .strategies import STRATEGIES, TINY

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
transformers.logging.set_verbosity_error()

from .test_family_todays_decoders import RANDOM, table  # noqa: E402
from .test_flops import counted  # noqa: E402 -- FlopCounterMode's total for B × S zeros

# ../shared/REFERENCE.md gives modernbert-large; modernbert-base measured here (ModernBertModel on the meta device)
SHIPPED = {"modernbert-base": 149_014_272, "modernbert-large": 394_781_696}


@pytest.mark.parametrize(("name", "expected"), SHIPPED.items())
def test_published_config_is_what_transformers_builds(name, expected):
    c = load_config(name)
    model = hf_model(raw_config(name))
    assert [(p.name, p.shape) for p in param_table(c)] == table(model)
    assert count_model(c).total == sum(p.numel() for p in model.parameters()) == expected
    assert count_model(c).active == expected  # an encoder: every weight reads every token
    # the pattern: every third layer global, from layer 0; the others within 128 tokens (|i − j| ≤ 64)
    types = model.config.layer_types
    assert types[:4] == ["full_attention", "sliding_attention", "sliding_attention", "full_attention"]
    assert (c["W"], c["L_w"]) == (model.config.local_attention, types.count("sliding_attention"))
    assert model.config.sliding_window == c["W"] // 2 == 64


def test_base_by_hand_and_against_bert_base():
    """V·H + L·(4H² + 3H·I) + (2L + 1)·H: no bias anywhere, no position table, no pooler; against BERT-base."""
    c = load_config("modernbert-base")
    V, H, L, I = c["V"], c["H"], c["L"], c["I"]
    assert (V, H, L, I) == (50368, 768, 22, 1152)
    assert V * H + L * (4 * H**2 + 3 * H * I) + (2 * L + 1) * H == SHIPPED["modernbert-base"]
    assert not [p for p in param_table(c) if p.name.endswith(".bias")]
    ours = count_model(c).components
    bert = count_model(load_config("bert-base-uncased")).components
    assert bert[EMBEDDINGS] == (30522 + 512 + 2) * 768 and ours[EMBEDDINGS] == V * H  # a bigger table, no positions
    assert bert[ATTENTION] == 12 * (4 * 768**2 + 4 * 768) and ours[ATTENTION] == 22 * 4 * H**2
    assert bert[FEED_FORWARD] == 12 * (2 * 768 * 3072 + 3072 + 768) and ours[FEED_FORWARD] == 22 * 3 * H * I
    assert bert[LAYER_NORM] == 2 * 768 + 4 * 12 * 768 and ours[LAYER_NORM] == (2 * L + 1) * H
    assert POOLER in bert and POOLER not in ours
    # per layer: 7,087,872 in BERT-base against 5,013,504 + 1,536 here, and 22 layers against 12
    assert (4 * 768**2 + 4 * 768 + 2 * 768 * 3072 + 3072 + 768 + 4 * 768, 4 * H**2 + 3 * H * I + 2 * H) == (
        7_087_872, 5_015_040)


def test_first_layer_has_no_attention_norm():
    names = [p.name for p in param_table(load_config("modernbert-base"))]
    assert "layers.0.attn_norm.weight" not in names and "layers.1.attn_norm.weight" in names
    assert names[:3] == ["embeddings.tok_embeddings.weight", "embeddings.norm.weight", "layers.0.attn.Wqkv.weight"]
    assert names[-1] == "final_norm.weight"


def test_masked_lm_adds_the_head_and_the_decoder_bias():
    """ModernBertForMaskedLM: head.dense (H²), head.norm (H), decoder tied to the token table, its bias (V)."""
    c = load_config("modernbert-base", model_class="ModernBertForMaskedLM")
    model = hf_model(raw_config("modernbert-base"))
    with torch.device("meta"):
        mlm = transformers.ModernBertForMaskedLM(model.config)
    figure = sum(p.numel() for p in mlm.parameters())
    assert count_model(c).total == figure == SHIPPED["modernbert-base"] + 768**2 + 768 + 50368
    assert [(p.name, p.shape) for p in param_table(c)] == table(mlm)


@given(raw=STRATEGIES["modernbert"])
@RANDOM
def test_random_configs(raw):
    c = parse_config(raw)
    model = hf_model(raw)
    assert [(p.name, p.shape) for p in param_table(c)] == table(model)
    assert count_model(c).total == sum(p.numel() for p in model.parameters())
    assert c["L_w"] == model.config.layer_types.count("sliding_attention") and c["W"] == model.config.local_attention
    for B, S in ((1, 1), (2, 5)):
        assert counted(model, B, S) == forward_flops(c, B, S).forward


@pytest.mark.parametrize("S", [3, 9, 17])
def test_local_layers_count_the_whole_square_with_eager_attention(S):
    """A window of 4 (|i − j| ≤ 2) on layers 1 and 2: S past it, FlopCounterMode still counts S² in every layer."""
    raw, B = TINY["modernbert"], 2
    c = parse_config(raw)
    H, I, L = c["H"], c["I"], c["L"]
    assert c.lists["local"] == (0, 1, 1) and c["W"] == 4
    expected = L * (8 * B * S * H**2 + 6 * B * S * H * I + 4 * B * S**2 * H)
    assert counted(hf_model(raw), B, S) == forward_flops(c, B, S).forward == expected


def test_sliding_window_sets_twice_the_window():
    raw = {**TINY["modernbert"], "sliding_window": 3, "local_attention": 100}
    assert parse_config(raw)["W"] == hf_model(raw).config.local_attention == 6


@pytest.mark.parametrize(("change", "field"), [
    ({"num_hidden_layers": 0}, "num_hidden_layers"),  # ModernBertConfig's rope_parameters fail their validation
    ({"global_attn_every_n_layers": 0}, "global_attn_every_n_layers"),  # i % 0
    ({"layer_types": ["full_attention", "chunked_attention", "sliding_attention"]}, "layer_types"),
    ({"head_dim": 5}, "head_dim"),  # validate_rope: an odd head wider than 4
    ({"classifier_pooling": "max"}, "classifier_pooling"),
    ({"local_attention": None}, "local_attention"),
    ({"sliding_window": None}, "sliding_window"),
    ({"hidden_size": 18}, "num_attention_heads"),  # 4 heads do not divide 18
    ({"pad_token_id": 40}, "pad_token_id"),
])
def test_refused_where_transformers_refuses(change, field):
    raw = {**TINY["modernbert"], **change}
    with pytest.raises(Exception):  # noqa: B017 -- whatever transformers raises
        hf_model(raw)
    with pytest.raises(ConfigError) as refused:
        parse_config(raw)
    assert refused.value.field == field


@pytest.mark.parametrize(("change", "field"), [
    ({"hidden_size": 20}, "num_attention_heads"),  # heads of 5: rotary angles 6 wide
    ({"head_dim": 2}, "head_dim"),  # angles 2 wide against heads of 4
])
def test_built_but_not_run(change, field):
    raw = {**TINY["modernbert"], **change}
    c = parse_config(raw)
    assert count_model(c).total == sum(p.numel() for p in hf_model(raw).parameters())
    assert c.cannot_run["forward"][0] == field
    with pytest.raises(ConfigError):
        forward_flops(c, 1, 4)


@pytest.mark.parametrize("change", [{}, {"norm_bias": True, "attention_bias": True, "mlp_bias": True},
                                    {"layer_types": ["sliding_attention", "full_attention", "sliding_attention"]}])
def test_reference_computes_what_transformers_computes(change):
    """The plain-torch reference with transformers' weights: the same hidden states (two rotary bases, the window
    |i − j| ≤ W // 2 on local layers: 9 tokens pass it), the same tensors, the same FlopCounterMode count."""
    from helpers import torch_ref

    raw, B, S = {**TINY["modernbert"], **change}, 2, 9
    c = parse_config(raw)
    torch.manual_seed(0)
    theirs = hf_model(raw, "cpu").eval()
    ours = torch_ref.build(c, "cpu").eval()
    assert torch_ref.matches(param_table(c), ours)
    loaded = ours.load_state_dict(theirs.state_dict(), strict=False)  # theirs also holds the rotary buffers
    assert not loaded.missing_keys and all("rotary_emb" in key for key in loaded.unexpected_keys)
    ids = torch.randint(0, c["V"], (B, S))
    with torch.no_grad():
        torch.testing.assert_close(ours(ids), theirs(input_ids=ids).last_hidden_state, rtol=1e-5, atol=1e-5)
        windowless = torch_ref.build(parse_config({**raw, "local_attention": 64}), "cpu").eval()
        windowless.load_state_dict(theirs.state_dict(), strict=False)
        assert not torch.allclose(windowless(ids), ours(ids), atol=1e-4)  # the window changes the output
    meta = torch_ref.build(c)
    assert counted(meta, B, S) == forward_flops(c, B, S).forward == counted(hf_model(raw), B, S)
