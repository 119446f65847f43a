"""Pictures introduced in ``07_decoder_llms``."""

from __future__ import annotations

__all__: list[str] = []
