"""reference_py — the Python reference implementation of the toolnexus §8 client loop,
§10 suspension, ADR 0010 relay mode and durable resume; the oracle the goldens come from.

Relay names (``relay_tool``) are loaded lazily through module ``__getattr__`` so that a
client built with ``relay=False`` runs with ``reference_py.relay`` never imported.
"""

from __future__ import annotations

from typing import Any

# The oracle's own version: goldens record it, so a behaviour change here means regenerating.
__version__ = "0.1.0"

from .adapters import to_anthropic, to_gemini, to_openai
from .builtins import BUILTIN_NAMES
from .client import Client, create_client
from .errors import (
    ProviderError,
    ResumeError,
    ToolkitError,
    ToolnexusError,
    UnknownToolError,
    WireError,
)
from .native import define_tool
from .store import InMemoryStore
from .toolkit import Toolkit, create_toolkit
from .transport import new_http_client
from .types import (
    Answer,
    Request,
    RunResult,
    Tool,
    ToolContext,
    ToolResult,
    pending,
    pending_of,
)

_RELAY_NAMES = frozenset({"relay_tool"})


def __getattr__(name: str) -> Any:
    if name in _RELAY_NAMES:
        from . import relay

        return getattr(relay, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "BUILTIN_NAMES",
    "Answer",
    "Client",
    "InMemoryStore",
    "ProviderError",
    "Request",
    "ResumeError",
    "RunResult",
    "Tool",
    "ToolContext",
    "ToolResult",
    "Toolkit",
    "ToolkitError",
    "ToolnexusError",
    "UnknownToolError",
    "WireError",
    "create_client",
    "create_toolkit",
    "define_tool",
    "new_http_client",
    "pending",
    "pending_of",
    "relay_tool",
    "to_anthropic",
    "to_gemini",
    "to_openai",
]
