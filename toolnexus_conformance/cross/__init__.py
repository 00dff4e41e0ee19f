"""Cross-port resume: one port halts, another resumes. Owns the resuming port's shim, which
phase a difference belongs to (halting, resuming, both), the oracle run against the reference
and the report block; the pytest items that drive it are in :mod:`toolnexus_conformance.plugin`.
"""

__all__ = ["oracle", "phases", "report", "resume"]
