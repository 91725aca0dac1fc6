"""Evaluation reports: a table with confidence intervals, JSON, and a Markdown + HTML folder with plots.

Plots are plain SVG written here (bars with CI whiskers per configuration, quality against latency),
so a report opens in any browser with no plotting library installed.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragwright.eval.runner import ConfigRun
from ragwright.eval.stats import Interval, PairedComparison, bootstrap_ci, paired_bootstrap

PRIMARY = "ndcg@10"


@dataclass
class ConfigSummary:
    name: str
    options: dict[str, Any]
    metrics: dict[str, Interval]
    p50_ms: float
    p95_ms: float
    errors: dict[str, int]
    versus_baseline: dict[str, PairedComparison] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "options": self.options,
            "metrics": {m: iv.to_dict() for m, iv in self.metrics.items()},
            "latency_ms": {"p50": self.p50_ms, "p95": self.p95_ms},
            "errors": self.errors,
            "versus_baseline": {m: c.to_dict() for m, c in self.versus_baseline.items()},
        }


@dataclass
class EvalReport:
    dataset: str
    split: str
    queries: int
    configs: list[ConfigSummary]
    confidence: float = 0.95

    def to_dict(self) -> dict[str, Any]:
        return {
            "dataset": self.dataset,
            "split": self.split,
            "queries": self.queries,
            "confidence": self.confidence,
            "baseline": self.configs[0].name if self.configs else None,
            "configs": [c.to_dict() for c in self.configs],
        }


def summarize(
    dataset: str, split: str, runs: Sequence[ConfigRun], *, confidence: float = 0.95, seed: int = 0
) -> EvalReport:
    """Intervals for every metric of every run, and paired comparisons against the first run."""
    summaries: list[ConfigSummary] = []
    for i, run in enumerate(runs):
        metrics = {
            m: bootstrap_ci(list(v.values()), confidence=confidence, seed=seed) for m, v in run.per_query.items()
        }
        summary = ConfigSummary(
            run.config.name, run.config.describe()["options"], metrics, run.p50_ms, run.p95_ms, run.error_counts()
        )
        if i > 0:
            summary.versus_baseline = {
                m: paired_bootstrap(runs[0].per_query[m], v, confidence=confidence, seed=seed)
                for m, v in run.per_query.items()
            }
        summaries.append(summary)
    queries = len(next(iter(runs[0].per_query.values()))) if runs and runs[0].per_query else 0
    return EvalReport(dataset, split, queries, summaries, confidence)


def _fmt(iv: Interval) -> str:
    return f"{iv.mean:.4f} [{iv.low:.4f}, {iv.high:.4f}]"


def render_table(report: EvalReport, metrics: Sequence[str] = (PRIMARY, "recall@100", "mrr@10")) -> str:
    """A plain-text table: each metric with its CI, latency, and the paired difference to the baseline."""
    header = ["config", *metrics, "p50 ms", "p95 ms", f"Δ{PRIMARY} vs {report.configs[0].name}"]
    rows = [header]
    for c in report.configs:
        diff = c.versus_baseline.get(PRIMARY)
        diff_text = (
            "baseline"
            if diff is None
            else (
                f"{diff.difference.mean:+.4f} [{diff.difference.low:+.4f}, {diff.difference.high:+.4f}]"
                + (" significant" if diff.significant else " n.s.")
            )
        )
        rows.append([c.name, *(_fmt(c.metrics[m]) for m in metrics), f"{c.p50_ms:.1f}", f"{c.p95_ms:.1f}", diff_text])
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    lines = [
        f"{report.dataset} ({report.split}, {report.queries} queries, {int(report.confidence * 100)}% bootstrap CIs)"
    ]
    for n, row in enumerate(rows):
        lines.append("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip())
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


# -- plots (SVG) ---------------------------------------------------------------------------------------
def bar_chart_svg(report: EvalReport, metric: str, *, width: int = 560, height: int = 300) -> str:
    """Bars per configuration with CI whiskers."""
    n = max(1, len(report.configs))
    left, bottom, top = 60, 40, 20
    plot_w, plot_h = width - left - 20, height - bottom - top
    hi = max((c.metrics[metric].high for c in report.configs), default=1.0) or 1.0
    scale = plot_h / (hi * 1.1)
    slot = plot_w / n
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img">',
        f"<title>{html.escape(metric)} by configuration</title>",
        f'<line x1="{left}" y1="{top + plot_h}" x2="{left + plot_w}" y2="{top + plot_h}" stroke="#333"/>',
        f'<line x1="{left}" y1="{top}" x2="{left}" y2="{top + plot_h}" stroke="#333"/>',
    ]
    for t in range(5):
        value = hi * 1.1 * t / 4
        y = top + plot_h - value * scale
        parts.append(f'<text x="{left - 6}" y="{y + 4:.1f}" font-size="11" text-anchor="end">{value:.2f}</text>')
    for i, c in enumerate(report.configs):
        iv = c.metrics[metric]
        x = left + i * slot + slot * 0.2
        w = slot * 0.6
        y = top + plot_h - iv.mean * scale
        parts.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{iv.mean * scale:.1f}" fill="#4a7ab7"/>')
        cx = x + w / 2
        y_lo, y_hi = top + plot_h - iv.low * scale, top + plot_h - iv.high * scale
        parts.append(
            f'<line x1="{cx:.1f}" y1="{y_lo:.1f}" x2="{cx:.1f}" y2="{y_hi:.1f}" stroke="#111" stroke-width="2"/>'
        )
        for yy in (y_lo, y_hi):
            parts.append(f'<line x1="{cx - 6:.1f}" y1="{yy:.1f}" x2="{cx + 6:.1f}" y2="{yy:.1f}" stroke="#111"/>')
        parts.append(
            f'<text x="{cx:.1f}" y="{top + plot_h + 16}" font-size="11" text-anchor="middle">'
            f"{html.escape(c.name[:24])}</text>"
        )
        parts.append(f'<text x="{cx:.1f}" y="{y_hi - 4:.1f}" font-size="10" text-anchor="middle">{iv.mean:.3f}</text>')
    parts.append("</svg>")
    return "\n".join(parts)


def frontier_svg(report: EvalReport, metric: str = PRIMARY, *, width: int = 560, height: int = 300) -> str:
    """Quality (y) against median latency (x), one point per configuration."""
    left, bottom, top, right = 60, 40, 20, 30
    plot_w, plot_h = width - left - right, height - bottom - top
    xs = [c.p50_ms for c in report.configs] or [1.0]
    ys = [c.metrics[metric].mean for c in report.configs] or [1.0]
    x_hi, y_hi = (max(xs) or 1.0) * 1.15, (max(ys) or 1.0) * 1.15
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img">',
        f"<title>{html.escape(metric)} against p50 latency</title>",
        f'<line x1="{left}" y1="{top + plot_h}" x2="{left + plot_w}" y2="{top + plot_h}" stroke="#333"/>',
        f'<line x1="{left}" y1="{top}" x2="{left}" y2="{top + plot_h}" stroke="#333"/>',
        f'<text x="{left + plot_w / 2}" y="{height - 6}" font-size="11" text-anchor="middle">p50 latency (ms)</text>',
        f'<text x="14" y="{top + plot_h / 2}" font-size="11" transform="rotate(-90 14 {top + plot_h / 2})" '
        f'text-anchor="middle">{html.escape(metric)}</text>',
    ]
    for c, x, y in zip(report.configs, xs, ys, strict=True):
        px, py = left + x / x_hi * plot_w, top + plot_h - y / y_hi * plot_h
        parts.append(f'<circle cx="{px:.1f}" cy="{py:.1f}" r="5" fill="#c0392b"/>')
        parts.append(
            f'<text x="{px + 8:.1f}" y="{py - 6:.1f}" font-size="11">{html.escape(c.name[:24])} '
            f"({x:.1f} ms, {y:.3f})</text>"
        )
    parts.append("</svg>")
    return "\n".join(parts)


def write_report(report: EvalReport, folder: str | Path) -> Path:
    """Write ``report.md``, ``report.html`` (plots inline) and ``report.json`` into *folder*."""
    import json

    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    table = render_table(report)
    metrics = list(report.configs[0].metrics) if report.configs else []
    charts = {m: bar_chart_svg(report, m) for m in (PRIMARY, "recall@100") if m in metrics}
    for name, svg in charts.items():
        (out / f"{name.replace('@', '_at_')}.svg").write_text(svg, encoding="utf-8")
    (out / "frontier.svg").write_text(frontier_svg(report), encoding="utf-8")
    errors = "\n".join(
        f"| {c.name} | {c.errors['hit']} | {c.errors['ranking_miss']} | {c.errors['retrieval_miss']} |"
        for c in report.configs
    )
    md = (
        f"# Evaluation: {report.dataset}\n\n```\n{table}\n```\n\n"
        + "".join(f"![{m}]({m.replace('@', '_at_')}.svg)\n\n" for m in charts)
        + "![quality against latency](frontier.svg)\n\n"
        + "## Error analysis\n\n| config | hit (top-10) | ranking miss (top-50) | retrieval miss |\n"
        + "| --- | --- | --- | --- |\n"
        + errors
        + "\n"
    )
    (out / "report.md").write_text(md, encoding="utf-8")
    body = (
        f"<h1>Evaluation: {html.escape(report.dataset)}</h1><pre>{html.escape(table)}</pre>"
        + "".join(f"<h2>{html.escape(m)}</h2>{svg}" for m, svg in charts.items())
        + f"<h2>Quality against latency</h2>{frontier_svg(report)}"
        + "<h2>Error analysis</h2><table border='1' cellpadding='4'><tr><th>config</th><th>hit (top-10)</th>"
        + "<th>ranking miss (top-50)</th><th>retrieval miss</th></tr>"
        + "".join(
            f"<tr><td>{html.escape(c.name)}</td><td>{c.errors['hit']}</td><td>{c.errors['ranking_miss']}</td>"
            f"<td>{c.errors['retrieval_miss']}</td></tr>"
            for c in report.configs
        )
        + "</table>"
    )
    (out / "report.html").write_text(
        f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>ragwright evaluation</title></head>"
        f"<body style='font-family:sans-serif;max-width:960px;margin:2em auto'>{body}</body></html>",
        encoding="utf-8",
    )
    (out / "report.json").write_text(json.dumps(report.to_dict(), indent=2), encoding="utf-8")
    return out
