"""Driver-layer gatherers: npu-smi, sysfs PCI / NUMA / NVMe, device nodes, version files, mounts."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ascend_audit.context import Context, gatherer
from ascend_audit.host.base import CommandResult

NPU_SMI_INFO = ("npu-smi", "info")


@dataclass(frozen=True)
class NpuSmiRun:
    """`npu-smi info` as run on the node, and what its table says (None when it gave no table)."""

    result: CommandResult
    info: Any  # facts.npu_smi.NpuSmiInfo | None


@gatherer("npu_smi", "driver", commands=(NPU_SMI_INFO,))
def npu_smi(ctx: Context) -> NpuSmiRun:
    from ascend_audit.facts.npu_smi import parse_info

    result = ctx.host.run(NPU_SMI_INFO, ctx.policy["driver.npu_smi_timeout"])
    text = result.stdout if result.stdout.strip() else ""
    return NpuSmiRun(result, parse_info(text) if text else None)


@gatherer("pci", "driver")
def pci(ctx: Context) -> Any:
    from ascend_audit.facts.sysfs import collect_pci_npus

    return collect_pci_npus(ctx.host)


@gatherer("dev_nodes", "driver")
def dev_nodes(ctx: Context) -> Any:
    from ascend_audit.facts.sysfs import collect_dev_nodes

    return collect_dev_nodes(ctx.host)


def inventory(facts: dict[str, Any]) -> dict[str, Any]:
    """NPUs, versions, topology and storage from whatever driver facts this run gathered."""
    inv: dict[str, Any] = {}
    run = facts.get("npu_smi")
    if run is not None and run.info is not None:
        inv["npus"] = [
            {
                "npu_id": c.npu_id,
                "chip_id": c.chip_id,
                "name": c.name,
                "health": c.health,
                "bus_id": c.bus_id,
                "phy_id": c.phy_id,
                "hbm_total_mb": c.hbm_total_mb,
            }
            for c in run.info.chips
        ]
        if run.info.driver_version:
            inv["versions"] = {"npu_smi_driver": run.info.driver_version}
    pci_inv = facts.get("pci")
    if pci_inv is not None:
        inv["topology"] = {
            "pci_npus": [
                {
                    "bdf": n.bdf,
                    "device_id": n.device_id,
                    "family": n.family,
                    "numa_node": n.numa_node,
                    "link": {
                        "current_speed": n.link.current_speed,
                        "current_width": n.link.current_width,
                        "max_speed": n.link.max_speed,
                        "max_width": n.link.max_width,
                    },
                    "driver": n.driver,
                }
                for n in pci_inv.npus
            ],
            "rdma": [
                {"name": r.name, "bdf": r.pci_bdf, "numa_node": r.numa_node}
                for r in pci_inv.rdma_devices
            ],
        }
    return inv
