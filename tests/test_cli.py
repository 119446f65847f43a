"""``python -m helpers count``: the readable table, the exact JSON schema, and bad input."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from helpers import count_model, load_config

from .conftest import (
    ROOT, assert_refused, assert_runs_where_transformers_runs, run_cli, run_cli_subprocess, run_cli_without_torch,
)


def test_count_prints_the_breakdown():
    result = run_cli("count", "bert-base-uncased")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("bert-base-uncased (BertModel: V=30522 H=768")
    assert any(line.startswith("total") and "109,482,240" in line and "100.00%" in line for line in lines)
    for component, formula in [("embeddings", "(V + P + T)·H"), ("attention", "L·(4H² + 4H)"),
                               ("feed-forward", "L·(2H·I + I + H)"), ("layer norm", "2H + 4L·H"),
                               ("pooler", "H² + H")]:
        assert any(line.startswith(component) and formula in line for line in lines), component


def test_count_tensors_lists_every_tensor():
    result = run_cli("count", "gpt2", "--tensors")
    rows = [line.split() for line in result.stdout.splitlines()]
    assert ["transformer.h.11.mlp.c_proj.weight", "[3072,", "768]", "feed-forward", "I·H", "2,359,296", "1.90%"] in rows
    assert "lm_head" not in result.stdout  # tied to transformer.wte.weight: listed once


def test_json_schema_is_exact():
    result = run_cli("count", "llama-7b", "--json")
    doc = json.loads(result.stdout)
    assert list(doc) == ["model", "class", "num_labels", "names", "total", "active", "components", "parameters"]
    assert doc["model"] == "llama-7b" and doc["total"] == doc["active"] == 6_738_415_616  # dense: every token uses all
    assert (doc["class"], doc["num_labels"], doc["names"]) == ("LlamaForCausalLM", None, "transformers")
    assert doc["components"] == count_model(load_config("llama-7b")).components
    assert all(list(p) == ["name", "shape", "count", "component"] for p in doc["parameters"])
    assert doc["parameters"][-1] == {"name": "lm_head.weight", "shape": [32000, 4096], "count": 131072000,
                                     "component": "lm head"}
    assert sum(p["count"] for p in doc["parameters"]) == doc["total"]


def test_path_to_a_config(write_config):
    path = write_config({"model_type": "bert", "num_hidden_layers": 2})
    doc = json.loads(run_cli("count", str(path), "--json").stdout)
    assert doc["model"] == str(path)
    assert doc["total"] == count_model(load_config(path)).total


def test_gpt3_is_exact():
    doc = json.loads(run_cli("count", "gpt3-175b", "--json").stdout)
    assert doc["total"] == 174_604_259_328


BAD_INPUT = [
    ('{"model_type": "bert", "hidden_size": 100}', "num_attention_heads"),
    ('{"model_type": "bert", "num_hidden_layers": "12"}', "num_hidden_layers"),
    ('{"model_type": "bert", "intermediate_size": -1}', "intermediate_size"),
    ('{"model_type": "bert", "vocab_size": false}', "vocab_size"),
    ('{"model_type": "bert", "hidden_size": 768.5}', "hidden_size"),
    ('{"model_type": "ponies"}', "model_type"),  # a type transformers knows (xlnet) is counted by it: test_fallback
    ('{"hidden_size": 768}', "model_type"),
    ("[1, 2, 3]", "config"),
    ('"bert"', "config"),
    ("not json at all", "CONFIG"),
    ("", "CONFIG"),
    ('{"model_type": "llama", "num_attention_heads": 0}', "num_attention_heads"),  # transformers fails to build it
    ('{"model_type": "gpt2", "tie_word_embeddings": "no"}', "tie_word_embeddings"),
]


@pytest.mark.parametrize(("content", "field"), BAD_INPUT)
def test_bad_input_is_one_line_and_exit_2(write_config, content, field):
    assert_refused(run_cli("count", str(write_config(content))), field)


def test_what_transformers_builds_but_cannot_run_is_counted_and_refused_by_flops_and_memory(write_config):
    """32 query heads do not share 7 key/value heads: transformers builds the model, its forward pass fails."""
    assert_runs_where_transformers_runs(write_config({"model_type": "llama", "num_key_value_heads": 7}),
                                        "num_key_value_heads", None)


@pytest.mark.parametrize(("args", "field"), [((), "COMMAND"), (("count",), "CONFIG"), (("frobnicate",), "COMMAND"),
                                             (("flops", "gpt2", "--batch"), "--batch"),
                                             (("count", "gpt2", "--bogus"), "COMMAND")])
def test_usage_errors_are_one_line_too(args, field):
    assert_refused(run_cli(*args), field)


def test_missing_path_and_directory(tmp_path):
    for arg in (str(tmp_path / "missing.json"), str(tmp_path), "no-such-model"):
        assert_refused(run_cli("count", arg), "CONFIG")


@pytest.mark.parametrize("args", [("count", "bert-base-uncased", "--json"),
                                  ("flops", "gpt2", "--batch", "1", "--seq-len", "8", "--json"),
                                  ("memory", "llama-7b", "--json")])
def test_cli_does_not_import_torch(args):
    result = run_cli_without_torch(*args)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["model"] == args[1]


def test_a_closed_pipe_is_no_error():
    result = subprocess.run(f"{sys.executable} -m helpers count gpt3-175b --tensors | head -1", shell=True,
                            capture_output=True, text=True, cwd=ROOT)
    assert result.stdout.startswith("gpt3-175b (GPT2LMHeadModel") and result.stderr == ""


# Every kind of answer, for the in-process runner the tests use (tests/conftest.py ``run_cli``): tables, JSON, each
# command, bad input and usage errors (exit 2), help (exit 0 by SystemExit, 80 columns), a config transformers counts
# (the fallback, which imports torch and silences transformers; a fresh interpreter takes seconds to import them).
FILES = {"falcon.json": {"model_type": "falcon", "vocab_size": 96, "hidden_size": 32, "num_hidden_layers": 2,
                         "num_attention_heads": 4},
         "odd-heads.json": {"model_type": "bert", "hidden_size": 100},
         "broken.json": "not json at all"}
SAME_AS_A_FRESH_INTERPRETER = [
    ("count", "bert-base-uncased"), ("count", "gpt2", "--tensors", "--json"),
    ("count", "mixtral-8x7b-v0.1", "--tensors", "--names", "checkpoint"),
    ("flops", "gpt2", "--batch", "2", "--seq-len", "8"), ("memory", "llama-7b", "--gpus", "8", "--zero", "3"),
    ("budget", "llama-7b", "--tokens", "1e12", "--gpu", "A100-80GB", "--mfu", "0.4"),
    ("serve", "llama-7b", "--gpu", "H100-SXM"), ("finetune", "llama-7b", "--method", "qlora", "--rank", "16"),
    ("count", "falcon.json", "--tensors"), ("flops", "falcon.json"),
    ("count", "odd-heads.json"), ("count", "broken.json"), ("count", "no-such-model"), ("memory", "llama-7b", "--zero", "4"),
    (), ("frobnicate",), ("flops", "gpt2", "--batch"), ("--help",), ("count", "--help"),
]


@pytest.mark.parametrize("args", SAME_AS_A_FRESH_INTERPRETER, ids=lambda args: " ".join(args) or "no arguments")
def test_the_tests_runner_answers_as_a_fresh_interpreter(tmp_path, args):
    """``run_cli`` (this process) and ``python -m helpers`` in a fresh interpreter: the same exit status, the same
    stdout, the same stderr, byte for byte (paths relative to the folder both run in)."""
    for name, content in FILES.items():
        (tmp_path / name).write_text(content if isinstance(content, str) else json.dumps(content))
    fresh, here = run_cli_subprocess(*args, cwd=tmp_path), run_cli(*args, cwd=tmp_path)
    assert (here.returncode, here.stdout, here.stderr) == (fresh.returncode, fresh.stdout, fresh.stderr)
    assert fresh.stdout or fresh.stderr
