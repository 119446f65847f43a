"""The config reader: defaults as transformers has them, and one clear error per malformed field."""

from __future__ import annotations

from functools import reduce

import pytest

from helpers import ConfigError, count_model, load_config, model_names, param_table, parse_config
from helpers.families import FAMILIES


def test_shipped_models_are_all_readable():
    names = model_names()
    for required in ("bert-base-uncased", "bert-base-cased", "bert-large-uncased", "bert-base-chinese",
                     "bert-base-multilingual-cased", "roberta-base", "gpt2", "gpt2-medium", "gpt2-large",
                     "gpt2-xl", "gpt3-175b", "llama-7b", "llama-13b", "llama-33b", "llama-65b", "llama-2-70b"):
        assert required in names
    for name in names:
        assert load_config(name).name == name


def test_bert_base_sizes():
    c = load_config("bert-base-uncased")
    assert dict(c.sizes) == {"V": 30522, "H": 768, "L": 12, "A": 12, "I": 3072, "P": 512, "T": 2, "d_k": 64}
    assert c.architecture == "BertModel"


def config_field(config, key: str):
    """A config class's field; ``"vision_config.hidden_size"`` in its sub-config (a composite: Gemma 3's tower)."""
    return reduce(lambda sub, part: getattr(sub, part, None), key.split("."), config)


def test_transformers_defaults_agree_with_ours():
    transformers = pytest.importorskip("transformers")
    for model_type, family in FAMILIES.items():  # BertConfig, GPT2Config ... through the class each family mirrors
        theirs = getattr(transformers, family.architecture).config_class()
        ours = parse_config({"model_type": model_type})
        for size in FAMILIES[model_type].sizes:
            value = config_field(theirs, size.key)  # None: derived later (gpt2's n_inner) or no field (qwen2 head_dim)
            if value is not None:
                assert ours[size.symbol] == value, (model_type, size.key)
        for flag in FAMILIES[model_type].flags:
            assert bool(config_field(theirs, flag.key)) == flag.default, (model_type, flag.key)


def test_gpt2_reads_the_names_transformers_maps():
    aliased = parse_config({"model_type": "gpt2", "hidden_size": 64, "num_attention_heads": 4,
                            "num_hidden_layers": 2, "max_position_embeddings": 16})
    plain = parse_config({"model_type": "gpt2", "n_embd": 64, "n_head": 4, "n_layer": 2, "n_positions": 16})
    assert aliased.sizes == plain.sizes
    assert parse_config({"model_type": "gpt2", "n_embd": 64, "hidden_size": 64, "n_head": 4})["H"] == 64


def test_padding_index():
    assert parse_config({"model_type": "bert"}).pad_token_id == 0
    assert parse_config({"model_type": "roberta"}).pad_token_id == 1
    assert parse_config({"model_type": "llama"}).pad_token_id is None
    assert parse_config({"model_type": "llama", "pad_token_id": -1}).pad_token_id == -1
    assert parse_config({"model_type": "gpt2", "pad_token_id": 99999}).pad_token_id is None  # no padding row


def test_derived_sizes():
    assert parse_config({"model_type": "gpt2", "n_embd": 64, "n_head": 4})["I"] == 256
    llama = parse_config({"model_type": "llama", "hidden_size": 64, "num_attention_heads": 8})
    assert (llama["A_kv"], llama["d_k"]) == (8, 8)
    gqa = parse_config({"model_type": "llama", "hidden_size": 64, "num_attention_heads": 8,
                        "num_key_value_heads": 2, "head_dim": 16})
    assert (gqa["A_kv"], gqa["d_k"]) == (2, 16)
    assert parse_config({"model_type": "gpt2", "n_inner": None})["I"] == 4 * 768


BAD = [
    ([1, 2], "config", "JSON object"),
    ({}, "model_type", "missing"),
    ({"model_type": "mamba"}, "model_type", "supported: bert, roberta, gpt2, llama"),
    ({"model_type": "bert", "hidden_size": 100}, "num_attention_heads", "not divisible"),
    ({"model_type": "bert", "hidden_size": "768"}, "hidden_size", "integer"),
    ({"model_type": "bert", "hidden_size": 768.0}, "hidden_size", "float"),
    ({"model_type": "bert", "num_hidden_layers": -2}, "num_hidden_layers", "at least 0"),
    ({"model_type": "bert", "vocab_size": True}, "vocab_size", "boolean"),
    ({"model_type": "bert", "add_cross_attention": True}, "add_cross_attention", "is_decoder"),
    ({"model_type": "bert", "position_embedding_type": "relative_key"}, "position_embedding_type", "not supported"),
    ({"model_type": "gpt2", "n_head": 5}, "n_head", "not divisible"),
    ({"model_type": "gpt2", "tie_word_embeddings": "yes"}, "tie_word_embeddings", "true or false"),
    ({"model_type": "llama", "head_dim": 0}, "head_dim", "at least 1"),
    ({"model_type": "llama", "mlp_bias": 1}, "mlp_bias", "true or false"),
    ({"model_type": "gpt2", "num_hidden_layers": -1}, "num_hidden_layers", "at least 0"),
    ({"model_type": "gpt2", "n_layer": "2", "num_hidden_layers": 2}, "n_layer", "integer"),  # validated, then overridden
    ({"model_type": "bert", "vocab_size": 5, "pad_token_id": 5}, "pad_token_id", "not a row"),
    ({"model_type": "roberta", "max_position_embeddings": 1}, "pad_token_id", "not a row"),
    ({"model_type": "llama", "vocab_size": 10, "pad_token_id": 10}, "pad_token_id", "not a row"),
    ({"model_type": "bert", "pad_token_id": "0"}, "pad_token_id", "integer"),
    ({"model_type": "bert", "vocab_size": None}, "vocab_size", "null"),
    ({"model_type": "bert", "type_vocab_size": -1}, "type_vocab_size", "at least 0"),
]


def test_built_but_not_run_is_counted_then_refused_naming_the_field():
    """transformers builds LLaMA with 5 key/value heads for 32 query heads, and its forward pass fails: counted,
    then refused in one line by the commands that run it."""
    c = parse_config({"model_type": "llama", "num_key_value_heads": 5})
    assert c["A_kv"] == 5
    with pytest.raises(ConfigError) as info:
        c.check_runs()
    assert info.value.field == "num_key_value_heads"
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(("raw", "field", "words"), BAD)
def test_bad_configs_name_the_field(raw, field, words):
    with pytest.raises(ConfigError) as info:
        parse_config(raw)
    assert info.value.field == field
    assert words in str(info.value)
    assert "\n" not in str(info.value)


def test_an_alias_overrides_the_key_it_stands_for_as_in_transformers():
    """transformers sets each field from its own key, then applies ``attribute_map``: the alias wins."""
    transformers = pytest.importorskip("transformers")
    for raw, symbol, key in [({"model_type": "gpt2", "n_embd": 64, "hidden_size": 128, "n_head": 4}, "H", "n_embd"),
                             ({"model_type": "gpt2", "num_hidden_layers": 3, "n_layer": 2}, "L", "n_layer"),
                             ({"model_type": "distilbert", "n_layers": 2, "num_hidden_layers": 4}, "L", "n_layers"),
                             ({"model_type": "t5", "d_model": 8, "hidden_size": 16}, "H", "d_model")]:
        assert parse_config(raw)[symbol] == getattr(transformers.AutoConfig.for_model(**raw), key)


def test_depth_zero_is_counted_where_transformers_builds_it():
    """num_hidden_layers = 0: the tables, the final norms, the pooler or head; no layer, so the heads go unchecked."""
    for raw in ({"model_type": "bert", "num_hidden_layers": 0}, {"model_type": "gpt2", "n_layer": 0, "n_head": 5},
                {"model_type": "t5", "num_layers": 0}, {"model_type": "opt", "num_hidden_layers": 0}):
        c = parse_config(raw)
        assert c["L"] == 0 and count_model(c).total == sum(p.count for p in param_table(c)) > 0


def test_a_checkpoint_folder_is_read_through_its_config(write_config, tmp_path):
    write_config({"model_type": "bert", "num_hidden_layers": 2})
    assert load_config(tmp_path)["L"] == 2
    assert parse_config({"model_type": "bert", "type_vocab_size": 0})["T"] == 0  # transformers accepts it
    assert parse_config({"model_type": "gpt2", "n_inner": None})["I"] == 768 * 4  # null means derived here


def test_missing_path_and_bad_json(write_config, tmp_path):
    with pytest.raises(ConfigError, match="neither a file nor a model"):
        load_config(tmp_path / "nope.json")
    with pytest.raises(ConfigError, match="not valid JSON"):
        load_config(write_config("{not json"))
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ConfigError, match="not a file"):
        load_config(empty)  # a folder without a config.json
