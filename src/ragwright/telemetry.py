"""OpenTelemetry spans and metrics (``pip install 'ragwright[otel]'``), a no-op unless a provider is configured.

Names (stable; dashboards and alerts key on them):

* span ``ragnet.retrieve`` — one retrieval pipeline run: ``retrieval.hybrid.path`` (``native`` or
  ``client``: whose fusion served it), ``retrieval.arms``, ``retrieval.top_k``, ``retrieval.result_count``;
* span ``ragnet.ask`` — one answer, the retrievals it ran as children: ``rag.answer.mode``,
  ``rag.declined``, ``rag.decline_reason``, ``rag.citations``, ``gen_ai.usage.input_tokens`` /
  ``gen_ai.usage.output_tokens``, ``rag.llm_calls``, and each stage's seconds as ``rag.timing.<stage>``;
* span ``ragnet.ingest`` — one ingestion run: documents added, updated, unchanged and failed, chunks,
  ``rag.tokens_embedded``, seconds per stage as ``rag.timing.<stage>``;
* histogram ``ragnet.stage.duration`` (seconds; attribute ``stage``: ``retrieve``, ``generate``,
  ``parse``, ``embed`` …, and ``operation``: ``ask`` / ``ingest`` / ``retrieve``);
* counter ``ragnet.tokens`` (attribute ``kind``: ``input``, ``output``, ``embedded``);
* counter ``ragnet.requests`` (attribute ``operation``; ``outcome``: ``ok``, ``declined``, ``error``).

Nothing is emitted — and nothing of OpenTelemetry is imported — until a span or a metric is asked for;
then the API is imported once (when it is installed), and it emits only when the application has set a
tracer / meter provider (``trace.set_tracer_provider``), or one was given to :func:`configure`.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any, Final

NAME: Final = "ragwright"
_NOT_LOADED: Final = object()
_api: Any = _NOT_LOADED
_tracer_provider: Any = None
_meter_provider: Any = None
_instruments: dict[tuple[int, str], Any] = {}
_UNCONFIGURED: Final = frozenset(
    {"ProxyTracerProvider", "NoOpTracerProvider", "_ProxyMeterProvider", "NoOpMeterProvider"}
)

Attributes = Mapping[str, Any]


def _otel() -> Any:
    """``(trace, metrics)`` of the OpenTelemetry API, or ``None`` when it is not installed (checked once)."""
    global _api
    if _api is _NOT_LOADED:
        try:
            from opentelemetry import metrics, trace

            _api = (trace, metrics)
        except ImportError:
            _api = None
    return _api


def configure(*, tracer_provider: Any = None, meter_provider: Any = None) -> None:
    """Emit to these providers instead of OpenTelemetry's global ones (``None``: the global one again)."""
    global _tracer_provider, _meter_provider
    _tracer_provider, _meter_provider = tracer_provider, meter_provider
    _instruments.clear()


def _provider(kind: int) -> Any:
    api = _otel()
    if api is None:
        return None
    given = _tracer_provider if kind == 0 else _meter_provider
    provider = (
        given if given is not None else (api[0].get_tracer_provider() if kind == 0 else api[1].get_meter_provider())
    )
    return None if type(provider).__name__ in _UNCONFIGURED else provider


def _version() -> str:
    from ragwright import __version__

    return __version__


def tracer() -> Any:
    """The ragwright tracer, or ``None`` when nothing would record its spans."""
    provider = _provider(0)
    return None if provider is None else provider.get_tracer(NAME, _version())


class _NoSpan:
    """What :func:`span` yields when nothing records: attribute calls do nothing."""

    def set_attribute(self, key: str, value: Any) -> None:
        return None

    def set_attributes(self, attributes: Attributes) -> None:
        return None

    def record_exception(self, exc: BaseException) -> None:
        return None

    def set_status(self, *args: Any, **kwargs: Any) -> None:
        return None

    def end(self, end_time: int | None = None) -> None:
        return None

    def is_recording(self) -> bool:
        return False


NO_SPAN: Final = _NoSpan()


def _clean(attributes: Attributes) -> dict[str, Any]:
    """OpenTelemetry takes str, bool, int, float and sequences of one of them; ``None`` is left out."""
    out: dict[str, Any] = {}
    for key, value in attributes.items():
        if value is None:
            continue
        if isinstance(value, str | bool | int | float):
            out[key] = value
        elif isinstance(value, list | tuple):
            out[key] = [str(v) for v in value]
        else:
            out[key] = str(value)
    return out


@contextmanager
def span(name: str, attributes: Attributes | None = None) -> Iterator[Any]:
    """A span around the block, current inside it (child spans nest under it); an exception is recorded
    and re-raised. Yields :data:`NO_SPAN` when nothing records."""
    t = tracer()
    if t is None:
        yield NO_SPAN
        return
    with t.start_as_current_span(name, attributes=_clean(attributes or {})) as current:
        yield current


def start_span(name: str, attributes: Attributes | None = None, *, start_time: int | None = None) -> Any:
    """A span started now (or at *start_time*, ns since the epoch) that the caller ends; see :func:`current`."""
    t = tracer()
    if t is None:
        return NO_SPAN
    return t.start_span(name, attributes=_clean(attributes or {}), start_time=start_time)


@contextmanager
def current(active: Any) -> Iterator[None]:
    """Make *active* (from :func:`start_span`) the current span inside the block, without ending it."""
    api = _otel()
    if active is NO_SPAN or api is None:
        yield
        return
    with api[0].use_span(active, end_on_exit=False, record_exception=False, set_status_on_exception=False):
        yield


def set_attributes(target: Any, attributes: Attributes) -> None:
    if target is not NO_SPAN:
        target.set_attributes(_clean(attributes))


def _instrument(kind: str, name: str, unit: str, description: str) -> Any:
    provider = _provider(1)
    if provider is None:
        return None
    key = (id(provider), name)
    instrument = _instruments.get(key)
    if instrument is None:
        meter = provider.get_meter(NAME, _version())
        make = meter.create_histogram if kind == "histogram" else meter.create_counter
        instrument = _instruments[key] = make(name, unit=unit, description=description)
    return instrument


def record_stage(operation: str, stage: str, seconds: float, attributes: Attributes | None = None) -> None:
    """``ragnet.stage.duration``: *seconds* spent in *stage* of *operation* (``ask``, ``ingest``, ``retrieve``)."""
    histogram = _instrument("histogram", "ragnet.stage.duration", "s", "Seconds per pipeline stage")
    if histogram is not None and seconds >= 0:
        histogram.record(float(seconds), _clean({"operation": operation, "stage": stage, **(attributes or {})}))


def add_tokens(kind: str, count: int, attributes: Attributes | None = None) -> None:
    """``ragnet.tokens``: *count* tokens of *kind* (``input``, ``output``, ``embedded``)."""
    counter = _instrument("counter", "ragnet.tokens", "{token}", "Tokens sent to, received from or embedded by models")
    if counter is not None and count > 0:
        counter.add(int(count), _clean({"kind": kind, **(attributes or {})}))


def count_request(operation: str, outcome: str) -> None:
    """``ragnet.requests``: one *operation* (``ask``, ``search``, ``ingest``) ended with *outcome*."""
    counter = _instrument("counter", "ragnet.requests", "{request}", "Operations by outcome")
    if counter is not None:
        counter.add(1, {"operation": operation, "outcome": outcome})


def now_ns() -> int:
    return time.time_ns()


def enabled() -> bool:
    """Whether spans or metrics would be recorded now."""
    return _provider(0) is not None or _provider(1) is not None
