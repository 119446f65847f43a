"""One printable page with every rule of the series: the formula, one example computed by ``helpers``, its source.

``make html`` writes it as build/html/cheatsheet.html (``python tools/build_site.py cheatsheet OUT``), linked from the
index. Nothing on the page is typed in: each example is computed here from the engine when the page is built, and
each is computed a second way (the formula evaluated against the engine's tensor table, torch-free) before it is
written; a disagreement stops the build. tests/test_html.py checks the page against :func:`rules` again.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, replace
from fractions import Fraction

from helpers import (
    ATTENTION, EMBEDDINGS, FEED_FORWARD, LAYER_NORM, POOLER, ModelConfig, classification_head, component_counts, component_formulas,
    count_model, evaluate, fmt_int, load_config, param_table, pretraining_heads, render, total,
)
from helpers import budget, flops, memory, parse_config, peak
from helpers.lessons import estimates
from helpers.finetune import lora_parameters
from helpers.quantized import nf4_bytes, stored_weights
from helpers.serve import serve

GIB = 2**30


@dataclass(frozen=True)
class Rule:
    """One line of the cheatsheet: what it counts, its formula, an example and where the series teaches it."""

    section: str
    name: str
    formula: str  # as the notebooks print it (helpers.render of the engine's own formula where it has one)
    example: str  # the model and sizes the value is for
    value: str  # computed, formatted
    source: str  # who states the rule or convention, and the notebook
    note: str = ""  # how far an approximation is from the exact figure


def _gib(n: int) -> str:
    """Bytes as exact integer and GiB (2^30), the series' one unit for memory."""
    return f"{fmt_int(n)} B = {n / GIB:,.2f} GiB"


def _same(a: int, b: int, what: str) -> int:
    """``a`` when the two ways of computing it agree; else the build stops."""
    if a != b:
        raise AssertionError(f"cheatsheet: {what}: {a:,} != {b:,}")
    return a


def _named(config: ModelConfig, *symbols: str) -> str:
    """``"llama-2-70b (A 64, A_kv 8)"``: a model and the sizes an example turns on, read from its config."""
    return f"{config.name} ({', '.join(f'{s} {fmt_int(config.sizes[s])}' for s in symbols)})"


def _per_layer(formula: str) -> str:
    """``"L*(4*H**2 + 4*H)"`` -> ``"4*H**2 + 4*H"``: one layer of a stacked component."""
    return formula[3:-1] if formula.startswith("L*(") and formula.endswith(")") else formula


def encoder_rules() -> list[Rule]:
    """BERT, component by component (notebooks 01-06), on bert-base-uncased."""
    c = load_config("bert-base-uncased")
    f, counts, L = component_formulas(c), component_counts(param_table(c)), c.sizes["L"]
    ex = "bert-base-uncased"
    rows = []
    for component, name, nb in [(EMBEDDINGS, "token + position + segment tables", "01"),
                                (ATTENTION, "attention per layer, whatever the heads A (W_Q, W_K, W_V, W_O + biases)", "02"),
                                (FEED_FORWARD, "feed-forward per layer, H → I → H", "03")]:
        per = _per_layer(f[component])
        value = _same(evaluate(per, c), counts[component] // (L if per != f[component] else 1), component)
        rows.append(Rule("Encoder (BERT)", name, render(per), ex, fmt_int(value), f"notebook {nb}"))
    rows.append(Rule("Encoder (BERT)", "LayerNorm γ and β (not mean and variance): 2H each, two per layer + embeddings",
                     render(f[LAYER_NORM]), ex, fmt_int(_same(evaluate(f[LAYER_NORM], c), counts[LAYER_NORM], "norm")),
                     "notebook 04"))
    rows.append(Rule("Encoder (BERT)", "pooler (dense + tanh on [CLS])", render(f[POOLER]), ex,
                     fmt_int(_same(evaluate(f[POOLER], c), counts[POOLER], "pooler")), "notebook 05"))
    layer = _same(evaluate("12*H**2 + 13*H", c), sum(counts[k] for k in (ATTENTION, FEED_FORWARD)) // L
                  + evaluate("4*H", c), "layer")
    rows.append(Rule("Encoder (BERT)", "one layer when I = 4H", "12H² + 13H", ex, fmt_int(layer), "notebooks 03, 06"))
    whole = " + ".join(render(f[k]) for k in f)
    rows.append(Rule("Encoder (BERT)", "BertModel, every tensor", whole, ex,
                     fmt_int(_same(sum(evaluate(f[k], c) for k in f), count_model(c).total, "BertModel")),
                     "Devlin et al. 2019 print 110M; notebooks 00, 06"))
    heads = _same(evaluate("H**2 + 5*H + V + 2", c), total(pretraining_heads(c)), "heads")
    rows.append(Rule("Encoder (BERT)", "MLM + NSP pre-training heads (decoder tied to the token table)",
                     "(H² + H) + 2H + V + (2H + 2)", ex, f"{fmt_int(heads)}; BertForPreTraining "
                     f"{fmt_int(count_model(c).total + heads)}", "notebook 05"))
    rows.append(Rule("Encoder (BERT)", "classification head, C labels", "C·H + C", "C = 3",
                     fmt_int(_same(evaluate("C*H + C", c, C=3), total(classification_head(c, 3)), "classifier")),
                     "notebook 05"))
    return rows


def decoder_rules() -> list[Rule]:
    """GPT-2, LLaMA, grouped-query attention, a mixture of experts, Kaplan's 12·L·H² (notebooks 07, 09)."""
    rows = []
    for name, what in [("gpt2", "GPT-2: learned positions, LayerNorm, head tied to the token table"),
                       ("llama-7b", "LLaMA: RoPE (no position table), RMSNorm (H each), SwiGLU (3 matrices), untied head")]:
        c = load_config(name)
        f = component_formulas(c)
        value = _same(sum(evaluate(x, c) for x in f.values()), count_model(c).total, name)
        rows.append(Rule("Decoders", what, " + ".join(render(x) for x in f.values()), name, fmt_int(value),
                         "notebook 07"))
    c = load_config("llama-2-70b")
    per = _per_layer(component_formulas(c)[ATTENTION])
    gqa, mha = evaluate(per, c), evaluate(per, c, A_kv=c.sizes["A"])
    rows.append(Rule("Decoders", "grouped-query attention per layer: A_kv key/value heads share the queries",
                     render(per), _named(c, "A", "A_kv", "d_k"),
                     f"{fmt_int(_same(gqa, component_counts(param_table(c))[ATTENTION] // c.sizes['L'], 'gqa'))} "
                     f"(with A_kv = A: {fmt_int(mha)})", "Ainslie et al. 2023; notebook 07"))
    c = load_config("mixtral-8x7b-v0.1")
    r = count_model(c)
    skipped = _same(evaluate("L*(E - k)*3*H*I", c), r.total - r.active, "experts skipped")
    rows.append(Rule("Decoders", "mixture of experts: active = total − the (E − k) experts a token skips",
                     "N − L·(E − k)·3H·I", _named(c, "E", "k"),
                     f"{fmt_int(r.total)} total, {fmt_int(r.active)} active",
                     "Mistral AI's announcement: 46.7B total, 12.9B per token; notebook 09",
                     f"skipped: {fmt_int(skipped)}"))
    c = load_config("gpt3-175b")
    L, H = c.sizes["L"], c.sizes["H"]
    est, exact = estimates.estimate_12lh2(L, H), count_model(c).total
    rows.append(Rule("Decoders", "non-embedding approximation (drops V·H, P·H and every 13·H)", "12·L·H²",
                     "gpt3-175b shape", fmt_int(_same(est, evaluate("12*L*H**2", c), "12LH2")),
                     "Kaplan et al. 2020, §2.1; notebooks 07, 09",
                     f"exact {fmt_int(exact)}: {fmt_int(exact - est)} more ({(exact - est) / exact:.2%})"))
    return rows


def compute_rules() -> list[Rule]:
    """FLOPs (notebook 08) and what they cost in GPU-hours (notebook 10)."""
    c, B, S = load_config("bert-base-uncased"), 1, 128
    fl = flops.forward_flops(c, B, S)
    formulas = flops.flop_formulas(c)
    forward = _same(sum(evaluate(x, c, B=B, S=S) for x in formulas.values()), fl.forward, "forward")
    shown = " + ".join(render(x) for x in formulas.values() if x != "0")
    two_n = 2 * count_model(c).total * B * S
    rows = [Rule("FLOPs and budgets", "forward matmul FLOPs: 2 per multiply-add (≈ 2N per token + the S×S attention)",
                 shown, f"bert-base-uncased, B = {B}, S = {S}", fmt_int(forward),
                 "equal to torch's FlopCounterMode; notebook 08",
                 f"2·N·B·S = {fmt_int(two_n)}: {(two_n - forward) / forward:+.1%} (N counts the tables, no matmul)")]
    training, six = fl.training, flops.six_n_d(c, B, S)
    rows.append(Rule("FLOPs and budgets", "training = forward + backward (backward = 2 × forward)", "3 × forward",
                     f"bert-base-uncased, B = {B}, S = {S}", fmt_int(_same(training, 3 * forward, "training")),
                     "notebook 08"))
    rows.append(Rule("FLOPs and budgets", "the 6ND rule (N every parameter, D tokens)", "6·N·D",
                     f"bert-base-uncased, D = {B * S}", fmt_int(_same(six, 6 * count_model(c).total * B * S, "6ND")),
                     "Kaplan et al. 2020 §2.1; Hoffmann et al. 2022 App. F; notebook 08",
                     f"counted training {fmt_int(training)}: 6ND is {(six - training) / training:+.1%}"))
    c, gpu, tokens, mfu = load_config("llama-7b"), budget.gpu("A100-80GB"), 10**12, Fraction(1, 2)
    b = budget.training_budget(c, tokens, gpu, float(mfu))
    hours = b.flops / (gpu.flops * mfu * 3600)
    rows.append(Rule("FLOPs and budgets", "GPU-hours at a model FLOPs utilisation (MFU, an assumption)",
                     "training FLOPs / (peak FLOP/s · MFU · 3600)",
                     f"llama-7b, {fmt_int(tokens)} tokens of S = {b.seq_len}, {gpu.key} ({gpu.flops / 1e12:.0f} TFLOP/s bf16), "
                     f"MFU {float(mfu):.0%}", f"{fmt_int(b.flops)} FLOPs → {float(hours):,.0f} GPU-hours",
                     "datasheet peak; notebook 10", f"code: {b.gpu_hours:,.0f}" if round(b.gpu_hours) != round(hours)
                     else ""))
    recompute = _same(b.recompute_flops * 3, b.flops * 4, "recomputation")
    rows.append(Rule("FLOPs and budgets", "HFU under full recomputation (the forward runs twice)", "HFU = 4/3 · MFU",
                     f"llama-7b, MFU {float(mfu):.0%}", f"HFU {b.hfu_with_recompute:.2%}",
                     "Korthikanti et al. 2022; notebook 10", f"{fmt_int(recompute // 3)} FLOPs run"))
    fl7 = flops.forward_flops(c, 1, b.seq_len)
    causal = flops.causal_training_flops(fl7)
    _same(3 * flops.causal_scores_flops(c, 1, b.seq_len), 3 * evaluate("2*L*B*S*(S + 1)*A*d_k", c, B=1, S=b.seq_len),
          "causal")
    rows.append(Rule("FLOPs and budgets", "causal attention: the S×S matmuls' triangle", "2L·B·S·(S + 1)·A·d_k",
                     f"llama-7b, S = {b.seq_len}", f"training {fmt_int(causal)} FLOPs ({causal / fl7.training - 1:+.2%})",
                     "notebooks 08, 10"))
    D = _same(budget.chinchilla_tokens(c), 20 * count_model(c).total, "chinchilla")
    rows.append(Rule("FLOPs and budgets", "compute-optimal: about 20 tokens per parameter", "D ≈ 20·N", "llama-7b",
                     f"{fmt_int(D)} tokens", "Hoffmann et al. 2022, Table 3; notebook 10"))
    d = budget.decode(c, gpu)
    h200 = peak.measured()["other_measurements_h200"]["decode_llama7b_bf16_b1_prompt2048"]  # data/gpu_memory.json
    ceiling = budget.decode(c, budget.gpu("H200"), 1, 2048, gpus=1).bandwidth_tokens_per_s
    rows.append(Rule("FLOPs and budgets", "decoding ceiling: every weight and the KV cache read once per step",
                     "B · bandwidth / (weight bytes + KV bytes)", f"llama-7b bf16, B = {d.batch}, context {d.context}, "
                     f"{gpu.key}", f"≤ {d.bandwidth_tokens_per_s:,.1f} tokens/s ({d.bound} bound)",
                     "an upper bound; notebooks 10, 12", f"eager generate on an H200: "
                     f"{h200['hf_generate_eager_tokens_per_s'] / ceiling:.1%} of it"))
    return rows


def memory_rules() -> list[Rule]:
    """Weights, training state (named conventions), KV cache, activations (notebooks 08, 10)."""
    c = load_config("llama-7b")
    n = count_model(c).total
    rows = [Rule("Memory (GiB = 2³⁰ bytes)", "weights", "N · bytes per value (fp32 4, bf16/fp16 2, int8 1)",
                 "llama-7b, bf16", _gib(_same(memory.weight_bytes(c, "bf16"), 2 * n, "weights")), "notebook 08")]
    by_size: dict[int, list[str]] = {}
    for recipe in memory.STATE_SOURCES:
        by_size.setdefault(memory.bytes_per_parameter(recipe), []).append(recipe)
    state = {per: sum(p.bytes for p in memory.training_state(c, recipe[0])) for per, recipe in by_size.items()}
    rows.append(Rule("Memory (GiB = 2³⁰ bytes)", "AdamW training state: bytes per parameter is a convention; name it",
                     "bytes per parameter · N (+ a 4-byte step per tensor)", "llama-7b",
                     "; ".join(f"{per}: {state[per] / GIB:,.2f} GiB" for per in sorted(by_size)),
                     "; ".join(f"{per}: {', '.join(names)}" for per, names in sorted(by_size.items())) + "; notebook 08",
                     "16 = Rajbhandari et al. 2020 (ZeRO) §3.1: 2 + 2 + 12"))
    G = 8
    zero, even = budget.state_per_gpu(c, G, 3), 16 * n // G
    rows.append(Rule("Memory (GiB = 2³⁰ bytes)", "ZeRO-3: weights, gradients and optimizer state sharded over G GPUs",
                     "16·N / G (mixed precision)", f"llama-7b, G = {G}, GPU 0", _gib(zero),
                     "Rajbhandari et al. 2020, §5; notebook 10",
                     f"16·N/G = {fmt_int(even)}; GPU 0's row blocks of uneven tensors and step scalars: "
                     f"{zero - even:+,} B" if zero != even else ""))
    c70, S = load_config("llama-2-70b"), 4096
    f = memory.kv_cache_formula(c70)
    kv = _same(memory.kv_cache_bytes(c70, 1, S, "bf16"), 2 * evaluate(f, c70, B=1, S=S), "kv")
    rows.append(Rule("Memory (GiB = 2³⁰ bytes)", "KV cache: a key and a value per layer, key/value head, position",
                     f"{render(f)} · bytes", f"{_named(c70, 'A_kv')}, B = 1, S = {S}, bf16", _gib(kv), "notebook 08"))
    ds = load_config("deepseek-v3")
    f = memory.kv_cache_formula(ds)
    mla = _same(memory.kv_cache_bytes(ds, 1, S, "bf16"), 2 * budget.mla_values_per_token(ds.sizes["L"], ds.sizes["r_kv"],
                ds.sizes["d_rope"]) * S, "mla")
    rows.append(Rule("Memory (GiB = 2³⁰ bytes)", "MLA: one latent and one rotary key a token and layer",
                     f"{render(f)} · bytes", f"{_named(ds, 'r_kv', 'd_rope')}, S = {S}, bf16", _gib(mla),
                     "DeepSeek-V2 §2.1; notebooks 09, 10"))
    S = 2048
    act = _same(memory.activation_bytes_per_layer(c, 1, S), evaluate(memory.ACTIVATIONS_PER_LAYER, c, B=1, S=S), "act")
    rows.append(Rule("Memory (GiB = 2³⁰ bytes)", "activations per layer (an estimate: 16-bit, no recomputation)",
                     "S·B·H·(34 + 5·A·S/H) bytes", f"llama-7b, B = 1, S = {S}", _gib(act),
                     f"{memory.ACTIVATIONS_SOURCE}; notebook 08"))
    return rows


def finetune_rules() -> list[Rule]:
    """LoRA, QLoRA, quantized checkpoints and vLLM's block pool (notebook 12)."""
    section = "Fine-tuning, quantized weights, serving"
    c = load_config("llama-7b")
    lora = _same(lora_parameters(c, 16, "all-linear"),
                 evaluate("16*L*((H + A*d_k) + 2*(H + A_kv*d_k) + (A*d_k + H) + 3*(H + I))", c), "lora")
    rows = [Rule(section, "LoRA: r·(d_in + d_out) a matrix; all-linear", "r·L·[2(H + A·d_k) + 2(H + A_kv·d_k) + 3(H + I)]",
                 "llama-7b, r = 16", f"{fmt_int(lora)} ({lora / count_model(c).total:.2%})", "Hu et al. 2021; notebook 12")]
    n = 8192 * 8192
    nf4 = _same(nf4_bytes(n), -(-n // 2) + -(-n // 64) + 4 * -(-n // (64 * 256)) + 4 + 64 + 1024, "nf4")
    rows.append(Rule(section, "QLoRA's NF4, double-quantized: n values", "⌈n/2⌉ + ⌈n/64⌉ + 4⌈n/16,384⌉ + 1,092",
                     "n = 8,192²", f"{fmt_int(nf4)} B", "Dettmers et al. 2023; notebook 12"))
    oss = load_config("gpt-oss-120b")
    stored = stored_weights(oss).by_dtype
    experts = sum(p.count for p in param_table(oss) if p.kind == "expert")
    mxfp4 = 8 * (stored["uint8 (fp4 blocks)"] + stored["uint8 (e8m0 scales)"])  # bits of the experts
    _same(4 * mxfp4, 17 * experts, "mxfp4")  # 4 + 8/32 = 17/4 bits a weight
    l70 = load_config("llama-2-70b")
    awq = stored_weights(replace(l70, quantization={"quant_method": "awq", "bits": 4, "group_size": 128}))
    quantized = sum(p.count for p in param_table(l70) if p.layer is not None and p.kind == "matrix")
    rest = 2 * (count_model(l70).total - quantized)  # tables, norms, head: fp16 too
    awq_bits = 8 * (awq.by_dtype["int32"] + awq.by_dtype["fp16"] - rest)  # bits of the quantized layers
    _same(128 * awq_bits, (4 * 128 + 20) * quantized, "awq")  # 4 + 20/128 bits a weight
    rows.append(Rule(section, "bits a weight: the value's, plus its group's constants", "b + (constants' bits) / g",
                     "NF4 g 64; MXFP4 g 32; AWQ g 128; FP8 128² tiles", f"{8 * nf4 / n:.3f}; {mxfp4 / experts:.3f}; "
                     f"{awq_bits / quantized:.3f}; {8 + 32 / 128**2:.3f}", "notebooks 11, 12"))
    plan = serve(l70, "H100-SXM", 4, max_model_len=4096)
    blocks = _same(plan.num_blocks, (plan.budget - plan.weights - plan.reserve) // (16 * plan.bytes_per_token), "blocks")
    rows.append(Rule(section, "vLLM's KV pool: blocks of 16 tokens a GPU", "⌊(⌈U·M_CUDA⌉ − weights/G_tp − reserve) / "
                     "(16 · bytes a token)⌋", "llama-2-70b, 4 × H100, S = 4,096",
                     f"{fmt_int(blocks)} blocks, {plan.max_sequences} sequences", "Kwon et al. 2023; notebook 12",
                     "M_CUDA: what CUDA reports"))
    window = serve(oss, "H100-SXM", 1, max_model_len=8192)
    sliding = next(k for k in window.cache.kinds if k.kept is not None)
    reserved = _same(sliding.blocks(8192, 16, window.batched), -(-min(sliding.kept + window.batched, 8192) // 16) + 1,
                     "window")
    rows.append(Rule(section, "a window layer's blocks a sequence", "⌈min(W − 1 + S_chunk, S) / 16⌉ + 1",
                     f"gpt-oss-120b, S = 8,192, S_chunk {window.batched:,}", f"{reserved} (full: {8192 // 16})",
                     "vLLM; notebook 12"))
    return rows


def peak_rules() -> list[Rule]:
    """What a training step holds at its peak (notebook 13, :mod:`helpers.peak`), on steps measured on a GPU."""
    section = "A step's peak (torch.cuda.max_memory_allocated)"
    rows_ = {r["case"]: r for r in peak.measured()["rows"]}
    tiny = peak.measured_step(rows_["tinyllama-full-b4s2048"])
    p = peak.training_peak(tiny)
    top = _same(p.peak_bytes, max(sum(parts.values()) for parts in p.phases.values()), "peak")
    gpu_peak = rows_["tinyllama-full-b4s2048"]["peak_allocated"]
    rows = [Rule(section, "the peak: held + the largest phase + cuBLAS", "M_held + max(X_fwd, X_bwd, X_step) + 2·32 MiB",
                 "TinyLlama, full, B = 4, S = 2,048", f"{top / GIB:,.2f} GiB ({p.peak_phase})",
                 "notebook 13", f"H200: {gpu_peak / GIB:,.2f} GiB")]
    lora = peak.measured_step(rows_["llama7b-lora-b1s2048"])

    def wider(step: peak.Step, **keys: int) -> peak.Step:
        return replace(step, config=parse_config({**step.config.raw, **keys}, name=step.config.name))

    def added(step: peak.Step, phase: str, **keys: int) -> int:
        return (peak.training_peak(wider(step, **keys)).phases[phase]["activations and temporaries"]
                - peak.training_peak(step).phases[phase]["activations and temporaries"])

    T, V = lora.batch * lora.seq_len, lora.config["V"]
    _same(added(lora, peak.FORWARD, vocab_size=V + 1), 10 * T, "logits forward")
    _same(added(lora, peak.BACKWARD, vocab_size=V + 1), 12 * T, "logits backward")
    rows.append(Rule(section, "the loss: forward's end, backward's start", "10·B·S·V, 12·B·S·V bytes",
                     "llama-7b, LoRA, B = 1, S = 2,048", f"{10 * T * V / GIB:.2f}, {12 * T * V / GIB:.2f} GiB",
                     "notebook 13"))
    one = peak.measured_step(rows_["tinyllama-full-b1s4096-ck"])
    q = peak.training_peak(one)
    _same(q.phases[peak.STEP]["optimizer temporaries"], sum(peak.allocated_trained(one)), "foreach")
    rows.append(Rule(section, "AdamW (foreach) step: a temporary a trained tensor", "M_held + Σ⌈b·n_i⌉₅₁₂ ≈ 20·N (fp32)",
                     "TinyLlama, full, S = 4,096", f"{q.phase_totals()[peak.STEP] / GIB:,.2f} GiB", "notebook 13"))
    ck = replace(lora, checkpointing="full")
    layer = _same(added(ck, peak.BACKWARD, num_hidden_layers=ck.config["L"] + 1), 2 * T * ck.config["H"], "checkpoint")
    rows.append(Rule(section, "checkpointing keeps each layer's input", "b·B·S·H a layer", "llama-7b, LoRA, S = 2,048",
                     f"{fmt_int(layer)} B a layer", "notebook 13",
                     f"without: {fmt_int(added(lora, peak.FORWARD, num_hidden_layers=lora.config['L'] + 1))} B"))
    return rows


def rules() -> list[Rule]:
    """Every line of the cheatsheet, in the order of the series."""
    return encoder_rules() + decoder_rules() + compute_rules() + memory_rules() + finetune_rules() + peak_rules()


CSS = """
body { font-family: system-ui, -apple-system, 'Segoe UI', helvetica, arial, sans-serif; margin: 1.5em auto;
       max-width: 80em; padding: 0 1em; font-size: 14px; line-height: 1.35; color: #222; }
h1 { font-size: 1.45em; margin: 0 0 0.2em 0; }
p.lede { margin: 0 0 0.8em 0; color: #444; }
table { border-collapse: collapse; width: 100%; table-layout: fixed; }
col.rule { width: 21%; } col.formula { width: 22%; } col.example { width: 15%; } col.value { width: 19%; }
col.source { width: 23%; }
th, td { text-align: left; vertical-align: top; padding: 0.25em 0.5em; border-bottom: 1px solid #ddd; }
th.section { background: #eef2f7; font-size: 1.05em; padding-top: 0.45em; }
td.formula { font-family: menlo, consolas, 'DejaVu Sans Mono', monospace; font-size: 0.92em; white-space: normal; }
td.value { font-variant-numeric: tabular-nums; }
td.source, span.note { color: #555; font-size: 0.9em; }
span.note { display: block; }
@media print {
  @page { size: A4 landscape; margin: 8mm; }
  body { margin: 0; max-width: none; padding: 0; font-size: 5.9pt; line-height: 1.04; }
  h1 { font-size: 11pt; }
  p.lede { margin-bottom: 0.4em; }
  th, td { padding: 0.05em 0.3em; }
  th.section { padding-top: 0.2em; }
  a { color: inherit; text-decoration: none; }
  tr { break-inside: avoid; }
}
"""


def page(title: str, items: list[Rule]) -> str:
    """The cheatsheet as a standalone HTML page (no script, no network), one table, one section header per part."""
    out, section = [], None
    for r in items:
        if r.section != section:
            section = r.section
            out.append(f'<tr><th class="section" colspan="5">{html.escape(section)}</th></tr>')
        note = f'<span class="note">{html.escape(r.note)}</span>' if r.note else ""
        out.append(f'<tr class="rule"><td>{html.escape(r.name)}</td><td class="formula">{html.escape(r.formula)}</td>'
                   f'<td>{html.escape(r.example)}</td><td class="value">{html.escape(r.value)}{note}</td>'
                   f'<td class="source">{html.escape(r.source)}</td></tr>')
    rows = "\n".join(out)
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{html.escape(title)}</title>
<style>{CSS}</style>
</head>
<body>
<h1>{html.escape(title)}</h1>
<p class="lede">Every rule of the series on one page (print it: A4 landscape). Each example is computed by
<code>helpers</code> when the page is built and checked a second way; symbols as in the notebooks' legends
(V vocabulary, P positions, T segments, H hidden, I feed-forward width, L layers, A heads, A_kv key/value heads,
d_k head size, E experts, k experts per token, B batch, S sequence length, N parameters, D tokens, r LoRA rank,
g values a group, W window, S_chunk prefill chunk, M_CUDA memory CUDA reports, M_held bytes kept between steps, X a
phase's activations and temporaries). Memory in GiB (2³⁰ bytes).</p>
<table id="rules">
<colgroup><col class="rule"><col class="formula"><col class="example"><col class="value"><col class="source"></colgroup>
<tr><th>rule</th><th>formula</th><th>example</th><th>value</th><th>source</th></tr>
{rows}
</table>
</body>
</html>
"""
