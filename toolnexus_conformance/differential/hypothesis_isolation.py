"""Keeps the differential's generated scenarios a function of the seed alone, without changing
hypothesis for anyone else in the process.

Hypothesis (6.13x and later) mixes literal constants from every *local* module currently in
``sys.modules`` into its draws (``providers._get_local_constants``). For the differential
that makes a derandomized search depend on which modules happen to be imported — test
order under xdist, a forked versus a spawned worker, an edit to an unrelated module — so the
"same" run could try other scenarios and report another (or no) difference.

:func:`isolated` wraps the differential's outermost strategy: while one of its examples is
drawn, hypothesis sees no local-module constants and keeps the allowed-constant lists it
derives from them in a cache of the differential's own; when the draw ends, both hooks are
put back as they were. Nothing changes on import, and a host's own property tests (drawn
outside the wrapper) see hypothesis exactly as it ships. The hooks are private: a hypothesis
without them is left alone (the generator then works, only less reproducibly).
"""

from __future__ import annotations

import threading
from typing import Any, TypeVar

from hypothesis import strategies as st
from hypothesis.internal.conjecture import providers as _providers

__all__ = ["HOOKS_FOUND", "isolated"]

T = TypeVar("T")

HOOKS_FOUND = all(hasattr(_providers, name) for name in ("_get_local_constants", "Constants", "CONSTANTS_CACHE"))


class _Isolation:
    """The two hooks swapped in for the duration of a draw (nested draws swap once)."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.depth = 0
        self.saved: tuple[Any, Any] | None = None
        if HOOKS_FOUND:
            empty = _providers.Constants()
            self.no_constants: Any = lambda: empty
            self.cache: Any = type(_providers.CONSTANTS_CACHE)(_providers.CONSTANTS_CACHE.max_size)

    def __enter__(self) -> None:
        self.lock.acquire()
        self.depth += 1
        if self.depth == 1 and HOOKS_FOUND:
            self.saved = (_providers._get_local_constants, _providers.CONSTANTS_CACHE)
            _providers._get_local_constants = self.no_constants
            _providers.CONSTANTS_CACHE = self.cache

    def __exit__(self, *exc: object) -> None:
        try:
            self.depth -= 1
            if self.depth == 0 and self.saved is not None:
                _providers._get_local_constants, _providers.CONSTANTS_CACHE = self.saved
                self.saved = None
        finally:
            self.lock.release()


_ISOLATION = _Isolation()


@st.composite
def _drawn_isolated(draw: st.DrawFn, strategy: st.SearchStrategy[T]) -> T:
    with _ISOLATION:
        return draw(strategy)


def isolated(strategy: st.SearchStrategy[T]) -> st.SearchStrategy[T]:
    """``strategy``, drawn with no local-module constants; it draws the same choices as
    ``strategy``, so it shrinks the same way."""
    return _drawn_isolated(strategy)
