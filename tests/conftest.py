"""Shared fixtures: the shipped configs, and runners for ``python -m helpers`` (in this process, or in a fresh one)."""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import subprocess
import sys
import traceback
import warnings
from pathlib import Path
from typing import Any, Iterator

import pytest
from hypothesis import settings

ROOT = Path(__file__).resolve().parent.parent

# Every property test draws its examples from a fixed seed: the same configs in every run, here and in CI, so that a
# failure is reproduced by running the test again, and its time is the same each run. No deadline (a busy machine is no
# failure). A test's own settings (max_examples, health checks) keep this default for what they leave out.
# ``HYPOTHESIS_PROFILE=explore make test-fast`` draws new random examples instead (to look further afield).
settings.register_profile("fixed-seed", derandomize=True, database=None, deadline=None)
settings.register_profile("explore", deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "fixed-seed"))



def pytest_runtest_setup(item: pytest.Item) -> None:
    """One intra-op thread for torch in a test process, once a test has imported it: the tests' tensors are tiny (a
    second thread only spins, waiting), and under xdist (make test: two workers on two cores) two workers' thread pools
    fight over the cores, several times some tests' time. No figure depends on it; the notebooks' kernels (processes
    of their own) and the subprocesses tests start keep torch's default."""
    torch = sys.modules.get("torch")
    if torch is not None and torch.get_num_threads() != 1:
        torch.set_num_threads(1)
MODELS = sorted(p.stem for p in (ROOT / "data" / "models").glob("*.json"))

# the warning filters of a fresh interpreter (no -W, no PYTHONWARNINGS): what `python -m helpers` starts with
FRESH_WARNING_FILTERS = [("default", DeprecationWarning, "__main__"), ("ignore", DeprecationWarning, ""),
                         ("ignore", PendingDeprecationWarning, ""), ("ignore", ImportWarning, ""),
                         ("ignore", ResourceWarning, "")]


def run_cli_subprocess(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    """Run ``python -m helpers ARGS`` in a fresh interpreter (where the process is the point: exit status end to end,
    what a fresh interpreter imports; tests/test_cli.py checks that :func:`run_cli` answers exactly as this does)."""
    return subprocess.run([sys.executable, "-m", "helpers", *args], capture_output=True, text=True, cwd=cwd)


@contextlib.contextmanager
def _as_a_fresh_interpreter(argv: list[str], cwd: Path, err: io.StringIO) -> Iterator[None]:
    """This process set up as ``python -m helpers`` finds a fresh interpreter, for the length of the block: ``argv``,
    ``cwd``, 80 columns (argparse's width when stdout is a pipe), the fresh warning filters (a warning shown on
    ``err`` as the interpreter shows it, once per place), log records on ``err`` as a fresh interpreter writes them
    (the root logger's last-resort handler; transformers' own handler at its default verbosity, its ``warning_once``
    forgotten). Everything is put back at the end."""
    saved_argv, saved_cwd, saved_columns = sys.argv, os.getcwd(), os.environ.get("COLUMNS")
    root = logging.getLogger()
    last_resort = logging.StreamHandler(err)
    last_resort.setLevel(logging.WARNING)
    hf_logging = sys.modules.get("transformers.utils.logging")
    hf_handler = getattr(hf_logging, "_default_handler", None)
    hf_level = hf_logging.get_verbosity() if hf_logging else None
    for once in ("warning_once", "info_once"):  # transformers' per-process memory of what it said once
        getattr(getattr(logging.Logger, once, None), "cache_clear", lambda: None)()
    sys.argv = argv
    os.chdir(cwd)
    if saved_columns is None:
        os.environ["COLUMNS"] = "80"
    root.addHandler(last_resort)
    if hf_handler is not None:
        hf_handler.setStream(err)
        hf_logging.set_verbosity(getattr(hf_logging, "_get_default_logging_level", lambda: logging.WARNING)())
    try:
        with warnings.catch_warnings():
            warnings.resetwarnings()
            for action, category, module in reversed(FRESH_WARNING_FILTERS):
                warnings.filterwarnings(action, category=category, module=module)

            def show(message, category, filename, lineno, file=None, line=None):
                err.write(warnings.formatwarning(message, category, filename, lineno, line))

            warnings.showwarning = show
            yield
    finally:
        root.removeHandler(last_resort)
        if hf_handler is not None:
            hf_handler.setStream(sys.stderr)
            hf_logging.set_verbosity(hf_level)
        elif "transformers.utils.logging" in sys.modules:  # first imported in the block: its handler holds ``err``
            handler = getattr(sys.modules["transformers.utils.logging"], "_default_handler", None)
            if handler is not None:
                handler.setStream(sys.stderr)
        if saved_columns is None:
            os.environ.pop("COLUMNS", None)
        os.chdir(saved_cwd)
        sys.argv = saved_argv


def run_cli(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    """``python -m helpers ARGS`` run in this process, as a fresh interpreter runs it (:func:`_as_a_fresh_interpreter`):
    the exit status (``main``'s return, a ``SystemExit``'s code, 1 and the traceback on stderr for an uncaught
    exception), stdout and stderr, as :func:`run_cli_subprocess` returns them. A fresh interpreter per call cost about
    a quarter of a second (several seconds where transformers is imported), four hundred times over."""
    from helpers.cli import main

    out, err = io.StringIO(), io.StringIO()
    with _as_a_fresh_interpreter([str(ROOT / "helpers" / "__main__.py"), *args], cwd, err), \
            contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = main(list(args))
        except SystemExit as exit_:
            status = exit_.code
            if status is not None and not isinstance(status, int):
                print(status, file=sys.stderr)
                status = 1
        except BaseException as error:  # noqa: BLE001 - what the interpreter does with an uncaught exception
            if isinstance(error, KeyboardInterrupt):
                raise
            traceback.print_exc()
            status = 1
    return subprocess.CompletedProcess([sys.executable, "-m", "helpers", *args], status or 0, out.getvalue(),
                                       err.getvalue())


def run_cli_without_torch(*args: str) -> subprocess.CompletedProcess[str]:
    """Run ``python -m helpers ARGS`` in a fresh interpreter that fails if anything imported torch."""
    code = (f"import sys, runpy; sys.argv = ['helpers', *{list(args)!r}]\n"
            "try:\n    runpy.run_module('helpers', run_name='__main__')\nexcept SystemExit:\n    pass\n"
            "assert 'torch' not in sys.modules, 'torch was imported'")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)


def assert_refused(result: subprocess.CompletedProcess[str], field: str) -> None:
    """Bad input: exit code 2, nothing on stdout, one stderr line ``error: FIELD: ...``, no traceback."""
    assert result.returncode == 2, result.stdout
    assert result.stdout == ""
    assert len(result.stderr.splitlines()) == 1, result.stderr
    assert result.stderr.startswith(f"error: {field}: ")
    assert "Traceback" not in result.stderr


@pytest.fixture
def write_config(tmp_path: Path):
    """Write a dict (or raw text) as a config.json and return its path."""

    def write(content: dict | str, name: str = "config.json") -> Path:
        path = tmp_path / name
        path.write_text(content if isinstance(content, str) else json.dumps(content))
        return path

    return write


def hf_model(raw: dict, device: str = "meta"):
    """transformers' model for a raw ``config.json`` (its family's class), eager attention and eager experts.

    The config is not parsed by the engine, so refusal tests can build what the engine refuses. Imports torch
    and transformers only when called (some tests run without them).
    """
    import torch
    import transformers

    from helpers.families import FAMILIES

    config = transformers.AutoConfig.for_model(**raw)
    config._attn_implementation = "eager"
    config._experts_implementation = "eager"  # a mixture's experts one matmul each (no effect on a dense model)
    with torch.device(device):
        return getattr(transformers, FAMILIES[raw["model_type"]].architecture)(config)


def surplus_flops(c, batch: int, seq_len: int) -> int:
    """The matmul FLOPs transformers' own class runs beyond the engine's forward pass (``Family.surplus_flops``: Llama 4
    multiplies every token by all E experts, the unrouted weighed by 0); 0 for every other family. FlopCounterMode on
    transformers' model counts ``forward_flops(c, B, S).forward + surplus_flops(c, B, S)``."""
    from helpers.params import evaluate

    formula = c.family.surplus_flops
    return evaluate(formula(c), c, B=batch, S=seq_len) if formula is not None else 0


@contextlib.contextmanager
def recurrent_delta_rule() -> Iterator[None]:
    """transformers' chunked gated-delta-rule kernel (what Qwen3-Next runs on a prefill, on the CPU: chunks of 64, its
    in-chunk products and the state's matmuls) swapped for its token-by-token recurrence, whose products torch writes
    elementwise: FlopCounterMode then sees every other matmul and none of the recurrence's, which the engine counts on
    a line of its own (``helpers.params.DELTA_RULE``; :func:`without_recurrence`). The same outputs, the same cache."""
    from transformers.models.qwen3_next import modeling_qwen3_next as module

    chunked = module.torch_chunk_gated_delta_rule

    def recurrent(*args: Any, chunk_size: int = 64, **kwargs: Any) -> Any:
        return module.torch_recurrent_gated_delta_rule(*args, **kwargs)

    module.torch_chunk_gated_delta_rule = recurrent
    try:
        yield
    finally:
        module.torch_chunk_gated_delta_rule = chunked


def without_recurrence(flops) -> tuple[int, int]:
    """What FlopCounterMode sees of transformers' model, forward and training, from the engine's figures: the whole
    figures for every family but Qwen3-Next; for it, less the gated-delta-rule line (3× it in training), which runs
    elementwise under :func:`recurrent_delta_rule`, and, in training, plus what FlopCounterMode adds to a depthwise
    convolution's backward pass: it prices the weight's gradient as a dense convolution over all C channels (its
    formula ignores ``groups``), C times the 2·positions·C·K_c it costs, so (C − 1) × the forward FLOPs more."""
    from helpers.params import CONVOLUTION, DELTA_RULE, param_layout
    from helpers.flops import matmul_tokens

    c, B, S = flops.config, flops.batch, flops.seq_len
    state = flops.by_component().get(DELTA_RULE, 0)
    grouped = sum((n * 2 * matmul_tokens(p, c, B, S) * p.count * (p.shape[0] - 1)
                   for p, n in param_layout(c).rows() if p.kind == CONVOLUTION), 0)
    return flops.forward - state, flops.training - 3 * state + grouped


def held_bytes(cache) -> int:
    """Every byte a transformers cache holds after a forward pass, whatever its kind: each layer's keys and values, and
    a linear-attention layer's convolution and recurrent states (Qwen3-Next's ``LinearAttentionLayer``)."""
    tensors = []
    for layer in cache.layers:
        tensors += [getattr(layer, name, None) for name in ("keys", "values")]
        for name in ("conv_states", "recurrent_states"):
            tensors += list(getattr(layer, name, {}).values())
    return sum(t.numel() * t.element_size() for t in tensors if t is not None)


def assert_counted_as_built(raw: dict):
    """transformers builds ``raw`` (meta device) and the engine counts it: the same tensors, name by name and shape
    by shape, and the same total. Returns the engine's config."""
    from helpers import count_model, param_table, parse_config

    c = parse_config(raw)
    model = hf_model(raw)
    assert [(p.name, p.shape) for p in param_table(c)] == [(n, tuple(p.shape)) for n, p in model.named_parameters()]
    assert count_model(c).total == sum(p.numel() for p in model.parameters())
    return c


def assert_refused_as_transformers_refuses(raw: dict, field: str, path: Path) -> None:
    """transformers refuses ``raw`` (config class or model init); the engine too, naming ``field``, and ``count`` on
    ``path`` (``raw`` written there) in one line."""
    from helpers import ConfigError, parse_config

    with pytest.raises(Exception):  # noqa: B017 - whatever transformers raises
        hf_model(raw)
    with pytest.raises(ConfigError) as info:
        parse_config(raw)
    assert info.value.field == field
    assert_refused(run_cli("count", str(path)), field)


def forward_error(raw: dict, device: str = "meta", use_cache: bool = True) -> Exception | int:
    """What transformers' forward pass on 1 × 3 tokens raises, or the FLOPs it counts where it runs (FlopCounterMode).
    On the meta device shapes alone decide (and only with the cache on: without one, the causal mask reads a value);
    a mixture of experts routes by values, and a run without the cache needs values: give a tiny config on "cpu"."""
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    try:
        model = hf_model(raw, device).eval()
        with torch.no_grad(), FlopCounterMode(display=False) as counter:
            model(torch.zeros(1, 3, dtype=torch.long, device=device), use_cache=use_cache)
    except Exception as error:  # noqa: BLE001 - whatever transformers raises is the answer
        return error
    return counter.get_total_flops()


def assert_runs_where_transformers_runs(path: Path, forward: str | None, cache: str | None) -> None:
    """``count`` answers; ``flops`` refuses in one line naming ``forward`` (the key that breaks transformers' forward
    pass), ``memory`` naming it or ``cache`` (the key that breaks its KV cache); None: each answers."""
    assert run_cli("count", str(path)).returncode == 0
    flops = run_cli("flops", "--batch", "1", "--seq-len", "16", str(path))
    if forward is None:
        assert flops.returncode == 0, flops.stderr
    else:
        assert_refused(flops, forward)
    memory = run_cli("memory", str(path))
    if forward is None and cache is None:
        assert memory.returncode == 0, memory.stderr
    else:
        assert_refused(memory, forward or cache)


def assert_twin_runs_where_transformers_runs(twin: dict, forward: str | None):
    """A tiny twin of an unusual config (a mixture of experts, run for real on the CPU): counted as transformers builds
    it; where ``forward`` is None its forward pass runs and the engine's FLOPs equal FlopCounterMode's, otherwise the
    forward pass fails and ``check_runs`` refuses naming ``forward``. Returns the engine's config."""
    import pytest

    from helpers.config import ConfigError
    from helpers.flops import forward_flops

    c = assert_counted_as_built(twin)
    ran = forward_error(twin, "cpu")
    if forward is None:
        assert ran == forward_flops(c, 1, 3).forward
    else:
        assert isinstance(ran, Exception)
        with pytest.raises(ConfigError) as info:
            c.check_runs()
        assert info.value.field == forward
    return c


def assert_runs_as_transformers(raw: dict, runs: tuple[tuple[int, int], ...] = ((1, 1), (2, 5))):
    """A small config transformers runs (a mixture of experts: for real, on the CPU): the engine's names, shapes and
    total are its build's; for each (B, S) of ``runs``, FlopCounterMode's total (eager attention, eager experts) is the
    engine's forward FLOPs and the bytes its cache holds (fp32) the engine's KV cache. Returns the engine's config."""
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    from helpers.flops import forward_flops
    from helpers.memory import kv_cache_bytes

    c = assert_counted_as_built(raw)
    torch.manual_seed(0)
    model = hf_model(raw, "cpu").eval()
    for B, S in runs:
        with torch.no_grad(), FlopCounterMode(display=False) as counter:
            cache = model(torch.zeros(B, S, dtype=torch.long), use_cache=True).past_key_values
        assert counter.get_total_flops() == forward_flops(c, B, S).forward
        held = sum(t.numel() * t.element_size() for layer in cache.layers for t in (layer.keys, layer.values))
        assert held == kv_cache_bytes(c, B, S, "fp32")
    return c


def assert_answered_where_transformers_runs(raw: dict, path: Path, forward: str | None, cache: str | None) -> None:
    """A config transformers builds: ``count`` equals its build; on 1 × 3 tokens the engine's FLOPs equal
    FlopCounterMode's where transformers' forward pass runs, and it fails where ``forward`` or ``cache`` names a key;
    the CLI's ``flops`` and ``memory`` refuse exactly there (:func:`assert_runs_where_transformers_runs`)."""
    from helpers.flops import forward_flops

    c = assert_counted_as_built(raw)
    ran = forward_error(raw)
    if forward is None and cache is None:
        assert ran == forward_flops(c, 1, 3).forward + surplus_flops(c, 1, 3)
    else:
        assert isinstance(ran, Exception)
    assert_runs_where_transformers_runs(path, forward, cache)
