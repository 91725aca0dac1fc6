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
    "dense": (0.49, 0.76),  # measured 0.5080 / 0.7743
    "bm25": (0.515, 0.745),  # the auto analyzer (English stems here): measured 0.5284 / 0.7578
    "hybrid": (0.565, 0.795),  # the default (convex fusion, Rocchio feedback): measured 0.5802 / 0.8090
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
