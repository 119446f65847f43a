"""Exercises of ``12_finetune_quantize_serve``: expected answers computed by the engine, looked up by id."""

from __future__ import annotations

from . import Case, Exercise, register
from ..config import load_config, parse_config, raw_config
from ..finetune import lora_parameters
from ..quantized import nf4_bytes
from ..serve import serve


def _llama2_70b_qv() -> int:
    """12.1: LoRA at rank 8 on q_proj and v_proj of Llama-2-70B (8 key/value heads): the values peft trains."""
    return lora_parameters(load_config("llama-2-70b"), 8, "q_proj,v_proj")


def _nf4_blocks_of_128() -> float:
    """12.2: bits a weight (constants included) bitsandbytes holds for one 8,192 × 8,192 matrix in NF4 with double
    quantization when ``quantize_4bit`` takes blocks of 128 values instead of QLoRA's 64."""
    n = 8192 * 8192
    return 8 * nf4_bytes(n, blocksize=128) / n


def _eight_gpus() -> int:
    """12.4: Llama-2-70B on 8 × H100 SXM, bf16 weights and KV cache, vLLM's defaults (utilization 0.9, blocks of 16,
    the stated 2 GiB reserve): sequences of 4,096 tokens held at once."""
    return serve(load_config("llama-2-70b"), "H100-SXM", 8, "bf16", max_model_len=4096).max_sequences


def _lora_all_linear(H: int, L: int, A: int, A_kv: int, d_k: int, I: int, r: int) -> int:
    """Reference solution of 12.3: LoRA's trainable values on every linear layer of a LLaMA-style decoder but the
    head: r·(d_in + d_out) for q, k, v, o, gate, up and down in each of L layers."""
    attention = (H + A * d_k) + 2 * (H + A_kv * d_k) + (A * d_k + H)
    mlp = 3 * (H + I)
    return r * L * (attention + mlp)


def _lora_cases() -> list[Case]:
    configs = [("llama-7b", 16), ("llama-2-70b", 64), ("mistral-7b-v0.1", 8), ("qwen3-8b", 32)]
    cases = []
    for name, rank in configs:
        c = load_config(name)
        kwargs = {s: c[s] for s in ("H", "L", "A", "A_kv", "d_k", "I")}
        cases.append(Case({**kwargs, "r": rank}, lora_parameters(c, rank), f"{name}, r = {rank}"))
    wide = parse_config({**raw_config("qwen3-8b"), "head_dim": 256, "num_key_value_heads": 4}, name="a qwen3-8b "
                        "with heads of 256 and 4 key/value heads")
    cases.append(Case({**{s: wide[s] for s in ("H", "L", "A", "A_kv", "d_k", "I")}, "r": 4},
                      lora_parameters(wide, 4), wide.name))
    return cases


register(
    Exercise("12.1", "predict", answer=_llama2_70b_qv, tolerance=0.1, unit=" values"),
    Exercise("12.2", "predict", answer=_nf4_blocks_of_128, tolerance=0.005, unit=" bits a weight"),
    Exercise("12.3", "code", cases=_lora_cases, solution=_lora_all_linear),
    Exercise("12.4", "predict", answer=_eight_gpus, tolerance=0.1, unit=" sequences"),
    Exercise("12.5", "explain", answer=lambda: "a", choices=("a", "b", "c", "d"),
             hint="write out the blocks a window layer reserves for one sequence: which two terms does the minimum "
                  "compare at --max-model-len 8,192?"),
)
