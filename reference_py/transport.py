"""reference_py's HTTP seam: which client a run's provider requests go through, and which
errors of it are a failed exchange.

The oracle speaks plain library HTTP: by default every client is an ``httpx.AsyncClient``
(:func:`httpx_client`) whose TLS set-up is made on the first ``https://`` request only
(loading the CA bundle is costly, and a provider reached over plain ``http://``, a local
gateway or the conformance harness's fake provider, never needs it). A process that owns
its choice of client (a launcher's warm process, a test) may install another factory with
:func:`use_client`, together with the exception types its client raises for a failed
exchange; the loop turns those, like httpx's, into a ``ProviderError``. An installed client
must send the very requests httpx sends: reference_py's requests are goldens.
"""

from __future__ import annotations

import functools
import json
import ssl
from collections.abc import Callable
from typing import Any

import certifi
import httpx

__all__ = [
    "LazyTLSTransport", "encode_body", "httpx_client", "is_http_error", "new_http_client", "tls_context", "use_client",
]

REQUEST_TIMEOUT_S = 120.0

# The installed client factory and its errors; None: httpx (the default).
_installed: tuple[Callable[[], Any], tuple[type[BaseException], ...]] | None = None


class LazyTLSTransport(httpx.AsyncBaseTransport):
    """Routes ``https`` requests to a TLS transport built on first use, the rest to plain HTTP."""

    def __init__(self) -> None:
        self._plain = httpx.AsyncHTTPTransport(verify=False)
        self._tls: httpx.AsyncHTTPTransport | None = None

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.url.scheme != "https":
            return await self._plain.handle_async_request(request)
        if self._tls is None:
            self._tls = httpx.AsyncHTTPTransport(verify=tls_context())
        return await self._tls.handle_async_request(request)

    async def aclose(self) -> None:
        await self._plain.aclose()
        if self._tls is not None:
            await self._tls.aclose()


@functools.lru_cache(maxsize=1)
def tls_context() -> ssl.SSLContext:
    """The verifying TLS context (certifi's CA bundle), built once per process."""
    return ssl.create_default_context(cafile=certifi.where())


def encode_body(body: object) -> bytes:
    """A request's JSON body as reference_py sends it: compact, UTF-8, NaN refused (what
    httpx's ``json=`` sends; serialized here so that no client's defaults can change it)."""
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")


def httpx_client() -> httpx.AsyncClient:
    """The default client: httpx, with TLS set up on the first ``https://`` request."""
    return httpx.AsyncClient(timeout=httpx.Timeout(REQUEST_TIMEOUT_S), transport=LazyTLSTransport())


def new_http_client() -> Any:
    """A client set up as a run's own: the installed factory's, else :func:`httpx_client`.
    A run without ``http_client`` opens one and closes it at its end; one passed to
    ``create_client(http_client=...)`` is shared by every run of that client and its
    keep-alive connections with it. The client needs ``post``, ``stream`` (each taking the
    body as ``content=`` bytes) and ``aclose`` as ``httpx.AsyncClient`` has them."""
    if _installed is not None:
        return _installed[0]()
    return httpx_client()


def use_client(factory: Callable[[], Any] | None, errors: tuple[type[BaseException], ...] = ()) -> None:
    """Make ``factory`` what :func:`new_http_client` returns in this process (None: httpx
    again), and ``errors`` the exception types of a failed exchange it raises."""
    global _installed
    _installed = None if factory is None else (factory, tuple(errors))


def is_http_error(exc: BaseException) -> bool:
    """An error of the HTTP exchange itself (httpx's, or the installed client's), not of the caller."""
    if isinstance(exc, httpx.HTTPError):
        return True
    return _installed is not None and isinstance(exc, _installed[1])
