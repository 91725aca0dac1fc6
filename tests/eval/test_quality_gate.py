"""CI quality gate: retrieval quality on a real collection must not regress.

Thresholds sit just under the figures measured when the gate was set (benchmarks/RESULTS.md), so a
change that makes retrieval worse fails the suite.
"""

from pathlib import Path

import pytest

from ragwright.eval.commands import run_beir_eval
from ragwright.models.embedders import load_embedder

# config → (nDCG@10 floor, recall@100 floor); measured values in benchmarks/RESULTS.md
GATES = {
    "dense": (0.49, 0.76),  # measured 0.5065 / 0.7731
    "bm25": (0.49, 0.70),  # default analyzer: measured 0.5044 / 0.7156
    "hybrid": (0.54, 0.76),  # measured 0.5531 / 0.7776
}


@pytest.mark.slow
def test_cranfield_quality_gate(shared: Path, tmp_path: Path) -> None:
    payload, table = run_beir_eval(
        shared / "data" / "cranfield",
        list(GATES),
        embedder=load_embedder("default"),
        store_path=tmp_path / "cranfield.db",
    )
    print(table)
    for config in payload["configs"]:
        ndcg_floor, recall_floor = GATES[config["name"]]
        assert config["metrics"]["ndcg@10"]["mean"] >= ndcg_floor, table
        assert config["metrics"]["recall@100"]["mean"] >= recall_floor, table
