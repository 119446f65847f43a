"""Benchmark: what one change in the explorer costs (helpers/explorer.py), per preset.

Run with ``make bench`` (not part of ``make test``: speed is measured here, never asserted; the issue's aim is
≤ 200 ms a change). "figures": a knob changed, the config parsed and counted, FLOPs and bytes computed, the HTML
written; "picture": the component table drawn (helpers.plots.component_bars) as the PNG the app shows.
"""

from __future__ import annotations

import pytest

from helpers import count_model, load_config
from helpers.config import model_names, raw_config
from helpers.explorer import knobs, outcome, picture_png, summary_html, table_html

MODELS = model_names()


def change(name: str) -> str:
    """One change of the app: L one more, everything recomputed and written as HTML."""
    raw = raw_config(name)
    layers = next(knob.value for knob in knobs(raw) if knob.symbol == "L")
    out = outcome(raw, {"L": layers}, name=name)
    assert not isinstance(out, str), out
    return summary_html(out) + table_html(out)


@pytest.mark.parametrize("name", MODELS)
def test_change_figures(benchmark, name):
    benchmark.group = "explorer: one change, figures"
    html = benchmark(change, name)
    assert f"{count_model(load_config(name)).total:,}" in html


@pytest.mark.parametrize("name", ["bert-base-uncased", "llama-2-70b", "deepseek-v3", "qwen3-next-80b-a3b"])
def test_change_picture(benchmark, name):
    benchmark.group = "explorer: one change, picture"
    out = outcome(raw_config(name), name=name)
    assert benchmark.pedantic(picture_png, (out,), rounds=5, iterations=1).startswith(b"\x89PNG")
