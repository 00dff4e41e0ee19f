"""What a differential find leaves on disk: the shrunk scenario as a scenario file, and the
goldens the suite needs to judge it, written from the expected port's runs.

``<out>/<id>.json`` is a valid scenario (``load_scenario`` reads it back: schema, file name ==
id, known rules) and ``<out>/golden/<id>/<variant>.json`` holds each variant's golden with
the provenance the suite checks. The goldens stay beside the find rather than in
fixtures/golden/, where a whole-suite ``--snapshot-update`` would delete them as orphans;
``TOOLNEXUS_CONFORMANCE_GOLDEN`` points a pytest run at them (:func:`pytest_command`).
Adopting a find as a scenario means moving the file to fixtures/scenarios/ and writing its
goldens from the reference there, as any new scenario.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

from toolnexus_conformance.differential.search import TIMEOUT_S, fixture_from
from toolnexus_conformance.fake_provider import FakeProvider
from toolnexus_conformance.run.facts import facts_for
from toolnexus_conformance.run.runner import run_variant
from toolnexus_conformance.scenario.model import load_scenario
from toolnexus_conformance.shim.session import ShimSession
from toolnexus_conformance.verdict.rules.golden import golden_payload

GOLDEN_ENV = "TOOLNEXUS_CONFORMANCE_GOLDEN"


def write_find(scenario: dict[str, Any], *, port: str, against: str, rule: str, reason: str,
               expected: ShimSession, provider: FakeProvider, out: Path) -> Path:
    """Write the find and its goldens under ``out``; the scenario file's path."""
    fixture = fixture_from(scenario, port, against)
    fixture["title"] += f": fails {rule} ({reason})"
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{fixture['id']}.json"
    path.write_text(json.dumps(fixture, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    loaded = load_scenario(path)  # the file as pytest will read it: its digest is the goldens' provenance
    for variant in loaded.variants():
        if variant.uncalled_relay:  # judged against its base variant's golden
            continue
        facts = facts_for(variant)
        record = run_variant(variant, expected, provider, timeout=TIMEOUT_S, facts=facts)
        golden = out / "golden" / loaded.id / f"{variant.name}.json"
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(json.dumps(golden_payload(record, facts), indent=2, ensure_ascii=False, sort_keys=True) + "\n",
                          encoding="utf-8")
    return path


def pytest_command(path: Path, port_args: list[str]) -> str:
    """The command that judges a find with the suite (run from the repository root)."""
    golden = path.parent / "golden"
    return " ".join([f"{GOLDEN_ENV}={shlex.quote(str(golden))}", "python -m pytest", shlex.quote(str(path)),
                     *map(shlex.quote, port_args), "-p no:cacheprovider"])
