"""``ragwright search|ask --collections a,b`` (and ``--federate NAME=URI``, ``[federation]``) end to end."""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragwright.cli import main
from ragwright.models.embedders import load_embedder
from ragwright.rag import Rag
from ragwright.sources import BytesSource
from ragwright.stores.sqlite import SqliteStore

DOCS_A = {"refunds.md": b"# Refunds\n\nCustomers may return goods within thirty days for a full refund."}
DOCS_B = {"travel.md": b"# Travel\n\nThe Lisbon refund desk handles returns for travellers at the airport."}
DOCS_C = {"shipping.md": b"# Shipping\n\nParcels ship within two days; refunds for lost parcels are automatic."}


def run(*args: str, code: int = 0) -> tuple[str, str]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    assert result.exit_code == code, result.output + result.stderr
    return result.stdout, result.stderr


@pytest.fixture
def stores(tmp_path: Path) -> tuple[str, str, str]:
    """A store whose live collection holds DOCS_A and whose second collection DOCS_B; another holds DOCS_C."""
    embedder = load_embedder("wordllama")  # fast and real: the store records it, the CLI reopens it
    path, other = tmp_path / "s.db", tmp_path / "other.db"
    store = SqliteStore(path)
    with Rag(store, embedder) as rag:
        rag.ingest(BytesSource(DOCS_A))
        name = store.create_collection("second")
        with Rag(store.open_collection(name), embedder) as second:
            second.ingest(BytesSource(DOCS_B))
    with Rag(SqliteStore(other), embedder) as third:
        third.ingest(BytesSource(DOCS_C))
    return str(path), name, str(other)


def test_search_collections_with_weights(stores: tuple[str, str, str]) -> None:
    path, name, _ = stores
    out, _ = run("--store", path, "--json", "search", "refund returns", "--collections", f"main,{name}=0.5")
    payload = json.loads(out)
    got = {(r["source"], r["document_id"]) for r in payload["results"]}
    assert got == {("main", "refunds.md"), (name, "travel.md")}
    assert payload["federation"] == {"sources": ["main", name], "failures": [], "score_scale": "opaque_ranking"}
    assert payload["results"][0]["source"] == "main"  # the heavier source's best first
    text, _ = run("--store", path, "search", "refund returns", "--collections", f"live,{name}")
    assert f"{name}: travel.md" in text and "federated_rrf" in text


def test_federate_another_store_and_ask(stores: tuple[str, str, str]) -> None:
    path, name, other = stores
    out, _ = run("--store", path, "--json", "search", "refunds", "--federate", f"shop={other}", "--top-k", "6")
    payload = json.loads(out)
    assert {r["source"] for r in payload["results"]} == {"live", "shop"}
    out, _ = run("--store", path, "--json", "ask", "how many days to return goods?", "--collections", f"live,{name}")
    answer = json.loads(out)
    assert answer["federation"] == {"sources": ["live", name], "failures": []}
    assert {s["source"] for s in answer["sources"]} <= {"live", name}
    assert answer["retrieval_path"].startswith("federated live+")


def test_config_file_and_bad_values(stores: tuple[str, str, str], tmp_path: Path) -> None:
    path, name, other = stores
    config = tmp_path / "ragwright.toml"
    config.write_text(
        f'store = "{path}"\n[federation]\ncollections = ["live", "{name}=0.5"]\nstores = {{ shop = "{other}" }}\n'
    )
    out, _ = run("--config", str(config), "--json", "search", "refund", "--top-k", "6")
    assert {r["source"] for r in json.loads(out)["results"]} == {"live", name, "shop"}
    shown, _ = run("--config", str(config), "--json", "config", "show", "--collections", "live")
    assert json.loads(shown)["federation"]["collections"] == ["live", "shop"]
    _, err = run("--store", path, "search", "refund", "--collections", "live,nope", code=2)
    assert "nope" in err and name in err
    _, err = run("--store", path, "search", "refund", "--collections", "live=0", code=2)
    assert "federation weight of 'live'" in err and "> 0" in err
    _, err = run("--store", path, "search", "refund", "--federate", "shop", code=2)
    assert "NAME=URI" in err
