"""Shared configuration for the harness's own tests: the ``rule`` marker that ties a test
to the SPEC.md rule ids it checks (tests/reference/test_rule_coverage.py walks them)."""

from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "rule(*ids): the SPEC.md rule ids (fixtures/rules.json) this test checks",
    )
