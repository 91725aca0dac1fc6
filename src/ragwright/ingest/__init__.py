"""Ingestion: sources → change detection → parse → chunk → embed → index → registry."""

from ragwright.ingest.pipeline import IngestPipeline
from ragwright.ingest.report import IngestFailure, IngestReport

__all__ = ["IngestFailure", "IngestPipeline", "IngestReport"]
