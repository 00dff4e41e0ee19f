"""Checks for the conversation store as a durable host sees it (SPEC.md store.*)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from toolnexus_conformance.run.facts import Facts
from toolnexus_conformance.run.runner import PhaseRecord, RunRecord

from . import NotApplicable, check
from .transcript import last_tool_turn

STATELESS = frozenset({"run", "runWithAnswer", "stream"})


@check("store.ask-saves-halt")
def ask_saves_halt(record: RunRecord, facts: Facts) -> Iterator[str]:
    # The first phase, and a rerun's ask (which halts again like any ask).
    asks = [p for p in (record.first, record.rerun) if p is not None and (p.entry == "ask" or p.params.get("id"))]
    if not asks:
        raise NotApplicable("stateless entry point")
    halted = [p for p in asks if (p.result or {}).get("status") == "pending"]
    if not halted:
        raise NotApplicable("the run did not halt")
    for phase in halted:
        which = "" if phase is record.first else " of the second ask"
        if not phase.host.saves:
            yield f"nothing was saved to the store after a pending halt{which}"
        elif phase.host.saves[-1]["messages"] != (phase.result or {}).get("messages"):
            yield f"the stored transcript differs from the RunResult's messages{which}"


@check("store.ask-with-answer-saves")
def ask_with_answer_saves(record: RunRecord, facts: Facts) -> Iterator[str]:
    phase = record.resumed
    if phase is None or phase.entry != "askWithAnswer":
        raise NotApplicable("no askWithAnswer phase")
    if phase.error is not None:
        if phase.host.saves:
            yield f"a refused askWithAnswer saved {len(phase.host.saves)} transcript(s); it must save nothing"
        return
    conversation = phase.params.get("id")
    if conversation not in phase.host.gets:
        yield f"askWithAnswer never loaded conversation {conversation!r} from the store"
    if not phase.host.saves:
        yield "askWithAnswer saved nothing after resuming"
    elif phase.host.saves[-1]["messages"] != (phase.result or {}).get("messages"):
        yield "the stored transcript after askWithAnswer differs from its RunResult's messages"


@check("store.verbatim-round-trip")
def verbatim_round_trip(record: RunRecord, facts: Facts) -> Iterator[str]:
    problems, checked = [], False
    for p, phase in enumerate(record.phases, start=1):
        if phase.host.saves and phase.result is not None:
            checked = True
            if phase.host.saves[-1]["messages"] != phase.result.get("messages"):
                problems.append(f"phase {p} ({phase.entry}): the saved transcript differs from RunResult.messages")
    stored = list(facts.stored_history or [])
    if stored and record.first.entry == "ask" and record.first.requests:
        checked = True
        sent = (record.first.requests[0].get("messages") or [])[: len(stored)]
        if sent != stored:
            problems.append(f"ask sent {sent!r} as history; the store held {stored!r}")
    replay = _replay_problems(record, facts)
    if replay is not None:
        checked = True
        problems.extend(replay)
    if not checked:
        raise NotApplicable("nothing was saved and nothing stored was replayed")
    yield from problems


def _replay_problems(record: RunRecord, facts: Facts) -> list[str] | None:
    """The halted transcript saved by ask, replayed by askWithAnswer up to the halted turn."""
    phase = record.resumed
    if phase is None or phase.entry != "askWithAnswer" or not phase.requests or not record.first.host.saves:
        return None
    stored = record.first.host.saves[-1]["messages"]
    turn = last_tool_turn(stored, facts.style)
    if turn is None:
        return None
    prefix = stored[: turn.index + 1]
    replayed = phase.requests[0].get("messages") or []
    if replayed[: len(prefix)] != prefix:
        return ["the resumed request does not replay the stored transcript verbatim up to the halted turn"]
    return []


@check("store.ask-loads-history")
def ask_loads_history(record: RunRecord, facts: Facts) -> Iterator[str]:
    loads = list(_asks_over_stored(record, facts))
    if not loads:
        raise NotApplicable("no ask with an id over a stored conversation")
    for phase, stored, prompt in loads:
        conversation = phase.params["id"]
        if conversation not in phase.host.gets:
            yield f"{phase.entry} never read conversation {conversation!r} from the store"
        if not phase.requests:
            yield f"{phase.entry} made no provider request"
            continue
        messages = phase.requests[0].get("messages") or []
        want = [*stored, {"role": "user", "content": prompt}]
        if messages[: len(want)] != want or len(messages) != len(want):
            yield f"the first request's messages are {messages!r}; expected the stored transcript then the new user turn {want!r}"


def _asks_over_stored(record: RunRecord, facts: Facts) -> Iterator[tuple[PhaseRecord, list[Any], str]]:
    """Each ask phase over a conversation the store holds, with that conversation and its
    prompt: the first phase over the scenario's stored history, and a rerun's ask over what
    the halted first ask saved."""
    if record.first.params.get("id") and facts.stored_history:
        yield record.first, list(facts.stored_history), facts.prompt
    rerun = record.rerun
    if rerun is not None and rerun.params.get("id") and facts.rerun is not None:
        saved = [s["messages"] for s in record.first.host.saves if s["id"] == rerun.params["id"]]
        if saved:
            yield rerun, saved[-1], facts.rerun["prompt"]


@check("store.run-stateless")
def run_stateless(record: RunRecord, facts: Facts) -> Iterator[str]:
    stateless = [
        (p, phase) for p, phase in enumerate(record.phases, start=1)
        if phase.entry in STATELESS and not phase.params.get("id")
    ]
    if not stateless:
        raise NotApplicable("every entry point of this variant is given a conversation id")
    if not any(phase.params.get("store") for _, phase in stateless):
        raise NotApplicable("no store is configured, so there is nothing a stateless entry could touch")
    for p, phase in stateless:
        if phase.host.gets:
            yield f"phase {p} ({phase.entry} without an id) read the store: {phase.host.gets}"
        if phase.host.saves:
            yield f"phase {p} ({phase.entry} without an id) wrote the store under {[s['id'] for s in phase.host.saves]}"
