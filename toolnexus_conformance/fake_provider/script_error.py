"""The one error a malformed fake-provider script raises, and the object check every part of a
script starts with (shared by script.py and wire.py)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


class ScriptError(ValueError):
    """A script that does not follow the neutral format; the message is one line."""


def script_object(data: Any, where: str, known: set[str] | frozenset[str]) -> Mapping[str, Any]:
    """``data`` as a JSON object with no key outside ``known``, or a one-line ScriptError."""
    if not isinstance(data, Mapping):
        raise ScriptError(f"{where}: must be a JSON object")
    unknown = set(data) - set(known)
    if unknown:
        raise ScriptError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}")
    return data
