"""The HTTP transport of a run's client: TLS is set up only when a request needs it.

Loading the CA bundle into an SSL context is costly, and a plain ``httpx.AsyncClient``
pays it at creation. A provider reached over plain ``http://`` (a local gateway,
the conformance harness's fake provider) never needs it, so the TLS transport is built on
the first ``https://`` request and plain-HTTP requests go through a transport without TLS.
"""

from __future__ import annotations

import functools
import ssl

import certifi
import httpx


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
