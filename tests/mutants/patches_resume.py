"""Mutants of the answer-carrying resume (SPEC.md resume.*).

Most of them edit the transcript ``repair_halted_turn`` hands back to the loop; the small
style-neutral editor below reads and rewrites the halted turn's result entries the same
way for OpenAI (``role:tool`` messages) and Anthropic (``tool_result`` blocks).
"""

from __future__ import annotations

import contextvars
from types import ModuleType
from typing import Any

from catalog import mutant, wrap

IN_RESUME: contextvars.ContextVar[bool] = contextvars.ContextVar("in_resume", default=False)


def _halted_turn(messages: list[dict[str, Any]]) -> tuple[int, list[dict[str, Any]]]:
    """(index of the last assistant turn, the mutable result entries that follow it)."""
    index = max(i for i, m in enumerate(messages) if m.get("role") == "assistant")
    after = messages[index + 1 :]
    if after and after[0].get("role") == "user" and isinstance(after[0].get("content"), list):
        return index, after[0]["content"]  # anthropic: the blocks of one user message
    return index, [m for m in after if m.get("role") == "tool"]


def _call_id(entry: dict[str, Any]) -> str:
    return entry.get("tool_call_id") or entry.get("tool_use_id") or ""


def _wrap_repair(change: Any) -> None:
    import reference_py.client as client

    def make(original: Any) -> Any:
        async def repair(history: Any, pending: Any, answer: Any, **kwargs: Any) -> list[dict[str, Any]]:
            repaired = await original(history, pending, answer, **kwargs)
            return change(repaired, list(history or []), pending, answer)

        return repair

    wrap(client, "repair_halted_turn", make)


def _halted_id(history: list[dict[str, Any]], pending: Any) -> str | None:
    """The call whose placeholder (content == the pending prompt) the halted transcript holds."""
    _, entries = _halted_turn(history)
    return next((_call_id(e) for e in entries if e.get("content") == pending.prompt), None)


@mutant("resume-unsupported", "resume.entry-points", description="runWithAnswer and askWithAnswer always refuse")
def _unsupported(shim: ModuleType) -> None:
    from reference_py.client import Client
    from reference_py.errors import ResumeError

    async def refuse(self: Any, *args: Any, **kwargs: Any) -> Any:
        raise ResumeError("cannot resume — not implemented")

    Client.run_with_answer = refuse  # type: ignore[method-assign]


@mutant("answer-id-unchecked", "resume.answer-id-must-match", description="an Answer whose id differs from the pending id is accepted")
def _id_unchecked(shim: ModuleType) -> None:
    import reference_py.client as client
    from reference_py.answers import coerce_answer

    def make(original: Any) -> Any:
        def checked_inputs(pending: Any, answer: Any) -> Any:
            reply = coerce_answer(answer)
            pending_id = pending.id if hasattr(pending, "id") else pending.get("id")
            if reply is not None:
                reply = type(reply)(id=pending_id, ok=reply.ok, data=reply.data, reason=reply.reason)
            return original(pending, reply)

        return checked_inputs

    wrap(client, "checked_inputs", make)


@mutant("resume-without-halted-turn", "resume.needs-halted-turn",
        description="a transcript without a halted turn is resumed anyway (sent as it is)")
def _without_halted(shim: ModuleType) -> None:
    import reference_py.client as client
    from reference_py.errors import ResumeError

    def make(original: Any) -> Any:
        async def repair(history: Any, pending: Any, answer: Any, **kwargs: Any) -> list[dict[str, Any]]:
            try:
                return await original(history, pending, answer, **kwargs)
            except ResumeError:
                return list(history or [])

        return repair

    wrap(client, "repair_halted_turn", make)


@mutant("prior-results-rerun", "resume.keeps-prior-results", description="results recorded before the halted call are rewritten on resume")
def _prior_rerun(shim: ModuleType) -> None:
    def change(messages: list[dict[str, Any]], history: list[dict[str, Any]], pending: Any, answer: Any) -> Any:
        halted = _halted_id(history, pending)
        _, before = _halted_turn(history)
        prior = {_call_id(e) for e in before} - {halted}
        for entry in _halted_turn(messages)[1]:
            if _call_id(entry) in prior:
                entry["content"] = f"{entry['content']} (re-run on resume)"
        return messages

    _wrap_repair(change)


@mutant("placeholder-kept-beside", "resume.replaces-placeholder",
        description="the placeholder stays in the transcript beside the host's result")
def _placeholder_beside(shim: ModuleType) -> None:
    def change(messages: list[dict[str, Any]], history: list[dict[str, Any]], pending: Any, answer: Any) -> Any:
        halted = _halted_id(history, pending)
        index, entries = _halted_turn(messages)
        position = next((i for i, e in enumerate(entries) if _call_id(e) == halted), None)
        if position is None:
            return messages
        stale = {**entries[position], "content": pending.prompt}
        if "tool_use_id" in stale:
            entries.insert(position, stale)
        else:
            messages.insert(messages.index(entries[position]), stale)
        return messages

    _wrap_repair(change)


@mutant("later-slots-blank", "resume.fills-later-slots", description="calls after the halted one get an empty, non-error result")
def _later_blank(shim: ModuleType) -> None:
    import reference_py.relay as relay
    import reference_py.resume as resume
    from reference_py.types import ToolResult

    resume.no_result_supplied = lambda name: ToolResult(output="", is_error=False)  # type: ignore[assignment]
    relay.no_result_supplied = resume.no_result_supplied  # type: ignore[attr-defined]


@mutant("later-slots-dropped", "resume.one-result-per-call", description="calls after the halted one get no result on resume")
def _later_dropped(shim: ModuleType) -> None:
    def change(messages: list[dict[str, Any]], history: list[dict[str, Any]], pending: Any, answer: Any) -> Any:
        halted = _halted_id(history, pending)
        index, entries = _halted_turn(messages)
        ids = [_call_id(e) for e in entries]
        if halted not in ids:
            return messages
        later = set(ids[ids.index(halted) + 1 :])
        if "tool_use_id" in (entries[0] if entries else {}):
            entries[:] = [e for e in entries if _call_id(e) not in later]
            return messages
        return [m for m in messages if not (m.get("role") == "tool" and _call_id(m) in later)]

    _wrap_repair(change)


@mutant("resume-adds-user-turn", "resume.no-user-turn", description="resume appends a 'continue' user turn")
def _user_turn(shim: ModuleType) -> None:
    _wrap_repair(lambda messages, history, pending, answer: [*messages, {"role": "user", "content": "continue"}])


@mutant("resume-in-memory-only", "resume.across-process",
        description="resume only knows pending ids this process surfaced (a fresh shim refuses)")
def _in_memory(shim: ModuleType) -> None:
    from reference_py.errors import ResumeError

    surfaced: set[str] = set()

    def make(original: Any) -> Any:
        async def run(self: Any, p: dict[str, Any]) -> dict[str, Any]:
            if p.get("entry") in {"runWithAnswer", "askWithAnswer"} and p["pending"].get("id") not in surfaced:
                raise ResumeError(f"cannot resume — unknown pending request {p['pending'].get('id')!r}")
            reply = await original(self, p)
            pending = (reply.get("result") or {}).get("pending")
            if pending:
                surfaced.add(pending["id"])
            return reply

        return run

    wrap(shim.Shim, "run", make)


@mutant("resume-never-halts", "resume.may-halt-again", description="suspensions during a resumed run are taken as plain error results")
def _never_halts(shim: ModuleType) -> None:
    import reference_py.execution as execution
    from reference_py.client import Client

    def make_resumed(original: Any) -> Any:
        async def resumed(self: Any, *args: Any) -> Any:
            token = IN_RESUME.set(True)
            try:
                return await original(self, *args)
            finally:
                IN_RESUME.reset(token)

        return resumed

    wrap(Client, "_resumed", make_resumed)
    wrap(execution, "pending_of", lambda original: lambda result: None if IN_RESUME.get() else original(result))


@mutant("rerun-drops-placeholder", "resume.rerun-with-transcript",
        description="run (and ask) given a halted transcript drop the halted call's placeholder before sending it")
def _rerun_drops_placeholder(shim: ModuleType) -> None:
    from reference_py.client import Client

    def make(original: Any) -> Any:
        async def run(self: Any, prompt: str, toolkit: Any = None, history: Any = None) -> Any:
            if history and any(m.get("role") == "assistant" for m in history):
                history = [dict(m) for m in history]
                _, entries = _halted_turn(history)
                if entries and isinstance(history[-1].get("content"), list):
                    history[-1]["content"] = list(history[-1]["content"])[:-1]  # anthropic: the last block
                elif entries:
                    history = history[:-1]  # openai: the last tool message
            return await original(self, prompt, toolkit, history)

        return run

    wrap(Client, "run", make)
