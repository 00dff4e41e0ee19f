"""The drop-in CI gate for a port's repository (``python -m toolnexus_conformance.ci_gate``):
builds the port, runs the suite with its expectations, writes the reports and a job summary.
An entry point of its own because it drives the plugin (its usage hints) and the reports.
"""

__all__ = ["gate"]
