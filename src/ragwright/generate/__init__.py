"""Answer generation: from retrieved sources to a cited answer, or an honest decline."""

from ragwright.generate.extractive import ExtractiveAnswerer

__all__ = ["ExtractiveAnswerer"]
