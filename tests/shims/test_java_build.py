"""The java port's build step (harness/builders/java_shim.py): JDK detection, the input
stamp, and one-line failures. Hermetic: fake JDK folders stand in for real ones and Maven
never runs."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from harness.builders import java_shim as build
from harness.paths import shims_dir

SHIM = shims_dir() / "java"


def fake_jdk(home: Path, version: str) -> Path:
    (home / "bin").mkdir(parents=True)
    (home / "bin" / "javac").write_text("", encoding="utf-8")
    (home / "release").write_text(f'IMPLEMENTOR="test"\nJAVA_VERSION="{version}"\n', encoding="utf-8")
    return home


def fake_checkout(root: Path, version: str = "0.16.0") -> Path:
    sources = root / "java" / "src" / "main" / "java" / "io" / "example"
    sources.mkdir(parents=True)
    (sources / "Lib.java").write_text("package io.example; class Lib {}\n", encoding="utf-8")
    (root / "java" / "build.gradle").write_text(f"group = 'x'\nversion = '{version}'\n", encoding="utf-8")
    return root


@pytest.mark.parametrize(("text", "major"), [("25.0.3", 25), ("21", 21), ("17.0.15", 17), ("1.8.0_402", 8)])
def test_java_major_reads_the_release_file(tmp_path: Path, text: str, major: int) -> None:
    assert build.java_major(fake_jdk(tmp_path / "jdk", text)) == major


def test_java_major_refuses_a_folder_without_javac(tmp_path: Path) -> None:
    (tmp_path / "release").write_text('JAVA_VERSION="25"\n', encoding="utf-8")
    assert build.java_major(tmp_path) is None


def test_java_home_wins_when_it_is_new_enough(tmp_path: Path) -> None:
    home = fake_jdk(tmp_path / "mine", "21.0.2")
    fake_jdk(tmp_path / "jvm" / "newer", "25.0.3")
    jdk = build.find_jdk({"JAVA_HOME": str(home), "PATH": ""}, roots=(tmp_path / "jvm",))
    assert (jdk.home, jdk.major) == (home, 21)


def test_an_old_java_home_falls_back_to_the_newest_installed_jdk(tmp_path: Path) -> None:
    old = fake_jdk(tmp_path / "old", "17.0.15")
    fake_jdk(tmp_path / "jvm" / "temurin-21", "21.0.5")
    newest = fake_jdk(tmp_path / "jvm" / "temurin-25", "25.0.3")
    fake_jdk(tmp_path / "jvm" / "openjdk-17", "17.0.15")
    jdk = build.find_jdk({"JAVA_HOME": str(old), "PATH": ""}, roots=(tmp_path / "jvm",))
    assert (jdk.home, jdk.major) == (newest, 25)


def test_no_new_enough_jdk_is_one_clear_error(tmp_path: Path) -> None:
    old = fake_jdk(tmp_path / "old", "17.0.15")
    with pytest.raises(build.BuildError) as caught:
        build.find_jdk({"JAVA_HOME": str(old), "PATH": ""}, roots=(tmp_path / "jvm",))
    message = str(caught.value)
    assert "JDK >= 21" in message and str(old) in message and "\n" not in message


def test_port_version_comes_from_the_checkout(tmp_path: Path) -> None:
    assert build.port_version(fake_checkout(tmp_path / "tn", "0.16.0")) == "0.16.0"
    assert build.port_version(tmp_path / "nowhere") == "unknown"


def test_the_digest_follows_the_port_sources_and_the_jdk(tmp_path: Path) -> None:
    src = fake_checkout(tmp_path / "tn")
    jdk = build.Jdk(tmp_path / "jdk", 25)
    first = build.inputs_digest(SHIM, src, jdk)
    assert build.inputs_digest(SHIM, src, jdk) == first
    assert build.inputs_digest(SHIM, src, build.Jdk(tmp_path / "other", 21)) != first
    (src / "java" / "src" / "main" / "java" / "io" / "example" / "Lib.java").write_text("changed", encoding="utf-8")
    assert build.inputs_digest(SHIM, src, jdk) != first


def test_a_folder_that_is_not_a_checkout_is_refused(tmp_path: Path) -> None:
    with pytest.raises(build.BuildError, match="not a toolnexus checkout"):
        build.build(SHIM, tmp_path, tmp_path / "out")


def test_an_unchanged_stamp_skips_maven(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    src = fake_checkout(tmp_path / "tn")
    home = fake_jdk(tmp_path / "jdk", "25.0.3")
    out = tmp_path / "out"
    jar = out / "target" / "toolnexus-java-shim.jar"
    jar.parent.mkdir(parents=True)
    jar.write_bytes(b"")
    environ = {"JAVA_HOME": str(home), "PATH": ""}
    digest = build.inputs_digest(SHIM.resolve(), src.resolve(), build.Jdk(home, 25))
    (out / "build.stamp").write_text(digest + "\n", encoding="utf-8")
    build.write_argfile(out, jar, None)

    def no_maven(*args: object, **kwargs: object) -> None:
        raise AssertionError("Maven ran although nothing changed")

    monkeypatch.setattr(subprocess, "run", no_maven)
    assert build.build(SHIM, src, out, environ) == jar.resolve()
    assert (out / "jdk").resolve() == home.resolve()


def test_a_failing_maven_names_the_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    src = fake_checkout(tmp_path / "tn")
    home = fake_jdk(tmp_path / "jdk", "25.0.3")
    monkeypatch.setattr(build.shutil, "which", lambda name, path=None: f"/fake/bin/{name}")

    class Done:
        returncode = 1
        stdout = "[ERROR] COMPILATION ERROR\n"
        stderr = ""

    monkeypatch.setattr(subprocess, "run", lambda *a, **k: Done())
    with pytest.raises(build.BuildError) as caught:
        build.build(SHIM, src, tmp_path / "out", {"JAVA_HOME": str(home), "PATH": ""})
    first_line, *rest = str(caught.value).splitlines()
    assert first_line.startswith(f"JAVA_HOME={home} /fake/bin/mvn -B -q -Dstyle.color=never -f ")
    assert "package" in first_line and "(exit 1)" in first_line
    assert any("COMPILATION ERROR" in line for line in rest)


def test_main_reports_one_line_and_exit_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert build.main(["--shim", str(SHIM), "--src", str(tmp_path), "--out", str(tmp_path / "out")]) == 1
    assert capsys.readouterr().err.startswith("java shim: ")
