"""One ``open_store(uri)`` for the facade, the CLI, the server, eval and the worker (issue 22 item 2)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from ragwright.errors import ConfigError, StoreError
from ragwright.stores import open as store_open
from ragwright.stores.open import is_remote, open_store, sqlite_path
from ragwright.stores.sqlite import SqliteStore


class Opened(StoreError):
    """Raised by the fake PostgreSQL opener (the CLI prints it as `error: opened postgres URI`)."""


@pytest.fixture
def fake_postgres(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, Any]]:
    calls: list[tuple[str, Any]] = []

    def opener(uri: str, collection: str | None, analyzer: str, options: Any) -> Any:
        calls.append((uri, options))
        raise Opened(f"opened postgres {uri}")

    for scheme in ("postgresql", "postgres"):
        monkeypatch.setitem(store_open.SCHEMES, scheme, (opener, True))
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
    with pytest.raises(ConfigError, match="postgresql://"):
        open_store("mysql://u@db/rag")


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
