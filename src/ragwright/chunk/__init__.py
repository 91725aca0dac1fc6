"""Chunkers: a Document in, linked Chunks out."""

from ragwright.chunk.structural import StructuralChunker

__all__ = ["StructuralChunker"]
