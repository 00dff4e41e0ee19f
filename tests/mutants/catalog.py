"""The mutant catalogue: deliberately broken variants of the reference, one behaviour each.

A mutant is a name, the rule ids whose checks must kill it, a one-line description and a
patch function. The patch receives the loaded reference shim module and monkeypatches
``reference_py`` (or the shim's translation) in the mutant shim's own process only; nothing
here is ever imported by the product. ``tests/mutants/mutant_shim.py NAME`` applies one.
The patches live in the ``patches_*`` modules beside this one, grouped by rule area.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

Patch = Callable[[ModuleType], None]


@dataclass(frozen=True)
class Mutant:
    name: str
    kills: tuple[str, ...]
    description: str
    patch: Patch
    relay: bool = True  # False: the mutant runs as the relay-off shim (absent-relay baseline)


MUTANTS: dict[str, Mutant] = {}


def mutant(name: str, *kills: str, description: str, relay: bool = True) -> Callable[[Patch], Patch]:
    """Register the decorated patch function as mutant ``name`` killed by ``kills``."""

    def register(patch: Patch) -> Patch:
        if name in MUTANTS:
            raise RuntimeError(f"mutant {name!r} is registered twice")
        MUTANTS[name] = Mutant(name, tuple(kills), description, patch, relay)
        return patch

    return register


def wrap(owner: Any, attribute: str, make: Callable[[Any], Any]) -> None:
    """Replace ``owner.attribute`` with ``make(original)``."""
    setattr(owner, attribute, make(getattr(owner, attribute)))


def load() -> dict[str, Mutant]:
    """Import every patch module (their decorators fill the catalogue) and return it."""
    import patches_loop  # noqa: F401
    import patches_relay  # noqa: F401
    import patches_resume  # noqa: F401
    import patches_stream  # noqa: F401
    import patches_suspension  # noqa: F401

    return MUTANTS
