"""The golden comparison and the relations it shares its comparison with (SPEC.md
golden.observables, absent.byte-identical, relay.uncalled-inert).

``golden.observables`` compares a variant with the reference's golden: a difference from
the reference is reported there, once. The two relations compare a variant with another run
of the same port (``toolnexus_conformance.scenario.relations``): the uncalled-relay variant with the port's own
variant without the extra tool (``relay.uncalled-inert``), a relay-free variant with the
port's build without relay support (``absent.byte-identical``). All three use the one
comparison (``compare_variant``), so the same normalization rows forgive alike. A difference
a row forgives is yielded as :class:`Forgiven` under that row's advisory rule.
"""

from __future__ import annotations

import contextlib
import importlib.util
import re
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path
from typing import Any

from toolnexus_conformance.golden.compare import compare_variant
from toolnexus_conformance.golden.files import REGENERATE as REGEN
from toolnexus_conformance.golden.normalize import normalize
from toolnexus_conformance.run.facts import Facts
from toolnexus_conformance.run.observables import observables
from toolnexus_conformance.run.runner import RunRecord
from toolnexus_conformance.scenario.declarations import declared_name
from toolnexus_conformance.scenario.model import UNCALLED_RELAY_TOOL

from . import Finding, Forgiven, NotApplicable, check, counterpart_of
from .relay import relay_requests

# The comparisons a variant owns instead of one another: the uncalled-relay variant has no
# golden of its own and is compared with its own base variant instead.
GOLDEN_RULES = ("golden.observables", "relay.uncalled-inert")


def golden_owner(*, uncalled_relay: bool) -> str:
    """Which rule a variant's comparison proves (a relay-free variant is compared with the
    golden too; absent.byte-identical is a relation of its own)."""
    return "relay.uncalled-inert" if uncalled_relay else "golden.observables"


def _owner(facts: Facts) -> str:
    return golden_owner(uncalled_relay=facts.uncalled_relay)


@lru_cache(maxsize=1)
def reference_version() -> str:
    """reference_py's ``__version__``, read from its ``__init__.py`` rather than imported:
    this process never runs the reference, and importing it only for this cost ~0.3 s of the
    first golden check (more when pytest rewrites its modules and cannot cache them)."""
    spec = importlib.util.find_spec("reference_py")  # finds the package without running it
    if spec is not None and spec.origin is not None:
        with contextlib.suppress(OSError, UnicodeDecodeError):
            found = _VERSION_LINE.search(Path(spec.origin).read_text(encoding="utf-8"))
            if found is not None:
                return found.group(1)
    import reference_py  # not a plain literal any more: ask the package itself

    return str(reference_py.__version__)


_VERSION_LINE = re.compile(r'^__version__ = "([^"\\]+)"$', re.MULTILINE)


def provenance(facts: Facts) -> dict[str, str]:
    return {"reference": reference_version(), "scenario": facts.scenario_digest}


def golden_payload(record: RunRecord, facts: Facts) -> dict[str, Any]:
    """What a golden file holds for this run (written by --snapshot-update on the reference)."""
    return {"provenance": provenance(facts), "observables": normalize(observables(record))}


def _differences(facts: Facts, golden: dict[str, Any], got: dict[str, Any], what: str) -> Iterator[Finding]:
    comparison = compare_variant(golden["observables"], got, facts)
    for rule, diffs in comparison.gaps.items():
        yield from (Forgiven(rule, f"{facts.node_id}: {d.render().strip()}") for d in diffs)
    if comparison.failures:
        yield what + "\n" + comparison.render_failures()


def _against_own_golden(record: RunRecord, facts: Facts, owner: str) -> Iterator[Finding]:
    if _owner(facts) != owner:
        raise NotApplicable(f"this variant's golden comparison proves {_owner(facts)}")
    golden = facts.goldens.of(facts.variant_name)
    if golden is None:
        yield f"no golden for {facts.node_id}; {REGEN}"
        return
    payload = {
        "provenance": {"reference": facts.goldens.reference, "scenario": facts.scenario_digest},
        "observables": normalize(observables(record)),
    }
    if golden.get("provenance") != payload["provenance"]:
        yield f"the golden is stale (provenance {golden.get('provenance')} vs {payload['provenance']}); {REGEN}"
        return
    yield from _differences(facts, golden, payload["observables"], "observables differ from the golden:")


@check("golden.observables")
def golden_observables(record: RunRecord, facts: Facts) -> Iterator[Finding]:
    yield from _against_own_golden(record, facts, "golden.observables")


@check("absent.byte-identical")
def absent_byte_identical(record: RunRecord, facts: Facts) -> Iterator[Finding]:
    if facts.uncalled_relay:
        raise NotApplicable("judged on the variant without the uncalled relay tool")
    baseline = counterpart_of(record, "absent.byte-identical")
    got = normalize(observables(record))
    yield from _differences(facts, {"observables": baseline}, got, "observables differ from the same port without relay support:")


def strip_uncalled_relay(tree: dict[str, Any], style: str) -> dict[str, Any]:
    """The observables without the uncalled relay tool's declaration. ``tree`` is left as it
    is: only the objects on the way to a changed ``tools`` list are copied."""
    name = UNCALLED_RELAY_TOOL["name"]
    phases = []
    for phase in tree["phases"]:
        requests = []
        for body in phase["requests"]:
            if isinstance(body, dict) and "tools" in body:
                body = dict(body)
                body["tools"] = [t for t in body["tools"] if declared_name(t, style) != name]
                if not body["tools"]:
                    del body["tools"]
                    body.pop("tool_choice", None)
            requests.append(body)
        phases.append({**phase, "requests": requests})
    return {**tree, "phases": phases}


@check("relay.uncalled-inert")
def uncalled_inert(record: RunRecord, facts: Facts) -> Iterator[Finding]:
    if not facts.uncalled_relay:
        raise NotApplicable("only the uncalled-relay variant exercises this")
    name = UNCALLED_RELAY_TOOL["name"]
    for i, body in enumerate(p for phase in record.phases for p in phase.requests):
        tools = body.get("tools") or []
        if not tools:
            yield f"request {i + 1} has no tools although a relay tool is declared"
            continue
        last_name = declared_name(tools[-1], facts.style)
        if last_name != name:
            yield f"request {i + 1}: the uncalled relay tool is not the last declaration (last is {last_name!r})"
    if not any(phase.result is not None or phase.error is not None for phase in record.phases):
        yield "the run returned neither a RunResult nor a port error: there is nothing to compare"
    if any(name in str(r) for _, r in relay_requests(record)):
        yield "the uncalled relay tool was surfaced"
    own = counterpart_of(record, "relay.uncalled-inert")
    got = normalize(strip_uncalled_relay(observables(record), facts.style))
    got["variant"] = own["variant"]
    yield from _differences(
        facts, {"observables": own}, got, "an uncalled relay tool changed more than its declaration (against the same port without it):"
    )
