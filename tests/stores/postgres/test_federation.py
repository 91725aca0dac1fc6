"""Federation across backends: a SQLite store and a PostgreSQL store in one query (issue 25 item 3).

Both stores hold multi-tenant documents (the PostgreSQL one a tenant's secret); the federated search runs
each store's own filtered search as the caller, merges by weighted RRF, and degrades when the PostgreSQL
database goes away mid-session (the SQLite results still come back, the failure is reported by name).
"""

from pathlib import Path

import pytest

from ragwright.errors import RetrievalError
from ragwright.model.identity import Identity
from ragwright.rag import Rag
from ragwright.rag_federation import federate
from ragwright.sources import BytesSource
from ragwright.stores.postgres import PostgresStore
from ragwright.stores.sqlite import SqliteStore
from ragwright.testing.doubles import HashingEmbedder
from tests.stores.postgres.conftest import PgServer

ACME, GLOBEX, FINANCE = Identity("acme"), Identity("globex"), Identity("acme", ("finance",))


def fill(rag: Rag, prefix: str) -> None:
    rag.ingest(
        BytesSource({f"{prefix}-policy.md": f"# Policy\n\nThe {prefix} refund policy is thirty days.".encode()}),
        tenant="acme",
    )
    rag.ingest(
        BytesSource({f"{prefix}-budget.md": f"# Budget\n\nThe {prefix} refund budget is secret.".encode()}),
        tenant="acme",
        acl=["finance"],
    )
    rag.ingest(
        BytesSource({f"{prefix}-merger.md": f"# Merger\n\n{prefix} refunds freeze for the merger.".encode()}),
        tenant="globex",
    )


def test_sqlite_and_postgres_in_one_federated_search(tmp_path: Path, pg_dsn: str) -> None:
    with Rag(PostgresStore(pg_dsn), HashingEmbedder()) as pg:
        fill(pg, "pg")
    with Rag(SqliteStore(tmp_path / "s.db"), HashingEmbedder()) as main:
        fill(main, "lite")
        with federate(main, stores={"pg": pg_dsn}, weights={"pg": 0.8}) as fed:
            found = fed.search("refund policy budget merger", identity=ACME, top_k=10)
            assert {(r.source, r.document_id) for r in found} == {("live", "lite-policy.md"), ("pg", "pg-policy.md")}
            assert found.searched == ("live", "pg") and not found.failures
            finance = {r.document_id for r in fed.search("refund budget", identity=FINANCE, top_k=10)}
            assert {"lite-budget.md", "pg-budget.md"} <= finance and not any("merger" in d for d in finance)
            globex = {(r.source, r.document_id) for r in fed.search("refund", identity=GLOBEX, top_k=10)}
            assert globex == {("live", "lite-merger.md"), ("pg", "pg-merger.md")}
            answer = fed.ask("what is the refund policy?", identity=ACME)
            assert {s.source for s in answer.sources} <= {"live", "pg"} and not answer.failures


def test_a_postgres_store_that_goes_away_degrades(tmp_path: Path, pg_server: PgServer) -> None:
    name = pg_server.create_database()
    dsn = pg_server.dsn(name)
    try:
        with Rag(PostgresStore(dsn), HashingEmbedder()) as pg:
            fill(pg, "pg")
        with Rag(SqliteStore(tmp_path / "s.db"), HashingEmbedder()) as main:
            fill(main, "lite")
            fed = federate(main, stores={"pg": dsn})
            assert {r.source for r in fed.search("refund policy", identity=ACME)} == {"live", "pg"}
            pg_server.drop_database(name)  # the server side goes away (its connections are terminated)
            found = fed.search("refund policy", identity=ACME)
            assert {r.document_id for r in found} == {"lite-policy.md"}
            assert [f.source for f in found.failures] == ["pg"]
            with pytest.raises(RetrievalError, match="every federated source failed: pg"):
                federate({"pg": fed.sources["pg"]}).search("refund", identity=ACME)
            fed.close()
    finally:
        pg_server.drop_database(name)
