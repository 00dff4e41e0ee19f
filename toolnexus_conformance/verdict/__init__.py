"""How a run becomes verdicts: which rules a variant is judged on (:mod:`.selection`),
evaluating each rule's check on a record (:mod:`.evaluate`, the checks in :mod:`.rules`, the
evaluator process), judging outcomes against the port's expectations and rule levels
(:mod:`.judge`, :mod:`.expectations`), and the conformance session's state and tally
(:mod:`.session`, :mod:`.run_completeness`).
"""

__all__ = [
    "evaluate",
    "evaluator_process",
    "expectations",
    "judge",
    "rules",
    "run_completeness",
    "selection",
    "session",
]
