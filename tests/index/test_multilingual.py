"""The language-aware analyzer (``auto``), language detection and the BM25 index built with them."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragwright.index import Bm25Index, get_analyzer
from ragwright.index.language import chunk_languages, detect_language
from ragwright.index.multilingual import LanguageAnalyzer, identifier_terms
from ragwright.index.stopwords import stop_words_for

DOCS = {
    "de-haus": "Die Häuser am Stadtrand haben große Fenster und kleine Gärten.",
    "de-bahn": "Der Zug nach München fährt stündlich vom Hauptbahnhof ab.",
    "fr-maison": "Les maisons anciennes du village possèdent des jardins fleuris.",
    "fr-train": "Le train pour Lyon part toutes les heures de la gare centrale.",
    "es-casa": "Las casas antiguas del pueblo tienen ventanas muy grandes.",
    "es-tren": "El tren a Sevilla sale cada hora desde la estación principal.",
    "en-house": "The old houses in the village have large gardens and wide windows.",
    "en-train": "The train to Boston leaves every hour from the central station.",
    "zh": "人工智能正在改变医疗诊断的方式。",
    "ja": "東京タワーは東京の有名な観光地です。",
    "ko": "한국어 형태소 분석은 검색 품질에 중요합니다.",
}


@pytest.fixture(scope="module")
def index() -> Bm25Index:
    idx = Bm25Index("auto")
    idx.upsert(DOCS.items())  # no language given: the index detects each text's
    return idx


def top(index: Bm25Index, query: str) -> str:
    hits = index.search(query, 3)
    assert hits, f"nothing found for {query!r}"
    return hits[0][0]


def test_auto_is_the_default_analyzer_of_stores() -> None:
    from ragwright.stores.memory import MemoryStore

    assert MemoryStore().keyword_analyzer == "auto/1"
    assert get_analyzer("auto").name == get_analyzer("auto/1").name == "auto/1"


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("Haus mit Fenstern", "de-haus"),  # German inflection: Häuser/Haus, Fenster/Fenstern
        ("Garten", "de-haus"),
        ("stündlicher Zug", "de-bahn"),
        ("maison ancienne", "fr-maison"),  # French plural and gender: maisons anciennes
        ("jardin fleuri", "fr-maison"),
        ("casa antigua con ventana", "es-casa"),  # Spanish: casas antiguas, ventanas
        ("estaciones", "es-tren"),
        ("house window", "en-house"),  # English: houses, windows
        ("医疗诊断", "zh"),
        ("東京の観光", "ja"),
        ("검색 품질", "ko"),
    ],
)
def test_each_language_finds_its_inflected_document(index: Bm25Index, query: str, expected: str) -> None:
    assert top(index, query) == expected


def test_the_index_counts_languages(index: Bm25Index) -> None:
    langs = index.languages
    assert {"de", "fr", "es", "en", "zh", "ja", "ko"} <= set(langs)
    assert langs["de"] == langs["fr"] == langs["es"] == langs["en"] == 2


def test_a_query_in_another_language_than_most_documents() -> None:
    idx = Bm25Index("auto")
    english = [(f"en{i}", f"Report {i} on the quarterly houses market and train schedules.") for i in range(60)]
    idx.upsert([*english, ("de", "Die alten Häuser wurden im Frühjahr renoviert.", "de")])
    assert idx.languages["en"] == 60 and idx.languages["de"] == 1
    assert top(idx, "renovierte Häuser") == "de"  # German stemming applies though German is 1 text in 61


def test_stop_words_and_stems_follow_the_language() -> None:
    auto = LanguageAnalyzer()
    assert auto.index_terms("Die Häuser und die Gärten", "de") == ["haus", "gart"]
    assert auto.index_terms("The houses and the gardens", "en") == ["hous", "garden"]
    assert auto.index_terms("Les maisons et les jardins", "fr") == ["maison", "jardin"]
    assert auto.index_terms("Die Häuser", None) == ["die", "häuser"]  # unknown language: neutral
    assert auto.index_terms("人工智能", "zh") == ["人工", "工智", "智能"]  # CJK: bigrams, no stems, no stops
    assert "der" in stop_words_for("de") and "the" in stop_words_for("en") and stop_words_for("ja") == frozenset()


def test_a_short_query_is_stemmed_like_the_corpus() -> None:
    auto = LanguageAnalyzer()
    assert detect_language("cobalt shipment 00196", min_confidence=0.6) is None  # too short to tell
    assert auto.query_terms("cobalt shipments 00196", {"en": 100}) == ["cobalt", "shipment", "00196"]


def test_identifiers_are_kept_whole_beside_their_parts() -> None:
    assert identifier_terms("See INV-2024-0042, v2.3.1 and 10.0.12.7; ISO 27001:2013.") == [
        "inv-2024-0042",
        "v2.3.1",
        "10.0.12.7",
        "27001:2013",
    ]
    assert identifier_terms("well-known state-of-the-art e-mail") == []  # no digit: ordinary words
    terms = LanguageAnalyzer().index_terms("Invoice INV-2024-0042 is due.", "en")
    assert {"inv", "2024", "0042", "inv-2024-0042"} <= set(terms)


def test_identifier_record_outranks_its_near_duplicates() -> None:
    idx = Bm25Index("auto")
    idx.upsert((f"r{i}", f"Release notes for Atlas v2.{i}.1: improved startup time.", "en") for i in range(10))
    idx.upsert([("r-x", "Release notes for Atlas v2.3.10: improved startup time.", "en")])
    assert top(idx, "Atlas v2.3.1 release notes") == "r3"
    assert top(idx, "v2.3.10") == "r-x"


def test_mixed_language_document_keeps_each_chunks_language() -> None:
    chunks = [
        "The committee met on Tuesday and approved the annual budget for the research department.",
        "Der Ausschuss hat am Dienstag den Jahreshaushalt für die Forschungsabteilung genehmigt.",
        "ok",  # too short to tell: the document's language
    ]
    langs = chunk_languages(chunks)
    assert langs[0] == "en" and langs[1] == "de" and langs[2] in {"en", "de"}


def test_snapshot_keeps_languages(index: Bm25Index, tmp_path: Path) -> None:
    index.save(tmp_path / "bm25.npz")
    loaded = Bm25Index.load(tmp_path / "bm25.npz")
    assert loaded.analyzer_name == "auto/1" and loaded.languages == index.languages
    assert top(loaded, "Haus mit Fenstern") == "de-haus"
    loaded.remove(["de-haus"])
    assert loaded.languages["de"] == 1


def test_the_fuzzy_analyzer_finds_misspelled_and_ocr_damaged_words() -> None:
    docs = [
        ("polaro", "Polarographic measurement of oxygen tension in blood.", "en"),
        ("modern", "Modern aircraft wings are designed with composite materials.", "en"),
        ("other", "Quarterly tax filings are due at the end of each quarter.", "en"),
    ]
    fuzzy, auto = Bm25Index("fuzzy"), Bm25Index("auto")
    fuzzy.upsert(docs)
    auto.upsert(docs)
    assert auto.search("polarography", 3) == []  # stemming does not join these forms
    assert top(fuzzy, "polarography") == "polaro"
    assert top(fuzzy, "rnodern aircraft wlngs") == "modern"  # OCR's rn -> m and a misread i
    assert get_analyzer("fuzzy").name == "fuzzy/1"
    assert "#pol" in LanguageAnalyzer.__subclasses__()[0]().index_terms("Polarographic", "en")
