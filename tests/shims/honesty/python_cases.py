"""Port objects of the python port (toolnexus), sent through the shim's ``neutral`` module
(its folder is argv[1]) and through the standard serialization a Python host of the port uses:
a Request or Answer by its declared fields with ``None`` absent, everything else
``dataclasses.asdict`` + ``json``. Prints one JSON line
per case: ``{"case", "shim", "serializer"}``, both the exact strings that go on the wire.

Runs with the interpreter of the port's venv: ``python python_cases.py shims/python``.
The serializer side applies the protocol's renames (snake_case field names of RunResult,
its tool-call records and usage, and of stream and metric dicts, to camelCase) from the
table below, written independently of the shim.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from typing import Any

sys.path.insert(0, sys.argv[1])

import neutral
import toolnexus as tn

RENAMES = {
    "tool_calls": "toolCalls",
    "tool_call_count": "toolCallCount",
    "is_error": "isError",
    "prompt_tokens": "promptTokens",
    "completion_tokens": "completionTokens",
    "total_tokens": "totalTokens",
}


def rename(mapping: dict[str, Any]) -> dict[str, Any]:
    return {RENAMES.get(k, k): v for k, v in mapping.items()}


def wire_written(value: Any) -> dict[str, Any]:
    """A §10 wire type as the port's own types declare it: its fields, ``None`` left out (the
    port's ``Optional = None`` is an absent key; SPEC §6)."""
    return {f.name: getattr(value, f.name) for f in dataclasses.fields(value) if getattr(value, f.name) is not None}


def run_result_written(result: tn.RunResult) -> dict[str, Any]:
    written = rename(dataclasses.asdict(result))
    if result.pending is not None:
        written["pending"] = wire_written(result.pending)
    written["toolCalls"] = [rename(call) for call in written["toolCalls"]]
    written["usage"] = rename(written["usage"])
    return written


def emit(name: str, shim: Any, serializer: Any) -> None:
    print(json.dumps({"case": name, "shim": json.dumps(shim), "serializer": json.dumps(serializer)}))


request = tn.Request(id="req-1", kind="approval", prompt="Allow?", url=None, data={}, expiresAt=None)
answer = tn.Answer(id="req-1", ok=False, data=None, reason=None)
result = tn.RunResult(
    text="",
    messages=[
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None, "tool_calls": []},
        {"role": "tool", "tool_call_id": "c1", "content": ""},
    ],
    tool_calls=[
        {"name": "t", "args": {}, "output": "Allow?", "is_error": True, "metadata": {"pending": request}},
        {"name": "u", "args": {"empty": None}, "output": "", "is_error": False, "metadata": None},
    ],
    tool_call_count=2,
    turns=1,
    usage={"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
    model="",
    status="pending",
    limit=None,
    pending=request,
)
done = tn.RunResult(text="ok", messages=[])

emit("Request", neutral.request_wire(request), wire_written(request))
emit("Answer", neutral.request_wire(answer), wire_written(answer))
emit("RunResult pending", neutral.run_result(result), run_result_written(result))
emit("RunResult done", neutral.run_result(done), run_result_written(done))
events = [
    {"type": "text", "delta": ""},
    {"type": "tool_call", "id": "c1", "name": "t", "args": {}},
    {"type": "tool_result", "id": "c1", "name": "t", "output": "", "is_error": False},
    {"type": "usage", "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}},
]
for event in events:
    written = rename(event)
    if "usage" in written:
        written["usage"] = rename(written["usage"])
    emit(f"stream event {event['type']}", neutral.stream_event(event), written)
emit("stream event pending", neutral.stream_event({"type": "pending", "request": request}),
     {"type": "pending", "request": wire_written(request)})
emit("stream event done", neutral.stream_event({"type": "done", "result": result}),
     {"type": "done", "result": run_result_written(result)})
for metric in (
    {"event": "tool", "tool": "t", "source": "native", "is_error": False, "ms": 0, "pending": True},
    {"event": "run", "model": "", "turns": 1, "tool_calls": 0, "total_tokens": 0, "ms": 0, "error": None},
):
    emit(f"metric {metric['event']}", neutral.metric(metric), rename(metric))
