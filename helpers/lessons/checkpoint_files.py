"""What a published checkpoint file weighs, byte for byte, from the tensors it holds: no download needed.

Introduced in ``zh/chinese_checkpoints``. A ``.safetensors`` file is three parts:

1. 8 bytes: the header's length N, a little-endian unsigned 64-bit integer;
2. N bytes of header: compact JSON (no spaces), ``"__metadata__"`` first (string keys and values, ``{"format":"pt"}``
   as PyTorch writers leave it), then one entry per tensor, ``{"dtype":"F32","shape":[21128,768],
   "data_offsets":[begin,end]}``, the tensors ordered by their dtype's size (largest first), then by name; the
   safetensors library of today pads the header with spaces to a multiple of 8 bytes, a writer that does not pad
   leaves N as the JSON's length;
3. the tensors' bytes, in that order, with no gap: elements × bytes per element.

:func:`safetensors_header` writes part 2 from names, shapes and dtypes alone (``tests/test_zh_checkpoints.py``
checks it byte for byte against ``safetensors.torch.save``), :func:`safetensors_file_bytes` adds the three parts.
:func:`pretraining_file_tensors` lists what a BERT pre-training checkpoint stores under each reading of it: the
``bert.`` model and the ``cls.`` heads (the MLM decoder tied to the word table, so stored once), LayerNorm vectors
named ``weight``/``bias`` or, as the first PyTorch ports of Google's checkpoints named them, ``gamma``/``beta``, and
with or without the ``position_ids`` buffer (int64, 1 × P) that transformers saved in some versions.
"""

from __future__ import annotations

import json
from typing import Mapping, Sequence

from .checkpoint import DTYPE_BYTES, StoredTensor
from ..config import ModelConfig
from ..params import param_table, pretraining_heads

HEADER_LENGTH_BYTES = 8  # the little-endian u64 in front of the header
ALIGNMENT = 8  # today's safetensors pads its header to a multiple of 8 bytes
MLM, NSP = "cls.predictions.", "cls.seq_relationship."


def tensor_bytes(tensors: Sequence[StoredTensor]) -> int:
    """The bytes the tensors' data take: elements × bytes per element, summed (part 3 of a safetensors file).

    Introduced in ``zh/chinese_checkpoints``.
    """
    return sum(t.count * DTYPE_BYTES[t.dtype] for t in tensors)


def safetensors_header(tensors: Sequence[StoredTensor], metadata: Mapping[str, str] | None = None,
                       pad: bool = True) -> bytes:
    """The header a safetensors writer puts in front of these tensors (part 2), as bytes.

    Introduced in ``zh/chinese_checkpoints``. ``metadata``: the ``__metadata__`` entry (left out when None or empty);
    ``pad``: spaces up to a multiple of :data:`ALIGNMENT` bytes, as safetensors writes today. The safetensors
    library keeps ``__metadata__`` in a hash map: with more than one key its order (not its length) may differ.
    """
    names = [t.name for t in tensors]
    if len(set(names)) != len(names):
        raise ValueError("two tensors share a name")
    ordered = sorted(tensors, key=lambda t: (-DTYPE_BYTES[t.dtype], t.name))
    header: dict[str, object] = {"__metadata__": dict(metadata)} if metadata else {}
    offset = 0
    for t in ordered:
        size = t.count * DTYPE_BYTES[t.dtype]
        header[t.name] = {"dtype": t.dtype, "shape": list(t.shape), "data_offsets": [offset, offset + size]}
        offset += size
    raw = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    return raw + b" " * ((-len(raw)) % ALIGNMENT if pad else 0)


def safetensors_file_bytes(tensors: Sequence[StoredTensor], metadata: Mapping[str, str] | None = None,
                           pad: bool = True) -> int:
    """The size of the safetensors file holding these tensors: 8 + header + data.

    Introduced in ``zh/chinese_checkpoints``.
    """
    return HEADER_LENGTH_BYTES + len(safetensors_header(tensors, metadata, pad)) + tensor_bytes(tensors)


def pretraining_file_tensors(config: ModelConfig, heads: Sequence[str] = (MLM, NSP),
                             norm_names: tuple[str, str] = ("weight", "bias"), position_ids: bool = False,
                             dtype: str = "F32") -> list[StoredTensor]:
    """The tensors a BERT pre-training checkpoint stores: ``bert.`` + the ``BertModel`` table, the ``cls.`` heads
    whose names start with one of ``heads`` (MLM and NSP by default; ``()`` for a file of the bare model), once each.

    Introduced in ``zh/chinese_checkpoints``. The MLM decoder's weight is the word table (tied): the engine's table
    counts it once, and a safetensors writer stores a shared tensor once, so it is not listed. ``norm_names``:
    what the LayerNorm vectors are called (``("gamma", "beta")`` in the first PyTorch ports); ``position_ids``: add
    the int64 buffer ``bert.embeddings.position_ids`` of shape 1 × P; ``dtype``: of every parameter.
    """
    weight, bias = norm_names
    model = param_table(config)
    if any(p.name.startswith("bert.") for p in model):
        raise ValueError(f"{config.name}: pass the BertModel config (load_config(name)), not a pre-training class")
    rows = [("bert." + p.name, p.shape) for p in model]
    rows += [(p.name, p.shape) for p in pretraining_heads(config) if p.name.startswith(tuple(heads))]

    def renamed(name: str) -> str:
        if ".LayerNorm." not in name:
            return name
        stem, _, last = name.rpartition(".")
        return f"{stem}.{weight if last == 'weight' else bias}"

    out = [StoredTensor(renamed(name), tuple(shape), dtype) for name, shape in rows]
    if position_ids:
        out.append(StoredTensor("bert.embeddings.position_ids", (1, config["P"]), "I64"))
    return out
