"""JSON renderer: the versioned contract every other format can be regenerated from."""

from __future__ import annotations

import json
import os
import tempfile
from importlib import resources
from typing import Any

from ascend_audit.model import Report

SCHEMA_FILE = "report.schema.json"


def report_json(report: Report) -> str:
    """The report as canonical JSON text."""
    return json.dumps(report.to_dict(), indent=2, ensure_ascii=False, default=str) + "\n"


def write_atomic(path: str, text: str) -> None:
    """Write a file through a temporary sibling and a rename, so readers never see half of it."""
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".ascend-audit-", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def write_report(report: Report, path: str) -> str:
    """Write the JSON report; returns its text (for digests)."""
    text = report_json(report)
    write_atomic(path, text)
    return text


def schema() -> dict[str, Any]:
    """The JSON Schema of the report."""
    return json.loads(resources.files("ascend_audit.reports").joinpath(SCHEMA_FILE).read_text())
