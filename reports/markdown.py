"""Markdown renderer: a compact summary for a ticket comment or a CI job summary."""

from __future__ import annotations

import re
from typing import Any

from ascend_audit.reports.json_report import write_atomic
from ascend_audit.reports.svg import STATUS_ICON, VERDICT_ICON, clean

from ascend_audit.model import LAYERS, Report, Status

_MD_SPECIAL = re.compile(r"([\\`*_\[\]|#~])")
_MAX_LIST = 50


def md(value: Any, width: int = 400) -> str:
    """Node text made inert in Markdown: one line, HTML and Markdown specials escaped, no links."""
    s = " ".join(clean(value).split())
    if len(s) > width:
        s = s[: width - 1] + "…"
    s = s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    s = _MD_SPECIAL.sub(r"\\\1", s)
    # Break bare URLs so renderers do not autolink them: nothing in the summary links anywhere.
    return re.sub(r"(?i)\b(https?|ftp|file)://", r"\1:&#47;&#47;", s).replace("www.", "www&#46;")


def _badge(status: str) -> str:
    return f"{STATUS_ICON.get(status, '')} **{status}**"


def render_markdown(report: Report, json_sha256: str | None = None) -> str:
    """Overall verdict, layer table, failures with remediation, warnings and waivers."""
    host = report.host.get("hostname", "?")
    v = report.verdict.value
    lines = [
        f"## ascend-audit: {md(host)} — {VERDICT_ICON.get(v, '')} **{v}**",
        "",
        f"{md(report.tool.get('name', 'ascend-audit'))} {md(report.tool.get('version', '?'))} · "
        f"{md(report.started_at)} · policy {md(str(report.policy.get('digest', '') or 'none'), 80)}"
        + (f" · JSON sha256 {md(json_sha256[:16], 20)}…" if json_sha256 else ""),
        "",
        "| layer | verdict | required | why |",
        "|---|---|---|---|",
    ]
    for name in LAYERS:
        lr = report.layer(name)
        if lr is None:
            lines.append(f"| {name} | – not judged | – | |")
            continue
        why = lr.reason
        if lr.blocked_by:
            why = f"blocked by {', '.join(lr.blocked_by)}" + (f"; {why}" if why else "")
        lines.append(
            f"| {name} | {VERDICT_ICON.get(lr.verdict.value, '')} {lr.verdict.value} | "
            f"{'yes' if lr.required else 'no'} | {md(why, 200)} |"
        )
    counts: dict[str, int] = {}
    for r in report.results:
        counts[r.status.value] = counts.get(r.status.value, 0) + 1
    lines += ["", " · ".join(f"{n} {s}" for s, n in counts.items()) or "no checks ran", ""]

    failing = [r for r in report.results if r.status in (Status.FAIL, Status.ERROR)]
    if failing:
        lines += [f"### Failures ({len(failing)})", ""]
        for r in failing[:_MAX_LIST]:
            lines.append(
                f"- {_badge(r.status.value)} **{md(r.id, 60)}** {md(r.title, 120)}: {md(r.summary)}"
            )
            if r.remediation:
                lines.append(f"  - fix: {md(r.remediation, 600)}")
        if len(failing) > _MAX_LIST:
            lines.append(f"- … and {len(failing) - _MAX_LIST} more (see the HTML or JSON report)")
        lines.append("")
    warns = [r for r in report.results if r.status is Status.WARN]
    if warns:
        lines += [f"### Warnings ({len(warns)})", ""]
        lines += [f"- **{md(r.id, 60)}** {md(r.summary, 300)}" for r in warns[:_MAX_LIST]]
        lines.append("")
    waived = [r for r in report.results if r.status is Status.WAIVED]
    if waived:
        lines += [f"### Waived ({len(waived)})", ""]
        for r in waived[:_MAX_LIST]:
            w = r.waiver or {}
            lines.append(
                f"- **{md(r.id, 60)}** {md(w.get('reason', '?'), 200)} "
                f"(expires {md(w.get('expires', '?'), 40)})"
            )
        lines.append("")
    blocked = [r for r in report.results if r.status is Status.BLOCKED]
    if blocked:
        lines += [
            f"{len(blocked)} check(s) blocked by a lower layer: "
            + ", ".join(f"**{md(r.id, 60)}**" for r in blocked[:_MAX_LIST]),
            "",
        ]
    return "\n".join(lines).rstrip() + "\n"


def write_markdown(report: Report, path: str, json_sha256: str | None = None) -> None:
    """Render and atomically write the Markdown summary."""
    write_atomic(path, render_markdown(report, json_sha256))
