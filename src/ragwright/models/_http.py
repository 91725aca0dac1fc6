"""A small JSON-over-HTTP client for remote model providers (stdlib only: no new dependency).

Shared by the OpenAI-compatible chat and embedding clients and the hosted reranker. It retries
429, 5xx and connection failures with exponential backoff (honouring ``Retry-After``), never retries
other 4xx answers, and streams server-sent events (``data: …`` lines, ``[DONE]`` ends the stream).
Failures raise the error class the caller chooses, with the status and the start of the body.
"""

from __future__ import annotations

import json
import logging
import os
import random
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from ragwright.errors import ConfigError, RagwrightError

log = logging.getLogger(__name__)

RETRY_STATUSES = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
_MAX_RETRY_AFTER = 30.0


class HttpStatusError(RagwrightError):
    """A non-retryable (or finally failed) HTTP answer; ``status`` and ``body`` kept for callers."""

    def __init__(self, message: str, status: int, body: str) -> None:
        super().__init__(message)
        self.status, self.body = status, body


def first_env(*names: str) -> str | None:
    """The value of the first set, non-empty environment variable among *names*."""
    for name in names:
        value = os.environ.get(name, "").strip()
        if value:
            return value
    return None


def normalise_base_url(url: str, field_name: str = "base_url") -> str:
    url = url.strip().rstrip("/")
    if not url.startswith(("http://", "https://")):
        raise ConfigError.invalid(field_name, url, "an http:// or https:// URL such as http://localhost:11434/v1")
    return url


@dataclass(frozen=True)
class HttpClient:
    """POST JSON to ``base_url + path`` with retries. ``error`` is the class raised on failure."""

    base_url: str
    api_key: str | None = None
    timeout: float = 60.0
    max_retries: int = 3
    backoff: float = 0.5
    max_backoff: float = 8.0
    headers: Mapping[str, str] = field(default_factory=dict)
    error: type[RagwrightError] = RagwrightError
    what: str = "the model server"

    def __post_init__(self) -> None:
        if self.timeout <= 0:
            raise ConfigError.invalid("timeout", self.timeout, "a positive number of seconds")
        if self.max_retries < 0:
            raise ConfigError.invalid("max_retries", self.max_retries, "0 or more")
        if self.backoff < 0:
            raise ConfigError.invalid("backoff", self.backoff, "0 or more seconds")

    def _request(self, path: str, payload: Mapping[str, Any], stream: bool) -> urllib.request.Request:
        headers = {"Content-Type": "application/json", "Accept": "text/event-stream" if stream else "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        headers.update(self.headers)
        data = json.dumps(payload).encode("utf-8")
        return urllib.request.Request(self.base_url + path, data=data, headers=headers, method="POST")

    def _delay(self, attempt: int, retry_after: str | None) -> float:
        if retry_after:
            try:
                return min(max(float(retry_after), 0.0), _MAX_RETRY_AFTER)
            except ValueError:
                pass
        base = min(self.backoff * (2**attempt), self.max_backoff)
        return float(base * (0.75 + 0.5 * random.random()))  # jitter: concurrent clients do not retry in step

    def _open(self, path: str, payload: Mapping[str, Any], stream: bool) -> Any:
        """An open response (status 2xx), after retries; raises ``self.error`` otherwise."""
        url = self.base_url + path
        for attempt in range(self.max_retries + 1):
            last = attempt == self.max_retries
            try:
                return urllib.request.urlopen(self._request(path, payload, stream), timeout=self.timeout)
            except urllib.error.HTTPError as exc:
                body = _read_body(exc)
                status = exc.code
                if status in RETRY_STATUSES and not last:
                    delay = self._delay(attempt, exc.headers.get("Retry-After") if exc.headers else None)
                    log.warning("http_retry: %s answered %d; retry %d in %.2f s", url, status, attempt + 1, delay)
                    time.sleep(delay)
                    continue
                hint = " (check the API key: RAGWRIGHT_LLM_API_KEY or OPENAI_API_KEY)" if status in (401, 403) else ""
                tries = f" after {attempt + 1} attempts" if attempt else ""
                raise self.error(f"{self.what} at {url} answered HTTP {status}{tries}{hint}: {body[:300]}") from (
                    HttpStatusError(body[:300], status, body)
                )
            except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
                if not last:
                    delay = self._delay(attempt, None)
                    log.warning("http_retry: %s failed (%s); retry %d in %.2f s", url, exc, attempt + 1, delay)
                    time.sleep(delay)
                    continue
                raise self.error(
                    f"cannot reach {self.what} at {url} after {attempt + 1} attempts: {exc}; "
                    "check the base URL and that the server is running"
                ) from exc
        raise AssertionError("unreachable")  # pragma: no cover

    def post_json(self, path: str, payload: Mapping[str, Any]) -> Any:
        """The decoded JSON answer of a POST."""
        with self._open(path, payload, stream=False) as response:
            try:
                raw = response.read()
            except (OSError, TimeoutError) as exc:
                raise self.error(f"{self.what} at {self.base_url + path}: reading the answer failed: {exc}") from exc
        try:
            return json.loads(raw)
        except ValueError as exc:
            raise self.error(f"{self.what} at {self.base_url + path} did not answer JSON: {raw[:200]!r}") from exc

    def post_events(self, path: str, payload: Mapping[str, Any]) -> Iterator[Any]:
        """The decoded JSON ``data`` payloads of a server-sent-event stream, until ``[DONE]`` or EOF.

        Retries apply to opening the stream only; a failure mid-stream raises ``self.error``.
        """
        response = self._open(path, payload, stream=True)
        with response:
            data: list[str] = []
            try:
                for raw_line in response:
                    line = raw_line.decode("utf-8").rstrip("\r\n")
                    if not line:
                        if data:
                            joined, data = "\n".join(data), []
                            if joined.strip() == "[DONE]":
                                return
                            yield _decode_event(joined, self.error)
                        continue
                    if line.startswith(":"):
                        continue  # comment / keep-alive
                    name, _, value = line.partition(":")
                    if name == "data":
                        data.append(value[1:] if value.startswith(" ") else value)
            except (OSError, TimeoutError) as exc:
                raise self.error(f"{self.what} stream at {self.base_url + path} broke: {exc}") from exc
            if data and "\n".join(data).strip() != "[DONE]":
                yield _decode_event("\n".join(data), self.error)


def _decode_event(text: str, error: type[RagwrightError]) -> Any:
    try:
        return json.loads(text)
    except ValueError as exc:
        raise error(f"the server sent an event that is not JSON: {text[:200]!r}") from exc


def _read_body(exc: urllib.error.HTTPError) -> str:
    try:
        return exc.read().decode("utf-8", "replace")
    except Exception:  # the body is only for the message
        return ""
