"""Every measured step of data/gpu_memory.json against the engine: the closed form (`python -m helpers finetune/memory
--json`) and, with --simulate, the simulator, each beside torch.cuda.max_memory_allocated() of the same step.

    python tools/check_peaks.py [--simulate] [--heldout] [--tolerance 0.03] [CASE ...]

--heldout takes data/gpu_memory_heldout.json's steps instead: measured after the engine was written, several to a
process, so a row after the first found cuBLAS's workspaces already allocated in its base (the engine's figure is
compared less them there).

Prints one row per step and the worst ratio; exits 1 when a step is off by more than the tolerance. `make check-peaks`
runs both (the simulator takes a few minutes on two cores).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from helpers.config import read_json, resolve  # noqa: E402
from helpers.peak import in_base, measured, measured_heldout  # noqa: E402


def command(row: dict, model: str) -> tuple[list[str], str]:
    """The command line that answers a row, and the JSON key holding its peak."""
    if row["method"] == "inference":
        return (["memory", model, "--batch", str(row["batch"]), "--seq-len", str(row["prompt"]), "--new-tokens",
                 str(row["new_tokens"]), "--dtype", "bf16", "--attn", row["attn"], "--json"], "generate_peak_bytes")
    cmd = ["finetune", model, "--method", row["method"], "--batch", str(row["batch"]), "--seq-len", str(row["seq_len"]),
           "--checkpointing", row["checkpointing"], "--weight-dtype", "fp32" if row["method"] == "full" else "bf16",
           "--autocast", "bf16" if row["autocast_bf16"] else "none", "--attn", row["attn"], "--json"]
    if row["method"] != "full":
        cmd += ["--rank", "16"]
    if row["method"] == "qlora":  # the harness's targets: every linear layer of the decoder
        cmd += ["--targets", "q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj"]
    if row.get("cls"):
        cmd += ["--class", row["cls"], "--num-labels", str(row.get("num_labels", 2))]
    return cmd, "peak_bytes"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--simulate", action="store_true")
    parser.add_argument("--heldout", action="store_true", help="data/gpu_memory_heldout.json's steps")
    parser.add_argument("--tolerance", type=float, default=0.03)
    parser.add_argument("cases", nargs="*")
    args = parser.parse_args()
    if args.heldout:
        rows = measured_heldout()["rows"]
    else:
        data = measured()
        rows = data["rows"] + [dict(r, case=r["case"] + "@H100") for r in data["h100_rows"]]
    rows = [r for r in rows if not args.cases or r["case"] in args.cases]
    worst, off, refused = 0.0, 0, 0
    with tempfile.TemporaryDirectory() as tmp:
        for row in rows:
            model = row["model"]
            if row.get("override"):
                model = os.path.join(tmp, row["case"] + ".json")
                Path(model).write_text(json.dumps({**read_json(resolve(row["model"])), **row["override"]}))
            cmd, key = command(row, model)
            if args.simulate:
                cmd.append("--simulate")
            done = subprocess.run([sys.executable, "-m", "helpers", *cmd], capture_output=True, text=True, cwd=ROOT)
            if done.returncode:
                said = done.stderr.strip()[-200:]
                named = done.returncode == 2 and "--simulate" in said  # no tape for it: said in one line
                print(f"{row['case']:32s} {'refused' if named else 'no answer'}: {said}")
                refused += named
                off += not named
                continue
            got = json.loads(done.stdout)[key]
            got -= in_base(row)  # cuBLAS's workspaces its process had allocated before it began
            ratio = got / row["peak_allocated"]
            worst = max(worst, abs(ratio - 1))
            miss = abs(ratio - 1) > args.tolerance
            off += miss
            print(f"{row['case']:32s} engine {got:>15,d}  GPU {row['peak_allocated']:>15,d}  ratio {ratio:.4f}"
                  f"{'  OFF' if miss else ''}")
    kind = "simulator" if args.simulate else "closed form"
    answered = len(rows) - refused
    print(f"{kind}: {answered - off}/{answered} steps answered within {args.tolerance:.1%} of the GPU (worst off by "
          f"{worst:.2%})" + (f"; {refused} refused in one line, naming --simulate" if refused else ""))
    return 1 if off else 0


if __name__ == "__main__":
    sys.exit(main())
