"""JSON renderer: the versioned contract every other format can be regenerated from."""

from __future__ import annotations

import json
import math
from importlib import resources
from typing import Any

from ascend_audit.model import Report
from ascend_audit.safe_write import write_text

SCHEMA_FILE = "report.schema.json"


def finite(value: Any) -> Any:
    """A JSON-able value with NaN and ±Infinity (not JSON) replaced by null, at any depth."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v) for v in value]
    return value


def report_json(report: Report) -> str:
    """The report as canonical, strict JSON text (no NaN or Infinity: those become null)."""
    data = finite(report.to_dict())
    return json.dumps(data, indent=2, ensure_ascii=False, default=str, allow_nan=False) + "\n"


def write_atomic(path: str, text: str) -> None:
    """Write an output file without clobbering (see ascend_audit/safe_write.py): a temporary
    sibling renamed over it, never through a planted link; `-` is standard output."""
    write_text(path, text)


def write_report(report: Report, path: str) -> str:
    """Write the JSON report; returns its text (for digests)."""
    text = report_json(report)
    write_atomic(path, text)
    return text


def schema() -> dict[str, Any]:
    """The JSON Schema of the report."""
    return json.loads(resources.files("ascend_audit.reports").joinpath(SCHEMA_FILE).read_text())
