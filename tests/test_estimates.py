"""helpers.lessons.estimates (notebook 07): write-up 004's estimate, the generic decoder formula, the SwiGLU width rule,
and the parts of ``exact - 12·L·H²``, checked against the engine's tensor tables."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import ATTENTION, FEED_FORWARD, count_model, load_config, model_names, param_table, parse_config, total
from helpers.config import DATA_DIR, published, read_json
from helpers.lessons.estimates import (ERROR_PARTS, error_formulas, error_parts, estimate_12lh2, generic_decoder,
                             swiglu_intermediate)

from .strategies import gpt2_configs, llama_configs

DECODERS = [n for n in model_names() if load_config(n).model_type in ("gpt2", "llama")]


def test_estimate_reproduces_writeup_004_table():
    rows = published()["writeup_004_estimates"]["rows"]
    assert len(rows) == 5
    for r in rows:
        assert estimate_12lh2(r["n_layer"], r["d_model"]) == r["estimate"]
        c = load_config(r["config"])
        assert estimate_12lh2(c["L"], c["H"]) == r["estimate"]


def test_estimate_is_exact_beyond_int64():
    assert estimate_12lh2(2**20, 2**30) == 12 * 2**80


def test_generic_decoder_gpt2_small():
    c = load_config("gpt2")
    exact = count_model(c).total
    assert exact == 124_439_808  # REFERENCE.md, GPT2LMHeadModel counted by transformers
    assert generic_decoder(c["L"], c["H"], c["V"]) == exact - c["P"] * c["H"] - 2 * c["H"]


@given(gpt2_configs(), st.booleans())
@settings(max_examples=100, deadline=None)
def test_generic_decoder_is_gpt2_without_positions_and_ln_f(raw, tied):
    raw = {k: v for k, v in raw.items() if k != "n_inner"}  # I = 4H, the generic layer
    c = parse_config({**raw, "tie_word_embeddings": tied})
    V, P, H, L = c["V"], c["P"], c["H"], c["L"]
    untied_head = 0 if tied else V * H
    assert generic_decoder(L, H, V) == count_model(c).total - P * H - 2 * H - untied_head


def _independent_parts(c) -> dict[str, int]:
    """The parts of exact - 12LH² read off the tensor table by shape, not by formula."""
    params = param_table(c)
    H, L, V = c["H"], c["L"], c["V"]
    matrices = [p for p in params if len(p.shape) == 2]
    vocab = [p for p in matrices if V in p.shape and p.name.endswith(("wte.weight", "embed_tokens.weight", "lm_head.weight"))]
    positions = [p for p in matrices if p.name.endswith("wpe.weight")]
    return {
        "V·H": total(vocab),
        "P·H": total(positions),
        "biases + norms": total(p for p in params if len(p.shape) == 1),
        "feed-forward": total(p for p in matrices if p.component == FEED_FORWARD) - 8 * L * H**2,
        "attention": total(p for p in matrices if p.component == ATTENTION) - 4 * L * H**2,
    }


@given(st.one_of(gpt2_configs(), llama_configs()))
@settings(max_examples=150, deadline=None)
def test_error_parts_sum_to_the_error_and_match_the_tensors(raw):
    c = parse_config(raw)
    parts = error_parts(c)
    assert tuple(parts) == ERROR_PARTS
    assert sum(parts.values()) == count_model(c).total - estimate_12lh2(c["L"], c["H"])
    assert parts == _independent_parts(c)


@pytest.mark.parametrize("name", DECODERS)
def test_error_parts_of_shipped_decoders(name):
    c = load_config(name)
    parts = error_parts(c)
    assert sum(parts.values()) == count_model(c).total - estimate_12lh2(c["L"], c["H"])
    assert parts == _independent_parts(c)
    if c.model_type == "gpt2":
        assert parts["feed-forward"] == parts["attention"] == 0  # I = 4H in every GPT-2 config
        assert parts["biases + norms"] == 13 * c["L"] * c["H"] + 2 * c["H"]
    else:
        assert parts["P·H"] == 0 and parts["V·H"] == 2 * c["V"] * c["H"]  # rotary, untied head
        assert (parts["attention"] < 0) == (c["A_kv"] < c["A"])  # only grouped-query attention saves


def test_error_formulas_refuse_an_encoder():
    with pytest.raises(ValueError, match="not a decoder"):
        error_formulas(load_config("bert-base-uncased"))


SWIGLU = {name: s for name, s in read_json(DATA_DIR / "swiglu.json").items() if not name.startswith("_")}


def test_swiglu_settings_cover_every_llama():
    assert sorted(SWIGLU) == sorted(n for n in DECODERS if load_config(n).model_type == "llama")


@pytest.mark.parametrize("name", sorted(SWIGLU))
def test_swiglu_rule_reproduces_llama_widths(name):
    c, s = load_config(name), SWIGLU[name]
    assert swiglu_intermediate(c["H"], multiple_of=s["multiple_of"], ffn_dim_multiplier=s["ffn_dim_multiplier"]) == c["I"]
    if s["ffn_dim_multiplier"] is None and s["multiple_of"] == 256:
        assert swiglu_intermediate(c["H"]) == c["I"]  # the plain rule, the function's defaults


def test_llama_2_70b_needs_its_multiplier():
    c, s = load_config("llama-2-70b"), SWIGLU["llama-2-70b"]
    assert s["ffn_dim_multiplier"] is not None and s["multiple_of"] != 256
    assert swiglu_intermediate(c["H"]) != c["I"]  # the plain rule gives LLaMA 65B's width
    assert swiglu_intermediate(c["H"]) == load_config("llama-65b")["I"]
    assert swiglu_intermediate(c["H"], multiple_of=s["multiple_of"], ffn_dim_multiplier=s["ffn_dim_multiplier"]) == c["I"]
    assert c["I"] == 28672  # intermediate_size in Meta's Llama-2-70b-hf config.json
    exact_multiplier = Fraction(str(s["ffn_dim_multiplier"]))  # 13/10, not the float nearest 1.3
    assert swiglu_intermediate(c["H"], multiple_of=s["multiple_of"], ffn_dim_multiplier=exact_multiplier) == c["I"]
    # the multiplier matters: rounded to the same multiple without it, the width is another
    assert swiglu_intermediate(c["H"], multiple_of=s["multiple_of"]) != c["I"]


@given(st.integers(1, 10**6), st.sampled_from([1, 2, 32, 64, 256, 4096]))
@settings(max_examples=200, deadline=None)
def test_swiglu_rule_rounds_two_thirds_of_4h_up(H, multiple_of):
    floor = 8 * H // 3
    I = swiglu_intermediate(H, multiple_of=multiple_of)
    assert I % multiple_of == 0 and floor <= I < floor + multiple_of
    assert swiglu_intermediate(H, multiple_of=1) == floor
