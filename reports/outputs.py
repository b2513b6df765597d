"""Write the requested output files of one report."""

from __future__ import annotations

import os

from ascend_audit.reports.json_report import report_json, write_report

from ascend_audit.model import Report
from ascend_audit.safe_write import publish_dir, staging_dir

# What `-o DIR` writes; a directory holding only these (an earlier run's set) is replaced whole.
DIR_FILES = ("report.json", "report.html", "report.junit.xml", "report.md")


def _replaceable(directory: str) -> bool:
    try:
        return set(os.listdir(directory)) <= set(DIR_FILES)
    except OSError:
        return False


def render_outputs(
    report: Report,
    json_path: str | None,
    output_dir: str | None,
    html_path: str | None = None,
    junit_path: str | None = None,
    markdown_path: str | None = None,
) -> list[str]:
    """Write --json, --html, --junit, --markdown and --output-dir files; returns the paths written.

    -o DIR gets report.json, report.html, report.junit.xml and report.md, built in a staging
    directory beside DIR and moved into place in one step (two runs never leave a mixed set);
    the HTML carries the SHA-256 of the JSON text written beside it (or of the canonical JSON
    when none is written). `-` for a file option means standard output.
    """
    written: list[str] = []
    json_text: str | None = None
    if json_path:
        json_text = write_report(report, json_path)
        written.append(json_path)
    staging = staging_dir(output_dir) if output_dir else None
    try:
        if staging:
            json_text = write_report(report, os.path.join(staging, "report.json"))
        wants_more = staging or html_path or junit_path or markdown_path
        if wants_more:
            more = _render_more(report, json_text, staging, html_path, junit_path, markdown_path)
            written += more
        if staging and output_dir:
            publish_dir(staging, output_dir, _replaceable(output_dir))
            staging = None
            written += [os.path.join(output_dir, name) for name in DIR_FILES]
    finally:
        if staging:
            import shutil

            shutil.rmtree(staging, ignore_errors=True)
    return written


def _render_more(
    report: Report,
    json_text: str | None,
    staging: str | None,
    html_path: str | None,
    junit_path: str | None,
    markdown_path: str | None,
) -> list[str]:
    from ascend_audit.reports.html import json_sha256, write_html
    from ascend_audit.reports.junit import write_junit
    from ascend_audit.reports.markdown import write_markdown

    if json_text is None:
        json_text = report_json(report)
    digest = json_sha256(json_text)
    targets = []
    if staging:
        targets += [
            ("html", os.path.join(staging, "report.html"), False),
            ("junit", os.path.join(staging, "report.junit.xml"), False),
            ("md", os.path.join(staging, "report.md"), False),
        ]
    targets += [
        (k, p, True)
        for k, p in (("html", html_path), ("junit", junit_path), ("md", markdown_path))
        if p
    ]
    written = []
    for kind, path, shown in targets:
        if kind == "html":
            write_html(report, path, json_text)
        elif kind == "junit":
            write_junit(report, path)
        else:
            write_markdown(report, path, digest)
        if shown:
            written.append(path)
    return written
