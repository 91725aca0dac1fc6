"""Ingestion's options (and parent-document chunking's), beside ingestion (re-exported by :mod:`ragwright.options`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from ragwright._validate import OptionsBase, check_bool, check_int
from ragwright.errors import ConfigError
from ragwright.parse.options import ParseOptions


@dataclass(frozen=True)
class IngestOptions(OptionsBase):
    """Options of an ingestion run: embedding batch size, deletion reconciliation, parsing limits.

    ``queue_size`` bounds how many parsed documents may wait for the embedder (backpressure);
    ``stage_raw`` keeps each file's raw bytes in the store by content hash (parsed documents are always
    cached), so a new chunker or model re-runs without re-reading sources or re-running OCR.

    ``delete_missing`` is sync mode: documents once listed under a folder or corpus and now absent are
    removed with every trace. Off by default (``ragwright ingest --sync`` / ``Rag.ingest(..., sync=True)``).
    """

    batch_size: int = 64
    delete_missing: bool = False
    parse: ParseOptions = field(default_factory=ParseOptions)
    queue_size: int = 256
    stage_raw: bool = True

    def __post_init__(self) -> None:
        check_int("batch_size", self.batch_size, minimum=1)
        check_int("queue_size", self.queue_size, minimum=1)
        check_bool("stage_raw", self.stage_raw)
        check_bool("delete_missing", self.delete_missing)
        if not isinstance(self.parse, ParseOptions):
            raise ConfigError.invalid("parse", self.parse, "a ParseOptions")


@dataclass(frozen=True)
class ParentOptions(OptionsBase):
    """Parent-document retrieval: children are searched, parents of ``chunk_size`` characters
    (``overlap`` shared between neighbours) are returned. Defaults 2048 / 100 as in the seed."""

    chunk_size: int = 2048
    overlap: int = 100

    def __post_init__(self) -> None:
        check_int("chunk_size", self.chunk_size, minimum=64)
        check_int("overlap", self.overlap, minimum=0)
        if self.overlap >= self.chunk_size:
            raise ConfigError.invalid("overlap", self.overlap, f"an integer < chunk_size ({self.chunk_size})")
