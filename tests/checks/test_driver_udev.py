"""The pyudev path: PCI enumeration through libudev, for real under umockdev, recorded and replayed.

tests/data/udev/910b.umockdev describes a 910B function (19e5:d802) behind a root port on NUMA
node 1. umockdev serves its attribute values without a trailing newline, unlike the kernel.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from sysroot import healthy_910b_node

from ascend_audit.context import Context
from ascend_audit.facts.driver_scan import PCI, PciScan
from ascend_audit.facts.storage import NVME
from ascend_audit.gather.driver import pci_from_udev
from ascend_audit.host.live import LiveHost
from ascend_audit.host.recording import RecordingHost
from ascend_audit.host.snapshot import SnapshotHost
from ascend_audit.policy import parse_policy

DATA = Path(__file__).resolve().parent.parent / "data" / "udev"
REPO = Path(__file__).resolve().parents[2]
UMOCKDEV_RUN = shutil.which("umockdev-run")
needs_umockdev = pytest.mark.skipif(
    UMOCKDEV_RUN is None,
    reason="umockdev-run not installed (Debian package `umockdev`; CI installs it)",
)

PORT = {
    "sys_path": "/sys/devices/pci0000:80/0000:80:01.0",
    "sys_name": "0000:80:01.0",
    "driver": "pcieport",
    "attributes": {
        "vendor": "0x19e5",
        "device": "0xa120",
        "class": "0x060400",
        "current_link_speed": "8.0 GT/s PCIe",
        "current_link_width": "8",
        "max_link_speed": "16.0 GT/s PCIe",
        "max_link_width": "16",
    },
    "properties": {},
}
NPU = {
    "sys_path": "/sys/devices/pci0000:80/0000:80:01.0/0000:81:00.0",
    "sys_name": "0000:81:00.0",
    "driver": "devdrv_device_driver",
    "attributes": {
        "vendor": "0x19e5",
        "device": "0xd802",
        "class": "0x120000",
        "numa_node": "1",
        "local_cpulist": "96-191",
        "current_link_speed": "8.0 GT/s PCIe",
        "current_link_width": "8",
        "max_link_speed": "16.0 GT/s PCIe",
        "max_link_width": "16",
    },
    "properties": {"PCI_SUBSYS_ID": "0200:0100"},
}
NIC = {
    "sys_path": "/sys/devices/pci0000:80/0000:80:04.0/0000:84:00.0",
    "sys_name": "0000:84:00.0",
    "driver": "mlx5_core",
    "attributes": {"vendor": "0x15b3", "device": "0x101b", "class": "0x020700", "numa_node": "1"},
    "properties": {},
}
IB = {
    "sys_path": "/sys/devices/pci0000:80/0000:80:04.0/0000:84:00.0/infiniband/mlx5_0",
    "sys_name": "mlx5_0",
}
NET = {
    "sys_path": "/sys/devices/pci0000:80/0000:80:04.0/0000:84:00.0/net/ib0",
    "sys_name": "ib0",
    "attributes": {"operstate": "up", "speed": "200000", "mtu": "4092"},
}
LO = {"sys_path": "/sys/devices/virtual/net/lo", "sys_name": "lo", "attributes": {}}


def test_pci_from_udev_builds_the_same_inventory():
    scan = pci_from_udev([PORT, NPU, NIC], [IB], [NET, LO])
    assert isinstance(scan, PciScan) and scan.via == "udev"
    (npu,) = scan.npus
    assert (npu.bdf, npu.family, npu.numa_node, npu.driver) == (
        "0000:81:00.0",
        "910B",
        1,
        "devdrv_device_driver",
    )
    assert npu.local_cpulist == tuple(range(96, 192))
    assert npu.link.width_reduced and npu.link.current_speed == 8.0
    assert npu.upstream_bdf == "0000:80:01.0" and npu.upstream_link is not None
    assert npu.subsystem_device == "0x0100"
    (ib,) = scan.rdma_devices
    assert (ib.name, ib.pci_bdf, ib.numa_node, ib.netdevs) == (
        "mlx5_0",
        "0000:84:00.0",
        1,
        ("ib0",),
    )
    assert [n.name for n in scan.net_interfaces] == ["ib0"]


def test_pci_from_udev_survives_garbage():
    junk: list[Any] = [
        {"sys_name": "0000:01:00.0", "attributes": {"vendor": "\x00\xff", "device": None}},
        {"sys_name": "not-a-bdf"},
        "string",
        {"sys_name": "0000:02:00.0", "attributes": "nope", "properties": {"PCI_ID": "19E5:D802"}},
    ]
    scan = pci_from_udev(junk, None, None)
    assert [n.bdf for n in scan.npus] == ["0000:02:00.0"]  # found by PCI_ID alone
    assert any("0000:01:00.0" in p for p in scan.problems)
    assert pci_from_udev([], [], []).problems == ("udev lists no PCI functions",)


class UdevHost(LiveHost):
    """A fake-sysroot host whose libudev answers are given (the sysfs tree still serves files)."""

    def __init__(self, root: Path, answers: dict[str, list[dict[str, Any]]]) -> None:
        super().__init__(str(root))
        self.answers = answers

    def udev(self, subsystem: str) -> list[dict[str, Any]] | None:
        return self.answers.get(subsystem, [])


def test_topology_check_uses_udev_and_says_so(tmp_path):
    from ascend_audit.engine import Selection, run_audit
    from ascend_audit.inventory import build_inventory
    from ascend_audit.registry import load_registry

    healthy_910b_node(tmp_path / "root")
    host = UdevHost(tmp_path / "root", {"pci": [PORT, NPU, NIC], "infiniband": [IB], "net": [NET]})
    ctx = Context(host, parse_policy(""))
    sel = Selection(only=frozenset({"DRV-TOPO-001"}), layers=("driver",), gate=False)
    report = run_audit(load_registry(entry_points=False), ctx, sel, inventory=build_inventory)
    res = report.result("DRV-TOPO-001")
    assert res.status.value == "FAIL" and "0000:81:00.0 x8 of x16" in res.summary
    assert res.evidence[0].kind == "udev"
    assert res.evidence[0].source == "/sys/bus/pci/devices (via udev)"
    assert report.inventory["topology"]["via"] == "udev"


def test_udev_answers_are_recorded_and_replayed(tmp_path):
    healthy_910b_node(tmp_path / "root")
    inner = UdevHost(tmp_path / "root", {"pci": [PORT, NPU], "nvme": []})
    rec = RecordingHost(inner)
    live = Context(rec, parse_policy("")).fact(PCI)
    assert live.via == "udev" and rec.udevs["pci"] == [PORT, NPU]
    out = rec.write_bundle(str(tmp_path / "bundle"), {"name": "ascend-audit", "version": "test"})
    replay = SnapshotHost(out)
    try:
        again = Context(replay, parse_policy("")).fact(PCI)
    finally:
        replay.close()
    assert again.via == "udev" and [n.bdf for n in again.npus] == ["0000:81:00.0"]


def test_nvme_controller_state_from_udev_overrides_sysfs(tmp_path):
    healthy_910b_node(tmp_path / "root")
    nvme2 = {"sys_name": "nvme2", "attributes": {"state": "resetting", "transport": "rdma"}}
    host = UdevHost(tmp_path / "root", {"nvme": [nvme2, {"sys_name": "nvme9", "attributes": {}}]})
    scan = Context(host, parse_policy("")).fact(NVME)
    assert scan.via == "udev"
    assert scan.inventory.controller("nvme2").state == "resetting"
    assert scan.inventory.controller("nvme1").state == "live"
    assert any("nvme9" in p for p in scan.inventory.problems)


def test_a_sysroot_never_goes_through_udev(tmp_path):
    healthy_910b_node(tmp_path / "root")
    assert Context(LiveHost(str(tmp_path / "root")), parse_policy("")).fact(PCI).via == "sysfs"


@needs_umockdev
def test_pyudev_finds_the_910b_under_umockdev(tmp_path):
    """libudev for real: umockdev-run emulates the device, pyudev lists it, the audit reports it."""
    out = tmp_path / "report.json"
    env = dict(os.environ, PYTHONPATH=str(REPO), PATH=f"{tmp_path}:/usr/bin:/bin")
    proc = subprocess.run(
        [
            UMOCKDEV_RUN,
            "--device",
            str(DATA / "910b.umockdev"),
            "--",
            sys.executable,
            "-m",
            "ascend_audit",
            "run",
            "--layers",
            "driver",
            "--json",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=tmp_path,
    )
    assert out.is_file(), proc.stdout + proc.stderr
    report = json.loads(out.read_text())
    assert report["inventory"]["topology"]["via"] == "udev"
    npus = report["inventory"]["topology"]["numa_nodes"]["1"]["npus"]
    assert [n["bdf"] for n in npus] == ["0000:81:00.0"]
    assert npus[0]["local_cpulist"] == "96-191" and npus[0]["link"]["state"] == "full"
    topo = next(r for r in report["results"] if r["id"] == "DRV-TOPO-001")
    assert topo["status"] == "PASS", topo["summary"]
    assert "(via udev)" in topo["summary"]
    assert topo["evidence"][0]["kind"] == "udev"


@needs_umockdev
def test_pyudev_itself_sees_the_emulated_device(tmp_path):
    """The description file is valid for umockdev and pyudev reads it without trailing newlines."""
    code = (
        "import json, pyudev; from ascend_audit.host.live import LiveHost; "
        "print(json.dumps(LiveHost('/').udev('pci')))"
    )
    proc = subprocess.run(
        [UMOCKDEV_RUN, "--device", str(DATA / "910b.umockdev"), "--", sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        env=dict(os.environ, PYTHONPATH=str(REPO)),
    )
    assert proc.returncode == 0, proc.stderr
    devices = {d["sys_name"]: d for d in json.loads(proc.stdout)}
    assert set(devices) == {"0000:80:01.0", "0000:81:00.0"}
    npu = devices["0000:81:00.0"]
    assert npu["attributes"]["vendor"] == "0x19e5" and npu["attributes"]["device"] == "0xd802"
    assert npu["driver"] == "devdrv_device_driver"
