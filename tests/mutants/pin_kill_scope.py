"""Rewrites tests/mutants/kill_scope.json: runs every mutant (or those named) over its full
set of scenarios and pins what it fired and the scope chosen from it (``kill_scope``).

    python tests/mutants/pin_kill_scope.py [MUTANT ...]
    python tests/mutants/pin_kill_scope.py --rescope   # scopes again from the pinned runs (whole scenarios)

Run it after changing the catalogue, a mutant's patch, or the scenarios or rules a mutant's
full set is made of; `tests/gates/test_mutant_full_sets.py` fails when a scope hides a rule.
A mutant whose full-set run fails the mutation tests' own assertions is not pinned (its
problems are printed; exit status 1).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))


def main(argv: list[str]) -> int:
    from catalog import load
    from kill_runner import kill, scenario_files
    from kill_scope import (
        Fired,
        Pin,
        choose_scope,
        choose_variants,
        load_pins,
        scenario_id,
        showing_variants,
        variants_now,
        write_pins,
    )
    from kill_verdict import problems
    from warm_shims import mutant_shims

    # A scenario's number of variants: what running it costs, roughly.
    cost = {scenario: len(variants) for scenario, variants in variants_now().items()}
    if argv == ["--rescope"]:
        write_pins({name: Pin(pin.full, choose_scope(pin.full, pin.fired, cost), pin.fired) for name, pin in load_pins().items()})
        return 0
    mutants = load()
    unknown = sorted(set(argv) - set(mutants))
    if unknown:
        print(f"pin_kill_scope: no such mutant: {', '.join(unknown)}", file=sys.stderr)
        return 2
    names = argv or sorted(mutants)
    pins = {name: pin for name, pin in load_pins().items() if name in mutants}
    began = time.monotonic()
    failed = 0
    with mutant_shims() as shims:
        for name in names:
            report = kill(name, scenario_files(mutants[name].kills), shims)
            found = problems(mutants[name], report)
            if found:
                failed += 1
                print(f"{name}: not pinned, the full-set run fails the mutation tests:\n  " + "\n  ".join(found))
                continue
            full = [scenario_id(f) for f in report.run.files]
            fired = Fired.of(report.run)
            scope = choose_scope(full, fired, cost)
            pins[name] = Pin(full, scope, fired, choose_variants(scope, fired, showing_variants(report.run), variants_now()))
            kept = sum(len(pins[name].variants.get(s, variants_now()[s])) for s in scope)
            print(f"{name}: {len(scope)} of {len(full)} scenarios, {kept} of {sum(cost[s] for s in full)} variants "
                  f"({report.run.seconds:.1f} s)", flush=True)
    write_pins(pins)
    print(f"pinned {len(names) - failed} of {len(names)} mutants in {time.monotonic() - began:.0f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
