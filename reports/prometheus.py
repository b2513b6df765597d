"""Prometheus renderer: the node_exporter textfile-collector format (gauges only, no timestamps).

Label names follow npu-exporter where a series is per chip (`pcie_bus_info` upper-case,
`id` = physical ID when known); every metric carries the `ascend_audit_` prefix so that it never
collides with npu-exporter (`npu_chip_info_*`, `machine_*`) or node_exporter (`node_*`) names.
No hostname label: node_exporter's `instance` already says which node it is.
"""

from __future__ import annotations

import math
from datetime import datetime
from typing import Any

from ascend_audit.model import Report, Status, Verdict
from ascend_audit.safe_write import write_text

READY_VERDICTS = (Verdict.READY, Verdict.DEGRADED)
OK_STATUSES = (Status.PASS, Status.WARN, Status.SKIP, Status.WAIVED)
VERSION_KEYS = (
    "driver",
    "firmware",
    "cann",
    "torch",
    "torch_npu",
    "vllm",
    "vllm_ascend",
    "npu_smi_driver",
)
Labels = dict[str, str]


def escape_label_value(value: str) -> str:
    """Escape a label value per the text exposition format: backslash, double quote, newline."""
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _escape_help(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\n", "\\n")


def _number(value: float) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int):
        return str(value)
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if value == int(value) and abs(value) < 1e15:
        return str(int(value))
    return repr(float(value))


class _Families:
    """Gauge families in insertion order, each written as one contiguous group."""

    def __init__(self) -> None:
        self._help: dict[str, str] = {}
        self._samples: dict[str, list[tuple[Labels, float]]] = {}

    def add(self, name: str, help_text: str, value: float, labels: Labels | None = None) -> None:
        self._help.setdefault(name, help_text)
        self._samples.setdefault(name, []).append((dict(labels or {}), value))

    def render(self) -> str:
        lines: list[str] = []
        for name, samples in self._samples.items():
            lines.append(f"# HELP {name} {_escape_help(self._help[name])}")
            lines.append(f"# TYPE {name} gauge")
            seen: set[tuple[tuple[str, str], ...]] = set()
            for labels, value in samples:
                key = tuple(sorted(labels.items()))
                if key in seen:  # a duplicate series makes node_exporter drop it: keep the first
                    continue
                seen.add(key)
                if labels:
                    body = ",".join(
                        f'{k}="{escape_label_value(v)}"' for k, v in sorted(labels.items())
                    )
                    lines.append(f"{name}{{{body}}} {_number(value)}")
                else:
                    lines.append(f"{name} {_number(value)}")
        return "\n".join(lines) + "\n"


def _epoch(iso: str) -> float | None:
    try:
        return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()
    except (ValueError, AttributeError, TypeError):
        return None


def _version_text(value: Any) -> str | None:
    if isinstance(value, dict):
        value = value.get("version")
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (str, int, float)):
        text = str(value).strip()
        return text or None
    return None


def versions_labels(report: Report) -> Labels:
    """The known versions of the inventory as info-metric labels (missing ones left out)."""
    versions = report.inventory.get("versions")
    if not isinstance(versions, dict):
        return {}
    out: Labels = {}
    for key in VERSION_KEYS:
        text = _version_text(versions.get(key))
        if text is not None:
            out[key] = text
    return out


def _npus(report: Report) -> list[dict[str, Any]]:
    npus = report.inventory.get("npus")
    return [n for n in npus if isinstance(n, dict)] if isinstance(npus, list) else []


def npu_count(report: Report) -> int:
    """Distinct NPU ids in the inventory (an A3 NPU lists two chips under one id)."""
    return len({n.get("npu_id") for n in _npus(report) if n.get("npu_id") is not None})


def _health_ok(npu: dict[str, Any]) -> bool:
    return str(npu.get("health") or "").strip().upper() == "OK"


def unhealthy_chips(report: Report) -> int:
    """Chips whose health is anything but OK (including unreadable)."""
    return sum(1 for n in _npus(report) if not _health_ok(n))


def aicpu_share(report: Report) -> float | None:
    """AI CPU share of device time: inventory, else OPR-AICPU-001's metric; None if unknown."""
    operator = report.inventory.get("operator")
    candidates: list[Any] = []
    if isinstance(operator, dict):
        candidates.append(operator.get("aicpu_share"))
    result = report.result("OPR-AICPU-001")
    if result is not None:
        candidates.append(result.metrics.get("aicpu_share"))
    for value in candidates:
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        if number and math.isfinite(value):
            return float(value)
    return None


def _bus_info(value: Any) -> str:
    """PCI address as npu-exporter writes it: DDDD:BB:DD.F with upper-case hex."""
    text = str(value or "").strip()
    if ":" not in text:
        return text
    domain_bus_dev, _, function = text.rpartition(".")
    return f"{domain_bus_dev.upper()}.{function}" if function else text.upper()


def _chip_labels(npu: dict[str, Any]) -> Labels:
    phy = npu.get("phy_id")
    return {
        "npu_id": "" if npu.get("npu_id") is None else str(npu.get("npu_id")),
        "chip_id": "" if npu.get("chip_id") is None else str(npu.get("chip_id")),
        "id": "" if phy is None else str(phy),
        "pcie_bus_info": _bus_info(npu.get("bus_id")),
        "health": str(npu.get("health") or ""),
    }


def _families(report: Report) -> _Families:
    f = _Families()
    ready = report.verdict in READY_VERDICTS
    f.add(
        "ascend_audit_ready",
        "1 when every required layer is READY or DEGRADED (exit code 0 without --fail-on warn).",
        1 if ready else 0,
    )
    f.add(
        "ascend_audit_info",
        "The audit's overall verdict and the auditor's version; value always 1.",
        1,
        {
            "verdict": report.verdict.value,
            "tool_version": str(report.tool.get("version", "")),
            "schema_version": report.schema_version,
        },
    )
    finished = _epoch(report.finished_at) or _epoch(report.started_at)
    if finished is not None:
        f.add(
            "ascend_audit_last_run_timestamp_seconds",
            "Unix time at which the audit finished.",
            round(finished, 3),
        )
    f.add(
        "ascend_audit_duration_seconds",
        "Wall time the audit took, in seconds.",
        round(report.duration_ms / 1000.0, 6),
    )
    for layer in report.layers:
        f.add(
            "ascend_audit_layer_ready",
            "1 when the layer is READY or DEGRADED, else 0; the verdict label says which.",
            1 if layer.verdict in READY_VERDICTS else 0,
            {
                "layer": layer.name,
                "verdict": layer.verdict.value,
                "required": "true" if layer.required else "false",
            },
        )
    for r in report.results:
        f.add(
            "ascend_audit_check_status",
            "One series per check with its status as a label; value always 1.",
            1,
            {"check": r.id, "layer": r.layer, "status": r.status.value, "severity": r.severity},
        )
    for r in report.results:
        f.add(
            "ascend_audit_check_ok",
            "1 when the check passed, warned, was waived or did not apply; 0 on FAIL, ERROR "
            "or BLOCKED.",
            1 if r.status in OK_STATUSES else 0,
            {"check": r.id, "layer": r.layer},
        )
    counts = {s: 0 for s in Status}
    for r in report.results:
        counts[r.status] += 1
    for status, n in counts.items():
        f.add(
            "ascend_audit_check_results",
            "Number of check results with this status.",
            n,
            {"status": status.value},
        )
    if "npus" in report.inventory:
        f.add("ascend_audit_npus", "Distinct NPUs the audit found.", npu_count(report))
        f.add(
            "ascend_audit_npu_chips_unhealthy",
            "Chips whose npu-smi health is not OK.",
            unhealthy_chips(report),
        )
        for npu in _npus(report):
            f.add(
                "ascend_audit_npu_chip_health_ok",
                "1 when npu-smi reports the chip's health as OK, else 0 (health label: as read).",
                1 if _health_ok(npu) else 0,
                _chip_labels(npu),
            )
    share = aicpu_share(report)
    if share is not None:
        f.add(
            "ascend_audit_aicpu_time_ratio",
            "Share (0..1) of device time spent in AI CPU operators in the traces audited.",
            round(share, 6),
        )
    versions = versions_labels(report)
    if versions:
        f.add(
            "ascend_audit_versions_info",
            "Driver, firmware, CANN and framework versions found; value always 1.",
            1,
            versions,
        )
    return f


def render_prometheus(report: Report) -> str:
    """The report as node_exporter textfile-collector text, ending in a newline."""
    return _families(report).render()


def write_prometheus(report: Report, path: str) -> str:
    """Write the textfile atomically (same-dir temp not ending in .prom, then rename); the text.
    `-` writes it to standard output."""
    text = render_prometheus(report)
    # node_exporter often runs as another user (Debian: prometheus): 0644; the temporary name
    # ends in .part, never .prom, so the collector never reads half a file
    write_text(path, text, mode=0o644)
    return text
