"""Retrieval: the behaviour chain from a question to ranked, filtered, explained results."""

from ragwright.retrieve.pipeline import Retriever

__all__ = ["Retriever"]
