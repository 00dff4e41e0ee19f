"""What the differential generator draws on the host's side beyond tools, turns and hooks:
tool delays and stored conversation histories. Each choice takes the default first (differential/choices.py), so
hypothesis shrinks it away when it is not the cause.

**Delays** (behaviour ``delayMs``) make a turn's calls complete out of call order. Only what
the order rules pin may then be compared, and the normalization already frees the rest
(tool events, executions, hook calls and waitFor callbacks of one turn are unordered; the
halt takes the first suspension in call order, susp.first-in-order). Two limits keep a run
deterministic: a delay is long enough (``DELAY_MS``, the 10 ms the order scenarios use,
which held over 20 runs each of reference, golang, java and js at load 6-17) to order
completion, and a host whose waitFor raises gets none (the abort would race a sleeping tool).

**Stored histories** need the ``store`` capability in both ports: an ask continues a
conversation already in the host's store (``storedHistory``, store.ask-loads-history), a
stream is given the conversation id (``streamWithId``) and a run is given a store it must
not touch (store.run-stateless).

**Judged rules** (:func:`judged_rules`): what a generated scenario cites for a run with
``--expectations``, so its differences surface as the rules they break.
"""

from __future__ import annotations

from typing import Any

from toolnexus_conformance.differential.choices import Region

DELAY_MS = 10
CONVERSATION_ID = "conv-generated"
HISTORIES = (
    [{"role": "user", "content": "My name is Ada."}, {"role": "assistant", "content": "Hello, Ada."}],
    [{"role": "user", "content": "Ich wohne in Zürich ☕"}, {"role": "assistant", "content": "Schön! 東京 auch?"},
     {"role": "user", "content": "Nein."}, {"role": "assistant", "content": "Gut."}],
)
_HISTORY = (None, *HISTORIES)


def with_delays(choices: Region, tools: list[dict[str, Any]]) -> list[str]:
    """Give some native tools a delay; the rules the scenario then cites. The caller draws
    none for a host whose waitFor raises (see the module docstring)."""
    delayed = False
    for tool in tools:
        if "behaviour" in tool and choices.chance(1, 3):
            tool["behaviour"] = {**tool["behaviour"], "delayMs": DELAY_MS}
            delayed = True
    return ["loop.results-in-call-order"] if delayed else []


def with_store(choices: Region, scenario: dict[str, Any], entry: str) -> list[str]:
    """Maybe put a conversation in the store (ask), an id on the stream, or a store beside a
    run; adds the keys to ``scenario`` and returns the rules it then cites."""
    if entry == "ask":
        history = choices.pick(_HISTORY)
        if history is None:
            return []
        scenario["conversationId"] = CONVERSATION_ID
        scenario["storedHistory"] = [dict(m) for m in history]
        return ["store.ask-loads-history", "store.verbatim-round-trip"]
    if not choices.chance(1, 3):
        return []
    scenario["requires"] = sorted({*scenario["requires"], "store"})
    if entry == "stream":
        scenario["streamWithId"] = True
        scenario["conversationId"] = CONVERSATION_ID
        return ["store.verbatim-round-trip"]
    scenario.setdefault("host", {})["store"] = True
    return ["store.run-stateless"]


# Rules whose checks judge any scenario of the kind (each says "not applicable" where the
# scenario does not exercise it): citing them makes a difference surface as the rule it
# breaks, not only as a golden difference, so a port's known golden failures hide less.
# Left out: checks that assume the shapes of their hand-written scenarios and misjudge
# generated ones on the reference itself (measured: reference against reference, 120
# examples): loop.assistant-turn (reads stored history as provider turns),
# stream.tool-call-events-first, susp.placeholder, susp.first-in-order, susp.declined,
# susp.unresolved, susp.waitfor-retry-once, susp.not-a-tool-error, halt.transcript,
# relay.request-kind, relay.calls-in-one-request, relay.not-a-tool-error, relay.args-rewrite,
# relay.multi-round; and (250 more examples) stream.done-last (demands done after a raising
# waitFor), relay.shorthand-one-call-only, relay.inprocess-one-callback-per-call.
JUDGED_ALWAYS = (
    "loop.openai-endpoint", "loop.anthropic-endpoint", "loop.openai-body", "loop.anthropic-body",
    "loop.tools-omitted-when-empty", "loop.stream-body", "loop.user-prompt", "loop.model-verbatim",
    "loop.tool-results-openai", "loop.tool-results-anthropic", "loop.final-text", "loop.usage-summed",
    "loop.sse-openai", "loop.sse-anthropic", "decl.openai-shape", "decl.anthropic-shape", "decl.order",
    "susp.request-keys", "susp.answer-keys", "susp.waitfor-error-aborts", "susp.durable-halt",
    "halt.later-suspensions-dropped", "halt.run-result",
)
JUDGED_WHEN = {
    "stream": ("stream.event-fields", "stream.pending-event", "stream.usage-before-done", "stream.halt-events"),
    "relay": ("relay.declared-like-any-tool", "relay.call-entry-keys", "relay.call-id-stamped",
              "relay.arguments-raw-openai", "relay.arguments-parse-to-input", "relay.non-relay-first-uncontaminated",
              "relay.answer-shapes", "relay.caller-failure", "relay.declined"),
    "resume": ("resume.needs-halted-turn", "resume.keeps-prior-results", "resume.replaces-placeholder",
               "resume.fills-later-slots", "resume.one-result-per-call", "resume.no-user-turn",
               "resume.across-process", "resume.may-halt-again"),
}


def judged_rules(scenario: dict[str, Any]) -> list[str]:
    """The rules a generated scenario cites so their checks judge it (beyond its own draws)."""
    kinds = {"stream"} & set(scenario["entries"]) | ({"relay"} if not scenario["relayFree"] else set()) \
        | ({"resume"} if "resume" in scenario else set())
    return [*JUDGED_ALWAYS, *(rule for kind in sorted(kinds) for rule in JUDGED_WHEN[kind])]
