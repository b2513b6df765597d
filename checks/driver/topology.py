"""NUMA placement and PCIe links: each NPU's node, its CPUs, its link, and the I/O beside it."""

from __future__ import annotations

from ascend_audit.context import Context
from ascend_audit.facts.sysfs import format_cpulist
from ascend_audit.facts.topology import TOPOLOGY, Topology
from ascend_audit.model import Evidence, Outcome, error, fail, skip, warn, worst
from ascend_audit.registry import check


def _links(topo: Topology) -> list[Outcome]:
    """Narrower than its maximum fails; slower at full width warns (may be idle power saving)."""
    out: list[Outcome] = []
    physical = [n for n in topo.npus if not n.virtual_function]
    narrow = [f"{n.label} {n.link_text()}" for n in physical if n.link_state == "width-reduced"]
    slow = [f"{n.label} {n.link_text()}" for n in physical if n.link_state == "speed-reduced"]
    unread = [n.label for n in physical if n.link_state == "unknown"]
    if narrow:
        out.append(fail(f"PCIe link trained narrower than its maximum: {'; '.join(narrow)}"))
    if slow:
        out.append(
            warn(
                f"PCIe link slower than its maximum at full width: {'; '.join(slow)} "
                "(idle power saving, or a degraded link: recheck under load)"
            )
        )
    if unread:
        out.append(error(f"PCIe link width unreadable for {', '.join(unread)}"))
    return out


def _numa(topo: Topology) -> list[Outcome]:
    """Unknown NUMA node, npu-smi affinity that disagrees with sysfs, I/O far from every NPU."""
    out: list[Outcome] = []
    unknown = [n.label for n in topo.npus if n.numa_node is None]
    if unknown and not topo.single_node:
        out.append(
            warn(f"NUMA node unknown (-1) for {', '.join(unknown)}: CPU binding is guesswork")
        )
    odd = [
        f"{n.label} npu-smi {format_cpulist(n.smi_cpus)} vs sysfs {format_cpulist(n.local_cpus)}"
        for n in topo.npus
        if n.affinity_agrees is False
    ]
    if odd:
        out.append(
            warn(f"npu-smi CPU affinity disagrees with sysfs local_cpulist: {'; '.join(odd)}")
        )
    npu_nodes = {n.numa_node for n in topo.npus if n.numa_node is not None}
    far = [
        f"{d.name} (node {d.numa_node})"
        for d in topo.io
        if npu_nodes and d.numa_node is not None and d.numa_node not in npu_nodes
    ]
    if far:
        nodes = ", ".join(map(str, sorted(npu_nodes)))
        out.append(
            warn(
                f"{', '.join(far)} share no NUMA node with any NPU (NPUs on node {nodes}): "
                "weight loading and RDMA traffic cross the inter-socket link"
            )
        )
    return out


@check("DRV-TOPO-001")
def numa_and_pcie(ctx: Context) -> Outcome:
    topo: Topology = ctx.fact(TOPOLOGY)
    if not topo.npus:
        return skip("no Ascend PCI function visible: nothing to place (see DRV-NPU-001)")
    source = "udev" if topo.via == "udev" else "file"
    evidence = [
        Evidence(
            source,
            f"/sys/bus/pci/devices (via {topo.via})",
            "\n".join(f"{n.bdf} node {n.numa_raw} {n.link_text()}" for n in topo.npus),
            {
                "via": topo.via,
                "npus": [n.to_dict() for n in topo.npus],
                "problems": list(topo.problems),
            },
        ),
        Evidence("file", "/sys/devices/system/node", "", {"numa_map": topo.node_map()}),
    ]
    if topo.topo_result is not None:
        evidence.append(topo.topo_result.evidence())
    outcome = worst(_links(topo) + _numa(topo), "")
    outcome.evidence = evidence
    outcome.metrics = {"npus": len(topo.npus), "numa_nodes": len(topo.node_map())}
    if outcome.status.value == "PASS":
        agreed = sum(1 for n in topo.npus if n.affinity_agrees)
        affinity = (
            f"npu-smi CPU affinity agrees for {agreed}"
            if agreed
            else "npu-smi CPU affinity not available to cross-check"
        )
        outcome.summary = (
            f"{len(topo.npus)} NPUs on NUMA node(s) {', '.join(topo.node_map())} (via {topo.via}), "
            f"every link at its maximum width and speed; {affinity}"
        )
    return outcome
