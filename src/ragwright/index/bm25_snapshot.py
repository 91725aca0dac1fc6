"""Snapshots of a :class:`~ragwright.index.bm25.Bm25Index`: one numpy ``.npz`` file, no pickle.

The file holds the live documents only (tombstones are dropped, slots renumbered) in a CSC-like
layout: ``indptr`` over the terms, then the postings' document numbers and term frequencies; chunk ids
and terms are UTF-8 blobs with offsets. ``meta`` is JSON: the format name and version, the analyzer's
versioned name, ``k1``, ``b`` and the languages the texts were analysed in (``doc_lang`` indexes that
list per document, -1 for unknown). A snapshot is refused (:class:`~ragwright.errors.ConfigError`) when
its format version or analyzer differs from the loading code's, and reported as a
:class:`~ragwright.errors.StoreError` when it is unreadable or inconsistent.
"""

from __future__ import annotations

import itertools
import json
import os
import tempfile
from array import array
from collections import Counter
from collections.abc import Sequence
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from ragwright.errors import ConfigError, StoreError
from ragwright.index.analyzers import Analyzer, get_analyzer

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from ragwright.index.bm25 import Bm25Index

__all__ = ["FORMAT", "FORMAT_VERSION", "load_snapshot", "save_snapshot"]

FORMAT: Final = "ragwright.bm25"
FORMAT_VERSION: Final = 2
_ARRAYS: Final = (
    "meta",
    "ids",
    "ids_offsets",
    "terms",
    "terms_offsets",
    "doc_len",
    "doc_lang",
    "indptr",
    "post_slots",
    "post_tf",
)


def _encode(strings: Sequence[str]) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.int64]]:
    import numpy as np

    encoded = [s.encode("utf-8", "surrogatepass") for s in strings]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded)), out=offsets[1:])
    return np.frombuffer(b"".join(encoded), dtype=np.uint8), offsets


def _decode(blob: npt.NDArray[np.uint8], offsets: npt.NDArray[np.int64]) -> list[str]:
    data = blob.tobytes()
    bounds = offsets.tolist()
    return [data[a:z].decode("utf-8", "surrogatepass") for a, z in itertools.pairwise(bounds)]


def save_snapshot(index: Bm25Index, path: str | PathLike[str]) -> None:
    """Write *index* to *path* atomically (a temporary file beside it, then a rename)."""
    import numpy as np

    with index._lock:
        view = index._current()
        alive = np.ones(view.n_slots, dtype=bool)
        alive[view.dead] = False
        renumber = (np.cumsum(alive) - 1).astype(np.int32)
        live = np.flatnonzero(alive)
        ids = [view.ids[s] for s in live.tolist()]
        doc_len = np.frombuffer(index._dl, dtype=np.int64)[live]
        languages = sorted({lang for lang in index._lang if lang})
        code_of = {lang: i for i, lang in enumerate(languages)}
        doc_lang = np.array([code_of.get(index._lang[s] or "", -1) for s in live.tolist()], dtype=np.int16)
        terms: list[str] = []
        slot_parts: list[npt.NDArray[np.int32]] = []
        tf_parts: list[npt.NDArray[np.uint16] | npt.NDArray[np.float32]] = []
        for term, slots, tfs in zip(index._vocab, view.slots, view.tfs, strict=False):
            keep = alive[slots]
            if keep.any():
                terms.append(term)
                slot_parts.append(renumber[slots[keep]])
                tf_parts.append(tfs[keep])
        meta = {"format": FORMAT, "version": FORMAT_VERSION, "analyzer": index.analyzer_name, "languages": languages}
        meta |= {"k1": index.k1, "b": index.b}
    indptr = np.zeros(len(terms) + 1, dtype=np.int64)
    np.cumsum([p.size for p in slot_parts], out=indptr[1:])
    ids_blob, ids_offsets = _encode(ids)
    terms_blob, terms_offsets = _encode(terms)
    empty_i, empty_f = np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.float32)
    arrays: dict[str, Any] = {
        "meta": np.frombuffer(json.dumps(meta).encode("utf-8"), dtype=np.uint8),
        "ids": ids_blob,
        "ids_offsets": ids_offsets,
        "terms": terms_blob,
        "terms_offsets": terms_offsets,
        "doc_len": doc_len,
        "doc_lang": doc_lang,
        "indptr": indptr,
        "post_slots": np.concatenate(slot_parts) if slot_parts else empty_i,
        "post_tf": (np.concatenate(tf_parts) if tf_parts else empty_f).astype(np.int32),
    }
    target = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            np.savez(fh, **arrays)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _read(path: str | PathLike[str]) -> dict[str, Any]:
    import numpy as np

    try:
        with np.load(path, allow_pickle=False) as z:
            missing = [name for name in _ARRAYS if name not in z.files]
            if missing:
                raise StoreError(f"{path} is not a BM25 snapshot: it lacks {', '.join(missing)}")
            arrays: dict[str, Any] = {name: z[name] for name in _ARRAYS}
            meta = json.loads(arrays.pop("meta").tobytes().decode("utf-8"))
    except (StoreError, FileNotFoundError):
        raise
    except Exception as exc:  # not a zip, a damaged member, bad JSON …: whatever it is, it is unreadable
        raise StoreError(f"cannot read the BM25 snapshot {path}: {exc}") from exc
    if not isinstance(meta, dict):
        raise StoreError(f"{path}: the snapshot's meta record is not an object")
    arrays["meta"] = meta
    return arrays


def load_snapshot(cls: type[Bm25Index], path: str | PathLike[str], analyzer: Analyzer | None = None) -> Bm25Index:
    """Read a snapshot written by :func:`save_snapshot` into a new ``cls`` instance."""
    import numpy as np

    from ragwright.index.bm25 import tf_array

    z = _read(path)
    meta: dict[str, Any] = z["meta"]
    if meta.get("format") != FORMAT or meta.get("version") != FORMAT_VERSION:
        raise ConfigError(
            f"{path} holds format {meta.get('format')!r} version {meta.get('version')!r}; this ragwright reads "
            f"{FORMAT!r} version {FORMAT_VERSION}: rebuild the index from the chunk texts",
            field="path",
            value=str(path),
        )
    name = meta.get("analyzer")
    if not isinstance(name, str):
        raise StoreError(f"{path}: the snapshot does not name its analyzer")
    if analyzer is None:
        try:
            analyzer = get_analyzer(name)
        except ConfigError as exc:
            raise ConfigError(
                f"{path} was built with analyzer {name!r}, which this ragwright does not provide: {exc}; "
                "pass that analyzer to load(), or rebuild the index",
                field="analyzer",
                value=name,
            ) from exc
    elif analyzer.name != name:
        raise ConfigError(
            f"{path} was built with analyzer {name!r}, not {analyzer.name!r}: its terms would not match; "
            "rebuild the index with the new analyzer",
            field="analyzer",
            value=analyzer.name,
        )
    index = cls(analyzer, k1=float(meta.get("k1", 1.5)), b=float(meta.get("b", 0.75)))
    ids = _decode(z["ids"], z["ids_offsets"])
    terms = _decode(z["terms"], z["terms_offsets"])
    doc_len = z["doc_len"].astype(np.int64)
    languages = meta.get("languages", [])
    doc_lang = z["doc_lang"].astype(np.int64)
    indptr = z["indptr"].astype(np.int64, copy=False)
    post_slots = z["post_slots"].astype(np.int32, copy=False)
    post_tf = tf_array(z["post_tf"])
    n_docs, n_terms = len(ids), len(terms)
    consistent = (
        doc_len.shape == (n_docs,)
        and doc_lang.shape == (n_docs,)
        and isinstance(languages, list)
        and all(isinstance(lang, str) and lang for lang in languages)
        and (n_docs == 0 or (int(doc_lang.min()) >= -1 and int(doc_lang.max()) < len(languages)))
        and indptr.shape == (n_terms + 1,)
        and indptr[0] == 0
        and bool(np.all(np.diff(indptr) > 0))
        and indptr[-1] == post_slots.size == post_tf.size
        and (post_slots.size == 0 or (int(post_slots.min()) >= 0 and int(post_slots.max()) < n_docs))
        and len(set(ids)) == n_docs
        and len(set(terms)) == n_terms
    )
    if not consistent:
        raise StoreError(f"{path}: the BM25 snapshot is inconsistent (damaged or hand-edited); rebuild the index")
    langs: list[str | None] = [languages[i] if i >= 0 else None for i in doc_lang.tolist()]
    _restore(index, ids, terms, doc_len, langs, indptr, post_slots, post_tf)
    return index


def _restore(
    index: Bm25Index,
    ids: list[str],
    terms: list[str],
    doc_len: npt.NDArray[np.int64],
    langs: list[str | None],
    indptr: npt.NDArray[np.int64],
    post_slots: npt.NDArray[np.int32],
    post_tf: npt.NDArray[np.uint16] | npt.NDArray[np.float32],
) -> None:
    """Fill the empty *index* from decoded snapshot arrays (no pending work, no tombstones)."""
    import numpy as np

    bounds = indptr.tolist()
    pairs = list(itertools.pairwise(bounds))
    with index._lock:
        index._vocab = {term: i for i, term in enumerate(terms)}
        index._ids = ids
        index._slot_of = {cid: i for i, cid in enumerate(ids)}
        index._dl = array("q", doc_len.astype(np.int64).tobytes())
        index._total_len = int(doc_len.sum())
        index._lang = langs
        index._languages = Counter(lang for lang in langs if lang)
        index._languages_view = None
        index._slots = [post_slots[a:z] for a, z in pairs]
        index._tfs = [post_tf[a:z] for a, z in pairs]
        index._dead = []
        index._pending_docs, index._pending_sizes = array("i"), array("i")
        index._pending_tids, index._pending_tfs = array("i"), array("I")
        index._view = None
