"""Markdown renderer: a compact summary for a ticket comment or a CI job summary."""

from __future__ import annotations

import re
from typing import Any

from ascend_audit.reports import localize
from ascend_audit.reports.json_report import write_atomic
from ascend_audit.reports.svg import STATUS_ICON, VERDICT_ICON, clean

from ascend_audit import i18n
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


def _badge(status: str, lang: str = "en") -> str:
    return f"{STATUS_ICON.get(status, '')} **{i18n.status_word(status, lang)}**"


def render_markdown(report: Report, json_sha256: str | None = None, lang: str | None = None) -> str:
    """Overall verdict, layer table, failures with remediation, warnings and waivers."""
    lang = i18n.normalise(lang or report.lang)

    def tr(key: str, **fields: object) -> str:
        return i18n.t(key, lang, **fields)

    host = report.host.get("hostname", "?")
    v = report.verdict.value
    verdict = f"{VERDICT_ICON.get(v, '')} **{i18n.verdict_word(v, lang)}**"
    lines = [
        "## " + tr("md.heading", host=md(host), verdict=verdict),
        "",
        f"{md(report.tool.get('name', 'ascend-audit'))} {md(report.tool.get('version', '?'))} · "
        f"{md(report.started_at)} · {tr('md.policy')} "
        f"{md(str(report.policy.get('digest', '') or 'none'), 80)}"
        + (f" · JSON sha256 {md(json_sha256[:16], 20)}…" if json_sha256 else ""),
        "",
        f"| {tr('md.col_layer')} | {tr('md.col_verdict')} | {tr('md.col_required')} "
        f"| {tr('md.col_why')} |",
        "|---|---|---|---|",
    ]
    for name in LAYERS:
        lr = report.layer(name)
        word = i18n.layer_word(name, lang)
        if lr is None:
            lines.append(f"| {word} | – {i18n.verdict_word('NOT_JUDGED', lang)} | – | |")
            continue
        why = localize.layer_reason(lr, report.results, lang)
        if lr.blocked_by and lr.verdict.value != "BLOCKED":
            by = tr("reason.blocked_by", ids=", ".join(lr.blocked_by))
            why = f"{by}; {why}" if why else by
        lines.append(
            f"| {word} | {VERDICT_ICON.get(lr.verdict.value, '')} "
            f"{i18n.verdict_word(lr.verdict, lang)} | "
            f"{tr('md.yes') if lr.required else tr('md.no')} | {md(why, 200)} |"
        )
    tally = localize.tally(report.results, lang)
    lines += ["", " · ".join(f"{n} {s}" for s, n in tally) or tr("md.no_checks"), ""]

    failing = [r for r in report.results if r.status in (Status.FAIL, Status.ERROR)]
    if failing:
        lines += ["### " + tr("md.failures", n=len(failing)), ""]
        for r in failing[:_MAX_LIST]:
            lines.append(
                f"- {_badge(r.status.value, lang)} **{md(r.id, 60)}** "
                f"{md(localize.title(r, lang), 120)}: {md(localize.summary(r, lang))}"
            )
            fix = localize.remediation(r, lang)
            if fix:
                lines.append(f"  - {tr('md.fix')}: {md(fix, 1200)}")
        if len(failing) > _MAX_LIST:
            lines.append("- " + tr("md.more", n=len(failing) - _MAX_LIST))
        lines.append("")
    warns = [r for r in report.results if r.status is Status.WARN]
    if warns:
        lines += ["### " + tr("md.warnings", n=len(warns)), ""]
        lines += [f"- **{md(r.id, 60)}** {md(r.summary, 300)}" for r in warns[:_MAX_LIST]]
        lines.append("")
    waived = [r for r in report.results if r.status is Status.WAIVED]
    if waived:
        lines += ["### " + tr("md.waived", n=len(waived)), ""]
        for r in waived[:_MAX_LIST]:
            w = r.waiver or {}
            lines.append(
                f"- **{md(r.id, 60)}** {md(w.get('reason', '?'), 200)} "
                f"({tr('md.expires', date=md(w.get('expires', '?'), 40))})"
            )
        lines.append("")
    blocked = [r for r in report.results if r.status is Status.BLOCKED]
    if blocked:
        lines += [
            tr("md.blocked", n=len(blocked))
            + " "
            + ", ".join(f"**{md(r.id, 60)}**" for r in blocked[:_MAX_LIST]),
            "",
        ]
    return "\n".join(lines).rstrip() + "\n"


def write_markdown(
    report: Report, path: str, json_sha256: str | None = None, lang: str | None = None
) -> None:
    """Render and atomically write the Markdown summary."""
    write_atomic(path, render_markdown(report, json_sha256, lang))
