"""FLOPs from the parameter tables == what ``torch.utils.flop_counter.FlopCounterMode`` counts.

Forward and forward + backward, on the meta device with eager attention and no attention mask, against
transformers' own models (every family's class: BertModel / RobertaModel with pooler, GPT2LMHeadModel,
LlamaForCausalLM, MistralForCausalLM ...) and
against the plain-torch reference models of ``helpers.torch_ref``; then the ``flops`` command line.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import LM_HEAD, POOLER, count_model, load_config, param_table, parse_config
from helpers.flops import (
    ATTENTION_PROJECTIONS, ATTENTION_SCORES, causal_scores_flops, causal_training_flops, flops_report,
    forward_flops, matmul_parameters, matmul_tokens, max_seq_len, non_embedding_parameters, palm_training_flops, six_n_d,
    six_n_d_gap,
)

from .conftest import (
    ROOT, assert_refused, recurrent_delta_rule, run_cli, run_cli_without_torch, surplus_flops, without_recurrence,
)
from .strategies import STRATEGIES, TINY

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
from torch.utils.flop_counter import FlopCounterMode  # noqa: E402

from helpers import torch_ref  # noqa: E402
from helpers.families import FAMILIES  # noqa: E402
from helpers.params import EXPERT, matmul_count, param_layout  # noqa: E402

CLASSES = {model_type: family.architecture for model_type, family in FAMILIES.items()}


def is_moe(model_type: str) -> bool:
    """A family with routed experts: its forward picks experts from the values, which meta tensors lack."""
    c = parse_config(TINY[model_type])
    return any(p.kind == EXPERT for p, _ in param_layout(c).rows())


def hf_model(raw: dict, experts: str = "eager"):
    """transformers' model for a raw config, on the meta device, with eager (full S×S) attention.

    A mixture of experts is built for real on the CPU (its routing reads values), its experts run by
    ``experts`` (``"eager"``: one matmul per expert hit, as FlopCounterMode sees them).
    """
    config = transformers.AutoConfig.for_model(**raw)
    config._attn_implementation = "eager"
    if is_moe(raw["model_type"]):
        config._experts_implementation = experts
        return getattr(transformers, CLASSES[raw["model_type"]])(config)
    with torch.device("meta"):
        return getattr(transformers, CLASSES[raw["model_type"]])(config)


def _scalar(out) -> "torch.Tensor":
    """One scalar from every output a model returns, to run the backward pass through all of them."""
    if isinstance(out, torch.Tensor):
        return out.sum()
    if isinstance(out, tuple):  # the reference BertModel: (hidden states, pooled)
        return sum(t.sum() for t in out)
    if getattr(out, "logits", None) is not None:
        return out.logits.sum()
    pooled = getattr(out, "pooler_output", None)  # DistilBERT and ELECTRA have no pooler
    return out.last_hidden_state.sum() + (pooled.sum() if pooled is not None else 0)


def counted(model, batch: int, seq_len: int, backward: bool = False, **kwargs) -> int:
    """FlopCounterMode's total for one forward pass (and its backward pass) on input_ids on the model's device."""
    forward, training = counted_step(model, batch, seq_len, backward=backward, **kwargs)
    return training if backward else forward


def counted_step(model, batch: int, seq_len: int, backward: bool = True, **kwargs) -> tuple[int, int]:
    """FlopCounterMode's totals for one forward pass, and for that pass and its backward pass: (forward, training).

    One pass serves both: the forward total is read when the forward pass ends, before the backward pass starts
    (a forward pass run alone counts the same). With ``backward=False`` the training total is not measured (0)."""
    input_ids = torch.zeros(batch, seq_len, dtype=torch.long, device=next(model.parameters()).device)
    if getattr(getattr(model, "config", None), "is_encoder_decoder", False):  # T5: the decoder reads the same S tokens
        kwargs = {**kwargs, "decoder_input_ids": input_ids}
    with FlopCounterMode(display=False) as counter, recurrent_delta_rule():  # Qwen3-Next's recurrence: not seen
        out = model(input_ids, **kwargs)
        forward = counter.get_total_flops()
        if backward:
            _scalar(out).backward()
    return forward, counter.get_total_flops() if backward else 0


def hf_kwargs(model_type: str) -> dict:
    # Decoders get a cache: without one, transformers 5 checks position_ids for packed sequences with a
    # data-dependent .item(), which meta tensors cannot answer. The cache adds no matmul.
    return {"use_cache": True} if FAMILIES[model_type].is_decoder else {}


# Llama 4's experts have no kernel choice: transformers runs every token through all of them (surplus_flops)
@pytest.mark.parametrize("model_type", [t for t in CLASSES if is_moe(t) and FAMILIES[t].surplus_flops is None])
def test_grouped_mm_experts_hide_their_matmuls_from_flop_counter(model_type):
    """The trap: transformers' default ``grouped_mm`` experts escape FlopCounterMode, by exactly the expert matmuls.

    The engine counts the eager experts (each routed token through k experts); with ``grouped_mm`` the
    counter sees everything else (attention, router, LM head) and none of the experts' FLOPs.
    """
    raw, B, S = TINY[model_type], 2, 5
    c = parse_config(raw)
    experts = sum((repeat * 2 * matmul_tokens(p, c, B, S) * matmul_count(p)
                   for p, repeat in param_layout(c).rows() if p.kind == EXPERT), 0)
    assert experts > 0
    eager = counted(hf_model(raw, "eager"), B, S, **hf_kwargs(model_type))
    grouped = counted(hf_model(raw, "grouped_mm"), B, S, **hf_kwargs(model_type))
    assert eager == without_recurrence(forward_flops(c, B, S))[0]
    assert grouped == eager - experts


@st.composite
def cases(draw, model_type: str) -> tuple[dict, int, int]:
    """A random small config of ``model_type`` with a batch size and a length its positions allow."""
    raw = draw(STRATEGIES[model_type])
    longest = max_seq_len(parse_config(raw))
    if longest is not None and longest < 1:  # RoBERTa needs P >= 3
        raw["max_position_embeddings"] = 3
        longest = 1
    seq_len = draw(st.integers(1, min(longest or 12, 12)))
    return raw, draw(st.integers(1, 3)), seq_len


@pytest.mark.parametrize("source", ["transformers", "torch_ref"])
@pytest.mark.parametrize("model_type", list(CLASSES))
@given(data=st.data())
@settings(max_examples=15, deadline=None)
def test_forward_and_backward(source, model_type, data):
    """FlopCounterMode on transformers' eager model and on the plain-torch reference equals the engine.

    Qwen3-Next's gated delta rule: the reference runs its recurrence as matmuls (all counted); transformers' model runs
    it elementwise (:func:`tests.conftest.recurrent_delta_rule`), so there the engine's recurrence line is left out.
    Llama 4: transformers' model runs every token through every expert (:func:`tests.conftest.surplus_flops`, 3× in a
    training step as any matmul); the reference, as the engine, the k routed.
    """
    raw, B, S = data.draw(cases(model_type))
    c = parse_config(raw)
    flops = forward_flops(c, B, S)
    forward, training = flops.forward, flops.training
    if source == "transformers":
        model, kwargs = hf_model(raw), hf_kwargs(model_type)
        forward, training = without_recurrence(flops)
        forward, training = forward + surplus_flops(c, B, S), training + 3 * surplus_flops(c, B, S)
    else:
        model, kwargs = torch_ref.build(c), {}
    assert counted_step(model, B, S, **kwargs) == (forward, training)  # one forward pass counted, then its backward


def test_flop_count_helper_of_the_reference():
    """``helpers.torch_ref.flop_count`` (used by notebook 08) counts what FlopCounterMode counts here."""
    for name in ("bert-base-uncased", "gpt2", "llama-7b"):
        c = load_config(name)
        flops = forward_flops(c, 2, 16)
        assert torch_ref.flop_count(torch_ref.build(c), 2, 16) == counted(torch_ref.build(c), 2, 16) == flops.forward
        assert torch_ref.flop_count(torch_ref.build(c), 2, 16, backward=True) == flops.training


def test_bert_base_is_the_measured_figure():
    c = load_config("bert-base-uncased")
    flops = forward_flops(c, 1, 128)
    assert flops.forward == 22_348_431_360  # FlopCounterMode on transformers' BertModel (REFERENCE.md)
    assert counted(hf_model(json.loads((ROOT / "data/models/bert-base-uncased.json").read_text())), 1, 128) == flops.forward
    assert counted(torch_ref.build(c), 1, 128) == flops.forward


@pytest.mark.parametrize(("name", "B", "S"), [("gpt2", 2, 64), ("llama-2-70b", 1, 32), ("roberta-base", 1, 512)])
def test_shipped_models_against_the_reference(name, B, S):
    c = load_config(name)
    assert counted(torch_ref.build(c), B, S) == forward_flops(c, B, S).forward


def test_gqa_projections_and_scores():
    """LLaMA 2 70B: K and V project to A_kv·d_k = H/8; the S×S matmuls still run over all A query heads."""
    c = load_config("llama-2-70b")
    H, L, A, A_kv, d_k = c["H"], c["L"], c["A"], c["A_kv"], c["d_k"]
    assert A_kv < A
    parts = forward_flops(c, 1, 2048).by_component()
    assert parts[ATTENTION_PROJECTIONS] == L * 2 * 2048 * (2 * H * H + 2 * H * A_kv * d_k)
    assert parts[ATTENTION_SCORES] == L * 2 * 2 * 2048**2 * A * d_k


def test_lm_head_and_pooler_tokens():
    gpt2, bert = load_config("gpt2"), load_config("bert-base-uncased")
    assert forward_flops(gpt2, 3, 10).by_component()[LM_HEAD] == 2 * 3 * 10 * gpt2["V"] * gpt2["H"]  # tied wte
    assert forward_flops(bert, 3, 10).by_component()[POOLER] == 2 * 3 * bert["H"] ** 2  # [CLS] only


@pytest.mark.parametrize("name", ["bert-base-uncased", "gpt2", "llama-7b", "llama-2-70b"])
def test_six_n_d_gap_adds_up(name):
    c = load_config(name)
    S = min(max_seq_len(c) or 2048, 2048)
    flops = forward_flops(c, 2, S)
    gap = six_n_d_gap(flops)
    assert sum(gap.values()) == six_n_d(c, 2, S) - flops.training
    assert six_n_d(c, 2, S) == 6 * count_model(c).total * 2 * S
    tables = sum(p.count for p in param_table(c) if p.component == "embeddings")
    if c.flags.get("tie_word_embeddings"):  # the token table is the LM head: a matmul after all
        tables -= c["V"] * c["H"]
    assert gap["embedding tables (lookups, no matmul)"] == 6 * 2 * S * tables
    assert gap["attention scores/values (S², no parameters)"] == -3 * flops.by_component()[ATTENTION_SCORES]


def test_bad_sizes_are_refused():
    with pytest.raises(ValueError):
        forward_flops(load_config("gpt2"), 0, 10)


def test_breakdown_table_ends_with_the_total():
    text = flops_report(forward_flops(load_config("bert-base-uncased"), 1, 128))
    assert text.splitlines()[-1].split()[:2] == ["total", "22,348,431,360"]


# --- command line ---------------------------------------------------------------------------------

def test_cli_text():
    result = run_cli("flops", "bert-base-uncased", "--batch", "1", "--seq-len", "128")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert any(line.startswith("total") and "22,348,431,360" in line for line in lines)
    for component, formula in [("attention projections", "8L·B·S·H²"), ("attention scores/values", "4L·B·S²·H"),
                               ("feed-forward", "4L·B·S·H·I"), ("pooler", "2B·H²"), ("embeddings", "0")]:
        assert any(line.startswith(component) and formula in line for line in lines), component
    assert any(line.startswith("6·N·D (N = 109,482,240") for line in lines)


def test_cli_json_schema():
    result = run_cli("flops", "llama-2-70b", "--batch", "2", "--seq-len", "300", "--json")
    doc = json.loads(result.stdout)
    flops = forward_flops(load_config("llama-2-70b"), 2, 300)
    assert list(doc) == ["model", "batch", "seq_len", "tokens", "forward_flops", "training_flops", "breakdown", "six_n_d"]
    assert (doc["model"], doc["batch"], doc["seq_len"], doc["tokens"]) == ("llama-2-70b", 2, 300, 600)
    assert doc["forward_flops"] == flops.forward and doc["training_flops"] == flops.training
    assert all(list(row) == ["component", "formula", "forward_flops", "training_flops"] for row in doc["breakdown"])
    assert sum(row["forward_flops"] for row in doc["breakdown"]) == doc["forward_flops"]
    assert sum(row["training_flops"] for row in doc["breakdown"]) == doc["training_flops"]
    rule = doc["six_n_d"]
    assert rule["flops"] == 6 * rule["parameters"] * rule["tokens"]
    assert sum(rule["minus_training_flops"].values()) == rule["flops"] - doc["training_flops"]


BAD = [
    (["--batch", "0", "--seq-len", "5"], "--batch"),
    (["--batch", "1", "--seq-len", "-3"], "--seq-len"),
    (["--batch", "two", "--seq-len", "5"], "--batch"),
    (["--batch", "1.5", "--seq-len", "5"], "--batch"),
    (["--batch", "1_000", "--seq-len", "5"], "--batch"),
    (["--batch", "+8", "--seq-len", "5"], "--batch"),
    (["--seq-len", "5"], "--batch"),
    (["--batch", "1"], "--seq-len"),
    (["--batch", "1", "--seq-len", "513"], "--seq-len"),  # BERT-base has 512 positions
]


@pytest.mark.parametrize(("args", "field"), BAD)
def test_cli_bad_options(args, field):
    assert_refused(run_cli("flops", "bert-base-uncased", *args), field)


def test_cli_bad_config(write_config):
    result = run_cli("flops", str(write_config('{"model_type": "bert", "hidden_size": 100}')), "--batch", "1",
                     "--seq-len", "4")
    assert_refused(result, "num_attention_heads")


def test_cli_text_without_torch():
    result = run_cli_without_torch("flops", "llama-7b", "--batch", "1", "--seq-len", "2048")
    assert result.returncode == 0, result.stderr
    assert f"{forward_flops(load_config('llama-7b'), 1, 2048).forward:,}" in result.stdout


# --- which N: Kaplan's, Chinchilla's, PaLM's; causal attention ---------------------------------------------

def test_kaplan_non_embedding_parameters():
    """Kaplan et al. 2020's N: the total less the vocabulary and position tables (and an untied LM head)."""
    gpt2, llama, bert = (load_config(n) for n in ("gpt2", "llama-7b", "bert-base-uncased"))
    H, L = gpt2["H"], gpt2["L"]
    assert non_embedding_parameters(gpt2) == 12 * L * H**2 + 13 * L * H + 2 * H  # 12·L·H² + biases and norms
    assert non_embedding_parameters(llama) == count_model(llama).total - 2 * llama["V"] * llama["H"]
    assert non_embedding_parameters(bert) == count_model(bert).total - (bert["V"] + bert["P"] + bert["T"]) * bert["H"]
    assert six_n_d(gpt2, 2, 64, non_embedding_parameters(gpt2)) == 6 * non_embedding_parameters(gpt2) * 2 * 64


@pytest.mark.parametrize("name", ["gpt2", "gpt2-xl", "gpt3-175b", "llama-7b", "llama-2-70b"])
def test_palm_formula_is_the_training_count(name):
    """Chowdhery et al. 2022, App. B: (6N + 12·L·H·Q·T) per token, N = the weights every token multiplies."""
    c = load_config(name)
    for B, S in ((1, 1), (2, 100), (1, 2048)):
        flops = forward_flops(c, B, S)
        assert palm_training_flops(c, B, S) == flops.training
        assert palm_training_flops(c, B, S) == (6 * matmul_parameters(c) + 12 * c["L"] * c["A"] * c["d_k"] * S) * B * S


def test_palm_formula_misses_only_bert_pooler():
    c = load_config("bert-base-uncased")
    assert palm_training_flops(c, 3, 50) == forward_flops(c, 3, 50).training - 6 * 3 * c["H"] ** 2


@pytest.mark.parametrize("model_type", ["gpt2", "llama"])
@given(data=st.data())
@settings(max_examples=25, deadline=None)
def test_palm_formula_on_random_decoders(model_type, data):
    raw, B, S = data.draw(cases(model_type))
    c = parse_config(raw)
    assert palm_training_flops(c, B, S) == forward_flops(c, B, S).training


def _row_by_row_causal(B: int, A: int, S: int, d_k: int, d_v: int | None = None) -> int:
    """FlopCounterMode on attention computed query by query, each against the keys up to itself only."""
    q, k = (torch.zeros(B, A, S, d_k, device="meta") for _ in range(2))
    v = torch.zeros(B, A, S, d_v or d_k, device="meta")
    with FlopCounterMode(display=False) as counter:
        for i in range(S):
            weights = torch.matmul(q[:, :, i:i + 1], k[:, :, :i + 1].transpose(-1, -2)).softmax(-1)
            torch.matmul(weights, v[:, :, :i + 1])
    return counter.get_total_flops()


@pytest.mark.parametrize(("B", "S"), [(1, 1), (2, 7), (3, 16)])
def test_causal_triangle_is_what_a_causal_kernel_computes(B, S):
    raw = {"model_type": "llama", "vocab_size": 40, "hidden_size": 24, "num_attention_heads": 6,
           "num_key_value_heads": 2, "num_hidden_layers": 3, "intermediate_size": 20}
    c = parse_config(raw)
    assert c["L"] * _row_by_row_causal(B, c["A"], S, c["d_k"]) == causal_scores_flops(c, B, S)
    flops = forward_flops(c, B, S)
    full = flops.by_component()[ATTENTION_SCORES]
    assert 2 * causal_scores_flops(c, B, S) == full * (S + 1) // S  # a little over half: S(S+1)/2 of S²
    assert causal_training_flops(flops) == flops.training - 3 * (full - causal_scores_flops(c, B, S))


def test_causal_triangle_with_values_narrower_than_keys():
    """DeepSeek-V3: queries and keys d_nope + d_rope = 192 wide, values d_v = 128."""
    c = load_config("deepseek-v3")
    assert (c["d_k"], c["d_v"]) == (192, 128)
    assert c["L"] * _row_by_row_causal(2, c["A"], 5, c["d_k"], c["d_v"]) == causal_scores_flops(c, 2, 5)


def test_encoders_have_no_causal_triangle():
    with pytest.raises(ValueError):
        causal_scores_flops(load_config("bert-base-uncased"), 1, 8)
    with pytest.raises(ValueError, match="not a decoder-only model"):  # T5's encoder and cross-attention
        causal_scores_flops(load_config("t5-small"), 1, 8)


@pytest.mark.parametrize(("name", "windowed"), [("mistral-7b-v0.1", 32), ("gpt-oss-20b", 12), ("gemma-3-27b-it", 52),
                                                ("llama-4-scout-17b-16e-text", 36), ("modernbert-base", 14),
                                                ("llama-7b", 0), ("bert-base-uncased", 0)])
def test_windowed_layers_say_their_scores_are_counted_as_eager_attention_runs_them(name, windowed):
    """The engine counts S×S scores in every layer (eager attention masks after the matmul, as FlopCounterMode sees
    it); where some layers have a window, a chunk or a local span, the table says so under it, naming how many."""
    from helpers.flops import flops_report, flop_notes
    flops = forward_flops(load_config(name), 1, 256)
    note = flop_notes(flops).get("attention scores/values")
    assert (note is not None) == bool(windowed)
    if windowed:
        assert note.startswith(f"{windowed} windowed") and f"note: {note}" in flops_report(flops)
