"""Exercises of ``07_decoder_llms``: expected answers computed by the engine, looked up by id."""

from __future__ import annotations

from typing import Any

from . import Case, Exercise, register
from ..config import ModelConfig, load_config, parse_config
from ..count import count_model
from ..lessons.estimates import error_parts
from ..params import LM_HEAD, param_table, select, total

# small LLaMA-shaped models from their published config.json (not in data/models)
TINYLLAMA: dict[str, Any] = {  # TinyLlama-1.1B: untied head, 4 key/value heads
    "model_type": "llama", "vocab_size": 32000, "hidden_size": 2048, "intermediate_size": 5632,
    "num_hidden_layers": 22, "num_attention_heads": 32, "num_key_value_heads": 4, "tie_word_embeddings": False,
}
LLAMA_32_1B: dict[str, Any] = {  # Llama 3.2 1B: tied head, 8 key/value heads, I = 4H
    "model_type": "llama", "vocab_size": 128256, "hidden_size": 2048, "intermediate_size": 8192,
    "num_hidden_layers": 16, "num_attention_heads": 32, "num_key_value_heads": 8, "tie_word_embeddings": True,
}
QWEN3_4B_SHAPES: dict[str, Any] = {  # Qwen3-4B's sizes: head_dim 128 while H / A = 80 (its q/k norms left out)
    "model_type": "llama", "vocab_size": 151936, "hidden_size": 2560, "intermediate_size": 9728,
    "num_hidden_layers": 36, "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128,
    "tie_word_embeddings": True,
}

# the lettered choices of 07.3, each a part of N - 12·L·H² as helpers.estimates names it
_PART_LETTERS = {"biases + norms": "a", "V·H": "b", "feed-forward": "c", "attention": "d"}


def _head_share(config: ModelConfig) -> float:
    """07.2: the untied LM head's share of all parameters, in percent."""
    params = param_table(config)
    return 100 * total(select(params, component=LM_HEAD)) / total(params)


def _largest_error_part() -> str:
    """07.3: the letter of the largest part of Llama 3.2 1B's exact count minus 12·L·H²."""
    parts = error_parts(parse_config(LLAMA_32_1B, name="Llama 3.2 1B"))
    return _PART_LETTERS[max(_PART_LETTERS, key=parts.__getitem__)]


def _llama_params(V: int, H: int, L: int, A: int, A_kv: int, d_k: int, I: int, tied: bool,
                  attention_bias: bool) -> int:
    """Reference solution of 07.4: a LLaMA decoder (RMSNorm, SwiGLU, RoPE, GQA), with or without attention biases."""
    attention = 2 * A * d_k * H + 2 * A_kv * d_k * H
    if attention_bias:  # q_proj A·d_k, k_proj and v_proj A_kv·d_k each, o_proj H
        attention += A * d_k + 2 * A_kv * d_k + H
    layer = attention + 3 * H * I + 2 * H
    return V * H + L * layer + H + (0 if tied else V * H)


def _llama_cases() -> list[Case]:
    configs = [load_config("llama-7b"), load_config("llama-2-70b"),
               parse_config(TINYLLAMA, name="TinyLlama 1.1B"),
               parse_config(QWEN3_4B_SHAPES, name="Qwen3-4B's shapes (d_k = 128, H / A = 80)"),
               parse_config({**LLAMA_32_1B, "attention_bias": True}, name="Llama 3.2 1B with attention biases")]
    return [Case(dict(V=c["V"], H=c["H"], L=c["L"], A=c["A"], A_kv=c["A_kv"], d_k=c["d_k"], I=c["I"],
                      tied=c.flags["tie_word_embeddings"], attention_bias=c.flags["attention_bias"]),
                 count_model(c).total, c.name) for c in configs]


register(
    Exercise("07.1", "explain", answer=lambda: "c", choices=("a", "b", "c", "d"),
             hint="what does a model read again for every token it generates?"),
    Exercise("07.2", "predict", answer=lambda: _head_share(parse_config(TINYLLAMA, name="TinyLlama 1.1B")),
             tolerance=0.2, unit="%"),
    Exercise("07.3", "explain", answer=_largest_error_part, choices=("a", "b", "c", "d"),
             hint="compute each part for Llama 3.2 1B: its I is 4H, not ⅔·4H, and it has 8 key/value heads"),
    Exercise("07.4", "code", cases=_llama_cases, solution=_llama_params),
)
