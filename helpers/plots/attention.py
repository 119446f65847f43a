"""Pictures introduced in ``02_multi_head_attention``."""

from __future__ import annotations

__all__: list[str] = []
