"""The differential search (``python -m toolnexus_conformance.differential``): hypothesis
draws small scenarios and runs each through two ports, comparing normalized observables and
judging normative rules where the records differ; its worker pool, the search past known
failures and the finds it writes. :mod:`.search` is the core the other modules build on;
:mod:`.cli` is the command line and imports them, never the other way round.
"""

__all__ = [
    "ahead",
    "backend",
    "choices",
    "cli",
    "contract",
    "draws",
    "finds",
    "hypothesis_isolation",
    "known",
    "pool",
    "rules",
    "search",
    "wire",
]
