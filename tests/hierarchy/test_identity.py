"""A caller never sees a summary, tree node or chunk of a document hidden from them — and the probe
that says so fails when the filter is taken out."""

from typing import Any

import pytest

from ragwright.hierarchy import search as hsearch
from ragwright.model.identity import Identity
from ragwright.rag import Rag

from .conftest import ACME, BOARD, GLOBEX, SECRET_WORDS

QUERIES = ("Zorblax merger Geneva", "whales sanctuary", "board minutes", "whales")


def seen(rag: Rag, who: Identity) -> tuple[set[str], str]:
    """Every document id and every text the hierarchy shows *who*, over all modes and queries."""
    h = rag.hierarchy
    assert h is not None
    docs: set[str] = set()
    texts: list[str] = []
    for q in QUERIES:
        for mode in ("two_stage", "tree", "multi_vector"):
            found = h.search(q, identity=who, mode=mode, top_k=10)
            docs |= {r.document_id for r in found.results} | {d.document_id for d in found.documents}
            docs |= {d for n in found.nodes for d in n.document_ids}
            texts += [r.chunk.text for r in found.results] + [d.summary for d in found.documents]
            texts += [n.summary for n in found.nodes]
        docs |= {d.document_id for d in h.searcher.documents(q, who, 10)}
        for n in h.searcher.nodes(q, who, 50):
            docs |= set(n.document_ids)
            texts.append(n.summary)
    return docs, "\n".join(texts)


def leaks(rag: Rag, who: Identity) -> list[str]:
    docs, text = seen(rag, who)
    found = ["secret.md"] if "secret.md" in docs else []
    return found + [w for w in SECRET_WORDS if w in text]


@pytest.mark.parametrize("who", [ACME, GLOBEX, Identity("acme", ("hr",))])
def test_no_summary_node_or_chunk_of_a_hidden_document(rag: Rag, who: Identity) -> None:
    assert leaks(rag, who) == []


def test_the_board_sees_the_board_document(rag: Rag) -> None:
    docs, text = seen(rag, BOARD)
    assert "secret.md" in docs and "Zorblax" in text


def test_the_probe_fails_when_the_filter_is_removed(rag: Rag, monkeypatch: pytest.MonkeyPatch) -> None:
    """Both layers taken out (the row mask, and the store re-check done as a caller who sees all): the
    same probe must report the leak, or it proves nothing."""

    def everything(rows: Any, identity: Identity) -> Any:
        import numpy as np

        return np.ones(len(rows), dtype=bool)

    original = hsearch.HierarchySearch.visible_chunks

    def as_board(self: hsearch.HierarchySearch, ids: Any, identity: Identity) -> Any:
        return original(self, ids, BOARD)

    monkeypatch.setattr(hsearch, "allowed_rows", everything)
    monkeypatch.setattr(hsearch.HierarchySearch, "visible_chunks", as_board)
    assert "secret.md" in leaks(rag, ACME)


def test_the_store_recheck_alone_hides_a_stale_row(rag: Rag, monkeypatch: pytest.MonkeyPatch) -> None:
    """The row mask taken out: the store re-check of every cited chunk still hides the hidden text."""

    def everything(rows: Any, identity: Identity) -> Any:
        import numpy as np

        return np.ones(len(rows), dtype=bool)

    monkeypatch.setattr(hsearch, "allowed_rows", everything)
    _, text = seen(rag, ACME)
    assert not any(w in text for w in SECRET_WORDS)


def test_access_changes_follow(rag: Rag) -> None:
    rag.update_acl("secret.md", groups=None)
    assert "secret.md" in seen(rag, ACME)[0]
    rag.update_acl("secret.md", groups=["board"])
    assert leaks(rag, ACME) == []
    rag.update_acl("bread.md", groups=["board"])
    docs, text = seen(rag, ACME)
    assert "bread.md" not in docs and "flour" not in text
    assert rag.hierarchy is not None
    rag.hierarchy.index.refresh_trees()
    bread = {c.id for c in rag.store.document_chunks("bread.md")}
    for n in rag.hierarchy.index.tables.nodes():
        if set(n.chunk_ids) & bread:
            assert n.acl == ("board",)


def test_an_access_change_behind_the_hierarchys_back_is_still_honoured(rag: Rag) -> None:
    rag.store.update_access("bread.md", "acme", ("board",))  # the rows still say public
    docs, text = seen(rag, ACME)
    assert "bread.md" not in docs and "flour" not in text
