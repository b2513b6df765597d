"""Fleet merge speed: `ascend-audit merge` over 200 generated node reports (wall time, peak RSS).

Usage: python benchmarks/bench_merge.py [--nodes 200] [--runs 3] [--seed 7] [--keep DIR]
Targets: < 5 s wall and < 300 MB peak RSS for 200 nodes, HTML and JSON both written.
Exit status 1 when a target is missed, 2 when `merge` does not exist in this checkout.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

CLI = [sys.executable, "-m", "ascend_audit"]
WALL_TARGET_S = 5.0
RSS_TARGET_MB = 300.0
CHECKS = {
    "driver": [
        "DRV-DEV-001",
        "DRV-NPU-001",
        "DRV-NPU-002",
        "DRV-STOR-001",
        "DRV-TOPO-001",
        "DRV-VER-001",
        "DRV-VER-002",
    ],
    "operator": ["OPR-AICPU-001", "OPR-FALLBACK-001", "OPR-FUSED-001", "OPR-LAYOUT-001"],
    "framework": ["FWK-GRAPH-001", "FWK-KV-001", "FWK-STACK-001"],
}
DRIVERS = ["24.1.rc3", "24.1.rc3", "24.1.rc3", "24.1.0", "25.0.rc1.1"]
FIRMWARES = ["7.5.0.1.129", "7.5.0.1.129", "7.5.0.1.129", "7.3.0.1.231", "7.1.0.11.220"]
CANNS = ["8.0.0", "8.0.0", "8.1.RC1", "8.0.RC3"]
TORCH_NPU = ["2.5.1", "2.5.1", "2.5.1.post1", "2.4.0", None]
VLLM_ASCEND = ["0.9.1", "0.9.1", "0.9.0rc2", None]


def _status(rng: random.Random, healthy: bool) -> str:
    if healthy:
        return rng.choices(["PASS", "WARN", "SKIP", "WAIVED"], [80, 10, 8, 2])[0]
    return rng.choices(["PASS", "WARN", "FAIL", "ERROR", "SKIP"], [55, 10, 25, 5, 5])[0]


def node_report(i: int, rng: random.Random, start: datetime) -> dict[str, Any]:
    """One varied node report in the JSON contract's shape."""
    healthy = rng.random() < 0.8
    npus = rng.choices([8, 8, 8, 16, 7, 4], [60, 10, 10, 10, 5, 5])[0]
    chips = 2 if npus == 16 else 1
    results: list[dict[str, Any]] = []
    layers: list[dict[str, Any]] = []
    blocked: list[str] = []
    for layer, ids in CHECKS.items():
        statuses = {}
        for cid in ids:
            status = "BLOCKED" if blocked else _status(rng, healthy)
            statuses[cid] = status
            summary = f"{cid} on node {i}: " + " ".join(
                rng.choice("abcdefgh") * 6 for _ in range(8)
            )
            results.append(
                {
                    "id": cid,
                    "layer": layer,
                    "status": status,
                    "severity": "high",
                    "title": f"title of {cid}",
                    "summary": summary,
                    "remediation": "do the thing",
                    "evidence": [
                        {
                            "kind": "command",
                            "source": "npu-smi info",
                            "excerpt": "x" * rng.randint(50, 800),
                            "values": {"n": npus},
                        }
                    ],
                    "metrics": {"aicpu_share": round(rng.random() * 0.1, 4)}
                    if cid == "OPR-AICPU-001"
                    else {},
                    "duration_ms": round(rng.random() * 50, 3),
                    "blocked_by": list(blocked),
                    "waiver": None,
                    "on_broken_layer": False,
                }
            )
        bad = [c for c, s in statuses.items() if s in ("FAIL", "ERROR")]
        if blocked:
            verdict = "BLOCKED"
        elif bad:
            verdict = "NOT_READY"
        elif any(s == "WARN" for s in statuses.values()):
            verdict = "DEGRADED"
        else:
            verdict = "READY"
        layers.append(
            {
                "name": layer,
                "verdict": verdict,
                "required": True,
                "blocked_by": list(blocked),
                "reason": "",
            }
        )
        blocked = blocked + bad
    order = ["BLOCKED", "NOT_READY", "DEGRADED", "READY"]
    overall = next((v for v in order if any(x["verdict"] == v for x in layers)), "READY")
    if overall == "BLOCKED":
        overall = "NOT_READY"
    t0 = start + timedelta(seconds=i * 7)
    versions = {
        "driver": rng.choice(DRIVERS),
        "firmware": rng.choice(FIRMWARES),
        "cann": rng.choice(CANNS),
        "torch_npu": rng.choice(TORCH_NPU),
        "vllm_ascend": rng.choice(VLLM_ASCEND),
    }
    return {
        "schema_version": "1.0",
        "tool": {"name": "ascend-audit", "version": "0.1.0"},
        "host": {
            "hostname": f"a2-node-{i:03d}",
            "kernel": "5.10.0",
            "os": "openEuler 22.03",
            "arch": "aarch64",
        },
        "started_at": t0.isoformat(timespec="seconds"),
        "finished_at": (t0 + timedelta(seconds=3)).isoformat(timespec="seconds"),
        "duration_ms": 3000.0,
        "inputs": {"host": "live"},
        "policy": {"source": "policy.toml", "required_layers": list(CHECKS), "waivers": []},
        "verdict": overall,
        "layers": layers,
        "results": results,
        "inventory": {
            "npus": [
                {
                    "npu_id": n,
                    "chip_id": c,
                    "name": "910B3",
                    "health": "OK" if healthy or rng.random() < 0.9 else "Warning",
                    "bus_id": f"0000:{n:02x}:00.0",
                    "phy_id": n * chips + c,
                }
                for n in range(npus // chips)
                for c in range(chips)
            ],
            "versions": {k: v for k, v in versions.items() if v is not None},
            "topology": {},
            "storage": {},
        },
    }


def generate(directory: Path, nodes: int, seed: int) -> list[Path]:
    """Write `nodes` report files into directory; return their paths."""
    rng = random.Random(seed)
    start = datetime(2026, 5, 4, 8, 0, tzinfo=timezone.utc)
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(nodes):
        p = directory / f"a2-node-{i:03d}.json"
        p.write_text(json.dumps(node_report(i, rng, start), indent=2))
        paths.append(p)
    return paths


def has_merge() -> bool:
    out = subprocess.run([*CLI, "merge", "--help"], capture_output=True, text=True, check=False)
    return out.returncode == 0


def timed_merge(paths: list[Path], out: Path) -> tuple[float, float, int]:
    """Wall seconds, peak RSS (MB) of the merge process, and its exit code."""
    argv = [
        *CLI,
        "merge",
        *map(str, paths),
        "--html",
        str(out / "fleet.html"),
        "--json",
        str(out / "fleet.json"),
    ]
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)  # this child's own peak RSS, not ours
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    return wall, usage.ru_maxrss / 1024.0, proc.returncode  # Linux: ru_maxrss in KiB


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=200)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--keep", type=Path, help="write the reports and outputs here and keep them")
    args = ap.parse_args()
    if not has_merge():
        print("bench_merge: `ascend-audit merge` does not exist in this checkout; nothing timed")
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        base = args.keep or Path(tmp)
        paths = generate(base / "reports", args.nodes, args.seed)
        size_mb = sum(p.stat().st_size for p in paths) / 1e6
        runs = [timed_merge(paths, base) for _ in range(args.runs)]
        wall = statistics.median(r[0] for r in runs)
        rss = max(r[1] for r in runs)
        codes = {r[2] for r in runs}
        fleet = json.loads((base / "fleet.json").read_text())
        html_mb = (base / "fleet.html").stat().st_size / 1e6
    print(f"merge of {args.nodes} node reports ({size_mb:.1f} MB JSON), median of {args.runs}:")
    print(f"  wall      {wall:6.2f} s   target < {WALL_TARGET_S:.0f} s")
    print(f"  peak RSS  {rss:6.1f} MB  target < {RSS_TARGET_MB:.0f} MB")
    print(
        f"  fleet: {fleet.get('ready_count')}/{fleet.get('node_count')} ready, "
        f"HTML {html_mb:.1f} MB, exit {sorted(codes)}"
    )
    ok = wall < WALL_TARGET_S and rss < RSS_TARGET_MB and codes <= {0, 1}
    print("  OK" if ok else "  TARGET MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
