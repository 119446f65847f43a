"""Benchmark: ``python -m helpers count`` against building the same model in transformers on the meta device.

Run with ``make bench`` (not part of ``make test``: speed is measured here, never asserted).
Both sides are timed twice: in-process (imports already paid) and as a fresh interpreter, which is what
a user of the command line waits for.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from helpers import count_model, load_config, parse_config
from helpers.config import MODELS_DIR, model_names, raw_config
from helpers.families import FAMILIES


def representative(model_type: str) -> str:
    """The first configuration in data/models/ of a family (bert-base-cased for bert, gpt2 for gpt2 ...)."""
    return next(name for name in model_names() if raw_config(name)["model_type"] == model_type)


MODELS = [representative(model_type) for model_type in FAMILIES]  # one real config per family
DEEP = {"model_type": "llama", "num_hidden_layers": 10**7}  # ten million identical layers

HF_SNIPPET = """
import json, sys, torch, transformers
transformers.logging.set_verbosity_error()
raw = json.load(open(sys.argv[1]))
config = transformers.AutoConfig.for_model(**raw)
cls = getattr(transformers, sys.argv[2])
with torch.device("meta"):
    model = cls(config)
print(sum(p.numel() for p in model.parameters()))
"""


def transformers_count(name: str) -> int:
    import torch
    import transformers

    transformers.logging.set_verbosity_error()
    raw = json.loads((MODELS_DIR / f"{name}.json").read_text())
    config = transformers.AutoConfig.for_model(**raw)
    cls = getattr(transformers, load_config(name).architecture)  # the class the family mirrors
    with torch.device("meta"):
        model = cls(config)
    return sum(p.numel() for p in model.parameters())


def test_engine_ten_million_layers(benchmark):
    benchmark.group = "in-process 10**7 layers"
    result = benchmark.pedantic(lambda: count_model(parse_config(DEEP)), rounds=5, iterations=1)
    one, two = (count_model(parse_config({**DEEP, "num_hidden_layers": n})).total for n in (1, 2))
    assert result.total == one + (10**7 - 1) * (two - one)  # a layer more adds one layer's count


@pytest.mark.parametrize("name", MODELS)
def test_engine_in_process(benchmark, name):
    benchmark.group = f"in-process {name}"
    assert benchmark(lambda: count_model(load_config(name)).total) == transformers_count(name)


@pytest.mark.parametrize("name", MODELS)
def test_transformers_meta_in_process(benchmark, name):
    benchmark.group = f"in-process {name}"
    assert benchmark(transformers_count, name) == count_model(load_config(name)).total


@pytest.mark.parametrize("name", MODELS)
def test_cli_fresh_interpreter(benchmark, name):
    benchmark.group = f"fresh interpreter {name}"
    run = lambda: subprocess.run([sys.executable, "-m", "helpers", "count", name, "--json"],  # noqa: E731
                                 capture_output=True, text=True, check=True).stdout
    doc = json.loads(benchmark.pedantic(run, rounds=5, iterations=1))
    assert doc["total"] == count_model(load_config(name)).total


@pytest.mark.parametrize("name", MODELS)
def test_transformers_fresh_interpreter(benchmark, name):
    benchmark.group = f"fresh interpreter {name}"
    run = lambda: subprocess.run([sys.executable, "-c", HF_SNIPPET, str(MODELS_DIR / f"{name}.json"),
                                  load_config(name).architecture],  # noqa: E731
                                 capture_output=True, text=True, check=True).stdout
    assert int(benchmark.pedantic(run, rounds=3, iterations=1)) == count_model(load_config(name)).total
