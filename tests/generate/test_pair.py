"""The pair signal's weights file and passage (the chat model's yes/no on the best evidence)."""

import json
from pathlib import Path

import pytest

from ragwright.errors import ConfigError
from ragwright.generate.evidence import gather
from ragwright.generate.pair import load_pair_models, logit, passage, stacked_features
from ragwright.generate.question import analyze
from ragwright.model.chunk import Chunk
from ragwright.model.results import SearchResult
from ragwright.testing.doubles import HashingEmbedder

MODEL = {"features": ["lex_logit", "pair_logit"], "mean": [0, 0], "scale": [1, 1], "coef": [1, 2], "intercept": 0}


def test_weights_load_by_chat_model_name(tmp_path: Path) -> None:
    path = tmp_path / "pair.json"
    path.write_text(json.dumps({"llama.cpp:m": {**MODEL, "threshold": 0.4}}))
    models = load_pair_models(str(path))
    assert set(models) == {"llama.cpp:m"} and models["llama.cpp:m"].threshold == 0.4
    x = stacked_features(0.5, 0.5)
    assert x == {"lex_logit": 0.0, "pair_logit": 0.0} and models["llama.cpp:m"].probability(x) == 0.5
    assert models["llama.cpp:m"].probability(stacked_features(0.5, 0.9)) > 0.5


def test_bad_weights_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "pair.json"
    path.write_text("{not json")
    with pytest.raises(ConfigError, match="not valid JSON"):
        load_pair_models(str(path))
    path.write_text(json.dumps({"m": {**MODEL, "features": ["lex_logit", "cosine"]}}))
    with pytest.raises(ConfigError, match="unknown features"):
        load_pair_models(str(path))


def test_logit_is_finite_at_the_edges() -> None:
    assert logit(0.0) < -10 and logit(1.0) > 10 and abs(logit(0.5)) < 1e-12


def test_the_passage_is_the_best_unit_with_its_neighbours() -> None:
    before, unit, after = (
        "Ducks are birds of the water.",
        "IBM was founded in 1911 in New York.",
        "It sells many computers.",
    )
    text = f"{before} {unit} {after} Cats purr loudly at night."
    results = [SearchResult(Chunk.create("d", text, 0), 0.5)]
    ev = gather(analyze("When was IBM founded?"), results, HashingEmbedder())
    i = next(k for k, u in enumerate(ev.units) if "1911" in u.text)
    assert passage(ev, i) == f"{before} {unit} {after}"


def test_the_shipped_weights_load_for_the_local_small_model() -> None:
    models = load_pair_models()
    assert models, "pair_models.json ships with the package"
    for name, model in models.items():
        assert name.startswith("llama.cpp:") and set(model.features) <= {"lex_logit", "pair_logit"}
        assert 0.0 < model.threshold < 1.0 and all(c > 0 for c in model.coef)  # both readings push the same way
