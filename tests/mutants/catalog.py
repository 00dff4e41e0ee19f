"""The mutant catalogue: deliberately broken variants of the reference, one behaviour each.

A mutant is a name, the rule ids whose checks must kill it, a one-line description and a
patch function. ``ALSO_BREAKS`` below lists, per mutant, the other rules its broken
behaviour necessarily violates too (a resume that always refuses breaks every rule about
the resumed run); the mutation tests assert that a mutant fires exactly its own rules,
these, and at most the golden comparisons, so a check that reports under another rule's
id fails a test instead of passing as extra recall. The patch receives the loaded reference shim module and monkeypatches
``reference_py`` (or the shim's translation) in the mutant shim's own process only; nothing
here is ever imported by the product. ``tests/mutants/mutant_shim.py NAME`` applies one.
The patches live in the ``patches_*`` modules beside this one, grouped by rule area.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from types import ModuleType
from typing import Any

Patch = Callable[[ModuleType], None]


@dataclass(frozen=True)
class Mutant:
    name: str
    kills: tuple[str, ...]
    description: str
    patch: Patch
    relay: bool = True  # False: the mutant runs as the relay-off shim (absent-relay baseline)
    also: tuple[str, ...] = ()  # rules the broken behaviour violates as a consequence (ALSO_BREAKS)


MUTANTS: dict[str, Mutant] = {}


def mutant(name: str, *kills: str, description: str, relay: bool = True) -> Callable[[Patch], Patch]:
    """Register the decorated patch function as mutant ``name`` killed by ``kills``."""

    def register(patch: Patch) -> Patch:
        if name in MUTANTS:
            raise RuntimeError(f"mutant {name!r} is registered twice")
        MUTANTS[name] = Mutant(name, tuple(kills), description, patch, relay)
        return patch

    return register


def wrap(owner: Any, attribute: str, make: Callable[[Any], Any]) -> None:
    """Replace ``owner.attribute`` with ``make(original)``."""
    setattr(owner, attribute, make(getattr(owner, attribute)))


def load() -> dict[str, Mutant]:
    """Import every patch module (their decorators fill the catalogue) and return it."""
    import patches_loop  # noqa: F401
    import patches_relay  # noqa: F401
    import patches_resume  # noqa: F401
    import patches_stream  # noqa: F401
    import patches_suspension  # noqa: F401

    unknown = sorted(set(ALSO_BREAKS) - set(MUTANTS))
    if unknown:
        raise RuntimeError(f"ALSO_BREAKS names mutants the catalogue does not have: {unknown}")
    for name, also in ALSO_BREAKS.items():
        MUTANTS[name] = replace(MUTANTS[name], also=also)
    return MUTANTS


# Rules a mutant's broken behaviour violates as a consequence, beside the rules it targets.
# Each was seen firing and read: e.g. a provider that refuses every request (openai-token-auth)
# leaves no halt to judge; a resume that refuses (resume-unsupported) leaves no resumed result.
ALSO_BREAKS: dict[str, tuple[str, ...]] = {
    "ask-forgets-halt": (
        "relay.answer-shapes", "relay.caller-failure", "relay.declined", "relay.multi-round",
        "relay.shorthand-one-call-only", "resume.across-process", "resume.entry-points", "resume.may-halt-again",
    ),
    "ask-ignores-history": ("store.verbatim-round-trip",),
    # an ask over the halted conversation sends what the store holds minus the placeholder
    "rerun-drops-placeholder": ("store.ask-loads-history",),
    "builtin-bash-missing": ("decl.openai-shape", "decl.runtime-register"),
    "halt-drops-placeholder": (
        "relay.answer-shapes", "relay.caller-failure", "relay.declined", "relay.multi-round",
        "relay.shorthand-one-call-only", "resume.across-process", "resume.entry-points", "resume.may-halt-again",
        "susp.answer-keys", "susp.placeholder",
    ),
    "decl-reversed": ("decl.runtime-register",),
    # the fake provider refuses tools: [] as the real API does, so the stream ends without done
    "empty-tools-sent": ("stream.done-last", "stream.event-fields"),
    "halt-text-empty": ("resume.may-halt-again",),
    "halted-call-result-event": ("stream.pending-event",),
    "hook-suspension-ignored": (
        "halt.later-suspensions-dropped", "halt.run-result", "halt.transcript",
        "relay.non-relay-first-uncontaminated", "stream.done-last", "stream.pending-event", "susp.durable-halt",
        "susp.not-a-tool-error", "susp.placeholder",
    ),
    "last-suspension-surfaced": (
        "halt.later-suspensions-dropped", "relay.calls-in-one-request",
        "relay.non-relay-first-uncontaminated", "susp.before-tool-raised", "susp.placeholder",
    ),
    "later-results-kept": ("relay.alongside-real-tools", "relay.answer-shapes", "resume.entry-points"),
    "later-slots-dropped": (
        "relay.answer-shapes", "relay.declined", "resume.across-process", "resume.entry-points",
        "resume.fills-later-slots",
    ),
    "minimal-answer-refused": ("susp.before-tool-raised", "susp.declined", "susp.not-a-tool-error"),
    "norelay-drops-tool-choice": ("loop.openai-body",),
    "openai-no-stream-options": ("loop.usage-summed",),
    "openai-token-auth": (
        "halt.run-result", "halt.transcript", "relay.calls-in-one-request", "relay.not-a-tool-error",
        "relay.request-kind", "stream.done-last", "stream.event-fields", "susp.durable-halt",
        "susp.not-a-tool-error", "susp.placeholder",
    ),
    "placeholder-kept-beside": ("resume.one-result-per-call",),
    "placeholder-not-prompt": (
        "relay.answer-shapes", "relay.caller-failure", "relay.declined", "relay.multi-round",
        "relay.shorthand-one-call-only", "resume.across-process", "resume.entry-points", "resume.may-halt-again",
        "susp.answer-keys",
    ),
    "placeholder-with-url": ("halt.transcript", "resume.entry-points", "susp.answer-keys"),
    "real-tools-skipped-beside-relay": ("halt.transcript",),
    "relay-call-id-unstamped": (
        "relay.args-rewrite", "relay.calls-in-one-request", "relay.inprocess-one-callback-per-call",
        "relay.multi-round", "stream.pending-event", "susp.first-in-order",
    ),
    "relay-caller-error-dropped": ("relay.answer-shapes",),
    "relay-declared-first": ("decl.order",),
    "relay-first-turn-only": ("relay.inprocess-one-callback-per-call",),
    "relay-input-dropped": ("relay.args-rewrite",),
    "relay-kind-renamed": ("relay.args-rewrite", "relay.inprocess-one-callback-per-call", "relay.multi-round"),
    "relay-presence-changes-body": ("loop.anthropic-body", "loop.openai-body"),
    "register-last-wins": ("decl.order",),
    "relay-results-ignored": ("relay.caller-failure",),
    "relay-shorthand-ignored": ("relay.answer-shapes",),
    "request-null-url": (
        "relay.answer-shapes", "relay.non-relay-first-uncontaminated", "relay.request-kind", "resume.answer-id-must-match",
        "resume.entry-points",
    ),
    "request-snake-expires": ("resume.answer-id-must-match", "resume.entry-points"),
    "results-reversed": ("relay.alongside-real-tools",),
    "resume-in-memory-only": (
        "relay.answer-shapes", "relay.multi-round", "resume.entry-points", "resume.may-halt-again",
    ),
    "resume-never-halts": (
        "relay.multi-round", "resume.across-process", "resume.entry-points", "resume.one-result-per-call",
    ),
    "resume-unsupported": (
        "relay.answer-shapes", "relay.caller-failure", "relay.declined", "relay.multi-round",
        "relay.shorthand-one-call-only", "resume.across-process", "resume.may-halt-again",
    ),
    "sse-anthropic-first-fragment": ("loop.assistant-turn", "stream.event-fields"),
    "sse-openai-first-fragment": ("loop.assistant-turn", "stream.event-fields"),
    "store-load-retyped": ("store.ask-loads-history",),
    "retry-twice": ("susp.before-tool-raised",),
    "suspension-is-error": ("keys.tool-event",),
    "system-prompt-misplaced": ("loop.user-prompt",),
    "tool-event-snake": ("loop.undeclared-tool-call",),
}
