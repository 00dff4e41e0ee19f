"""Reading a host's Answer: coercing what ``wait_for`` returned into a valid Answer, and the
two result shapes an ``Answer.data`` may carry — ``results: [{id, output, isError}]`` (by
call id) and the single-call shorthand ``{output, isError?}``.

Both the relay addendum and general durable resume read these shapes, so they live here
rather than in either. A malformed shape is a WireError naming the bad path.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .errors import WireError
from .types import Answer, ToolResult


def coerce_answer(value: Any, where: str = "answer") -> Answer | None:
    """A validated Answer from an Answer or its wire dict; None stays None (not ok)."""
    if value is None:
        return None
    if isinstance(value, Answer):
        # Round-trip through the wire form so a hand-built Answer gets the same checks.
        return Answer.from_wire(value.to_wire(), where)
    if isinstance(value, Mapping):
        return Answer.from_wire(value, where)
    raise WireError(f"{where}: expected an Answer or its wire object, got {type(value).__name__}")


def _result(entry: Mapping[str, Any], where: str) -> ToolResult:
    output = entry.get("output")
    if not isinstance(output, str):
        raise WireError(f"{where}.output: expected a string")
    is_error = entry.get("isError", False)
    if not isinstance(is_error, bool):
        raise WireError(f"{where}.isError: expected a boolean")
    return ToolResult(output=output, is_error=is_error)


def supplied_results(answer: Answer) -> dict[str, ToolResult]:
    """``Answer.data.results`` keyed by call id (empty when absent)."""
    data = answer.data or {}
    if "results" not in data:
        return {}
    entries = data["results"]
    if not isinstance(entries, list):
        raise WireError("answer.data.results: expected an array")
    found: dict[str, ToolResult] = {}
    for index, entry in enumerate(entries):
        where = f"answer.data.results[{index}]"
        if not isinstance(entry, Mapping) or not isinstance(entry.get("id"), str):
            raise WireError(f"{where}: expected an object with a string id")
        found.setdefault(entry["id"], _result(entry, where))
    return found


def shorthand_result(answer: Answer) -> ToolResult | None:
    """The single-call shorthand ``data.output`` (+ ``isError``), None when absent."""
    data = answer.data or {}
    if "output" not in data:
        return None
    return _result(data, "answer.data")
