import json
from pathlib import Path

import pytest

from ragwright.errors import ConfigError
from ragwright.eval.ablation import ablate
from ragwright.eval.configs import EvalConfig, parse_config
from ragwright.eval.datasets import load_beir
from ragwright.eval.report import render_table, summarize, write_report
from ragwright.eval.runner import classify, run_config
from ragwright.options import RetrievalOptions
from ragwright.rag import Rag
from ragwright.sources import JsonlSource
from ragwright.stores.memory import MemoryStore
from ragwright.testing.doubles import HashingEmbedder

TOPICS = [
    "apple orchard harvest",
    "rocket engine thrust",
    "violin string tuning",
    "glacier ice melting",
    "coffee bean roasting",
    "chess opening theory",
    "volcano lava flow",
    "honey bee colony",
]


def make_beir(root: Path) -> Path:
    (root / "qrels").mkdir(parents=True)
    with (root / "corpus.jsonl").open("w") as fh:
        for i, topic in enumerate(TOPICS):
            fh.write(
                json.dumps({"_id": f"d{i}", "title": topic.title(), "text": f"All about {topic} and more {topic}."})
                + "\n"
            )
            fh.write(json.dumps({"_id": f"n{i}", "title": "Noise", "text": f"unrelated filler text number {i}"}) + "\n")
    with (root / "queries.jsonl").open("w") as fh:
        for i, topic in enumerate(TOPICS):
            fh.write(json.dumps({"_id": f"q{i}", "text": topic}) + "\n")
        fh.write(json.dumps({"_id": "unjudged", "text": "nothing"}) + "\n")
    (root / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\n" + "".join(f"q{i}\td{i}\t2\n" for i in range(len(TOPICS)))
    )
    return root


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Rag, object]:
    root = make_beir(tmp_path / "toy")
    data = load_beir(root)
    rag = Rag(MemoryStore(), HashingEmbedder())
    rag.ingest(JsonlSource(data.corpus_path))
    return rag, data


def test_loader_reads_judged_queries(setup: tuple[Rag, object]) -> None:
    _, data = setup
    assert len(data.queries) == 9 and len(data.judged_queries) == 8  # type: ignore[attr-defined]


def test_run_and_summarize(setup: tuple[Rag, object], tmp_path: Path) -> None:
    rag, data = setup
    good = run_config(rag, data, parse_config("dense"))  # type: ignore[arg-type]
    assert good.per_query["ndcg@10"] == {f"q{i}": 1.0 for i in range(len(TOPICS))}
    assert good.error_counts() == {"hit": 8, "ranking_miss": 0, "retrieval_miss": 0}
    assert len(good.latencies) == 8 and good.p95_ms >= good.p50_ms > 0
    # A config that filters every document away scores zero and is a retrieval miss everywhere.
    bad = run_config(rag, data, parse_config('dense+metadata_filter={"title": "none"}'))  # type: ignore[arg-type]
    assert set(bad.per_query["ndcg@10"].values()) == {0.0}
    report = summarize("toy", "test", [good, bad])
    diff = report.configs[1].versus_baseline["ndcg@10"]
    assert diff.significant and diff.difference.mean == pytest.approx(-1.0)
    table = render_table(report)
    assert "dense" in table and "significant" in table and "1.0000 [1.0000, 1.0000]" in table
    out = write_report(report, tmp_path / "rep")
    for name in ("report.md", "report.html", "report.json", "ndcg_at_10.svg", "frontier.svg"):
        assert (out / name).is_file()
    assert "<svg" in (out / "report.html").read_text()
    assert json.loads((out / "report.json").read_text())["configs"][1]["versus_baseline"]["ndcg@10"]["significant"]


def test_classify() -> None:
    assert classify(["a", "b"], {"b"}) == "hit"
    assert classify([f"x{i}" for i in range(20)] + ["r"], {"r"}) == "ranking_miss"
    assert classify(["x"] * 60 + ["r"], {"r"}) == "retrieval_miss"


def test_parse_config_validates() -> None:
    assert parse_config("dense+top_k=20").options.top_k == 20
    with pytest.raises(ConfigError, match="unknown config preset"):
        parse_config("magic")
    with pytest.raises(ConfigError, match="did you mean"):
        parse_config("dense+topk=3")
    with pytest.raises(ConfigError, match="key=value"):
        parse_config("dense+oops")


def test_ablation_keeps_only_significant_improvements(setup: tuple[Rag, object]) -> None:
    rag, data = setup
    base = EvalConfig("filtered", RetrievalOptions(metadata_filter={"title": "none"}))

    def evaluate(cfg: EvalConfig):  # type: ignore[no-untyped-def]
        return run_config(rag, data, cfg)  # type: ignore[arg-type]

    best, steps = ablate(base, [("same", {"top_k": 6}), ("unfiltered", {"metadata_filter": None})], evaluate)
    assert [s.adopted for s in steps] == [False, True]
    assert best.config.name == "unfiltered"
