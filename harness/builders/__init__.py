"""Build helpers for ports whose shim needs more than one command. ``harness/ports.toml``
build steps run each as a module (``python -m harness.builders.<name>``), so they work from
a checkout and from an installed wheel alike; ``common`` holds what they share."""
