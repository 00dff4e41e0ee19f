"""The java port's build step (toolnexus_conformance/builders/java_shim.py): JDK detection, the input
stamp, and one-line failures. Hermetic: fake JDK folders stand in for real ones and Maven
never runs."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from toolnexus_conformance.builders import java_shim as build
from toolnexus_conformance.builders import java_training
from toolnexus_conformance.helpers.paths import repo_root, shims_dir

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


def stamped_build(tmp_path: Path, version: str, major: int) -> tuple[Path, Path, Path, Path]:
    """A checkout, a JDK and an ``out`` folder holding a jar whose stamp matches them
    (the state a reused build leaves): ``(src, jdk home, out, jar)``."""
    src = fake_checkout(tmp_path / "tn")
    home = fake_jdk(tmp_path / f"jdk-{version}", version)
    out = tmp_path / "out"
    jar = out / "target" / "toolnexus-java-shim.jar"
    jar.parent.mkdir(parents=True)
    jar.write_bytes(b"")
    digest = build.inputs_digest(SHIM.resolve(), src.resolve(), build.Jdk(home, major))
    (out / "build.stamp").write_text(digest + "\n", encoding="utf-8")
    return src, home, out, jar


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
    src, home, out, jar = stamped_build(tmp_path, "25.0.3", 25)
    environ = {"JAVA_HOME": str(home), "PATH": ""}
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


def test_the_digest_follows_the_runtime_flags(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The flags are written into java.args at build time: other flags must rebuild it."""
    src = fake_checkout(tmp_path / "tn")
    jdk = build.Jdk(fake_jdk(tmp_path / "jdk", "25.0.3"), 25)
    first = build.inputs_digest(SHIM, src, jdk)
    monkeypatch.setattr(build, "RUNTIME_FLAGS", (*build.RUNTIME_FLAGS, "-XX:+AlwaysPreTouch"))
    assert build.inputs_digest(SHIM, src, jdk) != first


def test_the_digest_follows_the_jdk_build(tmp_path: Path) -> None:
    """An AOT cache maps only into the JDK build that wrote it; an update in place retrains."""
    src = fake_checkout(tmp_path / "tn")
    jdk = build.Jdk(fake_jdk(tmp_path / "jdk", "25.0.3"), 25)
    first = build.inputs_digest(SHIM, src, jdk)
    (jdk.home / "release").write_text('JAVA_VERSION="25.0.4"\n', encoding="utf-8")
    assert build.inputs_digest(SHIM, src, jdk) != first


def test_a_stamp_without_its_argfile_rebuilds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    src, home, out, _ = stamped_build(tmp_path, "21.0.5", 21)
    ran: list[list[str]] = []
    monkeypatch.setattr(build, "maven_command", lambda *a: ["mvn", "package"])
    monkeypatch.setattr(build, "run_command", lambda argv, **k: ran.append(argv))
    build.build(SHIM, src, out, {"JAVA_HOME": str(home), "PATH": ""})
    assert ran == [["mvn", "package"]], "the build was skipped although java.args was missing"
    assert (out / "java.args").is_file()


def test_a_jdk_before_25_runs_without_an_aot_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_training(*args: object) -> None:
        raise AssertionError("a JDK 21 cannot write an AOT cache: nothing may try")

    monkeypatch.setattr(build, "train", no_training)
    out = tmp_path / "out"
    out.mkdir()
    assert build.train_aot_cache(out, build.Jdk(tmp_path / "jdk", 21)) is None
    jar = out / "target" / "shim.jar"
    args = build.write_argfile(out, jar, None).read_text(encoding="utf-8")
    assert "AOTCache" not in args and args.splitlines()[-2:] == ['"-jar"', f'"{jar}"']


def test_a_training_run_that_fails_says_why_and_leaves_no_cache(tmp_path: Path) -> None:
    """Not a shim at all: the build must go on without a cache and say so, not crash."""
    cache = tmp_path / "shim.aot"
    cache.write_bytes(b"stale")
    training = java_training.train([sys.executable, "-c", "import sys; sys.exit(3)"], cache)
    assert training.cache is None and not cache.exists()
    assert training.problem.startswith("the training run failed: "), training.problem


def _java() -> Path:
    try:
        return build.find_jdk().home / "bin" / "java"
    except build.BuildError as exc:
        pytest.skip(f"java shim: {exc}")


def test_java_reads_the_argfile_back_as_written(tmp_path: Path) -> None:
    """Quotes, backslashes and spaces in paths survive the @argfile: java names the very jar."""
    out = tmp_path / "out"
    out.mkdir()
    jar = tmp_path / 'a dir with "quotes" and \\ backslash' / "shim.jar"
    argfile = build.write_argfile(out, jar, None)
    done = subprocess.run([str(_java()), f"@{argfile}"], capture_output=True, text=True, timeout=60)
    assert done.returncode != 0
    assert f"Unable to access jarfile {jar}" in done.stdout + done.stderr, done.stdout + done.stderr


QUIET_JAVA = "public class Quiet { public static void main(String[] a) {} }\n"


def _quiet_jar(java: Path, tmp_path: Path) -> Path:
    """A jar whose main class does nothing, compiled by this JDK's javac and jar (seconds of CPU)
    once, then kept in the harness's build cache under the digest of the source and the JDK."""
    key = hashlib.sha256(f"{QUIET_JAVA}\0{java.resolve()}".encode()).hexdigest()[:16]
    cache = Path(os.environ.get("TOOLNEXUS_CONFORMANCE_CACHE", repo_root() / ".cache" / "conformance")).resolve()
    kept = cache / "java-quiet-jar" / key / "quiet.jar"
    if kept.is_file():
        return kept
    (tmp_path / "Quiet.java").write_text(QUIET_JAVA, encoding="utf-8")
    jar = tmp_path / "quiet.jar"
    for tool in (["javac", "-d", str(tmp_path), str(tmp_path / "Quiet.java")], ["jar", "--create", "--file", str(jar), "--main-class", "Quiet", "-C", str(tmp_path), "Quiet.class"]):
        subprocess.run([str(java.parent / tool[0]), *tool[1:]], check=True, capture_output=True, timeout=120)
    kept.parent.mkdir(parents=True, exist_ok=True)
    partial = kept.with_name(f".quiet.jar.{os.getpid()}")
    shutil.copy(jar, partial)
    partial.replace(kept)  # whole or absent, for a concurrent run
    return kept


def test_the_jvm_writes_nothing_but_protocol_on_stdout_when_its_cache_is_unusable(tmp_path: Path) -> None:
    """A cache the JVM cannot map is reported on stderr (its default is stdout, the protocol's)."""
    out = tmp_path / "out"
    out.mkdir()
    java = _java()
    argfile = build.write_argfile(out, _quiet_jar(java, tmp_path), tmp_path / "gone.aot")  # e.g. a wiped cache
    done = subprocess.run([str(java), f"@{argfile}"], capture_output=True, text=True, timeout=60)
    assert done.stdout == "", f"the JVM printed on stdout: {done.stdout!r}"
    assert "AOT cache" in done.stderr and done.returncode == 0, done.stderr


@pytest.mark.timeout(900)  # Maven and the training run, when the build is not cached yet
def test_a_real_build_trains_a_cache_the_shim_then_maps(capsys: pytest.CaptureFixture[str]) -> None:
    """The start command as ports.toml spells it, with the JVM told to refuse to run without
    its cache (AOTMode=on): a cache the JVM cannot use (another classpath, another JDK build)
    would otherwise only make every run slower, silently."""
    checkout = os.environ.get("TOOLNEXUS_SRC")
    if shutil.which("mvn") is None or not checkout:
        pytest.skip("java shim: needs 'mvn' and TOOLNEXUS_SRC (a toolnexus checkout) to build the real shim")
    jdk_major = build.find_jdk().major if _java() else 0
    if jdk_major < java_training.MIN_AOT_JAVA:
        pytest.skip(f"java shim: JDK {jdk_major} writes no AOT cache (needs {java_training.MIN_AOT_JAVA})")
    out = Path(os.environ.get("TOOLNEXUS_CONFORMANCE_CACHE", repo_root() / ".cache" / "conformance")).resolve() / "java-aot"
    build.build(SHIM, Path(checkout), out)
    assert (out / "shim.aot").is_file(), f"the build trained no AOT cache: {capsys.readouterr().out}"
    lines = "".join(json.dumps(m) + "\n" for m in (
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}},
        {"jsonrpc": "2.0", "id": 2, "method": "shutdown"},
    ))
    start = [str(out / "jdk" / "bin" / "java"), "-XX:AOTMode=on", f"@{out / 'java.args'}"]
    done = subprocess.run(start, input=lines, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"the JVM would not run with its cache:\n{done.stdout}{done.stderr}"
    answers = {a["id"]: a for a in map(json.loads, done.stdout.splitlines())}  # in any order
    assert set(answers) == {1, 2} and answers[1]["result"]["port"] == "java", done.stdout


def test_a_build_without_an_aot_cache_says_why_and_a_reused_build_says_it_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Without the cache every shim starts cold: the run is slower, and the summary must say why.
    src, home, out, jar = stamped_build(tmp_path, "21.0.4", 21)
    assert build.train_aot_cache(out, build.Jdk(home, 21)) is None
    said = capsys.readouterr().out
    assert "note: java shim: no AOT cache (JDK 21 < 25); each shim starts cold" in said

    build.write_argfile(out, jar, None)
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: pytest.fail("Maven ran although nothing changed"))
    build.build(SHIM, src, out, {"JAVA_HOME": str(home), "PATH": ""})
    assert "note: java shim: no AOT cache (JDK 21 < 25)" in capsys.readouterr().out, "the reused build kept quiet"


def test_a_trained_cache_leaves_no_note(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "build.notes").write_text("java shim: no AOT cache (an earlier build)\n", encoding="utf-8")
    (out / "jdk" / "bin").mkdir(parents=True)
    trained = java_training.Training(out / "shim.aot", variants=600, seconds=1.0)
    monkeypatch.setattr(build, "train", lambda command, cache: trained)
    assert build.train_aot_cache(out, build.Jdk(tmp_path / "jdk", 25)) == out / "shim.aot"
    assert "note:" not in capsys.readouterr().out
    assert not (out / "build.notes").exists(), "a stale note would be said again on every reuse"
