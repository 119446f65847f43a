"""Pictures introduced in ``05_pooler_and_heads``."""

from __future__ import annotations

__all__: list[str] = []
