"""Keeps the differential's generated scenarios a function of the seed alone.

Hypothesis (6.13x and later) mixes literal constants from every *local* module currently in
``sys.modules`` into its draws (``providers._get_local_constants``). For the differential
that makes a derandomized search depend on which harness modules happen to be imported —
test order under xdist, a forked versus a spawned worker, an edit to an unrelated module —
so the "same" run can try other scenarios and report another (or no) difference. We switch
that source of constants off for the whole process the moment the generator is imported;
hypothesis's own built-in constants still apply. The hook is private, so a hypothesis
without it is left alone (the generator then works, only less reproducibly).
"""

from __future__ import annotations

from typing import Any

from hypothesis.internal.conjecture import providers as _providers


def isolate_from_local_constants() -> bool:
    """Make hypothesis see no local-module constants; True when the hook was found."""
    current: Any = getattr(_providers, "_get_local_constants", None)
    constants: Any = getattr(_providers, "Constants", None)
    if current is None or constants is None:
        return False
    if getattr(current, "_toolnexus_isolated", False):
        return True
    empty = constants()

    def no_local_constants() -> Any:
        return empty

    no_local_constants._toolnexus_isolated = True  # type: ignore[attr-defined]
    _providers._get_local_constants = no_local_constants
    return True


ISOLATED = isolate_from_local_constants()
