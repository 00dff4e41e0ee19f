"""The HTML parity report (toolnexus_conformance/reports/parity_html.py): what its data says (root causes, the
movement between two reports, commands), how its CLI refuses bad input, and, in a real
headless Chromium, that the page loads without errors, its filters hide what they should
and a failing cell opens its variants' diffs. The browser test is skipped, saying so, when
no Chromium is installed (Debian: apt-get install chromium; .ci/run installs it)."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from browser_cdp import Browser, chromium, file_url

from toolnexus_conformance.reports import parity_html

REPO = Path(__file__).resolve().parents[1]
RULES = json.loads((REPO / "fixtures" / "rules.json").read_text(encoding="utf-8"))["rules"]
NORMATIVE = [r["id"] for r in RULES if r["level"] == "normative"]
ADVISORY = [r["id"] for r in RULES if r["level"] == "advisory"]


def _row(rule: str, **counts: int) -> dict[str, Any]:
    level = "advisory" if rule in ADVISORY else "normative"
    base = {"rule": rule, "level": level, "pass": 0, "fail": 0, "expected": 0, "gap": 0, "notApplicable": 0, "scenarios": 1}
    return {**base, **counts, "expectedByReason": {"divergence": counts["expected"]} if counts.get("expected") else {}}


def reports() -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """A passing port, a failing port (one new failure with evidence, stderr and rerun; one
    known failure in two variants with one cause), and the failing port's older report."""
    passing = {"port": "reference", "library": "reference_py 0.1.0", "rules": [_row(r, **{"pass": 4}) for r in NORMATIVE],
               "gaps": {}, "failures": {}, "staleExpectations": []}  # fmt: skip
    new_rule, known_rule = NORMATIVE[0], NORMATIVE[1]
    rows = [_row(r, **{"pass": 4}) for r in NORMATIVE[2:]]
    rows += [_row(new_rule, fail=1, **{"pass": 3}), _row(known_rule, expected=2, **{"pass": 2}), _row(ADVISORY[0], gap=1)]
    failing = {
        "port": "golang", "library": "toolnexus 0.16.0", "rules": rows, "gaps": {}, "staleExpectations": [],
        "failures": {
            f"scen-a[openai-run]::{new_rule}": {"reason": "divergence", "observed": "data.calls[0] has an extra key"},
            f"scen-b[openai-run]::{known_rule}": {"reason": "golden", "observed": "observables differ"},
            f"scen-b[openai-ask]::{known_rule}": {"reason": "golden", "observed": "observables differ"},
        },
        "evidence": {f"scen-a[openai-run]::{new_rule}": ["data.calls[0] keys differ:", "  extra ['type'] <UNIQUE-DIFF-LINE>"]},
        "variants": {"scen-a[openai-run]": {"stderr": ["panic: <UNIQUE-STDERR-LINE>"], "rerun": "python -m pytest 'scenarios/scen-a.json::scen-a[openai-run]' --port=golang"}},
        "selector": "--port=golang --port-src=.",
        "expectations": "conformance/golang.toml",
    }  # fmt: skip
    older = copy.deepcopy(failing)
    older["rules"] = [_row(r, **{"pass": 4}) for r in NORMATIVE[2:]] + [_row(new_rule, **{"pass": 4}), _row(known_rule, expected=2, **{"pass": 2})]
    del older["failures"][f"scen-a[openai-run]::{new_rule}"]
    return passing, failing, older


def _write(folder: Path, name: str, data: dict[str, Any]) -> Path:
    path = folder / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_root_causes_put_new_failures_first_and_group_variants_by_rule_and_observation() -> None:
    _, failing, _ = reports()
    data = parity_html.page_data([failing], [], ["golang.json"], [])
    causes = data["ports"][0]["causes"]
    assert [(c["rule"], c["known"], len(c["keys"])) for c in causes] == [(NORMATIVE[0], False, 1), (NORMATIVE[1], True, 2)]
    new = next(f for f in data["ports"][0]["failures"] if f["rule"] == NORMATIVE[0])
    assert new["rerun"].startswith("python -m pytest 'scenarios/scen-a.json")
    known = next(f for f in data["ports"][0]["failures"] if f["rule"] == NORMATIVE[1])
    # An older report without a variant's rerun: the command selects the variant and the rule.
    assert known["rerun"] == f"python -m pytest --port=golang --port-src=. --expectations=conformance/golang.toml -k 'scen-b[openai-ask]' --rule={NORMATIVE[1]}"


def test_against_an_older_report_names_what_moved() -> None:
    _, failing, older = reports()
    moved = parity_html.page_data([failing], [older], ["new.json"], ["old.json"])["ports"][0]["diff"]
    assert {"rule": NORMATIVE[0], "before": "pass", "after": "fail"} in moved["moved"]
    assert moved["added"] == [f"scen-a[openai-run]::{NORMATIVE[0]}"] and moved["removed"] == []


def test_the_cli_refuses_a_non_html_output_and_unreadable_reports(tmp_path: Path) -> None:
    _, failing, _ = reports()
    report = _write(tmp_path, "golang.json", failing)
    cases = [([str(report), "-o", str(tmp_path / "out.md")], "name a .html file"),
             ([str(tmp_path / "missing.json"), "-o", str(tmp_path / "out.html")], "cannot read a report")]  # fmt: skip
    for argv, said in cases:
        done = subprocess.run([sys.executable, "-m", "toolnexus_conformance.reports.parity_html", *argv], capture_output=True, text=True, cwd=REPO, timeout=60)
        assert done.returncode == 2 and said in done.stderr and "Traceback" not in done.stderr, done.stderr


def test_the_page_is_one_self_contained_file(tmp_path: Path) -> None:
    passing, failing, _ = reports()
    failing["failures"][f"scen-a[openai-run]::{NORMATIVE[0]}"]["observed"] = "</script><script>alert(1)</script>"
    page = parity_html.render(parity_html.page_data([passing, failing], [], ["a"], []))
    assert "<script src" not in page and "<link" not in page and "http://" not in page and "https://" not in page
    assert "</script><script>alert(1)" not in page  # data cannot close its script element


@pytest.mark.timeout(180)
def test_the_page_in_headless_chromium_filters_and_opens_a_failing_cells_diff(tmp_path: Path) -> None:
    program = chromium()
    if program is None:
        pytest.skip("no Chromium installed: apt-get install chromium (Debian's package; .ci/run installs it)")
    passing, failing, older = reports()
    out = tmp_path / "parity.html"
    done = subprocess.run(
        [sys.executable, "-m", "toolnexus_conformance.reports.parity_html", str(_write(tmp_path, "reference.json", passing)),
         str(_write(tmp_path, "golang.json", failing)), "--against", str(_write(tmp_path, "old-golang.json", older)), "-o", str(out)],
        capture_output=True, text=True, cwd=REPO, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    visible_rows = "[...document.querySelectorAll('#matrix tbody tr')].filter(tr => !tr.hidden).map(tr => tr.dataset.rule)"

    def choose(select: str, value: str) -> None:
        browser.evaluate(f"(() => {{ const s = document.getElementById('{select}'); s.value = '{value}'; s.dispatchEvent(new Event('change')); }})()")

    with Browser(program) as browser:
        browser.open(file_url(out))
        assert browser.evaluate(visible_rows) == [r["id"] for r in RULES]
        choose("level-filter", "advisory")
        assert browser.evaluate(visible_rows) == ADVISORY
        choose("level-filter", "")
        choose("status-filter", "fail")
        assert browser.evaluate(visible_rows) == [NORMATIVE[0]]
        choose("status-filter", "any-failure")
        assert browser.evaluate(visible_rows) == NORMATIVE[:2]
        family = NORMATIVE[0].split(".")[0]
        choose("status-filter", "")
        choose("family-filter", family)
        assert browser.evaluate(visible_rows) == [r["id"] for r in RULES if r["id"].startswith(family + ".")]
        choose("family-filter", "")
        # Unticking a port hides its column and its section.
        browser.evaluate("(() => { const b = document.querySelector('.port-toggle[value=golang]'); b.checked = false; b.dispatchEvent(new Event('change')); })()")
        assert browser.evaluate("[...document.querySelectorAll('[data-port=golang]')].every(n => n.hidden)")
        choose("status-filter", "fail")
        assert browser.evaluate(visible_rows) == []  # the only failure is on the hidden port
        browser.evaluate("(() => { const b = document.querySelector('.port-toggle[value=golang]'); b.checked = true; b.dispatchEvent(new Event('change')); })()")
        assert browser.evaluate("document.getElementById('detail').hidden") is True
        browser.evaluate(f"document.querySelector('tr[data-rule=\"{NORMATIVE[0]}\"] td[data-port=golang]').click()")
        detail = browser.evaluate("(() => { const d = document.getElementById('detail'); return {hidden: d.hidden, text: d.innerText}; })()")
        assert detail["hidden"] is False
        assert "<UNIQUE-DIFF-LINE>" in detail["text"] and "<UNIQUE-STDERR-LINE>" in detail["text"]
        assert "python -m pytest 'scenarios/scen-a.json::scen-a[openai-run]' --port=golang" in detail["text"]
        # Root causes come first in the port's section, and what moved since the older report is shown.
        section = browser.evaluate("document.querySelector('section.port[data-port=golang]').innerText")
        assert "Root causes (2)" in section and f"{NORMATIVE[0]}: pass → fail" in section
        assert browser.errors() == []
