"""JUnit XML renderer: one testsuite per layer, one testcase per check, for CI test views."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from typing import Any

from ascend_audit.reports import localize
from ascend_audit.reports.json_report import write_atomic

from ascend_audit import i18n
from ascend_audit.model import LAYERS, Report, Result, Status

# Characters XML 1.0 forbids (C0 controls but tab/LF/CR, lone surrogates, U+FFFE/U+FFFF).
_XML_FORBIDDEN = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def xml_text(value: Any) -> str:
    """Text that is always valid in XML 1.0: forbidden characters become U+FFFD."""
    return _XML_FORBIDDEN.sub("\ufffd", value if isinstance(value, str) else str(value))


def _sources(result: Result, lang: str = "en") -> str:
    lines = []
    for e in result.evidence:
        line = f"  - {e.kind}: {e.source}"
        rc = e.values.get("rc", e.values.get("exit_code"))
        if rc is not None:
            line += f" ({i18n.t('junit.exit_code', lang)} {rc})"
        lines.append(line)
    return f"{i18n.t('junit.evidence', lang)}:\n" + "\n".join(lines) if lines else ""


def _case(suite: ET.Element, r: Result, lang: str = "en") -> dict[str, int]:
    def tr(key: str) -> str:
        return i18n.t(key, lang)

    title = localize.title(r, lang)
    summary = localize.summary(r, lang)
    fix = localize.remediation(r, lang)
    case = ET.SubElement(
        suite,
        "testcase",
        {
            "classname": xml_text(r.layer),
            "name": xml_text(f"{r.id} {title}".strip()),
            "time": f"{max(r.duration_ms, 0.0) / 1000:.3f}",
        },
    )
    tally = {"failures": 0, "skipped": 0}
    if r.status in (Status.FAIL, Status.ERROR):
        body = "\n\n".join(
            x for x in (f"{tr('junit.remediation')}: {fix}" if fix else "", _sources(r, lang)) if x
        )
        el = ET.SubElement(case, "failure", {"message": xml_text(summary), "type": r.status.value})
        el.text = xml_text(body)
        tally["failures"] = 1
    elif r.status in (Status.BLOCKED, Status.SKIP):
        reason = summary
        if r.status is Status.BLOCKED and r.blocked_by and lang == "en":
            reason = f"blocked by {', '.join(r.blocked_by)}: {r.summary}"
        word = i18n.status_word(r.status, lang)
        ET.SubElement(case, "skipped", {"message": xml_text(f"{word}: {reason}")})
        tally["skipped"] = 1
    elif r.status is Status.WARN:
        out = ET.SubElement(case, "system-out")
        text = f"{tr('junit.warning')}: {summary}"
        if fix:
            text += f"\n{tr('junit.remediation')}: {fix}"
        out.text = xml_text(text)
    elif r.status is Status.WAIVED:
        out = ET.SubElement(case, "system-out")
        w = r.waiver or {}
        out.text = xml_text(
            f"{i18n.status_word(r.status, lang)}: {summary}\n{tr('junit.waiver')}: "
            f"{w.get('reason', '?')} ({tr('junit.expires')} {w.get('expires', '?')})"
        )
    return tally


def render_junit(report: Report, lang: str | None = None) -> str:
    """The report as a JUnit XML document (always well-formed XML 1.0), texts in LANG."""
    lang = i18n.normalise(lang or report.lang)
    root = ET.Element(
        "testsuites",
        {
            "name": xml_text(
                f"ascend-audit {report.host.get('hostname', '?')}: {report.verdict.value}"
            )
        },
    )
    totals: dict[str, int] = {"tests": 0, "failures": 0, "skipped": 0}
    names = list(LAYERS) + sorted({r.layer for r in report.results} - set(LAYERS))
    for layer in names:
        results = [r for r in report.results if r.layer == layer]
        lr = report.layer(layer)
        suite = ET.SubElement(
            root,
            "testsuite",
            {
                "name": layer,
                "timestamp": xml_text(report.started_at),
                "hostname": xml_text(report.host.get("hostname", "")),
            },
        )
        props = ET.SubElement(suite, "properties")
        for k, v in (
            ("verdict", lr.verdict.value if lr else "NOT_JUDGED"),
            ("reason", lr.reason if lr else ""),
            ("blocked_by", ", ".join(lr.blocked_by) if lr else ""),
            ("tool_version", report.tool.get("version", "")),
            ("policy_digest", str(report.policy.get("digest", ""))),
        ):
            ET.SubElement(props, "property", {"name": k, "value": xml_text(v)})
        counts: dict[str, int] = {"failures": 0, "skipped": 0}
        for r in results:
            for kind, n in _case(suite, r, lang).items():
                counts[kind] += n
        suite.set("tests", str(len(results)))
        suite.set("failures", str(counts["failures"]))
        suite.set("errors", "0")
        suite.set("skipped", str(counts["skipped"]))
        suite.set("time", f"{sum(r.duration_ms for r in results) / 1000:.3f}")
        totals["tests"] += len(results)
        totals["failures"] += counts["failures"]
        totals["skipped"] += counts["skipped"]
    for kind, n in totals.items():
        root.set(kind, str(n))
    root.set("errors", "0")
    root.set("time", f"{report.duration_ms / 1000:.3f}")
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def write_junit(report: Report, path: str, lang: str | None = None) -> None:
    """Render and atomically write the JUnit XML."""
    write_atomic(path, render_junit(report, lang))
