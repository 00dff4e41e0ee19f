"""Running the plugin in-process with pytester, as ``python -m pytest`` from the repository
root would, without starting an interpreter per run.

The harness reads its data through ``toolnexus_conformance.helpers.paths``; pointing that module at a private
copy lets a test break or delete files freely, while the plugin runs in this process
(fast, and hooks such as a simulated Ctrl-C can be passed in as plugin objects). A
subprocess is kept only where it is the thing under test (an xdist worker that crashes, a
wheel installed elsewhere)."""

from __future__ import annotations

from pathlib import Path

import pytest
from plugin_runner import REPO, Run, private_fixtures

import toolnexus_conformance.helpers.paths
from toolnexus_conformance.plugin.rerun import FIXTURES_ENV

# The inner run is the plugin itself: no xdist, no cache, no hypothesis, and no
# pytest-timeout (its SIGALRM would replace, then cancel, the outer test's own), so the
# repository's `timeout` ini key is left without its plugin.
INNER = ["-p", "no:cacheprovider", "-p", "no:xdist", "-p", "no:timeout", "-p", "no:hypothesispytest",
         "-W", "ignore::pytest.PytestConfigWarning"]


def private_suite(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, scenario_id: str) -> Path:
    """A private fixtures tree holding one scenario, which the in-process plugin reads."""
    fixtures = private_fixtures(pytester.path, scenario_id)
    monkeypatch.setattr(toolnexus_conformance.helpers.paths, "_FIXTURES", fixtures)
    monkeypatch.delenv(FIXTURES_ENV, raising=False)
    return fixtures


def run(pytester: pytest.Pytester, *args: str, plugins: list[object] | None = None) -> pytest.RunResult:
    return pytester.runpytest_inprocess("-p", "no:cacheprovider", *args, plugins=plugins or [], no_reraise_ctrlc=True)


class PluginRunner:
    """``run_pytest``'s in-process twin: the same arguments, the same ``Run`` back, from the
    repository root (so its pyproject settings and rootdir apply as on the command line)."""

    def __init__(self, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
        self._pytester = pytester
        self._monkeypatch = monkeypatch
        monkeypatch.chdir(REPO)

    def __call__(self, *args: str, fixtures: Path | None = None) -> Run:
        if fixtures is not None:
            # As TOOLNEXUS_CONFORMANCE_FIXTURES does for a new process: the data is read
            # from the tree, and rerun hints name it.
            self._monkeypatch.setattr(toolnexus_conformance.helpers.paths, "_FIXTURES", fixtures)
            self._monkeypatch.setenv(FIXTURES_ENV, str(fixtures))
        result = self._pytester.runpytest_inprocess(*INNER, *args)
        return Run(int(result.ret), result.stdout.str() + result.stderr.str())
