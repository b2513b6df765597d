"""DRV-TOPO-001: NUMA placement, npu-smi affinity vs sysfs, PCIe link width and speed."""

from __future__ import annotations

import shutil
from pathlib import Path

from fakenode import FakeNpu, npu_smi_outputs, npu_smi_topo
from standins import run_node, standin
from sysroot import NODE_CPUS, NPU_BDFS, RDMA_NIC_BDF, healthy_910b_node, local

from ascend_audit.context import Context
from ascend_audit.facts.topology import TOPOLOGY, Topology
from ascend_audit.host.live import LiveHost
from ascend_audit.policy import parse_policy

CHECK = "DRV-TOPO-001"


def npu_dir(root: Path, bdf: str) -> Path:
    """The real sysfs directory of a PCI function in a fake tree."""
    return (local(root, f"/sys/bus/pci/devices/{bdf}")).resolve()


def smi_outputs(affinity: tuple[str, ...] | None = None) -> dict[str, str]:
    """npu-smi answers that agree with the sysroot builder: same bus ids, node CPUs as affinity."""
    npus = [FakeNpu(i, bdf.upper()) for i, bdf in enumerate(NPU_BDFS)]
    out = npu_smi_outputs(npus)
    aff = affinity or tuple(NODE_CPUS[0 if i < 4 else 1] for i in range(8))
    out["info -t topo"] = npu_smi_topo(npus, aff)
    return out


def node(tmp_path: Path, smi: dict | None = None, **variant: bool) -> tuple[Path, Path]:
    root, bindir = tmp_path / "root", tmp_path / "bin"
    healthy_910b_node(root, **variant)
    standin(bindir, "npu-smi", smi if smi is not None else smi_outputs())
    return root, bindir


def judge(root: Path, bindir: Path, policy: str = ""):
    report = run_node(root, bindir, policy, only=[CHECK], layers=["driver"])
    return report, report.result(CHECK)


def test_healthy_node_passes_with_affinity_cross_checked(tmp_path):
    report, res = judge(*node(tmp_path))
    assert res.status.value == "PASS", res.summary
    assert "8 NPUs on NUMA node(s) 0, 1 (via sysfs)" in res.summary
    assert "affinity agrees for 8" in res.summary
    numa_map = next(e.values["numa_map"] for e in res.evidence if "numa_map" in e.values)
    assert len(numa_map["0"]["npus"]) == 4 and len(numa_map["1"]["npus"]) == 4
    assert numa_map["1"]["rdma"] == ["mlx5_0"]
    assert set(numa_map["1"]["nvme"]) == {"nvme0", "nvme1", "nvme2"}  # fabrics via the one HCA
    topo = report.inventory["topology"]
    assert topo["via"] == "sysfs"
    assert topo["numa_nodes"]["0"]["cpus"] == "0-95"
    first = topo["numa_nodes"]["0"]["npus"][0]
    assert first["link"]["state"] == "full" and first["affinity_agrees"] is True
    fabric = next(d for d in topo["numa_nodes"]["1"]["nvme"] if d["name"] == "nvme1")
    assert fabric["numa_inferred"] is True
    assert len(topo["pci_npus"]) == 8 and topo["numa_map"]["1"]["cpus"] == "96-191"
    assert {d["name"] for d in topo["nvme"]} == {"nvme0", "nvme1", "nvme2"}


def test_downtrained_link_fails_naming_the_npu(tmp_path):
    _, res = judge(*node(tmp_path, downtrained=True))
    assert res.status.value == "FAIL"
    assert "narrower than its maximum" in res.summary
    assert "NPU 3 (0000:42:00.0) x8 of x16, 8.0 of 16.0 GT/s" in res.summary


def test_idle_speed_drop_at_full_width_only_warns(tmp_path):
    root, bindir = node(tmp_path)
    (npu_dir(root, NPU_BDFS[5]) / "current_link_speed").write_text("2.5 GT/s PCIe\n")
    _, res = judge(root, bindir)
    assert res.status.value == "WARN", res.summary
    assert "slower than its maximum at full width" in res.summary
    assert "0000:82:00.0" in res.summary and "2.5 of 16.0 GT/s" in res.summary


def test_unknown_numa_node_warns(tmp_path):
    root, bindir = node(tmp_path)
    (npu_dir(root, NPU_BDFS[0]) / "numa_node").write_text("-1\n")
    _, res = judge(root, bindir)
    assert res.status.value == "WARN"
    assert "NUMA node unknown (-1) for NPU 0 (0000:01:00.0)" in res.summary


def test_unknown_numa_node_on_a_single_node_machine_passes(tmp_path):
    root, bindir = node(tmp_path)
    (local(root, "/sys/devices/system/node/online")).write_text("0\n")
    shutil.rmtree(local(root, "/sys/devices/system/node/node1"))
    for bdf in (*NPU_BDFS, RDMA_NIC_BDF, "0000:83:00.0"):
        (npu_dir(root, bdf) / "numa_node").write_text("-1\n")
    _, res = judge(root, bindir)
    assert res.status.value == "PASS", res.summary


def test_affinity_disagreeing_with_sysfs_warns_with_both_sides(tmp_path):
    aff = tuple("96-119" if i == 0 else NODE_CPUS[0 if i < 4 else 1] for i in range(8))
    _, res = judge(*node(tmp_path, smi=smi_outputs(aff)))
    assert res.status.value == "WARN"
    assert "NPU 0 (0000:01:00.0) npu-smi 96-119 vs sysfs 0-95" in res.summary


def test_nic_and_nvme_on_a_node_without_npus_warn_with_the_map(tmp_path):
    root, bindir = node(tmp_path)
    for bdf in NPU_BDFS[4:]:
        (npu_dir(root, bdf) / "numa_node").write_text("0\n")
        (npu_dir(root, bdf) / "local_cpulist").write_text("0-95\n")
    aff = tuple(NODE_CPUS[0] for _ in range(8))
    standin(bindir, "npu-smi", smi_outputs(aff))
    _, res = judge(root, bindir)
    assert res.status.value == "WARN", res.summary
    assert "mlx5_0 (node 1)" in res.summary and "nvme0 (node 1)" in res.summary
    assert "NPUs on node 0" in res.summary
    numa_map = next(e.values["numa_map"] for e in res.evidence if "numa_map" in e.values)
    assert numa_map["1"] == {"npus": [], "nvme": ["nvme0", "nvme1", "nvme2"], "rdma": ["mlx5_0"]}
    assert len(numa_map["0"]["npus"]) == 8


def test_unreadable_link_width_is_an_error_with_evidence(tmp_path):
    root, bindir = node(tmp_path)
    width = npu_dir(root, NPU_BDFS[2]) / "current_link_width"
    width.unlink()
    width.mkdir()  # reading it fails with EISDIR, like an attribute the kernel refuses
    _, res = judge(root, bindir)
    assert res.status.value == "ERROR"
    assert "PCIe link width unreadable for NPU 2 (0000:41:00.0)" in res.summary
    assert res.evidence and res.evidence[0].values["via"] == "sysfs"


def test_npu_smi_topo_unavailable_still_judges_links(tmp_path):
    smi = smi_outputs()
    del smi["info -t topo"]
    _, res = judge(*node(tmp_path, smi=smi))
    assert res.status.value == "PASS"
    assert "affinity not available to cross-check" in res.summary


def test_node_without_npus_skips(tmp_path):
    root, bindir = tmp_path / "root", tmp_path / "bin"
    (root / "sys").mkdir(parents=True)
    standin(bindir, "npu-smi", {"*": {"stderr": "no device\n", "rc": 255}})
    _, res = judge(root, bindir)
    assert res.status.value == "SKIP"
    assert "DRV-NPU-001" in res.summary


def test_topology_fact_places_every_device(tmp_path):
    root, bindir = node(tmp_path)
    from standins import node_env

    ctx = Context(LiveHost(str(root), environ=node_env(bindir)), parse_policy(""))
    topo: Topology = ctx.fact(TOPOLOGY)
    assert [n.numa_node for n in topo.npus] == [0, 0, 0, 0, 1, 1, 1, 1]
    assert all(n.affinity_agrees for n in topo.npus)
    assert {d.name for d in topo.io} == {"mlx5_0", "nvme0", "nvme1", "nvme2"}
    assert not topo.single_node
