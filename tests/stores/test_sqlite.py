from pathlib import Path

import numpy as np
import pytest

from ragwright.errors import StoreError
from ragwright.model.identity import Identity
from ragwright.stores.sqlite import SqliteStore
from ragwright.testing.conformance import DIM, chunks_for, record, unit


def test_reopen_restores_everything(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    with SqliteStore(path) as s:
        s.bind_embedder("m", DIM)
        chunks = chunks_for("d", ["one", "two"], metadata={"k": 1})
        s.replace_document(record("d", 2), chunks, np.stack([unit(1), unit(0, 1)]))
    with SqliteStore(path) as s:
        assert s.embedding_model == ("m", DIM)
        assert [h.chunk for h in s.search_dense(unit(1), 1, identity=Identity())] == [chunks[0]]
        assert s.get_record("d") == record("d", 2)


def test_collection_guard_wipes_stale_rows(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    with SqliteStore(path, collection="docs-v1") as s:
        s.bind_embedder("m", DIM)
        s.replace_document(record("d"), chunks_for("d", ["x"]), np.stack([unit(1)]))
    with SqliteStore(path, collection="docs-v1") as s:
        assert s.count_chunks() == 1
    with SqliteStore(path) as s:  # no name given: no check
        assert s.count_chunks() == 1
    with SqliteStore(path, collection="docs-v2") as s:
        assert s.count_chunks() == 0 and s.list_records() == [] and s.collection == "docs-v2"
        s.bind_embedder("another", 8)  # the old model binding went with the rows


def test_corrupt_file_is_refused_and_left_untouched(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    junk = b"this is not a database at all" * 100
    path.write_bytes(junk)
    with pytest.raises(StoreError, match="not a readable ragwright store"):
        SqliteStore(path)
    assert path.read_bytes() == junk


def test_foreign_sqlite_database_is_refused(tmp_path: Path) -> None:
    import sqlite3

    path = tmp_path / "other.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE users (id INTEGER)")
    conn.commit()
    conn.close()
    with pytest.raises(StoreError, match="not a ragwright store"):
        SqliteStore(path)


def test_directory_path_is_refused(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="directory"):
        SqliteStore(tmp_path)


def test_search_sees_writes_from_another_connection(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    reader = SqliteStore(path)
    reader.bind_embedder("m", DIM)
    assert reader.search_dense(unit(1), 5, identity=Identity()) == []
    with SqliteStore(path) as writer:
        writer.replace_document(record("d"), chunks_for("d", ["x"]), np.stack([unit(1)]))
    assert [h.chunk.text for h in reader.search_dense(unit(1), 5, identity=Identity())] == ["x"]
    reader.close()


def test_security_cache_is_per_identity_and_invalidated_by_writes(tmp_path: Path) -> None:
    with SqliteStore(tmp_path / "s.db") as s:
        s.bind_embedder("m", DIM)
        s.replace_document(record("a"), chunks_for("a", ["acme doc"], tenant="acme"), np.stack([unit(1)]))
        for _ in range(2):  # the second round is served from the cache
            assert [h.chunk.text for h in s.search_dense(unit(1), 5, identity=Identity("acme"))] == ["acme doc"]
            assert s.search_dense(unit(1), 5, identity=Identity("globex")) == []
        s.replace_document(record("g"), chunks_for("g", ["globex doc"], tenant="globex"), np.stack([unit(1)]))
        assert [h.chunk.text for h in s.search_dense(unit(1), 5, identity=Identity("globex"))] == ["globex doc"]
        s.remove_document("a")
        assert s.search_dense(unit(1), 5, identity=Identity("acme")) == []


def test_keyword_index_is_derived_state(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    with SqliteStore(path, keyword_analyzer="english") as s:
        s.bind_embedder("m", DIM)
        s.replace_document(record("d"), chunks_for("d", ["running dogs"]), np.stack([unit(1)]))
        assert s.keyword_analyzer.startswith("english")
        assert [h.chunk.text for h in s.search_keyword("run dog", 5, identity=Identity())] == ["running dogs"]
    with SqliteStore(path) as reopened, SqliteStore(path) as writer:  # rebuilt on load, follows other writers
        assert reopened.search_keyword("run", 5, identity=Identity()) == []  # default analyzer: no stemming
        assert reopened.search_keyword("running", 5, identity=Identity())
        writer.replace_document(record("e"), chunks_for("e", ["cats running"]), np.stack([unit(1)]))
        assert {h.chunk.text for h in reopened.search_keyword("running", 5, identity=Identity())} == {
            "running dogs",
            "cats running",
        }


def test_unknown_analyzer_is_refused_before_opening(tmp_path: Path) -> None:
    from ragwright.errors import ConfigError

    with pytest.raises(ConfigError, match="analyzer"):
        SqliteStore(tmp_path / "s.db", keyword_analyzer="klingon")
    assert not (tmp_path / "s.db").exists()


def test_filtered_eligible_sets_are_cached_per_identity_and_filter_and_dropped_on_write(tmp_path: Path) -> None:
    from ragwright.model.identity import Identity
    from ragwright.rag import Rag
    from ragwright.sources import BytesSource
    from ragwright.testing.doubles import HashingEmbedder

    rag = Rag(SqliteStore(tmp_path / "s.db"), HashingEmbedder())
    rag.ingest(BytesSource({"a.md": b"# A\n\nquarterly budget plan"}), tenant="t", metadata={"dept": "hr"})
    rag.ingest(BytesSource({"b.md": b"# B\n\nquarterly budget plan"}), tenant="t", acl=["fin"], metadata={"dept": "hr"})
    hr = {"dept": "hr"}
    for mode in ({"use_hybrid_search": False}, {"use_dense_search": False, "use_keyword_search": True}):
        public = {r.document_id for r in rag.search("budget", identity=Identity("t"), metadata_filter=hr, **mode)}
        fin = {
            r.document_id for r in rag.search("budget", identity=Identity("t", ("fin",)), metadata_filter=hr, **mode)
        }
        assert (public, fin) == ({"a.md"}, {"a.md", "b.md"})  # same filter, different identity: not shared
    rag.ingest(BytesSource({"c.md": b"# C\n\nquarterly budget plan"}), tenant="t", metadata={"dept": "hr"})
    for mode in ({"use_hybrid_search": False}, {"use_dense_search": False, "use_keyword_search": True}):
        again = {r.document_id for r in rag.search("budget", identity=Identity("t"), metadata_filter=hr, **mode)}
        assert again == {"a.md", "c.md"}  # the write dropped the cached set


def _make_version_1(path: Path) -> None:
    import sqlite3

    conn = sqlite3.connect(path)  # a version-1 file: no collections, no alias
    conn.executescript(
        "DROP TABLE collections; DROP TABLE aliases; UPDATE rag_metadata SET value = '1' WHERE key = 'schema_version';"
    )
    conn.close()


def test_a_schema_upgrade_backs_the_file_up_first_and_says_so(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    import sqlite3

    path = tmp_path / "s.db"
    with SqliteStore(path) as s:
        s.bind_embedder("m", DIM)
        s.replace_document(record("d"), chunks_for("d", ["x"]), np.stack([unit(1)]))
        assert s.upgrade_backup is None  # a new file is not an upgrade
    _make_version_1(path)
    with caplog.at_level("WARNING", logger="ragwright.stores.sqlite.schema"), SqliteStore(path) as s:
        backup = s.upgrade_backup
        assert backup == tmp_path / "s.db.bak-v1" and s.count_chunks() == 1
    assert "schema_upgrade" in caplog.text and str(backup) in caplog.text
    old = sqlite3.connect(backup)
    assert old.execute("SELECT value FROM rag_metadata WHERE key = 'schema_version'").fetchone() == ("1",)
    assert old.execute("SELECT COUNT(*) FROM chunks").fetchone() == (1,)
    old.close()
    with SqliteStore(path) as s:  # upgraded once: no second backup
        assert s.upgrade_backup is None


def test_a_schema_upgrade_that_cannot_back_up_leaves_the_file_alone(tmp_path: Path) -> None:
    import sqlite3

    path = tmp_path / "s.db"
    SqliteStore(path).close()
    _make_version_1(path)
    (tmp_path / "s.db.bak-v1.part").mkdir()  # the backup cannot be written
    with pytest.raises(StoreError, match="could not be written"):
        SqliteStore(path)
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT value FROM rag_metadata WHERE key = 'schema_version'").fetchone() == ("1",)
    conn.close()


def test_the_store_is_composed_of_parts_none_of_which_builds_a_store() -> None:
    """The parts share a handle, not a base class; only the store itself opens another store object
    (``open_collection``/``open_live`` through its ``pinned`` constructor argument)."""
    import ast

    import ragwright.stores.sqlite as package

    assert SqliteStore.__mro__ == (SqliteStore, object)
    for path in sorted(Path(package.__file__).parent.glob("*.py")):
        if path.name in ("store.py", "__init__.py"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                names = {alias.name for alias in node.names}
                assert node.module != "ragwright.stores.sqlite.store", path.name
                assert not (node.module == "ragwright.stores.sqlite" and "SqliteStore" in names), path.name


def test_a_pinned_store_keeps_its_collection_when_the_alias_moves(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    with SqliteStore(path) as live:
        live.bind_embedder("m", DIM)
        live.replace_document(record("old"), chunks_for("old", ["old text"]), np.stack([unit(1)]))
        name = live.create_collection()
        with SqliteStore(path, pinned=name) as built:
            assert built.current_collection == name and built.count_chunks() == 0
            built.bind_embedder("m", DIM)
            built.replace_document(record("new"), chunks_for("new", ["new text"]), np.stack([unit(0, 1)]))
            live.switch_alias(name)
            assert live.count_chunks() == 1 and live.current_collection == name  # the live one followed (on a read)
            live.switch_alias("main")
            assert built.count_chunks() == 1 and built.current_collection == name  # the pinned one did not
        assert live.get_record("old") is not None and live.current_collection == "main"
    with pytest.raises(StoreError, match="no collection"):
        SqliteStore(path, pinned="nope")
