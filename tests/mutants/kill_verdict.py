"""What the mutation tests assert about one mutant's kill run, for recall and precision: the
mutant is killed by exactly the rules it names (plus its ALSO_BREAKS and, at most, the golden
comparisons that see every observable), with readable failures. Shared by the scoped runs
of the README's test command and the full-set runs of the gates.
"""

from __future__ import annotations

from catalog import Mutant
from kill_runner import GOLDEN_COMPANIONS, UNTRUSTED_REASONS, KillReport


def problems(mutant: Mutant, report: KillReport) -> list[str]:
    run = report.run
    found = []
    if not run.failed and not all(report.killed_by(rule) for rule in mutant.kills):
        # (an advisory rule kills by a spec gap, which passes the run: a gap is no failure)
        found.append("the mutant survived — every variant of the scenarios exercising its rules passed")
    for rule in mutant.kills:
        if not report.killed_by(rule):
            reasons = report.reasons(rule)
            why = f"only as {sorted(reasons)} (a crash proves nothing)" if reasons & UNTRUSTED_REASONS else "not at all"
            found.append(f"{rule}: the run failed but named [{rule}] {why}")
    fired = report.trusted()
    for rule in sorted(set(fired) - set(mutant.kills) - set(mutant.also) - GOLDEN_COMPANIONS):
        found.append(f"{rule}: fired although the mutant does not break it (in {sorted(fired[rule])}) — "
                     "a check reporting under another rule's id, or a consequence ALSO_BREAKS should name")
    for rule in sorted(set(mutant.also) - set(fired)):
        found.append(f"{rule}: listed in ALSO_BREAKS but did not fire (drop it from the catalogue)")
    if any(reason == "harness-error" for _, _, reason in run.failed_rules()):
        found.append("a rule was judged by a harness error (no check bound, or a check that raised), not by a check")
    harness_lines = [line for line in run.output.splitlines() if not line.lstrip().startswith("|")]
    if any("Traceback (most recent call last)" in line for line in harness_lines):
        found.append("the harness printed a Python traceback (failures must be readable one-liners)")
    return found


def message(mutant: Mutant, report: KillReport, found: list[str]) -> str:
    tail = "\n".join(report.run.output.splitlines()[-40:])
    return (f"mutant {mutant.name!r} ({mutant.description}) is not killed as claimed:\n  " + "\n  ".join(found)
            + f"\n--- last run output (tail) ---\n{tail}")
