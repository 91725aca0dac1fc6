"""The facade's OpenTelemetry records (:mod:`ragwright.telemetry` has the names): an answer's span
attributes, stage seconds and token counts, and an ingestion run's."""

from __future__ import annotations

from typing import Any

from ragwright import telemetry
from ragwright.ingest import IngestReport
from ragwright.model.results import RagResponse


def answer_finished(span: Any, response: RagResponse) -> None:
    """Close the ``ragnet.ask`` span of *response* and record its stages and tokens."""
    usage = response.usage
    timings = {k.removesuffix("_s"): v for k, v in response.timings.items()}
    telemetry.set_attributes(
        span,
        {
            "rag.answer.mode": response.mode,
            "rag.declined": response.declined,
            "rag.decline_reason": response.decline_reason,
            "rag.citations": len(response.citations),
            "rag.sources": len(response.sources),
            "rag.retrieval_path": response.retrieval_path,
            "gen_ai.request.model": response.model,
            "gen_ai.usage.input_tokens": usage.get("prompt_tokens", 0),
            "gen_ai.usage.output_tokens": usage.get("completion_tokens", 0),
            "rag.llm_calls": usage.get("llm_calls", 0),
            **{f"rag.timing.{stage}": seconds for stage, seconds in timings.items()},
        },
    )
    span.end()
    for stage, seconds in timings.items():
        if stage != "total":
            telemetry.record_stage("ask", stage, seconds, {"rag.answer.mode": response.mode})
    telemetry.add_tokens("input", usage.get("prompt_tokens", 0), {"operation": "ask"})
    telemetry.add_tokens("output", usage.get("completion_tokens", 0), {"operation": "ask"})
    telemetry.count_request("ask", "declined" if response.declined else "ok")


def failed(span: Any, operation: str, exc: BaseException) -> None:
    """End *span* with *exc* recorded (a cancelled call is not an error)."""
    if span is not telemetry.NO_SPAN:
        span.record_exception(exc)
        span.set_attribute("error.type", type(exc).__name__)
        span.end()
    telemetry.count_request(operation, "cancelled" if isinstance(exc, KeyboardInterrupt | SystemExit) else "error")


def ingest_finished(start_ns: int, report: IngestReport) -> None:
    """The ``ragnet.ingest`` span (from *start_ns* to now) and the run's stage seconds and embedded tokens."""
    span = telemetry.start_span("ragnet.ingest", start_time=start_ns)
    telemetry.set_attributes(
        span,
        {
            "rag.documents.added": report.added,
            "rag.documents.updated": report.updated,
            "rag.documents.unchanged": report.unchanged,
            "rag.documents.failed": len(report.failed),
            "rag.chunks": report.chunks,
            "rag.tokens_embedded": report.tokens_embedded,
            "rag.interrupted": report.interrupted,
            **{f"rag.timing.{stage}": seconds for stage, seconds in report.stage_seconds.items()},
        },
    )
    span.end()
    for stage, seconds in report.stage_seconds.items():
        telemetry.record_stage("ingest", stage, seconds)
    telemetry.add_tokens("embedded", report.tokens_embedded, {"operation": "ingest"})
    telemetry.count_request("ingest", "error" if report.failed else "ok")
