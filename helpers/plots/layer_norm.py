"""Pictures introduced in ``04_layer_norm``."""

from __future__ import annotations

__all__: list[str] = []
