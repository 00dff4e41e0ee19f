"""The normalization table, ``fixtures/normalization.json``, as typed rows.

Every row names the rule it serves and the exact fields it touches: ``path`` locates the
objects that hold those fields (dotted segments, ``*`` one key or index, ``**`` any depth),
``where`` narrows them by the values of their own keys (a regular expression, or ``$var``
bound by the comparison, such as the halted call's id), and ``fields`` lists the keys whose
values the row rewrites, reorders or forgives. A field is a plain key, never a wildcard, so
no row can reach a whole phase, message or result. This module loads and validates the
table and matches rows against a location; ``normalize`` and ``compare`` apply them.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from toolnexus_conformance.helpers.paths import fixtures_dir

REWRITE_KINDS = ("generated-id", "relay-prompt", "builtin-declaration")
ADVISORY_KINDS = (
    "null-or-empty", "absent-or-empty", "absent-or-null", "same-json", "both-match", "any", "dropped", "added",
    "extra-items", "missing-items", "reordered",
)
LIST_KINDS = ("extra-items", "missing-items")  # forgive unpaired items
ORDER_KINDS = ("reordered",)  # forgive where paired items stand, never what they hold
_FIELD = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class TableError(ValueError):
    """The table is malformed; the message names the file and the JSON path."""


@dataclass(frozen=True)
class Where:
    """Conditions on an object's own keys: ``$name`` compares with a bound variable,
    anything else is a regular expression the key's string value must match."""

    conditions: tuple[tuple[str, str], ...] = ()

    @property
    def variables(self) -> frozenset[str]:
        return frozenset(v[1:] for _, v in self.conditions if v.startswith("$"))

    def holds(self, obj: Any, bound: dict[str, str]) -> bool:
        if not isinstance(obj, dict):
            return False
        for key, want in self.conditions:
            value = obj.get(key)
            if want.startswith("$"):
                if want[1:] not in bound or value != bound[want[1:]]:
                    return False
            elif not isinstance(value, str) or not re.search(want, value):
                return False
        return True


@dataclass(frozen=True)
class Row:
    """One row of any section: which fields of which objects, for which rule."""

    section: str
    index: int
    rule: str
    path: tuple[str, ...]
    where: Where
    fields: tuple[str, ...]
    kind: str  # rewrite kind, advisory "when", or "unordered"
    style: str | None = None
    only_when_cited: bool = False
    match: re.Pattern[str] | None = None  # rewrite: values it claims; both-match: the wording
    items: Where = Where()  # list kinds: which items may be extra / missing / moved
    max_items: int | None = None
    why: str = ""

    @property
    def name(self) -> str:
        return f"{self.section}[{self.index}] ({self.rule})"

    def holds_at(self, path: tuple[str, ...], holder: Any, bound: dict[str, str]) -> bool:
        """The row reaches ``holder`` (the object at ``path``)."""
        return path_matches(self.path, path) and self.where.holds(holder, bound)

    def applies(self, style: str, cited: frozenset[str], bound: dict[str, str]) -> bool:
        if self.style not in (None, style) or (self.only_when_cited and self.rule not in cited):
            return False
        return (self.where.variables | self.items.variables) <= set(bound)


@dataclass(frozen=True)
class Table:
    rewrites: tuple[Row, ...]
    unordered: tuple[Row, ...]
    advisory: tuple[Row, ...]

    @property
    def rows(self) -> tuple[Row, ...]:
        return self.rewrites + self.unordered + self.advisory


@lru_cache(maxsize=1)
def default_table() -> Table:
    return load_table(fixtures_dir() / "normalization.json")


def load_table(path: Path) -> Table:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise TableError(f"{path}: cannot read the normalization table: {exc}") from exc
    if not isinstance(raw, dict):
        raise TableError(f"{path}: $: the table is a JSON object")
    sections = {name: _section(path, raw, name) for name in ("rewrite", "unordered", "advisory")}
    return Table(sections["rewrite"], sections["unordered"], sections["advisory"])


def _section(file: Path, raw: dict[str, Any], name: str) -> tuple[Row, ...]:
    rows = raw.get(name, [])
    if not isinstance(rows, list):
        raise TableError(f"{file}: $.{name}: a list of rows")
    return tuple(_row(file, name, i, row) for i, row in enumerate(rows))


def _row(file: Path, section: str, index: int, raw: Any) -> Row:
    where = f"{file}: $.{section}[{index}]"
    if not isinstance(raw, dict):
        raise TableError(f"{where}: a row is an object")
    for key in ("rule", "path", "fields", "why"):
        if key not in raw:
            raise TableError(f"{where}: missing {key!r}")
    fields = raw["fields"]
    if not isinstance(fields, list) or not fields or not all(isinstance(f, str) and _FIELD.match(f) for f in fields):
        raise TableError(f"{where}.fields: a non-empty list of plain keys (no wildcard, no dot): {fields!r}")
    kind = "unordered" if section == "unordered" else raw.get("kind" if section == "rewrite" else "when")
    allowed = {"rewrite": REWRITE_KINDS, "advisory": ADVISORY_KINDS, "unordered": ("unordered",)}[section]
    if kind not in allowed:
        raise TableError(f"{where}: kind {kind!r} is not one of {', '.join(allowed)}")
    pattern = raw.get("match", raw.get("pattern"))
    try:
        return Row(
            section=section,
            index=index,
            rule=str(raw["rule"]),
            path=tuple(str(raw["path"]).split(".")),
            where=_where(raw.get("where", {}), f"{where}.where"),
            fields=tuple(fields),
            kind=kind,
            style=raw.get("style"),
            only_when_cited=bool(raw.get("onlyWhenCited")),
            match=re.compile(pattern) if pattern is not None else None,
            items=_where(raw.get("items", {}), f"{where}.items"),
            max_items=raw.get("max"),
            why=str(raw["why"]),
        )
    except re.error as exc:
        raise TableError(f"{where}: bad regular expression: {exc}") from exc


def _where(raw: Any, where: str) -> Where:
    if not isinstance(raw, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in raw.items()):
        raise TableError(f"{where}: an object of key -> regular expression or $variable")
    for key, value in raw.items():
        if not value.startswith("$"):
            try:
                re.compile(value)
            except re.error as exc:
                raise TableError(f"{where}.{key}: bad regular expression: {exc}") from exc
    return Where(tuple(sorted(raw.items())))


def may_reach_child(pattern: tuple[str, ...], depth: int, key: str) -> bool:
    """Whether ``pattern``, able to reach a node ``depth`` deep, can still match that node's
    child ``key`` or something below it (so a walk needing only ``pattern`` goes down there)."""
    if "**" in pattern:
        return True
    return depth < len(pattern) and pattern[depth] in ("*", key)


def path_matches(pattern: tuple[str, ...], path: tuple[str, ...]) -> bool:
    # normalize and compare ask every row about every object of every tree: the two shapes
    # every row has (a lone "**", or no "**") are answered without recursion.
    if "**" not in pattern:
        return len(pattern) == len(path) and all(want in ("*", got) for want, got in zip(pattern, path, strict=True))
    if pattern == ("**",):
        return True
    if not pattern:
        return not path
    head, rest = pattern[0], pattern[1:]
    if head == "**":
        return any(path_matches(rest, path[i:]) for i in range(len(path) + 1))
    if not path:
        return False
    return (head == "*" or head == path[0]) and path_matches(rest, path[1:])
