"""What the differential's generator draws, and at what cost, on each hypothesis backend.

    python benchmarks/generator_mix.py [--examples 1000]

A script, not a test: it prints figures. For hypothesis's default backend and for the
generate-only backend the search uses (toolnexus_conformance/differential/backend.py), it draws
``--examples`` derandomized examples of the search's strategy (the shared features of the
reference pair) without running them, and prints how many distinct scenarios they were, the
CPU each distinct one cost to draw, and how often a scenario carries each feature that
makes the ports do more (hooks, an in-process waitFor, a durable resume, a restarted shim,
a split SSE stream) with the mean tool calls and canonical JSON size — so a throughput in
scenarios/s can be read against what each scenario exercises.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from hypothesis import Phase, find, settings  # noqa: E402
from hypothesis.errors import NoSuchExample  # noqa: E402

from toolnexus_conformance.differential.backend import BACKEND  # noqa: E402
from toolnexus_conformance.differential.search import Features, canonical, scenarios, search_settings  # noqa: E402

Scenario = dict[str, Any]
# what the reference pair (reference-norelay against reference) shares
REFERENCE_PAIR = Features(relay=False, resume=True, hooks=True, store=True)


def _turns(s: Scenario) -> list[dict[str, Any]]:
    return [*s["turns"], *s.get("resume", {}).get("turns", [])]


FEATURES: dict[str, Callable[[Scenario], float]] = {
    "hooks": lambda s: bool(s.get("host", {}).get("hooks")),
    "waitFor": lambda s: "waitFor" in s.get("host", {}),
    "resume": lambda s: "resume" in s,
    "restart": lambda s: bool(s.get("resume", {}).get("restartShim")),
    "split SSE": lambda s: any("split" in (t.get("wire") or {}) for t in s["turns"]),
    "tool calls": lambda s: sum(len(t.get("toolCalls", [])) for t in _turns(s)),
    "JSON bytes": lambda s: len(canonical(s)),
}


def draw(examples: int, backend: str) -> tuple[list[Scenario], float]:
    """The distinct scenarios of a derandomized stream, and the CPU seconds drawing them took."""
    distinct: dict[bytes, Scenario] = {}

    def keep(scenario: Scenario) -> bool:
        distinct.setdefault(canonical(scenario), scenario)
        return False

    began = time.process_time()
    try:
        find(scenarios(REFERENCE_PAIR), keep,
             settings=settings(search_settings(examples), backend=backend, phases=[Phase.generate]))
    except NoSuchExample:
        pass
    return list(distinct.values()), time.process_time() - began


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=1000)
    args = parser.parse_args()
    print(f"{args.examples} derandomized examples of the reference pair's scenarios, drawn and not run")
    for backend in ("hypothesis", BACKEND):
        drawn, cpu = draw(args.examples, backend)
        mix = ", ".join(f"{name} {statistics.mean(float(f(s)) for s in drawn):.2f}" for name, f in FEATURES.items())
        print(f"{backend:24s} {len(drawn):5d} distinct, {1000 * cpu / max(len(drawn), 1):4.2f} ms CPU each | per scenario: {mix}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
