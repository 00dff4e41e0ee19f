"""The fake LLM provider of the conformance harness: OpenAI Chat Completions and
Anthropic Messages, JSON and SSE, on 127.0.0.1 only. Each scenario run gets a session
with its own base URL that replays scripted model turns, records every request (API
keys redacted) and refuses — with the real provider's status and error envelope — what
the real API refuses. See docs in each module; the public surface is below."""

from __future__ import annotations

from .pairing import Rejection
from .provider import FakeProvider
from .records import ProviderViolation, RecordedRequest
from .script import Script, ScriptedCall, ScriptedTurn, ScriptedUsage
from .script_check import check_neutral, check_script
from .script_error import ScriptError
from .sessions import Session
from .wire import SHAPES, ScriptedSplit, ScriptedWire, gateway_shapes

__all__ = [
    "SHAPES",
    "FakeProvider",
    "ProviderViolation",
    "RecordedRequest",
    "Rejection",
    "Script",
    "ScriptError",
    "ScriptedCall",
    "ScriptedSplit",
    "ScriptedTurn",
    "ScriptedUsage",
    "ScriptedWire",
    "Session",
    "check_neutral",
    "check_script",
    "gateway_shapes",
]
