"""Topology gatherers: NUMA nodes, npu-smi CPU affinity, and where NPUs, NVMe and NICs sit."""

from __future__ import annotations

from typing import Any

from ascend_audit.context import Context, gatherer
from ascend_audit.facts.driver_scan import NPU_SMI, PCI
from ascend_audit.facts.npu_details import NPU_TOPO
from ascend_audit.facts.storage import NVME
from ascend_audit.facts.sysfs import NumaInfo, format_cpulist
from ascend_audit.facts.topology import NUMA, TOPOLOGY, UNKNOWN, IoDevice, NpuPlace, Topology


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


@gatherer(NUMA, "driver")
def numa(ctx: Context) -> NumaInfo:
    """NUMA nodes and their CPUs from /sys/devices/system/node."""
    from ascend_audit.facts.sysfs import collect_numa

    return collect_numa(ctx.host)


@gatherer(TOPOLOGY, "driver")
def topology(ctx: Context) -> Topology:
    """Each NPU's NUMA node, CPUs and link, with the NVMe controllers and RDMA NICs beside them."""
    problems: list[str] = []
    pci = ctx.fact(PCI)
    run = ctx.fact(NPU_SMI)
    problems.extend(pci.problems[:10])
    shared = ctx.fact(NPU_TOPO)  # `npu-smi info -t topo`, read once for every user
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
        controllers = ctx.fact(NVME).inventory.controllers
    except Exception as exc:  # NVMe placement is extra; never lose the NPU picture over it
        problems.append(f"NVMe controllers unreadable: {type(exc).__name__}: {exc}")
        controllers = ()
    for c in controllers:
        if c.numa_node is None and c.transport == "rdma" and fabric_node is not None:
            io.append(IoDevice("nvme", c.name, fabric_node, f"{c.transport} {c.traddr}", True))
        else:
            io.append(IoDevice("nvme", c.name, c.numa_node, f"{c.transport} {c.address}"))
    return Topology(
        npus, tuple(io), ctx.fact(NUMA), getattr(pci, "via", "sysfs"), result, tuple(problems)
    )


def inventory(facts: dict[str, Any]) -> dict[str, Any]:
    """The NUMA map the HTML report draws: NPUs with link state, NVMe and NICs per node."""
    topo: Topology | None = facts.get("topology")
    pci = facts.get("pci")
    if topo is None:
        if pci is None:
            return {}
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
