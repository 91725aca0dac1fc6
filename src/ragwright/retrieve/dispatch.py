"""Native vs client-side hybrid search: which path serves a call.

A store that fuses dense and keyword search itself (:class:`~ragwright.stores.base.HybridSearch`) is
used only when the call asks for nothing native fusion would lose: hybrid search on with both arms,
no sparse arm, no ensemble options (even default-valued ones), ``min_score`` 0 and a single search
(no query transforms). Otherwise the arms run here and fuse client-side. A store whose capability
exists only natively (``hybrid_native_only``) refuses any call that would take the client path, with
an error naming the setting that blocked it — including ``use_hybrid_search`` left unset.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Literal

from ragwright.errors import RetrievalError
from ragwright.retrieve.options import RetrievalOptions
from ragwright.stores.base import HybridSearch

__all__ = ["HybridPath", "blocking_settings", "choose_path"]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class HybridPath:
    """The path a retrieval takes and why (``reason`` names the blocking setting on the client path)."""

    path: Literal["native", "client"]
    reason: str

    @property
    def native(self) -> bool:
        return self.path == "native"


def blocking_settings(options: RetrievalOptions, *, sparse_active: bool, transforms_active: bool = False) -> list[str]:
    """The settings of this call that native hybrid search cannot honour, most basic first."""
    blocked: list[str] = []
    if not options.use_hybrid_search:
        blocked.append("use_hybrid_search is not set")
    if not options.use_dense_search:
        blocked.append("use_dense_search=False")
    if options.use_keyword_search is False:
        blocked.append("use_keyword_search=False")
    if sparse_active:
        blocked.append("a sparse arm would run (a sparse encoder is configured; use_sparse_search=False skips it)")
    if options.ensemble is not None:
        blocked.append("ensemble options are supplied")
    if options.min_score != 0.0:
        blocked.append(f"min_score={options.min_score} (native fusion does not apply it)")
    if transforms_active:
        blocked.append("query transforms run several searches")
    return blocked


def choose_path(
    store: Any, options: RetrievalOptions, *, sparse_active: bool, transforms_active: bool = False
) -> HybridPath:
    """Decide the path for one call; raises :class:`RetrievalError` when a native-only store is blocked."""
    if not isinstance(store, HybridSearch):
        inner = getattr(store, "inner", None)
        if inner is not None and isinstance(inner, HybridSearch):
            log.warning(
                "native_hybrid_hidden_by_decorator: %s hides the native hybrid search of %s",
                type(store).__name__,
                type(inner).__name__,
            )
        return HybridPath("client", f"{type(store).__name__} has no native hybrid search")
    blocked = blocking_settings(options, sparse_active=sparse_active, transforms_active=transforms_active)
    if not blocked:
        log.debug("ensemble_native_hybrid: %s fuses natively", type(store).__name__)
        return HybridPath("native", f"{type(store).__name__} fuses dense and keyword search natively")
    if store.hybrid_native_only:
        raise RetrievalError(
            f"{type(store).__name__} serves hybrid search only natively, but {blocked[0]}, which keeps the "
            "client-side path; change that setting (client-side fusion would silently lose the store's "
            "native capability)"
        )
    return HybridPath("client", blocked[0])
