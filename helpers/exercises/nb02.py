"""Exercises of ``02_multi_head_attention``: expected answers computed by the engine, looked up by id."""

from __future__ import annotations

from . import Case, Exercise, register
from ..config import load_config, parse_config, raw_config
from ..params import ATTENTION, param_table, select, total


def _attention_layer(config) -> int:
    """The engine's attention parameters of layer 0."""
    return total(select(param_table(config), component=ATTENTION, layer=0))


def _large_more_heads_same_width() -> int:
    """02.2: BERT-large with twice its heads (A = 16 -> 32) but d_k kept at 64, so H = A·d_k = 2048."""
    raw = raw_config("bert-large-uncased")
    A = 2 * raw["num_attention_heads"]
    d_k = raw["hidden_size"] // raw["num_attention_heads"]
    wider = {**raw, "num_attention_heads": A, "hidden_size": A * d_k, "intermediate_size": 4 * A * d_k}
    return _attention_layer(parse_config(wider, name="bert-large, A = 32 heads of d_k = 64"))


def _gqa(H: int, A: int, A_kv: int, d_k: int) -> int:
    """Reference solution of 02.3: W_Q and W_O of A·d_k × H, W_K and W_V of A_kv·d_k × H, no biases."""
    return 2 * A * d_k * H + 2 * A_kv * d_k * H


# LLaMA-layout configurations beside the shipped ones: one key/value head for all (multi-query attention,
# Shazeer 2019), and heads wider than H / A (Gemma-7B's attention shape: A·d_k = 4096 ≠ H = 3072)
def _built() -> dict[str, dict]:
    return {
        "llama-7b with A_kv = 1 (multi-query)": {**raw_config("llama-7b"), "num_key_value_heads": 1},
        "H = 3072, A = A_kv = 16, d_k = 256 (A·d_k ≠ H)": {
            "model_type": "llama", "hidden_size": 3072, "num_attention_heads": 16, "num_key_value_heads": 16,
            "head_dim": 256, "intermediate_size": 24576, "num_hidden_layers": 2},
        "H = 2048, A = 16, A_kv = 4": {
            "model_type": "llama", "hidden_size": 2048, "num_attention_heads": 16, "num_key_value_heads": 4,
            "intermediate_size": 5632, "num_hidden_layers": 2},
    }


def _gqa_cases() -> list[Case]:
    configs = [(name, load_config(name)) for name in ("llama-7b", "llama-2-70b")]
    configs += [(label, parse_config(raw, name=label)) for label, raw in _built().items()]
    return [Case({"H": c["H"], "A": c["A"], "A_kv": c["A_kv"], "d_k": c["d_k"]}, _attention_layer(c), label)
            for label, c in configs]


register(
    Exercise("02.1", "explain", answer=lambda: "b", choices=("a", "b", "c", "d"),
             hint="in Q = XW_Q, K = XW_K, V = XW_V, which symbol is the same in all three?"),
    Exercise("02.2", "predict", answer=_large_more_heads_same_width, tolerance=0.05),
    Exercise("02.3", "code", cases=_gqa_cases, solution=_gqa),
    Exercise("02.4", "explain", answer=lambda: "a", choices=("a", "b", "c", "d"),
             hint="if Q = K, what is the (j, i) entry of Q·Kᵀ compared with the (i, j) entry?"),
)
