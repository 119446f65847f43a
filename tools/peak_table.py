"""The README's table of measured peaks: every step of data/gpu_memory.json, the GPU's torch.cuda.max_memory_allocated()
beside the engine before this issue (the resident state + Korthikanti et al.'s activations, `finetune`'s total_bytes;
for generate, `memory`'s weights + KV cache), the closed form now (helpers.peak) and, with --simulate, the simulator
(helpers.simulate).

    python tools/peak_table.py [--simulate] [--heldout] > table.md

--heldout: data/gpu_memory_heldout.json's steps (measured after the engine was written; a row after the first of its
process is compared less cuBLAS's workspaces, which its process had already allocated). tests/test_readme.py checks
the README's two tables against this script's columns but the simulator's (`make check-peaks` reruns those).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from helpers import peak as P  # noqa: E402
from helpers.config import ConfigError, parse_config, read_json, resolve  # noqa: E402
from helpers.finetune import Finetune  # noqa: E402
from helpers.memory import Memory  # noqa: E402

GiB = 2**30


def rows(heldout: bool = False) -> list[dict]:
    if heldout:
        return P.measured_heldout()["rows"]
    data = P.measured()
    return data["rows"] + [dict(r, case=r["case"] + " (H100)") for r in data["h100_rows"]]


def before(row: dict) -> int:
    """What the engine answered before the peak was modelled."""
    raw = {**read_json(resolve(row["model"])), **(row.get("override") or {})}
    if row["method"] == "inference":
        return Memory(parse_config(raw), row["batch"], row["prompt"] + row["new_tokens"] - 1, "bf16").inference()
    step = P.measured_step(row)
    return Finetune(step.config, step.method, step.rank, step.targets, row["batch"], row["seq_len"], "adamw",
                    row["checkpointing"], step.weight_dtype, 32).total_bytes


def now(row: dict) -> int | None:
    """The closed form's peak (None: it has no tape for the family's generate, and says so)."""
    if row["method"] == "inference":
        raw = {**read_json(resolve(row["model"])), **(row.get("override") or {})}
        try:
            return P.generate_peak(parse_config(raw), row["batch"], row["prompt"], row["new_tokens"], "bf16",
                                   row["attn"]).peak_bytes - P.in_base(row)
        except ConfigError:
            return None
    return P.training_peak(P.measured_step(row)).peak_bytes - P.in_base(row)


def simulated(row: dict) -> int:
    from helpers.simulate import simulate_finetune, simulate_generate

    raw = {**read_json(resolve(row["model"])), **(row.get("override") or {})}
    if row["method"] == "inference":
        sim = simulate_generate(raw, row["batch"], row["prompt"], row["new_tokens"], "bf16", row["attn"])
    else:
        step = P.measured_step(row)
        sim = simulate_finetune(raw, row["method"], 16, 32, step.targets, row["batch"], row["seq_len"],
                                row["checkpointing"], step.weight_dtype, step.autocast, row["attn"], "adamw",
                                row.get("cls"), row.get("num_labels"))
    return sim.peak_bytes + sim.workspace - P.in_base(row)


def table(simulate: bool = False, heldout: bool = False) -> str:
    head = "| step | GPU peak | before | ratio | closed form | ratio |" + (" simulator | ratio |" if simulate else "")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    errors = {"before": [], "now": [], "sim": []}
    for row in rows(heldout):
        gpu = row["peak_allocated"]
        cells = [row["case"], f"{gpu / GiB:.2f} GiB"]
        for key, value in (("before", before(row)), ("now", now(row))) + ((("sim", simulated(row)),) if simulate else ()):
            if value is None:
                cells += ["no tape", ""]
                continue
            errors[key].append(abs(value / gpu - 1))
            cells += [f"{value / GiB:.2f} GiB", f"{value / gpu:.3f}"]
        lines.append("| " + " | ".join(cells) + " |")
    summary = [f"before: median error {statistics.median(errors['before']):.1%}, worst {max(errors['before']):.1%}",
               f"closed form: median {statistics.median(errors['now']):.2%}, worst {max(errors['now']):.2%}"
               + (f" over the {len(errors['now'])} it answers" if len(errors["now"]) < len(errors["before"]) else "")]
    if simulate:
        summary.append(f"simulator: median {statistics.median(errors['sim']):.2%}, worst {max(errors['sim']):.2%}")
    return "\n".join(lines) + "\n\n" + "; ".join(summary) + " (GiB = 2³⁰ bytes)\n"


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--simulate", action="store_true")
    parser.add_argument("--heldout", action="store_true")
    args = parser.parse_args()
    print(table(args.simulate, args.heldout), end="")
