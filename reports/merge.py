"""Roll several node reports up into a fleet view: nodes × checks, and consistency across nodes."""

from __future__ import annotations

import os
from collections import Counter
from typing import Any

from ascend_audit.reports.diff import flatten_versions

from ascend_audit.model import LAYERS, Report

READY_VERDICTS = ("READY", "DEGRADED")
# Versions that must agree within one cluster; each name lists the inventory keys it may use.
CONSISTENT_VERSIONS: dict[str, tuple[str, ...]] = {
    "driver": ("driver", "npu_smi_driver", "driver_version"),
    "firmware": ("firmware", "firmware_version"),
    "cann": ("cann", "cann_toolkit", "toolkit", "cann_version"),
    "torch_npu": ("torch_npu", "torch-npu"),
    "vllm_ascend": ("vllm_ascend", "vllm-ascend"),
}


def _version_of(versions: dict[str, str], names: tuple[str, ...]) -> str | None:
    for n in names:
        for key in (n, f"{n}.version"):
            if versions.get(key):
                return versions[key]
    return None


def _started(rep: Report) -> tuple[int, str]:
    """Sort key for "newest": the parsed start time when it parses, else the raw text."""
    import datetime as dt

    try:
        t = dt.datetime.fromisoformat(rep.started_at.replace("Z", "+00:00"))
        if t.tzinfo is None:
            t = t.replace(tzinfo=dt.timezone.utc)
        return 1, t.astimezone(dt.timezone.utc).isoformat()
    except (ValueError, AttributeError):
        return 0, str(rep.started_at)


def newest_per_node(
    reports: list[tuple[str, Report]],
) -> tuple[list[tuple[str, Report]], list[dict[str, Any]]]:
    """One report per node (by hostname): the newest audit wins; returns it and what was dropped.

    A fleet view that counted one node twice would report a ready fraction of nodes that do not
    exist, and could compare a node with its own older self as if it were a peer.
    """
    by_host: dict[str, list[int]] = {}
    for i, (path, rep) in enumerate(reports):
        by_host.setdefault(rep.host.get("hostname") or f"file {path}", []).append(i)
    keep: set[int] = set()
    dropped: list[dict[str, Any]] = []
    for host, idx in by_host.items():
        best = max(idx, key=lambda i: (_started(reports[i][1]), -i))
        keep.add(best)
        if len(idx) > 1:
            path, rep = reports[best]
            dropped.append(
                {
                    "node": host,
                    "kept": path,
                    "kept_started_at": rep.started_at,
                    "dropped": [reports[i][0] for i in idx if i != best],
                    "message": f"node {host} given {len(idx)} times: keeping the newest audit, "
                    f"{path} ({rep.started_at}); ignoring "
                    + ", ".join(
                        f"{reports[i][0]} ({reports[i][1].started_at})" for i in idx if i != best
                    ),
                }
            )
    return [r for i, r in enumerate(reports) if i in keep], dropped


def merge_reports(reports: list[tuple[str, Report]]) -> dict[str, Any]:
    """The fleet view of (path, report) pairs, as plain data (also the fleet JSON).

    A node given more than once counts once, as its newest audit (`duplicates` says which)."""
    reports, duplicates = newest_per_node(reports)
    names = [rep.host.get("hostname") or os.path.basename(path) for path, rep in reports]
    check_ids: list[str] = []
    titles: dict[str, str] = {}
    check_layers: dict[str, str] = {}
    for layer in LAYERS:
        for _, rep in reports:
            for r in rep.results:
                if r.layer == layer and r.id not in titles:
                    check_ids.append(r.id)
                    titles[r.id] = r.title
                    check_layers[r.id] = r.layer
    for _, rep in reports:
        for r in rep.results:
            if r.id not in titles:
                check_ids.append(r.id)
                titles[r.id] = r.title
                check_layers[r.id] = r.layer
    nodes: list[dict[str, Any]] = []
    for name, (path, rep) in zip(names, reports):
        versions = flatten_versions(rep.inventory.get("versions"))
        nodes.append(
            {
                "node": name,
                "file": path,
                "verdict": rep.verdict.value,
                "ready": rep.verdict.value in READY_VERDICTS,
                "started_at": rep.started_at,
                "layers": {lr.name: lr.verdict.value for lr in rep.layers},
                "layer_reasons": {lr.name: lr.reason for lr in rep.layers if lr.reason},
                "npu_count": len(
                    [n for n in rep.inventory.get("npus") or [] if isinstance(n, dict)]
                ),
                "versions": {k: _version_of(versions, v) for k, v in CONSISTENT_VERSIONS.items()},
                "cells": {
                    r.id: {"status": r.status.value, "summary": r.summary} for r in rep.results
                },
            }
        )
    issues: list[dict[str, Any]] = []
    for key in CONSISTENT_VERSIONS:
        seen = {n["node"]: n["versions"][key] for n in nodes if n["versions"][key] is not None}
        distinct = Counter(seen.values())
        if len(distinct) > 1:
            majority = distinct.most_common(1)[0][0]
            issues.append(
                {
                    "kind": "version",
                    "key": key,
                    "majority": majority,
                    "values": dict(sorted(distinct.items())),
                    "nodes": sorted(n for n, v in seen.items() if v != majority),
                    "message": f"{key} differs across nodes: "
                    + ", ".join(f"{v} on {c} node(s)" for v, c in distinct.most_common()),
                }
            )
    counts = Counter(n["npu_count"] for n in nodes)
    if len(counts) > 1:
        majority_count = counts.most_common(1)[0][0]
        odd = sorted(n["node"] for n in nodes if n["npu_count"] != majority_count)
        issues.append(
            {
                "kind": "npu_count",
                "key": "npu_count",
                "majority": majority_count,
                "values": {str(k): v for k, v in sorted(counts.items())},
                "nodes": odd,
                "message": f"NPU count differs from the majority ({majority_count}) on: "
                + ", ".join(f"{n['node']} ({n['npu_count']})" for n in nodes if n["node"] in odd),
            }
        )
    flagged = {(i["key"], n) for i in issues for n in i["nodes"]}
    for n in nodes:
        n["flags"] = sorted(k for k, node in flagged if node == n["node"])
    not_ready = [n["node"] for n in nodes if not n["ready"]]
    return {
        "kind": "ascend-audit fleet",
        "node_count": len(nodes),
        "ready_count": len(nodes) - len(not_ready),
        "not_ready": not_ready,
        "checks": [{"id": c, "title": titles[c], "layer": check_layers[c]} for c in check_ids],
        "nodes": nodes,
        "consistency": issues,
        "consistent": not issues,
        "duplicates": duplicates,
        "ok": not not_ready and not issues,
    }


def fleet_exit_code(fleet: dict[str, Any]) -> int:
    """1 when any node is not ready or the nodes are inconsistent, else 0."""
    return 0 if fleet["ok"] else 1


def render_fleet_text(fleet: dict[str, Any]) -> str:
    """A terminal summary of the fleet view."""
    lines = [
        f"{fleet['ready_count']}/{fleet['node_count']} node(s) ready; "
        f"{'consistent' if fleet['consistent'] else 'INCONSISTENT'}"
    ]
    for n in fleet["nodes"]:
        bad = [c for c, v in n["cells"].items() if v["status"] in ("FAIL", "ERROR")]
        lines.append(
            f"  {n['node']:<28} {n['verdict']:<10} NPUs {n['npu_count']:<3}"
            + (f" failing: {', '.join(bad[:6])}" if bad else "")
        )
    for i in fleet["consistency"]:
        lines.append(f"  ✗ {i['message']}")
    for d in fleet.get("duplicates") or []:
        lines.append(f"  note: {d['message']}")
    return "\n".join(lines) + "\n"
