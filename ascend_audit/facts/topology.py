"""Topology facts: where NPUs, NVMe controllers and RDMA NICs sit on the NUMA nodes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ascend_audit.facts.keys import FactKey
from ascend_audit.facts.sysfs import NumaInfo, PcieLink, format_cpulist
from ascend_audit.host.base import CommandResult

UNKNOWN = "unknown"


@dataclass(frozen=True)
class NpuPlace:
    """One Ascend PCI function: NUMA node, CPUs (sysfs and npu-smi) and PCIe link."""

    bdf: str
    npu_id: int | None
    numa_node: int | None
    numa_raw: str | None
    local_cpus: tuple[int, ...] | None
    smi_cpus: tuple[int, ...] | None  # npu-smi topo CPU Affinity; None when not known
    link: PcieLink
    virtual_function: bool = False

    @property
    def label(self) -> str:
        return f"NPU {self.npu_id} ({self.bdf})" if self.npu_id is not None else self.bdf

    @property
    def affinity_agrees(self) -> bool | None:
        """npu-smi's CPUs lie within sysfs local_cpulist; None when either is unknown."""
        if not self.smi_cpus or not self.local_cpus:
            return None
        return set(self.smi_cpus) <= set(self.local_cpus)

    @property
    def link_state(self) -> str:
        """`full`, `width-reduced`, `speed-reduced` or `unknown`."""
        lk = self.link
        if lk.current_width is None or lk.max_width is None:
            return UNKNOWN
        if lk.width_reduced:
            return "width-reduced"
        if lk.speed_reduced:
            return "speed-reduced"
        return "full"

    def link_text(self) -> str:
        lk = self.link
        return (
            f"x{lk.current_width or '?'} of x{lk.max_width or '?'}, "
            f"{lk.current_speed or '?'} of {lk.max_speed or '?'} GT/s"
        )

    def to_dict(self) -> dict[str, Any]:
        lk = self.link
        return {
            "bdf": self.bdf,
            "npu_id": self.npu_id,
            "numa_node": self.numa_node,
            "local_cpulist": format_cpulist(self.local_cpus) if self.local_cpus else None,
            "npu_smi_affinity": format_cpulist(self.smi_cpus) if self.smi_cpus else None,
            "affinity_agrees": self.affinity_agrees,
            "link": {
                "state": self.link_state,
                "current_speed": lk.current_speed,
                "current_width": lk.current_width,
                "max_speed": lk.max_speed,
                "max_width": lk.max_width,
            },
        }


@dataclass(frozen=True)
class IoDevice:
    """An NVMe controller or RDMA NIC with its NUMA node (inferred for fabrics controllers)."""

    kind: str  # nvme | rdma
    name: str
    numa_node: int | None
    detail: str = ""
    inferred: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "numa_node": self.numa_node,
            "detail": self.detail,
            "numa_inferred": self.inferred,
        }


@dataclass(frozen=True)
class Topology:
    """NPUs, NVMe controllers and RDMA NICs placed on NUMA nodes, with how each was read."""

    npus: tuple[NpuPlace, ...]
    io: tuple[IoDevice, ...]
    numa: NumaInfo | None
    via: str  # udev | sysfs
    topo_result: CommandResult | None
    problems: tuple[str, ...] = ()

    @property
    def single_node(self) -> bool:
        return bool(self.numa and self.numa.online is not None and len(self.numa.online) <= 1)

    def node_map(self) -> dict[str, dict[str, list[str]]]:
        """{numa_node: {npus: [...], nvme: [...], rdma: [...]}}; `unknown` for -1."""
        out: dict[str, dict[str, list[str]]] = {}

        def slot(node: int | None) -> dict[str, list[str]]:
            key = str(node) if node is not None else UNKNOWN
            return out.setdefault(key, {"npus": [], "nvme": [], "rdma": []})

        for n in self.npus:
            slot(n.numa_node)["npus"].append(n.label)
        for d in self.io:
            slot(d.numa_node)[d.kind].append(d.name)
        return dict(sorted(out.items(), key=lambda kv: (kv[0] == UNKNOWN, kv[0].zfill(6))))


NUMA: FactKey[NumaInfo] = FactKey("numa")
TOPOLOGY: FactKey[Topology] = FactKey("topology")
