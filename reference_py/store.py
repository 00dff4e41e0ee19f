"""The conversation store: ``InMemoryStore`` (async get/save of a transcript by id).

Stored transcripts are deep-copied in both directions so a caller mutating what it got or
saved can never change what the store holds.
"""

from __future__ import annotations

import copy
from typing import Any, Protocol


class ConversationStore(Protocol):
    async def get(self, id: str) -> list[dict[str, Any]] | None: ...  # noqa: A002

    async def save(self, id: str, messages: list[dict[str, Any]]) -> None: ...  # noqa: A002


class InMemoryStore:
    """A dict of transcripts; ``get`` of an unknown id is None."""

    def __init__(self) -> None:
        self._conversations: dict[str, list[dict[str, Any]]] = {}

    async def get(self, id: str) -> list[dict[str, Any]] | None:  # noqa: A002
        stored = self._conversations.get(id)
        return copy.deepcopy(stored) if stored is not None else None

    async def save(self, id: str, messages: list[dict[str, Any]]) -> None:  # noqa: A002
        self._conversations[id] = copy.deepcopy(list(messages))
