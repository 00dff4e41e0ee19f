"""Build step of the java port (toolnexus_conformance/shim/ports.toml [java]): find a JDK >= 21, run Maven.

The java port is not on Maven Central, so the shim (``--shim``, the folder holding its
pom.xml and src/) is compiled together with the port's sources from a checkout (``--src``,
the toolnexus repository root). Everything the build writes goes under ``--out`` (the
harness's cache folder for the port):

    <out>/jdk           symlink to the JDK the build used (the start command runs its java)
    <out>/target/...    Maven's output; <out>/target/toolnexus-java-shim.jar + lib/ run the shim
    <out>/shim.aot      the AOT cache a training run wrote (JDK >= 25; see java_training)
    <out>/java.args     the JVM's arguments, an @argfile: runtime flags, the cache, -jar JAR
    <out>/build.stamp   digest of every input; an unchanged stamp skips Maven and the training

The start command (toolnexus_conformance/shim/ports.toml) is ``<out>/jdk/bin/java @<out>/java.args``, so the
flags that depend on the JDK found here (the AOT cache needs JDK 25) are chosen here.

Run: ``python -m toolnexus_conformance.builders.java_shim --shim shims/java --src PATH/TO/toolnexus
--out DIR``. A failure prints one line naming what is missing or the command that failed
(with Maven's tail), exit status 1.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import shlex
import shutil
from dataclasses import dataclass
from pathlib import Path

from .common import BuildError, cli, keep_notes, output_tail, replay_notes, run_command
from .java_training import MIN_AOT_JAVA, train

MIN_JAVA = 21
JVM_ROOTS = (Path("/usr/lib/jvm"), Path("/usr/java"), Path("/opt/java"))
PORT_SOURCES = Path("java/src/main/java")
JAR = Path("target/toolnexus-java-shim.jar")
MAVEN_TIMEOUT_S = 900
AOT_CACHE = Path("shim.aot")
ARGFILE = Path("java.args")
# Serial GC and C1 only: the shim's heap stays small and its work is short calls, where C2's
# compilations cost more CPU than they save (benchmarks/README.md has the figures). JVM log output goes to stderr:
# by default its warnings (e.g. a cache it cannot map) would land on stdout, the protocol's.
RUNTIME_FLAGS = ("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xlog:disable", "-Xlog:all=warning:stderr")


@dataclass(frozen=True)
class Jdk:
    home: Path
    major: int


def java_major(home: Path) -> int | None:
    """The feature version of the JDK at ``home`` (its ``release`` file), or None if not a JDK."""
    if not (home / "bin" / "javac").exists():
        return None
    try:
        text = (home / "release").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    found = re.search(r'^JAVA_VERSION="(\d+)(?:\.(\d+))?', text, re.MULTILINE)
    if not found:
        return None
    major = int(found.group(1))
    # pre-9 JDKs spell themselves 1.8
    return int(found.group(2) or 0) if major == 1 else major


def find_jdk(environ: dict[str, str] | None = None, roots: tuple[Path, ...] = JVM_ROOTS) -> Jdk:
    """$JAVA_HOME when it is >= 21, else the javac on PATH, else the newest JDK >= 21 under ``roots``."""
    environ = dict(os.environ if environ is None else environ)
    seen: list[str] = []
    candidates: list[Path] = []
    if environ.get("JAVA_HOME"):
        candidates.append(Path(environ["JAVA_HOME"]))
    javac = shutil.which("javac", path=environ.get("PATH"))
    if javac:
        candidates.append(Path(javac).resolve().parent.parent)
    for home in candidates:
        major = java_major(home)
        seen.append(f"{home} ({major if major else 'not a JDK'})")
        if major and major >= MIN_JAVA:
            return Jdk(home, major)
    installed = []
    for root in roots:
        if root.is_dir():
            for home in sorted(root.iterdir()):
                major = java_major(home)
                if major and not home.is_symlink():
                    installed.append(Jdk(home, major))
    eligible = [jdk for jdk in installed if jdk.major >= MIN_JAVA]
    if eligible:
        return max(eligible, key=lambda jdk: (jdk.major, str(jdk.home)))
    seen += [f"{jdk.home} ({jdk.major})" for jdk in installed]
    looked = "; ".join(seen) or "nothing"
    raise BuildError(
        f"the java port needs a JDK >= {MIN_JAVA} and none was found (looked at: {looked}); "
        f"set JAVA_HOME to a JDK {MIN_JAVA}+"
    )


def port_version(src: Path) -> str:
    """The port's version as its own build file states it (informational, for ``initialize``)."""
    try:
        text = (src / "java" / "build.gradle").read_text(encoding="utf-8")
    except OSError:
        return "unknown"
    found = re.search(r"^version\s*=\s*['\"]([^'\"]+)['\"]", text, re.MULTILINE)
    return found.group(1) if found else "unknown"


def inputs_digest(shim: Path, src: Path, jdk: Jdk) -> str:
    """One digest over the shim's sources, the port's sources and the JDK: what a build depends on."""
    digest = hashlib.sha256(f"{jdk.home}:{jdk.major}\n".encode())
    # an AOT cache maps only into the JDK build that wrote it, and the flags are part of the output
    digest.update(_release(jdk.home).encode() + b"\0" + "\0".join(RUNTIME_FLAGS).encode() + b"\0")
    trees = [(shim, shim / "pom.xml"), (shim, shim / "src"), (src, src / PORT_SOURCES)]
    for base, top in trees:
        files = [top] if top.is_file() else sorted(p for p in top.rglob("*") if p.is_file())
        for path in files:
            digest.update(str(path.relative_to(base)).encode() + b"\0")
            digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def _release(home: Path) -> str:
    try:
        return (home / "release").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def maven_command(shim: Path, src: Path, out: Path, version: str) -> list[str]:
    mvn = shutil.which("mvn")
    if mvn is None:
        raise BuildError("the java shim is built with Maven and 'mvn' is not on PATH")
    return [
        mvn, "-B", "-q", "-Dstyle.color=never", "-f", str(shim / "pom.xml"),
        f"-Dport.src={src}", f"-Dshim.out={out / 'target'}", f"-Dport.version={version}",
        "package",
    ]


def build(shim: Path, src: Path, out: Path, environ: dict[str, str] | None = None) -> Path:
    """Build (or reuse) the shim jar for the checkout at ``src``; return the jar's path."""
    shim, src, out = shim.resolve(), src.resolve(), out.resolve()
    if not (shim / "pom.xml").is_file():
        raise BuildError(f"{shim} is not the java shim: it has no pom.xml")
    if not (src / PORT_SOURCES).is_dir():
        raise BuildError(f"{src} is not a toolnexus checkout: it has no {PORT_SOURCES}")
    jdk = find_jdk(environ)
    out.mkdir(parents=True, exist_ok=True)
    jar = out / JAR
    stamp = out / "build.stamp"
    digest = inputs_digest(shim, src, jdk)
    if jar.exists() and (out / ARGFILE).exists() and stamp.exists() and stamp.read_text(encoding="utf-8").strip() == digest:
        _link_jdk(out, jdk)
        replay_notes(out)
        return jar
    stamp.unlink(missing_ok=True)
    command = maven_command(shim, src, out, port_version(src))
    env = {**(os.environ if environ is None else environ), "JAVA_HOME": str(jdk.home)}
    shown = f"JAVA_HOME={jdk.home} {shlex.join(command)}"
    done = run_command(command, env=env, timeout=MAVEN_TIMEOUT_S, shown_as=shown)
    if not jar.exists():
        raise BuildError(f"{shown} wrote no {JAR}\n{output_tail(done.stdout + done.stderr)}")
    _link_jdk(out, jdk)
    write_argfile(out, jar, train_aot_cache(out, jdk))
    stamp.write_text(digest + "\n", encoding="utf-8")
    return jar


def train_aot_cache(out: Path, jdk: Jdk) -> Path | None:
    """Train the AOT cache when the JDK can. Without one, a note (kept with the build) says
    why: the summary of every run on this build shows it."""
    (out / AOT_CACHE).unlink(missing_ok=True)
    if jdk.major < MIN_AOT_JAVA:
        keep_notes(out, [f"java shim: no AOT cache (JDK {jdk.major} < {MIN_AOT_JAVA}); each shim starts cold"])
        return None
    write_argfile(out, out / JAR, None)  # the training JVM runs the shim as the suite will
    training = train([str(out / "jdk" / "bin" / "java"), f"@{out / ARGFILE}"], out / AOT_CACHE)
    if training.cache is None:
        keep_notes(out, [f"java shim: no AOT cache, each shim starts cold: {training.problem}"])
    else:
        keep_notes(out, [])
        print(f"java shim: AOT cache trained on {training.variants} variants in {training.seconds:.1f} s")
    return training.cache


def runtime_args(jar: Path, cache: Path | None) -> list[str]:
    """The JVM's arguments after ``java``: flags, the AOT cache when there is one, the jar."""
    return [*RUNTIME_FLAGS, *([f"-XX:AOTCache={cache}"] if cache is not None else []), "-jar", str(jar)]


def write_argfile(out: Path, jar: Path, cache: Path | None) -> Path:
    """Write <out>/java.args, one argument a line, each quoted (paths may hold spaces)."""
    path = out / ARGFILE
    lines = ['"' + arg.replace("\\", "\\\\").replace('"', '\\"') + '"' for arg in runtime_args(jar, cache)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _link_jdk(out: Path, jdk: Jdk) -> None:
    """Point <out>/jdk at the build's JDK, so the registry's start command can name its java."""
    link = out / "jdk"
    if link.is_symlink() and Path(os.readlink(link)) == jdk.home:
        return
    if link.is_symlink() or link.exists():
        link.unlink()
    link.symlink_to(jdk.home, target_is_directory=True)


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--shim", required=True, type=Path, help="the java shim's folder (pom.xml, src/)")
    parser.add_argument("--src", required=True, help="the toolnexus checkout (repository root)")
    parser.add_argument("--out", required=True, type=Path, help="the cache folder the build writes to")


def _build(args: argparse.Namespace) -> str:
    if not args.src:
        raise BuildError("no toolnexus checkout given; pass --port-src=PATH")
    return str(build(args.shim, Path(args.src), args.out))


def main(argv: list[str] | None = None) -> int:
    return cli("java shim", "Build the java shim against a toolnexus checkout.", _arguments, _build, argv)


if __name__ == "__main__":
    raise SystemExit(main())
