"""CPU per variant in pytest's process, split into the run (the facts with their goldens
read, JSON-RPC, host, fake provider) and the judging (every rule's check, the golden
comparisons included), for the reference.

    python benchmarks/variant_cost.py [--rounds 3] [--only SCENARIO]

A script, not a test: it prints figures. Every variant of every scenario (or of one) runs
through one reference shim; the harness's CPU is this process's, all threads (the shim's is
not counted: it is another process). Each variant is then judged as the suite judges it.
Wall time on a shared machine mostly measures the other load; for a figure that does not
move with it, count instructions instead, e.g.
``valgrind --tool=callgrind --callgrind-out-file=/dev/null python benchmarks/variant_cost.py --rounds 1``
("Collected" is the total; run it on two trees to compare them).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from toolnexus_conformance.fake_provider import FakeProvider  # noqa: E402
from toolnexus_conformance.helpers.paths import scenarios_dir  # noqa: E402
from toolnexus_conformance.run.facts import facts_for  # noqa: E402
from toolnexus_conformance.run.runner import RunRecord, run_variant  # noqa: E402
from toolnexus_conformance.scenario.model import Variant, load_scenario, scenario_files  # noqa: E402
from toolnexus_conformance.shim.ports import resolve  # noqa: E402
from toolnexus_conformance.shim.session import ShimSession  # noqa: E402
from toolnexus_conformance.verdict.evaluate import evaluate  # noqa: E402
from toolnexus_conformance.verdict.pipeline import variant_facts  # noqa: E402
from toolnexus_conformance.verdict.rules import load_all  # noqa: E402
from toolnexus_conformance.verdict.selection import rules_of  # noqa: E402


def variants(only: str | None) -> list[Variant]:
    found = [v for path in scenario_files(scenarios_dir()) for v in load_scenario(path).variants()]
    return [v for v in found if only is None or v.scenario.id == only]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="rounds over the variants (the best is printed)")
    parser.add_argument("--only", help="one scenario id")
    args = parser.parse_args()
    chosen = variants(args.only)
    if not chosen:
        print(f"no scenario {args.only!r}", file=sys.stderr)
        return 2
    port = resolve("reference", None, None, None)
    checks = load_all()
    best_run = best_judge = float("inf")
    failed = 0
    with FakeProvider() as provider, ShimSession(port.argv, env=None) as shim:
        shim.expect_restarts(sum(1 for v in chosen if facts_for(v).restart_before_resume) * args.rounds)
        for _ in range(args.rounds):
            records: list[RunRecord] = []
            started = time.process_time()
            for variant in chosen:
                records.append(run_variant(variant, shim, provider, timeout=30, facts=variant_facts(variant)))
            run_s = time.process_time() - started
            started = time.process_time()
            outcomes = [evaluate(r, r.facts, rules_of(r.variant), checks) for r in records]
            judge_s = time.process_time() - started
            failed = sum(1 for found in outcomes for o in found if o.status == "fail")
            best_run, best_judge = min(best_run, run_s), min(best_judge, judge_s)
    n = len(chosen)
    print(f"{n} variants, best of {args.rounds} rounds, CPU of pytest's side (all threads; the shim not counted):")
    print(f"  run   {1000 * best_run / n:6.2f} ms/variant  ({best_run:.2f} s)")
    print(f"  judge {1000 * best_judge / n:6.2f} ms/variant  ({best_judge:.2f} s)")
    print(f"  rule failures in the last round: {failed} (the reference passes every rule: expect 0)")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
