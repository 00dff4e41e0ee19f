"""Normalization of observables: the ``rewrite`` and ``unordered`` rows of the table.

Applied alike to the reference (before a golden is written) and to every port, one tree at
a time. Three rewrites, each reaching only the fields its row names:

* ``generated-id`` — a Request id the port generated becomes ``<generated-id:G:n>``, where
  ``G`` is what the Request relays (its calls' tool names, or its kind) and ``n`` numbers the
  Requests of that group by phase and call ids. Argument text, prompt wording and arrival
  order never change a number. Every occurrence of the raw id gets the same placeholder, so
  an echo still matches by reference.
* ``relay-prompt`` — a relay Request's prompt becomes ``<relay-prompt:NAME>`` for the tool
  it relays, but only when the text names that tool: wording is advisory, naming the wrong
  tool is not. The raw text is replaced wherever it occurs, inside longer strings too (the
  declined output, a placeholder with a url), so the relations built on it still compare.
* ``builtin-declaration`` — a builtin's description and schema become ``<builtin>``.

Unordered rows sort the lists they name by canonical JSON; the comparison re-pairs their
items by equivalence, so a forgiven difference never reorders them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .normtable import Row, Table, default_table, may_reach_child

BUILTIN = "<builtin>"


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def normalize(tree: Any, table: Table | None = None) -> Any:
    table = table or default_table()
    tree = _rewrite_builtins(tree, (), [r for r in table.rewrites if r.kind == "builtin-declaration"])
    holders = objects(tree)
    ids = _claim_ids(holders, [r for r in table.rewrites if r.kind == "generated-id"])
    prompts = _claim_prompts(holders, [r for r in table.rewrites if r.kind == "relay-prompt"])
    return _apply(tree, (), ids, _substring_pattern(prompts), prompts, table.unordered)


def objects(node: Any, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], dict[str, Any]]]:
    """Every object of the tree with its path, depth first, in document order."""
    # An explicit stack, not recursive generators: this walks every object of every run.
    found: list[tuple[tuple[str, ...], dict[str, Any]]] = []
    stack: list[tuple[tuple[str, ...], Any]] = [(path, node)]
    while stack:
        at, current = stack.pop()
        if isinstance(current, dict):
            found.append((at, current))
            children = [((*at, str(k)), v) for k, v in current.items() if isinstance(v, (dict, list))]
        elif isinstance(current, list):
            children = [((*at, str(i)), v) for i, v in enumerate(current) if isinstance(v, (dict, list))]
        else:
            continue
        stack.extend(reversed(children))
    return found


def _rewrite_builtins(node: Any, path: tuple[str, ...], rows: list[Row]) -> Any:
    # ``rows`` are those that can still reach this subtree; one that cannot is dropped on
    # the way down, and a subtree no row reaches is handed on as it is (``_apply`` copies
    # the whole tree afterwards, so nothing is shared with the caller).
    if not rows:
        return node
    if isinstance(node, dict):
        reached = [f for r in rows if r.holds_at(path, node, {}) for f in r.fields]
        return {
            k: BUILTIN if k in reached else _rewrite_builtins(v, (*path, str(k)), _live(rows, len(path), str(k)))
            for k, v in node.items()
        }
    if isinstance(node, list):
        return [_rewrite_builtins(v, (*path, str(i)), _live(rows, len(path), str(i))) for i, v in enumerate(node)]
    return node


def _live(rows: Sequence[Row], depth: int, key: str) -> list[Row]:
    """The rows that can still reach the child ``key`` of a node ``depth`` deep."""
    return [r for r in rows if may_reach_child(r.path, depth, key)]


@dataclass(frozen=True, order=True)
class _Site:
    """Where a claimed value sits, as the key that orders claims of one group."""

    phase: str
    key: str


def _phase(path: tuple[str, ...]) -> str:
    return path[1].zfill(4) if len(path) > 1 and path[0] == "phases" else ""


def _calls(request: dict[str, Any]) -> list[dict[str, Any]]:
    calls = (request.get("data") or {}).get("calls") if isinstance(request.get("data"), dict) else None
    return [c for c in calls if isinstance(c, dict)] if isinstance(calls, list) else []


def _group_and_site(path: tuple[str, ...], request: dict[str, Any]) -> tuple[str, _Site]:
    calls = _calls(request)
    if calls:
        names = ",".join(str(c.get("name")) for c in calls)
        return names, _Site(_phase(path), canonical([c.get("id") for c in calls]))
    rest = {k: v for k, v in request.items() if k != "id"}
    return str(request.get("kind")), _Site(_phase(path), canonical(rest))


def _claim_ids(holders: list[tuple[tuple[str, ...], dict[str, Any]]], rows: list[Row]) -> dict[str, str]:
    found: dict[str, tuple[str, _Site]] = {}
    for path, obj in holders:
        for row in rows:
            if not row.holds_at(path, obj, {}):
                continue
            for name in row.fields:
                value = obj.get(name)
                if isinstance(value, str) and (row.match is None or row.match.search(value)):
                    group, site = _group_and_site(path, obj)
                    if value not in found or (site, group) < (found[value][1], found[value][0]):
                        found[value] = (group, site)
    return _number(found, lambda group, n: f"<generated-id:{group}:{n}>")


def _claim_prompts(holders: list[tuple[tuple[str, ...], dict[str, Any]]], rows: list[Row]) -> dict[str, str]:
    found: dict[str, tuple[str, _Site]] = {}
    for path, obj in holders:
        calls = _calls(obj)
        tool = calls[0].get("name") if calls else None
        if not isinstance(tool, str):
            continue
        for row in rows:
            if not row.holds_at(path, obj, {}):
                continue
            for name in row.fields:
                text = obj.get(name)
                if isinstance(text, str) and names_tool(text, tool):
                    _, site = _group_and_site(path, obj)
                    if text not in found or (site, tool) < (found[text][1], found[text][0]):
                        found[text] = (tool, site)
    return _number(found, lambda tool, n: f"<relay-prompt:{tool}>" if n == 1 else f"<relay-prompt:{tool}#{n}>")


def names_tool(text: str, tool: str) -> bool:
    """``text`` mentions ``tool`` as a whole name (``lookup`` is not named by ``lookup_v2``)."""
    return re.search(rf"(?<![A-Za-z0-9_-]){re.escape(tool)}(?![A-Za-z0-9_-])", text) is not None


def _number(found: dict[str, tuple[str, _Site]], placeholder: Any) -> dict[str, str]:
    claims: dict[str, str] = {}
    counters: dict[str, int] = {}
    for value, (group, _) in sorted(found.items(), key=lambda item: (item[1][0], item[1][1], item[0])):
        counters[group] = counters.get(group, 0) + 1
        claims[value] = placeholder(group, counters[group])
    return claims


def _substring_pattern(prompts: dict[str, str]) -> re.Pattern[str] | None:
    if not prompts:
        return None
    return re.compile("|".join(re.escape(t) for t in sorted(prompts, key=len, reverse=True)))


def _apply(
    node: Any,
    path: tuple[str, ...],
    ids: dict[str, str],
    prompt_pattern: re.Pattern[str] | None,
    prompts: dict[str, str],
    unordered: Sequence[Row],
) -> Any:
    # ``unordered`` holds the rows that can still reach this subtree (see _rewrite_builtins).
    if not unordered:
        return _substitute(node, ids, prompt_pattern, prompts)
    if isinstance(node, dict):
        out = {
            k: _apply(v, (*path, str(k)), ids, prompt_pattern, prompts, _live(unordered, len(path), str(k)))
            for k, v in node.items()
        }
        for row in unordered:
            if row.holds_at(path, node, {}):
                for name in row.fields:
                    if isinstance(out.get(name), list):
                        out[name] = sorted(out[name], key=canonical)
        return out
    if isinstance(node, list):
        return [
            _apply(v, (*path, str(i)), ids, prompt_pattern, prompts, _live(unordered, len(path), str(i)))
            for i, v in enumerate(node)
        ]
    return _substitute(node, ids, prompt_pattern, prompts)


def _substitute(node: Any, ids: dict[str, str], prompt_pattern: re.Pattern[str] | None, prompts: dict[str, str]) -> Any:
    """A copy of ``node`` with claimed ids and prompts replaced: ``_apply`` below the depth
    any unordered row reaches, where no path needs tracking."""
    if isinstance(node, dict):
        return {k: _substitute(v, ids, prompt_pattern, prompts) for k, v in node.items()}
    if isinstance(node, list):
        return [_substitute(v, ids, prompt_pattern, prompts) for v in node]
    if isinstance(node, str):
        if node in ids:
            return ids[node]
        if prompt_pattern is not None:
            return prompt_pattern.sub(lambda m: prompts[m.group(0)], node)
    return node
