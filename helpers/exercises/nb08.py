"""Exercises of ``08_flops_and_memory``: expected answers computed by the engine, looked up by id."""

from __future__ import annotations

from fractions import Fraction

from . import Case, Exercise, register
from ..config import load_config, parse_config, raw_config
from ..flops import ATTENTION_SCORES, forward_flops
from ..count import count_model
from ..memory import ADAMW_MIXED, DTYPE_BITS, kv_cache_bytes, training_state
from ..params import FEED_FORWARD


def _llama70_int8_cache_gib() -> float:
    """08.2: Llama 2 70B's KV cache for one sequence of 32,768 tokens (eight times its context), int8, in GiB."""
    return kv_cache_bytes(load_config("llama-2-70b"), 1, 32768, "int8") / 2**30


def _eight_bit_adam_bytes_per_parameter() -> float:
    """08.4: bytes of mixed-precision AdamW state per parameter of LLaMA 7B when both moments are kept in 8 bits.

    The engine's mixed-precision layout, with the two fp32 moments (``exp_avg``, ``exp_avg_sq``) stored in
    8 bits instead of 32 (8-bit Adam, Dettmers et al. 2022; its block-wise scales and AdamW's step counters left out).
    """
    c = load_config("llama-7b")
    state = sum(Fraction(p.bytes * 8, DTYPE_BITS["fp32"]) if p.name.startswith("AdamW exp_avg") else p.bytes
                for p in training_state(c, ADAMW_MIXED) if not p.name.startswith("AdamW step"))
    return float(state / count_model(c).total)


def _crossover() -> int:
    """08.3: the S at which LLaMA 7B's S×S matmuls cost as many forward FLOPs as its feed-forward matrices.

    From the engine at S = 1: the S×S matmuls grow as S², the feed-forward matrices as S, so they meet at
    S = feed-forward(1) / scores(1).
    """
    parts = forward_flops(load_config("llama-7b"), 1, 1).by_component()
    S = Fraction(parts[FEED_FORWARD], parts[ATTENTION_SCORES])
    assert S.denominator == 1
    at = forward_flops(load_config("llama-7b"), 1, int(S)).by_component()
    assert at[FEED_FORWARD] == at[ATTENTION_SCORES]
    return int(S)


def _kv_bytes(L: int, L_window: int, A_kv: int, d_k: int, W: int, S: int, B: int, bytes_per_value: int) -> int:
    """Reference solution of 08.5: L_window layers keep the last min(S, W) positions, the others all S."""
    positions = L_window * min(S, W) + (L - L_window) * S
    return 2 * positions * A_kv * d_k * B * bytes_per_value


# (label, config, layers with a window, W, B, S, dtype). Mistral 7B: every layer windowed (Jiang et al. 2023);
# Llama 2 70B with every other layer windowed (as Gemma 2 alternates); LLaMA 7B and GPT-2 without a window.
MISTRAL_7B = {"model_type": "llama", "vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 14336,
              "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
              "max_position_embeddings": 32768}
_KV_RUNS = (("Mistral 7B, W = 4,096", MISTRAL_7B, 32, 4096, 2, 16384, "fp16"),
            ("Llama 2 70B, 40 of 80 layers with W = 1,024", "llama-2-70b", 40, 1024, 8, 4096, "bf16"),
            ("Mistral 7B at S < W", MISTRAL_7B, 32, 4096, 4, 1000, "int8"),
            ("LLaMA 7B, no window", "llama-7b", 0, 4096, 1, 2048, "fp16"),
            ("GPT-2, no window", "gpt2", 0, 256, 4, 1024, "fp16"))


def _layers(config: dict | str, L: int):
    """The config with only L of its layers (the cache is per layer, so the engine counts them apart)."""
    raw = raw_config(config) if isinstance(config, str) else config
    return parse_config({**raw, "n_layer" if raw["model_type"] == "gpt2" else "num_hidden_layers": L})


def _kv_cases() -> list[Case]:
    cases = []
    for label, config, L_window, W, B, S, dtype in _KV_RUNS:
        c = load_config(config) if isinstance(config, str) else parse_config(config, name=label)
        expected = sum(kv_cache_bytes(_layers(config, n), B, seq, dtype)
                       for n, seq in ((L_window, min(S, W)), (c["L"] - L_window, S)) if n)
        A_kv = c.sizes.get("A_kv", c["A"])  # GPT-2: every head keeps its own keys and values
        kwargs = {"L": c["L"], "L_window": L_window, "A_kv": A_kv, "d_k": c["d_k"], "W": W, "S": S, "B": B,
                  "bytes_per_value": DTYPE_BITS[dtype] // 8}
        cases.append(Case(kwargs, expected, f"{label}, B = {B}, S = {S:,}, {dtype}"))
    return cases


register(
    Exercise("08.1", "explain", answer=lambda: "b", choices=("a", "b", "c", "d"),
             hint="Hoffmann et al. 2022 say what their N includes in Appendix F (the next slide, 'Which N?')"),
    Exercise("08.2", "predict", answer=_llama70_int8_cache_gib, tolerance=0.1, unit=" GiB"),
    Exercise("08.3", "predict", answer=_crossover, tolerance=0.1),
    Exercise("08.4", "predict", answer=_eight_bit_adam_bytes_per_parameter, tolerance=0.1, unit=" bytes"),
    Exercise("08.5", "code", cases=_kv_cases, solution=_kv_bytes),
)
