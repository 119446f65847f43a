"""Hypothesis strategies for random valid configs of every model type (kept small so torch builds fast)."""

from __future__ import annotations

from hypothesis import strategies as st


@st.composite
def bert_configs(draw, model_type: str | None = None) -> dict:
    d_k = draw(st.integers(1, 8))
    A = draw(st.integers(1, 4))
    model_type = model_type or draw(st.sampled_from(["bert", "roberta"]))
    low = 2 if model_type == "roberta" else 1  # RoBERTa's padding index 1 must lie inside its tables
    return {
        "model_type": model_type,
        "vocab_size": draw(st.integers(low, 64)),
        "hidden_size": A * d_k,
        "num_attention_heads": A,
        "num_hidden_layers": draw(st.integers(1, 3)),
        "intermediate_size": draw(st.integers(1, 40)),
        "max_position_embeddings": draw(st.integers(low, 40)),
        "type_vocab_size": draw(st.integers(1, 3)),
    }


@st.composite
def gpt2_configs(draw) -> dict:
    d_k = draw(st.integers(1, 8))
    A = draw(st.integers(1, 4))
    config = {
        "model_type": "gpt2",
        "vocab_size": draw(st.integers(1, 64)),
        "n_embd": A * d_k,
        "n_head": A,
        "n_layer": draw(st.integers(1, 3)),
        "n_positions": draw(st.integers(1, 40)),
        "tie_word_embeddings": draw(st.booleans()),
    }
    if draw(st.booleans()):
        config["n_inner"] = draw(st.integers(1, 40))
    if draw(st.booleans()):  # the names transformers' GPT2Config also accepts (its attribute_map)
        for key, alias in (("n_embd", "hidden_size"), ("n_layer", "num_hidden_layers"),
                           ("n_head", "num_attention_heads"), ("n_positions", "max_position_embeddings")):
            config[alias] = config.pop(key)
    return config


@st.composite
def llama_configs(draw) -> dict:
    A_kv = draw(st.integers(1, 3))
    A = A_kv * draw(st.integers(1, 3))
    config = {
        "model_type": "llama",
        "vocab_size": draw(st.integers(1, 64)),
        "hidden_size": A * draw(st.integers(1, 4)) * 2,
        "num_attention_heads": A,
        "num_key_value_heads": A_kv,
        "num_hidden_layers": draw(st.integers(1, 3)),
        "intermediate_size": draw(st.integers(1, 40)),
        "tie_word_embeddings": draw(st.booleans()),
        "attention_bias": draw(st.booleans()),
        "mlp_bias": draw(st.booleans()),
    }
    if draw(st.booleans()):
        config["head_dim"] = 2 * draw(st.integers(1, 4))
    if draw(st.booleans()):
        del config["num_key_value_heads"]
    return config


any_config = st.one_of(bert_configs(), gpt2_configs(), llama_configs())
