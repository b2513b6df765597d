"""Topology gatherers: NUMA nodes, npu-smi CPU affinity, and where NPUs, NVMe and NICs sit."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ascend_audit.context import Context, gatherer
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


def _smi_cpus(run: Any, topo: Any) -> dict[str, tuple[int, ...]]:
    """npu-smi topo CPU affinity keyed by PCI address, via the `npu-smi info` bus ids."""
    if run is None or run.info is None or topo is None:
        return {}
    out: dict[str, tuple[int, ...]] = {}
    for chip in run.info.chips:
        if chip.bus_id and chip.bus_id not in out:
            cpus = topo.cpus_of(chip.npu_id)
            if cpus:
                out[chip.bus_id] = tuple(sorted(cpus))
    return out


def _npu_ids(run: Any) -> dict[str, int]:
    if run is None or run.info is None:
        return {}
    return {c.bus_id: c.npu_id for c in run.info.chips if c.bus_id}


@gatherer("numa", "driver")
def numa(ctx: Context) -> NumaInfo:
    """NUMA nodes and their CPUs from /sys/devices/system/node."""
    from ascend_audit.facts.sysfs import collect_numa

    return collect_numa(ctx.host)


@gatherer("topology", "driver")
def topology(ctx: Context) -> Topology:
    """Each NPU's NUMA node, CPUs and link, with the NVMe controllers and RDMA NICs beside them."""
    problems: list[str] = []
    pci = ctx.fact("pci")
    run = ctx.fact("npu_smi")
    problems.extend(pci.problems[:10])
    shared = ctx.fact("npu_topo")  # `npu-smi info -t topo`, read once for every user
    result, topo = shared.result, shared.topo
    if topo is not None and topo.problems:
        problems.append(f"npu-smi topo: {topo.problems[0]}")
    smi, ids = _smi_cpus(run, topo), _npu_ids(run)
    npus = tuple(
        NpuPlace(
            n.bdf,
            ids.get(n.bdf),
            n.numa_node,
            n.numa_node_raw,
            n.local_cpulist,
            smi.get(n.bdf),
            n.link,
            n.virtual_function,
        )
        for n in pci.npus
    )
    io: list[IoDevice] = [
        IoDevice("rdma", r.name, r.numa_node, r.pci_bdf or "") for r in pci.rdma_devices
    ]
    nic_nodes = {r.numa_node for r in pci.rdma_devices if r.numa_node is not None}
    # Which HCA carries an RDMA fabrics controller is not in sysfs: infer it only when unambiguous.
    fabric_node = next(iter(nic_nodes)) if len(nic_nodes) == 1 else None
    try:
        controllers = ctx.fact("nvme").inventory.controllers
    except Exception as exc:  # NVMe placement is extra; never lose the NPU picture over it
        problems.append(f"NVMe controllers unreadable: {type(exc).__name__}: {exc}")
        controllers = ()
    for c in controllers:
        if c.numa_node is None and c.transport == "rdma" and fabric_node is not None:
            io.append(IoDevice("nvme", c.name, fabric_node, f"{c.transport} {c.traddr}", True))
        else:
            io.append(IoDevice("nvme", c.name, c.numa_node, f"{c.transport} {c.address}"))
    return Topology(
        npus, tuple(io), ctx.fact("numa"), getattr(pci, "via", "sysfs"), result, tuple(problems)
    )


def inventory(facts: dict[str, Any]) -> dict[str, Any]:
    """The NUMA map the HTML report draws: NPUs with link state, NVMe and NICs per node."""
    topo: Topology | None = facts.get("topology")
    pci = facts.get("pci")
    if topo is None and pci is None:
        return {}
    if topo is None:
        return {"topology": {"via": getattr(pci, "via", "sysfs"), "pci_npus": len(pci.npus)}}
    nodes: dict[str, dict[str, Any]] = {}
    for key in topo.node_map():
        cpus = None
        if topo.numa and key.isdigit():
            found = topo.numa.cpus_of(int(key))
            cpus = format_cpulist(found) if found else None
        nodes[key] = {
            "cpus": cpus,
            "npus": [n.to_dict() for n in topo.npus if str(n.numa_node) == key]
            + [n.to_dict() for n in topo.npus if n.numa_node is None and key == UNKNOWN],
            "nvme": [d.to_dict() for d in topo.io if d.kind == "nvme" and _key(d) == key],
            "rdma": [d.to_dict() for d in topo.io if d.kind == "rdma" and _key(d) == key],
        }
    return {
        "topology": {
            "via": topo.via,
            "numa_nodes": nodes,
            # the same devices as flat lists, the shape the HTML report's topology picture reads
            "numa_map": {k: {"cpus": v["cpus"]} for k, v in nodes.items()},
            "pci_npus": [n.to_dict() for n in topo.npus],
            "nvme": [_io_dict(d) for d in topo.io if d.kind == "nvme"],
            "rdma": [_io_dict(d) for d in topo.io if d.kind == "rdma"],
        }
    }


def _io_dict(d: IoDevice) -> dict[str, Any]:
    transport, _, address = d.detail.partition(" ")
    if d.kind == "rdma":
        return {**d.to_dict(), "bdf": d.detail}
    return {**d.to_dict(), "transport": transport, "address": address}


def _key(d: IoDevice) -> str:
    return str(d.numa_node) if d.numa_node is not None else UNKNOWN
