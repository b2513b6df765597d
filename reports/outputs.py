"""Write the requested output files of one report."""

from __future__ import annotations

import os

from ascend_audit.reports.json_report import report_json, write_report

from ascend_audit.model import Report


def render_outputs(
    report: Report,
    json_path: str | None,
    output_dir: str | None,
    html_path: str | None = None,
    junit_path: str | None = None,
    markdown_path: str | None = None,
) -> list[str]:
    """Write --json, --html, --junit, --markdown and --output-dir files; returns the paths written.

    -o DIR gets report.json, report.html, report.junit.xml and report.md; the HTML carries the
    SHA-256 of the JSON text written beside it (or of the canonical JSON when none is written).
    """
    written: list[str] = []
    json_text: str | None = None
    if json_path:
        json_text = write_report(report, json_path)
        written.append(json_path)
    if output_dir:
        path = os.path.join(output_dir, "report.json")
        json_text = write_report(report, path)
        written.append(path)
    wants_more = output_dir or html_path or junit_path or markdown_path
    if not wants_more:
        return written
    from ascend_audit.reports.html import json_sha256, write_html
    from ascend_audit.reports.junit import write_junit
    from ascend_audit.reports.markdown import write_markdown

    if json_text is None:
        json_text = report_json(report)
    digest = json_sha256(json_text)
    targets = []
    if output_dir:
        targets += [
            ("html", os.path.join(output_dir, "report.html")),
            ("junit", os.path.join(output_dir, "report.junit.xml")),
            ("md", os.path.join(output_dir, "report.md")),
        ]
    targets += [
        (k, p) for k, p in (("html", html_path), ("junit", junit_path), ("md", markdown_path)) if p
    ]
    for kind, path in targets:
        if kind == "html":
            write_html(report, path, json_text)
        elif kind == "junit":
            write_junit(report, path)
        else:
            write_markdown(report, path, digest)
        written.append(path)
    return written
