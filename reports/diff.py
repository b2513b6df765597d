"""Compare two audits of a node: status changes, version changes, NPUs that came or went."""

from __future__ import annotations

import json
import re
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


GROUPED_STATUSES = ("BLOCKED", "ERROR", "SKIP")
NPU_KEY = re.compile(r"^npus\.(\d+)\.(.+)$")


def _ranges(numbers: list[int]) -> str:
    """0, 1, 2, 3, 5 → '0–3, 5'."""
    runs: list[list[int]] = []
    for n in sorted(set(numbers)):
        if runs and runs[-1][1] == n - 1:
            runs[-1][1] = n
        else:
            runs.append([n, n])
    return ", ".join(str(lo) if lo == hi else f"{lo}–{hi}" for lo, hi in runs)


def grouped_versions(changes: list[dict[str, Any]]) -> list[tuple[str, Any, Any, list[str]]]:
    """Version changes, one line per distinct change: the per-NPU keys (npus.N.field) of one
    before → after fold into one `npus.{0–7}.field`, and every key that changed the same way as
    an earlier one (driver, npu_smi_driver, npus.*.software) joins that line as `also`."""
    per_npu: dict[tuple[str, Any, Any], list[int]] = {}
    plain: list[tuple[str, Any, Any]] = []
    for c in changes:
        m = NPU_KEY.match(str(c["key"]))
        if m:
            per_npu.setdefault((m.group(2), c["before"], c["after"]), []).append(int(m.group(1)))
        else:
            plain.append((str(c["key"]), c["before"], c["after"]))
    for (field, before, after), ids in per_npu.items():
        plain.append((f"{field} on NPUs {_ranges(ids)}", before, after))
    out: list[tuple[str, Any, Any, list[str]]] = []
    for key, before, after in plain:
        same = next((o for o in out if (o[1], o[2]) == (before, after)), None)
        if same is not None:
            same[3].append(key)
        else:
            out.append((key, before, after, []))
    return out


def _status_groups(changes: list[dict[str, Any]]) -> list[tuple[dict[str, Any], list[str]]]:
    """Status changes, those to BLOCKED/ERROR/SKIP with one summary (one cause) grouped."""
    groups: dict[tuple[Any, ...], tuple[dict[str, Any], list[str]]] = {}
    out: list[tuple[dict[str, Any], list[str]]] = []
    for c in changes:
        if c["after"] in GROUPED_STATUSES:
            key = (c["after"], c["worse"], c["summary"])
            if key in groups:
                groups[key][1].append(c["id"])
                continue
            groups[key] = (c, [c["id"]])
            out.append(groups[key])
        else:
            out.append((c, [c["id"]]))
    return out


def render_diff_text(d: dict[str, Any], width: int | None = None) -> str:
    """A plain-text account of a diff in WIDTH columns (default: the terminal's, `COLUMNS`
    first), wrapped on words: each change once, ✗ marking what got worse; one line per distinct
    version change and per group of checks that changed for one cause."""
    from ascend_audit.reports.terminal import terminal_width, wrap

    width = width or terminal_width()

    def mark(worse: bool) -> str:
        return "✗" if worse else "✓"

    def para(text: str, indent: str = "    ", first: str = "  ") -> list[str]:
        return wrap(text, width, indent, first)

    lines = []
    warning = host_warning(d)
    if warning:
        lines += para(warning, "  ", "")
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
        for c, ids in _status_groups(d["status_changes"]):
            if len(ids) == 1:
                head = f"  {mark(c['worse'])} {c['id']:<16} {c['before']:>7} → {c['after']:<7} "
                if width >= 90:  # the summary beside its check, wrapped under itself
                    lines += wrap(c["summary"], width, " " * len(head), head)
                else:  # narrow: the summary below, indented
                    lines += [head.rstrip(), *para(c["summary"], "      ", "      ")]
            else:
                lines += para(
                    f"{mark(c['worse'])} {len(ids)} checks → {c['after']}: " + ", ".join(ids)
                )
                lines += para(c["summary"], "      ", "      ")
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
        for key, before, after, also in grouped_versions(d["version_changes"]):
            lines += para(
                f"{key}: {before} → {after}" + (f" (also {', '.join(also)})" if also else "")
            )
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
