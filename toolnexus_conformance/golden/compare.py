"""The one comparison of normalized observables: golden vs port, relay off vs on, stream vs run.

:func:`compare` walks both trees together. Where an ``advisory`` row of the normalization
table reaches a field (its path, its ``where`` on both holders, its style, its citation), a
difference of the kind the row describes is recorded as a spec gap under the row's rule and
the walk moves on; every other difference fails. List rows (``extra-items``,
``missing-items``) first pair the items of both lists by equivalence — the same walk, so a
difference another row forgives inside an item still pairs it — and forgive only unpaired
items their ``items`` condition allows. An order row (``reordered``) pairs the items of two
lists of one length by equivalence and forgives only that items its ``items`` condition allows
changed places within one run of such items in the golden (every other item stays put); the
paired items are still compared. Rows therefore compose: one forgiven field neither
hides nor exposes another.

Rows may name variables the comparison binds from the golden: ``$haltedCall`` and
``$haltedTool`` are the call and tool of a non-relay durable halt that a second phase
resumes, so the forgiveness for how a port fills that one slot reaches that slot alone.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from toolnexus_conformance.golden.normalize import canonical
from toolnexus_conformance.golden.normtable import LIST_KINDS, ORDER_KINDS, Row, Table, default_table
from toolnexus_conformance.helpers import schemas

MAX_LISTED = 12
_ABSENT: Any = object()


@dataclass(frozen=True)
class Difference:
    path: str
    expected: Any
    actual: Any

    def render(self) -> str:
        return f"  {self.path}: golden {_short(self.expected)}, port {_short(self.actual)}"


@dataclass
class Comparison:
    failures: list[Difference] = field(default_factory=list)
    gaps: dict[str, list[Difference]] = field(default_factory=dict)

    def render_failures(self) -> str:
        shown = [d.render() for d in self.failures[:MAX_LISTED]]
        more = len(self.failures) - len(shown)
        return "\n".join(shown + ([f"  … and {more} more"] if more > 0 else []))


def compare(
    expected: Any, actual: Any, *, style: str, cited: frozenset[str] = frozenset(), table: Table | None = None
) -> Comparison:
    """``expected`` (the golden side) against ``actual``; every caller goes through here, so
    the same forgiveness applies everywhere. ``cited`` is the scenario's rule ids (rows marked
    ``onlyWhenCited`` apply only where their rule is cited)."""
    table = table or default_table()
    bound = halted_call(expected)
    rows = tuple(r for r in table.advisory if r.applies(style, cited, bound))
    unordered = tuple(r for r in table.unordered if r.applies(style, cited, bound))
    walker = _Walker(rows, unordered, bound)
    result = Comparison()
    walker.walk(expected, actual, (), result)
    return result


def compare_variant(expected: Any, actual: Any, variant: Any) -> Comparison:
    """:func:`compare` scoped to a scenario variant (its style and cited rules): a
    :class:`~toolnexus_conformance.scenario.model.Variant`, or the :class:`~toolnexus_conformance.run.facts.Facts` a check holds."""
    scenario = getattr(variant, "scenario", None)
    cited = scenario.rules if scenario is not None else variant.rules
    return compare(expected, actual, style=variant.style, cited=frozenset(cited))


def halted_call(expected: Any) -> dict[str, str]:
    """``haltedCall``/``haltedTool`` when the golden's first phase halts on a non-relay
    Request and a second phase resumes it; nothing otherwise."""
    phases = expected.get("phases") if isinstance(expected, dict) else None
    if not isinstance(phases, list) or len(phases) < 2 or not isinstance(phases[0], dict):
        return {}
    result = phases[0].get("result") or {}
    pending = result.get("pending") if isinstance(result, dict) else None
    if not isinstance(pending, dict) or pending.get("kind") == "tool_call" or not isinstance(pending.get("prompt"), str):
        return {}
    prompt = pending["prompt"]
    names: dict[str, str] = {}
    for message in result.get("messages") or []:
        for call_id, name in _calls_of(message):
            names[call_id] = name
        for call_id, content in _results_of(message):
            if isinstance(content, str) and (content == prompt or content.startswith(prompt + "\n")):
                return {"haltedCall": call_id, "haltedTool": names.get(call_id, "")}
    return {}


def _calls_of(message: Any) -> Iterator[tuple[str, str]]:
    if not isinstance(message, dict):
        return
    for call in message.get("tool_calls") or []:  # openai
        if isinstance(call, dict):
            yield str(call.get("id")), str((call.get("function") or {}).get("name"))
    if isinstance(message.get("content"), list):  # anthropic
        for block in message["content"]:
            if isinstance(block, dict) and block.get("type") == "tool_use":
                yield str(block.get("id")), str(block.get("name"))


def _results_of(message: Any) -> Iterator[tuple[str, Any]]:
    if not isinstance(message, dict):
        return
    if message.get("role") == "tool":
        yield str(message.get("tool_call_id")), message.get("content")
    elif isinstance(message.get("content"), list):
        for block in message["content"]:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                yield str(block.get("tool_use_id")), block.get("content")


class _Walker:
    def __init__(self, rows: tuple[Row, ...], unordered: tuple[Row, ...], bound: dict[str, str]) -> None:
        self.rows = rows
        self.unordered = unordered
        self.bound = bound
        self._costs: dict[tuple[int, int], int] = {}

    def walk(self, want: Any, got: Any, path: tuple[str, ...], out: Comparison) -> None:
        if isinstance(want, dict) and isinstance(got, dict):
            for name in sorted(set(want) | set(got)):
                self._field(want, got, path, name, out)
        elif isinstance(want, list) and isinstance(got, list):
            self._by_index(want, got, path, out)
        elif want != got or type(want) is not type(got):
            out.failures.append(Difference(render_path(path), _plain(want), _plain(got)))

    def _field(self, want: dict[str, Any], got: dict[str, Any], path: tuple[str, ...], name: str, out: Comparison) -> None:
        w, g = want.get(name, _ABSENT), got.get(name, _ABSENT)
        if _same(w, g):
            return
        here = (*path, name)
        reaching = [r for r in self.rows if name in r.fields
                    and r.holds_at(path, want, self.bound) and r.holds_at(path, got, self.bound)]
        for row in reaching:
            if row.kind not in LIST_KINDS + ORDER_KINDS and _forgives(row, w, g):
                out.gaps.setdefault(row.rule, []).append(Difference(render_path(here), _plain(w), _plain(g)))
                return
        if not (isinstance(w, list) and isinstance(g, list)):
            self.walk(w, g, here, out)
            return
        unordered = any(name in r.fields and r.holds_at(path, want, self.bound) for r in self.unordered)
        orders = [r for r in reaching if r.kind in ORDER_KINDS]
        if orders and not unordered and self._reordered(orders, w, g, here, out):
            return
        lists = [r for r in reaching if r.kind in LIST_KINDS]
        if not unordered and not lists:
            self._by_index(w, g, here, out)
            return
        pairs = self._align(w, g, here, unordered)
        left_w = [i for i in range(len(w)) if i not in {i for i, _ in pairs}]
        left_g = [j for j in range(len(g)) if j not in {j for _, j in pairs}]
        forgiving: Row | None = next(
            (r for r in lists if self._forgives_items(r, [w[i] for i in left_w], [g[j] for j in left_g])), None
        )
        for i, j in pairs:
            self.walk(w[i], g[j], (*here, str(i)), out)
        for i in left_w:
            self._record(out, forgiving, Difference(render_path((*here, str(i))), w[i], _plain(_ABSENT)))
        for j in left_g:
            self._record(out, forgiving, Difference(render_path((*here, str(j))), _plain(_ABSENT), g[j]))

    def _reordered(self, rows: list[Row], want: list[Any], got: list[Any], path: tuple[str, ...], out: Comparison) -> bool:
        """Compare ``want`` and ``got`` as a permutation one of ``rows`` allows: same length,
        paired by equivalence, every moved item allowed by a row and kept inside its run of
        allowed items. False (nothing recorded) when that does not hold."""
        if len(want) != len(got):
            return False
        pairs = self._align(want, got, path, unordered=True)
        moved = [(i, j) for i, j in pairs if i != j]
        if not moved:
            return False
        runs = {id(row): _runs(row, want, self.bound) for row in rows}
        justified: Row | None = None
        for i, j in moved:
            row = next((r for r in rows if runs[id(r)][i] is not None and runs[id(r)][i] == runs[id(r)][j]
                        and _allows(r, got[j], self.bound)), None)
            if row is None:
                return False
            justified = justified or row
        assert justified is not None
        for i, j in pairs:
            self.walk(want[i], got[j], (*path, str(i)), out)
        order = [i for i, _ in sorted(pairs, key=lambda pair: pair[1])]
        out.gaps.setdefault(justified.rule, []).append(Difference(render_path(path), list(range(len(want))), order))
        return True

    @staticmethod
    def _record(out: Comparison, row: Row | None, difference: Difference) -> None:
        if row is None:
            out.failures.append(difference)
        else:
            out.gaps.setdefault(row.rule, []).append(difference)

    def _forgives_items(self, row: Row, missing: list[Any], extra: list[Any]) -> bool:
        """``row`` forgives exactly these unpaired items (all on its side, each allowed)."""
        allowed, other = (missing, extra) if row.kind == "missing-items" else (extra, missing)
        if not allowed or other or (row.max_items is not None and len(allowed) > row.max_items):
            return False
        return not row.items.conditions or all(row.items.holds(item, self.bound) for item in allowed)

    def _by_index(self, want: list[Any], got: list[Any], path: tuple[str, ...], out: Comparison) -> None:
        for i in range(max(len(want), len(got))):
            item_w = want[i] if i < len(want) else _ABSENT
            item_g = got[i] if i < len(got) else _ABSENT
            if item_w is _ABSENT or item_g is _ABSENT:
                out.failures.append(Difference(render_path((*path, str(i))), _plain(item_w), _plain(item_g)))
            else:
                self.walk(item_w, item_g, (*path, str(i)), out)

    def _cost(self, a: Any, b: Any, path: tuple[str, ...]) -> int:
        """How many failures pairing ``a`` with ``b`` would report (0: equivalent)."""
        key = (id(a), id(b))
        if key not in self._costs:
            probe = Comparison()
            self.walk(a, b, path, probe)
            self._costs[key] = len(probe.failures)
        return self._costs[key]

    def _align(self, want: list[Any], got: list[Any], path: tuple[str, ...], unordered: bool) -> list[tuple[int, int]]:
        """min(len) pairs (i, j) of the two lists with the fewest failures: any pairing for an
        unordered list (equivalent items first), an order-keeping one for an ordered list."""
        if unordered:
            pairs: list[tuple[int, int]] = []
            free_w, free_g = list(range(len(want))), list(range(len(got)))
            costs = sorted((self._cost(want[i], got[j], (*path, str(i))), i, j) for i in free_w for j in free_g)
            for _, i, j in costs:
                if i in free_w and j in free_g:
                    pairs.append((i, j))
                    free_w.remove(i)
                    free_g.remove(j)
            return sorted(pairs)
        return self._align_in_order(want, got, path)

    def _align_in_order(self, want: list[Any], got: list[Any], path: tuple[str, ...]) -> list[tuple[int, int]]:
        """Skip items of the longer list only, keep order, minimise the pairs' failures."""
        swap = len(got) > len(want)
        long, short = (got, want) if swap else (want, got)

        def cost(i: int, j: int) -> int:  # i indexes the longer list
            return self._cost(short[j], long[i], (*path, str(j))) if swap else self._cost(long[i], short[j], (*path, str(i)))

        n, m = len(long), len(short)
        inf = float("inf")
        best = [[inf] * (m + 1) for _ in range(n + 1)]
        best[0][0] = 0
        for i in range(1, n + 1):
            for j in range(min(i, m) + 1):
                skip = best[i - 1][j]
                take = best[i - 1][j - 1] + cost(i - 1, j - 1) if j > 0 else inf
                best[i][j] = min(skip, take)
        pairs = []
        i, j = n, m
        while j > 0:
            if best[i][j] == best[i - 1][j] and i - 1 >= j:
                i -= 1
                continue
            pairs.append((i - 1, j - 1))
            i, j = i - 1, j - 1
        return sorted((j, i) if swap else (i, j) for i, j in pairs)


def _runs(row: Row, items: list[Any], bound: dict[str, str]) -> list[int | None]:
    """For each item, the number of the maximal run of consecutive items ``row`` allows that
    holds it (None: the item is not allowed to move)."""
    runs: list[int | None] = []
    number, inside = 0, False
    for item in items:
        allowed = _allows(row, item, bound)
        if allowed and not inside:
            number += 1
        inside = allowed
        runs.append(number if allowed else None)
    return runs


def _allows(row: Row, item: Any, bound: dict[str, str]) -> bool:
    return not row.items.conditions or row.items.holds(item, bound)


def _same(a: Any, b: Any) -> bool:
    if a is _ABSENT or b is _ABSENT:
        return a is b
    return type(a) is type(b) and canonical(a) == canonical(b)


def _forgives(row: Row, want: Any, got: Any) -> bool:
    kind = row.kind
    if kind == "any":
        return True
    if kind == "dropped":
        return want is not _ABSENT and got is _ABSENT
    if kind == "added":
        return want is _ABSENT and got is not _ABSENT
    if kind == "null-or-empty":
        return {_kind(want), _kind(got)} <= {"null", "empty"}
    if kind == "absent-or-empty":
        return {_kind(want), _kind(got)} <= {"absent", "empty"}
    if kind == "absent-or-null":
        return {_kind(want), _kind(got)} <= {"absent", "null"}
    if kind == "same-json":
        return isinstance(want, str) and isinstance(got, str) and _same_json(want, got)
    if kind == "both-match":
        return row.match is not None and all(isinstance(v, str) and row.match.search(v) for v in (want, got))
    return False


def _kind(value: Any) -> str:
    if value is _ABSENT:
        return "absent"
    if value is None:
        return "null"
    if value == "":
        return "empty"
    return "other"


def _same_json(a: str, b: str) -> bool:
    try:
        return bool(json.loads(a) == json.loads(b))
    except json.JSONDecodeError:
        return False


def _plain(value: Any) -> Any:
    return "<absent>" if value is _ABSENT else value


def _short(value: Any) -> str:
    text = value if value == "<absent>" else json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= 160 else text[:157] + "…"


_INDEX = re.compile(r"^\d+$")


def render_path(path: tuple[str, ...]) -> str:
    """The walk's path (list positions kept as digit strings, as the normalization rows match
    them) rendered the way schema violations are."""
    return schemas.render_path(int(part) if _INDEX.match(part) else part for part in path)
