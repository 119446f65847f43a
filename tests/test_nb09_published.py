"""Notebook 09's published figures reproduced from the shipped configs: Pythia's table digit for digit (total and
Kaplan's non-embedding count), T5's five sizes, and the conventions behind the MoE figures."""

from __future__ import annotations

import pytest

from helpers import count_model, load_config, parse_config
from helpers.config import published, published_figure, raw_config
from helpers.lessons.conventions import (ACTIVE, ACTIVE_NO_INPUT, CONVENTIONS, NON_EMBEDDING, TOTAL, active_conventions,
                                 matching_conventions, round_as)
from helpers.flops import non_embedding_parameters

PYTHIA = published()["pythia_parameters"]["rows"]


def test_pythia_table_has_its_eight_models():
    assert [r["name"] for r in PYTHIA] == ["70M", "160M", "410M", "1B", "1.4B", "2.8B", "6.9B", "12B"]
    assert "Biderman et al. 2023" in published()["pythia_parameters"]["citation"]


@pytest.mark.parametrize("row", PYTHIA, ids=lambda r: r["name"])
def test_pythia_reproduced_digit_for_digit(row):
    c = load_config(row["config"])
    assert count_model(c).total == row["total"]
    assert non_embedding_parameters(c) == row["non_embedding"]  # Kaplan et al.'s N: both vocabulary tables out
    assert active_conventions(c)[NON_EMBEDDING] == row["non_embedding"]


def test_pythia_check_can_fail():
    """One more token in the vocabulary moves both tables: the total no longer matches, Kaplan's N still does."""
    row = PYTHIA[0]
    raw = raw_config(row["config"])
    c = parse_config({**raw, "vocab_size": raw["vocab_size"] + 1})
    assert count_model(c).total == row["total"] + 2 * c["H"] != row["total"]
    assert non_embedding_parameters(c) == row["non_embedding"]


# transformers' T5ForConditionalGeneration built from the config on the meta device (T5Config forces the tie): what
# the engine must give. flan-t5-base as from_pretrained loads it keeps its file's separate head: test_flan_t5_loaded
T5 = {"t5-small": 60_506_624, "t5-base": 222_903_552, "t5-large": 737_668_096, "t5-3b": 2_851_598_336,
      "t5-11b": 11_307_321_344, "flan-t5-base": 222_903_552}


@pytest.mark.parametrize("name", list(T5))
def test_t5_sizes(name):
    assert count_model(load_config(name)).total == T5[name]


def test_t5_papers_figures_and_large_outlier():
    off = {n: published_figure(n)["value"] / T5[n] - 1 for n in T5 if n.startswith("t5-")}
    assert all(abs(o) < 0.03 for n, o in off.items() if n != "t5-large")
    assert 0.04 < off["t5-large"] < 0.05


def test_round_as():
    assert round_as(46_702_792_704, "46.7B") == "46.7B"
    assert round_as(3_353_032_704, "3.3B") == "3.4B" and round_as(3_353_032_704, "3.3B", cut=True) == "3.3B"
    assert round_as(60_506_624, "60 million") == "61 million" and round_as(2_851_598_336, "2.8 billion") == "2.9 billion"
    with pytest.raises(ValueError, match="stated"):
        round_as(1, "about 60M")


def test_moe_conventions():
    mixtral, qwen = load_config("mixtral-8x7b-v0.1"), load_config("qwen3-30b-a3b")
    assert list(active_conventions(mixtral)) == list(CONVENTIONS)
    assert active_conventions(mixtral)[ACTIVE] == 12_879_925_248
    assert active_conventions(mixtral)[ACTIVE] - active_conventions(mixtral)[ACTIVE_NO_INPUT] == 32000 * 4096
    expected = {("mixtral-8x7b-v0.1", "46.7B"): [TOTAL], ("mixtral-8x7b-v0.1", "12.9B"): [ACTIVE],
                ("mixtral-8x7b-v0.1", "47B"): [TOTAL], ("qwen3-30b-a3b", "30.5B"): [TOTAL],
                ("qwen3-30b-a3b", "29.9B"): [NON_EMBEDDING], ("qwen3-30b-a3b", "3.3B"): []}
    for f in published()["figures"]:
        if (f["config"], f["stated"]) in expected:
            assert matching_conventions(load_config(f["config"]), f["stated"]) == expected[f["config"], f["stated"]]
    assert matching_conventions(qwen, "3.3B", cut=True) == [ACTIVE]  # the card cuts 3.35B off, it does not round


def test_a_dense_model_has_one_convention_for_total_and_active():
    c = load_config("llama-7b")
    counts = active_conventions(c)
    assert counts[TOTAL] == counts[ACTIVE] == 6_738_415_616
    assert counts[NON_EMBEDDING] == non_embedding_parameters(c)


def test_flan_t5_built_and_loaded():
    """FLAN-T5 base: tied when built from its config (222,903,552), its own head when loaded (247,577,856); the
    original T5 sizes leave tie_word_embeddings at its default, so built and loaded are the same."""
    from helpers.lessons.checkpoint import loaded_head, loaded_total

    flan = load_config("flan-t5-base")
    assert raw_config("flan-t5-base")["tie_word_embeddings"] is False
    assert loaded_total(flan, raw_config("flan-t5-base")) == 247_577_856 == T5["flan-t5-base"] + 32128 * 768
    assert [(p.name, p.shape) for p in loaded_head(flan, raw_config("flan-t5-base"))] == [("lm_head.weight", (32128, 768))]
    for name in ("t5-small", "t5-base", "llama-7b", "gpt2", "bert-base-uncased"):
        assert loaded_head(load_config(name), raw_config(name)) == [], name


@pytest.mark.parametrize("separate", [True, False])
def test_flan_t5_loaded_matches_from_pretrained(tmp_path, separate):
    """transformers' from_pretrained on a tiny FLAN-T5-shaped checkpoint written here: with a trained head that differs
    from the table it does NOT tie (modeling_utils ``tie_weights``) and counts loaded_total; with the head equal to the
    table it ties, and counts the built model."""
    import json

    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    safetensors_torch = pytest.importorskip("safetensors.torch")
    from helpers.lessons.checkpoint import loaded_total

    raw = {**raw_config("flan-t5-base"), "d_model": 16, "d_kv": 4, "d_ff": 32, "num_heads": 4, "num_layers": 1,
           "num_decoder_layers": 1, "vocab_size": 40}
    torch.manual_seed(0)
    built = transformers.T5ForConditionalGeneration(transformers.AutoConfig.for_model(**raw))
    assert built.lm_head.weight is built.shared.weight  # built from the config: tied
    state = {k: v.clone().contiguous() for k, v in built.state_dict().items()}
    state["lm_head.weight"] = torch.randn_like(state["shared.weight"]) if separate else state["shared.weight"].clone()
    safetensors_torch.save_file(state, str(tmp_path / "model.safetensors"), metadata={"format": "pt"})
    (tmp_path / "config.json").write_text(json.dumps(raw))
    loaded = transformers.T5ForConditionalGeneration.from_pretrained(tmp_path)
    n = sum(p.numel() for p in loaded.parameters())
    c = parse_config(raw)
    assert (loaded.lm_head.weight is loaded.shared.weight) == (not separate)
    assert n == (loaded_total(c, raw) if separate else count_model(c).total)
    assert loaded_total(c, raw) - count_model(c).total == 40 * 16
