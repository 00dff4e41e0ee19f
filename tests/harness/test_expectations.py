"""The expectations file grammar and its ratchet bookkeeping."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from toolnexus_conformance.verdict.expectations import MAX_WILDCARD, Entry, Expectations, ExpectationsError, load, write


def _judged(exp: Expectations, key: str) -> Entry | None:
    """The entry a judged failure of ``key`` answers to, counted as the session's end counts
    it (the judge asks ``entry_for`` through ``listing``; matches are counted afterwards)."""
    found = exp.entry_for(key)
    if found is None:
        return None
    exp.count_matches([found[0]])
    return found[1]


def _file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "port.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_exact_and_wildcard_entries_match(tmp_path: Path) -> None:
    exp = load(_file(tmp_path, '[[expected]]\nkey = "a[openai-run]::relay.x"\nreason = "capability"\n'
                              '[[expected]]\nkey = "b[*]::relay.y"\nreason = "divergence"\n'))
    assert _judged(exp, "a[openai-run]::relay.x").reason == "capability"
    assert _judged(exp, "b[anthropic-ask]::relay.y").reason == "divergence"
    assert _judged(exp, "c[openai-run]::relay.x") is None
    assert exp.unmatched() == []


def test_an_entry_that_matched_nothing_is_reported(tmp_path: Path) -> None:
    exp = load(_file(tmp_path, '[[expected]]\nkey = "gone[openai-run]::relay.x"\nreason = "golden"\n'))
    assert [e.key for e in exp.unmatched()] == ["gone[openai-run]::relay.x"]


def test_wildcards_are_capped(tmp_path: Path) -> None:
    exp = load(_file(tmp_path, '[[expected]]\nkey = "*::relay.x"\nreason = "capability"\n'))
    for i in range(MAX_WILDCARD):
        _judged(exp, f"s{i}[openai-run]::relay.x")
    with pytest.raises(ExpectationsError, match="more than 20"):
        _judged(exp, "one-more[openai-run]::relay.x")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[[expected]]\nkey = "no-rule"\nreason = "golden"\n', "key must look like"),
        ('[[expected]]\nkey = "a[b]::c.d"\nreason = "flaky"\n', "reason 'flaky' is not one of"),
        ('[[expected]]\nkey = "a[b]::c.d"\nreason = "golden"\n[[expected]]\nkey = "a[b]::c.d"\nreason = "golden"\n', "duplicate key"),
        ("[[expected]\n", "cannot read expectations"),
        ('surprise = 1\n', "unknown top-level key"),
    ],
)
def test_malformed_files_are_refused_with_one_line(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ExpectationsError, match=message):
        load(_file(tmp_path, text))


def test_write_rewrites_notes_from_the_run_and_keeps_the_written_cause(tmp_path: Path) -> None:
    path = _file(tmp_path, (
        '[[expected]]\nrule = "relay.x"\nreason = "divergence"\ncause = "hand-written"\nsource = "relay.go:77"\n'
        'note = "old observation"\nvariants = ["a[openai-run]"]\n'
    ))
    previous = load(path)
    write(path, "golang", {"a[openai-run]::relay.x": ("divergence", "observed"), "b[openai-run]::loop.y": ("golden", 'quote " here')}, previous, "pytest --port=golang")
    again = {e.rule: e for e in load(path).entries}
    assert again["relay.x"].note == "a[openai-run]: observed"  # the current observation
    assert (again["relay.x"].cause, again["relay.x"].source) == ("hand-written", "relay.go:77")
    assert again["loop.y"].note == 'b[openai-run]: quote " here'


def test_write_keeps_a_flaky_cause_s_crash_text_even_when_the_run_passed_it(tmp_path: Path) -> None:
    path = _file(tmp_path, (
        '[[expected]]\nrule = "golden.observables"\nreason = "golden"\nflaky = true\n'
        'crash = "fatal error: concurrent map writes"\nnote = "a[openai-stream]: differs"\nvariants = ["a[openai-stream]"]\n'
    ))
    write(path, "golang", {}, load(path), "pytest --port=golang")
    (entry,) = load(path).entries
    assert (entry.flaky, entry.crash, entry.variants) == (True, "fatal error: concurrent map writes", ("a[openai-stream]",))


def test_failures_of_one_rule_are_one_root_cause_entry(tmp_path: Path) -> None:
    path = tmp_path / "golang.toml"
    failures = {f"s{i}[openai-run]::relay.x": ("divergence", f"differs {i}") for i in range(25)}
    failures["t[openai-run]::relay.x"] = ("golden", "another class")
    count = write(path, "golang", failures, load(None), "pytest --port=golang")
    exp = load(path)
    assert count == len(exp.entries) == 2
    grouped = next(e for e in exp.entries if e.reason == "divergence")
    assert len(grouped.variants) == 25
    # A root-cause entry is not a wildcard: it matches every variant it lists, uncapped, and no other.
    assert all(_judged(exp, f"s{i}[openai-run]::relay.x") is grouped for i in range(25))
    assert _judged(exp, "s0[openai-run]::relay.other") is None


def test_a_flaky_failure_stays_a_root_cause_of_its_own(tmp_path: Path) -> None:
    path = _file(tmp_path, '[[expected]]\nkey = "a[openai-run]::golden.observables"\nreason = "golden"\nflaky = true\n')
    failures = {"a[openai-run]::golden.observables": ("golden", "race"), "b[openai-run]::golden.observables": ("golden", "bug")}
    write(path, "golang", failures, load(path), "pytest --port=golang")
    entries = load(path).entries
    assert sorted((e.variants, e.flaky) for e in entries) == [(("a[openai-run]",), True), (("b[openai-run]",), False)]


def test_a_malformed_root_cause_entry_is_named(tmp_path: Path) -> None:
    path = _file(tmp_path, '[[expected]]\nrule = "relay.x"\nreason = "divergence"\nvariants = []\n')
    with pytest.raises(ExpectationsError, match=r"expected\[0\]: variants must be a non-empty list"):
        load(path)
    path.write_text('[[expected]]\nrule = "relay.x"\nkey = "a[v]::relay.x"\nreason = "divergence"\nvariants = ["a[v]"]\n', encoding="utf-8")
    with pytest.raises(ExpectationsError, match="either key or rule"):
        load(path)


def test_a_variant_failing_only_for_capability_collapses_to_one_uncapped_entry(tmp_path: Path) -> None:
    path = tmp_path / "java.toml"
    failures = {f"r[openai-run]::relay.rule-{i}": ("capability", "no relay") for i in range(30)}
    failures["s[openai-run]::loop.x"] = ("divergence", "differs")
    write(path, "java", failures, load(None), "pytest --port=java --port-src=SRC --expectations=java.toml --update-expectations")
    exp = load(path)
    assert {e.key for e in exp.entries} == {"r[openai-run]::*", "s[openai-run]::loop.x"}
    assert all(_judged(exp, f"r[openai-run]::relay.rule-{i}") for i in range(30))
    assert "--port-src=SRC" in path.read_text(encoding="utf-8")


def test_notes_with_control_characters_round_trip(tmp_path: Path) -> None:
    """The writer is a TOML library: whatever a note holds, the file it writes reads back."""
    path = tmp_path / "port.toml"
    note = "bell\x07 tab\t cr\r nul\x00 esc\x1b del\x7f quote\" backslash\\ unicode é ☃"
    failures = {"a[openai-run]::relay.x": ("divergence", note), "b[openai-run]::loop.y": ("golden", "line one\nline two")}
    write(path, "golang", failures, load(None), "pytest --port=golang\x1b[31m --update-expectations")
    again = load(path)
    assert again.port == "golang"
    notes = {e.key: e.note for e in again.entries}
    assert notes == {"a[openai-run]::relay.x": f"a[openai-run]: {note}", "b[openai-run]::loop.y": "b[openai-run]: line one line two"}


def test_the_file_records_its_port(tmp_path: Path) -> None:
    exp = load(_file(tmp_path, 'port = "java"\n'))
    assert exp.port == "java"
    exp.check_port("java")
    with pytest.raises(ExpectationsError, match="is for port 'java', not 'golang'"):
        exp.check_port("golang")
    load(_file(tmp_path, "")).check_port("anything")  # a file that names no port fits any


def test_a_flaky_entry_survives_a_run_that_passed_it_and_a_plain_one_does_not(tmp_path: Path) -> None:
    path = _file(
        tmp_path,
        '[[expected]]\nkey = "race[anthropic-stream]::golden.observables"\nreason = "golden"\nflaky = true\n'
        '[[expected]]\nkey = "fixed[openai-run]::relay.x"\nreason = "divergence"\n',
    )
    previous = load(path)
    assert [e.flaky for e in previous.entries] == [True, False]
    write(path, "golang", {}, previous, "pytest --port=golang")  # this run passed both
    again = load(path)
    assert [(e.key, e.flaky) for e in again.entries] == [("race[anthropic-stream]::golden.observables", True)]


def test_flaky_must_be_a_boolean(tmp_path: Path) -> None:
    path = _file(tmp_path, '[[expected]]\nkey = "a[openai-run]::relay.x"\nreason = "divergence"\nflaky = "yes"\n')
    with pytest.raises(ExpectationsError, match=r"flaky must be true or false, got 'yes'"):
        load(path)


def _scan_lookup(exp: Expectations, key: str) -> Entry | None:
    """The lookup by a scan of the whole file (what the index must agree with)."""
    exact = next((e for e in exp.entries if not e.wildcard and e.key == key), None)
    return exact or next((e for e in exp.entries if e.wildcard and e.matches(key)), None)


TRICKY_ENTRIES = [
    "*::relay.x",                   # a wildcard fixing no scenario: a candidate for every key
    "s[openai-run]::*",
    "s[openai-run]::loop.y",        # exact, after a wildcard that matches it too: exact wins
    "s[*]::loop.y",
    "s*::golden.observables",       # `*` before `[`: fixes no scenario part
    "t[a[b]*]::r.z",                # brackets inside the variant part
    "t[a*::r.z",
    "u.v[openai-run]::r.q",         # dots and brackets are literal, not regex
]
PROBE_KEYS = [
    "s[openai-run]::loop.y", "s[openai-ask]::loop.y", "s[openai-run]::relay.x", "q[x]::relay.x",
    "sx[openai-run]::golden.observables", "s[openai-run]::golden.observables", "t[a[b]c]::r.z",
    "t[ab]::r.z", "u.v[openai-run]::r.q", "uxv[openai-run]::r.q", "s[openai-run]::loop", "nothing::at.all",
]


def _entries(keys: list[str]) -> Expectations:
    return Expectations(None, [Entry(key, "golden", note=key) for key in keys])


@pytest.mark.parametrize("order", ["as-written", "reversed"])
def test_the_indexed_lookup_finds_what_a_scan_of_the_file_finds(order: str) -> None:
    keys = TRICKY_ENTRIES if order == "as-written" else TRICKY_ENTRIES[::-1]
    indexed, scanned = _entries(keys), _entries(keys)
    for key in PROBE_KEYS:
        want = _scan_lookup(scanned, key)
        got = _judged(indexed, key)
        assert (got and got.key) == (want and want.key), f"{key}: index found {got and got.key}, the file says {want and want.key}"
        first = next((e for e in scanned.entries if e.matches(key)), None)
        assert (indexed.first_match(key) or Entry("-", "golden")).key == (first or Entry("-", "golden")).key, key


def test_an_exact_entry_wins_over_an_earlier_wildcard_but_first_match_keeps_file_order() -> None:
    exp = _entries(["s[openai-run]::*", "s[openai-run]::loop.y"])
    assert _judged(exp, "s[openai-run]::loop.y").key == "s[openai-run]::loop.y"
    assert exp.first_match("s[openai-run]::loop.y").key == "s[openai-run]::*"


def test_entries_added_after_a_lookup_are_found() -> None:
    exp = _entries(["a[openai-run]::r.x"])
    assert _judged(exp, "b[openai-run]::r.x") is None
    exp.entries.append(Entry("b[*]::r.x", "golden"))
    assert _judged(exp, "b[openai-run]::r.x").key == "b[*]::r.x"


def test_a_wildcard_compiles_its_pattern_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A run looks up every rule of every variant; re-building each wildcard's pattern per
    key made a java run spend most of its CPU in re.escape."""
    exp = _entries(["s[*]::loop.y", "*::relay.x"])
    compiled: list[str] = []
    real_compile = re.compile
    monkeypatch.setattr(re, "compile", lambda pattern, *a: compiled.append(pattern) or real_compile(pattern, *a))
    for i in range(MAX_WILDCARD):
        _judged(exp, f"s[v{i}]::loop.y")
        exp.first_match(f"q[v{i}]::relay.x")
    assert len(compiled) == 2, f"{len(compiled)} compilations for 2 wildcards"


def test_a_second_update_from_the_same_run_writes_the_same_file(tmp_path: Path) -> None:
    path = tmp_path / "java.toml"
    failures = {f"r{i}[openai-run]::relay.rule-{j}": ("capability", f"the port does not declare the capabilities {caps}")
                for i, caps in enumerate(["['relay']", "['relay', 'resume']", "['resume']"]) for j in range(2)}
    failures["s[openai-run]::halt.transcript"] = ("divergence", "kept later results")
    write(path, "java", failures, load(None), "pytest --port=java")
    first = path.read_text(encoding="utf-8")
    write(path, "java", failures, load(path), "pytest --port=java")
    assert path.read_text(encoding="utf-8") == first
