"""Exercises of ``10_budgets``: expected answers computed by the engine, looked up by id."""

from __future__ import annotations

from . import Case, Exercise, register
from ..budget import decode, gpu, kv_crossover_batch, state_per_gpu, training_budget
from ..config import load_config
from ..memory import parameter_tensors
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


def _llama13_h100_hours() -> float:
    """10.5: GPU-hours to train LLaMA 13B on 1.0T tokens (S = 2,048) on H100 SXM GPUs at MFU 0.4 (an estimate)."""
    return training_budget(load_config("llama-13b"), 10**12, gpu("H100-SXM"), 0.4).gpu_hours


def _zero_bytes(N: int, N_t: int, G_dp: int, stage: int) -> int:
    """Reference solution of 10.7: mixed-precision AdamW state on one of G_dp GPUs at ZeRO ``stage`` (no padding)."""
    sharded = {0: 0, 1: 12, 2: 14, 3: 16}[stage]  # bytes per parameter split across the G_dp GPUs
    return (16 - sharded) * N + sharded * N // G_dp + 4 * N_t


def _zero_cases() -> list[Case]:
    cases = []
    for name, G_dp in (("llama-7b", 8), ("llama-7b", 64), ("llama-13b", 16), ("llama-13b", 1)):
        c = load_config(name)
        assert all(p.shape[0] % G_dp == 0 for p in param_table(c))  # no FSDP padding: the formula is exact
        for stage in (0, 1, 2, 3):
            kwargs = dict(N=total(param_table(c)), N_t=parameter_tensors(c), G_dp=G_dp, stage=stage)
            cases.append(Case(kwargs, state_per_gpu(c, G_dp, stage), f"{name}, G_dp = {G_dp}, stage {stage}"))
    return cases


register(
    Exercise("10.1", "predict", answer=_int4_on_a_4090, tolerance=0.25, unit=" tokens/s"),
    Exercise("10.2", "explain", answer=lambda: "a", choices=("a", "b", "c", "d"),
             hint="compare both sides with A_kv = 8 and A_kv = 64: the cache of one sequence, and the weights"),
    Exercise("10.3", "code", cases=_crossover_cases, solution=_crossover),
    Exercise("10.4", "explain", answer=lambda: "b", choices=("a", "b", "c", "d"),
             hint="MFU counts the model's 3 forward passes' worth; the GPUs ran 4"),
    Exercise("10.5", "predict", answer=_llama13_h100_hours, tolerance=0.25, unit=" GPU-hours"),
    Exercise("10.6", "explain", answer=lambda: "c", choices=("a", "b", "c", "d"),
             hint="stage 2 already splits the optimizer state and the gradients; which part is left whole?"),
    Exercise("10.7", "code", cases=_zero_cases, solution=_zero_bytes),
)
