"""Blue/green reindex: build a new collection beside the live one, check it, then switch the alias.

1. A new physical collection is created in the same store file (a new :class:`MemoryStore` for the
   memory store) and every live document is rebuilt into it with the new embedder and/or chunker,
   from the staged raw bytes and the parsed-document cache (no source is read, no OCR runs again).
2. Optionally the evaluation harness runs on it (:class:`EvalGate`: a BEIR dataset and a floor on
   nDCG@10 and/or the largest drop allowed against the live collection).
3. Documents changed in the live collection meanwhile are caught up, and the ``live`` alias is moved
   in one transaction that first checks nothing changed since the last catch-up.

Until the switch, every query is served by the live collection; after it, by the new one — a store
object re-reads the alias when the file changes, and the ``Rag`` that ran the reindex swaps its
embedder, chunker and store object at once. A failed build or an evaluation below the gate leaves
the alias where it was, drops the new collection, and says why; a build killed outright (``SIGKILL``,
a crash) is dropped the next time the store file is opened or a reindex starts. The previous collection stays until
:meth:`Rag.drop_collection` (``ragwright reindex --drop-old``).
"""

from __future__ import annotations

import copy
import itertools
import logging
import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragwright._sync import run_sync
from ragwright.chunk import make_chunker
from ragwright.errors import ConfigError, StoreError
from ragwright.ingest.pipeline import IngestPipeline
from ragwright.ingest.rebuild import Snapshot, changed_ids, rebuild, snapshot
from ragwright.ingest.report import IngestReport
from ragwright.model.identity import Identity
from ragwright.models.embedders.base import Embedder
from ragwright.options import ChunkingOptions, RetrievalOptions
from ragwright.stores.base import Store

log = logging.getLogger(__name__)

#: Catch-up passes before giving up on a live collection that keeps changing.
MAX_PASSES = 6
_MEMORY_GENERATIONS = itertools.count(2)


@dataclass(frozen=True)
class EvalGate:
    """Evaluate the new collection on a BEIR dataset before switching.

    ``min_ndcg``: the new collection's nDCG@10 must reach it. ``max_drop``: it may be at most this much
    below the live collection's (which is then evaluated too). ``config`` is an ``eval --config`` name.
    """

    dataset: Path
    min_ndcg: float | None = None
    max_drop: float | None = None
    config: str = "hybrid"
    split: str = "test"
    limit: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "dataset", Path(self.dataset))
        for name in ("min_ndcg", "max_drop"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, int | float) or not 0.0 <= float(value) <= 1.0):
                raise ConfigError.invalid(name, value, "a number between 0 and 1, or None")
        if self.limit is not None and (not isinstance(self.limit, int) or self.limit < 1):
            raise ConfigError.invalid("limit", self.limit, "a positive number of queries, or None")


@dataclass
class ReindexReport:
    """What a reindex did. ``to_dict`` is the ``ragwright reindex --json`` contract."""

    switched: bool = False
    reason: str | None = None
    previous: str | None = None
    collection: str | None = None
    embedding_model: str = ""
    chunker_version: str = ""
    build: IngestReport = field(default_factory=IngestReport)
    passes: int = 0
    evaluation: dict[str, Any] | None = None
    dropped: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "switched": self.switched,
            "reason": self.reason,
            "previous": self.previous,
            "collection": self.collection,
            "embedding_model": self.embedding_model,
            "chunker_version": self.chunker_version,
            "build": self.build.to_dict(),
            "passes": self.passes,
            "evaluation": self.evaluation,
            "dropped": self.dropped,
            "seconds": round(self.seconds, 3),
        }


class _Rejected(Exception):
    """The reindex stops before the switch; the message is the report's reason."""


def reindex(
    rag: Any,
    *,
    embedder: Embedder | None = None,
    chunking: ChunkingOptions | None = None,
    evaluate: EvalGate | None = None,
    drop_old: bool = False,
) -> ReindexReport:
    """Rebuild *rag*'s live collection with a new embedder and/or chunking, then switch (see module)."""
    started = time.perf_counter()
    if evaluate is not None and not isinstance(evaluate, EvalGate):
        raise ConfigError.invalid("evaluate", evaluate, "an EvalGate or None")
    live: Store = rag.store
    new_embedder = embedder or rag.embedder
    options = chunking or getattr(rag.chunker, "options", None)
    chunker = (
        make_chunker(new_embedder, options, llm=getattr(rag, "llm", None)) if (embedder or chunking) else rag.chunker
    )
    target, name = _new_collection(live)
    pipeline = IngestPipeline(target, new_embedder, chunker, rag.ingestion.options, rag.ingestion.parents)
    report = ReindexReport(
        previous=_physical_name(live),
        collection=name,
        embedding_model=new_embedder.name,
        chunker_version=pipeline.chunker_version,
    )
    try:
        _build_and_switch(rag, live, target, pipeline, evaluate, report)
    except (_Rejected, StoreError) as exc:
        report.reason = str(exc)
        log.warning("reindex_rejected: %s", exc)
        _discard(live, target, name)
    except BaseException:
        _discard(live, target, name)
        raise
    else:
        _adopt(rag, live, target, new_embedder, chunker)
        if drop_old and report.previous is not None:
            report.dropped = drop_collection(rag, report.previous)
    report.seconds = time.perf_counter() - started
    return report


def _build_and_switch(
    rag: Any, live: Store, target: Store, pipeline: IngestPipeline, gate: EvalGate | None, report: ReindexReport
) -> None:
    state = snapshot(live)
    pending = set(state)
    evaluated = gate is None
    for _ in range(MAX_PASSES):
        failed = rebuild(live, target, pipeline, state, pending, report.build)
        report.passes += 1
        if failed:
            shown = ", ".join(failed[:5]) + (" …" if len(failed) > 5 else "")
            raise _Rejected(f"{len(failed)} documents could not be rebuilt ({shown}); the live collection is kept")
        if not evaluated and gate is not None:
            report.evaluation = _evaluate(rag, target, pipeline.embedder, gate)
            evaluated = True
            if report.evaluation["rejected"]:
                raise _Rejected(str(report.evaluation["rejected"]))
        current = snapshot(live)
        pending, state = changed_ids(state, current), current
        if pending:
            continue
        if _switch(live, target, report, state):
            report.switched = True
            return
        current = snapshot(live)
        pending, state = changed_ids(state, current), current
    raise _Rejected(f"the live collection kept changing during {MAX_PASSES} catch-up passes; try again later")


def _switch(live: Store, target: Store, report: ReindexReport, state: Snapshot) -> bool:
    """Move the alias if the live registry still equals *state*; False when it changed meanwhile."""
    unchanged = "live collection changed during the switch"
    if hasattr(live, "switch_alias"):
        try:
            live.switch_alias(report.collection, check=lambda: None if snapshot(live) == state else unchanged)
        except StoreError as exc:
            if str(exc) == unchanged:
                return False
            raise
        target.close()
        return True
    lock = getattr(live, "_lock", None)  # the memory store: no write may land between check and swap
    if lock is None:
        return snapshot(live) == state
    with lock:
        return snapshot(live) == state


def _new_collection(live: Store) -> tuple[Store, str]:
    if hasattr(live, "create_collection") and hasattr(live, "open_collection") and hasattr(live, "drop_collection"):
        dropped = getattr(live, "drop_abandoned_builds", None)
        if callable(dropped):
            dropped()  # what an earlier reindex, killed mid-build, left behind
        name = live.create_collection(note="reindex", building=True)
        try:
            return live.open_collection(name), name
        except BaseException:
            live.drop_collection(name)
            raise
    from ragwright.stores.memory import MemoryStore

    if isinstance(live, MemoryStore):
        store = MemoryStore(keyword_analyzer=live.keyword_analyzer)
        name = f"memory-{next(_MEMORY_GENERATIONS)}"
        store._reindex_name = name  # type: ignore[attr-defined]
        return store, name
    raise ConfigError(f"{type(live).__name__} does not support reindex; use a SqliteStore or a MemoryStore")


def _physical_name(store: Store) -> str | None:
    name = getattr(store, "current_collection", None)
    return name if isinstance(name, str) else getattr(store, "_reindex_name", "memory")


def _discard(live: Store, target: Store, name: str) -> None:
    if hasattr(live, "drop_collection"):
        try:
            target.close()
            live.drop_collection(name)
        except StoreError as exc:  # already dropped, or the alias points at it (a switch that committed)
            log.warning("reindex_cleanup_failed: %s: %s", name, exc)


def _adopt(rag: Any, live: Store, target: Store, embedder: Embedder, chunker: Any) -> None:
    """Swap the Rag's store object, embedder, chunker and pipelines; queries pick the new retriever."""
    if hasattr(live, "switch_alias"):
        from ragwright.stores.sqlite import SqliteStore

        store: Any = SqliteStore(live.path, keyword_analyzer=live.keyword_analyzer)  # type: ignore[attr-defined]
    else:
        store = target
    old_ingestion = rag.ingestion
    ingestion = IngestPipeline(store, embedder, chunker, old_ingestion.options, old_ingestion.parents)
    ingestion.hooks = list(getattr(old_ingestion, "hooks", []))
    ingestion.sparse_encoder = getattr(old_ingestion, "sparse_encoder", None)
    retriever = copy.copy(rag.retriever)
    retriever.store, retriever.embedder = store, embedder
    store.bind_embedder(embedder.name, embedder.dimension)
    retired = rag.__dict__.setdefault("_retired_stores", {})
    retired[_physical_name(live) or "previous"] = live
    rag.ingestion, rag.chunker, rag.embedder, rag.store = ingestion, chunker, embedder, store
    rag.retriever = retriever  # a query started before this runs on the old pair
    if hasattr(rag, "_wire"):  # strategies, caches and answerers over the new store and embedder
        rag._wire()


def drop_collection(rag: Any, name: str) -> list[str]:
    """Drop a collection that is not live (and close the store objects retired with it)."""
    retired: dict[str, Any] = rag.__dict__.get("_retired_stores", {})
    old = retired.pop(name, None)
    if hasattr(rag.store, "drop_collection"):
        if old is not None:
            old.close()
        rag.store.drop_collection(name)
        return [name]
    if old is None:
        raise ConfigError(f"no collection {name!r} to drop (see Rag.collections())")
    return [name]


def collections(rag: Any) -> list[dict[str, Any]]:
    """The physical collections of the Rag's store (the live one first for the memory store)."""
    if hasattr(rag.store, "collections"):
        return [c.to_dict() for c in rag.store.collections()]
    names = [_physical_name(rag.store), *rag.__dict__.get("_retired_stores", {})]
    return [{"name": n, "live": i == 0} for i, n in enumerate(names)]


# -- evaluation gate ----------------------------------------------------------------------------------
class _Searcher:
    """What the evaluation runner needs of a Rag: ``search`` over one retriever."""

    def __init__(self, retriever: Any, identity: Identity) -> None:
        self.retriever, self.identity = retriever, identity

    def search(self, query: str, options: RetrievalOptions, *, identity: Identity | None = None) -> Any:
        return run_sync(self.retriever.retrieve(query, options, identity or self.identity))


def _evaluate(rag: Any, target: Store, embedder: Embedder, gate: EvalGate) -> dict[str, Any]:
    from ragwright.eval.configs import parse_config
    from ragwright.eval.datasets import load_beir
    from ragwright.eval.runner import run_config

    data = load_beir(gate.dataset, gate.split)
    config = parse_config(gate.config)
    retriever = copy.copy(rag.retriever)
    retriever.store, retriever.embedder = target, embedder
    new = _ndcg(run_config(_Searcher(retriever, rag.identity), data, config, limit=gate.limit))
    out: dict[str, Any] = {"dataset": str(gate.dataset), "config": config.name, "ndcg@10": new, "rejected": None}
    if gate.max_drop is not None:
        old = _ndcg(run_config(_Searcher(rag.retriever, rag.identity), data, config, limit=gate.limit))
        out["live_ndcg@10"] = old
        if new < old - gate.max_drop:
            out["rejected"] = (
                f"evaluation: nDCG@10 {new:.4f} is more than {gate.max_drop} below the live collection's "
                f"{old:.4f}; the live collection is kept"
            )
    if gate.min_ndcg is not None and new < gate.min_ndcg and out["rejected"] is None:
        out["rejected"] = (
            f"evaluation: nDCG@10 {new:.4f} is below the minimum {gate.min_ndcg}; the live collection is kept"
        )
    return out


def _ndcg(run: Any) -> float:
    values = list(run.per_query["ndcg@10"].values())
    return round(math.fsum(values) / len(values), 4) if values else 0.0
