"""Folder sources: a folder's links to files outside it are refused by default (issue 21 item 11)."""

from pathlib import Path

import pytest

from ragwright.errors import ConfigError
from ragwright.rag import Rag
from ragwright.sources import FolderSource, open_source
from ragwright.stores.sqlite import SqliteStore
from ragwright.testing.doubles import HashingEmbedder


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("the outside secret password", encoding="utf-8")
    (outside / "more").mkdir()
    (outside / "more" / "deep.txt").write_text("a deeper outside secret", encoding="utf-8")
    docs = tmp_path / "docs"
    (docs / "sub").mkdir(parents=True)
    (docs / "inside.txt").write_text("an ordinary document", encoding="utf-8")
    (docs / "sub" / "real.txt").write_text("a real file in a subfolder", encoding="utf-8")
    (docs / "link-out.txt").symlink_to(outside / "secret.txt")
    (docs / "linked-folder").symlink_to(outside / "more", target_is_directory=True)
    (docs / "link-in.txt").symlink_to(docs / "sub" / "real.txt")  # inside the folder: fine
    return docs


def _names(source: FolderSource) -> list[str]:
    return sorted(Path(item.document_id).name for item in source.items())


def test_links_outside_the_folder_are_refused_and_listed(folder: Path) -> None:
    source = FolderSource(folder)
    assert _names(source) == ["inside.txt", "real.txt"]  # a linked folder is never walked; link-in.txt is real.txt
    refused = sorted(Path(p).name for p, _ in source.skipped)
    assert refused == ["link-out.txt"]
    assert all("outside the folder" in reason and "--follow-symlinks" in reason for _, reason in source.skipped)


def test_following_links_is_an_option(folder: Path) -> None:
    source = open_source(str(folder), follow_symlinks=True)
    assert isinstance(source, FolderSource) and source.skipped == []
    assert _names(source) == ["inside.txt", "real.txt", "secret.txt"]


def test_a_link_planted_after_the_listing_is_not_read(folder: Path, tmp_path: Path) -> None:
    source = FolderSource(folder)
    target = folder / "inside.txt"
    target.unlink()
    target.symlink_to(tmp_path / "outside" / "secret.txt")
    assert _names(source) == ["real.txt"]
    assert [Path(p).name for p, _ in source.skipped] == ["link-out.txt", "inside.txt"]
    source = FolderSource(folder)
    items = [i for i in source.items() if i.document_id.endswith("real.txt")]  # real.txt (link-in.txt is the same file)
    real = folder / "sub" / "real.txt"
    real.unlink()
    real.symlink_to(tmp_path / "outside" / "secret.txt")  # swapped between listing and reading
    for item in items:
        with pytest.raises(ConfigError, match="outside the folder"):
            item.load()


def test_ingest_reports_the_refused_links_and_indexes_none_of_them(folder: Path, tmp_path: Path) -> None:
    rag = Rag(SqliteStore(tmp_path / "s.db"), HashingEmbedder())
    report = rag.ingest(folder)
    assert report.added == 2 and report.unchanged == 0 and report.failed == []  # link-in.txt is real.txt: once
    assert [Path(s.document).name for s in report.skipped] == ["link-out.txt"]
    assert report.to_dict()["skipped"][0]["stage"] == "list"
    assert all("secret" not in r.chunk.text for r in rag.search("outside secret password", top_k=10))
