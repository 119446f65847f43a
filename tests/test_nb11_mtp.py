"""Notebook 11's MTP column: what transformers does with each checkpoint's
multi-token-prediction layers, read from its classes, beside what the shipped configs name.

GLM-4.5 and DeepSeek-V3 name theirs (``num_nextn_predict_layers``) and transformers skips those layers by index when
loading; Qwen3-Next's config names none, yet transformers skips ``mtp.*`` keys (the checkpoint's MTP layer, which
vLLM's ``Qwen3NextMTP`` builds as ``getattr(config, "num_nextn_predict_layers", 1)`` layers); the other models of the
notebook's active table skip nothing of the kind.
"""

from __future__ import annotations

import pytest

from helpers import load_config
from helpers.config import raw_config

transformers = pytest.importorskip("transformers")

ACTIVE_TABLE = ("mixtral-8x7b-v0.1", "qwen3-30b-a3b", "deepseek-v3", "gpt-oss-120b", "gpt-oss-20b", "deepseek-v2",
                "deepseek-v2-lite", "glm-4.5", "qwen3-next-80b-a3b", "llama-4-scout-17b-16e-text",
                "llama-4-maverick-17b-128e-text")


def skipped(model: str) -> list[str]:
    cls = getattr(transformers, load_config(model).architecture)
    return list(getattr(cls, "_keys_to_ignore_on_load_unexpected", None) or [])


def test_named_mtp_layers_are_skipped_by_index():
    for model, layer in (("glm-4.5", 92), ("deepseek-v3", 61)):
        c = load_config(model)
        assert raw_config(model)["num_nextn_predict_layers"] == 1 and c["L"] == layer
        assert rf"model\.layers\.{layer}.*" in skipped(model)


def test_qwen3_next_names_none_and_transformers_drops_mtp_keys():
    assert "num_nextn_predict_layers" not in raw_config("qwen3-next-80b-a3b")
    assert skipped("qwen3-next-80b-a3b") == [r"^mtp.*"]


def test_no_other_model_of_the_table_skips_mtp_layers():
    others = [m for m in ACTIVE_TABLE if m not in ("glm-4.5", "deepseek-v3", "qwen3-next-80b-a3b")]
    for model in others:
        assert "num_nextn_predict_layers" not in raw_config(model), model
        assert not any("mtp" in k or "layers" in k for k in skipped(model)), (model, skipped(model))
