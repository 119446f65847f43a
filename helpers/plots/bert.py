"""Pictures introduced in ``06_full_bert``."""

from __future__ import annotations

__all__: list[str] = []
