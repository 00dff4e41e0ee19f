"""Port-relative relations: which rules compare two runs of the same port, and with what.

Three rules are statements about a port measured against itself, not against the reference:

- ``stream.same-observables``: a port's stream of a script gives what its own run of that
  script gives (the run variant of the same style, on the same port);
- ``relay.uncalled-inert``: declaring an uncalled relay tool changes only the declarations
  (the variant without the extra tool, on the same port);
- ``absent.byte-identical`` (ADR 0010 decision 5): with no relay tool declared, the port is
  indistinguishable from a client without relay support (the same variant, on the port's
  pre-relay *baseline*: ``baseline`` in ports.toml, e.g. golang/v0.10.0 for golang). A port
  with no relay support at all is such a client, so the rule does not apply to it.

A difference from the reference is ``golden.observables``'s, reported once; these rules
report only what a port does differently from itself. The counterpart run is recorded by
the session (:meth:`ConformanceSession.counterpart`) and handed to the check inside the
record, so a check stays a function of (record, facts).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from toolnexus_conformance.scenario.model import Variant

__all__ = ["Counterpart", "Relation", "related_by_others", "relations_of"]

STREAM_RULE = "stream.same-observables"
UNCALLED_RULE = "relay.uncalled-inert"
ABSENT_RULE = "absent.byte-identical"


@dataclass(frozen=True)
class Relation:
    """``rule`` compares a variant with ``counterpart``, run on the same port or, when
    ``baseline``, on the port's build without relay support."""

    rule: str
    counterpart: Variant
    baseline: bool = False


@dataclass(frozen=True)
class Counterpart:
    """The counterpart run's normalized observables, or why there is none to compare with."""

    observables: dict[str, Any] | None
    why_not: str = ""


def relations_of(variant: Variant) -> list[Relation]:
    """The relations a variant is judged by."""
    scenario = variant.scenario
    found: list[Relation] = []
    if variant.uncalled_relay:
        found.append(Relation(UNCALLED_RULE, Variant(scenario, variant.style, variant.entry, uncalled_relay=False)))
        return found
    if variant.entry == "stream" and "run" in scenario.data["entries"]:
        found.append(Relation(STREAM_RULE, Variant(scenario, variant.style, "run", uncalled_relay=False)))
    if scenario.relay_free:
        found.append(Relation(ABSENT_RULE, variant, baseline=True))
    return found


def related_by_others(variant: Variant) -> bool:
    """Whether another variant of the scenario compares itself with this one on the same
    port (so its record is worth keeping for that variant)."""
    if variant.uncalled_relay:
        return False
    scenario = variant.scenario
    if variant.entry == "run" and "stream" in scenario.data["entries"]:
        return True
    return any(other.uncalled_relay and other.style == variant.style and other.entry == variant.entry for other in scenario.variants())
