"""Checks for the builtin question tool, the canonical ``kind:"question"`` suspension.

Upstream §4A pins what it asks (kind, ``data.questions``, a prompt rendered byte-identically
across ports) and what it answers (the JSON of ``answer.data``); it does not pin the text of
that JSON, which python spaces and the others write compact — a gap, reported apart.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from toolnexus_conformance.run.facts import QUESTION_TOOL, Facts, ScriptedCall
from toolnexus_conformance.run.runner import RunRecord

from . import NotApplicable, check
from .relay import final_results, surfaced_requests


def _question_calls(record: RunRecord, facts: Facts) -> list[ScriptedCall]:
    served = facts.served_calls(sum(len(p.requests) for p in record.phases))
    calls = [c for c in served if c.kind == "suspend" and c.name == QUESTION_TOOL and QUESTION_TOOL not in facts.tools]
    if not calls:
        raise NotApplicable("the model calls no builtin question tool")
    return calls


def _answered(record: RunRecord, facts: Facts, calls: list[ScriptedCall]) -> Iterator[tuple[Any, dict[str, Any]]]:
    """(the result the provider got, the ok Answer) for each question the host's waitFor
    answered; a question is tied to its call by what it asks (its id is generated)."""
    results = final_results(record, facts.style)
    wanted = [(c, facts.native_request(c) or {}) for c in calls]
    for phase in record.phases:
        for exchange in phase.host.exchanges:
            request, answer = exchange.request, exchange.answer
            if not isinstance(request, dict) or request.get("kind") != "question" or not isinstance(answer, dict):
                continue
            if answer.get("ok") is not True:
                continue
            call = next((c for c, w in wanted if w["data"] == request.get("data")), None)
            result = results.get(call.id) if call is not None else None
            if result is not None:
                yield result, answer


def _as_json(text: Any) -> Any:
    try:
        return json.loads(text) if isinstance(text, str) else None
    except json.JSONDecodeError:
        return None


@check("susp.question-kind")
def question_kind(record: RunRecord, facts: Facts) -> Iterator[str]:
    calls = _question_calls(record, facts)
    wanted = [facts.native_request(c) or {} for c in calls]
    seen = [(f"phase {p + 1} {where}", r) for p, phase in enumerate(record.phases) for where, r in surfaced_requests(phase)]
    asked = [(where, r) for where, r in seen if isinstance(r, dict) and r.get("kind") == "question"]
    if not asked:
        yield f"the question call(s) {[c.id for c in calls]} raised no Request of kind 'question' (saw {[r for _, r in seen]})"
        return
    for where, request in asked:
        shown = {k: request.get(k) for k in ("kind", "prompt", "data")}
        if shown not in wanted:
            near = next((w for w in wanted if w["data"] == request.get("data")), wanted[0])
            yield f"{where}: the question Request is {shown!r}; §4A makes it {near!r}"
        if not isinstance(request.get("id"), str) or not request.get("id"):
            yield f"{where}: the question Request has no generated id ({request.get('id')!r})"
    for result, answer in _answered(record, facts, calls):
        if _as_json(result.content) != (answer.get("data") or {}):
            yield f"{result.call_id}: the question's result is {result.content!r}, not the JSON of answer.data {answer.get('data')!r}"
        if result.is_error:
            yield f"{result.call_id}: the answered question's result is an error"


@check("susp.question-output-format")
def question_output_format(record: RunRecord, facts: Facts) -> Iterator[str]:
    checked = False
    for result, answer in _answered(record, facts, _question_calls(record, facts)):
        data = answer.get("data") or {}
        if _as_json(result.content) != data:
            continue  # not the JSON of answer.data at all: susp.question-kind reports it
        checked = True
        compact = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
        if result.content != compact:
            yield f"{result.call_id}: the question's result is {result.content!r}; the reference writes {compact!r}"
    if not checked:
        raise NotApplicable("no answered question's result reached the provider")
