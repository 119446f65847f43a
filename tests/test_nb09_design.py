"""The design choices of notebook 09 (``helpers.lessons.design``): which family makes which choice, read from its table;
each choice's exact effect on a 7B-class model by one config key (or the rows); the walks adding up."""

from __future__ import annotations

import pytest

from helpers import count_model, evaluate, load_config, param_table, parse_config
from helpers.config import raw_config
from helpers.lessons.design import (CHANGES, EXPERTS, FEATURES, FFN_BIASES, GATED, GQA, LAYER_NORM_BETA, O_BIAS, QKV_BIASES,
                            ROW_CHANGES, TIED, WINDOW, design_effects, design_features, walk)
from helpers.params import BIAS

# family config -> the features it has (None: does not apply), as the papers and configs describe them; "tied" is the
# model built from the config (FLAN-T5's T5Config forces the tie; from_pretrained keeps its file's separate head)
ATTENTION_BIASES = {QKV_BIASES, O_BIAS}
EXPECTED = {
    "bert-base-uncased": {*ATTENTION_BIASES, FFN_BIASES, LAYER_NORM_BETA},
    "gpt2": {*ATTENTION_BIASES, FFN_BIASES, LAYER_NORM_BETA, TIED},
    "llama-7b": {GATED},
    "llama-2-70b": {GATED, GQA},
    "mistral-7b-v0.1": {GATED, GQA, WINDOW},
    "qwen2-7b": {QKV_BIASES, GATED, GQA},  # biases on q, k and v only: Qwen2Attention's o_proj has bias=False
    "gemma-7b": {GATED, TIED},
    "gemma-2-9b": {GATED, TIED, GQA, WINDOW},
    "t5-base": {TIED},
    "flan-t5-base": {GATED, TIED},
    "pythia-1.4b": {*ATTENTION_BIASES, FFN_BIASES, LAYER_NORM_BETA},
    "mixtral-8x7b-v0.1": {GATED, GQA, EXPERTS},
    "qwen3-30b-a3b": {GATED, GQA, EXPERTS},
}


@pytest.mark.parametrize("name", list(EXPECTED))
def test_features_read_from_the_table(name):
    features = design_features(load_config(name))
    assert list(features) == list(FEATURES)
    assert {f for f, has in features.items() if has} == EXPECTED[name]
    assert (features[TIED] is None) == (name == "bert-base-uncased")  # an encoder has no head to tie


def test_each_change_is_one_key():
    for change in CHANGES:
        before, after = change.configs()
        raw_before = {**raw_config(change.model), **change.base}
        assert {**raw_before, change.key: change.value} != raw_before  # the key really changes
        assert change.before != change.value
        assert before.name == after.name == change.model


def test_effects_are_the_formulas():
    llama, mixtral = load_config("llama-7b"), load_config("mixtral-8x7b-v0.1")
    effects = {e.label: e for e in design_effects()}
    assert len(effects) == len(CHANGES) + len(ROW_CHANGES)
    expected = {"biases on q, k and v": evaluate("L*(A*d_k + 2*A_kv*d_k)", llama), "a bias on o": evaluate("L*H", llama),
                "biases on the feed-forward": evaluate("L*(2*I + H)", llama),
                "LayerNorm's β beside each γ": evaluate("(2*L + 1)*H", llama),
                "a gate beside the up matrix (SwiGLU)": evaluate("L*H*I", llama),
                "head tied to the token table": -evaluate("V*H", llama),
                "8 key/value heads for 32 query heads": -evaluate("2*L*(A - 8)*d_k*H", llama),
                "a window of 4,096 tokens": 0,
                "8 experts instead of 1 (k = 1)": evaluate("L*(E - 1)*(3*H*I + H)", mixtral),
                "2 experts per token instead of 1": 0}
    assert {label: e.delta for label, e in effects.items()} == expected
    assert effects["2 experts per token instead of 1"].delta_active == evaluate("3*L*H*I", mixtral)
    assert effects["8 experts instead of 1 (k = 1)"].delta_active == evaluate("L*(E - 1)*H", mixtral)
    assert [e.feature for e in design_effects()] == sorted((e.feature for e in design_effects()), key=FEATURES.index)


def test_effects_add_up():
    """Independent LLaMA-7B choices made together change the count by the sum of their single effects; the attention
    biases and grouped-query attention interact (k_proj's and v_proj's biases shrink with A_kv), by exactly that."""

    llama = load_config("llama-7b")
    effects = {e.label: e.delta for e in design_effects()}
    base = count_model(llama).total
    independent = {"mlp_bias": True, "tie_word_embeddings": True, "num_key_value_heads": 8}
    together = count_model(parse_config({**raw_config("llama-7b"), **independent})).total
    assert together == base + sum(effects[label] for label in (
        "biases on the feed-forward", "head tied to the token table", "8 key/value heads for 32 query heads"))
    both = count_model(parse_config({**raw_config("llama-7b"), "attention_bias": True, "num_key_value_heads": 8})).total
    attention_bias = effects["biases on q, k and v"] + effects["a bias on o"]  # one key, two rows of the chart
    assert attention_bias == count_model(parse_config({**raw_config("llama-7b"), "attention_bias": True})).total - base
    interaction = both - base - attention_bias - effects["8 key/value heads for 32 query heads"]
    assert interaction == -evaluate("2*L*(A - 8)*d_k", llama) != 0


def test_walks_land_on_the_next_model():
    mistral = count_model(load_config("mistral-7b-v0.1"))
    to_mistral = walk("llama-7b", [("num_key_value_heads", 8), ("intermediate_size", 14336)])
    assert to_mistral[0] == ("llama-7b", 6_738_415_616, 6_738_415_616)
    assert to_mistral[-1][1:] == (mistral.total, mistral.active)
    from_mixtral = walk("mixtral-8x7b-v0.1", [("num_experts_per_tok", 1), ("num_local_experts", 1)])
    assert from_mixtral[0][1:] == (46_702_792_704, 12_879_925_248)
    assert from_mixtral[1][1] == from_mixtral[0][1]  # k changes the active count only
    assert from_mixtral[-1][1] == mistral.total + evaluate("L*H", load_config("mistral-7b-v0.1"))  # + a 1-expert router


def test_qwen2_has_no_output_bias():
    """The chart's Qwen2 cell: q_proj, k_proj and v_proj carry biases, o_proj none (transformers' Qwen2Attention:
    ``o_proj = nn.Linear(..., bias=False)``); the split is read from the table, so a model with an o bias shows it."""
    qwen2 = load_config("qwen2-7b")
    biases = sorted({p.name.rsplit(".", 2)[-2] for p in param_table(qwen2) if p.kind == BIAS})
    assert biases == ["k_proj", "q_proj", "v_proj"]
    features = design_features(qwen2)
    assert features[QKV_BIASES] and not features[O_BIAS]
    both = design_features(parse_config({**raw_config("llama-7b"), "attention_bias": True}))
    assert both[QKV_BIASES] and both[O_BIAS]  # LLaMA's attention_bias puts a bias on all four


def test_qwen2_output_bias_matches_transformers():
    """transformers' own Qwen2 on the meta device: bias tensors on q, k, v, none on o, as the features say."""
    transformers = pytest.importorskip("transformers")
    torch = pytest.importorskip("torch")
    raw = {**raw_config("qwen2-7b"), "num_hidden_layers": 1, "vocab_size": 64, "hidden_size": 64,
           "intermediate_size": 128, "num_attention_heads": 4, "num_key_value_heads": 2}
    with torch.device("meta"):
        model = transformers.Qwen2ForCausalLM(transformers.AutoConfig.for_model(**raw))
    names = {n.rsplit(".", 2)[-2] for n, _ in model.named_parameters() if n.endswith(".bias")}
    assert names == {"q_proj", "k_proj", "v_proj"}
    features = design_features(parse_config(raw))
    assert features[QKV_BIASES] and not features[O_BIAS]
