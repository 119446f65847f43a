"""One printable page with every rule of the series: the formula, one example computed by ``helpers``, its source.

``make html`` writes it as build/html/cheatsheet.html (``python .ci/build_site.py cheatsheet OUT``), linked from the
index. Nothing on the page is typed in: each example is computed here from the engine when the page is built, and
each is computed a second way (the formula evaluated against the engine's tensor table, torch-free) before it is
written; a disagreement stops the build. tests/test_html.py checks the page against :func:`rules` again.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from fractions import Fraction

from helpers import (
    ATTENTION, EMBEDDINGS, FEED_FORWARD, LAYER_NORM, POOLER, ModelConfig, classification_head, component_counts, component_formulas,
    count_model, evaluate, fmt_int, load_config, param_table, pretraining_heads, render, total,
)
from helpers import budget, estimates, flops, memory

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
    d = budget.decode(c, gpu)
    rows.append(Rule("FLOPs and budgets", "decoding ceiling: every weight and the KV cache read once per step",
                     "B · bandwidth / (weight bytes + KV bytes)", f"llama-7b bf16, B = {d.batch}, context {d.context}, "
                     f"{gpu.key}", f"≤ {d.bandwidth_tokens_per_s:,.1f} tokens/s ({d.bound} bound)",
                     "an upper bound; notebook 10"))
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
    S = 2048
    act = _same(memory.activation_bytes_per_layer(c, 1, S), evaluate(memory.ACTIVATIONS_PER_LAYER, c, B=1, S=S), "act")
    rows.append(Rule("Memory (GiB = 2³⁰ bytes)", "activations per layer (an estimate: 16-bit, no recomputation)",
                     "S·B·H·(34 + 5·A·S/H) bytes", f"llama-7b, B = 1, S = {S}", _gib(act),
                     f"{memory.ACTIVATIONS_SOURCE}; notebook 08"))
    return rows


def rules() -> list[Rule]:
    """Every line of the cheatsheet, in the order of the series."""
    return encoder_rules() + decoder_rules() + compute_rules() + memory_rules()


CSS = """
body { font-family: system-ui, -apple-system, 'Segoe UI', helvetica, arial, sans-serif; margin: 1.5em auto;
       max-width: 80em; padding: 0 1em; font-size: 14px; line-height: 1.35; color: #222; }
h1 { font-size: 1.45em; margin: 0 0 0.2em 0; }
p.lede { margin: 0 0 0.8em 0; color: #444; }
table { border-collapse: collapse; width: 100%; table-layout: fixed; }
col.rule { width: 22%; } col.formula { width: 23%; } col.example { width: 15%; } col.value { width: 20%; }
col.source { width: 20%; }
th, td { text-align: left; vertical-align: top; padding: 0.25em 0.5em; border-bottom: 1px solid #ddd; }
th.section { background: #eef2f7; font-size: 1.05em; padding-top: 0.45em; }
td.formula { font-family: menlo, consolas, 'DejaVu Sans Mono', monospace; font-size: 0.92em; white-space: normal; }
td.value { font-variant-numeric: tabular-nums; }
td.source, span.note { color: #555; font-size: 0.9em; }
span.note { display: block; }
@media print {
  @page { size: A4 landscape; margin: 8mm; }
  body { margin: 0; max-width: none; padding: 0; font-size: 6.8pt; line-height: 1.12; }
  h1 { font-size: 11pt; }
  p.lede { margin-bottom: 0.4em; }
  th, td { padding: 0.08em 0.3em; }
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
d_k head size, E experts, k experts per token, B batch, S sequence length, N parameters, D tokens). Memory in
GiB (2³⁰ bytes).</p>
<table id="rules">
<colgroup><col class="rule"><col class="formula"><col class="example"><col class="value"><col class="source"></colgroup>
<tr><th>rule</th><th>formula</th><th>example</th><th>value</th><th>source</th></tr>
{rows}
</table>
</body>
</html>
"""
