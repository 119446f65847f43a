"""The ZeRO-3 / FSDP arithmetic of :mod:`helpers.budget`, checked by a real sharded training step on CPU.

Introduced in ``10_budgets``. :func:`fsdp_run` starts ``world`` processes (``torch.multiprocessing``, forked on Linux)
that form a ``torch.distributed`` group over gloo on 127.0.0.1 (a free port, no network), build a small
model from :mod:`helpers.torch_ref`, wrap every decoder layer and then the whole model with FSDP2's
``fully_shard`` on a CPU device mesh, and take one AdamW step. Each rank then reports, for every
parameter, the shape of its own shard (``p.to_local()``), the bytes of the storage behind it (FSDP2 pads
short shards), and the local shapes of its gradient and AdamW moments. :func:`shard_rows` and
:func:`padded_rows` of :mod:`helpers.budget` must predict every one of them.

The processes write what they saw, and their own output, to a temporary folder: nothing reaches the
notebook's streams, and the result does not depend on timing. This module imports torch; the command line
never imports it.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from ..config import ModelConfig, parse_config

# a LLaMA small enough to run in a moment, with sizes two ranks cannot split evenly (V = 65, I = 45)
TINY: dict[str, Any] = {"model_type": "llama", "vocab_size": 65, "hidden_size": 32, "num_attention_heads": 4,
                        "num_key_value_heads": 2, "num_hidden_layers": 2, "intermediate_size": 45}


@dataclass(frozen=True)
class Shard:
    """What one rank holds of one parameter after a sharded AdamW step (shapes as lists of ints).
    No notebook calls it; it works behind the helpers of ``10_budgets``."""

    rank: int
    name: str
    shape: tuple[int, ...]  # the whole parameter
    local: tuple[int, ...]  # p.to_local(): this rank's rows
    storage: int  # bytes of the storage behind p.to_local() (padded)
    grad: tuple[int, ...]
    exp_avg: tuple[int, ...]
    exp_avg_sq: tuple[int, ...]
    step: int  # elements of AdamW's step counter for this parameter


@dataclass(frozen=True)
class FsdpRun:
    """The shards every rank reported, and each rank's bytes per training-state part (distinct storages).
    No notebook calls it; it works behind the helpers of ``10_budgets``."""

    config: ModelConfig
    world: int
    shards: tuple[Shard, ...]
    bytes: tuple[dict[str, int], ...]  # per rank: part -> bytes

    def on(self, rank: int) -> list[Shard]:
        """The shards of one rank, in parameter order."""
        return [s for s in self.shards if s.rank == rank]


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _storage_bytes(tensors: list[torch.Tensor]) -> int:
    """Bytes of the distinct storages behind ``tensors`` (gradients of a layer share one buffer)."""
    seen: dict[int, int] = {}
    for t in tensors:
        storage = t.untyped_storage()
        seen[storage.data_ptr()] = storage.nbytes()
    return sum(seen.values())


def _worker(rank: int, world: int, port: int, folder: str, raw: dict[str, Any], seed: int) -> None:
    """One rank: join the gloo group, shard the model per layer, take one AdamW step, write what it holds."""
    log = os.open(os.path.join(folder, f"rank{rank}.log"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    try:
        from torch.distributed.device_mesh import init_device_mesh
        from torch.distributed.fsdp import fully_shard

        from ..torch_ref import build

        config = parse_config(raw, name="tiny")
        torch.manual_seed(seed)
        model = build(config, device="cpu")
        mesh = init_device_mesh("cpu", (world,))
        for layer in model.model.layers:
            fully_shard(layer, mesh=mesh)
        fully_shard(model, mesh=mesh)
        optimizer = torch.optim.AdamW(model.parameters())
        model(torch.randint(0, config["V"], (2, 8))).sum().backward()
        optimizer.step()
        params = list(model.named_parameters())
        states = [optimizer.state[p] for _, p in params]
        rows = [{"name": name, "shape": list(p.shape), "local": list(p.to_local().shape),
                 "storage": p.to_local().untyped_storage().nbytes(), "grad": list(p.grad.to_local().shape),
                 "exp_avg": list(st["exp_avg"].to_local().shape), "exp_avg_sq": list(st["exp_avg_sq"].to_local().shape),
                 "step": st["step"].numel()}
                for (name, p), st in zip(params, states)]
        held = {
            "weights (fp32)": _storage_bytes([p.to_local() for _, p in params]),
            "gradients (fp32)": _storage_bytes([p.grad.to_local() for _, p in params]),
            "AdamW exp_avg (fp32)": _storage_bytes([st["exp_avg"].to_local() for st in states]),
            "AdamW exp_avg_sq (fp32)": _storage_bytes([st["exp_avg_sq"].to_local() for st in states]),
            "AdamW step (one fp32 scalar per tensor)": _storage_bytes([st["step"] for st in states]),
        }
        Path(folder, f"rank{rank}.json").write_text(json.dumps({"shards": rows, "bytes": held}))
    finally:
        dist.destroy_process_group()


# Linux forks the ranks from the process that already imported torch (5 s instead of 13 s in a notebook: a
# spawned rank imports torch again); each rank then runs on one thread. Elsewhere (macOS) fork is unsafe: spawn.
START_METHOD = "fork" if sys.platform == "linux" else "spawn"


def fsdp_run(raw: dict[str, Any] | None = None, world: int = 2, seed: int = 0) -> FsdpRun:
    """Shard a small LLaMA over ``world`` CPU processes with FSDP2 and report every rank's shards.

    Introduced in ``10_budgets``. ``raw`` is a LLaMA ``config.json`` as a dict (default :data:`TINY`).
    Raises ``RuntimeError`` with the ranks' own output if a process fails.
    """
    raw = dict(TINY if raw is None else raw)
    config = parse_config(raw, name="tiny")
    with tempfile.TemporaryDirectory() as folder:
        try:
            mp.start_processes(_worker, args=(world, _free_port(), folder, raw, seed), nprocs=world, join=True,
                               start_method=START_METHOD)
        except Exception as error:  # a rank failed: say what it printed
            logs = "\n".join(p.read_text(errors="replace")[-2000:] for p in sorted(Path(folder).glob("rank*.log")))
            raise RuntimeError(f"the FSDP run failed ({error.__class__.__name__}):\n{logs}") from None
        reports = [json.loads(Path(folder, f"rank{r}.json").read_text()) for r in range(world)]
    shards = tuple(Shard(r, row["name"], tuple(row["shape"]), tuple(row["local"]), row["storage"], tuple(row["grad"]),
                         tuple(row["exp_avg"]), tuple(row["exp_avg_sq"]), row["step"])
                   for r, report in enumerate(reports) for row in report["shards"])
    return FsdpRun(config, world, shards, tuple(report["bytes"] for report in reports))
