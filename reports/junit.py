"""JUnit XML renderer: one testsuite per layer, one testcase per check, for CI test views."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from typing import Any

from ascend_audit.reports.json_report import write_atomic

from ascend_audit.model import LAYERS, Report, Result, Status

# Characters XML 1.0 forbids (C0 controls but tab/LF/CR, lone surrogates, U+FFFE/U+FFFF).
_XML_FORBIDDEN = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def xml_text(value: Any) -> str:
    """Text that is always valid in XML 1.0: forbidden characters become U+FFFD."""
    return _XML_FORBIDDEN.sub("\ufffd", value if isinstance(value, str) else str(value))


def _sources(result: Result) -> str:
    lines = []
    for e in result.evidence:
        line = f"  - {e.kind}: {e.source}"
        rc = e.values.get("rc", e.values.get("exit_code"))
        if rc is not None:
            line += f" (exit code {rc})"
        lines.append(line)
    return "Evidence:\n" + "\n".join(lines) if lines else ""


def _case(suite: ET.Element, r: Result) -> dict[str, int]:
    case = ET.SubElement(
        suite,
        "testcase",
        {
            "classname": xml_text(r.layer),
            "name": xml_text(f"{r.id} {r.title}".strip()),
            "time": f"{max(r.duration_ms, 0.0) / 1000:.3f}",
        },
    )
    tally = {"failures": 0, "skipped": 0}
    if r.status in (Status.FAIL, Status.ERROR):
        body = "\n\n".join(
            x for x in (f"Remediation: {r.remediation}" if r.remediation else "", _sources(r)) if x
        )
        el = ET.SubElement(
            case, "failure", {"message": xml_text(r.summary), "type": r.status.value}
        )
        el.text = xml_text(body)
        tally["failures"] = 1
    elif r.status in (Status.BLOCKED, Status.SKIP):
        reason = r.summary
        if r.status is Status.BLOCKED and r.blocked_by:
            reason = f"blocked by {', '.join(r.blocked_by)}: {r.summary}"
        ET.SubElement(case, "skipped", {"message": xml_text(f"{r.status.value}: {reason}")})
        tally["skipped"] = 1
    elif r.status is Status.WARN:
        out = ET.SubElement(case, "system-out")
        text = f"WARNING: {r.summary}"
        if r.remediation:
            text += f"\nRemediation: {r.remediation}"
        out.text = xml_text(text)
    elif r.status is Status.WAIVED:
        out = ET.SubElement(case, "system-out")
        w = r.waiver or {}
        out.text = xml_text(
            f"WAIVED: {r.summary}\nwaiver: {w.get('reason', '?')} (expires {w.get('expires', '?')})"
        )
    return tally


def render_junit(report: Report) -> str:
    """The report as a JUnit XML document (always well-formed XML 1.0)."""
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
            for kind, n in _case(suite, r).items():
                counts[kind] += n
        suite.set("tests", str(len(results)))
        suite.set("failures", str(counts["failures"]))
        suite.set("errors", "0")
        suite.set("skipped", str(counts["skipped"]))
        suite.set("time", f"{sum(r.duration_ms for r in results) / 1000:.3f}")
        totals["tests"] += len(results)
        totals["failures"] += counts["failures"]
        totals["skipped"] += counts["skipped"]
    for name, total in totals.items():
        root.set(name, str(total))
    root.set("errors", "0")
    root.set("time", f"{report.duration_ms / 1000:.3f}")
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def write_junit(report: Report, path: str) -> None:
    """Render and atomically write the JUnit XML."""
    write_atomic(path, render_junit(report))
