"""The graph tables in PostgreSQL: what SQLite's single writer gives for free, the advisory lock gives —
two processes replacing the same document at once leave exactly one copy of its rows."""

import threading

import pytest

from ragwright.graph.model import Extraction, Mention
from ragwright.graph.tables import open_graph_tables
from ragwright.model.identity import Identity
from ragwright.stores.postgres import PostgresStore
from ragwright.stores.side_tables import side_dialect

pytestmark = pytest.mark.integration
TEXT = "Ada Lovelace met Charles Babbage in London."


def extraction(chunk: str) -> Extraction:
    return Extraction(chunk, tuple(Mention.of(chunk, TEXT, a, b, "PERSON") for a, b in ((0, 12), (17, 32), (36, 42))))


def test_concurrent_replacements_of_one_document_leave_one_copy(pg_dsn: str) -> None:
    stores = [PostgresStore(pg_dsn), PostgresStore(pg_dsn)]  # two pools: as two processes would
    tables = [open_graph_tables(s) for s in stores]
    seen: list[int] = []  # the document's mention count in every committed state a writer reads back

    def writer(i: int) -> None:
        for n in range(40):
            chunks = [f"doc#{i}-{n}-{c}" for c in range(3)]
            tables[i].replace_document("doc", "acme", ["*"], "rules", [("doc", extraction(c)) for c in chunks])
            seen.append(len(tables[i]._rows("SELECT 1 FROM graph_mentions WHERE document_id = 'doc'")))

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    try:
        assert set(seen) == {9}, sorted(set(seen))  # one writer's 3 chunks x 3 mentions, never both writers'
        mentions = tables[0]._rows("SELECT chunk_id FROM graph_mentions WHERE document_id = 'doc'")
        assert len({str(c).rsplit("-", 1)[0] for (c,) in mentions}) == 1
    finally:
        for s in stores:
            s.close()


def test_rows_are_read_under_the_postgres_security_predicate(pg_dsn: str) -> None:
    store = PostgresStore(pg_dsn)
    try:
        tables = open_graph_tables(store)
        tables.replace_document("a", "acme", ["hr"], "rules", [("a", extraction("a#0"))])
        tables.replace_document("b", "acme", [], "rules", [("b", extraction("b#0"))])  # visible to nobody
        tables.replace_document("c", "globex", ["hr"], "rules", [("c", extraction("c#0"))])

        def seen(who: Identity) -> set[str]:
            params: list[object] = []
            predicate = side_dialect(store).security(who, "tenant", "acl", params)
            return {str(r[1]) for r in tables.mentions((predicate, params), ["ada lovelace"])}

        assert seen(Identity("acme", ("hr",))) == {"a"}
        assert seen(Identity("acme")) == set()
        assert seen(Identity("globex", ("hr",))) == {"c"}
        assert tables.documents()["a"] == ("acme", ("hr",), "rules")
        tables.update_access("a", "acme", ["*"])
        assert seen(Identity("acme")) == {"a"}
    finally:
        store.close()
