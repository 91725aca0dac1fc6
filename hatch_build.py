"""Build hook: compile ragwright's C extension (``ragwright.parse.pdf._pdfcore``) when a C compiler is at hand.

The extension is the fast path of PDF parsing (see ``src/ragwright/parse/pdf/core.py``); everything it
does has a pure-Python equivalent, so a machine without a compiler still gets a working install.
``RAGWRIGHT_BUILD_PDFCORE=0`` skips the compile, ``=require`` makes a failed compile fail the build.

The module is compiled with the interpreter's own ``LDSHARED`` (compile and link in one step) and
``-ffp-contract=off``, so its floating-point results are those of the Python code it mirrors; the
SHA-256 of the C source is compiled in, and the loader refuses a module built from another source.
"""

from __future__ import annotations

import importlib.util
import os
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

SOURCE = Path("src/ragwright/parse/pdf/_pdfcore.c")
TARGET = "ragwright/parse/pdf/_pdfcore"


class CustomBuildHook(BuildHookInterface):  # type: ignore[type-arg]
    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        mode = os.environ.get("RAGWRIGHT_BUILD_PDFCORE", "").strip().lower()
        if self.target_name != "wheel" or mode in {"0", "no", "off", "false"}:
            return
        root = Path(self.root)
        suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
        with tempfile.TemporaryDirectory() as tmp:
            built = Path(tmp) / f"_pdfcore{suffix}"
            error = compile_extension(root / SOURCE, built)
            if error:
                message = f"ragwright: the C PDF engine was not built ({error}); PDF parsing uses the Python path"
                if mode == "require":
                    raise RuntimeError(message)
                print(message, file=sys.stderr)
                return
            if version == "editable":  # the editable install imports from src/: the module goes there
                shutil.copy2(built, root / "src" / f"{TARGET}{suffix}")
            else:  # kept until finalize(), when the wheel has been written
                self._kept = tempfile.mkdtemp(prefix="ragwright-pdfcore-")
                kept = Path(self._kept) / built.name
                shutil.copy2(built, kept)
                build_data["force_include"][str(kept)] = f"{TARGET}{suffix}"
        build_data["pure_python"] = False
        build_data["infer_tag"] = True

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        kept = getattr(self, "_kept", None)
        if kept:
            shutil.rmtree(kept, ignore_errors=True)


def source_hash(directory: Path) -> str:
    """The loader's own hash of the C sources (``ragwright.parse.pdf.core.source_hash``), read from the tree."""
    spec = importlib.util.spec_from_file_location("_ragwright_pdf_core", directory / "core.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return str(module.source_hash(directory))


def compile_extension(source: Path, out: Path) -> str:
    """Compile *source* into the extension module *out*; an error message, or "" on success."""
    if os.name == "nt":
        return "Windows builds use the Python path"
    linker = sysconfig.get_config_var("LDSHARED")
    if not linker:
        return "the interpreter reports no LDSHARED"
    cc = os.environ.get("CC")
    command = shlex.split(linker)
    if cc:  # honour CC like setuptools does: the compiler with the linker's flags
        command = [*shlex.split(cc), *command[1:]]
    if shutil.which(command[0]) is None:
        return f"no C compiler ({command[0]} not found)"
    include = sysconfig.get_paths()["include"]
    command += [
        "-O2",
        "-fPIC",
        "-ffp-contract=off",
        f'-DRW_SOURCE_HASH="{source_hash(source.parent)}"',
        f"-I{include}",
        str(source),
        "-o",
        str(out),
    ]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{command[0]} failed: {exc}"
    if done.returncode != 0:
        return f"{command[0]} exited with {done.returncode}: {done.stderr.strip()[-500:]}"
    return ""
