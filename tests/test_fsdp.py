"""The ZeRO-3 / FSDP arithmetic against a real run: FSDP2 (``fully_shard``) on two CPU processes over gloo.

Each rank's shard of every parameter (``p.to_local()``), of its gradient and of both AdamW moments must have
the rows ``torch.chunk`` gives (``helpers.budget.shard_rows``), the storage behind each weight must be padded
to ``⌈d₀/W⌉`` rows (``padded_rows``), and each rank's bytes per part must equal ``sharded_state``.
"""

from __future__ import annotations

import math

import pytest
import torch.distributed as dist

from helpers.budget import padded_rows, shard_rows, sharded_state
from helpers.lessons.fsdp_check import TINY, fsdp_run
from helpers.memory import ADAMW_FP32
from helpers.params import param_table

pytestmark = pytest.mark.skipif(not dist.is_available() or not dist.is_gloo_available(), reason="no gloo backend")


@pytest.fixture(scope="module")
def run():
    return fsdp_run(TINY, world=2)


def test_world_and_every_parameter(run):
    assert run.world == 2
    names = [p.name for p in param_table(run.config)]
    for rank in range(run.world):
        assert [s.name for s in run.on(rank)] == names
        assert [s.shape for s in run.on(rank)] == [p.shape for p in param_table(run.config)]


def test_local_shards_follow_torch_chunk(run):
    uneven = 0
    for s in run.shards:
        expected = (shard_rows(s.shape[0], run.world, s.rank), *s.shape[1:])
        assert s.local == s.grad == s.exp_avg == s.exp_avg_sq == expected, s.name
        assert s.step == 1
        uneven += s.shape[0] % run.world != 0
    assert uneven >= 2 * 2 * 2, "the tiny model must exercise uneven splits (V = 65, I = 45)"


def test_weights_are_stored_padded(run):
    for s in run.shards:
        assert s.storage == 4 * padded_rows(s.shape[0], run.world) * math.prod(s.shape[1:]), s.name


def test_bytes_per_rank_are_the_engines(run):
    for rank in range(run.world):
        engine = {p.name: p.bytes for p in sharded_state(run.config, run.world, 3, recipe=ADAMW_FP32, rank=rank)}
        assert run.bytes[rank] == engine
    assert run.bytes[1]["AdamW exp_avg (fp32)"] < run.bytes[0]["AdamW exp_avg (fp32)"]  # rank 1 holds fewer rows
    assert run.bytes[1]["weights (fp32)"] == run.bytes[0]["weights (fp32)"]  # but stores weights padded
