"""Blue/green reindex: build a new collection beside the live one, check it, then switch the alias.

1. A new physical collection is created beside the live one (:class:`~ragwright.stores.base.Collections`:
   in the same store file for SQLite, a schema of its own in the same database for PostgreSQL, a new
   store in the catalog for the memory store) and every live document is rebuilt into it with the new
   embedder and/or chunker, from the staged raw bytes and the parsed-document cache (no source is read,
   no OCR runs again).
2. Optionally the evaluation harness runs on it (:class:`EvalGate`: a BEIR dataset and a floor on
   nDCG@10 and/or the largest drop allowed against the live collection).
3. Documents changed in the live collection meanwhile are caught up, and the ``live`` alias is moved
   in one transaction that first checks nothing changed since the last catch-up.

Until the switch, every query is served by the live collection; after it, by the new one — a store
object re-reads the alias when the file changes (SQLite), or before each write and at most every
``follow_alias_s`` before reads (PostgreSQL); :func:`reindex` returns a store object over the
new live collection, which the ``Rag`` that ran it adopts together with the new embedder and chunker.
A failed build or an evaluation below the gate leaves the alias where it was, drops the new
collection, and says why; a build killed outright (``SIGKILL``, a crash) is dropped the next time the
store is opened or a reindex starts. The previous collection stays until
:meth:`Rag.drop_collection` (``ragwright reindex --drop-old``).
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, cast

from ragwright.errors import ConfigError, StoreError
from ragwright.ingest.pipeline import IngestPipeline
from ragwright.ingest.rebuild import Snapshot, changed_ids, rebuild, snapshot
from ragwright.ingest.report import IngestReport
from ragwright.model.identity import Identity
from ragwright.stores.base import Collections, CollectionStore, Store

if TYPE_CHECKING:
    from ragwright.retrieve.options import RetrievalOptions  # annotations only: ingest sits below retrieve

log = logging.getLogger(__name__)

#: Catch-up passes before giving up on a live collection that keeps changing.
MAX_PASSES = 6


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


class Searcher(Protocol):
    """What the evaluation gate runs queries through (the evaluation runner's view of a Rag)."""

    def search(self, query: str, options: RetrievalOptions, *, identity: Identity | None = None) -> Any: ...


@dataclass(frozen=True)
class ReindexOutcome:
    """A reindex's report and, when it switched, a store object over the new live collection (the
    caller serves from it from now on; the previous store object stays valid until its collection is
    dropped)."""

    report: ReindexReport
    store: Store | None


def reindex(
    live: Store,
    pipeline_for: Callable[[Store], IngestPipeline],
    *,
    evaluate: EvalGate | None = None,
    searcher_for: Callable[[Store], Searcher] | None = None,
    live_searcher: Searcher | None = None,
) -> ReindexOutcome:
    """Rebuild *live*'s collection beside it, then switch the alias (see the module docstring).

    *live* must offer :class:`~ragwright.stores.base.Collections`. *pipeline_for* builds the ingestion
    pipeline (new embedder and/or chunker) writing into a store; with *evaluate*, *searcher_for* gives a
    searcher over the new collection and *live_searcher* one over the live collection (for ``max_drop``).
    """
    started = time.perf_counter()
    if evaluate is not None and not isinstance(evaluate, EvalGate):
        raise ConfigError.invalid("evaluate", evaluate, "an EvalGate or None")
    if evaluate is not None and searcher_for is None:
        raise ConfigError("an evaluation gate needs searcher_for: a searcher over the new collection")
    if not isinstance(live, Collections):
        raise ConfigError(
            f"{type(live).__name__} does not support reindex: it has no physical collections "
            "(ragwright.stores.base.Collections); use a SqliteStore, a PostgresStore or a MemoryStore"
        )
    return _reindex(cast(CollectionStore, live), pipeline_for, evaluate, searcher_for, live_searcher, started)


def _reindex(
    live: CollectionStore,
    pipeline_for: Callable[[Store], IngestPipeline],
    evaluate: EvalGate | None,
    searcher_for: Callable[[Store], Searcher] | None,
    live_searcher: Searcher | None,
    started: float,
) -> ReindexOutcome:
    live.drop_abandoned_builds()  # what an earlier reindex, killed mid-build, left behind
    name = live.create_collection(note="reindex", building=True)
    try:
        target = live.open_collection(name)
    except BaseException:
        live.drop_collection(name)
        raise
    pipeline = pipeline_for(target)
    report = ReindexReport(
        previous=live.current_collection,
        collection=name,
        embedding_model=pipeline.embedder.name,
        chunker_version=pipeline.chunker_version,
    )
    adopted: Store | None = None
    try:
        gate = None if evaluate is None or searcher_for is None else _Gate(evaluate, searcher_for, live_searcher)
        _build_and_switch(live, target, pipeline, gate, report)
        target.close()
        adopted = live.open_live()
    except (_Rejected, StoreError) as exc:
        report.reason = str(exc)
        log.warning("reindex_rejected: %s", exc)
        _discard(live, target, name)
    except BaseException:
        _discard(live, target, name)
        raise
    report.seconds = time.perf_counter() - started
    return ReindexOutcome(report, adopted)


@dataclass(frozen=True)
class _Gate:
    gate: EvalGate
    searcher_for: Callable[[Store], Searcher]
    live_searcher: Searcher | None


def _build_and_switch(
    live: CollectionStore, target: Store, pipeline: IngestPipeline, gate: _Gate | None, report: ReindexReport
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
            report.evaluation = _evaluate(gate, target)
            evaluated = True
            if report.evaluation["rejected"]:
                raise _Rejected(str(report.evaluation["rejected"]))
        current = snapshot(live)
        pending, state = changed_ids(state, current), current
        if pending:
            continue
        if _switch(live, report, state):
            report.switched = True
            return
        current = snapshot(live)
        pending, state = changed_ids(state, current), current
    raise _Rejected(f"the live collection kept changing during {MAX_PASSES} catch-up passes; try again later")


def _switch(live: CollectionStore, report: ReindexReport, state: Snapshot) -> bool:
    """Move the alias if the live registry still equals *state*; False when it changed meanwhile."""
    unchanged = "live collection changed during the switch"
    assert report.collection is not None
    try:
        live.switch_alias(report.collection, check=lambda: None if snapshot(live) == state else unchanged)
    except StoreError as exc:
        if str(exc) == unchanged:
            return False
        raise
    return True


def _discard(live: CollectionStore, target: Store, name: str) -> None:
    try:
        target.close()
        live.drop_collection(name)
    except StoreError as exc:  # already dropped, or the alias points at it (a switch that committed)
        log.warning("reindex_cleanup_failed: %s: %s", name, exc)


# -- evaluation gate ----------------------------------------------------------------------------------
def _evaluate(gate: _Gate, target: Store) -> dict[str, Any]:
    from ragwright.eval.configs import parse_config
    from ragwright.eval.datasets import load_beir
    from ragwright.eval.runner import run_config

    spec = gate.gate
    data = load_beir(spec.dataset, spec.split)
    config = parse_config(spec.config)
    new = _ndcg(run_config(gate.searcher_for(target), data, config, limit=spec.limit))
    out: dict[str, Any] = {"dataset": str(spec.dataset), "config": config.name, "ndcg@10": new, "rejected": None}
    if spec.max_drop is not None:
        if gate.live_searcher is None:
            raise ConfigError(
                "an evaluation gate with max_drop needs live_searcher: a searcher over the live collection"
            )
        old = _ndcg(run_config(gate.live_searcher, data, config, limit=spec.limit))
        out["live_ndcg@10"] = old
        if new < old - spec.max_drop:
            out["rejected"] = (
                f"evaluation: nDCG@10 {new:.4f} is more than {spec.max_drop} below the live collection's "
                f"{old:.4f}; the live collection is kept"
            )
    if spec.min_ndcg is not None and new < spec.min_ndcg and out["rejected"] is None:
        out["rejected"] = (
            f"evaluation: nDCG@10 {new:.4f} is below the minimum {spec.min_ndcg}; the live collection is kept"
        )
    return out


def _ndcg(run: Any) -> float:
    values = list(run.per_query["ndcg@10"].values())
    return round(math.fsum(values) / len(values), 4) if values else 0.0
