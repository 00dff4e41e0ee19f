"""The errors of reference_py's plain-HTTP client, named as httpx's: the loop turns either
kind into a ProviderError reading ``LLM request to URL failed: <class name>: <message>``, so
the words stay the same whichever client made the request."""

from __future__ import annotations

import sys


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


def is_http_error(exc: BaseException) -> bool:
    """An error of the HTTP exchange itself (plain client or httpx), not of the caller."""
    if isinstance(exc, PlainHTTPError):
        return True
    httpx = sys.modules.get("httpx")  # never imported here: an httpx error implies httpx is loaded
    return httpx is not None and isinstance(exc, httpx.HTTPError)
