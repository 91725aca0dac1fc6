"""``ragwright.toml``: every table maps onto its option class, unknown keys are refused with a suggestion,
flags and files mean the same, and what ``config show`` prints reads back into the same settings."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from ragwright.config import load_settings
from ragwright.config.render import to_toml
from ragwright.config.settings import Settings
from ragwright.errors import ConfigError
from ragwright.options import PRESETS, FeedbackOptions, ParentOptions


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "ragwright.toml"
    path.write_text(text)
    return path


def test_no_file_means_the_facade_defaults(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RAGWRIGHT_CONFIG", raising=False)
    settings = load_settings(cwd=tmp_path)
    assert settings.source is None and settings.mode == "hybrid"
    assert settings.retrieval.use_hybrid_search and settings.retrieval.feedback == FeedbackOptions()
    assert settings.answers.use_hybrid_search and settings.answers.top_k == 5
    assert settings.transforms.hyde is None and settings.strategies.tags is None
    assert not settings.cache.enabled and settings.parents is None


def test_every_table_maps_onto_its_option_class(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
store = "data/store.db"
llm = "openai:gpt-4o-mini@http://127.0.0.1:9/v1"
reranker = "none"
keyword_analyzer = "fuzzy"
mode = "dense"

[retrieval]
top_k = 8
use_mmr = true
metadata_filter = { department = "hr", year = [2023, 2024] }
[retrieval.ensemble]
method = "rrf"
rrf_k = 30

[answers]
verify_answer = true
max_answer_tokens = 256

[transforms]
hyde = { hypothesis_count = 2 }
multi_query = true
[transforms.rewrite]
glossary = { PTO = "paid time off" }
[transforms.self_query.fields.department]
kind = "string"
values = ["hr", "finance"]

[strategies]
tags = true
time_weighting = { decay_rate = 0.005 }
deep_research = { max_depth = 2 }
adaptive = false

[cache]
redis_url = "redis://:secret@127.0.0.1:6379/0"
result_ttl_s = 60

[parents]
chunk_size = 1024

[chunking]
strategy = "semantic"

[ingest]
batch_size = 16
[ingest.parse]
ocr = false

[identity]
tenant = "acme"
groups = ["hr"]

[server]
allowed_hosts = ["rag.example.com"]
staging_dir = "uploads"
""",
    )
    s = load_settings(path)
    assert s.source == path and s.store == str(tmp_path / "data" / "store.db")  # relative to the file
    assert s.llm.startswith("openai:") and s.keyword_analyzer == "fuzzy" and s.mode == "dense"
    assert not s.retrieval.use_hybrid_search  # the dense preset, then [retrieval]
    assert s.retrieval.top_k == 8 and s.retrieval.use_mmr and s.retrieval.ensemble is not None
    assert (s.retrieval.ensemble.method, s.retrieval.ensemble.rrf_k) == ("rrf", 30)
    assert s.answers.top_k == 8 and s.answers.verify_answer and s.answers.max_answer_tokens == 256
    assert s.answers.metadata_filter == s.retrieval.metadata_filter is not None
    assert s.transforms.hyde is not None and s.transforms.hyde.hypothesis_count == 2
    assert s.transforms.multi_query is not None and s.transforms.rewrite is not None
    assert s.transforms.rewrite.glossary_map == {"PTO": "paid time off"}
    assert s.transforms.self_query is not None and s.transforms.self_query.field_map["department"].values == (
        "hr",
        "finance",
    )
    # a configured stage turns its per-call switch on
    assert s.retrieval.use_hyde and s.retrieval.use_query_rewrite and s.retrieval.use_self_query
    assert s.strategies.tags is not None and s.strategies.time_weighting is not None
    assert s.strategies.time_weighting.decay_rate == 0.005 and s.strategies.deep_research is not None
    assert s.strategies.adaptive is None and s.strategies.crag is not None
    assert s.cache.enabled and s.cache.redis_url and s.cache.options.result_ttl_s == 60
    assert s.parents == ParentOptions(chunk_size=1024)
    assert s.chunking.strategy == "semantic" and s.ingest.batch_size == 16 and not s.ingest.parse.ocr
    assert s.identity is not None and (s.identity.tenant, s.identity.groups) == ("acme", ("hr",))
    assert s.server["staging_dir"] == str(tmp_path / "uploads")
    shown = s.to_dict()
    assert shown["cache"]["redis_url"] == "redis://:***@127.0.0.1:6379/0"  # no secret printed


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("embeder = 'default'", "unknown configuration key 'embeder'; did you mean 'embedder'?"),
        ("[retrievel]\ntop_k = 3", "did you mean 'retrieval'?"),
        ("[retrieval]\ntop_kk = 3", "[retrieval] unknown option 'top_kk' for RetrievalOptions; did you mean 'top_k'?"),
        ("[transforms.hyde]\nhypothesis_cont = 2", "[transforms.hyde] unknown option 'hypothesis_cont'"),
        ("[strategies.time_weighting]\ndecay = 1", "[strategies.time_weighting] unknown option 'decay'"),
        ("[cache]\nresult_ttl = 3", "did you mean 'result_ttl_s'?"),
        ("[chunking]\nstrategy = 'fancy'", "[chunking] strategy='fancy' is invalid"),
        ("[retrieval]\ntop_k = 0", "[retrieval] top_k=0 is invalid: an integer >= 1"),
        ("[retrieval]\nfilter = 'x'", "[retrieval] filter cannot be set in a configuration file"),
        ("[answers]\nretrieval = {top_k = 2}", "[answers] retrieval cannot be set in a configuration file"),
        ("[answers]\ntop_k = 0", "[answers] top_k=0 is invalid: an integer >= 1"),
        ("[transforms]\nhyde = 3", "[transforms.hyde] must be true (the defaults), false (off) or a table"),
        ("mode = 'sparse'", "mode='sparse' is invalid: one of 'hybrid', 'dense', 'bm25'"),
        ("[identity]\nteam = 'x'", "[identity] unknown key 'team'"),
        ("[server]\nkey = []", "[server] unknown server config key(s) ['key']"),
        ("[transforms.self_query]\nmode = 'soft'", "self_query"),
        ("[retrieval\n", "is not valid TOML"),
    ],
)
def test_mistakes_are_refused_with_the_file_and_a_suggestion(tmp_path: Path, text: str, message: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as err:
        load_settings(path)
    assert message in str(err.value) and str(path) in str(err.value)


def test_an_explicit_stage_switch_wins_over_the_stage(tmp_path: Path) -> None:
    s = load_settings(write(tmp_path, "[retrieval]\nuse_query_rewrite = false\n[transforms]\nrewrite = true\n"))
    assert s.transforms.rewrite is not None and not s.retrieval.use_query_rewrite


def test_where_the_file_comes_from(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RAGWRIGHT_CONFIG", raising=False)
    write(tmp_path, "[retrieval]\ntop_k = 3\n")
    assert load_settings(cwd=tmp_path).retrieval.top_k == 3  # ./ragwright.toml
    other = tmp_path / "other.toml"
    other.write_text("[retrieval]\ntop_k = 4\n")
    monkeypatch.setenv("RAGWRIGHT_CONFIG", str(other))
    assert load_settings(cwd=tmp_path).retrieval.top_k == 4  # the environment wins over the folder
    explicit = tmp_path / "explicit.toml"
    explicit.write_text("[retrieval]\ntop_k = 6\n")
    assert load_settings(explicit, cwd=tmp_path).retrieval.top_k == 6  # --config wins over both
    with pytest.raises(ConfigError, match="--config: no configuration file"):
        load_settings(tmp_path / "missing.toml")
    monkeypatch.setenv("RAGWRIGHT_CONFIG", str(tmp_path / "gone.toml"))
    with pytest.raises(ConfigError, match="RAGWRIGHT_CONFIG: no configuration file"):
        load_settings(cwd=tmp_path)


def test_flags_mean_what_the_file_means(tmp_path: Path) -> None:
    s = load_settings(write(tmp_path, "[transforms.hyde]\nhypothesis_count = 1\n[retrieval]\nuse_hyde = false\n"))
    assert s.transforms.hyde is not None and not s.retrieval.use_hyde
    on = s.with_overrides(flags={"hyde": True, "top_k": 2, "mode": "dense", "fusion": "rrf", "feedback": "rm3"})
    assert on.transforms.hyde is not None and on.transforms.hyde.hypothesis_count == 1  # the file's table kept
    assert on.retrieval.use_hyde and on.retrieval.top_k == 2 and not on.retrieval.use_hybrid_search
    assert on.retrieval.ensemble is not None and on.retrieval.ensemble.method == "rrf"
    assert on.retrieval.feedback == FeedbackOptions(rm3=True, rocchio=False)
    off = on.with_overrides(flags={"hyde": False, "feedback": "none", "parents": False})
    assert not off.retrieval.use_hyde and off.retrieval.feedback is None and off.parents is None
    flags = {"tags": True, "decay_rate": 0.5, "deep_research": True, "crag": True, "parents": True, "cache": True}
    more = s.with_overrides(flags=flags)
    assert more.strategies.tags is not None and more.retrieval.use_tag_retrieval
    assert more.strategies.time_weighting is not None and more.strategies.time_weighting.decay_rate == 0.5
    assert more.strategies.deep_research is not None and more.retrieval.use_crag
    assert more.parents == ParentOptions() and more.cache.enabled
    assert s.with_overrides(flags={"rerank": True}).reranker == "llm"  # the offline default reranker
    assert s.with_overrides({"reranker": "/models/ce"}, {"rerank": True}).reranker == "/models/ce"
    with pytest.raises(ConfigError, match="self_query"):
        s.with_overrides(flags={"self_query": True})  # no allow-listed fields: nothing the model may filter on


def test_what_config_show_prints_reads_back(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "mode = 'bm25'\n[retrieval]\nmetadata_filter = {team = ['a', 'b']}\nfeedback = false\n"
        "[transforms.rewrite]\nglossary = {PTO = 'paid time off'}\n[transforms.self_query.fields.team]\n"
        "values = ['a', 'b']\n[strategies]\ncrag = false\ntags = {keys = ['team']}\n[cache]\nenabled = true\n"
        "[parents]\noverlap = 50\n[identity]\ntenant = 'acme'\n",
    )
    first = load_settings(path)
    data = first.to_dict()
    data.pop("source")
    text = to_toml(data)
    tomllib.loads(text)
    again = tmp_path / "again.toml"
    again.write_text(text)
    second = load_settings(again)
    assert second.to_dict() | {"source": None} == first.to_dict() | {"source": None}
    assert second.retrieval == first.retrieval and second.transforms == first.transforms
    assert second.strategies == first.strategies and second.answers == first.answers


def test_settings_defaults_equal_the_facade_defaults() -> None:
    s = Settings.from_dict({})
    assert s.retrieval.use_hybrid_search == PRESETS["hybrid"]["use_hybrid_search"]
    assert s == Settings()


def test_the_readme_example_is_a_valid_configuration(tmp_path: Path) -> None:
    import re

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```toml\n(.*?)```", readme, re.S)
    assert blocks
    for block in blocks:
        settings = load_settings(write(tmp_path, block))
        assert settings.transforms.hyde is not None and settings.retrieval.use_hyde
        assert settings.identity is not None and settings.identity.tenant == "acme"
