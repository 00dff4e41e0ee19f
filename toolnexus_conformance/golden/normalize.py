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
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from toolnexus_conformance.golden.normtable import Row, Table, default_table, may_reach_child
from toolnexus_conformance.helpers.json_copy import copy_json

BUILTIN = "<builtin>"


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def normalize(tree: Any, table: Table | None = None) -> Any:
    table = table or default_table()
    tree = _rewrite_builtins(tree, [r for r in table.rewrites if r.kind == "builtin-declaration"])
    claiming = [r for r in table.rewrites if r.kind in ("generated-id", "relay-prompt")]
    holders = objects(tree, keep=_may_hold_a_claim(claiming))
    ids = _claim_ids(holders, [r for r in claiming if r.kind == "generated-id"])
    prompts = _claim_prompts(holders, [r for r in claiming if r.kind == "relay-prompt"])
    return _apply(tree, (), ids, _substring_pattern(prompts), prompts, table.unordered)


def objects(
    node: Any, path: tuple[str, ...] = (), keep: Callable[[dict[str, Any]], bool] | None = None
) -> list[tuple[tuple[str, ...], dict[str, Any]]]:
    """Every object of the tree with its path, depth first, in document order; with
    ``keep``, only the objects it accepts (the others are still walked through)."""
    # This walks every object of every run: a node's path is spelled out only for the
    # objects kept, each level handing its children a link to itself instead of a tuple.
    found: list[tuple[tuple[str, ...], dict[str, Any]]] = []

    def visit(current: Any, link: _Link) -> None:
        if isinstance(current, dict):
            if keep is None or keep(current):
                found.append(((*path, *_keys(link)), current))
            for k, v in current.items():
                if isinstance(v, (dict, list)):
                    visit(v, (link, str(k)))
        else:
            for i, v in enumerate(current):
                if isinstance(v, (dict, list)):
                    visit(v, (link, str(i)))

    if isinstance(node, (dict, list)):
        visit(node, None)
    return found


# (the parent's link, this node's key in the parent); the root's link is None.
_Link = tuple[Any, str] | None


def _keys(link: _Link) -> list[str]:
    """The keys from the root down to the node ``link`` stands for."""
    keys: list[str] = []
    while link is not None:
        link, key = link
        keys.append(key)
    keys.reverse()
    return keys


def _may_hold_a_claim(rows: Sequence[Row]) -> Callable[[dict[str, Any]], bool]:
    """Whether an object has every key some claiming row needs: the keys its ``where``
    tests (an absent key fails a test) and one of the fields it claims."""
    needs = [(frozenset(key for key, _ in r.where.conditions), frozenset(r.fields)) for r in rows]
    # Most objects are turned away by one key every row tests.
    common = frozenset.intersection(*(tested for tested, _ in needs)) if needs else frozenset()
    first = next(iter(sorted(common)), None)

    def may_hold(obj: dict[str, Any]) -> bool:
        if first is not None and first not in obj:
            return False
        keys = obj.keys()
        return any(tested <= keys and not fields.isdisjoint(keys) for tested, fields in needs)

    return may_hold


def _rewrite_builtins(tree: Any, rows: list[Row]) -> Any:
    """``tree`` with the builtin declarations' fields replaced. ``tree`` is left as it is:
    only the containers on the way to a replaced field are copied (``_apply`` copies the
    whole tree afterwards)."""
    targets: dict[tuple[str, ...], set[str]] = {}
    for row in rows:
        for path, node in _select(tree, row.path, ()):
            if row.where.holds(node, {}):
                targets.setdefault(path, set()).update(f for f in row.fields if f in node)
    if not any(targets.values()):
        return tree
    copies: dict[tuple[str, ...], Any] = {(): _shallow(tree)}
    # Outer holders first: a holder inside a field already replaced is gone, as it would be
    # for a walk that does not descend into what it replaced.
    for path in sorted(targets, key=len):
        holder = _copied_down_to(path, copies)
        if isinstance(holder, dict):
            for name in targets[path]:
                holder[name] = BUILTIN
    return copies[()]


def _select(node: Any, pattern: tuple[str, ...], path: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], Any]]:
    """Every node of ``node`` that ``pattern`` reaches, with its path (``**`` may yield a
    node twice; the caller collects them by path)."""
    if not pattern:
        yield path, node
        return
    head, rest = pattern[0], pattern[1:]
    if head == "**":
        yield from _select(node, rest, path)
    for key, child in _children(node):
        if head == "**":
            yield from _select(child, pattern, (*path, key))
        elif head in ("*", key):
            yield from _select(child, rest, (*path, key))


def _children(node: Any) -> Iterator[tuple[str, Any]]:
    if isinstance(node, dict):
        for k, v in node.items():
            yield str(k), v
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield str(i), v


def _shallow(node: Any) -> Any:
    return dict(node) if isinstance(node, dict) else list(node) if isinstance(node, list) else node


def _copied_down_to(path: tuple[str, ...], copies: dict[tuple[str, ...], Any]) -> Any:
    """The node at ``path`` in the copy, each container on the way copied once (into
    ``copies``); None when the way passes through something that is not a container."""
    node = copies[()]
    for depth in range(1, len(path) + 1):
        prefix = path[:depth]
        if prefix in copies:
            node = copies[prefix]
            continue
        key: Any = path[depth - 1]
        if isinstance(node, list):
            key = int(key)
        elif key not in node:  # a key that is not a string, spelled as one in the path
            key = next(k for k in node if str(k) == key)
        child = node[key]
        if not isinstance(child, (dict, list)):
            return None
        node[key] = copies[prefix] = node = _shallow(child)
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
    if not ids and prompt_pattern is None:
        return copy_json(node)  # nothing to replace: a plain copy, in C
    return _replaced(node, ids, prompt_pattern, prompts)


def _replaced(node: Any, ids: dict[str, str], prompt_pattern: re.Pattern[str] | None, prompts: dict[str, str]) -> Any:
    if isinstance(node, dict):
        return {k: _replaced(v, ids, prompt_pattern, prompts) for k, v in node.items()}
    if isinstance(node, list):
        return [_replaced(v, ids, prompt_pattern, prompts) for v in node]
    if isinstance(node, str):
        if node in ids:
            return ids[node]
        if prompt_pattern is not None:
            return prompt_pattern.sub(lambda m: prompts[m.group(0)], node)
    return node
