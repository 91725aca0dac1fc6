"""A small corpus of long-ish documents across two tenants and two ACLs, for the hierarchy tests; the
``rag`` fixture runs on SQLite and PostgreSQL (tests/graph/backends.py)."""

import pytest

from ragwright.hierarchy import HierarchyOptions
from ragwright.model.identity import Identity
from ragwright.rag import Rag
from ragwright.sources import BytesSource
from ragwright.testing.doubles import HashingEmbedder
from tests.graph.backends import location, open_at
from tests.stores.postgres.conftest import pg_dsn, pg_server

__all__ = ["location", "make", "pg_dsn", "pg_server"]

WHALES = (
    b"# Whales\n\n## Biology\n\nWhales are marine mammals that breathe air through blowholes on their heads.\n\n"
    b"## Migration\n\nHumpback whales migrate thousands of kilometres each year to breed in warm tropical waters.\n\n"
    b"## Song\n\nMale humpback whales sing long complex songs that change slowly from season to season."
)
ROCKETS = (
    b"# Rockets\n\n## Engines\n\nRocket engines burn propellant to produce thrust; liquid engines carry oxygen.\n\n"
    b"## History\n\nThe first liquid fuel rocket flew in 1926 in Massachusetts, built by Robert Goddard.\n\n"
    b"## Orbits\n\nReaching orbit needs a speed of nearly eight kilometres per second above the atmosphere."
)
BREAD = (
    b"# Bread\n\n## Dough\n\nBread dough is flour, water, salt and yeast kneaded until the gluten is elastic.\n\n"
    b"## Baking\n\nLoaves bake in a hot oven until the crust browns and the inside sounds hollow when tapped."
)
SECRET = (
    b"# Board minutes\n\n## Merger\n\nThe board approved the Zorblax merger in Geneva for nine hundred million.\n\n"
    b"## Whales\n\nThe Zorblax whales sanctuary will be sold quietly after the merger closes."
)
ACME, BOARD, GLOBEX = Identity("acme"), Identity("acme", ("board",)), Identity("globex", ("board",))
SECRET_WORDS = ("Zorblax", "Geneva", "sanctuary")


def make(location: str, **options: object) -> Rag:
    return Rag(
        open_at(location),
        HashingEmbedder(max_tokens=64),
        hierarchy=HierarchyOptions(**options),  # type: ignore[arg-type]
    )


@pytest.fixture
def rag(location: str) -> Rag:
    r = make(location, branching=2)
    r.ingest(BytesSource({"whales.md": WHALES, "rockets.md": ROCKETS, "bread.md": BREAD}), tenant="acme")
    r.ingest(BytesSource({"secret.md": SECRET}), tenant="acme", acl=["board"])
    return r
