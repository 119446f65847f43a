"""Exercises of ``07_decoder_llms``: expected answers computed by the engine, looked up by id."""

from __future__ import annotations

from typing import Any

from . import Case, Exercise, register
from ..config import ModelConfig, load_config, parse_config
from ..count import count_model
from ..params import LM_HEAD, param_table, select, total

# two small LLaMA-shaped models from their published config.json (not in data/models)
TINYLLAMA: dict[str, Any] = {  # TinyLlama-1.1B: untied head, 4 key/value heads
    "model_type": "llama", "vocab_size": 32000, "hidden_size": 2048, "intermediate_size": 5632,
    "num_hidden_layers": 22, "num_attention_heads": 32, "num_key_value_heads": 4, "tie_word_embeddings": False,
}
LLAMA_32_1B: dict[str, Any] = {  # Llama 3.2 1B: tied head, 8 key/value heads
    "model_type": "llama", "vocab_size": 128256, "hidden_size": 2048, "intermediate_size": 8192,
    "num_hidden_layers": 16, "num_attention_heads": 32, "num_key_value_heads": 8, "tie_word_embeddings": True,
}


def _head_share(config: ModelConfig) -> float:
    """The untied LM head's share of all parameters, in percent."""
    params = param_table(config)
    return 100 * total(select(params, group=LM_HEAD)) / total(params)


def _llama_params(V: int, H: int, L: int, A: int, A_kv: int, I: int, tied: bool) -> int:
    """Reference solution of 07.4: a LLaMA decoder (RMSNorm, no biases, SwiGLU, RoPE, GQA)."""
    d_k = H // A
    layer = 2 * A * d_k * H + 2 * A_kv * d_k * H + 3 * H * I + 2 * H
    return V * H + L * layer + H + (0 if tied else V * H)


def _llama_cases() -> list[Case]:
    configs = [load_config("llama-7b"), load_config("llama-2-70b"),
               parse_config(TINYLLAMA, name="TinyLlama 1.1B"), parse_config(LLAMA_32_1B, name="Llama 3.2 1B")]
    return [Case(dict(V=c["V"], H=c["H"], L=c["L"], A=c["A"], A_kv=c["A_kv"], I=c["I"],
                      tied=c.flags["tie_word_embeddings"]), count_model(c).total, c.name) for c in configs]


register(
    Exercise("07.1", "predict", answer=lambda: _head_share(parse_config(TINYLLAMA, name="TinyLlama 1.1B")),
             tolerance=0.2, unit="%"),
    Exercise("07.2", "explain", answer=lambda: "b", choices=("a", "b", "c", "d"),
             hint="compare V·H with 13·L·H for GPT-2 small: which of the two is tens of millions?"),
    Exercise("07.3", "explain", answer=lambda: "c", choices=("a", "b", "c", "d"),
             hint="what does a model read again for every token it generates?"),
    Exercise("07.4", "code", cases=_llama_cases, solution=_llama_params),
)
