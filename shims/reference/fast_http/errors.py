"""The errors of the reference shim's fast HTTP client, named as httpx's: reference_py's loop
turns either kind (installed with the client, see ``__init__.py``) into a ProviderError reading ``LLM request to URL failed: <class name>: <message>``, so
the words stay the same whichever client made the request."""

from __future__ import annotations


class PlainHTTPError(Exception):
    """Base of the plain client's errors; subclasses carry httpx's class names."""


class ConnectError(PlainHTTPError):
    pass


class ConnectTimeout(PlainHTTPError):
    pass


class ReadTimeout(PlainHTTPError):
    pass


class WriteTimeout(PlainHTTPError):
    pass


class ReadError(PlainHTTPError):
    pass


class WriteError(PlainHTTPError):
    pass


class RemoteProtocolError(PlainHTTPError):
    pass


class LocalProtocolError(PlainHTTPError):
    pass


class DecodingError(PlainHTTPError):
    pass

