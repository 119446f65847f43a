"""Exercises of ``13_will_it_fit``: expected answers computed by the engine, looked up by id."""

from __future__ import annotations

from . import Case, Exercise, register
from ..config import load_config, parse_config, raw_config
from ..peak import Step, training_peak

TINYLLAMA = {"hidden_size": 2048, "intermediate_size": 5632, "num_hidden_layers": 22, "num_attention_heads": 32,
             "num_key_value_heads": 4}  # the measured steps' TinyLlama shape (data/gpu_memory.json's override)


def _lora_at_4096() -> int:
    """13.1: LLaMA-7B under LoRA (r = 16 on all-linear, bf16 weights, SDPA, no checkpointing, AdamW), B = 1, S = 4,096:
    the step's peak, as the GPU would report it."""
    return training_peak(Step(load_config("llama-7b"), "lora", 1, 4096, "none", "bf16", rank=16)).peak_bytes


def _pythia_full() -> int:
    """13.4: Pythia-1B, full fine-tuning in fp32 with bf16 autocast, AdamW, full checkpointing, B = 1, S = 512: the
    step's peak (its optimizer step)."""
    return training_peak(Step(load_config("pythia-1b"), "full", 1, 512, "full", "fp32", "bf16")).peak_bytes


def _block(nbytes: int) -> int:
    return -(-nbytes // 512) * 512


def _lora_layer_saved(B: int, S: int, H: int, I: int, A: int, A_kv: int, d_k: int, r: int) -> int:
    """Reference solution of 13.3: the bytes one LLaMA layer keeps for the backward pass under LoRA (rank r on its seven
    linear layers, bf16 weights, SDPA), each tensor rounded up to 512 bytes."""
    T = B * S
    norms = 2 * (_block(4 * T * H) + _block(4 * T))
    peft = 5 * _block(4 * T * H) + _block(4 * T * A * d_k) + _block(4 * T * I)
    lora_a = 7 * _block(4 * T * r)
    flash = 2 * _block(2 * T * A * d_k) + 2 * _block(2 * T * A_kv * d_k) + _block(4 * T * A) + 2 * 512
    mlp = 3 * _block(2 * T * I)
    return norms + peft + lora_a + flash + mlp


def _layer_cases() -> list[Case]:
    from ..plots.peak import saved_in_layer

    tiny = parse_config({**raw_config("llama-7b"), **TINYLLAMA}, name="TinyLlama's shape")
    runs = [(load_config("llama-7b"), 1, 2048, 16), (tiny, 3, 1001, 8), (load_config("llama-2-70b"), 1, 4096, 64),
            (load_config("mistral-7b-v0.1"), 2, 777, 4), (load_config("llama-13b"), 1, 333, 1)]
    cases = []
    for config, B, S, r in runs:
        expected = sum(s.nbytes for s in saved_in_layer(Step(config, "lora", B, S, "none", "bf16", rank=r)))
        sizes = {s: config[s] for s in ("H", "I", "A", "A_kv", "d_k")}
        cases.append(Case({"B": B, "S": S, **sizes, "r": r}, expected, f"{config.name}, B = {B}, S = {S}, r = {r}"))
    return cases


register(
    Exercise("13.1", "predict", answer=_lora_at_4096, tolerance=0.1, unit=" bytes"),
    Exercise("13.2", "explain", answer=lambda: "b", choices=("a", "b", "c", "d"),
             hint="list the tensors of the logits' size alive at the forward's end, then at the first step of the "
                  "backward pass"),
    Exercise("13.3", "code", cases=_layer_cases, solution=_lora_layer_saved),
    Exercise("13.4", "predict", answer=_pythia_full, tolerance=0.1, unit=" bytes"),
    Exercise("13.5", "explain", answer=lambda: "b", choices=("a", "b", "c", "d"),
             hint="what does eager attention materialise that FlashAttention never stores, and how does it grow with S?"),
)
