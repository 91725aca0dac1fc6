"""benchmarks/chunking_cranfield.py (issue 26, "Done when"): on a small BEIR-format collection it prints
the ingestion seconds against bare embedding and, per configuration, chunks, embedder tokens, LLM calls
and nDCG@10 with paired intervals against the structural default, for dense and hybrid retrieval."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "chunking_cranfield.py"
TOPICS = ["glacier", "volcano", "estuary", "monsoon", "coral reef", "tundra"]


def write_collection(root: Path) -> Path:
    """Per topic a relevant document whose second paragraph does not name the topic, and a document about
    something else; one query per topic."""
    root.mkdir()
    corpus, queries, qrels = [], [], ["query-id\tcorpus-id\tscore\n"]
    for topic in TOPICS:
        text = f"The {topic} is studied by field teams every year.\n\nIts records go back two centuries."
        corpus.append({"_id": f"rel-{topic}", "title": f"Notes on the {topic}", "text": text})
        corpus.append({"_id": f"other-{topic}", "title": "", "text": f"A ledger of shipping costs, item {topic[:3]}."})
        queries.append({"_id": f"q-{topic}", "text": f"{topic} records"})
        qrels.append(f"q-{topic}\trel-{topic}\t1\n")
    (root / "corpus.jsonl").write_text("".join(json.dumps(r) + "\n" for r in corpus), encoding="utf-8")
    (root / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries), encoding="utf-8")
    (root / "qrels").mkdir()
    (root / "qrels" / "test.tsv").write_text("".join(qrels), encoding="utf-8")
    return root


def run(args: list[str], cache: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "RAGWRIGHT_CACHE_DIR": str(cache)}  # the script's vector cache, not the user's
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args], capture_output=True, text=True, env=env, timeout=600, check=False
    )


@pytest.mark.slow
def test_each_technique_is_reported_against_the_structural_default_with_its_cost(tmp_path: Path) -> None:
    data = write_collection(tmp_path / "tiny")
    args = ["--datasets", str(data), "--configs", "structural,context,late", "--threads", "1"]
    done = run([*args, "--timing-docs", "4", "--timing-reps", "1", "--resamples", "200"], tmp_path / "cache")
    assert done.returncode == 0, done.stderr[-2000:]
    out = done.stdout
    timing = out[out.index("ingestion seconds, tiny first 4 documents") :]
    for name in ("bare embedding", "structural", "context", "late"):
        assert re.search(rf"^{re.escape(name)} +\d+\.\d\d +\d+\.\d\d", timing, re.M), name
    table = out[out.rindex(f"dataset tiny: {len(TOPICS)} judged queries, {2 * len(TOPICS)} documents") :]
    rows = {m.group(1): m.group(0) for m in re.finditer(r"^(structural|context|late) +\d+ .*$", table, re.M)}
    assert set(rows) == {"structural", "context", "late"}
    # columns: chunks, embedder tokens, × tokens, LLM calls, LLM s, ingest s, then dense and hybrid
    for name, row in rows.items():
        chunks, tokens, ratio, calls = row.split()[1:5]
        assert int(chunks) == len(TOPICS) * 2 and int(tokens) > 0 and int(calls) == 0, row  # a chunk a document
        assert float(ratio) == 1.0 if name == "structural" else float(ratio) >= 1.0, row
        assert row.count("[") == (2 if name == "structural" else 4), row  # CIs, and paired deltas vs structural
        assert row.count("—") == (2 if name == "structural" else 0), row
    assert (tmp_path / "cache" / "bench").is_dir()


def test_the_llm_stages_are_refused_without_a_chat_model(tmp_path: Path) -> None:
    data = write_collection(tmp_path / "tiny")
    done = run(["--datasets", str(data), "--configs", "structural,context-llm,propositions"], tmp_path / "cache")
    assert done.returncode == 2 and "['context-llm', 'propositions'] need --llm" in done.stderr
