"""Normalization of observables, driven by the table in ``fixtures/normalization.json``.

The table is data so that every port and the reference go through exactly the same
rewrites, and a reviewer can see in one file everything the comparison forgives. Two
passes: (1) walk the tree and, where a row's path and pattern match, assign the raw value a
placeholder; (2) replace every occurrence of a claimed raw value anywhere in the tree by its
placeholder, so cross-references survive (an answer echoing a generated id still matches,
a placeholder whose content equals the relay prompt still equals it). Unordered lists are
sorted by their canonical JSON.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from .declarations import declared_name
from .paths import fixtures_dir

PLACEHOLDER = {"generated-id": "<generated-id:{n}>", "relay-prompt": "<relay-prompt:{n}>"}


@dataclass(frozen=True)
class Rewrite:
    path: tuple[str, ...]
    kind: str
    match: re.Pattern[str]


@dataclass(frozen=True)
class Table:
    rewrites: tuple[Rewrite, ...]
    unordered: tuple[tuple[str, ...], ...]


@lru_cache(maxsize=1)
def default_table() -> Table:
    return load_table(fixtures_dir() / "normalization.json")


def load_table(path: Path) -> Table:
    raw = json.loads(path.read_text(encoding="utf-8"))
    return Table(
        rewrites=tuple(
            Rewrite(tuple(row["path"].split(".")), row["kind"], re.compile(row["match"])) for row in raw["rewrite"]
        ),
        unordered=tuple(tuple(row["path"].split(".")) for row in raw["unordered"]),
    )


def normalize(tree: Any, table: Table | None = None) -> Any:
    table = table or default_table()
    # Number placeholders by the content around each value, not by arrival order, so
    # concurrent callbacks recorded in a different order still get the same numbers.
    found: dict[str, tuple[str, str]] = {}
    for path, value, parent in _leaves(tree, (), None):
        for row in table.rewrites:
            if row.kind not in PLACEHOLDER or not isinstance(value, str):
                continue
            if _path_matches(row.path, path) and row.match.search(value):
                context = canonical({k: v for k, v in parent.items() if v != value})
                previous = found.get(value)
                if previous is None or context < previous[1]:
                    found[value] = (row.kind, context)
    claims: dict[str, str] = {}
    counters: dict[str, int] = {}
    for value, (kind, _) in sorted(found.items(), key=lambda item: (item[1], item[0])):
        counters[kind] = counters.get(kind, 0) + 1
        claims[value] = PLACEHOLDER[kind].format(n=counters[kind])
    durations = [row.path for row in table.rewrites if row.kind == "duration"]
    builtins = [row for row in table.rewrites if row.kind == "builtin-declaration"]
    return _rewrite(_reduce_builtins(tree, (), builtins), (), claims, durations, table.unordered)


def _reduce_builtins(node: Any, path: tuple[str, ...], rows: list[Rewrite]) -> Any:
    """A builtin's declaration becomes ``{"builtin": name}`` where a row says so."""
    if isinstance(node, dict):
        name = declared_name(node)
        for row in rows:
            if isinstance(name, str) and _path_matches(row.path, path) and row.match.search(name):
                return {"builtin": name}
        return {k: _reduce_builtins(v, (*path, str(k)), rows) for k, v in node.items()}
    if isinstance(node, list):
        return [_reduce_builtins(v, (*path, str(i)), rows) for i, v in enumerate(node)]
    return node


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _rewrite(
    node: Any,
    path: tuple[str, ...],
    claims: dict[str, str],
    durations: list[tuple[str, ...]],
    unordered: tuple[tuple[str, ...], ...],
) -> Any:
    if isinstance(node, dict):
        out = {}
        for key, value in node.items():
            child = (*path, str(key))
            if any(_path_matches(d, child) for d in durations) and isinstance(value, int | float):
                out[key] = "<duration>"
            else:
                out[key] = _rewrite(value, child, claims, durations, unordered)
        return out
    if isinstance(node, list):
        items = [_rewrite(v, (*path, str(i)), claims, durations, unordered) for i, v in enumerate(node)]
        if any(_path_matches(u, path) for u in unordered):
            items.sort(key=canonical)
        return items
    if isinstance(node, str):
        return claims.get(node, node)
    return node


def _leaves(
    node: Any, path: tuple[str, ...], parent: dict[str, Any] | None
) -> Iterator[tuple[tuple[str, ...], Any, dict[str, Any]]]:
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _leaves(value, (*path, str(key)), node)
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _leaves(value, (*path, str(i)), {"": node})
    else:
        yield path, node, parent or {}


def _path_matches(pattern: tuple[str, ...], path: tuple[str, ...]) -> bool:
    if not pattern:
        return not path
    head, rest = pattern[0], pattern[1:]
    if head == "**":
        return any(_path_matches(rest, path[i:]) for i in range(len(path) + 1))
    if not path:
        return False
    return (head == "*" or head == path[0]) and _path_matches(rest, path[1:])
