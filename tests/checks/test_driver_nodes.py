"""End to end: fake 910B nodes (sysroot + stand-in npu-smi) through `run --layers driver`."""

from __future__ import annotations

import json
import os
import subprocess
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from clirun import cli as run_cli
from fakenode import FakeNpu, npu_smi_outputs, npu_smi_topo
from standins import node_env, standin
from sysroot import NODE_CPUS, NPU_BDFS, healthy_910b_node, local

WEIGHTS = '[driver]\nweights_path = "/models"\n'
# DRV-VER-002: the fake node's CANN 8.0.0 / driver 24.1.rc3 pair is not in the bundled table, but
# the toolkit's own compatible_version accepts the driver's family (C19), so it no longer warns.
DOCUMENTED_WARNINGS: set[str] = set()
# Checks that SKIP on this fake node by design: no hccn_tool on PATH (RoCE), no rank table, no
# serving process, and no cpufreq / THP / limits files in the tree (tests/checks/test_network*,
# test_host* judge them on nodes that have them).
SKIPPED_HERE = {
    "DRV-NPU-004",  # no ASCEND_RT_VISIBLE_DEVICES anywhere: every device is visible
    "DRV-NET-001",
    "DRV-NET-002",
    "DRV-NET-003",
    "DRV-NET-004",
    "DRV-RANK-001",
    "DRV-HOST-001",
    "DRV-HOST-002",
    "DRV-HOST-003",
    "DRV-HOST-004",
    # issue 16's host resources: this fake node has no /proc/net, mount table or serving env
    "DRV-SHM-001",
    "DRV-PORT-001",
    "DRV-NETIF-001",
    "DRV-MNODE-001",
    "DRV-RAY-001",
}


def audit(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, env=env or dict(os.environ))


@cache
def catalogue() -> frozenset[str]:
    """Check ids this build registers."""
    proc = audit("checks", "--json")
    try:
        data = json.loads(proc.stdout)
    except ValueError:
        return frozenset()
    items = data if isinstance(data, list) else data.get("checks", [])
    return frozenset(c["id"] for c in items if isinstance(c, dict) and "id" in c)


def smi(npus: list[FakeNpu] | None = None) -> dict[str, Any]:
    """npu-smi answers agreeing with the builder's BDFs and NUMA cpulists."""
    npus = npus or [FakeNpu(i, bdf.upper()) for i, bdf in enumerate(NPU_BDFS)]
    out: dict[str, Any] = dict(npu_smi_outputs(npus))
    out["info -t topo"] = npu_smi_topo(npus, tuple(NODE_CPUS[0 if i < 4 else 1] for i in range(8)))
    return out


def run(
    tmp_path: Path,
    policy: str = WEIGHTS,
    answers: dict[str, Any] | None = None,
    **variant: bool,
) -> tuple[dict[str, Any], subprocess.CompletedProcess[str], Path]:
    root, bindir = tmp_path / "root", tmp_path / "bin"
    if not root.exists():
        healthy_910b_node(root, **variant)
    standin(bindir, "npu-smi", answers if answers is not None else smi())
    (tmp_path / "p.toml").write_text(policy)
    out = tmp_path / "out.json"
    proc = audit(
        "run",
        "--sysroot",
        str(root),
        "--layers",
        "driver",
        "--json",
        str(out),
        "--policy",
        str(tmp_path / "p.toml"),
        env=node_env(bindir),
    )
    assert "Traceback" not in proc.stderr, proc.stderr
    assert out.is_file(), proc.stdout + proc.stderr
    return json.loads(out.read_text()), proc, root


def statuses(report: dict[str, Any]) -> dict[str, str]:
    return {r["id"]: r["status"] for r in report["results"]}


def result(report: dict[str, Any], check_id: str) -> dict[str, Any]:
    return next(r for r in report["results"] if r["id"] == check_id)


def test_healthy_node_is_ready_but_for_documented_warnings(tmp_path):
    report, proc, _ = run(tmp_path)
    got = statuses(report)
    for cid in ("DRV-NPU-001", "DRV-TOPO-001", "DRV-STOR-001"):
        assert got[cid] == "PASS", result(report, cid)["summary"]
    others = {
        cid: s
        for cid, s in got.items()
        if s != "PASS" and not (s == "SKIP" and cid in SKIPPED_HERE)
    }
    assert set(others) <= DOCUMENTED_WARNINGS and set(others.values()) <= {"WARN"}, others
    driver = next(layer for layer in report["layers"] if layer["name"] == "driver")
    assert driver["verdict"] == ("DEGRADED" if others else "READY")
    assert proc.returncode == 0
    inv = report["inventory"]
    assert len(inv["npus"]) == 8
    assert inv["versions"]
    assert set(inv["topology"]["numa_nodes"]) == {"0", "1"}
    assert inv["topology"]["via"] == "sysfs"
    assert inv["storage"]["kind"] == "nvme-of"
    assert inv["storage"]["nvmeof_subsystems"][0]["namespaces"] == ["nvme1n1", "nvme1n2"]


def test_missing_chip_fails_enumeration_naming_it(tmp_path):
    answers = smi([FakeNpu(i, bdf.upper()) for i, bdf in enumerate(NPU_BDFS[:7])])
    report, proc, _ = run(tmp_path, answers=answers, missing_chip=True)
    res = result(report, "DRV-NPU-001")
    assert res["status"] == "FAIL"
    assert "0000:c2:00.0" in res["summary"]
    assert proc.returncode == 1


def test_downtrained_link_fails_topology(tmp_path):
    report, _, _ = run(tmp_path, downtrained=True)
    res = result(report, "DRV-TOPO-001")
    assert res["status"] == "FAIL" and "0000:42:00.0" in res["summary"]
    npus = report["inventory"]["topology"]["numa_nodes"]["0"]["npus"]
    assert [n["link"]["state"] for n in npus if n["bdf"] == "0000:42:00.0"] == ["width-reduced"]


def test_driver_firmware_mismatch_fails_versions(tmp_path):
    if "DRV-VER-001" not in catalogue():
        pytest.skip("DRV-VER-001 is not registered in this build (written by another change)")
    report, _, _ = run(tmp_path, version_mismatch=True)
    assert result(report, "DRV-VER-001")["status"] == "FAIL"


def test_weights_on_nfs_warn_and_fail_when_nvmeof_required(tmp_path):
    report, _, _ = run(tmp_path, weights_on_nfs=True)
    res = result(report, "DRV-STOR-001")
    assert res["status"] == "WARN" and "691 s → 112 s" in res["summary"]
    assert report["inventory"]["storage"]["kind"] == "nfs"
    report, proc, _ = run(tmp_path, WEIGHTS + "require_nvmeof = true\n")
    assert result(report, "DRV-STOR-001")["status"] == "FAIL"
    assert proc.returncode == 1


@pytest.mark.parametrize(
    "answer",
    [
        pytest.param({"stdout": ""}, id="prints-nothing"),
        pytest.param(
            {"stderr": "dcmi module initialize failed. ret is -8005\n", "rc": 255}, id="rc255"
        ),
        pytest.param({"stdout": "\x00\xff\xfe\x1b[2J" + "\ufffd" * 50 + "\x07\n"}, id="binary"),
    ],
)
def test_bad_npu_smi_gives_fail_or_error_with_evidence(tmp_path, answer):
    report, proc, _ = run(tmp_path, answers={"*": answer})
    res = result(report, "DRV-NPU-001")
    assert res["status"] in ("FAIL", "ERROR")
    assert res["evidence"] and res["evidence"][0]["source"].startswith("npu-smi")
    assert not any("check crashed" in r["summary"] for r in report["results"])
    topo = result(report, "DRV-TOPO-001")
    assert topo["status"] == "PASS"  # links and NUMA still judged from sysfs
    assert "not available to cross-check" in topo["summary"]
    assert proc.returncode == 1


def test_unreadable_sysfs_file_gives_fail_or_error_with_evidence(tmp_path):
    root = tmp_path / "root"
    healthy_910b_node(root)
    vendor = (local(root, f"/sys/bus/pci/devices/{NPU_BDFS[6]}")).resolve() / "vendor"
    vendor.unlink()
    vendor.mkdir()  # EISDIR on read: the kernel refusing an attribute
    width = (local(root, f"/sys/bus/pci/devices/{NPU_BDFS[1]}")).resolve() / "current_link_width"
    width.unlink()
    width.mkdir()
    report, _, _ = run(tmp_path)
    enum = result(report, "DRV-NPU-001")
    assert enum["status"] == "FAIL" and enum["evidence"]
    topo = result(report, "DRV-TOPO-001")
    assert topo["status"] == "ERROR" and "0000:02:00.0" in topo["summary"]
    problems = topo["evidence"][0]["values"]["problems"]
    assert any(NPU_BDFS[6] in p and "vendor" in p for p in problems), problems
    assert not any("check crashed" in r["summary"] for r in report["results"])
