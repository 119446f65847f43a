"""Exercises of ``11_todays_models``: expected answers computed by the engine, looked up by id."""

from __future__ import annotations

from . import Case, Exercise, register
from ..config import load_config, parse_config, raw_config
from ..count import count_model
from ..memory import kv_cache_bytes

# 11.1: one sequence as long as gpt-oss-20b's context, its cache in bf16
CONTEXT = 131072


def _gpt_oss_cache_gib() -> float:
    """11.1: gpt-oss-20b's KV cache for one sequence of 131,072 tokens in bf16, in GiB (half its layers windowed)."""
    return kv_cache_bytes(load_config("gpt-oss-20b"), 1, CONTEXT, "bf16") / 2**30


def _qwen3_next_crossover() -> int:
    """11.5: the S at which Qwen3-Next-80B-A3B's 12 full layers cache as many bytes (bf16) as its 36 linear layers'
    fixed state: the state (the cache at S = 0) over the bytes one more token adds."""
    c = load_config("qwen3-next-80b-a3b")
    state, per_token = kv_cache_bytes(c, 1, 0, "bf16"), kv_cache_bytes(c, 1, 1, "bf16") - kv_cache_bytes(c, 1, 0, "bf16")
    assert state % per_token == 0
    return state // per_token


def _gpt_oss_total(V: int, H: int, L: int, A: int, A_kv: int, d_k: int, E: int, I: int) -> int:
    """Reference solution of 11.3: every parameter of a GPT-OSS decoder (untied head)."""
    attention = A + (A * d_k * H + A * d_k) + 2 * (A_kv * d_k * H + A_kv * d_k) + (H * A * d_k + H)  # sinks first
    router = E * H + E
    experts = E * (2 * H * I + 2 * I) + E * (I * H + H)  # gate_up_proj and its bias, down_proj and its bias
    return 2 * V * H + L * (attention + router + experts + 2 * H) + H


def _gpt_oss_cases() -> list[Case]:
    big, small = raw_config("gpt-oss-120b"), raw_config("gpt-oss-20b")
    configs = [
        ("gpt-oss-120b", big),
        ("gpt-oss-20b", small),
        ("gpt-oss-120b with 32 experts", {**big, "num_local_experts": 32}),
        ("a gpt-oss of 12 layers, 16 heads of 128, 4 key/value heads",
         {**small, "num_hidden_layers": 12, "num_attention_heads": 16, "num_key_value_heads": 4, "head_dim": 128,
          "layer_types": small["layer_types"][:12]}),
    ]
    cases = []
    for label, raw in configs:
        c = parse_config(raw, name=label)
        kwargs = {s: c[s] for s in ("V", "H", "L", "A", "A_kv", "d_k", "E", "I")}
        cases.append(Case(kwargs, count_model(c).total, label))
    return cases


register(
    Exercise("11.1", "predict", answer=_gpt_oss_cache_gib, tolerance=0.1, unit=" GiB"),
    Exercise("11.2", "explain", answer=lambda: "c", choices=("a", "b", "c", "d"),
             hint="write the softmax of one query's scores with one more logit in the denominator: what can the "
                  "weights on the real tokens add up to?"),
    Exercise("11.3", "code", cases=_gpt_oss_cases, solution=_gpt_oss_total),
    Exercise("11.4", "explain", answer=lambda: "a", choices=("a", "b", "c", "d"),
             hint="list what a rotary embedding stores in the model's parameters, and what a layer keeps in its cache"),
    Exercise("11.5", "predict", answer=_qwen3_next_crossover, tolerance=0.1, unit=" tokens"),
)
