"""Document statuses named by callers (CLI, HTTP server, MCP tools, the facade) are read in one place."""

import pytest

from ragwright.errors import ConfigError
from ragwright.model.records import DocumentStatus
from ragwright.rag import Rag
from ragwright.stores.memory import MemoryStore
from ragwright.testing.doubles import HashingEmbedder


def test_a_named_status_is_parsed_and_none_or_empty_means_every_status() -> None:
    assert DocumentStatus.parse("failed") is DocumentStatus.FAILED
    assert DocumentStatus.parse(DocumentStatus.DELETED) is DocumentStatus.DELETED
    assert DocumentStatus.parse(None) is None and DocumentStatus.parse("") is None


def test_an_unknown_status_says_which_exist() -> None:
    with pytest.raises(ConfigError, match="indexed, failed, deleted"):
        DocumentStatus.parse("indexd")


def test_the_facade_refuses_an_unknown_status_with_the_same_message() -> None:
    with Rag(MemoryStore(), HashingEmbedder()) as rag, pytest.raises(ConfigError, match="one of indexed"):
        rag.documents(status="gone")
