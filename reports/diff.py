"""Compare two audits of a node: status changes, version changes, NPUs that came or went."""

from __future__ import annotations

import json
from typing import Any

from ascend_audit.reports.json_report import schema
from ascend_audit.reports.schema_check import schema_problem

from ascend_audit.model import LAYERS, Report
from ascend_audit.safe_io import open_regular

STATUS_RANK = {
    "PASS": 0,
    "WAIVED": 1,
    "SKIP": 2,
    "WARN": 3,
    "BLOCKED": 4,
    "FAIL": 5,
    "ERROR": 6,
}
VERDICT_RANK = {"READY": 0, "DEGRADED": 1, "MISSING": 2, "BLOCKED": 3, "NOT_READY": 4}


class ReportInputError(Exception):
    """An input report could not be read or is not an ascend-audit report; names the file."""


def load_report(path: str) -> tuple[Report, str]:
    """Read and parse one JSON report; returns the Report and the exact text it was read from."""
    try:
        with open_regular(path, "r", encoding="utf-8") as fh:
            text = fh.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise ReportInputError(f"{path}: cannot read: {exc}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ReportInputError(f"{path}: not valid JSON: {exc}") from None
    except RecursionError:
        raise ReportInputError(f"{path}: nested too deeply to be a report") from None
    try:
        json.dumps(data, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise ReportInputError(f"{path}: holds a lone surrogate (\\udXXX), not text") from None
    except (RecursionError, ValueError):
        raise ReportInputError(f"{path}: nested too deeply to be a report") from None
    if not isinstance(data, dict) or "verdict" not in data or "results" not in data:
        raise ReportInputError(f"{path}: not an ascend-audit JSON report (no verdict/results)")
    problem = schema_problem(data, schema())
    if problem:
        raise ReportInputError(f"{path}: not a valid ascend-audit report: {problem}")
    try:
        report = Report.from_dict(data)
    except (KeyError, ValueError, TypeError, AttributeError) as exc:
        raise ReportInputError(f"{path}: not a valid ascend-audit report: {exc!r}") from None
    return report, text


def flatten_versions(versions: Any, prefix: str = "") -> dict[str, str]:
    """inventory.versions as flat dotted keys with string values."""
    out: dict[str, str] = {}
    if not isinstance(versions, dict):
        return out
    for k, v in versions.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict):
            out.update(flatten_versions(v, key + "."))
        elif v is not None:
            out[key] = v if isinstance(v, str) else json.dumps(v, sort_keys=True, default=str)
    return out


def npu_key(npu: dict[str, Any]) -> tuple[Any, Any, Any]:
    """An NPU's identity across audits."""
    bus = npu.get("bus_id")
    return (npu.get("npu_id"), npu.get("chip_id"), str(bus).lower() if bus else bus)


def _key_text(key: tuple[Any, Any, Any]) -> str:
    return f"NPU {key[0]} chip {key[1]} bus {key[2]}"


def diff_reports(before: Report, after: Report) -> dict[str, Any]:
    """What changed between two audits; `worse` lists what counts as a regression."""
    worse: list[str] = []
    b_res = {r.id: r for r in before.results}
    a_res = {r.id: r for r in after.results}
    status_changes = []
    for cid in [r.id for r in after.results if r.id in b_res]:
        was, now = b_res[cid].status.value, a_res[cid].status.value
        if was != now:
            got_worse = STATUS_RANK.get(now, 9) > STATUS_RANK.get(was, 9)
            status_changes.append(
                {
                    "id": cid,
                    "layer": a_res[cid].layer,
                    "before": was,
                    "after": now,
                    "worse": got_worse,
                    "summary": a_res[cid].summary,
                }
            )
            if got_worse:
                worse.append(f"{cid}: {was} → {now}")
    added = [
        {"id": r.id, "layer": r.layer, "status": r.status.value}
        for r in after.results
        if r.id not in b_res
    ]
    for a in added:
        if a["status"] in ("FAIL", "ERROR"):
            worse.append(f"{a['id']}: new check {a['status']}")
    removed = [
        {"id": r.id, "layer": r.layer, "status": r.status.value}
        for r in before.results
        if r.id not in a_res
    ]

    layer_changes = []
    for name in LAYERS:
        lb, la = before.layer(name), after.layer(name)
        vb = lb.verdict.value if lb else None
        va = la.verdict.value if la else None
        if vb != va:
            got_worse = vb is not None and va is not None and VERDICT_RANK[va] > VERDICT_RANK[vb]
            layer_changes.append({"layer": name, "before": vb, "after": va, "worse": got_worse})
            if got_worse:
                worse.append(f"layer {name}: {vb} → {va}")
    overall = {"before": before.verdict.value, "after": after.verdict.value}
    if VERDICT_RANK[after.verdict.value] > VERDICT_RANK[before.verdict.value]:
        worse.append(f"overall: {before.verdict.value} → {after.verdict.value}")

    vb_, va_ = (
        flatten_versions(before.inventory.get("versions")),
        flatten_versions(after.inventory.get("versions")),
    )
    version_changes = [
        {"key": k, "before": vb_.get(k), "after": va_.get(k)}
        for k in sorted(set(vb_) | set(va_))
        if vb_.get(k) != va_.get(k)
    ]

    def npus(rep: Report) -> dict[tuple[Any, Any, Any], dict[str, Any]]:
        return {npu_key(n): n for n in rep.inventory.get("npus") or [] if isinstance(n, dict)}

    nb, na = npus(before), npus(after)
    gone = [dict(nb[k]) for k in nb if k not in na]
    appeared = [dict(na[k]) for k in na if k not in nb]
    changed = [
        {
            "npu": _key_text(k),
            "before": {f: nb[k].get(f) for f in ("name", "health")},
            "after": {f: na[k].get(f) for f in ("name", "health")},
        }
        for k in nb
        if k in na
        and (nb[k].get("name"), nb[k].get("health")) != (na[k].get("name"), na[k].get("health"))
    ]
    for n in gone:
        worse.append(f"{_key_text(npu_key(n))} disappeared")
    hb, ha = before.host.get("hostname"), after.host.get("hostname")
    return {
        "before": {"host": hb, "started_at": before.started_at},
        "after": {"host": ha, "started_at": after.started_at},
        "different_hosts": hb != ha,
        "overall": overall,
        "layers": layer_changes,
        "status_changes": status_changes,
        "checks_added": added,
        "checks_removed": removed,
        "version_changes": version_changes,
        "npus_appeared": appeared,
        "npus_disappeared": gone,
        "npus_changed": changed,
        "worse": worse,
        "got_worse": bool(worse),
    }


def host_warning(d: dict[str, Any]) -> str | None:
    """The warning to print when the two reports are of different hosts, else None."""
    if not d.get("different_hosts"):
        return None
    return (
        f"warning: the reports are of different hosts ({d['before']['host']} before, "
        f"{d['after']['host']} after): what differs may be the hosts, not a change over time"
    )


def render_diff_text(d: dict[str, Any]) -> str:
    """A plain-text account of a diff: each change once, ✗ marking what got worse."""

    def mark(worse: bool) -> str:
        return "✗" if worse else "✓"

    lines = []
    warning = host_warning(d)
    if warning:
        lines.append(warning)
    ob, oa = d["overall"]["before"], d["overall"]["after"]
    overall_worse = VERDICT_RANK.get(oa, 9) > VERDICT_RANK.get(ob, 9)
    lines += [
        f"before: {d['before']['host']} {d['before']['started_at']}",
        f"after:  {d['after']['host']} {d['after']['started_at']}",
        f"overall: {ob} → {oa}" + (" ✗" if overall_worse else ""),
    ]
    if d["worse"]:
        lines.append(f"got worse: {len(d['worse'])} change(s), marked ✗ below")
    if d["layers"]:
        lines.append("\nlayers:")
        lines += [
            f"  {mark(lc['worse'])} {lc['layer']}: {lc['before']} → {lc['after']}"
            for lc in d["layers"]
        ]
    if d["status_changes"]:
        lines.append("\nstatus changes:")
        for c in d["status_changes"]:
            lines.append(
                f"  {mark(c['worse'])} {c['id']:<16} {c['before']:>7} → {c['after']:<7} "
                f"{c['summary'][:100]}"
            )
    if d["checks_added"]:
        lines.append("\nchecks added:")
        lines += [
            f"  {mark(c['status'] in ('FAIL', 'ERROR'))} {c['id']} ({c['status']})"
            for c in d["checks_added"]
        ]
    if d["checks_removed"]:
        lines.append(
            "\nchecks removed: "
            + ", ".join(f"{c['id']} ({c['status']})" for c in d["checks_removed"])
        )
    if d["version_changes"]:
        lines.append("\nversion changes:")
        lines += [f"  {v['key']}: {v['before']} → {v['after']}" for v in d["version_changes"]]
    if d["npus_appeared"]:
        lines.append("\nNPUs appeared:")
        lines += [f"  {_key_text(npu_key(n))} {n.get('name', '')}" for n in d["npus_appeared"]]
    if d["npus_disappeared"]:
        lines.append("\nNPUs disappeared:")
        lines += [f"  ✗ {_key_text(npu_key(n))} {n.get('name', '')}" for n in d["npus_disappeared"]]
    if d["npus_changed"]:
        lines.append("\nNPUs changed:")
        lines += [f"  {c['npu']}: {c['before']} → {c['after']}" for c in d["npus_changed"]]
    if not (
        d["worse"]
        or d["status_changes"]
        or d["version_changes"]
        or d["layers"]
        or d["npus_appeared"]
        or d["npus_disappeared"]
        or d["npus_changed"]
        or d["checks_added"]
        or d["checks_removed"]
    ):
        lines.append("\nno changes")
    return "\n".join(lines) + "\n"
