"""The build hook that compiles the C PDF engine (``hatch_build.py``), outside a real build.

hatchling lives only in pip's isolated build environment, so a stand-in for its base class is
installed before the hook module is loaded; the compile functions themselves are the real ones.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import sysconfig
import types
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
SOURCES = REPO / "src" / "ragwright" / "parse" / "pdf"


def load_hook(monkeypatch: pytest.MonkeyPatch) -> Any:
    interface = types.ModuleType("hatchling.builders.hooks.plugin.interface")
    interface.BuildHookInterface = type("BuildHookInterface", (), {})  # type: ignore[attr-defined]
    for name in ("hatchling", "hatchling.builders", "hatchling.builders.hooks", "hatchling.builders.hooks.plugin"):
        monkeypatch.setitem(sys.modules, name, types.ModuleType(name))
    monkeypatch.setitem(sys.modules, interface.__name__, interface)
    spec = importlib.util.spec_from_file_location("ragwright_hatch_build", REPO / "hatch_build.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_missing_compiler_is_reported_not_raised(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    hook = load_hook(monkeypatch)
    monkeypatch.setenv("CC", "/nonexistent/cc")
    message = hook.compile_extension(SOURCES / "_pdfcore.c", tmp_path / "x.so")
    assert "no C compiler" in message and not (tmp_path / "x.so").exists()


def test_the_hook_builds_an_importable_engine_stamped_with_its_sources(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from ragwright.parse.pdf.core import source_hash

    hook = load_hook(monkeypatch)
    monkeypatch.delenv("CC", raising=False)
    built = tmp_path / f"_pdfcore{sysconfig.get_config_var('EXT_SUFFIX')}"
    assert hook.compile_extension(SOURCES / "_pdfcore.c", built) == ""
    assert hook.source_hash(SOURCES) == source_hash(SOURCES)
    probe = (
        "import importlib.util, sys; "
        f"spec = importlib.util.spec_from_file_location('_pdfcore', {str(built)!r}); "
        "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m); print(m.SOURCE_HASH)"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == source_hash(SOURCES)
