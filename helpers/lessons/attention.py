"""Multi-head attention seen head by head: the split into A heads of d_k = H / A changes no count.

Introduced in ``02_multi_head_attention``.
"""

from __future__ import annotations

from dataclasses import replace

from ..config import ConfigError, ModelConfig
from ..params import ATTENTION, Param


def with_heads(config: ModelConfig, A: int) -> ModelConfig:
    """The same configuration with ``A`` attention heads of ``d_k = H / A`` (every other size kept).

    For BERT and GPT-2 style configurations; a grouped-query configuration (with ``A_kv``) is refused,
    since its key/value heads would have to change too. Introduced in ``02_multi_head_attention``.
    """
    H = config["H"]
    if "A_kv" in config.sizes:
        raise ConfigError("num_key_value_heads", "with_heads changes A only; this configuration has A_kv")
    if A < 1:
        raise ConfigError("num_attention_heads", f"must be at least 1, got {A}")
    if H % A:
        raise ConfigError("num_attention_heads", f"the heads split the hidden size: H = {H} is not divisible by A = {A}")
    return replace(config, name=f"{config.name} (A={A})", sizes={**config.sizes, "A": A, "d_k": H // A})


def head_slices(config: ModelConfig, head: int) -> list[Param]:
    """The slices of one BERT layer's attention tensors that belong to head ``head`` (0-based).

    Names are the checkpoint paths inside a layer with the index range: head ``h`` reads rows
    ``h·d_k : (h+1)·d_k`` of ``query``/``key``/``value`` (weight ``d_k × H`` and ``d_k`` bias entries
    each), and the output projection reads the same columns of ``attention.output.dense.weight``
    (``H × d_k``). The output bias (``H``) is added after the heads are concatenated and belongs to no
    head. Introduced in ``02_multi_head_attention``.
    """
    H, A, d_k = config["H"], config["A"], config["d_k"]
    if not 0 <= head < A:
        raise ValueError(f"head must be in 0..{A - 1}, got {head}")
    lo, hi = head * d_k, (head + 1) * d_k
    rows = []
    for proj in ("query", "key", "value"):
        rows += [
            Param(f"attention.self.{proj}.weight[{lo}:{hi}, :]", (d_k, H), ATTENTION, "d_k*H"),
            Param(f"attention.self.{proj}.bias[{lo}:{hi}]", (d_k,), ATTENTION, "d_k"),
        ]
    rows.append(Param(f"attention.output.dense.weight[:, {lo}:{hi}]", (H, d_k), ATTENTION, "H*d_k"))
    return rows
