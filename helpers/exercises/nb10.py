"""Exercises of ``10_budgets``: expected answers computed by the engine, looked up by id."""

from __future__ import annotations

from . import Case, Exercise, register
from ..budget import decode, gpu, kv_crossover_batch
from ..config import load_config
from ..params import param_table, total


def _int4_on_a_4090() -> float:
    """LLaMA 7B, int4 weights, bf16 KV cache, B = 1, S = 2048 on one RTX 4090: the decode ceiling in tokens/s."""
    return decode(load_config("llama-7b"), gpu("RTX-4090"), batch=1, context=2048, dtype="int4", gpus=1).tokens_per_s


def _crossover(N: int, L: int, A_kv: int, d_k: int, S: int) -> int:
    """The reference solution: the smallest B with 2·L·A_kv·d_k·S·B·2 > 2·N (both in bf16)."""
    return (2 * N) // (2 * L * A_kv * d_k * S * 2) + 1


def _crossover_cases() -> list[Case]:
    cases = []
    for name, S in (("llama-7b", 2048), ("llama-2-70b", 4096), ("gpt2-xl", 1024), ("llama-13b", 2048)):
        c = load_config(name)
        kwargs = dict(N=total(param_table(c)), L=c["L"], A_kv=c["A_kv"] if "A_kv" in c.sizes else c["A"],
                      d_k=c["d_k"], S=S)
        cases.append(Case(kwargs, kv_crossover_batch(c, S), f"{name} at S = {S}"))
    return cases


register(
    Exercise("10.1", "predict", answer=_int4_on_a_4090, tolerance=0.25, unit=" tokens/s"),
    Exercise("10.2", "explain", answer=lambda: "a", choices=("a", "b", "c", "d"),
             hint="the weights do not change; what does A_kv do to the cache of one sequence?"),
    Exercise("10.3", "code", cases=_crossover_cases, solution=_crossover),
    Exercise("10.4", "explain", answer=lambda: "b", choices=("a", "b", "c", "d"),
             hint="MFU counts the model's 3 forward passes' worth; the GPUs ran 4"),
)
