"""Named retrieval configurations for evaluation: presets plus ``key=value`` overrides.

A config spec is ``PRESET`` or ``PRESET+key=value+key=value`` (values read as JSON when they parse;
``ensemble.rrf_k=30``-style keys set :class:`~ragwright.options.EnsembleOptions` fields),
or the path of a JSON file ``{"name": ..., "preset": ..., "options": {...}}``. Every option is
validated by :class:`~ragwright.options.RetrievalOptions`, so a typo fails before any query runs.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragwright.errors import ConfigError
from ragwright.options import PRESETS, EnsembleOptions, FeedbackOptions, RetrievalOptions


@dataclass(frozen=True)
class EvalConfig:
    """A named set of retrieval options (the unit an evaluation compares)."""

    name: str
    options: RetrievalOptions

    def describe(self) -> dict[str, Any]:
        defaults = RetrievalOptions()
        changed = {
            f: getattr(self.options, f)
            for f in RetrievalOptions.flat_names()
            if getattr(self.options, f) != getattr(defaults, f)
            and f not in ("metadata_filter", "filter", "ensemble", "feedback")
        }
        if self.options.ensemble is not None:
            changed["ensemble"] = {f: getattr(self.options.ensemble, f) for f in EnsembleOptions.field_names()}
        if self.options.feedback is not None:
            changed["feedback"] = {f: getattr(self.options.feedback, f) for f in FeedbackOptions.field_names()}
        return {"name": self.name, "options": changed}


def _ensemble(values: dict[str, Any]) -> dict[str, Any]:
    """``ensemble.<field>=value`` keys build an :class:`EnsembleOptions`, ``feedback.<field>=value`` keys a
    :class:`FeedbackOptions` (``feedback=true`` alone: its defaults)."""
    for prefix, cls in (("ensemble", EnsembleOptions), ("feedback", FeedbackOptions)):
        fields = {k.split(".", 1)[1]: values.pop(k) for k in [k for k in values if k.startswith(prefix + ".")]}
        if values.get(prefix) is True or fields:
            values[prefix] = cls.from_dict(fields)
    return values


def _value(raw: str) -> Any:
    try:
        return json.loads(raw)
    except ValueError:
        return raw


def build_config(name: str, preset: str, overrides: Mapping[str, Any]) -> EvalConfig:
    if preset not in PRESETS:
        raise ConfigError(f"unknown config preset {preset!r}; accepted: {', '.join(sorted(PRESETS))}")
    values = _ensemble({**PRESETS[preset], **overrides})
    return EvalConfig(name, RetrievalOptions.from_dict(values))


def parse_config(spec: str) -> EvalConfig:
    """Parse a ``--config`` spec (see the module docstring)."""
    spec = spec.strip()
    path = Path(spec)
    if spec.endswith(".json") and path.is_file():
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict):
            raise ConfigError(f"{spec}: a config file holds one JSON object")
        return build_config(str(data.get("name", path.stem)), str(data.get("preset", "dense")), data.get("options", {}))
    preset, *pairs = spec.split("+")
    overrides: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key:
            raise ConfigError(f"config {spec!r}: {pair!r} must look like key=value (e.g. dense+top_k=20)")
        overrides[key] = _value(raw)
    return build_config(spec, preset, overrides)
