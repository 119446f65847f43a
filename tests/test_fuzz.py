"""The property behind issue 18: never refuse a model transformers builds, never be silently wrong.

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
  ``FlopCounterMode``'s total; where it fails (a decoder runs with its cache), the engine knows it
  (``ModelConfig.cannot_run``: flops, memory and budget refuse it, or the memory of its cache).

The seed is fixed (``derandomize=True``): the same configs every run, in CI and here.
"""

from __future__ import annotations

import contextlib
import io
import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, note, settings
from hypothesis import strategies as st

from helpers import count_model, param_table, parse_config
from helpers.cli import main as cli_main
from helpers.config import ConfigError
from helpers.families.llama import ROTARY_ONE
from helpers.flops import forward_flops, max_seq_len

from .conftest import assert_refused, hf_model, run_cli, surplus_flops, without_recurrence
from .strategies import WIDE

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
transformers.logging.set_verbosity_error()  # tiny vocabularies make it warn about special token ids

from .test_flops import counted, hf_kwargs, is_moe  # noqa: E402

EXAMPLES = 25  # configs per family and property: the whole file in about a minute on two cores
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
CPU_LIMIT = 2_000_000  # parameters: a mixture of experts runs for real on the CPU, so only small ones


def built(raw: dict, device: str = "meta"):
    """transformers' model for ``raw``, or the exception transformers raised (config class or model init)."""
    try:
        return hf_model(raw, device)
    except Exception as error:  # noqa: BLE001 -- any refusal of transformers' counts as a refusal
        return error


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
    model = built(raw)
    if isinstance(model, Exception):
        return  # the count property checks the refusal
    c = parse_config(raw)
    longest = max_seq_len(c)
    if longest is not None and longest < 1:
        return  # no position left for a token: nothing runs
    B, S = data.draw(st.integers(1, 2), label="B"), data.draw(st.integers(1, min(longest or 6, 6)), label="S")
    moe = is_moe(model_type)
    if moe:  # routing reads values: build it for real, if small enough
        if count_model(c).total > CPU_LIMIT:
            return
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
        measured = counted(model, B, S, **kwargs)
    except Exception as error:  # noqa: BLE001 -- transformers cannot run it: nothing to compare
        event("transformers' forward pass fails")
        note(f"transformers' forward pass fails: {type(error).__name__}: {error}")
        # never silently answered: the engine knows it cannot run (or that its cache, used here, cannot be kept)
        assert c.cannot_run, f"transformers cannot run it ({type(error).__name__}: {error}), the engine answers"
        return
    if c.cannot_run.get("forward", ("", ""))[1] == ROTARY_ONE:
        # the one exception, stated: transformers' rotary step broadcasts a head of 1 dimension against 2 angles, so
        # its queries and keys run 2 wide -- not the model the config describes; flops/memory refuse it naming head_dim
        event("rotary head of 1 dimension: refused by the engine, run 2 wide by transformers")
        with pytest.raises(ConfigError) as refusal:
            forward_flops(c, B, S)
        assert refusal.value.field in ("head_dim", "rotary_pct") and "\n" not in str(refusal.value)
        return
    event("compared with FlopCounterMode")
    # Qwen3-Next: its recurrence runs elementwise; Llama 4: transformers runs every token through all E experts, the
    # engine counts the k routed (surplus_flops)
    assert without_recurrence(forward_flops(c, B, S))[0] + surplus_flops(c, B, S) == measured


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
