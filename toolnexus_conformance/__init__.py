"""The toolnexus conformance harness: a pytest plugin that drives a port's shim over JSON-RPC
on stdio and checks it against SPEC.md's rules, the schemas and the reference's goldens.

The subpackages are layers; each imports only its own layer and those below it, never another
package's ``_private`` names, and no two packages import each other (``tests/test_layers.py``
holds this, CONTRIBUTING.md draws it):

1. entry points: ``plugin`` (the pytest plugin), ``ci_gate``, ``cross`` (cross-port resume),
   ``differential``, ``reports``, ``builders``;
2. verdict: ``verdict`` (rule selection, evaluation, judging, expectations, the rule checks);
3. run and golden: ``run`` (runner, host, observables, facts), ``golden`` (goldens,
   normalization, comparison);
4. scenario, shim transport, fake provider: ``scenario``, ``shim``, ``fake_provider``;
5. helpers: ``helpers`` (JSON, paths, errors, schemas).
"""

__all__ = [
    "builders",
    "ci_gate",
    "cross",
    "differential",
    "fake_provider",
    "golden",
    "helpers",
    "plugin",
    "reports",
    "run",
    "scenario",
    "shim",
    "verdict",
]
