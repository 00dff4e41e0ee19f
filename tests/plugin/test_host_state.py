"""The plugin runs inside a port repository's pytest process, beside that repository's own
tests: a session of it leaves the process's global state as it found it — the garbage
collector's settings, the plugins registered with pytest (other than the plugin's own), and
the attributes of third-party modules (hypothesis, whose pytest plugin every such process
loads). Importing any of the harness's modules changes none of them either.

A probe plugin records the state before the plugin configures and after the session ends, in
a pytest run of its own (a subprocess, as a port repository runs it)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from plugin_runner import REPO, SCENARIO, run_pytest

pytestmark = pytest.mark.slow  # pytest runs in subprocesses

# Records the host's state as JSON lines in $HOST_STATE_OUT: first thing in pytest_configure
# (before the plugin's own configure), last thing in pytest_unconfigure.
PROBE = '''
import gc, json, os, sys

import hypothesis  # loaded by the host before the session, as a port's own tests would
import pytest

OURS = ("toolnexus-conformance", "toolnexus_conformance")


def _attributes():
    return {
        name: {key: repr(type(value)) + ":" + str(id(value)) for key, value in vars(module).items()}
        for name, module in list(sys.modules.items())
        if name.split(".")[0] in ("hypothesis", "_hypothesis_pytestplugin", "_hypothesis_globals")
    }


def _state(config):
    plugins = {
        f"{name}:{id(plugin)}"
        for name, plugin in config.pluginmanager.list_name_plugin()
        if plugin is not None and not str(name).startswith(OURS)
        and not getattr(plugin, "__module__", "").startswith(OURS)
    }
    return {
        "gc": [gc.isenabled(), list(gc.get_threshold()), gc.get_freeze_count()],
        "plugins": sorted(plugins),
        "modules": _attributes(),
    }


def _write(stage, config):
    with open(os.environ["HOST_STATE_OUT"], "a", encoding="utf-8") as out:
        out.write(json.dumps({"stage": stage, **_state(config)}) + "\\n")


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config):
    _write("before", config)


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config):
    _write("after", config)
'''


def _states(tmp_path: Path, *args: str) -> tuple[dict[str, Any], dict[str, Any], str]:
    (tmp_path / "host_state_probe.py").write_text(PROBE, encoding="utf-8")
    out = tmp_path / f"state-{len(list(tmp_path.glob('state-*.jsonl')))}.jsonl"
    run = run_pytest(*args, "-p", "host_state_probe", "-p", "no:randomly",
                     env_extra={"PYTHONPATH": str(tmp_path), "HOST_STATE_OUT": str(out)})
    assert run.code == 0, run.output
    lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [line["stage"] for line in lines] == ["before", "after"], run.output
    return lines[0], lines[1], run.output


def _changed_attributes(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """Attributes of modules present before that were replaced, added or removed since."""
    changed = []
    for module, attributes in before.items():
        now = after.get(module, {})
        changed += [f"{module}.{key}" for key in sorted(set(attributes) | set(now)) if attributes.get(key) != now.get(key)]
    return changed


def test_a_conformance_session_leaves_its_host_process_as_it_found_it(tmp_path: Path) -> None:
    # What pytest and hypothesis's own plugin change in any session (hypothesis counts its
    # initialization down, for one) is learnt from a session of a plain test without the plugin.
    plain = tmp_path / "plain" / "test_plain.py"
    plain.parent.mkdir()
    plain.write_text("def test_plain():\n    assert True\n", encoding="utf-8")
    control_before, control_after, _ = _states(tmp_path, str(plain), "-p", "no:toolnexus_conformance",
                                               "--rootdir", str(plain.parent))
    # Scenario variants alone (the session the plugin once tuned the process for), one of
    # them resuming in a fresh shim process.
    across = REPO / "fixtures" / "scenarios" / "resume-across-process.json"
    before, after, output = _states(tmp_path, str(SCENARIO), str(across), "--port=reference")
    assert after["gc"] == before["gc"], "gc (enabled, thresholds, frozen objects) changed"
    unregistered = set(before["plugins"]) - set(after["plugins"])
    assert unregistered == set(), f"plugins unregistered: {unregistered}"
    baseline = set(_changed_attributes(control_before["modules"], control_after["modules"]))
    assert set(_changed_attributes(before["modules"], after["modules"])) - baseline == set()


def test_importing_every_harness_module_changes_no_global_state(tmp_path: Path) -> None:
    """A port repository's tests may import the harness (its differential, its reports):
    importing a module tunes nothing and patches no other library."""
    script = '''
import gc, importlib, importlib.metadata, json, pkgutil, sys
import hypothesis

def attributes():
    return {n: {k: id(v) for k, v in vars(m).items()} for n, m in list(sys.modules.items()) if n.startswith("hypothesis")}

(plugin,) = [e for e in importlib.metadata.entry_points(group="pytest11") if e.name == "toolnexus_conformance"]
package = importlib.import_module(plugin.value.split(":")[0].split(".")[0])
before = (gc.isenabled(), gc.get_threshold(), gc.get_freeze_count(), attributes())
names = [m.name for m in pkgutil.walk_packages(package.__path__, package.__name__ + ".")]
for name in names:
    if not name.endswith("__main__"):
        importlib.import_module(name)
after = (gc.isenabled(), gc.get_threshold(), gc.get_freeze_count(), attributes())
changed = [f"{n}.{k}" for n, a in before[3].items() for k in set(a) | set(after[3].get(n, {})) if a.get(k) != after[3].get(n, {}).get(k)]
print(json.dumps({"modules": len(names), "gc": [list(map(str, before[:3])), list(map(str, after[:3]))], "changed": changed}))
'''
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["modules"] > 10, result
    assert result["gc"][0] == result["gc"][1], result
    assert result["changed"] == [], result


def test_a_session_with_hypothesis_tests_keeps_the_hypothesis_plugin_working(tmp_path: Path) -> None:
    """The host's own property tests beside the conformance suite: hypothesis's plugin is
    still registered and still runs them."""
    other = tmp_path / "test_other.py"
    other.write_text(
        "from hypothesis import given, strategies as st\n\n"
        "@given(st.integers())\ndef test_property(n):\n    assert n == n\n",
        encoding="utf-8",
    )
    before, after, output = _states(tmp_path, str(SCENARIO), str(other), "--port=reference",
                                    "--rootdir", str(tmp_path.parent))
    assert any(name.startswith("hypothesispytest:") for name in after["plugins"]), after["plugins"]
    assert after["gc"] == before["gc"]
