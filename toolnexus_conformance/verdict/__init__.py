"""How a run becomes verdicts: which rules a variant is judged on (:mod:`.selection`),
evaluating each rule's check on a record (:mod:`.evaluate`, the checks in :mod:`.rules`), judging outcomes against the port's expectations and rule levels
(:mod:`.judge`, :mod:`.expectations`), and the conformance session's state and tally
(:mod:`.session`, :mod:`.run_completeness`); :mod:`.pipeline` is the one path from a variant
to its result that every entry point takes.
"""

__all__ = [
    "evaluate",
    "expectations",
    "judge",
    "pipeline",
    "rules",
    "run_completeness",
    "selection",
    "session",
]
