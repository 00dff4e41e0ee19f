"""The one error a malformed fake-provider script raises (shared by script.py and wire.py)."""

from __future__ import annotations


class ScriptError(ValueError):
    """A script that does not follow the neutral format; the message is one line."""
