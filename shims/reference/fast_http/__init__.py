"""The reference shim's fast HTTP client: what a warm launcher of the reference shim
(``toolnexus_conformance/shim/zygote.py``) installs into reference_py through its transport
seam (``reference_py.transport.use_client``), for runs that send many provider requests.

Not part of the model shim: ``shims/reference/shim.py`` run plainly uses reference_py's
default client, httpx. This client sends the very requests httpx sends and reads responses
as httpx reads them (``tests/reference/test_http_plain_*.py`` hold it against httpx), on
less CPU per request; a URL it cannot send exactly as httpx would goes to httpx.
"""

from __future__ import annotations

from .errors import PlainHTTPError
from .plain import PlainHTTPClient

__all__ = ["PlainHTTPClient", "PlainHTTPError", "connection", "errors", "install", "plain", "text", "wire"]


def install() -> None:
    """Make this client reference_py's in this process (its runs' and the shim's), and do
    now the look-ups its first request would do."""
    from reference_py import transport

    from . import wire

    wire.plain_path_available()
    wire.default_fields()
    transport.use_client(PlainHTTPClient, errors=(PlainHTTPError,))
