"""The counterpart runs a session's relations compare with (see :mod:`toolnexus_conformance.scenario.relations`).

A relation compares a variant with another run of the same port: the port's own run of
another variant of the scenario (kept when the session ran it already, else run now), or the
same variant on the port's build without relay support (its ``baseline`` in ports.toml,
started beside the port's own shim). Every counterpart is normalized exactly as a golden is,
so the one comparison and its normalization rows apply.

Where no counterpart can be had, the relation is not judged and says why: the port has no
relay support (absent.byte-identical holds by construction), no baseline build is configured
or given, or the counterpart run itself failed.

The baseline runs on a shim of its own, so it can go while the port's own run of the variant
goes (:meth:`CounterpartRuns.baseline_ahead`): one background thread, owned by the session
and stopped with it, runs one baseline at a time; the item waits for it before it is judged.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from toolnexus_conformance.fake_provider import FakeProvider
from toolnexus_conformance.golden.normalize import normalize
from toolnexus_conformance.helpers.errors import HarnessError
from toolnexus_conformance.run.facts import facts_for
from toolnexus_conformance.run.observables import observables
from toolnexus_conformance.run.runner import RunRecord, run_variant
from toolnexus_conformance.scenario.model import Variant
from toolnexus_conformance.scenario.relations import Counterpart, Relation, related_by_others, relations_of
from toolnexus_conformance.shim.launchers import port_session
from toolnexus_conformance.shim.ports import PortError, ResolvedPort, load_registry, resolve
from toolnexus_conformance.shim.session import Handshake, ShimSession

__all__ = ["BASELINE_SRC_ENV", "CounterpartRuns", "Related", "resolve_baseline"]

BASELINE_SRC_ENV = "TOOLNEXUS_BASELINE_SRC"
NO_RELAY = (
    "the port declares no relay support: it is itself a client without relay, so ADR 0010 decision 5 "
    "holds by construction"
)


def resolve_baseline(port: str, baseline_src: str | None, *, build: bool) -> tuple[ResolvedPort | None, str]:
    """The port's build without relay support, or ``None`` and why there is none."""
    registry = load_registry()
    spec = registry.get(port)
    if spec is None or spec.baseline is None:
        return None, f"no build of port {port!r} without relay support is configured (ports.toml: `baseline`)"
    base = registry.get(spec.baseline)
    if base is None:
        return None, f"port {port!r} names the baseline {spec.baseline!r}, which ports.toml does not define"
    src = baseline_src or os.environ.get(BASELINE_SRC_ENV) or None
    if base.needs_source and not src:
        return None, (
            f"port {port!r}'s baseline {base.name!r} is built from a checkout of its last release before relay: "
            f"pass --baseline-src=PATH (or set {BASELINE_SRC_ENV})"
        )
    try:
        return resolve(base.name, None, src if base.takes_source else None, None, build=build), ""
    except PortError as exc:
        return None, f"the baseline {base.name!r} could not be built: {exc}"


def _start_baseline(port: ResolvedPort) -> ShimSession:
    """A session on the baseline ``port``'s shim, in this process's environment plus the port's own."""
    return port_session(port, env={**os.environ, **port.env} if port.env else None)


# Called with the variant's record once it ran (None: the run failed): fills the record's
# counterparts, after waiting for any that ran beside the port's own run.
Related = Callable[[RunRecord | None], None]


@dataclass
class CounterpartRuns:
    """The counterparts of one session: the port's records other variants relate to, and the
    baseline port's shim."""

    baseline: ResolvedPort | None = None
    baseline_why: str = "no baseline was resolved"
    _kept: dict[str, dict[str, Any]] = field(default_factory=dict)
    _baseline_shim: ShimSession | None = None
    _ahead: ThreadPoolExecutor | None = None

    def keep(self, variant: Variant, record: RunRecord) -> None:
        """Keep a run's normalized observables when another variant relates to it."""
        if related_by_others(variant):
            self._kept[variant.node_id] = normalize(observables(record))

    def relate(
        self, variant: Variant, rules: list[str], handshake: Handshake, own_shim: ShimSession,
        provider: FakeProvider, timeout: float,
    ) -> Related:
        """The counterparts of ``variant``'s relations among ``rules``: a baseline one starts
        now, on its own shim, beside the port's own run; the others run (or are read from
        what the session kept) once the port's record is there."""
        relations = [relation for relation in relations_of(variant) if relation.rule in rules]
        ahead = {
            relation.rule: self.baseline_ahead(relation, handshake, own_shim, provider, timeout)
            for relation in relations if relation.baseline
        }

        def related(record: RunRecord | None) -> None:
            baselines = {rule: future.result() for rule, future in ahead.items()}
            if record is None:
                return
            self.keep(variant, record)
            for relation in relations:
                found = baselines.get(relation.rule)
                if found is None:
                    found = self.counterpart(relation, handshake, own_shim, provider, timeout)
                record.counterparts[relation.rule] = found

        return related

    def counterpart(
        self, relation: Relation, handshake: Handshake, own_shim: ShimSession, provider: FakeProvider, timeout: float
    ) -> Counterpart:
        if not relation.baseline:
            kept = self._kept.get(relation.counterpart.node_id)
            if kept is not None:
                return Counterpart(kept)
            found = self._run(relation.counterpart, own_shim, provider, timeout, handshake)
            if found.observables is not None and related_by_others(relation.counterpart):
                self._kept[relation.counterpart.node_id] = found.observables
            return found
        if "relay" not in handshake.capabilities:
            return Counterpart(None, NO_RELAY)
        if self.baseline is None:
            return Counterpart(None, self.baseline_why)
        shim = self._baseline()
        try:
            baseline_handshake = shim.ensure_alive()
        except HarnessError as exc:
            return Counterpart(None, f"the baseline {self.baseline.name!r} did not start: {exc}")
        return self._run(relation.counterpart, shim, provider, self.baseline.timeout, baseline_handshake)

    def baseline_ahead(
        self, relation: Relation, handshake: Handshake, own_shim: ShimSession, provider: FakeProvider, timeout: float
    ) -> Future[Counterpart]:
        """The baseline ``relation``'s counterpart, run on the baseline's own shim beside
        whatever the caller runs meanwhile on the port's shim; the caller takes its result
        before it runs anything else."""
        assert relation.baseline, "only a baseline counterpart runs on a shim of its own"
        if self._ahead is None:
            self._ahead = ThreadPoolExecutor(max_workers=1, thread_name_prefix="baseline-counterpart")
        return self._ahead.submit(self.counterpart, relation, handshake, own_shim, provider, timeout)

    def _baseline(self) -> ShimSession:
        if self._baseline_shim is None:
            assert self.baseline is not None
            self._baseline_shim = _start_baseline(self.baseline)
        return self._baseline_shim

    @staticmethod
    def _run(variant: Variant, shim: ShimSession, provider: FakeProvider, timeout: float, handshake: Handshake) -> Counterpart:
        missing = sorted(variant.requires - set(handshake.capabilities))
        if missing:
            return Counterpart(None, f"the counterpart {variant.node_id} needs the capabilities {missing}")
        try:
            record = run_variant(variant, shim, provider, timeout=timeout, facts=facts_for(variant), declarations=False)
        except HarnessError as exc:
            return Counterpart(None, f"the counterpart run {variant.node_id} failed: {exc}")
        return Counterpart(normalize(observables(record)))

    def close(self) -> None:
        if self._ahead is not None:
            self._ahead.shutdown(wait=True)
            self._ahead = None
        if self._baseline_shim is not None:
            self._baseline_shim.close()
