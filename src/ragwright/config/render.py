"""Plain configuration data written as TOML (``ragwright config show``); the standard library only reads TOML.

Values are what :meth:`~ragwright.config.settings.Settings.to_dict` produces: strings, numbers,
booleans, lists and nested dicts. ``None`` has no TOML spelling: such a key is left out (the default).
What this writes reads back into the same settings.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

_BARE = re.compile(r"^[A-Za-z0-9_-]+$")


def _key(name: str) -> str:
    return name if _BARE.match(name) else json.dumps(name, ensure_ascii=False)


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_value(v) for v in value if v is not None) + "]"
    if isinstance(value, Mapping):
        inner = ", ".join(f"{_key(str(k))} = {_value(v)}" for k, v in value.items() if v is not None)
        return "{ " + inner + " }" if inner else "{}"
    raise TypeError(f"cannot write {type(value).__name__} as TOML")


def to_toml(data: Mapping[str, Any], *, header: str = "") -> str:
    """*data* as a TOML document: top-level values first, then one ``[table]`` per nested mapping."""
    lines = [f"# {line}" for line in header.splitlines()]
    _emit(data, (), lines)
    return "\n".join(lines).strip() + "\n"


def _emit(table: Mapping[str, Any], path: tuple[str, ...], lines: list[str]) -> None:
    scalars = [(k, v) for k, v in table.items() if v is not None and not isinstance(v, Mapping)]
    tables = [(k, v) for k, v in table.items() if isinstance(v, Mapping)]
    if path and scalars:
        lines.append("")
        lines.append("[" + ".".join(_key(p) for p in path) + "]")
    for key, value in scalars:
        lines.append(f"{_key(str(key))} = {_value(value)}")
    for key, value in tables:
        _emit(value, (*path, str(key)), lines)
