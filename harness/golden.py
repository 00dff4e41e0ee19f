"""The comparison of a port's normalized observables with its golden.

Reading, writing and orphans of golden files are ``golden_files``'s. A golden carries
provenance (the reference version and the scenario file's hash), so a golden older than its
scenario fails with a regenerate hint instead of a confusing diff. Differences are classified with the
``advisory`` table of ``fixtures/normalization.json``: a difference listed there (say
``null`` vs ``""`` content) is reported as a spec gap under its advisory rule; every other
difference fails.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from .normalize import _path_matches
from .paths import fixtures_dir

MAX_LISTED = 12


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


@dataclass(frozen=True)
class AdvisoryRow:
    path: tuple[str, ...]
    rule: str
    when: str
    style: str | None
    pattern: re.Pattern[str] | None
    only_when_cited: bool


@lru_cache(maxsize=1)
def advisory_rows() -> tuple[AdvisoryRow, ...]:
    raw = json.loads((fixtures_dir() / "normalization.json").read_text(encoding="utf-8"))
    return tuple(
        AdvisoryRow(
            tuple(r["path"].split(".")),
            r["rule"],
            r["when"],
            r.get("style"),
            re.compile(r["pattern"]) if "pattern" in r else None,
            bool(r.get("onlyWhenCited")),
        )
        for r in raw.get("advisory", [])
    )


_ABSENT = object()


def compare(expected: Any, actual: Any, *, style: str, cited: frozenset[str] = frozenset()) -> Comparison:
    result = Comparison()
    whole_lists = [
        r for r in advisory_rows()
        if r.when in {"superset", "subset"} and r.style in (None, style) and (not r.only_when_cited or r.rule in cited)
    ]
    for diff_path, want, got in _walk(expected, actual, (), whole_lists):
        row = _advisory(diff_path, want, got, style, cited)
        difference = Difference(_render_path(diff_path), _plain(want), _plain(got))
        if row is None:
            result.failures.append(difference)
        else:
            result.gaps.setdefault(row.rule, []).append(difference)
    return result


def _walk(want: Any, got: Any, path: tuple[str, ...], whole_lists: list[AdvisoryRow]) -> Any:
    if isinstance(want, dict) and isinstance(got, dict):
        for key in sorted(set(want) | set(got)):
            yield from _walk(want.get(key, _ABSENT), got.get(key, _ABSENT), (*path, key), whole_lists)
    elif isinstance(want, list) and isinstance(got, list):
        if want != got and any(_path_matches(r.path, path) and _list_kind_holds(r, want, got) for r in whole_lists):
            yield path, want, got  # only extra (or only missing) items: judged whole by that row
            return
        for i in range(max(len(want), len(got))):
            item_want = want[i] if i < len(want) else _ABSENT
            item_got = got[i] if i < len(got) else _ABSENT
            yield from _walk(item_want, item_got, (*path, str(i)), whole_lists)
    elif want != got or type(want) is not type(got):
        yield path, want, got


def _list_kind_holds(row: AdvisoryRow, want: list[Any], got: list[Any]) -> bool:
    if row.when == "superset":
        return _contains_all(got, want)
    return _is_subsequence(got, want)


def _is_subsequence(shorter: list[Any], longer: list[Any]) -> bool:
    """``shorter`` is ``longer`` with some items dropped, order kept."""
    remaining = iter(json.dumps(x, sort_keys=True) for x in longer)
    return all(any(json.dumps(item, sort_keys=True) == other for other in remaining) for item in shorter)


def _contains_all(bigger: list[Any], smaller: list[Any]) -> bool:
    """Every item of ``smaller`` is in ``bigger``, counting repeats."""
    remaining = [json.dumps(x, sort_keys=True) for x in bigger]
    for item in smaller:
        key = json.dumps(item, sort_keys=True)
        if key not in remaining:
            return False
        remaining.remove(key)
    return True


def _advisory(path: tuple[str, ...], want: Any, got: Any, style: str, cited: frozenset[str]) -> AdvisoryRow | None:
    for row in advisory_rows():
        if row.style not in (None, style) or not _path_matches(row.path, path):
            continue
        if row.only_when_cited and row.rule not in cited:
            continue
        if row.when == "both-match" and row.pattern is not None:
            if all(isinstance(v, str) and row.pattern.search(v) for v in (want, got)):
                return row
            continue
        if row.when == "null-or-empty" and {_kind(want), _kind(got)} <= {"null", "empty"}:
            return row
        if row.when == "absent-or-empty" and {_kind(want), _kind(got)} <= {"absent", "empty"}:
            return row
        if row.when == "same-json" and isinstance(want, str) and isinstance(got, str) and _same_json(want, got):
            return row
        if row.when == "any":
            return row
        if row.when in {"superset", "subset"} and isinstance(want, list) and isinstance(got, list):
            if _list_kind_holds(row, want, got):
                return row
    return None


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


def _render_path(path: tuple[str, ...]) -> str:
    out = "$"
    for part in path:
        out += f"[{part}]" if _INDEX.match(part) else f".{part}"
    return out
