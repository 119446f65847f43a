"""Exercises of ``08_flops_and_memory``: expected answers computed by the engine, looked up by id."""

from __future__ import annotations

from fractions import Fraction

from . import Case, Exercise, register
from ..config import load_config, parse_config, raw_config
from ..flops import ATTENTION_SCORES, forward_flops
from ..memory import DTYPE_BITS, kv_cache_bytes
from ..params import FEED_FORWARD


def _llama70_cache_gib() -> float:
    """08.1: Llama 2 70B's KV cache for 8 sequences of its full 4,096 tokens, fp16, in GiB."""
    return kv_cache_bytes(load_config("llama-2-70b"), 8, 4096, "fp16") / 2**30


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


def _kv_bytes(L: int, A_kv: int, d_k: int, S: int, B: int, bytes_per_value: int) -> int:
    """Reference solution of 08.5: a key and a value per layer, KV head, head dimension, position, sequence."""
    return 2 * L * A_kv * d_k * S * B * bytes_per_value


# (config, B, S, dtype): GPT-2 (A_kv = A), LLaMA 7B, Llama 2 70B (GQA), and LLaMA 7B's shape with one KV head
_KV_RUNS = (("gpt2", 4, 1024, "fp16"), ("llama-7b", 1, 2048, "fp16"), ("llama-2-70b", 8, 4096, "bf16"),
            ("llama-7b with A_kv = 1 (multi-query)", 16, 512, "int8"))


def _kv_cases() -> list[Case]:
    cases = []
    for label, B, S, dtype in _KV_RUNS:
        if label.startswith("llama-7b with"):
            c = parse_config({**raw_config("llama-7b"), "num_key_value_heads": 1}, name=label)
        else:
            c = load_config(label)
        A_kv = c.sizes.get("A_kv", c["A"])  # GPT-2: every head keeps its own keys and values
        kwargs = {"L": c["L"], "A_kv": A_kv, "d_k": c["d_k"], "S": S, "B": B, "bytes_per_value": DTYPE_BITS[dtype] // 8}
        cases.append(Case(kwargs, kv_cache_bytes(c, B, S, dtype), f"{label}, B = {B}, S = {S}, {dtype}"))
    return cases


register(
    Exercise("08.1", "predict", answer=_llama70_cache_gib, tolerance=0.1, unit=" GiB"),
    Exercise("08.2", "explain", answer=lambda: "b", choices=("a", "b", "c", "d"),
             hint="Hoffmann et al. 2022 say what their N includes in Appendix F (see the slide 'Which N?')"),
    Exercise("08.3", "predict", answer=_crossover, tolerance=0.1),
    Exercise("08.4", "explain", answer=lambda: "b", choices=("a", "b", "c", "d"),
             hint="list what the optimizer step reads and writes, and in which precision (the 16N slide)"),
    Exercise("08.5", "code", cases=_kv_cases, solution=_kv_bytes),
)
