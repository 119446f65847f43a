"""Pictures introduced in ``10_budgets``."""

from __future__ import annotations

__all__: list[str] = []
