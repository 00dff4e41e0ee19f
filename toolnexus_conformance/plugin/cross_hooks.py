"""The pytest hooks of a cross-port resume run (registered by ``plugin/hooks.py`` when
``--resume-port``/``--resume-port-cmd`` is given).

Collection: variants with a durable halt become :class:`CrossVariantItem` s; the others are
deselected (pytest counts them, the summary names them: a cross run says nothing about a
scenario that never halts). Before the first variant runs, both shims' handshakes must
declare ``resume``, or the run is refused with the reason. At the end: the summary section
and the ``crossResume`` block of ``--conformance-report``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolnexus_conformance.cross.report import markdown, report_block, summary_lines
from toolnexus_conformance.cross.resume import CROSS_KEY, CrossResume, refusal
from toolnexus_conformance.helpers.errors import ShimError
from toolnexus_conformance.plugin.cross_item import CrossVariantItem
from toolnexus_conformance.plugin.items import VariantItem, run_scenario_variant
from toolnexus_conformance.reports import run_report as report
from toolnexus_conformance.verdict.session import SESSION_KEY


class CrossResumePlugin:
    def __init__(self, config: pytest.Config) -> None:
        self._config = config

    @property
    def cross(self) -> CrossResume:
        return self._config.stash[CROSS_KEY]

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_modifyitems(self, session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
        kept: list[pytest.Item] = []
        dropped: list[pytest.Item] = []
        for item in items:
            if not isinstance(item, VariantItem):
                kept.append(item)
                continue
            variant = item.variant
            if variant.resume_entry is None:
                dropped.append(item)
                self.cross.deselected.setdefault(variant.scenario.id, []).append(variant.name)
                continue
            assert item.parent is not None
            kept.append(
                CrossVariantItem.from_parent(
                    item.parent, name=item.name, variant=variant, rules=item.rules, callobj=run_scenario_variant
                )
            )
        if dropped:
            config.hook.pytest_deselected(items=dropped)
        items[:] = kept
        if any(isinstance(i, CrossVariantItem) for i in kept) and not config.getoption("collectonly"):
            self._refuse_without_resume()

    def _refuse_without_resume(self) -> None:
        conformance = self._config.stash[SESSION_KEY]
        try:
            halting, resuming = conformance.handshake(), self.cross.handshake()
        except ShimError:
            return  # each variant reports the transport failure with the shim's stderr
        why = refusal(halting, resuming, self.cross.halting.name, self.cross.resuming.name)
        if why is not None:
            conformance.close()
            self.cross.close()
            raise pytest.UsageError(why)

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        self.cross.close()

    @pytest.hookimpl(trylast=True)
    def pytest_unconfigure(self, config: pytest.Config) -> None:
        self.cross.close()

    @pytest.hookimpl(trylast=True)
    def pytest_terminal_summary(self, terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
        terminalreporter.write_sep("=", f"cross-port resume: halt on {self.cross.halting.name}, resume on {self.cross.resuming.name}")
        for line, colour in summary_lines(self.cross):
            terminalreporter.write_line(line, **({colour: True} if colour else {}))


def write_cross_report(config: pytest.Config, path: Path) -> None:
    """The plugin's report with the ``crossResume`` block added (and its markdown)."""
    data = report.build_report(config.stash[SESSION_KEY])
    data["crossResume"] = report_block(config.stash[CROSS_KEY])
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    report.markdown_path(path).write_text(markdown(data), encoding="utf-8")
