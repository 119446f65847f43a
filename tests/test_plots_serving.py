"""The pictures of notebook 12 draw the engine's figures: the bars are Finetune's parts, the curves serve's sequences."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402

from helpers import load_config  # noqa: E402
from helpers.finetune import Finetune  # noqa: E402
from helpers.plots import finetune_bars, finetune_parts, max_sequences_curves, max_sequences_series, paged_pool  # noqa: E402
from helpers.serve import serve  # noqa: E402

LLAMA = load_config("llama-7b")


def run(method: str, checkpointing: str = "full") -> Finetune:
    return Finetune(LLAMA, method, 8, "q_proj,v_proj", 1, 256, "adamw", checkpointing, "bf16")


def test_parts_add_up_to_the_run():
    for method in ("full", "lora", "qlora"):
        parts = finetune_parts(run(method))
        assert sum(parts.values()) == run(method).total_bytes and len(parts) == 6
    assert finetune_parts(run("lora"))["trained weights"] == 0 and finetune_parts(run("full"))["adapters"] == 0


def test_bars_stack_the_parts_in_gib():
    runs = {"LoRA": run("lora"), "QLoRA": run("qlora", "none")}
    ax = finetune_bars(runs, "t", limit=24 * 2**30, limit_label="24 GiB")
    widths = [patch.get_width() for patch in ax.patches]
    assert len(widths) == 6 * len(runs)  # one segment per part and run, zero-width ones included
    assert abs(sum(widths) - sum(r.total_bytes for r in runs.values()) / 2**30) < 1e-6
    assert [t.get_text() for t in ax.texts][-1] == " 24 GiB" and ax.lines[0].get_xdata()[0] == 24
    totals = [f"{r.total_bytes / 2**30:,.2f} GiB" for r in runs.values()]
    assert [t.get_text() for t in ax.texts][:2] == totals  # each bar's total, on a white box beside its end
    plt.close("all")


def test_the_pool_is_serves_blocks():
    plan = serve(load_config("llama-2-70b"), "H100-SXM", 4, max_model_len=4096)
    fig = paged_pool(plan, "t", columns=256)
    bar, grid = fig.axes[:2]
    widths = [patch.get_width() * 2**30 for patch in bar.patches]
    assert abs(sum(widths) - plan.gpu.cuda_memory) < 1 and abs(widths[0] - plan.weights) < 1
    assert abs(widths[2] - plan.num_blocks * plan.block_bytes) < 1 and abs(widths[3] - 612_762) < 1  # under a block
    cells = grid.images[0].get_array()
    taken = (cells < 1).sum()
    assert taken == plan.max_sequences * plan.blocks_per_sequence == 118 * 256
    assert cells.count() == plan.num_blocks  # the cells past the pool's last block are masked
    mine = grid.collections[0].get_offsets()
    assert len(mine) == 256 and len({tuple(xy) for xy in mine.tolist()}) == 256  # one sequence: 256 blocks, scattered
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
