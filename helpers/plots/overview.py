"""Pictures introduced in ``00_overview``."""

from __future__ import annotations

__all__: list[str] = []
