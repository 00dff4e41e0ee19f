"""Durable resume: answering a halted run from its persisted transcript.

``repair_halted_turn`` checks the Answer against the pending Request, finds the halted
assistant turn, keeps the results recorded before the halted call, replaces the
placeholder with the host's result, and fills every call after it (the Answer's result by
id, else an explicit error result; never re-executed). A non-relay halted call is
re-executed once with ``ctx.answer`` — the §10 retry, made durable. No user turn is added,
so the repaired transcript is a valid next request for a real provider.
"""

from __future__ import annotations

import copy
from typing import Any

from .answers import coerce_answer, supplied_results
from .errors import ResumeError
from .execution import CallRunner
from .providers import Provider
from .suspension import SuspensionExtension, no_result_supplied
from .types import Answer, Request


def checked_inputs(pending: Request | dict[str, Any], answer: Answer | dict[str, Any]) -> tuple[Request, Answer]:
    """The pending Request and Answer, validated (wire dicts accepted), ids matching."""
    request = pending if isinstance(pending, Request) else Request.from_wire(pending, "pending")
    reply = coerce_answer(answer)
    if reply is None:
        raise ResumeError("cannot resume — no answer supplied")
    if reply.id != request.id:
        raise ResumeError(
            f"cannot resume — answer id {reply.id!r} does not echo the pending request id {request.id!r}"
        )
    return request, reply


def _last_assistant(history: list[Any]) -> int:
    for index in range(len(history) - 1, -1, -1):
        message = history[index]
        if isinstance(message, dict) and message.get("role") == "assistant":
            return index
    return -1


async def repair_halted_turn(
    history: list[dict[str, Any]] | None,
    pending: Request,
    answer: Answer,
    *,
    provider: Provider,
    runner: CallRunner,
    extension: SuspensionExtension,
) -> list[dict[str, Any]]:
    """The transcript with the halted turn's results complete, ready for the next request."""
    if not history:
        raise ResumeError("cannot resume — no transcript supplied")
    messages = copy.deepcopy(list(history))
    index = _last_assistant(messages)
    calls = provider.calls_of(messages[index]) if index >= 0 else None
    if not calls:
        raise ResumeError("cannot resume — the transcript has no halted assistant turn with tool calls")
    recorded = provider.recorded_results(messages[index + 1 :])
    answered = [i for i, call in enumerate(calls) if call.id in recorded]
    if not answered:
        raise ResumeError("cannot resume — the halted turn holds no placeholder result")
    halted = answered[-1]
    if answered != list(range(halted + 1)):
        raise ResumeError("cannot resume — the halted turn's recorded results are not a prefix of its calls")
    if provider.entry_content(recorded[calls[halted].id]) != pending.prompt:
        raise ResumeError(
            f"cannot resume — call {calls[halted].id!r} does not hold the placeholder of pending request {pending.id!r}"
        )

    entries = [recorded[call.id] for call in calls[:halted]]  # real results: kept as they are
    halted_call = calls[halted]
    result = extension.resume_result(pending, answer, halted_call)
    if result is None:
        result = await runner.retry(
            halted_call, dict(halted_call.args), halted_call.raw_arguments, 0, pending, answer
        )
    entries.append(provider.result_entry(halted_call.id, result.output, result.is_error))
    supplied = supplied_results(answer) if answer.ok else {}
    for call in calls[halted + 1 :]:
        later = extension.resume_result(pending, answer, call)
        if later is None:
            later = supplied.get(call.id) or no_result_supplied(call.name)
        entries.append(provider.result_entry(call.id, later.output, later.is_error))
    return messages[: index + 1] + provider.result_messages(entries)
