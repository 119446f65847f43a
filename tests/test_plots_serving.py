"""The pictures of notebook 12 draw the engine's figures: the bars are Finetune's parts, the curves serve's sequences."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402

from helpers import load_config  # noqa: E402
from helpers.finetune import Finetune  # noqa: E402
from helpers.plots import finetune_bars, finetune_parts, max_sequences_curves, max_sequences_series  # noqa: E402
from helpers.serve import serve  # noqa: E402

LLAMA = load_config("llama-7b")


def run(method: str, checkpointing: str = "full") -> Finetune:
    return Finetune(LLAMA, method, 8, "q_proj,v_proj", 1, 256, "adamw", checkpointing, "bf16")


def test_parts_add_up_to_the_run():
    for method in ("full", "lora", "qlora"):
        parts = finetune_parts(run(method))
        assert sum(parts.values()) == run(method).total_bytes and len(parts) == 6
    assert finetune_parts(run("lora"))["trained weights"] == 0 and finetune_parts(run("full"))["adapters"] == 0


def test_bars_stack_the_parts_in_gb():
    runs = {"LoRA": run("lora"), "QLoRA": run("qlora", "none")}
    ax = finetune_bars(runs, "t", limit=24 * 10**9, limit_label="24 GB")
    widths = [patch.get_width() for patch in ax.patches]
    assert len(widths) == 6 * len(runs)  # one segment per part and run, zero-width ones included
    assert abs(sum(widths) - sum(r.total_bytes for r in runs.values()) / 1e9) < 1e-6
    assert [t.get_text() for t in ax.texts][-1] == " 24 GB"
    plt.close("all")


def test_sequences_are_serves_and_stop_at_the_context():
    llama70 = load_config("llama-2-70b")
    deployments = {"bf16": lambda S: serve(llama70, "H100-SXM", 4, "bf16", max_model_len=S),
                   "fp8": lambda S: serve(llama70, "H100-SXM", 4, "fp8", max_model_len=S)}
    lengths = [1024, 4096, 8192]
    series = max_sequences_series(deployments, lengths)
    assert series["bf16"][:2] == [serve(llama70, "H100-SXM", 4, max_model_len=S).max_sequences for S in lengths[:2]]
    assert series["bf16"][1] == 118 and series["fp8"][1] == 237 and series["bf16"][2] is None  # P = 4,096 (CUDA's total)
    ax = max_sequences_curves(deployments, lengths, "t")
    assert [line.get_label() for line in ax.lines] == ["bf16", "fp8"]
    assert list(ax.lines[1].get_xdata()) == [1024, 4096]  # the refused length is left out
    plt.close("all")
