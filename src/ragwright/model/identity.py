"""Who is asking: tenant and groups, and the security filter that follows from them.

Security filters come from the caller's identity, never from a request body or a model. A chunk is
visible to an identity when the tenants are equal and the chunk's ACL shares a group with the identity
(``"*"`` in a chunk's ACL means every member of the tenant). A chunk with no ACL is visible to nobody.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Final

from ragwright.errors import ConfigError

PUBLIC: Final = "*"
DEFAULT_TENANT: Final = "default"


def _clean_groups(groups: Iterable[str]) -> tuple[str, ...]:
    out = sorted({g.strip() for g in groups if g and g.strip()})
    for g in out:
        if not isinstance(g, str):  # pragma: no cover - guarded by typing
            raise ConfigError(f"group names must be strings, got {g!r}", field="groups", value=g)
    return tuple(out)


@dataclass(frozen=True, slots=True)
class Identity:
    """An authenticated caller. ``groups`` are the ACL groups they belong to."""

    tenant: str = DEFAULT_TENANT
    groups: tuple[str, ...] = field(default=())
    user: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.tenant, str) or not self.tenant.strip():
            raise ConfigError("Identity.tenant must be a non-empty string", field="tenant", value=self.tenant)
        object.__setattr__(self, "groups", _clean_groups(self.groups))

    @property
    def visible_groups(self) -> tuple[str, ...]:
        """The ACL entries this identity can see: its groups plus the public marker."""
        return tuple(sorted({*self.groups, PUBLIC}))

    def acl_signature(self) -> str:
        """A stable digest of what this identity may see, for cache keys."""
        text = self.tenant + "\x1f" + "\x1e".join(self.visible_groups)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:24]

    def can_see(self, tenant: str, acl: Sequence[str]) -> bool:
        """The reference security check every store applies inside its search."""
        if tenant != self.tenant or not acl:
            return False
        visible = set(self.visible_groups)
        return any(g in visible for g in acl)


def normalize_acl(acl: Iterable[str] | None) -> tuple[str, ...]:
    """An ACL as stored: sorted unique group names. ``None`` means public within the tenant."""
    if acl is None:
        return (PUBLIC,)
    return _clean_groups(acl)
