"""Server-sent-event framing shared by the OpenAI and Anthropic stream renderers."""

from __future__ import annotations

from typing import Any

from toolnexus_conformance.helpers import fast_json


def data_event(payload: Any) -> bytes:
    """An unnamed event, as OpenAI sends them."""
    return b"data: " + _compact(payload) + b"\n\n"


def named_event(name: str, payload: Any) -> bytes:
    """An event with an ``event:`` line, as Anthropic sends them (ports dispatch on the
    JSON ``type`` and ignore this line, but a real stream has it)."""
    return b"event: " + name.encode("ascii") + b"\ndata: " + _compact(payload) + b"\n\n"


def halves(text: str) -> tuple[str, str]:
    """Split text in two pieces so a client must append deltas to rebuild it."""
    middle = len(text) // 2
    return text[:middle], text[middle:]


def _compact(payload: Any) -> bytes:
    return fast_json.dumps(payload)
