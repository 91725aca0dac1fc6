"""Crash consistency: an ingest killed with SIGKILL at random points leaves a consistent store, and a
final run converges."""

import random
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ragwright.rag import Rag
from ragwright.stores.sqlite import SqliteStore
from ragwright.testing.doubles import HashingEmbedder

SCRIPT = """
import sys
from ragwright.rag import Rag
from ragwright.stores.sqlite import SqliteStore
from ragwright.testing.doubles import HashingEmbedder
rag = Rag(SqliteStore(sys.argv[1]), HashingEmbedder())
rag.ingest(sys.argv[2], sync=True)
print("done")
"""


def make_corpus(folder: Path, n: int, version: int) -> None:
    folder.mkdir(exist_ok=True)
    for i in range(n):
        body = "\n\n".join(f"Paragraph {p} of document {i}, revision {version}. " * 8 for p in range(6))
        (folder / f"doc{i:03d}.md").write_text(f"# Document {i}\n\n{body}\n", encoding="utf-8")


@pytest.mark.slow
def test_sigkill_at_random_points_keeps_the_store_consistent(tmp_path: Path) -> None:
    store, corpus = tmp_path / "store.db", tmp_path / "docs"
    rng = random.Random(7)
    interrupted = 0
    for attempt in range(20):
        make_corpus(corpus, 300, version=attempt % 3)  # documents change between attempts
        if attempt % 5 == 4:
            (corpus / f"doc{attempt:03d}.md").unlink(missing_ok=True)  # and some disappear
        proc = subprocess.Popen([sys.executable, "-c", SCRIPT, str(store), str(corpus)])
        time.sleep(rng.uniform(0.4, 2.0))
        interrupted += proc.poll() is None
        proc.kill()
        proc.wait()
        with SqliteStore(store) as s:
            assert s.check_integrity() == [], f"attempt {attempt}"
    assert interrupted >= 10  # most kills really landed mid-ingest
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(store), str(corpus)], capture_output=True, text=True)
    assert done.returncode == 0 and "done" in done.stdout, done.stderr
    with Rag(SqliteStore(store), HashingEmbedder()) as rag:
        assert rag.check() == []
        assert rag.status()["indexed"] == len(list(corpus.glob("*.md")))
        again = rag.ingest(corpus, sync=True)
        assert (again.added, again.updated, again.deleted, again.unchanged) == (0, 0, 0, len(list(corpus.glob("*.md"))))
