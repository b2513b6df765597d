"""Storage facts: the NVMe scan, the mount table as read, and where the model weights live."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ascend_audit.facts.keys import FactKey
from ascend_audit.facts.mounts import MountTable, StorageLocation
from ascend_audit.facts.sysfs import NvmeInventory
from ascend_audit.host.base import FileRead


@dataclass(frozen=True)
class NvmeScan:
    """The NVMe inventory and how its controllers were read: `udev` or `sysfs`."""

    inventory: NvmeInventory
    via: str


@dataclass(frozen=True)
class Mounts:
    """The mount table as read, and the file it came from (with its read result)."""

    table: MountTable
    read: FileRead


@dataclass(frozen=True)
class WeightsPath:
    """The weights directory to judge and who named it (policy, a process, a serving config)."""

    path: str | None
    origin: str  # "policy driver.weights_path" | "process 123 (vllm serve …)" | "" when none
    pid: int | None = None
    note: str = ""


@dataclass(frozen=True)
class WeightsStorage:
    """Where the weights path lives, with the NVMe-oF controllers and paths behind it."""

    weights: WeightsPath
    exists: bool | None
    location: StorageLocation | None
    mounts: Mounts | None
    nvme_via: str = "sysfs"

    def controllers(self, nvme: NvmeInventory | None) -> list[dict[str, Any]]:
        """The NVMe controllers behind the weights, with transport, address and state."""
        if self.location is None or nvme is None:
            return []
        out = []
        for name in self.location.nvme_controllers:
            c = nvme.controller(name)
            out.append(
                {
                    "name": name,
                    "transport": c.transport if c else None,
                    "address": c.address if c else None,
                    "state": c.state if c else dict(self.location.controller_states).get(name),
                    "subsysnqn": c.subsysnqn if c else None,
                }
            )
        return out


NVME: FactKey[NvmeScan] = FactKey("nvme")
MOUNTS: FactKey[Mounts] = FactKey("mounts")
WEIGHTS_STORAGE: FactKey[WeightsStorage] = FactKey("weights_storage")
