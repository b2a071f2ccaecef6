"""One HTTP request to an embedding or rerank endpoint, classified and retried (SPEC R5.11, R5.14, R5.15).

``EndpointClient`` owns the single ``httpx.Client`` of an endpoint (a bounded connection pool,
shared by every thread: MCP searches embed queries while the watcher indexes) and knows nothing
about embeddings: a caller hands it a JSON payload and a body cap and gets the 2xx body's bytes.
Everything that can go wrong ends as one of three outcomes:

- ``Rejected``: HTTP 400, 413 or 422; the input itself was refused, never retried;
- ``EndpointError`` (a ``ModelError``): the run stops or the query fails;
- a retry: HTTP 429, 5xx, or a timeout or connection failure before the status line arrived.

Once a status line has arrived the status decides, whatever happens to the body afterwards. Error
messages name the endpoint by its URL without credentials (scheme, host, port and path: no user
or password, query or fragment; issue 21) and carry the status, the kind of failure or the header
value at fault, never the response body or the transport error's own text (R5.19); a log line may
carry up to 512 bytes of a failed response's body, escaped to ASCII.
"""

from __future__ import annotations

import email.utils
import ipaddress
import json
import logging
import math
import random
import threading
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import attrs
import httpx

from grooveseek.errors import ModelError

log = logging.getLogger("grooveseek.openai")

MAX_RETRY_AFTER = 60.0  # R5.15: a longer Retry-After fails the batch at once
SHOWN_HEADER_CHARS = 40  # of a Retry-After value quoted in an error
MAX_BACKOFF = 60.0
LOGGED_BODY_BYTES = 512  # R5.19
# Connections kept per endpoint: enough for one query per core plus the indexer's batch; a caller
# beyond that waits for a free connection at most timeout_seconds (httpx's pool timeout).
POOL_CONNECTIONS = 8
REJECTED_STATUSES = (400, 413, 422)


class EndpointError(ModelError):
    """The endpoint failed in a way that stops the run (or fails the query)."""


class Rejected(Exception):
    """HTTP 400, 413 or 422: the input was refused (R5.14)."""

    def __init__(self, status: int) -> None:
        super().__init__(f"HTTP {status}")
        self.status = status


class _Retry(Exception):
    def __init__(self, cause: str, retry_after: str | None = None) -> None:
        super().__init__(cause)
        self.cause = cause
        self.retry_after = retry_after


@attrs.frozen
class EndpointSettings:
    """What one endpoint needs; ``api_key`` never appears in a repr (R5.19)."""

    url: str
    timeout_seconds: float
    max_retries: int
    what: str  # "embedding endpoint" or "rerank endpoint", the subject of every message
    url_key: str  # the config key that names the URL, for fixes
    key_hint: str  # where the key comes from, for a 401/403
    api_key: str | None = attrs.field(default=None, repr=False)

    @property
    def host(self) -> str:
        """``host[:port]`` of the URL: safe to show (no path, query or credentials)."""
        parts = urlsplit(self.url)
        host = parts.hostname or "?"
        if ":" in host:
            host = f"[{host}]"
        return f"{host}:{parts.port}" if parts.port else host

    @property
    def shown_url(self) -> str:
        """The URL without credentials: no user:password, query or fragment (a key may hide there)."""
        parts = urlsplit(self.url)
        shown = urlunsplit((parts.scheme, self.host, parts.path, "", ""))
        return shown.encode("ascii", "backslashreplace").decode("ascii")

    @property
    def subject(self) -> str:
        """``embedding endpoint http://host:port/path``: who every error is about."""
        return f"{self.what} {self.shown_url}"


def is_loopback(url: str) -> bool:
    """True for localhost and loopback addresses: such requests bypass proxy settings (R5.11)."""
    host = (urlsplit(url).hostname or "").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def ascii_snippet(body: bytes) -> str:
    """At most 512 bytes of a body, escaped to ASCII, for a log line (R5.19)."""
    text = body[:LOGGED_BODY_BYTES].decode("utf-8", "replace")
    return text.encode("ascii", "backslashreplace").decode("ascii")


def backoff(failed_attempts: int, rand: Callable[[], float]) -> float:
    """R5.15 without Retry-After: 1 s, 2 s, 4 s ... capped at 60 s, plus jitter below a quarter."""
    base = min(MAX_BACKOFF, 2.0 ** (failed_attempts - 1))
    return base + rand() * base / 4


def retry_after_seconds(value: str, now: float) -> float | None:
    """Parse a Retry-After header: delta-seconds or an HTTP date; None when it is neither. A number
    too long to be a wait anyone means is infinite (``int`` of 5,000 digits raises, and ``float``
    of 400 overflows)."""
    value = value.strip()
    if value.isascii() and value.isdigit():
        return float(int(value)) if len(value) <= 15 else math.inf
    try:
        when = email.utils.parsedate_to_datetime(value)
        if when is None or when.tzinfo is None:
            return None
        return max(0.0, when.timestamp() - now)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None


def shown_header(value: str) -> str:
    """A header value for an error message: ASCII, at most ``SHOWN_HEADER_CHARS`` characters."""
    value = value.strip()
    cut = value[:SHOWN_HEADER_CHARS] + ("..." if len(value) > SHOWN_HEADER_CHARS else "")
    return cut.encode("ascii", "backslashreplace").decode("ascii")


class EndpointClient:
    """Posts JSON to one endpoint with the R5.14/R5.15 rules. Thread-safe; one per endpoint.

    ``sleep``, ``rand`` and ``now`` are injectable so tests observe the waits without sleeping.
    No connection is made before the first ``post_json`` (R5.18: nothing probes at start-up).
    """

    def __init__(
        self,
        settings: EndpointSettings,
        *,
        sleep: Callable[[float], None] | None = None,
        rand: Callable[[], float] | None = None,
        now: Callable[[], float] | None = None,
    ) -> None:
        self.settings = settings
        # "is None", not "or": a recorder that is an empty list is still the sleep to use.
        self._sleep = time.sleep if sleep is None else sleep
        self._rand = random.random if rand is None else rand
        self._now = time.time if now is None else now
        self._lock = threading.Lock()
        self._http: httpx.Client | None = None

    def __repr__(self) -> str:
        return f"EndpointClient({self.settings.what} at {self.settings.host})"

    def _client(self) -> httpx.Client:
        with self._lock:
            if self._http is None:
                if logging.getLogger("httpx").level == logging.NOTSET:
                    # httpx logs every request at INFO: one line per batch would drown the run's output.
                    logging.getLogger("httpx").setLevel(logging.WARNING)
                self._http = httpx.Client(
                    timeout=httpx.Timeout(self.settings.timeout_seconds),
                    limits=httpx.Limits(
                        max_connections=POOL_CONNECTIONS, max_keepalive_connections=POOL_CONNECTIONS
                    ),
                    follow_redirects=False,
                    trust_env=not is_loopback(self.settings.url),
                )
            return self._http

    def close(self) -> None:
        with self._lock:
            http, self._http = self._http, None
        if http is not None:
            http.close()

    def post_json(self, payload: dict[str, Any], cap: int) -> bytes:
        """POST ``payload`` and return the 2xx body (at most ``cap`` bytes), retrying per R5.15.

        Raises:
            Rejected: HTTP 400, 413 or 422.
            EndpointError: anything that stops the run, including the last failed retry.
        """
        s = self.settings
        content = json.dumps(payload, ensure_ascii=False).encode("utf-8", "replace")
        attempts = 0
        while True:
            attempts += 1
            try:
                return self._attempt(content, cap)
            except _Retry as retry:
                if attempts > s.max_retries:
                    if s.max_retries == 0:
                        raise EndpointError(f"{s.subject}: {retry.cause}") from None
                    raise EndpointError(
                        f"{s.subject}: {retry.cause}; gave up after {attempts} attempts"
                    ) from None
                wait = self._wait(retry, attempts)
                log.warning(
                    "%s: %s; retrying in %.1f s (attempt %d of %d)",
                    s.subject,
                    retry.cause,
                    wait,
                    attempts + 1,
                    s.max_retries + 1,
                )
                self._sleep(wait)

    def _wait(self, retry: _Retry, attempts: int) -> float:
        if retry.retry_after is not None:
            asked = retry_after_seconds(retry.retry_after, self._now())
            if asked is not None:
                if asked > MAX_RETRY_AFTER:
                    raise EndpointError(
                        f"{self.settings.subject}: {retry.cause} with header Retry-After: "
                        f"{shown_header(retry.retry_after)}, a wait of more than the "
                        f"{MAX_RETRY_AFTER:.0f} s GrooveSeek waits; not retried"
                    )
                return asked
        return backoff(attempts, self._rand)

    def _attempt(self, content: bytes, cap: int) -> bytes:
        s = self.settings
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if s.api_key:
            headers["Authorization"] = f"Bearer {s.api_key}"
        deadline = time.monotonic() + s.timeout_seconds
        try:
            with self._client().stream("POST", s.url, content=content, headers=headers) as response:
                return self._settle(response, cap, deadline)
        except httpx.TimeoutException:
            raise _Retry(f"no response within {s.timeout_seconds:g} s") from None
        except httpx.TransportError as exc:
            # The exception text can hold the URL; its type names the failure well enough (R5.19).
            raise _Retry(f"connection failed ({type(exc).__name__})") from None

    def _settle(self, response: httpx.Response, cap: int, deadline: float) -> bytes:
        """Decide by the status line; from here on no failure is a pre-status one (R5.14)."""
        s = self.settings
        status = response.status_code
        if 200 <= status < 300:
            return self._body(response, cap, deadline, status)
        snippet = self._snippet(response, deadline)
        log.debug("%s at %s answered HTTP %d: %s", s.what, s.host, status, snippet)
        if status in REJECTED_STATUSES:
            raise Rejected(status)
        if status == 429 or 500 <= status <= 599:
            raise _Retry(f"HTTP {status}", response.headers.get("retry-after"))
        if 300 <= status < 400:
            raise EndpointError(
                f"{s.subject} answered HTTP {status} (a redirect); redirects are not followed: write the "
                f"final URL in {s.url_key}"
            )
        if status in (401, 403):
            raise EndpointError(f"{s.subject} refused the request (HTTP {status}); check {s.key_hint}")
        if status == 404:
            raise EndpointError(
                f"{s.subject} returned HTTP 404; check that {s.url_key} is the full URL of the route and "
                "that the model name exists on the server"
            )
        raise EndpointError(f"{s.subject} returned HTTP {status}")

    def _body(self, response: httpx.Response, cap: int, deadline: float, status: int) -> bytes:
        s = self.settings
        parts: list[bytes] = []
        size = 0
        try:
            for piece in response.iter_bytes():
                size += len(piece)
                if size > cap:
                    raise EndpointError(
                        f"{s.subject} returned HTTP {status} with a body over the {cap}-byte limit for this "
                        "request"
                    )
                parts.append(piece)
                if time.monotonic() > deadline:
                    raise httpx.ReadTimeout("deadline")
        except httpx.TimeoutException:
            raise EndpointError(
                f"{s.subject} returned HTTP {status} but the body stalled (no end within "
                f"{s.timeout_seconds:g} s)"
            ) from None
        except httpx.HTTPError as exc:
            raise EndpointError(
                f"{s.subject} returned HTTP {status} but the body broke off ({type(exc).__name__})"
            ) from None
        return b"".join(parts)

    def _snippet(self, response: httpx.Response, deadline: float) -> str:
        """Up to 512 bytes of a failed response's body for the debug log; never waits past the deadline."""
        got = b""
        try:
            for piece in response.iter_bytes():
                got += piece
                if len(got) >= LOGGED_BODY_BYTES or time.monotonic() > deadline:
                    break
        except httpx.HTTPError:
            pass
        return ascii_snippet(got)
