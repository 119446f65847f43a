"""Hypothesis strategies for random valid configs of every model type (kept small so torch builds fast).

One entry per registered family in :data:`STRATEGIES` and :data:`TINY`; ``tests/test_families.py`` fails when a
family of ``helpers.families.FAMILIES`` has none, and every property test iterates over these dicts.

:data:`WIDE` (the fuzz run) widens them to the whole space transformers accepts. The encoder-era families are rows of
:data:`WIDE_ENCODERS`, read by one strategy (:func:`wide_configs`): a new one is a row, its tidy strategy, the depth
keys, the aliases and the keys that change no parameter. The decoders share :func:`wide_decoder_configs` and add
their own keys in a function each.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any, Callable

from hypothesis import strategies as st


@st.composite
def bert_configs(draw, model_type: str | None = None) -> dict:
    d_k = draw(st.integers(1, 8))
    A = draw(st.integers(1, 4))
    model_type = model_type or draw(st.sampled_from(["bert", "roberta"]))
    low = 2 if model_type in ("roberta", "xlm-roberta") else 1  # RoBERTa's padding index 1 must lie inside its tables
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


@st.composite
def mistral_configs(draw) -> dict:
    """LLaMA's shapes in Mistral's dialect, with a sliding window short enough for S to pass it (or none)."""
    config = {**draw(llama_configs()), "model_type": "mistral"}
    for key in ("attention_bias", "mlp_bias"):  # MistralConfig has no bias switches
        del config[key]
    if "num_key_value_heads" not in config:  # Mistral's default is 8 key/value heads: say how many
        config["num_key_value_heads"] = config["num_attention_heads"]
    config["sliding_window"] = draw(st.one_of(st.integers(2, 8), st.none()))
    return config


@st.composite
def gemma_configs(draw) -> dict:
    """Gemma: head_dim sizes the heads on its own (H need not be A·d_k, nor divisible by A); tied by default."""
    A_kv = draw(st.integers(1, 3))
    A = A_kv * draw(st.integers(1, 3))
    config = {
        "model_type": "gemma",
        "vocab_size": draw(st.integers(1, 64)),
        "hidden_size": draw(st.integers(1, 24)),
        "num_attention_heads": A,
        "num_key_value_heads": A_kv,
        "head_dim": 2 * draw(st.integers(1, 4)),
        "num_hidden_layers": draw(st.integers(1, 3)),
        "intermediate_size": draw(st.integers(1, 40)),
        "attention_bias": draw(st.booleans()),
    }
    if draw(st.booleans()):
        config["tie_word_embeddings"] = draw(st.booleans())
    return config


@st.composite
def gemma2_configs(draw) -> dict:
    """Gemma 2: Gemma's shapes (but A must divide H here: Gemma2Config checks it), a window S can pass."""
    A_kv = draw(st.integers(1, 3))
    A = A_kv * draw(st.integers(1, 3))
    config = {
        "model_type": "gemma2",
        "vocab_size": draw(st.integers(1, 64)),
        "hidden_size": A * draw(st.integers(1, 6)),
        "num_attention_heads": A,
        "num_key_value_heads": A_kv,
        "head_dim": 2 * draw(st.integers(1, 4)),
        "num_hidden_layers": draw(st.integers(1, 4)),
        "intermediate_size": draw(st.integers(1, 40)),
        "attention_bias": draw(st.booleans()),
        "sliding_window": draw(st.integers(2, 8)),
    }
    if draw(st.booleans()):
        config["tie_word_embeddings"] = draw(st.booleans())
    return config


@st.composite
def gpt_neox_configs(draw) -> dict:
    """GPT-NeoX / Pythia: fused QKV, biases switchable, parallel residual or not, untied by default."""
    A = draw(st.integers(1, 4))
    config = {
        "model_type": "gpt_neox",
        "vocab_size": draw(st.integers(1, 64)),
        "hidden_size": A * draw(st.integers(1, 8)),
        "num_attention_heads": A,
        "num_hidden_layers": draw(st.integers(1, 3)),
        "intermediate_size": draw(st.integers(1, 40)),
        "attention_bias": draw(st.booleans()),
        "use_parallel_residual": draw(st.booleans()),
    }
    if draw(st.booleans()):
        config["tie_word_embeddings"] = draw(st.booleans())
    return config


@st.composite
def mixtral_configs(draw) -> dict:
    """LLaMA's shapes (no bias switches) in Mixtral's dialect: E experts, k of them per token."""
    config = {**draw(llama_configs()), "model_type": "mixtral"}
    for key in ("attention_bias", "mlp_bias"):  # MixtralConfig has no bias switches
        del config[key]
    if "num_key_value_heads" not in config:  # Mixtral's default is 8 key/value heads: say how many
        config["num_key_value_heads"] = config["num_attention_heads"]
    E = draw(st.integers(1, 4))
    config["num_local_experts"] = E
    config["num_experts_per_tok"] = draw(st.integers(1, E))
    return config


@st.composite
def qwen2_configs(draw, model_type: str = "qwen2") -> dict:
    """Qwen2's (or Qwen3's) dialect: GQA, a head_dim that may leave H undivided, windows on some layers or none."""
    A_kv = draw(st.integers(1, 3))
    A = A_kv * draw(st.integers(1, 3))
    config = {
        "model_type": model_type,
        "vocab_size": draw(st.integers(1, 64)),
        "hidden_size": A * draw(st.integers(1, 4)) * 2,
        "num_attention_heads": A,
        "num_key_value_heads": draw(st.sampled_from([A_kv, None])),  # null: A
        "num_hidden_layers": draw(st.integers(1, 3)),
        "intermediate_size": draw(st.integers(1, 40)),
        "tie_word_embeddings": draw(st.booleans()),
        "use_sliding_window": draw(st.booleans()),
        "sliding_window": draw(st.one_of(st.integers(2, 8), st.none())),
        "max_window_layers": draw(st.integers(0, 3)),
    }
    if model_type == "qwen3":
        config["attention_bias"] = draw(st.booleans())
        config["head_dim"] = 2 * draw(st.integers(1, 4))  # Qwen3's default is 128: too big for these tests
    elif draw(st.booleans()):
        config["head_dim"] = 2 * draw(st.integers(1, 4))
    if "head_dim" in config and draw(st.booleans()):  # H need not be A·d_k, nor a multiple of A
        config["hidden_size"] = draw(st.integers(1, 24))
    if config["use_sliding_window"] and config["sliding_window"] and draw(st.booleans()):
        config["layer_types"] = draw(st.lists(st.sampled_from(["full_attention", "sliding_attention"]),
                                              min_size=config["num_hidden_layers"],
                                              max_size=config["num_hidden_layers"]))
    return config


@st.composite
def qwen3_moe_configs(draw) -> dict:
    """Qwen3's attention (head_dim given, H free) with E experts, k per token, some layers kept dense."""
    config = {**draw(qwen2_configs("qwen3")), "model_type": "qwen3_moe"}
    for key in ("use_sliding_window", "sliding_window", "max_window_layers", "layer_types"):
        config.pop(key, None)  # a window is refused for Qwen3-MoE
    if config["num_key_value_heads"] is None:  # Qwen3MoeConfig refuses null here
        config["num_key_value_heads"] = config["num_attention_heads"]
    E = draw(st.integers(0, 4))
    L = config["num_hidden_layers"]
    config.update({
        "num_experts": E,
        "num_experts_per_tok": draw(st.integers(1, max(E, 1))),
        "moe_intermediate_size": draw(st.integers(1, 12)),
        "decoder_sparse_step": draw(st.integers(1, 2)),
        "mlp_only_layers": draw(st.lists(st.integers(0, L - 1), max_size=L, unique=True)),
        "norm_topk_prob": draw(st.booleans()),
    })
    return config


@st.composite
def phi3_configs(draw) -> dict:
    """Phi-3's dialect: fused projections, a padding row in the token table, one window on every layer or none."""
    A_kv = draw(st.integers(1, 3))
    A = A_kv * draw(st.integers(1, 3))
    V = draw(st.integers(1, 64))
    config = {
        "model_type": "phi3",
        "vocab_size": V,
        "pad_token_id": draw(st.one_of(st.none(), st.integers(0, V - 1))),  # the default, 32000, is out of these tables
        "hidden_size": A * draw(st.integers(1, 4)) * 2,
        "num_attention_heads": A,
        "num_key_value_heads": A_kv,
        "num_hidden_layers": draw(st.integers(1, 3)),
        "intermediate_size": draw(st.integers(1, 40)),
        "tie_word_embeddings": draw(st.booleans()),
        "sliding_window": draw(st.one_of(st.integers(2, 8), st.none())),
    }
    if draw(st.booleans()):
        config["head_dim"] = 2 * draw(st.integers(1, 4))
        if draw(st.booleans()):
            config["hidden_size"] = draw(st.integers(1, 24))
    if draw(st.booleans()):
        del config["num_key_value_heads"]
    return config


@st.composite
def opt_configs(draw) -> dict:
    """OPT: a word_embed_proj_dim d_e that may differ from H, pre- or post-LayerNorm, biases and norm gains switchable."""
    A = draw(st.integers(1, 4))
    H = A * draw(st.integers(1, 8))
    config = {
        "model_type": "opt",
        "vocab_size": draw(st.integers(2, 64)),  # the padding index 1 must lie inside the token table
        "hidden_size": H,
        "num_attention_heads": A,
        "num_hidden_layers": draw(st.integers(1, 3)),
        "ffn_dim": draw(st.integers(1, 40)),
        "max_position_embeddings": draw(st.integers(1, 40)),
        "word_embed_proj_dim": draw(st.sampled_from([None, H, draw(st.integers(1, 24))])),
        "do_layer_norm_before": draw(st.booleans()),
        "enable_bias": draw(st.booleans()),
        "layer_norm_elementwise_affine": draw(st.booleans()),
        "tie_word_embeddings": draw(st.booleans()),
    }
    return config


@st.composite
def distilbert_configs(draw) -> dict:
    """DistilBERT's dialect (dim, n_heads, n_layers, hidden_dim) or the hidden_size … names its attribute_map accepts."""
    A = draw(st.integers(1, 4))
    config = {
        "model_type": "distilbert",
        "vocab_size": draw(st.integers(1, 64)),
        "dim": A * draw(st.integers(1, 8)),
        "n_heads": A,
        "n_layers": draw(st.integers(1, 3)),
        "hidden_dim": draw(st.integers(1, 40)),
        "max_position_embeddings": draw(st.integers(1, 40)),
    }
    if draw(st.booleans()):
        for key, alias in (("dim", "hidden_size"), ("n_heads", "num_attention_heads"), ("n_layers", "num_hidden_layers")):
            config[alias] = config.pop(key)
    return config


@st.composite
def t5_configs(draw) -> dict:
    """T5: d_kv free of H/A, a decoder depth of its own or none, ReLU or gated feed-forward, any bucket count."""
    config = {
        "model_type": "t5",
        "vocab_size": draw(st.integers(1, 64)),
        "d_model": draw(st.integers(1, 16)),
        "d_kv": draw(st.integers(1, 8)),
        "num_heads": draw(st.integers(1, 4)),
        "d_ff": draw(st.integers(1, 40)),
        "num_layers": draw(st.integers(1, 3)),
        "num_decoder_layers": draw(st.sampled_from([None, 1, 2, 3])),  # null: num_layers
        # fewer than 4 buckets build, but T5's bucket function then divides by zero in a forward pass
        "relative_attention_num_buckets": draw(st.integers(4, 8)),
        "feed_forward_proj": draw(st.sampled_from(["relu", "gelu", "gated-gelu", "gated-silu"])),
    }
    if draw(st.booleans()):
        config["tie_word_embeddings"] = draw(st.booleans())  # forced true by transformers 5.23: no effect
    return config


@st.composite
def electra_configs(draw, model_type: str = "electra") -> dict:
    """ELECTRA's (or ALBERT's) factorised embeddings: d_e = H or not."""
    A = draw(st.integers(1, 4))
    H = A * draw(st.integers(1, 8))
    return {
        "model_type": model_type,
        "vocab_size": draw(st.integers(1, 64)),
        "embedding_size": draw(st.sampled_from([H, draw(st.integers(1, 24))])),
        "hidden_size": H,
        "num_attention_heads": A,
        "num_hidden_layers": draw(st.integers(1, 4)),
        "intermediate_size": draw(st.integers(1, 40)),
        "max_position_embeddings": draw(st.integers(1, 40)),
        "type_vocab_size": draw(st.integers(1, 3)),
    }



@st.composite
def deepseek_v3_configs(draw) -> dict:
    """DeepSeek-V3: latent attention (a query bottleneck or none), L_f dense layers, E routed experts in g groups, shared
    experts (0 to 2); every config one transformers' forward pass runs (A_kv = A, E/g ≥ 2, k within the kept groups)."""
    A = draw(st.integers(1, 4))
    L = draw(st.integers(1, 3))
    g = draw(st.integers(1, 3))
    E = g * draw(st.integers(2, 3))
    k_g = draw(st.integers(1, g))
    config = {
        "model_type": "deepseek_v3",
        "vocab_size": draw(st.integers(1, 64)),
        "hidden_size": draw(st.integers(1, 24)),  # the heads need not divide it
        "num_attention_heads": A,
        "num_key_value_heads": draw(st.sampled_from([A, None])),  # null: A
        "num_hidden_layers": L,
        "q_lora_rank": draw(st.one_of(st.none(), st.integers(1, 12))),  # null: a plain q_proj
        "kv_lora_rank": draw(st.integers(1, 8)),
        "qk_nope_head_dim": draw(st.integers(1, 6)),
        "qk_rope_head_dim": 2 * draw(st.integers(1, 3)),
        "v_head_dim": draw(st.integers(1, 6)),
        "intermediate_size": draw(st.integers(1, 40)),
        "moe_intermediate_size": draw(st.integers(1, 12)),
        "first_k_dense_replace": draw(st.integers(0, L)),
        "n_group": g,
        "topk_group": k_g,
        "num_experts_per_tok": draw(st.integers(1, k_g * (E // g))),
        "n_shared_experts": draw(st.integers(0, 2)),
        "tie_word_embeddings": draw(st.booleans()),
        "attention_bias": draw(st.booleans()),
        "norm_topk_prob": draw(st.booleans()),
    }
    config["num_local_experts" if draw(st.booleans()) else "n_routed_experts"] = E  # DeepseekV3Config's attribute_map
    return config


@st.composite
def olmo2_configs(draw) -> dict:
    """OLMo 2: LLaMA's shapes (head_dim free of H/A), QK-norm over the projections; a table wide enough for its
    padding index (1 by default)."""
    config = {**draw(llama_configs()), "model_type": "olmo2", "vocab_size": draw(st.integers(2, 64))}
    del config["mlp_bias"]  # Olmo2Config has no such switch (its MLP never has a bias)
    return config


@st.composite
def smollm3_configs(draw) -> dict:
    """SmolLM3: LLaMA's shapes, NoPE every ``no_rope_layer_interval``-th layer (or a list), windowed NoPE layers
    when ``use_sliding_window``; a padding index inside the table (its default, 128004, lies outside these tables)."""
    config = {**draw(llama_configs()), "model_type": "smollm3"}
    config["num_hidden_layers"] = L = draw(st.integers(1, 5))
    if "num_key_value_heads" not in config:  # SmolLM3's default is 4 key/value heads: say how many
        config["num_key_value_heads"] = config["num_attention_heads"]
    config["pad_token_id"] = draw(st.one_of(st.none(), st.integers(0, config["vocab_size"] - 1)))
    if draw(st.booleans()):
        config["no_rope_layer_interval"] = draw(st.integers(1, 4))
    elif draw(st.booleans()):
        config["no_rope_layers"] = draw(st.lists(st.integers(0, 1), min_size=L, max_size=L))
    if draw(st.booleans()):
        config["use_sliding_window"] = True
        config["sliding_window"] = draw(st.integers(2, 8))
    return config


@st.composite
def gemma3_text_configs(draw) -> dict:
    """Gemma 3 (text): Gemma 2's shapes (A divides H), QK-norm, a window S can pass, the local:global pattern."""
    config = {**draw(gemma2_configs()), "model_type": "gemma3_text"}
    config["num_hidden_layers"] = draw(st.integers(1, 6))
    if draw(st.booleans()):
        config["sliding_window_pattern"] = draw(st.integers(1, 4))
    return config


@st.composite
def gpt_oss_configs(draw) -> dict:
    """GPT-OSS: LLaMA's shapes with a head_dim of their own (GptOss's default, 64, is said otherwise), biased
    attention or not, E experts and k per token, a window S can pass, alternating layers or a drawn layer_types."""
    config = {**draw(llama_configs()), "model_type": "gpt_oss"}
    del config["mlp_bias"]  # GptOssConfig has no such switch (its experts always have biases)
    config["num_hidden_layers"] = L = draw(st.integers(1, 4))
    if "num_key_value_heads" not in config:  # GPT-OSS's default is 8 key/value heads: say how many
        config["num_key_value_heads"] = config["num_attention_heads"]
    config["head_dim"] = 2 * draw(st.integers(1, 4))
    E = draw(st.integers(1, 4))
    config["num_local_experts"] = E
    config["num_experts_per_tok"] = draw(st.integers(1, E))
    config["sliding_window"] = draw(st.integers(2, 8))
    if draw(st.booleans()):
        kinds = st.sampled_from(["full_attention", "sliding_attention"])
        config["layer_types"] = draw(st.lists(kinds, min_size=L, max_size=L))
    return config


@st.composite
def qwen3_next_configs(draw) -> dict:
    """Qwen3-Next: linear and full attention layers (by full_attention_interval or a drawn layer_types, one full layer
    at least: the model fails with a cache otherwise), GQA with a
    head_dim of its own (rotary on a quarter), Gated DeltaNet heads (value heads a multiple of the key heads), a
    convolution of 1 to 4 taps, E experts (0: every layer dense) with a shared expert, some layers kept dense."""
    A_kv = draw(st.integers(1, 2))
    G_k = draw(st.integers(1, 2))
    L = draw(st.integers(1, 4))
    E = draw(st.integers(0, 4))
    config = {
        "model_type": "qwen3_next",
        "vocab_size": draw(st.integers(1, 48)),
        "hidden_size": draw(st.integers(2, 16)),
        "num_attention_heads": A_kv * draw(st.integers(1, 2)),
        "num_key_value_heads": A_kv,
        "head_dim": 2 * draw(st.integers(1, 4)),
        "num_hidden_layers": L,
        "intermediate_size": draw(st.integers(1, 16)),
        "moe_intermediate_size": draw(st.integers(1, 8)),
        "shared_expert_intermediate_size": draw(st.integers(0, 8)),
        "num_experts": E,
        "num_experts_per_tok": draw(st.integers(1, max(E, 1))),
        "decoder_sparse_step": draw(st.integers(1, 2)),
        "mlp_only_layers": draw(st.lists(st.integers(0, L - 1), max_size=L, unique=True)),
        "linear_num_key_heads": G_k,
        "linear_num_value_heads": G_k * draw(st.integers(1, 2)),
        "linear_key_head_dim": draw(st.integers(1, 4)),
        "linear_value_head_dim": draw(st.integers(1, 4)),
        "linear_conv_kernel_dim": draw(st.integers(1, 4)),
        "norm_topk_prob": draw(st.booleans()),
        "attention_bias": draw(st.booleans()),
        "tie_word_embeddings": draw(st.booleans()),
    }
    if draw(st.booleans()):  # at least one full layer: without one, transformers' cache cannot count its tokens
        kinds = draw(st.lists(st.sampled_from(["linear_attention", "full_attention"]), min_size=L - 1, max_size=L - 1))
        at = draw(st.integers(0, L - 1))
        config["layer_types"] = kinds[:at] + ["full_attention"] + kinds[at:]
    else:
        config["full_attention_interval"] = draw(st.integers(1, L))
    return config


@st.composite
def glm4_moe_configs(draw) -> dict:
    """GLM-4.5: DeepSeek-V3's routing (L_f dense layers, E experts in g groups of at least 2, shared experts) under GQA
    with a head_dim of its own or H/A, q/k/v biases, QK-norm or not, a partial rotary share; every config one
    transformers' forward pass runs."""
    config = {**draw(deepseek_v3_configs()), "model_type": "glm4_moe"}
    for key in ("q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"):
        del config[key]  # the latent attention's
    A_kv = draw(st.integers(1, 3))
    A = A_kv * draw(st.integers(1, 2))
    config.update({"hidden_size": A * 2 * draw(st.integers(1, 3)), "num_attention_heads": A, "num_key_value_heads": A_kv,
                   "use_qk_norm": draw(st.booleans()), "partial_rotary_factor": draw(st.sampled_from([0.5, 0.25, 1.0]))})
    if draw(st.booleans()):
        config["head_dim"] = 2 * draw(st.integers(1, 4))
    return config


@st.composite
def deepseek_v2_configs(draw) -> dict:
    """DeepSeek-V2: DeepSeek-V3's latent attention (heads dividing H, as DeepseekV2Config requires; d_nope and r_kv
    even), mlp_bias, greedy
    or group-limited routing (groups of one expert route: a group is scored by its best one); every config
    transformers' forward pass runs."""
    config = {**draw(deepseek_v3_configs()), "model_type": "deepseek_v2"}
    A = config["num_attention_heads"]
    config["hidden_size"] = A * draw(st.integers(1, 6))
    E = config.pop("num_local_experts", None) or config.pop("n_routed_experts")
    config["num_experts" if draw(st.booleans()) else "n_routed_experts"] = E  # DeepseekV2Config's attribute_map
    config["mlp_bias"] = draw(st.booleans())
    # the rotary parts start after d_nope and r_kv values: even, or transformers' complex view fails in fp32
    config["qk_nope_head_dim"], config["kv_lora_rank"] = 2 * draw(st.integers(1, 3)), 2 * draw(st.integers(1, 4))
    if draw(st.booleans()):
        config["topk_method"] = "greedy"
        config["num_experts_per_tok"] = draw(st.integers(1, E))
        for key in ("n_group", "topk_group"):
            if draw(st.booleans()):
                del config[key]  # greedy routing never reads them
    else:
        config["topk_method"] = "group_limited_greedy"
        g = draw(st.sampled_from([g for g in (1, 2, 3, 6) if E % g == 0]))
        config["n_group"], config["topk_group"] = g, draw(st.integers(1, g))
    return config


@st.composite
def modernbert_configs(draw) -> dict:
    """ModernBERT: even heads (rotary pairs) dividing H, a padding index inside the table, every bias switch, the
    window and the global layers' interval, or a drawn layer_types."""
    A, L = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    V = draw(st.integers(1, 64))
    config = {
        "model_type": "modernbert",
        "vocab_size": V,
        "pad_token_id": draw(st.one_of(st.none(), st.integers(0, V - 1))),  # its default, 50283, lies outside
        "hidden_size": A * 2 * draw(st.integers(1, 4)),
        "num_attention_heads": A,
        "num_hidden_layers": L,
        "intermediate_size": draw(st.integers(1, 40)),
        "local_attention": draw(st.integers(2, 8)),
    }
    for key in ("norm_bias", "attention_bias", "mlp_bias", "classifier_bias", "decoder_bias", "tie_word_embeddings"):
        if draw(st.booleans()):
            config[key] = draw(st.booleans())
    if draw(st.booleans()):
        config["global_attn_every_n_layers"] = draw(st.integers(1, 3))
    elif draw(st.booleans()):
        config["layer_types"] = draw(st.lists(st.sampled_from(["full_attention", "sliding_attention"]),
                                              min_size=L, max_size=L))
    return config


@st.composite
def siglip_configs(draw) -> dict:
    """A small SigLIP vision tower (Gemma 3's): heads dividing the width, an image of a few patches, a pooling head or not."""
    A = draw(st.integers(1, 3))
    patch = draw(st.integers(1, 4))
    return {"model_type": "siglip_vision_model", "hidden_size": A * draw(st.integers(1, 4)), "num_attention_heads": A,
            "intermediate_size": draw(st.integers(1, 16)), "num_hidden_layers": draw(st.integers(0, 2)),
            "num_channels": draw(st.integers(1, 3)), "patch_size": patch, "image_size": patch * draw(st.integers(1, 4)),
            "vision_use_head": draw(st.booleans())}


@st.composite
def gemma3_configs(draw) -> dict:
    """Gemma 3 with its tower: a Gemma 3 text config, a SigLIP tower, the projector's pooled tokens, the head's tie."""
    config = {"model_type": "gemma3", "text_config": draw(gemma3_text_configs()), "vision_config": draw(siglip_configs()),
              "mm_tokens_per_image": draw(st.integers(1, 4))}
    if draw(st.booleans()):
        config["tie_word_embeddings"] = draw(st.sampled_from([True, False, None]))  # null: untied
    return config


@st.composite
def qwen2_5_vl_configs(draw) -> dict:
    """Qwen2.5-VL: a Qwen2 text config (A divides H; d_k = H/A even, split into three M-RoPE sections), given flat as
    published or as ``text_config``; a small vision encoder with its patch merger."""
    text = draw(qwen2_configs("qwen2"))
    del text["model_type"]
    text.pop("head_dim", None)
    A = text["num_attention_heads"]
    half = draw(st.integers(1, 3))
    text["hidden_size"] = 2 * half * A
    first = draw(st.integers(0, half))
    second = draw(st.integers(0, half - first))
    text["rope_scaling"] = {"type": "mrope", "mrope_section": [first, second, half - first - second]}
    heads = draw(st.integers(1, 2))
    vision = {"depth": draw(st.integers(0, 2)), "hidden_size": heads * draw(st.integers(1, 4)),
              "intermediate_size": draw(st.integers(1, 12)), "num_heads": heads,
              "in_channels": draw(st.integers(1, 3)), "patch_size": draw(st.integers(1, 3)),
              "temporal_patch_size": draw(st.integers(1, 2)), "spatial_merge_size": draw(st.integers(1, 2)),
              "out_hidden_size": draw(st.integers(1, 12))}
    if draw(st.booleans()):
        return {"model_type": "qwen2_5_vl", "text_config": text, "vision_config": vision}
    return {"model_type": "qwen2_5_vl", **text, "vision_config": vision}


@st.composite
def llama4_text_configs(draw) -> dict:
    """Llama 4 (text): LLaMA's shapes with a head_dim of their own (Llama 4's default, 128, is said otherwise), E experts
    and k per token with a shared expert, dense layers of their own width, the sparse layers by step or by list, NoPE
    layers by interval or by list, a chunk S can pass."""
    config = {**draw(llama_configs()), "model_type": "llama4_text"}
    del config["mlp_bias"]  # Llama4TextConfig has no such switch
    config["num_hidden_layers"] = L = draw(st.integers(1, 5))
    if "num_key_value_heads" not in config:  # Llama 4's default is 8 key/value heads: say how many
        config["num_key_value_heads"] = config["num_attention_heads"]
    config["head_dim"] = 2 * draw(st.integers(1, 4))
    E = draw(st.integers(1, 4))
    config["num_local_experts"] = E
    config["num_experts_per_tok"] = draw(st.integers(1, E))
    config["intermediate_size_mlp"] = draw(st.integers(1, 40))
    if draw(st.booleans()):
        config["interleave_moe_layer_step"] = draw(st.integers(1, 3))
    elif draw(st.booleans()):
        config["moe_layers"] = draw(st.lists(st.integers(0, L - 1), max_size=L, unique=True))
    if draw(st.booleans()):
        config["no_rope_layer_interval"] = draw(st.integers(1, 4))
    elif draw(st.booleans()):
        config["no_rope_layers"] = draw(st.lists(st.integers(0, 1), min_size=L, max_size=L))
    config["attention_chunk_size"] = draw(st.integers(2, 8))
    for key in ("use_qk_norm", "attn_temperature_tuning"):
        if draw(st.booleans()):
            config[key] = draw(st.booleans())
    return config


@st.composite
def llama4_vision_configs(draw) -> dict:
    """Llama 4's vision encoder, small: heads dividing the width, images of a few patches, the adapter's widths."""
    A_v = draw(st.integers(1, 3))
    p_v = draw(st.integers(1, 4))
    return {"model_type": "llama4_vision_model", "hidden_size": A_v * 2 * draw(st.integers(1, 3)),
            "num_attention_heads": A_v, "intermediate_size": draw(st.integers(1, 32)),
            "num_hidden_layers": draw(st.integers(0, 2)), "patch_size": p_v,
            "image_size": p_v * draw(st.integers(1, 4)), "num_channels": draw(st.integers(1, 3)),
            "vision_output_dim": draw(st.integers(1, 12)), "projector_input_dim": draw(st.integers(1, 12)),
            "projector_output_dim": draw(st.integers(1, 12))}


@st.composite
def llama4_configs(draw) -> dict:
    """Llama 4 with its vision encoder: a text_config of Llama 4 (text), a small vision_config."""
    text = draw(llama4_text_configs())
    del text["model_type"]
    return {"model_type": "llama4", "text_config": text, "vision_config": draw(llama4_vision_configs())}


# one strategy per model_type of helpers.families.FAMILIES
STRATEGIES = {
    "bert": bert_configs("bert"),
    "roberta": bert_configs("roberta"),
    "xlm-roberta": bert_configs("xlm-roberta"),
    "gpt2": gpt2_configs(),
    "llama": llama_configs(),
    "mistral": mistral_configs(),
    "mixtral": mixtral_configs(),
    "gemma": gemma_configs(),
    "gemma2": gemma2_configs(),
    "gpt_neox": gpt_neox_configs(),
    "qwen2": qwen2_configs("qwen2"),
    "qwen3": qwen2_configs("qwen3"),
    "qwen3_moe": qwen3_moe_configs(),
    "phi3": phi3_configs(),
    "opt": opt_configs(),
    "t5": t5_configs(),
    "distilbert": distilbert_configs(),
    "electra": electra_configs("electra"),
    "albert": electra_configs("albert"),
    "deepseek_v3": deepseek_v3_configs(),
    "olmo2": olmo2_configs(),
    "smollm3": smollm3_configs(),
    "gemma3_text": gemma3_text_configs(),
    "gpt_oss": gpt_oss_configs(),
    "qwen3_next": qwen3_next_configs(),
    "glm4_moe": glm4_moe_configs(),
    "deepseek_v2": deepseek_v2_configs(),
    "modernbert": modernbert_configs(),
    "gemma3": gemma3_configs(),
    "qwen2_5_vl": qwen2_5_vl_configs(),
    "llama4_text": llama4_text_configs(),
    "llama4": llama4_configs(),
}

any_config = st.one_of(*STRATEGIES.values())

# one tiny real config per model_type, small enough to run on the CPU (training state, KV cache)
TINY = {
    "bert": {"model_type": "bert", "vocab_size": 40, "hidden_size": 16, "num_attention_heads": 4,
             "num_hidden_layers": 2, "intermediate_size": 20, "max_position_embeddings": 8, "type_vocab_size": 2},
    "roberta": {"model_type": "roberta", "vocab_size": 40, "hidden_size": 16, "num_attention_heads": 4,
                "num_hidden_layers": 2, "intermediate_size": 20, "max_position_embeddings": 10, "type_vocab_size": 1},
    "xlm-roberta": {"model_type": "xlm-roberta", "vocab_size": 40, "hidden_size": 16, "num_attention_heads": 4,
                    "num_hidden_layers": 2, "intermediate_size": 20, "max_position_embeddings": 10, "type_vocab_size": 1},
    "gpt2": {"model_type": "gpt2", "vocab_size": 40, "n_embd": 12, "n_head": 3, "n_layer": 2, "n_positions": 8},
    "llama": {"model_type": "llama", "vocab_size": 40, "hidden_size": 16, "num_attention_heads": 4,
              "num_key_value_heads": 2, "num_hidden_layers": 2, "intermediate_size": 20, "attention_bias": True},
    "mistral": {"model_type": "mistral", "vocab_size": 40, "hidden_size": 16, "num_attention_heads": 4,
                "num_key_value_heads": 2, "num_hidden_layers": 2, "intermediate_size": 20, "sliding_window": 4},
    "mixtral": {"model_type": "mixtral", "vocab_size": 40, "hidden_size": 16, "num_attention_heads": 4,
                "num_key_value_heads": 2, "num_hidden_layers": 2, "intermediate_size": 20, "num_local_experts": 4,
                "num_experts_per_tok": 2},
    "gemma": {"model_type": "gemma", "vocab_size": 40, "hidden_size": 12, "num_attention_heads": 4,
              "num_key_value_heads": 2, "head_dim": 6, "num_hidden_layers": 2, "intermediate_size": 20},
    "gemma2": {"model_type": "gemma2", "vocab_size": 40, "hidden_size": 12, "num_attention_heads": 4,
               "num_key_value_heads": 2, "head_dim": 6, "num_hidden_layers": 3, "intermediate_size": 20,
               "sliding_window": 4},
    "gpt_neox": {"model_type": "gpt_neox", "vocab_size": 40, "hidden_size": 16, "num_attention_heads": 2,
                 "num_hidden_layers": 2, "intermediate_size": 20},
    # Qwen2: one global layer, then one windowed (max_window_layers = 1)
    "qwen2": {"model_type": "qwen2", "vocab_size": 40, "hidden_size": 16, "num_attention_heads": 4,
              "num_key_value_heads": 2, "num_hidden_layers": 2, "intermediate_size": 20, "use_sliding_window": True,
              "sliding_window": 4, "max_window_layers": 1},
    # Qwen3: head_dim 6 against H/A = 4
    "qwen3": {"model_type": "qwen3", "vocab_size": 40, "hidden_size": 16, "num_attention_heads": 4,
              "num_key_value_heads": 2, "head_dim": 6, "num_hidden_layers": 2, "intermediate_size": 20},
    # Qwen3-MoE: layer 0 dense (mlp_only_layers), layers 1 and 2 sparse, head_dim 6 against H/A = 4; I_e = 8
    # (transformers' default grouped_mm experts want rows of a multiple of 16 bytes on the CPU)
    "qwen3_moe": {"model_type": "qwen3_moe", "vocab_size": 40, "hidden_size": 16, "num_attention_heads": 4,
                  "num_key_value_heads": 2, "head_dim": 6, "num_hidden_layers": 3, "intermediate_size": 20,
                  "moe_intermediate_size": 8, "num_experts": 4, "num_experts_per_tok": 2, "mlp_only_layers": [0],
                  "norm_topk_prob": True},
    "phi3": {"model_type": "phi3", "vocab_size": 40, "pad_token_id": 39, "hidden_size": 16, "num_attention_heads": 4,
             "num_key_value_heads": 2, "num_hidden_layers": 2, "intermediate_size": 20, "sliding_window": 4},
    # OPT: d_e = 8 against H = 16 (project_in, project_out), post-LayerNorm as opt-350m
    "opt": {"model_type": "opt", "vocab_size": 40, "hidden_size": 16, "num_attention_heads": 4, "num_hidden_layers": 2,
            "ffn_dim": 20, "max_position_embeddings": 12, "word_embed_proj_dim": 8, "do_layer_norm_before": False},
    # T5: d_kv 6 against H/A = 4, three decoder layers against two encoder layers, gated feed-forward
    "t5": {"model_type": "t5", "vocab_size": 40, "d_model": 16, "d_kv": 6, "num_heads": 4, "d_ff": 20, "num_layers": 2,
           "num_decoder_layers": 3, "relative_attention_num_buckets": 8, "feed_forward_proj": "gated-gelu"},
    "distilbert": {"model_type": "distilbert", "vocab_size": 40, "dim": 16, "n_heads": 4, "n_layers": 2,
                   "hidden_dim": 20, "max_position_embeddings": 8},
    # ELECTRA-small's shape: d_e = 8 against H = 16 (embeddings_project)
    "electra": {"model_type": "electra", "vocab_size": 40, "embedding_size": 8, "hidden_size": 16,
                "num_attention_heads": 4, "num_hidden_layers": 2, "intermediate_size": 20, "max_position_embeddings": 8},
    # ALBERT: one shared layer run 3 times
    "albert": {"model_type": "albert", "vocab_size": 40, "embedding_size": 8, "hidden_size": 16, "num_attention_heads": 4,
               "num_hidden_layers": 3, "intermediate_size": 20, "max_position_embeddings": 8},
    # DeepSeek-V3: layer 0 dense, layers 1 and 2 sparse (8 experts in 4 groups, 2 groups kept, 2 experts per token,
    # 2 shared); a query bottleneck r_q = 12, a latent r_kv = 6, d_k = 4 + 2 against d_v = 3; I_e = 8 (transformers'
    # default grouped_mm experts want rows of a multiple of 16 bytes on the CPU)
    "deepseek_v3": {"model_type": "deepseek_v3", "vocab_size": 40, "hidden_size": 16, "num_attention_heads": 4,
                    "num_key_value_heads": 4, "num_hidden_layers": 3, "intermediate_size": 20, "moe_intermediate_size": 8,
                    "n_routed_experts": 8, "num_experts_per_tok": 2, "n_shared_experts": 2, "first_k_dense_replace": 1,
                    "n_group": 4, "topk_group": 2, "q_lora_rank": 12, "kv_lora_rank": 6, "qk_nope_head_dim": 4,
                    "qk_rope_head_dim": 2, "v_head_dim": 3},
    # OLMo 2: QK-norm over the projections, norms after the sub-layers
    "olmo2": {"model_type": "olmo2", "vocab_size": 40, "hidden_size": 16, "num_attention_heads": 4,
              "num_key_value_heads": 2, "num_hidden_layers": 2, "intermediate_size": 20},
    # SmolLM3: layer 3 without rotary positions (NoPE), and windowed (use_sliding_window)
    "smollm3": {"model_type": "smollm3", "vocab_size": 40, "pad_token_id": 0, "hidden_size": 16,
                "num_attention_heads": 4, "num_key_value_heads": 2, "num_hidden_layers": 4, "intermediate_size": 20,
                "use_sliding_window": True, "sliding_window": 4},
    # Gemma 3: layers 0 and 1 local (window 4), layer 2 global (sliding_window_pattern 3); head_dim 6 against H/A = 3
    "gemma3_text": {"model_type": "gemma3_text", "vocab_size": 40, "hidden_size": 12, "num_attention_heads": 4,
                    "num_key_value_heads": 2, "head_dim": 6, "num_hidden_layers": 3, "intermediate_size": 20,
                    "sliding_window": 4, "sliding_window_pattern": 3},
    # GPT-OSS: layers 0 and 2 windowed (4 tokens), layer 1 full (its default alternation); biased attention, sinks,
    # 4 biased experts, 2 per token; head_dim 6 against H/A = 4
    "gpt_oss": {"model_type": "gpt_oss", "vocab_size": 40, "hidden_size": 16, "num_attention_heads": 4,
                "num_key_value_heads": 2, "head_dim": 6, "num_hidden_layers": 3, "intermediate_size": 8,
                "num_local_experts": 4, "num_experts_per_tok": 2, "sliding_window": 4},
    # Qwen3-Next: layers 0-2 Gated DeltaNet (2 key heads of 6, 4 value heads of 5, a convolution of 3 taps), layer 3
    # gated full attention (head_dim 8, 2 of it rotary); layer 0 dense, layers 1-3 sparse (4 experts, 2 per token, a
    # shared expert of 12); I_e = 8 (transformers' default grouped_mm experts want rows of a multiple of 16 bytes)
    "qwen3_next": {"model_type": "qwen3_next", "vocab_size": 40, "hidden_size": 16, "num_attention_heads": 4,
                   "num_key_value_heads": 2, "head_dim": 8, "num_hidden_layers": 4, "intermediate_size": 20,
                   "moe_intermediate_size": 8, "shared_expert_intermediate_size": 12, "num_experts": 4,
                   "num_experts_per_tok": 2, "mlp_only_layers": [0], "linear_num_key_heads": 2,
                   "linear_num_value_heads": 4, "linear_key_head_dim": 6, "linear_value_head_dim": 5,
                   "linear_conv_kernel_dim": 3},
    # GLM-4.5: layer 0 dense, layers 1 and 2 sparse (8 experts in 2 groups, 1 kept, 2 per token, 1 shared); q/k/v
    # biases and QK-norm, head_dim 6 against H/A = 4, half of it rotary; I_e = 8 (the CPU's grouped_mm wants rows of a
    # multiple of 16 bytes)
    "glm4_moe": {"model_type": "glm4_moe", "vocab_size": 40, "hidden_size": 16, "num_attention_heads": 4,
                 "num_key_value_heads": 2, "head_dim": 6, "num_hidden_layers": 3, "intermediate_size": 20,
                 "moe_intermediate_size": 8, "n_routed_experts": 8, "num_experts_per_tok": 2, "n_shared_experts": 1,
                 "first_k_dense_replace": 1, "n_group": 2, "topk_group": 1, "attention_bias": True,
                 "use_qk_norm": True},
    # DeepSeek-V2-Lite's plan: no query compression (q_lora_rank null), layer 0 dense, layers 1 and 2 sparse (8
    # experts in 4 groups, 2 kept, 2 per token, 2 shared), a latent r_kv = 6, d_k = 4 + 2 against d_v = 3
    "deepseek_v2": {"model_type": "deepseek_v2", "vocab_size": 40, "hidden_size": 16, "num_attention_heads": 4,
                    "num_hidden_layers": 3, "intermediate_size": 20, "moe_intermediate_size": 8,
                    "n_routed_experts": 8, "num_experts_per_tok": 2, "n_shared_experts": 2, "first_k_dense_replace": 1,
                    "n_group": 4, "topk_group": 2, "topk_method": "group_limited_greedy", "q_lora_rank": None,
                    "kv_lora_rank": 6, "qk_nope_head_dim": 4, "qk_rope_head_dim": 2, "v_head_dim": 3},
    # ModernBERT: layer 0 global, layers 1 and 2 local (|i − j| ≤ 2: local_attention 4), no biases (its defaults)
    "modernbert": {"model_type": "modernbert", "vocab_size": 40, "pad_token_id": 0, "hidden_size": 16,
                   "num_attention_heads": 4, "num_hidden_layers": 3, "intermediate_size": 20, "local_attention": 4},
    # Gemma 3 with its tower: the text model above; a SigLIP tower of 2 layers on a 28×28 image of 7×7 patches (16
    # positions) pooled to 4 tokens, without the pooling head (as published)
    "gemma3": {"model_type": "gemma3",
               "text_config": {"vocab_size": 40, "hidden_size": 12, "num_attention_heads": 4, "num_key_value_heads": 2,
                               "head_dim": 6, "num_hidden_layers": 3, "intermediate_size": 20, "sliding_window": 4,
                               "sliding_window_pattern": 3},
               "vision_config": {"hidden_size": 8, "intermediate_size": 12, "num_hidden_layers": 2,
                                 "num_attention_heads": 2, "image_size": 28, "patch_size": 7, "vision_use_head": False},
               "mm_tokens_per_image": 4},
    # Qwen2.5-VL, flat as published: layer 1 windowed (4 tokens); d_k = 4 in M-RoPE sections 1 + 0 + 1; a vision
    # encoder of 2 blocks, patches 2 × 4 × 4, merging 2 × 2 of them into the text width
    "qwen2_5_vl": {"model_type": "qwen2_5_vl", "vocab_size": 40, "hidden_size": 16, "num_attention_heads": 4,
                   "num_key_value_heads": 2, "num_hidden_layers": 2, "intermediate_size": 20,
                   "use_sliding_window": True, "sliding_window": 4, "max_window_layers": 1,
                   "rope_scaling": {"type": "mrope", "mrope_section": [1, 0, 1]},
                   "vision_config": {"depth": 2, "hidden_size": 8, "intermediate_size": 12, "num_heads": 2,
                                     "patch_size": 4, "temporal_patch_size": 2, "spatial_merge_size": 2,
                                     "out_hidden_size": 16, "window_size": 16, "fullatt_block_indexes": [1]}},
    # Llama 4 (text): layers 0-2 rotary and chunked (4 tokens), layer 3 NoPE and full; layers 1 and 3 sparse (Maverick's
    # alternation: 4 experts of width 8, 1 per token, a shared expert), layers 0 and 2 dense of width 12
    "llama4_text": {"model_type": "llama4_text", "vocab_size": 40, "hidden_size": 16, "num_attention_heads": 4,
                    "num_key_value_heads": 2, "head_dim": 6, "num_hidden_layers": 4, "intermediate_size": 8,
                    "intermediate_size_mlp": 12, "num_local_experts": 4, "num_experts_per_tok": 1,
                    "interleave_moe_layer_step": 2, "attention_chunk_size": 4},
    # Llama 4 with its vision encoder: the tiny text model above; 28 × 28 images of 14 × 14 patches (2 × 2, one token
    # after the pixel shuffle), one encoder layer of 2 heads, the adapter and projector 8 wide
    "llama4": {"model_type": "llama4", "text_config": {"vocab_size": 40, "hidden_size": 16, "num_attention_heads": 4,
                                                       "num_key_value_heads": 2, "head_dim": 6, "num_hidden_layers": 4,
                                                       "intermediate_size": 8, "intermediate_size_mlp": 12,
                                                       "num_local_experts": 4, "num_experts_per_tok": 1,
                                                       "interleave_moe_layer_step": 2, "attention_chunk_size": 4},
               "vision_config": {"hidden_size": 16, "num_attention_heads": 2, "intermediate_size": 64,
                                 "num_hidden_layers": 1, "image_size": 28, "patch_size": 14, "vision_output_dim": 8,
                                 "projector_input_dim": 8, "projector_output_dim": 8}},
}


# --- the whole space transformers accepts (tests/test_fuzz.py) ----------------------------------------------
# Raw configs as users write them: aliases, absent and null keys, head_dim not H/A, layer_types, keys that change
# no parameter, depths 0 and 1, group counts, heads that do not divide the width -- configs transformers refuses
# included (the engine must then refuse them too). One entry per model_type; families replace theirs below.
WIDE: dict[str, st.SearchStrategy[dict]] = {**STRATEGIES}


@st.composite
def _widened(draw, config: dict, aliases: dict[str, str], depth: str | tuple[str, ...], noise: dict) -> dict:
    """``config`` as users write it: each key kept, left out (transformers' default), null, or under its alias;
    depths 0 to 3; plus keys from ``noise`` (key: strategy of its value) that change no parameter, or should not."""
    config = dict(config)
    for key in depth if isinstance(depth, tuple) else (depth,):
        if key in config:
            config[key] = draw(st.integers(0, 3))
    for key in [k for k in config if k != "model_type"]:
        fate = draw(st.sampled_from(["keep"] * 24 + ["absent"] * 2 + ["null"] + ["alias"] * 3))
        if fate == "absent":
            del config[key]
        elif fate == "null":
            config[key] = None
        elif fate == "alias" and key in aliases:
            config[aliases[key]] = config.pop(key)
            if draw(st.integers(0, 5)) == 0:  # both names, the same value or another one
                config[key] = draw(st.sampled_from([config[aliases[key]], draw(st.integers(1, 4))]))
    for key, values in noise.items():
        if draw(st.integers(0, 3)) == 0:
            config[key] = draw(values)
    if "layer_types" in noise and draw(st.booleans()):  # one type per layer (of the depth given, or a guess)
        layers = next((config[k] for k in (depth if isinstance(depth, tuple) else (depth,)) if config.get(k) is not None), 2)
        config["layer_types"] = draw(st.lists(st.sampled_from(["full_attention", "sliding_attention", "chunked_attention"]),
                                              min_size=layers, max_size=layers))
    return config


# keys many configs carry that change no parameter: the window of a cache, the dtype, the generation switches
_WINDOW = st.one_of(st.none(), st.integers(1, 8))
COMMON_NOISE = {
    "use_cache": st.booleans(),
    "sliding_window": _WINDOW,
    "attention_chunk_size": _WINDOW,
    "torch_dtype": st.sampled_from(["float32", "bfloat16", None]),
    "layer_norm_eps": st.sampled_from([1e-5, 1e-12]),
    "initializer_range": st.sampled_from([0.02, 0.5]),
    "bos_token_id": st.one_of(st.none(), st.integers(0, 3)),
    "eos_token_id": st.one_of(st.none(), st.integers(0, 3)),
}


@dataclass(frozen=True)
class Wide:
    """One encoder-era family's whole space, as a row of :data:`WIDE_ENCODERS`: its tidy configs widened by
    :func:`_widened` (keys absent, null or under an alias; depths 0 to 3; ``noise``), after an optional head count that
    need not divide the width (1 draw in ``head_odds + 1``, under the first of ``heads`` the config uses)."""

    tidy: Callable[[], st.SearchStrategy[dict]]
    depth: str | tuple[str, ...]
    noise: dict[str, st.SearchStrategy]
    aliases: dict[str, str] = field(default_factory=dict)
    heads: tuple[str, ...] = ("num_attention_heads",)
    head_odds: int | None = 4
    extra: Callable[[Any, dict], None] | None = None  # family-specific draws before widening
    after: Callable[[dict], dict] | None = None  # family-specific clean-up after it


@st.composite
def wide_configs(draw, row: Wide) -> dict:
    """A config of ``row``'s family from the whole space transformers accepts."""
    config = draw(row.tidy())
    if row.head_odds is not None and draw(st.integers(0, row.head_odds)) == 0:
        config[next((k for k in row.heads if k in config), row.heads[-1])] = draw(st.integers(1, 5))
    if row.extra:
        row.extra(draw, config)
    config = draw(_widened(config, row.aliases, row.depth, row.noise))
    return row.after(config) if row.after else config


def _albert_groups(draw, config: dict) -> None:
    """ALBERT's groups of shared layers and layers per group (0 included)."""
    if config["model_type"] == "albert":
        config["num_hidden_groups"] = draw(st.integers(1, 3))
        config["inner_group_num"] = draw(st.integers(0, 3))


def _neox_positions(draw, config: dict) -> None:
    config["max_position_embeddings"] = draw(st.integers(1, 40))


def _t5_buckets(config: dict) -> dict:
    """A null bucket count is left out (transformers' default, 32)."""
    if config.get("relative_attention_num_buckets", 32) is None:
        del config["relative_attention_num_buckets"]
    return config


_PAD = st.one_of(st.none(), st.integers(0, 4))
_BERT_NOISE = {**COMMON_NOISE, "pad_token_id": _PAD, "is_decoder": st.booleans(),
               "position_embedding_type": st.sampled_from(["absolute", None]), "embedding_size": st.integers(1, 8),
               "head_dim": st.integers(1, 8), "add_cross_attention": st.booleans()}
_ELECTRA_NOISE = {**COMMON_NOISE, "pad_token_id": _PAD, "position_embedding_type": st.sampled_from(["absolute", None]),
                  "is_decoder": st.booleans(), "add_cross_attention": st.booleans()}
# BERT, RoBERTa, XLM-RoBERTa: heads that may not divide H, a padding index anywhere. GPT-2: its four aliases, n_inner
# null or absent (4H). ELECTRA / ALBERT: heads that need not divide H (transformers then builds A·(H // A)-wide
# projections), ALBERT's groups. T5: its four aliases (num_hidden_layers before or without num_layers), null decoder
# depth, cache-only keys, is_gated_act (the file's flag overrides feed_forward_proj's).
WIDE_ENCODERS: dict[str, Wide] = {
    **{t: Wide(functools.partial(bert_configs, t), "num_hidden_layers", _BERT_NOISE)
       for t in ("bert", "roberta", "xlm-roberta")},
    "gpt2": Wide(gpt2_configs, ("n_layer", "num_hidden_layers"),
                 {**COMMON_NOISE, "scale_attn_by_inverse_layer_idx": st.booleans(),
                  "reorder_and_upcast_attn": st.booleans(), "n_ctx": st.integers(1, 40),
                  "summary_type": st.sampled_from(["cls_index", "last"]), "add_cross_attention": st.booleans(),
                  "layer_types": st.none()},
                 aliases={"n_embd": "hidden_size", "n_layer": "num_hidden_layers", "n_head": "num_attention_heads",
                          "n_positions": "max_position_embeddings"},
                 heads=("n_head", "num_attention_heads")),
    "distilbert": Wide(distilbert_configs, ("n_layers", "num_hidden_layers"),
                       {**COMMON_NOISE, "sinusoidal_pos_embds": st.booleans(), "pad_token_id": _PAD},
                       aliases={"dim": "hidden_size", "n_heads": "num_attention_heads",
                                "n_layers": "num_hidden_layers"},
                       heads=("n_heads", "num_attention_heads")),
    **{t: Wide(functools.partial(electra_configs, t), "num_hidden_layers", _ELECTRA_NOISE, head_odds=3,
               extra=_albert_groups) for t in ("electra", "albert")},
    "t5": Wide(t5_configs, ("num_layers", "num_decoder_layers"),
               {**COMMON_NOISE, "relative_attention_max_distance": st.integers(1, 20), "layer_types": st.none(),
                "is_decoder": st.booleans(), "is_encoder_decoder": st.booleans(),
                "tie_word_embeddings": st.one_of(st.booleans(), st.none()),
                "is_gated_act": st.one_of(st.booleans(), st.none())},
               aliases={"d_model": "hidden_size", "num_heads": "num_attention_heads", "num_layers": "num_hidden_layers",
                        "d_kv": "head_dim"},
               head_odds=None, after=_t5_buckets),
    "opt": Wide(opt_configs, "num_hidden_layers",
                {**COMMON_NOISE, "_remove_final_layer_norm": st.booleans(), "pad_token_id": _PAD,
                 "layer_types": st.none()}),
    "gpt_neox": Wide(gpt_neox_configs, "num_hidden_layers",
                     {**COMMON_NOISE, "rotary_pct": st.sampled_from([0.25, 1.0]),
                      "partial_rotary_factor": st.sampled_from([0.25, 1.0]), "rotary_emb_base": st.integers(100, 10000),
                      "layer_types": st.none()},
                     extra=_neox_positions),
}
WIDE.update({name: wide_configs(row) for name, row in WIDE_ENCODERS.items()})


# --- the decoders' whole space (llama, mistral, mixtral, qwen2, qwen3, qwen3_moe, phi3, gemma, gemma2, deepseek_v3) --
# What users write: a key left out, written null or given a value; key/value heads that need not divide the query heads
# (transformers builds such a model and fails only in its forward pass); head_dim null or free of H/A; heads that need
# not divide the width; depths 0 to 3; windows, chunks and per-layer attention types (they change the cache, not a
# tensor); aliases of transformers' attribute_map; keys that change nothing.

# the families whose head_dim may be 0: Mistral reads it as H // A, Gemma 2 builds its attention 0 wide (its rotary
# embedding H // A); in the others transformers refuses it (the engine must then refuse it too)
ZERO_HEAD = ("mistral", "gemma2", "llama4_text")
LAYER_TYPES = ("full_attention", "sliding_attention", "chunked_attention", "attention", "moe", "window_attention")


def _put(draw, config: dict, key: str, values: st.SearchStrategy, null: bool = True) -> None:
    """Leave ``key`` out, write it null (where ``null``), or give it a drawn value."""
    choice = draw(st.sampled_from(("absent", "null", "value") if null else ("absent", "value")))
    if choice == "null":
        config[key] = None
    elif choice == "value":
        config[key] = draw(values)


@st.composite
def wide_decoder_configs(draw, model_type: str) -> dict:
    """The keys every LLaMA-like decoder shares, drawn wide (see the comment above)."""
    A = draw(st.integers(1, 4))
    L = draw(st.integers(0, 3))
    config = {"model_type": model_type, "vocab_size": draw(st.integers(1, 48)), "hidden_size": draw(st.integers(1, 24)),
              "num_attention_heads": A, "num_hidden_layers": L, "intermediate_size": draw(st.integers(1, 32))}
    if draw(st.booleans()):  # a tidy width half the time: A·d with d even (rotary pairs)
        config["hidden_size"] = A * 2 * draw(st.integers(1, 4))
    divisors = [d for d in range(1, A + 1) if A % d == 0]
    _put(draw, config, "num_key_value_heads", st.one_of(st.sampled_from(divisors), st.integers(1, 4)))
    _put(draw, config, "head_dim", st.one_of(st.integers(0 if model_type in ZERO_HEAD else 1, 8),
                                             st.sampled_from([2, 4, 6])))
    _put(draw, config, "tie_word_embeddings", st.booleans())
    # keys that change no tensor: the window, the chunk, per-layer attention types (the cache follows them)
    _put(draw, config, "sliding_window", st.integers(1, 8))
    if draw(st.integers(0, 3)) == 0:
        _put(draw, config, "attention_chunk_size", st.integers(1, 8))
    if draw(st.integers(0, 2)) == 0:
        length = draw(st.sampled_from([L, L, L, L + 1]))
        weights = st.sampled_from(LAYER_TYPES[:3] * 4 + LAYER_TYPES[3:])
        config["layer_types"] = draw(st.lists(weights, min_size=length, max_size=length))
    for key, values in (("use_cache", st.booleans()), ("rope_theta", st.sampled_from([10000.0, 1e6])),
                        ("max_position_embeddings", st.integers(1, 64)), ("rms_norm_eps", st.just(1e-5)),
                        ("attention_dropout", st.just(0.0)), ("bos_token_id", st.integers(0, 3))):
        if draw(st.integers(0, 3)) == 0:
            config[key] = draw(values)
    return config


@st.composite
def wide_llama_configs(draw, model_type: str = "llama") -> dict:
    """LLaMA (and Gemma): the shared keys, and the bias switches."""
    config = draw(wide_decoder_configs(model_type))
    _put(draw, config, "attention_bias", st.booleans())
    if model_type == "llama":
        _put(draw, config, "mlp_bias", st.booleans())
    return config


@st.composite
def wide_gemma2_configs(draw) -> dict:
    config = draw(wide_llama_configs("gemma2"))
    for key, values in (("query_pre_attn_scalar", st.integers(1, 8)), ("final_logit_softcapping", st.none()),
                        ("attn_logit_softcapping", st.floats(1, 50))):
        if draw(st.integers(0, 3)) == 0:
            config[key] = draw(values)
    return config


@st.composite
def wide_qwen2_configs(draw, model_type: str = "qwen2") -> dict:
    """Qwen2/Qwen3: the shared keys, use_sliding_window, max_window_layers (and Qwen3's attention_bias)."""
    config = draw(wide_decoder_configs(model_type))
    _put(draw, config, "use_sliding_window", st.booleans(), null=False)
    _put(draw, config, "max_window_layers", st.integers(0, 4), null=False)
    if model_type != "qwen2":
        _put(draw, config, "attention_bias", st.booleans())
    return config


@st.composite
def wide_mixtral_configs(draw) -> dict:
    """Mixtral: E experts (0 included; or its alias num_experts), k per token (0 included; more than E: it builds,
    cannot run)."""
    config = draw(wide_decoder_configs("mixtral"))
    E = draw(st.integers(0, 4))
    config[draw(st.sampled_from(["num_local_experts", "num_experts"]))] = E
    config["num_experts_per_tok"] = draw(st.sampled_from([0, 1, E, E + 1]))
    return config


@st.composite
def wide_qwen3_moe_configs(draw) -> dict:
    """Qwen3-MoE: Qwen3's keys, E experts (0 or less: all dense; alias num_local_experts), k (0 included), experts 0
    wide, the sparse step, dense layers."""
    config = draw(wide_qwen2_configs("qwen3_moe"))
    E = draw(st.integers(-1, 4))
    config[draw(st.sampled_from(["num_experts", "num_local_experts"]))] = E
    config["num_experts_per_tok"] = draw(st.sampled_from([0, 1, max(E, 1), E + 1]))
    config["moe_intermediate_size"] = draw(st.integers(0, 12))
    _put(draw, config, "decoder_sparse_step", st.integers(1, 3), null=False)
    L = config["num_hidden_layers"]
    _put(draw, config, "mlp_only_layers", st.lists(st.integers(0, max(L, 1)), max_size=3, unique=True))
    _put(draw, config, "norm_topk_prob", st.booleans(), null=False)
    return config


@st.composite
def wide_phi3_configs(draw) -> dict:
    """Phi-3: the shared keys; a padding index inside the table (its default, 32000, lies outside these tables)."""
    config = draw(wide_decoder_configs("phi3"))
    config["pad_token_id"] = draw(st.one_of(st.none(), st.integers(0, config["vocab_size"] - 1),
                                            st.just(config["vocab_size"])))
    return config


@st.composite
def wide_deepseek_v3_configs(draw) -> dict:
    """DeepSeek-V3: every size, the router's groups free (configs its forward cannot route included), A_kv ≠ A,
    first_k_dense_replace beyond the depth, moe_layer_freq, aliases, the window keys (they change no tensor)."""
    A = draw(st.integers(1, 4))
    L = draw(st.integers(0, 3))
    g = draw(st.integers(1, 3))
    E = draw(st.sampled_from([g * draw(st.integers(1, 3)), draw(st.integers(1, 6))]))
    k_g = draw(st.integers(1, g + 1))
    config = {
        "model_type": "deepseek_v3",
        "vocab_size": draw(st.integers(1, 48)),
        "hidden_size": draw(st.integers(1, 24)),
        "num_attention_heads": A,
        "num_hidden_layers": L,
        "kv_lora_rank": draw(st.integers(0, 8)),  # 0: the latent 0 wide
        "qk_nope_head_dim": draw(st.integers(0, 6)),  # 0: every dimension rotary
        "qk_rope_head_dim": 2 * draw(st.integers(1, 3)),
        "v_head_dim": draw(st.integers(1, 6)),
        "intermediate_size": draw(st.integers(1, 32)),
        "moe_intermediate_size": draw(st.integers(1, 12)),
        "first_k_dense_replace": draw(st.integers(0, L + 1)),
        "n_group": g,
        "topk_group": k_g,
        "num_experts_per_tok": draw(st.integers(0, E + 1)),  # 0: no routed expert runs
        "n_shared_experts": draw(st.integers(0, 2)),
    }
    config[draw(st.sampled_from(["n_routed_experts", "num_local_experts"]))] = E
    _put(draw, config, "num_key_value_heads", st.integers(1, 4))
    _put(draw, config, "q_lora_rank", st.integers(0, 12))  # 0: the bottleneck 0 wide
    for key in ("tie_word_embeddings", "attention_bias", "norm_topk_prob"):
        _put(draw, config, key, st.booleans(), null=False)
    for key, values in (("moe_layer_freq", st.integers(1, 3)), ("sliding_window", st.integers(2, 8)),
                        ("num_nextn_predict_layers", st.integers(0, 2)), ("routed_scaling_factor", st.just(1.0)),
                        ("max_position_embeddings", st.integers(1, 64))):
        if draw(st.integers(0, 3)) == 0:
            config[key] = draw(values)
    return config


@st.composite
def wide_olmo2_configs(draw) -> dict:
    """OLMo 2: the shared keys, attention_bias, a padding index anywhere (1 by default: a table of 1 row refuses it)."""
    config = draw(wide_decoder_configs("olmo2"))
    _put(draw, config, "attention_bias", st.booleans(), null=False)
    _put(draw, config, "pad_token_id", st.integers(0, config["vocab_size"]))
    return config


@st.composite
def wide_smollm3_configs(draw) -> dict:
    """SmolLM3: the shared keys, the bias switches, use_sliding_window, the NoPE interval (0 included: transformers
    divides by it) or list (one layer short included), a padding index anywhere (128004 by default: outside)."""
    config = draw(wide_decoder_configs("smollm3"))
    for key in ("attention_bias", "mlp_bias", "use_sliding_window"):
        _put(draw, config, key, st.booleans(), null=False)
    _put(draw, config, "pad_token_id", st.integers(0, config["vocab_size"]))
    _put(draw, config, "no_rope_layer_interval", st.integers(0, 4), null=False)
    L = config["num_hidden_layers"]
    _put(draw, config, "no_rope_layers", st.lists(st.integers(0, 1), min_size=max(L - 1, 0), max_size=L + 1))
    return config


@st.composite
def wide_gemma3_text_configs(draw) -> dict:
    """Gemma 3 (text): Gemma 2's keys, the local:global pattern (0 included: transformers divides by it)."""
    config = draw(wide_llama_configs("gemma3_text"))
    for key, values in (("query_pre_attn_scalar", st.integers(1, 8)), ("final_logit_softcapping", st.none()),
                        ("attn_logit_softcapping", st.none()), ("sliding_window_pattern", st.integers(0, 4)),
                        ("rope_local_base_freq", st.just(10000.0))):
        if draw(st.integers(0, 2)) == 0:
            config[key] = draw(values)
    return config


@st.composite
def wide_gpt_oss_configs(draw) -> dict:
    """GPT-OSS: the shared keys, attention_bias, E experts (0 included; or its alias num_experts), k per token (0
    included; more than E: it builds, cannot run), the MXFP4 quantization_config (it changes no parameter count)."""
    config = draw(wide_decoder_configs("gpt_oss"))
    _put(draw, config, "attention_bias", st.booleans(), null=False)
    E = draw(st.integers(0, 4))
    config[draw(st.sampled_from(["num_local_experts", "num_experts"]))] = E
    config["num_experts_per_tok"] = draw(st.sampled_from([0, 1, E, E + 1]))
    if draw(st.integers(0, 3)) == 0:
        config["quantization_config"] = {"quant_method": "mxfp4"}
    return config


@st.composite
def wide_qwen3_next_configs(draw) -> dict:
    """Qwen3-Next: the shared keys (head_dim odd or not, key/value heads that need not divide), layer types by
    full_attention_interval (0 and null included: transformers divides by it) or listed (legacy names, and types that
    build no token mixer and cannot run), value heads that need not be a multiple of the key heads, the rotary fraction,
    E experts (0 or less: all dense), k (more than E: it builds, cannot run), the shared expert (0 wide included)."""
    config = draw(wide_decoder_configs("qwen3_next"))
    config.pop("layer_types", None)
    for key in ("num_key_value_heads", "head_dim", "tie_word_embeddings"):  # null refused: 1 draw in 4 keeps it
        if key in config and config[key] is None and draw(st.integers(0, 3)):
            del config[key]
    L = config["num_hidden_layers"]
    _put(draw, config, "attention_bias", st.booleans(), null=False)
    E = draw(st.integers(-1, 4))
    config["num_experts"] = E
    config["num_experts_per_tok"] = draw(st.sampled_from([0, 1, max(E, 1), E + 1]))
    config["moe_intermediate_size"] = draw(st.integers(0, 8))
    _put(draw, config, "shared_expert_intermediate_size", st.integers(0, 8), null=False)
    _put(draw, config, "decoder_sparse_step", st.integers(1, 3), null=False)
    _put(draw, config, "mlp_only_layers", st.lists(st.integers(0, max(L, 1)), max_size=3, unique=True))
    G_k = draw(st.integers(1, 3))
    config["linear_num_key_heads"] = G_k
    config["linear_num_value_heads"] = draw(st.sampled_from([G_k, 2 * G_k, draw(st.integers(1, 4))]))
    for key in ("linear_key_head_dim", "linear_value_head_dim", "linear_conv_kernel_dim"):
        _put(draw, config, key, st.integers(1, 4), null=False)
    if draw(st.integers(0, 2)) == 0:
        config["partial_rotary_factor"] = draw(st.sampled_from([0.25, 0.5, 1.0, 2.0, None]))  # null: 1.0
    choice = draw(st.sampled_from(["interval"] * 3 + ["types"] * 2 + ["neither"]))
    if choice == "interval":  # mostly one that puts a full layer among the first 3 (a cache needs one)
        config["full_attention_interval"] = draw(st.one_of(st.integers(1, 3), st.integers(1, 3), st.integers(-2, 4),
                                                           st.none(), st.just(2.0)))
    elif choice == "types":
        length = draw(st.sampled_from([L, L, L, L + 1]))
        kinds = st.sampled_from(["linear_attention"] * 4 + ["full_attention"] * 4 + ["mamba", "attention",
                                                                                     "sliding_attention", "moe"])
        config["layer_types"] = draw(st.lists(kinds, min_size=length, max_size=length))
    return config


@st.composite
def wide_glm4_moe_configs(draw) -> dict:
    """GLM-4.5: the shared keys (head_dim null, 0, odd or free of H/A; heads not dividing H), q/k/v biases, QK-norm,
    a rotary share (null: the whole head; 1.0 wholly rotary, odd heads included), the router's groups free (configs
    its forward cannot route included), L_f beyond the depth, aliases, the MTP layers (never built)."""
    config = draw(wide_decoder_configs("glm4_moe"))
    L = config["num_hidden_layers"]
    g = draw(st.integers(1, 3))
    E = draw(st.sampled_from([g * draw(st.integers(1, 3)), draw(st.integers(1, 6))]))
    config[draw(st.sampled_from(["n_routed_experts", "num_local_experts"]))] = E
    config.update({"moe_intermediate_size": draw(st.integers(1, 12)), "first_k_dense_replace": draw(st.integers(0, L + 1)),
                   "n_group": g, "topk_group": draw(st.integers(1, g + 1)),
                   "num_experts_per_tok": draw(st.integers(0, E + 1)), "n_shared_experts": draw(st.integers(0, 2))})
    for key in ("attention_bias", "use_qk_norm", "norm_topk_prob"):
        _put(draw, config, key, st.booleans(), null=False)
    _put(draw, config, "partial_rotary_factor", st.sampled_from([0.5, 0.25, 1.0]))
    for key, values in (("num_nextn_predict_layers", st.integers(0, 2)), ("routed_scaling_factor", st.just(2.5))):
        if draw(st.integers(0, 3)) == 0:
            config[key] = draw(values)
    return config


@st.composite
def wide_deepseek_v2_configs(draw) -> dict:
    """DeepSeek-V2: DeepSeek-V3's whole space (heads that need not divide H: DeepseekV2Config refuses them), d_rope and
    d_v of 0, mlp_bias, either router or an unknown method, k, n_group and topk_group null or absent."""
    config = {**draw(wide_deepseek_v3_configs()), "model_type": "deepseek_v2"}
    E = config.pop("num_local_experts", None)
    if E is not None:
        config[draw(st.sampled_from(["n_routed_experts", "num_experts"]))] = E
    if draw(st.integers(0, 3)) == 0:
        config["qk_rope_head_dim"] = draw(st.sampled_from([0, 1, 3]))
    if draw(st.integers(0, 4)) == 0:
        config["v_head_dim"] = 0
    _put(draw, config, "mlp_bias", st.booleans(), null=False)
    _put(draw, config, "topk_method", st.sampled_from(["greedy", "group_limited_greedy", "noaux_tc"]))
    for key in ("num_experts_per_tok", "n_group", "topk_group"):
        if draw(st.integers(0, 4)) == 0:
            if draw(st.booleans()):
                config[key] = None
            else:
                config.pop(key)  # absent: its default, null
    return config


@st.composite
def wide_modernbert_configs(draw) -> dict:
    """ModernBERT: heads that may not divide H or be odd (rotary pairs), head_dim (read by its rotary embedding
    only), depth 0 (refused by its config), a padding index anywhere, the window as sliding_window (half of it),
    the global layers' interval (0 included: transformers divides by it), null switches, classifier_pooling."""
    config = draw(modernbert_configs())
    config.pop("layer_types", None)
    if draw(st.integers(0, 5)) == 0:
        config["num_attention_heads"] = draw(st.integers(1, 5))
    if draw(st.integers(0, 7)) == 0:
        config["hidden_size"] = draw(st.integers(0, 24))
    noise = {**COMMON_NOISE, "pad_token_id": st.one_of(st.none(), st.integers(-2, 4)),
             "sliding_window": st.sampled_from([None, *range(9)]),
             "global_attn_every_n_layers": st.sampled_from([None, -1, 0, 1, 2, 3]),
             "head_dim": st.sampled_from([None, -1, *range(9)]),
             "classifier_pooling": st.sampled_from(["cls", "mean", "max"]), "global_rope_theta": st.just(1e4)}
    config["num_hidden_layers"] = L = draw(st.sampled_from([1, 2, 3, 4, 0]))
    config = draw(_widened(config, {}, (), noise))
    if draw(st.integers(0, 3)) == 0:  # full and sliding layers; now and then another type, or one layer too many
        kinds = st.sampled_from(["full_attention", "sliding_attention"] * 4 + ["chunked_attention", "attention"])
        length = draw(st.sampled_from([L, L, L, L + 1]))
        config["layer_types"] = draw(st.one_of(st.none(), st.lists(kinds, min_size=length, max_size=length)))
    return config


def _sub(draw, config: dict, key: str, sub: dict) -> None:
    """A composite's sub-config: absent, null (every default), or given."""
    choice = draw(st.sampled_from(("absent", "null", "value", "value", "value")))
    if choice == "null":
        config[key] = None
    elif choice == "value":
        config[key] = sub


@st.composite
def wide_gemma3_configs(draw) -> dict:
    """Gemma 3 with its tower: a wide Gemma 3 text config; a SigLIP tower whose heads may not divide its width, of
    depth 0, with a patch larger than the image; 0 pooled tokens (transformers divides by √0);
    the head's tie absent, null or given. A sub-config left out or null is every default (a 12-layer tower)."""
    config = {"model_type": "gemma3"}
    _sub(draw, config, "text_config", draw(wide_gemma3_text_configs()))
    A = draw(st.integers(1, 3))
    width = draw(st.one_of(st.integers(1, 8), st.integers(1, 3).map(lambda d: A * d)))  # heads dividing it or not
    vision = {"hidden_size": width, "num_attention_heads": A, "intermediate_size": draw(st.integers(1, 8)),
              "num_hidden_layers": draw(st.integers(0, 2)), "patch_size": draw(st.integers(1, 4)),
              "image_size": draw(st.integers(1, 8))}
    _put(draw, vision, "num_channels", st.integers(1, 3), null=False)
    _put(draw, vision, "vision_use_head", st.booleans())
    if draw(st.integers(0, 5)) == 0:  # another tower (clip_vision_model ...): counted by transformers, test_family_multimodal
        vision["model_type"] = "siglip_vision_model"
    _sub(draw, config, "vision_config", vision)
    _put(draw, config, "mm_tokens_per_image", st.integers(0, 4))
    _put(draw, config, "tie_word_embeddings", st.booleans())
    return config


@st.composite
def wide_qwen2_5_vl_configs(draw) -> dict:
    """Qwen2.5-VL: a wide Qwen2 text config, flat (as published) or as ``text_config`` (head_dim and tie included:
    keys its text config class keeps but does not read), M-RoPE sections that may not fit the heads; a vision
    encoder under its keys or their aliases (num_hidden_layers, num_attention_heads)."""
    text = draw(wide_qwen2_configs("qwen2"))
    del text["model_type"]
    _put(draw, text, "rope_scaling", st.builds(lambda a, b, c: {"type": "mrope", "mrope_section": [a, b, c]},
                                               st.integers(0, 3), st.integers(0, 3), st.integers(0, 3)))
    half = text["hidden_size"] // text["num_attention_heads"] / 2
    if half.is_integer() and draw(st.booleans()):  # sections that fit the heads: the forward pass runs
        first = draw(st.integers(0, int(half)))
        text["rope_scaling"] = {"type": "mrope", "mrope_section": [first, 0, int(half) - first]}
    vision = {"hidden_size": draw(st.integers(1, 8)), "intermediate_size": draw(st.integers(1, 8)),
              "patch_size": draw(st.integers(1, 3)), "out_hidden_size": draw(st.integers(1, 8))}
    vision[draw(st.sampled_from(["depth", "num_hidden_layers"]))] = draw(st.integers(0, 2))
    vision[draw(st.sampled_from(["num_heads", "num_attention_heads"]))] = draw(st.integers(1, 3))
    for key in ("in_channels", "temporal_patch_size", "spatial_merge_size"):
        _put(draw, vision, key, st.integers(1, 2), null=False)
    config: dict = {"model_type": "qwen2_5_vl"}
    if draw(st.booleans()):
        _sub(draw, config, "text_config", text)
    else:
        config.update(text)
    _sub(draw, config, "vision_config", vision)
    return config


@st.composite
def wide_llama4_text_configs(draw) -> dict:
    """Llama 4 (text): the shared keys, attention_bias, E experts (0 included), k per token (0 included; more than E:
    it builds, cannot run), the dense width, the sparse layers by step (0 and negative included) or by list (indices
    outside the stack included), the NoPE interval (0 included) or list (empty, or one layer off, included)."""
    config = draw(wide_decoder_configs("llama4_text"))
    for key in ("num_key_value_heads", "head_dim", "tie_word_embeddings"):  # null: refused (int and bool fields)
        if key in config and config[key] is None and draw(st.integers(0, 3)):
            del config[key]  # most of the time the default, so that more configs build and run
    _put(draw, config, "attention_bias", st.booleans(), null=False)
    E = draw(st.integers(0, 4))
    config["num_local_experts"] = E
    config["num_experts_per_tok"] = draw(st.sampled_from([0, 1, E, E + 1]))
    if draw(st.integers(0, 4)):  # absent: 16384 wide, too big to run on the CPU here
        config["intermediate_size_mlp"] = draw(st.integers(1, 24))
    L = config["num_hidden_layers"]
    _put(draw, config, "interleave_moe_layer_step", st.integers(-1, 3), null=False)
    _put(draw, config, "moe_layers", st.lists(st.integers(-1, L + 1), max_size=4))
    _put(draw, config, "no_rope_layer_interval", st.sampled_from([0, 1, 2, 3, 4, 4, 4]), null=False)
    lengths = st.sampled_from([L] * 4 + [max(L - 1, 0), L + 1])
    _put(draw, config, "no_rope_layers", lengths.flatmap(lambda n: st.lists(st.integers(0, 1), min_size=n, max_size=n)))
    for key in ("use_qk_norm", "attn_temperature_tuning"):
        _put(draw, config, key, st.booleans(), null=False)
    return config


@st.composite
def wide_llama4_configs(draw) -> dict:
    """Llama 4 with its vision encoder: a wide text_config (absent or null: Llama4TextConfig's defaults), a vision_config
    drawn wide (absent or null: the defaults; heads that do not divide the width, more heads than width; another
    model_type; a pixel shuffle ratio of 0)."""
    config = {"model_type": "llama4"}
    text = draw(wide_llama4_text_configs())
    del text["model_type"]
    _sub(draw, config, "text_config", text)
    vision = draw(llama4_vision_configs())
    for key in ("hidden_size", "num_attention_heads", "num_hidden_layers"):
        if draw(st.integers(0, 4)) == 0:
            vision[key] = draw(st.integers(0 if key == "num_hidden_layers" else 1, 7))
    if draw(st.integers(0, 5)) == 0:
        vision["model_type"] = draw(st.sampled_from(["siglip_vision_model", "llama4_vision_model"]))
    if draw(st.integers(0, 5)) == 0:
        vision["pixel_shuffle_ratio"] = draw(st.sampled_from([0.0, 0.25, 0.5, 1.0]))
    _sub(draw, config, "vision_config", vision)
    for key, values in (("tie_word_embeddings", st.booleans()), ("image_token_index", st.integers(0, 3))):
        if draw(st.integers(0, 3)) == 0:
            config[key] = draw(values)
    return config


WIDE.update({
    "llama": wide_llama_configs("llama"),
    "mistral": wide_decoder_configs("mistral"),
    "mixtral": wide_mixtral_configs(),
    "qwen2": wide_qwen2_configs("qwen2"),
    "qwen3": wide_qwen2_configs("qwen3"),
    "qwen3_moe": wide_qwen3_moe_configs(),
    "phi3": wide_phi3_configs(),
    "gemma": wide_llama_configs("gemma"),
    "gemma2": wide_gemma2_configs(),
    "deepseek_v3": wide_deepseek_v3_configs(),
    "olmo2": wide_olmo2_configs(),
    "smollm3": wide_smollm3_configs(),
    "gemma3_text": wide_gemma3_text_configs(),
    "gpt_oss": wide_gpt_oss_configs(),
    "qwen3_next": wide_qwen3_next_configs(),
    "glm4_moe": wide_glm4_moe_configs(),
    "deepseek_v2": wide_deepseek_v2_configs(),
    "modernbert": wide_modernbert_configs(),
    "gemma3": wide_gemma3_configs(),
    "qwen2_5_vl": wide_qwen2_5_vl_configs(),
    "llama4_text": wide_llama4_text_configs(),
    "llama4": wide_llama4_configs(),
})
