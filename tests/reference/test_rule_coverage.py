"""Every rule in fixtures/rules.json (normative and advisory) is cited by at least one test
under tests/reference, and every cited id exists. Citations are read from the source with
``ast`` (any ``pytest.mark.rule(...)`` / ``rule(...)`` call with string arguments), so a
test file that fails to import still counts what it cites and this check stays readable."""

from __future__ import annotations

import ast
import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
RULES_FILE = HERE.parents[1] / "fixtures" / "rules.json"

# Rules that do not apply to the reference implementation, each with the reason.
NOT_FOR_THE_REFERENCE: dict[str, str] = {
    "golden.observables": "the reference writes the goldens; ports are compared with them "
                          "by the harness (tests/reference_smoke and the port runs)",
}


def _is_rule_marker(func: ast.expr) -> bool:
    if isinstance(func, ast.Attribute) and func.attr == "rule":
        return isinstance(func.value, ast.Attribute) and func.value.attr == "mark"
    return isinstance(func, ast.Name) and func.id == "rule"


def cited_rules() -> dict[str, set[str]]:
    """rule id -> the test files citing it."""
    cited: dict[str, set[str]] = {}
    for path in sorted(HERE.glob("test_*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and _is_rule_marker(node.func):
                for arg in node.args:
                    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                        cited.setdefault(arg.value, set()).add(path.name)
    return cited


def registry() -> list[dict[str, str]]:
    return json.loads(RULES_FILE.read_text(encoding="utf-8"))["rules"]


def test_every_rule_is_cited_by_a_reference_test() -> None:
    cited = cited_rules()
    missing = [r for r in registry()
               if r["id"] not in cited and r["id"] not in NOT_FOR_THE_REFERENCE]
    lines = [f"  {r['id']:<45} [{r['level']}] {r['title']}" for r in missing]
    assert not missing, (
        f"{len(missing)} rule(s) in fixtures/rules.json are cited by no test under "
        "tests/reference (add @pytest.mark.rule(...) to a test that fails when the rule "
        "is broken):\n" + "\n".join(lines))


def test_every_cited_rule_exists() -> None:
    known = {r["id"] for r in registry()}
    unknown = {rid: files for rid, files in cited_rules().items() if rid not in known}
    lines = [f"  {rid}  (cited in {', '.join(sorted(files))})" for rid, files in sorted(unknown.items())]
    assert not unknown, "tests cite rule ids missing from fixtures/rules.json:\n" + "\n".join(lines)


def test_exemptions_are_real_rules() -> None:
    known = {r["id"] for r in registry()}
    assert set(NOT_FOR_THE_REFERENCE) <= known
