"""OCR for scanned pages, and the text-quality check that spots a garbage text layer.

Engines, tried in order: ``rapidocr`` (PyPI; PP-OCR ONNX models ship inside the wheel and run on
onnxruntime, no network) and Tesseract through ``pytesseract`` (needs the Debian ``tesseract-ocr``
binary). :func:`get_engine` returns ``None`` when neither is installed; the PDF parser then flags the
page instead. onnxruntime runs with one thread by default (:func:`configure` changes it): parsing
runs in parallel workers on shared cores.

An engine returns :class:`OcrLine` objects: text, a box in image pixels (origin top left) and a
confidence in ``[0, 1]``.
"""

from __future__ import annotations

import os
import re
import shutil
import threading
from dataclasses import dataclass
from typing import Any, Protocol

from ragwright._deps import require
from ragwright.errors import MissingDependencyError

__all__ = ["OcrEngine", "OcrLine", "configure", "get_engine", "set_engine", "text_quality"]


@dataclass(frozen=True, slots=True)
class OcrLine:
    """One recognised line: its text, its box in pixels (x0, y0 top-left, x1, y1) and confidence."""

    text: str
    x0: float
    y0: float
    x1: float
    y1: float
    confidence: float


class OcrEngine(Protocol):
    """Anything that turns an RGB image (PIL) into recognised lines."""

    name: str

    def recognize(self, image: Any) -> list[OcrLine]: ...


DET_MAX_SIDE = 1600
"""The long side, in pixels, at which rapidocr's detector searches a large image for text.

rapidocr raises the detector input's short side to at least 736 px and never shrinks it, so a page
rendered at 2000 px was searched at full size, at a resolution its text did not need. Larger images
are now searched at this long side; recognition still reads crops of the full image. Chosen on
generated pages (``benchmarks/ocr_detector_size.py``): at 1600 px the character error rate is unchanged
down to 10 px text, at 1280 px it rises on 10 px text and at 960 px it breaks there (RESULTS.md,
"OCR detector size").
"""


class RapidOcrEngine:
    """PP-OCR models through ``rapidocr`` on onnxruntime (CPU, ``threads`` intra-op threads).

    ``det_max_side``: large images are searched for text at this long side (:data:`DET_MAX_SIDE`;
    ``None``: rapidocr's own rule, never shrinking).
    """

    name = "rapidocr"

    def __init__(self, threads: int = 1, *, det_max_side: int | None = DET_MAX_SIDE) -> None:
        module = require("rapidocr", "ocr", "OCR of scanned pages")
        self._engine = module.RapidOCR(
            params={
                "Global.log_level": "error",
                "Global.use_cls": False,
                "EngineConfig.onnxruntime.intra_op_num_threads": threads,
                "EngineConfig.onnxruntime.inter_op_num_threads": 1,
            }
        )
        self._default_limit: tuple[Any, Any] | None = None
        self.det_max_side = det_max_side
        self._lock = threading.Lock()

    def _size_detector(self, width: int, height: int) -> None:
        """Cap the detector's input for a large image (a speed setting: when rapidocr's internals differ
        from what this expects, its own rule applies unchanged)."""
        load = getattr(self._engine, "_load_det_model", None)
        detector = load() if callable(load) else None
        if detector is None or not hasattr(detector, "limit_type") or not hasattr(detector, "limit_side_len"):
            return
        if self._default_limit is None:
            self._default_limit = (detector.limit_type, detector.limit_side_len)
        cap = self.det_max_side
        if cap is not None and max(width, height) > cap:
            detector.limit_type, detector.limit_side_len = "max", cap
        else:
            detector.limit_type, detector.limit_side_len = self._default_limit

    def recognize(self, image: Any) -> list[OcrLine]:
        np = require("numpy", "")  # a base dependency
        pixels = np.ascontiguousarray(np.asarray(image.convert("RGB"))[:, :, ::-1])  # RGB -> BGR
        with self._lock:
            self._size_detector(int(pixels.shape[1]), int(pixels.shape[0]))
            result = self._engine(pixels)
        if result.boxes is None or result.txts is None or result.scores is None:
            return []
        out: list[OcrLine] = []
        for box, text, score in zip(result.boxes, result.txts, result.scores, strict=False):
            xs = [float(p[0]) for p in box]
            ys = [float(p[1]) for p in box]
            if str(text).strip():
                out.append(OcrLine(str(text).strip(), min(xs), min(ys), max(xs), max(ys), float(score)))
        return out


class TesseractEngine:
    """Tesseract through ``pytesseract``; word confidences averaged per line.

    Tesseract's OpenMP runtime starts a thread per core by default, which fights the embedder running
    beside it (ingestion overlaps parsing with embedding) and is slower than one thread on small
    images. pytesseract starts the program with this process's environment, so creating the engine
    sets ``OMP_THREAD_LIMIT`` to *threads* (the OCR thread count, :func:`configure`) unless the
    environment already says otherwise. Parsing runs in its own worker process by default
    (``ParseOptions.isolate``), so the setting stays there.
    """

    name = "tesseract"

    def __init__(self, threads: int = 1) -> None:
        self._pt = require("pytesseract", "tesseract", "OCR with Tesseract")
        if shutil.which("tesseract") is None:
            raise MissingDependencyError(
                "tesseract", "tesseract", "OCR with Tesseract", install="apt install tesseract-ocr (the program)"
            )
        os.environ.setdefault("OMP_THREAD_LIMIT", str(threads))

    def recognize(self, image: Any) -> list[OcrLine]:
        data = self._pt.image_to_data(image.convert("RGB"), output_type=self._pt.Output.DICT)
        lines: dict[tuple[int, int, int], list[int]] = {}
        for i, word in enumerate(data["text"]):
            if str(word).strip() and float(data["conf"][i]) >= 0:
                lines.setdefault((data["block_num"][i], data["par_num"][i], data["line_num"][i]), []).append(i)
        out: list[OcrLine] = []
        for idx in lines.values():
            x0 = min(data["left"][i] for i in idx)
            y0 = min(data["top"][i] for i in idx)
            x1 = max(data["left"][i] + data["width"][i] for i in idx)
            y1 = max(data["top"][i] + data["height"][i] for i in idx)
            conf = sum(float(data["conf"][i]) for i in idx) / len(idx) / 100.0
            out.append(OcrLine(" ".join(str(data["text"][i]) for i in idx), x0, y0, x1, y1, conf))
        return out


_lock = threading.Lock()
_threads = 1
_engine: OcrEngine | None = None
_resolved = False


def configure(*, threads: int = 1) -> None:
    """Set the onnxruntime thread count for OCR (default 1); takes effect for the next engine."""
    global _threads, _resolved, _engine
    if not isinstance(threads, int) or threads < 1:
        raise ValueError(f"threads={threads!r} is invalid: an integer >= 1")
    with _lock:
        _threads, _engine, _resolved = threads, None, False


def set_engine(engine: OcrEngine | None) -> None:
    """Use *engine* for OCR (``None``: no OCR engine), instead of discovering one. For tests and plugins."""
    global _engine, _resolved
    with _lock:
        _engine, _resolved = engine, True


def get_engine() -> OcrEngine | None:
    """The OCR engine to use: rapidocr, else Tesseract, else ``None``. Created once, on first use."""
    global _engine, _resolved
    with _lock:
        if not _resolved:
            _engine = _discover(_threads)
            _resolved = True
        return _engine


def _discover(threads: int) -> OcrEngine | None:
    try:
        return RapidOcrEngine(threads)
    except ImportError:
        pass
    try:
        return TesseractEngine(threads)
    except ImportError:
        return None


_TOKEN = re.compile(r"\S+")
_STRIP = "()[]{}.,;:!?\"'“”‘’„«»<>-–—/*_"
_NUMBER = re.compile(r"^[+-]?\d+(?:[.,:/-]\d+)*%?$")
_VOWELS = set("aeiouyäöüàáâãåæèéêëìíîïòóôõøùúûýAEIOUYÄÖÜÀÁÂÉÈÊÍÓÔÚ")
_ODD = re.compile(r"[^\w\s.,;:!?\"'()\[\]{}“”‘’„/&%$€£+\-–—=@#§*]")


def _wordlike(token: str) -> bool:
    core = token.strip(_STRIP)
    if not core:
        return False
    if _NUMBER.match(core):
        return True
    if not core.isalpha():
        return False
    if not core.isascii() and not any(c in _VOWELS for c in core):
        return True  # non-Latin scripts (CJK, Arabic, Cyrillic …): no vowel test
    if len(core) == 1:
        return core in "aAIiOoyYe&"
    if not (core.islower() or core.isupper() or core.istitle()):
        return False  # mixed case inside a word: "tHe", "FRGt"
    return any(c in _VOWELS for c in core)


def text_quality(text: str) -> float:
    """How much *text* looks like real words, in ``[0, 1]``: 0.85+ for clean text, < 0.6 for bad OCR.

    The share of characters in word-like tokens (letters with a vowel and sane case, numbers),
    lowered by odd symbols (« » ^ ¬ …) that clean text rarely contains.
    """
    tokens = _TOKEN.findall(text)
    total = sum(len(t) for t in tokens)
    if not total:
        return 0.0
    good = sum(len(t) for t in tokens if _wordlike(t))
    odd = len(_ODD.findall(text))
    return max(0.0, good / total - 2.0 * odd / total)
