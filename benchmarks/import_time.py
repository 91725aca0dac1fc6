"""How long ``import ragwright`` takes, against ``import json`` (a stdlib peer) in the same run.

python benchmarks/import_time.py [--runs 15]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys


def measure(module: str, runs: int) -> list[float]:
    code = f"import time; t=time.perf_counter(); import {module}; print(time.perf_counter()-t)"
    return [
        float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
        for _ in range(runs)
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    ours = measure("ragwright", args.runs)
    peer = measure("json", args.runs)
    print(f"{'module':<12}{'median s':>10}{'p95 s':>10}")
    for name, values in (("ragwright", ours), ("json", peer)):
        p95 = sorted(values)[max(0, int(0.95 * len(values)) - 1)]
        print(f"{name:<12}{statistics.median(values):>10.4f}{p95:>10.4f}")
    ratio = statistics.median(ours) / statistics.median(peer)
    goal = "yes" if statistics.median(ours) <= 0.3 else "NO"
    print(f"ratio ragwright/json: {ratio:.1f}x; within the 0.3 s goal: {goal}")


if __name__ == "__main__":
    main()
