"""Shared fixtures of the agent tests: a two-tenant corpus in a Rag with the hashing embedder."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from ragwright.model.identity import Identity
from ragwright.rag import Rag
from ragwright.sources import BytesSource
from ragwright.testing.doubles import HashingEmbedder

ACME = Identity("acme", ("eng",))
FILM = b"# Big Stone Gap\n\nBig Stone Gap is a 2014 American comedy film directed by Adriana Trigiani."
AUTHOR = b"# Adriana Trigiani\n\nAdriana Trigiani is an author. She lives in Greenwich Village in New York City."
BUDGET = b"# Budget\n\nThe 2024 travel budget is 1200 dollars per engineer."
HIDDEN = b"# Board minutes\n\nThe zorblax merger closes in March. Adriana Trigiani joins the board of zorblax."
GLOBEX = b"# Globex plan\n\nThe quuxplan of Globex moves the factory to Springfield."


def act(action: str, text: str, **extra: object) -> str:
    """A JSON action as the model writes it."""
    return json.dumps({"action": action, "input": text, **extra})


@pytest.fixture
def rag() -> Iterator[Rag]:
    r = Rag(embedder=HashingEmbedder(max_tokens=64))
    r.ingest(BytesSource({"film.md": FILM, "author.md": AUTHOR, "budget.md": BUDGET}), tenant="acme", acl=["*"])
    r.ingest(BytesSource({"minutes.md": HIDDEN}), tenant="acme", acl=["board"])
    r.ingest(BytesSource({"globex.md": GLOBEX}), tenant="globex", acl=["*"])
    yield r
    r.close()
