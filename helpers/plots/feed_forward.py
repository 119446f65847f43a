"""Pictures introduced in ``03_feed_forward``."""

from __future__ import annotations

__all__: list[str] = []
