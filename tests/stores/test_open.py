"""One ``open_store(uri)`` for the facade, the CLI, the server, eval and the worker (issue 22 item 2)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from ragwright.errors import ConfigError, StoreError
from ragwright.stores import open as store_open
from ragwright.stores.memory import MemoryStore
from ragwright.stores.open import embedder_spec_of, is_remote, open_store, sqlite_path
from ragwright.stores.sqlite import SqliteStore
from ragwright.testing.doubles import HashingEmbedder


class Opened(StoreError):
    """Raised by the fake PostgreSQL opener (the CLI prints it as `error: opened postgres URI`)."""


@pytest.fixture
def fake_postgres(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, Any]]:
    calls: list[tuple[str, Any]] = []

    def opener(uri: str, collection: str | None, analyzer: str, options: Any) -> Any:
        calls.append((uri, options))
        raise Opened(f"opened postgres {uri}")

    for scheme in ("postgresql", "postgres"):
        monkeypatch.setitem(store_open.SCHEMES, scheme, store_open.Scheme(opener, "server"))
    return calls


def test_a_path_opens_a_sqlite_file(tmp_path: Path) -> None:
    for uri in (tmp_path / "a.db", str(tmp_path / "b.db"), f"sqlite://{tmp_path / 'c.db'}"):
        with open_store(uri) as store:
            assert isinstance(store, SqliteStore)
    assert {p.name for p in tmp_path.iterdir()} >= {"a.db", "b.db", "c.db"}
    with pytest.raises(ConfigError, match="no store at"):
        open_store(tmp_path / "missing.db", must_exist=True)
    assert not (tmp_path / "missing.db").exists()


def test_a_postgresql_uri_opens_postgresql_even_through_pathlib(
    tmp_path: Path, fake_postgres: list[tuple[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    for uri in ("postgresql://u@db:5432/rag", Path("postgresql://u@db:5432/rag"), "postgres://u@db/rag"):
        with pytest.raises(Opened):
            open_store(uri)
    assert [c[0] for c in fake_postgres] == ["postgresql://u@db:5432/rag"] * 2 + ["postgres://u@db/rag"]
    assert list(tmp_path.iterdir()) == []  # no SQLite file named "postgresql:" anywhere
    assert is_remote(Path("postgresql://u@db/rag")) and sqlite_path("postgresql://u@db/rag") is None
    with pytest.raises(ConfigError, match="postgresql://") as refused:
        open_store("mysql://u@db/rag")
    assert "memory:" in str(refused.value) and "sqlite:///PATH" in str(refused.value)


def test_memory_opens_an_in_process_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with open_store("memory:", keyword_analyzer="english") as store:
        assert isinstance(store, MemoryStore) and store.keyword_analyzer.startswith("english")
    assert not is_remote("memory:") and sqlite_path("memory:") is None
    with pytest.raises(ConfigError, match="memory:"):
        open_store("memory:somewhere.db")
    assert list(tmp_path.iterdir()) == []  # nothing written to disk


def test_every_entry_point_uses_it(tmp_path: Path, fake_postgres: list[tuple[str, Any]], monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The facade, the CLI (before and after the subcommand), the server, eval and the worker."""
    from ragwright import Rag
    from ragwright.cli import main
    from ragwright.server.app import _open_rag

    monkeypatch.chdir(tmp_path)
    uri = "postgresql://u@db:5432/rag"
    with pytest.raises(Opened):
        Rag.open(uri)
    with pytest.raises(Opened):
        _open_rag(Path(uri))
    runner = CliRunner()
    for args in (
        ["--store", uri, "status"],
        ["status", "--store", uri],
        ["serve", "--store", uri],  # opened a SQLite file named "postgresql:/u@db:5432/rag" before
        ["worker", "--store", uri, "status"],
        ["worker", "status", "--store", uri],
    ):
        result = runner.invoke(main, args)
        assert result.exit_code == 2 and f"error: opened postgres {uri}" in result.stderr, (args, result.output)
    assert len(fake_postgres) == 7 and all(c[0] == uri for c in fake_postgres)
    assert fake_postgres[-1][1].schema == "ragwright"  # the worker's --schema reaches the store
    assert list(tmp_path.iterdir()) == []


class SpecEmbedder(HashingEmbedder):
    """A test embedder that says how to load it again (like OnnxEmbedder and WordLlamaEmbedder)."""

    def __init__(self, spec: str, name: str) -> None:
        super().__init__(dimension=16, name=name)
        self._spec = spec

    @property
    def spec(self) -> str:
        return self._spec


def test_a_store_records_its_embedder_spec_and_every_entry_point_loads_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A model named nothing like its spec (a folder) is loaded again from the recorded spec, not
    guessed from the name (the facade, the CLI, the server; the worker shares the CLI's path)."""
    from ragwright import Rag
    from ragwright.cli import main
    from ragwright.models import embedders
    from ragwright.server.app import _open_rag

    folder = str(tmp_path / "my-model")
    store_path = tmp_path / "s.db"
    with Rag(SqliteStore(store_path), SpecEmbedder(folder, "custom/onnx-int8@abc")) as rag:
        assert rag.store.embedder_spec == folder
    asked: list[str] = []

    def load(spec: str, **_: Any) -> Any:
        asked.append(spec)
        return SpecEmbedder(spec, "custom/onnx-int8@abc")

    monkeypatch.setattr(embedders, "load_embedder", load)
    with Rag.open(store_path) as rag:
        assert rag.embedder.name == "custom/onnx-int8@abc"
    with _open_rag(store_path) as rag:
        assert rag.embedder.name == "custom/onnx-int8@abc"
    result = CliRunner().invoke(main, ["--store", str(store_path), "status"])
    assert result.exit_code == 0, result.output
    assert asked == [folder, folder, folder]
    with SqliteStore(store_path) as store:
        assert embedder_spec_of(store) == folder


def test_stores_without_a_recorded_spec() -> None:
    """An empty store opens with the default; a store written before specs were recorded, with the
    spec its exact model name implies (WordLlama), else the default."""
    store = MemoryStore()
    assert embedder_spec_of(store) == "default"
    store.bind_embedder("wordllama/l2_supercat-256", 256)
    assert embedder_spec_of(store) == "wordllama"
    other = MemoryStore()
    other.bind_embedder("test/hashing", 16)
    assert embedder_spec_of(other) == "default"


def test_the_shipped_embedders_know_their_spec() -> None:
    from ragwright import Rag
    from ragwright.models.embedders import OnnxEmbedder, WordLlamaEmbedder
    from ragwright.models.embedders.base import embedder_spec
    from ragwright.models.embedders.onnx import default_model_dir

    assert OnnxEmbedder.default().spec == "default"
    assert WordLlamaEmbedder().spec == "wordllama" and WordLlamaEmbedder(dim=64).spec is None
    with Rag(MemoryStore(), WordLlamaEmbedder(), cache=True) as rag:  # recorded though a cache wraps it
        assert rag.store.embedder_spec == "wordllama"
    assert embedder_spec(HashingEmbedder()) is None
    assert default_model_dir().is_dir()
