"""Build helpers for ports whose shim needs more than one command. ``toolnexus_conformance/shim/ports.toml``
build steps run each as a module (``python -m toolnexus_conformance.builders.<name>``), so they work from
a checkout and from an installed wheel alike; ``common`` holds what they share."""

__all__ = ["common", "go_shim", "java_shim", "java_training", "js_shim", "python_venv"]
