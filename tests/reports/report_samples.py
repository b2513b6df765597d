"""Sample reports built from the model: every status, a waiver, blocked layers, topology."""

from __future__ import annotations

import copy
import json
from typing import Any

import jsonschema
from ascend_audit.reports.json_report import schema

from ascend_audit.model import Evidence, LayerReport, Report, Result, Status, Verdict

HOSTILE_SCRIPT = "<script>window.__pwned=1;document.title='PWNED'</script>"
HOSTILE_IMG = '<img src=x onerror="window.__pwned=2">'
HOSTILE_TEXT = (
    f"{HOSTILE_SCRIPT} \"quoted\" 'single' & {HOSTILE_IMG} \ufffd\ufffd "
    "b'\\xff\\xfe\\x00' Ã©tÃ© \x01\x1b[31m | `tick` ]]> <![CDATA[ x ]]>"
)


def _npus(n: int = 8, name: str = "910B3") -> list[dict[str, Any]]:
    return [
        {
            "npu_id": i,
            "chip_id": 0,
            "name": name,
            "health": "OK",
            "bus_id": f"0000:{0xC1 + i * 0x10:02X}:00.0",
            "phy_id": i,
            "hbm_total_mb": 65536,
        }
        for i in range(n)
    ]


def _topology(n: int = 8, degraded: int | None = 3) -> dict[str, Any]:
    pci = []
    for i in range(n):
        speed = 8.0 if i == degraded else 16.0
        width = 8 if i == degraded else 16
        pci.append(
            {
                "bdf": f"0000:{0xC1 + i * 0x10:02x}:00.0",
                "device_id": "0xd802",
                "family": "910B",
                "numa_node": 0 if i < n // 2 else 1,
                "link": {
                    "current_speed": speed,
                    "current_width": width,
                    "max_speed": 16.0,
                    "max_width": 16,
                },
                "driver": "devdrv_device_driver",
            }
        )
    return {
        "numa_map": {"0": {"cpulist": "0-47,96-143"}, "1": {"cpulist": "48-95,144-191"}},
        "pci_npus": pci,
        "rdma": [
            {"name": "mlx5_0", "bdf": "0000:31:00.0", "numa_node": 0},
            {"name": "mlx5_1", "bdf": "0000:b1:00.0", "numa_node": 1},
        ],
        "nvme": [
            {
                "name": "nvme0n1",
                "bdf": "0000:45:00.0",
                "numa_node": 0,
                "transport": "pcie",
                "model": "SAMSUNG MZQL27T6",
            },
            {"name": "nvme1n1", "numa_node": 1, "transport": "rdma", "model": "NVMe-oF target"},
        ],
    }


def _cmd(argv: str, rc: int = 0, excerpt: str = "", ms: float = 42.0, **values: Any) -> Evidence:
    return Evidence("command", argv, excerpt, {"rc": rc, "duration_ms": ms, **values})


def _res(cid: str, layer: str, status: Status, summary: str, **kw: Any) -> Result:
    return Result(
        id=cid,
        layer=layer,
        status=status,
        severity=kw.pop("severity", "high"),
        title=kw.pop("title", f"Title of {cid}"),
        summary=summary,
        remediation=kw.pop("remediation", f"Do the right thing for {cid}."),
        duration_ms=kw.pop("duration_ms", 12.5),
        **kw,
    )


def _base(results: list[Result], layers: list[LayerReport], verdict: Verdict, **kw: Any) -> Report:
    return Report(
        tool={"name": "ascend-audit", "version": "0.1.0"},
        host={
            "hostname": kw.pop("hostname", "node-a01"),
            "kernel": "5.10.0-182",
            "os": "openEuler 22.03",
        },
        started_at="2025-01-15T08:00:00+00:00",
        finished_at="2025-01-15T08:00:03+00:00",
        inputs=kw.pop("inputs", {"traces": ["/data/prof_ascend_pt"]}),
        verdict=verdict,
        layers=layers,
        results=results,
        inventory=kw.pop(
            "inventory",
            {
                "npus": _npus(),
                "versions": {
                    "driver": "24.1.rc2",
                    "firmware": "7.5.0.1.129",
                    "cann": "8.0.RC3",
                    "torch_npu": "2.1.0.post8",
                    "vllm_ascend": "0.7.3",
                },
                "topology": _topology(),
                "storage": {},
            },
        ),
        policy={
            "source": "policy.toml",
            "digest": "9f2c4e1ab37d0c55",
            "required_layers": list(("driver", "operator", "framework")),
            "waivers": [],
        },
        duration_ms=3012.0,
    )


def mixed_report() -> Report:
    """Every status: driver degraded with a waiver, operator not ready, framework blocked."""
    npu_smi = (
        "+---------------------------+\n"
        "| NPU  Name  | Health | Power(W) |\n"
        "| 0    910B3 | OK     | 93.1 |\n"
    )
    results = [
        _res(
            "DRV-NPU-001",
            "driver",
            Status.PASS,
            "8 NPUs visible, all healthy",
            evidence=[_cmd("npu-smi info", excerpt=npu_smi, status="ok")],
            title="NPUs visible and healthy",
        ),
        _res(
            "DRV-PCIE-002",
            "driver",
            Status.WARN,
            "NPU 3 PCIe link trained at 8 GT/s x8 of 16 GT/s x16",
            evidence=[
                Evidence(
                    "file",
                    "/sys/bus/pci/devices/0000:f1:00.0/current_link_speed",
                    "8.0 GT/s PCIe",
                    {"current_speed": 8.0, "max_speed": 16.0},
                )
            ],
            remediation="Reseat the card or check the riser; compare lspci -vv LnkSta.",
            title="PCIe links at full speed and width",
        ),
        _res(
            "DRV-FW-003",
            "driver",
            Status.WAIVED,
            "firmware 7.5.0.1.129 older than the policy minimum 7.5.0.2 (waived until 2099-12-31)",
            waiver={
                "check": "DRV-FW-003",
                "reason": "vendor upgrade window in Q3, ticket OPS-1234",
                "expires": "2099-12-31",
                "active": True,
                "was": "FAIL",
            },
            title="Firmware at policy minimum",
        ),
        _res(
            "DRV-HCCN-004",
            "driver",
            Status.SKIP,
            "no RoCE NICs on this node; HCCN not applicable",
            title="HCCN network configured",
        ),
        _res(
            "OPR-PROF-001",
            "operator",
            Status.FAIL,
            "AI CPU operators take 31% of device time (limit 5%)",
            evidence=[
                Evidence(
                    "trace",
                    "/data/prof_ascend_pt/kernel_details.csv",
                    "Name,Type,Accelerator Core,Duration(us)\nGatherV2,GatherV2,AI_CPU,812.5\n",
                    {"rows": 18233, "aicpu_share": 0.31},
                )
            ],
            metrics={
                "time_by_core_us": {
                    "AI_CORE": 812345.0,
                    "AI_VECTOR_CORE": 401233.5,
                    "AI_CPU": 551020.0,
                    "MIX_AIC": 12000.0,
                },
                "top_aicpu_ops": [
                    {"type": "GatherV2", "count": 1200, "total_us": 300100.0},
                    {"type": "NonZero", "count": 64, "total_us": 150000.0},
                    {"type": "Unique", "count": 10, "total_us": 100920.0},
                ],
            },
            remediation="Replace AI CPU fallbacks: pin torch_npu to a build with AI Core kernels.",
            title="AI CPU fallback share",
        ),
        _res(
            "OPR-TRACE-002",
            "operator",
            Status.ERROR,
            "could not parse op_statistic.csv: bad header",
            evidence=[
                Evidence(
                    "trace",
                    "/data/prof/op_statistic.csv",
                    "Traceback (most recent call last):\n  ...\nValueError: bad header",
                    {},
                )
            ],
            title="Operator statistics readable",
        ),
        _res(
            "OPR-HOST-003",
            "operator",
            Status.PASS,
            "host-bound gaps below 2%",
            title="Host dispatch gaps",
        ),
        _res(
            "FWK-VER-001",
            "framework",
            Status.BLOCKED,
            "blocked: operator layer is NOT_READY",
            blocked_by=["operator"],
            title="torch_npu matches CANN",
        ),
        _res(
            "FWK-SRV-002",
            "framework",
            Status.BLOCKED,
            "blocked: operator layer is NOT_READY",
            blocked_by=["operator"],
            title="Serving config sane",
        ),
    ]
    layers = [
        LayerReport("driver", Verdict.DEGRADED, True, [], "1 warning: DRV-PCIE-002"),
        LayerReport(
            "operator",
            Verdict.NOT_READY,
            True,
            [],
            "OPR-PROF-001 failed; OPR-TRACE-002 could not judge",
        ),
        LayerReport(
            "framework", Verdict.BLOCKED, True, ["operator"], "operator layer is NOT_READY"
        ),
    ]
    return _base(results, layers, Verdict.NOT_READY)


def ready_report(hostname: str = "node-a02", **versions: str) -> Report:
    """All green."""
    results = [
        _res(cid, layer, Status.PASS, f"{cid} fine", title=f"Check {cid}")
        for cid, layer in (
            ("DRV-NPU-001", "driver"),
            ("DRV-PCIE-002", "driver"),
            ("OPR-PROF-001", "operator"),
            ("FWK-VER-001", "framework"),
        )
    ]
    layers = [LayerReport(n, Verdict.READY) for n in ("driver", "operator", "framework")]
    rep = _base(results, layers, Verdict.READY, hostname=hostname)
    rep.inventory["topology"] = _topology(degraded=None)
    rep.inventory["versions"].update(versions)
    return rep


def driver_down_report() -> Report:
    """Driver fails; both upper layers blocked; no inventory topology at all."""
    results = [
        _res(
            "DRV-NPU-001",
            "driver",
            Status.FAIL,
            "npu-smi timed out after 10 s",
            evidence=[_cmd("npu-smi info", rc=-9, ms=10000.0, status="timeout")],
            remediation="Check the driver: dmesg | grep -i davinci; reinstall the HDK driver.",
        ),
        _res(
            "OPR-PROF-001", "operator", Status.BLOCKED, "blocked by driver", blocked_by=["driver"]
        ),
        _res(
            "FWK-VER-001", "framework", Status.BLOCKED, "blocked by driver", blocked_by=["driver"]
        ),
    ]
    layers = [
        LayerReport("driver", Verdict.NOT_READY, True, [], "DRV-NPU-001 failed"),
        LayerReport("operator", Verdict.BLOCKED, True, ["driver"], "driver layer is NOT_READY"),
        LayerReport("framework", Verdict.BLOCKED, True, ["driver"], "driver layer is NOT_READY"),
    ]
    return _base(
        results,
        layers,
        Verdict.NOT_READY,
        hostname="node-b07",
        inventory={"npus": [], "versions": {}},
    )


def hostile_report() -> Report:
    """Node data full of markup, quotes, control characters and replacement characters."""
    rep = mixed_report()
    rep.host["hostname"] = f"evil{HOSTILE_SCRIPT}"
    rep.inventory["npus"][0]["name"] = HOSTILE_TEXT
    rep.inventory["npus"][1]["name"] = HOSTILE_IMG
    rep.inventory["versions"]["driver"] = HOSTILE_TEXT
    rep.inventory["topology"]["rdma"][0]["name"] = HOSTILE_TEXT
    rep.inventory["topology"]["nvme"][0]["model"] = HOSTILE_SCRIPT
    r0 = rep.results[0]
    r0.summary = f"process {HOSTILE_TEXT} holds NPU 0"
    r0.evidence.append(
        Evidence(
            "log",
            "/var/log/npu/slog/device-0.log" + HOSTILE_IMG,
            HOSTILE_TEXT * 3,
            {"process": HOSTILE_TEXT, "pid": 4242},
        )
    )
    rep.results[4].metrics["top_aicpu_ops"][0]["type"] = HOSTILE_SCRIPT
    rep.results[4].metrics["time_by_core_us"][HOSTILE_IMG] = 5.0
    rep.results[1].remediation = HOSTILE_TEXT
    rep.results[2].waiver["reason"] = HOSTILE_TEXT
    rep.layers[1].reason = HOSTILE_TEXT
    return rep


def empty_report() -> Report:
    """Nothing judged at all: no results, no inventory."""
    layers = [LayerReport(n, Verdict.MISSING) for n in ("driver", "operator", "framework")]
    return _base([], layers, Verdict.MISSING, hostname="node-empty", inventory={}, inputs={})


SAMPLES = {
    "mixed": mixed_report,
    "ready": ready_report,
    "driver_down": driver_down_report,
    "hostile": hostile_report,
    "empty": empty_report,
}


def validate(report_or_text: Report | str | dict[str, Any]) -> dict[str, Any]:
    """Validate a report (object, JSON text or dict) against the JSON Schema; returns the dict."""
    if isinstance(report_or_text, Report):
        data = report_or_text.to_dict()
    elif isinstance(report_or_text, str):
        data = json.loads(report_or_text)
    else:
        data = copy.deepcopy(report_or_text)
    jsonschema.validate(data, schema())
    return data


def big_fleet_reports(nodes: int = 64, checks: int = 70) -> list[tuple[str, Report]]:
    """NODES long-named nodes of CHECKS checks each: node i fails check i mod CHECKS (every check
    column is somebody's failure), every fifth node also errs on the next check, every seventh
    has its framework layer judged without its core proof (MISSING), the rest pass."""
    layers_of = ("driver", "operator", "framework")
    prefix = {"driver": "DRV", "operator": "OPR", "framework": "FWK"}
    ids = [
        (f"{prefix[layers_of[j * 3 // checks]]}-T{j:03d}-001", layers_of[j * 3 // checks])
        for j in range(checks)
    ]
    out: list[tuple[str, Report]] = []
    for i in range(nodes):
        name = f"ascend-a2-prod-rack{i // 8:02d}-node{i:02d}.dc1.example.com"
        bad = {i % checks: Status.FAIL}
        if i % 5 == 0:
            bad[(i + 1) % checks] = Status.ERROR
        results = [
            _res(
                cid,
                layer,
                bad.get(j, Status.PASS),
                f"node{i:02d} {cid} broken: the fault text of this check"
                if j in bad
                else f"{cid} fine",
                title=f"Check number {j}",
            )
            for j, (cid, layer) in enumerate(ids)
        ]
        broken = {r.layer for r in results if r.status in (Status.FAIL, Status.ERROR)}
        layers = [
            LayerReport(
                n,
                Verdict.NOT_READY if n in broken else Verdict.READY,
                True,
                [],
                f"{n} has a failing check" if n in broken else "",
            )
            for n in layers_of
        ]
        if i % 7 == 3 and "framework" not in broken:
            layers[2] = LayerReport(
                "framework",
                Verdict.MISSING,
                True,
                [],
                "FWK-LIFE-001 (the engine came up) was not proven",
            )
        out.append((f"{name}.json", _base(results, layers, Verdict.NOT_READY, hostname=name)))
    return out
