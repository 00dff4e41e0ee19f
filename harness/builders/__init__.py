"""Build helpers for ports whose shim needs more than one command (run as scripts by
``harness/ports.toml`` build steps; they import nothing from the harness)."""
