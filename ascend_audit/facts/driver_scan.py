"""What the driver-layer scans found: the `npu-smi info` run, the PCI scan, the /dev nodes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ascend_audit.facts.keys import FactKey
from ascend_audit.facts.sysfs import DevNodes, PciInventory
from ascend_audit.host.base import CommandResult

if TYPE_CHECKING:
    from ascend_audit.facts.npu_smi import NpuSmiInfo
    from ascend_audit.facts.npu_smi.messages import NpuSmiMessages


@dataclass(frozen=True)
class PciScan(PciInventory):
    """A PciInventory that remembers how it was read: `udev` (pyudev) or `sysfs`."""

    via: str = "sysfs"

    @classmethod
    def of(cls, inv: PciInventory, via: str) -> PciScan:
        return cls(inv.npus, inv.rdma_devices, inv.net_interfaces, inv.problems, via)


@dataclass(frozen=True)
class NpuSmiRun:
    """`npu-smi info` as run on the node, what its table says (None when it gave no table), and
    its own words around the table (warnings, DCMI failures with their return codes)."""

    result: CommandResult
    info: NpuSmiInfo | None
    messages: NpuSmiMessages | None = None


NPU_SMI: FactKey[NpuSmiRun] = FactKey("npu_smi")
PCI: FactKey[PciScan] = FactKey("pci")
DEV_NODES: FactKey[DevNodes] = FactKey("dev_nodes")
HOST_NICS: FactKey[dict[str, str | None]] = FactKey("host_nics")  # NIC name -> operstate
