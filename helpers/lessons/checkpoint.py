"""Reading a trained checkpoint's tensor list from its safetensors header, without loading any weight.

Introduced in ``06_full_bert``. A ``.safetensors`` file starts with 8 bytes, a little-endian unsigned
64-bit length N, then N bytes of UTF-8 JSON: ``{"name": {"dtype": "F32", "shape": [...],
"data_offsets": [begin, end]}, ..., "__metadata__": {...}}``, then the raw tensor bytes. Everything
here uses the standard library only: nothing is unpickled, nothing is executed, and only the header
is read (plus, on request, the bytes of one small tensor). A file that does not follow the format
raises :class:`CheckpointError`, whose message says what is wrong.
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from ..config import ModelConfig
from ..params import LM_HEAD, TABLE, Param, numel, param_table
from ..report import fmt_int, table

METADATA = "__metadata__"
# bytes per element of the dtypes the safetensors format defines (sub-byte types are not checked)
DTYPE_BYTES: dict[str, int] = {
    "BOOL": 1, "U8": 1, "I8": 1, "F8_E5M2": 1, "F8_E4M3": 1, "F8_E8M0": 1,
    "I16": 2, "U16": 2, "F16": 2, "BF16": 2,
    "I32": 4, "U32": 4, "F32": 4,
    "I64": 8, "U64": 8, "F64": 8,
}
# the safetensors library refuses headers above 100 MB; so do we (a corrupt length reads as huge)
MAX_HEADER_BYTES = 100_000_000


class CheckpointError(ValueError):
    """A file that is not a readable safetensors checkpoint; the message names the file and the problem.
    No notebook calls it; it works behind the helpers of ``06_full_bert``."""


@dataclass(frozen=True)
class StoredTensor:
    """One tensor as a checkpoint's header lists it: name, shape, dtype and element count.
    No notebook calls it; it works behind the helpers of ``06_full_bert``."""

    name: str
    shape: tuple[int, ...]
    dtype: str

    @property
    def count(self) -> int:
        return numel(self.shape)


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _check_entry(path: Path, name: str, entry: Any, data_bytes: int) -> None:
    where = f"{path}: tensor {name!r}"
    if not isinstance(entry, dict):
        raise CheckpointError(f"{where} must be a JSON object, got {type(entry).__name__}")
    for key in ("dtype", "shape", "data_offsets"):
        if key not in entry:
            raise CheckpointError(f"{where} has no {key!r}")
    dtype, shape, offsets = entry["dtype"], entry["shape"], entry["data_offsets"]
    if not isinstance(dtype, str):
        raise CheckpointError(f"{where}: dtype must be a string, got {dtype!r}")
    if not isinstance(shape, list) or not all(_is_count(n) for n in shape):
        raise CheckpointError(f"{where}: shape must be a list of non-negative integers, got {shape!r}")
    if not (isinstance(offsets, list) and len(offsets) == 2 and all(_is_count(n) for n in offsets)):
        raise CheckpointError(f"{where}: data_offsets must be [begin, end], got {offsets!r}")
    begin, end = offsets
    if not begin <= end <= data_bytes:
        raise CheckpointError(f"{where}: data_offsets {offsets} fall outside the {data_bytes} data bytes")
    if dtype in DTYPE_BYTES and end - begin != numel(shape) * DTYPE_BYTES[dtype]:
        raise CheckpointError(
            f"{where}: {end - begin} bytes stored for shape {shape} of {dtype} "
            f"({numel(shape) * DTYPE_BYTES[dtype]} expected)")


def read_safetensors_header(path: str | Path) -> dict[str, Any]:
    """The JSON header of a ``.safetensors`` file (``__metadata__`` included), checked; no weight is read.

    Introduced in ``06_full_bert``. Raises :class:`CheckpointError` for a missing, truncated or
    malformed file.
    """
    path = Path(path)
    try:
        size = path.stat().st_size
        with path.open("rb") as f:
            prefix = f.read(8)
            if len(prefix) < 8:
                raise CheckpointError(
                    f"{path}: {len(prefix)} bytes, too short for a safetensors file "
                    "(it starts with an 8-byte header length)")
            (length,) = struct.unpack("<Q", prefix)
            if length == 0 or length > MAX_HEADER_BYTES or length > size - 8:
                raise CheckpointError(
                    f"{path}: header length {length} does not fit a file of {size} bytes "
                    "(truncated, or not a safetensors file)")
            raw = f.read(length)
    except OSError as error:
        raise CheckpointError(f"{path}: cannot be read ({error.__class__.__name__})") from None
    try:
        header = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise CheckpointError(f"{path}: the header is not UTF-8 JSON ({error.__class__.__name__})") from None
    if not isinstance(header, dict):
        raise CheckpointError(f"{path}: the header must be a JSON object, got {type(header).__name__}")
    metadata = header.get(METADATA, {})
    if not isinstance(metadata, dict):
        raise CheckpointError(f"{path}: {METADATA} must be a JSON object, got {type(metadata).__name__}")
    data_bytes = size - 8 - length
    for name, entry in header.items():
        if name != METADATA:
            _check_entry(path, name, entry, data_bytes)
    _check_tiling(path, header, data_bytes)
    return header


def _check_tiling(path: Path, header: dict[str, Any], data_bytes: int) -> None:
    """The tensors' byte ranges must cover the data exactly: no gap, no overlap (as safetensors requires)."""
    position = 0
    for (begin, end), name in sorted((tuple(e["data_offsets"]), n) for n, e in header.items() if n != METADATA):
        if begin != position:
            what = "overlaps the tensor before it" if begin < position else f"leaves a gap of {begin - position} bytes"
            raise CheckpointError(f"{path}: tensor {name!r} starts at data byte {begin}: it {what}")
        position = end
    if position != data_bytes:
        raise CheckpointError(f"{path}: the tensors cover {position} of the {data_bytes} data bytes")


def checkpoint_tensors(path: str | Path) -> list[StoredTensor]:
    """Every tensor a safetensors file holds, in the order its header lists them (no weight loaded).

    Introduced in ``06_full_bert``.
    """
    header = read_safetensors_header(path)
    return [StoredTensor(name, tuple(entry["shape"]), entry["dtype"])
            for name, entry in header.items() if name != METADATA]


def read_tensor_bytes(path: str | Path, name: str) -> bytes:
    """The raw little-endian bytes of one tensor (meant for small buffers such as ``position_ids``).

    Introduced in ``06_full_bert``.
    """
    path = Path(path)
    header = read_safetensors_header(path)
    if name == METADATA or name not in header:
        raise CheckpointError(f"{path}: no tensor named {name!r}")
    begin, end = header[name]["data_offsets"]
    with path.open("rb") as f:
        (length,) = struct.unpack("<Q", f.read(8))
        f.seek(8 + length + begin)
        return f.read(end - begin)


def find_prefix(names: Iterable[str], anchor: str = "embeddings.word_embeddings.weight") -> str:
    """What a checkpoint puts before the engine's names (``""``, ``"bert."`` ...), found from one anchor name.

    Introduced in ``06_full_bert``. Raises :class:`CheckpointError` if no name, or more than one,
    ends with the anchor.
    """
    hits = [n for n in names if n == anchor or n.endswith("." + anchor)]
    if len(hits) != 1:
        raise CheckpointError(f"expected one name ending in {anchor!r}, found {len(hits)}: {hits[:3]}")
    return hits[0][: len(hits[0]) - len(anchor)]


@dataclass(frozen=True)
class Comparison:
    """A checkpoint's tensors set beside an engine table, by name (prefix removed), not by order.
    No notebook calls it; it works behind the helpers of ``06_full_bert``."""

    matched: tuple[str, ...]
    only_in_checkpoint: tuple[str, ...]
    only_in_table: tuple[str, ...]
    shape_mismatches: tuple[tuple[str, tuple[int, ...], tuple[int, ...]], ...]


def compare(tensors: Sequence[StoredTensor], params: Sequence[Param], prefix: str = "") -> Comparison:
    """Name-by-name comparison of stored tensors (names starting with ``prefix``) and a parameter table.

    Introduced in ``06_full_bert``. A stored name without the prefix is reported as only in the
    checkpoint, under its full name.
    """
    stored = {(t.name[len(prefix):] if t.name.startswith(prefix) else t.name): t for t in tensors}
    if len(stored) != len(tensors):
        raise CheckpointError(f"removing the prefix {prefix!r} makes two stored names equal")
    shapes = {p.name: p.shape for p in params}
    matched = tuple(p.name for p in params if p.name in stored and stored[p.name].shape == p.shape)
    mismatches = tuple((p.name, stored[p.name].shape, p.shape)
                       for p in params if p.name in stored and stored[p.name].shape != p.shape)
    only_stored = tuple(t.name for key, t in stored.items() if key not in shapes)
    only_table = tuple(p.name for p in params if p.name not in stored)
    return Comparison(matched, only_stored, only_table, mismatches)


def checkpoint_table(tensors: Sequence[StoredTensor]) -> str:
    """Fixed-width table of stored tensors: name, shape, dtype, element count.

    Introduced in ``06_full_bert``.
    """
    rows = [(t.name, "[" + ", ".join(map(str, t.shape)) + "]", t.dtype, fmt_int(t.count)) for t in tensors]
    return table(("name", "shape", "dtype", "elements"), rows, right=(3,))


def loaded_head(config: ModelConfig, raw: Mapping[str, Any]) -> list[Param]:
    """The output head ``from_pretrained`` keeps although the model built from the config is tied.

    Introduced in ``09_modern_architectures``. T5's config class forces ``tie_word_embeddings = True`` (a meta
    build has no ``lm_head`` of its own), but a checkpoint whose file says ``false`` (T5 v1.1, FLAN-T5) stores a
    trained ``lm_head.weight`` beside ``shared.weight``; transformers 5.23's ``PreTrainedModel.tie_weights`` finds
    both in the checkpoint with different values and does NOT tie them. Returns that head's row (V × H) when
    ``raw`` (the ``config.json``) sets ``tie_word_embeddings: false`` and the engine's table still ties the head to
    the token table; otherwise ``[]`` (the built and the loaded model are the same). It assumes what such files
    hold: a trained head whose values differ from the table's.
    """
    tied = [p for p in param_table(config) if p.kind == TABLE and p.tokens]  # a table that is also the head
    if raw.get("tie_word_embeddings", True) is not False or not tied:
        return []
    return [Param.matrix("lm_head.weight", tied[0].shape, LM_HEAD, "V*H")]


def loaded_total(config: ModelConfig, raw: Mapping[str, Any]) -> int:
    """The parameters of the model ``from_pretrained`` returns: the built (tied) count plus :func:`loaded_head`.

    Introduced in ``09_modern_architectures``.
    """
    from ..count import count_model

    return count_model(config).total + sum(p.count for p in loaded_head(config, raw))
