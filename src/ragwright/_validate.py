"""The validation toolkit every option class is built with (the bottom layer: it imports only errors).

``check_int`` / ``check_float`` / ``check_bool`` / ``check_choice`` raise
:class:`~ragwright.errors.ConfigError` naming the field, the value and the accepted range;
:class:`OptionsBase` gives a frozen options dataclass ``field_names``, ``check_keys`` (unknown keys
refused with a suggestion), ``from_dict`` and ``merged``. Each stage's options live beside the stage
(``chunk/options.py``, ``parse/options.py``, ``retrieve/options.py`` …) and import this module, never
:mod:`ragwright.options` (which re-exports them all for callers).
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Mapping, Sequence
from dataclasses import fields, replace
from typing import Any, Self

from ragwright.errors import ConfigError

__all__ = ["OptionsBase", "check_bool", "check_choice", "check_float", "check_int"]


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def check_int(name: str, value: Any, *, minimum: int, optional: bool = False) -> None:
    if value is None and optional:
        return
    if not _is_int(value) or value < minimum:
        raise ConfigError.invalid(name, value, f"an integer >= {minimum}" + (" or None" if optional else ""))


def check_float(
    name: str,
    value: Any,
    *,
    lo: float | None = None,
    hi: float | None = None,
    lo_open: bool = False,
    optional: bool = False,
) -> None:
    if value is None and optional:
        return
    ok = _is_number(value)
    if ok and lo is not None:
        ok = value > lo if lo_open else value >= lo
    if ok and hi is not None:
        ok = value <= hi
    if not ok:
        lo_txt = "" if lo is None else f"{'>' if lo_open else '>='} {lo}"
        hi_txt = "" if hi is None else f"<= {hi}"
        rng = " and ".join(t for t in (lo_txt, hi_txt) if t) or "any finite value"
        raise ConfigError.invalid(name, value, f"a finite number {rng}" + (" or None" if optional else ""))


def check_bool(name: str, value: Any, *, optional: bool = False) -> None:
    if value is None and optional:
        return
    if not isinstance(value, bool):
        raise ConfigError.invalid(name, value, "True or False" + (" or None" if optional else ""))


def check_choice(name: str, value: Any, choices: Sequence[str]) -> None:
    if value not in choices:
        raise ConfigError.invalid(name, value, "one of " + ", ".join(repr(c) for c in choices))


class OptionsBase:
    """Shared construction helpers for the option dataclasses."""

    @classmethod
    def field_names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in fields(cls))  # type: ignore[arg-type]

    @classmethod
    def check_keys(cls, keys: Sequence[str]) -> None:
        known = cls.field_names()
        for key in keys:
            if key not in known:
                close = difflib.get_close_matches(key, known, n=1)
                hint = f"; did you mean {close[0]!r}?" if close else ""
                raise ConfigError(
                    f"unknown option {key!r} for {cls.__name__}{hint} (accepted: {', '.join(known)})",
                    field=key,
                )

    @classmethod
    def from_dict(cls, values: Mapping[str, Any]) -> Self:
        """Build from a mapping, refusing unknown keys with a suggestion."""
        cls.check_keys(list(values))
        return cls(**values)

    def merged(self, **overrides: Any) -> Self:
        """A copy with *overrides* applied (validated again); unknown keys are refused."""
        self.check_keys(list(overrides))
        return replace(self, **overrides)  # type: ignore[type-var]


_OptionsBase = OptionsBase  # the name option classes outside the package used before
