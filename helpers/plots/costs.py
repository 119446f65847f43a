"""Pictures introduced in ``08_flops_and_memory``."""

from __future__ import annotations

__all__: list[str] = []
