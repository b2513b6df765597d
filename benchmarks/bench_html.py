"""Benchmark the HTML renderer on a generated report: 100 results with long evidence.

    python benchmarks/bench_html.py [--results 100] [--excerpt-kb 64] [--out /tmp/bench.html]

Prints the JSON size, the HTML size and the render time (best of several runs).
Acceptance: the HTML stays under 2 MB and renders in under a second.
"""

from __future__ import annotations

import argparse
import random
import time

from ascend_audit.reports.html import render_html
from ascend_audit.reports.json_report import report_json

from ascend_audit.model import Evidence, LayerReport, Report, Result, Status, Verdict

STATUSES = [Status.PASS] * 6 + [Status.WARN, Status.FAIL, Status.ERROR, Status.SKIP, Status.WAIVED]


def make_report(n_results: int = 100, excerpt_kb: int = 64, seed: int = 7) -> Report:
    """A report of N results, each with three evidence items carrying ~EXCERPT_KB of log."""
    rng = random.Random(seed)
    line = '2025-01-15 08:00:00.123 [INFO] HCCL(12345) rank 3 -> 7 link up, retry=0 <ok> & "q"\n'
    excerpt = line * max(1, excerpt_kb * 1024 // len(line))
    layers = ("driver", "operator", "framework")
    results = []
    for i in range(n_results):
        status = rng.choice(STATUSES)
        layer = layers[i * 3 // n_results]
        evidence = [
            Evidence(
                "command",
                f"npu-smi info -t board -i {i % 8}",
                excerpt,
                {"rc": 0, "duration_ms": 31.5, "status": "ok"},
            ),
            Evidence(
                "file",
                f"/sys/bus/pci/devices/0000:{i:02x}:00.0/current_link_speed",
                excerpt,
                {"current_speed": 16.0, "max_speed": 16.0},
            ),
            Evidence(
                "log",
                "/var/log/npu/slog/device-0/device-0_2025.log",
                excerpt,
                {"lines": list(range(400)), "by_level": {"ERROR": 3, "WARN": 17}},
            ),
        ]
        results.append(
            Result(
                id=f"GEN-{i:03d}",
                layer=layer,
                status=status,
                severity="high",
                title=f"Generated check {i}",
                summary=f"summary of check {i}: " + "detail " * 30,
                remediation="remediate " * 40,
                evidence=evidence,
                metrics={"time_by_core_us": {f"core{c}": rng.random() * 1e5 for c in range(24)}}
                if layer == "operator" and i % 10 == 0
                else {},
                duration_ms=rng.random() * 100,
                waiver={
                    "check": f"GEN-{i:03d}",
                    "reason": "known",
                    "expires": "2099-01-01",
                    "active": True,
                    "was": "FAIL",
                }
                if status is Status.WAIVED
                else None,
            )
        )
    npus = [
        {
            "npu_id": i,
            "chip_id": 0,
            "name": "910B3",
            "health": "OK",
            "bus_id": f"0000:{0xC1 + i:02X}:00.0",
        }
        for i in range(16)
    ]
    topo = {
        "pci_npus": [
            {
                "bdf": n["bus_id"].lower(),
                "numa_node": n["npu_id"] // 4,
                "link": {
                    "current_speed": 16.0,
                    "current_width": 16,
                    "max_speed": 16.0,
                    "max_width": 16,
                },
            }
            for n in npus
        ],
        "rdma": [
            {"name": f"mlx5_{k}", "bdf": f"0000:{k:02x}:00.0", "numa_node": k} for k in range(4)
        ],
    }
    return Report(
        tool={"name": "ascend-audit", "version": "bench"},
        host={"hostname": "bench-node", "kernel": "5.10", "os": "openEuler"},
        started_at="2025-01-15T08:00:00+00:00",
        finished_at="2025-01-15T08:01:00+00:00",
        inputs={},
        verdict=Verdict.NOT_READY,
        layers=[LayerReport(x, Verdict.NOT_READY) for x in layers],
        results=results,
        inventory={"npus": npus, "versions": {"cann": "8.0.RC3"}, "topology": topo},
        policy={"digest": "0123456789abcdef"},
    )


def main() -> None:
    """Generate, render a few times, print the figures."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--results", type=int, default=100)
    ap.add_argument("--excerpt-kb", type=int, default=64)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--out")
    args = ap.parse_args()
    report = make_report(args.results, args.excerpt_kb)
    json_text = report_json(report)
    render_html(report, json_text)  # warm the template cache
    times = []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        html = render_html(report, json_text)
        times.append(time.perf_counter() - t0)
    size = len(html.encode("utf-8"))
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            fh.write(html)
    print(f"results: {args.results}, evidence excerpt: {args.excerpt_kb} KiB x 3 per result")
    print(f"JSON report: {len(json_text.encode()) / 1e6:.2f} MB")
    print(f"HTML report: {size / 1e6:.2f} MB ({'OK' if size < 2 * 1024 * 1024 else 'OVER'} 2 MiB)")
    print(
        f"render: best {min(times) * 1000:.0f} ms, worst {max(times) * 1000:.0f} ms "
        f"({'OK' if min(times) < 1 else 'OVER'} 1 s)"
    )


if __name__ == "__main__":
    main()
