#!/usr/bin/env bash
# The CI gate's entry point (ci-gate/action.yml runs it; so can any CI or a maintainer's shell):
# install the conformance harness into a private venv, then run `python -m harness.ci_gate`
# with every argument given here, from the repository under test (the current folder).
#
#   TOOLNEXUS_HARNESS=<wheel path | URL | pip requirement> ci-gate/run_gate.sh \
#       --port=golang --port-src=. --expectations=conformance/golang.toml [-- <pytest options>]
#
# TOOLNEXUS_HARNESS  what pip installs as the harness (required)
# TOOLNEXUS_GATE_VENV  the venv to use (default: $RUNNER_TEMP or $TMPDIR /toolnexus-gate-venv);
#                      an existing one is reused and the harness reinstalled only if changed
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
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$TOOLNEXUS_HARNESS"
exec "$venv/bin/python" -m harness.ci_gate "$@"
