"""Retrieval options composed of parts beside the stage, the seed's flat names kept, overrides typed."""

from __future__ import annotations

import ast
import dataclasses
import inspect
import pickle
import typing
from pathlib import Path

import pytest

import ragwright
import ragwright.options as public
from ragwright.errors import ConfigError
from ragwright.rag import Rag
from ragwright.retrieve import options as home
from ragwright.retrieve.options import (
    FLAT_FIELDS,
    PARTS,
    PRESETS,
    PostprocessOptions,
    RetrievalOptions,
    RetrievalOverrides,
    SearchOptions,
)

PACKAGE = Path(ragwright.__file__).parent


def test_the_parts_hold_every_flat_name_once() -> None:
    names = [n for cls in PARTS.values() for n in cls.field_names()]
    assert len(names) == len(set(names)) == len(FLAT_FIELDS)
    top = [f.name for f in dataclasses.fields(RetrievalOptions)]
    assert top == ["top_k", "metadata_filter", "filter", "search", "postprocess", "transforms", "strategies"]
    assert len(RetrievalOptions.flat_names()) == 41  # the seed's flat option names, all still accepted


def test_flat_keywords_go_to_their_part_and_read_back() -> None:
    opts = RetrievalOptions(top_k=4, use_mmr=True, use_hybrid_search=True, use_crag=True, use_hyde=False)
    assert opts.postprocess.use_mmr and opts.use_mmr
    assert opts.search.use_hybrid_search and opts.arms == ("dense", "bm25", "sparse")
    assert opts.strategies.use_crag and not opts.transforms.use_hyde
    assert opts == RetrievalOptions(
        top_k=4,
        search=SearchOptions(use_hybrid_search=True),
        postprocess=PostprocessOptions(use_mmr=True),
        use_crag=True,
        use_hyde=False,
    )
    for name in FLAT_FIELDS:  # every flat attribute is the part's value
        assert getattr(opts, name) == getattr(getattr(opts, FLAT_FIELDS[name]), name)
    merged = opts.merged(neighbour_window=2, top_k=6)
    assert (merged.neighbour_window, merged.top_k, merged.use_mmr) == (2, 6, True)
    assert pickle.loads(pickle.dumps(merged)) == merged and hash(merged) == hash(pickle.loads(pickle.dumps(merged)))
    assert RetrievalOptions.from_dict({"top_k": 3, "use_redundancy_filter": True}).use_redundancy_filter


def test_a_part_given_whole_and_a_flat_keyword_for_it_combine() -> None:
    opts = RetrievalOptions(postprocess=PostprocessOptions(use_mmr=True), mmr_lambda=0.7)
    assert opts.use_mmr and opts.mmr_lambda == 0.7


def test_validation_names_the_field_in_its_part_and_across_parts() -> None:
    with pytest.raises(ConfigError, match="did you mean 'use_mmr'"):
        RetrievalOptions(use_mmrr=True)  # type: ignore[call-arg]
    with pytest.raises(ConfigError, match="mmr_lambda"):
        RetrievalOptions(mmr_lambda=2.0)
    with pytest.raises(ConfigError, match="candidate_count"):
        RetrievalOptions(top_k=10, candidate_count=5)  # a count below top_k: checked where top_k is known
    with pytest.raises(ConfigError, match="no search arm"):
        RetrievalOptions(use_dense_search=False)
    with pytest.raises(ConfigError, match="postprocess"):
        RetrievalOptions(postprocess=SearchOptions())  # type: ignore[arg-type]


def test_presets_are_one_table_in_retrievals_home() -> None:
    assert public.PRESETS is PRESETS and set(PRESETS) == {"hybrid", "dense", "bm25"}
    written = []
    for path in PACKAGE.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        if '"use_dense_search": False, "use_keyword_search": True' in text:
            written.append(str(path.relative_to(PACKAGE)))
    assert written == ["retrieve/options.py"]


def test_ragwright_options_reexports_every_class_from_its_home() -> None:
    assert public.RetrievalOptions is home.RetrievalOptions
    for name in public.__all__:
        assert getattr(public, name) is not None
    from ragwright.cache.options import CacheOptions
    from ragwright.retrieve.strategies.options import CragOptions

    assert public.CacheOptions is CacheOptions and public.CragOptions is CragOptions


def test_the_validation_toolkit_sits_at_the_bottom() -> None:
    tree = ast.parse((PACKAGE / "_validate.py").read_text(encoding="utf-8"))
    ours = {
        node.module
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("ragwright")
    }
    assert ours == {"ragwright.errors"}
    for module in ("cache/options.py", "retrieve/strategies/options.py", "retrieve/transforms/options.py"):
        assert "from ragwright.options import" not in (PACKAGE / module).read_text(encoding="utf-8")


def _override_type(function: typing.Any) -> typing.Any:
    (kwargs,) = [p for p in inspect.signature(function).parameters.values() if p.kind is p.VAR_KEYWORD]
    hints = typing.get_type_hints(function, include_extras=True)
    return hints[kwargs.name]


def test_per_call_overrides_are_typed_on_the_public_api() -> None:
    for method in (Rag.search, Rag.asearch):
        hint = _override_type(method)
        assert typing.get_origin(hint) is typing.Unpack and typing.get_args(hint) == (RetrievalOverrides,)
    for method in (Rag.ask, Rag.aask, Rag.ask_stream, Rag.aask_stream):
        hint = _override_type(method)
        assert typing.get_origin(hint) is typing.Unpack and typing.get_args(hint) == (public.RagOverrides,)
    for method, typed in (
        (RetrievalOptions.merged, RetrievalOverrides),
        (public.RagOptions.merged, public.RagOverrides),
    ):
        hint = _override_type(method)
        assert typing.get_origin(hint) is typing.Unpack and typing.get_args(hint) == (typed,)
    # the typed keys are exactly what the options accept (their types are checked by mypy --strict)
    keys = {k for cls in RetrievalOverrides.__mro__ for k in getattr(cls, "__annotations__", {})}
    assert keys == set(RetrievalOptions.field_names()) == RetrievalOverrides.__optional_keys__
    assert public.RagOverrides.__optional_keys__ == set(public.RagOptions.field_names())


def test_rag_options_forward_the_names_they_share_with_retrieval() -> None:
    shared = public.RagOptions.retrieval_fields()
    assert "top_k" in shared and "system_prompt" not in shared
    rag = public.RagOptions(top_k=2, use_redundancy_filter=True).to_retrieval_options()
    assert (rag.top_k, rag.use_redundancy_filter) == (2, True)
