#!/usr/bin/env bash
# The CI gate's entry point (ci-gate/action.yml runs it; so can any CI or a maintainer's shell):
# install the conformance harness into a private venv, then run `python -m toolnexus_conformance.ci_gate`
# with every argument given here, from the repository under test (the current folder).
#
#   TOOLNEXUS_HARNESS=<wheel path | URL | pip requirement> ci-gate/run_gate.sh \
#       --port=golang --port-src=. --expectations=conformance/golang.toml [-- <pytest options>]
#
# TOOLNEXUS_HARNESS  what pip installs as the harness (required)
# TOOLNEXUS_GATE_VENV  the venv to use (default: $RUNNER_TEMP or $TMPDIR /toolnexus-gate-venv);
#                      an existing one is reused; the harness is reinstalled whenever what
#                      TOOLNEXUS_HARNESS names differs from what the venv holds: a wheel or
#                      folder by the sha256 of its bytes (a rebuilt wheel of the same version
#                      too), anything else by its text
# PYTHON             the interpreter that creates the venv (default: python3, >= 3.11)
set -euo pipefail

if [ -z "${TOOLNEXUS_HARNESS:-}" ]; then
  echo "run_gate.sh: set TOOLNEXUS_HARNESS to the harness wheel, its URL or a pip requirement" >&2
  exit 2
fi
venv="${TOOLNEXUS_GATE_VENV:-${RUNNER_TEMP:-${TMPDIR:-/tmp}}/toolnexus-gate-venv}"
python="${PYTHON:-python3}"

if [ ! -x "$venv/bin/python" ]; then
  "$python" -m venv "$venv"
fi
# What TOOLNEXUS_HARNESS names, as a digest: a file's bytes, a folder's files (path and bytes,
# build leftovers aside), else the requirement's text. The extras part ("x.whl[gate]") counts.
harness_digest() {
  local spec=$1 path=$1
  case "$spec" in *\]) path=${spec%%\[*} ;; esac
  if [ -f "$path" ]; then
    { printf '%s\n' "$spec"; sha256sum < "$path"; } | sha256sum | cut -d' ' -f1
  elif [ -d "$path" ]; then
    { printf '%s\n' "$spec"
      (cd "$path" && find . -type f ! -path '*/.git/*' ! -path '*/__pycache__/*' ! -path '*/.venv/*' \
         ! -path '*/build/*' ! -path '*/.cache/*' ! -name '*.pyc' -print0 | LC_ALL=C sort -z | xargs -0 sha256sum); } \
      | sha256sum | cut -d' ' -f1
  else
    printf '%s\n' "$spec" | sha256sum | cut -d' ' -f1
  fi
}
stamp="$venv/.toolnexus-harness.sha256"
digest=$(harness_digest "$TOOLNEXUS_HARNESS")
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$digest" ]; then
  echo "run_gate.sh: installing the harness: $TOOLNEXUS_HARNESS" >&2
  rm -f "$stamp"
  # --force-reinstall: pip keeps an installed version when a rebuilt wheel carries the same one.
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --force-reinstall --no-deps "$TOOLNEXUS_HARNESS"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$TOOLNEXUS_HARNESS"
  printf '%s\n' "$digest" > "$stamp"
else
  echo "run_gate.sh: the harness in $venv is already $TOOLNEXUS_HARNESS (sha256 ${digest:0:12})" >&2
fi
export TOOLNEXUS_HARNESS
exec "$venv/bin/python" -m toolnexus_conformance.ci_gate "$@"
