"""NUMA: nodes, their CPUs and memory, from /sys/devices/system/node."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ascend_audit.facts.sysfs.base import (
    NODE_DIR,
    SafeReader,
    SysfsReader,
    format_cpulist,
    parse_cpu_ranges,
    parse_cpulist,
)

# ---------------------------------------------------------------------------------------------
# NUMA


@dataclass(frozen=True)
class NumaNode:
    """One NUMA node and its CPUs."""

    node: int
    cpus: tuple[int, ...] | None
    cpulist_raw: str | None


@dataclass(frozen=True)
class NumaInfo:
    """NUMA topology: online nodes and each node's CPUs."""

    online: tuple[int, ...] | None
    online_raw: str | None
    nodes: tuple[NumaNode, ...]
    cpus_online: tuple[int, ...] | None
    problems: tuple[str, ...] = ()

    def node_of_cpu(self, cpu: int) -> int | None:
        for n in self.nodes:
            if n.cpus and cpu in n.cpus:
                return n.node
        return None

    def cpus_of(self, node: int) -> tuple[int, ...] | None:
        return next((n.cpus for n in self.nodes if n.node == node), None)

    def to_dict(self) -> dict[str, Any]:
        # Lists of hundreds of CPU numbers are unreadable evidence; keep the compact form.
        return {
            "online": list(self.online) if self.online is not None else None,
            "online_raw": self.online_raw,
            "nodes": [
                {
                    "node": n.node,
                    "cpulist": format_cpulist(n.cpus) if n.cpus is not None else None,
                    "cpulist_raw": n.cpulist_raw,
                    "cpu_count": len(n.cpus) if n.cpus is not None else None,
                }
                for n in self.nodes
            ],
            "cpus_online": format_cpulist(self.cpus_online) if self.cpus_online else None,
            "problems": list(self.problems),
        }


def collect_numa(reader: SysfsReader) -> NumaInfo:
    """NUMA nodes from /sys/devices/system/node and online CPUs."""
    acc = SafeReader(reader)
    online_raw = acc.value(f"{NODE_DIR}/online")
    online_ranges = parse_cpu_ranges(online_raw)
    online = parse_cpulist(online_raw) if online_ranges is not None else None
    if online_raw is None:
        acc.problems.append(f"{NODE_DIR}/online: absent (kernel without NUMA, or not sysfs)")
    elif online is None:
        acc.problems.append(f"{NODE_DIR}/online: unparseable {online_raw[:80]!r}")
    ids: set[int] = set(online or ())
    for entry in acc.listdir(NODE_DIR):
        m = re.fullmatch(r"node(\d{1,5})", entry)
        if m:
            ids.add(int(m.group(1)))
    nodes: list[NumaNode] = []
    for node in sorted(ids):
        raw = acc.value(f"{NODE_DIR}/node{node}/cpulist")
        cpus = parse_cpulist(raw)
        if raw is not None and cpus is None:
            acc.problems.append(f"node{node}/cpulist: unparseable {raw[:80]!r}")
        nodes.append(NumaNode(node, cpus, raw))
    cpus_online = parse_cpulist(acc.value("/sys/devices/system/cpu/online", quiet=True))
    return NumaInfo(
        online=tuple(online) if online is not None else None,
        online_raw=online_raw,
        nodes=tuple(nodes),
        cpus_online=cpus_online,
        problems=tuple(acc.problems),
    )
