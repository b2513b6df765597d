"""Terminal renderer: one line per check as it finishes, grouped by layer, then a summary."""

from __future__ import annotations

import sys
from typing import TextIO

from ascend_audit.model import LayerReport, Progress, Report, Result, Status, Verdict

_COLOURS = {
    Status.PASS: "32",
    Status.WARN: "33",
    Status.FAIL: "31",
    Status.ERROR: "35",
    Status.SKIP: "2",
    Status.BLOCKED: "2",
    Status.WAIVED: "36",
    Verdict.READY: "32",
    Verdict.DEGRADED: "33",
    Verdict.NOT_READY: "31",
    Verdict.MISSING: "35",
    Verdict.BLOCKED: "2",
}


def _paint(text: str, key: Status | Verdict, colour: bool) -> str:
    return f"\033[{_COLOURS[key]}m{text}\033[0m" if colour else text


def _one_line(text: str, width: int = 160) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


class TerminalProgress(Progress):
    """Streams results as they finish; quiet shows only the summary, verbose adds evidence."""

    def __init__(self, out: TextIO | None = None, colour: bool | None = None, verbosity: int = 0):
        self.out = out or sys.stdout
        self.colour = self.out.isatty() if colour is None else colour
        self.verbosity = verbosity

    def layer_started(self, layer: str) -> None:
        if self.verbosity >= 0:
            self.out.write(f"\n{layer.upper()}\n")
            self.out.flush()

    def result(self, result: Result) -> None:
        if self.verbosity < 0:
            return
        status = _paint(f"{result.status.value:<7}", result.status, self.colour)
        line = f"  {status} {result.id:<14} {_one_line(result.summary)}"
        if self.verbosity > 0:
            line += f"  ({result.duration_ms:.0f} ms)"
        self.out.write(line + "\n")
        if self.verbosity > 0:
            for ev in result.evidence[:5]:
                self.out.write(f"            · {ev.kind}: {_one_line(ev.source, 120)}\n")
        self.out.flush()

    def layer_finished(self, layer: LayerReport) -> None:
        if self.verbosity < 0:
            return
        verdict = _paint(layer.verdict.value, layer.verdict, self.colour)
        why = f" — {_one_line(layer.reason, 140)}" if layer.reason else ""
        self.out.write(f"  → {layer.name} {verdict}{why}\n")
        self.out.flush()


def render_summary(report: Report, out: TextIO, colour: bool = False) -> None:
    """Overall verdict, layer verdicts, and what to fix first."""
    out.write("\nSUMMARY\n")
    for layer in report.layers:
        req = "" if layer.required else " (not required)"
        verdict = _paint(f"{layer.verdict.value:<9}", layer.verdict, colour)
        out.write(f"  {layer.name:<10} {verdict}{req}  {_one_line(layer.reason, 120)}\n")
    counts: dict[str, int] = {}
    for r in report.results:
        counts[r.status.value] = counts.get(r.status.value, 0) + 1
    tally = ", ".join(f"{n} {s}" for s, n in counts.items())
    verdict = _paint(report.verdict.value, report.verdict, colour)
    out.write(f"\n  node {report.host.get('hostname', '?')}: {verdict}  ({tally})\n")
    failing = [r for r in report.results if r.status in (Status.FAIL, Status.ERROR)]
    for r in failing[:10]:
        out.write(f"  ✗ {r.id}: {_one_line(r.summary, 140)}\n")
        if r.remediation:
            out.write(f"      fix: {_one_line(r.remediation, 140)}\n")
    out.flush()
