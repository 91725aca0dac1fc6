"""API-key authentication: a request's key → the :class:`Identity` that sets its security filter.

The key comes from ``Authorization: Bearer KEY`` or ``X-API-Key: KEY``; only its SHA-256 is compared
with the configured hashes. When no keys are configured every caller is the anonymous identity (the
default tenant, no groups: public content only). Nothing in a request body can change the identity.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping
from dataclasses import dataclass

from ragwright.model.identity import Identity
from ragwright.server.config import ApiKey, ServerConfig


class AuthError(Exception):
    """Authentication failed: 401 (no key given) or 403 (a key that is not configured, or not allowed)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass(frozen=True)
class Caller:
    """Who is calling, as far as the server knows."""

    identity: Identity
    read_only: bool = False
    anonymous: bool = False


ANONYMOUS = Caller(Identity(), read_only=False, anonymous=True)


class KeyRing:
    """The configured keys, looked up by hash."""

    def __init__(self, config: ServerConfig) -> None:
        self._by_hash: dict[str, ApiKey] = {k.hash: k for k in config.keys}

    @property
    def required(self) -> bool:
        return bool(self._by_hash)

    def authenticate(self, headers: Mapping[str, str]) -> Caller:
        """The caller for these request headers (lower-case names), or :class:`AuthError`."""
        if not self.required:
            return ANONYMOUS
        key = _presented_key(headers)
        if key is None:
            raise AuthError(401, "an API key is required: send 'Authorization: Bearer KEY' or 'X-API-Key: KEY'")
        digest = hashlib.sha256(key.encode("utf-8")).hexdigest()
        match = None
        for stored, entry in self._by_hash.items():  # constant-time compare over every key
            if hmac.compare_digest(stored, digest):
                match = entry
        if match is None:
            raise AuthError(403, "this API key is not valid for this server")
        return Caller(match.identity, read_only=match.read_only)


def _presented_key(headers: Mapping[str, str]) -> str | None:
    auth = headers.get("authorization", "")
    if auth:
        scheme, _, value = auth.partition(" ")
        if scheme.lower() == "bearer" and value.strip():
            return value.strip()
    api_key = headers.get("x-api-key", "").strip()
    return api_key or None


def require_writer(caller: Caller) -> None:
    """Refuse changes (ingest, delete) from a read-only key."""
    if caller.read_only:
        raise AuthError(403, "this API key is read-only: it may search and ask, not ingest or delete")
