"""The model families by ``model_type``: where the core (config, params …) finds a family without importing one.

The layering is one way: :mod:`helpers.families` imports the core (config, params) and registers each family here
when it is imported; the core reads :data:`FAMILIES` at call time and imports no family module. ``helpers/__init__.py``
imports :mod:`helpers.families`, and Python runs it before any module of the package, so the registry is full
whatever a program imports first (``tests/test_imports.py`` checks the layering).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # for the annotations only: never run, no import arrow
    from .families.base import Family

# model_type -> its Family, in the order helpers.families registers them
FAMILIES: dict[str, Family] = {}


def register(families: dict[str, Family]) -> dict[str, Family]:
    """File ``families`` (model_type -> Family) in the registry and return its table, :data:`FAMILIES`.

    No notebook calls it; it works behind the helpers of ``00_overview``. A model type filed twice with another
    family is refused.
    """
    for model_type, family in families.items():
        if FAMILIES.get(model_type, family) is not family or family.model_type != model_type:
            raise ValueError(f"model_type {model_type!r}: {family.model_type!r} cannot be filed there")
        FAMILIES[model_type] = family
    return FAMILIES
