"""Pictures introduced in ``01_embeddings``."""

from __future__ import annotations

__all__: list[str] = []
