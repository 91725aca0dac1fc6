from __future__ import annotations

import subprocess
import sys

import pytest

from ragwright.errors import ConfigError
from ragwright.index import ENGLISH_STOP_WORDS, Analyzer, DefaultAnalyzer, EnglishAnalyzer, get_analyzer


@pytest.fixture(scope="module")
def default() -> DefaultAnalyzer:
    return DefaultAnalyzer()


@pytest.fixture(scope="module")
def english() -> EnglishAnalyzer:
    return EnglishAnalyzer()


def test_seed_examples(default: DefaultAnalyzer) -> None:
    assert default("the quick brown fox") == ["the", "quick", "brown", "fox"]
    assert default("人工智能是未来") == ["人工", "工智", "智能", "能是", "是未", "未来"]
    assert default("人工智能") == ["人工", "工智", "智能"]


@pytest.mark.parametrize(
    ("text", "terms"),
    [
        ("Привет, Мир!", ["привет", "мир"]),
        ("Ελληνικά ΚΕΙΜΕΝΑ", ["ελληνικά", "κειμενα"]),
        ("مرحبا بالعالم", ["مرحبا", "بالعالم"]),
        ("مَرْحَبًا", ["مَرْحَبًا"]),  # harakat (combining marks) stay inside the word
        ("שלום עולם", ["שלום", "עולם"]),
        ("हिन्दी भाषा", ["हिन्दी", "भाषा"]),  # Devanagari vowel signs are marks too
        ("naïve cafe\u0301", ["naïve", "cafe\u0301"]),
        ("ISO-27001, v2.5; snake_case", ["iso", "27001", "v2", "5", "snake", "case"]),
        ("", []),
        ("  ,.;  ", []),
    ],
)
def test_unicode_letter_digit_runs(default: DefaultAnalyzer, text: str, terms: list[str]) -> None:
    assert default(text) == terms


def test_casefold_not_lower(default: DefaultAnalyzer) -> None:
    assert default("Straße STRASSE") == ["strasse", "strasse"]
    assert default("HELLO World") == ["hello", "world"]
    assert default("ΣΟΦΟΣ σοφος") == default("σοφοσ ΣΟΦΟΣ")


def test_cjk(default: DefaultAnalyzer) -> None:
    assert default("GPT4は人工知能") == ["gpt4", "は人", "人工", "工知", "知能"]
    assert default("人") == ["人"]
    assert default("人 工") == ["人", "工"]  # single characters stay unigrams
    assert default("東京タワー") == ["東京", "京タ", "タワ", "ワー"]  # Han + Katakana run (ー is a letter)
    assert default("ひらがな・カタカナ") == ["ひら", "らが", "がな", "カタ", "タカ", "カナ"]  # ・ splits
    assert default("한국어 텍스트") == ["한국", "국어", "텍스", "스트"]
    assert default("ｶﾀｶﾅ") == ["ｶﾀ", "ﾀｶ", "ｶﾅ"]  # halfwidth katakana
    assert default("㐀㐁") == ["㐀㐁"]  # extension A
    assert default("豈更") == ["豈更"]  # compatibility ideographs
    assert default("𠀀𠀁𠀂") == ["𠀀𠀁", "𠀁𠀂"]  # extension B (outside the BMP)
    assert default("ABC漢字def") == ["abc", "漢字", "def"]


def test_thai_khmer_lao_left_as_runs(default: DefaultAnalyzer) -> None:
    assert default("ภาษาไทย ง่าย") == ["ภาษาไทย", "ง่าย"]
    assert default("ភាសាខ្មែរ") == ["ភាសាខ្មែរ"]
    assert default("ພາສາລາວ") == ["ພາສາລາວ"]


def test_english_stemming_and_stop_words(english: EnglishAnalyzer) -> None:
    assert english("The running dogs") == ["run", "dog"]
    assert english("Studies of the cells were STUDIED") == ["studi", "cell", "were", "studi"]
    assert english("to be or not to be") == []
    assert english("人工智能") == ["人工", "工智", "智能"]
    assert english.stem("connections") == "connect"


def test_english_stop_words_are_lucenes() -> None:
    assert len(ENGLISH_STOP_WORDS) == 33
    assert {"the", "a", "with", "will", "such"} <= ENGLISH_STOP_WORDS
    bm25s_stopwords = pytest.importorskip("bm25s.stopwords")
    assert frozenset(bm25s_stopwords.STOPWORDS_EN) == ENGLISH_STOP_WORDS


def test_get_analyzer_and_names() -> None:
    assert get_analyzer("default").name == "default/1"
    assert get_analyzer("english").name == "english/1"
    assert isinstance(get_analyzer("english/1"), EnglishAnalyzer)
    assert isinstance(DefaultAnalyzer(), Analyzer)
    with pytest.raises(ConfigError, match="default, english"):
        get_analyzer("german")
    with pytest.raises(ConfigError):
        get_analyzer("default/0")  # another version's terms would not match


def test_import_does_not_load_numpy() -> None:
    code = "import sys, ragwright.index; assert 'numpy' not in sys.modules, 'numpy imported'"
    subprocess.run([sys.executable, "-c", code], check=True)
