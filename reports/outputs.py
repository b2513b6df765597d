"""Write the requested output files of one report."""

from __future__ import annotations

import os

from ascend_audit.reports.json_report import write_report

from ascend_audit.model import Report


def render_outputs(report: Report, json_path: str | None, output_dir: str | None) -> list[str]:
    """Write --json and --output-dir files; returns the paths written."""
    written: list[str] = []
    if json_path:
        write_report(report, json_path)
        written.append(json_path)
    if output_dir:
        path = os.path.join(output_dir, "report.json")
        write_report(report, path)
        written.append(path)
    return written
