"""Ingestion: sources → change detection → parse → chunk → embed → index → registry."""

from ragwright.ingest.pipeline import IngestPipeline
from ragwright.ingest.reindex import EvalGate, ReindexReport
from ragwright.ingest.report import IngestFailure, IngestReport

__all__ = ["EvalGate", "IngestFailure", "IngestPipeline", "IngestReport", "ReindexReport"]
