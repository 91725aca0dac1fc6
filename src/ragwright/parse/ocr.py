"""OCR for scanned pages, and the text-quality check that spots a garbage text layer.

Engines, tried in order: ``rapidocr`` (PyPI; PP-OCR ONNX models ship inside the wheel and run on
onnxruntime, no network) and Tesseract through ``pytesseract`` (needs the Debian ``tesseract-ocr``
binary). :func:`get_engine` returns ``None`` when neither is installed; the PDF parser then flags the
page instead. onnxruntime runs with one thread by default (:func:`configure` changes it): parsing
runs in parallel workers on shared cores. OpenCV, which rapidocr resizes and crops with, starts a thread
per core for each call by default; creating the rapidocr engine lowers its thread count to the same
number (never raises it), so OCR's work beside the embedder stays on *threads* cores.

An engine returns :class:`OcrLine` objects: text, a box in image pixels (origin top left) and a
confidence in ``[0, 1]``.
"""

from __future__ import annotations

import math
import os
import re
import shutil
import threading
from dataclasses import dataclass
from typing import Any, Final, Protocol

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


CROP_MARGIN: Final = 32
"""Pixels of paper kept around an image's content when its blank margins are cut off before detection
(plus :data:`CROP_MARGIN_SHARE` of its long side: a detected box reaches about 0.8 line heights past its
letters, and a large heading must keep its room)."""
CROP_MARGIN_SHARE: Final = 0.05
CROP_TOLERANCE: Final = 16  # grey levels from the paper's colour within which a pixel is paper


def content_box(pixels: Any, margin: int = CROP_MARGIN) -> tuple[int, int, int, int] | None:
    """``(x0, y0, x1, y1)``: the part of *pixels* (an H x W x 3 array) that differs from the paper,
    with a margin of paper around it (:data:`CROP_MARGIN` plus :data:`CROP_MARGIN_SHARE` of the long
    side), within the image; ``None`` when the image is all paper.

    The paper is the median colour of the image's outermost rows and columns; a pixel differing from
    it by more than :data:`CROP_TOLERANCE` grey levels in any channel is content (faint text and JPEG
    speckles included: they only make the box larger).
    """
    np = require("numpy", "")
    height, width = int(pixels.shape[0]), int(pixels.shape[1])
    border = np.concatenate([pixels[0], pixels[-1], pixels[:, 0], pixels[:, -1]])
    paper = np.median(border, axis=0).astype(np.int16)
    ink = (np.abs(pixels.astype(np.int16) - paper) > CROP_TOLERANCE).any(axis=2)
    rows, cols = np.flatnonzero(ink.any(axis=1)), np.flatnonzero(ink.any(axis=0))
    if not len(rows):
        return None
    pad = margin + round(CROP_MARGIN_SHARE * max(width, height))
    return (
        max(0, int(cols[0]) - pad),
        max(0, int(rows[0]) - pad),
        min(width, int(cols[-1]) + 1 + pad),
        min(height, int(rows[-1]) + 1 + pad),
    )


def detector_ratio(limit_type: str, limit: float, width: int, height: int) -> float:
    """The scale rapidocr's detector gives an image of *width* x *height* under its limit (``"max"``:
    shrunk to *limit* on its long side when larger; ``"min"``: enlarged to *limit* on its short side
    when smaller; before its rounding to multiples of 32)."""
    if limit_type == "max":
        return limit / max(width, height) if max(width, height) > limit else 1.0
    return limit / min(width, height) if min(width, height) < limit else 1.0


def _limit_opencv_threads(threads: int) -> None:
    """At most *threads* OpenCV threads in this process (rapidocr's resizing and cropping)."""
    try:
        import cv2
    except ImportError:  # rapidocr brings it; without it there is nothing to limit
        return
    current = int(cv2.getNumThreads())
    if current <= 0 or current > threads:
        cv2.setNumThreads(threads)


class RapidOcrEngine:
    """PP-OCR models through ``rapidocr`` on onnxruntime (CPU, ``threads`` intra-op threads).

    ``det_max_side``: large images are searched for text at this long side (:data:`DET_MAX_SIDE`;
    ``None``: rapidocr's own rule, never shrinking).

    Blank margins are cut off before the search (:func:`content_box`): the detector's time grows with
    the pixels it is given, and a page's margins, the padding under a figure strip
    (:mod:`~ragwright.parse.pdf.images`) or a logo's empty canvas hold no text. The part kept is searched
    at the scale the whole image would have been (:func:`detector_ratio`), so the same text is found
    at the same size, and recognition reads the same crops; boxes are returned in the whole image's
    pixels. ``crop=False`` searches the whole image.
    """

    name = "rapidocr"

    def __init__(self, threads: int = 1, *, det_max_side: int | None = DET_MAX_SIDE, crop: bool = True) -> None:
        module = require("rapidocr", "ocr", "OCR of scanned pages")
        _limit_opencv_threads(threads)
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
        self.crop = crop
        self.searched: tuple[int, int] | None = None  # the size of the part of the last image searched
        self._lock = threading.Lock()

    def _size_detector(self, width: int, height: int, part: tuple[int, int] | None = None) -> float | None:
        """Cap the detector's input for a large image (a speed setting: when rapidocr's internals differ
        from what this expects, its own rule applies unchanged, and ``None`` is returned); the scale the
        detector gives a *width* x *height* image. With *part* (the size of the piece of such an image
        actually handed over), the piece is searched at the whole image's scale."""
        load = getattr(self._engine, "_load_det_model", None)
        detector = load() if callable(load) else None
        if detector is None or not hasattr(detector, "limit_type") or not hasattr(detector, "limit_side_len"):
            return None
        if self._default_limit is None:
            self._default_limit = (detector.limit_type, detector.limit_side_len)
        cap = self.det_max_side
        if cap is not None and max(width, height) > cap:
            detector.limit_type, detector.limit_side_len = "max", cap
        else:
            detector.limit_type, detector.limit_side_len = self._default_limit
        if str(detector.limit_type) not in ("max", "min"):
            return None
        ratio = detector_ratio(str(detector.limit_type), float(detector.limit_side_len), width, height)
        if part is not None:
            if ratio <= 1.0:
                detector.limit_type, detector.limit_side_len = "max", ratio * max(part)
            else:
                detector.limit_type, detector.limit_side_len = "min", ratio * min(part)
        return ratio

    def recognize(self, image: Any) -> list[OcrLine]:
        np = require("numpy", "")  # a base dependency
        pixels = np.ascontiguousarray(np.asarray(image.convert("RGB"))[:, :, ::-1])  # RGB -> BGR
        with self._lock:
            result, dx, dy, sx, sy = self._run(pixels)
        if result.boxes is None or result.txts is None or result.scores is None:
            return []
        out: list[OcrLine] = []
        for box, text, score in zip(result.boxes, result.txts, result.scores, strict=False):
            xs = [(float(p[0]) + dx) * sx for p in box]
            ys = [(float(p[1]) + dy) * sy for p in box]
            if str(text).strip():
                out.append(OcrLine(str(text).strip(), min(xs), min(ys), max(xs), max(ys), float(score)))
        return out

    def _run(self, pixels: Any) -> tuple[Any, int, int, float, float]:
        """rapidocr's result for *pixels*, with the offset and scales taking its boxes back to *pixels*."""
        np = require("numpy", "")
        sx = sy = 1.0
        shrink = getattr(self._engine, "preprocess_img", None)
        limit = getattr(self._engine, "max_side_len", None)
        if self.crop and callable(shrink) and isinstance(limit, int | float) and max(pixels.shape[:2]) > limit:
            # rapidocr shrinks an image over its max_side_len before anything else: done here first, so
            # the piece cut out holds the very pixels it would have searched and read
            pixels, record = shrink(pixels)
            sx, sy = float(record["preprocess"]["ratio_w"]), float(record["preprocess"]["ratio_h"])
        height, width = int(pixels.shape[0]), int(pixels.shape[1])
        box = content_box(pixels) if self.crop else None
        ratio = self._size_detector(width, height)
        if box is not None and ratio is not None:
            # the piece starts and ends on the detector's 32-pixel grid of the whole image, so the
            # network sees its pixels where it would have seen them
            step = 32 / ratio
            x0, y0 = (int(math.floor(v / step) * step) for v in box[:2])
            x1 = min(width, x0 + math.ceil(math.ceil((box[2] - x0) / step) * step))
            y1 = min(height, y0 + math.ceil(math.ceil((box[3] - y0) / step) * step))
            if (x1 - x0) * (y1 - y0) <= 0.9 * width * height and min(x1 - x0, y1 - y0) >= 2 * CROP_MARGIN:
                self.searched = (x1 - x0, y1 - y0)
                self._size_detector(width, height, (x1 - x0, y1 - y0))
                return self._engine(np.ascontiguousarray(pixels[y0:y1, x0:x1])), x0, y0, sx, sy
        self.searched = (width, height)
        return self._engine(pixels), 0, 0, sx, sy


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
