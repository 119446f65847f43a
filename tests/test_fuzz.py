"""Never refuse a model transformers builds, never be silently wrong.

For every ``model_type`` of :data:`tests.strategies.WIDE` (raw configs drawn from the whole space transformers'
config classes accept: aliases, absent and null keys, ``head_dim`` not H/A, ``layer_types``, keys that change no
parameter, depths 0 and 1, group counts, heads that do not divide the width, and configs transformers refuses):

* **count**: either transformers builds the model (meta device, eager attention) and the engine's tensor table
  equals its ``named_parameters()`` name by name and shape by shape, its total equal; or transformers raises
  (in the config class or the model's ``__init__``) and :func:`helpers.parse_config` raises a ``ConfigError``
  (never another exception) and ``python -m helpers count`` prints one line ``error: FIELD: ...``, exit 2.
  An engine refusing a config transformers builds is a failure: that is the bug class this file hunts.
* **flops**: where transformers' forward pass runs (B = 1 or 2, a few tokens, eager attention and experts, on the
  meta device, or on the CPU for a mixture of experts, whose routing reads values), ``forward_flops`` equals
  ``FlopCounterMode``'s total, and the bytes its cache holds the engine's KV cache (fp32); where it fails (a decoder
  runs with its cache), the engine knows it (``ModelConfig.cannot_run``: flops, memory and budget refuse it, or the
  memory of its cache).

The seed is fixed (``derandomize=True``): the same configs every run, in CI and here. :data:`EXAMPLES` configs a
family and property, 40 (the reviewers' 1,280 configs over the 32 families of :data:`~tests.strategies.WIDE`); the
flops property counts only configs transformers builds (the others are drawn again, up to Hypothesis's limit of
invalid draws). ``FUZZ_EXAMPLES=n`` in the environment runs n instead (a longer hunt, the same seed).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, event, given, note, settings
from hypothesis import strategies as st

from helpers import count_model, param_table, parse_config
from helpers.cli import main as cli_main
from helpers.config import ConfigError
from helpers.flops import forward_flops, max_seq_len
from helpers.memory import kv_cache_bytes
from helpers.spec import ATTENTION_SCORES

from .conftest import (
    assert_refused, assert_runs_where_transformers_runs, forward_error, held_bytes, hf_model, recurrent_delta_rule,
    run_cli, surplus_flops, without_recurrence,
)
from .strategies import TINY, WIDE

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
transformers.logging.set_verbosity_error()  # tiny vocabularies make it warn about special token ids

from torch.utils.flop_counter import FlopCounterMode  # noqa: E402

from .test_flops import counted, hf_kwargs, is_moe  # noqa: E402

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", 40))  # configs per family and property (see the module's docstring)
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much])
CPU_LIMIT = 2_000_000  # parameters: a mixture of experts runs for real on the CPU, so only small ones


def built(raw: dict, device: str = "meta"):
    """transformers' model for ``raw``, or the exception transformers raised (config class or model init)."""
    try:
        return hf_model(raw, device)
    except Exception as error:  # noqa: BLE001 -- any refusal of transformers' counts as a refusal
        return error


def forward_pass(model, batch: int, seq_len: int, **kwargs) -> tuple[int, int | None]:
    """FlopCounterMode's total for one forward pass (Qwen3-Next's recurrence unseen: :func:`recurrent_delta_rule`),
    and the bytes of the cache it returns (keys, values, states), None where it returns none."""
    input_ids = torch.zeros(batch, seq_len, dtype=torch.long, device=next(model.parameters()).device)
    with torch.no_grad(), FlopCounterMode(display=False) as counter, recurrent_delta_rule():
        out = model(input_ids, **kwargs)
    cache = getattr(out, "past_key_values", None)
    return counter.get_total_flops(), None if cache is None or not hasattr(cache, "layers") else held_bytes(cache)


def cli_refusal(raw: dict) -> tuple[int, str, str]:
    """``python -m helpers count FILE`` run in this process: (exit status, stdout, stderr)."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "config.json"
        path.write_text(json.dumps(raw))
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = cli_main(["count", str(path)])
    return status, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("model_type", sorted(WIDE))
@given(data=st.data())
@FUZZ
def test_count_equals_transformers_or_both_refuse(model_type, data):
    raw = data.draw(WIDE[model_type], label="config")
    model = built(raw)
    event("transformers refuses" if isinstance(model, Exception) else "transformers builds")
    if isinstance(model, Exception):
        note(f"transformers refuses: {type(model).__name__}: {model}")
        with pytest.raises(ConfigError) as refused:
            parse_config(raw)
        status, out, err = cli_refusal(raw)
        assert (status, out) == (2, "")
        assert err.splitlines() == [f"error: {refused.value}"], err
        return
    try:
        c = parse_config(raw)
    except ConfigError as error:
        pytest.fail(f"the engine refuses a config transformers builds: {error}")
    ours = [(p.name, p.shape) for p in param_table(c)]
    theirs = [(name, tuple(p.shape)) for name, p in model.named_parameters()]
    assert ours == theirs
    assert count_model(c).total == sum(p.numel() for p in model.parameters())


@pytest.mark.parametrize("model_type", sorted(WIDE))
@given(data=st.data())
@FUZZ
def test_flops_equal_flop_counter(model_type, data):
    raw = data.draw(WIDE[model_type], label="config")
    # only configs transformers builds count towards the EXAMPLES (the count property checks the refusals)
    model = built(raw)
    assume(not isinstance(model, Exception))
    c = parse_config(raw)
    longest = max_seq_len(c)
    assume(longest is None or longest >= 1)  # else no position is left for a token: nothing runs
    B, S = data.draw(st.integers(1, 2), label="B"), data.draw(st.integers(1, min(longest or 6, 6)), label="S")
    if is_moe(model_type):  # routing reads values: build it for real, if small enough
        assume(count_model(c).total <= CPU_LIMIT)
        model = built(raw, "cpu")
    kwargs = hf_kwargs(model_type)
    if "cache" in c.cannot_run and model_type == "t5":
        # T5 with is_encoder_decoder false and a cache: transformers appends the cross-attention keys to the
        # self-attention cache (a DynamicCache, not an EncoderDecoderCache), so scores run over 2·S keys; the engine
        # declines that cache (memory refuses it) and counts the forward pass as it runs without one
        kwargs["use_cache"] = False
    if model_type == "t5":  # the decoder reads the same S tokens, is_encoder_decoder or not
        kwargs["decoder_input_ids"] = torch.zeros(B, S, dtype=torch.long, device=next(model.parameters()).device)
    try:
        measured, held = forward_pass(model, B, S, **kwargs)
    except Exception as error:  # noqa: BLE001 -- transformers cannot run it: nothing to compare
        event("transformers' forward pass fails")
        note(f"transformers' forward pass fails: {type(error).__name__}: {error}")
        # never silently answered: the engine knows it cannot run (or that its cache, used here, cannot be kept)
        assert c.cannot_run, f"transformers cannot run it ({type(error).__name__}: {error}), the engine answers"
        return
    event("compared with FlopCounterMode" + (" (queries and keys widened by the rotary step)" if "d_qk" in c.sizes else ""))
    # Qwen3-Next: its recurrence runs elementwise; Llama 4: transformers runs every token through all E experts, the
    # engine counts the k routed (surplus_flops)
    assert without_recurrence(forward_flops(c, B, S))[0] + surplus_flops(c, B, S) == measured
    # the cache: what a decoder's DynamicCache holds after S tokens (fp32); an encoder run as a decoder (BERT's
    # is_decoder) keeps one too, which the engine does not model (memory prints no cache for an encoder)
    ours = None if held is None or "cache" in c.cannot_run else kv_cache_bytes(c, B, S, "fp32")
    if ours is not None:
        event("KV cache compared")
        assert ours == held


# --- the command line itself, on a sample: one refused config per family of this file's authors -------------

REFUSED = [
    ({"model_type": "bert", "hidden_size": 10, "num_attention_heads": 3}, "num_attention_heads"),
    ({"model_type": "gpt2", "n_embd": 10, "n_head": 3}, "n_head"),
    ({"model_type": "t5", "feed_forward_proj": "gated-gelu-new"}, "feed_forward_proj"),
    ({"model_type": "distilbert", "dim": 10, "n_heads": 3}, "n_heads"),
]


@pytest.mark.parametrize(("raw", "field"), REFUSED)
def test_cli_refuses_in_one_line(raw, field, write_config):
    assert isinstance(built(raw), Exception)  # transformers refuses it too
    assert_refused(run_cli("count", str(write_config(raw))), field)


# --- classes the reviewers' fuzzer found (1,280 configs against transformers 5.23), each by its smallest example -----

SILENT = [  # answered, and silently wrong, before
    {"model_type": "roberta", "position_embedding_type": "relative_key", "architectures": None},  # RobertaModel's count
    {"model_type": "t5", "feed_forward_proj": "gated-silu", "is_gated_act": False},  # the file's flag: one wi
    {"model_type": "t5", "feed_forward_proj": "relu", "is_gated_act": True},  # and the reverse: wi_0 and wi_1
]


@pytest.mark.parametrize("raw", SILENT, ids=lambda r: json.dumps(r))
def test_count_follows_what_transformers_builds(raw, write_config):
    model = built(raw)
    status, out, err = cli_refusal(raw)
    assert status == 0, err
    total = int(next(line for line in out.splitlines() if line.startswith("total")).split()[-2].replace(",", ""))
    assert total == sum(p.numel() for p in model.parameters())


UNRUN = [  # weights stored but run on no token: flops crashed in the 6·N·D reconciliation before
    {"model_type": "albert", "num_hidden_layers": 0},
    {"model_type": "albert", "num_hidden_groups": 3, "num_hidden_layers": 2},
    {"model_type": "gpt2", "add_cross_attention": True},
    {"model_type": "bert", "add_cross_attention": True, "is_decoder": True},
    {"model_type": "electra", "add_cross_attention": True, "is_decoder": True},
    {"model_type": "xlm-roberta", "add_cross_attention": True, "is_decoder": True},
]


@pytest.mark.parametrize("raw", UNRUN, ids=lambda r: json.dumps(r))
def test_flops_of_weights_that_never_run(raw, write_config):
    from helpers.flops import six_n_d, six_n_d_gap

    c = parse_config(raw)
    flops = forward_flops(c, 1, 8)
    assert flops.forward == counted(built(raw), 1, 8, **hf_kwargs(raw["model_type"]))
    gap = six_n_d_gap(flops)
    assert sum(gap.values()) == six_n_d(c, 1, 8) - flops.training and gap["weights stored but run on no token"] > 0
    assert run_cli("flops", str(write_config(raw)), "--batch", "1", "--seq-len", "8").returncode == 0


ROTARY_ONE = [  # one rotary dimension per head: flops and memory refused before; transformers runs them
    {"model_type": "qwen3", "head_dim": 1},
    {"model_type": "llama", "head_dim": 1},
    {"model_type": "phi3", "hidden_size": 4},  # heads of H / A = 1
    {"model_type": "gemma", "head_dim": 1},
    {"model_type": "gemma2", "head_dim": 1},
    {"model_type": "gemma3_text", "head_dim": 1},
    {"model_type": "smollm3", "hidden_size": 4},  # layer 3 NoPE: its queries and keys stay 1 wide
    {"model_type": "modernbert", "hidden_size": 4},
    {"model_type": "gpt_neox", "hidden_size": 2, "rotary_pct": 1.0},
    {"model_type": "mixtral", "head_dim": 1},
    {"model_type": "qwen3_moe", "head_dim": 1},
    {"model_type": "glm4_moe", "head_dim": 1, "partial_rotary_factor": 1.0},
    {"model_type": "qwen3_next", "head_dim": 1, "partial_rotary_factor": 1.0},
    {"model_type": "gpt_oss", "head_dim": 3},  # its rotary step halves the head: 2 + 1 run as 2 + 2
]


@pytest.mark.parametrize("change", ROTARY_ONE, ids=lambda r: json.dumps(r))
def test_rotary_step_widens_queries_and_keys(change, write_config):
    """transformers' rotary step broadcasts a head of 1 dimension against the cos and sin of one pair of angles (GPT-OSS
    an odd head's halves), so queries and keys run 2 wide (d_qk), values 1: FlopCounterMode's total and the bytes its
    cache holds are the engine's (the scores 2·L·B·S²·A·(d_qk + d_k), keys d_qk wide), and the CLI answers."""
    raw = {**TINY[change["model_type"]], **change}
    c = parse_config(raw)
    assert c["d_qk"] == c["d_k"] + 1  # 2 for a head of 1, 4 for GPT-OSS's head of 3
    torch.manual_seed(0)
    for B, S in ((1, 1), (2, 3)):
        measured, held = forward_pass(built(raw, "cpu").eval(), B, S, **hf_kwargs(raw["model_type"]))
        assert without_recurrence(forward_flops(c, B, S))[0] + surplus_flops(c, B, S) == measured
        assert kv_cache_bytes(c, B, S, "fp32") == held
    path = write_config(raw)
    assert run_cli("flops", str(path), "--batch", "1", "--seq-len", "8").returncode == 0
    assert run_cli("memory", str(path)).returncode == 0


NULL_WINDOW = [  # sliding_window: null, where the model builds its sliding mask for every input or only where used
    ({"model_type": "gemma3", "text_config": {"num_hidden_layers": 0, "sliding_window": None}}, None),  # refused before
    ({"model_type": "gemma2", "num_hidden_layers": 0, "sliding_window": None}, "sliding_window"),  # answered before
    ({"model_type": "gemma2", "sliding_window": None, "layer_types": ["full_attention"] * 3}, "sliding_window"),
    ({"model_type": "gemma3_text", "num_hidden_layers": 0, "sliding_window": None}, "sliding_window"),
    ({"model_type": "gpt_oss", "num_hidden_layers": 0, "sliding_window": None}, "sliding_window"),
    ({"model_type": "gemma3", "text_config": {"sliding_window": None, "layer_types": ["full_attention"] * 3}}, None),
]


@pytest.mark.parametrize(("change", "forward"), NULL_WINDOW, ids=lambda r: json.dumps(r))
def test_null_window_runs_where_transformers_runs(change, forward, write_config):
    raw = {**TINY[change["model_type"]], **change}
    if "text_config" in change:
        raw["text_config"] = {**TINY["gemma3"]["text_config"], **change["text_config"]}
    ran = forward_error(raw, "cpu")
    c = parse_config(raw)
    if forward is None:
        assert ran == forward_flops(c, 1, 3).forward and not c.cannot_run
    else:
        assert isinstance(ran, Exception) and c.cannot_run["forward"][0] == forward
    assert_runs_where_transformers_runs(write_config(raw), forward, None)


HUNTED = [  # found by FUZZ_EXAMPLES=150 (4,800 configs transformers builds), each with its smallest example
    # DeepSeek-V2 with no rotary dimension: the angles fall back to H // A dimensions; one angle (H // A ≤ 2) broadcasts
    # against the 0-wide rotary part and runs (refused before), two or more fail (refused)
    ({"model_type": "deepseek_v2", "vocab_size": 1, "hidden_size": 1, "num_attention_heads": 1, "num_hidden_layers": 1,
      "kv_lora_rank": 0, "qk_nope_head_dim": 2, "qk_rope_head_dim": 0, "v_head_dim": 0, "intermediate_size": 1,
      "moe_intermediate_size": 1, "first_k_dense_replace": 1, "n_group": 1, "n_shared_experts": 0,
      "n_routed_experts": 1}, None),
    ({**TINY["deepseek_v2"], "qk_rope_head_dim": 0, "hidden_size": 8}, None),  # H // A = 2
    ({**TINY["deepseek_v2"], "qk_rope_head_dim": 0}, "qk_rope_head_dim"),  # H // A = 4: two angles
    # GPT-OSS with 0 experts: its experts one-hot encode the picks over 0 classes (answered before)
    ({"model_type": "gpt_oss", "vocab_size": 1, "hidden_size": 1, "num_attention_heads": 1, "num_hidden_layers": 1,
      "intermediate_size": 1, "num_key_value_heads": 1, "num_local_experts": 0, "num_experts_per_tok": 0},
     "num_local_experts"),
]


@pytest.mark.parametrize(("raw", "forward"), HUNTED, ids=lambda r: json.dumps(r))
def test_hunted_classes(raw, forward, write_config):
    c = parse_config(raw)
    ran = forward_error(raw, "cpu")
    if forward is None:
        assert ran == forward_flops(c, 1, 3).forward and not c.cannot_run
    else:
        assert isinstance(ran, Exception) and c.cannot_run["forward"][0] == forward
    assert_runs_where_transformers_runs(write_config(raw), forward, None)


NULL_ALIAS = [  # a null under an alias of the head count: transformers' config class sets the field to None unchecked,
    # and a model of no layers never reads it (refused before); one layer reads it and fails (refused, naming the alias)
    ({"model_type": "gpt2", "vocab_size": 1, "hidden_size": 1, "num_hidden_layers": 0, "num_attention_heads": None}, 0),
    ({"model_type": "distilbert", "vocab_size": 1, "hidden_size": 1, "hidden_dim": 1, "max_position_embeddings": 1,
      "num_hidden_layers": 0, "num_attention_heads": None}, 0),
    ({"model_type": "gpt2", "n_layer": 0, "n_head": 4, "num_attention_heads": None}, 0),  # the alias wins: None
    ({"model_type": "t5", "num_layers": 0, "num_attention_heads": None}, 0),  # the decoder's depth copies 0
    ({"model_type": "t5", "num_layers": 0, "head_dim": None}, 0),
    ({"model_type": "gpt2", "vocab_size": 1, "hidden_size": 1, "num_hidden_layers": 1, "num_attention_heads": None},
     "num_attention_heads"),
    ({"model_type": "distilbert", "num_hidden_layers": 1, "num_attention_heads": None}, "num_attention_heads"),
    ({"model_type": "t5", "num_hidden_layers": 0, "num_attention_heads": None}, "num_attention_heads"),  # 6 decoder layers
    ({"model_type": "gpt2", "n_layer": 0, "n_head": None}, "n_head"),  # its own key: the config class checks the type
]


def _without(model_type: str, key: str, **change) -> dict:
    """TINY[model_type] without ``key``, changed."""
    return {**{k: v for k, v in TINY[model_type].items() if k != key}, **change}


NULL_ALIAS += [  # the number of experts, read by the sparse layers alone: none built (a depth of 0, or every layer dense)
    (_without("mixtral", "num_local_experts", num_hidden_layers=0, num_experts=None), 0),
    (_without("gpt_oss", "num_local_experts", num_hidden_layers=0, num_experts=None), 0),
    (_without("deepseek_v2", "n_routed_experts", num_hidden_layers=1, num_experts=None), 0),  # first_k_dense_replace 1
    (_without("deepseek_v3", "n_routed_experts", num_hidden_layers=1, num_local_experts=None), 0),
    (_without("glm4_moe", "n_routed_experts", num_hidden_layers=1, num_local_experts=None), 0),
    (_without("mixtral", "num_local_experts", num_hidden_layers=1, num_experts=None), "num_experts"),
    (_without("deepseek_v2", "n_routed_experts", num_hidden_layers=2, num_experts=None), "num_experts"),
    (_without("glm4_moe", "n_routed_experts", num_hidden_layers=2, num_local_experts=None), "num_local_experts"),
    # Qwen3-MoE: every layer not in mlp_only_layers tests num_experts > 0, before the step: listing them all builds
    (_without("qwen3_moe", "num_experts", num_hidden_layers=2, mlp_only_layers=[1, 0], num_local_experts=None), 0),
    (_without("qwen3_moe", "num_experts", num_hidden_layers=2, mlp_only_layers=[0, 5], num_local_experts=None),
     "num_local_experts"),
    (_without("qwen3_moe", "num_experts", num_hidden_layers=2, mlp_only_layers=[1], decoder_sparse_step=2,
              num_local_experts=None), "num_local_experts"),  # layer 0 is dense by its step, but reads E first
]


@pytest.mark.parametrize(("raw", "refused"), NULL_ALIAS, ids=lambda r: json.dumps(r))
def test_null_alias_read_by_layers_alone(raw, refused, write_config):
    model = built(raw)
    if refused:
        assert isinstance(model, Exception)
        assert_refused(run_cli("count", str(write_config(raw))), refused)
        return
    c = parse_config(raw)
    assert [(p.name, p.shape) for p in param_table(c)] == [(n, tuple(p.shape)) for n, p in model.named_parameters()]
    assert count_model(c).total == sum(p.numel() for p in model.parameters())
    measured, _ = forward_pass(built(raw, "cpu"), 1, 1, **hf_kwargs(raw["model_type"]),
                               **({"decoder_input_ids": torch.zeros(1, 1, dtype=torch.long)} if raw["model_type"] == "t5"
                                  else {}))
    assert forward_flops(c, 1, 1).forward == measured
    path = write_config(raw)
    for command in (("count",), ("flops", "--batch", "1", "--seq-len", "1"), ("memory", "--seq-len", "1")):
        assert run_cli(*command, str(path)).returncode == 0


@pytest.mark.parametrize("model_class", ["T5EncoderModel", "T5ForTokenClassification"])
def test_null_heads_of_a_t5_without_decoder(model_class, write_config):
    """T5's heads and d_kv are read by its layers alone, and the encoder-only classes build no decoder layer: with
    ``num_layers`` 0 they build whatever ``num_decoder_layers`` says (counted), where T5's default class fails."""
    raw = {"model_type": "t5", "vocab_size": 8, "d_model": 4, "d_ff": 4, "num_layers": 0, "num_decoder_layers": 2,
           "num_attention_heads": None}
    with torch.device("meta"):
        model = getattr(transformers, model_class)(transformers.AutoConfig.for_model(**raw))
    assert count_model(parse_config(raw, model_class=model_class)).total == sum(p.numel() for p in model.parameters())
    path = write_config(raw)
    assert run_cli("count", str(path), "--class", model_class).returncode == 0
    assert isinstance(built(raw), Exception)
    assert_refused(run_cli("count", str(path)), "num_attention_heads")


NO_KEY_HEADS = [  # DeepSeek-V2 with A_kv > A: repeat_kv repeats the A key and value heads A // A_kv = 0 times; one query
    # head broadcasts against none, and values 0 wide leave o_proj's input 0 wide: eager attention runs it, with scores
    # of 0 heads, no FLOP (flops and memory refused it before); sdpa fails to reshape its output (refused there)
    {"model_type": "deepseek_v2", "vocab_size": 1, "hidden_size": 1, "num_attention_heads": 1, "num_key_value_heads": 2,
     "num_hidden_layers": 1, "q_lora_rank": None, "kv_lora_rank": 0, "qk_nope_head_dim": 2, "qk_rope_head_dim": 2,
     "v_head_dim": 0, "intermediate_size": 1, "first_k_dense_replace": 1},
    {"model_type": "deepseek_v2", "vocab_size": 1, "hidden_size": 1, "num_attention_heads": 1, "num_hidden_layers": 1,
     "kv_lora_rank": 0, "qk_nope_head_dim": 2, "qk_rope_head_dim": 2, "v_head_dim": 0, "intermediate_size": 1,
     "moe_intermediate_size": 1, "first_k_dense_replace": 0, "n_group": 1, "topk_group": 1, "num_experts_per_tok": 0,
     "n_shared_experts": 0, "num_key_value_heads": 2, "routed_scaling_factor": 1.0, "n_routed_experts": 1},  # as hunted
]


def _sdpa_forward_fails(raw: dict) -> bool:
    config = transformers.AutoConfig.for_model(**raw)
    config._attn_implementation = "sdpa"
    model = transformers.DeepseekV2ForCausalLM(config)
    try:
        with torch.no_grad():
            model(torch.zeros(1, 3, dtype=torch.long), use_cache=True)
    except RuntimeError:
        return True
    return False


@pytest.mark.parametrize("raw", NO_KEY_HEADS, ids=lambda r: json.dumps(r))
def test_no_key_head_left_runs_eager(raw, write_config):
    c = parse_config(raw)
    assert list(c.cannot_run) == ["sdpa"] and c.cannot_run["sdpa"][0] == "num_key_value_heads"
    model = built(raw, "cpu").eval()
    for B, S in ((1, 1), (2, 3)):
        measured, held = forward_pass(model, B, S, use_cache=True)
        flops = forward_flops(c, B, S)
        assert flops.forward == measured and {line.component: line.formula for line in flops.lines}[ATTENTION_SCORES] == "0"
        assert kv_cache_bytes(c, B, S, "fp32") == held
    assert _sdpa_forward_fails(raw)
    path = write_config(raw)
    assert_runs_where_transformers_runs(path, None, None)
    for command in ("memory", "finetune"):
        tail = ("--new-tokens", "1") if command == "memory" else ("--method", "full")
        assert_refused(run_cli(command, str(path), "--seq-len", "3", *tail), "num_key_value_heads")  # sdpa, the default
    # eager: the heads pass (DeepSeek-V2's generate has no closed form: refused, naming model_type)
    assert_refused(run_cli("memory", str(path), "--seq-len", "3", "--new-tokens", "1", "--attn", "eager"), "model_type")


@pytest.mark.parametrize("change", [{"v_head_dim": 1}, {"num_attention_heads": 2, "num_key_value_heads": 3, "hidden_size": 2}],
                         ids=lambda r: json.dumps(r))
def test_no_key_head_left_fails_otherwise(change, write_config):
    raw = {**NO_KEY_HEADS[0], **change}
    assert isinstance(forward_error(raw, "cpu"), Exception)
    assert parse_config(raw).cannot_run["forward"][0] == "num_key_value_heads"
    assert_runs_where_transformers_runs(write_config(raw), "num_key_value_heads", None)
