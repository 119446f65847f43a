"""Exercises of ``11_todays_models``: expected answers computed by the engine, looked up by id."""

from __future__ import annotations

from . import Case, Exercise, register
from ..config import load_config, parse_config, raw_config
from ..count import count_model
from ..memory import kv_cache_bytes

# 11.1: one sequence as long as gpt-oss-20b's context, its cache in bf16
CONTEXT = 131072
# 11.4: Gemma 3's SigLIP tower built for images of this side instead of its 896 pixels
SMALLER_IMAGE = 448


def _gpt_oss_cache_gib() -> float:
    """11.1: gpt-oss-20b's KV cache for one sequence of 131,072 tokens in bf16, in GiB (half its layers windowed)."""
    return kv_cache_bytes(load_config("gpt-oss-20b"), 1, CONTEXT, "bf16") / 2**30


def _smaller_tower_saving() -> int:
    """11.4: the parameters gemma-3-27b-it would have fewer with its vision tower built for 448-pixel images: the
    published model less the same config with ``vision_config.image_size`` 448 (only the position table shrinks)."""
    raw = raw_config("gemma-3-27b-it")
    smaller = parse_config({**raw, "vision_config": {**raw["vision_config"], "image_size": SMALLER_IMAGE}})
    return count_model(load_config("gemma-3-27b-it")).total - count_model(smaller).total


def _cache_from_kinds(kinds: list[str], S: int, A_kv: int, d_k: int, window: int | None, b: int) -> int:
    """Reference solution of 11.3: one sequence's KV cache from each layer's kind of attention (as
    :func:`helpers.plots.layer_kinds` names them): a full layer keeps all S tokens, a windowed or chunked layer the
    last ``window − 1`` at most; every kept token holds a key and a value of A_kv heads of d_k, b bytes each."""
    kept = {"full, RoPE": S, "full, NoPE": S}
    return sum(2 * A_kv * d_k * kept.get(kind, min(S, (window or 0) - 1)) * b for kind in kinds)


def _cache_cases() -> list[Case]:
    from ..plots.today import layer_kinds  # the picture's reading of the config (matplotlib only when checked)

    cases = []
    for name, S in (("gemma-3-27b-it", 131072), ("gpt-oss-20b", 131072), ("llama-4-scout-17b-16e-text", 131072),
                    ("smollm3-3b", 4096), ("gemma-3-1b-it", 300)):
        c = load_config(name)
        window = c.sizes.get("W") or c.sizes.get("W_c")
        kwargs = {"kinds": layer_kinds(c)["attention"], "S": S, "A_kv": c["A_kv"], "d_k": c["d_k"], "window": window,
                  "b": 2}
        cases.append(Case(kwargs, kv_cache_bytes(c, 1, S, "bf16"), f"{name} at S = {S:,}"))
    return cases


def _qwen3_next_crossover() -> int:
    """11.6: the S at which Qwen3-Next-80B-A3B's 12 full layers cache as many bytes (bf16) as its 36 linear layers'
    fixed state: the state (the cache at S = 0) over the bytes one more token adds."""
    c = load_config("qwen3-next-80b-a3b")
    state, per_token = kv_cache_bytes(c, 1, 0, "bf16"), kv_cache_bytes(c, 1, 1, "bf16") - kv_cache_bytes(c, 1, 0, "bf16")
    assert state % per_token == 0
    return state // per_token


register(
    Exercise("11.1", "predict", answer=_gpt_oss_cache_gib, tolerance=0.1, unit=" GiB"),
    Exercise("11.2", "explain", answer=lambda: "a", choices=("a", "b", "c", "d"),
             hint="write the head's output as the weighted sum of the values: what do the weights add up to when "
                  "the sink's logit dominates the denominator?"),
    Exercise("11.3", "code", cases=_cache_cases, solution=_cache_from_kinds),
    Exercise("11.4", "predict", answer=_smaller_tower_saving, tolerance=0.1, unit=" parameters"),
    Exercise("11.5", "explain", answer=lambda: "b", choices=("a", "b", "c", "d"),
             hint="find where the pooling sits: after which tensors, and before which model's cache?"),
    Exercise("11.6", "predict", answer=_qwen3_next_crossover, tolerance=0.1, unit=" tokens"),
)
