"""The hypothesis backend the differential generates on: hypothesis's own draws, nothing else.

On its default backend, hypothesis spends as much time steering generation as drawing: it
keeps a tree of every choice sequence tried so it can pick a novel prefix, re-runs the
smallest extension of each early prefix, and mutates finished examples by duplicating their
spans. For a test with a handful of examples that buys variety; for a search that draws
thousands of scenarios it costs ~1.5 ms of a 5 ms draw, and the mutations re-create
scenarios already tried (2000 derandomized examples gave 1878 distinct scenarios).

:class:`GenerateOnlyProvider` is hypothesis's own provider under another name. A backend
other than ``"hypothesis"`` makes the engine take its plain path: each example is one fresh
draw from the engine's (seeded or derandomized) random, with hypothesis's distributions and
built-in constants unchanged (measured: 2000 examples, 2000 distinct scenarios, 3.5 instead
of 5.2 ms of CPU per distinct scenario). An example that the search calls interesting is
replayed by hypothesis on its default backend and shrunk there, as before, so the minimal
scenario it reports is hypothesis's.

Registering a backend by name in ``AVAILABLE_PROVIDERS`` is hypothesis's documented hook for
alternative backends; a hypothesis without it is told by :data:`BACKEND` being ``"hypothesis"``.
"""

from __future__ import annotations

from hypothesis.internal.conjecture import providers as _providers


class GenerateOnlyProvider(_providers.HypothesisProvider):
    """Hypothesis's provider, unchanged: only its name tells the engine to generate plainly."""


def _register() -> str:
    available = getattr(_providers, "AVAILABLE_PROVIDERS", None)
    if not isinstance(available, dict):
        return "hypothesis"
    name = "toolnexus-generate-only"
    available[name] = f"{__name__}.{GenerateOnlyProvider.__name__}"
    return name


BACKEND = _register()
