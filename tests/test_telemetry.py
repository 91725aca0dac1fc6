"""OpenTelemetry spans and metrics with the seed's names, checked with the SDK's in-memory exporters;
a no-op without a configured provider or without the API."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from ragwright import Rag, RagOptions, telemetry
from ragwright.sources import BytesSource
from ragwright.stores.memory import MemoryStore
from ragwright.testing.doubles import HashingEmbedder, ScriptedChat

DOC = b"# Refunds\n\n## Policy\n\nCustomers may request a refund within 30 days of delivery.\n"
QUESTION = "How long do customers have to request a refund?"


def make_rag() -> Rag:
    llm = ScriptedChat(default="Customers have 30 days to request a refund [Source 1].")
    return Rag(
        MemoryStore(), HashingEmbedder(), llm=llm, rag_options=RagOptions(use_hybrid_search=True, answerability="off")
    )


@pytest.fixture
def exported() -> Iterator[tuple[InMemorySpanExporter, InMemoryMetricReader]]:
    spans = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(spans))
    reader = InMemoryMetricReader()
    telemetry.configure(tracer_provider=tracer_provider, meter_provider=MeterProvider(metric_readers=[reader]))
    yield spans, reader
    telemetry.configure()


def metric_points(reader: InMemoryMetricReader) -> dict[str, list[Any]]:
    data = reader.get_metrics_data()
    out: dict[str, list[Any]] = {}
    for resource in data.resource_metrics if data else ():
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                out.setdefault(metric.name, []).extend(metric.data.data_points)
    return out


def test_spans_and_metrics_of_an_ingest_and_an_answer(exported: Any) -> None:
    spans, reader = exported
    rag = make_rag()
    rag.ingest(BytesSource({"refunds.md": DOC}))
    response = rag.ask(QUESTION)
    assert not response.declined

    by_name = {s.name: s for s in spans.get_finished_spans()}
    assert {"ragnet.ingest", "ragnet.ask", "ragnet.retrieve"} <= set(by_name)
    retrieve, ask, ingest = by_name["ragnet.retrieve"], by_name["ragnet.ask"], by_name["ragnet.ingest"]
    assert retrieve.attributes["retrieval.hybrid.path"] == "client"  # fused here, not by the store
    assert list(retrieve.attributes["retrieval.arms"]) == ["dense", "bm25"]
    assert retrieve.attributes["retrieval.result_count"] >= 1
    assert retrieve.parent is not None and retrieve.parent.span_id == ask.context.span_id  # a child of the answer
    assert ask.attributes["rag.answer.mode"] == "llm" and ask.attributes["rag.declined"] is False
    assert ask.attributes["rag.citations"] == 1 and ask.attributes["gen_ai.usage.output_tokens"] > 0
    assert ask.attributes["gen_ai.usage.input_tokens"] > 0 and ask.attributes["rag.timing.retrieve"] >= 0
    assert ask.end_time >= ask.start_time
    assert ingest.attributes["rag.documents.added"] == 1 and ingest.attributes["rag.tokens_embedded"] > 0

    points = metric_points(reader)
    stages = {(p.attributes["operation"], p.attributes["stage"]) for p in points["ragnet.stage.duration"]}
    assert {("retrieve", "retrieve"), ("ask", "retrieve")} <= stages and any(op == "ingest" for op, _ in stages)
    tokens = {p.attributes["kind"]: p.value for p in points["ragnet.tokens"]}
    assert tokens["embedded"] > 0 and tokens["input"] > 0 and tokens["output"] > 0
    requests = {(p.attributes["operation"], p.attributes["outcome"]): p.value for p in points["ragnet.requests"]}
    assert requests == {("ingest", "ok"): 1, ("ask", "ok"): 1}


def test_a_failed_answer_is_an_error_span(exported: Any) -> None:
    spans, reader = exported
    rag = make_rag()
    with pytest.raises(Exception, match="non-empty"):
        rag.ask("   ")
    (ask,) = [s for s in spans.get_finished_spans() if s.name == "ragnet.ask"]
    assert ask.attributes["error.type"] == "ConfigError" and ask.events[0].name == "exception"
    points = metric_points(reader)
    assert [(p.attributes["outcome"], p.value) for p in points["ragnet.requests"]] == [("error", 1)]


def test_a_no_op_without_a_provider() -> None:
    telemetry.configure()
    assert not telemetry.enabled()  # the API is installed, but the application configured no provider
    with telemetry.span("ragnet.retrieve") as span:
        assert span is telemetry.NO_SPAN
    rag = make_rag()
    rag.ingest(BytesSource({"refunds.md": DOC}))
    assert not rag.ask(QUESTION).declined


def test_the_global_provider_is_used_once_set(monkeypatch: pytest.MonkeyPatch) -> None:
    from opentelemetry import trace

    spans = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(spans))
    telemetry.configure()
    monkeypatch.setattr(trace, "get_tracer_provider", lambda: provider)  # as trace.set_tracer_provider would
    assert telemetry.enabled()
    with telemetry.span("ragnet.retrieve", {"retrieval.top_k": 3}):
        pass
    assert [s.name for s in spans.get_finished_spans()] == ["ragnet.retrieve"]


def test_a_no_op_without_the_api(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(telemetry, "_api", None)  # as when opentelemetry-api is not installed
    assert not telemetry.enabled() and telemetry.start_span("ragnet.ask") is telemetry.NO_SPAN
    telemetry.record_stage("ask", "retrieve", 0.1)
    telemetry.add_tokens("input", 3)
    rag = make_rag()
    rag.ingest(BytesSource({"refunds.md": DOC}))
    assert not rag.ask(QUESTION).declined


def test_importing_ragwright_does_not_import_opentelemetry() -> None:
    import subprocess
    import sys

    code = "import sys, ragwright; from ragwright import Rag, telemetry; print('opentelemetry' in sys.modules)"
    assert (
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
        == "False"
    )
